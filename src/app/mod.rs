//! Wires the subcommands together: the only module that combines scenario loading, the
//! simulator, the runner, statistics, findings, comparison, storage and rendering. This file only
//! dispatches commands; each command or concern has its own file under `app/`, and `app/run.rs`
//! wires a run's stages (plan → execute → summarize → analyze → persist → render → gate).

// First: its `out!`/`outln!` macros are then in scope in every module below.
#[macro_use]
mod pipe;

mod budget;
mod check;
mod diff;
pub(crate) mod import;
mod load;
mod log_run;
mod logs;
mod merge;
mod paths;
mod plan;
pub mod report;
pub(crate) mod run;
mod side;
mod sim;
mod summarize;
pub(crate) mod trend;
mod validate;
pub(crate) mod verdict;

use crate::cli::{Cli, Command};
use anyhow::{Context, Result};

use crate::error::ExitCode;

struct Output {
    quiet: bool,
    color: bool,
    verbose: u8,
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    let out = Output {
        quiet: cli.quiet,
        verbose: cli.verbose,
        color: !cli.no_color && std::env::var_os("NO_COLOR").is_none() && pipe::is_terminal(),
    };
    match cli.command {
        Command::Validate(args) => validate::validate(&args, &out),
        Command::Summarize(args) => summarize::summarize(&args, &out),
        Command::Diff(args) => diff::diff(&args, &out),
        Command::Logs(args) => logs::logs(&args, &out),
        Command::Merge(args) => merge::merge_runs(&args, &out),
        Command::Run(args) => runtime()?.block_on(run::run_scenarios(&args, &out)),
        Command::Sim(args) => runtime()?.block_on(sim::serve_sim(&args, &out)),
        Command::Check(args) => runtime()?.block_on(check::run(&args, out.quiet)),
        Command::Report(args) => {
            let gates_from = match &args.gates_from {
                Some(p) => Some((load::load_without_secrets(p)?.0.gates, p.clone())),
                None => None,
            };
            report::command(&args, out.quiet, gates_from.as_ref())
        }
        Command::Plan(args) => crate::app::plan::run(&args),
        Command::Schema => {
            outln!("{}", crate::scenario::schema::SCENARIO_SCHEMA.trim_end())?;
            Ok(ExitCode::Ok)
        }
        Command::Completions(args) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(args.shell, &mut cmd, "ladder", &mut pipe::stdout());
            Ok(ExitCode::Ok)
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
