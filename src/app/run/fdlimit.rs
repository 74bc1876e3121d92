//! Open-file limits: every stream holds a socket (two with the embedded simulator, which serves
//! from the same process), and default soft limits are low (1,024 on Linux, 256 on macOS). At
//! the start of `ladder run` the soft limit is raised towards the hard one; when the largest
//! step still cannot fit, the run is refused before any traffic with the number to give
//! `ulimit -n`, instead of recording the client's own "Too many open files" as connect errors.

use crate::error::UsageError;
use crate::scenario::{Endpoint, LoadMode, Scenario};

/// Descriptors beside the streams' sockets: stdio, the run's files, the runtime, TLS roots.
const BASE: u64 = 64;

/// How many open files the largest step of `s` needs, and how that number was made; `None`
/// when the scenario does not bound its streams (a rate ladder without `max_concurrency`).
pub(super) fn needed(s: &Scenario) -> Option<(u64, String)> {
    let streams = match s.load.mode {
        LoadMode::Concurrency => u64::from(s.load.ladder.iter().copied().max().unwrap_or(1)),
        LoadMode::Rate { .. } | LoadMode::Replay { .. } => {
            u64::from(s.load.mode.max_concurrency()?)
        }
    };
    let per_stream = if matches!(s.target.endpoint, Endpoint::Sim(_)) {
        2
    } else {
        1
    };
    let how = if per_stream == 2 {
        format!("{streams} streams × 2 sockets with the embedded simulator, + {BASE}")
    } else {
        format!("{streams} streams, + {BASE}")
    };
    Some((streams * per_stream + BASE, how))
}

/// The soft and hard limits on open files after raising the soft one towards the hard one.
#[cfg(unix)]
pub(super) fn raise() -> Option<(u64, u64)> {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed to them.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        // macOS refuses soft limits above OPEN_MAX (10,240) even under an unlimited hard one.
        let tries = [
            lim.rlim_max,
            lim.rlim_max.min(1 << 20),
            lim.rlim_max.min(10_240),
        ];
        for want in tries {
            if want <= lim.rlim_cur {
                break;
            }
            let new = libc::rlimit {
                rlim_cur: want,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &new) == 0 {
                lim.rlim_cur = want;
                break;
            }
        }
        // rlim_t is u64 on Linux and macOS, narrower on some other Unixes.
        #[allow(clippy::unnecessary_cast)]
        Some((lim.rlim_cur as u64, lim.rlim_max as u64))
    }
}

#[cfg(not(unix))]
pub(super) fn raise() -> Option<(u64, u64)> {
    None
}

/// Raises the limit and refuses (exit 2) a scenario whose largest step cannot fit under it.
pub(super) fn ensure(scenarios: &[Scenario]) -> Result<(), UsageError> {
    let Some((soft, hard)) = raise() else {
        return Ok(());
    };
    for s in scenarios {
        let Some((need, how)) = needed(s) else {
            continue;
        };
        if let Some(msg) = refusal(&s.path.display().to_string(), need, &how, soft, hard) {
            return Err(UsageError(msg));
        }
    }
    Ok(())
}

/// The refusal for a step needing `need` open files under limits (`soft`, `hard`), if any.
fn refusal(file: &str, need: u64, how: &str, soft: u64, hard: u64) -> Option<String> {
    if need <= soft {
        return None;
    }
    let fix = if need <= hard {
        format!("run `ulimit -n {need}` in this shell first")
    } else {
        format!(
            "the hard limit is {hard}: raise it (`ulimit -Hn {need}` as root, `LimitNOFILE={need}` in a systemd unit, `nofile` in /etc/security/limits.conf, `--ulimit nofile={need}` for docker), then `ulimit -n {need}`"
        )
    };
    Some(format!(
        "{file}: the largest step needs about {need} open files ({how}) but this process may open only {soft} (`ulimit -n`); {fix}, or lower the ladder. Nothing was sent."
    ))
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn refusals_name_the_number_for_ulimit() {
        assert_eq!(refusal("s.yaml", 564, "x", 1024, 4096), None);
        let soft = refusal("s.yaml", 1064, "500 streams × 2", 200, 20_000).unwrap();
        assert!(soft.contains("needs about 1064 open files"), "{soft}");
        assert!(soft.contains("`ulimit -n 1064`"), "{soft}");
        assert!(soft.contains("may open only 200"), "{soft}");
        let hard = refusal("s.yaml", 1064, "500 streams × 2", 200, 256).unwrap();
        assert!(hard.contains("the hard limit is 256"), "{hard}");
        assert!(hard.contains("then `ulimit -n 1064`"), "{hard}");
    }
}
