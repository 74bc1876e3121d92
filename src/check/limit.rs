//! A 4xx that refuses the field the output-token limit was sent under. OpenAI's reasoning models
//! (o-series, GPT-5) answer `max_tokens` with 400 "Unsupported parameter: 'max_tokens' is not
//! supported with this model. Use 'max_completion_tokens' instead." (param `max_tokens`, code
//! `unsupported_parameter`); older OpenAI-compatible servers and API versions refuse
//! `max_completion_tokens` the other way round. Either way the fix is one setting,
//! `request.max_tokens_field`, and the diagnosis names it. Pure.

use super::diagnosis::{Context, Diagnosis, Kind, REFUSAL_WORDS};
use crate::scenario::LimitField;

/// Beside `REFUSAL_WORDS`: "Use 'max_completion_tokens' instead".
const REFUSALS: [&str; 1] = ["instead"];

/// The diagnosis when the server's message refuses the limit field ladder sent; `None` when it
/// says something else (a limit that is too large names the field too, but does not refuse it).
pub(super) fn refused_limit_field(cx: &Context, status: u16, message: &str) -> Option<Diagnosis> {
    let sent = cx.limit_field;
    // Only a dialect with a second field to switch to.
    let other = LimitField::allowed(cx.api)
        .into_iter()
        .find(|f| *f != sent)?;
    let l = message.to_ascii_lowercase();
    let refuses =
        l.contains(sent.key()) && REFUSAL_WORDS.iter().chain(&REFUSALS).any(|w| l.contains(w));
    if !refuses {
        return None;
    }
    let cause = if l.contains(other.key()) {
        format!(
            "the server does not take `{}` for this model and wants `{}` (OpenAI's o-series and GPT-5 refuse max_tokens)",
            sent.key(),
            other.key()
        )
    } else {
        format!(
            "the server does not know `{}` (older OpenAI-compatible servers and API versions take only `{}`)",
            sent.key(),
            other.key()
        )
    };
    Some(
        Diagnosis::new(
            Kind::BadRequest,
            format!(
                "HTTP {status}: the server refuses the limit field `{}`",
                sent.key()
            ),
        )
        .cause(cause)
        .fix(fix(cx, other))
        .said(message),
    )
}

/// Where to say the field: the scenario's `request.max_tokens_field`, or the flag.
fn fix(cx: &Context, wanted: LimitField) -> String {
    let key = wanted.key();
    match cx.scenario_file {
        Some(f) if wanted == LimitField::default_for(cx.api) => format!(
            "{}: set `max_tokens_field: {key}` under request: (or delete the line that asks for \
             {}: {} sends {key} by default)",
            f.display(),
            cx.limit_field.key(),
            cx.api.as_str()
        ),
        Some(f) => format!(
            "{}: set `max_tokens_field: {key}` under request: (request.max_tokens is then sent \
             as {key}; keep no limit key in request.extra_body)",
            f.display()
        ),
        None => format!(
            "add `--max-tokens-field {key}` (in a scenario: `max_tokens_field: {key}` under request:)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::key::{inspect, KeyShape};
    use super::*;
    use crate::dialect::Api;
    use std::path::Path;
    use std::sync::OnceLock;

    fn no_key() -> &'static KeyShape {
        static KEY: OnceLock<KeyShape> = OnceLock::new();
        KEY.get_or_init(|| inspect(None, Api::OpenAiChat, "api.openai.com"))
    }

    fn context(limit_field: LimitField, file: Option<&Path>) -> Context<'_> {
        Context {
            api: Api::OpenAiChat,
            base_url: "https://api.openai.com/v1",
            model: "gpt-5",
            key: no_key(),
            key_source: "$OPENAI_API_KEY",
            proxy: None,
            timeout: std::time::Duration::from_secs(20),
            auth: crate::scenario::Auth::Bearer,
            api_version: None,
            scenario_file: file,
            limit_field,
            api_setting: Default::default(),
        }
    }

    /// OpenAI's answer to `max_tokens` on a reasoning model, as it is sent.
    const OPENAI: &str = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";

    fn text(d: &Diagnosis) -> String {
        [d.summary.clone(), d.causes.join("\n"), d.fixes.join("\n")].join("\n")
    }

    #[test]
    fn openai_refusing_max_tokens_names_the_setting() {
        let file = Path::new("s.yaml");
        let cx = context(LimitField::parse("max_tokens").unwrap(), Some(file));
        let d = refused_limit_field(&cx, 400, OPENAI).unwrap();
        let t = text(&d);
        assert!(t.contains("refuses the limit field `max_tokens`"), "{t}");
        assert!(t.contains("wants `max_completion_tokens`"), "{t}");
        assert!(
            t.contains("s.yaml: set `max_tokens_field: max_completion_tokens` under request:"),
            "{t}"
        );
        assert!(!t.contains("add `max_completion_tokens` via"), "{t}");
        let flags = refused_limit_field(
            &context(LimitField::parse("max_tokens").unwrap(), None),
            400,
            OPENAI,
        );
        assert!(text(&flags.unwrap()).contains("--max-tokens-field max_completion_tokens"));
    }

    #[test]
    fn a_server_that_does_not_know_max_completion_tokens() {
        let cx = context(
            LimitField::parse("max_completion_tokens").unwrap(),
            Some(Path::new("s.yaml")),
        );
        for said in [
            "Unrecognized request argument supplied: max_completion_tokens",
            "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted'}]",
        ] {
            let t = text(&refused_limit_field(&cx, 400, said).unwrap());
            assert!(t.contains("does not know `max_completion_tokens`"), "{t}");
            assert!(t.contains("set `max_tokens_field: max_tokens`"), "{t}");
        }
    }

    #[test]
    fn other_complaints_about_the_limit_are_not_a_field_refusal() {
        let cx = context(LimitField::parse("max_completion_tokens").unwrap(), None);
        for said in [
            "max_completion_tokens is too large: 100000. This model supports at most 16384 completion tokens",
            "temperature out of range",
            // The field ladder did not send.
            "Unsupported parameter: 'max_tokens'",
        ] {
            assert!(refused_limit_field(&cx, 400, said).is_none(), "{said}");
        }
    }
}
