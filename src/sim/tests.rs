//! End-to-end tests of the simulator over real sockets, with reqwest as the client. Timings are
//! kept to a few milliseconds; timing asserts are ordering or generous bounds, never exact.

use super::*;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// One SSE event as the client saw it.
#[derive(Debug, Clone)]
struct Ev {
    at: Duration,
    event: Option<String>,
    data: String,
}

impl Ev {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

struct Reply {
    status: u16,
    headers: reqwest::header::HeaderMap,
    events: Vec<Ev>,
    /// The body (or the response head, then `status` is 0) ended with a transport error.
    broken: bool,
    body: String,
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn fast() -> SimParams {
    let mut p = SimParams::default();
    for (k, v) in [
        ("ttft", "2ms"),
        ("tpot", "1ms"),
        ("tpot_jitter", "0"),
        ("output_tokens", "4"),
    ] {
        p.set(k, v).unwrap();
    }
    p
}

async fn sim(p: SimParams) -> SimHandle {
    start(p, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

async fn send(h: &SimHandle, path: &str, body: Value, headers: &[(&str, &str)]) -> Reply {
    let mut rb = client()
        .post(format!("{}{path}", h.base_url()))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let t0 = Instant::now();
    let resp = match rb.send().await {
        Ok(resp) => resp,
        // The connection dropped before the response head (status 0).
        Err(e) if e.is_request() => {
            let headers = reqwest::header::HeaderMap::new();
            return Reply {
                status: 0,
                headers,
                events: vec![],
                broken: true,
                body: String::new(),
            };
        }
        Err(e) => panic!("{e}"),
    };
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let mut stream = resp.bytes_stream();
    let (mut buf, mut body, mut events, mut broken) = (String::new(), String::new(), vec![], false);
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            broken = true;
            break;
        };
        let at = t0.elapsed();
        let text = String::from_utf8(chunk.to_vec()).unwrap();
        body.push_str(&text);
        buf.push_str(&text);
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let mut ev = Ev {
                at,
                event: None,
                data: String::new(),
            };
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    ev.event = Some(e.into());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    ev.data = d.into();
                }
            }
            events.push(ev);
        }
    }
    Reply {
        status,
        headers,
        events,
        broken,
        body,
    }
}

async fn get_json<T: serde::de::DeserializeOwned>(url: &str) -> T {
    let text = client()
        .get(url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn chat(max_tokens: u64) -> Value {
    json!({"model": "sim-model", "stream": true, "max_tokens": max_tokens,
           "stream_options": {"include_usage": true},
           "messages": [{"role": "user", "content": "hello there, simulator"}]})
}

/// Chat/completions token events (non-empty content or text).
fn tokens(r: &Reply) -> Vec<&Ev> {
    r.events
        .iter()
        .filter(|e| {
            let v = e.json();
            let c = &v["choices"][0];
            [&c["delta"]["content"], &c["text"], &v["delta"]["text"]]
                .iter()
                .any(|s| s.as_str().is_some_and(|s| !s.is_empty()))
        })
        .collect()
}

#[tokio::test]
async fn chat_stream_shape() {
    let h = sim(fast()).await;
    let r = send(&h, "/chat/completions", chat(100), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "text/event-stream");
    let ev = &r.events;
    assert_eq!(ev.len(), 1 + 4 + 1 + 1 + 1, "{}", r.body);
    assert_eq!(ev[0].json()["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(tokens(&r).len(), 4);
    assert_eq!(ev[5].json()["choices"][0]["finish_reason"], "stop");
    let usage = ev[6].json();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 4);
    assert_eq!(usage["usage"]["prompt_tokens"], 6); // 22 chars / 4, rounded up
    assert_eq!(ev[7].data, "[DONE]");

    // max_tokens below output_tokens cuts the answer: `length`.
    let r = send(&h, "/chat/completions", chat(3), &[]).await;
    assert_eq!(tokens(&r).len(), 3);
    let finish: Vec<_> = r
        .events
        .iter()
        .filter_map(|e| {
            e.json()["choices"][0]["finish_reason"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert_eq!(finish, ["length"]);
    // Without include_usage: no usage chunk.
    let r = send(
        &h,
        "/chat/completions",
        json!({"model": "m", "stream": true}),
        &[],
    )
    .await;
    assert!(!r.body.contains("\"usage\""));
    assert_eq!(r.events.last().unwrap().data, "[DONE]");
    h.shutdown().await;
}

#[tokio::test]
async fn completions_stream_shape() {
    let h = sim(fast()).await;
    let body = json!({"model": "m", "prompt": "abcd", "stream": true, "max_tokens": 2,
                      "stream_options": {"include_usage": true}});
    let r = send(&h, "/completions", body, &[]).await;
    let ev = &r.events;
    assert_eq!(ev.len(), 2 + 1 + 1 + 1, "{}", r.body);
    assert_eq!(ev[0].json()["choices"][0]["text"], " the");
    assert_eq!(ev[1].json()["choices"][0]["text"], " quick");
    assert_eq!(ev[2].json()["choices"][0]["finish_reason"], "length");
    assert_eq!(ev[3].json()["usage"]["completion_tokens"], 2);
    assert_eq!(ev[4].data, "[DONE]");
    h.shutdown().await;
}

#[tokio::test]
async fn messages_stream_shape() {
    let mut p = fast();
    p.set("output_tokens", "40").unwrap();
    let h = sim(p).await;
    let body = json!({"model": "claude", "max_tokens": 100, "stream": true,
                      "messages": [{"role": "user", "content": "abcdefgh"}]});
    let r = send(&h, "/messages", body, &[]).await;
    let names: Vec<&str> = r
        .events
        .iter()
        .map(|e| e.event.as_deref().unwrap())
        .collect();
    assert_eq!(
        &names[..3],
        ["message_start", "content_block_start", "ping"]
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "content_block_delta")
            .count(),
        40
    );
    assert_eq!(names.iter().filter(|n| **n == "ping").count(), 2); // opening + after token 32
    assert_eq!(
        &names[names.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    assert_eq!(r.events[0].json()["message"]["usage"]["input_tokens"], 2);
    let delta = r.events[names.len() - 2].json();
    assert_eq!(delta["usage"]["output_tokens"], 40);
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    h.shutdown().await;
}

#[tokio::test]
async fn ttft_and_tpot_follow_the_configuration() {
    let mut p = fast();
    p.set("ttft", "100ms").unwrap();
    p.set("tpot", "10ms").unwrap();
    p.set("output_tokens", "6").unwrap();
    let h = sim(p).await;
    let r = send(
        &h,
        "/chat/completions",
        chat(100),
        &[("x-request-id", "t-1")],
    )
    .await;
    let toks = tokens(&r);
    assert_eq!(toks.len(), 6);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    // Only what cannot come early is bounded below: token k is sent no earlier than its
    // deadline, arrival + ttft + k × tpot (a loaded machine delays a token, never advances it,
    // and a late token shortens the gap to the next one, so gaps are not bounded below). Upper
    // bounds are 30x generous. Exact timing is asserted in pretend time (`runner::tests`).
    let ttft = ms(toks[0].at);
    assert!((98.0..3000.0).contains(&ttft), "client TTFT {ttft} ms");
    for (k, t) in toks.iter().enumerate() {
        let due = 100.0 + 10.0 * k as f64;
        assert!(
            ms(t.at) >= due - 2.0,
            "token {k} at {} ms, due {due} ms",
            ms(t.at)
        );
        if k > 0 {
            assert!(
                t.at >= toks[k - 1].at,
                "token {k} came before token {}",
                k - 1
            );
        }
    }
    let span = ms(toks[5].at - toks[0].at);
    assert!(span < 3000.0, "5 intervals of 10 ms took {span} ms");
    let truth = h.truth();
    assert_eq!(truth.len(), 1);
    let t = &truth[0];
    let server_ttft = t.first_token_ms.unwrap() - t.arrival_ms;
    assert!(
        (99.0..3000.0).contains(&server_ttft),
        "server TTFT {server_ttft} ms"
    );
    let server_last = t.last_token_ms.unwrap() - t.arrival_ms;
    assert!(
        (149.0..3000.0).contains(&server_last),
        "server's last token {server_last} ms after arrival, due at 150 ms"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn concurrency_cap_queues_requests_fifo() {
    // Wall clock on a loaded machine: only what cannot come early is bounded below (a sleep
    // never ends early, a queued request starts after a slot frees), upper bounds are loose,
    // and the service time (540 ms) dwarfs how far apart the client's four sends can land.
    // Exact queueing times are checked in pretend time (`runner::tests::queueing_ladder_in_pretend_time`).
    let mut p = fast();
    for (k, v) in [
        ("concurrency_cap", "2"),
        ("ttft", "500ms"),
        ("tpot", "10ms"),
        ("output_tokens", "5"),
    ] {
        p.set(k, v).unwrap();
    }
    let h = sim(p).await;
    let replies = futures_util::future::join_all((0..4).map(|i| {
        let id = format!("cap-{i}");
        let h = &h;
        async move { send(h, "/chat/completions", chat(100), &[("x-request-id", &id)]).await }
    }))
    .await;
    let mut ttfts: Vec<f64> = replies
        .iter()
        .map(|r| tokens(r)[0].at.as_secs_f64() * 1e3)
        .collect();
    ttfts.sort_by(f64::total_cmp);
    assert!(
        ttfts[0] >= 500.0,
        "no first token before the TTFT: {ttfts:?}"
    );
    // The two that waited lost one service time (540 ms), less however far apart the sends were.
    assert!(ttfts[2] >= 800.0, "two wait one service time: {ttfts:?}");
    for r in &replies {
        let t = tokens(r);
        let span = (t[4].at - t[0].at).as_secs_f64() * 1e3;
        // Flat TPOT while queued: 4 × 10 ms, never the ≥ 540 ms queue wait (the client may
        // read tokens in a burst, so only the server's stamps bound it below, further down).
        assert!(span < 500.0, "TPOT stays flat while queued: {span} ms");
    }
    let stats = h.stats();
    assert_eq!((stats.max_active, stats.queue_peak), (2, 2));
    assert_eq!((stats.active, stats.queued), (0, 0));
    // Server truth: each queued request got its first token a full TTFT after a slot freed.
    let mut truth = h.truth();
    truth.sort_by(|a, b| {
        a.first_token_ms
            .unwrap()
            .total_cmp(&b.first_token_ms.unwrap())
    });
    let first_done = truth[0]
        .last_token_ms
        .unwrap()
        .min(truth[1].last_token_ms.unwrap());
    // Token deadlines are absolute (slot start + TTFT + 4 × 10 ms) but stamped when written,
    // so only the last token is bounded below, from the arrival.
    for t in &truth {
        let (first, last) = (t.first_token_ms.unwrap(), t.last_token_ms.unwrap());
        assert!(last >= t.arrival_ms + 539.0, "{t:?}");
        assert!(last - first < 500.0, "TPOT stays flat while queued: {t:?}");
    }
    for queued in &truth[2..] {
        assert!(
            queued.first_token_ms.unwrap() >= first_done + 499.0,
            "{truth:?}"
        );
    }
    h.shutdown().await;
}

#[tokio::test]
async fn tpm_limit_answers_429_with_headers() {
    let mut p = fast();
    p.set("tpm", "100").unwrap();
    let h = sim(p).await;
    let ok = send(&h, "/chat/completions", chat(80), &[]).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.headers["x-ratelimit-limit-tokens"], "100");
    assert_eq!(ok.headers["x-ratelimit-remaining-tokens"], "14"); // 100 - (6 + 80)
    let r = send(&h, "/chat/completions", chat(80), &[]).await;
    assert_eq!(r.status, 429);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["error"]["type"], "tokens");
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    let hd = &r.headers;
    for name in ["retry-after", "retry-after-ms", "x-ratelimit-reset-tokens"] {
        assert!(hd.contains_key(name), "{name} missing: {hd:?}");
    }
    // 72 tokens missing at 100/60 per second: about 43 s.
    let wait_ms: u64 = hd["retry-after-ms"].to_str().unwrap().parse().unwrap();
    assert!((43_000..43_300).contains(&wait_ms), "{wait_ms}");
    assert_eq!(hd["retry-after"], "44");
    assert!(hd["x-ratelimit-reset-tokens"]
        .to_str()
        .unwrap()
        .ends_with('s'));
    assert_eq!(h.stats().rate_limited["tokens"], 1);
    assert_eq!(h.truth().iter().filter(|t| t.status == 429).count(), 1);
    h.shutdown().await;
}

#[tokio::test]
async fn rpm_limit_on_anthropic_path_uses_its_headers() {
    let mut p = fast();
    p.set("rpm", "1").unwrap();
    let h = sim(p).await;
    let body = json!({"model": "c", "max_tokens": 2, "stream": true, "messages": []});
    assert_eq!(send(&h, "/messages", body.clone(), &[]).await.status, 200);
    let r = send(&h, "/messages", body, &[]).await;
    assert_eq!(r.status, 429);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "rate_limit_error");
    assert_eq!(r.headers["anthropic-ratelimit-requests-limit"], "1");
    assert_eq!(r.headers["anthropic-ratelimit-requests-remaining"], "0");
    assert_eq!(r.headers["retry-after"], "60");
    assert_eq!(h.stats().rate_limited["requests"], 1);
    h.shutdown().await;
}

#[tokio::test]
async fn model_overrides_change_speed_and_length() {
    let mut p = fast();
    p.set("models.slow.ttft", "80ms").unwrap();
    p.set("models.short.output_tokens", "2").unwrap();
    let h = sim(p).await;
    let body = |m: &str| json!({"model": m, "stream": true, "messages": []});
    let slow = send(&h, "/chat/completions", body("slow"), &[]).await;
    let short = send(&h, "/chat/completions", body("short"), &[]).await;
    let plain = send(&h, "/chat/completions", body("other"), &[]).await;
    assert!(tokens(&slow)[0].at >= Duration::from_millis(78));
    assert!(tokens(&plain)[0].at < tokens(&slow)[0].at);
    assert_eq!(tokens(&short).len(), 2);
    assert_eq!(tokens(&slow).len(), 4);
    assert_eq!(slow.events[0].json()["model"], "slow");
    h.shutdown().await;
}

#[tokio::test]
async fn non_streaming_returns_json_after_the_full_delay() {
    let mut p = fast();
    p.set("ttft", "30ms").unwrap();
    p.set("tpot", "10ms").unwrap();
    let h = sim(p).await;
    let t0 = Instant::now();
    let r = send(
        &h,
        "/completions",
        json!({"model": "m", "prompt": "x", "max_tokens": 3}),
        &[],
    )
    .await;
    assert!(t0.elapsed() >= Duration::from_millis(50), "30 + 2 × 10 ms");
    assert_eq!(r.headers["content-type"], "application/json");
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["choices"][0]["text"], " the quick brown");
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    assert_eq!(v["usage"]["completion_tokens"], 3);
    let t = &h.truth()[0];
    assert_eq!(t.output_tokens, 3);
    assert!(t.last_token_ms.unwrap() - t.first_token_ms.unwrap() >= 19.0);
    h.shutdown().await;
}

#[tokio::test]
async fn bad_bodies_get_400() {
    let h = sim(fast()).await;
    let url = format!("{}/chat/completions", h.base_url());
    let r = client().post(&url).body("{nope").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(v["error"]["type"], "invalid_request_error");
    let r = send(&h, "/chat/completions", json!({"messages": []}), &[]).await;
    assert_eq!(r.status, 400);
    assert!(r.body.contains("model"));
    let r = send(&h, "/messages", json!({"max_tokens": 1}), &[]).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&r.body).unwrap()["type"],
        "error"
    );
    assert_eq!(h.stats().rejected["400"], 3);
    h.shutdown().await;
}

#[tokio::test]
async fn api_key_is_required_when_configured() {
    let mut p = fast();
    p.set("require_api_key", "sk-good").unwrap();
    let h = sim(p).await;
    let r = send(
        &h,
        "/chat/completions",
        chat(1),
        &[("authorization", "Bearer sk-bad")],
    )
    .await;
    assert_eq!(r.status, 401);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["error"]["message"], "Incorrect API key provided: sk-bad");
    assert_eq!(v["error"]["code"], "invalid_api_key");
    assert_eq!(
        send(&h, "/chat/completions", chat(1), &[]).await.status,
        401
    );
    let ok = send(
        &h,
        "/chat/completions",
        chat(1),
        &[("authorization", "Bearer sk-good")],
    )
    .await;
    assert_eq!(ok.status, 200);
    let msg = json!({"model": "c", "max_tokens": 1, "stream": true, "messages": []});
    assert_eq!(
        send(&h, "/messages", msg.clone(), &[("x-api-key", "sk-good")])
            .await
            .status,
        200
    );
    let r = send(&h, "/messages", msg, &[("x-api-key", "sk-nope")]).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        serde_json::from_str::<Value>(&r.body).unwrap()["error"]["type"],
        "authentication_error"
    );
    let models = client()
        .get(format!("{}/models", h.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 401);
    assert_eq!(h.stats().rejected["401"], 4);
    h.shutdown().await;
}

#[tokio::test]
async fn unknown_models_and_paths_get_404() {
    let mut p = fast();
    p.set("known_models_only", "true").unwrap();
    p.set("models.fast.tpot", "1ms").unwrap();
    let h = sim(p).await;
    let body = |m: &str| json!({"model": m, "stream": true});
    let r = send(&h, "/chat/completions", body("gpt-9"), &[]).await;
    assert_eq!(r.status, 404);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["error"]["code"], "model_not_found");
    assert_eq!(
        send(&h, "/chat/completions", body("fast"), &[])
            .await
            .status,
        200
    );
    assert_eq!(
        send(&h, "/chat/completions", body("sim-model"), &[])
            .await
            .status,
        200
    );
    let r = send(&h, "/chat/complete", body("fast"), &[]).await;
    assert_eq!(r.status, 404);
    assert!(r.body.contains("Invalid URL (POST /v1/chat/complete)"));
    let list: Value = get_json(&format!("{}/models", h.base_url())).await;
    assert_eq!(list["object"], "list");
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["fast", "sim-model"]);
    h.shutdown().await;
}

#[tokio::test]
async fn truth_and_stats_endpoints() {
    let h = sim(fast()).await;
    send(
        &h,
        "/chat/completions",
        chat(3),
        &[("x-request-id", "req-abc")],
    )
    .await;
    send(
        &h,
        "/completions",
        json!({"model": "m", "stream": true, "max_tokens": 2}),
        &[],
    )
    .await;
    let base = h.base_url().replace("/v1", "");
    let truth: Vec<TruthRecord> = get_json(&format!("{base}/sim/truth")).await;
    assert_eq!(truth.len(), 2);
    let t = truth.iter().find(|t| t.request_id == "req-abc").unwrap();
    assert_eq!(
        (t.output_tokens, t.status, t.path.as_str()),
        (3, 200, "/v1/chat/completions")
    );
    assert!(t.first_token_ms.unwrap() > t.arrival_ms);
    assert!(t.last_token_ms.unwrap() >= t.first_token_ms.unwrap());
    assert!(truth.iter().any(|t| t.request_id.starts_with("sim-")));
    let stats: SimStats = get_json(&format!("{base}/sim/stats")).await;
    assert_eq!(stats.requests["/v1/chat/completions"], 1);
    assert_eq!(stats.requests["/v1/completions"], 1);
    assert_eq!(stats.tokens_streamed, 5);
    assert_eq!(stats.max_active, 1);
    assert_eq!(stats.faults.len(), 10);
    let direct = h.truth();
    assert_eq!(direct.len(), truth.len());
    for (a, b) in direct.iter().zip(&truth) {
        assert_eq!(
            (&a.request_id, a.output_tokens, a.status),
            (&b.request_id, b.output_tokens, b.status)
        );
        assert!((a.arrival_ms - b.arrival_ms).abs() < 1e-6);
    }
    h.shutdown().await;
}

#[tokio::test]
async fn client_leaving_mid_stream_frees_the_slot_and_records_truth() {
    let mut p = fast();
    p.set("output_tokens", "1000").unwrap();
    p.set("concurrency_cap", "1").unwrap();
    let h = sim(p).await;
    let resp = client()
        .post(format!("{}/chat/completions", h.base_url()))
        .body(chat(1000).to_string())
        .send()
        .await
        .unwrap();
    let mut s = resp.bytes_stream();
    s.next().await.unwrap().unwrap();
    drop(s);
    let mut waited = 0;
    while h.truth().is_empty() && waited < 200 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    let t = &h.truth()[0];
    assert!(t.output_tokens < 1000, "{t:?}");
    assert_eq!(h.stats().active, 0);
    // The slot is free again: the next request is served at once.
    let r = send(&h, "/chat/completions", chat(2), &[]).await;
    assert_eq!(tokens(&r).len(), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn start_rejects_invalid_params_and_shutdown_closes_the_port() {
    let mut p = fast();
    p.tpot_jitter = 3.0;
    let e = start(p, "127.0.0.1:0".parse().unwrap())
        .await
        .err()
        .unwrap();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("tpot_jitter"));
    let h = sim(fast()).await;
    let url = h.base_url();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"));
    assert_eq!(url, format!("http://{}/v1", h.addr()));
    h.shutdown().await;
    assert!(client().get(format!("{url}/models")).send().await.is_err());
}

mod faults;
mod reasoning;

/// Issue 11: hidden reasoning is counted in usage but never streamed.
#[tokio::test]
async fn hidden_reasoning_is_reported_in_usage_only() {
    let mut p = fast();
    p.set("reasoning_tokens", "30").unwrap();
    let h = sim(p).await;
    let r = send(&h, "/chat/completions", chat(100), &[]).await;
    assert_eq!(tokens(&r).len(), 4, "{}", r.body);
    assert!(!r.body.contains("reasoning_content"), "{}", r.body);
    let usage = r
        .events
        .iter()
        .map(|e| e.json())
        .find(|v| v["usage"].is_object())
        .unwrap();
    assert_eq!(usage["usage"]["completion_tokens"], 34);
    assert_eq!(
        usage["usage"]["completion_tokens_details"]["reasoning_tokens"],
        30
    );
    assert_eq!(usage["usage"]["total_tokens"], 40);
    // Anthropic counts thinking in output_tokens.
    let body = json!({"model": "m", "stream": true, "max_tokens": 100,
                      "messages": [{"role": "user", "content": "hi"}]});
    let r = send(&h, "/messages", body, &[]).await;
    assert!(r.body.contains("\"output_tokens\":34"), "{}", r.body);
    h.shutdown().await;
}
