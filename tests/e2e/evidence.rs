//! Issue 20: why TTFT rose, with the server's own evidence. The simulator sends `Server-Timing`
//! with its true queue and prefill times, so the per-request join and the TTFT decomposition are
//! checked against the server's truth (`sim_truth.json`) exactly; and a TCP delay proxy written
//! here, between ladder and an external `ladder sim`, adds 300 ms to every request on its way
//! in: that must show up in `headers_ms`, leave the server queue flat, and be called network.

use crate::support::{col, read_csv, sim_scenario, start_sim, url_scenario, Project};
use ladder::sim::TruthRecord;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The header and the CSV both keep 3 decimals.
const ROUNDING_MS: f64 = 0.0015;

fn cell(h: &[String], row: &[String], name: &str) -> Option<f64> {
    let v = &row[col(h, name)];
    (!v.is_empty()).then(|| v.parse().unwrap_or_else(|_| panic!("{name}: `{v}`")))
}

#[test]
fn server_timings_join_the_simulators_truth_and_decompose_ttft() {
    let p = Project::new();
    let f = p.scenario(
        "evidence",
        &sim_scenario(
            "evidence",
            "    ttft: 30ms\n    prefill_per_token: 1ms\n    tpot: 2ms\n    tpot_jitter: 0\n    output_tokens: 20\n    concurrency_cap: 2\n    seed: 5",
            "  ladder: [1, 6]\n  requests_per_step: 24",
            20,
        )
        .replace(
            "  models: [sim-model]\n",
            "  models: [sim-model]\n  metrics: {every: 100ms}\n",
        ),
    );
    let out = p
        .ladder()
        .args(["run", "--no-color"])
        .arg(&f)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("TTFT by part, P50 / P90 ms"), "{stdout}");
    assert!(
        stdout.contains("server queue: sim; prefill: sim"),
        "{stdout}"
    );
    let dir = &p.run_dirs("evidence")[0];
    let truth: Vec<TruthRecord> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sim_truth.json")).unwrap())
            .unwrap();
    let by_id: HashMap<&str, &TruthRecord> =
        truth.iter().map(|t| (t.request_id.as_str(), t)).collect();
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    assert_eq!(rows.len(), 48);
    let (mut queued, mut new_conns) = (0, 0);
    for row in &rows {
        let t = by_id[row[col(&h, "request_id")].as_str()];
        let (q, pf) = (t.queue_ms.unwrap(), t.prefill_ms.unwrap());
        let got_q = cell(&h, row, "server_queue_ms").expect("server_queue_ms");
        let got_p = cell(&h, row, "server_prefill_ms").expect("server_prefill_ms");
        assert!(
            (got_q - q).abs() <= ROUNDING_MS,
            "queue {got_q} vs truth {q}"
        );
        assert!(
            (got_p - pf).abs() <= ROUNDING_MS,
            "prefill {got_p} vs truth {pf}"
        );
        assert_eq!(row[col(&h, "server_timing_source")], "sim");
        // The simulator echoes ladder's own id: nothing of the server's to keep.
        assert_eq!(row[col(&h, "server_request_id")], "");
        // The simulator answers once admitted: its headers come after the queue, before prefill.
        let headers = cell(&h, row, "headers_ms").expect("headers_ms");
        let ttft = cell(&h, row, "ttft_ms").unwrap();
        assert!(
            headers >= got_q - ROUNDING_MS && headers <= ttft,
            "{headers} {got_q} {ttft}"
        );
        assert!(
            ttft >= got_q + got_p - ROUNDING_MS,
            "{ttft} < {got_q} + {got_p}"
        );
        queued += usize::from(got_q > 1.0);
        new_conns += usize::from(cell(&h, row, "connect_ms").is_some());
    }
    // Six streams on two slots: most requests of the second step waited.
    assert!(queued >= 12, "{queued} requests queued");
    // One connection per stream (warm-up included), reused afterwards.
    assert!((1..=8).contains(&new_conns), "{new_conns} new connections");

    let (sh, srows) = read_csv(&dir.join("summary.csv"));
    let q90 = cell(&sh, &srows[1], "server_queue_p90_ms").unwrap();
    assert!(q90 > 50.0, "server_queue_p90_ms {q90}");
    assert_eq!(cell(&sh, &srows[0], "server_queue_p90_ms"), Some(0.0));
    assert!(cell(&sh, &srows[1], "headers_p90_ms").is_some());
    let share = cell(&sh, &srows[0], "new_conn_share").unwrap();
    assert!((0.0..=1.0).contains(&share));

    // findings.json: the decomposition per step, and the knee confirmed by the server's queue.
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("findings.json")).unwrap()).unwrap();
    let parts = &findings[0]["ttft_parts"];
    assert_eq!(parts.as_array().unwrap().len(), 2);
    let step2 = &parts[1];
    assert_eq!(step2["server_queue"]["source"], "sim");
    assert!((step2["server_queue"]["p90_ms"].as_f64().unwrap() - q90).abs() < 0.001);
    let prefill = step2["prefill"]["p50_ms"].as_f64().unwrap();
    assert!(prefill >= 30.0, "prefill {prefill}");
    let knee = &findings[0]["knee"];
    assert_eq!(knee["status"], "knee", "{knee}");
    assert_eq!(knee["kind"], "queueing");
    assert_eq!(knee["server_evidence"]["cause"], "queueing");
    assert!(
        stdout.contains("queueing, confirmed by the server: server queue P90 0 → "),
        "{stdout}"
    );

    // The simulator's /metrics under vLLM's names, scraped every 100 ms: requests wait only at
    // the second step, two run at once at most.
    let (mh, mrows) = read_csv(&dir.join("server_metrics.csv"));
    assert_eq!(mh, ["t_ms", "step", "model", "series", "value"]);
    let max_of = |series: &str, step: &str| {
        mrows
            .iter()
            .filter(|r| r[col(&mh, "series")] == series && r[col(&mh, "step")] == step)
            .filter_map(|r| r[col(&mh, "value")].parse::<f64>().ok())
            .fold(f64::NEG_INFINITY, f64::max)
    };
    assert_eq!(max_of("waiting", "1"), 0.0);
    assert!(max_of("waiting", "2") >= 1.0, "{mrows:?}");
    assert_eq!(max_of("running", "2"), 2.0);
    assert!(mrows
        .iter()
        .any(|r| r[col(&mh, "series")].starts_with("raw:vllm:generation_tokens_total")));
    let w = cell(&sh, &srows[1], "server_waiting_max").unwrap();
    assert!(
        w >= 1.0 && cell(&sh, &srows[0], "server_waiting_max") == Some(0.0),
        "{w}"
    );
    assert_eq!(cell(&sh, &srows[1], "server_running_max"), Some(2.0));
    assert!(stdout.contains("waiting 0 → "), "{stdout}");

    // The report: the decomposition per step (stacked means and the P50 / P90 table) and the
    // server's series over the run with each step's start marked.
    let page = p.path().join("evidence.html");
    p.ladder()
        .args(["report", "-o"])
        .arg(&page)
        .arg(dir)
        .assert()
        .success();
    report_shows_the_evidence(&std::fs::read_to_string(&page).unwrap());
}

fn report_shows_the_evidence(html: &str) {
    let doc = roxmltree::Document::parse_with_options(
        html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("well-formed XML");
    let by_id = |id: &str| {
        doc.descendants()
            .find(|n| n.attribute("id") == Some(id))
            .unwrap_or_else(|| panic!("#{id} missing"))
    };
    let class_count = |node: roxmltree::Node, class: &str| {
        node.descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split_whitespace().any(|w| w == class))
            })
            .count()
    };
    let parts = by_id("r0-m0-ttft-parts-chart");
    let segments: Vec<String> = parts
        .descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("segment"))
        })
        .filter_map(|n| n.descendants().find(|t| t.tag_name().name() == "title"))
        .filter_map(|t| t.text().map(str::to_string))
        .collect();
    // Two steps × four parts, and the queue at 6 streams is most of its bar.
    assert!(
        segments.iter().any(|t| t.starts_with("server queue at 6")),
        "{segments:?}"
    );
    let table = by_id("r0-m0-ttft-parts");
    let text: String = table.descendants().filter_map(|n| n.text()).collect();
    assert!(text.contains("server queue P50 / P90 (ms)"), "{text}");
    assert!(text.contains("server queue: sim; prefill: sim"), "{text}");
    let requests = by_id("r0-server-requests");
    assert!(
        requests
            .descendants()
            .any(|n| n.tag_name().name() == "polyline"),
        "waiting/running drawn"
    );
    assert_eq!(class_count(requests, "step-line"), 2, "one mark per step");
    let labels: Vec<&str> = requests
        .descendants()
        .filter(|n| n.attribute("class") == Some("step-label"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(labels, ["1", "6"]);
    by_id("r0-server-kv");
}

/// A TCP proxy that holds every byte from the client `delay` before passing it on; answers
/// pass straight through. Returns its address.
fn delay_proxy(upstream: String, delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let _ = (client.set_nodelay(true), server.set_nodelay(true));
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
            thread::spawn(move || {
                let mut buf = [0u8; 16 << 10];
                while let Ok(n) = c_in.read(&mut buf) {
                    if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            });
            thread::spawn(move || {
                for (at, bytes) in rx {
                    thread::sleep((at + delay).saturating_duration_since(Instant::now()));
                    if s_out.write_all(&bytes).is_err() {
                        break;
                    }
                }
                let _ = s_out.shutdown(Shutdown::Write);
            });
            let (mut s_in, mut c_out) = (server, client);
            thread::spawn(move || {
                let _ = std::io::copy(&mut s_in, &mut c_out);
                let _ = c_out.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

#[test]
fn a_delay_proxy_shows_up_in_headers_and_is_called_network() {
    let sim = start_sim(&["ttft=20ms", "tpot=2ms", "tpot_jitter=0", "output_tokens=6"]);
    let base_url = sim.base_url.clone();
    let upstream = sim.addr().to_string();
    let proxy = delay_proxy(upstream, Duration::from_millis(300));
    let p = Project::new();
    let scenario =
        |url: &str| url_scenario("net", url, "  ladder: [2]\n  requests_per_step: 40", 6);
    let direct = p.scenario("direct", &scenario(&base_url));
    let slow = p.scenario("slow", &scenario(&format!("http://{proxy}/v1")));
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&direct)
        .assert()
        .success();
    let out = p
        .ladder()
        .args(["run", "--no-color", "--against", "baselines/net.csv"])
        .arg(&slow)
        .assert()
        .code(3);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let line = stdout
        .lines()
        .find(|l| l.contains("TTFT P90 at 2 streams: TTFT P90 +") && l.contains("headers"))
        .unwrap_or_else(|| panic!("no TTFT cause line in:\n{stdout}"));
    eprintln!("{line}");
    assert!(line.trim_end().ends_with(": network"), "{line}");
    // The proxy adds 300 ms; the direct run's own headers P90 (a few ms on a loaded machine)
    // comes off the change, so the bound leaves room below 300.
    let headers_change: f64 = line
        .split("headers +")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("no headers change in {line}"));
    assert!(headers_change >= 250.0, "{line}");

    let dirs = p.run_dirs("net");
    let (h, rows) = read_csv(&dirs.last().unwrap().join("requests.csv"));
    for row in &rows {
        let headers = cell(&h, row, "headers_ms").unwrap();
        assert!(headers >= 300.0, "headers_ms {headers}");
        // No cap: the server's queue stays at zero however slow the network is.
        assert_eq!(cell(&h, row, "server_queue_ms"), Some(0.0));
    }
}
