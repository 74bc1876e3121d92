//! A scripted backend for the runner's tests: a pretend server with a concurrency cap (requests
//! above it wait in line, so TTFT climbs while TPOT stays flat), a fixed TTFT and TPOT, and an
//! optional concurrency limit answered with 429, and (`vary`) what real servers have: a lognormal
//! TTFT spread, output lengths between a min and a max, per-token jitter, all seeded; and
//! (`drift_walk`) a speed that wanders with the pretend time (`sim::walk`), shared by every
//! request arriving at the same moment. Every wait is a `tokio::time` sleep, so on a paused clock
//! a whole ladder runs in pretend time, deterministically, in milliseconds.

use crate::client::chunk::ChunkInfo;
use crate::client::http::Attempt;
use crate::client::timing::StreamTiming;
use crate::client::Backend;
use crate::model::ErrorClass;
use crate::scenario::RequestSpec;
use crate::sim::WalkPath;
use bytes::Bytes;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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
    walk: Option<Walk>,
}

/// A drift walk read on this server's clock (see [`FakeServer::drift_walk`]).
struct Walk {
    path: Arc<WalkPath>,
    /// The pretend-time instant the server's clock reads `offset` on the walk.
    origin: Instant,
    offset: Duration,
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
            walk: None,
        }
    }

    /// From now on, every request's TTFT and token intervals × the walk's factor at the moment
    /// it arrives; now is `offset` into the walk (a later run on the same walk starts further in).
    pub fn drift_walk(&mut self, path: Arc<WalkPath>, offset: Duration) {
        self.walk = Some(Walk {
            path,
            origin: Instant::now(),
            offset,
        });
    }

    /// The walk's factor at `at` (1 without a walk).
    fn walk_factor(&self, at: Instant) -> f64 {
        self.walk.as_ref().map_or(1.0, |w| {
            w.path
                .factor(w.offset + at.saturating_duration_since(w.origin))
        })
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

    /// This request's TTFT, length and token intervals, every time × `k`.
    fn draw(&self, k: f64) -> (Duration, u64, Vec<Duration>) {
        // Exactly the unscaled times without a walk (the rows without one replay bit for bit).
        let scale = |d: Duration| if k == 1.0 { d } else { d.mul_f64(k) };
        let (ttft, tpot) = (scale(self.ttft), scale(self.tpot));
        let Some(v) = &self.variation else {
            return (ttft, self.tokens, vec![tpot; self.tokens as usize]);
        };
        let mut rng = v
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (u1, u2): (f64, f64) = (1.0 - rng.gen::<f64>(), rng.gen());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let n = rng.gen_range(v.tokens_min..=self.tokens);
        let gaps = (0..n)
            .map(|_| tpot.mul_f64(1.0 + v.tpot_jitter * rng.gen_range(-1.0..=1.0)))
            .collect();
        (ttft.mul_f64((v.ttft_sigma * z).exp()), n, gaps)
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
        let (mut ttft, tokens, gaps) = self.draw(self.walk_factor(sent));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::DriftWalk;

    #[tokio::test(start_paused = true)]
    async fn the_walk_scales_a_request_by_its_factor_when_it_arrives() {
        let path = Arc::new(
            DriftWalk::reaching(0.3, Duration::from_secs(60), 3).path(Duration::from_secs(600)),
        );
        let offset = Duration::from_secs(100);
        let mut server = FakeServer::new(4, 200, 10, 5);
        server.drift_walk(path.clone(), offset);
        let ttft = |a: Attempt| a.timing.and_then(|t| t.ttft_ms).unwrap();
        let first = ttft(server.send(Bytes::new(), "a").await);
        // Two minutes later the walk has moved; each TTFT is 200 ms × the factor at its arrival
        // (to the paused clock's 1 ms tick).
        sleep(Duration::from_secs(120)).await;
        let after = Instant::now().duration_since(server.walk.as_ref().unwrap().origin);
        let second = ttft(server.send(Bytes::new(), "b").await);
        let k = |t: Duration| path.factor(offset + t);
        assert!((first - 200.0 * k(Duration::ZERO)).abs() < 1.0, "{first}");
        assert!((second - 200.0 * k(after)).abs() < 1.0, "{second}");
        assert!((first - second).abs() > 5.0, "{first} {second}");
        // Without a walk nothing is scaled.
        let plain = FakeServer::new(4, 200, 10, 5);
        assert_eq!(ttft(plain.send(Bytes::new(), "c").await), 200.0);
    }
}
