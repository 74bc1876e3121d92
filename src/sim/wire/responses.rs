//! The Responses API's frames (`POST /v1/responses`), in the shapes OpenAI streams and the
//! official SDK's event models validate: every event named twice (`event:` and `type`) and
//! numbered (`sequence_number`, from 0, last in each object so a token's frame is a fixed prefix,
//! its word, a fixed middle and its number). A plain answer is
//!
//! `response.created`, `response.in_progress`, `response.output_item.added` (the message),
//! `response.content_part.added`, one `response.output_text.delta` per token,
//! `response.output_text.done`, `response.content_part.done`, `response.output_item.done`, and
//! `response.completed` (usage) or, cut at `max_output_tokens`, `response.incomplete`.
//!
//! Streamed reasoning goes first, in a reasoning item (output 0) whose summary gets one
//! `response.reasoning_summary_text.delta` per token; the message is then output 1.
//!
//! A tool call answers with a `function_call` item instead of the message: the item added (no
//! content part), one `response.function_call_arguments.delta` per token,
//! `response.function_call_arguments.done`, the item done, and the terminal event. Pure.

use super::text;

/// Events before the first token: 2 for the response, 2 to open the first item (its content
/// or summary part added); a function call item has no part.
const OPENING_EVENTS: u64 = 4;

/// Events between the last reasoning token and the first answer token: the summary's text and
/// part done, the reasoning item done, the message item and its part added (a function call
/// item has no part).
pub(super) fn switch_events(tool: bool) -> u64 {
    if tool {
        4
    } else {
        5
    }
}

/// One response's identity.
pub(super) struct Ids<'a> {
    /// `resp_…`
    pub id: &'a str,
    pub created: u64,
    /// The model as JSON text.
    pub model_json: &'a str,
    /// The answer is a call of this tool (its name as JSON text) with these arguments (JSON
    /// text of a JSON string's content, escaped).
    pub tool: Option<(&'a str, &'a str)>,
}

impl Ids<'_> {
    fn suffix(&self) -> &str {
        self.id.strip_prefix("resp_").unwrap_or(self.id)
    }

    fn message_id(&self) -> String {
        format!("msg_{}", self.suffix())
    }

    fn reasoning_id(&self) -> String {
        format!("rs_{}", self.suffix())
    }

    fn call_item_id(&self) -> String {
        format!("fc_{}", self.suffix())
    }

    /// The function call item (`status`; its arguments once known).
    fn call_item(&self, status: &str, done: bool) -> String {
        let (name, args) = self.tool.unwrap_or(("\"\"", ""));
        let args = if done { args } else { "" };
        format!(
            "{{\"id\":\"{}\",\"type\":\"function_call\",\"status\":\"{status}\",\"arguments\":\"{args}\",\"call_id\":\"call_{}\",\"name\":{name}}}",
            self.call_item_id(),
            self.suffix()
        )
    }

    /// The item of a finished answer: the function call or the message with `text`.
    fn answer_item(&self, status: &str, text: &str) -> String {
        if self.tool.is_some() {
            self.call_item(status, true)
        } else {
            self.message_item(status, Some(text))
        }
    }

    /// The response object: `status`, its `output` items (JSON text), usage and why it is
    /// incomplete.
    fn response(
        &self,
        status: &str,
        output: &str,
        usage: Option<&str>,
        reason: Option<&str>,
    ) -> String {
        let (id, created, model) = (self.id, self.created, self.model_json);
        let usage = usage.unwrap_or("null");
        let incomplete = reason.map_or("null".to_string(), |r| format!("{{\"reason\":\"{r}\"}}"));
        format!(
            "{{\"id\":\"{id}\",\"object\":\"response\",\"created_at\":{created},\"status\":\"{status}\",\"error\":null,\"incomplete_details\":{incomplete},\"instructions\":null,\"model\":{model},\"output\":[{output}],\"parallel_tool_calls\":true,\"store\":false,\"temperature\":1.0,\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,\"usage\":{usage}}}"
        )
    }

    fn message_item(&self, status: &str, text: Option<&str>) -> String {
        let content = match text {
            Some(t) => format!(
                "{{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"{t}\"}}"
            ),
            None => String::new(),
        };
        format!(
            "{{\"id\":\"{}\",\"type\":\"message\",\"status\":\"{status}\",\"role\":\"assistant\",\"content\":[{content}]}}",
            self.message_id()
        )
    }

    fn reasoning_item(&self, summary: Option<&str>) -> String {
        let summary = summary.map_or(String::new(), |t| {
            format!("{{\"type\":\"summary_text\",\"text\":\"{t}\"}}")
        });
        format!(
            "{{\"id\":\"{}\",\"type\":\"reasoning\",\"summary\":[{summary}]}}",
            self.reasoning_id()
        )
    }
}

/// One event: its type, its other fields (JSON text without braces) and its number.
fn event(out: &mut String, ty: &str, fields: &str, seq: u64) {
    out.push_str(&format!(
        "event: {ty}\ndata: {{\"type\":\"{ty}\",{fields},\"sequence_number\":{seq}}}\n\n"
    ));
}

/// What goes before the first token: the response created and in progress, and the first item
/// opened (the reasoning item when reasoning is streamed, else the message).
pub(super) fn opening(ids: &Ids, reasoning_streamed: bool) -> String {
    let mut s = String::with_capacity(1024);
    let r = ids.response("in_progress", "", None, None);
    event(&mut s, "response.created", &format!("\"response\":{r}"), 0);
    event(
        &mut s,
        "response.in_progress",
        &format!("\"response\":{r}"),
        1,
    );
    if reasoning_streamed {
        let item = ids.reasoning_item(None);
        let fields = format!("\"output_index\":0,\"item\":{item}");
        event(&mut s, "response.output_item.added", &fields, 2);
        let fields = format!(
            "\"item_id\":\"{}\",\"output_index\":0,\"summary_index\":0,\"part\":{{\"type\":\"summary_text\",\"text\":\"\"}}",
            ids.reasoning_id()
        );
        event(&mut s, "response.reasoning_summary_part.added", &fields, 3);
    } else {
        open_message(&mut s, ids, 0, 2);
    }
    s
}

/// Opens the answer's item at `output_index` with event number `seq`: the message and its text
/// part, or the function call.
fn open_message(s: &mut String, ids: &Ids, output_index: u32, seq: u64) {
    if ids.tool.is_some() {
        let fields = format!(
            "\"output_index\":{output_index},\"item\":{}",
            ids.call_item("in_progress", false)
        );
        event(s, "response.output_item.added", &fields, seq);
        return;
    }
    let item = ids.message_item("in_progress", None);
    let fields = format!("\"output_index\":{output_index},\"item\":{item}");
    event(s, "response.output_item.added", &fields, seq);
    let fields = format!(
        "\"item_id\":\"{}\",\"output_index\":{output_index},\"content_index\":0,\"part\":{{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"\"}}",
        ids.message_id()
    );
    event(s, "response.content_part.added", &fields, seq + 1);
}

/// The fixed parts of an answer token's frame: before the word, and between the word and the
/// event's number.
pub(super) fn token_parts(ids: &Ids, reasoning_streamed: bool) -> (String, &'static [u8]) {
    let output_index = u32::from(reasoning_streamed);
    if ids.tool.is_some() {
        return (
            format!(
                "event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"{}\",\"output_index\":{output_index},\"delta\":\"",
                ids.call_item_id()
            ),
            b"\",\"sequence_number\":",
        );
    }
    (
        format!(
            "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"item_id\":\"{}\",\"output_index\":{output_index},\"content_index\":0,\"delta\":\"",
            ids.message_id()
        ),
        b"\",\"logprobs\":[],\"sequence_number\":",
    )
}

/// The number of answer token 0's event, after `reasoning` streamed reasoning tokens; a tool
/// call's item opens with one event less.
pub(super) fn first_answer_seq(reasoning: Option<u64>, tool: bool) -> u64 {
    match reasoning {
        None => OPENING_EVENTS - u64::from(tool),
        Some(r) => OPENING_EVENTS + r + switch_events(tool),
    }
}

/// Reasoning token `i`'s frame: a delta of the reasoning item's summary.
pub(super) fn reasoning_token(ids: &Ids, i: u32, word: &str) -> String {
    let mut s = String::with_capacity(256);
    let fields = format!(
        "\"item_id\":\"{}\",\"output_index\":0,\"summary_index\":0,\"delta\":\"{word}\"",
        ids.reasoning_id()
    );
    event(
        &mut s,
        "response.reasoning_summary_text.delta",
        &fields,
        OPENING_EVENTS + u64::from(i),
    );
    s
}

/// From the reasoning to the answer: the summary and the reasoning item done, the message
/// opened as output 1.
pub(super) fn answer_start(ids: &Ids, reasoning: u32) -> String {
    let mut s = String::with_capacity(1024);
    let seq = OPENING_EVENTS + u64::from(reasoning);
    let summary = text(reasoning);
    let rs = ids.reasoning_id();
    let fields = format!(
        "\"item_id\":\"{rs}\",\"output_index\":0,\"summary_index\":0,\"text\":\"{summary}\""
    );
    event(&mut s, "response.reasoning_summary_text.done", &fields, seq);
    let fields = format!(
        "\"item_id\":\"{rs}\",\"output_index\":0,\"summary_index\":0,\"part\":{{\"type\":\"summary_text\",\"text\":\"{summary}\"}}"
    );
    event(
        &mut s,
        "response.reasoning_summary_part.done",
        &fields,
        seq + 1,
    );
    let fields = format!(
        "\"output_index\":0,\"item\":{}",
        ids.reasoning_item(Some(&summary))
    );
    event(&mut s, "response.output_item.done", &fields, seq + 2);
    open_message(&mut s, ids, 1, seq + 3);
    s
}

/// How one answer ended, for [`closing`] and [`full_body`].
pub(super) struct Ending<'a> {
    /// Answer tokens sent.
    pub n: u32,
    /// Cut at `max_output_tokens` (`response.incomplete`).
    pub cut: bool,
    /// Streamed reasoning tokens (`None`: none streamed).
    pub reasoning_streamed: Option<u32>,
    /// `usage` as JSON text.
    pub usage: &'a str,
}

/// The output items of a finished answer.
fn output(ids: &Ids, e: &Ending, status: &str) -> String {
    let message = ids.answer_item(status, &text(e.n));
    match e.reasoning_streamed {
        Some(r) => format!("{},{message}", ids.reasoning_item(Some(&text(r)))),
        None => message,
    }
}

/// Everything after the last token: the text, its part and its item done, then (when `done`)
/// `response.completed`, or `response.incomplete` for a cut.
pub(super) fn closing(ids: &Ids, e: &Ending, done: bool) -> String {
    let mut s = String::with_capacity(2048);
    let seq =
        first_answer_seq(e.reasoning_streamed.map(u64::from), ids.tool.is_some()) + u64::from(e.n);
    let output_index = u32::from(e.reasoning_streamed.is_some());
    let status = if e.cut { "incomplete" } else { "completed" };
    if let Some((name, args)) = ids.tool {
        let fields = format!(
            "\"item_id\":\"{}\",\"output_index\":{output_index},\"name\":{name},\"arguments\":\"{args}\"",
            ids.call_item_id()
        );
        event(
            &mut s,
            "response.function_call_arguments.done",
            &fields,
            seq,
        );
        let fields = format!(
            "\"output_index\":{output_index},\"item\":{}",
            ids.call_item(status, true)
        );
        event(&mut s, "response.output_item.done", &fields, seq + 1);
        if done {
            terminal(&mut s, ids, e, seq + 2);
        }
        return s;
    }
    let (msg, answer) = (ids.message_id(), text(e.n));
    let fields = format!(
        "\"item_id\":\"{msg}\",\"output_index\":{output_index},\"content_index\":0,\"text\":\"{answer}\",\"logprobs\":[]"
    );
    event(&mut s, "response.output_text.done", &fields, seq);
    let fields = format!(
        "\"item_id\":\"{msg}\",\"output_index\":{output_index},\"content_index\":0,\"part\":{{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"{answer}\"}}"
    );
    event(&mut s, "response.content_part.done", &fields, seq + 1);
    let fields = format!(
        "\"output_index\":{output_index},\"item\":{}",
        ids.message_item(status, Some(&answer))
    );
    event(&mut s, "response.output_item.done", &fields, seq + 2);
    if done {
        terminal(&mut s, ids, e, seq + 3);
    }
    s
}

/// `response.completed`, or `response.incomplete` for a cut, numbered `seq`.
fn terminal(s: &mut String, ids: &Ids, e: &Ending, seq: u64) {
    let status = if e.cut { "incomplete" } else { "completed" };
    let reason = e.cut.then_some("max_output_tokens");
    let r = ids.response(status, &output(ids, e, status), Some(e.usage), reason);
    let ty = if e.cut {
        "response.incomplete"
    } else {
        "response.completed"
    };
    event(s, ty, &format!("\"response\":{r}"), seq);
}

/// `usage` as JSON text: `output` tokens in all (reasoning included), `cached` of the input
/// served from the cache (the simulator writes no cache entries it counts: `cache_write_tokens`
/// is 0, and present because the SDK's model requires it).
pub(super) fn usage(input: u64, output: u64, cached: u64, reasoning: u64) -> String {
    format!(
        "{{\"input_tokens\":{input},\"input_tokens_details\":{{\"cached_tokens\":{cached},\"cache_write_tokens\":0}},\"output_tokens\":{output},\"output_tokens_details\":{{\"reasoning_tokens\":{reasoning}}},\"total_tokens\":{}}}",
        input + output
    )
}

/// The in-band error: `response.failed` with a `server_error`, event number `seq`.
pub(super) fn failed(ids: &Ids, seq: u64) -> String {
    let mut s = String::with_capacity(1024);
    let r = failed_response(ids);
    event(&mut s, "response.failed", &format!("\"response\":{r}"), seq);
    s
}

/// The response object of a failed answer (`status: failed`, `error.code: server_error`): the
/// data of `response.failed`, and the whole body of a failed answer without streaming.
pub(super) fn failed_response(ids: &Ids) -> String {
    ids.response("failed", "", None, None).replacen(
        "\"error\":null",
        "\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error while processing your request. Sorry about that!\"}",
        1,
    )
}

/// A token event cut in the middle of its JSON.
pub(super) const MALFORMED: &[u8] =
    b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n";

/// The non-streaming body: the finished response object.
pub(super) fn full_body(ids: &Ids, e: &Ending) -> String {
    let status = if e.cut { "incomplete" } else { "completed" };
    let reason = e.cut.then_some("max_output_tokens");
    ids.response(status, &output(ids, e, status), Some(e.usage), reason)
}
