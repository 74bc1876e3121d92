//! Reading an event stream to its end: one timer for the stream's deadlines, the bytes fed to
//! the SSE parser where they arrive, each event timed and interpreted, and the attempt that
//! results (a success, a timeout, a broken or malformed stream).

use super::{error_chain, ms_since, Attempt, PreparedTarget};
use crate::client::calls::CallLog;
use crate::client::chunk::InBandError;
use crate::client::chunk::MalformedEvent;
use crate::client::dialect::{self, EventReader};
use crate::client::sse::{EventRef, SseParser};
use crate::client::timing::{StreamTiming, TimingSummary};
use crate::model::ErrorClass;
use crate::scenario::Timeouts;
use futures_util::Stream;
use std::future::Future;
use std::task::Poll;
use tokio::time::Instant;

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

/// What has been read of one stream so far: the parser's state, the timing accumulator and the
/// bytes received, from the write at `start`.
struct StreamRead<'a> {
    target: &'a PreparedTarget,
    start: Instant,
    status: u16,
    parser: SseParser,
    reader: EventReader,
    timing: StreamTiming,
    received: usize,
    last_event: Instant,
    /// The answer's tool calls, when the target keeps them, and the dialect's keeper.
    calls: Option<(CallLog, KeepCalls)>,
}

/// A dialect's keeper of a stream event's tool calls (`client::dialect::ClientDialect::calls`).
type KeepCalls = fn(&str, &[u8], &mut CallLog);

impl<'a> StreamRead<'a> {
    fn new(target: &'a PreparedTarget, start: Instant, status: u16) -> Self {
        StreamRead {
            target,
            start,
            status,
            parser: SseParser::with_max_line_bytes(target.max_line_bytes),
            reader: target.events(),
            timing: StreamTiming::new(),
            received: 0,
            last_event: start,
            calls: target
                .keep_calls
                .then(|| (CallLog::default(), dialect::of(target.api).calls)),
        }
    }

    /// The next deadline and what missing it is called.
    fn deadline(&self) -> (Instant, ErrorClass) {
        next_deadline(
            self.start,
            &self.target.timeouts,
            self.timing.has_token(),
            self.last_event,
        )
    }

    /// The attempt that ends here, at `at`, with what was read so far.
    fn fail(&self, class: ErrorClass, msg: String, at: Instant) -> Attempt {
        Attempt {
            error_class: Some(class),
            http_status: Some(self.status),
            error_message: Some(msg),
            timing: Some(self.timing.finish(ms_since(self.start, at))),
            elapsed_ms: ms_since(self.start, at),
            ..Default::default()
        }
    }

    /// The deadline `class` passed.
    fn timed_out(&self, class: ErrorClass) -> Attempt {
        let what = match class {
            ErrorClass::TimeoutFirstToken => "no token before the first-token timeout",
            ErrorClass::TimeoutIdle => "no event within the idle timeout",
            _ => "the stream did not end within the total timeout",
        };
        self.fail(class, what.into(), Instant::now())
    }

    /// End of input before an end marker (an end marker returns from [`StreamRead::take`] as
    /// soon as it is read; `finish` never completes an event, per the event-stream rules).
    fn ended_early(&mut self) -> Attempt {
        let now = Instant::now();
        self.parser.finish(&mut Vec::new());
        self.fail(
            ErrorClass::Disconnect,
            "the stream ended without an end marker ([DONE] / message_stop / response.completed)"
                .into(),
            now,
        )
    }

    /// Takes one chunk read at `now`: `Some` with the finished attempt when the stream ended
    /// (its end marker, an in-band error, a malformed event, or too many bytes).
    fn take(&mut self, chunk: &[u8], now: Instant) -> Option<Attempt> {
        self.received += chunk.len();
        let limit = self.target.max_response_bytes;
        if self.received > limit {
            let msg = format!("response larger than {limit} bytes; stopped reading");
            return Some(self.fail(ErrorClass::Protocol, msg, now));
        }
        let at = ms_since(self.start, now);
        let (reader, timing) = (&mut self.reader, &mut self.timing);
        let mut calls = self.calls.as_mut();
        let mut any_event = false;
        // Every event of the read is framed (a framing error anywhere in it fails the stream),
        // and read in order until the stream's end marker, an in-band error or a malformed event.
        let mut ended: Option<Result<(), Box<Attempt>>> = None;
        let fed = self.parser.feed_each(chunk, |ev| {
            any_event = true;
            if ended.is_none() {
                ended = read_event(ev, reader, timing, calls.as_deref_mut(), at);
            }
        });
        if let Err(e) = fed {
            return Some(self.fail(ErrorClass::Protocol, e.to_string(), now));
        }
        if any_event {
            self.last_event = now;
        }
        match ended? {
            Ok(()) => {
                let mut done = finish_ok(self.timing.finish(at), self.status);
                done.response_id = self.reader.take_response_id();
                if let Some((log, _)) = self.calls.take() {
                    done.calls = log.into_calls();
                }
                Some(done)
            }
            Err(a) => Some(a.with_status(self.status)),
        }
    }
}

pub(super) async fn read_stream(
    response: reqwest::Response,
    target: &PreparedTarget,
    start: Instant,
    status: u16,
) -> Attempt {
    let mut read = StreamRead::new(target, start, status);
    let body = response.bytes_stream();
    tokio::pin!(body);
    // One timer for the whole stream, moved only when a deadline comes sooner or when it fires
    // for a deadline that has moved on; not created and cancelled around every read (the idle
    // deadline moves with every event, and timer-wheel churn is per-token CPU).
    let (armed, _) = read.deadline();
    let sleep = tokio::time::sleep_until(armed);
    tokio::pin!(sleep);
    let mut timer = Timer { armed, waker: None };
    // One poll function for the whole stream instead of a `select!` over a new read future per
    // chunk: at each wake-up every chunk that is ready is taken, and the deadline is looked at
    // only when the body has nothing more.
    std::future::poll_fn(|cx| loop {
        match body.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(bytes))) => {
                if let Some(done) = read.take(&bytes, Instant::now()) {
                    return Poll::Ready(done);
                }
                continue;
            }
            Poll::Ready(Some(Err(e))) => {
                let msg = format!("stream broken: {}", error_chain(&e));
                return Poll::Ready(read.fail(ErrorClass::Disconnect, msg, Instant::now()));
            }
            Poll::Ready(None) => return Poll::Ready(read.ended_early()),
            Poll::Pending => {}
        }
        let (deadline, deadline_class) = read.deadline();
        if deadline < timer.armed {
            timer.rearm(sleep.as_mut(), deadline);
        }
        let holds_this_waker = timer
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()));
        if holds_this_waker && !sleep.is_elapsed() {
            return Poll::Pending;
        }
        let fired = std::pin::pin!(tokio::task::coop::unconstrained(sleep.as_mut())).poll(cx);
        if fired.is_pending() {
            if !holds_this_waker {
                timer.waker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        if Instant::now() >= deadline {
            return Poll::Ready(read.timed_out(deadline_class));
        }
        // The timer fired for a deadline that has moved on (the idle one, with every event).
        timer.rearm(sleep.as_mut(), deadline);
    })
    .await
}

/// The stream's timer: when it is armed for, and the waker it holds since it was last polled.
/// While that waker is the current poll's and the timer has not fired, polling the timer again
/// would change nothing. The timer is polled outside tokio's cooperative budget, so a `Pending`
/// always means it holds the waker (with the budget spent, a poll returns `Pending` without
/// registering one).
struct Timer {
    armed: Instant,
    waker: Option<std::task::Waker>,
}

impl Timer {
    /// Moves the timer to `at`; it holds no waker until it is polled again.
    fn rearm(&mut self, sleep: std::pin::Pin<&mut tokio::time::Sleep>, at: Instant) {
        self.armed = at;
        sleep.reset(at);
        self.waker = None;
    }
}

/// Feeds one event (read at `at` ms) to the timing accumulator. `Some(Ok)` when it is the end
/// marker; `Some(Err)` with the finished attempt on an in-band error or a malformed event.
fn read_event(
    ev: EventRef<'_>,
    reader: &mut EventReader,
    timing: &mut StreamTiming,
    calls: Option<&mut (CallLog, KeepCalls)>,
    at: f64,
) -> Option<Result<(), Box<Attempt>>> {
    match reader.interpret(ev) {
        Ok(info) => {
            timing.on_chunk(at, &info);
            // Only the events that carry a call, and the last (whose answer may list them).
            if let Some((log, keep)) = calls {
                if info.tool_calls > 0 || info.tool_args > 0 || info.done {
                    keep(ev.event, ev.data, log);
                }
            }
            if let Some(err) = &info.error {
                return Some(Err(Box::new(in_band_failure(err, timing.finish(at)))));
            }
            info.done.then_some(Ok(()))
        }
        Err(MalformedEvent(msg)) => Some(Err(Box::new(Attempt {
            error_class: Some(ErrorClass::Protocol),
            error_message: Some(msg),
            timing: Some(timing.finish(at)),
            elapsed_ms: at,
            ..Default::default()
        }))),
    }
}

/// Reads a whole answer (`request.stream: false`): one JSON body, read to its end within the
/// total deadline and the size limit, and interpreted in the dialect as one final event. E2E is
/// when its last byte arrived; there is no first token, so TTFT, TTFC, TPOT and ITL stay empty,
/// and the tokens come from the answer's usage. A body that is not the dialect's answer is a
/// `protocol` error, an error body an in-band error, an event stream (a server that ignored
/// `stream: false`) a `protocol` error that says so.
pub(super) async fn read_whole(
    mut response: reqwest::Response,
    target: &PreparedTarget,
    start: Instant,
    status: u16,
    content_type: &str,
) -> Attempt {
    let deadline = start + target.timeouts.total;
    let limit = target.max_response_bytes;
    let mut body = Vec::new();
    let failed = |class, msg: String| Attempt {
        error_class: Some(class),
        http_status: Some(status),
        error_message: Some(msg),
        elapsed_ms: ms_since(start, Instant::now()),
        ..Default::default()
    };
    loop {
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            Err(_) => {
                let msg = "the answer did not arrive whole within the total timeout".to_string();
                return failed(ErrorClass::TimeoutTotal, msg);
            }
            Ok(Err(e)) => {
                let msg = format!("answer broken: {}", error_chain(&e));
                return failed(ErrorClass::Disconnect, msg);
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => {
                body.extend_from_slice(&chunk);
                if body.len() > limit {
                    let msg = format!("response larger than {limit} bytes; stopped reading");
                    return failed(ErrorClass::Protocol, msg);
                }
            }
        }
    }
    let at = ms_since(start, Instant::now());
    if content_type.starts_with("text/event-stream") {
        let msg = "asked for one JSON body (request.stream: false) but the server sent an event \
                   stream; it ignores `stream: false`: leave request.stream at true"
            .to_string();
        return failed(ErrorClass::Protocol, msg);
    }
    let mut reader = target.events();
    let mut info = match reader.whole(&body) {
        Ok(info) => info,
        Err(MalformedEvent(msg)) => return failed(ErrorClass::Protocol, msg),
    };
    let mut calls = CallLog::default();
    if target.keep_calls && info.tool_calls > 0 {
        (dialect::of(target.api).whole_calls)(&body, &mut calls);
    }
    // No token is timed: the whole answer arrived at once.
    let generated = info.is_token();
    info.content = false;
    info.reasoning = false;
    let mut timing = StreamTiming::new();
    timing.on_chunk(at, &info);
    let summary = timing.finish(at);
    if let Some(err) = &info.error {
        return in_band_failure(err, summary).with_status(status);
    }
    let empty = !generated && summary.output_tokens.unwrap_or(0) == 0;
    let mut done = finish_ok(summary, status);
    if !empty {
        done.error_class = None;
        done.error_message = done.timing.as_ref().and_then(|t| t.usage_ignored.clone());
    } else {
        done.error_message = Some("the answer holds no generated token".to_string());
    }
    done.response_id = reader.take_response_id();
    if done.error_class.is_none() {
        done.calls = calls.into_calls();
    }
    done
}

fn in_band_failure(err: &InBandError, summary: TimingSummary) -> Attempt {
    let elapsed = summary.e2e_ms;
    Attempt {
        error_class: Some(err.class.unwrap_or(ErrorClass::StreamError)),
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

fn finish_ok(summary: TimingSummary, status: u16) -> Attempt {
    let elapsed = summary.e2e_ms;
    let class = if summary.token_events == 0 && summary.output_tokens.unwrap_or(0) == 0 {
        Some(ErrorClass::Empty)
    } else {
        None
    };
    Attempt {
        error_class: class,
        http_status: Some(status),
        // On a success, the message says why the server's usage was set aside, if it was.
        error_message: match class {
            Some(_) => Some("the stream ended without any generated token".to_string()),
            None => summary.usage_ignored.clone(),
        },
        timing: Some(summary),
        elapsed_ms: elapsed,
        ..Default::default()
    }
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod calls_tests;
