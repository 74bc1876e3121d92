//! What the end-to-end tests share: a temp project with a scenario and prompt files, helpers to
//! run `ladder` and read what it wrote, an external `ladder sim`; `session` (a user's commands
//! and insta snapshots of their output) and `process` (a running `ladder`: its stderr lines,
//! waiting for what it prints or writes).

#![allow(dead_code)]

pub mod process;
pub mod session;
pub mod skip;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("scenarios/prompts")).unwrap();
        std::fs::write(
            dir.path().join("scenarios/prompts/p.txt"),
            "Say hello to the load tester in a few words.\n",
        )
        .unwrap();
        Project { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `scenarios/<name>.yaml` and returns its path.
    pub fn scenario(&self, name: &str, yaml: &str) -> PathBuf {
        let p = self
            .dir
            .path()
            .join("scenarios")
            .join(format!("{name}.yaml"));
        std::fs::write(&p, yaml).unwrap();
        p
    }

    pub fn ladder(&self) -> Command {
        let mut c = Command::cargo_bin("ladder").unwrap();
        c.current_dir(self.dir.path());
        c.env_remove("NO_COLOR");
        c.timeout(std::time::Duration::from_secs(120));
        c
    }

    /// The only run directory under `runs/<scenario>/` (panics if not exactly one).
    pub fn run_dirs(&self, scenario: &str) -> Vec<PathBuf> {
        let base = self.dir.path().join("runs").join(scenario);
        let mut dirs: Vec<PathBuf> = match std::fs::read_dir(&base) {
            Ok(rd) => rd.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        };
        dirs.sort();
        dirs
    }

    /// Every file under the project, recursively (for leak checks).
    pub fn all_files(&self) -> Vec<PathBuf> {
        files_under(self.dir.path())
    }
}

/// Every file under `root`, recursively.
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The one entry of `base` (a folder that must hold exactly one: a scenario's run folder).
pub fn only_dir(base: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// Reads a CSV file into header + rows of strings.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rdr =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = rdr.headers().unwrap().iter().map(String::from).collect();
    let rows = rdr
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (headers, rows)
}

pub fn col(headers: &[String], name: &str) -> usize {
    headers
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {headers:?}"))
}

pub fn num(row: &[String], headers: &[String], name: &str) -> f64 {
    let v = &row[col(headers, name)];
    v.parse()
        .unwrap_or_else(|_| panic!("column {name} is not a number: `{v}`"))
}

/// A scenario against the simulator; `sim` and `load` are YAML mapping bodies (indented 4).
pub fn sim_scenario(name: &str, sim: &str, load: &str, max_tokens: u32) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  sim:\n{sim}\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: {max_tokens}\nload:\n{load}\n"
    )
}

/// A scenario against a server at `base_url` (an external `ladder sim`); `load` as above.
pub fn url_scenario(name: &str, base_url: &str, load: &str, max_tokens: u32) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  base_url: {base_url}\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: {max_tokens}\nload:\n{load}\n"
    )
}

/// A `ladder sim` child on a free port, killed when dropped.
pub struct Sim {
    child: std::process::Child,
    pub base_url: String,
}

impl Sim {
    /// `127.0.0.1:PORT`, for the simulator's own endpoints (`/sim/truth`, `/sim/stats`).
    pub fn addr(&self) -> &str {
        self.base_url
            .strip_prefix("http://")
            .and_then(|r| r.strip_suffix("/v1"))
            .unwrap_or_else(|| panic!("unexpected base URL `{}`", self.base_url))
    }

    /// `GET /sim/truth`: one entry per request the simulator answered.
    pub fn truth(&self) -> serde_json::Value {
        process::get_json(self.addr(), "/sim/truth")
    }

    /// `GET /sim/stats`: the simulator's counters (faults injected, requests served).
    pub fn stats(&self) -> serde_json::Value {
        process::get_json(self.addr(), "/sim/stats")
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ladder sim --port 0` with `--set` for each of `sets`; its first stdout line is the base URL.
pub fn start_sim(sets: &[&str]) -> Sim {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ladder"));
    cmd.args(["sim", "--port", "0", "--bind", "127.0.0.1"]);
    for set in sets {
        cmd.args(["--set", set]);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ladder sim");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    Sim {
        child,
        base_url: first.trim().to_string(),
    }
}
