//! The tool calls a request's conversation holds and the results that answer them, in any
//! dialect's shape: chat's assistant `tool_calls[].id` and `role: tool` `tool_call_id`,
//! Anthropic's `tool_use` blocks' `id` and `tool_result` blocks' `tool_use_id`, the Responses
//! API's `function_call` and `function_call_output` items' `call_id`. A result that answers no
//! call of the conversation is refused, as every provider refuses it; the ids answered go to the
//! server's truth (`TruthRecord::answers`), so a test can tell whose call a turn sent back.
//! Pure.

use serde_json::Value;

/// The ids of the calls the conversation's tool results answer, in order; `Err` with the
/// message of a 400 when one answers no call made before it.
pub fn answered(parts: &[&Value]) -> Result<Vec<String>, String> {
    let mut seen = Seen::default();
    for v in parts {
        seen.walk(v);
    }
    match seen.orphan {
        Some(id) => Err(format!(
            "Invalid request: the tool result for call id '{id}' answers no tool call made \
             before it in the conversation."
        )),
        None => Ok(seen.answers),
    }
}

#[derive(Default)]
struct Seen {
    calls: Vec<String>,
    answers: Vec<String>,
    orphan: Option<String>,
}

impl Seen {
    fn walk(&mut self, v: &Value) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| self.walk(i)),
            Value::Object(map) => {
                let text = |k: &str| map.get(k).and_then(Value::as_str);
                let role = text("role");
                let ty = text("type");
                // A call made.
                let call = match (role, ty) {
                    (_, Some("tool_use")) => text("id"),
                    (_, Some("function_call")) => text("call_id"),
                    _ => None,
                };
                if let Some(id) = call {
                    self.calls.push(id.to_string());
                }
                if let Some(Value::Array(calls)) = map.get("tool_calls") {
                    let ids = calls.iter().filter_map(|c| c.get("id")?.as_str());
                    self.calls.extend(ids.map(str::to_string));
                }
                // A result answering one.
                let answer = match (role, ty) {
                    (Some("tool"), _) => text("tool_call_id"),
                    (_, Some("tool_result")) => text("tool_use_id"),
                    (_, Some("function_call_output")) => text("call_id"),
                    _ => None,
                };
                if let Some(id) = answer {
                    if !self.calls.iter().any(|c| c == id) && self.orphan.is_none() {
                        self.orphan = Some(id.to_string());
                    }
                    self.answers.push(id.to_string());
                }
                // Blocks inside a message (Anthropic's content).
                if let Some(content) = map.get("content").filter(|c| c.is_array()) {
                    self.walk(content);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> Result<Vec<String>, String> {
        answered(&[&v])
    }

    #[test]
    fn every_dialects_results_answer_its_calls() {
        let chat = json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "r"},
        ]);
        assert_eq!(of(chat).unwrap(), ["call_1"]);
        let anthropic = json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "text", "text": "t"},
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}]},
        ]);
        assert_eq!(of(anthropic).unwrap(), ["toolu_1"]);
        let responses = json!([
            {"role": "user", "content": "q"},
            {"type": "function_call", "call_id": "call_9", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_9", "output": "r"},
        ]);
        assert_eq!(of(responses).unwrap(), ["call_9"]);
        assert!(of(json!([{"role": "user", "content": "q"}]))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_result_answering_no_call_is_refused() {
        let orphan = json!([
            {"role": "user", "content": "q"},
            {"role": "tool", "tool_call_id": "call_x", "content": "r"},
        ]);
        let err = of(orphan).unwrap_err();
        assert!(err.contains("call_x"), "{err}");
        // Answered before it was made.
        let early = json!([
            {"type": "function_call_output", "call_id": "call_9", "output": "r"},
            {"type": "function_call", "call_id": "call_9", "name": "f", "arguments": "{}"},
        ]);
        assert!(of(early).is_err());
    }
}
