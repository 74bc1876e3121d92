//! The readers on real recordings (scenarios/logs/peers/: GuideLLM 0.8.1 and AIPerf 0.13.0
//! and vLLM 0.33.0 against `ladder sim` with a 4-stream cap): sweep points as
//! steps, the metric mapping, the knee, and the version errors.

use super::build::{build, PeerOptions};
use super::{aiperf, guidellm, vllm, Point, Tool};
use crate::findings::{self, KneeFinding};

fn fixture(rel: &str) -> String {
    let path = format!("{}/scenarios/logs/peers/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn aiperf_point(c: u32) -> super::PeerRun {
    let records = fixture(&format!(
        "aiperf-0.13.0/concurrency_{c}/profile_export.jsonl"
    ));
    let summary = fixture(&format!(
        "aiperf-0.13.0/concurrency_{c}/profile_export_aiperf.json"
    ));
    aiperf::parse(aiperf::Files {
        records: &records,
        summary: Some(&summary),
        folder: None,
    })
    .unwrap()
}

fn opts() -> PeerOptions {
    PeerOptions {
        sample_rate: 1.0,
        ..PeerOptions::default()
    }
}

#[test]
fn a_guidellm_report_is_its_sweep_with_its_own_tpot_left_aside() {
    let text = fixture("guidellm-0.8.1.json");
    assert_eq!(Tool::detect(&text), Some(Tool::GuideLlm));
    let run = guidellm::parse(&text).unwrap();
    assert_eq!(run.client(), "GuideLLM 0.8.1");
    let points: Vec<Point> = run.points.iter().map(|p| p.point).collect();
    let streams = [1, 2, 4, 8, 16].map(Point::Streams);
    assert_eq!(points, streams);
    assert!(run.points.iter().all(|p| p.requests.len() == 48));
    assert_eq!(run.requested.input_tokens, Some(64));
    assert_eq!(run.requested.output_tokens, Some(16));
    let ladder = build(&[run], &opts()).unwrap();
    assert_eq!(ladder.fingerprint, "import-in64-out16");
    // GuideLLM's ITL is ladder's TPOT; its TPOT (E2E over all tokens) is larger.
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let first = &doc["benchmarks"][0]["requests"]["successful"][0];
    let r = &ladder.records[0];
    let itl = first["inter_token_latency_ms"].as_f64().unwrap();
    assert!((r.tpot_ms.unwrap() - itl).abs() < 1e-6, "{r:?} vs {itl}");
    assert!(first["time_per_output_token_ms"].as_f64().unwrap() > itl * 1.3);
    let steps: Vec<u32> = ladder.summaries.iter().map(|s| s.concurrency).collect();
    assert_eq!(steps, [1, 2, 4, 8, 16]);
    assert!(ladder
        .summaries
        .iter()
        .all(|s| s.concurrency_steady.is_none()));
}

#[test]
fn each_tool_finds_the_simulators_knee() {
    let gl = build(
        &[guidellm::parse(&fixture("guidellm-0.8.1.json")).unwrap()],
        &opts(),
    )
    .unwrap();
    let aip: Vec<_> = [1, 2, 4, 8, 16].map(aiperf_point).into();
    let aip = build(&aip, &opts()).unwrap();
    for l in [gl, aip] {
        let found = findings::analyze_run(&l.summaries, Some(&l.records));
        let KneeFinding::Knee(k) = &found[0].knee else {
            panic!("{}: {:?}", l.client, found[0].knee)
        };
        assert_eq!(
            (k.max_clean_concurrency, k.concurrency),
            (4, 8),
            "{}",
            l.client
        );
        let cap = k.estimated_cap.unwrap();
        assert!((3.6..=4.6).contains(&cap), "{}: cap {cap}", l.client);
    }
}

#[test]
fn aiperf_records_take_the_servers_token_count_and_keep_the_chunk_gaps() {
    let run = aiperf_point(8);
    assert_eq!(run.client(), "AIPerf 0.13.0");
    assert_eq!(run.points[0].point, Point::Streams(8));
    assert_eq!(run.points[0].requests.len(), 48);
    let r = &run.points[0].requests[0];
    assert!(r.tokens_from_usage);
    assert_eq!(r.req.output_tokens, Some(16));
    assert_eq!(r.req.model, "sim-model");
    assert_eq!(r.gaps_ms.len(), 15);
    let ladder = build(&[run], &opts()).unwrap();
    let rec = &ladder.records[0];
    assert!(rec.itl.is_some());
    // AIPerf's inter_token_latency (with --use-server-token-count) is ladder's TPOT.
    let line = fixture("aiperf-0.13.0/concurrency_8/profile_export.jsonl");
    let first: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let itl = first["metrics"]["inter_token_latency"]["value"]
        .as_f64()
        .unwrap();
    assert!(
        (rec.tpot_ms.unwrap() - itl).abs() < 1e-3,
        "{rec:?} vs {itl}"
    );
    assert!(ladder.summaries[0].itl_p50_ms.is_some());
}

#[test]
fn vllm_results_are_one_point_per_file() {
    let runs: Vec<_> = [8, 1, 16, 4, 2]
        .map(|c| vllm::parse(&fixture(&format!("vllm-0.33.0/c{c}.json"))).unwrap())
        .into();
    assert_eq!(runs[0].tool, Tool::Vllm);
    assert_eq!(runs[0].client(), "vLLM bench serve 0.33.0");
    assert_eq!(runs[0].points[0].point, Point::Streams(8));
    let ladder = build(&runs, &opts()).unwrap();
    let steps: Vec<u32> = ladder.summaries.iter().map(|s| s.concurrency).collect();
    assert_eq!(steps, [1, 2, 4, 8, 16]);
    assert_eq!(ladder.fingerprint, "import-in64-out16");
    assert_eq!(ladder.records.len(), 240);
    assert!(ladder
        .records
        .iter()
        .all(|r| r.tpot_ms.is_some() && r.itl.is_some()));
    let found = findings::analyze_run(&ladder.summaries, Some(&ladder.records));
    let KneeFinding::Knee(k) = &found[0].knee else {
        panic!("{:?}", found[0].knee)
    };
    assert_eq!((k.max_clean_concurrency, k.concurrency), (4, 8));
}

#[test]
fn an_unsupported_version_is_refused_by_name() {
    let old = r#"{"metadata": {"version": 1, "guidellm_version": "0.3.0"}, "benchmarks": []}"#;
    let e = guidellm::parse(old).unwrap_err().to_string();
    assert!(
        e.contains("GuideLLM 0.3.0") && e.contains("not supported"),
        "{e}"
    );
    let e = guidellm::parse(r#"{"benchmarks": []}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("schema version none"), "{e}");
    let summary = r#"{"schema_version": "2.0", "aiperf_version": "1.2.0"}"#;
    let files = aiperf::Files {
        records: "",
        summary: Some(summary),
        folder: Some("concurrency_2"),
    };
    let e = aiperf::parse(files).unwrap_err().to_string();
    assert!(
        e.contains("AIPerf 1.2.0") && e.contains("not supported"),
        "{e}"
    );
    let e = vllm::parse(
        r#"{"backend": "vllm", "max_concurrency": 4, "request_rate": "inf", "completed": 3}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--save-detailed"), "{e}");
}

#[test]
fn two_tools_in_one_run_are_refused() {
    let g = guidellm::parse(&fixture("guidellm-0.8.1.json")).unwrap();
    let e = build(&[g, aiperf_point(1)], &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("mix GuideLLM and AIPerf"), "{e}");
}

#[test]
fn a_rate_sweep_is_steps_in_requests_per_second_and_a_sample_is_scaled() {
    // GuideLLM's constant-rate benchmarks, cut down from the recording: two points, 2 and 4 req/s.
    let mut doc: serde_json::Value = serde_json::from_str(&fixture("guidellm-0.8.1.json")).unwrap();
    let benchmarks = doc["benchmarks"].as_array_mut().unwrap();
    benchmarks.truncate(2);
    for (b, rate) in benchmarks.iter_mut().zip([2.0, 4.0]) {
        b["config"]["strategy"] = serde_json::json!({"type_": "constant", "rate": rate});
    }
    let run = guidellm::parse(&doc.to_string()).unwrap();
    assert_eq!(run.points[1].point, Point::Rate(4.0));
    let full = build(std::slice::from_ref(&run), &opts()).unwrap();
    assert_eq!(full.unit, crate::model::LadderUnit::Rps);
    let steps: Vec<u32> = full.summaries.iter().map(|s| s.concurrency).collect();
    assert_eq!(steps, [2, 4]);
    let sampled = PeerOptions {
        sample_rate: 0.5,
        ..opts()
    };
    let half = build(&[run], &sampled).unwrap();
    let ratio = half.summaries[0].rps / full.summaries[0].rps;
    assert!((ratio - 2.0).abs() < 1e-9, "{ratio}");
    // A strategy with neither is refused, naming it.
    benchmarks_strategy_refused();
}

fn benchmarks_strategy_refused() {
    let doc = r#"{"metadata": {"version": 2, "guidellm_version": "0.8.1"},
        "benchmarks": [{"config": {"strategy": {"type_": "throughput"}}, "requests": {}}]}"#;
    let e = guidellm::parse(doc).unwrap_err().to_string();
    assert!(
        e.contains("benchmarks[0]") && e.contains("`throughput`"),
        "{e}"
    );
}
