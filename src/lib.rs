//! ladder: load-test LLM APIs with git-versioned scenarios, keep the results as CSV baselines,
//! and tell with defensible statistics whether a new run regressed.
//!
//! Layout (docs/architecture.md): dependencies point downwards only. `app` wires the
//! subcommands; pure cores (`client::sse`, `stats`, `findings`, `compare`) take data and return
//! data; `model` and `util` at the bottom import nothing of ours.

pub mod app;
pub mod check;
pub mod cli;
pub mod client;
pub mod compare;
pub mod dialect;
pub mod error;
pub mod findings;
pub mod logs;
pub mod model;
pub mod plan;
pub mod render;
pub mod runner;
pub mod scenario;
pub mod shard;
pub mod sim;
pub mod stats;
pub mod store;
pub mod telemetry;
pub mod util;
