//! Every way a request can take too long, and every hostile answer, ends as its own error class
//! (docs/files.md): first token, idle, total and connect timeouts against the simulator, a closed
//! port, and tiny raw TCP servers that send an endless SSE line or trickle bytes forever.

use crate::support::{read_csv, sim_scenario, Project};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn request_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    rows.into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect()
}

fn ms(row: &BTreeMap<String, String>, name: &str) -> f64 {
    row[name]
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number in {row:?}"))
}

/// Runs `yaml` as scenario `name` and returns its rows, after checking that every row failed
/// with `class`. Failures are data (every file is written), but a run in which nothing
/// succeeded exits 1: nothing was measured.
fn run_expecting(
    p: &Project,
    name: &str,
    yaml: &str,
    class: &str,
) -> Vec<BTreeMap<String, String>> {
    let f = p.scenario(name, yaml);
    p.ladder().args(["run", "--quiet"]).arg(&f).assert().code(1);
    let dirs = p.run_dirs(name);
    assert_eq!(dirs.len(), 1);
    let rows = request_rows(&dirs[0]);
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r["status"], "error", "{r:?}");
        assert_eq!(r["error_class"], class, "{r:?}");
        assert!(!r["error_message"].is_empty(), "{r:?}");
    }
    let (h, srows) = read_csv(&dirs[0].join("summary.csv"));
    let c = |name: &str| h.iter().position(|x| x == name).unwrap();
    for s in &srows {
        assert_eq!(s[c("succeeded")], "0");
        assert_eq!(s[c("attempted")], s[c("failed")]);
    }
    rows
}

/// A scenario against a server at `base_url` (no key), two requests at one stream.
fn url_scenario(name: &str, base_url: &str, timeouts: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  base_url: {base_url}\n  models: [m]\n  timeouts: {timeouts}\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n  ladder: [1]\n  requests_per_step: 2\n  warmup_requests: 0\n"
    )
}

#[test]
fn no_first_token_in_time_is_timeout_first_token() {
    let p = Project::new();
    let yaml = sim_scenario(
        "ft",
        "    ttft: 2s\n    tpot: 1ms\n    output_tokens: 4",
        "  ladder: [2]\n  requests_per_step: 2\n  warmup_requests: 0",
        4,
    )
    .replace("  models:", "  timeouts: {first_token: 300ms}\n  models:");
    for r in run_expecting(&p, "ft", &yaml, "timeout_first_token") {
        let e2e = ms(&r, "e2e_ms");
        assert!((300.0..1900.0).contains(&e2e), "ended at {e2e} ms: {r:?}");
        assert_eq!(r["ttft_ms"], "", "no token arrived: {r:?}");
        assert_eq!(r["http_status"], "200");
    }
}

#[test]
fn a_stall_after_tokens_is_timeout_idle() {
    let p = Project::new();
    let yaml = sim_scenario(
        "idle",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 8\n    faults: {stall: 1.0, stall_for: 3s}",
        "  ladder: [2]\n  requests_per_step: 2\n  warmup_requests: 0",
        8,
    )
    .replace("  models:", "  timeouts: {idle: 300ms}\n  models:");
    for r in run_expecting(&p, "idle", &yaml, "timeout_idle") {
        let e2e = ms(&r, "e2e_ms");
        assert!((300.0..2900.0).contains(&e2e), "ended at {e2e} ms: {r:?}");
        assert!(
            ms(&r, "token_events") >= 1.0,
            "tokens came before the stall"
        );
        assert!(!r["ttft_ms"].is_empty(), "the first token was seen: {r:?}");
    }
}

#[test]
fn a_stream_longer_than_the_total_timeout_is_timeout_total() {
    let p = Project::new();
    // 200 tokens at 20 ms: 4 s of steady tokens, never idle, cut at 500 ms.
    let yaml = sim_scenario(
        "total",
        "    ttft: 5ms\n    tpot: 20ms\n    tpot_jitter: 0\n    output_tokens: 200",
        "  ladder: [2]\n  requests_per_step: 2\n  warmup_requests: 0",
        200,
    )
    .replace("  models:", "  timeouts: {total: 500ms}\n  models:");
    for r in run_expecting(&p, "total", &yaml, "timeout_total") {
        let e2e = ms(&r, "e2e_ms");
        assert!((500.0..3000.0).contains(&e2e), "ended at {e2e} ms: {r:?}");
        assert!(ms(&r, "token_events") >= 5.0, "{r:?}");
    }
}

#[test]
fn a_closed_port_is_connect() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = Project::new();
    let yaml = url_scenario("closed", &format!("http://127.0.0.1:{port}/v1"), "{}");
    for r in run_expecting(&p, "closed", &yaml, "connect") {
        assert_eq!(r["http_status"], "", "{r:?}");
    }
}

#[test]
fn a_listener_that_never_accepts_is_timeout_connect() {
    // Backlog 0 and one queued connection: further SYNs are dropped, so connect hangs.
    let listener = {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        socket.listen(0).unwrap().into_std().unwrap()
    };
    let addr = listener.local_addr().unwrap();
    let _queued: Vec<TcpStream> = (0..2)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok())
        .collect();
    let p = Project::new();
    let yaml = url_scenario(
        "hang",
        &format!("http://{addr}/v1"),
        "{connect: 300ms, first_token: 5s}",
    );
    for r in run_expecting(&p, "hang", &yaml, "timeout_connect") {
        let e2e = ms(&r, "e2e_ms");
        assert!((300.0..4000.0).contains(&e2e), "ended at {e2e} ms: {r:?}");
    }
    drop(listener);
}

/// A raw HTTP/1.1 server on 127.0.0.1: reads each request, then lets `answer` write anything.
/// Returns the port and the number of bytes `answer` managed to write (over all connections).
fn raw_server(answer: fn(&mut TcpStream, &AtomicU64)) -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let written = Arc::new(AtomicU64::new(0));
    let total = Arc::clone(&written);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let total = Arc::clone(&total);
            std::thread::spawn(move || {
                if read_request(&mut conn).is_some() {
                    answer(&mut conn, &total);
                }
            });
        }
    });
    (port, written)
}

/// Reads one request (headers and a `content-length` body); `None` on EOF or a timeout.
fn read_request(conn: &mut TcpStream) -> Option<()> {
    conn.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let n = conn.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut have = buf.len() - header_end;
    while have < length {
        let n = conn.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        have += n;
    }
    Some(())
}

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

/// Writes `bytes`, counting them; false once the client has gone away.
fn send(conn: &mut TcpStream, bytes: &[u8], total: &AtomicU64) -> bool {
    let ok = conn.write_all(bytes).is_ok();
    if ok {
        total.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    }
    ok
}

#[test]
fn an_endless_sse_line_is_protocol_without_reading_it_all() {
    let (port, written) = raw_server(|conn, total| {
        let block = vec![b'x'; 64 << 10];
        if !send(conn, SSE_HEAD, total) || !send(conn, b"data: ", total) {
            return;
        }
        // At most 256 MiB: far more than the client may buffer.
        for _ in 0..4096 {
            if !send(conn, &block, total) {
                return;
            }
        }
    });
    let p = Project::new();
    let yaml = url_scenario(
        "line",
        &format!("http://127.0.0.1:{port}/v1"),
        "{total: 20s}",
    );
    for r in run_expecting(&p, "line", &yaml, "protocol") {
        assert!(
            r["error_message"].contains("longer than 1048576 bytes"),
            "{r:?}"
        );
        assert_eq!(r["http_status"], "200");
    }
    // The client stopped reading soon after the 1 MiB limit (socket buffers hold a few MiB);
    // a client that buffered the line would have taken all 256 MiB per request.
    let sent = written.load(Ordering::Relaxed);
    assert!(sent < 2 * (48 << 20), "server could write {sent} bytes");
}

#[test]
fn a_server_that_trickles_bytes_forever_is_ended_by_the_total_timeout() {
    let (port, written) = raw_server(|conn, total| {
        if !send(conn, SSE_HEAD, total) {
            return;
        }
        // One byte of a line that never ends, every 50 ms, until the client hangs up.
        for _ in 0..2400 {
            if !send(conn, b"x", total) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let p = Project::new();
    let yaml = url_scenario(
        "trickle",
        &format!("http://127.0.0.1:{port}/v1"),
        "{total: 700ms}",
    );
    for r in run_expecting(&p, "trickle", &yaml, "timeout_total") {
        let e2e = ms(&r, "e2e_ms");
        assert!((700.0..3000.0).contains(&e2e), "ended at {e2e} ms: {r:?}");
    }
    assert!(written.load(Ordering::Relaxed) > 2 * SSE_HEAD.len() as u64);
}

#[test]
fn an_endless_token_stream_is_ended_by_the_total_timeout() {
    let (port, _) = raw_server(|conn, total| {
        if !send(conn, SSE_HEAD, total) {
            return;
        }
        let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\"}}]}\n\n";
        for _ in 0..2400 {
            if !send(conn, event, total) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let p = Project::new();
    let yaml = url_scenario(
        "endless",
        &format!("http://127.0.0.1:{port}/v1"),
        "{idle: 300ms, total: 700ms}",
    );
    for r in run_expecting(&p, "endless", &yaml, "timeout_total") {
        let e2e = ms(&r, "e2e_ms");
        assert!((700.0..3000.0).contains(&e2e), "ended at {e2e} ms: {r:?}");
        assert!(ms(&r, "token_events") >= 3.0, "{r:?}");
        assert!(!r["ttft_ms"].is_empty(), "{r:?}");
    }
}
