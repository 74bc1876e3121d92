//! `meta.json`: the facts of a run that are not results (tool version, host, start, scenario
//! identity, SLO, shard, whether, where and why it stopped).

use super::StoreError;
use crate::model::{RequestRecord, Slo, StepRun, StoppedBy};
use crate::stats::StepSummary;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// `meta.json` of a run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub tool_version: String,
    pub scenario: String,
    pub fingerprint: String,
    pub host: String,
    /// RFC 3339 UTC (`rfc3339_utc`).
    pub started_at: String,
    pub finished_at: String,
    /// Already redacted by the caller.
    pub command_line: Vec<String>,
    pub interrupted: bool,
    pub models: Vec<String>,
    pub ladder: Vec<u32>,
    /// What the ladder's values count (older runs: streams).
    #[serde(default)]
    pub ladder_unit: crate::model::LadderUnit,
    #[serde(default)]
    pub notes: Vec<String>,
    /// `false` from the start of a run until everything is written: a run directory whose
    /// meta says `false` belongs to a run that was killed or crashed. Older runs lack the field
    /// and were complete when written.
    #[serde(default = "yes")]
    pub complete: bool,
    /// The steps that finished, in run order, with their wall time and self-check figures
    /// (what `ladder summarize` needs besides `requests.csv`).
    #[serde(default)]
    pub steps: Vec<StepRun>,
    /// The scenario's SLO in ms (for goodput when summaries are rebuilt).
    #[serde(default)]
    pub slo: Slo,
    /// The scenario's `request.short_below` (for the short count when summaries are rebuilt or
    /// shards merged). Runs written before it was kept used the default.
    #[serde(default = "default_short_below")]
    pub short_below: f64,
    /// For a shard of a sharded run (`run --shard I/N`): which one, and its clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardMeta>,
    /// For a merged run (`ladder merge`): the shards it was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedShard>,
    /// Why the run stopped before its plan ended (a signal, or the fail-fast rule and the
    /// failure it saw); absent for a run that ran its plan, and in runs written before it was
    /// kept (`interrupted` then says only that it stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StoppedBy>,
    /// The client that measured the run when it was not ladder (`GuideLLM 0.8.1`: a result
    /// imported by `ladder logs --format guidellm|aiperf|vllm`); such a run carries no client
    /// self-check. Absent for ladder's own runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

fn yes() -> bool {
    true
}

fn default_short_below() -> f64 {
    crate::scenario::DEFAULT_SHORT_BELOW
}

/// The facts of a run that are neither its scenario's nor its steps': the caller's (tool
/// version, host, clock, redacted command line), so that tests can give fixed ones.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    pub tool_version: String,
    pub host: String,
    /// RFC 3339 UTC (`rfc3339_utc`).
    pub started_at: String,
    pub finished_at: String,
    /// Already redacted by the caller.
    pub command_line: Vec<String>,
}

/// Who a run made from summarized steps says it is: its name, its fingerprint, its SLO and
/// its models in order.
#[derive(Debug, Clone, Default)]
pub struct RunIdentity {
    pub scenario: String,
    pub fingerprint: String,
    pub slo: Slo,
    pub models: Vec<String>,
}

impl Meta {
    /// `meta.json` of a run made from steps already summarized (`ladder logs`): complete, its
    /// steps those of `summaries` (`StepSummary::step_run`), its ladder their distinct values,
    /// ascending. Such steps were summarized without a short rule (`short_below` 0).
    pub fn of_summaries(id: RunIdentity, summaries: &[StepSummary], facts: RunFacts) -> Meta {
        let mut ladder: Vec<u32> = summaries.iter().map(|s| s.concurrency).collect();
        ladder.sort_unstable();
        ladder.dedup();
        Meta {
            tool_version: facts.tool_version,
            scenario: id.scenario,
            fingerprint: id.fingerprint,
            host: facts.host,
            started_at: facts.started_at,
            finished_at: facts.finished_at,
            command_line: facts.command_line,
            interrupted: false,
            models: id.models,
            ladder,
            ladder_unit: Default::default(),
            notes: Vec::new(),
            complete: true,
            steps: summaries.iter().map(StepSummary::step_run).collect(),
            slo: id.slo,
            short_below: 0.0,
            shard: None,
            merged_from: Vec::new(),
            stopped_by: None,
            client: None,
        }
    }

    /// `meta.json` of scenario `s` as written before any traffic: `complete: false`, no steps
    /// yet. The run's own facts (tool version, host, start time, redacted command line) are the
    /// caller's, so tests and calibration can give fixed ones.
    pub fn before_traffic(
        s: &crate::scenario::Scenario,
        tool_version: String,
        host: String,
        started_at: String,
        command_line: Vec<String>,
    ) -> Meta {
        Meta {
            tool_version,
            scenario: s.name.clone(),
            fingerprint: s.fingerprint.clone(),
            host,
            started_at,
            finished_at: String::new(),
            command_line,
            interrupted: false,
            models: s.target.models.clone(),
            ladder: s.load.ladder.clone(),
            ladder_unit: s.load.ladder_unit(),
            notes: Vec::new(),
            complete: false,
            steps: Vec::new(),
            slo: s.slo,
            short_below: s.request.short_below,
            shard: None,
            merged_from: Vec::new(),
            stopped_by: None,
            client: None,
        }
    }

    /// Where an incomplete run stopped, in words: `stopped in step 3 of 4 (at 20 streams)`
    /// when `records` hold some of the unfinished step, else `stopped between steps 2 and 3 of
    /// 4`; with the model when the run has several. `None` for a complete run.
    pub fn stopped_at(&self, records: &[RequestRecord]) -> Option<String> {
        if self.complete {
            return None;
        }
        let per_step = self.models.len().max(1);
        let done = self.steps.len();
        let step_idx = done / per_step;
        let n = self.ladder.len();
        let Some(&c) = self.ladder.get(step_idx) else {
            return Some(format!(
                "stopped after step {n} of {n}, before its files were written"
            ));
        };
        let model = self.models.get(done % per_step);
        let step = step_idx as u32 + 1;
        let started = records
            .iter()
            .any(|r| r.step == step && model.map_or(true, |m| &r.model == m));
        let of_model = match model {
            Some(m) if per_step > 1 => format!(", model {m}"),
            _ => String::new(),
        };
        let at = self.ladder_unit.at(c);
        Some(if started || done == 0 {
            format!("stopped in step {step} of {n} ({at}{of_model})")
        } else if done % per_step != 0 {
            let m = model.map_or("", String::as_str);
            format!("stopped in step {step} of {n} ({at}) before model {m} started")
        } else {
            format!("stopped between steps {step_idx} and {step} of {n} ({at} next)")
        })
    }
}

/// Reads a run's `meta.json`.
pub fn read_meta(path: &Path) -> Result<Meta, StoreError> {
    let bytes = fs::read(path).map_err(|e| StoreError::read(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| StoreError::Json {
        path: path.to_path_buf(),
        error: e.to_string(),
    })
}

/// What `meta.json` says about the shard that wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardMeta {
    pub index: u32,
    pub total: u32,
    /// The common start every shard was given (`--start-at`, RFC 3339), if any.
    #[serde(default)]
    pub start_at: Option<String>,
    /// Time slot of each model × step (seconds): step k started at `start_at + k × slot`.
    #[serde(default)]
    pub step_every_s: Option<f64>,
    /// This host's wall clock (Unix ms) at the runner's time origin: a record's
    /// `started_at_ms` counts from here.
    pub origin_unix_ms: f64,
    /// Estimated (target's clock − this host's clock) in ms, from the target's `Date` header
    /// (`clock::estimate_offset`); `None` when it could not be measured.
    #[serde(default)]
    pub clock_offset_ms: Option<f64>,
    /// Half-width of the interval the offset is known to lie in, ms.
    #[serde(default)]
    pub clock_offset_error_ms: Option<f64>,
}

/// What a merged run's `meta.json` keeps about each shard it was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    pub index: u32,
    pub total: u32,
    /// The shard's run directory.
    pub source: String,
    pub host: String,
    pub complete: bool,
    pub clock_offset_ms: Option<f64>,
    pub records: u64,
}
