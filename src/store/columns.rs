//! A CSV file's columns declared once: each column is one entry (header name, whether older
//! files may lack it, how a value is written to a cell and read back), and the header, the
//! writer and the reader all come from that one list. Adding a column is adding one line, in
//! file order; nothing else has to stay in step with it. Cells are written into one reused
//! cell and handed to the `csv` crate's writer (`csv_io::Records`; no `String` per cell).

use super::csv_io::{Records, Row};
use super::StoreError;

/// One column of a CSV file whose rows are `T`s.
pub(super) struct Column<T> {
    pub name: &'static str,
    /// Older files may lack the column (schema growth is by appending): it reads as empty.
    pub optional: bool,
    /// Appends the cell's text (quoting is the row writer's job).
    pub write: fn(&T, &mut String),
    pub read: fn(&Row<'_>, &mut T) -> Result<(), StoreError>,
}

/// The same column, which older files may lack.
pub(super) const fn optional<T>(c: Column<T>) -> Column<T> {
    Column {
        optional: true,
        ..c
    }
}

/// The header, in file order.
pub(super) fn names<T>(cols: &[Column<T>]) -> Vec<&'static str> {
    cols.iter().map(|c| c.name).collect()
}

/// The columns every file must have.
pub(super) fn required<T>(cols: &[Column<T>]) -> Vec<&'static str> {
    cols.iter()
        .filter(|c| !c.optional)
        .map(|c| c.name)
        .collect()
}

/// Appends the header line.
pub(super) fn push_header<T>(cols: &[Column<T>], out: &mut Records) {
    out.push(cols.len(), |i, cell| cell.push_str(cols[i].name));
}

/// Appends `r`'s row.
pub(super) fn push_row<T>(cols: &[Column<T>], r: &T, out: &mut Records) {
    out.push(cols.len(), |i, cell| (cols[i].write)(r, cell));
}

/// A whole file: the header, then the rows in the order given.
pub(super) fn csv_file<'a, T: 'a>(
    cols: &[Column<T>],
    rows: impl Iterator<Item = &'a T>,
) -> Vec<u8> {
    let mut out = Records::new();
    push_header(cols, &mut out);
    for r in rows {
        push_row(cols, r, &mut out);
    }
    out.take()
}

/// One row read column by column into a default `T`.
pub(super) fn read_row<T: Default>(cols: &[Column<T>], row: &Row<'_>) -> Result<T, StoreError> {
    let mut r = T::default();
    for c in cols {
        (c.read)(row, &mut r)?;
    }
    Ok(r)
}

/// A column bound to a field of the row type, by the field's name (which is the header name)
/// and how it is kept:
/// - `parse "what"`: a required value written with `to_string`; `what` names the expected
///   value in errors ("a count");
/// - `fixed DECIMALS, "what"` / `opt_fixed DECIMALS, "what"`: a number (optional: empty cell
///   for `None`) with fixed decimals;
/// - `opt "what"`: an `Option` of an integer, empty for `None`;
/// - `zero "what"`: an integer that reads as 0 when the cell is empty;
/// - `text` / `opt_text`: text kept on one line;
/// - `flag`: `true`/`false` (an empty cell or `0` is false);
/// - `with WRITE, READ`: anything else, as two functions (`WRITE` appends the cell's text);
/// - `field as "header": fixed …` / `opt_fixed …`: a header that is not the field's name (a
///   column renamed in the file; its old name is read through the file's `RENAMED` list).
macro_rules! col {
    ($f:ident as $name:literal: fixed $d:expr, $what:expr) => {
        $crate::store::columns::Column {
            name: $name,
            optional: false,
            write: |r, out| $crate::store::csv_io::push_fixed(out, r.$f, $d),
            read: |row, r| {
                r.$f = row.parse($name, $what)?;
                Ok(())
            },
        }
    };
    ($f:ident as $name:literal: opt_fixed $d:expr, $what:expr) => {
        $crate::store::columns::Column {
            name: $name,
            optional: false,
            write: |r, out| $crate::store::csv_io::push_opt_fixed(out, r.$f, $d),
            read: |row, r| {
                r.$f = row.opt($name, $what)?;
                Ok(())
            },
        }
    };
    ($f:ident: parse $what:expr) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| $crate::store::csv_io::push_whole(out, r.$f),
            read: |row, r| {
                r.$f = row.parse(stringify!($f), $what)?;
                Ok(())
            },
        }
    };
    ($f:ident: fixed $d:expr, $what:expr) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| $crate::store::csv_io::push_fixed(out, r.$f, $d),
            read: |row, r| {
                r.$f = row.parse(stringify!($f), $what)?;
                Ok(())
            },
        }
    };
    ($f:ident: opt_fixed $d:expr, $what:expr) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| $crate::store::csv_io::push_opt_fixed(out, r.$f, $d),
            read: |row, r| {
                r.$f = row.opt(stringify!($f), $what)?;
                Ok(())
            },
        }
    };
    ($f:ident: opt $what:expr) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| {
                if let Some(v) = r.$f {
                    $crate::store::csv_io::push_whole(out, v);
                }
            },
            read: |row, r| {
                r.$f = row.opt(stringify!($f), $what)?;
                Ok(())
            },
        }
    };
    ($f:ident: zero $what:expr) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| $crate::store::csv_io::push_whole(out, r.$f),
            read: |row, r| {
                r.$f = row.opt(stringify!($f), $what)?.unwrap_or(0);
                Ok(())
            },
        }
    };
    ($f:ident: text) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| out.push_str(&$crate::store::csv_io::escape(&r.$f)),
            read: |row, r| {
                r.$f = row.text(stringify!($f));
                Ok(())
            },
        }
    };
    ($f:ident: opt_text) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| {
                if let Some(s) = r.$f.as_deref() {
                    out.push_str(&$crate::store::csv_io::escape(s));
                }
            },
            read: |row, r| {
                r.$f = row.opt_text(stringify!($f));
                Ok(())
            },
        }
    };
    ($f:ident: flag) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: |r, out| out.push_str(if r.$f { "true" } else { "false" }),
            read: |row, r| {
                r.$f = row.flag(stringify!($f))?;
                Ok(())
            },
        }
    };
    ($f:ident: with $write:expr, $read:expr) => {
        $crate::store::columns::Column {
            name: stringify!($f),
            optional: false,
            write: $write,
            read: $read,
        }
    };
}
pub(super) use col;
