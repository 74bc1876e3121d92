//! `ladder logs` as a user runs it: a run's own requests.csv read back as a production log finds
//! the run's knee, and the written run directory works with `diff`, `plan` and `report`; a
//! synthetic day of traffic through a concurrency cap of 64 tells the incident in one sentence
//! at the right level; clock skew and a bad mapping are said, not hidden.

use crate::support::{only_dir, sim_scenario, Project};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_runs_requests_read_back_as_a_log_find_the_same_knee() {
    let p = Project::new();
    let yaml = sim_scenario(
        "capped",
        "    ttft: 60ms\n    tpot: 8ms\n    tpot_jitter: 0\n    output_tokens: 20\n    concurrency_cap: 8\n    seed: 7",
        "  ladder: [2, 4, 16]\n  requests_per_step: 80\n  warmup_requests: 4",
        20,
    ) + "slo:\n  ttft: 1s\n";
    let f = p.scenario("capped", &yaml);
    let run = p
        .ladder()
        .args(["--quiet", "run"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let run_dir = only_dir(&p.path().join("runs/capped"));
    let logs = p
        .ladder()
        .args(["logs", "--out", "prod", "--scenario"])
        .arg(&f)
        .arg(run_dir.join("requests.csv"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&logs.stdout);
    assert!(
        logs.status.success(),
        "{}",
        String::from_utf8_lossy(&logs.stderr)
    );
    let log_dir = only_dir(&p.path().join("prod/capped"));
    let (a, b) = (
        &json(&run_dir.join("findings.json"))[0]["knee"],
        &json(&log_dir.join("findings.json"))[0]["knee"],
    );
    assert_eq!(a["status"], "knee", "the run has a knee: {a}");
    for field in ["status", "kind", "max_clean_concurrency", "concurrency"] {
        assert_eq!(a[field], b[field], "{field}: run {a} vs log {b}");
    }
    let (ca, cb) = (
        a["estimated_cap"].as_f64().unwrap(),
        b["estimated_cap"].as_f64().unwrap(),
    );
    assert!((ca - cb).abs() <= 2.0, "caps {ca} vs {cb}");
    assert!(
        stdout.contains("once more than 4 were in flight"),
        "{stdout}"
    );
    assert!(
        stdout.contains("◀ more than 4 in flight and TTFT rose from here"),
        "{stdout}"
    );
    for file in [
        "requests.csv",
        "summary.csv",
        "meta.json",
        "timeline.csv",
        "scenario.yaml",
    ] {
        assert!(log_dir.join(file).is_file(), "{file}");
    }
    // The production run reads like any run: diff against the load test, plan, report.
    let diff = p
        .ladder()
        .args(["diff"])
        .arg(&run_dir)
        .arg(&log_dir)
        .output()
        .unwrap();
    let code = diff.status.code().unwrap();
    assert!(
        matches!(code, 0 | 3 | 4),
        "diff exit {code}: {}",
        String::from_utf8_lossy(&diff.stderr)
    );
    let plan = p
        .ladder()
        .args(["plan", "--rps", "5"])
        .arg(&log_dir)
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let report = p
        .ladder()
        .args(["--quiet", "report", "-o", "r.html"])
        .arg(&log_dir)
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
}

/// A day's incident as a gateway would log it: users ramp from 30 to 90 concurrent requests
/// between 14:02 and 14:40 against a backend that serves 64 at a time (FIFO beyond that), each
/// request 600 ms to its first token and 100 tokens at 20 ms.
fn incident_csv() -> String {
    const T0_MS: f64 = 1_772_460_120_000.0; // 2026-03-02T14:02:00Z
    let span_ms = 38.0 * 60_000.0;
    let (ttft, e2e) = (600.0, 600.0 + 99.0 * 20.0);
    let mut slots = vec![0.0f64; 64];
    // Next start of each user: user k joins when the ramp reaches k + 1 users.
    let mut users: Vec<f64> = (0..90)
        .map(|k| {
            if k < 30 {
                k as f64 * 7.0
            } else {
                (k + 1 - 30) as f64 / 60.0 * span_ms
            }
        })
        .collect();
    let mut out = String::from("ts,ttfb,duration,model,tokens\n");
    loop {
        let (u, &start) = users
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        if start > span_ms {
            break;
        }
        let (slot, &free) = slots
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        let served = start.max(free);
        let end = served + e2e;
        slots[slot] = end;
        users[u] = end + 1.0;
        let t = T0_MS + start;
        let secs = (t / 1000.0) as i64;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let _ = writeln!(
            out,
            "2026-03-02T{h:02}:{m:02}:{s:02}.{:03}Z,{:.0},{:.3},chat-model,100",
            (t % 1000.0) as i64,
            served - start + ttft,
            (end - start) / 1000.0
        );
    }
    out
}

#[test]
fn a_synthetic_day_through_a_cap_of_64_tells_the_incident_at_its_level() {
    let p = Project::new();
    std::fs::write(p.path().join("gateway.csv"), incident_csv()).unwrap();
    let out = p
        .ladder()
        .args([
            "logs",
            "gateway.csv",
            "--map",
            "start=ts,ttft_ms=ttfb,e2e_s=duration,output_tokens=tokens",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("chat-model: Incident: 14:02–14:4"))
        .unwrap_or_else(|| panic!("no incident sentence: {stdout}"));
    let level = |after: &str| -> u32 {
        let rest = &line[line
            .find(after)
            .unwrap_or_else(|| panic!("{after}: {line}"))
            + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        line.contains("in flight 30 → 9") || line.contains("in flight 30 → 8"),
        "{line}"
    );
    let clean = level("once more than ");
    assert!(
        (56..=72).contains(&clean),
        "the knee's level near 64: {line}"
    );
    let cap = level("queueing at a concurrency limit near ");
    assert!((56..=72).contains(&cap), "the cap near 64: {line}");
    assert!(line.contains("TPOT flat"), "{line}");
    assert!(line.contains("TTFT P90 0.6 → "), "{line}");
    // A log's levels are not steps a client held: no note that the load was lighter.
    assert!(!stdout.contains("in flight on average"), "{stdout}");
    let dir = only_dir(&p.path().join("runs/logs"));
    let timeline = std::fs::read_to_string(dir.join("timeline.csv")).unwrap();
    let header: Vec<&str> = timeline.lines().next().unwrap().split(',').collect();
    let marked = |column: &str| {
        let i = header.iter().position(|h| *h == column).unwrap();
        timeline
            .lines()
            .skip(1)
            .filter(|l| l.split(',').nth(i) == Some("true"))
            .count()
    };
    assert_eq!(marked("knee_crossed"), 1, "one minute marks the crossing");
    assert_eq!(marked("ttft_rose"), 1, "one minute marks the onset");
    assert!(header.contains(&"needed_in_flight"), "{header:?}");
    // The incident's capacity over time, and `plan` on the log's run with no target: the limit
    // that would have kept every minute unqueued, and the minutes over the cap.
    assert!(
        stdout.contains("chat-model: Capacity over time: without queueing, the peak minute"),
        "{stdout}"
    );
    let plan = p.ladder().arg("plan").arg(&dir).output().unwrap();
    let words = String::from_utf8_lossy(&plan.stdout);
    assert!(
        plan.status.success(),
        "{}",
        format!(
            "{:?} {}{}",
            plan.status,
            String::from_utf8_lossy(&plan.stderr),
            words
        )
    );
    assert!(
        words.contains("a hosted API: ask for a concurrency limit of at least"),
        "{words}"
    );
    assert!(words.contains("minutes were over it"), "{words}");
    let plan = p
        .ladder()
        .arg("plan")
        .arg(&dir)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&plan.stdout).unwrap();
    let peak = doc[0]["peak_in_flight"].as_f64().unwrap();
    let cap = doc[0]["cap"].as_f64().unwrap();
    // The synthetic day peaks near 90 in flight against a cap near 64.
    assert!(
        peak > cap && doc[0]["minutes_over_cap"].as_u64().unwrap() > 0,
        "{doc}"
    );
    // The report draws what each minute needed against the cap.
    let html = p.path().join("log.html");
    let report = p
        .ladder()
        .arg("report")
        .arg(&dir)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let at = page
        .find("<h3>Capacity over time</h3>")
        .expect("the section");
    let section = &page[at..page[at..].find("</section>").unwrap() + at];
    assert!(
        section.contains("<svg") && section.contains("cap ≈ "),
        "{section}"
    );
    assert!(
        timeline.lines().count() > 38,
        "every minute: {}",
        timeline.lines().count()
    );
}

#[test]
fn clock_skew_is_reported_and_a_log_without_first_tokens_works_on_e2e() {
    let p = Project::new();
    let mut csv = String::from("start,end,model\n");
    for i in 0..200 {
        let s = 1_772_460_120.0 + f64::from(i) * 0.5;
        let _ = writeln!(csv, "{s:.3},{:.3},m", s + 1.2);
    }
    csv.push_str("1772460300.000,1772460299.000,m\n");
    std::fs::write(p.path().join("skewed.csv"), csv).unwrap();
    let out = p.ladder().args(["logs", "skewed.csv"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Clock skew: 1 request(s) end before they start"),
        "{stderr}"
    );
    assert!(stderr.contains("line(s) 202"), "{stderr}");
    assert!(stderr.contains("no first-token time"), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("E2E P90"),
        "E2E named"
    );

    let bad = p
        .ladder()
        .args(["logs", "skewed.csv", "--map", "begin=start"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`begin=start`"));
    let wrong = p
        .ladder()
        .args(["logs", "skewed.csv", "--map", "start=ts"])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&wrong.stderr);
    assert!(msg.contains("skewed.csv") && msg.contains("--map"), "{msg}");
    assert_eq!(
        std::fs::read_dir(p.path().join("runs/logs"))
            .unwrap()
            .count(),
        1,
        "nothing written on bad input"
    );
}
