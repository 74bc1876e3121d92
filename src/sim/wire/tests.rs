//! Unit tests of the wire format: every frame parses as the SSE/JSON a real provider sends
//! (except the deliberately malformed one).

use super::*;

/// Splits SSE text into (event name, data) pairs and parses each data line as JSON
/// (`[DONE]` becomes a JSON string).
fn events(bytes: &[u8]) -> Vec<(Option<String>, Value)> {
    let text = std::str::from_utf8(bytes).unwrap();
    assert!(
        text.ends_with("\n\n"),
        "frame must end with a blank line: {text:?}"
    );
    text.split("\n\n")
        .filter(|b| !b.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = Some(if d == "[DONE]" {
                        Value::from("[DONE]")
                    } else {
                        serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}"))
                    });
                }
            }
            (event, data.unwrap())
        })
        .collect()
}

fn frames(d: Api) -> Frames {
    Frames::new(d, "id-1".into(), "m\"odel", 1700)
}

#[test]
fn words_cycle_and_text_concatenates() {
    assert_eq!(word(0), " the");
    assert_eq!(word(16), " the");
    assert_eq!(text(3), " the quick brown");
    assert_eq!(text(0), "");
}

#[test]
fn chat_frames() {
    let f = frames(Api::OpenAiChat);
    let open = events(&f.opening(10).unwrap());
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].1["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(open[0].1["choices"][0]["delta"]["content"], "");
    assert_eq!(open[0].1["model"], "m\"odel");
    let t = events(&f.token(1));
    assert_eq!(t[0].1["choices"][0]["delta"]["content"], " quick");
    assert_eq!(t[0].1["id"], "id-1");
    assert_eq!(t[0].1["object"], "chat.completion.chunk");
    assert_eq!(t[0].1["created"], 1700);
    let c = events(&f.closing(Finish::Length, Some((10, 5)), true));
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].1["choices"][0]["finish_reason"], "length");
    assert_eq!(c[1].1["choices"], Value::Array(vec![]));
    assert_eq!(c[1].1["usage"]["prompt_tokens"], 10);
    assert_eq!(c[1].1["usage"]["completion_tokens"], 5);
    assert_eq!(c[1].1["usage"]["total_tokens"], 15);
    assert_eq!(c[2].1, "[DONE]");
    let c = events(&f.closing(Finish::Stop, None, false));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1["choices"][0]["finish_reason"], "stop");
}

#[test]
fn completions_frames() {
    let f = frames(Api::OpenAiCompletions);
    assert!(f.opening(3).is_none());
    let t = events(&f.token(0));
    assert_eq!(t[0].1["choices"][0]["text"], " the");
    assert_eq!(t[0].1["object"], "text_completion");
    let c = events(&f.closing(Finish::Stop, Some((1, 2)), true));
    assert_eq!(c[0].1["choices"][0]["finish_reason"], "stop");
    assert_eq!(c[1].1["usage"]["completion_tokens"], 2);
    assert_eq!(c[2].1, "[DONE]");
}

#[test]
fn messages_frames() {
    let f = frames(Api::AnthropicMessages);
    let open = events(&f.opening(7).unwrap());
    let names: Vec<_> = open.iter().map(|e| e.0.clone().unwrap()).collect();
    assert_eq!(names, ["message_start", "content_block_start", "ping"]);
    assert_eq!(open[0].1["message"]["usage"]["input_tokens"], 7);
    assert_eq!(open[0].1["message"]["id"], "id-1");
    let t = events(&f.token(2));
    assert_eq!(t[0].0.as_deref(), Some("content_block_delta"));
    assert_eq!(t[0].1["delta"]["type"], "text_delta");
    assert_eq!(t[0].1["delta"]["text"], " brown");
    let c = events(&f.closing(Finish::Length, Some((7, 4)), true));
    let names: Vec<_> = c.iter().map(|e| e.0.clone().unwrap()).collect();
    assert_eq!(
        names,
        ["content_block_stop", "message_delta", "message_stop"]
    );
    assert_eq!(c[1].1["delta"]["stop_reason"], "max_tokens");
    assert_eq!(c[1].1["usage"]["output_tokens"], 4);
    let c = events(&f.closing(Finish::Stop, Some((7, 4)), false));
    assert_eq!(c.len(), 2);
    assert_eq!(c[1].1["delta"]["stop_reason"], "end_turn");
    assert_eq!(events(PING.as_bytes())[0].1["type"], "ping");
}

#[test]
fn malformed_is_not_json_and_inband_error_is() {
    for d in Api::ALL {
        let f = frames(d);
        let m = String::from_utf8(f.malformed().to_vec()).unwrap();
        assert!(m.ends_with("\n\n"));
        let data = m.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        assert!(serde_json::from_str::<Value>(data).is_err(), "{data}");
        let e = events(&f.inband_error(3));
        if d == Api::AnthropicMessages {
            assert_eq!(e[0].0.as_deref(), Some("error"));
            assert_eq!(e[0].1["error"]["type"], "overloaded_error");
        } else if d == Api::OpenAiResponses {
            assert_eq!(e[0].0.as_deref(), Some("response.failed"));
            assert_eq!(e[0].1["response"]["error"]["code"], "server_error");
            assert_eq!(e[0].1["sequence_number"], 7);
        } else {
            assert_eq!(e[0].1["error"]["type"], "server_error");
        }
    }
}

#[test]
fn full_bodies() {
    let v: Value =
        serde_json::from_slice(&frames(Api::OpenAiChat).full_body(2, Finish::Stop, 3)).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], " the quick");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(v["usage"]["total_tokens"], 5);
    let v: Value =
        serde_json::from_slice(&frames(Api::OpenAiCompletions).full_body(1, Finish::Length, 0))
            .unwrap();
    assert_eq!(v["choices"][0]["text"], " the");
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    let v: Value =
        serde_json::from_slice(&frames(Api::AnthropicMessages).full_body(1, Finish::Length, 4))
            .unwrap();
    assert_eq!(v["content"][0]["text"], " the");
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(v["usage"]["input_tokens"], 4);
    assert_eq!(v["usage"]["output_tokens"], 1);
    let v: Value =
        serde_json::from_slice(&frames(Api::OpenAiResponses).full_body(1, Finish::Length, 4))
            .unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "incomplete");
    assert_eq!(v["output"][0]["content"][0]["text"], " the");
    assert_eq!(v["usage"]["input_tokens"], 4);
}

/// A whole Responses stream: every event named twice, numbered 0, 1, 2, … without a gap, in the
/// order OpenAI sends them.
fn responses_stream(f: &Frames, reasoning: u32, n: u32, finish: Finish) -> Vec<(String, Value)> {
    let mut bytes = f.opening(12).unwrap().to_vec();
    for i in 0..reasoning {
        bytes.extend_from_slice(&f.reasoning_token(i));
    }
    if let Some(start) = f.answer_start() {
        bytes.extend_from_slice(&start);
    }
    for i in 0..n {
        bytes.extend_from_slice(&f.token(i));
    }
    bytes.extend_from_slice(&f.closing(finish, Some((12, n)), true));
    let events: Vec<(String, Value)> = events(&bytes)
        .into_iter()
        .map(|(name, v)| (name.unwrap(), v))
        .collect();
    for (i, (name, v)) in events.iter().enumerate() {
        assert_eq!(v["type"], name.as_str());
        assert_eq!(v["sequence_number"], i as u64, "{name}");
    }
    events
}

#[test]
fn responses_frames() {
    let f = frames(Api::OpenAiResponses);
    let e = responses_stream(&f, 0, 3, Finish::Stop);
    let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(e[0].1["response"]["id"], "id-1");
    assert_eq!(e[0].1["response"]["model"], "m\"odel");
    assert_eq!(e[4].1["delta"], " the");
    assert_eq!(e[7].1["text"], " the quick brown");
    let done = &e[10].1["response"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["output"][0]["content"][0]["text"], " the quick brown");
    assert_eq!(done["usage"]["input_tokens"], 12);
    assert_eq!(done["usage"]["output_tokens"], 3);
    assert_eq!(done["usage"]["total_tokens"], 15);
    // Cut at the limit: incomplete, with its reason.
    let e = responses_stream(&f, 0, 2, Finish::Length);
    let last = &e.last().unwrap().1;
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    // Without the terminal event (the no_done fault).
    let c = events(&f.closing(Finish::Stop, Some((1, 1)), false));
    assert_eq!(
        c.last().unwrap().0.as_deref(),
        Some("response.output_item.done")
    );
}

#[test]
fn responses_reasoning_goes_first_in_its_own_item() {
    let f = frames(Api::OpenAiResponses)
        .with_cached(4)
        .with_reasoning(2)
        .streaming_reasoning();
    let e = responses_stream(&f, 2, 2, Finish::Stop);
    let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names[2..13],
        [
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
        ]
    );
    assert_eq!(e[2].1["item"]["type"], "reasoning");
    assert_eq!(e[9].1["item"]["type"], "message");
    assert_eq!(e[9].1["output_index"], 1);
    assert_eq!(e[11].1["output_index"], 1);
    let usage = &e.last().unwrap().1["response"]["usage"];
    assert_eq!(usage["output_tokens"], 4);
    assert_eq!(usage["output_tokens_details"]["reasoning_tokens"], 2);
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 4);
    let output = &e.last().unwrap().1["response"]["output"];
    assert_eq!(output[0]["summary"][0]["text"], " the quick");
    assert_eq!(output[1]["content"][0]["text"], " the quick");
}

/// A whole streamed answer of `n` tokens after `reasoning` streamed reasoning tokens, as the
/// simulator sends it (`stream::TokenStream`'s order).
fn whole_stream(f: &Frames, n: u32, reasoning: u32) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&f.opening(40).unwrap_or_default());
    for i in 0..reasoning {
        out.extend_from_slice(&f.reasoning_token(i));
    }
    if reasoning > 0 {
        out.extend_from_slice(&f.answer_start().unwrap_or_default());
    }
    for i in 0..n {
        out.extend_from_slice(&f.token(i));
    }
    out.extend_from_slice(&f.closing(Finish::Stop, Some((40, n)), true));
    out
}

/// The stream read by the client's reader of the dialect, as a run reads it.
fn read_back(api: Api, bytes: &[u8]) -> crate::client::timing::TimingSummary {
    let mut reader = (crate::client::dialect::of(api).reader)();
    let mut timing = crate::client::timing::StreamTiming::new();
    let mut parser = crate::client::sse::SseParser::new();
    let mut at = 0.0;
    parser
        .feed_each(bytes, |ev| {
            at += 1.0;
            let info = reader.interpret(ev).expect("every event reads");
            timing.on_chunk(at, &info);
        })
        .expect("valid SSE");
    timing.finish(at + 1.0)
}

/// Issue 38, part 1: a tool call in each dialect's wire shape, read back by ladder's own
/// readers as one call with one argument token per answer token; the arguments join into
/// valid JSON; Responses events stay numbered one after another; with streamed reasoning too.
#[test]
fn tool_calls_stream_in_each_dialects_shape_and_read_back_as_calls() {
    for api in [
        Api::OpenAiChat,
        Api::AnthropicMessages,
        Api::OpenAiResponses,
    ] {
        for reasoning in [0, 3] {
            let mut f = Frames::new(api, format!("{}x1", api.spec().id_prefix), "m", 1700)
                .with_reasoning(reasoning);
            if reasoning > 0 {
                f = f.streaming_reasoning();
            }
            let f = f.with_tool_call("get_weather", 5);
            let bytes = whole_stream(&f, 5, reasoning);
            let evs = events(&bytes);
            let s = read_back(api, &bytes);
            let what = format!(
                "{api:?} reasoning {reasoning}: {}",
                String::from_utf8_lossy(&bytes)
            );
            assert_eq!((s.tool_calls, s.tool_args), (1, 5), "{what}");
            assert_eq!(s.token_events, 5 + u64::from(reasoning), "{what}");
            assert!(s.done && s.error.is_none(), "{what}");
            // The arguments as streamed, joined, are the call's JSON.
            let args: String = evs
                .iter()
                .filter_map(|(_, v)| {
                    v.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                        .or_else(|| v.pointer("/delta/partial_json"))
                        .or_else(|| {
                            (v["type"] == "response.function_call_arguments.delta")
                                .then(|| &v["delta"])
                        })
                        .and_then(Value::as_str)
                })
                .collect();
            let parsed: Value =
                serde_json::from_str(&args).unwrap_or_else(|e| panic!("{e}: {args}"));
            assert_eq!(parsed, serde_json::json!({"q": text(5)}), "{what}");
            // Kept by ladder's readers (an agent's next turn): the id the truth names.
            let mut log = crate::client::calls::CallLog::default();
            let keep = crate::client::dialect::of(api).calls;
            crate::client::sse::SseParser::new()
                .feed_each(&bytes, |ev| keep(ev.event, ev.data, &mut log))
                .expect("valid SSE");
            let kept = log.into_calls();
            assert_eq!(kept.len(), 1, "{what}");
            assert_eq!(Some(&kept[0].id), f.call_id().as_ref(), "{what}");
            assert!(kept[0].id.starts_with(api.spec().call_id_prefix), "{what}");
            assert_eq!(
                (kept[0].name.as_str(), kept[0].arguments.as_str()),
                ("get_weather", args.as_str())
            );
            let finish = s.finish_reason.as_deref();
            match api {
                Api::OpenAiChat => assert_eq!(finish, Some("tool_calls"), "{what}"),
                Api::AnthropicMessages => assert_eq!(finish, Some("tool_use"), "{what}"),
                _ => {
                    assert_eq!(finish, Some("stop"), "{what}");
                    let seqs: Vec<u64> = evs
                        .iter()
                        .map(|(_, v)| v["sequence_number"].as_u64().unwrap())
                        .collect();
                    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>(), "{what}");
                    let done = &evs.last().unwrap().1["response"]["output"];
                    let call = done.as_array().unwrap().last().unwrap();
                    assert_eq!(call["type"], "function_call", "{what}");
                    assert_eq!(call["name"], "get_weather");
                    assert_eq!(call["arguments"].as_str().unwrap(), args);
                }
            }
        }
    }
    // Legacy completions have no tools: the answer stays text.
    let f = Frames::new(Api::OpenAiCompletions, "cmpl-1".into(), "m", 1).with_tool_call("t", 3);
    let s = read_back(Api::OpenAiCompletions, &whole_stream(&f, 3, 0));
    assert_eq!((s.tool_calls, s.tool_args), (0, 0));
}

/// Without streaming, a call is the whole answer's `tool_calls`, `tool_use` block or
/// `function_call` item, read back as one call.
#[test]
fn whole_answers_carry_the_call_in_each_dialects_shape() {
    for api in [
        Api::OpenAiChat,
        Api::AnthropicMessages,
        Api::OpenAiResponses,
    ] {
        let f = Frames::new(api, format!("{}x1", api.spec().id_prefix), "m", 1700)
            .with_tool_call("get_weather", 4);
        let body = f.full_body(4, Finish::Stop, 40);
        let v: Value = serde_json::from_slice(&body).unwrap();
        let mut reader = (crate::client::dialect::of(api).reader)();
        let info = reader.whole(&body).unwrap();
        assert_eq!(info.tool_calls, 1, "{api:?}: {v}");
        assert!(info.content, "{api:?}");
        let args = match api {
            Api::OpenAiChat => {
                v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].clone()
            }
            Api::AnthropicMessages => Value::from(v["content"][0]["input"].to_string()),
            _ => v["output"][0]["arguments"].clone(),
        };
        let args: Value = serde_json::from_str(args.as_str().unwrap()).unwrap();
        assert_eq!(args, serde_json::json!({"q": text(4)}), "{api:?}");
    }
}

/// Issue 38, part 3: Anthropic reports cache writes beside reads when the request asked for
/// caching, and `input_tokens` leaves both out; whole answers report cached tokens too.
#[test]
fn anthropic_reports_cache_reads_and_writes_apart() {
    let f = frames(Api::AnthropicMessages)
        .with_cached(300)
        .with_cache_written(Some(96));
    let open = events(&f.opening(400).unwrap());
    let usage = &open[0].1["message"]["usage"];
    assert_eq!(usage["input_tokens"], 4);
    assert_eq!(usage["cache_read_input_tokens"], 300);
    assert_eq!(usage["cache_creation_input_tokens"], 96);
    let whole: Value = serde_json::from_slice(&f.full_body(2, Finish::Stop, 400)).unwrap();
    assert_eq!(whole["usage"]["cache_creation_input_tokens"], 96);
    assert_eq!(whole["usage"]["input_tokens"], 4);
    let no_control = frames(Api::AnthropicMessages).with_cached(300);
    let open = events(&no_control.opening(400).unwrap());
    assert!(open[0].1["message"]["usage"]
        .get("cache_creation_input_tokens")
        .is_none());
    let chat: Value = serde_json::from_slice(&frames(Api::OpenAiChat).with_cached(300).full_body(
        2,
        Finish::Stop,
        400,
    ))
    .unwrap();
    assert_eq!(chat["usage"]["prompt_tokens_details"]["cached_tokens"], 300);
}
