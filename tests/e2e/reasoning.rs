//! Hidden reasoning end to end (issue 11): a server that reasons without streaming it (the
//! simulator's `reasoning_tokens`) reports those tokens in usage; ladder records them per request,
//! keeps them in the token count (TPM), and leaves them out of TPOT, which would otherwise divide
//! the visible decode span by tokens that were generated before it.

use crate::support::{sim_scenario, Project};

fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|h| *h == name).unwrap();
    lines
        .map(|l| l.split(',').nth(i).unwrap().to_string())
        .collect()
}

#[test]
fn hidden_reasoning_counts_in_tokens_but_not_in_tpot() {
    let p = Project::new();
    let f = p.scenario(
        "think",
        &sim_scenario(
            "think",
            "    ttft: 20ms\n    tpot: 10ms\n    tpot_jitter: 0\n    output_tokens: 12\n    reasoning_tokens: 40\n    seed: 1",
            "  ladder: [2]\n  requests_per_step: 6",
            12,
        ),
    );
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let run = p.run_dirs("think").pop().unwrap();
    let requests = std::fs::read_to_string(run.join("requests.csv")).unwrap();
    assert!(
        column(&requests, "reasoning_tokens")
            .iter()
            .all(|v| v == "40"),
        "{requests}"
    );
    // 12 visible + 40 hidden: the count (and TPM) keep all 52.
    assert!(
        column(&requests, "output_tokens").iter().all(|v| v == "52"),
        "{requests}"
    );
    for tpot in column(&requests, "tpot_ms") {
        // Visible tokens 10 ms apart. Dividing their span by 51 would give ~2.2 ms.
        let tpot: f64 = tpot.parse().unwrap();
        assert!((8.0..40.0).contains(&tpot), "TPOT {tpot} ms: {requests}");
    }
    for ttft in column(&requests, "ttft_ms") {
        // 40 hidden tokens at 10 ms are decoded before the first visible one.
        let ttft: f64 = ttft.parse().unwrap();
        assert!(ttft >= 400.0, "TTFT {ttft} ms: {requests}");
    }
    let summary = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    assert_eq!(column(&summary, "output_tokens"), ["312"], "{summary}");
}
