//! OTLP export of a run (`telemetry.otlp`, `--otlp URL`; docs/telemetry.md): the run's
//! metrics with the OpenTelemetry GenAI semantic conventions' names where they exist
//! (`gen_ai.client.operation.duration`, `gen_ai.client.token.usage`,
//! `gen_ai.client.operation.time_to_first_chunk`, `gen_ai.client.operation.time_per_output_chunk`)
//! and ladder's own for the rest, and optionally one span per request.
//!
//! [`OtlpRun`] is the run's progress sink: it counts every record into cumulative series and
//! queues spans (a bounded queue: a full one drops and counts, never waits), under one short
//! lock, as the Prometheus registry does. [`OtlpExporter`] sends what [`OtlpRun::metrics`] and
//! [`OtlpRun::take_spans`] return; `app::run::telemetry` runs it on its own task, so a slow or
//! failing receiver never holds up a request.

use super::otlp_proto as pb;
use super::registry::Histogram;
use crate::model::RequestRecord;
use crate::runner::Progress;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Bucket bounds the GenAI conventions recommend: durations (seconds) and token counts.
pub const DURATION_BOUNDS: &[f64] = &[
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
pub const CHUNK_BOUNDS: &[f64] = &[
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
];
pub const TOKEN_BOUNDS: &[f64] = &[
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The metric names (documented in docs/telemetry.md).
pub const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
pub const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
pub const TIME_TO_FIRST_CHUNK: &str = "gen_ai.client.operation.time_to_first_chunk";
pub const TIME_PER_OUTPUT_CHUNK: &str = "gen_ai.client.operation.time_per_output_chunk";
pub const REQUESTS: &str = "ladder.client.requests";
pub const TTFT: &str = "ladder.client.time_to_first_token";
pub const TPOT: &str = "ladder.client.time_per_output_token";
pub const SEND_LAG: &str = "ladder.client.send_lag";
pub const IN_FLIGHT: &str = "ladder.client.in_flight";
pub const STEP_LOAD: &str = "ladder.client.step_load";

/// Most spans waiting for the next export; more are dropped (and counted).
pub const MAX_QUEUED_SPANS: usize = 20_000;

/// What every series and span of a run says about it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    pub scenario: String,
    pub run_id: String,
    /// `gen_ai.provider.name`: `openai`, `anthropic`, `azure.ai.openai`.
    pub provider: String,
    /// `gen_ai.operation.name`: `chat` or `text_completion`.
    pub operation: String,
    pub version: String,
}

/// The series of one model × step.
#[derive(Debug, Clone)]
struct Series {
    /// Operation duration by `error.type` (empty for successes).
    duration: BTreeMap<String, Histogram>,
    input_tokens: Histogram,
    output_tokens: Histogram,
    first_chunk: Histogram,
    per_chunk: Histogram,
    ttft: Histogram,
    tpot: Histogram,
    send_lag: Histogram,
    /// Requests by outcome (`ok` or the error class).
    outcomes: BTreeMap<&'static str, u64>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            duration: BTreeMap::new(),
            input_tokens: Histogram::new(TOKEN_BOUNDS),
            output_tokens: Histogram::new(TOKEN_BOUNDS),
            first_chunk: Histogram::new(DURATION_BOUNDS),
            per_chunk: Histogram::new(CHUNK_BOUNDS),
            ttft: Histogram::new(DURATION_BOUNDS),
            tpot: Histogram::new(CHUNK_BOUNDS),
            send_lag: Histogram::new(DURATION_BOUNDS),
            outcomes: BTreeMap::new(),
        }
    }
}

impl Series {
    fn add(&mut self, r: &RequestRecord) {
        let s = |ms: Option<f64>| ms.map(|v| v / 1000.0);
        *self
            .outcomes
            .entry(r.error_class.map_or("ok", |c| c.as_str()))
            .or_default() += 1;
        if let Some(v) = s(r.send_lag_ms) {
            self.send_lag.observe(v.max(0.0));
        }
        let error = r.error_class.map_or("", |c| c.as_str());
        if let Some(v) = s(r.e2e_ms) {
            self.duration
                .entry(error.to_string())
                .or_insert_with(|| Histogram::new(DURATION_BOUNDS))
                .observe(v);
        }
        if !r.is_ok() {
            return;
        }
        if let Some(n) = r.input_tokens {
            self.input_tokens.observe(n as f64);
        }
        if let Some(n) = r.output_tokens {
            self.output_tokens.observe(n as f64);
        }
        if let Some(v) = s(r.ttfc_ms.or(r.ttft_ms)) {
            self.first_chunk.observe(v);
        }
        if let Some(v) = s(r.ttft_ms) {
            self.ttft.observe(v);
        }
        if let Some(v) = s(r.tpot_ms) {
            self.tpot.observe(v);
        }
        if let Some(h) = &r.itl {
            for &(bin, n) in h.bins() {
                let gap = crate::model::itl::bin_value_ms(bin) / 1000.0;
                self.per_chunk.observe_n(gap, u64::from(n));
            }
        }
    }
}

#[derive(Default)]
struct State {
    series: BTreeMap<(String, u32), Series>,
    /// The running step and its (in flight, load).
    running: Option<((String, u32), f64, f64)>,
    /// Wall-clock ns of the first step: records' `started_at_ms` count from it.
    origin_ns: Option<u64>,
    spans: Vec<pb::Span>,
    spans_dropped: u64,
}

/// The run's OTLP view: fed by the runner's progress events, read by the exporter.
pub struct OtlpRun {
    info: RunInfo,
    traces: bool,
    /// Wall-clock now in ns since the Unix epoch (app/ owns the clock).
    clock: fn() -> u64,
    /// When the run's export began: every cumulative series starts here.
    start_ns: u64,
    state: Mutex<State>,
}

/// A gauge of the running step.
fn gauge(name: &str, unit: &str, attrs: Vec<pb::KeyValue>, now: u64, v: f64) -> pb::Metric {
    let point = pb::NumberDataPoint {
        attributes: attrs,
        start_time_unix_nano: 0,
        time_unix_nano: now,
        value: Some(pb::NumberValue::AsDouble(v)),
    };
    metric(
        name,
        unit,
        pb::MetricData::Gauge(pb::Gauge {
            data_points: vec![point],
        }),
    )
}

fn metric(name: &str, unit: &str, data: pb::MetricData) -> pb::Metric {
    pb::Metric {
        name: name.to_string(),
        description: String::new(),
        unit: unit.to_string(),
        data: Some(data),
    }
}

impl OtlpRun {
    pub fn new(info: RunInfo, traces: bool, clock: fn() -> u64) -> Self {
        OtlpRun {
            info,
            traces,
            start_ns: clock(),
            clock,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The attributes of a model × step's series.
    fn attributes(&self, model: &str, step: u32) -> Vec<pb::KeyValue> {
        vec![
            pb::KeyValue::str("gen_ai.operation.name", &self.info.operation),
            pb::KeyValue::str("gen_ai.provider.name", &self.info.provider),
            pb::KeyValue::str("gen_ai.request.model", model),
            pb::KeyValue::str("ladder.scenario", &self.info.scenario),
            pb::KeyValue::int("ladder.step", i64::from(step)),
            pb::KeyValue::str("ladder.run_id", &self.info.run_id),
        ]
    }

    fn resource(&self) -> pb::Resource {
        pb::Resource {
            attributes: vec![
                pb::KeyValue::str("service.name", "ladder"),
                pb::KeyValue::str("service.version", &self.info.version),
            ],
        }
    }

    fn scope(&self) -> pb::InstrumentationScope {
        pb::InstrumentationScope {
            name: "ladder".into(),
            version: self.info.version.clone(),
        }
    }

    /// Spans dropped because the queue was full, so far.
    pub fn spans_dropped(&self) -> u64 {
        self.state().spans_dropped
    }

    /// The spans queued since the last call.
    pub fn take_spans(&self) -> Option<pb::ExportTraceServiceRequest> {
        let spans = std::mem::take(&mut self.state().spans);
        (!spans.is_empty()).then(|| pb::ExportTraceServiceRequest {
            resource_spans: vec![pb::ResourceSpans {
                resource: Some(self.resource()),
                scope_spans: vec![pb::ScopeSpans {
                    scope: Some(self.scope()),
                    spans,
                }],
            }],
        })
    }

    /// Every series as of now (cumulative since the run began), and the running step's gauges.
    pub fn metrics(&self) -> pb::ExportMetricsServiceRequest {
        let now = (self.clock)();
        let s = self.state();
        let mut hist: BTreeMap<(&str, &str), Vec<pb::HistogramDataPoint>> = BTreeMap::new();
        let mut requests = Vec::new();
        for ((model, step), series) in &s.series {
            let attrs = self.attributes(model, *step);
            let mut add = |name, unit, h: &Histogram, extra: Option<pb::KeyValue>| {
                if h.count() == 0 {
                    return;
                }
                let mut attributes = attrs.clone();
                attributes.extend(extra);
                hist.entry((name, unit))
                    .or_default()
                    .push(self.histogram_point(attributes, h, now));
            };
            for (error, h) in &series.duration {
                let extra = (!error.is_empty()).then(|| pb::KeyValue::str("error.type", error));
                add(OPERATION_DURATION, "s", h, extra);
            }
            let token = |t: &str| Some(pb::KeyValue::str("gen_ai.token.type", t));
            add(TOKEN_USAGE, "{token}", &series.input_tokens, token("input"));
            add(
                TOKEN_USAGE,
                "{token}",
                &series.output_tokens,
                token("output"),
            );
            add(TIME_TO_FIRST_CHUNK, "s", &series.first_chunk, None);
            add(TIME_PER_OUTPUT_CHUNK, "s", &series.per_chunk, None);
            add(TTFT, "s", &series.ttft, None);
            add(TPOT, "s", &series.tpot, None);
            add(SEND_LAG, "s", &series.send_lag, None);
            for (outcome, n) in &series.outcomes {
                let mut attributes = attrs.clone();
                attributes.push(pb::KeyValue::str("ladder.outcome", *outcome));
                if *outcome != "ok" {
                    attributes.push(pb::KeyValue::str("error.type", *outcome));
                }
                requests.push(pb::NumberDataPoint {
                    attributes,
                    start_time_unix_nano: self.start_ns,
                    time_unix_nano: now,
                    value: Some(pb::NumberValue::AsInt(*n as i64)),
                });
            }
        }
        let mut metrics: Vec<pb::Metric> = hist
            .into_iter()
            .map(|((name, unit), data_points)| {
                let data = pb::MetricData::Histogram(pb::Histogram {
                    data_points,
                    aggregation_temporality: pb::CUMULATIVE,
                });
                metric(name, unit, data)
            })
            .collect();
        if !requests.is_empty() {
            let data = pb::MetricData::Sum(pb::Sum {
                data_points: requests,
                aggregation_temporality: pb::CUMULATIVE,
                is_monotonic: true,
            });
            metrics.push(metric(REQUESTS, "{request}", data));
        }
        if let Some(((model, step), in_flight, load)) = &s.running {
            let attrs = self.attributes(model, *step);
            metrics.push(gauge(
                IN_FLIGHT,
                "{request}",
                attrs.clone(),
                now,
                *in_flight,
            ));
            metrics.push(gauge(STEP_LOAD, "1", attrs, now, *load));
        }
        pb::ExportMetricsServiceRequest {
            resource_metrics: vec![pb::ResourceMetrics {
                resource: Some(self.resource()),
                scope_metrics: vec![pb::ScopeMetrics {
                    scope: Some(self.scope()),
                    metrics,
                }],
            }],
        }
    }

    fn histogram_point(
        &self,
        attributes: Vec<pb::KeyValue>,
        h: &Histogram,
        now: u64,
    ) -> pb::HistogramDataPoint {
        pb::HistogramDataPoint {
            attributes,
            start_time_unix_nano: self.start_ns,
            time_unix_nano: now,
            count: h.count(),
            sum: Some(h.sum()),
            bucket_counts: h.bucket_counts().to_vec(),
            explicit_bounds: h.bounds().to_vec(),
            min: None,
            max: None,
        }
    }

    /// One client span for a request: its request id is the trace id (the `x-request-id`
    /// UUID's 16 bytes) and an attribute, so a server's traces and logs join it.
    fn span(&self, r: &RequestRecord, origin_ns: u64) -> pb::Span {
        let ms = |v: f64| (v.max(0.0) * 1e6) as u64;
        let start = origin_ns + ms(r.started_at_ms);
        let end = start + ms(r.e2e_ms.unwrap_or(0.0));
        let mut attributes = self.attributes(&r.model, r.step);
        attributes.push(pb::KeyValue::str("ladder.request_id", &r.request_id));
        if let Some(n) = r.input_tokens {
            attributes.push(pb::KeyValue::int("gen_ai.usage.input_tokens", n as i64));
        }
        if let Some(n) = r.output_tokens {
            attributes.push(pb::KeyValue::int("gen_ai.usage.output_tokens", n as i64));
        }
        if let Some(v) = r.ttft_ms {
            attributes.push(pb::KeyValue::double("ladder.ttft_ms", v));
        }
        let status = match r.error_class {
            Some(c) => {
                attributes.push(pb::KeyValue::str("error.type", c.as_str()));
                pb::Status {
                    message: r.error_message.clone().unwrap_or_default(),
                    code: pb::STATUS_ERROR,
                }
            }
            None => pb::Status {
                message: String::new(),
                code: pb::STATUS_UNSET,
            },
        };
        let trace_id = trace_id_of(&r.request_id);
        let span_id = trace_id[8..].to_vec();
        pb::Span {
            trace_id,
            span_id,
            name: format!("{} {}", self.info.operation, r.model),
            kind: pb::SPAN_KIND_CLIENT,
            start_time_unix_nano: start,
            end_time_unix_nano: end,
            attributes,
            status: Some(status),
        }
    }
}

/// A request id's 16 bytes when it is a UUID (ladder's are), else its SHA-256's first 16.
pub fn trace_id_of(request_id: &str) -> Vec<u8> {
    let hex: String = request_id.chars().filter(|c| *c != '-').collect();
    if hex.len() == 32 {
        let bytes: Option<Vec<u8>> = (0..16)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
            .collect();
        if let Some(b) = bytes.filter(|b| b.iter().any(|x| *x != 0)) {
            return b;
        }
    }
    use sha2::Digest;
    sha2::Sha256::digest(request_id.as_bytes())[..16].to_vec()
}

impl Progress for OtlpRun {
    fn step_started(&self, model: &str, step: u32, _: u32, _: &str, _: Option<u64>) {
        let mut s = self.state();
        if s.origin_ns.is_none() {
            s.origin_ns = Some((self.clock)());
        }
        s.running = Some(((model.to_string(), step), 0.0, 0.0));
    }

    fn step_load(&self, load: f64) {
        if let Some(r) = &mut self.state().running {
            r.2 = load;
        }
    }

    fn record(&self, r: &RequestRecord) {
        let span = self.traces.then(|| {
            let origin = self.state().origin_ns.unwrap_or(self.start_ns);
            self.span(r, origin)
        });
        let mut s = self.state();
        s.series
            .entry((r.model.clone(), r.step))
            .or_default()
            .add(r);
        if let Some(span) = span {
            if s.spans.len() < MAX_QUEUED_SPANS {
                s.spans.push(span);
            } else {
                s.spans_dropped += 1;
            }
        }
    }

    fn in_flight(&self, n: usize) {
        if let Some(r) = &mut self.state().running {
            r.1 = n as f64;
        }
    }

    fn step_finished(&self, _: &str, _: u32) {
        self.state().running = None;
    }
}

/// How the export is encoded: OTLP/HTTP protobuf (the default) or OTLP/HTTP JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    #[default]
    Protobuf,
    Json,
}

/// Why one export failed (the endpoint is shown; header values never are).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("OTLP export to {url}: {reason}")]
    Send { url: String, reason: String },
    #[error("OTLP export to {url}: HTTP {status}: {body}")]
    Rejected {
        url: String,
        status: u16,
        body: String,
    },
    #[error("OTLP export to {url}: the receiver rejected {rejected} of it: {message}")]
    Partial {
        url: String,
        rejected: i64,
        message: String,
    },
}

/// `/v1/metrics` and `/v1/traces` under an OTLP/HTTP base URL; a URL that already ends in one
/// of them names the base it is under.
pub fn signal_urls(endpoint: &str) -> (String, String) {
    let base = endpoint.trim_end_matches('/');
    let base = base
        .strip_suffix("/v1/metrics")
        .or_else(|| base.strip_suffix("/v1/traces"))
        .unwrap_or(base);
    (format!("{base}/v1/metrics"), format!("{base}/v1/traces"))
}

/// Sends export requests over OTLP/HTTP.
pub struct OtlpExporter {
    http: reqwest::Client,
    metrics_url: String,
    traces_url: String,
    headers: Vec<(String, String)>,
    encoding: Encoding,
}

impl OtlpExporter {
    pub fn new(
        endpoint: &str,
        headers: Vec<(String, String)>,
        encoding: Encoding,
        timeout: Duration,
    ) -> Result<Self, ExportError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| ExportError::Send {
                url: endpoint.to_string(),
                reason: e.to_string(),
            })?;
        let (metrics_url, traces_url) = signal_urls(endpoint);
        Ok(OtlpExporter {
            http,
            metrics_url,
            traces_url,
            headers,
            encoding,
        })
    }

    pub async fn metrics(&self, req: &pb::ExportMetricsServiceRequest) -> Result<(), ExportError> {
        self.send(&self.metrics_url, self.body(req)).await
    }

    pub async fn traces(&self, req: &pb::ExportTraceServiceRequest) -> Result<(), ExportError> {
        self.send(&self.traces_url, self.body(req)).await
    }

    fn body<M: prost::Message + serde::Serialize>(&self, m: &M) -> Vec<u8> {
        match self.encoding {
            Encoding::Protobuf => m.encode_to_vec(),
            Encoding::Json => serde_json::to_vec(m).unwrap_or_default(),
        }
    }

    async fn send(&self, url: &str, body: Vec<u8>) -> Result<(), ExportError> {
        let content_type = match self.encoding {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        };
        let mut req = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, content_type);
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let fail = |reason: String| ExportError::Send {
            url: url.to_string(),
            reason,
        };
        let resp = req
            .body(body)
            .send()
            .await
            .map_err(|e| fail(e.without_url().to_string()))?;
        let status = resp.status();
        let json = self.encoding == Encoding::Json;
        let bytes = resp.bytes().await.unwrap_or_default();
        if !status.is_success() {
            let body: String = String::from_utf8_lossy(&bytes)
                .trim()
                .chars()
                .filter(|c| !c.is_control())
                .take(200)
                .collect();
            return Err(ExportError::Rejected {
                url: url.to_string(),
                status: status.as_u16(),
                body,
            });
        }
        let partial = if json {
            partial_of_json(&bytes)
        } else {
            <pb::ExportResponse as prost::Message>::decode(&bytes[..])
                .ok()
                .and_then(|r| r.partial_success)
        };
        match partial {
            Some(p) if p.rejected > 0 => Err(ExportError::Partial {
                url: url.to_string(),
                rejected: p.rejected,
                message: p.error_message,
            }),
            _ => Ok(()),
        }
    }
}

/// `{"partialSuccess": {"rejectedDataPoints"|"rejectedSpans": N, "errorMessage": "…"}}`.
fn partial_of_json(bytes: &[u8]) -> Option<pb::PartialSuccess> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let p = v.get("partialSuccess")?;
    let n = |k: &str| {
        p.get(k)
            .and_then(|x| x.as_i64().or_else(|| x.as_str()?.parse().ok()))
    };
    Some(pb::PartialSuccess {
        rejected: n("rejectedDataPoints").or_else(|| n("rejectedSpans"))?,
        error_message: p
            .get("errorMessage")
            .and_then(|m| m.as_str())
            .unwrap_or_default()
            .to_string(),
    })
}

#[cfg(test)]
#[path = "otlp_tests.rs"]
mod tests;
