//! Shared by the bench binaries: each one rewrites only its own marked section of
//! `benches/RESULTS.md`, so the hand-written notes around the sections (history, before/after
//! figures) survive every `make bench`.

use std::path::{Path, PathBuf};

/// `benches/RESULTS.md` of this crate.
pub fn results_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/RESULTS.md")
}

/// Replaces the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` (or appends a
/// marked section at the end).
pub fn replace_section(doc: &str, name: &str, section: &str) -> String {
    let (begin, end) = (
        format!("<!-- {name}:begin -->"),
        format!("<!-- {name}:end -->"),
    );
    let body = format!("{begin}\n{}\n{end}", section.trim_end());
    match (doc.find(&begin), doc.find(&end)) {
        (Some(b), Some(e)) if b < e => {
            format!("{}{}{}", &doc[..b], body, &doc[e + end.len()..])
        }
        _ => format!("{}\n\n{body}\n", doc.trim_end()),
    }
}

/// Rewrites section `name` of `benches/RESULTS.md`.
pub fn write_section(name: &str, section: &str) -> Result<PathBuf, String> {
    let path = results_path();
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Benchmark results\n".into());
    std::fs::write(&path, replace_section(&doc, name, section))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Checks run by each bench's self-check (harness = false binaries have no #[test]).
pub fn self_check() {
    let doc = "# R\n\nkeep\n<!-- x:begin -->\nold\n<!-- x:end -->\ntail\n";
    assert_eq!(
        replace_section(doc, "x", "new\n"),
        "# R\n\nkeep\n<!-- x:begin -->\nnew\n<!-- x:end -->\ntail\n"
    );
    assert_eq!(
        replace_section(doc, "y", "other"),
        format!(
            "{}\n\n<!-- y:begin -->\nother\n<!-- y:end -->\n",
            doc.trim_end()
        )
    );
}
