//! What a declared token limit's rule does to where it binds, in words (the plan's `counted as`
//! lines): a `max_tokens` reserved beyond what is generated, cache reads left out of an input
//! limit.

use super::LimitName;
use crate::scenario::Limits;

/// How each declared token limit counts a request, and what that does to where it binds: a
/// reservation of `max_tokens` larger than what is generated, cache reads left out of an input
/// limit. Empty for limits that count what was used.
pub(super) fn counting_lines(
    checks: &[super::LimitCheck<super::Rate>],
    c: &super::Charges,
    limits: &Limits,
    num: impl Fn(f64) -> String,
) -> Vec<String> {
    use crate::scenario::TpmCounts;
    let declared = |l: LimitName| checks.iter().any(|c| c.limit == l);
    let mut out = Vec::new();
    if declared(LimitName::Tpm) && limits.tpm_counts != TpmCounts::Used && c.used > 0.0 {
        let rule = match limits.tpm_counts {
            TpmCounts::Reserve => "prompt + max_tokens, reserved at admission",
            _ => "the larger of the prompt and max_tokens",
        };
        let max = limits.max_tokens.map_or_else(
            || "max_tokens unknown".into(),
            |m| format!("max_tokens {m}"),
        );
        out.push(format!(
            "tpm: {rule}: {} tokens a request ({max}) where it uses {}, so the limit binds at {:.0}% of the rate the tokens used would allow; a lower max_tokens moves it",
            num(c.tpm),
            num(c.used),
            c.used / c.tpm * 100.0
        ));
    }
    if declared(LimitName::Itpm) && !limits.itpm_cached && c.itpm < c.used - c.otpm {
        let input = c.used - c.otpm;
        out.push(format!(
            "itpm: uncached input only: {} of {} input tokens a request count ({:.0}% read from the cache is free), so the limit allows {:.1}x the rate it would if cache reads counted",
            num(c.itpm),
            num(input),
            (1.0 - c.itpm / input) * 100.0,
            input / c.itpm.max(1.0)
        ));
    }
    out
}
