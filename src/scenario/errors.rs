//! Located, redacted errors: `Ctx` knows the file, the text to find lines in and the secret
//! values to hide, and turns a field path or a serde_yaml error into a `ScenarioError` that
//! names file, line and field. Also the small message helpers the validators share
//! (did-you-mean suggestions, the dialects that allow a field).

use super::lines::{first_alias, locate_span, path_at_line};
use super::ScenarioError;
use crate::dialect::Api;
use crate::util::redact::Redactor;
use std::path::Path;

/// What errors need: the file, the (interpolated) text to find lines in, values to hide.
pub(super) struct Ctx<'a> {
    pub(super) file: &'a Path,
    pub(super) text: &'a str,
    pub(super) secrets: Vec<String>,
    /// The size cap on prompt, system and prompt-set files (`bounded::prompt_cap`).
    pub(super) prompt_cap: u64,
}

impl Ctx<'_> {
    /// An error about the field at dotted `path`, on the line of that field (or its parent).
    pub(super) fn err(&self, path: &str, message: String) -> ScenarioError {
        let line = locate_span(self.text, &path.split('.').collect::<Vec<_>>()).map(|l| l.0);
        self.err_at(line, path.to_string(), message)
    }

    pub(super) fn err_at(
        &self,
        line: Option<usize>,
        field: String,
        message: String,
    ) -> ScenarioError {
        let message = Redactor::new(self.secrets.iter().map(String::as_str)).redact(&message);
        ScenarioError::Invalid {
            file: self.file.to_path_buf(),
            line,
            field,
            message,
        }
    }

    pub(super) fn yaml_err(&self, e: &serde_yaml::Error) -> ScenarioError {
        let line = e.location().map(|l| l.line());
        let full = strip_marks(&e.to_string());
        let (mut field, mut msg) = match full.split_once(": ") {
            Some((p, m)) if !p.is_empty() && !p.contains([' ', '`', '"']) => (p.into(), m.into()),
            _ => (String::new(), full.clone()),
        };
        let join = |f: &str, k: &str| {
            if f.is_empty() {
                k.to_string()
            } else {
                format!("{f}.{k}")
            }
        };
        if let Some(rest) = msg.clone().strip_prefix("unknown field `") {
            let names: Vec<&str> = rest
                .split('`')
                .step_by(2)
                .filter(|n| !n.is_empty())
                .collect();
            let unknown = names.first().copied().unwrap_or_default();
            let hint = did_you_mean(unknown, names.get(1..).unwrap_or_default());
            let list = names.get(1..).unwrap_or_default().join(", ");
            msg = format!("unknown field `{unknown}`{hint}; the fields allowed here are: {list}");
            field = join(&field, unknown);
        } else if let Some(rest) = msg.clone().strip_prefix("duplicate field `") {
            let key = rest.split('`').next().unwrap_or_default();
            let path = join(&field, key);
            // serde_yaml names no line for a duplicate: find the key's lines, report the second.
            let lines: Vec<usize> = (self.text.lines().enumerate())
                .filter(|(_, l)| {
                    let t = l.trim_start().trim_start_matches("- ");
                    t.trim_start_matches(['"', '\'']).starts_with(key)
                })
                .map(|(i, _)| i + 1)
                .filter(|&n| path_at_line(self.text, n) == path)
                .collect();
            return match lines[..] {
                [first, second, ..] => self.err_at(
                    Some(second),
                    path,
                    format!("`{key}` is set twice (lines {first} and {second}); keep one"),
                ),
                _ => self.err(&path, format!("`{key}` is set twice; keep one")),
            };
        } else if field.is_empty() {
            field = line.map(|l| path_at_line(self.text, l)).unwrap_or_default();
        }
        // YAML-level errors, in words that say what to change.
        if msg.contains("more than one document") {
            let second = (self.text.lines().enumerate())
                .filter(|(_, l)| l.trim_end() == "---" || l.starts_with("--- "))
                .map(|(i, _)| i + 1)
                .nth(usize::from(self.text.trim_start().starts_with("---")));
            return self.err_at(
                second.or(line),
                String::new(),
                "the file holds more than one YAML document (a second `---`); keep one scenario per file".into(),
            );
        }
        if msg.contains("repetition limit exceeded") {
            // serde_yaml names no line here: point at the first alias, the bomb's fuse.
            let (line, alias) = match (line, first_alias(self.text)) {
                (Some(l), _) => (Some(l), "`*name`".to_string()),
                (None, Some((l, alias))) => (Some(l), format!("`{alias}` from line {l} on")),
                (None, None) => (None, "`*name`".to_string()),
            };
            if field.is_empty() {
                field = line.map(|l| path_at_line(self.text, l)).unwrap_or_default();
            }
            return self.err_at(
                line,
                field,
                format!("aliases ({alias}) expand to far too much data (a \"billion laughs\" file?); write the values out or use fewer aliases"),
            );
        }
        if msg.contains("recursion limit exceeded") {
            return self.err_at(line, field, "nested too deeply; flatten the value".into());
        }
        if let Some(i) = msg.find("expected struct ") {
            msg = format!("{}expected a mapping", &msg[..i]);
        }
        self.err_at(
            line,
            field,
            msg.replace("expected a sequence", "expected a list like [a, b]"),
        )
    }
}

/// Drops serde_yaml's ` at line 3 column 5` (the line is reported separately).
pub(super) fn strip_marks(s: &str) -> String {
    let digits = |t: &str| t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (mut out, mut rest) = (String::new(), s);
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 9..];
        match after[digits(after)..].strip_prefix(" column ") {
            Some(col) if digits(after) > 0 => rest = &col[digits(col)..],
            _ => (out, rest) = (out + " at line ", after),
        }
    }
    out + rest
}

/// ` (did you mean `requests_per_step`?)` when a candidate is close enough, else empty.
pub(super) fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    const ALIASES: [(&str, &str); 4] = [
        ("concurrency", "ladder"),
        ("url", "base_url"),
        ("key", "api_key"),
        ("prompt", "prompt_file"),
    ];
    let alias = ALIASES
        .iter()
        .find(|(w, c)| *w == word && candidates.contains(c))
        .map(|p| p.1);
    let best = candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|p| p.1);
    alias
        .or(best)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// The dialects for which `ok` holds, by name, joined with `sep`, for messages.
pub(super) fn dialects(ok: impl Fn(Api) -> bool, sep: &str) -> String {
    let names: Vec<_> = Api::ALL
        .into_iter()
        .filter(|a| ok(*a))
        .map(Api::as_str)
        .collect();
    names.join(sep)
}
