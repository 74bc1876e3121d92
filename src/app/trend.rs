//! `ladder report --trend`: P90 TTFT and TPOT per step over time. The points are every
//! committed version of a baseline CSV (read from git history with the `git` command; one commit
//! = one point, labelled with its date and short hash), or several run directories in order of
//! their start. Rendered as an HTML page (`render::html::trend`) or a markdown table for a weekly
//! job summary.

use crate::cli::{ReportArgs, ReportFormatArg};
use crate::error::{ExitCode, UsageError};
use crate::render::html::trend::{Trend, TrendPoint};
use crate::store;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum TrendError {
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Store(#[from] store::StoreError),
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e} (the trend of a baseline reads its git history; install git, or pass run directories)"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Every committed version of `file` (oldest first), each parsed with the store's reader.
pub fn from_git(file: &Path) -> Result<Trend, TrendError> {
    let input = |m: String| TrendError::Input(format!("--trend {}: {m}", file.display()));
    let name = file
        .file_name()
        .ok_or_else(|| input("expected a baseline CSV file".into()))?;
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(input("its folder does not exist".into()));
    }
    let prefix = git(&dir, &["rev-parse", "--show-prefix"])
        .map_err(|e| input(format!("not inside a git repository ({e})")))?;
    let rel = format!(
        "{}{}",
        String::from_utf8_lossy(&prefix).trim(),
        name.to_string_lossy()
    );
    let log = git(
        &dir,
        &["log", "--format=%H %h %cs", "--", &format!(":/{rel}")],
    )
    .map_err(|e| input(format!("git log failed: {e}")))?;
    let mut points = Vec::new();
    let mut notes = Vec::new();
    for line in String::from_utf8_lossy(&log).lines().rev() {
        let mut parts = line.split_whitespace();
        let (Some(hash), Some(short), Some(date)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let blob = match git(&dir, &["show", &format!("{hash}:{rel}")]) {
            Ok(b) => b,
            // Deleted in this commit: no version to plot.
            Err(_) => continue,
        };
        let label = format!("{date} {short}");
        let source = PathBuf::from(format!("{}@{short}", file.display()));
        match store::parse_summary_csv(&source, &blob) {
            Ok(rows) if !rows.is_empty() => points.push(TrendPoint {
                label,
                summaries: rows,
            }),
            Ok(_) => notes.push(format!("{label}: the baseline had no rows; skipped")),
            Err(e) => notes.push(format!("{label}: skipped: {e}")),
        }
    }
    if points.is_empty() {
        return Err(input(
            "no committed version found (is the file committed? `git log -- FILE` lists its versions)"
                .into(),
        ));
    }
    let shallow = git(&dir, &["rev-parse", "--is-shallow-repository"])
        .map(|o| String::from_utf8_lossy(&o).trim() == "true")
        .unwrap_or(false);
    if shallow {
        notes.insert(
            0,
            format!(
                "Shallow clone: found {} committed version(s) of {}; older ones are not in this clone (CI: fetch-depth: 0, or git fetch --unshallow).",
                points.len(),
                file.display()
            ),
        );
    }
    Ok(Trend {
        source: file.display().to_string(),
        points,
        notes,
    })
}

/// Several run directories (or baseline CSVs), ordered by their start time (the directory name
/// is the UTC start, so by name within one scenario), each one point.
pub fn from_runs(paths: &[PathBuf]) -> Result<Trend, TrendError> {
    let mut points = Vec::new();
    let mut notes = Vec::new();
    for p in paths {
        let (path, _) = crate::app::paths::resolve_run(p);
        let loaded = store::load_result(&path)?;
        if let Some(at) = &loaded.incomplete {
            notes.push(format!("{}: incomplete run ({at})", path.display()));
        }
        let started = loaded.meta.as_ref().map(|m| m.started_at.clone());
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        points.push((
            started.unwrap_or_else(|| name.clone()),
            name,
            loaded.summaries,
        ));
    }
    points.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Trend {
        source: format!("{} run(s)", points.len()),
        points: points
            .into_iter()
            .map(|(_, label, summaries)| TrendPoint { label, summaries })
            .collect(),
        notes,
    })
}

/// `ladder report --trend`.
pub fn command(args: &ReportArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    if args.baseline.is_some() {
        return Err(UsageError("--baseline does not apply to --trend".into()).into());
    }
    let single_csv = args.runs.len() == 1 && args.runs[0].is_file();
    let trend = if single_csv {
        from_git(&args.runs[0])
    } else {
        from_runs(&args.runs)
    }
    .map_err(|e| UsageError(e.to_string()))?;
    if !quiet {
        for n in &trend.notes {
            eprintln!("note: {n}");
        }
        eprintln!("{} point(s) from {}", trend.points.len(), trend.source);
    }
    match args.format {
        ReportFormatArg::Markdown => {
            let md = crate::render::html::trend::markdown(&trend);
            match &args.out {
                Some(o) => {
                    store::write_atomic(o, md.as_bytes())?;
                    outln!("{}", o.display())?;
                }
                None => out!("{md}")?,
            }
        }
        ReportFormatArg::Html => {
            let out = match &args.out {
                Some(o) => o.clone(),
                None => {
                    let (path, note) = crate::app::paths::default_output(&args.runs, "trend");
                    if let (Some(n), false) = (note, quiet) {
                        eprintln!("note: {n}");
                    }
                    path
                }
            };
            let generator = format!("ladder {}", env!("CARGO_PKG_VERSION"));
            let html = crate::render::html::trend::page(&trend, &generator);
            store::write_atomic(&out, html.as_bytes())?;
            outln!("{}", out.display())?;
        }
    }
    Ok(ExitCode::Ok)
}
