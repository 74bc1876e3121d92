//! Small helpers every layer may use and that know nothing of ladder's types: human-readable
//! durations, RFC 3339 timestamps, the one redaction rule set and a short byte search.

pub mod bytes;
pub mod duration;
pub mod redact;
pub mod timestamp;
