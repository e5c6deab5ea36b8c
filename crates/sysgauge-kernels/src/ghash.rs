//! GHASH (the universal hash of GCM, NIST SP 800-38D), written for this
//! project because the RustCrypto `ghash` crate falls well behind `openssl
//! speed ghash` (docs/performance.md): the crate multiplies one block at a
//! time, so every block waits for the previous block's multiplication and
//! reduction, while OpenSSL's assembly aggregates several blocks per
//! reduction.
//!
//! How it is shaped (from SP 800-38D, RFC 8452's appendix A relating GHASH
//! to POLYVAL, and the published descriptions of carry-less multiplication
//! for GCM; nothing copied):
//! - it computes POLYVAL, GHASH's bit-reflected twin: a block loaded
//!   big-endian is a POLYVAL element, and H becomes H·x (RFC 8452 A). In
//!   that representation a carry-less product needs no bit shifts, and the
//!   Montgomery reduction by x^128 is two carry-less multiplications by the
//!   constant x^63 + x^62 + x^57 and two half swaps;
//! - the powers H^1..H^8 are computed once per key, and eight blocks are
//!   taken per step: (acc + X1)·H^8 + X2·H^7 + ... + X8·H, eight unreduced
//!   256-bit products XORed together and reduced once, so the chain from
//!   one step to the next is one multiplication and one reduction per 128
//!   bytes instead of per 16; the remaining up to seven blocks are one
//!   shorter step of the same kind;
//! - in the 128- and 256-bit kernels each product takes three carry-less
//!   multiplications, not four (Karatsuba: the middle term is (a_lo +
//!   a_hi)(b_lo + b_hi) minus the outer two, and the powers' halves are
//!   added once per call): on CPUs whose carry-less multiplier issues one
//!   every two cycles (AMD Zen 3) the multiplications bound the rate. The
//!   512-bit kernel keeps four: it won on the CPUs it was measured on, and
//!   no CPU with AVX-512 was at hand to measure the change;
//! - with VPCLMULQDQ and AVX-512 the eight products are two 512-bit
//!   multiplications of four blocks each, with VPCLMULQDQ and AVX2 four
//!   256-bit ones of two blocks, with only PCLMULQDQ eight 128-bit ones.
//!   Each is chosen at run time ([`Kernel`]); the portable
//!   path (a carry-less multiplication in plain integer code, the same
//!   reduction) is the reference the tests check the others against, and
//!   the fallback on other CPUs.
//!
//! The tests check the GCM spec's vectors and compare with the `ghash`
//! crate on random keys and inputs of many lengths, in one call and in
//! pieces.

/// x^128 = x^127 + x^126 + x^121 + 1 in POLYVAL's field: the bits XORed in
/// when multiplying by x carries out of bit 127.
const POLY_CARRY: u128 = (0xc2 << 120) | 1;

/// x^63 + x^62 + x^57, the reduction's multiplier.
const POLY_LOW: u64 = 0xc200_0000_0000_0000;

/// The kernels, fastest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Four blocks per 512-bit carry-less multiplication (VPCLMULQDQ,
    /// AVX-512F/BW/VL).
    Vpclmul,
    /// Two blocks per 256-bit carry-less multiplication (VPCLMULQDQ, AVX2):
    /// CPUs with VPCLMULQDQ but no AVX-512 (AMD Zen 3), and those whose
    /// 512-bit operations run as two 256-bit halves (AMD Zen 4).
    VpclmulAvx2,
    /// One block per 128-bit carry-less multiplication (PCLMULQDQ, SSSE3).
    Pclmul,
    /// Plain integer code.
    Portable,
}

impl Kernel {
    /// Whether this CPU runs the kernel.
    pub fn available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Pclmul => {
                std::is_x86_feature_detected!("pclmulqdq") && std::is_x86_feature_detected!("ssse3")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::VpclmulAvx2 => {
                Kernel::Pclmul.available()
                    && std::is_x86_feature_detected!("vpclmulqdq")
                    && std::is_x86_feature_detected!("avx2")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Vpclmul => {
                Kernel::Pclmul.available()
                    && std::is_x86_feature_detected!("vpclmulqdq")
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The fastest kernel this CPU runs.
    pub fn best() -> Kernel {
        [Kernel::Vpclmul, Kernel::VpclmulAvx2, Kernel::Pclmul]
            .into_iter()
            .find(|k| k.available())
            .unwrap_or(Kernel::Portable)
    }
}

/// A carry-less 64x64-bit multiplication in integer code.
fn clmul64(a: u64, b: u64) -> u128 {
    let mut r = 0u128;
    for i in 0..64 {
        // Branch-free: the shifted `a` is kept or masked off.
        let mask = 0u128.wrapping_sub(u128::from((b >> i) & 1));
        r ^= (u128::from(a) << i) & mask;
    }
    r
}

/// The 256-bit carry-less product of `a` and `b` as (low, high).
fn clmul128(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1, b0, b1) = (a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64);
    let mid = clmul64(a0, b1) ^ clmul64(a1, b0);
    (clmul64(a0, b0) ^ (mid << 64), clmul64(a1, b1) ^ (mid >> 64))
}

/// Montgomery reduction: (high·x^128 + low)·x^-128 mod the POLYVAL
/// polynomial. Each half step adds low's low half times the polynomial,
/// which clears it, and divides by x^64 (the half swap).
fn reduce(low: u128, high: u128) -> u128 {
    let l = low.rotate_left(64) ^ clmul64(low as u64, POLY_LOW);
    let l = l.rotate_left(64) ^ clmul64(l as u64, POLY_LOW);
    high ^ l
}

/// POLYVAL's product a·b·x^-128.
fn dot(a: u128, b: u128) -> u128 {
    let (lo, hi) = clmul128(a, b);
    reduce(lo, hi)
}

/// A GHASH key with its powers, and the running value.
#[derive(Clone)]
pub struct Ghash {
    /// H^1..H^8 in POLYVAL's Montgomery form: `dot(x, powers[k])` is x
    /// times H^(k+1).
    powers: [u128; 8],
    acc: u128,
    kernel: Kernel,
}

impl Ghash {
    /// A 16-byte key H with the fastest kernel this CPU runs.
    pub fn new(h: &[u8]) -> Option<Ghash> {
        Ghash::with_kernel(Kernel::best(), h)
    }

    /// A 16-byte key H with `kernel`; `None` if the key is another length
    /// or the CPU does not run the kernel.
    pub fn with_kernel(kernel: Kernel, h: &[u8]) -> Option<Ghash> {
        let h: [u8; 16] = h.try_into().ok()?;
        if !kernel.available() {
            return None;
        }
        // RFC 8452 A: GHASH's H is POLYVAL's mulX(ByteReverse(H)).
        let h = u128::from_be_bytes(h);
        let h1 = (h << 1) ^ if h >> 127 == 1 { POLY_CARRY } else { 0 };
        let mut powers = [h1; 8];
        for k in 1..8 {
            powers[k] = dot(powers[k - 1], h1);
        }
        Some(Ghash {
            powers,
            acc: 0,
            kernel,
        })
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Absorb `data`, zero-padded to whole 16-byte blocks (as GCM pads the
    /// AAD and the ciphertext).
    pub fn update_padded(&mut self, data: &[u8]) {
        let whole = data.len() / 16 * 16;
        self.absorb(&data[..whole]);
        if whole < data.len() {
            let mut last = [0u8; 16];
            last[..data.len() - whole].copy_from_slice(&data[whole..]);
            self.absorb(&last);
        }
    }

    /// The hash of everything absorbed.
    pub fn finalize(&self) -> [u8; 16] {
        self.acc.to_be_bytes()
    }

    /// Absorb whole blocks.
    fn absorb(&mut self, blocks: &[u8]) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_kernel` made sure the CPU has the kernel's
            // features.
            Kernel::Vpclmul => unsafe { x86::absorb_vpclmul(&mut self.acc, &self.powers, blocks) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Kernel::VpclmulAvx2 => unsafe {
                x86::absorb_vpclmul_avx2(&mut self.acc, &self.powers, blocks)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Kernel::Pclmul => unsafe { x86::absorb_pclmul(&mut self.acc, &self.powers, blocks) },
            _ => absorb_portable(&mut self.acc, &self.powers, blocks),
        }
    }
}

/// The aggregated steps in integer code (the reference for the others).
fn absorb_portable(acc: &mut u128, powers: &[u128; 8], blocks: &[u8]) {
    for group in blocks.chunks(128) {
        let n = group.len() / 16;
        let (mut lo, mut hi) = (0u128, 0u128);
        for (i, b) in group.chunks_exact(16).enumerate() {
            let mut x = u128::from_be_bytes(b.try_into().unwrap_or([0; 16]));
            if i == 0 {
                x ^= *acc;
            }
            let (l, h) = clmul128(x, powers[n - 1 - i]);
            lo ^= l;
            hi ^= h;
        }
        *acc = reduce(lo, hi);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::POLY_LOW;
    use std::arch::x86_64::*;

    /// A u128 as an xmm value (low 64 bits in the low lane).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn to_xmm(v: u128) -> __m128i {
        _mm_set_epi64x((v >> 64) as i64, v as i64)
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn from_xmm(v: __m128i) -> u128 {
        let lo = _mm_cvtsi128_si64(v) as u64;
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
        (u128::from(hi) << 64) | u128::from(lo)
    }

    /// The shuffle that reverses a block's sixteen bytes (a big-endian
    /// load).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn bswap_mask() -> __m128i {
        _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
    }

    /// Block `i` of `p`, big-endian.
    ///
    /// # Safety
    /// `p` must have 16 readable bytes at `16 * i`.
    #[inline]
    #[target_feature(enable = "ssse3")]
    unsafe fn load_be(p: *const u8, i: usize) -> __m128i {
        // SAFETY: the caller's bounds; unaligned loads are allowed.
        let x = unsafe { _mm_loadu_si128(p.add(16 * i).cast()) };
        _mm_shuffle_epi8(x, bswap_mask())
    }

    /// Karatsuba's middle operand: the value's two halves added, in its low
    /// half.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn halves_added(v: __m128i) -> __m128i {
        _mm_xor_si128(v, _mm_shuffle_epi32(v, 0x4e))
    }

    /// The partial products of `a`·`b` XORed into `acc`: low, Karatsuba's
    /// middle (with `bk` = `halves_added(b)`), high. [`karatsuba_done`]
    /// turns the sums into the three of `reduce`.
    #[inline]
    #[target_feature(enable = "pclmulqdq")]
    fn mul_into(acc: &mut [__m128i; 3], a: __m128i, b: __m128i, bk: __m128i) {
        acc[0] = _mm_xor_si128(acc[0], _mm_clmulepi64_si128(a, b, 0x00));
        acc[1] = _mm_xor_si128(acc[1], _mm_clmulepi64_si128(halves_added(a), bk, 0x00));
        acc[2] = _mm_xor_si128(acc[2], _mm_clmulepi64_si128(a, b, 0x11));
    }

    /// Summed Karatsuba products as (low, middle, high): the middle term is
    /// the sum of the middle products minus (plus, in GF(2)) the outer ones;
    /// the sum of products is linear, so this is done once per group.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn karatsuba_done(p: [__m128i; 3]) -> [__m128i; 3] {
        [p[0], _mm_xor_si128(p[1], _mm_xor_si128(p[0], p[2])), p[2]]
    }

    /// `super::reduce` of the three partial products.
    #[inline]
    #[target_feature(enable = "pclmulqdq")]
    fn reduce(p: &[__m128i; 3]) -> __m128i {
        let poly = _mm_set_epi64x(POLY_LOW as i64, 0);
        let lo = _mm_xor_si128(p[0], _mm_slli_si128(p[1], 8));
        let hi = _mm_xor_si128(p[2], _mm_srli_si128(p[1], 8));
        // Selector 0x10: the low half of `lo` times the polynomial.
        let t = _mm_clmulepi64_si128(lo, poly, 0x10);
        let lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
        let t = _mm_clmulepi64_si128(lo, poly, 0x10);
        let lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
        _mm_xor_si128(hi, lo)
    }

    /// `absorb_portable` with PCLMULQDQ.
    ///
    /// # Safety
    /// The CPU must have PCLMULQDQ and SSSE3; `blocks` whole 16-byte blocks.
    #[target_feature(enable = "pclmulqdq,ssse3")]
    pub unsafe fn absorb_pclmul(acc: &mut u128, powers: &[u128; 8], blocks: &[u8]) {
        let mut h = [_mm_setzero_si128(); 8];
        for (x, &p) in h.iter_mut().zip(powers) {
            *x = to_xmm(p);
        }
        let hk = h.map(|v| halves_added(v));
        let mut x = to_xmm(*acc);
        let zero = _mm_setzero_si128();
        let mut groups = blocks.chunks_exact(128);
        for g in &mut groups {
            let p = g.as_ptr();
            let mut prod = [zero; 3];
            // SAFETY: `g` is 128 bytes.
            unsafe {
                mul_into(&mut prod, _mm_xor_si128(x, load_be(p, 0)), h[7], hk[7]);
                for i in 1..8 {
                    mul_into(&mut prod, load_be(p, i), h[7 - i], hk[7 - i]);
                }
            }
            x = reduce(&karatsuba_done(prod));
        }
        let rest = groups.remainder();
        let n = rest.len() / 16;
        if n > 0 {
            let p = rest.as_ptr();
            let mut prod = [zero; 3];
            // SAFETY: `rest` holds `n` whole blocks.
            unsafe {
                mul_into(
                    &mut prod,
                    _mm_xor_si128(x, load_be(p, 0)),
                    h[n - 1],
                    hk[n - 1],
                );
                for i in 1..n {
                    mul_into(&mut prod, load_be(p, i), h[n - 1 - i], hk[n - 1 - i]);
                }
            }
            x = reduce(&karatsuba_done(prod));
        }
        *acc = from_xmm(x);
    }

    /// `absorb_portable` with VPCLMULQDQ: each group of eight blocks is two
    /// 512-bit vectors of four, multiplied lane by lane with H^8..H^5 and
    /// H^4..H^1; the products' lanes are folded to one before the
    /// reduction.
    ///
    /// # Safety
    /// The CPU must have VPCLMULQDQ, AVX-512F/BW/VL, PCLMULQDQ and SSSE3;
    /// `blocks` whole 16-byte blocks.
    #[target_feature(enable = "vpclmulqdq,avx512f,avx512bw,avx512vl,pclmulqdq,ssse3")]
    pub unsafe fn absorb_vpclmul(acc: &mut u128, powers: &[u128; 8], blocks: &[u8]) {
        // Lane i of the first vector takes block i, which H^(8-i) multiplies.
        let h_hi = lanes(powers[7], powers[6], powers[5], powers[4]);
        let h_lo = lanes(powers[3], powers[2], powers[1], powers[0]);
        let bswap = _mm512_broadcast_i32x4(bswap_mask());
        let mut x = to_xmm(*acc);
        let mut groups = blocks.chunks_exact(128);
        for g in &mut groups {
            let p = g.as_ptr();
            // SAFETY: `g` is 128 bytes.
            let (a, b) = unsafe {
                (
                    _mm512_loadu_si512(p.cast()),
                    _mm512_loadu_si512(p.add(64).cast()),
                )
            };
            let a = _mm512_shuffle_epi8(a, bswap);
            let b = _mm512_shuffle_epi8(b, bswap);
            // The running value joins block 0 (lane 0 of `a`).
            let a = _mm512_xor_si512(a, _mm512_zextsi128_si512(x));
            let lo = _mm512_xor_si512(
                _mm512_clmulepi64_epi128(a, h_hi, 0x00),
                _mm512_clmulepi64_epi128(b, h_lo, 0x00),
            );
            let mid = _mm512_ternarylogic_epi64(
                _mm512_clmulepi64_epi128(a, h_hi, 0x01),
                _mm512_clmulepi64_epi128(a, h_hi, 0x10),
                _mm512_xor_si512(
                    _mm512_clmulepi64_epi128(b, h_lo, 0x01),
                    _mm512_clmulepi64_epi128(b, h_lo, 0x10),
                ),
                0x96,
            );
            let hi = _mm512_xor_si512(
                _mm512_clmulepi64_epi128(a, h_hi, 0x11),
                _mm512_clmulepi64_epi128(b, h_lo, 0x11),
            );
            x = reduce(&[fold4(lo), fold4(mid), fold4(hi)]);
        }
        let mut rest = from_xmm(x);
        // SAFETY: the CPU has what `absorb_pclmul` needs; the remainder is
        // whole blocks.
        unsafe { absorb_pclmul(&mut rest, powers, groups.remainder()) };
        *acc = rest;
    }

    /// `absorb_portable` with VPCLMULQDQ on 256-bit vectors: each group of
    /// eight blocks is four vectors of two, multiplied lane by lane with
    /// (H^8, H^7) .. (H^2, H^1) in Karatsuba's three products; the lanes
    /// are folded to one before the reduction.
    ///
    /// # Safety
    /// The CPU must have VPCLMULQDQ, AVX2, PCLMULQDQ and SSSE3; `blocks`
    /// whole 16-byte blocks.
    #[target_feature(enable = "vpclmulqdq,avx2,pclmulqdq,ssse3")]
    pub unsafe fn absorb_vpclmul_avx2(acc: &mut u128, powers: &[u128; 8], blocks: &[u8]) {
        // Vector j holds blocks 2j and 2j + 1, which H^(8-2j) and
        // H^(7-2j) multiply.
        let pair = |a: u128, b: u128| _mm256_set_m128i(to_xmm(b), to_xmm(a));
        let h = [
            pair(powers[7], powers[6]),
            pair(powers[5], powers[4]),
            pair(powers[3], powers[2]),
            pair(powers[1], powers[0]),
        ];
        let added = |v: __m256i| _mm256_xor_si256(v, _mm256_shuffle_epi32(v, 0x4e));
        let hk = h.map(added);
        let bswap = _mm256_broadcastsi128_si256(bswap_mask());
        let fold2 =
            |v: __m256i| _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        let mut x = to_xmm(*acc);
        let mut groups = blocks.chunks_exact(128);
        for g in &mut groups {
            let p = g.as_ptr();
            let zero = _mm256_setzero_si256();
            let (mut lo, mut mid, mut hi) = (zero, zero, zero);
            for j in 0..4 {
                // SAFETY: `g` is 128 bytes.
                let v = unsafe { _mm256_loadu_si256(p.add(32 * j).cast()) };
                let mut v = _mm256_shuffle_epi8(v, bswap);
                if j == 0 {
                    // The running value joins block 0 (lane 0).
                    v = _mm256_xor_si256(v, _mm256_zextsi128_si256(x));
                }
                lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(v, h[j], 0x00));
                mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128(added(v), hk[j], 0x00));
                hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(v, h[j], 0x11));
            }
            x = reduce(&karatsuba_done([fold2(lo), fold2(mid), fold2(hi)]));
        }
        let mut rest = from_xmm(x);
        // SAFETY: the CPU has what `absorb_pclmul` needs; the remainder is
        // whole blocks.
        unsafe { absorb_pclmul(&mut rest, powers, groups.remainder()) };
        *acc = rest;
    }

    /// Four values as the 128-bit lanes 0..3 of a vector.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn lanes(a: u128, b: u128, c: u128, d: u128) -> __m512i {
        _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_set_m128i(to_xmm(b), to_xmm(a))),
            _mm256_set_m128i(to_xmm(d), to_xmm(c)),
            1,
        )
    }

    /// The XOR of a 512-bit vector's four 128-bit lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn fold4(v: __m512i) -> __m128i {
        let y = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
        _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::hex;
    use crate::test_support::unhex;
    use proptest::prelude::*;

    fn kernels() -> Vec<Kernel> {
        [
            Kernel::Vpclmul,
            Kernel::VpclmulAvx2,
            Kernel::Pclmul,
            Kernel::Portable,
        ]
        .into_iter()
        .filter(|k| k.available())
        .collect()
    }

    fn reference(h: &[u8], data: &[u8]) -> [u8; 16] {
        use cipher::KeyInit;
        use ghash::universal_hash::UniversalHash;
        let mut g = ghash::GHash::new_from_slice(h).unwrap();
        g.update_padded(data);
        g.finalize().into()
    }

    /// The GCM spec's (McGrew and Viega) test cases 2 and 4: GHASH of the
    /// ciphertext and the length block.
    #[test]
    fn gcm_spec_vectors() {
        let cases = [
            (
                "66e94bd4ef8a2c3b884cfa59ca342b2e",
                "0388dace60b6a392f328c2b971b2fe78",
                "",
                "f38cbb1ad69223dcc3457ae5b6b0f885",
            ),
            (
                "b83b533708bf535d0aa6e52980d53b78",
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
                "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                "698e57f70e6ecc7fd9463b7260a9ae5f",
            ),
        ];
        for k in kernels() {
            for (h, c, a, expect) in cases {
                let (h, c, a) = (unhex(h), unhex(c), unhex(a));
                let mut g = Ghash::with_kernel(k, &h).unwrap();
                g.update_padded(&a);
                g.update_padded(&c);
                let mut lens = [0u8; 16];
                lens[..8].copy_from_slice(&(a.len() as u64 * 8).to_be_bytes());
                lens[8..].copy_from_slice(&(c.len() as u64 * 8).to_be_bytes());
                g.update_padded(&lens);
                assert_eq!(hex(&g.finalize()), expect, "{k:?}");
            }
        }
    }

    #[test]
    fn bad_keys_are_refused() {
        assert!(Ghash::new(&[0; 15]).is_none());
        assert!(Ghash::new(&[0; 17]).is_none());
    }

    #[test]
    fn every_length_up_to_three_groups() {
        let mut h = [0u8; 16];
        crate::bytes::fill_pattern(&mut h, 11);
        let mut data = vec![0u8; 400];
        crate::bytes::fill_pattern(&mut data, 12);
        for k in kernels() {
            for len in 0..data.len() {
                let mut g = Ghash::with_kernel(k, &h).unwrap();
                g.update_padded(&data[..len]);
                assert_eq!(
                    g.finalize(),
                    reference(&h, &data[..len]),
                    "{k:?} length {len}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn same_as_the_ghash_crate(
            h in any::<[u8; 16]>(),
            blocks in proptest::collection::vec(any::<[u8; 16]>(), 0..300),
            cut in 0usize..300,
            tail in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let data = blocks.concat();
            let cut = 16 * cut.min(blocks.len());
            let mut whole = data.clone();
            whole.extend_from_slice(&tail);
            let expect = reference(&h, &whole);
            for k in kernels() {
                let mut g = Ghash::with_kernel(k, &h).unwrap();
                g.update_padded(&whole);
                prop_assert_eq!(g.finalize(), expect, "{:?} one call", k);
                let mut g = Ghash::with_kernel(k, &h).unwrap();
                g.update_padded(&data[..cut]);
                g.update_padded(&data[cut..]);
                g.update_padded(&tail);
                prop_assert_eq!(g.finalize(), expect, "{:?} in pieces", k);
            }
        }
    }
}
