//! `ladder plan` on the demo's measurements, and what `run` says before traffic: the dry run
//! (requests, tokens, duration; nothing sent, nothing written) and the declared-limit warnings.

use crate::support::{sim_scenario, Project};
use std::path::PathBuf;

fn demo_baseline() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("baselines/demo.csv")
}

#[test]
fn plan_for_the_demo_in_words_and_json() {
    let p = Project::new();
    let args = [
        "--rps",
        "10",
        "--slo-ttft",
        "1s",
        "--limit-concurrency",
        "50",
        "--limit-tpm",
        "2000000",
    ];
    let out = p
        .ladder()
        .arg("plan")
        .arg(demo_baseline())
        .args(args)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for needle in [
        "plan for 10 RPS (SLO TTFT P90 ≤ 1 s)",
        "sim-model: measured at 10 streams",
        "→ 8 streams",
        "TPM needed",
        "RPM needed          600 requests/min",
        "rpm: not declared",
        "binds first         concurrency",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let out = p
        .ladder()
        .arg("plan")
        .arg(demo_baseline())
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let m = &v["models"][0];
    assert_eq!(m["basis"], "measured");
    assert_eq!(m["concurrency_needed"], 8);
    assert_eq!(m["binding_limit"], "concurrency");
    assert_eq!(m["step"]["concurrency"], 10);

    p.ladder()
        .arg("plan")
        .arg(demo_baseline())
        .args(["--rps", "0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--rps 0"));
}

fn limited(p: &Project) -> PathBuf {
    let yaml = sim_scenario(
        "lim",
        "    ttft: 20ms\n    tpot: 2ms\n    output_tokens: 10\n    seed: 1",
        "  ladder: [2, 8]\n  requests_per_step: 8",
        10,
    ) + "limits:\n  concurrency: 4\n  tpm: 1000\n";
    p.scenario("lim", &yaml)
}

#[test]
fn dry_run_prints_what_would_be_sent_and_sends_nothing() {
    let p = Project::new();
    let f = limited(&p);
    let out = p
        .ladder()
        .args(["run", "--dry-run"])
        .arg(&f)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stdout.contains("dry run: lim"), "{stdout}");
    assert!(stdout.contains("nothing sent"), "{stdout}");
    assert!(stdout.contains("total: 16 requests"), "{stdout}");
    assert!(
        stdout.contains("from the simulator's parameters"),
        "{stdout}"
    );
    assert!(stderr.contains("above limits.concurrency 4"), "{stderr}");
    assert!(stderr.contains("exceeds limits.tpm 1000"), "{stderr}");
    assert!(!p.path().join("runs").exists(), "a dry run writes nothing");
}

#[test]
fn run_warns_about_declared_limits_before_traffic() {
    let p = Project::new();
    let f = limited(&p);
    let out = p.ladder().arg("run").arg(&f).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let warn = stderr.find("above limits.concurrency 4").expect(&stderr);
    let progress = stderr.find("ladder: lim").expect(&stderr);
    assert!(
        warn < progress,
        "the warning comes before traffic:\n{stderr}"
    );
}

#[test]
fn a_rate_ladders_dry_run_speaks_in_requests_per_second() {
    let p = Project::new();
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/rate-ladder.yaml");
    let out = p
        .ladder()
        .args(["run", "--dry-run"])
        .arg(&f)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // 120 arrivals at 5 req/s: 24 s, plus the last request's ~0.5 s.
    assert!(
        stdout.contains("req/s") && !stdout.contains("streams"),
        "{stdout}"
    );
    assert!(stdout.contains("24.5s"), "{stdout}");
}
