//! Simulator CPU per streamed token at many concurrent streams: the figure that says how many
//! streams one simulator core can serve before the simulator, not the model, sets the numbers.
//! The server runs alone on one thread; the client is raw TCP on the other threads, so the
//! server thread's CPU time is the simulator's cost.
//!
//! Usage: `cargo bench --bench sim_cpu` (prints µs of server CPU per token). Under `cargo test`
//! (no `--bench`) it only checks its own `/proc` reading.

use ladder::sim::{start, SimParams, DEFAULT_MODEL};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const STREAMS: usize = 1000;
const TOKENS: u32 = 100;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        assert!(thread_cpu_ticks() < u64::MAX);
        println!("sim_cpu: self-check ok (run `cargo bench --bench sim_cpu` for the figure)");
        return;
    }
    let (ticks, total) = measure();
    let cpu_us = ticks as f64 * 1e6 / 100.0;
    println!(
        "sim_cpu: {STREAMS} streams x {TOKENS} tokens: server CPU {:.0} ms for {total} tokens, \
         {:.1} us/token",
        cpu_us / 1e3,
        cpu_us / total as f64
    );
    assert_eq!(total, STREAMS as u64 * u64::from(TOKENS));
}

/// Server thread CPU ticks used while serving every stream, and the tokens it streamed.
fn measure() -> (u64, u64) {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let mut p = SimParams::default();
            for (k, v) in [
                ("ttft", "2ms".to_string()),
                ("tpot", "50ms".to_string()),
                ("tpot_jitter", "0".to_string()),
                ("output_tokens", TOKENS.to_string()),
            ] {
                p.set(k, &v).expect("valid sim parameter");
            }
            let h = start(p, "127.0.0.1:0".parse().expect("address"))
                .await
                .expect("simulator starts");
            addr_tx.send(h.addr()).expect("main thread waits");
            let before = thread_cpu_ticks();
            let _ = stop_rx.await;
            let used = thread_cpu_ticks() - before;
            (used, h.stats().tokens_streamed)
        })
    });
    let addr = addr_rx.recv().expect("server address");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let body = serde_json::json!({
            "model": DEFAULT_MODEL,
            "messages": [{"role": "user", "content": "hello there, simulator"}],
            "stream_options": {"include_usage": true},
            "max_tokens": TOKENS,
            "stream": true,
        })
        .to_string();
        let req = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        );
        let tasks: Vec<_> = (0..STREAMS)
            .map(|_| tokio::spawn(one_stream(addr, req.clone())))
            .collect();
        for t in tasks {
            t.await.expect("stream task");
        }
    });
    stop_tx.send(()).expect("server waits");
    server.join().expect("server thread")
}

/// Sends one request over raw TCP and reads until `[DONE]`.
async fn one_stream(addr: std::net::SocketAddr, req: String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = vec![0u8; 16 * 1024];
    let mut tail = Vec::new();
    loop {
        let n = tokio::time::timeout(Duration::from_secs(60), s.read(&mut buf))
            .await
            .expect("stream makes progress")
            .expect("read");
        tail.extend_from_slice(&buf[..n]);
        if n == 0 || tail.windows(6).any(|w| w == b"[DONE]") {
            break;
        }
        let keep = tail.len().saturating_sub(8);
        tail.drain(..keep);
    }
}

/// utime + stime of the calling thread, in clock ticks (100 per second on Linux).
fn thread_cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)
}
