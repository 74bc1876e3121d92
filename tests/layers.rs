//! The house rules of `src/`, checked on the source text so that they stay true as the code
//! grows (docs/architecture.md explains them):
//!
//! - **Layers.** Every top-level module belongs to one layer of [`LAYERS`]; a module may import
//!   only from layers below its own (never from its own layer's other modules, never upwards).
//!   `crate::x`, `crate::{x, y::z}` and `super::` paths that climb out of a module all count, in
//!   `use` lines and in code. Test code (`#[cfg(test)]` modules and the files they live in) may
//!   reach anything: a test may wire a whole pipeline.
//! - **One home per dialect.** The variants of `dialect::Api` are named only in
//!   [`DIALECT_HOMES`] (the dialect registry), and the variants of `dialect::Shape` (the wire
//!   shapes) only there and in [`SHAPE_HOMES`], the client's and the simulator's wire code;
//!   everything else asks the dialect's `Spec`.
//! - **No loops inside a module.** Two files (or folders) of one module never import from each
//!   other, directly or around a longer loop: a type both need gets its own file.
//! - **No re-exports across modules.** A module never `pub use`s another top-level module's
//!   items: each item is imported from its one home.
//! - **`run` has its own wing.** What only `ladder run` uses lives under `app/run/`, and no file
//!   outside it names anything inside it (`app/mod.rs` dispatches to its one entry point).
//! - **Sizes.** No non-test source file over [`MAX_FILE_LINES`] lines, no function over
//!   [`MAX_FN_LINES`] lines (from its `fn` line to its closing brace).
//!
//! The parsing is deliberately simple (comments and string contents are blanked, braces
//! matched); a failure names the file, the line and the rule.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, top first. A module imports only from the layers after its own. This list and the
/// one in docs/architecture.md are the same list.
const LAYERS: &[&[&str]] = &[
    &["main"],
    &["app"],
    &["cli"],
    &["render"],
    &["check", "plan", "logs"],
    &["compare"],
    &["findings"],
    &["telemetry"],
    &["runner"],
    &["shard"],
    &["client"],
    &["store"],
    &["stats"],
    &["error"],
    &["scenario"],
    &["sim"],
    &["dialect"],
    &["model"],
    &["util"],
];

/// The files (or folders, ending in `/`) that may name a variant of `dialect::Api`: the registry
/// of the dialects' facts (`Spec`), so that a dialect of an existing wire shape is one `Spec`.
const DIALECT_HOMES: &[&str] = &["dialect/"];

/// The files that may name a variant of `dialect::Shape`, a wire shape: the registry, the
/// client's registry of request bodies and stream readers, and the simulator's wire format.
const SHAPE_HOMES: &[&str] = &["dialect/", "client/dialect.rs", "sim/wire.rs"];

/// Loops between the files of one module when the rule came in (`module: a -> b -> a`), to be
/// broken; the same rule as [`OVERSIZE_FILES`].
const KNOWN_LOOPS: &[&str] = &[];

/// Cross-module re-exports (`file: pub use crate::x::…`) when the rule came in, to be removed;
/// the same rule as [`OVERSIZE_FILES`].
const KNOWN_REEXPORTS: &[&str] = &[];

const MAX_FILE_LINES: usize = 700;
const MAX_FN_LINES: usize = 100;

/// Files over the size limit when the rule was introduced, to be split; a file may leave this
/// list (the test says when it must) but never join it.
const OVERSIZE_FILES: &[&str] = &[];

/// Functions (`file:name`) over the length limit when the rule was introduced, to be split into
/// named steps; the same rule as [`OVERSIZE_FILES`].
const OVERLONG_FNS: &[&str] = &[];

/// `found` (what is over the limit now) against `known` (what was): new entries and entries
/// that are now within the limit, as messages.
fn against_known(found: &BTreeMap<String, String>, known: &[&str], what: &str) -> Vec<String> {
    let mut problems: Vec<String> = found
        .iter()
        .filter(|(key, _)| !known.contains(&key.as_str()))
        .map(|(_, msg)| format!("{msg} (split it: no {what} may join the known list)"))
        .collect();
    for k in known {
        if !found.contains_key(*k) {
            problems.push(format!(
                "src/{k} is within the limit now: remove it from the known list in tests/layers.rs"
            ));
        }
    }
    problems
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// One source file: its module path (`["store", "meta"]`), whether it is test code, and its text
/// with comments and string/char contents blanked (line structure kept) and test modules cut.
struct Source {
    rel: String,
    module: Vec<String>,
    is_test: bool,
    raw_lines: usize,
    code: String,
}

fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && parts[0] == "lib" {
        parts.clear();
    }
    parts
}

/// Blanks `//` and `/* */` comments and the contents of string and char literals (keeping
/// newlines), so that braces and paths inside them do not count. Raw strings `r"…"`/`r#"…"#`
/// are handled; lifetimes (`'a`) are not mistaken for chars.
fn blank(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_nl = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(keep_nl(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !b
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(keep_nl(b[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(keep_nl(b[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(k) => {
                    out.push_str("' '");
                    out.push_str(&" ".repeat(k - i - 2));
                    i = k + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The index just past the block that opens at the first `{` at or after `from` (`None` when a
/// `;` comes first: `mod x;`).
fn block_end(code: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < code.len() && code[i] != b'{' {
        if code[i] == b';' {
            return None;
        }
        i += 1;
    }
    let mut depth = 0usize;
    while i < code.len() {
        match code[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some(code.len())
}

/// Names of modules declared `#[cfg(test)] mod name;` in `code`, and the code with inline
/// `#[cfg(test)]` items (`mod tests { … }`, test-only functions) blanked.
fn cut_tests(code: &str) -> (Vec<String>, String) {
    let mut bytes = code.as_bytes().to_vec();
    let mut test_files = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find("#[cfg(test)]") {
        let at = from + pos;
        from = at + 1;
        let rest = &code[at + "#[cfg(test)]".len()..];
        let item = rest.trim_start();
        let item_at = code.len() - item.len();
        if let Some(decl) = item.strip_prefix("mod ") {
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                test_files.push(name);
                continue;
            }
        }
        if let Some(end) = block_end(code.as_bytes(), item_at) {
            for b in &mut bytes[at..end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    (
        test_files,
        String::from_utf8(bytes).expect("blanking keeps UTF-8"),
    )
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every file of `src/`, with test files (declared `#[cfg(test)] mod x;`, or `#[path]`ed from
/// such a declaration) marked.
fn sources() -> Vec<Source> {
    let root = src();
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    paths.sort();
    let mut all: Vec<Source> = Vec::new();
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    for path in &paths {
        let rel = path.strip_prefix(&root).unwrap();
        let text = fs::read_to_string(path).unwrap();
        let module = module_of(rel);
        let blanked = blank(&text);
        let (tests, code) = cut_tests(&blanked);
        // `#[cfg(test)] #[path = "x.rs"] mod y;` names the file by its path attribute.
        for line in text.lines() {
            if let Some(p) = line.trim().strip_prefix("#[path = \"") {
                let file = p.trim_end_matches("\"]");
                let mut m = module.clone();
                if rel.file_name().is_some_and(|f| f != "mod.rs") {
                    m.pop();
                }
                m.push(file.trim_end_matches(".rs").to_string());
                test_modules.insert(m);
            }
        }
        for t in &tests {
            let mut m = module.clone();
            m.push(t.clone());
            test_modules.insert(m);
        }
        all.push(Source {
            rel: rel.to_string_lossy().into_owned(),
            module,
            is_test: false,
            raw_lines: text.lines().count(),
            code,
        });
    }
    for s in &mut all {
        s.is_test = (1..=s.module.len()).any(|n| test_modules.contains(&s.module[..n]));
    }
    all
}

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top))
}

/// The top-level modules a file's code names, with the line of each mention: `crate::x`,
/// `crate::{x, …}`, and `super::…` chains that climb above the file's own top-level module.
fn imports(s: &Source) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let code = &s.code;
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let ident = |t: &str| -> String {
        t.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut from = 0;
    while let Some(pos) = code[from..].find("crate::") {
        let at = from + pos;
        from = at + 7;
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            continue;
        }
        let rest = &code[at + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = block_end(rest.as_bytes(), 0).unwrap_or(rest.len());
            let inner = &group[..end.saturating_sub(2)];
            let mut depth = 0;
            let mut start = true;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_alphanumeric() || c == '_') && depth == 0 => {
                        found.push((ident(&inner[i..]), line_of(at)));
                        start = false;
                    }
                    _ if depth == 0 && !c.is_whitespace() => start = false,
                    _ => {}
                }
            }
        } else {
            found.push((ident(rest), line_of(at)));
        }
    }
    // `super::` chains: a file at module depth d that climbs d times names a top-level module.
    let depth = s.module.len();
    let mut from = 0;
    while let Some(pos) = code[from..].find("super::") {
        let at = from + pos;
        from = at + 7;
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let mut rest = &code[at..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        if ups >= depth {
            let name = ident(rest);
            if !name.is_empty() {
                found.push((name, line_of(at)));
            }
        }
    }
    found
}

#[test]
fn every_top_level_module_has_a_layer() {
    let tops: BTreeSet<String> = sources()
        .iter()
        .filter_map(|s| s.module.first().cloned())
        .collect();
    let missing: Vec<&String> = tops.iter().filter(|t| layer_of(t).is_none()).collect();
    assert!(
        missing.is_empty(),
        "top-level modules without a layer: {missing:?}; add each to LAYERS in tests/layers.rs \
         and to the list in docs/architecture.md"
    );
}

#[test]
fn modules_import_only_from_layers_below() {
    let mut problems = Vec::new();
    for s in sources().iter().filter(|s| !s.is_test) {
        let Some(top) = s.module.first() else {
            continue; // lib.rs declares the modules
        };
        let Some(mine) = layer_of(top) else { continue };
        let mut seen = BTreeMap::new();
        for (name, line) in imports(s) {
            if name == *top || name == "self" || name == "super" {
                continue;
            }
            let Some(theirs) = layer_of(&name) else {
                continue; // not a module (a macro-exported item, a type at the crate root)
            };
            if theirs <= mine {
                seen.entry(name).or_insert(line);
            }
        }
        for (name, line) in seen {
            let how = if layer_of(&name) == Some(mine) {
                "its own layer"
            } else {
                "a layer above"
            };
            problems.push(format!(
                "src/{}:{line}: `{top}` imports `{name}`, from {how}",
                s.rel
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "imports against the layering (docs/architecture.md, LAYERS in tests/layers.rs):\n{}",
        problems.join("\n")
    );
}

#[test]
fn main_rs_is_thin() {
    let s = sources();
    let main = s.iter().find(|s| s.rel == "main.rs").unwrap();
    assert!(
        main.raw_lines <= 60,
        "src/main.rs has {} lines",
        main.raw_lines
    );
}

#[test]
fn no_source_file_is_over_the_size_limit() {
    let found: BTreeMap<String, String> = sources()
        .iter()
        .filter(|s| !s.is_test && s.raw_lines > MAX_FILE_LINES)
        .map(|s| {
            (
                s.rel.clone(),
                format!("src/{}: {} lines", s.rel, s.raw_lines),
            )
        })
        .collect();
    let problems = against_known(&found, OVERSIZE_FILES, "file");
    assert!(
        problems.is_empty(),
        "source files over {MAX_FILE_LINES} lines (split them by concern):\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_function_is_over_the_length_limit() {
    let mut found = BTreeMap::new();
    for s in sources().iter().filter(|s| !s.is_test) {
        for (name, first, lines) in functions(&s.code) {
            if lines > MAX_FN_LINES {
                let msg = format!("src/{}:{first}: fn {name} has {lines} lines", s.rel);
                found.insert(format!("{}:{name}", s.rel), msg);
            }
        }
    }
    let problems = against_known(&found, OVERLONG_FNS, "function");
    assert!(
        problems.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them into named steps):\n{}",
        problems.join("\n")
    );
}

/// Every function with a body in `code`: (name, first line, lines from `fn` to its `}`).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find("fn ") {
        let at = from + pos;
        from = at + 3;
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let Some(end) = block_end(bytes, at) else {
            continue; // a declaration without a body (a trait's required method)
        };
        let first = code[..at].matches('\n').count() + 1;
        let last = code[..end].matches('\n').count() + 1;
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        out.push((name, first, last - first + 1));
    }
    out
}

/// The variants of `dialect::{name}` (`Api`, `Shape`), read from its definition.
fn dialect_variants(sources: &[Source], name: &str) -> Vec<String> {
    let registry = sources
        .iter()
        .find(|s| s.rel == "dialect/mod.rs")
        .expect("src/dialect/mod.rs defines the dialects");
    let start = registry
        .code
        .find(&format!("pub enum {name} "))
        .unwrap_or_else(|| panic!("`pub enum {name}` in src/dialect/mod.rs"));
    let open = start + registry.code[start..].find('{').unwrap();
    let end = block_end(registry.code.as_bytes(), open).unwrap();
    registry.code[open + 1..end - 1]
        .split(',')
        .map(|v| {
            // Attributes (`#[default]`) stay; the variant is the last word.
            v.split_whitespace().last().unwrap_or("").to_string()
        })
        .filter(|v| v.chars().next().is_some_and(char::is_uppercase))
        .collect()
}

/// Where `word` occurs in `code` as a whole identifier, as 1-based lines.
fn word_lines(code: &str, word: &str) -> Vec<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word)
        .filter(|(at, _)| {
            !code[..*at].chars().next_back().is_some_and(is_ident)
                && !code[at + word.len()..].chars().next().is_some_and(is_ident)
        })
        .map(|(at, _)| code[..at].matches('\n').count() + 1)
        .collect()
}

fn is_home(homes: &[&str], rel: &str) -> bool {
    homes.iter().any(|h| {
        if h.ends_with('/') {
            rel.starts_with(h)
        } else {
            rel == *h
        }
    })
}

/// Where the variants of `dialect::{name}` are named outside `homes` (non-test code).
fn named_outside(all: &[Source], name: &str, homes: &[&str]) -> Vec<String> {
    let variants = dialect_variants(all, name);
    assert!(
        variants.len() >= 3,
        "read the variants of {name}: {variants:?}"
    );
    let mut problems = Vec::new();
    for s in all.iter().filter(|s| !s.is_test && !is_home(homes, &s.rel)) {
        for v in &variants {
            for line in word_lines(&s.code, v) {
                problems.push(format!("src/{}:{line}: names `{name}::{v}`", s.rel));
            }
        }
    }
    problems
}

#[test]
fn api_variants_are_named_only_in_the_dialect_homes() {
    let all = sources();
    let problems = named_outside(&all, "Api", DIALECT_HOMES);
    assert!(
        problems.is_empty(),
        "a dialect is named outside its homes ({DIALECT_HOMES:?}); ask its `Spec` \
         (`api.spec()`) instead (docs/architecture.md, \"How to add an API dialect\"):\n{}",
        problems.join("\n")
    );
    let problems = named_outside(&all, "Shape", SHAPE_HOMES);
    assert!(
        problems.is_empty(),
        "a wire shape is named outside its homes ({SHAPE_HOMES:?}); ask the dialect's `Spec` \
         (`api.spec().shape`, `.input`, …) instead:\n{}",
        problems.join("\n")
    );
}

/// The module paths a file's code names through `crate::…` and `super::…` (groups expanded),
/// absolute (`["check", "diagnose", "Kind"]`); items and modules alike.
fn paths(s: &Source) -> Vec<Vec<String>> {
    let code = &s.code;
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find(['c', 's']) {
        let at = from + pos;
        from = at + 1;
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| is_ident(c) || c == ':')
        {
            continue;
        }
        let rest = &code[at..];
        let (base, rest) = if let Some(r) = rest.strip_prefix("crate::") {
            (Vec::new(), r)
        } else if rest.starts_with("super::") {
            // A file `x.rs` is module [.., x]; `super` is its parent. A `mod.rs` is the module
            // itself, so its `super` is one level higher, the same arithmetic.
            let mut base = s.module.clone();
            let mut r = rest;
            while let Some(next) = r.strip_prefix("super::") {
                base.pop();
                r = next;
            }
            (base, r)
        } else {
            continue;
        };
        expand(&base, rest, &mut out);
    }
    out
}

/// `prefix` followed by the path at the start of `rest` (`a::b::{c, d::e}`): every path it names.
fn expand(prefix: &[String], rest: &str, out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut r = rest;
    loop {
        let name: String = r
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            if let Some(group) = r.strip_prefix('{') {
                let end = block_end(r.as_bytes(), 0).unwrap_or(r.len());
                let inner = &group[..end.saturating_sub(2)];
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            expand(&path, inner[start..i].trim_start(), out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                expand(&path, inner[start..].trim_start(), out);
                return;
            }
            break;
        }
        r = &r[name.len()..];
        if name != "self" {
            path.push(name);
        }
        match r.strip_prefix("::") {
            Some(next) => r = next,
            None => break,
        }
    }
    if path.len() > prefix.len() {
        out.push(path);
    }
}

/// Edges between the parts of one module: for each file, the sibling parts (files or folders
/// next to the file's own part, under a common parent) that it names, keyed by that parent.
fn sibling_edges(sources: &[Source]) -> BTreeMap<Vec<String>, BTreeSet<(String, String)>> {
    let modules: BTreeSet<Vec<String>> = sources
        .iter()
        .flat_map(|s| (1..=s.module.len()).map(|n| s.module[..n].to_vec()))
        .collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for s in sources.iter().filter(|s| !s.is_test) {
        for p in paths(s) {
            let k = s.module.iter().zip(&p).take_while(|(a, b)| a == b).count();
            if k >= s.module.len() || k >= p.len() || !modules.contains(&p[..=k]) {
                continue;
            }
            edges
                .entry(p[..k].to_vec())
                .or_default()
                .insert((s.module[k].clone(), p[k].clone()));
        }
    }
    edges
}

/// The loops among `edges` (one per strongly connected group of parts), as `a -> b -> a`.
fn loops(edges: &BTreeSet<(String, String)>) -> Vec<String> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for (a, b) in edges {
                if *a == n && seen.insert(b.clone()) {
                    todo.push(b.clone());
                }
            }
        }
        seen
    };
    let nodes: BTreeSet<String> = edges.iter().map(|(a, _)| a.clone()).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for n in &nodes {
        if done.contains(n) {
            continue;
        }
        let from_n = reach(n);
        if !from_n.contains(n) {
            continue;
        }
        let group: Vec<String> = nodes
            .iter()
            .filter(|m| from_n.contains(*m) && reach(m).contains(n))
            .cloned()
            .collect();
        done.extend(group.iter().cloned());
        found.push(format!("{} -> {n}", group.join(" -> ")));
    }
    found
}

#[test]
fn no_loop_between_the_files_of_a_module() {
    let mut found = BTreeMap::new();
    for (parent, edges) in sibling_edges(&sources()) {
        let module = if parent.is_empty() {
            "crate".to_string()
        } else {
            parent.join("::")
        };
        for l in loops(&edges) {
            let key = format!("{module}: {l}");
            found.insert(
                key.clone(),
                format!(
                    "src/{}: a loop between its files: {l}",
                    module.replace("::", "/")
                ),
            );
        }
    }
    let problems = against_known(&found, KNOWN_LOOPS, "loop");
    assert!(
        problems.is_empty(),
        "give the types both sides need their own file (docs/architecture.md):\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_module_re_exports_another_modules_items() {
    let mut found = BTreeMap::new();
    for s in sources().iter().filter(|s| !s.is_test) {
        let Some(top) = s.module.first() else {
            continue;
        };
        for (i, line) in s.code.lines().enumerate() {
            let l = line.trim_start();
            let Some(rest) = ["pub use crate::", "pub(crate) use crate::"]
                .iter()
                .find_map(|p| l.strip_prefix(p))
            else {
                continue;
            };
            let theirs: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if theirs != *top && layer_of(&theirs).is_some() {
                let key = format!("{}: pub use crate::{theirs}", s.rel);
                found.insert(
                    key,
                    format!("src/{}:{}: re-exports `{theirs}`'s items", s.rel, i + 1),
                );
            }
        }
    }
    let problems = against_known(&found, KNOWN_REEXPORTS, "re-export");
    assert!(
        problems.is_empty(),
        "import each item from its home instead (docs/architecture.md):\n{}",
        problems.join("\n")
    );
}

/// The module of `run`'s wing.
const RUN_WING: [&str; 2] = ["app", "run"];

/// Files outside `app/run/` that name something inside it, as `src/file: path`.
fn into_the_run_wing(sources: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for s in sources.iter().filter(|s| !s.is_test) {
        if s.module.starts_with(&RUN_WING.map(String::from)) {
            continue;
        }
        for p in paths(s) {
            // `app::run` alone is also the name of `app`'s entry function: only a path into the
            // module counts.
            if p.len() > RUN_WING.len() && p.starts_with(&RUN_WING.map(String::from)) {
                found.push(format!("src/{}: {}", s.rel, p.join("::")));
            }
        }
    }
    found
}

#[test]
fn only_the_run_wing_names_what_is_in_app_run() {
    let found = into_the_run_wing(&sources());
    assert!(
        found.is_empty(),
        "what only `run` uses lives in app/run/, and nothing outside it reaches in: move the \
         file there, or move the shared type out (docs/architecture.md):\n{}",
        found.join("\n")
    );
}

/// The checks above must be able to fail: a violation in a made-up file is found.
#[test]
fn the_checks_find_a_planted_violation() {
    let code = blank(
        "//! a\nuse crate::app::run; // crate::render in a comment\nfn f() { let s = \"crate::cli\"; \
         crate::{store, render::html}::x(); super::super::check::y(); }\n#[cfg(test)]\nmod tests { \
         use crate::app; }\n",
    );
    let (tests, code) = cut_tests(&code);
    assert!(tests.is_empty());
    let s = Source {
        rel: "stats/x.rs".into(),
        module: vec!["stats".into(), "x".into()],
        is_test: false,
        raw_lines: 5,
        code,
    };
    let names: Vec<String> = imports(&s).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["app", "store", "render", "check"]);
    let (files, _) = cut_tests("#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod calibrate;\n");
    assert_eq!(files, ["tests", "calibrate"]);
    let long = format!(
        "fn long() {{\n{}}}\nfn short() {{ }}\n",
        "    x();\n".repeat(120)
    );
    let fns = functions(&blank(&long));
    assert_eq!(
        fns,
        [("long".to_string(), 1, 122), ("short".to_string(), 123, 1)]
    );
    let found = BTreeMap::from([("a.rs".to_string(), "src/a.rs: 800 lines".to_string())]);
    assert_eq!(against_known(&found, &["a.rs"], "file").len(), 0);
    assert_eq!(against_known(&found, &[], "file").len(), 1);
    assert_eq!(against_known(&BTreeMap::new(), &["a.rs"], "file").len(), 1);
    let named = blank("let a = Api::OpenAiChat; // OpenAiCompletions\nlet b = OpenAiChatX;\n");
    assert_eq!(word_lines(&named, "OpenAiChat"), [1]);
    assert_eq!(word_lines(&named, "OpenAiCompletions"), Vec::<usize>::new());
    assert!(
        is_home(DIALECT_HOMES, "dialect/openai.rs")
            && !is_home(DIALECT_HOMES, "client/http/mod.rs")
    );
    assert!(is_home(SHAPE_HOMES, "sim/wire.rs") && !is_home(SHAPE_HOMES, "sim/wire/tests.rs"));
    let file = |rel: &str, module: &[&str], text: &str| Source {
        rel: rel.into(),
        module: module.iter().map(|m| m.to_string()).collect(),
        is_test: false,
        raw_lines: 1,
        code: blank(text),
    };
    let planted = [
        file("m/a.rs", &["m", "a"], "use super::{b::X, c};\n"),
        file("m/b/mod.rs", &["m", "b"], "fn f() { crate::m::a::y(); }\n"),
        file("m/c.rs", &["m", "c"], "use super::super::m::b::Z;\n"),
        file("m/d.rs", &["m", "d"], "use crate::m::a::Q;\n"),
    ];
    let edges = &sibling_edges(&planted)[&vec!["m".to_string()]];
    assert_eq!(loops(edges), ["a -> b -> c -> a"]);
    let wing = [
        file(
            "app/diff.rs",
            &["app", "diff"],
            "use crate::app::run::recorder::R;\n",
        ),
        file(
            "app/run/gate.rs",
            &["app", "run", "gate"],
            "use super::recorder::R;\n",
        ),
        file(
            "app/mod.rs",
            &["app"],
            "pub fn run() {}\nfn f() { crate::app::run(); }\n",
        ),
    ];
    assert_eq!(
        into_the_run_wing(&wing),
        ["src/app/diff.rs: app::run::recorder::R"]
    );
}

/// The one home of writing to stdout (docs/architecture.md): a closed pipe ends the output
/// there, quietly, for every command.
const STDOUT_HOME: &str = "app/pipe.rs";

#[test]
fn only_app_pipe_writes_to_stdout() {
    let mut problems = Vec::new();
    for s in sources()
        .iter()
        .filter(|s| !s.is_test && s.rel != STDOUT_HOME)
    {
        for word in ["println!", "print!", "io::stdout"] {
            for line in word_lines(&s.code, word) {
                problems.push(format!("src/{}:{line}: `{word}`", s.rel));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "stdout is written only through `app::pipe` (`out!`, `outln!`, `pipe::stdout()`): \
         `println!` panics on a closed pipe (`ladder … | head -1`):\n{}",
        problems.join("\n")
    );
}

/// The runner's files that only pace and send (docs/architecture.md, "a workload"): what a step
/// sends is its workload's (`runner/workload/`), so these name no kind of workload.
const LOOPS: &[&str] = &[
    "runner/mod.rs",
    "runner/closed_loop.rs",
    "runner/open_loop.rs",
];

/// The kinds of workload, as parts of identifiers (`AgentTask`, `session_turns`, `trace`).
const WORKLOAD_KINDS: &[&str] = &["agent", "trace", "session", "batch"];

#[test]
fn the_runner_s_loops_name_no_workload_kind() {
    let sources = sources();
    let mut problems = Vec::new();
    for s in sources.iter().filter(|s| LOOPS.contains(&s.rel.as_str())) {
        for (n, line) in s.code.lines().enumerate() {
            let lower = line.to_lowercase();
            for kind in WORKLOAD_KINDS.iter().filter(|k| lower.contains(**k)) {
                problems.push(format!("src/{}:{}: names `{kind}`", s.rel, n + 1));
            }
        }
    }
    assert_eq!(
        sources
            .iter()
            .filter(|s| LOOPS.contains(&s.rel.as_str()))
            .count(),
        LOOPS.len(),
        "the loops moved: update LOOPS"
    );
    assert!(
        problems.is_empty(),
        "the loops only pace and send: what a step sends belongs to its workload \
         (`runner::workload`, one file per kind):\n{}",
        problems.join("\n")
    );
}
