//! The gate, measured in pretend time (`make calibrate`, not `make test`): A/A and A/B pairs of
//! whole ladders through the real runner, recorder and `compare`, against the scripted backend
//! with what real servers have (a 12-stream cap, TTFT lognormal σ = 0.5, output lengths varying
//! 10×, per-token jitter). On a paused clock nothing but the statistics varies: no machine load,
//! no timer granularity, and times are full scale (TTFT median 200 ms, 10 ms per token), so the
//! default gates and floors apply unchanged. Prints a markdown table of false-alarm and
//! detection rates; `benches/calibrate.rs` repeats the A/A rows against the real simulator.
//!
//! Two more questions are answered here. **Drift between runs**: rows with run-level drift (every
//! time of a run × e^(d·Z), Z drawn per run) judge each new run against a single-run baseline and
//! against a pooled baseline of 3 runs, whose spread widens the checks (`stats::drift`).
//! **A drift that wanders** (issue 50): rows whose server's speed is a random walk of the pretend
//! time (`sim::walk`, ±30% over minutes, within a run and between runs), judged the same two ways;
//! the runs of a pair sit on the walk days apart (each its own walk) or back to back (one walk,
//! a fixed gap between run starts), as [`RowWalk`] says.
//! **Scaling**: one A/A row is repeated with every time and floor 10× smaller (what the
//! real-simulator half does to save minutes); the two false-alarm rates are compared with a
//! two-sided Fisher exact test, so a dependence on the scaling (e.g. the 1 ms timer tick) shows.
//!
//! Run: `cargo test --release --lib runner::calibrate -- --ignored --nocapture`
//! (PAIRS=n to change the number of pairs per row, ONLY=text to run the rows whose label has it,
//! CAL_VERBOSE=1 to print every check that fired).

use super::fake::FakeServer;
use super::record::Recorder;
use super::*;
use crate::compare::{self, CompareOptions, Side};
use crate::error::ExitCode;
use crate::findings;
use crate::sim::{DriftWalk, WalkPath};
use crate::store;

#[derive(Clone, Copy)]
enum Shift {
    None,
    Ttft(f64),
    Tpot(f64),
    /// Every time × 1 / k: throughput × k at every step (k = 0.85: a 15% drop).
    Throughput(f64),
    /// The server's concurrency cap lowered to this many streams (the queueing knee moves).
    Cap(usize),
}

struct Row {
    label: &'static str,
    n: u32,
    tokens: (u64, u64),
    shift: Shift,
    /// Run-level drift: log-SD of a whole run's times (0 = none). Rows with drift judge each
    /// new run against a single-run baseline and against a pooled baseline of 3 runs.
    drift: f64,
    /// A drift that wanders with the pretend time (issue 50); rows with one are judged against a
    /// single-run and a pooled baseline, as drift rows are.
    walk: Option<RowWalk>,
    /// Times and floors divided by this (1 = full scale: TTFT 200 ms, 10 ms per token).
    scale: f64,
    /// The demo's server and ladder (`scenarios/demo.yaml`: a 16-stream cap, TTFT 150 ms,
    /// 15 ms per token ± 5%, 40 tokens, ladder 5/10/20/50) instead of the varied one.
    demo: bool,
}

impl Row {
    const fn new(label: &'static str, n: u32, tokens: (u64, u64), shift: Shift) -> Row {
        Row {
            label,
            n,
            tokens,
            shift,
            drift: 0.0,
            walk: None,
            scale: 1.0,
            demo: false,
        }
    }

    const fn demo(label: &'static str, shift: Shift) -> Row {
        Row {
            demo: true,
            ..Row::new(label, 120, (40, 40), shift)
        }
    }

    /// Whether each pair is also judged against a pooled baseline of 3 runs.
    fn pools(&self) -> bool {
        self.drift > 0.0 || self.walk.is_some()
    }
}

/// A random-walk drift of every time (`sim::walk`: `amplitude` 0.3 wanders within ±30%, at the
/// pace `period` sets) and where a pair's runs sit on it.
#[derive(Clone, Copy)]
struct RowWalk {
    amplitude: f64,
    period: Duration,
    apart: Apart,
}

/// Where the runs of a pair sit on a walk. A pair's runs come in this order: the pooled
/// baseline's two earlier runs (0, 1), the baseline (2), the new run (3).
#[derive(Clone, Copy)]
enum Apart {
    /// Each run on its own walk, seeded from the run's seed: runs days apart, which a walk of
    /// minutes has forgotten (a baseline recorded last week, a pool of last week's runs).
    Days,
    /// One walk per pair, run k starting k × this into it: runs back to back (one CI job after
    /// another), which still share where the walk was.
    Gap(Duration),
}

/// Enough walk for four runs back to back; past it a walk is read backwards (`sim::walk`).
const WALK_HORIZON: Duration = Duration::from_secs(3600);

impl RowWalk {
    /// ±30% at the simulator's default pace (`drift_walk: 0.3`, `drift_walk_period: 5m`).
    const fn minutes(apart: Apart) -> RowWalk {
        RowWalk {
            amplitude: 0.3,
            period: Duration::from_secs(300),
            apart,
        }
    }

    /// The walk run number `order` of the pair seeded `pair` sits on (its own seed `seed`), and
    /// how far into it the run starts.
    fn place(&self, seed: u64, pair: u64, order: u32) -> (WalkPath, Duration) {
        let (walk_seed, offset) = match self.apart {
            Apart::Days => (seed, Duration::ZERO),
            Apart::Gap(gap) => (pair, gap * order),
        };
        let walk = DriftWalk::reaching(self.amplitude, self.period, walk_seed ^ 0x3a1c_5e7d);
        (walk.path(WALK_HORIZON), offset)
    }
}

/// One run of a pair: its seed, whether it carries the row's shift, and its place on the row's
/// walk (the pair's seed and the run's order, [`Apart`]).
#[derive(Clone, Copy)]
struct RunAt {
    seed: u64,
    shifted: bool,
    pair: u64,
    order: u32,
}

fn scenario(row: &Row, dir: &std::path::Path) -> Scenario {
    std::fs::write(dir.join("p.txt"), "hi").unwrap();
    let (n, max_tokens) = (row.n, row.tokens.1);
    // The demo's rows carry its SLO, so its SLO capacity is judged too.
    let (ladder, slo) = if row.demo {
        ("[5, 10, 20, 50]", "slo: {ttft: 1s, tpot: 50ms}\n")
    } else {
        ("[4, 8, 16, 32]", "")
    };
    let yaml = format!(
        "name: calibrate\ntarget:\n  sim: {{}}\n  models: [m]\nrequest:\n  prompt_file: p.txt\n  \
         max_tokens: {max_tokens}\nload:\n  ladder: {ladder}\n  requests_per_step: {n}\n{slo}"
    );
    crate::scenario::load_str(&yaml, &dir.join("s.yaml"), &|_| None).unwrap()
}

fn server(row: &Row, run: RunAt) -> FakeServer {
    let RunAt { seed, shifted, .. } = run;
    let (mut ttft, mut tpot) = if row.demo {
        (150.0, 15.0)
    } else {
        (200.0 / row.scale, 10.0 / row.scale)
    };
    if shifted {
        match row.shift {
            Shift::Ttft(k) => ttft *= k,
            Shift::Tpot(k) => tpot *= k,
            Shift::Throughput(k) => (ttft, tpot) = (ttft / k, tpot / k),
            Shift::Cap(_) | Shift::None => {}
        }
    }
    if row.drift > 0.0 {
        let mut rng = crate::stats::inference::generator(seed ^ 0xd1f7);
        let k = (row.drift * crate::stats::inference::std_normal(&mut rng)).exp();
        (ttft, tpot) = (ttft * k, tpot * k);
    }
    let cap = match (shifted, row.shift) {
        (true, Shift::Cap(c)) => c,
        _ if row.demo => 16,
        _ => 12,
    };
    let mut s = FakeServer::new(cap, 0, 0, row.tokens.1);
    s.ttft = Duration::from_secs_f64(ttft / 1000.0);
    s.tpot = Duration::from_secs_f64(tpot / 1000.0);
    s.vary(if row.demo { 0.0 } else { 0.5 }, row.tokens.0, 0.05, seed);
    if let Some(w) = row.walk {
        let (path, offset) = w.place(seed, run.pair, run.order);
        s.drift_walk(Arc::new(path), offset);
    }
    s
}

/// The CLI's options with the floors divided by the row's scale.
fn options(row: &Row) -> CompareOptions {
    let mut g = crate::scenario::Gates::default();
    for m in [&mut g.ttft, &mut g.tpot, &mut g.itl, &mut g.e2e] {
        m.floor_ms /= row.scale;
    }
    let mut opts = CompareOptions::for_cli(g, false, false);
    // As `run --against` judges the demo: its SLO's capacity (`app::verdict::capacity_slo`).
    opts.search = row.demo.then(|| crate::model::Slo {
        ttft: Some(Duration::from_secs(1)),
        tpot: Some(Duration::from_millis(50)),
        ..crate::model::Slo::default()
    });
    opts
}

/// One run in pretend time, as a side of a comparison.
async fn side(row: &Row, run: RunAt) -> Side {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(row, dir.path());
    let run_dir = store::create_run_dir(dir.path(), &s.name, std::time::UNIX_EPOCH).unwrap();
    let meta =
        store::Meta::before_traffic(&s, "calibrate".into(), "h".into(), String::new(), vec![]);
    let tap = (findings::RunExtras::new(), Some(Vec::new()));
    let mut recorder = Recorder::start(&s, run_dir, meta, tap).unwrap();
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    let server = Arc::new(server(row, run));
    let schedule = Schedule::pretend_time();
    run_scheduled(
        &s,
        server,
        progress,
        Interrupt::new(),
        &mut recorder,
        schedule,
    )
    .await;
    let done = recorder.finish().unwrap();
    let (extras, samples) = done.tap;
    let f = findings::analyze_run_with(&done.summaries, Some(&extras));
    let label = format!("seed {}", run.seed);
    Side::from_parts(&label, done.summaries, samples, &f, None)
}

/// Exit codes and what fired over a row's pairs.
#[derive(Default)]
struct Tally {
    regressed: u64,
    inconclusive_exit: u64,
    passed: u64,
    inconclusive: usize,
    fired: std::collections::BTreeMap<String, usize>,
    /// Per check: how often its 99% CI excluded 0 on the regression side, gate or not (an
    /// unchanged server should see that for 0.5% of pairs per check).
    excluded: std::collections::BTreeMap<String, usize>,
    /// Throughput (TPM, RPS, decode rate) checks alone: pairs with at least one regressed, and the judged
    /// checks by verdict (regressed, inconclusive, no change or below gate, improved).
    throughput_pairs: u64,
    throughput: [usize; 4],
}

impl Tally {
    fn add(&mut self, i: u64, c: &compare::Comparison) {
        match c.exit_code() {
            ExitCode::Regression => self.regressed += 1,
            ExitCode::Inconclusive => self.inconclusive_exit += 1,
            _ => self.passed += 1,
        }
        self.inconclusive += c.counts().inconclusive;
        let rates = c.checks.iter().filter(|k| k.metric.is_throughput());
        let mut any = false;
        for k in rates {
            let slot = match k.verdict {
                compare::Verdict::Regressed => 0,
                compare::Verdict::Inconclusive { .. } => 1,
                compare::Verdict::NoChange | compare::Verdict::BelowGate => 2,
                compare::Verdict::Improved => 3,
                compare::Verdict::Skipped { .. } | compare::Verdict::Info => continue,
            };
            any |= slot == 0;
            self.throughput[slot] += 1;
        }
        self.throughput_pairs += u64::from(any);
        let judged =
            |k: &&compare::Check| k.gated && !matches!(k.verdict, compare::Verdict::Skipped { .. });
        for k in c.checks.iter().filter(judged) {
            let worse = match (k.metric, k.ci) {
                (m, Some((_, hi))) if m.is_throughput() || m == compare::Metric::Cap => hi < 0.0,
                (_, Some((lo, _))) => lo > 0.0,
                _ => false,
            };
            if worse {
                let at = k.concurrency.map_or("-".into(), |c| c.to_string());
                *self
                    .excluded
                    .entry(format!("{} @{at}", k.name()))
                    .or_default() += 1;
            }
        }
        for k in c
            .checks
            .iter()
            .filter(|k| k.gated && k.verdict == compare::Verdict::Regressed)
        {
            let at = k.concurrency.map_or("-".into(), |c| c.to_string());
            if std::env::var_os("CAL_VERBOSE").is_some() {
                eprintln!("pair {i}: {} @{at}: {}", k.name(), k.detail);
            }
            *self.fired.entry(format!("{} @{at}", k.name())).or_default() += 1;
        }
    }

    /// The throughput row: pairs with a throughput regression (false alarms in an A/A row,
    /// detections in an A/B one) with their 95% Wilson interval, and the checks by verdict.
    fn throughput_line(&self, label: &str, pairs: u64) -> String {
        let (lo, hi) = crate::stats::calibration::wilson_pct(self.throughput_pairs, pairs);
        let [reg, inc, same, imp] = self.throughput;
        let all = (reg + inc + same + imp).max(1) as f64;
        let pct = |k: usize| format!("{k} ({:.1}%)", 100.0 * k as f64 / all);
        format!(
            "| {label} | {}/{pairs} ({:.0}%, 95% CI {:.0}–{:.0}%) | {} | {} | {} | {} |",
            self.throughput_pairs,
            100.0 * self.throughput_pairs as f64 / pairs as f64,
            lo,
            hi,
            pct(reg),
            pct(inc),
            pct(same),
            pct(imp)
        )
    }

    fn print(&self, label: &str, pairs: u64, minutes: f64) {
        if std::env::var_os("CAL_VERBOSE").is_some() {
            let all: usize = self.excluded.values().sum();
            eprintln!("{label}: CIs excluding 0 on the regression side ({all} in {pairs} pairs):");
            for (k, n) in &self.excluded {
                eprintln!(
                    "  {k}: {n}/{pairs} ({:.1}%)",
                    100.0 * *n as f64 / pairs as f64
                );
            }
        }
        let pct = |k: u64| format!("{k}/{pairs} ({:.0}%)", 100.0 * k as f64 / pairs as f64);
        // False alarms and inconclusive exits carry the upper end of their 95% Wilson interval.
        let bounded = |k: u64| {
            let hi = crate::stats::calibration::wilson_pct(k, pairs).1;
            format!("{} ≤ {hi:.1}%", pct(k))
        };
        let what: Vec<String> = self
            .fired
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        println!(
            "| {label} | {} | {} | {} | {:.1} | {} | {minutes:.1} |",
            bounded(self.regressed),
            bounded(self.inconclusive_exit),
            pct(self.passed),
            self.inconclusive as f64 / pairs as f64,
            if what.is_empty() {
                "-".into()
            } else {
                what.join(", ")
            }
        );
    }
}

/// Pair `i` (seeded `seed`) of a row: the baseline run and the new one, judged against the
/// baseline alone and, for rows that pool, against a pooled baseline of 3 runs (two earlier
/// runs and the same baseline). On a row's walk the runs come in [`Apart`]'s order.
async fn judge_pair(
    row: &Row,
    opts: &CompareOptions,
    (i, seed): (u64, u64),
    single: &mut Tally,
    pooled: &mut Tally,
) {
    let at = |run_seed, shifted, order| RunAt {
        seed: run_seed,
        shifted,
        pair: seed,
        order,
    };
    let a = side(row, at(seed, false, 2)).await;
    let b = side(row, at(seed + 1, true, 3)).await;
    single.add(i, &compare::compare(&a, &b, opts));
    if !row.pools() {
        return;
    }
    let mut pool = Vec::new();
    for (k, s) in [seed + 5_000, seed + 5_001].into_iter().enumerate() {
        let earlier = side(row, at(s, false, k as u32)).await;
        pool.push(compare::PooledRun {
            id: format!("run-{k}"),
            summaries: earlier.summaries,
        });
    }
    pool.push(compare::PooledRun {
        id: "run-2".into(),
        summaries: a.summaries.clone(),
    });
    let pooled_base = Side { pool, ..a };
    pooled.add(i, &compare::compare(&pooled_base, &b, opts));
}

#[tokio::test(start_paused = true)]
#[ignore = "minutes of CPU; run by `make calibrate`"]
async fn calibrate_gate_in_pretend_time() {
    let pairs: u64 = std::env::var("PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(50);
    let (short, long) = ((10, 100), (40, 400));
    let rows = [
        Row::new(
            "A/A, n = 120, short outputs (10–100 tokens)",
            120,
            short,
            Shift::None,
        ),
        Row::new(
            "A/A, n = 120, long outputs (40–400 tokens)",
            120,
            long,
            Shift::None,
        ),
        Row::new("A/A, n = 400, short outputs", 400, short, Shift::None),
        Row::new("A/A, n = 400, long outputs", 400, long, Shift::None),
        Row::new(
            "A/B TTFT +25%, n = 400, short outputs",
            400,
            short,
            Shift::Ttft(1.25),
        ),
        Row::new(
            "A/B TTFT +25%, n = 400, long outputs",
            400,
            long,
            Shift::Ttft(1.25),
        ),
        Row::new(
            "A/B TPOT +30%, n = 120, short outputs",
            120,
            short,
            Shift::Tpot(1.3),
        ),
        Row::new(
            "A/B TPOT +30%, n = 120, long outputs",
            120,
            long,
            Shift::Tpot(1.3),
        ),
        Row {
            scale: 10.0,
            ..Row::new(
                "A/A, n = 120, short outputs, times and floors 10× smaller",
                120,
                short,
                Shift::None,
            )
        },
        Row {
            drift: 0.04,
            ..Row::new(
                "A/A, n = 120, short outputs, run-level drift 4%",
                120,
                short,
                Shift::None,
            )
        },
        Row {
            drift: 0.04,
            ..Row::new(
                "A/B TTFT +25%, n = 400, short outputs, run-level drift 4%",
                400,
                short,
                Shift::Ttft(1.25),
            )
        },
        Row {
            walk: Some(RowWalk::minutes(Apart::Days)),
            ..Row::new(
                "A/A, n = 400, short outputs, walk ±30% over 5 min, runs days apart",
                400,
                short,
                Shift::None,
            )
        },
        Row {
            walk: Some(RowWalk::minutes(Apart::Days)),
            ..Row::new(
                "A/A, n = 120, short outputs, walk ±30% over 5 min, runs days apart",
                120,
                short,
                Shift::None,
            )
        },
        Row {
            walk: Some(RowWalk::minutes(Apart::Gap(Duration::from_secs(300)))),
            ..Row::new(
                "A/A, n = 400, short outputs, walk ±30% over 5 min, runs 5 min apart",
                400,
                short,
                Shift::None,
            )
        },
        Row::demo(
            "A/A, the demo's server and sizes (cap 16, 5/10/20/50 streams, n = 120)",
            Shift::None,
        ),
        Row::demo(
            "A/B throughput −15%, the demo's server and sizes",
            Shift::Throughput(0.85),
        ),
        Row::new(
            "A/B throughput −15%, n = 120, short outputs",
            120,
            short,
            Shift::Throughput(0.85),
        ),
        Row::new(
            "A/B cap 12 → 9 streams, n = 120, short outputs",
            120,
            short,
            Shift::Cap(9),
        ),
        Row::demo(
            "A/B cap 16 → 12 streams, the demo's server and sizes",
            Shift::Cap(12),
        ),
    ];
    println!("\n| pairs (pretend time) | exit 3 (regression) | exit 4 | exit 0 | mean inconclusive checks | what fired | minutes |");
    println!("|---|---:|---:|---:|---:|---|---:|");
    let only = std::env::var("ONLY").ok();
    // (label, false alarms) of the rows the scaling check compares.
    let mut scaling: Vec<(&str, u64)> = Vec::new();
    // The throughput checks' own rows, printed after the main table.
    let mut throughput: Vec<String> = Vec::new();
    for (ri, row) in rows.iter().enumerate() {
        if only.as_deref().is_some_and(|o| !row.label.contains(o)) {
            continue;
        }
        let started = std::time::Instant::now();
        let opts = options(row);
        let (mut single, mut pooled) = (Tally::default(), Tally::default());
        for i in 0..pairs {
            // The scaled row replays the seeds of the first row: only the scale differs.
            let base_seed = if row.scale == 1.0 { ri as u64 } else { 0 };
            let seed = 10_000 * base_seed + 2 * i;
            judge_pair(row, &opts, (i, seed), &mut single, &mut pooled).await;
        }
        let minutes = started.elapsed().as_secs_f64() / 60.0;
        throughput.push(single.throughput_line(row.label, pairs));
        if row.pools() {
            throughput.push(
                pooled.throughput_line(&format!("{}, pooled baseline (3 runs)", row.label), pairs),
            );
            single.print(
                &format!("{}, single-run baseline", row.label),
                pairs,
                minutes,
            );
            pooled.print(
                &format!("{}, pooled baseline (3 runs)", row.label),
                pairs,
                minutes,
            );
        } else {
            single.print(row.label, pairs, minutes);
        }
        if matches!(row.shift, Shift::None) && !row.pools() && row.tokens == short && row.n == 120 {
            scaling.push((row.label, single.regressed));
        }
    }
    println!("\nThroughput checks (TPM and RPS at every step): pairs with a throughput regression are false alarms in an A/A row and detections in an A/B row.\n");
    println!("| pairs (pretend time) | pairs with a throughput regression | checks regressed | inconclusive | no change or below gate | improved |");
    println!("|---|---:|---:|---:|---:|---:|");
    for line in &throughput {
        println!("{line}");
    }
    if let [(a, ka), (b, kb)] = scaling[..] {
        println!(
            "\n{}",
            crate::stats::calibration::scaling_sentence((a, ka, pairs), (b, kb, pairs))
        );
    }
}
