//! Validation: turns the raw serde shape into a `Scenario`, filling defaults, reading prompt
//! files next to the scenario, and rejecting what cannot run with an error that names the field
//! and the fix.

use super::build_load::build_load;
use super::build_request::build_request;
use super::build_unstreamed::check_unstreamed;
use super::errors::{did_you_mean, Ctx};
use super::interpolate::Interpolated;
use super::raw::{RawGates, RawLoad, RawMetricGate, RawRetry, RawScenario};
use super::scalars::{dur_or, pos};
use super::{
    Gates, Limits, Load, MetricGate, RetryPolicy, Scenario, ScenarioError, Slo, MAX_BASELINE_RUNS,
};
use crate::model::ErrorClass;
use std::path::Path;

/// `bail!(cx, "load.ladder", "the ladder is empty; ...")`: returns a located error.
macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

/// The longest scenario name.
pub const MAX_NAME_LEN: usize = 100;

pub(super) fn build(
    cx: &Ctx,
    raw: RawScenario,
    interp: &Interpolated,
) -> Result<Scenario, ScenarioError> {
    let name = check_name(cx, raw.name)?;
    let limits: Limits = raw.limits.map_or_else(Limits::default, |l| Limits {
        concurrency: pos(l.concurrency),
        rpm: pos(l.rpm),
        tpm: pos(l.tpm),
        tpm_counts: l.tpm_counts.unwrap_or_default(),
        itpm: pos(l.itpm),
        itpm_cached: l.itpm_cached == Some(super::raw::RawCached::Counted),
        otpm: pos(l.otpm),
        max_tokens: None,
    });
    let slo = raw.slo.map_or_else(Slo::default, |s| Slo {
        ttft: s.ttft.map(|d| d.0),
        ttfc: s.ttfc.map(|d| d.0),
        tpot: s.tpot.map(|d| d.0),
        e2e: s.e2e.map(|d| d.0),
    });
    let target = super::build_target::build_target(cx, raw.target, interp)?;
    let target_models = target.models.clone();
    let load = build_load(cx, raw.load)?;
    let request = build_request(cx, raw.request, &load, target.api)?;
    if !request.stream {
        check_unstreamed(
            cx,
            target.api,
            &slo,
            load.search.as_ref(),
            raw.gates.as_ref(),
        )?;
    }
    let (compare_baseline, interleave) = raw
        .compare
        .map_or((None, false), |c| (c.baseline, c.interleave == Some(true)));
    if let Some(b) = &compare_baseline {
        if !target.models.contains(b) || target.models.len() < 2 {
            bail!(
                cx,
                "compare.baseline",
                "`{b}` must be one of at least two models of target.models ({}); the others are judged against it",
                target.models.join(", ")
            )
        }
    }
    if interleave {
        check_interleave(cx, &target.models, compare_baseline.as_deref(), &load)?;
    }
    let baselines_keep = raw.baselines.and_then(|b| pos(b.keep));
    if let Some(k) = baselines_keep.filter(|k| *k > MAX_BASELINE_RUNS) {
        bail!(
            cx,
            "baselines.keep",
            "{k} runs is more than a baseline keeps; write a number from 1 to {MAX_BASELINE_RUNS} (3 to 10 is typical: 3 or more widen the gate by the run-to-run spread)"
        )
    }
    let limits = Limits {
        max_tokens: request.max_tokens,
        ..limits
    };
    Ok(Scenario {
        path: cx.file.to_path_buf(),
        name,
        description: raw.description.filter(|d| !d.trim().is_empty()),
        target,
        request,
        load,
        retry: build_retry(cx, raw.retry)?,
        gates: build_gates(raw.gates),
        slo,
        limits,
        fingerprint: String::new(),
        extra: raw.extra.unwrap_or_default(),
        compare_baseline,
        compare_interleave: interleave,
        baselines_keep,
        otlp: super::build_telemetry::build_telemetry(cx, raw.telemetry)?,
        pricing: super::build_pricing::build_pricing(cx, raw.pricing, &target_models)?,
    })
}

/// `name:`, present, a slug and short enough to name folders and files.
fn check_name(cx: &Ctx, name: Option<String>) -> Result<String, ScenarioError> {
    let Some(name) = name else {
        bail!(
            cx,
            "name",
            "missing; add e.g. `name: {}` (used for file names)",
            slugify(cx.file)
        )
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
    {
        let fix = slugify(Path::new(&name));
        bail!(
            cx,
            "name",
            "`{name}` is not allowed; use a-z, 0-9 and -, e.g. `{fix}`"
        )
    }
    // The name is a folder and a file name (`runs/NAME/…`, `baselines/NAME.requests.csv`):
    // file systems refuse components over 255 bytes, and deep `--out` paths need room.
    if name.len() > MAX_NAME_LEN {
        bail!(
            cx,
            "name",
            "is {} characters long; at most {MAX_NAME_LEN} (it names the run folder and the baseline files)",
            name.len()
        )
    }
    Ok(name)
}

/// `Support Chat.yaml` -> `support-chat`.
fn slugify(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let s: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn build_retry(cx: &Ctx, raw: Option<RawRetry>) -> Result<RetryPolicy, ScenarioError> {
    let d = RetryPolicy::default();
    let Some(r) = raw else { return Ok(d) };
    let mut retry_on = Vec::new();
    for n in r.retry_on.as_deref().unwrap_or_default() {
        let all: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
        match (n.parse::<ErrorClass>(), did_you_mean(n, &all)) {
            (Ok(class), _) => retry_on.push(class),
            (Err(e), hint) if hint.is_empty() => bail!(cx, "retry.retry_on", "{e}"),
            (Err(_), hint) => bail!(cx, "retry.retry_on", "unknown error class `{n}`{hint}"),
        }
    }
    let p = RetryPolicy {
        max_attempts: pos(r.max_attempts).unwrap_or(d.max_attempts),
        initial_backoff: dur_or(r.initial_backoff, d.initial_backoff),
        max_backoff: dur_or(r.max_backoff, d.max_backoff),
        max_retry_after: dur_or(r.max_retry_after, d.max_retry_after),
        retry_on: if r.retry_on.is_some() {
            retry_on
        } else {
            d.retry_on
        },
    };
    if p.initial_backoff > p.max_backoff {
        bail!(
            cx,
            "retry.initial_backoff",
            "is longer than max_backoff; make max_backoff at least as long"
        )
    }
    Ok(p)
}

/// The `gates:` block of a scenario as a run directory records it (`scenario.yaml`), read on its
/// own: the recorded file names prompt files relative to where the run started, so the whole
/// scenario may not load elsewhere, but its gates always do. No block means the defaults.
pub fn gates_from_yaml(text: &str) -> Result<Gates, String> {
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    match doc.get("gates") {
        None | Some(serde_yaml::Value::Null) => Ok(Gates::default()),
        Some(v) => {
            let raw: RawGates =
                serde_yaml::from_value(v.clone()).map_err(|e| format!("gates: {e}"))?;
            Ok(build_gates(Some(raw)))
        }
    }
}

/// The `load:` block of a scenario as a run directory records it (`scenario.yaml`), read on its
/// own like [`gates_from_yaml`]: what each step was planned to send (for a diff of a run that
/// stopped early). No block is an error, as in a scenario.
pub fn load_from_yaml(text: &str) -> Result<Load, String> {
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    let raw: Option<RawLoad> = match doc.get("load") {
        None | Some(serde_yaml::Value::Null) => None,
        Some(v) => Some(serde_yaml::from_value(v.clone()).map_err(|e| format!("load: {e}"))?),
    };
    let cx = Ctx {
        file: Path::new(super::RECORDED_FILE),
        text,
        secrets: Vec::new(),
        prompt_cap: super::bounded::prompt_cap(&|_| None),
    };
    build_load(&cx, raw).map_err(|e| e.to_string())
}

fn override_gate(gate: &mut MetricGate, over: Option<&RawMetricGate>) {
    if let Some(o) = over {
        gate.p90 = o.p90.as_ref().map_or(gate.p90, |f| f.0);
        gate.p99 = o.p99.as_ref().map_or(gate.p99, |f| f.0);
        gate.floor_ms = o
            .floor
            .as_ref()
            .map_or(gate.floor_ms, |d| d.0.as_secs_f64() * 1000.0);
    }
}

fn build_gates(raw: Option<RawGates>) -> Gates {
    let mut g = Gates::default();
    let Some(r) = raw else { return g };
    let pairs = [
        (&mut g.ttft, r.ttft),
        (&mut g.tpot, r.tpot),
        (&mut g.itl, r.itl),
        (&mut g.e2e, r.e2e),
    ];
    for (gate, over) in pairs {
        override_gate(gate, over.as_ref());
    }
    // TTFC follows TTFT's gate (as overridden) in what it does not set itself.
    g.ttfc = g.ttft;
    override_gate(&mut g.ttfc, r.ttfc.as_ref());
    g.error_rate = r.error_rate.map_or(g.error_rate, |f| f.0);
    g.throughput = r.throughput.map_or(g.throughput, |f| f.0);
    g.cost = r.cost.and_then(|c| c.mean).map_or(g.cost, |f| f.0);
    g.cache_hit = r.cache_hit.map_or(g.cache_hit, |f| f.0);
    g.capacity = r.capacity.map_or(g.capacity, |f| f.0);
    g
}

/// `compare: {interleave: true}` needs two models, one of them the baseline, and a load whose
/// requests the runner can share out between them: a step's streams or arrivals. A replayed
/// trace brings its own requests and a capacity search its own steps.
fn check_interleave(
    cx: &Ctx,
    models: &[String],
    baseline: Option<&str>,
    load: &Load,
) -> Result<(), ScenarioError> {
    if models.len() != 2 || baseline.is_none() {
        bail!(
            cx,
            "compare.interleave",
            "an A/B run interleaves exactly two models, one of them compare.baseline (have target.models: {}); e.g. `target: {{models: [current, candidate]}}` and `compare: {{baseline: current, interleave: true}}`, or `ladder run … --ab current=candidate`",
            models.join(", ")
        )
    }
    if matches!(load.mode, super::LoadMode::Replay { .. }) {
        bail!(
            cx,
            "compare.interleave",
            "a replayed trace sends its own requests at their recorded times, so there is nothing to share out between two models; compare replays of each model against a stored baseline instead (`ladder diff --pair`)"
        )
    }
    if load.search.is_some() {
        bail!(
            cx,
            "compare.interleave",
            "load.search picks its next step from one model's results; run the A/B on a fixed ladder (remove load.search) and search each model on its own"
        )
    }
    Ok(())
}
