//! The trace readers' tests: each format told apart by content, its rows read into requests,
//! and every problem named with its line.

use super::*;

fn read(text: &str) -> Result<Trace, PromptFileError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    std::fs::write(&p, text).unwrap();
    read_trace(&p, 1 << 20, "raise it")
}

#[test]
fn ladder_jsonl_reads_sizes_prompts_sessions_and_rfc3339_times() {
    let t = read(concat!(
        "{\"timestamp\": \"2026-03-01T12:00:01.5Z\", \"input_tokens\": 100, \"output_tokens\": 20, \"session_id\": 7}\n",
        "\n",
        "{\"timestamp\": \"2026-03-01T12:00:00Z\", \"prompt\": \"Hi\"}\n",
        "{\"timestamp\": \"2026-03-01T12:00:03Z\", \"messages\": [{\"role\": \"user\", \"content\": \"Yo\"}]}\n",
    ))
    .unwrap();
    assert_eq!(t.format, TraceFormat::Ladder);
    let times: Vec<f64> = t.requests.iter().map(|r| r.at_ms).collect();
    assert_eq!(
        times,
        [0.0, 1500.0, 3000.0],
        "sorted, from the first arrival"
    );
    assert_eq!(
        t.requests[0].input,
        TraceInput::Prompt(PromptContent::Text("Hi".into()))
    );
    assert_eq!(t.requests[1].session.as_deref(), Some("7"));
    assert_eq!(t.requests[1].output_tokens, Some(20));
    assert_eq!(t.rate(3), Some(2.0 / 3.0));
    let at2: Vec<f64> = t.times_s(2.0, 3).collect();
    assert_eq!(at2, [0.0, 0.75, 1.5]);
    assert_eq!(t.within(2.0, std::time::Duration::from_secs(1)), 2);
}

#[test]
fn mooncake_rows_keep_the_hash_ids_their_prompt_covers() {
    let t = read(concat!(
        "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 10, \"hash_ids\": [1, 2, 3, 4]}\n",
        "{\"timestamp\": 250, \"input_length\": 600, \"output_length\": 0, \"hash_ids\": [1, 9]}\n",
    ))
    .unwrap();
    assert_eq!(t.format, TraceFormat::Mooncake);
    assert_eq!(
        t.requests[0].input,
        TraceInput::Tokens {
            tokens: 1100,
            blocks: vec![1, 2, 3]
        }
    );
    assert_eq!(t.requests[1].output_tokens, Some(1), "0 asked as 1");
    assert_eq!(t.span_s(2), 0.25);
}

#[test]
fn burstgpt_csv_reads_seconds_and_token_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("b.csv");
    std::fs::write(
        &p,
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
         5,ChatGPT,472,18,490,Conversation log\n7.5,GPT-4,1000,0,1000,API log\n",
    )
    .unwrap();
    let t = read_trace(&p, 1 << 20, "").unwrap();
    assert_eq!(t.format, TraceFormat::BurstGpt);
    assert_eq!(t.requests[1].at_ms, 2500.0);
    assert_eq!(t.requests[1].output_tokens, Some(1));
}

#[test]
fn errors_name_the_line_and_the_fix() {
    let cases = [
        (
            "{\"timestamp\": 0, \"input_tokens\": 5}\nnope\n",
            2,
            "not a JSON object",
        ),
        ("{\"input_tokens\": 5}\n", 1, "has no `timestamp`"),
        (
            "{\"timestamp\": -1, \"input_tokens\": 5}\n",
            1,
            "is not a time",
        ),
        (
            "{\"timestamp\": \"noon\", \"input_tokens\": 5}\n",
            1,
            "RFC 3339",
        ),
        ("{\"timestamp\": 0}\n", 1, "has no `input_tokens`"),
        (
            "{\"timestamp\": 0, \"input_tokens\": 1e12}\n",
            1,
            "from 0 to",
        ),
        (
            "{\"timestamp\": 0, \"input_tokens\": 5, \"prompt\": \"x\"}\n",
            1,
            "keep one",
        ),
        (
            "{\"timestamp\": 0, \"prompt\": \"\"}\n",
            1,
            "non-empty string",
        ),
        (
            "{\"timestamp\": 0, \"input_tokens\": 5}\n{\"timestamp\": 1, \"input_length\": 5}\n",
            2,
            "one format per file",
        ),
        (
            "{\"timestamp\": 0, \"input_length\": 5, \"hash_ids\": \"a\"}\n",
            1,
            "hash_ids",
        ),
        (
            "{\"timestamp\": 0, \"input_tokens\": 5}\n{\"timestamp\": 9e11, \"input_tokens\": 5}\n",
            2,
            "at most 7 days",
        ),
        ("time,tokens\n1,2\n", 1, "BurstGPT's header"),
    ];
    for (text, line, needle) in cases {
        let e = read(text).unwrap_err();
        assert_eq!(e.line, Some(line), "{text}: {}", e.message);
        assert!(e.message.contains(needle), "{text}: {}", e.message);
    }
    assert!(read("\n").unwrap_err().message.contains("no requests"));
}
