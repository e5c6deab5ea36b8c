//! Huffman compression: count the byte frequencies of 8 KiB of generated
//! text, build the Huffman code, encode the text into a bit stream and decode
//! it again by walking the code tree bit by bit.
//!
//! The text is made of words from a fixed vocabulary chosen pseudo-randomly,
//! so its statistics resemble prose (skewed letter frequencies, spaces,
//! sentence ends). The tree is built with the two-queue method over leaves
//! sorted by (frequency, byte), which makes the code deterministic with no
//! ties left to chance. Decoding is a branchy, data-dependent walk with one
//! bit extraction per step: integer index.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str =
    "Huffman-code 8 KiB of generated text: count, build tree, encode, decode bit by bit";

/// Bytes of text per iteration.
pub const TEXT_BYTES: usize = 8192;
const SEED: u64 = 0x6875_6666_6d61_6e21;
const NONE: u16 = u16::MAX;
/// Leaves are nodes 0..256, internal nodes 256..511.
const NODES: usize = 511;

const WORDS: &[&str] = &[
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "no", "machine", "measure",
    "clock", "memory", "kernel", "faster", "slower", "number", "compare", "result", "quiet",
    "bench", "table", "every", "honest", "cycle", "cache", "queue", "packet", "disk", "thread",
];

pub struct Huffman {
    text: Vec<u8>,
    freq: [u32; 256],
    /// Leaf order for the two-queue build.
    leaves: Vec<u16>,
    weight: [u32; NODES],
    left: [u16; NODES],
    right: [u16; NODES],
    parent: [u16; NODES],
    root: u16,
    code: [u64; 256],
    code_len: [u8; 256],
    packed: Vec<u8>,
    packed_bits: usize,
    decoded: Vec<u8>,
    iterations: u64,
}

impl Huffman {
    pub fn new() -> Self {
        Self::from_text(generate_text(TEXT_BYTES))
    }

    pub fn from_text(text: Vec<u8>) -> Self {
        let n = text.len();
        Huffman {
            freq: [0; 256],
            leaves: Vec::with_capacity(256),
            weight: [0; NODES],
            left: [NONE; NODES],
            right: [NONE; NODES],
            parent: [NONE; NODES],
            root: NONE,
            code: [0; 256],
            code_len: [0; 256],
            // Huffman's average code length is at most 8 bits, plus room
            // for the final partial word.
            packed: vec![0; n + 16],
            packed_bits: 0,
            decoded: vec![0; n],
            text,
            iterations: 0,
        }
    }

    /// Size of the encoded text in bits.
    pub fn packed_bits(&self) -> usize {
        self.packed_bits
    }

    pub fn text(&self) -> &[u8] {
        &self.text
    }

    fn count(&mut self) {
        self.freq = [0; 256];
        for &b in black_box(&self.text[..]) {
            self.freq[b as usize] += 1;
        }
    }

    fn build_tree(&mut self) {
        self.leaves.clear();
        for s in 0..256u16 {
            self.weight[s as usize] = self.freq[s as usize];
            self.parent[s as usize] = NONE;
            if self.freq[s as usize] > 0 {
                self.leaves.push(s);
            }
        }
        // Insertion sort by (weight, symbol): at most 256 entries, no allocation.
        for i in 1..self.leaves.len() {
            let x = self.leaves[i];
            let key = (self.weight[x as usize], x);
            let mut j = i;
            while j > 0 {
                let y = self.leaves[j - 1];
                if (self.weight[y as usize], y) <= key {
                    break;
                }
                self.leaves[j] = y;
                j -= 1;
            }
            self.leaves[j] = x;
        }
        match self.leaves.len() {
            0 => {
                self.root = NONE;
                return;
            }
            1 => {
                // One distinct byte still needs a one-bit code.
                let leaf = self.leaves[0];
                self.left[256] = leaf;
                self.right[256] = leaf;
                self.weight[256] = self.weight[leaf as usize];
                self.parent[256] = NONE;
                self.parent[leaf as usize] = 256;
                self.root = 256;
                return;
            }
            _ => {}
        }
        // Two queues: sorted leaves, and internal nodes in creation order
        // (their weights never decrease). Ties prefer the leaf.
        let (mut li, mut next_internal, mut ii) = (0usize, 256usize, 256usize);
        let total = self.leaves.len() - 1;
        for _ in 0..total {
            let mut pick = || {
                let leaf = self.leaves.get(li).copied();
                let take_leaf = match leaf {
                    Some(l) => ii >= next_internal || self.weight[l as usize] <= self.weight[ii],
                    None => false,
                };
                if take_leaf {
                    li += 1;
                    leaf.unwrap_or(NONE)
                } else {
                    ii += 1;
                    (ii - 1) as u16
                }
            };
            let a = pick();
            let b = pick();
            let node = next_internal;
            self.left[node] = a;
            self.right[node] = b;
            self.weight[node] = self.weight[a as usize] + self.weight[b as usize];
            self.parent[node] = NONE;
            self.parent[a as usize] = node as u16;
            self.parent[b as usize] = node as u16;
            next_internal += 1;
        }
        self.root = (next_internal - 1) as u16;
    }

    fn assign_codes(&mut self) {
        self.code_len = [0; 256];
        for &s in &self.leaves {
            let (mut code, mut len, mut node) = (0u64, 0u8, s);
            while node != self.root {
                let p = self.parent[node as usize];
                if self.right[p as usize] == node && self.left[p as usize] != node {
                    code |= 1u64 << len;
                }
                len += 1;
                node = p;
            }
            self.code[s as usize] = code;
            self.code_len[s as usize] = len;
        }
    }

    fn encode(&mut self) {
        // MSB-first bit stream through a 64-bit accumulator.
        let (mut acc, mut acc_bits, mut out) = (0u64, 0u32, 0usize);
        for &b in black_box(&self.text[..]) {
            let len = u32::from(self.code_len[b as usize]);
            acc = (acc << len) | self.code[b as usize];
            acc_bits += len;
            while acc_bits >= 8 {
                acc_bits -= 8;
                self.packed[out] = (acc >> acc_bits) as u8;
                out += 1;
            }
        }
        if acc_bits > 0 {
            self.packed[out] = (acc << (8 - acc_bits)) as u8;
        }
        self.packed_bits = out * 8 + acc_bits as usize;
    }

    fn decode(&mut self) {
        let mut pos = 0usize;
        for slot in self.decoded.iter_mut() {
            let mut node = self.root;
            while node >= 256 {
                let bit = (self.packed[pos >> 3] >> (7 - (pos & 7))) & 1;
                pos += 1;
                node = if bit == 0 {
                    self.left[node as usize]
                } else {
                    self.right[node as usize]
                };
            }
            *slot = node as u8;
        }
    }

    /// Σ frequency × code length: what the encoder must have produced.
    fn expected_bits(&self) -> usize {
        (0..256)
            .map(|s| self.freq[s] as usize * self.code_len[s] as usize)
            .sum()
    }
}

/// Words from the vocabulary, spaces, and a sentence end every 6–17 words.
pub fn generate_text(bytes: usize) -> Vec<u8> {
    let mut rng = SplitMix64::new(SEED);
    let mut text = Vec::with_capacity(bytes + 32);
    let mut until_stop = 6 + rng.below(12);
    let mut capital = true;
    while text.len() < bytes {
        let w = WORDS[rng.below(WORDS.len())].as_bytes();
        for (i, &c) in w.iter().enumerate() {
            text.push(if capital && i == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            });
        }
        capital = false;
        until_stop -= 1;
        if until_stop == 0 {
            text.extend_from_slice(if rng.below(4) == 0 { b".\n" } else { b". " });
            until_stop = 6 + rng.below(12);
            capital = true;
        } else {
            text.push(if rng.below(10) == 0 { b',' } else { b' ' });
        }
    }
    text.truncate(bytes);
    text
}

impl super::Kernel for Huffman {
    fn run(&mut self, iterations: u64) {
        if self.text.is_empty() {
            self.iterations += iterations;
            return;
        }
        for _ in 0..iterations {
            self.count();
            self.build_tree();
            self.assign_codes();
            self.encode();
            self.decode();
            black_box(&self.decoded);
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("huffman has not run".into());
        }
        if self.decoded != self.text {
            return Err("huffman: the decoded text differs from the input".into());
        }
        if self.packed_bits != self.expected_bits() {
            return Err(format!(
                "huffman: {} bits encoded, the code lengths say {}",
                self.packed_bits,
                self.expected_bits()
            ));
        }
        if !self.text.is_empty() && self.packed_bits >= self.text.len() * 8 {
            return Err("huffman: the encoded text is not smaller than the input".into());
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
    fn round_trips_edge_cases() {
        for text in [
            b"a".to_vec(),
            b"aaaaaaa".to_vec(),
            b"ab".to_vec(),
            b"abracadabra".to_vec(),
            (0..=255u8).collect::<Vec<u8>>(),
            (0..5000).map(|i| (i % 7) as u8 * 30).collect(),
        ] {
            let mut k = Huffman::from_text(text.clone());
            k.run(2);
            assert_eq!(k.decoded, text);
            assert_eq!(k.packed_bits, k.expected_bits());
        }
        // Flat distribution over 256 bytes: exactly 8 bits each.
        let mut k = Huffman::from_text((0..=255u8).collect());
        k.run(1);
        assert_eq!(k.packed_bits(), 256 * 8);
    }

    #[test]
    fn known_code_lengths() {
        // "abracadabra": a×5, b×2, r×2, c×1, d×1 → 23 bits optimal.
        let mut k = Huffman::from_text(b"abracadabra".to_vec());
        k.run(1);
        assert_eq!(k.packed_bits(), 23);
    }

    #[test]
    fn full_size_verifies_and_is_pinned() {
        let k = Huffman::new();
        assert_eq!(k.text().len(), TEXT_BYTES);
        assert!(k.text().starts_with(&[k.text()[0]]) && k.text()[0].is_ascii_uppercase());
        let mut k = run_verified(k);
        let text_hash = super::super::fnv1a64(k.text().iter().map(|&b| u64::from(b)));
        assert_pinned((text_hash, k.packed_bits()), PINNED);
        k.decoded[17] ^= 0x20;
        assert!(k.verify().is_err());
    }

    const PINNED: (u64, usize) = (2_283_377_890_169_313_130, 35_248);
}
