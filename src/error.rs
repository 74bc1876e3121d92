//! How a command ends: the one `ExitCode` type (docs/commands.md, exit codes) used by `app`, `compare` and `check`,
//! and the one error type for bad user input (flags, files), which maps to exit code 2. Lives
//! below `app` so that subcommand modules need not depend on `app`.

/// Bad input from the user (flags, files): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Exit codes (docs/commands.md, exit codes). Ordered by severity for combining several results: a regression in
/// one scenario outranks a pass in another (`max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    /// 0: everything passed.
    Ok,
    /// 1: runtime error, incompatible baseline, interrupted run, failed check.
    Error,
    /// 2: usage error or invalid input.
    Usage,
    /// 3: regression found.
    Regression,
    /// 4: inconclusive (too few samples, or a skipped gate under `--strict`).
    Inconclusive,
}

impl ExitCode {
    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::Error => 1,
            ExitCode::Usage => 2,
            ExitCode::Regression => 3,
            ExitCode::Inconclusive => 4,
        }
    }

    /// The exit code of a command that failed with `err`: invalid input is 2, everything else 1.
    pub fn for_error(err: &anyhow::Error) -> ExitCode {
        let usage = err
            .chain()
            .any(|c| c.is::<UsageError>() || c.is::<crate::scenario::ScenarioError>());
        if usage {
            ExitCode::Usage
        } else {
            ExitCode::Error
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.code())
    }
}
