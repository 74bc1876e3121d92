//! A scripted backend for the runner's tests: a pretend server with a concurrency cap (requests
//! above it wait in line, so TTFT climbs while TPOT stays flat), a fixed TTFT and TPOT, and an
//! optional concurrency limit answered with 429. Every wait is a `tokio::time` sleep, so on a
//! paused clock a whole ladder runs in pretend time, deterministically, in milliseconds.

use crate::client::chunk::ChunkInfo;
use crate::client::http::Attempt;
use crate::client::timing::StreamTiming;
use crate::client::Backend;
use crate::record::ErrorClass;
use crate::scenario::RequestSpec;
use bytes::Bytes;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::{sleep, Instant};

pub struct FakeServer {
    pub ttft: Duration,
    pub tpot: Duration,
    pub tokens: u64,
    /// Streams served at once; the rest wait (FIFO).
    slots: Semaphore,
    /// More requests in flight than this are answered at once with a 429.
    pub limit_429: Option<usize>,
    in_flight: AtomicUsize,
}

impl FakeServer {
    pub fn new(cap: usize, ttft_ms: u64, tpot_ms: u64, tokens: u64) -> Self {
        FakeServer {
            ttft: Duration::from_millis(ttft_ms),
            tpot: Duration::from_millis(tpot_ms),
            tokens,
            slots: Semaphore::new(cap),
            limit_429: None,
            in_flight: AtomicUsize::new(0),
        }
    }
}

impl Backend for FakeServer {
    fn body_for(&self, model: &str, _: &RequestSpec) -> Bytes {
        Bytes::from(model.to_string())
    }

    async fn send(&self, _body: Bytes, _request_id: &str) -> Attempt {
        let sent = Instant::now();
        let ms = |t: Instant| t.duration_since(sent).as_secs_f64() * 1000.0;
        let in_flight = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        let _leave = Leave(&self.in_flight);
        if self.limit_429.is_some_and(|limit| in_flight > limit) {
            sleep(Duration::from_millis(5)).await;
            return Attempt {
                sent_at: Some(sent),
                error_class: Some(ErrorClass::Http429),
                http_status: Some(429),
                error_message: Some("Rate limit reached for requests".into()),
                elapsed_ms: ms(Instant::now()),
                ..Attempt::default()
            };
        }
        let _slot = self.slots.acquire().await.expect("never closed");
        sleep(self.ttft).await;
        let mut timing = StreamTiming::new();
        let token = ChunkInfo {
            content: true,
            ..ChunkInfo::default()
        };
        for i in 0..self.tokens {
            if i > 0 {
                sleep(self.tpot).await;
            }
            timing.on_chunk(ms(Instant::now()), &token);
        }
        let last = ChunkInfo {
            output_tokens: Some(self.tokens),
            input_tokens: Some(12),
            finish_reason: Some("stop".into()),
            done: true,
            ..ChunkInfo::default()
        };
        let end = ms(Instant::now());
        timing.on_chunk(end, &last);
        Attempt {
            sent_at: Some(sent),
            timing: Some(timing.finish(end)),
            elapsed_ms: end,
            ..Attempt::default()
        }
    }
}

/// Counts a request out of flight when it ends, however it ends.
struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
