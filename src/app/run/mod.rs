//! `ladder run`: loads and checks every scenario before any traffic, then runs each one through
//! the stages (plan → execute → summarize → analyze → persist → render → gate).

mod adhoc;
mod baseline;
mod confirm;
mod extra_step;
mod fdlimit;
mod gate;
mod judge;
mod limit_watch;
mod options;
mod otlp;
mod persist;
mod preflight;
pub(crate) mod progress;
pub(crate) mod recorder;
mod refine;
mod render;
mod scrape;
mod search;
mod shard;
mod signals;
mod telemetry;

use super::Output;
use crate::app::verdict;
use crate::app::verdict::compare_options;
use crate::app::verdict::Against;
use crate::cli::RunArgs;
use crate::client::builder::ClientError;
use crate::client::http::{HttpBackend, PreparedTarget};
use crate::client::pool::Pool;
use crate::client::tls::{system_roots_needed, SystemRoots};
use crate::compare;
use crate::error::{ExitCode, RunEnd, UsageError};
use crate::findings;
use crate::render::diff::DiffFormat;
use crate::runner::{self, Interrupt};
use crate::scenario::Scenario;
use crate::store;
use anyhow::{Context, Result};
use gate::gate;
use options::{RunEnv, RunOptions};
use persist::{persist, run_meta};
use preflight::preflight;
use progress::LiveProgress;
use recorder::{Kept, Recorder};
use render::{compare_models_in_run, render_run};
use shard::shard_meta;
use signals::{install_interrupt, StopSignals};
use std::io::Write;
use std::sync::Arc;
use std::time::SystemTime;

pub(super) async fn run_scenarios(args: &RunArgs, out: &Output) -> Result<ExitCode> {
    // Load and check everything before sending any traffic.
    let (scenarios, opts) = options::build(args, out)?;
    // What the run will send, and the declared limits it would cross: before any traffic.
    let baselines =
        |s: &Scenario| store::baseline_paths(&opts.baselines.dir_for(s), &s.name).summary;
    if crate::app::plan::before_traffic(&scenarios, &baselines, opts.dry_run, out.quiet)? {
        for s in &scenarios {
            let gates = compare_options(&opts.gates, s.gates.clone()).gates;
            let path = opts.against.clone().unwrap_or_else(|| baselines(s));
            for line in crate::app::budget::lines_from_path(s, &gates, &path) {
                outln!("{line}")?;
            }
        }
        return Ok(ExitCode::Ok);
    }
    if !opts.dry_run {
        fdlimit::ensure(&scenarios)?;
    }
    let baseline = preflight(&opts, &scenarios)?;
    if !out.quiet {
        for s in &scenarios {
            for n in compare::sample_size_notes(&s.load) {
                eprintln!("note: {}: {n}", s.name);
            }
        }
    }
    if let (Some(base), Some(s)) = (&baseline, scenarios.first()) {
        let compare = compare_options(&opts.gates, s.gates.clone());
        if let Some(refused) = verdict::refuse_before_traffic(&base.side, s, &compare) {
            eprintln!(
                "refusing --against {}: it was measured with another workload (fingerprint {} vs {}); nothing was sent",
                base.side.label, base.side.fingerprint, s.fingerprint
            );
            let sink = opts.output.verdict_sink(&opts.gates);
            return Ok(sink.emit(&refused, &Default::default())?);
        }
        if !out.quiet {
            for line in crate::app::budget::lines_from_side(s, &compare.gates, &base.side) {
                eprintln!("{line}");
            }
        }
    }
    let live = telemetry::Live::start(&opts.telemetry, out.quiet).await?;
    let interrupt = if opts.fail_fast {
        Interrupt::new().with_fail_fast()
    } else {
        Interrupt::new()
    };
    install_interrupt(
        StopSignals::register()?,
        interrupt.clone(),
        opts.env.stop,
        out.quiet,
    );
    let session = Session {
        opts: &opts,
        out,
        interrupt: &interrupt,
        baseline: baseline.as_ref(),
        live: live.as_ref(),
    };
    let code = run_all(&scenarios, &session).await;
    if let Some(live) = live {
        live.finish().await;
    }
    code
}

/// What every scenario of one `ladder run` shares.
#[derive(Clone, Copy)]
struct Session<'a> {
    opts: &'a RunOptions,
    out: &'a Output,
    interrupt: &'a Interrupt,
    /// `--against`.
    baseline: Option<&'a Against>,
    /// The live metrics endpoint, when asked for.
    live: Option<&'a telemetry::Live>,
}

/// Every scenario in turn; an interrupt stops after the current one.
async fn run_all(scenarios: &[Scenario], session: &Session<'_>) -> Result<ExitCode> {
    let mut code = ExitCode::Ok;
    for (s, schedule) in scenarios.iter().zip(&session.opts.schedules) {
        let c = run_one(s, schedule, session).await?;
        code = code.combine(c);
        if session.interrupt.is_stopped() {
            // The scenarios after this one never run: the run as a whole stopped. A regression
            // found so far (in this scenario or an earlier one) still decides the exit code.
            let rest = ExitCode::of_run(RunEnd::Stopped { verdict: None });
            return Ok(code.combine(rest));
        }
    }
    Ok(code)
}

/// One scenario, stage by stage: plan the target → execute (records stream to disk and are
/// summarized per step as they arrive) → summarize → analyze → persist → render → gate.
async fn run_one(
    s: &Scenario,
    schedule: &runner::Schedule,
    session: &Session<'_>,
) -> Result<ExitCode> {
    let Session {
        opts,
        out,
        interrupt,
        baseline,
        live,
    } = *session;
    let started = SystemTime::now();
    let (base_url, sim_handle) = crate::client::endpoint::serve_endpoint(&s.target.endpoint)
        .await
        .context("cannot start the embedded simulator")?;
    let backend = Arc::new(http_backend(s, &base_url, &opts.env)?);
    let run_dir = new_run_dir(&opts.out, s, schedule, started)?;
    // The run's `run_id` label in the live metrics: its directory's name.
    let run_id = run_dir
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut meta = run_meta(s, started);
    // A shard: its clock against the target's (before the common start) and its time origin.
    if let Some(spec) = schedule.shard {
        meta.shard = Some(shard_meta(spec, schedule, &backend.pool.client(), &base_url, out).await);
    }
    // Per-request samples are kept for the bootstrap: a gate, or models judged in the run.
    let in_run_pairs = !opts.pairs.is_empty() || s.compare_baseline.is_some();
    let mut recorder = Recorder::start(
        s,
        run_dir,
        meta,
        Kept::new(baseline.is_some() || in_run_pairs),
    )?;
    announce(s, out);
    let progress = Arc::new(LiveProgress::new(
        progress::Display::for_stderr(out.quiet),
        eta_plan(s),
    ));
    let (otlp, events) = otlp::sinks(s, &opts.telemetry, live, &run_id, out.quiet, &progress)?;
    let (scraper, events) = scrape::start_for(s, &base_url, events);
    let mut watched = limit_watch::LimitWatch::new(&mut recorder, s, out.quiet);
    let interrupted = runner::run_scheduled(
        s,
        backend.clone(),
        events.clone(),
        interrupt.clone(),
        &mut watched,
        *schedule,
    )
    .await;
    let (refined, interrupted) =
        search::then_refine(s, (backend, events), interrupt, &mut recorder, interrupted).await;
    progress.finish();
    otlp::finish(otlp).await;
    // Stopped before the simulator, whose /metrics it may be reading.
    let server_metrics = scrape::finish_for(scraper, &s.name).await;
    let sim_report = match sim_handle {
        Some(h) => Some(h.shutdown_and_report().await),
        None => None,
    };
    if let Some(t) = interrupt.tripped() {
        explain_fail_fast(s, &t).await;
    }
    let mut run = recorder.finish()?;
    if let Some(t) = interrupt.tripped() {
        run.meta.notes.push(t.sentence());
    }
    // Why it stopped, when it did: meta.json keeps it, and every document below says it.
    run.meta.stopped_by = interrupted.then(|| interrupt.stopped_by()).flatten();
    scrape::keep(&mut run, server_metrics.as_deref());
    let findings = run_findings(s, &run, &refined);
    persist(
        &mut run,
        &findings,
        server_metrics.as_deref(),
        sim_report,
        interrupted,
    )?;
    let sink = opts.output.verdict_sink(&opts.gates);
    show_run(s, opts, out, &run, &findings, interrupted)?;
    let rerun = confirm::Rerun {
        interrupt,
        quiet: out.quiet,
    };
    let judging = judge::Judging {
        s,
        opts,
        run: &run,
        findings: &findings,
    };
    gate(judging, baseline, interrupted, &sink, rerun).await
}

/// The run's findings, with what its refining and search steps add.
fn run_findings(
    s: &Scenario,
    run: &recorder::CollectedRun,
    refined: &[u32],
) -> Vec<findings::ModelFindings> {
    let mut findings = findings::analyze_run_with(&run.summaries, Some(&run.tap.extras));
    refine::add_notes(s, refined, &run.summaries, &mut findings);
    refine::add_breaks(s, &run.summaries, &mut findings);
    search::add_capacity(s, &run.summaries, refined.len(), &mut findings);
    findings
}

/// The run for people (the table, the models judged in the run) and, asked for, the run as
/// one document on stdout.
fn show_run(
    s: &Scenario,
    opts: &RunOptions,
    out: &Output,
    run: &recorder::CollectedRun,
    findings: &[findings::ModelFindings],
    interrupted: bool,
) -> Result<()> {
    // With a machine format, stdout holds only the verdict document: people read stderr.
    // Without --against, json or markdown prints the run itself as that one document.
    let mut human: Box<dyn Write> = match (opts.output.machine, out.quiet) {
        (false, _) => Box::new(crate::app::pipe::stdout()),
        (true, false) => Box::new(std::io::stderr()),
        (true, true) => Box::new(std::io::sink()),
    };
    render_run(s, run, findings, out, interrupted, &mut human)?;
    compare_models_in_run(s, &opts.pairs, run, findings, &mut human)?;
    drop(human);
    if opts.output.run_doc {
        print_run_doc(s, opts.output.format, run, findings, interrupted)?;
    }
    Ok(())
}

/// The run's directory: a shard's is named after the common start and its shard number.
fn new_run_dir(
    out: &std::path::Path,
    s: &Scenario,
    schedule: &runner::Schedule,
    started: SystemTime,
) -> Result<store::RunDir> {
    Ok(match schedule.shard {
        Some(spec) => store::create_run_dir_named(
            out,
            &s.name,
            schedule.start.unwrap_or(started),
            &format!("-shard-{}-of-{}", spec.index, spec.total),
        )?,
        None => store::create_run_dir(out, &s.name, started)?,
    })
}

/// `--format json|markdown` without `--against`: the run as one document on stdout.
fn print_run_doc(
    s: &Scenario,
    format: DiffFormat,
    run: &recorder::CollectedRun,
    findings: &[findings::ModelFindings],
    interrupted: bool,
) -> Result<()> {
    use crate::render::run_doc;
    let run_dir = run.dir.path.display().to_string();
    let doc = run_doc::RunDoc {
        scenario: &s.name,
        fingerprint: &s.fingerprint,
        run_dir: &run_dir,
        interrupted,
        stopped_by: run.meta.stopped_by.as_ref(),
        summary: &run.summaries,
        findings,
        currency: s.pricing.as_ref().map(|p| p.currency.as_str()),
    };
    let text = match format {
        DiffFormat::Json => run_doc::json(&doc),
        _ => run_doc::markdown(&doc),
    };
    let mut stdout = crate::app::pipe::stdout();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// A run stopped by the fail-fast rule: why, and what `ladder check` says of the target (on
/// stderr, so a machine format's stdout keeps only its document).
async fn explain_fail_fast(s: &Scenario, t: &runner::Tripped) {
    eprintln!("\n{}", t.sentence());
    eprintln!("`ladder check {}` says:", s.path.display());
    let mut text = Vec::new();
    if let Err(e) = crate::check::diagnose_for_run(s, &t.model, &mut text).await {
        eprintln!("(the check could not run: {e:#})");
    }
    let _ = std::io::stderr().write_all(&text);
}

/// The real network client for a scenario's target at `base_url`.
fn http_backend(s: &Scenario, base_url: &str, env: &RunEnv) -> Result<HttpBackend> {
    let max_c = s.load.ladder.iter().copied().max().unwrap_or(1) as usize;
    // Unusable TLS files (unreadable, not PEM, an X.509 v1 client certificate) are the
    // scenario's fault: exit 2 before traffic, naming the file and the field.
    // The system's certificate store is read only when a connection can be TLS: an https
    // target, or an https proxy for it (the proxy reqwest picks, by `client::proxy::proxy_for`).
    let proxy = crate::client::proxy::proxy_for(base_url, &|name| env.proxy_var(name));
    let roots = if system_roots_needed(base_url, proxy.as_ref().map(|p| p.shown.as_str())) {
        SystemRoots::load()
    } else {
        SystemRoots::none()
    };
    let pool = Pool::new(&s.target.timeouts, &s.target.tls, roots, max_c).map_err(|e| match e {
        ClientError::Tls(e) => {
            anyhow::Error::from(UsageError(format!("{}: {e}", s.path.display())))
        }
        e => anyhow::Error::from(e).context("cannot build the HTTP client"),
    })?;
    if let Some(w) = crate::client::tls::insecure_warning(&s.target.tls) {
        eprintln!("warning: {w}");
    }
    let target = PreparedTarget::new(&s.target, base_url)
        .map_err(|e| UsageError(format!("{}: {e}", s.path.display())))?
        .streaming(s.request.stream)
        .batching(s.request.batch)
        // An agent's next turn sends the answer's tool calls back.
        .keeping_calls(s.load.agent.is_some());
    Ok(HttpBackend { pool, target })
}

/// What the progress line's ETA goes by: a rate ladder's or a timed step's schedule (known in
/// advance), else the pace so far over the planned requests.
fn eta_plan(s: &Scenario) -> progress::EtaPlan {
    use progress::EtaPlan;
    let steps = crate::plan::estimate::estimate(s, None);
    let scheduled =
        s.load.mode.open_loop() || matches!(s.load.budget, crate::scenario::Budget::Duration(_));
    let steps_s: Option<Vec<f64>> = steps.iter().map(|e| e.duration_s).collect();
    match steps_s {
        Some(steps_s) if scheduled => EtaPlan::Schedule {
            steps_s,
            pause_s: s.load.pause_between_steps.as_secs_f64(),
        },
        _ => EtaPlan::Pace(steps.iter().map(|e| e.requests).sum()),
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
