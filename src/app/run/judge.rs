//! What a run is judged against and how, shared by the first judgement (`gate`) and the
//! confirmation's (`confirm`): a run as a side of a comparison, and a side judged against a
//! stored baseline or, in an A/B run, its second model against its first.

use super::options::RunOptions;
use crate::app::run::recorder::CollectedRun;
use crate::app::verdict;
use crate::app::verdict::compare_options;
use crate::app::verdict::Against;
use crate::compare::{partial, Comparison, Pair, Side};
use crate::findings::ModelFindings;
use crate::scenario::Scenario;

/// The run being judged, and how.
#[derive(Clone, Copy)]
pub(super) struct Judging<'a> {
    pub s: &'a Scenario,
    pub opts: &'a RunOptions,
    pub run: &'a CollectedRun,
    pub findings: &'a [ModelFindings],
}

/// What a run is judged against: a stored baseline (`--against`), or in an A/B run its first
/// model (`Pair`: A, and B judged against it).
#[derive(Clone, Copy)]
pub(super) enum Reference<'a> {
    Baseline(&'a Against),
    Ab(&'a Pair),
}

/// A finished run as a side of a comparison; its workload is the scenario's, whether or not a
/// step finished (a run interrupted before its first step summary is unfinished, not
/// "measured with another workload"), and a rerun of some of its steps is the same workload.
pub(super) fn run_side(s: &Scenario, run: &CollectedRun, findings: &[ModelFindings]) -> Side {
    let mut side = Side::from_parts(
        &run.dir.path.display().to_string(),
        run.summaries.clone(),
        run.tap.samples.clone(),
        findings,
        Some(run.workload_yaml.clone()),
    );
    side.fingerprint = s.fingerprint.clone();
    side
}

/// `side` judged against `reference` with the scenario's gates: against a stored baseline as
/// `ladder diff` would; in an A/B run, its B against its A (`compare::compare_in_run`), each
/// model's throughput informing only. The warnings are the unfinished sides'.
pub(super) fn judge_side(
    s: &Scenario,
    opts: &RunOptions,
    reference: Reference<'_>,
    side: &Side,
    partial: Option<&partial::Partial>,
) -> (Comparison, Vec<String>) {
    let mut compare = compare_options(&opts.gates, s.gates.clone());
    compare.pricing = s.pricing.clone();
    match reference {
        Reference::Baseline(base) => {
            compare.search = verdict::capacity_slo(s.load.search.map(|x| x.slo), &s.slo);
            verdict::judge(
                &base.side,
                side,
                [base.partial.as_ref(), partial],
                &s.gates,
                &compare,
            )
        }
        Reference::Ab(pair) => {
            compare.search = verdict::capacity_slo(None, &s.slo);
            compare.interleaved = true;
            let mut c = match crate::compare::compare_in_run(side, pair, &compare) {
                Ok(c) => c,
                // Both models run every step together; a run without B's steps (stopped in its
                // first step) is judged as a side that measured nothing.
                Err(e) => {
                    let mut c = crate::compare::compare(side, side, &compare);
                    c.checks.clear();
                    c.incomplete.push(e);
                    c
                }
            };
            c.base_label = format!("A: {} (interleaved with B in {})", pair.old, side.label);
            c.new_label = format!("B: {} (the same steps, request by request)", pair.new);
            if let Some(p) = partial {
                c.incomplete.push(p.unfinished());
            }
            let warnings = partial.iter().map(|p| p.warning()).collect();
            (c, warnings)
        }
    }
}
