//! One `RequestRecord` per attempted request: the single fact that flows from the runner to the
//! store, the statistics and the findings. Everything else is derived from these records.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Why a request failed (docs/files.md). `Interrupted` marks requests cancelled by Ctrl-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    Http401,
    Http403,
    Http404,
    Http429,
    Http4xx,
    Http5xx,
    Connect,
    TimeoutConnect,
    TimeoutFirstToken,
    TimeoutIdle,
    TimeoutTotal,
    Disconnect,
    StreamError,
    Protocol,
    Empty,
    /// 429 that means "out of money", not "too fast" (`insufficient_quota`, spend limits):
    /// never retried and never part of a rate-limit wall.
    Quota,
    Interrupted,
    /// The client's own resource limit, not the server's doing: this process could not open
    /// another socket (`EMFILE`/`ENFILE`, too many open files).
    Client,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 18] = [
        ErrorClass::Http401,
        ErrorClass::Http403,
        ErrorClass::Http404,
        ErrorClass::Http429,
        ErrorClass::Http4xx,
        ErrorClass::Http5xx,
        ErrorClass::Connect,
        ErrorClass::TimeoutConnect,
        ErrorClass::TimeoutFirstToken,
        ErrorClass::TimeoutIdle,
        ErrorClass::TimeoutTotal,
        ErrorClass::Disconnect,
        ErrorClass::StreamError,
        ErrorClass::Protocol,
        ErrorClass::Empty,
        ErrorClass::Quota,
        ErrorClass::Interrupted,
        ErrorClass::Client,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Http401 => "http_401",
            ErrorClass::Http403 => "http_403",
            ErrorClass::Http404 => "http_404",
            ErrorClass::Http429 => "http_429",
            ErrorClass::Http4xx => "http_4xx",
            ErrorClass::Http5xx => "http_5xx",
            ErrorClass::Connect => "connect",
            ErrorClass::TimeoutConnect => "timeout_connect",
            ErrorClass::TimeoutFirstToken => "timeout_first_token",
            ErrorClass::TimeoutIdle => "timeout_idle",
            ErrorClass::TimeoutTotal => "timeout_total",
            ErrorClass::Disconnect => "disconnect",
            ErrorClass::StreamError => "stream_error",
            ErrorClass::Protocol => "protocol",
            ErrorClass::Empty => "empty",
            ErrorClass::Quota => "quota",
            ErrorClass::Interrupted => "interrupted",
            ErrorClass::Client => "client",
        }
    }

    /// Class for a non-success HTTP status (before looking at the body).
    pub fn from_status(status: u16) -> ErrorClass {
        match status {
            401 => ErrorClass::Http401,
            403 => ErrorClass::Http403,
            404 => ErrorClass::Http404,
            429 => ErrorClass::Http429,
            500..=599 => ErrorClass::Http5xx,
            _ => ErrorClass::Http4xx,
        }
    }

    pub fn is_timeout(self) -> bool {
        matches!(
            self,
            ErrorClass::TimeoutConnect
                | ErrorClass::TimeoutFirstToken
                | ErrorClass::TimeoutIdle
                | ErrorClass::TimeoutTotal
        )
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorClass {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorClass::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown error class `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// Where `output_tokens` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokensSource {
    /// Server-reported usage (last value wins).
    Usage,
    /// No usage reported: the number of non-empty token-bearing events.
    Chunks,
}

impl TokensSource {
    pub fn as_str(self) -> &'static str {
        match self {
            TokensSource::Usage => "usage",
            TokensSource::Chunks => "chunks",
        }
    }
}

/// Which server report the timings come from (`server_timing_source` in `requests.csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TimingSource {
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    #[serde(rename = "server-timing")]
    ServerTiming,
    #[serde(rename = "tgi")]
    Tgi,
    /// `openai-processing-ms` (OpenAI, Azure OpenAI): queue and prefill together.
    #[serde(rename = "openai")]
    OpenAi,
    /// A LiteLLM gateway's `x-litellm-response-duration-ms` less its overhead.
    #[serde(rename = "litellm")]
    LiteLlm,
    /// ladder's embedded simulator (a `Server-Timing` header with `desc="ladder-sim"`).
    #[serde(rename = "sim")]
    Sim,
}

impl TimingSource {
    pub const ALL: [TimingSource; 6] = [
        TimingSource::LlamaCpp,
        TimingSource::ServerTiming,
        TimingSource::Tgi,
        TimingSource::OpenAi,
        TimingSource::LiteLlm,
        TimingSource::Sim,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TimingSource::LlamaCpp => "llama.cpp",
            TimingSource::ServerTiming => "server-timing",
            TimingSource::Tgi => "tgi",
            TimingSource::OpenAi => "openai",
            TimingSource::LiteLlm => "litellm",
            TimingSource::Sim => "sim",
        }
    }
}

impl fmt::Display for TimingSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TimingSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TimingSource::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` (expected llama.cpp, server-timing, tgi, openai, sim or empty)")
            })
    }
}

/// Which account limit a 429 points at: named by its headers or its body, or, for a ramp
/// refused while the headers still showed headroom, inferred (`Acceleration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// Requests per minute.
    Requests,
    /// Tokens per minute, input and output together (OpenAI's, Azure's, a gateway's TPM).
    Tokens,
    /// Input tokens per minute (Anthropic's ITPM).
    InputTokens,
    /// Output tokens per minute (Anthropic's OTPM).
    OutputTokens,
    /// Requests in flight at once (an aggregator's or a gateway's concurrency limit).
    Concurrency,
    /// A sudden rise in traffic refused while every rate limit still had room.
    Acceleration,
}

impl LimitKind {
    pub const ALL: [LimitKind; 6] = [
        LimitKind::Requests,
        LimitKind::Tokens,
        LimitKind::InputTokens,
        LimitKind::OutputTokens,
        LimitKind::Concurrency,
        LimitKind::Acceleration,
    ];

    /// Its name in `requests.csv` and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Requests => "requests",
            LimitKind::Tokens => "tokens",
            LimitKind::InputTokens => "input_tokens",
            LimitKind::OutputTokens => "output_tokens",
            LimitKind::Concurrency => "concurrency",
            LimitKind::Acceleration => "acceleration",
        }
    }

    /// What it limits, in words: "input tokens per minute".
    pub fn words(self) -> &'static str {
        match self {
            LimitKind::Requests => "requests per minute",
            LimitKind::Tokens => "tokens per minute",
            LimitKind::InputTokens => "input tokens per minute",
            LimitKind::OutputTokens => "output tokens per minute",
            LimitKind::Concurrency => "requests in flight",
            LimitKind::Acceleration => "acceleration (a sudden rise in traffic)",
        }
    }

    /// Whether it counts tokens (TPM, ITPM, OTPM).
    pub fn counts_tokens(self) -> bool {
        matches!(
            self,
            LimitKind::Tokens | LimitKind::InputTokens | LimitKind::OutputTokens
        )
    }
}

impl std::str::FromStr for LimitKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LimitKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = LimitKind::ALL.iter().map(|k| k.as_str()).collect();
                format!("`{s}` (expected {} or empty)", names.join(", "))
            })
    }
}

/// A tool call the model made in its answer, as the answer said it: the call's id (`call_…`,
/// `toolu_…`), the tool's name and its arguments as JSON text (a stream's argument fragments
/// joined; `{}` when the call streamed none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// The outcome of one attempted request (after retries, if a retry policy is configured).
///
/// Times are milliseconds on a monotonic clock; `started_at_ms` is relative to the run's start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestRecord {
    pub model: String,
    /// 1-based index of the ladder step.
    pub step: u32,
    pub concurrency: u32,
    pub worker: u32,
    /// Sequence number of this request within its worker and step.
    pub seq: u32,
    pub request_id: String,
    pub started_at_ms: f64,
    /// `None` when the request succeeded.
    pub error_class: Option<ErrorClass>,
    pub http_status: Option<u16>,
    /// Provider's error type or code (e.g. `rate_limit_exceeded`, `overloaded_error`).
    pub error_type: Option<String>,
    /// Short, redacted error message; on a success, why the server's usage was set aside, if
    /// it was (`client::timing::MAX_PLAUSIBLE_TOKENS`).
    pub error_message: Option<String>,
    pub ttft_ms: Option<f64>,
    pub ttfc_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub output_tokens: Option<u64>,
    pub input_tokens: Option<u64>,
    /// Prompt tokens the server says came from its prompt cache (OpenAI
    /// `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`).
    pub cached_tokens: Option<u64>,
    /// Prompt tokens the server says it wrote to its prompt cache (Anthropic
    /// `cache_creation_input_tokens`; part of `input_tokens`, billed at `cache_write_input`).
    pub cache_write_tokens: Option<u64>,
    /// Rate mode: actual − scheduled send time, in ms (`None` in closed loop).
    pub send_lag_ms: Option<f64>,
    /// The `max_tokens` this request asked for (per prompt in a prompt set).
    pub max_tokens: Option<u32>,
    pub tokens_source: Option<TokensSource>,
    /// Number of token-bearing events received.
    pub token_events: u64,
    pub finish_reason: Option<String>,
    pub attempts: u32,
    pub retry_wait_ms: f64,
    /// Gaps between consecutive token-bearing events (ITL) as a log-spaced histogram
    /// (`stats::itl`); `None` when not recorded (files written before the `itl_hist` column).
    pub itl: Option<crate::model::ItlHistogram>,
    /// Hidden-or-not reasoning tokens the server reports inside the output tokens (OpenAI
    /// `completion_tokens_details.reasoning_tokens`, Responses `output_tokens_details`).
    pub reasoning_tokens: Option<u64>,
    /// Whether the *first* attempt of this request was answered with a rate-limit 429
    /// (the wall counts first attempts, even when a retry later succeeded).
    pub first_attempt_429: bool,
    /// Which account limit a 429 pointed at, by its headers or its message.
    pub limit_kind: Option<LimitKind>,
    /// That limit, as the 429's headers or message gave it (per minute; in flight for a
    /// concurrency limit).
    pub limit_value: Option<u64>,
    /// The smallest share left of any limit the response's rate-limit headers reported (any
    /// response, not only 429s); `None` without such headers.
    pub ratelimit_headroom: Option<f64>,
    /// `Retry-After` / `retry-after-ms` of the last 429/503, in ms.
    pub retry_after_ms: Option<f64>,
    /// The request was lost on a keep-alive connection the server had closed (before any
    /// response byte) and sent again on a new connection; counted in `attempts`. Its outcome is
    /// the resend's.
    pub resent_stale: bool,
    /// DNS + TCP + TLS when the request opened a new connection; `None` when it reused one.
    pub connect_ms: Option<f64>,
    /// Request start -> response headers (network and the server's admission).
    pub headers_ms: Option<f64>,
    /// The server's own timings, when it sent them (`client::server_timing`).
    pub server_queue_ms: Option<f64>,
    pub server_prefill_ms: Option<f64>,
    pub server_decode_ms: Option<f64>,
    /// The server's time before it answered, queue and prefill together, not split
    /// (`openai-processing-ms`, LiteLLM's response duration less its overhead).
    pub server_processing_ms: Option<f64>,
    pub server_timing_source: Option<TimingSource>,
    /// The id the provider or a gateway gave the request (`apim-request-id`, `request-id`,
    /// `x-request-id`, …), the one its support asks for; `None` when it sent none or echoed ours.
    pub server_request_id: Option<String>,
    /// The id the server gave a finished answer that a later request can refer to (the
    /// Responses API's `resp_…`), for a chained session's next turn; not written to any file.
    pub response_id: Option<String>,
    /// What the request cost at the scenario's `pricing:` (`Pricing::cost_of`), in its
    /// currency; `None` without pricing, without a price for the model or without usage.
    pub cost: Option<f64>,
    /// Tool calls the model made in its answer; `None` when it made none.
    pub tool_calls: Option<u32>,
    /// Tokens of those calls' arguments, counted as the argument deltas streamed (no API's
    /// usage splits them out; they are inside `output_tokens`); `None` without streamed
    /// arguments (no call, or a whole answer).
    pub tool_call_tokens: Option<u64>,
    /// The request's turn in its conversation, from 1 (`request.session`, `load.agent`); `None`
    /// for a request that is not part of one.
    pub turn: Option<u32>,
    /// The turns its conversation was planned to have (an agent's task draws its own); a task
    /// is complete when its records hold every turn up to this one.
    pub task_turns: Option<u32>,
    /// The tool calls of the answer, kept only when the request asked for them (an agent's
    /// turn: the next turn sends them back); not written to any file.
    pub calls: Vec<ToolCall>,
    /// What the agent's next turn sent after this answer: the model's own tool calls, or a
    /// synthetic call (the model made none); `None` when no turn followed.
    pub tool_call_sent: Option<ToolCallSent>,
}

/// Whose tool call an agent's next turn sent after an answer (`requests.csv` `tool_call_sent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallSent {
    /// The calls the model made.
    Model,
    /// A call ladder made up, since the model made none.
    Synthetic,
}

impl ToolCallSent {
    pub const ALL: [ToolCallSent; 2] = [ToolCallSent::Model, ToolCallSent::Synthetic];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallSent::Model => "model",
            ToolCallSent::Synthetic => "synthetic",
        }
    }
}

impl fmt::Display for ToolCallSent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolCallSent {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ToolCallSent::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("`{s}` (expected model, synthetic or empty)"))
    }
}

impl RequestRecord {
    pub fn is_ok(&self) -> bool {
        self.error_class.is_none()
    }

    /// A success with fewer output tokens than `short_below` × its `max_tokens` and no
    /// finish reason saying the output limit cut it: the provider may have cut the stream
    /// (possible truncation).
    pub fn is_short(&self, short_below: f64) -> bool {
        let (Some(out), Some(max)) = (self.output_tokens, self.max_tokens) else {
            return false;
        };
        self.is_ok() && !self.hit_output_limit() && (out as f64) < short_below * f64::from(max)
    }

    /// The server said the output limit ended the answer: OpenAI's `length` (the Responses
    /// client records `max_output_tokens` as `length`) or Anthropic's `max_tokens`: the cut of
    /// every dialect (`dialect::Spec::finish`, whose test checks this list).
    pub fn hit_output_limit(&self) -> bool {
        matches!(self.finish_reason.as_deref(), Some("length" | "max_tokens"))
    }

    /// The request reasoned before answering: the server counted reasoning tokens (hidden or
    /// streamed), or a token arrived before the first answer token (streamed reasoning, also
    /// from servers that report no count). A request that only reasoned never answered
    /// (`ttfc_ms` is `None`) and counts too.
    pub fn reasoned(&self) -> bool {
        self.reasoning_tokens.is_some_and(|n| n > 0)
            || match (self.ttft_ms, self.ttfc_ms) {
                (Some(t), Some(c)) => c > t,
                (Some(_), None) => true,
                _ => false,
            }
    }

    pub fn status_str(&self) -> &'static str {
        if self.is_ok() {
            "ok"
        } else {
            "error"
        }
    }
}

/// One row of `server_metrics.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    pub t_ms: f64,
    pub step: Option<u32>,
    pub model: Option<String>,
    pub series: String,
    pub value: Option<f64>,
}

/// Wall time and self-check figures of one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRun {
    pub model: String,
    pub step: u32,
    pub concurrency: u32,
    /// First request start to last request end.
    pub duration_s: f64,
    pub client_cpu_pct: Option<f64>,
    pub loop_lag_p99_ms: Option<f64>,
    /// Rate mode: arrivals not sent because `max_concurrency` requests were in flight.
    #[serde(default)]
    pub dropped: u64,
    /// Rate mode: the offered rate (requests/s) of the step.
    #[serde(default)]
    pub offered_rps: Option<f64>,
    /// What the step's ladder value (`concurrency`) counts.
    #[serde(default)]
    pub ladder_unit: crate::model::LadderUnit,
    /// An A/B step: this model's requests were interleaved with the other model's, the step's
    /// streams shared between them (absent from meta.json otherwise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleaved: bool,
}

impl StepRun {
    /// A step of `model` at ladder value `concurrency`, before anything of it is measured (no
    /// time, no self-check, nothing dropped): the one way a step is made. The runner fills in
    /// what it measured, a rebuilt run what its summary says (`StepSummary::step_run`).
    pub fn new(
        model: &str,
        step: u32,
        concurrency: u32,
        ladder_unit: crate::model::LadderUnit,
    ) -> StepRun {
        StepRun {
            model: model.to_string(),
            step,
            concurrency,
            duration_s: 0.0,
            client_cpu_pct: None,
            loop_lag_p99_ms: None,
            dropped: 0,
            offered_rps: None,
            ladder_unit,
            interleaved: false,
        }
    }
}
