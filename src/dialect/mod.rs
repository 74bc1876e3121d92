//! The API dialects ladder speaks, and what each one is on the wire: the only place that names
//! them. A dialect's facts (its name in a scenario, its path, how its key travels, how usage is
//! asked for, what its error bodies and finish reasons look like, what `check` says about it)
//! are one [`Spec`] value; `scenario`, `client`, `sim` and `check` ask the spec instead of
//! matching on the dialect. The per-dialect code that cannot be a fact (building a request body,
//! reading a stream, writing one in the simulator) sits behind `client::dialect` and
//! `sim::wire`. Pure; below `sim`, so the simulator serves the same definitions the client sends.

/// An API dialect (`target.api`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Api {
    /// `POST {base_url}/chat/completions`
    #[default]
    OpenAiChat,
    /// `POST {base_url}/completions`
    OpenAiCompletions,
    /// `POST {base_url}/messages`
    AnthropicMessages,
    /// `POST {base_url}/responses`
    OpenAiResponses,
    /// `POST {base_url}/embeddings`
    OpenAiEmbeddings,
}

/// The provider family a dialect belongs to: whose keys, error bodies and rate-limit headers
/// it shares. Several dialects may share one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    OpenAi,
    Anthropic,
}

impl Family {
    /// The provider's name as people know it (and as `check` names a key's provider).
    pub fn provider(self) -> &'static str {
        match self {
            Family::OpenAi => "OpenAI",
            Family::Anthropic => "Anthropic",
        }
    }

    /// Its `gen_ai.provider.name` in the OpenTelemetry GenAI conventions (the OTLP export).
    pub fn otel_provider(self) -> &'static str {
        match self {
            Family::OpenAi => "openai",
            Family::Anthropic => "anthropic",
        }
    }

    /// The variable a provider's key is conventionally kept in.
    pub fn key_env(self) -> &'static str {
        match self {
            Family::OpenAi => "OPENAI_API_KEY",
            Family::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The dialect a tool of this family speaks when nothing says otherwise.
    pub fn default_api(self) -> Api {
        Api::ALL
            .into_iter()
            .find(|a| a.spec().family == self)
            .unwrap_or_default()
    }
}

/// Where a dialect's key goes by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer KEY`
    Bearer,
    /// `x-api-key: KEY`
    XApiKey,
}

/// The shape of a dialect's requests and answers on the wire: which code builds its body and
/// reads its answer (`client::dialect`), and which frames and bodies the simulator sends
/// (`sim::wire`). Dialects that differ only in facts (path, key header, names, limits) share a
/// shape, so a new one of them is a `Spec` and no code; a new shape is new code in those two
/// registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Chat completions: `chat.completion.chunk` events with `choices[].delta`.
    ChatChunks,
    /// Legacy completions: `text_completion` events with `choices[].text`.
    CompletionChunks,
    /// Anthropic's Messages: typed events (`message_start`, `content_block_delta`, …).
    MessageEvents,
    /// The Responses API: typed events (`response.output_text.delta`, `response.completed`, …).
    ResponseEvents,
    /// Embeddings: one JSON answer holding a vector per input, never streamed.
    Vectors,
}

/// What a request sends as its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A list of chat messages (roles; sessions and chat traces are possible).
    Messages,
    /// One prompt string (a system text is prepended).
    Prompt,
    /// Texts to embed (one, or `request.batch` of them): the answer is one vector per text, not
    /// generated tokens, so it is never streamed, has no output limit and no first token.
    Texts,
}

impl Input {
    /// Its `gen_ai.operation.name` in the OpenTelemetry GenAI conventions (the OTLP export).
    pub fn otel_operation(self) -> &'static str {
        match self {
            Input::Messages => "chat",
            Input::Prompt => "text_completion",
            Input::Texts => "embeddings",
        }
    }
}

/// How a stream comes to carry token usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    /// Only when asked: `stream_options.include_usage`.
    OptIn,
    /// Always, in the stream's own events.
    Always,
}

/// How a dialect's provider caches prompts (issue 38).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptCaching {
    /// On its own, for any long enough prefix (OpenAI); `key`: the request may name a routing
    /// key (`prompt_cache_key`) so that prompts sharing a prefix reach the same cache.
    Automatic { key: bool },
    /// Only up to the breakpoints the request marks (Anthropic's `cache_control`).
    Breakpoints,
}

/// Everything about a dialect that is a fact rather than code.
#[derive(Debug)]
pub struct Spec {
    /// Its name in a scenario (`target.api`) and on the command line (`--api`).
    pub name: &'static str,
    /// The path appended to `target.base_url` (the simulator serves it under `/v1`).
    pub path: &'static str,
    pub family: Family,
    /// Its requests' and answers' shape on the wire (the code that speaks it).
    pub shape: Shape,
    /// Where the key goes unless `target.auth` says otherwise.
    pub key_header: KeyHeader,
    /// Headers every request carries.
    pub fixed_headers: &'static [(&'static str, &'static str)],
    pub input: Input,
    /// The body fields that carry the prompt, in the order a model reads them (the system
    /// prompt first): what the simulator counts as input tokens and hashes for its prefix cache.
    pub prompt_fields: &'static [&'static str],
    pub usage: Usage,
    /// The body fields a server reads the output limit from, first found wins; the first is
    /// also the one a scenario's `max_tokens` is sent under by default.
    pub max_tokens_fields: &'static [&'static str],
    /// Every request must carry an output limit (`max_tokens: null` is refused).
    pub limit_required: bool,
    /// The smallest output limit the provider takes (`check`'s tiny request asks for at least
    /// this many tokens).
    pub min_limit: u32,
    /// Finish reasons: the model's natural end, and a cut at the output limit.
    pub finish: (&'static str, &'static str),
    /// How the provider's response ids start.
    pub id_prefix: &'static str,
    /// The event that should have carried usage, for `check`'s "no usage" diagnosis.
    pub no_usage: &'static str,
    /// The server keeps every response unless the request says `store: false` (the Responses
    /// API): ladder sends `store: false`, and `check` explains a server that refuses the field.
    pub stores: bool,
    /// The body field that continues a stored response (`previous_response_id`): a session may
    /// send only its new turn and the previous answer's id (`session: {chain: …}`).
    pub chain_field: Option<&'static str>,
    /// The request may carry function tools (`request.tools`, `tool_choice`).
    pub tools: bool,
    /// How the provider's tool-call ids start (`call_…`, `toolu_…`): a call ladder makes up for
    /// an agent's history (`load.agent`) gets an id of the same shape.
    pub call_id_prefix: &'static str,
    pub caching: PromptCaching,
}

const OPENAI_CHAT: Spec = Spec {
    name: "openai-chat",
    path: "/chat/completions",
    family: Family::OpenAi,
    shape: Shape::ChatChunks,
    key_header: KeyHeader::Bearer,
    fixed_headers: &[],
    input: Input::Messages,
    prompt_fields: &["messages"],
    usage: Usage::OptIn,
    max_tokens_fields: &["max_completion_tokens", "max_tokens"],
    limit_required: false,
    min_limit: 1,
    finish: ("stop", "length"),
    id_prefix: "chatcmpl-",
    no_usage: "the server ignores stream_options.include_usage",
    stores: false,
    chain_field: None,
    tools: true,
    call_id_prefix: "call_",
    caching: PromptCaching::Automatic { key: true },
};

const OPENAI_COMPLETIONS: Spec = Spec {
    name: "openai-completions",
    path: "/completions",
    shape: Shape::CompletionChunks,
    input: Input::Prompt,
    prompt_fields: &["prompt"],
    tools: false,
    caching: PromptCaching::Automatic { key: false },
    max_tokens_fields: &["max_tokens"],
    id_prefix: "cmpl-",
    ..OPENAI_CHAT
};

const ANTHROPIC_MESSAGES: Spec = Spec {
    name: "anthropic-messages",
    path: "/messages",
    family: Family::Anthropic,
    shape: Shape::MessageEvents,
    key_header: KeyHeader::XApiKey,
    fixed_headers: &[("anthropic-version", "2023-06-01")],
    input: Input::Messages,
    prompt_fields: &["system", "messages"],
    usage: Usage::Always,
    max_tokens_fields: &["max_tokens"],
    limit_required: true,
    min_limit: 1,
    finish: ("end_turn", "max_tokens"),
    id_prefix: "msg_",
    no_usage: "the server sent no usage in message_delta",
    stores: false,
    chain_field: None,
    tools: true,
    call_id_prefix: "toolu_",
    caching: PromptCaching::Breakpoints,
};

/// The Responses API: typed events, usage always in `response.completed`. Its finish reasons are
/// the ones ladder records, since the API has none of its own: `stop` for `response.completed`,
/// `length` for `response.incomplete` cut at `max_output_tokens` (another reason of an incomplete
/// response, e.g. `content_filter`, is recorded as it is).
const OPENAI_RESPONSES: Spec = Spec {
    name: "openai-responses",
    path: "/responses",
    shape: Shape::ResponseEvents,
    input: Input::Messages,
    prompt_fields: &["instructions", "input"],
    usage: Usage::Always,
    max_tokens_fields: &["max_output_tokens"],
    // OpenAI refuses a `max_output_tokens` below 16.
    min_limit: 16,
    id_prefix: "resp_",
    no_usage: "the server sent no usage in response.completed",
    stores: true,
    chain_field: Some("previous_response_id"),
    ..OPENAI_CHAT
};

/// The Embeddings API: `input` (a string or a list of strings), one JSON answer with one vector
/// per input (`data[].embedding`, floats or base64) and `usage.prompt_tokens`; nothing is
/// generated, so there is no output limit, no finish reason and no stream.
const OPENAI_EMBEDDINGS: Spec = Spec {
    name: "openai-embeddings",
    path: "/embeddings",
    shape: Shape::Vectors,
    input: Input::Texts,
    prompt_fields: &["input"],
    usage: Usage::Always,
    max_tokens_fields: &[],
    min_limit: 0,
    finish: ("", ""),
    id_prefix: "emb-",
    no_usage: "the server sent no usage in the embeddings answer",
    tools: false,
    caching: PromptCaching::Automatic { key: false },
    ..OPENAI_CHAT
};

impl Api {
    /// Every dialect, in the order they are listed to people.
    pub const ALL: [Api; 5] = [
        Api::OpenAiChat,
        Api::OpenAiCompletions,
        Api::AnthropicMessages,
        Api::OpenAiResponses,
        Api::OpenAiEmbeddings,
    ];

    /// The registry: each dialect's facts.
    pub fn spec(self) -> &'static Spec {
        match self {
            Api::OpenAiChat => &OPENAI_CHAT,
            Api::OpenAiCompletions => &OPENAI_COMPLETIONS,
            Api::AnthropicMessages => &ANTHROPIC_MESSAGES,
            Api::OpenAiResponses => &OPENAI_RESPONSES,
            Api::OpenAiEmbeddings => &OPENAI_EMBEDDINGS,
        }
    }

    /// Its name in a scenario (`openai-chat`).
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The dialect a scenario or the command line names.
    pub fn from_name(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// Every dialect's name, in [`Api::ALL`]'s order.
    pub fn names() -> [&'static str; Api::ALL.len()] {
        Api::ALL.map(Api::as_str)
    }

    /// Its position in [`Api::ALL`] (a per-dialect counter's index).
    pub fn index(self) -> usize {
        Api::ALL.iter().position(|a| *a == self).unwrap_or(0)
    }

    /// The dialect Codex CLI speaks for a provider's `wire_api` in its `config.toml`:
    /// `responses` (current Codex's only value, and its default) or `chat` (older releases).
    pub fn from_codex_wire_api(wire_api: &str) -> Option<Api> {
        match wire_api {
            "responses" => Some(Api::OpenAiResponses),
            "chat" => Some(Api::OpenAiChat),
            _ => None,
        }
    }

    /// Its `wire_api` value in Codex CLI's `config.toml`, if Codex can speak it.
    pub fn codex_wire_api(self) -> Option<&'static str> {
        ["responses", "chat"]
            .into_iter()
            .find(|w| Api::from_codex_wire_api(w) == Some(self))
    }

    /// Whether its requests send chat messages (sessions, chat traces).
    pub fn takes_messages(self) -> bool {
        self.spec().input == Input::Messages
    }

    /// Whether it embeds texts instead of generating tokens (`Input::Texts`): its answer is
    /// whole (never streamed), has no output limit and no first token, and a request may carry
    /// several inputs (`request.batch`).
    pub fn embeds(self) -> bool {
        self.spec().input == Input::Texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialects_cut_at_the_output_limit_is_known_to_the_record() {
        for api in Api::ALL.into_iter().filter(|a| !a.embeds()) {
            let (natural, cut) = api.spec().finish;
            let record = |finish: &str| crate::model::RequestRecord {
                finish_reason: Some(finish.to_string()),
                ..Default::default()
            };
            assert!(record(cut).hit_output_limit(), "{api:?}: {cut}");
            assert!(!record(natural).hit_output_limit(), "{api:?}: {natural}");
        }
    }

    #[test]
    fn names_and_indices_round_trip() {
        for (i, api) in Api::ALL.into_iter().enumerate() {
            assert_eq!(Api::from_name(api.as_str()), Some(api));
            assert_eq!(api.index(), i);
        }
        assert_eq!(
            Api::from_name("openai-responses"),
            Some(Api::OpenAiResponses)
        );
        assert_eq!(
            Api::from_name("openai-embeddings"),
            Some(Api::OpenAiEmbeddings)
        );
        assert!(Api::OpenAiEmbeddings.embeds() && !Api::OpenAiResponses.embeds());
        assert_eq!(Api::from_name("openai-images"), None);
        assert_eq!(Api::default(), Api::OpenAiChat);
        let mut names = Api::names().to_vec();
        names.dedup();
        assert_eq!(names.len(), Api::ALL.len());
    }

    #[test]
    fn a_family_defaults_to_its_first_dialect() {
        assert_eq!(Family::Anthropic.default_api(), Api::AnthropicMessages);
        assert_eq!(Family::OpenAi.default_api(), Api::OpenAiChat);
    }

    #[test]
    fn every_path_starts_with_a_slash_and_is_unique() {
        let mut paths: Vec<_> = Api::ALL.iter().map(|a| a.spec().path).collect();
        assert!(paths.iter().all(|p| p.starts_with('/')));
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), Api::ALL.len());
    }
}
