//! `ladder merge`: joins the shards of a sharded run into one run directory.

use super::Output;
use crate::cli::MergeArgs;
use crate::error::{ExitCode, UsageError};
use crate::findings;
use crate::shard::merge;
use crate::store;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// `ladder merge RUN... -o DIR`: joins the shards of a sharded run into one run directory
/// (read → merge → analyze → write → show). Missing or unfinished shards are reported and make
/// the exit code 1; shards of different runs are refused (exit 1); bad paths exit 2.
pub(super) fn merge_runs(args: &MergeArgs, out: &Output) -> Result<ExitCode> {
    let usage = |e: store::StoreError| UsageError(e.to_string());
    store::check_merge_output(&args.out).map_err(usage)?;
    if let Some(wait) = args.wait {
        wait_for_shards(&args.runs, wait, out.quiet);
    }
    let dirs = store::find_runs(&args.runs).map_err(usage)?;
    if dirs.is_empty() {
        let inputs: Vec<String> = args.runs.iter().map(|p| p.display().to_string()).collect();
        return Err(UsageError(format!(
            "no run directories (folders with a meta.json) in {}",
            inputs.join(", ")
        ))
        .into());
    }
    let mut scenario_yaml = None;
    let mut slo = None;
    let mut workload_yaml = None;
    let mut shards = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        let f = store::read_shard(dir).map_err(usage)?;
        scenario_yaml = scenario_yaml.or(f.scenario_yaml);
        workload_yaml = workload_yaml.or(f.workload_yaml);
        slo = slo.or(Some(f.meta.slo));
        shards.push(merge::ShardRun {
            label: dir.display().to_string(),
            stopped: f.stopped,
            meta: f.meta,
            summaries: f.summaries,
            records: f.records,
        });
    }
    let mut merged = merge::merge(shards, &slo.unwrap_or_default())?;
    merged.meta.command_line = std::env::args().collect();
    let findings = findings::analyze_run(&merged.summaries, Some(&merged.records));
    let run_dir = store::write_merged(
        &args.out,
        &merged.meta,
        &store::RunFiles {
            scenario_yaml: scenario_yaml.as_deref(),
            workload_yaml: workload_yaml.as_deref(),
            requests: Some(&merged.records),
            summaries: Some(&merged.summaries),
            findings: Some(&serde_json::to_value(&findings)?),
            ..store::RunFiles::default()
        },
    )?;
    // The cost columns name the shards' currency, as each shard's own table did.
    super::summarize::show_rebuilt(&merged.summaries, &findings, scenario_yaml, out)?;
    for p in &merged.problems {
        eprintln!("warning: {p}");
    }
    if !out.quiet {
        eprintln!(
            "merged {} shard(s), {} requests: wrote {}",
            merged.meta.merged_from.len(),
            merged.records.len(),
            run_dir.path.display()
        );
    }
    Ok(if merged.problems.iter().any(merge::Problem::is_partial) {
        ExitCode::Error
    } else {
        ExitCode::Ok
    })
}

/// `merge --wait`: polls until every shard of the run has finished or `wait` has passed.
fn wait_for_shards(inputs: &[PathBuf], wait: Duration, quiet: bool) {
    let deadline = std::time::Instant::now() + wait;
    let mut said = false;
    loop {
        let dirs = store::find_runs(inputs).unwrap_or_default();
        if store::shards_settled(&dirs, crate::shard::clock::now_unix_ms()) {
            return;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            if !quiet {
                eprintln!(
                    "merge: waited {}; merging what is there",
                    humantime::format_duration(wait)
                );
            }
            return;
        }
        if !said && !quiet {
            eprintln!(
                "merge: waiting for every shard to finish ({} found so far)",
                dirs.len()
            );
            said = true;
        }
        std::thread::sleep(left.min(Duration::from_secs(2)));
    }
}
