//! Shared by the bench binaries that run `ladder sim` and `ladder run` as separate processes:
//! pinning them to their own cores at a raised priority, their CPU and memory use, and how busy
//! the rest of the machine was meanwhile (a shared machine is noisy; a bench says so).

#![allow(dead_code)] // each bench uses its part

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub type BenchResult<T> = Result<T, String>;

const DEFAULT_PRIO: &str = "nice -n -15";
pub const AUTOGROUP_NICE: i32 = -15;

/// Resource use of a finished child, from wait4.
pub struct Usage {
    pub cpu: Duration,
    pub max_rss_kb: u64,
    pub status: i32,
}

pub fn wait_with_usage(child: &mut Child) -> BenchResult<Usage> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child `pid`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    if r != pid {
        return Err(format!(
            "wait4({pid}) failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok(Usage {
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        max_rss_kb: ru.ru_maxrss as u64,
        status: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
    })
}

/// A finished `ladder run` of one scenario: its resource use, wall time and stderr.
pub struct LadderRun {
    pub usage: Usage,
    pub wall: Duration,
    pub stderr: String,
}

/// Runs `ladder --quiet run --out OUT SCENARIO` pinned to `core` (see [`pinned`]), stdout
/// discarded, stderr drained on a thread so a chatty child cannot block on a full pipe.
pub fn run_ladder_pinned(
    core: Option<u32>,
    setup: &Setup,
    out: &std::path::Path,
    scenario: &std::path::Path,
) -> BenchResult<LadderRun> {
    use std::io::Read;
    let started = std::time::Instant::now();
    let mut run = pinned(core, setup);
    run.args(["--quiet", "run", "--out"])
        .arg(out)
        .arg(scenario)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = run
        .spawn()
        .map_err(|e| format!("cannot start `ladder run`: {e}"))?;
    let stderr = child.stderr.take();
    let drain = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let usage = wait_with_usage(&mut child)?;
    let wall = started.elapsed();
    let stderr = drain.join().unwrap_or_default();
    Ok(LadderRun {
        usage,
        wall,
        stderr,
    })
}

/// CPU time (user + system) of a running process, from /proc.
pub fn proc_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_micros(ticks * 1_000_000 / hz))
}

/// The kernel's count of connections dropped because a listen queue was full.
pub fn listen_overflows() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let i = names
        .split_whitespace()
        .position(|n| n == "ListenOverflows")?;
    values.split_whitespace().nth(i)?.parse().ok()
}

/// Busy CPU time of the whole machine (all cores), from /proc/stat.
pub fn machine_busy() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = text.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = cpu
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal: busy = user + nice + system + steal.
    // Interrupt time is left out: loopback traffic of the bench itself is processed there.
    let v = v.get(..8)?;
    let busy = v[0] + v[1] + v[2] + v[7];
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_micros(busy * 1_000_000 / hz))
}

/// Whether two cores are there to pin the server and the client apart.
pub fn can_pin() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        && Command::new("taskset")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// How the measured processes are started.
pub struct Setup {
    pub bin: PathBuf,
    /// Server on core 1, client on core 0.
    pub pin: bool,
    /// Command prefix raising the scheduling priority (empty: normal priority).
    pub prio: String,
}

/// The variable `env` if set (may be empty), else `nice -n -15` when this user may raise
/// priority.
pub fn priority(env: &str) -> String {
    if let Ok(p) = std::env::var(env) {
        return p;
    }
    let allowed = Command::new("sh")
        .args(["-c", &format!("{DEFAULT_PRIO} true")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty());
    if allowed {
        DEFAULT_PRIO.to_string()
    } else {
        String::new()
    }
}

/// `sh -c 'ulimit -n …; exec PRIO taskset -c CORE "$@"'`: a high open-file limit, pinned to a
/// core, at a raised scheduling priority. On a shared machine other work (here: the VM's agent at
/// nice -10 and kernel threads) otherwise preempts the measured processes for whole time slices
/// of ~4 ms, which lands in the TTFT error. The child gets its own session, hence its own
/// scheduler autogroup, whose nice value is raised too when `prio` is not empty (nice alone only
/// ranks tasks within one autogroup), and is killed if the bench dies.
pub fn pinned(core: Option<u32>, setup: &Setup) -> Command {
    use std::os::unix::process::CommandExt;
    let pin = match core {
        Some(c) if setup.pin => format!("taskset -c {c} "),
        _ => String::new(),
    };
    let prio = &setup.prio;
    // An empty prefix is normal priority all the way: the autogroup stays at nice 0 too.
    let autogroup = if prio.trim().is_empty() {
        String::new()
    } else {
        format!("{{ echo {AUTOGROUP_NICE} > /proc/self/autogroup; }} 2>/dev/null; ")
    };
    let script = format!(
        "ulimit -n 65536 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; \
         {autogroup}exec {prio} {pin}\"$@\""
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).arg("sh").arg(&setup.bin);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    cmd
}

/// One line about the machine and how the processes ran, for RESULTS.md.
pub fn machine(setup: &Setup) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_string();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    let pin = if setup.pin {
        "sim pinned to core 1, ladder to core 0 (taskset)"
    } else {
        "NOT pinned (fewer than 2 cores or no taskset): figures are not comparable"
    };
    let prio = if setup.prio.trim().is_empty() {
        "normal priority (nice 0, own autogroup at nice 0)".to_string()
    } else {
        format!(
            "both at `{}`, own autogroup at nice {AUTOGROUP_NICE}",
            setup.prio
        )
    };
    format!(
        "{date} · nproc {nproc} · {model} · Linux {} · {pin} · {prio}",
        kernel.trim()
    )
}

/// `ladder sim` on a free port, pinned to core 1; killed when dropped.
pub struct Sim {
    pub child: Child,
    /// `http://127.0.0.1:PORT` (without `/v1`).
    pub base: String,
}

impl Sim {
    pub fn start(setup: &Setup, settings: &[&str]) -> BenchResult<Sim> {
        let mut cmd = pinned(Some(1), setup);
        cmd.args(["--quiet", "sim", "--port", "0"]);
        for s in settings {
            cmd.args(["--set", s]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start `ladder sim`: {e}"))?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let url = line.trim();
        let Some(base) = url.strip_suffix("/v1") else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`ladder sim` printed `{url}` instead of its base URL"
            ));
        };
        Ok(Sim {
            base: base.to_string(),
            child,
        })
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
