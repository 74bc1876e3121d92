//! OpenAI-compatible chat and legacy completions: request bodies and chunk interpretation.
//!
//! "OpenAI-compatible" covers many servers that differ in details that change the numbers:
//! where usage appears (final `choices: []` chunk, finish chunk, cumulative on every chunk,
//! zero first), where reasoning goes (`reasoning_content`, `reasoning`), and how errors arrive
//! in-band (error object, error string, flat `object: "error"`, `finish_reason: "error"`,
//! `event: error`). Chunks are read with typed serde structs whose hot fields are checked for
//! non-emptiness without allocating; unknown fields are ignored. The lenient field readers and
//! the error-shape logic here are shared with `anthropic.rs`.

use super::chunk::{ChunkInfo, InBandError, MalformedEvent};
use super::sse::SseEvent;
use crate::scenario::RequestSpec;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::fmt;
use std::marker::PhantomData;

/// Longest provider error message kept, in characters.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 200;

/// Body for `POST {base_url}/chat/completions`.
pub fn chat_body(model: &str, req: &RequestSpec) -> Value {
    let mut messages = Vec::with_capacity(2);
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": req.prompt}));
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("messages".into(), Value::Array(messages));
    openai_common(&mut body, req);
    merge_extra(body, req)
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
    openai_common(&mut body, req);
    merge_extra(body, req)
}

fn openai_common(body: &mut Map<String, Value>, req: &RequestSpec) {
    body.insert("max_tokens".into(), req.max_tokens.into());
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), t.into());
    }
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
}

/// `extra_body` keys go on top and may override anything.
pub(crate) fn merge_extra(mut body: Map<String, Value>, req: &RequestSpec) -> Value {
    for (k, v) in &req.extra_body {
        body.insert(k.clone(), v.clone());
    }
    Value::Object(body)
}

/// Meaning of one `/chat/completions` stream event.
pub fn interpret_chat(ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
    interpret(ev, Dialect::Chat)
}

/// Meaning of one legacy `/completions` stream event.
pub fn interpret_completions(ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
    interpret(ev, Dialect::Completions)
}

/// The error carried by the body of a non-2xx response, in any of the known shapes (OpenAI,
/// Anthropic, TGI, older vLLM, OpenRouter, Gemini's list wrapper, FastAPI `detail`). `None`
/// when the body is not JSON or carries no recognizable error.
pub fn parse_error_body(body: &[u8]) -> Option<InBandError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    match serde_json::from_slice::<OneOrFirst>(body).ok()? {
        OneOrFirst(Some(payload)) => payload.error(true),
        OneOrFirst(None) => None,
    }
}

#[derive(Clone, Copy)]
enum Dialect {
    Chat,
    Completions,
}

fn interpret(ev: &SseEvent, dialect: Dialect) -> Result<ChunkInfo, MalformedEvent> {
    let data = ev.data.trim();
    if ev.event == "error" {
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
    let mut chunk: Payload =
        serde_json::from_str(data).map_err(|e| malformed("chunk", data, &e))?;
    let mut info = ChunkInfo::default();
    let mut finished_with_error = false;
    if let Some(c) = chunk.choices.take() {
        match dialect {
            Dialect::Chat => {
                info.content = c.delta_content;
                info.reasoning = c.delta_reasoning;
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
    }
    if let Some(err) = chunk.error(false) {
        info.error = Some(err);
    }
    if finished_with_error && info.error.is_none() {
        info.error = Some(InBandError {
            error_type: None,
            message: "stream ended with finish_reason \"error\"".into(),
            status: None,
        });
    }
    Ok(info)
}

/// The error of an `event: error` SSE event: JSON in any known shape, or plain text.
pub(crate) fn error_from_event_data(data: &str) -> InBandError {
    let parsed = serde_json::from_str::<OneOrFirst>(data)
        .ok()
        .and_then(|p| p.0?.error(true));
    parsed.unwrap_or_else(|| InBandError {
        error_type: None,
        message: if data.is_empty() {
            "error event without data".into()
        } else {
            truncate(data)
        },
        status: None,
    })
}

pub(crate) fn malformed(what: &str, data: &str, err: &serde_json::Error) -> MalformedEvent {
    let snippet: String = data.chars().take(80).collect();
    let more = if snippet.len() < data.len() {
        "…"
    } else {
        ""
    };
    MalformedEvent(format!(
        "stream {what} is not the expected JSON ({err}): `{snippet}{more}`"
    ))
}

/// `message` cut to [`MAX_ERROR_MESSAGE_CHARS`] characters.
pub(crate) fn truncate(message: &str) -> String {
    let message = message.trim();
    if message.chars().nth(MAX_ERROR_MESSAGE_CHARS).is_none() {
        return message.to_owned();
    }
    let mut cut: String = message.chars().take(MAX_ERROR_MESSAGE_CHARS - 1).collect();
    cut.push('…');
    cut
}

// ---- typed chunk ----

/// A chat/completions chunk or an error body. Error fields are rare and cost nothing when absent.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Payload {
    choices: Option<Choices>,
    usage: Option<Usage>,
    error: Option<ErrorField>,
    /// TGI: `{"error": "...", "error_type": "validation"}`.
    error_type: Option<Scalar>,
    http_status_code: Option<Scalar>,
    /// Older vLLM flat error: `{"object": "error", "message", "type", "code"}`. Every chunk has
    /// an `object`, so it is compared in place, not copied.
    object: ErrorTag,
    message: Option<Scalar>,
    #[serde(rename = "type")]
    ty: Option<Scalar>,
    code: Option<Scalar>,
    /// FastAPI (`{"detail": "Not Found"}`).
    detail: Option<Scalar>,
}

impl Payload {
    /// `lenient`: also accept a bare top-level `message`/`detail` (error bodies, not chunks).
    fn error(&self, lenient: bool) -> Option<InBandError> {
        let status = self.http_status_code.as_ref().and_then(Scalar::status);
        if let Some(field) = &self.error {
            return field.to_in_band(self.error_type.as_ref(), status);
        }
        let flat = self.object.0;
        if flat || lenient {
            let obj = ErrorObj {
                message: self.message.clone().or_else(|| self.detail.clone()),
                ty: self.ty.clone(),
                code: self.code.clone(),
                status: self.http_status_code.clone(),
            };
            return obj.to_in_band(self.error_type.as_ref(), status);
        }
        None
    }
}

/// A JSON object, or the first element of a list of them (Gemini wraps errors in a list).
struct OneOrFirst(Option<Payload>);

impl<'de> Deserialize<'de> for OneOrFirst {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrFirst;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object or a list of objects")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OneOrFirst, A::Error> {
                Payload::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|p| OneOrFirst(Some(p)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrFirst, A::Error> {
                let first = seq.next_element::<Payload>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(OneOrFirst(first))
            }
        }
        d.deserialize_any(V)
    }
}

/// A chunk's `choices` folded into what timing needs while they are read (no list is built):
/// any generated delta (content or tool call), reasoning or legacy `text`, the last finish
/// reason, whether any choice finished with `"error"`, and the first choice-level error.
#[derive(Default)]
struct Choices {
    delta_content: bool,
    delta_reasoning: bool,
    text: bool,
    finish_reason: Option<String>,
    finished_with_error: bool,
    error: Option<InBandError>,
}

impl Choices {
    fn add(&mut self, choice: Choice) {
        if let Some(d) = &choice.delta {
            self.delta_content |= d.content.0
                || d.tool_calls.iter().flatten().any(|t| {
                    t.function
                        .as_ref()
                        .is_some_and(|f| f.name.0 || f.arguments.0)
                });
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

/// Whether a field is the string `"error"`, compared without copying; any other value is not.
#[derive(Default, Clone, Copy)]
struct ErrorTag(bool);

impl<'de> Deserialize<'de> for ErrorTag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ErrorTag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ErrorTag, E> {
                Ok(ErrorTag(v == "error"))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ErrorTag, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ErrorTag(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorTag, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ErrorTag(false))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Choice {
    delta: Option<Delta>,
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
    function: Option<Function>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Function {
    name: NonEmpty,
    arguments: NonEmpty,
}

/// Token usage in either naming (OpenAI `prompt/completion_tokens`, Anthropic `input/output`).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Usage {
    pub prompt_tokens: Count,
    pub completion_tokens: Count,
    pub input_tokens: Count,
    pub output_tokens: Count,
}

// ---- errors ----

/// `error` as an object (`{message, type, code}`) or a plain string (TGI, Ollama).
pub(crate) type ErrorField = ObjOrText<ErrorObj>;

/// A field that is normally an object `T` but may be a plain string (or something else).
pub(crate) enum ObjOrText<T> {
    Obj(T),
    Text(String),
    Other,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct ErrorObj {
    message: Option<Scalar>,
    #[serde(rename = "type")]
    ty: Option<Scalar>,
    code: Option<Scalar>,
    /// Gemini: `"status": "RESOURCE_EXHAUSTED"`; some gateways: a number.
    status: Option<Scalar>,
}

fn text(s: &Option<Scalar>) -> Option<&str> {
    s.as_ref().and_then(Scalar::text).filter(|t| !t.is_empty())
}

fn status_of(s: &Option<Scalar>) -> Option<u16> {
    s.as_ref().and_then(Scalar::status)
}

impl ErrorObj {
    fn to_in_band(
        &self,
        outer_type: Option<&Scalar>,
        outer_status: Option<u16>,
    ) -> Option<InBandError> {
        // A code that is not an HTTP status names the error (`rate_limit_exceeded`, `1301`).
        let code_name = match (&self.code, status_of(&self.code)) {
            (Some(Scalar::Text(t)), None) if !t.is_empty() => Some(t.clone()),
            (Some(Scalar::Int(n)), None) => Some(n.to_string()),
            _ => None,
        };
        let status_text = text(&self.status).filter(|c| c.parse::<u16>().is_err());
        let error_type = code_name
            .as_deref()
            .or(text(&self.ty))
            .or(outer_type.and_then(Scalar::text).filter(|t| !t.is_empty()))
            .or(status_text)
            .map(str::to_owned);
        let status = status_of(&self.code)
            .or(status_of(&self.status))
            .or(outer_status);
        let message = text(&self.message).map(truncate);
        if message.is_none() && error_type.is_none() && status.is_none() {
            return None;
        }
        Some(InBandError {
            message: message
                .or_else(|| error_type.clone())
                .unwrap_or_else(|| "error".into()),
            error_type,
            status,
        })
    }
}

impl ErrorField {
    pub(crate) fn to_in_band(
        &self,
        outer_type: Option<&Scalar>,
        outer_status: Option<u16>,
    ) -> Option<InBandError> {
        match self {
            ObjOrText::Obj(obj) => obj.to_in_band(outer_type, outer_status),
            ObjOrText::Text(t) if !t.trim().is_empty() => Some(InBandError {
                error_type: outer_type.and_then(Scalar::text).map(str::to_owned),
                message: truncate(t),
                status: outer_status,
            }),
            ObjOrText::Text(_) | ObjOrText::Other => None,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjOrText<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = ObjOrText<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object or a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Text(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjOrText<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(ObjOrText::Obj)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ObjOrText<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ObjOrText::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

// ---- lenient field readers ----

/// Whether a field holds something generated: a non-empty string (or non-empty list/object).
/// Reads without allocating; `null`, `""`, numbers and booleans are "nothing".
#[derive(Default, Clone, Copy)]
pub(crate) struct NonEmpty(pub bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NonEmpty, E> {
                Ok(NonEmpty(!v.is_empty()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NonEmpty, A::Error> {
                let mut any = false;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(NonEmpty(any))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NonEmpty, A::Error> {
                let mut any = false;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(NonEmpty(any))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// A token count: a non-negative integer (or integral float, or digit string); anything else
/// (null, negative, text) reads as "not reported" instead of failing the chunk.
#[derive(Default, Clone, Copy)]
pub(crate) struct Count(pub Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Scalar::deserialize(d)? {
            Scalar::Num(n) if n >= 0.0 && n.fract() == 0.0 && n < 1e19 => Count(Some(n as u64)),
            Scalar::Int(n) => Count(u64::try_from(n).ok()),
            Scalar::Text(t) => Count(t.trim().parse().ok()),
            _ => Count(None),
        })
    }
}

/// Any JSON value reduced to what error fields need: text, a number, or "something else".
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Text(String),
    Int(i64),
    Num(f64),
    Other,
}

impl Scalar {
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Scalar::Text(t) => Some(t),
            _ => None,
        }
    }

    /// An HTTP-like status (100..=599) given as a number or a digit string.
    fn status(&self) -> Option<u16> {
        let n = match self {
            Scalar::Int(n) => u16::try_from(*n).ok(),
            Scalar::Num(n) if n.fract() == 0.0 && (100.0..600.0).contains(n) => Some(*n as u16),
            Scalar::Text(t) => t.trim().parse().ok(),
            _ => None,
        }?;
        (100..=599).contains(&n).then_some(n)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(i64::try_from(v).map_or(Scalar::Num(v as f64), Scalar::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::sse::SseParser;
    use crate::client::timing::{StreamTiming, TimingSummary};
    use crate::record::TokensSource;

    use crate::client::test_spec as spec;

    fn msg(data: &str) -> SseEvent {
        SseEvent {
            event: "message".into(),
            data: data.into(),
            id: None,
            retry: None,
        }
    }

    fn chat(data: &str) -> ChunkInfo {
        interpret_chat(&msg(data)).expect("valid chunk")
    }

    /// Parses a raw stream, interprets every event (the n-th read at n × 10 ms) and times it.
    fn run_stream(
        raw: &str,
        interpret: fn(&SseEvent) -> Result<ChunkInfo, MalformedEvent>,
    ) -> (Vec<ChunkInfo>, TimingSummary) {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        parser.feed(raw.as_bytes(), &mut events).expect("valid SSE");
        let infos: Vec<ChunkInfo> = events
            .iter()
            .map(|e| interpret(e).expect("valid chunk"))
            .collect();
        let mut timing = StreamTiming::new();
        for (i, info) in infos.iter().enumerate() {
            timing.on_chunk(10.0 * (i + 1) as f64, info);
        }
        let end = 10.0 * (infos.len() + 1) as f64;
        (infos, timing.finish(end))
    }

    #[test]
    fn chat_body_shape() {
        let mut req = spec();
        assert_eq!(
            chat_body("m", &req),
            json!({"model": "m", "messages": [{"role": "user", "content": "Say hi"}],
                   "max_tokens": 64, "stream": true, "stream_options": {"include_usage": true}})
        );
        req.system = Some("Be brief".into());
        req.temperature = Some(0.0);
        req.extra_body.insert("seed".into(), json!(7));
        req.extra_body.insert("max_tokens".into(), json!(5));
        req.extra_body.insert("stream_options".into(), Value::Null);
        assert_eq!(
            chat_body("m", &req),
            json!({"model": "m", "messages": [{"role": "system", "content": "Be brief"},
                                              {"role": "user", "content": "Say hi"}],
                   "max_tokens": 5, "temperature": 0.0, "stream": true,
                   "stream_options": null, "seed": 7})
        );
    }

    #[test]
    fn completions_body_shape() {
        let mut req = spec();
        assert_eq!(
            completions_body("m", &req),
            json!({"model": "m", "prompt": "Say hi", "max_tokens": 64, "stream": true,
                   "stream_options": {"include_usage": true}})
        );
        req.system = Some("Be brief".into());
        req.temperature = Some(0.5);
        req.extra_body.insert("top_p".into(), json!(0.9));
        assert_eq!(
            completions_body("m", &req),
            json!({"model": "m", "prompt": "Be brief\n\nSay hi", "max_tokens": 64,
                   "temperature": 0.5, "stream": true,
                   "stream_options": {"include_usage": true}, "top_p": 0.9})
        );
    }

    #[test]
    fn openai_usage_in_final_empty_choices_chunk() {
        let raw = r#"data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" wor\u006cd \"quoted\""},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

"#;
        let (infos, s) = run_stream(raw, interpret_chat);
        assert_eq!(infos.len(), 6);
        assert!(!infos[0].is_token(), "role-only chunk with empty content");
        assert!(infos[1].content && infos[2].content);
        assert_eq!(infos[3].finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            (infos[4].output_tokens, infos[4].input_tokens),
            (Some(5), Some(9))
        );
        assert!(infos[5].done);
        assert_eq!(s.ttft_ms, Some(20.0));
        assert_eq!(s.ttfc_ms, Some(20.0));
        assert_eq!(s.output_tokens, Some(5));
        assert_eq!(s.tokens_source, Some(TokensSource::Usage));
        assert_eq!(s.tpot_ms, Some(2.5)); // (30 − 20) / (5 − 1)
        assert_eq!(s.finish_reason.as_deref(), Some("stop"));
        assert!(s.done && s.error.is_none());
    }

    #[test]
    fn deepseek_reasoning_and_usage_on_finish_chunk() {
        let raw = r#"data: {"id":"d","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"d","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Okay, the user"},"logprobs":null,"finish_reason":null}]}

data: {"id":"d","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":" wants"},"logprobs":null,"finish_reason":null}]}

data: {"id":"d","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"Hi!","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"d","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":31,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":28},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":10}}

data: [DONE]

"#;
        let (infos, s) = run_stream(raw, interpret_chat);
        assert!(!infos[0].is_token());
        assert!(infos[1].reasoning && !infos[1].content);
        assert!(infos[3].content && !infos[3].reasoning);
        assert!(!infos[4].is_token());
        assert_eq!(infos[4].output_tokens, Some(31));
        assert_eq!(s.ttft_ms, Some(20.0));
        assert_eq!(s.ttfc_ms, Some(40.0));
        assert_eq!(s.output_tokens, Some(31));
        assert_eq!(s.input_tokens, Some(10));
        assert_eq!(s.token_events, 3);
        // `reasoning` (OpenRouter, vLLM ≥ 0.9) counts as reasoning too.
        assert!(chat(r#"{"choices":[{"delta":{"reasoning":"hm"}}]}"#).reasoning);
        assert!(!chat(r#"{"choices":[{"delta":{"reasoning":""}}]}"#).is_token());
    }

    #[test]
    fn vllm_cumulative_usage_on_every_chunk() {
        let raw = r#"data: {"id":"v","object":"chat.completion.chunk","created":1,"model":"llama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":12,"completion_tokens":0}}

data: {"id":"v","object":"chat.completion.chunk","created":1,"model":"llama","choices":[{"index":0,"delta":{"content":"A"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":13,"completion_tokens":1}}

data: {"id":"v","object":"chat.completion.chunk","created":1,"model":"llama","choices":[{"index":0,"delta":{"content":"B"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":14,"completion_tokens":2}}

data: {"id":"v","object":"chat.completion.chunk","created":1,"model":"llama","choices":[{"index":0,"delta":{"content":"C"},"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}}

data: {"id":"v","object":"chat.completion.chunk","created":1,"model":"llama","choices":[],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}}

data: [DONE]

"#;
        let (infos, s) = run_stream(raw, interpret_chat);
        let outs: Vec<Option<u64>> = infos.iter().map(|i| i.output_tokens).collect();
        assert_eq!(
            outs,
            vec![Some(0), Some(1), Some(2), Some(3), Some(3), None]
        );
        assert_eq!(s.output_tokens, Some(3), "last value, never summed");
        assert_eq!(s.tpot_ms, Some(10.0));
        assert_eq!(s.finish_reason.as_deref(), Some("length"));
    }

    #[test]
    fn ollama_zero_usage_first_then_real() {
        let raw = r#"data: {"id":"o","object":"chat.completion.chunk","created":1,"model":"qwen","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}

data: {"id":"o","object":"chat.completion.chunk","created":1,"model":"qwen","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":" there"},"finish_reason":null}]}

data: {"id":"o","object":"chat.completion.chunk","created":1,"model":"qwen","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}

data: {"id":"o","object":"chat.completion.chunk","created":1,"model":"qwen","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":26,"completion_tokens":2,"total_tokens":28}}

data: [DONE]

"#;
        let (infos, s) = run_stream(raw, interpret_chat);
        assert_eq!(infos[0].output_tokens, Some(0), "reported as-is");
        assert!(
            infos[1].content,
            "role repeated on every chunk does not matter"
        );
        assert!(!infos[2].is_token());
        assert_eq!(s.output_tokens, Some(2));
        assert_eq!(s.input_tokens, Some(26));
    }

    #[test]
    fn tgi_without_space_and_string_error() {
        let raw = "data:{\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":1,\"model\":\"tgi\",\"system_fingerprint\":\"2.4.0-native\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n\
                   data:{\"error\":\"Request failed during generation: Server error: CUDA out of memory\",\"error_type\":\"generation\"}\n\n";
        let (infos, s) = run_stream(raw, interpret_chat);
        assert!(infos[0].content);
        let err = infos[1].error.clone().expect("string error");
        assert_eq!(err.error_type.as_deref(), Some("generation"));
        assert!(err.message.starts_with("Request failed during generation"));
        assert_eq!(s.error, Some(err));
        assert!(!s.done);
        let info = chat(
            r#"{"error":"Input validation error","error_type":"validation","http_status_code":422}"#,
        );
        assert_eq!(info.error.unwrap().status, Some(422));
    }

    #[test]
    fn openrouter_comments_and_mid_stream_error() {
        let raw = r#": OPENROUTER PROCESSING

: OPENROUTER PROCESSING

data: {"id":"gen-1","provider":"OpenAI","model":"openai/gpt-4o","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"openai/gpt-4o","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}

"#;
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        parser.feed(raw.as_bytes(), &mut events).unwrap();
        assert_eq!(parser.comments(), 2);
        let (infos, s) = run_stream(raw, interpret_chat);
        assert_eq!(infos.len(), 2);
        let err = infos[1].error.clone().expect("mid-stream error");
        assert_eq!(err.error_type.as_deref(), Some("server_error"));
        assert_eq!(err.message, "Provider disconnected unexpectedly");
        assert_eq!(s.finish_reason.as_deref(), Some("error"));
        assert_eq!(s.token_events, 1);
        // finish_reason "error" without an error object is still an error.
        let info = chat(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#);
        assert!(info.error.unwrap().message.contains("finish_reason"));
        // OpenRouter's numeric code is a status.
        let info = chat(r#"{"error":{"code":502,"message":"Upstream error"},"choices":[]}"#);
        assert_eq!(
            info.error,
            Some(InBandError {
                error_type: None,
                message: "Upstream error".into(),
                status: Some(502)
            })
        );
    }

    #[test]
    fn choices_fold_last_finish_reason_first_error_any_error_finish() {
        let info = chat(
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":"error","error":{"message":"first"}},{"index":1,"delta":{},"finish_reason":"stop","error":{"message":"second"}}]}"#,
        );
        assert!(info.reasoning && !info.content);
        assert_eq!(info.finish_reason.as_deref(), Some("stop"));
        assert_eq!(info.error.map(|e| e.message).as_deref(), Some("first"));
        // A chat chunk's `text` is not chat content; a completion's `delta` is not its text.
        assert!(!chat(r#"{"choices":[{"text":"x"}]}"#).content);
        let legacy =
            interpret_completions(&msg(r#"{"choices":[{"text":"","delta":{"content":"x"}}]}"#));
        assert!(!legacy.expect("valid chunk").content);
        // `choices` must be a list (or null); `object` may be anything, only "error" matters.
        assert!(interpret_chat(&msg(r#"{"choices":{"0":{}}}"#)).is_err());
        assert_eq!(chat(r#"{"choices":null}"#), ChunkInfo::default());
        for object in [
            r#"1"#,
            r#"["error"]"#,
            r#"{"a":"error"}"#,
            r#"null"#,
            r#""errors""#,
        ] {
            let data = format!(r#"{{"object":{object},"message":"m","choices":[]}}"#);
            assert_eq!(chat(&data).error, None, "{object}");
        }
        assert!(chat(r#"{"object":"error","message":"m"}"#).error.is_some());
    }

    #[test]
    fn multi_token_chunks_and_tool_calls() {
        let info = chat(
            r#"{"choices":[{"index":0,"delta":{"content":"several tokens at once"}},{"index":1,"delta":{"content":""}}]}"#,
        );
        assert!(info.content);
        let info = chat(
            r#"{"choices":[{"index":0,"delta":{"content":""}},{"index":1,"delta":{"content":"x"}}]}"#,
        );
        assert!(info.content, "any choice counts");
        let start = chat(
            r#"{"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#,
        );
        assert!(start.content, "a tool call name is generated output");
        let args = chat(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}"#,
        );
        assert!(args.content);
        let empty = chat(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"arguments":""}}]}}]}"#,
        );
        assert!(!empty.content);
    }

    #[test]
    fn llama_cpp_timings_are_ignored() {
        let raw = r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hi"}}],"created":1,"id":"chatcmpl-x","model":"gpt-3.5-turbo","system_fingerprint":"b5000","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"chatcmpl-x","model":"gpt-3.5-turbo","object":"chat.completion.chunk","usage":{"completion_tokens":2,"prompt_tokens":7,"total_tokens":9},"timings":{"prompt_n":7,"prompt_ms":12.5,"prompt_per_token_ms":1.8,"prompt_per_second":560.0,"predicted_n":2,"predicted_ms":30.1,"predicted_per_token_ms":15.0,"predicted_per_second":66.4}}

data: [DONE]

"#;
        let (infos, s) = run_stream(raw, interpret_chat);
        assert_eq!(infos.len(), 3);
        assert_eq!(s.output_tokens, Some(2));
        assert_eq!(s.input_tokens, Some(7));
        assert!(s.done);
    }

    #[test]
    fn legacy_completions_stream() {
        let raw = r#"data: {"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":null}],"model":"gpt-3.5-turbo-instruct"}

data: {"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":"Hello","index":0,"logprobs":null,"finish_reason":null}],"model":"gpt-3.5-turbo-instruct"}

data: {"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":"!","index":0,"logprobs":null,"finish_reason":"length"}],"model":"gpt-3.5-turbo-instruct"}

data: {"id":"cmpl-1","object":"text_completion","created":1,"choices":[],"model":"gpt-3.5-turbo-instruct","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}

data: [DONE]

"#;
        let (infos, s) = run_stream(raw, interpret_completions);
        assert!(!infos[0].content && infos[1].content && infos[2].content);
        assert_eq!(s.output_tokens, Some(2));
        assert_eq!(s.finish_reason.as_deref(), Some("length"));
        assert!(s.done);
        // A chat delta is not a completions token, and vice versa.
        let delta = msg(r#"{"choices":[{"delta":{"content":"x"}}]}"#);
        assert!(!interpret_completions(&delta).unwrap().content);
        let text = msg(r#"{"choices":[{"text":"x"}]}"#);
        assert!(!interpret_chat(&text).unwrap().content);
    }

    #[test]
    fn in_band_error_shapes() {
        let info = chat(
            r#"{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}"#,
        );
        assert_eq!(
            info.error,
            Some(InBandError {
                error_type: Some("server_error".into()),
                message: "The server had an error".into(),
                status: None
            })
        );
        let info = chat(
            r#"{"object":"error","message":"max_tokens too large","type":"BadRequestError","param":null,"code":400}"#,
        );
        assert_eq!(
            info.error,
            Some(InBandError {
                error_type: Some("BadRequestError".into()),
                message: "max_tokens too large".into(),
                status: Some(400)
            })
        );
        // A top-level `message` is not an error in a chunk unless `object` says so.
        assert_eq!(chat(r#"{"message":"hello","choices":[]}"#).error, None);
        assert_eq!(chat(r#"{"error":null,"choices":[]}"#).error, None);
        assert_eq!(chat(r#"{"error":"","choices":[]}"#).error, None);
        assert_eq!(chat(r#"{"error":{},"choices":[]}"#).error, None);
    }

    #[test]
    fn error_events_with_json_or_text() {
        let ev = SseEvent {
            event: "error".into(),
            ..msg(r#"{"error":{"message":"overloaded","type":"overloaded_error"}}"#)
        };
        let err = interpret_chat(&ev).unwrap().error.unwrap();
        assert_eq!(err.error_type.as_deref(), Some("overloaded_error"));
        assert_eq!(err.message, "overloaded");
        let ev = SseEvent {
            event: "error".into(),
            ..msg("upstream timed out")
        };
        let err = interpret_completions(&ev).unwrap().error.unwrap();
        assert_eq!(
            err,
            InBandError {
                message: "upstream timed out".into(),
                ..InBandError::default()
            }
        );
        let ev = SseEvent {
            event: "error".into(),
            ..msg("")
        };
        assert!(interpret_chat(&ev).unwrap().error.is_some());
    }

    #[test]
    fn done_keepalive_and_malformed() {
        assert!(chat("[DONE]").done);
        assert!(chat(" [DONE] ").done);
        assert_eq!(chat(""), ChunkInfo::default());
        assert_eq!(chat("{}"), ChunkInfo::default());
        assert_eq!(
            chat(r#"{"choices":null,"usage":null}"#),
            ChunkInfo::default()
        );
        let err = interpret_chat(&msg("<html>502 Bad Gateway</html>")).unwrap_err();
        assert!(err.0.contains("<html>502"), "{err}");
        assert!(interpret_chat(&msg(r#"{"choices":[{"delta":{"content":"x"}}"#)).is_err());
        assert!(interpret_chat(&msg("42")).is_err());
        let long = format!("not json {}", "x".repeat(500));
        assert!(interpret_chat(&msg(&long)).unwrap_err().0.len() < 300);
    }

    #[test]
    fn odd_usage_values_do_not_fail_the_chunk() {
        let info = chat(r#"{"choices":[],"usage":{"completion_tokens":12.0,"prompt_tokens":-1}}"#);
        assert_eq!((info.output_tokens, info.input_tokens), (Some(12), None));
        let info = chat(r#"{"choices":[],"usage":{"completion_tokens":null,"prompt_tokens":"7"}}"#);
        assert_eq!((info.output_tokens, info.input_tokens), (None, Some(7)));
        let info = chat(r#"{"choices":[],"usage":{"output_tokens":4,"input_tokens":2}}"#);
        assert_eq!((info.output_tokens, info.input_tokens), (Some(4), Some(2)));
    }

    #[test]
    fn error_bodies_in_every_shape() {
        let openai = br#"{
    "error": {
        "message": "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 30000, Requested 500.",
        "type": "tokens",
        "param": null,
        "code": "rate_limit_exceeded"
    }
}"#;
        let err = parse_error_body(openai).unwrap();
        assert_eq!(err.error_type.as_deref(), Some("rate_limit_exceeded"));
        assert!(err.message.starts_with("Rate limit reached"));

        let anthropic =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            parse_error_body(anthropic),
            Some(InBandError {
                error_type: Some("overloaded_error".into()),
                message: "Overloaded".into(),
                status: None
            })
        );
        let tgi = br#"{"error":"Model is overloaded","error_type":"overloaded"}"#;
        assert_eq!(
            parse_error_body(tgi).unwrap().error_type.as_deref(),
            Some("overloaded")
        );
        let vllm = br#"{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}"#;
        assert_eq!(parse_error_body(vllm).unwrap().status, Some(404));
        let gemini = br#"[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}]"#;
        assert_eq!(
            parse_error_body(gemini),
            Some(InBandError {
                error_type: Some("RESOURCE_EXHAUSTED".into()),
                message: "Resource has been exhausted".into(),
                status: Some(429)
            })
        );
        let fastapi = br#"{"detail":"Not Found"}"#;
        assert_eq!(parse_error_body(fastapi).unwrap().message, "Not Found");
        let ollama =
            b"\xEF\xBB\xBF{\"error\":\"model \\\"llama9\\\" not found, try pulling it first\"}";
        assert!(parse_error_body(ollama)
            .unwrap()
            .message
            .starts_with("model \"llama9\""));
        let zhipu = br#"{"error":{"code":"1301","message":"unsafe content"}}"#;
        assert_eq!(
            parse_error_body(zhipu).unwrap().error_type.as_deref(),
            Some("1301")
        );

        assert_eq!(
            parse_error_body(b"<html><body>502 Bad Gateway</body></html>"),
            None
        );
        assert_eq!(parse_error_body(b""), None);
        assert_eq!(parse_error_body(b"{}"), None);
        assert_eq!(parse_error_body(b"[]"), None);
        assert_eq!(parse_error_body(b"\"just a string\""), None);
    }

    #[test]
    fn error_messages_are_truncated_to_200_chars() {
        let long = "é".repeat(500);
        let body = format!(r#"{{"error":{{"message":"{long}","type":"x"}}}}"#);
        let err = parse_error_body(body.as_bytes()).unwrap();
        assert_eq!(err.message.chars().count(), MAX_ERROR_MESSAGE_CHARS);
        assert!(err.message.ends_with('…'));
        assert_eq!(truncate("  short  "), "short");
        let exact = "a".repeat(MAX_ERROR_MESSAGE_CHARS);
        assert_eq!(truncate(&exact), exact);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_data_never_panics(
            data in "[\\[\\]{}\":,a-z0-9 .-]{0,80}|.{0,40}",
            name in proptest::prop_oneof![proptest::strategy::Just("message"), proptest::strategy::Just("error")],
        ) {
            let ev = SseEvent { event: name.into(), data: data.clone(), id: None, retry: None };
            let _ = interpret_chat(&ev);
            let _ = interpret_completions(&ev);
            let _ = crate::client::anthropic::interpret_messages(&ev);
            let _ = parse_error_body(data.as_bytes());
        }
    }
}
