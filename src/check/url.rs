//! Base URLs as `ladder check` reasons about them: which other base URLs to try when a path
//! answers 404 or a web page (missing `/v1`, an extra segment, the endpoint path pasted into the
//! base URL) and how to show a URL without credentials (which proxy a URL goes through is
//! `client::proxy`'s rule). Pure.

use reqwest::Url;

/// Endpoint paths that belong after the base URL, never in it (longest first).
const ENDPOINT_SUFFIXES: &[&str] = &[
    "/chat/completions",
    "/completions",
    "/messages",
    "/models",
    "/chat",
];

/// The host of `url` (empty when it has none).
pub fn host_of(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
}

/// `host:port` for messages (port shown when explicit or implied by the scheme).
pub fn host_port(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => url.to_string(),
        },
        Err(_) => url.to_string(),
    }
}

/// `url` with its user info masked (`crate::util::redact::mask_url_credentials`) and without query or
/// fragment (they may carry credentials too: `?api-key=`).
pub fn display_url(url: &str) -> String {
    let masked = crate::util::redact::mask_url_credentials(url);
    let end = masked.find(['?', '#']).unwrap_or(masked.len());
    masked[..end].trim_end_matches('/').to_string()
}

/// The endpoint path that `base_url` wrongly ends with, if any (`/chat/completions`, ...).
pub fn endpoint_suffix(base_url: &str) -> Option<&'static str> {
    let path = Url::parse(base_url)
        .ok()?
        .path()
        .trim_end_matches('/')
        .to_string();
    ENDPOINT_SUFFIXES
        .iter()
        .find(|s| path.ends_with(*s))
        .copied()
}

fn is_version(seg: &str) -> bool {
    let mut c = seg.chars();
    c.next() == Some('v') && c.next().is_some_and(|d| d.is_ascii_digit())
}

/// Other base URLs worth probing when `base_url` looks wrong, most likely first: the endpoint
/// path removed, `/v1` appended, segments after the version removed, a doubled `/v1/v1`
/// undone, and finally `/v1` on the bare host. Never includes `base_url` itself.
pub fn candidate_bases(base_url: &str) -> Vec<String> {
    let Ok(url) = Url::parse(base_url) else {
        return Vec::new();
    };
    let segs: Vec<String> = url
        .path_segments()
        .map(|s| s.filter(|x| !x.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let mut stripped = segs.clone();
    loop {
        let joined = format!("/{}", stripped.join("/"));
        match ENDPOINT_SUFFIXES.iter().find(|s| joined.ends_with(*s)) {
            Some(s) => {
                let n = s.matches('/').count();
                stripped.truncate(stripped.len().saturating_sub(n));
            }
            _ => break,
        }
    }
    let mut paths: Vec<Vec<String>> = Vec::new();
    if stripped != segs {
        paths.push(stripped.clone());
    }
    match stripped.iter().rposition(|s| is_version(s)) {
        None => {
            let mut p = stripped.clone();
            p.push("v1".into());
            paths.push(p);
        }
        Some(i) => {
            if i + 1 < stripped.len() {
                paths.push(stripped[..=i].to_vec());
            }
            if i >= 1 && stripped[i - 1] == stripped[i] {
                let mut p = stripped.clone();
                p.remove(i);
                paths.push(p);
            }
        }
    }
    paths.push(vec!["v1".into()]);
    let original = base_url.trim_end_matches('/');
    let mut out: Vec<String> = Vec::new();
    for p in paths {
        let mut u = url.clone();
        u.set_path(&format!("/{}", p.join("/")));
        let s = u.as_str().trim_end_matches('/').to_string();
        if s != original && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_display() {
        assert_eq!(host_of("https://api.openai.com/v1"), "api.openai.com");
        assert_eq!(host_of("not a url"), "");
        assert_eq!(host_port("https://api.openai.com/v1"), "api.openai.com:443");
        assert_eq!(host_port("http://127.0.0.1:8000/v1"), "127.0.0.1:8000");
        assert_eq!(
            display_url("https://user:pw@example.com/v1?key=secret#x"),
            "https://***@example.com/v1"
        );
        assert_eq!(display_url("garbage?key=1"), "garbage");
    }

    #[test]
    fn endpoint_suffixes() {
        assert_eq!(
            endpoint_suffix("https://api.openai.com/v1/chat/completions"),
            Some("/chat/completions")
        );
        assert_eq!(
            endpoint_suffix("https://api.anthropic.com/v1/messages/"),
            Some("/messages")
        );
        assert_eq!(endpoint_suffix("https://api.openai.com/v1"), None);
    }

    #[test]
    fn candidates_for_a_missing_v1() {
        assert_eq!(
            candidate_bases("http://localhost:11434"),
            vec!["http://localhost:11434/v1"]
        );
        assert_eq!(
            candidate_bases("https://api.anthropic.com/"),
            vec!["https://api.anthropic.com/v1"]
        );
        assert_eq!(
            candidate_bases("https://gw.example.com/openai"),
            vec![
                "https://gw.example.com/openai/v1",
                "https://gw.example.com/v1"
            ]
        );
    }

    #[test]
    fn candidates_for_an_endpoint_path_in_the_base() {
        assert_eq!(
            candidate_bases("https://api.openai.com/v1/chat/completions"),
            vec!["https://api.openai.com/v1"]
        );
        assert_eq!(
            candidate_bases("http://h:1/v1/messages"),
            vec!["http://h:1/v1"]
        );
        assert_eq!(
            candidate_bases("http://h:1/chat/completions"),
            vec!["http://h:1", "http://h:1/v1"]
        );
    }

    #[test]
    fn candidates_for_extra_or_doubled_segments() {
        assert_eq!(
            candidate_bases("http://h:1/v1/extra"),
            vec!["http://h:1/v1"]
        );
        assert_eq!(candidate_bases("http://h:1/v1/v1"), vec!["http://h:1/v1"]);
        assert_eq!(
            candidate_bases("https://api.groq.com/openai/v1/x"),
            vec!["https://api.groq.com/openai/v1", "https://api.groq.com/v1"]
        );
        // A plausible base URL only gets the bare-host fallback.
        assert_eq!(candidate_bases("http://h:1/v1"), Vec::<String>::new());
        assert_eq!(candidate_bases("not a url"), Vec::<String>::new());
    }
}
