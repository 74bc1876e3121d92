//! What counted toward the limit a wall hit: each provider counts differently (OpenAI charges
//! the larger of the prompt and `max_tokens`, Azure and LiteLLM prompt + `max_tokens`, a gateway
//! what was used, Anthropic's input limit leaves cache reads out), so the same traffic hits one
//! provider's wall at 7 streams and another's at 24. From what the requests that got through at
//! the wall step sent and received, the count whose rate per minute is nearest the limit the
//! 429s reported is the provider's rule; the sentence says what moved the wall (the cache, a
//! `max_tokens` larger than the prompt) and where it would be without it.

use crate::model::{LimitKind, RequestRecord};
use serde::{Deserialize, Serialize};

/// What the successful requests of a step would have counted under each rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub requests: u64,
    pub input: u64,
    pub cached: u64,
    pub output: u64,
    /// Requests whose `max_tokens` is known, and the sums over them.
    pub with_max: u64,
    pub max_tokens: u64,
    /// Σ max(prompt, max_tokens) and Σ max(prompt, max_tokens / 2) over them.
    pub larger: u64,
    pub larger_half: u64,
}

impl Usage {
    pub fn add(&mut self, r: &RequestRecord) {
        if r.error_class.is_some() {
            return;
        }
        let input = r.input_tokens.unwrap_or(0);
        self.requests += 1;
        self.input += input;
        self.cached += r.cached_tokens.unwrap_or(0);
        self.output += r.output_tokens.unwrap_or(0);
        if let Some(m) = r.max_tokens.map(u64::from) {
            self.with_max += 1;
            self.max_tokens += m;
            self.larger += input.max(m);
            self.larger_half += input.max(m / 2);
        }
    }

    /// Whether every successful request said its `max_tokens`.
    fn max_known(&self) -> bool {
        self.requests > 0 && self.with_max == self.requests
    }
}

/// A way a provider counts a request against a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountRule {
    /// Input tokens less those read from the cache (Anthropic's ITPM).
    UncachedInput,
    /// Every input token.
    AllInput,
    /// Prompt + `max_tokens`, reserved at admission (Azure OpenAI, LiteLLM, Cerebras).
    PromptPlusMaxTokens,
    /// The larger of the prompt and `max_tokens` (OpenAI).
    LargerOfPromptAndMaxTokens,
    /// Prompt + the tokens generated (charged after the answer: a gateway).
    PromptPlusOutput,
    /// The tokens generated (Anthropic's OTPM, settled after the answer).
    Output,
    /// `max_tokens`, reserved and never settled.
    MaxTokens,
}

impl CountRule {
    fn words(self) -> &'static str {
        match self {
            CountRule::UncachedInput => "uncached input (cache reads do not count)",
            CountRule::AllInput => "all input, cache reads included",
            CountRule::PromptPlusMaxTokens => "prompt + max_tokens, reserved at admission",
            CountRule::LargerOfPromptAndMaxTokens => "the larger of prompt and max_tokens",
            CountRule::PromptPlusOutput => "prompt + the tokens generated",
            CountRule::Output => "the tokens generated",
            CountRule::MaxTokens => "max_tokens, reserved at admission",
        }
    }

    /// Tokens counted by the rule over `u`, and with `max_tokens` halved (the same when the
    /// rule does not read it).
    fn counted(self, u: &Usage) -> (f64, f64) {
        let f = |x: u64| x as f64;
        match self {
            CountRule::UncachedInput => {
                let n = f(u.input.saturating_sub(u.cached));
                (n, n)
            }
            CountRule::AllInput => (f(u.input), f(u.input)),
            CountRule::PromptPlusMaxTokens => (
                f(u.input + u.max_tokens),
                f(u.input) + f(u.max_tokens) / 2.0,
            ),
            CountRule::LargerOfPromptAndMaxTokens => (f(u.larger), f(u.larger_half)),
            CountRule::PromptPlusOutput => (f(u.input + u.output), f(u.input + u.output)),
            CountRule::Output => (f(u.output), f(u.output)),
            CountRule::MaxTokens => (f(u.max_tokens), f(u.max_tokens) / 2.0),
        }
    }
}

/// The rules a provider may count a limit of `kind` by, for what `u` tells.
fn candidates(kind: LimitKind, u: &Usage) -> Vec<CountRule> {
    match kind {
        LimitKind::InputTokens if u.cached > 0 => {
            vec![CountRule::UncachedInput, CountRule::AllInput]
        }
        LimitKind::InputTokens => vec![CountRule::AllInput],
        LimitKind::OutputTokens if u.max_known() => vec![CountRule::Output, CountRule::MaxTokens],
        LimitKind::OutputTokens => vec![CountRule::Output],
        LimitKind::Tokens if u.max_known() => vec![
            CountRule::PromptPlusMaxTokens,
            CountRule::LargerOfPromptAndMaxTokens,
            CountRule::PromptPlusOutput,
        ],
        LimitKind::Tokens => vec![CountRule::PromptPlusOutput],
        LimitKind::Requests | LimitKind::Concurrency | LimitKind::Acceleration => Vec::new(),
    }
}

/// What counted toward the limit at the wall step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    pub rule: CountRule,
    /// Its rate per minute at the wall step (of the requests that got through).
    pub per_minute: f64,
    /// Every candidate's rate, the rule's first.
    pub rates: Vec<(CountRule, f64)>,
    /// The share of input read from the cache.
    pub cached_share: f64,
    /// Mean prompt and `max_tokens` per request.
    pub prompt_mean: f64,
    pub max_tokens_mean: Option<f64>,
    /// Where the wall would be, in the ladder's unit: without cache reads counted free (the
    /// uncached rule), or with `max_tokens` halved (a rule that reads it).
    pub elsewhere: Option<f64>,
}

/// The count whose rate at the wall step is nearest `limit`, when the limit and the step's
/// traffic are known.
pub fn what_counted(
    kind: LimitKind,
    limit: u64,
    u: &Usage,
    duration_s: f64,
    at: f64,
) -> Option<Counted> {
    let rules = candidates(kind, u);
    if rules.is_empty() || u.requests == 0 || duration_s <= 0.0 || limit == 0 {
        return None;
    }
    let per_min = |n: f64| n / duration_s * 60.0;
    let distance = |rate: f64| (rate.max(1.0) / limit as f64).ln().abs();
    let mut rates: Vec<(CountRule, f64)> = rules
        .iter()
        .map(|r| (*r, per_min(r.counted(u).0)))
        .collect();
    rates.sort_by(|a, b| distance(a.1).total_cmp(&distance(b.1)));
    let (rule, per_minute) = rates[0];
    let cached_share = if u.input > 0 {
        u.cached as f64 / u.input as f64
    } else {
        0.0
    };
    let (now, halved) = rule.counted(u);
    let elsewhere = match rule {
        CountRule::UncachedInput => Some(at * (1.0 - cached_share)),
        _ if halved < now * 0.95 && halved > 0.0 => Some(at * now / halved),
        _ => None,
    };
    Some(Counted {
        rule,
        per_minute,
        rates,
        cached_share,
        prompt_mean: u.input as f64 / u.requests as f64,
        max_tokens_mean: (u.with_max > 0).then(|| u.max_tokens as f64 / u.with_max as f64),
        elsewhere,
    })
}

/// "What counts is uncached input (cache reads do not count): 79k/min got through; cache
/// reads do not count, so the cached share (71%) moved the wall from ~7 to 24 streams."
pub fn counted_sentence(c: &Counted, at: &str, elsewhere: impl Fn(f64) -> String) -> String {
    let mut s = format!(
        "What counts is {}: {}/min got through",
        c.rule.words(),
        compact(c.per_minute)
    );
    let others: Vec<String> = c.rates[1..]
        .iter()
        .map(|(r, rate)| format!("{} by {}", compact(*rate), r.words()))
        .collect();
    if !others.is_empty() {
        s.push_str(&format!(" ({})", others.join(", ")));
    }
    s.push('.');
    let max = c.max_tokens_mean.unwrap_or(0.0);
    match (c.rule, c.elsewhere) {
        (CountRule::UncachedInput, Some(w)) => s.push_str(&format!(
            " The cached share ({:.0}%) moved the wall: counting every input token it would be at ~{} instead of {at}.",
            c.cached_share * 100.0,
            elsewhere(w)
        )),
        (CountRule::LargerOfPromptAndMaxTokens, _) if c.prompt_mean >= max => s.push_str(&format!(
            " The prompt ({:.0} tokens) is larger than max_tokens ({max:.0}), so lowering max_tokens does not move this wall.",
            c.prompt_mean
        )),
        (_, Some(w)) => s.push_str(&format!(
            " max_tokens ({max:.0}) is reserved for every request whatever it generates: halving it would move the wall to ~{}.",
            elsewhere(w)
        )),
        _ => {}
    }
    s
}

/// 1.9M, 45k, 1.2k, 720.
pub fn compact(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(n: u64, input: u64, cached: u64, output: u64, max: Option<u64>) -> Usage {
        let mut u = Usage::default();
        for _ in 0..n {
            u.add(&RequestRecord {
                input_tokens: Some(input),
                cached_tokens: Some(cached),
                output_tokens: Some(output),
                max_tokens: max.map(|m| m as u32),
                ..RequestRecord::default()
            });
        }
        u
    }

    #[test]
    fn cache_reads_left_out_are_told_from_counted_ones() {
        // 60 requests a minute of 1000 input tokens, 700 cached: 18k uncached, 60k in all.
        let u = usage(60, 1000, 700, 50, Some(100));
        let free = what_counted(LimitKind::InputTokens, 20_000, &u, 60.0, 24.0).unwrap();
        assert_eq!(free.rule, CountRule::UncachedInput);
        assert!((free.cached_share - 0.7).abs() < 1e-9);
        assert!((free.elsewhere.unwrap() - 7.2).abs() < 1e-9);
        let s = counted_sentence(&free, "24 streams", |w| format!("{w:.0} streams"));
        assert!(s.contains("uncached input") && s.contains("(70%)"), "{s}");
        assert!(s.contains("~7 streams instead of 24 streams"), "{s}");
        let counted = what_counted(LimitKind::InputTokens, 55_000, &u, 60.0, 24.0).unwrap();
        assert_eq!(counted.rule, CountRule::AllInput);
        assert_eq!(counted.elsewhere, None);
    }

    #[test]
    fn openai_s_larger_of_prompt_and_max_tokens_moves_with_max_tokens_only_when_it_is_larger() {
        // Prompt 100, max_tokens 1000, 40 generated; 30 a minute: larger 30k, reserve 33k, used 4.2k.
        let u = usage(30, 100, 0, 40, Some(1000));
        let c = what_counted(LimitKind::Tokens, 30_000, &u, 60.0, 10.0).unwrap();
        assert_eq!(c.rule, CountRule::LargerOfPromptAndMaxTokens);
        assert!((c.elsewhere.unwrap() - 20.0).abs() < 1e-9, "{c:?}");
        let s = counted_sentence(&c, "10 streams", |w| format!("{w:.0} streams"));
        assert!(
            s.contains("halving it would move the wall to ~20 streams"),
            "{s}"
        );
        // Prompt 2000 over max_tokens 500: max_tokens does not count.
        let big = usage(30, 2000, 0, 40, Some(500));
        let c = what_counted(LimitKind::Tokens, 60_000, &big, 60.0, 10.0).unwrap();
        assert_eq!(c.rule, CountRule::LargerOfPromptAndMaxTokens);
        assert_eq!(c.elsewhere, None);
        let s = counted_sentence(&c, "10 streams", |w| format!("{w:.0}"));
        assert!(s.contains("does not move this wall"), "{s}");
    }

    #[test]
    fn reserve_and_after_are_told_apart() {
        let u = usage(30, 100, 0, 40, Some(1000));
        let reserve = what_counted(LimitKind::Tokens, 33_000, &u, 60.0, 10.0).unwrap();
        assert_eq!(reserve.rule, CountRule::PromptPlusMaxTokens);
        let after = what_counted(LimitKind::Tokens, 4_200, &u, 60.0, 10.0).unwrap();
        assert_eq!(after.rule, CountRule::PromptPlusOutput);
        assert_eq!(after.elsewhere, None);
        // Without max_tokens only what was used can be judged.
        let unknown = usage(30, 100, 0, 40, None);
        let c = what_counted(LimitKind::Tokens, 30_000, &unknown, 60.0, 10.0).unwrap();
        assert_eq!(c.rule, CountRule::PromptPlusOutput);
    }

    #[test]
    fn nothing_to_say_without_a_limit_or_traffic() {
        let u = usage(30, 100, 0, 40, Some(1000));
        assert!(what_counted(LimitKind::Requests, 30, &u, 60.0, 10.0).is_none());
        assert!(what_counted(LimitKind::Tokens, 0, &u, 60.0, 10.0).is_none());
        assert!(what_counted(LimitKind::Tokens, 10, &Usage::default(), 60.0, 10.0).is_none());
    }
}
