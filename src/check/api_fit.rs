//! A 4xx that says the request does not fit the API dialect: the model is served through another
//! endpoint (OpenAI answers a Responses-only model on chat completions with "This model is only
//! supported in v1/responses and not in v1/chat/completions.", a completion model on chat with
//! "… Did you mean to use v1/completions?"), the model is not served through this one at all
//! ("… is not supported with the Responses API"), or the server refuses the `store` field that
//! ladder sends to the Responses API (`store: false`, so that a load test stores nothing; a server
//! that does not know the field, or an organization without stored responses refusing
//! `store: true`). Each names the setting to change. Pure: works on the status and the message;
//! the dialects come from their `Spec`s.

use super::diagnosis::{Context, Diagnosis, Kind, REFUSAL_WORDS};
use crate::dialect::Api;

/// The diagnosis when the message says the model or the request does not fit `cx.api`; `None`
/// when it says something else.
pub(super) fn diagnose(cx: &Context, status: u16, message: &str) -> Option<Diagnosis> {
    if !(400..500).contains(&status) || matches!(status, 401 | 403 | 429) {
        return None;
    }
    let l = message.to_ascii_lowercase().replace(" /v1/", " v1/");
    served_elsewhere(cx, status, &l)
        .or_else(|| not_served_here(cx, status, &l))
        .or_else(|| store_refused(cx, status, &l))
        .map(|d| d.said(message))
}

/// Beside `REFUSAL_WORDS`, more words with which servers say they do not take something.
const REFUSALS: [&str; 3] = ["does not support", "must be", "cannot"];

fn refuses(l: &str) -> bool {
    REFUSAL_WORDS.iter().chain(&REFUSALS).any(|w| l.contains(w))
}

/// "only supported in v1/responses", "did you mean to use v1/completions?": the dialect that
/// serves the model.
fn served_elsewhere(cx: &Context, status: u16, l: &str) -> Option<Diagnosis> {
    let wanted = Api::ALL.into_iter().filter(|a| *a != cx.api).find(|a| {
        let at = format!("v1{}", a.spec().path);
        ["only supported in ", "did you mean to use ", "use "]
            .iter()
            .any(|lead| l.contains(&format!("{lead}{at}")))
    })?;
    Some(
        Diagnosis::new(
            Kind::ModelWrongApi,
            format!(
                "HTTP {status}: the model `{}` is served through {}, not {}",
                cx.model,
                wanted.spec().path,
                cx.api.spec().path
            ),
        )
        .cause(format!(
            "the server offers this model only through {} (the {} API); ladder sent {}",
            wanted.spec().path,
            wanted.as_str(),
            cx.api.as_str()
        ))
        .fix(cx.api_setting.codex_fix(&[wanted]).unwrap_or_else(|| {
            format!(
                "set `api: {}` under target: (or --api {}), or pick a model the server serves through {}",
                wanted.as_str(),
                wanted.as_str(),
                cx.api.spec().path
            )
        })),
    )
}

/// "… is not supported with the Responses API", "… not supported in v1/responses": the model is
/// not served through this dialect, and the server does not say which one serves it.
fn not_served_here(cx: &Context, status: u16, l: &str) -> Option<Diagnosis> {
    let path = cx.api.spec().path;
    let name = path.trim_start_matches('/').replace('/', " ");
    // An embeddings refusal names what the model does not do ("does not support embeddings").
    let mentions = l.contains(&format!("v1{path}"))
        || l.contains(&format!("{name} api"))
        || (cx.api.embeds() && l.contains("embedding"));
    if !(mentions && l.contains("model") && refuses(l)) {
        return None;
    }
    let fitting: Vec<Api> = Api::ALL
        .into_iter()
        .filter(|a| *a != cx.api && a.spec().family == cx.api.spec().family)
        .collect();
    let others: Vec<&str> = fitting.iter().map(|a| a.as_str()).collect();
    Some(
        Diagnosis::new(
            Kind::ModelWrongApi,
            format!(
                "HTTP {status}: the model `{}` is not served through {path}",
                cx.model
            ),
        )
        .cause(format!(
            "the server knows the model but does not serve it through {path} ({})",
            cx.api.as_str()
        ))
        .fix(cx.api_setting.codex_fix(&fitting).unwrap_or_else(|| {
            format!(
                "set target.api (or --api) to the API the server serves this model through ({}), or pick a model it serves through {path}",
                others.join(" or ")
            )
        })),
    )
}

/// A 4xx about the `store` field, for a dialect that sends one.
fn store_refused(cx: &Context, status: u16, l: &str) -> Option<Diagnosis> {
    let says_store = l
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w == "store");
    let retention = l.contains("retention");
    if !cx.api.spec().stores || !says_store || !(refuses(l) || retention) {
        return None;
    }
    Some(
        Diagnosis::new(
            Kind::BadRequest,
            format!("HTTP {status}: the server refuses the `store` field"),
        )
        .cause(format!(
            "ladder sends `store: false` with every {} request, so that a load test does not fill the account's stored responses; this server does not take the field, or (with `store: true` in request.extra_body) the organization does not allow stored responses (zero data retention)",
            cx.api.as_str()
        ))
        .fix("add `store: null` to request.extra_body to send no store field at all; if request.extra_body sets `store: true`, remove it"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::key::{inspect, KeyShape};
    use crate::scenario::{Auth, LimitField};
    use std::time::Duration;

    fn cx<'a>(api: Api, key: &'a KeyShape) -> Context<'a> {
        Context {
            api,
            base_url: "https://api.openai.com/v1",
            model: "gpt-5-codex",
            key,
            key_source: "$OPENAI_API_KEY",
            proxy: None,
            timeout: Duration::from_secs(20),
            auth: Auth::Bearer,
            api_version: None,
            scenario_file: None,
            limit_field: LimitField::parse("max_completion_tokens").unwrap(),
            api_setting: Default::default(),
        }
    }

    fn said(d: &Diagnosis) -> String {
        [d.summary.clone(), d.causes.join("\n"), d.fixes.join("\n")].join("\n")
    }

    #[test]
    fn a_model_served_through_another_endpoint_names_it() {
        let key = inspect(None, Api::OpenAiChat, "api.openai.com");
        let chat = cx(Api::OpenAiChat, &key);
        let msg = "This model is only supported in v1/responses and not in v1/chat/completions.";
        let d = diagnose(&chat, 404, msg).expect("a diagnosis");
        assert_eq!(d.kind, Kind::ModelWrongApi);
        assert!(said(&d).contains("api: openai-responses"), "{}", said(&d));
        assert_eq!(d.server_said.as_deref(), Some(msg));
        let msg = "This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?";
        let d = diagnose(&chat, 404, msg).expect("a diagnosis");
        assert!(said(&d).contains("api: openai-completions"), "{}", said(&d));
        // The dialect ladder already speaks is not a way out.
        let responses = cx(Api::OpenAiResponses, &key);
        let msg = "This model is only supported in v1/responses and not in v1/chat/completions.";
        assert!(diagnose(&responses, 404, msg).is_none());
    }

    #[test]
    fn a_model_not_served_through_responses() {
        let key = inspect(None, Api::OpenAiChat, "api.openai.com");
        let responses = cx(Api::OpenAiResponses, &key);
        let d = diagnose(
            &responses,
            400,
            "The model gpt-3.5-turbo-instruct is not supported with the Responses API.",
        )
        .expect("a diagnosis");
        assert_eq!(d.kind, Kind::ModelWrongApi);
        let all = said(&d);
        assert!(all.contains("not served through /responses"), "{all}");
        assert!(all.contains("openai-chat or openai-completions"), "{all}");
        // A 404 for an unknown path says nothing about the model.
        assert!(diagnose(&responses, 404, "Invalid URL (POST /v1/responses)").is_none());
    }

    #[test]
    fn from_a_codex_config_the_fix_is_its_wire_api() {
        let key = inspect(None, Api::OpenAiChat, "api.openai.com");
        let mut responses = cx(Api::OpenAiResponses, &key);
        responses.api_setting = crate::check::diagnosis::ApiSetting::Codex {
            config: "/home/u/.codex/config.toml".into(),
            provider: "local".into(),
            built_in: false,
        };
        let msg = "The model gpt-3.5-turbo-instruct is not supported with the Responses API.";
        let all = said(&diagnose(&responses, 400, msg).expect("a diagnosis"));
        assert!(
            all.contains(
                "set `wire_api = \"chat\"` in [model_providers.local] of /home/u/.codex/config.toml"
            ),
            "{all}"
        );
        assert!(!all.contains("target.api"), "{all}");
        responses.api_setting = crate::check::diagnosis::ApiSetting::Codex {
            config: "/home/u/.codex/config.toml".into(),
            provider: "openai".into(),
            built_in: true,
        };
        let all = said(&diagnose(&responses, 400, msg).expect("a diagnosis"));
        assert!(
            all.contains("built-in provider `openai`") && all.contains("wire_api = \"chat\""),
            "{all}"
        );
    }

    #[test]
    fn a_model_that_does_not_embed() {
        let key = inspect(None, Api::OpenAiChat, "api.openai.com");
        let embeddings = cx(Api::OpenAiEmbeddings, &key);
        for (status, msg) in [
            (400, "The model does not support Embeddings API"),
            (400, "This model does not support embeddings."),
            (404, "The model `gpt-4o-mini` does not support embeddings."),
        ] {
            let d = diagnose(&embeddings, status, msg).expect(msg);
            assert_eq!(d.kind, Kind::ModelWrongApi, "{msg}");
            let all = said(&d);
            assert!(all.contains("not served through /embeddings"), "{all}");
            assert!(all.contains("openai-chat"), "{all}");
        }
        // An unknown path, or a chat model's own refusals, say nothing about embeddings.
        assert!(diagnose(&embeddings, 404, "Invalid URL (POST /v1/embeddings)").is_none());
        let chat = cx(Api::OpenAiChat, &key);
        assert!(diagnose(&chat, 400, "This model does not support embeddings.").is_none());
    }

    #[test]
    fn store_refused_says_how_to_send_none() {
        let key = inspect(None, Api::OpenAiChat, "api.openai.com");
        let responses = cx(Api::OpenAiResponses, &key);
        for msg in [
            "[{'type': 'extra_forbidden', 'loc': ('body', 'store'), 'msg': 'Extra inputs are not permitted', 'input': False}]",
            "Unsupported parameter: 'store' is not supported with this model.",
            "Stored responses are not available: store must be false for organizations with zero data retention",
        ] {
            let d = diagnose(&responses, 400, msg).expect(msg);
            assert_eq!(d.kind, Kind::BadRequest);
            assert!(said(&d).contains("`store: null`"), "{}", said(&d));
        }
        // Not for dialects that send no store field, nor for other words.
        let chat = cx(Api::OpenAiChat, &key);
        assert!(diagnose(&chat, 400, "Unsupported parameter: 'store'").is_none());
        assert!(diagnose(&responses, 400, "Unsupported parameter: 'stored_prompt'").is_none());
        assert!(diagnose(&responses, 429, "store cannot").is_none());
    }
}
