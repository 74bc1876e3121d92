//! The part of the OpenTelemetry protocol (OTLP 1.x) that `--otlp` sends: the metrics and trace
//! export requests and their responses, declared with prost's derive (the field numbers of
//! `opentelemetry/proto/{collector,metrics,trace,common,resource}/v1/*.proto`) and with serde
//! for OTLP/JSON (lowerCamelCase names, enums as numbers, 64-bit integers as decimal strings,
//! trace and span ids as hex, a oneof as the field of its variant).
//!
//! Why not the `opentelemetry-proto` crate: it generates every OTLP message (logs, profiles,
//! gRPC services) through tonic and the OpenTelemetry SDK crates, for the ~20 messages used
//! here, and ties the prost version to its own. These definitions are checked against the
//! official ones by `make compat` (a receiver decoding with PyPI's `opentelemetry-proto`).

use serde::{Serialize, Serializer};

fn u64_str<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
fn i64_str<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
fn u64s_str<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|n| n.to_string()))
}
fn hex<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&v.iter().map(|b| format!("{b:02x}")).collect::<String>())
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// `collector/metrics/v1`: the body of `POST /v1/metrics`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportMetricsServiceRequest {
    #[prost(message, repeated, tag = "1")]
    pub resource_metrics: Vec<ResourceMetrics>,
}

/// The answer to an export: `partial_success` when the receiver dropped some of it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportResponse {
    #[prost(message, optional, tag = "1")]
    pub partial_success: Option<PartialSuccess>,
}

/// `ExportMetricsPartialSuccess` / `ExportTracePartialSuccess` (same shape).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PartialSuccess {
    /// Rejected data points (metrics) or spans (traces).
    #[prost(int64, tag = "1")]
    pub rejected: i64,
    #[prost(string, tag = "2")]
    pub error_message: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetrics {
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub scope_metrics: Vec<ScopeMetrics>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeMetrics {
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub metrics: Vec<Metric>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstrumentationScope {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metric {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(string, tag = "3")]
    pub unit: String,
    #[prost(oneof = "MetricData", tags = "5, 7, 9")]
    #[serde(flatten)]
    pub data: Option<MetricData>,
}

#[derive(Clone, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MetricData {
    #[prost(message, tag = "5")]
    Gauge(Gauge),
    #[prost(message, tag = "7")]
    Sum(Sum),
    #[prost(message, tag = "9")]
    Histogram(Histogram),
}

/// `AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE`: every export carries the
/// totals since the run started.
pub const CUMULATIVE: i32 = 2;

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gauge {
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<NumberDataPoint>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sum {
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<NumberDataPoint>,
    #[prost(int32, tag = "2")]
    pub aggregation_temporality: i32,
    #[prost(bool, tag = "3")]
    pub is_monotonic: bool,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Histogram {
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<HistogramDataPoint>,
    #[prost(int32, tag = "2")]
    pub aggregation_temporality: i32,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberDataPoint {
    #[prost(message, repeated, tag = "7")]
    pub attributes: Vec<KeyValue>,
    #[prost(fixed64, tag = "2")]
    #[serde(serialize_with = "u64_str", skip_serializing_if = "is_zero")]
    pub start_time_unix_nano: u64,
    #[prost(fixed64, tag = "3")]
    #[serde(serialize_with = "u64_str")]
    pub time_unix_nano: u64,
    #[prost(oneof = "NumberValue", tags = "4, 6")]
    #[serde(flatten)]
    pub value: Option<NumberValue>,
}

#[derive(Clone, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum NumberValue {
    #[prost(double, tag = "4")]
    AsDouble(f64),
    #[prost(sfixed64, tag = "6")]
    #[serde(serialize_with = "i64_str")]
    AsInt(i64),
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistogramDataPoint {
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    #[prost(fixed64, tag = "2")]
    #[serde(serialize_with = "u64_str")]
    pub start_time_unix_nano: u64,
    #[prost(fixed64, tag = "3")]
    #[serde(serialize_with = "u64_str")]
    pub time_unix_nano: u64,
    #[prost(fixed64, tag = "4")]
    #[serde(serialize_with = "u64_str")]
    pub count: u64,
    #[prost(double, optional, tag = "5")]
    pub sum: Option<f64>,
    /// One more than `explicit_bounds` (the last is the overflow bucket); not cumulative.
    #[prost(fixed64, repeated, tag = "6")]
    #[serde(serialize_with = "u64s_str")]
    pub bucket_counts: Vec<u64>,
    #[prost(double, repeated, tag = "7")]
    pub explicit_bounds: Vec<f64>,
    #[prost(double, optional, tag = "11")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[prost(double, optional, tag = "12")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValue {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnyValue {
    #[prost(oneof = "Value", tags = "1, 3, 4")]
    #[serde(flatten)]
    pub value: Option<Value>,
}

#[derive(Clone, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Value {
    #[prost(string, tag = "1")]
    StringValue(String),
    #[prost(int64, tag = "3")]
    #[serde(serialize_with = "i64_str")]
    IntValue(i64),
    #[prost(double, tag = "4")]
    DoubleValue(f64),
}

impl KeyValue {
    pub fn str(key: &str, value: impl Into<String>) -> Self {
        KeyValue {
            key: key.to_string(),
            value: Some(AnyValue {
                value: Some(Value::StringValue(value.into())),
            }),
        }
    }
    pub fn int(key: &str, value: i64) -> Self {
        KeyValue {
            key: key.to_string(),
            value: Some(AnyValue {
                value: Some(Value::IntValue(value)),
            }),
        }
    }
    pub fn double(key: &str, value: f64) -> Self {
        KeyValue {
            key: key.to_string(),
            value: Some(AnyValue {
                value: Some(Value::DoubleValue(value)),
            }),
        }
    }
}

/// `collector/trace/v1`: the body of `POST /v1/traces`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportTraceServiceRequest {
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpans {
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeSpans {
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
}

/// `Span.SpanKind.SPAN_KIND_CLIENT`.
pub const SPAN_KIND_CLIENT: i32 = 3;
/// `Status.StatusCode`: unset (success) and error.
pub const STATUS_UNSET: i32 = 0;
pub const STATUS_ERROR: i32 = 2;

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    #[prost(bytes = "vec", tag = "1")]
    #[serde(serialize_with = "hex")]
    pub trace_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    #[serde(serialize_with = "hex")]
    pub span_id: Vec<u8>,
    #[prost(string, tag = "5")]
    pub name: String,
    #[prost(int32, tag = "6")]
    pub kind: i32,
    #[prost(fixed64, tag = "7")]
    #[serde(serialize_with = "u64_str")]
    pub start_time_unix_nano: u64,
    #[prost(fixed64, tag = "8")]
    #[serde(serialize_with = "u64_str")]
    pub end_time_unix_nano: u64,
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    #[prost(message, optional, tag = "15")]
    pub status: Option<Status>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(int32, tag = "3")]
    pub code: i32,
}
