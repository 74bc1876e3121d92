//! A scripted backend for the runner's tests: a pretend server with a concurrency cap (requests
//! above it wait in line, so TTFT climbs while TPOT stays flat), a fixed TTFT and TPOT, and an
//! optional concurrency limit answered with 429, and (`vary`) what real servers have: a lognormal
//! TTFT spread, output lengths between a min and a max, per-token jitter, all seeded. Every wait
//! is a `tokio::time` sleep, so on a paused clock a whole ladder runs in pretend time,
//! deterministically, in milliseconds.

use crate::client::chunk::ChunkInfo;
use crate::client::http::Attempt;
use crate::client::timing::StreamTiming;
use crate::client::Backend;
use crate::model::ErrorClass;
use crate::scenario::RequestSpec;
use bytes::Bytes;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
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
    variation: Option<Variation>,
    /// Requests to this model have their TTFT × this factor (an A/B run's slower candidate).
    pub slower: Option<(String, f64)>,
}

/// Seeded per-request variation (see [`FakeServer::vary`]).
struct Variation {
    ttft_sigma: f64,
    tokens_min: u64,
    tpot_jitter: f64,
    rng: Mutex<SmallRng>,
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
            variation: None,
            slower: None,
        }
    }

    /// TTFT × e^(σ·Z) per request, lengths uniform in `tokens_min..=tokens`, each token interval
    /// × (1 ± jitter), from `seed`.
    pub fn vary(&mut self, ttft_sigma: f64, tokens_min: u64, tpot_jitter: f64, seed: u64) {
        self.variation = Some(Variation {
            ttft_sigma,
            tokens_min: tokens_min.min(self.tokens),
            tpot_jitter,
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
        });
    }

    /// This request's TTFT, length and token intervals.
    fn draw(&self) -> (Duration, u64, Vec<Duration>) {
        let Some(v) = &self.variation else {
            return (
                self.ttft,
                self.tokens,
                vec![self.tpot; self.tokens as usize],
            );
        };
        let mut rng = v
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (u1, u2): (f64, f64) = (1.0 - rng.gen::<f64>(), rng.gen());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let n = rng.gen_range(v.tokens_min..=self.tokens);
        let gaps = (0..n)
            .map(|_| {
                self.tpot
                    .mul_f64(1.0 + v.tpot_jitter * rng.gen_range(-1.0..=1.0))
            })
            .collect();
        (self.ttft.mul_f64((v.ttft_sigma * z).exp()), n, gaps)
    }
}

impl Backend for FakeServer {
    fn body_for(&self, model: &str, _: &RequestSpec) -> Bytes {
        Bytes::from(model.to_string())
    }

    async fn send(&self, body: Bytes, _request_id: &str) -> Attempt {
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
        let (mut ttft, tokens, gaps) = self.draw();
        if let Some((_, k)) = self.slower.as_ref().filter(|(m, _)| body == m.as_bytes()) {
            ttft = ttft.mul_f64(*k);
        }
        let _slot = self.slots.acquire().await.expect("never closed");
        sleep(ttft).await;
        let mut timing = StreamTiming::new();
        let token = ChunkInfo {
            content: true,
            ..ChunkInfo::default()
        };
        for i in 0..tokens {
            if i > 0 {
                sleep(gaps[i as usize]).await;
            }
            timing.on_chunk(ms(Instant::now()), &token);
        }
        let last = ChunkInfo {
            output_tokens: Some(tokens),
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
