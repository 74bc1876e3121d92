//! `telemetry.otlp` / `run --otlp` (issue 37, docs/telemetry.md): a receiver on 127.0.0.1
//! decodes what ladder sends (OTLP/HTTP protobuf, with prost) and checks the GenAI names, units,
//! attributes and counts against the run's requests.csv, the spans against its request ids, the
//! JSON encoding, and that a receiver answering 503 neither stops nor fails the run. (`make
//! compat` decodes the same exports with PyPI's official `opentelemetry-proto`.)

use crate::support::{col, files_under, read_csv, sim_scenario, Project};
use ladder::telemetry::otlp_proto as pb;
use prost::Message;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What the receiver got: (path, content type, authorization header, body).
type Got = Arc<Mutex<Vec<(String, String, String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver answering every POST with `status`; returns its base URL.
fn receiver(status: u16) -> (String, Got) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got: Got = Arc::default();
    let store = Arc::clone(&got);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                    let mut headers = BTreeMap::new();
                    loop {
                        let mut h = String::new();
                        r.read_line(&mut h).unwrap();
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        let (k, v) = h.split_once(':').unwrap();
                        headers.insert(k.to_ascii_lowercase(), v.trim().to_string());
                    }
                    let len: usize = headers["content-length"].parse().unwrap();
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).unwrap();
                    let h = |k: &str| headers.get(k).cloned().unwrap_or_default();
                    let item = (path, h("content-type"), h("authorization"), body);
                    store.lock().unwrap().push(item);
                    let reason = if status == 200 { "OK" } else { "Unavailable" };
                    let _ = write!(
                        w,
                        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
                    );
                }
            });
        }
    });
    (url, got)
}

fn scenario(p: &Project, otlp: &str) -> PathBuf {
    let yaml = sim_scenario(
        "otel",
        "    ttft: 30ms\n    tpot: 3ms\n    output_tokens: 10\n    seed: 5\n    faults:\n      http_503: 0.1",
        "  ladder: [2, 4]\n  requests_per_step: 40\n  warmup_requests: 0",
        10,
    );
    p.scenario("otel", &format!("{yaml}telemetry:\n  otlp:\n{otlp}"))
}

/// The last metrics export.
fn last_metrics(got: &Got) -> pb::ExportMetricsServiceRequest {
    let got = got.lock().unwrap();
    let (_, ct, _, body) = got
        .iter()
        .rev()
        .find(|g| g.0 == "/v1/metrics")
        .expect("a metrics export");
    assert_eq!(ct, "application/x-protobuf");
    pb::ExportMetricsServiceRequest::decode(&body[..]).expect("a valid ExportMetricsServiceRequest")
}

fn attr(attrs: &[pb::KeyValue], key: &str) -> String {
    match attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone()?.value)
    {
        Some(pb::Value::StringValue(s)) => s,
        Some(pb::Value::IntValue(n)) => n.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn the_receiver_sees_the_runs_metrics_and_spans_with_genai_names() {
    let p = Project::new();
    let (url, got) = receiver(200);
    let s = scenario(
        &p,
        "    endpoint: http://127.0.0.1:9/unused\n    every: 200ms\n    traces: true\n    headers:\n      authorization: Bearer s3cret-otlp\n",
    );
    let out = p
        .ladder()
        .arg("run")
        .arg(&s)
        .args(["--otlp", &url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("none failed"), "{stderr}");
    let run = p.run_dirs("otel").pop().unwrap();
    // The header's value is in no file the run wrote, nor on stderr.
    assert!(!files_under(&run)
        .iter()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("s3cret-otlp"))));
    assert!(!stderr.contains("s3cret-otlp"));
    // requests.csv: ok count and output tokens per step, failures per step.
    let (h, rows) = read_csv(&run.join("requests.csv"));
    let (step, status, tokens, rid) = (
        col(&h, "step"),
        col(&h, "status"),
        col(&h, "output_tokens"),
        col(&h, "request_id"),
    );
    let mut ok: BTreeMap<String, u64> = BTreeMap::new();
    let mut failed: BTreeMap<String, u64> = BTreeMap::new();
    let mut out_tokens: BTreeMap<String, f64> = BTreeMap::new();
    for r in &rows {
        if r[status] == "ok" {
            *ok.entry(r[step].clone()).or_default() += 1;
            *out_tokens.entry(r[step].clone()).or_default() += r[tokens].parse::<f64>().unwrap();
        } else {
            *failed.entry(r[step].clone()).or_default() += 1;
        }
    }
    assert!(
        failed.values().sum::<u64>() > 0,
        "the faults made no failures"
    );
    let m = last_metrics(&got);
    let rm = &m.resource_metrics[0];
    assert_eq!(
        attr(&rm.resource.as_ref().unwrap().attributes, "service.name"),
        "ladder"
    );
    let metrics = &rm.scope_metrics[0].metrics;
    let by_name = |n: &str| {
        metrics
            .iter()
            .find(|m| m.name == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    let hist = |n: &str| match &by_name(n).data {
        Some(pb::MetricData::Histogram(h)) => h.data_points.clone(),
        other => panic!("{n}: {other:?}"),
    };
    assert_eq!(by_name("gen_ai.client.operation.duration").unit, "s");
    assert_eq!(by_name("gen_ai.client.token.usage").unit, "{token}");
    assert_eq!(
        by_name("gen_ai.client.operation.time_to_first_chunk").unit,
        "s"
    );
    assert_eq!(
        by_name("gen_ai.client.operation.time_per_output_chunk").unit,
        "s"
    );
    for point in hist("gen_ai.client.operation.duration") {
        let a = &point.attributes;
        assert_eq!(attr(a, "gen_ai.request.model"), "sim-model");
        assert_eq!(attr(a, "gen_ai.provider.name"), "openai");
        assert_eq!(attr(a, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(a, "ladder.scenario"), "otel");
        assert_eq!(
            attr(a, "ladder.run_id"),
            run.file_name().unwrap().to_str().unwrap()
        );
        let st = attr(a, "ladder.step");
        if attr(a, "error.type") == "None" {
            assert_eq!(point.count, ok[&st], "step {st}");
        }
        assert_eq!(point.bucket_counts.iter().sum::<u64>(), point.count);
    }
    for point in hist("gen_ai.client.token.usage") {
        let st = attr(&point.attributes, "ladder.step");
        if attr(&point.attributes, "gen_ai.token.type") == "output" {
            assert_eq!(point.sum, Some(out_tokens[&st]), "step {st}");
            assert_eq!(point.count, ok[&st]);
        }
    }
    for point in hist("gen_ai.client.operation.time_to_first_chunk") {
        assert_eq!(point.count, ok[&attr(&point.attributes, "ladder.step")]);
    }
    let Some(pb::MetricData::Sum(requests)) = &by_name("ladder.client.requests").data else {
        panic!("ladder.client.requests is not a sum")
    };
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for point in &requests.data_points {
        if attr(&point.attributes, "ladder.outcome") != "ok" {
            let Some(pb::NumberValue::AsInt(n)) = point.value else {
                panic!()
            };
            *errors
                .entry(attr(&point.attributes, "ladder.step"))
                .or_default() += n as u64;
        }
    }
    assert_eq!(errors, failed);
    // Exports went to /v1/metrics and /v1/traces with the header; one span per record.
    let got = got.lock().unwrap();
    assert!(got.iter().all(|g| g.2 == "Bearer s3cret-otlp"));
    let mut span_ids = Vec::new();
    for (_, _, _, body) in got.iter().filter(|g| g.0 == "/v1/traces") {
        let t = pb::ExportTraceServiceRequest::decode(&body[..]).unwrap();
        for span in &t.resource_spans[0].scope_spans[0].spans {
            span_ids.push(attr(&span.attributes, "ladder.request_id"));
            let hex: String = span.trace_id.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, span_ids.last().unwrap().replace('-', ""));
        }
    }
    let mut csv_ids: Vec<String> = rows.iter().map(|r| r[rid].clone()).collect();
    span_ids.sort();
    csv_ids.sort();
    assert_eq!(span_ids, csv_ids);
}

#[test]
fn json_when_asked_and_a_failing_receiver_is_counted_not_fatal() {
    let p = Project::new();
    let (url, got) = receiver(200);
    let s = scenario(
        &p,
        &format!("    endpoint: {url}\n    protocol: http/json\n"),
    );
    let out = p.ladder().arg("run").arg(&s).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    {
        let got = got.lock().unwrap();
        let (_, ct, _, body) = got.iter().rev().find(|g| g.0 == "/v1/metrics").unwrap();
        assert_eq!(ct, "application/json");
        let j: serde_json::Value = serde_json::from_slice(body).unwrap();
        let names: Vec<&str> = j["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["name"].as_str())
            .collect();
        assert!(
            names.contains(&"gen_ai.client.operation.duration"),
            "{names:?}"
        );
    }
    let (down, tried) = receiver(503);
    let out = p
        .ladder()
        .arg("run")
        .arg(&s)
        .args(["--otlp", &down])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("HTTP 503"), "{stderr}");
    assert!(
        stderr.contains("exports to") && stderr.contains("failed"),
        "{stderr}"
    );
    assert!(!tried.lock().unwrap().is_empty());
    assert_eq!(p.run_dirs("otel").len(), 2);
}
