//! The TTFT decomposition as text for the terminal and the report: one line per step with
//! each part's P50 / P90 (ms) and where the parts come from. Shown when the client split TTFT
//! (headers) or the server sent timings; a run of older files without them shows nothing.

use crate::findings::ttft_parts::{Part, PROCESSING};
use crate::findings::{ModelFindings, TtftParts};
use crate::model::LadderUnit;

/// The server's parts a table shows: queue and prefill, and the unsplit time when a server
/// reports only their sum (then queue and prefill only if some step has them).
fn server_columns(parts: &[TtftParts]) -> Vec<&'static str> {
    let split = parts
        .iter()
        .any(|p| p.server_queue.is_some() || p.prefill.is_some());
    let unsplit = parts.iter().any(|p| p.server_processing.is_some());
    let mut out = Vec::new();
    if split || !unsplit {
        out.extend(["server queue", "prefill"]);
    }
    if unsplit {
        out.push(PROCESSING);
    }
    out
}

fn server_part<'a>(p: &'a TtftParts, name: &str) -> Option<&'a Part> {
    match name {
        "server queue" => p.server_queue.as_ref(),
        "prefill" => p.prefill.as_ref(),
        _ => p.server_processing.as_ref(),
    }
}

/// The table of one model, or `None` without a decomposition.
pub fn ttft_parts_text(f: &ModelFindings) -> Option<String> {
    if f.ttft_parts.is_empty() || f.ttft_parts.iter().all(|p| p.headers.is_none()) {
        return None;
    }
    let server = server_columns(&f.ttft_parts);
    let mut head = vec!["step", "TTFT", "headers"];
    head.extend(&server);
    head.push("rest");
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for p in &f.ttft_parts {
        rows.push(row(p, f.ladder_unit, &server));
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let unsplit = if server.contains(&PROCESSING) {
        "; queue + prefill: the server's one time for both, not split"
    } else {
        ""
    };
    let mut out = format!(
        "{}: TTFT by part, P50 / P90 ms (headers: network + admission{unsplit}; rest: TTFT − the others)\n",
        f.model
    );
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&format!("  sources: {}\n", sources(&f.ttft_parts)));
    Some(out)
}

fn row(p: &TtftParts, unit: LadderUnit, server: &[&str]) -> Vec<String> {
    let cell = |part: Option<&Part>| match part {
        Some(x) => format!("{:.0} / {:.0}", x.p50_ms, x.p90_ms),
        None => "-".to_string(),
    };
    let mut out = vec![
        unit.describe(p.concurrency),
        cell(Some(&p.ttft)),
        cell(p.headers.as_ref()),
    ];
    out.extend(server.iter().map(|name| cell(server_part(p, name))));
    out.push(cell(Some(&p.rest)));
    out
}

/// "server queue: sim; prefill: sim", from the step with the most parts known.
fn sources(parts: &[TtftParts]) -> String {
    let best = parts
        .iter()
        .max_by_key(|p| p.named().len())
        .map(|p| p.named())
        .unwrap_or_default();
    let shown: Vec<String> = best
        .iter()
        .filter(|(name, _)| matches!(*name, "server queue" | "prefill" | PROCESSING))
        .map(|(name, part)| format!("{name}: {}", part.source))
        .collect();
    if shown.is_empty() {
        "the server sent no timings; headers and the rest are the client's".to_string()
    } else {
        format!("headers: client; {}", shown.join("; "))
    }
}
