//! Pure, incremental Server-Sent Events parser (WHATWG event-stream rules). Bytes in, events out;
//! no I/O, no clock.
//!
//! Network reads split a stream anywhere: between CR and LF, inside a field name, inside a
//! multi-byte UTF-8 character. The parser therefore keeps the raw bytes of the current line and
//! decodes only complete lines, so the events it yields do not depend on how the bytes arrived.
//! Complete lines inside one read are interpreted in place (no copy); only a line split across
//! reads is buffered, and never beyond the configured line limit.

use std::borrow::Cow;
use std::mem;

/// Default longest accepted line, in bytes (1 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Largest data buffer pre-allocated for the next event (larger events grow it as needed).
const MAX_REUSED_CAPACITY: usize = 16 << 10;

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
    /// A dispatched event's data buffer handed back ([`SseParser::recycle`]) for the next one.
    spare: Option<Vec<u8>>,
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
            spare: None,
        }
    }

    /// Parses one read, appending every completed event to `out`. After an error the parser
    /// stays failed and returns the same error for every later read.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
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

    /// Takes back an event the caller is done with, so that its data buffer holds the next
    /// event's data instead of a new allocation (one allocation and one free per event saved).
    pub fn recycle(&mut self, event: SseEvent) {
        let mut data = event.data.into_bytes();
        if data.capacity() <= MAX_REUSED_CAPACITY {
            data.clear();
            self.spare = Some(data);
        }
    }

    /// Number of comment lines (`:` ...) seen so far, e.g. keep-alives.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// The last valid `retry:` value seen anywhere on the stream (reconnection time, ms).
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    fn feed_lines(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = bytes;
        if self.pending_cr && !rest.is_empty() {
            self.pending_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(end) = find_eol(rest) {
            if self.line.is_empty() {
                self.check_len(end)?;
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
        }
        if !rest.is_empty() {
            self.check_len(self.line.len() + rest.len())?;
            self.line.extend_from_slice(rest);
        }
        Ok(())
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

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            self.comments += 1;
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
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

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let retry = self.retry.take();
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        // Drop the trailing LF. The buffer then becomes the event's text without a copy (valid
        // UTF-8 is the rule); the next event gets a buffer with room for one like this one and
        // some more (rounded up to a power of two), so that a slightly longer event does not
        // reallocate it: the profile showed a realloc per event with an exact fit.
        self.data.pop();
        let next = match self.spare.take() {
            Some(spare) if spare.capacity() > self.data.len() => spare,
            _ => Vec::with_capacity(
                (self.data.len() + 1)
                    .next_power_of_two()
                    .min(MAX_REUSED_CAPACITY),
            ),
        };
        let data = match String::from_utf8(mem::replace(&mut self.data, next)) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let event = if self.event_type.is_empty() {
            Cow::Borrowed("message")
        } else {
            Cow::Owned(mem::take(&mut self.event_type))
        };
        let id = (!self.last_id.is_empty()).then(|| self.last_id.clone());
        out.push(SseEvent {
            event,
            data,
            id,
            retry,
        });
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
