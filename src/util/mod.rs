//! Small helpers every layer may use and that know nothing of ladder's types: human-readable
//! durations and the one redaction rule set.

pub mod duration;
pub mod redact;
