//! Prompt sets (`request.prompts`) and synthetic prompts (`request.prompt.synthetic_tokens`):
//! many different prompts for one scenario, read once at load time, with errors that name the
//! prompt file and its line. The workload fingerprint records a set by file name and content
//! hash, never by its text, so baselines and PR summaries do not copy prompts.

use super::normalize::fingerprint_of_bytes;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What one request says: plain text (sent as one user message) or a whole chat.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptContent {
    Text(String),
    /// Chat messages as written in the file: objects with `role` and `content`.
    Messages(Vec<Value>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromptItem {
    pub content: PromptContent,
    /// Overrides `request.max_tokens` for this prompt.
    pub max_tokens: Option<u32>,
}

/// The prompts of a `request.prompts` file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptSet {
    pub file: PathBuf,
    /// First 16 hex digits of the SHA-256 of the file's bytes.
    pub sha256: String,
    pub items: Vec<PromptItem>,
}

/// Where the prompt problem is: the prompt file and its 1-based line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PromptFileError {
    pub(super) line: Option<usize>,
    pub(super) message: String,
}

/// An error at `line` of a prompt set or trace.
pub(super) fn at(line: usize, message: impl Into<String>) -> PromptFileError {
    PromptFileError {
        line: Some(line),
        message: message.into(),
    }
}

/// The non-blank lines of a JSONL file as JSON objects, each with its 1-based line number and
/// text; a line that is not an object is an error at that line, ending in `fix`. Prompt sets
/// and traces read their lines through this.
pub(super) fn json_object_lines<'a>(
    text: &'a str,
    fix: &'a str,
) -> impl Iterator<Item = Result<(usize, &'a str, serde_json::Map<String, Value>), PromptFileError>> + 'a
{
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(move |(i, line)| {
            let n = i + 1;
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => Ok((n, line, o)),
                Ok(_) => Err(at(n, format!("not a JSON object; {fix}"))),
                Err(e) => Err(at(n, format!("not a JSON object ({e}); {fix}"))),
            }
        })
}

/// The bytes of a file the scenario names (a prompt set, a trace): a regular file under `cap`
/// bytes (`bounded`); a path that cannot be read is said to be relative to the scenario file.
pub(super) fn read_named_file(
    path: &Path,
    cap: u64,
    raise: &str,
) -> Result<Vec<u8>, PromptFileError> {
    super::bounded::read_capped(path, cap, raise).map_err(|why| PromptFileError {
        line: None,
        message: if why.starts_with("cannot read") {
            format!("{why}; the path is relative to the scenario file")
        } else {
            why
        },
    })
}

/// Reads a JSONL (`.jsonl`, `.ndjson`) or CSV (`.csv`) prompt set.
/// A regular file under `cap` bytes only (`bounded`); `raise` says how to lift the cap.
pub(super) fn read_prompt_set(
    path: &Path,
    cap: u64,
    raise: &str,
) -> Result<PromptSet, PromptFileError> {
    let bytes = read_named_file(path, cap, raise)?;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let text = String::from_utf8(bytes.clone()).map_err(|e| PromptFileError {
        line: None,
        message: format!("is not UTF-8 text ({e})"),
    })?;
    let items = match ext.as_str() {
        "jsonl" | "ndjson" => parse_jsonl(&text)?,
        "json" => parse_sharegpt_json(&text)?,
        "csv" => parse_csv(&text)?,
        _ => {
            return Err(PromptFileError {
                line: None,
                message: "unknown format; name the file .jsonl (one JSON object per line), \
                          .json (a ShareGPT list of {\"conversations\": [...]}) or .csv (with \
                          a `prompt` column)"
                    .into(),
            })
        }
    };
    if items.is_empty() {
        return Err(PromptFileError {
            line: None,
            message: "holds no prompts; add one per line, e.g. {\"prompt\": \"Hello\"}".into(),
        });
    }
    Ok(PromptSet {
        file: path.to_path_buf(),
        sha256: fingerprint_of_bytes(&bytes),
        items,
    })
}

/// One JSON object per non-blank line: `{"prompt": "..."}` or `{"messages": [...]}`, with an
/// optional `"max_tokens"`; other keys (ids, labels) are ignored.
pub(super) fn parse_jsonl(text: &str) -> Result<Vec<PromptItem>, PromptFileError> {
    let mut items = Vec::new();
    for row in json_object_lines(text, "write {\"prompt\": \"...\"}") {
        let (n, _, o) = row?;
        if let Some(c) = o.get("conversations") {
            items.push(sharegpt_item(c).map_err(|m| at(n, m))?);
            continue;
        }
        let content = match (o.get("prompt"), o.get("messages")) {
            (Some(_), Some(_)) => return Err(at(n, "has both `prompt` and `messages`; keep one")),
            (Some(Value::String(s)), None) if !s.trim().is_empty() => {
                PromptContent::Text(s.clone())
            }
            (Some(_), None) => return Err(at(n, "`prompt` must be a non-empty string")),
            (None, Some(m)) => PromptContent::Messages(check_messages(n, m)?),
            (None, None) => {
                return Err(at(
                    n,
                    "has neither `prompt` nor `messages`; add one of them",
                ))
            }
        };
        let max_tokens = match o.get("max_tokens") {
            None | Some(Value::Null) => None,
            Some(v) => Some(positive(n, v)?),
        };
        items.push(PromptItem {
            content,
            max_tokens,
        });
    }
    Ok(items)
}

/// A ShareGPT-style `.json` file: a list of objects with `conversations: [{from, value}]`.
/// Items are named by their place in the list (a JSON array has no line per item here).
fn parse_sharegpt_json(text: &str) -> Result<Vec<PromptItem>, PromptFileError> {
    let fix = "a .json prompt set is a ShareGPT list: [{\"conversations\": [{\"from\": \
               \"human\", \"value\": \"Hi\"}]}]";
    let v: Value =
        serde_json::from_str(text).map_err(|e| at(e.line(), format!("not JSON ({e}); {fix}")))?;
    let Value::Array(list) = v else {
        return Err(at(1, format!("not a list; {fix}")));
    };
    let mut items = Vec::with_capacity(list.len());
    for (k, entry) in list.iter().enumerate() {
        let item = entry
            .get("conversations")
            .ok_or_else(|| "has no `conversations`".to_string())
            .and_then(sharegpt_item);
        match item {
            Ok(i) => items.push(i),
            // An entry with nothing to ask (only an answer) is skipped, as datasets have them.
            Err(m) if m == NOTHING_ASKED => {}
            Err(m) => {
                return Err(PromptFileError {
                    line: None,
                    message: format!("item {} {m}; {fix}", k + 1),
                })
            }
        }
    }
    Ok(items)
}

/// Why a conversation gives no prompt: no human turn.
const NOTHING_ASKED: &str = "has no human turn to send";

/// A ShareGPT conversation as chat messages: `human`/`user` turns are the user's, `gpt`,
/// `chatgpt`, `bard`, `bing`, `assistant` and `model` turns the assistant's, `system` the system
/// prompt. Everything up to the last human turn is sent (multi-turn included); the answer after
/// it is what the server should produce, so its size (about four characters a token) becomes
/// the item's `max_tokens`.
fn sharegpt_item(c: &Value) -> Result<PromptItem, String> {
    let turns = c
        .as_array()
        .ok_or_else(|| "`conversations` must be a list of {from, value}".to_string())?;
    let mut messages = Vec::with_capacity(turns.len());
    for (k, t) in turns.iter().enumerate() {
        let from = t.get("from").and_then(Value::as_str);
        let value = t.get("value").and_then(Value::as_str);
        let (Some(from), Some(value)) = (from, value) else {
            return Err(format!("turn {} needs a `from` and a `value`", k + 1));
        };
        let role = match from.to_ascii_lowercase().as_str() {
            "human" | "user" => "user",
            "gpt" | "chatgpt" | "bard" | "bing" | "assistant" | "model" => "assistant",
            "system" => "system",
            other => {
                return Err(format!(
                    "turn {}: `from: {other}` is not human, gpt or system",
                    k + 1
                ))
            }
        };
        messages.push(serde_json::json!({"role": role, "content": value}));
    }
    let last_user = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .ok_or_else(|| NOTHING_ASKED.to_string())?;
    let answer = messages
        .get(last_user + 1)
        .and_then(|m| m["content"].as_str());
    let max_tokens = answer.map(|a| (a.chars().count() as u32).div_ceil(4).max(1));
    messages.truncate(last_user + 1);
    Ok(PromptItem {
        content: PromptContent::Messages(messages),
        max_tokens,
    })
}

fn positive(line: usize, v: &Value) -> Result<u32, PromptFileError> {
    v.as_u64()
        .filter(|n| *n >= 1)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            at(
                line,
                format!("`max_tokens` {v} is not a whole number of 1 or more"),
            )
        })
}

/// The chat roles a message may have.
const ROLES: [&str; 5] = ["system", "user", "assistant", "tool", "developer"];

fn check_messages(line: usize, m: &Value) -> Result<Vec<Value>, PromptFileError> {
    let fix = "write e.g. [{\"role\": \"user\", \"content\": \"Hi\"}]";
    let Some(list) = m.as_array().filter(|l| !l.is_empty()) else {
        return Err(at(
            line,
            format!("`messages` must be a non-empty list; {fix}"),
        ));
    };
    for (k, msg) in list.iter().enumerate() {
        let role = msg.get("role").and_then(Value::as_str);
        let content = msg.get("content");
        let ok_content = matches!(content, Some(Value::String(_) | Value::Array(_)));
        if role.is_none() || !ok_content {
            return Err(at(
                line,
                format!("message {} needs a `role` and a `content`; {fix}", k + 1),
            ));
        }
        if let Some(role) = role.filter(|r| !ROLES.contains(r)) {
            return Err(at(
                line,
                format!(
                    "message {}: role `{role}` is not one of {}",
                    k + 1,
                    ROLES.join(", ")
                ),
            ));
        }
    }
    Ok(list.clone())
}

/// A header row with a `prompt` column (and optionally `max_tokens`); one prompt per record.
pub(super) fn parse_csv(text: &str) -> Result<Vec<PromptItem>, PromptFileError> {
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = rd
        .headers()
        .map_err(|e| at(1, format!("unreadable header ({e})")))?;
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let Some(prompt_col) = col("prompt") else {
        return Err(at(
            1,
            "the header has no `prompt` column; add one, e.g. `prompt,max_tokens`",
        ));
    };
    let max_col = col("max_tokens");
    let mut items = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            at(line, format!("unreadable CSV ({e})"))
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let prompt = rec.get(prompt_col).unwrap_or_default();
        if prompt.trim().is_empty() {
            return Err(at(
                line,
                "the `prompt` cell is empty; write the prompt text",
            ));
        }
        let max_tokens = match max_col.and_then(|c| rec.get(c)).map(str::trim) {
            None | Some("") => None,
            Some(t) => Some(t.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                at(
                    line,
                    format!("`max_tokens` `{t}` is not a whole number of 1 or more"),
                )
            })?),
        };
        items.push(PromptItem {
            content: PromptContent::Text(prompt.to_string()),
            max_tokens,
        });
    }
    Ok(items)
}

/// Three-letter common English words: each is one token (with its leading space) in the GPT
/// (cl100k/o200k) and Claude tokenizers, and four characters with the space, which is also one
/// token by the simulator's four-characters-per-token count.
const WORDS: [&str; 48] = [
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "day", "get", "has", "him", "his", "how", "man", "new", "now", "old",
    "see", "two", "way", "who", "boy", "did", "its", "let", "put", "say", "she", "too", "use",
    "big", "end", "far", "few", "got", "may", "own", "run", "set",
];

/// Documented approximation: one word of synthetic text is one token.
pub const TOKENS_PER_WORD: f64 = 1.0;

/// A deterministic prompt of about `tokens` tokens: `tokens` words from `WORDS`, in an order
/// fixed by a tiny linear congruential generator so every run sends the same text.
pub fn synthetic_prompt(tokens: u32) -> String {
    let words = (f64::from(tokens) / TOKENS_PER_WORD).round().max(1.0) as usize;
    let mut out = String::with_capacity(words * 4);
    let mut x: u32 = 0x2545_f491;
    for i in 0..words {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[(x >> 16) as usize % WORDS.len()]);
    }
    out
}

/// `tokens` words of synthetic text drawn by a generator seeded with `seed`, each word followed by
/// a space (four characters, one token): texts of one seed are prefixes of each other, and
/// blocks of them join on the simulator's 64-character prefix-cache blocks (a trace's shared
/// `hash_ids` become shared text).
pub fn seeded_words(seed: u64, tokens: u32) -> String {
    let mut out = String::with_capacity(tokens as usize * 4);
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    for _ in 0..tokens {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push_str(WORDS[(x >> 33) as usize % WORDS.len()]);
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_reads_text_messages_and_max_tokens() {
        let text =
            "{\"prompt\": \"Hi\"}\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"Yo\"}], \
                    \"max_tokens\": 9, \"id\": 3}\n";
        let items = parse_jsonl(text).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].content, PromptContent::Text("Hi".into()));
        assert_eq!(items[1].max_tokens, Some(9));
        assert!(matches!(&items[1].content, PromptContent::Messages(m) if m.len() == 1));
    }

    #[test]
    fn jsonl_errors_name_the_line_and_the_fix() {
        let cases = [
            ("{\"prompt\": \"a\"}\nnot json\n", 2, "not a JSON object"),
            ("{\"text\": \"a\"}\n", 1, "neither `prompt` nor `messages`"),
            ("\n{\"prompt\": \"\"}\n", 2, "non-empty string"),
            ("{\"prompt\": \"a\", \"messages\": []}\n", 1, "keep one"),
            ("{\"messages\": []}\n", 1, "non-empty list"),
            (
                "{\"messages\": [{\"content\": \"x\"}]}\n",
                1,
                "message 1 needs a `role`",
            ),
            (
                "{\"prompt\": \"a\"}\n{\"messages\": [{\"role\": \"robot\", \"content\": \"x\"}]}\n",
                2,
                "role `robot` is not one of system, user, assistant, tool, developer",
            ),
            (
                "{\"prompt\": \"a\", \"max_tokens\": 0}\n",
                1,
                "`max_tokens` 0",
            ),
            ("[1]\n", 1, "not a JSON object"),
        ];
        for (text, line, needle) in cases {
            let e = parse_jsonl(text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}");
            assert!(e.message.contains(needle), "{text}: {}", e.message);
        }
    }

    #[test]
    fn sharegpt_conversations_are_sent_up_to_the_last_human_turn() {
        let line = r#"{"id": "x", "conversations": [{"from": "system", "value": "Be brief"}, {"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}, {"from": "human", "value": "Why?"}, {"from": "gpt", "value": "Because of reasons."}]}"#;
        let items = parse_jsonl(line).unwrap();
        let PromptContent::Messages(m) = &items[0].content else {
            panic!("messages")
        };
        let roles: Vec<&str> = m.iter().map(|x| x["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(items[0].max_tokens, Some(5), "19 characters of answer");
        let json = format!(
            "[{}, {{\"conversations\": [{{\"from\": \"gpt\", \"value\": \"x\"}}]}}]",
            &line
        );
        assert_eq!(
            parse_sharegpt_json(&json).unwrap().len(),
            1,
            "nothing asked: skipped"
        );
        let e =
            parse_sharegpt_json("[{\"conversations\": [{\"from\": \"robot\", \"value\": \"x\"}]}]")
                .unwrap_err();
        assert!(
            e.message.contains("item 1 turn 1: `from: robot`"),
            "{}",
            e.message
        );
        let e = parse_jsonl("{\"conversations\": 3}").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(parse_sharegpt_json("{}")
            .unwrap_err()
            .message
            .contains("not a list"));
    }

    #[test]
    fn csv_reads_the_prompt_column_and_names_bad_lines() {
        let items = parse_csv("id,prompt,max_tokens\n1,\"Hello, you\",\n2,Bye,7\n").unwrap();
        assert_eq!(items[0].content, PromptContent::Text("Hello, you".into()));
        assert_eq!((items[0].max_tokens, items[1].max_tokens), (None, Some(7)));
        let e = parse_csv("text\nx\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("no `prompt` column"));
        let e = parse_csv("prompt,max_tokens\na,1\n,2\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = parse_csv("prompt,max_tokens\na,x\n").unwrap_err();
        assert!(e.message.contains("`x`"), "{}", e.message);
    }

    #[test]
    fn prompt_set_files_are_hashed_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.jsonl");
        std::fs::write(&p, "{\"prompt\": \"a\"}\n").unwrap();
        let set = read_prompt_set(&p, 1 << 30, "").unwrap();
        assert_eq!(set.sha256.len(), 16);
        std::fs::write(&p, "{\"prompt\": \"b\"}\n").unwrap();
        assert_ne!(read_prompt_set(&p, 1 << 30, "").unwrap().sha256, set.sha256);
        std::fs::write(&p, "\n").unwrap();
        assert!(read_prompt_set(&p, 1 << 30, "")
            .unwrap_err()
            .message
            .contains("no prompts"));
        let txt = dir.path().join("p.txt");
        std::fs::write(&txt, "x").unwrap();
        assert!(read_prompt_set(&txt, 1 << 30, "")
            .unwrap_err()
            .message
            .contains(".jsonl"));
    }

    #[test]
    fn synthetic_prompts_have_the_asked_number_of_words() {
        let p = synthetic_prompt(2000);
        assert_eq!(p.split(' ').count(), 2000);
        assert_eq!(p.len(), 2000 * 4 - 1);
        assert_eq!(p, synthetic_prompt(2000), "deterministic");
        assert_eq!(synthetic_prompt(0).split(' ').count(), 1);
    }
}
