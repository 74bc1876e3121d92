//! Whole answers (`request.stream: false`) read in each dialect: bodies in the shapes of the
//! providers' API references (OpenAI `chat.completion`, `text_completion` and the Responses
//! `response` object; Anthropic's `message`), their error bodies, and the request bodies that
//! ask for them.

use super::chunk::ChunkInfo;
use super::dialect;
use crate::dialect::Api;
use crate::model::ErrorClass;

fn whole(api: Api, body: &str) -> ChunkInfo {
    (dialect::of(api).reader)()
        .whole(body.as_bytes())
        .expect("a readable answer")
}

#[test]
fn a_chat_completion_gives_its_usage_finish_reason_and_content() {
    let body = r#"{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"The image shows a wooden boardwalk.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":10,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_fc9f1d7035"}"#;
    let info = whole(Api::OpenAiChat, body);
    assert!(
        info.content && info.done && info.error.is_none(),
        "{info:?}"
    );
    assert_eq!(
        (
            info.output_tokens,
            info.input_tokens,
            info.cached_tokens,
            info.reasoning_tokens
        ),
        (Some(46), Some(1117), Some(1024), Some(10))
    );
    assert_eq!(info.finish_reason.as_deref(), Some("stop"));
    // A tool call's arguments are its content.
    let tool = r#"{"id":"chatcmpl-abc123","object":"chat.completion","created":1699896916,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc123","type":"function","function":{"name":"get_current_weather","arguments":"{\n\"location\": \"Boston, MA\"\n}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99}}"#;
    let info = whole(Api::OpenAiChat, tool);
    assert!(info.content, "{info:?}");
    assert_eq!(info.finish_reason.as_deref(), Some("tool_calls"));
    // vLLM's reasoning parser puts the thinking next to the content.
    let vllm = r#"{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"Let me think","content":null},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}}"#;
    let info = whole(Api::OpenAiChat, vllm);
    assert!(info.reasoning && !info.content, "{info:?}");
}

#[test]
fn a_text_completion_gives_its_text_and_a_cut() {
    let body = r#"{"id":"cmpl-uqkvlQyYK7bGYrRHQ0eXlWi7","object":"text_completion","created":1589478378,"model":"gpt-3.5-turbo-instruct","system_fingerprint":"fp_44709d6fcb","choices":[{"text":"\n\nThis is indeed a test","index":0,"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}"#;
    let info = whole(Api::OpenAiCompletions, body);
    assert!(info.content && info.done, "{info:?}");
    assert_eq!((info.output_tokens, info.input_tokens), (Some(7), Some(5)));
    assert_eq!(info.finish_reason.as_deref(), Some("length"));
}

#[test]
fn an_anthropic_message_gives_its_usage_and_stop_reason() {
    let body = r#"{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"thinking","thinking":"The user greets me.","signature":"EqQBCgIYAhIM"},{"type":"text","text":"Hi! My name is Claude."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2095,"output_tokens":503,"cache_creation_input_tokens":0,"cache_read_input_tokens":100}}"#;
    let info = whole(Api::AnthropicMessages, body);
    assert!(info.content && info.reasoning && info.done, "{info:?}");
    assert_eq!(info.output_tokens, Some(503));
    assert_eq!(info.cached_tokens, Some(100));
    assert!(info.input_tokens >= Some(2095), "{info:?}");
    assert_eq!(info.finish_reason.as_deref(), Some("end_turn"));
    let tool = r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude","content":[{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"location":"San Francisco, CA"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":20}}"#;
    assert!(whole(Api::AnthropicMessages, tool).content);
    let err = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}"#;
    let info = whole(Api::AnthropicMessages, err);
    let e = info.error.expect("an error body is an error");
    assert_eq!(e.error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(e.message, "Overloaded");
}

#[test]
fn a_responses_object_is_read_as_the_terminal_event_its_status_names() {
    let body = r#"{"id":"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"gpt-4.1-2025-04-14","output":[{"type":"message","id":"msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b","status":"completed","role":"assistant","content":[{"type":"output_text","text":"In a peaceful grove beneath a silver moon...","annotations":[]}]}],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":123},"user":null,"metadata":{}}"#;
    let mut reader = (dialect::of(Api::OpenAiResponses).reader)();
    let info = reader.whole(body.as_bytes()).unwrap();
    assert!(
        info.content && info.done && info.error.is_none(),
        "{info:?}"
    );
    assert_eq!(
        (info.output_tokens, info.input_tokens),
        (Some(87), Some(36))
    );
    assert_eq!(info.finish_reason.as_deref(), Some("stop"));
    // Its id continues a chained session.
    assert_eq!(
        reader.take_response_id().as_deref(),
        Some("resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b")
    );
    let cut = r#"{"id":"resp_1","object":"response","status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"reasoning","id":"rs_1","summary":[]}],"usage":{"input_tokens":20,"output_tokens":16,"output_tokens_details":{"reasoning_tokens":16},"total_tokens":36}}"#;
    let info = whole(Api::OpenAiResponses, cut);
    assert!(!info.content && !info.reasoning, "{info:?}");
    assert_eq!(info.finish_reason.as_deref(), Some("length"));
    assert_eq!(
        (info.output_tokens, info.reasoning_tokens),
        (Some(16), Some(16))
    );
    let failed = r#"{"id":"resp_2","object":"response","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"incomplete_details":null,"output":[],"usage":null}"#;
    let e = whole(Api::OpenAiResponses, failed).error.expect("failed");
    assert_eq!(e.class, Some(ErrorClass::Http5xx));
    let refused = r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
    let e = whole(Api::OpenAiResponses, refused)
        .error
        .expect("an error body");
    assert_eq!(e.class, Some(ErrorClass::Http429));
}

#[test]
fn an_odd_body_is_a_malformed_answer_never_a_panic() {
    for api in Api::ALL {
        let mut reader = (dialect::of(api).reader)();
        for body in [
            "",
            "not json",
            "{\"choices\": 3}",
            "[1, 2]",
            "{\"content\": \"x\"",
        ] {
            // Either malformed or an answer without tokens; nothing panics.
            if let Ok(info) = reader.whole(body.as_bytes()) {
                assert!(!info.content, "{api:?} {body}: {info:?}");
            }
        }
        assert!(reader.whole(b"not json").is_err(), "{api:?}");
    }
}

#[test]
fn stream_false_asks_for_a_whole_answer_in_every_dialect() {
    let mut req = super::test_spec();
    req.stream = false;
    for api in Api::ALL {
        let body = (dialect::of(api).body)("m", &req);
        if api.embeds() {
            // Never streamed: an embeddings request has no stream field to send.
            assert!(body.get("stream").is_none(), "{api:?}: {body}");
        } else {
            assert_eq!(body["stream"], false, "{api:?}: {body}");
        }
        assert!(body.get("stream_options").is_none(), "{api:?}: {body}");
    }
    let streamed = (dialect::of(Api::OpenAiChat).body)("m", &super::test_spec());
    assert_eq!(streamed["stream"], true);
    assert_eq!(streamed["stream_options"]["include_usage"], true);
}
