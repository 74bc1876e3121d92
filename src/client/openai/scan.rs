//! The chunk nearly every OpenAI-compatible stream sends for each token, read in one pass
//! without serde: `{"id":…,"choices":[{"index":0,"delta":{"content":"…"},"finish_reason":null}]}`
//! with any other fields, `null` usage and no error. Reading it with serde cost about 5,000
//! instructions per ~200-byte chunk, the largest per-token cost of the client (benches/RESULTS.md,
//! issue 24); this reader validates the whole chunk as strict JSON and reads the few fields timing
//! needs in about a fifth of that.
//!
//! It answers only when it is sure to say what the serde reader (`openai::interpret`) would: any
//! field that reader would turn into more than content, reasoning and a finish reason (usage,
//! timings, tool calls, any error shape, `finish_reason: "error"`, `object: "error"`), a known
//! field given twice, a value of an unusual type, an escaped key or finish reason, or anything
//! that is not valid JSON makes it return `None`, and the chunk is read by serde. Its strings are
//! validated more strictly than serde validates the strings it skips (escapes and surrogate
//! pairs), and a raw control character anywhere sends the chunk to serde, so it never accepts a
//! chunk serde would refuse.
//!
//! A stream's per-token chunks differ from one another only inside a few strings (the token's
//! text, and on some servers an id or OpenAI's random `obfuscation` padding), so each stream keeps
//! a [`Template`]: the last chunk the scanner accepted, with the places of the strings whose value
//! it skipped or only tested for emptiness. A chunk that equals the template byte for byte outside
//! those strings, with a valid JSON string in each, is what the scanner would accept, and means
//! the same with each text's emptiness read anew: it is answered by comparing bytes instead of
//! parsing them again.
//!
//! What it earns (issue 39, part 4; docs/performance.md): without it, every chunk read by serde,
//! a 1,000-stream run executes 59% more instructions; the scanner and template save 37.0% of
//! the client's work at 1,000 streams (benches/RESULTS.md).

use super::Dialect;
use crate::client::chunk::ChunkInfo;

/// Nesting deeper than this goes to serde (which has its own limit).
const MAX_DEPTH: u32 = 32;

/// What a chunk of the common shape says; `None` when serde must read it.
#[cfg(test)]
pub(super) fn common_chunk(data: &str, dialect: Dialect) -> Option<ChunkInfo> {
    if has_control_byte(data.as_bytes()) {
        return None;
    }
    full_scan(data.as_bytes(), dialect, &mut Vec::new()).map(|found| found.info())
}

/// What the scanner found in a chunk it accepted.
struct Found {
    content: bool,
    reasoning: bool,
    finish_reason: Option<String>,
}

impl Found {
    fn info(self) -> ChunkInfo {
        ChunkInfo {
            content: self.content,
            reasoning: self.reasoning,
            finish_reason: self.finish_reason,
            ..ChunkInfo::default()
        }
    }
}

/// The whole chunk read and validated (control bytes already ruled out); `holes` gets the strings
/// whose value the answer does not depend on beyond their emptiness, in order.
fn full_scan(data: &[u8], dialect: Dialect, holes: &mut Vec<Hole>) -> Option<Found> {
    holes.clear();
    let mut c = Cursor {
        b: data,
        i: 0,
        holes,
    };
    let mut seen = Seen::default();
    let mut choices = Choices::default();
    c.object(|c, key| {
        let field = TopField::of(key);
        seen.first(field as u16)?;
        match field {
            TopField::Choices if c.peek()? == b'[' => c.array(|c| choice(c, dialect, &mut choices)),
            TopField::Object if c.peek()? == b'"' => {
                let s = c.string()?;
                (!s.escaped && s.raw != b"error").then_some(())
            }
            TopField::Other => c.skip_value(1),
            // Usage, timings and every error field: only `null` (absent) is read here.
            _ => c.null(),
        }
    })?;
    c.end()?;
    Some(Found {
        content: choices.content,
        reasoning: choices.reasoning,
        finish_reason: choices.finish_reason,
    })
}

/// Which of the answer's flags a string's emptiness sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Skipped: only its validity counts.
    None,
    Content,
    Reasoning,
}

/// A string in the template whose bytes may differ in the next chunk: `start..end` is its body
/// between the quotes.
#[derive(Clone, Copy, Debug)]
struct Hole {
    start: usize,
    end: usize,
    slot: Slot,
}

/// The last chunk of a stream the scanner accepted, to compare the next one with (see the module
/// documentation).
#[derive(Default)]
pub(super) struct Template {
    bytes: Vec<u8>,
    holes: Vec<Hole>,
    finish_reason: Option<String>,
    /// Whether `bytes` holds an accepted chunk (false before the first, and after a chunk that
    /// matched no template and was not accepted either).
    learned: bool,
}

impl Template {
    /// What a chunk of the common shape says, from the template when the chunk fits it, else by
    /// reading it whole (and learning it when accepted); `None` when serde must read it.
    pub(super) fn read(&mut self, data: &str, dialect: Dialect) -> Option<ChunkInfo> {
        let data = data.as_bytes();
        if let Some(info) = self.fit_chunk(data) {
            return Some(info);
        }
        // A chunk that fits the template has no control byte: its fixed bytes are the
        // template's, which had none, and each hole was checked (`fit_holes`). The template's
        // bytes come from here, from text: valid UTF-8.
        if has_control_byte(data) {
            return None;
        }
        let found = full_scan(data, dialect, &mut self.holes);
        self.learned = found.is_some();
        if let Some(found) = &found {
            self.bytes.clear();
            self.bytes.extend_from_slice(data);
            self.finish_reason.clone_from(&found.finish_reason);
        }
        found.map(Found::info)
    }

    /// What `data` says when it fits the template (see [`Template::fit`]). `data` need not be
    /// valid UTF-8: where it fits, its only bytes not taken from the template (valid text) are
    /// inside the strings of its holes, and decoding replaces an invalid sequence there with
    /// U+FFFD, which leaves the string valid JSON and exactly as empty as it was; so the answer
    /// is the decoded text's (`reading_raw_bytes_means_what_reading_the_decoded_text_means`).
    pub(super) fn fit_chunk(&self, data: &[u8]) -> Option<ChunkInfo> {
        if !self.learned {
            return None;
        }
        let (content, reasoning) = self.fit(data)?;
        Some(ChunkInfo {
            content,
            reasoning,
            finish_reason: self.finish_reason.clone(),
            ..ChunkInfo::default()
        })
    }

    /// The content and reasoning flags of `data` when it equals the template outside its holes
    /// and holds a valid string in each. Most chunks of a stream differ from the last one only
    /// in the token's text, so the first try compares the skipped strings as fixed bytes too
    /// (one comparison before and one after the text instead of one per string); the second
    /// lets every hole differ.
    fn fit(&self, data: &[u8]) -> Option<(bool, bool)> {
        self.fit_holes(data, false).or_else(|| {
            let skipped = self.holes.iter().any(|h| h.slot == Slot::None);
            skipped.then(|| self.fit_holes(data, true)).flatten()
        })
    }

    /// [`Template::fit`] with the holes that count for the answer, and with the skipped ones
    /// too when `skipped` (a hole compared as fixed bytes is held to more, never to less).
    fn fit_holes(&self, data: &[u8], skipped: bool) -> Option<(bool, bool)> {
        let (mut content, mut reasoning) = (false, false);
        let mut cursor = Cursor {
            b: data,
            i: 0,
            holes: &mut Vec::new(),
        };
        let mut from = 0;
        for hole in self
            .holes
            .iter()
            .filter(|h| skipped || h.slot != Slot::None)
        {
            let fixed = &self.bytes[from..hole.start];
            if cursor.b.get(cursor.i..cursor.i + fixed.len())? != fixed {
                return None;
            }
            // `fixed` ends with the hole's opening quote; the string is read from that quote.
            cursor.i += fixed.len() - 1;
            let s = cursor.short_string()?;
            cursor.i -= 1;
            if !s.raw.is_empty() {
                match hole.slot {
                    Slot::None => {}
                    Slot::Content => content = true,
                    Slot::Reasoning => reasoning = true,
                }
            }
            from = hole.end;
        }
        (cursor.b.get(cursor.i..)? == &self.bytes[from..]).then_some((content, reasoning))
    }
}

/// The top-level fields the serde reader (`error_body::Envelope`) knows.
#[derive(Clone, Copy)]
#[repr(u16)]
enum TopField {
    Other = 0,
    Choices = 1,
    Usage = 1 << 1,
    Timings = 1 << 2,
    Error = 1 << 3,
    ErrorType = 1 << 4,
    HttpStatusCode = 1 << 5,
    Object = 1 << 6,
    Message = 1 << 7,
    Type = 1 << 8,
    Code = 1 << 9,
    Detail = 1 << 10,
}

impl TopField {
    fn of(key: &[u8]) -> TopField {
        match key {
            b"choices" => TopField::Choices,
            b"usage" => TopField::Usage,
            b"timings" => TopField::Timings,
            b"error" => TopField::Error,
            b"error_type" => TopField::ErrorType,
            b"http_status_code" => TopField::HttpStatusCode,
            b"object" => TopField::Object,
            b"message" => TopField::Message,
            b"type" => TopField::Type,
            b"code" => TopField::Code,
            b"detail" => TopField::Detail,
            _ => TopField::Other,
        }
    }
}

/// Known fields already read in one object: serde refuses a struct field given twice.
#[derive(Default)]
struct Seen(u16);

impl Seen {
    fn first(&mut self, bit: u16) -> Option<()> {
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }
}

/// The choices folded as `openai::Choices::add` folds them.
#[derive(Default)]
struct Choices {
    content: bool,
    reasoning: bool,
    finish_reason: Option<String>,
}

/// One element of `choices` (an object, as serde's `Choice` requires).
fn choice(c: &mut Cursor<'_, '_>, dialect: Dialect, all: &mut Choices) -> Option<()> {
    if c.peek()? != b'{' {
        return None;
    }
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"delta" => {
            seen.first(1)?;
            if c.peek()? == b'{' {
                delta(c, dialect, all)
            } else {
                c.null()
            }
        }
        b"text" => {
            seen.first(2)?;
            let counted = matches!(dialect, Dialect::Completions);
            let text = c.non_empty(if counted { Slot::Content } else { Slot::None })?;
            all.content |= counted && text;
            Some(())
        }
        b"finish_reason" => {
            seen.first(4)?;
            if c.peek()? != b'"' {
                return c.null();
            }
            let s = c.string()?;
            if s.escaped || s.raw == b"error" {
                return None;
            }
            all.finish_reason = Some(std::str::from_utf8(s.raw).ok()?.to_owned());
            Some(())
        }
        b"error" => {
            seen.first(8)?;
            c.null()
        }
        _ => c.skip_value(2),
    })
}

/// A choice's `delta` object: content and reasoning text; tool calls go to serde.
fn delta(c: &mut Cursor<'_, '_>, dialect: Dialect, all: &mut Choices) -> Option<()> {
    let chat = matches!(dialect, Dialect::Chat);
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"content" => {
            seen.first(1)?;
            let any = c.non_empty(if chat { Slot::Content } else { Slot::None })?;
            all.content |= chat && any;
            Some(())
        }
        b"reasoning_content" | b"reasoning" => {
            seen.first(if key == b"reasoning" { 2 } else { 4 })?;
            let any = c.non_empty(if chat { Slot::Reasoning } else { Slot::None })?;
            all.reasoning |= chat && any;
            Some(())
        }
        b"tool_calls" => {
            seen.first(8)?;
            c.null()
        }
        _ => c.skip_value(3),
    })
}

/// A string as it stands in the chunk, between its quotes.
struct RawStr<'a> {
    raw: &'a [u8],
    /// It holds an escape, so `raw` is not its value.
    escaped: bool,
}

/// A position in the chunk; every method returns `None` at anything it does not accept. The
/// strings read as skipped values or for their emptiness are noted in `holes`.
struct Cursor<'a, 'h> {
    b: &'a [u8],
    i: usize,
    holes: &'h mut Vec<Hole>,
}

impl<'a> Cursor<'a, '_> {
    /// The next byte after JSON whitespace, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.b.get(self.i) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.i += 1;
        }
        None
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.peek()? == want).then(|| self.i += 1)
    }

    /// Nothing but whitespace is left.
    fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// An object, each value read by `field(cursor, key)`. Keys with escapes go to serde.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if key.escaped {
                return None;
            }
            self.eat(b':')?;
            field(self, key.raw)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array, each element read by `element(cursor)`.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn null(&mut self) -> Option<()> {
        self.peek()?;
        self.literal(b"null")
    }

    /// A text field read as `lenient::NonEmpty` reads it: a non-empty string, or `null`
    /// (false). Other types go to serde. A string is a hole of the template, for `slot`.
    fn non_empty(&mut self, slot: Slot) -> Option<bool> {
        if self.peek()? == b'"' {
            // Every escape stands for at least one character: non-empty as written is
            // non-empty as read.
            Some(!self.hole(slot)?.is_empty())
        } else {
            self.null().map(|()| false)
        }
    }

    /// A string whose value is a hole of the template (the cursor at its opening quote).
    fn hole(&mut self, slot: Slot) -> Option<&'a [u8]> {
        let start = self.i + 1;
        let s = self.string()?;
        self.holes.push(Hole {
            start,
            end: self.i - 1,
            slot,
        });
        Some(s.raw)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let rest = self.b.get(self.i..)?;
        rest.starts_with(word).then(|| self.i += word.len())
    }

    /// Any JSON value, validated and skipped.
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.hole(Slot::None).map(|_| ()),
            b'{' => self.object(|c, _| c.skip_value(depth + 1)),
            b'[' => self.array(|c| c.skip_value(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// A JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        if self.byte() == Some(b'-') {
            self.i += 1;
        }
        match self.byte()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.byte() == Some(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if matches!(self.byte(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.byte(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn byte(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn digits(&mut self) {
        while self.byte().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    /// A string (the cursor at its opening quote): only JSON's escapes, surrogates only in pairs.
    /// Raw control characters were ruled out for the whole chunk before a full scan
    /// (`Template::read`); a template's holes are read by [`Cursor::short_string`] instead.
    #[inline]
    fn string(&mut self) -> Option<RawStr<'a>> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            self.i += memchr::memchr2(b'"', b'\\', self.b.get(self.i..)?)?;
            if self.b[self.i] == b'"' {
                let raw = &self.b[start..self.i];
                self.i += 1;
                return Some(RawStr { raw, escaped });
            }
            escaped = true;
            self.escape()?;
        }
    }

    /// [`Cursor::string`] for a hole of a template, byte by byte, refusing raw control bytes:
    /// a hole is mostly a token's few bytes, where a word-at-a-time search and a second pass for
    /// control bytes cost more than they save (callgrind, benches/RESULTS.md, issue 24). The
    /// escapes allowed are `string`'s, and an escape is ASCII without control bytes.
    fn short_string(&mut self) -> Option<RawStr<'a>> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    let raw = &self.b[start..self.i];
                    self.i += 1;
                    return Some(RawStr { raw, escaped });
                }
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                byte if byte < 0x20 => return None,
                _ => self.i += 1,
            }
        }
    }

    /// One escape (the cursor at its backslash).
    fn escape(&mut self) -> Option<()> {
        match *self.b.get(self.i + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.i += 2;
                Some(())
            }
            b'u' => {
                let unit = self.hex4(self.i + 2)?;
                self.i += 6;
                match unit {
                    0xDC00..=0xDFFF => None,
                    0xD800..=0xDBFF => {
                        let rest = self.b.get(self.i..)?;
                        if !rest.starts_with(b"\\u") {
                            return None;
                        }
                        let low = self.hex4(self.i + 2)?;
                        self.i += 6;
                        (0xDC00..=0xDFFF).contains(&low).then_some(())
                    }
                    _ => Some(()),
                }
            }
            _ => None,
        }
    }

    fn hex4(&self, at: usize) -> Option<u16> {
        let digits = self.b.get(at..at + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u16::from_str_radix(text, 16).ok()
    }
}

/// Whether `b` holds a byte below 0x20: raw control characters are refused inside JSON strings
/// and allowed outside them only as whitespace, which servers do not put in a chunk; either way
/// serde decides. One pass the compiler vectorizes.
fn has_control_byte(b: &[u8]) -> bool {
    b.iter().fold(u8::MAX, |low, &x| low.min(x)) < 0x20
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
