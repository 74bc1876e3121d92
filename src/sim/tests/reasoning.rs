//! Streamed reasoning (`stream_reasoning`): the reasoning tokens go out as reasoning deltas
//! before the answer, read by ladder's own client, so TTFT (first reasoning token) and TTFC
//! (first answer token) differ by the reasoning time; usage counts both.

use super::*;
use crate::client::anthropic::messages_event;
use crate::client::openai::ChunkReader;
use crate::client::timing::{StreamTiming, TimingSummary};

fn reasoning_sim(stream: bool) -> SimParams {
    let mut p = fast();
    for (k, v) in [
        ("ttft", "5ms"),
        ("tpot", "10ms"),
        ("reasoning_tokens", "10"),
        ("stream_reasoning", if stream { "true" } else { "false" }),
    ] {
        p.set(k, v).unwrap();
    }
    p
}

/// The reply as ladder's client times it (each event at the instant it arrived).
fn timed(r: &Reply, anthropic: bool) -> TimingSummary {
    let mut reader = ChunkReader::chat();
    let mut timing = StreamTiming::new();
    let mut end = 0.0;
    for e in &r.events {
        let name = e.event.as_deref().unwrap_or("message");
        let info = if anthropic {
            messages_event(name, &e.data)
        } else {
            reader.read_raw(name, e.data.as_bytes())
        }
        .unwrap();
        end = e.at.as_secs_f64() * 1e3;
        timing.on_chunk(end, &info);
    }
    timing.finish(end)
}

/// The answer comes after the reasoning: tokens leave at absolute deadlines, so the first answer
/// token cannot arrive before TTFT + 10 reasoning tokens × 10 ms, and the first reasoning token
/// (TTFT) arrives before it.
fn reasoned_first(s: &TimingSummary) -> bool {
    let (ttft, ttfc) = (s.ttft_ms.unwrap(), s.ttfc_ms.unwrap());
    ttfc >= 105.0 && ttft < ttfc
}

#[tokio::test]
async fn chat_streams_reasoning_content_before_the_answer() {
    let h = sim(reasoning_sim(true)).await;
    let r = send(&h, "/chat/completions", chat(100), &[]).await;
    let reasoning = r
        .events
        .iter()
        .filter(|e| e.json()["choices"][0]["delta"]["reasoning_content"].is_string())
        .count();
    assert_eq!((reasoning, tokens(&r).len()), (10, 4), "{}", r.body);
    let s = timed(&r, false);
    assert!(reasoned_first(&s), "{s:?}");
    assert_eq!((s.output_tokens, s.reasoning_tokens), (Some(14), Some(10)));
    h.shutdown().await;
}

#[tokio::test]
async fn anthropic_streams_a_thinking_block_then_the_text_block() {
    let h = sim(reasoning_sim(true)).await;
    let body = json!({"model": "m", "stream": true, "max_tokens": 100,
                      "messages": [{"role": "user", "content": "hi"}]});
    let r = send(&h, "/messages", body, &[]).await;
    let blocks: Vec<(u64, String)> = r
        .events
        .iter()
        .map(Ev::json)
        .filter(|v| v["type"] == "content_block_start")
        .map(|v| {
            let kind = v["content_block"]["type"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (v["index"].as_u64().unwrap(), kind)
        })
        .collect();
    assert_eq!(
        blocks,
        [(0, "thinking".to_string()), (1, "text".to_string())],
        "{}",
        r.body
    );
    let s = timed(&r, true);
    assert!(reasoned_first(&s), "{s:?}");
    assert!(r.body.contains("\"output_tokens\":14"), "{}", r.body);
    h.shutdown().await;
}

#[tokio::test]
async fn hidden_reasoning_delays_both_and_legacy_completions_keep_it_hidden() {
    let h = sim(reasoning_sim(false)).await;
    let s = timed(&send(&h, "/chat/completions", chat(100), &[]).await, false);
    assert!(s.ttft_ms.unwrap() >= 100.0, "{s:?}");
    assert_eq!(s.ttft_ms, s.ttfc_ms);
    h.shutdown().await;
    let h = sim(reasoning_sim(true)).await;
    let body = json!({"model": "sim-model", "stream": true, "max_tokens": 100, "prompt": "hi"});
    let r = send(&h, "/completions", body, &[]).await;
    assert_eq!(tokens(&r).len(), 4, "{}", r.body);
    assert!(!r.body.contains("reasoning"), "{}", r.body);
    h.shutdown().await;
}
