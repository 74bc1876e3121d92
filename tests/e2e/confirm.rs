//! `ladder run --confirm`: a verdict that regressed re-measures its steps (into a
//! `<run>-confirm` directory) and keeps a regression only when the rerun shows it too; the
//! budget bounds it; a pass reruns nothing; and it needs something to confirm.

use crate::support::Project;

/// One model against the simulator; `--sim-set ttft=…` makes a run slower.
fn scenario(p: &Project) -> String {
    let yaml = "name: conf\ntarget:\n  sim:\n    ttft: 20ms\n    tpot: 2ms\n    output_tokens: 8\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n  ladder: [1, 4]\n  requests_per_step: 60\n";
    p.scenario("conf", yaml).to_str().unwrap().to_string()
}

fn run(p: &Project, args: &[&str]) -> (i32, String) {
    let o = p.ladder().args(args).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), text)
}

fn confirm_dirs(p: &Project) -> usize {
    p.run_dirs("conf")
        .iter()
        .filter(|d| d.to_string_lossy().ends_with("-confirm"))
        .count()
}

#[test]
fn a_real_regression_is_confirmed_on_a_rerun_of_its_steps() {
    let p = Project::new();
    let s = scenario(&p);
    let (code, text) = run(&p, &["run", &s, "--quiet", "--save-baseline"]);
    assert_eq!(code, 0, "{text}");
    let against = [
        "--against",
        "baselines/conf.csv",
        "--confirm",
        "--confirm-after",
        "0s",
    ];
    // Unchanged: a pass, nothing re-measured.
    let mut args = vec!["run", s.as_str(), "--no-color"];
    args.extend_from_slice(&against);
    let (code, text) = run(&p, &args);
    assert_eq!(code, 0, "{text}");
    assert_eq!(confirm_dirs(&p), 0, "{text}");
    // 80 ms more to the first token: regressed, and confirmed on the rerun.
    args.extend_from_slice(&["--sim-set", "ttft=100ms"]);
    let (code, text) = run(&p, &args);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("confirming: REGRESSION"), "{text}");
    assert!(text.contains("regressions confirmed on rerun"), "{text}");
    assert_eq!(confirm_dirs(&p), 1, "{text}");
    // The JSON says it per check.
    args.extend_from_slice(&["--format", "json", "--quiet"]);
    let o = p.ladder().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let confirmed = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["verdict"]["kind"] == "regressed"
                && c["detail"]
                    .as_str()
                    .unwrap()
                    .starts_with("confirmed on rerun")
        })
        .count();
    assert!(confirmed >= 2, "{doc}");
}

#[test]
fn the_budget_bounds_the_rerun_and_confirm_needs_a_verdict() {
    let p = Project::new();
    let s = scenario(&p);
    let (code, text) = run(&p, &["run", &s, "--quiet", "--save-baseline"]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(
        &p,
        &[
            "run",
            &s,
            "--no-color",
            "--against",
            "baselines/conf.csv",
            "--confirm",
            "--confirm-budget",
            "10",
            "--sim-set",
            "ttft=100ms",
        ],
    );
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("confirmation: not run"), "{text}");
    assert_eq!(confirm_dirs(&p), 0);
    let (code, text) = run(&p, &["run", &s, "--confirm"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("--confirm re-measures what a verdict found"),
        "{text}"
    );
}
