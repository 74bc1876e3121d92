//! Where baselines live and how `--save-baseline` keeps earlier runs (replace or pool).

use super::options::BaselineOptions;
use crate::app::run::recorder::CollectedRun;
use crate::error::UsageError;
use crate::scenario::Scenario;
use crate::store;
use anyhow::Result;
use std::path::Path;

/// Runs a pooled baseline keeps when `--append` is given without `baselines.keep`.
const DEFAULT_POOLED_RUNS: u32 = 5;

/// How `--save-baseline` keeps earlier runs: pooled with `--append` or `baselines.keep` > 1.
pub(super) fn baseline_keep(opts: &BaselineOptions, s: &Scenario) -> store::Keep {
    let keep = s
        .baselines_keep
        .unwrap_or(if opts.append { DEFAULT_POOLED_RUNS } else { 1 });
    if opts.append || keep > 1 {
        store::Keep::Pool(keep)
    } else {
        store::Keep::Replace
    }
}

/// A pooled baseline only pools runs of one workload: refuses (before any traffic) to add this
/// scenario's run to a pool measured with another fingerprint.
pub(super) fn pool_accepts(runs_dir: &Path, s: &Scenario) -> Result<()> {
    let pool = store::read_pool(runs_dir).map_err(|e| UsageError(e.to_string()))?;
    if let Some((id, rows)) = pool
        .iter()
        .find(|(_, rows)| rows.iter().any(|r| r.fingerprint != s.fingerprint))
    {
        let theirs = rows.first().map_or("", |r| r.fingerprint.as_str());
        anyhow::bail!(
            "refusing to pool this run into {}: its run {id} was measured with another workload (fingerprint {theirs}, this scenario's is {}); nothing was sent. Save once without --append (and without baselines.keep) to start a new baseline, or run the workload the pool was measured with",
            runs_dir.display(),
            s.fingerprint
        );
    }
    Ok(())
}

/// Saves the run as the baseline (replacing it, or adding it to the pool) and says where.
pub(super) fn save(s: &Scenario, opts: &BaselineOptions, run: &CollectedRun) -> Result<()> {
    let dir = opts.dir_for(s);
    let paths = store::baseline_paths(&dir, &s.name);
    // The run's rows are in completion order; the baseline's are stably ordered (model,
    // step, worker, seq) so that `git diff` of a baseline update stays readable.
    let records = store::read_requests_csv(&run.dir.path.join(store::REQUESTS_FILE), false)?;
    let summary = store::summary_csv(&run.summaries);
    let pooled = match baseline_keep(opts, s) {
        store::Keep::Replace => {
            let removed = store::clear_pool(&paths.runs)?;
            if removed > 0 {
                let runs = if removed == 1 { "run" } else { "runs" };
                eprintln!(
                    "removed the pool of {removed} {runs} in {}/ (a plain --save-baseline \
                     replaces the baseline; --append keeps a pool)",
                    paths.runs.display()
                );
            }
            String::new()
        }
        store::Keep::Pool(keep) => {
            let id = run
                .dir
                .path
                .file_name()
                .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned());
            let n = store::add_to_pool(&paths.runs, &id, &summary, keep)?;
            let widen = if n >= crate::stats::drift::MIN_POOLED_RUNS {
                "the gate widens each check by their run-to-run spread"
            } else {
                "3 or more widen the gate by their run-to-run spread"
            };
            format!(
                " (pooled: {n} of the last {keep} runs in {}; {widen})",
                paths.runs.display()
            )
        }
    };
    store::write_baseline(
        &paths,
        &summary,
        &store::requests_csv(&records),
        &run.workload_yaml,
    )?;
    eprintln!("saved baseline {}{pooled}", paths.summary.display());
    Ok(())
}
