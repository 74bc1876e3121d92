//! Wires the subcommands together: the only module that combines scenario loading, the
//! simulator, the runner, statistics, findings, comparison, storage and rendering.

use crate::cli::{
    Cli, Command, DiffArgs, DiffFormatArg, GateArgs, MergeArgs, RunArgs, SimArgs, SummarizeArgs,
    ValidateArgs,
};
use crate::client::http::{build_http_client, HttpBackend, PreparedTarget};
use crate::collect::{CollectedRun, Recorder};
use crate::compare::{self, CompareOptions, Side};
use crate::findings::{self, ModelFindings};
use crate::merge;
use crate::partial::{self, Partial};
use crate::progress::LiveProgress;
use crate::render::diff::{DiffContext, DiffFormat};
use crate::runner::{self, Interrupt};
use crate::scenario::{self, Endpoint, Scenario, ScenarioError};
use crate::sim::{self, SimParams};

use crate::store;
use crate::verdict;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use crate::error::{ExitCode, UsageError};

struct Output {
    quiet: bool,
    color: bool,
    verbose: u8,
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    let out = Output {
        quiet: cli.quiet,
        verbose: cli.verbose,
        color: !cli.no_color
            && std::env::var_os("NO_COLOR").is_none()
            && std::io::IsTerminal::is_terminal(&std::io::stdout()),
    };
    match cli.command {
        Command::Validate(args) => validate(&args, &out),
        Command::Summarize(args) => summarize(&args, &out),
        Command::Diff(args) => diff(&args, &out),
        Command::Merge(args) => merge_runs(&args, &out),
        Command::Run(args) => runtime()?.block_on(run_scenarios(&args, &out)),
        Command::Sim(args) => runtime()?.block_on(serve_sim(&args, &out)),
        Command::Check(args) => runtime()?.block_on(crate::check::run(&args, out.quiet)),
        Command::Report(args) => crate::report::command(&args, out.quiet),
        Command::Plan(args) => crate::plan::command::run(&args),
        Command::Schema => {
            println!("{}", crate::schema::SCENARIO_SCHEMA.trim_end());
            Ok(ExitCode::Ok)
        }
        Command::Completions(args) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(args.shell, &mut cmd, "ladder", &mut std::io::stdout());
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

/// Loads a scenario for checks that send no traffic (`validate`, `diff --gates-from`): an unset
/// variable that holds a secret (`redact::is_secret_name`) reads as empty, so a
/// CI job without secrets can still validate; the names are returned for a note.
fn load_without_secrets(path: &Path) -> Result<(Scenario, Vec<String>), ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|error| ScenarioError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    let missing = std::cell::RefCell::new(Vec::new());
    let lookup = |name: &str| -> Option<String> {
        std::env::var(name).ok().or_else(|| {
            if crate::redact::is_secret_name(name) {
                missing.borrow_mut().push(name.to_string());
                Some(String::new())
            } else {
                None
            }
        })
    };
    let s = scenario::load_str(&text, path, &lookup)?;
    // `${NAME:-default}` needs no variable: only a use without a default does.
    let mut names: Vec<String> = missing
        .into_inner()
        .into_iter()
        .filter(|n| text.contains(&format!("${{{n}}}")))
        .collect();
    names.sort();
    names.dedup();
    Ok((s, names))
}

fn validate(args: &ValidateArgs, out: &Output) -> Result<ExitCode> {
    let mut failed = 0;
    for path in &args.scenarios {
        match load_without_secrets(path) {
            Ok((s, unset)) => {
                // What `run` would refuse when building requests (a key or header value with
                // a newline), validate refuses too.
                if let Err(e) = PreparedTarget::new(&s.target, "http://127.0.0.1/v1") {
                    failed += 1;
                    eprintln!("error: {}: {e}", path.display());
                    continue;
                }
                if !out.quiet {
                    println!(
                        "ok  {}  ({}; {} model(s); ladder {:?}; fingerprint {})",
                        path.display(),
                        s.name,
                        s.target.models.len(),
                        s.load.ladder,
                        s.fingerprint
                    );
                    for name in unset {
                        eprintln!(
                            "note: {}: {name} is not set; `ladder run` will need it",
                            path.display()
                        );
                    }
                    for n in compare::sample_size_notes(&s.load) {
                        eprintln!("note: {}: {n}", path.display());
                    }
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {e}");
            }
        }
    }
    Ok(if failed > 0 {
        ExitCode::Usage
    } else {
        ExitCode::Ok
    })
}

fn parse_key_value(raw: &str, flag: &str) -> Result<(String, String)> {
    match raw.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(UsageError(format!(
            "{flag} `{raw}`: expected KEY=VALUE, e.g. {flag} tpot=26ms"
        ))
        .into()),
    }
}

fn apply_sim_overrides(params: &mut SimParams, sets: &[String], flag: &str) -> Result<()> {
    for raw in sets {
        let (k, v) = parse_key_value(raw, flag)?;
        params
            .set(&k, &v)
            .map_err(|e| UsageError(format!("{flag} {raw}: {e}")))?;
    }
    Ok(())
}

async fn serve_sim(args: &SimArgs, out: &Output) -> Result<ExitCode> {
    if args.list {
        for (key, help) in SimParams::describe_keys() {
            println!("{key:<30} {help}");
        }
        return Ok(ExitCode::Ok);
    }
    let mut params = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| UsageError(format!("{}: cannot read: {e}", path.display())))?;
            serde_yaml::from_str::<SimParams>(&text).map_err(|e| {
                UsageError(format!(
                    "{}: {e} (the file holds the keys of a scenario's `target.sim` block; `ladder sim --list` shows them)",
                    path.display()
                ))
            })?
        }
        None => SimParams::default(),
    };
    apply_sim_overrides(&mut params, &args.set, "--set")?;
    let addr = std::net::SocketAddr::new(args.bind, args.port);
    let handle = sim::start(params, addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    if !out.quiet {
        eprintln!(
            "ladder sim listening on {} (OpenAI: {0}/chat/completions, Anthropic: {0}/messages); Ctrl-C to stop",
            handle.base_url()
        );
    }
    println!("{}", handle.base_url());
    let _ = std::io::stdout().flush();
    let _ = tokio::signal::ctrl_c().await;
    handle.shutdown().await;
    Ok(ExitCode::Ok)
}

/// Ctrl-C and SIGTERM as one stream of "please stop" signals. Registered synchronously, before
/// any traffic, so a signal that arrives early is never lost to the default handler.
struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn register() -> Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignals {
                interrupt: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
                terminate: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(StopSignals {})
        }
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => {}
                _ = self.terminate.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// First signal: no new requests, in-flight ones are cancelled after a grace period, everything
/// collected is written. Second signal: exit at once (files are written atomically, so none is
/// left half-written).
fn install_interrupt(mut signals: StopSignals, interrupt: Interrupt, quiet: bool) {
    const GRACE: Duration = Duration::from_secs(2);
    tokio::spawn(async move {
        signals.next().await;
        interrupt.stop();
        let cancel = interrupt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(GRACE).await;
            cancel.cancel();
        });
        if !quiet {
            eprintln!(
                "\ninterrupted: no new requests; in-flight ones get {}s, then everything collected is written (Ctrl-C again to quit at once)",
                GRACE.as_secs()
            );
        }
        signals.next().await;
        eprintln!("interrupted twice: exiting now");
        std::process::exit(i32::from(ExitCode::Error.code()));
    });
}

async fn run_scenarios(args: &RunArgs, out: &Output) -> Result<ExitCode> {
    // Load and check everything before sending any traffic.
    let mut scenarios = Vec::new();
    for path in &args.scenarios {
        // A dry run sends nothing, so it needs no secrets (as `validate`).
        let mut s = if args.dry_run {
            load_without_secrets(path)?.0
        } else {
            scenario::load(path)?
        };
        if !args.sim_set.is_empty() {
            for raw in &args.sim_set {
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
                Endpoint::Sim(params) => apply_sim_overrides(params, &args.sim_set, "--sim-set")?,
                Endpoint::Url(_) => {
                    return Err(UsageError(format!(
                        "--sim-set: {} targets a real server (target.base_url), not the simulator (target.sim)",
                        path.display()
                    ))
                    .into())
                }
            }
        }
        scenarios.push(s);
    }
    if args.against.is_none() && args.format != DiffFormatArg::Table && !out.quiet {
        eprintln!(
            "note: --format applies to the --against diff; without --against it has no effect"
        );
    }
    if args.against.is_some() && scenarios.len() > 1 {
        return Err(UsageError("--against takes one scenario".into()).into());
    }
    if args.start_at.is_some() && scenarios.len() > 1 {
        return Err(UsageError("--start-at takes one scenario".into()).into());
    }
    for s in &scenarios {
        shard_plan(args, s)?;
    }
    // What the run will send, and the declared limits it would cross: before any traffic.
    let baselines = |s: &Scenario| {
        let dir = args
            .baselines
            .clone()
            .unwrap_or_else(|| default_baselines_dir(&s.path));
        store::baseline_paths(&dir, &s.name).summary
    };
    if crate::plan::command::before_traffic(&scenarios, &baselines, args.dry_run, out.quiet) {
        return Ok(ExitCode::Ok);
    }
    let baseline = preflight(args, &scenarios)?;
    if !out.quiet {
        for s in &scenarios {
            for n in compare::sample_size_notes(&s.load) {
                eprintln!("note: {}: {n}", s.name);
            }
        }
    }
    if let (Some(base), Some(s)) = (&baseline, scenarios.first()) {
        let opts = compare_options(&args.gates, s.gates.clone());
        if let Some(refused) = verdict::refuse_before_traffic(base, s, &opts) {
            eprintln!(
                "refusing --against {}: it was measured with another workload (fingerprint {} vs {}); nothing was sent",
                base.label, base.fingerprint, s.fingerprint
            );
            return Ok(verdict_sink(args.format, &args.gates).emit(&refused, &Default::default())?);
        }
    }
    let interrupt = Interrupt::new();
    install_interrupt(StopSignals::register()?, interrupt.clone(), out.quiet);
    let mut code = ExitCode::Ok;
    for s in &scenarios {
        let c = run_one(s, args, out, &interrupt, baseline.as_ref()).await?;
        code = code.max(c);
        if interrupt.is_stopped() {
            return Ok(ExitCode::Error);
        }
    }
    Ok(code)
}

/// Checks every place a run will write or read before any traffic is sent: a ladder that runs
/// for an hour must not fail at the end because `--out` is not writable.
/// Returns the `--against` baseline, loaded once.
fn preflight(args: &RunArgs, scenarios: &[Scenario]) -> Result<Option<Side>> {
    let usable_dir = |dir: &Path, flag: &str| -> Result<()> {
        if dir.exists() && !dir.is_dir() {
            return Err(UsageError(format!(
                "{flag} {}: is a file, not a directory",
                dir.display()
            ))
            .into());
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            UsageError(format!(
                "{flag} {}: cannot create the directory: {e}",
                dir.display()
            ))
        })?;
        let probe = dir.join(format!(".ladder-write-test.{}", std::process::id()));
        std::fs::write(&probe, b"")
            .map_err(|e| UsageError(format!("{flag} {}: not writable: {e}", dir.display())))?;
        let _ = std::fs::remove_file(&probe);
        Ok(())
    };
    usable_dir(&args.out, "--out")?;
    if args.save_baseline {
        for s in scenarios {
            let dir = args
                .baselines
                .clone()
                .unwrap_or_else(|| default_baselines_dir(&s.path));
            usable_dir(&dir, "--baselines")?;
            if let store::Keep::Pool(_) = baseline_keep(args, s) {
                pool_accepts(&store::baseline_paths(&dir, &s.name).runs, s)?;
            }
        }
    }
    match &args.against {
        Some(path) => match store::load_result(path) {
            Ok(base) => Ok(Some(Side::from_result(&base))),
            Err(e) => Err(UsageError(format!("--against: {e}")).into()),
        },
        None => Ok(None),
    }
}

/// One scenario, stage by stage: plan the target → execute (records stream to disk and are
/// summarized per step as they arrive) → summarize → analyze → persist → render → gate.
async fn run_one(
    s: &Scenario,
    args: &RunArgs,
    out: &Output,
    interrupt: &Interrupt,
    baseline: Option<&Side>,
) -> Result<ExitCode> {
    let sharding = shard_plan(args, s)?;
    let started = SystemTime::now();
    let (base_url, sim_handle) = sim::serve_endpoint(&s.target.endpoint)
        .await
        .context("cannot start the embedded simulator")?;
    let backend = Arc::new(http_backend(s, &base_url)?);
    let run_dir = match sharding.schedule.shard {
        Some(spec) => store::create_run_dir_named(
            &args.out,
            &s.name,
            sharding.schedule.start.unwrap_or(started),
            &format!("-shard-{}-of-{}", spec.index, spec.total),
        )?,
        None => store::create_run_dir(&args.out, &s.name, started)?,
    };
    let mut meta = run_meta(s, started);
    // A shard: its clock against the target's (before the common start) and its time origin.
    if let Some(spec) = sharding.schedule.shard {
        meta.shard =
            Some(shard_meta(spec, &sharding.schedule, &backend.http, &base_url, out).await);
    }
    // Per-request samples are kept for the bootstrap: a gate, or models judged in the run.
    let in_run_pairs = !args.pairs.is_empty() || s.compare_baseline.is_some();
    let mut recorder = Recorder::start(s, run_dir, meta, baseline.is_some() || in_run_pairs)?;
    announce(s, out);
    let progress = Arc::new(LiveProgress::new(
        crate::progress::Display::for_stderr(out.quiet),
        eta_plan(s),
    ));
    let interrupted = runner::run_scheduled(
        s,
        backend,
        progress.clone(),
        interrupt.clone(),
        &mut recorder,
        sharding.schedule,
    )
    .await;
    progress.finish();
    let sim_report = match sim_handle {
        Some(h) => Some(h.shutdown_and_report().await),
        None => None,
    };
    let mut run = recorder.finish()?;
    let findings = findings::analyze_run_with(&run.summaries, Some(&run.extras));
    persist(&mut run, &findings, sim_report, interrupted)?;
    let sink = verdict_sink(args.format, &args.gates);
    // With a machine format, stdout holds only the verdict document: people read stderr.
    let mut human: Box<dyn Write> = match (baseline.is_some() && sink.is_machine(), out.quiet) {
        (false, _) => Box::new(std::io::stdout()),
        (true, false) => Box::new(std::io::stderr()),
        (true, true) => Box::new(std::io::sink()),
    };
    render_run(s, &run, &findings, out, interrupted, &mut human)?;
    compare_models_in_run(s, args, &run, &findings, &mut human)?;
    drop(human);
    gate(s, args, &run, &findings, baseline, interrupted, &sink)
}

/// The real network client for a scenario's target at `base_url`.
fn http_backend(s: &Scenario, base_url: &str) -> Result<HttpBackend> {
    let max_c = s.load.ladder.iter().copied().max().unwrap_or(1) as usize;
    let http = build_http_client(&s.target.timeouts, &s.target.tls, max_c)
        .context("cannot build the HTTP client")?;
    if let Some(w) = crate::client::tls::insecure_warning(&s.target.tls) {
        eprintln!("warning: {w}");
    }
    let target = PreparedTarget::new(&s.target, base_url)
        .map_err(|e| UsageError(format!("{}: {e}", s.path.display())))?;
    Ok(HttpBackend { http, target })
}

/// What the progress line's ETA goes by: a rate ladder's or a timed step's schedule (known in
/// advance), else the pace so far over the planned requests.
fn eta_plan(s: &Scenario) -> crate::progress::EtaPlan {
    use crate::progress::EtaPlan;
    let steps = crate::plan::estimate::estimate(s, None);
    let scheduled = matches!(s.load.mode, crate::scenario::LoadMode::Rate { .. })
        || matches!(s.load.budget, crate::scenario::Budget::Duration(_));
    let steps_s: Option<Vec<f64>> = steps.iter().map(|e| e.duration_s).collect();
    match steps_s {
        Some(steps_s) if scheduled => EtaPlan::Schedule {
            steps_s,
            pause_s: s.load.pause_between_steps.as_secs_f64(),
        },
        _ => EtaPlan::Pace(steps.iter().map(|e| e.requests).sum()),
    }
}

/// `meta.json` as written before any traffic: `complete: false` until `persist`.
fn run_meta(s: &Scenario, started: SystemTime) -> store::Meta {
    let redactor = s.target.redactor().for_files();
    store::Meta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario: s.name.clone(),
        fingerprint: s.fingerprint.clone(),
        host: store::host_name(),
        started_at: store::rfc3339_utc(started),
        finished_at: String::new(),
        command_line: std::env::args().map(|a| redactor.redact(&a)).collect(),
        interrupted: false,
        models: s.target.models.clone(),
        ladder: s.load.ladder.clone(),
        ladder_unit: s.load.ladder_unit(),
        notes: Vec::new(),
        complete: false,
        steps: Vec::new(),
        slo: store::SloMs::from(&s.slo),
        short_below: s.request.short_below,
        shard: None,
        merged_from: Vec::new(),
    }
}

fn announce(s: &Scenario, out: &Output) {
    if !out.quiet {
        eprintln!(
            "ladder: {} · {} · {} · ladder {:?}",
            s.name,
            s.target.api.as_str(),
            s.target.models.join(", "),
            s.load.ladder
        );
    }
}

/// Writes what the run leaves besides its records: summary, findings, the simulator's own view,
/// and finally `meta.json` with `complete: true`.
fn persist(
    run: &mut CollectedRun,
    findings: &[ModelFindings],
    sim_report: Option<(sim::SimStats, Vec<sim::TruthRecord>)>,
    interrupted: bool,
) -> Result<()> {
    run.dir.write_summary(&run.summaries)?;
    run.dir
        .write_findings_json(&serde_json::to_value(findings)?)?;
    if let Some((stats, truth)) = &sim_report {
        run.dir.write_sim_report(stats, truth)?;
    }
    run.meta.finished_at = store::rfc3339_utc(SystemTime::now());
    run.meta.interrupted = interrupted;
    run.meta.complete = true;
    run.dir.write_meta(&run.meta)?;
    Ok(())
}

/// The results table, findings in sentences, and what went wrong.
/// `--pair A=B` (or the scenario's `compare: {baseline: A}`): B's steps judged against A's in
/// the same run, with the diff's rules and confidence intervals, printed after the run table.
fn compare_models_in_run(
    s: &Scenario,
    args: &RunArgs,
    run: &CollectedRun,
    findings: &[ModelFindings],
    human: &mut dyn Write,
) -> Result<()> {
    let pairs: Vec<compare::Pair> = if args.pairs.is_empty() {
        let base = s.compare_baseline.iter();
        base.flat_map(|b| {
            s.target
                .models
                .iter()
                .filter(move |m| *m != b)
                .map(move |m| compare::Pair {
                    old: b.clone(),
                    new: m.clone(),
                })
        })
        .collect()
    } else {
        args.pairs.clone()
    };
    if pairs.is_empty() {
        return Ok(());
    }
    let side = Side::from_parts(
        &run.dir.path.display().to_string(),
        run.summaries.clone(),
        run.samples.clone(),
        findings,
        None,
    );
    for p in &pairs {
        let (b, n) = (
            compare::only_models(&side, &[&p.old]),
            compare::only_models(&side, &[&p.new]),
        );
        if let Err(e) = compare::check_pairs(&b, &n, std::slice::from_ref(p)) {
            eprintln!("warning: {e}");
            continue;
        }
        let (mut b, mut n) = compare::pair_sides(&b, &n, std::slice::from_ref(p));
        b.label = p.old.clone();
        n.label = p.new.clone();
        let opts = CompareOptions::for_cli(s.gates.clone(), false, false);
        let comparison = compare::compare(&b, &n, &opts);
        writeln!(human, "\n{} vs {} (same run, same steps):", p.new, p.old)?;
        crate::render::diff::render(&comparison, DiffFormat::Table, human)?;
    }
    Ok(())
}

fn render_run(
    s: &Scenario,
    run: &CollectedRun,
    findings: &[ModelFindings],
    out: &Output,
    interrupted: bool,
    human: &mut dyn Write,
) -> Result<()> {
    use crate::render::table::{compare_models_table, run_table_marked, Interrupted};
    // The step the run stopped in: the last one summarized, unless it got all it planned.
    let stopped_in = run
        .summaries
        .last()
        .filter(|_| interrupted)
        .map(|r| Interrupted {
            model: &r.model,
            step: r.step,
            planned: crate::plan::estimate::estimate(s, None)
                .iter()
                .find(|e| e.model == r.model && e.value == r.concurrency)
                .and_then(|e| e.requests),
        })
        .filter(|i| {
            let got = run.summaries.last().map_or(0, |r| r.attempted);
            i.planned.map_or(true, |p| got < p)
        });
    writeln!(
        human,
        "{}",
        run_table_marked(&run.summaries, out.color, stopped_in)
    )?;
    if let Some(t) = compare_models_table(&run.summaries) {
        writeln!(human, "{t}")?;
    }
    for f in findings {
        for line in f.sentences() {
            writeln!(human, "{}: {line}", f.model)?;
        }
    }
    human.flush()?;
    if out.verbose > 0 {
        for line in run.failures.lines() {
            eprintln!("{line}");
        }
    }
    if run.failures.all_failed() {
        eprintln!(
            "warning: every request failed (first: {}). `ladder check {}` diagnoses the target; `-v` lists failures by class.",
            run.failures.first().unwrap_or_default(),
            s.path.display()
        );
    }
    // Always, even with --quiet: CI needs the path to upload or report the run.
    eprintln!("wrote {}", run.dir.path.display());
    Ok(())
}

/// The exit code: an interrupted or all-failed run is an error and never a baseline; otherwise
/// the run is judged against the baseline (in memory), then saved as the new baseline if asked
/// and allowed (`verdict::may_replace_baseline`).
fn gate(
    s: &Scenario,
    args: &RunArgs,
    run: &CollectedRun,
    findings: &[ModelFindings],
    baseline: Option<&Side>,
    interrupted: bool,
    sink: &verdict::Sink,
) -> Result<ExitCode> {
    if interrupted {
        eprintln!(
            "run interrupted: partial results written to {}",
            run.dir.path.display()
        );
        if args.save_baseline {
            eprintln!("baseline not saved: the run was interrupted (an incomplete ladder is never a baseline)");
        }
        if baseline.is_some() {
            eprintln!("not judged against --against: the run was interrupted (`ladder diff` can still compare what it measured)");
        }
        return Ok(ExitCode::Error);
    }
    if run.failures.all_failed() {
        // Nothing was measured: never gate on it, never keep it as a baseline.
        if args.save_baseline {
            eprintln!("baseline not saved: no request succeeded");
        }
        return Ok(ExitCode::Error);
    }
    // Judge against the existing baseline first: with `--save-baseline --against` the old
    // baseline is the reference, and it is replaced only afterwards.
    let mut code = ExitCode::Ok;
    if let Some(base) = baseline {
        let new = Side::from_parts(
            &run.dir.path.display().to_string(),
            run.summaries.clone(),
            run.samples.clone(),
            findings,
            Some(run.workload_yaml.clone()),
        );
        let opts = compare_options(&args.gates, s.gates.clone());
        let comparison = compare::compare(base, &new, &opts);
        let ctx = DiffContext {
            run_dir: Some(run.dir.path.display().to_string()),
            gates: Some(verdict::describe(
                &s.gates,
                &verdict::GatesSource::Scenario(s.path.clone()),
            )),
            warnings: Vec::new(),
        };
        code = sink.emit(&comparison, &ctx)?;
    }
    let replace = verdict::may_replace_baseline(baseline.map(|_| code), args.force);
    if let (true, Err(kept)) = (args.save_baseline, &replace) {
        eprintln!("{kept}");
    }
    if args.save_baseline && replace.is_ok() {
        let dir = args
            .baselines
            .clone()
            .unwrap_or_else(|| default_baselines_dir(&s.path));
        let paths = store::baseline_paths(&dir, &s.name);
        // The run's rows are in completion order; the baseline's are stably ordered (model,
        // step, worker, seq) so that `git diff` of a baseline update stays readable.
        let records = store::read_requests_csv(&run.dir.path.join(store::REQUESTS_FILE), false)?;
        let summary = store::summary_csv(&run.summaries);
        let pooled = match baseline_keep(args, s) {
            store::Keep::Replace => {
                store::clear_pool(&paths.runs)?;
                String::new()
            }
            store::Keep::Pool(keep) => {
                let id = run
                    .dir
                    .path
                    .file_name()
                    .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned());
                let n = store::add_to_pool(&paths.runs, &id, &summary, keep)?;
                let widen = if n >= crate::stats::drift::MIN_POOLED_RUNS {
                    "the gate widens each check by their run-to-run spread"
                } else {
                    "3 or more widen the gate by their run-to-run spread"
                };
                format!(
                    " (pooled: {n} of the last {keep} runs in {}; {widen})",
                    paths.runs.display()
                )
            }
        };
        store::write_baseline(
            &paths,
            &summary,
            &store::requests_csv(&records),
            &run.workload_yaml,
        )?;
        eprintln!("saved baseline {}{pooled}", paths.summary.display());
    }
    Ok(code)
}

/// Runs a pooled baseline keeps when `--append` is given without `baselines.keep`.
const DEFAULT_POOLED_RUNS: u32 = 5;

/// How `--save-baseline` keeps earlier runs: pooled with `--append` or `baselines.keep` > 1.
fn baseline_keep(args: &RunArgs, s: &Scenario) -> store::Keep {
    let keep = s
        .baselines_keep
        .unwrap_or(if args.append { DEFAULT_POOLED_RUNS } else { 1 });
    if args.append || keep > 1 {
        store::Keep::Pool(keep)
    } else {
        store::Keep::Replace
    }
}

/// A pooled baseline only pools runs of one workload: refuses (before any traffic) to add this
/// scenario's run to a pool measured with another fingerprint.
fn pool_accepts(runs_dir: &Path, s: &Scenario) -> Result<()> {
    let pool = store::read_pool(runs_dir).map_err(|e| UsageError(e.to_string()))?;
    if let Some((id, rows)) = pool
        .iter()
        .find(|(_, rows)| rows.iter().any(|r| r.fingerprint != s.fingerprint))
    {
        let theirs = rows.first().map_or("", |r| r.fingerprint.as_str());
        anyhow::bail!(
            "refusing to pool this run into {}: its run {id} was measured with another workload (fingerprint {theirs}, this scenario's is {}); nothing was sent. Save once without --append (and without baselines.keep) to start a new baseline, or run the workload the pool was measured with",
            runs_dir.display(),
            s.fingerprint
        );
    }
    Ok(())
}

/// `scenarios/x.yaml` -> `baselines/` beside the scenarios folder.
fn default_baselines_dir(scenario_path: &Path) -> PathBuf {
    let dir = scenario_path.parent().unwrap_or(Path::new("."));
    let parent = dir.parent().unwrap_or(Path::new("."));
    if dir.as_os_str().is_empty() {
        PathBuf::from("baselines")
    } else {
        parent.join("baselines")
    }
}

/// Reads one side of a diff; a missing or malformed input is the user's input error (exit 2). A
/// run that never finished is read from its records, with a note saying where it stopped.
fn load_input(path: &Path) -> Result<(Side, Option<String>)> {
    let loaded = store::load_result(path).map_err(|e| UsageError(e.to_string()))?;
    if let Some(stopped) = &loaded.incomplete {
        eprintln!(
            "note: {} is an incomplete run ({stopped}); it is compared on the records it wrote",
            path.display()
        );
    }
    Ok((Side::from_result(&loaded), loaded.incomplete))
}

/// `ladder summarize RUN`: summary.csv and findings.json rebuilt from requests.csv.
fn summarize(args: &SummarizeArgs, out: &Output) -> Result<ExitCode> {
    let dir = &args.run;
    let meta_path = dir.join(store::META_FILE);
    if !meta_path.is_file() {
        return Err(UsageError(format!(
            "{}: not a run directory (it has no {}); pass runs/<scenario>/<timestamp>/",
            dir.display(),
            store::META_FILE
        ))
        .into());
    }
    let meta = store::read_meta(&meta_path).map_err(|e| UsageError(e.to_string()))?;
    let loaded = store::rebuild_run(dir, &meta).map_err(|e| UsageError(e.to_string()))?;
    let findings = findings::analyze_run(&loaded.summaries, loaded.requests.as_deref());
    let run_dir = store::RunDir { path: dir.clone() };
    run_dir.write_summary(&loaded.summaries)?;
    run_dir.write_findings_json(&serde_json::to_value(&findings)?)?;
    let requests = loaded.requests.as_ref().map_or(0, Vec::len);
    match &loaded.incomplete {
        Some(stopped) => eprintln!(
            "{}: incomplete run ({stopped}); {requests} records, {} finished step(s)",
            dir.display(),
            meta.steps.len()
        ),
        None if !out.quiet => eprintln!("{}: complete run; {requests} records", dir.display()),
        None => {}
    }
    if !out.quiet {
        eprintln!("wrote {} and {}", store::SUMMARY_FILE, store::FINDINGS_FILE);
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        crate::render::table::run_table(&loaded.summaries, out.color)
    )?;
    for f in &findings {
        for line in f.sentences() {
            writeln!(stdout, "{}: {line}", f.model)?;
        }
    }
    Ok(ExitCode::Ok)
}

/// `ladder diff BASELINE RUN`: judged with the gates recorded with RUN (its scenario.yaml)
/// unless `--gates-from` names a scenario, so it gives the verdict `run --against` gave.
fn diff(args: &DiffArgs, _out: &Output) -> Result<ExitCode> {
    use verdict::GatesSource;
    let (base, base_stopped) = load_input(&args.baseline)?;
    let (new, new_stopped) = load_input(&args.run)?;
    // A side that did not finish: a warning in every format, and advice for its planned count.
    let partials = [
        partial::read(
            &args.baseline,
            "the baseline",
            base_stopped.as_deref(),
            &base.summaries,
        ),
        partial::read(
            &args.run,
            "the new run",
            new_stopped.as_deref(),
            &new.summaries,
        ),
    ];
    let (gates, source) = match &args.gates_from {
        Some(p) => (
            load_without_secrets(p)?.0.gates,
            GatesSource::Flag(p.clone()),
        ),
        None => match verdict::recorded_gates(&args.run).map_err(UsageError)? {
            Some((g, file)) => (g, GatesSource::Recorded(file)),
            None => (scenario::Gates::default(), GatesSource::Default),
        },
    };
    let (base, new) = if args.pairs.is_empty() {
        (base, new)
    } else {
        compare::check_pairs(&base, &new, &args.pairs).map_err(UsageError)?;
        compare::pair_sides(&base, &new, &args.pairs)
    };
    let opts = compare_options(&args.gates, gates.clone());
    let mut comparison = compare::compare(&base, &new, &opts);
    partial::restate_advice(
        &mut comparison,
        &gates,
        (partials[0].as_ref(), &base.summaries),
        (partials[1].as_ref(), &new.summaries),
    );
    let ctx = DiffContext {
        run_dir: args.run.is_dir().then(|| args.run.display().to_string()),
        gates: Some(verdict::describe(&gates, &source)),
        warnings: partials.iter().flatten().map(Partial::warning).collect(),
    };
    Ok(verdict_sink(args.format, &args.gates).emit(&comparison, &ctx)?)
}

fn compare_options(gate_args: &GateArgs, gates: scenario::Gates) -> CompareOptions {
    CompareOptions::for_cli(gates, gate_args.allow_different_workload, gate_args.strict)
}

fn verdict_sink(format: DiffFormatArg, gate_args: &GateArgs) -> verdict::Sink {
    let format = match format {
        DiffFormatArg::Table => DiffFormat::Table,
        DiffFormatArg::Markdown => DiffFormat::Markdown,
        DiffFormatArg::Json => DiffFormat::Json,
        DiffFormatArg::Junit => DiffFormat::Junit,
    };
    verdict::Sink::new(format, gate_args.no_step_summary)
}

/// `ladder merge RUN... -o DIR`: joins the shards of a sharded run into one run directory
/// (read → merge → analyze → write → show). Missing or unfinished shards are reported and make
/// the exit code 1; shards of different runs are refused (exit 1); bad paths exit 2.
fn merge_runs(args: &MergeArgs, out: &Output) -> Result<ExitCode> {
    let usage = |e: store::StoreError| UsageError(e.to_string());
    store::check_merge_output(&args.out).map_err(usage)?;
    if let Some(wait) = args.wait {
        wait_for_shards(&args.runs, wait, out.quiet);
    }
    let dirs = store::find_runs(&args.runs).map_err(usage)?;
    if dirs.is_empty() {
        let inputs: Vec<String> = args.runs.iter().map(|p| p.display().to_string()).collect();
        return Err(UsageError(format!(
            "no run directories (folders with a meta.json) in {}",
            inputs.join(", ")
        ))
        .into());
    }
    let mut scenario_yaml = None;
    let mut slo = None;
    let mut workload_yaml = None;
    let mut shards = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        let f = store::read_shard(dir).map_err(usage)?;
        scenario_yaml = scenario_yaml.or(f.scenario_yaml);
        workload_yaml = workload_yaml.or(f.workload_yaml);
        slo = slo.or_else(|| Some(scenario::Slo::from(&f.meta.slo)));
        shards.push(merge::ShardRun {
            label: dir.display().to_string(),
            stopped: f.stopped,
            meta: f.meta,
            summaries: f.summaries,
            records: f.records,
        });
    }
    let mut merged = merge::merge(shards, &slo.unwrap_or_default())?;
    merged.meta.command_line = std::env::args().collect();
    let findings = findings::analyze_run(&merged.summaries, Some(&merged.records));
    let run_dir = store::write_merged(
        &args.out,
        &store::MergedFiles {
            meta: &merged.meta,
            summaries: &merged.summaries,
            records: &merged.records,
            scenario_yaml: scenario_yaml.as_deref(),
            workload_yaml: workload_yaml.as_deref(),
            findings: &serde_json::to_value(&findings)?,
        },
    )?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        crate::render::table::run_table(&merged.summaries, out.color)
    )?;
    for f in &findings {
        for line in f.sentences() {
            writeln!(stdout, "{}: {line}", f.model)?;
        }
    }
    drop(stdout);
    for p in &merged.problems {
        eprintln!("warning: {p}");
    }
    if !out.quiet {
        eprintln!(
            "merged {} shard(s), {} requests: wrote {}",
            merged.meta.merged_from.len(),
            merged.records.len(),
            run_dir.path.display()
        );
    }
    Ok(if merged.problems.iter().any(merge::Problem::is_partial) {
        ExitCode::Error
    } else {
        ExitCode::Ok
    })
}

/// `merge --wait`: polls until every shard of the run has finished or `wait` has passed.
fn wait_for_shards(inputs: &[PathBuf], wait: Duration, quiet: bool) {
    let deadline = std::time::Instant::now() + wait;
    let mut said = false;
    loop {
        let dirs = store::find_runs(inputs).unwrap_or_default();
        if store::shards_settled(&dirs, crate::clock::now_unix_ms()) {
            return;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            if !quiet {
                eprintln!(
                    "merge: waited {}; merging what is there",
                    humantime::format_duration(wait)
                );
            }
            return;
        }
        if !said && !quiet {
            eprintln!(
                "merge: waiting for every shard to finish ({} found so far)",
                dirs.len()
            );
            said = true;
        }
        std::thread::sleep(left.min(Duration::from_secs(2)));
    }
}

/// What `--shard`, `--start-at` and `--step-every` (or the environment) ask of a run.
struct ShardPlan {
    schedule: runner::Schedule,
}

/// Resolves and checks the sharding flags for scenario `s` (before any traffic).
fn shard_plan(args: &RunArgs, s: &Scenario) -> Result<ShardPlan> {
    let spec = match args.shard {
        Some(spec) => Some(spec),
        None => crate::shard::from_env(|n| std::env::var(n).ok()).map_err(UsageError)?,
    };
    let start = match args.start_at.as_deref() {
        Some(t) => Some(humantime::parse_rfc3339_weak(t.trim()).map_err(|e| {
            UsageError(format!(
                "--start-at `{t}`: {e}; expected an RFC 3339 UTC time such as 2026-11-30T12:00:00Z"
            ))
        })?),
        None => None,
    };
    let every = match (args.step_every, s.load.budget) {
        (Some(every), _) => Some(every),
        (None, _) if spec.is_none() || start.is_none() => None,
        (None, scenario::Budget::Duration(d)) => {
            Some(s.load.ramp_up + d + s.load.pause_between_steps)
        }
        (None, _) => {
            return Err(UsageError(format!(
                "{}: --shard with --start-at needs --step-every DURATION with a request budget: \
                 every shard must start step k at the same time, so each step gets a fixed time \
                 slot (long enough for the step), e.g. --step-every 2m",
                s.path.display()
            ))
            .into())
        }
    };
    if spec.is_some() && (args.against.is_some() || args.save_baseline) {
        return Err(UsageError(
            "--shard runs part of the load: merge the shards (`ladder merge`), then diff or save \
             the merged run"
                .into(),
        )
        .into());
    }
    Ok(ShardPlan {
        schedule: runner::Schedule {
            start,
            every,
            shard: spec,
        },
    })
}

/// A shard's `meta.json` block: its clock offset against the target (measured now, before the
/// common start) and the time origin of its records.
async fn shard_meta(
    spec: crate::shard::ShardSpec,
    schedule: &runner::Schedule,
    http: &reqwest::Client,
    base_url: &str,
    out: &Output,
) -> crate::shard::ShardMeta {
    let clock = crate::clock::estimate_offset(http, base_url).await;
    let unix_ms = |t: SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    if !out.quiet {
        let clock_note = match clock {
            Some(c) => format!(
                "clock {:+.0} ms ± {:.0} ms vs the target",
                c.offset_ms, c.error_ms
            ),
            None => "clock offset unknown (no Date header from the target)".into(),
        };
        let start_note = match schedule.start {
            Some(t) => format!("starts at {}", store::rfc3339_utc(t)),
            None => {
                "starts now (no --start-at: the shards overlap only if launched together)".into()
            }
        };
        eprintln!("shard {spec}: {start_note}; {clock_note}");
    }
    crate::shard::ShardMeta {
        index: spec.index,
        total: spec.total,
        start_at: schedule.start.map(store::rfc3339_utc),
        step_every_s: schedule.every.map(|d| d.as_secs_f64()),
        // The runner's time origin: the common start, or now (it starts right after this).
        origin_unix_ms: schedule
            .start
            .map_or_else(crate::clock::now_unix_ms, unix_ms),
        clock_offset_ms: clock.map(|c| c.offset_ms),
        clock_offset_error_ms: clock.map(|c| c.error_ms),
    }
}
