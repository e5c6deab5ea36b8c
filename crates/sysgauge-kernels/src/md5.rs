//! MD5 (RFC 1321), written for this project because the RustCrypto `md-5`
//! crate falls behind `openssl speed -evp md5` (OpenSSL uses its x86-64
//! assembly; docs/performance.md), and no other maintained crate is faster.
//!
//! MD5 is one long dependency chain: each step's result feeds the next, so
//! its speed is the latency of a step, and the way to beat a plain
//! implementation is to take work off that chain (reading public notes on
//! MD5 optimisation, nothing copied):
//! - the message word and the round constant are added to the oldest state
//!   word first, before the newest one is available;
//! - round 2's G(b, c, d) = (b & d) | (c & !d) is computed as two additions,
//!   (c & !d) early and (b & d) last, which is the same because the two
//!   terms never share a bit; only one AND is then on the chain;
//! - round 1's F(b, c, d) = d ^ (b & (c ^ d)) has (c ^ d) off the chain;
//!   round 3's H has (c ^ d) off it too; round 4's I(b, c, d) = c ^ (b | !d)
//!   has !d off it.
//!
//! Constants are computed at compile time from their definition
//! (floor(|sin(i + 1)| * 2^32)) rather than typed in. The tests check the
//! RFC 1321 suite and compare with the `md-5` crate on random inputs of
//! many lengths.

// LLVM canonicalises sums by moving constants to the end, which would put
// the round constant's addition back on the dependency chain (after the
// round function); a value passed through `opaque` is added as one term,
// where the source puts it.
use crate::block64::md_hasher;
use crate::opaque::opaque_u32 as opaque;

/// |sin(x)| in f64 at compile time: reduce to [-pi, pi], then a Taylor
/// series to x^29 (error below 1e-15 there, far below the 2^-32 that the
/// constants need).
const fn abs_sin(x: f64) -> f64 {
    let two_pi = 2.0 * core::f64::consts::PI;
    let k = (x / two_pi + 0.5) as i64 as f64;
    let r = x - k * two_pi;
    let r2 = r * r;
    let mut term = r;
    let mut sum = r;
    let mut n = 1u32;
    while n < 15 {
        let a = (2 * n) as f64;
        term = -term * r2 / (a * (a + 1.0));
        sum += term;
        n += 1;
    }
    if sum < 0.0 {
        -sum
    } else {
        sum
    }
}

const fn md5_constants() -> [u32; 64] {
    let mut t = [0u32; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (abs_sin((i + 1) as f64) * 4_294_967_296.0) as u64 as u32;
        i += 1;
    }
    t
}

const K: [u32; 64] = md5_constants();

const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

macro_rules! step_f {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $i:expr, $s:expr) => {
        let t = opaque($a.wrapping_add($m).wrapping_add(K[$i]));
        $a = t
            .wrapping_add((($c ^ $d) & $b) ^ $d)
            .rotate_left($s)
            .wrapping_add($b);
    };
}

macro_rules! step_g {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $i:expr, $s:expr) => {
        let t = opaque(
            $a.wrapping_add($m)
                .wrapping_add(K[$i])
                .wrapping_add($c & !$d),
        );
        $a = t.wrapping_add($b & $d).rotate_left($s).wrapping_add($b);
    };
}

macro_rules! step_h {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $i:expr, $s:expr) => {
        let t = opaque($a.wrapping_add($m).wrapping_add(K[$i]));
        $a = t
            .wrapping_add(($c ^ $d) ^ $b)
            .rotate_left($s)
            .wrapping_add($b);
    };
}

macro_rules! step_i {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $i:expr, $s:expr) => {
        let t = opaque($a.wrapping_add($m).wrapping_add(K[$i]));
        $a = t
            .wrapping_add(($b | !$d) ^ $c)
            .rotate_left($s)
            .wrapping_add($b);
    };
}

/// Process whole 64-byte blocks.
fn compress(state: &mut [u32; 4], blocks: &[u8]) {
    for block in blocks.chunks_exact(64) {
        let mut m = [0u32; 16];
        for (w, b) in m.iter_mut().zip(block.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        let [mut a, mut b, mut c, mut d] = *state;
        step_f!(a, b, c, d, m[0], 0, 7);
        step_f!(d, a, b, c, m[1], 1, 12);
        step_f!(c, d, a, b, m[2], 2, 17);
        step_f!(b, c, d, a, m[3], 3, 22);
        step_f!(a, b, c, d, m[4], 4, 7);
        step_f!(d, a, b, c, m[5], 5, 12);
        step_f!(c, d, a, b, m[6], 6, 17);
        step_f!(b, c, d, a, m[7], 7, 22);
        step_f!(a, b, c, d, m[8], 8, 7);
        step_f!(d, a, b, c, m[9], 9, 12);
        step_f!(c, d, a, b, m[10], 10, 17);
        step_f!(b, c, d, a, m[11], 11, 22);
        step_f!(a, b, c, d, m[12], 12, 7);
        step_f!(d, a, b, c, m[13], 13, 12);
        step_f!(c, d, a, b, m[14], 14, 17);
        step_f!(b, c, d, a, m[15], 15, 22);

        step_g!(a, b, c, d, m[1], 16, 5);
        step_g!(d, a, b, c, m[6], 17, 9);
        step_g!(c, d, a, b, m[11], 18, 14);
        step_g!(b, c, d, a, m[0], 19, 20);
        step_g!(a, b, c, d, m[5], 20, 5);
        step_g!(d, a, b, c, m[10], 21, 9);
        step_g!(c, d, a, b, m[15], 22, 14);
        step_g!(b, c, d, a, m[4], 23, 20);
        step_g!(a, b, c, d, m[9], 24, 5);
        step_g!(d, a, b, c, m[14], 25, 9);
        step_g!(c, d, a, b, m[3], 26, 14);
        step_g!(b, c, d, a, m[8], 27, 20);
        step_g!(a, b, c, d, m[13], 28, 5);
        step_g!(d, a, b, c, m[2], 29, 9);
        step_g!(c, d, a, b, m[7], 30, 14);
        step_g!(b, c, d, a, m[12], 31, 20);

        step_h!(a, b, c, d, m[5], 32, 4);
        step_h!(d, a, b, c, m[8], 33, 11);
        step_h!(c, d, a, b, m[11], 34, 16);
        step_h!(b, c, d, a, m[14], 35, 23);
        step_h!(a, b, c, d, m[1], 36, 4);
        step_h!(d, a, b, c, m[4], 37, 11);
        step_h!(c, d, a, b, m[7], 38, 16);
        step_h!(b, c, d, a, m[10], 39, 23);
        step_h!(a, b, c, d, m[13], 40, 4);
        step_h!(d, a, b, c, m[0], 41, 11);
        step_h!(c, d, a, b, m[3], 42, 16);
        step_h!(b, c, d, a, m[6], 43, 23);
        step_h!(a, b, c, d, m[9], 44, 4);
        step_h!(d, a, b, c, m[12], 45, 11);
        step_h!(c, d, a, b, m[15], 46, 16);
        step_h!(b, c, d, a, m[2], 47, 23);

        step_i!(a, b, c, d, m[0], 48, 6);
        step_i!(d, a, b, c, m[7], 49, 10);
        step_i!(c, d, a, b, m[14], 50, 15);
        step_i!(b, c, d, a, m[5], 51, 21);
        step_i!(a, b, c, d, m[12], 52, 6);
        step_i!(d, a, b, c, m[3], 53, 10);
        step_i!(c, d, a, b, m[10], 54, 15);
        step_i!(b, c, d, a, m[1], 55, 21);
        step_i!(a, b, c, d, m[8], 56, 6);
        step_i!(d, a, b, c, m[15], 57, 10);
        step_i!(c, d, a, b, m[6], 58, 15);
        step_i!(b, c, d, a, m[13], 59, 21);
        step_i!(a, b, c, d, m[4], 60, 6);
        step_i!(d, a, b, c, m[11], 61, 10);
        step_i!(c, d, a, b, m[2], 62, 15);
        step_i!(b, c, d, a, m[9], 63, 21);

        state[0] = state[0].wrapping_add(a);
        state[1] = state[1].wrapping_add(b);
        state[2] = state[2].wrapping_add(c);
        state[3] = state[3].wrapping_add(d);
    }
}

md_hasher!(
    /// Incremental MD5 for data that arrives in pieces (the sweep's check of
    /// `md5sum` output streams its corpus copy by copy).
    Md5,
    /// MD5 of `data` in one call.
    fn md5
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_digests, assert_every_length, assert_streaming_any_split};
    use proptest::prelude::*;

    #[test]
    fn streaming_equals_one_call_for_any_split() {
        assert_streaming_any_split::<Md5>(md5);
    }

    #[test]
    fn constants_match_rfc1321() {
        // Spot values printed in RFC 1321 section 3.4.
        assert_eq!(K[0], 0xd76a_a478);
        assert_eq!(K[1], 0xe8c7_b756);
        assert_eq!(K[16], 0xf61e_2562);
        assert_eq!(K[32], 0xfffa_3942);
        assert_eq!(K[63], 0xeb86_d391);
    }

    #[test]
    fn rfc1321_suite() {
        let cases = crate::block64::MD_SUITE.map(|(m, _, md5)| (m, md5));
        assert_digests(md5, &cases);
    }

    fn reference(data: &[u8]) -> [u8; 16] {
        use md5_crate::Digest;
        md5_crate::Md5::digest(data).into()
    }

    #[test]
    fn every_length_around_the_padding_boundaries() {
        assert_every_length("md5", md5, reference, 300, 5);
    }

    proptest! {
        #[test]
        fn same_as_the_md5_crate(data in proptest::collection::vec(any::<u8>(), 0..20_000)) {
            prop_assert_eq!(md5(&data), reference(&data));
        }
    }
}
