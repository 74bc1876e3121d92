//! Which optional part of the request a server rejects. Servers behind request-id middleware,
//! strict gateways and half-compatible APIs answer some parts ladder adds on its own with a bare
//! `400` and an empty body (llama-cpp-python rejects a non-UUID `x-request-id` that way), which
//! says nothing. So on a 4xx with an empty or unhelpful body, `ladder check` sends the request
//! once more with each optional part removed in turn: the request-id header, `stream_options`,
//! each extra header, each `extra_body` key. The first variant the server accepts names the
//! culprit, and the diagnosis says which scenario line turns it off.
//!
//! This file decides when to try, what to try, and how to say it; `probe` sends the variants.
//! Pure: no I/O.

use super::outcome::Outcome;
use crate::dialect::Usage;
use crate::scenario::{field_line, Target};
use serde_json::{Map, Value};
use std::path::Path;

/// At most this many extra requests per check.
pub const MAX_VARIANTS: usize = 8;

/// One optional part of the check request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// The header that carries ladder's request id (`target.request_id_header`).
    RequestIdHeader(String),
    /// `stream_options: {include_usage: true}` (OpenAI dialects).
    StreamOptions,
    /// One of `target.headers`.
    Header(String),
    /// One key of `request.extra_body`.
    ExtraBody(String),
}

impl Part {
    /// A few words for a list of what was tried.
    pub fn short(&self) -> String {
        match self {
            Part::RequestIdHeader(h) => format!("the `{h}` request-id header"),
            Part::StreamOptions => "stream_options".into(),
            Part::Header(h) => format!("header `{h}`"),
            Part::ExtraBody(k) => format!("extra_body `{k}`"),
        }
    }
}

/// What was found: the part, and how to turn it off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Culprit {
    /// e.g. "the `x-request-id` header that carries ladder's request id".
    pub what: String,
    /// e.g. "set `request_id_header: none` under target: (scenarios/x.yaml:7)".
    pub fix: String,
}

/// Whether an outcome is a client error whose body does not say what is wrong: empty, or a
/// few generic words ("Bad Request"). Statuses with their own diagnosis (key, permissions,
/// path, rate limits) are left to it.
pub fn worth_trying(o: &Outcome) -> bool {
    let Outcome::Status {
        status,
        message,
        html,
        ..
    } = o
    else {
        return false;
    };
    let own_diagnosis = matches!(status, 401 | 402 | 403 | 404 | 405 | 407 | 408 | 429);
    let words = message
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .count();
    (400..500).contains(status) && !own_diagnosis && !html && words < 4
}

/// The parts to take out, in order: the request-id header, `stream_options`, each extra header,
/// each extra_body key (at most `MAX_VARIANTS` in all).
pub fn parts(target: &Target, extra_body: &Map<String, Value>) -> Vec<Part> {
    let mut out = Vec::new();
    if let Some(h) = &target.request_id_header {
        out.push(Part::RequestIdHeader(h.clone()));
    }
    if target.api.spec().usage == Usage::OptIn && !extra_body.contains_key("stream_options") {
        out.push(Part::StreamOptions);
    }
    out.extend(target.headers.iter().map(|h| Part::Header(h.name.clone())));
    out.extend(extra_body.keys().map(|k| Part::ExtraBody(k.clone())));
    out.truncate(MAX_VARIANTS);
    out
}

/// The sentence and the fix for a part the server rejects. `scenario`: the scenario file and
/// its text, when the target came from one (for line numbers).
pub fn describe(part: &Part, scenario: Option<(&Path, &str)>) -> Culprit {
    let at = |path: &[&str]| -> Option<String> {
        let (file, text) = scenario?;
        let line = field_line(text, path)?;
        Some(format!("{}:{line}", file.display()))
    };
    let file = scenario.map_or("the scenario".to_string(), |(f, _)| f.display().to_string());
    let (what, fix) = match part {
        Part::RequestIdHeader(h) => {
            let fix = match at(&["target", "request_id_header"]) {
                Some(loc) => format!("{loc}: set `request_id_header: none` (or a header name this server accepts)"),
                None => match at(&["target"]) {
                    Some(loc) => format!("{loc}: add `request_id_header: none` under target: (or a header name this server accepts)"),
                    None => format!("add `request_id_header: none` under target: in {file}"),
                },
            };
            (
                format!("the `{h}` header that carries ladder's request id"),
                fix,
            )
        }
        Part::StreamOptions => {
            let fix = match at(&["request", "extra_body"]).or_else(|| at(&["request"])) {
                Some(loc) => format!("{loc}: add `stream_options: null` to request.extra_body (token counts then come from chunks)"),
                None => format!("add `extra_body: {{stream_options: null}}` under request: in {file} (token counts then come from chunks)"),
            };
            (
                "`stream_options` (ladder asks for usage in the last chunk)".into(),
                fix,
            )
        }
        Part::Header(h) => {
            let fix = match at(&["target", "headers", h]).or_else(|| at(&["target", "headers"])) {
                Some(loc) => format!("{loc}: remove the header `{h}` from target.headers, or give it a value this server accepts"),
                None => format!("remove the header `{h}` from target.headers in {file}"),
            };
            (format!("the extra header `{h}` (target.headers)"), fix)
        }
        Part::ExtraBody(k) => {
            let fix = match at(&["request", "extra_body", k]).or_else(|| at(&["request", "extra_body"])) {
                Some(loc) => format!("{loc}: remove `{k}` from request.extra_body, or give it a value this server accepts"),
                None => format!("remove `{k}` from request.extra_body in {file}"),
            };
            (format!("the body field `{k}` (request.extra_body)"), fix)
        }
    };
    Culprit { what, fix }
}

/// The body without `stream_options`, or `None` when it has none (or is not a JSON object).
pub fn body_without_stream_options(body: &[u8]) -> Option<Vec<u8>> {
    let mut v: Map<String, Value> = serde_json::from_slice(body).ok()?;
    v.remove("stream_options")?;
    serde_json::to_vec(&v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Api;
    use crate::scenario::{Endpoint, Header, Secret, Timeouts};
    use serde_json::json;

    fn status(code: u16, message: &str) -> Outcome {
        Outcome::Status {
            status: code,
            error_type: None,
            message: message.into(),
            html: false,
            quota: false,
        }
    }

    #[test]
    fn tries_only_on_an_unexplained_client_error() {
        assert!(worth_trying(&status(400, "")));
        assert!(worth_trying(&status(400, "Bad Request")));
        assert!(worth_trying(&status(422, "{\"detail\": \"invalid\"}")));
        assert!(!worth_trying(&status(
            400,
            "temperature must be between 0 and 2"
        )));
        for code in [401, 403, 404, 429, 500, 503] {
            assert!(!worth_trying(&status(code, "")), "{code}");
        }
        let streamed = Outcome::Streamed {
            ttft_ms: Some(1.0),
            output_tokens: Some(1),
            tokens_source: None,
            token_events: 1,
            reasoning_tokens: None,
            seen: Default::default(),
        };
        assert!(!worth_trying(&streamed));
    }

    fn target(api: Api, rid: Option<&str>, headers: &[&str]) -> Target {
        Target {
            api,
            endpoint: Endpoint::Url("http://h/v1".into()),
            api_key: None,
            models: vec!["m".into()],
            headers: headers
                .iter()
                .map(|h| Header {
                    name: (*h).into(),
                    value: Secret::new("v"),
                    secret: false,
                })
                .collect(),
            timeouts: Timeouts::default(),
            request_id_header: rid.map(Into::into),
            tls: Default::default(),
            auth: crate::scenario::Auth::Bearer,
            api_version: None,
            secrets: Vec::new(),
            metrics: None,
        }
    }

    #[test]
    fn parts_come_in_order_and_only_when_sent() {
        let extra = json!({"seed": 1, "top_k": 5}).as_object().cloned().unwrap();
        let t = target(Api::OpenAiChat, Some("x-request-id"), &["x-team"]);
        assert_eq!(
            parts(&t, &extra),
            vec![
                Part::RequestIdHeader("x-request-id".into()),
                Part::StreamOptions,
                Part::Header("x-team".into()),
                Part::ExtraBody("seed".into()),
                Part::ExtraBody("top_k".into()),
            ]
        );
        let t = target(Api::AnthropicMessages, None, &[]);
        assert!(parts(&t, &Map::new()).is_empty());
        let many: Vec<String> = (0..20).map(|i| format!("h{i}")).collect();
        let names: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            parts(&target(Api::OpenAiChat, None, &names), &Map::new()).len(),
            MAX_VARIANTS
        );
    }

    const YAML: &str = "name: x\ntarget:\n  base_url: http://h/v1\n  headers:\n    x-request-id: abc\n  models: [m]\nrequest:\n  prompt_file: p.txt\n  extra_body:\n    seed: 1\n";

    #[test]
    fn fixes_name_the_line_that_turns_the_part_off() {
        let f = Path::new("s.yaml");
        let c = describe(
            &Part::RequestIdHeader("x-request-id".into()),
            Some((f, YAML)),
        );
        assert!(c.what.contains("`x-request-id` header"), "{c:?}");
        assert!(
            c.fix.starts_with("s.yaml:2: add `request_id_header: none`"),
            "{c:?}"
        );
        let with = YAML.replace("  models:", "  request_id_header: x-request-id\n  models:");
        let c = describe(
            &Part::RequestIdHeader("x-request-id".into()),
            Some((f, &with)),
        );
        assert!(
            c.fix.starts_with("s.yaml:6: set `request_id_header: none`"),
            "{c:?}"
        );
        let c = describe(&Part::Header("x-request-id".into()), Some((f, YAML)));
        assert!(
            c.fix
                .starts_with("s.yaml:5: remove the header `x-request-id`"),
            "{c:?}"
        );
        let c = describe(&Part::StreamOptions, Some((f, YAML)));
        assert!(
            c.fix.starts_with("s.yaml:9: add `stream_options: null`"),
            "{c:?}"
        );
        let c = describe(&Part::ExtraBody("seed".into()), Some((f, YAML)));
        assert!(c.fix.starts_with("s.yaml:10: remove `seed`"), "{c:?}");
        let c = describe(&Part::StreamOptions, None);
        assert!(
            c.fix.contains("extra_body: {stream_options: null}"),
            "{c:?}"
        );
    }

    #[test]
    fn stream_options_come_out_of_the_body() {
        let body = br#"{"model":"m","stream":true,"stream_options":{"include_usage":true}}"#;
        let out = body_without_stream_options(body).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap(),
            json!({"model": "m", "stream": true})
        );
        assert_eq!(body_without_stream_options(b"{\"model\":\"m\"}"), None);
    }
}
