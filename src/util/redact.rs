//! The one redaction rule set: which forms of a secret are hidden, and which names mark a value
//! as a secret. A secret (API key, secret header value, interpolated credential) must never
//! reach a file, a log line, an error or a panic message, even when a server echoes it back
//! trimmed, unquoted or without its `Bearer ` prefix.
//!
//! Rules: every secret is hidden in its raw form, trimmed, without surrounding quotes and without
//! a `Bearer ` prefix; forms shorter than [`MIN_CHARS`] characters are left alone (they would
//! mangle ordinary text and protect nothing); longer forms are replaced first, so a secret that
//! contains another is hidden whole. Messages shown to the user say `***`; files say
//! `***redacted***` so that a reader of the file sees why a value is missing.
//!
//! YAML files are redacted on the parsed value, never on the emitted text: the placeholder
//! starts with `*` (a YAML alias), so it must go through the serializer, which quotes it.
//! Values of secret-named environment variables ([`env_secrets`]) are hidden too, so a key
//! passed on the command line (`--sim-set require_api_key=$OPENAI_API_KEY`) is not recorded.

/// What replaces a secret in messages and errors.
pub const MARK: &str = "***";
/// What replaces a secret in files (requests.csv messages, scenario.yaml, meta.json).
pub const FILE_MARK: &str = "***redacted***";
/// Shorter forms of a secret are not replaced.
pub const MIN_CHARS: usize = 4;
/// Values of secret-named environment variables shorter than this are not replaced: they are
/// flags (`USE_TOKEN=true`) more likely than keys, and hiding them would mangle ordinary text.
pub const ENV_MIN_CHARS: usize = 8;

/// Hides a fixed set of secrets in any text.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// Every form to hide, longest first.
    needles: Vec<String>,
    mark: &'static str,
}

impl Redactor {
    /// A redactor for `secrets`, replacing them by [`MARK`].
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        Redactor {
            needles: Vec::new(),
            mark: MARK,
        }
        .and(secrets)
    }

    /// The same redactor hiding `secrets` as well.
    pub fn and<'a>(mut self, secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let needles = &mut self.needles;
        for raw in secrets {
            let trimmed = raw.trim();
            let unquoted = trimmed.trim_matches(['"', '\'', '`']).trim();
            let token = unquoted.strip_prefix("Bearer ").map(str::trim);
            for form in [Some(raw), Some(trimmed), Some(unquoted), token]
                .into_iter()
                .flatten()
            {
                if form.chars().count() >= MIN_CHARS {
                    needles.push(form.to_string());
                }
            }
        }
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        needles.dedup();
        self
    }

    /// The same redactor hiding the values of secret-named environment variables too.
    pub fn and_env(self) -> Self {
        let env = env_secrets();
        self.and(env.iter().map(String::as_str))
    }

    /// The same secrets, replaced by [`FILE_MARK`] (for text written to files).
    pub fn for_files(mut self) -> Self {
        self.mark = FILE_MARK;
        self
    }

    /// `text` with every form of every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for needle in &self.needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), self.mark);
            }
        }
        out
    }

    /// `v` with every secret replaced inside its strings (keys and values, numbers that spell a
    /// secret too). Emit the result with the YAML serializer, so the mark is always quoted.
    pub fn redact_yaml(&self, v: &mut serde_yaml::Value) {
        use serde_yaml::Value as Y;
        match v {
            Y::String(s) => *s = self.redact(s),
            Y::Number(n) => {
                let text = n.to_string();
                let hidden = self.redact(&text);
                if hidden != text {
                    *v = Y::String(hidden);
                }
            }
            Y::Sequence(items) => items.iter_mut().for_each(|i| self.redact_yaml(i)),
            Y::Mapping(m) => {
                let entries = std::mem::take(m);
                for (mut k, mut val) in entries {
                    self.redact_yaml(&mut k);
                    self.redact_yaml(&mut val);
                    m.insert(k, val);
                }
            }
            Y::Tagged(t) => self.redact_yaml(&mut t.value),
            Y::Null | Y::Bool(_) => {}
        }
    }

    /// YAML text of `v` with every secret replaced (see [`Redactor::redact_yaml`]).
    pub fn yaml_string(&self, v: &serde_yaml::Value) -> String {
        let mut v = v.clone();
        self.redact_yaml(&mut v);
        serde_yaml::to_string(&v).unwrap_or_else(|e| format!("# cannot render: {e}\n"))
    }
}

/// Values of the environment variables whose names mark a secret ([`is_secret_name`]), at
/// least [`ENV_MIN_CHARS`] long: whatever a user may have pasted from them is hidden.
pub fn env_secrets() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| is_secret_name(k) && v.trim().chars().count() >= ENV_MIN_CHARS)
        .map(|(_, v)| v)
        .collect()
}

/// The one masker of credentials in a URL: the user info before `@` in the authority becomes
/// `***` (`https://user:pass@host/v1` → `https://***@host/v1`, also without a scheme:
/// `user@proxy:3128` → `***@proxy:3128`); a URL without user info is returned as given (trimmed).
pub fn mask_url_credentials(raw: &str) -> String {
    let raw = raw.trim();
    let (scheme, rest) = match raw.split_once("://") {
        Some((s, r)) => (format!("{s}://"), r),
        None => (String::new(), raw),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}{MARK}@{host}{path}"),
        None => raw.to_string(),
    }
}

/// Whether a header or variable name carries a credential (`Authorization`, `X-Api-Key`,
/// `OPENAI_API_KEY`, `GH_TOKEN`, `DB_PASSWORD`, `Cookie`, ...). Case-insensitive.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["auth", "key", "token", "secret", "cookie", "password"]
        .iter()
        .any(|w| n.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_credentials_are_masked_in_one_way() {
        let m = mask_url_credentials;
        assert_eq!(m("https://user:pass@host/v1"), "https://***@host/v1");
        assert_eq!(m(" http://u:p@h:1 "), "http://***@h:1");
        assert_eq!(m("u@h:3128/x"), "***@h:3128/x");
        assert_eq!(m("https://h/v1?email=a@b"), "https://h/v1?email=a@b");
        assert_eq!(m("https://a:b@c@host/p"), "https://***@host/p");
        assert_eq!(m("https://host/v1"), "https://host/v1");
    }

    #[test]
    fn every_form_of_every_secret_is_hidden() {
        let r = Redactor::new(["sk-test-1234567890", " tok-abcdef\n", "\"sk-quoted-123\""]);
        let text = "a sk-test-1234567890 b tok-abcdef c  tok-abcdef\n d sk-quoted-123";
        let out = r.redact(text);
        assert!(!out.contains("sk-test") && !out.contains("tok-") && !out.contains("quoted"));
        assert_eq!(out.matches(MARK).count(), 4, "{out}");
        let files = Redactor::new(["sk-test-1234567890"]).for_files();
        assert_eq!(files.redact("k=sk-test-1234567890"), "k=***redacted***");
    }

    #[test]
    fn bearer_tokens_are_hidden_with_and_without_the_prefix() {
        let r = Redactor::new(["Bearer abcd-efgh-1234"]);
        assert_eq!(
            r.redact("Bearer abcd-efgh-1234 / abcd-efgh-1234"),
            "*** / ***"
        );
    }

    #[test]
    fn longest_first_and_short_values_left_alone() {
        let r = Redactor::new(["abcd", "abcdefgh"]);
        assert_eq!(r.redact("abcdefgh abcd"), "*** ***");
        let r = Redactor::new(["a", "  ab  ", ""]);
        assert_eq!(r.redact("a b ab"), "a b ab");
        assert_eq!(Redactor::default().redact("x"), "x");
    }

    #[test]
    fn yaml_is_redacted_on_the_value_so_the_mark_stays_quoted() {
        let r = Redactor::new(["sk-yaml-123456", "987654321"]).for_files();
        let v: serde_yaml::Value =
            serde_yaml::from_str("a: sk-yaml-123456\nb: [x, 987654321]\nsk-yaml-123456: k\n")
                .unwrap();
        let text = r.yaml_string(&v);
        assert!(
            !text.contains("sk-yaml") && !text.contains("98765"),
            "{text}"
        );
        let back: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back["a"].as_str(), Some(FILE_MARK));
        assert_eq!(back["b"][1].as_str(), Some(FILE_MARK));
        assert_eq!(back[FILE_MARK].as_str(), Some("k"));
    }

    #[test]
    fn secret_names() {
        for name in [
            "OPENAI_API_KEY",
            "Authorization",
            "x-api-key",
            "GH_TOKEN",
            "Cookie",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["MODEL", "BASE_URL", "x-team"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
