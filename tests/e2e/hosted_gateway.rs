//! Issue 34: the incident on a hosted API, where the server says little. A gateway written
//! here stands in front of an external `ladder sim` and answers as OpenAI's and Azure's APIs
//! do: it sends the response headers once the first token is ready, with `openai-processing-ms`
//! (the time since the request arrived: queue and prefill together, not split) and its own
//! `x-request-id`, and removes the simulator's `Server-Timing` (its true split). A baseline
//! against an uncapped simulator, then a cap of 30 and a ladder that crosses it: the knee line
//! and `diff` must both say queueing, inferred, with the same evidence, and never call that
//! time prefill.

use crate::support::{col, read_csv, start_sim, url_scenario, Project};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

/// The gateway's address; one thread per connection, one request per connection (it answers
/// `Connection: close`, so each request's bytes end with the connection).
pub(crate) fn processing_ms_gateway(upstream: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let ids = Arc::new(AtomicU64::new(0));
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let (upstream, id) = (upstream.clone(), ids.fetch_add(1, Ordering::Relaxed));
            thread::spawn(move || {
                let _ = forward(client, &upstream, id);
            });
        }
    });
    addr
}

/// Reads until the end of an HTTP head; returns the head (without its blank line) and the
/// bytes read after it.
fn read_head(s: &mut TcpStream) -> io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            return Ok((head, buf[end + 4..].to_vec()));
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The head's lines without the headers named in `drop`.
fn without(head: &str, drop: &[&str]) -> Vec<String> {
    head.split("\r\n")
        .filter(|l| {
            let name = l.split(':').next().unwrap_or("").trim();
            !drop.iter().any(|d| name.eq_ignore_ascii_case(d))
        })
        .map(str::to_string)
        .collect()
}

fn forward(mut client: TcpStream, upstream: &str, id: u64) -> io::Result<()> {
    let (head, mut body) = read_head(&mut client)?;
    let length: usize = head
        .split("\r\n")
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())
                .flatten()
        })
        .unwrap_or(0);
    let mut chunk = [0u8; 8192];
    while body.len() < length {
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let arrived = Instant::now();
    let mut server = TcpStream::connect(upstream)?;
    let mut request = without(&head, &["connection"]).join("\r\n");
    request.push_str("\r\nconnection: close\r\n\r\n");
    server.write_all(request.as_bytes())?;
    server.write_all(&body)?;
    // The simulator answers once a request has its slot and sends an opening frame; OpenAI's
    // headers leave with the first token. Hold everything until the second SSE event (the
    // first token) or the end of the answer.
    let (answer_head, mut first) = read_head(&mut server)?;
    while first.windows(5).filter(|w| w == b"data:").count() < 2 {
        let n = server.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        first.extend_from_slice(&chunk[..n]);
    }
    let ms = arrived.elapsed().as_millis();
    let mut lines = without(
        &answer_head,
        &["server-timing", "connection", "x-request-id"],
    );
    lines.push("connection: close".into());
    lines.push(format!("openai-processing-ms: {ms}"));
    lines.push(format!("x-request-id: req_{id:08x}"));
    client.write_all(format!("{}\r\n\r\n", lines.join("\r\n")).as_bytes())?;
    client.write_all(&first)?;
    io::copy(&mut server, &mut client)?;
    client.shutdown(Shutdown::Write)
}

/// The line of `text` that contains `needle`.
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with `{needle}` in:\n{text}"))
}

#[test]
fn a_hosted_apis_processing_time_is_queue_plus_prefill_and_a_crossed_cap_is_queueing() {
    let sim = |cap: &str| {
        start_sim(&[
            "ttft=100ms",
            "tpot=5ms",
            "tpot_jitter=0",
            "output_tokens=20",
            &format!("concurrency_cap={cap}"),
        ])
    };
    let (open, capped) = (sim("none"), sim("30"));
    let p = Project::new();
    let scenario = |upstream: &str| {
        let gateway = processing_ms_gateway(upstream.to_string());
        url_scenario(
            "gateway",
            &format!("http://{gateway}/v1"),
            "  ladder: [10, 20, 60]\n  requests_per_step: 180",
            20,
        )
    };
    let before = p.scenario("before", &scenario(open.addr()));
    let after = p.scenario("after", &scenario(capped.addr()));
    // Both files name the same workload (only the gateway's port differs).
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&before)
        .assert()
        .success();
    let out = p
        .ladder()
        .args(["run", "--no-color"])
        .arg(&after)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    eprintln!("{stdout}");

    // Every request carried the gateway's time, read as queue + prefill, never as prefill.
    let run = p.run_dirs("gateway").last().unwrap().clone();
    let (h, rows) = read_csv(&run.join("requests.csv"));
    assert_eq!(rows.len(), 540);
    let mut ids = std::collections::BTreeSet::new();
    for row in &rows {
        assert_eq!(row[col(&h, "server_timing_source")], "openai");
        // The gateway's own id for the request, not ladder's (which the simulator echoes).
        let id = &row[col(&h, "server_request_id")];
        assert!(id.starts_with("req_") && ids.insert(id.clone()), "{id}");
        assert!(row[col(&h, "server_prefill_ms")].is_empty(), "{row:?}");
        assert!(row[col(&h, "server_queue_ms")].is_empty(), "{row:?}");
        let processing: f64 = row[col(&h, "server_processing_ms")].parse().unwrap();
        let ttft: f64 = row[col(&h, "ttft_ms")].parse().unwrap();
        // Whole milliseconds, measured at the gateway: within TTFT, and at least the
        // simulator's 100 ms prefill.
        assert!(
            (99.0..=ttft + 1.0).contains(&processing),
            "{processing} {ttft}"
        );
    }
    let table = line_with(&stdout, "TTFT by part");
    assert!(
        table.contains("queue + prefill: the server's one time for both, not split"),
        "{table}"
    );
    let head = line_with(&stdout, "  step ");
    assert!(
        !head.contains("server queue") && head.contains("server: queue + prefill, not split"),
        "{head}"
    );
    assert!(
        stdout.contains("sources: headers: client; server: queue + prefill, not split: openai"),
        "{stdout}"
    );

    // The knee: queueing, inferred from that time growing with load while TPOT stayed flat.
    let knee = line_with(&stdout, "TTFT knee in (20, 60] streams: ");
    let cause_start = knee.find("queueing, inferred (the server's time grew with load, TPOT flat): server: queue + prefill, not split, P90 ")
        .unwrap_or_else(|| panic!("{knee}"));
    let cause = &knee[cause_start..];
    let cause = &cause[..cause
        .find(" ms (openai)")
        .unwrap_or_else(|| panic!("{knee}"))
        + 12];
    assert!(
        !knee.contains("prefill (") && !knee.contains(": prefill"),
        "{knee}"
    );
    let cap: f64 = knee
        .split("estimated cap ≈ ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cap in {knee}"));
    assert!((20.0..=40.0).contains(&cap), "{knee}");
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("findings.json")).unwrap()).unwrap();
    let evidence = &findings[0]["knee"]["server_evidence"];
    assert_eq!(evidence["cause"], "queueing", "{evidence}");
    assert_eq!(evidence["inferred"], true, "{evidence}");
    assert_eq!(evidence["series"][0]["series"], "server_processing_p90_ms");

    // diff: the TTFT regression at 60 streams names the same cause, with the same words.
    let out = p
        .ladder()
        .args(["diff", "--no-color", "baselines/gateway.csv"])
        .arg(&run)
        .assert()
        .code(3);
    let diff = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    eprintln!("{diff}");
    let line = line_with(&diff, "sim-model: TTFT P90 at 60 streams: TTFT P90 +");
    assert!(
        line.contains("; server: queue + prefill, not split +"),
        "{line}"
    );
    assert!(
        line.trim_end().ends_with(&format!(
            ": {cause} (the new run's cause, from its knee at 60 streams)"
        )),
        "{line}\nknee cause: {cause}"
    );
    assert!(!line.contains(": prefill"), "{line}");
    let json = p
        .ladder()
        .args(["diff", "--format", "json", "baselines/gateway.csv"])
        .arg(&run)
        .assert()
        .code(3);
    let doc: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    let c = doc["ttft_causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["concurrency"] == 60)
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(
        (&c["cause"], &c["inferred"], c["evidence"].as_str()),
        (
            &serde_json::json!("queueing"),
            &serde_json::json!(true),
            Some(cause)
        )
    );

    // The report says the same: the knee line, and against the baseline the diff's line.
    let page = p.path().join("gateway.html");
    p.ladder()
        .args(["report", "--baseline", "baselines/gateway.csv", "-o"])
        .arg(&page)
        .arg(&run)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let shown = cause.replace('\'', "&#39;");
    assert!(
        html.matches(&shown).count() >= 2,
        "{cause} not twice in the report"
    );
    assert!(html.contains("server: queue + prefill, not split P50 / P90 (ms)"));
}
