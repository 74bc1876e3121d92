//! What one SSE event means for timing, independent of the API dialect that produced it.
//! Dialect interpreters (`openai.rs`, `anthropic.rs`) turn events into `ChunkInfo`; the timing
//! accumulator (`timing.rs`) turns a sequence of timestamped `ChunkInfo`s into a record.

/// An error reported inside a stream that started with HTTP 200 (or in an error body).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InBandError {
    /// Provider's type or code, e.g. `overloaded_error`, `server_error`.
    pub error_type: Option<String>,
    pub message: String,
    /// HTTP-like status carried in the payload (TGI `http_status_code`, vLLM `code`).
    pub status: Option<u16>,
    /// The record's class when the dialect names it (the Responses API's `error.code`:
    /// `rate_limit_exceeded` is a 429, `server_error` a 5xx); `None`: `stream_error`.
    pub class: Option<crate::model::ErrorClass>,
}

/// The meaning of one SSE event.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChunkInfo {
    /// Non-empty generated content (text, or tool-call arguments) arrived in this event.
    pub content: bool,
    /// Non-empty reasoning/thinking text arrived in this event.
    pub reasoning: bool,
    /// Server-reported output tokens so far (cumulative; last value wins, never summed).
    pub output_tokens: Option<u64>,
    /// Server-reported input (prompt) tokens.
    pub input_tokens: Option<u64>,
    /// Server-reported prompt tokens served from its prompt cache.
    pub cached_tokens: Option<u64>,
    /// Server-reported prompt tokens written to its prompt cache (Anthropic).
    pub cache_write_tokens: Option<u64>,
    /// Server-reported reasoning tokens inside `output_tokens` (OpenAI
    /// `completion_tokens_details.reasoning_tokens`).
    pub reasoning_tokens: Option<u64>,
    pub finish_reason: Option<String>,
    /// End of stream marker (`[DONE]`, `message_stop`).
    pub done: bool,
    /// In-band error (error object, `event: error`, `finish_reason: "error"`).
    pub error: Option<InBandError>,
    /// The server's own timings carried in the body (llama.cpp's `timings`). Boxed: they come
    /// once a stream, and every event's `ChunkInfo` is moved whole (88 bytes more per event
    /// copied; issue 39, part 4).
    pub server: Option<Box<super::server_timing::ServerTimings>>,
    /// Tool calls the model began in this event (chat: a `delta.tool_calls` entry with its id
    /// or name; Anthropic: `content_block_start` of a `tool_use` block; Responses:
    /// `response.output_item.added` of a `function_call`), or a whole answer's calls.
    pub tool_calls: u32,
    /// Chat streams: the highest `index` among this event's entries counted in `tool_calls`,
    /// when they carry one. A stream's calls are numbered, so a server that names the call again
    /// in every delta (llama-cpp-python's `chatml-function-calling` repeats its id and name with
    /// each argument token) still begins it once: the stream counts its indexes, not its entries.
    pub tool_call_index: Option<u32>,
    /// Non-empty tool-call argument deltas in this event (each counted as one token, as output
    /// tokens are counted from events when usage is missing); 0 for a whole answer.
    pub tool_args: u32,
}

impl ChunkInfo {
    /// Whether this event carries a generated token (content or reasoning).
    pub fn is_token(&self) -> bool {
        self.content || self.reasoning
    }
}

/// An event that cannot be interpreted (malformed JSON where JSON is required).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed stream event: {0}")]
pub struct MalformedEvent(pub String);
