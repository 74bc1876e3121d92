//! Who a request is: the API key it carries (the account limits count per key with
//! `limits_per: key`) and whether it is the one `require_api_key` asks for.

use super::SimParams;
use axum::http::HeaderMap;

/// The API key a request carries: `x-api-key` first on Anthropic's endpoint, the bearer token
/// first elsewhere.
pub(super) fn api_key(headers: &HeaderMap, x_api_key: bool) -> Option<String> {
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let bearer =
        header("authorization").map(|a| a.strip_prefix("Bearer ").map(str::to_string).unwrap_or(a));
    if x_api_key {
        header("x-api-key").or(bearer)
    } else {
        bearer.or(header("x-api-key"))
    }
}

/// `Err(key it got)` when a key is required and the request does not carry it.
pub(super) fn check_auth(params: &SimParams, key: Option<&str>) -> Result<(), String> {
    let Some(want) = &params.require_api_key else {
        return Ok(());
    };
    match key {
        Some(k) if k == want => Ok(()),
        other => Err(other.unwrap_or_default().to_string()),
    }
}
