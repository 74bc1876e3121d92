//! `ladder sim`: serves the embedded simulator on its own, with `--config`/`--set` overrides.

use super::Output;
use crate::cli::SimArgs;
use crate::error::{ExitCode, UsageError};
use crate::sim::{self, SimParams};
use anyhow::{Context, Result};

/// Serves until Ctrl-C; prints the base URL on stdout for scripts.
pub(super) async fn serve_sim(args: &SimArgs, out: &Output) -> Result<ExitCode> {
    if args.list {
        out!("{}", list())?;
        return Ok(ExitCode::Ok);
    }
    let mut params = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| UsageError(format!("{}: cannot read: {e}", path.display())))?;
            serde_yaml::from_str::<SimParams>(&text).map_err(|e| {
                UsageError(format!(
                    "{}: {e} (the file holds the keys of a scenario's `target.sim` block; `ladder sim --list` shows them)",
                    path.display()
                ))
            })?
        }
        None => SimParams::default(),
    };
    params
        .apply_overrides(&args.set, "--set")
        .map_err(UsageError)?;
    let addr = std::net::SocketAddr::new(args.bind, args.port);
    let handle = sim::start(params, addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    if !out.quiet {
        eprintln!(
            "ladder sim listening on {} (OpenAI: {0}/chat/completions, Anthropic: {0}/messages); Ctrl-C to stop",
            handle.base_url()
        );
    }
    outln!("{}", handle.base_url())?;
    let _ = tokio::signal::ctrl_c().await;
    handle.shutdown().await;
    Ok(ExitCode::Ok)
}

/// `ladder sim --list`: one row per parameter (key, unit, default, meaning), aligned.
fn list() -> String {
    let params = SimParams::params();
    let width = |f: fn(&sim::Param) -> &str, head: &str| {
        params
            .iter()
            .map(|p| f(p).chars().count())
            .chain([head.len()])
            .max()
            .unwrap_or(0)
    };
    let (k, u, d) = (
        width(|p| p.key, "KEY"),
        width(|p| p.unit, "UNIT"),
        width(|p| p.default, "DEFAULT"),
    );
    let row = |key: &str, unit: &str, default: &str, meaning: &str| {
        let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w - s.chars().count()));
        format!(
            "{}  {}  {}  {meaning}\n",
            pad(key, k),
            pad(unit, u),
            pad(default, d)
        )
    };
    let mut out = row("KEY", "UNIT", "DEFAULT", "MEANING");
    for p in params {
        out.push_str(&row(p.key, p.unit, p.default, p.meaning));
    }
    out
}
