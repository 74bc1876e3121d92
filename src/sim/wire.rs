//! The bytes the simulator sends for a completion, per dialect: SSE frames built from a prefix
//! and suffix serialized once per request (so a token costs one allocation and two copies), and
//! the equivalent non-streaming JSON bodies, per wire shape (`dialect::Shape`): a dialect of an
//! existing shape needs nothing here. Pure.

use crate::dialect::{Api, Shape};
use bytes::Bytes;
use serde_json::{json, Value};

/// The generated text: token `i` is `WORDS[i % WORDS.len()]`. Plain ASCII, no JSON escaping needed.
pub const WORDS: [&str; 16] = [
    " the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", " and", " then",
    " it", " runs", " far", " away", ".",
];

/// The word sent as token `i`.
pub fn word(i: u32) -> &'static str {
    WORDS[i as usize % WORDS.len()]
}

/// The text of the first `n` tokens.
pub fn text(n: u32) -> String {
    (0..n).map(word).collect()
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model's natural end (`stop` / `end_turn`).
    Stop,
    /// Cut by max_tokens (`length` / `max_tokens`).
    Length,
}

impl Finish {
    fn name(self, api: Api) -> &'static str {
        let (stop, length) = api.spec().finish;
        match self {
            Finish::Stop => stop,
            Finish::Length => length,
        }
    }
}

/// The arguments of a simulated tool call are `{"q":"<the answer's words>"}`: the first token
/// opens the object, the last closes it (as text inside a JSON string, escaped).
const ARGS_OPEN: &str = "{\\\"q\\\":\\\"";
const ARGS_CLOSE: &str = "\\\"}";

/// The escaped arguments of a call of `n` tokens.
fn call_args(n: u32) -> String {
    if n == 0 {
        return String::new();
    }
    format!("{ARGS_OPEN}{}{ARGS_CLOSE}", text(n))
}

/// A simulated tool call: the tool's name as JSON text, the tokens of its arguments and their
/// escaped text.
#[derive(Debug, Clone)]
struct Call {
    name_json: String,
    n: u32,
    args: String,
}

/// `event: ping` between Anthropic events.
pub const PING: &str = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

/// Pre-serialized frames of one response.
#[derive(Debug, Clone)]
pub struct Frames {
    dialect: Api,
    /// The dialect's shape on the wire (`Spec::shape`), which the frames follow.
    shape: Shape,
    id: String,
    model: String,
    created: u64,
    /// `"model":"<escaped>"` as JSON text.
    model_json: String,
    token_prefix: Vec<u8>,
    token_suffix: &'static [u8],
    /// Prompt tokens served from the prefix cache (reported in usage when above 0).
    cached: u64,
    /// Prompt tokens written to the cache, reported when the request asked for caching
    /// (Anthropic's `cache_control`): Anthropic's usage then names reads and writes.
    cache_written: Option<u64>,
    /// Reasoning tokens, counted in usage on top of the answer's.
    reasoning: u64,
    /// The reasoning is streamed as reasoning deltas before the answer (`streaming_reasoning`).
    reasoning_streamed: bool,
    /// An embeddings answer's shape: texts, vector size, base64 (`embedding`).
    embedding: Option<embeddings::Shape>,
    /// The answer is a tool call (`with_tool_call`).
    call: Option<Call>,
}

impl Frames {
    /// Frames for response `id` of `model`, created at Unix time `created`.
    pub fn new(dialect: Api, id: String, model: &str, created: u64) -> Frames {
        let model_json = Value::from(model).to_string();
        let (token_prefix, token_suffix): (String, &'static [u8]) = match dialect.spec().shape {
            Shape::ChatChunks => (
                format!(
                    "data: {{\"id\":\"{id}\",\"object\":\"chat.completion.chunk\",\"created\":{created},\"model\":{model_json},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\""
                ),
                b"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
            ),
            Shape::CompletionChunks => (
                format!(
                    "data: {{\"id\":\"{id}\",\"object\":\"text_completion\",\"created\":{created},\"model\":{model_json},\"choices\":[{{\"text\":\""
                ),
                b"\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}]}\n\n",
            ),
            Shape::MessageEvents => (
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"".to_string(),
                b"\"}}\n\n",
            ),
            Shape::ResponseEvents => {
                let ids = responses::Ids {
                    id: &id,
                    created,
                    model_json: &model_json,
                    tool: None,
                };
                responses::token_parts(&ids, false)
            }
            // Never streamed: no token frames.
            Shape::Vectors => (String::new(), b""),
        };
        Frames {
            dialect,
            shape: dialect.spec().shape,
            id,
            model: model.to_string(),
            created,
            model_json,
            token_prefix: token_prefix.into_bytes(),
            token_suffix,
            cached: 0,
            cache_written: None,
            reasoning: 0,
            reasoning_streamed: false,
            embedding: None,
            call: None,
        }
    }

    /// The same frames, answering with a call of the tool named `name` whose arguments are `n`
    /// tokens, in the dialect's shape: chat `delta.tool_calls` (the call's id and name first,
    /// then its arguments), Anthropic a `tool_use` block of `input_json_delta`s, Responses a
    /// `function_call` item of `response.function_call_arguments.delta`s; the finish reason is
    /// the dialect's for a call (`tool_calls`, `tool_use`) unless the limit cut it. Legacy
    /// completions have no tools and keep answering with text.
    pub fn with_tool_call(mut self, name: &str, n: u32) -> Frames {
        if self.shape == Shape::CompletionChunks {
            return self;
        }
        self.call = Some(Call {
            name_json: Value::from(name).to_string(),
            n,
            args: call_args(n),
        });
        self.set_token_parts();
        self
    }

    /// The id of the answer's tool call, when it is one: the dialect's call prefix and the
    /// answer's own id after its prefix (`call_sim7`, `toolu_sim7`), as its frames say it.
    pub fn call_id(&self) -> Option<String> {
        let spec = self.dialect.spec();
        let suffix = self.id.strip_prefix(spec.id_prefix).unwrap_or(&self.id);
        self.call
            .as_ref()
            .map(|_| format!("{}{suffix}", spec.call_id_prefix))
    }

    /// The fixed parts of an answer token's frame, for the answer's kind (text or a call's
    /// arguments) and place (after streamed reasoning or not).
    fn set_token_parts(&mut self) {
        let (id, created, model) = (&self.id, self.created, &self.model_json);
        let block = self.answer_block();
        let (prefix, suffix): (String, &'static [u8]) = match (self.shape, self.call.is_some()) {
            (Shape::ResponseEvents, _) => responses::token_parts(&self.ids(), self.reasoning_streamed),
            (Shape::ChatChunks, true) => (
                format!(
                    "data: {{\"id\":\"{id}\",\"object\":\"chat.completion.chunk\",\"created\":{created},\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\""
                ),
                b"\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
            ),
            (Shape::MessageEvents, true) => (
                format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{block},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\""),
                b"\"}}\n\n",
            ),
            (Shape::MessageEvents, false) => (
                format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{block},\"delta\":{{\"type\":\"text_delta\",\"text\":\""),
                b"\"}}\n\n",
            ),
            // Chat text, legacy completions and vectors keep the frame set at creation.
            (Shape::ChatChunks, false) | (Shape::CompletionChunks | Shape::Vectors, _) => return,
        };
        self.token_prefix = prefix.into_bytes();
        self.token_suffix = suffix;
    }

    /// What the chat answer's call says first: its index, id, type and name, no arguments yet.
    fn chat_call_opening(&self, call: &Call) -> String {
        let (id, created, model) = (&self.id, self.created, &self.model_json);
        let suffix = id.strip_prefix("chatcmpl-").unwrap_or(id);
        format!(
            "data: {{\"id\":\"{id}\",\"object\":\"chat.completion.chunk\",\"created\":{created},\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"index\":0,\"id\":\"call_{suffix}\",\"type\":\"function\",\"function\":{{\"name\":{},\"arguments\":\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n",
            call.name_json
        )
    }

    /// Anthropic's block of the answer: a `tool_use` block for a call, else a text block.
    fn anthropic_answer_block(&self) -> String {
        match &self.call {
            Some(c) => {
                let suffix = self.id.strip_prefix("msg_").unwrap_or(&self.id);
                format!(
                    "{{\"type\":\"tool_use\",\"id\":\"toolu_{suffix}\",\"name\":{},\"input\":{{}}}}",
                    c.name_json
                )
            }
            None => "{\"type\":\"text\",\"text\":\"\"}".to_string(),
        }
    }

    /// The finish reason of an answer that ended with `finish`.
    fn finish_reason(&self, finish: Finish) -> &'static str {
        match (finish, &self.call, self.shape) {
            (Finish::Stop, Some(_), Shape::ChatChunks) => "tool_calls",
            (Finish::Stop, Some(_), Shape::MessageEvents) => "tool_use",
            (
                _,
                _,
                Shape::ChatChunks
                | Shape::MessageEvents
                | Shape::CompletionChunks
                | Shape::ResponseEvents
                | Shape::Vectors,
            ) => finish.name(self.dialect),
        }
    }

    /// The same frames, reporting `written` prompt tokens written to the cache when `Some`
    /// (Anthropic's `cache_creation_input_tokens`, which `input_tokens` then leaves out, with
    /// `cache_read_input_tokens` beside it even when 0, as Anthropic sends both).
    pub fn with_cache_written(mut self, written: Option<u64>) -> Frames {
        self.cache_written = written;
        self
    }

    /// Anthropic's usage of the prompt: `input_tokens` (the part neither read from nor written
    /// to the cache) and the cache fields, as JSON text after `input_tokens`.
    fn anthropic_input(&self, input_tokens: u64) -> (u64, String) {
        match (self.cached, self.cache_written) {
            (0, None) => (input_tokens, String::new()),
            (c, None) => (
                input_tokens.saturating_sub(c),
                format!(",\"cache_read_input_tokens\":{c}"),
            ),
            (c, Some(w)) => (
                input_tokens.saturating_sub(c).saturating_sub(w),
                format!(",\"cache_creation_input_tokens\":{w},\"cache_read_input_tokens\":{c}"),
            ),
        }
    }

    /// The same frames, answering an embeddings request of `inputs` texts with vectors of
    /// `dimensions` floats, as base64 when asked.
    pub fn with_embedding(mut self, inputs: u32, dimensions: u32, base64: bool) -> Frames {
        self.embedding = Some(embeddings::Shape {
            inputs,
            dimensions,
            base64,
        });
        self
    }

    /// The same frames, reporting `cached` prompt tokens in usage (OpenAI
    /// `prompt_tokens_details.cached_tokens`; Anthropic `cache_read_input_tokens`, which
    /// `input_tokens` then leaves out).
    pub fn with_cached(mut self, cached: u64) -> Frames {
        self.cached = cached;
        self
    }

    /// The same frames, counting `reasoning` hidden reasoning tokens in usage (OpenAI
    /// `completion_tokens` plus `completion_tokens_details.reasoning_tokens` in chat; Anthropic
    /// `output_tokens`, which counts thinking).
    pub fn with_reasoning(mut self, reasoning: u32) -> Frames {
        self.reasoning = u64::from(reasoning);
        self
    }

    /// The same frames, streaming the reasoning before the answer ([`Frames::reasoning_token`]):
    /// Anthropic's answer then goes in a second content block (index 1) after the thinking one.
    pub fn streaming_reasoning(mut self) -> Frames {
        self.reasoning_streamed = true;
        self.set_token_parts();
        self
    }

    /// Whether the dialect has a reasoning field to stream (legacy completions and embeddings
    /// have none).
    pub fn can_stream_reasoning(&self) -> bool {
        !matches!(self.shape, Shape::CompletionChunks | Shape::Vectors)
    }

    /// The Responses API's identity of this response.
    fn ids(&self) -> responses::Ids<'_> {
        responses::Ids {
            id: &self.id,
            created: self.created,
            model_json: &self.model_json,
            tool: self
                .call
                .as_ref()
                .map(|c| (c.name_json.as_str(), c.args.as_str())),
        }
    }

    /// The frame carrying reasoning token `i`: chat `delta.reasoning_content` (DeepSeek, vLLM,
    /// SGLang), Anthropic `thinking_delta`, a Responses reasoning summary's delta. Legacy
    /// completions have no reasoning field.
    pub fn reasoning_token(&self, i: u32) -> Bytes {
        let (id, created, model) = (&self.id, self.created, &self.model_json);
        let w = word(i);
        Bytes::from(match self.shape {
            Shape::ResponseEvents => responses::reasoning_token(&self.ids(), i, w),
            Shape::MessageEvents => format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"thinking_delta\",\"thinking\":\"{w}\"}}}}\n\n"
            ),
            // Chat's field; legacy completions and vectors never reason (`reasoning` is 0).
            Shape::ChatChunks | Shape::CompletionChunks | Shape::Vectors => format!(
                "data: {{\"id\":\"{id}\",\"object\":\"chat.completion.chunk\",\"created\":{created},\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"reasoning_content\":\"{w}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
            ),
        })
    }

    /// What goes before the first answer token after streamed reasoning: Anthropic closes the
    /// thinking block (with its signature) and opens the text block; Responses closes the
    /// reasoning item and opens the message. Nothing for chat.
    pub fn answer_start(&self) -> Option<Bytes> {
        if !self.reasoning_streamed {
            return None;
        }
        match self.shape {
            Shape::ResponseEvents => {
                let r = u32::try_from(self.reasoning).unwrap_or(u32::MAX);
                Some(Bytes::from(responses::answer_start(&self.ids(), r)))
            }
            Shape::MessageEvents => Some(Bytes::from(format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"signature_delta\",\"signature\":\"sim\"}}}}\n\nevent: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\nevent: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{}}}\n\n",
                self.anthropic_answer_block()
            ))),
            // Chat: a call's opening comes after the reasoning.
            Shape::ChatChunks | Shape::CompletionChunks | Shape::Vectors => self
                .call
                .as_ref()
                .map(|c| Bytes::from(self.chat_call_opening(c))),
        }
    }

    /// The index of the content block the answer goes in (Anthropic).
    fn answer_block(&self) -> u32 {
        u32::from(self.reasoning_streamed)
    }

    /// What is sent when prefill starts: the chat role chunk, Anthropic's message_start,
    /// content_block_start and a ping, or the Responses API's response created and in progress
    /// and its first item opened. Nothing for legacy completions.
    pub fn opening(&self, input_tokens: u64) -> Option<Bytes> {
        let (id, created, model) = (&self.id, self.created, &self.model_json);
        let (input_tokens, cache) = self.anthropic_input(input_tokens);
        match self.shape {
            Shape::ChatChunks => match (&self.call, self.reasoning_streamed) {
                (Some(call), false) => Some(Bytes::from(self.chat_call_opening(call))),
                _ => Some(Bytes::from(format!(
                    "data: {{\"id\":\"{id}\",\"object\":\"chat.completion.chunk\",\"created\":{created},\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
                ))),
            },
            Shape::CompletionChunks | Shape::Vectors => None,
            Shape::ResponseEvents => Some(Bytes::from(responses::opening(
                &self.ids(),
                self.reasoning_streamed,
            ))),
            Shape::MessageEvents => {
                let block = if self.reasoning_streamed {
                    "{\"type\":\"thinking\",\"thinking\":\"\"}".to_string()
                } else {
                    self.anthropic_answer_block()
                };
                let mut s = format!(
                    "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"{id}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":{model},\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{input_tokens}{cache},\"output_tokens\":1}}}}}}\n\nevent: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{block}}}\n\n"
                );
                s.push_str(PING);
                Some(Bytes::from(s))
            }
        }
    }

    /// The frame carrying token `i`.
    pub fn token(&self, i: u32) -> Bytes {
        let w = word(i).as_bytes();
        let mut buf =
            Vec::with_capacity(self.token_prefix.len() + w.len() + self.token_suffix.len() + 16);
        buf.extend_from_slice(&self.token_prefix);
        // A call's arguments open with the first token and close with the last.
        let call_n = self.call.as_ref().map(|c| c.n);
        if call_n.is_some() && i == 0 {
            buf.extend_from_slice(ARGS_OPEN.as_bytes());
        }
        buf.extend_from_slice(w);
        if call_n == Some(i + 1) {
            buf.extend_from_slice(ARGS_CLOSE.as_bytes());
        }
        buf.extend_from_slice(self.token_suffix);
        if self.shape == Shape::ResponseEvents {
            // Each event's number ends its object.
            let seq =
                responses::first_answer_seq(self.streamed(), self.call.is_some()) + u64::from(i);
            buf.extend_from_slice(seq.to_string().as_bytes());
            buf.extend_from_slice(b"}\n\n");
        }
        Bytes::from(buf)
    }

    /// The reasoning tokens streamed before the answer, when they are.
    fn streamed(&self) -> Option<u64> {
        self.reasoning_streamed.then_some(self.reasoning)
    }

    /// The Responses API's ending of an answer of `n` tokens from `input` prompt tokens.
    fn responses_usage(&self, input: u64, n: u32) -> String {
        let output = u64::from(n) + self.reasoning;
        responses::usage(input, output, self.cached, self.reasoning)
    }

    /// Everything after the last token: finish chunk, usage chunk (if asked), `[DONE]` (if
    /// `done`); for Anthropic content_block_stop, message_delta and message_stop (if `done`);
    /// for Responses the text, part and item done and `response.completed` or
    /// `response.incomplete` (if `done`).
    pub fn closing(&self, finish: Finish, usage: Option<(u64, u32)>, done: bool) -> Bytes {
        if self.shape == Shape::ResponseEvents {
            let (input, n) = usage.unwrap_or((0, 0));
            let ending = responses::Ending {
                n,
                cut: finish == Finish::Length,
                reasoning_streamed: self
                    .streamed()
                    .map(|r| u32::try_from(r).unwrap_or(u32::MAX)),
                usage: &self.responses_usage(input, n),
            };
            return Bytes::from(responses::closing(&self.ids(), &ending, done));
        }
        let (id, created, model) = (&self.id, self.created, &self.model_json);
        let reason = self.finish_reason(finish);
        let mut s = String::with_capacity(512);
        match self.shape {
            Shape::ChatChunks | Shape::CompletionChunks => {
                let (object, choice) = if self.shape == Shape::ChatChunks {
                    ("chat.completion.chunk", format!("{{\"index\":0,\"delta\":{{}},\"logprobs\":null,\"finish_reason\":\"{reason}\"}}"))
                } else {
                    ("text_completion", format!("{{\"text\":\"\",\"index\":0,\"logprobs\":null,\"finish_reason\":\"{reason}\"}}"))
                };
                let head = format!("data: {{\"id\":\"{id}\",\"object\":\"{object}\",\"created\":{created},\"model\":{model},\"choices\":[");
                s.push_str(&head);
                s.push_str(&choice);
                s.push_str("]}\n\n");
                if let Some((input, output)) = usage {
                    let output = u64::from(output) + self.reasoning;
                    s.push_str(&head);
                    s.push_str(&format!(
                        "],\"usage\":{{\"prompt_tokens\":{input},\"completion_tokens\":{output},\"total_tokens\":{}{}{}}}}}\n\n",
                        input + output,
                        match self.cached {
                            0 => String::new(),
                            c => format!(",\"prompt_tokens_details\":{{\"cached_tokens\":{c}}}"),
                        },
                        match self.reasoning {
                            0 => String::new(),
                            r if self.shape == Shape::ChatChunks => format!(",\"completion_tokens_details\":{{\"reasoning_tokens\":{r}}}"),
                            _ => String::new(),
                        }
                    ));
                }
                if done {
                    s.push_str("data: [DONE]\n\n");
                }
            }
            Shape::ResponseEvents | Shape::Vectors => {}
            Shape::MessageEvents => {
                let output = u64::from(usage.map(|u| u.1).unwrap_or(0)) + self.reasoning;
                s.push_str(&format!(
                    "event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{}}}\n\n",
                    self.answer_block()
                ));
                s.push_str(&format!(
                    "event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{reason}\",\"stop_sequence\":null}},\"usage\":{{\"output_tokens\":{output}}}}}\n\n"
                ));
                if done {
                    s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
                }
            }
        }
        Bytes::from(s)
    }

    /// One data line that is not valid JSON (a truncated chunk).
    pub fn malformed(&self) -> Bytes {
        match self.shape {
            Shape::ResponseEvents => Bytes::from_static(responses::MALFORMED),
            Shape::MessageEvents => Bytes::from_static(
                b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n",
            ),
            Shape::ChatChunks | Shape::CompletionChunks | Shape::Vectors => Bytes::from(format!("data: {{\"id\":\"{}\",\"choices\":[{{\"delta\":{{\"content\":\n\n", self.id)),
        }
    }

    /// An in-band error event (OpenAI error object, Anthropic `event: error`, Responses
    /// `response.failed`, numbered after the `sent` tokens, reasoning included).
    pub fn inband_error(&self, sent: u32) -> Bytes {
        match self.shape {
            Shape::ResponseEvents => {
                let answered = self.streamed().is_some_and(|r| u64::from(sent) > r);
                // Reasoning is numbered from the opening's end, whatever the answer is.
                let tool = self.call.is_some();
                let base = responses::first_answer_seq(None, tool && self.streamed().is_none());
                let seq = base
                    + u64::from(sent)
                    + if answered {
                        responses::switch_events(tool)
                    } else {
                        0
                    };
                Bytes::from(responses::failed(&self.ids(), seq))
            }
            Shape::MessageEvents => Bytes::from_static(
                b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
            ),
            Shape::ChatChunks | Shape::CompletionChunks | Shape::Vectors => Bytes::from_static(
                b"data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
            ),
        }
    }

    /// The non-streaming body of an answer that failed in-band, when the dialect has its own
    /// (the Responses API's response object with `status: failed`); `None`: its error body.
    pub fn failed_body(&self) -> Option<Vec<u8>> {
        (self.shape == Shape::ResponseEvents)
            .then(|| responses::failed_response(&self.ids()).into_bytes())
    }

    /// Anthropic's whole answer's usage, with the cache fields of [`Frames::anthropic_input`].
    fn anthropic_whole_usage(&self, input_tokens: u64, n: u32) -> Value {
        let (input, cache) = self.anthropic_input(input_tokens);
        let text = format!("{{\"input_tokens\":{input}{cache},\"output_tokens\":{n}}}");
        serde_json::from_str(&text).unwrap_or_default()
    }

    /// The non-streaming JSON body for `n` tokens.
    pub fn full_body(&self, n: u32, finish: Finish, input_tokens: u64) -> Vec<u8> {
        let reason = self.finish_reason(finish);
        let text = text(n);
        // A call's arguments, unescaped, and as Anthropic's `input` object.
        let args = if n > 0 {
            format!("{{\"q\":\"{text}\"}}")
        } else {
            String::new()
        };
        let name = self
            .call
            .as_ref()
            .and_then(|c| serde_json::from_str::<String>(&c.name_json).ok());
        let mut usage = json!({
            "prompt_tokens": input_tokens,
            "completion_tokens": n,
            "total_tokens": input_tokens + u64::from(n),
        });
        if self.cached > 0 {
            usage["prompt_tokens_details"] = json!({"cached_tokens": self.cached});
        }
        let v = match self.shape {
            Shape::ChatChunks => {
                let message = match &name {
                    Some(name) => {
                        let suffix = self.id.strip_prefix("chatcmpl-").unwrap_or(&self.id);
                        json!({"role": "assistant", "content": null, "tool_calls": [
                            {"id": format!("call_{suffix}"), "type": "function",
                             "function": {"name": name, "arguments": args}}]})
                    }
                    None => json!({"role": "assistant", "content": text}),
                };
                json!({
                    "id": self.id, "object": "chat.completion", "created": self.created,
                    "model": self.model,
                    "choices": [{"index": 0, "message": message,
                                 "logprobs": null, "finish_reason": reason}],
                    "usage": usage,
                })
            }
            Shape::CompletionChunks => json!({
                "id": self.id, "object": "text_completion", "created": self.created,
                "model": self.model,
                "choices": [{"text": text, "index": 0, "logprobs": null, "finish_reason": reason}],
                "usage": usage,
            }),
            Shape::MessageEvents => json!({
                "id": self.id, "type": "message", "role": "assistant", "model": self.model,
                "content": [match &name {
                    Some(name) => {
                        let suffix = self.id.strip_prefix("msg_").unwrap_or(&self.id);
                        json!({"type": "tool_use", "id": format!("toolu_{suffix}"), "name": name,
                               "input": serde_json::from_str::<Value>(&args).unwrap_or(json!({}))})
                    }
                    None => json!({"type": "text", "text": text}),
                }],
                "stop_reason": reason, "stop_sequence": null,
                "usage": self.anthropic_whole_usage(input_tokens, n),
            }),
            Shape::ResponseEvents => {
                let ending = responses::Ending {
                    n,
                    cut: finish == Finish::Length,
                    reasoning_streamed: None,
                    usage: &self.responses_usage(input_tokens, n),
                };
                return responses::full_body(&self.ids(), &ending).into_bytes();
            }
            Shape::Vectors => {
                let shape = self.embedding.unwrap_or_default();
                return embeddings::body(&shape, &self.model_json, input_tokens).into_bytes();
            }
        };
        v.to_string().into_bytes()
    }
}

mod embeddings;
mod responses;

#[cfg(test)]
mod tests;
