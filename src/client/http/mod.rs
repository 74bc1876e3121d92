//! One HTTP attempt against a streaming endpoint: build the request, check status and content
//! type, read the body where the bytes arrive (timestamps on a monotonic clock), enforce the
//! timeouts and size limits, and turn everything that can go wrong into an error class.

mod failure;
mod stream;

pub use failure::{error_chain, out_of_file_descriptors, CLIENT_CERT_WANTED};

use super::connect_timer::ConnectLog;
use super::dialect::{self, EventReader};
use super::error_body;
use super::ratelimit::{headroom, is_quota_error, parse_rate_limit, RateLimitInfo};
use super::server_timing::{self, ServerTimings};
use super::timing::TimingSummary;
use crate::dialect::Api;
use crate::model::ErrorClass;
use crate::scenario::{Auth, RequestSpec, Target, Timeouts};
use bytes::Bytes;
use failure::{
    carries_error, describe_non_json_body, describe_redirect, read_small_body, send_error,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// Largest response body read from a streaming answer before it is cut as a `protocol` error.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;
/// Largest SSE line accepted.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;
/// Largest error body read (non-2xx answers).
pub(super) const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// Everything needed to send requests to one target, prepared once per run.
#[derive(Debug, Clone)]
pub struct PreparedTarget {
    pub api: Api,
    /// Parsed once here: a `&str` would be parsed (and its host IDNA-mapped) for every request.
    pub url: reqwest::Url,
    pub headers: HeaderMap,
    /// Where each request's id goes (`target.request_id_header`); `None` sends none.
    pub request_id_header: Option<HeaderName>,
    pub timeouts: Timeouts,
    pub max_line_bytes: usize,
    pub max_response_bytes: usize,
    /// The answer is asked for as an event stream (`request.stream`, default); `false`: as one
    /// JSON body, read whole (no first token to time, and no first-token deadline).
    pub stream: bool,
    /// Texts per request (`request.batch`): an embeddings answer must hold one vector each.
    pub batch: u32,
    /// The answers' tool calls are kept (`client::calls`; an agent's next turn sends them
    /// back): off for every other run, whose streams then never read a call's text.
    pub keep_calls: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("target.headers: `{0}` is not a valid HTTP header name")]
    HeaderName(String),
    #[error("target.headers: the value of `{0}` is not a valid HTTP header value (no newlines or control characters)")]
    HeaderValue(String),
    #[error("target.request_id_header: `{0}` is not a valid HTTP header name")]
    RequestIdHeader(String),
    #[error("target.base_url: not a valid URL once the API path is added; it must look like http(s)://host[:port][/path]")]
    Url,
    #[error("target.api_key: the key contains characters that cannot be sent in an HTTP header (a newline or a control character?); check the variable it comes from")]
    KeyValue,
}

impl PreparedTarget {
    pub fn new(target: &Target, base_url: &str) -> Result<Self, PrepareError> {
        let base = base_url.trim_end_matches('/');
        let spec = target.api.spec();
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        if let Some(key) = &target.api_key {
            let (name, value) = match target.auth {
                Auth::XApiKey => ("x-api-key", key.expose().to_string()),
                Auth::ApiKey => ("api-key", key.expose().to_string()),
                Auth::Bearer => ("authorization", format!("Bearer {}", key.expose())),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| PrepareError::KeyValue)?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static(name), value);
        }
        for (name, value) in spec.fixed_headers {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        for h in &target.headers {
            let name = HeaderName::from_bytes(h.name.as_bytes())
                .map_err(|_| PrepareError::HeaderName(h.name.clone()))?;
            let mut value = HeaderValue::from_str(h.value.expose())
                .map_err(|_| PrepareError::HeaderValue(h.name.clone()))?;
            if h.secret {
                value.set_sensitive(true);
            }
            headers.insert(name, value);
        }
        let request_id_header = match &target.request_id_header {
            Some(n) => Some(
                HeaderName::from_bytes(n.as_bytes())
                    .map_err(|_| PrepareError::RequestIdHeader(n.clone()))?,
            ),
            None => None,
        };
        Ok(PreparedTarget {
            api: target.api,
            url: reqwest::Url::parse(&format!("{base}{}{}", spec.path, api_version_query(target)))
                .map_err(|_| PrepareError::Url)?,
            headers,
            request_id_header,
            timeouts: target.timeouts.clone(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            stream: true,
            batch: 1,
            keep_calls: false,
        }
        // An embeddings answer is never streamed.
        .streaming(!target.api.embeds()))
    }

    /// The same target with `batch` texts per request (`request.batch`).
    pub fn batching(mut self, batch: u32) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// The same target keeping its answers' tool calls (an agent run, `load.agent`) or not.
    pub fn keeping_calls(mut self, keep: bool) -> Self {
        self.keep_calls = keep;
        self
    }

    /// The same target with its answers asked for as a stream or as one JSON body
    /// (`request.stream`): the `Accept` header follows.
    pub fn streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        let accept = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        self.headers
            .insert(reqwest::header::ACCEPT, HeaderValue::from_static(accept));
        self
    }

    /// The JSON body for one model, serialized once and reused for every request.
    pub fn body_for(&self, model: &str, req: &RequestSpec) -> Bytes {
        let value = (dialect::of(self.api).body)(model, req);
        Bytes::from(serde_json::to_vec(&value).unwrap_or_default())
    }

    /// A reader for the events of one stream of this target.
    pub(super) fn events(&self) -> EventReader {
        (dialect::of(self.api).reader)().expecting(self.batch)
    }
}

/// The real network: a reqwest client and one prepared target.
pub struct HttpBackend {
    pub pool: super::pool::Pool,
    pub target: PreparedTarget,
}

impl super::Backend for HttpBackend {
    fn body_for(&self, model: &str, request: &RequestSpec) -> Bytes {
        self.target.body_for(model, request)
    }

    /// One request through the pool; lost on a connection that closed before any response
    /// byte (a keep-alive connection the server had closed: it never saw the request), it is
    /// sent again once on a new connection, and the attempt says so.
    async fn send(&self, body: Bytes, request_id: &str) -> Attempt {
        let first = send_once(
            &self.pool.client(),
            self.pool.connects(),
            &self.target,
            body.clone(),
            request_id,
        )
        .await;
        let attempt = if first.closed_before_response {
            let mut again = send_once(
                self.pool.fresh(),
                self.pool.connects(),
                &self.target,
                body,
                request_id,
            )
            .await;
            again.resent_stale = true;
            if let Some(m) = &mut again.error_message {
                *m = format!("sent again on a new connection after a keep-alive connection closed before answering: {m}");
            }
            again
        } else {
            first
        };
        if let Some(t) = attempt.keep_alive {
            self.pool.server_keeps_idle(t);
        }
        attempt
    }
}

/// `?api-version=V` when the target has one (Azure OpenAI), else nothing.
pub fn api_version_query(target: &Target) -> String {
    target
        .api_version
        .as_deref()
        .map(|v| format!("?api-version={v}"))
        .unwrap_or_default()
}

/// The result of one attempt. Times are ms since `sent_at`.
#[derive(Debug, Clone, Default)]
pub struct Attempt {
    /// The request's `start` (docs/metrics.md): when the connection task took the body to write it,
    /// after connecting and pool checkout; when that moment is unknown (the request was never
    /// written), just before the request was handed to the HTTP client.
    pub sent_at: Option<Instant>,
    pub error_class: Option<ErrorClass>,
    pub http_status: Option<u16>,
    pub error_type: Option<String>,
    /// Not yet redacted: the caller redacts before storing.
    pub error_message: Option<String>,
    pub timing: Option<TimingSummary>,
    /// The answer's tool calls, when the target keeps them (`PreparedTarget::keep_calls`) and
    /// the answer ended well.
    pub calls: Vec<crate::model::ToolCall>,
    /// Time until the attempt ended (success or failure), ms.
    pub elapsed_ms: f64,
    pub rate_limit: RateLimitInfo,
    /// The connection closed (or was reset) before any response byte: on a reused keep-alive
    /// connection, the server had closed it and never saw the request.
    pub closed_before_response: bool,
    /// This attempt is the resend, on a new connection, of one lost that way.
    pub resent_stale: bool,
    /// How long the server keeps idle connections (`Keep-Alive: timeout=N`), when it says.
    pub keep_alive: Option<Duration>,
    /// DNS + TCP + TLS of the new connection this attempt waited for; `None` when it reused one.
    pub connect_ms: Option<f64>,
    /// `sent_at` -> response headers read.
    pub headers_ms: Option<f64>,
    /// What the server said about its own work on this request (headers, then the body).
    pub server: ServerTimings,
    /// The id the server or a gateway gave the request (`server_timing::request_id`).
    pub server_request_id: Option<String>,
    /// The id the server gave a finished answer that a later request can refer to (the
    /// Responses API's `resp_…`: a chained session's next turn).
    pub response_id: Option<String>,
}

impl Attempt {
    pub(super) fn failed(class: ErrorClass, message: impl Into<String>) -> Self {
        Attempt {
            error_class: Some(class),
            error_message: Some(message.into()),
            ..Default::default()
        }
    }
}

pub(super) fn ms_since(start: Instant, t: Instant) -> f64 {
    t.saturating_duration_since(start).as_secs_f64() * 1000.0
}

/// Sends one request and reads the answer to its end.
pub async fn send_once(
    http: &reqwest::Client,
    connects: &ConnectLog,
    target: &PreparedTarget,
    body: Bytes,
    request_id: &str,
) -> Attempt {
    let stamp = Arc::new(OnceLock::new());
    let mut builder = http
        .post(target.url.clone())
        .headers(target.headers.clone());
    if let Some(name) = &target.request_id_header {
        builder = builder.header(name.clone(), request_id);
    }
    let builder = builder
        .header(CONTENT_LENGTH, body.len())
        .body(reqwest::Body::wrap_stream(StampedBody {
            body: Some(body),
            stamp: Arc::clone(&stamp),
        }));
    let handed_over = Instant::now();
    let mut attempt = send_and_read(builder, target, handed_over, &stamp, connects).await;
    let sent_at = stamp.get().copied().unwrap_or(handed_over);
    if attempt.elapsed_ms == 0.0 {
        attempt.elapsed_ms = ms_since(sent_at, Instant::now());
    }
    attempt.sent_at = Some(sent_at);
    attempt
}

/// The request body as a one-chunk stream that notes when the connection task first asks for it:
/// hyper buffers the head, takes the body and flushes both in the same poll, so this is the
/// moment just before the request is written, with connection setup, pool checkout and the
/// hand-over to the connection task already behind it. (The Content-Length header keeps the
/// body length-delimited, as a plain body would be.)
struct StampedBody {
    body: Option<Bytes>,
    stamp: Arc<OnceLock<Instant>>,
}

impl futures_util::Stream for StampedBody {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let body = self.body.take();
        if body.is_some() {
            let _ = self.stamp.set(Instant::now());
        }
        Poll::Ready(body.map(Ok))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::from(self.body.is_some());
        (n, Some(n))
    }
}

async fn send_and_read(
    builder: reqwest::RequestBuilder,
    target: &PreparedTarget,
    start: Instant,
    sent_at: &OnceLock<Instant>,
    connects: &ConnectLog,
) -> Attempt {
    let handed_over = start;
    let timeouts = &target.timeouts;
    // A whole answer's headers come when it is generated: only the total deadline applies.
    let first_token = if target.stream {
        timeouts.first_token
    } else {
        timeouts.total
    };
    let header_deadline = (start + first_token).min(start + timeouts.total);
    let response = match tokio::time::timeout_at(header_deadline, builder.send()).await {
        Err(_) => {
            let class = if target.stream && timeouts.first_token <= timeouts.total {
                ErrorClass::TimeoutFirstToken
            } else {
                ErrorClass::TimeoutTotal
            };
            return Attempt::failed(class, "no response headers before the timeout");
        }
        Ok(Err(e)) => return send_error(&e),
        Ok(Ok(r)) => r,
    };
    let headers_at = Instant::now();
    // From here on every figure counts from the write (an answer implies the request was taken).
    let start = sent_at.get().copied().unwrap_or(start);
    let connect_ms = connects.claim(response.extensions(), handed_over);
    let headers_ms = Some(ms_since(start, headers_at));
    let mut attempt = answered(response, target, start).await;
    attempt.connect_ms = connect_ms;
    attempt.headers_ms = headers_ms;
    attempt
}

/// Reads an answer whose headers arrived (status, content type, body), from the write at `start`.
async fn answered(response: reqwest::Response, target: &PreparedTarget, start: Instant) -> Attempt {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let keep_alive = headers
        .get("keep-alive")
        .and_then(|v| v.to_str().ok())
        .and_then(super::pool::keep_alive_timeout);
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str(), v)))
        .collect();
    let server_request_id = server_timing::request_id(&pairs).map(str::to_string);
    let mut attempt = answer(response, target, start, status, headers).await;
    attempt.keep_alive = keep_alive;
    attempt.server_request_id = server_request_id;
    attempt
}

/// The answer after its headers: an error status, a body that is not an event stream, or the
/// stream itself.
async fn answer(
    response: reqwest::Response,
    target: &PreparedTarget,
    start: Instant,
    status: u16,
    headers: HeaderMap,
) -> Attempt {
    let timeouts = &target.timeouts;
    let header_pairs: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str(), v)))
        .collect();
    let server = server_timing::from_headers(header_pairs.iter().copied());
    let headroom = headroom(&header_pairs);
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();

    if !(200..300).contains(&status) {
        // When the answer arrived by the wall clock: a `Retry-After` date from a server that
        // sends no `Date` header is measured against it.
        let received = SystemTime::now();
        let body = read_small_body(response, start + timeouts.total).await;
        let err = error_body::parse_error_body(&body);
        let rate_limit = parse_rate_limit(&header_pairs, err.as_ref(), received);
        let mut class = ErrorClass::from_status(status);
        if status == 429 && err.as_ref().is_some_and(is_quota_error) {
            class = ErrorClass::Quota;
        }
        let message = match &err {
            Some(e) => e.message.clone(),
            None if (300..400).contains(&status) => describe_redirect(status, &headers),
            None => describe_non_json_body(&body, &content_type),
        };
        return Attempt {
            error_class: Some(class),
            http_status: Some(status),
            error_type: err.and_then(|e| e.error_type),
            error_message: Some(message),
            rate_limit,
            ..Default::default()
        };
    }

    if !target.stream {
        let attempt = stream::read_whole(response, target, start, status, &content_type).await;
        return with_server(attempt, server, headroom);
    }

    if !content_type.starts_with("text/event-stream") {
        let body = read_small_body(response, start + timeouts.total).await;
        return not_a_stream(status, &body, &content_type);
    }

    let attempt = stream::read_stream(response, target, start, status).await;
    with_server(attempt, server, headroom)
}

/// A streamed request answered with a body that is not an event stream: an in-band error when
/// the body says it is one, else a protocol error that says what came instead.
fn not_a_stream(status: u16, body: &[u8], content_type: &str) -> Attempt {
    // Only a body that says it is an error is an in-band error; a whole completion sent as
    // plain JSON (Anthropic's `{"type": "message", ...}` included) is a protocol error.
    if let Some(err) = carries_error(body)
        .then(|| error_body::parse_error_body(body))
        .flatten()
    {
        return Attempt {
            error_class: Some(ErrorClass::StreamError),
            http_status: Some(status),
            error_type: err.error_type,
            error_message: Some(err.message),
            ..Default::default()
        };
    }
    let shown = if content_type.is_empty() {
        "no content type".to_string()
    } else {
        format!("content type `{content_type}`")
    };
    // An HTML page gets the diagnosis of every HTML answer (`ladder check` says the same).
    let why = if content_type.contains("html") || body.trim_ascii_start().starts_with(b"<") {
        describe_non_json_body(body, content_type)
    } else {
        "does the server support `stream: true`?".to_string()
    };
    Attempt {
        error_class: Some(ErrorClass::Protocol),
        http_status: Some(status),
        error_message: Some(format!(
            "expected an event stream (text/event-stream) but got {shown}; {why}"
        )),
        ..Default::default()
    }
}

/// The server's timings: its headers', else what its body said; and the rate-limit headroom
/// its headers reported.
fn with_server(mut attempt: Attempt, server: ServerTimings, headroom: Option<f64>) -> Attempt {
    attempt.rate_limit.headroom = headroom;
    let from_body = attempt
        .timing
        .as_ref()
        .map(|t| t.server)
        .unwrap_or_default();
    attempt.server = server.or_from(from_body);
    attempt
}

#[cfg(test)]
mod tests {
    use super::{PrepareError, PreparedTarget};

    fn target() -> crate::scenario::Target {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.txt"), "hi").unwrap();
        let yaml = "name: t\ntarget:\n  api: openai-chat\n  base_url: http://127.0.0.1:9/v1\n  \
            models: [m]\nrequest:\n  prompt_file: p.txt\n  max_tokens: 4\nload:\n  ladder: [1]\n";
        crate::scenario::load_str(yaml, &dir.path().join("s.yaml"), &|_| None)
            .unwrap()
            .target
    }

    #[test]
    fn the_url_is_parsed_once_with_its_path_and_a_bad_one_names_the_field_not_the_value() {
        let t = target();
        let prepared = PreparedTarget::new(&t, "http://127.0.0.1:9/v1/").unwrap();
        assert_eq!(
            prepared.url.as_str(),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        let err = PreparedTarget::new(&t, "http://user:s3cret@[::1/v1").unwrap_err();
        assert!(matches!(err, PrepareError::Url));
        let msg = err.to_string();
        assert!(
            msg.starts_with("target.base_url:") && !msg.contains("s3cret"),
            "{msg}"
        );
    }
}
