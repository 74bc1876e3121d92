//! The account limits a scenario declares (`limits:`): what each limit is and how the
//! provider counts a request against it, which `plan`, the checks before traffic and during a
//! run read.

/// The account limits a scenario declares (`limits:`), and how the provider counts each.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub concurrency: Option<u32>,
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
    /// How `tpm` counts a request.
    pub tpm_counts: TpmCounts,
    /// Input tokens per minute (Anthropic's ITPM).
    pub itpm: Option<u64>,
    /// Whether prompt tokens read from the cache count toward `itpm` (Anthropic's do not).
    pub itpm_cached: bool,
    /// Output tokens per minute (Anthropic's OTPM).
    pub otpm: Option<u64>,
    /// The workload's `max_tokens` (what a rule that reserves it charges), from `request:`.
    pub max_tokens: Option<u32>,
}

impl Limits {
    /// Whether any limit is declared.
    pub fn any(&self) -> bool {
        self.concurrency.is_some()
            || self.rpm.is_some()
            || self.tpm.is_some()
            || self.itpm.is_some()
            || self.otpm.is_some()
    }
}

/// How a declared `tpm` counts a request (`limits.tpm_counts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpmCounts {
    /// The tokens used: input + output (the default; most gateways, after the answer).
    #[default]
    Used,
    /// Prompt + `max_tokens`, reserved at admission (Azure OpenAI, LiteLLM, Cerebras).
    Reserve,
    /// The larger of the prompt and `max_tokens` (OpenAI).
    Larger,
}
