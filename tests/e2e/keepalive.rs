//! Issue 19 §4: keep-alive connections the server has closed are not server failures. A pool
//! that reuses a connection the server just closed loses a request the server never saw
//! (llama-server, Node.js and uvicorn close idle connections after 5 s). ladder sends such a
//! request again once on a new connection (`attempts` 2, `resent_stale`), and keeps idle
//! connections no longer than the server's `Keep-Alive: timeout=N`.

use crate::support::{read_csv, Project};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Counters {
    answered: AtomicU64,
    dropped: AtomicU64,
}

/// An OpenAI-compatible streaming server that closes connections it considers idle: a request
/// arriving on a connection more than `idle` after that connection's last answer is dropped
/// unanswered, as if the server's idle timer had fired while the request was on its way (the
/// race a pool loses against servers that close idle connections; made deterministic here).
/// `announce`: its answers say `Keep-Alive: timeout=N`.
fn closing_server(idle: Duration, announce: Option<u64>) -> (String, Arc<Counters>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let c = Arc::clone(&counters);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { break };
            let c = Arc::clone(&c);
            std::thread::spawn(move || serve(conn, idle, announce, &c));
        }
    });
    (format!("http://{addr}/v1"), counters)
}

fn serve(conn: TcpStream, idle: Duration, announce: Option<u64>, c: &Counters) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut writer = conn;
    let mut last_answer: Option<Instant> = None;
    loop {
        let mut length = 0usize;
        let mut first = true;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            first = false;
        }
        assert!(!first, "empty request head");
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if last_answer.is_some_and(|t| t.elapsed() > idle) {
            c.dropped.fetch_add(1, Ordering::Relaxed);
            let _ = writer.shutdown(std::net::Shutdown::Both);
            return;
        }
        let chunk = |content: &str| {
            format!(
                "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}}}}]}}\n\n"
            )
        };
        let sse = format!(
            "{}{}{}data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":5,\"completion_tokens\":3}}}}\n\ndata: [DONE]\n\n",
            chunk("Hi"),
            chunk(" there"),
            chunk("!")
        );
        let keep_alive = announce
            .map(|t| format!("keep-alive: timeout={t}, max=100\r\n"))
            .unwrap_or_default();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n{keep_alive}\r\n",
            sse.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(sse.as_bytes()).is_err() {
            return;
        }
        c.answered.fetch_add(1, Ordering::Relaxed);
        last_answer = Some(Instant::now());
    }
}

fn rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    rows.into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect()
}

fn scenario(name: &str, base_url: &str, pause: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  base_url: {base_url}\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n  ladder: [1, 2, 4, 8]\n  requests_per_step: 16\n  warmup_requests: 0\n  pause_between_steps: {pause}\n"
    )
}

/// The server drops connections idle for more than 100 ms without saying so; the steps are
/// 400 ms apart, so the first request of every worker after a pause goes out on a connection
/// the server has closed. Every request of the ladder succeeds; those resent say so.
#[test]
fn requests_lost_on_closed_keep_alive_connections_are_resent_once() {
    let (base_url, counters) = closing_server(Duration::from_millis(100), None);
    let p = Project::new();
    let f = p.scenario("stale", &scenario("stale", &base_url, "400ms"));
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let dir = &p.run_dirs("stale")[0];
    let rows = rows(dir);
    assert_eq!(rows.len(), 16 * 4);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
    }
    let resent: Vec<_> = rows
        .iter()
        .filter(|r| r["resent_stale"] == "true")
        .collect();
    let dropped = counters.dropped.load(Ordering::Relaxed);
    assert!(
        dropped >= 3,
        "the server closed connections after each pause: {dropped}"
    );
    assert_eq!(
        resent.len() as u64,
        dropped,
        "one resend per request the server dropped"
    );
    for r in &rows {
        let want = if r["resent_stale"] == "true" {
            "2"
        } else {
            "1"
        };
        assert_eq!(r["attempts"], want, "{r:?}");
    }
    let (h, srows) = read_csv(&dir.join("summary.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    for s in &srows {
        assert_eq!(
            s[c("failed")],
            "0",
            "never folded into the error rate: {s:?}"
        );
    }
}

/// The server says `Keep-Alive: timeout=1` and drops connections idle for more than 1 s; steps
/// are 1.6 s apart. ladder lets idle connections go before the server does, so no request is
/// ever sent on a connection the server closed.
#[test]
fn idle_connections_are_not_kept_longer_than_the_server_says() {
    let (base_url, counters) = closing_server(Duration::from_secs(1), Some(1));
    let p = Project::new();
    let f = p.scenario("ka", &scenario("ka", &base_url, "1600ms"));
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let rows = rows(&p.run_dirs("ka")[0]);
    assert_eq!(rows.len(), 16 * 4);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        assert_eq!(r["attempts"], "1", "{r:?}");
        assert_eq!(r["resent_stale"], "false", "{r:?}");
    }
    assert_eq!(counters.dropped.load(Ordering::Relaxed), 0);
    assert_eq!(counters.answered.load(Ordering::Relaxed), 64);
}
