//! The network side of `ladder check`: the one tiny streaming request through the real client
//! path (`client::http::send_once`, so the check sees exactly what a run would see), and the
//! follow-up `GET …/models` probes the diagnosis asks for (the model list, and other base URLs
//! when the path looks wrong). Everything it learns is handed to the pure diagnosis.

use super::diagnose::{wanted_probes, Evidence};
use super::models::{answers_like_api, parse_model_ids, ProbeAnswer};
use super::outcome::{from_attempt, Outcome};
use super::url::candidate_bases;
use crate::client::http::{send_once, PrepareError, PreparedTarget};
use crate::scenario::{RequestSpec, Secret};
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use std::time::Duration;

/// Largest model-list body read (OpenRouter's list is a few MB with descriptions).
const MAX_PROBE_BYTES: usize = 8 << 20;
/// Longest a single probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Sends the check request for `model` and gathers the evidence its outcome calls for.
pub async fn check_model(
    http: &reqwest::Client,
    prepared: &Result<PreparedTarget, PrepareError>,
    base_url: &str,
    model: &str,
    req: &RequestSpec,
    request_id: &str,
    key: Option<&Secret>,
) -> (Outcome, Evidence) {
    let target = match prepared {
        Ok(t) => t,
        Err(e) => {
            let key_related = match e {
                PrepareError::KeyValue => true,
                PrepareError::HeaderValue(name) => name.eq_ignore_ascii_case("authorization"),
                PrepareError::HeaderName(_) => false,
            };
            let outcome = Outcome::NotSent {
                reason: e.to_string(),
                key_related,
            };
            return (outcome, Evidence::default());
        }
    };
    let body = target.body_for(model, req);
    let attempt = send_once(http, target, body, request_id).await;
    let outcome = from_attempt(&attempt, key);
    let probes = wanted_probes(&outcome);
    let mut ev = Evidence::default();
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
    (outcome, ev)
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
