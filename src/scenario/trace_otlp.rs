//! Agent sessions recorded as OpenTelemetry traces (OTLP JSON, the GenAI semantic conventions)
//! as a replay trace. The spans of one trace (`traceId`) are one session; its LLM calls, by
//! start time, are the session's turns. A span is an LLM call when its `gen_ai.operation.name`
//! is `chat`, `text_completion` or `generate_content`, or, without an operation name, when it
//! carries `gen_ai.usage.*` token counts; tool spans (`execute_tool`), agent spans
//! (`invoke_agent`, `create_agent`) and embeddings are not sent, their time is part of the gaps.
//! Each call sends synthetic text of its `gen_ai.usage.input_tokens` (the session's text, so a
//! later turn extends the earlier ones) and asks for its `gen_ai.usage.output_tokens`; a
//! session's first turn goes at its recorded start, each later one after the previous turn has
//! ended plus the recorded gap (its start − the previous turn's end). The OTLP JSON is read by
//! `util::otlp_json`.

use super::prompts::{at, PromptFileError};
use crate::util::otlp_json::{Documents, Span};

const INPUT: [&str; 2] = ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"];
const OUTPUT: [&str; 2] = [
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
];
/// Cache reads: the conventions' name, its older spelling, and instrumentations' own.
const CACHED: [&str; 4] = [
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.input_tokens.cached",
    "gen_ai.usage.prompt_tokens_details.cached_tokens",
];
const LLM_CALLS: [&str; 3] = ["chat", "text_completion", "generate_content"];
const NOT_SENT: [&str; 4] = ["execute_tool", "invoke_agent", "create_agent", "embeddings"];

/// What an agent trace held beyond its LLM calls, for `run --dry-run`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanFacts {
    /// Tool spans (`gen_ai.operation.name: execute_tool`): not sent, their time is in the gaps.
    pub tool_spans: usize,
    /// Turns that began before their session's previous turn ended (replayed after it).
    pub overlapped: usize,
    /// The models the spans name (`gen_ai.request.model`), in order of first appearance.
    pub models: Vec<String>,
}

/// A token count of a span: the attribute it was read from and its value (checked by the
/// caller, as every trace's sizes are).
pub(super) type Tokens = (&'static str, f64);

/// One LLM call span.
pub(super) struct Call {
    /// The span's trace: its session.
    pub(super) session: String,
    /// Recorded start and end, nanoseconds since the epoch.
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) line: usize,
    pub(super) input: Tokens,
    pub(super) output: Option<Tokens>,
    pub(super) cached: Option<Tokens>,
    /// A later turn: its start − the session's previous turn's end, in ms (0 when it began
    /// before that one ended).
    pub(super) after_previous_ms: Option<f64>,
}

/// The LLM calls of an OTLP JSON document, by session and start time, with their gaps; and
/// what else the spans held.
pub(super) fn parse_otlp_trace(text: &str) -> Result<(Vec<Call>, SpanFacts), PromptFileError> {
    let docs = Documents::parse(text).map_err(|e| at(e.line, e.message))?;
    let mut facts = SpanFacts::default();
    let mut calls = Vec::new();
    let mut seen = 0;
    for span in docs.spans() {
        seen += 1;
        let op = span.text(&["gen_ai.operation.name"]);
        match op.as_deref() {
            Some("execute_tool") => facts.tool_spans += 1,
            Some(o) if NOT_SENT.contains(&o) => {}
            Some(o) if LLM_CALLS.contains(&o) => calls.push(call(span, &mut facts)?),
            _ if has_usage(span) => calls.push(call(span, &mut facts)?),
            _ => {}
        }
    }
    if calls.is_empty() {
        return Err(PromptFileError {
            line: None,
            message: format!(
                "holds no LLM call spans ({seen} spans read); an agent trace needs spans with \
                 gen_ai.operation.name \"chat\" (or \"text_completion\") and \
                 gen_ai.usage.input_tokens"
            ),
        });
    }
    calls.sort_by(|a, b| (&a.session, a.start).cmp(&(&b.session, b.start)));
    let mut previous: Option<(String, u64)> = None;
    for c in &mut calls {
        if let Some((_, end)) = previous.as_ref().filter(|(s, _)| *s == c.session) {
            if c.start < *end {
                facts.overlapped += 1;
            }
            c.after_previous_ms = Some(c.start.saturating_sub(*end) as f64 / 1e6);
        }
        previous = Some((c.session.clone(), c.end));
    }
    Ok((calls, facts))
}

fn has_usage(span: Span) -> bool {
    INPUT
        .iter()
        .chain(&OUTPUT)
        .any(|k| span.attribute(k).is_some())
}

/// An LLM call span as a request of its trace's session; every missing or bad field is named
/// with the span's line.
fn call(span: Span, facts: &mut SpanFacts) -> Result<Call, PromptFileError> {
    let line = span.line;
    let name = span.field("name").unwrap_or("");
    let this = format!("span {} (`{name}`)", span.n);
    let session = span
        .field("traceId")
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            at(
                line,
                format!("{this} has no `traceId`; the spans of one trace are one session"),
            )
        })?
        .to_string();
    let time = |key: &str| {
        span.nanos(key).ok_or_else(|| {
            at(
                line,
                format!(
                    "{this} has no `{key}`; write nanoseconds since the epoch, e.g. \
                     \"1772373600000000000\""
                ),
            )
        })
    };
    let (start, end) = (time("startTimeUnixNano")?, time("endTimeUnixNano")?);
    if end < start {
        return Err(at(line, format!("{this} ends before it starts")));
    }
    let tokens = |keys: &[&'static str]| -> Result<Option<Tokens>, PromptFileError> {
        let Some(key) = keys.iter().find(|k| span.attribute(k).is_some()) else {
            return Ok(None);
        };
        match span.number(&[key]) {
            Ok(v) => Ok(v.map(|v| (*key, v))),
            Err(why) => Err(at(line, format!("{this}: `{key}` is {why}"))),
        }
    };
    let input = tokens(&INPUT)?.ok_or_else(|| {
        at(
            line,
            format!(
                "{this} has no `gen_ai.usage.input_tokens`; an LLM call's prompt size is what \
                 replay sends"
            ),
        )
    })?;
    let output = tokens(&OUTPUT)?;
    let cached = tokens(&CACHED)?;
    if let Some(m) = span.text(&["gen_ai.request.model", "gen_ai.response.model"]) {
        if !facts.models.contains(&m) {
            facts.models.push(m);
        }
    }
    Ok(Call {
        session,
        start,
        end,
        line,
        input,
        output,
        cached,
        after_previous_ms: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::scenario::trace::{read_trace, TraceFormat, TraceInput, Turn};

    /// A span line: trace, span id, operation (or none), start and end in ms after
    /// 2026-03-01T14:00Z (as a string of nanos, or as a JSON integer when `int`), and
    /// attributes.
    fn span(t: &str, id: &str, op: Option<&str>, ms: (u64, u64), attrs: &[(&str, u64)]) -> String {
        let ns = |m: u64| 1_772_373_600_000_000_000u64 + m * 1_000_000;
        let mut a: Vec<String> = attrs
            .iter()
            .map(|(k, v)| format!("{{\"key\":\"{k}\",\"value\":{{\"intValue\":\"{v}\"}}}}"))
            .collect();
        if let Some(op) = op {
            a.push(format!(
                "{{\"key\":\"gen_ai.operation.name\",\"value\":{{\"stringValue\":\"{op}\"}}}}"
            ));
        }
        let start = if id.ends_with('i') {
            ns(ms.0).to_string()
        } else {
            format!("\"{}\"", ns(ms.0))
        };
        format!(
            "{{\"traceId\":\"{t}\",\"spanId\":\"{id}\",\"name\":\"x\",\"startTimeUnixNano\":{start},\"endTimeUnixNano\":\"{}\",\"attributes\":[{}]}}",
            ns(ms.1),
            a.join(",")
        )
    }

    fn doc(spans: &[String]) -> String {
        format!(
            "{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[\n{}\n]}}]}}]}}\n",
            spans.join(",\n")
        )
    }

    fn read(text: &str) -> Result<crate::scenario::trace::Trace, (Option<usize>, String)> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.otlp.json");
        std::fs::write(&p, text).unwrap();
        read_trace(&p, 1 << 20, "").map_err(|e| (e.line, e.message))
    }

    const IN: &str = "gen_ai.usage.input_tokens";
    const OUT: &str = "gen_ai.usage.output_tokens";

    #[test]
    fn traces_become_sessions_whose_later_turns_wait_for_the_gap() {
        let text = doc(&[
            // Session b is listed first but starts later; its turns are out of order.
            span(
                "b",
                "b2",
                Some("chat"),
                (2000, 2300),
                &[(IN, 900), (OUT, 9)],
            ),
            span("b", "b1i", Some("chat"), (500, 800), &[(IN, 700), (OUT, 8)]),
            span(
                "a",
                "a0",
                Some("invoke_agent"),
                (0, 3000),
                &[(IN, 5000), (OUT, 99)],
            ),
            span("a", "a1", Some("chat"), (0, 400), &[(IN, 1000), (OUT, 20)]),
            span("a", "at", Some("execute_tool"), (420, 900), &[]),
            // No operation name, but token usage: an LLM call; cache reads kept.
            span(
                "a",
                "a2i",
                None,
                (1000, 1300),
                &[
                    (IN, 1300),
                    (OUT, 30),
                    ("gen_ai.usage.cache_read.input_tokens", 1024),
                ],
            ),
            span("a", "http", None, (1010, 1200), &[]),
            // Began before a2 ended: replayed after it, with no gap.
            span(
                "a",
                "a3",
                Some("text_completion"),
                (1250, 1400),
                &[(IN, 1400)],
            ),
        ]);
        let t = read(&text).unwrap();
        assert_eq!(t.format, TraceFormat::Otlp);
        let facts = t.spans.clone().unwrap();
        assert_eq!((facts.tool_spans, facts.overlapped), (1, 1));
        type Row<'a> = (f64, &'a str, Option<Turn>, Option<f64>, Option<usize>);
        let got: Vec<Row> = t
            .requests
            .iter()
            .map(|r| {
                (
                    r.at_ms,
                    r.session.as_deref().unwrap(),
                    r.turn,
                    r.after_previous_ms,
                    r.next,
                )
            })
            .collect();
        let turn = |session, turn, of| Some(Turn { session, turn, of });
        assert_eq!(
            got,
            [
                (0.0, "a", turn(0, 1, 3), None, Some(2)),
                (500.0, "b", turn(1, 1, 2), None, Some(4)),
                (1000.0, "a", turn(0, 2, 3), Some(600.0), Some(3)),
                (1250.0, "a", turn(0, 3, 3), Some(0.0), None),
                (2000.0, "b", turn(1, 2, 2), Some(1200.0), None),
            ]
        );
        let r = &t.requests[2];
        assert_eq!(
            (r.input.clone(), r.output_tokens, r.cached_tokens),
            (
                TraceInput::Tokens {
                    tokens: 1300,
                    blocks: vec![]
                },
                Some(30),
                Some(1024)
            )
        );
        assert_eq!(t.requests[3].output_tokens, None, "request.max_tokens");
        let note = t.sessions_note(5).unwrap();
        assert!(
            note.starts_with("2 sessions of 2–3 turns (5 requests), 1 tool spans"),
            "{note}"
        );
    }

    #[test]
    fn bad_spans_are_named_by_line_and_attribute() {
        let ok = span("a", "a1", Some("chat"), (0, 400), &[(IN, 10)]);
        let cases = [
            (
                span("a", "a2", Some("chat"), (0, 400), &[(OUT, 10)]),
                "has no `gen_ai.usage.input_tokens`",
            ),
            (
                span("", "a2", Some("chat"), (0, 400), &[(IN, 10)]),
                "has no `traceId`",
            ),
            (
                span("a", "a2", Some("chat"), (400, 0), &[(IN, 10)]),
                "ends before it starts",
            ),
            (
                span("a", "a2", Some("chat"), (0, 400), &[(IN, 3_000_000)]),
                "from 0 to",
            ),
        ];
        for (bad, needle) in cases {
            let (line, message) = read(&doc(&[ok.clone(), bad])).unwrap_err();
            assert_eq!(line, Some(3), "{message}");
            assert!(message.contains(needle), "{message}");
        }
        let no_start = doc(&[ok.replace("\"startTimeUnixNano\":\"", "\"start\":\"")]);
        let (line, message) = read(&no_start).unwrap_err();
        assert_eq!(line, Some(2));
        assert!(message.contains("`startTimeUnixNano`"), "{message}");
        let tools_only = doc(&[span("a", "t", Some("execute_tool"), (0, 1), &[])]);
        let (line, message) = read(&tools_only).unwrap_err();
        assert_eq!(line, None);
        assert!(
            message.contains("no LLM call spans (1 spans read)"),
            "{message}"
        );
    }

    #[test]
    fn the_shipped_example_reads_as_six_sessions() {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/traces/agent-sessions.otlp.json"
        );
        let t = read_trace(std::path::Path::new(p), 1 << 20, "").unwrap();
        assert_eq!(t.requests.len(), 24);
        let facts = t.spans.clone().unwrap();
        assert_eq!((facts.tool_spans, facts.overlapped), (18, 0));
        assert_eq!(facts.models, ["gpt-4o-mini"]);
        let sessions: std::collections::BTreeSet<u32> =
            t.requests.iter().map(|r| r.turn.unwrap().session).collect();
        assert_eq!(sessions.len(), 6);
    }
}
