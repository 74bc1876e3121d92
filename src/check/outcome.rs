//! What happened to the one `ladder check` request, reduced to the facts the diagnosis needs:
//! an `Attempt` from the real client path (`client::http::send_once`) becomes an `Outcome`
//! with any echo of the key already redacted. Kept apart from the diagnosis so that the
//! diagnosis can be tested on outcomes written by hand. Pure: no I/O.

use super::seen::Seen;
use crate::client::http::Attempt;
use crate::model::{ErrorClass, TokensSource};
use crate::scenario::Secret;
use crate::util::redact::Redactor;

/// The phrase `client::http` uses for an HTML error body.
const HTML_PHRASE: &str = "HTML page";
/// The start of `client::http`'s message for a 2xx answer that is not an event stream.
const NOT_STREAM_PHRASE: &str = "expected an event stream";

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The request could not be built; `key_related`: the key cannot go into an HTTP header.
    NotSent { reason: String, key_related: bool },
    /// No HTTP answer: connection, DNS, TLS, proxy, timeout before the response headers.
    NoAnswer { class: ErrorClass, detail: String },
    /// A non-2xx answer.
    Status {
        status: u16,
        error_type: Option<String>,
        message: String,
        html: bool,
        quota: bool,
    },
    /// A 2xx answer that is not an event stream (`error`: an error object it carried).
    NotStream {
        status: u16,
        content_type: String,
        html: bool,
        error: Option<String>,
    },
    /// The stream started and then failed (in-band error, disconnect, stall, malformed, empty).
    StreamFailed {
        class: ErrorClass,
        error_type: Option<String>,
        message: String,
    },
    /// The stream ended properly.
    Streamed {
        ttft_ms: Option<f64>,
        output_tokens: Option<u64>,
        tokens_source: Option<TokensSource>,
        token_events: u64,
        /// Reasoning tokens the server reported inside `output_tokens`.
        reasoning_tokens: Option<u64>,
        /// What else the answer showed (TTFC, streamed reasoning, tool calls, cached input).
        seen: Seen,
    },
    /// An embeddings answer with one vector per input ([`Outcome::embedded`]).
    Embedded {
        e2e_ms: f64,
        /// `usage.prompt_tokens`, when reported.
        input_tokens: Option<u64>,
    },
}

impl Outcome {
    /// The same outcome of an embeddings request (`Api::embeds`): its success is one answer of
    /// vectors, timed end to end, not a stream.
    pub fn embedded(self, a: &Attempt) -> Outcome {
        match self {
            Outcome::Streamed { .. } => Outcome::Embedded {
                e2e_ms: a.elapsed_ms,
                input_tokens: a.timing.as_ref().and_then(|t| t.input_tokens),
            },
            other => other,
        }
    }
}

/// The outcome of one attempt; any occurrence of `key` in server text is replaced by `***`.
pub fn from_attempt(a: &Attempt, key: Option<&Secret>) -> Outcome {
    let redactor = Redactor::new(key.map(Secret::expose));
    let message = redactor.redact(a.error_message.as_deref().unwrap_or(""));
    let error_type = a.error_type.as_ref().map(|t| redactor.redact(t));
    let Some(class) = a.error_class else {
        let t = a.timing.clone().unwrap_or_default();
        return Outcome::Streamed {
            ttft_ms: t.ttft_ms,
            output_tokens: t.output_tokens,
            tokens_source: t.tokens_source,
            token_events: t.token_events,
            reasoning_tokens: t.reasoning_tokens,
            seen: Seen {
                ttfc_ms: t.ttfc_ms,
                input_tokens: t.input_tokens,
                cached_tokens: t.cached_tokens,
                reasoning_events: t.reasoning_events,
                tool_calls: t.tool_calls,
            },
        };
    };
    let Some(status) = a.http_status else {
        return Outcome::NoAnswer {
            class,
            detail: message,
        };
    };
    if !(200..300).contains(&status) {
        return Outcome::Status {
            status,
            html: message.contains(HTML_PHRASE) || message.trim_start().starts_with('<'),
            quota: class == ErrorClass::Quota,
            error_type,
            message,
        };
    }
    if class == ErrorClass::Protocol && message.starts_with(NOT_STREAM_PHRASE) {
        let content_type = message
            .split_once("content type `")
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(ct, _)| ct.to_string())
            .unwrap_or_default();
        return Outcome::NotStream {
            status,
            html: content_type.contains("html"),
            content_type,
            error: None,
        };
    }
    // A JSON error body on a 2xx answer: `client::http` reports it without stream timing.
    if class == ErrorClass::StreamError && a.timing.is_none() {
        return Outcome::NotStream {
            status,
            content_type: "application/json".into(),
            html: false,
            error: Some(message),
        };
    }
    Outcome::StreamFailed {
        class,
        error_type,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::timing::TimingSummary;

    fn failed(class: ErrorClass, status: Option<u16>, msg: &str) -> Attempt {
        Attempt {
            error_class: Some(class),
            http_status: status,
            error_message: Some(msg.into()),
            ..Default::default()
        }
    }

    #[test]
    fn success_keeps_the_timing_figures() {
        let a = Attempt {
            http_status: Some(200),
            timing: Some(TimingSummary {
                ttft_ms: Some(12.5),
                output_tokens: Some(5),
                tokens_source: Some(TokensSource::Usage),
                token_events: 5,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            from_attempt(&a, None),
            Outcome::Streamed {
                ttft_ms: Some(12.5),
                output_tokens: Some(5),
                tokens_source: Some(TokensSource::Usage),
                token_events: 5,
                reasoning_tokens: None,
                seen: Seen::default(),
            }
        );
    }

    #[test]
    fn no_status_is_no_answer() {
        let a = failed(
            ErrorClass::Connect,
            None,
            "error connecting: Connection refused",
        );
        assert_eq!(
            from_attempt(&a, None),
            Outcome::NoAnswer {
                class: ErrorClass::Connect,
                detail: "error connecting: Connection refused".into()
            }
        );
    }

    #[test]
    fn error_statuses_are_redacted_and_flag_html_and_quota() {
        let key = Secret::new("sk-test-secret-1");
        let mut a = failed(
            ErrorClass::Http401,
            Some(401),
            "Incorrect API key provided: sk-test-secret-1",
        );
        a.error_type = Some("invalid_api_key".into());
        match from_attempt(&a, Some(&key)) {
            Outcome::Status {
                status,
                message,
                html,
                quota,
                error_type,
            } => {
                assert_eq!(status, 401);
                assert_eq!(message, "Incorrect API key provided: ***");
                assert!(!html && !quota);
                assert_eq!(error_type.as_deref(), Some("invalid_api_key"));
            }
            o => panic!("{o:?}"),
        }
        let html = failed(
            ErrorClass::Http404,
            Some(404),
            "the server answered with an HTML page, not JSON (is base_url pointing at a web page or a proxy?)",
        );
        assert!(matches!(
            from_attempt(&html, None),
            Outcome::Status { html: true, .. }
        ));
        let quota = failed(
            ErrorClass::Quota,
            Some(429),
            "You exceeded your current quota",
        );
        assert!(matches!(
            from_attempt(&quota, None),
            Outcome::Status { quota: true, .. }
        ));
    }

    #[test]
    fn two_hundred_without_a_stream() {
        let a = failed(
            ErrorClass::Protocol,
            Some(200),
            "expected an event stream (text/event-stream) but got content type `text/html; charset=utf-8`; does the server support `stream: true`?",
        );
        assert_eq!(
            from_attempt(&a, None),
            Outcome::NotStream {
                status: 200,
                content_type: "text/html; charset=utf-8".into(),
                html: true,
                error: None
            }
        );
        let none = failed(
            ErrorClass::Protocol,
            Some(200),
            "expected an event stream (text/event-stream) but got no content type; does the server support `stream: true`?",
        );
        assert!(matches!(
            from_attempt(&none, None),
            Outcome::NotStream { html: false, ref content_type, .. } if content_type.is_empty()
        ));
        let json_err = failed(ErrorClass::StreamError, Some(200), "boom");
        assert_eq!(
            from_attempt(&json_err, None),
            Outcome::NotStream {
                status: 200,
                content_type: "application/json".into(),
                html: false,
                error: Some("boom".into())
            }
        );
    }

    #[test]
    fn failures_inside_a_stream() {
        let mut a = failed(ErrorClass::StreamError, Some(200), "Overloaded");
        a.timing = Some(TimingSummary::default());
        a.error_type = Some("overloaded_error".into());
        assert_eq!(
            from_attempt(&a, None),
            Outcome::StreamFailed {
                class: ErrorClass::StreamError,
                error_type: Some("overloaded_error".into()),
                message: "Overloaded".into()
            }
        );
        let e = failed(ErrorClass::Empty, Some(200), "no token");
        assert!(matches!(
            from_attempt(&e, None),
            Outcome::StreamFailed {
                class: ErrorClass::Empty,
                ..
            }
        ));
    }
}
