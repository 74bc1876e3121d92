//! The data model of a comparison: the two sides going in, and the checks, verdicts, outcome
//! and exit code coming out. Serialisable, because `ladder diff --format json` prints it as is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ExitCode;
use crate::findings::RunCause;
use crate::model::LadderUnit;
use crate::scenario::{Gates, MetricGate};
use crate::stats::StepSummary;

/// One attempted request as far as `compare` cares (a projection of a `requests.csv` row).
/// ITL is judged from each request's gap histogram (`itl`) when both sides kept them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestSample {
    pub model: String,
    /// 1-based step index, as in `summary.csv`.
    pub step: u32,
    /// Worker (stream) that sent it.
    #[serde(default)]
    pub worker: u32,
    /// Start, ms since the run began: orders requests in time (correlation, steady window).
    #[serde(default)]
    pub started_at_ms: f64,
    pub ok: bool,
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// Time to the first answer token; `None` without one (and in older sidecars).
    #[serde(default)]
    pub ttfc_ms: Option<f64>,
    pub output_tokens: Option<u64>,
    /// The other counts a request is billed on (the cost check prices both sides at the new
    /// run's prices, `Pricing::cost`).
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
    /// The model the request was sent to, when `model` was renamed for a pair (`OLD→NEW`): the
    /// name its price is listed under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_to: Option<String>,
    /// Inter-token gaps; `None` when not recorded (files written before `itl_hist`).
    #[serde(default)]
    pub itl: Option<crate::model::ItlHistogram>,
    /// TTFT with the client's and the server's timings (successful requests), for naming the
    /// part of TTFT that moved.
    #[serde(default)]
    pub parts: Option<crate::findings::PartSample>,
}

/// One side of a comparison: a baseline or a run, already loaded.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// The path shown to users.
    pub label: String,
    pub fingerprint: String,
    /// The normalized scenario, for the refusal diff; `None` when not recorded.
    pub workload_yaml: Option<String>,
    pub summaries: Vec<StepSummary>,
    /// Per-request samples (`requests.csv` or the baseline sidecar), when kept.
    pub samples: Option<Vec<RequestSample>>,
    /// Knee concurrency per model (`None` = no knee); a model absent from the map was not analysed.
    pub knee: BTreeMap<String, Option<u32>>,
    /// The knee's concurrency and its cause per model, for models with a knee: `diff` names
    /// this cause for a step at or past the knee whose server time moved without a split.
    pub knee_cause: BTreeMap<String, (u32, RunCause)>,
    /// Rate-limit wall concurrency per model, same convention as `knee`.
    pub wall: BTreeMap<String, Option<u32>>,
    /// Per model with a wall: the limit it hit and its value, as the 429s named them, so a
    /// wall that moved says which limit moved it.
    pub wall_rule: BTreeMap<String, WallRule>,
    /// Per model with a queueing knee and a cap estimate: where the knee line estimated the
    /// cap, so the comparison can put the two estimates side by side (`compare::cap`).
    pub caps: BTreeMap<String, CapBasis>,
    /// A pooled baseline's runs (oldest first, the latest included): each run's summary rows
    /// and its id. Empty for a run directory or a single-run baseline.
    pub pool: Vec<PooledRun>,
}

/// The limit a wall hit, as its 429s named it, and that limit's value.
pub type WallRule = (Option<crate::model::LimitKind>, Option<u64>);

/// Where a run's knee line estimated its concurrency cap (a queueing knee): the knee step, the
/// reference step below it whose TTFT is the unqueued one, and the estimate itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapBasis {
    /// Ladder value of the knee step, where the cap was estimated.
    pub at: u32,
    /// Ladder value of the reference step (the best TTFT P90 below the knee).
    pub reference: u32,
    /// The step before the knee (the knee interval's open lower end).
    pub max_clean: u32,
    /// The knee line's estimate: requests in flight the server serves at once.
    pub estimate: f64,
}

/// One run of a pooled baseline (`baselines/<scenario>.runs/<id>.csv`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PooledRun {
    /// The run's id: its run directory's name (a UTC timestamp).
    pub id: String,
    pub summaries: Vec<StepSummary>,
}

#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub gates: Gates,
    pub allow_different_workload: bool,
    /// Any skipped or inconclusive gate makes the result inconclusive (exit 4).
    pub strict: bool,
    /// The SLO to judge capacity by (the highest load each side's steps show meeting it):
    /// `load.search`'s, else the scenario's `slo:` when it sets a bound; `None`: no such check.
    pub search: Option<crate::model::Slo>,
    /// Bootstrap resamples (the gate uses ≥ 10,000).
    pub resamples: usize,
    pub seed: u64,
    /// The new run's `pricing:`: both sides' token counts are priced with it (the cost check,
    /// docs/cost.md), so a price change never reads as a regression; `None`: no cost check.
    pub pricing: Option<crate::model::Pricing>,
    /// The two sides are an A/B run's models, interleaved request by request: each one's
    /// throughput and cap are set by both models' speeds, so they inform and do not gate
    /// (`pair::coupled_rates`).
    pub interleaved: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            gates: Gates::default(),
            allow_different_workload: false,
            strict: false,
            search: None,
            resamples: 10_000,
            seed: 0x1add_e5ed,
            pricing: None,
            interleaved: false,
        }
    }
}

impl CompareOptions {
    /// The options of `ladder diff`, `run --against` and `report --baseline`: one seed and one
    /// resample count, so the three print the same verdicts for the same inputs.
    pub fn for_cli(gates: Gates, allow_different_workload: bool, strict: bool) -> Self {
        CompareOptions {
            gates,
            allow_different_workload,
            strict,
            search: None,
            resamples: 10_000,
            seed: 0x001a_dde5,
            pricing: None,
            interleaved: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Ttft,
    Tpot,
    Itl,
    E2e,
    ErrorRate,
    /// Share of successes that were short (possible truncation), judged like the error rate.
    ShortRate,
    Tpm,
    Rps,
    /// Output tokens per second of one stream while it streams (`stats::Progress::decode_rate`):
    /// the server's token speed, whatever the answers' length. The gated throughput check.
    DecodeRate,
    Knee,
    Wall,
    /// `load.search`: the highest load meeting the search's SLO.
    Capacity,
    /// Time to the first answer token (after any streamed reasoning): judged when either side
    /// of a step reasoned. Last, so the other metrics keep their per-check seeds
    /// (`compare::step::check_seed`).
    Ttfc,
    /// Mean cost per successful request, both sides priced at the new run's prices
    /// (`compare::cost`): judged when the new run has `pricing:`.
    Cost,
    /// Input tokens read from the cache ÷ input tokens (`compare::cache`): judged when either
    /// side of a step read from a cache; a drop is the regression.
    CacheHit,
    /// The concurrency cap each side's queueing knee implies (`compare::cap`): judged when both
    /// sides have one; a fall is the regression.
    Cap,
    /// E2E re-timed to the baseline's mean answer length, per request TTFT + TPOT × (L − 1)
    /// (`compare::length`): judged, with E2E's gate, in E2E's place when the two sides' answers
    /// differ in length, where E2E follows the length rather than the speed.
    E2eAtEqualLength,
}

impl Metric {
    pub const LATENCIES: [Metric; 5] = [
        Metric::Ttft,
        Metric::Ttfc,
        Metric::Tpot,
        Metric::Itl,
        Metric::E2e,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Metric::Ttft => "TTFT",
            Metric::Ttfc => "TTFC",
            Metric::Tpot => "TPOT",
            Metric::Itl => "ITL",
            Metric::E2e => "E2E",
            Metric::ErrorRate => "error rate",
            Metric::ShortRate => "short share",
            Metric::Tpm => "TPM",
            Metric::Rps => "RPS",
            Metric::DecodeRate => "decode rate",
            Metric::Knee => "knee",
            Metric::Wall => "wall",
            Metric::Capacity => "capacity",
            Metric::Cost => "cost per success",
            Metric::CacheHit => "cache hit share",
            Metric::Cap => "cap",
            Metric::E2eAtEqualLength => "E2E at equal length",
        }
    }

    /// The latencies, and E2E at equal length (judged by the latency rules, not in
    /// [`Metric::LATENCIES`]: only a step whose answers' lengths differ has it).
    pub fn is_latency(self) -> bool {
        Metric::LATENCIES.contains(&self) || self == Metric::E2eAtEqualLength
    }

    /// TPM, RPS and the decode rate: rates judged over the steady windows, where a fall is the
    /// regression.
    pub fn is_throughput(self) -> bool {
        matches!(self, Metric::Tpm | Metric::Rps | Metric::DecodeRate)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Percentile {
    P50,
    P90,
    P99,
    /// The mean: judged on queued steps only (TTFT, TTFC and E2E at or past the queueing knee on
    /// both sides), beside P50, where the tail is a queued request. Not in [`Percentile::ALL`].
    Mean,
}

impl Percentile {
    pub const ALL: [Percentile; 3] = [Percentile::P50, Percentile::P90, Percentile::P99];

    pub fn label(self) -> &'static str {
        match self {
            Percentile::P50 => "P50",
            Percentile::P90 => "P90",
            Percentile::P99 => "P99",
            Percentile::Mean => "mean",
        }
    }
    /// The quantile; the mean's 0.5 stands for its centre (the effective sample size's rule).
    pub fn q(self) -> f64 {
        match self {
            Percentile::P50 | Percentile::Mean => 0.5,
            Percentile::P90 => 0.9,
            Percentile::P99 => 0.99,
        }
    }
    /// Samples needed per side before the gate means anything (0 for the ungated P50).
    pub fn min_samples(self) -> u64 {
        match self {
            Percentile::P50 => 0,
            Percentile::P90 | Percentile::Mean => 40,
            Percentile::P99 => 400,
        }
    }
    pub(crate) fn gate(self, g: &MetricGate) -> f64 {
        match self {
            Percentile::P50 => f64::INFINITY,
            Percentile::P90 | Percentile::Mean => g.p90,
            Percentile::P99 => g.p99,
        }
    }
}

/// Which rule produced a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// 99% percentile-bootstrap CI of the ratio on per-request samples of both sides
    /// (resampling the effective number of independent requests, see `inference`).
    Bootstrap,
    /// Throughput: 99% t interval of the rate ratio from batch means over time blocks of the
    /// steady windows (`stats::steady`, `inference::rate_factor_ci`).
    BatchMeans,
    /// Point values from the summaries (one side has no samples, or ITL).
    Approximate,
    /// One-sided Fisher exact test (error rate).
    FisherExact,
    /// Point comparison against a threshold (throughput without samples, knee, wall).
    Point,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Regressed,
    Improved,
    /// A real change (CI excludes 0) that is smaller than the gate or the floor.
    BelowGate,
    /// The whole CI lies inside ±gate (or every change it allows is under the floor).
    NoChange,
    /// The CI spans 0 and reaches past the gate: the data cannot tell.
    Inconclusive {
        /// About how many requests per step would decide it, when that can be estimated.
        requests_per_step: Option<u64>,
    },
    Skipped {
        reason: String,
    },
    /// Shown, never gated (P50).
    Info,
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::BelowGate => "below gate",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive { .. } => "inconclusive",
            Verdict::Skipped { .. } => "skipped",
            Verdict::Info => "info",
        }
    }
}

/// One judged quantity. Units: latencies in ms, error rate as a fraction, TPM in tokens/min,
/// RPS in requests/s, knee and wall as a ladder value (in `ladder_unit`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub model: String,
    /// 1-based step index in the new run; `None` for knee/wall.
    pub step: Option<u32>,
    /// The ladder value both sides were matched on (streams, requests/s or prompt tokens, as
    /// `ladder_unit` says; `summary.csv`'s `concurrency` column); `None` for knee/wall.
    pub concurrency: Option<u32>,
    /// What `concurrency` (and a knee's or wall's `base`/`new`) counts.
    pub ladder_unit: LadderUnit,
    pub metric: Metric,
    /// Latency percentile; `None` for the other metrics.
    pub percentile: Option<Percentile>,
    /// Whether this check can fail the comparison (false for P50).
    pub gated: bool,
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// Relative change new / base − 1 (`None` when undefined or not relative, e.g. error rate).
    pub ratio: Option<f64>,
    /// 99% CI of `ratio` (bootstrap only).
    pub ci: Option<(f64, f64)>,
    pub method: Method,
    pub verdict: Verdict,
    /// One line saying why, with the numbers and thresholds.
    pub detail: String,
}

impl Check {
    /// A check of `metric` (at `percentile`) on the step `at` with nothing judged yet: no
    /// values, no change, a point estimate.
    pub(crate) fn unjudged(
        at: &StepSummary,
        metric: Metric,
        percentile: Option<Percentile>,
        gated: bool,
    ) -> Check {
        Check {
            model: at.model.clone(),
            step: Some(at.step),
            concurrency: Some(at.concurrency),
            ladder_unit: at.ladder_unit,
            metric,
            percentile,
            gated,
            base: None,
            new: None,
            ratio: None,
            ci: None,
            method: Method::Point,
            verdict: Verdict::NoChange,
            detail: String::new(),
        }
    }

    /// "TTFT P90", "error rate", "knee".
    pub fn name(&self) -> String {
        match self.percentile {
            Some(p) => format!("{} {}", self.metric.label(), p.label()),
            None => self.metric.label().to_string(),
        }
    }
    /// "TTFT P90 at 20 streams" (a step is named by its load, never by "step 20"), or just the
    /// name for knee/wall.
    pub fn title(&self) -> String {
        match self.concurrency {
            Some(c) => format!("{} {}", self.name(), self.ladder_unit.at(c)),
            None => self.name(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadMismatch {
    pub base_fp: String,
    pub new_fp: String,
    /// Unified diff of the two normalized scenarios (or a note that one was not recorded).
    pub unified_diff: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Regression,
    Inconclusive,
    Refused,
    /// A side did not finish (killed or interrupted) and the steps that ran show no regression:
    /// an error (exit 1), never a pass (docs/commands.md, exit codes: "interrupted run").
    Incomplete,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Regression => "REGRESSION",
            Outcome::Inconclusive => "INCONCLUSIVE",
            Outcome::Refused => "REFUSED",
            Outcome::Incomplete => "INCOMPLETE",
        }
    }
}

/// Counts over gated checks, one per verdict kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub regressed: usize,
    pub improved: usize,
    pub below_gate: usize,
    pub no_change: usize,
    pub inconclusive: usize,
    pub skipped: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub base_label: String,
    pub new_label: String,
    pub base_fingerprint: String,
    pub new_fingerprint: String,
    pub strict: bool,
    /// Set when the workloads differ and that was not allowed; then `checks` is empty.
    pub refused: Option<WorkloadMismatch>,
    pub checks: Vec<Check>,
    /// Models or steps present on one side only.
    pub unmatched: Vec<String>,
    /// Anything else the reader must know (e.g. compared despite different workloads).
    pub notes: Vec<String>,
    /// The sides that did not finish, one line each ("the new run (runs/x) was interrupted"):
    /// such a comparison is never a pass (`Outcome::Incomplete` unless a regression shows).
    pub incomplete: Vec<String>,
    /// Steps of either side whose client did not keep up with its plan (`compare::invalid`):
    /// their checks are set aside as inconclusive, and such a comparison is never a pass
    /// (`Outcome::Inconclusive` unless a regression shows at another step).
    pub invalid: Vec<super::InvalidStep>,
    /// For each TTFT P90 regression: which part of TTFT moved (headers, server queue, prefill,
    /// rest), with CIs, and the cause it names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ttft_causes: Vec<TtftCause>,
    /// What happened, capacity first: one sentence per model on what its findings (the cap,
    /// the knee, the 429 wall, the SLO capacity) did, with the strongest latency evidence
    /// (`compare::headline`). Renderers print these before any percentile.
    pub headline: Vec<String>,
}

/// One part's P90 on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartChange {
    /// `headers`, `server queue`, `prefill` or `rest`.
    pub part: String,
    pub base_p90_ms: f64,
    pub new_p90_ms: f64,
    pub change_ms: f64,
    /// 99% CI of `change_ms`.
    pub ci_ms: (f64, f64),
}

/// What moved in one TTFT P90 regression.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TtftCause {
    pub model: String,
    pub concurrency: u32,
    pub ladder_unit: LadderUnit,
    pub ttft_p90_change_ms: f64,
    pub parts: Vec<PartChange>,
    /// `network`, `queueing`, `prefill`, `other`, or `server: queue + prefill, not split` when
    /// the server's unsplit time moved and its variation with load cannot tell; `None` when no
    /// part moved with confidence.
    pub cause: Option<String>,
    /// Whether the cause is inferred (from a server time that does not split queue from
    /// prefill), rather than seen in the part the server or the client measured.
    pub inferred: bool,
    /// Why an inferred cause was named: "the server's time … grew with load …".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// "TTFT P90 +1.7 s at 20 streams: headers +4 ms [-1, +9]; server queue +1.6 s [...]: queueing"
    pub sentence: String,
}

impl Comparison {
    /// A comparison of these checks and nothing else (labels `b` and `n`, equal fingerprints):
    /// what the rules' unit tests build their verdicts on.
    #[cfg(test)]
    pub(crate) fn of_checks(checks: Vec<Check>) -> Comparison {
        Comparison {
            base_label: "b".into(),
            new_label: "n".into(),
            base_fingerprint: "f".into(),
            new_fingerprint: "f".into(),
            strict: false,
            refused: None,
            checks,
            unmatched: Vec::new(),
            notes: Vec::new(),
            incomplete: Vec::new(),
            invalid: Vec::new(),
            ttft_causes: Vec::new(),
            headline: Vec::new(),
        }
    }

    pub fn outcome(&self) -> Outcome {
        if self.refused.is_some() {
            return Outcome::Refused;
        }
        let gated = || self.checks.iter().filter(|c| c.gated);
        if gated().any(|c| c.verdict == Verdict::Regressed) {
            return Outcome::Regression;
        }
        if !self.incomplete.is_empty() {
            return Outcome::Incomplete;
        }
        if !self.invalid.is_empty() {
            return Outcome::Inconclusive;
        }
        let undecided = |c: &Check| {
            matches!(
                c.verdict,
                Verdict::Skipped { .. } | Verdict::Inconclusive { .. }
            )
        };
        let no_latency_gate_decided = gated().filter(|c| c.metric.is_latency()).all(undecided);
        if no_latency_gate_decided || (self.strict && gated().any(undecided)) {
            return Outcome::Inconclusive;
        }
        Outcome::Pass
    }

    /// Why the outcome is incomplete, for the reports (`None` when it is not).
    pub fn incomplete_reason(&self) -> Option<String> {
        if self.outcome() != Outcome::Incomplete {
            return None;
        }
        Some(format!(
            "{}; no regression in the steps that ran, but an unfinished run is never a pass (exit 1): rerun it to the end",
            self.incomplete.join("; ")
        ))
    }

    /// Why the outcome is inconclusive, for the reports (`None` when it is not).
    pub fn inconclusive_reason(&self) -> Option<&'static str> {
        if self.outcome() != Outcome::Inconclusive {
            return None;
        }
        let k = self.counts();
        Some(if !self.invalid.is_empty() {
            "the client did not keep up at a step (below), so that step's checks are set aside: a step the client could not load is no evidence either way"
        } else if self.strict && k.skipped + k.inconclusive > 0 {
            "with --strict, every gate must decide: none may be skipped or inconclusive"
        } else {
            "no latency gate could decide (too few samples, or every CI inconclusive)"
        })
    }

    /// docs/commands.md, exit codes: 0 pass, 1 refused (incompatible baseline) or incomplete (a side did not finish
    /// and no regression showed), 3 regression, 4 inconclusive (no
    /// latency gate decided; a step whose client did not keep up; with `--strict`, any gate
    /// skipped or inconclusive).
    pub fn exit_code(&self) -> ExitCode {
        match self.outcome() {
            Outcome::Pass => ExitCode::Ok,
            Outcome::Refused | Outcome::Incomplete => ExitCode::Error,
            Outcome::Regression => ExitCode::Regression,
            Outcome::Inconclusive => ExitCode::Inconclusive,
        }
    }

    pub fn counts(&self) -> Counts {
        let mut k = Counts::default();
        for c in self.checks.iter().filter(|c| c.gated) {
            match c.verdict {
                Verdict::Regressed => k.regressed += 1,
                Verdict::Improved => k.improved += 1,
                Verdict::BelowGate => k.below_gate += 1,
                Verdict::NoChange => k.no_change += 1,
                Verdict::Inconclusive { .. } => k.inconclusive += 1,
                Verdict::Skipped { .. } => k.skipped += 1,
                Verdict::Info => {}
            }
        }
        k
    }
}
