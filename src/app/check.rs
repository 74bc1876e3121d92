//! `ladder check`: the command line turned into typed inputs, the target resolved (a scenario,
//! flags, or a Claude Code / Codex settings file), then `check::check_target`. Runs Claude
//! Code's `apiKeyHelper` for `--from claude` (`check::inputs::claude`): `/bin/sh -c`, as Claude
//! Code runs it, with a timeout; its output is the key and is never printed.

use crate::check::{self, inputs};
use crate::cli::CheckArgs;
use crate::error::{ExitCode, UsageError};
use crate::scenario;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest Claude Code's `apiKeyHelper` may run.
const HELPER_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(args: &CheckArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    let args = inputs_of(args);
    let target = match &args.scenario {
        Some(path) => inputs::from_scenario(&scenario::load(path)?, &args),
        None => {
            let env = |k: &str| std::env::var(k).ok();
            let read = |p: &Path| std::fs::read_to_string(p);
            inputs::from_flags_with(&args, &env, &read, &run_key_helper)
                .map_err(|e| UsageError(e.to_string()))?
        }
    };
    let (total, failed) = check::check_target(&target, quiet, &mut super::pipe::stdout()).await?;
    if !quiet {
        outln!(
            "checked {total} model(s): {} ok, {failed} failed",
            total - failed
        )?;
    }
    Ok(if failed > 0 {
        ExitCode::Error
    } else {
        ExitCode::Ok
    })
}

fn inputs_of(a: &CheckArgs) -> inputs::CheckInputs {
    inputs::CheckInputs {
        scenario: a.scenario.clone(),
        base_url: a.base_url.clone(),
        model: a.model.clone(),
        api: a.api,
        api_key_env: a.api_key_env.clone(),
        from: a.from.clone(),
        profile: a.profile.clone(),
        project_dir: std::env::current_dir().unwrap_or_default(),
        timeout: a.timeout,
        max_tokens_field: a.max_tokens_field,
    }
}

/// Runs an `apiKeyHelper` command: its first line of stdout is the key. Errors name the exit
/// status or the timeout, never the output (stderr is discarded: it may hold the key).
fn run_key_helper(cmd: &str) -> Result<String, String> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start /bin/sh: {e}"))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < HELPER_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("it ran longer than {} s", HELPER_TIMEOUT.as_secs()));
            }
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        o.read_to_string(&mut out)
            .map_err(|_| "its output is not text".to_string())?;
    }
    if !status.success() {
        return Err(format!("it exited with {status}"));
    }
    match out.lines().next().map(str::trim) {
        Some(k) if !k.is_empty() => Ok(k.to_string()),
        _ => Err("it printed nothing".into()),
    }
}
