//! `ladder logs`: production's own request logs read as a ladder. Each logged request gets the
//! number of requests in flight when it started (per model, and per key when the log has one);
//! requests are grouped into in-flight levels that become the steps of a run, so the run's own
//! statistics, knee and wall rules apply unchanged; a per-minute timeline and one sentence tell
//! when the knee's level was crossed. Pure: the caller reads the files and writes the run.
//!
//! Layout: `fields` (which column is which, time and duration cells), `capacity` (what each
//! minute needed in flight against the cap), `read` (the formats),
//! `inflight` (the sweep over start/end intervals and the levels), `ladder` (records and step
//! summaries), `refine` (the knee's level bisected while the log allows), `timeline` (per
//! minute, the story), `incident` (each group's timeline and sentence against the run's knee),
//! `limits` (clock skew, sampling), `peers` (other load-testing tools' results, whose sweep
//! points are the steps).

use crate::model::{ErrorClass, LimitKind, RequestRecord};
use thiserror::Error;

pub mod capacity;
pub mod fields;
pub mod incident;
pub mod inflight;
pub mod ladder;
pub mod limits;
pub mod peers;
#[cfg(test)]
mod provider_model;
pub mod read;
mod read_otlp;
pub mod refine;
pub mod sharing;
#[cfg(test)]
mod tests_accuracy;
pub mod timeline;

pub use fields::{Field, Mapping};
pub use incident::{stories, GroupStory};
pub use inflight::{Level, Levels};
pub use ladder::{build_ladder, LogLadder, LogOptions, WallAxis};
pub use limits::{Honesty, SkewReport};
pub use read::{LogFormat, ParsedLog};
pub use refine::{analyze, Analysis};
pub use sharing::Sharing;

/// Reads `text` in `format`: OTLP JSON through `read_otlp`, every line format through `read`
/// (`Ladder` is the caller's: it needs `store`).
pub fn parse_log(text: &str, format: LogFormat, mapping: &Mapping) -> Result<ParsedLog, LogError> {
    match format {
        LogFormat::Otlp => read_otlp::parse_otlp(text),
        other => read::parse_lines(text, other, mapping),
    }
}
pub use timeline::{story, timeline, Minute};

/// What went wrong reading a log: the message names the line or field and the fix.
#[derive(Debug, Error)]
pub enum LogError {
    #[error("{0}")]
    Usage(String),
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
}

/// One request as a log tells it. Times are milliseconds (epoch, or from a run's start for
/// ladder's own `requests.csv` without its `meta.json`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogRequest {
    /// 1-based line (or span number) in its file, for messages.
    pub line: usize,
    pub start_ms: f64,
    pub end_ms: f64,
    pub ttft_ms: Option<f64>,
    pub model: String,
    /// Key, account or team, as the log names it (secret-looking values are shortened to a hash
    /// by the reader).
    pub key: Option<String>,
    pub http_status: Option<u16>,
    pub error_class: Option<ErrorClass>,
    pub error_message: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub limit_kind: Option<LimitKind>,
    /// A numeric request sequence number, when the log has one.
    pub seq: Option<u64>,
}

impl LogRequest {
    pub fn e2e_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }

    /// A record of ladder's own `requests.csv` as a logged request (its start is relative to
    /// the run's start plus `origin_ms`; its end is the start plus its E2E time).
    pub fn from_record(r: &RequestRecord, line: usize, origin_ms: f64) -> LogRequest {
        let start_ms = origin_ms + r.started_at_ms;
        LogRequest {
            line,
            start_ms,
            end_ms: start_ms + r.e2e_ms.unwrap_or(0.0),
            ttft_ms: r.ttft_ms,
            model: r.model.clone(),
            key: None,
            http_status: r.http_status,
            error_class: r.error_class,
            error_message: r.error_message.clone(),
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            limit_kind: r.limit_kind,
            seq: None,
        }
    }

    /// The group whose requests count toward each other's in-flight number: the model, and the
    /// key when the log names one (see [`keys_where_several`]).
    pub fn group(&self) -> String {
        match &self.key {
            Some(k) => format!("{} [{k}]", self.model),
            None => self.model.clone(),
        }
    }
}

/// Keeps keys only for models that the log shows with several keys: a model used with one key
/// (a gateway's single master key, a team's only token) is named by the model alone, so its
/// rows pair with a load test's.
pub fn keys_where_several(requests: &mut [LogRequest]) {
    let mut keys: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for r in requests.iter() {
        if let Some(k) = &r.key {
            keys.entry(&r.model).or_default().insert(k);
        }
    }
    let single: std::collections::BTreeSet<String> = keys
        .into_iter()
        .filter(|(_, k)| k.len() == 1)
        .map(|(m, _)| m.to_string())
        .collect();
    for r in requests.iter_mut() {
        if single.contains(&r.model) {
            r.key = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_with_one_key_is_named_by_the_model_alone() {
        let r = |m: &str, k: &str| LogRequest {
            model: m.into(),
            key: Some(k.into()),
            ..LogRequest::default()
        };
        let mut rs = vec![r("a", "x"), r("a", "x"), r("b", "x"), r("b", "y")];
        keys_where_several(&mut rs);
        let groups: Vec<String> = rs.iter().map(LogRequest::group).collect();
        assert_eq!(groups, ["a", "a", "b [x]", "b [y]"]);
    }
}
