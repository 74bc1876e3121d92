//! A by-hand measurement of server CPU per token; ignored in the normal suite.

use super::*;

/// Server CPU per token at many streams (run by hand: `cargo test --release --lib
/// sim::tests::cpu_per_token -- --ignored --nocapture`). The server runs alone on one thread;
/// the client is raw TCP on the other threads.
#[test]
#[ignore]
fn cpu_per_token() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (streams, tokens) = (1000usize, 100u32);
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut p = fast();
            p.set("tpot", "50ms").unwrap();
            p.set("output_tokens", &tokens.to_string()).unwrap();
            let h = sim(p).await;
            addr_tx.send(h.addr()).unwrap();
            let before = thread_cpu_ticks();
            let _ = stop_rx.await;
            let used = thread_cpu_ticks() - before;
            (used, h.stats().tokens_streamed)
        })
    });
    let addr = addr_rx.recv().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let body = chat(u64::from(tokens)).to_string();
        let req = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let tasks: Vec<_> = (0..streams)
            .map(|_| {
                let req = req.clone();
                tokio::spawn(async move {
                    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
                    s.write_all(req.as_bytes()).await.unwrap();
                    let mut buf = vec![0u8; 16 * 1024];
                    let mut tail = Vec::new();
                    loop {
                        let n = s.read(&mut buf).await.unwrap();
                        tail.extend_from_slice(&buf[..n]);
                        if n == 0 || tail.windows(6).any(|w| w == b"[DONE]") {
                            break;
                        }
                        let keep = tail.len().saturating_sub(8);
                        tail.drain(..keep);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    stop_tx.send(()).unwrap();
    let (ticks, total) = server.join().unwrap();
    let cpu_us = ticks as f64 * 1e6 / 100.0;
    println!(
        "server CPU {:.0} ms for {total} tokens: {:.1} us/token",
        cpu_us / 1e3,
        cpu_us / total as f64
    );
    assert_eq!(total, streams as u64 * u64::from(tokens));
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
