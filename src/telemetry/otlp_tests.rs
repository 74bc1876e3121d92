//! Unit tests of the OTLP view of a run: names, units, attributes and counts, and the JSON form.

use super::*;
use crate::model::ErrorClass;

fn info() -> RunInfo {
    RunInfo {
        scenario: "demo".into(),
        run_id: "2026-12-01T10-00-00Z".into(),
        provider: "openai".into(),
        operation: "chat".into(),
        version: "0.1.0".into(),
    }
}

fn clock() -> u64 {
    1_000_000_000
}

fn ok(step: u32, ttft: f64) -> RequestRecord {
    RequestRecord {
        model: "m".into(),
        step,
        request_id: "0b6e5c1c-7c1e-4a57-9a8f-3c2d1e0f4a5b".into(),
        started_at_ms: 5.0,
        ttft_ms: Some(ttft),
        e2e_ms: Some(ttft * 3.0),
        tpot_ms: Some(10.0),
        output_tokens: Some(20),
        input_tokens: Some(100),
        ..RequestRecord::default()
    }
}

fn find<'a>(req: &'a pb::ExportMetricsServiceRequest, name: &str) -> &'a pb::Metric {
    req.resource_metrics[0].scope_metrics[0]
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn attr<'a>(attrs: &'a [pb::KeyValue], key: &str) -> Option<&'a pb::Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

#[test]
fn records_become_genai_histograms_and_ladder_counters() {
    let run = OtlpRun::new(info(), true, clock);
    run.step_started("m", 1, 2, "4 streams", None);
    run.step_load(4.0);
    run.in_flight(3);
    run.record(&ok(1, 100.0));
    run.record(&ok(1, 300.0));
    let failed = RequestRecord {
        error_class: Some(ErrorClass::Http5xx),
        ttft_ms: None,
        output_tokens: None,
        ..ok(1, 50.0)
    };
    run.record(&failed);
    let m = run.metrics();
    let Some(pb::MetricData::Histogram(d)) = &find(&m, OPERATION_DURATION).data else {
        panic!("duration is not a histogram")
    };
    assert_eq!(find(&m, OPERATION_DURATION).unit, "s");
    assert_eq!(d.aggregation_temporality, pb::CUMULATIVE);
    // Successes and the failure apart, the failure with its error.type.
    let counts: Vec<(u64, Option<&pb::Value>)> = d
        .data_points
        .iter()
        .map(|p| (p.count, attr(&p.attributes, "error.type")))
        .collect();
    assert_eq!(counts.len(), 2, "{counts:?}");
    assert!(counts.contains(&(2, None)));
    assert!(counts.contains(&(1, Some(&pb::Value::StringValue("http_5xx".into())))));
    let p = &d.data_points[0];
    assert_eq!(p.bucket_counts.len(), p.explicit_bounds.len() + 1);
    assert_eq!(
        attr(&p.attributes, "gen_ai.request.model"),
        Some(&pb::Value::StringValue("m".into()))
    );
    assert_eq!(
        attr(&p.attributes, "ladder.step"),
        Some(&pb::Value::IntValue(1))
    );
    // Token usage: input and output apart, successes only.
    let Some(pb::MetricData::Histogram(t)) = &find(&m, TOKEN_USAGE).data else {
        panic!()
    };
    assert_eq!(find(&m, TOKEN_USAGE).unit, "{token}");
    let sums: Vec<f64> = t.data_points.iter().filter_map(|p| p.sum).collect();
    assert_eq!(sums, vec![200.0, 40.0]);
    // TTFT: 0.1 s and 0.3 s.
    let Some(pb::MetricData::Histogram(f)) = &find(&m, TIME_TO_FIRST_CHUNK).data else {
        panic!()
    };
    assert_eq!(f.data_points[0].count, 2);
    assert!((f.data_points[0].sum.unwrap() - 0.4).abs() < 1e-9);
    // Requests by outcome; the running step's gauges.
    let Some(pb::MetricData::Sum(r)) = &find(&m, REQUESTS).data else {
        panic!()
    };
    assert!(r.is_monotonic);
    let total: i64 = r
        .data_points
        .iter()
        .map(|p| match p.value {
            Some(pb::NumberValue::AsInt(n)) => n,
            _ => 0,
        })
        .sum();
    assert_eq!(total, 3);
    let Some(pb::MetricData::Gauge(g)) = &find(&m, STEP_LOAD).data else {
        panic!()
    };
    assert_eq!(g.data_points[0].value, Some(pb::NumberValue::AsDouble(4.0)));
    run.step_finished("m", 1);
    let after = run.metrics();
    assert!(after.resource_metrics[0].scope_metrics[0]
        .metrics
        .iter()
        .all(|m| m.name != IN_FLIGHT));
    // One span per request, taken once; the request id is the trace id.
    let spans = run.take_spans().unwrap();
    let spans = &spans.resource_spans[0].scope_spans[0].spans;
    assert_eq!(spans.len(), 3);
    assert_eq!(spans[0].trace_id, trace_id_of(&ok(1, 1.0).request_id));
    assert_eq!(spans[0].trace_id[0], 0x0b);
    assert_eq!(spans[2].status.as_ref().unwrap().code, pb::STATUS_ERROR);
    assert_eq!(spans[0].start_time_unix_nano, 1_000_000_000 + 5_000_000);
    assert!(run.take_spans().is_none());
}

#[test]
fn the_span_queue_drops_and_counts_past_its_bound() {
    let run = OtlpRun::new(info(), true, clock);
    for _ in 0..MAX_QUEUED_SPANS + 5 {
        run.record(&ok(1, 100.0));
    }
    assert_eq!(run.spans_dropped(), 5);
    let untraced = OtlpRun::new(info(), false, clock);
    untraced.record(&ok(1, 100.0));
    assert!(untraced.take_spans().is_none());
}

#[test]
fn json_follows_the_otlp_json_mapping() {
    let run = OtlpRun::new(info(), true, clock);
    run.record(&ok(1, 100.0));
    let j = serde_json::to_value(run.metrics()).unwrap();
    let m = &j["resourceMetrics"][0]["scopeMetrics"][0]["metrics"];
    let d = m
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == OPERATION_DURATION)
        .unwrap();
    let p = &d["histogram"]["dataPoints"][0];
    assert_eq!(p["count"], "1");
    assert_eq!(d["histogram"]["aggregationTemporality"], 2);
    assert_eq!(p["attributes"][4]["value"]["intValue"], "1");
    assert_eq!(p["attributes"][0]["value"]["stringValue"], "chat");
    let t = serde_json::to_value(run.take_spans().unwrap()).unwrap();
    let span = &t["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(span["traceId"], "0b6e5c1c7c1e4a579a8f3c2d1e0f4a5b");
    assert_eq!(span["spanId"], "9a8f3c2d1e0f4a5b");
}

#[test]
fn signal_urls_go_under_the_base() {
    let both = |u| signal_urls(u);
    assert_eq!(
        both("http://c:4318"),
        (
            "http://c:4318/v1/metrics".into(),
            "http://c:4318/v1/traces".into()
        )
    );
    assert_eq!(
        both("http://c:4318/v1/metrics").1,
        "http://c:4318/v1/traces"
    );
    assert_eq!(
        both("http://c:4318/otlp/").0,
        "http://c:4318/otlp/v1/metrics"
    );
    assert_eq!(trace_id_of("not-a-uuid").len(), 16);
}
