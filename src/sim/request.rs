//! Reads an incoming request body into the few facts the simulator needs (model, stream,
//! max_tokens, include_usage, input size) and rejects what real servers reject with 400. Pure.

use crate::dialect::{Api, Usage};
use serde::Deserialize;
use serde_json::Value;

/// What the simulator takes from a request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimRequest {
    pub model: String,
    pub stream: bool,
    /// `max_completion_tokens` / `max_tokens`, when given.
    pub max_tokens: Option<u64>,
    /// `stream_options.include_usage` (always true for Anthropic, whose stream carries usage).
    pub include_usage: bool,
    /// Prompt size in tokens, estimated as characters / 4 (rounded up).
    pub input_tokens: u64,
    /// Hash of the prompt up to the end of each whole 64-character (16-token) block, in order:
    /// two prompts share a cached prefix of k blocks when their first k hashes agree.
    pub prefix_blocks: Vec<u64>,
    /// The server keeps the answer for a later `previous_response_id` (`store`, whose default is
    /// the dialect's: true for the Responses API).
    pub store: bool,
    /// The stored answer this request continues (the Responses API's `previous_response_id`).
    pub previous_response_id: Option<String>,
    /// Some part of the body asks for caching (`cache_control`, Anthropic's breakpoints): the
    /// answer then reports the prompt tokens written to the cache, as Anthropic does.
    pub cache_control: bool,
    /// The tool a tool call answers with: the one `tool_choice` names, else the first of
    /// `tools` (a function's name in any dialect's shape); `None` without tools or with
    /// `tool_choice: none`.
    pub tool: Option<String>,
    /// `tool_choice` asks for a call (`required`, Anthropic's `any`, or one named tool).
    pub tool_required: bool,
    /// The ids of the tool calls the conversation's results answer (`sim::calls`).
    pub answers: Vec<String>,
    /// An embeddings request's texts (1 for a string `input`), the vector size it asks for
    /// (`dimensions`) and whether it wants base64 (`encoding_format`); `None` elsewhere.
    pub embed: Option<Embed>,
}

/// What an embeddings request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Embed {
    pub inputs: u32,
    pub dimensions: Option<u32>,
    pub base64: bool,
    /// Texts sent as token ids (integers), one token each.
    pub token_ids: u64,
}

/// The most texts one embeddings request takes (OpenAI's limit).
pub const MAX_EMBED_INPUTS: usize = 2048;

#[derive(Deserialize)]
struct Body {
    model: Option<Value>,
    stream: Option<Value>,
    stream_options: Option<Value>,
    store: Option<Value>,
    previous_response_id: Option<Value>,
    tools: Option<Value>,
    tool_choice: Option<Value>,
    dimensions: Option<Value>,
    encoding_format: Option<Value>,
}

/// Parses a body for `api`; the error is the message for a 400 answer.
pub fn parse(api: Api, body: &[u8]) -> Result<SimRequest, String> {
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("We could not parse the JSON body of your request. ({e})"))?;
    if !value.is_object() {
        return Err("The request body must be a JSON object.".into());
    }
    let spec = api.spec();
    let max_field = spec
        .max_tokens_fields
        .iter()
        .find_map(|f| value.get(*f).filter(|v| !v.is_null()).cloned());
    let cache_control = has_key(&value, "cache_control");
    let prompt: serde_json::Map<String, Value> = spec
        .prompt_fields
        .iter()
        .filter_map(|f| Some(((*f).to_string(), value.as_object_mut()?.remove(*f)?)))
        .collect();
    let b: Body =
        serde_json::from_value(value).map_err(|e| format!("Invalid request body: {e}"))?;
    let embed = api
        .embeds()
        .then(|| embed_of(prompt.get("input"), &b))
        .transpose()?;
    let model = match b.model {
        Some(Value::String(m)) if !m.is_empty() => m,
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err("you must provide a model parameter".into())
        }
        Some(_) => return Err("`model` must be a string".into()),
    };
    let stream = match b.stream {
        None | Some(Value::Null) => false,
        Some(Value::Bool(s)) => s,
        Some(_) => return Err("`stream` must be a boolean".into()),
    };
    let max_tokens = match max_field {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) => Some(n),
            None => {
                return Err(format!(
                    "`max_tokens` must be a non-negative integer, got {v}"
                ))
            }
        },
    };
    let store = match b.store {
        None | Some(Value::Null) => spec.stores,
        Some(Value::Bool(s)) => s,
        Some(_) => return Err("`store` must be a boolean".into()),
    };
    let previous_response_id = match b.previous_response_id {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id),
        Some(_) => return Err("`previous_response_id` must be a string".into()),
    };
    let include_usage = spec.usage == Usage::Always
        || b.stream_options
            .as_ref()
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
    // Tool definitions are prompt too, before the system prompt (as chat templates and
    // Anthropic's cache order put them), then the dialect's prompt fields in its order.
    let parts: Vec<&Value> = b
        .tools
        .iter()
        .chain(spec.prompt_fields.iter().filter_map(|f| prompt.get(*f)))
        .collect();
    let chars: usize = parts.iter().map(|v| text_chars(v)).sum();
    let answers = super::calls::answered(&parts)?;
    let mut text = String::new();
    for v in &parts {
        push_text(v, &mut text);
    }
    let (tool, tool_required) = tool_of(b.tools.as_ref(), b.tool_choice.as_ref());
    Ok(SimRequest {
        model,
        // Embeddings are answered whole, and generate nothing.
        stream: stream && embed.is_none(),
        max_tokens: if embed.is_some() { Some(0) } else { max_tokens },
        include_usage,
        input_tokens: (chars as u64).div_ceil(4) + embed.map_or(0, |e| e.token_ids),
        prefix_blocks: prefix_blocks(&text),
        store,
        previous_response_id,
        cache_control,
        tool,
        tool_required,
        answers,
        embed,
    })
}

/// An embeddings request's `input` (a non-empty string, or a list of up to
/// [`MAX_EMBED_INPUTS`] non-empty strings or token lists), `dimensions` and `encoding_format`,
/// refused as OpenAI refuses them.
fn embed_of(input: Option<&Value>, b: &Body) -> Result<Embed, String> {
    let inputs = match input {
        Some(Value::String(s)) if !s.is_empty() => 1,
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_EMBED_INPUTS => {
            let text = |v: &Value| match v {
                Value::String(s) => !s.is_empty(),
                Value::Number(_) => true,
                Value::Array(ids) => !ids.is_empty() && ids.iter().all(Value::is_u64),
                _ => false,
            };
            if !items.iter().all(text) {
                return Err(
                    "'$.input' is invalid: each input must be a non-empty string or a \
                            list of token ids"
                        .into(),
                );
            }
            // A list of integers is one text of token ids.
            if items.iter().all(Value::is_number) {
                1
            } else {
                items.len()
            }
        }
        Some(Value::Array(items)) if items.len() > MAX_EMBED_INPUTS => {
            return Err(format!(
                "'$.input' is invalid: at most {MAX_EMBED_INPUTS} inputs per request, got {}",
                items.len()
            ))
        }
        None | Some(Value::Null) => return Err("you must provide an input parameter".into()),
        Some(_) => return Err("'$.input' is invalid: a non-empty string or a list of them".into()),
    };
    let dimensions = match &b.dimensions {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().filter(|d| (1..=65_536).contains(d)) {
            Some(d) => Some(d as u32),
            None => return Err(format!("`dimensions` must be an integer from 1, got {v}")),
        },
    };
    let base64 = match &b.encoding_format {
        None | Some(Value::Null) => false,
        Some(Value::String(f)) if f == "float" => false,
        Some(Value::String(f)) if f == "base64" => true,
        Some(v) => {
            return Err(format!(
                "`encoding_format` must be 'float' or 'base64', got {v}"
            ))
        }
    };
    Ok(Embed {
        inputs: inputs as u32,
        dimensions,
        base64,
        token_ids: input.map_or(0, token_ids),
    })
}

/// Token ids in an embeddings input (integers, or lists of them).
fn token_ids(v: &Value) -> u64 {
    match v {
        Value::Number(_) => 1,
        Value::Array(items) => items.iter().map(token_ids).sum(),
        _ => 0,
    }
}

/// Whether `key` appears anywhere in `v`.
fn has_key(v: &Value, key: &str) -> bool {
    match v {
        Value::Object(map) => map.iter().any(|(k, v)| k == key || has_key(v, key)),
        Value::Array(items) => items.iter().any(|i| has_key(i, key)),
        _ => false,
    }
}

/// A function tool's name in any dialect's shape: chat's `{function: {name}}`, Anthropic's and
/// the Responses API's `{name}`.
fn tool_name(v: &Value) -> Option<String> {
    v.get("function")
        .and_then(|f| f.get("name"))
        .or_else(|| v.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The tool a call would name and whether `tool_choice` requires one: `none` calls nothing;
/// `required` (chat, Responses), `any` (Anthropic) or a named tool require a call; `auto` or no
/// choice leaves it to the model (the simulator's `tool_call_share`).
fn tool_of(tools: Option<&Value>, choice: Option<&Value>) -> (Option<String>, bool) {
    let first = tools
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(tool_name);
    let kind = choice.and_then(|c| c.as_str().or_else(|| c.get("type").and_then(Value::as_str)));
    match kind {
        _ if first.is_none() => (None, false),
        Some("none") => (None, false),
        Some("required" | "any") => (first, true),
        Some("function" | "tool") => (choice.and_then(tool_name).or(first), true),
        _ => (first, false),
    }
}

/// Characters per prefix-cache block (16 tokens at four characters per token).
pub const BLOCK_CHARS: usize = 64;

/// The running hash at the end of each whole block of `text`.
pub fn prefix_blocks(text: &str) -> Vec<u64> {
    use std::hash::Hasher;
    let chars: Vec<char> = text.chars().collect();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    chars
        .chunks_exact(BLOCK_CHARS)
        .map(|block| {
            for c in block {
                h.write_u32(u32::from(*c));
            }
            h.finish()
        })
        .collect()
}

/// The text leaves of a prompt value, in order (as `text_chars` counts them).
fn push_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Array(items) => items.iter().for_each(|i| push_text(i, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| k.as_str() != "role" && k.as_str() != "type")
            .for_each(|(_, v)| push_text(v, out)),
        _ => {}
    }
}

/// Characters of text in a prompt value: every string leaf except `role` and `type` tags.
pub fn text_chars(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.iter().map(text_chars).sum(),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| k.as_str() != "role" && k.as_str() != "type")
            .map(|(_, v)| text_chars(v))
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(d: Api, v: Value) -> Result<SimRequest, String> {
        parse(d, v.to_string().as_bytes())
    }

    #[test]
    fn chat_body() {
        let r = p(
            Api::OpenAiChat,
            json!({"model":"m","stream":true,"max_tokens":5,
                   "stream_options":{"include_usage":true},
                   "messages":[{"role":"user","content":"12345678"}]}),
        )
        .unwrap();
        assert_eq!(
            r,
            SimRequest {
                model: "m".into(),
                stream: true,
                max_tokens: Some(5),
                include_usage: true,
                input_tokens: 2,
                prefix_blocks: Vec::new(),
                store: false,
                previous_response_id: None,
                cache_control: false,
                tool: None,
                tool_required: false,
                answers: Vec::new(),
                embed: None,
            }
        );
    }

    /// Issue 38: tools count as prompt, and the tool a call names follows `tool_choice` in
    /// each dialect's shape; `cache_control` anywhere marks the request.
    #[test]
    fn tools_tool_choice_and_cache_control() {
        let chat_tools = json!([{"type":"function","function":{"name":"get_weather","description":"abcd","parameters":{}}},
                                {"type":"function","function":{"name":"get_time","parameters":{}}}]);
        let r = p(
            Api::OpenAiChat,
            json!({"model":"m","tools":chat_tools,"messages":[]}),
        )
        .unwrap();
        assert_eq!(
            (r.tool.as_deref(), r.tool_required),
            (Some("get_weather"), false)
        );
        // "get_weather" + "abcd" + "get_time" = 11 + 4 + 8 characters.
        assert_eq!(r.input_tokens, 23_u64.div_ceil(4));
        assert!(!r.cache_control);
        let choose = |api, tools: &Value, choice: Value| {
            let r = p(api, json!({"model":"m","tools":tools,"tool_choice":choice})).unwrap();
            (r.tool, r.tool_required)
        };
        let named = json!({"type":"function","function":{"name":"get_time"}});
        assert_eq!(
            choose(Api::OpenAiChat, &chat_tools, named),
            (Some("get_time".into()), true)
        );
        assert_eq!(
            choose(Api::OpenAiChat, &chat_tools, json!("none")),
            (None, false)
        );
        assert_eq!(
            choose(Api::OpenAiChat, &chat_tools, json!("required")),
            (Some("get_weather".into()), true)
        );
        let flat = json!([{"name":"search","input_schema":{}}, {"name":"read","input_schema":{}}]);
        assert_eq!(
            choose(
                Api::AnthropicMessages,
                &flat,
                json!({"type":"tool","name":"read"})
            ),
            (Some("read".into()), true)
        );
        assert_eq!(
            choose(Api::AnthropicMessages, &flat, json!({"type":"any"})),
            (Some("search".into()), true)
        );
        assert_eq!(
            choose(Api::AnthropicMessages, &flat, json!({"type":"auto"})),
            (Some("search".into()), false)
        );
        assert_eq!(
            choose(
                Api::OpenAiResponses,
                &flat,
                json!({"type":"function","name":"read"})
            ),
            (Some("read".into()), true)
        );
        let r = p(
            Api::AnthropicMessages,
            json!({"model":"c","max_tokens":5,"system":[{"type":"text","text":"abcd","cache_control":{"type":"ephemeral"}}],
                   "messages":[{"role":"user","content":"hi"}]}),
        )
        .unwrap();
        assert!(r.cache_control && r.tool.is_none());
    }

    #[test]
    fn max_completion_tokens_wins_for_chat_only() {
        let body = json!({"model":"m","max_tokens":5,"max_completion_tokens":7});
        assert_eq!(
            p(Api::OpenAiChat, body.clone()).unwrap().max_tokens,
            Some(7)
        );
        assert_eq!(p(Api::OpenAiCompletions, body).unwrap().max_tokens, Some(5));
    }

    #[test]
    fn defaults_when_absent() {
        let r = p(
            Api::OpenAiCompletions,
            json!({"model":"m","prompt":"abcde"}),
        )
        .unwrap();
        assert!(!r.stream);
        assert_eq!(r.max_tokens, None);
        assert!(!r.include_usage);
        assert_eq!(r.input_tokens, 2);
        let r = p(
            Api::OpenAiChat,
            json!({"model":"m","stream":null,"max_tokens":null}),
        )
        .unwrap();
        assert!(!r.stream);
        assert_eq!(r.input_tokens, 0);
    }

    #[test]
    fn responses_counts_instructions_and_input_items_and_always_has_usage() {
        let r = p(
            Api::OpenAiResponses,
            json!({"model":"m","max_output_tokens":16,"instructions":"abcd","stream":true,
                   "input":[{"role":"user","content":[{"type":"input_text","text":"abcd"}]}]}),
        )
        .unwrap();
        assert_eq!((r.input_tokens, r.max_tokens), (2, Some(16)));
        assert!(r.include_usage && r.stream);
        // The Responses API stores unless told not to.
        assert!(r.store && r.previous_response_id.is_none());
        let r = p(
            Api::OpenAiResponses,
            json!({"model":"m","input":"abcdefgh","max_tokens":3,"store":false,
                   "previous_response_id":"resp_1"}),
        )
        .unwrap();
        assert_eq!((r.input_tokens, r.max_tokens), (2, None));
        assert!(!r.store);
        assert_eq!(r.previous_response_id.as_deref(), Some("resp_1"));
        assert!(p(Api::OpenAiResponses, json!({"model":"m","store":"no"})).is_err());
    }

    #[test]
    fn embeddings_count_their_texts_and_refuse_what_openai_refuses() {
        let r = p(
            Api::OpenAiEmbeddings,
            json!({"model":"m","input":["abcd","abcdefgh"],"dimensions":64,
                   "encoding_format":"base64"}),
        )
        .unwrap();
        let embed = Embed {
            inputs: 2,
            dimensions: Some(64),
            base64: true,
            token_ids: 0,
        };
        assert_eq!(r.embed, Some(embed));
        assert_eq!(
            (r.input_tokens, r.max_tokens, r.stream),
            (3, Some(0), false)
        );
        let r = p(Api::OpenAiEmbeddings, json!({"model":"m","input":"abcd"})).unwrap();
        assert_eq!(
            r.embed.map(|e| (e.inputs, e.dimensions, e.base64)),
            Some((1, None, false))
        );
        // Token ids: one list is one text, a list of lists several.
        let r = p(
            Api::OpenAiEmbeddings,
            json!({"model":"m","input":[1, 2, 3]}),
        )
        .unwrap();
        assert_eq!((r.embed.unwrap().inputs, r.input_tokens), (1, 3));
        let r = p(
            Api::OpenAiEmbeddings,
            json!({"model":"m","input":[[1, 2], [3]]}),
        )
        .unwrap();
        assert_eq!((r.embed.unwrap().inputs, r.input_tokens), (2, 3));
        for bad in [
            json!({"model":"m"}),
            json!({"model":"m","input":""}),
            json!({"model":"m","input":[]}),
            json!({"model":"m","input":["a", ""]}),
            json!({"model":"m","input":{"text":"a"}}),
            json!({"model":"m","input":vec!["a"; 2049]}),
            json!({"model":"m","input":"a","dimensions":0}),
            json!({"model":"m","input":"a","encoding_format":"int8"}),
        ] {
            assert!(p(Api::OpenAiEmbeddings, bad.clone()).is_err(), "{bad}");
        }
        // Elsewhere the fields mean nothing.
        let r = p(Api::OpenAiChat, json!({"model":"m","encoding_format":3})).unwrap();
        assert_eq!(r.embed, None);
    }

    #[test]
    fn anthropic_counts_system_and_parts_and_always_has_usage() {
        let r = p(
            Api::AnthropicMessages,
            json!({"model":"c","max_tokens":10,"system":"abcd",
                   "messages":[{"role":"user","content":[{"type":"text","text":"abcd"}]}]}),
        )
        .unwrap();
        assert_eq!(r.input_tokens, 2);
        assert!(r.include_usage);
    }

    #[test]
    fn rejects_bad_bodies() {
        assert!(parse(Api::OpenAiChat, b"{not json")
            .unwrap_err()
            .contains("parse the JSON"));
        assert!(parse(Api::OpenAiChat, b"[1]")
            .unwrap_err()
            .contains("JSON object"));
        assert!(p(Api::OpenAiChat, json!({}))
            .unwrap_err()
            .contains("model parameter"));
        assert!(p(Api::OpenAiChat, json!({"model":""}))
            .unwrap_err()
            .contains("model parameter"));
        assert!(p(Api::OpenAiChat, json!({"model":3}))
            .unwrap_err()
            .contains("`model`"));
        assert!(p(Api::OpenAiChat, json!({"model":"m","stream":"yes"}))
            .unwrap_err()
            .contains("`stream`"));
        assert!(
            p(Api::AnthropicMessages, json!({"model":"m","max_tokens":-1}))
                .unwrap_err()
                .contains("max_tokens")
        );
    }

    #[test]
    fn text_chars_skips_tags_and_counts_unicode_chars() {
        assert_eq!(
            text_chars(&json!({"role":"assistant","content":"héllo"})),
            5
        );
        assert_eq!(text_chars(&json!([1, null, true, "ab"])), 2);
    }
}
