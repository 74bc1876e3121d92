//! `ladder report`: gathers what one HTML page shows about each run (results through `store`,
//! findings through `findings::analyze_run`, the verdicts through `compare`, exactly as `diff`
//! computes them) and hands it to `render::html`. Reading the data here keeps the renderer pure
//! and keeps every rule in its one home: nothing is recomputed differently for the picture.

use crate::app::paths::{default_output, resolve_run};
use crate::app::verdict::GatesSource;
use crate::cli::{ReportArgs, ReportFormatArg};
use crate::compare::{self, CompareOptions, Comparison};
use crate::error::{ExitCode, UsageError};
use crate::findings::{self};
use crate::render::html::view::RunView;
use crate::scenario::{Gates, Recorded};
use crate::store::{self, LoadedResult, StoreError};
use std::path::{Path, PathBuf};

/// `ladder report`: loads the runs (and baseline), renders the page, writes it atomically and
/// prints its path on stdout. Unreadable inputs are the user's input errors (exit 2).
pub fn command(
    args: &ReportArgs,
    quiet: bool,
    gates_from: Option<&(Gates, PathBuf)>,
) -> anyhow::Result<ExitCode> {
    if args.trend {
        return crate::app::trend::command(args, quiet);
    }
    if args.format != ReportFormatArg::Html {
        return Err(UsageError(
            "--format markdown prints a trend table: add --trend (the full report is HTML)".into(),
        )
        .into());
    }
    let input = |e: StoreError| anyhow::Error::from(UsageError(e.to_string()));
    let baseline = match &args.baseline {
        Some(b) => Some(store::load_result(b).map_err(|e| UsageError(format!("--baseline: {e}")))?),
        None => None,
    };
    let mut notes = Vec::new();
    let mut views = Vec::new();
    let mut first_dir = None;
    for path in &args.runs {
        let (path, note) = resolve_run(path);
        notes.extend(note);
        if first_dir.is_none() && path.is_dir() {
            first_dir = Some(path.clone());
        }
        let result = store::load_result(&path).map_err(input)?;
        let judged = match &baseline {
            Some(b) => {
                let (gates, source) =
                    crate::app::verdict::gates_for(&result, gates_from).map_err(UsageError)?;
                Some((b, gates, source))
            }
            None => None,
        };
        let view = view_of(result, judged);
        if let Some(stopped) = &view.result.incomplete {
            notes.push(format!(
                "{} is an incomplete run ({stopped}): the report shows the records it wrote",
                path.display()
            ));
        }
        views.push(view);
    }
    let output = match &args.out {
        Some(o) => o.clone(),
        None => {
            let inputs: Vec<PathBuf> = first_dir
                .iter()
                .cloned()
                .chain(args.runs.iter().cloned())
                .collect();
            let (path, note) = default_output(&inputs, "report");
            notes.extend(note);
            path
        }
    };
    if output.is_dir() {
        return Err(UsageError(format!(
            "-o {}: is a directory; give a file name such as {}/report.html",
            output.display(),
            output.display()
        ))
        .into());
    }
    let generator = format!("ladder {}", env!("CARGO_PKG_VERSION"));
    let html = crate::render::html::report(&views, &generator);
    store::write_atomic(&output, html.as_bytes())?;
    if !quiet {
        for n in &notes {
            eprintln!("note: {n}");
        }
        for v in &views {
            for w in &v.warnings {
                eprintln!("warning: {}: {w}", v.result.label);
            }
        }
    }
    outln!("{}", output.display())?;
    Ok(ExitCode::Ok)
}

/// Loads one run (or baseline CSV) for a page or a plan, not judged.
pub fn load_run(path: &Path) -> Result<RunView, StoreError> {
    Ok(view_of(store::load_result(path)?, None))
}

/// The scenario a result ran with: a run's recorded `scenario.yaml`; a baseline CSV records no
/// scenario, so its workload says the SLO, limits and load it ran with.
pub fn recorded_of(result: &LoadedResult) -> Option<Recorded> {
    result
        .recorded
        .clone()
        .or_else(|| result.workload_yaml.clone().map(Recorded::from_yaml))
}

/// What the page shows of one loaded run and, with a baseline and the gates to apply
/// (`verdict::gates_for`), its verdict exactly as `ladder diff BASELINE RUN` gives it
/// (`verdict::judge`: a different workload refused, unfinished sides handled, as there).
/// Which gates the page's verdict applied: the baseline comparison's; or an A/B run's, judged
/// with the gates recorded with it (`run_pairs`), so the page says those, not "the defaults".
fn gates_words(
    result: &LoadedResult,
    recorded: Option<&Recorded>,
    baseline: Option<&(&LoadedResult, Gates, GatesSource)>,
) -> Option<String> {
    let words = |g: &Gates, source: &GatesSource, pricing| {
        crate::app::verdict::describe(g, source) + crate::app::verdict::cost_gate_words(g, pricing)
    };
    let pricing = recorded.and_then(|r| r.pricing.as_ref());
    if let Some((_, g, source)) = baseline {
        return Some(words(g, source, pricing));
    }
    let r = recorded.filter(|r| r.compare_interleave)?;
    let g = r.gates.as_ref().ok()?;
    let dir = result.dir.as_ref()?;
    Some(words(
        g,
        &GatesSource::Recorded(dir.join(store::SCENARIO_FILE)),
        pricing,
    ))
}

pub fn view_of(
    result: LoadedResult,
    baseline: Option<(&LoadedResult, Gates, GatesSource)>,
) -> RunView {
    let recorded = recorded_of(&result);
    let (slo, limits) = recorded
        .as_ref()
        .map(|r| (r.slo, r.limits.clone()))
        .unwrap_or_default();
    // Only a run records its whole scenario; a baseline CSV keeps only the workload.
    let scenario_changes = match (&result.dir, &result.recorded) {
        (Some(_), Some(r)) => crate::scenario::non_default_yaml(&r.yaml),
        _ => None,
    };
    let findings = findings::analyze_run(&result.summaries, result.requests.as_deref());
    let gates = gates_words(&result, recorded.as_ref(), baseline.as_ref());
    let mut warnings = run_warnings(&result);
    let comparison = baseline.as_ref().map(|(b, g, _)| {
        let mut opts = CompareOptions::for_cli(g.clone(), false, false);
        opts.pricing = recorded.as_ref().and_then(|r| r.pricing.clone());
        opts.search = recorded.as_ref().and_then(|r| {
            let search = r.load.as_ref().and_then(|l| l.search).map(|x| x.slo);
            crate::app::verdict::capacity_slo(search, &r.slo)
        });
        let partials = [
            crate::app::side::partial_of(b, "the baseline"),
            crate::app::side::partial_of(&result, "the new run"),
        ];
        let (mut c, side_warnings) = crate::app::verdict::judge(
            &crate::app::side::of_result(b),
            &crate::app::side::of_result(&result),
            [partials[0].as_ref(), partials[1].as_ref()],
            g,
            &opts,
        );
        // Who measured each side, as `diff` says it (imported runs, different clients).
        c.notes.extend(crate::app::import::client_notes(b, &result));
        // The run's own unfinished state is already said above; the baseline's is news here.
        warnings.extend(
            side_warnings
                .into_iter()
                .filter(|w| w.starts_with("the baseline")),
        );
        c
    });
    let baseline = baseline.map(|(b, _, _)| b);
    let pairs = run_pairs(&result, recorded.as_ref());
    let ab = recorded.as_ref().is_some_and(|r| r.compare_interleave);
    // A damaged server_metrics.csv costs the page its server series, not the page.
    let server_metrics = match result
        .dir
        .as_ref()
        .map(|d| d.join(store::SERVER_METRICS_FILE))
    {
        Some(p) if p.is_file() => store::read_server_metrics_csv(&p).unwrap_or_else(|e| {
            warnings.push(format!("the server's series are not shown: {e}"));
            Vec::new()
        }),
        _ => Vec::new(),
    };
    // A log's minutes, for the capacity-over-time chart; a damaged file costs only the chart.
    let timeline = match result.dir.as_ref().map(|d| d.join(store::TIMELINE_FILE)) {
        Some(p) if p.is_file() => store::read_timeline_csv(&p).unwrap_or_else(|e| {
            warnings.push(format!("the capacity over time is not shown: {e}"));
            Vec::new()
        }),
        _ => Vec::new(),
    };
    RunView {
        server_metrics,
        timeline,
        pairs,
        ab,
        meta: result.meta.clone(),
        scenario_yaml: recorded.map(|r| r.yaml),
        result,
        findings,
        scenario_changes,
        slo,
        limits,
        baseline: baseline.cloned(),
        comparison,
        gates,
        warnings,
    }
}

/// The comparisons between models the run made: its `--pair`s (from the recorded command
/// line), else the scenario's `compare: {baseline: A}`.
fn run_pairs(
    result: &LoadedResult,
    recorded: Option<&Recorded>,
) -> Vec<(compare::Pair, Comparison)> {
    let args: Vec<&str> = result
        .meta
        .as_ref()
        .map(|m| m.command_line.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let explicit: Vec<compare::Pair> = args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a.strip_prefix("--pair") {
            Some("") => args.get(i + 1).copied(),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        })
        .filter_map(|p| p.parse().ok())
        .collect();
    let baseline = recorded.and_then(|r| r.compare_baseline.as_deref());
    let mut models: Vec<String> = Vec::new();
    for r in &result.summaries {
        if !models.contains(&r.model) {
            models.push(r.model.clone());
        }
    }
    let pairs = compare::in_run_pairs(&explicit, baseline, &models);
    if pairs.is_empty() {
        return Vec::new();
    }
    let side = crate::app::side::of_result(result);
    // An A/B run's pair is its verdict: judged as the run judged it, with its recorded gates.
    let ab = recorded.is_some_and(|r| r.compare_interleave);
    let gates = recorded
        .filter(|_| ab)
        .and_then(|r| r.gates.clone().ok())
        .unwrap_or_default();
    let mut opts = CompareOptions::for_cli(gates, false, false);
    opts.interleaved = ab;
    // Each model's tokens at its own price: which model costs more per answer.
    opts.pricing = recorded.and_then(|r| r.pricing.clone());
    pairs
        .into_iter()
        .filter_map(|p| {
            compare::compare_in_run(&side, &p, &opts)
                .ok()
                .map(|c| (p, c))
        })
        .collect()
}

/// What a reader must know before trusting the charts: an interrupted or incomplete run.
fn run_warnings(result: &LoadedResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(at) = &result.incomplete {
        out.push(format!(
            "Incomplete run: the process ended before the ladder finished ({at}); the charts show the records written until then, and the last step may be partial."
        ));
    }
    if result.interrupted() {
        let how = result.stopped_by().map_or_else(
            || crate::model::stopped::STOPPED_UNKNOWN.to_string(),
            crate::model::StoppedBy::how,
        );
        out.push(format!(
            "Stopped early: the run {how}; the last step holds fewer requests than planned."
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_and_interrupted_runs_are_flagged() {
        let meta = |interrupted: bool| {
            serde_json::from_value::<store::Meta>(serde_json::json!({
                "tool_version": "0", "scenario": "x", "fingerprint": "f", "host": "h",
                "started_at": "", "finished_at": "", "command_line": [],
                "interrupted": interrupted, "models": ["m"], "ladder": [1]
            }))
            .unwrap()
        };
        let mut r = LoadedResult {
            label: "x".into(),
            incomplete: Some("stopped in step 3 of 4 (concurrency 20)".into()),
            meta: Some(meta(true)),
            ..LoadedResult::default()
        };
        let w = run_warnings(&r);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("(stopped in step 3 of 4 (concurrency 20))"),
            "{w:?}"
        );
        assert!(w[1].contains("does not say which"), "{w:?}");
        let mut stopped = meta(true);
        stopped.stopped_by = Some(crate::model::StoppedBy::FailFast {
            class: "connect".into(),
            model: "m".into(),
            requests: 5,
            message: "Connection refused".into(),
        });
        r.meta = Some(stopped);
        let w = run_warnings(&r);
        assert!(
            w[1].contains("the run stopped early: the first 5 requests to m all failed with connect (Connection refused)"),
            "{w:?}"
        );
        r.incomplete = None;
        r.meta = Some(meta(false));
        assert!(run_warnings(&r).is_empty());
    }
}
