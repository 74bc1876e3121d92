//! The scenarios a `ladder run` runs: its files with the command-line overrides applied
//! (`--model`, `--ladder`, …), or one ad-hoc scenario from the flags alone; and
//! `--save-scenario`, which writes the scenario as run so that `ladder run FILE` repeats it.

use crate::app::load::load_text_without_secrets;
use crate::cli::RunArgs;
use crate::error::UsageError;
use crate::scenario::{self, Overrides, Scenario};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The overrides the flags give; `--prompt-file` is resolved against the working directory.
fn overrides_of(args: &RunArgs) -> Result<Overrides> {
    let a = &args.overrides;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    Ok(Overrides {
        base_url: a.base_url.clone(),
        models: a.model.clone(),
        api: a.api.map(|a| a.as_str().to_string()),
        ladder: a.ladder.clone(),
        requests_per_step: a.requests_per_step,
        duration: a.duration,
        max_tokens: a.max_tokens,
        max_tokens_field: a.max_tokens_field.map(|f| f.key().to_string()),
        prompt_file: a.prompt_file.as_ref().map(|p| cwd.join(p)),
        prompt: a.prompt.clone(),
        no_stream: a.no_stream,
        ab: a.ab.as_ref().map(|p| (p.old.clone(), p.new.clone())),
    })
}

/// Loads the scenario text; a dry run needs no secrets (as `validate`).
fn load_text(text: &str, path: &Path, o: &Overrides, dry_run: bool) -> Result<Scenario> {
    Ok(if dry_run {
        load_text_without_secrets(text, path, o)?.0
    } else {
        scenario::load_str_with(text, path, &|name| std::env::var(name).ok(), o)?
    })
}

/// Every scenario of the run, overrides applied, and the `--save-scenario` file written (only
/// once the scenario it holds loaded, and checked to give the same fingerprint).
pub(super) fn run_scenarios_of(args: &RunArgs) -> Result<Vec<Scenario>> {
    let o = overrides_of(args)?;
    let save = args.save_scenario.as_deref();
    if save.is_some() && args.scenarios.len() > 1 {
        return Err(UsageError("--save-scenario takes one scenario".into()).into());
    }
    if let Some(file) = save {
        let same = |p: &PathBuf| std::fs::canonicalize(p).ok() == std::fs::canonicalize(file).ok();
        if file.exists() && args.scenarios.iter().any(same) {
            let msg = format!(
                "--save-scenario {}: that is the scenario being run; write to another file",
                file.display()
            );
            return Err(UsageError(msg).into());
        }
    }
    if args.scenarios.is_empty() {
        let name = scenario::adhoc_name(save);
        let path = save.map_or_else(|| PathBuf::from(format!("{name}.yaml")), Path::to_path_buf);
        let dir = path.parent().unwrap_or(Path::new(""));
        let text = o.adhoc(&name, dir).map_err(|e| UsageError(e.to_string()))?;
        let s = load_text(&text, &path, &Overrides::default(), args.dry_run)?;
        if let Some(file) = save {
            write_saved(file, &text, &s, args.dry_run)?;
        }
        return Ok(vec![s]);
    }
    let mut out = Vec::new();
    for path in &args.scenarios {
        let text =
            std::fs::read_to_string(path).map_err(|error| scenario::ScenarioError::Read {
                path: path.clone(),
                error,
            })?;
        let s = load_text(&text, path, &o, args.dry_run)?;
        if let Some(file) = save {
            let dir = |p: &Path| {
                let d = p.parent().filter(|d| !d.as_os_str().is_empty());
                std::fs::canonicalize(d.unwrap_or(Path::new("."))).ok()
            };
            if dir(file) != dir(path) {
                let msg = format!(
                    "--save-scenario {}: write it in the folder of {} (its prompt paths are relative to that folder)",
                    file.display(),
                    path.display()
                );
                return Err(UsageError(msg).into());
            }
            let folder = path.parent().unwrap_or(Path::new(""));
            let saved =
                scenario::rewrite(&text, &o, folder).map_err(|e| UsageError(e.to_string()))?;
            write_saved(file, &saved, &s, args.dry_run)?;
        }
        out.push(s);
    }
    Ok(out)
}

/// Writes the saved scenario atomically after checking that it loads to the same workload.
fn write_saved(file: &Path, text: &str, s: &Scenario, dry_run: bool) -> Result<()> {
    let again = load_text(text, file, &Overrides::default(), dry_run).with_context(|| {
        format!(
            "--save-scenario {}: the saved scenario does not load",
            file.display()
        )
    })?;
    if again.fingerprint != s.fingerprint {
        anyhow::bail!(
            "--save-scenario {}: the saved scenario would run another workload (fingerprint {} vs {}); please report this",
            file.display(),
            again.fingerprint,
            s.fingerprint
        );
    }
    let header =
        "# Written by `ladder run --save-scenario`; `ladder run` on this file repeats the run.\n";
    crate::store::write_atomic(file, format!("{header}{text}").as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))?;
    eprintln!(
        "saved the scenario to {} (workload {})",
        file.display(),
        s.fingerprint
    );
    Ok(())
}
