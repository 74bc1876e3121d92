//! Anthropic Messages API: request body and event interpretation.
//!
//! The stream is typed events (`message_start`, `content_block_delta`, `message_delta`,
//! `message_stop`, `ping`, `error`). Output tokens are the cumulative
//! `message_delta.usage.output_tokens` (last value wins); thinking deltas count as reasoning
//! tokens, tool-input JSON deltas as content. The lenient field readers and error shapes are
//! shared with `openai.rs`.

use super::calls::CallLog;
use super::chunk::{ChunkInfo, MalformedEvent};
use super::error_body::{error_from_event_data, malformed};
use super::lenient::{NonEmpty, ObjOrText, Usage};
use super::openai::merge_extra;
use super::sse::SseEvent;
use crate::scenario::tools::{Tool, ToolChoice};
use crate::scenario::RequestSpec;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// Body for `POST {base_url}/messages`.
pub fn messages_body(model: &str, req: &RequestSpec) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    // The Messages API requires a limit; the scenario loader refuses `max_tokens: null` for it.
    if let Some(n) = req.max_tokens {
        body.insert("max_tokens".into(), n.into());
    }
    // Chat messages (prompt sets, sessions): system-role messages go to `system`.
    let mut system: Vec<String> = req.system.iter().cloned().collect();
    let messages: Vec<Value> = if req.messages.is_empty() {
        vec![json!({"role": "user", "content": req.prompt})]
    } else {
        let chat = req.messages.iter().filter(|m| {
            let is_system = m.get("role").and_then(Value::as_str) == Some("system");
            if let (true, Some(text)) = (is_system, m.get("content").and_then(Value::as_str)) {
                system.push(text.to_string());
            }
            !is_system
        });
        messages(chat)
    };
    body.insert("messages".into(), Value::Array(messages));
    if !system.is_empty() {
        body.insert("system".into(), system.join("\n\n").into());
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), t.into());
    }
    body.insert("stream".into(), req.stream.into());
    if let Some(tools) = &req.tools {
        body.insert(
            "tools".into(),
            Value::Array(tools.list.iter().map(tool).collect()),
        );
    }
    if let Some(choice) = &req.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice));
    }
    if req.cache_auto {
        mark_breakpoints(&mut body);
    }
    merge_extra(body, req)
}

/// Chat messages in Anthropic's shape: an assistant message's `tool_calls` become `tool_use`
/// blocks after its text (`input`: the arguments' JSON object; arguments that are not one, such
/// as a call cut at the output limit, are kept as text under `arguments`), and the `role: tool`
/// results that follow become `tool_result` blocks of one user message. Other messages are
/// sent as they are.
fn messages<'a>(chat: impl Iterator<Item = &'a Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in chat {
        match m.get("role").and_then(Value::as_str) {
            Some("tool") => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": m.get("tool_call_id").cloned().unwrap_or_default(),
                    "content": m.get("content").cloned().unwrap_or_default(),
                });
                match out.last_mut().and_then(tool_results) {
                    Some(blocks) => blocks.push(block),
                    None => out.push(json!({"role": "user", "content": [block]})),
                }
            }
            Some("assistant") if m.get("tool_calls").is_some_and(Value::is_array) => {
                out.push(assistant_with_calls(m));
            }
            _ => out.push(m.clone()),
        }
    }
    out
}

/// The blocks of a user message of tool results, to add another to.
fn tool_results(message: &mut Value) -> Option<&mut Vec<Value>> {
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let blocks = message.get_mut("content")?.as_array_mut()?;
    let all_results = blocks
        .iter()
        .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
    all_results.then_some(blocks)
}

/// An assistant message with chat's `tool_calls`, as text and `tool_use` blocks (an empty text
/// is left out: Anthropic refuses empty text blocks).
fn assistant_with_calls(m: &Value) -> Value {
    let mut blocks = match m.get("content") {
        Some(Value::String(t)) if !t.is_empty() => vec![json!({"type": "text", "text": t})],
        Some(Value::Array(parts)) => parts.clone(),
        _ => Vec::new(),
    };
    for call in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = call.get("function");
        let field = |k: &str| function.and_then(|f| f.get(k)).and_then(Value::as_str);
        let arguments = field("arguments").unwrap_or("{}");
        let input = match serde_json::from_str::<Value>(arguments) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({"arguments": arguments}),
        };
        blocks.push(json!({
            "type": "tool_use",
            "id": call.get("id").cloned().unwrap_or_default(),
            "name": field("name").unwrap_or_default(),
            "input": input,
        }));
    }
    json!({"role": "assistant", "content": blocks})
}

/// A function tool in Anthropic's shape: `{name, description, input_schema}`.
fn tool(t: &Tool) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), t.name.clone().into());
    if let Some(d) = &t.description {
        m.insert("description".into(), d.clone().into());
    }
    m.insert("input_schema".into(), t.parameters.clone());
    Value::Object(m)
}

/// Anthropic's `tool_choice`: `{type: auto | none | any}` or `{type: tool, name}`.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Function(name) => json!({"type": "tool", "name": name}),
    }
}

/// `request.cache: auto`: `cache_control: {type: ephemeral}` breakpoints where agent clients
/// put them (Claude Code): on the last tool (caching every tool), on the system prompt (as one
/// text block) and on the latest message's last content block, so each turn reads the previous
/// turn's prefix and writes its own. Three of the four breakpoints a request may carry.
fn mark_breakpoints(body: &mut Map<String, Value>) {
    let mark = || json!({"type": "ephemeral"});
    if let Some(Value::Object(last)) = body
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .and_then(|t| t.last_mut())
    {
        last.insert("cache_control".into(), mark());
    }
    if let Some(Value::String(text)) = body.get("system") {
        let block = json!([{"type": "text", "text": text, "cache_control": mark()}]);
        body.insert("system".into(), block);
    }
    let latest = body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.last_mut())
        .and_then(Value::as_object_mut);
    if let Some(message) = latest {
        match message.get_mut("content") {
            Some(Value::String(text)) => {
                let block = json!([{"type": "text", "text": text, "cache_control": mark()}]);
                message.insert("content".into(), block);
            }
            Some(Value::Array(blocks)) => {
                if let Some(Value::Object(last)) = blocks.last_mut() {
                    last.insert("cache_control".into(), mark());
                }
            }
            _ => {}
        }
    }
}

/// Meaning of one Messages stream event. The event type comes from the JSON `type`, or from the
/// SSE event name when the JSON has none.
pub fn interpret_messages(ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
    messages_event(&ev.event, &ev.data)
}

/// [`interpret_messages`] from the event's name and data.
pub fn messages_event(event: &str, data: &str) -> Result<ChunkInfo, MalformedEvent> {
    let data = data.trim();
    let mut info = ChunkInfo::default();
    if data == "[DONE]" {
        info.done = true;
        return Ok(info);
    }
    let parsed: Event = if data.is_empty() {
        Event::default()
    } else {
        match serde_json::from_str(data) {
            Ok(parsed) => parsed,
            Err(_) if event == "error" => {
                info.error = Some(error_from_event_data(data));
                return Ok(info);
            }
            Err(e) => return Err(malformed("event", data, &e)),
        }
    };
    let kind = parsed.ty.as_deref().unwrap_or(event);
    match kind {
        "message_start" => {
            if let Some(ObjOrText::Obj(Message { usage: Some(usage) })) = &parsed.message {
                info.input_tokens = usage.anthropic_input_tokens();
                info.output_tokens = usage.output_tokens.0;
                info.cached_tokens = usage.cached_tokens();
                info.cache_write_tokens = usage.cache_write_tokens();
            }
        }
        "content_block_delta" => {
            if let Some(delta) = &parsed.delta {
                match delta.ty.as_deref() {
                    Some("text_delta") => info.content = delta.text.0,
                    Some("input_json_delta") => {
                        info.content = delta.partial_json.0;
                        info.tool_args = u32::from(delta.partial_json.0);
                    }
                    Some("thinking_delta") => info.reasoning = delta.thinking.0,
                    _ => {} // signature_delta, citations_delta, ...
                }
            }
        }
        "message_delta" => {
            if let Some(usage) = &parsed.usage {
                info.output_tokens = usage.output_tokens.0;
                info.input_tokens = usage.anthropic_input_tokens();
                info.cached_tokens = usage.cached_tokens();
                info.cache_write_tokens = usage.cache_write_tokens();
            }
            info.finish_reason = parsed.delta.as_ref().and_then(|d| d.stop_reason.clone());
        }
        "content_block_start" => {
            let block = parsed.content_block.as_ref().and_then(|b| b.ty.as_deref());
            info.tool_calls = u32::from(block == Some("tool_use"));
        }
        "message_stop" => info.done = true,
        "error" => info.error = Some(error_from_event_data(data)),
        _ => {} // ping, content_block_stop, future types
    }
    Ok(info)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Cow<'a, str>>,
    message: Option<ObjOrText<Message>>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    usage: Option<Usage>,
    #[serde(borrow)]
    content_block: Option<BlockStart<'a>>,
}

/// The block a `content_block_start` opens (`text`, `thinking`, `tool_use`, …).
#[derive(Deserialize, Default)]
#[serde(default)]
struct BlockStart<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Message {
    usage: Option<Usage>,
}

/// Meaning of a whole Messages answer (`stream: false`: a `message` object, or an error body
/// `{"type": "error", ...}`): whether its content blocks carry text, tool input or thinking, its
/// stop reason and usage, as one final event.
pub fn whole_message(body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
    let text = super::sse::decode(body);
    let text = text.trim();
    let parsed: Whole = serde_json::from_str(text).map_err(|e| malformed("answer", text, &e))?;
    let mut info = ChunkInfo {
        done: true,
        ..ChunkInfo::default()
    };
    if parsed.ty.as_deref() == Some("error") || parsed.error.is_some() {
        info.error = Some(error_from_event_data(text));
        return Ok(info);
    }
    for block in parsed.content.iter().flatten() {
        match block.ty.as_deref() {
            Some("thinking") => info.reasoning |= block.thinking.0,
            Some("tool_use") => {
                info.tool_calls += 1;
                info.content |= block.input.as_ref().is_some_and(|v| !v.is_null());
            }
            _ => info.content |= block.text.0,
        }
    }
    if let Some(usage) = &parsed.usage {
        info.output_tokens = usage.output_tokens.0;
        info.input_tokens = usage.anthropic_input_tokens();
        info.cached_tokens = usage.cached_tokens();
        info.cache_write_tokens = usage.cache_write_tokens();
    }
    info.finish_reason = parsed.stop_reason;
    Ok(info)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Whole {
    #[serde(rename = "type")]
    ty: Option<String>,
    content: Option<Vec<Block>>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Block {
    #[serde(rename = "type")]
    ty: Option<String>,
    text: NonEmpty,
    thinking: NonEmpty,
    input: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Cow<'a, str>>,
    text: NonEmpty,
    thinking: NonEmpty,
    partial_json: NonEmpty,
    stop_reason: Option<String>,
}

/// Keeps the tool call of one Messages stream event in `log` (`client::calls`): a
/// `content_block_start` of a `tool_use` block names it (its id and name, by the block's
/// `index`), its `input_json_delta`s' `partial_json` are its arguments.
pub fn keep_calls(event: &str, data: &[u8], log: &mut CallLog) {
    let Ok(ev) = serde_json::from_slice::<KeptEvent>(data) else {
        return;
    };
    let key = ev.index;
    match ev.ty.as_deref().unwrap_or(event) {
        "content_block_start" => {
            if let Some(b) = ev
                .content_block
                .filter(|b| b.ty.as_deref() == Some("tool_use"))
            {
                log.name(key, b.id.as_deref(), b.name.as_deref());
                // A start whose input is already whole (not the empty `{}` of a streamed one).
                if let Some(input) = b
                    .input
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                {
                    log.set_arguments(key, &input.to_string());
                }
            }
        }
        "content_block_delta" => {
            if let Some(json) = ev.delta.and_then(|d| d.partial_json) {
                log.append(key, &json);
            }
        }
        _ => {}
    }
}

/// Keeps a whole answer's `tool_use` blocks in `log`: id, name and `input` as JSON text.
pub fn keep_whole_calls(body: &[u8], log: &mut CallLog) {
    let Ok(whole) = serde_json::from_slice::<KeptWhole>(body) else {
        return;
    };
    for (i, b) in whole.content.into_iter().flatten().enumerate() {
        if b.ty.as_deref() == Some("tool_use") {
            let key = Some(i as u64);
            log.name(key, b.id.as_deref(), b.name.as_deref());
            if let Some(input) = b.input {
                log.set_arguments(key, &input.to_string());
            }
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptEvent {
    #[serde(rename = "type")]
    ty: Option<String>,
    index: Option<u64>,
    content_block: Option<KeptBlock>,
    delta: Option<KeptDelta>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptBlock {
    #[serde(rename = "type")]
    ty: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptDelta {
    partial_json: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KeptWhole {
    content: Option<Vec<KeptBlock>>,
}

#[cfg(test)]
mod tests;
