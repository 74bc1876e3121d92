//! The simulator's shared state: immutable parameters, the seeded RNG and the rate limiter (each
//! locked once per request, never per token), the concurrency slots, atomic counters, and the
//! per-request server truth that tests compare client measurements against.

use super::faults::FaultKind;
use super::limits::{Admission, Ask, Decision, Limiter, Rules};
use super::params::SimParams;
use super::prefix_cache::PrefixCache;
use super::variation::Drift;
use crate::dialect::Api;
use crate::model::LimitKind;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Truth records kept at most (older ones are kept, newer ones dropped past this).
const TRUTH_CAP: usize = 1_000_000;

/// Routes counted in `/sim/stats` besides the dialects' (see [`route_path`]).
pub const OTHER_ROUTES: [&str; 3] = ["/v1/models", "/sim", "other"];

/// The counters' indices of the routes besides the dialects' (which come first, in
/// `Api::ALL`'s order).
pub const ROUTE_MODELS: usize = Api::ALL.len();
pub const ROUTE_SIM: usize = ROUTE_MODELS + 1;
pub const ROUTE_OTHER: usize = ROUTE_MODELS + 2;
const ROUTES: usize = ROUTE_OTHER + 1;

/// Where the simulator serves a dialect: under `/v1`, as a base URL ending in `/v1` expects.
pub fn route_path(api: Api) -> String {
    format!("/v1{}", api.spec().path)
}

/// What the server did for one request, on the server's monotonic clock (ms since start).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TruthRecord {
    /// The `x-request-id` header, or `sim-<n>` when absent.
    pub request_id: String,
    pub path: String,
    pub model: String,
    pub arrival_ms: f64,
    /// Time spent waiting for a slot (the FIFO queue in front of the concurrency cap).
    #[serde(default)]
    pub queue_ms: Option<f64>,
    /// Slot -> first token as planned: base TTFT + prefill of the uncached prompt.
    #[serde(default)]
    pub prefill_ms: Option<f64>,
    pub first_token_ms: Option<f64>,
    pub last_token_ms: Option<f64>,
    /// Tokens actually sent (or, without streaming, generated).
    pub output_tokens: u32,
    pub status: u16,
    /// Injected fault, by its parameter name.
    pub fault: Option<String>,
    /// The id of the tool call the answer made, when it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<String>,
    /// The ids of the tool calls the request's tool results answered (`sim::calls`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<String>,
}

/// Counters served at `/sim/stats`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SimStats {
    /// Requests received, by route.
    pub requests: BTreeMap<String, u64>,
    /// Token events sent (streams) or generated (non-streaming bodies).
    pub tokens_streamed: u64,
    /// Injected faults, by kind (every kind listed).
    pub faults: BTreeMap<String, u64>,
    /// 429 answers, by limit (`requests`, `tokens`).
    pub rate_limited: BTreeMap<String, u64>,
    /// Other rejections, by HTTP status (`400`, `401`, `404`).
    pub rejected: BTreeMap<String, u64>,
    /// Streams holding a slot now, and the most ever at once.
    pub active: u64,
    pub max_active: u64,
    /// Requests waiting for a slot now, and the most ever at once.
    pub queued: u64,
    pub queue_peak: u64,
    /// Prompt tokens looked up in the prefix cache, and those read from it.
    #[serde(default)]
    pub prefix_cache_queries: u64,
    #[serde(default)]
    pub prefix_cache_hits: u64,
}

/// Tokens per prefix-cache block.
const BLOCK_TOKENS: u64 = (crate::sim::request::BLOCK_CHARS / 4) as u64;

/// One request's use of the prefix cache, in prompt tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// Read from the cache: no prefill.
    pub read: u64,
    /// Written to it (the prompt's blocks it did not hold).
    pub written: u64,
}

#[derive(Default)]
struct Counters {
    /// Prompt tokens looked up in the prefix cache, and those found (vLLM's
    /// `prefix_cache_queries` and `prefix_cache_hits`).
    prefix_queries: AtomicU64,
    prefix_hits: AtomicU64,
    requests: [AtomicU64; ROUTES],
    tokens: AtomicU64,
    faults: [AtomicU64; FaultKind::ALL.len()],
    limited: [AtomicU64; LimitKind::ALL.len()],
    rejected: [AtomicU64; 3],
    active: AtomicU64,
    max_active: AtomicU64,
    queued: AtomicU64,
    queue_peak: AtomicU64,
}

/// State shared by every connection.
pub struct Shared {
    pub params: SimParams,
    pub start: Instant,
    /// Unix seconds at start, for `created` fields.
    pub created: u64,
    pub slots: Option<Arc<Semaphore>>,
    /// What scales every TTFT and TPOT at a moment of the server's life (`drift`, `drift_walk`).
    pub drift: Drift,
    rng: Mutex<StdRng>,
    limiter: Option<Mutex<Limiter>>,
    counters: Counters,
    truth: Mutex<Vec<TruthRecord>>,
    next_id: AtomicU64,
    /// Prefix-cache blocks held (`prefix_cache: true`), up to `prefix_cache_tokens`.
    prefixes: Mutex<PrefixCache>,
    /// Stored responses (`store`): id -> the conversation's tokens so far (input and output), for
    /// a later `previous_response_id`; cleared when it grows too big.
    stored: Mutex<std::collections::HashMap<String, u64>>,
}

impl Shared {
    pub fn new(params: SimParams) -> Shared {
        let start = Instant::now();
        let limiter = Limiter::new(Rules::of(&params));
        Shared {
            start,
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            slots: params
                .concurrency_cap
                .map(|c| Arc::new(Semaphore::new(c as usize))),
            drift: Drift::of(&params),
            rng: Mutex::new(StdRng::seed_from_u64(params.seed)),
            limiter: limiter.is_active().then(|| Mutex::new(limiter)),
            counters: Counters::default(),
            truth: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            prefixes: Mutex::new(PrefixCache::new(params.prefix_cache_tokens / BLOCK_TOKENS)),
            stored: Mutex::new(std::collections::HashMap::new()),
            params,
        }
    }

    /// Milliseconds since server start, to the microsecond.
    pub fn ms(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_micros() as f64 / 1e3
    }

    /// A fresh sequence number for response ids.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Relaxed)
    }

    /// What a prompt of `input_tokens` tokens, whose whole blocks are `blocks`, does with the
    /// prefix cache: 16 tokens read per leading block held, 16 written per block it did not
    /// hold (`sim::prefix_cache`); counted for `/metrics`. Nothing without `prefix_cache`.
    pub fn use_prefix_cache(&self, blocks: &[u64], input_tokens: u64) -> CacheUse {
        if !self.params.prefix_cache {
            return CacheUse::default();
        }
        let l = self
            .prefixes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lookup(blocks);
        let read = (l.hits * BLOCK_TOKENS).min(input_tokens);
        let written = (l.written * BLOCK_TOKENS).min(input_tokens - read);
        let c = &self.counters;
        c.prefix_queries.fetch_add(input_tokens, Relaxed);
        c.prefix_hits.fetch_add(read, Relaxed);
        CacheUse { read, written }
    }

    /// Keeps response `id`, whose conversation holds `tokens` tokens so far.
    pub fn store_response(&self, id: String, tokens: u64) {
        let mut stored = self.stored.lock().unwrap_or_else(PoisonError::into_inner);
        if stored.len() >= 100_000 {
            stored.clear();
        }
        stored.insert(id, tokens);
    }

    /// The tokens of the stored conversation response `id` ends, if it was stored.
    pub fn stored_tokens(&self, id: &str) -> Option<u64> {
        let stored = self.stored.lock().unwrap_or_else(PoisonError::into_inner);
        stored.get(id).copied()
    }

    /// The per-request draw: a uniform number for the fault and a seed for this stream's jitter.
    pub fn draw(&self) -> (f64, u64) {
        let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
        (rng.gen::<f64>(), rng.gen::<u64>())
    }

    /// Charges the account limits of API key `key`; `None` when no limit is configured.
    pub fn admit(&self, now: Instant, key: Option<&str>, ask: Ask) -> Option<Decision> {
        let limiter = self.limiter.as_ref()?;
        let decision = limiter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit(now, key, ask);
        if let Decision::Limited { kind, .. } = decision {
            let i = LimitKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
            self.counters.limited[i].fetch_add(1, Relaxed);
        }
        Some(decision)
    }

    /// An admitted request's answer ended after `output_tokens` tokens.
    pub fn settle(&self, admission: Admission, output_tokens: u64) {
        if let Some(limiter) = &self.limiter {
            limiter
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .settle(Instant::now(), admission, output_tokens);
        }
    }

    /// The prompt tokens of `blocks` the prefix cache holds now, without using it (what a limit
    /// that leaves cache reads out does not count).
    pub fn cached_tokens(&self, blocks: &[u64], input_tokens: u64) -> u64 {
        if !self.params.prefix_cache {
            return 0;
        }
        let cache = self.prefixes.lock().unwrap_or_else(PoisonError::into_inner);
        let held = blocks.iter().take_while(|b| cache.holds(**b)).count() as u64;
        (held * BLOCK_TOKENS).min(input_tokens)
    }

    pub fn count_route(&self, route: usize) {
        self.counters.requests[route.min(ROUTES - 1)].fetch_add(1, Relaxed);
    }

    pub fn count_fault(&self, kind: FaultKind) {
        self.counters.faults[kind.index()].fetch_add(1, Relaxed);
    }

    pub fn count_rejected(&self, status: u16) {
        let i = match status {
            400 => 0,
            401 => 1,
            _ => 2,
        };
        self.counters.rejected[i].fetch_add(1, Relaxed);
    }

    pub fn count_tokens(&self, n: u64) {
        self.counters.tokens.fetch_add(n, Relaxed);
    }

    /// Streams holding a slot right now.
    pub fn active(&self) -> u64 {
        self.counters.active.load(Relaxed)
    }

    pub fn record(&self, rec: TruthRecord) {
        let mut truth = self.truth.lock().unwrap_or_else(PoisonError::into_inner);
        if truth.len() < TRUTH_CAP {
            truth.push(rec);
        }
    }

    pub fn truth(&self) -> Vec<TruthRecord> {
        self.truth
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn stats(&self) -> SimStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Relaxed);
        SimStats {
            requests: Api::ALL
                .into_iter()
                .map(route_path)
                .chain(OTHER_ROUTES.map(String::from))
                .zip(&c.requests)
                .map(|(r, n)| (r, get(n)))
                .collect(),
            tokens_streamed: get(&c.tokens),
            faults: FaultKind::ALL
                .iter()
                .map(|k| (k.name().to_string(), get(&c.faults[k.index()])))
                .collect(),
            // Requests and tokens always; the other limits when they refused any.
            rate_limited: LimitKind::ALL
                .iter()
                .zip(&c.limited)
                .map(|(k, n)| (k, get(n)))
                .filter(|(k, n)| *n > 0 || matches!(k, LimitKind::Requests | LimitKind::Tokens))
                .map(|(k, n)| (k.as_str().to_string(), n))
                .collect(),
            rejected: [("400", 0), ("401", 1), ("404", 2)]
                .iter()
                .map(|(k, i)| (k.to_string(), get(&c.rejected[*i])))
                .collect(),
            active: get(&c.active),
            max_active: get(&c.max_active),
            queued: get(&c.queued),
            queue_peak: get(&c.queue_peak),
            prefix_cache_queries: get(&c.prefix_queries),
            prefix_cache_hits: get(&c.prefix_hits),
        }
    }
}

/// One admitted request's accounting: queue and slot counts, the slot permit, and its truth
/// record, all settled on drop (also when the client goes away mid-stream).
pub struct Guard {
    ctx: Arc<Shared>,
    pub truth: TruthRecord,
    queued: bool,
    active: bool,
    permit: Option<OwnedSemaphorePermit>,
    /// What the account limits settle when the answer ends.
    pub admission: Option<Admission>,
}

impl Guard {
    pub fn new(ctx: Arc<Shared>, truth: TruthRecord) -> Guard {
        Guard {
            ctx,
            truth,
            queued: false,
            active: false,
            permit: None,
            admission: None,
        }
    }

    pub fn ctx(&self) -> &Arc<Shared> {
        &self.ctx
    }

    /// The request starts waiting for a slot.
    pub fn enqueue(&mut self) {
        let c = &self.ctx.counters;
        let now = c.queued.fetch_add(1, Relaxed) + 1;
        c.queue_peak.fetch_max(now, Relaxed);
        self.queued = true;
    }

    /// The request got its slot (`permit` is `None` when there is no cap): prefill starts.
    pub fn start(&mut self, permit: Option<OwnedSemaphorePermit>) {
        let c = &self.ctx.counters;
        if std::mem::take(&mut self.queued) {
            c.queued.fetch_sub(1, Relaxed);
        }
        let now = c.active.fetch_add(1, Relaxed) + 1;
        c.max_active.fetch_max(now, Relaxed);
        self.active = true;
        self.permit = permit;
    }

    /// A token was sent (or generated) at `t`.
    pub fn token(&mut self, t: Instant) {
        let ms = self.ctx.ms(t);
        if self.truth.first_token_ms.is_none() {
            self.truth.first_token_ms = Some(ms);
        }
        self.truth.last_token_ms = Some(ms);
        self.truth.output_tokens += 1;
    }

    /// Generation is over: give the slot back.
    pub fn release(&mut self) {
        if std::mem::take(&mut self.active) {
            self.ctx.counters.active.fetch_sub(1, Relaxed);
        }
        self.permit = None;
        if let Some(a) = self.admission.take() {
            self.ctx.settle(a, u64::from(self.truth.output_tokens));
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release();
        if std::mem::take(&mut self.queued) {
            self.ctx.counters.queued.fetch_sub(1, Relaxed);
        }
        let truth = std::mem::take(&mut self.truth);
        self.ctx.count_tokens(u64::from(truth.output_tokens));
        self.ctx.record(truth);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12: a repeated prompt is served from the prefix cache; a busted one is not.
    #[test]
    fn prefix_cache_counts_leading_blocks_seen_before() {
        use crate::sim::request::prefix_blocks;
        let on = Shared::new(SimParams {
            prefix_cache: true,
            ..SimParams::default()
        });
        let prompt = "word ".repeat(100);
        let blocks = prefix_blocks(&prompt);
        assert_eq!(blocks.len(), 500 / 64);
        let first = on.use_prefix_cache(&blocks, 125);
        assert_eq!(
            first,
            CacheUse {
                read: 0,
                written: 16 * 7
            },
            "first time: nothing cached, every whole block written"
        );
        assert_eq!(
            on.use_prefix_cache(&blocks, 125),
            CacheUse {
                read: 16 * 7,
                written: 0
            },
            "second time: every whole block"
        );
        let busted = prefix_blocks(&format!("[x-1] {prompt}"));
        assert_eq!(
            on.use_prefix_cache(&busted, 127).read,
            0,
            "a new first block shares nothing"
        );
        let stats = on.stats();
        assert_eq!(
            (stats.prefix_cache_queries, stats.prefix_cache_hits),
            (125 + 125 + 127, 16 * 7)
        );
        let off = Shared::new(SimParams::default());
        off.use_prefix_cache(&blocks, 125);
        assert_eq!(off.use_prefix_cache(&blocks, 125), CacheUse::default());
    }

    /// Issue 38, part 3: `prefix_cache_tokens` bounds the cache: two prompts that fit are both
    /// read again; a third evicts the least recently used.
    #[test]
    fn prefix_cache_tokens_bound_the_cache() {
        use crate::sim::request::prefix_blocks;
        let small = Shared::new(SimParams {
            prefix_cache: true,
            prefix_cache_tokens: 2 * 16 * 4,
            ..SimParams::default()
        });
        let prompts: Vec<Vec<u64>> = (0..3)
            .map(|i| prefix_blocks(&format!("{i}").repeat(4 * 64)))
            .collect();
        for p in &prompts[..2] {
            small.use_prefix_cache(p, 64);
        }
        assert_eq!(small.use_prefix_cache(&prompts[0], 64).read, 64);
        assert_eq!(small.use_prefix_cache(&prompts[1], 64).read, 64);
        small.use_prefix_cache(&prompts[2], 64);
        assert_eq!(small.use_prefix_cache(&prompts[0], 64).read, 0, "evicted");
        assert_eq!(small.use_prefix_cache(&prompts[2], 64).read, 64);
    }
}
