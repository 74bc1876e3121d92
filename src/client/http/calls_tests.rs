//! The model's tool calls kept from an answer (`PreparedTarget::keep_calls`), in every dialect
//! that has calls, streamed and whole: the events in the providers' shapes go through the
//! stream's reading as they would arrive, and the attempt holds each call's id, name and joined
//! arguments. Without the flag nothing is kept.

use super::*;
use crate::dialect::Api;
use crate::model::ToolCall;

fn target(api: Api, keep: bool) -> PreparedTarget {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "hi").unwrap();
    let yaml = format!(
        "name: t\ntarget:\n  api: {}\n  base_url: http://127.0.0.1:9/v1\n  models: [m]\n\
         request:\n  prompt_file: p.txt\n  max_tokens: 4\nload:\n  ladder: [1]\n",
        api.as_str()
    );
    let t = crate::scenario::load_str(&yaml, &dir.path().join("s.yaml"), &|_| None)
        .unwrap()
        .target;
    PreparedTarget::new(&t, "http://127.0.0.1:1/v1")
        .unwrap()
        .keeping_calls(keep)
}

/// The attempt after reading `raw` (a whole event stream) in one piece.
fn read(api: Api, keep: bool, raw: &str) -> Attempt {
    let target = target(api, keep);
    let start = Instant::now();
    let mut read = StreamRead::new(&target, start, 200);
    read.take(raw.as_bytes(), start)
        .expect("the stream ends with its end marker")
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

const CHAT: &str = r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;

#[test]
fn a_chat_stream_keeps_its_calls_by_index_when_asked() {
    let a = read(Api::OpenAiChat, true, CHAT);
    assert!(a.error_class.is_none(), "{a:?}");
    assert_eq!(
        a.calls,
        [
            call("call_a", "get_weather", r#"{"city":"Paris"}"#),
            call("call_b", "get_time", "{}")
        ]
    );
    // Not asked: counted, not kept.
    let a = read(Api::OpenAiChat, false, CHAT);
    assert!(a.calls.is_empty());
    assert_eq!(a.timing.unwrap().tool_calls, 2);
}

/// llama-cpp-python names the call again (index, id, name) with every argument token.
#[test]
fn a_chat_call_named_again_in_every_delta_is_kept_once() {
    let delta = |args: &str| {
        format!(
            "data: {{\"id\": \"chatcmpl-c8\", \"choices\": [{{\"index\": 0, \"finish_reason\": null, \"delta\": {{\"role\": null, \"content\": null, \"function_call\": {{\"name\": \"get_order_status\", \"arguments\": \"{args}\"}}, \"tool_calls\": [{{\"index\": 0, \"id\": \"call__0_get_order_status_cmpl-c8\", \"type\": \"function\", \"function\": {{\"name\": \"get_order_status\", \"arguments\": \"{args}\"}}}}]}}}}]}}\n\n"
        )
    };
    let raw = [
        delta("{"),
        delta(r#"\"n\": "#),
        delta("1}"),
        "data: [DONE]\n\n".into(),
    ]
    .concat();
    let a = read(Api::OpenAiChat, true, &raw);
    assert_eq!(
        a.calls,
        [call(
            "call__0_get_order_status_cmpl-c8",
            "get_order_status",
            r#"{"n": 1}"#
        )]
    );
}

#[test]
fn an_anthropic_stream_keeps_its_tool_use_blocks() {
    let raw = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me check."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01B","name":"get_time","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}

event: message_stop
data: {"type":"message_stop"}

"#;
    let a = read(Api::AnthropicMessages, true, raw);
    assert_eq!(
        a.calls,
        [
            call("toolu_01A", "get_weather", r#"{"city": "Paris"}"#),
            call("toolu_01B", "get_time", "{}")
        ]
    );
    assert!(read(Api::AnthropicMessages, false, raw).calls.is_empty());
}

#[test]
fn a_responses_stream_keeps_its_function_calls() {
    let raw = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_X","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_1","output_index":0,"delta":"{\"city\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"\"Paris\"}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":4,"item_id":"fc_1","output_index":0,"arguments":"{\"city\":\"Paris\"}"}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_1","status":"completed","output":[{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_X","name":"get_weather"}],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}

"#;
    let a = read(Api::OpenAiResponses, true, raw);
    assert_eq!(
        a.calls,
        [call("call_X", "get_weather", r#"{"city":"Paris"}"#)]
    );
    // A server that sends no deltas: the terminal event's item says it all.
    let quiet: String = raw
        .split("\n\n")
        .filter(|e| !e.contains("function_call_arguments"))
        .map(|e| format!("{e}\n\n"))
        .collect();
    let a = read(Api::OpenAiResponses, true, &quiet);
    assert_eq!(
        a.calls,
        [call("call_X", "get_weather", r#"{"city":"Paris"}"#)]
    );
}

/// Whole answers (`stream: false`), read by the same keepers.
#[test]
fn whole_answers_keep_their_calls_in_every_dialect() {
    let keep = |api: Api, body: &str| {
        let mut log = CallLog::default();
        (dialect::of(api).whole_calls)(body.as_bytes(), &mut log);
        log.into_calls()
    };
    let chat = r#"{"id":"chatcmpl-abc123","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc123","type":"function","function":{"name":"get_current_weather","arguments":"{\"location\": \"Boston, MA\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99}}"#;
    assert_eq!(
        keep(Api::OpenAiChat, chat),
        [call(
            "call_abc123",
            "get_current_weather",
            r#"{"location": "Boston, MA"}"#
        )]
    );
    let anthropic = r#"{"id":"msg_01","type":"message","role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":9}}"#;
    assert_eq!(
        keep(Api::AnthropicMessages, anthropic),
        [call("toolu_01", "get_weather", r#"{"city":"Paris"}"#)]
    );
    let responses = r#"{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}],"usage":{"input_tokens":10,"output_tokens":9,"total_tokens":19}}"#;
    assert_eq!(
        keep(Api::OpenAiResponses, responses),
        [call("call_1", "get_weather", r#"{"city":"Paris"}"#)]
    );
    assert!(keep(Api::OpenAiCompletions, chat).is_empty());
}
