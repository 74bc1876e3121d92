//! Streaming clients, one module per API. `sse` parses bytes into events, the dialect modules
//! turn events into `ChunkInfo`, `timing` turns timestamped chunks into a record's figures.

pub mod anthropic;
pub mod chunk;
pub mod http;
pub mod openai;
pub mod ratelimit;
pub mod sse;
pub mod timing;
