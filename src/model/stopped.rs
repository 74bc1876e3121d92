//! Why a run stopped before its plan ended: a signal (Ctrl-C, SIGTERM) or the fail-fast rule
//! (its first requests all failed with one class that no load changes: a refused connection, a
//! refused key, a missing model). Kept in `meta.json` as `stopped_by`, and said in these words
//! everywhere a stopped run is shown: the terminal, the diff's warning and verdict in every
//! format (table, markdown, JSON, JUnit), `run --format json|markdown` and the report.

use serde::{Deserialize, Serialize};

/// The cause of an early stop (`meta.json`: `{"cause": "fail-fast", …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum StoppedBy {
    /// A stop signal: `signal` names it (`SIGINT`, which Ctrl-C sends, or `SIGTERM`) when it is
    /// known.
    Interrupted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
    },
    /// The fail-fast rule: the first `requests` requests to `model` all failed with `class`
    /// (as in requests.csv's `error_class`); `message` is the first failure's, redacted.
    FailFast {
        class: String,
        model: String,
        requests: u32,
        message: String,
    },
}

impl StoppedBy {
    /// What happened, after "the run …": `was interrupted by SIGTERM`, `stopped early: the
    /// first 5 requests to m all failed with connect (Connection refused)`.
    pub fn how(&self) -> String {
        match self {
            StoppedBy::Interrupted { signal: Some(s) } => format!("was interrupted by {s}"),
            StoppedBy::Interrupted { signal: None } => {
                "was interrupted (Ctrl-C or SIGTERM)".to_string()
            }
            StoppedBy::FailFast {
                class,
                model,
                requests,
                message,
            } => format!(
                "stopped early: the first {requests} requests to {model} all failed with \
                 {class} ({message})"
            ),
        }
    }

    /// A short name of the cause: `interrupted`, `fail-fast: connect`.
    pub fn short(&self) -> String {
        match self {
            StoppedBy::Interrupted { .. } => "interrupted".to_string(),
            StoppedBy::FailFast { class, .. } => format!("fail-fast: {class}"),
        }
    }
}

/// The words for a run whose `meta.json` says it was interrupted but not why (written before
/// `stopped_by` was kept).
pub const STOPPED_UNKNOWN: &str =
    "was stopped before its plan ended (by a signal or the fail-fast rule; its meta.json does not say which)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_and_the_json_of_each_cause() {
        let ff = StoppedBy::FailFast {
            class: "connect".into(),
            model: "m".into(),
            requests: 5,
            message: "tcp connect error: Connection refused".into(),
        };
        assert_eq!(
            ff.how(),
            "stopped early: the first 5 requests to m all failed with connect (tcp connect error: Connection refused)"
        );
        assert_eq!(ff.short(), "fail-fast: connect");
        let json = serde_json::to_value(&ff).unwrap();
        assert_eq!(json["cause"], "fail-fast");
        assert_eq!(json["class"], "connect");
        let sig = StoppedBy::Interrupted {
            signal: Some("SIGTERM".into()),
        };
        assert_eq!(sig.how(), "was interrupted by SIGTERM");
        assert_eq!(
            serde_json::to_string(&sig).unwrap(),
            r#"{"cause":"interrupted","signal":"SIGTERM"}"#
        );
        let back: StoppedBy = serde_json::from_str(r#"{"cause":"interrupted"}"#).unwrap();
        assert_eq!(back.how(), "was interrupted (Ctrl-C or SIGTERM)");
    }
}
