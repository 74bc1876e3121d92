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
    for d in [
        Api::OpenAiChat,
        Api::OpenAiCompletions,
        Api::AnthropicMessages,
    ] {
        let f = frames(d);
        let m = String::from_utf8(f.malformed().to_vec()).unwrap();
        assert!(m.ends_with("\n\n"));
        let data = m.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        assert!(serde_json::from_str::<Value>(data).is_err(), "{data}");
        let e = events(&f.inband_error());
        if d == Api::AnthropicMessages {
            assert_eq!(e[0].0.as_deref(), Some("error"));
            assert_eq!(e[0].1["error"]["type"], "overloaded_error");
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
}
