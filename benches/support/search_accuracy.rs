//! `make calibrate`'s search row: how close `load: {search: …}` lands to the simulator's true
//! capacity, and how often its interval contains it. Each run is a real `ladder run` against
//! the embedded simulator with a concurrency cap K and a fixed service time (TTFT 20 ms, then
//! 29 tokens at 2 ms: about 78 ms, no jitter), a search from 2 streams under TTFT P90 ≤ 50 ms.
//!
//! The true answer: in a closed loop of N ≥ K streams with equal service times, every round of
//! K admissions leaves N − K fresh requests waiting a whole service time (TTFT ≈ 98 ms, over
//! the bound), so a share (N − K) / K of requests waits. TTFT P90 stays within the bound while
//! that share is under 10%: the highest N meeting the SLO is the largest with N − K < K / 10
//! (K for K < 10; 13 for K = 12, where one waiting stream in 13 is 8%).
//!
//! Printed as a markdown table and written to `benches/RESULTS.md` (section `calibrate-search`).

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

/// The caps tried, one set of runs each.
pub const CAPS: [u32; 4] = [4, 6, 8, 12];

/// The highest concurrency whose TTFT P90 meets the bound against a cap of `k` (module docs).
pub fn truth(k: u32) -> u32 {
    (k..).take_while(|n| 10 * (n - k) < k).last().unwrap_or(k)
}

pub fn scenario(cap: u32, seed: u64) -> String {
    format!(
        "name: search-cal\ntarget:\n  api: openai-chat\n  sim: {{ttft: 20ms, tpot: 2ms, tpot_jitter: 0, \
         output_tokens: 30, concurrency_cap: {cap}, seed: {seed}}}\n  models: [sim-model]\n\
         request:\n  prompt_file: prompt.txt\n  max_tokens: 30\n\
         load:\n  ladder: [2]\n  requests_per_step: 120\n  warmup_requests: 0\n  pause_between_steps: 0s\n  \
         search: {{slo: {{ttft_p90: 50ms}}, max: 64}}\n"
    )
}

/// One search: its capacity (max, lo, hi, open-ended) and how many steps the run took.
struct Found {
    cap: u32,
    max: u32,
    lo: u32,
    hi: u32,
    open_ended: bool,
    steps: usize,
}

fn search_once(ladder: &Path, dir: &Path, cap: u32, seed: u64) -> Result<Found, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("prompt.txt"), "Say something.\n").map_err(|e| e.to_string())?;
    let scen = dir.join("s.yaml");
    std::fs::write(&scen, scenario(cap, seed)).map_err(|e| e.to_string())?;
    let out = Command::new(ladder)
        .arg("run")
        .arg(&scen)
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--quiet", "--format", "json"])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("run document: {e}"))?;
    let c = &doc["findings"][0]["capacity"];
    let n = |k: &str| c[k].as_u64().map(|v| v as u32);
    let (Some(max), Some(lo), Some(hi)) = (n("max"), n("lo"), n("hi")) else {
        return Err(format!("no capacity in the findings: {}", doc["findings"]));
    };
    Ok(Found {
        cap,
        max,
        lo,
        hi,
        open_ended: c["open_ended"] == true,
        steps: doc["summary"].as_array().map_or(0, Vec::len),
    })
}

/// `runs_per_cap` searches against each of [`CAPS`], `jobs` at a time; the table.
pub fn measure(ladder: &Path, runs_per_cap: usize, jobs: usize) -> String {
    let root = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let work: Vec<(u32, u64)> = CAPS
        .iter()
        .flat_map(|&k| (0..runs_per_cap).map(move |i| (k, 7000 + u64::from(k) * 100 + i as u64)))
        .collect();
    let next = Mutex::new(0usize);
    let found: Mutex<Vec<Found>> = Mutex::default();
    let failed: Mutex<Vec<String>> = Mutex::default();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = {
                    let mut g = next.lock().unwrap();
                    *g += 1;
                    *g - 1
                };
                let Some(&(cap, seed)) = work.get(i) else {
                    return;
                };
                let dir = root.path().join(format!("r{i}"));
                match search_once(ladder, &dir, cap, seed) {
                    Ok(f) => found.lock().unwrap().push(f),
                    Err(e) => failed.lock().unwrap().push(format!("cap {cap}: {e}")),
                }
                let _ = std::fs::remove_dir_all(&dir);
            });
        }
    });
    let found = found.into_inner().unwrap();
    let failed = failed.into_inner().unwrap();
    table(&found, &failed, started.elapsed().as_secs_f64() / 60.0)
}

fn table(found: &[Found], failed: &[String], minutes: f64) -> String {
    let mut out = String::from(
        "| cap K | true answer | runs | capacities found (lo–hi) | within ±1 | interval contains it | mean \\|error\\| | mean steps |\n|---:|---:|---:|---|---:|---:|---:|---:|\n",
    );
    let mut all: Vec<&Found> = Vec::new();
    for k in CAPS {
        let mine: Vec<&Found> = found.iter().filter(|f| f.cap == k).collect();
        if mine.is_empty() {
            continue;
        }
        all.extend(&mine);
        let t = truth(k);
        let list: Vec<String> = mine
            .iter()
            .map(|f| {
                let open = if f.open_ended { "+" } else { "" };
                format!("{} ({}–{}{open})", f.max, f.lo, f.hi)
            })
            .collect();
        out.push_str(&format!(
            "| {k} | {t} | {} | {} | {} | {} | {:.2} | {:.1} |\n",
            mine.len(),
            list.join(", "),
            share(&mine, |f| f.max.abs_diff(truth(f.cap)) <= 1),
            share(&mine, |f| f.lo <= truth(f.cap) && truth(f.cap) <= f.hi),
            mean(&mine, |f| f64::from(f.max.abs_diff(truth(f.cap)))),
            mean(&mine, |f| f.steps as f64),
        ));
    }
    out.push_str(&format!(
        "| all | | {} | | {} | {} | {:.2} | {:.1} |\n",
        all.len(),
        share(&all, |f| f.max.abs_diff(truth(f.cap)) <= 1),
        share(&all, |f| f.lo <= truth(f.cap) && truth(f.cap) <= f.hi),
        mean(&all, |f| f64::from(f.max.abs_diff(truth(f.cap)))),
        mean(&all, |f| f.steps as f64),
    ));
    out.push_str(&format!(
        "\n{} searches in {minutes:.1} minutes{}\n",
        all.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!("; {} runs failed: {}", failed.len(), failed.join("; "))
        }
    ));
    out
}

fn share(v: &[&Found], f: impl Fn(&Found) -> bool) -> String {
    let k = v.iter().filter(|x| f(x)).count();
    format!(
        "{k}/{} ({:.0}%)",
        v.len(),
        100.0 * k as f64 / v.len().max(1) as f64
    )
}

fn mean(v: &[&Found], f: impl Fn(&Found) -> f64) -> f64 {
    v.iter().map(|x| f(x)).sum::<f64>() / v.len().max(1) as f64
}

/// Checked under `cargo test` (no runs): the true answers and the table's arithmetic.
pub fn self_check() {
    assert_eq!(CAPS.map(truth), [4, 6, 8, 13]);
    assert_eq!(
        truth(20),
        21,
        "one waiting stream in 20 is 5%; two, 10%: over"
    );
    assert!(scenario(8, 1).contains("concurrency_cap: 8"));
    let f = |cap, max, lo, hi| Found {
        cap,
        max,
        lo,
        hi,
        open_ended: false,
        steps: 6,
    };
    let t = table(
        &[f(8, 8, 8, 9), f(8, 10, 9, 10), f(12, 13, 12, 13)],
        &[],
        1.0,
    );
    assert!(
        t.contains("| 8 | 8 | 2 | 8 (8–9), 10 (9–10) | 1/2 (50%) | 1/2 (50%) | 1.00 | 6.0 |"),
        "{t}"
    );
    assert!(
        t.contains("| all | | 3 | | 2/3 (67%) | 2/3 (67%) | 0.67 | 6.0 |"),
        "{t}"
    );
}
