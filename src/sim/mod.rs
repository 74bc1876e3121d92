//! The embedded simulator: an OpenAI- and Anthropic-compatible streaming server used by the demo,
//! the tests and anyone rehearsing a gate without an API key. It models what makes real services
//! behave as they do (DESIGN §8): TTFT with prefill and FIFO queueing at a concurrency cap, TPOT
//! with seeded jitter and optional saturation, RPM/TPM token buckets answering 429, and seeded
//! fault injection. `/sim/stats` and `/sim/truth` expose what the server did, for comparison with
//! what the client measured.

mod faults;
mod limits;
mod params;
mod request;
mod respond;
mod server;
mod state;
mod stream;
mod variation;
mod wire;

pub use params::{FaultRates, ModelOverride, ModelTiming, SimParams, DEFAULT_MODEL};
pub use server::{serve_forever, start, SimHandle, SimServer};
pub use state::{SimStats, TruthRecord};

/// The base URL of a target's endpoint: the URL itself, or the embedded simulator started on
/// 127.0.0.1 (a free port) with its handle, which must be kept for as long as it is needed. The
/// one place `run` and `check` start the simulator.
pub async fn serve_endpoint(
    endpoint: &crate::scenario::Endpoint,
) -> std::io::Result<(String, Option<SimHandle>)> {
    match endpoint {
        crate::scenario::Endpoint::Url(url) => Ok((url.clone(), None)),
        crate::scenario::Endpoint::Sim(params) => {
            let h = start(params.clone(), ([127, 0, 0, 1], 0).into()).await?;
            Ok((h.base_url(), Some(h)))
        }
    }
}

#[cfg(test)]
mod tests;
