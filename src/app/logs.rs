//! `ladder logs FILE...`: reads request logs (files, formats, the scenario), builds the
//! production ladder (`logs`), judges it with the run's findings, writes a run directory through
//! `store` and prints the table, the findings, the timeline and the incident's sentence.

use super::load::store_input;
use super::log_run::{print_findings, print_table, scenario_of, slo_of, write_log_run, LogRun};
use super::Output;
use crate::cli::{LogFormatArg, LogsArgs};
use crate::error::{ExitCode, UsageError};
use crate::findings::{self, ModelFindings};
use crate::logs::{
    self, GroupStory, LogFormat, LogLadder, LogOptions, LogRequest, Mapping, Minute,
};
use crate::model::LadderUnit;
use crate::render;
use crate::scenario::Scenario;
use crate::store;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

pub(super) fn logs(args: &LogsArgs, out: &Output) -> Result<ExitCode> {
    if !(args.sample_rate > 0.0 && args.sample_rate <= 1.0) {
        return Err(UsageError(format!(
            "--sample-rate {}: the share of requests the log keeps, above 0 and at most 1 (0.1 for 1 in 10)",
            args.sample_rate
        ))
        .into());
    }
    if let Some(tool) = super::import::tool_of(args)? {
        return super::import::import(args, tool, out);
    }
    let mapping = match &args.map {
        Some(spec) => Mapping::parse(spec).map_err(|e| UsageError(e.to_string()))?,
        None => Mapping::default(),
    };
    let mut requests = Vec::new();
    let mut notes = Vec::new();
    for file in &args.files {
        let (mut got, note) = read_file(file, args.format, &mapping)?;
        requests.append(&mut got);
        notes.extend(note);
    }
    logs::keys_where_several(&mut requests);
    let (requests, skew) = logs::limits::screen(requests);
    notes.extend(skew.sentence());
    notes.extend(logs::Honesty::of(&requests, args.sample_rate).notes);
    let scenario = scenario_of(args)?;
    let opts = options(args, scenario.as_ref());
    let logs::Analysis {
        requests,
        ladder,
        mut found,
        sharing,
    } = logs::analyze(requests, &opts);
    if ladder.ttft_from_e2e {
        notes.push(
            "The log has no first-token time: the TTFT columns, the knee and the timeline use E2E (start to end) instead; a knee in E2E mixes queueing with longer outputs."
                .into(),
        );
    }
    let stories = logs::stories(
        &requests,
        &ladder,
        &found,
        args.sample_rate,
        args.timeline_rows,
    );
    for f in &mut found {
        if let Some(axis) = ladder.wall_axis.get(&f.model) {
            f.notes.push(axis.sentence());
        }
        if let Some(s) = stories.iter().find(|s| s.group == f.model) {
            f.notes.push(s.note());
            f.notes.extend(s.needs_note());
        }
        f.notes
            .extend(logs::refine::resolution(f, opts.min_per_level));
        // The model's sharing, said on each of its groups (a model, or a model and key).
        let model = f.model.split(" [").next().unwrap_or(&f.model);
        if let Some(s) = sharing.get(model) {
            f.notes.push(s.sentence(model));
        }
        f.notes.extend(notes.iter().cloned());
    }
    let dir = write_run(
        args,
        scenario.as_ref(),
        &opts,
        &ladder,
        &found,
        &stories,
        &notes,
    )?;
    print(out, &ladder, &found, &stories, &notes, &dir)?;
    Ok(ExitCode::Ok)
}

fn options(args: &LogsArgs, scenario: Option<&Scenario>) -> LogOptions {
    LogOptions {
        sample_rate: args.sample_rate,
        // As many as the P90 gate needs per side, never fewer than the knee needs.
        min_per_level: args
            .min_per_level
            .unwrap_or(crate::compare::Percentile::P90.min_samples())
            .max(findings::MIN_KNEE_SAMPLES),
        max_levels: args.levels.max(1),
        slo: slo_of(args, scenario),
        scenario: scenario.map_or_else(|| "logs".to_string(), |s| s.name.clone()),
        fingerprint: scenario
            .map_or_else(|| "production-log".to_string(), |s| s.fingerprint.clone()),
        splits: Default::default(),
    }
}

/// One file's requests, and a note on the rows it could not read.
fn read_file(
    path: &Path,
    format: LogFormatArg,
    mapping: &Mapping,
) -> Result<(Vec<LogRequest>, Option<String>)> {
    let bad = |message: String| UsageError(format!("{}: {message}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let format = match format {
        LogFormatArg::Auto => LogFormat::detect(&text),
        LogFormatArg::Ladder => LogFormat::Ladder,
        LogFormatArg::Csv => LogFormat::Csv,
        LogFormatArg::Jsonl => LogFormat::Jsonl,
        LogFormatArg::Otlp => LogFormat::Otlp,
        LogFormatArg::Litellm => LogFormat::Litellm,
        LogFormatArg::Envoy => LogFormat::Envoy,
        // Other tools' results never reach here (`import`).
        LogFormatArg::Guidellm | LogFormatArg::Aiperf | LogFormatArg::Vllm => LogFormat::Jsonl,
    };
    if format == LogFormat::Ladder {
        return Ok((read_ladder(path)?, None));
    }
    let parsed = logs::parse_log(&text, format, mapping).map_err(|e| bad(e.to_string()))?;
    let note = parsed.first_skipped.as_ref().map(|(line, why)| {
        format!(
            "{}: {} row(s) are not requests and were left out (first: line {line}, {why}).",
            path.display(),
            parsed.skipped
        )
    });
    if parsed.requests.is_empty() {
        let why = note.unwrap_or_else(|| "it holds no rows".into());
        return Err(bad(format!(
            "no requests read as {} ({why}); name the columns with --map or pick --format",
            format.as_str()
        ))
        .into());
    }
    Ok((parsed.requests, note))
}

/// ladder's own `requests.csv`, its times made absolute with its run's `meta.json` when it sits
/// in a run directory.
fn read_ladder(path: &Path) -> Result<Vec<LogRequest>> {
    let records = store::read_requests_csv(path, false).map_err(store_input)?;
    let meta = path
        .parent()
        .map(|d| d.join(store::META_FILE))
        .filter(|p| p.is_file());
    let origin = meta
        .and_then(|p| store::read_meta(&p).ok())
        .and_then(|m| crate::util::timestamp::rfc3339_ms(&m.started_at))
        .unwrap_or(0.0);
    Ok(records
        .iter()
        .enumerate()
        .map(|(i, r)| LogRequest::from_record(r, i + 2, origin))
        .collect())
}

/// The run directory of the log (`store::write_run`): its times are the log's own.
fn write_run(
    args: &LogsArgs,
    scenario: Option<&Scenario>,
    opts: &LogOptions,
    ladder: &LogLadder,
    found: &[ModelFindings],
    stories: &[GroupStory],
    notes: &[String],
) -> Result<store::RunDir> {
    let rows: Vec<(String, Vec<Minute>)> = stories
        .iter()
        .map(|s| (s.group.clone(), s.minutes.clone()))
        .collect();
    let timeline = render::timeline::csv(&rows);
    write_log_run(LogRun {
        out: &args.out,
        scenario,
        id: store::RunIdentity {
            scenario: opts.scenario.clone(),
            fingerprint: opts.fingerprint.clone(),
            slo: opts.slo,
            models: stories.iter().map(|s| s.group.clone()).collect(),
        },
        span_ms: ladder.span_ms(),
        summaries: &ladder.summaries,
        records: &ladder.records,
        findings: found,
        timeline_csv: Some(&timeline),
        notes,
        unit: LadderUnit::default(),
        client: None,
    })
}

fn print(
    out: &Output,
    ladder: &LogLadder,
    found: &[ModelFindings],
    stories: &[GroupStory],
    notes: &[String],
    dir: &store::RunDir,
) -> Result<()> {
    let mut stdout = super::pipe::stdout();
    print_table(&mut stdout, out, &ladder.summaries)?;
    let metric = if ladder.ttft_from_e2e { "E2E" } else { "TTFT" };
    for s in stories {
        writeln!(stdout, "{} (times UTC):", s.group)?;
        writeln!(
            stdout,
            "{}",
            render::timeline::table(&s.shown, s.knee_above, metric)
        )?;
    }
    print_findings(&mut stdout, out, found, notes, dir)
}
