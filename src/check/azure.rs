//! Azure OpenAI's own failures, in its own words: a 401 says how the key was sent (`api-key`
//! header or bearer token) and how to switch; a 404 `DeploymentNotFound` names the deployment
//! from the URL (or the model, on the v1 URL) and how to find the right name; a 404 `Resource
//! not found` on a deployment URL without `api-version`, and a 400 `API version not supported`,
//! say which `target.api_version` to write. Pure, like the rest of the diagnosis.
//!
//! Azure's bodies (as its API sends them):
//! - `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong
//!   API endpoint. ..."}}`
//! - `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does
//!   not exist. If you created the deployment within the last 5 minutes, please wait a moment
//!   and try again."}}`
//! - `{"error":{"code":"404","message":"Resource not found"}}` (deployment URL, no api-version)
//! - `{"error":{"code":"BadRequest","message":"API version not supported"}}`

use super::diagnosis::{Context, Diagnosis, Kind};
use super::url::host_of;
use crate::scenario::Auth;

/// A GA `api-version` of the deployment-style URL, for the fixes.
const GA_API_VERSION: &str = "2024-10-21";

/// Host names of Azure OpenAI resources.
fn azure_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    [
        ".openai.azure.com",
        ".cognitiveservices.azure.com",
        ".services.ai.azure.com",
    ]
    .iter()
    .any(|d| host.ends_with(d))
}

/// Whether the target looks like Azure OpenAI: an Azure host, a key sent as `api-key`, a
/// deployment URL (`/openai/deployments/…`), or Azure's own words for a refused key ("invalid
/// subscription key", as its gateway says it, e.g. behind a proxy on another host name).
pub(super) fn is_azure(cx: &Context, message: &str) -> bool {
    azure_host(&host_of(cx.base_url))
        || cx.auth == Auth::ApiKey
        || deployment_in_url(cx.base_url).is_some()
        || message
            .to_ascii_lowercase()
            .contains("invalid subscription key")
}

/// `NAME` of a deployment-style base URL `…/openai/deployments/NAME[/…]`.
pub(super) fn deployment_in_url(base_url: &str) -> Option<&str> {
    let path = base_url.split(['?', '#']).next().unwrap_or(base_url);
    let (_, rest) = path.split_once("/openai/deployments/")?;
    rest.split('/').next().filter(|n| !n.is_empty())
}

/// The resource name of an Azure host (`my-resource` of `my-resource.openai.azure.com`).
fn resource(base_url: &str) -> Option<String> {
    let host = host_of(base_url);
    azure_host(&host).then(|| host.split('.').next().unwrap_or_default().to_string())
}

/// Where the user changes a target setting: the scenario file, or "the scenario" for flags.
fn in_scenario(cx: &Context) -> String {
    match cx.scenario_file {
        Some(f) => format!("under `target:` in {}", f.display()),
        None => "under `target:` in a scenario (`ladder check SCENARIO`)".to_string(),
    }
}

/// Azure's answer to `status` with this error code and message, when it is one of the cases this
/// module knows; `None` leaves the general diagnosis in charge.
pub(super) fn diagnose(
    cx: &Context,
    status: u16,
    error_type: Option<&str>,
    message: &str,
) -> Option<Diagnosis> {
    let code = error_type.unwrap_or("");
    let m = message.to_ascii_lowercase();
    if code.eq_ignore_ascii_case("DeploymentNotFound")
        || m.contains("api deployment for this resource does not exist")
    {
        return Some(deployment_not_found(cx, status).said(message));
    }
    if !is_azure(cx, message) {
        return None;
    }
    let version_words = m.contains("api version") || m.contains("api-version");
    match status {
        // Without a key the general diagnosis says so; with one, say how it was sent.
        401 if cx.key.present => Some(unauthorized(cx).said(message)),
        400 | 404 if version_words && cx.api_version.is_some() => {
            Some(unsupported_version(cx, status).said(message))
        }
        400 | 404
            if cx.api_version.is_none()
                && (version_words
                    || (status == 404 && deployment_in_url(cx.base_url).is_some())) =>
        {
            Some(missing_version(cx, status).said(message))
        }
        _ => None,
    }
}

fn unauthorized(cx: &Context) -> Diagnosis {
    let d = Diagnosis::new(Kind::KeyRejected, "HTTP 401: Azure rejected the key");
    let whose = resource(cx.base_url).map_or_else(
        || "the resource".to_string(),
        |r| format!("the resource `{r}`"),
    );
    let key = format!("{} (from {})", cx.key.masked, cx.key_source);
    let line = in_scenario(cx);
    match cx.auth {
        Auth::ApiKey => d
            .cause(format!(
                "ladder sent the key {key} in an `api-key` header (target.auth: api-key), as Azure expects for a resource key; Azure answers 401 when the key belongs to another resource or region, was regenerated, or is not a key at all"
            ))
            .fix(format!(
                "copy KEY 1 or KEY 2 from {whose} (Azure portal → the resource → Keys and Endpoint) into {}",
                cx.key_source
            ))
            .fix(format!(
                "if you hold a Microsoft Entra ID access token rather than a resource key, send it as a bearer token: write `auth: bearer` {line}"
            )),
        _ => d
            .cause(format!(
                "ladder sent the key {key} as `Authorization: Bearer` (target.auth: {}); Azure OpenAI takes a resource key in an `api-key` header, and a bearer token only when it is a Microsoft Entra ID token",
                cx.auth.as_str()
            ))
            .fix(format!(
                "write `auth: api-key` {line} (or remove `auth:`: ladder picks api-key for *.openai.azure.com and *.cognitiveservices.azure.com hosts)"
            )),
    }
}

fn deployment_not_found(cx: &Context, status: u16) -> Diagnosis {
    let (name, from) = match deployment_in_url(cx.base_url) {
        Some(n) => (n.to_string(), "the base URL"),
        None => (
            cx.model.to_string(),
            "the model name (the v1 URL takes the deployment as the model)",
        ),
    };
    let whose = resource(cx.base_url).map_or_else(
        || "this resource".to_string(),
        |r| format!("the resource `{r}`"),
    );
    let d = Diagnosis::new(
        Kind::ModelNotFound,
        format!("HTTP {status}: Azure has no deployment `{name}`"),
    )
    .cause(format!(
        "the deployment `{name}` (from {from}) does not exist on {whose}: Azure deployment names are the ones you chose when deploying, not model names; a deployment created in the last few minutes may not be served yet"
    ));
    let d = if deployment_in_url(cx.base_url).is_some() {
        d.fix(format!(
            "put the deployment's name in the base URL (…/openai/deployments/<deployment>) and in target.models, {}",
            in_scenario(cx)
        ))
    } else {
        d.fix(format!(
            "put the deployment's name in target.models (or --model <deployment>), {}",
            in_scenario(cx)
        ))
    };
    d.fix(format!(
        "list the deployments of {whose}: Azure AI Foundry → Deployments, or `az cognitiveservices account deployment list -g <resource-group> -n {}`",
        resource(cx.base_url).unwrap_or_else(|| "<resource>".into())
    ))
}

fn missing_version(cx: &Context, status: u16) -> Diagnosis {
    Diagnosis::new(
        Kind::PathNotFound,
        format!("HTTP {status}: the Azure deployment URL needs an api-version"),
    )
    .cause(
        "the deployment-style URL (…/openai/deployments/<name>) is only served with an `api-version` query parameter, and none was sent",
    )
    .fix(format!(
        "write `api_version: \"{GA_API_VERSION}\"` {} (ladder appends ?api-version=…)",
        in_scenario(cx)
    ))
    .fix("or use the v1 URL, which needs no api-version: base_url: https://<resource>.openai.azure.com/openai/v1 with the deployment as the model")
}

fn unsupported_version(cx: &Context, status: u16) -> Diagnosis {
    let v = cx.api_version.unwrap_or_default();
    let d = Diagnosis::new(
        Kind::BadRequest,
        format!("HTTP {status}: Azure does not support api-version `{v}` here"),
    )
    .cause(format!(
        "the api-version `{v}` (target.api_version) is unknown, retired, or not offered for this endpoint"
    ));
    if deployment_in_url(cx.base_url).is_some() {
        d.fix(format!(
            "write `api_version: \"{GA_API_VERSION}\"` (a GA version) {}",
            in_scenario(cx)
        ))
    } else {
        d.fix(format!(
            "the v1 URL (…/openai/v1) needs no api-version: remove `api_version:` {}",
            in_scenario(cx)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::key::inspect;
    use crate::dialect::Api;
    use crate::scenario::Secret;
    use std::path::Path;
    use std::time::Duration;

    const DEPLOYMENT_NOT_FOUND: &str = "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.";
    const ACCESS_DENIED: &str = "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.";

    fn run(
        base: &str,
        auth: Auth,
        api_version: Option<&str>,
        status: u16,
        code: &str,
        message: &str,
    ) -> Option<Diagnosis> {
        let secret = Secret::new("0123456789abcdef0123456789abcdef");
        let key = inspect(Some(&secret), Api::OpenAiChat, &host_of(base));
        let cx = Context {
            api: Api::OpenAiChat,
            base_url: base,
            model: "gpt-4o-mini",
            key: &key,
            key_source: "$AZURE_OPENAI_API_KEY",
            proxy: None,
            timeout: Duration::from_secs(20),
            auth,
            api_version,
            scenario_file: Some(Path::new("scenarios/azure-openai.yaml")),
            limit_field: crate::scenario::LimitField::parse("max_completion_tokens").unwrap(),
            api_setting: Default::default(),
        };
        diagnose(&cx, status, Some(code), message)
    }

    fn text(d: &Diagnosis) -> String {
        let mut all = vec![d.summary.clone()];
        all.extend(d.causes.iter().cloned());
        all.extend(d.fixes.iter().cloned());
        all.join("\n")
    }

    const V1: &str = "https://my-res.openai.azure.com/openai/v1";
    const DEPLOYED: &str = "https://my-res.openai.azure.com/openai/deployments/prod-4o";

    #[test]
    fn a_401_says_how_the_key_was_sent_and_how_to_switch() {
        let d = run(V1, Auth::ApiKey, None, 401, "401", ACCESS_DENIED).unwrap();
        assert_eq!(d.kind, Kind::KeyRejected);
        let t = text(&d);
        for w in [
            "in an `api-key` header (target.auth: api-key)",
            "KEY 1 or KEY 2 from the resource `my-res`",
            "$AZURE_OPENAI_API_KEY",
            "write `auth: bearer` under `target:` in scenarios/azure-openai.yaml",
        ] {
            assert!(t.contains(w), "missing `{w}` in:\n{t}");
        }
        let d = run(V1, Auth::Bearer, None, 401, "401", ACCESS_DENIED).unwrap();
        let t = text(&d);
        assert!(
            t.contains("as `Authorization: Bearer` (target.auth: bearer)"),
            "{t}"
        );
        assert!(t.contains("write `auth: api-key` under `target:`"), "{t}");
        // Azure's words behind another host name (a proxy, a private endpoint) are Azure too.
        let d = run(
            "http://127.0.0.1:8080/openai/v1",
            Auth::Bearer,
            None,
            401,
            "401",
            ACCESS_DENIED,
        )
        .unwrap();
        assert!(text(&d).contains("write `auth: api-key`"), "{}", text(&d));
        // Not Azure: the general diagnosis stays in charge.
        assert!(run(
            "https://api.openai.com/v1",
            Auth::Bearer,
            None,
            401,
            "invalid_api_key",
            "Incorrect API key provided"
        )
        .is_none());
    }

    #[test]
    fn deployment_not_found_names_the_deployment() {
        let d = run(
            DEPLOYED,
            Auth::ApiKey,
            Some("2024-10-21"),
            404,
            "DeploymentNotFound",
            DEPLOYMENT_NOT_FOUND,
        )
        .unwrap();
        assert_eq!(d.kind, Kind::ModelNotFound);
        assert_eq!(d.summary, "HTTP 404: Azure has no deployment `prod-4o`");
        let t = text(&d);
        assert!(
            t.contains("from the base URL") && t.contains("resource `my-res`"),
            "{t}"
        );
        assert!(
            t.contains(
                "az cognitiveservices account deployment list -g <resource-group> -n my-res"
            ),
            "{t}"
        );
        // On the v1 URL the deployment is the model.
        let d = run(
            V1,
            Auth::ApiKey,
            None,
            404,
            "DeploymentNotFound",
            DEPLOYMENT_NOT_FOUND,
        )
        .unwrap();
        assert_eq!(d.summary, "HTTP 404: Azure has no deployment `gpt-4o-mini`");
        assert!(text(&d).contains("target.models (or --model <deployment>)"));
    }

    #[test]
    fn api_version_missing_or_unsupported() {
        let d = run(
            DEPLOYED,
            Auth::ApiKey,
            None,
            404,
            "404",
            "Resource not found",
        )
        .unwrap();
        assert_eq!(
            d.summary,
            "HTTP 404: the Azure deployment URL needs an api-version"
        );
        assert!(text(&d).contains("api_version: \"2024-10-21\""));
        let d = run(
            DEPLOYED,
            Auth::ApiKey,
            Some("2019-01-01"),
            400,
            "BadRequest",
            "API version not supported",
        )
        .unwrap();
        assert_eq!(
            d.summary,
            "HTTP 400: Azure does not support api-version `2019-01-01` here"
        );
        assert!(text(&d).contains("a GA version"));
        let d = run(
            V1,
            Auth::ApiKey,
            Some("2024-10-21"),
            400,
            "BadRequest",
            "API version not supported",
        )
        .unwrap();
        assert!(text(&d).contains("remove `api_version:`"), "{}", text(&d));
        // A 404 on the v1 URL is not about versions.
        assert!(run(V1, Auth::ApiKey, None, 404, "404", "Resource not found").is_none());
    }

    #[test]
    fn deployment_names_come_from_the_path() {
        assert_eq!(deployment_in_url(DEPLOYED), Some("prod-4o"));
        assert_eq!(
            deployment_in_url(&format!("{DEPLOYED}/?x=1")),
            Some("prod-4o")
        );
        assert_eq!(deployment_in_url(V1), None);
        assert!(azure_host("x.cognitiveservices.azure.com"));
        assert!(!azure_host("azure.com.example.org"));
    }
}
