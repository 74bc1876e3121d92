//! Small helpers every layer may use and that know nothing of ladder's types: human-readable
//! durations, RFC 3339 timestamps, the one redaction rule set and the one reader of OTLP JSON
//! spans.

pub mod duration;
pub mod otlp_json;
pub mod redact;
pub mod timestamp;
