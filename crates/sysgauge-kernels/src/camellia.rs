//! Camellia-CBC (128-, 192- and 256-bit keys) written for this project
//! from RFC 3713 ("A Description of the Camellia Encryption Algorithm").
//!
//! Why by hand: the RustCrypto `camellia` crate under the CBC loop in
//! `crypto/symmetric.rs` falls well short of `openssl speed -evp
//! camellia-128-cbc` and `-256-cbc` (docs/performance.md); OpenSSL runs
//! table-driven assembly. CBC encryption is one dependency chain, so its
//! speed is the latency of the F-functions and FL layers per block:
//! eighteen and two for a 128-bit key, twenty-four and three (after rounds
//! 6, 12 and 18) for the longer keys, which share one loop with a
//! compile-time count of six-round groups. What this kernel does about it:
//! - the S-boxes and the P-function are folded into eight 256-entry `u64`
//!   tables (16 KiB, L1-resident): `SP[i][v]` is P applied to a word whose
//!   only non-zero byte is `s_i(v)` at position `i`. Since P is linear, F is
//!   then eight loads and an XOR tree, with no byte reassembly and no P
//!   arithmetic on the chain (the tree is kept balanced with `opaque`:
//!   LLVM would make it one serial chain of eight XORs). The tables are
//!   computed at compile time from SBOX1 (RFC 3713 2.4.4; SBOX2-4 are its
//!   rotations) and the P-function (2.4.1), so only SBOX1 is entered as
//!   data;
//! - the round keys are folded into the halves ahead of time: each half is
//!   carried XORed with the subkey of its next F, and the difference of two
//!   consecutive subkeys of the same half is XORed in while the other half's
//!   F is still loading, so the chain per round is F's loads and XORs only;
//!   the whitening keys and the CBC chaining XOR fold the same way;
//! - the whole buffer is encrypted in one loop with the chaining value in
//!   two registers.
//!
//! Decryption (for the tests and for completeness) is the plain form of the
//! spec with the subkeys reversed. The `camellia` crate stays as the
//! independent implementation: the round trip in `crypto/symmetric.rs` decrypts with
//! it, and the tests compare this kernel with it on random inputs.

// LLVM flattens an XOR tree into one serial chain of XORs with memory
// operands, which puts all eight S-box loads of a round one after another on
// the critical path (docs/performance.md has the cost); passing the partial results
// through `opaque` keeps the tree as written.
use crate::opaque::opaque_u64 as opaque;

use crate::be64;

/// SBOX1 of RFC 3713 section 2.4.4, in the RFC's layout (row = high nibble).
#[rustfmt::skip]
const SBOX1: [u8; 256] = [
    112, 130,  44, 236, 179,  39, 192, 229, 228, 133,  87,  53, 234,  12, 174,  65, // 00
     35, 239, 107, 147,  69,  25, 165,  33, 237,  14,  79,  78,  29, 101, 146, 189, // 10
    134, 184, 175, 143, 124, 235,  31, 206,  62,  48, 220,  95,  94, 197,  11,  26, // 20
    166, 225,  57, 202, 213,  71,  93,  61, 217,   1,  90, 214,  81,  86, 108,  77, // 30
    139,  13, 154, 102, 251, 204, 176,  45, 116,  18,  43,  32, 240, 177, 132, 153, // 40
    223,  76, 203, 194,  52, 126, 118,   5, 109, 183, 169,  49, 209,  23,   4, 215, // 50
     20,  88,  58,  97, 222,  27,  17,  28,  50,  15, 156,  22,  83,  24, 242,  34, // 60
    254,  68, 207, 178, 195, 181, 122, 145,  36,   8, 232, 168,  96, 252, 105,  80, // 70
    170, 208, 160, 125, 161, 137,  98, 151,  84,  91,  30, 149, 224, 255, 100, 210, // 80
     16, 196,   0,  72, 163, 247, 117, 219, 138,   3, 230, 218,   9,  63, 221, 148, // 90
    135,  92, 131,   2, 205,  74, 144,  51, 115, 103, 246, 243, 157, 127, 191, 226, // a0
     82, 155, 216,  38, 200,  55, 198,  59, 129, 150, 111,  75,  19, 190,  99,  46, // b0
    233, 121, 167, 140, 159, 110, 188, 142,  41, 245, 249, 182,  47, 253, 180,  89, // c0
    120, 152,   6, 106, 231,  70, 113, 186, 212,  37, 171,  66, 136, 162, 141, 250, // d0
    114,   7, 185,  85, 248, 238, 172,  10,  54,  73,  42, 104,  60,  56, 241, 164, // e0
     64,  40, 211, 123, 187, 201,  67, 193,  21, 227, 173, 244, 119, 199, 128, 158, // f0
];

/// The key-schedule constants Sigma1..Sigma4 (RFC 3713 section 2.2), which
/// make KA from KL and KR.
const SIGMA: [u64; 4] = [
    0xa09e_667f_3bcc_908b,
    0xb67a_e858_4caa_73b2,
    0xc6ef_372f_e94f_82be,
    0x54ff_53a5_f1d3_6f1c,
];

/// SBOX1..SBOX4 (RFC 3713 2.4.4): SBOX2 and SBOX3 rotate SBOX1's output
/// left by 1 and 7, SBOX4 rotates the input left by 1.
const fn sbox(n: usize, x: u8) -> u8 {
    match n {
        1 => SBOX1[x as usize],
        2 => SBOX1[x as usize].rotate_left(1),
        3 => SBOX1[x as usize].rotate_left(7),
        _ => SBOX1[x.rotate_left(1) as usize],
    }
}

/// Which S-box F applies to byte t1..t8 (RFC 3713 2.4.1).
const F_SBOX: [usize; 8] = [1, 2, 3, 4, 2, 3, 4, 1];

/// The P-function of F (RFC 3713 2.4.1): bytes t1..t8 (t1 most significant)
/// to y1..y8.
const fn p_function(t: u64) -> u64 {
    let b = t.to_be_bytes();
    let (t1, t2, t3, t4, t5, t6, t7, t8) = (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
    u64::from_be_bytes([
        t1 ^ t3 ^ t4 ^ t6 ^ t7 ^ t8,
        t1 ^ t2 ^ t4 ^ t5 ^ t7 ^ t8,
        t1 ^ t2 ^ t3 ^ t5 ^ t6 ^ t8,
        t2 ^ t3 ^ t4 ^ t5 ^ t6 ^ t7,
        t1 ^ t2 ^ t6 ^ t7 ^ t8,
        t2 ^ t3 ^ t5 ^ t7 ^ t8,
        t3 ^ t4 ^ t5 ^ t6 ^ t8,
        t1 ^ t4 ^ t5 ^ t6 ^ t7,
    ])
}

/// `SP[i][v]` = P(the word whose byte i+1 is s(v) and every other byte 0),
/// so that F(x) = P(S(x)) = XOR over i of `SP[i][byte i+1 of x]`.
const fn sp_tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 8 {
        let mut v = 0;
        while v < 256 {
            let s = sbox(F_SBOX[i], v as u8) as u64;
            t[i][v] = p_function(s << (56 - 8 * i));
            v += 1;
        }
        i += 1;
    }
    t
}

static SP: [[u64; 256]; 8] = sp_tables();

/// F without its key (the key is XORed into the input by the caller).
#[inline(always)]
fn f(x: u64) -> u64 {
    round(0, x)
}

/// `out ^ F(x)`, one round of the chain, as a balanced XOR tree over the
/// eight loads: the loads whose index is ready first (the top byte, which
/// needs only a shift, and the two low bytes, which need only a byte move)
/// are combined with `out` while the others are still on their way.
#[inline(always)]
fn round(out: u64, x: u64) -> u64 {
    let sp = &SP;
    let t0 = sp[0][(x >> 56) as usize];
    let t1 = sp[1][(x >> 48) as u8 as usize];
    let t2 = sp[2][(x >> 40) as u8 as usize];
    let t3 = sp[3][(x >> 32) as u8 as usize];
    let t4 = sp[4][(x >> 24) as u8 as usize];
    let t5 = sp[5][(x >> 16) as u8 as usize];
    let t6 = sp[6][(x >> 8) as u8 as usize];
    let t7 = sp[7][x as u8 as usize];
    let early = opaque(opaque(out ^ t0) ^ opaque(t6 ^ t7));
    let late = opaque(opaque(t1 ^ t2) ^ opaque(t3 ^ t4));
    opaque(early ^ t5) ^ late
}

/// FL (RFC 3713 2.4.2).
#[inline(always)]
fn fl(x: u64, ke: u64) -> u64 {
    let (mut x1, mut x2) = ((x >> 32) as u32, x as u32);
    let (k1, k2) = ((ke >> 32) as u32, ke as u32);
    x2 ^= (x1 & k1).rotate_left(1);
    x1 ^= x2 | k2;
    (u64::from(x1) << 32) | u64::from(x2)
}

/// FL^-1 (RFC 3713 2.4.3).
#[inline(always)]
fn fl_inv(y: u64, ke: u64) -> u64 {
    let (mut y1, mut y2) = ((y >> 32) as u32, y as u32);
    let (k1, k2) = ((ke >> 32) as u32, ke as u32);
    y1 ^= y2 | k2;
    y2 ^= (y1 & k1).rotate_left(1);
    (u64::from(y1) << 32) | u64::from(y2)
}

/// Camellia subkeys (any key size) and the CBC chaining value.
#[derive(Clone)]
pub struct CamelliaCbc {
    /// kw1..kw4, k1..k24, ke1..ke6 as RFC 3713 2.2 names them (a 128-bit
    /// key uses k1..k18 and ke1..ke4).
    kw: [u64; 4],
    k: [u64; 24],
    ke: [u64; 6],
    /// Round r's key delta for the folded encryption (see `encrypt_cbc`).
    delta: [u64; 24],
    /// 18 rounds for a 128-bit key, 24 for a 192- or 256-bit one.
    rounds: usize,
    /// The previous ciphertext block (or the IV) as two big-endian halves.
    iv: (u64, u64),
}

/// Sigma5 and Sigma6 (RFC 3713 2.2), which only the 192- and 256-bit key
/// schedules use (for KB).
const SIGMA_KB: [u64; 2] = [0x10e5_27fa_de68_2d1d, 0xb056_88c2_b3e6_c1fd];

impl CamelliaCbc {
    /// Key schedule for a 16-, 24- or 32-byte key (RFC 3713 2.2 and 2.3);
    /// 16-byte IV.
    pub fn new(key: &[u8], iv: &[u8]) -> Option<CamelliaCbc> {
        let iv: [u8; 16] = iv.try_into().ok()?;
        let mut wide = [0u8; 32];
        let (kl, kr) = match key.len() {
            16 | 32 => {
                wide[..key.len()].copy_from_slice(key);
                (
                    u128::from_be_bytes(wide[..16].try_into().ok()?),
                    u128::from_be_bytes(wide[16..].try_into().ok()?),
                )
            }
            24 => {
                wide[..24].copy_from_slice(key);
                let right = be64(&wide[16..24]);
                (
                    u128::from_be_bytes(wide[..16].try_into().ok()?),
                    (u128::from(right) << 64) | u128::from(!right),
                )
            }
            _ => return None,
        };
        let mix = kl ^ kr;
        let (mut d1, mut d2) = ((mix >> 64) as u64, mix as u64);
        d2 ^= f(d1 ^ SIGMA[0]);
        d1 ^= f(d2 ^ SIGMA[1]);
        d1 ^= (kl >> 64) as u64;
        d2 ^= kl as u64;
        d2 ^= f(d1 ^ SIGMA[2]);
        d1 ^= f(d2 ^ SIGMA[3]);
        let ka = (u128::from(d1) << 64) | u128::from(d2);
        let hi = |x: u128, n: u32| (x.rotate_left(n) >> 64) as u64;
        let lo = |x: u128, n: u32| x.rotate_left(n) as u64;
        let mut k = [0u64; 24];
        let mut ke = [0u64; 6];
        let (kw, rounds) = if key.len() == 16 {
            k[..18].copy_from_slice(&[
                hi(ka, 0),
                lo(ka, 0),
                hi(kl, 15),
                lo(kl, 15),
                hi(ka, 15),
                lo(ka, 15),
                hi(kl, 45),
                lo(kl, 45),
                hi(ka, 45),
                lo(kl, 60),
                hi(ka, 60),
                lo(ka, 60),
                hi(kl, 94),
                lo(kl, 94),
                hi(ka, 94),
                lo(ka, 94),
                hi(kl, 111),
                lo(kl, 111),
            ]);
            ke[..4].copy_from_slice(&[hi(ka, 30), lo(ka, 30), hi(kl, 77), lo(kl, 77)]);
            ([hi(kl, 0), lo(kl, 0), hi(ka, 111), lo(ka, 111)], 18)
        } else {
            let mix = ka ^ kr;
            let (mut d1, mut d2) = ((mix >> 64) as u64, mix as u64);
            d2 ^= f(d1 ^ SIGMA_KB[0]);
            d1 ^= f(d2 ^ SIGMA_KB[1]);
            let kb = (u128::from(d1) << 64) | u128::from(d2);
            k = [
                hi(kb, 0),
                lo(kb, 0),
                hi(kr, 15),
                lo(kr, 15),
                hi(ka, 15),
                lo(ka, 15),
                hi(kb, 30),
                lo(kb, 30),
                hi(kl, 45),
                lo(kl, 45),
                hi(ka, 45),
                lo(ka, 45),
                hi(kr, 60),
                lo(kr, 60),
                hi(kb, 60),
                lo(kb, 60),
                hi(kl, 77),
                lo(kl, 77),
                hi(kr, 94),
                lo(kr, 94),
                hi(ka, 94),
                lo(ka, 94),
                hi(kl, 111),
                lo(kl, 111),
            ];
            ke = [
                hi(kr, 30),
                lo(kr, 30),
                hi(kl, 60),
                lo(kl, 60),
                hi(ka, 77),
                lo(ka, 77),
            ];
            ([hi(kl, 0), lo(kl, 0), hi(kb, 111), lo(kb, 111)], 24)
        };
        // Each half is carried XORed with the subkey of its next F. After
        // round r (1-based) the half it wrote moves from k(r-1) to k(r+1);
        // before an FL layer (every sixth round) and after the last round
        // it moves to the raw value (or to kw4, the output whitening);
        // after an FL layer the fresh key is XORed in by `encrypt_cbc`
        // itself.
        let mut delta = [0u64; 24];
        for (r, d) in delta.iter_mut().enumerate().take(rounds) {
            *d = match r {
                _ if r == rounds - 1 => k[r - 1] ^ kw[3],
                _ if r % 6 == 0 => 0,
                _ if r % 6 == 5 => k[r - 1],
                _ => k[r - 1] ^ k[r + 1],
            };
        }
        Some(CamelliaCbc {
            kw,
            k,
            ke,
            delta,
            rounds,
            iv: (be64(&iv[..8]), be64(&iv[8..])),
        })
    }

    /// CBC-encrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 16-byte blocks.
    pub fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(16) {
            return false;
        }
        if self.rounds == 18 {
            self.encrypt_blocks::<3>(buf);
        } else {
            self.encrypt_blocks::<4>(buf);
        }
        true
    }

    /// The CBC loop for `GROUPS` groups of six rounds (3 for a 128-bit key,
    /// 4 for the longer ones), with an FL layer between groups.
    #[inline(always)]
    fn encrypt_blocks<const GROUPS: usize>(&mut self, buf: &mut [u8]) {
        let (k, kw, ke, dk) = (&self.k, &self.kw, &self.ke, &self.delta);
        let last = 6 * GROUPS - 1;
        // `a` is D1 and `b` is D2 of the spec, each XORed with the subkey of
        // its next F. Between blocks `b` is the ciphertext's first half
        // XORed with k(last) ^ kw3 and `a` its second half.
        let out_fix = k[last] ^ kw[2];
        let in_a = out_fix ^ kw[0] ^ k[0];
        let in_b = kw[1] ^ k[1];
        let (mut b, mut a) = (self.iv.0 ^ out_fix, self.iv.1);
        for block in buf.chunks_exact_mut(16) {
            let p1 = be64(&block[..8]);
            let p2 = be64(&block[8..]);
            (a, b) = (b ^ (p1 ^ in_a), a ^ (p2 ^ in_b));
            // Rounds i+1 .. i+6 of the spec; the first takes its subkey
            // already folded into `b`.
            macro_rules! six_rounds {
                ($i:literal) => {
                    b = round(b, a);
                    a = round(a ^ dk[$i + 1], b);
                    b = round(b ^ dk[$i + 2], a);
                    a = round(a ^ dk[$i + 3], b);
                    b = round(b ^ dk[$i + 4], a);
                    a = round(a ^ dk[$i + 5], b);
                };
            }
            // The FL layer after round 6(j+1).
            macro_rules! fl_layer {
                ($j:literal) => {
                    a = fl(a, ke[2 * $j]) ^ k[6 * $j + 6];
                    b = fl_inv(b ^ k[6 * $j + 5], ke[2 * $j + 1]) ^ k[6 * $j + 7];
                };
            }
            six_rounds!(0);
            fl_layer!(0);
            six_rounds!(6);
            fl_layer!(1);
            six_rounds!(12);
            if GROUPS == 4 {
                fl_layer!(2);
                six_rounds!(18);
            }
            block[..8].copy_from_slice(&(b ^ out_fix).to_be_bytes());
            block[8..].copy_from_slice(&a.to_be_bytes());
        }
        self.iv = (b ^ out_fix, a);
    }

    /// One block decrypted as RFC 3713 2.3.2 gives it (subkeys reversed).
    fn decrypt_block(&self, c1: u64, c2: u64) -> (u64, u64) {
        let (k, kw, ke) = (&self.k, &self.kw, &self.ke);
        let mut d1 = c1 ^ kw[2];
        let mut d2 = c2 ^ kw[3];
        for (i, r) in (0..self.rounds).rev().enumerate() {
            if i > 0 && i % 6 == 0 {
                // The FL layer that followed round r+1 in encryption.
                let j = (r + 1) / 6 - 1;
                d1 = fl(d1, ke[2 * j + 1]);
                d2 = fl_inv(d2, ke[2 * j]);
            }
            if i % 2 == 0 {
                d2 ^= f(d1 ^ k[r]);
            } else {
                d1 ^= f(d2 ^ k[r]);
            }
        }
        (d2 ^ kw[0], d1 ^ kw[1])
    }

    /// CBC-decrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 16-byte blocks.
    pub fn decrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(16) {
            return false;
        }
        for block in buf.chunks_exact_mut(16) {
            let c = (be64(&block[..8]), be64(&block[8..]));
            let (p1, p2) = self.decrypt_block(c.0, c.1);
            block[..8].copy_from_slice(&(p1 ^ self.iv.0).to_be_bytes());
            block[8..].copy_from_slice(&(p2 ^ self.iv.1).to_be_bytes());
            self.iv = c;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cbc_cases, refuses_bad_inputs_both_ways, same_as_the_crate, unhex};
    use camellia::{Camellia128, Camellia192, Camellia256};
    use cipher::KeyInit;
    use proptest::prelude::*;

    /// F as RFC 3713 2.4.1 writes it: S-boxes byte by byte, then P.
    fn f_spec(x: u64) -> u64 {
        let t = x.to_be_bytes();
        let mut s = [0u8; 8];
        for i in 0..8 {
            s[i] = sbox(F_SBOX[i], t[i]);
        }
        p_function(u64::from_be_bytes(s))
    }

    #[test]
    fn rfc3713_appendix_a() {
        let plain = unhex("0123456789abcdeffedcba9876543210");
        for (key, expect) in [
            (
                "0123456789abcdeffedcba9876543210",
                "67673138549669730857065648eabe43",
            ),
            (
                "0123456789abcdeffedcba98765432100011223344556677",
                "b4993401b3e996f84ee5cee7d79b09b9",
            ),
            (
                "0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff",
                "9acc237dff16d76c20ef7c919e3a7509",
            ),
        ] {
            let key = unhex(key);
            let mut c = CamelliaCbc::new(&key, &[0; 16]).unwrap_or_else(|| panic!("key"));
            let mut b = plain.clone();
            assert!(c.encrypt_cbc(&mut b));
            assert_eq!(crate::bytes::hex(&b), expect, "{}-bit key", key.len() * 8);
            let mut d = CamelliaCbc::new(&key, &[0; 16]).unwrap_or_else(|| panic!("key"));
            assert!(d.decrypt_cbc(&mut b));
            assert_eq!(b, plain);
        }
    }

    #[test]
    fn derived_sboxes_and_bad_inputs() {
        // RFC 3713 2.4.4: SBOX2[0] = SBOX1[0] <<< 1 = 0xe0, SBOX3[0] = 0x38,
        // SBOX4[0] = SBOX1[0] = 0x70, SBOX4[1] = SBOX1[2] = 0x2c.
        assert_eq!(
            (sbox(2, 0), sbox(3, 0), sbox(4, 0), sbox(4, 1)),
            (0xe0, 0x38, 0x70, 0x2c)
        );
        let mut seen = [false; 256];
        for v in SBOX1 {
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "SBOX1 is a permutation");
        assert!(CamelliaCbc::new(&[0; 16], &[0; 8]).is_none());
        refuses_bad_inputs_both_ways(CamelliaCbc::new, &[0; 16], 16, &[8, 20, 33]);
    }

    proptest! {
        #[test]
        fn table_f_is_the_spec_f(x in any::<u64>()) {
            prop_assert_eq!(f(x), f_spec(x));
        }

    }

    proptest! {
        // The three key sizes in one test, with the cases of three.
        #![proptest_config(ProptestConfig::with_cases(768))]

        #[test]
        fn same_as_the_camellia_crate(
            case in cbc_cases::<16>(prop_oneof![Just(16), Just(24), Just(32)], 200),
        ) {
            let (key, new) = (&case.key, CamelliaCbc::new);
            match key.len() {
                16 => same_as_the_crate(&Camellia128::new_from_slice(key).unwrap(), new, &case)?,
                24 => same_as_the_crate(&Camellia192::new_from_slice(key).unwrap(), new, &case)?,
                _ => same_as_the_crate(&Camellia256::new_from_slice(key).unwrap(), new, &case)?,
            }
        }
    }
}
