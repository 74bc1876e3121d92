//! OpenAI Embeddings API (`POST {base_url}/embeddings`): request body and the answer's reader.
//!
//! The request sends `model` and `input`: the prompt as one string, or a list of texts when a
//! request carries several (`request.batch`); `dimensions` and `encoding_format` go through
//! `extra_body`. Nothing is generated and nothing streams: the answer is one JSON body,
//! `{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [...]}], "model",
//! "usage": {"prompt_tokens", "total_tokens"}}`, each vector a list of floats or, with
//! `encoding_format: base64`, a base64 string of little-endian float32s.
//!
//! The reader checks the answer's shape without keeping a vector: each vector's length is
//! counted (its elements skipped, or its base64 length measured), and the answer must hold
//! exactly one vector per input, with indexes covering 0..N-1 and one size for all; anything else
//! is a malformed answer (`protocol`), saying why. An error body (`{"error": {...}}`) is an
//! in-band error.

use super::chunk::{ChunkInfo, MalformedEvent};
use super::error_body::{malformed, parse_error_body};
use super::openai::merge_extra;
use super::sse::decode;
use crate::scenario::RequestSpec;
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt;

/// Body for `POST {base_url}/embeddings`: the request's texts (`RequestSpec::inputs`, filled per
/// request from a prompt set), or its prompt `batch` times, or, for one text, the prompt as a
/// string. `extra_body` goes on top (`dimensions`, `encoding_format`, `user`, …).
pub fn embeddings_body(model: &str, req: &RequestSpec) -> Value {
    let input = if !req.inputs.is_empty() {
        Value::from(req.inputs.clone())
    } else if req.batch > 1 {
        Value::Array(vec![Value::from(req.prompt.as_str()); req.batch as usize])
    } else {
        Value::from(req.prompt.as_str())
    };
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("input".into(), input);
    merge_extra(body, req)
}

/// Reads one embeddings answer, knowing how many inputs its request sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddingsReader {
    inputs: usize,
}

impl Default for EmbeddingsReader {
    fn default() -> Self {
        EmbeddingsReader { inputs: 1 }
    }
}

impl EmbeddingsReader {
    /// A reader for the answer to a request of `inputs` texts.
    pub fn expecting(inputs: usize) -> Self {
        EmbeddingsReader {
            inputs: inputs.max(1),
        }
    }

    /// Meaning of the whole answer ([`whole_embeddings`]).
    pub fn whole(&self, body: &[u8]) -> Result<ChunkInfo, MalformedEvent> {
        whole_embeddings(body, self.inputs)
    }
}

/// Meaning of a whole embeddings answer to a request of `inputs` texts: a success carries its
/// vectors (`content`, no token is timed) and its input tokens (`usage.prompt_tokens`; output
/// 0); an error body is an in-band error; an answer without one vector per input, or not the
/// embeddings shape, is malformed, saying why.
pub fn whole_embeddings(body: &[u8], inputs: usize) -> Result<ChunkInfo, MalformedEvent> {
    let text = decode(body);
    let text = text.trim();
    let answer: Answer = serde_json::from_str(text).map_err(|e| malformed("answer", text, &e))?;
    let Some(items) = answer.data else {
        if let Some(err) = parse_error_body(text.as_bytes()) {
            return Ok(ChunkInfo {
                error: Some(err),
                done: true,
                ..ChunkInfo::default()
            });
        }
        let snippet: String = text.chars().take(80).collect();
        return Err(MalformedEvent(format!(
            "the embeddings answer has no `data` list of vectors: `{snippet}`"
        )));
    };
    check_vectors(&items, inputs).map_err(MalformedEvent)?;
    let usage = answer.usage.unwrap_or_default();
    Ok(ChunkInfo {
        // The vectors arrived: the answer is not empty, though no token was generated.
        content: true,
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.prompt_tokens.map(|_| 0),
        done: true,
        ..ChunkInfo::default()
    })
}

/// One vector per input, indexes 0..N-1 each once, one size for all.
fn check_vectors(items: &[Item], inputs: usize) -> Result<(), String> {
    if items.len() != inputs {
        let s = if inputs == 1 { "" } else { "s" };
        return Err(format!(
            "the embeddings answer holds {} vectors for {inputs} input{s}; one vector per input \
             is expected",
            items.len()
        ));
    }
    let mut seen = vec![false; inputs];
    let mut size = None;
    for (k, item) in items.iter().enumerate() {
        let Some(index) = item.index else {
            return Err(format!(
                "vector {k} of the embeddings answer has no `index`; each names the input it \
                 embeds"
            ));
        };
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| seen.get_mut(i))
            .ok_or_else(|| {
                format!(
                    "vector {k} has index {index}, outside the {inputs} inputs (0 to {})",
                    inputs - 1
                )
            })?;
        if std::mem::replace(slot, true) {
            return Err(format!(
                "two vectors have index {index}; each input gets one"
            ));
        }
        let dims = match &item.embedding {
            Some(Dims(Ok(0))) | None => {
                return Err(format!("vector {index} of the embeddings answer is empty"))
            }
            Some(Dims(Err(why))) => return Err(format!("vector {index}: {why}")),
            Some(Dims(Ok(n))) => *n,
        };
        match size {
            Some(d) if d != dims => {
                return Err(format!(
                    "the vectors differ in size ({d} and {dims} dimensions); one model gives one \
                     size"
                ))
            }
            _ => size = Some(dims),
        }
    }
    Ok(())
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Answer {
    data: Option<Vec<Item>>,
    usage: Option<EmbeddingsUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EmbeddingsUsage {
    prompt_tokens: Option<u64>,
}

/// One vector's facts: its index and its size, never its values.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Item {
    index: Option<u64>,
    embedding: Option<Dims>,
}

/// A vector's length: elements of a list of numbers (skipped as they are read), or float32s in
/// a base64 string; `Err` says why a string is not one.
struct Dims(Result<usize, String>);

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dims;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of numbers or a base64 string")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dims, A::Error> {
                let mut n = 0;
                while seq.next_element::<Component>()?.is_some() {
                    n += 1;
                }
                Ok(Dims(Ok(n)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dims, E> {
                Ok(Dims(base64_floats(s)))
            }
        }
        d.deserialize_any(V)
    }
}

/// One value of a vector: a number, read and dropped. A list there is a vector per token (a
/// server that did not pool them), said as such.
struct Component;

impl<'de> Deserialize<'de> for Component {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Component;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Component, E> {
                Ok(Component)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Component, E> {
                Ok(Component)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Component, E> {
                Ok(Component)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Component, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Err(de::Error::custom(
                    "a vector of lists: one vector per token, not per input (the server did not \
                     pool them; e.g. llama.cpp's --pooling mean)",
                ))
            }
        }
        d.deserialize_any(V)
    }
}

/// Float32s in a base64 string (standard alphabet, `=` padding).
fn base64_floats(s: &str) -> Result<usize, String> {
    let body = s.trim_end_matches('=');
    let valid = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    if s.len() - body.len() > 2 || !body.bytes().all(valid) || body.len() % 4 == 1 {
        return Err("the embedding is a string but not base64".into());
    }
    let bytes = body.len() * 3 / 4;
    if bytes % 4 != 0 {
        return Err(format!(
            "the base64 embedding holds {bytes} bytes, not a whole number of float32s"
        ));
    }
    Ok(bytes / 4)
}

#[cfg(test)]
mod tests;
