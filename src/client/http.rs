//! One HTTP attempt against a streaming endpoint: build the request, check status and content
//! type, read the body where the bytes arrive (timestamps on a monotonic clock), enforce the
//! timeouts and size limits, and turn everything that can go wrong into an error class.

use super::chunk::{ChunkInfo, InBandError, MalformedEvent};
use super::connect_timer::{ConnectLog, ConnectTimerLayer};
use super::ratelimit::{is_quota_error, parse_rate_limit, RateLimitInfo};
use super::server_timing::{self, ServerTimings};
use super::sse::{SseEvent, SseParser};
use super::timing::{StreamTiming, TimingSummary};
use super::{anthropic, error_body, openai};
use crate::model::ErrorClass;
use crate::scenario::{Api, Auth, RequestSpec, Target, Timeouts};
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

/// Largest response body read from a streaming answer before it is cut as a `protocol` error.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;
/// Largest SSE line accepted.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;
/// Largest error body read (non-2xx answers).
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// Everything needed to send requests to one target, prepared once per run.
#[derive(Debug, Clone)]
pub struct PreparedTarget {
    pub api: Api,
    pub url: String,
    pub headers: HeaderMap,
    /// Where each request's id goes (`target.request_id_header`); `None` sends none.
    pub request_id_header: Option<HeaderName>,
    pub timeouts: Timeouts,
    pub max_line_bytes: usize,
    pub max_response_bytes: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("target.headers: `{0}` is not a valid HTTP header name")]
    HeaderName(String),
    #[error("target.headers: the value of `{0}` is not a valid HTTP header value (no newlines or control characters)")]
    HeaderValue(String),
    #[error("target.request_id_header: `{0}` is not a valid HTTP header name")]
    RequestIdHeader(String),
    #[error("target.api_key: the key contains characters that cannot be sent in an HTTP header (a newline or a control character?); check the variable it comes from")]
    KeyValue,
}

impl PreparedTarget {
    pub fn new(target: &Target, base_url: &str) -> Result<Self, PrepareError> {
        let base = base_url.trim_end_matches('/');
        let path = match target.api {
            Api::OpenAiChat => "/chat/completions",
            Api::OpenAiCompletions => "/completions",
            Api::AnthropicMessages => "/messages",
        };
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
        if target.api == Api::AnthropicMessages {
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static("2023-06-01"),
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
            url: format!("{base}{path}{}", api_version_query(target)),
            headers,
            request_id_header,
            timeouts: target.timeouts.clone(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        })
    }

    /// The JSON body for one model, serialized once and reused for every request.
    pub fn body_for(&self, model: &str, req: &RequestSpec) -> Bytes {
        let value = match self.api {
            Api::OpenAiChat => openai::chat_body(model, req),
            Api::OpenAiCompletions => openai::completions_body(model, req),
            Api::AnthropicMessages => anthropic::messages_body(model, req),
        };
        Bytes::from(serde_json::to_vec(&value).unwrap_or_default())
    }

    fn interpret(&self, ev: &SseEvent) -> Result<ChunkInfo, MalformedEvent> {
        match self.api {
            Api::OpenAiChat => openai::interpret_chat(ev),
            Api::OpenAiCompletions => openai::interpret_completions(ev),
            Api::AnthropicMessages => anthropic::interpret_messages(ev),
        }
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
}

impl Attempt {
    fn failed(class: ErrorClass, message: impl Into<String>) -> Self {
        Attempt {
            error_class: Some(class),
            error_message: Some(message.into()),
            ..Default::default()
        }
    }
}

fn ms_since(start: Instant, t: Instant) -> f64 {
    t.saturating_duration_since(start).as_secs_f64() * 1000.0
}

/// Which deadline is next, so a timeout can be named.
fn next_deadline(
    start: Instant,
    timeouts: &Timeouts,
    first_token_seen: bool,
    last_event: Instant,
) -> (Instant, ErrorClass) {
    let total = (start + timeouts.total, ErrorClass::TimeoutTotal);
    let phase = if first_token_seen {
        (last_event + timeouts.idle, ErrorClass::TimeoutIdle)
    } else {
        // Before the first token both apply: first-token and idle (a server that sends
        // keep-alive comments is not idle).
        let ft = start + timeouts.first_token;
        (ft, ErrorClass::TimeoutFirstToken)
    };
    if phase.0 < total.0 {
        phase
    } else {
        total
    }
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
    let mut builder = http.post(&target.url).headers(target.headers.clone());
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
    let header_deadline = (start + timeouts.first_token).min(start + timeouts.total);
    let response = match tokio::time::timeout_at(header_deadline, builder.send()).await {
        Err(_) => {
            let class = if timeouts.first_token <= timeouts.total {
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
    let mut attempt = answer(response, target, start, status, headers).await;
    attempt.keep_alive = keep_alive;
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
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();

    if !(200..300).contains(&status) {
        let body = read_small_body(response, start + timeouts.total).await;
        let err = error_body::parse_error_body(&body);
        let rate_limit = parse_rate_limit(&header_pairs, err.as_ref());
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

    if !content_type.starts_with("text/event-stream") {
        let body = read_small_body(response, start + timeouts.total).await;
        // Only a body that says it is an error is an in-band error; a whole completion sent as
        // plain JSON (Anthropic's `{"type": "message", ...}` included) is a protocol error.
        if let Some(err) = carries_error(&body)
            .then(|| error_body::parse_error_body(&body))
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
            describe_non_json_body(&body, &content_type)
        } else {
            "does the server support `stream: true`?".to_string()
        };
        return Attempt {
            error_class: Some(ErrorClass::Protocol),
            http_status: Some(status),
            error_message: Some(format!(
                "expected an event stream (text/event-stream) but got {shown}; {why}"
            )),
            ..Default::default()
        };
    }

    let mut attempt = read_stream(response, target, start, status).await;
    let from_body = attempt
        .timing
        .as_ref()
        .map(|t| t.server)
        .unwrap_or_default();
    attempt.server = server.or_from(from_body);
    attempt
}

async fn read_stream(
    mut response: reqwest::Response,
    target: &PreparedTarget,
    start: Instant,
    status: u16,
) -> Attempt {
    let timeouts = &target.timeouts;
    let mut parser = SseParser::with_max_line_bytes(target.max_line_bytes);
    let mut timing = StreamTiming::new();
    let mut events: Vec<SseEvent> = Vec::with_capacity(8);
    let mut received = 0usize;
    let mut last_event = start;

    let fail = |class: ErrorClass, msg: String, timing: &StreamTiming, at: Instant| Attempt {
        error_class: Some(class),
        http_status: Some(status),
        error_message: Some(msg),
        timing: Some(timing.finish(ms_since(start, at))),
        elapsed_ms: ms_since(start, at),
        ..Default::default()
    };

    // One timer for the whole stream, moved only when a deadline comes sooner or when it fires
    // for a deadline that has moved on; not created and cancelled around every read (the idle
    // deadline moves with every event, and timer-wheel churn is per-token CPU).
    let (mut armed, _) = next_deadline(start, timeouts, timing.has_token(), last_event);
    let sleep = tokio::time::sleep_until(armed);
    tokio::pin!(sleep);
    loop {
        let (deadline, deadline_class) =
            next_deadline(start, timeouts, timing.has_token(), last_event);
        if deadline < armed {
            armed = deadline;
            sleep.as_mut().reset(armed);
        }
        let read = tokio::select! {
            biased;
            read = response.chunk() => Ok(read),
            () = &mut sleep => Err(()),
        };
        let chunk = match read {
            Err(()) if Instant::now() < deadline => {
                armed = deadline;
                sleep.as_mut().reset(armed);
                continue;
            }
            Err(()) => {
                let what = match deadline_class {
                    ErrorClass::TimeoutFirstToken => "no token before the first-token timeout",
                    ErrorClass::TimeoutIdle => "no event within the idle timeout",
                    _ => "the stream did not end within the total timeout",
                };
                return fail(deadline_class, what.into(), &timing, Instant::now());
            }
            Ok(Err(e)) => {
                let now = Instant::now();
                return fail(
                    ErrorClass::Disconnect,
                    format!("stream broken: {}", error_chain(&e)),
                    &timing,
                    now,
                );
            }
            Ok(Ok(None)) => {
                let now = Instant::now();
                // End of input before an end marker (an end marker returns below as soon as it
                // is read; `finish` never completes an event, per the event-stream rules).
                parser.finish(&mut events);
                return fail(
                    ErrorClass::Disconnect,
                    "the stream ended without an end marker ([DONE] / message_stop)".into(),
                    &timing,
                    now,
                );
            }
            Ok(Ok(Some(bytes))) => bytes,
        };
        let now = Instant::now();
        received += chunk.len();
        if received > target.max_response_bytes {
            return fail(
                ErrorClass::Protocol,
                format!(
                    "response larger than {} bytes; stopped reading",
                    target.max_response_bytes
                ),
                &timing,
                now,
            );
        }
        if let Err(e) = parser.feed(&chunk, &mut events) {
            return fail(ErrorClass::Protocol, e.to_string(), &timing, now);
        }
        if !events.is_empty() {
            last_event = now;
        }
        let done = match process_events(&mut events, target, &mut timing, ms_since(start, now)) {
            Ok(done) => done,
            Err(a) => return a.with_status(status),
        };
        if done {
            let summary = timing.finish(ms_since(start, now));
            return finish_ok(summary, status);
        }
    }
}

/// Feeds parsed events (all read at `at` ms) to the timing accumulator. `Ok(true)` once the end
/// marker arrived; `Err` with the finished attempt on an in-band error or a malformed event.
fn process_events(
    events: &mut Vec<SseEvent>,
    target: &PreparedTarget,
    timing: &mut StreamTiming,
    at: f64,
) -> Result<bool, Box<Attempt>> {
    for ev in events.drain(..) {
        match target.interpret(&ev) {
            Ok(info) => {
                timing.on_chunk(at, &info);
                if let Some(err) = &info.error {
                    return Err(Box::new(in_band_failure(err, timing.finish(at))));
                }
                if info.done {
                    return Ok(true);
                }
            }
            Err(MalformedEvent(msg)) => {
                return Err(Box::new(Attempt {
                    error_class: Some(ErrorClass::Protocol),
                    error_message: Some(msg),
                    timing: Some(timing.finish(at)),
                    elapsed_ms: at,
                    ..Default::default()
                }));
            }
        }
    }
    Ok(false)
}

fn in_band_failure(err: &InBandError, summary: TimingSummary) -> Attempt {
    let elapsed = summary.e2e_ms;
    Attempt {
        error_class: Some(ErrorClass::StreamError),
        error_type: err.error_type.clone(),
        error_message: Some(err.message.clone()),
        timing: Some(summary),
        elapsed_ms: elapsed,
        ..Default::default()
    }
}

impl Attempt {
    fn with_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }
}

/// More tokens than any real request has (the largest context windows hold about 10 million):
/// a server reporting such a count is broken, and its number must not reach TPM.
pub const MAX_PLAUSIBLE_TOKENS: u64 = 100_000_000;

fn finish_ok(summary: TimingSummary, status: u16) -> Attempt {
    let elapsed = summary.e2e_ms;
    let implausible = [
        ("output", summary.output_tokens),
        ("input", summary.input_tokens),
    ]
    .into_iter()
    .find_map(|(what, n)| n.filter(|&n| n > MAX_PLAUSIBLE_TOKENS).map(|n| (what, n)));
    if let Some((what, n)) = implausible {
        return Attempt {
            error_class: Some(ErrorClass::Protocol),
            http_status: Some(status),
            error_message: Some(format!(
                "the server reported {n} {what} tokens for one request; no real request has more than {MAX_PLAUSIBLE_TOKENS}, so the count is kept out of the totals"
            )),
            elapsed_ms: elapsed,
            ..Default::default()
        };
    }
    let class = if summary.token_events == 0 && summary.output_tokens.unwrap_or(0) == 0 {
        Some(ErrorClass::Empty)
    } else {
        None
    };
    Attempt {
        error_class: class,
        http_status: Some(status),
        error_message: class.map(|_| "the stream ended without any generated token".to_string()),
        timing: Some(summary),
        elapsed_ms: elapsed,
        ..Default::default()
    }
}

async fn read_small_body(mut response: reqwest::Response, deadline: Instant) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, response.chunk()).await {
        let room = MAX_ERROR_BODY_BYTES.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY_BYTES {
            break;
        }
    }
    body
}

/// Whether a 2xx JSON body marks itself as an error: an `error` member (OpenAI, TGI, vLLM,
/// Anthropic), or `type`/`object` equal to `"error"`; a list is judged by its first element.
fn carries_error(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    let obj = match &value {
        serde_json::Value::Array(items) => items.first(),
        other => Some(other),
    };
    obj.and_then(serde_json::Value::as_object).is_some_and(|o| {
        o.get("error").is_some_and(|e| !e.is_null())
            || o.get("type").and_then(|t| t.as_str()) == Some("error")
            || o.get("object").and_then(|t| t.as_str()) == Some("error")
    })
}

/// Redirects are not followed (the body is streamed once, so that the start is stamped at the
/// write; LLM SDKs do not follow them either). The message says where the server points,
/// without user info, query or fragment, which may carry credentials.
fn describe_redirect(status: u16, headers: &HeaderMap) -> String {
    let location = headers
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(|l| match reqwest::Url::parse(l.trim()) {
            Ok(mut url) => {
                let _ = url.set_username("");
                let _ = url.set_password(None);
                url.set_query(None);
                url.set_fragment(None);
                url.to_string()
            }
            // A relative location: its path.
            Err(_) => l.split(['?', '#']).next().unwrap_or_default().to_string(),
        })
        .filter(|l| !l.trim().is_empty());
    match location {
        Some(l) => format!(
            "the server redirects (HTTP {status}) to {l}; ladder does not follow redirects: set \
             base_url to the final address"
        ),
        None => format!(
            "the server answered with a redirect (HTTP {status}) without a Location; check base_url"
        ),
    }
}

/// How a record's error message begins when the server asked for a TLS client certificate
/// in its answer (nginx's `ssl_verify_client on` page) rather than in the handshake;
/// `check` diagnoses the message by it.
pub const CLIENT_CERT_WANTED: &str = "the server wants a TLS client certificate";

fn describe_non_json_body(body: &[u8], content_type: &str) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    // nginx with `ssl_verify_client on` (or `optional`) answers a request without a client
    // certificate, or with one it does not trust, with its own 400 page.
    if trimmed.contains("No required SSL certificate was sent") {
        return format!("{CLIENT_CERT_WANTED} (its page says \"No required SSL certificate was sent\"): set target.tls.client_cert and target.tls.client_key");
    }
    if trimmed.contains("The SSL certificate error") {
        return format!("{CLIENT_CERT_WANTED} and rejected the one sent (its page says \"The SSL certificate error\"): set target.tls.client_cert and target.tls.client_key to a certificate signed by a CA the server trusts, not expired");
    }
    if content_type.contains("html") || trimmed.starts_with('<') {
        return "the server answered with an HTML page, not JSON (is base_url pointing at a web page or a proxy?)".into();
    }
    let short: String = trimmed.chars().take(200).collect();
    if short.is_empty() {
        "empty error body".into()
    } else {
        short
    }
}

fn send_error(e: &reqwest::Error) -> Attempt {
    let chain = error_chain(e);
    let closed = !e.is_connect() && !e.is_timeout() && closed_before_response(e);
    let class = if out_of_file_descriptors(e) {
        // This process could not open a socket: the client's limit, not the server's failure.
        ErrorClass::Client
    } else if e.is_connect() {
        if e.is_timeout() || chain.contains("timed out") {
            ErrorClass::TimeoutConnect
        } else {
            ErrorClass::Connect
        }
    } else if e.is_timeout() {
        ErrorClass::TimeoutConnect
    } else {
        ErrorClass::Disconnect
    };
    Attempt {
        closed_before_response: closed,
        ..Attempt::failed(class, chain)
    }
}

/// Whether an error comes from this process running out of file descriptors (`EMFILE`,
/// `ENFILE`: "Too many open files").
pub fn out_of_file_descriptors(e: &(dyn std::error::Error + 'static)) -> bool {
    const EMFILE: i32 = 24;
    const ENFILE: i32 = 23;
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(io.raw_os_error(), Some(EMFILE | ENFILE)) {
                return true;
            }
        }
        if err.to_string().contains("Too many open files") {
            return true;
        }
        source = err.source();
    }
    false
}

/// Whether a request failed because its connection was closed or reset before any response
/// byte: hyper's "connection closed before message completed", or a reset / broken pipe.
fn closed_before_response(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted | K::UnexpectedEof
            ) {
                return true;
            }
        }
        if err
            .to_string()
            .contains("connection closed before message completed")
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// The error and its sources, joined: reqwest's top-level message alone rarely says what failed.
/// The URL is removed (it could carry credentials in a query string).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![without_url(e)];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

fn without_url(e: &(dyn std::error::Error + 'static)) -> String {
    if let Some(re) = e.downcast_ref::<reqwest::Error>() {
        let cloned = format!("{}", RequestErrorNoUrl(re));
        return cloned;
    }
    e.to_string()
}

struct RequestErrorNoUrl<'a>(&'a reqwest::Error);

impl std::fmt::Display for RequestErrorNoUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = self.0;
        let kind = if e.is_connect() {
            "error connecting"
        } else if e.is_timeout() {
            "timed out"
        } else if e.is_body() || e.is_decode() {
            "error reading the response body"
        } else if e.is_request() {
            "error sending the request"
        } else {
            "request failed"
        };
        f.write_str(kind)
    }
}

/// Why the HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
    #[error("{0}")]
    Build(#[from] reqwest::Error),
}

/// Builds an HTTP client for one probe or a few requests (`ladder check`), with the run's pool
/// rules (`client::pool`); its connections are timed into `connects`.
pub fn build_http_client(
    timeouts: &Timeouts,
    tls: &crate::scenario::Tls,
    max_concurrency: usize,
    connects: &ConnectLog,
) -> Result<reqwest::Client, ClientError> {
    build_http_client_with(
        timeouts,
        tls,
        max_concurrency,
        Some(super::pool::DEFAULT_IDLE),
        connects,
    )
}

/// Builds an HTTP client: pool sized to the largest step, idle connections kept for
/// `keep_idle` (`None` or zero: no pool, a new connection per request), no automatic
/// decompression surprises, the connect timeout from the scenario, and its TLS settings
/// (bundled roots, the system store, `target.tls`); every connection it makes is timed into
/// `connects` (`client::connect_timer`).
pub fn build_http_client_with(
    timeouts: &Timeouts,
    tls: &crate::scenario::Tls,
    max_concurrency: usize,
    keep_idle: Option<Duration>,
    connects: &ConnectLog,
) -> Result<reqwest::Client, ClientError> {
    let builder = reqwest::Client::builder()
        .connector_layer(ConnectTimerLayer {
            log: connects.clone(),
        })
        .connect_timeout(timeouts.connect);
    let builder = match keep_idle.filter(|d| !d.is_zero()) {
        Some(idle) => builder
            .pool_max_idle_per_host(max_concurrency.max(1))
            .pool_idle_timeout(idle),
        None => builder.pool_max_idle_per_host(0),
    };
    let builder = builder
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("ladder/", env!("CARGO_PKG_VERSION")));
    Ok(super::tls::configure(builder, tls)?.build()?)
}

#[cfg(test)]
mod tests {
    use super::{
        carries_error, closed_before_response, describe_redirect, out_of_file_descriptors,
    };

    #[derive(Debug)]
    struct Wrapped(std::io::Error);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("client error (Connect)")
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn nginx_asking_for_a_client_certificate_is_named() {
        let page = b"<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>No required SSL certificate was sent</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
        let msg = super::describe_non_json_body(page, "text/html");
        assert!(msg.contains("wants a TLS client certificate"), "{msg}");
        assert!(
            msg.contains("target.tls.client_cert and target.tls.client_key"),
            "{msg}"
        );
        let other = super::describe_non_json_body(b"<html>login</html>", "text/html");
        assert!(other.contains("HTML page"), "{other}");
    }

    #[test]
    fn the_clients_own_descriptor_limit_is_told_apart() {
        let emfile = Wrapped(std::io::Error::from_raw_os_error(24));
        assert!(out_of_file_descriptors(&emfile));
        let refused = Wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(!out_of_file_descriptors(&refused));
        let reset = Wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(closed_before_response(&reset));
        assert!(!closed_before_response(&refused));
    }
    use reqwest::header::{HeaderMap, HeaderValue, LOCATION};

    #[test]
    fn redirects_name_their_target_without_the_query() {
        let mut h = HeaderMap::new();
        h.insert(
            LOCATION,
            HeaderValue::from_static("https://api.example.com/v1/chat/completions?sig=s3cret#x"),
        );
        let msg = describe_redirect(308, &h);
        assert!(
            msg.contains("(HTTP 308) to https://api.example.com/v1/chat/completions;"),
            "{msg}"
        );
        assert!(!msg.contains("s3cret"), "{msg}");
        h.insert(
            LOCATION,
            HeaderValue::from_static("https://me:pw123456@gw.example.com/v1?k=1"),
        );
        let msg = describe_redirect(307, &h);
        assert!(msg.contains("to https://gw.example.com/v1;"), "{msg}");
        assert!(!msg.contains("pw123456") && !msg.contains("k=1"), "{msg}");
        h.insert(LOCATION, HeaderValue::from_static("/v2/chat?x=1"));
        assert!(describe_redirect(302, &h).contains("to /v2/chat;"));
        let msg = describe_redirect(301, &HeaderMap::new());
        assert!(
            msg.contains("HTTP 301") && msg.contains("without a Location"),
            "{msg}"
        );
    }

    #[test]
    fn only_bodies_marked_as_errors_carry_errors() {
        for body in [
            r#"{"error":{"message":"boom","type":"server_error"}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            r#"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#,
            r#"{"error":"Input validation error","error_type":"validation"}"#,
            r#"[{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}]"#,
        ] {
            assert!(carries_error(body.as_bytes()), "{body}");
        }
        for body in [
            r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}"#,
            r#"{"id":"c1","object":"chat.completion","choices":[{"message":{"content":"hi"}}]}"#,
            r#"{"error":null,"choices":[]}"#,
            "not json",
            "",
            "[]",
        ] {
            assert!(!carries_error(body.as_bytes()), "{body}");
        }
    }
}
