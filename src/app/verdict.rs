//! The CI contract of a verdict (docs/commands.md, docs/gate.md), shared by `ladder diff` and `ladder run
//! --against` so that both say the same thing the same way: the diff document alone on stdout
//! in the chosen format (so `> report.xml` and `| jq` work), the markdown verdict appended to
//! `$GITHUB_STEP_SUMMARY`, which gates were applied and why, a baseline with another workload
//! refused before any traffic, and whether a run may replace the baseline it was judged against.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::compare::{self, CompareOptions, Comparison, Side};
use crate::error::ExitCode;
use crate::render::diff::{DiffContext, DiffFormat};
use crate::scenario::{Gates, Scenario};
use crate::store;

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

    /// A machine format: stdout must hold that one document and nothing else.
    pub fn is_machine(&self) -> bool {
        self.format != DiffFormat::Table
    }

    /// Writes the verdict and returns its exit code. A reader that left (`| head`) does not
    /// change the verdict; a step summary that cannot be written is a warning, not a failure.
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
        let mut stdout = std::io::stdout().lock();
        let written = crate::render::diff::render_with(c, ctx, self.format, &mut stdout)
            .and_then(|()| stdout.flush());
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(code),
            Err(e) => Err(e),
            Ok(()) => Ok(code),
        }
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

/// The gates a comparison whose new side is `run` is judged with, and where they came from:
/// `--gates-from` when given (its gates and path), else the gates recorded with the run, else the
/// defaults. The one rule for `ladder diff` and `ladder report --baseline`.
pub fn gates_for(
    run: &Path,
    gates_from: Option<&(Gates, PathBuf)>,
) -> Result<(Gates, GatesSource), String> {
    Ok(match gates_from {
        Some((g, p)) => (g.clone(), GatesSource::Flag(p.clone())),
        None => match recorded_gates(run)? {
            Some((g, file)) => (g, GatesSource::Recorded(file)),
            None => (Gates::default(), GatesSource::Default),
        },
    })
}

/// The gates recorded with a run: `scenario.yaml` in the run directory (`path` is the directory
/// or its `summary.csv`). `Ok(None)` for a baseline CSV or a run that recorded no scenario.
pub fn recorded_gates(path: &Path) -> Result<Option<(Gates, PathBuf)>, String> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else if path.file_name().is_some_and(|n| n == store::SUMMARY_FILE) {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        return Ok(None);
    };
    let file = dir.join(store::SCENARIO_FILE);
    if !file.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
    let gates = crate::scenario::gates_from_yaml(&text).map_err(|e| {
        format!(
            "{}: {e} (choose the gates with --gates-from SCENARIO)",
            file.display()
        )
    })?;
    Ok(Some((gates, file)))
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn recorded_gates_are_read_from_the_run_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(recorded_gates(dir.path()).unwrap(), None);
        std::fs::write(
            dir.path().join(store::SCENARIO_FILE),
            "name: x\nrequest:\n  prompt_file: nowhere.txt\ngates:\n  ttft:\n    p90: 25%\n    floor: 10ms\n  throughput: 5%\n",
        )
        .unwrap();
        let (g, file) = recorded_gates(dir.path()).unwrap().unwrap();
        assert_eq!(file, dir.path().join(store::SCENARIO_FILE));
        assert!((g.ttft.p90 - 0.25).abs() < 1e-9);
        assert!((g.ttft.floor_ms - 10.0).abs() < 1e-9);
        assert!((g.throughput - 0.05).abs() < 1e-9);
        assert_eq!(g.tpot, Gates::default().tpot);
        let said = describe(&g, &GatesSource::Recorded(file));
        assert!(
            said.contains("TTFT P90 +25% P99 +20% (floor 10 ms)"),
            "{said}"
        );
        assert!(said.contains("throughput -5%"), "{said}");
        std::fs::write(
            dir.path().join(store::SCENARIO_FILE),
            "gates:\n  ttft: {p95: 1%}\n",
        )
        .unwrap();
        let err = recorded_gates(dir.path()).unwrap_err();
        assert!(err.contains("--gates-from"), "{err}");
    }
}
