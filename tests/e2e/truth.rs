//! Issue 6: the server-truth plumbing that the fidelity bench relies on. A run against the
//! embedded simulator writes `sim_truth.json` (what the server did, keyed by the `x-request-id`
//! the runner sent and recorded as `request_id`). Every request must be found there, and since a
//! request is written before the server reads it and a token is written before the client reads
//! it, the client's TTFT can never be shorter than the server's; the median gap (client
//! overhead, loopback, both event loops) must be small.

use crate::support::{col, read_csv, sim_scenario, Project};
use ladder::sim::TruthRecord;
use std::collections::HashMap;

/// Both sides round to the microsecond, so equal instants may differ by this much.
const ROUNDING_MS: f64 = 0.002;
/// Generous: a debug build with 50 streams, on a small shared machine whose other processes can
/// keep the client from reading for tens of ms. What it guards against is a TTFT measured from
/// the wrong instant (the step's start, the ramp-up's schedule: hundreds of ms here), so the
/// limit is the configured TTFT itself: client overhead must stay below the server's own time.
const MEDIAN_GAP_LIMIT_MS: f64 = 60.0;

#[test]
fn client_ttft_is_never_below_server_ttft_and_the_median_gap_is_small() {
    let p = Project::new();
    let f = p.scenario(
        "truth",
        &sim_scenario(
            "truth",
            "    ttft: 60ms\n    tpot: 4ms\n    tpot_jitter: 0\n    output_tokens: 12\n    seed: 3",
            "  ladder: [50]\n  requests_per_step: 150\n  ramp_up: 250ms",
            12,
        ),
    );
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let dirs = p.run_dirs("truth");
    assert_eq!(dirs.len(), 1);
    let text = std::fs::read_to_string(dirs[0].join("sim_truth.json")).expect("sim_truth.json");
    let truth: Vec<TruthRecord> = serde_json::from_str(&text).expect("sim_truth.json is truth");
    let by_id: HashMap<&str, &TruthRecord> =
        truth.iter().map(|t| (t.request_id.as_str(), t)).collect();
    assert_eq!(by_id.len(), truth.len(), "request ids sent are unique");

    let (h, rows) = read_csv(&dirs[0].join("requests.csv"));
    assert_eq!(rows.len(), 150);
    let num = |row: &Vec<String>, name: &str| -> f64 {
        row[col(&h, name)]
            .parse()
            .unwrap_or_else(|_| panic!("{name}: `{}`", row[col(&h, name)]))
    };
    let mut gaps = Vec::new();
    for row in &rows {
        assert_eq!(row[col(&h, "status")], "ok", "{row:?}");
        let id = &row[col(&h, "request_id")];
        let t = by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("request {id} not in the server's truth"));
        assert_eq!(t.status, 200);
        assert_eq!(t.path, "/v1/chat/completions");
        assert_eq!(f64::from(t.output_tokens), num(row, "output_tokens"));
        let server_ttft = t.first_token_ms.expect("a token was sent") - t.arrival_ms;
        let client_ttft = num(row, "ttft_ms");
        assert!(
            client_ttft >= server_ttft - ROUNDING_MS,
            "request {id}: client TTFT {client_ttft} ms < server TTFT {server_ttft} ms"
        );
        assert!(
            server_ttft >= 60.0 - ROUNDING_MS,
            "server TTFT {server_ttft}"
        );
        gaps.push(client_ttft - server_ttft);
    }
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    assert!(
        median < MEDIAN_GAP_LIMIT_MS,
        "median client − server TTFT {median:.3} ms (all: {gaps:?})"
    );
}
