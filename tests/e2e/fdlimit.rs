//! Issue 19 §2: open-file limits. With a low soft limit and room under the hard one, ladder
//! raises the soft limit and runs a step wider than the old limit; when the hard limit is too
//! low for the largest step, it refuses before any traffic (exit 2) with the `ulimit -n` number.

use crate::support::{read_csv, sim_scenario, skip, Project};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// `ladder ARGS` in `p` with RLIMIT_NOFILE set to (`soft`, `hard`), as `ulimit -Sn/-Hn` would.
fn ladder_with_limit(p: &Project, soft: u64, hard: u64, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ladder"));
    c.current_dir(p.path()).args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: soft as libc::rlim_t,
                rlim_max: hard as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("run ladder")
}

fn current_hard_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct passed to it.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    #[allow(clippy::unnecessary_cast)]
    let hard = lim.rlim_max as u64;
    hard
}

fn wide(name: &str, streams: u32) -> String {
    sim_scenario(
        name,
        "    ttft: 5ms\n    tpot: 1ms\n    tpot_jitter: 0\n    output_tokens: 2",
        &format!("  ladder: [{streams}]\n  requests_per_step: {streams}\n  warmup_requests: 0"),
        2,
    )
}

#[test]
fn the_soft_limit_is_raised_towards_the_hard_one() {
    let hard = current_hard_limit();
    if skip::require(
        (hard >= 1024).then_some(hard),
        "the_soft_limit_is_raised_towards_the_hard_one",
        "this machine's hard limit on open files is below 1024",
        "raise it: `ulimit -Hn 1024` as root, or LimitNOFILE= for a service",
    )
    .is_none()
    {
        return;
    }
    let p = Project::new();
    let f = p.scenario("wide", &wide("wide", 300));
    let f = f.to_str().unwrap();
    let out = ladder_with_limit(&p, 200, 1024, &["run", "--quiet", f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h, rows) = read_csv(&p.run_dirs("wide")[0].join("summary.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    assert_eq!(rows[0][c("succeeded")], "300", "{rows:?}");
}

#[test]
fn a_step_that_cannot_fit_is_refused_before_traffic() {
    let p = Project::new();
    let f = p.scenario("wide", &wide("wide", 500));
    let f = f.to_str().unwrap();
    let out = ladder_with_limit(&p, 200, 200, &["run", f]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs about 1064 open files"), "{stderr}");
    assert!(stderr.contains("may open only 200"), "{stderr}");
    assert!(stderr.contains("ulimit -n 1064"), "{stderr}");
    assert!(p.run_dirs("wide").is_empty(), "nothing was written or sent");
}
