//! Small helpers every layer may use and that know nothing of ladder's types: human-readable
//! durations, RFC 3339 timestamps and the one redaction rule set.

pub mod duration;
pub mod redact;
pub mod timestamp;
