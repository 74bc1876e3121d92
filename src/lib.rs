//! ladder: load-test LLM APIs with git-versioned scenarios, keep the results as CSV baselines,
//! and tell with defensible statistics whether a new run regressed.
//!
//! Layout (DESIGN §10): dependencies point downwards only. `app` wires the subcommands; pure
//! cores (`client::sse`, `stats`, `findings`, `compare`) take data and return data.

pub mod app;
pub mod arrivals;
pub mod check;
pub mod cli;
pub mod client;
pub mod clock;
pub mod collect;
pub mod compare;
pub mod duration;
pub mod error;
pub mod findings;
pub mod merge;
pub mod partial;
pub mod plan;
pub mod progress;
pub mod record;
pub mod redact;
pub mod render;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod schema;
pub mod selfcheck;
pub mod shard;
pub mod sim;
pub mod stats;
pub mod store;
pub mod trend;
pub mod verdict;
pub mod workload;
