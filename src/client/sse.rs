//! Pure, incremental Server-Sent Events parser (WHATWG event-stream rules). Bytes in, events out;
//! no I/O, no clock.
//!
//! Network reads split a stream anywhere: between CR and LF, inside a field name, inside a
//! multi-byte UTF-8 character. The parser therefore keeps the raw bytes of the current line and
//! decodes only complete lines, so the events it yields do not depend on how the bytes arrived.
//! Complete lines inside one read are interpreted in place (no copy); only a line split across
//! reads is buffered, and never beyond the configured line limit.
//!
//! Each event is handed out borrowed ([`SseParser::feed_each`], an [`EventRef`]): an event whose
//! one `data:` line and blank line lie whole in one read (nearly every event of an LLM stream)
//! is neither copied nor checked for UTF-8 here; the reader of the data decides how much of it
//! to check (`openai::ChunkReader::read_raw`). [`SseParser::feed`] collects owned events.
//!
//! What it earns (issue 39, part 4; docs/performance.md): with the framing of the
//! `eventsource-stream` crate instead, a 1,000-stream run executes 90% more instructions; this
//! parser saves 47.4% of the client's work at 1,000 streams (benches/RESULTS.md).

use std::borrow::Cow;
use std::mem;

/// Default longest accepted line, in bytes (1 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Index of the first CR or LF: line ends are rare in a chunk of JSON, so the scan dominates
/// parsing when done byte by byte; `memchr` does it 16 or 32 bytes at a time.
fn find_eol(bytes: &[u8]) -> Option<usize> {
    memchr::memchr2(b'\n', b'\r', bytes)
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `"message"` when absent (borrowed then: most events have no name).
    pub event: Cow<'static, str>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event ID seen on the stream (persists across events, as in the spec); `None`
    /// while it is empty.
    pub id: Option<String>,
    /// A valid `retry:` field given inside this event's block.
    pub retry: Option<u64>,
}

/// One dispatched event, borrowed from the read or from the parser until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRef<'a> {
    /// The `event:` field, or `"message"` when absent.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`, as received: not checked for UTF-8 (the event-stream
    /// rules decode it as UTF-8 with invalid sequences replaced: [`EventRef::text`]).
    pub data: &'a [u8],
    /// The last event ID seen on the stream; `None` while it is empty.
    pub id: Option<&'a str>,
    /// A valid `retry:` field given inside this event's block.
    pub retry: Option<u64>,
}

impl EventRef<'_> {
    /// The data decoded as the event-stream rules say (invalid UTF-8 replaced by U+FFFD);
    /// borrowed when it is valid.
    pub fn text(&self) -> Cow<'_, str> {
        decode(self.data)
    }

    /// The event, owned.
    pub fn to_event(&self) -> SseEvent {
        SseEvent {
            event: match self.event {
                "message" => Cow::Borrowed("message"),
                other => Cow::Owned(other.to_owned()),
            },
            data: self.text().into_owned(),
            id: self.id.map(str::to_owned),
            retry: self.retry,
        }
    }
}

/// Event data decoded as the event-stream rules say: UTF-8, invalid sequences replaced by
/// U+FFFD; borrowed when valid (checked first by `from_utf8`, whose all-ASCII path is several
/// times cheaper than the replacing decoder's).
pub fn decode(data: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(data) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(data),
    }
}

/// Why the stream cannot be parsed any further.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error(
        "event stream line longer than {limit} bytes: the response is probably not an event \
         stream (check the base URL and `stream: true`), or a single event is larger than the \
         parser's line limit"
    )]
    LineTooLong { limit: usize },
    #[error(
        "one event's data grew beyond {limit} bytes without the blank line that ends an event: \
         the server is not sending a well-formed event stream"
    )]
    EventTooLarge { limit: usize },
}

/// Incremental event-stream parser: call [`SseParser::feed`] with each read, then
/// [`SseParser::finish`] at end of input.
#[derive(Debug, Clone)]
pub struct SseParser {
    max_line: usize,
    /// Raw bytes of a line that started in an earlier read.
    line: Vec<u8>,
    /// Raw `data` buffer (values joined by LF, trailing LF included).
    data: Vec<u8>,
    event_type: String,
    last_id: String,
    retry: Option<u64>,
    reconnection_ms: Option<u64>,
    /// The previous read ended with CR: an LF at the start of the next read belongs to it.
    pending_cr: bool,
    /// How many bytes of a leading BOM were seen; `None` once the BOM question is settled.
    bom_seen: Option<usize>,
    comments: u64,
    failed: Option<SseError>,
    /// Set by `finish`: whether it discarded an incomplete event.
    discarded: bool,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    pub fn new() -> Self {
        Self::with_max_line_bytes(DEFAULT_MAX_LINE_BYTES)
    }

    /// A parser that fails with [`SseError::LineTooLong`] on any line longer than `limit` bytes.
    pub fn with_max_line_bytes(limit: usize) -> Self {
        SseParser {
            max_line: limit,
            line: Vec::new(),
            data: Vec::new(),
            event_type: String::new(),
            last_id: String::new(),
            retry: None,
            reconnection_ms: None,
            pending_cr: false,
            bom_seen: Some(0),
            comments: 0,
            failed: None,
            discarded: false,
        }
    }

    /// Parses one read, appending every completed event to `out`. After an error the parser
    /// stays failed and returns the same error for every later read.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.feed_each(bytes, |ev| out.push(ev.to_event()))
    }

    /// Parses one read, handing every completed event to `on_event` as it completes (events
    /// before a line that is too long are handed out before the error). After an error the
    /// parser stays failed and returns the same error for every later read.
    pub fn feed_each(
        &mut self,
        bytes: &[u8],
        mut on_event: impl FnMut(EventRef<'_>),
    ) -> Result<(), SseError> {
        let out = &mut on_event;
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let mut rest = bytes;
        if let Some(seen) = self.bom_seen {
            let mut seen = seen;
            while seen < BOM.len() && !rest.is_empty() && rest[0] == BOM[seen] {
                seen += 1;
                rest = &rest[1..];
            }
            if seen == BOM.len() {
                self.bom_seen = None;
            } else if rest.is_empty() {
                self.bom_seen = Some(seen);
                return Ok(());
            } else {
                // Not a BOM after all: the bytes held back belong to the first line.
                self.bom_seen = None;
                self.feed_lines(&BOM[..seen], out)?;
            }
        }
        self.feed_lines(rest, out)
    }

    /// End of input. Per the spec an event whose blank line never arrived is discarded, as is
    /// an unterminated last line; [`SseParser::has_pending_data`] tells whether that happened.
    /// Nothing is dispatched into `_out`.
    pub fn finish(&mut self, _out: &mut Vec<SseEvent>) {
        self.discarded = self.has_pending_data();
        self.line.clear();
        self.data.clear();
        self.event_type.clear();
        self.retry = None;
        self.pending_cr = false;
        self.bom_seen = None;
    }

    /// Whether an incomplete event is buffered: `data` without its terminating blank line, or
    /// an unterminated line. After [`SseParser::finish`]: whether `finish` discarded such data.
    pub fn has_pending_data(&self) -> bool {
        self.discarded
            || !self.data.is_empty()
            || !self.line.is_empty()
            || self.bom_seen.is_some_and(|n| n > 0)
    }

    /// Number of comment lines (`:` ...) seen so far, e.g. keep-alives.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// The last valid `retry:` value seen anywhere on the stream (reconnection time, ms).
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    fn feed_lines<F: FnMut(EventRef<'_>)>(
        &mut self,
        bytes: &[u8],
        out: &mut F,
    ) -> Result<(), SseError> {
        let mut rest = bytes;
        if self.pending_cr && !rest.is_empty() {
            self.pending_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        // `rest` is checked for emptiness first: a read usually ends with an event's blank
        // line, and a search of nothing still costs a call through `memchr`'s dispatch.
        while let Some(end) = (!rest.is_empty()).then(|| find_eol(rest)).flatten() {
            if self.line.is_empty() {
                self.check_len(end)?;
                if let Some(after) = self.whole_data_event(rest, end, out) {
                    rest = after;
                    continue;
                }
                self.process_line(&rest[..end], out);
            } else {
                self.check_len(self.line.len() + end)?;
                self.line.extend_from_slice(&rest[..end]);
                let line = mem::take(&mut self.line);
                self.process_line(&line, out);
                self.line = line;
                self.line.clear();
            }
            // An event's data is bounded like a line: many short `data:` lines that never end
            // in a blank line must not buffer without limit either.
            if self.data.len() > self.max_line {
                let err = SseError::EventTooLarge {
                    limit: self.max_line,
                };
                self.failed = Some(err.clone());
                self.data = Vec::new();
                return Err(err);
            }
            let terminator = rest[end];
            rest = &rest[end + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            // The blank line that ends an event usually follows at once: an LF right after a
            // line's end is an empty line, dispatched here without searching for it (the
            // current line is empty, and an empty line cannot be too long).
            if let Some((b'\n', after)) = rest.split_first() {
                self.dispatch(out);
                rest = after;
            }
        }
        if !rest.is_empty() {
            self.check_len(self.line.len() + rest.len())?;
            self.line.extend_from_slice(rest);
        }
        Ok(())
    }

    /// The common event, handed out straight from the read: `rest[..end]` is a complete
    /// `data:` line, nothing of its event came before it, and the blank line follows at once
    /// (`data: …\n\n`). Returns what follows the blank line; `None` for any other line, which
    /// takes the general way (the same event, through the data buffer).
    #[inline]
    fn whole_data_event<'r, F: FnMut(EventRef<'_>)>(
        &mut self,
        rest: &'r [u8],
        end: usize,
        out: &mut F,
    ) -> Option<&'r [u8]> {
        let (field, value) = field_and_value(&rest[..end]);
        if field != b"data"
            || !self.data.is_empty()
            || rest[end] != b'\n'
            || rest.get(end + 1) != Some(&b'\n')
        {
            return None;
        }
        emit(
            &mut self.event_type,
            &self.last_id,
            &mut self.retry,
            value,
            out,
        );
        Some(&rest[end + 2..])
    }

    fn check_len(&mut self, len: usize) -> Result<(), SseError> {
        if len > self.max_line {
            let err = SseError::LineTooLong {
                limit: self.max_line,
            };
            self.failed = Some(err.clone());
            self.line = Vec::new();
            return Err(err);
        }
        Ok(())
    }

    fn process_line<F: FnMut(EventRef<'_>)>(&mut self, line: &[u8], out: &mut F) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            self.comments += 1;
            return;
        }
        let (field, value) = field_and_value(line);
        match field {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event_type.clear();
                self.event_type.push_str(&String::from_utf8_lossy(value));
            }
            b"id" if !value.contains(&0) => {
                self.last_id.clear();
                self.last_id.push_str(&String::from_utf8_lossy(value));
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // All ASCII digits, so valid UTF-8; only overflow can fail.
                let parsed = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok());
                if let Some(ms) = parsed {
                    self.retry = Some(ms);
                    self.reconnection_ms = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch<F: FnMut(EventRef<'_>)>(&mut self, out: &mut F) {
        if self.data.is_empty() {
            self.retry = None;
            self.event_type.clear();
            return;
        }
        // The buffer ends with the LF after its last line, which is not part of the data.
        let data = &self.data[..self.data.len() - 1];
        emit(
            &mut self.event_type,
            &self.last_id,
            &mut self.retry,
            data,
            out,
        );
        self.data.clear();
    }
}

/// A non-empty, non-comment line's field name and value: up to the first colon, and after it
/// without one leading space; a line without a colon is a field with an empty value.
fn field_and_value(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[][..]),
    }
}

/// Hands one event out with its block's name (`"message"` when none), the stream's last event
/// ID and the block's retry, and starts the next block.
fn emit<F: FnMut(EventRef<'_>)>(
    event_type: &mut String,
    last_id: &str,
    retry: &mut Option<u64>,
    data: &[u8],
    out: &mut F,
) {
    out(EventRef {
        event: if event_type.is_empty() {
            "message"
        } else {
            event_type
        },
        data,
        id: (!last_id.is_empty()).then_some(last_id),
        retry: retry.take(),
    });
    event_type.clear();
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
