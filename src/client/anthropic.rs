//! Anthropic Messages API: request body and event interpretation.
