//! `ladder run --confirm`: a verdict that regressed re-measures its steps (into a
//! `<run>-confirm` directory) and keeps a regression only when the rerun shows it too; the
//! budget bounds it; a pass reruns nothing; and it needs something to confirm.

use crate::support::process::{
    ladder_cmd, request_ids_on_disk, stderr_lines, wait_for_line, wait_until,
};
use crate::support::Project;
use std::io::Read;
use std::process::Child;
use std::time::{Duration, Instant};

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

fn sigint(child: &Child) {
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill -INT");
}

/// The child's exit code and stdout, once it exits (killed after a minute).
fn exit_of(mut child: Child) -> (i32, String) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut out = String::new();
            let _ = child.stdout.take().unwrap().read_to_string(&mut out);
            return (status.code().unwrap_or(-1), out);
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("ladder did not exit within a minute of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-C while confirming: a rerun cut short decides nothing (its steps hold fewer requests
/// than planned, or none), so the first verdict stands, unconfirmed, and the notes say so;
/// during the pause before it, nothing is rerun and no empty rerun directory is left.
#[test]
fn ctrl_c_while_confirming_keeps_the_first_verdict() {
    let p = Project::new();
    let s = scenario(&p);
    let (code, text) = run(&p, &["run", &s, "--quiet", "--save-baseline"]);
    assert_eq!(code, 0, "{text}");
    let args = |after: &'static str| {
        vec![
            "run".to_string(),
            s.clone(),
            "--no-color".into(),
            "--against".into(),
            "baselines/conf.csv".into(),
            "--confirm".into(),
            "--confirm-after".into(),
            after.into(),
            "--sim-set".into(),
            "ttft=100ms".into(),
        ]
    };
    // During the pause: it ends at once.
    let mut child = ladder_cmd(&p).args(args("10m")).spawn().unwrap();
    let rx = stderr_lines(&mut child);
    wait_for_line(&rx, "confirming: REGRESSION");
    sigint(&child);
    let (code, out) = exit_of(child);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("ladder diff: REGRESSION"), "{out}");
    assert!(
        out.contains(
            "confirmation: not run: the run was interrupted by SIGINT before the rerun started"
        ),
        "{out}"
    );
    assert_eq!(confirm_dirs(&p), 0, "{out}");
    // During the rerun, once it has written a request.
    let mut child = ladder_cmd(&p).args(args("0s")).spawn().unwrap();
    let rx = stderr_lines(&mut child);
    wait_for_line(&rx, "confirming: REGRESSION");
    let rerun = || {
        p.run_dirs("conf")
            .into_iter()
            .find(|d| d.to_string_lossy().ends_with("-confirm"))
    };
    wait_until("a request of the rerun on disk", || {
        rerun().is_some_and(|d| !request_ids_on_disk(&d).is_empty())
    });
    sigint(&child);
    let (code, out) = exit_of(child);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("ladder diff: REGRESSION"), "{out}");
    assert!(!out.contains("not confirmed on rerun"), "{out}");
    assert!(
        out.contains("confirmation: not decided: the rerun was interrupted by SIGINT after"),
        "{out}"
    );
    assert!(
        out.contains("the first verdict stands, unconfirmed"),
        "{out}"
    );
    let meta = std::fs::read_to_string(rerun().unwrap().join("meta.json")).unwrap();
    assert!(meta.contains("\"interrupted\": true"), "{meta}");
}

/// A verdict that decides nothing only because every latency check was skipped (too few
/// requests per step) has no step to re-measure, and says so, not that a budget was too small.
#[test]
fn nothing_to_rerun_is_not_called_over_budget() {
    let p = Project::new();
    let s = scenario(&p);
    let (code, text) = run(
        &p,
        &[
            "run",
            &s,
            "--no-color",
            "--ab",
            "m=n",
            "--requests-per-step",
            "10",
            "--confirm",
            "--confirm-after",
            "0s",
        ],
    );
    assert_eq!(code, 4, "{text}");
    assert!(
        text.contains("confirmation: not run: no step has a regressed or inconclusive check"),
        "{text}"
    );
    assert!(!text.contains("--confirm-budget"), "{text}");
    assert_eq!(confirm_dirs(&p), 0, "{text}");
}
