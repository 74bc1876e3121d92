//! What a failed attempt says: error bodies read within a limit, redirects, HTML pages and
//! nginx's client-certificate page described, transport errors classified (the client's own
//! descriptor limit, a keep-alive connection closed before answering), and error chains
//! without the URL.

use super::{Attempt, MAX_ERROR_BODY_BYTES};
use crate::model::ErrorClass;
use reqwest::header::HeaderMap;
use tokio::time::Instant;

pub(super) async fn read_small_body(mut response: reqwest::Response, deadline: Instant) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, response.chunk()).await {
        let room = MAX_ERROR_BODY_BYTES.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY_BYTES {
            break;
        }
    }
    body
}

/// Whether a 2xx JSON body marks itself as an error: an `error` member (OpenAI, TGI, vLLM,
/// Anthropic), or `type`/`object` equal to `"error"`; a list is judged by its first element.
pub(super) fn carries_error(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    let obj = match &value {
        serde_json::Value::Array(items) => items.first(),
        other => Some(other),
    };
    obj.and_then(serde_json::Value::as_object).is_some_and(|o| {
        o.get("error").is_some_and(|e| !e.is_null())
            || o.get("type").and_then(|t| t.as_str()) == Some("error")
            || o.get("object").and_then(|t| t.as_str()) == Some("error")
    })
}

/// Redirects are not followed (the body is streamed once, so that the start is stamped at the
/// write; LLM SDKs do not follow them either). The message says where the server points,
/// without user info, query or fragment, which may carry credentials.
pub(super) fn describe_redirect(status: u16, headers: &HeaderMap) -> String {
    let location = headers
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(|l| match reqwest::Url::parse(l.trim()) {
            Ok(mut url) => {
                let _ = url.set_username("");
                let _ = url.set_password(None);
                url.set_query(None);
                url.set_fragment(None);
                url.to_string()
            }
            // A relative location: its path.
            Err(_) => l.split(['?', '#']).next().unwrap_or_default().to_string(),
        })
        .filter(|l| !l.trim().is_empty());
    match location {
        Some(l) => format!(
            "the server redirects (HTTP {status}) to {l}; ladder does not follow redirects: set \
             base_url to the final address"
        ),
        None => format!(
            "the server answered with a redirect (HTTP {status}) without a Location; check base_url"
        ),
    }
}

/// How a record's error message begins when the server asked for a TLS client certificate
/// in its answer (nginx's `ssl_verify_client on` page) rather than in the handshake;
/// `check` diagnoses the message by it.
pub const CLIENT_CERT_WANTED: &str = "the server wants a TLS client certificate";

pub(super) fn describe_non_json_body(body: &[u8], content_type: &str) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    // nginx with `ssl_verify_client on` (or `optional`) answers a request without a client
    // certificate, or with one it does not trust, with its own 400 page.
    if trimmed.contains("No required SSL certificate was sent") {
        return format!("{CLIENT_CERT_WANTED} (its page says \"No required SSL certificate was sent\"): set target.tls.client_cert and target.tls.client_key");
    }
    if trimmed.contains("The SSL certificate error") {
        return format!("{CLIENT_CERT_WANTED} and rejected the one sent (its page says \"The SSL certificate error\"): set target.tls.client_cert and target.tls.client_key to a certificate signed by a CA the server trusts, not expired");
    }
    if content_type.contains("html") || trimmed.starts_with('<') {
        return "the server answered with an HTML page, not JSON (is base_url pointing at a web page or a proxy?)".into();
    }
    let short: String = trimmed.chars().take(200).collect();
    if short.is_empty() {
        "empty error body".into()
    } else {
        short
    }
}

pub(super) fn send_error(e: &reqwest::Error) -> Attempt {
    let chain = error_chain(e);
    let closed = !e.is_connect() && !e.is_timeout() && closed_before_response(e);
    let class = if out_of_file_descriptors(e) {
        // This process could not open a socket: the client's limit, not the server's failure.
        ErrorClass::Client
    } else if e.is_connect() {
        if e.is_timeout() || chain.contains("timed out") {
            ErrorClass::TimeoutConnect
        } else {
            ErrorClass::Connect
        }
    } else if e.is_timeout() {
        ErrorClass::TimeoutConnect
    } else {
        ErrorClass::Disconnect
    };
    Attempt {
        closed_before_response: closed,
        ..Attempt::failed(class, chain)
    }
}

/// Whether an error comes from this process running out of file descriptors (`EMFILE`,
/// `ENFILE`: "Too many open files").
pub fn out_of_file_descriptors(e: &(dyn std::error::Error + 'static)) -> bool {
    const EMFILE: i32 = 24;
    const ENFILE: i32 = 23;
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(io.raw_os_error(), Some(EMFILE | ENFILE)) {
                return true;
            }
        }
        if err.to_string().contains("Too many open files") {
            return true;
        }
        source = err.source();
    }
    false
}

/// Whether a request failed because its connection was closed or reset before any response
/// byte: hyper's "connection closed before message completed", or a reset / broken pipe.
pub(super) fn closed_before_response(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted | K::UnexpectedEof
            ) {
                return true;
            }
        }
        if err
            .to_string()
            .contains("connection closed before message completed")
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// The error and its sources, joined: reqwest's top-level message alone rarely says what failed.
/// The URL is removed (it could carry credentials in a query string).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![without_url(e)];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

fn without_url(e: &(dyn std::error::Error + 'static)) -> String {
    if let Some(re) = e.downcast_ref::<reqwest::Error>() {
        let cloned = format!("{}", RequestErrorNoUrl(re));
        return cloned;
    }
    e.to_string()
}

struct RequestErrorNoUrl<'a>(&'a reqwest::Error);

impl std::fmt::Display for RequestErrorNoUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = self.0;
        let kind = if e.is_connect() {
            "error connecting"
        } else if e.is_timeout() {
            "timed out"
        } else if e.is_body() || e.is_decode() {
            "error reading the response body"
        } else if e.is_request() {
            "error sending the request"
        } else {
            "request failed"
        };
        f.write_str(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::{
        carries_error, closed_before_response, describe_redirect, out_of_file_descriptors,
    };

    #[derive(Debug)]
    struct Wrapped(std::io::Error);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("client error (Connect)")
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn nginx_asking_for_a_client_certificate_is_named() {
        let page = b"<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>No required SSL certificate was sent</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
        let msg = super::describe_non_json_body(page, "text/html");
        assert!(msg.contains("wants a TLS client certificate"), "{msg}");
        assert!(
            msg.contains("target.tls.client_cert and target.tls.client_key"),
            "{msg}"
        );
        let other = super::describe_non_json_body(b"<html>login</html>", "text/html");
        assert!(other.contains("HTML page"), "{other}");
    }

    #[test]
    fn the_clients_own_descriptor_limit_is_told_apart() {
        let emfile = Wrapped(std::io::Error::from_raw_os_error(24));
        assert!(out_of_file_descriptors(&emfile));
        let refused = Wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(!out_of_file_descriptors(&refused));
        let reset = Wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(closed_before_response(&reset));
        assert!(!closed_before_response(&refused));
    }
    use reqwest::header::{HeaderMap, HeaderValue, LOCATION};

    #[test]
    fn redirects_name_their_target_without_the_query() {
        let mut h = HeaderMap::new();
        h.insert(
            LOCATION,
            HeaderValue::from_static("https://api.example.com/v1/chat/completions?sig=s3cret#x"),
        );
        let msg = describe_redirect(308, &h);
        assert!(
            msg.contains("(HTTP 308) to https://api.example.com/v1/chat/completions;"),
            "{msg}"
        );
        assert!(!msg.contains("s3cret"), "{msg}");
        h.insert(
            LOCATION,
            HeaderValue::from_static("https://me:pw123456@gw.example.com/v1?k=1"),
        );
        let msg = describe_redirect(307, &h);
        assert!(msg.contains("to https://gw.example.com/v1;"), "{msg}");
        assert!(!msg.contains("pw123456") && !msg.contains("k=1"), "{msg}");
        h.insert(LOCATION, HeaderValue::from_static("/v2/chat?x=1"));
        assert!(describe_redirect(302, &h).contains("to /v2/chat;"));
        let msg = describe_redirect(301, &HeaderMap::new());
        assert!(
            msg.contains("HTTP 301") && msg.contains("without a Location"),
            "{msg}"
        );
    }

    #[test]
    fn only_bodies_marked_as_errors_carry_errors() {
        for body in [
            r#"{"error":{"message":"boom","type":"server_error"}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            r#"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#,
            r#"{"error":"Input validation error","error_type":"validation"}"#,
            r#"[{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}]"#,
        ] {
            assert!(carries_error(body.as_bytes()), "{body}");
        }
        for body in [
            r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}"#,
            r#"{"id":"c1","object":"chat.completion","choices":[{"message":{"content":"hi"}}]}"#,
            r#"{"error":null,"choices":[]}"#,
            "not json",
            "",
            "[]",
        ] {
            assert!(!carries_error(body.as_bytes()), "{body}");
        }
    }
}
