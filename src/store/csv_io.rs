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

pub(super) fn write_csv(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Vec<u8> {
    let mut out = Vec::new();
    append_rows(
        &mut out,
        std::iter::once(header.iter().map(|h| h.to_string()).collect()),
    );
    append_rows(&mut out, rows);
    out
}

/// Appends CSV rows (each ending in `\n`) to `out`.
pub(super) fn append_rows(out: &mut Vec<u8>, rows: impl Iterator<Item = Vec<String>>) {
    // Writing into a Vec cannot fail with an I/O error and every row has the header's length,
    // so the csv errors below are unreachable; they are ignored rather than unwrapped.
    // A small buffer: the writer is made for each batch of rows (often one request's row), and
    // the default 8 KiB, zeroed on creation, cost more than the row.
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .buffer_capacity(1024)
        .from_writer(out);
    for row in rows {
        let _ = w.write_record(&row);
    }
    let _ = w.flush();
}

/// Fixed-precision number; `-0.000` is written as `0.000`; NaN/inf as Rust spells them (and
/// reads them back).
pub(super) fn fixed(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let s = format!("{v:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

/// `None` and non-finite values are empty cells.
pub(super) fn opt_fixed(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => fixed(v, decimals),
        _ => String::new(),
    }
}

/// Keeps every record on one line: `\` → `\\`, LF → `\n`, CR → `\r`. Reversed by `unescape`.
pub(super) fn escape(s: &str) -> Cow<'_, str> {
    if !s.contains(['\\', '\n', '\r']) {
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
    let mut end = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
    while end < bytes.len() && matches!(bytes[end], b'\r' | b'\n') {
        end += 1;
    }
    bytes[..end].iter().filter(|b| **b == b'\n').count() as u64 + 1
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
    parse_csv(path, &bytes, kind, required, parse_row)
}

/// Parses CSV bytes; `path` names the source in errors (e.g. `baselines/x.csv@1a2b3c4`).
pub(super) fn parse_csv<T>(
    path: &Path,
    bytes: &[u8],
    kind: &'static str,
    required: &[&str],
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
    for record in reader.records() {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(0, |p| line_at(bytes, p.byte()));
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
