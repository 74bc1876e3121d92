//! Which proxy a request to a URL goes through: the `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` /
//! `NO_PROXY` rules reqwest follows, as one function, so that `ladder check` (which shows the
//! proxy) and `run` (which decides whether the system's certificate store is needed) agree with
//! the client that sends. Pure: the environment is passed in as a function.

use reqwest::Url;

/// The proxy a request to a URL goes through, as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyInfo {
    /// The variable that set it, e.g. `HTTPS_PROXY`.
    pub var: &'static str,
    /// Its value without credentials.
    pub shown: String,
}

/// Which proxy variable applies to `url` (reqwest's rules: `HTTPS_PROXY` for https,
/// `HTTP_PROXY` for http, then `ALL_PROXY`; lower-case forms too; `NO_PROXY` exempts hosts).
/// CIDR ranges in `NO_PROXY` are not evaluated.
pub fn proxy_for(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<ProxyInfo> {
    let u = Url::parse(url).ok()?;
    let host = u.host_str()?.trim_start_matches('[').trim_end_matches(']');
    let get = |names: &[&'static str]| {
        names
            .iter()
            .find_map(|n| env(n).filter(|v| !v.trim().is_empty()).map(|v| (*n, v)))
    };
    if let Some((_, list)) = get(&["NO_PROXY", "no_proxy"]) {
        if no_proxy_matches(&list, host) {
            return None;
        }
    }
    let specific = match u.scheme() {
        "https" => get(&["HTTPS_PROXY", "https_proxy"]),
        "http" if env("REQUEST_METHOD").is_none() => get(&["HTTP_PROXY", "http_proxy"]),
        _ => None,
    };
    let (var, value) = specific.or_else(|| get(&["ALL_PROXY", "all_proxy"]))?;
    Some(ProxyInfo {
        var,
        shown: crate::util::redact::mask_url_credentials(&value),
    })
}

fn no_proxy_matches(list: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    list.split(',').map(str::trim).any(|entry| {
        let e = entry.trim_start_matches('.').to_ascii_lowercase();
        entry == "*" || (!e.is_empty() && (host == e || host.ends_with(&format!(".{e}"))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn proxy_selection_follows_scheme_and_no_proxy() {
        let env = env_of(&[
            ("HTTPS_PROXY", "http://user:pw@proxy.corp:3128"),
            ("http_proxy", "http://plain:8080"),
            ("NO_PROXY", "localhost, .internal.corp"),
        ]);
        assert_eq!(
            proxy_for("https://api.openai.com/v1", &env),
            Some(ProxyInfo {
                var: "HTTPS_PROXY",
                shown: "http://***@proxy.corp:3128".into()
            })
        );
        assert_eq!(
            proxy_for("http://example.com/v1", &env).map(|p| p.var),
            Some("http_proxy")
        );
        assert_eq!(proxy_for("http://localhost:8000/v1", &env), None);
        assert_eq!(proxy_for("https://llm.internal.corp/v1", &env), None);
        assert_eq!(proxy_for("https://internal.corp/v1", &env), None);
        let all = env_of(&[("ALL_PROXY", "socks5://s:1080")]);
        assert_eq!(
            proxy_for("https://x.ai/v1", &all).map(|p| p.var),
            Some("ALL_PROXY")
        );
        let star = env_of(&[("ALL_PROXY", "socks5://s:1080"), ("no_proxy", "*")]);
        assert_eq!(proxy_for("https://x.ai/v1", &star), None);
        let none = env_of(&[]);
        assert_eq!(proxy_for("https://x.ai/v1", &none), None);
        let cgi = env_of(&[("HTTP_PROXY", "http://p:1"), ("REQUEST_METHOD", "GET")]);
        assert_eq!(proxy_for("http://x.ai/v1", &cgi), None);
    }

    #[test]
    fn proxy_masking() {
        assert_eq!(
            crate::util::redact::mask_url_credentials("http://u:p@h:1"),
            "http://***@h:1"
        );
        assert_eq!(
            crate::util::redact::mask_url_credentials("h:3128"),
            "h:3128"
        );
        assert_eq!(
            crate::util::redact::mask_url_credentials("u@h:3128/x"),
            "***@h:3128/x"
        );
    }
}
