//! The network side of `ladder check`: the one tiny streaming request through the real client
//! path (`client::http::send_once`, so the check sees exactly what a run would see), and the
//! follow-up `GET …/models` probes the diagnosis asks for (the model list, and other base URLs
//! when the path looks wrong). Everything it learns is handed to the pure diagnosis.

use super::culprit::{self, Part};
use super::diagnose::wanted_probes;
use super::diagnosis::Evidence;
use super::models::{answers_like_api, parse_model_ids, ProbeAnswer};
use super::outcome::{from_attempt, Outcome};
use super::seen::CacheProbe;
use super::url::candidate_bases;
use crate::client::connect_timer::ConnectLog;
use crate::client::http::{send_once, PrepareError, PreparedTarget};
use crate::scenario::{RequestSpec, Secret};
use bytes::Bytes;
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use std::time::Duration;

/// Largest model-list body read (OpenRouter's list is a few MB with descriptions).
const MAX_PROBE_BYTES: usize = 8 << 20;
/// Longest a single probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What `check_model` needs besides the target.
pub struct CheckRequest<'a> {
    pub base_url: &'a str,
    pub model: &'a str,
    pub req: &'a RequestSpec,
    pub request_id: &'a str,
    pub key: Option<&'a Secret>,
    /// The optional parts to take out, one at a time, after an unexplained 4xx.
    pub parts: &'a [Part],
}

/// Sends the check request for `model` and gathers the evidence its outcome calls for. The
/// evidence's `culprit` is the part whose removal made the server accept the request.
pub async fn check_model(
    http: &reqwest::Client,
    prepared: &Result<PreparedTarget, PrepareError>,
    cr: &CheckRequest<'_>,
) -> (Outcome, Evidence, Option<Part>) {
    let CheckRequest {
        base_url,
        model,
        req,
        request_id,
        key,
        ..
    } = *cr;
    let target = match prepared {
        Ok(t) => t,
        Err(e) => {
            let key_related = match e {
                PrepareError::KeyValue => true,
                PrepareError::HeaderValue(name) => name.eq_ignore_ascii_case("authorization"),
                PrepareError::HeaderName(_)
                | PrepareError::RequestIdHeader(_)
                | PrepareError::Url => false,
            };
            let outcome = Outcome::NotSent {
                reason: e.to_string(),
                key_related,
            };
            return (outcome, Evidence::default(), None);
        }
    };
    let body = target.body_for(model, req);
    let attempt = send_once(
        http,
        &ConnectLog::default(),
        target,
        body.clone(),
        request_id,
    )
    .await;
    let mut outcome = from_attempt(&attempt, key);
    if target.api.embeds() {
        outcome = outcome.embedded(&attempt);
    }
    let probes = wanted_probes(&outcome);
    let mut ev = Evidence::default();
    let mut found = None;
    if culprit::worth_trying(&outcome) {
        for part in cr.parts {
            let (t, b) = without(target, &body, model, req, part);
            let again = from_attempt(
                &send_once(http, &ConnectLog::default(), &t, b, request_id).await,
                key,
            );
            ev.tried.push(part.clone());
            if !matches!(again, Outcome::Status { .. } | Outcome::NoAnswer { .. }) {
                found = Some(part.clone());
                break;
            }
        }
    }
    let limit = PROBE_TIMEOUT.min(target.timeouts.total);
    if probes.models {
        let a = get(http, target, &models_url(base_url), limit).await;
        ev.base_answers = answers_like_api(&a);
        if ev.base_answers {
            ev.models = parse_model_ids(&a.body);
        }
    }
    if probes.bases {
        for cand in candidate_bases(base_url) {
            let a = get(http, target, &models_url(&cand), limit).await;
            if answers_like_api(&a) {
                ev.working_base = Some(cand);
                break;
            }
        }
    }
    (outcome, ev, found)
}

/// Sends `req` twice, the same request each time: what the second shows of the prompt cache.
pub async fn cache_probe(
    http: &reqwest::Client,
    target: &PreparedTarget,
    model: &str,
    req: &RequestSpec,
    request_id: &str,
    key: Option<&Secret>,
) -> CacheProbe {
    let body = target.body_for(model, req);
    let mut answers = Vec::with_capacity(2);
    for _ in 0..2 {
        let log = ConnectLog::default();
        let a = send_once(http, &log, target, body.clone(), request_id).await;
        answers.push(from_attempt(&a, key));
    }
    match (&answers[0], &answers[1]) {
        (Outcome::Streamed { seen: a, .. }, Outcome::Streamed { seen: b, .. }) => {
            super::seen::cache_probe(a, b)
        }
        (o, Outcome::Streamed { .. }) | (_, o) => CacheProbe::Failed(failure(o)),
    }
}

/// A few words on a request of the cache probe that did not stream.
fn failure(o: &Outcome) -> String {
    match o {
        Outcome::Status { status, .. } => format!("HTTP {status}"),
        Outcome::NoAnswer { class, .. } | Outcome::StreamFailed { class, .. } => {
            format!("{class:?}")
        }
        Outcome::NotStream { .. } => "not an event stream".into(),
        Outcome::NotSent { .. } => "not sent".into(),
        Outcome::Streamed { .. } | Outcome::Embedded { .. } => "no stream".into(),
    }
}

/// The target and body of the check request with `part` taken out.
fn without(
    target: &PreparedTarget,
    body: &Bytes,
    model: &str,
    req: &RequestSpec,
    part: &Part,
) -> (PreparedTarget, Bytes) {
    let mut t = target.clone();
    let mut b = body.clone();
    match part {
        Part::RequestIdHeader(_) => t.request_id_header = None,
        Part::StreamOptions => {
            if let Some(v) = culprit::body_without_stream_options(body) {
                b = Bytes::from(v);
            }
        }
        Part::Header(name) => {
            t.headers.remove(name.as_str());
        }
        Part::ExtraBody(k) => {
            let mut r = req.clone();
            r.extra_body.remove(k);
            b = t.body_for(model, &r);
        }
    }
    (t, b)
}

fn models_url(base: &str) -> String {
    format!("{}/models", base.trim_end_matches('/'))
}

/// `GET url` with the target's headers (key included: `/models` needs it), JSON accepted.
async fn get(
    http: &reqwest::Client,
    target: &PreparedTarget,
    url: &str,
    limit: Duration,
) -> ProbeAnswer {
    let mut headers = target.headers.clone();
    headers.remove(CONTENT_TYPE);
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    let deadline = tokio::time::Instant::now() + limit;
    let send = http.get(url).headers(headers).send();
    let Ok(Ok(mut response)) = tokio::time::timeout_at(deadline, send).await else {
        return ProbeAnswer::default();
    };
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, response.chunk()).await {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_PROBE_BYTES {
            body.clear();
            break;
        }
    }
    ProbeAnswer {
        status: Some(status),
        content_type,
        body,
    }
}
