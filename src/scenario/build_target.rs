//! Validation of `target:`: the API and its endpoint (a URL or the embedded simulator), the
//! models, the key and headers (secrets only through `${VAR}`), the timeouts, the request-id
//! header, the API version and the `/metrics` scrape.

use super::errors::{did_you_mean, Ctx};
use super::interpolate::{Interpolated, Sub};
use super::lines::locate_span;
use super::raw::{RawMetrics, RawTarget, RawTimeouts};
use super::scalars::dur_or;
use super::{
    Auth, Endpoint, Header, MetricsTarget, ScenarioError, Secret, Target, Timeouts,
    DEFAULT_REQUEST_ID_HEADER, METRICS_EVERY,
};
use crate::dialect::Api;
use crate::sim::SimParams;
use crate::util::redact::is_secret_name;
use std::collections::BTreeMap;

/// `bail!(cx, "target.api", "...")`: returns a located error.
macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

/// `target.metrics`: `auto` (the base URL's /metrics) or `{url, every}`, checked.
fn build_metrics(
    cx: &Ctx,
    raw: Option<RawMetrics>,
) -> Result<Option<MetricsTarget>, ScenarioError> {
    Ok(match raw {
        None => None,
        Some(RawMetrics::Word(w)) if w.trim() == "auto" => Some(MetricsTarget {
            url: None,
            every: METRICS_EVERY,
        }),
        Some(RawMetrics::Word(w)) => bail!(
            cx,
            "target.metrics",
            "`{w}` is not a metrics setting; write metrics: auto (the base URL's /metrics) or metrics: {{url: http://host:8000/metrics, every: 500ms}}"
        ),
        Some(RawMetrics::Spec(m)) => {
            let every = dur_or(m.every, METRICS_EVERY);
            if every < std::time::Duration::from_millis(50) {
                bail!(
                    cx,
                    "target.metrics.every",
                    "scraping more often than every 50ms loads the server; write e.g. every: 500ms"
                )
            }
            if let Some(u) = m.url.as_deref() {
                match reqwest::Url::parse(u) {
                    Ok(p) if matches!(p.scheme(), "http" | "https") => {}
                    _ => bail!(
                        cx,
                        "target.metrics.url",
                        "`{u}` is not an http(s) URL; write e.g. url: http://localhost:8000/metrics"
                    ),
                }
            }
            Some(MetricsTarget { url: m.url, every })
        }
    })
}

pub(super) fn build_target(
    cx: &Ctx,
    raw: Option<RawTarget>,
    interp: &Interpolated,
) -> Result<Target, ScenarioError> {
    let Some(t) = raw else {
        bail!(
            cx,
            "target",
            "missing; e.g. target: {{base_url: https://api.openai.com/v1, models: [gpt-4o]}}"
        )
    };
    let api = api_of(cx, t.api.as_deref())?;
    let endpoint = endpoint_of(cx, t.base_url, t.sim)?;
    let api_key = t
        .api_key
        .map(|k| Secret::api_key(&k))
        .filter(|k| !k.expose().is_empty());
    // An empty `${VAR}` leaves `api_key:` with nothing after it, which YAML reads as no key.
    let empty_var = api_key.is_none().then(|| empty_key_var(cx, interp));
    if let Some(Some(var)) = empty_var {
        bail!(
            cx,
            "target.api_key",
            "{var} is set but empty, so no key would be sent; put the key in {var} (in CI: \
             is the secret passed to this job? a secret the job cannot read arrives empty), or \
             write ${{{var}:-}} for a server that needs no key"
        )
    }
    let models = models_of(cx, t.models, t.model)?;
    let headers = headers_of(cx, t.headers, interp)?;
    let timeouts = timeouts_of(cx, t.timeouts)?;
    let request_id_header = request_id_header_of(cx, t.request_id_header.as_deref(), &headers)?;
    let auth = auth_of(cx, t.auth.as_deref(), api, &endpoint)?;
    let api_version = api_version_of(cx, t.api_version)?;
    if let Endpoint::Url(u) = &endpoint {
        if u.contains("/openai/deployments/") && models.len() > 1 {
            bail!(
                cx,
                "target.models",
                "a deployment URL (…/openai/deployments/NAME) serves one deployment, so one model; to compare deployments use the v1 URL https://RESOURCE.openai.azure.com/openai/v1 with models: [deployment-a, deployment-b]"
            )
        }
    }
    let metrics = build_metrics(cx, t.metrics)?;
    Ok(Target {
        metrics,
        api,
        endpoint,
        api_key,
        models,
        headers,
        timeouts,
        request_id_header,
        tls: super::tls::build_tls(cx, t.tls)?,
        auth,
        api_version,
        secrets: Vec::new(),
    })
}

/// `target.api`: the dialect, OpenAI chat by default.
fn api_of(cx: &Ctx, raw: Option<&str>) -> Result<Api, ScenarioError> {
    let api = match raw {
        None => Api::default(),
        Some(name) => match Api::from_name(name) {
            Some(api) => api,
            None => {
                let names = Api::names();
                let hint = did_you_mean(name, &names);
                bail!(
                    cx,
                    "target.api",
                    "unknown api `{name}`{hint}; use one of {}",
                    names.join(", ")
                )
            }
        },
    };
    Ok(api)
}

/// `target.base_url` or `target.sim`: exactly one.
fn endpoint_of(
    cx: &Ctx,
    base_url: Option<String>,
    sim: Option<Option<SimParams>>,
) -> Result<Endpoint, ScenarioError> {
    let endpoint = match (base_url.filter(|u| !u.trim().is_empty()), sim) {
        (Some(_), Some(_)) => {
            bail!(
                cx,
                "target.sim",
                "both base_url and sim are set; keep one (sim: runs the embedded simulator)"
            )
        }
        (None, None) => {
            bail!(
                cx,
                "target",
                "no endpoint; add base_url: https://... or sim: {{}} (the embedded simulator)"
            )
        }
        (Some(url), None) => Endpoint::Url(check_url(cx, &url)?),
        (None, Some(params)) => {
            let params = params.unwrap_or_default();
            if let Err(e) = params.validate() {
                return Err(cx.err("target.sim", e));
            }
            Endpoint::Sim(params)
        }
    };
    Ok(endpoint)
}

/// `target.models` (or one `target.model`): at least one, each once.
fn models_of(
    cx: &Ctx,
    models: Option<Vec<String>>,
    model: Option<String>,
) -> Result<Vec<String>, ScenarioError> {
    let models = match (models, model) {
        (Some(_), Some(_)) => bail!(
            cx,
            "target.model",
            "both model and models are set; keep one"
        ),
        (Some(m), None) => m,
        (None, Some(m)) => vec![m],
        (None, None) => {
            bail!(
                cx,
                "target.models",
                "missing; list the models, e.g. models: [gpt-4o]"
            )
        }
    };
    if models.is_empty() {
        bail!(
            cx,
            "target.models",
            "the list is empty; list at least one model, e.g. models: [gpt-4o]"
        )
    }
    for (i, m) in models.iter().enumerate() {
        if m.trim().is_empty() || models[..i].contains(m) {
            bail!(
                cx,
                "target.models",
                "`{m}` is empty or listed twice; list each model once"
            )
        }
    }
    Ok(models)
}

/// The variable that left `target.api_key` empty: `${VAR}` (no default) on its lines, set but
/// empty.
fn empty_key_var<'a>(cx: &Ctx, interp: &'a Interpolated) -> Option<&'a str> {
    let (start, end, _) = locate_span(cx.text, &["target", "api_key"]).filter(|s| s.2)?;
    interp
        .subs
        .iter()
        .find(|s| s.set_but_empty && (start..=end).contains(&s.line))
        .map(|s| s.var.as_str())
}

/// `target.headers`: valid names and values; secret when the name says so or a variable
/// was interpolated into the value.
fn headers_of(
    cx: &Ctx,
    raw: Option<BTreeMap<String, String>>,
    interp: &Interpolated,
) -> Result<Vec<Header>, ScenarioError> {
    let span = locate_span(cx.text, &["target", "headers"]).filter(|s| s.2);
    let mut headers = Vec::new();
    for (name, value) in raw.unwrap_or_default() {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            bail!(
                cx,
                &format!("target.headers.{name}"),
                "`{name}` is not a valid HTTP header name"
            )
        }
        if reqwest::header::HeaderValue::from_str(&value).is_err() {
            bail!(
                cx,
                &format!("target.headers.{name}"),
                "the value has line breaks or control characters"
            )
        }
        let interpolated = span.is_some_and(|(start, end, _)| {
            let inside = |s: &&Sub| (start..=end).contains(&s.line) && !s.value.is_empty();
            interp
                .subs
                .iter()
                .filter(inside)
                .any(|s| value.contains(&s.value))
        });
        let secret = is_secret_name(&name) || interpolated;
        headers.push(Header {
            name,
            value: Secret::new(value),
            secret,
        });
    }
    Ok(headers)
}

/// `target.timeouts`: the defaults where unset, none of them zero.
fn timeouts_of(cx: &Ctx, raw: Option<RawTimeouts>) -> Result<Timeouts, ScenarioError> {
    let (d, rt) = (Timeouts::default(), raw.unwrap_or_default());
    let timeouts = Timeouts {
        connect: dur_or(rt.connect, d.connect),
        first_token: dur_or(rt.first_token, d.first_token),
        idle: dur_or(rt.idle, d.idle),
        total: dur_or(rt.total, d.total),
    };
    let named = [
        ("connect", timeouts.connect),
        ("first_token", timeouts.first_token),
    ];
    for (key, v) in named
        .into_iter()
        .chain([("idle", timeouts.idle), ("total", timeouts.total)])
    {
        if v.is_zero() {
            bail!(
                cx,
                &format!("target.timeouts.{key}"),
                "a timeout of 0 fails every request; write e.g. 30s"
            )
        }
    }
    Ok(timeouts)
}

/// `target.request_id_header`: where each request's id goes (`none`: nowhere), not a header
/// the scenario sets itself.
fn request_id_header_of(
    cx: &Ctx,
    raw: Option<&str>,
    headers: &[Header],
) -> Result<Option<String>, ScenarioError> {
    let request_id_header = match raw.map(str::trim) {
        None => Some(DEFAULT_REQUEST_ID_HEADER.to_string()),
        Some(n) if n.eq_ignore_ascii_case("none") => None,
        Some(n) if reqwest::header::HeaderName::from_bytes(n.as_bytes()).is_ok() => {
            Some(n.to_ascii_lowercase())
        }
        Some(n) => bail!(
            cx,
            "target.request_id_header",
            "`{n}` is not a valid HTTP header name; write e.g. x-request-id, or none to send no request id"
        ),
    };
    if let Some(h) = headers
        .iter()
        .find(|h| Some(h.name.to_ascii_lowercase()) == request_id_header)
    {
        bail!(
            cx,
            &format!("target.headers.{}", h.name),
            "ladder sends each request's id (a UUID) in `{}`; to send your own value instead, add `request_id_header: none` under target: (or move ladder's ids to another header, e.g. request_id_header: x-ladder-request-id)",
            h.name
        )
    }
    Ok(request_id_header)
}

/// `target.auth`: how the key is sent, by default what the API and host expect.
fn auth_of(
    cx: &Ctx,
    raw: Option<&str>,
    api: Api,
    endpoint: &Endpoint,
) -> Result<Auth, ScenarioError> {
    let host = match endpoint {
        Endpoint::Url(u) => reqwest::Url::parse(u)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default(),
        Endpoint::Sim(_) => String::new(),
    };
    let auth = match raw.map(str::trim) {
        None => Auth::default_for(api, &host),
        Some("bearer") => Auth::Bearer,
        Some("api-key") => Auth::ApiKey,
        Some("x-api-key") => Auth::XApiKey,
        Some(other) => bail!(
            cx,
            "target.auth",
            "unknown auth `{other}`; use bearer (Authorization: Bearer), api-key (Azure OpenAI) or x-api-key (Anthropic)"
        ),
    };
    Ok(auth)
}

/// `target.api_version` (Azure OpenAI's query parameter).
fn api_version_of(cx: &Ctx, raw: Option<String>) -> Result<Option<String>, ScenarioError> {
    let api_version = raw.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    if let Some(v) = api_version.as_deref().filter(|v| {
        !v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    }) {
        bail!(
            cx,
            "target.api_version",
            "`{v}` is not an API version; write e.g. api_version: 2024-10-21"
        )
    }
    Ok(api_version)
}

fn check_url(cx: &Ctx, url: &str) -> Result<String, ScenarioError> {
    let trimmed = url.trim().trim_end_matches('/');
    // A URL with user:password@ is never echoed.
    let shown = if trimmed.contains('@') {
        "the URL".into()
    } else {
        format!("`{trimmed}`")
    };
    // The URL parser drops tabs and newlines inside a URL without a word, so a CR/LF would
    // send requests to a path nobody wrote.
    if trimmed.chars().any(char::is_control) {
        bail!(
            cx,
            "target.base_url",
            "{} contains a line break or another control character; write the URL on one line (check the variable it comes from)",
            if trimmed.contains('@') { "the URL".to_string() } else { format!("{:?}", trimmed) }
        )
    }
    match reqwest::Url::parse(trimmed) {
        Err(e) => {
            bail!(
                cx,
                "target.base_url",
                "{shown} is not a URL ({e}); e.g. https://api.x.com/v1"
            )
        }
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            bail!(
                cx,
                "target.base_url",
                "{shown} must start with http:// or https://"
            )
        }
        Ok(u) if u.query().is_some() || u.fragment().is_some() => {
            bail!(
                cx,
                "target.base_url",
                "{shown} must not contain `?` or `#` (paths are appended)"
            )
        }
        Ok(_) => Ok(trimmed.to_string()),
    }
}
