//! `summary.csv` (docs/files.md): one row per model × step, columns in `StepSummary` field order,
//! fixed precision and a stable row order; the reader accepts older schema versions (fewer
//! trailing columns) and ignores unknown columns. Baselines use the same format.

use super::columns::{self, col, optional, Column};
use super::csv_io::{first_appearance, parse_csv, COST_STEP, MS, RATE, SHARE};
use super::StoreError;
use crate::model::LadderUnit;
use crate::stats::{StepSummary, SCHEMA_VERSION};
use std::path::Path;

/// `summary.csv`'s columns in file order (the `StepSummary` field order), declared once: the
/// header, the writer and the reader come from this list. Files of schema version
/// [`SCHEMA_VERSION`] have them all; older ones may lack the trailing `optional` ones, and a
/// new column is appended (optional) at the end.
#[rustfmt::skip]
static COLUMNS: &[Column<StepSummary>] = &[
    col!(schema_version: parse "a schema version"),
    col!(scenario: text),
    col!(fingerprint: text),
    col!(model: text),
    col!(step: parse "a step number"),
    col!(concurrency: parse "a whole number"),
    col!(attempted: parse "a count"),
    col!(succeeded: parse "a count"),
    col!(failed: parse "a count"),
    col!(err_429: parse "a count"),
    col!(err_5xx: parse "a count"),
    col!(err_timeout: parse "a count"),
    col!(err_other: parse "a count"),
    col!(ttft_p50_ms: opt_fixed MS, "milliseconds"),
    col!(ttft_p90_ms: opt_fixed MS, "milliseconds"),
    col!(ttft_p99_ms: opt_fixed MS, "milliseconds"),
    col!(ttft_mean_ms: opt_fixed MS, "milliseconds"),
    col!(tpot_p50_ms: opt_fixed MS, "milliseconds"),
    col!(tpot_p90_ms: opt_fixed MS, "milliseconds"),
    col!(tpot_p99_ms: opt_fixed MS, "milliseconds"),
    col!(itl_p50_ms: opt_fixed MS, "milliseconds"),
    col!(itl_p90_ms: opt_fixed MS, "milliseconds"),
    col!(itl_p99_ms: opt_fixed MS, "milliseconds"),
    col!(e2e_p50_ms: opt_fixed MS, "milliseconds"),
    col!(e2e_p90_ms: opt_fixed MS, "milliseconds"),
    col!(e2e_p99_ms: opt_fixed MS, "milliseconds"),
    col!(e2e_mean_ms: opt_fixed MS, "milliseconds"),
    col!(output_tokens: parse "a token count"),
    col!(input_tokens: parse "a token count"),
    col!(tpm as "output_tpm": fixed RATE, "a number"),
    col!(tpm_total as "total_tpm": fixed RATE, "a number"),
    col!(rps: fixed RATE, "a number"),
    col!(goodput: opt_fixed SHARE, "a share between 0 and 1"),
    col!(duration_s: fixed MS, "seconds"),
    // Appended after the first release: older files may lack these.
    optional(col!(achieved_concurrency: opt_fixed RATE, "a number")),
    optional(col!(client_cpu_pct: opt_fixed SHARE, "a percentage")),
    optional(col!(loop_lag_p99_ms: opt_fixed MS, "milliseconds")),
    optional(col!(steady_s: opt_fixed MS, "seconds")),
    optional(col!(concurrency_steady: opt_fixed RATE, "a number")),
    optional(col!(rps_steady: opt_fixed RATE, "a number")),
    optional(col!(tpm_steady as "output_tpm_steady": opt_fixed RATE, "a number")),
    optional(col!(tokens_usage_share: opt_fixed SHARE, "a share between 0 and 1")),
    optional(col!(ttft_p90_lo_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttft_p90_hi_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ladder_unit: with |r, out| out.push_str(r.ladder_unit.as_str()), |row, r| {
        r.ladder_unit = match row.cell("ladder_unit").trim() {
            "" => LadderUnit::Streams,
            u => LadderUnit::parse(u)
                .ok_or_else(|| row.bad("ladder_unit", "`streams`, `rps`, `prompt_tokens`, `speed` or `agents`"))?,
        };
        Ok(())
    })),
    optional(col!(short: zero "a count")),
    optional(col!(cached_tokens: zero "a token count")),
    optional(col!(offered_rps: opt_fixed RATE, "requests per second")),
    optional(col!(dropped: zero "a count")),
    optional(col!(send_lag_p50_ms: opt_fixed MS, "milliseconds")),
    optional(col!(send_lag_p99_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttft_sched_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttft_sched_p99_ms: opt_fixed MS, "milliseconds")),
    optional(col!(e2e_sched_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(e2e_sched_p99_ms: opt_fixed MS, "milliseconds")),
    optional(col!(error_classes: text)),
    optional(col!(headers_p50_ms: opt_fixed MS, "milliseconds")),
    optional(col!(headers_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(new_conn_share: opt_fixed SHARE, "a share between 0 and 1")),
    optional(col!(server_queue_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(server_waiting_mean: opt_fixed RATE, "a number")),
    optional(col!(server_waiting_max: opt_fixed RATE, "a number")),
    optional(col!(server_running_max: opt_fixed RATE, "a number")),
    optional(col!(server_kv_max: opt_fixed SHARE, "a share between 0 and 1")),
    optional(col!(ttfc_p50_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttfc_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttfc_p99_ms: opt_fixed MS, "milliseconds")),
    optional(col!(reasoned: zero "a count")),
    optional(col!(reasoning_share: opt_fixed SHARE, "a share between 0 and 1")),
    optional(col!(server_processing_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(cost_per_1k_ok: opt_fixed COST_STEP, "a cost")),
    optional(col!(cost_per_1m_output: opt_fixed COST_STEP, "a cost")),
    optional(col!(cache_hit_by_turn: text)),
    optional(col!(ttft_first_p50_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttft_first_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttft_later_p50_ms: opt_fixed MS, "milliseconds")),
    optional(col!(ttft_later_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(tasks: zero "a count")),
    optional(col!(task_e2e_p50_ms: opt_fixed MS, "milliseconds")),
    optional(col!(task_e2e_p90_ms: opt_fixed MS, "milliseconds")),
    optional(col!(task_tokens_mean: opt_fixed RATE, "a number")),
    optional(col!(task_e2e_mean_ms: opt_fixed MS, "milliseconds")),
    optional(col!(task_turns_mean: opt_fixed RATE, "a number")),
    optional(col!(synthetic_call_share: opt_fixed SHARE, "a share between 0 and 1")),
    optional(col!(retry_wait_s: opt_fixed RATE, "seconds")),
    optional(col!(retry_wait_share: opt_fixed SHARE, "a share between 0 and 1")),
    optional(col!(ratelimit_headroom_min: opt_fixed SHARE, "a share between 0 and 1")),
];

/// Columns renamed in schema 3 to say which tokens they count, by (old name, new name): files
/// written before it (committed baselines, older runs) read through the old names.
const RENAMED: &[(&str, &str)] = &[
    ("tpm", "output_tpm"),
    ("tpm_total", "total_tpm"),
    ("tpm_steady", "output_tpm_steady"),
];

/// `summary.csv`'s header, in file order.
pub fn summary_columns() -> Vec<&'static str> {
    columns::names(COLUMNS)
}

/// `summary.csv` bytes: header plus one row per model × step, ordered by model (first
/// appearance in `rows`), then in ladder order (`StepSummary::ladder_order`).
pub fn summary_csv(rows: &[StepSummary]) -> Vec<u8> {
    let order = first_appearance(rows.iter().map(|r| r.model.as_str()));
    let mut sorted: Vec<&StepSummary> = rows.iter().collect();
    sorted.sort_by_key(|r| (order.get(r.model.as_str()).copied(), r.ladder_order()));
    columns::csv_file(COLUMNS, sorted.into_iter())
}

/// Reads a `summary.csv` (or baseline CSV). Rows keep file order.
pub fn read_summary_csv(path: &Path) -> Result<Vec<StepSummary>, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| StoreError::read(path, e))?;
    parse_summary_csv(path, &bytes)
}

/// Parses summary CSV bytes that are not a file on disk (e.g. a baseline's version in git
/// history); `path` names the source in error messages. A file of a newer schema is refused.
pub fn parse_summary_csv(path: &Path, bytes: &[u8]) -> Result<Vec<StepSummary>, StoreError> {
    let required = columns::required(COLUMNS);
    parse_csv(path, bytes, "summary CSV", &required, RENAMED, |row| {
        let schema_version: u32 = row.parse("schema_version", "a schema version")?;
        if schema_version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.to_path_buf(),
                line: row.line,
                found: schema_version,
                supported: SCHEMA_VERSION,
            });
        }
        columns::read_row(COLUMNS, row)
    })
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
            ttfc_p50_ms: Some(412.5),
            ttfc_p90_ms: Some(520.25),
            ttfc_p99_ms: Some(640.0),
            reasoned: 190,
            reasoning_share: Some(0.625),
            server_processing_p90_ms: Some(480.5),
            cost_per_1k_ok: Some(2.68),
            cost_per_1m_output: Some(16.75),
            cache_hit_by_turn: "1:0.125 2:0.875".into(),
            ttft_first_p50_ms: Some(300.5),
            ttft_first_p90_ms: Some(410.25),
            ttft_later_p50_ms: Some(120.0),
            ttft_later_p90_ms: Some(180.5),
            tasks: 12,
            task_e2e_p50_ms: Some(9100.0),
            task_e2e_p90_ms: Some(12000.5),
            task_tokens_mean: Some(24000.5),
            task_e2e_mean_ms: Some(9500.25),
            task_turns_mean: Some(5.5),
            synthetic_call_share: Some(0.25),
            retry_wait_s: Some(12.5),
            retry_wait_share: Some(0.125),
            ratelimit_headroom_min: Some(0.0625),
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
        assert_eq!(text, format!("{}\n", summary_columns().join(",")));
        assert!(text.starts_with("schema_version,scenario,fingerprint,model,step,concurrency,"));
        assert!(text.trim_end().ends_with(
            "duration_s,achieved_concurrency,client_cpu_pct,loop_lag_p99_ms,steady_s,\
             concurrency_steady,rps_steady,output_tpm_steady,tokens_usage_share,ttft_p90_lo_ms,\
             ttft_p90_hi_ms,ladder_unit,short,cached_tokens,offered_rps,dropped,\
             send_lag_p50_ms,send_lag_p99_ms,ttft_sched_p90_ms,ttft_sched_p99_ms,\
             e2e_sched_p90_ms,e2e_sched_p99_ms,error_classes,headers_p50_ms,headers_p90_ms,\
             new_conn_share,server_queue_p90_ms,server_waiting_mean,server_waiting_max,\
             server_running_max,server_kv_max,ttfc_p50_ms,ttfc_p90_ms,ttfc_p99_ms,reasoned,\
             reasoning_share,server_processing_p90_ms,cost_per_1k_ok,cost_per_1m_output,\
             cache_hit_by_turn,ttft_first_p50_ms,ttft_first_p90_ms,ttft_later_p50_ms,\
             ttft_later_p90_ms,tasks,task_e2e_p50_ms,task_e2e_p90_ms,task_tokens_mean,\
             task_e2e_mean_ms,task_turns_mean,synthetic_call_share,retry_wait_s,\
             retry_wait_share,ratelimit_headroom_min"
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
            .map(|l| l.rsplitn(54, ',').last().unwrap().to_string() + "\n")
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
            ttfc_p50_ms: None,
            ttfc_p90_ms: None,
            ttfc_p99_ms: None,
            reasoned: 0,
            reasoning_share: None,
            server_processing_p90_ms: None,
            cost_per_1k_ok: None,
            cost_per_1m_output: None,
            cache_hit_by_turn: String::new(),
            ttft_first_p50_ms: None,
            ttft_first_p90_ms: None,
            ttft_later_p50_ms: None,
            ttft_later_p90_ms: None,
            tasks: 0,
            task_e2e_p50_ms: None,
            task_e2e_p90_ms: None,
            task_tokens_mean: None,
            task_e2e_mean_ms: None,
            task_turns_mean: None,
            synthetic_call_share: None,
            retry_wait_s: None,
            retry_wait_share: None,
            ratelimit_headroom_min: None,
            ..summary_row("m", 1)
        };
        assert_eq!(rows, vec![expected]);
    }

    #[test]
    fn schema_2_names_of_the_tpm_columns_read() {
        // Before schema 3 the output and total TPM columns were `tpm`, `tpm_total` and
        // `tpm_steady`: committed baselines and older runs still load, with the same values.
        let text = summary_text(&[summary_row("m", 1)]);
        assert!(text.contains(",output_tpm,total_tpm,") && text.contains(",output_tpm_steady,"));
        let old = text
            .replacen(",output_tpm,total_tpm,", ",tpm,tpm_total,", 1)
            .replacen(",output_tpm_steady,", ",tpm_steady,", 1)
            .replacen("\n3,", "\n2,", 1);
        let dir = tempfile::tempdir().unwrap();
        let rows = read_summary_csv(&write(&dir, "old.csv", &old)).unwrap();
        let expected = StepSummary {
            schema_version: 2,
            ..summary_row("m", 1)
        };
        assert_eq!(rows, vec![expected]);
        // No TPM column is bare: each says which tokens it counts.
        assert!(!summary_columns().contains(&"tpm"));
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
            msg.contains(&format!(
                "s.csv: line 2: schema_version {} is newer",
                SCHEMA_VERSION + 1
            )),
            "{msg}"
        );
    }
}
