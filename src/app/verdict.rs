//! The CI contract of a verdict (docs/commands.md, docs/gate.md), shared by `ladder diff` and `ladder run
//! --against` so that both say the same thing the same way: the diff document alone on stdout
//! in the chosen format (so `> report.xml` and `| jq` work), the markdown verdict appended to
//! `$GITHUB_STEP_SUMMARY`, which gates were applied and why, a baseline with another workload
//! refused before any traffic, and whether a run may replace the baseline it was judged against.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{DiffFormatArg, GateArgs};
use crate::compare::partial::{self, Partial};
use crate::compare::{self, CompareOptions, Comparison, Side};
use crate::error::ExitCode;
use crate::model::Pricing;
use crate::render::diff::{DiffContext, DiffFormat};
use crate::scenario::{Gates, Scenario};
use crate::store::LoadedResult;

/// Where a verdict goes: stdout in `format`, and the step summary file when CI provides one.
pub struct Sink {
    pub format: DiffFormat,
    step_summary: Option<PathBuf>,
}

impl Sink {
    /// `GITHUB_STEP_SUMMARY` (set by GitHub Actions) is honoured unless `no_step_summary`.
    pub fn new(format: DiffFormat, no_step_summary: bool) -> Self {
        let step_summary = if no_step_summary {
            None
        } else {
            std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Sink {
            format,
            step_summary,
        }
    }

    /// Writes the verdict and returns its exit code. A reader that left (`| head`) does not
    /// change the verdict (`app::pipe`); a step summary that cannot be written is a warning,
    /// not a failure.
    pub fn emit(&self, c: &Comparison, ctx: &DiffContext) -> std::io::Result<ExitCode> {
        let code = c.exit_code();
        if let Some(path) = &self.step_summary {
            if let Err(e) = append_markdown(path, c, ctx) {
                eprintln!(
                    "warning: GITHUB_STEP_SUMMARY {}: cannot append the verdict: {e}",
                    path.display()
                );
            }
        }
        let mut stdout = crate::app::pipe::stdout();
        crate::render::diff::render_with(c, ctx, self.format, &mut stdout)?;
        stdout.flush()?;
        Ok(code)
    }
}

fn append_markdown(path: &Path, c: &Comparison, ctx: &DiffContext) -> std::io::Result<()> {
    let mut doc = Vec::new();
    crate::render::diff::render_with(c, ctx, DiffFormat::Markdown, &mut doc)?;
    doc.push(b'\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(&doc)
}

/// Where the gates of a comparison came from.
#[derive(Debug, Clone, PartialEq)]
pub enum GatesSource {
    /// `--gates-from SCENARIO`.
    Flag(PathBuf),
    /// The scenario being run (`run --against`).
    Scenario(PathBuf),
    /// The scenario recorded in the new run's directory (`scenario.yaml`).
    Recorded(PathBuf),
    /// Nothing recorded: the defaults.
    Default,
}

/// "recorded with the run (runs/x/scenario.yaml): TTFT P90 +10% …".
pub fn describe(gates: &Gates, source: &GatesSource) -> String {
    let from = match source {
        GatesSource::Flag(p) => format!("from --gates-from {}", p.display()),
        GatesSource::Scenario(p) => format!("from the scenario {}", p.display()),
        GatesSource::Recorded(p) => format!("recorded with the run ({})", p.display()),
        GatesSource::Default => {
            "the defaults (the new side records no scenario.yaml; --gates-from SCENARIO chooses)"
                .to_string()
        }
    };
    format!("{from}: {}", gates.describe())
}

/// The cost gate in the gates line when the new side is priced and the gate is the default
/// (`Gates::describe` names it only when it is not: an unpriced run judges no cost).
pub fn cost_gate_words(gates: &Gates, pricing: Option<&Pricing>) -> &'static str {
    if pricing.is_some() && gates.cost == Gates::default().cost {
        "; cost mean +10%"
    } else {
        ""
    }
}

/// The gates a comparison whose new side is `run` is judged with, and where they came from:
/// `--gates-from` when given (its gates and path), else the gates recorded with the run, else the
/// defaults. The one rule for `ladder diff` and `ladder report --baseline`. `Err` when the
/// recorded gates cannot be read, with the fix.
pub fn gates_for(
    run: &LoadedResult,
    gates_from: Option<&(Gates, PathBuf)>,
) -> Result<(Gates, GatesSource), String> {
    if let Some((g, p)) = gates_from {
        return Ok((g.clone(), GatesSource::Flag(p.clone())));
    }
    match (&run.recorded, run.recorded_path()) {
        (Some(r), Some(file)) => match &r.gates {
            Ok(g) => Ok((g.clone(), GatesSource::Recorded(file))),
            Err(e) => Err(format!(
                "{}: {e} (choose the gates with --gates-from SCENARIO)",
                file.display()
            )),
        },
        _ => Ok((Gates::default(), GatesSource::Default)),
    }
}

/// What a comparison says of its prices (docs/cost.md): both sides' tokens are priced at the
/// new run's prices, so when the baseline recorded other prices (or none) a note says so; the
/// baseline's own `summary.csv` cost figures are at its prices. `None` when there is nothing
/// to say.
pub fn pricing_note(new: Option<&Pricing>, base: Option<&Pricing>) -> Option<String> {
    let new = new?;
    let same = base.is_some_and(|b| {
        b.currency == new.currency
            && b.models
                .iter()
                .all(|(m, p)| new.models.get(m).map_or(true, |q| q == p))
    });
    (!same).then(|| {
        let what = if base.is_some() {
            "recorded other prices"
        } else {
            "was not priced"
        };
        format!(
            "cost: both sides' tokens are priced at the new run's prices ({}); the baseline {what}, so its own summary.csv cost figures differ from the ones judged here",
            new.currency
        )
    })
}

/// The baseline of `run --against`, loaded before any traffic: its side of the comparison and,
/// when it is itself an unfinished run, what `ladder diff` would say of that.
#[derive(Debug, Clone)]
pub struct Against {
    pub side: Side,
    pub partial: Option<Partial>,
}

/// `new` judged against `base`: the comparison, with the unfinished-run handling of each side
/// (`partials`: the advice of inconclusive checks at steps a side cut short restated for the
/// planned count, the verdict marked incomplete) and the warnings every format carries. The one
/// judgement `ladder diff`, `ladder report --baseline` and `run --against` make.
pub fn judge(
    base: &Side,
    new: &Side,
    partials: [Option<&Partial>; 2],
    gates: &Gates,
    opts: &CompareOptions,
) -> (Comparison, Vec<String>) {
    let mut c = compare::compare(base, new, opts);
    partial::restate_advice(
        &mut c,
        gates,
        (partials[0], &base.summaries),
        (partials[1], &new.summaries),
    );
    c.incomplete = partials.iter().flatten().map(|p| p.unfinished()).collect();
    let warnings = partials.iter().flatten().map(|p| p.warning()).collect();
    (c, warnings)
}

/// Before any traffic: the comparison `run --against` would end with when the baseline was
/// measured with another workload (a refusal carrying the scenario diff), or `None` when the
/// run may go ahead. Costs nothing on a paid provider, unlike finding out after the ladder.
pub fn refuse_before_traffic(
    base: &Side,
    s: &Scenario,
    opts: &CompareOptions,
) -> Option<Comparison> {
    if opts.allow_different_workload || base.fingerprint == s.fingerprint {
        return None;
    }
    let planned = Side {
        label: s.path.display().to_string(),
        fingerprint: s.fingerprint.clone(),
        workload_yaml: Some(crate::scenario::workload_yaml(s)),
        ..Side::default()
    };
    let c = compare::compare(base, &planned, opts);
    c.refused.is_some().then_some(c)
}

/// Whether a run judged against a baseline may replace it (`--save-baseline --against`): only a
/// passing gate (exit 0) replaces it, or `--force`. `Err` says why the old one stays.
pub fn may_replace_baseline(verdict: Option<ExitCode>, force: bool) -> Result<(), String> {
    match verdict {
        None | Some(ExitCode::Ok) => Ok(()),
        Some(_) if force => Ok(()),
        Some(code) => Err(format!(
            "baseline not replaced: the gate did not pass (exit {}); the old baseline stays (--force replaces it anyway)",
            code.code()
        )),
    }
}

/// The command line's switches of `diff` and `run --against` (`--strict`,
/// `--allow-different-workload`, `--no-step-summary`, `--full`), read from clap's `GateArgs`
/// once.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GateSwitches {
    pub strict: bool,
    pub allow_different_workload: bool,
    pub no_step_summary: bool,
    pub full: bool,
}

impl From<&GateArgs> for GateSwitches {
    fn from(a: &GateArgs) -> Self {
        GateSwitches {
            strict: a.strict,
            allow_different_workload: a.allow_different_workload,
            no_step_summary: a.no_step_summary,
            full: a.full,
        }
    }
}

/// The comparison options of `diff` and `run --against`: the scenario's gates and the
/// command line's switches.
pub(crate) fn compare_options(switches: &GateSwitches, gates: Gates) -> CompareOptions {
    CompareOptions::for_cli(gates, switches.allow_different_workload, switches.strict)
}

/// The SLO the capacity check judges by: `load.search`'s, else the scenario's `slo:` when it
/// sets a bound (every ladder with an SLO has a highest load that meets it).
pub(crate) fn capacity_slo(
    search: Option<crate::model::Slo>,
    slo: &crate::model::Slo,
) -> Option<crate::model::Slo> {
    search.or_else(|| (!slo.is_empty()).then_some(*slo))
}

/// The verdict's format as the command line names it.
pub(crate) fn diff_format(format: DiffFormatArg) -> DiffFormat {
    match format {
        DiffFormatArg::Table => DiffFormat::Table,
        DiffFormatArg::Markdown => DiffFormat::Markdown,
        DiffFormatArg::Json => DiffFormat::Json,
        DiffFormatArg::Junit => DiffFormat::Junit,
    }
}

/// Where the verdict goes, in the format the command line chose.
pub(crate) fn verdict_sink(format: DiffFormat, switches: &GateSwitches) -> Sink {
    Sink::new(format, switches.no_step_summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store;

    #[test]
    fn only_a_passing_gate_or_force_replaces_the_baseline() {
        assert!(may_replace_baseline(None, false).is_ok());
        assert!(may_replace_baseline(Some(ExitCode::Ok), false).is_ok());
        let kept = may_replace_baseline(Some(ExitCode::Regression), false).unwrap_err();
        assert!(
            kept.contains("exit 3") && kept.contains("--force"),
            "{kept}"
        );
        assert!(may_replace_baseline(Some(ExitCode::Inconclusive), false).is_err());
        assert!(may_replace_baseline(Some(ExitCode::Regression), true).is_ok());
    }

    #[test]
    fn the_gates_are_the_flags_else_the_recorded_ones_else_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let recorded = |yaml: &str| LoadedResult {
            dir: Some(dir.path().to_path_buf()),
            recorded: Some(crate::scenario::Recorded::from_yaml(yaml.into())),
            ..LoadedResult::default()
        };
        let (g, source) = gates_for(&LoadedResult::default(), None).unwrap();
        assert_eq!((g, &source), (Gates::default(), &GatesSource::Default));
        let run = recorded(
            "name: x\nrequest:\n  prompt_file: nowhere.txt\ngates:\n  ttft:\n    p90: 25%\n    floor: 10ms\n  throughput: 5%\n",
        );
        let (g, source) = gates_for(&run, None).unwrap();
        let file = dir.path().join(store::SCENARIO_FILE);
        assert_eq!(source, GatesSource::Recorded(file.clone()));
        assert!((g.ttft.p90 - 0.25).abs() < 1e-9);
        assert!((g.ttft.floor_ms - 10.0).abs() < 1e-9);
        assert!((g.throughput - 0.05).abs() < 1e-9);
        assert_eq!(g.tpot, Gates::default().tpot);
        let said = describe(&g, &source);
        assert!(
            said.contains("TTFT P90 +25% P99 +20% (floor 10 ms)"),
            "{said}"
        );
        assert!(said.contains("throughput -5%"), "{said}");
        let flag = (Gates::default(), PathBuf::from("other.yaml"));
        let (g, source) = gates_for(&run, Some(&flag)).unwrap();
        assert_eq!(g, Gates::default());
        assert_eq!(source, GatesSource::Flag("other.yaml".into()));
        let err = gates_for(&recorded("gates:\n  ttft: {p95: 1%}\n"), None).unwrap_err();
        assert!(
            err.contains("--gates-from") && err.contains("scenario.yaml"),
            "{err}"
        );
    }
}
