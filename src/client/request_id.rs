//! Request ids in UUID form. Servers put request-id middleware in front of their API (FastAPI's
//! starlette-context in llama-cpp-python, API gateways) and some reject any `x-request-id` that
//! is not a UUID with a 400 and an empty body, so every id ladder sends is a well-formed
//! version-4-shaped UUID. It still reads like a record: the run, the attempt and the request's
//! sequence number are visible in it, so a line in a server log finds its row in requests.csv.
//!
//! Layout (hex digits): `RRRRRRRR-RRRR-4AAA-8SSS-SSSSSSSSSSSS`
//! - `R`: 48 random bits drawn once per run (the run's tag: every id of a run shares them);
//! - `4`: the version nibble, `8`: the RFC 9562 variant nibble (strict validators check both);
//! - `AAA`: the attempt number in decimal (001 for the first attempt, 002 for the first retry);
//! - `S`: the request's sequence number in the run, 15 decimal digits.
//!
//! Decimal digits are valid hex, so `3f9a1c2e-7b10-4001-8000-000000000042` is request 42's first
//! attempt.

use rand::Rng;

/// The run's tag; makes the ids of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestIds {
    tag: u64,
    /// The start every id of the run shares, `RRRRRRRR-RRRR-4`, written once.
    prefix: [u8; 15],
}

/// Largest sequence number that fits (15 decimal digits); larger ones wrap.
const SEQ_LIMIT: u64 = 1_000_000_000_000_000;

impl RequestIds {
    /// A fresh random tag for a new run.
    pub fn random() -> Self {
        RequestIds::with_tag(rand::thread_rng().gen())
    }

    /// A given tag (tests; only its low 48 bits are used).
    pub fn with_tag(tag: u64) -> Self {
        let tag = tag & 0xffff_ffff_ffff;
        let mut prefix = [0u8; 15];
        let text = format!("{:08x}-{:04x}-4", tag >> 16, tag & 0xffff);
        prefix.copy_from_slice(text.as_bytes());
        RequestIds { tag, prefix }
    }

    /// The id of request `seq`'s first attempt (the one requests.csv records).
    /// The run's tag as 12 hex digits (the first two groups of every id of the run), e.g. for
    /// cache-busting prefixes that must differ between runs.
    pub fn tag_hex(&self) -> String {
        format!("{:012x}", self.tag)
    }

    pub fn id(&self, seq: u64) -> String {
        self.attempt(seq, 1)
    }

    /// The id sent with attempt `attempt` (1-based) of request `seq`:
    /// `{:08x}-{:04x}-4{:03}-8{:03}-{:012}`. The run's part is written once (`prefix`) and the
    /// numbers with `itoa`: `write!` cost 1.8 k instructions per id, a tenth of the client's
    /// own work per request (issue 39, part 4; benches/RESULTS.md).
    pub fn attempt(&self, seq: u64, attempt: u32) -> String {
        let seq = seq % SEQ_LIMIT;
        let mut id = String::with_capacity(36);
        id.push_str(std::str::from_utf8(&self.prefix).expect("the prefix is hex digits"));
        push_zero_padded(&mut id, u64::from(attempt.min(999)), 3);
        id.push_str("-8");
        push_zero_padded(&mut id, seq / 1_000_000_000_000, 3);
        id.push('-');
        push_zero_padded(&mut id, seq % 1_000_000_000_000, 12);
        id
    }
}

/// Appends `n` in decimal with at least `width` digits: `format!("{n:0width$}")`.
fn push_zero_padded(out: &mut String, n: u64, width: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
}

/// The id of attempt `attempt` of the request whose first-attempt id is `first` (as recorded in
/// requests.csv), to join with a server's log of what arrived. `None` if `first` is not an id
/// of this form.
pub fn attempt_id(first: &str, attempt: u32) -> Option<String> {
    let ok = first.len() == 36 && first.as_bytes()[14] == b'4' && parse_uuid(first);
    ok.then(|| format!("{}4{:03}{}", &first[..14], attempt.min(999), &first[18..]))
}

/// Whether `s` is a UUID in the canonical 8-4-4-4-12 hex form.
pub fn parse_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What strict validators check: 8-4-4-4-12 hex, version 4, variant 10xx.
    fn is_strict_v4(s: &str) -> bool {
        parse_uuid(s)
            && s.as_bytes()[14] == b'4'
            && matches!(s.as_bytes()[19], b'8' | b'9' | b'a' | b'b')
    }

    #[test]
    fn ids_are_version_4_uuids_that_show_run_attempt_and_sequence() {
        let ids = RequestIds::with_tag(0x3f9a_1c2e_7b10);
        assert_eq!(ids.id(42), "3f9a1c2e-7b10-4001-8000-000000000042");
        assert_eq!(ids.attempt(42, 2), "3f9a1c2e-7b10-4002-8000-000000000042");
        assert_eq!(
            ids.id(1_234_567_890_123_456),
            "3f9a1c2e-7b10-4001-8234-567890123456"
        );
        for s in [
            ids.id(0),
            ids.attempt(u64::MAX, u32::MAX),
            RequestIds::random().id(7),
        ] {
            assert!(is_strict_v4(&s), "{s}");
        }
    }

    #[test]
    fn ids_are_the_format_they_were() {
        let mut rng = rand::thread_rng();
        for i in 0..20_000u32 {
            let ids = RequestIds::with_tag(rng.gen());
            let seq: u64 = rng.gen::<u64>() >> (i % 64);
            let attempt: u32 = rng.gen::<u32>() >> (i % 32);
            let s = seq % SEQ_LIMIT;
            let before = format!(
                "{:08x}-{:04x}-4{:03}-8{:03}-{:012}",
                ids.tag >> 16,
                ids.tag & 0xffff,
                attempt.min(999),
                s / 1_000_000_000_000,
                s % 1_000_000_000_000
            );
            assert_eq!(ids.attempt(seq, attempt), before);
        }
    }

    #[test]
    fn runs_get_different_tags_and_requests_different_ids() {
        let (a, b) = (RequestIds::random(), RequestIds::random());
        assert_ne!(a.id(1), b.id(1));
        assert_ne!(a.id(1), a.id(2));
    }

    #[test]
    fn attempt_ids_derive_from_the_recorded_id() {
        let ids = RequestIds::with_tag(0xabc);
        assert_eq!(attempt_id(&ids.id(9), 3), Some(ids.attempt(9, 3)));
        assert_eq!(attempt_id("ldr-1234-000001", 2), None);
        assert_eq!(attempt_id("not-a-uuid-at-all-but-36-characters!", 2), None);
    }

    #[test]
    fn parse_uuid_accepts_only_the_canonical_form() {
        assert!(parse_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(!parse_uuid("123e4567e89b12d3a456426614174000"));
        assert!(!parse_uuid("123e4567-e89b-12d3-a456-42661417400g"));
        assert!(!parse_uuid("ladder-check-1-0"));
    }
}
