//! Small helpers every layer may use and that know nothing of ladder's types: human-readable
//! durations, RFC 3339 timestamps, the one redaction rule set, a short byte search and numbers
//! written as text without `core::fmt`.

pub mod bytes;
pub mod digits;
pub mod duration;
pub mod redact;
pub mod timestamp;
