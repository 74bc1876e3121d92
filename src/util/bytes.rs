//! Byte search short enough to be worth doing eight bytes at a time (SWAR): finding a quote or
//! backslash in a JSON string of a chunk, where most strings are a few to a few tens of bytes and
//! a byte loop would dominate. Longer haystacks (an SSE read's line end) go to `memchr`, whose
//! vector search costs less there (callgrind: 26 M fewer instructions for 133,000 reads of ~200
//! bytes, benches/RESULTS.md).

/// Index of the first byte of `bytes` equal to `a` or `b`.
#[inline]
pub fn find_either(bytes: &[u8], a: u8, b: u8) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let (a8, b8) = (ONES * u64::from(a), ONES * u64::from(b));
    // A byte of `x` is zero => its high bit is set in `zero(x)`; the lowest set bit is always a
    // real zero byte (borrows only spill upwards), which is the one wanted on little-endian.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for w in words.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word);
        let hit = zero(x ^ a8) | zero(x ^ b8);
        if hit != 0 {
            return Some(offset + (hit.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == a || c == b)
        .map(|i| offset + i)
}

#[cfg(test)]
mod tests {
    use super::find_either;

    /// Every length around the word size, each of the two bytes (and both) at every place, and
    /// every other byte value never matching, including the high ones borrows could fake.
    #[test]
    fn the_first_of_either_byte_is_found_at_every_place() {
        for (a, b) in [(b'\n', b'\r'), (b'"', b'\\'), (0x00, 0xFF), (0x80, 0x7F)] {
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 33] {
                let filler = (0..=255u8).find(|&c| c != a && c != b).unwrap();
                assert_eq!(find_either(&vec![filler; len], a, b), None);
                for at in 0..len {
                    for (mark, later) in [(a, b), (b, a)] {
                        let mut s = vec![filler; len];
                        s[at] = mark;
                        assert_eq!(
                            find_either(&s, a, b),
                            Some(at),
                            "{mark:#x} at {at} of {len}"
                        );
                        if at + 1 < len {
                            s[at + 1] = later;
                            assert_eq!(find_either(&s, a, b), Some(at));
                        }
                    }
                }
            }
            for other in (0..=255u8).filter(|&c| c != a && c != b) {
                assert_eq!(find_either(&[other; 17], a, b), None, "{other:#x}");
            }
        }
    }
}
