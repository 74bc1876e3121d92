//! OpenTelemetry GenAI spans exported as OTLP JSON (one `{"resourceSpans": …}` document, or
//! one per line as the collector's file exporter writes them). A span is a request when it
//! carries `gen_ai.request.model` (or `gen_ai.response.model`): its start and end times, its
//! token usage (`gen_ai.usage.input_tokens`/`output_tokens`, or the older `prompt_tokens`/
//! `completion_tokens`), its status and `error.type`/`http.response.status_code`. The
//! conventions define time to first chunk only as a metric, so the first-token time is read
//! where an instrumentation records one: a `gen_ai.response.time_to_first_chunk` (or
//! `…time_to_first_token`) attribute in seconds, or the first span event whose name says
//! "first" (`gen_ai.first_token`, `first_chunk`). The OTLP JSON itself (documents, spans,
//! attributes, times) is read by `util::otlp_json`, shared with trace replay.

use super::read::{outcome, ParsedLog};
use super::{LogError, LogRequest};
use crate::util::otlp_json::{number_of, Documents, Span};

const TTFT_ATTRS: [&str; 3] = [
    "gen_ai.response.time_to_first_chunk",
    "gen_ai.response.time_to_first_token",
    "gen_ai.server.time_to_first_token",
];

pub fn parse_otlp(text: &str) -> Result<ParsedLog, LogError> {
    let docs = Documents::parse(text).map_err(|e| LogError::Line {
        line: e.line,
        message: e.message,
    })?;
    let mut out = ParsedLog::default();
    for span in docs.spans() {
        let Some(model) = span.text(&["gen_ai.request.model", "gen_ai.response.model"]) else {
            continue;
        };
        match span_request(span, model) {
            Ok(r) => out.requests.push(r),
            Err(why) => out.skip(span.n, why),
        }
    }
    Ok(out)
}

fn span_request(span: Span, model: String) -> Result<LogRequest, String> {
    let n = span.n;
    let (Some(start), Some(end)) = (
        span.nanos("startTimeUnixNano"),
        span.nanos("endTimeUnixNano"),
    ) else {
        return Err(format!(
            "span {n} (line {}) has no start or end time",
            span.line
        ));
    };
    let (start_ms, end_ms) = (start as f64 / 1e6, end as f64 / 1e6);
    let num = |keys: &[&str]| span.number(keys).ok().flatten();
    let ttft_ms = num(&TTFT_ATTRS)
        .map(|s| s * 1000.0)
        .or_else(|| first_event_ms(span).map(|t| t - start_ms));
    let mut r = LogRequest {
        line: n,
        start_ms,
        end_ms,
        ttft_ms,
        model,
        input_tokens: num(&["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"])
            .map(|v| v.max(0.0) as u64),
        output_tokens: num(&[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
        ])
        .map(|v| v.max(0.0) as u64),
        ..LogRequest::default()
    };
    let status = span.text(&["http.response.status_code"]);
    let error = span.text(&["error.type"]).or_else(|| span.error_status());
    outcome(&mut r, status, error);
    Ok(r)
}

/// Epoch ms of the first span event whose name says "first" (first token or chunk).
fn first_event_ms(span: Span) -> Option<f64> {
    span.events()
        .filter(|e| {
            e.get("name")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|n| n.contains("first"))
        })
        .filter_map(|e| number_of(e.get("timeUnixNano")?))
        .map(|t| t / 1e6)
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ErrorClass;

    #[test]
    fn genai_spans_give_times_usage_first_token_and_errors() {
        let doc = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[
          {"name":"chat m","startTimeUnixNano":"1772373600000000000","endTimeUnixNano":"1772373601500000000",
           "attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"m"}},
                         {"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}},
                         {"key":"gen_ai.usage.output_tokens","value":{"intValue":40}}],
           "events":[{"name":"gen_ai.first_token","timeUnixNano":"1772373600200000000"}]},
          {"name":"http","startTimeUnixNano":"1","endTimeUnixNano":"2"},
          {"name":"chat m","startTimeUnixNano":"1772373601000000000","endTimeUnixNano":"1772373601100000000",
           "status":{"code":2},
           "attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"m"}},
                         {"key":"error.type","value":{"stringValue":"429"}}]}]}]}]}"#;
        let log = parse_otlp(doc).unwrap();
        assert_eq!(
            log.requests.len(),
            2,
            "the plain http span is not a request"
        );
        let a = &log.requests[0];
        assert_eq!(
            (a.e2e_ms(), a.input_tokens, a.output_tokens),
            (1500.0, Some(12), Some(40))
        );
        assert!((a.ttft_ms.unwrap() - 200.0).abs() < 1e-6);
        assert_eq!(log.requests[1].error_class, Some(ErrorClass::Http429));
        let lines = format!("{}\n{}\n", doc.replace('\n', " "), doc.replace('\n', " "));
        assert_eq!(parse_otlp(&lines).unwrap().requests.len(), 4);
    }
}
