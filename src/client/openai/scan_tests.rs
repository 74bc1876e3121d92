//! The scanner against the serde reader: it answers for the shapes real servers send per token,
//! leaves everything else to serde, and never answers differently from serde.

use super::super::{read_chunk, ChunkReader, Dialect};
use super::{common_chunk, has_control_byte, Cursor, Template};
use crate::client::sse::SseEvent;
use proptest::prelude::*;

/// Per-token chunks as servers send them (captured shapes; ids and times shortened).
const COMMON: [&str; 9] = [
    // ladder sim
    r#"{"id":"chatcmpl-sim2","object":"chat.completion.chunk","created":1796156378,"model":"sim-model","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}"#,
    // OpenAI, with include_usage (usage null until the last chunk) and obfuscation
    r#"{"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"c8hJ"}"#,
    // vLLM
    r#"{"id":"chatcmpl-5f","object":"chat.completion.chunk","created":1730000000,"model":"Qwen/Qwen2.5-0.5B-Instruct","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
    // llama.cpp's llama-server (keys in its own order)
    r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" quick"}}],"created":1764600000,"id":"chatcmpl-Xy","model":"smollm2","system_fingerprint":"b1-0c1e570","object":"chat.completion.chunk"}"#,
    // the role chunk first, empty content
    r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
    // DeepSeek-style reasoning
    r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Let me think"},"finish_reason":null}]}"#,
    // the finish chunk
    r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}"#,
    // escapes in the content, a pair of surrogates, whitespace between tokens
    r#"{ "id" : "c", "choices" : [ { "index" : 0, "delta" : { "content" : "line\n\"q\" \u00e9 \ud83d\ude00" } } ] }"#,
    // numbers of every form in skipped fields
    r#"{"id":"c","created":-1.5e+3,"x":[0,1.25,2E-2,true,false,null,{"a":[]}],"choices":[{"index":0,"delta":{"content":"x"}}]}"#,
];

#[test]
fn the_shapes_servers_send_per_token_are_read_without_serde() {
    for data in COMMON {
        let fast = common_chunk(data, Dialect::Chat).unwrap_or_else(|| panic!("fell back: {data}"));
        let slow = read_chunk(data, Dialect::Chat).unwrap();
        assert_eq!(fast, slow, "{data}");
    }
    let first = common_chunk(COMMON[0], Dialect::Chat).unwrap();
    assert!(first.content && !first.reasoning && first.finish_reason.is_none());
    assert!(!common_chunk(COMMON[4], Dialect::Chat).unwrap().content);
    let reasoning = common_chunk(COMMON[5], Dialect::Chat).unwrap();
    assert!(reasoning.reasoning && !reasoning.content);
    let finish = common_chunk(COMMON[6], Dialect::Chat).unwrap();
    assert_eq!(finish.finish_reason.as_deref(), Some("stop"));
    assert!(!finish.content);
}

#[test]
fn legacy_completions_count_text_not_deltas() {
    let text = r#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":" the","index":0,"logprobs":null,"finish_reason":null}]}"#;
    let info = common_chunk(text, Dialect::Completions).unwrap();
    assert!(info.content);
    assert_eq!(info, read_chunk(text, Dialect::Completions).unwrap());
    let delta = COMMON[0];
    assert!(!common_chunk(delta, Dialect::Completions).unwrap().content);
    assert!(!common_chunk(text, Dialect::Chat).unwrap().content);
}

#[test]
fn anything_more_than_text_goes_to_serde() {
    let serde_reads = [
        // usage, timings, tool calls, every error shape
        r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"timings":{"prompt_n":3}}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}"#,
        r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
        r#"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"error"}]}"#,
        r#"{"choices":[{"delta":{"content":"x"},"error":{"message":"m"}}]}"#,
        r#"{"choices":[],"detail":"Not Found"}"#,
        r#"{"choices":[],"message":"m"}"#,
        // a known field twice (serde refuses it), escaped keys and finish reasons
        r#"{"choices":[],"choices":[]}"#,
        r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
        r#"{"\u0063hoices":[{"delta":{"content":"x"}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"st\u006fp"}]}"#,
        r#"{"object":"\u0065rror"}"#,
        // unusual types
        r#"{"choices":[{"delta":{"content":7}}]}"#,
        r#"{"choices":[{"delta":{"content":["a"]}}]}"#,
        r#"{"choices":[null]}"#,
        r#"{"choices":{"delta":{}}}"#,
        r#"[1,2]"#,
        // not JSON, or not JSON serde accepts
        r#"{"choices":[{"delta":{"content":"x"}}]"#,
        r#"{"choices":[{"delta":{"content":"x"}}]}}"#,
        r#"{"choices":[{"delta":{"content":"x"},}]}"#,
        r#"{"a":01,"choices":[]}"#,
        r#"{"a":1.,"choices":[]}"#,
        r#"{"a":-,"choices":[]}"#,
        r#"{"a":nul,"choices":[]}"#,
        r#"{"a":"\x","choices":[]}"#,
        r#"{"choices":[{"delta":{"content":"\ud83d"}}]}"#,
        r#"{"choices":[{"delta":{"content":"\ude00"}}]}"#,
        r#"{"choices":[{"delta":{"content":"\u12"}}]}"#,
        "{\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}",
        r#"{"choices" [] }"#,
        r#"{choices:[]}"#,
    ];
    for data in serde_reads {
        assert_eq!(common_chunk(data, Dialect::Chat), None, "{data}");
    }
    let deep = format!(
        "{{\"a\":{}{},\"choices\":[]}}",
        "[".repeat(40),
        "]".repeat(40)
    );
    assert_eq!(common_chunk(&deep, Dialect::Chat), None);
    let shallow = format!(
        "{{\"a\":{}{},\"choices\":[]}}",
        "[".repeat(20),
        "]".repeat(20)
    );
    assert!(common_chunk(&shallow, Dialect::Chat).is_some());
}

#[test]
fn a_control_byte_anywhere_is_seen() {
    for byte in 0..=255u8 {
        for len in [1, 15, 16, 17, 40] {
            for at in [0, len / 2, len - 1] {
                let mut s = vec![b'a'; len];
                s[at] = byte;
                assert_eq!(
                    has_control_byte(&s),
                    byte < 0x20,
                    "{byte:#x} at {at} of {len}"
                );
            }
        }
    }
    assert!(!has_control_byte(b""));
    // Tabs are JSON whitespace, but a chunk with one goes to serde.
    assert_eq!(
        common_chunk("{\"choices\":[]}", Dialect::Chat),
        Some(Default::default())
    );
    assert_eq!(common_chunk("{\"choices\":\t[]}", Dialect::Chat), None);
}

/// The sim's stream as it arrives: the role chunk, tokens, the finish chunk.
fn sim_chunk(delta: &str, finish: &str) -> String {
    format!(
        r#"{{"id":"chatcmpl-sim2","object":"chat.completion.chunk","created":1796168378,"model":"sim-model","choices":[{{"index":0,"delta":{{{delta}}},"logprobs":null,"finish_reason":{finish}}}]}}"#
    )
}

#[test]
fn a_stream_of_one_shape_is_read_from_its_template() {
    let mut t = Template::default();
    let role = sim_chunk(r#""role":"assistant","content":"""#, "null");
    assert!(!t.read(&role, Dialect::Chat).unwrap().content);
    let first = sim_chunk(r#""content":" the""#, "null");
    // A different shape (no role): read whole, and learnt.
    assert!(t.fit(first.as_bytes()).is_none());
    assert!(t.read(&first, Dialect::Chat).unwrap().content);
    for text in [
        " quick",
        "",
        r#"\"q\" \u00e9 \ud83d\ude00 \\"#,
        "a much longer token than before",
    ] {
        let next = sim_chunk(&format!(r#""content":"{text}""#), "null");
        assert_eq!(
            t.fit(next.as_bytes()),
            Some((!text.is_empty(), false)),
            "{next}"
        );
        assert_eq!(
            t.read(&next, Dialect::Chat),
            read_chunk(&next, Dialect::Chat).ok()
        );
    }
    // What is not a valid string where the token was, or differs elsewhere, is read whole.
    for bad in [
        sim_chunk(r#""content":"a"b""#, "null"),
        sim_chunk(r#""content":"a\""#, "null"),
        sim_chunk(r#""content":"\q""#, "null"),
        sim_chunk(r#""content":"\ud83d""#, "null"),
        sim_chunk(r#""content":"\u12""#, "null"),
        sim_chunk(r#""content":"a","content":"b""#, "null"),
        sim_chunk(r#""content":" the""#, r#""error""#),
        sim_chunk(r#""content":null"#, "null"),
        sim_chunk(r#""content":" the""#, "null").replace(r#""index":0"#, r#""index":1"#),
        sim_chunk(r#""content":" the""#, "null") + " ",
    ] {
        // A refused chunk unlearns the template: learn it again each time.
        assert!(t.read(&first, Dialect::Chat).unwrap().content);
        assert_eq!(t.fit(bad.as_bytes()), None, "{bad}");
        assert_eq!(
            t.read(&bad, Dialect::Chat),
            common_chunk(&bad, Dialect::Chat),
            "{bad}"
        );
    }
    assert!(t.read(&first, Dialect::Chat).unwrap().content);
    let control = sim_chunk("\"content\":\"a\u{1}b\"", "null");
    assert_eq!(t.read(&control, Dialect::Chat), None);
    // The finish chunk keeps its reason.
    let finish = sim_chunk("", r#""stop""#);
    let info = t.read(&finish, Dialect::Chat).unwrap();
    assert_eq!(info.finish_reason.as_deref(), Some("stop"));
    assert_eq!(t.fit(finish.as_bytes()), Some((false, false)));
    assert_eq!(t.read(&finish, Dialect::Chat), Some(info));
}

#[test]
fn the_strings_that_vary_per_chunk_are_holes_and_the_ones_that_decide_are_not() {
    // OpenAI's random padding and a per-chunk id vary in every chunk.
    let openai = |id: &str, text: &str, pad: &str| {
        format!(
            r#"{{"id":"{id}","object":"chat.completion.chunk","created":1741000000,"model":"gpt-4o-mini","choices":[{{"index":0,"delta":{{"content":"{text}"}},"logprobs":null,"finish_reason":null}}],"usage":null,"obfuscation":"{pad}"}}"#
        )
    };
    let mut t = Template::default();
    assert!(
        t.read(&openai("a", "Hi", "c8hJ"), Dialect::Chat)
            .unwrap()
            .content
    );
    assert_eq!(
        t.fit(openai("bb", "!", "x").as_bytes()),
        Some((true, false))
    );
    assert_eq!(t.fit(openai("bb", "", "").as_bytes()), Some((false, false)));
    // The first try holds the skipped strings to the template's bytes; the second lets them vary.
    let same_id = openai("a", "!", "c8hJ");
    assert_eq!(t.fit_holes(same_id.as_bytes(), false), Some((true, false)));
    let other_id = openai("bb", "!", "x");
    assert_eq!(t.fit_holes(other_id.as_bytes(), false), None);
    assert_eq!(t.fit_holes(other_id.as_bytes(), true), Some((true, false)));
    // The object and the finish reason decide: they are compared, not skipped.
    let error_object = openai("a", "Hi", "c8hJ").replace("chat.completion.chunk", "error");
    assert_eq!(t.fit(error_object.as_bytes()), None);
    assert_eq!(t.read(&error_object, Dialect::Chat), None);
    // Keys are compared too.
    let key = openai("a", "Hi", "c8hJ").replace(r#""usage""#, r#""usagf""#);
    assert_eq!(t.fit(key.as_bytes()), None);

    // Reasoning, and each dialect's counted field.
    let reasoning = |text: &str| {
        format!(
            r#"{{"id":"c","choices":[{{"index":0,"delta":{{"content":null,"reasoning_content":"{text}"}},"finish_reason":null}}]}}"#
        )
    };
    let mut t = Template::default();
    assert!(t.read(&reasoning("Let"), Dialect::Chat).unwrap().reasoning);
    assert_eq!(t.fit(reasoning(" me").as_bytes()), Some((false, true)));
    let mut t = Template::default();
    assert!(
        !t.read(&reasoning("Let"), Dialect::Completions)
            .unwrap()
            .reasoning
    );
    assert_eq!(t.fit(reasoning(" me").as_bytes()), Some((false, false)));
    let text = |text: &str| {
        format!(
            r#"{{"id":"cmpl-1","object":"text_completion","choices":[{{"text":"{text}","index":0,"finish_reason":null}}]}}"#
        )
    };
    let mut t = Template::default();
    assert!(t.read(&text(" the"), Dialect::Completions).unwrap().content);
    assert_eq!(t.fit(text("x").as_bytes()), Some((true, false)));
    let mut t = Template::default();
    assert!(!t.read(&text(" the"), Dialect::Chat).unwrap().content);
    assert_eq!(t.fit(text("x").as_bytes()), Some((false, false)));
}

#[test]
fn a_chunk_serde_must_read_leaves_no_template_behind() {
    let mut t = Template::default();
    let token = sim_chunk(r#""content":" the""#, "null");
    t.read(&token, Dialect::Chat).unwrap();
    assert!(t.learned);
    let usage = r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3}}"#;
    assert_eq!(t.read(usage, Dialect::Chat), None);
    assert!(!t.learned);
    assert!(t.read(&token, Dialect::Chat).unwrap().content);
    assert!(t.learned);
}

/// Pieces chunks are made of: known keys and others, values of every type, strings with
/// escapes (valid and not), so that random chunks reach both readers' edges.
fn key() -> impl Strategy<Value = String> {
    let harmless = prop::sample::select(vec!["index", "role", "id", "logprobs", "x", "model"]);
    let read = prop::sample::select(vec![
        "content",
        "reasoning",
        "reasoning_content",
        "text",
        "finish_reason",
        "object",
    ]);
    let sensitive = prop::sample::select(vec![
        "choices",
        "delta",
        "usage",
        "error",
        "tool_calls",
        "message",
        "timings",
        "c\\u006fntent",
    ]);
    prop_oneof![6 => harmless, 3 => read, 1 => sensitive].prop_map(|k| format!("\"{k}\""))
}

fn scalar() -> impl Strategy<Value = String> {
    let valid = prop::sample::select(vec![
        "null",
        "true",
        "false",
        "0",
        "-1",
        "2.5",
        "1e3",
        "\"\"",
        "\"tok\"",
        "\"stop\"",
        "\"error\"",
        "\"chat.completion.chunk\"",
        "\"a\\nb\"",
        "\"\\u00e9\"",
        "\"\\ud83d\\ude00\"",
    ]);
    let invalid = prop::sample::select(vec![
        "01",
        "1.",
        "nul",
        "\"\\ud83d\"",
        "\"\\ude00\"",
        "\"\\q\"",
        "\"\t\"",
    ]);
    prop_oneof![9 => valid, 1 => invalid].prop_map(str::to_owned)
}

fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key(), inner), 0..4).prop_map(|kv| {
                let fields: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

/// What text fields mostly hold, and now and then anything.
fn text_value() -> impl Strategy<Value = String> {
    let text = prop::sample::select(vec![
        "null",
        "\"\"",
        "\"tok\"",
        "\"stop\"",
        "\"length\"",
        "\"error\"",
        "\"a\\nb\"",
        "\"\\u00e9\"",
        "\"\\ud83d\\ude00\"",
    ])
    .prop_map(str::to_owned);
    prop_oneof![8 => text, 1 => value()]
}

/// A chunk of roughly the common shape with random fields, sometimes damaged by one byte.
fn chunk() -> impl Strategy<Value = String> {
    let delta = prop::collection::vec((key(), text_value()), 0..3);
    let extra = prop::collection::vec((key(), value()), 0..3);
    let damage = (
        any::<prop::sample::Index>(),
        prop::sample::select(vec!["", "\"", "\\", ",", "}", "]", "x", " ", "\u{1}"]),
    );
    let damage = prop_oneof![3 => Just(None), 1 => damage.prop_map(Some)];
    (delta, text_value(), extra, damage).prop_map(|(delta, finish, extra, damage)| {
        let delta: Vec<String> = delta.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
        let mut top = vec![format!(
            "\"choices\":[{{\"index\":0,\"delta\":{{{}}},\"finish_reason\":{finish}}}]",
            delta.join(",")
        )];
        top.extend(extra.into_iter().map(|(k, v)| format!("{k}:{v}")));
        let mut text = format!("{{{}}}", top.join(","));
        if let Some((at, with)) = damage {
            let at = at.index(text.len());
            text.replace_range(at..at + 1, with);
        }
        text
    })
}

/// `data` with the body of its `which`-th string literal (keys included) replaced by `with`.
fn replace_string(data: &str, which: usize, with: &str) -> String {
    let b = data.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            let start = i + 1;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            spans.push((start, i.min(b.len())));
        }
        i += 1;
    }
    if spans.is_empty() {
        return data.to_owned();
    }
    let (start, end) = spans[which % spans.len()];
    format!("{}{with}{}", &data[..start], &data[end..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn a_template_never_answers_differently_from_reading_whole(
        first in chunk(),
        which in any::<usize>(),
        with in prop::sample::select(vec![
            "", "x", " the", "\"", "a\"b", "\\", "\\\\", "\\\"", "\\q", "\\u12", "\\u00e9",
            "\\ud83d", "\\ud83d\\ude00", "\\ude00", "\u{1}", "stop", "error", "content", "usage",
            "\\u0063ontent", "é",
        ]),
        again in any::<bool>(),
    ) {
        let next = if again { replace_string(&first, which, with) } else { first.clone() };
        for dialect in [Dialect::Chat, Dialect::Completions] {
            let mut t = Template::default();
            t.read(&first, dialect);
            let fast = t.read(&next, dialect);
            prop_assert_eq!(&fast, &common_chunk(&next, dialect), "{:?} {} then {}", dialect, first, next);
            if let Some(fast) = fast {
                prop_assert_eq!(Ok(fast), read_chunk(&next, dialect), "{:?} {}", dialect, next);
            }
        }
    }

    /// A stream read from its raw bytes (`read_raw`, as the client reads it: data not yet
    /// checked for UTF-8) means what the same stream means decoded first (`read`), whatever the
    /// next chunk holds where the template has a string: invalid UTF-8 (lone or truncated
    /// sequences, an encoded surrogate), control bytes, quotes and escapes included.
    #[test]
    fn reading_raw_bytes_means_what_reading_the_decoded_text_means(
        first in chunk(),
        which in any::<usize>(),
        with in prop::sample::select(vec![
            &b""[..], b"x", b" the", b"\xff", b"a\xc3", b"\xc3\xa9", b"\xed\xa0\x80",
            b"\xf0\x9f\x98", b"\xe2\x82\xac", b"\x01", b"a\"b", b"\\", b"\\u00e9",
        ]),
        name in prop::sample::select(vec!["message", "error", "x"]),
    ) {
        let marked = replace_string(&first, which, "\u{0}");
        let mut next = Vec::new();
        for (i, part) in marked.split('\u{0}').enumerate() {
            if i > 0 {
                next.extend_from_slice(with);
            }
            next.extend_from_slice(part.as_bytes());
        }
        let decoded = |data: &[u8]| SseEvent {
            event: name.to_owned().into(),
            data: String::from_utf8_lossy(data).into_owned(),
            id: None,
            retry: None,
        };
        for new in [ChunkReader::chat, ChunkReader::completions] {
            let (mut raw, mut text) = (new(), new());
            prop_assert_eq!(
                raw.read_raw(name, first.as_bytes()),
                text.read(&decoded(first.as_bytes()))
            );
            prop_assert_eq!(
                raw.read_raw(name, &next),
                text.read(&decoded(&next)),
                "{} then {:?}", first, String::from_utf8_lossy(&next)
            );
        }
    }

    /// A template's hole is read byte by byte (`short_string`): the same string, the same end,
    /// the same refusals as `string` followed by the check for control bytes.
    #[test]
    fn a_hole_is_read_as_a_string_without_control_bytes(
        body in prop::collection::vec(prop::sample::select(vec![
            &b"\""[..], b"\\", b"\\\"", b"\\n", b"\\u00e9", b"\\ud83d\\ude00", b"\\ud83d", b"\\q",
            b"\x01", b"\t", b"\x1f", b" ", b"\x7f", "\u{e9}".as_bytes(), b"a", b" the",
        ]), 0..6),
    ) {
        let mut text = b"\"".to_vec();
        body.iter().for_each(|part| text.extend_from_slice(part));
        text.extend_from_slice(b"\",\"z\":1}");
        let (mut holes_a, mut holes_b) = (Vec::new(), Vec::new());
        let mut short = Cursor { b: &text, i: 0, holes: &mut holes_a };
        let mut whole = Cursor { b: &text, i: 0, holes: &mut holes_b };
        let got = short.short_string().map(|s| (s.raw.to_vec(), s.escaped, short.i));
        let want = whole
            .string()
            .filter(|s| !has_control_byte(s.raw))
            .map(|s| (s.raw.to_vec(), s.escaped, whole.i));
        prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&text));
    }

    #[test]
    fn the_scanner_never_answers_differently_from_serde(data in chunk()) {
        for dialect in [Dialect::Chat, Dialect::Completions] {
            if let Some(fast) = common_chunk(&data, dialect) {
                let slow = read_chunk(&data, dialect);
                prop_assert_eq!(Ok(fast), slow, "{:?} {}", dialect, data);
            }
        }
    }
}
