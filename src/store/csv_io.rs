//! Shared plumbing of the two result CSVs (`summary_csv`, `requests_csv`): fixed-precision
//! numbers, one-line text cells, and a reader that matches columns by header name (so older
//! schema versions and extra columns load) and names file, line and column in every error.
//! No file-system writes here; `store` does those.

use super::StoreError;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

/// Decimals per kind of number, so that `git diff` of a baseline stays readable.
pub(super) const MS: usize = 3; // milliseconds and seconds
pub(super) const RATE: usize = 3; // tpm, tpm_total, rps, achieved concurrency
pub(super) const SHARE: usize = 4; // goodput, percentages
pub(super) const COST: usize = 9; // a request's cost, in the pricing's currency
pub(super) const COST_STEP: usize = 6; // a step's cost per 1,000 requests or 1M tokens

/// Index of each model's first appearance: the stable "model order as given".
pub(super) fn first_appearance<'a>(
    models: impl Iterator<Item = &'a str>,
) -> HashMap<&'a str, usize> {
    let mut order = HashMap::new();
    for m in models {
        let next = order.len();
        order.entry(m).or_insert(next);
    }
    order
}

/// Writes CSV records into memory with the `csv` crate's writer (its default "necessary"
/// quoting, which the reader expects; `\n` line ends), one field at a time from a reused cell,
/// so a row costs no allocation of its own. Whole records are taken out with [`Records::take`]
/// and written to a file by `store`.
pub(super) struct Records {
    csv: csv::Writer<Vec<u8>>,
    cell: String,
}

fn memory_writer(capacity: usize) -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        // Every file's rows have its header's length; the readers name a ragged row.
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::with_capacity(capacity))
}

impl Records {
    pub(super) fn new() -> Self {
        Records {
            csv: memory_writer(0),
            cell: String::new(),
        }
    }

    /// Appends one record of `fields` fields: `field(i, cell)` writes field `i`'s text into an
    /// empty `cell`.
    pub(super) fn push(&mut self, fields: usize, mut field: impl FnMut(usize, &mut String)) {
        for i in 0..fields {
            self.cell.clear();
            field(i, &mut self.cell);
            self.csv
                .write_field(&self.cell)
                .expect("writing CSV into memory cannot fail");
        }
        self.csv
            .write_record(None::<&[u8]>)
            .expect("writing CSV into memory cannot fail");
    }

    /// The records written since the last `take`, whole; the next ones go into a new buffer of
    /// the same capacity (the appender takes once a second, not once a row).
    pub(super) fn take(&mut self) -> Vec<u8> {
        let capacity = self.csv.get_ref().capacity();
        std::mem::replace(&mut self.csv, memory_writer(capacity))
            .into_inner()
            .map_err(|e| e.into_error())
            .expect("writing CSV into memory cannot fail")
    }
}

/// A whole CSV file: the header, then the rows.
pub(super) fn write_csv(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Vec<u8> {
    let mut out = Records::new();
    out.push(header.len(), |i, cell| cell.push_str(header[i]));
    for row in rows {
        out.push(row.len(), |i, cell| cell.push_str(&row[i]));
    }
    out.take()
}

/// A whole number written to a cell (with `itoa`: `write!` cost about 200 instructions a
/// number, issue 39, part 4).
pub(super) fn push_whole(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// Fixed-precision number; `-0.000` is written as `0.000`; NaN/inf as Rust spells them (and
/// reads them back).
pub(super) fn fixed(v: f64, decimals: usize) -> String {
    let mut s = String::new();
    push_fixed(&mut s, v, decimals);
    s
}

/// Appends [`fixed`]'s text to `out`.
pub(super) fn push_fixed(out: &mut String, v: f64, decimals: usize) {
    use std::fmt::Write as _;
    // A whole number (a `retry_wait_ms` or `server_queue_ms` of 0, a server's whole
    // `prefill_ms`) is its digits and `decimals` zeros: what `{v:.decimals$}` writes, without
    // its exact float printing (about 1 k instructions a cell; issue 39, part 4).
    if v.fract() == 0.0 && v.abs() < 1e15 {
        out.push_str(itoa::Buffer::new().format(v as i64));
        if decimals > 0 {
            out.push('.');
            out.extend(std::iter::repeat('0').take(decimals));
        }
        return;
    }
    if !v.is_finite() {
        out.push_str(&v.to_string());
        return;
    }
    let start = out.len();
    let _ = write!(out, "{v:.decimals$}");
    if let Some(rest) = out[start..].strip_prefix('-') {
        if rest.bytes().all(|b| b == b'0' || b == b'.') {
            out.remove(start);
        }
    }
}

/// `None` and non-finite values are empty cells.
pub(super) fn opt_fixed(v: Option<f64>, decimals: usize) -> String {
    let mut s = String::new();
    push_opt_fixed(&mut s, v, decimals);
    s
}

/// Appends [`opt_fixed`]'s text to `out`.
pub(super) fn push_opt_fixed(out: &mut String, v: Option<f64>, decimals: usize) {
    match v {
        Some(v) if v.is_finite() => push_fixed(out, v, decimals),
        _ => {}
    }
}

/// Keeps every record on one line: `\` → `\\`, LF → `\n`, CR → `\r`. Reversed by `unescape`.
pub(super) fn escape(s: &str) -> Cow<'_, str> {
    // A byte search: these are ASCII, and no other UTF-8 sequence contains their bytes.
    if !s.bytes().any(|b| matches!(b, b'\\' | b'\n' | b'\r')) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// One data row with its header index, for typed, well-located reads.
pub(super) struct Row<'a> {
    path: &'a Path,
    pub(super) line: u64,
    record: &'a csv::StringRecord,
    index: &'a HashMap<String, usize>,
}

impl Row<'_> {
    /// Raw cell; `""` when the column is absent (optional trailing columns of older files).
    pub(super) fn cell(&self, name: &str) -> &str {
        self.index
            .get(name)
            .and_then(|&i| self.record.get(i))
            .unwrap_or("")
    }

    /// Whether the file has this column at all (older files lack appended ones).
    pub(super) fn has(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    pub(super) fn text(&self, name: &str) -> String {
        unescape(self.cell(name))
    }

    pub(super) fn opt_text(&self, name: &str) -> Option<String> {
        Some(self.text(name)).filter(|s| !s.is_empty())
    }

    pub(super) fn bad(&self, name: &str, expected: &str) -> StoreError {
        let value: String = self.cell(name).chars().take(60).collect();
        StoreError::BadValue {
            path: self.path.to_path_buf(),
            line: self.line,
            column_no: self.index.get(name).map_or(0, |i| i + 1),
            column: name.to_string(),
            value,
            expected: expected.to_string(),
        }
    }

    /// `true`/`false` (also `1`/`0`); an empty cell (older files) is `false`.
    pub(super) fn flag(&self, name: &str) -> Result<bool, StoreError> {
        match self.cell(name).trim() {
            "" | "false" | "0" => Ok(false),
            "true" | "1" => Ok(true),
            _ => Err(self.bad(name, "`true` or `false`")),
        }
    }

    /// Required value: an empty cell is an error.
    pub(super) fn parse<T: FromStr>(&self, name: &str, expected: &str) -> Result<T, StoreError> {
        self.cell(name)
            .trim()
            .parse()
            .map_err(|_| self.bad(name, expected))
    }

    /// Optional value: an empty cell is `None`.
    pub(super) fn opt<T: FromStr>(
        &self,
        name: &str,
        expected: &str,
    ) -> Result<Option<T>, StoreError> {
        match self.cell(name).trim() {
            "" => Ok(None),
            s => s.parse().map(Some).map_err(|_| self.bad(name, expected)),
        }
    }
}

/// Reads a CSV file. `partial`: the file may have been cut by a crash while it was appended to,
/// so a last line without its newline is a torn row and is dropped.
/// The 1-based line of the record that starts at byte `offset`, in LF and CRLF files alike
/// (in a CRLF file csv's record offset may point at the previous line's `\n`).
fn line_at(bytes: &[u8], offset: u64) -> u64 {
    Lines::default().at(bytes, offset)
}

/// [`line_at`] for records read in order: counts the newlines since the previous record only
/// (counting from the start each time made reading a 50,000-row file take a minute).
#[derive(Default)]
struct Lines {
    /// Bytes counted so far, and the newlines among them.
    end: usize,
    newlines: u64,
}

impl Lines {
    fn at(&mut self, bytes: &[u8], offset: u64) -> u64 {
        let mut end = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
        while end < bytes.len() && matches!(bytes[end], b'\r' | b'\n') {
            end += 1;
        }
        if end < self.end {
            *self = Lines::default();
        }
        self.newlines += bytes[self.end..end].iter().filter(|b| **b == b'\n').count() as u64;
        self.end = end;
        self.newlines + 1
    }
}

pub(super) fn read_csv<T>(
    path: &Path,
    kind: &'static str,
    required: &[&str],
    partial: bool,
    parse_row: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut bytes = std::fs::read(path).map_err(|e| StoreError::read(path, e))?;
    if partial && !bytes.ends_with(b"\n") {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
    }
    parse_csv(path, &bytes, kind, required, &[], parse_row)
}

/// Parses CSV bytes; `path` names the source in errors (e.g. `baselines/x.csv@1a2b3c4`).
/// `renamed` lists columns by (old name, new name): a file written before the rename has the
/// old one, which then reads as the new one (when the file lacks the new one).
pub(super) fn parse_csv<T>(
    path: &Path,
    bytes: &[u8],
    kind: &'static str,
    required: &[&str],
    renamed: &[(&str, &str)],
    mut parse_row: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(StoreError::Empty {
            path: path.to_path_buf(),
        });
    }
    // csv's own line numbers come out one short in CRLF files (Windows editors, Excel), so
    // lines are counted here from the byte offset instead.
    let csv_err = |e: csv::Error| {
        let mut error = e.to_string();
        if let Some(p) = e.position() {
            let wrong = format!("line: {}", p.line());
            error = error.replace(&wrong, &format!("line: {}", line_at(bytes, p.byte())));
        }
        StoreError::Csv {
            path: path.to_path_buf(),
            error,
        }
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .from_reader(bytes);
    let headers = reader.headers().map_err(csv_err)?.clone();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, h) in headers.iter().enumerate() {
        index.entry(h.to_string()).or_insert(i); // a duplicated column: the first one counts
    }
    for (old, new) in renamed {
        if let Some(&i) = index.get(*old) {
            index.entry(new.to_string()).or_insert(i);
        }
    }
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|c| !index.contains_key(*c))
        .collect();
    if !missing.is_empty() {
        let hint = if kind == "summary CSV" && index.contains_key("request_id") {
            " (this looks like a requests.csv; pass the summary CSV or the run directory)"
        } else if kind == "requests CSV" && index.contains_key("schema_version") {
            " (this looks like a summary CSV)"
        } else {
            ""
        };
        return Err(StoreError::MissingColumns {
            path: path.to_path_buf(),
            kind,
            columns: missing
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", "),
            hint,
        });
    }
    let mut out = Vec::new();
    let mut lines = Lines::default();
    for record in reader.records() {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(0, |p| lines.at(bytes, p.byte()));
        out.push(parse_row(&Row {
            path,
            line,
            record: &record,
            index: &index,
        })?);
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::summary_csv::tests::{summary_row, summary_text};
    use super::super::{read_requests_csv, read_summary_csv, requests_csv};
    use super::*;

    #[test]
    fn lines_counted_as_records_go_agree_with_counting_from_the_start() {
        for text in ["a,b\n1,2\n3,4\n\n5,6\n", "a,b\r\n1,2\r\n3,4\r\n5,6\r\n"] {
            let bytes = text.as_bytes();
            let mut lines = Lines::default();
            for offset in 0..bytes.len() as u64 {
                assert_eq!(
                    lines.at(bytes, offset),
                    line_at(bytes, offset),
                    "{text:?} @{offset}"
                );
            }
            // Going back starts over rather than counting wrong.
            assert_eq!(lines.at(bytes, 0), 1);
        }
    }

    pub(crate) fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn fixed_precision_formatting() {
        assert_eq!(fixed(1.0 / 3.0, 3), "0.333");
        assert_eq!(fixed(2.0 / 3.0, 4), "0.6667");
        assert_eq!(fixed(-0.0001, 3), "0.000");
        assert_eq!(fixed(-0.0, 3), "0.000");
        assert_eq!(fixed(-1.5, 3), "-1.500");
        assert_eq!(fixed(f64::NAN, 3), "NaN");
        assert_eq!(fixed(f64::INFINITY, 3), "inf");
        assert_eq!(opt_fixed(Some(f64::NAN), 3), "");
        assert_eq!(opt_fixed(None, 3), "");
        assert_eq!(opt_fixed(Some(12.0), 4), "12.0000");
        assert_eq!(fixed(-7.0, 0), "-7");
        assert_eq!(fixed(0.0, 0), "0");
    }

    /// Whole numbers take a short cut; every cell is still what `format!` writes.
    #[test]
    fn fixed_is_format_for_whole_and_other_numbers() {
        use proptest::prelude::*;
        let same = |v: f64, d: usize| {
            let want = format!("{v:.d$}");
            let want = match want.strip_prefix('-') {
                Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
                _ => want,
            };
            prop_assert_eq!(fixed(v, d), want, "{} with {} decimals", v, d);
            Ok(())
        };
        proptest!(|(n in -1e16f64..1e16, frac in prop::sample::select(vec![0.0, 0.5, 0.25, 1e-3, 0.0625]), d in 0usize..10)| {
            same(n.trunc(), d)?;
            same(n.trunc() + frac, d)?;
            same(n, d)?;
        });
        for v in [
            0.0,
            -0.0,
            1e15,
            -1e15,
            999_999_999_999_999.0,
            2f64.powi(53),
            1e300,
            -1e300,
        ] {
            for d in [0, 3, 4, 9] {
                same(v, d).unwrap();
            }
        }
    }

    #[test]
    fn records_quote_what_needs_quotes_and_read_back() {
        let rows: Vec<Vec<String>> = vec![
            vec![String::new()],
            vec![
                "a,b".into(),
                "\"q\"".into(),
                "x\ny".into(),
                "\r".into(),
                "é".into(),
            ],
            vec!["plain".into(), String::new()],
        ];
        let bytes = write_csv(&["h"], rows.clone().into_iter());
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "h\n\"\"\n\"a,b\",\"\"\"q\"\"\",\"x\ny\",\"\r\",é\nplain,\n"
        );
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(bytes.as_slice());
        let back: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        assert_eq!(back, rows);
    }

    #[test]
    fn escape_is_reversible() {
        for s in [
            "plain",
            "a\\b",
            "line\nbreak",
            "cr\r\n",
            "\\n literal",
            "end\\",
            "",
        ] {
            assert_eq!(unescape(&escape(s)), s, "{s:?}");
            assert!(!escape(s).contains(['\n', '\r']));
        }
        assert_eq!(unescape("odd \\x escape\\"), "odd \\x escape\\");
    }

    #[test]
    fn missing_columns_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "x.csv", "schema_version,scenario,model\n1,a,b\n");
        let msg = read_summary_csv(&path).unwrap_err().to_string();
        assert!(
            msg.contains(
                "x.csv is not a ladder summary CSV: missing column(s) `fingerprint`, `step`"
            ),
            "{msg}"
        );
        assert!(!msg.contains("`achieved_concurrency`"), "{msg}");

        let req = write(
            &dir,
            "r.csv",
            &String::from_utf8(requests_csv(&[])).unwrap(),
        );
        let msg = read_summary_csv(&req).unwrap_err().to_string();
        assert!(msg.contains("this looks like a requests.csv"), "{msg}");
        let sum = write(&dir, "s.csv", &summary_text(&[]));
        let msg = read_requests_csv(&sum, false).unwrap_err().to_string();
        assert!(
            msg.contains("not a ladder requests CSV") && msg.contains("looks like a summary"),
            "{msg}"
        );
    }

    #[test]
    fn empty_file_header_only_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let empty = write(&dir, "e.csv", "\n");
        assert!(matches!(
            read_summary_csv(&empty),
            Err(StoreError::Empty { .. })
        ));
        let header_only = write(&dir, "h.csv", &summary_text(&[]));
        assert_eq!(read_summary_csv(&header_only).unwrap(), vec![]);
        let err = read_requests_csv(&dir.path().join("nope.csv"), false).unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    }

    #[test]
    fn ragged_row_is_a_csv_error_naming_the_file() {
        let text = summary_text(&[summary_row("m", 1)]) + "1,2,3\n";
        let dir = tempfile::tempdir().unwrap();
        let msg = read_summary_csv(&write(&dir, "s.csv", &text))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("s.csv: malformed CSV") && msg.contains("line: 3"),
            "{msg}"
        );
    }

    #[test]
    fn crlf_files_report_the_same_lines_as_lf_files() {
        let dir = tempfile::tempdir().unwrap();
        let lf = summary_text(&[summary_row("m", 1), summary_row("m", 2)]);
        let mut lines: Vec<String> = lf.lines().map(str::to_string).collect();
        let mut cells: Vec<String> = lines[2].split(',').map(str::to_string).collect();
        cells[6] = "abc".into();
        lines[2] = cells.join(",");
        for (name, sep) in [("lf.csv", "\n"), ("crlf.csv", "\r\n")] {
            let text = lines.join(sep) + sep;
            let msg = read_summary_csv(&write(&dir, name, &text))
                .unwrap_err()
                .to_string();
            assert!(msg.contains("line 3"), "{name}: {msg}");
        }
        let ragged = lines[..2].join("\r\n") + "\r\n1,2,3\r\n";
        let msg = read_summary_csv(&write(&dir, "r.csv", &ragged))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line: 3"), "{msg}");
    }
}
