//! How one `ladder check` result reads on stdout: a first line `ok  MODEL  figures` or
//! `FAIL  MODEL  what went wrong`, then the target (API, base URL without credentials, masked
//! key and where it comes from), the causes, the fixes, the server's own message and notes.
//! Pure: returns text.

use super::diagnosis::Diagnosis;
use super::key::KeyShape;
use super::url::display_url;
use crate::dialect::Api;
use std::fmt::Write;

/// What the block says about the target besides the diagnosis.
pub struct Block<'a> {
    pub model: &'a str,
    pub api: Api,
    pub base_url: &'a str,
    pub key: &'a KeyShape,
    pub key_source: &'a str,
}

const INDENT: &str = "    ";

/// The text block for one target/model, ending with a newline.
pub fn block(b: &Block, d: &Diagnosis) -> String {
    let mut out = String::new();
    let status = if d.is_ok() { "ok" } else { "FAIL" };
    let _ = writeln!(out, "{status}  {}  {}", b.model, d.summary);
    let key = if b.key.present {
        format!("key {} from {}", b.key.masked, b.key_source)
    } else {
        format!("no key ({} not set)", b.key_source)
    };
    let _ = writeln!(
        out,
        "{INDENT}{} · {} · {key}",
        b.api.as_str(),
        display_url(b.base_url)
    );
    for s in &d.seen {
        let _ = writeln!(out, "{INDENT}saw:   {s}");
    }
    for c in &d.causes {
        let _ = writeln!(out, "{INDENT}cause: {c}");
    }
    for f in &d.fixes {
        let _ = writeln!(out, "{INDENT}fix:   {f}");
    }
    if let Some(s) = &d.server_said {
        let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(out, "{INDENT}server said: {one_line}");
    }
    for n in &d.notes {
        let _ = writeln!(out, "{INDENT}note: {n}");
    }
    out
}

/// The block for a model not sent because the target already failed for another model.
pub fn skipped(model: &str, first_model: &str, first: &Diagnosis) -> String {
    format!(
        "FAIL  {model}  not checked: the target already failed for `{first_model}` ({})\n",
        first.summary
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::diagnosis::Kind;

    fn diag(kind: Kind, summary: &str) -> Diagnosis {
        Diagnosis {
            kind,
            summary: summary.into(),
            causes: vec!["c1".into()],
            fixes: vec!["f1".into(), "f2".into()],
            notes: vec!["n1".into()],
            server_said: Some("line one\nline   two".into()),
            seen: Vec::new(),
        }
    }

    #[test]
    fn failure_block_has_every_part_in_order() {
        let key = KeyShape {
            present: true,
            masked: "sk-…a1b2".into(),
            problems: vec![],
        };
        let b = Block {
            model: "gpt-4o",
            api: Api::OpenAiChat,
            base_url: "https://u:p@api.openai.com/v1?x=1",
            key: &key,
            key_source: "$OPENAI_API_KEY",
        };
        let text = block(&b, &diag(Kind::KeyRejected, "HTTP 401: rejected"));
        assert_eq!(
            text,
            "FAIL  gpt-4o  HTTP 401: rejected\n\
             \x20   openai-chat · https://***@api.openai.com/v1 · key sk-…a1b2 from $OPENAI_API_KEY\n\
             \x20   cause: c1\n\
             \x20   fix:   f1\n\
             \x20   fix:   f2\n\
             \x20   server said: line one line two\n\
             \x20   note: n1\n"
        );
    }

    #[test]
    fn ok_block_without_key() {
        let key = KeyShape {
            present: false,
            masked: String::new(),
            problems: vec![],
        };
        let b = Block {
            model: "m",
            api: Api::AnthropicMessages,
            base_url: "http://127.0.0.1:1/v1",
            key: &key,
            key_source: "$K",
        };
        let mut d = diag(Kind::Ok, "TTFT 5 ms, 5 tokens, usage reported");
        d.causes.clear();
        d.fixes.clear();
        d.notes.clear();
        d.server_said = None;
        assert_eq!(
            block(&b, &d),
            "ok  m  TTFT 5 ms, 5 tokens, usage reported\n    anthropic-messages · http://127.0.0.1:1/v1 · no key ($K not set)\n"
        );
    }

    #[test]
    fn skipped_names_the_first_failure() {
        let d = diag(Kind::ConnectionRefused, "connection refused by h:1");
        assert_eq!(
            skipped("b", "a", &d),
            "FAIL  b  not checked: the target already failed for `a` (connection refused by h:1)\n"
        );
    }
}
