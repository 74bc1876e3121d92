//! Issue 34 part 5: every command whose stdout is a pipe nobody reads any more (`ladder plan … |
//! head -1`) ends quietly: no panic, no error line, and the exit code it would have had: 0, or
//! the verdict it decided (a regression found by `run --against` still exits 3). stdout here is
//! a pipe whose reading end is closed before ladder starts, so every write fails (EPIPE) and
//! no timing decides whether the output fitted in the pipe's buffer.

use crate::support::Project;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// The writing end of a pipe whose reading end is already closed.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills two new descriptors; the read end is closed at once and the write
    // end is owned by the returned `Stdio`.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0, "pipe()");
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

/// `ladder ARGS` in the project with stdout closed: its exit code and stderr, after checking that
/// it neither panicked nor said anything about the pipe.
fn closed(p: &Project, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ladder"))
        .current_dir(p.path())
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .expect("run ladder");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let shown = format!("`ladder {}`: {stderr}", args.join(" "));
    assert!(!stderr.contains("panicked"), "{shown}");
    assert!(!stderr.to_lowercase().contains("broken pipe"), "{shown}");
    assert!(!stderr.lines().any(|l| l.starts_with("error")), "{shown}");
    (out.status.code(), stderr)
}

/// Fast enough for 40 requests per step (the P90 gate's minimum) in well under a second.
const SCENARIO: &str = "name: pipe\ntarget:\n  sim: {ttft: 2ms, tpot: 1ms, tpot_jitter: 0, output_tokens: 4}\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 4\nload:\n  ladder: [2]\n  requests_per_step: 40\n  warmup_requests: 0\n";

#[test]
fn every_command_ends_quietly_on_a_closed_stdout_with_its_own_exit_code() {
    let p = Project::new();
    p.scenario("pipe", SCENARIO);
    let s = "scenarios/pipe.yaml";
    // Commands that read nothing.
    for args in [
        vec!["sim", "--list"],
        vec!["schema"],
        vec!["completions", "bash"],
        vec!["validate", s],
        vec!["run", "--dry-run", s],
        vec!["check", s],
    ] {
        assert_eq!(closed(&p, &args).0, Some(0), "{args:?}");
    }
    // A run writes its files although nobody reads its table, and becomes the baseline.
    assert_eq!(closed(&p, &["run", s, "--save-baseline"]).0, Some(0));
    assert!(
        p.path().join("scenarios/baselines/pipe.csv").is_file()
            || p.path().join("baselines/pipe.csv").is_file()
    );
    let base = p.run_dirs("pipe")[0].to_string_lossy().into_owned();
    assert!(p.run_dirs("pipe")[0].join("summary.csv").is_file());
    assert_eq!(closed(&p, &["run", s, "--format", "json"]).0, Some(0));
    let run = p.run_dirs("pipe")[1].to_string_lossy().into_owned();
    // A verdict decided is the exit code, whoever reads stdout: 10 times slower tokens regress.
    for format in ["table", "junit"] {
        let args = [
            "run",
            s,
            "--against",
            &base,
            "--format",
            format,
            "--sim-set",
            "tpot=10ms",
        ];
        assert_eq!(closed(&p, &args).0, Some(3), "{format}");
    }
    // Commands that read runs.
    for args in [
        vec!["diff", &base, &run],
        vec!["diff", &base, &run, "--format", "json"],
        vec!["diff", &base, &run, "--format", "junit"],
        vec!["plan", &run, "--rps", "5"],
        vec!["plan", &run, "--rps", "5", "--format", "json"],
        vec!["report", &run, "-o", "r.html"],
        vec!["report", "--trend", &base, &run, "--format", "markdown"],
        vec!["summarize", &run],
    ] {
        assert_eq!(closed(&p, &args).0, Some(0), "{args:?}");
    }
    // logs reads a request log into a run directory.
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/logs/gateway.csv");
    let map = "start=ts,ttft_ms=ttfb_ms,e2e_s=duration_s,status=http_status,input_tokens=prompt_tokens,output_tokens=completion_tokens";
    let args = [
        "logs",
        log,
        "--map",
        map,
        "--min-per-level",
        "20",
        "--out",
        "prod",
    ];
    assert_eq!(closed(&p, &args).0, Some(0));
}

#[test]
fn merge_ends_quietly_on_a_closed_stdout() {
    let p = Project::new();
    p.scenario("pipe", SCENARIO);
    for shard in ["0/2", "1/2"] {
        p.ladder()
            .args(["--quiet", "run", "scenarios/pipe.yaml", "--shard", shard])
            .assert()
            .success();
    }
    assert_eq!(
        closed(&p, &["merge", "runs/pipe", "-o", "merged"]).0,
        Some(0)
    );
    assert!(p.path().join("merged").is_dir());
}
