//! A test-written model of a provider, independent of ladder's simulator, that writes the log a
//! gateway in front of it would keep: open-loop arrivals whose rate ramps past the provider's
//! capacity and back, heavy-tailed answer lengths, N slots served first come first served (a
//! request waits for the first slot to free), and keys that share the slots (an account-wide
//! limit) or each have their own. It says itself the minute the queue first formed, so the
//! tests of `ladder logs` can hold its answers to the truth.

use super::LogRequest;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How the slots are shared between keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slots {
    /// One pool of `slots` for every key: an account-wide limit.
    Shared,
    /// `slots` for each key: a per-key limit.
    PerKey,
}

/// The provider and its traffic.
#[derive(Debug, Clone)]
pub struct Provider {
    pub slots: usize,
    pub sharing: Slots,
    /// Key names, requests spread evenly between them (one key: no key column).
    pub keys: Vec<&'static str>,
    pub minutes: f64,
    /// Offered load at the peak (arrival rate over the capacity rate); the ramp starts and ends
    /// at a third of it.
    pub peak_load: f64,
    pub seed: u64,
}

/// What the model wrote, and what it knows.
#[derive(Debug, Clone)]
pub struct Generated {
    pub requests: Vec<LogRequest>,
    /// The minute (from the epoch) the queue first formed: the first minute in which a tenth
    /// of the requests that arrived waited for a slot (from then on the P90 request waits).
    pub queue_formed: i64,
}

/// Time to first token without a wait (seconds) and per output token.
const PREFILL_S: f64 = 0.3;
const TPOT_S: f64 = 0.02;
/// Median answer length and the log-normal's sigma (heavy tail), capped.
const MEDIAN_TOKENS: f64 = 120.0;
const SIGMA: f64 = 0.9;
const MAX_TOKENS: f64 = 4_000.0;
/// 14:00 UTC on 2026-12-07, in epoch ms.
const EPOCH_MS: f64 = 1_796_652_000_000.0;

impl Provider {
    /// Mean service time in seconds (prefill plus the mean answer's decode).
    fn mean_service_s(&self) -> f64 {
        PREFILL_S + TPOT_S * MEDIAN_TOKENS * (SIGMA * SIGMA / 2.0).exp()
    }

    /// The log, in arrival order.
    pub fn generate(&self) -> Generated {
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed);
        let lengths = LogNormal::new(MEDIAN_TOKENS.ln(), SIGMA).expect("valid log-normal");
        let pools = match self.sharing {
            Slots::Shared => 1,
            Slots::PerKey => self.keys.len().max(1),
        };
        // Each pool's slots as the times they next free up (seconds).
        let mut free: Vec<BinaryHeap<Reverse<u64>>> = (0..pools)
            .map(|_| (0..self.slots).map(|_| Reverse(0)).collect())
            .collect();
        let capacity_rate = (self.slots * pools) as f64 / self.mean_service_s();
        let span_s = self.minutes * 60.0;
        let mut t = 0.0;
        let mut requests = Vec::new();
        let mut waited_by_minute: Vec<(u64, u64)> = vec![(0, 0); self.minutes.ceil() as usize + 1];
        loop {
            // Thinning: draw at the peak rate, keep with the ramp's share.
            let peak = capacity_rate * self.peak_load;
            t += Exp::new(peak).expect("positive rate").sample(&mut rng);
            if t >= span_s {
                break;
            }
            let phase = 1.0 - (2.0 * t / span_s - 1.0).abs();
            let load = (1.0 + 2.0 * phase) / 3.0;
            if rng.gen::<f64>() > load {
                continue;
            }
            let key = rng.gen_range(0..self.keys.len().max(1));
            let pool = &mut free[if pools == 1 { 0 } else { key }];
            let Reverse(slot_free_us) = pool.pop().expect("a slot");
            let start_service = t.max(slot_free_us as f64 / 1e6);
            let wait = start_service - t;
            let tokens = lengths.sample(&mut rng).clamp(1.0, MAX_TOKENS).round();
            let prefill = PREFILL_S * rng.gen_range(0.9..1.1);
            let end = start_service + prefill + TPOT_S * tokens;
            pool.push(Reverse((end * 1e6) as u64));
            let minute = (t / 60.0) as usize;
            waited_by_minute[minute].0 += 1;
            waited_by_minute[minute].1 += u64::from(wait > 0.0);
            requests.push(LogRequest {
                line: requests.len() + 2,
                start_ms: EPOCH_MS + t * 1000.0,
                end_ms: EPOCH_MS + end * 1000.0,
                ttft_ms: Some((wait + prefill) * 1000.0),
                model: "gpt-4o".into(),
                key: (self.keys.len() > 1).then(|| self.keys[key].to_string()),
                input_tokens: Some(500),
                output_tokens: Some(tokens as u64),
                ..LogRequest::default()
            });
        }
        let first = waited_by_minute
            .iter()
            .position(|&(n, w)| n > 0 && w * 10 >= n)
            .unwrap_or(waited_by_minute.len());
        Generated {
            requests,
            queue_formed: (EPOCH_MS / 60_000.0) as i64 + first as i64,
        }
    }
}
