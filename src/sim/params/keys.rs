//! The simulator's parameters, one row each: the key (as in a scenario's `target.sim:` block, in
//! `ladder sim --set` and `run --sim-set`), its unit, its default and what it means. The one
//! table: `ladder sim --list` prints it, `SimParams::set` accepts exactly its keys, and tests
//! check that it covers every field of `SimParams`, that each default is `SimParams::default()`'s
//! and that docs/simulator.md holds each row.

/// One simulator parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// `ttft`, `faults.http_503`, `models.<name>.tpot`.
    pub key: &'static str,
    /// What its value is, e.g. `duration` or `fraction 0–1`.
    pub unit: &'static str,
    /// The value it has when not set, as it would be written (`none` for no limit).
    pub default: &'static str,
    /// What it does, in one sentence.
    pub meaning: &'static str,
}

const fn p(
    key: &'static str,
    unit: &'static str,
    default: &'static str,
    meaning: &'static str,
) -> Param {
    Param {
        key,
        unit,
        default,
        meaning,
    }
}

/// Units, named once so the table reads the same everywhere.
const DURATION: &str = "duration";
const FRACTION: &str = "fraction 0–1";
const TOKENS: &str = "tokens";
const BOOL: &str = "true or false";
const RATE: &str = "rate 0–1";

/// Every parameter, in the order `ladder sim --list` and docs/simulator.md show them.
pub const PARAMS: &[Param] = &[
    p("ttft", DURATION, "200ms", "Time to first token once a slot is free (the median when ttft_sigma > 0)."),
    p("ttft_sigma", "number 0–3", "0", "Lognormal spread of TTFT: each request's TTFT is ttft × e^(σ·Z), seeded; 0 = none."),
    p("prefill_per_token", DURATION, "0s", "Extra TTFT per input token (input tokens ≈ prompt characters / 4)."),
    p("tpot", DURATION, "20ms", "Time per output token after the first."),
    p("tpot_jitter", FRACTION, "0.05", "Uniform jitter on each token interval, as a share of tpot, seeded."),
    p("output_tokens", TOKENS, "64", "Tokens per answer (the request's max_tokens caps it); with output_tokens_min, the longest."),
    p("output_tokens_min", TOKENS, "none", "Shortest answer: lengths drawn uniformly from output_tokens_min to output_tokens (seeded); none = every answer has output_tokens."),
    p("drift", "number 0–3", "0", "Run-level drift: every TTFT and TPOT of this server scaled by e^(drift·Z), Z drawn once from the seed, like a provider a few percent slower or faster from one run to the next; 0 = none."),
    p("drift_walk", "number 0–3", "0", "A slow random walk of speed: every TTFT and TPOT scaled by a factor that wanders within ±drift_walk (0.3: between 1/1.3 and 1.3) as the server's time goes on, read when each request arrives, seeded; 0 = none."),
    p("drift_walk_period", DURATION, "5m", "The drift walk's pace: its change over this time would spread by ±ln(1 + drift_walk) if nothing held it back (the walls do: ±18% at 0.3 and 5m); two periods later it has all but forgotten where it was."),
    p("concurrency_cap", "streams", "none", "Streams served at once; above it requests wait in a FIFO queue (TTFT grows, TPOT stays flat); none = unlimited."),
    p("saturation", "share of tpot per stream", "0", "Extra TPOT per active stream above saturation_from (decode slows with load); 0 = off."),
    p("saturation_from", "streams", "1", "Active streams the backend serves before TPOT starts to grow."),
    p("rpm", "requests/minute", "none", "Request limit (token bucket); over it: 429 with Retry-After and x-ratelimit-* headers; none = unlimited."),
    p("tpm", "tokens/minute", "none", "Token limit, counted as tpm_counts says (token bucket); over it: 429 naming tokens per min (TPM); none = unlimited."),
    p("limits", "openai, azure, anthropic or aggregator", "none", "A provider's shape of account limits with example numbers (docs/simulator.md, Account limits); the limit keys set beside it win."),
    p("tpm_counts", "reserve, larger or after", "none", "How tpm charges a request: reserve = prompt + max_tokens at admission (Azure, LiteLLM), larger = the larger of prompt and max_tokens (OpenAI), after = prompt + generated tokens after the answer (a gateway; overshoots); none = the preset's, else reserve."),
    p("itpm", "input tokens/minute", "none", "Input-token limit (Anthropic's ITPM), counted at admission; over it: 429 naming input tokens per minute; none = unlimited."),
    p("itpm_cached", "free or counted", "none", "Whether prompt tokens read from the cache count toward itpm; none = the preset's, else free (as Anthropic counts)."),
    p("otpm", "output tokens/minute", "none", "Output-token limit (Anthropic's OTPM): max_tokens reserved at admission, settled to the tokens generated; none = unlimited."),
    p("limit_window", "bucket or fixed", "none", "How the limits refill: bucket = continuously (OpenAI, Anthropic), fixed = all at once every limit_period (Azure's short windows); none = the preset's, else bucket."),
    p("limit_period", DURATION, "none", "The period a limit may be spent over: a bucket holds that share of the per-minute limit, a fixed window resets that often; none = the preset's, else 1m."),
    p("accel", "factor", "none", "Acceleration limit: the requests admitted in the last 10 s may be at most this many times those of the 10 s before (at least accel_floor per second); over it: 429 while the other limits still show room; none = off."),
    p("accel_floor", "requests/second", "5", "The earlier rate an acceleration limit always allows to grow from (a server just started, a quiet account)."),
    p("concurrency_limit", "requests", "none", "Requests in flight per account (or key): past it 429 at once, as an aggregator refuses (concurrency_cap queues instead); none = unlimited."),
    p("limits_per", "account or key", "none", "Whom the limits count: the whole account, or each API key on its own; none = the preset's, else account."),
    p("seed", "integer", "42", "Seed of the faults, jitter, lengths and drift: the same seed gives the same server."),
    p("require_api_key", "text", "none", "Key requests must carry (Bearer, or x-api-key on /messages), else 401 invalid_api_key; none = no auth."),
    p("known_models_only", BOOL, "false", "Answer 404 model_not_found for models not configured under models (sim-model always exists)."),
    p("prefix_cache", BOOL, "false", "Keep a prefix cache: prompt tokens whose 16-token blocks (with everything before them) were seen before cost no prefill and are reported as cached in usage (and in /metrics as vLLM's prefix_cache_hits)."),
    p("prefix_cache_tokens", TOKENS, "16000000", "Capacity of the prefix cache: past it the least recently used blocks are evicted (the deepest of a prompt first), so sessions whose histories outgrow it miss and pay prefill again."),
    p("tool_call_share", FRACTION, "0", "Share of requests with tools (and tool_choice auto) answered with a call of a tool (the one tool_choice names, else the first) whose arguments stream as the dialect's tool-call deltas, instead of text; drawn per request from the seed. tool_choice required (any) or a named tool always gets a call, none never."),
    p("reasoning_tokens", TOKENS, "0", "Reasoning tokens per answer, decoded at tpot each before the first answer token and counted in usage; hidden (they delay the first token) unless stream_reasoning."),
    p("stream_reasoning", BOOL, "false", "Stream the reasoning tokens as reasoning deltas (chat reasoning_content, Anthropic thinking_delta, Responses reasoning_summary_text.delta) so TTFT is the first reasoning token and TTFC the first answer token; streaming chat, messages and responses only."),
    p("embed_time", DURATION, "10ms", "Base time of an embeddings answer (/v1/embeddings) once a slot is free; ttft_sigma and drift spread it as they do TTFT."),
    p("embed_per_token", DURATION, "50us", "Time per input token of an embeddings answer, every text of the request counted (the prefill an embedding is)."),
    p("embed_dimensions", "integer", "384", "Size of each embedding vector when the request sets no dimensions (floats, or base64 of little-endian float32s with encoding_format: base64)."),
    p("faults.http_500", RATE, "0", "Share of requests answered HTTP 500."),
    p("faults.http_502", RATE, "0", "Share of requests answered HTTP 502."),
    p("faults.http_503", RATE, "0", "Share of requests answered HTTP 503."),
    p("faults.overloaded_529", RATE, "0", "Share of requests answered with Anthropic's 529 overloaded_error."),
    p("faults.disconnect", RATE, "0", "Share of streams whose connection drops mid-stream."),
    p("faults.stall", RATE, "0", "Share of streams that send nothing for faults.stall_for mid-stream, then continue."),
    p("faults.stall_for", DURATION, "5s", "How long a stall lasts."),
    p("faults.malformed", RATE, "0", "Share of streams with one invalid JSON data line."),
    p("faults.inband_error", RATE, "0", "Share of streams ending with an error object (Anthropic: event: error; Responses: response.failed) mid-stream."),
    p("faults.no_done", RATE, "0", "Share of streams ending cleanly without [DONE] / message_stop / response.completed."),
    p("faults.json_body", RATE, "0", "Share of streaming requests answered 200 with a plain JSON body."),
    p("models.<name>.ttft", DURATION, "ttft", "TTFT of one model (a name under models; any name, served like sim-model)."),
    p("models.<name>.tpot", DURATION, "tpot", "TPOT of one model."),
    p("models.<name>.output_tokens", TOKENS, "output_tokens", "Answer length of one model."),
];

/// The row for `key`: an exact key, or `models.NAME.field` for a `models.<name>.field` row.
pub fn find(key: &str) -> Option<&'static Param> {
    let pattern = match key.strip_prefix("models.") {
        Some(rest) => match rest.rsplit_once('.') {
            Some((name, field)) if !name.is_empty() => format!("models.<name>.{field}"),
            _ => return None,
        },
        None => key.to_string(),
    };
    PARAMS.iter().find(|p| p.key == pattern)
}

/// Every key, in table order.
pub fn keys() -> impl Iterator<Item = &'static str> {
    PARAMS.iter().map(|p| p.key)
}
