//! The event-stream parser's tests: the WHATWG rules case by case, and property tests that
//! the events do not depend on how the bytes were split into reads.

use super::*;
use proptest::prelude::*;

fn ev(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: event.to_owned().into(),
        data: data.into(),
        id: None,
        retry: None,
    }
}

fn parse_reads(reads: &[&[u8]]) -> (Vec<SseEvent>, SseParser) {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for r in reads {
        p.feed(r, &mut out).expect("valid stream");
    }
    (out, p)
}

fn parse(bytes: &[u8]) -> Vec<SseEvent> {
    parse_reads(&[bytes]).0
}

fn parse_bytewise(bytes: &[u8]) -> Vec<SseEvent> {
    let reads: Vec<&[u8]> = bytes.chunks(1).collect();
    parse_reads(&reads).0
}

#[test]
fn find_eol_finds_the_first_line_end_at_every_position() {
    for len in 0..40 {
        for at in 0..len {
            for eol in [b'\n', b'\r'] {
                // Bytes one off from CR/LF must not match; a later line end must not win.
                let mut bytes: Vec<u8> =
                    (0..len).map(|i| [0x0B, 0x0C, 0x8A, b'x'][i % 4]).collect();
                bytes[at] = eol;
                if at + 1 < len {
                    bytes[len - 1] = b'\n';
                }
                assert_eq!(find_eol(&bytes), Some(at), "len {len} at {at}");
            }
        }
        let none: Vec<u8> = (0..len).map(|i| [0x0B, 0x0C, 0x8D, 0x09][i % 4]).collect();
        assert_eq!(find_eol(&none), None, "len {len}");
    }
}

#[test]
fn invalid_utf8_in_data_is_replaced_not_fatal() {
    assert_eq!(
        parse(b"data: a\xFFb\n\n"),
        vec![ev("message", "a\u{FFFD}b")]
    );
}

#[test]
fn simple_event_with_default_type() {
    assert_eq!(parse(b"data: hello\n\n"), vec![ev("message", "hello")]);
}

#[test]
fn line_endings_lf_crlf_cr_all_work() {
    let expected = vec![ev("message", "a"), ev("message", "b"), ev("message", "c")];
    assert_eq!(parse(b"data: a\n\ndata: b\r\n\r\ndata: c\r\r"), expected);
    assert_eq!(parse(b"data: a\r\rdata: b\r\n\r\ndata: c\n\n"), expected);
}

#[test]
fn cr_at_end_of_read_and_lf_at_start_of_next_is_one_line_end() {
    let (out, _) = parse_reads(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(out, vec![ev("message", "a\nb")]);
    // Lone CR at the end of a read followed by a normal line: CR really ended the line.
    let (out, _) = parse_reads(&[b"data: a\r", b"\r"]);
    assert_eq!(out, vec![ev("message", "a")]);
    // An empty read between CR and LF does not lose the pairing.
    let (out, _) = parse_reads(&[b"data: a\r", b"", b"\n", b"\r", b"", b"\n"]);
    assert_eq!(out, vec![ev("message", "a")]);
}

#[test]
fn crlf_blank_line_dispatches_once() {
    let (out, p) = parse_reads(&[b"data: x\r\n\r", b"\n"]);
    assert_eq!(out, vec![ev("message", "x")]);
    assert!(!p.has_pending_data());
}

#[test]
fn single_optional_space_after_colon_is_removed() {
    assert_eq!(parse(b"data:x\n\n"), vec![ev("message", "x")]);
    assert_eq!(parse(b"data:  x\n\n"), vec![ev("message", " x")]);
    assert_eq!(parse(b"data: x \n\n"), vec![ev("message", "x ")]);
    assert_eq!(parse(b"data: a:b: c\n\n"), vec![ev("message", "a:b: c")]);
}

#[test]
fn data_lines_are_joined_with_lf() {
    assert_eq!(
        parse(b"data: a\ndata:\ndata: b\n\n"),
        vec![ev("message", "a\n\nb")]
    );
    assert_eq!(parse(b"data\n\n"), vec![ev("message", "")]);
    assert_eq!(parse(b"data\ndata\n\n"), vec![ev("message", "\n")]);
}

#[test]
fn comments_are_counted_and_ignored() {
    let (out, p) =
        parse_reads(&[b": OPENROUTER PROCESSING\n\n:\n: ping\ndata: x\n\n:keepalive\n\n"]);
    assert_eq!(out, vec![ev("message", "x")]);
    assert_eq!(p.comments(), 4);
}

#[test]
fn event_type_applies_to_one_event_only() {
    let out = parse(b"event: error\ndata: boom\n\ndata: next\n\n");
    assert_eq!(out, vec![ev("error", "boom"), ev("message", "next")]);
    // An event type set in a block without data is reset too.
    assert_eq!(
        parse(b"event: ping\n\ndata: x\n\n"),
        vec![ev("message", "x")]
    );
    // Last `event` field wins; empty `event` means message.
    assert_eq!(
        parse(b"event: a\nevent: b\ndata: x\n\n"),
        vec![ev("b", "x")]
    );
    assert_eq!(
        parse(b"event: a\nevent\ndata: x\n\n"),
        vec![ev("message", "x")]
    );
}

#[test]
fn id_persists_and_ids_with_nul_are_ignored() {
    let out = parse(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\0x\ndata: c\n\nid\ndata: d\n\n");
    let ids: Vec<Option<&str>> = out.iter().map(|e| e.id.as_deref()).collect();
    assert_eq!(ids, vec![Some("1"), Some("1"), Some("1"), None]);
}

#[test]
fn retry_accepts_digits_only() {
    let out = parse(b"retry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\nretry:\ndata: c\n\n");
    let retries: Vec<Option<u64>> = out.iter().map(|e| e.retry).collect();
    assert_eq!(retries, vec![Some(1500), None, None]);
    let (out, p) = parse_reads(&[b"retry: 3000\n\nretry: -5\nretry: 99999999999999999999\n\n"]);
    assert!(out.is_empty());
    assert_eq!(p.reconnection_ms(), Some(3000));
    let out = parse(b"retry:  20\ndata: a\n\n");
    assert_eq!(
        out[0].retry, None,
        "a second space makes the value non-numeric"
    );
}

#[test]
fn unknown_fields_and_lines_without_colon() {
    let out = parse(b"foo: bar\nDATA: x\ndata : y\nevent\ndata: z\n\n");
    assert_eq!(out, vec![ev("message", "z")]);
}

#[test]
fn empty_data_buffer_is_not_dispatched() {
    assert!(parse(b"event: x\n\nid: 3\n\n\n\n").is_empty());
    assert!(parse(b": only a comment\n\n").is_empty());
}

#[test]
fn leading_bom_is_stripped_once() {
    let mut stream = BOM.to_vec();
    stream.extend_from_slice(b"data: a\n\n");
    assert_eq!(parse(&stream), vec![ev("message", "a")]);
    // A second BOM makes the field name `\u{feff}data`, an unknown field.
    let mut twice = BOM.to_vec();
    twice.extend_from_slice(&stream);
    assert!(parse(&twice).is_empty());
    // A BOM later in the stream is not stripped either.
    let mut later = b"data: a\n\n".to_vec();
    later.extend_from_slice(&stream);
    assert_eq!(parse(&later), vec![ev("message", "a")]);
}

#[test]
fn bom_split_across_reads() {
    let mut stream = BOM.to_vec();
    stream.extend_from_slice(b"data: a\n\n");
    for cut in 0..=stream.len() {
        let (out, _) = parse_reads(&[&stream[..cut], &stream[cut..]]);
        assert_eq!(out, vec![ev("message", "a")], "cut at {cut}");
    }
    assert_eq!(parse_bytewise(&stream), vec![ev("message", "a")]);
}

#[test]
fn partial_bom_is_data_not_swallowed() {
    // EF BB then 'd': not a BOM, so the bytes start the first line (an unknown field).
    let (out, p) = parse_reads(&[&[0xEF, 0xBB], b"data: a\n\ndata: b\n\n"]);
    assert_eq!(out, vec![ev("message", "b")]);
    assert!(!p.has_pending_data());
    let (out, p) = parse_reads(&[&[0xEF], b"\n\ndata: b\n\n"]);
    assert_eq!(out, vec![ev("message", "b")]);
    assert!(!p.has_pending_data());
    let (_, p) = parse_reads(&[&[0xEF, 0xBB]]);
    assert!(p.has_pending_data(), "held-back BOM bytes are pending");
}

#[test]
fn invalid_utf8_is_decoded_lossily() {
    let out = parse(b"data: a\xFFb\nevent: \xC3\n\n");
    assert_eq!(out, vec![ev("\u{FFFD}", "a\u{FFFD}b")]);
}

#[test]
fn multibyte_text_split_at_every_position_matches_one_read() {
    let stream = "event: delta\ndata: {\"content\":\"你好，世界 🦀 ok\"}\r\n\r\n\
                  data: 日本語\ndata: 😀😀\r\r"
        .as_bytes();
    let whole = parse(stream);
    assert_eq!(whole.len(), 2);
    assert_eq!(whole[0].data, "{\"content\":\"你好，世界 🦀 ok\"}");
    assert_eq!(whole[1].data, "日本語\n😀😀");
    for cut in 0..=stream.len() {
        let (out, p) = parse_reads(&[&stream[..cut], &stream[cut..]]);
        assert_eq!(out, whole, "cut at {cut}");
        assert!(!p.has_pending_data(), "cut at {cut}");
    }
    assert_eq!(parse_bytewise(stream), whole);
}

#[test]
fn finish_discards_incomplete_event_and_reports_it() {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    p.feed(b"data: a\n\ndata: [DONE]\n", &mut out).unwrap();
    assert!(p.has_pending_data());
    p.finish(&mut out);
    assert_eq!(out, vec![ev("message", "a")]);
    assert!(
        p.has_pending_data(),
        "finish remembers that it discarded data"
    );

    // Unterminated last line.
    let (_, mut p) = parse_reads(&[b"data: a\n\ndata: [DO"]);
    assert!(p.has_pending_data());
    p.finish(&mut out);
    assert!(p.has_pending_data());

    // Clean end.
    let (_, mut p) = parse_reads(&[b"data: a\n\n: bye\n"]);
    assert!(!p.has_pending_data());
    p.finish(&mut out);
    assert!(!p.has_pending_data());

    // A stream ending with a lone CR has terminated its line.
    let (_, p) = parse_reads(&[b"data: a\r\r"]);
    assert!(!p.has_pending_data());
}

#[test]
fn line_too_long_fails_without_buffering_beyond_limit() {
    let mut p = SseParser::with_max_line_bytes(8);
    let mut out = Vec::new();
    p.feed(b"data: 12\n\n", &mut out).unwrap(); // exactly 8 bytes is fine
    assert_eq!(out, vec![ev("message", "12")]);
    p.feed(b"data", &mut out).unwrap();
    p.feed(b": 1", &mut out).unwrap();
    assert!(p.line.len() <= 8);
    let err = p.feed(b"23456789", &mut out).unwrap_err();
    assert_eq!(err, SseError::LineTooLong { limit: 8 });
    assert!(
        p.line.capacity() <= 8,
        "nothing beyond the limit was buffered"
    );
    assert!(err.to_string().contains("8 bytes"));
    // Stays failed.
    assert_eq!(
        p.feed(b"\n\n", &mut out),
        Err(SseError::LineTooLong { limit: 8 })
    );
    assert_eq!(out.len(), 1);

    // A long complete line inside one read fails too, and so does a long unterminated one.
    let mut p = SseParser::with_max_line_bytes(4);
    assert!(p.feed(b"data: x\n\n", &mut out).is_err());
    let mut p = SseParser::with_max_line_bytes(4);
    assert!(p.feed(b"data", &mut out).is_ok());
    assert!(p.feed(&[b'x'; 100_000], &mut out).is_err());
    assert!(p.line.len() <= 4);
}

#[test]
fn a_whole_event_in_one_read_is_handed_out_from_the_read() {
    let mut p = SseParser::new();
    let read = b"data: {\"a\":1}\n\nevent: x\nid: 7\nretry: 30\ndata: b\n\ndata: c\r\n\r\n";
    let mut seen = Vec::new();
    p.feed_each(read, |ev| {
        let inside = read.as_ptr_range().contains(&ev.data.as_ptr());
        seen.push((ev.to_event(), inside));
    })
    .unwrap();
    let with = |e: SseEvent, id: Option<&str>, retry| SseEvent {
        id: id.map(str::to_owned),
        retry,
        ..e
    };
    assert_eq!(
        seen,
        vec![
            (ev("message", "{\"a\":1}"), true),
            // Named, with an id and a retry: still the one data line then the blank line.
            (with(ev("x", "b"), Some("7"), Some(30)), true),
            // CRLF line ends take the general way, through the parser's buffer.
            (with(ev("message", "c"), Some("7"), None), false),
        ]
    );
    // Data not valid UTF-8 is handed out as received; the owned event decodes it.
    let mut raw = Vec::new();
    p.feed_each(b"data: a\xffb\n\n", |ev| {
        raw = ev.data.to_vec();
        assert_eq!(ev.text(), "a\u{fffd}b");
    })
    .unwrap();
    assert_eq!(raw, b"a\xffb");
}

#[test]
fn events_before_a_line_too_long_are_handed_out_before_the_error() {
    let mut p = SseParser::with_max_line_bytes(16);
    let mut out = Vec::new();
    let fed = p.feed(b"data: one\n\ndata: 0123456789abcdef\n\n", &mut out);
    assert_eq!(fed, Err(SseError::LineTooLong { limit: 16 }));
    assert_eq!(out, vec![ev("message", "one")]);
}

// ---- property tests ----

fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
    let text = "[a-z {}\":,\\[\\]你好🦀é]{0,12}";
    let field = prop_oneof![
        text.prop_map(|t| format!("data: {t}")),
        text.prop_map(|t| format!("data:{t}")),
        "[a-z]{0,6}".prop_map(|t| format!("event: {t}")),
        "[0-9a-z]{0,4}".prop_map(|t| format!("id: {t}")),
        "[0-9]{0,4}".prop_map(|t| format!("retry: {t}")),
        text.prop_map(|t| format!(": {t}")),
        Just(String::new()),
        Just(String::new()),
        Just("data".to_string()),
    ];
    let end = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
    (field, end).prop_map(|(f, e)| format!("{f}{e}").into_bytes())
}

fn stream_strategy() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        proptest::collection::vec(line_strategy(), 0..40),
    )
        .prop_map(|(bom, lines)| {
            let mut s = if bom { BOM.to_vec() } else { Vec::new() };
            s.extend(lines.concat());
            s
        })
}

/// Parses `bytes` split at `cuts` (indices, any order, clamped): events, error, pending.
fn parse_split(
    bytes: &[u8],
    cuts: &[usize],
    limit: usize,
) -> (Vec<SseEvent>, Option<SseError>, bool, u64) {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut p = SseParser::with_max_line_bytes(limit);
    let mut out = Vec::new();
    let mut err = None;
    let mut start = 0;
    for end in cuts.into_iter().chain([bytes.len()]) {
        if let Err(e) = p.feed(&bytes[start..end], &mut out) {
            err = Some(e);
            break;
        }
        start = end;
    }
    (out, err, p.has_pending_data(), p.comments())
}

proptest! {
    #[test]
    fn any_split_of_a_valid_stream_gives_the_same_events(
        stream in stream_strategy(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = parse_split(&stream, &[], DEFAULT_MAX_LINE_BYTES);
        prop_assert!(whole.1.is_none());
        prop_assert_eq!(parse_split(&stream, &cuts, DEFAULT_MAX_LINE_BYTES), whole.clone());
        let all: Vec<usize> = (0..stream.len()).collect();
        prop_assert_eq!(parse_split(&stream, &all, DEFAULT_MAX_LINE_BYTES), whole);
    }

    #[test]
    fn generated_events_round_trip(
        events in proptest::collection::vec(
            ("[a-z]{0,5}", proptest::collection::vec("[^\r\n]{0,10}", 1..4)), 0..10),
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut s = String::new();
        for (name, lines) in &events {
            if !name.is_empty() {
                s.push_str(&format!("event: {name}{nl}"));
            }
            for l in lines {
                s.push_str(&format!("data: {l}{nl}"));
            }
            s.push_str(nl);
        }
        let got = parse(s.as_bytes());
        let want: Vec<SseEvent> = events
            .iter()
            .map(|(n, l)| ev(if n.is_empty() { "message" } else { n }, &l.join("\n")))
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn find_eol_agrees_with_a_bytewise_scan(
        bytes in proptest::collection::vec(
            prop_oneof![Just(b'\r'), Just(b'\n'), Just(0x8Du8), Just(0x0Bu8), Just(0x00u8),
                        any::<u8>(), Just(b'a')], 0..70),
    ) {
        let want = bytes.iter().position(|&b| b == b'\n' || b == b'\r');
        prop_assert_eq!(find_eol(&bytes), want);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_split_does_not_matter(
        bytes in proptest::collection::vec(
            prop_oneof![Just(b'\r'), Just(b'\n'), Just(b':'), Just(b' '), Just(0xEF),
                        any::<u8>(), Just(b'd')], 0..300),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        limit in prop_oneof![Just(DEFAULT_MAX_LINE_BYTES), 0usize..40],
    ) {
        let whole = parse_split(&bytes, &[], limit);
        prop_assert_eq!(parse_split(&bytes, &cuts, limit), whole);
    }
}

#[test]
fn event_data_without_an_end_is_bounded() {
    let mut p = SseParser::with_max_line_bytes(64);
    let mut out = Vec::new();
    let mut err = None;
    for _ in 0..100 {
        if let Err(e) = p.feed(b"data: 0123456789\n", &mut out) {
            err = Some(e);
            break;
        }
    }
    assert_eq!(err, Some(SseError::EventTooLarge { limit: 64 }));
    assert!(out.is_empty());
    // Stays failed.
    assert!(p.feed(b"\n", &mut out).is_err());
    // Under the limit, the same lines make one event.
    let mut p = SseParser::with_max_line_bytes(64);
    p.feed(b"data: a\ndata: b\n\n", &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].data, "a\nb");
}
