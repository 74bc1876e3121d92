//! Summary rows rebuilt from stored records: what `ladder summarize` writes and what `diff`
//! reads for a run that never finished (killed, out of memory, CI timeout). The live run
//! summarizes each step as its records arrive (`summarize_step`); this is the same rule applied
//! to `requests.csv` afterwards.

use super::{summarize_step, StepContext, StepSummary};
use crate::model::Slo;
use crate::model::{RequestRecord, StepRun};

/// What every row of a run shares.
pub struct RunContext<'a> {
    pub scenario: &'a str,
    pub fingerprint: &'a str,
    pub slo: &'a Slo,
    /// Model order as the scenario gives it (rows are ordered by model, then step).
    pub models: &'a [String],
    /// `request.short_below` (the default 10% when the run does not say).
    pub short_below: f64,
    /// An A/B run (`compare: {interleave: true}`): a step's streams carried both models'
    /// requests, so what the client kept in flight is read over both, as the live run does.
    pub interleaved: bool,
}

/// The summary rows of a run from its records (sorted in place by model and step).
///
/// A step in `finished` uses its recorded wall time and self-check figures, and its row in
/// `kept` when there is one (that row was computed live, with the self-check figures only the
/// runner knows; ITL comes from the same per-request histograms `requests.csv` keeps). A step with records that never finished (the run stopped in
/// it) gets a wall time from its records: first start to last end. A finished step without
/// records keeps its `kept` row.
pub fn summarize_run(
    ctx: &RunContext,
    records: &mut [RequestRecord],
    finished: &[StepRun],
    kept: &[StepSummary],
) -> Vec<StepSummary> {
    let model_index = |m: &str| {
        ctx.models
            .iter()
            .position(|x| x == m)
            .unwrap_or(ctx.models.len())
    };
    records.sort_by(|a, b| {
        (model_index(&a.model), a.step, a.model.as_str()).cmp(&(
            model_index(&b.model),
            b.step,
            b.model.as_str(),
        ))
    });
    let find_kept = |m: &str, step: u32| kept.iter().find(|r| r.model == m && r.step == step);
    let find_run = |m: &str, step: u32| finished.iter().find(|r| r.model == m && r.step == step);
    let mut rows = Vec::new();
    for group in records.chunk_by(|a, b| a.model == b.model && a.step == b.step) {
        let (model, step) = (group[0].model.as_str(), group[0].step);
        let run = find_run(model, step);
        if let (Some(_), Some(row)) = (run, find_kept(model, step)) {
            rows.push(row.clone());
            continue;
        }
        let step_ctx = StepContext {
            scenario: ctx.scenario,
            fingerprint: ctx.fingerprint,
            model,
            step,
            concurrency: group[0].concurrency,
            duration_s: run.map_or_else(|| wall_time_s(group), |r| r.duration_s),
            slo: ctx.slo,
            short_below: ctx.short_below,
        };
        let mut row = summarize_step(&step_ctx, group);
        if let Some(r) = run {
            row.apply_step_run(r);
        }
        if ctx.interleaved {
            // An A/B step held its streams with both models' requests: what the client kept
            // in flight is read over both (the live run's `joint_steady`).
            let both: Vec<RequestRecord> =
                records.iter().filter(|r| r.step == step).cloned().collect();
            row.concurrency_steady = super::steady_concurrency(&both);
        }
        rows.push(row);
    }
    for run in finished {
        let present = rows
            .iter()
            .any(|r| r.model == run.model && r.step == run.step);
        if let (false, Some(row)) = (present, find_kept(&run.model, run.step)) {
            rows.push(row.clone());
        }
    }
    rows.sort_by_key(|r| (model_index(&r.model), r.step));
    rows
}

/// First start to last end of a group of records, in seconds (the end of a record is its start
/// plus its E2E time, or its start when it has none).
fn wall_time_s(records: &[RequestRecord]) -> f64 {
    let first = records
        .iter()
        .map(|r| r.started_at_ms)
        .fold(f64::INFINITY, f64::min);
    let last = records
        .iter()
        .map(|r| r.started_at_ms + r.e2e_ms.filter(|v| v.is_finite()).unwrap_or(0.0))
        .fold(f64::NEG_INFINITY, f64::max);
    if first.is_finite() && last.is_finite() {
        ((last - first) / 1000.0).max(0.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(model: &str, step: u32, start: f64, e2e: f64) -> RequestRecord {
        RequestRecord {
            model: model.into(),
            step,
            concurrency: step * 2,
            started_at_ms: start,
            ttft_ms: Some(10.0),
            e2e_ms: Some(e2e),
            output_tokens: Some(10),
            attempts: 1,
            ..RequestRecord::default()
        }
    }

    #[test]
    fn finished_steps_keep_their_live_rows_and_the_stopped_step_is_estimated() {
        let models = vec!["a".to_string(), "b".to_string()];
        let slo = Slo::default();
        let ctx = RunContext {
            scenario: "s",
            fingerprint: "f",
            slo: &slo,
            models: &models,
            short_below: 0.1,
            interleaved: false,
        };
        let mut records = vec![
            rec("b", 1, 0.0, 100.0),
            rec("a", 2, 1000.0, 500.0),
            rec("a", 1, 0.0, 100.0),
            rec("a", 2, 1200.0, 800.0),
        ];
        let mut finished = vec![StepRun::new("a", 1, 2, Default::default())];
        finished[0].duration_s = 4.0;
        finished[0].client_cpu_pct = Some(1.0);
        let kept = vec![StepSummary {
            model: "a".into(),
            step: 1,
            itl_p50_ms: Some(7.0),
            ..StepSummary::default()
        }];
        let rows = summarize_run(&ctx, &mut records, &finished, &kept);
        let keys: Vec<(&str, u32)> = rows.iter().map(|r| (r.model.as_str(), r.step)).collect();
        assert_eq!(keys, [("a", 1), ("a", 2), ("b", 1)]);
        assert_eq!(rows[0].itl_p50_ms, Some(7.0), "the live row is kept");
        assert_eq!(rows[1].attempted, 2);
        assert!(
            (rows[1].duration_s - 1.0).abs() < 1e-9,
            "1000 ms .. 2000 ms"
        );
        assert!((rows[2].duration_s - 0.1).abs() < 1e-9);
    }

    /// An A/B run stopped in a step: one stream alternating between the two models, busy all
    /// the time. Read per model, each would hold about half a stream in flight and the step
    /// would look like a client that did not keep up; read over both, as the live run does, the
    /// stream was full.
    #[test]
    fn an_interleaved_step_rebuilt_reads_its_streams_over_both_models() {
        let models = vec!["a".to_string(), "b".to_string()];
        let slo = Slo::default();
        let records = || -> Vec<RequestRecord> {
            (0..8)
                .map(|k| rec(["a", "b"][k % 2], 1, 100.0 * k as f64, 100.0))
                .collect()
        };
        let steady = |interleaved: bool| -> Vec<Option<f64>> {
            let ctx = RunContext {
                scenario: "s",
                fingerprint: "f",
                slo: &slo,
                models: &models,
                short_below: 0.1,
                interleaved,
            };
            summarize_run(&ctx, &mut records(), &[], &[])
                .iter()
                .map(|r| r.concurrency_steady)
                .collect()
        };
        let joint = steady(true);
        assert_eq!(joint.len(), 2);
        for c in &joint {
            assert!((c.unwrap() - 1.0).abs() < 1e-9, "{joint:?}");
        }
        assert!(steady(false).iter().all(|c| c.unwrap() < 0.6));
    }
}
