//! Every shell recipe in README.md and docs/*.md must work when copied as is (issue 22). This
//! reads each ```sh block, splits it into commands like a shell would (quotes, `$(…)`,
//! continuation lines, `&&`/`||`/`|`/`;`, redirections, comments), and:
//!
//! - parses every `ladder` command with ladder's own argument definitions (`ladder::cli::Cli`),
//!   so a renamed flag or a `[--optional]` bracket copied from a synopsis fails here;
//! - checks that every file of this repository a command names (`scenarios/…`, `baselines/…`,
//!   `deploy/…`) exists;
//! - runs, with bash, in a scratch copy of `scenarios/` and `baselines/` (a git repository, for
//!   `report --trend`), every line that needs only the embedded simulator: its programs are
//!   `ladder` and a few shell tools, and every scenario it runs targets `target.sim`. A line
//!   must exit 0, or the code its comment names (`# … exit 3 …`). `HOME` is a scratch folder
//!   too, so completion recipes run as on a fresh account.
//!
//! A block fenced as ```` ```sh no-run ```` is parsed but not run (the sharding recipe, whose
//! shards wait for a start time). A fenced ```yaml block that is a whole scenario (`name:` and
//! `target:`) is validated with `ladder validate` beside a copy of `scenarios/prompts/`.
//! Blocks whose recipes run need runs to read: the scratch copy starts with two quick runs of
//! the demo in `runs/demo/` (the simulator sped up with `--sim-set`).
//!
//! The runnable blocks are dealt into [`SHARDS`] tests (`the_recipes_that_need_only_the_simulator_run_<k>`),
//! so that libtest runs them side by side with the other end-to-end tests instead of one test
//! running them all at the end of `make test`; the shards share one scratch template.

use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One fenced block of a Markdown file.
#[derive(Debug, Clone)]
struct Block {
    file: String,
    line: usize,
    info: String,
    body: String,
}

fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (i, l) in text.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = l.strip_prefix("```") {
                    open = Some((i + 1, info.trim().to_string(), String::new()));
                }
            }
            Some((line, info, body)) => {
                if l.trim_end() == "```" {
                    out.push(Block {
                        file: file.to_string(),
                        line: *line,
                        info: std::mem::take(info),
                        body: std::mem::take(body),
                    });
                    open = None;
                } else {
                    body.push_str(l);
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "{file}: an unclosed ``` fence");
    out
}

/// A word of a command, unquoted, and whether the shell would expand it (a variable, `$(…)`
/// or a glob), so its text is not the value the program sees.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    dynamic: bool,
}

/// One simple command: its leading `NAME=value` assignments and its words (redirections left
/// out).
#[derive(Debug, Clone, Default, PartialEq)]
struct Cmd {
    assigns: Vec<String>,
    words: Vec<Word>,
}

impl Cmd {
    fn program(&self) -> Option<&str> {
        self.words.first().map(|w| w.text.as_str())
    }
    fn args(&self) -> Vec<String> {
        self.words.iter().map(|w| w.text.clone()).collect()
    }
}

/// One line as the shell runs it (continuations joined): its source text, its commands and its
/// comment.
#[derive(Debug, Clone, Default)]
struct Line {
    source: String,
    cmds: Vec<Cmd>,
    comment: String,
    /// `<ts>`-like words, which the shell reads as a redirection from a file named `ts>`.
    placeholders: Vec<String>,
}

/// Splits a block into lines of commands. Supports what recipes use: `'…'`, `"…"` (with `$…`
/// and `$(…)` inside), `\` before a newline, `$(…)` with nested parentheses and quotes across
/// lines, `#` comments, `&&`, `||`, `|`, `;`, `&`, and redirections (`>`, `>>`, `<`, `2>`,
/// `2>&1`), whose targets are not words of the command.
fn lex(body: &str) -> Vec<Line> {
    let chars: Vec<char> = body.chars().collect();
    let mut lines = Vec::new();
    let mut line = Line::default();
    let mut cmd = Cmd::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut dynamic = false;
    let mut redirect = false;
    let mut start = 0;
    let mut i = 0;
    // Ends the current word: a redirection target is dropped, `NAME=…` before the program is an
    // assignment.
    let end_word = |word: &mut String,
                    in_word: &mut bool,
                    dynamic: &mut bool,
                    redirect: &mut bool,
                    cmd: &mut Cmd| {
        if !*in_word {
            return;
        }
        let text = std::mem::take(word);
        if *redirect {
            *redirect = false;
        } else if cmd.words.is_empty()
            && text.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        {
            cmd.assigns.push(text);
        } else {
            cmd.words.push(Word {
                text,
                dynamic: *dynamic,
            });
        }
        *in_word = false;
        *dynamic = false;
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                assert!(i < chars.len(), "unterminated ' in:\n{body}");
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '$' {
                        dynamic = true;
                        if chars.get(i + 1) == Some(&'(') {
                            let end = subst_end(&chars, i + 1, body);
                            word.extend(&chars[i..end]);
                            i = end;
                            continue;
                        }
                    }
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
                assert!(i < chars.len(), "unterminated \" in:\n{body}");
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                in_word = true;
                dynamic = true;
                let end = subst_end(&chars, i + 1, body);
                word.extend(&chars[i..end]);
                i = end;
            }
            '#' if !in_word => {
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(chars.len(), |p| i + p);
                let text: String = chars[i + 1..end].iter().collect();
                line.comment.push_str(text.trim());
                i = end;
            }
            ' ' | '\t' => {
                end_word(
                    &mut word,
                    &mut in_word,
                    &mut dynamic,
                    &mut redirect,
                    &mut cmd,
                );
                i += 1;
            }
            '\n' | ';' | '&' | '|' => {
                end_word(
                    &mut word,
                    &mut in_word,
                    &mut dynamic,
                    &mut redirect,
                    &mut cmd,
                );
                if !cmd.words.is_empty() || !cmd.assigns.is_empty() {
                    line.cmds.push(std::mem::take(&mut cmd));
                }
                let pair = c != '\n' && c != ';' && chars.get(i + 1) == Some(&c);
                i += if pair { 2 } else { 1 };
                if c == '\n' && !line_continues(&chars[start..i - 1]) {
                    line.source = chars[start..i]
                        .iter()
                        .collect::<String>()
                        .trim()
                        .to_string();
                    if line.cmds.is_empty() {
                        line = Line::default();
                    } else {
                        lines.push(std::mem::take(&mut line));
                    }
                    start = i;
                }
            }
            '>' | '<' => {
                if c == '<' {
                    let word: String = chars[i..]
                        .iter()
                        .take_while(|c| !c.is_whitespace())
                        .collect();
                    let inner = word[1..].strip_suffix('>').unwrap_or_default();
                    if !inner.is_empty()
                        && inner
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                    {
                        line.placeholders.push(word);
                    }
                }
                // `2>` and `2>&1`: the digit was read as a word.
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(
                    &mut word,
                    &mut in_word,
                    &mut dynamic,
                    &mut redirect,
                    &mut cmd,
                );
                i += 1;
                if chars.get(i) == Some(&'>') {
                    i += 1;
                }
                if chars.get(i) == Some(&'&') {
                    // `>&1`: a file descriptor, not a file.
                    i += 1;
                    while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                        i += 1;
                    }
                } else {
                    redirect = true;
                }
            }
            _ => {
                in_word = true;
                if c == '*' || c == '?' || (c == '~' && word.is_empty()) || c == '$' {
                    dynamic = true;
                }
                word.push(c);
                i += 1;
            }
        }
    }
    end_word(
        &mut word,
        &mut in_word,
        &mut dynamic,
        &mut redirect,
        &mut cmd,
    );
    if !cmd.words.is_empty() || !cmd.assigns.is_empty() {
        line.cmds.push(cmd);
    }
    if !line.cmds.is_empty() {
        line.source = chars[start..].iter().collect::<String>().trim().to_string();
        lines.push(line);
    }
    lines
}

/// A line whose last operator is `&&`, `||` or `|` goes on after the newline.
fn line_continues(text: &[char]) -> bool {
    let text: String = text.iter().collect();
    let last = text.rsplit('\n').next().unwrap_or_default();
    let code = match last.find(" #") {
        Some(p) if !last[..p].contains('\'') && !last[..p].contains('"') => &last[..p],
        _ => last,
    };
    let t = code.trim_end();
    t.ends_with("&&") || t.ends_with("||") || t.ends_with('|')
}

/// The index just past the `)` that closes the `(` at `open` (quotes and nesting respected).
fn subst_end(chars: &[char], open: usize, body: &str) -> usize {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut i = open;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    panic!("unterminated $( in:\n{body}");
}

/// Programs a runnable line may use besides `ladder`.
const TOOLS: &[&str] = &["mkdir", "echo", "ls", "tail", "cat", "head", "jq"];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the scenario file at `path` (relative to the repository) targets the simulator.
fn targets_sim(path: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(repo().join(path)) else {
        return false;
    };
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap_or_default();
    doc["target"].get("sim").is_some()
}

/// The first scenario named in `word` (as `scenarios/X.yaml`, `baselines/X…` or `runs/X…`,
/// also inside a `$(…)`) that does not target the simulator: its runs and baselines exist only
/// where a provider answered.
fn non_sim_scenario_named(word: &str) -> Option<String> {
    for dir in ["scenarios/", "baselines/", "runs/"] {
        for (at, _) in word.match_indices(dir) {
            if at > 0 && !word[..at].ends_with(['/', '"', '(', ' ', '=']) {
                continue;
            }
            let rest = &word[at + dir.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            // A folder of fixtures (`scenarios/logs/gateway.csv`) names no scenario.
            let folder = rest[name.len()..].starts_with('/');
            if name.is_empty() || name == "prompts" || name == "scenario" || folder {
                continue;
            }
            if !targets_sim(&format!("scenarios/{name}.yaml")) {
                return Some(name);
            }
        }
    }
    None
}

/// Why a line cannot run here (it stays parse-only), or None when it can.
fn why_not_runnable(line: &Line) -> Option<String> {
    for cmd in &line.cmds {
        let Some(program) = cmd.program() else {
            continue;
        };
        if program != "ladder" {
            if !TOOLS.contains(&program) {
                return Some(format!("runs `{program}`"));
            }
            continue;
        }
        let args = cmd.args();
        if let Some(name) = args.iter().find_map(|a| non_sim_scenario_named(a)) {
            return Some(format!(
                "reads or writes the files of {name}, which needs a provider"
            ));
        }
        match args.get(1).map(String::as_str) {
            Some("sim") if !args.iter().any(|a| a == "--list") => {
                return Some("serves the simulator in the foreground".into())
            }
            Some("run" | "check") => {
                if let Some(f) = args
                    .iter()
                    .find(|a| a.ends_with(".yaml") && !targets_sim(a))
                {
                    return Some(format!("{f} needs a provider"));
                }
                if args.iter().any(|a| a == "--base-url" || a == "--from") {
                    return Some("checks a provider".into());
                }
                if let Some(f) = args.iter().find(|a| {
                    ["--metrics-addr", "--prometheus-remote-write", "--start-at"]
                        .contains(&a.as_str())
                }) {
                    return Some(format!("{f}: a fixed port, a Prometheus or a start time"));
                }
            }
            _ => {}
        }
    }
    None
}

/// The exit code a line's comment promises (`… exit 3 …`), else 0.
fn expected_code(line: &Line) -> i32 {
    let c = &line.comment;
    c.find("exit ")
        .and_then(|p| c[p + 5..].split(|ch: char| !ch.is_ascii_digit()).next())
        .and_then(|d| d.parse().ok())
        .unwrap_or(0)
}

/// Files of this repository a command names must exist (literal words only).
fn check_files(block: &Block, cmd: &Cmd, created: &[String], failures: &mut Vec<String>) {
    for w in cmd.words.iter().filter(|w| !w.dynamic) {
        let t = w.text.as_str();
        let t = t
            .split_once('=')
            .map_or(t, |(k, v)| if k.starts_with("--") { v } else { t });
        let ours = ["scenarios/", "baselines/", "deploy/", "compat/"]
            .iter()
            .any(|d| t.starts_with(d));
        if ours
            && Path::new(t).extension().is_some()
            && !created.iter().any(|c| c == t)
            && !repo().join(t).exists()
        {
            failures.push(format!(
                "{}:{}: `{t}` does not exist in this repository",
                block.file, block.line
            ));
        }
    }
}

/// The README and every page under docs/.
fn documents() -> Vec<(String, String)> {
    let mut files = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(repo().join(&f)).unwrap();
            (f, text)
        })
        .collect()
}

fn sh_blocks() -> Vec<Block> {
    documents()
        .iter()
        .flat_map(|(f, t)| blocks(f, t))
        .filter(|b| b.info.split_whitespace().next() == Some("sh"))
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn ladder() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ladder"));
    c.env_remove("GITHUB_STEP_SUMMARY").env("NO_COLOR", "1");
    c
}

/// The scratch project every block starts from: `scenarios/`, `baselines/`, two quick demo
/// runs in `runs/demo/`, committed in a git repository.
fn template() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in ["scenarios", "baselines"] {
        copy_dir(&repo().join(d), &dir.path().join(d));
    }
    for _ in 0..2 {
        let out = ladder()
            .current_dir(dir.path())
            .args(["-q", "run", "scenarios/demo.yaml"])
            .args(["--sim-set", "ttft=10ms", "--sim-set", "tpot=1ms"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .current_dir(dir.path())
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "scenarios", "baselines"]);
    git(&["commit", "-q", "-m", "baseline"]);
    dir
}

/// Runs the runnable lines of one block in its own copy of the template, in order, stopping at
/// the first that fails; returns what ran, or why the block failed.
fn run_block(template: &Path, block: &Block, lines: &[Line]) -> Result<Vec<String>, String> {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("project");
    copy_dir(template, &root);
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let summary = work.path().join("step-summary.md");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ladder"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = Vec::new();
    for line in lines.iter().filter(|l| why_not_runnable(l).is_none()) {
        let want = expected_code(line);
        let (out_file, err_file) = (work.path().join("stdout"), work.path().join("stderr"));
        let mut child = Command::new("bash")
            .args(["-o", "pipefail", "-c", &line.source])
            .current_dir(&root)
            .env("PATH", &path)
            .env("HOME", &home)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("NO_COLOR", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(&out_file).unwrap())
            .stderr(std::fs::File::create(&err_file).unwrap())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(300);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{}:{}: `{}` ran for 5 minutes",
                    block.file, block.line, line.source
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if status.code() != Some(want) {
            return Err(format!(
                "{}:{}: `{}` exited {:?}, the recipe promises {want}\nstdout:\n{}\nstderr:\n{}",
                block.file,
                block.line,
                line.source,
                status.code(),
                std::fs::read_to_string(&out_file).unwrap_or_default(),
                std::fs::read_to_string(&err_file).unwrap_or_default()
            ));
        }
        ran.push(line.source.clone());
    }
    Ok(ran)
}

/// What ran of one block, or why it failed.
type BlockResult = Result<Vec<String>, String>;

/// How many blocks one shard runs at once. A recipe mostly waits on the simulator (about 45 s
/// of its streams for 1 s of CPU), so two side by side in each shard cost little CPU.
const BLOCKS_AT_ONCE: usize = 2;

/// Runs every block in its own copy of the template, `BLOCKS_AT_ONCE` at a time, the ones that
/// run the most scenarios first; results come back in the blocks' order. `-- --nocapture`
/// shows each block's time.
fn run_blocks(
    template: &Path,
    runnable: &[(Block, Vec<Line>)],
) -> Vec<Result<Vec<String>, String>> {
    let mut order: Vec<usize> = (0..runnable.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(runs(&runnable[i].1)));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<BlockResult>>> = runnable
        .iter()
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    std::thread::scope(|s| {
        for _ in 0..BLOCKS_AT_ONCE {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let (block, lines) = &runnable[i];
                let started = std::time::Instant::now();
                let result = run_block(template, block, lines);
                println!(
                    "block {}:{}: {:.1} s",
                    block.file,
                    block.line,
                    started.elapsed().as_secs_f64()
                );
                *results[i].lock().unwrap() = Some(result);
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().unwrap().expect("every block ran"))
        .collect()
}

/// Checks every `ladder` command of `blocks` without running it: it parses with ladder's own
/// argument definitions, the repository files it names exist, and no `<placeholder>` is left
/// for the shell to read as a redirection. Returns how many commands were checked, and what
/// failed.
fn parse_failures(blocks: &[Block]) -> (usize, Vec<String>) {
    let mut parsed = 0;
    let mut failures = Vec::new();
    for block in blocks {
        let lines = lex(&block.body);
        let mut created: Vec<String> = Vec::new();
        for line in &lines {
            for p in &line.placeholders {
                failures.push(format!(
                    "{}:{}: `{}`: the shell reads `{p}` as a redirection; write a real value",
                    block.file, block.line, line.source
                ));
            }
            // Files a line writes (`ladder schema > scenarios/x.json`) exist for the next ones.
            if let Some((_, target)) = line.source.rsplit_once('>') {
                created.push(target.trim().to_string());
            }
            for cmd in &line.cmds {
                if cmd.program() != Some("ladder") {
                    continue;
                }
                check_files(block, cmd, &created, &mut failures);
                // `run S.yaml --save-baseline` writes baselines/S.csv for the next lines.
                let args = cmd.args();
                if args.iter().any(|a| a == "--save-baseline") {
                    for a in &args {
                        if let Some(name) = a
                            .strip_prefix("scenarios/")
                            .and_then(|n| n.strip_suffix(".yaml"))
                        {
                            created.push(format!("baselines/{name}.csv"));
                        }
                    }
                }
                match ladder::cli::Cli::try_parse_from(cmd.args()) {
                    Ok(_) => {}
                    // `ladder --version`, `ladder run --help`: what clap prints instead of running.
                    Err(e)
                        if matches!(
                            e.kind(),
                            clap::error::ErrorKind::DisplayHelp
                                | clap::error::ErrorKind::DisplayVersion
                        ) => {}
                    Err(e) => failures.push(format!(
                        "{}:{}: `{}` does not parse:\n{e}",
                        block.file,
                        block.line,
                        cmd.args().join(" ")
                    )),
                }
                parsed += 1;
            }
        }
    }
    (parsed, failures)
}

#[test]
fn every_ladder_command_in_the_docs_parses() {
    let (parsed, failures) = parse_failures(&sh_blocks());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // README and docs hold dozens of commands; a lexer that found none would pass vacuously.
    assert!(parsed >= 30, "only {parsed} ladder commands found");
}

/// The check above can fail: the recipes issue 22 found broken, as they were written.
#[test]
fn the_parse_check_catches_the_recipes_that_failed_when_copied() {
    let broken = [
        "ladder plan runs/demo --rps 10 [--limit-rpm N] [--format json]",
        "ladder diff baselines/demo.csv runs/demo/<ts>",
        "ladder validate scenarios/no-such-file.yaml",
        "ladder run scenarios/demo.yaml --no-such-flag",
    ];
    for recipe in broken {
        let block = Block {
            file: "test.md".into(),
            line: 1,
            info: "sh".into(),
            body: format!("{recipe}\n"),
        };
        let (parsed, failures) = parse_failures(&[block]);
        assert_eq!(parsed, 1, "{recipe}");
        assert_eq!(failures.len(), 1, "{recipe}: {failures:#?}");
    }
}

/// How many scenario runs a block's runnable lines start (its weight when dealing the shards).
fn runs(lines: &[Line]) -> usize {
    lines
        .iter()
        .filter(|l| why_not_runnable(l).is_none())
        .filter(|l| l.source.contains("ladder run") || l.source.contains("ladder logs"))
        .count()
}

/// The blocks with a line to run (not fenced `no-run`), with their lines.
fn runnable_blocks() -> Vec<(Block, Vec<Line>)> {
    sh_blocks()
        .into_iter()
        .filter(|b| !b.info.split_whitespace().any(|w| w == "no-run"))
        .map(|b| {
            let lines = lex(&b.body);
            (b, lines)
        })
        .filter(|(_, lines)| lines.iter().any(|l| why_not_runnable(l).is_none()))
        .collect()
}

/// How many tests the runnable blocks are dealt into.
const SHARDS: usize = 6;

/// The blocks of shard `k`: all runnable blocks, heaviest first (most scenario runs; ties in
/// the docs' order), dealt round the shards, so each gets a share of the long ones.
fn shard(k: usize) -> Vec<(Block, Vec<Line>)> {
    let mut all = runnable_blocks();
    all.sort_by_key(|(_, lines)| std::cmp::Reverse(runs(lines)));
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| i % SHARDS == k)
        .map(|(_, b)| b)
        .collect()
}

/// The scratch template the shards share while any of them runs: built by the first, deleted
/// by the last to finish (a shard that starts after that builds it again).
static TEMPLATE: std::sync::Mutex<Option<(tempfile::TempDir, usize)>> = std::sync::Mutex::new(None);

/// Runs shard `k`'s blocks; fails naming each block (file and line) that failed and why.
fn run_shard(k: usize) {
    let blocks = shard(k);
    let path = {
        let mut t = TEMPLATE.lock().unwrap_or_else(|e| e.into_inner());
        let (dir, users) = t.get_or_insert_with(|| (template(), 0));
        *users += 1;
        dir.path().to_path_buf()
    };
    let results =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_blocks(&path, &blocks)));
    {
        let mut t = TEMPLATE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, users)) = t.as_mut() {
            *users -= 1;
            if *users == 0 {
                *t = None;
            }
        }
    }
    let results = results.unwrap_or_else(|e| std::panic::resume_unwind(e));
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} recipe block(s) fail when copied:\n\n{}",
        failures.len(),
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// One test per shard, named `the_recipes_that_need_only_the_simulator_run_<k>`.
macro_rules! shards {
    ($($name:ident: $k:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_shard($k);
            }
        )*
        #[test]
        fn every_shard_has_a_test() {
            assert_eq!([$($k),*].len(), SHARDS);
        }
    };
}

shards! {
    the_recipes_that_need_only_the_simulator_run_0: 0,
    the_recipes_that_need_only_the_simulator_run_1: 1,
    the_recipes_that_need_only_the_simulator_run_2: 2,
    the_recipes_that_need_only_the_simulator_run_3: 3,
    the_recipes_that_need_only_the_simulator_run_4: 4,
    the_recipes_that_need_only_the_simulator_run_5: 5,
}

/// Every runnable block is in exactly one shard, and the recipes the docs rely on are among the
/// lines that run (a classifier that skipped them would let the shards pass vacuously).
#[test]
fn the_shards_run_every_runnable_block_and_the_key_recipes() {
    // What stays parse-only, and why, for whoever reads this test's output.
    for b in sh_blocks() {
        for l in lex(&b.body) {
            let why = if b.info.split_whitespace().any(|w| w == "no-run") {
                Some("a no-run block".to_string())
            } else {
                why_not_runnable(&l)
            };
            match why {
                Some(why) => println!("parse only  {}:{}: {} ({why})", b.file, b.line, l.source),
                None => println!("runs        {}:{}: {}", b.file, b.line, l.source),
            }
        }
    }
    let mut dealt: Vec<(String, usize)> = (0..SHARDS)
        .flat_map(shard)
        .map(|(b, _)| (b.file, b.line))
        .collect();
    dealt.sort();
    let mut all: Vec<(String, usize)> = runnable_blocks()
        .into_iter()
        .map(|(b, _)| (b.file, b.line))
        .collect();
    all.sort();
    assert_eq!(dealt, all, "the shards deal every runnable block once");
    assert!(
        (0..SHARDS).all(|k| !shard(k).is_empty()),
        "{SHARDS} shards for {} blocks: fewer shards",
        all.len()
    );
    let ran: Vec<String> = runnable_blocks()
        .into_iter()
        .flat_map(|(_, lines)| lines)
        .filter(|l| why_not_runnable(l).is_none())
        .map(|l| l.source)
        .collect();
    for want in [
        "ladder run scenarios/demo.yaml --dry-run",
        "ladder report runs/demo",
        "ladder plan runs/demo --rps 10",
        "ladder schema > scenarios/scenario.schema.json",
    ] {
        assert!(
            ran.iter().any(|r| r.starts_with(want)),
            "`{want}` does not run; runs: {ran:#?}"
        );
    }
}

#[test]
fn the_whole_scenarios_in_the_docs_validate() {
    let mut checked = 0;
    for (file, text) in documents() {
        for (n, b) in blocks(&file, &text)
            .into_iter()
            .filter(|b| b.info == "yaml")
            .enumerate()
        {
            let doc: serde_yaml::Value = serde_yaml::from_str(&b.body)
                .unwrap_or_else(|e| panic!("{file}:{}: not YAML: {e}", b.line));
            if doc.get("name").is_none() || doc.get("target").is_none() {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            copy_dir(
                &repo().join("scenarios/prompts"),
                &dir.path().join("scenarios/prompts"),
            );
            let f = dir.path().join(format!("scenarios/block-{n}.yaml"));
            std::fs::write(&f, &b.body).unwrap();
            let out = ladder()
                .arg("validate")
                .arg(&f)
                .env("OPENAI_API_KEY", "sk-test")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{file}:{}: the scenario does not validate:\n{}",
                b.line,
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "the README's and the reference's scenarios");
}

/// A scenario fragment (a ```yaml block whose top-level keys are all scenario sections, such as
/// `load:` or `target:`) put into `base`: each section replaces the base's, except that a
/// `target:` without `models` or an endpoint keeps the base's.
fn merge_fragment(
    base: &serde_yaml::Mapping,
    fragment: &serde_yaml::Mapping,
) -> serde_yaml::Mapping {
    let mut merged = base.clone();
    for (k, v) in fragment {
        let mut v = v.clone();
        if let (Some("target"), serde_yaml::Value::Mapping(t)) = (k.as_str(), &mut v) {
            let old = &base["target"];
            for key in ["models", "api"] {
                if !t.contains_key(key) {
                    t.insert(key.into(), old[key].clone());
                }
            }
            if !t.contains_key("base_url") && !t.contains_key("sim") {
                t.insert("sim".into(), old["sim"].clone());
            }
        }
        merged.insert(k.clone(), v);
    }
    merged
}

/// `${NAME}` (without a `:-default`) in `text`: variables the reader sets.
fn required_variables(text: &str) -> Vec<String> {
    text.match_indices("${")
        .filter_map(|(i, _)| {
            let inner = &text[i + 2..i + 2 + text[i + 2..].find('}')?];
            (!inner.contains(":-")).then(|| inner.to_string())
        })
        .collect()
}

#[test]
fn the_scenario_fragments_in_the_docs_validate_inside_the_demo_scenario() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("scenarios/scenario.schema.json")).unwrap(),
    )
    .unwrap();
    let sections: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    let base: serde_yaml::Mapping =
        serde_yaml::from_str(&std::fs::read_to_string(repo().join("scenarios/demo.yaml")).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("scenarios"), &dir.path().join("scenarios"));
    let (mut checked, mut failures) = (0, Vec::new());
    for (file, text) in documents() {
        for b in blocks(&file, &text)
            .into_iter()
            .filter(|b| b.info == "yaml")
        {
            let Ok(serde_yaml::Value::Mapping(fragment)) = serde_yaml::from_str(&b.body) else {
                continue;
            };
            let is_fragment = !fragment.contains_key("name")
                && !fragment.is_empty()
                && fragment
                    .keys()
                    .all(|k| k.as_str().is_some_and(|k| sections.iter().any(|s| *s == k)));
            // Files the reader supplies (certificates for target.tls, a trace to replay) cannot
            // exist here.
            if !is_fragment || ["certs/", "traces/"].iter().any(|d| b.body.contains(d)) {
                continue;
            }
            let f = dir.path().join("scenarios/fragment.yaml");
            let merged = merge_fragment(&base, &fragment);
            std::fs::write(&f, serde_yaml::to_string(&merged).unwrap()).unwrap();
            let mut cmd = ladder();
            cmd.arg("validate").arg(&f).env("OPENAI_API_KEY", "sk-test");
            for v in required_variables(&b.body) {
                cmd.env(v, "example");
            }
            let out = cmd.output().unwrap();
            if !out.status.success() {
                failures.push(format!(
                    "{file}:{}: the fragment does not validate inside scenarios/demo.yaml:\n{}",
                    b.line,
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    println!("{checked} fragments validated");
    // The load: and target: fragments of workloads.md and providers.md, at least.
    assert!(checked >= 3, "only {checked} fragments found");
}

#[test]
fn the_lexer_splits_like_a_shell() {
    let lines = lex(
        "A=1 ladder run \"x y\" 'a $b' $(ls -d r/*/ | tail -n 1) > out.txt 2>&1  # exit 3\n\
         mkdir -p d && ladder schema >> d/s.json\n\
         ladder plan b.csv \\\n    --rps 10 | jq .\n\
         kubectl create cm x --from-literal=a=\"$(date -u ||\n   date -v+3M)\"\n",
    );
    assert_eq!(lines.len(), 4, "{lines:#?}");
    let run = &lines[0].cmds[0];
    assert_eq!(run.assigns, ["A=1"]);
    assert_eq!(
        run.args(),
        ["ladder", "run", "x y", "a $b", "$(ls -d r/*/ | tail -n 1)"]
    );
    assert!(run.words[4].dynamic && !run.words[3].dynamic);
    assert_eq!(expected_code(&lines[0]), 3);
    assert_eq!(lines[1].cmds.len(), 2);
    assert_eq!(lines[1].cmds[1].args(), ["ladder", "schema"]);
    assert_eq!(
        lines[2].cmds[0].args(),
        ["ladder", "plan", "b.csv", "--rps", "10"]
    );
    assert_eq!(lines[2].cmds[1].args(), ["jq", "."]);
    assert_eq!(lines[3].cmds.len(), 1, "{:#?}", lines[3]);
    assert!(why_not_runnable(&lines[3]).is_some());
}
