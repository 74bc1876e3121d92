//! The Responses reader against streams in the shape OpenAI sends (ids, `obfuscation`, the full
//! response object in the lifecycle events), and the request body.

use super::*;
use crate::client::sse::SseParser;
use crate::client::test_spec as spec;
use crate::client::timing::{StreamTiming, TimingSummary};
use crate::model::TokensSource;
use serde_json::json;

fn info(event: &str, data: &str) -> ChunkInfo {
    responses_event(event, data.as_bytes()).expect("valid event")
}

/// Parses and times a raw stream; the n-th event is read at n × 10 ms.
fn run_stream(raw: &str) -> (Vec<ChunkInfo>, TimingSummary) {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    parser.feed(raw.as_bytes(), &mut events).expect("valid SSE");
    let infos: Vec<ChunkInfo> = events
        .iter()
        .map(|e| responses_event(&e.event, e.data.as_bytes()).expect("valid event"))
        .collect();
    let mut timing = StreamTiming::new();
    for (i, info) in infos.iter().enumerate() {
        timing.on_chunk(10.0 * (i + 1) as f64, info);
    }
    let end = 10.0 * (infos.len() + 1) as f64;
    (infos, timing.finish(end))
}

/// A gpt-4.1-mini answer as the API streams it (ids shortened).
const TEXT_STREAM: &str = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68b0a1","object":"response","created_at":1756405000,"status":"in_progress","background":false,"error":null,"incomplete_details":null,"instructions":"Be brief.","max_output_tokens":64,"max_tool_calls":null,"model":"gpt-4.1-mini-2025-04-14","output":[],"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":{"effort":null,"summary":null},"safety_identifier":null,"service_tier":"auto","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_logprobs":0,"top_p":1.0,"truncation":"disabled","usage":null,"user":null,"metadata":{}}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_68b0a1","object":"response","created_at":1756405000,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1-mini-2025-04-14","output":[],"parallel_tool_calls":true,"store":false,"tool_choice":"auto","tools":[],"usage":null,"metadata":{}}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_68b0a2","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":3,"item_id":"msg_68b0a2","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_68b0a2","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"kX0h3Fq1YbJ9Zz"}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_68b0a2","output_index":0,"content_index":0,"delta":" there","logprobs":[],"obfuscation":"Qm2"}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_68b0a2","output_index":0,"content_index":0,"delta":"!","logprobs":[],"obfuscation":"p7Lw0"}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":7,"item_id":"msg_68b0a2","output_index":0,"content_index":0,"text":"Hi there!","logprobs":[]}

event: response.content_part.done
data: {"type":"response.content_part.done","sequence_number":8,"item_id":"msg_68b0a2","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Hi there!"}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":9,"output_index":0,"item":{"id":"msg_68b0a2","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hi there!"}],"role":"assistant"}}

event: response.completed
data: {"type":"response.completed","sequence_number":10,"response":{"id":"resp_68b0a1","object":"response","created_at":1756405000,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":"Be brief.","max_output_tokens":64,"model":"gpt-4.1-mini-2025-04-14","output":[{"id":"msg_68b0a2","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hi there!"}],"role":"assistant"}],"parallel_tool_calls":true,"store":false,"temperature":1.0,"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":{"input_tokens":19,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":23},"user":null,"metadata":{}}}

"#;

#[test]
fn text_stream_in_the_real_shape() {
    let (infos, s) = run_stream(TEXT_STREAM);
    assert_eq!(infos.len(), 11);
    assert!(infos[..4].iter().all(|i| *i == ChunkInfo::default()));
    assert!(infos[4].content && infos[5].content && infos[6].content);
    assert!(infos[7..10].iter().all(|i| !i.is_token() && !i.done));
    assert!(infos[10].done);
    assert_eq!(s.ttft_ms, Some(50.0));
    assert_eq!(s.ttfc_ms, Some(50.0));
    assert_eq!(s.input_tokens, Some(19));
    assert_eq!(s.output_tokens, Some(4));
    assert_eq!(s.cached_tokens, Some(0));
    assert_eq!(s.reasoning_tokens, Some(0));
    assert_eq!(s.tokens_source, Some(TokensSource::Usage));
    assert_eq!(s.finish_reason.as_deref(), Some("stop"));
    assert_eq!(s.itl_ms, vec![10.0, 10.0]);
    assert!(s.done && s.error.is_none());
}

/// An o4-mini answer with `reasoning: {summary: auto}`: the summary first (reasoning), then the
/// message (content), cut at `max_output_tokens`.
const REASONING_STREAM: &str = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1756405100,"status":"in_progress","error":null,"incomplete_details":null,"model":"o4-mini-2025-04-16","output":[],"parallel_tool_calls":true,"reasoning":{"effort":"low","summary":"detailed"},"tool_choice":"auto","tools":[],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

event: response.reasoning_summary_part.added
data: {"type":"response.reasoning_summary_part.added","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Greeting**","obfuscation":"a"}

event: response.reasoning_summary_text.done
data: {"type":"response.reasoning_summary_text.done","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"text":"**Greeting**"}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":5,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hello","logprobs":[]}

event: response.incomplete
data: {"type":"response.incomplete","sequence_number":7,"response":{"id":"resp_1","object":"response","status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"},"model":"o4-mini-2025-04-16","output":[],"usage":{"input_tokens":2000,"input_tokens_details":{"cached_tokens":1920},"output_tokens":64,"output_tokens_details":{"reasoning_tokens":62},"total_tokens":2064}}}

"#;

#[test]
fn reasoning_counts_toward_ttft_not_ttfc_and_a_cut_is_length() {
    let (infos, s) = run_stream(REASONING_STREAM);
    assert!(infos[3].reasoning && !infos[3].content);
    assert!(infos[6].content);
    assert_eq!(s.ttft_ms, Some(40.0));
    assert_eq!(s.ttfc_ms, Some(70.0));
    assert_eq!(s.finish_reason.as_deref(), Some("length"));
    assert_eq!(s.output_tokens, Some(64));
    assert_eq!(s.reasoning_tokens, Some(62));
    assert_eq!((s.input_tokens, s.cached_tokens), (Some(2000), Some(1920)));
    assert!(s.done);
    let other = info(
        "response.incomplete",
        r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}}"#,
    );
    assert_eq!(other.finish_reason.as_deref(), Some("content_filter"));
    assert!(other.done);
}

#[test]
fn tool_call_arguments_count_but_an_empty_delta_does_not() {
    let args = info(
        "response.function_call_arguments.delta",
        r#"{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"{\"city\":"}"#,
    );
    assert!(args.content);
    let empty = info(
        "response.function_call_arguments.delta",
        r#"{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":""}"#,
    );
    assert!(!empty.is_token());
    let empty_text = info(
        "response.output_text.delta",
        r#"{"type":"response.output_text.delta","delta":"","logprobs":[]}"#,
    );
    assert!(!empty_text.is_token());
    let reasoning_text = info(
        "response.reasoning_text.delta",
        r#"{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"Hm","sequence_number":4}"#,
    );
    assert!(reasoning_text.reasoning && !reasoning_text.content);
}

/// Issue 38, part 1: a function call in the Responses API's wire shape (the item added as
/// `function_call`, its arguments' deltas, `response.function_call_arguments.done`, the item
/// done), counted as one call with its argument deltas; a whole answer counts its call items.
#[test]
fn function_calls_are_counted_with_their_argument_deltas() {
    let raw = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1756405000,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1-mini","output":[],"parallel_tool_calls":true,"tool_choice":"auto","tools":[{"type":"function","name":"get_weather","description":null,"parameters":{"type":"object","properties":{}},"strict":true}],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_1","output_index":0,"delta":"{\"city\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"\"Paris\"}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":4,"item_id":"fc_1","output_index":0,"arguments":"{\"city\":\"Paris\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"get_weather"}}

event: response.completed
data: {"type":"response.completed","sequence_number":6,"response":{"id":"resp_1","object":"response","created_at":1756405000,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1-mini","output":[{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"get_weather"}],"usage":{"input_tokens":60,"input_tokens_details":{"cached_tokens":0},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":69}}}

"#;
    let (_, s) = run_stream(raw);
    assert_eq!((s.tool_calls, s.tool_args), (1, 2));
    // The first argument delta (the third event) is the first token.
    assert_eq!(s.ttft_ms, Some(30.0));
    // A message item added is no call.
    let message = info(
        "response.output_item.added",
        r#"{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}"#,
    );
    assert_eq!(message.tool_calls, 0);
    let whole = whole_response(br#"{"id":"resp_1","object":"response","status":"completed","output":[{"id":"fc_1","type":"function_call","status":"completed","arguments":"{}","call_id":"call_1","name":"a"},{"id":"fc_2","type":"function_call","status":"completed","arguments":"{\"x\":1}","call_id":"call_2","name":"b"}],"usage":{"input_tokens":5,"output_tokens":7}}"#).unwrap();
    assert_eq!((whole.tool_calls, whole.tool_args), (2, 0));
    assert!(whole.content);
}

#[test]
fn failures_are_classified_by_their_code() {
    let failed = |code: &str| {
        info(
            "response.failed",
            &format!(
                r#"{{"type":"response.failed","sequence_number":5,"response":{{"id":"resp_1","status":"failed","error":{{"code":"{code}","message":"boom"}},"usage":null}}}}"#
            ),
        )
        .error
        .expect("an error")
    };
    let e = failed("rate_limit_exceeded");
    assert_eq!(
        (e.class, e.error_type.as_deref(), e.message.as_str()),
        (
            Some(ErrorClass::Http429),
            Some("rate_limit_exceeded"),
            "boom"
        )
    );
    assert_eq!(failed("server_error").class, Some(ErrorClass::Http5xx));
    assert_eq!(failed("insufficient_quota").class, Some(ErrorClass::Quota));
    assert_eq!(failed("invalid_prompt").class, None);
    // The top-level `error` event: code and message at its top level.
    let e = info(
        "error",
        r#"{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached for requests","param":null,"sequence_number":2}"#,
    )
    .error
    .expect("an error");
    assert_eq!(e.class, Some(ErrorClass::Http429));
    assert_eq!(e.message, "Rate limit reached for requests");
    let e = info("error", "upstream went away").error.expect("an error");
    assert_eq!((e.class, e.message.as_str()), (None, "upstream went away"));
    // A failure without an error object still fails.
    let e = info(
        "response.failed",
        r#"{"type":"response.failed","response":{}}"#,
    );
    assert!(e.error.is_some() && !e.done);
    // A gateway's untyped error body.
    let e = info(
        "message",
        r#"{"error":{"message":"overloaded","code":"server_error"}}"#,
    );
    assert_eq!(e.error.expect("an error").class, Some(ErrorClass::Http5xx));
}

#[test]
fn unknown_keep_alive_and_malformed_events() {
    for (name, data) in [
        (
            "response.web_search_call.searching",
            r#"{"type":"response.web_search_call.searching","item_id":"ws_1","output_index":0,"sequence_number":3}"#,
        ),
        (
            "response.future_thing",
            r#"{"type":"response.future_thing","delta":"x"}"#,
        ),
        ("message", ""),
        ("message", "[DONE]"),
        (
            "response.audio.delta",
            r#"{"type":"response.audio.delta","delta":"UklGRg=="}"#,
        ),
    ] {
        assert_eq!(info(name, data), ChunkInfo::default(), "{name}");
    }
    // The type falls back to the event's name; the JSON's type wins over it.
    assert!(info("response.output_text.delta", r#"{"delta":"a"}"#).content);
    assert!(!info("response.completed", r#"{"type":"response.in_progress"}"#).done);
    let err = responses_event("response.output_text.delta", b"{\"delta\":").unwrap_err();
    assert!(err.0.contains("{\"delta\":"), "{}", err.0);
    // Invalid UTF-8 in a delta is replaced, not fatal.
    let mut data = br#"{"type":"response.output_text.delta","delta":"a"#.to_vec();
    data.extend_from_slice(b"\xff\"}");
    assert!(
        responses_event("response.output_text.delta", &data)
            .unwrap()
            .content
    );
}

/// A stream that ends without `response.completed`, `response.incomplete` or `response.failed`
/// never reads as done (the client calls it a disconnect).
#[test]
fn no_terminal_event_is_not_done() {
    let cut = TEXT_STREAM
        .split("event: response.completed")
        .next()
        .expect("the stream");
    let (infos, s) = run_stream(cut);
    assert!(infos.iter().all(|i| !i.done));
    assert!(!s.done);
}

#[test]
fn body_shape() {
    let mut req = spec();
    assert_eq!(
        responses_body("gpt-4.1", &req),
        json!({"model": "gpt-4.1", "input": "Say hi", "max_output_tokens": 64,
               "stream": true, "store": false})
    );
    req.system = Some("Be brief".into());
    req.temperature = Some(0.5);
    req.max_tokens = None;
    req.extra_body.insert(
        "reasoning".into(),
        json!({"effort": "low", "summary": "auto"}),
    );
    assert_eq!(
        responses_body("o4-mini", &req),
        json!({"model": "o4-mini", "input": "Say hi", "instructions": "Be brief",
               "temperature": 0.5, "stream": true, "store": false,
               "reasoning": {"effort": "low", "summary": "auto"}})
    );
    req.extra_body.insert("store".into(), json!(true));
    assert_eq!(responses_body("m", &req)["store"], true);
    req.extra_body.insert("store".into(), Value::Null);
    assert!(responses_body("m", &req).get("store").is_none());
}

#[test]
fn messages_become_input_items() {
    let mut req = spec();
    req.messages = vec![
        json!({"role": "user", "content": "first"}),
        json!({"role": "assistant", "content": "answer"}),
        json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
        ]}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "seen"}]}),
    ];
    let body = responses_body("m", &req);
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "answer"},
            {"role": "user", "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "data:image/png;base64,AA"}
            ]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "seen"}]}
        ])
    );
}

/// Issue 38, part 1: the Responses API takes function tools flat (`{type, name, description,
/// parameters}`), a named choice as `{type: function, name}`, and `prompt_cache_key`.
#[test]
fn tools_are_flat_and_the_choice_names_the_function_at_the_top() {
    use crate::scenario::tools::{ToolChoice, Tools};
    let req = RequestSpec {
        prompt: "hi".into(),
        tools: Some(Tools::sample()),
        tool_choice: Some(ToolChoice::Function("get_weather".into())),
        prompt_cache_key: Some("agent-7".into()),
        ..RequestSpec::default()
    };
    let body = responses_body("m", &req);
    assert_eq!(
        body["tools"][0],
        serde_json::json!({"type": "function", "name": "get_weather", "description": "Weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}})
    );
    assert_eq!(
        body["tools"][1],
        serde_json::json!({"type": "function", "name": "get_time",
            "parameters": {"type": "object", "properties": {}}})
    );
    assert_eq!(
        body["tool_choice"],
        serde_json::json!({"type": "function", "name": "get_weather"})
    );
    assert_eq!(body["prompt_cache_key"], "agent-7");
    let req = RequestSpec {
        tool_choice: Some(ToolChoice::Required),
        ..req
    };
    assert_eq!(responses_body("m", &req)["tool_choice"], "required");
}
