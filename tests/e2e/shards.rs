//! Sharded runs without a cluster: N local `ladder run --shard I/N` processes against one
//! external `ladder sim`, merged with `ladder merge`, must match one process running the same
//! total load (same request counts and concurrency per step; percentiles within a generous
//! tolerance), and a shard killed mid-run must be reported by `merge`, never dropped silently.

use crate::support::process::{stderr_lines, wait_for_line};
use crate::support::{read_csv, url_scenario, Project};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

/// `ladder sim` on a free port: ~20 ms to the first token, 10 tokens 2 ms apart, no cap.
fn start_sim() -> crate::support::Sim {
    crate::support::start_sim(&[
        "ttft=20ms",
        "tpot=2ms",
        "tpot_jitter=0",
        "output_tokens=10",
        "seed=5",
    ])
}

/// A scenario against `base_url`; `load` is the ladder and budget.
fn scenario(p: &Project, base_url: &str, load: &str) -> std::path::PathBuf {
    let load = format!("{load}  warmup_requests: 0");
    p.scenario("shardy", &url_scenario("shardy", base_url, &load, 10))
}

/// RFC 3339 `secs` seconds from now (whole seconds).
fn start_in(secs: u64) -> String {
    let t = SystemTime::now() + Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(t).to_string()
}

fn shard_cmd(p: &Project, scenario: &Path, out: &str, i: u32, n: u32, start: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ladder"));
    // Not --quiet: a shard's `progress: … started` lines tell a test where it is.
    c.current_dir(p.path())
        .args(["run", scenario.to_str().unwrap(), "--out", out])
        .args(["--shard", &format!("{i}/{n}"), "--start-at", start])
        .args(["--step-every", "3s"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn summary(dir: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let (header, rows) = read_csv(&dir.join("summary.csv"));
    rows.into_iter()
        .map(|r| header.iter().cloned().zip(r).collect())
        .collect()
}

fn num(row: &std::collections::BTreeMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = {:?}", row[col]))
}

fn stderr_of(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn three_shards_merge_to_what_one_process_measures() {
    let p = Project::new();
    let sim = start_sim();
    // Step 1 (2 streams) leaves shard 2 idle.
    let s = scenario(
        &p,
        &sim.base_url,
        "  ladder: [2, 5]\n  requests_per_step: 40\n",
    );

    let start = start_in(4);
    let shards: Vec<Child> = (0..3)
        .map(|i| shard_cmd(&p, &s, "sharded", i, 3, &start).spawn().unwrap())
        .collect();
    for (i, child) in shards.into_iter().enumerate() {
        let (code, err) = stderr_of(child);
        assert_eq!(code, Some(0), "shard {i}: {err}");
    }
    p.ladder()
        .args(["--quiet", "run", s.to_str().unwrap(), "--out", "single"])
        .assert()
        .success();

    let merged = p
        .ladder()
        .args(["merge", "sharded", "-o", "merged"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&merged.stderr);
    assert_eq!(merged.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("missing") && !err.contains("did not finish"),
        "{err}"
    );

    let single_dir = std::fs::read_dir(p.path().join("single/shardy"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let one = summary(&single_dir);
    let many = summary(&p.path().join("merged"));
    assert_eq!(one.len(), 2);
    assert_eq!(many.len(), 2);
    for (a, b) in one.iter().zip(&many) {
        for col in [
            "step",
            "concurrency",
            "attempted",
            "succeeded",
            "output_tokens",
        ] {
            assert_eq!(a[col], b[col], "{col}: single {a:?} merged {b:?}");
        }
        // Generous: the two measurements run at different times on a busy 2-core machine.
        // ITL comes back in the merge from the shards' per-request gap histograms.
        for col in ["ttft_p50_ms", "e2e_p50_ms", "tpot_p50_ms", "itl_p50_ms"] {
            let (x, y) = (num(a, col), num(b, col));
            assert!(
                (x - y).abs() <= 0.5 * x.max(y) + 20.0,
                "{col}: single {x} merged {y}"
            );
        }
    }
    // One process would have numbered its workers 0..c; so does the merge.
    let (header, rows) = read_csv(&p.path().join("merged/requests.csv"));
    let (w, st) = (
        header.iter().position(|h| h == "worker").unwrap(),
        header.iter().position(|h| h == "step").unwrap(),
    );
    let mut workers: Vec<u32> = rows
        .iter()
        .filter(|r| r[st] == "2")
        .map(|r| r[w].parse().unwrap())
        .collect();
    workers.sort();
    workers.dedup();
    assert_eq!(workers, [0, 1, 2, 3, 4]);
    assert_eq!(rows.len(), 80);
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("merged/meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["merged_from"].as_array().unwrap().len(), 3);
    assert_eq!(meta["interrupted"], Value::Bool(false));
    // Every shard measured its clock against the simulator's Date header (same host: ~0).
    for m in meta["merged_from"].as_array().unwrap() {
        let off = m["clock_offset_ms"].as_f64().expect("an offset estimate");
        assert!(off.abs() < 1_000.0, "{m}");
    }

    // The merged run is a run like any other: report, plan and diff read it.
    p.ladder()
        .args(["report", "merged", "-o", "merged.html"])
        .assert()
        .success();
    p.ladder()
        .args(["plan", "merged", "--rps", "5"])
        .assert()
        .success();
    let d = p
        .ladder()
        .args(["diff", single_dir.to_str().unwrap(), "merged"])
        .output()
        .unwrap();
    assert!(
        matches!(d.status.code(), Some(0 | 3 | 4)),
        "{}",
        String::from_utf8_lossy(&d.stderr)
    );
}

#[test]
fn a_shard_killed_mid_run_is_reported_by_merge() {
    let p = Project::new();
    let sim = start_sim();
    // Each shard: step 1 is 40 requests on 1 stream (~1.6 s), step 2 40 on 2 streams, 3 s apart.
    let s = scenario(
        &p,
        &sim.base_url,
        "  ladder: [3, 6]\n  requests_per_step: 120\n",
    );
    let start = start_in(4);
    let mut shards: Vec<Child> = (0..3)
        .map(|i| shard_cmd(&p, &s, "sharded", i, 3, &start).spawn().unwrap())
        .collect();
    // SIGKILL shard 1 as its first step starts (perhaps before any record reached the disk:
    // merge reads it either way) and shard 2 as its second step starts (after step 1 was
    // flushed), each told by the shard's own `progress: … step I/2 … started` line.
    for (victim, step) in [(1, "step 1/2"), (2, "step 2/2")] {
        let lines = stderr_lines(&mut shards[victim]);
        wait_for_line(&lines, step);
        shards[victim].kill().unwrap();
    }
    for (i, child) in shards.into_iter().enumerate() {
        let (code, err) = stderr_of(child);
        if i == 0 {
            assert_eq!(code, Some(0), "shard {i}: {err}");
        }
    }
    let out = p
        .ladder()
        .args(["merge", "sharded", "-o", "merged"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for victim in [1, 2] {
        assert!(
            err.contains(&format!("shard {victim} (")) && err.contains("did not finish"),
            "{err}"
        );
    }
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("merged/meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["interrupted"], Value::Bool(true));
    assert!(meta["notes"].to_string().contains("shard 2"), "{meta}");
    // Step 1 holds every record of shards 0 and 2: what shard 2 wrote before it was killed is
    // merged, not dropped.
    let rows = summary(&p.path().join("merged"));
    let step1 = num(&rows[0], "attempted");
    assert!((80.0..120.0).contains(&step1), "{rows:?}");
    let step2 = num(&rows[1], "attempted");
    assert!((40.0..80.0).contains(&step2), "{rows:?}");
}

/// Issue 19 §9: a `--start-at` already past would start this shard out of step with the others:
/// refused before traffic (exit 2) with a way to give a future time.
#[test]
fn a_start_time_in_the_past_is_refused() {
    let p = Project::new();
    let f = p.scenario(
        "late",
        "name: late\ntarget:\n  api: openai-chat\n  sim: {}\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 4\nload:\n  ladder: [1]\n  requests_per_step: 2\n  warmup_requests: 0\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ladder"))
        .current_dir(p.path())
        .args([
            "run",
            f.to_str().unwrap(),
            "--start-at",
            "2020-01-01T00:00:00Z",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--start-at 2020-01-01T00:00:00Z was"),
        "{stderr}"
    );
    assert!(stderr.contains("out of step"), "{stderr}");
    assert!(p.run_dirs("late").is_empty(), "nothing was sent");
}
