//! Reading one `--sim-set key=value` value: durations, counts, rates, switches, named choices
//! and `none`, each error naming the key and what it takes.

use super::keys;
use crate::util::duration;
use std::time::Duration;

pub(super) fn unknown_key(key: &str) -> String {
    let names: Vec<&str> = keys::keys().collect();
    let hint = names
        .iter()
        .map(|k| (strsim::jaro_winkler(key, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    format!(
        "unknown sim parameter `{key}`{hint}; valid keys: {}",
        names.join(", ")
    )
}

pub(super) fn dur(key: &str, v: &str) -> Result<Duration, String> {
    duration::parse(v).map_err(|e| format!("sim parameter `{key}`: {e}"))
}

pub(super) fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("sim parameter `{key}`: `{v}` is not a whole number"))
}

pub(super) fn positive<T: std::str::FromStr + PartialEq + From<u8>>(
    key: &str,
    v: &str,
) -> Result<T, String> {
    let n: T = num(key, v)?;
    if n == T::from(0) {
        return Err(format!(
            "sim parameter `{key}`: use 1 or more, or `none` for no limit"
        ));
    }
    Ok(n)
}

pub(super) fn fraction(key: &str, v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "sim parameter `{key}`: `{v}` is not a number within [0, 1]"
        )),
    }
}

pub(super) fn non_negative(key: &str, v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "sim parameter `{key}`: `{v}` is not a number of 0 or more"
        )),
    }
}

pub(super) fn boolean(key: &str, v: &str) -> Result<bool, String> {
    match v {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        _ => Err(format!("sim parameter `{key}`: `{v}` is not true or false")),
    }
}

pub(super) fn opt<T>(
    v: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<Option<T>, String> {
    match v {
        "" | "none" | "off" => Ok(None),
        _ => parse(v).map(Some),
    }
}

/// One of a parameter's named values (`limits: anthropic`), as its YAML form spells it.
pub(super) fn choice<T: serde::de::DeserializeOwned>(key: &str, v: &str) -> Result<T, String> {
    use serde::de::value::{Error, StrDeserializer};
    T::deserialize(StrDeserializer::<Error>::new(v))
        .map_err(|e| format!("sim parameter `{key}`: {e}"))
}
