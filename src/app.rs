//! Wires the subcommands together: the only module that combines scenario loading, the
//! simulator, the runner, statistics, findings, comparison, storage and rendering.

use crate::cli::{Cli, Command, DiffArgs, DiffFormatArg, GateArgs, RunArgs, SimArgs, ValidateArgs};
use crate::client::http::{build_http_client, PreparedTarget};
use crate::compare::{self, CompareOptions, Side};
use crate::findings::{self, ModelFindings};
use crate::progress::LiveProgress;
use crate::record::RequestRecord;
use crate::render::diff::DiffFormat;
use crate::runner::{self, Interrupt};
use crate::scenario::{self, Endpoint, Scenario, ScenarioError};
use crate::sim::{self, SimParams};
use crate::stats::{self, StepContext, StepSummary};
use crate::store::{self, LoadedResult};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
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
        Command::Diff(args) => diff(&args, &out),
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
    let mut names = missing.into_inner();
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
    preflight(args, &scenarios)?;
    let interrupt = Interrupt::new();
    install_interrupt(StopSignals::register()?, interrupt.clone(), out.quiet);
    let mut code = ExitCode::Ok;
    for s in &scenarios {
        let c = run_one(s, args, out, &interrupt).await?;
        code = code.max(c);
        if interrupt.is_stopped() {
            return Ok(ExitCode::Error);
        }
    }
    Ok(code)
}

/// Checks every place a run will write or read before any traffic is sent: a ladder that runs
/// for an hour must not fail at the end because `--out` is not writable.
fn preflight(args: &RunArgs, scenarios: &[Scenario]) -> Result<()> {
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
        }
    }
    if let Some(baseline) = &args.against {
        if let Err(e) = store::load_result(baseline) {
            return Err(UsageError(format!("--against: {e}")).into());
        }
    }
    Ok(())
}

async fn run_one(
    s: &Scenario,
    args: &RunArgs,
    out: &Output,
    interrupt: &Interrupt,
) -> Result<ExitCode> {
    let started = SystemTime::now();
    let (base_url, sim_handle) = match &s.target.endpoint {
        Endpoint::Url(url) => (url.clone(), None),
        Endpoint::Sim(params) => {
            let h = sim::start(params.clone(), ([127, 0, 0, 1], 0).into())
                .await
                .context("cannot start the embedded simulator")?;
            (h.base_url(), Some(h))
        }
    };
    let max_c = s.load.ladder.iter().copied().max().unwrap_or(1) as usize;
    let http =
        build_http_client(&s.target.timeouts, max_c).context("cannot build the HTTP client")?;
    let target = PreparedTarget::new(&s.target, &base_url)
        .map_err(|e| UsageError(format!("{}: {e}", s.path.display())))?;
    if !out.quiet {
        eprintln!(
            "ladder: {} · {} · {} · ladder {:?}",
            s.name,
            s.target.api.as_str(),
            s.target.models.join(", "),
            s.load.ladder
        );
    }
    let progress = Arc::new(LiveProgress::new(!out.quiet));
    let output = runner::run(s, http, target, progress.clone(), interrupt.clone()).await;
    progress.finish();
    // What the embedded simulator says it did (injected faults, 429s, peak concurrency).
    let (sim_stats, sim_truth) = match sim_handle {
        Some(h) => {
            let (stats, truth) = h.shutdown_and_report().await;
            (
                serde_json::to_value(stats).ok(),
                serde_json::to_value(truth).ok(),
            )
        }
        None => (None, None),
    };
    let finished = SystemTime::now();

    let summaries = summarize(s, &output);
    let findings = analyze_all(s, &summaries, &output.records);

    // Write everything collected, interrupted or not.
    let run_dir = store::create_run_dir(&args.out, &s.name, started)?;
    run_dir.write_summary(&summaries)?;
    run_dir.write_requests(&output.records)?;
    run_dir.write_scenario_yaml(&scenario::normalized_yaml(s))?;
    run_dir.write_workload_yaml(&scenario::workload_yaml(s))?;
    run_dir.write_findings_json(&serde_json::to_value(&findings)?)?;
    let redactor = s.target.redactor().for_files();
    let meta = store::Meta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario: s.name.clone(),
        fingerprint: s.fingerprint.clone(),
        host: store::host_name(),
        started_at: store::rfc3339_utc(started),
        finished_at: store::rfc3339_utc(finished),
        command_line: std::env::args().map(|a| redactor.redact(&a)).collect(),
        interrupted: output.interrupted,
        models: s.target.models.clone(),
        ladder: s.load.ladder.clone(),
        notes: Vec::new(),
    };
    run_dir.write_meta(&meta)?;
    // The embedded simulator's own view: what it injected, and per-request server-side truth
    // (arrival, first and last token) keyed by request_id, to check the client's timings.
    if let Some(stats) = &sim_stats {
        store::write_atomic(
            &run_dir.path.join("sim_stats.json"),
            serde_json::to_string_pretty(stats)?.as_bytes(),
        )?;
    }
    if let Some(truth) = &sim_truth {
        store::write_atomic(
            &run_dir.path.join("sim_truth.json"),
            serde_json::to_string(truth)?.as_bytes(),
        )?;
    }

    // Show results.
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        crate::render::table::run_table(&summaries, out.color)
    )?;
    if let Some(t) = crate::render::table::compare_models_table(&summaries) {
        writeln!(stdout, "{t}")?;
    }
    for f in &findings {
        for line in f.sentences() {
            writeln!(stdout, "{}: {line}", f.model)?;
        }
    }
    drop(stdout);
    if out.verbose > 0 {
        print_error_breakdown(&output.records);
    }
    let succeeded = output.records.iter().filter(|r| r.is_ok()).count();
    let all_failed = !output.records.is_empty() && succeeded == 0;
    if all_failed {
        let first = output.records.iter().find_map(|r| {
            r.error_class
                .map(|c| format!("{c}: {}", r.error_message.clone().unwrap_or_default()))
        });
        eprintln!(
            "warning: every request failed (first: {}). `ladder check {}` diagnoses the target; `-v` lists failures by class.",
            first.unwrap_or_default(),
            s.path.display()
        );
    }
    if !out.quiet {
        eprintln!("wrote {}", run_dir.path.display());
    }
    if output.interrupted {
        eprintln!(
            "run interrupted: partial results written to {}",
            run_dir.path.display()
        );
        return Ok(ExitCode::Error);
    }

    if all_failed {
        // Nothing was measured: never gate on it, never keep it as a baseline.
        if args.save_baseline {
            eprintln!("baseline not saved: no request succeeded");
        }
        return Ok(ExitCode::Error);
    }

    // Judge against the existing baseline first: with `--save-baseline --against` the old
    // baseline is the reference, and it is replaced only afterwards.
    let mut code = ExitCode::Ok;
    if let Some(baseline) = &args.against {
        let base = store::load_result(baseline)?;
        let new = store::load_result(&run_dir.path)?;
        code = diff_results(
            &base,
            &new,
            &args.gates,
            args.format,
            Some(s.gates.clone()),
            out,
        )?;
    }

    if args.save_baseline {
        let dir = args
            .baselines
            .clone()
            .unwrap_or_else(|| default_baselines_dir(&s.path));
        let paths = store::baseline_paths(&dir, &s.name);
        store::write_baseline(
            &paths,
            &store::summary_csv(&summaries),
            &store::requests_csv(&output.records),
            &scenario::workload_yaml(s),
        )?;
        if !out.quiet {
            eprintln!("saved baseline {}", paths.summary.display());
        }
    }
    Ok(code)
}

/// `-v`: failed requests by model, class and HTTP status, with the first (redacted) message.
fn print_error_breakdown(records: &[RequestRecord]) {
    let mut classes: BTreeMap<(String, String, String), (u64, String)> = BTreeMap::new();
    for r in records {
        let Some(class) = r.error_class else { continue };
        let status = r.http_status.map(|s| s.to_string()).unwrap_or_default();
        let entry = classes
            .entry((r.model.clone(), class.to_string(), status))
            .or_insert_with(|| (0, r.error_message.clone().unwrap_or_default()));
        entry.0 += 1;
    }
    if classes.is_empty() {
        eprintln!("no failed requests");
        return;
    }
    eprintln!("failed requests by class:");
    for ((model, class, status), (n, message)) in classes {
        let status = if status.is_empty() {
            String::new()
        } else {
            format!(" (HTTP {status})")
        };
        eprintln!("  {model}: {class}{status} ×{n}: {message}");
    }
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

fn summarize(s: &Scenario, output: &runner::RunOutput) -> Vec<StepSummary> {
    let mut by_step: BTreeMap<(usize, u32), Vec<RequestRecord>> = BTreeMap::new();
    let model_index = |m: &str| s.target.models.iter().position(|x| x == m).unwrap_or(0);
    for r in &output.records {
        by_step
            .entry((model_index(&r.model), r.step))
            .or_default()
            .push(r.clone());
    }
    let mut rows = Vec::new();
    for step_run in &output.steps {
        let key = (model_index(&step_run.model), step_run.step);
        let records = by_step.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let ctx = StepContext {
            scenario: &s.name,
            fingerprint: &s.fingerprint,
            model: &step_run.model,
            step: step_run.step,
            concurrency: step_run.concurrency,
            duration_s: step_run.duration_s,
            slo: &s.slo,
        };
        let mut row = stats::summarize_step(&ctx, records);
        row.client_cpu_pct = step_run.client_cpu_pct;
        row.loop_lag_p99_ms = step_run.loop_lag_p99_ms;
        rows.push(row);
    }
    // Interleaved run order (A@5, B@5, ...) -> per model, then by step.
    rows.sort_by_key(|r| (model_index(&r.model), r.step));
    rows
}

fn analyze_all(
    s: &Scenario,
    summaries: &[StepSummary],
    records: &[RequestRecord],
) -> Vec<ModelFindings> {
    let extras = findings::extras_from_records(records);
    s.target
        .models
        .iter()
        .map(|m| {
            let steps: Vec<StepSummary> = summaries
                .iter()
                .filter(|r| &r.model == m)
                .cloned()
                .collect();
            let ex: Vec<findings::StepExtras> = steps
                .iter()
                .map(|r| {
                    extras
                        .get(&(m.clone(), r.step))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            findings::analyze(m, &steps, Some(&ex))
        })
        .collect()
}

/// Reads one side of a diff; a missing or malformed input is the user's input error (exit 2).
fn load_input(path: &Path) -> Result<LoadedResult> {
    store::load_result(path).map_err(|e| UsageError(e.to_string()).into())
}

fn diff(args: &DiffArgs, out: &Output) -> Result<ExitCode> {
    let base = load_input(&args.baseline)?;
    let new = load_input(&args.run)?;
    let gates = match &args.gates_from {
        Some(p) => Some(load_without_secrets(p)?.0.gates),
        None => None,
    };
    diff_results(&base, &new, &args.gates, args.format, gates, out)
}

fn diff_results(
    base: &LoadedResult,
    new: &LoadedResult,
    gate_args: &GateArgs,
    format: DiffFormatArg,
    gates: Option<scenario::Gates>,
    _out: &Output,
) -> Result<ExitCode> {
    let opts = CompareOptions::for_cli(
        gates.unwrap_or_default(),
        gate_args.allow_different_workload,
        gate_args.strict,
    );
    let comparison = compare::compare(&Side::from_result(base), &Side::from_result(new), &opts);
    let format = match format {
        DiffFormatArg::Table => DiffFormat::Table,
        DiffFormatArg::Markdown => DiffFormat::Markdown,
        DiffFormatArg::Json => DiffFormat::Json,
        DiffFormatArg::Junit => DiffFormat::Junit,
    };
    let code = comparison.exit_code();
    let mut stdout = std::io::stdout().lock();
    let written =
        crate::render::diff::render(&comparison, format, &mut stdout).and_then(|()| stdout.flush());
    match written {
        // `ladder diff ... | head`: the reader left, the verdict still stands.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(code),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(code),
    }
}
