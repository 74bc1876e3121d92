//! The drift-proof gates, measured in pretend time (`make calibrate`, not `make test`):
//! interleaved A/B runs (`compare: {interleave: true}`) and confirmation (`--confirm`,
//! `compare::confirm`), through the real runner, recorder and `compare`, against the scripted
//! backend of `calibrate` (a 12-stream cap, TTFT lognormal σ = 0.5 around 200 ms, 10 ms per
//! token ± 5%, outputs of 10–100 tokens, ladder 4/8/16/32). Each row prints its exit codes over
//! its pairs with 95% Wilson intervals: an A/A row's exit 3 are false alarms, an A/B row's are
//! detections.
//!
//! Run: `cargo test --release --lib runner::calibrate_ab -- --ignored --nocapture`
//! (PAIRS=n pairs per row, ONLY=text to run the rows whose label has it).

use super::fake::FakeServer;
use super::record::Recorder;
use super::*;
use crate::compare::{self, confirm, CompareOptions, Side};
use crate::error::ExitCode;
use crate::findings;
use crate::sim::{DriftWalk, WalkPath};
use crate::store;

/// One row: what runs and what changes.
struct Row {
    label: &'static str,
    /// Requests per step (per side in an A/B run).
    n: u32,
    /// TTFT × this for the candidate (B, or the new run): 1.0 = unchanged.
    ttft: f64,
    kind: Kind,
    /// The server's speed a random walk of the pretend time (±30% over 5 minutes, as
    /// `calibrate`'s walk rows): an A/B run's two models share it; a stored baseline sits on its
    /// own walk (recorded days earlier), and the rerun 10 minutes after the new run on the new
    /// run's.
    walk: bool,
}

/// A walk of ±30% over 5 minutes, from `seed`, long enough for a run and its rerun.
fn walk(seed: u64) -> Arc<WalkPath> {
    let w = DriftWalk::reaching(0.3, Duration::from_secs(300), seed ^ 0x5eed_ab01);
    Arc::new(w.path(Duration::from_secs(3600)))
}

/// `server` on the walk of `seed`, `offset` into it (no walk when the row has none).
fn on_walk(row: &Row, mut server: FakeServer, seed: u64, offset: Duration) -> FakeServer {
    if row.walk {
        server.drift_walk(walk(seed), offset);
    }
    server
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Both models in one run, interleaved; B judged against A.
    Ab,
    /// A new run against a stored single-run baseline, then confirmed on a rerun of the
    /// concerned steps.
    Confirm,
}

fn scenario(row: &Row, dir: &std::path::Path, ladder: &[u32]) -> Scenario {
    std::fs::write(dir.join("p.txt"), "hi").unwrap();
    let (models, compare) = match row.kind {
        Kind::Ab => ("[a, b]", "compare: {baseline: a, interleave: true}\n"),
        Kind::Confirm => ("[a]", ""),
    };
    let yaml = format!(
        "name: calibrate\ntarget:\n  sim: {{}}\n  models: {models}\nrequest:\n  prompt_file: p.txt\n  \
         max_tokens: 100\nload:\n  ladder: {ladder:?}\n  requests_per_step: {}\n{compare}",
        row.n
    );
    crate::scenario::load_str(&yaml, &dir.join("s.yaml"), &|_| None).unwrap()
}

/// The scripted server of `calibrate`'s varied rows; `slower` model's TTFT × `ttft`.
fn server(seed: u64, slower: Option<(&str, f64)>) -> FakeServer {
    let mut s = FakeServer::new(12, 200, 10, 100);
    s.vary(0.5, 10, 0.05, seed);
    s.slower = slower.map(|(m, k)| (m.to_string(), k));
    s
}

/// One run in pretend time of `ladder` against `server`, as a side of a comparison.
async fn side(s: &Scenario, server: FakeServer, label: String) -> Side {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = store::create_run_dir(dir.path(), &s.name, std::time::UNIX_EPOCH).unwrap();
    let meta =
        store::Meta::before_traffic(s, "calibrate".into(), "h".into(), String::new(), vec![]);
    let tap = (findings::RunExtras::new(), Some(Vec::new()));
    let mut recorder = Recorder::start(s, run_dir, meta, tap).unwrap();
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    let schedule = Schedule::pretend_time();
    run_scheduled(
        s,
        Arc::new(server),
        progress,
        Interrupt::new(),
        &mut recorder,
        schedule,
    )
    .await;
    let run = recorder.finish().unwrap();
    let (extras, samples) = run.tap;
    let f = findings::analyze_run_with(&run.summaries, Some(&extras));
    let mut side = Side::from_parts(&label, run.summaries, samples, &f, None);
    side.fingerprint = s.fingerprint.clone();
    side
}

fn options(kind: Kind) -> CompareOptions {
    let mut opts = CompareOptions::for_cli(crate::scenario::Gates::default(), false, false);
    opts.interleaved = kind == Kind::Ab;
    opts
}

const LADDER: [u32; 4] = [4, 8, 16, 32];

/// An A/B pair: one interleaved run, B judged against A.
async fn ab_pair(row: &Row, seed: u64) -> compare::Comparison {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(row, dir.path(), &LADDER);
    let server = on_walk(
        row,
        server(seed, Some(("b", row.ttft))),
        seed,
        Duration::ZERO,
    );
    let run = side(&s, server, format!("seed {seed}")).await;
    let pair = compare::Pair {
        old: "a".into(),
        new: "b".into(),
    };
    compare::compare_in_run(&run, &pair, &options(Kind::Ab)).unwrap()
}

/// A stored-baseline pair and its confirmation: the first judgement, and the settled one
/// (the first, when it did not need confirming).
async fn confirm_pair(row: &Row, seed: u64) -> (compare::Comparison, compare::Comparison) {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(row, dir.path(), &LADDER);
    let opts = options(Kind::Confirm);
    let slower = Some(("a", row.ttft));
    let base_server = on_walk(row, server(seed, None), seed, Duration::ZERO);
    let base = side(&s, base_server, "base".into()).await;
    let new_server = on_walk(row, server(seed + 1, slower), seed + 1, Duration::ZERO);
    let new = side(&s, new_server, "new".into()).await;
    let first = compare::compare(&base, &new, &opts);
    if !confirm::worth_confirming(&first) {
        return (first.clone(), first);
    }
    let steps = confirm::steps_to_confirm(&first);
    let values: Vec<u32> = LADDER
        .iter()
        .copied()
        .filter(|v| steps.iter().any(|(_, at)| at == v))
        .collect();
    let narrowed = scenario(row, dir.path(), &values);
    // The rerun, 10 minutes after the new run began, on the new run's walk: the same day.
    let later = Duration::from_secs(600);
    let again_server = on_walk(row, server(seed + 7_919, slower), seed + 1, later);
    let mut again = side(&narrowed, again_server, "rerun".into()).await;
    again.fingerprint = s.fingerprint.clone();
    let alone = compare::compare(&base, &again, &opts);
    let pooled = compare::compare(&base, &confirm::pooled(&new, &again), &opts);
    let settled = confirm::settle(&first, &alone, &pooled, &steps);
    (first, settled)
}

/// Exit codes over a row's pairs.
#[derive(Default)]
struct Tally {
    regression: u64,
    inconclusive: u64,
    pass: u64,
}

impl Tally {
    fn add(&mut self, c: &compare::Comparison) {
        match c.exit_code() {
            ExitCode::Regression => self.regression += 1,
            ExitCode::Inconclusive => self.inconclusive += 1,
            _ => self.pass += 1,
        }
    }

    fn line(&self, label: &str, pairs: u64, minutes: f64) -> String {
        let pct = |k: u64| {
            let (lo, hi) = crate::stats::calibration::wilson_pct(k, pairs);
            format!(
                "{k}/{pairs} ({:.1}%, 95% CI {lo:.1}–{hi:.1}%)",
                100.0 * k as f64 / pairs as f64
            )
        };
        format!(
            "| {label} | {} | {} | {} | {minutes:.1} |",
            pct(self.regression),
            pct(self.inconclusive),
            pct(self.pass)
        )
    }
}

#[tokio::test(start_paused = true)]
#[ignore = "minutes of CPU; run by `make calibrate`"]
async fn calibrate_ab_and_confirmation_in_pretend_time() {
    let pairs: u64 = std::env::var("PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(50);
    let row = |label, n, ttft, kind, walk| Row {
        label,
        n,
        ttft,
        kind,
        walk,
    };
    let rows = [
        row(
            "interleaved A/B, A/A (two identical models), n = 400 per side",
            400,
            1.0,
            Kind::Ab,
            false,
        ),
        row(
            "interleaved A/B, B's TTFT +25%, n = 400 per side",
            400,
            1.25,
            Kind::Ab,
            false,
        ),
        row(
            "interleaved A/B, A/A, walk ±30% over 5 min, n = 400 per side",
            400,
            1.0,
            Kind::Ab,
            true,
        ),
        row(
            "interleaved A/B, B's TTFT +25%, walk ±30% over 5 min, n = 400 per side",
            400,
            1.25,
            Kind::Ab,
            true,
        ),
        row(
            "stored baseline, A/A, n = 120, confirmed",
            120,
            1.0,
            Kind::Confirm,
            false,
        ),
        row(
            "stored baseline, TTFT +25%, n = 400, confirmed",
            400,
            1.25,
            Kind::Confirm,
            false,
        ),
        row(
            "stored baseline, A/A, walk ±30% over 5 min (baseline days before), n = 400, confirmed",
            400,
            1.0,
            Kind::Confirm,
            true,
        ),
    ];
    println!("\n| pairs (pretend time) | exit 3 (regression) | exit 4 (inconclusive) | exit 0 | minutes |");
    println!("|---|---:|---:|---:|---:|");
    let only = std::env::var("ONLY").ok();
    for (ri, row) in rows.iter().enumerate() {
        if only.as_deref().is_some_and(|o| !row.label.contains(o)) {
            continue;
        }
        let started = std::time::Instant::now();
        let (mut first, mut settled) = (Tally::default(), Tally::default());
        for i in 0..pairs {
            let seed = 1_000_000 + 10_000 * ri as u64 + 2 * i;
            match row.kind {
                Kind::Ab => first.add(&ab_pair(row, seed).await),
                Kind::Confirm => {
                    let (f, s) = confirm_pair(row, seed).await;
                    first.add(&f);
                    settled.add(&s);
                }
            }
        }
        let minutes = started.elapsed().as_secs_f64() / 60.0;
        match row.kind {
            Kind::Ab => println!("{}", first.line(row.label, pairs, minutes)),
            Kind::Confirm => {
                let before = format!("{}: before confirmation", row.label);
                println!("{}", first.line(&before, pairs, minutes));
                let after = format!("{}: after confirmation", row.label);
                println!("{}", settled.line(&after, pairs, minutes));
            }
        }
    }
}
