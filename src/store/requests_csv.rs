//! `requests.csv` (docs/files.md): one row per attempted request, the original columns then the
//! appended rate-limit columns (`first_attempt_429, limit_kind, retry_after_ms`) and workload
//! columns (`cached_tokens, send_lag_ms, max_tokens`), then `reasoning_tokens`,
//! `itl_hist` (the request's inter-token gaps as a log-spaced histogram, `stats::itl`) and
//! `resent_stale` (sent again on a new connection after a closed keep-alive connection lost it),
//! the server's timings and ids, `cost` (at the scenario's `pricing:`, docs/cost.md),
//! `cache_write_tokens`, the tool calls of the answer (`tool_calls, tool_call_tokens`), the
//! request's turn (`turn, task_turns`) and, for an agent's turn, whose tool call the next turn
//! sent (`tool_call_sent`: `model` or `synthetic`). Error text is kept on one line per record;
//! the reader accepts files without the appended columns.

use super::columns::{self, col, optional, Column};
use super::csv_io::{first_appearance, read_csv, COST, MS};
use super::StoreError;
use crate::model::ItlHistogram;
use crate::model::{ErrorClass, RequestRecord, TokensSource};
use std::path::Path;

/// `requests.csv`'s columns in file order, declared once: the header, the writer (whole files
/// and appended rows) and the reader come from this list. Older files may lack the trailing
/// `optional` ones; a new column is appended (optional) at the end.
#[rustfmt::skip]
static COLUMNS: &[Column<RequestRecord>] = &[
    col!(model: text),
    col!(step: parse "a step number"),
    col!(concurrency: parse "a whole number"),
    col!(worker: parse "a worker number"),
    col!(seq: parse "a sequence number"),
    col!(request_id: text),
    col!(started_at_ms: fixed MS, "milliseconds"),
    // `status` is `ok` exactly when there is no error class; read together with it.
    Column {
        name: "status",
        optional: false,
        write: |r, out| out.push_str(r.status_str()),
        read: |row, _| {
            let error_class: Option<ErrorClass> = row.opt("error_class", "an error class")?;
            let ok = match row.text("status").trim() {
                "ok" => true,
                "error" => false,
                _ => return Err(row.bad("status", "`ok` or `error`")),
            };
            if ok != error_class.is_none() {
                return Err(row.bad(
                    "error_class",
                    "empty for status=ok and set for status=error",
                ));
            }
            Ok(())
        },
    },
    col!(error_class: with
        |r, out| out.push_str(r.error_class.map_or("", |c| c.as_str())),
        |row, r| {
            r.error_class = row.opt("error_class", "an error class")?;
            Ok(())
        }),
    col!(http_status: opt "an HTTP status code"),
    col!(error_type: opt_text),
    col!(error_message: opt_text),
    col!(ttft_ms: opt_fixed MS, "milliseconds"),
    col!(ttfc_ms: opt_fixed MS, "milliseconds"),
    col!(tpot_ms: opt_fixed MS, "milliseconds"),
    col!(e2e_ms: opt_fixed MS, "milliseconds"),
    col!(output_tokens: opt "a token count"),
    col!(input_tokens: opt "a token count"),
    col!(tokens_source: with
        |r, out| out.push_str(r.tokens_source.map_or("", |s| s.as_str())),
        |row, r| {
            r.tokens_source = match row.cell("tokens_source").trim() {
                "" => None,
                "usage" => Some(TokensSource::Usage),
                "chunks" => Some(TokensSource::Chunks),
                _ => return Err(row.bad("tokens_source", "`usage`, `chunks` or empty")),
            };
            Ok(())
        }),
    col!(token_events: parse "a count"),
    col!(finish_reason: opt_text),
    col!(attempts: parse "a count"),
    col!(retry_wait_ms: fixed MS, "milliseconds"),
    // Appended: rate-limit columns, workload columns, then later additions.
    optional(col!(first_attempt_429: flag)),
    optional(col!(limit_kind: with
        |r, out| out.push_str(r.limit_kind.map_or("", |k| k.as_str())),
        |row, r| {
            r.limit_kind = match row.cell("limit_kind").trim() {
                "" => None,
                kind => Some(kind.parse().map_err(|e: String| row.bad("limit_kind", &e))?),
            };
            Ok(())
        })),
    optional(col!(retry_after_ms: opt_fixed MS, "milliseconds")),
    optional(col!(cached_tokens: opt "a token count")),
    optional(col!(send_lag_ms: opt_fixed MS, "milliseconds")),
    optional(col!(max_tokens: opt "a token count")),
    optional(col!(reasoning_tokens: opt "a token count")),
    // A file without the column gives `itl: None` (not recorded), an empty cell a request
    // without gaps.
    optional(Column {
        name: "itl_hist",
        optional: false,
        write: |r, out| {
            if let Some(h) = &r.itl {
                h.encode_into(out);
            }
        },
        read: |row, r| {
            r.itl = if row.has("itl_hist") {
                let h = ItlHistogram::decode(row.cell("itl_hist"))
                    .map_err(|why| row.bad("itl_hist", &format!("gap counts per bin ({why})")))?;
                Some(h)
            } else {
                None
            };
            Ok(())
        },
    }),
    optional(col!(resent_stale: flag)),
    optional(col!(connect_ms: opt_fixed MS, "milliseconds")),
    optional(col!(headers_ms: opt_fixed MS, "milliseconds")),
    optional(col!(server_queue_ms: opt_fixed MS, "milliseconds")),
    optional(col!(server_prefill_ms: opt_fixed MS, "milliseconds")),
    optional(col!(server_decode_ms: opt_fixed MS, "milliseconds")),
    optional(col!(server_timing_source: with
        |r, out| out.push_str(r.server_timing_source.map_or("", |s| s.as_str())),
        |row, r| {
            r.server_timing_source = row.opt("server_timing_source", "a timing source")?;
            Ok(())
        })),
    optional(col!(server_processing_ms: opt_fixed MS, "milliseconds")),
    optional(col!(server_request_id: opt_text)),
    optional(col!(cost: opt_fixed COST, "a cost")),
    optional(col!(cache_write_tokens: opt "a token count")),
    optional(col!(tool_calls: opt "a count")),
    optional(col!(tool_call_tokens: opt "a token count")),
    optional(col!(turn: opt "a turn number")),
    optional(col!(task_turns: opt "a turn count")),
    optional(col!(tool_call_sent: with
        |r, out| out.push_str(r.tool_call_sent.map_or("", |s| s.as_str())),
        |row, r| {
            r.tool_call_sent = row.opt("tool_call_sent", "model, synthetic or empty")?;
            Ok(())
        })),
    optional(col!(limit_value: opt "a count")),
    optional(col!(ratelimit_headroom: opt_fixed 3, "a share from 0 to 1")),
];

/// `requests.csv`'s header, in file order.
pub fn request_columns() -> Vec<&'static str> {
    columns::names(COLUMNS)
}

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
    columns::csv_file(COLUMNS, sorted.into_iter())
}

/// The header line of `requests.csv`.
pub fn requests_csv_header() -> Vec<u8> {
    columns::csv_file(COLUMNS, std::iter::empty())
}

/// Appends one `requests.csv` row to `out`.
pub(super) fn append_request_row(out: &mut super::csv_io::Records, r: &RequestRecord) {
    columns::push_row(COLUMNS, r, out);
}

/// Reads a `requests.csv` (or a baseline's `.requests.csv` sidecar). A file without the
/// `itl_hist` column gives `itl: None` (not recorded), an empty cell a request without gaps.
/// `partial`: the file belongs to a run that did not finish, so a torn last
/// row (cut by the crash) is dropped.
pub fn read_requests_csv(path: &Path, partial: bool) -> Result<Vec<RequestRecord>, StoreError> {
    let required = columns::required(COLUMNS);
    read_csv(path, "requests CSV", &required, partial, |row| {
        columns::read_row(COLUMNS, row)
    })
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
            server_processing_ms: Some(130.25),
            server_request_id: Some("req_0b1c".into()),
            server_timing_source: Some(crate::model::TimingSource::Sim),
            cost: Some(0.002_680_125),
            turn: Some(2),
            task_turns: Some(6),
            tool_call_sent: Some(crate::model::ToolCallSent::Synthetic),
            cache_write_tokens: Some(24),
            tool_calls: Some(2),
            tool_call_tokens: Some(31),
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
            limit_kind: Some(crate::model::LimitKind::InputTokens),
            limit_value: Some(30_000),
            ratelimit_headroom: Some(0.125),
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
                 server_timing_source,server_processing_ms,server_request_id,cost,cache_write_tokens,\
                 tool_calls,tool_call_tokens,turn,task_turns,tool_call_sent,limit_value,\
                 ratelimit_headroom"
        ));
        assert!(
            text.contains(",0.002680125,24,2,31,2,6,synthetic,30000,0.125\n"),
            "{text}"
        );
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
            .map(|l| l.rsplitn(24, ',').last().unwrap().to_string() + "\n")
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
            server_processing_ms: None,
            server_request_id: None,
            server_timing_source: None,
            cost: None,
            cache_write_tokens: None,
            tool_calls: None,
            tool_call_tokens: None,
            turn: None,
            task_turns: None,
            tool_call_sent: None,
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

    /// The bytes of a file, pinned: rows have been written in place since issue 24, and this
    /// snapshot was taken from the writer before that (csv crate, `format!`), so any change in
    /// quoting, number formatting or the `itl_hist` encoding shows here.
    #[test]
    fn requests_csv_bytes_are_pinned() {
        let odd = RequestRecord {
            model: "m,\"quoted\"".into(),
            started_at_ms: 0.0625,
            ttft_ms: Some(-0.0001),
            ttfc_ms: Some(f64::NAN),
            tpot_ms: Some(1e15 + 0.5),
            e2e_ms: Some(123_456.789_5),
            retry_wait_ms: -2.5,
            send_lag_ms: Some(f64::INFINITY),
            connect_ms: Some(0.0005),
            headers_ms: Some(0.0015),
            output_tokens: Some(u64::MAX),
            finish_reason: Some("stop, \"then\"\nmore".into()),
            itl: Some(ItlHistogram::from_gaps(
                &(0..64)
                    .map(|i| 20.0 + f64::from(i % 13) * 0.37 + f64::from(i / 13) * 9.0)
                    .chain([0.0, 1e9, 0.0004, 3.0])
                    .collect::<Vec<f64>>(),
            )),
            ..request("m", 2, 3, 4)
        };
        let records = [request("gpt-4o", 1, 0, 0), failed_request(), odd];
        insta::assert_snapshot!(String::from_utf8(requests_csv(&records)).unwrap());
    }
}
