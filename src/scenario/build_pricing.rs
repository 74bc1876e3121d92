//! Validation of `pricing:`: per model, the price of 1M input, cached input, cache-write input
//! and output tokens, and the currency, written in the scenario or in a shared pricing file
//! (`pricing: pricing/openai.yaml`, relative to the scenario, same shape). Every model of
//! `target.models` must have a price. Not part of the workload (the fingerprint); recorded with
//! the run so `diff`, `report` and `plan` price it the same way.

use super::errors::Ctx;
use super::raw::{RawPrice, RawPricing, RawPricingSpec};
use super::scalars::Num;
use super::ScenarioError;
use crate::model::{Price, Pricing};
use std::path::Path;

macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

pub(super) fn build_pricing(
    cx: &Ctx,
    raw: Option<RawPricing>,
    models: &[String],
) -> Result<Option<Pricing>, ScenarioError> {
    let (spec, origin) = match raw {
        None => return Ok(None),
        Some(RawPricing::Spec(s)) => (s, String::new()),
        Some(RawPricing::File(rel)) => {
            let path = cx.file.parent().unwrap_or(Path::new("")).join(&rel);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => bail!(cx, "pricing", "cannot read the pricing file {rel}: {e}"),
            };
            match serde_yaml::from_str::<RawPricingSpec>(&text) {
                Ok(s) => (s, format!(" (in {rel})")),
                Err(e) => bail!(
                    cx,
                    "pricing",
                    "{rel}: {e}; a pricing file holds currency: and models: {{MODEL: {{input: …, output: …}}}}"
                ),
            }
        }
    };
    let currency = match spec.currency.as_deref().map(str::trim) {
        Some(c) if !c.is_empty() => c.to_string(),
        _ => bail!(
            cx,
            "pricing.currency",
            "missing{origin}; name the currency once, e.g. currency: USD"
        ),
    };
    let mut prices = std::collections::BTreeMap::new();
    for (model, p) in spec.models.unwrap_or_default() {
        let price = price_of(cx, &model, p, &origin)?;
        prices.insert(model, price);
    }
    if let Some(m) = models.iter().find(|m| !prices.contains_key(*m)) {
        bail!(
            cx,
            "pricing.models",
            "no price for `{m}`{origin}; add {m}: {{input: …, output: …}} (per 1M tokens)"
        )
    }
    Ok(Some(Pricing {
        currency,
        models: prices,
    }))
}

fn price_of(cx: &Ctx, model: &str, p: RawPrice, origin: &str) -> Result<Price, ScenarioError> {
    let field = |f: &str| format!("pricing.models.{model}.{f}");
    let check = |f: &str, v: Option<Num>| -> Result<Option<f64>, ScenarioError> {
        match v.map(|n| n.0) {
            Some(x) if !x.is_finite() || x < 0.0 => Err(cx.err(
                &field(f),
                format!("{x} is not a price{origin}; a number ≥ 0, per 1M tokens"),
            )),
            v => Ok(v),
        }
    };
    let (Some(input), Some(output)) = (check("input", p.input)?, check("output", p.output)?) else {
        bail!(
            cx,
            &format!("pricing.models.{model}"),
            "needs input and output{origin} (per 1M tokens), e.g. {{input: 2.5, output: 10}}"
        )
    };
    Ok(Price {
        input,
        cached_input: check("cached_input", p.cached_input)?,
        cache_write_input: check("cache_write_input", p.cache_write_input)?,
        output,
    })
}

/// The `pricing:` block of a run's recorded `scenario.yaml` (always inline there), read on its
/// own like `gates_from_yaml`: `Ok(None)` when the run had no pricing.
pub fn pricing_from_yaml(text: &str) -> Result<Option<Pricing>, String> {
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    let raw: Option<RawPricing> = match doc.get("pricing") {
        None | Some(serde_yaml::Value::Null) => None,
        Some(v) => Some(serde_yaml::from_value(v.clone()).map_err(|e| format!("pricing: {e}"))?),
    };
    if matches!(raw, Some(RawPricing::File(_))) {
        return Err("pricing: a recorded scenario keeps its prices inline".into());
    }
    let cx = Ctx {
        file: Path::new(super::RECORDED_FILE),
        text,
        secrets: Vec::new(),
        prompt_cap: super::bounded::prompt_cap(&|_| None),
    };
    build_pricing(&cx, raw, &[]).map_err(|e| e.to_string())
}
