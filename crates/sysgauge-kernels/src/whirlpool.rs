//! Whirlpool (the ISO/IEC 10118-3 version, as OpenSSL and the NESSIE
//! vectors have it), written for this project because the RustCrypto
//! `whirlpool` crate falls behind `openssl speed whirlpool`
//! (docs/performance.md).
//!
//! Shape: the classic table form. Each round of the block cipher W (on the
//! key and on the state alike) is, per output row, eight table loads XORed
//! together: `C[k][x]` is S-box x times row k of the circulant MDS matrix,
//! so the S-box (gamma), the column shift (pi) and the mixing (theta) are
//! one load per input byte. The eight tables (16 KiB, L1-resident) are the
//! byte rotations of one, kept apart so that no rotation is spent per
//! load. Whirlpool's speed is throughput, not latency (the eight rows of a
//! round are independent), so the work per byte is what counts: 64 table
//! loads and 64 byte extractions per round, for the key and the state
//! each. The extractions are split between the load ports (bytes read
//! from a copy of the rows in memory) and the ALUs (bytes taken from the
//! rows in registers); see `FROM_REGISTER`. Plain code leaves all of them
//! to the ALUs and spills rows besides.
//!
//! On CPUs with AVX-512 VBMI and GFNI, `whirlpool_avx512` keeps the whole
//! state in one register instead (see its `x86` module): a round is about
//! twenty whole-state instructions, several times the table form's speed.
//!
//! The S-box is built at compile time from the mini-boxes E and R of the
//! Whirlpool paper (S(u, l): a = E(u), b = E^-1(l), c = R(a ^ b), output
//! E(a ^ c), E^-1(b ^ c)), and the tables from it and the MDS row
//! (1, 1, 4, 1, 8, 5, 2, 9) over GF(2^8) mod x^8 + x^4 + x^3 + x^2 + 1, so
//! no table is entered as data. The tests check the NESSIE and ISO
//! vectors and compare with the `whirlpool` crate on random inputs.

/// The mini-box E and the mini-box R of the S-box construction.
use crate::block64::Blocks64;

const E: [u8; 16] = [1, 11, 9, 12, 13, 6, 15, 3, 14, 8, 7, 4, 10, 2, 5, 0];
const R: [u8; 16] = [7, 12, 11, 13, 14, 4, 9, 15, 6, 3, 8, 10, 2, 5, 1, 0];

const fn e_inv(x: u8) -> u8 {
    let mut i = 0;
    while i < 16 {
        if E[i] == x {
            return i as u8;
        }
        i += 1;
    }
    0
}

const fn sbox(x: u8) -> u8 {
    let a = E[(x >> 4) as usize];
    let b = e_inv(x & 15);
    let c = R[(a ^ b) as usize];
    (E[(a ^ c) as usize] << 4) | e_inv(b ^ c)
}

/// Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1.
const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0u8;
    while b != 0 {
        if b & 1 == 1 {
            r ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1d;
        }
        b >>= 1;
    }
    r
}

/// The first row of the circulant MDS matrix.
const MDS: [u8; 8] = [1, 1, 4, 1, 8, 5, 2, 9];

/// `C[k][x]`: S(x) times the MDS row, as a big-endian word rotated right by
/// 8k bits.
const fn tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut x = 0;
    while x < 256 {
        let s = sbox(x as u8);
        let mut bytes = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            bytes[j] = gf_mul(s, MDS[j]);
            j += 1;
        }
        let c0 = u64::from_be_bytes(bytes);
        let mut k = 0;
        while k < 8 {
            t[k][x] = c0.rotate_right(8 * k as u32);
            k += 1;
        }
        x += 1;
    }
    t
}

/// `C[k][x]` with its bytes swapped: a row is kept as the little-endian
/// load of its big-endian bytes, so that byte k of a row in memory, or
/// `(row >> 8k) as u8` in a register, is byte k of the spec's row.
const fn swapped_tables() -> [[u64; 256]; 8] {
    let mut t = tables();
    let mut k = 0;
    while k < 8 {
        let mut x = 0;
        while x < 256 {
            t[k][x] = t[k][x].swap_bytes();
            x += 1;
        }
        k += 1;
    }
    t
}

static C: [[u64; 256]; 8] = swapped_tables();

/// The round constants: c^r's first row is S(8(r-1)) .. S(8(r-1)+7), the
/// other rows zero.
const fn round_constants() -> [u64; 10] {
    let mut rc = [0u64; 10];
    let mut r = 0;
    while r < 10 {
        let mut bytes = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            bytes[j] = sbox((8 * r + j) as u8);
            j += 1;
        }
        rc[r] = u64::from_be_bytes(bytes);
        r += 1;
    }
    rc
}

const RC: [u64; 10] = round_constants();

/// Which bytes of a row `rho` takes from the register (bit k: byte k). The
/// others are loaded from the row's copy in memory. The eight table loads
/// per row are fixed; each byte index costs either a load (`movzx` from
/// memory) or one or two ALU instructions (`movzx` of a low byte, a shift
/// for the top one, `movzx` of the second byte's high-byte register), so
/// splitting them balances the load and ALU ports. Bytes 0, 1, 6 and 7
/// from the register (a shift by 48 leaves 6 and 7 as a low and a
/// high-byte register) was the fastest of the splits tried
/// (docs/performance.md has the comparison).
const FROM_REGISTER: u8 = 0b1100_0011;

/// One round's gamma, pi and theta on the eight rows (`w` in registers,
/// `bytes` the same in memory), each output row XORed with `key`'s.
#[inline(always)]
fn rho(w: &[u64; 8], bytes: &[u8; 64], key: &[u64; 8]) -> [u64; 8] {
    let c = &C;
    let mut out = [0u64; 8];
    for (i, o) in out.iter_mut().enumerate() {
        // Byte k of row i - k (mod 8), as pi shifts column k down by k.
        let at = |k: usize| {
            let j = (i + 8 - k) & 7;
            if (FROM_REGISTER >> k) & 1 == 1 {
                (w[j] >> (8 * k)) as u8 as usize
            } else {
                bytes[8 * j + k] as usize
            }
        };
        *o = ((c[0][at(0)] ^ c[1][at(1)]) ^ (c[2][at(2)] ^ c[3][at(3)]))
            ^ ((c[4][at(4)] ^ c[5][at(5)]) ^ (c[6][at(6)] ^ c[7][at(7)]))
            ^ key[i];
    }
    out
}

/// The rows' bytes in memory. `black_box` keeps the copy there: without
/// it LLVM forwards the stored words to the byte loads as shifts, which
/// undoes the split of `FROM_REGISTER`. It costs no instruction.
#[inline(always)]
fn in_memory(w: &[u64; 8]) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (o, x) in b.chunks_exact_mut(8).zip(w) {
        o.copy_from_slice(&x.to_le_bytes());
    }
    std::hint::black_box(b)
}

/// Process whole 64-byte blocks.
fn compress(h: &mut [u64; 8], blocks: &[u8]) {
    let rc = RC.map(u64::swap_bytes);
    for block in blocks.chunks_exact(64) {
        let mut m = [0u64; 8];
        for (w, b) in m.iter_mut().zip(block.chunks_exact(8)) {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            *w = u64::from_le_bytes(a);
        }
        let mut k = *h;
        let mut s = [0u64; 8];
        for i in 0..8 {
            s[i] = m[i] ^ k[i];
        }
        for rc in rc {
            let mut round_key = [0u64; 8];
            round_key[0] = rc;
            k = rho(&k, &in_memory(&k), &round_key);
            s = rho(&s, &in_memory(&s), &k);
        }
        for i in 0..8 {
            h[i] ^= s[i] ^ m[i];
        }
    }
}

/// Incremental Whirlpool.
#[derive(Clone)]
pub struct Whirlpool {
    h: [u64; 8],
    /// Its length in bytes is the 256-bit length field's low bits over 8
    /// (no input reaches 2^61 bytes).
    input: Blocks64,
}

impl Default for Whirlpool {
    fn default() -> Self {
        Self::new()
    }
}

impl Whirlpool {
    pub fn new() -> Self {
        Whirlpool {
            h: [0; 8],
            input: Blocks64::new(),
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        let h = &mut self.h;
        self.input.update(data, |blocks| compress(h, blocks));
    }

    pub fn finalize(self) -> [u8; 64] {
        finish(self.h, self.input.rest(), self.input.total())
    }
}

/// The padding (a 1 bit, zeros up to 32 bytes before a block's end, then
/// the bit length as a 256-bit big-endian number) and the digest's bytes.
fn finish(mut h: [u64; 8], rem: &[u8], len: u64) -> [u8; 64] {
    let mut tail = [0u8; 128];
    tail[..rem.len()].copy_from_slice(rem);
    tail[rem.len()] = 0x80;
    let end = if rem.len() < 32 { 64 } else { 128 };
    let bits = u128::from(len) * 8;
    tail[end - 16..end].copy_from_slice(&bits.to_be_bytes());
    compress(&mut h, &tail[..end]);
    let mut out = [0u8; 64];
    for (o, w) in out.chunks_exact_mut(8).zip(h.iter()) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
crate::test_support::streaming_hash!(Whirlpool, [u8; 64]);

/// Whirlpool of `data` in one call (the table kernel).
pub fn whirlpool(data: &[u8]) -> [u8; 64] {
    let mut h = [0u64; 8];
    let full = data.len() / 64 * 64;
    compress(&mut h, &data[..full]);
    finish(h, &data[full..], data.len() as u64)
}

/// Whether this CPU runs [`whirlpool_avx512`]: AVX-512F/BW, AVX-512 VBMI
/// (byte permutations) and GFNI.
pub fn avx512_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi")
            && std::is_x86_feature_detected!("gfni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whirlpool of `data` with the whole state in one 512-bit register (see
/// `x86`); `None` if the CPU lacks what it needs.
pub fn whirlpool_avx512(data: &[u8]) -> Option<[u8; 64]> {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_available() {
            let mut pad = [0u8; 128];
            let full = data.len() / 64 * 64;
            let rem = &data[full..];
            pad[..rem.len()].copy_from_slice(rem);
            pad[rem.len()] = 0x80;
            let end = if rem.len() < 32 { 64 } else { 128 };
            let bits = u128::from(data.len() as u64) * 8;
            pad[end - 16..end].copy_from_slice(&bits.to_be_bytes());
            // SAFETY: the CPU has the features `digest` needs.
            return Some(unsafe { x86::digest(&data[..full], &pad[..end]) });
        }
    }
    let _ = data;
    None
}

/// Whirlpool with AVX-512 VBMI and GFNI: the 64-byte state is one
/// register, byte 8i + j holding row i, column j. A round is then a few
/// whole-state instructions instead of 64 table loads: gamma is the
/// S-box as four 64-byte tables (two `vpermi2b` and a blend on the top
/// bit), theta multiplies the S-box output by each distinct MDS constant
/// (4, 8, 5, 2, 9: `vgf2p8affineqb` with the multiplication's bit matrix
/// for Whirlpool's polynomial) and XORs eight byte permutations of those
/// products, each permutation pi followed by a rotation of the rows'
/// bytes (`vpermb`), so pi costs nothing of its own.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{gf_mul, sbox, MDS, RC};
    use std::arch::x86_64::*;

    /// The bit matrix of multiplication by `c` for `vgf2p8affineqb`: byte
    /// 7 - i is the row giving output bit i.
    const fn mul_matrix(c: u8) -> u64 {
        let mut m = 0u64;
        let mut i = 0;
        while i < 8 {
            let mut row = 0u64;
            let mut j = 0;
            while j < 8 {
                if (gf_mul(c, 1 << j) >> i) & 1 == 1 {
                    row |= 1 << j;
                }
                j += 1;
            }
            m |= row << (8 * (7 - i));
            i += 1;
        }
        m
    }

    /// For each d, the byte permutation pi then a rotation of every row
    /// by d: output (i, j) takes input ((i - k) mod 8, k), k = (j - d) mod 8.
    const fn theta_indices() -> [[u8; 64]; 8] {
        let mut t = [[0u8; 64]; 8];
        let mut d = 0;
        while d < 8 {
            let mut i = 0;
            while i < 8 {
                let mut j = 0;
                while j < 8 {
                    let k = (j + 8 - d) & 7;
                    t[d][8 * i + j] = (8 * ((i + 8 - k) & 7) + k) as u8;
                    j += 1;
                }
                i += 1;
            }
            d += 1;
        }
        t
    }

    const fn sbox_table() -> [u8; 256] {
        let mut t = [0u8; 256];
        let mut x = 0;
        while x < 256 {
            t[x] = sbox(x as u8);
            x += 1;
        }
        t
    }

    static THETA_IDX: [[u8; 64]; 8] = theta_indices();
    static SBOX: [u8; 256] = sbox_table();

    struct Consts {
        s: [__m512i; 4],
        idx: [__m512i; 8],
        /// Multiplication by MDS[d] for d = 2, 4, 5, 6, 7 (4, 8, 5, 2, 9).
        mul: [__m512i; 5],
        rc: [__m512i; 10],
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load(b: &[u8; 64]) -> __m512i {
        // SAFETY: `b` is 64 readable bytes.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f")]
    fn consts() -> Consts {
        let mut s = [_mm512_setzero_si512(); 4];
        for (v, part) in s.iter_mut().zip(SBOX.chunks_exact(64)) {
            let mut b = [0u8; 64];
            b.copy_from_slice(part);
            *v = load(&b);
        }
        let mut idx = [_mm512_setzero_si512(); 8];
        for (v, t) in idx.iter_mut().zip(THETA_IDX.iter()) {
            *v = load(t);
        }
        let mut mul = [_mm512_setzero_si512(); 5];
        for (v, d) in mul.iter_mut().zip([2, 4, 5, 6, 7]) {
            *v = _mm512_set1_epi64(mul_matrix(MDS[d]) as i64);
        }
        let mut rc = [_mm512_setzero_si512(); 10];
        for (v, r) in rc.iter_mut().zip(RC) {
            let mut b = [0u8; 64];
            b[..8].copy_from_slice(&r.to_be_bytes());
            *v = load(&b);
        }
        Consts { s, idx, mul, rc }
    }

    /// rho with key `k`: gamma, pi, theta, sigma.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn rho(c: &Consts, a: __m512i, k: __m512i) -> __m512i {
        let lo = _mm512_permutex2var_epi8(c.s[0], a, c.s[1]);
        let hi = _mm512_permutex2var_epi8(c.s[2], a, c.s[3]);
        let g = _mm512_mask_blend_epi8(_mm512_movepi8_mask(a), lo, hi);
        let m4 = _mm512_gf2p8affine_epi64_epi8::<0>(g, c.mul[0]);
        let m8 = _mm512_gf2p8affine_epi64_epi8::<0>(g, c.mul[1]);
        let m5 = _mm512_gf2p8affine_epi64_epi8::<0>(g, c.mul[2]);
        let m2 = _mm512_gf2p8affine_epi64_epi8::<0>(g, c.mul[3]);
        let m9 = _mm512_gf2p8affine_epi64_epi8::<0>(g, c.mul[4]);
        let p = |d: usize, x: __m512i| _mm512_permutexvar_epi8(c.idx[d], x);
        // MDS = (1, 1, 4, 1, 8, 5, 2, 9) for rotations d = 0..7; 0x96 is a
        // three-way XOR.
        let t0 = _mm512_ternarylogic_epi64::<0x96>(p(0, g), p(1, g), p(2, m4));
        let t1 = _mm512_ternarylogic_epi64::<0x96>(p(3, g), p(4, m8), p(5, m5));
        let t2 = _mm512_ternarylogic_epi64::<0x96>(p(6, m2), p(7, m9), k);
        _mm512_ternarylogic_epi64::<0x96>(t0, t1, t2)
    }

    /// The digest of `blocks` (whole blocks) followed by `tail` (the
    /// padded last one or two blocks).
    ///
    /// # Safety
    /// The CPU must have AVX-512F/BW, AVX-512 VBMI and GFNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    pub unsafe fn digest(blocks: &[u8], tail: &[u8]) -> [u8; 64] {
        let c = consts();
        let mut h = _mm512_setzero_si512();
        for block in blocks.chunks_exact(64).chain(tail.chunks_exact(64)) {
            let mut b = [0u8; 64];
            b.copy_from_slice(block);
            let m = load(&b);
            let mut k = h;
            let mut s = _mm512_xor_si512(m, k);
            for rc in c.rc {
                k = rho(&c, k, rc);
                s = rho(&c, s, k);
            }
            h = _mm512_ternarylogic_epi64::<0x96>(h, s, m);
        }
        let mut out = [0u8; 64];
        // SAFETY: `out` is 64 writable bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_digests, assert_every_length, digest_in_pieces};
    use proptest::prelude::*;

    #[test]
    fn sbox_and_first_table_entry() {
        // The paper's S-box starts 18 23 c6 e8; C0[0] = 18 18 60 18 c0 78 30 d8.
        assert_eq!(
            [sbox(0), sbox(1), sbox(2), sbox(3)],
            [0x18, 0x23, 0xc6, 0xe8]
        );
        assert_eq!(tables()[0][0], 0x1818_6018_c078_30d8);
        assert_eq!(
            C[1][0],
            0x1818_6018_c078_30d8u64.rotate_right(8).swap_bytes()
        );
        let mut seen = [false; 256];
        for x in 0..=255u8 {
            seen[sbox(x) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "the S-box is a permutation");
    }

    #[test]
    fn nessie_and_iso_vectors() {
        let cases: [(&[u8], &str); 3] = [
            (b"", "19fa61d75522a4669b44e39c1d2e1726c530232130d407f89afee0964997f7a73e83be698b288febcf88e3e03c4f0757ea8964e59b63d93708b138cc42a66eb3"),
            (b"abc", "4e2448a4c6f486bb16b6562c73b4020bf3043e3a731bce721ae1b303d97e6d4c7181eebdb6c57e277d0e34957114cbd6c797fc9d95d8b582d225292076d4eef5"),
            (b"The quick brown fox jumps over the lazy dog", "b97de512e91e3828b40d2b0fdce9ceb3c4a71f9bea8d88e75c4fa854df36725fd2b52eb6544edcacd6f8beddfea403cb55ae31f03ad62a5ef54e42ee82c3fb35"),
        ];
        assert_digests(whirlpool, &cases);
    }

    fn reference(data: &[u8]) -> [u8; 64] {
        use whirlpool_crate::Digest;
        whirlpool_crate::Whirlpool::digest(data).into()
    }

    #[test]
    fn every_length_around_the_padding_boundaries() {
        assert_every_length("whirlpool", whirlpool, reference, 300, 9);
    }

    #[test]
    fn the_avx512_kernel_agrees() {
        let mut data = vec![0u8; 1000];
        crate::bytes::fill_pattern(&mut data, 10);
        for len in (0..200).chain([511, 512, 513, 1000]) {
            match whirlpool_avx512(&data[..len]) {
                Some(d) => assert_eq!(d, reference(&data[..len]), "length {len}"),
                None => assert!(!avx512_available()),
            }
        }
    }

    proptest! {
        #[test]
        fn same_as_the_whirlpool_crate(
            data in proptest::collection::vec(any::<u8>(), 0..5_000),
            cut in 0usize..5_000,
        ) {
            let expect = reference(&data);
            prop_assert_eq!(whirlpool(&data), expect);
            if let Some(d) = whirlpool_avx512(&data) {
                prop_assert_eq!(d, expect);
            }
            let (a, b) = data.split_at(cut.min(data.len()));
            prop_assert_eq!(digest_in_pieces::<Whirlpool>(&[a, b]), expect);
        }
    }
}
