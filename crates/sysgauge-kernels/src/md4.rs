//! MD4 (RFC 1320), written for this project because the RustCrypto `md4`
//! crate falls behind `openssl speed -evp md4` (docs/performance.md), and
//! it is the only maintained crate.
//!
//! MD4 is MD5's predecessor and the same kind of single dependency chain
//! (48 steps, each feeding the next), so this kernel has `md5`'s shape:
//! work is taken off the chain so that a step's latency is only what
//! depends on the newest state word:
//! - the message word and the round constant are added to the oldest
//!   state word first, before the newest one is available;
//! - round 1's F(b, c, d) = d ^ (b & (c ^ d)) has (c ^ d) off the chain;
//! - round 2's majority G(b, c, d) is computed as (c & d) + (b & (c ^ d)),
//!   which is the same because the two terms never share a bit; (c & d)
//!   joins the early sum, so only one AND and one addition are on the
//!   chain;
//! - round 3's H(b, c, d) = b ^ (c ^ d) has (c ^ d) off it.
//!
//! The tests check the RFC 1320 suite and compare with the `md4` crate on
//! random inputs of many lengths, in one call and in pieces.

// As in `md5`: LLVM would move the constants' addition to the end of the
// sum, back onto the dependency chain; a value passed through `opaque` is
// added as one term, where the source puts it.
use crate::block64::md_hasher;
use crate::opaque::opaque_u32 as opaque;

const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// Round 2's and round 3's additive constants (RFC 1320 3.4): sqrt(2) and
/// sqrt(3) times 2^30.
const K2: u32 = 0x5a82_7999;
const K3: u32 = 0x6ed9_eba1;

macro_rules! step_f {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr) => {
        let t = opaque($a.wrapping_add($m));
        $a = t.wrapping_add((($c ^ $d) & $b) ^ $d).rotate_left($s);
    };
}

macro_rules! step_g {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr) => {
        let t = opaque($a.wrapping_add($m).wrapping_add(K2).wrapping_add($c & $d));
        $a = t.wrapping_add($b & ($c ^ $d)).rotate_left($s);
    };
}

macro_rules! step_h {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr) => {
        let t = opaque($a.wrapping_add($m).wrapping_add(K3));
        $a = t.wrapping_add(($c ^ $d) ^ $b).rotate_left($s);
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
        step_f!(a, b, c, d, m[0], 3);
        step_f!(d, a, b, c, m[1], 7);
        step_f!(c, d, a, b, m[2], 11);
        step_f!(b, c, d, a, m[3], 19);
        step_f!(a, b, c, d, m[4], 3);
        step_f!(d, a, b, c, m[5], 7);
        step_f!(c, d, a, b, m[6], 11);
        step_f!(b, c, d, a, m[7], 19);
        step_f!(a, b, c, d, m[8], 3);
        step_f!(d, a, b, c, m[9], 7);
        step_f!(c, d, a, b, m[10], 11);
        step_f!(b, c, d, a, m[11], 19);
        step_f!(a, b, c, d, m[12], 3);
        step_f!(d, a, b, c, m[13], 7);
        step_f!(c, d, a, b, m[14], 11);
        step_f!(b, c, d, a, m[15], 19);

        step_g!(a, b, c, d, m[0], 3);
        step_g!(d, a, b, c, m[4], 5);
        step_g!(c, d, a, b, m[8], 9);
        step_g!(b, c, d, a, m[12], 13);
        step_g!(a, b, c, d, m[1], 3);
        step_g!(d, a, b, c, m[5], 5);
        step_g!(c, d, a, b, m[9], 9);
        step_g!(b, c, d, a, m[13], 13);
        step_g!(a, b, c, d, m[2], 3);
        step_g!(d, a, b, c, m[6], 5);
        step_g!(c, d, a, b, m[10], 9);
        step_g!(b, c, d, a, m[14], 13);
        step_g!(a, b, c, d, m[3], 3);
        step_g!(d, a, b, c, m[7], 5);
        step_g!(c, d, a, b, m[11], 9);
        step_g!(b, c, d, a, m[15], 13);

        step_h!(a, b, c, d, m[0], 3);
        step_h!(d, a, b, c, m[8], 9);
        step_h!(c, d, a, b, m[4], 11);
        step_h!(b, c, d, a, m[12], 15);
        step_h!(a, b, c, d, m[2], 3);
        step_h!(d, a, b, c, m[10], 9);
        step_h!(c, d, a, b, m[6], 11);
        step_h!(b, c, d, a, m[14], 15);
        step_h!(a, b, c, d, m[1], 3);
        step_h!(d, a, b, c, m[9], 9);
        step_h!(c, d, a, b, m[5], 11);
        step_h!(b, c, d, a, m[13], 15);
        step_h!(a, b, c, d, m[3], 3);
        step_h!(d, a, b, c, m[11], 9);
        step_h!(c, d, a, b, m[7], 11);
        step_h!(b, c, d, a, m[15], 15);

        state[0] = state[0].wrapping_add(a);
        state[1] = state[1].wrapping_add(b);
        state[2] = state[2].wrapping_add(c);
        state[3] = state[3].wrapping_add(d);
    }
}

md_hasher!(
    /// Incremental MD4 for data that arrives in pieces.
    Md4,
    /// MD4 of `data` in one call.
    fn md4
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_digests, assert_every_length, assert_streaming_any_split, digest_in_pieces,
    };
    use proptest::prelude::*;

    #[test]
    fn rfc1320_suite() {
        let cases = crate::block64::MD_SUITE.map(|(m, md4, _)| (m, md4));
        assert_digests(md4, &cases);
    }

    fn reference(data: &[u8]) -> [u8; 16] {
        use md4_crate::Digest;
        md4_crate::Md4::digest(data).into()
    }

    #[test]
    fn streaming_equals_one_call_for_any_split() {
        assert_streaming_any_split::<Md4>(md4);
    }

    #[test]
    fn every_length_around_the_padding_boundaries() {
        assert_every_length("md4", md4, reference, 300, 5);
    }

    proptest! {
        #[test]
        fn same_as_the_md4_crate(
            data in proptest::collection::vec(any::<u8>(), 0..20_000),
            cut in 0usize..20_000,
        ) {
            prop_assert_eq!(md4(&data), reference(&data));
            let (a, b) = data.split_at(cut.min(data.len()));
            prop_assert_eq!(digest_in_pieces::<Md4>(&[a, b]), reference(&data));
        }
    }
}
