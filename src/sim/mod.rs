//! The embedded simulator: an OpenAI- and Anthropic-compatible streaming server used by the demo,
//! the tests and anyone rehearsing a gate without an API key.

use serde::{Deserialize, Serialize};

/// Server-side parameters (DESIGN §8). Not part of the workload fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimParams {}
