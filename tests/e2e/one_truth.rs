//! Issue 18: one run, one truth. Every command that reads a run must say the same thing about
//! it: the throughput a check judges is the number `summary.csv` records for that step, a
//! baseline diffed against itself is "no change" for throughput, and `report --baseline` judges
//! like `diff` with the gates recorded with the run.

use crate::support::{col, read_csv, Project};
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `diff --format json` of the demo's baseline against itself: every TPM/RPS check's base and new
/// value is the baseline's `tpm_steady` / `rps_steady` for that step, and none is inconclusive
/// (at the simulator's cap throughput is the steadiest figure of the run).
#[test]
fn demo_throughput_checks_judge_the_summary_columns_and_a_self_diff_decides() {
    let p = Project::new();
    let baseline = repo("baselines/demo.csv");
    let out = p
        .ladder()
        .arg("diff")
        .arg(&baseline)
        .arg(&baseline)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let (h, rows) = read_csv(&baseline);
    let column = |concurrency: u64, name: &str| -> f64 {
        let row = rows
            .iter()
            .find(|r| r[col(&h, "concurrency")] == concurrency.to_string())
            .unwrap_or_else(|| panic!("no step at {concurrency}"));
        row[col(&h, name)].parse().unwrap()
    };
    let mut seen = 0;
    for c in doc["checks"].as_array().unwrap() {
        let name = match c["metric"].as_str().unwrap() {
            "tpm" => "tpm_steady",
            "rps" => "rps_steady",
            _ => continue,
        };
        let at = c["concurrency"].as_u64().unwrap();
        let want = column(at, name);
        for side in ["base", "new"] {
            let got = c[side].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-9 * want.max(1.0),
                "{name} at {at}: {side} {got} vs summary.csv {want}"
            );
        }
        assert_eq!(c["verdict"]["kind"], "no_change", "{name} at {at}: {c}");
        let (lo, hi) = (c["ci"][0].as_f64().unwrap(), c["ci"][1].as_f64().unwrap());
        assert!(lo > -0.10 && hi < 0.10, "{name} at {at}: CI [{lo}, {hi}]");
        seen += 1;
    }
    assert_eq!(seen, 8, "TPM and RPS at each of the 4 steps");
}
