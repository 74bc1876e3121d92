//! What a finished run prints for people: the results table, findings in sentences, failures,
//! and models compared within the run (`--pair`, `compare: {baseline: …}`).

use super::Output;
use crate::app::run::recorder::CollectedRun;
use crate::compare::{self, CompareOptions, Side};
use crate::findings::ModelFindings;
use crate::render::diff::DiffFormat;
use crate::scenario::Scenario;
use anyhow::Result;
use std::io::Write;

/// `--pair A=B` (or the scenario's `compare: {baseline: A}`): B's steps judged against A's in
/// the same run, with the diff's rules and confidence intervals, printed after the run table.
pub(super) fn compare_models_in_run(
    s: &Scenario,
    pairs: &[crate::compare::Pair],
    run: &CollectedRun,
    findings: &[ModelFindings],
    human: &mut dyn Write,
) -> Result<()> {
    let pairs = compare::in_run_pairs(pairs, s.compare_baseline.as_deref(), &s.target.models);
    // An A/B run's pair is its verdict, which `run::gate` emits with its exit code.
    if pairs.is_empty() || s.compare_interleave {
        return Ok(());
    }
    let side = Side::from_parts(
        &run.dir.path.display().to_string(),
        run.summaries.clone(),
        run.tap.samples.clone(),
        findings,
        None,
    );
    for p in &pairs {
        let mut opts = CompareOptions::for_cli(s.gates.clone(), false, false);
        // Each model's tokens at its own price: which model costs more per answer.
        opts.pricing = s.pricing.clone();
        let comparison = match compare::compare_in_run(&side, p, &opts) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("warning: {e}");
                continue;
            }
        };
        writeln!(human, "\n{} vs {} (same run, same steps):", p.new, p.old)?;
        // Every check: the point is which model is faster at which load, improvements too.
        // The pair informs: its outcome never becomes the run's exit code (this function returns
        // no verdict; `run::gate` decides the exit code from the run and `--against` alone),
        // and its heading says so (`render::diff::pair_heading`).
        let ctx = crate::render::diff::DiffContext {
            full: true,
            informs: Some(p.clone()),
            ..Default::default()
        };
        crate::render::diff::render_with(&comparison, &ctx, DiffFormat::Table, human)?;
    }
    Ok(())
}

/// The results table, findings in sentences, and what went wrong.
pub(super) fn render_run(
    s: &Scenario,
    run: &CollectedRun,
    findings: &[ModelFindings],
    out: &Output,
    interrupted: bool,
    human: &mut dyn Write,
) -> Result<()> {
    use crate::model::StoppedBy;
    use crate::render::table::{compare_models_table, run_table_priced, Interrupted};
    // The step the run stopped in: the last one summarized, unless it got all it planned.
    let why = run
        .meta
        .stopped_by
        .as_ref()
        .map_or_else(|| "interrupted".to_string(), StoppedBy::short);
    let stopped_in = run
        .summaries
        .last()
        .filter(|_| interrupted)
        .map(|r| Interrupted {
            model: &r.model,
            step: r.step,
            planned: crate::plan::estimate::estimate(s, None)
                .iter()
                .find(|e| e.model == r.model && e.value == r.concurrency)
                .and_then(|e| e.requests),
            why: &why,
        })
        .filter(|i| {
            let got = run.summaries.last().map_or(0, |r| r.attempted);
            i.planned.map_or(true, |p| got < p)
        });
    writeln!(
        human,
        "{}",
        run_table_priced(
            &run.summaries,
            out.color,
            stopped_in,
            s.pricing.as_ref().map(|p| p.currency.as_str())
        )
    )?;
    if let Some(t) = compare_models_table(&run.summaries) {
        writeln!(human, "{t}")?;
    }
    for f in findings {
        for line in f.sentences() {
            writeln!(human, "{}: {line}", f.model)?;
        }
    }
    for f in findings {
        if let Some(t) = crate::render::ttft_parts::ttft_parts_text(f) {
            write!(human, "{t}")?;
        }
    }
    human.flush()?;
    if out.verbose > 0 {
        for line in run.failures.lines() {
            eprintln!("{line}");
        }
    }
    if run.failures.all_failed() {
        eprintln!(
            "warning: every request failed (first: {}). `ladder check {}` diagnoses the target; `-v` lists failures by class.",
            run.failures.first().unwrap_or_default(),
            s.path.display()
        );
    }
    // Always, even with --quiet: CI needs the path to upload or report the run.
    eprintln!("wrote {}", run.dir.path.display());
    Ok(())
}
