//! `ladder validate`: checks scenario files without sending traffic, as `run` would check them.

use super::budget;
use super::load::load_without_secrets;
use super::paths::default_baselines_dir;
use super::Output;
use crate::cli::ValidateArgs;
use crate::client::http::PreparedTarget;
use crate::compare;
use crate::error::ExitCode;
use crate::store;
use anyhow::Result;

pub(super) fn validate(args: &ValidateArgs, out: &Output) -> Result<ExitCode> {
    let mut failed = 0;
    for path in &args.scenarios {
        match load_without_secrets(path) {
            Ok((s, unset)) => {
                // What `run` would refuse when building requests (a key or header value with
                // a newline), validate refuses too.
                if let Err(e) = PreparedTarget::new(&s.target, "http://127.0.0.1/v1") {
                    failed += 1;
                    eprintln!("error: {}: {e}", path.display());
                    continue;
                }
                if s.baselines_keep == Some(2) {
                    eprintln!(
                        "warning: {}: baselines.keep is 2: pooled CIs widen only with ≥ {} \
                         runs; write keep: 3 or more (or 1 for no pool)",
                        path.display(),
                        crate::stats::drift::MIN_POOLED_RUNS
                    );
                }
                if !out.quiet {
                    outln!(
                        "ok  {}  ({}; {} model(s); ladder {:?}; fingerprint {})",
                        path.display(),
                        s.name,
                        s.target.models.len(),
                        s.load.ladder,
                        s.fingerprint
                    )?;
                    for what in unset {
                        eprintln!(
                            "note: {}: {what}; `ladder run` will need it",
                            path.display()
                        );
                    }
                    for n in compare::sample_size_notes(&s.load) {
                        eprintln!("note: {}: {n}", path.display());
                    }
                    let baseline = store::baseline_paths(&default_baselines_dir(path), &s.name);
                    for n in budget::lines_from_path(&s, &s.gates, &baseline.summary) {
                        eprintln!("note: {}: {n}", path.display());
                    }
                    // What `run --dry-run` estimates the run to cost, from the same steps.
                    let rows = super::plan::read_baseline(&baseline.summary, &s.fingerprint);
                    let steps = crate::plan::estimate::estimate(&s, rows.as_deref());
                    if let Some(n) = crate::plan::words::cost_line(&s, &steps) {
                        eprintln!("note: {}: {n}", path.display());
                    }
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {e}");
            }
        }
    }
    Ok(if failed > 0 {
        ExitCode::Usage
    } else {
        ExitCode::Ok
    })
}
