//! `ladder diff BASELINE RUN`: compares two stored runs with the gates recorded with the run.

use super::load::{load_without_secrets, store_input};
use super::Output;
use crate::app::paths::resolve_run;
use crate::app::verdict;
use crate::app::verdict::{compare_options, diff_format, verdict_sink, GateSwitches};
use crate::cli::DiffArgs;
use crate::compare;
use crate::error::{ExitCode, UsageError};
use crate::render::diff::DiffContext;
use crate::store;
use anyhow::Result;
use std::path::Path;

/// Reads one side of a diff; a missing or malformed input is the user's input error (exit 2). A
/// folder of runs (`runs/demo/`) means its latest run, as for `report` and `plan`, with a note.
/// A run that never finished is read from its records, with a note saying where it stopped.
/// `quiet` leaves out the note about which run a folder meant.
fn load_input(path: &Path, quiet: bool) -> Result<store::LoadedResult> {
    let (resolved, note) = resolve_run(path);
    if let Some(note) = note.filter(|_| !quiet) {
        eprintln!("note: {note}");
    }
    let path = resolved.as_path();
    let loaded = store::load_result(path).map_err(store_input)?;
    if let Some(stopped) = &loaded.incomplete {
        eprintln!(
            "note: {} is an incomplete run ({stopped}); it is compared on the records it wrote",
            path.display()
        );
    }
    Ok(loaded)
}

/// `ladder diff BASELINE RUN`: judged with the gates recorded with RUN (its scenario.yaml)
/// unless `--gates-from` names a scenario, so it gives the verdict `run --against` gave.
pub(super) fn diff(args: &DiffArgs, out: &Output) -> Result<ExitCode> {
    let base_run = load_input(&args.baseline, out.quiet)?;
    let new_run = load_input(&args.run, out.quiet)?;
    // A side that did not finish: a warning in every format, and advice for its planned count.
    let partials = [
        crate::app::side::partial_of(&base_run, "the baseline"),
        crate::app::side::partial_of(&new_run, "the new run"),
    ];
    let gates_from = match &args.gates_from {
        Some(p) => Some((load_without_secrets(p)?.0.gates, p.clone())),
        None => None,
    };
    let (gates, source) = verdict::gates_for(&new_run, gates_from.as_ref()).map_err(UsageError)?;
    let (base, new) = (
        crate::app::side::of_result(&base_run),
        crate::app::side::of_result(&new_run),
    );
    let (base, new) = if args.pairs.is_empty() {
        (base, new)
    } else {
        compare::check_pairs(&base, &new, &args.pairs).map_err(UsageError)?;
        compare::pair_sides(&base, &new, &args.pairs)
    };
    let switches = GateSwitches::from(&args.gates);
    let mut opts = compare_options(&switches, gates.clone());
    // The search is part of the workload, so either run's recorded scenario says its SLO.
    opts.search = [&new_run, &base_run].iter().find_map(|r| {
        let rec = r.recorded.as_ref()?;
        let search = rec.load.as_ref().and_then(|l| l.search).map(|x| x.slo);
        verdict::capacity_slo(search, &rec.slo)
    });
    let pricing = |r: &store::LoadedResult| r.recorded.as_ref()?.pricing.clone();
    opts.pricing = pricing(&new_run);
    // Both sides from A/B runs (`ladder diff RUN RUN --pair A=B` re-deriving one's verdict, or
    // two A/B runs): each model's throughput follows both models' speeds, so it informs.
    let ab = |r: &store::LoadedResult| r.recorded.as_ref().is_some_and(|x| x.compare_interleave);
    opts.interleaved = ab(&base_run) && ab(&new_run);
    let (mut comparison, warnings) = verdict::judge(
        &base,
        &new,
        [partials[0].as_ref(), partials[1].as_ref()],
        &gates,
        &opts,
    );
    comparison
        .notes
        .extend(crate::app::import::client_notes(&base_run, &new_run));
    // A baseline CSV keeps no scenario: its prices are unknown, nothing to compare.
    if base_run.dir.is_some() {
        let note = verdict::pricing_note(opts.pricing.as_ref(), pricing(&base_run).as_ref());
        comparison.notes.extend(note);
    }
    let ctx = DiffContext {
        run_dir: new_run.dir.as_ref().map(|d| d.display().to_string()),
        gates: Some(
            verdict::describe(&gates, &source)
                + verdict::cost_gate_words(&gates, opts.pricing.as_ref()),
        ),
        warnings,
        full: switches.full,
        informs: None,
    };
    Ok(verdict_sink(diff_format(args.format), &switches).emit(&comparison, &ctx)?)
}
