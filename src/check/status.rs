//! Diagnoses for non-2xx answers: the key (401), permissions (403), the path or the API (404,
//! 405), unknown models with "did you mean", HTML pages, bad requests, rate limits, quota and
//! server errors. Pure: works on the status, the provider's error type and message, and the
//! probes' evidence.

use super::diagnosis::{Context, Diagnosis, Evidence, Kind};
use super::key::{explain, KeyProblem};
use super::models::{did_you_mean, says_unknown_model, shown_models};
use super::url::{endpoint_suffix, host_of};
use crate::dialect::KeyHeader;

#[allow(clippy::too_many_arguments)]
pub(super) fn status_error(
    cx: &Context,
    status: u16,
    error_type: Option<&str>,
    message: &str,
    html: bool,
    quota: bool,
    ev: &Evidence,
) -> Diagnosis {
    let url = format!(
        "{}{}",
        cx.base_url.trim_end_matches('/'),
        cx.api.spec().path
    );
    if let Some(d) = super::azure::diagnose(cx, status, error_type, message) {
        return d;
    }
    if let Some(d) = super::api_fit::diagnose(cx, status, message) {
        return d;
    }
    if says_unknown_model(status, error_type, message) {
        return model_not_found(cx, status, message, ev);
    }
    if message.starts_with(crate::client::http::CLIENT_CERT_WANTED) {
        return client_cert_wanted(status, message);
    }
    if matches!(status, 404 | 405) {
        return path_not_found(cx, status, &url, html, ev).said(if html { "" } else { message });
    }
    if html {
        return html_page(cx, &format!("HTTP {status}"), ev);
    }
    if let Some(d) = super::limit::refused_limit_field(cx, status, message) {
        return d;
    }
    if let Some(c) = &ev.culprit {
        return Diagnosis::new(
            Kind::BadRequest,
            format!("HTTP {status}: the server rejects {}", c.what),
        )
        .cause(format!(
            "the same request without {} was accepted, so that part is what this server refuses",
            c.what
        ))
        .fix(c.fix.clone())
        .said(message);
    }
    let d = match status {
        401 => unauthorized(cx),
        403 => forbidden(cx, message),
        429 if quota || error_type.is_some_and(|t| t.contains("quota")) => Diagnosis::new(
            Kind::Quota,
            "HTTP 429: the account is out of quota or credit",
        )
        .cause("the key is accepted, but the account has no credit left or hit its spend limit")
        .fix("add credit / raise the spend limit in the provider's console, or use another project's key"),
        429 => Diagnosis::new(Kind::RateLimited, "HTTP 429: rate-limited right now")
            .cause("the key and model are accepted, but the account is over its request or token rate limit at the moment")
            .fix("wait a minute and check again; `ladder run` measures 429s and reports the rate-limit wall"),
        400 | 413 | 422 => bad_request(message, status, ev),
        500..=599 => Diagnosis::new(Kind::ServerError, format!("HTTP {status}: the server failed"))
            .cause(match status {
                502 | 504 => "a gateway or proxy could not get an answer from the server behind it",
                503 | 529 => "the server is overloaded or down for maintenance",
                _ => "the server had an internal error; not a configuration problem as far as the client can tell",
            })
            .fix("retry later; if it persists, check the provider's status page or the server's logs"),
        _ => Diagnosis::new(Kind::HttpError, format!("HTTP {status}"))
            .cause(format!("the server refused the request with HTTP {status}"))
            .fix("see the server's message below"),
    };
    d.said(message)
}

fn unauthorized(cx: &Context) -> Diagnosis {
    let d = Diagnosis::new(
        Kind::KeyRejected,
        "HTTP 401: the server rejected the API key",
    );
    if !cx.key.present {
        let (cause, fix) = explain(&KeyProblem::Missing, cx.key_source);
        let mut d = d.cause(cause).fix(fix);
        d.kind = Kind::KeyMissing;
        d.summary = "HTTP 401: no API key was sent".into();
        return d;
    }
    let mut d = d;
    for p in &cx.key.problems {
        let (cause, fix) = explain(p, cx.key_source);
        d = d.cause(cause).fix(fix);
    }
    if d.causes.is_empty() {
        let host = host_of(cx.base_url);
        d = d
            .cause(format!(
                "the key {} (from {}) is wrong, revoked, or belongs to another provider or project",
                cx.key.masked, cx.key_source
            ))
            .fix(format!(
                "create or copy a valid key for {host} and put it in {}",
                cx.key_source
            ));
        if cx.api.spec().key_header == KeyHeader::XApiKey && !cx.key_source.contains("AUTH_TOKEN") {
            d = d.fix("ladder sends it as `x-api-key`; a gateway that expects `Authorization: Bearer` needs target.headers instead");
        }
    }
    d
}

fn forbidden(cx: &Context, message: &str) -> Diagnosis {
    let l = message.to_ascii_lowercase();
    let d = Diagnosis::new(
        Kind::Forbidden,
        "HTTP 403: the key is known but not allowed to do this",
    );
    if ["country", "region", "territory", "location"]
        .iter()
        .any(|w| l.contains(w))
    {
        d.cause("the provider does not serve requests from your country or region")
            .fix("run from a supported region, or go through a gateway/deployment that is allowed there")
    } else if ["organization", "organisation", "project", "org "]
        .iter()
        .any(|w| l.contains(w))
    {
        d.cause("the key's organization or project is not allowed to use this endpoint or model")
            .fix("check the key's project and organization settings, or use a key of a project with access")
    } else if l.contains("model") {
        d.cause(format!(
            "the key has no access to the model `{}` (account tier, verification, or a restricted key)",
            cx.model
        ))
        .fix("request access to the model, or pick one the key may use")
    } else {
        d.cause("permissions: a restricted key without this scope, an organization/project policy, model access, or a region restriction")
            .fix("check the key's permissions in the provider's console")
    }
}

fn bad_request(message: &str, status: u16, ev: &Evidence) -> Diagnosis {
    let l = message.to_ascii_lowercase();
    let d = Diagnosis::new(
        Kind::BadRequest,
        format!("HTTP {status}: the server rejected the request body"),
    );
    if l.contains("stream_options") {
        d.cause("the server does not accept `stream_options` (not fully OpenAI-compatible)")
            .fix("set `stream_options: null` in request.extra_body; token counts will then come from chunks")
    } else if !ev.tried.is_empty() {
        d.cause(format!(
            "the server rejected the request even without each optional part ladder tried ({}), so it objects to the prompt, the model or max_tokens",
            ev.tried.iter().map(|p| p.short()).collect::<Vec<_>>().join(", ")
        ))
        .fix("check the server's log for why it answers 400; check that target.api matches the server")
    } else {
        d.cause("the request does not fit what this server expects (see its message)")
            .fix("adjust request.extra_body or the model; check that target.api matches the server")
    }
}

fn model_not_found(cx: &Context, status: u16, message: &str, ev: &Evidence) -> Diagnosis {
    let mut d = Diagnosis::new(
        Kind::ModelNotFound,
        format!(
            "HTTP {status}: the server does not know the model `{}`",
            cx.model
        ),
    )
    .cause(format!(
        "the model name `{}` is misspelled, not deployed on this server, or not available to this key",
        cx.model
    ));
    match &ev.models {
        Some(models) if !models.is_empty() => {
            if let Some(m) = did_you_mean(cx.model, models) {
                d = d.fix(format!(
                    "did you mean `{m}`? (use --model {m}, or change target.models)"
                ));
            } else {
                d = d.fix("use one of the models the server lists (--model, or target.models)");
            }
            let (shown, more) = shown_models(cx.model, models, 12);
            let more = if more > 0 {
                format!(" … and {more} more")
            } else {
                String::new()
            };
            d.notes.push(format!(
                "GET {}/models lists: {}{more}",
                cx.base_url.trim_end_matches('/'),
                shown.join(", ")
            ));
        }
        Some(_) => {
            d = d.fix("the server lists no models: load or deploy the model first");
        }
        None => {
            d = d.fix("check the exact model id in the provider's documentation or the server's startup log (GET /models gave no list)");
        }
    }
    d.said(message)
}

fn suggest_base(d: Diagnosis, cx: &Context, ev: &Evidence) -> Diagnosis {
    if let Some(w) = &ev.working_base {
        return d.fix(format!(
            "the API answers at {w}: set the base URL to {w} (--base-url, or target.base_url)"
        ));
    }
    let d = match endpoint_suffix(cx.base_url) {
        Some(s) => d.fix(format!(
            "remove `{s}` from the base URL: ladder appends {} itself",
            cx.api.spec().path
        )),
        None => d,
    };
    d.fix("the base URL is usually the API root ending in /v1, e.g. https://api.openai.com/v1, https://api.anthropic.com/v1, http://localhost:8000/v1 (vLLM), http://localhost:11434/v1 (Ollama)")
}

fn path_not_found(cx: &Context, status: u16, url: &str, html: bool, ev: &Evidence) -> Diagnosis {
    if ev.base_answers && ev.working_base.is_none() {
        return Diagnosis::new(
            Kind::WrongApi,
            format!("HTTP {status}: the server has no {}", cx.api.spec().path),
        )
        .cause(format!(
            "the base URL is right (GET {}/models answers), but the server does not serve POST {url}: it probably speaks another API than {}",
            cx.base_url.trim_end_matches('/'),
            cx.api.as_str()
        ))
        .fix({
            let others: Vec<crate::dialect::Api> = crate::dialect::Api::ALL
                .into_iter()
                .filter(|a| *a != cx.api)
                .collect();
            cx.api_setting.codex_fix(&others).unwrap_or_else(|| {
                format!(
                    "set target.api (or --api) to the API the server speaks: {}",
                    crate::dialect::Api::names().join(", ")
                )
            })
        });
    }
    let page = if html { " (an HTML error page)" } else { "" };
    let d = Diagnosis::new(
        Kind::PathNotFound,
        format!("HTTP {status} on the path: the base URL looks wrong"),
    )
    .cause(format!(
        "POST {url} answered {status}{page}: nothing is served at that path, so the base URL is missing a segment such as /v1, or has an extra one"
    ));
    suggest_base(d, cx, ev)
}

/// nginx with `ssl_verify_client on` completes the handshake without a client certificate and
/// then answers its own 400 page: mutual TLS, said as such rather than as "an HTML page".
fn client_cert_wanted(status: u16, message: &str) -> Diagnosis {
    let rejected = message.contains("rejected the one sent");
    let (headline, cause) = if rejected {
        (
            "the server rejected the TLS client certificate",
            "the server (nginx with ssl_verify_client) asks for a client certificate (mutual TLS) and did not accept the one sent: not signed by a CA it trusts, or expired",
        )
    } else {
        (
            "the server wants a TLS client certificate",
            "the server (nginx with ssl_verify_client) asks for a client certificate (mutual TLS) and none was sent",
        )
    };
    Diagnosis::new(Kind::Tls, format!("HTTP {status}: {headline}"))
        .cause(cause)
        .fix("give ladder the client certificate and its key in the scenario: target.tls.client_cert and target.tls.client_key, e.g. tls: {client_cert: certs/client.pem, client_key: certs/client.key}")
}

pub(super) fn html_page(cx: &Context, what: &str, ev: &Evidence) -> Diagnosis {
    let d = Diagnosis::new(
        Kind::HtmlPage,
        format!("{what}: an HTML page instead of JSON"),
    )
    .cause("the base URL points at a web page (docs, dashboard, login) or a proxy / captive portal, not at the API");
    suggest_base(d, cx, ev)
}
