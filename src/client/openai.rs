//! OpenAI-compatible chat and legacy completions: request bodies and chunk interpretation.
