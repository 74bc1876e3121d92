//! Where `ladder check` gets its targets: a scenario file (every model of its target), the
//! flags `--base-url URL --model M [--api] [--api-key-env VAR]`, or `--from` with a Claude
//! Code `settings.json`, a Codex CLI `auth.json` or `config.toml` (a file ending in `.toml`; a
//! directory is read as Codex's home, and `--from codex` is `$CODEX_HOME`, else `~/.codex`:
//! [`codex`]; `--from claude` reads Claude Code's settings files as Claude Code merges them:
//! [`claude`]), since many users already keep base URL, key and model there. The environment
//! and file reading are passed in, so everything here is testable without touching the
//! machine.
//!
//! Claude Code's `ANTHROPIC_BASE_URL` is the API root without the version
//! (`https://api.anthropic.com`): the Anthropic SDK appends `/v1/messages`. ladder's base URLs
//! include the version and ladder appends `/messages`, so `/v1` is appended to
//! `ANTHROPIC_BASE_URL` unless its path already ends with `/v1` (then it is used as given, with
//! a note, because Claude Code itself would call `…/v1/v1/messages`). Without
//! `ANTHROPIC_BASE_URL` the base URL is `https://api.anthropic.com/v1`. Settings that the file
//! does not have are taken from the process environment, as Claude Code does.

use super::diagnosis::ApiSetting;
use crate::dialect::{Api, Family};
use crate::scenario::{
    Endpoint, LimitField, Scenario, Secret, Target, Timeouts, DEFAULT_REQUEST_ID_HEADER,
};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod claude;
mod codex;

pub use claude::{claude_base_url, HelperRunner};

pub const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com/v1";
pub const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";

/// What the user asked `ladder check` to check, typed (the command line's flags, without clap).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckInputs {
    pub scenario: Option<PathBuf>,
    pub base_url: Option<String>,
    pub model: Vec<String>,
    pub api: Option<Api>,
    pub api_key_env: Option<String>,
    pub from: Option<PathBuf>,
    /// `--profile`: the Codex profile (`[profiles.<name>]`) instead of the file's `profile`.
    pub profile: Option<String>,
    /// The project directory `--from claude` reads `.claude/` in (the working directory).
    pub project_dir: PathBuf,
    pub timeout: Duration,
    /// `--max-tokens-field`: over the scenario's `request.max_tokens_field` or the API's default.
    pub max_tokens_field: Option<LimitField>,
}

/// One target to check, with what is needed to explain failures.
#[derive(Debug, Clone)]
pub struct CheckTarget {
    /// Where it came from: the scenario file, `--base-url`, or the `--from` file.
    pub label: String,
    pub target: Target,
    /// The key as configured, sent as `api_key` or in an `authorization` header.
    pub key: Option<Secret>,
    /// Where the key comes from, for messages: `$OPENAI_API_KEY`, `env.ANTHROPIC_API_KEY in …`.
    pub key_source: String,
    /// Merged into the check request's body (the scenario's `request.extra_body`).
    pub extra_body: Map<String, Value>,
    /// The field the limit is sent under (`request.max_tokens_field`, or the API's default).
    pub max_tokens_field: LimitField,
    /// How the inputs were read (e.g. `/v1` appended), shown once before the results.
    pub notes: Vec<String>,
    /// The scenario file the target came from (for line numbers in fixes).
    pub scenario_file: Option<PathBuf>,
    /// Where the dialect was chosen (a Codex config's `wire_api`, else `target.api`/`--api`).
    pub api_setting: ApiSetting,
}

/// Bad input for `ladder check` (exit code 2).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InputError {
    #[error("nothing to check: give a scenario file, or --base-url URL --model MODEL, or --from FILE (a Claude Code settings.json, a Codex CLI auth.json or config.toml, `claude` for Claude Code's own settings, or `codex` for Codex's own)")]
    NoTarget,
    #[error("{0} needs --model: the model to ask for, e.g. --model gpt-4o-mini")]
    MissingModel(String),
    #[error("--base-url `{0}` is not a usable base URL (http or https, no query string or fragment); expected e.g. https://api.openai.com/v1")]
    BadUrl(String),
    #[error("{} `{1}` is not an http(s) URL; expected e.g. https://api.anthropic.com", .0.display())]
    BadFileUrl(PathBuf, String),
    #[error("--from {}: cannot read the file: {1}", .0.display())]
    Unreadable(PathBuf, String),
    #[error("--from {}: not JSON ({1}); --from takes a Claude Code settings.json, a Codex CLI auth.json, or a Codex config.toml (a file ending in .toml)", .0.display())]
    NotJson(PathBuf, String),
    #[error("--from {}: neither a Claude Code settings.json (with an `env` object) nor a Codex CLI auth.json (with `OPENAI_API_KEY`)", .0.display())]
    UnknownShape(PathBuf),
    #[error("--from {}: `{1}` must be a string", .0.display())]
    NotAString(PathBuf, String),
    #[error("--from {0}: no model: no env.ANTHROPIC_MODEL in {1}, and ANTHROPIC_MODEL is not set; pass --model, e.g. --model claude-sonnet-4-5")]
    NoClaudeModel(String, String),
    #[error("--from claude: no Claude Code settings found, and no ANTHROPIC_MODEL, ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in the environment; tried {0} (the user directory is {1}); run ladder from the project Claude Code runs in, set CLAUDE_CONFIG_DIR, or pass a settings file: --from PATH/settings.json")]
    NoClaudeSettings(String, String),
    #[error("--from claude: apiKeyHelper in {} gave no key: {1}; run the command yourself to see why (ladder never prints its output)", .0.display())]
    KeyHelper(PathBuf, String),
    #[error("--from {}: OPENAI_API_KEY is empty or null (signed in with a ChatGPT account?); ladder needs an API key: create one and run `codex login --with-api-key`, or use --base-url with --api-key-env", .0.display())]
    NoCodexKey(PathBuf),
    #[error("--from codex: neither CODEX_HOME nor HOME is set; pass the file itself: --from PATH/config.toml")]
    NoCodexHome,
    #[error("--from {}: no Codex configuration there (no config.toml, no auth.json: {1}); point CODEX_HOME at Codex's home, or pass --from PATH/config.toml", .0.display())]
    NoCodexConfig(PathBuf, String),
    #[error("--from {}: not TOML Codex could read ({1}); fix that line", .0.display())]
    NotToml(PathBuf, String),
    #[error("--from {}: no model: the file sets no `model`{}; add e.g. model = \"gpt-5\" to it, or pass --model", .0.display(), .1.as_ref().map(|p| format!(" (nor does [profiles.{p}])")).unwrap_or_default())]
    NoCodexModel(PathBuf, Option<String>),
    #[error("--from {}: {1} = \"{2}\", but the file has no [profiles.{2}] table (profiles in the file: {3}); fix the name or add the table", .0.display())]
    UnknownProfile(PathBuf, String, String, String),
    #[error("--from {}: {1} = \"{2}\" names no provider: the file has no [model_providers.{2}] table (tables in the file: {3}) and `{2}` is not one of Codex's built-in providers ({}); fix the id, or add the table with base_url, wire_api and env_key", .0.display(), codex::BUILT_IN.join(", "))]
    UnknownProvider(PathBuf, String, String, String),
    #[error("--from {}: {1} = \"amazon-bedrock\": Codex signs Bedrock requests with AWS SigV4, which ladder does not; check Bedrock's OpenAI-compatible endpoint with --base-url and --api-key-env instead", .0.display())]
    CodexBedrock(PathBuf, String),
    #[error("--from {}: {1} = \"{2}\" is not a wire API; write wire_api = \"responses\" (the Responses API) or \"chat\" (Chat Completions)", .0.display())]
    BadWireApi(PathBuf, String, String),
    #[error("--from {}: {1} names ${2}, which is unset or empty{3}; export {2} with the key (Codex needs it too), or pass --api-key-env VAR", .0.display())]
    CodexKeyUnset(PathBuf, String, String, String),
    #[error("--from {}: {1} `{2}` is not a usable base URL (http or https, no query string: Azure's api-version goes in query_params); expected e.g. https://api.openai.com/v1", .0.display())]
    BadFieldUrl(PathBuf, String, String),
}

/// The timeouts of a check: the target's own, none longer than `limit`.
pub fn check_timeouts(base: &Timeouts, limit: Duration) -> Timeouts {
    Timeouts {
        connect: base.connect.min(limit),
        first_token: base.first_token.min(limit),
        idle: base.idle.min(limit),
        total: base.total.min(limit),
    }
}

/// A URL as it may be shown: without its query, fragment or password (they may hold secrets).
fn shown_url(raw: &str) -> String {
    match reqwest::Url::parse(raw.trim()) {
        Ok(mut u) => {
            let hidden = u.query().is_some() || u.fragment().is_some();
            u.set_query(None);
            u.set_fragment(None);
            let _ = u.set_password(None);
            let mut s = u.to_string();
            if hidden {
                s.push_str("?…");
            }
            s
        }
        Err(_) => raw.split(['?', '#']).next().unwrap_or("").to_string(),
    }
}

fn valid_url(raw: &str) -> Option<String> {
    let u = reqwest::Url::parse(raw.trim()).ok()?;
    // A query or fragment cannot be a base URL (paths are appended to it), and a query may
    // carry a credential that must not be echoed: refuse it, as `validate` does.
    if !matches!(u.scheme(), "http" | "https")
        || u.host_str().is_none()
        || u.query().is_some()
        || u.fragment().is_some()
    {
        return None;
    }
    Some(raw.trim().trim_end_matches('/').to_string())
}

/// The target of a scenario; `--model` (when given) replaces its model list.
pub fn from_scenario(s: &Scenario, args: &CheckInputs) -> CheckTarget {
    let mut ct = from_scenario_for(s, args.timeout);
    if !args.model.is_empty() {
        ct.target.models = args.model.clone();
    }
    if let Some(f) = args.max_tokens_field {
        ct.max_tokens_field = f;
    }
    ct
}

/// The target of a scenario, checked with timeouts capped at `limit`.
pub fn from_scenario_for(s: &Scenario, limit: Duration) -> CheckTarget {
    let mut target = s.target.clone();
    target.timeouts = check_timeouts(&target.timeouts, limit);
    CheckTarget {
        label: s.path.display().to_string(),
        key: target.api_key.clone(),
        key_source: format!("target.api_key in {}", s.path.display()),
        target,
        extra_body: s.request.extra_body.clone(),
        max_tokens_field: s.request.max_tokens_field,
        notes: Vec::new(),
        scenario_file: Some(s.path.clone()),
        api_setting: ApiSetting::Target,
    }
}

/// A target read from flags or a `--from` file, not a scenario: no extra body, the limit sent
/// under `--max-tokens-field` or the dialect's default, no scenario file to point fixes at.
fn not_from_scenario(
    args: &CheckInputs,
    label: String,
    target: Target,
    (key, key_source): (Option<Secret>, String),
    notes: Vec<String>,
    api_setting: ApiSetting,
) -> CheckTarget {
    let max_tokens_field = args
        .max_tokens_field
        .unwrap_or(LimitField::default_for(target.api));
    CheckTarget {
        label,
        target,
        key,
        key_source,
        extra_body: Map::new(),
        max_tokens_field,
        notes,
        scenario_file: None,
        api_setting,
    }
}

fn flag_target(api: Api, base: String, models: Vec<String>, limit: Duration) -> Target {
    let auth = crate::scenario::Auth::default_for(api, &crate::check::url::host_of(&base));
    Target {
        api,
        endpoint: Endpoint::Url(base),
        api_key: None,
        models,
        headers: Vec::new(),
        timeouts: check_timeouts(&Timeouts::default(), limit),
        request_id_header: Some(DEFAULT_REQUEST_ID_HEADER.into()),
        tls: Default::default(),
        auth,
        api_version: None,
        secrets: Vec::new(),
        metrics: None,
    }
}

/// The target given by `--from` or `--base-url` (not a scenario), with no `apiKeyHelper` run.
pub fn from_flags(
    args: &CheckInputs,
    env: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<CheckTarget, InputError> {
    from_flags_with(args, env, read, &|_| Err("not run here".into()))
}

/// The target given by `--from` or `--base-url`; `run` runs Claude Code's `apiKeyHelper`.
pub fn from_flags_with(
    args: &CheckInputs,
    env: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
    run: HelperRunner,
) -> Result<CheckTarget, InputError> {
    if let Some(from) = &args.from {
        if from == Path::new("claude") {
            let s = claude::find(env, &args.project_dir, read)?;
            return claude::target(args, &s, env, run);
        }
        return from_file(args, from, env, read, run);
    }
    let Some(raw) = &args.base_url else {
        return Err(InputError::NoTarget);
    };
    let base = valid_url(raw).ok_or_else(|| InputError::BadUrl(shown_url(raw)))?;
    if args.model.is_empty() {
        return Err(InputError::MissingModel("--base-url".into()));
    }
    let api = args.api.unwrap_or_default();
    let var = args
        .api_key_env
        .clone()
        .unwrap_or_else(|| api.spec().family.key_env().to_string());
    let key_source = format!("${var}");
    let mut notes = Vec::new();
    let key = env(&var).map(|k| key_as_sent(&k, &key_source, &mut notes));
    let mut target = flag_target(api, base, args.model.clone(), args.timeout);
    target.api_key = key.clone();
    Ok(not_from_scenario(
        args,
        "--base-url".into(),
        target,
        (key, key_source),
        notes,
        ApiSetting::Target,
    ))
}

/// `--from`: a Claude Code settings.json, a Codex auth.json or config.toml, a directory (Codex's
/// home), or `codex` (`$CODEX_HOME`, else `~/.codex`).
fn from_file(
    args: &CheckInputs,
    from: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
    run: HelperRunner,
) -> Result<CheckTarget, InputError> {
    let keyword = from == Path::new("codex");
    let path = if keyword {
        codex::home(env)?
    } else {
        from.to_path_buf()
    };
    let (path, text) = match read(&path) {
        Ok(text) => (path, text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !keyword => {
            return Err(InputError::Unreadable(path, e.to_string()))
        }
        // A directory (or no file at Codex's home): Codex's home.
        Err(e) => codex::in_home(&path, e, read)?,
    };
    if path.extension().is_some_and(|x| x == "toml") {
        return codex::config(args, &path, &text, env, read);
    }
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| InputError::NotJson(path.clone(), e.to_string()))?;
    if json.get("env").is_some_and(Value::is_object) || json.get("apiKeyHelper").is_some() {
        return claude::target(args, &claude::Settings::file(&path, &json), env, run);
    }
    if let Some(obj) = json
        .as_object()
        .filter(|o| o.contains_key("OPENAI_API_KEY") || o.contains_key("tokens"))
    {
        return codex_auth(args, &path, obj);
    }
    Err(InputError::UnknownShape(path))
}

/// The API key of a Codex `auth.json` (`OPENAI_API_KEY`; null after a ChatGPT sign-in).
fn auth_json_key(path: &Path, obj: &Map<String, Value>) -> Result<String, InputError> {
    match obj.get("OPENAI_API_KEY") {
        Some(Value::String(k)) if !k.trim().is_empty() => Ok(k.clone()),
        Some(Value::String(_)) | Some(Value::Null) | None => {
            Err(InputError::NoCodexKey(path.to_path_buf()))
        }
        Some(_) => Err(InputError::NotAString(
            path.to_path_buf(),
            "OPENAI_API_KEY".into(),
        )),
    }
}

fn codex_auth(
    args: &CheckInputs,
    path: &Path,
    obj: &Map<String, Value>,
) -> Result<CheckTarget, InputError> {
    let key = auth_json_key(path, obj)?;
    let base = match &args.base_url {
        Some(raw) => valid_url(raw).ok_or_else(|| InputError::BadUrl(shown_url(raw)))?,
        None => OPENAI_DEFAULT_BASE.to_string(),
    };
    if args.model.is_empty() {
        return Err(InputError::MissingModel(format!(
            "--from {} (a Codex auth.json has no model)",
            path.display()
        )));
    }
    let api = args.api.unwrap_or(Family::OpenAi.default_api());
    let mut target = flag_target(api, base, args.model.clone(), args.timeout);
    let key_source = format!("OPENAI_API_KEY in {}", path.display());
    let mut notes = Vec::new();
    let key = key_as_sent(&key, &key_source, &mut notes);
    target.api_key = Some(key.clone());
    Ok(not_from_scenario(
        args,
        path.display().to_string(),
        target,
        (Some(key), key_source),
        notes,
        ApiSetting::Target,
    ))
}

/// The key `run` would send for `raw` (the one rule, [`Secret::api_key`]), with a note when
/// the whitespace around it was dropped: the user's other clients may send it as it is.
fn key_as_sent(raw: &str, source: &str, notes: &mut Vec<String>) -> Secret {
    if Secret::has_whitespace_around(raw) && !raw.trim().is_empty() {
        notes.push(format!(
            "the API key from {source} has whitespace around it (a trailing newline?); ladder sends it without, in `check` as in `run`, but other clients may send it as it is"
        ));
    }
    Secret::api_key(raw)
}

#[cfg(test)]
mod tests;
