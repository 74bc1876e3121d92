//! Scenario files: YAML -> validated `Scenario` (interpolation, human durations, relative paths,
//! errors that name file, line and field) and the workload fingerprint that baselines record.
//!
//! Layout: this file holds the public types and re-exports the public functions. `loading`
//! runs the pipeline (interpolate, parse, validate, fingerprint); `interpolate` expands
//! `${VAR}`; `raw` is the file's serde shape; `build` validates it into a `Scenario`; `errors`
//! and `lines` turn problems into located, redacted messages; `normalize` writes the canonical
//! YAML that runs and baselines record.

use crate::dialect::{Api, KeyHeader};
use crate::model::ErrorClass;
use crate::model::Slo;
use crate::sim::SimParams;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The name of the scenario a run directory records (`runs/<scenario>/<time>/scenario.yaml`).
pub const RECORDED_FILE: &str = "scenario.yaml";

pub mod agent;
pub mod arrivals;
pub mod bounded;
mod build;
mod build_load;
pub mod build_pricing;
mod build_request;
mod build_target;
pub mod build_telemetry;
mod build_unstreamed;
mod defaults;
mod errors;
mod gates;
mod interpolate;
mod limits;
mod lines;
mod loading;
mod normalize;
mod overrides;
mod prompts;
mod raw;
pub mod recorded;
mod request;
mod scalars;
pub mod schema;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_embeddings;
#[cfg(test)]
mod tests_overrides;
#[cfg(test)]
mod tests_pricing;
#[cfg(test)]
mod tests_prompt;
#[cfg(test)]
mod tests_replay;
#[cfg(test)]
mod tests_token_limit;
#[cfg(test)]
mod tests_tools;
#[cfg(test)]
mod tests_workload;
mod tls;
pub mod token_limit;
pub mod tools;
pub mod trace;
pub mod trace_otlp;

pub use arrivals::ArrivalProcess;
pub use build::{gates_from_yaml, load_from_yaml};
pub use defaults::non_default_yaml;
pub use limits::{Limits, TpmCounts};
pub use loading::{load, load_str, load_str_with};
pub use normalize::{normalized_yaml, workload_yaml};
pub use overrides::{adhoc_name, rewrite, OverrideError, Overrides};
pub use prompts::{
    seeded_words, synthetic_prompt, PromptContent, PromptItem, PromptSet, TOKENS_PER_WORD,
};
pub use recorded::Recorded;
pub use request::{PromptOrder, PromptSource, RequestSpec, DEFAULT_SHORT_BELOW};
pub use token_limit::LimitField;

/// The 1-based line of a dotted field (e.g. `["target", "headers"]`) in scenario text, when the
/// whole path is there (a key inside a flow mapping counts as its parent's line).
pub fn field_line(text: &str, path: &[&str]) -> Option<usize> {
    lines::locate_span(text, path).filter(|s| s.2).map(|s| s.0)
}

/// A secret (API key, secret header value). Never printed: `Debug`/`Display` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// An API key as ladder sends it, the one rule `run` (through the scenario) and `check`
    /// (scenario, `--base-url`, `--from`) share: the whitespace around the value (a trailing
    /// newline from a key file, spaces from a copy-paste) is dropped; whitespace or control
    /// characters inside it stay, to be diagnosed by `check` and refused where the request is
    /// built (`client::http`).
    pub fn api_key(raw: &str) -> Secret {
        Secret(raw.trim().to_string())
    }
    /// Whether `raw` has whitespace around it that [`Secret::api_key`] drops.
    pub fn has_whitespace_around(raw: &str) -> bool {
        raw.trim().len() != raw.len()
    }
    /// The raw value, for the one place that puts it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// `…a1b2`: the last 4 characters, enough to tell keys apart, never enough to use one;
    /// nothing at all of a key under 12 characters (4 would be a third of it).
    pub fn masked(&self) -> String {
        let chars: Vec<char> = self.0.chars().collect();
        if chars.len() < 12 {
            return "…".into();
        }
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("…{tail}")
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// Where requests go.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one per scenario: boxing buys nothing
pub enum Endpoint {
    /// A real server, e.g. `https://api.openai.com/v1` (no trailing slash).
    Url(String),
    /// The embedded simulator, started in-process on 127.0.0.1 with a random port.
    Sim(SimParams),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Timeouts {
    pub connect: Duration,
    pub first_token: Duration,
    pub idle: Duration,
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_token: Duration::from_secs(60),
            idle: Duration::from_secs(30),
            total: Duration::from_secs(300),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub api: Api,
    pub endpoint: Endpoint,
    pub api_key: Option<Secret>,
    pub models: Vec<String>,
    /// Extra headers; values that came from `${VAR}` interpolation or whose name looks like a
    /// credential (authorization, *key*, *token*, *secret*) are `secret: true`.
    pub headers: Vec<Header>,
    pub timeouts: Timeouts,
    /// The header that carries each request's id (a UUID); `None` sends none
    /// (`request_id_header: none`). Default `x-request-id`.
    pub request_id_header: Option<String>,
    pub tls: Tls,
    /// How the API key is sent (`target.auth`).
    pub auth: Auth,
    /// `?api-version=` appended to every request URL (Azure OpenAI deployment URLs).
    pub api_version: Option<String>,
    /// Values interpolated from secret-named variables (`${OPENAI_API_KEY}`) anywhere in the
    /// scenario, e.g. in `request.extra_body`: hidden wherever the scenario is written.
    pub secrets: Vec<Secret>,
    /// The server's Prometheus endpoint scraped during the run (`target.metrics`).
    pub metrics: Option<MetricsTarget>,
}

/// `target.metrics`: where and how often to scrape the server's `/metrics`.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsTarget {
    /// `None`: `metrics: auto`, the base URL's origin + `/metrics`.
    pub url: Option<String>,
    pub every: std::time::Duration,
}

/// Default `target.metrics.every`.
pub const METRICS_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// How the API key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer KEY` (OpenAI and most compatible servers).
    Bearer,
    /// `api-key: KEY` (Azure OpenAI).
    ApiKey,
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
}

impl Auth {
    pub fn as_str(self) -> &'static str {
        match self {
            Auth::Bearer => "bearer",
            Auth::ApiKey => "api-key",
            Auth::XApiKey => "x-api-key",
        }
    }

    /// The default for an API at a host: `x-api-key` for anthropic-messages, `api-key` for Azure
    /// OpenAI hosts (`*.openai.azure.com`, `*.cognitiveservices.azure.com`,
    /// `*.services.ai.azure.com`), else a bearer token.
    pub fn default_for(api: Api, host: &str) -> Auth {
        let host = host.to_ascii_lowercase();
        let azure = [
            ".openai.azure.com",
            ".cognitiveservices.azure.com",
            ".services.ai.azure.com",
        ];
        if api.spec().key_header == KeyHeader::XApiKey {
            Auth::XApiKey
        } else if azure.iter().any(|d| host.ends_with(d)) {
            Auth::ApiKey
        } else {
            Auth::Bearer
        }
    }
}

/// `target.tls`: trust on top of the bundled roots and the system store, and mutual TLS.
/// Paths are resolved against the scenario's folder and were readable PEM when it loaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tls {
    /// Extra CA certificates (PEM bundle) to trust: a private CA, a TLS-inspecting proxy.
    pub ca_file: Option<PathBuf>,
    /// Client certificate chain (PEM) for mutual TLS; always with `client_key`.
    pub client_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    pub client_key: Option<PathBuf>,
    /// Accept any server certificate (a warning is printed on every run).
    pub insecure: bool,
}

impl Target {
    /// Hides the API key, every secret header value, every value interpolated from a
    /// secret-named variable, the simulator's `require_api_key` and the values of secret-named
    /// environment variables (`crate::util::redact` rules).
    pub fn redactor(&self) -> crate::util::redact::Redactor {
        let headers = self.headers.iter().filter(|h| h.secret).map(|h| &h.value);
        let secrets = self.api_key.iter().chain(headers).chain(&self.secrets);
        let sim_key = match &self.endpoint {
            Endpoint::Sim(p) => p.require_api_key.as_deref(),
            Endpoint::Url(_) => None,
        };
        crate::util::redact::Redactor::new(secrets.map(Secret::expose).chain(sim_key)).and_env()
    }
}

/// The header request ids go in unless `target.request_id_header` says otherwise.
pub const DEFAULT_REQUEST_ID_HEADER: &str = "x-request-id";

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub name: String,
    pub value: Secret,
    pub secret: bool,
}

/// How much work a step does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// Total requests per step, shared by the step's workers.
    RequestsPerStep(u64),
    /// Requests each worker sends per step.
    RequestsPerWorker(u64),
    /// Workers keep sending until this much time has passed (in-flight requests finish).
    Duration(Duration),
}

/// Closed loop (a fixed number of streams), open loop (requests arrive at a rate) or a trace's
/// own arrivals replayed at a multiple of their rate (`Load::trace`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoadMode {
    Concurrency,
    Rate {
        arrivals: ArrivalProcess,
        /// Arrivals finding this many requests in flight are dropped (counted, never delayed).
        max_concurrency: Option<u32>,
    },
    /// The ladder's values are speeds: multiples of the trace's arrival rate.
    Replay {
        /// As in rate mode.
        max_concurrency: Option<u32>,
    },
}

impl LoadMode {
    /// Requests go out at scheduled times whatever the server does (rate and replay): records
    /// carry a send lag, and latency is also read from the scheduled time.
    pub fn open_loop(self) -> bool {
        !matches!(self, LoadMode::Concurrency)
    }

    /// The cap on requests in flight of an open-loop load.
    pub fn max_concurrency(self) -> Option<u32> {
        match self {
            LoadMode::Concurrency => None,
            LoadMode::Rate {
                max_concurrency, ..
            }
            | LoadMode::Replay { max_concurrency } => max_concurrency,
        }
    }
}

/// What the ladder's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LadderOver {
    /// Concurrency (streams) or, in rate mode, requests per second.
    Load,
    /// Synthetic prompt size in tokens; the load stays at `level` (streams or requests/s).
    PromptTokens { level: u32 },
}

impl Load {
    /// Requests the scenario plans for the step with ladder value `value` (warmup excluded):
    /// `requests_per_step`, or `requests_per_worker` × the step's workers (its streams, or the
    /// fixed `concurrency` of a prompt-size ladder); `None` for steps sized by `duration`.
    pub fn planned_requests(&self, value: u32) -> Option<u64> {
        match self.budget {
            Budget::RequestsPerStep(n) => Some(n),
            Budget::RequestsPerWorker(k) => {
                let workers = match self.ladder_over {
                    LadderOver::Load => value,
                    LadderOver::PromptTokens { level } => level,
                };
                Some(k * u64::from(workers))
            }
            Budget::Duration(_) => None,
        }
    }

    /// The unit of the ladder's values, as written in `summary.csv`'s `ladder_unit` column.
    pub fn ladder_unit(&self) -> crate::model::LadderUnit {
        use crate::model::LadderUnit;
        match (self.ladder_over, self.mode) {
            (LadderOver::PromptTokens { .. }, _) => LadderUnit::PromptTokens,
            (LadderOver::Load, LoadMode::Concurrency) if self.agent.is_some() => LadderUnit::Agents,
            (LadderOver::Load, LoadMode::Concurrency) => LadderUnit::Streams,
            (LadderOver::Load, LoadMode::Rate { .. }) => LadderUnit::Rps,
            (LadderOver::Load, LoadMode::Replay { .. }) => LadderUnit::Speed,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// The step values, each ≥ 1, increasing: concurrency, requests/s (rate mode) or prompt
    /// tokens (`ladder_over: prompt_tokens`).
    pub ladder: Vec<u32>,
    pub mode: LoadMode,
    pub ladder_over: LadderOver,
    /// Seeds arrival schedules and random prompt order, so a rerun sends the same workload.
    pub seed: u64,
    pub budget: Budget,
    /// Per step, sent before measuring, not recorded.
    pub warmup_requests: u32,
    /// Spread the workers' first requests evenly over this time.
    pub ramp_up: Duration,
    pub pause_between_steps: Duration,
    /// `refine: N`: after the planned steps, up to N more that bisect the knee interval and the
    /// interval where the SLO first fails (0: none).
    pub refine: u32,
    /// `mode: replay`: the trace whose arrivals each step replays (`None` for a load read back
    /// from a run's recorded `scenario.yaml`, which names the trace by hash only).
    pub trace: Option<std::sync::Arc<trace::Trace>>,
    /// `search: {slo, max, steps}`: then the highest load meeting the SLO (`findings::search`).
    pub search: Option<Search>,
    /// `agent:`: every worker is an agent doing multi-turn tasks (`agent`).
    pub agent: Option<agent::Agent>,
}

/// `load.search`: the SLO to meet (P90 bounds), the highest load to try, and the most steps the
/// search may add.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    pub slo: Slo,
    pub max: u32,
    pub steps: u32,
}

/// `load.search.max` when the scenario does not set it.
pub const DEFAULT_SEARCH_MAX: u32 = 1024;
/// `load.search.steps` when the scenario does not set it: doubling to 1024 and bisecting back
/// to one step takes about 20.
pub const DEFAULT_SEARCH_STEPS: u32 = 16;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// 1 = no retries (the default: 429s are measured, not hidden).
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Longest `Retry-After` honoured.
    pub max_retry_after: Duration,
    pub retry_on: Vec<ErrorClass>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 1,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            retry_on: vec![ErrorClass::Http429, ErrorClass::Http5xx],
        }
    }
}

/// Relative thresholds are fractions (10% = 0.10).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricGate {
    pub p90: f64,
    pub p99: f64,
    pub floor_ms: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gates {
    pub ttft: MetricGate,
    /// Time to the first answer token: what is not set follows `ttft`'s gate.
    pub ttfc: MetricGate,
    pub tpot: MetricGate,
    pub itl: MetricGate,
    pub e2e: MetricGate,
    /// Percentage points, as a fraction (1pp = 0.01).
    pub error_rate: f64,
    /// Relative drop of TPM/RPS that counts as a regression (0.10).
    pub throughput: f64,
    /// `cost: {mean: 10%}`: relative rise of the mean cost per successful request that counts
    /// as a regression (judged only when the new run has `pricing:`; docs/cost.md).
    pub cost: f64,
    /// `cache_hit: 5pp`: drop of the cache hit share (points, as a fraction) that regresses.
    pub cache_hit: f64,
    /// `capacity: 10%`: relative fall of the estimated cap, or of the highest load meeting the
    /// SLO, that regresses when the fall is beyond the uncertainty (`compare::cap`).
    pub capacity: f64,
}

impl Default for Gates {
    fn default() -> Self {
        let ttft = MetricGate {
            p90: 0.10,
            p99: 0.20,
            floor_ms: 50.0,
        };
        let per_token = MetricGate {
            floor_ms: 1.0,
            ..ttft
        };
        Gates {
            ttft,
            ttfc: ttft,
            tpot: per_token,
            itl: per_token,
            e2e: MetricGate {
                p90: 0.10,
                p99: 0.20,
                floor_ms: 100.0,
            },
            error_rate: 0.01,
            throughput: 0.10,
            cost: 0.10,
            cache_hit: 0.05,
            capacity: 0.10,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// `[a-z0-9-]`, used for file names.
    pub name: String,
    pub description: Option<String>,
    pub target: Target,
    pub request: RequestSpec,
    pub load: Load,
    pub retry: RetryPolicy,
    pub gates: Gates,
    pub slo: Slo,
    pub limits: Limits,
    /// Hex SHA-256 (first 16 hex digits) of the normalized workload (see `workload_yaml`).
    pub fingerprint: String,
    /// Extra key/values for the record (unused by the runner).
    pub extra: BTreeMap<String, String>,
    /// `compare: {baseline: A}`: in a multi-model run, the other models are judged against A.
    pub compare_baseline: Option<String>,
    /// `compare: {baseline: A, interleave: true}`: an A/B run. Its two models' requests are
    /// interleaved at every step (the step's streams in total, half of each model's at any
    /// moment), and the other model is gated against A (docs/gate.md, "Interleaved A/B").
    pub compare_interleave: bool,
    /// `baselines: {keep: K}`: `--save-baseline` keeps the last K runs as a pooled baseline
    /// (K = 1, the default, replaces it). Storage policy, not part of the workload.
    pub baselines_keep: Option<u32>,
    /// `telemetry.otlp`: the OTLP/HTTP export of the run's metrics (not part of the workload).
    pub otlp: Option<OtlpTarget>,
    /// `pricing:` (inline or a shared file): what each model's tokens cost. Not part of the
    /// workload; recorded in the run's `scenario.yaml` so every reader prices it the same way.
    pub pricing: Option<crate::model::Pricing>,
}

/// `telemetry.otlp: {endpoint, headers, every, traces, protocol}` (docs/telemetry.md).
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpTarget {
    /// The OTLP/HTTP base URL (`/v1/metrics` and `/v1/traces` go under it).
    pub endpoint: String,
    /// Sent with every export; values are secrets.
    pub headers: Vec<(String, Secret)>,
    pub every: std::time::Duration,
    /// One span per request (`traces: true`).
    pub traces: bool,
    /// `protocol: http/json` instead of protobuf.
    pub json: bool,
}

/// Most runs a pooled baseline keeps (`baselines.keep`).
pub const MAX_BASELINE_RUNS: u32 = 50;

/// Most requests one step may send (`load.requests_per_step`): far beyond any useful step
/// (a step of 10 million requests at 1,000 RPS runs close to three hours) yet a clear message
/// instead of a plan that would never end.
pub const MAX_REQUESTS_PER_STEP: u64 = 10_000_000;

/// Why a scenario could not be loaded: `scenarios/x.yaml:12: load.ladder: what is wrong; fix`.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    // `error` is shown in the message, not chained as a source, so it is printed once.
    #[error("{}: cannot read the scenario file: {error}", .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `line` is 1-based; `field` a dotted path such as `load.ladder` (empty if none applies).
    #[error("{}", show(.file, .line, .field, .message))]
    Invalid {
        file: PathBuf,
        line: Option<usize>,
        field: String,
        message: String,
    },
}

fn show(file: &Path, line: &Option<usize>, field: &str, message: &str) -> String {
    let line = line.map(|l| format!(":{l}")).unwrap_or_default();
    let field = if field.is_empty() {
        String::new()
    } else {
        format!(" {field}:")
    };
    format!("{}{line}:{field} {message}", file.display())
}
