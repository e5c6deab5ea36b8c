//! DES-CBC (FIPS 46-3, FIPS 81) written for this project because the
//! RustCrypto `des` crate under a CBC loop runs at about half of `openssl
//! speed -evp des-cbc` (docs/performance.md): the crate computes the
//! S-boxes and permutations bit by bit, OpenSSL looks them up in tables.
//!
//! CBC encryption is one dependency chain, so its speed is the latency of
//! sixteen rounds per block. What this kernel does about it:
//! - the classic "combined S-box and P" tables: `SP[i][v]` is P applied to
//!   S-box i's output for the six input bits v, so a round is eight loads
//!   and an XOR tree (kept balanced with `opaque`, as in `camellia`), with
//!   no P on the chain. The tables are computed at compile time from the
//!   S-boxes and P as FIPS 46-3 prints them;
//! - E is not computed: with each half kept rotated left by 5 bits, the
//!   six-bit groups of E for S-boxes 1, 7, 5, 3 sit in the low six bits of
//!   the half's four bytes, and for S-boxes 2, 8, 6, 4 in those of the half
//!   rotated by four more; the round key is stored in that layout, and the
//!   tables are indexed by the whole byte (the two spare bits ignored), so
//!   a round is one rotation, two key XORs, eight byte extractions and
//!   loads, and the XOR tree. The tables' outputs are rotated the same way,
//!   so the halves never leave that form;
//! - IP and FP are off the chain: IP(P ^ C) = IP(P) ^ IP(C), and IP(C) is
//!   the previous block's pre-output, so the chaining value is carried
//!   inside IP and only each plaintext block (before) and ciphertext block
//!   (after) is permuted, with byte-indexed tables built from the FIPS
//!   table.
//!
//! Decryption (for the tests) runs the same rounds with the keys reversed.
//! The tests check the FIPS 81 CBC example and the classic textbook vector
//! and compare with the `des` crate on random keys and inputs.

use crate::opaque::opaque_u32 as opaque;

/// IP (FIPS 46-3): output bit i (1-based, most significant first) is input
/// bit `IP[i - 1]`.
#[rustfmt::skip]
const IP: [u8; 64] = [
    58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4,
    62, 54, 46, 38, 30, 22, 14, 6, 64, 56, 48, 40, 32, 24, 16, 8,
    57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3,
    61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7,
];

/// P, the permutation after the S-boxes.
#[rustfmt::skip]
const P: [u8; 32] = [
    16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
    2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25,
];

/// PC-1: the 56 key bits (parity bits dropped) as C then D.
#[rustfmt::skip]
const PC1: [u8; 56] = [
    57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18,
    10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
    63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22,
    14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4,
];

/// PC-2: the 48 bits of a round key from C and D.
#[rustfmt::skip]
const PC2: [u8; 48] = [
    14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10,
    23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
    41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48,
    44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32,
];

/// The left shifts of C and D before each round.
const SHIFTS: [u32; 16] = [1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1];

/// S1..S8 as FIPS 46-3 prints them: row (outer bits) by column.
#[rustfmt::skip]
const S: [[u8; 64]; 8] = [
    [14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7,
     0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8,
     4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0,
     15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13],
    [15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10,
     3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5,
     0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15,
     13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9],
    [10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8,
     13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1,
     13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7,
     1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12],
    [7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15,
     13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9,
     10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4,
     3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14],
    [2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9,
     14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6,
     4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14,
     11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3],
    [12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11,
     10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8,
     9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6,
     4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13],
    [4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1,
     13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6,
     1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2,
     6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12],
    [13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7,
     1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2,
     7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8,
     2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11],
];

/// How far each half is kept rotated left: then E's group for S-box i
/// starts at bit (32 - 4i) mod 32 (see the module doc).
const ROT: u32 = 5;

/// Which S-box each table serves: the four bytes of the half XOR the even
/// key, then the four bytes of the half rotated by 4 XOR the odd key.
const TABLE_SBOX: [usize; 8] = [0, 6, 4, 2, 1, 7, 5, 3];

/// S-box `i` of the six bits `v` (b1 the most significant).
const fn sbox(i: usize, v: usize) -> u32 {
    let row = ((v >> 4) & 2) | (v & 1);
    let col = (v >> 1) & 15;
    S[i][row * 16 + col] as u32
}

/// P of a 32-bit word (bit 1 the most significant).
const fn p_perm(x: u32) -> u32 {
    let mut out = 0u32;
    let mut j = 0;
    while j < 32 {
        let bit = (x >> (32 - P[j] as u32)) & 1;
        out |= bit << (31 - j);
        j += 1;
    }
    out
}

/// The combined S-box-and-P tables in the kernel's layout: table t serves
/// S-box `TABLE_SBOX[t]`, indexed by a whole byte whose low six bits are
/// the S-box input; the output is rotated left by `ROT`.
const fn sp_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut k = 0;
    while k < 8 {
        let i = TABLE_SBOX[k];
        let mut v = 0;
        while v < 256 {
            let s = sbox(i, v & 63) << (28 - 4 * i);
            t[k][v] = p_perm(s).rotate_left(ROT);
            v += 1;
        }
        k += 1;
    }
    t
}

static SP: [[u32; 256]; 8] = sp_tables();

/// A 64-bit permutation (`table[j]` names the input bit of output bit j+1,
/// 1-based, most significant first) as eight byte-indexed tables whose
/// entries are ORed.
const fn perm_tables(table: &[u8; 64]) -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut j = 0;
    while j < 64 {
        // Input bit `table[j]` lives in byte (table[j] - 1) / 8 of the
        // big-endian block, at bit 7 - (table[j] - 1) % 8 of that byte.
        let src = table[j] as usize - 1;
        let (byte, bit) = (src / 8, 7 - src % 8);
        let mut v = 0;
        while v < 256 {
            if (v >> bit) & 1 == 1 {
                t[byte][v] |= 1u64 << (63 - j);
            }
            v += 1;
        }
        j += 1;
    }
    t
}

/// FP = IP^-1.
const fn inverse(table: &[u8; 64]) -> [u8; 64] {
    let mut inv = [0u8; 64];
    let mut j = 0;
    while j < 64 {
        inv[table[j] as usize - 1] = j as u8 + 1;
        j += 1;
    }
    inv
}

static IP_T: [[u64; 256]; 8] = perm_tables(&IP);
static FP_T: [[u64; 256]; 8] = perm_tables(&inverse(&IP));

#[inline(always)]
fn permute(t: &[[u64; 256]; 8], x: u64) -> u64 {
    let b = x.to_be_bytes();
    (t[0][b[0] as usize] | t[1][b[1] as usize])
        | (t[2][b[2] as usize] | t[3][b[3] as usize])
        | ((t[4][b[4] as usize] | t[5][b[5] as usize])
            | (t[6][b[6] as usize] | t[7][b[7] as usize]))
}

/// A bit selection: output bit j+1 of `out_bits` is input bit `table[j]`
/// of `in_bits` (1-based, most significant first).
fn select(x: u64, in_bits: u32, table: &[u8]) -> u64 {
    table.iter().fold(0u64, |acc, &src| {
        (acc << 1) | ((x >> (in_bits - u32::from(src))) & 1)
    })
}

/// `out ^ f(r)` for a half `r` in the rotated form and a round key as
/// (even, odd) words: the loads whose index needs no shift (bytes 0 of
/// both words) are combined with `out` while the others are on their way.
#[inline(always)]
fn round(out: u32, r: u32, k: (u32, u32)) -> u32 {
    let u = r ^ k.0;
    let t = r.rotate_left(4) ^ k.1;
    let sp = &SP;
    let t0 = sp[0][u as u8 as usize];
    let t1 = sp[1][(u >> 8) as u8 as usize];
    let t2 = sp[2][(u >> 16) as u8 as usize];
    let t3 = sp[3][(u >> 24) as usize];
    let t4 = sp[4][t as u8 as usize];
    let t5 = sp[5][(t >> 8) as u8 as usize];
    let t6 = sp[6][(t >> 16) as u8 as usize];
    let t7 = sp[7][(t >> 24) as usize];
    let early = opaque(opaque(out ^ t0) ^ opaque(t1 ^ t3));
    let late = opaque(opaque(t4 ^ t5) ^ opaque(t6 ^ t7));
    opaque(early ^ t2) ^ late
}

/// Sixteen rounds on (l, r) in the rotated form; returns (R16, L16), the
/// pre-output.
#[inline(always)]
fn rounds(keys: &[(u32, u32); 16], mut l: u32, mut r: u32) -> (u32, u32) {
    for pair in keys.chunks_exact(2) {
        l = round(l, r, pair[0]);
        r = round(r, l, pair[1]);
    }
    (r, l)
}

/// A DES key's round keys in the kernel's layout and the CBC chaining
/// value.
#[derive(Clone)]
pub struct DesCbc {
    enc: [(u32, u32); 16],
    dec: [(u32, u32); 16],
    /// The previous ciphertext block (or the IV), big-endian.
    iv: u64,
}

impl DesCbc {
    /// An 8-byte key (parity bits ignored) and an 8-byte IV.
    pub fn new(key: &[u8], iv: &[u8]) -> Option<DesCbc> {
        let key: [u8; 8] = key.try_into().ok()?;
        let iv: [u8; 8] = iv.try_into().ok()?;
        let cd = select(u64::from_be_bytes(key), 64, &PC1);
        let (mut c, mut d) = ((cd >> 28) as u32, (cd & 0xfff_ffff) as u32);
        let mut enc = [(0u32, 0u32); 16];
        for (k, &s) in enc.iter_mut().zip(SHIFTS.iter()) {
            c = ((c << s) | (c >> (28 - s))) & 0xfff_ffff;
            d = ((d << s) | (d >> (28 - s))) & 0xfff_ffff;
            let k48 = select((u64::from(c) << 28) | u64::from(d), 56, &PC2);
            // Six-bit group i (S-box i + 1) of the 48-bit key.
            let g = |i: u32| ((k48 >> (42 - 6 * i)) & 63) as u32;
            // The layout `round` reads (see the module doc and
            // `TABLE_SBOX`).
            *k = (
                g(0) | (g(6) << 8) | (g(4) << 16) | (g(2) << 24),
                g(1) | (g(7) << 8) | (g(5) << 16) | (g(3) << 24),
            );
        }
        let mut dec = enc;
        dec.reverse();
        Some(DesCbc {
            enc,
            dec,
            iv: u64::from_be_bytes(iv),
        })
    }

    /// CBC-encrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 8-byte blocks.
    pub fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(8) {
            return false;
        }
        let keys = &self.enc;
        // The chaining value inside IP, in the rotated form.
        let c = permute(&IP_T, self.iv);
        let (mut cl, mut cr) = (
            ((c >> 32) as u32).rotate_left(ROT),
            (c as u32).rotate_left(ROT),
        );
        for block in buf.chunks_exact_mut(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(block);
            let p = permute(&IP_T, u64::from_be_bytes(b));
            let l = ((p >> 32) as u32).rotate_left(ROT) ^ cl;
            let r = (p as u32).rotate_left(ROT) ^ cr;
            (cl, cr) = rounds(keys, l, r);
            let pre = (u64::from(cl.rotate_right(ROT)) << 32) | u64::from(cr.rotate_right(ROT));
            block.copy_from_slice(&permute(&FP_T, pre).to_be_bytes());
        }
        let pre = (u64::from(cl.rotate_right(ROT)) << 32) | u64::from(cr.rotate_right(ROT));
        self.iv = permute(&FP_T, pre);
        true
    }

    /// One block through the sixteen rounds with `keys`, IP and FP.
    fn crypt_block(keys: &[(u32, u32); 16], x: u64) -> u64 {
        let p = permute(&IP_T, x);
        let (l, r) = rounds(
            keys,
            ((p >> 32) as u32).rotate_left(ROT),
            (p as u32).rotate_left(ROT),
        );
        let pre = (u64::from(l.rotate_right(ROT)) << 32) | u64::from(r.rotate_right(ROT));
        permute(&FP_T, pre)
    }

    /// CBC-decrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 8-byte blocks.
    pub fn decrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(8) {
            return false;
        }
        for block in buf.chunks_exact_mut(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(block);
            let c = u64::from_be_bytes(b);
            block.copy_from_slice(&(DesCbc::crypt_block(&self.dec, c) ^ self.iv).to_be_bytes());
            self.iv = c;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::hex;
    use crate::test_support::{cbc_cases, refuses_bad_inputs_both_ways, same_as_the_crate, unhex};
    use cipher::KeyInit;
    use proptest::prelude::*;

    #[test]
    fn sbox_rows_are_permutations() {
        for s in S {
            for row in s.chunks_exact(16) {
                let mut seen = [false; 16];
                for &v in row {
                    seen[v as usize] = true;
                }
                assert!(seen.iter().all(|&x| x));
            }
        }
    }

    #[test]
    fn known_answers() {
        // The textbook single block (ECB = CBC with a zero IV).
        let mut c = DesCbc::new(&unhex("133457799bbcdff1"), &[0; 8]).unwrap();
        let mut b = unhex("0123456789abcdef");
        assert!(c.encrypt_cbc(&mut b));
        assert_eq!(hex(&b), "85e813540f0ab405");
        // FIPS 81, appendix C (CBC), "Now is the time for all ".
        let key = unhex("0123456789abcdef");
        let iv = unhex("1234567890abcdef");
        let plain = b"Now is the time for all ".to_vec();
        let mut buf = plain.clone();
        let mut c = DesCbc::new(&key, &iv).unwrap();
        let (x, y) = buf.split_at_mut(8);
        assert!(c.encrypt_cbc(x));
        assert!(c.encrypt_cbc(y));
        assert_eq!(
            hex(&buf),
            "e5c7cdde872bf27c43e934008c389c0f683788499a7c05f6"
        );
        let mut d = DesCbc::new(&key, &iv).unwrap();
        assert!(d.decrypt_cbc(&mut buf));
        assert_eq!(buf, plain);
    }

    #[test]
    fn bad_inputs() {
        refuses_bad_inputs_both_ways(DesCbc::new, &[0; 8], 8, &[7, 9, 16]);
    }

    proptest! {
        #[test]
        fn same_as_the_des_crate(case in cbc_cases::<8>(Just(8), 300)) {
            let c = des_crate::Des::new_from_slice(&case.key).unwrap();
            same_as_the_crate(&c, DesCbc::new, &case)?;
        }
    }
}
