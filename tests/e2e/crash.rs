//! Crash safety (issue 9): a `ladder run` killed with SIGKILL (no handler, nothing flushed on the
//! way out) early in a step, between steps and during the last step leaves a run directory whose
//! records are on disk and parseable up to about the last second, which `ladder summarize`,
//! `ladder diff` and `ladder report` read and say is incomplete, naming where it stopped.
//!
//! An external `ladder sim` tells which requests it finished (`/sim/truth`), so the test
//! checks "every request the server finished, once on disk, survives the kill" without guessing
//! at timing; the run directory's own `meta.json` tells when a step has ended.

use crate::support::process::{
    ladder_cmd, request_ids_on_disk, stderr_lines, wait_for_line, wait_until,
};
use crate::support::{start_sim, url_scenario, Project, Sim};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::mpsc::Receiver;

/// `ladder sim` at about 60 ms per request.
fn sim() -> Sim {
    start_sim(&["ttft=20ms", "tpot=2ms", "tpot_jitter=0", "output_tokens=20"])
}

/// Request ids the server finished (status 200, last token sent).
fn finished_ids(sim: &Sim) -> BTreeSet<String> {
    sim.truth()
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["status"] == 200 && r["last_token_ms"].is_number())
        .filter_map(|r| r["request_id"].as_str().map(str::to_string))
        .collect()
}

fn run_dir(p: &Project) -> Option<PathBuf> {
    p.run_dirs("crash").into_iter().next()
}

fn finished_steps(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("meta.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|m| m["steps"].as_array().map(Vec::len))
        .unwrap_or(0)
}

fn kill9(mut child: Child) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

/// Runs the ladder [2, 4] (6 s steps, `pause` between them) and kills it at `when`; then checks
/// what is on disk. `when` returns once the moment has come, told by what the run prints
/// (`progress: … step 2/2 … started`), writes (meta.json) and the server has finished. The kill
/// comes once every request the server had finished by then is in requests.csv (the run
/// appends at least every second: `store::appender`'s paused-clock test), so what is checked
/// after it is that those rows survived the kill whole, not how fast this machine is.
fn kill_and_check(
    pause: &str,
    when: impl FnOnce(&Project, &Sim, &Receiver<String>),
    stopped: &str,
) {
    let p = Project::new();
    let sim = sim();
    let load = format!("  ladder: [2, 4]\n  duration: 6s\n  pause_between_steps: {pause}");
    let yaml = url_scenario("crash", &sim.base_url, &load, 20);
    let f = p.scenario("crash", &yaml);
    let mut child = ladder_cmd(&p).arg("run").arg(&f).spawn().unwrap();
    let lines = stderr_lines(&mut child);
    when(&p, &sim, &lines);
    let before = finished_ids(&sim);
    assert!(!before.is_empty());
    let dir = run_dir(&p).expect("a run directory");
    wait_until("the finished requests in requests.csv", || {
        let on_disk: BTreeSet<String> = request_ids_on_disk(&dir).into_iter().collect();
        before.is_subset(&on_disk)
    });
    kill9(child);

    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["complete"], Value::Bool(false), "{meta}");
    // After the kill, every one of them is still there in a parseable row (a torn last row is
    // allowed: readers drop it).
    let on_disk: BTreeSet<String> = request_ids_on_disk(&dir).into_iter().collect();
    let missing: Vec<&String> = before.difference(&on_disk).collect();
    assert!(
        missing.is_empty(),
        "{} of {} finished requests missing: {missing:?}",
        missing.len(),
        before.len()
    );

    let out = p.ladder().arg("summarize").arg(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("incomplete run"), "{stderr}");
    assert!(stderr.contains(stopped), "want `{stopped}` in: {stderr}");
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(summary.lines().count() >= 2, "{summary}");
    assert!(dir.join("findings.json").is_file());

    let out = p.ladder().arg("diff").arg(&dir).arg(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The same data on both sides: no regression, so incomplete, exit 1 (never a pass).
    assert_eq!(
        out.status.code(),
        Some(1),
        "diff of a killed run: {:?} {stderr}",
        out.status
    );
    assert!(stderr.contains("incomplete run"), "{stderr}");
    // The verdict itself says so, naming where the run stopped (issue 10 §2).
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("ladder diff: INCOMPLETE"), "{stdout}");
    let warning = stdout
        .lines()
        .find(|l| l.starts_with("warning: the new run"))
        .unwrap_or_else(|| panic!("no warning in the diff:\n{stdout}"));
    assert!(warning.contains("killed before it finished"), "{warning}");
    assert!(warning.contains(stopped), "want `{stopped}` in: {warning}");

    let html = p.path().join("report.html");
    let out = p
        .ladder()
        .arg("report")
        .arg(&dir)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("incomplete run"), "{stderr}");
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("Incomplete run"));
}

#[test]
fn sigkill_early_in_a_step() {
    kill_and_check(
        "0s",
        |_, sim, _| wait_until("3 finished requests", || finished_ids(sim).len() >= 3),
        "stopped in step 1 of 2",
    );
}

#[test]
fn sigkill_between_steps() {
    kill_and_check(
        "60s",
        |p, _, _| {
            wait_until("step 1 to end", || {
                run_dir(p).is_some_and(|d| finished_steps(&d) >= 1)
            })
        },
        "stopped between steps 1 and 2 of 2",
    );
}

#[test]
fn sigkill_in_the_last_step() {
    kill_and_check(
        "0s",
        |_, sim, lines| {
            wait_for_line(lines, "step 2/2");
            // Some requests of step 2 done, so the kill lands inside it.
            let before = finished_ids(sim).len();
            wait_until("3 requests of step 2", || {
                finished_ids(sim).len() >= before + 3
            });
        },
        "stopped in step 2 of 2",
    );
}

/// Issue 19 §9: a run killed before its first record reached the disk reads as INCOMPLETE
/// (exit 1) in `summarize` and `diff`, like any other killed run, not as bad input (exit 2).
#[test]
fn sigkill_before_the_first_record_is_incomplete() {
    let p = Project::new();
    let yaml = crate::support::sim_scenario(
        "crash",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 4\n    faults: {stall: 1.0, stall_for: 60s}",
        "  ladder: [2]\n  requests_per_step: 4\n  warmup_requests: 0",
        4,
    );
    let f = p.scenario("crash", &yaml);
    let child = ladder_cmd(&p).arg("run").arg(&f).spawn().unwrap();
    wait_until("the run directory", || {
        run_dir(&p).is_some_and(|d| d.join("requests.csv").is_file())
    });
    kill9(child);
    let dir = run_dir(&p).unwrap();
    let requests = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    assert_eq!(requests.lines().count(), 1, "only the header: {requests}");
    for args in [vec!["summarize"], vec!["diff"]] {
        let mut cmd = ladder_cmd(&p);
        cmd.args(&args).arg(&dir);
        if args == ["diff"] {
            cmd.arg(&dir);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("is INCOMPLETE"), "{args:?}: {stderr}");
    }
}
