//! ITL judged end to end (issue 11): `requests.csv` and the baseline sidecar keep each request's
//! inter-token gaps (`itl_hist`), so `summarize` rebuilds ITL percentiles and the diff judges
//! ITL P90 with a bootstrap over whole requests; a baseline saved before the column existed
//! leaves ITL information only, with a line that says why.

use crate::support::{sim_scenario, Project};

fn itl_scenario() -> String {
    sim_scenario(
        "itl",
        "    ttft: 30ms\n    tpot: 10ms\n    tpot_jitter: 0.02\n    output_tokens: 24\n    seed: 5",
        "  ladder: [4]\n  requests_per_step: 60",
        24,
    )
}

fn itl_check(json: &serde_json::Value, percentile: &str) -> serde_json::Value {
    json["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["metric"] == "itl" && c["percentile"] == percentile)
        .unwrap_or_else(|| panic!("no ITL {percentile} check in {json}"))
        .clone()
}

#[test]
fn itl_is_stored_per_request_rebuilt_and_gated() {
    let p = Project::new();
    let f = p.scenario("itl", &itl_scenario());
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .assert()
        .success();
    let sidecar = p.path().join("baselines/itl.requests.csv");
    let text = std::fs::read_to_string(&sidecar).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let itl_col = header
        .iter()
        .position(|h| *h == "itl_hist")
        .unwrap_or_else(|| panic!("no itl_hist column: {text}"));
    // 24 tokens: 23 gaps per request around 10 ms (bin 426 holds [2^(425/32), 2^(426/32)) µs).
    // The bins only need to be decode gaps (0.66-77 ms), not TTFT or nanoseconds: on a loaded
    // machine a timer fires late and the next gap comes early, so no tight band is asserted.
    let row = text.lines().nth(1).unwrap();
    let cell = row.split(',').nth(itl_col).unwrap();
    let (mut bins, mut gaps) = (Vec::new(), 0);
    for run in cell.split(' ') {
        let (first, counts) = run.split_once(':').unwrap();
        let first: u32 = first.parse().unwrap();
        for (i, c) in counts.split('/').enumerate() {
            let c = c.parse::<u32>().unwrap();
            bins.extend(std::iter::repeat_n(first + i as u32, c as usize));
            gaps += c;
        }
    }
    assert_eq!(gaps, 23, "{row}");
    // The bins are microsecond bins of decode gaps: a unit error (ns or ms stored as µs) would
    // move every bin by ~320. A late timer on a loaded machine lets two tokens be read together
    // (a gap near 0: bin 87 = 6 µs was seen) and a descheduled client reads one late, so the
    // bounds are loose: no gap of a second or more (bin 640), most gaps 1.6-78 ms.
    assert!(bins.iter().all(|b| *b < 640), "{row}");
    let decode = bins.iter().filter(|b| (340..520).contains(*b)).count();
    assert!(decode * 2 >= gaps as usize, "{row}");

    // `summarize` rebuilds the ITL percentiles from requests.csv alone.
    let run = p.run_dirs("itl").pop().unwrap();
    let summary = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    std::fs::remove_file(run.join("summary.csv")).unwrap();
    p.ladder()
        .args(["summarize", "--quiet"])
        .arg(&run)
        .assert()
        .success();
    let rebuilt = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    let itl_cols = |s: &str| -> Vec<String> {
        let mut lines = s.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        ["itl_p50_ms", "itl_p90_ms", "itl_p99_ms"]
            .iter()
            .map(|c| row[header.iter().position(|h| h == c).unwrap()].to_string())
            .collect()
    };
    let live = itl_cols(&summary);
    assert!(live.iter().all(|v| !v.is_empty()), "{summary}");
    assert_eq!(itl_cols(&rebuilt), live);

    // Decode 2.5x slower: ITL P90 regressed, judged with a bootstrap CI over 60 requests. (2.5x,
    // not 1.4x: a loaded machine's late timers can lift the baseline's own ITL P90 by a few ms,
    // and 15 ms per gap is more than any of them.)
    let out = p
        .ladder()
        .args([
            "run",
            "--quiet",
            "--format",
            "json",
            "--sim-set",
            "tpot=25ms",
        ])
        .arg("--against")
        .arg(p.path().join("baselines/itl.csv"))
        .arg(&f)
        .assert()
        .code(3);
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let p90 = itl_check(&json, "p90");
    assert_eq!(p90["verdict"]["kind"], "regressed", "{p90}");
    assert_eq!(p90["method"], "bootstrap", "{p90}");
    assert!(p90["ci"][0].as_f64().unwrap() > 0.0, "{p90}");
    // P99 counts requests: 60 is below 400, so it is skipped and says so.
    let p99 = itl_check(&json, "p99");
    assert!(
        p99["detail"]
            .as_str()
            .unwrap()
            .contains("needs ≥ 400 samples per side"),
        "{p99}"
    );

    // A baseline saved before `itl_hist` existed: ITL is information only, and says why.
    let old: String = text
        .lines()
        .map(|l| l.split(',').take(itl_col).collect::<Vec<_>>().join(",") + "\n")
        .collect();
    std::fs::write(&sidecar, old).unwrap();
    let new_run = p.run_dirs("itl").pop().unwrap();
    let out = p
        .ladder()
        .args(["diff", "--format", "json"])
        .arg(p.path().join("baselines/itl.csv"))
        .arg(&new_run)
        .assert()
        .code(3);
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let p90 = itl_check(&json, "p90");
    assert_eq!(p90["gated"], false, "{p90}");
    assert!(
        p90["detail"]
            .as_str()
            .unwrap()
            .contains("the baseline did not keep per-request inter-token gaps"),
        "{p90}"
    );
}
