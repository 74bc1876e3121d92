//! Checks before traffic that everything a run writes or reads is usable, so an hour-long
//! ladder never fails at the end on a path.

use super::baseline::{baseline_keep, pool_accepts};
use super::options::RunOptions;
use crate::app::verdict::Against;
use crate::error::UsageError;
use crate::scenario::Scenario;
use crate::store;
use anyhow::Result;
use std::path::Path;

/// Checks every place a run will write or read before any traffic is sent: a ladder that runs
/// for an hour must not fail at the end because `--out` is not writable.
/// Returns the `--against` baseline, loaded once.
pub(super) fn preflight(opts: &RunOptions, scenarios: &[Scenario]) -> Result<Option<Against>> {
    let usable_dir = |dir: &Path, flag: &str| -> Result<()> {
        if dir.exists() && !dir.is_dir() {
            return Err(UsageError(format!(
                "{flag} {}: is a file, not a directory",
                dir.display()
            ))
            .into());
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            UsageError(format!(
                "{flag} {}: cannot create the directory: {e}",
                dir.display()
            ))
        })?;
        let probe = dir.join(format!(".ladder-write-test.{}", std::process::id()));
        std::fs::write(&probe, b"")
            .map_err(|e| UsageError(format!("{flag} {}: not writable: {e}", dir.display())))?;
        let _ = std::fs::remove_file(&probe);
        Ok(())
    };
    usable_dir(&opts.out, "--out")?;
    if opts.baselines.save {
        for s in scenarios {
            let dir = opts.baselines.dir_for(s);
            usable_dir(&dir, "--baselines")?;
            if let store::Keep::Pool(_) = baseline_keep(&opts.baselines, s) {
                pool_accepts(&store::baseline_paths(&dir, &s.name).runs, s)?;
            }
        }
    }
    match &opts.against {
        Some(path) => match store::load_result(path) {
            Ok(base) => Ok(Some(Against {
                side: crate::app::side::of_result(&base),
                partial: crate::app::side::partial_of(&base, "the baseline"),
            })),
            Err(e) => Err(UsageError(format!("--against: {e}")).into()),
        },
        None => Ok(None),
    }
}
