//! OpenTelemetry GenAI spans exported as OTLP JSON (one `{"resourceSpans": …}` document, or
//! one per line as the collector's file exporter writes them). A span is a request when it
//! carries `gen_ai.request.model` (or `gen_ai.response.model`): its start and end times, its
//! token usage (`gen_ai.usage.input_tokens`/`output_tokens`, or the older `prompt_tokens`/
//! `completion_tokens`), its status and `error.type`/`http.response.status_code`. The
//! conventions define time to first chunk only as a metric, so the first-token time is read
//! where an instrumentation records one: a `gen_ai.response.time_to_first_chunk` (or
//! `…time_to_first_token`) attribute in seconds, or the first span event whose name says
//! "first" (`gen_ai.first_token`, `first_chunk`).

use super::read::{outcome, ParsedLog};
use super::{LogError, LogRequest};
use serde_json::Value;

const TTFT_ATTRS: [&str; 3] = [
    "gen_ai.response.time_to_first_chunk",
    "gen_ai.response.time_to_first_token",
    "gen_ai.server.time_to_first_token",
];

pub fn parse_otlp(text: &str) -> Result<ParsedLog, LogError> {
    let docs: Vec<(usize, Value)> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![(1, v)],
        Err(_) => {
            let mut docs = Vec::new();
            for (i, l) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let v = serde_json::from_str(l).map_err(|e| LogError::Line {
                    line: i + 1,
                    message: format!(
                        "not OTLP JSON: {e}; expected {{\"resourceSpans\": [...]}} per line"
                    ),
                })?;
                docs.push((i + 1, v));
            }
            docs
        }
    };
    let mut out = ParsedLog::default();
    let mut n = 0;
    for (line, doc) in &docs {
        for rs in array(doc, "resourceSpans") {
            let scopes = array(rs, "scopeSpans").chain(array(rs, "instrumentationLibrarySpans"));
            for span in scopes.flat_map(|s| array(s, "spans")) {
                n += 1;
                let attr = |k: &str| attribute(span, k);
                let Some(model) =
                    attr("gen_ai.request.model").or_else(|| attr("gen_ai.response.model"))
                else {
                    continue;
                };
                match span_request(span, *line, n, text_of(&model)) {
                    Ok(r) => out.requests.push(r),
                    Err(why) => out.skip(n, why),
                }
            }
        }
    }
    Ok(out)
}

fn span_request(span: &Value, line: usize, n: usize, model: String) -> Result<LogRequest, String> {
    let nanos = |k: &str| -> Option<f64> {
        match span.get(k)? {
            Value::String(s) => s.parse::<f64>().ok(),
            Value::Number(x) => x.as_f64(),
            _ => None,
        }
    };
    let (Some(start), Some(end)) = (nanos("startTimeUnixNano"), nanos("endTimeUnixNano")) else {
        return Err(format!(
            "span {n} (document at line {line}) has no start or end time"
        ));
    };
    let (start_ms, end_ms) = (start / 1e6, end / 1e6);
    let attr = |k: &str| attribute(span, k);
    let num = |k: &str| attr(k).and_then(|v| number_of(&v));
    let ttft_ms = TTFT_ATTRS
        .iter()
        .find_map(|k| num(k))
        .map(|s| s * 1000.0)
        .or_else(|| first_event_ms(span).map(|t| t - start_ms));
    let mut r = LogRequest {
        line: n,
        start_ms,
        end_ms,
        ttft_ms,
        model,
        input_tokens: num("gen_ai.usage.input_tokens")
            .or_else(|| num("gen_ai.usage.prompt_tokens"))
            .map(|v| v.max(0.0) as u64),
        output_tokens: num("gen_ai.usage.output_tokens")
            .or_else(|| num("gen_ai.usage.completion_tokens"))
            .map(|v| v.max(0.0) as u64),
        ..LogRequest::default()
    };
    let errored = span
        .pointer("/status/code")
        .is_some_and(|c| c == 2 || c == "STATUS_CODE_ERROR");
    let status = attr("http.response.status_code").map(|v| text_of(&v));
    let error = attr("error.type").map(|v| text_of(&v)).or_else(|| {
        errored.then(|| {
            span.pointer("/status/message")
                .map_or("error".into(), text_of)
        })
    });
    outcome(&mut r, status, error);
    Ok(r)
}

fn array<'a>(v: &'a Value, k: &str) -> impl Iterator<Item = &'a Value> {
    v.get(k).and_then(Value::as_array).into_iter().flatten()
}

/// An attribute's value (`{"key": k, "value": {"stringValue": …}}`), unwrapped.
fn attribute(span: &Value, key: &str) -> Option<Value> {
    let a = array(span, "attributes").find(|a| a.get("key").is_some_and(|k| k == key))?;
    let v = a.get("value")?;
    ["stringValue", "intValue", "doubleValue", "boolValue"]
        .iter()
        .find_map(|t| v.get(*t).cloned())
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Epoch ms of the first span event whose name says "first" (first token or chunk).
fn first_event_ms(span: &Value) -> Option<f64> {
    array(span, "events")
        .filter(|e| {
            e.get("name")
                .and_then(Value::as_str)
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
