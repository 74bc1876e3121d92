//! `ladder diff --format markdown`: the comparison as a markdown document (a job summary, a
//! pull-request comment): the heading, the gated checks as a table, and with `--full` every
//! check per model; without it the short form (`short`).

use std::io::{self, Write};

use super::{
    cell, ci, code, gated_ranked, grouped_skips, heading, inconclusive_lines, invalid_lines,
    longest_backtick_run, md_all_checks, md_check_cells, md_list, md_text, set_aside_lines, short,
    step_header, summary_line, verdict, DiffContext, APPROX_NOTE,
};
use crate::compare::{Check, Comparison, Method, Verdict};

pub(super) fn markdown(c: &Comparison, ctx: &DiffContext, out: &mut dyn Write) -> io::Result<()> {
    let (warnings, full) = (&ctx.warnings, ctx.full);
    writeln!(out, "## ladder diff: {}\n", heading(c, ctx))?;
    writeln!(
        out,
        "Baseline {} (fingerprint {}) vs new {} (fingerprint {}).\n",
        code(&c.base_label),
        code(&c.base_fingerprint),
        code(&c.new_label),
        code(&c.new_fingerprint)
    )?;
    for w in warnings {
        writeln!(out, "> **Warning:** {}\n", md_text(w))?;
    }
    if let Some(r) = &c.refused {
        return md_refused(r, out);
    }
    for line in &c.headline {
        writeln!(out, "**{}**\n", md_text(line))?;
    }
    writeln!(out, "**{}**\n", summary_line(&c.counts()))?;
    if let Some(why) = c.inconclusive_reason() {
        writeln!(out, "Inconclusive: {why}.\n")?;
    }
    if let Some(why) = c.incomplete_reason() {
        writeln!(out, "Incomplete: {}.\n", md_text(&why))?;
    }
    for line in invalid_lines(c) {
        writeln!(out, "Invalid for the gate: {}.\n", md_text(&line))?;
    }
    if !full {
        return short::markdown(c, out);
    }
    let gated = gated_ranked(c);
    md_gated_table(c, &gated, out)?;
    let regressions: Vec<String> = gated
        .iter()
        .filter(|k| k.verdict == Verdict::Regressed)
        .map(|k| format!("{} · {}: {}", k.model, k.title(), k.detail))
        .collect();
    md_list(out, "### Regressions", &regressions)?;
    md_list(
        out,
        "### Inconclusive (the CI spans 0 and reaches past the gate)",
        &inconclusive_lines(c),
    )?;
    md_list(
        out,
        "### Set aside (the client did not keep up)",
        &set_aside_lines(c),
    )?;
    let skipped = grouped_skips(c);
    md_list(out, "### Skipped gates", &skipped)?;
    md_list(out, "### Only on one side", &c.unmatched)?;
    md_list(out, "### Notes", &c.notes)?;
    md_all_checks(c, out)
}

/// Why nothing was compared, and the workload diff in a fence longer than any backtick run in it.
fn md_refused(r: &crate::compare::WorkloadMismatch, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "The workloads differ, so the results are not comparable. Rerun with the baseline's scenario, or pass `--allow-different-workload` to compare anyway.\n")?;
    let fence = "`".repeat((longest_backtick_run(&r.unified_diff) + 1).max(3));
    writeln!(out, "{fence}diff")?;
    out.write_all(r.unified_diff.as_bytes())?;
    if !r.unified_diff.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "{fence}")
}

/// The gated checks (`gated_ranked`: regressions first) as a table, regressions in bold; nothing
/// when there are none.
fn md_gated_table(c: &Comparison, gated: &[&Check], out: &mut dyn Write) -> io::Result<()> {
    if gated.is_empty() {
        return Ok(());
    }
    writeln!(out, "### Gated checks\n")?;
    writeln!(
        out,
        "| model | {} | check | base | new | change | 99% CI | verdict |",
        step_header(c.checks.iter())
    )?;
    writeln!(out, "|---|---:|---|---:|---:|---:|---|---|")?;
    let mut any_approx = false;
    for k in gated {
        any_approx |= k.method == Method::Approximate;
        let v = verdict(k);
        let v = if k.verdict == Verdict::Regressed {
            format!("**{v}**")
        } else {
            v
        };
        writeln!(out, "{} {} | {v} |", md_check_cells(k), ci(k))?;
    }
    if any_approx {
        writeln!(out, "\n{}", cell(APPROX_NOTE))?;
    }
    writeln!(out)
}
