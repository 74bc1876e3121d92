//! Snapshot and structure tests of the diff renderers, on a fixed, hand-built comparison (no
//! randomness, no times), so the snapshots only change when the output format does.

use super::*;
use crate::compare::{Percentile, WorkloadMismatch};

fn check(model: &str, conc: Option<u32>, metric: Metric, p: Option<Percentile>) -> Check {
    Check {
        model: model.into(),
        step: conc.map(|_| 3),
        concurrency: conc,
        ladder_unit: crate::model::LadderUnit::Streams,
        metric,
        percentile: p,
        gated: p != Some(Percentile::P50),
        base: None,
        new: None,
        ratio: None,
        ci: None,
        method: Method::Bootstrap,
        verdict: Verdict::NoChange,
        detail: String::new(),
    }
}

fn fixture() -> Comparison {
    use Metric::*;
    use Percentile::*;
    let m = "gpt-4o";
    let odd = "deep<seek> & \"co\"";
    let checks = vec![
        Check {
            base: Some(520.0),
            new: Some(560.0),
            ratio: Some(0.0769),
            ci: Some((0.01, 0.14)),
            verdict: Verdict::Info,
            detail: "shown, not gated".into(),
            ..check(m, Some(20), Ttft, Some(P50))
        },
        Check {
            base: Some(800.0),
            new: Some(1000.0),
            ratio: Some(0.25),
            ci: Some((0.18, 0.33)),
            verdict: Verdict::Regressed,
            detail: "TTFT P90 +25.0% (+200.0 ms), 99% CI [+18.0%, +33.0%]: beyond gate ±10%, floor 50.0 ms".into(),
            ..check(m, Some(20), Ttft, Some(P90))
        },
        Check {
            base: Some(1200.0),
            new: Some(1300.0),
            verdict: Verdict::Skipped {
                reason: "TTFT P99 needs ≥ 400 samples per side (have 200 / 200): use requests_per_step ≥ 400".into(),
            },
            detail: "TTFT P99 needs ≥ 400 samples per side (have 200 / 200): use requests_per_step ≥ 400".into(),
            ..check(m, Some(20), Ttft, Some(P99))
        },
        Check {
            base: Some(25.0),
            new: Some(26.0),
            ratio: Some(0.04),
            ci: Some((0.01, 0.07)),
            verdict: Verdict::BelowGate,
            detail: "below gate: TPOT P90 +4.0% (+1.0 ms), 99% CI [+1.0%, +7.0%] excludes 0 but the change is within the gate (gate ±10%, floor 1.0 ms)".into(),
            ..check(m, Some(20), Tpot, Some(P90))
        },
        Check {
            base: Some(3000.0),
            new: Some(3300.0),
            ratio: Some(0.1),
            ci: Some((-0.08, 0.31)),
            verdict: Verdict::Inconclusive { requests_per_step: Some(780) },
            detail: "inconclusive: E2E P90 +10.0% (+300.0 ms), 99% CI [-8.0%, +31.0%] spans 0 and reaches past the gate (gate ±10%, floor 100.0 ms); about 780 requests per step would decide it".into(),
            ..check(m, Some(20), E2e, Some(P90))
        },
        Check {
            base: Some(30.0),
            new: Some(29.0),
            ratio: Some(-0.0333),
            method: Method::Approximate,
            detail: "approximate: ITL gaps are not kept per request; ITL P90 -3.3% (-1.0 ms): within gate ±10%, floor 1.0 ms".into(),
            ..check(m, Some(20), Itl, Some(P90))
        },
        Check {
            base: Some(0.01),
            new: Some(0.012),
            method: Method::FisherExact,
            detail: "no change: error rate 1.00% → 1.20% (+0.20 pp, Fisher one-sided p = 0.3400; gate 1.00 pp, significance 1%)".into(),
            ..check(m, Some(20), ErrorRate, None)
        },
        Check {
            base: Some(60000.0),
            new: Some(72000.0),
            ratio: Some(0.2),
            method: Method::Point,
            verdict: Verdict::Improved,
            detail: "TPM +20.0% (gate -10%)".into(),
            ..check(m, Some(20), Tpm, None)
        },
        Check {
            base: Some(50.0),
            new: Some(20.0),
            method: Method::Point,
            verdict: Verdict::Regressed,
            detail: "knee moved down from 50 to 20 streams".into(),
            ..check(m, None, Knee, None)
        },
        Check {
            base: Some(700.0),
            new: Some(690.0),
            ratio: Some(-0.0143),
            ci: Some((-0.05, 0.03)),
            detail: "no change: TTFT P90 -1.4% (-10.0 ms), 99% CI [-5.0%, +3.0%] spans 0".into(),
            ..check(odd, Some(5), Ttft, Some(P90))
        },
        Check {
            method: Method::Point,
            verdict: Verdict::Skipped { reason: "wall was not analysed for the <new> run & \"more\"".into() },
            detail: "wall was not analysed for the <new> run & \"more\"".into(),
            ..check(odd, None, Wall, None)
        },
    ];
    Comparison {
        base_label: "baselines/demo.csv".into(),
        new_label: "runs/demo/20240601T120000Z".into(),
        base_fingerprint: "0123456789abcdef".into(),
        new_fingerprint: "0123456789abcdef".into(),
        strict: false,
        refused: None,
        checks,
        unmatched: vec![
            "model gpt-4o at 50 streams: only in the baseline (baselines/demo.csv)".into(),
        ],
        notes: vec!["a note with a | pipe".into()],
        incomplete: vec![],
        invalid: vec![],
        ttft_causes: Vec::new(),
        headline: Vec::new(),
    }
}

fn refused() -> Comparison {
    Comparison {
        refused: Some(WorkloadMismatch {
            base_fp: "0123456789abcdef".into(),
            new_fp: "fedcba9876543210".into(),
            unified_diff: "--- baselines/demo.csv\n+++ runs/demo/x\n@@ -1,2 +1,2 @@\n name: demo\n-max_tokens: 200\n+max_tokens: 300\n".into(),
        }),
        checks: vec![],
        unmatched: vec![],
        notes: vec![],
        new_fingerprint: "fedcba9876543210".into(),
        ..fixture()
    }
}

/// Every check (`--full`).
fn text(c: &Comparison, f: DiffFormat) -> String {
    let mut buf = Vec::new();
    let ctx = DiffContext {
        full: true,
        ..DiffContext::default()
    };
    render_with(c, &ctx, f, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

/// The default: the short verdict.
fn short_text(c: &Comparison, f: DiffFormat) -> String {
    let mut buf = Vec::new();
    render(c, f, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn summary_line_wording() {
    let k = Counts {
        regressed: 2,
        improved: 1,
        below_gate: 3,
        no_change: 27,
        inconclusive: 2,
        skipped: 4,
    };
    assert_eq!(
        summary_line(&k),
        "2 regressions, 1 improvement, 27 no change, 3 below gate, 2 inconclusive, 4 skipped"
    );
    let k = Counts {
        regressed: 1,
        no_change: 1,
        ..Counts::default()
    };
    assert_eq!(
        summary_line(&k),
        "1 regression, 0 improvements, 1 no change, 0 below gate, 0 inconclusive, 0 skipped"
    );
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!("diff_markdown", text(&fixture(), DiffFormat::Markdown));
}

#[test]
fn markdown_refused_snapshot() {
    let s = text(&refused(), DiffFormat::Markdown);
    assert!(s.contains("```diff\n--- baselines/demo.csv\n"));
    insta::assert_snapshot!("diff_markdown_refused", s);
}

#[test]
fn markdown_fence_outgrows_backticks_in_the_diff() {
    let mut c = refused();
    if let Some(r) = c.refused.as_mut() {
        r.unified_diff = "-a ```\n+b ````\n".into();
    }
    let s = text(&c, DiffFormat::Markdown);
    assert!(s.contains("\n`````diff\n-a ```\n+b ````\n`````\n"), "{s}");
}

#[test]
fn markdown_escapes_table_cells() {
    let s = text(&fixture(), DiffFormat::Markdown);
    assert!(s.contains("| deep&lt;seek&gt; &amp; \"co\" | 5 |"), "{s}");
    assert!(s.contains(
        "- deep&lt;seek&gt; &amp; \"co\" · wall: wall was not analysed for the &lt;new&gt; run"
    ));
    assert_eq!(cell("a|b\nc"), "a\\|b c");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x"), "`` `x ``");
}

#[test]
fn table_snapshot() {
    let s = text(&fixture(), DiffFormat::Table);
    assert!(s.contains("1 improvement"));
    insta::assert_snapshot!("diff_table", s);
}

#[test]
fn json_snapshot_and_shape() {
    let s = text(&fixture(), DiffFormat::Json);
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["outcome"], "regression");
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["headline"], serde_json::json!([]));
    assert_eq!(v["counts"]["regressed"], 2);
    assert_eq!(v["checks"][1]["verdict"]["kind"], "regressed");
    assert_eq!(v["checks"][1]["ci"][0], 0.18);
    assert_eq!(v["checks"][2]["verdict"]["kind"], "skipped");
    assert_eq!(v["checks"][4]["verdict"]["kind"], "inconclusive");
    assert_eq!(v["checks"][4]["verdict"]["requests_per_step"], 780);
    assert_eq!(v["counts"]["inconclusive"], 1);
    assert_eq!(v["checks"][8]["percentile"], serde_json::Value::Null);
    insta::assert_snapshot!("diff_json", s);
    let r: serde_json::Value = serde_json::from_str(&text(&refused(), DiffFormat::Json)).unwrap();
    assert_eq!(
        (r["exit_code"].as_i64(), r["outcome"].as_str()),
        (Some(1), Some("refused"))
    );
}

#[test]
fn junit_snapshot_and_well_formed() {
    let s = text(&fixture(), DiffFormat::Junit);
    assert_well_formed(&s);
    // 10 gated checks in two suites + 1 unmatched; P50 is not a test case; the inconclusive
    // check is skipped (it would fail under --strict).
    assert!(
        s.contains("<testsuites name=\"ladder diff\" tests=\"11\" failures=\"2\" errors=\"0\">"),
        "{s}"
    );
    let mut strict = fixture();
    strict.strict = true;
    let st = text(&strict, DiffFormat::Junit);
    assert!(st.contains("failures=\"3\""), "{st}");
    assert!(st.contains("type=\"inconclusive\""), "{st}");
    assert!(s.contains("name=\"TTFT P90 at 20 streams\""));
    assert!(!s.contains("TTFT P50"));
    assert!(s.contains("name=\"deep&lt;seek&gt; &amp; &quot;co&quot;\""));
    insta::assert_snapshot!("diff_junit", s);
    let r = text(&refused(), DiffFormat::Junit);
    assert_well_formed(&r);
    insta::assert_snapshot!("diff_junit_refused", r);
}

#[test]
fn junit_escaping_handles_hostile_text() {
    let hostile = "]]></failure><x a='1'>&amp;\u{1}\u{7}é";
    let mut c = fixture();
    c.checks[1].detail = hostile.into();
    c.checks[1].model = hostile.into();
    let s = text(&c, DiffFormat::Junit);
    assert_well_formed(&s);
    assert!(s.contains("&amp;amp;"));
    assert!(!s.contains('\u{1}'));
}

/// A strict little XML well-formedness check: one root element, balanced and correctly nested
/// tags, quoted attributes without `<`, only the five predefined or numeric entity references,
/// no raw `<`, `&` or `>` in text, and no characters XML 1.0 forbids.
fn assert_well_formed(xml: &str) {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("XML declaration");
    assert!(
        !body
            .chars()
            .any(|c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')),
        "control character in XML"
    );
    let check_entities = |s: &str| {
        for (i, _) in s.match_indices('&') {
            let rest = &s[i + 1..];
            let end = rest.find(';').expect("unterminated entity");
            let name = &rest[..end];
            let ok = matches!(name, "amp" | "lt" | "gt" | "quot" | "apos")
                || (name.starts_with('#') && name.len() > 1);
            assert!(ok, "bad entity &{name};");
        }
    };
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = body;
    while !rest.is_empty() {
        let lt = rest.find('<').unwrap_or(rest.len());
        let text = &rest[..lt];
        assert!(!text.contains('>'), "raw > in text: {text:?}");
        check_entities(text);
        if !stack.is_empty() || text.trim().is_empty() {
        } else {
            panic!("text outside the root: {text:?}");
        }
        rest = &rest[lt..];
        if rest.is_empty() {
            break;
        }
        let gt = rest.find('>').expect("unterminated tag");
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        // Attributes: name="value" pairs, values free of '<' and '"'.
        let mut attrs = tag[name_end..].trim();
        while !attrs.is_empty() {
            let eq = attrs.find("=\"").expect("attribute without =\"");
            assert!(
                attrs[..eq]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "attr name {attrs}"
            );
            let after = &attrs[eq + 2..];
            let close = after.find('"').expect("unterminated attribute");
            let value = &after[..close];
            assert!(!value.contains('<'));
            check_entities(value);
            attrs = after[close + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        if !self_closing {
            stack.push(name.to_string());
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
}

#[test]
fn well_formedness_checker_rejects_broken_xml() {
    let decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    for bad in [
        "<a><b></a></b>",
        "<a>x & y</a>",
        "<a x=\"<\"/>",
        "<a></a><b/>",
        "<a>",
        "<a>1 > 0</a>",
    ] {
        let doc = format!("{decl}{bad}");
        assert!(
            std::panic::catch_unwind(|| assert_well_formed(&doc)).is_err(),
            "accepted {bad}"
        );
    }
    assert_well_formed(&format!("{decl}<a x=\"&amp;\"><b/>t&lt;</a>\n"));
}

#[test]
fn markdown_headings_for_pass_and_inconclusive() {
    let mut c = fixture();
    c.checks.retain(|k| k.verdict != Verdict::Regressed);
    let s = text(&c, DiffFormat::Markdown);
    assert!(s.starts_with("## ladder diff: PASS\n"), "{s}");
    c.checks.retain(|k| {
        !(k.metric.is_latency() && k.gated) || matches!(k.verdict, Verdict::Skipped { .. })
    });
    let s = text(&c, DiffFormat::Markdown);
    assert!(s.starts_with("## ladder diff: INCONCLUSIVE\n"), "{s}");
    assert!(s.contains(
        "Inconclusive: no latency gate could decide (too few samples, or every CI inconclusive)."
    ));
    let t = text(&c, DiffFormat::Table);
    assert!(t.starts_with("ladder diff: INCONCLUSIVE\n"), "{t}");
}

#[test]
fn the_short_table_says_what_was_judged_and_lists_only_what_failed_or_could_not_decide() {
    let s = short_text(&fixture(), DiffFormat::Table);
    // 10 gated checks, 2 of them skipped: 8 judged, over both models and both steps.
    assert!(
        s.contains("judged: 8 checks of 2 models (gpt-4o, deep<seek> & \"co\") at 5 and 20 streams: TTFT P90, TPOT P90, E2E P90, ITL P90, error rate, TPM, knee\n"),
        "{s}"
    );
    // The skipped P99 and the inconclusive E2E P90 say why, one line per group.
    assert!(
        s.contains("gpt-4o · P99 at 20 streams (TTFT): needs ≥ 400 samples per side"),
        "{s}"
    );
    assert!(
        s.contains("gpt-4o · P90 at 20 streams (E2E): about 780 requests per step would decide it"),
        "{s}"
    );
    // The grid holds the regressed and inconclusive checks only; passing ones are not rows.
    assert!(s.contains("│ gpt-4o · TTFT P90 │ ✗ +25.0%"), "{s}");
    assert!(s.contains("│ gpt-4o · E2E P90  │ ? +10.0%"), "{s}");
    assert!(!s.contains("TPOT P90 │"), "{s}");
    assert!(!s.contains("TPM  "), "{s}");
    // The knee regressed at no step: a line of its own.
    assert!(
        s.contains("✗ gpt-4o · knee: knee moved down from 50 to 20 streams"),
        "{s}"
    );
    assert!(
        s.contains("every check (9 rows, with the reasons): --full"),
        "{s}"
    );
    insta::assert_snapshot!("diff_table_short", s);
}

#[test]
fn the_headline_comes_before_any_count_or_check_in_every_format() {
    let mut c = fixture();
    let line = "capacity: cap ≈ 16 → 12 streams (-25.0%, 99% CI [-30.1%, -19.8%]): queueing at a lower concurrency limit, confirmed by the server; TTFT P50 at 20 streams +120.0%";
    c.headline = vec![line.to_string()];
    for (format, full) in [
        (DiffFormat::Table, false),
        (DiffFormat::Table, true),
        (DiffFormat::Markdown, false),
        (DiffFormat::Markdown, true),
    ] {
        let s = if full {
            text(&c, format)
        } else {
            short_text(&c, format)
        };
        let at = s
            .find("cap ≈ 16 → 12 streams")
            .unwrap_or_else(|| panic!("{s}"));
        let counts = s.find("2 regressions").unwrap_or_else(|| panic!("{s}"));
        assert!(at < counts, "{format:?} full={full}:\n{s}");
    }
    let v: serde_json::Value = serde_json::from_str(&text(&c, DiffFormat::Json)).unwrap();
    assert_eq!(v["headline"][0], line);
}

#[test]
fn a_passing_short_table_is_a_few_lines() {
    let mut c = fixture();
    c.checks.retain(|k| {
        k.model == "gpt-4o"
            && !matches!(k.verdict, Verdict::Regressed | Verdict::Inconclusive { .. })
    });
    c.unmatched.clear();
    c.notes.clear();
    let s = short_text(&c, DiffFormat::Table);
    assert!(s.starts_with("ladder diff: PASS\n"), "{s}");
    assert!(
        !s.contains('╭'),
        "no grid when nothing regressed or was inconclusive:\n{s}"
    );
    assert!(s.lines().count() <= 8, "{s}");
    assert!(
        s.contains(
            "judged: 4 checks of gpt-4o at 20 streams: TPOT P90, ITL P90, error rate, TPM\n"
        ),
        "{s}"
    );
}

#[test]
fn the_short_markdown_folds_every_check_away() {
    let s = short_text(&fixture(), DiffFormat::Markdown);
    assert!(s.contains("### Regressed and inconclusive checks"), "{s}");
    assert!(!s.contains("### Gated checks"), "{s}");
    assert!(
        s.contains("<details><summary>All checks with explanations (9)</summary>"),
        "{s}"
    );
    assert!(s.contains("| gpt-4o · TTFT P90 | ✗ +25.0% |"), "{s}");
    insta::assert_snapshot!("diff_markdown_short", s);
}

#[test]
fn json_and_junit_do_not_depend_on_full() {
    for f in [DiffFormat::Json, DiffFormat::Junit] {
        assert_eq!(text(&fixture(), f), short_text(&fixture(), f));
    }
}

/// A pair of one run informs (exit 0): its heading says what it is and what it found, never an
/// outcome the exit code does not carry; without a pair the heading is the outcome.
#[test]
fn an_informing_pair_is_headed_as_information_not_by_an_outcome() {
    let c = fixture();
    assert_eq!(c.outcome(), Outcome::Regression);
    let pair: crate::compare::Pair = "gpt-4o=deepseek-chat".parse().unwrap();
    let ctx = DiffContext {
        informs: Some(pair.clone()),
        ..DiffContext::default()
    };
    for (f, prefix) in [
        (DiffFormat::Table, "ladder diff: "),
        (DiffFormat::Markdown, "## ladder diff: "),
    ] {
        let mut buf = Vec::new();
        render_with(&c, &ctx, f, &mut buf).unwrap();
        let out = String::from_utf8(buf).unwrap();
        assert_eq!(
            out.lines().next().unwrap(),
            format!("{prefix}pair gpt-4o → deepseek-chat (information, exit 0): deepseek-chat regressed against gpt-4o")
        );
        assert!(!out.contains("REGRESSION"), "{out}");
    }
    assert_eq!(
        pair_heading(&pair, Outcome::Pass),
        "pair gpt-4o → deepseek-chat (information, exit 0): no regression of deepseek-chat against gpt-4o"
    );
    assert!(text(&c, DiffFormat::Table).starts_with("ladder diff: REGRESSION\n"));
}

/// Baseline and new run of `[2, 8]` streams, judged by `compare` from their summaries: the new
/// run delivers half the tokens at 8 streams, where its client held `steady` streams in flight.
fn starved(steady: f64) -> Comparison {
    use crate::compare::{CompareOptions, Side};
    use crate::stats::StepSummary;
    let row = |step: u32, value: u32, in_flight: f64, tpm: f64| StepSummary {
        fingerprint: "f".into(),
        model: "m".into(),
        step,
        concurrency: value,
        attempted: 200,
        succeeded: 200,
        ttft_p90_ms: Some(100.0),
        e2e_p90_ms: Some(400.0),
        tpm,
        rps: tpm / 600.0,
        duration_s: 60.0,
        concurrency_steady: Some(in_flight),
        ..StepSummary::default()
    };
    let side = |label: &str, top: StepSummary| Side {
        label: label.into(),
        fingerprint: "f".into(),
        summaries: vec![row(1, 2, 2.0, 2_000.0), top],
        ..Side::default()
    };
    let base = side("base", row(2, 8, 7.9, 8_000.0));
    let new = side("new", row(2, 8, steady, 4_000.0));
    crate::compare::compare(&base, &new, &CompareOptions::default())
}

#[test]
fn a_step_whose_client_did_not_keep_up_is_set_aside_in_every_format() {
    // Kept up (7.9 of 8 in flight): the halved throughput at 8 streams is a regression.
    assert_eq!(starved(7.9).outcome(), Outcome::Regression);
    let c = starved(4.0);
    assert_eq!(c.outcome(), Outcome::Inconclusive);
    assert_eq!(c.exit_code().code(), 4);
    assert_eq!(c.counts().regressed, 0);
    let cause = "m · the client did not keep up at 8 streams in the new run: only 4.0 of 8 streams in flight (steady window; at least 6.4 needed); fix: fewer streams per process or `--shard`";

    let t = short_text(&c, DiffFormat::Table);
    assert!(t.starts_with("ladder diff: INCONCLUSIVE\n"), "{t}");
    assert!(t.contains(&format!("\ninvalid: {cause}\n")), "{t}");
    assert!(
        t.contains("inconclusive: the client did not keep up at a step"),
        "{t}"
    );
    // No "requests per step would decide" advice for checks no sample size would decide.
    assert!(!t.contains("inconclusive (the CI spans 0"), "{t}");
    let full = text(&c, DiffFormat::Table);
    assert!(full.contains("\nset aside (the client did not keep up):\n  m · TTFT P90 at 8 streams: set aside, invalid for the gate: the client did not keep up at 8 streams in the new run; as measured (no change): "), "{full}");
    assert!(full.contains("  m · TPM at 8 streams: set aside, invalid for the gate: the client did not keep up at 8 streams in the new run; as measured (regressed): point values (no per-request samples); TPM -50.0% (gate ±10%)\n"), "{full}");

    for md in [
        short_text(&c, DiffFormat::Markdown),
        text(&c, DiffFormat::Markdown),
    ] {
        assert!(md.starts_with("## ladder diff: INCONCLUSIVE"), "{md}");
        assert!(
            md.contains(
                "Invalid for the gate: m · the client did not keep up at 8 streams in the new run"
            ),
            "{md}"
        );
    }

    let json: serde_json::Value = serde_json::from_str(&short_text(&c, DiffFormat::Json)).unwrap();
    assert_eq!(
        (&json["outcome"], &json["exit_code"]),
        (&"inconclusive".into(), &4.into())
    );
    let invalid = &json["invalid_steps"][0];
    assert_eq!(
        (&invalid["side"], &invalid["concurrency"]),
        (&"new".into(), &8.into())
    );
    assert_eq!(invalid["shortfalls"][0]["kind"], "thin_load");
    assert_eq!(invalid["shortfalls"][0]["in_flight"], 4.0);
    let tpm = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["title"] == "TPM at 8 streams")
        .unwrap();
    assert_eq!(
        (&tpm["verdict"]["kind"], &tpm["set_aside"]),
        (&"inconclusive".into(), &true.into())
    );
    assert!(
        tpm["detail"]
            .as_str()
            .unwrap()
            .contains("as measured (regressed): "),
        "{tpm}"
    );
    let at_2 = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["title"] == "TPM at 2 streams")
        .unwrap();
    assert!(at_2.get("set_aside").is_none(), "{at_2}");

    let xml = short_text(&c, DiffFormat::Junit);
    assert_well_formed(&xml);
    assert!(
        xml.contains("<testsuite name=\"client\" tests=\"1\" failures=\"1\""),
        "{xml}"
    );
    assert!(
        xml.contains("name=\"m · client kept up at 8 streams (new side)\""),
        "{xml}"
    );
    assert!(xml.contains("type=\"invalid\""), "{xml}");
    assert!(
        xml.contains("the client did not keep up at 8 streams in the new run: only 4.0 of 8"),
        "{xml}"
    );
}
