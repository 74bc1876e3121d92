//! `ladder check --from codex`: Codex CLI's `config.toml` as a check target, read the way Codex
//! reads it, so that the check asks the server what Codex would ask. The profile (`--profile`,
//! else the file's top-level `profile`) is a `[profiles.<name>]` table whose `model` and
//! `model_provider` come before the top-level ones; the provider (default `openai`) is one of
//! Codex's built-ins or a `[model_providers.<id>]` table. The built-ins, as Codex defines them
//! (a table with a built-in's id is ignored, as Codex ignores it):
//! - `openai`: the top-level `openai_base_url`, else `$OPENAI_BASE_URL`, else
//!   https://api.openai.com/v1; Responses; the key from the `auth.json` next to the file
//!   (`codex login --with-api-key`), else `$OPENAI_API_KEY`; `OpenAI-Organization` and
//!   `OpenAI-Project` from `$OPENAI_ORGANIZATION` and `$OPENAI_PROJECT`.
//! - `ollama` (http://localhost:11434/v1) and `lmstudio` (http://localhost:1234/v1): Responses,
//!   no key; `$CODEX_OSS_BASE_URL` or `$CODEX_OSS_PORT` move them, as in Codex.
//! - `oss`: older Codex's id for Ollama, on Chat Completions.
//!
//! A provider table gives `base_url` (without one, the OpenAI API, as in Codex), `wire_api`
//! (`responses`, the default, is `openai-responses`; `chat`, which only older Codex releases
//! take, is `openai-chat`), the key (`experimental_bearer_token`, else the variable `env_key`
//! names, which must be set, else `auth.json` with `requires_openai_auth = true`),
//! `query_params` (`api-version` is sent as `target.api_version`; other parameters cannot be,
//! and a note names them), `http_headers` and `env_http_headers` (sent; a variable that is
//! unset or empty sends no header, as in Codex). Not used: `auth` (a command that prints a
//! token: not run, a note says so), retries and timeouts. Flags (`--model`, `--base-url`,
//! `--api`, `--api-key-env`) come before the file.

use super::{
    flag_target, key_as_sent, not_from_scenario, shown_url, valid_url, CheckInputs, CheckTarget,
    InputError, OPENAI_DEFAULT_BASE,
};
use crate::check::diagnosis::ApiSetting;
use crate::dialect::Api;
use crate::scenario::{Header, Secret};
use crate::util::redact::is_secret_name;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;
type Read<'a> = &'a dyn Fn(&Path) -> std::io::Result<String>;

/// Codex's built-in providers' ids (what [`built_in`] knows).
pub const BUILT_IN: [&str; 4] = ["openai", "ollama", "lmstudio", "oss"];
const OLLAMA_PORT: u16 = 11434;
const LMSTUDIO_PORT: u16 = 1234;

/// The part of `config.toml` a check needs; everything else in the file is Codex's own.
#[derive(Default, Deserialize)]
struct Config {
    model: Option<String>,
    model_provider: Option<String>,
    profile: Option<String>,
    openai_base_url: Option<String>,
    #[serde(default)]
    model_providers: BTreeMap<String, Provider>,
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

#[derive(Default, Deserialize)]
struct Profile {
    model: Option<String>,
    model_provider: Option<String>,
}

/// A `[model_providers.<id>]` table (no `Debug`: it may hold a token).
#[derive(Default, Clone, Deserialize)]
struct Provider {
    base_url: Option<String>,
    env_key: Option<String>,
    env_key_instructions: Option<String>,
    experimental_bearer_token: Option<String>,
    wire_api: Option<String>,
    #[serde(default)]
    query_params: BTreeMap<String, String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    #[serde(default)]
    requires_openai_auth: bool,
    auth: Option<IgnoredAny>,
}

/// The provider a check uses, with the names its fields have in messages.
struct Resolved {
    provider: Provider,
    /// `model_providers.<id>`, or `the built-in provider `<id>``.
    table: String,
    /// Where the base URL came from (`model_providers.x.base_url`, `$OPENAI_BASE_URL`).
    base_field: String,
    built_in: bool,
}

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub(super) fn home(env: Env) -> Result<PathBuf, InputError> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(h) = set("CODEX_HOME") {
        return Ok(PathBuf::from(h));
    }
    set("HOME")
        .map(|h| Path::new(&h).join(".codex"))
        .ok_or(InputError::NoCodexHome)
}

/// A directory given to `--from` (or `codex`): its `config.toml`, or Codex's defaults (an empty
/// file) when the directory has only an `auth.json`, as Codex runs without a `config.toml`.
pub(super) fn in_home(
    dir: &Path,
    dir_error: std::io::Error,
    read: Read,
) -> Result<(PathBuf, String), InputError> {
    let config = dir.join("config.toml");
    match read(&config) {
        Ok(text) => Ok((config, text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if read(&dir.join("auth.json")).is_ok() {
                Ok((config, String::new()))
            } else {
                Err(InputError::NoCodexConfig(
                    dir.to_path_buf(),
                    dir_error.to_string(),
                ))
            }
        }
        Err(e) => Err(InputError::Unreadable(config, e.to_string())),
    }
}

/// The check target of a Codex `config.toml` (`text`, read from `path`).
pub(super) fn config(
    args: &CheckInputs,
    path: &Path,
    text: &str,
    env: Env,
    read: Read,
) -> Result<CheckTarget, InputError> {
    let cfg: Config = toml::from_str(text)
        .map_err(|e| InputError::NotToml(path.to_path_buf(), toml_error(text, &e)))?;
    let file = || path.to_path_buf();
    let (profile_name, profile) = profile(args, path, &cfg)?;
    // A profile's value first, then the top-level one; with the field's name for messages.
    let pick = |field: &str, of_profile: Option<&String>, top: &Option<String>| {
        let set = |v: &&String| !v.trim().is_empty();
        match (of_profile.filter(set), &profile_name) {
            (Some(v), Some(p)) => Some((v.trim().to_string(), format!("profiles.{p}.{field}"))),
            _ => top
                .as_ref()
                .filter(set)
                .map(|v| (v.trim().to_string(), field.to_string())),
        }
    };
    let models = if !args.model.is_empty() {
        args.model.clone()
    } else {
        match pick("model", profile.and_then(|p| p.model.as_ref()), &cfg.model) {
            Some((m, _)) => vec![m],
            None => return Err(InputError::NoCodexModel(file(), profile_name.clone())),
        }
    };
    let (id, id_field) = pick(
        "model_provider",
        profile.and_then(|p| p.model_provider.as_ref()),
        &cfg.model_provider,
    )
    .unwrap_or_else(|| ("openai".into(), "model_provider".into()));
    let mut notes = Vec::new();
    let r = provider(&cfg, path, &id, &id_field, env, &mut notes)?;
    let api = api(args, path, &r, &mut notes)?;
    let base = match (&args.base_url, &r.provider.base_url) {
        (Some(raw), _) => valid_url(raw).ok_or_else(|| InputError::BadUrl(shown_url(raw)))?,
        (None, Some(raw)) => valid_url(raw)
            .ok_or_else(|| InputError::BadFieldUrl(file(), r.base_field.clone(), shown_url(raw)))?,
        (None, None) => {
            notes.push(format!(
                "{} has no base_url: checking {OPENAI_DEFAULT_BASE}, as Codex would",
                r.table
            ));
            OPENAI_DEFAULT_BASE.to_string()
        }
    };
    let (key, key_source) = key(args, path, &r, env, read, &mut notes)?;
    let mut target = flag_target(api, base, models, args.timeout);
    target.api_key = key.clone();
    target.api_version = api_version(&r, &mut notes);
    target.headers = headers(&r, env, &mut notes);
    let via = match &profile_name {
        Some(p) => format!("profile `{p}`, "),
        None => String::new(),
    };
    let wire = match args.api {
        Some(_) => format!("api {} (--api)", api.as_str()),
        None => format!(
            "wire_api {} → api {}",
            r.provider.wire_api.as_deref().unwrap_or("responses"),
            api.as_str()
        ),
    };
    notes.insert(
        0,
        format!(
            "Codex config {}: {via}provider `{id}` ({}), {wire}",
            path.display(),
            if r.built_in {
                "built in"
            } else {
                r.table.as_str()
            }
        ),
    );
    let setting = api_setting(args, path, &id, &r);
    Ok(not_from_scenario(
        args,
        path.display().to_string(),
        target,
        (key, key_source),
        notes,
        setting,
    ))
}

/// Where the dialect was chosen: the provider's `wire_api` in the file, unless `--api` said.
fn api_setting(args: &CheckInputs, path: &Path, id: &str, r: &Resolved) -> ApiSetting {
    match args.api {
        Some(_) => ApiSetting::Target,
        None => ApiSetting::Codex {
            config: path.to_path_buf(),
            provider: id.to_string(),
            built_in: r.built_in,
        },
    }
}

/// The profile in use (`--profile`, else the file's `profile`) and its table.
fn profile<'c>(
    args: &CheckInputs,
    path: &Path,
    cfg: &'c Config,
) -> Result<(Option<String>, Option<&'c Profile>), InputError> {
    let (name, field) = match (&args.profile, &cfg.profile) {
        (Some(p), _) => (p.trim(), "--profile"),
        (None, Some(p)) if !p.trim().is_empty() => (p.trim(), "profile"),
        (None, _) => return Ok((None, None)),
    };
    match cfg.profiles.get(name) {
        Some(p) => Ok((Some(name.to_string()), Some(p))),
        None => Err(InputError::UnknownProfile(
            path.to_path_buf(),
            field.into(),
            name.into(),
            listed(cfg.profiles.keys()),
        )),
    }
}

fn listed<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&str> = names.map(String::as_str).collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(", ")
    }
}

/// The provider `id` names: a built-in, else the file's table.
fn provider(
    cfg: &Config,
    path: &Path,
    id: &str,
    field: &str,
    env: Env,
    notes: &mut Vec<String>,
) -> Result<Resolved, InputError> {
    if id == "amazon-bedrock" {
        return Err(InputError::CodexBedrock(path.to_path_buf(), field.into()));
    }
    if let Some(r) = built_in(id, cfg, path, env) {
        if cfg.model_providers.contains_key(id) {
            notes.push(format!(
                "[model_providers.{id}] in {} is ignored: `{id}` is one of Codex's built-in providers, which Codex does not let a table replace; give the table another id and set model_provider to it",
                path.display()
            ));
        }
        return Ok(r);
    }
    match cfg.model_providers.get(id) {
        Some(p) => Ok(Resolved {
            provider: p.clone(),
            table: format!("model_providers.{id}"),
            base_field: format!("model_providers.{id}.base_url"),
            built_in: false,
        }),
        None => Err(InputError::UnknownProvider(
            path.to_path_buf(),
            field.into(),
            id.into(),
            listed(cfg.model_providers.keys()),
        )),
    }
}

/// One of Codex's built-in providers, as Codex defines it.
fn built_in(id: &str, cfg: &Config, path: &Path, env: Env) -> Option<Resolved> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let oss = |port: u16, wire: &str| {
        let (base, field) = match set("CODEX_OSS_BASE_URL") {
            Some(u) => (u, "$CODEX_OSS_BASE_URL".to_string()),
            None => {
                let port = set("CODEX_OSS_PORT")
                    .and_then(|p| p.trim().parse::<u16>().ok())
                    .unwrap_or(port);
                (
                    format!("http://localhost:{port}/v1"),
                    format!("{id} built in"),
                )
            }
        };
        (
            Provider {
                base_url: Some(base),
                wire_api: Some(wire.into()),
                ..Provider::default()
            },
            field,
        )
    };
    let (provider, base_field) = match id {
        "openai" => {
            let (base, field) = match (cfg.openai_base_url.clone(), set("OPENAI_BASE_URL")) {
                (Some(u), _) if !u.trim().is_empty() => {
                    (u, format!("openai_base_url in {}", path.display()))
                }
                (_, Some(u)) => (u, "$OPENAI_BASE_URL".to_string()),
                _ => (OPENAI_DEFAULT_BASE.to_string(), "openai built in".into()),
            };
            let headers = [
                ("OpenAI-Organization", "OPENAI_ORGANIZATION"),
                ("OpenAI-Project", "OPENAI_PROJECT"),
            ];
            (
                Provider {
                    base_url: Some(base),
                    wire_api: Some("responses".into()),
                    requires_openai_auth: true,
                    env_http_headers: headers
                        .iter()
                        .map(|(h, v)| (h.to_string(), v.to_string()))
                        .collect(),
                    ..Provider::default()
                },
                field,
            )
        }
        "ollama" => oss(OLLAMA_PORT, "responses"),
        "lmstudio" => oss(LMSTUDIO_PORT, "responses"),
        "oss" => oss(OLLAMA_PORT, "chat"),
        _ => return None,
    };
    Some(Resolved {
        provider,
        table: format!("the built-in provider `{id}`"),
        base_field,
        built_in: true,
    })
}

/// The dialect: `--api`, else the provider's `wire_api` (default `responses`, as in Codex).
fn api(
    args: &CheckInputs,
    path: &Path,
    r: &Resolved,
    notes: &mut Vec<String>,
) -> Result<Api, InputError> {
    if let Some(a) = args.api {
        return Ok(a);
    }
    let wire = r.provider.wire_api.as_deref().map(str::trim);
    let field = format!("{}.wire_api", r.table);
    if !r.built_in {
        match wire {
            None => notes.push(format!(
                "{field} is not set: checking the Responses API, Codex's default (Codex releases before the Responses-only ones defaulted to chat: if yours is one, pass --api openai-chat)"
            )),
            Some("chat") => notes.push(format!(
                "{field} = \"chat\": checking Chat Completions as the file says; current Codex releases refuse \"chat\" and speak only the Responses API (wire_api = \"responses\")"
            )),
            Some(_) => {}
        }
    }
    let wire = wire.unwrap_or("responses");
    Api::from_codex_wire_api(wire)
        .ok_or_else(|| InputError::BadWireApi(path.to_path_buf(), field, wire.to_string()))
}

/// The key, its source for messages: `--api-key-env`, the provider's bearer token, its
/// `env_key` (which must be set), or `auth.json` for a provider that signs in as OpenAI.
fn key(
    args: &CheckInputs,
    path: &Path,
    r: &Resolved,
    env: Env,
    read: Read,
    notes: &mut Vec<String>,
) -> Result<(Option<Secret>, String), InputError> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(var) = &args.api_key_env {
        let src = format!("${var}");
        return Ok((set(var).map(|k| key_as_sent(&k, &src, notes)), src));
    }
    let p = &r.provider;
    if let Some(t) = p
        .experimental_bearer_token
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        let src = format!(
            "{}.experimental_bearer_token in {}",
            r.table,
            path.display()
        );
        return Ok((Some(key_as_sent(t, &src, notes)), src));
    }
    if let Some(var) = p.env_key.as_deref().map(str::trim) {
        let src = format!("${var} ({}.env_key)", r.table);
        return match set(var) {
            Some(k) => Ok((Some(key_as_sent(&k, &src, notes)), src)),
            None => Err(InputError::CodexKeyUnset(
                path.to_path_buf(),
                format!("{}.env_key", r.table),
                var.to_string(),
                p.env_key_instructions
                    .as_deref()
                    .map(|i| format!(" ({})", i.trim()))
                    .unwrap_or_default(),
            )),
        };
    }
    if p.requires_openai_auth {
        return openai_auth(path, env, read, notes);
    }
    if p.auth.is_some() {
        notes.push(format!(
            "{}.auth (a command that prints the token) is not run by ladder: put the token in a variable and pass --api-key-env VAR",
            r.table
        ));
    }
    // Said as where a key would go: "set … to your API key".
    Ok((
        None,
        format!(
            "a variable named by {}.env_key in {}",
            r.table,
            path.display()
        ),
    ))
}

/// A provider that signs in as OpenAI: the `auth.json` next to the file, else `$OPENAI_API_KEY`.
fn openai_auth(
    path: &Path,
    env: Env,
    read: Read,
    notes: &mut Vec<String>,
) -> Result<(Option<Secret>, String), InputError> {
    let auth = path.with_file_name("auth.json");
    let from_env = env("OPENAI_API_KEY").filter(|v| !v.trim().is_empty());
    let signed_in = match read(&auth) {
        Ok(text) => {
            let json: Value = serde_json::from_str(&text)
                .map_err(|e| InputError::NotJson(auth.clone(), e.to_string()))?;
            let obj = json.as_object().cloned().unwrap_or_default();
            match super::auth_json_key(&auth, &obj) {
                Ok(k) => {
                    let src = format!("OPENAI_API_KEY in {}", auth.display());
                    return Ok((Some(key_as_sent(&k, &src, notes)), src));
                }
                Err(InputError::NoCodexKey(_)) if from_env.is_some() => true,
                Err(e) => return Err(e),
            }
        }
        Err(_) => false,
    };
    match from_env {
        Some(k) => {
            let src = "$OPENAI_API_KEY".to_string();
            notes.push(if signed_in {
                format!(
                    "{} holds no API key (a ChatGPT sign-in): using $OPENAI_API_KEY",
                    auth.display()
                )
            } else {
                format!("no {}: using $OPENAI_API_KEY", auth.display())
            });
            Ok((Some(key_as_sent(&k, &src, notes)), src))
        }
        None => Ok((
            None,
            format!(
                "$OPENAI_API_KEY (or OPENAI_API_KEY in {}, written by codex login --with-api-key)",
                auth.display()
            ),
        )),
    }
}

/// `query_params`: `api-version` as the target's; the others named in a note.
fn api_version(r: &Resolved, notes: &mut Vec<String>) -> Option<String> {
    let q = &r.provider.query_params;
    let others: Vec<&str> = q
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "api-version")
        .collect();
    if !others.is_empty() {
        notes.push(format!(
            "{}.query_params: {} not sent (ladder's requests carry only api-version); Codex sends them",
            r.table,
            others.join(", ")
        ));
    }
    q.get("api-version")
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `http_headers`, then `env_http_headers` whose variable is set and not empty, as Codex sends
/// them; one Codex could not send is left out, with a note.
fn headers(r: &Resolved, env: Env, notes: &mut Vec<String>) -> Vec<Header> {
    let fixed = r
        .provider
        .http_headers
        .iter()
        .map(|(name, value)| (name, value.clone(), is_secret_name(name), "http_headers"));
    let from_env = r
        .provider
        .env_http_headers
        .iter()
        .filter_map(|(name, var)| {
            let value = env(var).filter(|v| !v.trim().is_empty())?;
            Some((
                name,
                value,
                is_secret_name(name) || is_secret_name(var),
                "env_http_headers",
            ))
        });
    let mut out = Vec::new();
    for (name, value, secret, field) in fixed.chain(from_env) {
        let sendable = http::HeaderName::from_bytes(name.trim().as_bytes()).is_ok()
            && http::HeaderValue::from_str(value.trim()).is_ok();
        if !sendable {
            notes.push(format!(
                "{}.{field}: the header `{}` is not a valid HTTP header and is not sent (nor does Codex send it)",
                r.table,
                name.trim()
            ));
            continue;
        }
        out.push(Header {
            name: name.trim().to_string(),
            value: Secret::new(value.trim().to_string()),
            secret,
        });
    }
    out
}

/// The TOML reader's error at its line, with string values hidden (one may be a token).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e
        .message()
        .trim()
        .split('"')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { "…" } else { part })
        .collect::<Vec<_>>()
        .join("\"");
    match e
        .span()
        .and_then(|s| text.get(..s.start))
        .map(|before| before.matches('\n').count() + 1)
    {
        Some(line) => format!("line {line}: {message}"),
        None => message,
    }
}
