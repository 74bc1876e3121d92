//! `make calibrate`: measures the regression gate instead of asserting it. Runs pairs of real
//! `ladder run`s against the embedded simulator, scaled down ten times (TTFT median 20 ms, 1 ms
//! per token) so that dozens of runs take minutes, and diffs each pair with `ladder diff`:
//! A/A pairs (same settings, different seeds) give the false-alarm rate (share exiting 3), A/B
//! pairs (a known shift) the detection rate. The gate's floors are scaled down with the times
//! (TTFT 5 ms, E2E 10 ms, TPOT/ITL 0.1 ms); the relative gates are the defaults.
//!
//! The workload is the issue's: a 4/8/16/32 ladder crossing a 12-stream cap, output lengths
//! varying 10× (uniform between a min and a max), TTFT lognormal with σ = 0.5.
//!
//! **Scaling check**: the first A/A row runs again with times and floors scaled down 5× instead of
//! 10×; the two false-alarm rates are compared with their 95% (Wilson) intervals and a two-sided
//! Fisher exact test, so a rate that depends on the scaling (timer granularity, the machine's
//! load at 1 ms per token) shows.
//!
//! **Search accuracy** (`support/search_accuracy.rs`): `load: {search: …}` against caps whose
//! true answer is known, `SEARCH_RUNS` runs per cap (default 5): how close its capacity lands
//! and how often its interval contains the answer; written to benches/RESULTS.md.
//!
//! Usage: `cargo bench --bench calibrate [-- PAIRS [JOBS]]` (needs `target/release/ladder`;
//! `make calibrate` builds it). Prints a markdown table for benches/RESULTS.md.
//! `CALIBRATE_ONLY=search` runs only the search row.

#[path = "support/results_md.rs"]
mod results_md;
#[path = "support/search_accuracy.rs"]
mod search_accuracy;

use ladder::stats::calibration::scaling_sentence;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Clone, Copy, Debug)]
enum Shift {
    None,
    /// TTFT median (and so every TTFT percentile below the cap) × factor.
    Ttft(f64),
    /// Time per output token × factor.
    Tpot(f64),
}

#[derive(Clone, Copy, Debug)]
struct Config {
    label: &'static str,
    n: u32,
    out_min: u32,
    out_max: u32,
    shift: Shift,
    pairs: usize,
    /// Scale of the simulator's times against a realistic server (TTFT 200 ms, 10 ms per
    /// token): 10 means ten times faster.
    scale: f64,
}

/// The usual scale: 10× faster than a realistic server.
const SCALE: f64 = 10.0;

fn scenario(cfg: &Config, seed: u64, shifted: bool) -> String {
    let (mut ttft_ms, mut tpot_ms) = (200.0 / cfg.scale, 10.0 / cfg.scale);
    if shifted {
        match cfg.shift {
            Shift::Ttft(k) => ttft_ms *= k,
            Shift::Tpot(k) => tpot_ms *= k,
            Shift::None => {}
        }
    }
    let us = |ms: f64| format!("{}us", (ms * 1000.0).round() as u64);
    format!(
        "name: calibrate\n\
         target:\n  api: openai-chat\n  sim:\n    ttft: {}\n    ttft_sigma: 0.5\n    tpot: {}\n    \
         tpot_jitter: 0.05\n    output_tokens: {}\n    output_tokens_min: {}\n    concurrency_cap: 12\n    \
         seed: {seed}\n  models: [sim-model]\n\
         request:\n  prompt_file: prompt.txt\n  max_tokens: {}\n\
         load:\n  ladder: [4, 8, 16, 32]\n  requests_per_step: {}\n  warmup_requests: 0\n  pause_between_steps: 0s\n\
         gates:\n  ttft: {{p90: 10%, p99: 20%, floor: {}}}\n  tpot: {{p90: 10%, p99: 20%, floor: {}}}\n  \
         itl: {{p90: 10%, p99: 20%, floor: {}}}\n  e2e: {{p90: 10%, p99: 20%, floor: {}}}\n",
        us(ttft_ms),
        us(tpot_ms),
        cfg.out_max,
        cfg.out_min,
        cfg.out_max,
        cfg.n,
        us(50.0 / cfg.scale),
        us(1.0 / cfg.scale),
        us(1.0 / cfg.scale),
        us(100.0 / cfg.scale),
    )
}

fn ladder() -> PathBuf {
    let p = std::env::var_os("LADDER_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/ladder"),
        PathBuf::from,
    );
    assert!(p.exists(), "build it first: cargo build --release");
    p
}

/// One run; returns its run directory.
fn run(dir: &Path, name: &str, yaml: &str) -> PathBuf {
    let scen = dir.join(format!("{name}.yaml"));
    std::fs::write(&scen, yaml).expect("write scenario");
    std::fs::write(dir.join("prompt.txt"), "Say something.\n").expect("write prompt");
    let out = dir.join(format!("{name}-out"));
    let st = Command::new(ladder())
        .arg("run")
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .expect("ladder run");
    assert!(
        st.status.code() == Some(0),
        "ladder run failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let parent = out.join("calibrate");
    let entry = std::fs::read_dir(&parent)
        .expect("run dir")
        .next()
        .expect("one run")
        .expect("entry");
    entry.path()
}

struct Outcome {
    exit: i32,
    fired: Vec<String>,
    inconclusive: usize,
}

fn diff(a: &Path, b: &Path, gates: &Path) -> Outcome {
    let o = Command::new(ladder())
        .arg("diff")
        .arg(a)
        .arg(b)
        .arg("--format")
        .arg("json")
        .arg("--gates-from")
        .arg(gates)
        .output()
        .expect("ladder diff");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("diff json");
    let mut fired = Vec::new();
    for c in v["checks"].as_array().into_iter().flatten() {
        if c["gated"] == true && c["verdict"]["kind"] == "regressed" {
            let step = c["concurrency"]
                .as_u64()
                .map_or("-".into(), |s| s.to_string());
            let pct = c["percentile"].as_str().unwrap_or("");
            fired.push(format!(
                "{}{} @{step}",
                c["metric"].as_str().unwrap_or("?"),
                if pct.is_empty() {
                    String::new()
                } else {
                    format!(" {pct}")
                }
            ));
        }
    }
    Outcome {
        exit: o.status.code().unwrap_or(-1),
        fired,
        inconclusive: v["counts"]["inconclusive"].as_u64().unwrap_or(0) as usize,
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // Under `cargo test`: only check that a scenario is well formed, never run pairs.
        let cfg = Config {
            label: "self-check",
            n: 120,
            out_min: 10,
            out_max: 100,
            shift: Shift::Tpot(1.3),
            pairs: 1,
            scale: SCALE,
        };
        let (a, b) = (scenario(&cfg, 1, false), scenario(&cfg, 2, true));
        assert!(
            a.contains("tpot: 1000us") && b.contains("tpot: 1300us"),
            "{b}"
        );
        assert!(a.contains("floor: 5000us") && a.contains("concurrency_cap: 12"));
        search_accuracy::self_check();
        results_md::self_check();
        println!("calibrate: self-check ok (run `make calibrate` for the rates)");
        return;
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let aa_pairs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(40);
    let jobs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let ab_pairs = (aa_pairs / 2).max(5);
    let configs = [
        Config {
            label: "A/A, n = 120, short outputs (10–100 tokens)",
            n: 120,
            out_min: 10,
            out_max: 100,
            shift: Shift::None,
            pairs: aa_pairs,
            scale: SCALE,
        },
        Config {
            label: "A/A, n = 120, long outputs (40–400 tokens)",
            n: 120,
            out_min: 40,
            out_max: 400,
            shift: Shift::None,
            pairs: ab_pairs,
            scale: SCALE,
        },
        Config {
            label: "A/A, n = 400, short outputs",
            n: 400,
            out_min: 10,
            out_max: 100,
            shift: Shift::None,
            pairs: ab_pairs,
            scale: SCALE,
        },
        Config {
            label: "A/B TPOT +30%, n = 120, short outputs",
            n: 120,
            out_min: 10,
            out_max: 100,
            shift: Shift::Tpot(1.3),
            pairs: ab_pairs,
            scale: SCALE,
        },
        Config {
            label: "A/B TTFT +25%, n = 400, short outputs",
            n: 400,
            out_min: 10,
            out_max: 100,
            shift: Shift::Ttft(1.25),
            pairs: ab_pairs,
            scale: SCALE,
        },
        Config {
            label: "A/A, n = 120, short outputs, scaled 5× (scaling check)",
            n: 120,
            out_min: 10,
            out_max: 100,
            shift: Shift::None,
            pairs: aa_pairs,
            scale: 5.0,
        },
    ];
    let only: Option<String> = std::env::var("CALIBRATE_ONLY").ok();
    let root = tempfile::tempdir().expect("tempdir");
    // (label, false alarms, pairs) of the two rows the scaling check compares.
    let mut scaling: Vec<(&str, usize, usize)> = Vec::new();
    println!("| pairs | exit 3 (regression) | exit 4 | exit 0 | mean inconclusive checks | what fired | minutes |");
    println!("|---|---:|---:|---:|---:|---|---:|");
    for (ci, cfg) in configs.iter().enumerate() {
        if only.as_deref().is_some_and(|o| !cfg.label.contains(o)) {
            continue;
        }
        let started = Instant::now();
        let results: Arc<Mutex<Vec<Outcome>>> = Arc::default();
        let next = Arc::new(Mutex::new(0usize));
        std::thread::scope(|s| {
            for _ in 0..jobs {
                let (results, next, root) = (results.clone(), next.clone(), root.path());
                s.spawn(move || loop {
                    let i = {
                        let mut g = next.lock().unwrap();
                        if *g >= cfg.pairs {
                            return;
                        }
                        *g += 1;
                        *g - 1
                    };
                    let dir = root.join(format!("c{ci}-p{i}"));
                    std::fs::create_dir_all(&dir).unwrap();
                    let seed = 1000 * ci as u64 + 2 * i as u64;
                    let a = run(&dir, "a", &scenario(cfg, seed, false));
                    let b = run(&dir, "b", &scenario(cfg, seed + 1, true));
                    let o = diff(&a, &b, &dir.join("b.yaml"));
                    results.lock().unwrap().push(o);
                    let _ = std::fs::remove_dir_all(&dir);
                });
            }
        });
        let r = results.lock().unwrap();
        let count = |code: i32| r.iter().filter(|o| o.exit == code).count();
        if ci == 0 || cfg.scale != SCALE {
            scaling.push((cfg.label, count(3), r.len()));
        }
        let mut fired: Vec<String> = r.iter().flat_map(|o| o.fired.clone()).collect();
        fired.sort();
        let mut tally: Vec<(String, usize)> = Vec::new();
        for f in fired {
            match tally.last_mut() {
                Some((k, n)) if *k == f => *n += 1,
                _ => tally.push((f, 1)),
            }
        }
        let what: Vec<String> = tally.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        let pct = |k: usize| {
            format!(
                "{k}/{} ({:.0}%)",
                r.len(),
                100.0 * k as f64 / r.len() as f64
            )
        };
        println!(
            "| {} | {} | {} | {} | {:.1} | {} | {:.1} |",
            cfg.label,
            pct(count(3)),
            pct(count(4)),
            pct(count(0)),
            r.iter().map(|o| o.inconclusive as f64).sum::<f64>() / r.len() as f64,
            if what.is_empty() {
                "-".to_string()
            } else {
                what.join(", ")
            },
            started.elapsed().as_secs_f64() / 60.0
        );
    }
    if let [(a, ka, na), (b, kb, nb)] = scaling[..] {
        println!(
            "\n{}",
            scaling_sentence((a, ka as u64, na as u64), (b, kb as u64, nb as u64))
        );
    }
    if !only.as_deref().is_some_and(|o| !"search".contains(o)) {
        search_row(jobs);
    }
}

/// The search's accuracy against known caps, printed and written to benches/RESULTS.md.
fn search_row(jobs: usize) {
    let runs: usize = std::env::var("SEARCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    println!("\nsearch accuracy ({runs} runs per cap, {jobs} at a time):\n");
    let table = search_accuracy::measure(&ladder(), runs, jobs);
    print!("{table}");
    let section = format!(
        "{table}\nCommand: `SEARCH_RUNS={runs} CALIBRATE_ONLY=search cargo bench --locked --bench calibrate -- 1 {jobs}` (the search row of `make calibrate`).\n"
    );
    match results_md::write_section("calibrate-search", &section) {
        Ok(p) => println!("written to {}", p.display()),
        Err(e) => eprintln!("could not write the results: {e}"),
    }
}
