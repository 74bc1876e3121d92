//! OpenAI Responses API (`POST {base_url}/responses`): request body and event interpretation.
//!
//! The stream is typed events, each named twice (the SSE `event:` and the JSON `type`) and
//! numbered (`sequence_number`): `response.created`, `response.in_progress`, output items and
//! content parts opening and closing, then the deltas. `response.output_text.delta` (and a
//! refusal's, a function call's arguments) is content; `response.reasoning_summary_text.delta`
//! and `response.reasoning_text.delta` are reasoning, which counts toward TTFT but not TTFC. The
//! stream ends with `response.completed` (usage), `response.incomplete` (a cut, with its reason)
//! or `response.failed` (an error); there is no `[DONE]`, so a stream that ends without one of
//! the three is a disconnect. An `error` event carries `code` and `message` at its top level.
//! Errors are classified by their code: `rate_limit_exceeded` is a 429, `insufficient_quota`
//! out of quota, `server_error` a 5xx. Unknown event types are ignored.

use super::calls::{arguments_text, CallLog};
use super::chunk::{ChunkInfo, InBandError, MalformedEvent};
use super::error_body::{error_from_event_data, malformed, ErrorField};
use super::lenient::{NonEmpty, Usage};
use super::openai::{cache_key, merge_extra, tool_choice};
use super::sse::decode;
use crate::model::ErrorClass;
use crate::scenario::tools::Tool;
use crate::scenario::RequestSpec;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Body for `POST {base_url}/responses`. `store: false` unless `extra_body` says otherwise: the
/// API keeps every response for 30 days by default, and a load test must not fill the account's
/// stored responses. `store: null` in `extra_body` sends no `store` field at all (for a server
/// that refuses it).
pub fn responses_body(model: &str, req: &RequestSpec) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("input".into(), input(req));
    if let Some(system) = &req.system {
        body.insert("instructions".into(), system.clone().into());
    }
    if let Some(n) = req.max_tokens {
        body.insert("max_output_tokens".into(), n.into());
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), t.into());
    }
    body.insert("stream".into(), req.stream.into());
    body.insert("store".into(), false.into());
    if let Some(tools) = &req.tools {
        body.insert(
            "tools".into(),
            Value::Array(tools.list.iter().map(tool).collect()),
        );
    }
    if let Some(choice) = &req.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice, false));
    }
    cache_key(&mut body, req);
    let mut body = merge_extra(body, req);
    if let Some(map) = body.as_object_mut() {
        if map.get("store").is_some_and(Value::is_null) {
            map.remove("store");
        }
    }
    body
}

/// A function tool in the Responses API's flat shape: `{type, name, description, parameters}`
/// (and `strict` when the file sets it).
fn tool(t: &Tool) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "function".into());
    m.insert("name".into(), t.name.clone().into());
    if let Some(d) = &t.description {
        m.insert("description".into(), d.clone().into());
    }
    m.insert("parameters".into(), t.parameters.clone());
    if let Some(strict) = t.raw.pointer("/function/strict").filter(|v| v.is_boolean()) {
        m.insert("strict".into(), strict.clone());
    }
    Value::Object(m)
}

/// The prompt as one string, or the conversation (prompt sets, sessions) as input items: an
/// assistant message's chat `tool_calls` become `function_call` items after its text, and a
/// `role: tool` result a `function_call_output` item.
fn input(req: &RequestSpec) -> Value {
    if req.messages.is_empty() {
        return req.prompt.clone().into();
    }
    let mut items = Vec::with_capacity(req.messages.len());
    for m in &req.messages {
        let role = m.get("role").and_then(Value::as_str);
        let calls = m.get("tool_calls").and_then(Value::as_array);
        match (role, calls) {
            (Some("tool"), _) => items.push(serde_json::json!({
                "type": "function_call_output",
                "call_id": m.get("tool_call_id").cloned().unwrap_or_default(),
                "output": m.get("content").cloned().unwrap_or_default(),
            })),
            (Some("assistant"), Some(calls)) => {
                let text = m.get("content").filter(|c| match c {
                    Value::String(t) => !t.is_empty(),
                    Value::Array(parts) => !parts.is_empty(),
                    _ => false,
                });
                if let Some(text) = text {
                    let message = serde_json::json!({"role": "assistant", "content": text});
                    items.push(input_item(&message));
                }
                items.extend(calls.iter().map(function_call));
            }
            _ => items.push(input_item(m)),
        }
    }
    Value::Array(items)
}

/// A chat tool call as a `function_call` input item.
fn function_call(call: &Value) -> Value {
    let function = call.get("function");
    let field = |k: &str| function.and_then(|f| f.get(k)).cloned().unwrap_or_default();
    serde_json::json!({
        "type": "function_call",
        "call_id": call.get("id").cloned().unwrap_or_default(),
        "name": field("name"),
        "arguments": field("arguments"),
    })
}

/// A chat message as a Responses input item: `{role, content}` is one already when its content
/// is a string; a list of chat content parts gets the Responses part types (`input_text` or, for
/// the assistant, `output_text`; `input_image` with the image's URL).
fn input_item(message: &Value) -> Value {
    let Some(Value::Array(parts)) = message.get("content") else {
        return message.clone();
    };
    let assistant = message.get("role").and_then(Value::as_str) == Some("assistant");
    let parts = parts.iter().map(|p| input_part(p, assistant)).collect();
    let mut item = message.clone();
    item["content"] = Value::Array(parts);
    item
}

fn input_part(part: &Value, assistant: bool) -> Value {
    match part.get("type").and_then(Value::as_str) {
        Some("text") => {
            let ty = if assistant {
                "output_text"
            } else {
                "input_text"
            };
            let text = part.get("text").cloned().unwrap_or_default();
            serde_json::json!({"type": ty, "text": text})
        }
        Some("image_url") => {
            let url = match part.get("image_url") {
                Some(Value::Object(o)) => o.get("url").cloned().unwrap_or_default(),
                Some(other) => other.clone(),
                None => Value::Null,
            };
            serde_json::json!({"type": "input_image", "image_url": url})
        }
        _ => part.clone(),
    }
}

/// The events of one answer, read in order: their meanings, and the response's id (from its
/// first lifecycle event), which a chained session's next turn sends as `previous_response_id`.
#[derive(Default)]
pub struct ResponsesReader {
    id: Option<String>,
}

impl ResponsesReader {
    /// Meaning of the answer's next event ([`responses_event`]).
    pub fn read(&mut self, event: &str, data: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
        read(event, data, &mut self.id)
    }

    /// Meaning of a whole answer ([`whole_response`]), keeping its id.
    pub fn whole(&mut self, body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
        whole(body, &mut self.id)
    }

    /// The response's id, once an event carried it.
    pub fn take_id(&mut self) -> Option<String> {
        self.id.take()
    }
}

/// Meaning of one Responses stream event, from its name and its data as received (not yet
/// checked for UTF-8: read as it is, and decoded with invalid sequences replaced only when that
/// fails). The type comes from the JSON `type`, or from the SSE event name when the JSON has
/// none.
pub fn responses_event(event: &str, data: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
    read(event, data, &mut None)
}

fn read(event: &str, data: &[u8], id: &mut Option<String>) -> Result<ChunkInfo, MalformedEvent> {
    match serde_json::from_slice::<Event>(data) {
        Ok(parsed) => Ok(meaning(event, parsed, data, id)),
        Err(_) => {
            let text = decode(data);
            let text = text.trim();
            if text.is_empty() || text == "[DONE]" {
                // A keep-alive, or a gateway's `[DONE]` (the Responses API sends none: only a
                // terminal event ends the stream).
                return Ok(ChunkInfo::default());
            }
            match serde_json::from_str::<Event>(text) {
                Ok(parsed) => Ok(meaning(event, parsed, text.as_bytes(), id)),
                Err(_) if event == "error" => Ok(with_error(error_from_event_data(text))),
                Err(e) => Err(malformed("event", text, &e)),
            }
        }
    }
}

fn meaning(event: &str, mut parsed: Event, data: &[u8], id: &mut Option<String>) -> ChunkInfo {
    let mut info = ChunkInfo::default();
    if id.is_none() {
        *id = parsed.response.as_mut().and_then(|r| r.id.take());
    }
    let kind = parsed.ty.as_deref().unwrap_or(event);
    match kind {
        "response.output_text.delta" | "response.refusal.delta" => info.content = parsed.delta.0,
        "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
            info.content = parsed.delta.0;
            info.tool_args = u32::from(parsed.delta.0);
        }
        "response.output_item.added" => {
            let item = parsed.item.as_ref().and_then(|i| i.ty.as_deref());
            info.tool_calls = u32::from(item.is_some_and(is_tool_call));
        }
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            info.reasoning = parsed.delta.0
        }
        "response.completed" => {
            info.done = true;
            info.finish_reason = Some("stop".into());
            read_response(&mut info, parsed.response);
        }
        "response.incomplete" => {
            info.done = true;
            let reason = parsed
                .response
                .as_ref()
                .and_then(|r| r.incomplete_details.as_ref())
                .and_then(|d| d.reason.clone());
            info.finish_reason = Some(match reason.as_deref() {
                Some("max_output_tokens") => "length".into(),
                Some(other) => other.into(),
                None => "incomplete".into(),
            });
            read_response(&mut info, parsed.response);
        }
        "response.failed" => {
            let error = parsed
                .response
                .as_ref()
                .and_then(|r| r.error.as_ref())
                .and_then(|e| e.to_in_band(None, None))
                .unwrap_or_else(|| InBandError {
                    message: "the response failed (response.failed without an error)".into(),
                    ..InBandError::default()
                });
            read_response(&mut info, parsed.response);
            info.error = Some(classified(error));
        }
        "error" => {
            let text = String::from_utf8_lossy(data);
            info.error = Some(classified(error_from_event_data(text.trim())));
        }
        _ => {
            // Unknown and bookkeeping types; an untyped body that is an error is one.
            if parsed.ty.is_none() {
                if let Some(err) = parsed.error.as_ref().and_then(|e| e.to_in_band(None, None)) {
                    info.error = Some(classified(err));
                }
            }
        }
    }
    info
}

fn with_error(err: InBandError) -> ChunkInfo {
    ChunkInfo {
        error: Some(classified(err)),
        ..ChunkInfo::default()
    }
}

/// The record's class of an error, from its code.
fn classified(mut err: InBandError) -> InBandError {
    err.class = match err.error_type.as_deref() {
        Some("rate_limit_exceeded") => Some(ErrorClass::Http429),
        Some("insufficient_quota") => Some(ErrorClass::Quota),
        Some("server_error") => Some(ErrorClass::Http5xx),
        _ => None,
    };
    err
}

/// Usage of a terminal event's response.
fn read_response(info: &mut ChunkInfo, response: Option<Response>) {
    let Some(usage) = response.and_then(|r| r.usage) else {
        return;
    };
    info.input_tokens = usage.input_tokens.0;
    info.output_tokens = usage.output_tokens.0;
    info.cached_tokens = usage.cached_tokens();
    info.reasoning_tokens = usage.reasoning_tokens();
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Cow<'a, str>>,
    delta: NonEmpty,
    response: Option<Response>,
    error: Option<ErrorField>,
    /// The item `response.output_item.added` opens.
    item: Option<OutputItem>,
}

/// Output item types that are a call of one of the request's tools (a function, or a custom
/// tool whose input is free text).
fn is_tool_call(ty: &str) -> bool {
    matches!(ty, "function_call" | "custom_tool_call")
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Response {
    id: Option<String>,
    usage: Option<Usage>,
    error: Option<ErrorField>,
    incomplete_details: Option<Incomplete>,
    /// `completed`, `incomplete`, `failed` (a whole answer's; a stream's events say it).
    status: Option<String>,
    output: Option<Vec<OutputItem>>,
}

/// One item of a whole answer's `output`: a message (its `content` parts), reasoning (its
/// `summary` or `content` text), a function call (its `arguments`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct OutputItem {
    #[serde(rename = "type")]
    ty: Option<String>,
    content: Option<Vec<Part>>,
    summary: Option<Vec<Part>>,
    arguments: NonEmpty,
    input: NonEmpty,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Part {
    text: NonEmpty,
    refusal: NonEmpty,
}

/// Meaning of a whole Responses answer (`stream: false`: the response object, or an error body
/// `{"error": {...}}`), read as the terminal event its `status` names: `completed` ends with
/// `stop`, `incomplete` with its reason (`length` for `max_output_tokens`), `failed` with its
/// error classified by code; whether its output carries text, a call's arguments or reasoning.
pub fn whole_response(body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
    whole(body, &mut None)
}

fn whole(body: &[u8], id: &mut Option<String>) -> Result<ChunkInfo, MalformedEvent> {
    let text = decode(body);
    let text = text.trim();
    let response: Response =
        serde_json::from_str(text).map_err(|e| malformed("answer", text, &e))?;
    let (mut content, mut reasoning, mut calls) = (false, false, 0);
    for item in response.output.iter().flatten() {
        calls += u32::from(item.ty.as_deref().is_some_and(is_tool_call));
        let texts =
            |parts: &Option<Vec<Part>>| parts.iter().flatten().any(|p| p.text.0 || p.refusal.0);
        if item.ty.as_deref() == Some("reasoning") {
            reasoning |= texts(&item.summary) || texts(&item.content);
        } else {
            content |= texts(&item.content) || item.arguments.0 || item.input.0;
        }
    }
    let ty = match (response.status.as_deref(), response.error.is_some()) {
        (Some(status @ ("completed" | "incomplete" | "failed")), _) => {
            Some(Cow::Owned(format!("response.{status}")))
        }
        (_, true) => None,
        // A response with another status (or none) that is not an error: read as completed.
        _ => Some(Cow::Borrowed("response.completed")),
    };
    let parsed = if ty.is_none() {
        Event {
            error: response.error,
            ..Event::default()
        }
    } else {
        Event {
            ty,
            response: Some(response),
            ..Event::default()
        }
    };
    let mut info = meaning("", parsed, text.as_bytes(), id);
    info.content = content;
    info.reasoning = reasoning;
    info.tool_calls = calls;
    info.done = true;
    Ok(info)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Incomplete {
    reason: Option<String>,
}

/// Keeps the function call of one Responses stream event in `log` (`client::calls`), by its
/// `output_index`: `response.output_item.added` of a `function_call` names it (`call_id`,
/// `name`), `response.function_call_arguments.delta` adds to its arguments, `.done` and the
/// terminal event's output items give them whole.
pub fn keep_calls(event: &str, data: &[u8], log: &mut CallLog) {
    let Ok(ev) = serde_json::from_slice::<KeptEvent>(data) else {
        return;
    };
    let key = ev.output_index;
    match ev.ty.as_deref().unwrap_or(event) {
        "response.output_item.added" => {
            if let Some(item) = ev.item {
                keep_item(key, item, log);
            }
        }
        "response.function_call_arguments.delta" => {
            if let Some(delta) = &ev.delta {
                log.append(key, delta);
            }
        }
        "response.function_call_arguments.done" => {
            if let Some(args) = &ev.arguments {
                log.set_arguments(key, args);
            }
        }
        "response.completed" | "response.incomplete" => {
            keep_output(ev.response.and_then(|r| r.output), log);
        }
        _ => {}
    }
}

/// Keeps a whole answer's `function_call` output items in `log`.
pub fn keep_whole_calls(body: &[u8], log: &mut CallLog) {
    if let Ok(r) = serde_json::from_slice::<KeptResponse>(body) {
        keep_output(r.output, log);
    }
}

fn keep_output(output: Option<Vec<KeptItem>>, log: &mut CallLog) {
    for (i, item) in output.into_iter().flatten().enumerate() {
        keep_item(Some(i as u64), item, log);
    }
}

fn keep_item(key: Option<u64>, item: KeptItem, log: &mut CallLog) {
    if item.ty.as_deref() != Some("function_call") {
        return;
    }
    log.name(key, item.call_id.as_deref(), item.name.as_deref());
    if let Some(args) = item.arguments.filter(|a| !a.is_null()) {
        let text = arguments_text(&args);
        if !text.is_empty() {
            log.set_arguments(key, &text);
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptEvent {
    #[serde(rename = "type")]
    ty: Option<String>,
    output_index: Option<u64>,
    item: Option<KeptItem>,
    delta: Option<String>,
    arguments: Option<String>,
    response: Option<KeptResponse>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptResponse {
    output: Option<Vec<KeptItem>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptItem {
    #[serde(rename = "type")]
    ty: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
    arguments: Option<Value>,
}

#[cfg(test)]
mod tests;
