//! Production traces for `load.mode: replay`: when each request arrived and what it asked for,
//! read once at load time from ladder's own JSONL, the Mooncake JSONL format or BurstGPT's CSV
//! (told apart by content). A trace is hostile input like any file a scenario names: a regular
//! file under the prompt cap (`bounded`), and every problem names the trace's line and the fix.
//! The fingerprint records a trace by file name, content hash and request count, never its text.

use super::normalize::fingerprint_of_bytes;
use super::prompts::{
    at, json_object_lines, parse_jsonl, read_named_file, PromptContent, PromptFileError,
};
use super::trace_otlp::{parse_otlp_trace, Call, SpanFacts};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Tokens per Mooncake `hash_ids` block: requests sharing their first k ids share a prefix of
/// k × 512 tokens.
pub const MOONCAKE_BLOCK_TOKENS: u32 = 512;
/// Most tokens one trace request may ask for, in or out (the largest context windows).
pub const MAX_TRACE_TOKENS: u64 = 2_000_000;
/// Longest span a trace may cover: a replay step at 1× lasts that long.
pub const MAX_TRACE_SPAN_MS: f64 = 7.0 * 86_400_000.0;

/// Which format a trace file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// ladder's JSONL: `timestamp`, `input_tokens` or `prompt`/`messages`, `output_tokens`,
    /// optional `session_id`.
    Ladder,
    /// Mooncake's JSONL: `timestamp` (ms), `input_length`, `output_length`, `hash_ids`.
    Mooncake,
    /// BurstGPT's CSV: `Timestamp` (s), `Request tokens`, `Response tokens`.
    BurstGpt,
    /// OpenTelemetry GenAI spans as OTLP JSON (`trace_otlp`): an agent's LLM calls, a trace
    /// per session.
    Otlp,
}

impl TraceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceFormat::Ladder => "ladder",
            TraceFormat::Mooncake => "mooncake",
            TraceFormat::BurstGpt => "burstgpt",
            TraceFormat::Otlp => "otlp",
        }
    }
}

/// What one trace request sends.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceInput {
    /// A prompt of `tokens` synthetic tokens; its first `blocks.len()` blocks of
    /// [`MOONCAKE_BLOCK_TOKENS`] are the text of those hash ids (shared ids, shared text).
    Tokens { tokens: u32, blocks: Vec<u64> },
    /// The prompt or messages written in the trace.
    Prompt(PromptContent),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TraceRequest {
    /// Arrival time, milliseconds after the trace's first request.
    pub at_ms: f64,
    pub input: TraceInput,
    /// The output size to ask for (`max_tokens`); `None`: `request.max_tokens`.
    pub output_tokens: Option<u32>,
    /// Requests of one session continue one conversation: their synthetic prompts share a
    /// prefix (the session's text), as a multi-turn chat's requests do.
    pub session: Option<String>,
    /// In a session: which one, this request's turn and the session's turns.
    pub turn: Option<Turn>,
    /// An agent trace's later turn: sent this many milliseconds (÷ the speed) after the
    /// session's previous turn ended (its recorded start − the previous turn's recorded end),
    /// not at `at_ms`.
    pub after_previous_ms: Option<f64>,
    /// The session's next turn (its index in [`Trace::requests`]) when that one waits for this
    /// one to end.
    pub next: Option<usize>,
    /// Input tokens the recording says were read from a cache (OTLP's cache-read attributes).
    pub cached_tokens: Option<u32>,
}

/// A request's place in its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// The session's number in the trace, from 0 in order of their first requests.
    pub session: u32,
    /// The request's turn, from 1.
    pub turn: u32,
    /// The session's turns.
    pub of: u32,
}

impl TraceRequest {
    /// A request sent at its time, `input` and the output size to ask for.
    pub fn new(input: TraceInput, output_tokens: Option<u32>, session: Option<String>) -> Self {
        TraceRequest {
            at_ms: 0.0,
            input,
            output_tokens,
            session,
            turn: None,
            after_previous_ms: None,
            next: None,
            cached_tokens: None,
        }
    }
}

/// A trace, requests in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub file: PathBuf,
    /// First 16 hex digits of the SHA-256 of the file's bytes.
    pub sha256: String,
    pub format: TraceFormat,
    pub requests: Vec<TraceRequest>,
    /// An OTLP trace's tool spans, overlaps and models.
    pub spans: Option<SpanFacts>,
}

impl Trace {
    /// From the first arrival to the last, in seconds, of the first `n` requests.
    pub fn span_s(&self, n: usize) -> f64 {
        let n = n.min(self.requests.len());
        if n == 0 {
            return 0.0;
        }
        self.requests[n - 1].at_ms / 1000.0
    }

    /// The trace's own arrival rate over its first `n` requests (requests / span, counting the
    /// first request's gap as one mean gap), in requests/s; `None` for a trace of one instant.
    pub fn rate(&self, n: usize) -> Option<f64> {
        let n = n.min(self.requests.len());
        let span = self.span_s(n);
        (n >= 2 && span > 0.0).then(|| (n - 1) as f64 / span)
    }

    /// Send times (seconds after the step's start) of the first `n` requests at `speed`× the
    /// trace's rate.
    pub fn times_s(&self, speed: f64, n: usize) -> impl Iterator<Item = f64> + '_ {
        self.requests
            .iter()
            .take(n)
            .map(move |r| r.at_ms / 1000.0 / speed)
    }

    /// How many of the requests arrive within `d` of replayed time at `speed`.
    pub fn within(&self, speed: f64, d: std::time::Duration) -> usize {
        let limit_ms = d.as_secs_f64() * 1000.0 * speed;
        self.requests
            .iter()
            .take_while(|r| r.at_ms < limit_ms)
            .count()
    }

    /// The sessions among the first `n` requests in words, for `run --dry-run` (`None` without
    /// sessions): how many, their turns, and for an agent trace its tool spans, the recorded
    /// cache hit share and models, and how later turns are timed.
    pub fn sessions_note(&self, n: usize) -> Option<String> {
        let mut turns: std::collections::HashMap<&str, u32> = Default::default();
        let (mut input, mut cached) = (0u64, 0u64);
        for r in self.requests.iter().take(n) {
            let Some(s) = &r.session else { continue };
            *turns.entry(s).or_default() += 1;
            if let (TraceInput::Tokens { tokens, .. }, Some(c)) = (&r.input, r.cached_tokens) {
                input += u64::from(*tokens);
                cached += u64::from(c);
            }
        }
        let (lo, hi) = (turns.values().min()?, turns.values().max()?);
        let calls: u32 = turns.values().sum();
        let range = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        let mut out = format!(
            "{} sessions of {range} turns ({calls} requests)",
            turns.len()
        );
        let Some(f) = &self.spans else {
            out.push_str("; each turn goes at its timestamp / the speed");
            return Some(out);
        };
        out.push_str(&format!(", {} tool spans (not sent)", f.tool_spans));
        if input > 0 {
            let share = 100.0 * cached as f64 / input as f64;
            out.push_str(&format!(", recorded cache hit share {share:.0}%"));
        }
        if !f.models.is_empty() {
            out.push_str(&format!(", recorded model {}", f.models.join(", ")));
        }
        if f.overlapped > 0 {
            out.push_str(&format!(
                ", {} turns began before the previous one ended (replayed after it)",
                f.overlapped
            ));
        }
        out.push_str(
            "; a session starts at its first span's time / the speed, each later turn once the \
             previous one has ended plus the recorded gap / the speed",
        );
        Some(out)
    }

    /// Mean prompt and output tokens of the first `n` requests (`None` where the trace gives
    /// text, not sizes: about four characters a token, as the simulator counts).
    pub fn mean_tokens(&self, n: usize, default_output: u32) -> (f64, f64) {
        let n = n.min(self.requests.len()).max(1);
        let (mut input, mut output) = (0.0, 0.0);
        for r in self.requests.iter().take(n) {
            input += match &r.input {
                TraceInput::Tokens { tokens, .. } => f64::from(*tokens),
                TraceInput::Prompt(PromptContent::Text(t)) => (t.len() as f64 / 4.0).ceil(),
                TraceInput::Prompt(PromptContent::Messages(m)) => {
                    (Value::Array(m.clone()).to_string().len() as f64 / 4.0).ceil()
                }
            };
            output += f64::from(r.output_tokens.unwrap_or(default_output));
        }
        (input / n as f64, output / n as f64)
    }
}

fn whole(line: usize, key: &str, v: &Value) -> Result<u32, PromptFileError> {
    v.as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        })
        .filter(|n| *n <= MAX_TRACE_TOKENS)
        .map(|n| n as u32)
        .ok_or_else(|| {
            at(
                line,
                format!("`{key}` {v} is not a whole number of tokens from 0 to {MAX_TRACE_TOKENS}"),
            )
        })
}

/// Reads a trace: JSONL (ladder's or Mooncake's, by their keys) when the first non-blank
/// character is `{`, else BurstGPT's CSV. Requests are put in arrival order (a stable sort), and
/// times count from the first arrival.
pub(super) fn read_trace(path: &Path, cap: u64, raise: &str) -> Result<Trace, PromptFileError> {
    let bytes = read_named_file(path, cap, raise)?;
    let sha256 = fingerprint_of_bytes(&bytes);
    let text = super::bounded::utf8(bytes).map_err(|(line, message)| at(line, message))?;
    let mut spans = None;
    let (format, mut requests) = if text.trim().is_empty() {
        (TraceFormat::Ladder, Vec::new())
    } else if crate::util::otlp_json::looks_like_otlp(&text) {
        let (calls, facts) = parse_otlp_trace(&text)?;
        spans = Some(facts);
        (TraceFormat::Otlp, otlp_requests(calls)?)
    } else if text.trim_start().starts_with('{') {
        parse_jsonl_trace(&text)?
    } else {
        (TraceFormat::BurstGpt, parse_burstgpt(&text)?)
    };
    if requests.is_empty() {
        return Err(PromptFileError {
            line: None,
            message: "holds no requests; add one per line, e.g. {\"timestamp\": 0, \
                      \"input_tokens\": 512, \"output_tokens\": 128}"
                .into(),
        });
    }
    requests.sort_by(|a, b| a.0.total_cmp(&b.0));
    let t0 = requests[0].0;
    let last = requests[requests.len() - 1].clone();
    if last.0 - t0 > MAX_TRACE_SPAN_MS {
        return Err(at(
            last.1,
            format!(
                "this request arrives {:.1} days after the first; a trace may span at most 7 \
                 days (a replay step lasts as long as the trace): cut the trace",
                (last.0 - t0) / 86_400_000.0
            ),
        ));
    }
    let mut requests: Vec<TraceRequest> = requests
        .into_iter()
        .map(|(t, _, mut r)| {
            r.at_ms = t - t0;
            r
        })
        .collect();
    number_turns(&mut requests);
    Ok(Trace {
        file: path.to_path_buf(),
        sha256,
        format,
        requests,
        spans,
    })
}

/// An agent trace's LLM calls as requests: synthetic text of the session of their input size,
/// the output size asked for, the gap after the previous turn.
fn otlp_requests(calls: Vec<Call>) -> Result<Vec<Timed>, PromptFileError> {
    let size = |line: usize, (key, v): (&str, f64)| whole(line, key, &Value::from(v));
    // From the first start in whole nanoseconds: epoch milliseconds as f64 round to 0.25 µs.
    let t0 = calls.iter().map(|c| c.start).min().unwrap_or(0);
    calls
        .into_iter()
        .map(|c| {
            let tokens = size(c.line, c.input)?;
            let output = c.output.map(|o| size(c.line, o)).transpose()?;
            let mut r = TraceRequest::new(
                TraceInput::Tokens {
                    tokens,
                    blocks: Vec::new(),
                },
                output.map(|o| o.max(1)),
                Some(c.session),
            );
            r.cached_tokens = c.cached.map(|k| size(c.line, k)).transpose()?;
            r.after_previous_ms = c.after_previous_ms;
            Ok(((c.start - t0) as f64 / 1e6, c.line, r))
        })
        .collect()
}

/// Numbers each session's turns in arrival order, and links a turn that waits for the one
/// before it (`after_previous_ms`) from that one (`next`).
fn number_turns(requests: &mut [TraceRequest]) {
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    let mut sessions: Vec<Vec<usize>> = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        if let Some(s) = &r.session {
            let k = *index.entry(s.clone()).or_insert_with(|| {
                sessions.push(Vec::new());
                sessions.len() - 1
            });
            sessions[k].push(i);
        }
    }
    for (session, turns) in sessions.iter().enumerate() {
        let of = turns.len() as u32;
        for (k, &i) in turns.iter().enumerate() {
            requests[i].turn = Some(Turn {
                session: session as u32,
                turn: k as u32 + 1,
                of,
            });
            if k > 0 && requests[i].after_previous_ms.is_some() {
                requests[turns[k - 1]].next = Some(i);
            }
        }
    }
}

/// A request with its absolute time (ms) and line, before times are made relative.
type Timed = (f64, usize, TraceRequest);

fn timestamp_ms(line: usize, v: Option<&Value>, scale: f64) -> Result<f64, PromptFileError> {
    let fix = "write milliseconds from the start (e.g. 1500) or an RFC 3339 time \
               (e.g. \"2026-03-01T12:00:01.5Z\")";
    let t = match v {
        None | Some(Value::Null) => {
            return Err(at(line, format!("has no `timestamp`; {fix}")));
        }
        Some(Value::Number(n)) => n.as_f64().map(|f| f * scale),
        Some(Value::String(s)) => crate::util::timestamp::rfc3339_ms(s),
        Some(_) => None,
    };
    t.filter(|t| t.is_finite() && *t >= 0.0).ok_or_else(|| {
        at(
            line,
            format!("`timestamp` {} is not a time; {fix}", v.unwrap()),
        )
    })
}

/// One JSON object per non-blank line. Mooncake rows have `input_length` (and `hash_ids`);
/// ladder rows have `input_tokens`, or `prompt`/`messages` (checked as in prompt sets).
fn parse_jsonl_trace(text: &str) -> Result<(TraceFormat, Vec<Timed>), PromptFileError> {
    let mut out = Vec::new();
    let mut format = None;
    for row in json_object_lines(text, "write one request a line") {
        let (n, line, o) = row?;
        let mooncake = o.contains_key("input_length") || o.contains_key("hash_ids");
        let this = if mooncake {
            TraceFormat::Mooncake
        } else {
            TraceFormat::Ladder
        };
        if *format.get_or_insert(this) != this {
            return Err(at(
                n,
                "mixes Mooncake keys (input_length, hash_ids) with ladder's (input_tokens, \
                 prompt); write one format per file",
            ));
        }
        let at_ms = timestamp_ms(n, o.get("timestamp"), 1.0)?;
        let req = if mooncake {
            mooncake_row(n, &o)?
        } else {
            ladder_row(n, line, &o)?
        };
        out.push((at_ms, n, req));
    }
    Ok((format.unwrap_or(TraceFormat::Ladder), out))
}

fn mooncake_row(
    n: usize,
    o: &serde_json::Map<String, Value>,
) -> Result<TraceRequest, PromptFileError> {
    let tokens = match o.get("input_length") {
        Some(v) => whole(n, "input_length", v)?,
        None => {
            return Err(at(
                n,
                "has no `input_length`; add the prompt size in tokens",
            ))
        }
    };
    let output = o
        .get("output_length")
        .map(|v| whole(n, "output_length", v))
        .transpose()?;
    let blocks: Vec<u64> = match o.get("hash_ids") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(ids)) => ids
            .iter()
            .map(|id| id.as_u64())
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| at(n, "`hash_ids` must be a list of whole numbers"))?,
        Some(_) => return Err(at(n, "`hash_ids` must be a list of whole numbers")),
    };
    // Ids beyond the prompt's blocks describe nothing: keep the ones the prompt covers.
    let covered = tokens.div_ceil(MOONCAKE_BLOCK_TOKENS) as usize;
    Ok(TraceRequest::new(
        TraceInput::Tokens {
            tokens,
            blocks: blocks.into_iter().take(covered).collect(),
        },
        output.map(|o| o.max(1)),
        None,
    ))
}

fn ladder_row(
    n: usize,
    line: &str,
    o: &serde_json::Map<String, Value>,
) -> Result<TraceRequest, PromptFileError> {
    let output = o
        .get("output_tokens")
        .map(|v| whole(n, "output_tokens", v))
        .transpose()?;
    let input = match o.get("input_tokens") {
        Some(v) if !o.contains_key("prompt") && !o.contains_key("messages") => TraceInput::Tokens {
            tokens: whole(n, "input_tokens", v)?,
            blocks: Vec::new(),
        },
        Some(_) => {
            return Err(at(
                n,
                "has `input_tokens` and a prompt; keep one (a size or the text)",
            ))
        }
        None if o.contains_key("prompt") || o.contains_key("messages") => {
            // The same rules as a prompt set's line.
            let item = parse_jsonl(line).map_err(|e| at(n, e.message))?;
            TraceInput::Prompt(item[0].content.clone())
        }
        None => {
            return Err(at(
                n,
                "has no `input_tokens`, `prompt` or `messages`; add the prompt size, e.g. \
                 \"input_tokens\": 512",
            ))
        }
    };
    let session = match o.get("session_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(x)) => Some(x.to_string()),
        Some(_) => return Err(at(n, "`session_id` must be a string or a number")),
    };
    Ok(TraceRequest::new(input, output.map(|o| o.max(1)), session))
}

/// BurstGPT's CSV: a header naming `Timestamp` (seconds), `Request tokens` and `Response
/// tokens` (other columns, e.g. `Model` and `Log Type`, are ignored). A failed request's 0
/// response tokens are asked as 1, so its arrival is kept.
fn parse_burstgpt(text: &str) -> Result<Vec<Timed>, PromptFileError> {
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = rd
        .headers()
        .map_err(|e| at(1, format!("unreadable CSV header ({e})")))?
        .clone();
    let col = |names: &[&str]| {
        headers
            .iter()
            .position(|h| names.iter().any(|n| h.trim().eq_ignore_ascii_case(n)))
    };
    let (Some(t), Some(req), Some(resp)) = (
        col(&["Timestamp"]),
        col(&["Request tokens", "input_tokens"]),
        col(&["Response tokens", "output_tokens"]),
    ) else {
        return Err(at(
            1,
            "not a trace: JSONL starts with `{`, and a CSV trace needs BurstGPT's header \
             (Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type)",
        ));
    };
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            at(line, format!("unreadable CSV ({e})"))
        })?;
        let n = rec.position().map_or(0, |p| p.line() as usize);
        let cell = |c: usize| rec.get(c).unwrap_or_default().trim();
        let num = |c: usize, key: &str| -> Result<Value, PromptFileError> {
            cell(c)
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| at(n, format!("`{key}` `{}` is not a number", cell(c))))
        };
        let at_ms = timestamp_ms(n, Some(&num(t, "Timestamp")?), 1000.0)?;
        let tokens = whole(n, "Request tokens", &num(req, "Request tokens")?)?;
        let output = whole(n, "Response tokens", &num(resp, "Response tokens")?)?;
        out.push((
            at_ms,
            n,
            TraceRequest::new(
                TraceInput::Tokens {
                    tokens,
                    blocks: Vec::new(),
                },
                Some(output.max(1)),
                None,
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
