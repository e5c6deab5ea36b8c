//! BLAKE2b-512 (RFC 7693), unkeyed, in one call: portable scalar code
//! written for this project. On CPUs with many integer units (AMD Zen 5)
//! OpenSSL's portable C runs nearly twice as fast as the AVX2 code of
//! `blake2b_simd`, which loses its time to the diagonal shuffles. Here the
//! sixteen state words are plain locals, the twelve rounds are unrolled
//! with constant message indexes, and nothing is vectorised, so the
//! compiler keeps the round function in general-purpose registers the way
//! the C does. On Zen 5 it is a few per cent ahead of RustCrypto `blake2`
//! (four-word vectors) and ahead of OpenSSL; it is kept beside both crates
//! because its shape is the one least tied to a microarchitecture, and the
//! hash family times all three and keeps the fastest on each CPU.
//!
//! The tests check RFC 7693's "abc" example and the published empty-input
//! digest, and compare with `blake2b_simd` at every length around the
//! block boundaries and on random inputs.

/// The initialisation vector (the SHA-512 IV).
const IV: [u64; 8] = [
    0x6a09_e667_f3bc_c908,
    0xbb67_ae85_84ca_a73b,
    0x3c6e_f372_fe94_f82b,
    0xa54f_f53a_5f1d_36f1,
    0x510e_527f_ade6_82d1,
    0x9b05_688c_2b3e_6c1f,
    0x1f83_d9ab_fb41_bd6b,
    0x5be0_cd19_137e_2179,
];

/// The message schedule; rounds 10 and 11 repeat rounds 0 and 1.
const SIGMA: [[usize; 16]; 12] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
];

const BLOCK: usize = 128;

#[inline(always)]
fn g(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// One round with schedule `R` (a constant, so every message index is one).
#[inline(always)]
fn round<const R: usize>(v: &mut [u64; 16], m: &[u64; 16]) {
    let s = &SIGMA[R];
    g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
}

/// Compress one block; `t` counts the bytes hashed so far, this block's
/// included.
#[inline(always)]
fn compress(h: &mut [u64; 8], block: &[u8; BLOCK], t: u128, last: bool) {
    let mut m = [0u64; 16];
    for (w, b) in m.iter_mut().zip(block.chunks_exact(8)) {
        let mut le = [0u8; 8];
        le.copy_from_slice(b);
        *w = u64::from_le_bytes(le);
    }
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= t as u64;
    v[13] ^= (t >> 64) as u64;
    if last {
        v[14] = !v[14];
    }
    round::<0>(&mut v, &m);
    round::<1>(&mut v, &m);
    round::<2>(&mut v, &m);
    round::<3>(&mut v, &m);
    round::<4>(&mut v, &m);
    round::<5>(&mut v, &m);
    round::<6>(&mut v, &m);
    round::<7>(&mut v, &m);
    round::<8>(&mut v, &m);
    round::<9>(&mut v, &m);
    round::<10>(&mut v, &m);
    round::<11>(&mut v, &m);
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/// Every block but the last (the last, full or not, is finalised apart).
#[inline(never)]
fn compress_blocks(h: &mut [u64; 8], data: &[u8]) {
    let mut t = 0u128;
    for chunk in data.chunks_exact(BLOCK) {
        let mut block = [0u8; BLOCK];
        block.copy_from_slice(chunk);
        t += BLOCK as u128;
        compress(h, &block, t, false);
    }
}

/// BLAKE2b with a 64-byte digest and no key, of `data` in one call.
pub fn blake2b512(data: &[u8]) -> [u8; 64] {
    let mut h = IV;
    // Parameter block: digest length 64, key length 0, fanout 1, depth 1.
    h[0] ^= 0x0101_0040;
    // The last block is the final one even when it is full, so an input of
    // whole blocks leaves one for finalisation; "" is one empty block.
    let last_start = if data.is_empty() {
        0
    } else {
        (data.len() - 1) / BLOCK * BLOCK
    };
    compress_blocks(&mut h, &data[..last_start]);
    let rest = &data[last_start..];
    let mut block = [0u8; BLOCK];
    block[..rest.len()].copy_from_slice(rest);
    compress(&mut h, &block, data.len() as u128, true);
    let mut out = [0u8; 64];
    for (o, w) in out.chunks_exact_mut(8).zip(h.iter()) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::hex;
    use crate::test_support::assert_every_length;
    use proptest::prelude::*;

    #[test]
    fn rfc_7693_and_empty_input() {
        // RFC 7693 appendix A.
        assert_eq!(hex(&blake2b512(b"abc")), "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
        assert_eq!(hex(&blake2b512(b"")), "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce");
    }

    fn reference(data: &[u8]) -> [u8; 64] {
        *blake2b_simd::blake2b(data).as_array()
    }

    #[test]
    fn every_length_around_the_block_boundaries() {
        assert_every_length("blake2b512", blake2b512, reference, 600, 5);
    }

    proptest! {
        #[test]
        fn same_as_blake2b_simd(data in proptest::collection::vec(any::<u8>(), 0..20_000)) {
            prop_assert_eq!(blake2b512(&data), reference(&data));
        }
    }
}
