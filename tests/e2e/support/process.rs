//! Driving a `ladder` process while it runs (kills, signals, an external simulator): spawn it,
//! read its stderr line by line, and wait for what it prints or writes, never for a guessed
//! time. `ladder run` prints `progress: MODEL · step I/N · LABEL · started` on stderr as each
//! step starts (when stderr is not a terminal), and appends to `requests.csv` at least every
//! second; `ladder sim` tells what it served at `/sim/truth` and `/sim/stats`.

use super::Project;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long any wait here may take before the test fails: far more than a loaded machine needs.
const PATIENCE: Duration = Duration::from_secs(60);

/// `ladder` in the project, to spawn: stdin closed, stdout and stderr piped.
pub fn ladder_cmd(p: &Project) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ladder"));
    c.current_dir(p.path())
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Forwards a child's stderr lines to a channel.
pub fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("piped stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The stderr lines not read yet, to the end of the stream: after the process exited, its
/// last lines may still be on their way through the reader thread (`try_iter` would miss them).
pub fn rest_of(rx: &mpsc::Receiver<String>) -> Vec<String> {
    std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(10)).ok()).collect()
}

/// Waits for a stderr line containing `needle`; returns everything read so far.
pub fn wait_for_line(rx: &mpsc::Receiver<String>, needle: &str) -> Vec<String> {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                let hit = line.contains(needle);
                seen.push(line);
                if hit {
                    return seen;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    panic!("no stderr line with `{needle}`; got {seen:?}");
}

/// Polls `done` until it holds (fails the test after a minute).
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `request_id`s of the whole rows of a run's `requests.csv` as it is on disk now (a torn
/// last row, a write in progress, is not counted); empty before the file exists.
pub fn request_ids_on_disk(run_dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(run_dir.join("requests.csv")) else {
        return Vec::new();
    };
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    let mut rdr = csv::Reader::from_reader(whole.as_bytes());
    let Some(id) = rdr
        .headers()
        .ok()
        .and_then(|h| h.iter().position(|c| c == "request_id"))
    else {
        return Vec::new();
    };
    rdr.records()
        .map(|r| r.expect("a parseable row")[id].to_string())
        .collect()
}

/// A plain HTTP GET to 127.0.0.1, returning the parsed JSON body.
pub fn get_json(addr: &str, path: &str) -> Value {
    let mut s = TcpStream::connect(addr).expect("connect to the simulator");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .expect("read the simulator's answer");
    let text = String::from_utf8_lossy(&raw);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("GET {path}: {e}: {text}"))
}
