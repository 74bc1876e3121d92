//! Issue 37: the project's home URL is written once, as Cargo.toml's `repository`. The files
//! that must spell it out (install recipes, the Dockerfile's download, the action's `uses:`) are
//! checked against it here, and `make home URL=…` moves them all; the wheel's metadata takes the
//! URL and the version from Cargo.toml too (pyproject.toml declares them dynamic).

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn home(root: &Path) -> String {
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    cargo
        .lines()
        .find_map(|l| l.strip_prefix("repository = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("Cargo.toml has a repository")
        .to_string()
}

/// The files that spell the home out (as `make home` lists them).
fn files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = ["README.md", "Dockerfile", "action.yml"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
    out
}

/// Every mention of a GitHub repository named `ladder` (`github.com/OWNER/ladder…` or
/// `OWNER/ladder@`) that is not `slug`, as `file: text`.
fn strays(root: &Path, slug: &str) -> Vec<String> {
    let mut found = Vec::new();
    for path in files(root) {
        let text = std::fs::read_to_string(&path).unwrap();
        for word in text.split(|c: char| c.is_whitespace() || "()[]<>`'\"".contains(c)) {
            let named = word
                .split_once("github.com/")
                .map(|(_, rest)| rest.splitn(3, '/').take(2).collect::<Vec<_>>().join("/"))
                .or_else(|| word.split_once('@').map(|(s, _)| s.to_string()));
            if let Some(named) = named {
                if named.ends_with("/ladder") && named != slug {
                    found.push(format!("{}: {word}", path.display()));
                }
            }
        }
    }
    found
}

#[test]
fn every_file_names_the_home_cargo_toml_declares() {
    let home = home(repo());
    let slug = home.strip_prefix("https://github.com/").unwrap();
    assert_eq!(strays(repo(), slug), Vec::<String>::new(), "home is {home}");
    // The README's install section links it.
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains(&format!("[home]: {home}\n")));
    // The wheel's version and URLs come from Cargo.toml, not a second copy.
    let py = std::fs::read_to_string(repo().join("pyproject.toml")).unwrap();
    assert!(py.contains(r#"dynamic = ["version", "description", "license", "urls"]"#));
    assert!(!py.contains("github.com") && !py.lines().any(|l| l.starts_with("version")));
}

#[test]
fn make_home_moves_every_mention() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("docs")).unwrap();
    for f in ["Makefile", "Cargo.toml"] {
        std::fs::copy(repo().join(f), root.join(f)).unwrap();
    }
    for f in files(repo()) {
        let rel = f.strip_prefix(repo()).unwrap();
        std::fs::copy(&f, root.join(rel)).unwrap();
    }
    let Ok(out) = Command::new("make")
        .args(["-s", "-C"])
        .arg(root)
        .args(["home", "URL=https://github.com/acme/ladder"])
        .output()
    else {
        eprintln!("skipped: no `make` on this machine");
        return;
    };
    assert!(out.status.success(), "{out:?}");
    assert_eq!(home(root), "https://github.com/acme/ladder");
    assert_eq!(strays(root, "acme/ladder"), Vec::<String>::new());
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("uses: acme/ladder@v"), "{readme}");
    // A URL that is not a GitHub repository is refused.
    let bad = Command::new("make")
        .args(["-s", "-C"])
        .arg(root)
        .args(["home", "URL=acme"])
        .output()
        .unwrap();
    assert!(!bad.status.success(), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("usage: make home URL="));
    assert_eq!(home(root), "https://github.com/acme/ladder");
}
