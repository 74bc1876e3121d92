//! The pure half of the fidelity bench: joining the client's records with the server's truth by
//! request id, the per-request differences and their summary figures, and the command-line cases.
//! No I/O and no clock; checked by `self_check`, which the bench runs under `cargo test`
//! (harness = false binaries have no #[test]).

use ladder::model::RequestRecord;
use ladder::sim::TruthRecord;
use ladder::stats::quantile;
use std::collections::HashMap;

/// Per-request differences between what the client measured and what the server did.
#[derive(Debug, Default, PartialEq)]
pub struct Joined {
    /// Client TTFT − server TTFT (first token written − arrival), ms.
    pub ttft_err: Vec<f64>,
    /// Client TPOT − server TPOT ((last − first) / (tokens − 1)), ms.
    pub tpot_err: Vec<f64>,
    /// Request path: server arrival − client start, after aligning the two clocks so that the
    /// fastest request path is 0 (the clocks have different origins), ms.
    pub send_ms: Vec<f64>,
    /// Response path: client first-token read − server first-token write, same alignment, ms.
    pub recv_ms: Vec<f64>,
    /// Successful client records without a matching server record.
    pub unmatched: usize,
    pub failed: usize,
    pub tokens: u64,
}

/// The id the server saw for the record's last attempt (the UUID with the attempt number).
pub fn wire_id(r: &RequestRecord) -> String {
    ladder::client::request_id::attempt_id(&r.request_id, r.attempts)
        .unwrap_or_else(|| r.request_id.clone())
}

pub fn join(records: &[RequestRecord], truth: &[TruthRecord]) -> Joined {
    let by_id: HashMap<&str, &TruthRecord> =
        truth.iter().map(|t| (t.request_id.as_str(), t)).collect();
    let mut j = Joined::default();
    // (client start, server arrival, client first token, server first token), own clocks.
    let mut paths = Vec::new();
    for r in records {
        if !r.is_ok() {
            j.failed += 1;
            continue;
        }
        j.tokens += r.output_tokens.unwrap_or(0);
        let Some(t) = by_id.get(wire_id(r).as_str()) else {
            j.unmatched += 1;
            continue;
        };
        if let (Some(ttft), Some(first)) = (r.ttft_ms, t.first_token_ms) {
            j.ttft_err.push(ttft - (first - t.arrival_ms));
            // started_at is the first attempt's write; only then does it pair with this TTFT.
            if r.attempts <= 1 {
                paths.push((r.started_at_ms, t.arrival_ms, r.started_at_ms + ttft, first));
            }
        }
        if let (Some(tpot), Some(first), Some(last)) =
            (r.tpot_ms, t.first_token_ms, t.last_token_ms)
        {
            if t.output_tokens > 1 {
                j.tpot_err
                    .push(tpot - (last - first) / f64::from(t.output_tokens - 1));
            }
        }
    }
    let offset = paths
        .iter()
        .map(|(start, arrival, _, _)| arrival - start)
        .fold(f64::INFINITY, f64::min);
    for (start, arrival, read, written) in paths {
        j.send_ms.push(arrival - start - offset);
        j.recv_ms.push(read + offset - written);
    }
    j
}

/// P50, P99 and max (type-7 quantiles), or NaN for no data.
pub fn p50_p99_max(v: &[f64]) -> (f64, f64, f64) {
    let q = |p| quantile(v, p).unwrap_or(f64::NAN);
    let max = v.iter().copied().fold(f64::NAN, f64::max);
    (q(0.5), q(0.99), max)
}

/// `STREAMS:REQUESTS` arguments; `None` when there are none.
pub fn parse_cases(args: &[String]) -> Result<Option<Vec<(u32, u64)>>, String> {
    let mut cases = Vec::new();
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let parsed = a
            .split_once(':')
            .and_then(|(c, n)| Some((c.parse().ok()?, n.parse().ok()?)));
        match parsed {
            Some((c, n)) if c > 0 && n > 0 => cases.push((c, n)),
            _ => return Err(format!("`{a}`: expected STREAMS:REQUESTS, e.g. 1000:10000")),
        }
    }
    Ok((!cases.is_empty()).then_some(cases))
}

/// Checks of the pure parts, run under `cargo test` (harness = false has no #[test]).
pub fn self_check() {
    let rec = |id: &str, start: f64, ttft: f64, tpot: Option<f64>| RequestRecord {
        request_id: id.into(),
        started_at_ms: start,
        ttft_ms: Some(ttft),
        tpot_ms: tpot,
        e2e_ms: Some(ttft + 100.0),
        output_tokens: Some(3),
        attempts: 1,
        ..RequestRecord::default()
    };
    let truth = |id: &str, arrival: f64, first: f64, last: f64| TruthRecord {
        request_id: id.into(),
        arrival_ms: arrival,
        first_token_ms: Some(first),
        last_token_ms: Some(last),
        output_tokens: 3,
        status: 200,
        ..TruthRecord::default()
    };
    // Server clock = client clock + 1000. a: 0.5 ms out, 0.25 ms back; b: 0.25 out, 1 back.
    let records = vec![
        rec("a", 10.0, 200.75, Some(20.5)),
        rec("b", 20.0, 201.25, None),
        rec("c", 30.0, 200.0, None),
        RequestRecord {
            error_class: Some(ladder::model::ErrorClass::Http5xx),
            ..rec("d", 0.0, 1.0, None)
        },
    ];
    let server = vec![
        truth("a", 1010.5, 1210.5, 1250.5),
        truth("b", 1020.25, 1220.25, 1260.0),
    ];
    let j = join(&records, &server);
    assert_eq!(j.ttft_err, vec![0.75, 1.25]);
    assert_eq!(j.tpot_err, vec![0.5]);
    assert_eq!(j.send_ms, vec![0.25, 0.0]);
    assert_eq!(j.recv_ms, vec![0.5, 1.25]);
    assert_eq!((j.unmatched, j.failed, j.tokens), (1, 1, 9));
    let retried = RequestRecord {
        attempts: 2,
        ..rec("3f9a1c2e-7b10-4001-8000-000000000042", 0.0, 1.0, None)
    };
    assert_eq!(wire_id(&retried), "3f9a1c2e-7b10-4002-8000-000000000042");
    assert_eq!(p50_p99_max(&[1.0, 2.0, 3.0, 4.0, 5.0]), (3.0, 4.96, 5.0));
    assert!(p50_p99_max(&[]).0.is_nan());
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        parse_cases(&args(&["--bench", "10:20"])),
        Ok(Some(vec![(10, 20)]))
    );
    assert_eq!(parse_cases(&args(&["--bench"])), Ok(None));
    assert!(parse_cases(&args(&["10"])).is_err());
}
