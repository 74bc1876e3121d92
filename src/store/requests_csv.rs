//! `requests.csv` (docs/files.md): one row per attempted request, the original columns then the
//! appended rate-limit columns (`first_attempt_429, limit_kind, retry_after_ms`) and workload
//! columns (`cached_tokens, send_lag_ms, max_tokens`), then `reasoning_tokens`,
//! `itl_hist` (the request's inter-token gaps as a log-spaced histogram, `stats::itl`) and
//! `resent_stale` (sent again on a new connection after a closed keep-alive connection lost it). Error
//! text is
//! kept on one line per record; the reader accepts files without the appended columns.

use super::csv_io::{
    append_rows, escape, first_appearance, fixed, opt_fixed, read_csv, write_csv, MS,
};
use super::StoreError;
use crate::model::{ErrorClass, LimitKind, RequestRecord, TokensSource};
use crate::stats::ItlHistogram;
use std::path::Path;

/// `requests.csv` columns in file order: the original columns (docs/files.md), then the appended rate-limit columns.
#[rustfmt::skip]
pub const REQUEST_COLUMNS: [&str; 38] = [
    "model", "step", "concurrency", "worker", "seq", "request_id", "started_at_ms", "status",
    "error_class", "http_status", "error_type", "error_message", "ttft_ms", "ttfc_ms", "tpot_ms",
    "e2e_ms", "output_tokens", "input_tokens", "tokens_source", "token_events", "finish_reason",
    "attempts", "retry_wait_ms", "first_attempt_429", "limit_kind", "retry_after_ms",
    "cached_tokens", "send_lag_ms", "max_tokens", "reasoning_tokens", "itl_hist", "resent_stale",
    "connect_ms", "headers_ms", "server_queue_ms", "server_prefill_ms", "server_decode_ms",
    "server_timing_source",
];
/// Trailing request columns that older files may lack.
const REQUEST_OPTIONAL: usize = 15;

/// `requests.csv` bytes, ordered by model (first appearance), step, worker, seq.
pub fn requests_csv(records: &[RequestRecord]) -> Vec<u8> {
    let order = first_appearance(records.iter().map(|r| r.model.as_str()));
    let mut sorted: Vec<&RequestRecord> = records.iter().collect();
    sorted.sort_by_key(|r| {
        (
            order.get(r.model.as_str()).copied(),
            r.step,
            r.worker,
            r.seq,
        )
    });
    write_csv(&REQUEST_COLUMNS, sorted.into_iter().map(request_cells))
}

/// The header line of `requests.csv`.
pub fn requests_csv_header() -> Vec<u8> {
    write_csv(&REQUEST_COLUMNS, std::iter::empty())
}

/// Appends one `requests.csv` row to `out`.
pub fn append_request_row(out: &mut Vec<u8>, r: &RequestRecord) {
    append_rows(out, std::iter::once(request_cells(r)));
}

/// Reads a `requests.csv` (or a baseline's `.requests.csv` sidecar). A file without the
/// `itl_hist` column gives `itl: None` (not recorded), an empty cell a request without gaps.
/// `partial`: the file belongs to a run that did not finish, so a torn last
/// row (cut by the crash) is dropped.
pub fn read_requests_csv(path: &Path, partial: bool) -> Result<Vec<RequestRecord>, StoreError> {
    let required = &REQUEST_COLUMNS[..REQUEST_COLUMNS.len() - REQUEST_OPTIONAL];
    read_csv(path, "requests CSV", required, partial, |row| {
        let error_class: Option<ErrorClass> = row.opt("error_class", "an error class")?;
        let status = row.text("status");
        let status_ok = match status.trim() {
            "ok" => true,
            "error" => false,
            _ => return Err(row.bad("status", "`ok` or `error`")),
        };
        if status_ok != error_class.is_none() {
            return Err(row.bad(
                "error_class",
                "empty for status=ok and set for status=error",
            ));
        }
        Ok(RequestRecord {
            model: row.text("model"),
            step: row.parse("step", "a step number")?,
            concurrency: row.parse("concurrency", "a whole number")?,
            worker: row.parse("worker", "a worker number")?,
            seq: row.parse("seq", "a sequence number")?,
            request_id: row.text("request_id"),
            started_at_ms: row.parse("started_at_ms", "milliseconds")?,
            error_class,
            http_status: row.opt("http_status", "an HTTP status code")?,
            error_type: row.opt_text("error_type"),
            error_message: row.opt_text("error_message"),
            ttft_ms: row.opt("ttft_ms", "milliseconds")?,
            ttfc_ms: row.opt("ttfc_ms", "milliseconds")?,
            tpot_ms: row.opt("tpot_ms", "milliseconds")?,
            e2e_ms: row.opt("e2e_ms", "milliseconds")?,
            output_tokens: row.opt("output_tokens", "a token count")?,
            input_tokens: row.opt("input_tokens", "a token count")?,
            tokens_source: match row.cell("tokens_source").trim() {
                "" => None,
                "usage" => Some(TokensSource::Usage),
                "chunks" => Some(TokensSource::Chunks),
                _ => return Err(row.bad("tokens_source", "`usage`, `chunks` or empty")),
            },
            token_events: row.parse("token_events", "a count")?,
            finish_reason: row.opt_text("finish_reason"),
            attempts: row.parse("attempts", "a count")?,
            retry_wait_ms: row.parse("retry_wait_ms", "milliseconds")?,
            itl: if row.has("itl_hist") {
                let h = ItlHistogram::decode(row.cell("itl_hist"))
                    .map_err(|why| row.bad("itl_hist", &format!("gap counts per bin ({why})")))?;
                Some(h)
            } else {
                None
            },
            reasoning_tokens: row.opt("reasoning_tokens", "a token count")?,
            first_attempt_429: match row.cell("first_attempt_429").trim() {
                "" | "false" | "0" => false,
                "true" | "1" => true,
                _ => return Err(row.bad("first_attempt_429", "`true` or `false`")),
            },
            limit_kind: match row.cell("limit_kind").trim() {
                "" => None,
                "requests" => Some(LimitKind::Requests),
                "tokens" => Some(LimitKind::Tokens),
                _ => return Err(row.bad("limit_kind", "`requests`, `tokens` or empty")),
            },
            retry_after_ms: row.opt("retry_after_ms", "milliseconds")?,
            cached_tokens: row.opt("cached_tokens", "a token count")?,
            send_lag_ms: row.opt("send_lag_ms", "milliseconds")?,
            max_tokens: row.opt("max_tokens", "a token count")?,
            resent_stale: match row.cell("resent_stale").trim() {
                "" | "false" | "0" => false,
                "true" | "1" => true,
                _ => return Err(row.bad("resent_stale", "`true` or `false`")),
            },
            connect_ms: row.opt("connect_ms", "milliseconds")?,
            headers_ms: row.opt("headers_ms", "milliseconds")?,
            server_queue_ms: row.opt("server_queue_ms", "milliseconds")?,
            server_prefill_ms: row.opt("server_prefill_ms", "milliseconds")?,
            server_decode_ms: row.opt("server_decode_ms", "milliseconds")?,
            server_timing_source: row.opt("server_timing_source", "a timing source")?,
        })
    })
}

fn request_cells(r: &RequestRecord) -> Vec<String> {
    let text = |s: &Option<String>| {
        s.as_deref()
            .map(|s| escape(s).into_owned())
            .unwrap_or_default()
    };
    let int = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    vec![
        escape(&r.model).into_owned(),
        r.step.to_string(),
        r.concurrency.to_string(),
        r.worker.to_string(),
        r.seq.to_string(),
        escape(&r.request_id).into_owned(),
        fixed(r.started_at_ms, MS),
        r.status_str().to_string(),
        r.error_class
            .map(|c| c.as_str().to_string())
            .unwrap_or_default(),
        int(r.http_status.map(u64::from)),
        text(&r.error_type),
        text(&r.error_message),
        opt_fixed(r.ttft_ms, MS),
        opt_fixed(r.ttfc_ms, MS),
        opt_fixed(r.tpot_ms, MS),
        opt_fixed(r.e2e_ms, MS),
        int(r.output_tokens),
        int(r.input_tokens),
        r.tokens_source
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        r.token_events.to_string(),
        text(&r.finish_reason),
        r.attempts.to_string(),
        fixed(r.retry_wait_ms, MS),
        r.first_attempt_429.to_string(),
        r.limit_kind
            .map(|k| k.as_str().to_string())
            .unwrap_or_default(),
        opt_fixed(r.retry_after_ms, MS),
        int(r.cached_tokens),
        opt_fixed(r.send_lag_ms, MS),
        int(r.max_tokens.map(u64::from)),
        int(r.reasoning_tokens),
        r.itl.as_ref().map(ItlHistogram::encode).unwrap_or_default(),
        r.resent_stale.to_string(),
        opt_fixed(r.connect_ms, MS),
        opt_fixed(r.headers_ms, MS),
        opt_fixed(r.server_queue_ms, MS),
        opt_fixed(r.server_prefill_ms, MS),
        opt_fixed(r.server_decode_ms, MS),
        r.server_timing_source
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
    ]
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::csv_io::tests::write;
    use super::*;

    pub(crate) fn request(model: &str, step: u32, worker: u32, seq: u32) -> RequestRecord {
        RequestRecord {
            model: model.into(),
            step,
            concurrency: 5,
            worker,
            seq,
            request_id: format!("ladder-{step}-{worker}-{seq}"),
            started_at_ms: 1234.5,
            ttft_ms: Some(212.25),
            ttfc_ms: Some(212.25),
            tpot_ms: Some(8.5),
            e2e_ms: Some(1900.0),
            output_tokens: Some(200),
            input_tokens: Some(120),
            tokens_source: Some(TokensSource::Usage),
            token_events: 200,
            finish_reason: Some("length".into()),
            attempts: 1,
            cached_tokens: Some(96),
            send_lag_ms: Some(0.25),
            max_tokens: Some(200),
            reasoning_tokens: Some(64),
            connect_ms: Some(1.5),
            headers_ms: Some(40.25),
            server_queue_ms: Some(12.0),
            server_prefill_ms: Some(25.5),
            server_decode_ms: None,
            server_timing_source: Some(crate::model::TimingSource::Sim),
            itl: Some(ItlHistogram::from_gaps(&[
                9.5, 10.0, 10.0, 10.5, 0.0, 240.0,
            ])),
            ..RequestRecord::default()
        }
    }

    fn failed_request() -> RequestRecord {
        RequestRecord {
            error_class: Some(ErrorClass::Http429),
            http_status: Some(429),
            error_type: Some("rate_limit_exceeded".into()),
            error_message: Some("Rate limit, \"slow\" down,\nplease\r\nC:\\path \\n".into()),
            ttft_ms: None,
            ttfc_ms: None,
            tpot_ms: None,
            e2e_ms: Some(35.125),
            output_tokens: None,
            input_tokens: None,
            tokens_source: None,
            token_events: 0,
            finish_reason: None,
            attempts: 3,
            retry_wait_ms: 1500.0,
            first_attempt_429: true,
            limit_kind: Some(LimitKind::Tokens),
            retry_after_ms: Some(750.0),
            ..request("gpt-4o", 1, 2, 0)
        }
    }

    #[test]
    fn requests_round_trip_with_awkward_text_on_one_line_each() {
        let records = vec![request("gpt-4o", 1, 0, 0), failed_request()];
        let bytes = requests_csv(&records);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(!text.contains('\r'));
        let cell = r#","Rate limit, ""slow"" down,\nplease\r\nC:\\path \\n","#;
        assert!(text.contains(cell), "{text}");
        assert!(text.lines().next().unwrap().ends_with(
            "attempts,retry_wait_ms,first_attempt_429,limit_kind,retry_after_ms,\
                 cached_tokens,send_lag_ms,max_tokens,reasoning_tokens,itl_hist,resent_stale,\
                 connect_ms,headers_ms,server_queue_ms,server_prefill_ms,server_decode_ms,\
                 server_timing_source"
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.csv");
        std::fs::write(&path, bytes).unwrap();
        let back = read_requests_csv(&path, false).unwrap();
        // Sorted by worker: the ok record (worker 0) comes first.
        assert_eq!(back, records);
    }

    #[test]
    fn requests_ordered_by_model_step_worker_seq() {
        let records = [
            request("b", 1, 1, 0),
            request("a", 1, 0, 0),
            request("b", 1, 0, 1),
            request("b", 1, 0, 0),
        ];
        let text = String::from_utf8(requests_csv(&records)).unwrap();
        let ids: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(5).unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                "ladder-1-0-0",
                "ladder-1-0-1",
                "ladder-1-1-0",
                "ladder-1-0-0"
            ]
        );
        assert!(text.lines().nth(4).unwrap().starts_with("a,"));
    }

    #[test]
    fn older_requests_without_rate_limit_columns_read() {
        let text = String::from_utf8(requests_csv(&[request("m", 1, 0, 0)])).unwrap();
        let old: String = text
            .lines()
            .map(|l| l.rsplitn(16, ',').last().unwrap().to_string() + "\n")
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let back = read_requests_csv(&write(&dir, "r.csv", &old), false).unwrap();
        let expected = RequestRecord {
            cached_tokens: None,
            send_lag_ms: None,
            max_tokens: None,
            reasoning_tokens: None,
            itl: None,
            connect_ms: None,
            headers_ms: None,
            server_queue_ms: None,
            server_prefill_ms: None,
            server_timing_source: None,
            ..request("m", 1, 0, 0)
        };
        assert_eq!(back, vec![expected]);
    }

    #[test]
    fn request_status_and_enums_are_checked() {
        let ok = String::from_utf8(requests_csv(&[request("m", 1, 0, 0)])).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (ok.replacen(",ok,", ",fine,", 1), "(`status`)"),
            (ok.replacen(",ok,", ",error,", 1), "(`error_class`)"),
            (ok.replacen(",usage,", ",guess,", 1), "(`tokens_source`)"),
            (
                ok.replacen(",false,", ",maybe,", 1),
                "(`first_attempt_429`)",
            ),
            (
                ok.replacen(&request("m", 1, 0, 0).itl.unwrap().encode(), "12:x", 1),
                "(`itl_hist`)",
            ),
        ];
        for (text, column) in cases {
            let msg = read_requests_csv(&write(&dir, "r.csv", &text), false)
                .unwrap_err()
                .to_string();
            assert!(
                msg.contains("r.csv: line 2") && msg.contains(column),
                "{msg}"
            );
        }
        let unknown_class = String::from_utf8(requests_csv(&[failed_request()]))
            .unwrap()
            .replacen("http_429", "http_999", 1);
        let msg = read_requests_csv(&write(&dir, "r.csv", &unknown_class), false)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("`http_999` as an error class"), "{msg}");
    }
}
