//! The heart of `ladder check`: from what happened to one tiny request (an `Outcome`), what is
//! known about the target (API, base URL, key shape, proxy) and what the follow-up probes
//! found (`Evidence`: the model list, a base URL that answers), to a `Diagnosis` in plain words
//! with the cause and the fix. Most first runs fail on configuration, not performance, so each
//! message names the setting to change. Pure: no I/O, no clock.

use super::diagnosis::{Context, Diagnosis, Evidence, Kind};
use super::key::{explain, KeyProblem};
use super::models::says_unknown_model;
use super::network::no_answer;
use super::outcome::Outcome;
use super::status::{html_page, status_error};
use crate::dialect::Usage;
use crate::model::{ErrorClass, TokensSource};

/// Which probes are worth sending after an outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probes {
    /// `GET {base_url}/models`.
    pub models: bool,
    /// `GET {candidate}/models` for other plausible base URLs.
    pub bases: bool,
}

pub fn wanted_probes(o: &Outcome) -> Probes {
    match o {
        Outcome::Status {
            status,
            error_type,
            message,
            html,
            ..
        } => {
            let model = says_unknown_model(*status, error_type.as_deref(), message);
            let path = matches!(status, 404 | 405) && !model;
            Probes {
                models: model || path,
                bases: path || *html,
            }
        }
        Outcome::NotStream { html: true, .. } => Probes {
            models: false,
            bases: true,
        },
        _ => Probes::default(),
    }
}

/// The diagnosis of one target/model.
pub fn diagnose(cx: &Context, o: &Outcome, ev: &Evidence) -> Diagnosis {
    let mut d = match o {
        Outcome::Streamed {
            ttft_ms,
            output_tokens,
            tokens_source,
            token_events,
            reasoning_tokens,
            seen,
        } => {
            let mut d = match all_hidden_reasoning(*output_tokens, *reasoning_tokens) {
                Some(d) => d,
                None => streamed(cx, *ttft_ms, *output_tokens, *tokens_source, *token_events),
            };
            if d.is_ok() {
                d.seen = super::seen::lines(*ttft_ms, *reasoning_tokens, seen);
            }
            d
        }
        Outcome::Embedded {
            e2e_ms,
            input_tokens,
        } => embedded(cx, *e2e_ms, *input_tokens),
        Outcome::NotSent {
            reason,
            key_related,
        } => not_sent(cx, reason, *key_related),
        Outcome::NoAnswer { class, detail } => no_answer(cx, *class, detail),
        Outcome::Status {
            status,
            error_type,
            message,
            html,
            quota,
        } => status_error(
            cx,
            *status,
            error_type.as_deref(),
            message,
            *html,
            *quota,
            ev,
        ),
        Outcome::NotStream {
            status,
            content_type,
            html,
            error,
        } => not_stream(cx, *status, content_type, *html, error.as_deref(), ev),
        Outcome::StreamFailed {
            class,
            error_type,
            message,
        } => stream_failed(cx, *class, error_type.as_deref(), message),
    };
    if let Some(p) = cx.proxy {
        if !matches!(d.kind, Kind::Proxy) {
            d.notes.push(format!(
                "requests go through the proxy {}={}",
                p.var, p.shown
            ));
        }
    }
    d
}

fn streamed(
    cx: &Context,
    ttft_ms: Option<f64>,
    tokens: Option<u64>,
    source: Option<TokensSource>,
    events: u64,
) -> Diagnosis {
    let Some(ttft) = ttft_ms else {
        return Diagnosis::new(
            Kind::NoTokenEvents,
            format!(
                "the stream reported {} output tokens but no event carried text ladder recognizes",
                tokens.unwrap_or(0)
            ),
        )
        .cause(format!("TTFT cannot be measured: no {} event had generated text (content or reasoning) in a field ladder reads", cx.api.as_str()))
        .fix("check that the server really speaks this API (target.api / --api), or report the stream format");
    };
    let mut d = match source {
        Some(TokensSource::Usage) => {
            let how = match cx.api.spec().usage {
                Usage::Always => "",
                Usage::OptIn => " (stream_options honoured)",
            };
            Diagnosis::new(
                Kind::Ok,
                format!(
                    "TTFT {ttft:.0} ms, {} tokens, usage reported{how}",
                    tokens.unwrap_or(events)
                ),
            )
        }
        _ => {
            let why = cx.api.spec().no_usage;
            let mut d = Diagnosis::new(
                Kind::OkNoUsage,
                format!("TTFT {ttft:.0} ms, {events} token events, no usage in the stream"),
            );
            d.notes.push(format!(
                "{why}: TPM and TPOT will fall back to counting chunks (tokens_source=chunks), which undercounts when a chunk carries several tokens"
            ));
            d
        }
    };
    for p in &cx.key.problems {
        if *p != KeyProblem::Missing {
            let (cause, fix) = explain(p, cx.key_source);
            d.notes.push(format!(
                "{cause}; this server accepted it, others may not: {fix}"
            ));
        }
    }
    d
}

/// An embeddings answer that held its vector: its time, and its input tokens when usage said.
fn embedded(cx: &Context, e2e_ms: f64, input_tokens: Option<u64>) -> Diagnosis {
    match input_tokens {
        Some(n) => Diagnosis::new(
            Kind::Ok,
            format!("E2E {e2e_ms:.0} ms, 1 vector, {n} input tokens, usage reported"),
        ),
        None => {
            let mut d = Diagnosis::new(
                Kind::OkNoUsage,
                format!("E2E {e2e_ms:.0} ms, 1 vector, no usage in the answer"),
            );
            d.notes.push(format!(
                "{}: input tokens per minute will read 0 (requests per second and E2E are measured)",
                cx.api.spec().no_usage
            ));
            d
        }
    }
}

/// A reasoning model that spent the check's few tokens on hidden reasoning (OpenAI's o-series and
/// GPT-5 at a limit of 5): the request was accepted and answered, with no answer token to time.
fn all_hidden_reasoning(tokens: Option<u64>, reasoning: Option<u64>) -> Option<Diagnosis> {
    let (n, r) = (tokens?, reasoning?);
    if r == 0 || r < n {
        return None;
    }
    let mut d = Diagnosis::new(
        Kind::Ok,
        format!("accepted; all {n} tokens went to hidden reasoning, so no answer token to time"),
    );
    d.notes.push(
        "a reasoning model thinks before it answers: give runs a max_tokens well above its reasoning (OpenAI suggests reserving about 25,000 tokens at first), or answers end empty with finish_reason length".into(),
    );
    Some(d)
}

fn not_sent(cx: &Context, reason: &str, key_related: bool) -> Diagnosis {
    if !key_related {
        return Diagnosis::new(Kind::Setup, "the request could not be built")
            .cause(reason.to_string())
            .fix("fix the named setting");
    }
    let mut d = Diagnosis::new(
        Kind::KeyNotSendable,
        "the API key cannot be sent in an HTTP header; nothing was sent",
    );
    let mut any = false;
    for p in &cx.key.problems {
        if matches!(
            p,
            KeyProblem::Newline | KeyProblem::Control | KeyProblem::NonAscii
        ) {
            let (cause, fix) = explain(p, cx.key_source);
            d = d.cause(cause).fix(fix);
            any = true;
        }
    }
    if !any {
        d = d
            .cause(format!(
                "the API key from {} contains characters not allowed in a header",
                cx.key_source
            ))
            .fix(format!("copy the key again into {}", cx.key_source));
    }
    d
}

fn not_stream(
    cx: &Context,
    status: u16,
    content_type: &str,
    html: bool,
    error: Option<&str>,
    ev: &Evidence,
) -> Diagnosis {
    if html {
        return html_page(cx, &format!("HTTP {status}"), ev);
    }
    if let Some(e) = error {
        return Diagnosis::new(
            Kind::NotStream,
            format!("HTTP {status} with an error object instead of a stream"),
        )
        .cause("the server answered success but put an error in a plain JSON body")
        .fix("see the server's message; check the model and target.api")
        .said(e);
    }
    let ct = if content_type.is_empty() {
        "no content type".to_string()
    } else {
        format!("`{content_type}`")
    };
    Diagnosis::new(
        Kind::NotStream,
        format!("HTTP {status}, but not an event stream ({ct})"),
    )
    .cause("the server ignores `stream: true` and answered in one piece (or a proxy buffers and rewrites the stream); ladder measures TTFT from streamed tokens")
    .fix("enable streaming on the server or gateway for this endpoint, or point ladder at an endpoint that streams (text/event-stream)")
}

fn stream_failed(
    cx: &Context,
    class: ErrorClass,
    error_type: Option<&str>,
    message: &str,
) -> Diagnosis {
    let d = match class {
        ErrorClass::Empty => Diagnosis::new(Kind::Empty, "the stream ended without any generated token")
            .cause("the model produced nothing ladder recognizes as text within the few tokens the check asks for, or sends text in a field ladder does not read")
            .fix("check the model with a longer request; check that target.api matches the server"),
        ErrorClass::Disconnect => Diagnosis::new(Kind::StreamBroken, "the stream broke off after it started")
            .cause("the server closed the stream without its end marker, or a proxy / load balancer cut it")
            .fix("check the server's logs; proxies in between must not buffer or time out event streams"),
        ErrorClass::Protocol if cx.api.embeds() => Diagnosis::new(Kind::Malformed, "the answer is not an embeddings answer ladder can use")
            .cause("the answer must be one JSON body holding one vector of numbers per input text (data[].embedding, indexes 0..N-1); the server said what was wrong below")
            .fix("check that target.api (or --api) matches the server; a server that returns a vector per token must be told to pool them (e.g. llama.cpp's --pooling mean)"),
        ErrorClass::Protocol => Diagnosis::new(Kind::Malformed, "the stream is not what this API sends")
            .cause(format!("the events are not valid {} stream events", cx.api.as_str()))
            .fix("check that target.api (or --api) matches the server"),
        // A dialect that classifies its in-stream errors (the Responses API's `response.failed`
        // with `rate_limit_exceeded`, `insufficient_quota`, `server_error`).
        ErrorClass::Http429 => Diagnosis::new(Kind::RateLimited, "rate-limited right now (inside the stream)")
            .cause("the request was accepted (HTTP 200), then the stream failed with a rate-limit error: the account is over its request or token rate limit at the moment")
            .fix("wait a minute and check again; `ladder run` counts these as 429s in the rate-limit wall"),
        ErrorClass::Quota => Diagnosis::new(Kind::Quota, "the account is out of quota or credit (inside the stream)")
            .cause("the request was accepted (HTTP 200), then the stream failed with insufficient_quota")
            .fix("add credit / raise the spend limit in the provider's console, or use another project's key"),
        ErrorClass::Http5xx => Diagnosis::new(Kind::ServerError, "the server failed inside the stream")
            .cause("the request was accepted (HTTP 200), then the stream failed with a server error; not a configuration problem as far as the client can tell")
            .fix("retry later; if it persists, check the provider's status page or the server's logs"),
        ErrorClass::TimeoutFirstToken | ErrorClass::TimeoutIdle | ErrorClass::TimeoutTotal => {
            Diagnosis::new(Kind::StreamStalled, "the stream started but stalled")
                .cause(format!("no token within {}: the server is overloaded, or the model is loading", humantime::format_duration(cx.timeout)))
                .fix("retry, or give it longer with --timeout 60s")
        }
        _ => {
            let t = error_type.map(|t| format!(" ({t})")).unwrap_or_default();
            Diagnosis::new(Kind::StreamError, format!("the server reported an error inside the stream{t}"))
                .cause("the request was accepted (HTTP 200), then the server sent an error event")
                .fix("retry; if it persists, see the server's message")
        }
    };
    d.said(message)
}

#[cfg(test)]
mod tests;
