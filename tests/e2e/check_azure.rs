//! `ladder check` against a local server that answers like Azure OpenAI (issue 10 §1): a 401
//! says whether the key went out as `api-key` or as a bearer token and how to switch, a 404
//! `DeploymentNotFound` names the deployment from the URL, and a missing or unsupported
//! `api-version` says which `api_version` to write. The bodies are Azure's own.

use crate::check::{check, says, Answer, Fake, KEY};
use crate::support::Project;

const ACCESS_DENIED: &str = r#"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}"#;
const DEPLOYMENT_NOT_FOUND: &str = r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}"#;
const RESOURCE_NOT_FOUND: &str = r#"{"error":{"code":"404","message":"Resource not found"}}"#;
const VERSION_NOT_SUPPORTED: &str =
    r#"{"error":{"code":"BadRequest","message":"API version not supported"}}"#;

/// Azure in front of one deployment, `prod-4o`, served at the v1 URL and at the deployment URL
/// with api-version 2024-10-21; the key must come in an `api-key` header.
fn azure_key_guard(head: &str, _: &str) -> Option<Answer> {
    let sent = head
        .lines()
        .any(|l| l.to_ascii_lowercase() == format!("api-key: {}", KEY.to_ascii_lowercase()));
    (!sent).then(|| ("401 Unauthorized", "application/json", ACCESS_DENIED.into()))
}

fn azure(_: &str, path: &str) -> Answer {
    let json = "application/json";
    if path.contains("/deployments/") && !path.contains("/deployments/prod-4o/") {
        ("404 Not Found", json, DEPLOYMENT_NOT_FOUND.into())
    } else if path.contains("/deployments/") && !path.contains("api-version=") {
        ("404 Not Found", json, RESOURCE_NOT_FOUND.into())
    } else if path.contains("api-version=") && !path.contains("api-version=2024-10-21") {
        ("400 Bad Request", json, VERSION_NOT_SUPPORTED.into())
    } else if path.contains("/openai/v1/chat/completions") && !path.contains("api-version") {
        ("404 Not Found", json, DEPLOYMENT_NOT_FOUND.into())
    } else {
        ("404 Not Found", json, RESOURCE_NOT_FOUND.into())
    }
}

fn scenario(p: &Project, base_url: &str, extra: &str, model: &str) -> String {
    let yaml = format!(
        "name: az\ntarget:\n  api: openai-chat\n  base_url: {base_url}\n  api_key: ${{CHECK_KEY}}\n{extra}  models: [{model}]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 5\nload:\n  ladder: [1]\n  requests_per_step: 1\n"
    );
    p.scenario("az", &yaml).display().to_string()
}

#[test]
fn azure_401_says_how_the_key_was_sent() {
    let fake = Fake::start_guarded(azure, azure_key_guard);
    let p = Project::new();
    let v1 = format!("{}/openai/v1", fake.base);
    // Bearer to an Azure-style endpoint: say to send it as api-key.
    let f = scenario(&p, &v1, "  auth: bearer\n", "prod-4o");
    let out = check(&p, &[&f], Some(KEY));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 401: Azure rejected the key",
            "as `Authorization: Bearer` (target.auth: bearer)",
            "write `auth: api-key` under `target:` in",
            "Access denied due to invalid subscription key",
        ],
    );
    // api-key with a key of another resource: say where to copy the right one.
    let f = scenario(&p, &v1, "  auth: api-key\n", "prod-4o");
    let out = check(&p, &[&f], Some("0123456789abcdef0123456789abcdef"));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "in an `api-key` header (target.auth: api-key)",
            "KEY 1 or KEY 2",
            "write `auth: bearer` under `target:`",
        ],
    );
}

#[test]
fn azure_deployment_not_found_names_the_deployment() {
    let fake = Fake::start_guarded(azure, azure_key_guard);
    let p = Project::new();
    let url = format!("{}/openai/deployments/prod-4", fake.base);
    let f = scenario(
        &p,
        &url,
        "  auth: api-key\n  api_version: \"2024-10-21\"\n",
        "prod-4",
    );
    let out = check(&p, &[&f], Some(KEY));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 404: Azure has no deployment `prod-4`",
            "(from the base URL)",
            "not model names",
            "…/openai/deployments/<deployment>",
            "az cognitiveservices account deployment list",
        ],
    );
    // On the v1 URL, the deployment is the model.
    let v1 = format!("{}/openai/v1", fake.base);
    let f = scenario(&p, &v1, "  auth: api-key\n", "gpt-4o-mini");
    let out = check(&p, &[&f], Some(KEY));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 404: Azure has no deployment `gpt-4o-mini`",
            "target.models",
        ],
    );
}

#[test]
fn azure_api_version_missing_or_unsupported() {
    let fake = Fake::start_guarded(azure, azure_key_guard);
    let p = Project::new();
    let url = format!("{}/openai/deployments/prod-4o", fake.base);
    let f = scenario(&p, &url, "  auth: api-key\n", "prod-4o");
    let out = check(&p, &[&f], Some(KEY));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 404: the Azure deployment URL needs an api-version",
            "api_version: \"2024-10-21\"",
            "/openai/v1",
        ],
    );
    let f = scenario(
        &p,
        &url,
        "  auth: api-key\n  api_version: \"2019-01-01\"\n",
        "prod-4o",
    );
    let out = check(&p, &[&f], Some(KEY));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 400: Azure does not support api-version `2019-01-01` here",
            "a GA version",
            "API version not supported",
        ],
    );
}
