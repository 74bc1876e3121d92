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

/// Issue 34, part 5: the run's capacity does not depend on the rate asked, the plan rests on
/// steps below the knee (the demo's 20 streams met a 1 s TTFT bound while queueing), and the
/// concurrency needed is set against the knee's cap.
#[test]
fn plan_rests_below_the_knee_and_relates_the_need_to_its_cap() {
    let p = Project::new();
    let plan = |rps: &str, json: bool| {
        let mut cmd = p.ladder();
        cmd.arg("plan").arg(demo_baseline()).args([
            "--rps",
            rps,
            "--slo-ttft",
            "1s",
            "--limit-concurrency",
            "16",
        ]);
        if json {
            cmd.args(["--format", "json"]);
        }
        let out = cmd.assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).to_string()
    };
    let sustained = |text: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with("max sustainable"))
            .unwrap_or_else(|| panic!("no max sustainable line:\n{text}"))
            .to_string()
    };
    let at10 = plan("10", false);
    let at15 = plan("15", false);
    let at30 = plan("30", false);
    // The same run, the same largest sustainable rate, whatever the target.
    assert_eq!(sustained(&at10), sustained(&at15));
    assert_eq!(sustained(&at10), sustained(&at30));
    assert!(
        sustained(&at10).ends_with("at the latency measured at 10 streams"),
        "{at10}"
    );
    // 15 RPS: 20 streams carried it within the SLO, but past the knee; sized from 10 streams.
    assert!(
        at15.contains("sim-model: EXTRAPOLATED from 10 streams"),
        "{at15}"
    );
    assert!(
        at15.contains("No step below the knee (at 20 streams) carried 15 RPS"),
        "{at15}"
    );
    assert!(!at15.contains("from 20 streams"), "{at15}");
    assert!(
        at10.contains(
            "needs 8 concurrent streams; the run's knee shows a cap ≈ 16 per replica → 1 replica"
        ),
        "{at10}"
    );
    assert!(
        at30.contains(
            "needs 23 concurrent streams; the run's knee shows a cap ≈ 16 per replica → 2 replicas"
        ),
        "{at30}"
    );
    let v: serde_json::Value = serde_json::from_str(&plan("30", true)).unwrap();
    let m = &v["models"][0];
    assert_eq!(m["basis"], "extrapolated", "{m}");
    assert_eq!(m["step"]["concurrency"], 10, "{m}");
    assert_eq!(m["limits_at"]["concurrency"], 10, "{m}");
    assert_eq!(m["cap"]["source"], "knee_cap", "{m}");
    assert_eq!(m["cap"]["per_replica"], 16.0, "{m}");
    assert_eq!(m["cap"]["replicas"], 2, "{m}");
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

/// Issue 46, part 8: the plan speaks to the target it measured. The same measurements read as
/// a server the user runs (the simulator) name replicas; read as a hosted API (the run's
/// recorded scenario pointing at api.openai.com) they name the account's concurrency limit to
/// ask OpenAI for, and no replicas; the JSON says which.
#[test]
fn plan_names_replicas_for_a_server_you_run_and_an_account_limit_for_a_hosted_api() {
    let p = Project::new();
    let yaml = sim_scenario(
        "kind",
        "    ttft: 20ms\n    tpot: 2ms\n    tpot_jitter: 0\n    output_tokens: 10\n    concurrency_cap: 4\n    seed: 3",
        "  ladder: [2, 4, 8]\n  requests_per_step: 60\n  warmup_requests: 2",
        10,
    );
    let s = p.scenario("kind", &yaml);
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&s)
        .assert()
        .success();
    let run = p.run_dirs("kind")[0].clone();
    let plan = |dir: &std::path::Path, json: bool| {
        let mut cmd = p.ladder();
        cmd.arg("plan").arg(dir).args(["--rps", "500"]);
        if json {
            cmd.args(["--format", "json"]);
        }
        let out = cmd.assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).to_string()
    };
    let own = plan(&run, false);
    let line = own
        .lines()
        .find(|l| l.contains("needs "))
        .unwrap_or_else(|| panic!("no lever line:\n{own}"));
    assert!(line.trim_start().starts_with("replicas "), "{own}");
    assert!(line.contains(" replicas"), "{line}");
    let v: serde_json::Value = serde_json::from_str(&plan(&run, true)).unwrap();
    assert_eq!(v["target_kind"]["kind"], "self_run", "{v}");
    assert_eq!(v["target_kind"]["basis"], "simulator", "{v}");

    // The same run as if it had measured OpenAI's API.
    let hosted = p.path().join("hosted-run");
    std::fs::create_dir(&hosted).unwrap();
    for e in std::fs::read_dir(&run).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), hosted.join(e.file_name())).unwrap();
        }
    }
    let recorded = std::fs::read_to_string(hosted.join("scenario.yaml")).unwrap();
    let start = recorded
        .find("  sim:")
        .expect("the recorded target's sim block");
    let end = recorded.find("  models:").unwrap();
    let openai = format!(
        "{}  base_url: https://api.openai.com/v1\n{}",
        &recorded[..start],
        &recorded[end..]
    );
    std::fs::write(hosted.join("scenario.yaml"), openai).unwrap();
    let text = plan(&hosted, false);
    let line = text
        .lines()
        .find(|l| l.contains("needs "))
        .unwrap_or_else(|| panic!("no lever line:\n{text}"));
    assert!(line.trim_start().starts_with("account limit "), "{text}");
    assert!(
        line.contains("on this account → ask OpenAI for a concurrency limit of at least "),
        "{line}"
    );
    assert!(!line.contains("replica"), "{line}");
    let v: serde_json::Value = serde_json::from_str(&plan(&hosted, true)).unwrap();
    assert_eq!(v["target_kind"]["kind"], "hosted", "{v}");
    assert_eq!(v["target_kind"]["provider"], "OpenAI", "{v}");
}
