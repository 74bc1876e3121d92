//! Output YAML: the canonical workload (what the client sends and what changes the numbers)
//! whose hash is the fingerprint, and the whole normalized scenario written into run
//! directories. Both are deterministic and have every secret replaced.

use super::{
    ArrivalProcess, Budget, Endpoint, Gates, LadderOver, LoadMode, MetricGate, PromptOrder,
    PromptSource, RetryPolicy, Scenario, Target,
};
use crate::util::redact::FILE_MARK as REDACTED;
use serde_yaml::{Mapping, Value as Yaml};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::Duration;

/// First 16 hex digits of SHA-256 of `text`.
pub(super) fn fingerprint_of(text: &str) -> String {
    fingerprint_of_bytes(text.as_bytes())
}

/// First 16 hex digits of SHA-256 of `bytes` (also the content hash of prompt files).
pub(super) fn fingerprint_of_bytes(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn map<'a>(entries: impl IntoIterator<Item = (&'a str, Yaml)>) -> Yaml {
    Yaml::Mapping(
        entries
            .into_iter()
            .map(|(k, v)| (Yaml::from(k), v))
            .collect::<Mapping>(),
    )
}

fn opt<T: Into<Yaml>>(v: Option<T>) -> Yaml {
    v.map_or(Yaml::Null, Into::into)
}

fn dur(d: Duration) -> Yaml {
    Yaml::from(crate::util::duration::format(d))
}

/// JSON -> YAML with every object's keys sorted, so the output never depends on input order.
fn json_sorted(v: &serde_json::Value) -> Yaml {
    use serde_json::Value as J;
    match v {
        J::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            Yaml::Mapping(
                keys.into_iter()
                    .map(|k| (Yaml::from(k.as_str()), json_sorted(&o[k])))
                    .collect(),
            )
        }
        J::Array(a) => Yaml::Sequence(a.iter().map(json_sorted).collect()),
        other => serde_yaml::to_value(other).unwrap_or(Yaml::Null),
    }
}

fn budget_entry(b: Budget) -> (&'static str, Yaml) {
    match b {
        Budget::RequestsPerStep(n) => ("requests_per_step", Yaml::from(n)),
        Budget::RequestsPerWorker(n) => ("requests_per_worker", Yaml::from(n)),
        Budget::Duration(d) => ("duration", dur(d)),
    }
}

/// YAML text with every secret (`Target::redactor`) replaced wherever it was copied; replaced
/// on the value, so the mark is always a quoted string.
fn render(v: &Yaml, s: &Scenario) -> String {
    s.target.redactor().for_files().yaml_string(v)
}

/// `{file: support.txt, sha256: 0123…}`: a text by name and content hash, never the text.
fn file_ref(path: &Path, text_hash: String) -> Yaml {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    map([
        ("file", Yaml::from(name)),
        ("sha256", Yaml::from(text_hash)),
    ])
}

/// What the prompts are, by file name and content hash (a prompt's text never reaches a file
/// meant for git or a PR summary), plus the options that change what is sent.
fn prompt_entries(s: &Scenario) -> Vec<(&'static str, Yaml)> {
    let r = &s.request;
    let mut out = Vec::new();
    match &r.prompts {
        PromptSource::File => {
            out.push((
                "prompt",
                file_ref(&r.prompt_file, fingerprint_of(&r.prompt)),
            ));
        }
        PromptSource::Inline => {
            let hash = fingerprint_of(&r.prompt);
            out.push(("prompt", map([("text_sha256", Yaml::from(hash))])));
        }
        PromptSource::Set(set) => {
            let Yaml::Mapping(mut m) = file_ref(&set.file, set.sha256.clone()) else {
                unreachable!("file_ref builds a mapping")
            };
            m.insert("count".into(), Yaml::from(set.items.len() as u64));
            out.push(("prompts", Yaml::Mapping(m)));
            out.push(("prompt_order", Yaml::from(r.prompt_order.as_str())));
        }
        // The trace is part of the load (`load_entries`).
        PromptSource::Trace => {}
        PromptSource::Synthetic { tokens } => {
            if !matches!(s.load.ladder_over, LadderOver::PromptTokens { .. }) {
                out.push(("prompt", map([("synthetic_tokens", Yaml::from(*tokens))])));
            }
        }
    }
    let system = match (&r.system, &r.system_file) {
        (Some(text), Some(path)) => file_ref(path, fingerprint_of(text)),
        _ => Yaml::Null,
    };
    out.push(("system", system));
    if r.cache_bust {
        out.push(("cache_bust", Yaml::from(true)));
    }
    if let Some(t) = &r.tools {
        let Yaml::Mapping(mut m) = file_ref(&t.file, t.sha256.clone()) else {
            unreachable!("file_ref builds a mapping")
        };
        m.insert("count".into(), Yaml::from(t.list.len() as u64));
        out.push(("tools", Yaml::Mapping(m)));
    }
    if let Some(c) = &r.tool_choice {
        out.push(("tool_choice", c.to_yaml()));
    }
    if r.cache_auto {
        out.push(("cache", Yaml::from("auto")));
    }
    if let Some(k) = &r.prompt_cache_key {
        out.push(("prompt_cache_key", Yaml::from(k.as_str())));
    }
    if !r.stream {
        out.push(("stream", Yaml::from(false)));
    }
    if r.batch > 1 {
        out.push(("batch", Yaml::from(r.batch)));
    }
    if r.session_turns > 1 {
        let turns = ("turns", Yaml::from(r.session_turns));
        out.push(match r.session_chain {
            Some(field) => ("session", map([turns, ("chain", Yaml::from(field))])),
            None => ("session", map([turns])),
        });
    }
    out
}

/// The load shape beyond ladder and budget: mode, arrivals, cap, what the ladder is over, seed.
/// Closed-loop defaults add nothing, so such scenarios keep a short workload.
fn load_entries(s: &Scenario) -> Vec<(&'static str, Yaml)> {
    let l = &s.load;
    let mut out = Vec::new();
    if let LoadMode::Rate {
        arrivals,
        max_concurrency,
    } = l.mode
    {
        out.push(("mode", Yaml::from("rate")));
        let arrivals = match arrivals {
            ArrivalProcess::Poisson => Yaml::from("poisson"),
            ArrivalProcess::Gamma { burstiness } => {
                map([("gamma", map([("burstiness", Yaml::from(burstiness))]))])
            }
        };
        out.push(("arrivals", arrivals));
        out.push(("max_concurrency", opt(max_concurrency)));
    }
    if let LoadMode::Replay { max_concurrency } = l.mode {
        out.push(("mode", Yaml::from("replay")));
        if let Some(t) = &l.trace {
            let Yaml::Mapping(mut m) = file_ref(&t.file, t.sha256.clone()) else {
                unreachable!("file_ref builds a mapping")
            };
            m.insert("requests".into(), Yaml::from(t.requests.len() as u64));
            out.push(("trace", Yaml::Mapping(m)));
        }
        out.push(("max_concurrency", opt(max_concurrency)));
    }
    if let LadderOver::PromptTokens { level } = l.ladder_over {
        out.push(("ladder_over", Yaml::from("prompt_tokens")));
        let key = if matches!(l.mode, LoadMode::Rate { .. }) {
            "rate"
        } else {
            "concurrency"
        };
        out.push((key, Yaml::from(level)));
    }
    let random = s.request.prompt_order == PromptOrder::Random
        && matches!(s.request.prompts, PromptSource::Set(_));
    if matches!(l.mode, LoadMode::Rate { .. }) || random {
        out.push(("seed", Yaml::from(l.seed)));
    }
    if let Some(a) = &l.agent {
        out.push(("agent", super::agent::agent_yaml(a)));
    }
    if l.refine > 0 {
        out.push(("refine", Yaml::from(l.refine)));
    }
    if let Some(search) = &l.search {
        let bound = |d: Option<Duration>| d.map(dur);
        let slo = [
            ("ttft_p90", bound(search.slo.ttft)),
            ("ttfc_p90", bound(search.slo.ttfc)),
            ("tpot_p90", bound(search.slo.tpot)),
            ("e2e_p90", bound(search.slo.e2e)),
        ];
        let slo = map(slo.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
        out.push((
            "search",
            map([
                ("slo", slo),
                ("max", Yaml::from(search.max)),
                ("steps", Yaml::from(search.steps)),
            ]),
        ));
    }
    out
}

/// Canonical YAML of exactly what the client sends and what changes the numbers: api, models,
/// max_tokens, temperature, extra_body (sorted), ladder, budget, warmup, the load shape, and the
/// prompts by file name and content hash. Its hash is the fingerprint; `ladder diff` shows a
/// unified diff of it when fingerprints differ.
pub fn workload_yaml(s: &Scenario) -> String {
    let r = &s.request;
    let mut entries = vec![
        ("api", Yaml::from(s.target.api.as_str())),
        ("models", Yaml::from(s.target.models.clone())),
        ("max_tokens", opt(r.max_tokens)),
    ];
    entries.extend(limit_field_entry(s));
    entries.extend([
        ("temperature", opt(r.temperature)),
        (
            "extra_body",
            json_sorted(&serde_json::Value::Object(r.extra_body.clone())),
        ),
        ("ladder", Yaml::from(s.load.ladder.clone())),
        budget_entry(s.load.budget),
        ("warmup_requests", Yaml::from(s.load.warmup_requests)),
    ]);
    entries.extend(load_entries(s));
    entries.extend(prompt_entries(s));
    // Each model of an A/B run ran at half its step's streams, beside the other: not the load
    // of a run of the same models one after the other (absent otherwise, so no other
    // fingerprint changed when A/B runs came).
    if s.compare_interleave {
        entries.push(("interleaved", Yaml::from(true)));
    }
    render(&map(entries), s)
}

/// `target.tls` as run: the resolved paths (never the files' contents) and `insecure`.
fn tls_yaml(tls: &super::Tls) -> Yaml {
    let path = |p: &Option<std::path::PathBuf>| opt(p.as_ref().map(|p| p.display().to_string()));
    map([
        ("ca_file", path(&tls.ca_file)),
        ("client_cert", path(&tls.client_cert)),
        ("client_key", path(&tls.client_key)),
        ("insecure", Yaml::from(tls.insecure)),
    ])
}

fn pct(f: f64, unit: &str) -> Yaml {
    Yaml::from(format!("{}{unit}", (f * 100.0 * 1e6).round() / 1e6))
}

/// The whole scenario as run, defaults filled in and secrets replaced by `***redacted***`
/// (written as `scenario.yaml` into run directories).
pub fn normalized_yaml(s: &Scenario) -> String {
    let target = target_yaml(&s.target);
    let request = request_yaml(s);
    let load = load_yaml(s);
    let retry = retry_yaml(&s.retry);
    let gates = gates_yaml(&s.gates);
    let slo = [
        ("ttft", s.slo.ttft),
        ("ttfc", s.slo.ttfc),
        ("tpot", s.slo.tpot),
        ("e2e", s.slo.e2e),
    ];
    let limits = &s.limits;
    let v = map([
        ("name", Yaml::from(s.name.as_str())),
        ("description", opt(s.description.clone())),
        ("fingerprint", Yaml::from(s.fingerprint.as_str())),
        ("target", target),
        ("request", request),
        ("load", load),
        ("retry", retry),
        ("gates", gates),
        ("slo", map(slo.map(|(k, d)| (k, opt(d.map(dur)))))),
        (
            "compare",
            map([("baseline", opt(s.compare_baseline.clone()))]
                .into_iter()
                .chain(
                    s.compare_interleave
                        .then(|| ("interleave", Yaml::from(true))),
                )),
        ),
        ("limits", map(limits_yaml(limits))),
        ("pricing", pricing_yaml(s)),
        (
            "extra",
            map(s
                .extra
                .iter()
                .map(|(k, v)| (k.as_str(), Yaml::from(v.as_str())))),
        ),
    ]);
    render(&v, s)
}

/// `target:` as run: the endpoint with credentials masked, secret headers and the key redacted.
fn target_yaml(t: &Target) -> Yaml {
    let endpoint = match &t.endpoint {
        Endpoint::Url(u) => (
            "base_url",
            Yaml::from(crate::util::redact::mask_url_credentials(u)),
        ),
        Endpoint::Sim(p) => ("sim", serde_yaml::to_value(p).unwrap_or(Yaml::Null)),
    };
    let headers = t.headers.iter().map(|h| {
        (
            h.name.as_str(),
            Yaml::from(if h.secret { REDACTED } else { h.value.expose() }),
        )
    });
    let to = &t.timeouts;
    let timeouts = [
        ("connect", to.connect),
        ("first_token", to.first_token),
        ("idle", to.idle),
    ];
    let timeouts = timeouts
        .into_iter()
        .chain([("total", to.total)])
        .map(|(k, d)| (k, dur(d)));
    map([
        ("api", Yaml::from(t.api.as_str())),
        endpoint,
        ("api_key", opt(t.api_key.as_ref().map(|_| REDACTED))),
        ("models", Yaml::from(t.models.clone())),
        ("headers", map(headers)),
        ("timeouts", map(timeouts)),
        (
            "request_id_header",
            Yaml::from(t.request_id_header.as_deref().unwrap_or("none")),
        ),
        ("tls", tls_yaml(&t.tls)),
        ("auth", Yaml::from(t.auth.as_str())),
        ("api_version", opt(t.api_version.clone())),
        (
            "metrics",
            match &t.metrics {
                None => Yaml::Null,
                Some(m) => map([
                    ("url", Yaml::from(m.url.as_deref().unwrap_or("auto"))),
                    ("every", dur(m.every)),
                ]),
            },
        ),
    ])
}

/// `max_tokens_field`, when it is not the API's default (so scenarios that never set it keep
/// their fingerprint).
fn limit_field_entry(s: &Scenario) -> Option<(&'static str, Yaml)> {
    let f = s.request.max_tokens_field;
    (f != super::LimitField::default_for(s.target.api))
        .then(|| ("max_tokens_field", Yaml::from(f.key())))
}

/// `request:` as run, with where its prompts come from.
fn request_yaml(s: &Scenario) -> Yaml {
    let r = &s.request;
    let mut request = vec![("max_tokens", opt(r.max_tokens))];
    request.extend(limit_field_entry(s));
    request.extend([
        ("temperature", opt(r.temperature)),
        (
            "extra_body",
            json_sorted(&serde_json::Value::Object(r.extra_body.clone())),
        ),
    ]);
    request.extend(prompt_entries(s));
    request.push(("short_below", pct(r.short_below, "%")));
    map(request)
}

/// `load:` as run, with its mode's entries.
fn load_yaml(s: &Scenario) -> Yaml {
    let l = &s.load;
    let mut load = vec![
        ("ladder", Yaml::from(l.ladder.clone())),
        budget_entry(l.budget),
        ("warmup_requests", Yaml::from(l.warmup_requests)),
        ("ramp_up", dur(l.ramp_up)),
        ("pause_between_steps", dur(l.pause_between_steps)),
    ];
    load.extend(load_entries(s));
    map(load)
}

fn retry_yaml(rt: &RetryPolicy) -> Yaml {
    map([
        ("max_attempts", Yaml::from(rt.max_attempts)),
        ("initial_backoff", dur(rt.initial_backoff)),
        ("max_backoff", dur(rt.max_backoff)),
        ("max_retry_after", dur(rt.max_retry_after)),
        (
            "retry_on",
            Yaml::from(rt.retry_on.iter().map(|c| c.as_str()).collect::<Vec<_>>()),
        ),
    ])
}

fn gates_yaml(g: &Gates) -> Yaml {
    let gate = |m: &MetricGate| {
        let floor = dur(Duration::from_secs_f64(m.floor_ms.max(0.0) / 1000.0));
        map([
            ("p90", pct(m.p90, "%")),
            ("p99", pct(m.p99, "%")),
            ("floor", floor),
        ])
    };
    map([
        ("ttft", gate(&g.ttft)),
        ("ttfc", gate(&g.ttfc)),
        ("tpot", gate(&g.tpot)),
        ("itl", gate(&g.itl)),
        ("e2e", gate(&g.e2e)),
        ("error_rate", pct(g.error_rate, "pp")),
        ("throughput", pct(g.throughput, "%")),
        ("cost", map([("mean", pct(g.cost, "%"))])),
        ("cache_hit", pct(g.cache_hit, "pp")),
        ("capacity", pct(g.capacity, "%")),
    ])
}

/// `pricing:` as the run priced it, inline (a shared file's prices copied in), for the
/// scenario's models only: `diff`, `report` and `plan` read the prices from the run itself.
fn pricing_yaml(s: &Scenario) -> Yaml {
    let Some(p) = &s.pricing else {
        return Yaml::Null;
    };
    let models = s.target.models.iter().filter_map(|m| {
        let price = p.models.get(m)?;
        let mut entries = vec![("input", Yaml::from(price.input))];
        if let Some(c) = price.cached_input {
            entries.push(("cached_input", Yaml::from(c)));
        }
        if let Some(c) = price.cache_write_input {
            entries.push(("cache_write_input", Yaml::from(c)));
        }
        entries.push(("output", Yaml::from(price.output)));
        Some((m.as_str(), map(entries)))
    });
    map([
        ("currency", Yaml::from(p.currency.as_str())),
        ("models", map(models)),
    ])
}

/// `limits:`: the three every account has, then ITPM, OTPM and how they count only when
/// declared (so scenarios without them normalize as before).
fn limits_yaml(l: &super::Limits) -> Vec<(&'static str, Yaml)> {
    let mut v = vec![
        ("concurrency", opt(l.concurrency)),
        ("rpm", opt(l.rpm)),
        ("tpm", opt(l.tpm)),
    ];
    if l.tpm_counts != super::TpmCounts::Used {
        let counts = serde_yaml::to_value(l.tpm_counts).unwrap_or(Yaml::Null);
        v.push(("tpm_counts", counts));
    }
    if let Some(t) = l.itpm {
        v.push(("itpm", Yaml::from(t)));
        let cached = if l.itpm_cached { "counted" } else { "free" };
        v.push(("itpm_cached", Yaml::from(cached)));
    }
    if let Some(t) = l.otpm {
        v.push(("otpm", Yaml::from(t)));
    }
    v
}
