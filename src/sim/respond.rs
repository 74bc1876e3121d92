//! HTTP answers in each provider's dialect: error bodies (OpenAI `{"error":{...}}`, Anthropic
//! `{"type":"error","error":{...}}`), rate-limit headers (`x-ratelimit-*` with Go-style
//! durations, or `anthropic-ratelimit-*` with RFC 3339 reset times), SSE and JSON responses.

use super::faults::FaultKind;
use super::limits::{self, BucketState, Snapshot};
use crate::model::LimitKind;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime};

/// An OpenAI-style error body.
pub fn openai_error(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// An Anthropic-style error body.
pub fn anthropic_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// A response with a JSON body.
pub fn json_response(status: u16, body: Vec<u8>, request_id: &str) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    set_request_id(h, request_id);
    r
}

/// A 200 `text/event-stream` response around `body`.
pub fn sse_response(body: Body, request_id: &str) -> Response {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    set_request_id(h, request_id);
    r
}

/// `Server-Timing` with the simulator's true queue wait and planned prefill (ms, 3 decimals), as
/// `client::server_timing` reads it (`desc="ladder-sim"` names the source).
pub fn server_timing(truth: &super::state::TruthRecord) -> HeaderMap {
    let mut h = HeaderMap::new();
    let (Some(q), Some(p)) = (truth.queue_ms, truth.prefill_ms) else {
        return h;
    };
    let v = format!("queue;dur={q:.3};desc=\"ladder-sim\", prefill;dur={p:.3}");
    if let Ok(v) = HeaderValue::from_str(&v) {
        h.insert(HeaderName::from_static("server-timing"), v);
    }
    h
}

fn set_request_id(h: &mut HeaderMap, request_id: &str) {
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert(HeaderName::from_static("x-request-id"), v);
    }
}

fn error_response(status: u16, body: Value, request_id: &str) -> Response {
    json_response(status, body.to_string().into_bytes(), request_id)
}

/// 400 for a body the server cannot use.
pub fn bad_request(anthropic: bool, message: &str, request_id: &str) -> Response {
    let body = if anthropic {
        anthropic_error("invalid_request_error", message)
    } else {
        openai_error(message, "invalid_request_error", None)
    };
    error_response(400, body, request_id)
}

/// 401 that echoes the key it got (as some real servers do), so client redaction can be tested.
pub fn unauthorized(anthropic: bool, got: &str, request_id: &str) -> Response {
    let message = format!("Incorrect API key provided: {got}");
    let body = if anthropic {
        anthropic_error("authentication_error", &message)
    } else {
        openai_error(&message, "invalid_request_error", Some("invalid_api_key"))
    };
    error_response(401, body, request_id)
}

/// 404 `model_not_found`.
pub fn model_not_found(anthropic: bool, model: &str, request_id: &str) -> Response {
    let body = if anthropic {
        anthropic_error("not_found_error", &format!("model: {model}"))
    } else {
        openai_error(
            &format!("The model `{model}` does not exist or you do not have access to it."),
            "invalid_request_error",
            Some("model_not_found"),
        )
    };
    error_response(404, body, request_id)
}

/// 404 for a path the server does not serve.
pub fn unknown_path(method: &str, path: &str) -> Response {
    let body = openai_error(
        &format!("Invalid URL ({method} {path})"),
        "invalid_request_error",
        None,
    );
    error_response(404, body, "")
}

/// The answer for a status-code fault (500, 502, 503, 529).
pub fn server_fault(anthropic: bool, kind: FaultKind, request_id: &str) -> Response {
    let status = kind.status().unwrap_or(500);
    let body = match (status, anthropic) {
        (529, _) => anthropic_error("overloaded_error", "Overloaded"),
        (_, true) => anthropic_error("api_error", "Internal server error"),
        (502, false) => openai_error("Bad gateway.", "server_error", None),
        (503, false) => openai_error(
            "The engine is currently overloaded, please try again later.",
            "server_error",
            None,
        ),
        _ => openai_error(
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
        ),
    };
    error_response(status, body, request_id)
}

/// Why a request was refused with 429.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub kind: LimitKind,
    /// The limit refused against (per minute, or requests in flight).
    pub limit: u64,
    pub retry_after: Duration,
}

/// 429 with `retry-after`, the dialect's rate-limit headers and its provider's wording: OpenAI's
/// "Rate limit reached for … on tokens per min (TPM): Limit …", Anthropic's "This request would
/// exceed the rate limit for your organization … of 30,000 input tokens per minute", an
/// aggregator's "Too many concurrent requests". An acceleration refusal names no limit, as a
/// provider's own does not: its headers still show room, which is how a client tells it.
pub fn rate_limited(
    anthropic: bool,
    refusal: &Refusal,
    snapshot: &Snapshot,
    request_id: &str,
) -> Response {
    let Refusal {
        kind,
        limit,
        retry_after,
    } = *refusal;
    let remaining = snapshot.of(kind).map_or(0, |b| b.remaining);
    let message = limit_message(anthropic, kind, limit, remaining, retry_after);
    let body = if anthropic {
        anthropic_error("rate_limit_error", &message)
    } else {
        let ty = match kind {
            LimitKind::Requests => "requests",
            LimitKind::Tokens | LimitKind::InputTokens | LimitKind::OutputTokens => "tokens",
            LimitKind::Concurrency | LimitKind::Acceleration => "rate_limit_error",
        };
        json!({"error": {"message": message, "type": ty, "param": null,
                         "code": "rate_limit_exceeded"}})
    };
    let mut r = error_response(429, body, request_id);
    let h = r.headers_mut();
    h.insert(
        header::RETRY_AFTER,
        HeaderValue::from(limits::retry_after_secs(retry_after)),
    );
    if !anthropic {
        h.insert(
            HeaderName::from_static("retry-after-ms"),
            HeaderValue::from(limits::retry_after_ms(retry_after)),
        );
    }
    rate_limit_headers(h, anthropic, snapshot);
    r
}

/// A 429's message in the provider's words, naming the limit and its number.
fn limit_message(
    anthropic: bool,
    kind: LimitKind,
    limit: u64,
    remaining: u64,
    retry_after: Duration,
) -> String {
    match kind {
        LimitKind::Concurrency => {
            return format!(
                "Too many concurrent requests: this key allows {limit} requests in flight. \
                 Please retry after a request finishes."
            )
        }
        LimitKind::Acceleration => return "Rate limit exceeded. Please try again later.".into(),
        _ => {}
    }
    if anthropic {
        format!(
            "This request would exceed the rate limit for your organization of {} {}. \
             Please reduce the prompt length or the maximum tokens requested, or try again later.",
            thousands(limit),
            kind.words()
        )
    } else {
        let acronym = match kind {
            LimitKind::Requests => "RPM",
            LimitKind::InputTokens => "ITPM",
            LimitKind::OutputTokens => "OTPM",
            _ => "TPM",
        };
        let what = kind.words().replace("per minute", "per min");
        // Worded like OpenAI's own 429s, which clients (ladder's classifier among them) read.
        format!(
            "Rate limit reached for sim-model on {what} ({acronym}): Limit {limit}, \
             Remaining {remaining}. Please try again in {}.",
            limits::go_duration(retry_after)
        )
    }
}

/// 30000 → "30,000".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Adds the limit/remaining/reset headers of every configured limit: OpenAI's
/// `x-ratelimit-*-{requests,tokens}` (an OpenAI-style endpoint has no input/output token
/// headers), Anthropic's `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-*`,
/// whose `tokens` is the most restrictive token limit.
pub fn rate_limit_headers(h: &mut HeaderMap, anthropic: bool, snapshot: &Snapshot) {
    let tightest = [
        snapshot.tokens,
        snapshot.input_tokens,
        snapshot.output_tokens,
    ]
    .into_iter()
    .flatten()
    .min_by(|a, b| share(a).total_cmp(&share(b)));
    let limits = if anthropic {
        vec![
            ("requests", snapshot.requests),
            ("tokens", tightest),
            ("input-tokens", snapshot.input_tokens),
            ("output-tokens", snapshot.output_tokens),
        ]
    } else {
        vec![("requests", snapshot.requests), ("tokens", snapshot.tokens)]
    };
    for (what, state) in limits {
        let Some(BucketState {
            limit,
            remaining,
            reset,
        }) = state
        else {
            continue;
        };
        let (names, reset_value) = if anthropic {
            let at = SystemTime::now() + reset;
            (
                [
                    format!("anthropic-ratelimit-{what}-limit"),
                    format!("anthropic-ratelimit-{what}-remaining"),
                    format!("anthropic-ratelimit-{what}-reset"),
                ],
                humantime::format_rfc3339_seconds(at).to_string(),
            )
        } else {
            (
                [
                    format!("x-ratelimit-limit-{what}"),
                    format!("x-ratelimit-remaining-{what}"),
                    format!("x-ratelimit-reset-{what}"),
                ],
                limits::go_duration(reset),
            )
        };
        let values = [limit.to_string(), remaining.to_string(), reset_value];
        for (name, value) in names.iter().zip(values) {
            if let (Ok(n), Ok(v)) = (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value),
            ) {
                h.insert(n, v);
            }
        }
    }
}

/// The share of a limit left.
fn share(b: &BucketState) -> f64 {
    b.remaining as f64 / b.limit.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_json(r: Response) -> Value {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt
            .block_on(axum::body::to_bytes(r.into_body(), usize::MAX))
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn unauthorized_echoes_key_in_both_dialects() {
        let r = unauthorized(false, "sk-wrong", "r1");
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["x-request-id"], "r1");
        let v = body_json(r);
        assert_eq!(
            v["error"]["message"],
            "Incorrect API key provided: sk-wrong"
        );
        assert_eq!(v["error"]["type"], "invalid_request_error");
        assert_eq!(v["error"]["code"], "invalid_api_key");
        let v = body_json(unauthorized(true, "sk-x", "r1"));
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "authentication_error");
    }

    #[test]
    fn server_faults_have_their_status_and_shape() {
        for (kind, status) in [
            (FaultKind::Http500, 500),
            (FaultKind::Http502, 502),
            (FaultKind::Http503, 503),
            (FaultKind::Overloaded529, 529),
        ] {
            let r = server_fault(false, kind, "r");
            assert_eq!(r.status().as_u16(), status);
            let v = body_json(r);
            if status == 529 {
                assert_eq!(v["error"]["type"], "overloaded_error");
                assert_eq!(v["type"], "error");
            } else {
                assert_eq!(v["error"]["type"], "server_error");
            }
        }
        assert_eq!(
            body_json(server_fault(true, FaultKind::Http500, "r"))["error"]["type"],
            "api_error"
        );
    }

    #[test]
    fn rate_limited_openai_headers_and_body() {
        let snap = Snapshot {
            requests: Some(BucketState {
                limit: 60,
                remaining: 59,
                reset: Duration::from_secs(1),
            }),
            tokens: Some(BucketState {
                limit: 1000,
                remaining: 10,
                reset: Duration::from_secs(360),
            }),
            ..Snapshot::default()
        };
        let refusal = Refusal {
            kind: LimitKind::Tokens,
            limit: 1000,
            retry_after: Duration::from_millis(1500),
        };
        let r = rate_limited(false, &refusal, &snap, "r");
        assert_eq!(r.status(), 429);
        let h = r.headers();
        assert_eq!(h["retry-after"], "2");
        assert_eq!(h["retry-after-ms"], "1500");
        assert_eq!(h["x-ratelimit-limit-tokens"], "1000");
        assert_eq!(h["x-ratelimit-remaining-tokens"], "10");
        assert_eq!(h["x-ratelimit-reset-tokens"], "6m0s");
        assert_eq!(h["x-ratelimit-limit-requests"], "60");
        assert_eq!(h["x-ratelimit-reset-requests"], "1s");
        let v = body_json(r);
        assert_eq!(v["error"]["type"], "tokens");
        assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    }

    #[test]
    fn rate_limited_anthropic_headers_and_body() {
        let snap = Snapshot {
            requests: Some(BucketState {
                limit: 5,
                remaining: 0,
                reset: Duration::from_secs(12),
            }),
            ..Snapshot::default()
        };
        let refusal = Refusal {
            kind: LimitKind::Requests,
            limit: 5,
            retry_after: Duration::from_secs(12),
        };
        let r = rate_limited(true, &refusal, &snap, "r");
        let h = r.headers();
        assert_eq!(h["retry-after"], "12");
        assert!(h.get("retry-after-ms").is_none());
        assert!(h.get("x-ratelimit-limit-requests").is_none());
        assert_eq!(h["anthropic-ratelimit-requests-limit"], "5");
        assert_eq!(h["anthropic-ratelimit-requests-remaining"], "0");
        let reset = h["anthropic-ratelimit-requests-reset"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(humantime::parse_rfc3339(&reset).is_ok(), "{reset}");
        assert!(h.get("anthropic-ratelimit-tokens-limit").is_none());
        let v = body_json(r);
        assert_eq!(v["error"]["type"], "rate_limit_error");
    }
}
