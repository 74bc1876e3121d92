//! How a command ends: the one `ExitCode` type (docs/commands.md, exit codes) used by `app`, `compare` and `check`,
//! and the one error type for bad user input (flags, files), which maps to exit code 2. Lives
//! below `app` so that subcommand modules need not depend on `app`.

/// Bad input from the user (flags, files): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Exit codes (docs/commands.md, exit codes). Several results (one per scenario of `run`) combine by
/// [`ExitCode::combine`], not by the order of the codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    /// The rule for combining the results of several scenarios into one exit code: the more
    /// severe wins, in this order: a regression (3: the verdict a gate acts on, even beside a
    /// failure elsewhere), invalid input (2), a runtime error or unfinished run (1),
    /// inconclusive (4: nothing failed, but something could not be decided), pass (0).
    pub fn combine(self, other: ExitCode) -> ExitCode {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    fn severity(self) -> u8 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::Inconclusive => 1,
            ExitCode::Error => 2,
            ExitCode::Usage => 3,
            ExitCode::Regression => 4,
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

/// How one scenario's run ended, for its exit code ([`ExitCode::of_run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// It ran its plan; `verdict` is the `--against` verdict, when it was judged.
    Finished { verdict: Option<ExitCode> },
    /// Every request failed: nothing was measured, so nothing is judged.
    NothingSucceeded,
    /// A signal or the fail-fast rule stopped it before its plan ended (or the scenarios after
    /// it never ran); `verdict` is the judgement of what it collected, when judged.
    Stopped { verdict: Option<ExitCode> },
}

impl ExitCode {
    /// The one rule from how a run ended to its exit code: a finished run exits with its
    /// verdict (0 without one); a run that measured nothing is an error (1); a stopped run is
    /// an error (1) unless the steps that ran already regressed (3), which a gate must see.
    pub fn of_run(end: RunEnd) -> ExitCode {
        match end {
            RunEnd::Finished { verdict } => verdict.unwrap_or(ExitCode::Ok),
            RunEnd::NothingSucceeded => ExitCode::Error,
            RunEnd::Stopped {
                verdict: Some(ExitCode::Regression),
            } => ExitCode::Regression,
            RunEnd::Stopped { .. } => ExitCode::Error,
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.code())
    }
}

#[cfg(test)]
mod tests {
    use super::ExitCode::{self, *};

    #[test]
    fn combining_results_follows_the_severity_rule_not_the_codes() {
        let all = [Ok, Error, Usage, Regression, Inconclusive];
        // A regression beside an inconclusive scenario is 3, although 4 > 3.
        assert_eq!(Inconclusive.combine(Regression), Regression);
        assert_eq!(Regression.combine(Inconclusive), Regression);
        assert_eq!(Inconclusive.combine(Error), Error);
        assert_eq!(Error.combine(Usage), Usage);
        assert_eq!(Usage.combine(Regression), Regression);
        assert_eq!(Ok.combine(Inconclusive), Inconclusive);
        for a in all {
            assert_eq!(a.combine(Ok), a);
            assert_eq!(Ok.combine(a), a);
            for b in all {
                assert_eq!(a.combine(b), b.combine(a), "{a:?} {b:?}");
            }
        }
        let codes: Vec<u8> = all.iter().map(|c: &ExitCode| c.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_run_exits_with_its_verdict_unless_it_measured_nothing_or_stopped_without_regressing() {
        use super::RunEnd::*;
        let all = [Ok, Error, Usage, Regression, Inconclusive];
        assert_eq!(ExitCode::of_run(Finished { verdict: None }), Ok);
        assert_eq!(ExitCode::of_run(NothingSucceeded), Error);
        assert_eq!(ExitCode::of_run(Stopped { verdict: None }), Error);
        for v in all {
            assert_eq!(ExitCode::of_run(Finished { verdict: Some(v) }), v);
            let stopped = ExitCode::of_run(Stopped { verdict: Some(v) });
            assert_eq!(stopped, if v == Regression { Regression } else { Error });
        }
    }
}
