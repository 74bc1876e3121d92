//! The run as one document for machines and pull requests (`ladder run --format json|markdown`
//! without `--against`): the scenario, its fingerprint, the run directory, the summary rows and
//! the findings (structured, and in the sentences the terminal prints). Pure: data in, text out.

use crate::findings::ModelFindings;
use crate::model::StoppedBy;
use crate::stats::{Profile, StepSummary};
use serde_json::json;

/// What the document holds.
pub struct RunDoc<'a> {
    pub scenario: &'a str,
    pub fingerprint: &'a str,
    pub run_dir: &'a str,
    pub interrupted: bool,
    /// Why it stopped early, when it did (`meta.json`'s `stopped_by`).
    pub stopped_by: Option<&'a StoppedBy>,
    pub summary: &'a [StepSummary],
    pub findings: &'a [ModelFindings],
    /// The currency of the run's `pricing:` (its summary rows' `cost_per_1k_ok` and
    /// `cost_per_1m_output` are in it); `None` for a run without pricing.
    pub currency: Option<&'a str>,
}

/// One JSON object: `{scenario, fingerprint, run_dir, interrupted, stopped_by (as in
/// meta.json, with `words`: what the other formats say; null for a run that ran its plan),
/// summary: [rows as in summary.csv], findings: [as in findings.json, plus `sentences`]}`, and `currency` for a
/// priced run.
pub fn json(d: &RunDoc) -> String {
    let findings: Vec<serde_json::Value> = d
        .findings
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("sentences".into(), json!(f.sentences()));
            }
            v
        })
        .collect();
    let mut doc = json!({
        "scenario": d.scenario,
        "fingerprint": d.fingerprint,
        "run_dir": d.run_dir,
        "interrupted": d.interrupted,
        "stopped_by": d.stopped_by.map(|s| {
            let mut v = serde_json::to_value(s).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("words".into(), json!(format!("the run {}", s.how())));
            }
            v
        }),
        "summary": d.summary,
        "findings": findings,
    });
    if let (Some(c), Some(o)) = (d.currency, doc.as_object_mut()) {
        o.insert("currency".into(), json!(c));
    }
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), crate::util::duration::ms_text)
}

/// A markdown section: a table of the steps (P90s, successes, throughput) and the findings.
pub fn markdown(d: &RunDoc) -> String {
    let mut out = format!(
        "### ladder run: {} (workload {})\n\n",
        d.scenario, d.fingerprint
    );
    match (d.interrupted, d.stopped_by) {
        (_, Some(s)) => out.push_str(&format!(
            "**Incomplete**: the run {}; the last step is partial.\n\n",
            s.how()
        )),
        (true, None) => out.push_str("**Interrupted**: the last step is partial.\n\n"),
        (false, None) => {}
    }
    // TTFC (the answer's wait) only when a request reasoned: other runs look as before.
    let reasoning = d.summary.iter().any(StepSummary::any_reasoning);
    let (ttfc_head, ttfc_rule) = if reasoning {
        (" TTFC P90 |", "---:|")
    } else {
        ("", "")
    };
    out.push_str(&format!(
        "| model | load | ok / sent | TTFT P90 |{ttfc_head} TPOT P90 | E2E P90 | {} tok/min |\n",
        Profile::of(d.summary.iter()).tokens()
    ));
    out.push_str(&format!("|---|---:|---:|---:|{ttfc_rule}---:|---:|---:|\n"));
    // What each model measured (embeddings: their throughput is the input tokens).
    let profile = |model: &str| Profile::of(d.summary.iter().filter(|r| r.model == model));
    let mut note = None;
    for r in d.summary {
        let measured = profile(&r.model);
        note = note.or(measured.unmeasured_note());
        let stream_ms = |v: Option<f64>| {
            if measured.streamed() {
                ms(v)
            } else {
                "–".to_string()
            }
        };
        let ttfc = if reasoning {
            format!(" {} |", ms(r.ttfc_p90_ms))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "| {} | {} | {} / {} | {} |{ttfc} {} | {} | {:.0} |\n",
            r.model.replace('|', "\\|"),
            r.concurrency,
            r.succeeded,
            r.attempted,
            stream_ms(r.ttft_p90_ms),
            stream_ms(r.tpot_p90_ms),
            ms(r.e2e_p90_ms),
            measured.tpm(r)
        ));
    }
    out.push('\n');
    conversations(d.summary, &mut out);
    if let Some(note) = note {
        out.push_str(note);
        out.push_str("\n\n");
    }
    for f in d.findings {
        for line in f.sentences() {
            out.push_str(&format!("- {}: {line}\n", f.model));
        }
    }
    out.push_str(&format!("\nRun directory: `{}`\n", d.run_dir));
    out
}

/// The conversations table (agents, sessions) of each model whose steps had turns.
fn conversations(rows: &[StepSummary], out: &mut String) {
    let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    models.dedup();
    for model in models {
        let mut steps: Vec<&StepSummary> = rows.iter().filter(|r| r.model == model).collect();
        steps.sort_by_key(|r| r.ladder_order());
        let Some((header, cells)) = crate::render::table::conversation_cells(&steps) else {
            continue;
        };
        out.push_str(&format!(
            "Conversations of {}:\n\n",
            model.replace('|', "\\|")
        ));
        out.push_str(&format!("| {} |\n", header.join(" | ")));
        out.push_str(&format!("|{}\n", "---:|".repeat(header.len())));
        for row in cells {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(c: u32, ttft: f64) -> StepSummary {
        StepSummary {
            model: "m".into(),
            concurrency: c,
            attempted: 10,
            succeeded: 9,
            ttft_p90_ms: Some(ttft),
            ..Default::default()
        }
    }

    #[test]
    fn json_holds_rows_findings_and_the_run_dir() {
        let rows = [row(1, 100.0), row(8, 250.0)];
        let d = RunDoc {
            scenario: "s",
            fingerprint: "abc",
            run_dir: "runs/s/x",
            interrupted: false,
            stopped_by: None,
            summary: &rows,
            findings: &[],
            currency: None,
        };
        let v: serde_json::Value = serde_json::from_str(&json(&d)).unwrap();
        assert_eq!(v["run_dir"], "runs/s/x");
        assert!(v["stopped_by"].is_null());
        assert_eq!(v["summary"][1]["concurrency"], 8);
        assert_eq!(v["summary"][1]["ttft_p90_ms"], 250.0);
        assert!(v["findings"].as_array().unwrap().is_empty());
    }

    #[test]
    fn an_embeddings_table_counts_input_tokens_and_says_why_ttft_is_empty() {
        let step = |c: u32| StepSummary {
            model: "e".into(),
            concurrency: c,
            attempted: 10,
            succeeded: 10,
            e2e_p50_ms: Some(80.0),
            e2e_p90_ms: Some(90.0),
            input_tokens: 5_000,
            tpm_total: 60_000.0,
            ..Default::default()
        };
        let rows = [step(1), step(2)];
        let d = RunDoc {
            scenario: "s",
            fingerprint: "abc",
            run_dir: "runs/s/x",
            interrupted: false,
            stopped_by: None,
            summary: &rows,
            findings: &[],
            currency: None,
        };
        let md = markdown(&d);
        assert!(md.contains("| E2E P90 | input tok/min |"), "{md}");
        assert!(
            md.contains("| e | 2 | 10 / 10 | – | – | 90 ms | 60000 |"),
            "{md}"
        );
        assert!(md.contains(crate::stats::profile::EMBEDDINGS_NOTE), "{md}");
    }

    #[test]
    fn markdown_has_one_table_row_per_step() {
        let rows = [row(1, 100.0), row(8, 250.0)];
        let d = RunDoc {
            scenario: "s",
            fingerprint: "abc",
            run_dir: "runs/s/x",
            interrupted: true,
            stopped_by: None,
            summary: &rows,
            findings: &[],
            currency: None,
        };
        let md = markdown(&d);
        assert!(md.contains("| m | 8 | 9 / 10 | 250 ms |"), "{md}");
        assert!(md.contains("Interrupted"));
        // Stopped by the fail-fast rule: markdown and JSON name the failure.
        let ff = StoppedBy::FailFast {
            class: "connect".into(),
            model: "m".into(),
            requests: 5,
            message: "Connection refused".into(),
        };
        let stopped = RunDoc {
            stopped_by: Some(&ff),
            ..d
        };
        let why = "the run stopped early: the first 5 requests to m all failed with connect (Connection refused)";
        assert!(markdown(&stopped).contains(&format!("**Incomplete**: {why}")));
        let v: serde_json::Value = serde_json::from_str(&json(&stopped)).unwrap();
        assert_eq!(v["stopped_by"]["cause"], "fail-fast");
        assert_eq!(v["stopped_by"]["words"], why);
        assert!(md.contains("`runs/s/x`"));
        assert!(!md.contains("TTFC"), "{md}");
        // A run that reasoned shows the answer's wait next to TTFT.
        let mut reasoned = rows.clone();
        reasoned[1].reasoned = 9;
        reasoned[1].ttfc_p90_ms = Some(900.0);
        let md = markdown(&RunDoc {
            summary: &reasoned,
            ..d
        });
        assert!(md.contains("| TTFT P90 | TTFC P90 | TPOT P90 |"), "{md}");
        assert!(md.contains("| m | 8 | 9 / 10 | 250 ms | 900 ms |"), "{md}");
        assert!(
            md.contains("|---|---:|---:|---:|---:|---:|---:|---:|"),
            "{md}"
        );
    }
}
