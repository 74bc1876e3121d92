//! `ladder check`: the command line turned into typed inputs, the target resolved (a scenario,
//! flags, or a Claude Code / Codex settings file), then `check::check_target`.

use crate::check::{self, inputs};
use crate::cli::CheckArgs;
use crate::error::{ExitCode, UsageError};
use crate::scenario;

pub async fn run(args: &CheckArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    let args = inputs_of(args);
    let target = match &args.scenario {
        Some(path) => inputs::from_scenario(&scenario::load(path)?, &args),
        None => {
            let env = |k: &str| std::env::var(k).ok();
            inputs::from_flags(&args, &env, &|p| std::fs::read_to_string(p))
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
        timeout: a.timeout,
        max_tokens_field: a.max_tokens_field,
    }
}
