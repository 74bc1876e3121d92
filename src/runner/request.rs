//! One request of a step, from a worker's turn to its record: sent through the backend with
//! the retry policy (backing off, honouring Retry-After), cancelled when the run is, and turned
//! into one `RequestRecord` with its timings, error class and redacted message; and how a task
//! that sends requests is spawned (`spawn_sender`).

use super::interrupt::Interrupt;
use super::shared::Shared;
use super::workload::Prepared;
use crate::client::http::Attempt;
use crate::client::untrusted::printable;
use crate::client::Backend;
use crate::model::{ErrorClass, RequestRecord};
use crate::scenario::RetryPolicy;
use rand::Rng;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// Spawns a task that sends requests (a closed-loop worker, an open-loop send) with its future
/// boxed first. Such a future holds a whole request in flight (about 8 KB), and tokio, which
/// boxes only futures above 16 KB, moves a task's future by value: through its spawn path, into
/// the task's cell, and with the task's stage each time it changes; 11 copies of the whole future
/// per task in a release build. Boxed, each of those copies is a pointer's (benches/RESULTS.md,
/// issue 39, part 4).
pub(super) fn spawn_sender<F>(task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(Box::pin(task))
}

/// Who a request is, for its record.
pub(super) struct RequestKey<'a> {
    pub(super) model: &'a str,
    pub(super) step: u32,
    pub(super) concurrency: u32,
    pub(super) worker: u32,
    pub(super) seq: u32,
}

/// One request, with retries per the policy. Always returns exactly one record. `scheduled`
/// is the open-loop send time the request was meant to go out at (its send lag is measured
/// against it).
/// One send, counted in flight while it lasts; `None` when a second stop cancelled it.
async fn send_counted<B: Backend>(
    shared: &Shared<B>,
    body: &bytes::Bytes,
    attempt_id: &str,
    interrupt: &Interrupt,
) -> Option<Attempt> {
    shared.in_flight.fetch_add(1, Ordering::Relaxed);
    shared
        .progress
        .in_flight(shared.in_flight.load(Ordering::Relaxed));
    let result = interrupt
        .cancel
        .until_cancelled(shared.backend.send(body.clone(), attempt_id))
        .await;
    shared.in_flight.fetch_sub(1, Ordering::Relaxed);
    shared
        .progress
        .in_flight(shared.in_flight.load(Ordering::Relaxed));
    result
}

pub(super) async fn one_request<B: Backend>(
    shared: &Shared<B>,
    key: RequestKey<'_>,
    prepared: Prepared,
    scheduled: Option<Instant>,
    interrupt: &Interrupt,
) -> RequestRecord {
    let RequestKey {
        model,
        step,
        concurrency,
        worker,
        seq,
    } = key;
    // A test's ceiling on requests in flight: the wait for a place is the client's, before the
    // request goes out (an open-loop request's send lag counts it).
    let _place = match &shared.ceiling {
        Some(ceiling) => ceiling.acquire().await.ok(),
        None => None,
    };
    let id_num = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let request_id = shared.ids.id(id_num);
    let started = Instant::now();
    let tried = attempt_until_done(shared, &prepared.body, id_num, &request_id, interrupt).await;
    let first_sent = tried.first_sent;
    let started_at_ms = first_sent
        .unwrap_or(started)
        .saturating_duration_since(shared.run_start)
        .as_secs_f64()
        * 1000.0;
    let send_lag_ms = scheduled.map(|at| {
        let sent = first_sent.unwrap_or(started);
        sent.saturating_duration_since(at).as_secs_f64() * 1000.0
    });
    let mut record = to_record(
        shared,
        tried.attempt,
        RecordKey {
            model,
            step,
            concurrency,
            worker,
            seq,
            request_id,
            started_at_ms,
        },
        tried.attempts + tried.stale_resends,
        tried.retry_wait_ms,
        tried.first_attempt_429,
    );
    record.resent_stale = tried.stale_resends > 0;
    record.send_lag_ms = send_lag_ms;
    record.max_tokens = prepared.max_tokens;
    interrupt.observe(&record);
    record
}

/// A request's attempts until one is final, and what the retries cost.
struct Tried {
    /// The final attempt.
    attempt: Attempt,
    /// When the first attempt's request was written.
    first_sent: Option<Instant>,
    attempts: u32,
    /// Sends repeated because a kept-alive connection had been closed by the server.
    stale_resends: u32,
    retry_wait_ms: f64,
    first_attempt_429: bool,
}

/// Sends `body` and retries it by the scenario's retry policy (a retryable error, attempts
/// left, not stopped), waiting between attempts; a stop ends the wait.
async fn attempt_until_done<B: Backend>(
    shared: &Shared<B>,
    body: &bytes::Bytes,
    id_num: u64,
    request_id: &str,
    interrupt: &Interrupt,
) -> Tried {
    // The first attempt's write (docs/metrics.md `start`), so that started_at + TTFT is when the first
    // token arrived; connection setup is not part of the request's figures.
    let mut first_sent = None;
    // Only a retry's wait needs the stop signal (a send watches the cancel in `send_counted`).
    let mut stop_rx = None;
    let mut attempts = 0u32;
    let mut stale_resends = 0u32;
    let mut retry_wait_ms = 0.0;
    let mut first_attempt_429 = false;
    let attempt = loop {
        attempts += 1;
        let attempt_start = Instant::now();
        // The first attempt's id is the request's (`RequestIds::id`), already written.
        let attempt_id = if attempts == 1 {
            request_id.to_string()
        } else {
            shared.ids.attempt(id_num, attempts)
        };
        let a = match send_counted(shared, body, &attempt_id, interrupt).await {
            Some(a) => a,
            None => {
                break Attempt {
                    error_class: Some(ErrorClass::Interrupted),
                    error_message: Some("cancelled by interrupt".into()),
                    elapsed_ms: attempt_start.elapsed().as_secs_f64() * 1000.0,
                    ..Default::default()
                }
            }
        };
        if a.resent_stale {
            // Sent twice: once on a keep-alive connection the server had closed.
            stale_resends += 1;
        }
        if attempts == 1 {
            first_sent = a.sent_at;
            first_attempt_429 = a.error_class == Some(ErrorClass::Http429);
        }
        let retryable = a
            .error_class
            .is_some_and(|c| shared.retry.retry_on.contains(&c));
        if !retryable || attempts >= shared.retry.max_attempts || interrupt.is_stopped() {
            break a;
        }
        let wait = retry_delay(&shared.retry, attempts, a.rate_limit.retry_after);
        retry_wait_ms += wait.as_secs_f64() * 1000.0;
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop_rx.get_or_insert_with(|| interrupt.subscribe()).wait_for(|v| *v >= 1) => break a,
        }
    };
    Tried {
        attempt,
        first_sent,
        attempts,
        stale_resends,
        retry_wait_ms,
        first_attempt_429,
    }
}

/// Exponential backoff with full jitter; a server's `Retry-After` wins (up to the cap).
pub(super) fn retry_delay(
    policy: &RetryPolicy,
    attempt: u32,
    retry_after: Option<Duration>,
) -> Duration {
    if let Some(ra) = retry_after {
        return ra.min(policy.max_retry_after);
    }
    let exp = policy
        .initial_backoff
        .saturating_mul(1u32 << (attempt - 1).min(16))
        .min(policy.max_backoff);
    let jitter: f64 = rand::thread_rng().gen_range(0.0..=1.0);
    exp.mul_f64(jitter)
}

struct RecordKey<'a> {
    model: &'a str,
    step: u32,
    concurrency: u32,
    worker: u32,
    seq: u32,
    request_id: String,
    started_at_ms: f64,
}

fn to_record<B>(
    shared: &Shared<B>,
    a: Attempt,
    key: RecordKey<'_>,
    attempts: u32,
    retry_wait_ms: f64,
    first_attempt_429: bool,
) -> RequestRecord {
    // Server text is data (`client::untrusted`); a server that echoes our id adds nothing.
    let server_request_id = a
        .server_request_id
        .filter(|id| *id != key.request_id)
        .map(|id| short(&printable(&id)));
    let mut r = RequestRecord {
        model: key.model.to_string(),
        step: key.step,
        concurrency: key.concurrency,
        worker: key.worker,
        seq: key.seq,
        request_id: key.request_id,
        started_at_ms: key.started_at_ms,
        error_class: a.error_class,
        http_status: a.http_status,
        // Server text is data, never terminal control (`client::untrusted`).
        error_type: a
            .error_type
            .map(|t| printable(&shared.redactor.redact(&t)).into_owned()),
        error_message: a
            .error_message
            .map(|m| short(&printable(&shared.redactor.redact(&m)))),
        attempts,
        retry_wait_ms,
        first_attempt_429,
        limit_kind: a.rate_limit.kind,
        limit_value: a.rate_limit.limit,
        ratelimit_headroom: a.rate_limit.headroom,
        retry_after_ms: a.rate_limit.retry_after.map(|d| d.as_secs_f64() * 1000.0),
        e2e_ms: Some(a.elapsed_ms),
        connect_ms: a.connect_ms,
        headers_ms: a.headers_ms,
        server_queue_ms: a.server.queue_ms,
        server_prefill_ms: a.server.prefill_ms,
        server_processing_ms: a.server.processing_ms,
        server_decode_ms: a.server.decode_ms,
        server_timing_source: a.server.source,
        server_request_id,
        response_id: a.response_id,
        calls: a.calls,
        ..Default::default()
    };
    if let Some(t) = a.timing {
        let failed = r.error_class.is_some();
        t.apply_to(&mut r, failed);
    }
    r
}

/// Error messages are kept short and on one line.
pub(super) fn short(msg: &str) -> String {
    let one_line: String = msg
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = one_line.trim();
    if trimmed.chars().count() > 200 {
        let cut: String = trimmed.chars().take(199).collect();
        format!("{cut}…")
    } else {
        trimmed.to_string()
    }
}
