//! Issue 19 §6-§8: what hostile or odd servers send. Text from servers is data, never terminal
//! control (OSC/CSI escapes, a carriage return); token counts no real request can have are
//! set aside, never summed into TPM (nor wrapped); `Retry-After` as an HTTP date is a wait.

use crate::support::{read_csv, Project};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A raw HTTP/1.1 server on 127.0.0.1 that reads each request and writes `answer(n)` (the
/// whole response, n counting requests from 0), then closes the connection.
fn raw_server(answer: impl Fn(usize) -> String + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    let count = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { break };
            let (answer, count) = (Arc::clone(&answer), Arc::clone(&count));
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut writer = conn;
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let n = count.fetch_add(1, Ordering::SeqCst);
                let _ = writer.write_all(answer(n).as_bytes());
            });
        }
    });
    format!("http://{addr}/v1")
}

/// A complete response: status line, extra header lines, content type and body.
fn response(status: &str, headers: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n{headers}connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Answers every request with HTTP 403 and a hostile JSON error.
fn hostile_server() -> String {
    raw_server(|_| {
        let json = r#"{"error":{"message":"\u001b]0;PWNED\u0007\u001b[2J\u001b[31mforbidden\rhidden\u009b1m","type":"\u001b[31mevil_type"}}"#;
        response("403 Forbidden", "", "application/json", json)
    })
}

fn assert_no_control(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect();
    assert!(
        bad.is_empty(),
        "{what} carries control characters {bad:?}: {text:?}"
    );
}

#[test]
fn check_shows_server_escapes_instead_of_obeying_them() {
    let base = hostile_server();
    let p = Project::new();
    let out = p
        .ladder()
        .args(["check", "--base-url", &base, "--model", "m"])
        .env("OPENAI_API_KEY", "sk-test-0000000000000000")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("PWNED"),
        "the message is still shown: {stdout}"
    );
    assert!(stdout.contains("\\x1b]0;PWNED\\x07"), "{stdout}");
    assert_no_control("check stdout", &stdout);
    assert_no_control("check stderr", &stderr);
}

#[test]
fn run_records_and_prints_server_escapes_as_text() {
    let base = hostile_server();
    let p = Project::new();
    let yaml = format!(
        "name: hostile\ntarget:\n  api: openai-chat\n  base_url: {base}\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n  ladder: [1]\n  requests_per_step: 2\n  warmup_requests: 0\n"
    );
    let f = p.scenario("hostile", &yaml);
    let out = p.ladder().args(["run", "-v"]).arg(&f).output().unwrap();
    assert_no_control("run stdout", &String::from_utf8_lossy(&out.stdout));
    assert_no_control("run stderr", &String::from_utf8_lossy(&out.stderr));
    let (h, rows) = read_csv(&p.run_dirs("hostile")[0].join("requests.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    for r in &rows {
        assert_eq!(r[c("error_class")], "http_403");
        assert_no_control("error_type", &r[c("error_type")]);
        assert_no_control("error_message", &r[c("error_message")]);
        assert!(r[c("error_type")].contains("evil_type"), "{r:?}");
    }
}

fn url_scenario(name: &str, base: &str, load: &str, extra: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  base_url: {base}\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n{load}\n  warmup_requests: 0\n{extra}"
    )
}

/// Four streams reporting 9.9e18 completion tokens each: a u64 sum wraps (a debug build
/// panics). The streams themselves were fine (issue 39 §5): each request is a success with its
/// timings, its tokens counted from the events, and its record says why the usage was not used;
/// the impossible count reaches no total.
#[test]
fn impossible_token_counts_are_set_aside_not_summed() {
    let base = raw_server(|_| {
        let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n\
                   data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"}}]}\n\n\
                   data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9900000000000000000}}\n\n\
                   data: [DONE]\n\n";
        response("200 OK", "", "text/event-stream", sse)
    });
    let p = Project::new();
    let f = p.scenario(
        "big",
        &url_scenario("big", &base, "  ladder: [4]\n  requests_per_step: 4", ""),
    );
    let out = p
        .ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let dir = &p.run_dirs("big")[0];
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r[c("status")], "ok", "{r:?}");
        assert_eq!(r[c("error_class")], "", "{r:?}");
        assert_eq!(r[c("output_tokens")], "2", "{r:?}");
        assert_eq!(r[c("tokens_source")], "chunks", "{r:?}");
        assert_eq!(r[c("input_tokens")], "", "{r:?}");
        assert!(
            !r[c("ttft_ms")].is_empty() && !r[c("e2e_ms")].is_empty(),
            "{r:?}"
        );
        assert!(
            r[c("error_message")].contains("usage ignored")
                && r[c("error_message")].contains("9900000000000000000 output tokens"),
            "{r:?}"
        );
    }
    let (h, srows) = read_csv(&dir.join("summary.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    assert_eq!(srows[0][c("succeeded")], "4", "{srows:?}");
    assert_eq!(srows[0][c("output_tokens")], "8", "{srows:?}");
}

/// RFC 9110: `Retry-After: <HTTP-date>`. A 429 asking for a wait until a date 2 s after its
/// own `Date` header is waited for (about 2 s, not the 25 ms backoff), and the wait is recorded.
#[test]
fn retry_after_as_an_http_date_is_a_wait() {
    retry_after_date_is_waited_for(true);
}

/// Issue 39 §5: the same from a server that sends no `Date` header: the date is compared with
/// our clock (it was ignored, and ladder retried after a 94 ms backoff).
#[test]
fn retry_after_as_an_http_date_without_a_date_header_is_a_wait() {
    retry_after_date_is_waited_for(false);
}

fn retry_after_date_is_waited_for(with_date: bool) {
    let base = raw_server(move |n| {
        if n == 0 {
            let now = std::time::SystemTime::now();
            let date = httpdate::fmt_http_date(now);
            let later = httpdate::fmt_http_date(now + std::time::Duration::from_secs(2));
            let json = r#"{"error":{"message":"slow down","type":"rate_limit_exceeded"}}"#;
            let date = if with_date {
                format!("date: {date}\r\n")
            } else {
                String::new()
            };
            response(
                "429 Too Many Requests",
                &format!("{date}retry-after: {later}\r\n"),
                "application/json",
                json,
            )
        } else {
            let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";
            response("200 OK", "", "text/event-stream", sse)
        }
    });
    let p = Project::new();
    let f = p.scenario(
        "later",
        &url_scenario(
            "later",
            &base,
            "  ladder: [1]\n  requests_per_step: 1",
            "retry:\n  max_attempts: 2\n",
        ),
    );
    let out = p
        .ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (h, rows) = read_csv(&p.run_dirs("later")[0].join("requests.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    let r = &rows[0];
    assert_eq!(r[c("status")], "ok", "{r:?}");
    assert_eq!(r[c("attempts")], "2", "{r:?}");
    // HTTP dates have whole seconds: the wait is 1-2 s after rounding, never milliseconds.
    let wait: f64 = r[c("retry_wait_ms")].parse().unwrap();
    assert!(
        (900.0..=2100.0).contains(&wait),
        "retry_wait_ms {wait}: {r:?}"
    );
}
