//! `server_metrics.csv`: the server's `/metrics` scraped during the run, one row per scrape ×
//! series: `t_ms` (since the run started), the `step` and `model` running then (empty between
//! steps), `series` (`waiting`, `running`, `kv_cache_usage` 0-1, or `raw:<name>{labels}`, a
//! counter as a per-second rate) and `value` (empty: the scrape failed, a gap).

use super::csv_io::{escape, fixed, opt_fixed, read_csv, write_csv, MS};
use super::StoreError;
use crate::model::MetricRow;
use std::path::Path;

/// `server_metrics.csv` columns in file order.
pub const SERVER_METRICS_COLUMNS: [&str; 5] = ["t_ms", "step", "model", "series", "value"];

/// The file's bytes, rows in the order given (time order).
pub fn server_metrics_csv(rows: &[MetricRow]) -> Vec<u8> {
    write_csv(
        &SERVER_METRICS_COLUMNS,
        rows.iter().map(|r| {
            vec![
                fixed(r.t_ms, MS),
                r.step.map(|s| s.to_string()).unwrap_or_default(),
                r.model
                    .as_deref()
                    .map(|m| escape(m).into_owned())
                    .unwrap_or_default(),
                escape(&r.series).into_owned(),
                opt_fixed(r.value, 6),
            ]
        }),
    )
}

/// Reads a `server_metrics.csv` back (the report draws the server's series from it). An empty
/// `value` is a gap; an empty `step` or `model` a scrape between steps.
pub fn read_server_metrics_csv(path: &Path) -> Result<Vec<MetricRow>, StoreError> {
    read_csv(
        path,
        "server metrics CSV",
        &SERVER_METRICS_COLUMNS,
        false,
        |row| {
            Ok(MetricRow {
                t_ms: row.parse("t_ms", "milliseconds")?,
                step: row.opt("step", "a step number")?,
                model: row.opt_text("model"),
                series: row.text("series"),
                value: row.opt("value", "a number")?,
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_gaps_and_labels_that_need_quoting() {
        let rows = [
            MetricRow {
                t_ms: 500.0,
                step: Some(1),
                model: Some("m".into()),
                series: "waiting".into(),
                value: Some(2.0),
            },
            MetricRow {
                t_ms: 1000.0,
                step: None,
                model: None,
                series: r#"raw:vllm:x{a="1",b="2"}"#.into(),
                value: None,
            },
        ];
        let text = String::from_utf8(server_metrics_csv(&rows)).unwrap();
        assert_eq!(
            text,
            "t_ms,step,model,series,value\n500.000,1,m,waiting,2.000000\n1000.000,,,\"raw:vllm:x{a=\"\"1\"\",b=\"\"2\"\"}\",\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = crate::store::csv_io::tests::write(&dir, "s.csv", &text);
        assert_eq!(read_server_metrics_csv(&path).unwrap(), rows);
        let bad = crate::store::csv_io::tests::write(
            &dir,
            "b.csv",
            "t_ms,step,model,series,value\nsoon,1,m,waiting,2\n",
        );
        let err = read_server_metrics_csv(&bad).unwrap_err().to_string();
        assert!(err.contains("t_ms"), "{err}");
    }
}
