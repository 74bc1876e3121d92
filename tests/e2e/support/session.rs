//! A user's session, one command per statement, and the filters that make its output
//! snapshot-stable:
//!
//! ```ignore
//! let s = Session::new(); // a temp project with scenarios/prompts/p.txt
//! s.scenario("bad", "...");
//! let done = s.args(["validate", "scenarios/bad.yaml"]).code(2).stderr("bad.yaml:9").run();
//! snapshot_settings(Figures::Keep).bind(|| insta::assert_snapshot!("name", done.stderr_filtered()));
//! ```
//!
//! `run()` checks the exit code (0 unless `code(..)` says otherwise) and every expectation,
//! printing the command, its whole stdout and stderr when one fails. `*_filtered()` give the
//! output with the session's directory replaced by `[TMP]` (`[REPO]` for `Session::in_repo`);
//! `snapshot_settings` adds insta filters for times, run ids, hashes and the version, and with
//! `Figures::Hide` every number, for tables whose shape, not values, is the point. How to update
//! snapshots: docs/development.md ("Tests").

use super::Project;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

enum Home {
    Project(Project),
    /// The repository itself, for commands that only read (`diff` of a committed baseline).
    Repo,
}

/// A project (or the repository) in which a user types `ladder` commands.
pub struct Session {
    home: Home,
}

enum Want {
    Has(String),
    Lacks(String),
    Empty,
}

/// One `ladder` command of a session, and what it must do.
pub struct Cmd<'s> {
    session: &'s Session,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    code: i32,
    stdout: Vec<Want>,
    stderr: Vec<Want>,
}

/// What a command did.
pub struct Done {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
    root: PathBuf,
    placeholder: &'static str,
}

impl Session {
    /// A fresh project (`Project::new()`: `scenarios/prompts/p.txt`).
    pub fn new() -> Self {
        Session::with(Project::new())
    }

    /// A session in an existing project (its files stay).
    pub fn with(project: Project) -> Self {
        Session {
            home: Home::Project(project),
        }
    }

    /// Commands run in the repository's root: only for commands that write nothing.
    pub fn in_repo() -> Self {
        Session { home: Home::Repo }
    }

    pub fn project(&self) -> &Project {
        match &self.home {
            Home::Project(p) => p,
            Home::Repo => panic!("a session in the repository has no project"),
        }
    }

    pub fn path(&self) -> &Path {
        match &self.home {
            Home::Project(p) => p.path(),
            Home::Repo => Path::new(env!("CARGO_MANIFEST_DIR")),
        }
    }

    /// Writes `scenarios/<name>.yaml` in the project and returns its path.
    pub fn scenario(&self, name: &str, yaml: &str) -> PathBuf {
        self.project().scenario(name, yaml)
    }

    /// The next command: `ladder ARGS`.
    pub fn args<I, S>(&self, args: I) -> Cmd<'_>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Cmd {
            session: self,
            args: Vec::new(),
            env: Vec::new(),
            code: 0,
            stdout: Vec::new(),
            stderr: Vec::new(),
        }
        .args(args)
    }
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Cmd<'_> {
    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        self.env.push((k.into(), Some(v.into())));
        self
    }

    pub fn env_remove(mut self, k: impl Into<OsString>) -> Self {
        self.env.push((k.into(), None));
        self
    }

    /// The exit code the command must end with (default 0).
    pub fn code(mut self, code: i32) -> Self {
        self.code = code;
        self
    }

    /// stdout must contain `s`.
    pub fn stdout(mut self, s: &str) -> Self {
        self.stdout.push(Want::Has(s.to_string()));
        self
    }

    /// stderr must contain `s`.
    pub fn stderr(mut self, s: &str) -> Self {
        self.stderr.push(Want::Has(s.to_string()));
        self
    }

    pub fn stdout_lacks(mut self, s: &str) -> Self {
        self.stdout.push(Want::Lacks(s.to_string()));
        self
    }

    pub fn stderr_lacks(mut self, s: &str) -> Self {
        self.stderr.push(Want::Lacks(s.to_string()));
        self
    }

    pub fn stdout_is_empty(mut self) -> Self {
        self.stdout.push(Want::Empty);
        self
    }

    pub fn stderr_is_empty(mut self) -> Self {
        self.stderr.push(Want::Empty);
        self
    }

    /// Runs the command (no colour, help 100 columns wide, no CI step summary) and checks the code and expectations.
    pub fn run(self) -> Done {
        let mut cmd = assert_cmd::Command::cargo_bin("ladder").unwrap();
        cmd.current_dir(self.session.path())
            .args(&self.args)
            .env("NO_COLOR", "1")
            // Help wraps at the terminal's width, or COLUMNS without one: the same everywhere.
            .env("COLUMNS", "100")
            .env_remove("GITHUB_STEP_SUMMARY")
            .timeout(Duration::from_secs(180));
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = cmd.output().expect("run ladder");
        let (root, placeholder) = match self.session.home {
            Home::Project(_) => (self.session.path().to_path_buf(), "[TMP]"),
            Home::Repo => (self.session.path().to_path_buf(), "[REPO]"),
        };
        let done = Done {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
            root,
            placeholder,
        };
        let shown = || {
            let args: Vec<String> = self
                .args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            format!(
                "`ladder {}` exited {:?}\n--- stdout\n{}--- stderr\n{}",
                args.join(" "),
                done.code,
                done.stdout,
                done.stderr
            )
        };
        assert_eq!(
            done.code,
            Some(self.code),
            "want exit {}: {}",
            self.code,
            shown()
        );
        for (name, text, wants) in [
            ("stdout", &done.stdout, &self.stdout),
            ("stderr", &done.stderr, &self.stderr),
        ] {
            for w in wants {
                match w {
                    Want::Has(s) => assert!(text.contains(s), "{name} lacks `{s}`: {}", shown()),
                    Want::Lacks(s) => assert!(!text.contains(s), "{name} has `{s}`: {}", shown()),
                    Want::Empty => assert!(text.is_empty(), "{name} is not empty: {}", shown()),
                }
            }
        }
        done
    }
}

impl Done {
    /// stdout with the session's directory replaced (see the module's doc).
    pub fn stdout_filtered(&self) -> String {
        replace_root(&self.stdout, &self.root, self.placeholder)
    }

    /// stderr with the session's directory replaced.
    pub fn stderr_filtered(&self) -> String {
        replace_root(&self.stderr, &self.root, self.placeholder)
    }
}

/// Replaces `root` (canonical and as given) by `placeholder`; the regex filters are insta's
/// (`snapshot_settings`).
fn replace_root(text: &str, root: &Path, placeholder: &str) -> String {
    let mut out = text.to_string();
    if let Ok(c) = root.canonicalize() {
        out = out.replace(&c.display().to_string(), placeholder);
    }
    out.replace(&root.display().to_string(), placeholder)
}

/// Whether a snapshot keeps the figures of the output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Figures {
    /// Deterministic output (help, validation errors, a diff of committed files).
    Keep,
    /// A live run's figures: every number becomes `[N]`, and the padding that followed its width
    /// collapses, so the snapshot holds the table's columns, rows and wording.
    Hide,
}

/// insta settings for the snapshots in `tests/e2e/snapshots/`: filters for what changes from
/// run to run and machine to machine (times, run ids, hashes, the version).
pub fn snapshot_settings(figures: Figures) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    // Run directories and RFC 3339 times: 2026-11-30T13-08-39Z, 2026-11-30T13:08:39.123Z, and
    // 2026-11-30T13-08-39Z-2 for the second run started within the same second.
    s.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(\.\d+)?(Z(-\d+)?|[+-]\d{2}:?\d{2})",
        "[TIME]",
    );
    // Fingerprints (16 hex digits) and git hashes; UUIDs (request ids).
    s.add_filter(
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
        "[UUID]",
    );
    s.add_filter(r"\b[0-9a-f]{16,40}\b", "[HASH]");
    // The version, which every release changes.
    s.add_filter(&env!("CARGO_PKG_VERSION").replace('.', r"\."), "[VERSION]");
    if figures == Figures::Hide {
        // A number on its own, not the digits of a name (P90, E2E).
        s.add_filter(r"[+-]?\b\d[\d,]*(\.\d+)?\b", "[N]");
        s.add_filter(r"─+", "─");
        s.add_filter(r"-{3,}", "---");
        s.add_filter(r" {2,}", " ");
    }
    s
}
