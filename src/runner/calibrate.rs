//! The gate, measured in pretend time (`make calibrate`, not `make test`): A/A and A/B pairs of
//! whole ladders through the real runner, recorder and `compare`, against the scripted backend
//! with what real servers have (a 12-stream cap, TTFT lognormal σ = 0.5, output lengths varying
//! 10×, per-token jitter). On a paused clock nothing but the statistics varies: no machine load,
//! no timer granularity, and times are full scale (TTFT median 200 ms, 10 ms per token), so the
//! default gates and floors apply unchanged. Prints a markdown table of false-alarm and
//! detection rates; `benches/calibrate.rs` repeats the A/A rows against the real simulator.
//!
//! Run: `cargo test --release --lib runner::calibrate -- --ignored --nocapture`
//! (PAIRS=n to change the number of pairs per row).

use super::fake::FakeServer;
use super::*;
use crate::collect::Recorder;
use crate::compare::{self, CompareOptions, Side};
use crate::error::ExitCode;
use crate::findings;
use crate::store;

#[derive(Clone, Copy)]
enum Shift {
    None,
    Ttft(f64),
    Tpot(f64),
}

struct Row {
    label: &'static str,
    n: u32,
    tokens: (u64, u64),
    shift: Shift,
}

fn scenario(n: u32, max_tokens: u64, dir: &std::path::Path) -> Scenario {
    std::fs::write(dir.join("p.txt"), "hi").unwrap();
    let yaml = format!(
        "name: calibrate\ntarget:\n  sim: {{}}\n  models: [m]\nrequest:\n  prompt_file: p.txt\n  \
         max_tokens: {max_tokens}\nload:\n  ladder: [4, 8, 16, 32]\n  requests_per_step: {n}\n"
    );
    crate::scenario::load_str(&yaml, &dir.join("s.yaml"), &|_| None).unwrap()
}

fn server(row: &Row, seed: u64, shifted: bool) -> FakeServer {
    let (mut ttft, mut tpot) = (200.0, 10.0);
    if shifted {
        match row.shift {
            Shift::Ttft(k) => ttft *= k,
            Shift::Tpot(k) => tpot *= k,
            Shift::None => {}
        }
    }
    let mut s = FakeServer::new(12, 0, 0, row.tokens.1);
    s.ttft = Duration::from_secs_f64(ttft / 1000.0);
    s.tpot = Duration::from_secs_f64(tpot / 1000.0);
    s.vary(0.5, row.tokens.0, 0.05, seed);
    s
}

/// One run in pretend time, as a side of a comparison.
async fn side(row: &Row, seed: u64, shifted: bool) -> Side {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(row.n, row.tokens.1, dir.path());
    let run_dir = store::create_run_dir(dir.path(), &s.name, std::time::UNIX_EPOCH).unwrap();
    let meta = store::Meta {
        tool_version: "calibrate".into(),
        scenario: s.name.clone(),
        fingerprint: s.fingerprint.clone(),
        host: "h".into(),
        started_at: String::new(),
        finished_at: String::new(),
        command_line: vec![],
        interrupted: false,
        models: s.target.models.clone(),
        ladder: s.load.ladder.clone(),
        notes: vec![],
        complete: false,
        steps: vec![],
        slo: store::SloMs::from(&s.slo),
        short_below: s.request.short_below,
        shard: None,
        merged_from: vec![],
    };
    let mut recorder = Recorder::start(&s, run_dir, meta, true).unwrap();
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    let server = Arc::new(server(row, seed, shifted));
    run(&s, server, progress, Interrupt::new(), &mut recorder).await;
    let run = recorder.finish().unwrap();
    let f = findings::analyze_run_with(&run.summaries, Some(&run.extras));
    Side::from_parts(
        &format!("seed {seed}"),
        run.summaries,
        run.samples,
        &f,
        None,
    )
}

#[tokio::test(start_paused = true)]
#[ignore = "minutes of CPU; run by `make calibrate`"]
async fn calibrate_gate_in_pretend_time() {
    let pairs: u64 = std::env::var("PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(50);
    let rows = [
        Row {
            label: "A/A, n = 120, short outputs (10–100 tokens)",
            n: 120,
            tokens: (10, 100),
            shift: Shift::None,
        },
        Row {
            label: "A/A, n = 120, long outputs (40–400 tokens)",
            n: 120,
            tokens: (40, 400),
            shift: Shift::None,
        },
        Row {
            label: "A/A, n = 400, short outputs",
            n: 400,
            tokens: (10, 100),
            shift: Shift::None,
        },
        Row {
            label: "A/A, n = 400, long outputs",
            n: 400,
            tokens: (40, 400),
            shift: Shift::None,
        },
        Row {
            label: "A/B TTFT +25%, n = 400, short outputs",
            n: 400,
            tokens: (10, 100),
            shift: Shift::Ttft(1.25),
        },
        Row {
            label: "A/B TTFT +25%, n = 400, long outputs",
            n: 400,
            tokens: (40, 400),
            shift: Shift::Ttft(1.25),
        },
        Row {
            label: "A/B TPOT +30%, n = 120, short outputs",
            n: 120,
            tokens: (10, 100),
            shift: Shift::Tpot(1.3),
        },
        Row {
            label: "A/B TPOT +30%, n = 120, long outputs",
            n: 120,
            tokens: (40, 400),
            shift: Shift::Tpot(1.3),
        },
    ];
    let opts = CompareOptions::for_cli(Default::default(), false, false);
    println!("\n| pairs (pretend time) | exit 3 (regression) | exit 4 | exit 0 | mean inconclusive checks | what fired |");
    println!("|---|---:|---:|---:|---:|---|");
    let only = std::env::var("ONLY").ok();
    for (ri, row) in rows.iter().enumerate() {
        if only.as_deref().is_some_and(|o| !row.label.contains(o)) {
            continue;
        }
        let (mut regressed, mut inconclusive_exit, mut passed, mut inconclusive) = (0, 0, 0, 0);
        let mut fired: std::collections::BTreeMap<String, usize> = Default::default();
        for i in 0..pairs {
            let seed = 10_000 * ri as u64 + 2 * i;
            let a = side(row, seed, false).await;
            let b = side(row, seed + 1, true).await;
            let c = compare::compare(&a, &b, &opts);
            match c.exit_code() {
                ExitCode::Regression => regressed += 1,
                ExitCode::Inconclusive => inconclusive_exit += 1,
                _ => passed += 1,
            }
            inconclusive += c.counts().inconclusive;
            for k in c
                .checks
                .iter()
                .filter(|k| k.gated && k.verdict == compare::Verdict::Regressed)
            {
                let at = k.concurrency.map_or("-".into(), |c| c.to_string());
                *fired.entry(format!("{} @{at}", k.name())).or_default() += 1;
            }
        }
        let pct = |k: u64| format!("{k}/{pairs} ({:.0}%)", 100.0 * k as f64 / pairs as f64);
        let what: Vec<String> = fired.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        println!(
            "| {} | {} | {} | {} | {:.1} | {} |",
            row.label,
            pct(regressed),
            pct(inconclusive_exit),
            pct(passed),
            inconclusive as f64 / pairs as f64,
            if what.is_empty() {
                "-".into()
            } else {
                what.join(", ")
            }
        );
    }
}
