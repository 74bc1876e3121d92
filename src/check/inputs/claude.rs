//! Claude Code's settings for `ladder check --from`: one settings.json given as a file, or
//! `--from claude`, which finds them as Claude Code does. Claude Code merges its settings files,
//! the most specific first: the project's local `.claude/settings.local.json`, the project's
//! `.claude/settings.json`, then the user's `settings.json` in `$CLAUDE_CONFIG_DIR`, else in
//! `~/.claude`. Each key of their `env` object comes from the first file that sets it; the
//! process environment fills in what no file sets (Claude Code applies the files' `env` over
//! the environment it was started with). The credential is the first of
//! `ANTHROPIC_AUTH_TOKEN` (sent as `Authorization: Bearer`), `ANTHROPIC_API_KEY` and the
//! `apiKeyHelper` command's output, Claude Code's own order; the helper is run only for
//! `--from claude`, through the runner the caller passes (`app::check` runs it with a
//! timeout), and its output is a secret like any key.

use super::{
    flag_target, key_as_sent, not_from_scenario, shown_url, valid_url, CheckInputs, CheckTarget,
    InputError, ANTHROPIC_DEFAULT_BASE,
};
use crate::check::diagnosis::ApiSetting;
use crate::dialect::{Family, KeyHeader};
use crate::scenario::{Header, Secret};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Runs an `apiKeyHelper` command; its stdout is the key, the error says why it gave none
/// (never with its output).
pub type HelperRunner<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// Claude Code's settings as merged from one or more files.
#[derive(Debug, Default)]
pub struct Settings {
    /// The `env` values, each from the most specific file that sets it.
    env: Map<String, Value>,
    /// The file each `env` key came from.
    source: HashMap<String, PathBuf>,
    /// `apiKeyHelper` and its file, when one sets it.
    helper: Option<(String, PathBuf)>,
    /// Where the settings were read: the file, or `claude`.
    label: String,
    /// The files read, most specific first (for messages).
    files: Vec<PathBuf>,
    /// Every path looked at (for errors).
    tried: Vec<PathBuf>,
    /// `--from claude` (the helper may run).
    keyword: bool,
}

impl Settings {
    /// The settings of one file.
    pub fn file(path: &Path, json: &Value) -> Settings {
        let mut s = Settings {
            label: path.display().to_string(),
            tried: vec![path.to_path_buf()],
            ..Settings::default()
        };
        s.merge(path, json);
        s
    }

    /// Adds a less specific file: it sets only what no file before it set.
    fn merge(&mut self, path: &Path, json: &Value) {
        self.files.push(path.to_path_buf());
        if let Some(env) = json.get("env").and_then(Value::as_object) {
            for (k, v) in env {
                if !self.env.contains_key(k) {
                    self.env.insert(k.clone(), v.clone());
                    self.source.insert(k.clone(), path.to_path_buf());
                }
            }
        }
        if self.helper.is_none() {
            if let Some(h) = json.get("apiKeyHelper").and_then(Value::as_str) {
                self.helper = Some((h.to_string(), path.to_path_buf()));
            }
        }
    }

    fn source_of(&self, name: &str) -> PathBuf {
        self.source
            .get(name)
            .cloned()
            .unwrap_or_else(|| PathBuf::from(&self.label))
    }

    /// The files read (or tried, when none was), for messages.
    fn where_(&self) -> String {
        let list = if self.files.is_empty() {
            &self.tried
        } else {
            &self.files
        };
        join(list)
    }
}

fn join(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Claude Code's settings files, most specific first: the project's local and shared files
/// under `project`, then the user's (`$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`).
pub fn paths(env: &dyn Fn(&str) -> Option<String>, project: &Path) -> Vec<PathBuf> {
    let mut out = vec![
        project.join(".claude").join("settings.local.json"),
        project.join(".claude").join("settings.json"),
    ];
    let user = match env("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => env("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".claude")),
    };
    out.extend(user.map(|u| u.join("settings.json")));
    out
}

/// `--from claude`: the settings files Claude Code would read, merged.
pub fn find(
    env: &dyn Fn(&str) -> Option<String>,
    project: &Path,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Settings, InputError> {
    let tried = paths(env, project);
    let mut s = Settings {
        label: "claude".into(),
        keyword: true,
        ..Settings::default()
    };
    for path in &tried {
        let text = match read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(InputError::Unreadable(path.clone(), e.to_string())),
        };
        let json: Value = serde_json::from_str(&text)
            .map_err(|e| InputError::NotJson(path.clone(), e.to_string()))?;
        s.merge(path, &json);
    }
    let user_dir = if env("CLAUDE_CONFIG_DIR").is_some_and(|d| !d.is_empty()) {
        "$CLAUDE_CONFIG_DIR"
    } else {
        "~/.claude (CLAUDE_CONFIG_DIR unset)"
    };
    s.tried = tried;
    let from_env = [
        "ANTHROPIC_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
    ]
    .iter()
    .any(|k| env(k).is_some_and(|v| !v.is_empty()));
    if s.files.is_empty() && !from_env {
        return Err(InputError::NoClaudeSettings(
            join(&s.tried),
            user_dir.into(),
        ));
    }
    Ok(s)
}

/// ladder's base URL for Claude Code's `ANTHROPIC_BASE_URL`, and a note saying what was done.
pub fn claude_base_url(raw: &str) -> (String, String) {
    let trimmed = raw.trim().trim_end_matches('/');
    let path_ends_v1 = reqwest::Url::parse(trimmed)
        .map(|u| u.path().trim_end_matches('/').ends_with("/v1"))
        .unwrap_or(false);
    if path_ends_v1 {
        let note = format!(
            "ANTHROPIC_BASE_URL {trimmed} already ends with /v1: checking {trimmed}/messages. Claude Code appends /v1/messages itself and calls {trimmed}/v1/messages; if Claude Code fails, remove the /v1 from ANTHROPIC_BASE_URL"
        );
        (trimmed.to_string(), note)
    } else {
        let note = format!(
            "base URL {trimmed}/v1: ANTHROPIC_BASE_URL with /v1 appended (Claude Code calls {trimmed}/v1/messages; ladder's base URLs include the /v1)"
        );
        (format!("{trimmed}/v1"), note)
    }
}

/// A string of the settings' `env`, else the process environment; with its source.
fn setting(
    s: &Settings,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(String, String)>, InputError> {
    match s.env.get(name) {
        Some(Value::String(v)) if !v.is_empty() => Ok(Some((
            v.clone(),
            format!("env.{name} in {}", s.source_of(name).display()),
        ))),
        Some(Value::String(_)) | Some(Value::Null) | None => Ok(env(name)
            .filter(|v| !v.is_empty())
            .map(|v| (v, format!("${name}")))),
        Some(_) => Err(InputError::NotAString(
            s.source_of(name),
            format!("env.{name}"),
        )),
    }
}

/// The key from `apiKeyHelper`, when Claude Code would use it (no token nor key set).
fn helper_key(
    s: &Settings,
    run: HelperRunner,
    notes: &mut Vec<String>,
) -> Result<Option<(String, String)>, InputError> {
    let Some((cmd, file)) = &s.helper else {
        return Ok(None);
    };
    if !s.keyword {
        notes.push(format!(
            "apiKeyHelper in {} is run only for `--from claude`: this check sends no key from it",
            file.display()
        ));
        return Ok(None);
    }
    let key = run(cmd).map_err(|why| InputError::KeyHelper(file.clone(), why))?;
    Ok(Some((key, format!("apiKeyHelper in {}", file.display()))))
}

/// The target Claude Code's settings describe.
pub fn target(
    args: &CheckInputs,
    s: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    run: HelperRunner,
) -> Result<CheckTarget, InputError> {
    let mut notes = Vec::new();
    if s.keyword {
        notes.push(format!(
            "Claude Code's settings: {} (the first that sets a value wins)",
            s.where_()
        ));
    }
    let base = match (&args.base_url, setting(s, "ANTHROPIC_BASE_URL", env)?) {
        (Some(raw), _) => valid_url(raw).ok_or_else(|| InputError::BadUrl(shown_url(raw)))?,
        (None, Some((raw, _))) => {
            if valid_url(&raw).is_none() {
                return Err(InputError::BadFileUrl(
                    s.source_of("ANTHROPIC_BASE_URL"),
                    raw,
                ));
            }
            let (base, note) = claude_base_url(&raw);
            notes.push(note);
            base
        }
        (None, None) => ANTHROPIC_DEFAULT_BASE.to_string(),
    };
    let models = if !args.model.is_empty() {
        args.model.clone()
    } else {
        match setting(s, "ANTHROPIC_MODEL", env)? {
            Some((m, _)) => vec![m],
            None => return Err(InputError::NoClaudeModel(s.label.clone(), s.where_())),
        }
    };
    let api = args.api.unwrap_or(Family::Anthropic.default_api());
    let mut target = flag_target(api, base, models, args.timeout);
    let token = setting(s, "ANTHROPIC_AUTH_TOKEN", env)?;
    let api_key = setting(s, "ANTHROPIC_API_KEY", env)?;
    let (key, key_source) = match (token, api_key) {
        (Some((t, src)), other) => {
            if other.is_some() {
                notes.push("both ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are set: checking ANTHROPIC_AUTH_TOKEN, which Claude Code uses first".into());
            }
            let t = key_as_sent(&t, &src, &mut notes);
            // Claude Code sends ANTHROPIC_AUTH_TOKEN as `Authorization: Bearer`, not `x-api-key`.
            if api.spec().key_header == KeyHeader::XApiKey {
                target.headers.push(Header {
                    name: "authorization".into(),
                    value: Secret::new(format!("Bearer {}", t.expose())),
                    secret: true,
                });
            } else {
                target.api_key = Some(t.clone());
            }
            (Some(t), src)
        }
        (None, Some((k, src))) => {
            let k = key_as_sent(&k, &src, &mut notes);
            target.api_key = Some(k.clone());
            (Some(k), src)
        }
        (None, None) => match helper_key(s, run, &mut notes)? {
            Some((k, src)) => {
                let k = key_as_sent(&k, &src, &mut notes);
                target.api_key = Some(k.clone());
                (Some(k), src)
            }
            None => (
                None,
                format!(
                    "env.ANTHROPIC_API_KEY / env.ANTHROPIC_AUTH_TOKEN in {}",
                    s.where_()
                ),
            ),
        },
    };
    Ok(not_from_scenario(
        args,
        s.label.clone(),
        target,
        (key, key_source),
        notes,
        ApiSetting::Target,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::from_flags_with;
    use super::*;
    use crate::scenario::Endpoint;
    use std::time::Duration;

    fn args() -> CheckInputs {
        CheckInputs {
            scenario: None,
            base_url: None,
            model: Vec::new(),
            api: None,
            api_key_env: None,
            from: Some("claude".into()),
            profile: None,
            project_dir: PathBuf::from("/proj"),
            timeout: Duration::from_secs(20),
            max_tokens_field: None,
        }
    }

    /// A file system of `files`; every other path is missing.
    fn fs(files: Vec<(&'static str, String)>) -> impl Fn(&Path) -> std::io::Result<String> {
        move |p: &Path| {
            files
                .iter()
                .find(|(f, _)| Path::new(f) == p)
                .map(|(_, t)| t.clone())
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "missing"))
        }
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn no_helper(_: &str) -> Result<String, String> {
        panic!("the helper must not run")
    }

    fn three_files() -> Vec<(&'static str, String)> {
        let user = serde_json::json!({"env": {
            "ANTHROPIC_BASE_URL": "http://user.example:1",
            "ANTHROPIC_MODEL": "user-model",
            "ANTHROPIC_API_KEY": "sk-ant-user-key",
        }});
        let project = serde_json::json!({"env": {
            "ANTHROPIC_BASE_URL": "http://project.example:2",
            "ANTHROPIC_MODEL": "project-model",
        }});
        let local = serde_json::json!({"env": {"ANTHROPIC_MODEL": "local-model"}});
        vec![
            ("/home/u/.claude/settings.json", user.to_string()),
            ("/proj/.claude/settings.json", project.to_string()),
            ("/proj/.claude/settings.local.json", local.to_string()),
        ]
    }

    #[test]
    fn each_value_comes_from_the_most_specific_file_that_sets_it() {
        let env = env_of(&[("HOME", "/home/u"), ("ANTHROPIC_MODEL", "env-model")]);
        let t = from_flags_with(&args(), &env, &fs(three_files()), &no_helper).unwrap();
        assert_eq!(t.target.models, vec!["local-model"]);
        let Endpoint::Url(base) = &t.target.endpoint else {
            panic!("sim")
        };
        assert_eq!(base, "http://project.example:2/v1");
        assert_eq!(
            t.key_source,
            "env.ANTHROPIC_API_KEY in /home/u/.claude/settings.json"
        );
        assert_eq!(t.key.as_ref().map(|k| k.expose()), Some("sk-ant-user-key"));
        assert!(t.notes[0].contains(
            "/proj/.claude/settings.local.json, /proj/.claude/settings.json, /home/u/.claude/settings.json"
        ));
    }

    #[test]
    fn claude_config_dir_replaces_the_user_directory() {
        let env = env_of(&[("HOME", "/home/u"), ("CLAUDE_CONFIG_DIR", "/cfg")]);
        let read = fs(vec![(
            "/cfg/settings.json",
            r#"{"env": {"ANTHROPIC_MODEL": "cfg-model"}}"#.into(),
        )]);
        let t = from_flags_with(&args(), &env, &read, &no_helper).unwrap();
        assert_eq!(t.target.models, vec!["cfg-model"]);
        // ~/.claude is not read when CLAUDE_CONFIG_DIR is set.
        let read = fs(three_files().into_iter().take(1).collect());
        let e = from_flags_with(&args(), &env, &read, &no_helper).unwrap_err();
        assert!(matches!(e, InputError::NoClaudeSettings(..)), "{e}");
    }

    #[test]
    fn nothing_found_lists_every_path_tried() {
        let env = env_of(&[("HOME", "/home/u")]);
        let e = from_flags_with(&args(), &env, &fs(vec![]), &no_helper).unwrap_err();
        let text = e.to_string();
        for p in [
            "/proj/.claude/settings.local.json",
            "/proj/.claude/settings.json",
            "/home/u/.claude/settings.json",
        ] {
            assert!(text.contains(p), "{text}");
        }
        // A file without a model names the files read.
        let read = fs(vec![(
            "/proj/.claude/settings.json",
            r#"{"env": {"ANTHROPIC_API_KEY": "k"}}"#.into(),
        )]);
        let e = from_flags_with(&args(), &env, &read, &no_helper).unwrap_err();
        assert_eq!(
            e,
            InputError::NoClaudeModel("claude".into(), "/proj/.claude/settings.json".into())
        );
    }

    #[test]
    fn the_key_helper_runs_only_for_from_claude_and_after_token_and_key() {
        let env = env_of(&[("HOME", "/home/u")]);
        let settings = r#"{"apiKeyHelper": "vault read key", "env": {"ANTHROPIC_MODEL": "m"}}"#;
        let read = fs(vec![("/home/u/.claude/settings.json", settings.into())]);
        let helper = |cmd: &str| {
            assert_eq!(cmd, "vault read key");
            Ok("sk-ant-from-helper".to_string())
        };
        let t = from_flags_with(&args(), &env, &read, &helper).unwrap();
        assert_eq!(
            t.key.as_ref().map(|k| k.expose()),
            Some("sk-ant-from-helper")
        );
        assert_eq!(
            t.key_source,
            "apiKeyHelper in /home/u/.claude/settings.json"
        );
        let failing = |_: &str| Err("it exited with exit status: 1".to_string());
        let e = from_flags_with(&args(), &env, &read, &failing).unwrap_err();
        assert!(e
            .to_string()
            .contains("apiKeyHelper in /home/u/.claude/settings.json gave no key"));
        // A key in the settings comes first: the helper is not run.
        let with_key =
            r#"{"apiKeyHelper": "x", "env": {"ANTHROPIC_MODEL": "m", "ANTHROPIC_API_KEY": "k"}}"#;
        let read = fs(vec![("/home/u/.claude/settings.json", with_key.into())]);
        from_flags_with(&args(), &env, &read, &no_helper).unwrap();
        // The same file given by path: not run, and said so.
        let mut a = args();
        a.from = Some("/s.json".into());
        let read = fs(vec![("/s.json", settings.into())]);
        let t = from_flags_with(&a, &env, &read, &no_helper).unwrap();
        assert_eq!(t.key, None);
        assert!(t
            .notes
            .iter()
            .any(|n| n.contains("run only for `--from claude`")));
    }
}
