//! Crash safety (issue 9): a `ladder run` killed with SIGKILL (no handler, nothing flushed on the
//! way out) early in a step, between steps and during the last step leaves a run directory whose
//! records are on disk and parseable up to about the last second, which `ladder summarize`,
//! `ladder diff` and `ladder report` read and say is incomplete, naming where it stopped.
//!
//! An external `ladder sim` tells which requests it finished and when (`/sim/truth`), so the test
//! checks "every request the server finished well before the kill is in requests.csv" without
//! guessing at timing; the run directory's own `meta.json` tells when a step has ended.

use crate::interrupt::{get_json, ladder_cmd, stderr_lines, wait_for_line, SimProcess};
use crate::support::Project;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// More than the one-second flush interval, with room for a loaded machine: the window the
/// product promises ("loses at most about the last second"), not a guess at where the run is.
const SETTLE: Duration = Duration::from_millis(2500);

/// Starts `ladder sim` (about 60 ms per request) and returns it with its base URL and address.
fn start_sim() -> (SimProcess, String, String) {
    let mut sim = Command::new(env!("CARGO_BIN_EXE_ladder"));
    sim.args(["sim", "--port", "0", "--bind", "127.0.0.1"])
        .args([
            "--set",
            "ttft=20ms",
            "--set",
            "tpot=2ms",
            "--set",
            "tpot_jitter=0",
        ])
        .args(["--set", "output_tokens=20"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut sim = SimProcess(sim.spawn().expect("start ladder sim"));
    let mut first = String::new();
    BufReader::new(sim.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let base_url = first.trim().to_string();
    let addr = base_url
        .strip_prefix("http://")
        .and_then(|r| r.strip_suffix("/v1"))
        .unwrap_or_else(|| panic!("unexpected base URL `{base_url}`"))
        .to_string();
    (sim, base_url, addr)
}

/// Request ids the server finished (status 200, last token sent).
fn finished_ids(addr: &str) -> BTreeSet<String> {
    get_json(addr, "/sim/truth")
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["status"] == 200 && r["last_token_ms"].is_number())
        .filter_map(|r| r["request_id"].as_str().map(str::to_string))
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
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
/// (`progress: … step 2/2 … started`), writes (meta.json) and the server has finished.
fn kill_and_check(
    pause: &str,
    when: impl FnOnce(&Project, &str, &Receiver<String>),
    stopped: &str,
) {
    let p = Project::new();
    let (_sim, base_url, addr) = start_sim();
    let yaml = format!(
        "name: crash\ntarget:\n  api: openai-chat\n  base_url: {base_url}\n  models: [sim-model]\n\
         request:\n  prompt_file: prompts/p.txt\n  max_tokens: 20\nload:\n  ladder: [2, 4]\n  \
         duration: 6s\n  pause_between_steps: {pause}\n"
    );
    let f = p.scenario("crash", &yaml);
    let mut child = ladder_cmd(&p).arg("run").arg(&f).spawn().unwrap();
    let lines = stderr_lines(&mut child);
    when(&p, &addr, &lines);
    let before = finished_ids(&addr);
    std::thread::sleep(SETTLE);
    kill9(child);

    let dir = run_dir(&p).expect("a run directory");
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["complete"], Value::Bool(false), "{meta}");
    // Every request the server finished SETTLE before the kill is on disk, in a parseable row
    // (a torn last row is allowed: readers drop it).
    let text = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    let mut rdr = csv::Reader::from_reader(whole.as_bytes());
    let id_col = rdr
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "request_id");
    let on_disk: BTreeSet<String> = rdr
        .records()
        .map(|r| r.expect("parseable row")[id_col.unwrap()].to_string())
        .collect();
    let missing: Vec<&String> = before.difference(&on_disk).collect();
    assert!(
        missing.is_empty(),
        "{} of {} finished requests missing: {missing:?}",
        missing.len(),
        before.len()
    );
    assert!(!before.is_empty());

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
        |_, addr, _| wait_until("3 finished requests", || finished_ids(addr).len() >= 3),
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
        |_, addr, lines| {
            wait_for_line(lines, "step 2/2");
            // Some requests of step 2 done, so the kill lands inside it.
            let before = finished_ids(addr).len();
            wait_until("3 requests of step 2", || {
                finished_ids(addr).len() >= before + 3
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
