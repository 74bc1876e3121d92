//! What can be seen wrong with an API key without sending it: missing, a newline or whitespace
//! inside it (whitespace around it is dropped before sending, `scenario::Secret::api_key`), quotes or `Bearer ` stored with the value, a
//! placeholder, or a key of another provider. `ladder check` names these when a server answers
//! 401, because "wrong key" is rarely a useful answer on its own. Also: the masked form that is
//! the only way a key is ever shown, and redaction of server messages that echo the key.
//! Pure: no I/O.

use crate::dialect::{Api, Family};
use crate::scenario::Secret;

/// One visible defect of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyProblem {
    /// No key configured at all.
    Missing,
    /// Configured but empty (or only whitespace).
    Empty,
    /// Contains `\n` or `\r` inside it (two lines in one variable); a trailing newline is
    /// dropped before sending, so it is not a problem.
    Newline,
    /// Spaces or tabs inside it (the ones around it are dropped before sending).
    Whitespace,
    /// Other control characters.
    Control,
    /// Wrapped in quotes that became part of the value.
    Quoted,
    /// The value already starts with `Bearer ` (ladder adds it itself).
    BearerPrefix,
    /// Non-ASCII characters (smart quotes, zero-width spaces from a document).
    NonAscii,
    /// A placeholder such as `your-api-key`, `sk-...`, `<key>` or an unexpanded `$VAR`.
    Placeholder,
    /// A key whose prefix belongs to another provider than the target's host or API.
    Foreign {
        key_provider: &'static str,
        prefix: &'static str,
        target: String,
    },
}

/// What is known about the key of one target, without the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyShape {
    pub present: bool,
    /// `…a1b2`, control characters escaped (`\n`); empty when there is no key.
    pub masked: String,
    pub problems: Vec<KeyProblem>,
}

impl KeyShape {
    /// Whether a defect that makes the value unusable as it is (not `Missing`) was found.
    pub fn has_defect(&self) -> bool {
        self.problems.iter().any(|p| *p != KeyProblem::Missing)
    }
}

/// Known key prefixes: (prefix, provider).
const PREFIXES: &[(&str, &str)] = &[
    ("sk-ant-", "Anthropic"),
    ("sk-or-", "OpenRouter"),
    ("sk-proj-", "OpenAI"),
    ("sk-svcacct-", "OpenAI"),
    ("sk-admin-", "OpenAI"),
    ("gsk_", "Groq"),
    ("xai-", "xAI"),
    ("AIza", "Google"),
    ("hf_", "Hugging Face"),
    ("pplx-", "Perplexity"),
    ("nvapi-", "NVIDIA"),
];

/// The provider whose API a host belongs to, when it is one of the known ones (one list of
/// provider hosts: `model::target_kind`).
fn host_provider(host: &str) -> Option<&'static str> {
    crate::model::target_kind::provider_of_host(host)
}

/// Inspects `key` (as it will be sent: [`Secret::api_key`] already applied) for a target speaking `api` on `host`.
pub fn inspect(key: Option<&Secret>, api: Api, host: &str) -> KeyShape {
    let Some(key) = key else {
        return KeyShape {
            present: false,
            masked: String::new(),
            problems: vec![KeyProblem::Missing],
        };
    };
    let raw = key.expose();
    let mut problems = Vec::new();
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        problems.push(KeyProblem::Empty);
    }
    if raw.contains(['\n', '\r']) {
        problems.push(KeyProblem::Newline);
    }
    if raw
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        problems.push(KeyProblem::Control);
    }
    let inner = trimmed.trim_matches(['"', '\'', '`']);
    if inner.len() != trimmed.len() && !inner.is_empty() {
        problems.push(KeyProblem::Quoted);
    }
    let bearer = inner.len() > 7
        && inner
            .get(..7)
            .is_some_and(|h| h.eq_ignore_ascii_case("bearer "));
    if inner[if bearer { 7 } else { 0 }..].contains([' ', '\t']) {
        problems.push(KeyProblem::Whitespace);
    }
    if bearer {
        problems.push(KeyProblem::BearerPrefix);
    }
    if !raw.is_ascii() {
        problems.push(KeyProblem::NonAscii);
    }
    if !trimmed.is_empty() && is_placeholder(inner) {
        problems.push(KeyProblem::Placeholder);
    }
    if let Some(p) = foreign(inner, api, host) {
        problems.push(p);
    }
    KeyShape {
        present: true,
        masked: mask(key),
        problems,
    }
}

fn is_placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let words = [
        "your",
        "changeme",
        "placeholder",
        "insert",
        "replace",
        "xxxx",
        "here",
    ];
    let elided = l.contains("...") || l.contains('…');
    (elided && l.chars().count() < 16)
        || l.starts_with('$')
        || (l.starts_with('<') && l.ends_with('>'))
        || words.iter().any(|w| l.contains(w))
        || matches!(l.as_str(), "none" | "null" | "undefined" | "key" | "token")
}

fn foreign(key: &str, api: Api, host: &str) -> Option<KeyProblem> {
    let (prefix, provider) = PREFIXES.iter().find(|(p, _)| key.starts_with(p))?;
    match host_provider(host) {
        Some(target) if target != *provider => Some(KeyProblem::Foreign {
            key_provider: provider,
            prefix,
            target: format!("{target}'s API ({host})"),
        }),
        Some(_) => None,
        // An unknown host (gateway, self-hosted): only a key of another dialect family than the
        // target's says much.
        None if [Family::OpenAi, Family::Anthropic]
            .iter()
            .any(|f| f.provider() == *provider && *f != api.spec().family) =>
        {
            Some(KeyProblem::Foreign {
                key_provider: provider,
                prefix,
                target: format!("an {} endpoint", api.as_str()),
            })
        }
        None => None,
    }
}

/// The masked form with control characters escaped, so a newline shows as `\n`.
pub fn mask(key: &Secret) -> String {
    let mut out = String::new();
    for c in key.masked().chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// One line saying what is wrong with the key, and one saying how to fix it.
pub fn explain(p: &KeyProblem, source: &str) -> (String, String) {
    match p {
        KeyProblem::Missing => (
            format!("no API key was sent ({source} is not set)"),
            format!("set {source} to your API key"),
        ),
        KeyProblem::Empty => (
            format!("the API key from {source} is empty"),
            format!("put the key itself into {source}"),
        ),
        KeyProblem::Newline => (
            format!("the API key from {source} contains a newline inside it (two lines in one value?)"),
            format!("keep only the key, on one line, in {source}, e.g. export the variable with `$(tr -d '\\r\\n' < keyfile)`"),
        ),
        KeyProblem::Whitespace => (
            format!("the API key from {source} contains a space or a tab"),
            format!("remove the spaces from the key in {source}"),
        ),
        KeyProblem::Control => (
            format!("the API key from {source} contains control characters"),
            format!("copy the key again into {source}"),
        ),
        KeyProblem::Quoted => (
            format!("the API key from {source} includes its quotes"),
            format!("remove the quotes: store only the key in {source}"),
        ),
        KeyProblem::BearerPrefix => (
            format!("the API key from {source} starts with `Bearer `"),
            format!("store only the key in {source}; ladder adds `Bearer ` itself"),
        ),
        KeyProblem::NonAscii => (
            format!("the API key from {source} contains non-ASCII characters (a smart quote or zero-width space from a document?)"),
            format!("copy the key again, as plain text, into {source}"),
        ),
        KeyProblem::Placeholder => (
            format!("the API key from {source} looks like a placeholder, not a real key"),
            format!("put a real key into {source}"),
        ),
        KeyProblem::Foreign {
            key_provider,
            prefix,
            target,
        } => (
            format!(
                "the API key from {source} looks like {} {key_provider} key (it starts with `{prefix}`), but it is sent to {target}",
                if key_provider.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" }
            ),
            format!("use a key issued for this endpoint, or point the base URL at {key_provider}'s API"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(key: &str) -> KeyShape {
        inspect(Some(&Secret::new(key)), Api::OpenAiChat, "127.0.0.1")
    }

    fn problems(key: &str) -> Vec<KeyProblem> {
        shape(key).problems
    }

    #[test]
    fn a_clean_key_has_no_problem_and_is_masked() {
        let s = shape("sk-abcdefghijklmnop1234");
        assert!(s.present);
        assert_eq!(s.problems, vec![]);
        assert_eq!(s.masked, "…1234");
        assert_eq!(shape("sk-12345").masked, "…");
        assert_eq!(shape("sk-abc12345").masked, "…");
        assert_eq!(shape("sk-abcd12345").masked, "…2345");
        assert!(!s.has_defect());
    }

    #[test]
    fn missing_and_empty_keys() {
        let s = inspect(None, Api::OpenAiChat, "api.openai.com");
        assert!(!s.present);
        assert_eq!(s.problems, vec![KeyProblem::Missing]);
        assert!(!s.has_defect());
        assert_eq!(problems(""), vec![KeyProblem::Empty]);
        assert_eq!(problems("   "), vec![KeyProblem::Empty]);
    }

    #[test]
    fn newline_and_whitespace() {
        assert_eq!(problems("sk-abcdefgh\n12345"), vec![KeyProblem::Newline]);
        assert_eq!(problems("sk-abcdefgh\r\n12345"), vec![KeyProblem::Newline]);
        assert_eq!(problems("sk-abcdefgh 12345"), vec![KeyProblem::Whitespace]);
        assert_eq!(problems("sk-abcdefgh\t12345"), vec![KeyProblem::Whitespace]);
        assert_eq!(
            problems("sk-abc defgh\n12345"),
            vec![KeyProblem::Newline, KeyProblem::Whitespace]
        );
        assert_eq!(problems("sk-abc\u{7}defgh12345"), vec![KeyProblem::Control]);
    }

    #[test]
    fn masked_form_escapes_the_newline() {
        let s = shape("sk-abcdefgh123\n45");
        assert_eq!(s.masked, "…3\\n45");
        assert!(!s.masked.contains('\n'));
    }

    #[test]
    fn quotes_bearer_and_non_ascii() {
        assert_eq!(problems("\"sk-abcdefgh12345\""), vec![KeyProblem::Quoted]);
        assert_eq!(problems("'sk-abcdefgh12345'"), vec![KeyProblem::Quoted]);
        assert_eq!(
            problems("Bearer sk-abcdefgh12345"),
            vec![KeyProblem::BearerPrefix]
        );
        assert_eq!(
            problems("sk-abcdefgh12345\u{200b}"),
            vec![KeyProblem::NonAscii]
        );
        assert_eq!(
            problems("“sk-abcdefgh12345”"),
            vec![KeyProblem::NonAscii],
            "smart quotes are not stripped as quotes"
        );
    }

    #[test]
    fn placeholders() {
        for p in [
            "your-api-key",
            "YOUR_OPENAI_KEY",
            "sk-...",
            "$OPENAI_API_KEY",
            "<api key>",
            "changeme",
            "sk-xxxxxxxxxxxxxxxx",
            "null",
        ] {
            assert!(problems(p).contains(&KeyProblem::Placeholder), "{p}");
        }
        assert_eq!(problems("sk-proj-abcdefghij0123"), vec![]);
    }

    #[test]
    fn foreign_keys_by_host() {
        let k = Secret::new("sk-ant-api03-abcdefghijkl");
        let s = inspect(Some(&k), Api::OpenAiChat, "api.openai.com");
        assert_eq!(
            s.problems,
            vec![KeyProblem::Foreign {
                key_provider: "Anthropic",
                prefix: "sk-ant-",
                target: "OpenAI's API (api.openai.com)".into()
            }]
        );
        // Anthropic's own OpenAI-compatible endpoint takes Anthropic keys.
        assert_eq!(
            inspect(Some(&k), Api::OpenAiChat, "api.anthropic.com").problems,
            vec![]
        );
        let o = Secret::new("sk-proj-abcdefghijkl");
        let s = inspect(Some(&o), Api::AnthropicMessages, "api.anthropic.com");
        assert!(matches!(
            s.problems[0],
            KeyProblem::Foreign {
                key_provider: "OpenAI",
                ..
            }
        ));
        let g = Secret::new("gsk_abcdefghijklmnop");
        assert!(matches!(
            inspect(Some(&g), Api::OpenAiChat, "openrouter.ai").problems[0],
            KeyProblem::Foreign {
                key_provider: "Groq",
                ..
            }
        ));
    }

    #[test]
    fn foreign_keys_by_api_on_unknown_hosts() {
        let k = Secret::new("sk-ant-api03-abcdefghijkl");
        let s = inspect(Some(&k), Api::OpenAiChat, "127.0.0.1");
        assert_eq!(
            s.problems,
            vec![KeyProblem::Foreign {
                key_provider: "Anthropic",
                prefix: "sk-ant-",
                target: "an openai-chat endpoint".into()
            }]
        );
        assert_eq!(
            inspect(Some(&k), Api::AnthropicMessages, "gateway.local").problems,
            vec![]
        );
        let o = Secret::new("sk-proj-abcdefghijkl");
        assert_eq!(
            inspect(Some(&o), Api::AnthropicMessages, "gateway.local")
                .problems
                .len(),
            1
        );
        assert_eq!(
            inspect(Some(&o), Api::OpenAiChat, "gateway.local").problems,
            vec![]
        );
        // A plain `sk-` key (DeepSeek, legacy OpenAI, gateways) says nothing.
        let plain = Secret::new("sk-0123456789abcdef");
        assert_eq!(
            inspect(Some(&plain), Api::AnthropicMessages, "api.anthropic.com").problems,
            vec![]
        );
    }

    #[test]
    fn every_problem_has_a_cause_and_a_fix_naming_the_source() {
        let all = [
            KeyProblem::Missing,
            KeyProblem::Empty,
            KeyProblem::Newline,
            KeyProblem::Whitespace,
            KeyProblem::Control,
            KeyProblem::Quoted,
            KeyProblem::BearerPrefix,
            KeyProblem::NonAscii,
            KeyProblem::Placeholder,
            KeyProblem::Foreign {
                key_provider: "Anthropic",
                prefix: "sk-ant-",
                target: "x".into(),
            },
        ];
        for p in &all {
            let (cause, fix) = explain(p, "$MY_KEY");
            assert!(cause.contains("$MY_KEY"), "{cause}");
            assert!(!fix.is_empty());
        }
        assert!(explain(&KeyProblem::Newline, "$K").0.contains("newline"));
        assert!(explain(&KeyProblem::Quoted, "$K")
            .1
            .contains("remove the quotes"));
    }
}
