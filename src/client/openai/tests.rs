//! Unit tests for the OpenAI dialects: request bodies, chunk interpretation on recorded-style
//! streams from many servers, and error bodies in every known shape.

use super::*;
use crate::client::error_body::{parse_error_body, truncate, MAX_ERROR_MESSAGE_CHARS};
use crate::client::sse::SseParser;
use crate::client::timing::{StreamTiming, TimingSummary};
use crate::model::TokensSource;

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
               "max_completion_tokens": 64, "stream": true,
               "stream_options": {"include_usage": true}})
    );
    req.system = Some("Be brief".into());
    req.temperature = Some(0.0);
    req.max_tokens = Some(5);
    req.max_tokens_field = crate::scenario::LimitField::parse("max_tokens").unwrap();
    req.extra_body.insert("seed".into(), json!(7));
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
fn no_limit_sends_no_limit_field() {
    let mut req = spec();
    req.max_tokens = None;
    for body in [chat_body("m", &req), completions_body("m", &req)] {
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert!(!keys.iter().any(|k| k.starts_with("max_")), "{body}");
    }
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
            status: Some(502),
            class: None,
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
    assert!(
        !start.content,
        "a tool call's opening delta (its name, arguments \"\") is no generated text yet"
    );
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
fn a_tool_call_starts_ttft_with_its_first_arguments() {
    // OpenAI's shape: role chunk, the call's opening (name, `arguments: ""`), then arguments.
    let raw = r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}

data: [DONE]

"#;
    let (_, s) = run_stream(raw, interpret_chat);
    // The third event, read at 30 ms: the opening (20 ms) carries no generated text.
    assert_eq!(s.ttft_ms, Some(30.0));
    // One call, two argument deltas.
    assert_eq!((s.tool_calls, s.tool_args), (1, 2));
}

/// Issue 38, part 1: parallel calls in OpenAI's wire shape (each call opens with its `id` and
/// name at its own `index`; later deltas carry only `index` and arguments; the stream ends with
/// `finish_reason: "tool_calls"`), counted into the record.
#[test]
fn parallel_tool_calls_are_counted_with_their_argument_deltas() {
    let raw = r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\": "}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"Rome\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":80,"completion_tokens":36,"total_tokens":116}}

data: [DONE]

"#;
    let (_, s) = run_stream(raw, interpret_chat);
    assert_eq!((s.tool_calls, s.tool_args), (2, 3));
    assert_eq!(s.ttft_ms, Some(20.0));
    assert_eq!(s.finish_reason.as_deref(), Some("tool_calls"));
    let mut r = crate::model::RequestRecord::default();
    s.apply_to(&mut r, false);
    assert_eq!((r.tool_calls, r.tool_call_tokens), (Some(2), Some(3)));
    assert_eq!(r.output_tokens, Some(36), "usage still counts all output");
    // A text answer records no tool call.
    let (_, text) = run_stream(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n",
        interpret_chat,
    );
    let mut r = crate::model::RequestRecord::default();
    text.apply_to(&mut r, false);
    assert_eq!((r.tool_calls, r.tool_call_tokens), (None, None));
}

/// llama-cpp-python's `chatml-function-calling` (0.3.36, a forced function, streamed) names
/// the call again in every delta: its `index`, `id` and function name with each argument token
/// (and a legacy `function_call` beside it). One call, one argument token per delta.
#[test]
fn a_call_named_again_in_every_delta_is_one_call() {
    let delta = |args: &str| {
        format!(
            r#"data: {{"id": "chatcmpl-c8", "object": "chat.completion.chunk", "created": 1, "model": "smollm2-135m", "choices": [{{"index": 0, "finish_reason": null, "logprobs": null, "delta": {{"role": null, "content": null, "function_call": {{"name": "get_order_status", "arguments": "{args}"}}, "tool_calls": [{{"index": 0, "id": "call__0_get_order_status_cmpl-c8", "type": "function", "function": {{"name": "get_order_status", "arguments": "{args}"}}}}]}}}}]}}

"#
        )
    };
    let raw = [
        r#"data: {"id": "chatcmpl-c8", "object": "chat.completion.chunk", "created": 1, "model": "smollm2-135m", "choices": [{"index": 0, "finish_reason": null, "logprobs": null, "delta": {"role": "assistant", "content": null, "function_call": null, "tool_calls": null}}]}

"#.to_string(),
        delta("{"),
        delta(r#" \""#),
        delta("order"),
        delta(r#"\"}"#),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let (_, s) = run_stream(&raw, interpret_chat);
    assert_eq!((s.tool_calls, s.tool_args), (1, 4));
}

/// A whole chat answer (`stream: false`) counts its message's calls; its arguments came in one
/// piece, so no argument tokens are counted.
#[test]
fn a_whole_chat_answer_counts_its_tool_calls() {
    let body = br#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}],"refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":80,"completion_tokens":30,"total_tokens":110}}"#;
    let info = whole_chat(body).unwrap();
    assert_eq!((info.tool_calls, info.tool_args), (2, 0));
    assert!(info.content && info.done);
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
            status: None,
            class: None,
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
            status: Some(400),
            class: None,
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
            status: None,
            class: None,
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
            status: Some(429),
            class: None,
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

/// Issue 12: prompt-cache hits are recorded per request from usage.
#[test]
fn cached_tokens_from_prompt_tokens_details() {
    let c = chat(
        r#"{"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":1920}}}"#,
    );
    assert_eq!((c.input_tokens, c.cached_tokens), (Some(2006), Some(1920)));
    let none = chat(r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}"#);
    assert_eq!(none.cached_tokens, None);
    let odd = chat(r#"{"choices":[],"usage":{"prompt_tokens_details":null}}"#);
    assert_eq!(odd.cached_tokens, None);
}

/// Issue 11: reasoning tokens inside the output count, in chat and Responses-style usage.
#[test]
fn reasoning_tokens_from_usage_details() {
    let o3 = chat(
        r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":840,"total_tokens":852,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":768,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}"#,
    );
    assert_eq!(
        (o3.output_tokens, o3.reasoning_tokens),
        (Some(840), Some(768))
    );
    let responses = chat(
        r#"{"choices":[],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":256},"total_tokens":312}}"#,
    );
    assert_eq!(
        (responses.output_tokens, responses.reasoning_tokens),
        (Some(300), Some(256))
    );
    let plain = chat(r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}"#);
    assert_eq!(plain.reasoning_tokens, None);
    let null =
        chat(r#"{"choices":[],"usage":{"completion_tokens":3,"completion_tokens_details":null}}"#);
    assert_eq!(null.reasoning_tokens, None);
}

/// Issue 38, part 1: chat sends the tools file as it is, `tool_choice` in chat's shape and
/// `prompt_cache_key`; the bytes are the same for every body built from one spec.
#[test]
fn chat_sends_tools_as_they_are_with_choice_and_cache_key() {
    use crate::scenario::tools::{ToolChoice, Tools};
    let req = RequestSpec {
        prompt: "hi".into(),
        tools: Some(Tools::sample()),
        tool_choice: Some(ToolChoice::Function("get_time".into())),
        prompt_cache_key: Some("agent-7".into()),
        ..RequestSpec::default()
    };
    let body = chat_body("m", &req);
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        serde_json::json!(["city"])
    );
    assert_eq!(
        body["tools"][1],
        serde_json::json!({"type": "function", "function": {"name": "get_time"}})
    );
    assert_eq!(
        body["tool_choice"],
        serde_json::json!({"type": "function", "function": {"name": "get_time"}})
    );
    assert_eq!(body["prompt_cache_key"], "agent-7");
    assert_eq!(body.to_string(), chat_body("m", &req).to_string());
    for (choice, wire) in [
        (ToolChoice::Auto, "auto"),
        (ToolChoice::None, "none"),
        (ToolChoice::Required, "required"),
    ] {
        let req = RequestSpec {
            tool_choice: Some(choice),
            ..req.clone()
        };
        assert_eq!(chat_body("m", &req)["tool_choice"], wire);
    }
    let plain = chat_body("m", &RequestSpec::default());
    assert!(plain.get("tools").is_none() && plain.get("prompt_cache_key").is_none());
}
