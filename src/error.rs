//! The one error type shared by every subcommand for bad user input (flags, files): it maps to
//! exit code 2 in `main`. Lives below `app` so that subcommand modules need not depend on `app`.

/// Bad input from the user (flags, files): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
