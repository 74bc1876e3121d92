//! Unit tests of the simulator parameters: defaults, YAML, `--sim-set` parsing and its errors,
//! validation, and that the API key never shows in Debug output.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn defaults_are_the_documented_ones() {
    let p = SimParams::default();
    assert_eq!(p.ttft, ms(200));
    assert_eq!(p.prefill_per_token, Duration::ZERO);
    assert_eq!(p.tpot, ms(20));
    assert_eq!(p.tpot_jitter, 0.05);
    assert_eq!(p.output_tokens, 64);
    assert_eq!(p.concurrency_cap, None);
    assert_eq!(p.saturation, 0.0);
    assert_eq!(p.seed, 42);
    assert_eq!(p.faults.stall_for, Duration::from_secs(5));
    assert!(p.faults.rates().iter().all(|(_, r)| *r == 0.0));
    assert!(p.validate().is_ok());
}

#[test]
fn yaml_fills_defaults_and_round_trips() {
    let p: SimParams = serde_yaml::from_str(
        "ttft: 100ms\nconcurrency_cap: 8\nfaults: {http_503: 0.02, stall_for: 1s}\n\
         models: {fast: {tpot: 5ms}}\n",
    )
    .unwrap();
    assert_eq!(p.ttft, ms(100));
    assert_eq!(p.tpot, ms(20));
    assert_eq!(p.concurrency_cap, Some(8));
    assert_eq!(p.faults.http_503, 0.02);
    assert_eq!(p.faults.stall_for, ms(1000));
    assert_eq!(p.models["fast"].tpot, Some(ms(5)));
    let back: SimParams = serde_yaml::from_str(&serde_yaml::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
    let empty: SimParams = serde_yaml::from_str("{}").unwrap();
    assert_eq!(empty, SimParams::default());
}

#[test]
fn yaml_rejects_unknown_fields_at_every_level() {
    for bad in [
        "tpt: 1ms",
        "faults: {http_504: 1}",
        "models: {m: {speed: 1}}",
        "ttft: 5",
    ] {
        assert!(serde_yaml::from_str::<SimParams>(bad).is_err(), "{bad}");
    }
}

#[test]
fn set_parses_every_kind_of_value() {
    let mut p = SimParams::default();
    p.set("tpot", "26ms").unwrap();
    p.set("ttft", "1s").unwrap();
    p.set("prefill_per_token", "50us").unwrap();
    p.set("tpot_jitter", "0").unwrap();
    p.set("output_tokens", "10").unwrap();
    p.set("concurrency_cap", "16").unwrap();
    p.set("saturation", "0.25").unwrap();
    p.set("saturation_from", "4").unwrap();
    p.set("rpm", "60").unwrap();
    p.set("tpm", "100000").unwrap();
    p.set("seed", "7").unwrap();
    p.set("known_models_only", "true").unwrap();
    p.set("faults.http_503", "0.02").unwrap();
    p.set("faults.stall_for", "2s").unwrap();
    p.set(" models.gpt-4.1.tpot ", " 5ms ").unwrap();
    p.set("models.gpt-4.1.output_tokens", "3").unwrap();
    assert_eq!(p.tpot, ms(26));
    assert_eq!(p.ttft, ms(1000));
    assert_eq!(p.prefill_per_token, Duration::from_micros(50));
    assert_eq!(p.tpot_jitter, 0.0);
    assert_eq!(p.output_tokens, 10);
    assert_eq!(p.concurrency_cap, Some(16));
    assert_eq!(p.saturation, 0.25);
    assert_eq!(p.saturation_from, 4);
    assert_eq!((p.rpm, p.tpm, p.seed), (Some(60), Some(100_000), 7));
    assert!(p.known_models_only);
    assert_eq!(p.faults.http_503, 0.02);
    assert_eq!(p.faults.stall_for, ms(2000));
    let o = &p.models["gpt-4.1"];
    assert_eq!(
        (o.tpot, o.output_tokens, o.ttft),
        (Some(ms(5)), Some(3), None)
    );
    p.set("concurrency_cap", "none").unwrap();
    p.set("rpm", "off").unwrap();
    assert_eq!((p.concurrency_cap, p.rpm), (None, None));
    assert!(p.validate().is_ok());
}

#[test]
fn set_every_fault_rate_by_name() {
    for (kind, _) in FaultRates::default().rates() {
        let mut p = SimParams::default();
        p.set(&format!("faults.{kind}"), "1").unwrap();
        let rates = p.faults.rates();
        assert_eq!(rates.iter().filter(|(_, r)| *r == 1.0).count(), 1);
        assert!(rates.iter().any(|(k, r)| *k == kind && *r == 1.0));
    }
}

#[test]
fn set_errors_name_the_key_and_list_valid_ones() {
    let mut p = SimParams::default();
    let e = p.set("tpott", "1ms").unwrap_err();
    assert!(e.contains("unknown sim parameter `tpott`"), "{e}");
    assert!(e.contains("did you mean `tpot`?"), "{e}");
    assert!(
        e.contains("valid keys: ttft, ttft_sigma, prefill_per_token, tpot,"),
        "{e}"
    );
    let e = p.set("bogus", "1").unwrap_err();
    assert!(!e.contains("did you mean"), "{e}");
    assert!(p
        .set("faults.http_504", "1")
        .unwrap_err()
        .contains("unknown sim parameter"));
    assert!(p
        .set("models.m.speed", "1")
        .unwrap_err()
        .contains("`models.m.speed`"));
    assert!(p.set("models..tpot", "1ms").is_err());
    assert!(p.set("models.tpot", "1ms").is_err());
    assert!(p.set("tpot", "26").unwrap_err().contains("no unit"));
    assert!(p.set("tpot_jitter", "1.5").unwrap_err().contains("[0, 1]"));
    assert!(p
        .set("faults.stall", "-0.1")
        .unwrap_err()
        .contains("`faults.stall`"));
    assert!(p
        .set("output_tokens", "ten")
        .unwrap_err()
        .contains("whole number"));
    assert!(p
        .set("concurrency_cap", "0")
        .unwrap_err()
        .contains("1 or more"));
    assert!(p.set("saturation", "-1").unwrap_err().contains("0 or more"));
    assert!(p
        .set("known_models_only", "maybe")
        .unwrap_err()
        .contains("true or false"));
    // Failed sets leave the value alone.
    assert_eq!(p, SimParams::default());
}

/// A concrete key for a table row (`models.<name>.tpot` → `models.m.tpot`).
fn concrete(key: &str) -> String {
    key.replace("<name>", "m")
}

#[test]
fn every_row_of_the_table_is_settable_and_its_default_is_the_real_one() {
    for row in SimParams::params() {
        assert!(!row.unit.is_empty() && !row.meaning.is_empty(), "{row:?}");
        let key = concrete(row.key);
        let mut p = SimParams::default();
        if row.key.starts_with("models.") {
            // Its default is the top-level value of the same name.
            assert_eq!(Some(row.default), row.key.rsplit('.').next(), "{row:?}");
            let value = if row.unit == "duration" { "1ms" } else { "3" };
            p.set(&key, value)
                .unwrap_or_else(|e| panic!("{key}={value}: {e}"));
            assert_ne!(p, SimParams::default(), "{key}");
        } else {
            p.set(&key, row.default)
                .unwrap_or_else(|e| panic!("{key}={}: {e}", row.default));
            assert_eq!(
                p,
                SimParams::default(),
                "{key}'s default is not {}",
                row.default
            );
        }
    }
    // Keys outside the table are refused, and the message lists the table's keys.
    let e = SimParams::default().set("prefix_cach", "true").unwrap_err();
    assert!(e.contains("did you mean `prefix_cache`"), "{e}");
    assert!(e.contains("faults.json_body"), "{e}");
    assert!(SimParams::default().set("models..tpot", "1ms").is_err());
}

/// Every key a `target.sim:` block can hold, from a `SimParams` with every field set.
fn yaml_keys() -> std::collections::BTreeSet<String> {
    let mut p = SimParams::default();
    for key in [
        "output_tokens_min",
        "concurrency_cap",
        "rpm",
        "tpm",
        "itpm",
        "otpm",
        "accel",
        "concurrency_limit",
    ] {
        p.set(key, "1").unwrap();
    }
    for (key, value) in [
        ("limits", "openai"),
        ("tpm_counts", "reserve"),
        ("itpm_cached", "free"),
        ("limit_window", "bucket"),
        ("limit_period", "1s"),
        ("limits_per", "account"),
    ] {
        p.set(key, value).unwrap();
    }
    p.set("require_api_key", "k").unwrap();
    p.set("models.m.ttft", "1ms").unwrap();
    p.set("models.m.tpot", "1ms").unwrap();
    p.set("models.m.output_tokens", "1").unwrap();
    let yaml = serde_yaml::to_value(&p).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    for (k, v) in yaml.as_mapping().unwrap() {
        let k = k.as_str().unwrap();
        match (k, v) {
            ("models", serde_yaml::Value::Mapping(models)) => {
                for (_, fields) in models {
                    for (f, _) in fields.as_mapping().unwrap() {
                        keys.insert(format!("models.<name>.{}", f.as_str().unwrap()));
                    }
                }
            }
            (_, serde_yaml::Value::Mapping(inner)) => {
                for (f, _) in inner {
                    keys.insert(format!("{k}.{}", f.as_str().unwrap()));
                }
            }
            _ => {
                keys.insert(k.to_string());
            }
        }
    }
    keys
}

#[test]
fn the_table_covers_every_field_of_target_sim() {
    let table: std::collections::BTreeSet<String> = SimParams::params()
        .iter()
        .map(|p| p.key.to_string())
        .collect();
    assert_eq!(
        yaml_keys(),
        table,
        "left: SimParams' fields, right: the rows of src/sim/params/keys.rs; add the missing rows"
    );
}

/// The row of docs/simulator.md's parameter table for `p`.
fn docs_row(p: &Param) -> String {
    format!(
        "| `{}` | {} | `{}` | {} |",
        p.key, p.unit, p.default, p.meaning
    )
}

#[test]
fn docs_simulator_md_lists_every_parameter_as_the_table_says() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/simulator.md");
    let docs = std::fs::read_to_string(path).unwrap();
    let missing: Vec<&str> = SimParams::params()
        .iter()
        .filter(|p| !docs.lines().any(|l| l == docs_row(p)))
        .map(|p| p.key)
        .collect();
    let table: Vec<String> = SimParams::params().iter().map(docs_row).collect();
    assert!(
        missing.is_empty(),
        "docs/simulator.md lacks or differs on the rows of {missing:?}; its table should read:\n\
         | key | unit | default | meaning |\n|---|---|---|---|\n{}",
        table.join("\n")
    );
}

#[test]
fn debug_and_redacted_hide_the_api_key() {
    let mut p = SimParams::default();
    p.set("require_api_key", "sk-secret-123").unwrap();
    assert_eq!(p.require_api_key.as_deref(), Some("sk-secret-123"));
    let dbg = format!("{p:?}");
    assert!(!dbg.contains("sk-secret-123"), "{dbg}");
    assert!(dbg.contains("<redacted>"));
    let r = p.redacted();
    assert_eq!(r.require_api_key.as_deref(), Some("<redacted>"));
    assert_eq!(SimParams::default().redacted(), SimParams::default());
    let e = p.set("require_api_key_x", "sk-secret-123").unwrap_err();
    assert!(!e.contains("sk-secret-123"));
}

#[test]
fn validate_rejects_out_of_range_values_from_yaml() {
    for (yaml, needle) in [
        ("tpot_jitter: 2", "tpot_jitter"),
        ("faults: {disconnect: 1.5}", "faults.disconnect"),
        ("saturation: -0.5", "saturation"),
        ("concurrency_cap: 0", "concurrency_cap"),
        ("tpm: 0", "tpm"),
        ("drift_walk: 4", "drift_walk"),
        (
            "drift_walk_period: 500ms",
            "drift_walk_period` is 500ms; use 1s",
        ),
    ] {
        let p: SimParams = serde_yaml::from_str(yaml).unwrap();
        let e = p.validate().unwrap_err();
        assert!(e.contains(needle), "{yaml}: {e}");
    }
}

#[test]
fn model_timing_and_names() {
    let mut p = SimParams::default();
    p.set("models.fast.tpot", "5ms").unwrap();
    p.set("models.slow.ttft", "1s").unwrap();
    let fast = p.timing_for("fast");
    assert_eq!(
        (fast.ttft, fast.tpot, fast.output_tokens),
        (ms(200), ms(5), 64)
    );
    let slow = p.timing_for("slow");
    assert_eq!((slow.ttft, slow.tpot), (ms(1000), ms(20)));
    assert_eq!(p.timing_for("other").tpot, ms(20));
    assert_eq!(p.model_names(), ["fast", "sim-model", "slow"]);
    assert!(p.knows_model("sim-model") && p.knows_model("fast") && !p.knows_model("gpt"));
}

#[test]
fn overrides_apply_in_order_and_errors_name_the_flag() {
    let mut p = SimParams::default();
    let sets = [
        "ttft=50ms".to_string(),
        " tpot = 7ms ".into(),
        "ttft=60ms".into(),
    ];
    p.apply_overrides(&sets, "--set").unwrap();
    assert_eq!((p.ttft, p.tpot), (ms(60), ms(7)));
    let err = p
        .apply_overrides(&["tpot".into()], "--sim-set")
        .unwrap_err();
    assert_eq!(
        err,
        "--sim-set `tpot`: expected KEY=VALUE, e.g. --sim-set tpot=26ms"
    );
    let err = p.apply_overrides(&["=5ms".into()], "--set").unwrap_err();
    assert!(err.starts_with("--set `=5ms`: expected KEY=VALUE"), "{err}");
    let sets = ["nope=1".to_string(), "tpot=9ms".into()];
    let err = p.apply_overrides(&sets, "--set").unwrap_err();
    assert!(err.starts_with("--set nope=1: "), "{err}");
    // An override after a bad one is not applied.
    assert_eq!(p.tpot, ms(7));
}
