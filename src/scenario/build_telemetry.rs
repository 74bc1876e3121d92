//! Validation of `telemetry:`: where the run's metrics (and optionally one span per request)
//! go over OTLP/HTTP (`telemetry.otlp`). Not part of the workload: it changes neither the
//! fingerprint nor the recorded scenario, and its header values are secrets (never written).

use super::errors::Ctx;
use super::raw::RawTelemetry;
use super::{OtlpTarget, ScenarioError, Secret};
use std::time::Duration;

macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

/// The export interval when `every` is not given.
pub const DEFAULT_OTLP_EVERY: Duration = Duration::from_secs(5);

pub(super) fn build_telemetry(
    cx: &Ctx,
    raw: Option<RawTelemetry>,
) -> Result<Option<OtlpTarget>, ScenarioError> {
    let Some(o) = raw.and_then(|t| t.otlp) else {
        return Ok(None);
    };
    let Some(endpoint) = o.endpoint else {
        bail!(
            cx,
            "telemetry.otlp.endpoint",
            "missing; the OTLP/HTTP base URL of a collector, e.g. endpoint: http://127.0.0.1:4318"
        )
    };
    if let Err(why) = check_endpoint(&endpoint) {
        bail!(cx, "telemetry.otlp.endpoint", "{why}")
    }
    let every = o.every.map_or(DEFAULT_OTLP_EVERY, |d| d.0);
    if every < Duration::from_millis(100) {
        bail!(
            cx,
            "telemetry.otlp.every",
            "{} ms is too often; at least 100ms (e.g. every: 5s)",
            every.as_millis()
        )
    }
    let json = match o.protocol.as_deref() {
        None | Some("http/protobuf") => false,
        Some("http/json") => true,
        Some(other) => bail!(
            cx,
            "telemetry.otlp.protocol",
            "`{other}` is not supported; write http/protobuf (the default) or http/json"
        ),
    };
    let mut headers = Vec::new();
    for (name, value) in o.headers.unwrap_or_default() {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || reqwest::header::HeaderValue::from_str(&value).is_err()
        {
            bail!(
                cx,
                &format!("telemetry.otlp.headers.{name}"),
                "not a valid HTTP header (name, or a value with line breaks)"
            )
        }
        headers.push((name, Secret::new(value)));
    }
    Ok(Some(OtlpTarget {
        endpoint,
        headers,
        every,
        traces: o.traces.unwrap_or(false),
        json,
    }))
}

/// An OTLP endpoint is an http(s) URL without credentials (they go in `headers`).
pub fn check_endpoint(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {
            if !u.username().is_empty() || u.password().is_some() {
                return Err(
                    "has credentials in it; send them as a header instead, e.g. headers: {authorization: \"Bearer ${OTLP_TOKEN}\"}".into(),
                );
            }
            Ok(())
        }
        _ => Err(format!(
            "`{url}` is not an http(s) URL; e.g. http://127.0.0.1:4318 (OTLP/HTTP, not gRPC's 4317)"
        )),
    }
}
