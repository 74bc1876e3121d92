//! Ctrl-C and SIGTERM (docs/running.md, "Signals"): the first signal stops new requests, lets
//! in-flight ones finish for a grace period, cancels the rest as `interrupted`, writes every
//! file and exits 1; signals arriving together (a process group's stop) are one stop; a later
//! one cancels in-flight requests at once and still writes everything.
//!
//! The tests wait for observable facts before signalling (`support::process`): the handlers in
//! /proc/PID/status, the server's own counters, the lines on stderr, the rows in requests.csv.
//! One pause remains, where the pause is the point: a deliberate second Ctrl-C comes more than
//! a second after the first (signals within a second of each other are one stop).

use crate::support::process::{
    ladder_cmd, request_ids_on_disk, rest_of, stderr_lines, wait_for_line, wait_until,
};
use crate::support::{files_under, read_csv, sim_scenario, start_sim, url_scenario, Project};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{sig} failed");
}

/// Waits until the process has installed handlers for SIGINT and SIGTERM (`SigCgt` in
/// /proc/PID/status). `ladder` installs them from a spawned task, so its banner on stderr does
/// not prove they are in place yet; a signal before that would kill it outright.
fn wait_for_handlers(child: &Child) {
    const WANT: u64 = (1 << (2 - 1)) | (1 << (15 - 1));
    let path = format!("/proc/{}/status", child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let caught = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("SigCgt:"))
                    .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            })
            .unwrap_or(0);
        if caught & WANT == WANT {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "ladder never installed its SIGINT/SIGTERM handlers (SigCgt {caught:x})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for the child to exit (killing it after `limit`); returns its status and stdout.
fn wait_exit(mut child: Child, limit: Duration) -> (ExitStatus, String, Duration) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut out = String::new();
            if let Some(mut s) = child.stdout.take() {
                let _ = s.read_to_string(&mut out);
            }
            return (status, out, t0.elapsed());
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ladder did not exit within {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn request_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    rows.into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect()
}

/// Every file under `root` parses as what its extension says, and no temp file is left.
fn all_files_parse(root: &Path) -> usize {
    let files = files_under(root);
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            !name.contains(".tmp") && !name.ends_with('~') && !name.starts_with(".tmp"),
            "temp file left behind: {}",
            f.display()
        );
        let text = std::fs::read_to_string(f).unwrap();
        match f.extension().and_then(|e| e.to_str()) {
            Some("csv") => {
                let mut rdr = csv::Reader::from_reader(text.as_bytes());
                let width = rdr.headers().expect("csv header").len();
                for r in rdr.records() {
                    let r = r.unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                    assert_eq!(r.len(), width, "{}: ragged row", f.display());
                }
            }
            Some("json") => {
                serde_json::from_str::<Value>(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            }
            Some("yaml") => {
                serde_yaml::from_str::<serde_yaml::Value>(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            }
            _ => {}
        }
    }
    files.len()
}

/// SIGINT in the middle of a step against an external simulator whose counters tell when
/// requests have completed and one is stalled in flight. Everything the server completed is in
/// requests.csv as `ok` with full timings; the stalled ones are `interrupted`.
#[test]
fn sigint_mid_step_keeps_every_completed_request() {
    let p = Project::new();
    // ~120 ms per request; 10% stall for 30 s (longer than the 2 s grace).
    let sim = start_sim(&[
        "ttft=20ms",
        "tpot=5ms",
        "tpot_jitter=0",
        "output_tokens=20",
        "seed=3",
        "faults.stall=0.1",
        "faults.stall_for=30s",
    ]);
    let yaml = url_scenario(
        "intr",
        &sim.base_url,
        "  ladder: [4]\n  duration: 60s\n  warmup_requests: 0",
        20,
    );
    let f = p.scenario("intr", &yaml);
    let mut child = ladder_cmd(&p).arg("run").arg(&f).spawn().unwrap();
    let err_rx = stderr_lines(&mut child);

    // Wait until the server has completed some requests and holds at least one stalled.
    let completed = || {
        sim.truth()
            .as_array()
            .map_or(0, |t| t.iter().filter(|r| r["status"] == 200).count())
    };
    let stalls = || sim.stats()["faults"]["stall"].as_u64().unwrap_or(0);
    let mut completed_before = 0;
    wait_until("3 requests done and one stalled", || {
        completed_before = completed();
        completed_before >= 3 && stalls() >= 1
    });
    wait_for_handlers(&child);
    signal(&child, "INT");
    let (status, stdout, _) = wait_exit(child, Duration::from_secs(30));
    let stderr: Vec<String> = rest_of(&err_rx);
    assert_eq!(status.code(), Some(1), "stderr: {stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("partial results written to")),
        "{stderr:?}"
    );
    assert!(
        stdout.contains("sim-model"),
        "results table printed: {stdout}"
    );

    let dirs = p.run_dirs("intr");
    assert_eq!(dirs.len(), 1, "one run directory");
    let dir = &dirs[0];
    assert!(all_files_parse(p.path()) >= 6);
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["interrupted"], Value::Bool(true));
    serde_json::from_str::<Value>(&std::fs::read_to_string(dir.join("findings.json")).unwrap())
        .unwrap();

    let rows = request_rows(dir);
    let stalls = stalls();
    let mut ok_ids = BTreeSet::new();
    let mut interrupted = 0;
    for r in &rows {
        match (r["status"].as_str(), r["error_class"].as_str()) {
            ("ok", "") => {
                for c in ["ttft_ms", "tpot_ms", "e2e_ms", "output_tokens"] {
                    assert!(!r[c].is_empty(), "ok row without {c}: {r:?}");
                }
                assert_eq!(r["output_tokens"], "20", "{r:?}");
                ok_ids.insert(r["request_id"].clone());
            }
            ("error", "interrupted") => interrupted += 1,
            other => panic!("unexpected outcome {other:?}: {r:?}"),
        }
    }
    // Each stalled request was in flight past the grace period: cancelled, and recorded.
    assert_eq!(interrupted, stalls, "stalled requests vs interrupted rows");
    // Every request the server finished normally is in requests.csv as ok, and vice versa.
    let truth = sim.truth();
    let served_ok: BTreeSet<String> = truth
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == 200 && t["fault"].is_null())
        .map(|t| t["request_id"].as_str().unwrap().to_string())
        .collect();
    assert!(served_ok.len() >= completed_before);
    assert_eq!(ok_ids, served_ok, "completed requests lost or invented");
    // Totals agree with summary.csv.
    let (h, srows) = read_csv(&dir.join("summary.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    assert_eq!(srows.len(), 1);
    assert_eq!(srows[0][c("attempted")], rows.len().to_string());
    assert_eq!(srows[0][c("succeeded")], ok_ids.len().to_string());
    assert_eq!(srows[0][c("failed")], interrupted.to_string());

    // `ladder diff` of the interrupted run warns, in the JSON too, with the duration step's
    // planned count estimated from its rate (issue 10 §2).
    let out = ladder_cmd(&p)
        .args(["diff", "--no-step-summary", "--format", "json"])
        .arg(dir)
        .arg(dir)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    // Never a pass (docs/gate.md: an incomplete run is never a pass): the same data on both sides, so incomplete, exit 1.
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert_eq!(json["outcome"], "incomplete", "{json}");
    let warnings = json["warnings"].as_array().expect("warnings");
    assert_eq!(
        warnings.len(),
        2,
        "both sides are the interrupted run: {json}"
    );
    let w = warnings[1].as_str().unwrap();
    assert!(w.starts_with("the new run"), "{w}");
    assert!(w.contains("was interrupted by SIGINT"), "{w}");
    assert!(w.contains("stopped in step 1 of 1 (at 4 streams)"), "{w}");
    assert!(w.contains(&format!("has {} of about", rows.len())), "{w}");
}

/// SIGTERM is handled like Ctrl-C: in-flight (stalled) requests are cancelled after the grace
/// period and recorded as `interrupted`, the run is marked interrupted, exit 1.
#[test]
fn sigterm_cancels_in_flight_requests_as_interrupted() {
    let p = Project::new();
    let yaml = sim_scenario(
        "term",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 8\n    faults: {stall: 1.0, stall_for: 30s}",
        "  ladder: [2]\n  duration: 60s\n  warmup_requests: 0",
        8,
    );
    let f = p.scenario("term", &yaml);
    let mut child = ladder_cmd(&p).arg("run").arg(&f).spawn().unwrap();
    let err_rx = stderr_lines(&mut child);
    wait_for_line(&err_rx, "ladder: term");
    wait_for_handlers(&child);
    signal(&child, "TERM");
    let (status, _, _) = wait_exit(child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(1));
    let dir = &p.run_dirs("term")[0];
    all_files_parse(p.path());
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["interrupted"], Value::Bool(true));
    let rows = request_rows(dir);
    // The two workers' first requests may not have reached the server yet when the signal
    // came; any request that was started is recorded, and all of them stalled.
    assert!(
        rows.len() <= 2,
        "no request starts after the signal: {rows:?}"
    );
    for r in &rows {
        assert_eq!(r["error_class"], "interrupted", "{r:?}");
        assert!(r["error_message"].contains("interrupt"), "{r:?}");
    }
}

/// A second, deliberate SIGINT (more than a second after the first) cancels the in-flight
/// requests at once instead of waiting out the grace period, and still everything collected is
/// written: every file parses, no temp file is left, and the existing baseline is untouched.
#[test]
fn second_sigint_cancels_at_once_and_still_writes_everything() {
    let p = Project::new();
    const LOAD: &str = "  ladder: [2]\n  requests_per_step: 4\n  warmup_requests: 0";
    let yaml = sim_scenario(
        "twice",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 4",
        LOAD,
        4,
    );
    let f = p.scenario("twice", &yaml);
    // A baseline from an earlier, complete run.
    let mut first = ladder_cmd(&p);
    let out = first
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let baseline = p.path().join("baselines/twice.csv");
    let sidecar = p.path().join("baselines/twice.requests.csv");
    let before = (
        std::fs::read(&baseline).unwrap(),
        std::fs::read(&sidecar).unwrap(),
    );

    // Now a run that cannot finish: the same scenario against an external simulator on which
    // every stream stalls for 30 s, so the test can see the requests in flight.
    let sim = start_sim(&[
        "ttft=5ms",
        "tpot=1ms",
        "output_tokens=8",
        "faults.stall=1",
        "faults.stall_for=30s",
    ]);
    let f = p.scenario("twice", &url_scenario("twice", &sim.base_url, LOAD, 4));
    let mut child = ladder_cmd(&p)
        .args(["run", "--save-baseline"])
        .arg(&f)
        // A grace period far longer than a loaded machine's delays: only the second signal can
        // end the run before it (with the default 2 s, the grace sometimes ran out first).
        .env("LADDER_STOP_GRACE", "20s")
        // No window for signals that arrive together (the default is 1 s, see
        // `group_stop_signals_...`): the second signal counts as deliberate as soon as it is
        // sent, with no sleep to step past the window.
        .env("LADDER_STOP_WINDOW", "0s")
        .spawn()
        .unwrap();
    let err_rx = stderr_lines(&mut child);
    wait_for_line(&err_rx, "ladder: twice");
    wait_for_handlers(&child);
    // Requests must be in flight when the first signal comes: signalled before the step's
    // requests went out, the run had nothing to wait for and ended before the second signal
    // (what failed under load). The server says when both streams' requests are stalled.
    wait_until("both streams stalled at the server", || {
        sim.stats()["faults"]["stall"].as_u64().unwrap_or(0) >= 2
    });
    let first_sent = Instant::now();
    signal(&child, "INT");
    wait_for_line(&err_rx, "interrupted:");
    signal(&child, "INT");
    let (status, _, _) = wait_exit(child, Duration::from_secs(40));
    let ended_after = first_sent.elapsed();
    let stderr: Vec<String> = rest_of(&err_rx);
    assert_eq!(status.code(), Some(1), "{stderr:?}");
    assert!(
        stderr.iter().any(|l| l.contains("interrupted again")),
        "the second Ctrl-C was acted on: {stderr:?}"
    );
    // In-flight requests stall for 30 s and the grace is 20 s: the run ended early only
    // because the second signal cancelled them.
    assert!(
        ended_after < Duration::from_secs(15),
        "the second Ctrl-C cut the 20 s grace short: ended after {ended_after:?}"
    );
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("partial results written to")),
        "{stderr:?}"
    );
    let after = (
        std::fs::read(&baseline).unwrap(),
        std::fs::read(&sidecar).unwrap(),
    );
    assert!(before == after, "the baseline changed");
    let dirs = p.run_dirs("twice");
    let dir = dirs.iter().max().unwrap();
    for f in ["summary.csv", "findings.json", "meta.json", "requests.csv"] {
        assert!(dir.join(f).is_file(), "{f} missing after the second Ctrl-C");
    }
    assert!(all_files_parse(p.path()) >= 2);
}

/// Issue 19 §1: GNU `timeout`, CI runners and container stops signal the whole process group,
/// so ladder gets SIGTERM from more than one source at once (and SIGINT and SIGTERM close
/// together). That is one stop: at every moment tried, the JUnit document is complete on
/// stdout and summary.csv and findings.json are written.
#[cfg(unix)]
#[test]
fn group_stop_signals_arriving_together_are_one_stop() {
    use std::os::unix::process::CommandExt;
    let p = Project::new();
    let yaml = sim_scenario(
        "group",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 4",
        "  ladder: [2, 4]\n  requests_per_step: 40\n  warmup_requests: 0",
        4,
    );
    let f = p.scenario("group", &yaml);
    let out = ladder_cmd(&p)
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let baseline = p.path().join("baselines/group.csv");
    // At once after the banner (first requests not yet out), as step 1 starts, and once its
    // first records are on disk (about a second in, some requests stalled in flight).
    for moment in ["at once", "step started", "records on disk"] {
        let earlier = p.run_dirs("group");
        let mut cmd = ladder_cmd(&p);
        cmd.args(["run", "--no-step-summary", "--format", "junit", "--against"])
            .arg(&baseline)
            // A third of the requests stall past the grace period, so some are in flight.
            .args([
                "--sim-set",
                "faults.stall=0.3",
                "--sim-set",
                "faults.stall_for=30s",
            ])
            .arg(&f)
            .process_group(0);
        let mut child = cmd.spawn().unwrap();
        let err_rx = stderr_lines(&mut child);
        wait_for_line(&err_rx, "ladder: group");
        wait_for_handlers(&child);
        match moment {
            "step started" => drop(wait_for_line(&err_rx, "step 1/2")),
            "records on disk" => wait_until("records in requests.csv", || {
                p.run_dirs("group")
                    .iter()
                    .filter(|d| !earlier.contains(d))
                    .any(|d| !request_ids_on_disk(d).is_empty())
            }),
            _ => {}
        }
        // As `timeout` does: the child first, then its whole group; here also SIGINT. The
        // first has been acted on (its message is out) before the others are sent.
        signal(&child, "TERM");
        wait_for_line(&err_rx, "interrupted:");
        let group = Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", child.id())])
            .status()
            .expect("run kill");
        assert!(group.success(), "kill the process group");
        signal(&child, "INT");
        let (status, stdout, _) = wait_exit(child, Duration::from_secs(30));
        let stderr: Vec<String> = rest_of(&err_rx);
        assert_eq!(status.code(), Some(1), "at {moment}: {stderr:?}");
        assert!(
            !stderr
                .iter()
                .any(|l| l.contains("interrupted again") || l.contains("exiting now")),
            "signals arriving together taken as a second stop at {moment}: {stderr:?}"
        );
        let doc = roxmltree::Document::parse(&stdout)
            .unwrap_or_else(|e| panic!("at {moment}: {e}: {stdout:?} {stderr:?}"));
        assert!(
            doc.descendants()
                .any(|n| n.has_tag_name("failure") && n.attribute("type") == Some("incomplete")),
            "at {moment}: {stdout}"
        );
        let dir = p.run_dirs("group").into_iter().max().unwrap();
        for f in ["summary.csv", "findings.json", "meta.json", "requests.csv"] {
            assert!(dir.join(f).is_file(), "at {moment}: {f} missing");
        }
        all_files_parse(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// An interrupted `run --against` in a machine format still prints its one document on stdout
/// (so `> ladder-junit.xml` is never empty): judged on what was collected, outcome incomplete,
/// exit 1, as `ladder diff` says of the same data.
#[test]
fn interrupted_gate_still_emits_the_document() {
    let p = Project::new();
    let yaml = sim_scenario(
        "gate",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 4",
        "  ladder: [2]\n  requests_per_step: 4\n  warmup_requests: 0",
        4,
    );
    let f = p.scenario("gate", &yaml);
    let out = ladder_cmd(&p)
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let baseline = p.path().join("baselines/gate.csv");
    for format in ["json", "junit", "markdown"] {
        let mut child = ladder_cmd(&p)
            .args(["run", "--no-step-summary", "--format", format, "--against"])
            .arg(&baseline)
            .args([
                "--sim-set",
                "faults.stall=1",
                "--sim-set",
                "faults.stall_for=30s",
            ])
            .arg(&f)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let err_rx = stderr_lines(&mut child);
        wait_for_line(&err_rx, "ladder: gate");
        wait_for_handlers(&child);
        signal(&child, "INT");
        let (status, stdout, _) = wait_exit(child, Duration::from_secs(30));
        assert_eq!(status.code(), Some(1), "{format}: {stdout}");
        match format {
            "json" => {
                let json: Value =
                    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
                assert_eq!(json["outcome"], "incomplete", "{json}");
                assert_eq!(json["exit_code"], 1, "{json}");
                let why = json["incomplete"][0].as_str().unwrap_or_default();
                assert!(why.contains("was interrupted"), "{json}");
                // The warning and the advice are the ones `ladder diff` gives of the same run.
                let warning = json["warnings"][0].as_str().unwrap_or_default();
                assert!(
                    warning.contains("is an incomplete run: it was interrupted"),
                    "{json}"
                );
                let dir = p.run_dirs("gate").into_iter().max().unwrap();
                // As the run named it (relative to the project), so the labels match too.
                let dir = dir.strip_prefix(p.path()).unwrap();
                let out = ladder_cmd(&p)
                    .args(["diff", "--format", "json"])
                    .arg(&baseline)
                    .arg(dir)
                    .output()
                    .unwrap();
                if out.stdout.is_empty() {
                    // Stopped before the run wrote its first record: nothing to compare, and
                    // diff says so with the same exit code. (Once the files exist, even with no
                    // request ended, diff judges them and gives the run's document.)
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    assert_eq!(out.status.code(), Some(1), "{stderr}");
                    assert!(stderr.contains("is INCOMPLETE"), "{stderr}");
                    continue;
                }
                assert_eq!(out.status.code(), Some(1), "{out:?}");
                let diff: Value =
                    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
                for key in ["outcome", "exit_code", "incomplete", "warnings", "counts"] {
                    assert_eq!(json[key], diff[key], "{key}: run {json} diff {diff}");
                }
            }
            "junit" => {
                let doc = roxmltree::Document::parse(&stdout)
                    .unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
                assert!(
                    doc.descendants()
                        .any(|n| n.has_tag_name("failure")
                            && n.attribute("type") == Some("incomplete")),
                    "{stdout}"
                );
            }
            _ => assert!(stdout.starts_with("## ladder diff: INCOMPLETE"), "{stdout}"),
        }
    }
}
