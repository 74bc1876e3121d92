//! The loading pipeline: read the file, expand `${VAR}`, note which values are secrets, parse
//! the raw shape, validate it into a `Scenario` and stamp the workload fingerprint. Each stage
//! lives in its own sibling module; this one only sequences them.

use super::bounded::{prompt_cap, read_capped, too_deep, utf8, MAX_DEPTH, MAX_SCENARIO_BYTES};
use super::build::build;
use super::errors::Ctx;
use super::interpolate::interpolate;
use super::lines::path_at_line;
use super::normalize::{fingerprint_of, workload_yaml};
use super::overrides::Overrides;
use super::raw::RawScenario;
use super::{Scenario, ScenarioError};
use crate::util::redact::is_secret_name;
use std::path::Path;

/// Reads and validates a scenario file; `${VAR}` comes from the process environment.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let invalid = |line: Option<usize>, message: String| ScenarioError::Invalid {
        file: path.to_path_buf(),
        line,
        field: String::new(),
        message,
    };
    let bytes = read_capped(
        path,
        MAX_SCENARIO_BYTES,
        "a scenario is a short text file: keep prompts in prompt files (request.prompt_file, request.prompts)",
    )
    .map_err(|why| invalid(None, format!("the scenario file {why}")))?;
    let text = utf8(bytes).map_err(|(line, why)| invalid(Some(line), format!("the file {why}")))?;
    load_str(&text, path, &|name| std::env::var(name).ok())
}

/// Validates scenario text as if read from `path` (prompt files are resolved next to it).
pub fn load_str(
    text: &str,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Scenario, ScenarioError> {
    load_str_with(text, path, env, &Overrides::default())
}

/// `load_str` with command-line overrides applied to the document before validation (so they
/// act exactly as the same edit of the file; see `overrides`). The file is first checked as
/// written, so that its own mistakes are reported on their lines.
pub fn load_str_with(
    text: &str,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    overrides: &Overrides,
) -> Result<Scenario, ScenarioError> {
    // A UTF-8 byte order mark (Windows editors write one) is not part of the YAML.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let prompt_cap = prompt_cap(env);
    let early = |line: usize, message: String| {
        let cx = Ctx {
            file: path,
            text,
            secrets: Vec::new(),
            prompt_cap,
        };
        cx.err_at(Some(line), path_at_line(text, line), message)
    };
    // Before the YAML parser, whose scanner is quadratic in nesting depth.
    if let Some(line) = too_deep(text) {
        return Err(early(
            line,
            format!("nested more than {MAX_DEPTH} levels deep ([ or {{); flatten the value"),
        ));
    }
    let interp = interpolate(text, env).map_err(|(line, message)| early(line, message))?;
    let mut cx = Ctx {
        file: path,
        text: &interp.text,
        secrets: Vec::new(),
        prompt_cap,
    };
    for sub in &interp.subs {
        let at = path_at_line(text, sub.line);
        if is_secret_name(&sub.var)
            || at.starts_with("target.api_key")
            || at.starts_with("target.headers")
        {
            cx.secrets.push(sub.value.clone());
        }
    }
    let blank = |l: &str| matches!(l.trim(), "" | "---") || l.trim().starts_with('#');
    if interp.text.lines().all(blank) {
        let msg = "the file is empty; a scenario needs name, target, request and load";
        return Err(cx.err_at(None, String::new(), msg.into()));
    }
    let mut raw: RawScenario = serde_yaml::from_str(&interp.text).map_err(|e| cx.yaml_err(&e))?;
    if !overrides.is_empty() {
        let mut doc: serde_yaml::Value =
            serde_yaml::from_str(&interp.text).map_err(|e| cx.yaml_err(&e))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        overrides
            .apply(&mut doc, dir)
            .map_err(|e| cx.err_at(None, String::new(), e.to_string()))?;
        raw = serde_yaml::from_value(doc).map_err(|e| {
            let msg = format!("with the command-line overrides: {}", e);
            cx.err_at(None, String::new(), msg)
        })?;
    }
    cx.secrets
        .extend(raw.target.as_ref().and_then(|t| t.api_key.clone()));
    let mut s = build(&cx, raw, &interp)?;
    s.target.secrets = cx.secrets.iter().map(super::Secret::new).collect();
    s.fingerprint = fingerprint_of(&workload_yaml(&s));
    Ok(s)
}
