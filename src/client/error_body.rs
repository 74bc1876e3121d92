//! Errors as providers send them: the body of a non-2xx response, an `event: error` SSE event, or
//! an error object inside a stream chunk, in every known shape (OpenAI, Anthropic, TGI, older
//! vLLM, OpenRouter, Gemini's list wrapper, FastAPI `detail`). Used by every dialect.

use super::chunk::{InBandError, MalformedEvent};
use super::lenient::{ErrorTag, ObjOrText, Scalar, Usage};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// Longest provider error message kept, in characters.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 200;

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
        class: None,
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

/// The top level of a stream chunk or an error body: the dialect's `choices` (read as `C`;
/// error bodies skip them), usage, and every known top-level error shape. Error fields are rare
/// and cost nothing when absent.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Envelope<C> {
    pub choices: Option<C>,
    pub usage: Option<Usage>,
    /// llama.cpp: the server's own timings, in the final chunk.
    pub timings: Option<super::server_timing::LlamaTimings>,
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

impl<C> Envelope<C> {
    /// `lenient`: also accept a bare top-level `message`/`detail` (error bodies, not chunks).
    pub(crate) fn error(&self, lenient: bool) -> Option<InBandError> {
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
struct OneOrFirst(Option<Envelope<IgnoredAny>>);

impl<'de> Deserialize<'de> for OneOrFirst {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrFirst;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object or a list of objects")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OneOrFirst, A::Error> {
                Envelope::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|p| OneOrFirst(Some(p)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrFirst, A::Error> {
                let first = seq.next_element::<Envelope<IgnoredAny>>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(OneOrFirst(first))
            }
        }
        d.deserialize_any(V)
    }
}

/// `error` as an object (`{message, type, code}`) or a plain string (TGI, Ollama).
pub(crate) type ErrorField = ObjOrText<ErrorObj>;

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
            class: None,
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
                class: None,
            }),
            ObjOrText::Text(_) | ObjOrText::Other => None,
        }
    }
}
