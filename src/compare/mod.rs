//! Baseline vs new run → verdicts (docs/gate.md; exit codes in docs/commands.md). This is the part of ladder that
//! decides whether a release fails, so it is pure (no clock, no files, seeded randomness) and
//! judges every model × step × metric × percentile with the documented rule, says which rule it
//! used, and never drops data silently: steps or models present on one side only are listed.
//!
//! Steps are matched by model and concurrency (not by step index), so inserting a step into a
//! ladder does not shift every comparison. User-facing text names a step by its concurrency.

pub mod budget;
mod cache;
mod cap;
pub mod confirm;
pub mod cost;
mod headline;
mod invalid;
mod latency;
mod length;
mod pair;
pub mod partial;
mod rules;
mod side;
mod step;
#[cfg(test)]
mod tests;
pub mod ttft_cause;
mod types;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::ItlHistogram;
use crate::model::LadderUnit;
use crate::scenario::{Gates, MetricGate};
use crate::stats::{drift, steady_window, SteadyWindow, StepSummary, Timed};
use crate::util::duration::ms_text as fmt_ms;
pub use invalid::InvalidStep;
pub(crate) use latency::requests_to_decide;
pub use pair::{ab_pair, check_pairs, compare_in_run, in_run_pairs, only_models, pair_sides, Pair};
use rules::findings_check;
use step::step_checks;
pub use types::{
    CapBasis, Check, CompareOptions, Comparison, Counts, Method, Metric, Outcome, Percentile,
    PooledRun, RequestSample, Side, TtftCause, Verdict, WallRule, WorkloadMismatch,
};

/// Fewest successful requests per side for a throughput (TPM, RPS) verdict.
pub const MIN_THROUGHPUT_SAMPLES: u64 = 40;

/// Judges `new` against `base`. Refuses (no checks) when the workload fingerprints differ and
/// `opts.allow_different_workload` is off. Deterministic for a given `opts.seed`.
pub fn compare(base: &Side, new: &Side, opts: &CompareOptions) -> Comparison {
    let mut out = Comparison {
        base_label: base.label.clone(),
        new_label: new.label.clone(),
        base_fingerprint: base.fingerprint.clone(),
        new_fingerprint: new.fingerprint.clone(),
        strict: opts.strict,
        refused: None,
        checks: Vec::new(),
        unmatched: Vec::new(),
        notes: Vec::new(),
        incomplete: Vec::new(),
        invalid: Vec::new(),
        ttft_causes: Vec::new(),
        headline: Vec::new(),
    };
    if base.fingerprint != new.fingerprint {
        if !opts.allow_different_workload {
            out.refused = Some(mismatch(base, new));
            return out;
        }
        out.notes.push(format!(
            "the workloads differ (fingerprint {} vs {}); compared anyway because different workloads were allowed",
            base.fingerprint, new.fingerprint
        ));
    }
    let pool = Pool::of(base, &mut out.notes);
    let b = Indexed::new(base, "the baseline", &mut out.notes);
    let n = Indexed::new(new, "the new run", &mut out.notes);
    let models: BTreeSet<&str> = b
        .steps
        .keys()
        .chain(n.steps.keys())
        .map(|(m, _)| m.as_str())
        .collect();
    for model in models {
        if let Some(only) = one_sided_model(model, (base, &b), (new, &n)) {
            out.unmatched.push(only);
            continue;
        }
        let matched = matched_steps(model, (base, &b), (new, &n), &mut out.unmatched);
        let queued_from = queued_from(model, base, new);
        out.checks.extend(judged_steps(
            &matched,
            (opts, queued_from),
            &pool,
            model,
            &b,
            &n,
        ));
        findings_checks(&mut out.checks, model, (base, &b), (new, &n));
        let rule = cap::CapRule {
            gate: opts.gates.capacity,
        };
        out.checks.extend(cap::cap_check(
            model,
            n.unit(model),
            &rule,
            (base.caps.get(model), &b),
            (new.caps.get(model), &n),
        ));
        if let Some(slo) = &opts.search {
            let of = |side: &Side| -> Vec<StepSummary> {
                side.summaries
                    .iter()
                    .filter(|r| r.model == model)
                    .cloned()
                    .collect()
            };
            let (bs, ns) = (of(base), of(new));
            let (bs, ns): (Vec<&StepSummary>, Vec<&StepSummary>) =
                (bs.iter().collect(), ns.iter().collect());
            out.checks.extend(rules::capacity_check(
                model,
                n.unit(model),
                (slo, opts.gates.capacity),
                &bs,
                &ns,
            ));
        }
    }
    if opts.interleaved {
        pair::coupled_rates(&mut out.checks);
    }
    out.invalid = invalid::invalid_steps(base, new);
    invalid::set_aside(&mut out.checks, &out.invalid, base, new);
    out.ttft_causes = ttft_cause::explain(base, new, &out.checks, opts.seed);
    out.notes.extend(
        out.ttft_causes
            .iter()
            .map(|c| format!("{}: {}", c.model, c.sentence)),
    );
    out.headline = headline::sentences(&out.checks, base, new);
    out
}

/// The ladder value from which `model`'s steps are past the queueing knee on both sides (the
/// higher of the two knees), when both runs found a queueing knee: there a TTFT P90 is a
/// request that waited, so TTFT, TTFC and E2E are judged at P50 and the mean.
fn queued_from(model: &str, base: &Side, new: &Side) -> Option<u32> {
    let knee = |s: &Side| {
        s.knee_cause
            .get(model)
            .filter(|(_, cause)| cause.kind == crate::findings::KneeKind::Queueing)
            .map(|(at, _)| *at)
    };
    Some(knee(base)?.max(knee(new)?))
}

/// "model m: only in the baseline (label)" when `model` has steps on one side only.
fn one_sided_model(
    model: &str,
    (base, b): (&Side, &Indexed<'_>),
    (new, n): (&Side, &Indexed<'_>),
) -> Option<String> {
    let in_b = b.has_model(model);
    let in_n = n.has_model(model);
    if in_b && in_n {
        return None;
    }
    let (side, label) = if in_b {
        ("the baseline", &base.label)
    } else {
        ("the new run", &new.label)
    };
    Some(format!("model {model}: only in {side} ({label})"))
}

/// The steps of `model` that both sides ran (matched by concurrency), in ladder order; a step
/// on one side only goes to `unmatched`.
fn matched_steps<'a>(
    model: &str,
    (base, b): (&Side, &Indexed<'a>),
    (new, n): (&Side, &Indexed<'a>),
    unmatched: &mut Vec<String>,
) -> Vec<(&'a StepSummary, &'a StepSummary)> {
    let concs: BTreeSet<u32> = b
        .concurrencies(model)
        .chain(n.concurrencies(model))
        .collect();
    let mut matched = Vec::new();
    for conc in concs {
        let key = (model.to_string(), conc);
        match (b.steps.get(&key), n.steps.get(&key)) {
            (Some(bs), Some(ns)) => matched.push((*bs, *ns)),
            (Some(bs), None) => unmatched.push(format!(
                "model {model} {}: only in the baseline ({})",
                bs.ladder_unit.at(conc),
                base.label
            )),
            (_, ns) => unmatched.push(format!(
                "model {model} {}: only in the new run ({})",
                ns.map_or(n.unit(model), |s| s.ladder_unit).at(conc),
                new.label
            )),
        }
    }
    matched
}

/// The checks of `model`'s matched steps. Judged on within-run sampling; then, with a pooled
/// baseline, judged again with each CI widened by the run-to-run spread at the steps that have
/// one (`Pool::drift`).
fn judged_steps(
    matched: &[(&StepSummary, &StepSummary)],
    (opts, queued_from): (&CompareOptions, Option<u32>),
    pool: &Pool<'_>,
    model: &str,
    b: &Indexed<'_>,
    n: &Indexed<'_>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    for &(bs, ns) in matched {
        step_checks(
            &mut checks,
            opts,
            &Drift::new(),
            (b, bs),
            (n, ns),
            queued_from,
        );
    }
    if let Some(drift) = pool.drift(model, &checks) {
        checks.clear();
        for &(bs, ns) in matched {
            step_checks(&mut checks, opts, &drift, (b, bs), (n, ns), queued_from);
        }
    }
    checks
}

/// Appends `model`'s knee and wall checks to `checks` (which holds every check so far: a knee
/// that moved down is confirmed by its step's TTFT P90 check, `knee_needs_separation`).
fn findings_checks(
    checks: &mut Vec<Check>,
    model: &str,
    (base, b): (&Side, &Indexed<'_>),
    (new, n): (&Side, &Indexed<'_>),
) {
    let new_top = n.concurrencies(model).max();
    let unit = n.unit(model);
    for (metric, bm, nm) in [
        (Metric::Knee, &base.knee, &new.knee),
        (Metric::Wall, &base.wall, &new.wall),
    ] {
        let mut check = findings_check(model, unit, metric, bm.get(model), nm.get(model));
        // "Gone" only counts when the new run went as far as the baseline's finding.
        if let (Some(c), Some(Some(at)), Some(None)) =
            (check.as_mut(), bm.get(model), nm.get(model))
        {
            if new_top.is_some_and(|top| top < *at) {
                rules::skip(
                    c,
                    format!(
                        "{} {} in the baseline; the new run stopped {}, so it cannot say",
                        metric.label(),
                        unit.at(*at),
                        unit.at(new_top.unwrap_or(0))
                    ),
                );
            }
        }
        if metric == Metric::Knee {
            if let Some(c) = check.as_mut() {
                knee_needs_separation(c, checks, b, n, model);
                knee_gone_with_the_curve(c, checks, model);
            }
        }
        if let (Metric::Wall, Some(c)) = (metric, check.as_mut()) {
            let rules = (base.wall_rule.get(model), new.wall_rule.get(model));
            c.detail.push_str(&rules::wall_rule_words(rules));
        }
        checks.extend(check);
    }
}

/// The runs of a pooled baseline that may widen checks: those with the baseline's workload.
struct Pool<'a> {
    runs: Vec<&'a PooledRun>,
}

impl<'a> Pool<'a> {
    /// Keeps the runs measured with the baseline's workload and says in `notes` what the CIs
    /// cover: drift between runs with ≥ 3 runs, sampling within one run otherwise.
    fn of(base: &'a Side, notes: &mut Vec<String>) -> Self {
        let (runs, other): (Vec<&PooledRun>, Vec<&PooledRun>) = base.pool.iter().partition(|r| {
            r.summaries
                .iter()
                .all(|s| s.fingerprint == base.fingerprint)
        });
        for r in other {
            notes.push(format!(
                "pooled baseline run {} has another workload fingerprint; it is left out of the run-to-run spread",
                r.id
            ));
        }
        let k = runs.len();
        if k >= drift::MIN_POOLED_RUNS {
            notes.push(format!(
                "the baseline pools {k} runs ({} … {}): latency and throughput CIs are widened by the run-to-run spread measured over them (error rates are not)",
                runs[0].id,
                runs[k - 1].id
            ));
        } else if k > 0 {
            notes.push(format!(
                "the baseline pools {k} run{}: the CIs cover sampling within one run only, not drift between runs ({} or more runs widen them)",
                if k == 1 { "" } else { "s" },
                drift::MIN_POOLED_RUNS
            ));
        }
        Pool { runs }
    }

    /// Run-to-run SD τ per metric × percentile of `model` (`drift::between_run_sd`), over the
    /// steps that have a check with a CI; `None` with fewer than 3 runs.
    fn drift(&self, model: &str, checks: &[Check]) -> Option<Drift> {
        if self.runs.len() < drift::MIN_POOLED_RUNS {
            return None;
        }
        let mut steps: HashMap<(Metric, Option<Percentile>), Vec<Vec<f64>>> = HashMap::new();
        for c in checks.iter().filter(|c| c.ci.is_some()) {
            let Some(conc) = c.concurrency else {
                continue;
            };
            let values: Vec<f64> = self
                .runs
                .iter()
                .filter_map(|run| {
                    let s = run
                        .summaries
                        .iter()
                        .rfind(|s| s.model == model && s.concurrency == conc)?;
                    match (c.metric, c.percentile) {
                        (Metric::Tpm, _) => Some(s.throughput(true)),
                        (Metric::Rps, _) => Some(s.throughput(false)),
                        (Metric::DecodeRate, _) => s.decode_rate(),
                        (m, Some(p)) => summary_q(s, m, p),
                        _ => None,
                    }
                })
                .collect();
            steps
                .entry((c.metric, c.percentile))
                .or_default()
                .push(values);
        }
        Some(
            steps
                .into_iter()
                .filter_map(|(k, v)| drift::between_run_sd(&v).map(|t| (k, t)))
                .collect(),
        )
    }
}

/// Between-run SD τ and the number of runs behind it, per metric × percentile (empty: within-run
/// sampling only).
type Drift = HashMap<(Metric, Option<Percentile>), (f64, usize)>;

/// A knee that moved up or is gone is an improvement only when TTFT did not rise below it: a
/// server that stops caching prefixes slows every step, its TTFT no longer jumps where the
/// baseline's cache was outgrown, and the knee vanishes because the whole curve rose. When TTFT
/// P90 regressed at a step below the baseline's knee, the knee's move is not judged (the TTFT
/// checks are), and the detail says why.
fn knee_gone_with_the_curve(c: &mut Check, checks: &[Check], model: &str) {
    let Some(at) = c.base.filter(|_| c.verdict == Verdict::Improved) else {
        return;
    };
    let mut risen: Vec<u32> = checks
        .iter()
        .filter(|k| {
            k.model == model
                && k.metric == Metric::Ttft
                && k.percentile == Some(Percentile::P90)
                && k.verdict == Verdict::Regressed
        })
        .filter_map(|k| k.concurrency)
        .filter(|v| f64::from(*v) < at)
        .collect();
    risen.sort_unstable();
    risen.dedup();
    if risen.is_empty() {
        return;
    }
    let reason = format!(
        "{}, but TTFT P90 rose below it too (at {}): the whole curve rose, so that is no improvement; the TTFT checks judge the change",
        c.detail,
        c.ladder_unit.describe_all(&risen)
    );
    rules::skip(c, reason);
}

/// A knee that appears or moves down is a regression only when the new run's TTFT P90 at the
/// new knee step is confidently above the baseline's at the same step. Near a cap the knee step
/// can flip between runs of an unchanged server; such a move is inconclusive, not a regression.
/// With per-request samples the evidence is that step's TTFT P90 check (its 99% CI, which
/// accounts for correlated requests and, with a pooled baseline, for drift) excluding 0; with
/// summaries only, the recorded 95% bounds of the two P90s not overlapping.
fn knee_needs_separation(
    c: &mut Check,
    checks: &[Check],
    b: &Indexed<'_>,
    n: &Indexed<'_>,
    model: &str,
) {
    let Some(at) = c.new.filter(|_| c.verdict == Verdict::Regressed) else {
        return;
    };
    let ttft = checks.iter().find(|k| {
        k.model == model
            && k.concurrency == Some(at as u32)
            && k.metric == Metric::Ttft
            && k.percentile == Some(Percentile::P90)
            && k.method == Method::Bootstrap
    });
    if let Some(k) = ttft {
        let (lo, confirmed) = k.ci.map_or((None, false), |(lo, _)| (Some(lo), lo > 0.0));
        if !confirmed {
            c.detail = format!(
                "inconclusive: {}, but {} the rise of TTFT P90 is not confirmed (its 99% CI's lower bound is {}): the knee step may have flipped by chance",
                c.detail,
                c.ladder_unit.at(at as u32),
                lo.map_or_else(|| "missing".to_string(), fmt_pct)
            );
            c.verdict = Verdict::Inconclusive {
                requests_per_step: None,
            };
        }
        return;
    }
    let key = (model.to_string(), at as u32);
    let (Some(bs), Some(ns)) = (b.steps.get(&key), n.steps.get(&key)) else {
        return;
    };
    let (Some(b_hi), Some(n_lo)) = (bs.ttft_p90_hi_ms, ns.ttft_p90_lo_ms) else {
        return;
    };
    if n_lo <= b_hi {
        c.detail = format!(
            "inconclusive: {}, but {} the new run's TTFT P90 lower 95% bound ({}) does not exceed the baseline's upper bound ({}): the knee step may have flipped by chance",
            c.detail,
            c.ladder_unit.at(at as u32),
            fmt_ms(n_lo),
            fmt_ms(b_hi)
        );
        c.verdict = Verdict::Inconclusive {
            requests_per_step: None,
        };
    }
}

fn mismatch(base: &Side, new: &Side) -> WorkloadMismatch {
    let unified_diff = match (&base.workload_yaml, &new.workload_yaml) {
        (Some(a), Some(b)) => similar::TextDiff::from_lines(a.as_str(), b.as_str())
            .unified_diff()
            .header(&base.label, &new.label)
            .to_string(),
        (a, b) => {
            let which = match (a, b) {
                (None, None) => "either side",
                (None, _) => base.label.as_str(),
                _ => new.label.as_str(),
            };
            format!("workload not recorded in {which}; cannot show what changed\n")
        }
    };
    WorkloadMismatch {
        base_fp: base.fingerprint.clone(),
        new_fp: new.fingerprint.clone(),
        unified_diff,
    }
}

/// One side's rows keyed by (model, concurrency), and its samples keyed by (model, step index).
struct Indexed<'a> {
    steps: BTreeMap<(String, u32), &'a StepSummary>,
    samples: Option<HashMap<(&'a str, u32), Vec<&'a RequestSample>>>,
}

impl<'a> Indexed<'a> {
    fn new(side: &'a Side, name: &str, notes: &mut Vec<String>) -> Self {
        let mut steps = BTreeMap::new();
        for s in &side.summaries {
            if steps.insert((s.model.clone(), s.concurrency), s).is_some() {
                notes.push(format!(
                    "{name} has two rows for model {} {}; the later one was used",
                    s.model,
                    s.ladder_unit.at(s.concurrency)
                ));
            }
        }
        let samples = side.samples.as_ref().map(|all| {
            let mut m: HashMap<(&str, u32), Vec<&RequestSample>> = HashMap::new();
            for r in all {
                m.entry((r.model.as_str(), r.step)).or_default().push(r);
            }
            // Start order: the order in which requests are correlated (stable for equal starts).
            for rows in m.values_mut() {
                rows.sort_by(|a, b| a.started_at_ms.total_cmp(&b.started_at_ms));
            }
            m
        });
        Indexed { steps, samples }
    }
    /// A step's per-request samples in start order (none when it has no row there); `None`
    /// when the side kept no samples.
    fn rows<'s>(&'s self, s: &'s StepSummary) -> Option<&'s [&'s RequestSample]> {
        let all = self.samples.as_ref()?;
        Some(
            all.get(&(s.model.as_str(), s.step))
                .map_or(&[][..], Vec::as_slice),
        )
    }
    /// The steady window of a step, from its per-request samples (start times and E2E).
    fn window(&self, s: &StepSummary) -> Option<SteadyWindow> {
        let rows = self.samples.as_ref()?.get(&(s.model.as_str(), s.step))?;
        let timed: Vec<Timed> = rows
            .iter()
            .map(|r| Timed {
                worker: r.worker,
                start_ms: r.started_at_ms,
                ttft_ms: r.ttft_ms,
                e2e_ms: r.e2e_ms,
                ok: r.ok,
                output_tokens: r.output_tokens.unwrap_or(0),
            })
            .collect();
        steady_window(&timed)
    }
    /// What the model's ladder values count on this side (streams when it has no rows).
    fn unit(&self, model: &str) -> LadderUnit {
        self.steps
            .iter()
            .find(|((m, _), _)| m == model)
            .map_or_else(LadderUnit::default, |(_, s)| s.ladder_unit)
    }
    fn has_model(&self, model: &str) -> bool {
        self.concurrencies(model).next().is_some()
    }
    fn concurrencies<'s>(&'s self, model: &'s str) -> impl Iterator<Item = u32> + 's {
        self.steps
            .keys()
            .filter(move |(m, _)| m == model)
            .map(|(_, c)| *c)
    }
    /// The inter-token gaps of the successful requests of a step that have any, in start order;
    /// `None` when the side kept no samples or recorded no gaps (files before `itl_hist`).
    fn gaps(&self, s: &StepSummary) -> Option<Vec<ItlHistogram>> {
        let rows = self.samples.as_ref()?.get(&(s.model.as_str(), s.step))?;
        let ok: Vec<&RequestSample> = rows.iter().copied().filter(|r| r.ok).collect();
        if ok.iter().any(|r| r.itl.is_none()) {
            return None;
        }
        Some(
            ok.iter()
                .filter_map(|r| r.itl.clone())
                .filter(|h| !h.is_empty())
                .collect(),
        )
    }
    /// Finite values of a latency for the successful requests of a step, if kept: sorted, and
    /// in start order (for the effective number of independent requests).
    fn values(&self, s: &StepSummary, metric: Metric) -> Option<(Vec<f64>, Vec<f64>)> {
        let pick: fn(&RequestSample) -> Option<f64> = match metric {
            Metric::Ttft => |r| r.ttft_ms,
            Metric::Ttfc => |r| r.ttfc_ms,
            Metric::Tpot => |r| r.tpot_ms,
            Metric::E2e => |r| r.e2e_ms,
            _ => return None,
        };
        let rows = self.samples.as_ref()?.get(&(s.model.as_str(), s.step))?;
        let mut v: Vec<f64> = rows
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| pick(r))
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            return None;
        }
        let in_order = v.clone();
        v.sort_by(f64::total_cmp);
        Some((v, in_order))
    }
}

fn summary_q(s: &StepSummary, metric: Metric, p: Percentile) -> Option<f64> {
    use Percentile::*;
    match (metric, p) {
        (Metric::Ttft, P50) => s.ttft_p50_ms,
        (Metric::Ttft, P90) => s.ttft_p90_ms,
        (Metric::Ttft, P99) => s.ttft_p99_ms,
        (Metric::Ttfc, P50) => s.ttfc_p50_ms,
        (Metric::Ttfc, P90) => s.ttfc_p90_ms,
        (Metric::Ttfc, P99) => s.ttfc_p99_ms,
        (Metric::Tpot, P50) => s.tpot_p50_ms,
        (Metric::Tpot, P90) => s.tpot_p90_ms,
        (Metric::Tpot, P99) => s.tpot_p99_ms,
        (Metric::Itl, P50) => s.itl_p50_ms,
        (Metric::Itl, P90) => s.itl_p90_ms,
        (Metric::Itl, P99) => s.itl_p99_ms,
        (Metric::E2e, P50) => s.e2e_p50_ms,
        (Metric::E2e, P90) => s.e2e_p90_ms,
        (Metric::E2e, P99) => s.e2e_p99_ms,
        (Metric::Ttft, Mean) => s.ttft_mean_ms,
        (Metric::E2e, Mean) => s.e2e_mean_ms,
        _ => None,
    }
}

pub(crate) fn gate_for(g: &Gates, metric: Metric) -> &MetricGate {
    match metric {
        Metric::Ttfc => &g.ttfc,
        Metric::Tpot => &g.tpot,
        Metric::Itl => &g.itl,
        Metric::E2e | Metric::E2eAtEqualLength => &g.e2e,
        _ => &g.ttft,
    }
}

/// "+25.3%" / "-4.0%"; infinite bounds as "+inf%".
pub(crate) fn fmt_pct(r: f64) -> String {
    format!("{:+.1}%", r * 100.0)
}

/// What `validate` and `run` say before any traffic about gates the scenario's sample sizes
/// cannot feed (docs/gate.md): P99 needs 400 successful requests per step, P90 and throughput 40.
/// Steps sized by duration depend on the server, so they get a general reminder.
pub fn sample_size_notes(load: &crate::scenario::Load) -> Vec<String> {
    let per_step: Option<Vec<(u32, u64)>> = load
        .ladder
        .iter()
        .map(|&c| load.planned_requests(c).map(|n| (c, n)))
        .collect();
    let unit = load.ladder_unit();
    let per_step = match per_step {
        Some(p) => p,
        None => {
            return vec![format!(
                "P99 gates need {} successful requests per step and P90 gates {}; with duration-based steps, how many each step gets depends on the server (the diff says when a gate is skipped)",
                Percentile::P99.min_samples(),
                Percentile::P90.min_samples()
            )]
        }
    };
    let mut notes = Vec::new();
    for (pct, what) in [
        (Percentile::P90, "P90 and throughput gates"),
        (Percentile::P99, "P99 gates"),
    ] {
        let need = pct.min_samples();
        let short: Vec<String> = per_step
            .iter()
            .filter(|(_, n)| *n < need)
            .map(|(c, n)| format!("{n} {}", unit.at(*c)))
            .collect();
        if short.is_empty() {
            continue;
        }
        let all_same = per_step.iter().all(|(_, n)| *n == per_step[0].1);
        let has = if all_same && short.len() == per_step.len() {
            format!("this scenario has {}", per_step[0].1)
        } else {
            format!("this scenario has {}", short.join(", "))
        };
        notes.push(format!(
            "{what} need {need} requests per step; {has}: they will be skipped"
        ));
        // P90 missing implies P99 missing: say the stronger one only once.
        if pct == Percentile::P90 && short.len() == per_step.len() {
            notes.push(format!(
                "P99 gates need {} requests per step: they will be skipped too",
                Percentile::P99.min_samples()
            ));
            break;
        }
    }
    notes
}
