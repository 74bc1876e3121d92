//! Scenario files: YAML -> validated `Scenario` (interpolation, human durations, relative paths,
//! errors that name file, line and field) and the workload fingerprint that baselines record.

use crate::record::ErrorClass;
use crate::sim::SimParams;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A secret (API key, secret header value). Never printed: `Debug`/`Display` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The raw value, for the one place that puts it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// `sk-…a1b2`: enough to tell keys apart, never enough to use one.
    pub fn masked(&self) -> String {
        let chars: Vec<char> = self.0.chars().collect();
        if chars.len() <= 8 {
            return "…".into();
        }
        let head: String = chars[..3].iter().collect();
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("{head}…{tail}")
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST {base_url}/chat/completions`
    OpenAiChat,
    /// `POST {base_url}/completions`
    OpenAiCompletions,
    /// `POST {base_url}/messages`
    AnthropicMessages,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAiChat => "openai-chat",
            Api::OpenAiCompletions => "openai-completions",
            Api::AnthropicMessages => "anthropic-messages",
        }
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub name: String,
    pub value: Secret,
    pub secret: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    /// Prompt text (read from `prompt_file`).
    pub prompt: String,
    pub prompt_file: PathBuf,
    pub system: Option<String>,
    pub system_file: Option<PathBuf>,
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// Merged into the JSON body last (may override anything).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
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

#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// Concurrency per step, each ≥ 1.
    pub ladder: Vec<u32>,
    pub budget: Budget,
    /// Per step, sent before measuring, not recorded.
    pub warmup_requests: u32,
    /// Spread the workers' first requests evenly over this time.
    pub ramp_up: Duration,
    pub pause_between_steps: Duration,
}

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
    pub tpot: MetricGate,
    pub itl: MetricGate,
    pub e2e: MetricGate,
    /// Percentage points, as a fraction (1pp = 0.01).
    pub error_rate: f64,
    /// Relative drop of TPM/RPS that counts as a regression (0.10).
    pub throughput: f64,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            ttft: MetricGate {
                p90: 0.10,
                p99: 0.20,
                floor_ms: 50.0,
            },
            tpot: MetricGate {
                p90: 0.10,
                p99: 0.20,
                floor_ms: 1.0,
            },
            itl: MetricGate {
                p90: 0.10,
                p99: 0.20,
                floor_ms: 1.0,
            },
            e2e: MetricGate {
                p90: 0.10,
                p99: 0.20,
                floor_ms: 100.0,
            },
            error_rate: 0.01,
            throughput: 0.10,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slo {
    pub ttft: Option<Duration>,
    pub tpot: Option<Duration>,
    pub e2e: Option<Duration>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub concurrency: Option<u32>,
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
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
}

// ===================================================================== loading

use serde::{Deserialize, Deserializer};
use serde_yaml::{Mapping, Value as Yaml};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Why a scenario could not be loaded: `scenarios/x.yaml:12: load.ladder: what is wrong; fix`.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{}: cannot read the scenario file: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
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

/// Reads and validates a scenario file; `${VAR}` comes from the process environment.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    load_str(&text, path, &|name| std::env::var(name).ok())
}

/// Validates scenario text as if read from `path` (prompt files are resolved next to it).
pub fn load_str(
    text: &str,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Scenario, ScenarioError> {
    let interp = interpolate(text, env).map_err(|(line, message)| {
        let cx = Ctx {
            file: path,
            text,
            secrets: Vec::new(),
        };
        cx.err_at(Some(line), path_at_line(text, line), message)
    })?;
    let mut cx = Ctx {
        file: path,
        text: &interp.text,
        secrets: Vec::new(),
    };
    for sub in &interp.subs {
        let at = path_at_line(text, sub.line);
        if looks_secret(&sub.var)
            || at.starts_with("target.api_key")
            || at.starts_with("target.headers")
        {
            cx.secrets.push(sub.value.clone());
        }
    }
    let blank = |l: &str| matches!(l.trim(), "" | "---") || l.trim().starts_with('#');
    if interp.text.lines().all(blank) {
        let msg = "the file is empty; a scenario needs name, target, request and load";
        return Err(cx.err_at(None, String::new(), msg.into()));
    }
    let raw: RawScenario = serde_yaml::from_str(&interp.text).map_err(|e| cx.yaml_err(&e))?;
    cx.secrets
        .extend(raw.target.as_ref().and_then(|t| t.api_key.clone()));
    let mut s = build(&cx, raw, &interp)?;
    s.fingerprint = fingerprint_of(&workload_yaml(&s));
    Ok(s)
}

/// First 16 hex digits of SHA-256 of `text`.
fn fingerprint_of(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What errors need: the file, the (interpolated) text to find lines in, values to hide.
struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
    secrets: Vec<String>,
}

/// `bail!(cx, "load.ladder", "the ladder is empty; ...")`: returns a located error.
macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

impl Ctx<'_> {
    /// An error about the field at dotted `path`, on the line of that field (or its parent).
    fn err(&self, path: &str, message: String) -> ScenarioError {
        let line = locate_span(self.text, &path.split('.').collect::<Vec<_>>()).map(|l| l.0);
        self.err_at(line, path.to_string(), message)
    }

    fn err_at(&self, line: Option<usize>, field: String, message: String) -> ScenarioError {
        let message = redact(&message, &self.secrets, "***");
        ScenarioError::Invalid {
            file: self.file.to_path_buf(),
            line,
            field,
            message,
        }
    }

    fn yaml_err(&self, e: &serde_yaml::Error) -> ScenarioError {
        let line = e.location().map(|l| l.line());
        let full = strip_marks(&e.to_string());
        let (mut field, mut msg) = match full.split_once(": ") {
            Some((p, m)) if !p.is_empty() && !p.contains([' ', '`', '"']) => (p.into(), m.into()),
            _ => (String::new(), full.clone()),
        };
        let join = |f: &str, k: &str| {
            if f.is_empty() {
                k.to_string()
            } else {
                format!("{f}.{k}")
            }
        };
        if let Some(rest) = msg.clone().strip_prefix("unknown field `") {
            let names: Vec<&str> = rest
                .split('`')
                .step_by(2)
                .filter(|n| !n.is_empty())
                .collect();
            let unknown = names.first().copied().unwrap_or_default();
            let hint = did_you_mean(unknown, names.get(1..).unwrap_or_default());
            let list = names.get(1..).unwrap_or_default().join(", ");
            msg = format!("unknown field `{unknown}`{hint}; the fields allowed here are: {list}");
            field = join(&field, unknown);
        } else if let Some(rest) = msg.clone().strip_prefix("duplicate field `") {
            let key = rest.split('`').next().unwrap_or_default();
            return self.err(&join(&field, key), format!("`{key}` is set twice"));
        } else if field.is_empty() {
            field = line.map(|l| path_at_line(self.text, l)).unwrap_or_default();
        }
        if let Some(i) = msg.find("expected struct ") {
            msg = format!("{}expected a mapping", &msg[..i]);
        }
        self.err_at(
            line,
            field,
            msg.replace("expected a sequence", "expected a list like [a, b]"),
        )
    }
}

/// Drops serde_yaml's ` at line 3 column 5` (the line is reported separately).
fn strip_marks(s: &str) -> String {
    let digits = |t: &str| t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (mut out, mut rest) = (String::new(), s);
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 9..];
        match after[digits(after)..].strip_prefix(" column ") {
            Some(col) if digits(after) > 0 => rest = &col[digits(col)..],
            _ => (out, rest) = (out + " at line ", after),
        }
    }
    out + rest
}

/// ` (did you mean `requests_per_step`?)` when a candidate is close enough, else empty.
fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    const ALIASES: [(&str, &str); 4] = [
        ("concurrency", "ladder"),
        ("url", "base_url"),
        ("key", "api_key"),
        ("prompt", "prompt_file"),
    ];
    let alias = ALIASES
        .iter()
        .find(|(w, c)| *w == word && candidates.contains(c))
        .map(|p| p.1);
    let best = candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|p| p.1);
    alias
        .or(best)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// Replaces every secret of 4+ characters (shorter ones would mangle ordinary text).
fn redact(text: &str, secrets: &[String], with: &str) -> String {
    let long = secrets.iter().filter(|s| s.len() >= 4);
    long.fold(text.to_string(), |t, s| t.replace(s.as_str(), with))
}

/// Header names and variable names that carry credentials.
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["auth", "key", "token", "secret", "cookie", "password"]
        .iter()
        .any(|w| n.contains(w))
}

// ------------------------------------------------------------- raw file shape

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    target: Option<RawTarget>,
    request: Option<RawRequest>,
    load: Option<RawLoad>,
    retry: Option<RawRetry>,
    gates: Option<RawGates>,
    slo: Option<RawSlo>,
    limits: Option<RawLimits>,
    extra: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    api: Option<String>,
    base_url: Option<String>,
    /// Outer `Some` when the key is present, so that a bare `sim:` selects the simulator.
    #[serde(default, deserialize_with = "present")]
    sim: Option<Option<SimParams>>,
    api_key: Option<String>,
    models: Option<Vec<String>>,
    model: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    timeouts: Option<RawTimeouts>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<SimParams>>, D::Error> {
    Option::<SimParams>::deserialize(d).map(Some)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTimeouts {
    connect: Option<Dur>,
    first_token: Option<Dur>,
    idle: Option<Dur>,
    total: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    prompt_file: Option<String>,
    system_file: Option<String>,
    max_tokens: Option<Pos<u32>>,
    temperature: Option<f64>,
    extra_body: Option<Yaml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoad {
    ladder: Option<Vec<Concurrency>>,
    requests_per_step: Option<Pos<u64>>,
    requests_per_worker: Option<Pos<u64>>,
    duration: Option<Dur>,
    warmup_requests: Option<u32>,
    ramp_up: Option<Dur>,
    pause_between_steps: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetry {
    max_attempts: Option<Pos<u32>>,
    initial_backoff: Option<Dur>,
    max_backoff: Option<Dur>,
    max_retry_after: Option<Dur>,
    retry_on: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGates {
    ttft: Option<RawMetricGate>,
    tpot: Option<RawMetricGate>,
    itl: Option<RawMetricGate>,
    e2e: Option<RawMetricGate>,
    error_rate: Option<Fraction>,
    throughput: Option<Fraction>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetricGate {
    p90: Option<Fraction>,
    p99: Option<Fraction>,
    floor: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlo {
    ttft: Option<Dur>,
    tpot: Option<Dur>,
    e2e: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    concurrency: Option<Pos<u32>>,
    rpm: Option<Pos<u64>>,
    tpm: Option<Pos<u64>>,
}

/// Parses a scalar's text inside the deserializer, so serde_yaml reports the scalar's own line.
struct ScalarVisitor<F>(&'static str, F);

impl<T, F: FnOnce(&str) -> Result<T, String>> serde::de::Visitor<'_> for ScalarVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        (self.1)(v).map_err(E::custom)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
}

/// A human duration (`250ms`, `2s`, `1m30s`).
struct Dur(Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| crate::duration::parse(t).map(Dur);
        d.deserialize_str(ScalarVisitor("a duration such as 2s", parse))
    }
}

fn dur_or(d: Option<Dur>, default: Duration) -> Duration {
    d.map_or(default, |d| d.0)
}

/// A whole number ≥ 1 that fits in `T`.
struct Pos<T>(T);

impl<'de, T: TryFrom<i64>> Deserialize<'de> for Pos<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| match t.parse::<i64>().ok().filter(|n| *n >= 1).map(T::try_from) {
            Some(Ok(v)) => Ok(Pos(v)),
            _ => Err(format!(
                "`{t}` is not allowed here; write a whole number of 1 or more"
            )),
        };
        d.deserialize_i64(ScalarVisitor("a whole number", parse))
    }
}

fn pos<T>(p: Option<Pos<T>>) -> Option<T> {
    p.map(|p| p.0)
}

/// One ladder step (its own type for a message that says what a step is).
struct Concurrency(u32);

impl<'de> Deserialize<'de> for Concurrency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| match t.parse::<i64>().map(u32::try_from) {
            Ok(Ok(c)) if c >= 1 => Ok(Concurrency(c)),
            _ => Err(format!(
                "concurrency {t} is not allowed: each step needs at least 1 concurrent stream, \
                 e.g. ladder: [5, 10, 20]"
            )),
        };
        d.deserialize_i64(ScalarVisitor("a whole number", parse))
    }
}

/// `10%`, `1pp` or a fraction such as `0.1`.
struct Fraction(f64);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| parse_fraction(t).map(Fraction);
        d.deserialize_str(ScalarVisitor("a percentage such as 10%", parse))
    }
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix("pp").or_else(|| t.strip_suffix('%')) {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && (scale < 1.0 || v <= 1.0) => Ok(v * scale),
        Ok(v) if v > 1.0 => Err(format!(
            "`{t}` is ambiguous; write `{t}%` or the fraction {}",
            v / 100.0
        )),
        _ => Err(format!(
            "`{t}` is not a percentage of 0 or more; write e.g. `10%`, `1pp` or 0.1"
        )),
    }
}

// ------------------------------------------------------------------ validation

fn build(cx: &Ctx, raw: RawScenario, interp: &Interpolated) -> Result<Scenario, ScenarioError> {
    let Some(name) = raw.name else {
        bail!(
            cx,
            "name",
            "missing; add e.g. `name: {}` (used for file names)",
            slugify(cx.file)
        )
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
    {
        let fix = slugify(Path::new(&name));
        bail!(
            cx,
            "name",
            "`{name}` is not allowed; use a-z, 0-9 and -, e.g. `{fix}`"
        )
    }
    let limits = raw.limits.map_or_else(Limits::default, |l| Limits {
        concurrency: pos(l.concurrency),
        rpm: pos(l.rpm),
        tpm: pos(l.tpm),
    });
    let slo = raw.slo.map_or_else(Slo::default, |s| Slo {
        ttft: s.ttft.map(|d| d.0),
        tpot: s.tpot.map(|d| d.0),
        e2e: s.e2e.map(|d| d.0),
    });
    Ok(Scenario {
        path: cx.file.to_path_buf(),
        name,
        description: raw.description.filter(|d| !d.trim().is_empty()),
        target: build_target(cx, raw.target, interp)?,
        request: build_request(cx, raw.request)?,
        load: build_load(cx, raw.load)?,
        retry: build_retry(cx, raw.retry)?,
        gates: build_gates(raw.gates),
        slo,
        limits,
        fingerprint: String::new(),
        extra: raw.extra.unwrap_or_default(),
    })
}

/// `Support Chat.yaml` -> `support-chat`.
fn slugify(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let s: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn build_target(
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
    let api = match t.api.as_deref() {
        None | Some("openai-chat") => Api::OpenAiChat,
        Some("openai-completions") => Api::OpenAiCompletions,
        Some("anthropic-messages") => Api::AnthropicMessages,
        Some(other) => {
            let names = ["openai-chat", "openai-completions", "anthropic-messages"];
            let hint = did_you_mean(other, &names);
            bail!(
                cx,
                "target.api",
                "unknown api `{other}`{hint}; use one of {}",
                names.join(", ")
            )
        }
    };
    let endpoint = match (t.base_url.filter(|u| !u.trim().is_empty()), t.sim) {
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
    let api_key = t
        .api_key
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty());
    let models = match (t.models, t.model) {
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
    let span = locate_span(cx.text, &["target", "headers"]).filter(|s| s.2);
    let mut headers = Vec::new();
    for (name, value) in t.headers.unwrap_or_default() {
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
        let secret = looks_secret(&name) || interpolated;
        headers.push(Header {
            name,
            value: Secret::new(value),
            secret,
        });
    }
    let (d, rt) = (Timeouts::default(), t.timeouts.unwrap_or_default());
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
    let api_key = api_key.map(Secret::new);
    Ok(Target {
        api,
        endpoint,
        api_key,
        models,
        headers,
        timeouts,
    })
}

fn check_url(cx: &Ctx, url: &str) -> Result<String, ScenarioError> {
    let trimmed = url.trim().trim_end_matches('/');
    // A URL with user:password@ is never echoed.
    let shown = if trimmed.contains('@') {
        "the URL".into()
    } else {
        format!("`{trimmed}`")
    };
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

/// Reads a prompt/system file relative to the scenario's directory.
fn read_text(cx: &Ctx, key: &str, rel: &str) -> Result<(PathBuf, String), ScenarioError> {
    let path = cx.file.parent().unwrap_or(Path::new("")).join(rel);
    let shown = path.display();
    match std::fs::read_to_string(&path) {
        Err(e) => bail!(
            cx,
            &format!("request.{key}"),
            "cannot read {shown} ({e}); the path is relative to the scenario file"
        ),
        Ok(t) if t.trim().is_empty() => {
            bail!(
                cx,
                &format!("request.{key}"),
                "{shown} is empty; put the text to send in it"
            )
        }
        Ok(t) => Ok((path, t)),
    }
}

fn build_request(cx: &Ctx, raw: Option<RawRequest>) -> Result<RequestSpec, ScenarioError> {
    let Some(r) = raw else {
        bail!(
            cx,
            "request",
            "missing; add e.g. request: {{prompt_file: prompts/support.txt}}"
        )
    };
    let Some(pf) = r.prompt_file.filter(|p| !p.trim().is_empty()) else {
        bail!(
            cx,
            "request.prompt_file",
            "missing; put the prompt in a file, e.g. prompt_file: prompts/support.txt"
        )
    };
    let (prompt_file, prompt) = read_text(cx, "prompt_file", &pf)?;
    let (system_file, system) = match r.system_file.filter(|p| !p.trim().is_empty()) {
        Some(sf) => read_text(cx, "system_file", &sf).map(|(p, t)| (Some(p), Some(t)))?,
        None => (None, None),
    };
    if let Some(t) = r.temperature.filter(|t| !t.is_finite() || *t < 0.0) {
        bail!(
            cx,
            "request.temperature",
            "{t} is not allowed; write 0 or more, e.g. 0.7"
        )
    }
    let extra_body = match r.extra_body {
        None | Some(Yaml::Null) => serde_json::Map::new(),
        Some(v @ Yaml::Mapping(_)) => match serde_json::to_value(&v) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => serde_json::Map::new(),
            Err(e) => bail!(cx, "request.extra_body", "cannot turn it into JSON: {e}"),
        },
        Some(_) => {
            bail!(
                cx,
                "request.extra_body",
                "must be a mapping, e.g. extra_body: {{seed: 1}}"
            )
        }
    };
    let max_tokens = pos(r.max_tokens).unwrap_or(256);
    let temperature = r.temperature;
    Ok(RequestSpec {
        prompt,
        prompt_file,
        system,
        system_file,
        max_tokens,
        temperature,
        extra_body,
    })
}

fn build_load(cx: &Ctx, raw: Option<RawLoad>) -> Result<Load, ScenarioError> {
    let Some(l) = raw else {
        bail!(
            cx,
            "load",
            "missing; add e.g. load: {{ladder: [1, 2, 4, 8], requests_per_step: 100}}"
        )
    };
    let ladder: Vec<u32> = l
        .ladder
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.0)
        .collect();
    if ladder.is_empty() {
        bail!(
            cx,
            "load.ladder",
            "the ladder is empty; list at least one concurrency, e.g. ladder: [5, 10, 20]"
        )
    }
    if let Some(w) = ladder.windows(2).find(|w| w[1] <= w[0]) {
        bail!(
            cx,
            "load.ladder",
            "steps must increase ({} after {}), e.g. ladder: [5, 10, 20]",
            w[1],
            w[0]
        )
    }
    let chosen: Vec<(&str, Budget)> = [
        (
            "requests_per_step",
            pos(l.requests_per_step).map(Budget::RequestsPerStep),
        ),
        (
            "requests_per_worker",
            pos(l.requests_per_worker).map(Budget::RequestsPerWorker),
        ),
        ("duration", l.duration.map(|d| Budget::Duration(d.0))),
    ]
    .into_iter()
    .filter_map(|(k, b)| b.map(|b| (k, b)))
    .collect();
    let budget = match chosen.as_slice() {
        [] => Budget::RequestsPerStep(100),
        [(_, b)] => *b,
        [(a, _), (b, _), ..] => bail!(
            cx,
            &format!("load.{b}"),
            "both `{a}` and `{b}` are set; a step ends one way: keep one"
        ),
    };
    if budget == Budget::Duration(Duration::ZERO) {
        bail!(
            cx,
            "load.duration",
            "a step of 0s measures nothing; write e.g. duration: 60s"
        )
    }
    let top = ladder.iter().copied().max().unwrap_or(1);
    if matches!(budget, Budget::RequestsPerStep(n) if n < u64::from(top)) {
        bail!(
            cx,
            "load.requests_per_step",
            "fewer requests than the {top} streams of the top step; write at least {top}"
        )
    }
    Ok(Load {
        ladder,
        budget,
        warmup_requests: l.warmup_requests.unwrap_or(0),
        ramp_up: dur_or(l.ramp_up, Duration::ZERO),
        pause_between_steps: dur_or(l.pause_between_steps, Duration::ZERO),
    })
}

fn build_retry(cx: &Ctx, raw: Option<RawRetry>) -> Result<RetryPolicy, ScenarioError> {
    let d = RetryPolicy::default();
    let Some(r) = raw else { return Ok(d) };
    let mut retry_on = Vec::new();
    for n in r.retry_on.as_deref().unwrap_or_default() {
        let all: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
        match (n.parse::<ErrorClass>(), did_you_mean(n, &all)) {
            (Ok(class), _) => retry_on.push(class),
            (Err(e), hint) if hint.is_empty() => bail!(cx, "retry.retry_on", "{e}"),
            (Err(_), hint) => bail!(cx, "retry.retry_on", "unknown error class `{n}`{hint}"),
        }
    }
    let p = RetryPolicy {
        max_attempts: pos(r.max_attempts).unwrap_or(d.max_attempts),
        initial_backoff: dur_or(r.initial_backoff, d.initial_backoff),
        max_backoff: dur_or(r.max_backoff, d.max_backoff),
        max_retry_after: dur_or(r.max_retry_after, d.max_retry_after),
        retry_on: if r.retry_on.is_some() {
            retry_on
        } else {
            d.retry_on
        },
    };
    if p.initial_backoff > p.max_backoff {
        bail!(
            cx,
            "retry.initial_backoff",
            "is longer than max_backoff; make max_backoff at least as long"
        )
    }
    Ok(p)
}

fn build_gates(raw: Option<RawGates>) -> Gates {
    let mut g = Gates::default();
    let Some(r) = raw else { return g };
    let pairs = [
        (&mut g.ttft, r.ttft),
        (&mut g.tpot, r.tpot),
        (&mut g.itl, r.itl),
        (&mut g.e2e, r.e2e),
    ];
    for (gate, over) in pairs {
        if let Some(o) = over {
            gate.p90 = o.p90.map_or(gate.p90, |f| f.0);
            gate.p99 = o.p99.map_or(gate.p99, |f| f.0);
            gate.floor_ms = o
                .floor
                .map_or(gate.floor_ms, |d| d.0.as_secs_f64() * 1000.0);
        }
    }
    g.error_rate = r.error_rate.map_or(g.error_rate, |f| f.0);
    g.throughput = r.throughput.map_or(g.throughput, |f| f.0);
    g
}

// --------------------------------------------------------------- interpolation

/// One `${VAR}` replacement: on which line, and the text it became.
struct Sub {
    line: usize,
    var: String,
    value: String,
}

struct Interpolated {
    text: String,
    subs: Vec<Sub>,
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Replaces `${VAR}` and `${VAR:-default}` (default also when VAR is empty) everywhere except in
/// comments; `$$` is a literal `$`. Each value is escaped for the quoting it lands in and never
/// adds a line, so later errors keep the right line numbers. Errors carry the 1-based line.
fn interpolate(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Interpolated, (usize, String)> {
    let (mut out, mut subs) = (String::with_capacity(text.len()), Vec::new());
    let mut quote = Quote::None;
    let mut block: Option<usize> = None; // indentation of the line that opened a `|`/`>` block
    for (i, raw_line) in text.split_inclusive('\n').enumerate() {
        let body = raw_line.trim_end_matches(['\n', '\r']);
        let indent = indent_of(body);
        let in_block = block.is_some_and(|b| body.trim().is_empty() || indent > b);
        if !in_block {
            block = None;
        }
        let code_end = scan_line(body, i + 1, in_block, &mut quote, env, &mut out, &mut subs)?;
        out.push_str(&raw_line[body.len()..]);
        let code = body[..code_end].trim_end();
        let head = code.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
        let opens = [" |", " >"].iter().any(|s| head.ends_with(s)) || matches!(head, "|" | ">");
        if !in_block && quote == Quote::None && opens && code.len() - head.len() <= 2 {
            block = Some(indent);
        }
    }
    Ok(Interpolated { text: out, subs })
}

/// Copies one line into `out`, interpolating; returns where a comment starts (or the length).
fn scan_line(
    body: &str,
    n: usize,
    in_block: bool,
    quote: &mut Quote,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
    subs: &mut Vec<Sub>,
) -> Result<usize, (usize, String)> {
    let mut pos = 0;
    while let Some(c) = body[pos..].chars().next() {
        let next = body[pos + c.len_utf8()..].chars().next();
        let skip = match (*quote, c) {
            _ if in_block => 0,
            (Quote::None, '#') if pos == 0 || body[..pos].ends_with([' ', '\t']) => {
                out.push_str(&body[pos..]);
                return Ok(pos);
            }
            (Quote::None, '\'' | '"') if at_scalar_start(&body[..pos]) => {
                *quote = if c == '"' {
                    Quote::Double
                } else {
                    Quote::Single
                };
                0
            }
            (Quote::Single, '\'') if next == Some('\'') => 2,
            (Quote::Single, '\'') | (Quote::Double, '"') => {
                *quote = Quote::None;
                0
            }
            (Quote::Double, '\\') => 1 + next.map_or(0, char::len_utf8),
            _ => 0,
        };
        if skip > 0 {
            out.push_str(&body[pos..pos + skip]);
            pos += skip;
            continue;
        }
        if c != '$' || !matches!(next, Some('$' | '{')) {
            out.push(c);
            pos += c.len_utf8();
            continue;
        }
        if next == Some('$') {
            out.push('$');
            pos += 2;
            continue;
        }
        let usage = "write ${VAR} or ${VAR:-default} (or $$ for a literal $)";
        let Some(close) = body[pos..].find('}') else {
            return Err((n, format!("unterminated `${{`; {usage}")));
        };
        let inner = &body[pos + 2..pos + close];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        let valid = var.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || default.is_some_and(|d| d.contains("${")) {
            return Err((n, format!("`${{{inner}}}` is not supported; {usage}")));
        }
        let value = match (
            env(var).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(v), _) => v,
            (None, Some(d)) => d.to_string(),
            (None, None) => {
                let fix = format!("export it, or write ${{{var}:-default}} to give a default");
                return Err((n, format!("environment variable {var} is not set; {fix}")));
            }
        };
        let end = pos + close + 1;
        let encoded = encode(&value, *quote, in_block, &body[..pos], &body[end..]);
        out.push_str(&encoded.map_err(|why| (n, format!("the value of {var} {why}")))?);
        subs.push(Sub {
            line: n,
            var: var.to_string(),
            value,
        });
        pos = end;
    }
    Ok(body.len())
}

/// Whether a quote after `before` (the line so far) opens a quoted scalar.
fn at_scalar_start(before: &str) -> bool {
    let t = before.trim_end();
    match t.chars().last() {
        None | Some('[' | '{' | ',') => true,
        Some(':' | '-' | '?') => t.len() < before.len(),
        _ => false,
    }
}

/// The value as YAML text for where it lands, so that YAML reads back exactly the value.
fn encode(
    v: &str,
    quote: Quote,
    in_block: bool,
    before: &str,
    after: &str,
) -> Result<String, &'static str> {
    let breaks = v.contains(['\n', '\r']);
    let json = || serde_json::to_string(v).unwrap_or_default(); // JSON strings are YAML too
    match quote {
        Quote::Double => Ok(json()[1..json().len() - 1].to_string()),
        Quote::Single if breaks => Err("has a line break, which '...' cannot hold; use \"...\""),
        Quote::Single => Ok(v.replace('\'', "''")),
        Quote::None if breaks && in_block => {
            Err("has a line break, which a block text cannot hold")
        }
        Quote::None if in_block || plain_safe(v, at_scalar_start(before)) => Ok(v.to_string()),
        Quote::None => {
            let a = after.trim_start();
            let ends = a.is_empty()
                || a.starts_with([',', ']', '}'])
                || (a.starts_with('#') && a.len() < after.len());
            match at_scalar_start(before) && ends {
                true => Ok(json()),
                false => {
                    Err("has characters YAML would misread here; put quotes around the whole value")
                }
            }
        }
    }
}

/// Text that YAML reads back unchanged as (part of) a plain scalar.
fn plain_safe(v: &str, at_start: bool) -> bool {
    let bad = v.chars().any(char::is_control)
        || v != v.trim()
        || v.contains(": ")
        || v.contains(" #")
        || v.ends_with(':')
        || v.contains(['[', ']', '{', '}', ',']);
    let indicator = v.starts_with([
        '?', ':', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
    ]) || (v.starts_with('-') && !v[1..].starts_with(|c: char| c.is_ascii_digit()));
    !(bad || at_start && indicator)
}

// ------------------------------------------------------------ finding lines

/// `key` of a `key: value` / `key:` line (already trimmed at the start).
fn key_of(t: &str) -> Option<&str> {
    if let Some(q) = t.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = t[1..].find(q)? + 1;
        return t[end + 1..]
            .trim_start()
            .starts_with(':')
            .then_some(&t[1..end]);
    }
    let i = t
        .find(": ")
        .or_else(|| t.find(":\t"))
        .or_else(|| t.strip_suffix(':').map(str::len))?;
    let k = t[..i].trim_end();
    (!k.is_empty() && !k.starts_with(['-', '#', '[', '{'])).then_some(k)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn is_content(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// Finds `path` (e.g. `["load", "ladder"]`) by walking block indentation. Returns the 1-based
/// line of the deepest key found, the last line of its block, and whether the whole path was
/// found (a key inside a flow mapping `{a: 1}` counts as found on its parent's line).
fn locate_span(text: &str, path: &[&str]) -> Option<(usize, usize, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let (mut lo, mut hi) = (0, lines.len());
    let mut found: Option<(usize, usize)> = None;
    for key in path {
        let mut child = None;
        let hit = (lo..hi).filter(|&i| is_content(lines[i])).find(|&i| {
            let ind = indent_of(lines[i]);
            *child.get_or_insert(ind) == ind && key_of(lines[i].trim_start()) == Some(*key)
        });
        let Some(i) = hit else {
            return found.map(|(s, e)| (s + 1, e, lines[s].contains(&format!("{key}:"))));
        };
        let ind = indent_of(lines[i]);
        let end =
            (i + 1..lines.len()).find(|&j| is_content(lines[j]) && indent_of(lines[j]) <= ind);
        found = Some((i, end.unwrap_or(lines.len())));
        (lo, hi) = (i + 1, end.unwrap_or(lines.len()));
    }
    found.map(|(s, e)| (s + 1, e, true))
}

/// The dotted key path a 1-based line belongs to (`target.headers.X-Api-Key`), best effort.
fn path_at_line(text: &str, line: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = line.checked_sub(1).filter(|&i| i < lines.len()) else {
        return String::new();
    };
    let (mut parts, mut limit) = (Vec::new(), usize::MAX);
    for (i, l) in lines[..=last]
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, l)| is_content(l))
    {
        match key_of(l.trim_start()) {
            Some(k) if indent_of(l) < limit => {
                (parts, limit) = ([vec![k], parts].concat(), indent_of(l))
            }
            None if i == last => limit = indent_of(l) + 1,
            _ => {}
        }
    }
    parts.join(".")
}

// ------------------------------------------------------------------- output

const REDACTED: &str = "***redacted***";

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
    Yaml::from(crate::duration::format(d))
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

/// YAML text with the API key and secret header values replaced, wherever they were copied.
fn render(v: &Yaml, s: &Scenario) -> String {
    let text = serde_yaml::to_string(v).unwrap_or_else(|e| format!("# cannot render: {e}\n"));
    let secret_headers = s
        .target
        .headers
        .iter()
        .filter(|h| h.secret)
        .map(|h| &h.value);
    let secrets: Vec<String> = s
        .target
        .api_key
        .iter()
        .chain(secret_headers)
        .map(|k| k.expose().to_string())
        .collect();
    redact(&text, &secrets, REDACTED)
}

/// Canonical YAML of exactly what the client sends and what changes the numbers: api, models,
/// max_tokens, temperature, extra_body (sorted), ladder, budget, warmup, system and prompt text.
/// Its hash is the fingerprint; `ladder diff` shows a unified diff of it when fingerprints differ.
pub fn workload_yaml(s: &Scenario) -> String {
    let r = &s.request;
    let v = map([
        ("api", Yaml::from(s.target.api.as_str())),
        ("models", Yaml::from(s.target.models.clone())),
        ("max_tokens", Yaml::from(r.max_tokens)),
        ("temperature", opt(r.temperature)),
        (
            "extra_body",
            json_sorted(&serde_json::Value::Object(r.extra_body.clone())),
        ),
        ("ladder", Yaml::from(s.load.ladder.clone())),
        budget_entry(s.load.budget),
        ("warmup_requests", Yaml::from(s.load.warmup_requests)),
        ("system", opt(r.system.clone())),
        ("prompt", Yaml::from(r.prompt.as_str())),
    ]);
    render(&v, s)
}

fn pct(f: f64, unit: &str) -> Yaml {
    Yaml::from(format!("{}{unit}", (f * 100.0 * 1e6).round() / 1e6))
}

/// The whole scenario as run, defaults filled in and secrets replaced by `***redacted***`
/// (written as `scenario.yaml` into run directories).
pub fn normalized_yaml(s: &Scenario) -> String {
    let (t, r, l, rt, g) = (&s.target, &s.request, &s.load, &s.retry, &s.gates);
    let endpoint = match &t.endpoint {
        Endpoint::Url(u) => ("base_url", Yaml::from(hide_userinfo(u))),
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
    let target = map([
        ("api", Yaml::from(t.api.as_str())),
        endpoint,
        ("api_key", opt(t.api_key.as_ref().map(|_| REDACTED))),
        ("models", Yaml::from(t.models.clone())),
        ("headers", map(headers)),
        ("timeouts", map(timeouts)),
    ]);
    let path = |p: &Path| Yaml::from(p.display().to_string());
    let request = map([
        ("prompt_file", path(&r.prompt_file)),
        (
            "system_file",
            r.system_file.as_deref().map_or(Yaml::Null, path),
        ),
        ("max_tokens", Yaml::from(r.max_tokens)),
        ("temperature", opt(r.temperature)),
        (
            "extra_body",
            json_sorted(&serde_json::Value::Object(r.extra_body.clone())),
        ),
        ("system", opt(r.system.clone())),
        ("prompt", Yaml::from(r.prompt.as_str())),
    ]);
    let load = map([
        ("ladder", Yaml::from(l.ladder.clone())),
        budget_entry(l.budget),
        ("warmup_requests", Yaml::from(l.warmup_requests)),
        ("ramp_up", dur(l.ramp_up)),
        ("pause_between_steps", dur(l.pause_between_steps)),
    ]);
    let retry = map([
        ("max_attempts", Yaml::from(rt.max_attempts)),
        ("initial_backoff", dur(rt.initial_backoff)),
        ("max_backoff", dur(rt.max_backoff)),
        ("max_retry_after", dur(rt.max_retry_after)),
        (
            "retry_on",
            Yaml::from(rt.retry_on.iter().map(|c| c.as_str()).collect::<Vec<_>>()),
        ),
    ]);
    let gate = |m: &MetricGate| {
        let floor = dur(Duration::from_secs_f64(m.floor_ms.max(0.0) / 1000.0));
        map([
            ("p90", pct(m.p90, "%")),
            ("p99", pct(m.p99, "%")),
            ("floor", floor),
        ])
    };
    let gates = map([
        ("ttft", gate(&g.ttft)),
        ("tpot", gate(&g.tpot)),
        ("itl", gate(&g.itl)),
        ("e2e", gate(&g.e2e)),
        ("error_rate", pct(g.error_rate, "pp")),
        ("throughput", pct(g.throughput, "%")),
    ]);
    let slo = [
        ("ttft", s.slo.ttft),
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
            "limits",
            map([
                ("concurrency", opt(limits.concurrency)),
                ("rpm", opt(limits.rpm)),
                ("tpm", opt(limits.tpm)),
            ]),
        ),
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

/// `https://user:pass@host/v1` -> `https://***:***@host/v1`.
fn hide_userinfo(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = (u.set_username("***"), u.set_password(Some("***")));
            u.as_str().trim_end_matches('/').to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// DESIGN §3, verbatim.
    const FULL: &str = r#"# scenarios/support-chat.yaml
name: support-chat                 # used for file names; [a-z0-9-]
description: customer-support answers, short prompt
target:
  api: openai-chat                 # openai-chat | openai-completions | anthropic-messages
  base_url: ${LADDER_BASE_URL:-https://api.openai.com/v1}
  api_key: ${OPENAI_API_KEY}       # only from the environment; never written anywhere
  models: [gpt-4o, deepseek-chat]  # one ladder per model, same everything else
  headers: {}                      # extra headers (values may use ${VAR})
  timeouts: {connect: 10s, first_token: 60s, idle: 30s, total: 300s}
request:
  prompt_file: prompts/support.txt # relative to this file
  system_file: prompts/system.txt  # optional
  max_tokens: 200
  temperature: 0
  extra_body: {}                   # merged into the JSON body (e.g. top_p, seed)
load:
  ladder: [5, 10, 20, 50]          # concurrent streams per step (closed loop)
  requests_per_step: 200           # or requests_per_worker: 5, or duration: 60s
  warmup_requests: 5               # per step, not counted
  ramp_up: 1s                      # spread the workers' first requests evenly over this time
  pause_between_steps: 2s
retry:                             # default: none, so 429s are measured, not hidden
  max_attempts: 1
gates:                             # overrides of the defaults in §5
  ttft: {p90: 10%, p99: 20%, floor: 50ms}
  tpot: {p90: 10%, p99: 20%, floor: 1ms}
  error_rate: 1pp
slo:                               # optional: goodput = share of requests meeting all of these
  ttft: 1s
  tpot: 50ms
limits:                            # optional: account limits for walls and `plan`
  concurrency: 50
  tpm: 2000000
"#;

    const MIN: &str = "name: t\ntarget:\n  sim: {}\n  models: [m]\nrequest:\n  \
                       prompt_file: prompts/support.txt\nload:\n  ladder: [1, 2]\n";
    const KEY: &str = "sk-test-0123456789abcdef";

    /// Loads `yaml` as `<tmp>/s.yaml` next to `prompts/support.txt` and `prompts/system.txt`.
    fn load_env(yaml: &str, vars: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("prompts")).expect("mkdir");
        let prompt = "How do I reset my password?\n";
        std::fs::write(dir.path().join("prompts/support.txt"), prompt).expect("write");
        std::fs::write(dir.path().join("prompts/system.txt"), "You are helpful.").expect("write");
        let env = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        load_str(yaml, &dir.path().join("s.yaml"), &env)
    }

    fn ok(yaml: &str) -> Scenario {
        load_env(yaml, &[("OPENAI_API_KEY", KEY)]).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The error's line, field and message.
    fn err(yaml: &str) -> (Option<usize>, String, String) {
        match load_env(yaml, &[("OPENAI_API_KEY", KEY)]) {
            Err(ScenarioError::Invalid {
                line,
                field,
                message,
                ..
            }) => (line, field, message),
            other => panic!("expected an Invalid error, got {other:?} for\n{yaml}"),
        }
    }

    #[test]
    fn full_design_example_loads_every_field() {
        let s = ok(FULL);
        assert_eq!(s.name, "support-chat");
        assert_eq!(
            s.description.as_deref(),
            Some("customer-support answers, short prompt")
        );
        let t = &s.target;
        assert_eq!(t.api, Api::OpenAiChat);
        assert_eq!(
            t.endpoint,
            Endpoint::Url("https://api.openai.com/v1".into())
        );
        assert_eq!(t.api_key.as_ref().map(Secret::expose), Some(KEY));
        assert_eq!(t.models, ["gpt-4o", "deepseek-chat"]);
        assert!(t.headers.is_empty());
        assert_eq!(t.timeouts, Timeouts::default());
        let r = &s.request;
        assert_eq!(r.prompt, "How do I reset my password?\n");
        assert!(r.prompt_file.ends_with("prompts/support.txt"));
        assert_eq!(r.system.as_deref(), Some("You are helpful."));
        assert!(r
            .system_file
            .as_ref()
            .is_some_and(|p| p.ends_with("prompts/system.txt")));
        assert_eq!((r.max_tokens, r.temperature), (200, Some(0.0)));
        assert!(r.extra_body.is_empty());
        let l = &s.load;
        assert_eq!(
            (l.ladder.as_slice(), l.budget),
            ([5, 10, 20, 50].as_slice(), Budget::RequestsPerStep(200))
        );
        assert_eq!(l.warmup_requests, 5);
        assert_eq!(
            (l.ramp_up, l.pause_between_steps),
            (Duration::from_secs(1), Duration::from_secs(2))
        );
        assert_eq!(
            (&s.retry, &s.gates),
            (&RetryPolicy::default(), &Gates::default())
        );
        let slo = Slo {
            ttft: Some(Duration::from_secs(1)),
            tpot: Some(Duration::from_millis(50)),
            e2e: None,
        };
        assert_eq!(s.slo, slo);
        assert_eq!(
            s.limits,
            Limits {
                concurrency: Some(50),
                rpm: None,
                tpm: Some(2_000_000)
            }
        );
        assert!(s.fingerprint.len() == 16 && s.fingerprint.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn defaults_fill_everything_optional() {
        let s = ok(MIN);
        assert_eq!(s.target.endpoint, Endpoint::Sim(SimParams::default()));
        assert_eq!(
            (s.target.api, s.target.api_key.clone()),
            (Api::OpenAiChat, None)
        );
        assert_eq!((s.request.max_tokens, s.request.temperature), (256, None));
        assert_eq!(s.request.system, None);
        assert_eq!(s.load.budget, Budget::RequestsPerStep(100));
        assert_eq!(
            (s.load.warmup_requests, s.load.ramp_up),
            (0, Duration::ZERO)
        );
        assert_eq!(s.load.pause_between_steps, Duration::ZERO);
        assert_eq!(
            (&s.retry, &s.gates),
            (&RetryPolicy::default(), &Gates::default())
        );
        assert_eq!((&s.slo, &s.limits), (&Slo::default(), &Limits::default()));
    }

    #[test]
    fn other_forms_and_overrides() {
        let target = "api: anthropic-messages\n  base_url: http://localhost:8000/v1/\n  model: c";
        let extra = "\nretry: {max_attempts: 3, retry_on: [http_429, timeout_idle]}\n\
                     gates: {tpot: {p99: 0.5}, error_rate: 2pp, throughput: 5%}";
        let yaml = MIN
            .replace("sim: {}\n  models: [m]", target)
            .replace("[1, 2]", "[1, 2]\n  duration: 1m30s")
            + extra;
        let s = ok(&yaml);
        assert_eq!(s.target.api, Api::AnthropicMessages);
        assert_eq!(
            s.target.endpoint,
            Endpoint::Url("http://localhost:8000/v1".into())
        );
        assert_eq!(s.target.models, ["c"]);
        assert_eq!(s.load.budget, Budget::Duration(Duration::from_secs(90)));
        assert_eq!(s.retry.max_attempts, 3);
        assert_eq!(
            s.retry.retry_on,
            [ErrorClass::Http429, ErrorClass::TimeoutIdle]
        );
        assert_eq!(
            s.gates.tpot,
            MetricGate {
                p90: 0.10,
                p99: 0.5,
                floor_ms: 1.0
            }
        );
        assert!((s.gates.error_rate - 0.02).abs() < 1e-12);
        assert!((s.gates.throughput - 0.05).abs() < 1e-12);
        assert_eq!(s.gates.ttft, Gates::default().ttft);
    }

    #[test]
    fn interpolation_defaults_escapes_and_quoting() {
        let desc = "name: ${NAME:-x}\ndescription: \"cost $$5 ${D}\" # ${NOT_IN_COMMENTS}";
        let s =
            load_env(&MIN.replace("name: t", desc), &[("D", "say \"hi\"\nbye")]).expect("loads");
        assert_eq!(s.name, "x");
        assert_eq!(s.description.as_deref(), Some("cost $5 say \"hi\"\nbye"));
        // empty with a default -> the default; plain values YAML would misread get quoted
        let yaml = MIN.replace("name: t", "name: ${NAME:-y}\ndescription: ${D}");
        let s = load_env(&yaml, &[("NAME", ""), ("D", "a: b # c")]).expect("loads");
        assert_eq!(
            (s.name.as_str(), s.description.as_deref()),
            ("y", Some("a: b # c"))
        );
        let s = load_env(
            &MIN.replace("name: t", "name: t\ndescription: 'it''s ${D}'"),
            &[("D", "a'b")],
        );
        assert_eq!(s.expect("loads").description.as_deref(), Some("it's a'b"));
        let yaml = MIN.replace("name: t", "name: t\ndescription: |\n  # ${D}\n  x");
        assert_eq!(
            load_env(&yaml, &[("D", "v")])
                .expect("loads")
                .description
                .as_deref(),
            Some("# v\nx\n")
        );
        assert_eq!(
            load_env(&MIN.replace("[1, 2]", "[1, ${N:-4}]"), &[])
                .expect("ok")
                .load
                .ladder,
            [1, 4]
        );
        let (line, _, msg) = err(&MIN.replace("name: t", "name: t\ndescription: a ${X"));
        assert_eq!(line, Some(2));
        assert!(msg.starts_with("unterminated `${`"), "{msg}");
    }

    #[test]
    fn unset_variable_names_it_and_the_line() {
        let yaml = FULL.replace("OPENAI_API_KEY}", "MISSING_KEY}");
        let e = load_env(&yaml, &[]).expect_err("unset").to_string();
        let want = ":7: target.api_key: environment variable MISSING_KEY is not set; export it, \
                    or write ${MISSING_KEY:-default} to give a default";
        assert!(e.ends_with(want), "{e}");
        assert!(
            e.starts_with(&std::env::temp_dir().display().to_string()),
            "{e}"
        );
    }

    #[test]
    fn unknown_field_suggests_the_right_name_at_its_line() {
        let (line, field, msg) =
            err(&FULL.replace("requests_per_step: 200", "requests_per_stp: 2"));
        assert_eq!((line, field.as_str()), (Some(19), "load.requests_per_stp"));
        assert!(msg.contains("(did you mean `requests_per_step`?)"), "{msg}");
        let (line, field, msg) = err(&MIN.replace("name: t", "name: t\nconcurrency: 5"));
        assert_eq!((line, field.as_str()), (Some(2), "concurrency"));
        assert!(msg.starts_with("unknown field `concurrency`;"), "{msg}");
        let (line, _, msg) = err(&MIN.replace("sim: {}", "sim: {speed: 2}"));
        assert_eq!(line, Some(3));
        assert!(msg.contains("unknown field `speed`"), "{msg}");
        let (line, field, _) = err(&MIN.replace("[1, 2]", "[1, 2]\n  ramp_up: 5"));
        assert_eq!((line, field.as_str()), (Some(9), "load.ramp_up"));
        let (line, field, msg) = err(&format!("{MIN}load: {{}}\n"));
        assert_eq!(
            (line, field.as_str(), msg.as_str()),
            (Some(7), "load", "`load` is set twice")
        );
    }

    #[test]
    fn malformed_yaml_reports_its_line() {
        let (line, _, msg) =
            err(&MIN.replace("prompt_file: prompts/support.txt", "prompt_file: a: b"));
        assert_eq!(line, Some(6));
        assert!(msg.contains("mapping values are not allowed"), "{msg}");
        let (line, field, msg) = err(&MIN.replace("[1, 2]", "[1, 2.5]"));
        assert_eq!((line, field.as_str()), (Some(8), "load.ladder[1]"));
        assert!(msg.contains("2.5"), "{msg}");
        assert!(err("").2.contains("the file is empty"));
        assert!(err("- a\n- b\n").2.contains("expected a mapping"));
        assert!(err(&MIN.replace("[m]", "m")).2.contains("expected a list"));
    }

    #[test]
    fn ladder_and_budget_errors_name_the_fix() {
        let (line, field, msg) = err(&MIN.replace("[1, 2]", "[]"));
        assert_eq!((line, field.as_str()), (Some(8), "load.ladder"));
        assert_eq!(
            msg,
            "the ladder is empty; list at least one concurrency, e.g. ladder: [5, 10, 20]"
        );
        let (line, field, msg) = err(&MIN.replace("ladder: [1, 2]", "ladder:\n  - 1\n  - 0"));
        assert_eq!((line, field.as_str()), (Some(10), "load.ladder[1]"));
        assert!(msg.starts_with("concurrency 0 is not allowed"), "{msg}");
        assert!(err(&MIN.replace("[1, 2]", "[-5]"))
            .2
            .starts_with("concurrency -5 is not allowed"));
        assert!(err(&MIN.replace("[1, 2]", "[2, 1]"))
            .2
            .contains("must increase"));
        assert!(err(&MIN.replace("[1, 2]", "[1, 200]"))
            .2
            .contains("than the 200 streams"));
        let both = MIN.replace("[1, 2]", "[1, 2]\n  requests_per_step: 10\n  duration: 1m");
        let (line, field, msg) = err(&both);
        assert_eq!((line, field.as_str()), (Some(10), "load.duration"));
        assert!(
            msg.contains("both `requests_per_step` and `duration`"),
            "{msg}"
        );
        let (line, field, msg) = err(&MIN.replace("[1, 2]", "[1, 2]\n  requests_per_step: 0"));
        assert_eq!((line, field.as_str()), (Some(9), "load.requests_per_step"));
        assert!(msg.contains("1 or more"), "{msg}");
        assert!(err(&MIN.replace("[1, 2]", "[1, 2]\n  duration: 0"))
            .2
            .contains("measures nothing"));
    }

    #[test]
    fn target_errors() {
        let (line, field, msg) = err(&MIN.replace("sim: {}", "base_url: htp//nowhere"));
        assert_eq!((line, field.as_str()), (Some(3), "target.base_url"));
        assert!(msg.contains("is not a URL"), "{msg}");
        assert!(err(&MIN.replace("sim: {}", "base_url: ftp://x.org"))
            .2
            .contains("http://"));
        let both = err(&MIN.replace("sim: {}", "sim: {}\n  base_url: http://x"));
        assert!(both.2.starts_with("both base_url and sim"), "{both:?}");
        assert!(err(&MIN.replace("  sim: {}\n", ""))
            .2
            .starts_with("no endpoint"));
        let (line, field, msg) = err(&MIN.replace("sim: {}", "sim: {}\n  api: openai"));
        assert_eq!((line, field.as_str()), (Some(4), "target.api"));
        assert!(
            msg.contains("unknown api `openai` (did you mean `openai-chat`?)"),
            "{msg}"
        );
        assert!(err(&MIN.replace("[m]", "[]"))
            .2
            .contains("at least one model"));
        assert!(err(&MIN.replace("[m]", "[m, m]"))
            .2
            .contains("listed twice"));
        assert!(err(&MIN.replace("name: t", "name: Support Chat"))
            .2
            .contains("`support-chat`"));
        let (_, field, _) = err(&MIN.replace("sim: {}", "sim: {}\n  timeouts: {idle: 0}"));
        assert_eq!(field, "target.timeouts.idle");
        let (_, field, msg) = err(&MIN.replace("name: t", "name: t\nretry: {retry_on: [http429]}"));
        assert_eq!(
            (field.as_str(), msg.as_str()),
            (
                "retry.retry_on",
                "unknown error class `http429` (did you mean `http_429`?)"
            )
        );
    }

    #[test]
    fn missing_prompt_file_names_the_resolved_path() {
        let (line, field, msg) = err(&MIN.replace("support.txt", "nope.txt"));
        assert_eq!((line, field.as_str()), (Some(6), "request.prompt_file"));
        assert!(msg.contains("prompts/nope.txt (") && msg.contains("relative to the scenario"));
    }

    #[test]
    fn sim_block_may_be_null_or_a_mapping() {
        for form in ["sim:", "sim: {}", "sim: ~"] {
            let s = ok(&MIN.replace("sim: {}", form));
            assert_eq!(s.target.endpoint, Endpoint::Sim(SimParams::default()));
        }
    }

    #[test]
    fn headers_from_variables_or_with_credential_names_are_secret() {
        let headers =
            "sim: {}\n  headers:\n    X-Team: ${TEAM}\n    X-Trace: on\n    X-Api-Key: plain";
        let s = load_env(&MIN.replace("sim: {}", headers), &[("TEAM", "blue")]).expect("loads");
        let secret: Vec<(&str, bool)> = s
            .target
            .headers
            .iter()
            .map(|h| (h.name.as_str(), h.secret))
            .collect();
        assert_eq!(
            secret,
            [("X-Api-Key", true), ("X-Team", true), ("X-Trace", false)]
        );
        let n = normalized_yaml(&s);
        assert!(
            n.contains("X-Trace: on") && !n.contains("blue") && !n.contains("plain"),
            "{n}"
        );
    }

    #[test]
    fn api_key_never_leaks() {
        let s = ok(&FULL.replace(
            "extra_body: {}",
            "extra_body: {user: \"${OPENAI_API_KEY}\"}",
        ));
        for text in [
            normalized_yaml(&s),
            workload_yaml(&s),
            format!("{:?}", ok(FULL)),
        ] {
            assert!(!text.contains(KEY), "{text}");
        }
        assert!(normalized_yaml(&s).contains("api_key: '***redacted***'"));
        let bad_url = "base_url: http://x/${OPENAI_API_KEY}?q";
        let bad = FULL.replace(
            "base_url: ${LADDER_BASE_URL:-https://api.openai.com/v1}",
            bad_url,
        );
        let e = load_env(&bad, &[("OPENAI_API_KEY", KEY)]).expect_err("query in URL");
        assert!(
            !e.to_string().contains(KEY) && !format!("{e:?}").contains(KEY),
            "{e}"
        );
        let s = load_env(
            &FULL.replace("${OPENAI_API_KEY}", "${OPENAI_API_KEY:-}"),
            &[],
        );
        assert_eq!(s.expect("loads").target.api_key, None);
    }

    #[test]
    fn fingerprint_ignores_server_side_and_formatting() {
        let base = ok(FULL).fingerprint;
        let same = [
            FULL.replace("# scenarios/support-chat.yaml", "# another comment"),
            FULL.replace("https://api.openai.com/v1", "http://localhost:9000"),
            FULL.replace("name: support-chat", "name: renamed"),
            FULL.replace("max_attempts: 1", "max_attempts: 4")
                .replace("tpm: 2000000", "tpm: 10"),
            FULL.replace("ramp_up: 1s", "ramp_up: 5s")
                .replace("idle: 30s", "idle: 5s"),
            FULL.replace("  api: openai-chat                 #", "  #"),
        ];
        for yaml in &same {
            assert_eq!(ok(yaml).fingerprint, base, "{yaml}");
        }
        let other_key = load_env(FULL, &[("OPENAI_API_KEY", "sk-other-key-99999")]).expect("loads");
        assert_eq!(other_key.fingerprint, base);
        let flow = ok(&FULL.replace("extra_body: {}", "extra_body: {a: 1, b: 2}")).fingerprint;
        let block = ok(&FULL.replace("extra_body: {}", "extra_body:\n    b: 2\n    a: 1"));
        assert_eq!(block.fingerprint, flow);
        let different = [
            FULL.replace("max_tokens: 200", "max_tokens: 201"),
            FULL.replace("[5, 10, 20, 50]", "[5, 10, 20]"),
            FULL.replace("prompts/system.txt", "prompts/support.txt"),
            FULL.replace("temperature: 0", "temperature: 0.7"),
            FULL.replace("warmup_requests: 5", "warmup_requests: 6"),
            FULL.replace("deepseek-chat]", "deepseek-chat, o3]"),
            FULL.replace("requests_per_step: 200", "requests_per_worker: 200"),
            FULL.replace("api: openai-chat", "api: openai-completions"),
        ];
        for yaml in &different {
            assert_ne!(ok(yaml).fingerprint, base, "{yaml}");
        }
        assert_ne!(flow, base);
        let mut changed = ok(FULL);
        changed.request.prompt.push('!');
        assert_ne!(fingerprint_of(&workload_yaml(&changed)), base);
    }

    #[test]
    fn workload_yaml_is_canonical_and_readable() {
        let s = ok(&FULL.replace("extra_body: {}", "extra_body: {z: [1], a: {y: 2, b: true}}"));
        let w = workload_yaml(&s);
        let head = "api: openai-chat\nmodels:\n- gpt-4o\n- deepseek-chat\nmax_tokens: 200\n";
        assert!(w.starts_with(head), "{w}");
        assert!(
            w.contains("extra_body:\n  a:\n    b: true\n    y: 2\n  z:\n  - 1\n"),
            "{w}"
        );
        assert!(
            w.contains("requests_per_step: 200\nwarmup_requests: 5\n"),
            "{w}"
        );
        assert!(
            w.ends_with("prompt: |\n  How do I reset my password?\n"),
            "{w}"
        );
        assert!(!w.contains("openai.com") && !w.contains("timeouts"), "{w}");
    }

    #[test]
    fn normalized_yaml_has_every_default() {
        let n = normalized_yaml(&ok(MIN));
        let parts = [
            "name: t\n",
            "  sim:\n",
            "api_key: null",
            "max_tokens: 256",
            "requests_per_step: 100",
            "p90: 10%",
            "floor: 50ms",
            "error_rate: 1pp",
            "connect: 10s",
            "prompt: |\n    How do I",
            "retry_on:\n  - http_429\n  - http_5xx",
        ];
        for part in parts {
            assert!(n.contains(part), "missing {part:?} in\n{n}");
        }
    }

    #[test]
    fn finds_lines_and_paths() {
        let text = "a:\n  b:\n    c: 1\n  # b: 2\n  d: {e: 1}\nf:\n- x\n";
        assert_eq!(locate_span(text, &["a", "b", "c"]), Some((3, 4, true)));
        assert_eq!(locate_span(text, &["a", "d", "e"]), Some((5, 5, true)));
        assert_eq!(locate_span(text, &["a", "z"]), Some((1, 5, false)));
        assert_eq!(locate_span(text, &["z"]), None);
        assert_eq!(
            (path_at_line(text, 3), path_at_line(text, 7)),
            ("a.b.c".into(), "f".into())
        );
        assert_eq!(path_at_line(text, 99), "");
        assert_eq!(
            (parse_fraction("10%"), parse_fraction("0.5")),
            (Ok(0.1), Ok(0.5))
        );
        assert!(parse_fraction("10").unwrap_err().contains("`10%`"));
        assert_eq!(
            strip_marks("x at line 3 column 5, y at line 1 column 1"),
            "x, y"
        );
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = load_str(&text, Path::new("/nonexistent/s.yaml"), &|_| Some("v".into()));
        }

        #[test]
        fn yaml_like_text_never_panics(lines in proptest::collection::vec((
            "[ ]{0,4}",
            "(name|target|load|ladder|sim|base_url|-|\\$\\{X\\}|\\$\\{X:-a\\}|\"|'|#|\\|)",
            "[:\\-\\[\\]{}, 0-9a-z$'\"#|]{0,12}",
        ), 0..12)) {
            let text: String = lines.iter().map(|(i, k, v)| format!("{i}{k}{v}\n")).collect();
            let path = Path::new("/nonexistent/s.yaml");
            let _ = load_str(&text, path, &|_| Some("a: \"b\n".into()));
            let _ = load_str(&format!("{MIN}{text}"), path, &|_| None);
        }
    }
}
