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
