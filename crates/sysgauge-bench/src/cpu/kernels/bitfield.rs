//! Bitfield operations: 4096 runs of bits set, cleared or toggled, one bit at
//! a time, in a 128 KiB bitmap.
//!
//! Each operation names a kind (set, clear, toggle), a first bit anywhere in
//! the 2^20-bit map and a run length of 1 to 512 bits. Working bit by bit is
//! the point: every bit is an address computation, a shift and a
//! read-modify-write of memory, and the map is larger than most first-level
//! caches, so this counts towards the memory index. Each iteration restores
//! the map's pristine pattern first; the result is checked against a second,
//! word-at-a-time implementation computed when the instance is made.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str =
    "4096 runs of 1-512 bits set, cleared or toggled bit by bit in a 128 KiB bitmap";

/// Bits in the map (128 KiB).
pub const BITS: usize = 1 << 20;
/// Operations per iteration.
pub const OPS: usize = 4096;
const MAX_RUN: u32 = 512;
const SEED: u64 = 0x6269_7466_6965_6c64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpKind {
    Set,
    Clear,
    Toggle,
}

#[derive(Debug, Clone, Copy)]
struct Op {
    kind: OpKind,
    first: u32,
    len: u32,
}

pub struct Bitfield {
    pristine: Vec<u64>,
    map: Vec<u64>,
    ops: Vec<Op>,
    /// Checksum and population count of the correct final map.
    expected: (u64, u64),
    iterations: u64,
}

impl Bitfield {
    pub fn new() -> Self {
        Self::with_size(BITS, OPS)
    }

    /// A smaller instance for tests (`bits` a multiple of 64, above 512).
    pub fn with_size(bits: usize, ops: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let pristine: Vec<u64> = (0..bits / 64).map(|_| rng.next_u64()).collect();
        let ops: Vec<Op> = (0..ops)
            .map(|_| {
                let kind = match rng.below(3) {
                    0 => OpKind::Set,
                    1 => OpKind::Clear,
                    _ => OpKind::Toggle,
                };
                let len = 1 + rng.below(MAX_RUN as usize) as u32;
                let first = rng.below(bits - len as usize + 1) as u32;
                Op { kind, first, len }
            })
            .collect();
        let mut reference = pristine.clone();
        apply_by_words(&mut reference, &ops);
        let expected = summarize(&reference);
        Bitfield {
            map: pristine.clone(),
            pristine,
            ops,
            expected,
            iterations: 0,
        }
    }

    pub fn checksum(&self) -> (u64, u64) {
        summarize(&self.map)
    }
}

fn summarize(map: &[u64]) -> (u64, u64) {
    (
        super::fnv1a64(map.iter().copied()),
        map.iter().map(|w| u64::from(w.count_ones())).sum(),
    )
}

/// The timed implementation: one bit at a time.
fn apply_by_bits(map: &mut [u64], ops: &[Op]) {
    for op in ops {
        let end = op.first + op.len;
        match op.kind {
            OpKind::Set => {
                for bit in op.first..end {
                    map[(bit >> 6) as usize] |= 1u64 << (bit & 63);
                }
            }
            OpKind::Clear => {
                for bit in op.first..end {
                    map[(bit >> 6) as usize] &= !(1u64 << (bit & 63));
                }
            }
            OpKind::Toggle => {
                for bit in op.first..end {
                    map[(bit >> 6) as usize] ^= 1u64 << (bit & 63);
                }
            }
        }
    }
}

/// The checking implementation: whole words with masks.
fn apply_by_words(map: &mut [u64], ops: &[Op]) {
    for op in ops {
        let mut bit = op.first as usize;
        let end = bit + op.len as usize;
        while bit < end {
            let word = bit / 64;
            let lo = bit % 64;
            let hi = (end - word * 64).min(64);
            let width = hi - lo;
            let mask = if width == 64 {
                u64::MAX
            } else {
                ((1u64 << width) - 1) << lo
            };
            match op.kind {
                OpKind::Set => map[word] |= mask,
                OpKind::Clear => map[word] &= !mask,
                OpKind::Toggle => map[word] ^= mask,
            }
            bit = word * 64 + hi;
        }
    }
}

impl super::Kernel for Bitfield {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            self.map.copy_from_slice(black_box(&self.pristine));
            apply_by_bits(black_box(&mut self.map), black_box(&self.ops));
            black_box(&self.map);
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("bitfield has not run".into());
        }
        let got = summarize(&self.map);
        if got != self.expected {
            return Err(format!(
                "bitfield: map checksum {:016x} ({} bits set), expected {:016x} ({} bits set)",
                got.0, got.1, self.expected.0, self.expected.1
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pinned::{assert_pinned, run_verified};
    use super::super::Kernel;
    use super::*;

    #[test]
    fn bits_and_words_agree() {
        for (bits, ops) in [(1024usize, 1usize), (1024, 50), (4096, 300), (65536, 1000)] {
            let mut k = Bitfield::with_size(bits, ops);
            k.run(1);
            k.verify().unwrap_or_else(|e| panic!("{bits}/{ops}: {e}"));
        }
    }

    #[test]
    fn word_masks_at_edges() {
        let ops = [
            Op {
                kind: OpKind::Set,
                first: 0,
                len: 64,
            },
            Op {
                kind: OpKind::Set,
                first: 100,
                len: 200,
            },
            Op {
                kind: OpKind::Toggle,
                first: 63,
                len: 2,
            },
            Op {
                kind: OpKind::Clear,
                first: 128,
                len: 64,
            },
        ];
        let mut a = vec![0u64; 8];
        let mut b = vec![0u64; 8];
        apply_by_bits(&mut a, &ops);
        apply_by_words(&mut b, &ops);
        assert_eq!(a, b);
        assert_eq!(a[0], u64::MAX >> 1);
        assert_eq!(a[2], 0);
    }

    #[test]
    fn full_size_known_answer() {
        let mut k = run_verified(Bitfield::new());
        assert_pinned(k.checksum(), PINNED);
        k.map[5] ^= 1 << 7;
        assert!(k.verify().is_err());
    }

    const PINNED: (u64, u64) = (835_938_796_304_743_012, 514_303);
}
