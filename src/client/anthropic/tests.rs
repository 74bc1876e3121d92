//! Unit tests of the Anthropic Messages dialect: request bodies (tools, tool choice, cache
//! breakpoints) and event interpretation on recorded streams.

use super::*;
use crate::client::chunk::InBandError;
use crate::client::sse::SseParser;
use crate::client::timing::{StreamTiming, TimingSummary};
use crate::model::TokensSource;

use crate::client::test_spec as spec;

fn event(name: &str, data: &str) -> SseEvent {
    SseEvent {
        event: name.to_owned().into(),
        data: data.into(),
        id: None,
        retry: None,
    }
}

fn info(name: &str, data: &str) -> ChunkInfo {
    interpret_messages(&event(name, data)).expect("valid event")
}

/// Parses and times a raw stream; the n-th event is read at n × 10 ms.
fn run_stream(raw: &str) -> (Vec<ChunkInfo>, TimingSummary) {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    parser.feed(raw.as_bytes(), &mut events).expect("valid SSE");
    let infos: Vec<ChunkInfo> = events
        .iter()
        .map(|e| interpret_messages(e).expect("valid event"))
        .collect();
    let mut timing = StreamTiming::new();
    for (i, info) in infos.iter().enumerate() {
        timing.on_chunk(10.0 * (i + 1) as f64, info);
    }
    (
        infos.clone(),
        timing.finish(10.0 * (infos.len() + 1) as f64),
    )
}

#[test]
fn body_shape() {
    let mut req = spec();
    assert_eq!(
        messages_body("claude", &req),
        json!({"model": "claude", "max_tokens": 64,
               "messages": [{"role": "user", "content": "Say hi"}], "stream": true})
    );
    req.system = Some("Be brief".into());
    req.temperature = Some(1.0);
    req.extra_body.insert("top_k".into(), json!(5));
    req.extra_body.insert("max_tokens".into(), json!(9));
    assert_eq!(
        messages_body("claude", &req),
        json!({"model": "claude", "max_tokens": 9, "system": "Be brief", "temperature": 1.0,
               "messages": [{"role": "user", "content": "Say hi"}], "stream": true,
               "top_k": 5})
    );
}

const TEXT_STREAM: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}

event: message_stop
data: {"type":"message_stop"}

"#;

#[test]
fn text_stream() {
    let (infos, s) = run_stream(TEXT_STREAM);
    assert_eq!(infos.len(), 8);
    assert_eq!(
        (infos[0].input_tokens, infos[0].output_tokens),
        (Some(25), Some(1))
    );
    assert!(!infos[1].is_token() && !infos[2].is_token());
    assert!(infos[3].content && infos[4].content);
    assert_eq!(infos[6].output_tokens, Some(15));
    assert!(infos[7].done);
    assert_eq!(s.ttft_ms, Some(40.0));
    assert_eq!(s.output_tokens, Some(15));
    assert_eq!(s.input_tokens, Some(25));
    assert_eq!(s.tokens_source, Some(TokensSource::Usage));
    assert_eq!(s.tpot_ms, Some(10.0 / 14.0));
    assert_eq!(s.finish_reason.as_deref(), Some("end_turn"));
    assert!(s.done && s.error.is_none());
}

#[test]
fn thinking_signature_and_tool_input() {
    let thinking = info(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}"#,
    );
    assert!(thinking.reasoning && !thinking.content);
    let sig = info(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}"#,
    );
    assert!(!sig.is_token());
    let tool = info(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}}"#,
    );
    assert!(tool.content);
    let empty = info(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
    );
    assert!(!empty.is_token());
    let empty_text = info(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}"#,
    );
    assert!(!empty_text.is_token());
}

#[test]
fn thinking_then_text_sets_ttft_and_ttfc_apart() {
    let raw = r#"event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":0}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":5,"output_tokens":40}}

event: message_stop
data: {"type":"message_stop"}

"#;
    let (_, s) = run_stream(raw);
    assert_eq!(s.ttft_ms, Some(20.0));
    assert_eq!(s.ttfc_ms, Some(40.0));
    assert_eq!(s.itl_ms, vec![20.0]);
    assert_eq!(s.output_tokens, Some(40));
    assert_eq!(s.finish_reason.as_deref(), Some("max_tokens"));
}

#[test]
fn error_event_mid_stream() {
    let err = info(
        "error",
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
    )
    .error;
    assert_eq!(
        err,
        Some(InBandError {
            error_type: Some("overloaded_error".into()),
            message: "Overloaded".into(),
            status: None,
            class: None,
        })
    );
    // Type taken from JSON even if the SSE event name is absent, and vice versa.
    let err = info(
        "message",
        r#"{"type":"error","error":{"type":"api_error","message":"x"}}"#,
    );
    assert_eq!(err.error.unwrap().error_type.as_deref(), Some("api_error"));
    let err = info("error", "Internal server error");
    assert_eq!(err.error.unwrap().message, "Internal server error");
    assert!(info("error", "").error.is_some());
}

#[test]
fn type_falls_back_to_event_name() {
    assert!(info("message_stop", "{}").done);
    assert!(info("message_stop", "").done);
    let delta = info(
        "content_block_delta",
        r#"{"delta":{"type":"text_delta","text":"a"}}"#,
    );
    assert!(delta.content);
    // The JSON type wins over the event name.
    assert!(!info("message_stop", r#"{"type":"ping"}"#).done);
}

#[test]
fn ignored_and_malformed_events() {
    assert_eq!(info("ping", r#"{"type":"ping"}"#), ChunkInfo::default());
    assert_eq!(
        info("future_event", r#"{"type":"future_event","x":1}"#),
        ChunkInfo::default()
    );
    assert_eq!(
        info(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#
        ),
        ChunkInfo {
            tool_calls: 1,
            ..ChunkInfo::default()
        },
        "a tool_use block's start is a call, not yet a token"
    );
    assert!(info("message", "[DONE]").done);
    let err = interpret_messages(&event("content_block_delta", "{not json")).unwrap_err();
    assert!(err.0.contains("{not json"));
    // A string `message` does not fail the event.
    assert_eq!(
        info(
            "message_start",
            r#"{"type":"message_start","message":"hi"}"#
        ),
        ChunkInfo::default()
    );
}

/// Issue 12: Anthropic's `input_tokens` leaves out cache reads and writes; the record's
/// input counts the whole prompt and `cached_tokens` the cache reads.
#[test]
fn cache_read_tokens_are_cached_and_part_of_the_input() {
    let start = info(
        "message_start",
        r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":2000,"output_tokens":1}}}"#,
    );
    assert_eq!(
        (start.input_tokens, start.cached_tokens),
        (Some(2015), Some(2000))
    );
    // The cache writes are kept too: they are billed at their own price (docs/cost.md).
    assert_eq!(start.cache_write_tokens, Some(5));
    // A whole answer keeps reads and writes apart as well.
    let whole = whole_message(br#"{"type":"message","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":2000,"output_tokens":3}}"#).unwrap();
    assert_eq!(
        (
            whole.input_tokens,
            whole.cached_tokens,
            whole.cache_write_tokens
        ),
        (Some(2015), Some(2000), Some(5))
    );
}

/// Issue 38, part 1: a tool call in Anthropic's wire shape (text block, then a `tool_use`
/// block opened by `content_block_start` and filled by `input_json_delta`s, the first one
/// empty; `stop_reason: tool_use`), counted as one call with its non-empty argument deltas.
#[test]
fn tool_use_blocks_are_counted_with_their_input_deltas() {
    let raw = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":400,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"is\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}

event: message_stop
data: {"type":"message_stop"}

"#;
    let (_, s) = run_stream(raw);
    assert_eq!((s.tool_calls, s.tool_args), (1, 2));
    assert_eq!(s.finish_reason.as_deref(), Some("tool_use"));
    let whole = whole_message(br#"{"type":"message","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":{"input_tokens":400,"output_tokens":40}}"#).unwrap();
    assert_eq!((whole.tool_calls, whole.tool_args), (1, 0));
}

/// Issue 38, part 1: Anthropic takes `{name, description, input_schema}` and its own
/// `tool_choice` types.
#[test]
fn tools_go_as_input_schemas_with_anthropics_choices() {
    use crate::scenario::tools::{ToolChoice, Tools};
    let req = RequestSpec {
        prompt: "hi".into(),
        tools: Some(Tools::sample()),
        tool_choice: Some(ToolChoice::Function("get_time".into())),
        ..RequestSpec::default()
    };
    let body = messages_body("m", &req);
    assert_eq!(
        body["tools"],
        json!([
            {"name": "get_weather", "description": "Weather of a city",
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            {"name": "get_time", "input_schema": {"type": "object", "properties": {}}}
        ])
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "get_time"})
    );
    for (choice, ty) in [
        (ToolChoice::Auto, "auto"),
        (ToolChoice::None, "none"),
        (ToolChoice::Required, "any"),
    ] {
        let req = RequestSpec {
            tool_choice: Some(choice),
            ..req.clone()
        };
        assert_eq!(messages_body("m", &req)["tool_choice"], json!({"type": ty}));
    }
    assert!(body.get("prompt_cache_key").is_none());
    assert!(
        !body.to_string().contains("cache_control"),
        "no breakpoints unless asked"
    );
}

/// Issue 38, part 3: `cache: auto` marks the last tool, the system prompt and the latest
/// message (a string becomes one text block; a list's last block is marked).
#[test]
fn cache_auto_marks_the_last_tool_the_system_prompt_and_the_latest_message() {
    use crate::scenario::tools::Tools;
    let ephemeral = json!({"type": "ephemeral"});
    let req = RequestSpec {
        system: Some("You are terse.".into()),
        messages: vec![
            json!({"role": "user", "content": "first"}),
            json!({"role": "assistant", "content": "ok"}),
            json!({"role": "user", "content": "second"}),
        ],
        tools: Some(Tools::sample()),
        cache_auto: true,
        ..RequestSpec::default()
    };
    let body = messages_body("m", &req);
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(body["tools"][1]["cache_control"], ephemeral);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": ephemeral}])
    );
    assert_eq!(
        body["messages"][0]["content"], "first",
        "only the latest message"
    );
    assert_eq!(
        body["messages"][2]["content"],
        json!([{"type": "text", "text": "second", "cache_control": ephemeral}])
    );
    assert_eq!(
        body.to_string().matches("cache_control").count(),
        3,
        "at most 4 allowed"
    );
    // A message of content blocks gets the mark on its last block; no tools, no system:
    // one breakpoint.
    let req = RequestSpec {
        messages: vec![json!({"role": "user", "content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})],
        cache_auto: true,
        ..RequestSpec::default()
    };
    let body = messages_body("m", &req);
    assert_eq!(
        body["messages"][0]["content"][1]["cache_control"],
        ephemeral
    );
    assert!(body["messages"][0]["content"][0]
        .get("cache_control")
        .is_none());
    assert_eq!(body.to_string().matches("cache_control").count(), 1);
}
