//! Unit tests of the terminal tables (`render::table`): snapshots of the run and comparison tables and the optional columns.

use super::*;

fn row(model: &str, step: u32, concurrency: u32, ttft: [f64; 3], tpot: f64) -> StepSummary {
    StepSummary {
        model: model.into(),
        step,
        concurrency,
        attempted: 200,
        succeeded: 200,
        ttft_p50_ms: Some(ttft[0]),
        ttft_p90_ms: Some(ttft[1]),
        ttft_p99_ms: Some(ttft[2]),
        tpot_p50_ms: Some(tpot),
        tpot_p90_ms: Some(tpot * 1.2),
        tpot_p99_ms: Some(tpot * 1.5),
        itl_p99_ms: Some(42.4),
        e2e_p90_ms: Some(2100.0),
        tpm: 15_234.4,
        rps: 3.254,
        goodput: Some(0.995),
        ..StepSummary::default()
    }
}

fn ladder() -> Vec<StepSummary> {
    let mut slow = row("gpt-4o", 3, 20, [900.0, 1450.0, 2210.0], 9.0);
    slow.succeeded = 195;
    slow.failed = 5;
    slow.err_429 = 3;
    slow.err_5xx = 1;
    slow.err_timeout = 1;
    slow.e2e_p90_ms = Some(12_345.0);
    slow.tpm = 1_234_567.0;
    slow.rps = 41.27;
    let mut empty = row("gpt-4o", 4, 50, [0.0; 3], 0.0);
    empty.succeeded = 0;
    empty.failed = 200;
    empty.err_429 = 200;
    empty.ttft_p50_ms = None;
    empty.ttft_p90_ms = None;
    empty.ttft_p99_ms = None;
    empty.tpot_p50_ms = None;
    empty.tpot_p90_ms = None;
    empty.tpot_p99_ms = None;
    empty.itl_p99_ms = None;
    empty.e2e_p90_ms = None;
    empty.tpm = 0.0;
    empty.rps = 0.0;
    empty.goodput = Some(0.0);
    vec![
        row("gpt-4o", 2, 10, [230.0, 260.0, 330.0], 8.4),
        row("gpt-4o", 1, 5, [212.0, 240.0, 301.0], 8.25),
        slow,
        empty,
    ]
}

fn two_models() -> Vec<StepSummary> {
    let mut rows = ladder();
    rows.truncate(3);
    rows.push(row("deepseek-chat", 1, 5, [400.0, 520.0, 800.0], 20.0));
    rows.push(row("deepseek-chat", 2, 10, [410.0, 255.0, 810.0], 21.0));
    let mut tie = row("deepseek-chat", 3, 20, [420.0, 1450.0, 820.0], 22.0);
    tie.goodput = None;
    rows.push(tie);
    rows
}

#[test]
fn run_table_snapshot() {
    insta::assert_snapshot!(run_table(&ladder(), false));
}

#[test]
fn reasoning_columns_only_for_a_model_that_reasoned() {
    let mut rows = two_models();
    for r in rows.iter_mut().filter(|r| r.model == "gpt-4o") {
        r.reasoned = r.succeeded;
        r.ttfc_p50_ms = r.ttft_p50_ms.map(|v| v + 400.0);
        r.ttfc_p90_ms = r.ttft_p90_ms.map(|v| v + 450.0);
        r.ttfc_p99_ms = r.ttft_p99_ms.map(|v| v + 500.0);
        r.reasoning_share = Some(0.625);
    }
    let text = run_table(&rows, false);
    insta::assert_snapshot!(text);
    let (first, second) = text.split_once("\n\n").unwrap();
    assert!(
        first.contains("TTFC P50/P90/P99") && first.contains("62.5%"),
        "{text}"
    );
    assert!(!second.contains("TTFC"), "{text}");
}

#[test]
fn cost_columns_only_for_a_priced_model_with_its_currency() {
    let mut rows = two_models();
    for r in rows.iter_mut().filter(|r| r.model == "gpt-4o") {
        r.cost_per_1k_ok = Some(2.68);
        r.cost_per_1m_output = Some(13.4);
    }
    let text = run_table_priced(&rows, false, None, Some("USD"));
    let (first, second) = text.split_once("\n\n").unwrap();
    assert!(
        first.contains("USD/1k ok") && first.contains("USD/1M out"),
        "{text}"
    );
    assert!(first.contains("2.680") && first.contains("13.40"), "{text}");
    assert!(!second.contains("USD"), "{text}");
    // Without the currency (a table rebuilt from files), the columns say cost.
    assert!(run_table(&rows, false).contains("cost/1k ok"));
}

#[test]
fn run_table_two_models_snapshot() {
    insta::assert_snapshot!(run_table(&two_models(), false));
}

#[test]
fn compare_models_snapshot() {
    insta::assert_snapshot!(compare_models_table(&two_models()).unwrap());
}

#[test]
fn colour_only_when_asked() {
    assert!(!run_table(&ladder(), false).contains('\x1b'));
    let coloured = run_table(&ladder(), true);
    assert!(
        coloured.starts_with("\x1b[1mmodel: gpt-4o\x1b[0m\n"),
        "{coloured}"
    );
    assert_eq!(run_table(&[], false), "");
}

#[test]
fn compare_needs_two_models() {
    assert_eq!(compare_models_table(&ladder()), None);
    assert_eq!(compare_models_table(&[]), None);
}

#[test]
fn fastest_model_marked_per_step_including_ties() {
    let table = compare_models_table(&two_models()).unwrap();
    let marks: Vec<usize> = table.lines().map(|l| l.matches(" *").count()).collect();
    // Steps 1 and 2 have one winner each; step 3 is a tie (both 1450 ms).
    assert_eq!(marks.iter().sum::<usize>(), 4, "{table}");
    assert!(
        table.ends_with("\n* lowest TTFT P90 at that step\n"),
        "{table}"
    );
    assert!(
        table.contains("240 *") && table.contains("255 *"),
        "{table}"
    );
}

#[test]
fn milliseconds_for_people() {
    assert_eq!(fmt_ms(Some(8.34)), "8.3");
    assert_eq!(fmt_ms(Some(0.0)), "0.0");
    assert_eq!(fmt_ms(Some(9.96)), "10");
    assert_eq!(fmt_ms(Some(212.4)), "212");
    assert_eq!(fmt_ms(Some(9_999.4)), "9999");
    assert_eq!(fmt_ms(Some(9_999.6)), "10.0 s");
    assert_eq!(fmt_ms(Some(12_345.0)), "12.3 s");
    assert_eq!(fmt_ms(None), "-");
    assert_eq!(fmt_ms(Some(f64::NAN)), "-");
    assert_eq!(triple(None, None, None), "-");
    assert_eq!(triple(Some(1.0), None, Some(300.0)), "1.0 / - / 300");
}

#[test]
fn throughput_for_people() {
    assert_eq!(fmt_tpm(0.0), "0");
    assert_eq!(fmt_tpm(999.6), "1,000");
    assert_eq!(fmt_tpm(15_234.4), "15,234");
    assert_eq!(fmt_tpm(999_999.4), "999,999");
    assert_eq!(fmt_tpm(1_234_567.0), "1.23M");
    assert_eq!(fmt_tpm(f64::INFINITY), "-");
    assert_eq!(fmt_rps(3.254), "3.25");
    assert_eq!(fmt_rps(41.27), "41.3");
    assert_eq!(fmt_rps(250.4), "250");
    assert_eq!(fmt_share(Some(0.995)), "99.5%");
    assert_eq!(fmt_share(None), "-");
}

#[test]
fn error_breakdown() {
    let rows = ladder();
    assert_eq!(errors_cell(&rows[0]), "-");
    assert_eq!(errors_cell(&rows[2]), "5 (429×3, 5xx×1, timeout×1)");
    assert_eq!(errors_cell(&rows[3]), "200 (429×200)");
    let mut other = rows[0].clone();
    other.failed = 2;
    assert_eq!(errors_cell(&other), "2");
}

#[test]
fn embeddings_models_compare_by_e2e_and_input_tokens() {
    // Two embeddings models: no token, so no TTFT or TPOT; E2E and the input tokens per minute.
    let embed = |model: &str, step: u32, e2e90: f64, input_tpm: f64| StepSummary {
        ttft_p50_ms: None,
        ttft_p90_ms: None,
        ttft_p99_ms: None,
        tpot_p50_ms: None,
        tpot_p90_ms: None,
        tpot_p99_ms: None,
        itl_p99_ms: None,
        e2e_p50_ms: Some(e2e90 / 2.0),
        e2e_p90_ms: Some(e2e90),
        input_tokens: 40_000,
        output_tokens: 0,
        tpm: 0.0,
        tpm_total: input_tpm,
        ..row(model, step, step * 4, [0.0; 3], 0.0)
    };
    let rows = [
        embed("small", 1, 80.0, 24_000.0),
        embed("large", 1, 120.0, 18_000.0),
    ];
    let table = compare_models_table(&rows).unwrap();
    assert!(
        table.contains("E2E P90") && table.contains("input TPM"),
        "{table}"
    );
    assert!(
        !table.contains("TTFT") && !table.contains("TPOT"),
        "{table}"
    );
    assert!(
        table.contains("80 *") && table.contains("24,000"),
        "{table}"
    );
    assert!(
        table.ends_with("\n* lowest E2E P90 at that step\n"),
        "{table}"
    );
}

/// The conversations of agents say how many of the calls sent back were synthetic; a session's
/// (no calls sent) has no such column.
#[test]
fn agents_conversations_show_the_synthetic_call_share() {
    let mut step = row("m", 1, 4, [100.0, 150.0, 200.0], 4.0);
    step.cache_hit_by_turn = "1:0.980 2:0.650".into();
    step.tasks = 8;
    let (header, cells) = conversation_cells(&[&step]).unwrap();
    assert!(!header.iter().any(|h| h == "synthetic calls"), "{header:?}");
    step.synthetic_call_share = Some(0.25);
    let (header, cells_agents) = conversation_cells(&[&step]).unwrap();
    assert_eq!(header.last().unwrap(), "synthetic calls");
    assert_eq!(cells_agents[0].last().unwrap(), "25.0%");
    assert_eq!(cells_agents[0].len(), cells[0].len() + 1);
}
