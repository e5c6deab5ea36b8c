//! Blowfish-CBC encryption written for this project from Schneier's
//! description of the cipher (1993).
//!
//! Why by hand: the RustCrypto `blowfish` crate under the CBC loop in
//! `crypto/symmetric.rs` falls short of `openssl speed -evp bf-cbc`
//! (docs/performance.md), and no other crate offers a faster
//! Blowfish. CBC encryption is one dependency chain, so its speed is the
//! latency of sixteen rounds per block. What this kernel does about it:
//! - the P-array and the four S-boxes live in one fixed-size struct, indexed
//!   by `u8`, so every S-box load is a single base + index*4 load without a
//!   bounds check;
//! - the whole buffer is encrypted in one loop with the chaining value held
//!   as two `u32` halves in registers (one big-endian load and store per
//!   half-block), with no per-block call through a trait;
//! - each round's subkey is XORed into the other half together with F's
//!   output (`r ^= F(l) ^ P[i]`), so the subkey XOR is off the chain.
//!
//! The initial state (the hexadecimal digits of pi) is computed by the build
//! script rather than typed in. The `blowfish` crate stays as the
//! independent implementation: the round trip decrypts with it, and the
//! tests compare this kernel's CBC output with it on random inputs.

use crate::be32;

/// P-array and S-boxes, in the order pi's digits fill them.
static PI_WORDS: [u32; 18 + 4 * 256] = include!(concat!(env!("OUT_DIR"), "/pi_words.rs"));

/// A keyed Blowfish (about 4 KiB of state) and the CBC chaining value.
#[derive(Clone)]
pub struct BlowfishCbc {
    p: [u32; 18],
    s: [[u32; 256]; 4],
    iv: (u32, u32),
}

impl BlowfishCbc {
    /// Key schedule; keys of 4 to 56 bytes (32 to 448 bits, as the
    /// `blowfish` crate and OpenSSL's EVP interface take), 8-byte IV.
    pub fn new(key: &[u8], iv: &[u8]) -> Option<Box<BlowfishCbc>> {
        if !(4..=56).contains(&key.len()) || iv.len() != 8 {
            return None;
        }
        let mut bf = Box::new(BlowfishCbc {
            p: [0; 18],
            s: [[0; 256]; 4],
            iv: (be32(&iv[..4]), be32(&iv[4..])),
        });
        bf.p.copy_from_slice(&PI_WORDS[..18]);
        for (k, sbox) in bf.s.iter_mut().enumerate() {
            sbox.copy_from_slice(&PI_WORDS[18 + 256 * k..18 + 256 * (k + 1)]);
        }
        // The key, cycled, is XORed into the P-array as big-endian words.
        let mut pos = 0usize;
        for p in bf.p.iter_mut() {
            let mut w = 0u32;
            for _ in 0..4 {
                w = (w << 8) | u32::from(key[pos]);
                pos = (pos + 1) % key.len();
            }
            *p ^= w;
        }
        // Then the all-zero block is encrypted over and over, each output
        // replacing the next two entries of P and then of the S-boxes.
        let (mut l, mut r) = (0u32, 0u32);
        for i in (0..18).step_by(2) {
            (l, r) = bf.encrypt(l, r);
            bf.p[i] = l;
            bf.p[i + 1] = r;
        }
        for k in 0..4 {
            for i in (0..256).step_by(2) {
                (l, r) = bf.encrypt(l, r);
                bf.s[k][i] = l;
                bf.s[k][i + 1] = r;
            }
        }
        Some(bf)
    }

    #[inline(always)]
    fn f(&self, x: u32) -> u32 {
        let a = self.s[0][(x >> 24) as u8 as usize];
        let b = self.s[1][(x >> 16) as u8 as usize];
        let c = self.s[2][(x >> 8) as u8 as usize];
        let d = self.s[3][x as u8 as usize];
        (a.wrapping_add(b) ^ c).wrapping_add(d)
    }

    /// One block: sixteen rounds, written without the half swaps.
    #[inline(always)]
    fn encrypt(&self, mut l: u32, mut r: u32) -> (u32, u32) {
        let p = &self.p;
        l ^= p[0];
        r ^= self.f(l) ^ p[1];
        l ^= self.f(r) ^ p[2];
        r ^= self.f(l) ^ p[3];
        l ^= self.f(r) ^ p[4];
        r ^= self.f(l) ^ p[5];
        l ^= self.f(r) ^ p[6];
        r ^= self.f(l) ^ p[7];
        l ^= self.f(r) ^ p[8];
        r ^= self.f(l) ^ p[9];
        l ^= self.f(r) ^ p[10];
        r ^= self.f(l) ^ p[11];
        l ^= self.f(r) ^ p[12];
        r ^= self.f(l) ^ p[13];
        l ^= self.f(r) ^ p[14];
        r ^= self.f(l) ^ p[15];
        l ^= self.f(r) ^ p[16];
        r ^= p[17];
        (r, l)
    }

    /// CBC-encrypt `buf` in place, continuing the chain from the last call.
    /// False (and nothing changed) if `buf` is not whole 8-byte blocks.
    pub fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(8) {
            return false;
        }
        let (mut l, mut r) = self.iv;
        for block in buf.chunks_exact_mut(8) {
            l ^= be32(&block[..4]);
            r ^= be32(&block[4..]);
            (l, r) = self.encrypt(l, r);
            block[..4].copy_from_slice(&l.to_be_bytes());
            block[4..].copy_from_slice(&r.to_be_bytes());
        }
        self.iv = (l, r);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cbc_cases, encrypts_like_the_crate, refuses_bad_inputs};
    use cipher::KeyInit;
    use proptest::prelude::*;

    #[test]
    fn the_initial_state_is_pi() {
        // pi = 3.243F6A88 85A308D3 ...; the first S-box starts D1310BA6.
        assert_eq!(PI_WORDS[0], 0x243f_6a88);
        assert_eq!(PI_WORDS[1], 0x85a3_08d3);
        assert_eq!(PI_WORDS[18], 0xd131_0ba6);
    }

    #[test]
    fn schneier_zero_key_vector() {
        // Eric Young's Blowfish test set: key 00..00, plaintext 00..00
        // gives 4EF997456198DD78 (one ECB block = CBC with a zero IV).
        let mut bf = BlowfishCbc::new(&[0; 8], &[0; 8]).unwrap_or_else(|| panic!("key"));
        let mut b = [0u8; 8];
        assert!(bf.encrypt_cbc(&mut b));
        assert_eq!(crate::bytes::hex(&b), "4ef997456198dd78");
    }

    #[test]
    fn bad_inputs() {
        refuses_bad_inputs(BlowfishCbc::new, &[0; 16], 8, &[0, 3, 57]);
    }

    proptest! {
        #[test]
        fn same_as_the_blowfish_crate(case in cbc_cases::<8>(4..=56usize, 300)) {
            let c: blowfish::Blowfish = blowfish::Blowfish::new_from_slice(&case.key).unwrap();
            encrypts_like_the_crate(&c, BlowfishCbc::new, &case)?;
        }
    }
}
