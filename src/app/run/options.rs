//! The options of one `ladder run`, built once before any traffic by [`build`], the one reader of
//! the command line's `RunArgs`: the scenarios with their overrides, the shard plan of each, the
//! common start, what the run reads from the environment (shard variables, proxy variables, the
//! stop window and grace, the remote write's credentials), the live-metrics and OTLP choices, and the output plan (where people's text goes, whether stdout holds a
//! machine document, where the verdict goes). Every stage below reads these values, never the
//! flags or the environment again.

use super::adhoc;
use super::signals::StopTiming;
use crate::app::paths::default_baselines_dir;
use crate::app::verdict::{self, GateSwitches};
use crate::app::Output;
use crate::cli::{DiffFormatArg, RunArgs, TelemetryArgs};
use crate::compare::Pair;
use crate::error::UsageError;
use crate::render::diff::DiffFormat;
use crate::runner;
use crate::scenario::{Endpoint, Scenario, Secret};
use crate::telemetry::PushAuth;
use anyhow::Result;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Everything a run decides from its command line and environment, once.
pub(super) struct RunOptions {
    /// `--out`: where run directories go.
    pub out: PathBuf,
    pub baselines: BaselineOptions,
    /// `--against FILE`: the baseline to judge the run against.
    pub against: Option<PathBuf>,
    /// `--pair A=B`: models judged against each other within the run.
    pub pairs: Vec<Pair>,
    /// `--confirm`: rerun the steps of a regression or an undecided verdict.
    pub confirm: Option<ConfirmOptions>,
    pub gates: GateSwitches,
    pub dry_run: bool,
    /// Stop early when a model's first requests all fail (off with `--no-fail-fast`).
    pub fail_fast: bool,
    /// The schedule of each scenario (its shard, common start and step slots), in the order of
    /// the scenarios `build` returns.
    pub schedules: Vec<runner::Schedule>,
    pub telemetry: TelemetryOptions,
    pub env: RunEnv,
    pub output: OutputPlan,
}

/// `--confirm`, `--confirm-budget N`, `--confirm-after DURATION`.
pub(super) struct ConfirmOptions {
    /// The most requests the rerun may send (`None`: as many as the run sent).
    pub max_requests: Option<u64>,
    /// The pause before the rerun.
    pub after: Duration,
}

/// `--save-baseline`, `--force`, `--append`, `--baselines DIR`.
pub(super) struct BaselineOptions {
    pub save: bool,
    pub force: bool,
    pub append: bool,
    dir: Option<PathBuf>,
}

impl BaselineOptions {
    /// Where scenario `s`'s baselines live: `--baselines`, else `baselines/` beside its folder.
    pub fn dir_for(&self, s: &Scenario) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(|| default_baselines_dir(&s.path))
    }
}

/// `--metrics-addr`, `--prometheus-remote-write` with the credentials it pushes with, and
/// `--otlp`/`--otlp-json`.
pub(super) struct TelemetryOptions {
    pub metrics_addr: Option<std::net::SocketAddr>,
    pub remote_write: Option<RemoteWrite>,
    /// Sets or replaces the scenario's `telemetry.otlp.endpoint`.
    pub otlp: Option<String>,
    pub otlp_json: bool,
}

/// Where the remote write pushes, and how it authenticates.
pub(super) struct RemoteWrite {
    pub url: String,
    pub auth: PushAuth,
}

impl TelemetryOptions {
    /// The credentials are read only when there is a push to make; a half-set pair is a usage
    /// error (exit 2) before any traffic.
    fn read(args: &TelemetryArgs) -> Result<TelemetryOptions> {
        let remote_write = match &args.prometheus_remote_write {
            Some(url) => Some(RemoteWrite {
                url: url.clone(),
                auth: remote_write_auth(&|k: &str| {
                    std::env::var(k).ok().filter(|v| !v.is_empty())
                })?,
            }),
            None => None,
        };
        Ok(TelemetryOptions {
            metrics_addr: args.metrics_addr,
            remote_write,
            otlp: args.otlp.clone(),
            otlp_json: args.otlp_json,
        })
    }
}

/// `LADDER_REMOTE_WRITE_TOKEN` (bearer) wins; else `LADDER_REMOTE_WRITE_USERNAME` and
/// `LADDER_REMOTE_WRITE_PASSWORD` together (basic); else none.
fn remote_write_auth(var: &dyn Fn(&str) -> Option<String>) -> Result<PushAuth> {
    Ok(
        match (
            var("LADDER_REMOTE_WRITE_USERNAME"),
            var("LADDER_REMOTE_WRITE_PASSWORD"),
            var("LADDER_REMOTE_WRITE_TOKEN"),
        ) {
            (_, _, Some(token)) => PushAuth::Bearer(Secret::new(token)),
            (Some(username), Some(password), None) => PushAuth::Basic {
                username,
                password: Secret::new(password),
            },
            (None, None, None) => PushAuth::None,
            _ => {
                return Err(UsageError(
                    "--prometheus-remote-write: set both LADDER_REMOTE_WRITE_USERNAME and LADDER_REMOTE_WRITE_PASSWORD (or LADDER_REMOTE_WRITE_TOKEN)".into(),
                )
                .into())
            }
        },
    )
}

/// What the run reads from the environment, read once.
pub(super) struct RunEnv {
    /// The proxy variables (`HTTPS_PROXY`, `NO_PROXY`, …) that are set, for `client::proxy`.
    proxy: Vec<(&'static str, String)>,
    /// How signals are grouped into one stop, and the in-flight requests' grace.
    pub stop: StopTiming,
}

/// The variables `client::proxy::proxy_for` may read.
const PROXY_VARIABLES: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "REQUEST_METHOD",
];

impl RunEnv {
    fn read() -> RunEnv {
        RunEnv {
            proxy: PROXY_VARIABLES
                .iter()
                .filter_map(|n| std::env::var(n).ok().map(|v| (*n, v)))
                .collect(),
            stop: StopTiming::from_env(|n| std::env::var(n).ok()),
        }
    }

    /// One proxy variable as read when the run started.
    pub fn proxy_var(&self, name: &str) -> Option<String> {
        self.proxy
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
}

/// Where a run's output goes.
pub(super) struct OutputPlan {
    /// `--format`: the verdict's format with `--against`; without it, json and markdown print
    /// the run itself as one document.
    pub format: DiffFormat,
    /// Whether stdout holds one machine document (people then read stderr).
    pub machine: bool,
    /// Whether that document is the run itself (json or markdown without `--against`).
    pub run_doc: bool,
}

impl OutputPlan {
    fn new(format: DiffFormat, against: bool) -> OutputPlan {
        let run_doc = !against && matches!(format, DiffFormat::Json | DiffFormat::Markdown);
        let verdict_machine = !matches!(format, DiffFormat::Table);
        OutputPlan {
            format,
            machine: (against && verdict_machine) || run_doc,
            run_doc,
        }
    }

    /// Where the verdict of `--against` goes.
    pub fn verdict_sink(&self, gates: &GateSwitches) -> verdict::Sink {
        verdict::verdict_sink(self.format, gates)
    }
}

/// The scenarios of `ladder run` (with `--sim-set` applied) and the run's options, all checked
/// before any traffic.
pub(super) fn build(args: &RunArgs, out: &Output) -> Result<(Vec<Scenario>, RunOptions)> {
    let mut scenarios = Vec::new();
    for mut s in adhoc::run_scenarios_of(args)? {
        apply_sim_set(&mut s, &args.sim_set, out)?;
        scenarios.push(s);
    }
    let format = verdict::diff_format(args.format);
    let ab = scenarios.iter().any(|s| s.compare_interleave);
    refuse_flag_combinations(args, &scenarios, out)?;
    let shard = match args.shard {
        Some(spec) => Some(spec),
        None => crate::shard::from_env(|n| std::env::var(n).ok()).map_err(UsageError)?,
    };
    let start = match args.start_at.as_deref() {
        Some(t) => Some(start_in_future(t, SystemTime::now())?),
        None => None,
    };
    if shard.is_some() && (args.against.is_some() || args.save_baseline) {
        return Err(UsageError(
            "--shard runs part of the load: merge the shards (`ladder merge`), then diff or save \
             the merged run"
                .into(),
        )
        .into());
    }
    let max_in_flight = max_in_flight(&|n| std::env::var(n).ok())?;
    if let (Some(n), false) = (max_in_flight, out.quiet) {
        let requests = if n == 1 { "request" } else { "requests" };
        eprintln!("note: {MAX_IN_FLIGHT_VAR}={n}: at most {n} {requests} in flight in this process (a test hook that starves the client)");
    }
    let schedules = scenarios
        .iter()
        .map(|s| {
            let schedule = super::shard::schedule(s, shard, start, args.step_every)?;
            Ok(runner::Schedule {
                max_in_flight,
                ..schedule
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let opts = RunOptions {
        out: args.out.clone(),
        baselines: BaselineOptions {
            save: args.save_baseline,
            force: args.force,
            append: args.append,
            dir: args.baselines.clone(),
        },
        against: args.against.clone(),
        pairs: args.pairs.clone(),
        confirm: args.confirm.then_some(ConfirmOptions {
            max_requests: args.confirm_budget,
            after: args.confirm_after,
        }),
        gates: GateSwitches::from(&args.gates),
        dry_run: args.dry_run,
        fail_fast: !args.no_fail_fast,
        schedules,
        telemetry: TelemetryOptions::read(&args.telemetry)?,
        env: RunEnv::read(),
        // An A/B run's verdict is its own, emitted as `--against`'s would be.
        output: OutputPlan::new(format, args.against.is_some() || ab),
    };
    Ok((scenarios, opts))
}

/// The test hook that starves the client on purpose (docs/development.md): at most N requests
/// in flight in this process, so a step that asks for more does not keep up and is invalid for
/// the gate. Not a user option; it exists for the end-to-end tests of that rule.
const MAX_IN_FLIGHT_VAR: &str = "LADDER_TEST_MAX_IN_FLIGHT";

/// `LADDER_TEST_MAX_IN_FLIGHT=N` (N ≥ 1), `None` when unset or empty; anything else is a
/// usage error (exit 2) before any traffic.
fn max_in_flight(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<u32>, UsageError> {
    let Some(v) = var(MAX_IN_FLIGHT_VAR).filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    match v.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(UsageError(format!(
            "{MAX_IN_FLIGHT_VAR}={v}: give a whole number of requests, at least 1 (a test hook; unset it for a real run)"
        ))),
    }
}

/// `--sim-set KEY=VALUE` on a scenario's simulator; a warning for a model it does not run.
fn apply_sim_set(s: &mut Scenario, sim_set: &[String], out: &Output) -> Result<()> {
    if sim_set.is_empty() {
        return Ok(());
    }
    for raw in sim_set {
        if let Some(model) = raw
            .strip_prefix("models.")
            .and_then(|rest| rest.split('.').next())
        {
            if !s.target.models.iter().any(|m| m == model) && !out.quiet {
                eprintln!(
                    "warning: --sim-set {raw}: `{model}` is not one of this scenario's models ({})",
                    s.target.models.join(", ")
                );
            }
        }
    }
    match &mut s.target.endpoint {
        Endpoint::Sim(params) => params
            .apply_overrides(sim_set, "--sim-set")
            .map_err(UsageError)?,
        Endpoint::Url(_) => {
            return Err(UsageError(format!(
            "--sim-set: {} targets a real server (target.base_url), not the simulator (target.sim)",
            s.path.display()
        ))
            .into())
        }
    }
    Ok(())
}

/// `--start-at T`, refused when T is already more than a second past: the shards would start
/// out of step.
fn start_in_future(t: &str, now: SystemTime) -> Result<SystemTime> {
    let start = crate::shard::parse_start_at(t).map_err(UsageError)?;
    if let Ok(late) = now.duration_since(start) {
        if late > Duration::from_secs(1) {
            return Err(UsageError(format!(
                "--start-at {t} was {} s ago: the shards would start out of step; give a time a little in the future, e.g. `--start-at $(date -u -d '+2 min' +%Y-%m-%dT%H:%M:%SZ)`",
                late.as_secs()
            ))
            .into());
        }
    }
    Ok(start)
}

/// Flags that cannot work together with these scenarios, refused before any traffic.
fn refuse_flag_combinations(args: &RunArgs, scenarios: &[Scenario], out: &Output) -> Result<()> {
    let verdict = args.against.is_some() || scenarios.iter().any(|s| s.compare_interleave);
    if !verdict && args.format == DiffFormatArg::Junit && !out.quiet {
        eprintln!(
            "note: --format junit applies to the verdict of --against or an A/B run (--ab); without either it has no effect"
        );
    }
    if args.against.is_some() && scenarios.len() > 1 {
        return Err(UsageError("--against takes one scenario".into()).into());
    }
    if args.start_at.is_some() && scenarios.len() > 1 {
        return Err(UsageError("--start-at takes one scenario".into()).into());
    }
    if let Some(s) = scenarios.iter().find(|s| s.compare_interleave) {
        refuse_with_ab(args, s)?;
    } else if args.confirm && args.against.is_none() {
        return Err(UsageError(
            "--confirm re-measures what a verdict found: give the baseline with --against, or run an A/B (--ab A=B)".into(),
        )
        .into());
    }
    Ok(())
}

/// What an A/B run cannot be: judged against a stored baseline (it is judged between its two
/// models), saved as one (each model ran at half the step's streams, beside the other), or
/// paired otherwise.
fn refuse_with_ab(args: &RunArgs, s: &Scenario) -> Result<()> {
    let what = format!(
        "{} is an A/B run (compare: {{interleave: true}} or --ab)",
        s.path.display()
    );
    if args.against.is_some() {
        return Err(UsageError(format!(
            "--against: {what}, judged between its two models; diff a run of one model against a stored baseline without the A/B"
        ))
        .into());
    }
    if args.save_baseline {
        return Err(UsageError(format!(
            "--save-baseline: {what}: each model ran at half of every step's streams, beside the other, so neither side is a run of that model at those loads; save a baseline from a run of one model"
        ))
        .into());
    }
    if !args.pairs.is_empty() {
        return Err(UsageError(format!(
            "--pair: {what}, which already judges its second model against its first"
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_holds_a_machine_document_only_when_one_is_asked_for() {
        let plan = |f, against| {
            let p = OutputPlan::new(f, against);
            (p.machine, p.run_doc)
        };
        assert_eq!(plan(DiffFormat::Table, false), (false, false));
        assert_eq!(plan(DiffFormat::Table, true), (false, false));
        assert_eq!(plan(DiffFormat::Json, false), (true, true));
        assert_eq!(plan(DiffFormat::Markdown, false), (true, true));
        assert_eq!(plan(DiffFormat::Json, true), (true, false));
        assert_eq!(plan(DiffFormat::Junit, true), (true, false));
        // JUnit without --against has no document: people's text stays on stdout.
        assert_eq!(plan(DiffFormat::Junit, false), (false, false));
    }

    #[test]
    fn the_test_ceiling_on_requests_in_flight_is_a_whole_number_or_unset() {
        let read = |v: Option<&str>| {
            let v = v.map(str::to_string);
            max_in_flight(&move |n: &str| (n == MAX_IN_FLIGHT_VAR).then(|| v.clone()).flatten())
        };
        assert_eq!(read(None).unwrap(), None);
        assert_eq!(read(Some("")).unwrap(), None);
        assert_eq!(read(Some(" 4 ")).unwrap(), Some(4));
        for bad in ["0", "-1", "four", "2.5"] {
            let e = read(Some(bad)).unwrap_err().to_string();
            assert!(
                e.contains(MAX_IN_FLIGHT_VAR) && e.contains("at least 1"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_start_already_past_is_refused() {
        let start = crate::shard::parse_start_at("2026-01-01T00:00:00Z").unwrap();
        let now = start + Duration::from_secs(30);
        let e = start_in_future("2026-01-01T00:00:00Z", now).unwrap_err();
        assert!(e.to_string().contains("was 30 s ago"), "{e}");
        assert_eq!(
            start_in_future("2026-01-01T00:00:00Z", start + Duration::from_millis(500)).unwrap(),
            start
        );
        assert_eq!(
            start_in_future("2026-01-01T00:00:00Z", start - Duration::from_secs(60)).unwrap(),
            start
        );
    }
}

#[cfg(test)]
mod remote_write_auth_tests {
    use super::*;

    fn auth(vars: &[(&str, &str)]) -> Result<PushAuth> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        remote_write_auth(&|k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn a_token_wins_a_pair_is_basic_nothing_is_none_half_a_pair_is_refused() {
        assert!(matches!(
            auth(&[("LADDER_REMOTE_WRITE_TOKEN", "t"), ("LADDER_REMOTE_WRITE_USERNAME", "u")]),
            Ok(PushAuth::Bearer(t)) if t.expose() == "t"
        ));
        assert!(matches!(
            auth(&[("LADDER_REMOTE_WRITE_USERNAME", "u"), ("LADDER_REMOTE_WRITE_PASSWORD", "p")]),
            Ok(PushAuth::Basic { username, password }) if username == "u" && password.expose() == "p"
        ));
        assert!(matches!(auth(&[]), Ok(PushAuth::None)));
        let shown = format!(
            "{:?}",
            auth(&[
                ("LADDER_REMOTE_WRITE_USERNAME", "u"),
                ("LADDER_REMOTE_WRITE_PASSWORD", "s3cret")
            ])
            .unwrap()
        );
        assert!(!shown.contains("s3cret"), "{shown}");
        for half in [
            "LADDER_REMOTE_WRITE_USERNAME",
            "LADDER_REMOTE_WRITE_PASSWORD",
        ] {
            let e = auth(&[(half, "s3cret")]).unwrap_err().to_string();
            assert!(e.contains("set both"), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }
}
