//! TTFC as a gate (issue 34, part 3): a model that streams its reasoning shows its first token
//! as soon as it starts thinking, so TTFT stays flat while the answer comes later. Against a
//! `ladder sim` that thinks three times as long, `run --against` must fail on TTFC (exit 3)
//! while TTFT passes; the same run without reasoning judges no TTFC at all.

use crate::support::{start_sim, url_scenario, Project};
use serde_json::Value;

/// Wide latency and throughput gates everywhere except TTFC (and TTFT, the one that must pass
/// on its own), so the exit code is TTFC's alone: thinking longer also lengthens E2E and
/// lowers the request rate, which are not what this test is about.
const GATES: &str = "gates:\n  tpot: {p90: 900%, p99: 900%}\n  itl: {p90: 900%, p99: 900%}\n  e2e: {p90: 900%, p99: 900%}\n  error_rate: 50pp\n  throughput: 95%\n  ttfc: {p90: 10%, p99: 20%, floor: 50ms}\n";

fn sim_sets(reasoning_tokens: u32) -> Vec<String> {
    [
        "ttft=20ms",
        "tpot=2ms",
        "tpot_jitter=0",
        "output_tokens=10",
        "stream_reasoning=true",
        "seed=7",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("reasoning_tokens={reasoning_tokens}")])
    .collect()
}

/// `run --against` the baseline with a simulator thinking `reasoning_tokens` per answer:
/// the exit code and the JSON document.
fn run_against(p: &Project, reasoning_tokens: u32, save: bool) -> (i32, Value, String) {
    let sets = sim_sets(reasoning_tokens);
    let sim = start_sim(&sets.iter().map(String::as_str).collect::<Vec<_>>());
    let mut yaml = url_scenario(
        "think",
        &sim.base_url,
        "  ladder: [4]\n  requests_per_step: 60",
        64,
    );
    yaml.push_str(GATES);
    let f = p.scenario("think", &yaml);
    let mut cmd = p.ladder();
    cmd.args(["run", "--format", "json"]);
    if save {
        cmd.arg("--save-baseline");
    } else {
        cmd.arg("--against")
            .arg(p.path().join("baselines/think.csv"));
    }
    let out = cmd.arg(&f).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), doc, stderr)
}

fn verdict(doc: &Value, metric: &str, percentile: &str) -> String {
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && c["percentile"] == percentile)
        .unwrap_or_else(|| panic!("no {metric} {percentile} check: {doc}"));
    check["verdict"]["kind"].as_str().unwrap().to_string()
}

#[test]
fn longer_streamed_reasoning_fails_the_ttfc_gate_while_ttft_passes() {
    let p = Project::new();
    let (code, run, stderr) = run_against(&p, 40, true);
    assert_eq!(code, 0, "{stderr}");
    // The run's JSON and table carry TTFC and the reasoning share: 40 of 50 tokens reasoned.
    let step = &run["summary"][0];
    assert_eq!(step["reasoned"], 60, "{run}");
    assert_eq!(step["reasoning_share"], 0.8, "{run}");
    assert!(
        step["ttfc_p90_ms"].as_f64() > step["ttft_p90_ms"].as_f64(),
        "{run}"
    );
    assert!(stderr.contains("TTFC P50/P90/P99"), "{stderr}");
    // The baseline keeps the TTFC columns: 40 reasoning tokens at 2 ms before every answer, so
    // the simulator sends the first answer token at 20 + 40 × 2 ms. (Not TTFT + 70 ms: a loaded
    // client may read the first token late and the next ones in a burst; no token can be read
    // before it is sent.)
    let summary = std::fs::read_to_string(p.path().join("baselines/think.csv")).unwrap();
    let (headers, rows) = crate::support::read_csv(&p.path().join("baselines/think.csv"));
    let ttfc = crate::support::num(&rows[0], &headers, "ttfc_p90_ms");
    let ttft = crate::support::num(&rows[0], &headers, "ttft_p90_ms");
    assert!(
        ttfc > ttft && ttfc >= 100.0 - 1.0,
        "TTFC {ttfc} vs TTFT {ttft}: {summary}"
    );
    assert_eq!(crate::support::num(&rows[0], &headers, "reasoned"), 60.0);
    // plan takes a TTFC bound: the answer's wait, not the first (reasoning) token's.
    let plan = |bound: &str| {
        let out = p
            .ladder()
            .args([
                "plan",
                "baselines/think.csv",
                "--rps",
                "5",
                "--slo-ttfc",
                bound,
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let missed = plan("50ms");
    assert!(
        missed.contains("TTFC P90") && missed.contains("> 50 ms"),
        "{missed}"
    );
    assert!(plan("10s").contains("concurrency needed"));

    // The same server: nothing regresses, TTFC is judged (the step reasoned).
    let (code, doc, stderr) = run_against(&p, 40, false);
    assert_eq!(code, 0, "{doc}\n{stderr}");
    assert_ne!(verdict(&doc, "ttfc", "p90"), "regressed", "{doc}");

    // Thinking three times as long: the answer's wait regresses, the first token does not.
    let (code, doc, stderr) = run_against(&p, 120, false);
    assert_eq!(code, 3, "{doc}\n{stderr}");
    assert_eq!(verdict(&doc, "ttfc", "p90"), "regressed", "{doc}");
    assert_ne!(verdict(&doc, "ttft", "p90"), "regressed", "{doc}");
    let regressed: Vec<&Value> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"]["kind"] == "regressed")
        .collect();
    assert!(
        regressed.iter().all(|c| c["metric"] == "ttfc"),
        "only TTFC regresses: {regressed:?}"
    );

    // The report charts TTFC like TTFT, the regressed check ringed on it.
    let page = p.path().join("think.html");
    p.ladder()
        .arg("report")
        .arg(p.path().join(doc["run_dir"].as_str().unwrap()))
        .arg("--baseline")
        .arg(p.path().join("baselines/think.csv"))
        .arg("-o")
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("time to the first answer token"),
        "no TTFC chart"
    );
    assert!(
        html.contains("regressed: TTFC P90"),
        "no ring on the TTFC chart"
    );
    assert!(
        html.contains("reasoning share of the output tokens"),
        "no share chart"
    );
    assert!(
        html.contains("TTFC P50 / P90 / P99"),
        "no TTFC in the steps table"
    );
    // And the trend of the three runs has a TTFC chart.
    let runs = p.run_dirs("think");
    assert_eq!(runs.len(), 3);
    let trend = p.path().join("trend.html");
    p.ladder()
        .args(["report", "--trend"])
        .args(&runs)
        .arg("-o")
        .arg(&trend)
        .assert()
        .success();
    let html = std::fs::read_to_string(&trend).unwrap();
    assert!(
        html.contains("TTFC P90 per step over time"),
        "no TTFC trend"
    );
}

#[test]
fn a_run_without_reasoning_judges_no_ttfc() {
    let p = Project::new();
    let (code, _, stderr) = run_against(&p, 0, true);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("TTFC"), "{stderr}");
    let page = p.path().join("plain.html");
    p.ladder()
        .arg("report")
        .arg(p.path().join("baselines/think.csv"))
        .arg("-o")
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("TTFC"),
        "a run without reasoning charts no TTFC"
    );
    let (code, doc, stderr) = run_against(&p, 0, false);
    assert_eq!(code, 0, "{doc}\n{stderr}");
    let ttfc = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["metric"] == "ttfc")
        .count();
    assert_eq!(ttfc, 0, "{doc}");
}
