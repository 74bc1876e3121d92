//! The embedded simulator: an OpenAI- and Anthropic-compatible streaming server used by the demo,
//! the tests and anyone rehearsing a gate without an API key. It models what makes real services
//! behave as they do (docs/simulator.md): TTFT with prefill and FIFO queueing at a concurrency cap, TPOT
//! with seeded jitter and optional saturation, account limits as providers count them (RPM, TPM,
//! ITPM, OTPM, concurrency, acceleration) answering 429, and seeded
//! fault injection. `/sim/stats` and `/sim/truth` expose what the server did, for comparison with
//! what the client measured.

mod auth;
mod calls;
mod faults;
mod limits;
mod params;
mod prefix_cache;
mod request;
mod respond;
mod server;
mod state;
mod stream;
mod variation;
mod walk;
mod wire;

pub use params::{FaultRates, ModelOverride, ModelTiming, Param, SimParams, DEFAULT_MODEL};
pub use server::{serve_forever, start, SimHandle, SimServer};
pub use state::{route_path, SimStats, TruthRecord};
pub use walk::{DriftWalk, WalkPath};

#[cfg(test)]
mod tests;
