//! Streaming clients, one module per API. `sse` parses bytes into events, the dialect modules
//! turn events into `ChunkInfo`, `timing` turns timestamped chunks into a record's figures.

pub mod anthropic;
pub mod builder;
pub mod calls;
pub mod chunk;
pub mod connect_timer;
pub mod dialect;
pub mod embeddings;
pub mod endpoint;
pub mod error_body;
pub mod http;
pub(crate) mod lenient;
pub mod openai;
pub mod pool;
pub mod prom;
pub mod proxy;
pub mod ratelimit;
pub mod request_id;
pub mod responses;
pub mod server_timing;
pub mod sse;
pub mod timing;
pub mod tls;
pub mod untrusted;

use bytes::Bytes;
use std::future::Future;

/// The network seam: "send one request and read its stream". The runner only talks to a
/// `Backend`; `http::HttpBackend` is the real client, and the runner's tests use a scripted fake
/// on paused tokio time, so whole ladders run in pretend time.
pub trait Backend: Send + Sync + 'static {
    /// The request body for `model`, built once per model and reused for every request.
    fn body_for(&self, model: &str, request: &crate::scenario::RequestSpec) -> Bytes;
    /// Sends one request (with its `x-request-id`) and reads the answer to its end.
    fn send(&self, body: Bytes, request_id: &str) -> impl Future<Output = http::Attempt> + Send;
}

/// The request every dialect's unit tests build bodies from.
#[cfg(test)]
pub(crate) fn test_spec() -> crate::scenario::RequestSpec {
    crate::scenario::RequestSpec {
        prompt: "Say hi".into(),
        prompt_file: std::path::PathBuf::from("p.txt"),
        system: None,
        system_file: None,
        max_tokens: Some(64),
        temperature: None,
        extra_body: serde_json::Map::new(),
        ..Default::default()
    }
}

#[cfg(test)]
mod whole_tests;

#[cfg(test)]
mod history_tests;
