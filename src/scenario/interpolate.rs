//! `${VAR}` interpolation on the raw text, before YAML parsing: each value is escaped for the
//! quoting it lands in and never adds a line, and every substitution is remembered (line,
//! variable, value) so that validation can treat interpolated values as secrets.

use super::lines::indent_of;

/// One `${VAR}` replacement: on which line, and the text it became.
pub(super) struct Sub {
    pub(super) line: usize,
    pub(super) var: String,
    pub(super) value: String,
    /// `${VAR}` without a default whose variable is set but empty (a CI secret that did not
    /// reach the job reads so), as opposed to one that is not set at all (an error here).
    pub(super) set_but_empty: bool,
}

pub(super) struct Interpolated {
    pub(super) text: String,
    pub(super) subs: Vec<Sub>,
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Replaces `${VAR}` and `${VAR:-default}` (default also when VAR is empty) everywhere except in
/// comments; `$$` is a literal `$`. Each value is escaped for the quoting it lands in and never
/// adds a line, so later errors keep the right line numbers. Errors carry the 1-based line.
pub(super) fn interpolate(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Interpolated, (usize, String)> {
    let (mut out, mut subs) = (String::with_capacity(text.len()), Vec::new());
    let mut quote = Quote::None;
    let mut block: Option<usize> = None; // indentation of the line that opened a `|`/`>` block
    for (i, raw_line) in text.split_inclusive('\n').enumerate() {
        let body = raw_line.trim_end_matches(['\n', '\r']);
        let indent = indent_of(body);
        let in_block = block.is_some_and(|b| body.trim().is_empty() || indent > b);
        if !in_block {
            block = None;
        }
        let code_end = scan_line(body, i + 1, in_block, &mut quote, env, &mut out, &mut subs)?;
        out.push_str(&raw_line[body.len()..]);
        let code = body[..code_end].trim_end();
        let head = code.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
        let opens = [" |", " >"].iter().any(|s| head.ends_with(s)) || matches!(head, "|" | ">");
        if !in_block && quote == Quote::None && opens && code.len() - head.len() <= 2 {
            block = Some(indent);
        }
    }
    Ok(Interpolated { text: out, subs })
}

/// Copies one line into `out`, interpolating; returns where a comment starts (or the length).
fn scan_line(
    body: &str,
    n: usize,
    in_block: bool,
    quote: &mut Quote,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
    subs: &mut Vec<Sub>,
) -> Result<usize, (usize, String)> {
    let mut pos = 0;
    while let Some(c) = body[pos..].chars().next() {
        let next = body[pos + c.len_utf8()..].chars().next();
        let skip = match (*quote, c) {
            _ if in_block => 0,
            (Quote::None, '#') if pos == 0 || body[..pos].ends_with([' ', '\t']) => {
                out.push_str(&body[pos..]);
                return Ok(pos);
            }
            (Quote::None, '\'' | '"') if at_scalar_start(&body[..pos]) => {
                *quote = if c == '"' {
                    Quote::Double
                } else {
                    Quote::Single
                };
                0
            }
            (Quote::Single, '\'') if next == Some('\'') => 2,
            (Quote::Single, '\'') | (Quote::Double, '"') => {
                *quote = Quote::None;
                0
            }
            (Quote::Double, '\\') => 1 + next.map_or(0, char::len_utf8),
            _ => 0,
        };
        if skip > 0 {
            out.push_str(&body[pos..pos + skip]);
            pos += skip;
            continue;
        }
        if c != '$' || !matches!(next, Some('$' | '{')) {
            out.push(c);
            pos += c.len_utf8();
            continue;
        }
        if next == Some('$') {
            out.push('$');
            pos += 2;
            continue;
        }
        let usage = "write ${VAR} or ${VAR:-default} (or $$ for a literal $)";
        let Some(close) = body[pos..].find('}') else {
            return Err((n, format!("unterminated `${{`; {usage}")));
        };
        let inner = &body[pos + 2..pos + close];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        let valid = var.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || default.is_some_and(|d| d.contains("${")) {
            return Err((n, format!("`${{{inner}}}` is not supported; {usage}")));
        }
        let found = env(var);
        let set_but_empty = default.is_none() && found.as_deref() == Some("");
        let value = match (
            found.filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(v), _) => v,
            (None, Some(d)) => d.to_string(),
            (None, None) => {
                let fix = format!("export it, or write ${{{var}:-default}} to give a default");
                return Err((n, format!("environment variable {var} is not set; {fix}")));
            }
        };
        let end = pos + close + 1;
        let encoded = encode(&value, *quote, in_block, &body[..pos], &body[end..]);
        out.push_str(&encoded.map_err(|why| (n, format!("the value of {var} {why}")))?);
        subs.push(Sub {
            line: n,
            var: var.to_string(),
            value,
            set_but_empty,
        });
        pos = end;
    }
    Ok(body.len())
}

/// Whether a quote after `before` (the line so far) opens a quoted scalar.
fn at_scalar_start(before: &str) -> bool {
    let t = before.trim_end();
    match t.chars().last() {
        None | Some('[' | '{' | ',') => true,
        Some(':' | '-' | '?') => t.len() < before.len(),
        _ => false,
    }
}

/// The value as YAML text for where it lands, so that YAML reads back exactly the value.
fn encode(
    v: &str,
    quote: Quote,
    in_block: bool,
    before: &str,
    after: &str,
) -> Result<String, &'static str> {
    let breaks = v.contains(['\n', '\r']);
    let json = || serde_json::to_string(v).unwrap_or_default(); // JSON strings are YAML too
    match quote {
        Quote::Double => Ok(json()[1..json().len() - 1].to_string()),
        Quote::Single if breaks => Err("has a line break, which '...' cannot hold; use \"...\""),
        Quote::Single => Ok(v.replace('\'', "''")),
        Quote::None if breaks && in_block => {
            Err("has a line break, which a block text cannot hold")
        }
        Quote::None if in_block || plain_safe(v, at_scalar_start(before)) => Ok(v.to_string()),
        Quote::None => {
            let a = after.trim_start();
            let ends = a.is_empty()
                || a.starts_with([',', ']', '}'])
                || (a.starts_with('#') && a.len() < after.len());
            match at_scalar_start(before) && ends {
                // `ladder: ${LADDER:-[1, 2]}`: a whole flow list of plain values is a list.
                true if !breaks && flow_list(v) => Ok(v.trim().to_string()),
                true => Ok(json()),
                false => {
                    Err("has characters YAML would misread here; put quotes around the whole value")
                }
            }
        }
    }
}

/// `[1, 2, 4]`: a one-line flow sequence of numbers or plain words, which a variable may hold
/// to give a whole list (nothing nested, so a value can never open a mapping).
fn flow_list(v: &str) -> bool {
    let t = v.trim();
    let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
        return false;
    };
    inner.trim().is_empty()
        || inner.split(',').all(|item| {
            let item = item.trim();
            !item.is_empty()
                && item
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        })
}

/// Text that YAML reads back unchanged as (part of) a plain scalar.
fn plain_safe(v: &str, at_start: bool) -> bool {
    let bad = v.chars().any(char::is_control)
        || v != v.trim()
        || v.contains(": ")
        || v.contains(" #")
        || v.ends_with(':')
        || v.contains(['[', ']', '{', '}', ',']);
    let indicator = v.starts_with([
        '?', ':', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
    ]) || (v.starts_with('-') && !v[1..].starts_with(|c: char| c.is_ascii_digit()));
    !(bad || at_start && indicator)
}
