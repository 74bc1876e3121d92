//! The TTFT decomposition as text for the terminal and the report: one line per step with
//! each part's P50 / P90 (ms) and where the parts come from. Shown when the client split TTFT
//! (headers) or the server sent timings; a run of older files without them shows nothing.

use crate::findings::{ModelFindings, TtftParts};
use crate::model::LadderUnit;

/// The table of one model, or `None` without a decomposition.
pub fn ttft_parts_text(f: &ModelFindings) -> Option<String> {
    if f.ttft_parts.is_empty() || f.ttft_parts.iter().all(|p| p.headers.is_none()) {
        return None;
    }
    let head = ["step", "TTFT", "headers", "server queue", "prefill", "rest"];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for p in &f.ttft_parts {
        rows.push(row(p, f.ladder_unit));
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "{}: TTFT by part, P50 / P90 ms (headers: network + admission; rest: TTFT − the others)\n",
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

fn row(p: &TtftParts, unit: LadderUnit) -> Vec<String> {
    let cell = |part: Option<&crate::findings::ttft_parts::Part>| match part {
        Some(x) => format!("{:.0} / {:.0}", x.p50_ms, x.p90_ms),
        None => "-".to_string(),
    };
    vec![
        unit.describe(p.concurrency),
        cell(Some(&p.ttft)),
        cell(p.headers.as_ref()),
        cell(p.server_queue.as_ref()),
        cell(p.prefill.as_ref()),
        cell(Some(&p.rest)),
    ]
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
        .filter(|(name, _)| matches!(*name, "server queue" | "prefill"))
        .map(|(name, part)| format!("{name}: {}", part.source))
        .collect();
    if shown.is_empty() {
        "the server sent no timings; headers and the rest are the client's".to_string()
    } else {
        format!("headers: client; {}", shown.join("; "))
    }
}
