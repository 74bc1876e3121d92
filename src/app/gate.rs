//! Judging a run: its exit code, the verdict against `--against` in the chosen format, and
//! whether it may become the new baseline.

use super::baseline::save;
use crate::cli::{DiffFormatArg, GateArgs, RunArgs};
use crate::collect::CollectedRun;
use crate::compare::{self, CompareOptions, Side};
use crate::error::ExitCode;
use crate::findings::ModelFindings;
use crate::render::diff::{DiffContext, DiffFormat};
use crate::scenario::{self, Scenario};
use crate::verdict;
use anyhow::Result;

/// The exit code: an interrupted or all-failed run is an error and never a baseline; otherwise
/// the run is judged against the baseline (in memory), then saved as the new baseline if asked
/// and allowed (`verdict::may_replace_baseline`).
pub(super) fn gate(
    s: &Scenario,
    args: &RunArgs,
    run: &CollectedRun,
    findings: &[ModelFindings],
    baseline: Option<&Side>,
    interrupted: bool,
    sink: &verdict::Sink,
) -> Result<ExitCode> {
    if interrupted {
        eprintln!(
            "run interrupted: partial results written to {}",
            run.dir.path.display()
        );
        if args.save_baseline {
            eprintln!("baseline not saved: the run was interrupted (an incomplete ladder is never a baseline)");
        }
        if baseline.is_some() {
            eprintln!("not judged against --against: the run was interrupted (`ladder diff` can still compare what it measured)");
        }
        return Ok(ExitCode::Error);
    }
    if run.failures.all_failed() {
        // Nothing was measured: never gate on it, never keep it as a baseline.
        if args.save_baseline {
            eprintln!("baseline not saved: no request succeeded");
        }
        return Ok(ExitCode::Error);
    }
    // Judge against the existing baseline first: with `--save-baseline --against` the old
    // baseline is the reference, and it is replaced only afterwards.
    let mut code = ExitCode::Ok;
    if let Some(base) = baseline {
        let new = Side::from_parts(
            &run.dir.path.display().to_string(),
            run.summaries.clone(),
            run.samples.clone(),
            findings,
            Some(run.workload_yaml.clone()),
        );
        let opts = compare_options(&args.gates, s.gates.clone());
        let comparison = compare::compare(base, &new, &opts);
        let ctx = DiffContext {
            run_dir: Some(run.dir.path.display().to_string()),
            gates: Some(verdict::describe(
                &s.gates,
                &verdict::GatesSource::Scenario(s.path.clone()),
            )),
            warnings: Vec::new(),
        };
        code = sink.emit(&comparison, &ctx)?;
    }
    let replace = verdict::may_replace_baseline(baseline.map(|_| code), args.force);
    if let (true, Err(kept)) = (args.save_baseline, &replace) {
        eprintln!("{kept}");
    }
    if args.save_baseline && replace.is_ok() {
        save(s, args, run)?;
    }
    Ok(code)
}

pub(super) fn compare_options(gate_args: &GateArgs, gates: scenario::Gates) -> CompareOptions {
    CompareOptions::for_cli(gates, gate_args.allow_different_workload, gate_args.strict)
}

pub(super) fn verdict_sink(format: DiffFormatArg, gate_args: &GateArgs) -> verdict::Sink {
    let format = match format {
        DiffFormatArg::Table => DiffFormat::Table,
        DiffFormatArg::Markdown => DiffFormat::Markdown,
        DiffFormatArg::Json => DiffFormat::Json,
        DiffFormatArg::Junit => DiffFormat::Junit,
    };
    verdict::Sink::new(format, gate_args.no_step_summary)
}
