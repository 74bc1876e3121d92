//! `ladder plan`: capacity from measured numbers (Little's law; docs/plan.md). For a target rate
//! and an SLO, per model: the lowest measured step below the TTFT knee (not yet queueing) that
//! met the SLO while carrying that rate, the concurrency that rate needs there (RPS × mean
//! E2E) and how many copies of the service that takes at the knee's cap (`cap`), the tokens and
//! requests per minute it needs, how that compares with the account's declared `limits:`,
//! which limit binds first and the largest rate the account sustains (at one step whatever the
//! target: the run's, not the question's). When the run searched (`load.search`), the plan is
//! sized from the capacity the search found (`capacity`): the highest load meeting the SLO
//! with its uncertainty, the rate it carries, and the copies of it a larger rate needs. Pure:
//! summary rows in, a `Plan` out; `estimate` does the same arithmetic before a run (dry run,
//! limit warnings).

pub mod agent_words;
pub mod agents;
#[cfg(test)]
mod agents_tests;
pub mod cap;
pub mod capacity;
pub mod estimate;
mod limit_words;
mod limits;
pub mod log;
#[cfg(test)]
mod tests;
pub mod words;

pub use cap::{CapFit, CapSource};
pub use capacity::{CapacityPlan, Fit, SizedFrom};
use limits::declared_limits;
pub use limits::{binding, LimitCheck, LimitName, Rate};
pub use words::plain_words;

use crate::findings::slo::judge;
use crate::findings::ModelFindings;
use crate::model::Slo;
use crate::scenario::Limits;
use crate::stats::{models_of, StepSummary};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// A measured step met the SLO while carrying at least the target rate.
    Measured,
    /// Steps met the SLO, but none carried the target rate: figures assume the latency of the
    /// highest such step holds at the target rate (it does only if the service scales out).
    Extrapolated,
    /// The run's search found a capacity below the target rate: figures at the capacity's
    /// step, the rate spread over `capacity.replicas` copies of what was measured.
    BeyondCapacity,
    /// No step met the SLO: no plan.
    NoStepMeetsSlo,
}

/// The step a plan is based on, with the measured figures it uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepBasis {
    pub step: u32,
    /// The step's ladder value, in `unit` (streams, offered requests/s or prompt tokens).
    pub concurrency: u32,
    pub unit: crate::model::LadderUnit,
    pub measured_rps: f64,
    pub e2e_mean_ms: f64,
    pub ttft_p90_ms: Option<f64>,
    pub tpot_p90_ms: Option<f64>,
    pub e2e_p90_ms: Option<f64>,
    pub input_tokens_per_request: f64,
    pub output_tokens_per_request: f64,
    /// Of the input, read from the provider's cache.
    #[serde(default)]
    pub cached_tokens_per_request: f64,
    /// The step's cost per 1,000 successful requests, when the run was priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_1k_ok: Option<f64>,
}

/// What one request counts against each token limit, by the declared rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Charges {
    /// Against `tpm`, as `limits.tpm_counts` says (input + output; prompt + max_tokens; the
    /// larger of the two).
    pub tpm: f64,
    /// Against `itpm`: the input, less what the cache served unless `itpm_cached`.
    pub itpm: f64,
    /// Against `otpm`: the output generated.
    pub otpm: f64,
    /// Input + output: what the request used.
    pub used: f64,
}

impl Charges {
    /// A request of `input` prompt tokens (`cached` of them read from the cache) and `output`
    /// generated, under `limits`' rules.
    pub fn of(input: f64, cached: f64, output: f64, limits: &Limits) -> Charges {
        use crate::scenario::TpmCounts;
        let max = limits.max_tokens.map(f64::from);
        let tpm = match (limits.tpm_counts, max) {
            (TpmCounts::Reserve, Some(m)) => input + m,
            (TpmCounts::Larger, Some(m)) => input.max(m),
            _ => input + output,
        };
        Charges {
            tpm,
            itpm: if limits.itpm_cached {
                input
            } else {
                (input - cached).max(0.0)
            },
            otpm: output,
            used: input + output,
        }
    }
}

/// The note of a plan (a rate's or agents') whose step reported no input tokens.
pub(crate) const NO_INPUT_TOKENS: &str = "The server reported no input tokens: the total TPM counts output tokens only, so the real need is higher.";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelPlan {
    pub model: String,
    /// The search's capacity, or the ladder's steps.
    pub sized_from: SizedFrom,
    /// The run's search's answer under the plan's SLO (`None` without a search).
    pub capacity: Option<CapacityPlan>,
    pub basis: Basis,
    pub step: Option<StepBasis>,
    /// RPS × mean E2E (s), rounded up to whole streams.
    pub concurrency_needed: Option<u32>,
    /// That concurrency against the cap the run's knee shows: how many copies of the measured
    /// service it takes (`None` when the run cannot say, or the search already spread it).
    pub cap: Option<CapFit>,
    /// Total tokens (input + output) per minute at the target rate, what the `tpm` limit is
    /// checked against (JSON `total_tpm_needed`).
    #[serde(rename = "total_tpm_needed")]
    pub tpm_needed: Option<f64>,
    pub rpm_needed: f64,
    pub limits: Vec<LimitCheck<Rate>>,
    /// The declared limit with the lowest `max_rps`.
    pub binding_limit: Option<LimitName>,
    /// min over declared limits of `max_rps`: a property of the run and the limits, not of the
    /// target rate (computed at `limits_at`).
    pub max_sustainable_rps: Option<f64>,
    /// The step whose latency and tokens each limit's `max_rps` uses: the highest step below
    /// the knee that met the SLO (a search's capacity step when sized from a search), whatever
    /// the target rate.
    pub limits_at: Option<StepBasis>,
    /// Highest RPS measured at a step that met the SLO.
    pub measured_slo_rps: Option<f64>,
    /// What an hour at the target rate costs (docs/cost.md): RPS × 3,600 × the basis step's
    /// cost per successful request, in `Plan::currency`; `None` for an unpriced run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    pub notes: Vec<String>,
}

/// The SLO and the account's declared limits a plan was asked with (the run's, or the flags'),
/// the same whether it sizes a rate or agents.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bounds {
    pub slo_ttft_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_ttfc_ms: Option<f64>,
    pub slo_tpot_ms: Option<f64>,
    pub slo_e2e_ms: Option<f64>,
    pub limit_concurrency: Option<u32>,
    pub limit_tpm: Option<u64>,
    pub limit_rpm: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_itpm: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_otpm: Option<u64>,
    /// The declared limits whole, with how each counts (`tpm_counts`, `itpm_cached`).
    #[serde(skip)]
    pub limits: Limits,
}

impl Bounds {
    /// The SLO's bounds in milliseconds: TTFT, TTFC, TPOT, E2E.
    pub fn slo_ms(&self) -> [Option<f64>; 4] {
        [
            self.slo_ttft_ms,
            self.slo_ttfc_ms,
            self.slo_tpot_ms,
            self.slo_e2e_ms,
        ]
    }

    pub fn of(slo: &Slo, limits: &Limits) -> Bounds {
        Bounds {
            slo_ttft_ms: slo.ttft_ms(),
            slo_ttfc_ms: slo.ttfc_ms(),
            slo_tpot_ms: slo.tpot_ms(),
            slo_e2e_ms: slo.e2e_ms(),
            limit_concurrency: limits.concurrency,
            limit_tpm: limits.tpm,
            limit_rpm: limits.rpm,
            limit_itpm: limits.itpm,
            limit_otpm: limits.otpm,
            limits: limits.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub target_rps: f64,
    /// The SLO and the declared limits it was asked with.
    #[serde(flatten)]
    pub bounds: Bounds,
    /// The SLO the run's search aimed at (`None`: the run did not search).
    pub search_slo_ttft_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_slo_ttfc_ms: Option<f64>,
    pub search_slo_tpot_ms: Option<f64>,
    pub search_slo_e2e_ms: Option<f64>,
    pub models: Vec<ModelPlan>,
    /// The currency of the run's `pricing:` (the models' `cost_per_hour`), set by the caller
    /// that read it; `None` for an unpriced run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// What the run measured (a hosted API, a server the user runs, or unknown), set by the
    /// caller that read the run's scenario: it decides whether the plan names replicas or an
    /// account limit (`cap::words`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<crate::model::TargetKind>,
}

/// A measured step in a sentence: `10 streams`, `the 8 req/s step` (offered; the achieved rate
/// is said beside it), `2000-token prompts`.
pub fn step_words(unit: crate::model::LadderUnit, value: u32) -> String {
    match unit {
        crate::model::LadderUnit::Rps => format!("the {} step", unit.describe(value)),
        unit => unit.describe(value),
    }
}

impl StepBasis {
    /// What one of this step's requests counts against each token limit under `limits`' rules.
    pub fn charges(&self, limits: &Limits) -> Charges {
        Charges::of(
            self.input_tokens_per_request,
            self.cached_tokens_per_request,
            self.output_tokens_per_request,
            limits,
        )
    }
}

fn basis_of(s: &StepSummary) -> Option<StepBasis> {
    let n = s.succeeded.max(1) as f64;
    Some(StepBasis {
        step: s.step,
        concurrency: s.concurrency,
        unit: s.ladder_unit,
        measured_rps: s.rps,
        e2e_mean_ms: s.e2e_mean_ms.filter(|v| v.is_finite() && *v > 0.0)?,
        ttft_p90_ms: s.ttft_p90_ms,
        tpot_p90_ms: s.tpot_p90_ms,
        e2e_p90_ms: s.e2e_p90_ms,
        input_tokens_per_request: s.input_tokens as f64 / n,
        output_tokens_per_request: s.output_tokens as f64 / n,
        cached_tokens_per_request: s.cached_tokens as f64 / n,
        cost_per_1k_ok: s.cost_per_1k_ok,
    })
}

/// Plans every model in `rows` (models in order of first appearance). `search` is the SLO of
/// the run's `load.search`, when it searched: the plan is then sized from the capacity it
/// found, under `slo` (the search's own SLO when `slo` sets no bound). `findings` are the run's
/// (`findings::analyze_run`): a model's plan rests on steps below its knee
/// (`ModelFindings::below_knee`) and relates what it needs to the knee's cap; a model without
/// findings is planned on every step.
pub fn plan(
    rows: &[StepSummary],
    target_rps: f64,
    slo: &Slo,
    limits: &Limits,
    search: Option<&Slo>,
    findings: &[ModelFindings],
) -> Plan {
    let slo = match search {
        Some(s) if slo.is_empty() => s,
        _ => slo,
    };
    Plan {
        target_rps,
        bounds: Bounds::of(slo, limits),
        search_slo_ttft_ms: search.and_then(Slo::ttft_ms),
        search_slo_ttfc_ms: search.and_then(Slo::ttfc_ms),
        search_slo_tpot_ms: search.and_then(Slo::tpot_ms),
        search_slo_e2e_ms: search.and_then(Slo::e2e_ms),
        models: models_of(rows)
            .into_iter()
            .map(|m| {
                let mut steps: Vec<&StepSummary> = rows.iter().filter(|r| r.model == m).collect();
                steps.sort_by_key(|r| r.step);
                let f = findings.iter().find(|f| f.model == m);
                plan_model(m, &steps, target_rps, (slo, search), limits, f)
            })
            .collect(),
        currency: None,
        target_kind: None,
    }
}

fn plan_model(
    model: &str,
    steps: &[&StepSummary],
    rps: f64,
    (slo, search): (&Slo, Option<&Slo>),
    limits: &Limits,
    findings: Option<&ModelFindings>,
) -> ModelPlan {
    let measured_slo_rps = meeting_slo(steps, slo)
        .iter()
        .map(|s| s.rps)
        .reduce(f64::max);
    let below_knee = |s: &StepSummary| findings.map_or(true, |f| f.below_knee(s.concurrency));
    let clean: Vec<&StepSummary> = meeting_slo(steps, slo)
        .into_iter()
        .filter(|s| below_knee(s))
        .collect();
    let mut notes = Vec::new();
    let cap = search.and_then(|aimed| search_capacity(steps, rps, slo, aimed, &mut notes));
    let (basis, step) = match &cap {
        Some(c) => capacity_basis(steps, &clean, rps, c, &mut notes),
        None => choose_basis(steps, &clean, rps, slo, findings, &mut notes),
    };
    // The step each limit's largest rate is computed at: fixed by the run, not the target.
    let limits_at = match &cap {
        Some(c) => steps
            .iter()
            .find(|s| s.concurrency == c.step_value())
            .and_then(|s| basis_of(s)),
        None => clean.last().and_then(|s| basis_of(s)),
    }
    .or_else(|| step.clone());
    let sized_from = if cap.is_some() {
        SizedFrom::Search
    } else {
        SizedFrom::Steps
    };
    let rpm_needed = rps * 60.0;
    let Some(b) = step else {
        return ModelPlan {
            model: model.to_string(),
            sized_from,
            capacity: cap,
            basis,
            step: None,
            concurrency_needed: None,
            cap: None,
            tpm_needed: None,
            rpm_needed,
            limits: Vec::new(),
            binding_limit: None,
            max_sustainable_rps: None,
            limits_at: None,
            measured_slo_rps,
            cost_per_hour: None,
            notes,
        };
    };
    let concurrency = rps * (b.e2e_mean_ms / 1000.0);
    let needed = concurrency.ceil().max(1.0) as u32;
    // A rate beyond a search's capacity is already spread over its copies (`capacity`).
    let cap_fit = findings
        .filter(|_| basis != Basis::BeyondCapacity)
        .and_then(|f| cap::cap_fit(f, needed));
    if b.input_tokens_per_request == 0.0 {
        notes.push(NO_INPUT_TOKENS.into());
    }
    let tpm_needed = rps * 60.0 * (b.input_tokens_per_request + b.output_tokens_per_request);
    let at = limits_at.as_ref().unwrap_or(&b);
    let checks = limit_checks((at, &b), limits, (concurrency, rps));
    let binding = binding(&checks);
    ModelPlan {
        model: model.to_string(),
        sized_from,
        capacity: cap,
        basis,
        concurrency_needed: Some(needed),
        cap: cap_fit,
        tpm_needed: Some(tpm_needed),
        rpm_needed,
        binding_limit: binding.map(|c| c.limit),
        max_sustainable_rps: binding.map(|c| c.most),
        limits: checks,
        cost_per_hour: b.cost_per_1k_ok.map(|c| c / 1000.0 * rps * 3600.0),
        limits_at,
        step: Some(b),
        measured_slo_rps,
        notes,
    }
}

/// The capacity the run's search found under the plan's SLO, with a note when the search aimed
/// at another bound; `None` (and why, in `notes`) when it cannot size the plan.
fn search_capacity(
    steps: &[&StepSummary],
    rps: f64,
    slo: &Slo,
    aimed: &Slo,
    notes: &mut Vec<String>,
) -> Option<CapacityPlan> {
    let c = capacity::capacity_plan(steps, slo, rps)
        .map_err(|why| notes.push(why))
        .ok()
        .flatten()?;
    if aimed != slo {
        notes.push(format!(
            "The search aimed at {}; this plan's SLO differs, so its capacity comes from steps the search chose for another bound.",
            words::bounds_text(aimed)
        ));
    }
    Some(c)
}

/// The steps (in ladder order) that met the SLO and have a usable mean E2E.
fn meeting_slo<'a>(steps: &[&'a StepSummary], slo: &Slo) -> Vec<&'a StepSummary> {
    steps
        .iter()
        .copied()
        .filter(|s| judge(s, slo).miss.is_none() && basis_of(s).is_some())
        .collect()
}

/// The step the plan rests on: the lowest step below the knee that met the SLO while carrying
/// `rps` (measured); else the highest such step (extrapolated, said in `notes`); else none (why,
/// in `notes`). `clean` are the steps below the knee that met the SLO, in ladder order.
fn choose_basis(
    steps: &[&StepSummary],
    clean: &[&StepSummary],
    rps: f64,
    slo: &Slo,
    findings: Option<&ModelFindings>,
    notes: &mut Vec<String>,
) -> (Basis, Option<StepBasis>) {
    let chosen = clean.iter().find(|s| s.rps >= rps);
    // Steps that met the SLO but queued: named when they are why no step carried the rate.
    let knee = findings.and_then(|f| match &f.knee {
        crate::findings::KneeFinding::Knee(k) => Some((f.ladder_unit, k.concurrency)),
        _ => None,
    });
    let queued = meeting_slo(steps, slo).len() > clean.len();
    // Without an SLO a step qualifies by having no failures: say that, not "within the SLO".
    let within = if slo.is_empty() {
        "without failures"
    } else {
        "within the SLO"
    };
    match (chosen, clean.last()) {
        (Some(s), _) => (Basis::Measured, basis_of(s)),
        (None, Some(best)) => {
            let which = match knee {
                Some((unit, k)) if queued => format!(
                    "No step below the knee (at {}) carried {rps} RPS {within}",
                    unit.describe(k)
                ),
                _ => format!("No measured step carried {rps} RPS {within}"),
            };
            let holds = if findings.is_some_and(|f| cap::cap_fit(f, 1).is_some()) {
                "which holds while no replica (or account) carries more than the cap (the line after `concurrency needed`)"
            } else {
                "which is true only if the service adds capacity"
            };
            notes.push(format!(
                "{which} (the most was {:.2} RPS at {}). The figures assume the latency measured at {} holds at {rps} RPS, {holds}; measure a ladder that reaches the rate to confirm.",
                best.rps,
                step_words(best.ladder_unit, best.concurrency),
                step_words(best.ladder_unit, best.concurrency)
            ));
            (Basis::Extrapolated, basis_of(best))
        }
        (None, None) => {
            match (knee, queued) {
                (Some((unit, k)), true) => notes.push(format!(
                    "No step below the knee (at {}) met the SLO: the steps that met it were already queueing, and a plan sized from them would count the queue as service time.",
                    unit.describe(k)
                )),
                _ => {
                    if let Some(first) = steps.first() {
                        notes.push(format!(
                            "No step met the SLO; even the lowest ({}) missed it: {}.",
                            step_words(first.ladder_unit, first.concurrency),
                            judge(first, slo)
                                .miss
                                .unwrap_or_else(|| "no latency measured".into())
                        ));
                    }
                }
            }
            (Basis::NoStepMeetsSlo, None)
        }
    }
}

/// The step a plan sized from a search rests on: the lowest step up to the capacity that met
/// the SLO while carrying `rps`; for a rate beyond the capacity, the capacity's own step (its
/// latency holds on each copy of the service). A step above the capacity that happened to meet
/// the SLO on its point values is never used: the search judged past it.
fn capacity_basis(
    steps: &[&StepSummary],
    clean: &[&StepSummary],
    rps: f64,
    c: &CapacityPlan,
    notes: &mut Vec<String>,
) -> (Basis, Option<StepBasis>) {
    let at_capacity = steps
        .iter()
        .find(|s| s.concurrency == c.step_value())
        .and_then(|s| basis_of(s));
    if c.fit == Fit::Beyond {
        let copies = c.replicas.unwrap_or(1);
        notes.push(format!(
            "{rps} RPS is beyond the capacity the search found: the figures spread it over {copies} copies of the measured service, each at most {} at its latency; that holds only if the service scales out.",
            c.capacity.unit.describe(c.step_value()),
        ));
        return (Basis::BeyondCapacity, at_capacity);
    }
    let carrying = clean
        .iter()
        .filter(|s| s.concurrency <= c.step_value())
        .find(|s| s.rps >= rps)
        .and_then(|s| basis_of(s));
    (Basis::Measured, carrying.or(at_capacity))
}

/// Each declared limit (concurrency, TPM, RPM, ITPM, OTPM; 0 means none) against what the plan
/// needs at `rps`, each token limit counting a request as the declared rules say (`Charges`),
/// with the largest RPS it allows at the latency and tokens of `b` (`limits_at`: the same step
/// whatever the target rate, so the largest sustainable rate is the run's, not the question's).
fn limit_checks(
    (at, basis): (&StepBasis, &StepBasis),
    limits: &Limits,
    (concurrency, rps): (f64, f64),
) -> Vec<LimitCheck<Rate>> {
    let e2e_s = at.e2e_mean_ms / 1000.0;
    let (most, need) = (at.charges(limits), basis.charges(limits));
    let pick = |c: &Charges, limit: LimitName| match limit {
        LimitName::Tpm => c.tpm,
        LimitName::Itpm => c.itpm,
        LimitName::Otpm => c.otpm,
        LimitName::Rpm | LimitName::Concurrency => 1.0,
    };
    let per_minute =
        |limit: LimitName| (rps * 60.0 * pick(&need, limit), 60.0 * pick(&most, limit));
    declared_limits(limits)
        .into_iter()
        .map(|(limit, declared)| {
            let (needed, per_rps) = match limit {
                LimitName::Concurrency => (concurrency, e2e_s),
                other => per_minute(other),
            };
            LimitCheck::new(limit, declared, needed, per_rps)
        })
        .collect()
}
