//! Bounded input: the files a scenario names are read only when they are regular files under a
//! size cap (`/dev/zero` would grow until memory runs out; a FIFO without a writer blocks in
//! open(2)), and scenario text is checked for size and flow nesting depth before the YAML
//! parser sees it (libyaml's scanner is quadratic in depth: 100,000 levels take over a minute).

use std::io::Read;
use std::path::Path;

/// Largest scenario file.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;
/// Deepest `[`/`{` nesting in scenario text.
pub const MAX_DEPTH: usize = 64;
/// Default cap on a prompt, system or prompt-set file, in MiB; `LADDER_MAX_PROMPT_MB` raises it.
pub const DEFAULT_PROMPT_MB: u64 = 64;
/// The environment variable that raises the prompt-file cap.
pub const PROMPT_CAP_VAR: &str = "LADDER_MAX_PROMPT_MB";

/// The prompt-file cap in bytes, from `LADDER_MAX_PROMPT_MB` when set to a whole number.
pub fn prompt_cap(env: &dyn Fn(&str) -> Option<String>) -> u64 {
    env(PROMPT_CAP_VAR)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&mb| mb > 0)
        .unwrap_or(DEFAULT_PROMPT_MB)
        .saturating_mul(1 << 20)
}

/// Reads `path` when it is a regular file of at most `cap` bytes; the error says why not, in
/// words that follow the file's name, and how to fix it (`raise` names the way to a larger cap).
pub fn read_capped(path: &Path, cap: u64, raise: &str) -> Result<Vec<u8>, String> {
    // stat(2), not open(2): opening a FIFO without a writer would block.
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it ({e})"))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(format!("is {what}; name a regular file"));
    }
    if meta.len() > cap {
        return Err(too_big(meta.len(), cap, raise));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it ({e})"))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64, cap, raise));
    }
    Ok(bytes)
}

fn too_big(len: u64, cap: u64, raise: &str) -> String {
    format!(
        "is {} MiB, over the {} MiB cap; {raise}",
        len.div_ceil(1 << 20),
        cap >> 20
    )
}

/// UTF-8 text of `bytes`, or the line where it stops being UTF-8.
pub fn utf8(bytes: Vec<u8>) -> Result<String, (usize, String)> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        (
            line,
            "is not UTF-8 text here; save the file as UTF-8".to_string(),
        )
    })
}

/// The line where `[`/`{` nesting first goes deeper than [`MAX_DEPTH`], outside quotes and
/// comments.
pub fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, line) in text.lines().enumerate() {
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') if prev.is_whitespace() => break,
                (None, '[' | '{') => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Some(i + 1);
                    }
                }
                (None, ']' | '}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            prev = c;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_found_before_parsing() {
        let deep = format!(
            "extra_body: {}{}\n",
            "{a: ".repeat(100_000),
            "}".repeat(100_000)
        );
        let t = std::time::Instant::now();
        assert_eq!(too_deep(&format!("name: x\n{deep}")), Some(2));
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
        let ok = format!(
            "a: {}1{}\n# {{{{{{ \nb: \"[[[[\"",
            "[".repeat(64),
            "]".repeat(64)
        );
        assert_eq!(too_deep(&ok), None);
    }

    #[test]
    fn only_regular_files_under_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.txt");
        std::fs::write(&f, vec![b'a'; 3 << 20]).unwrap();
        let err = read_capped(&f, 2 << 20, "raise it").unwrap_err();
        assert_eq!(err, "is 3 MiB, over the 2 MiB cap; raise it");
        assert_eq!(read_capped(&f, 4 << 20, "").unwrap().len(), 3 << 20);
        assert!(read_capped(dir.path(), 1 << 20, "")
            .unwrap_err()
            .contains("directory"));
        #[cfg(unix)]
        {
            let err = read_capped(Path::new("/dev/zero"), 1 << 20, "").unwrap_err();
            assert!(err.contains("not a regular file"), "{err}");
        }
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        assert_eq!(utf8(b"a\nb\n\xff\n".to_vec()).unwrap_err().0, 3);
        let env = |k: &str| (k == PROMPT_CAP_VAR).then(|| "200".to_string());
        assert_eq!(prompt_cap(&env), 200 << 20);
        assert_eq!(prompt_cap(&|_| None), DEFAULT_PROMPT_MB << 20);
    }
}
