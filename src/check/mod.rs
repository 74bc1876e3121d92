//! `ladder check`: one tiny streaming request (max_tokens 5) per target/model through the real
//! client path, then a diagnosis in plain words with the fix. Most first runs fail on
//! configuration (wrong key, base URL, model), not performance; this command says which.
//!
//! Inputs (`inputs`): a scenario file (every model of its target; `target.sim` starts the
//! embedded simulator), `--base-url URL --model M`, or `--from` a Claude Code settings.json /
//! Codex CLI auth.json (`--from claude` / `--from codex`: their own settings). An answer that
//! streamed is followed by a cache probe, and `seen` says what the answer showed. The request and the follow-up probes are in `probe`; what happened is
//! reduced to an `Outcome` (`outcome`, keys redacted) and diagnosed by the pure `diagnose`
//! (with `status` for non-2xx answers and `network` for no answer at all),
//! helped by `key` (key shape), `url` (base URL candidates, proxies) and `models` (model
//! lists, "did you mean"); `render` formats one block per target/model.
//!
//! Exit code: 0 when every model is ok, 1 when any failed (a diagnosis is not a usage error),
//! 2 for bad input. The key is only ever shown masked (`…a1b2`); every printed block is
//! redacted once more before it is written.

mod api_fit;
mod azure;
pub mod culprit;
pub mod diagnose;
pub mod diagnosis;
pub mod inputs;
pub mod key;
mod limit;
pub mod models;
mod network;
pub mod outcome;
mod probe;
pub mod render;
pub mod seen;
mod status;
pub mod url;

use crate::client::http::PreparedTarget;
use crate::client::pool::build_http_client;
use crate::client::untrusted::printable;
use crate::scenario::{self, LimitField, RequestSpec};
use anyhow::Context as _;
use diagnose::diagnose;
use diagnosis::{Context, Diagnosis};
use inputs::CheckTarget;
use outcome::Outcome;
use std::io::Write;
use std::path::PathBuf;

/// The prompt of the check request: short, and answerable in a few tokens.
const PROMPT: &str = "Reply with one word: ok";
const MAX_TOKENS: u32 = 5;

/// The check request for one target: a limit of `MAX_TOKENS` (or the dialect's smallest, when
/// that is more) under the field the scenario sends (its `extra_body` never holds a limit: the
/// loader reads one into `max_tokens_field`).
fn request_spec(ct: &CheckTarget) -> RequestSpec {
    let mut extra_body = ct.extra_body.clone();
    for f in LimitField::all() {
        extra_body.remove(f.key());
    }
    RequestSpec {
        prompt: PROMPT.into(),
        prompt_file: PathBuf::new(),
        system: None,
        system_file: None,
        max_tokens: Some(MAX_TOKENS.max(ct.target.api.spec().min_limit)),
        max_tokens_field: ct.max_tokens_field,
        temperature: None,
        extra_body,
        ..RequestSpec::default()
    }
}

/// `text` with everything the target's redactor hides (`scenario::Target::redactor`: the key,
/// secret headers, interpolated secrets, the simulator's key, secret-named environment values)
/// and the key the check sends.
fn redact_all(text: &str, ct: &CheckTarget) -> String {
    ct.target
        .redactor()
        .and(ct.key.iter().map(scenario::Secret::expose))
        .redact(text)
}

/// What `ladder check` says of `model` of a scenario's target, written to `out`: for a run
/// that stopped early because its first requests all failed the same way (`runner::failfast`).
pub async fn diagnose_for_run(
    s: &scenario::Scenario,
    model: &str,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut target = inputs::from_scenario_for(s, DEFAULT_TIMEOUT);
    target.target.models = vec![model.to_string()];
    check_target(&target, false, out).await?;
    Ok(())
}

/// `ladder check --timeout`'s default.
const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// What every model's check of one target shares.
struct Shared<'a> {
    ct: &'a CheckTarget,
    base_url: &'a str,
    http: &'a reqwest::Client,
    prepared: &'a Result<PreparedTarget, crate::client::http::PrepareError>,
    shape: &'a key::KeyShape,
    proxy: Option<&'a crate::client::proxy::ProxyInfo>,
    req: &'a RequestSpec,
    parts: &'a [culprit::Part],
    scenario_text: Option<&'a str>,
    /// Only failures are printed: the cache probe is not worth its requests.
    quiet: bool,
}

/// Checks every model of one target; returns (models checked, models failed).
pub async fn check_target(
    ct: &CheckTarget,
    quiet: bool,
    stdout: &mut dyn Write,
) -> anyhow::Result<(usize, usize)> {
    let (base_url, sim) = crate::client::endpoint::serve_endpoint(&ct.target.endpoint)
        .await
        .context("cannot start the embedded simulator")?;
    let http = build_http_client(&ct.target.timeouts, &ct.target.tls, 1, &Default::default())
        .context("cannot build the HTTP client")?;
    if let Some(w) = crate::client::tls::insecure_warning(&ct.target.tls) {
        eprintln!("warning: {w}");
    }
    let prepared = PreparedTarget::new(&ct.target, &base_url);
    let shape = key::inspect(ct.key.as_ref(), ct.target.api, &url::host_of(&base_url));
    let env = |k: &str| std::env::var(k).ok();
    let proxy = crate::client::proxy::proxy_for(&base_url, &env);
    let req = request_spec(ct);
    if !quiet {
        for n in &ct.notes {
            writeln!(stdout, "note: {}", redact_all(n, ct))?;
        }
    }
    let ids = crate::client::request_id::RequestIds::random();
    let parts = culprit::parts(&ct.target, &req.extra_body);
    let scenario_text = ct
        .scenario_file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok());
    let shared = Shared {
        ct,
        base_url: &base_url,
        http: &http,
        prepared: &prepared,
        shape: &shape,
        proxy: proxy.as_ref(),
        req: &req,
        parts: &parts,
        scenario_text: scenario_text.as_deref(),
        quiet,
    };
    let mut failed = 0;
    let mut first_failure: Option<(String, Diagnosis)> = None;
    for (i, model) in ct.target.models.iter().enumerate() {
        let text = if let Some((first, d)) = &first_failure {
            failed += 1;
            render::skipped(model, first, d)
        } else {
            let (d, block) = check_one(&shared, model, &ids.id(i as u64)).await;
            if !d.is_ok() {
                failed += 1;
                if d.kind.is_target_level() {
                    first_failure = Some((model.clone(), d.clone()));
                }
            }
            if d.is_ok() && quiet {
                continue;
            }
            block
        };
        // What the server said is data, never terminal control (`client::untrusted`).
        writeln!(stdout, "{}", printable(&redact_all(&text, ct)))?;
        stdout.flush()?;
    }
    if let Some(h) = sim {
        h.shutdown().await;
    }
    Ok((ct.target.models.len(), failed))
}

/// The check of one model: its diagnosis and its block. An answer that streamed is followed by
/// the cache probe (`cache_spec` sent twice), whose verdict joins what the check saw.
async fn check_one(sh: &Shared<'_>, model: &str, id: &str) -> (Diagnosis, String) {
    let ct = sh.ct;
    let api = ct.target.api;
    let cr = probe::CheckRequest {
        base_url: sh.base_url,
        model,
        req: sh.req,
        request_id: id,
        key: ct.key.as_ref(),
        parts: sh.parts,
    };
    let (outcome, mut evidence, found) = probe::check_model(sh.http, sh.prepared, &cr).await;
    evidence.culprit = found.map(|p| {
        let file = ct.scenario_file.as_deref();
        culprit::describe(&p, file.zip(sh.scenario_text))
    });
    let cx = Context {
        api,
        base_url: sh.base_url,
        model,
        key: sh.shape,
        key_source: &ct.key_source,
        proxy: sh.proxy,
        timeout: ct.target.timeouts.first_token,
        auth: ct.target.auth,
        api_version: ct.target.api_version.as_deref(),
        scenario_file: ct.scenario_file.as_deref(),
        limit_field: sh.req.max_tokens_field,
        api_setting: ct.api_setting.clone(),
    };
    let mut d = diagnose(&cx, &outcome, &evidence);
    if let (true, false, Outcome::Streamed { .. }, Ok(t)) =
        (d.is_ok(), sh.quiet, &outcome, sh.prepared)
    {
        let spec = cache_spec(sh.req);
        let p = probe::cache_probe(sh.http, t, model, &spec, id, ct.key.as_ref()).await;
        let cache_control = api.spec().family == crate::dialect::Family::Anthropic;
        d.seen.push(seen::cache_line(&p, cache_control));
    }
    let block = render::block(
        &render::Block {
            model,
            api,
            base_url: sh.base_url,
            key: sh.shape,
            key_source: &ct.key_source,
        },
        &d,
    );
    (d, block)
}

/// Lines of the cache probe's prompt: with the check's question, about 1,200 tokens, above the
/// 1,024 below which OpenAI caches no prompt (and the 1,024 of Anthropic's cache_control).
const CACHE_PROMPT_LINES: usize = 100;

/// The cache probe's request: the check request with a prompt long enough to be cached.
fn cache_spec(req: &RequestSpec) -> RequestSpec {
    let mut prompt = String::new();
    for i in 1..=CACHE_PROMPT_LINES {
        prompt.push_str(&format!(
            "{i:03}. ladder sends this text twice to see whether the server caches it.\n"
        ));
    }
    prompt.push_str(PROMPT);
    RequestSpec {
        prompt,
        ..req.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Api;
    use crate::scenario::{Endpoint, Header, Secret, Target, Timeouts};
    use serde_json::json;

    fn target(key: Option<&str>, headers: Vec<Header>) -> CheckTarget {
        CheckTarget {
            label: "t".into(),
            target: Target {
                api: Api::OpenAiChat,
                endpoint: Endpoint::Url("http://h/v1".into()),
                api_key: key.map(Secret::new),
                models: vec!["m".into()],
                headers,
                timeouts: Timeouts::default(),
                request_id_header: None,
                tls: Default::default(),
                auth: crate::scenario::Auth::Bearer,
                api_version: None,
                secrets: Vec::new(),
                metrics: None,
            },
            key: key.map(Secret::new),
            key_source: "$K".into(),
            extra_body: serde_json::Map::new(),
            max_tokens_field: LimitField::parse("max_completion_tokens").unwrap(),
            notes: Vec::new(),
            scenario_file: None,
            api_setting: Default::default(),
        }
    }

    #[test]
    fn redaction_covers_the_key_and_secret_headers() {
        let ct = target(
            Some("sk-the-key-0001"),
            vec![
                Header {
                    name: "authorization".into(),
                    value: Secret::new("Bearer tok-secret-02"),
                    secret: true,
                },
                Header {
                    name: "x-team".into(),
                    value: Secret::new("public-team"),
                    secret: false,
                },
            ],
        );
        let text = "sk-the-key-0001 / Bearer tok-secret-02 / tok-secret-02 / public-team";
        assert_eq!(redact_all(text, &ct), "*** / *** / *** / public-team");
    }

    /// The check hides what the scenario's redactor hides, not a narrower list of its own: a
    /// value interpolated from a secret-named variable and the simulator's key too.
    #[test]
    fn redaction_is_the_scenarios() {
        let mut ct = target(None, Vec::new());
        ct.target.secrets = vec![Secret::new("interpolated-credential-9")];
        let text = "body: interpolated-credential-9";
        assert_eq!(redact_all(text, &ct), "body: ***");
        let sim = crate::sim::SimParams {
            require_api_key: Some("sim-key-abcdef".into()),
            ..Default::default()
        };
        ct.target.endpoint = Endpoint::Sim(sim);
        assert_eq!(redact_all("got sim-key-abcdef", &ct), "got ***");
    }

    #[test]
    fn the_check_request_is_tiny_whatever_extra_body_says() {
        let mut ct = target(None, Vec::new());
        ct.extra_body = json!({"max_tokens": 900, "max_completion_tokens": 900, "top_p": 0.5})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let req = request_spec(&ct);
        assert_eq!(req.max_tokens, Some(5));
        assert_eq!(
            req.max_tokens_field,
            LimitField::parse("max_completion_tokens").unwrap()
        );
        assert_eq!(req.extra_body.get("max_tokens"), None);
        assert_eq!(req.extra_body.get("max_completion_tokens"), None);
        assert_eq!(req.extra_body["top_p"], 0.5);
        ct.max_tokens_field = LimitField::parse("max_tokens").unwrap();
        assert_eq!(
            request_spec(&ct).max_tokens_field,
            LimitField::parse("max_tokens").unwrap()
        );
        assert_eq!(req.temperature, None);
        let plain = request_spec(&target(None, Vec::new()));
        assert!(plain.extra_body.is_empty());
    }
}
