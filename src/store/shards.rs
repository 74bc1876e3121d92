//! The files of `ladder merge`: finding the shard run directories under the paths given
//! (a run directory, or any folder above some), telling whether every shard of the run has
//! finished (for `--wait`), reading one shard, and writing the merged run directory, which
//! appears under its final name only once it is whole (built beside it, then renamed).

use super::{
    load_result, read_meta, write_run, LoadedResult, Meta, RunDir, RunFiles, StoreError, META_FILE,
    SCENARIO_FILE,
};
use crate::model::RequestRecord;
use crate::stats::StepSummary;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Run directories (folders holding `meta.json`) at or below each input, up to three levels
/// down (`out/<scenario>/<run>`), sorted, without duplicates.
pub fn find_runs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, StoreError> {
    let mut found = BTreeSet::new();
    for input in inputs {
        if !input.exists() {
            return Err(StoreError::NotFound {
                path: input.clone(),
            });
        }
        collect(input, 3, &mut found);
    }
    Ok(found.into_iter().collect())
}

fn collect(dir: &Path, depth: u32, found: &mut BTreeSet<PathBuf>) {
    if dir.join(META_FILE).is_file() {
        found.insert(dir.to_path_buf());
        return;
    }
    if depth == 0 {
        return;
    }
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        let hidden = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if p.is_dir() && !hidden {
            collect(&p, depth - 1, found);
        }
    }
}

/// Why a run did not finish, from its `meta.json` (`None` when it did): killed or crashed
/// (`complete: false`), or interrupted.
pub fn stopped_early(meta: &Meta) -> Option<String> {
    if !meta.complete {
        Some(
            meta.stopped_at(&[])
                .unwrap_or_else(|| "killed or crashed".into()),
        )
    } else {
        meta.interrupted.then(|| "interrupted".to_string())
    }
}

/// How long after a sharded run's scheduled end `merge --wait` keeps waiting for shards that
/// have not finished (the last step's in-flight requests, writing the files).
pub const SETTLE_AFTER_SCHEDULE: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether there is nothing more to wait for: every shard of the run (N read from the shards'
/// own `meta.json`) has finished, or the run's schedule (`--start-at` + steps × slot) ended more
/// than [`SETTLE_AFTER_SCHEDULE`] before `now_unix_ms`, so a missing or unfinished shard will not
/// come (a killed pod).
pub fn shards_settled(dirs: &[PathBuf], now_unix_ms: f64) -> bool {
    let mut total = None;
    let mut done = BTreeSet::new();
    let mut schedule_end_ms = None;
    for d in dirs {
        let Ok(meta) = read_meta(&d.join(META_FILE)) else {
            return false;
        };
        let Some(s) = &meta.shard else { continue };
        total = Some(s.total);
        if let (Some(start), Some(every)) = (&s.start_at, s.step_every_s) {
            if let Ok(t) = humantime::parse_rfc3339_weak(start) {
                let slots = (meta.ladder.len() * meta.models.len().max(1)) as f64;
                let start_ms = t
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
                schedule_end_ms = Some(start_ms + slots * every * 1000.0);
            }
        }
        if stopped_early(&meta).is_none() {
            done.insert(s.index);
        }
    }
    let all_done = total.is_some_and(|n| (0..n).all(|i| done.contains(&i)));
    let overdue = schedule_end_ms
        .is_some_and(|end| now_unix_ms > end + SETTLE_AFTER_SCHEDULE.as_secs_f64() * 1000.0);
    all_done || overdue
}

/// One shard as read from its run directory.
pub struct ShardFiles {
    pub dir: PathBuf,
    pub meta: Meta,
    pub summaries: Vec<StepSummary>,
    pub records: Vec<RequestRecord>,
    pub scenario_yaml: Option<String>,
    pub workload_yaml: Option<String>,
    /// Why the shard did not finish, in words (`None` when it did).
    pub stopped: Option<String>,
}

/// Reads a shard: `meta.json`, the summary and the per-request records (which merge needs:
/// percentiles cannot be merged from summaries).
pub fn read_shard(dir: &Path) -> Result<ShardFiles, StoreError> {
    let meta = read_meta(&dir.join(META_FILE))?;
    // A shard that never finished is read from its records (`load_result` rebuilds it); one
    // killed before its first records reached the disk has none, and is still a shard.
    let LoadedResult {
        summaries,
        requests,
        workload_yaml,
        incomplete,
        ..
    } = match (load_result(dir), stopped_early(&meta)) {
        (Ok(loaded), _) => loaded,
        (Err(_), Some(why)) => LoadedResult {
            label: dir.display().to_string(),
            summaries: Vec::new(),
            requests: Some(Vec::new()),
            workload_yaml: fs::read_to_string(dir.join(super::WORKLOAD_FILE)).ok(),
            incomplete: Some(format!("{why}; no records written")),
            ..LoadedResult::default()
        },
        (Err(e), None) => return Err(e),
    };
    let stopped = incomplete.or_else(|| stopped_early(&meta));
    let records = requests.ok_or_else(|| StoreError::NotAResult {
        path: dir.to_path_buf(),
        reason: "it has no requests.csv: merge needs the per-request records".into(),
    })?;
    let scenario = dir.join(SCENARIO_FILE);
    let scenario_yaml = fs::read_to_string(&scenario).ok();
    Ok(ShardFiles {
        dir: dir.to_path_buf(),
        meta,
        summaries,
        records,
        scenario_yaml,
        workload_yaml,
        stopped,
    })
}

/// Refuses an output directory that exists and is not empty (nothing is overwritten).
pub fn check_merge_output(out: &Path) -> Result<(), StoreError> {
    let busy = fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
    if busy || out.is_file() {
        return Err(StoreError::NotAResult {
            path: out.to_path_buf(),
            reason: "it already exists and is not empty: choose a new output directory (-o)".into(),
        });
    }
    Ok(())
}

/// Writes the merged run (`write_run`) into `.NAME.tmp.PID` beside `out`, then renames it to
/// `out`.
pub fn write_merged(out: &Path, meta: &Meta, files: &RunFiles<'_>) -> Result<RunDir, StoreError> {
    check_merge_output(out)?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "merged".into());
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = RunDir {
        path: parent.join(format!(".{name}.tmp.{}", std::process::id())),
    };
    let result = (|| {
        fs::create_dir_all(&tmp.path)
            .map_err(|e| StoreError::io("create directory", &tmp.path, e))?;
        write_run(&tmp, Some(meta), files)?;
        // An empty `out` (e.g. created by the caller) is replaced; a non-empty one was refused.
        let _ = fs::remove_dir(out);
        fs::rename(&tmp.path, out).map_err(|e| StoreError::io("create", out, e))
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp.path);
    }
    result.map(|()| RunDir {
        path: out.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ShardMeta;

    /// A shard run directory `i` of `n` with a 2-step schedule of 10 s slots from t = 1000 s.
    fn shard_dir(root: &Path, index: u32, total: u32, complete: bool) -> PathBuf {
        let run = RunDir {
            path: root.join(format!("s/x-shard-{index}-of-{total}")),
        };
        fs::create_dir_all(&run.path).unwrap();
        let meta = Meta {
            tool_version: "t".into(),
            scenario: "s".into(),
            fingerprint: "f".into(),
            host: "h".into(),
            started_at: String::new(),
            finished_at: String::new(),
            command_line: vec![],
            interrupted: false,
            models: vec!["m".into()],
            ladder: vec![1, 2],
            ladder_unit: Default::default(),
            notes: vec![],
            complete,
            steps: vec![],
            slo: Default::default(),
            short_below: 0.1,
            shard: Some(ShardMeta {
                index,
                total,
                start_at: Some("1970-01-01T00:16:40Z".into()),
                step_every_s: Some(10.0),
                origin_unix_ms: 1_000_000.0,
                clock_offset_ms: None,
                clock_offset_error_ms: None,
            }),
            merged_from: vec![],
            stopped_by: None,
            client: None,
        };
        run.write_meta(&meta).unwrap();
        run.path
    }

    #[test]
    fn settled_when_every_shard_finished_or_long_after_the_schedule() {
        let root = tempfile::tempdir().unwrap();
        let find = || find_runs(&[root.path().to_path_buf()]).unwrap();
        let during = 1_005_000.0; // 5 s into the run; the schedule ends at 1,020 s
        shard_dir(root.path(), 0, 3, true);
        shard_dir(root.path(), 2, 3, true);
        assert_eq!(find().len(), 2);
        assert!(!shards_settled(&find(), during), "shard 1 is missing");
        let one = shard_dir(root.path(), 1, 3, false);
        assert!(!shards_settled(&find(), during), "shard 1 still running");
        assert!(!shards_settled(&find(), 1_020_000.0 + 60_000.0));
        assert!(
            shards_settled(&find(), 1_020_000.0 + 121_000.0),
            "it will not come"
        );
        fs::remove_dir_all(&one).unwrap();
        shard_dir(root.path(), 1, 3, true);
        assert!(shards_settled(&find(), during));
    }

    #[test]
    fn a_shard_killed_before_writing_records_is_read_as_stopped() {
        let root = tempfile::tempdir().unwrap();
        let dir = shard_dir(root.path(), 0, 1, false);
        fs::write(dir.join(super::super::REQUESTS_FILE), "").unwrap();
        let f = read_shard(&dir).unwrap();
        assert!(f.records.is_empty() && f.summaries.is_empty());
        let why = f.stopped.unwrap();
        assert!(why.contains("no records written"), "{why}");
        // A finished run without records is an error, not a silent empty shard.
        let done = shard_dir(root.path(), 0, 2, true);
        assert!(read_shard(&done).is_err());
    }
}
