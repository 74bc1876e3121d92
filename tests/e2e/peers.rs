//! `ladder logs --format guidellm|aiperf|vllm` as a user runs it, on the recordings in
//! scenarios/logs/peers/ (GuideLLM 0.8.1, AIPerf 0.13.0 and vLLM 0.33.0 against `ladder sim`
//! with a 4-stream cap, by compat/peers.sh): each tool's sweep points are the steps and its
//! knee is the simulator's; `diff` of the GuideLLM run against the AIPerf baseline of the same
//! workload passes and says the clients differ and are not verified (so does `report
//! --baseline`), and fails on the GuideLLM run against a simulator 30% slower in TPOT; `report` and `plan` read the imported runs; an
//! unsupported version is refused by name (exit 2).

use crate::support::{only_dir, Project};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/logs/peers")
        .join(rel)
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `ladder logs` on `input` into OUT; the run directory it wrote and its stderr.
fn import(p: &Project, out: &str, input: &Path, format: &str) -> (PathBuf, String) {
    let o = p
        .ladder()
        .args(["logs", "--out", out, "--format", format])
        .arg(input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    let tool = std::fs::read_dir(p.path().join(out))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (only_dir(&tool), stderr)
}

#[test]
fn each_tools_sweep_is_the_runs_steps_and_finds_the_knee() {
    let p = Project::new();
    let (gl, stderr) = import(&p, "gl", &fixture("guidellm-0.8.1.json"), "auto");
    assert!(
        stderr.contains("client not verified: measured by GuideLLM 0.8.1"),
        "{stderr}"
    );
    let (aip, _) = import(&p, "aip", &fixture("aiperf-0.13.0"), "aiperf");
    let (vl, _) = import(&p, "vl", &fixture("vllm-0.33.0"), "auto");
    for (dir, client) in [
        (&gl, "GuideLLM 0.8.1"),
        (&aip, "AIPerf 0.13.0"),
        (&vl, "vLLM bench serve 0.33.0"),
    ] {
        let meta = json(&dir.join("meta.json"));
        assert_eq!(meta["client"], client);
        assert_eq!(meta["ladder"], serde_json::json!([1, 2, 4, 8, 16]));
        assert_eq!(meta["fingerprint"], "import-in64-out16");
        let knee = &json(&dir.join("findings.json"))[0]["knee"];
        assert_eq!(knee["status"], "knee", "{client}: {knee}");
        assert_eq!(knee["max_clean_concurrency"], 4, "{client}: {knee}");
        assert_eq!(knee["concurrency"], 8, "{client}: {knee}");
        let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
        assert_eq!(summary.lines().count(), 6, "{summary}");
    }
    for args in [vec!["report"], vec!["plan", "--rps", "10"]] {
        let o = p.ladder().args(&args).arg(&aip).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn diff_across_tools_passes_unchanged_and_fails_on_slower_decode() {
    let p = Project::new();
    let (base, _) = import(&p, "aip", &fixture("aiperf-0.13.0"), "auto");
    let (same, _) = import(&p, "gl", &fixture("guidellm-0.8.1.json"), "guidellm");
    let (slow, _) = import(&p, "slow", &fixture("guidellm-0.8.1-tpot13ms.json"), "auto");
    let o = p
        .ladder()
        .arg("diff")
        .arg(&base)
        .arg(&same)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("the clients differ: the baseline was measured by AIPerf 0.13.0, the new run by GuideLLM 0.8.1"), "{out}");
    assert!(out.contains("the baseline: client not verified"), "{out}");
    let page = p.path().join("page.html");
    let o = p
        .ladder()
        .arg("report")
        .arg(&same)
        .arg("--baseline")
        .arg(&base)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("the clients differ"),
        "the report says who measured"
    );
    let o = p
        .ladder()
        .arg("diff")
        .arg(&base)
        .arg(&slow)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("TPOT P90"), "{out}");
}

#[test]
fn an_unsupported_version_is_refused_naming_it() {
    let p = Project::new();
    let old = p.path().join("old.json");
    std::fs::write(
        &old,
        r#"{"metadata": {"version": 1, "guidellm_version": "0.3.1"}, "benchmarks": []}"#,
    )
    .unwrap();
    let o = p
        .ladder()
        .args(["logs", "--out", "x"])
        .arg(&old)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("old.json") && stderr.contains("GuideLLM 0.3.1"),
        "{stderr}"
    );
}
