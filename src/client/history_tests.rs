//! An agent's conversation (kept in chat's shape: an assistant message with `tool_calls`, then
//! `role: tool` results) in each dialect's request body: chat sends it as it is, Anthropic as
//! `tool_use` blocks and one user message of `tool_result` blocks (the cache breakpoint of
//! `cache: auto` on the last result), the Responses API as `function_call` and
//! `function_call_output` items.

use super::dialect;
use crate::dialect::Api;
use serde_json::{json, Value};

/// A task of two turns answered: the model's two calls (with text), then a synthetic call
/// (no text left), each answered by a result.
fn history() -> Vec<Value> {
    let call = |id: &str, name: &str, args: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}});
    vec![
        json!({"role": "user", "content": "fix the test"}),
        json!({"role": "assistant", "content": "Looking.", "tool_calls": [
            call("call_a", "read_file", "{\"path\":\"a.rs\"}"),
            call("call_b", "run_tests", "{}"),
        ]}),
        json!({"role": "tool", "tool_call_id": "call_a", "content": "fn a() {}"}),
        json!({"role": "tool", "tool_call_id": "call_b", "content": "1 failed"}),
        json!({"role": "assistant", "content": null, "tool_calls": [
            call("call_c", "read_file", "{\"path\":"),
        ]}),
        json!({"role": "tool", "tool_call_id": "call_c", "content": "cut"}),
    ]
}

fn body(api: Api, cache_auto: bool) -> Value {
    let spec = crate::scenario::RequestSpec {
        system: Some("You are an agent.".into()),
        messages: history(),
        cache_auto,
        ..super::test_spec()
    };
    (dialect::of(api).body)("m", &spec)
}

#[test]
fn chat_sends_the_history_as_it_is() {
    let b = body(Api::OpenAiChat, false);
    let messages = b["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1..], history()[..]);
}

#[test]
fn anthropic_gets_tool_use_blocks_and_one_user_message_of_results() {
    let b = body(Api::AnthropicMessages, true);
    let expected = json!([
        {"role": "user", "content": "fix the test"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.rs"}},
            {"type": "tool_use", "id": "call_b", "name": "run_tests", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "fn a() {}"},
            {"type": "tool_result", "tool_use_id": "call_b", "content": "1 failed"},
        ]},
        // No text left: no empty text block; arguments cut short kept as text.
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_c", "name": "read_file",
             "input": {"arguments": "{\"path\":"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_c", "content": "cut",
             "cache_control": {"type": "ephemeral"}},
        ]},
    ]);
    assert_eq!(b["messages"], expected);
    assert_eq!(b["system"][0]["text"], "You are an agent.");
}

#[test]
fn responses_gets_function_call_items_and_their_outputs() {
    let b = body(Api::OpenAiResponses, false);
    let expected = json!([
        {"role": "user", "content": "fix the test"},
        {"role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "call_a", "name": "read_file",
         "arguments": "{\"path\":\"a.rs\"}"},
        {"type": "function_call", "call_id": "call_b", "name": "run_tests", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_a", "output": "fn a() {}"},
        {"type": "function_call_output", "call_id": "call_b", "output": "1 failed"},
        {"type": "function_call", "call_id": "call_c", "name": "read_file",
         "arguments": "{\"path\":"},
        {"type": "function_call_output", "call_id": "call_c", "output": "cut"},
    ]);
    assert_eq!(b["input"], expected);
}
