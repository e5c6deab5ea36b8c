//! CAST5-CBC (CAST-128 with a 128-bit key) written for this project from
//! RFC 2144 ("The CAST-128 Encryption Algorithm").
//!
//! Why by hand: the RustCrypto `cast5` crate under the CBC loop in
//! `crypto/symmetric.rs` falls short of `openssl speed -evp cast5-cbc`
//! (docs/performance.md). CBC encryption is one dependency chain, so its
//! speed is the latency of sixteen rounds per block. What this kernel does
//! about it:
//! - the eight S-boxes live in one static array indexed by `u8` (one base
//!   register, no bounds checks); the key schedule is run once into the
//!   masking keys `km` and the rotation counts `kr` (RFC 2144 2.4);
//! - the whole buffer is encrypted in one loop with the chaining value held
//!   as two `u32` halves, the sixteen rounds unrolled without half swaps;
//! - each round's four S-box values are combined with two dependent
//!   operations after the loads instead of three where the round type
//!   allows (the modular sums and differences are re-associated, which is
//!   exact), in an order that lets the byte whose index takes a shift and a
//!   mask to extract enter last;
//! - a type-2 round starts with D ^ Km, so the type-1 round before it
//!   writes its half with that Km already XORed in (the plain half is
//!   recovered off the chain);
//! - LLVM turns each combination back into a serial chain in source order,
//!   so partial results pass through an empty `asm!` that keeps the order
//!   written (see `opaque`).
//!
//! The S-boxes are RFC 2144 appendix A, kept in `cast5_sboxes.txt` in the
//! RFC's own layout (so they can be compared with it line by line) and parsed
//! at compile time. Decryption (for the tests) is the plain form of the
//! spec. The `cast5` crate stays as the independent implementation: the
//! round trip in `crypto/symmetric.rs` decrypts with it, and the tests compare this
//! kernel with it on random inputs.

// LLVM turns each round's combination of the four S-box values into one
// serial chain of operations with memory operands, in source order; passing
// the partial results through `opaque` keeps the shallower order written.
use crate::opaque::opaque_u32 as opaque;

use crate::be32;

/// S1..S8 of RFC 2144 appendix A.
static S: [[u32; 256]; 8] = parse_sboxes(include_str!("cast5_sboxes.txt"));

/// Reads the appendix's layout: "S-Box Sn" heading lines, then 256 words of
/// eight hexadecimal digits each. Any other shape fails the build.
const fn parse_sboxes(text: &str) -> [[u32; 256]; 8] {
    let b = text.as_bytes();
    let mut out = [[0u32; 256]; 8];
    let (mut i, mut n, mut word, mut digits) = (0, 0, 0u32, 0);
    while i <= b.len() {
        let c = if i < b.len() { b[i] } else { b'\n' };
        if digits == 0 && c == b'S' {
            // A heading: "S-Box S<k>", where k must be the next box.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            assert!(n % 256 == 0, "an S-box heading in the middle of a box");
            assert!(b[i - 1] == b'1' + (n / 256) as u8, "S-boxes out of order");
            continue;
        }
        let v = match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        match v {
            Some(v) => {
                word = (word << 4) | v as u32;
                digits += 1;
            }
            None => {
                assert!(c == b' ' || c == b'\n', "unexpected character");
                if digits != 0 {
                    assert!(digits == 8, "a word of other than 8 digits");
                    assert!(n < 2048, "more than 8 x 256 words");
                    out[n / 256][n % 256] = word;
                    n += 1;
                    word = 0;
                    digits = 0;
                }
            }
        }
        i += 1;
    }
    assert!(n == 2048, "fewer than 8 x 256 words");
    out
}

#[inline(always)]
fn sbox(k: usize, x: u32) -> u32 {
    S[k][x as u8 as usize]
}

/// The four S-box values of a round: S1[Ia], S2[Ib], S3[Ic], S4[Id] for
/// I = Ia Ib Ic Id (Ia the most significant byte).
#[inline(always)]
fn lookups(i: u32) -> (u32, u32, u32, u32) {
    (
        sbox(0, i >> 24),
        sbox(1, i >> 16),
        sbox(2, i >> 8),
        sbox(3, i),
    )
}

/// Round function type 1 (RFC 2144 2.2), XORed into `other`:
/// f = ((S1 ^ S2) - S3) + S4, computed as (S1 ^ S2) + (S4 - S3).
#[inline(always)]
fn t1(other: u32, d: u32, km: u32, kr: u32) -> u32 {
    let (s1, s2, s3, s4) = lookups(km.wrapping_add(d).rotate_left(kr));
    opaque(opaque(s1 ^ s2).wrapping_add(opaque(s4.wrapping_sub(s3)))) ^ other
}

/// Type 2, XORed into `other`, for `dk` = D ^ Km (the caller folds the
/// masking key into D while D is computed): f = ((S1 - S2) + S3) ^ S4,
/// computed as ((S1 + S3) - S2) ^ S4, so that S2, whose index takes one
/// operation more to extract, enters last.
#[inline(always)]
fn t2(other: u32, dk: u32, kr: u32) -> u32 {
    let (s1, s2, s3, s4) = lookups(dk.rotate_left(kr));
    opaque(opaque(s1.wrapping_add(s3)).wrapping_sub(s2)) ^ opaque(s4 ^ other)
}

/// Type 3, XORed into `other`: f = ((S1 + S2) ^ S3) - S4, a chain in
/// which S4 enters last. `kr16` is Kr + 16 (mod 32): the word is rotated
/// 16 bits further, which puts Id, the byte S4 takes, in bits 16-23 (the
/// one that needs a shift and a mask to extract) and the bytes that enter
/// the chain first where a single move or shift reaches them.
#[inline(always)]
fn t3(other: u32, d: u32, km: u32, kr16: u32) -> u32 {
    let j = km.wrapping_sub(d).rotate_left(kr16);
    let (s1, s2, s3, s4) = (
        sbox(0, j >> 8),
        sbox(1, j),
        sbox(2, j >> 24),
        sbox(3, j >> 16),
    );
    opaque(opaque(opaque(s1.wrapping_add(s2)) ^ s3).wrapping_sub(s4)) ^ other
}

/// The round function of round `r` (0-based) as the spec writes it: types
/// 1, 2, 3 in turn (decryption uses it; encryption inlines the folded form).
#[inline(always)]
fn f(r: usize, d: u32, km: u32, kr: u32) -> u32 {
    match r % 3 {
        0 => t1(0, d, km, kr),
        1 => t2(0, d ^ km, kr),
        _ => t3(0, d, km, (kr + 16) % 32),
    }
}

/// A line of RFC 2144 2.4 that makes one word of z from x (or of x from
/// z), e.g. "z0z1z2z3 = x0x1x2x3 ^ S5[xD] ^ S6[xF] ^ S7[xC] ^ S8[xE] ^
/// S7[x8]": the offset of the word of the other array it starts from, the
/// bytes S5..S8 take (in the first line from the other array, in the later
/// ones from the bytes the lines before wrote) and the byte of the other
/// array the fifth lookup takes (in S7, S8, S5, S6 for the four lines).
type KeyLine = (usize, [usize; 4], usize);

/// "z0z1z2z3 = x0x1x2x3 ^ …" … "zCzDzEzF = x4x5x6x7 ^ …".
const Z_FROM_X: [KeyLine; 4] = [
    (0x0, [0xd, 0xf, 0xc, 0xe], 0x8),
    (0x8, [0x0, 0x2, 0x1, 0x3], 0xa),
    (0xc, [0x7, 0x6, 0x5, 0x4], 0x9),
    (0x4, [0xa, 0x9, 0xb, 0x8], 0xb),
];

/// "x0x1x2x3 = z8z9zAzB ^ …" … "xCxDxExF = zCzDzEzF ^ …".
const X_FROM_Z: [KeyLine; 4] = [
    (0x8, [0x5, 0x7, 0x4, 0x6], 0x0),
    (0x0, [0x0, 0x2, 0x1, 0x3], 0x2),
    (0x4, [0x7, 0x6, 0x5, 0x4], 0x1),
    (0xc, [0xa, 0x9, 0xb, 0x8], 0x3),
];

/// K1..K16 of RFC 2144 2.4, e.g. "K1 = S5[z8] ^ S6[z9] ^ S7[z7] ^ S8[z6] ^
/// S5[z2]": the bytes S5..S8 take and the byte the fifth lookup takes (in
/// S5, S6, S7, S8 for the four subkeys of a group), all from the array the
/// lines before the group wrote (z for K1..K4 and K9..K12, x for the others).
const SUBKEY_LOOKUPS: [([usize; 4], usize); 16] = [
    ([0x8, 0x9, 0x7, 0x6], 0x2),
    ([0xa, 0xb, 0x5, 0x4], 0x6),
    ([0xc, 0xd, 0x3, 0x2], 0x9),
    ([0xe, 0xf, 0x1, 0x0], 0xc),
    ([0x3, 0x2, 0xc, 0xd], 0x8),
    ([0x1, 0x0, 0xe, 0xf], 0xd),
    ([0x7, 0x6, 0x8, 0x9], 0x3),
    ([0x5, 0x4, 0xa, 0xb], 0x7),
    ([0x3, 0x2, 0xc, 0xd], 0x9),
    ([0x1, 0x0, 0xe, 0xf], 0xc),
    ([0x7, 0x6, 0x8, 0x9], 0x2),
    ([0x5, 0x4, 0xa, 0xb], 0x6),
    ([0x8, 0x9, 0x7, 0x6], 0x3),
    ([0xa, 0xb, 0x5, 0x4], 0x7),
    ([0xc, 0xd, 0x3, 0x2], 0x8),
    ([0xe, 0xf, 0x1, 0x0], 0xd),
];

/// S5[a] ^ S6[b] ^ S7[c] ^ S8[d] for the bytes of `from` at `at`.
fn s5_to_s8(from: &[u8; 16], at: [usize; 4]) -> u32 {
    (0..4).fold(0, |w, i| w ^ S[4 + i][from[at[i]] as usize])
}

/// Four words of `to` from `from` by the key schedule's `lines`; each line
/// after the first looks up the bytes the lines before it wrote.
fn derive(from: &[u8; 16], to: &mut [u8; 16], lines: &[KeyLine; 4]) {
    // The fifth S-box of the four lines: S7, S8, S5, S6.
    const FIFTH: [usize; 4] = [6, 7, 4, 5];
    for (j, &(word, bytes, fifth)) in lines.iter().enumerate() {
        let looked_up = if j == 0 {
            s5_to_s8(from, bytes)
        } else {
            s5_to_s8(to, bytes)
        };
        let w = be32(&from[word..word + 4]) ^ looked_up ^ S[FIFTH[j]][from[fifth] as usize];
        to[4 * j..4 * j + 4].copy_from_slice(&w.to_be_bytes());
    }
}

/// CAST-128 subkeys (128-bit key: sixteen rounds) and the CBC chaining value.
#[derive(Clone)]
pub struct Cast5Cbc {
    km: [u32; 16],
    kr: [u32; 16],
    /// Kr + 16 (mod 32), the rotation `t3` takes.
    kr16: [u32; 16],
    iv: (u32, u32),
}

impl Cast5Cbc {
    /// Key schedule (RFC 2144 2.4) for a 16-byte key; 8-byte IV.
    pub fn new(key: &[u8], iv: &[u8]) -> Option<Cast5Cbc> {
        let mut x: [u8; 16] = key.try_into().ok()?;
        if iv.len() != 8 {
            return None;
        }
        let mut z = [0u8; 16];
        let mut k = [0u32; 32];
        // K1..K16 (RFC 2144 2.4), then the same steps again for K17..K32:
        // z from x, four subkeys from z, x from z, four from x, twice.
        for half in 0..2 {
            for quarter in 0..4 {
                let to = if quarter % 2 == 0 {
                    derive(&x, &mut z, &Z_FROM_X);
                    &z
                } else {
                    derive(&z, &mut x, &X_FROM_Z);
                    &x
                };
                let group = &SUBKEY_LOOKUPS[4 * quarter..4 * quarter + 4];
                for (i, &(bytes, fifth)) in group.iter().enumerate() {
                    k[16 * half + 4 * quarter + i] =
                        s5_to_s8(to, bytes) ^ S[4 + i][to[fifth] as usize];
                }
            }
        }
        let mut km = [0u32; 16];
        let mut kr = [0u32; 16];
        km.copy_from_slice(&k[..16]);
        for (r, v) in kr.iter_mut().zip(&k[16..]) {
            *r = v & 31;
        }
        Some(Cast5Cbc {
            km,
            kr,
            kr16: kr.map(|r| (r + 16) % 32),
            iv: (be32(&iv[..4]), be32(&iv[4..])),
        })
    }

    /// One block as RFC 2144 2.1 gives it, rounds in `order`.
    fn rounds(&self, mut l: u32, mut r: u32, order: impl Iterator<Item = usize>) -> (u32, u32) {
        for i in order {
            (l, r) = (r, l ^ f(i, r, self.km[i], self.kr[i]));
        }
        (r, l)
    }

    /// CBC-encrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 8-byte blocks.
    pub fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(8) {
            return false;
        }
        let (km, kr, kr16) = (&self.km, &self.kr, &self.kr16);
        let (mut cl, mut cr) = self.iv;
        for block in buf.chunks_exact_mut(8) {
            let mut l = be32(&block[..4]) ^ cl;
            let mut r = be32(&block[4..]) ^ cr;
            // Sixteen rounds without the swaps: `l` and `r` take turns. Each
            // type-1 round writes the half the next (type-2) round reads
            // with that round's masking key already XORed in; the plain
            // half is recovered off the chain for the round after.
            //
            // Rounds i, i+1, i+2 (types 1, 2, 3) on the halves `a` and `b`:
            // the type-1 round writes `a` with Km[i+1] XORed in (`ak`).
            macro_rules! three_rounds {
                ($a:ident, $b:ident, $i:literal) => {
                    let ak = t1(opaque($a ^ km[$i + 1]), $b, km[$i], kr[$i]);
                    $b = t2($b, ak, kr[$i + 1]);
                    $a = t3(opaque(ak ^ km[$i + 1]), $b, km[$i + 2], kr16[$i + 2]);
                };
            }
            three_rounds!(l, r, 0);
            three_rounds!(r, l, 3);
            three_rounds!(l, r, 6);
            three_rounds!(r, l, 9);
            three_rounds!(l, r, 12);
            r = t1(r, l, km[15], kr[15]);
            // After an even number of rounds `l` is L16 and `r` is R16; the
            // ciphertext is (R16, L16).
            (cl, cr) = (r, l);
            block[..4].copy_from_slice(&cl.to_be_bytes());
            block[4..].copy_from_slice(&cr.to_be_bytes());
        }
        self.iv = (cl, cr);
        true
    }

    /// CBC-decrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 8-byte blocks.
    pub fn decrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(8) {
            return false;
        }
        for block in buf.chunks_exact_mut(8) {
            let c = (be32(&block[..4]), be32(&block[4..]));
            let (p0, p1) = self.rounds(c.0, c.1, (0..16).rev());
            block[..4].copy_from_slice(&(p0 ^ self.iv.0).to_be_bytes());
            block[4..].copy_from_slice(&(p1 ^ self.iv.1).to_be_bytes());
            self.iv = c;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cbc_cases, refuses_bad_inputs_both_ways, same_as_the_crate};
    use cipher::{Array, BlockCipherEncrypt, KeyInit};
    use proptest::prelude::*;

    const KEY: [u8; 16] = [
        0x01, 0x23, 0x45, 0x67, 0x12, 0x34, 0x56, 0x78, 0x23, 0x45, 0x67, 0x89, 0x34, 0x56, 0x78,
        0x9a,
    ];

    fn ecb(key: &[u8], block: &mut [u8]) {
        let mut c = Cast5Cbc::new(key, &[0; 8]).unwrap_or_else(|| panic!("key"));
        assert!(c.encrypt_cbc(block));
    }

    #[test]
    fn the_sboxes_are_appendix_a() {
        // First and last words of S1 and S8 as the appendix prints them.
        assert_eq!(S[0][0], 0x30fb_40d4);
        assert_eq!(S[0][255], 0x5c81_65bf);
        assert_eq!(S[4][0], 0x7ec9_0c04);
        assert_eq!(S[7][0], 0xe216_300d);
        assert_eq!(S[7][255], 0xea8b_f59e);
    }

    #[test]
    fn rfc2144_b1_128_bit_key() {
        let mut b = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];
        ecb(&KEY, &mut b);
        assert_eq!(crate::bytes::hex(&b), "238b4fe5847e44b2");
        let mut d = Cast5Cbc::new(&KEY, &[0; 8]).unwrap_or_else(|| panic!("key"));
        assert!(d.decrypt_cbc(&mut b));
        assert_eq!(crate::bytes::hex(&b), "0123456789abcdef");
    }

    #[test]
    fn rfc2144_b2_maintenance_test() {
        // B.2 with a and b both starting as the B.1 key; the RFC runs it a
        // million times (a, b = EEA9D0A2..., B2C95EB0...). Debug builds run
        // 1000 iterations and compare with the `cast5` crate run the same
        // way; release builds (`cargo test --release`) run the RFC's full
        // million against its published result.
        let iterations = if cfg!(debug_assertions) {
            1000
        } else {
            1_000_000
        };
        let (mut a, mut b) = (KEY, KEY);
        for _ in 0..iterations {
            ecb(&b, &mut a[..8]);
            ecb(&b, &mut a[8..]);
            ecb(&a, &mut b[..8]);
            ecb(&a, &mut b[8..]);
        }
        if iterations == 1_000_000 {
            assert_eq!(crate::bytes::hex(&a), "eea9d0a249fd3ba6b3436fb89d6dca92");
            assert_eq!(crate::bytes::hex(&b), "b2c95eb00c31ad7180ac05b8e83d696e");
        } else {
            let (mut ra, mut rb) = (KEY, KEY);
            let enc = |k: &[u8; 16], blk: &mut [u8]| {
                let c = cast5::Cast5::new_from_slice(k).unwrap();
                c.encrypt_blocks(Array::<u8, cipher::consts::U8>::slice_as_chunks_mut(blk).0);
            };
            for _ in 0..iterations {
                enc(&rb, &mut ra[..8]);
                enc(&rb, &mut ra[8..]);
                enc(&ra, &mut rb[..8]);
                enc(&ra, &mut rb[8..]);
            }
            assert_eq!((a, b), (ra, rb));
        }
    }

    #[test]
    fn bad_inputs() {
        refuses_bad_inputs_both_ways(Cast5Cbc::new, &KEY, 8, &[4, 10, 17]);
    }

    proptest! {
        #[test]
        fn same_as_the_cast5_crate(case in cbc_cases::<8>(Just(16), 300)) {
            let c = cast5::Cast5::new_from_slice(&case.key).unwrap();
            same_as_the_crate(&c, Cast5Cbc::new, &case)?;
        }
    }
}
