//! Unit tests of `pricing:`: inline or a shared file relative to the scenario, every model
//! priced, prices that are numbers ≥ 0, a currency named once; not part of the fingerprint,
//! recorded inline in the run's scenario and read back from it.

use super::*;
use crate::model::Price;

const BASE: &str =
    "name: t\ntarget:\n  sim: {}\n  models: [a, b]\nrequest:\n  prompt: hi\nload:\n  ladder: [1]\n";

/// Loads `BASE` plus `tail` from `s.yaml` in `dir`.
fn load_in(dir: &std::path::Path, tail: &str) -> Result<Scenario, ScenarioError> {
    load_str(&format!("{BASE}{tail}"), &dir.join("s.yaml"), &|_| None)
}

fn refused(dir: &std::path::Path, tail: &str) -> String {
    match load_in(dir, tail) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {tail}"),
    }
}

const INLINE: &str = "pricing:\n  currency: USD\n  models:\n    a: {input: 2.5, cached_input: 1.25, output: 10}\n    b: {input: \"0.15\", output: 0.6, cache_write_input: 0.3}\n";

#[test]
fn inline_pricing_is_read_and_leaves_the_fingerprint_alone() {
    let dir = tempfile::tempdir().unwrap();
    let s = load_in(dir.path(), INLINE).unwrap();
    let p = s.pricing.as_ref().unwrap();
    assert_eq!(p.currency, "USD");
    assert_eq!(
        p.models["a"],
        Price {
            input: 2.5,
            cached_input: Some(1.25),
            cache_write_input: None,
            output: 10.0
        }
    );
    assert_eq!(p.models["b"].cache_write_input, Some(0.3));
    let unpriced = load_in(dir.path(), "").unwrap();
    assert_eq!(unpriced.pricing, None);
    assert_eq!(s.fingerprint, unpriced.fingerprint);
    assert_eq!(workload_yaml(&s), workload_yaml(&unpriced));
}

#[test]
fn a_shared_file_is_read_relative_to_the_scenario_and_recorded_inline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pricing")).unwrap();
    std::fs::write(
        dir.path().join("pricing/list.yaml"),
        "currency: EUR\nmodels:\n  a: {input: 1, output: 4}\n  b: {input: 2, output: 8}\n  unused: {input: 9, output: 9}\n",
    )
    .unwrap();
    let s = load_in(dir.path(), "pricing: pricing/list.yaml\n").unwrap();
    let p = s.pricing.as_ref().unwrap();
    assert_eq!((p.currency.as_str(), p.models.len()), ("EUR", 3));
    // The run records the prices it used, inline, for its own models only, and every reader
    // of the run gets them back.
    let yaml = normalized_yaml(&s);
    assert!(
        !yaml.contains("unused") && !yaml.contains("list.yaml"),
        "{yaml}"
    );
    let recorded = Recorded::from_yaml(yaml.clone());
    let back = recorded.pricing.expect("pricing read back");
    assert_eq!(back.currency, "EUR");
    assert_eq!(back.models["b"], p.models["b"]);
    assert_eq!(back.models.len(), 2);
    assert_eq!(
        Recorded::from_yaml(normalized_yaml(&load_in(dir.path(), "").unwrap())).pricing,
        None
    );
}

#[test]
fn what_cannot_be_priced_is_refused_with_the_field_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "currency: USD\nmodels: [a]\n").unwrap();
    for (tail, field, says) in [
        (
            "pricing:\n  currency: USD\n  models:\n    a: {input: 1, output: 2}\n",
            "pricing.models",
            "no price for `b`",
        ),
        (
            "pricing:\n  models:\n    a: {input: 1, output: 2}\n    b: {input: 1, output: 2}\n",
            "pricing.currency",
            "currency: USD",
        ),
        (
            "pricing:\n  currency: USD\n  models:\n    a: {input: -1, output: 2}\n    b: {input: 1, output: 2}\n",
            "pricing.models.a.input",
            "not a price",
        ),
        (
            "pricing:\n  currency: USD\n  models:\n    a: {input: 1}\n    b: {input: 1, output: 2}\n",
            "pricing.models.a",
            "needs input and output",
        ),
        (
            "pricing:\n  currency: USD\n  models:\n    a: {input: 1, outptu: 2}\n",
            "pricing",
            "unknown field `outptu`",
        ),
        ("pricing: missing.yaml\n", "pricing", "cannot read the pricing file missing.yaml"),
        ("pricing: bad.yaml\n", "pricing", "bad.yaml: "),
        ("pricing: 3\n", "pricing", "a pricing file"),
    ] {
        let e = refused(dir.path(), tail);
        assert!(e.contains(field), "no field {field} in {e}");
        assert!(e.contains(says), "{says:?} not in {e}");
    }
}

#[test]
fn the_cost_gate_is_read_recorded_and_named_when_not_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let s = load_in(dir.path(), "gates:\n  cost: {mean: 25%}\n").unwrap();
    assert!((s.gates.cost - 0.25).abs() < 1e-12);
    assert!(
        s.gates.describe().ends_with("; cost mean +25%"),
        "{}",
        s.gates.describe()
    );
    assert!(!Gates::default().describe().contains("cost"));
    let recorded = Recorded::from_yaml(normalized_yaml(&s));
    assert_eq!(recorded.gates.unwrap().cost, s.gates.cost);
}
