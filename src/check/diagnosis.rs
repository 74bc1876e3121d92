//! What `ladder check` knows and concludes about one target, as data: the `Context` known
//! before sending, the `Evidence` the follow-up probes found, and the `Diagnosis` (its `Kind`,
//! causes, fixes, the server's own words). Its own file because every rule of `check`
//! (`diagnose`, `status`, `network`, `azure`) builds these, and `diagnose` calls those rules.

use super::key::KeyShape;
use crate::client::proxy::ProxyInfo;
use crate::dialect::Api;
use std::time::Duration;

/// What is known about the target before sending.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub api: Api,
    pub base_url: &'a str,
    pub model: &'a str,
    pub key: &'a KeyShape,
    /// Where the key comes from, e.g. `$OPENAI_API_KEY` or `target.api_key in x.yaml`.
    pub key_source: &'a str,
    /// The proxy the request goes through, if any.
    pub proxy: Option<&'a ProxyInfo>,
    pub timeout: Duration,
    /// How the key was sent (`target.auth`).
    pub auth: crate::scenario::Auth,
    /// `target.api_version`, appended as `?api-version=` (Azure's deployment URLs).
    pub api_version: Option<&'a str>,
    /// The scenario the target came from, for fixes that name where to change a setting.
    pub scenario_file: Option<&'a std::path::Path>,
    /// The field the request's output-token limit was sent under.
    pub limit_field: crate::scenario::LimitField,
    /// Where the dialect was chosen, for fixes that change it.
    pub api_setting: ApiSetting,
}

/// Where a target's API dialect was chosen, so that a fix says how to change it there.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum ApiSetting {
    /// A scenario's `target.api`, or `--api`.
    #[default]
    Target,
    /// A provider's `wire_api` in Codex CLI's `config.toml` (`check --from codex`).
    Codex {
        config: std::path::PathBuf,
        /// The provider's id (`model_providers.<id>`).
        provider: String,
        /// Codex's built-in provider: the file has no table of it to change.
        built_in: bool,
    },
}

impl ApiSetting {
    /// The fix in Codex's terms that makes it speak the first of `apis` (those that would fit,
    /// best first) that Codex can speak; `None` when the dialect was not chosen by Codex's
    /// config (the caller then names `target.api` and `--api`).
    pub fn codex_fix(&self, apis: &[Api]) -> Option<String> {
        let ApiSetting::Codex {
            config,
            provider,
            built_in,
        } = self
        else {
            return None;
        };
        let file = config.display();
        let wire = apis
            .iter()
            .find_map(|a| Some((a.codex_wire_api()?, a.spec().path)));
        // Current Codex releases take only `responses` (docs/providers.md).
        let older = |w: &str| {
            if w == "chat" {
                "; older Codex releases take it, current ones only \"responses\": a gateway such as LiteLLM can serve /responses in front of this server"
            } else {
                ""
            }
        };
        Some(match (wire, built_in) {
            (Some((w, path)), false) => format!(
                "set `wire_api = \"{w}\"` in [model_providers.{provider}] of {file} (Codex then sends POST {path}){}",
                older(w)
            ),
            (Some((w, path)), true) => format!(
                "Codex's built-in provider `{provider}` speaks the Responses API only: in {file}, add a [model_providers.<id>] table with this base_url and `wire_api = \"{w}\"` (POST {path}), and set model_provider to its id{}",
                older(w)
            ),
            (None, _) => format!(
                "Codex speaks only wire_api = \"responses\" and \"chat\", neither of which fits this server; to check another API, use --base-url with --api ({})",
                apis.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(" or ")
            ),
        })
    }
}

/// What the follow-up probes found (see [`wanted_probes`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Models listed by `GET {base_url}/models`, when that answered with a list.
    pub models: Option<Vec<String>>,
    /// `GET {base_url}/models` answered like an API (so the base URL itself is right).
    pub base_answers: bool,
    /// Another base URL whose `/models` answered like an API.
    pub working_base: Option<String>,
    /// The optional parts the request was retried without (after an unexplained 4xx).
    pub tried: Vec<super::culprit::Part>,
    /// The part whose removal made the server accept the request, and how to turn it off.
    pub culprit: Option<super::culprit::Culprit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ok,
    OkNoUsage,
    KeyNotSendable,
    Setup,
    KeyMissing,
    KeyRejected,
    Forbidden,
    PathNotFound,
    WrongApi,
    /// The model is served through another dialect's endpoint, or not through this one.
    ModelWrongApi,
    ModelNotFound,
    HtmlPage,
    BadRequest,
    RateLimited,
    Quota,
    ServerError,
    HttpError,
    ConnectionRefused,
    Dns,
    Tls,
    Proxy,
    ConnectTimeout,
    ConnectFailed,
    ClosedWithoutAnswer,
    ResponseTimeout,
    NotStream,
    StreamError,
    StreamBroken,
    StreamStalled,
    Malformed,
    Empty,
    NoTokenEvents,
}

impl Kind {
    /// A problem of the target (URL, key, network) rather than of one model: every model of the
    /// target would fail the same way.
    pub fn is_target_level(self) -> bool {
        use Kind::*;
        matches!(
            self,
            KeyNotSendable
                | Setup
                | KeyMissing
                | KeyRejected
                | PathNotFound
                | WrongApi
                | HtmlPage
                | Quota
                | ConnectionRefused
                | Dns
                | Tls
                | Proxy
                | ConnectTimeout
                | ConnectFailed
                | ClosedWithoutAnswer
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub kind: Kind,
    /// One line: the figures when ok, else what went wrong.
    pub summary: String,
    pub causes: Vec<String>,
    pub fixes: Vec<String>,
    pub notes: Vec<String>,
    /// The provider's own message (already redacted), when there was one.
    pub server_said: Option<String>,
    /// What an answer showed besides its figures (`check::seen`): reasoning, TTFC, tool calls,
    /// cached input, the prefix cache.
    pub seen: Vec<String>,
}

impl Diagnosis {
    pub fn is_ok(&self) -> bool {
        matches!(self.kind, Kind::Ok | Kind::OkNoUsage)
    }

    pub(super) fn new(kind: Kind, summary: impl Into<String>) -> Self {
        Diagnosis {
            kind,
            summary: summary.into(),
            causes: Vec::new(),
            fixes: Vec::new(),
            notes: Vec::new(),
            server_said: None,
            seen: Vec::new(),
        }
    }

    pub(super) fn cause(mut self, c: impl Into<String>) -> Self {
        self.causes.push(c.into());
        self
    }

    pub(super) fn fix(mut self, f: impl Into<String>) -> Self {
        self.fixes.push(f.into());
        self
    }

    pub(super) fn said(mut self, s: &str) -> Self {
        let s = s.trim();
        if !s.is_empty() {
            self.server_said = Some(s.chars().take(300).collect());
        }
        self
    }
}

/// Words with which servers say they do not take something (a field, a route, a parameter):
/// what `api_fit` and `limit` both look for, each with words of its own.
pub(super) const REFUSAL_WORDS: [&str; 8] = [
    "not supported",
    "unsupported",
    "unrecognized",
    "unknown",
    "not permitted",
    "not allowed",
    "extra inputs",
    "extra_forbidden",
];
