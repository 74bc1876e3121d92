//! Memory against hostile servers (issue 4, "bounded resources"): a load tester pointed at a
//! broken or malicious endpoint must fail the request, not eat the machine. This bench starts
//! raw TCP servers in-process on 127.0.0.1 that send (a) one 100 MiB SSE line, (b) an endless
//! stream of small token events, (c) a 100 MiB error body, (d) 100 MiB of `data:` lines that
//! never end their event (short lines, then lines just under the 1 MiB line limit), (e) a
//! 100 MiB plain JSON body answering a stream request, and a normal short stream as the
//! reference. It runs the release `ladder` binary against each (one request per stream, 10 s
//! total timeout) and prints the outcome class, peak RSS (`VmHWM`, sampled every ms), wall time and
//! how much the server managed to send before the client hung up.
//!
//! Usage: `cargo bench --bench hostile` (the binary is `target/release/ladder` or `$LADDER_BIN`;
//! built with `cargo build --release` when missing). Under `cargo test` (no `--bench`) it only
//! checks its own CSV reading.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;
/// What the server offers in the 100 MiB cases.
const HUGE: usize = 100 * MIB;

type Answer = fn(&mut TcpStream, &AtomicU64);

struct Case {
    name: &'static str,
    /// Concurrent streams (one request each).
    streams: u32,
    expect: &'static str,
    answer: Answer,
}

const CASES: [Case; 8] = [
    Case {
        name: "normal short stream (reference)",
        streams: 1,
        expect: "ok",
        answer: normal,
    },
    Case {
        name: "(a) one 100 MiB SSE line",
        streams: 1,
        expect: "protocol",
        answer: huge_line,
    },
    Case {
        name: "(b) endless small token events",
        streams: 1,
        expect: "protocol or timeout_total",
        answer: endless_events,
    },
    Case {
        name: "(c) 100 MiB error body (HTTP 500)",
        streams: 1,
        expect: "http_5xx",
        answer: huge_error_body,
    },
    Case {
        name: "(d) 100 MiB of data lines, no event end",
        streams: 1,
        expect: "protocol",
        answer: endless_event,
    },
    Case {
        name: "(d') same with 1 MiB data lines",
        streams: 1,
        expect: "protocol",
        answer: endless_event_long_lines,
    },
    Case {
        name: "(d') ... at 8 streams at once",
        streams: 8,
        expect: "protocol",
        answer: endless_event_long_lines,
    },
    Case {
        name: "(e) 100 MiB JSON body (HTTP 200)",
        streams: 1,
        expect: "protocol",
        answer: huge_json_body,
    },
];

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
const TOKEN: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\"}}]}\n\n";

/// Writes `bytes`, counting them; false once the client has gone away.
fn send(conn: &mut TcpStream, bytes: &[u8], total: &AtomicU64) -> bool {
    let ok = conn.write_all(bytes).is_ok();
    if ok {
        total.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    }
    ok
}

/// Sends `unit` repeatedly until `limit` bytes or the client hangs up (`limit` 0 = no limit).
fn repeat(conn: &mut TcpStream, unit: &[u8], limit: usize, total: &AtomicU64) -> bool {
    let per_write = (64 * 1024 / unit.len()).max(1);
    let block = unit.repeat(per_write);
    let mut sent = 0;
    while limit == 0 || sent < limit {
        let n = if limit == 0 {
            block.len()
        } else {
            (limit - sent).min(block.len())
        };
        if !send(conn, &block[..n], total) {
            return false;
        }
        sent += n;
    }
    true
}

fn normal(conn: &mut TcpStream, total: &AtomicU64) {
    let _ = send(conn, SSE_HEAD, total)
        && repeat(conn, TOKEN, TOKEN.len() * 16, total)
        && send(conn, b"data: [DONE]\n\n", total);
}

fn huge_line(conn: &mut TcpStream, total: &AtomicU64) {
    let _ = send(conn, SSE_HEAD, total)
        && send(conn, b"data: ", total)
        && repeat(conn, b"x", HUGE, total)
        && send(conn, b"\n\n", total);
}

fn endless_events(conn: &mut TcpStream, total: &AtomicU64) {
    let _ = send(conn, SSE_HEAD, total) && repeat(conn, TOKEN, 0, total);
}

fn endless_event(conn: &mut TcpStream, total: &AtomicU64) {
    let _ = send(conn, SSE_HEAD, total) && repeat(conn, b"data: x\n", HUGE, total);
}

/// Every line just under the 1 MiB line limit: only the response size limit stops the event.
fn endless_event_long_lines(conn: &mut TcpStream, total: &AtomicU64) {
    let mut line = b"data: ".to_vec();
    line.resize(MIB - 64, b'y');
    line.push(b'\n');
    let _ = send(conn, SSE_HEAD, total) && repeat(conn, &line, HUGE, total);
}

fn huge_error_body(conn: &mut TcpStream, total: &AtomicU64) {
    let head = format!(
        "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        HUGE + 2
    );
    let _ = send(conn, head.as_bytes(), total)
        && send(conn, b"{\"", total)
        && repeat(conn, b"e", HUGE, total);
}

fn huge_json_body(conn: &mut TcpStream, total: &AtomicU64) {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        HUGE + 2
    );
    let _ = send(conn, head.as_bytes(), total)
        && send(conn, b"{\"", total)
        && repeat(conn, b"j", HUGE, total);
}

/// Serves `answer` on 127.0.0.1 (each connection: read the request, then answer).
fn serve(answer: Answer) -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local addr").port();
    let sent = Arc::new(AtomicU64::new(0));
    let total = Arc::clone(&sent);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let total = Arc::clone(&total);
            std::thread::spawn(move || {
                if read_request(&mut conn) {
                    answer(&mut conn, &total);
                }
            });
        }
    });
    (port, sent)
}

/// Reads one request: headers, then a `content-length` body.
fn read_request(conn: &mut TcpStream) -> bool {
    if conn.set_read_timeout(Some(Duration::from_secs(5))).is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut have = buf.len() - end;
    while have < length {
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => have += n,
        }
    }
    true
}

/// Waits for the child, sampling its peak RSS (`VmHWM`, KiB) every millisecond; returns the
/// exit code and the peak. (`wait4`'s `ru_maxrss` would not do: a child spawned with vfork
/// starts from this process's high-water mark, which the 100 MiB servers inflate.)
fn wait_with_rss(child: &mut std::process::Child) -> Result<(i32, u64), String> {
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Some(kib) = std::fs::read_to_string(&status_path)
            .ok()
            .and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmHWM:").map(vm_kib)))
        {
            peak = peak.max(kib);
        }
        match child.try_wait() {
            Ok(Some(status)) => return Ok((status.code().unwrap_or(-1), peak)),
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => return Err(format!("wait for ladder: {e}")),
        }
    }
}

/// `   1234 kB` -> 1234.
fn vm_kib(v: &str) -> u64 {
    v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0)
}

/// The outcome classes of a requests.csv (`ok` for success), distinct, joined by `+`.
fn outcome(requests_csv: &str) -> Result<String, String> {
    let mut rdr = csv::Reader::from_reader(requests_csv.as_bytes());
    let headers = rdr.headers().map_err(|e| e.to_string())?.clone();
    let i = headers
        .iter()
        .position(|h| h == "error_class")
        .ok_or("requests.csv has no error_class column")?;
    let mut classes = std::collections::BTreeSet::new();
    for row in rdr.records() {
        let row = row.map_err(|e| e.to_string())?;
        classes.insert(match row.get(i).unwrap_or("") {
            "" => "ok".to_string(),
            class => class.to_string(),
        });
    }
    if classes.is_empty() {
        return Err("requests.csv has no request".into());
    }
    Ok(classes.into_iter().collect::<Vec<_>>().join("+"))
}

fn ladder_binary() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("LADDER_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join("target/release/ladder");
    if !bin.is_file() {
        eprintln!("hostile bench: building {} ...", bin.display());
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--release", "--bin", "ladder"])
            .current_dir(root)
            .status()
            .map_err(|e| format!("cargo build --release: {e}"))?;
        if !status.success() || !bin.is_file() {
            return Err("cargo build --release failed".into());
        }
    }
    Ok(bin)
}

struct Row {
    name: &'static str,
    expect: &'static str,
    got: String,
    rss_mb: f64,
    secs: f64,
    sent_mb: f64,
}

fn run_case(bin: &Path, dir: &Path, i: usize, case: &Case) -> Result<Row, String> {
    let (port, sent) = serve(case.answer);
    let name = format!("hostile-{i}");
    std::fs::create_dir_all(dir.join("prompts")).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("prompts/p.txt"), "hello\n").map_err(|e| e.to_string())?;
    let scenario = dir.join(format!("{name}.yaml"));
    let streams = case.streams;
    let yaml = format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  base_url: http://127.0.0.1:{port}/v1\n  models: [m]\n  timeouts: {{total: 10s}}\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 16\nload:\n  ladder: [{streams}]\n  requests_per_step: {streams}\n  warmup_requests: 0\n"
    );
    std::fs::write(&scenario, yaml).map_err(|e| e.to_string())?;
    let out = dir.join("runs");
    let t0 = Instant::now();
    let mut child = Command::new(bin)
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&scenario)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let (code, rss_kb) = wait_with_rss(&mut child)?;
    let secs = t0.elapsed().as_secs_f64();
    if code != 0 {
        return Err(format!("{}: ladder exited with {code}", case.name));
    }
    let run_dir = std::fs::read_dir(out.join(&name))
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .next()
        .ok_or("no run directory")?;
    let csv = std::fs::read_to_string(run_dir.join("requests.csv")).map_err(|e| e.to_string())?;
    Ok(Row {
        name: case.name,
        expect: case.expect,
        got: outcome(&csv)?,
        rss_mb: rss_kb as f64 / 1024.0,
        secs,
        sent_mb: sent.load(Ordering::Relaxed) as f64 / MIB as f64,
    })
}

fn bench() -> Result<(), String> {
    let bin = ladder_binary()?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    println!(
        "hostile servers vs {} (one request per stream, total timeout 10 s)\n",
        bin.display()
    );
    println!(
        "| {:<40} | {:<25} | {:<16} | {:>12} | {:>6} | {:>14} |",
        "case", "expected", "outcome", "peak RSS MB", "time s", "server sent MB"
    );
    println!(
        "|{:-<42}|{:-<27}|{:-<18}|{:->14}|{:->8}|{:->16}|",
        "", "", "", "", "", ""
    );
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let row = run_case(&bin, dir.path(), i, case)?;
        if !row.expect.split(" or ").any(|e| e == row.got) {
            failures.push(format!(
                "{}: expected {}, got {}",
                row.name, row.expect, row.got
            ));
        }
        println!(
            "| {:<40} | {:<25} | {:<16} | {:>12.1} | {:>6.2} | {:>14.1} |",
            row.name, row.expect, row.got, row.rss_mb, row.secs, row.sent_mb
        );
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // Under `cargo test`: only the pure part.
        let csv = "model,error_class,status\nm,,ok\n";
        assert_eq!(outcome(csv).as_deref(), Ok("ok"));
        let csv = "model,error_class,status\nm,protocol,error\n";
        assert_eq!(outcome(csv).as_deref(), Ok("protocol"));
        let csv = "model,error_class,status\nm,protocol,error\nm,,ok\nm,protocol,error\n";
        assert_eq!(outcome(csv).as_deref(), Ok("ok+protocol"));
        assert!(outcome("model,error_class\n").is_err());
        assert_eq!(vm_kib("\t  9344 kB"), 9344);
        println!("hostile: self-check ok (run `cargo bench --bench hostile` for the figures)");
        return;
    }
    if let Err(e) = bench() {
        eprintln!("hostile bench: {e}");
        std::process::exit(1);
    }
}
