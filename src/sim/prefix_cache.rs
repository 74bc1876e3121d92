//! The simulator's prefix cache (`prefix_cache`, `prefix_cache_tokens`): prompts as chains of
//! 16-token blocks (`sim::request::prefix_blocks`: each block's hash covers everything before
//! it), kept up to a capacity with least-recently-used eviction, as vLLM's automatic prefix
//! caching keeps KV blocks in GPU memory. A request reads the longest leading run of its blocks
//! that the cache holds and writes the rest; when the blocks held outgrow the capacity, the
//! least recently used go first, and among blocks used at the same moment the deepest (the end
//! of a prompt before its beginning, so a prefix held is always whole). Many sessions with
//! different histories then evict each other, and the hit share falls when their working set
//! outgrows the capacity. Pure and deterministic: no clock, a counter orders the uses.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};

/// What one request did with the cache, in blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lookup {
    /// Leading blocks read from the cache (the longest shared prefix held).
    pub hits: u64,
    /// Blocks written: the prompt's blocks the cache did not hold (some may already have been
    /// evicted again when the prompt alone outgrows the capacity).
    pub written: u64,
}

/// A block's place in the eviction order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    used: u64,
    depth: u32,
}

/// Blocks held, each with when it was last used; evicted least recently used first.
#[derive(Debug)]
pub struct PrefixCache {
    /// Blocks held at most.
    capacity: u64,
    /// Uses so far (the clock of the eviction order).
    tick: u64,
    blocks: HashMap<u64, Entry>,
    /// (last use, deepest first, hash): the first is the next to go.
    order: BTreeSet<(u64, Reverse<u32>, u64)>,
}

impl PrefixCache {
    /// A cache holding at most `capacity` blocks.
    pub fn new(capacity: u64) -> PrefixCache {
        PrefixCache {
            capacity,
            tick: 0,
            blocks: HashMap::new(),
            order: BTreeSet::new(),
        }
    }

    /// Blocks held now.
    pub fn len(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// Whether the cache holds `block`.
    pub fn holds(&self, block: u64) -> bool {
        self.blocks.contains_key(&block)
    }

    /// One request with `blocks` (its prompt's chained block hashes, in order): reads the
    /// longest leading run held, marks every block of the prompt as just used, writes the ones
    /// not held, then evicts down to the capacity.
    pub fn lookup(&mut self, blocks: &[u64]) -> Lookup {
        self.tick += 1;
        let hits = blocks.iter().take_while(|b| self.holds(**b)).count() as u64;
        let mut written = 0;
        for (depth, &hash) in blocks.iter().enumerate() {
            let depth = u32::try_from(depth).unwrap_or(u32::MAX);
            let entry = Entry {
                used: self.tick,
                depth,
            };
            match self.blocks.insert(hash, entry) {
                Some(old) => {
                    self.order.remove(&(old.used, Reverse(old.depth), hash));
                }
                None => written += 1,
            }
            self.order.insert((self.tick, Reverse(depth), hash));
        }
        while self.len() > self.capacity {
            let Some((_, _, hash)) = self.order.pop_first() else {
                break;
            };
            self.blocks.remove(&hash);
        }
        Lookup { hits, written }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prompt's chained blocks: block i of prompt `p` shares its hash with block i of `q`
    /// while their first i+1 labels agree (as `prefix_blocks` hashes everything before a block).
    fn chain(labels: &[u64]) -> Vec<u64> {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        labels
            .iter()
            .map(|l| {
                h = (h ^ l).wrapping_mul(0x0100_0000_01b3);
                h
            })
            .collect()
    }

    #[test]
    fn the_first_request_writes_and_a_repeat_reads_every_block() {
        let mut c = PrefixCache::new(100);
        let p = chain(&[1, 2, 3, 4]);
        assert_eq!(
            c.lookup(&p),
            Lookup {
                hits: 0,
                written: 4
            }
        );
        assert_eq!(c.len(), 4);
        assert_eq!(
            c.lookup(&p),
            Lookup {
                hits: 4,
                written: 0
            }
        );
        assert_eq!(c.len(), 4, "a hit adds nothing");
        assert_eq!(c.lookup(&[]), Lookup::default());
    }

    #[test]
    fn a_hit_is_the_longest_shared_prefix_held() {
        let mut c = PrefixCache::new(100);
        c.lookup(&chain(&[1, 2, 3, 4]));
        // Shares the first two blocks, then differs: the rest are new blocks (another chain).
        let q = chain(&[1, 2, 9, 4]);
        assert_eq!(
            c.lookup(&q),
            Lookup {
                hits: 2,
                written: 2
            }
        );
        assert_eq!(c.len(), 6);
        // A different first block shares nothing, even with the same later labels.
        assert_eq!(c.lookup(&chain(&[7, 2, 3, 4])).hits, 0);
        // A longer prompt extending a held one reads the held part.
        assert_eq!(
            c.lookup(&chain(&[1, 2, 3, 4, 5, 6])),
            Lookup {
                hits: 4,
                written: 2
            }
        );
        // A block held after a gap does not count: the run stops at the first miss.
        let mut gap = chain(&[1, 2, 3, 4]);
        gap[1] = 12345;
        assert_eq!(c.lookup(&gap).hits, 1);
    }

    #[test]
    fn the_least_recently_used_prompt_is_evicted_first() {
        let mut c = PrefixCache::new(6);
        let (a, b, d) = (chain(&[1, 1, 1]), chain(&[2, 2, 2]), chain(&[3, 3, 3]));
        c.lookup(&a);
        c.lookup(&b);
        assert_eq!(c.len(), 6);
        // `a` is used again: `b` is now the least recently used.
        assert_eq!(c.lookup(&a).hits, 3);
        c.lookup(&d);
        assert_eq!(c.len(), 6, "the capacity holds");
        assert!(a.iter().all(|h| c.holds(*h)), "a was used recently");
        assert!(b.iter().all(|h| !c.holds(*h)), "b went first");
        assert!(d.iter().all(|h| c.holds(*h)));
        assert_eq!(
            c.lookup(&b),
            Lookup {
                hits: 0,
                written: 3
            }
        );
        // Now `a` (used before d and b) is gone.
        assert_eq!(c.lookup(&a).hits, 0);
    }

    #[test]
    fn blocks_used_together_go_deepest_first_so_a_held_prefix_stays_whole() {
        let mut c = PrefixCache::new(5);
        let a = chain(&[1, 2, 3, 4]);
        c.lookup(&a);
        // Two new blocks need room for one more: a's last block goes, its first three stay.
        c.lookup(&chain(&[8, 9]));
        assert_eq!(c.len(), 5);
        assert_eq!(
            (c.holds(a[0]), c.holds(a[1]), c.holds(a[2]), c.holds(a[3])),
            (true, true, true, false)
        );
        c.lookup(&chain(&[5]));
        assert_eq!(c.lookup(&a).hits, 2);
    }

    #[test]
    fn a_prompt_longer_than_the_capacity_keeps_its_beginning() {
        let mut c = PrefixCache::new(3);
        let long = chain(&[1, 2, 3, 4, 5]);
        assert_eq!(
            c.lookup(&long),
            Lookup {
                hits: 0,
                written: 5
            }
        );
        assert_eq!(c.len(), 3);
        assert!(long[..3].iter().all(|h| c.holds(*h)));
        assert_eq!(
            c.lookup(&long),
            Lookup {
                hits: 3,
                written: 2
            }
        );
        assert_eq!(c.len(), 3);
        let mut none = PrefixCache::new(0);
        assert_eq!(
            none.lookup(&long),
            Lookup {
                hits: 0,
                written: 5
            }
        );
        assert_eq!(
            none.lookup(&long).hits,
            0,
            "a cache of 0 blocks holds nothing"
        );
        assert_eq!(none.len(), 0);
    }

    /// The capacity is what sessions with different histories share: while their working set
    /// fits, every repeat reads its whole prefix; past it, round-robin use evicts each session
    /// before it comes back (LRU's worst case), and the hit share falls to nothing.
    #[test]
    fn sessions_evict_each_other_when_their_working_set_outgrows_the_capacity() {
        let share = |sessions: u64, capacity: u64| {
            let mut c = PrefixCache::new(capacity);
            let (mut hits, mut total) = (0, 0);
            for round in 0..5 {
                for s in 0..sessions {
                    let l = c.lookup(&chain(&[100 + s, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
                    if round > 0 {
                        hits += l.hits;
                        total += 10;
                    }
                }
            }
            hits as f64 / total as f64
        };
        assert_eq!(share(4, 40), 1.0, "4 sessions of 10 blocks fit in 40");
        assert_eq!(
            share(5, 40),
            0.0,
            "5 do not: each is evicted before it returns"
        );
        assert_eq!(share(5, 50), 1.0);
    }

    #[test]
    fn the_same_requests_give_the_same_answers() {
        let run = || {
            let mut c = PrefixCache::new(7);
            (0..50u64)
                .map(|i| c.lookup(&chain(&[i % 3, i % 5, i % 7, 1])))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
