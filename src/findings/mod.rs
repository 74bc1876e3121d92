//! Per-model findings over a ladder (docs/metrics.md): the TTFT knee (where it is, whether requests
//! queue behind a concurrency cap, the backend saturates, or a rate limit bites), the estimated
//! cap, the rate-limit wall, and how much of linear throughput scaling each step keeps.
//! Pure: takes `summary.csv` rows (plus optional per-step details from the records) and returns
//! data for `findings.json` and plain sentences for the report.
//!
//! Layout: this file holds the public types, `analyze` and the parts shared by every finding
//! (throughput efficiency); `knee` finds and describes the TTFT knee, `wall` the rate-limit
//! wall, `self_check` the notes on a client that may have shaped the figures, `kept_up` whether
//! the client kept up with its plan at all (a step that it did not is invalid for the gate).

use crate::model::LadderUnit;
use crate::model::{ErrorClass, LimitKind, RequestRecord};
use crate::runner::record::Tap;
use crate::stats::{models_of, Profile, StepSummary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod evidence;
pub mod kept_up;
mod knee;
pub mod limit_rule;
mod rate;
pub mod refine;
pub mod replay;
pub mod rise;
pub mod search;
mod self_check;
pub mod slo;
#[cfg(test)]
mod tests;
pub mod ttft_parts;
mod wall;

pub use evidence::{cache_share_fell, EvidenceSeries, ServerEvidence};
use knee::{find_knee, knee_sentence};
pub use rate::{Backlog, Served, ACHIEVED_RATE_MIN_SHARE};
use self_check::self_check_notes;
#[cfg(test)]
use self_check::thin_load_note;
pub use ttft_parts::{PartSample, TtftParts};
use wall::{find_wall, wall_sentence};

/// Successful requests every step needs before a knee can be judged.
pub const MIN_KNEE_SAMPLES: u64 = 20;
/// Share of attempts answered with 429 that makes a step rate-limited.
const RATE_429: f64 = 0.01;
/// Minimum number of first-attempt 429s at a rate-limited step.
const MIN_429: u64 = 3;
/// The share of every limit a 429's headers must still show left for it to be a refusal with
/// room to spare (an acceleration limit), not a limit reached.
const HEADROOM_LEFT: f64 = 0.1;

/// The one rate-limit rule, shared by the wall and the knee's "rate-limited" kind: first-attempt
/// 429s are ≥ 3 in number and ≥ 1% of the step's attempts.
pub fn rate_limited(count_429: u64, attempted: u64) -> bool {
    count_429 >= MIN_429 && rate(count_429, attempted) >= RATE_429
}

/// Per-step facts that only the request records know.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepExtras {
    /// Requests whose first attempt got a rate-limit 429 (even if a retry succeeded).
    pub first_attempt_429: u64,
    /// 429s per limit their headers or message named.
    #[serde(default)]
    pub limits_named: BTreeMap<LimitKind, u64>,
    /// 429s that named no limit while their headers still showed room on every limit (a ramp
    /// refused: an acceleration limit).
    #[serde(default)]
    pub refused_with_headroom: u64,
    /// The limit the 429s reported, per kind (the largest seen).
    #[serde(default)]
    pub limit_values: BTreeMap<LimitKind, u64>,
    /// What the successful requests would have counted under each provider's rule.
    #[serde(default)]
    pub usage: limit_rule::Usage,
    /// Requests that failed with a quota error (out of credit / spend limit).
    pub quota_errors: u64,
    /// Rate mode: the arrivals and the delay trend that judge throughput saturation.
    #[serde(default)]
    pub backlog: rate::Backlog,
    /// Successful requests' TTFT with the client's and the server's timings, for the TTFT
    /// decomposition (`ttft_parts`).
    #[serde(default, skip_serializing)]
    pub parts: Vec<PartSample>,
}

impl StepExtras {
    /// Counts one record of the step.
    pub fn add(&mut self, r: &RequestRecord) {
        self.first_attempt_429 += u64::from(r.first_attempt_429);
        match r.limit_kind {
            Some(kind) => {
                *self.limits_named.entry(kind).or_default() += 1;
                if let Some(v) = r.limit_value {
                    let seen = self.limit_values.entry(kind).or_default();
                    *seen = (*seen).max(v);
                }
            }
            None if r.error_class == Some(ErrorClass::Http429) => {
                let room = r.ratelimit_headroom.is_some_and(|h| h >= HEADROOM_LEFT);
                self.refused_with_headroom += u64::from(room);
            }
            None => {}
        }
        self.usage.add(r);
        self.quota_errors += u64::from(r.error_class == Some(ErrorClass::Quota));
        self.backlog.add(r);
        self.parts.extend(PartSample::of(r));
    }
}

/// Per-step extras of a run, keyed by (model, step).
pub type RunExtras = BTreeMap<(String, u32), StepExtras>;

/// Groups records by (model, step) into [`StepExtras`].
pub fn extras_from_records(records: &[RequestRecord]) -> RunExtras {
    let mut map = RunExtras::new();
    for r in records {
        map.record(r);
    }
    map
}

/// A run's recorder keeps the extras as records arrive.
impl Tap for RunExtras {
    fn record(&mut self, r: &RequestRecord) {
        self.entry((r.model.clone(), r.step)).or_default().add(r);
    }
}

/// Why TTFT turned up at the knee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KneeKind {
    /// TPOT flat: a concurrency cap, requests wait in line.
    Queueing,
    /// TPOT rose too: the backend slows down.
    Saturation,
    /// The knee step is rate-limited by the wall's rule (≥ 3 and ≥ 1% first-attempt 429s).
    RateLimited,
    /// No TPOT at the knee or reference step (e.g. one-token outputs): cannot tell.
    Unclassified,
    /// A prompt-size ladder (`ladder_over: prompt_tokens`) at fixed concurrency: TTFT grows
    /// with the prompt because prefill costs more, not because requests queue at a cap.
    Prefill,
    /// The cache hit share fell at the knee (`evidence::cache_share_fell`) and the server
    /// showed no queue: more of each prompt is prefilled again (agents outgrew the prefix cache).
    CacheMisses,
}

/// The cause of a run's TTFT knee, as the knee line, `diff` and the report give it (one cause
/// per model and run: [`Knee::cause`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCause {
    pub kind: KneeKind,
    /// Seen: the server's queue, waiting requests or KV cache showed it, or 429s did. Otherwise
    /// inferred from what varied with load: TPOT, a server time that does not split queue from
    /// prefill, the prompt size.
    pub seen: bool,
    /// "queueing, confirmed by the server: server queue P90 0 → 724 ms (sim)", "queueing,
    /// inferred: the server's time grew with load while TPOT stayed flat: …".
    pub words: String,
}

impl KneeKind {
    /// "queueing", "saturation", "rate-limited", "cause unclear", "prefill".
    pub fn name(self) -> &'static str {
        match self {
            KneeKind::Queueing => "queueing",
            KneeKind::Saturation => "saturation",
            KneeKind::RateLimited => "rate-limited",
            KneeKind::Unclassified => "cause unclear",
            KneeKind::Prefill => "prefill",
            KneeKind::CacheMisses => "prefill of cache misses",
        }
    }
}

/// TTFT (and TPOT) at one step, reported as evidence for the knee.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepEvidence {
    pub step: u32,
    pub concurrency: u32,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p90_ms: f64,
    #[serde(default)]
    pub ttft_p99_ms: Option<f64>,
    pub ttft_mean_ms: Option<f64>,
    pub tpot_p50_ms: Option<f64>,
    /// Input tokens read from the cache ÷ input tokens (`StepSummary::cache_hit_share`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit_share: Option<f64>,
    /// The server's own prefill P90 (sim, llama.cpp), when it reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_p90_ms: Option<f64>,
}

/// A TTFT knee in the interval (`max_clean_concurrency`, `at_knee.concurrency`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    pub step: u32,
    pub concurrency: u32,
    pub kind: KneeKind,
    /// Concurrency of the step before the knee (the interval's open lower end).
    pub max_clean_concurrency: u32,
    /// 429s / attempts at the knee step.
    pub rate_429: f64,
    /// K̂ = steady-window RPS × (mean E2E − (mean TTFT − reference mean TTFT)), for queueing
    /// knees only, when defined and positive.
    pub estimated_cap: Option<f64>,
    /// Whether the knee was established with confidence (each step from the knee on rose by
    /// `findings::rise`'s rule on bounds and exact tests); false when per-request samples were
    /// missing and point values of P90 were used.
    #[serde(default)]
    pub with_confidence: bool,
    /// Midpoint of the interval, when it is wider than 1.
    pub suggested_next: Option<u32>,
    /// The step with the best TTFT P90 before the knee.
    pub reference: StepEvidence,
    pub at_knee: StepEvidence,
    /// What the server's own data (per-request timings, `/metrics`) says about the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_evidence: Option<ServerEvidence>,
    /// What rose at the knee step (`findings::rise`): TTFT P90, the tail, the server's queue.
    #[serde(default)]
    pub rise: rise::Rise,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KneeFinding {
    /// No knee: the highest step tested is clean.
    None {
        highest_step: u32,
        highest_concurrency: u32,
        /// A prompt-size ladder's TTFT P90 growth per 1k prompt tokens, smallest to largest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ttft_ms_per_1k_tokens: Option<f64>,
    },
    /// No steps were given.
    NoSteps,
    /// Not analysed: `step` had only `n` successful requests (or no TTFT). Never "no knee".
    NotEnoughSamples {
        step: u32,
        concurrency: u32,
        n: u64,
        needed: u64,
    },
    Knee(Box<Knee>),
}

impl KneeFinding {
    /// Step of the knee, if there is one (for diffs of findings).
    pub fn step(&self) -> Option<u32> {
        match self {
            KneeFinding::Knee(k) => Some(k.step),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WallFinding {
    /// No 429 at any step.
    None,
    /// Some 429s, but no step from which on they stay ≥ 1% and ≥ 3.
    IsolatedRateLimits { total: u64 },
    Wall {
        step: u32,
        concurrency: u32,
        /// First-attempt 429s at the wall step.
        count_429: u64,
        rate_429: f64,
        /// The limit most 429s named from the wall step on; `Acceleration` when they named
        /// none while the headers showed room, on a ramp.
        kind: Option<LimitKind>,
        /// That limit as the 429s reported it.
        #[serde(default)]
        limit: Option<u64>,
        /// What counted toward it, judged from the wall step's traffic.
        #[serde(default)]
        counted: Option<limit_rule::Counted>,
        /// The step before the wall, for a ramp refused: its concurrency.
        #[serde(default)]
        ramp_from: Option<u32>,
        tpm_total_at_wall: f64,
        rps_at_wall: f64,
        /// Wall time of the wall step: a per-minute limit lets a burst through in a short step.
        #[serde(default)]
        duration_s_at_wall: f64,
    },
}

impl WallFinding {
    /// Step of the wall, if there is one (for diffs of findings).
    pub fn step(&self) -> Option<u32> {
        match self {
            WallFinding::Wall { step, .. } => Some(*step),
            _ => None,
        }
    }
}

/// How much of linear throughput scaling a step keeps relative to the first step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepEfficiency {
    pub step: u32,
    pub concurrency: u32,
    pub tpm: f64,
    pub rps: f64,
    /// (tpm / concurrency) / (first step's tpm / its concurrency); `None` when undefined.
    pub throughput_efficiency: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFindings {
    pub model: String,
    /// What the steps' values (every `concurrency` here) count: streams, requests/s or prompt
    /// tokens. Sentences name steps with it ("at 16 streams", "at 4 req/s").
    #[serde(default)]
    pub ladder_unit: LadderUnit,
    pub knee: KneeFinding,
    /// The requests were not streamed (`request.stream: false`): the knee's figures are E2E's,
    /// and its sentence says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub knee_on_e2e: bool,
    pub wall: WallFinding,
    pub efficiency: Vec<StepEfficiency>,
    /// Per step: TTFT split into headers, server queue, prefill and the rest (with sources);
    /// empty without per-request records.
    #[serde(default)]
    pub ttft_parts: Vec<TtftParts>,
    pub notes: Vec<String>,
    /// Replay: the first speed crossing the SLO, a knee or a wall (`replay::breaks_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaks_at: Option<replay::BreaksAt>,
    /// `load.search`: the highest load meeting its SLO, with its uncertainty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<search::Capacity>,
}

/// Findings of every model in a result (models in order of first appearance in `summaries`),
/// with the per-step 429 details from `records` when they were kept. The one grouping used by
/// `run`, `diff` and `report`, so every command reports the same knee and wall.
pub fn analyze_run(
    summaries: &[StepSummary],
    records: Option<&[RequestRecord]>,
) -> Vec<ModelFindings> {
    analyze_run_with(summaries, records.map(extras_from_records).as_ref())
}

/// [`analyze_run`] with the per-step extras already counted (a run counts them as records
/// arrive and keeps no records).
pub fn analyze_run_with(
    summaries: &[StepSummary],
    extras: Option<&RunExtras>,
) -> Vec<ModelFindings> {
    models_of(summaries)
        .into_iter()
        .map(|m| {
            let steps: Vec<StepSummary> =
                summaries.iter().filter(|r| r.model == m).cloned().collect();
            let ex: Option<Vec<StepExtras>> = extras.map(|e| {
                steps
                    .iter()
                    .map(|r| e.get(&(m.to_string(), r.step)).cloned().unwrap_or_default())
                    .collect()
            });
            analyze(m, &steps, ex.as_deref())
        })
        .collect()
}

/// Findings of one model over its ladder. `steps` are that model's summary rows (sorted by step
/// here anyway); `extras`, when given, must have one entry per row in the same order (otherwise
/// it is ignored with a note). Without extras, `err_429` stands in for first-attempt 429s.
pub fn analyze(model: &str, steps: &[StepSummary], extras: Option<&[StepExtras]>) -> ModelFindings {
    let mut notes = Vec::new();
    let extras = match extras {
        Some(e) if e.len() != steps.len() => {
            notes.push(format!(
                "Per-step 429 details ignored: {} entries for {} steps; using the 429 counts of summary.csv.",
                e.len(),
                steps.len()
            ));
            None
        }
        other => other,
    };
    let mut order: Vec<usize> = (0..steps.len()).collect();
    // By value: the ladder's order, also when `refine` ran steps in between afterwards.
    order.sort_by_key(|&i| steps[i].ladder_order());
    let rows: Vec<&StepSummary> = order.iter().map(|&i| &steps[i]).collect();
    let extra: Vec<StepExtras> = order
        .iter()
        .map(|&i| extras.map_or_else(StepExtras::default, |e| e[i].clone()))
        .collect();
    let n429: Vec<u64> = rows
        .iter()
        .zip(&extra)
        .map(|(s, e)| s.err_429.max(e.first_attempt_429))
        .collect();
    notes.extend(kept_up::invalid_notes(&rows));
    notes.extend(wall::quota_note(&extra));
    notes.extend(rate::rate_notes(&rows, &extra));
    notes.extend(self_check_notes(&rows));
    let bounds: Vec<Option<(f64, f64)>> = rows
        .iter()
        .map(|s| s.ttft_p90_lo_ms.zip(s.ttft_p90_hi_ms))
        .collect();
    let ttft_parts = ttft_parts::decompose(
        &rows
            .iter()
            .map(|s| (s.step, s.concurrency))
            .collect::<Vec<_>>(),
        &extra,
    );
    let aligned: Vec<Option<&TtftParts>> = rows
        .iter()
        .map(|s| ttft_parts.iter().find(|p| p.step == s.step))
        .collect();
    let samples: Vec<rise::StepSamples> = extra
        .iter()
        .map(|e| {
            rise::StepSamples::new(
                e.parts.iter().map(|p| p.ttft_ms).collect(),
                e.parts.iter().filter_map(|p| p.queue_ms).collect(),
            )
        })
        .collect();
    // Without streaming there is no TTFT: the knee goes by E2E, by the same rule (point values:
    // no per-request bounds or samples of E2E are kept).
    let knee_on_e2e = !Profile::of(rows.iter().copied()).streamed();
    let knee = if knee_on_e2e {
        let by_e2e: Vec<StepSummary> = rows.iter().map(|s| e2e_as_ttft(s)).collect();
        let by_e2e: Vec<&StepSummary> = by_e2e.iter().collect();
        let none: Vec<Option<(f64, f64)>> = vec![None; rows.len()];
        let no_parts: Vec<Option<&TtftParts>> = vec![None; rows.len()];
        let no_samples: Vec<rise::StepSamples> = rows
            .iter()
            .map(|_| rise::StepSamples::new(Vec::new(), Vec::new()))
            .collect();
        find_knee(&by_e2e, &n429, &none, &no_parts, &no_samples)
    } else {
        find_knee(&rows, &n429, &bounds, &aligned, &samples)
    };
    let knee_says_saturation =
        matches!(&knee, KneeFinding::Knee(k) if k.kind == KneeKind::Saturation);
    if !knee_says_saturation {
        notes.extend(decode_saturation_note(&rows));
    }
    let wall = find_wall(&rows, &n429, &extra);
    notes.extend(wall::limit_notes(&rows, &wall));
    ModelFindings {
        knee_on_e2e,
        model: model.to_string(),
        ladder_unit: rows.first().map(|s| s.ladder_unit).unwrap_or_default(),
        knee,
        wall,
        efficiency: efficiency(&rows),
        ttft_parts,
        notes,
        breaks_at: None,
        capacity: None,
    }
}

/// A step of a ladder that was not streamed, its E2E figures in TTFT's place: what the knee reads.
fn e2e_as_ttft(s: &StepSummary) -> StepSummary {
    StepSummary {
        ttft_p50_ms: s.e2e_p50_ms,
        ttft_p90_ms: s.e2e_p90_ms,
        ttft_p99_ms: s.e2e_p99_ms,
        ttft_mean_ms: s.e2e_mean_ms,
        ttft_p90_lo_ms: None,
        ttft_p90_hi_ms: None,
        ..s.clone()
    }
}

/// TPOT P50 this far above the first step's, at a step and every later one, is saturation.
pub const TPOT_SATURATION_RISE: f64 = 0.20;

/// Decode slowing down with load is saturation even when TTFT never bends (a backend without
/// a queue slows every stream instead of making new ones wait): say where TPOT starts rising.
fn decode_saturation_note(rows: &[&StepSummary]) -> Option<String> {
    let enough = |s: &StepSummary| s.succeeded >= MIN_KNEE_SAMPLES;
    let first = rows.first().filter(|s| enough(s))?;
    let base = first.tpot_p50_ms.filter(|v| *v > 0.0)?;
    let above = |s: &StepSummary| {
        enough(s)
            && s.tpot_p50_ms
                .is_some_and(|v| v >= base * (1.0 + TPOT_SATURATION_RISE))
    };
    let start = (1..rows.len()).find(|&i| rows[i..].iter().all(|s| above(s)))?;
    let last = rows.last()?;
    let top = last.tpot_p50_ms?;
    let unit = first.ladder_unit;
    Some(format!(
        "Decode saturation: TPOT P50 rises from {base:.1} ms {} to {top:.1} ms {} (×{:.1}), above +{:.0}% from {} on; the backend slows every stream down as load grows.",
        unit.at(first.concurrency),
        unit.at(last.concurrency),
        top / base,
        TPOT_SATURATION_RISE * 100.0,
        unit.describe(rows[start].concurrency)
    ))
}

fn rate(count: u64, attempted: u64) -> f64 {
    if attempted == 0 {
        0.0
    } else {
        count as f64 / attempted as f64
    }
}

fn efficiency(rows: &[&StepSummary]) -> Vec<StepEfficiency> {
    let per_stream =
        |s: &StepSummary| (s.concurrency > 0).then(|| s.tpm / f64::from(s.concurrency));
    let base = rows
        .first()
        .and_then(|s| per_stream(s))
        .filter(|b| *b > 0.0);
    rows.iter()
        .map(|s| StepEfficiency {
            step: s.step,
            concurrency: s.concurrency,
            tpm: s.tpm,
            rps: s.rps,
            throughput_efficiency: base.zip(per_stream(s)).map(|(b, p)| p / b),
        })
        .collect()
}

impl ModelFindings {
    /// Concurrency of the knee step; `None` without a knee (incl. too few samples).
    pub fn knee_concurrency(&self) -> Option<u32> {
        match &self.knee {
            KneeFinding::Knee(k) => Some(k.concurrency),
            _ => None,
        }
    }

    /// For diffs: `None` when the knee was not analysed (too few samples, no steps), else
    /// `Some(knee concurrency or None for "no knee")`.
    pub fn knee_status(&self) -> Option<Option<u32>> {
        match &self.knee {
            KneeFinding::NotEnoughSamples { .. } | KneeFinding::NoSteps => None,
            _ => Some(self.knee_concurrency()),
        }
    }

    /// Whether requests at the step of ladder value `value` were below the TTFT knee, not yet
    /// waiting in a queue: at most the knee's max clean value and, on a streams ladder whose
    /// cap estimate sits lower (the knee line then says those steps probably waited already),
    /// at most the cap. Every step is, without a knee or when the knee was not analysed. The
    /// one rule for "a step that did not queue" (`plan` sizes from such steps).
    pub fn below_knee(&self, value: u32) -> bool {
        let KneeFinding::Knee(k) = &self.knee else {
            return true;
        };
        let cap = k
            .estimated_cap
            .filter(|_| self.ladder_unit == LadderUnit::Streams)
            .map_or(u32::MAX, |c| c.round().max(1.0) as u32);
        value <= k.max_clean_concurrency && value <= cap
    }

    /// Concurrency of the rate-limit wall step; `None` without a wall.
    pub fn wall_concurrency(&self) -> Option<u32> {
        match self.wall {
            WallFinding::Wall { concurrency, .. } => Some(concurrency),
            _ => None,
        }
    }

    /// Plain sentences for the report: knee, wall, then notes.
    pub fn sentences(&self) -> Vec<String> {
        let mut knee = knee_sentence(&self.knee, self.ladder_unit);
        if self.knee_on_e2e {
            knee = format!(
                "{} (Not streamed: the knee goes by E2E, since no TTFT was measured.)",
                knee.replace("TTFT", "E2E")
            );
        }
        let mut out = vec![knee];
        out.extend(wall_sentence(&self.wall, self.ladder_unit));
        out.extend(self.notes.iter().cloned());
        out
    }
}
