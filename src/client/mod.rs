//! Streaming clients, one module per API. `sse` parses bytes into events, the dialect modules
//! turn events into `ChunkInfo`, `timing` turns timestamped chunks into a record's figures.

pub mod anthropic;
pub mod http;
pub mod chunk;
pub mod openai;
pub mod sse;
pub mod ratelimit;
pub mod timing;
