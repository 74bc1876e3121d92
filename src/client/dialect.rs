//! The client's half of each API dialect: the registry from a dialect's wire shape
//! (`dialect::Shape`) to the code that builds its request bodies and reads its answers (the
//! facts, such as its path and headers, are in `dialect`'s `Spec`). A dialect of an existing
//! shape needs nothing here; a new shape adds its module (`client/<shape>.rs`) and one entry
//! here. Nothing else in the client names a dialect or a shape.

use super::calls::{self, CallLog};
use super::chunk::{ChunkInfo, MalformedEvent};
use super::sse::EventRef;
use super::{anthropic, embeddings, openai, responses};
use crate::dialect::{Api, Shape};
use crate::scenario::RequestSpec;
use serde_json::Value;

/// What the client does differently per dialect.
pub struct ClientDialect {
    /// The JSON body for one model, from the scenario's request and its per-request input
    /// (prompt, messages); built once per model and reused.
    pub body: fn(&str, &RequestSpec) -> Value,
    /// A reader for the events of one answer.
    pub reader: fn() -> EventReader,
    /// Keeps the tool calls of one stream event (its name and data), for a request that keeps
    /// them (`client::calls`).
    pub calls: fn(&str, &[u8], &mut CallLog),
    /// The same for a whole answer (`request.stream: false`).
    pub whole_calls: fn(&[u8], &mut CallLog),
}

const OPENAI_CHAT: ClientDialect = ClientDialect {
    body: openai::chat_body,
    reader: chat_reader,
    calls: openai::keep_chat_calls,
    whole_calls: openai::keep_whole_chat_calls,
};

const OPENAI_COMPLETIONS: ClientDialect = ClientDialect {
    body: openai::completions_body,
    reader: completions_reader,
    calls: calls::none,
    whole_calls: calls::none_whole,
};

const ANTHROPIC_MESSAGES: ClientDialect = ClientDialect {
    body: anthropic::messages_body,
    reader: messages_reader,
    calls: anthropic::keep_calls,
    whole_calls: anthropic::keep_whole_calls,
};

const OPENAI_RESPONSES: ClientDialect = ClientDialect {
    body: responses::responses_body,
    reader: responses_reader,
    calls: responses::keep_calls,
    whole_calls: responses::keep_whole_calls,
};

const OPENAI_EMBEDDINGS: ClientDialect = ClientDialect {
    body: embeddings::embeddings_body,
    reader: embeddings_reader,
    calls: calls::none,
    whole_calls: calls::none_whole,
};

/// The registry.
pub fn of(api: Api) -> &'static ClientDialect {
    match api.spec().shape {
        Shape::ChatChunks => &OPENAI_CHAT,
        Shape::CompletionChunks => &OPENAI_COMPLETIONS,
        Shape::MessageEvents => &ANTHROPIC_MESSAGES,
        Shape::ResponseEvents => &OPENAI_RESPONSES,
        Shape::Vectors => &OPENAI_EMBEDDINGS,
    }
}

fn chat_reader() -> EventReader {
    EventReader::OpenAi(openai::ChunkReader::chat())
}

fn completions_reader() -> EventReader {
    EventReader::OpenAi(openai::ChunkReader::completions())
}

fn messages_reader() -> EventReader {
    EventReader::Anthropic
}

fn responses_reader() -> EventReader {
    EventReader::Responses(responses::ResponsesReader::default())
}

fn embeddings_reader() -> EventReader {
    EventReader::Embeddings(embeddings::EmbeddingsReader::default())
}

/// The meaning of one answer's events, in order, in its dialect. An enum rather than a trait
/// object, so the per-token call is a direct one and a dialect keeps its own fast path (OpenAI's
/// `ChunkReader::read_raw` compares the common chunk with the stream's last one from its raw
/// bytes). A request sent with `stream: false` is answered with one JSON body, read by
/// [`EventReader::whole`] in the same dialect.
pub enum EventReader {
    OpenAi(openai::ChunkReader),
    Anthropic,
    Responses(responses::ResponsesReader),
    /// Never streamed: only [`EventReader::whole`] reads its answer.
    Embeddings(embeddings::EmbeddingsReader),
}

impl EventReader {
    /// The meaning of the answer's next event.
    #[inline]
    pub fn interpret(&mut self, ev: EventRef<'_>) -> Result<ChunkInfo, MalformedEvent> {
        match self {
            EventReader::OpenAi(reader) => reader.read_raw(ev.event, ev.data),
            EventReader::Anthropic => anthropic::messages_event(ev.event, &ev.text()),
            EventReader::Responses(reader) => reader.read(ev.event, ev.data),
            EventReader::Embeddings(_) => Err(MalformedEvent(
                "an embeddings answer is one JSON body, not an event stream".into(),
            )),
        }
    }

    /// The meaning of a whole answer (`request.stream: false`): one JSON body in the dialect's
    /// shape (or its error body), read as one final event.
    pub fn whole(&mut self, body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
        match self {
            EventReader::OpenAi(reader) => reader.whole(body),
            EventReader::Anthropic => anthropic::whole_message(body),
            EventReader::Responses(reader) => reader.whole(body),
            EventReader::Embeddings(reader) => reader.whole(body),
        }
    }

    /// The same reader, for an answer to a request of `inputs` texts (`request.batch`): an
    /// embeddings answer must hold one vector per text; other dialects answer one prompt.
    pub fn expecting(self, inputs: u32) -> Self {
        match self {
            EventReader::Embeddings(_) => {
                EventReader::Embeddings(embeddings::EmbeddingsReader::expecting(inputs as usize))
            }
            other => other,
        }
    }

    /// The id the server gave the answer, when the dialect has one a later request can refer to
    /// (the Responses API's `resp_…`, for a chained session).
    pub fn take_response_id(&mut self) -> Option<String> {
        match self {
            EventReader::Responses(reader) => reader.take_id(),
            EventReader::OpenAi(_) | EventReader::Anthropic | EventReader::Embeddings(_) => None,
        }
    }
}
