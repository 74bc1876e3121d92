//! The model's tool calls kept from one answer, for the requests that ask for them (an agent's
//! turn, whose next turn sends the calls back: `PreparedTarget::keeping_calls`). Each dialect's
//! reader counts calls for every request (`ChunkInfo::tool_calls`); only when keeping is asked
//! does the stream hand the events that carry a call (and the final one) to the dialect's
//! keeper (`client::dialect::ClientDialect::calls`), which reads the call's id, name and
//! argument fragments into a [`CallLog`]. Other requests pay one branch per event, nothing per
//! token.

use crate::model::ToolCall;

/// The calls of one answer, in the order they began, each under the key its stream numbers it
/// by (chat's `index`, Anthropic's content block, the Responses API's `output_index`).
#[derive(Debug, Default)]
pub struct CallLog {
    calls: Vec<(Option<u64>, ToolCall)>,
}

impl CallLog {
    /// The call numbered `key` (`None`: a call named without a number begins a new one, and an
    /// unnumbered fragment continues the last), its id and name set where given and not yet
    /// known: a server that names the call again in every delta (llama-cpp-python) still makes
    /// one call.
    pub fn name(&mut self, key: Option<u64>, id: Option<&str>, name: Option<&str>) {
        let begins = id.is_some_and(|s| !s.is_empty()) || name.is_some_and(|s| !s.is_empty());
        let call = self.entry(key, begins);
        for (have, given) in [(&mut call.id, id), (&mut call.name, name)] {
            if let Some(given) = given.filter(|g| !g.is_empty() && have.is_empty()) {
                given.clone_into(have);
            }
        }
    }

    /// A fragment of call `key`'s arguments.
    pub fn append(&mut self, key: Option<u64>, fragment: &str) {
        if !fragment.is_empty() {
            self.entry(key, false).arguments.push_str(fragment);
        }
    }

    /// Call `key`'s whole arguments (a stream's final word on them, or a whole answer's).
    pub fn set_arguments(&mut self, key: Option<u64>, arguments: &str) {
        arguments.clone_into(&mut self.entry(key, false).arguments);
    }

    /// The calls, each with `{}` for arguments it never got.
    pub fn into_calls(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|(_, mut c)| {
                if c.arguments.trim().is_empty() {
                    c.arguments = "{}".into();
                }
                c
            })
            .collect()
    }

    fn entry(&mut self, key: Option<u64>, begins: bool) -> &mut ToolCall {
        let at = match key {
            Some(_) => self.calls.iter().position(|(k, _)| *k == key),
            None if begins => None,
            None => self.calls.len().checked_sub(1),
        };
        let at = at.unwrap_or_else(|| {
            self.calls.push((key, ToolCall::default()));
            self.calls.len() - 1
        });
        &mut self.calls[at].1
    }
}

/// The keeper of a dialect without tool calls.
pub fn none(_: &str, _: &[u8], _: &mut CallLog) {}

/// The whole-answer keeper of a dialect without tool calls.
pub fn none_whole(_: &[u8], _: &mut CallLog) {}

/// A call's arguments as JSON text, from a field that should be a string (chat, Responses) but
/// may be an object.
pub(crate) fn arguments_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_numbered_named_once_and_their_fragments_joined() {
        let mut log = CallLog::default();
        log.name(Some(0), Some("call_a"), Some("f"));
        log.append(Some(0), "{\"x\":");
        // Named again with each fragment (llama-cpp-python): still one call.
        log.name(Some(0), Some("call_a"), Some("f"));
        log.append(Some(0), "1}");
        log.name(Some(1), Some("call_b"), Some("g"));
        // Unnumbered: a named entry begins a call, a fragment continues the last.
        log.name(None, Some("call_c"), Some("h"));
        log.append(None, "{}");
        let calls = log.into_calls();
        let got: Vec<_> = calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("call_a", "f", "{\"x\":1}"),
                ("call_b", "g", "{}"),
                ("call_c", "h", "{}")
            ]
        );
    }

    #[test]
    fn final_arguments_replace_the_fragments() {
        let mut log = CallLog::default();
        log.name(Some(2), Some("call_a"), Some("f"));
        log.append(Some(2), "{\"x\"");
        log.set_arguments(Some(2), "{\"x\":1}");
        assert_eq!(log.into_calls()[0].arguments, "{\"x\":1}");
    }
}
