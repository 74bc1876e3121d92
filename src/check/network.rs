//! Diagnoses for requests that got no HTTP answer: connection refused, DNS, TLS, proxies,
//! timeouts, connections closed without a word. Each names the host, the likely cause and the
//! setting to change. Pure: reads the error text reqwest/hyper/rustls produced, no I/O.

use super::diagnosis::{Context, Diagnosis, Kind};
use super::url::{host_of, host_port};
use crate::model::ErrorClass;

pub(super) fn no_answer(cx: &Context, class: ErrorClass, detail: &str) -> Diagnosis {
    let hp = host_port(cx.base_url);
    let host = host_of(cx.base_url);
    let l = detail.to_ascii_lowercase();
    let says = |words: &[&str]| words.iter().any(|w| l.contains(w));
    let tls = says(&[
        "certificate",
        "tls",
        "ssl",
        "handshake",
        "corrupt message",
        "invalidcontenttype",
        "peer sent",
        "unknownissuer",
    ]);
    let dns = says(&[
        "dns error",
        "failed to lookup",
        "name or service not known",
        "nodename nor servname",
        "no such host",
        "name resolution",
        "no address associated",
    ]);
    let d = match class {
        ErrorClass::TimeoutFirstToken | ErrorClass::TimeoutTotal | ErrorClass::TimeoutIdle => {
            Diagnosis::new(
                Kind::ResponseTimeout,
                format!("no answer within {}", humantime::format_duration(cx.timeout)),
            )
            .cause(format!("connected to {hp}, but no response headers came within {}: the server is overloaded, the model is still loading (cold start), or a proxy holds the request", humantime::format_duration(cx.timeout)))
            .fix("retry; if the server is just slow, give it longer with --timeout 60s")
        }
        _ if cx.proxy.is_some() && !tls => {
            let p = cx.proxy.map(|p| format!("{}={}", p.var, p.shown)).unwrap_or_default();
            let tunnel = says(&["tunnel", "407", "proxy"]);
            let mut d = Diagnosis::new(Kind::Proxy, format!("could not reach {hp} through the proxy {p}"));
            d = if tunnel {
                d.cause("the proxy refused to open a tunnel (proxy authentication required, or the destination is blocked by the proxy)")
                    .fix("check the proxy credentials (http://user:pass@proxy:port in the variable), or ask for the destination to be allowed")
            } else {
                d.cause(format!("the request goes through the proxy set by {} and connecting failed: the proxy is down, unreachable, or the URL in {} is wrong", p, cx.proxy.map(|p| p.var).unwrap_or("the proxy variable")))
                    .fix(format!("check the proxy; or, if {host} should be reached directly, add it to NO_PROXY (e.g. NO_PROXY={host})"))
            };
            d.cause(format!("error: {detail}"))
        }
        _ if dns => Diagnosis::new(Kind::Dns, format!("cannot resolve the host `{host}`"))
            .cause(format!("DNS has no address for `{host}`: a typo in the base URL, or a name only known inside a VPN"))
            .fix(format!("check the host in the base URL ({})", cx.base_url))
            .fix("if the host is internal, connect to the VPN or use its IP address"),
        _ if tls => tls_diagnosis(cx, &l, detail),
        _ if says(&["connection refused", "os error 111", "os error 61", "actively refused"]) => {
            let mut d = Diagnosis::new(Kind::ConnectionRefused, format!("connection refused by {hp}"))
                .cause(format!("nothing is listening on {hp}"))
                .fix("start the server, or fix the host/port in the base URL");
            if matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1" | "[::1]") {
                d = d.fix("common local ports: vLLM and SGLang 8000/30000, Ollama 11434, llama.cpp 8080, TGI 8080/3000, LM Studio 1234");
            }
            d
        }
        ErrorClass::TimeoutConnect => Diagnosis::new(
            Kind::ConnectTimeout,
            format!("no connection to {hp} within the connect timeout"),
        )
        .cause(if cx.base_url.starts_with("https://") {
            "packets go unanswered (a firewall drops them, the host/port is wrong, or your network needs a proxy), or the server never answers the TLS handshake (a plain-HTTP server on this port?)"
        } else {
            "packets go unanswered: a firewall drops them, the host/port is wrong, or your network needs a proxy"
        })
        .fix("check the host and port; behind a corporate network set HTTPS_PROXY")
        .fix(if cx.base_url.starts_with("https://") {
            "if the server speaks plain HTTP on this port, use http:// in the base URL"
        } else {
            "if the server expects TLS on this port, use https:// in the base URL"
        }),
        ErrorClass::Disconnect => closed_without_answer(cx, detail),
        _ => Diagnosis::new(Kind::ConnectFailed, format!("could not connect to {hp}"))
            .cause(format!("error: {detail}"))
            .fix("check the base URL and that the server is reachable from this machine"),
    };
    d
}

/// The connection closed before any HTTP answer.
fn closed_without_answer(cx: &Context, detail: &str) -> Diagnosis {
    let hp = host_port(cx.base_url);
    let d = Diagnosis::new(
        Kind::ClosedWithoutAnswer,
        format!("{hp} closed the connection without an HTTP answer"),
    );
    if cx.base_url.starts_with("http://") {
        d.cause("the server expects TLS (https://) on this port, or a firewall/proxy cut the connection")
            .fix("try https:// in the base URL")
            .cause(format!("error: {detail}"))
    } else {
        // With TLS 1.3 the client's side of the handshake is done before the server has
        // checked its certificate: a server that wants one it did not get sends an alert and
        // closes, and whether the client reads the alert or only the close depends on timing.
        // So the close alone can mean mutual TLS.
        d.cause("the server or a middlebox closed the connection before answering")
            .cause("a server that requires a client certificate (mutual TLS) closes the connection like this when it gets none it accepts")
            .fix("retry; if it persists, check the server's logs or the proxy")
            .fix("if the server requires mutual TLS, give ladder the client certificate and its key: target.tls.client_cert and target.tls.client_key")
            .cause(format!("error: {detail}"))
    }
}

fn tls_diagnosis(cx: &Context, l: &str, detail: &str) -> Diagnosis {
    let hp = host_port(cx.base_url);
    let d = Diagnosis::new(Kind::Tls, format!("TLS handshake with {hp} failed"));
    let d = if l.contains("corrupt message")
        || l.contains("invalidcontenttype")
        || l.contains("wrong version")
        || l.contains("http request")
    {
        d.cause("the server does not speak TLS on this port (a plain-HTTP server)")
            .fix("use http:// instead of https:// in the base URL")
    } else if l.contains("expired") {
        d.cause("the server's certificate has expired")
            .fix("renew the server's certificate")
    } else if l.contains("notvalidforname") || l.contains("not valid for") {
        d.cause("the certificate is not valid for this host name")
            .fix("use the host name the certificate was issued for")
    } else if l.contains("certificaterequired")
        || l.contains("certificate required")
        || l.contains("handshakefailure")
    {
        d.cause("the server asks for a client certificate (mutual TLS) and got none it accepts")
            .fix("give ladder the client certificate and key: target.tls: {client_cert: client.pem, client_key: client.key}")
    } else {
        d.cause("the server's certificate is not trusted: self-signed, issued by a private CA, or replaced by a TLS-inspecting corporate proxy (ladder trusts the bundled Mozilla roots and this machine's certificate store)")
            .fix("give ladder the CA that signed it: set target.tls.ca_file to a PEM file, e.g. tls: {ca_file: certs/corp-ca.pem}; only to try it out, tls: {insecure: true}")
    };
    d.cause(format!("error: {detail}"))
}
