//! How fast one core turns OpenAI stream bytes into timing figures: the SSE parser alone, then
//! parser + chunk interpretation, then the whole per-event path (parse + interpret + timing), fed
//! in the read sizes a real client sees (one event per read at low load, a few events per read
//! under load, large reads when the socket backs up, and small reads that split lines); then the
//! whole path for a Responses API stream of the same tokens (its reader parses every event with
//! serde: no template fast path). Prints
//! events/s and MB/s per case. `make bench` runs it with `--bench`; under `cargo test` (no
//! `--bench`) it runs a tiny smoke pass that checks the event counts, so it cannot rot.

#[path = "support/results_md.rs"]
mod results_md;

use ladder::client::dialect::{self, EventReader};
use ladder::client::openai::ChunkReader;
use ladder::client::sse::SseParser;
use ladder::client::timing::StreamTiming;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Content tokens per synthetic response (plus role, finish and usage chunks and `[DONE]`).
const TOKENS: usize = 256;

/// A realistic chat stream (gpt-4o shape, `stream_options.include_usage` on, so every chunk
/// carries `"usage":null`, and the 2025 `obfuscation` padding field). Returns the bytes and the
/// number of events.
fn openai_stream() -> (Vec<u8>, usize) {
    const WORDS: [&str; 12] = [
        " the", " answer", " is", " that", " your", " card", " was", " charged", " twice", ",",
        " and", ".",
    ];
    let meta = r#"{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_eb9dce56a8","#;
    let head = format!(r#"{meta}"choices":["#);
    let mut s = String::new();
    let mut events = 0;
    let mut push = |s: &mut String, body: String| {
        s.push_str("data: ");
        s.push_str(&body);
        s.push_str("\n\n");
        events += 1;
    };
    push(
        &mut s,
        format!(
            r#"{head}{{"index":0,"delta":{{"role":"assistant","content":"","refusal":null}},"logprobs":null,"finish_reason":null}}],"usage":null,"obfuscation":"Xk2"}}"#
        ),
    );
    for i in 0..TOKENS {
        let w = WORDS[i % WORDS.len()];
        push(
            &mut s,
            format!(
                r#"{head}{{"index":0,"delta":{{"content":"{w}"}},"logprobs":null,"finish_reason":null}}],"usage":null,"obfuscation":"q9Zt"}}"#
            ),
        );
    }
    push(
        &mut s,
        format!(
            r#"{head}{{"index":0,"delta":{{}},"logprobs":null,"finish_reason":"stop"}}],"usage":null,"obfuscation":"a1"}}"#
        ),
    );
    push(
        &mut s,
        format!(
            r#"{meta}"choices":[],"usage":{{"prompt_tokens":120,"completion_tokens":{TOKENS},"total_tokens":{},"prompt_tokens_details":{{"cached_tokens":0,"audio_tokens":0}},"completion_tokens_details":{{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}},"obfuscation":"Zr"}}"#,
            TOKENS + 120
        ),
    );
    s.push_str("data: [DONE]\n\n");
    events += 1;
    (s.into_bytes(), events)
}

/// A Responses API stream in the shape OpenAI sends (gpt-4.1 style: every event named twice and
/// numbered, `obfuscation` padding on each delta), the same tokens as [`openai_stream`].
fn responses_stream() -> (Vec<u8>, usize) {
    const WORDS: [&str; 4] = [" the", " answer", " is", " that"];
    let response = |status: &str, usage: &str| {
        format!(
            r#"{{"id":"resp_68b0a1c2d3e4f5","object":"response","created_at":1756405000,"status":"{status}","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":256,"model":"gpt-4.1-2025-04-14","output":[],"parallel_tool_calls":true,"store":false,"temperature":1.0,"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":{usage},"metadata":{{}}}}"#
        )
    };
    let mut s = String::new();
    let mut seq = 0;
    let mut push = |s: &mut String, ty: &str, fields: String| {
        s.push_str(&format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq},{fields}}}\n\n"
        ));
        seq += 1;
    };
    let msg = r#""item_id":"msg_68b0a1c2d3e4f6","output_index":0,"content_index":0"#;
    push(
        &mut s,
        "response.created",
        format!(r#""response":{}"#, response("in_progress", "null")),
    );
    push(
        &mut s,
        "response.in_progress",
        format!(r#""response":{}"#, response("in_progress", "null")),
    );
    push(&mut s, "response.output_item.added", r#""output_index":0,"item":{"id":"msg_68b0a1c2d3e4f6","type":"message","status":"in_progress","content":[],"role":"assistant"}"#.into());
    push(
        &mut s,
        "response.content_part.added",
        format!(
            r#"{msg},"part":{{"type":"output_text","annotations":[],"logprobs":[],"text":""}}"#
        ),
    );
    for i in 0..TOKENS {
        let w = WORDS[i % WORDS.len()];
        push(
            &mut s,
            "response.output_text.delta",
            format!(r#"{msg},"delta":"{w}","logprobs":[],"obfuscation":"q9ZtkX0h3Fq1""#),
        );
    }
    push(
        &mut s,
        "response.output_text.done",
        format!(r#"{msg},"text":"…","logprobs":[]"#),
    );
    push(
        &mut s,
        "response.content_part.done",
        format!(
            r#"{msg},"part":{{"type":"output_text","annotations":[],"logprobs":[],"text":"…"}}"#
        ),
    );
    push(&mut s, "response.output_item.done", r#""output_index":0,"item":{"id":"msg_68b0a1c2d3e4f6","type":"message","status":"completed","content":[],"role":"assistant"}"#.into());
    let usage = format!(
        r#"{{"input_tokens":120,"input_tokens_details":{{"cached_tokens":0}},"output_tokens":{TOKENS},"output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":{}}}"#,
        TOKENS + 120
    );
    push(
        &mut s,
        "response.completed",
        format!(r#""response":{}"#, response("completed", &usage)),
    );
    (s.into_bytes(), TOKENS + 8)
}

/// The whole per-event path (parse + interpret + timing) through the client's reader of `api`'s
/// events; returns (events, token events).
fn one_response_as(reads: &[&[u8]], reader: fn() -> EventReader) -> (usize, u64) {
    let mut parser = SseParser::new();
    let mut reader = reader();
    let mut timing = StreamTiming::new();
    let mut n = 0;
    for (i, r) in reads.iter().enumerate() {
        let fed = parser.feed_each(r, |ev| {
            n += 1;
            if let Ok(info) = reader.interpret(ev) {
                timing.on_chunk(i as f64, &info);
            }
        });
        if fed.is_err() {
            return (0, 0);
        }
    }
    (n, black_box(timing.finish(reads.len() as f64)).token_events)
}

/// Read boundaries: the stream cut into reads of `size` bytes, or (`size == 0`) one read per
/// event, which is what a client sees when tokens arrive one per TCP segment.
fn reads(stream: &[u8], size: usize) -> Vec<&[u8]> {
    if size > 0 {
        return stream.chunks(size).collect();
    }
    let mut out = Vec::new();
    let mut start = 0;
    for (i, w) in stream.windows(2).enumerate() {
        if w == b"\n\n" {
            out.push(&stream[start..i + 2]);
            start = i + 2;
        }
    }
    if start < stream.len() {
        out.push(&stream[start..]);
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Stage {
    /// SSE parsing only.
    Sse,
    /// SSE + one stream's `ChunkReader` (the chunk compared with the stream's last one).
    Interpret,
    /// SSE + `ChunkReader` + `StreamTiming` (the client's whole per-event CPU path).
    Full,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Sse => "sse",
            Stage::Interpret => "sse+interpret",
            Stage::Full => "sse+interpret+timing",
        }
    }
}

/// Parses the whole response once through `stage`, as the client does (each event borrowed from
/// the parser, its data read as received); returns (events, token events).
fn one_response(reads: &[&[u8]], stage: Stage) -> (usize, u64) {
    let mut parser = SseParser::new();
    let mut reader = ChunkReader::chat();
    let mut timing = StreamTiming::new();
    let mut n = 0;
    for (i, r) in reads.iter().enumerate() {
        let fed = parser.feed_each(r, |ev| {
            n += 1;
            match stage {
                Stage::Sse => {
                    black_box(&ev);
                }
                Stage::Interpret => {
                    let _ = black_box(reader.read_raw(ev.event, ev.data));
                }
                Stage::Full => {
                    if let Ok(info) = reader.read_raw(ev.event, ev.data) {
                        timing.on_chunk(i as f64, &info);
                    }
                }
            }
        });
        if fed.is_err() {
            return (0, 0);
        }
    }
    let summary = timing.finish(reads.len() as f64);
    (n, black_box(summary).token_events)
}

struct Row {
    read: String,
    stage: Stage,
    events_per_s: f64,
    mb_per_s: f64,
    ns_per_event: f64,
}

fn measure(stream: &[u8], read: usize, stage: Stage, budget: Duration) -> Row {
    let rs = reads(stream, read);
    // Warm up caches and the allocator.
    for _ in 0..20 {
        one_response(&rs, stage);
    }
    let started = Instant::now();
    let (mut responses, mut evs) = (0u64, 0u64);
    while started.elapsed() < budget {
        for _ in 0..20 {
            evs += one_response(&rs, stage).0 as u64;
            responses += 1;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let bytes = responses as f64 * stream.len() as f64;
    Row {
        read: if read == 0 {
            "1 event".into()
        } else {
            format!("{read} B")
        },
        stage,
        events_per_s: evs as f64 / secs,
        mb_per_s: bytes / secs / 1e6,
        ns_per_event: secs * 1e9 / evs.max(1) as f64,
    }
}

/// The smoke pass run by `cargo test`: every read split yields every event and token, of the
/// chat stream and of the Responses one.
fn smoke(stream: &[u8], events: usize) {
    let (responses, responses_events) = responses_stream();
    let reader = dialect::of(ladder::dialect::Api::OpenAiResponses).reader;
    for read in [0, 1, 7, 100, 4096] {
        let rs = reads(stream, read);
        let (n, tokens) = one_response(&rs, Stage::Full);
        assert_eq!(n, events, "read size {read}: events");
        assert_eq!(tokens, TOKENS as u64, "read size {read}: token events");
        let rs = reads(&responses, read);
        let (n, tokens) = one_response_as(&rs, reader);
        assert_eq!(n, responses_events, "responses, read size {read}: events");
        assert_eq!(
            tokens, TOKENS as u64,
            "responses, read size {read}: token events"
        );
    }
    println!("parse bench smoke pass ok ({events} events per response, 5 read sizes)");
}

fn main() {
    let (stream, events) = openai_stream();
    results_md::self_check();
    smoke(&stream, events);
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let budget = Duration::from_millis(
        std::env::var("PARSE_BENCH_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(700),
    );
    let mut out = format!(
        "Run {}: OpenAI chat stream, {} events, {} bytes per response ({} B per event), one \
         core, command `make bench` (`cargo bench --bench parse`).\n\n\
         | reads | stage | events/s | MB/s | ns/event |\n|---|---|---:|---:|---:|\n",
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()),
        events,
        stream.len(),
        stream.len() / events
    );
    for read in [0usize, 64, 1460, 16384] {
        for stage in [Stage::Sse, Stage::Interpret, Stage::Full] {
            let r = measure(&stream, read, stage, budget);
            out.push_str(&format!(
                "| {} | {} | {:.2} M | {:.0} | {:.0} |\n",
                r.read,
                r.stage.name(),
                r.events_per_s / 1e6,
                r.mb_per_s,
                r.ns_per_event
            ));
        }
    }
    // The Responses API's events, read by its own reader (serde per event, no template).
    let (responses, responses_events) = responses_stream();
    let reader = dialect::of(ladder::dialect::Api::OpenAiResponses).reader;
    for read in [0usize, 1460] {
        let rs = reads(&responses, read);
        for _ in 0..20 {
            one_response_as(&rs, reader);
        }
        let started = Instant::now();
        let mut evs = 0u64;
        let mut responses_read = 0u64;
        while started.elapsed() < budget {
            for _ in 0..20 {
                evs += one_response_as(&rs, reader).0 as u64;
                responses_read += 1;
            }
        }
        let secs = started.elapsed().as_secs_f64();
        out.push_str(&format!(
            "| {} | responses: sse+interpret+timing ({} events, {} B/event) | {:.2} M | {:.0} | {:.0} |\n",
            if read == 0 { "1 event".to_string() } else { format!("{read} B") },
            responses_events,
            responses.len() / responses_events,
            evs as f64 / secs / 1e6,
            responses_read as f64 * responses.len() as f64 / secs / 1e6,
            secs * 1e9 / evs.max(1) as f64
        ));
    }
    println!("\nSSE parse + chunk interpretation\n\n{out}");
    match results_md::write_section("parse", &out) {
        Ok(path) => println!("(written to {})", path.display()),
        Err(e) => eprintln!("parse bench: {e}"),
    }
}
