//! Finding lines in YAML text without a full parser: the line of a dotted field path (for
//! errors about a field), the field path of a line (for errors serde_yaml reports by line) and
//! the first alias (for the alias bomb, which serde_yaml reports without a line). Best effort
//! over block indentation; flow mappings count as their parent's line.

/// `key` of a `key: value` / `key:` line (already trimmed at the start).
fn key_of(t: &str) -> Option<&str> {
    if let Some(q) = t.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = t[1..].find(q)? + 1;
        return t[end + 1..]
            .trim_start()
            .starts_with(':')
            .then_some(&t[1..end]);
    }
    let i = t
        .find(": ")
        .or_else(|| t.find(":\t"))
        .or_else(|| t.strip_suffix(':').map(str::len))?;
    let k = t[..i].trim_end();
    (!k.is_empty() && !k.starts_with(['-', '#', '[', '{'])).then_some(k)
}

pub(super) fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn is_content(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// Finds `path` (e.g. `["load", "ladder"]`) by walking block indentation. Returns the 1-based
/// line of the deepest key found, the last line of its block, and whether the whole path was
/// found (a key inside a flow mapping `{a: 1}` counts as found on its parent's line).
pub(super) fn locate_span(text: &str, path: &[&str]) -> Option<(usize, usize, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let (mut lo, mut hi) = (0, lines.len());
    let mut found: Option<(usize, usize)> = None;
    for key in path {
        let mut child = None;
        let hit = (lo..hi).filter(|&i| is_content(lines[i])).find(|&i| {
            let ind = indent_of(lines[i]);
            *child.get_or_insert(ind) == ind && key_of(lines[i].trim_start()) == Some(*key)
        });
        let Some(i) = hit else {
            return found.map(|(s, e)| (s + 1, e, lines[s].contains(&format!("{key}:"))));
        };
        let ind = indent_of(lines[i]);
        let end =
            (i + 1..lines.len()).find(|&j| is_content(lines[j]) && indent_of(lines[j]) <= ind);
        found = Some((i, end.unwrap_or(lines.len())));
        (lo, hi) = (i + 1, end.unwrap_or(lines.len()));
    }
    found.map(|(s, e)| (s + 1, e, true))
}

/// The dotted key path a 1-based line belongs to (`target.headers.X-Api-Key`), best effort.
pub(super) fn path_at_line(text: &str, line: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = line.checked_sub(1).filter(|&i| i < lines.len()) else {
        return String::new();
    };
    let (mut parts, mut limit) = (Vec::new(), usize::MAX);
    for (i, l) in lines[..=last]
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, l)| is_content(l))
    {
        match key_of(l.trim_start()) {
            Some(k) if indent_of(l) < limit => {
                (parts, limit) = ([vec![k], parts].concat(), indent_of(l))
            }
            None if i == last => limit = indent_of(l) + 1,
            _ => {}
        }
    }
    parts.join(".")
}

/// The 1-based line of the first alias (`*name` where a value starts, outside quotes and
/// comments) and the alias as written, best effort.
pub(super) fn first_alias(text: &str) -> Option<(usize, &str)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let (mut quote, mut prev) = (None, ' ');
        for (at, c) in line.char_indices() {
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') if prev == ' ' => return None,
                (None, '*') if matches!(prev, ' ' | '\t' | '[' | ',' | '{') => {
                    let name = &line[at + 1..];
                    let len = name
                        .find(|c: char| c.is_whitespace() || ",]}".contains(c))
                        .unwrap_or(name.len());
                    if len > 0 {
                        return Some((i + 1, &line[at..at + 1 + len]));
                    }
                }
                _ => {}
            }
            prev = c;
        }
        None
    })
}
