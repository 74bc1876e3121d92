//! What each request sends, as validated from `request:` (`build_request`): where the prompts
//! come from, the body options, tools and prompt caching. The client turns it into each
//! dialect's body (`client::dialect`).

use super::token_limit::{self, LimitField};
use super::tools::{ToolChoice, Tools};
use super::PromptSet;
use std::path::PathBuf;

/// Where the prompts of a scenario come from.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptSource {
    /// One prompt text from `prompt_file` (in `RequestSpec::prompt`).
    File,
    /// One prompt written in the scenario (`request.prompt: {text: …}`, from `--prompt`), also
    /// in `RequestSpec::prompt`.
    Inline,
    /// Many prompts from `request.prompts` (JSONL or CSV).
    Set(std::sync::Arc<PromptSet>),
    /// Generated text of about this many tokens (`request.prompt.synthetic_tokens`), also in
    /// `RequestSpec::prompt`; with `load.ladder_over: prompt_tokens` each step has its own size.
    Synthetic { tokens: u32 },
    /// Each request's own prompt or size, from the replayed trace (`load.trace`).
    Trace,
}

/// The order in which a prompt set's prompts are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptOrder {
    RoundRobin,
    /// Sampled with replacement, seeded by `load.seed`.
    Random,
}

impl PromptOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptOrder::RoundRobin => "round-robin",
            PromptOrder::Random => "random",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    /// Prompt text (read from `prompt_file`, or synthetic); empty for a prompt set.
    pub prompt: String,
    /// Chat messages sent instead of `prompt` when not empty (a prompt set's `messages`
    /// prompts, a session's growing conversation). Filled per request by `workload`.
    pub messages: Vec<serde_json::Value>,
    /// The file the prompt was read from (empty for synthetic prompts).
    pub prompt_file: PathBuf,
    pub prompts: PromptSource,
    pub prompt_order: PromptOrder,
    /// Put a unique short prefix on every request so a prompt cache cannot serve it.
    pub cache_bust: bool,
    /// `request.stream`: ask for the answer as an event stream (default) or as one JSON body
    /// (`false`: TTFT, TTFC, TPOT and ITL are not measured, E2E and the usage's tokens are).
    pub stream: bool,
    /// `request.batch`: texts per embeddings request (1 elsewhere), one vector each.
    pub batch: u32,
    /// A batched request's texts, filled by `workload`; empty: the prompt, `batch` times.
    pub inputs: Vec<String>,
    /// Turns per conversation (`session.turns`); 1 = independent requests.
    pub session_turns: u32,
    /// `session.chain`: the body field (`previous_response_id`) through which each turn after the
    /// first sends only its new messages and the previous answer's id, instead of the history.
    pub session_chain: Option<&'static str>,
    /// A successful response with fewer output tokens than this share of its `max_tokens` and
    /// no `finish_reason: length` counts as short (possible truncation).
    pub short_below: f64,
    pub system: Option<String>,
    pub system_file: Option<PathBuf>,
    /// The output-token limit sent with each request; `None` (`max_tokens: null`) sends none.
    pub max_tokens: Option<u32>,
    /// The body field that carries `max_tokens` (`request.max_tokens_field`).
    pub max_tokens_field: LimitField,
    pub temperature: Option<f64>,
    /// Merged into the JSON body last (may override anything but the limit: a limit key in
    /// `request.extra_body` is read into `max_tokens` and `max_tokens_field` when loading).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// `request.tools` and `request.tool_choice`: sent in the dialect's shape.
    pub tools: Option<std::sync::Arc<Tools>>,
    pub tool_choice: Option<ToolChoice>,
    /// `request.cache: auto`: mark cache breakpoints where the dialect takes them
    /// (Anthropic's `cache_control` on the last tool, the system prompt, the latest message).
    pub cache_auto: bool,
    /// `request.prompt_cache_key`: the cache routing key of OpenAI's chat and Responses APIs.
    pub prompt_cache_key: Option<String>,
}

/// `request.short_below` when the scenario does not set it: a success with fewer than 10% of
/// its `max_tokens` counts as short.
pub const DEFAULT_SHORT_BELOW: f64 = 0.1;

impl Default for RequestSpec {
    /// A one-prompt spec with the loader's defaults (for code and tests that build one).
    fn default() -> Self {
        RequestSpec {
            prompt: String::new(),
            messages: Vec::new(),
            prompt_file: PathBuf::new(),
            prompts: PromptSource::File,
            prompt_order: PromptOrder::RoundRobin,
            cache_bust: false,
            stream: true,
            batch: 1,
            inputs: Vec::new(),
            session_turns: 1,
            session_chain: None,
            short_below: DEFAULT_SHORT_BELOW,
            system: None,
            system_file: None,
            max_tokens: Some(token_limit::DEFAULT_MAX_TOKENS),
            max_tokens_field: LimitField::default_for(crate::dialect::Api::default()),
            temperature: None,
            extra_body: serde_json::Map::new(),
            tools: None,
            tool_choice: None,
            cache_auto: false,
            prompt_cache_key: None,
        }
    }
}
