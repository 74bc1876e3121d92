//! Fault injection end to end: every kind at rate 1.0 produces its behaviour, in both dialects
//! and without streaming, and increments its counter.

use super::*;

async fn with_fault(kind: &str) -> (SimHandle, Reply, Reply) {
    let mut p = fast();
    p.set(&format!("faults.{kind}"), "1").unwrap();
    p.set("faults.stall_for", "150ms").unwrap();
    let h = sim(p).await;
    let chat_reply = send(&h, "/chat/completions", chat(100), &[]).await;
    let msg = json!({"model": "c", "max_tokens": 100, "stream": true, "messages": []});
    let msg_reply = send(&h, "/messages", msg, &[]).await;
    (h, chat_reply, msg_reply)
}

fn fault_count(h: &SimHandle, kind: &str) -> u64 {
    h.stats().faults[kind]
}

#[tokio::test]
async fn status_faults() {
    for (kind, status) in [
        ("http_500", 500),
        ("http_502", 502),
        ("http_503", 503),
        ("overloaded_529", 529),
    ] {
        let (h, c, m) = with_fault(kind).await;
        assert_eq!((c.status, m.status), (status, status), "{kind}");
        let cv: Value = serde_json::from_str(&c.body).unwrap();
        let mv: Value = serde_json::from_str(&m.body).unwrap();
        assert_eq!(mv["type"], "error", "{kind}");
        if kind == "overloaded_529" {
            assert_eq!(cv["error"]["type"], "overloaded_error");
        } else {
            assert_eq!(cv["error"]["type"], "server_error", "{kind}");
        }
        assert_eq!(fault_count(&h, kind), 2, "{kind}");
        assert!(h
            .truth()
            .iter()
            .all(|t| t.status == status && t.fault.as_deref() == Some(kind)));
        h.shutdown().await;
    }
}

#[tokio::test]
async fn disconnect_fault_drops_the_connection_mid_stream() {
    let (h, c, m) = with_fault("disconnect").await;
    for r in [&c, &m] {
        assert_eq!(r.status, 200);
        assert!(r.broken, "body should end with an error: {}", r.body);
        assert_eq!(tokens(r).len(), 2);
        assert!(!r.body.contains("[DONE]") && !r.body.contains("message_stop"));
    }
    assert_eq!(fault_count(&h, "disconnect"), 2);
    assert!(h.truth().iter().all(|t| t.output_tokens == 2));
    h.shutdown().await;
}

#[tokio::test]
async fn stall_fault_pauses_then_continues() {
    let (h, c, m) = with_fault("stall").await;
    for r in [&c, &m] {
        let t = tokens(r);
        assert_eq!(t.len(), 4, "{}", r.body);
        // Lower bounds only (a loaded machine can delay any arrival, never advance one): the
        // third token cannot arrive before the stall has passed since the request was sent.
        assert!(t[2].at >= Duration::from_millis(150), "{:?}", t[2].at);
    }
    assert!(c.body.ends_with("data: [DONE]\n\n"));
    assert_eq!(fault_count(&h, "stall"), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn malformed_fault_sends_one_bad_line() {
    let (h, c, m) = with_fault("malformed").await;
    for r in [&c, &m] {
        let bad: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.data != "[DONE]" && serde_json::from_str::<Value>(&e.data).is_err())
            .collect();
        assert_eq!(bad.len(), 1, "{}", r.body);
        assert_eq!(tokens(r).len(), 4);
    }
    assert!(c.body.ends_with("data: [DONE]\n\n"));
    assert!(m.body.contains("message_stop"));
    assert_eq!(fault_count(&h, "malformed"), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn inband_error_fault_ends_the_stream_with_an_error() {
    let (h, c, m) = with_fault("inband_error").await;
    assert_eq!(tokens(&c).len(), 2);
    let last = c.events.last().unwrap().json();
    assert_eq!(last["error"]["type"], "server_error");
    assert!(!c.body.contains("[DONE]"));
    let last = m.events.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("error"));
    assert_eq!(last.json()["error"]["type"], "overloaded_error");
    assert!(!c.broken && !m.broken);
    assert_eq!(fault_count(&h, "inband_error"), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn no_done_fault_ends_cleanly_without_marker() {
    let (h, c, m) = with_fault("no_done").await;
    assert_eq!(tokens(&c).len(), 4);
    assert!(c.body.contains("\"usage\"") && !c.body.contains("[DONE]"));
    assert!(m.body.contains("message_delta") && !m.body.contains("message_stop"));
    assert!(!c.broken && !m.broken);
    assert_eq!(fault_count(&h, "no_done"), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn json_body_fault_answers_plain_json() {
    let (h, c, m) = with_fault("json_body").await;
    assert_eq!(c.headers["content-type"], "application/json");
    let v: Value = serde_json::from_str(&c.body).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["content"],
        " the quick brown fox"
    );
    let v: Value = serde_json::from_str(&m.body).unwrap();
    assert_eq!(v["usage"]["output_tokens"], 4);
    assert_eq!(fault_count(&h, "json_body"), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn stream_only_faults_are_not_injected_without_streaming() {
    let mut p = fast();
    p.set("faults.no_done", "1").unwrap();
    let h = sim(p).await;
    let r = send(&h, "/chat/completions", json!({"model": "m"}), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(fault_count(&h, "no_done"), 0);
    assert_eq!(h.truth()[0].fault, None);
    h.shutdown().await;
}

#[tokio::test]
async fn faults_follow_the_rate_and_the_seed() {
    let run = || async {
        let mut p = fast();
        p.set("faults.http_503", "0.5").unwrap();
        p.set("output_tokens", "1").unwrap();
        let h = sim(p).await;
        let mut statuses = vec![];
        for _ in 0..40 {
            statuses.push(send(&h, "/chat/completions", chat(1), &[]).await.status);
        }
        let n = fault_count(&h, "http_503");
        h.shutdown().await;
        (statuses, n)
    };
    let (a, n) = run().await;
    let (b, _) = run().await;
    assert_eq!(a, b, "same seed, same faults");
    assert_eq!(a.iter().filter(|s| **s == 503).count() as u64, n);
    assert!((8..=32).contains(&n), "about half of 40: {n}");
}

#[tokio::test]
async fn faults_without_streaming() {
    let body = json!({"model": "m", "max_tokens": 4});
    for kind in ["disconnect", "stall", "malformed", "inband_error"] {
        let mut p = fast();
        p.set(&format!("faults.{kind}"), "1").unwrap();
        p.set("faults.stall_for", "100ms").unwrap();
        let h = sim(p).await;
        let t0 = Instant::now();
        let r = send(&h, "/chat/completions", body.clone(), &[]).await;
        let parsed = serde_json::from_str::<Value>(&r.body);
        match kind {
            "disconnect" => assert!(r.broken && r.body.is_empty(), "{kind}"),
            "stall" => {
                assert!(t0.elapsed() >= Duration::from_millis(100));
                assert_eq!(parsed.unwrap()["usage"]["completion_tokens"], 4);
            }
            "malformed" => assert!(parsed.is_err(), "{}", r.body),
            _ => assert_eq!(parsed.unwrap()["error"]["type"], "server_error"),
        }
        assert_eq!(fault_count(&h, kind), 1, "{kind}");
        h.shutdown().await;
    }
}
