//! The README's GitHub Actions recipe is product (issue 10, "Done when"): copied as is, it must
//! work. This reads the block the README marks with `ci-recipe`, parses it as YAML, and checks
//! what can be checked without GitHub: the `cargo install` source is this repository's package,
//! every `ladder` command parses with ladder's own argument definitions (after the workflow's
//! `env:` is substituted) and names files that exist, the gate step has no `continue-on-error`
//! and writes the JUnit document to a file, and the artifacts are kept even when the gate fails.
//! `make compat` also runs actionlint on the same block (compat/actionlint.sh).

use clap::Parser;
use serde_yaml::Value;
use std::collections::BTreeMap;
use std::path::Path;

const MARK: &str = "<!-- ci-recipe";

/// The YAML of the README's CI recipe.
pub(crate) fn recipe(readme: &str) -> String {
    let at = readme.find(MARK).expect("README has a ci-recipe block");
    let rest = &readme[at..];
    let open = rest
        .find("```yaml\n")
        .expect("a ```yaml fence after the mark")
        + 8;
    let body = &rest[open..];
    let close = body.find("\n```").expect("a closing fence");
    body[..close + 1].to_string()
}

/// Splits a shell command line into words: whitespace outside quotes, `"…"` and `'…'` kept
/// whole, `$VAR` / `${VAR}` replaced from `env` (unquoted values split into words), and stops
/// at a redirection.
fn words(line: &str, env: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let push = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(std::mem::take(cur));
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => break,
            (None, c) if c.is_whitespace() => push(&mut cur, &mut out),
            (q, '$') if q != Some('\'') => {
                let braced = chars.peek() == Some(&'{');
                if braced {
                    chars.next();
                }
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if braced {
                    assert_eq!(chars.next(), Some('}'), "unterminated ${{{name}");
                }
                let value = env
                    .get(&name)
                    .unwrap_or_else(|| panic!("${name} is not in the workflow's env"));
                if q.is_some() {
                    cur.push_str(value);
                } else {
                    for (i, w) in value.split_whitespace().enumerate() {
                        if i > 0 {
                            push(&mut cur, &mut out);
                        }
                        cur.push_str(w);
                    }
                }
            }
            (_, c) => cur.push(c),
        }
    }
    assert!(quote.is_none(), "unterminated quote in `{line}`");
    push(&mut cur, &mut out);
    out
}

fn str_map(v: &Value) -> BTreeMap<String, String> {
    v.as_mapping()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
        .collect()
}

#[test]
fn the_readme_ci_recipe_runs_real_commands_on_real_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let yaml = recipe(&readme);
    let doc: Value = serde_yaml::from_str(&yaml).expect("the recipe is YAML");
    let env = str_map(&doc["env"]);
    assert!(
        env.contains_key("LADDER_SOURCE"),
        "one clearly named install source at the top: {env:?}"
    );
    let on = &doc["on"];
    assert!(
        on.get("pull_request").is_some(),
        "runs on pull requests: {on:?}"
    );
    let jobs = doc["jobs"].as_mapping().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let job = jobs.values().next().unwrap();
    assert!(job["runs-on"].as_str().is_some());
    let steps = job["steps"].as_sequence().expect("steps");

    let mut installs = 0;
    let mut gates = 0;
    let mut uploads_always = false;
    for step in steps {
        if step["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        {
            uploads_always = step["if"].as_str() == Some("always()");
            continue;
        }
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        let mut step_env = env.clone();
        step_env.extend(str_map(&step["env"]));
        // Secrets are GitHub's to fill in.
        for line in script.replace("\\\n", " ").lines() {
            let w = words(line, &step_env);
            match w.first().map(String::as_str) {
                Some("cargo") => {
                    installs += 1;
                    assert_eq!(&w[..3], ["cargo", "install", "--locked"], "{line}");
                    // The default source is this repository: its root holds the package.
                    assert_eq!(&w[3..], ["--path", "."], "{line}");
                    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
                    assert!(manifest.contains("name = \"ladder\""), "{manifest}");
                }
                Some("ladder") => {
                    gates += 1;
                    assert!(
                        step["continue-on-error"].is_null(),
                        "the gate step must fail the job"
                    );
                    assert!(line.contains("> "), "the document goes to a file: {line}");
                    let cli = ladder::cli::Cli::try_parse_from(&w)
                        .unwrap_or_else(|e| panic!("`{}` does not parse: {e}", w.join(" ")));
                    let shown = format!("{cli:?}");
                    assert!(shown.contains("Run("), "{shown}");
                    for file in w
                        .iter()
                        .filter(|a| a.ends_with(".yaml") || a.ends_with(".csv"))
                    {
                        assert!(root.join(file).is_file(), "{file} does not exist");
                    }
                }
                Some(other) => panic!("unexpected command `{other}` in the recipe"),
                None => {}
            }
        }
    }
    assert_eq!((installs, gates), (1, 1), "one install, one gate");
    assert!(uploads_always, "artifacts kept with if: always()");
    // The prose promises the job summary.
    let after = &readme[readme.find(MARK).unwrap()..];
    assert!(after.contains("GITHUB_STEP_SUMMARY"));
}

#[test]
fn words_split_like_a_shell() {
    let env: BTreeMap<String, String> = [("A", "--path ."), ("B", "x y")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        words("cargo install $A", &env),
        ["cargo", "install", "--path", "."]
    );
    assert_eq!(
        words("run \"$B\" '$B' > out.xml", &env),
        ["run", "x y", "$B"]
    );
    assert_eq!(words("run ${B}", &env), ["run", "x", "y"]);
}
