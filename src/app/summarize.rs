//! `ladder summarize RUN`: rebuilds a run's summary and findings from its `requests.csv`.

use super::load::store_input;
use super::Output;
use crate::cli::SummarizeArgs;
use crate::error::{ExitCode, UsageError};
use crate::findings::{self, ModelFindings};
use crate::stats::StepSummary;
use crate::store;
use anyhow::Result;
use std::io::Write;

/// `ladder summarize RUN`: summary.csv and findings.json rebuilt from requests.csv.
pub(super) fn summarize(args: &SummarizeArgs, out: &Output) -> Result<ExitCode> {
    let dir = &args.run;
    let meta_path = dir.join(store::META_FILE);
    if !meta_path.is_file() {
        return Err(UsageError(format!(
            "{}: not a run directory (it has no {}); pass runs/<scenario>/<timestamp>/",
            dir.display(),
            store::META_FILE
        ))
        .into());
    }
    let meta = store::read_meta(&meta_path).map_err(|e| UsageError(e.to_string()))?;
    let loaded = store::rebuild_run(dir, &meta).map_err(store_input)?;
    let findings = findings::analyze_run(&loaded.summaries, loaded.requests.as_deref());
    let run_dir = store::RunDir { path: dir.clone() };
    // meta.json is the run's own record and stays as it is.
    let files = store::RunFiles {
        summaries: Some(&loaded.summaries),
        findings: Some(&serde_json::to_value(&findings)?),
        ..store::RunFiles::default()
    };
    store::write_run(&run_dir, None, &files)?;
    let requests = loaded.requests.as_ref().map_or(0, Vec::len);
    match &loaded.incomplete {
        Some(stopped) => eprintln!(
            "{}: incomplete run ({stopped}); {requests} records, {} finished step(s)",
            dir.display(),
            meta.steps.len()
        ),
        None if !out.quiet => eprintln!("{}: complete run; {requests} records", dir.display()),
        None => {}
    }
    if !out.quiet {
        eprintln!("wrote {} and {}", store::SUMMARY_FILE, store::FINDINGS_FILE);
    }
    let scenario_yaml = std::fs::read_to_string(dir.join(store::SCENARIO_FILE)).ok();
    show_rebuilt(&loaded.summaries, &findings, scenario_yaml, out)?;
    Ok(ExitCode::Ok)
}

/// A rebuilt run (`summarize`, `merge`) on stdout as the run's own output showed it: its table,
/// the cost columns in the currency of its recorded `scenario_yaml`, and each model's findings.
pub(super) fn show_rebuilt(
    summaries: &[StepSummary],
    findings: &[ModelFindings],
    scenario_yaml: Option<String>,
    out: &Output,
) -> Result<()> {
    let currency = scenario_yaml
        .and_then(|yaml| crate::scenario::Recorded::from_yaml(yaml).pricing)
        .map(|p| p.currency);
    let mut stdout = super::pipe::stdout();
    writeln!(
        stdout,
        "{}",
        crate::render::table::run_table_priced(summaries, out.color, None, currency.as_deref())
    )?;
    for f in findings {
        for line in f.sentences() {
            writeln!(stdout, "{}: {line}", f.model)?;
        }
    }
    Ok(())
}
