//! The log formats `ladder logs` reads, each into [`LogRequest`]s: a CSV or JSON-lines log with
//! a column mapping (and the LiteLLM and Envoy presets of that mapping), and OpenTelemetry GenAI
//! spans exported as OTLP JSON. Ladder's own `requests.csv` is read by `store` and converted
//! with `LogRequest::from_record`. Rows without the times a request needs are counted and
//! named, never silently dropped.

use super::fields::{duration_ms, time_ms, Cell, Field, Mapping, Unit};
use super::{LogError, LogRequest};
use crate::model::{ErrorClass, LimitKind};
use serde_json::Value;

/// Which reader a log needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// ladder's own `requests.csv`.
    Ladder,
    Csv,
    Jsonl,
    Otlp,
    Litellm,
    Envoy,
}

impl LogFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Ladder => "ladder",
            LogFormat::Csv => "csv",
            LogFormat::Jsonl => "jsonl",
            LogFormat::Otlp => "otlp",
            LogFormat::Litellm => "litellm",
            LogFormat::Envoy => "envoy",
        }
    }

    /// The format a file's first bytes show.
    pub fn detect(text: &str) -> LogFormat {
        let head: String = text.chars().take(4096).collect();
        if head.trim_start().starts_with('{') || head.trim_start().starts_with('[') {
            if head.contains("\"resourceSpans\"") {
                LogFormat::Otlp
            } else if head.contains("\"completionStartTime\"") || head.contains("\"startTime\"") {
                LogFormat::Litellm
            } else if head.contains("\"response_duration\"") {
                LogFormat::Envoy
            } else {
                LogFormat::Jsonl
            }
        } else {
            let header = head.lines().next().unwrap_or("");
            if header.contains("started_at_ms") && header.contains("request_id") {
                LogFormat::Ladder
            } else {
                LogFormat::Csv
            }
        }
    }
}

/// The requests of one log, and the rows that could not be read as requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedLog {
    pub requests: Vec<LogRequest>,
    /// Rows skipped: how many, and the first one's line and reason.
    pub skipped: usize,
    pub first_skipped: Option<(usize, String)>,
}

impl ParsedLog {
    pub(super) fn skip(&mut self, line: usize, why: String) {
        self.skipped += 1;
        self.first_skipped.get_or_insert((line, why));
    }
}

/// Reads `text` in a line format (CSV or JSON lines; `Ladder` is the caller's: it needs
/// `store`, and OTLP JSON is `read_otlp`'s). `mapping` (the user's `--map`) refines the default
/// names of CSV and JSON lines (`start`, `end`, `ttft_ms`, …) and the LiteLLM and Envoy presets.
pub(super) fn parse_lines(
    text: &str,
    format: LogFormat,
    mapping: &Mapping,
) -> Result<ParsedLog, LogError> {
    match format {
        LogFormat::Ladder => Err(LogError::Usage(
            "ladder's own requests.csv is read by the store".into(),
        )),
        LogFormat::Csv => parse_csv(text, &Mapping::identity().with(mapping.clone())),
        LogFormat::Jsonl => parse_jsonl(text, &Mapping::identity().with(mapping.clone())),
        LogFormat::Litellm => parse_jsonl(text, &Mapping::litellm().with(mapping.clone())),
        LogFormat::Envoy => parse_jsonl(text, &Mapping::envoy().with(mapping.clone())),
        LogFormat::Otlp => Err(LogError::Usage(
            "OTLP JSON is read by logs::read_otlp".into(),
        )),
    }
}

fn parse_csv(text: &str, mapping: &Mapping) -> Result<ParsedLog, LogError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| LogError::Line {
            line: 1,
            message: format!("not a CSV header: {e}"),
        })?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    check_mapped(
        mapping,
        |c| header.iter().any(|h| h == c),
        &header.join(", "),
    )?;
    let mut out = ParsedLog::default();
    for (i, row) in reader.records().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| LogError::Line {
            line,
            message: format!("not a CSV row: {e}"),
        })?;
        let get = |col: &str| {
            let at = header.iter().position(|h| h == col)?;
            let v = row.get(at)?.trim();
            (!v.is_empty()).then(|| Cell::Text(v.to_string()))
        };
        match request_of(line, mapping, get) {
            Ok(r) => out.requests.push(r),
            Err(why) => out.skip(line, why),
        }
    }
    Ok(out)
}

fn parse_jsonl(text: &str, mapping: &Mapping) -> Result<ParsedLog, LogError> {
    let mut out = ParsedLog::default();
    let mut seen_columns = false;
    let rows: Vec<(usize, Value)> = if text.trim_start().starts_with('[') {
        let all: Vec<Value> = serde_json::from_str(text).map_err(|e| LogError::Line {
            line: e.line(),
            message: format!("not a JSON array of requests: {e}"),
        })?;
        all.into_iter()
            .enumerate()
            .map(|(i, v)| (i + 1, v))
            .collect()
    } else {
        let mut rows = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(l) {
                Ok(v) if v.is_object() => rows.push((i + 1, v)),
                _ => out.skip(i + 1, "not a JSON object".into()),
            }
        }
        rows
    };
    for (line, v) in rows {
        let get = |col: &str| cell_at(&v, col);
        let has = |col: &str| lookup(&v, col).is_some();
        seen_columns |= mapping
            .source(Field::Start)
            .or(mapping.source(Field::End))
            .is_some_and(|s| s.columns.iter().any(|c| has(c)));
        match request_of(line, mapping, get) {
            Ok(r) => out.requests.push(r),
            Err(why) => out.skip(line, why),
        }
    }
    if !seen_columns && out.requests.is_empty() {
        check_mapped(mapping, |_| false, "(none of the mapped keys)")?;
    }
    Ok(out)
}

/// A usage error when the times a request needs are mapped to columns the file lacks.
fn check_mapped(
    mapping: &Mapping,
    has: impl Fn(&str) -> bool,
    present: &str,
) -> Result<(), LogError> {
    let mapped = |f: Field| {
        mapping
            .source(f)
            .is_some_and(|s| s.columns.iter().any(|c| has(c)))
    };
    let start = mapped(Field::Start) || mapped(Field::End);
    let span = mapped(Field::End) || mapped(Field::E2e);
    if start && span {
        return Ok(());
    }
    let names = |f: Field| {
        mapping
            .source(f)
            .map_or("(unmapped)".to_string(), |s| s.columns.join("|"))
    };
    Err(LogError::Usage(format!(
        "the log has no start time and end time (or duration): start is `{}`, end `{}`, e2e `{}`, \
         but its columns are {present}; name them with --map, e.g. --map start=ts,e2e_ms=duration",
        names(Field::Start),
        names(Field::End),
        names(Field::E2e)
    )))
}

/// The value at a key, or at a dotted path of nested objects (`metadata.user_api_key_hash`).
fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    if let Some(x) = v.get(path) {
        return Some(x);
    }
    let mut cur = v;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    Some(cur)
}

fn cell_at(v: &Value, path: &str) -> Option<Cell> {
    match lookup(v, path)? {
        Value::Number(n) => n.as_f64().map(Cell::Number),
        Value::String(s) if !s.trim().is_empty() => Some(Cell::Text(s.clone())),
        Value::Bool(b) => Some(Cell::Text(b.to_string())),
        _ => None,
    }
}

/// One request from a row's cells, or why the row is not one.
fn request_of(
    line: usize,
    mapping: &Mapping,
    get: impl Fn(&str) -> Option<Cell>,
) -> Result<LogRequest, String> {
    let cell = |f: Field| -> Option<(Cell, Unit)> {
        let s = mapping.source(f)?;
        s.columns.iter().find_map(|c| get(c)).map(|c| (c, s.unit))
    };
    let time = |f: Field| cell(f).and_then(|(c, u)| time_ms(&c, u));
    let dur = |f: Field| cell(f).and_then(|(c, u)| duration_ms(&c, u));
    let text = |f: Field| {
        cell(f).map(|(c, _)| match c {
            Cell::Text(t) => t,
            Cell::Number(n) => format!("{n}"),
        })
    };
    let count = |f: Field| {
        cell(f)
            .and_then(|(c, _)| duration_ms(&c, Unit::Millis))
            .map(|n| n.max(0.0) as u64)
    };
    let e2e = dur(Field::E2e);
    let (start, end) = match (time(Field::Start), time(Field::End), e2e) {
        (Some(s), Some(e), _) => (s, e),
        (Some(s), None, Some(d)) => (s, s + d),
        (None, Some(e), Some(d)) => (e - d, e),
        _ => return Err("no start and end time (or duration)".into()),
    };
    let ttft = dur(Field::Ttft).or_else(|| time(Field::FirstToken).map(|t| t - start));
    let mut r = LogRequest {
        line,
        start_ms: start,
        end_ms: end,
        ttft_ms: ttft,
        model: text(Field::Model).unwrap_or_else(|| "unknown".into()),
        key: text(Field::Key).map(|k| shown_key(&k)),
        input_tokens: count(Field::InputTokens),
        output_tokens: count(Field::OutputTokens),
        seq: count(Field::Id),
        ..LogRequest::default()
    };
    outcome(&mut r, text(Field::Status), text(Field::Error));
    Ok(r)
}

/// A key as it may be shown and written: a secret-looking value (`sk-…`, or 32 characters and
/// more) becomes `#` and 8 hex digits of its SHA-256, so a log's raw keys never reach a file.
pub fn shown_key(k: &str) -> String {
    use sha2::{Digest, Sha256};
    let k = k.trim();
    if k.starts_with("sk-") || k.len() >= 32 {
        let h = Sha256::digest(k.as_bytes());
        format!("#{:02x}{:02x}{:02x}{:02x}", h[0], h[1], h[2], h[3])
    } else {
        k.to_string()
    }
}

/// Sets a request's outcome from its status cell (HTTP status or a word) and its error cell
/// (a code, class or message: non-empty means failed).
pub fn outcome(r: &mut LogRequest, status: Option<String>, error: Option<String>) {
    let status = status.map(|s| s.trim().to_ascii_lowercase());
    let http = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|n| (100.0..600.0).contains(n))
            .map(|n| n as u16)
    };
    r.http_status = status.as_deref().and_then(http);
    let word_failed = status
        .as_deref()
        .is_some_and(|s| matches!(s, "failure" | "failed" | "error" | "fail" | "false"));
    let error = error.filter(|e| !e.trim().is_empty() && e.trim() != "None");
    if r.http_status.is_none() {
        r.http_status = error.as_deref().and_then(|e| http(e.trim()));
    }
    let failed_status = r.http_status.filter(|s| *s >= 400);
    if failed_status.is_none() && !word_failed && error.is_none() {
        return;
    }
    let msg = error.clone().unwrap_or_default().to_ascii_lowercase();
    r.error_class = Some(match failed_status {
        Some(s) => ErrorClass::from_status(s),
        None if msg.contains("429") || msg.contains("rate limit") || msg.contains("ratelimit") => {
            ErrorClass::Http429
        }
        None if msg.contains("timeout") || msg.contains("timed out") => ErrorClass::TimeoutTotal,
        None => ErrorClass::Http5xx,
    });
    if r.error_class == Some(ErrorClass::Http429) && r.http_status.is_none() {
        r.http_status = Some(429);
    }
    r.limit_kind = limit_kind_of(&msg);
    r.error_message = error.map(|e| e.chars().take(200).collect());
}

/// What a 429's message says the limit counts: tokens (TPM) or requests (RPM, concurrency).
fn limit_kind_of(msg: &str) -> Option<LimitKind> {
    if msg.contains("tokens per min") || msg.contains("tpm") || msg.contains("token rate") {
        Some(LimitKind::Tokens)
    } else if msg.contains("requests per min") || msg.contains("rpm") || msg.contains("concurren") {
        Some(LimitKind::Requests)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::parse_log;

    #[test]
    fn formats_are_detected_from_their_first_bytes() {
        assert_eq!(
            LogFormat::detect("{\"resourceSpans\": []}"),
            LogFormat::Otlp
        );
        assert_eq!(
            LogFormat::detect("{\"startTime\": 1, \"completionStartTime\": 2}"),
            LogFormat::Litellm
        );
        assert_eq!(
            LogFormat::detect("{\"start_time\":\"x\",\"response_duration\":3}"),
            LogFormat::Envoy
        );
        assert_eq!(LogFormat::detect("{\"ts\": 1}"), LogFormat::Jsonl);
        assert_eq!(
            LogFormat::detect("model,step,concurrency,worker,seq,request_id,started_at_ms\n"),
            LogFormat::Ladder
        );
        assert_eq!(LogFormat::detect("ts,ttfb\n"), LogFormat::Csv);
    }

    #[test]
    fn a_mapped_csv_gives_times_ttft_outcomes_and_names_what_it_skips() {
        let text = "ts,ttfb,duration,model,code,out\n\
                    2026-03-01T14:00:00Z,120,1.5,m,200,30\n\
                    ,120,1.5,m,200,30\n\
                    1772373601,90,2,m,429,\n";
        let m =
            Mapping::parse("start=ts,ttft_ms=ttfb,e2e_s=duration,status=code,output_tokens=out")
                .unwrap();
        let log = parse_log(text, LogFormat::Csv, &m).unwrap();
        assert_eq!(log.requests.len(), 2);
        let (a, b) = (&log.requests[0], &log.requests[1]);
        assert_eq!(
            (a.e2e_ms(), a.ttft_ms, a.output_tokens),
            (1500.0, Some(120.0), Some(30))
        );
        assert_eq!(a.error_class, None);
        assert_eq!((b.error_class, b.line), (Some(ErrorClass::Http429), 4));
        assert_eq!(log.skipped, 1);
        assert_eq!(log.first_skipped.as_ref().unwrap().0, 3);
        let err = parse_log("a,b\n1,2\n", LogFormat::Csv, &Mapping::default()).unwrap_err();
        assert!(err.to_string().contains("--map"), "{err}");
    }

    #[test]
    fn litellm_payloads_give_first_token_keys_and_error_codes() {
        let ok = r#"{"startTime": 1772373600.0, "endTime": 1772373601.5, "completionStartTime": 1772373600.25, "model": "openai/x", "model_group": "x", "status": "success", "prompt_tokens": 10, "completion_tokens": 20, "metadata": {"user_api_key_hash": "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b"}}"#;
        let bad = r#"{"startTime": 1772373601.0, "endTime": 1772373601.1, "completionStartTime": null, "model_group": "x", "status": "failure", "error_information": {"error_code": "429", "error_message": "Rate limit: tokens per min"}}"#;
        let log = parse_log(
            &format!("{ok}\n{bad}\n"),
            LogFormat::Litellm,
            &Mapping::default(),
        )
        .unwrap();
        let (a, b) = (&log.requests[0], &log.requests[1]);
        assert_eq!(
            (a.model.as_str(), a.ttft_ms, a.output_tokens),
            ("x", Some(250.0), Some(20))
        );
        assert!(a
            .key
            .as_deref()
            .is_some_and(|k| k.starts_with('#') && k.len() == 9));
        assert_eq!(
            (b.error_class, b.http_status, b.ttft_ms),
            (Some(ErrorClass::Http429), Some(429), None)
        );
        let mut r = LogRequest::default();
        outcome(
            &mut r,
            None,
            Some("Rate limit reached: tokens per min (TPM)".into()),
        );
        assert_eq!(
            (r.error_class, r.limit_kind),
            (Some(ErrorClass::Http429), Some(LimitKind::Tokens))
        );
    }
}
