//! OpenAI-compatible chat and legacy completions: request bodies and chunk interpretation.
//!
//! "OpenAI-compatible" covers many servers that differ in details that change the numbers:
//! where usage appears (final `choices: []` chunk, finish chunk, cumulative on every chunk,
//! zero first), where reasoning goes (`reasoning_content`, `reasoning`), and how errors arrive
//! in-band (error object, error string, flat `object: "error"`, `finish_reason: "error"`,
//! `event: error`). The common per-token chunk is read by a one-pass scanner (`openai::scan`);
//! every other chunk with typed serde structs whose hot fields are checked for non-emptiness
//! without allocating (`lenient`); unknown fields are ignored. Error shapes are read by
//! `error_body`.

use super::calls::{arguments_text, CallLog};
use super::chunk::{ChunkInfo, InBandError, MalformedEvent};
use super::error_body::{error_from_event_data, malformed, Envelope, ErrorField};
use super::lenient::NonEmpty;
use super::sse::{decode, SseEvent};
use crate::scenario::tools::ToolChoice;
use crate::scenario::RequestSpec;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::fmt;

/// Body for `POST {base_url}/chat/completions`.
pub fn chat_body(model: &str, req: &RequestSpec) -> Value {
    let mut messages = Vec::with_capacity(2);
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    if req.messages.is_empty() {
        messages.push(json!({"role": "user", "content": req.prompt}));
    } else {
        messages.extend(req.messages.iter().cloned());
    }
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("messages".into(), Value::Array(messages));
    openai_common(&mut body, req, req.max_tokens_field.key());
    if let Some(tools) = &req.tools {
        // OpenAI's shape is the file's: sent as it is.
        let list = tools.list.iter().map(|t| t.raw.clone()).collect();
        body.insert("tools".into(), Value::Array(list));
    }
    if let Some(choice) = &req.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice, true));
    }
    cache_key(&mut body, req);
    merge_extra(body, req)
}

/// OpenAI's `tool_choice`: `auto`, `none`, `required`, or one function, named under `function`
/// in chat (`nested`) and at the top in the Responses API.
pub(crate) fn tool_choice(choice: &ToolChoice, nested: bool) -> Value {
    match choice {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Function(name) if nested => {
            json!({"type": "function", "function": {"name": name}})
        }
        ToolChoice::Function(name) => json!({"type": "function", "name": name}),
    }
}

/// `request.prompt_cache_key`: OpenAI routes requests with the same key and prefix to the same
/// cache (chat and Responses).
pub(crate) fn cache_key(body: &mut Map<String, Value>, req: &RequestSpec) {
    if let Some(key) = &req.prompt_cache_key {
        body.insert("prompt_cache_key".into(), key.clone().into());
    }
}

/// Body for `POST {base_url}/completions` (system text, if any, is prepended to the prompt).
pub fn completions_body(model: &str, req: &RequestSpec) -> Value {
    let prompt = match &req.system {
        Some(system) => format!("{system}\n\n{}", req.prompt),
        None => req.prompt.clone(),
    };
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("prompt".into(), prompt.into());
    openai_common(&mut body, req, "max_tokens");
    merge_extra(body, req)
}

/// The fields both OpenAI dialects send; the limit under `limit_key`, and none when the
/// scenario asks for no limit (`max_tokens: null`).
fn openai_common(body: &mut Map<String, Value>, req: &RequestSpec, limit_key: &str) {
    if let Some(n) = req.max_tokens {
        body.insert(limit_key.into(), n.into());
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), t.into());
    }
    body.insert("stream".into(), req.stream.into());
    // Usage is asked for only in a stream: a whole answer always carries it.
    if req.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
}

/// `extra_body` keys go on top and may override anything.
pub(crate) fn merge_extra(mut body: Map<String, Value>, req: &RequestSpec) -> Value {
    for (k, v) in &req.extra_body {
        body.insert(k.clone(), v.clone());
    }
    Value::Object(body)
}

/// Meaning of one `/chat/completions` stream event, read on its own.
pub fn interpret_chat(ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
    ChunkReader::chat().read(ev)
}

/// Meaning of one legacy `/completions` stream event, read on its own.
pub fn interpret_completions(ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
    ChunkReader::completions().read(ev)
}

#[derive(Clone, Copy, Debug)]
enum Dialect {
    Chat,
    Completions,
}

/// The events of one stream, read in order: the same meanings as [`interpret_chat`] or
/// [`interpret_completions`] event by event, with the common chunk compared against the stream's
/// last one instead of parsed again (`scan::Template`).
pub struct ChunkReader {
    dialect: Dialect,
    template: scan::Template,
}

impl ChunkReader {
    /// A reader for one `/chat/completions` stream.
    pub fn chat() -> Self {
        Self::new(Dialect::Chat)
    }

    /// A reader for one legacy `/completions` stream.
    pub fn completions() -> Self {
        Self::new(Dialect::Completions)
    }

    fn new(dialect: Dialect) -> Self {
        ChunkReader {
            dialect,
            template: scan::Template::default(),
        }
    }

    /// Meaning of a whole answer of this reader's dialect ([`whole_chat`], [`whole_completions`]).
    pub fn whole(&self, body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
        whole(body, self.dialect)
    }

    /// Meaning of the stream's next event.
    pub fn read(&mut self, ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
        interpret(&ev.event, &ev.data, self.dialect, &mut self.template)
    }

    /// The same meaning, from the event's name and its data as received (`sse::EventRef`, not
    /// yet checked for UTF-8). A chunk that fits the stream's template is answered from its
    /// bytes with only the strings that differ checked (the template's own bytes are valid
    /// UTF-8, and a string boundary is an ASCII quote); anything else is decoded as the
    /// event-stream rules say (invalid UTF-8 replaced) and read like [`ChunkReader::read`].
    pub fn read_raw(&mut self, event: &str, data: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
        if reaches_template(event, data) {
            if let Some(info) = self.template.fit_chunk(data) {
                return Ok(info);
            }
        }
        interpret(event, &decode(data), self.dialect, &mut self.template)
    }
}

/// The event name whose data is an error, whatever it holds.
const ERROR_EVENT: &str = "error";

/// Whether `interpret` hands this event to the template as it is: not an [`ERROR_EVENT`], and data
/// in braces (nothing to trim, neither `[DONE]` nor a keep-alive). `read_raw` answers such an
/// event from the template before decoding it, so every check `interpret` makes before the
/// template must rule out data in braces, or be made here too.
fn reaches_template(event: &str, data: &[u8]) -> bool {
    event != ERROR_EVENT && data.first() == Some(&b'{') && data.last() == Some(&b'}')
}

fn interpret(
    event: &str,
    data: &str,
    dialect: Dialect,
    template: &mut scan::Template,
) -> Result<ChunkInfo, MalformedEvent> {
    // What is checked before the template: see `reaches_template`.
    let data = data.trim();
    if event == ERROR_EVENT {
        return Ok(ChunkInfo {
            error: Some(error_from_event_data(data)),
            ..ChunkInfo::default()
        });
    }
    if data == "[DONE]" {
        return Ok(ChunkInfo {
            done: true,
            ..ChunkInfo::default()
        });
    }
    if data.is_empty() {
        // `data:` with nothing after it: a keep-alive, not a chunk.
        return Ok(ChunkInfo::default());
    }
    match template.read(data, dialect) {
        Some(info) => Ok(info),
        None => read_chunk(data, dialect),
    }
}

/// Meaning of a whole `/chat/completions` answer (`stream: false`: a `chat.completion` object,
/// or an error body): its message's content or reasoning, finish reason and usage, as one
/// final event.
pub fn whole_chat(body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
    whole(body, Dialect::Chat)
}

/// Meaning of a whole legacy `/completions` answer (a `text_completion` object).
pub fn whole_completions(body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
    whole(body, Dialect::Completions)
}

fn whole(body: &[u8], dialect: Dialect) -> Result<ChunkInfo, MalformedEvent> {
    let text = decode(body);
    let mut info = read_chunk(text.trim(), dialect)?;
    info.done = true;
    // A whole answer's arguments arrive at once: no deltas to count as tokens.
    info.tool_args = 0;
    Ok(info)
}

/// Any chunk, read with serde (what `scan` does not answer for).
fn read_chunk(data: &str, dialect: Dialect) -> Result<ChunkInfo, MalformedEvent> {
    let mut chunk = serde_json::from_str::<Envelope<Choices>>(data)
        .map_err(|e| malformed("chunk", data, &e))?;
    let mut info = ChunkInfo::default();
    let mut finished_with_error = false;
    if let Some(c) = chunk.choices.take() {
        match dialect {
            Dialect::Chat => {
                info.content = c.delta_content;
                info.reasoning = c.delta_reasoning;
                info.tool_calls = c.tool_calls;
                info.tool_call_index = c.tool_call_index;
                info.tool_args = c.tool_args;
            }
            Dialect::Completions => info.content = c.text,
        }
        finished_with_error = c.finished_with_error;
        info.finish_reason = c.finish_reason;
        info.error = c.error;
    }
    if let Some(usage) = &chunk.usage {
        info.output_tokens = usage.completion_tokens.0.or(usage.output_tokens.0);
        info.input_tokens = usage.prompt_tokens.0.or(usage.input_tokens.0);
        info.cached_tokens = usage.cached_tokens();
        info.reasoning_tokens = usage.reasoning_tokens();
    }
    if let Some(t) = &chunk.timings {
        let st = t.to_server_timings();
        // llama.cpp reports its prompt cache here, not in usage.
        info.cached_tokens = info.cached_tokens.or(st.cached_tokens.filter(|n| *n > 0));
        info.server = Some(Box::new(st));
    }
    if let Some(err) = chunk.error(false) {
        info.error = Some(err);
    }
    if finished_with_error && info.error.is_none() {
        info.error = Some(InBandError {
            error_type: None,
            message: "stream ended with finish_reason \"error\"".into(),
            status: None,
            class: None,
        });
    }
    Ok(info)
}

/// A chunk's `choices` folded into what timing needs while they are read (no list is built):
/// any generated delta (content or tool-call arguments), reasoning or legacy `text`, the last finish
/// reason, whether any choice finished with `"error"`, and the first choice-level error.
#[derive(Default)]
struct Choices {
    delta_content: bool,
    delta_reasoning: bool,
    text: bool,
    finish_reason: Option<String>,
    finished_with_error: bool,
    error: Option<InBandError>,
    /// Tool calls begun (an entry naming its id or function), and argument deltas.
    tool_calls: u32,
    /// The highest `index` of the calls begun, when every one carried an index.
    tool_call_index: Option<u32>,
    /// A call begun without an `index` (a whole answer's `message.tool_calls`).
    unindexed: bool,
    tool_args: u32,
}

impl Choices {
    fn add(&mut self, choice: Choice) {
        // A stream's `delta`, or a whole answer's `message` (`stream: false`).
        for d in choice.delta.iter().chain(choice.message.iter()) {
            // A tool call's generated text is its arguments: the opening delta that names the
            // function with `arguments: ""` carries none yet (docs/metrics.md, TTFT).
            for t in d.tool_calls.iter().flatten() {
                let (named, args) = t
                    .function
                    .as_ref()
                    .map_or((false, false), |f| (f.name.0, f.arguments.0));
                let begun = t.id.0 || named;
                self.tool_calls += u32::from(begun);
                self.tool_args += u32::from(args);
                if begun {
                    match t.index {
                        Some(i) if !self.unindexed => {
                            self.tool_call_index =
                                Some(self.tool_call_index.map_or(i, |m| m.max(i)));
                        }
                        _ => (self.unindexed, self.tool_call_index) = (true, None),
                    }
                }
            }
            self.delta_content |= d.content.0 || self.tool_args > 0;
            self.delta_reasoning |= d.reasoning_content.0 || d.reasoning.0;
        }
        self.text |= choice.text.0;
        if let Some(reason) = choice.finish_reason {
            self.finished_with_error |= reason == "error";
            self.finish_reason = Some(reason);
        }
        if self.error.is_none() {
            self.error = choice.error.as_ref().and_then(|e| e.to_in_band(None, None));
        }
    }
}

impl<'de> Deserialize<'de> for Choices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Choices;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Choices, A::Error> {
                let mut all = Choices::default();
                while let Some(choice) = seq.next_element::<Choice>()? {
                    all.add(choice);
                }
                Ok(all)
            }
        }
        d.deserialize_seq(V)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Choice {
    delta: Option<Delta>,
    message: Option<Delta>,
    text: NonEmpty,
    finish_reason: Option<String>,
    error: Option<ErrorField>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Delta {
    content: NonEmpty,
    reasoning_content: NonEmpty,
    reasoning: NonEmpty,
    tool_calls: Option<Vec<ToolCall>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolCall {
    /// The call's number in a stream (every delta of a call carries it).
    index: Option<u32>,
    /// Sent with the call's first delta only (`call_…`; llama-cpp-python repeats it).
    id: NonEmpty,
    function: Option<Function>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Function {
    name: NonEmpty,
    arguments: NonEmpty,
}

/// Keeps the tool calls of one chat stream event (`delta.tool_calls[]`, by `index`) or of a
/// whole answer (`message.tool_calls[]`) in `log` (`client::calls`): only for the requests that
/// keep calls, and only for the events that carry one.
pub fn keep_chat_calls(_event: &str, data: &[u8], log: &mut CallLog) {
    let Ok(chunk) = serde_json::from_slice::<KeptChunk>(data) else {
        return;
    };
    for choice in chunk.choices.iter().flatten() {
        for d in choice.delta.iter().chain(choice.message.iter()) {
            for t in d.tool_calls.iter().flatten() {
                let key = t.index.map(u64::from);
                let f = t.function.as_ref();
                log.name(key, t.id.as_deref(), f.and_then(|f| f.name.as_deref()));
                if let Some(args) = f.and_then(|f| f.arguments.as_ref()) {
                    log.append(key, &arguments_text(args));
                }
            }
        }
    }
}

/// [`keep_chat_calls`] for a whole answer.
pub fn keep_whole_chat_calls(body: &[u8], log: &mut CallLog) {
    keep_chat_calls("", body, log);
}

/// What [`keep_chat_calls`] reads of a chunk: its calls' numbers, ids, names and arguments.
#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptChunk {
    choices: Option<Vec<KeptChoice>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptChoice {
    delta: Option<KeptDelta>,
    message: Option<KeptDelta>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptDelta {
    tool_calls: Option<Vec<KeptCall>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptCall {
    index: Option<u32>,
    id: Option<String>,
    function: Option<KeptFunction>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptFunction {
    name: Option<String>,
    arguments: Option<Value>,
}

mod scan;

#[cfg(test)]
mod tests;
