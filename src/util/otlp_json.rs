//! Spans of OpenTelemetry traces exported as OTLP JSON: one `{"resourceSpans": …}` document, or
//! one per line as the collector's file exporter writes them. The one reader of that shape, for
//! `ladder logs` (GenAI spans as request logs) and for replaying agent traces (`load.trace`):
//! the documents, each span with the line it is written on, its ids, its times (nanoseconds as a
//! string or a number, as the JSON mapping allows) and its attributes unwrapped from their
//! `{"stringValue": …}`/`{"intValue": …}` values. What a span means is the caller's.

use serde_json::Value;
use std::collections::HashMap;

/// One OTLP JSON document and the line it starts on (1-based).
pub struct Documents {
    docs: Vec<(usize, Value)>,
    /// The line on which each `"spanId": "…"` is written, by id (first seen).
    span_lines: HashMap<String, usize>,
}

/// A document that is not JSON: its line and serde's words.
#[derive(Debug, Clone, PartialEq)]
pub struct NotOtlp {
    pub line: usize,
    pub message: String,
}

/// Whether `text` looks like OTLP JSON spans: its first document (the whole text, or its first
/// line) is an object with `resourceSpans`.
pub fn looks_like_otlp(text: &str) -> bool {
    let has = |v: Value| v.get("resourceSpans").is_some();
    match serde_json::from_str::<Value>(text) {
        Ok(v) => has(v),
        Err(_) => text
            .lines()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .is_some_and(has),
    }
}

impl Documents {
    /// The whole text as one document, else one per non-blank line.
    pub fn parse(text: &str) -> Result<Documents, NotOtlp> {
        let docs = match serde_json::from_str::<Value>(text) {
            Ok(v) => vec![(1, v)],
            Err(_) => {
                let mut docs = Vec::new();
                for (i, l) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    let v = serde_json::from_str(l).map_err(|e| NotOtlp {
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
        Ok(Documents {
            docs,
            span_lines: span_id_lines(text),
        })
    }

    /// Every span of every document, in file order, numbered from 1.
    pub fn spans(&self) -> impl Iterator<Item = Span<'_>> {
        self.docs
            .iter()
            .flat_map(|(line, doc)| {
                array(doc, "resourceSpans").flat_map(move |rs| {
                    array(rs, "scopeSpans")
                        .chain(array(rs, "instrumentationLibrarySpans"))
                        .flat_map(|s| array(s, "spans"))
                        .map(move |span| (*line, span))
                })
            })
            .enumerate()
            .map(|(i, (doc_line, span))| {
                let line = span
                    .get("spanId")
                    .and_then(Value::as_str)
                    .and_then(|id| self.span_lines.get(id).copied())
                    .filter(|l| *l >= doc_line)
                    .unwrap_or(doc_line);
                Span {
                    n: i + 1,
                    line,
                    raw: span,
                }
            })
    }
}

/// One span: its number in the file (from 1), the line it is written on (where its `spanId`
/// is; its document's first line when it has none) and its JSON.
#[derive(Clone, Copy)]
pub struct Span<'a> {
    pub n: usize,
    pub line: usize,
    pub raw: &'a Value,
}

impl<'a> Span<'a> {
    /// An attribute's value (`{"key": k, "value": {"stringValue": …}}`), unwrapped.
    pub fn attribute(&self, key: &str) -> Option<&'a Value> {
        let a = array(self.raw, "attributes").find(|a| a.get("key").is_some_and(|k| k == key))?;
        let v = a.get("value")?;
        ["stringValue", "intValue", "doubleValue", "boolValue"]
            .iter()
            .find_map(|t| v.get(*t))
    }

    /// The first of `keys` the span has, as text.
    pub fn text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| self.attribute(k)).map(text_of)
    }

    /// The first of `keys` the span has, as a number (`intValue`s are strings in the JSON
    /// mapping); `Err(key)` when that attribute is there but not a number.
    pub fn number(&self, keys: &[&str]) -> Result<Option<f64>, &'static str> {
        for k in keys {
            if let Some(v) = self.attribute(k) {
                return number_of(v).map(Some).ok_or("not a number");
            }
        }
        Ok(None)
    }

    /// A time field (`startTimeUnixNano`, `endTimeUnixNano`) in nanoseconds since the epoch,
    /// written as a string or a number; `None` when absent, not a whole number, or 0 (unset).
    pub fn nanos(&self, key: &str) -> Option<u64> {
        let n = match self.raw.get(key)? {
            Value::String(s) => s.trim().parse::<u64>().ok(),
            Value::Number(x) => x
                .as_u64()
                .or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
            _ => None,
        }?;
        (n > 0).then_some(n)
    }

    /// A field of the span itself as text (`traceId`, `spanId`, `name`).
    pub fn field(&self, key: &str) -> Option<&'a str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    /// Whether the span's status is an error (`2` or `"STATUS_CODE_ERROR"`), and its message.
    pub fn error_status(&self) -> Option<String> {
        let errored = self
            .raw
            .pointer("/status/code")
            .is_some_and(|c| c == 2 || c == "STATUS_CODE_ERROR");
        errored.then(|| {
            self.raw
                .pointer("/status/message")
                .map_or("error".into(), text_of)
        })
    }

    /// The span's events (`{"name": …, "timeUnixNano": …}`).
    pub fn events(&self) -> impl Iterator<Item = &'a Value> {
        array(self.raw, "events")
    }
}

fn array<'a>(v: &'a Value, k: &str) -> impl Iterator<Item = &'a Value> {
    v.get(k).and_then(Value::as_array).into_iter().flatten()
}

/// A JSON value as text: a string as itself, anything else as JSON.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A number, or a string holding one.
pub fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The line (1-based) of each `"spanId": "<id>"` in `text`, by id, first seen.
fn span_id_lines(text: &str) -> HashMap<String, usize> {
    const KEY: &str = "\"spanId\"";
    let mut out = HashMap::new();
    let mut line = 1;
    let mut counted = 0;
    for (at, _) in text.match_indices(KEY) {
        line += text[counted..at].bytes().filter(|b| *b == b'\n').count();
        counted = at;
        let rest = text[at + KEY.len()..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(end) = rest.find('"') {
            out.entry(rest[..end].to_string()).or_insert(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRETTY: &str = r#"{
  "resourceSpans": [{
    "scopeSpans": [{
      "spans": [
        {
          "traceId": "aa", "spanId": "s1",
          "startTimeUnixNano": "1772373600000000000", "endTimeUnixNano": 1772373601000000000,
          "attributes": [
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "x", "value": {"stringValue": "twelve"}}
          ]
        },
        {
          "traceId": "aa",
          "spanId": "s2", "parentSpanId": "s1", "status": {"code": "STATUS_CODE_ERROR"}
        }
      ]
    }]
  }]
}"#;

    #[test]
    fn spans_carry_their_line_times_and_unwrapped_attributes() {
        assert!(looks_like_otlp(PRETTY));
        assert!(!looks_like_otlp(
            "{\"timestamp\": 0, \"input_tokens\": 5}\n"
        ));
        let docs = Documents::parse(PRETTY).unwrap();
        let spans: Vec<Span> = docs.spans().collect();
        assert_eq!(spans.len(), 2);
        let (a, b) = (spans[0], spans[1]);
        assert_eq!((a.n, a.line, b.n, b.line), (1, 6, 2, 16));
        assert_eq!(
            a.nanos("startTimeUnixNano"),
            Some(1_772_373_600_000_000_000)
        );
        assert_eq!(a.nanos("endTimeUnixNano"), Some(1_772_373_601_000_000_000));
        assert_eq!(b.nanos("startTimeUnixNano"), None);
        assert_eq!(
            a.number(&["nope", "gen_ai.usage.input_tokens"]),
            Ok(Some(12.0))
        );
        assert_eq!(a.number(&["x"]), Err("not a number"));
        assert_eq!(a.text(&["gen_ai.request.model"]).as_deref(), Some("m"));
        assert_eq!(a.field("traceId"), Some("aa"));
        assert_eq!(b.error_status().as_deref(), Some("error"));
        assert_eq!(a.error_status(), None);
    }

    #[test]
    fn one_document_a_line_and_a_bad_line_named() {
        let one = PRETTY.replace('\n', " ");
        let two = format!("{one}\n\n{one}\n");
        let docs = Documents::parse(&two).unwrap();
        let lines: Vec<usize> = docs.spans().map(|s| s.line).collect();
        assert_eq!(lines, [1, 1, 3, 3]);
        let bad = format!("{one}\nnope\n");
        assert_eq!(Documents::parse(&bad).err().map(|e| e.line), Some(2));
    }
}
