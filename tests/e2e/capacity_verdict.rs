//! Issue 46: the verdict says what happened, capacity first. A provider lowers its concurrency
//! cap (45 → 35, a 30/60/90 ladder): the diff must lead with both runs' cap estimates and the
//! shift at the step where requests now queue (TTFT P50 at 60 streams), gate on the cap (exit
//! 3, also with the throughput gate switched off), not report a throughput dip and a P90 that
//! was already a queued request. The same behind a gateway that sends only
//! `openai-processing-ms` (45 → 30), where the cause is inferred and said so. A scaled simulator
//! (milliseconds, not seconds) keeps each run to a few seconds.

use crate::hosted_gateway::processing_ms_gateway;
use crate::support::{sim_scenario, start_sim, url_scenario, Project};

pub(crate) const LOAD: &str =
    "  ladder: [30, 60, 90]\n  requests_per_step: 270\n  warmup_requests: 5";

/// The scaled simulator serving at most 45 requests at once (`--sim-set concurrency_cap=35`
/// lowers it); the report's test reuses it.
pub(crate) const SIM: &str = "    ttft: 30ms\n    tpot: 3ms\n    tpot_jitter: 0.05\n    output_tokens: 40\n    concurrency_cap: 45\n    seed: 7";

/// The two cap estimates of the headline "capacity: cap ≈ 47 → 37 streams (…".
fn caps(headline: &str) -> (f64, f64) {
    let rest = headline
        .split("cap ≈ ")
        .nth(1)
        .unwrap_or_else(|| panic!("no cap in `{headline}`"));
    let (b, rest) = rest.split_once(" → ").unwrap();
    let n = rest.split(' ').next().unwrap();
    (b.parse().unwrap(), n.parse().unwrap())
}

fn json(out: &assert_cmd::assert::Assert) -> serde_json::Value {
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn check<'a>(doc: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} check in {doc}"))
}

#[test]
fn a_lower_cap_leads_the_verdict_with_both_estimates_and_gates_on_its_own() {
    let p = Project::new();
    let yaml = sim_scenario("capdrop", SIM, LOAD, 40);
    let s = p.scenario("capdrop", &yaml);
    // The same workload with the throughput gate switched off (gates are not the workload).
    let no_tpm = p.scenario(
        "no-throughput-gate",
        &format!("{yaml}gates:\n  throughput: 100%\n"),
    );
    let saved = p
        .ladder()
        .args(["run", "--no-color", "--save-baseline"])
        .arg(&s)
        .assert()
        .success();
    // Every step drains at its end; read over the steady window, no step here had its streams
    // idle, so the Little's-law note ("only 70.4 requests were in flight …") stays silent.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&saved.get_output().stdout),
        String::from_utf8_lossy(&saved.get_output().stderr)
    );
    assert!(said.contains("knee"), "{said}");
    assert!(!said.contains("in flight on average"), "{said}");
    let out = p
        .ladder()
        .args(["run", "--quiet", "--no-step-summary", "--format", "json"])
        .args(["--sim-set", "concurrency_cap=35", "--against"])
        .arg("baselines/capdrop.csv")
        .arg(&s)
        .assert()
        .code(3);
    let doc = json(&out);
    let cap = check(&doc, "cap");
    assert_eq!(cap["verdict"]["kind"], "regressed", "{cap}");
    assert_eq!(cap["method"], "batch_means", "{cap}");
    assert!(cap["ci"][1].as_f64().unwrap() < 0.0, "{cap}");
    let headline = doc["headline"][0].as_str().unwrap();
    let (b, n) = caps(headline);
    assert!(
        (40.0..=55.0).contains(&b) && (29.0..=42.0).contains(&n),
        "{headline}"
    );
    assert!(
        headline.contains("queueing at a lower concurrency limit, confirmed by the server"),
        "{headline}"
    );
    assert!(headline.contains("TTFT P50 at 60 streams +"), "{headline}");
    assert_eq!(doc["schema_version"], 3);

    // The default terminal output (not --full) opens with the same line, before any check.
    let run = p.run_dirs("capdrop").last().unwrap().clone();
    let out = p
        .ladder()
        .args(["diff", "--no-color", "baselines/capdrop.csv"])
        .arg(&run)
        .assert()
        .code(3);
    let table = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let first = table
        .lines()
        .position(|l| l.starts_with("capacity: cap ≈ "))
        .unwrap_or_else(|| panic!("no headline in:\n{table}"));
    let counts = table
        .lines()
        .position(|l| l.contains(" regressions, "))
        .unwrap();
    assert!(first < counts, "{table}");
    assert!(table.contains("TTFT P50 at 60 streams +"), "{table}");
    // At 60 and 90 streams both runs queue: P90 is shown, not gated; P50 and the mean are.
    let doc = json(
        &p.ladder()
            .args(["diff", "--format", "json", "baselines/capdrop.csv"])
            .arg(&run)
            .assert()
            .code(3),
    );
    for c in doc["checks"].as_array().unwrap() {
        if c["metric"] == "ttft" && c["concurrency"] == 90 {
            let gated = c["gated"].as_bool().unwrap();
            match c["percentile"].as_str().unwrap() {
                "p50" | "mean" => assert!(gated, "{c}"),
                _ => assert!(!gated, "{c}"),
            }
        }
    }

    // With the throughput gate off, the cap alone still fails the run.
    let doc = json(
        &p.ladder()
            .args(["diff", "--format", "json", "--gates-from"])
            .arg(&no_tpm)
            .arg("baselines/capdrop.csv")
            .arg(&run)
            .assert()
            .code(3),
    );
    assert_eq!(check(&doc, "cap")["verdict"]["kind"], "regressed");
    for c in doc["checks"].as_array().unwrap() {
        if c["metric"] == "tpm" || c["metric"] == "rps" {
            assert_ne!(c["verdict"]["kind"], "regressed", "{c}");
        }
    }
}

#[test]
fn behind_a_gateway_that_hides_the_queue_the_lower_cap_is_inferred_and_said_so() {
    let sim = |cap: &str| {
        start_sim(&[
            "ttft=30ms",
            "tpot=3ms",
            "tpot_jitter=0",
            "output_tokens=40",
            &format!("concurrency_cap={cap}"),
        ])
    };
    // A wider drop than the direct case (45 → 30): the gateway's extra hop and a loaded
    // machine widen the interval, and the test must not hang on timing luck.
    let (before, after) = (sim("45"), sim("30"));
    let p = Project::new();
    let scenario = |upstream: &str| {
        let gateway = processing_ms_gateway(upstream.to_string());
        url_scenario("gw", &format!("http://{gateway}/v1"), LOAD, 40)
    };
    let b = p.scenario("before", &scenario(before.addr()));
    let a = p.scenario("after", &scenario(after.addr()));
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&b)
        .assert()
        .success();
    let out = p
        .ladder()
        .args([
            "run",
            "--quiet",
            "--no-step-summary",
            "--no-color",
            "--against",
        ])
        .arg("baselines/gw.csv")
        .arg(&a)
        .assert()
        .code(3);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let headline = stdout
        .lines()
        .find(|l| l.starts_with("capacity: cap ≈ "))
        .unwrap_or_else(|| panic!("no headline in:\n{stdout}"));
    let (b, n) = caps(headline);
    assert!(
        (40.0..=55.0).contains(&b) && (22.0..=37.0).contains(&n),
        "{headline}"
    );
    assert!(
        headline.contains("queueing at a lower concurrency limit, inferred"),
        "{headline}"
    );
    assert!(!headline.contains("confirmed by the server"), "{headline}");
}
