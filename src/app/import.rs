//! `ladder logs --format guidellm|aiperf|vllm FILE|DIR...` (or `auto` on such files): another
//! load-testing tool's results read as a run (`logs::peers`), written through the same writer as
//! a log's run (`logs::write_log_run`), its steps the tool's sweep points. The run says who
//! measured it (`meta.json`'s `client`) and that it carries no client self-check.

use super::log_run::{print_findings, print_table, scenario_of, slo_of, write_log_run, LogRun};
use super::Output;
use crate::cli::{LogFormatArg, LogsArgs};
use crate::error::{ExitCode, UsageError};
use crate::findings;
use crate::logs::peers::{aiperf, build, guidellm, vllm, PeerRun, Tool};
use crate::store;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The tool `args` names, or, with `--format auto`, the tool whose output the first input is
/// (a folder: the first such file in it); `None` for a request log.
pub(super) fn tool_of(args: &LogsArgs) -> Result<Option<Tool>> {
    let named = match args.format {
        LogFormatArg::Guidellm => Some(Tool::GuideLlm),
        LogFormatArg::Aiperf => Some(Tool::Aiperf),
        LogFormatArg::Vllm => Some(Tool::Vllm),
        LogFormatArg::Auto => None,
        _ => return Ok(None),
    };
    if named.is_some() {
        return Ok(named);
    }
    let Some(first) = args.files.first() else {
        return Ok(None);
    };
    if first.is_dir() {
        return Ok(files_in(first)?.first().map(|(_, t)| *t));
    }
    Ok(head(first).as_deref().and_then(Tool::detect))
}

/// The first bytes of a file (for detection), `None` when it cannot be read.
fn head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = vec![0u8; 64 * 1024];
    let n = std::fs::File::open(path).ok()?.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// The tools' result files under `dir` (recursively, in name order), each with its tool.
fn files_in(dir: &Path) -> Result<Vec<(PathBuf, Tool)>> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("{}: cannot read the folder: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(files_in(&p)?);
        } else if p.extension().is_some_and(|x| x == "json" || x == "jsonl") {
            let tool = head(&p).as_deref().and_then(Tool::detect).or_else(|| {
                // vLLM's per-request lists may sit past the first bytes.
                let text = std::fs::read_to_string(&p).ok()?;
                Tool::detect(&text).filter(|t| *t == Tool::Vllm)
            });
            if let Some(t) = tool {
                out.push((p, t));
            }
        }
    }
    Ok(out)
}

/// Reads one tool's result file.
fn read(path: &Path, tool: Tool) -> Result<PeerRun> {
    let bad = |message: String| UsageError(format!("{}: {message}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let parsed = match tool {
        Tool::GuideLlm => guidellm::parse(&text),
        Tool::Vllm => vllm::parse(&text),
        Tool::Aiperf => {
            let summary = path
                .parent()
                .map(|d| d.join("profile_export_aiperf.json"))
                .and_then(|p| std::fs::read_to_string(p).ok());
            let folder = path
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned());
            aiperf::parse(aiperf::Files {
                records: &text,
                summary: summary.as_deref(),
                folder: folder.as_deref(),
            })
        }
    };
    Ok(parsed.map_err(|e| bad(e.to_string()))?)
}

pub(super) fn import(args: &LogsArgs, tool: Tool, out: &Output) -> Result<ExitCode> {
    let mut runs = Vec::new();
    for input in &args.files {
        if input.is_dir() {
            let found: Vec<PathBuf> = files_in(input)?
                .into_iter()
                .filter(|(_, t)| *t == tool)
                .map(|(p, _)| p)
                .collect();
            if found.is_empty() {
                return Err(UsageError(format!(
                    "{}: no {} results in this folder (pick the files, or --format)",
                    input.display(),
                    tool.name()
                ))
                .into());
            }
            for p in found {
                runs.push(read(&p, tool)?);
            }
        } else {
            runs.push(read(input, tool)?);
        }
    }
    let scenario = scenario_of(args)?;
    let opts = build::PeerOptions {
        sample_rate: args.sample_rate,
        slo: slo_of(args, scenario.as_ref()),
        scenario: scenario
            .as_ref()
            .map(|s| (s.name.clone(), s.fingerprint.clone())),
    };
    let ladder = build::build(&runs, &opts).map_err(|e| UsageError(e.to_string()))?;
    let mut notes = ladder.notes.clone();
    notes.push(not_verified(&ladder.client));
    let mut found = findings::analyze_run(&ladder.summaries, Some(&ladder.records));
    for f in &mut found {
        f.notes.extend(notes.iter().cloned());
    }
    // A tool's own clock (vLLM's) is not the epoch: the run is dated now.
    let span = if ladder.span_ms.0 > 1e12 {
        ladder.span_ms
    } else {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        (now, now)
    };
    let dir = write_log_run(LogRun {
        out: &args.out,
        scenario: scenario.as_ref(),
        id: store::RunIdentity {
            scenario: ladder.scenario.clone(),
            fingerprint: ladder.fingerprint.clone(),
            slo: opts.slo,
            models: ladder.models.clone(),
        },
        span_ms: span,
        summaries: &ladder.summaries,
        records: &ladder.records,
        findings: &found,
        timeline_csv: None,
        notes: &notes,
        unit: ladder.unit,
        client: Some(ladder.client.clone()),
    })?;
    let mut stdout = super::pipe::stdout();
    print_table(&mut stdout, out, &ladder.summaries)?;
    print_findings(&mut stdout, out, &found, &notes, &dir)?;
    Ok(ExitCode::Ok)
}

/// What an imported run says about its client: none of ladder's self-check.
pub(crate) fn not_verified(client: &str) -> String {
    format!(
        "client not verified: measured by {client}, not ladder, so the run carries no client self-check (steady concurrency, send lag, client CPU, event-loop lag)."
    )
}

/// What `diff` and `report --baseline` say about who measured the two sides: an imported side carries no client
/// self-check, and sides measured by different clients differ by more than the server (Python
/// clients inflate TTFT at high concurrency). A side without `meta.json` (a baseline CSV) is
/// taken as ladder's.
pub(crate) fn client_notes(base: &store::LoadedResult, new: &store::LoadedResult) -> Vec<String> {
    let client = |r: &store::LoadedResult| {
        r.meta.as_ref().and_then(|m| m.client.clone()).map_or_else(
            || {
                (
                    format!(
                        "ladder {}",
                        r.meta.as_ref().map_or("", |m| m.tool_version.as_str())
                    )
                    .trim()
                    .to_string(),
                    false,
                )
            },
            |c| (c, true),
        )
    };
    let (b, n) = (client(base), client(new));
    let mut notes = Vec::new();
    for ((name, imported), side) in [(&b, "the baseline"), (&n, "the new run")] {
        if *imported {
            notes.push(format!("{side}: {}", not_verified(name)));
        }
    }
    let tool = |c: &str| c.split(' ').next().unwrap_or("").to_string();
    if tool(&b.0) != tool(&n.0) {
        notes.push(format!(
            "the clients differ: the baseline was measured by {}, the new run by {}; clients time requests differently (Python clients inflate TTFT at high concurrency), so part of a TTFT change at the top steps may be the clients'.",
            b.0, n.0
        ));
    }
    notes
}
