//! The IDEA block cipher (Lai and Massey, 1991): 64-bit blocks, a 128-bit
//! key, eight rounds and an output transformation, mixing three group
//! operations on 16-bit words: XOR, addition modulo 2^16 and multiplication
//! modulo 2^16 + 1 (with 0 standing for 2^16).
//!
//! One iteration encrypts a 4 KiB buffer (512 blocks, ECB) and decrypts it
//! again with the inverted key schedule; the result must equal the input.
//! It is pure 16-bit integer arithmetic with many multiplies, so it counts
//! towards the integer index. The implementation is checked against the
//! published test vector of the cipher's designers.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str = "IDEA cipher: encrypt and decrypt 4 KiB (512 blocks, 8.5 rounds)";

/// Bytes encrypted and decrypted per iteration.
pub const BUFFER_BYTES: usize = 4096;
const SEED: u64 = 0x6964_6561_6369_7068;
const SUBKEYS: usize = 52;

/// Multiplication modulo 65537, where the word 0 stands for 65536.
fn mul(a: u16, b: u16) -> u16 {
    if a == 0 {
        // 65536 × b ≡ −b (mod 65537)
        return 1u16.wrapping_sub(b);
    }
    if b == 0 {
        return 1u16.wrapping_sub(a);
    }
    let p = u32::from(a) * u32::from(b);
    let (lo, hi) = (p & 0xffff, p >> 16);
    // p = hi·2^16 + lo ≡ lo − hi (mod 65537)
    (lo.wrapping_sub(hi).wrapping_add(u32::from(lo < hi))) as u16
}

/// Multiplicative inverse modulo 65537 (0 = 65536 is its own inverse).
fn mul_inv(x: u16) -> u16 {
    if x <= 1 {
        return x;
    }
    // Extended Euclid on (65537, x).
    let (mut r0, mut r1) = (65537i64, i64::from(x));
    let (mut t0, mut t1) = (0i64, 1i64);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    t0.rem_euclid(65537) as u16
}

/// The 52 encryption subkeys: the key's eight words, then the key rotated
/// left by 25 bits, again and again.
pub fn encryption_keys(key: &[u16; 8]) -> [u16; SUBKEYS] {
    let mut k = 0u128;
    for &w in key {
        k = (k << 16) | u128::from(w);
    }
    let mut out = [0u16; SUBKEYS];
    for (i, o) in out.iter_mut().enumerate() {
        if i > 0 && i % 8 == 0 {
            k = k.rotate_left(25);
        }
        *o = (k >> (112 - 16 * (i % 8))) as u16;
    }
    out
}

/// The decryption subkeys: inverses in reverse order, with the two
/// additive keys of rounds 2–8 exchanged (the rounds swap the middle words).
pub fn decryption_keys(ek: &[u16; SUBKEYS]) -> [u16; SUBKEYS] {
    let mut dk = [0u16; SUBKEYS];
    for r in 0..9 {
        // Decryption round r undoes encryption round 8 − r (round 8 being
        // the output transformation).
        let base = 6 * (8 - r);
        let swap = r != 0 && r != 8;
        dk[6 * r] = mul_inv(ek[base]);
        let (add_a, add_b) = if swap {
            (ek[base + 2], ek[base + 1])
        } else {
            (ek[base + 1], ek[base + 2])
        };
        dk[6 * r + 1] = add_a.wrapping_neg();
        dk[6 * r + 2] = add_b.wrapping_neg();
        dk[6 * r + 3] = mul_inv(ek[base + 3]);
        if r < 8 {
            dk[6 * r + 4] = ek[base - 2];
            dk[6 * r + 5] = ek[base - 1];
        }
    }
    dk
}

/// One block through eight rounds and the output transformation.
pub fn crypt_block(block: [u16; 4], k: &[u16; SUBKEYS]) -> [u16; 4] {
    let [mut x1, mut x2, mut x3, mut x4] = block;
    for r in 0..8 {
        let k = &k[6 * r..6 * r + 6];
        let a = mul(x1, k[0]);
        let b = x2.wrapping_add(k[1]);
        let c = x3.wrapping_add(k[2]);
        let d = mul(x4, k[3]);
        let e = mul(a ^ c, k[4]);
        let f = mul((b ^ d).wrapping_add(e), k[5]);
        let g = e.wrapping_add(f);
        x1 = a ^ f;
        x2 = c ^ f;
        x3 = b ^ g;
        x4 = d ^ g;
    }
    // The output transformation undoes the last round's middle swap.
    [
        mul(x1, k[48]),
        x3.wrapping_add(k[49]),
        x2.wrapping_add(k[50]),
        mul(x4, k[51]),
    ]
}

fn crypt_buffer(input: &[u8], output: &mut [u8], k: &[u16; SUBKEYS]) {
    for (src, dst) in input.chunks_exact(8).zip(output.chunks_exact_mut(8)) {
        let w = |i: usize| u16::from_be_bytes([src[2 * i], src[2 * i + 1]]);
        let out = crypt_block([w(0), w(1), w(2), w(3)], k);
        for (i, word) in out.iter().enumerate() {
            dst[2 * i..2 * i + 2].copy_from_slice(&word.to_be_bytes());
        }
    }
}

pub struct Idea {
    plain: Vec<u8>,
    cipher: Vec<u8>,
    decrypted: Vec<u8>,
    ek: [u16; SUBKEYS],
    dk: [u16; SUBKEYS],
    iterations: u64,
}

impl Idea {
    pub fn new() -> Self {
        let mut rng = SplitMix64::new(SEED);
        let key: [u16; 8] = std::array::from_fn(|_| rng.next_u64() as u16);
        let plain: Vec<u8> = (0..BUFFER_BYTES).map(|_| rng.next_u64() as u8).collect();
        let ek = encryption_keys(&key);
        Idea {
            cipher: vec![0; plain.len()],
            decrypted: vec![0; plain.len()],
            plain,
            dk: decryption_keys(&ek),
            ek,
            iterations: 0,
        }
    }

    pub fn ciphertext(&self) -> &[u8] {
        &self.cipher
    }
}

impl super::Kernel for Idea {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            crypt_buffer(
                black_box(&self.plain),
                &mut self.cipher,
                black_box(&self.ek),
            );
            crypt_buffer(
                black_box(&self.cipher),
                &mut self.decrypted,
                black_box(&self.dk),
            );
            black_box(&self.decrypted);
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("idea has not run".into());
        }
        if self.decrypted != self.plain {
            return Err("idea: decrypting the ciphertext did not give the plaintext back".into());
        }
        if self.cipher == self.plain {
            return Err("idea: the ciphertext equals the plaintext".into());
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
    fn published_test_vector() {
        // Key 0001 0002 … 0008, plaintext 0000 0001 0002 0003.
        let ek = encryption_keys(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let c = crypt_block([0, 1, 2, 3], &ek);
        assert_eq!(c, [0x11fb, 0xed2b, 0x0198, 0x6de5]);
        assert_eq!(crypt_block(c, &decryption_keys(&ek)), [0, 1, 2, 3]);
    }

    #[test]
    fn key_schedule_rotates_by_25() {
        let ek = encryption_keys(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&ek[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        // Rotating 0001 0002 … left by 25 bits: the first word is built from
        // bits 25..41 of the key.
        assert_eq!(ek[8], 0x0400);
        assert_eq!(ek[9], 0x0600);
    }

    #[test]
    fn multiplication_group() {
        for x in [0u16, 1, 2, 3, 255, 4097, 65535] {
            assert_eq!(mul(x, mul_inv(x)), 1, "{x}");
            assert_eq!(mul(x, 1), x);
        }
        // 65536 × 65536 = 2^32 ≡ 1 (mod 65537).
        assert_eq!(mul(0, 0), 1);
        // 2 × 32769 = 65538 ≡ 1.
        assert_eq!(mul(2, 32769), 1);
        // Exhaustive against plain modular arithmetic for one operand.
        for b in 0..=u16::MAX {
            let wide = |v: u16| if v == 0 { 65536u64 } else { u64::from(v) };
            let want = (wide(40_000) * wide(b)) % 65537;
            assert_eq!(u64::from(mul(40_000, b)), want % 65536, "{b}");
        }
    }

    #[test]
    fn round_trip_and_pinned() {
        let mut k = run_verified(Idea::new());
        let h = super::super::fnv1a64(k.ciphertext().iter().map(|&b| u64::from(b)));
        assert_pinned(h, PINNED);
        k.decrypted[100] ^= 1;
        assert!(k.verify().is_err());
    }

    const PINNED: u64 = 14_991_858_771_635_330_647;
}
