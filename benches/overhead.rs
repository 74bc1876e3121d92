//! Client overhead against a lean reference client (issue 24): is ladder cheaper than what it
//! measures, and exact at the first token? For each case (10, 100 and 1,000 streams, with and
//! without a 1 s ramp-up) it starts `ladder sim` pinned to core 1, runs `ladder run` pinned to
//! core 0, then (against a fresh simulator) the reference client: this bench binary itself in
//! `--reference` mode, a plain reqwest streaming loop on the same tokio runtime flavour that
//! sends the same request with an `x-request-id`, stamps the first content chunk and does
//! nothing else (no records, no statistics, no progress, no files until the end). Both are
//! measured the same way: CPU of the whole process (wait4 rusage) per streamed token (the
//! server's count), and TTFT error per request (client TTFT − the simulator's own TTFT, joined
//! by request id). It prints one table with the ratios ladder / reference of the same run; the
//! full default run rewrites its section of `benches/RESULTS.md`.
//!
//! The two clients run one after the other, so a busy machine can favour either: each case runs
//! in rounds (`OVERHEAD_ROUNDS`, default 3), the reference first in every other round, and the
//! table gives medians over the rounds with the range of the rounds' ratios; the CPU used by
//! everything else during the runs is printed beside them, and only ratios of the same run are
//! meant to be compared. It builds nothing: `make bench` runs `cargo build --release` first.
//! Under `cargo test` (no `--bench` argument) it only runs its self-check.
//! Usage: `cargo bench --bench overhead [-- STREAMS:REQUESTS ...]` (each case with and without
//! ramp-up); `LADDER_BIN` picks another binary, `FIDELITY_PRIO` another priority prefix,
//! `OVERHEAD_ROUNDS` the number of rounds.

#[allow(dead_code)] // the fidelity bench uses the rest
#[path = "support/fidelity_join.rs"]
mod fidelity_join;
#[path = "support/procs.rs"]
mod procs;
#[path = "support/results_md.rs"]
mod results_md;

use fidelity_join::{p50_p99_max, parse_cases, wire_id};
use ladder::sim::TruthRecord;
use ladder::store::read_requests_csv;
use procs::{
    can_pin, machine, machine_busy, pinned, priority, run_ladder_pinned, wait_with_usage,
    BenchResult, Setup, Sim, Usage,
};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// (streams, requests): a few rounds of requests per stream, at most a few seconds each.
const DEFAULT_CASES: [(u32, u64); 3] = [(10, 100), (100, 500), (1_000, 2_000)];
const TOKENS: u32 = 64;
const SIM_SETTINGS: [&str; 4] = [
    "ttft=200ms",
    "tpot=20ms",
    "tpot_jitter=0",
    "output_tokens=64",
];
const RAMP_MS: u64 = 1_000;
const PROMPT: &str = "Say hello in a few words.";

// ------------------------------------------------------------ the reference client

/// `--reference BASE STREAMS REQUESTS RAMP_MS OUT`: the lean client. Writes `id,ttft_ms` per
/// successful request to OUT when done.
fn reference_client(args: &[String]) -> BenchResult<()> {
    let [base, streams, requests, ramp_ms, out] = args else {
        return Err("--reference BASE STREAMS REQUESTS RAMP_MS OUT".into());
    };
    let streams: u64 = streams.parse().map_err(|_| "STREAMS")?;
    let requests: u64 = requests.parse().map_err(|_| "REQUESTS")?;
    let ramp = Duration::from_millis(ramp_ms.parse().map_err(|_| "RAMP_MS")?);
    let url = format!("{base}/v1/chat/completions");
    let body = serde_json::json!({
        "model": "sim-model",
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": TOKENS,
        "stream": true,
    })
    .to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let results = rt.block_on(async move {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(streams as usize)
            .build()
            .map_err(|e| e.to_string())?;
        let next = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let start = tokio::time::Instant::now();
        let mut tasks = Vec::new();
        for w in 0..streams {
            let (client, next, url, body) =
                (client.clone(), next.clone(), url.clone(), body.clone());
            let at = start + ramp.mul_f64(w as f64 / streams as f64);
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep_until(at).await;
                let mut out = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= requests {
                        return out;
                    }
                    let id = format!("ref-{i}");
                    if let Some(ttft) = one_request(&client, &url, &body, &id).await {
                        out.push((id, ttft));
                    }
                }
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.map_err(|e| e.to_string())?);
        }
        Ok::<_, String>(all)
    })?;
    let mut text = String::new();
    for (id, ttft) in results {
        text.push_str(&format!("{id},{ttft:.3}\n"));
    }
    std::fs::write(out, text).map_err(|e| format!("{out}: {e}"))
}

/// One streamed request; its TTFT in ms (first chunk with content), `None` when it failed.
async fn one_request(client: &reqwest::Client, url: &str, body: &str, id: &str) -> Option<f64> {
    let sent = Instant::now();
    let mut resp = client
        .post(url)
        .header("content-type", "application/json")
        .header("x-request-id", id)
        .body(body.to_string())
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let mut ttft = None;
    while let Some(chunk) = resp.chunk().await.ok()? {
        if ttft.is_none() && has_content(&chunk) {
            ttft = Some(sent.elapsed().as_secs_f64() * 1e3);
        }
    }
    ttft
}

/// Whether an SSE chunk carries a non-empty `"content":"…"` (the role chunk's is empty).
fn has_content(chunk: &[u8]) -> bool {
    const KEY: &[u8] = b"\"content\":\"";
    chunk
        .windows(KEY.len() + 1)
        .any(|w| w.starts_with(KEY) && w[KEY.len()] != b'"')
}

// ------------------------------------------------------------ one case

/// One client's run of one case.
struct Side {
    usage: Usage,
    wall: Duration,
    /// Client TTFT − server TTFT per matched request, ms.
    ttft_err: Vec<f64>,
    /// Tokens the server streamed to the matched requests.
    tokens: u64,
    ok: usize,
    /// CPU used by the rest of the machine meanwhile (both our processes excluded), % of a core.
    others_pct: Option<f64>,
}

impl Side {
    fn us_per_token(&self) -> f64 {
        self.usage.cpu.as_secs_f64() * 1e6 / self.tokens.max(1) as f64
    }
}

fn scenario_yaml(base: &str, streams: u32, requests: u64, ramp_ms: u64) -> String {
    let ramp = if ramp_ms > 0 {
        format!("  ramp_up: {ramp_ms}ms\n")
    } else {
        String::new()
    };
    format!(
        "name: overhead\ntarget:\n  api: openai-chat\n  base_url: {base}/v1\n  models: [sim-model]\n\
         request:\n  prompt_file: prompt.txt\n  max_tokens: {TOKENS}\n\
         load:\n  ladder: [{streams}]\n  requests_per_step: {requests}\n  warmup_requests: 0\n{ramp}"
    )
}

fn truth_of(rt: &tokio::runtime::Runtime, sim: &Sim) -> BenchResult<Vec<TruthRecord>> {
    let url = format!("{}/sim/truth", sim.base);
    let body = rt.block_on(async {
        let resp = reqwest::get(&url)
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        resp.bytes().await.map_err(|e| format!("GET {url}: {e}"))
    })?;
    serde_json::from_slice(&body).map_err(|e| format!("/sim/truth: {e}"))
}

/// Joins `(wire id, client TTFT)` with the server's truth.
fn join(client: &[(String, f64)], truth: &[TruthRecord]) -> (Vec<f64>, u64) {
    let by_id: HashMap<&str, &TruthRecord> =
        truth.iter().map(|t| (t.request_id.as_str(), t)).collect();
    let (mut err, mut tokens) = (Vec::new(), 0);
    for (id, ttft) in client {
        if let Some(t) = by_id.get(id.as_str()) {
            tokens += u64::from(t.output_tokens);
            if let Some(first) = t.first_token_ms {
                err.push(ttft - (first - t.arrival_ms));
            }
        }
    }
    (err, tokens)
}

fn others(busy: Option<Duration>, ours: Duration, wall: Duration) -> Option<f64> {
    busy.map(|b| b.saturating_sub(ours).as_secs_f64() / wall.as_secs_f64().max(1e-3) * 100.0)
}

fn run_ladder_side(
    rt: &tokio::runtime::Runtime,
    setup: &Setup,
    streams: u32,
    requests: u64,
    ramp_ms: u64,
) -> BenchResult<Side> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let sim = Sim::start(setup, &SIM_SETTINGS)?;
    let scenario = dir.path().join("overhead.yaml");
    std::fs::write(dir.path().join("prompt.txt"), format!("{PROMPT}\n"))
        .and_then(|_| {
            std::fs::write(
                &scenario,
                scenario_yaml(&sim.base, streams, requests, ramp_ms),
            )
        })
        .map_err(|e| format!("cannot write the scenario: {e}"))?;
    let sim_before = procs::proc_cpu(sim.child.id());
    let busy_before = machine_busy();
    let run = run_ladder_pinned(Some(0), setup, &dir.path().join("runs"), &scenario)?;
    let busy = machine_busy()
        .zip(busy_before)
        .map(|(a, b)| a.saturating_sub(b));
    let sim_cpu = procs::proc_cpu(sim.child.id())
        .zip(sim_before)
        .map_or(Duration::ZERO, |(a, b)| a.saturating_sub(b));
    if run.usage.status != 0 {
        return Err(format!(
            "`ladder run` exited {}: {}",
            run.usage.status,
            run.stderr.trim()
        ));
    }
    let truth = truth_of(rt, &sim)?;
    drop(sim);
    let runs = dir.path().join("runs/overhead");
    let run_dir = std::fs::read_dir(&runs)
        .map_err(|e| format!("{}: {e}", runs.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .next()
        .ok_or("no run directory")?;
    let records =
        read_requests_csv(&run_dir.join("requests.csv"), false).map_err(|e| e.to_string())?;
    let client: Vec<(String, f64)> = records
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| Some((wire_id(r), r.ttft_ms?)))
        .collect();
    let (ttft_err, tokens) = join(&client, &truth);
    Ok(Side {
        others_pct: others(busy, run.usage.cpu + sim_cpu, run.wall),
        usage: run.usage,
        wall: run.wall,
        ok: client.len(),
        ttft_err,
        tokens,
    })
}

fn run_reference_side(
    rt: &tokio::runtime::Runtime,
    setup: &Setup,
    streams: u32,
    requests: u64,
    ramp_ms: u64,
) -> BenchResult<Side> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let sim = Sim::start(setup, &SIM_SETTINGS)?;
    let out = dir.path().join("reference.csv");
    let me = Setup {
        bin: std::env::current_exe().map_err(|e| e.to_string())?,
        pin: setup.pin,
        prio: setup.prio.clone(),
    };
    let sim_before = procs::proc_cpu(sim.child.id());
    let busy_before = machine_busy();
    let started = Instant::now();
    let mut child = pinned(Some(0), &me)
        .arg("--reference")
        .arg(&sim.base)
        .args([
            streams.to_string(),
            requests.to_string(),
            ramp_ms.to_string(),
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the reference client: {e}"))?;
    let usage = wait_with_usage(&mut child)?;
    let wall = started.elapsed();
    let busy = machine_busy()
        .zip(busy_before)
        .map(|(a, b)| a.saturating_sub(b));
    let sim_cpu = procs::proc_cpu(sim.child.id())
        .zip(sim_before)
        .map_or(Duration::ZERO, |(a, b)| a.saturating_sub(b));
    if usage.status != 0 {
        return Err(format!("the reference client exited {}", usage.status));
    }
    let truth = truth_of(rt, &sim)?;
    drop(sim);
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let client: Vec<(String, f64)> = text
        .lines()
        .filter_map(|l| {
            let (id, t) = l.split_once(',')?;
            Some((id.to_string(), t.parse().ok()?))
        })
        .collect();
    let (ttft_err, tokens) = join(&client, &truth);
    Ok(Side {
        others_pct: others(busy, usage.cpu + sim_cpu, wall),
        usage,
        wall,
        ok: client.len(),
        ttft_err,
        tokens,
    })
}

// ------------------------------------------------------------ output

/// One case: both clients' runs, round by round.
struct Case {
    streams: u32,
    requests: u64,
    ramp_ms: u64,
    ladder: Vec<Side>,
    reference: Vec<Side>,
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl Case {
    /// CPU ratio ladder / reference of each round (the two runs of a round are back to back).
    fn ratios(&self) -> Vec<f64> {
        self.ladder
            .iter()
            .zip(&self.reference)
            .map(|(l, r)| l.us_per_token() / r.us_per_token().max(1e-9))
            .collect()
    }
}

/// Median over rounds of a figure of each side.
fn med(sides: &[Side], f: impl Fn(&Side) -> f64) -> f64 {
    median(sides.iter().map(f).collect())
}

fn table(cases: &[Case]) -> String {
    let mut t = String::from(
        "| streams | ramp-up | ok ladder / ref / sent (fewest of a round) | µs CPU per token ladder / ref | \
         ratio (range over rounds) | TTFT err P50 ladder / ref (ms) | TTFT err P99 ladder / ref (ms) | \
         P99 − ref P99 (ms) | peak RSS ladder / ref (MB) | others during ladder / ref (% of a core) |\n\
         |---:|---:|---|---|---|---|---|---:|---|---|\n",
    );
    for c in cases {
        let (l, r) = (&c.ladder, &c.reference);
        let p50 = |s: &Side| p50_p99_max(&s.ttft_err).0;
        let p99 = |s: &Side| p50_p99_max(&s.ttft_err).1;
        let (l50, l99, r50, r99) = (med(l, p50), med(l, p99), med(r, p50), med(r, p99));
        let ratios = c.ratios();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ok = |s: &[Side]| s.iter().map(|s| s.ok).min().unwrap_or(0);
        let rss =
            |s: &[Side]| s.iter().map(|s| s.usage.max_rss_kb).max().unwrap_or(0) as f64 / 1024.0;
        let others = |s: &[Side]| {
            let v: Vec<f64> = s.iter().filter_map(|s| s.others_pct).collect();
            if v.is_empty() {
                "-".to_string()
            } else {
                format!("{:.0}", median(v))
            }
        };
        t.push_str(&format!(
            "| {} | {} | {} / {} / {} | {:.1} / {:.1} | **{:.2}×** ({lo:.2}–{hi:.2}) | \
             {l50:.2} / {r50:.2} | {l99:.2} / {r99:.2} | {:+.2} | {:.0} / {:.0} | {} / {} |\n",
            c.streams,
            if c.ramp_ms > 0 {
                format!("{} s", c.ramp_ms / 1000)
            } else {
                "none".into()
            },
            ok(l),
            ok(r),
            c.requests,
            med(l, Side::us_per_token),
            med(r, Side::us_per_token),
            median(ratios.clone()),
            l99 - r99,
            rss(l),
            rss(r),
            others(l),
            others(r),
        ));
    }
    t
}

fn self_check() {
    assert!(has_content(
        br#"data: {"choices":[{"delta":{"content":"Hi"}}]}"#
    ));
    assert!(!has_content(
        br#"data: {"choices":[{"delta":{"role":"assistant","content":""}}]}"#
    ));
    let truth: Vec<TruthRecord> = serde_json::from_value(serde_json::json!([
        {"request_id": "a", "arrival_ms": 10.0, "first_token_ms": 210.0, "last_token_ms": 400.0,
         "output_tokens": 64, "status": 200, "path": "/v1/chat/completions",
         "model": "sim-model", "fault": null}
    ]))
    .expect("a truth record");
    let (err, tokens) = join(&[("a".into(), 200.5), ("b".into(), 1.0)], &truth);
    assert_eq!((err, tokens), (vec![0.5], 64));
    assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    assert!(median(Vec::new()).is_nan());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--reference") {
        if let Err(e) = reference_client(&args[1..]) {
            eprintln!("reference client: {e}");
            std::process::exit(1);
        }
        return;
    }
    self_check();
    fidelity_join::self_check();
    results_md::self_check();
    if !args.iter().any(|a| a == "--bench") {
        println!("overhead bench: self-check ok (figures: `make bench`)");
        return;
    }
    if let Err(e) = bench(&args) {
        eprintln!("overhead bench: {e}");
        std::process::exit(1);
    }
}

/// `OVERHEAD_ROUNDS` (default 3): how many times each case runs both clients.
fn rounds() -> BenchResult<usize> {
    match std::env::var("OVERHEAD_ROUNDS") {
        Err(_) => Ok(3),
        Ok(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "OVERHEAD_ROUNDS={v}: expected a whole number of rounds, at least 1"
            )),
        },
    }
}

fn bench(args: &[String]) -> BenchResult<()> {
    let custom = parse_cases(args)?;
    let cases = custom.clone().unwrap_or_else(|| DEFAULT_CASES.to_vec());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var_os("LADDER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/release/ladder"));
    if !bin.is_file() {
        return Err(format!(
            "{} not found: run `cargo build --release` first (`make bench` does), or set LADDER_BIN",
            bin.display()
        ));
    }
    let setup = Setup {
        bin,
        pin: can_pin(),
        prio: priority("FIDELITY_PRIO"),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let rounds = rounds()?;
    let mut results = Vec::new();
    for (streams, requests) in cases {
        for ramp_ms in [0, RAMP_MS] {
            let mut case = Case {
                streams,
                requests,
                ramp_ms,
                ladder: Vec::new(),
                reference: Vec::new(),
            };
            for round in 0..rounds {
                eprint!(
                    "overhead: {streams} streams × {requests} requests, ramp-up {ramp_ms} ms, round {}/{rounds}: ",
                    round + 1
                );
                // Every other round the reference goes first, so that a machine getting busier
                // or quieter during a round favours neither client.
                let ladder_first = round % 2 == 0;
                for side in 0..2 {
                    let ladder = (side == 0) == ladder_first;
                    eprint!("{} ... ", if ladder { "ladder" } else { "reference" });
                    let _ = std::io::stderr().flush();
                    let run = if ladder {
                        run_ladder_side(&rt, &setup, streams, requests, ramp_ms)?
                    } else {
                        run_reference_side(&rt, &setup, streams, requests, ramp_ms)?
                    };
                    eprint!(
                        "{:.1} s{}",
                        run.wall.as_secs_f64(),
                        if side == 0 { ", " } else { "\n" }
                    );
                    if ladder {
                        case.ladder.push(run);
                    } else {
                        case.reference.push(run);
                    }
                }
            }
            results.push(case);
        }
    }
    let section = format!(
        "Machine: {}\n\nCommand: `make bench` (`cargo bench --bench overhead`); server: `ladder sim --set {}`; \
         both clients {TOKENS} tokens per request, pinned to the same core, one after the other, \
         {rounds} rounds (the reference first in every other one); each figure is the median over \
         the rounds, the ratio the median of the rounds' ratios.\n\n{}",
        machine(&setup),
        SIM_SETTINGS.join(" --set "),
        table(&results)
    );
    println!("\n{section}");
    if custom.is_none() {
        let path = results_md::write_section("overhead", &section)?;
        println!("(written to {})", path.display());
    }
    Ok(())
}
