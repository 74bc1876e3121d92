//! What one model's steps measured, decided once from its summaries and read by every renderer,
//! `compare` and `findings`: which timings exist (a streamed answer has TTFT, TPOT and ITL; a
//! whole one only E2E), which tokens its throughput counts (output tokens; the input tokens of
//! an operation that generates none, embeddings), and which optional figures it carries
//! (reasoning, prompt cache, cost, an open-loop schedule). A new operation is one more variant
//! here, and every `match` on it fails to compile until each reader says what it shows.

use super::StepSummary;

/// Which timings a model's requests carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Tokens arrived as they were generated: TTFT, TPOT, ITL and E2E.
    Streamed,
    /// The answer arrived whole (`request.stream: false`, embeddings): E2E only; the knee goes
    /// by E2E.
    Whole,
}

/// Which tokens a model's throughput (TPM) counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The tokens the model generated.
    Output,
    /// The tokens it read: an operation that generates none (embeddings).
    Input,
}

/// One model's measurement profile. Build it with [`Profile::of`] over the model's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub timing: Timing,
    pub counted: Counted,
    /// A request reasoned: TTFC and the reasoning share are shown.
    pub reasoning: bool,
    /// A request read cached input: the cache hit share is shown.
    pub cached: bool,
    /// The run was priced: cost per 1,000 successes and per 1M output tokens are shown.
    pub priced: bool,
    /// An open-loop (rate) ladder: the send lag and TTFT from the scheduled time are shown.
    pub scheduled: bool,
}

impl Profile {
    /// The profile of `steps` (one model's ladder, or every row a view shows together).
    ///
    /// Whole answers when some step succeeded and none has a first token; input-counted when
    /// some step succeeded with input tokens and none produced an output token.
    pub fn of<'a>(steps: impl IntoIterator<Item = &'a StepSummary>) -> Profile {
        let (mut first_token, mut e2e, mut output, mut input) = (false, false, false, false);
        let mut p = Profile {
            timing: Timing::Streamed,
            counted: Counted::Output,
            reasoning: false,
            cached: false,
            priced: false,
            scheduled: false,
        };
        for s in steps {
            first_token |= s.ttft_p50_ms.is_some() || s.tpot_p50_ms.is_some();
            e2e |= s.succeeded > 0 && s.e2e_p50_ms.is_some();
            output |= s.output_tokens > 0;
            input |= s.succeeded > 0 && s.input_tokens > 0;
            p.reasoning |= s.any_reasoning();
            p.cached |= s.cached_tokens > 0;
            p.priced |= s.cost_per_1k_ok.is_some();
            p.scheduled |= s.offered_rps.is_some();
        }
        if e2e && !first_token {
            p.timing = Timing::Whole;
        }
        if input && !output {
            p.counted = Counted::Input;
        }
        p
    }

    /// The profile of one step alone.
    pub fn of_step(s: &StepSummary) -> Profile {
        Profile::of(std::iter::once(s))
    }

    /// Whether TTFT, TPOT and ITL were measured.
    pub fn streamed(&self) -> bool {
        self.timing == Timing::Streamed
    }

    /// Whether output rates (output TPM, the decode rate) mean anything for these steps.
    pub fn generates(&self) -> bool {
        self.counted == Counted::Output
    }

    /// The tokens per minute a step's TPM figure shows: output tokens over the steady window
    /// ([`StepSummary::throughput`]), or the input tokens per minute of an input-counted model.
    pub fn tpm(&self, s: &StepSummary) -> f64 {
        match self.counted {
            Counted::Output => s.throughput(true),
            Counted::Input => s.input_tpm(),
        }
    }

    /// Which tokens the TPM figure counts, as a header or axis says it: "output" or "input".
    pub fn tokens(&self) -> &'static str {
        match self.counted {
            Counted::Output => "output",
            Counted::Input => "input",
        }
    }

    /// The TPM figure's header, saying which tokens it counts: "output TPM" or "input TPM"
    /// (a bare "TPM" is never shown: account limits count input + output, `total_tpm`).
    pub fn tpm_header(&self) -> &'static str {
        match self.counted {
            Counted::Output => "output TPM",
            Counted::Input => "input TPM",
        }
    }

    /// The note under a table whose TTFT, TPOT and ITL read `–`, saying why; `None` when they
    /// were measured.
    pub fn unmeasured_note(&self) -> Option<&'static str> {
        match (self.timing, self.counted) {
            (Timing::Streamed, _) => None,
            (Timing::Whole, Counted::Output) => Some(NOT_STREAMED_NOTE),
            (Timing::Whole, Counted::Input) => Some(EMBEDDINGS_NOTE),
        }
    }
}

/// Under the table of a model whose requests were not streamed: why TTFT, TPOT and ITL read `–`.
pub const NOT_STREAMED_NOTE: &str = "TTFT, TPOT and ITL: – (not measured): the requests were not streamed (request.stream: false), so no token arrived before the whole answer; E2E and tokens are measured, and the knee goes by E2E.";

/// Under the table of an embeddings model: why TTFT, TPOT and ITL read `–`, and what its
/// throughput counts.
pub const EMBEDDINGS_NOTE: &str = "TTFT, TPOT and ITL: – (not measured): an embeddings answer is one body of vectors, no token; E2E and input tokens are measured (input TPM: input tokens per minute, input tok/s: per second), and the knee goes by E2E.";

#[cfg(test)]
mod tests {
    use super::*;

    fn step(ttft: Option<f64>, output: u64, input: u64) -> StepSummary {
        StepSummary {
            succeeded: 10,
            attempted: 10,
            ttft_p50_ms: ttft,
            e2e_p50_ms: Some(100.0),
            output_tokens: output,
            input_tokens: input,
            tpm: 600.0,
            tpm_total: 1_000.0,
            ..StepSummary::default()
        }
    }

    #[test]
    fn a_streamed_generation_is_the_default() {
        let s = [step(Some(20.0), 40, 10), step(Some(25.0), 40, 10)];
        let p = Profile::of(&s);
        assert_eq!((p.timing, p.counted), (Timing::Streamed, Counted::Output));
        assert!(p.streamed() && p.generates());
        assert_eq!(p.unmeasured_note(), None);
        assert_eq!(p.tokens(), "output");
        assert_eq!(p.tpm_header(), "output TPM");
        assert_eq!(p.tpm(&s[0]), s[0].throughput(true));
    }

    #[test]
    fn whole_answers_and_embeddings_say_why_ttft_is_missing() {
        let unstreamed = [step(None, 40, 10)];
        let p = Profile::of(&unstreamed);
        assert_eq!((p.timing, p.counted), (Timing::Whole, Counted::Output));
        assert_eq!(p.unmeasured_note(), Some(NOT_STREAMED_NOTE));
        let embeddings = [step(None, 0, 10)];
        let p = Profile::of(&embeddings);
        assert_eq!((p.timing, p.counted), (Timing::Whole, Counted::Input));
        assert_eq!(p.unmeasured_note(), Some(EMBEDDINGS_NOTE));
        assert_eq!(p.tokens(), "input");
        assert_eq!(p.tpm_header(), "input TPM");
        assert_eq!(p.tpm(&embeddings[0]), 400.0);
        assert!(!p.generates());
    }

    #[test]
    fn one_streamed_or_generating_step_decides_for_the_ladder() {
        let mixed = [step(None, 0, 10), step(Some(20.0), 5, 10)];
        let p = Profile::of(&mixed);
        assert_eq!((p.timing, p.counted), (Timing::Streamed, Counted::Output));
        // No success at all: nothing says the answers were whole or input-only.
        let failed = StepSummary {
            attempted: 10,
            failed: 10,
            ..StepSummary::default()
        };
        let p = Profile::of_step(&failed);
        assert_eq!((p.timing, p.counted), (Timing::Streamed, Counted::Output));
    }

    #[test]
    fn optional_figures_follow_any_step() {
        let mut s = step(Some(20.0), 40, 10);
        assert_eq!(
            Profile::of_step(&s),
            Profile {
                timing: Timing::Streamed,
                counted: Counted::Output,
                reasoning: false,
                cached: false,
                priced: false,
                scheduled: false,
            }
        );
        s.reasoned = 1;
        s.cached_tokens = 5;
        s.cost_per_1k_ok = Some(1.0);
        s.offered_rps = Some(2.0);
        let p = Profile::of([&step(Some(1.0), 1, 1), &s]);
        assert!(p.reasoning && p.cached && p.priced && p.scheduled);
    }
}
