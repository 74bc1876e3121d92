//! `summary.csv` (docs/files.md): one row per model × step, columns in `StepSummary` field order,
//! fixed precision and a stable row order; the reader accepts older schema versions (fewer
//! trailing columns) and ignores unknown columns. Baselines use the same format.

use super::csv_io::{
    escape, first_appearance, fixed, opt_fixed, parse_csv, write_csv, MS, RATE, SHARE,
};
use super::StoreError;
use crate::stats::{LadderUnit, StepSummary, SCHEMA_VERSION};
use std::path::Path;

/// `summary.csv` columns in file order (the `StepSummary` field order).
#[rustfmt::skip]
pub const SUMMARY_COLUMNS: [&str; 64] = [
    "schema_version", "scenario", "fingerprint", "model", "step", "concurrency", "attempted",
    "succeeded", "failed", "err_429", "err_5xx", "err_timeout", "err_other", "ttft_p50_ms",
    "ttft_p90_ms", "ttft_p99_ms", "ttft_mean_ms", "tpot_p50_ms", "tpot_p90_ms", "tpot_p99_ms",
    "itl_p50_ms", "itl_p90_ms", "itl_p99_ms", "e2e_p50_ms", "e2e_p90_ms", "e2e_p99_ms",
    "e2e_mean_ms", "output_tokens", "input_tokens", "tpm", "tpm_total", "rps", "goodput",
    "duration_s", "achieved_concurrency", "client_cpu_pct", "loop_lag_p99_ms", "steady_s",
    "concurrency_steady", "rps_steady", "tpm_steady", "tokens_usage_share", "ttft_p90_lo_ms",
    "ttft_p90_hi_ms", "ladder_unit", "short", "cached_tokens", "offered_rps", "dropped",
    "send_lag_p50_ms", "send_lag_p99_ms", "ttft_sched_p90_ms", "ttft_sched_p99_ms",
    "e2e_sched_p90_ms", "e2e_sched_p99_ms", "error_classes", "headers_p50_ms", "headers_p90_ms",
    "new_conn_share", "server_queue_p90_ms", "server_waiting_mean", "server_waiting_max",
    "server_running_max", "server_kv_max",
];
/// Trailing summary columns that older files may lack (read as empty).
const SUMMARY_OPTIONAL: usize = 30;

/// `summary.csv` bytes: header plus one row per model × step, ordered by model (first
/// appearance in `rows`) then step.
pub fn summary_csv(rows: &[StepSummary]) -> Vec<u8> {
    let order = first_appearance(rows.iter().map(|r| r.model.as_str()));
    let mut sorted: Vec<&StepSummary> = rows.iter().collect();
    sorted.sort_by_key(|r| (order.get(r.model.as_str()).copied(), r.step));
    write_csv(&SUMMARY_COLUMNS, sorted.into_iter().map(summary_cells))
}

/// Reads a `summary.csv` (or baseline CSV). Rows keep file order.
pub fn read_summary_csv(path: &Path) -> Result<Vec<StepSummary>, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| StoreError::read(path, e))?;
    parse_summary_csv(path, &bytes)
}

/// Parses summary CSV bytes that are not a file on disk (e.g. a baseline's version in git
/// history); `path` names the source in error messages.
pub fn parse_summary_csv(path: &Path, bytes: &[u8]) -> Result<Vec<StepSummary>, StoreError> {
    let required = &SUMMARY_COLUMNS[..SUMMARY_COLUMNS.len() - SUMMARY_OPTIONAL];
    parse_csv(path, bytes, "summary CSV", required, |row| {
        let schema_version: u32 = row.parse("schema_version", "a schema version")?;
        if schema_version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.to_path_buf(),
                line: row.line,
                found: schema_version,
                supported: SCHEMA_VERSION,
            });
        }
        Ok(StepSummary {
            schema_version,
            scenario: row.text("scenario"),
            fingerprint: row.text("fingerprint"),
            model: row.text("model"),
            step: row.parse("step", "a step number")?,
            concurrency: row.parse("concurrency", "a whole number")?,
            attempted: row.parse("attempted", "a count")?,
            succeeded: row.parse("succeeded", "a count")?,
            failed: row.parse("failed", "a count")?,
            err_429: row.parse("err_429", "a count")?,
            err_5xx: row.parse("err_5xx", "a count")?,
            err_timeout: row.parse("err_timeout", "a count")?,
            err_other: row.parse("err_other", "a count")?,
            ttft_p50_ms: row.opt("ttft_p50_ms", "milliseconds")?,
            ttft_p90_ms: row.opt("ttft_p90_ms", "milliseconds")?,
            ttft_p99_ms: row.opt("ttft_p99_ms", "milliseconds")?,
            ttft_mean_ms: row.opt("ttft_mean_ms", "milliseconds")?,
            tpot_p50_ms: row.opt("tpot_p50_ms", "milliseconds")?,
            tpot_p90_ms: row.opt("tpot_p90_ms", "milliseconds")?,
            tpot_p99_ms: row.opt("tpot_p99_ms", "milliseconds")?,
            itl_p50_ms: row.opt("itl_p50_ms", "milliseconds")?,
            itl_p90_ms: row.opt("itl_p90_ms", "milliseconds")?,
            itl_p99_ms: row.opt("itl_p99_ms", "milliseconds")?,
            e2e_p50_ms: row.opt("e2e_p50_ms", "milliseconds")?,
            e2e_p90_ms: row.opt("e2e_p90_ms", "milliseconds")?,
            e2e_p99_ms: row.opt("e2e_p99_ms", "milliseconds")?,
            e2e_mean_ms: row.opt("e2e_mean_ms", "milliseconds")?,
            output_tokens: row.parse("output_tokens", "a token count")?,
            input_tokens: row.parse("input_tokens", "a token count")?,
            tpm: row.parse("tpm", "a number")?,
            tpm_total: row.parse("tpm_total", "a number")?,
            rps: row.parse("rps", "a number")?,
            goodput: row.opt("goodput", "a share between 0 and 1")?,
            duration_s: row.parse("duration_s", "seconds")?,
            achieved_concurrency: row.opt("achieved_concurrency", "a number")?,
            client_cpu_pct: row.opt("client_cpu_pct", "a percentage")?,
            loop_lag_p99_ms: row.opt("loop_lag_p99_ms", "milliseconds")?,
            steady_s: row.opt("steady_s", "seconds")?,
            concurrency_steady: row.opt("concurrency_steady", "a number")?,
            rps_steady: row.opt("rps_steady", "a number")?,
            tpm_steady: row.opt("tpm_steady", "a number")?,
            tokens_usage_share: row.opt("tokens_usage_share", "a share between 0 and 1")?,
            ttft_p90_lo_ms: row.opt("ttft_p90_lo_ms", "milliseconds")?,
            ttft_p90_hi_ms: row.opt("ttft_p90_hi_ms", "milliseconds")?,
            ladder_unit: match row.cell("ladder_unit").trim() {
                "" => LadderUnit::Streams,
                u => LadderUnit::parse(u)
                    .ok_or_else(|| row.bad("ladder_unit", "`streams`, `rps` or `prompt_tokens`"))?,
            },
            short: row.opt("short", "a count")?.unwrap_or(0),
            cached_tokens: row.opt("cached_tokens", "a token count")?.unwrap_or(0),
            offered_rps: row.opt("offered_rps", "requests per second")?,
            dropped: row.opt("dropped", "a count")?.unwrap_or(0),
            send_lag_p50_ms: row.opt("send_lag_p50_ms", "milliseconds")?,
            send_lag_p99_ms: row.opt("send_lag_p99_ms", "milliseconds")?,
            ttft_sched_p90_ms: row.opt("ttft_sched_p90_ms", "milliseconds")?,
            ttft_sched_p99_ms: row.opt("ttft_sched_p99_ms", "milliseconds")?,
            e2e_sched_p90_ms: row.opt("e2e_sched_p90_ms", "milliseconds")?,
            e2e_sched_p99_ms: row.opt("e2e_sched_p99_ms", "milliseconds")?,
            error_classes: row.text("error_classes"),
            headers_p50_ms: row.opt("headers_p50_ms", "milliseconds")?,
            headers_p90_ms: row.opt("headers_p90_ms", "milliseconds")?,
            new_conn_share: row.opt("new_conn_share", "a share between 0 and 1")?,
            server_queue_p90_ms: row.opt("server_queue_p90_ms", "milliseconds")?,
            server_waiting_mean: row.opt("server_waiting_mean", "a number")?,
            server_waiting_max: row.opt("server_waiting_max", "a number")?,
            server_running_max: row.opt("server_running_max", "a number")?,
            server_kv_max: row.opt("server_kv_max", "a share between 0 and 1")?,
        })
    })
}

fn summary_cells(r: &StepSummary) -> Vec<String> {
    vec![
        r.schema_version.to_string(),
        escape(&r.scenario).into_owned(),
        escape(&r.fingerprint).into_owned(),
        escape(&r.model).into_owned(),
        r.step.to_string(),
        r.concurrency.to_string(),
        r.attempted.to_string(),
        r.succeeded.to_string(),
        r.failed.to_string(),
        r.err_429.to_string(),
        r.err_5xx.to_string(),
        r.err_timeout.to_string(),
        r.err_other.to_string(),
        opt_fixed(r.ttft_p50_ms, MS),
        opt_fixed(r.ttft_p90_ms, MS),
        opt_fixed(r.ttft_p99_ms, MS),
        opt_fixed(r.ttft_mean_ms, MS),
        opt_fixed(r.tpot_p50_ms, MS),
        opt_fixed(r.tpot_p90_ms, MS),
        opt_fixed(r.tpot_p99_ms, MS),
        opt_fixed(r.itl_p50_ms, MS),
        opt_fixed(r.itl_p90_ms, MS),
        opt_fixed(r.itl_p99_ms, MS),
        opt_fixed(r.e2e_p50_ms, MS),
        opt_fixed(r.e2e_p90_ms, MS),
        opt_fixed(r.e2e_p99_ms, MS),
        opt_fixed(r.e2e_mean_ms, MS),
        r.output_tokens.to_string(),
        r.input_tokens.to_string(),
        fixed(r.tpm, RATE),
        fixed(r.tpm_total, RATE),
        fixed(r.rps, RATE),
        opt_fixed(r.goodput, SHARE),
        fixed(r.duration_s, MS),
        opt_fixed(r.achieved_concurrency, RATE),
        opt_fixed(r.client_cpu_pct, SHARE),
        opt_fixed(r.loop_lag_p99_ms, MS),
        opt_fixed(r.steady_s, MS),
        opt_fixed(r.concurrency_steady, RATE),
        opt_fixed(r.rps_steady, RATE),
        opt_fixed(r.tpm_steady, RATE),
        opt_fixed(r.tokens_usage_share, SHARE),
        opt_fixed(r.ttft_p90_lo_ms, MS),
        opt_fixed(r.ttft_p90_hi_ms, MS),
        r.ladder_unit.as_str().to_string(),
        r.short.to_string(),
        r.cached_tokens.to_string(),
        opt_fixed(r.offered_rps, RATE),
        r.dropped.to_string(),
        opt_fixed(r.send_lag_p50_ms, MS),
        opt_fixed(r.send_lag_p99_ms, MS),
        opt_fixed(r.ttft_sched_p90_ms, MS),
        opt_fixed(r.ttft_sched_p99_ms, MS),
        opt_fixed(r.e2e_sched_p90_ms, MS),
        opt_fixed(r.e2e_sched_p99_ms, MS),
        escape(&r.error_classes).into_owned(),
        opt_fixed(r.headers_p50_ms, MS),
        opt_fixed(r.headers_p90_ms, MS),
        opt_fixed(r.new_conn_share, SHARE),
        opt_fixed(r.server_queue_p90_ms, MS),
        opt_fixed(r.server_waiting_mean, RATE),
        opt_fixed(r.server_waiting_max, RATE),
        opt_fixed(r.server_running_max, RATE),
        opt_fixed(r.server_kv_max, SHARE),
    ]
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::csv_io::tests::write;
    use super::*;

    pub(crate) fn summary_row(model: &str, step: u32) -> StepSummary {
        let c = [5u32, 10, 20][(step as usize - 1) % 3];
        StepSummary {
            schema_version: SCHEMA_VERSION,
            scenario: "support-chat".into(),
            fingerprint: "3f9a1c2b".into(),
            model: model.into(),
            step,
            concurrency: c,
            attempted: 200,
            succeeded: 197,
            failed: 3,
            err_429: 2,
            err_5xx: 1,
            err_timeout: 0,
            err_other: 0,
            ttft_p50_ms: Some(212.5),
            ttft_p90_ms: Some(240.125),
            ttft_p99_ms: Some(301.0),
            ttft_mean_ms: Some(220.25),
            tpot_p50_ms: Some(8.5),
            tpot_p90_ms: Some(9.25),
            tpot_p99_ms: Some(12.0),
            itl_p50_ms: Some(8.0),
            itl_p90_ms: Some(11.5),
            itl_p99_ms: Some(40.75),
            e2e_p50_ms: Some(1900.0),
            e2e_p90_ms: Some(2100.5),
            e2e_p99_ms: Some(2500.0),
            e2e_mean_ms: Some(1950.25),
            output_tokens: 39_400,
            input_tokens: 24_000,
            tpm: 15_234.5,
            tpm_total: 24_514.125,
            rps: 3.25,
            goodput: Some(0.9875),
            duration_s: 60.5,
            achieved_concurrency: Some(4.875),
            client_cpu_pct: Some(12.5),
            loop_lag_p99_ms: Some(0.25),
            steady_s: Some(55.25),
            concurrency_steady: Some(4.5),
            rps_steady: Some(3.375),
            tpm_steady: Some(16_000.25),
            tokens_usage_share: Some(1.0),
            ttft_p90_lo_ms: Some(230.5),
            ttft_p90_hi_ms: Some(260.0),
            ladder_unit: LadderUnit::Rps,
            short: 2,
            cached_tokens: 640,
            offered_rps: Some(8.0),
            dropped: 1,
            send_lag_p50_ms: Some(0.125),
            send_lag_p99_ms: Some(0.75),
            ttft_sched_p90_ms: Some(250.0),
            ttft_sched_p99_ms: Some(300.0),
            e2e_sched_p90_ms: Some(1900.0),
            e2e_sched_p99_ms: Some(2000.0),
            error_classes: "http_429:2 timeout_total:1".into(),
            headers_p50_ms: Some(12.5),
            headers_p90_ms: Some(40.0),
            new_conn_share: Some(0.25),
            server_queue_p90_ms: Some(120.0),
            server_waiting_mean: Some(3.5),
            server_waiting_max: Some(9.0),
            server_running_max: Some(16.0),
            server_kv_max: Some(0.875),
        }
    }

    pub(crate) fn summary_text(rows: &[StepSummary]) -> String {
        String::from_utf8(summary_csv(rows)).unwrap()
    }

    #[test]
    fn summary_round_trips_with_empty_cells() {
        let mut sparse = summary_row("deepseek-chat", 2);
        sparse.ttft_p50_ms = None;
        sparse.goodput = None;
        sparse.achieved_concurrency = None;
        sparse.client_cpu_pct = None;
        sparse.loop_lag_p99_ms = None;
        let rows = vec![summary_row("gpt-4o", 1), sparse];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.csv");
        std::fs::write(&path, summary_csv(&rows)).unwrap();
        assert_eq!(read_summary_csv(&path).unwrap(), rows);
    }

    #[test]
    fn summary_header_is_the_design_column_order() {
        let text = summary_text(&[]);
        assert_eq!(text, format!("{}\n", SUMMARY_COLUMNS.join(",")));
        assert!(text.starts_with("schema_version,scenario,fingerprint,model,step,concurrency,"));
        assert!(text.trim_end().ends_with(
            "duration_s,achieved_concurrency,client_cpu_pct,loop_lag_p99_ms,steady_s,\
             concurrency_steady,rps_steady,tpm_steady,tokens_usage_share,ttft_p90_lo_ms,\
             ttft_p90_hi_ms,ladder_unit,short,cached_tokens,offered_rps,dropped,\
             send_lag_p50_ms,send_lag_p99_ms,ttft_sched_p90_ms,ttft_sched_p99_ms,\
             e2e_sched_p90_ms,e2e_sched_p99_ms,error_classes,headers_p50_ms,headers_p90_ms,\
             new_conn_share,server_queue_p90_ms,server_waiting_mean,server_waiting_max,\
             server_running_max,server_kv_max"
        ));
    }

    #[test]
    fn summary_snapshot_of_two_rows() {
        let mut second = summary_row("gpt-4o", 2);
        second.ttft_p99_ms = None;
        second.tpm = 1.0 / 3.0;
        second.goodput = Some(2.0 / 3.0);
        insta::assert_snapshot!(summary_text(&[second, summary_row("gpt-4o", 1)]));
    }

    #[test]
    fn rows_ordered_by_model_as_given_then_step() {
        let rows = [
            summary_row("b", 2),
            summary_row("a", 1),
            summary_row("b", 1),
            summary_row("a", 2),
        ];
        let text = summary_text(&rows);
        let keys: Vec<String> = text
            .lines()
            .skip(1)
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                format!("{}{}", cells[3], cells[4])
            })
            .collect();
        assert_eq!(keys, ["b1", "b2", "a1", "a2"]);
    }

    #[test]
    fn non_finite_required_rates_read_back() {
        let mut row = summary_row("m", 1);
        row.tpm = f64::NAN;
        row.rps = f64::INFINITY;
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "s.csv", &summary_text(&[row]));
        let back = read_summary_csv(&path).unwrap();
        assert!(back[0].tpm.is_nan());
        assert_eq!(back[0].rps, f64::INFINITY);
    }

    #[test]
    fn older_summary_without_trailing_columns_reads() {
        let text = summary_text(&[summary_row("m", 1)]);
        let old: String = text
            .lines()
            .map(|l| l.rsplitn(31, ',').last().unwrap().to_string() + "\n")
            .collect();
        assert!(old.starts_with("schema_version,") && old.contains("duration_s\n"));
        let dir = tempfile::tempdir().unwrap();
        let rows = read_summary_csv(&write(&dir, "old.csv", &old)).unwrap();
        // The appended columns read as empty: no self-check, streams, no rate-mode figures.
        let expected = StepSummary {
            achieved_concurrency: None,
            client_cpu_pct: None,
            loop_lag_p99_ms: None,
            ladder_unit: LadderUnit::Streams,
            short: 0,
            cached_tokens: 0,
            offered_rps: None,
            dropped: 0,
            send_lag_p50_ms: None,
            send_lag_p99_ms: None,
            ttft_sched_p90_ms: None,
            ttft_sched_p99_ms: None,
            e2e_sched_p90_ms: None,
            e2e_sched_p99_ms: None,
            steady_s: None,
            concurrency_steady: None,
            rps_steady: None,
            tpm_steady: None,
            tokens_usage_share: None,
            ttft_p90_lo_ms: None,
            ttft_p90_hi_ms: None,
            error_classes: String::new(),
            headers_p50_ms: None,
            headers_p90_ms: None,
            new_conn_share: None,
            server_queue_p90_ms: None,
            server_waiting_mean: None,
            server_waiting_max: None,
            server_running_max: None,
            server_kv_max: None,
            ..summary_row("m", 1)
        };
        assert_eq!(rows, vec![expected]);
    }

    #[test]
    fn unknown_and_reordered_columns() {
        // Extra column first and last, and two known columns swapped: matched by name.
        let text = summary_text(&[summary_row("m", 1)]);
        let mut lines = text.lines();
        let header =
            lines
                .next()
                .unwrap()
                .replacen("scenario,fingerprint", "fingerprint,scenario", 1);
        let row =
            lines
                .next()
                .unwrap()
                .replacen("support-chat,3f9a1c2b", "3f9a1c2b,support-chat", 1);
        let edited = format!("extra,{header},note\nx,{row},hello\n");
        let dir = tempfile::tempdir().unwrap();
        let rows = read_summary_csv(&write(&dir, "s.csv", &edited)).unwrap();
        assert_eq!(rows, vec![summary_row("m", 1)]);
    }

    #[test]
    fn bad_number_names_file_line_and_column() {
        let text = summary_text(&[summary_row("m", 1), summary_row("m", 2)]);
        let bad = text
            .replacen("240.125", "fast", 2)
            .replacen("fast", "240.125", 1);
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "s.csv", &bad);
        let err = read_summary_csv(&path).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(
                err,
                StoreError::BadValue {
                    line: 3,
                    column_no: 15,
                    ..
                }
            ),
            "{msg}"
        );
        assert!(
            msg.contains("s.csv: line 3, column 15 (`ttft_p90_ms`)"),
            "{msg}"
        );
        assert!(msg.contains("`fast` as milliseconds"), "{msg}");
    }

    #[test]
    fn empty_required_integer_is_an_error() {
        let text = summary_text(&[summary_row("m", 1)]).replacen(",200,197,", ",,197,", 1);
        let dir = tempfile::tempdir().unwrap();
        let msg = read_summary_csv(&write(&dir, "s.csv", &text))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("column 7 (`attempted`): cannot read `` as a count"),
            "{msg}"
        );
    }

    #[test]
    fn newer_schema_is_refused() {
        let mut row = summary_row("m", 1);
        row.schema_version = SCHEMA_VERSION + 1;
        let dir = tempfile::tempdir().unwrap();
        let msg = read_summary_csv(&write(&dir, "s.csv", &summary_text(&[row])))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("s.csv: line 2: schema_version 3 is newer"),
            "{msg}"
        );
    }
}
