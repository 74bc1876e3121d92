//! Pooled baselines (issue 11 §2) through the real binary: `--save-baseline --append` keeps the
//! last K runs (`baselines: {keep: K}`) in `baselines/<scenario>.runs/`, a diff against a pool of
//! 3 runs of a drifting simulator says the baseline is pooled and widens its checks, a run of
//! another workload is refused before any traffic, and a plain `--save-baseline` starts over.

use crate::support::{sim_scenario, Project};
use std::path::Path;

/// A small ladder against a simulator whose whole run drifts by a few percent (seeded per run).
fn drifting(keep: &str, max_tokens: u32) -> String {
    let mut s = sim_scenario(
        "pool",
        "    ttft: 30ms\n    ttft_sigma: 0.3\n    tpot: 2ms\n    output_tokens: 16\n    drift: 0.04\n    seed: 1",
        "  ladder: [4]\n  requests_per_step: 48\n  warmup_requests: 0",
        max_tokens,
    );
    s.push_str(keep);
    s
}

/// The pool's run files in time order (a run started in the same second as the previous one is
/// `…Z-2`, which comes after `…Z`).
fn pool_files(p: &Project) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p.path().join("baselines/pool.runs"))
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort_by_key(|f| {
        let id = f.trim_end_matches(".csv");
        match id.rsplit_once('-') {
            Some((stamp, n)) if stamp.ends_with('Z') => (stamp.to_string(), n.parse().unwrap_or(0)),
            _ => (id.to_string(), 1),
        }
    });
    v
}

fn save(p: &Project, f: &Path, extra: &[&str], seed: u32) -> String {
    let out = p
        .ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .args(extra)
        .args(["--sim-set", &format!("seed={seed}")])
        .arg(f)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

#[test]
fn append_keeps_the_last_k_runs_and_the_diff_widens_its_checks() {
    let p = Project::new();
    let f = p.scenario("pool", &drifting("baselines:\n  keep: 3\n", 16));
    // keep: 3 pools even without --append; the first save says 3 runs are needed to widen.
    let said = save(&p, &f, &[], 1);
    assert!(
        said.contains("pooled: 1 of the last 3 runs") && said.contains("3 or more widen"),
        "{said}"
    );
    save(&p, &f, &["--append"], 2);
    let said = save(&p, &f, &["--append"], 3);
    assert!(
        said.contains("pooled: 3 of the last 3 runs")
            && said.contains("the gate widens each check"),
        "{said}"
    );
    let kept = pool_files(&p);
    save(&p, &f, &["--append"], 4);
    let now = pool_files(&p);
    assert_eq!(now.len(), 3, "{now:?}");
    assert_eq!(
        now[..2],
        kept[1..],
        "the oldest run is dropped: {kept:?} -> {now:?}"
    );
    // The pool's newest run is the baseline's summary.
    let baseline = p.path().join("baselines/pool.csv");
    let newest = p.path().join("baselines/pool.runs").join(&now[2]);
    assert_eq!(
        std::fs::read(&baseline).unwrap(),
        std::fs::read(&newest).unwrap()
    );

    // A fifth run (another drift draw) judged against the pool.
    p.ladder()
        .args(["run", "--quiet", "--sim-set", "seed=5"])
        .arg(&f)
        .assert()
        .success();
    let run = p.run_dirs("pool").pop().unwrap();
    let out = p
        .ladder()
        .args(["diff", "--format", "json"])
        .arg(&baseline)
        .arg(&run)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("the baseline pools 3 runs")
            && notes.contains("widened by the run-to-run spread"),
        "{notes}"
    );
    let widened: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["gated"] == true && c["metric"] == "ttft" && c["percentile"] == "p90")
        .map(|c| c["detail"].as_str().unwrap())
        .collect();
    assert!(!widened.is_empty());
    for d in widened {
        assert!(d.contains("over 3 baseline runs"), "{d}");
    }
    // The human table says it too.
    let table = p
        .ladder()
        .arg("diff")
        .arg(&baseline)
        .arg(&run)
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("the baseline pools 3 runs"), "{text}");
}

#[test]
fn a_pool_refuses_another_workload_and_a_plain_save_starts_over() {
    let p = Project::new();
    let f = p.scenario("pool", &drifting("", 16));
    save(&p, &f, &["--append"], 1);
    assert_eq!(pool_files(&p).len(), 1);
    // Another max_tokens is another workload: refused before any traffic.
    std::fs::write(&f, drifting("", 12)).unwrap();
    let before = p.run_dirs("pool").len();
    let out = p
        .ladder()
        .args(["run", "--quiet", "--save-baseline", "--append"])
        .arg(&f)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("refusing to pool this run")
            && stderr.contains("another workload")
            && stderr.contains("nothing was sent"),
        "{stderr}"
    );
    assert_eq!(p.run_dirs("pool").len(), before);
    // A plain --save-baseline replaces the baseline and removes the pool.
    let said = save(&p, &f, &[], 2);
    assert!(!said.contains("pooled"), "{said}");
    assert!(said.contains("removed the pool of 1 run in "), "{said}");
    assert!(said.contains("pool.runs/"), "{said}");
    let again = save(&p, &f, &[], 3);
    assert!(!again.contains("removed the pool"), "{again}");
    assert!(!p.path().join("baselines/pool.runs").exists());
    // --append without --save-baseline is a usage error.
    p.ladder()
        .args(["run", "--append"])
        .arg(&f)
        .assert()
        .code(2);
}
