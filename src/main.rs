//! The `ladder` binary: parse the command line, call `app::run`, map errors to exit codes.
//!
//! Exit codes (docs/commands.md, exit codes) are the one `ladder::error::ExitCode` type: 0 ok · 1 runtime error,
//! incompatible baseline, interrupted run · 2 usage error or invalid input · 3 regression found
//! · 4 inconclusive.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = ladder::cli::Cli::parse();
    // A closed stdout (`ladder … | head -1`) is no error: `app::pipe`, the one writer to
    // stdout, ends the output there and the command returns its own exit code. A broken pipe
    // that reaches here came from elsewhere (a server's connection) and is reported.
    match ladder::app::run(cli) {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("error: {err:#}");
            ladder::error::ExitCode::for_error(&err).into()
        }
    }
}
