//! Streaming clients, one module per API. `sse` parses bytes into events, the dialect modules
//! turn events into `ChunkInfo`, `timing` turns timestamped chunks into a record's figures.

pub mod anthropic;
pub mod chunk;
pub mod error_body;
pub mod http;
pub(crate) mod lenient;
pub mod openai;
pub mod ratelimit;
pub mod sse;
pub mod timing;

/// The request every dialect's unit tests build bodies from.
#[cfg(test)]
pub(crate) fn test_spec() -> crate::scenario::RequestSpec {
    crate::scenario::RequestSpec {
        prompt: "Say hi".into(),
        prompt_file: std::path::PathBuf::from("p.txt"),
        system: None,
        system_file: None,
        max_tokens: 64,
        temperature: None,
        extra_body: serde_json::Map::new(),
    }
}
