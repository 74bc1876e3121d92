//! What tokens cost (`pricing:` in a scenario or a shared pricing file; docs/cost.md): per
//! model, the price of 1M input, cached input, cache-write input and output tokens, in one
//! currency. One rule prices a request ([`Pricing::cost_of`]); every figure of cost (per
//! record, per step, per hour in `plan`, the `diff` check) is made from it.

use crate::model::RequestRecord;
use std::collections::BTreeMap;

/// Prices of one model, per 1M tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    pub input: f64,
    /// Prompt tokens served from the provider's cache (default: `input`).
    pub cached_input: Option<f64>,
    /// Prompt tokens written to the cache (Anthropic's `cache_creation_input_tokens`, kept as
    /// the record's `cache_write_tokens`; default: `input`).
    pub cache_write_input: Option<f64>,
    /// Output tokens, reasoning included.
    pub output: f64,
}

/// The prices of a scenario's models.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    /// Named once, shown with every figure (`USD`).
    pub currency: String,
    pub models: BTreeMap<String, Price>,
}

/// The token counts a request is billed on, as the server reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Prompt tokens, cached ones included (`prompt_tokens`; Anthropic's cache reads and
    /// writes are added in by the client).
    pub input: Option<u64>,
    pub cached: Option<u64>,
    /// Prompt tokens written to the cache (Anthropic), part of `input`.
    pub cache_write: Option<u64>,
    /// Output tokens, reasoning included (`completion_tokens`, Anthropic's `output_tokens`).
    pub output: Option<u64>,
    pub reasoning: Option<u64>,
}

impl Usage {
    pub fn of(r: &RequestRecord) -> Usage {
        Usage {
            input: r.input_tokens,
            cached: r.cached_tokens,
            cache_write: r.cache_write_tokens,
            output: r.output_tokens,
            reasoning: r.reasoning_tokens,
        }
    }
}

impl Price {
    /// The one price rule: tokens of each kind at their price per 1M.
    fn bill(&self, uncached: f64, cached: f64, written: f64, output: f64) -> f64 {
        (uncached * self.input
            + cached * self.cached_input.unwrap_or(self.input)
            + written * self.cache_write_input.unwrap_or(self.input)
            + output * self.output)
            / 1e6
    }
}

impl Pricing {
    /// What one request cost: its uncached input tokens at `input`, its cached ones at
    /// `cached_input`, those written to the cache at `cache_write_input`, its output tokens (which count reasoning tokens: `completion_tokens`
    /// and Anthropic's `output_tokens` include them) at `output`. `None` when the model has
    /// no price or the server reported no input count (without usage the output count is the
    /// client's count of chunks and the prompt is unknown: a guess is not a bill); a failed
    /// request that reported usage is billed like any other.
    pub fn cost(&self, model: &str, u: Usage) -> Option<f64> {
        let p = self.models.get(model)?;
        let input = u.input?;
        let cached = u.cached.unwrap_or(0).min(input);
        let written = u.cache_write.unwrap_or(0).min(input - cached);
        // Reasoning is inside the output count; a server that reports more reasoning than
        // output is billed for the reasoning.
        let output = u.output.unwrap_or(0).max(u.reasoning.unwrap_or(0));
        Some(p.bill(
            (input - cached - written) as f64,
            cached as f64,
            written as f64,
            output as f64,
        ))
    }

    /// What tokens not yet sent would cost: `input` prompt tokens, none of them cached, and
    /// `output` tokens (reasoning included) of `model`, at the same prices as
    /// [`Pricing::cost`]. For `run --dry-run` and `validate`, which know only the scenario's
    /// token sizes; `None` when the model has no price.
    pub fn estimate(&self, model: &str, input: f64, output: f64) -> Option<f64> {
        Some(self.models.get(model)?.bill(input, 0.0, 0.0, output))
    }

    /// [`Pricing::cost`] of a record.
    pub fn cost_of(&self, r: &RequestRecord) -> Option<f64> {
        self.cost(&r.model, Usage::of(r))
    }
}

/// A cost for people, about 4 significant digits: `1,234`, `123.4`, `12.34`, `1.234`,
/// `0.2680`, `0.002680` (the table, the report, `plan` and `diff` print costs this way).
pub fn cost_text(c: f64) -> String {
    if c == 0.0 {
        return "0".into();
    }
    if c >= 1000.0 {
        let digits = format!("{:.0}", c.round());
        let mut out = String::new();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        return out;
    }
    let decimals = match c {
        c if c >= 100.0 => 1,
        c if c >= 10.0 => 2,
        c if c >= 1.0 => 3,
        c if c >= 0.01 => 4,
        _ => 6,
    };
    format!("{c:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pricing() -> Pricing {
        Pricing {
            currency: "USD".into(),
            models: [(
                "m".to_string(),
                Price {
                    input: 2.0,
                    cached_input: Some(0.5),
                    cache_write_input: None,
                    output: 8.0,
                },
            )]
            .into(),
        }
    }

    #[test]
    fn costs_read_with_four_significant_digits() {
        let texts: Vec<String> = [12345.6, 123.45, 12.345, 1.2345, 0.268, 0.00268]
            .map(cost_text)
            .to_vec();
        assert_eq!(
            texts,
            ["12,346", "123.5", "12.35", "1.234", "0.2680", "0.002680"]
        );
        assert_eq!(cost_text(0.0), "0");
    }

    #[test]
    fn input_cached_and_output_tokens_at_their_prices() {
        let r = RequestRecord {
            model: "m".into(),
            input_tokens: Some(1000),
            cached_tokens: Some(400),
            output_tokens: Some(100),
            reasoning_tokens: Some(60),
            ..RequestRecord::default()
        };
        // 600 × 2 + 400 × 0.5 + 100 × 8 = 2200 per 1M.
        let c = pricing().cost_of(&r).unwrap();
        assert!((c - 0.0022).abs() < 1e-12, "{c}");
        // Twice the reasoning (inside the output count): the output part doubles.
        let more = RequestRecord {
            output_tokens: Some(160),
            reasoning_tokens: Some(120),
            ..r.clone()
        };
        assert!((pricing().cost_of(&more).unwrap() - 0.00268).abs() < 1e-12);
        assert_eq!(
            pricing().cost_of(&RequestRecord {
                model: "other".into(),
                ..r.clone()
            }),
            None
        );
        let no_usage = RequestRecord {
            model: "m".into(),
            ..RequestRecord::default()
        };
        assert_eq!(pricing().cost_of(&no_usage), None);
        // Output counted from chunks, no usage: no input count, no bill.
        let chunks_only = RequestRecord {
            input_tokens: None,
            ..r.clone()
        };
        assert_eq!(pricing().cost_of(&chunks_only), None);
        // Anthropic: cache reads and writes are inside the input count, each at its price.
        let mut p = pricing();
        p.models.get_mut("m").unwrap().cache_write_input = Some(2.5);
        let written = RequestRecord {
            cache_write_tokens: Some(200),
            ..r.clone()
        };
        // 400 × 2 + 400 × 0.5 + 200 × 2.5 + 100 × 8 = 2300 per 1M.
        assert!((p.cost_of(&written).unwrap() - 0.0023).abs() < 1e-12);
        // Without a cached price, cached tokens cost what input does.
        let mut p = pricing();
        p.models.get_mut("m").unwrap().cached_input = None;
        assert!((p.cost_of(&r).unwrap() - 0.0028).abs() < 1e-12);
    }

    #[test]
    fn an_estimate_prices_tokens_as_a_bill_does_without_a_cache() {
        let r = RequestRecord {
            model: "m".into(),
            input_tokens: Some(1000),
            output_tokens: Some(100),
            ..RequestRecord::default()
        };
        let billed = pricing().cost_of(&r).unwrap();
        // 1000 × 2 + 100 × 8 = 2800 per 1M.
        assert!((billed - 0.0028).abs() < 1e-12, "{billed}");
        assert_eq!(pricing().estimate("m", 1000.0, 100.0), Some(billed));
        // Fractions of a token per request (a mean) are priced as they are.
        assert!((pricing().estimate("m", 0.5, 0.0).unwrap() - 1e-6).abs() < 1e-15);
        assert_eq!(pricing().estimate("other", 1000.0, 100.0), None);
    }
}
