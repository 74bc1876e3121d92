//! The `ladder` binary: parse the command line, call `app::run`, map errors to exit codes.
//!
//! Exit codes (docs/commands.md, exit codes) are the one `ladder::error::ExitCode` type: 0 ok · 1 runtime error,
//! incompatible baseline, interrupted run · 2 usage error or invalid input · 3 regression found
//! · 4 inconclusive.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = ladder::cli::Cli::parse();
    match ladder::app::run(cli) {
        Ok(code) => code.into(),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ladder::error::ExitCode::for_error(&err).into()
        }
    }
}

/// `ladder diff ... | head` closes the pipe early: that is not an error worth reporting.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || c.to_string().contains("Broken pipe")
    })
}
