//! ChaCha20-Poly1305 (RFC 8439) written for this project, for x86-64 CPUs
//! with AVX-512F, AVX-512VL and AVX-512 IFMA, chosen at run time; other CPUs
//! (and messages below `MIN_LEN`) keep aws-lc (see `crypto/symmetric.rs`).
//!
//! Why by hand: `openssl speed -evp chacha20-poly1305` is the reference the
//! crypto family is judged against, and OpenSSL 3.0 runs both halves with
//! AVX-512 on CPUs that have it. Every crate stops well short of it: aws-lc,
//! ring, and the RustCrypto `chacha20poly1305` AEAD even with the `chacha20`
//! crate's AVX-512 backend switched on (`--cfg chacha20_avx512`; its
//! `poly1305` is AVX2 at best). docs/performance.md has the numbers.
//!
//! How it is shaped, from RFC 8439 and the published descriptions of
//! vectorised ChaCha20 and Poly1305:
//! - ChaCha20 runs sixteen blocks at once, one block per 32-bit lane of the
//!   sixteen state words (`vprold` does the rotations), and a 16x16
//!   transpose turns the lanes back into consecutive 64-byte blocks. That
//!   keeps the two 512-bit vector ports about 90 % busy.
//! - Poly1305 keeps its accumulator in radix 2^44 (limbs of 44, 44 and 42
//!   bits), so each limb product is one pair of IFMA instructions
//!   (`vpmadd52luq`/`vpmadd52huq`, the low and high 52 bits of a 52x52-bit
//!   product). Each 128-byte group is eight blocks, one per 64-bit lane, and
//!   groups alternate between two sets of lanes, so there are sixteen
//!   independent Horner chains stepping by r^16 and one multiplication's
//!   latency hides behind the other's. At the end each lane is multiplied by
//!   the power of r its block's position calls for (r^16 ... r^1) and the
//!   lanes are summed, which gives the ordinary Poly1305 polynomial.
//! - The two are stitched: while the rounds of one sixteen-block batch run,
//!   the Poly1305 steps for the previous batch's ciphertext are interleaved
//!   with them, and batch 0's rounds carry the scalar rounds of the key
//!   block (counter 0) along on the scalar ports. Two passes (encrypt, then
//!   authenticate) would run the ChaCha20 and the IFMA work one after the
//!   other instead of side by side, and the key block alone would be a
//!   serial step before every message (docs/performance.md).
//! - Where the rounds alone fill the vector units (AVX-512 on 256-bit
//!   units, as Zen 4), the IFMA steps only wait behind them. There the
//!   other placement (`MacPlacement::ScalarChain`) runs part of Poly1305 as
//!   a scalar radix-2^64 chain on the integer units, a few blocks per
//!   double round, and the IFMA lanes absorb the rest after the rounds; the
//!   crypto family's trial picks whichever placement is faster.
//! - Messages of at most fifteen blocks get the key block and all their
//!   keystream from one batch (eight 256-bit lanes up to seven blocks).
//!   Other tails (below 1024 bytes of keystream, below 128 bytes of
//!   Poly1305 input) take unstitched and scalar paths.
//!
//! The portable one-block ChaCha20 and scalar Poly1305 (same radix) double
//! as the reference the tests check against RFC 8439's vectors; the tests
//! also compare whole seals with aws-lc on many lengths, AADs and keys.

/// `"expand 32-byte k"` as four little-endian words.
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The shortest message size the crypto family uses these kernels for.
/// Below it aws-lc is faster: its code for one to four blocks costs less
/// than the eight- or sixteen-lane batch here (the crossover is in
/// docs/performance.md).
pub const MIN_LEN: usize = 384;

/// A ChaCha20-Poly1305 key with its ChaCha20 input words prepared, and
/// where its long messages' Poly1305 work runs.
#[derive(Clone)]
pub struct ChaChaPoly {
    key: [u32; 8],
    mac: MacPlacement,
}

/// Where a long message's Poly1305 work runs beside the sixteen-block
/// ChaCha20 rounds. Which is faster depends on how much room the rounds
/// leave on the vector units, so the crypto family's trial picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacPlacement {
    /// All of it as IFMA steps interleaved with the rounds: for CPUs whose
    /// 512-bit units have room beside the rounds (full-width AVX-512).
    Lanes,
    /// Part on a scalar chain on the integer units, the rest in IFMA lanes
    /// after the rounds: for CPUs whose vector units the rounds fill
    /// (AVX-512 on 256-bit units, as Zen 4). Also needs BMI2 (`mulx`).
    ScalarChain,
}

impl MacPlacement {
    /// True when this CPU runs the kernels with this placement.
    pub fn available(self) -> bool {
        available()
            && match self {
                MacPlacement::Lanes => true,
                #[cfg(target_arch = "x86_64")]
                MacPlacement::ScalarChain => std::is_x86_feature_detected!("bmi2"),
                #[cfg(not(target_arch = "x86_64"))]
                MacPlacement::ScalarChain => false,
            }
    }
}

/// True when this CPU runs the AVX-512 kernels (otherwise callers use
/// another implementation).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl ChaChaPoly {
    /// A 32-byte key; `None` for another length or a CPU without the
    /// features the kernels need with this placement.
    pub fn new(key: &[u8], mac: MacPlacement) -> Option<ChaChaPoly> {
        if key.len() != 32 || !mac.available() {
            return None;
        }
        let mut k = [0u32; 8];
        for (w, c) in k.iter_mut().zip(key.chunks_exact(4)) {
            *w = le32(c);
        }
        Some(ChaChaPoly { key: k, mac })
    }

    /// Where this key's long messages run their Poly1305 work.
    pub fn placement(&self) -> MacPlacement {
        self.mac
    }

    /// Encrypt `buf` in place as one message and return its tag.
    pub fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let mut state = [0u32; 16];
        state[..4].copy_from_slice(&SIGMA);
        state[4..12].copy_from_slice(&self.key);
        for (w, c) in state[13..].iter_mut().zip(nonce.chunks_exact(4)) {
            *w = le32(c);
        }
        let len = buf.len();
        let (mut mac, rest) = encrypt_and_absorb(&state, aad, buf, self.mac);
        mac.update_padded(&buf[len - rest..]);
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
        lens[8..].copy_from_slice(&(len as u64).to_le_bytes());
        mac.update_padded(&lens);
        mac.finish()
    }
}

/// Derive the Poly1305 key (block 0), absorb the AAD, encrypt all of `buf`
/// (keystream from counter 1) and absorb its whole 128-byte groups when
/// there are enough of them to pay for the powers of r. Returns the MAC and
/// how many bytes at the end of `buf` are left to absorb.
fn encrypt_and_absorb(
    state: &[u32; 16],
    aad: &[u8],
    buf: &mut [u8],
    placement: MacPlacement,
) -> (Poly1305, usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if placement.available() {
            // SAFETY: the CPU has what the placement's kernels need
            // (AVX-512F and IFMA, and BMI2 for the scalar chain).
            return unsafe {
                if buf.len() <= x86::SHORT_BYTES {
                    x86::seal_short(state, aad, buf)
                } else if placement == MacPlacement::ScalarChain {
                    x86::seal_long_scalar(state, aad, buf)
                } else {
                    x86::seal_long(state, aad, buf)
                }
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = placement;
    portable_encrypt_and_absorb(state, aad, buf)
}

/// `encrypt_and_absorb` one block at a time, for builds without the
/// kernels (the crypto family does not use this AEAD there; the tests
/// check it everywhere).
fn portable_encrypt_and_absorb(state: &[u32; 16], aad: &[u8], buf: &mut [u8]) -> (Poly1305, usize) {
    let mut mac = Poly1305::new(&chacha20_block(state)[..32]);
    mac.update_padded(aad);
    portable_xor_keystream(state, 1, buf);
    (mac, buf.len())
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[inline(always)]
fn quarter_round(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

/// One ChaCha20 block (RFC 8439 section 2.3) of the 16-word input state
/// (constants, key, counter, nonce).
pub fn chacha20_block(input: &[u32; 16]) -> [u8; 64] {
    let mut x = *input;
    for _ in 0..10 {
        double_round(&mut x);
    }
    block_bytes(&x, input)
}

#[inline(always)]
fn double_round(x: &mut [u32; 16]) {
    quarter_round(x, 0, 4, 8, 12);
    quarter_round(x, 1, 5, 9, 13);
    quarter_round(x, 2, 6, 10, 14);
    quarter_round(x, 3, 7, 11, 15);
    quarter_round(x, 0, 5, 10, 15);
    quarter_round(x, 1, 6, 11, 12);
    quarter_round(x, 2, 7, 8, 13);
    quarter_round(x, 3, 4, 9, 14);
}

/// The block's bytes: the state after the rounds plus the input.
fn block_bytes(x: &[u32; 16], input: &[u32; 16]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for ((o, w), i) in out.chunks_exact_mut(4).zip(x.iter()).zip(input.iter()) {
        o.copy_from_slice(&w.wrapping_add(*i).to_le_bytes());
    }
    out
}

/// XOR the keystream of blocks `counter`, `counter + 1`, ... into `buf`.
pub fn xor_keystream(state: &[u32; 16], counter: u32, buf: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if available() {
            // SAFETY: the CPU has AVX-512F, all the kernel needs.
            unsafe { x86::xor_keystream16(state, counter, buf) };
            return;
        }
    }
    portable_xor_keystream(state, counter, buf);
}

fn portable_xor_keystream(state: &[u32; 16], counter: u32, buf: &mut [u8]) {
    let mut s = *state;
    for (i, block) in buf.chunks_mut(64).enumerate() {
        s[12] = counter.wrapping_add(i as u32);
        for (b, k) in block.iter_mut().zip(chacha20_block(&s).iter()) {
            *b ^= k;
        }
    }
}

/// A number mod 2^130 - 5 in radix 2^44: limbs of 44, 44 and 42 bits,
/// normally (a little above after a multiplication's partial carry, which
/// the next multiplication tolerates). Radix 2^44 is what the IFMA kernel
/// needs (its multiplier takes 52-bit inputs), and the scalar code shares
/// it so the state passes between the two unchanged.
type Limbs = [u64; 3];

const M44: u64 = (1 << 44) - 1;
const M42: u64 = (1 << 42) - 1;

/// `a * b mod 2^130 - 5`, partially reduced (RFC 8439 section 2.5 in limb
/// form). Limbs of `a` may be up to 2^46 and of `b` just above 2^44.
/// 2^132 = 4 * 2^130 is 20 mod p, which folds the upper products down.
fn mul_mod(a: &Limbs, b: &Limbs) -> Limbs {
    let [a0, a1, a2] = a.map(u128::from);
    let [b0, b1, b2] = b.map(u128::from);
    let (s1, s2) = (b1 * 20, b2 * 20);
    let d0 = a0 * b0 + a1 * s2 + a2 * s1;
    let mut d1 = a0 * b1 + a1 * b0 + a2 * s2;
    let mut d2 = a0 * b2 + a1 * b1 + a2 * b0;
    d1 += d0 >> 44;
    d2 += d1 >> 44;
    let mut h0 = (d0 as u64 & M44) + ((d2 >> 42) as u64) * 5;
    let h1 = (d1 as u64 & M44) + (h0 >> 44);
    h0 &= M44;
    [h0, h1, d2 as u64 & M42]
}

/// A 16-byte block as limbs, plus `top` at bit 128 (1 for every whole
/// block).
fn block_limbs(b: &[u8], top: u64) -> Limbs {
    let lo = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let hi = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    [
        lo & M44,
        ((lo >> 44) | (hi << 20)) & M44,
        (hi >> 24) | (top << 40),
    ]
}

/// Poly1305's running value in radix 2^64 (two full words and the bits from
/// 2^128 up), for the scalar chain one seal runs beside the vector ChaCha20.
/// A block costs four full products here against radix 2^44's nine, and
/// the carries are one add-with-carry chain, so the chain's latency per
/// block is shorter; the value passes to and from `Limbs` at the ends.
/// Only the x86-64 seal runs it; the tests check it on every target.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Radix64 {
    h: [u64; 3],
    r0: u64,
    r1: u64,
    /// 5 r1 / 4: r1's clamp clears its two low bits, and h1 r1 2^128 =
    /// h1 (r1 / 4) 2^130, which is 5 h1 (r1 / 4) mod p.
    s1: u64,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl Radix64 {
    fn new(h: &Limbs, r: &Limbs) -> Radix64 {
        let r = u128::from(r[0]) | u128::from(r[1]) << 44 | u128::from(r[2]) << 88;
        let (r0, r1) = (r as u64, (r >> 64) as u64);
        // h's top limb may be a little above 42 bits: its bits from 40 up
        // land at 2^128 and above.
        let low = u128::from(h[0]) + (u128::from(h[1]) << 44);
        let (v, carry) = low.overflowing_add(u128::from(h[2] & ((1 << 40) - 1)) << 88);
        Radix64 {
            h: [v as u64, (v >> 64) as u64, (h[2] >> 40) + u64::from(carry)],
            r0,
            r1,
            s1: r1 + (r1 >> 2),
        }
    }

    /// h = (h + block + 2^128) r, partially reduced: h[2] stays below 5.
    #[inline(always)]
    fn block(&mut self, m0: u64, m1: u64) {
        let wide = |a: u64, b: u64| u128::from(a) * u128::from(b);
        let t0 = u128::from(self.h[0]) + u128::from(m0);
        let t1 = u128::from(self.h[1]) + u128::from(m1) + (t0 >> 64);
        let (h0, h1) = (t0 as u64, t1 as u64);
        let h2 = self.h[2] + (t1 >> 64) as u64 + 1;
        let d0 = wide(h0, self.r0) + wide(h1, self.s1);
        let d1 = wide(h0, self.r1) + wide(h1, self.r0) + u128::from(h2 * self.s1) + (d0 >> 64);
        let w2 = h2 * self.r0 + (d1 >> 64) as u64;
        // The bits from 2^130 up, times 5, fold back to the bottom.
        let c = (w2 >> 2) + (w2 & !3);
        let t0 = u128::from(d0 as u64) + u128::from(c);
        let t1 = u128::from(d1 as u64) + (t0 >> 64);
        self.h = [t0 as u64, t1 as u64, (w2 & 3) + (t1 >> 64) as u64];
    }

    fn limbs(&self) -> Limbs {
        let [h0, h1, h2] = self.h;
        [
            h0 & M44,
            ((h0 >> 44) | (h1 << 20)) & M44,
            (h1 >> 24) | (h2 << 40),
        ]
    }
}

/// Poly1305 over whole 16-byte blocks (RFC 8439 section 2.5); the AEAD pads
/// every part to 16 bytes, so that is all it needs.
pub struct Poly1305 {
    r: Limbs,
    s: u128,
    h: Limbs,
}

impl Poly1305 {
    /// The 32-byte one-time key: r (clamped) and s.
    pub fn new(key: &[u8]) -> Poly1305 {
        let mut rb = [0u8; 16];
        rb.copy_from_slice(&key[..16]);
        let r = u128::from_le_bytes(rb) & 0x0fff_fffc_0fff_fffc_0fff_fffc_0fff_ffff;
        let mut sb = [0u8; 16];
        sb.copy_from_slice(&key[16..32]);
        Poly1305 {
            r: [r as u64 & M44, (r >> 44) as u64 & M44, (r >> 88) as u64],
            s: u128::from_le_bytes(sb),
            h: [0; 3],
        }
    }

    /// Absorb `data`, the last partial block padded with zeros to 16 bytes.
    pub fn update_padded(&mut self, data: &[u8]) {
        // The AVX-512 lanes take the whole 128-byte groups; the scalar loop
        // below takes what is left.
        #[cfg(target_arch = "x86_64")]
        let data = if data.len() >= x86::MIN_LANES_BYTES && available() {
            let groups = data.len() / 128;
            let (bulk, rest) = data.split_at(groups * 128);
            // SAFETY: the CPU has AVX-512F and IFMA.
            unsafe {
                let mut lanes = x86::PolyLanes::new(&self.h, &self.r);
                lanes.absorb(bulk);
                self.h = lanes.finish();
            }
            rest
        } else {
            data
        };
        let mut blocks = data.chunks_exact(16);
        for b in &mut blocks {
            self.block(b);
        }
        let tail = blocks.remainder();
        if !tail.is_empty() {
            let mut b = [0u8; 16];
            b[..tail.len()].copy_from_slice(tail);
            self.block(&b);
        }
    }

    fn block(&mut self, b: &[u8]) {
        self.block_with_top(b, 1);
    }

    fn block_with_top(&mut self, b: &[u8], top: u64) {
        let m = block_limbs(b, top);
        let a = [self.h[0] + m[0], self.h[1] + m[1], self.h[2] + m[2]];
        self.h = mul_mod(&a, &self.r);
    }

    /// A final partial block the way plain Poly1305 pads it (a 1 byte after
    /// the message, no 2^128 bit); the AEAD never needs it.
    #[cfg(test)]
    fn last_partial(&mut self, tail: &[u8]) {
        let mut b = [0u8; 16];
        b[..tail.len()].copy_from_slice(tail);
        b[tail.len()] = 1;
        self.block_with_top(&b, 0);
    }

    /// The tag: h fully reduced mod 2^130 - 5, plus s, mod 2^128.
    pub fn finish(&self) -> [u8; 16] {
        let mut h = self.h;
        // Two carry passes leave h0 < 2^44 + 5 and the other limbs within
        // their widths, so h < 2^130 + 5 and one conditional subtraction of
        // p is enough.
        for _ in 0..2 {
            h[1] += h[0] >> 44;
            h[0] &= M44;
            h[2] += h[1] >> 44;
            h[1] &= M44;
            h[0] += (h[2] >> 42) * 5;
            h[2] &= M42;
        }
        // g = h + 5 - 2^130; it is the answer when it is not negative.
        let g0 = h[0] + 5;
        let g1 = h[1] + (g0 >> 44);
        let g2 = h[2] + (g1 >> 44);
        let pick = if g2 >> 42 != 0 {
            [g0 & M44, g1 & M44, g2 & M42]
        } else {
            h
        };
        let v = u128::from(pick[0])
            .wrapping_add(u128::from(pick[1]) << 44)
            .wrapping_add(u128::from(pick[2]) << 88);
        v.wrapping_add(self.s).to_le_bytes()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Limbs, M42, M44};
    use std::arch::x86_64::*;

    /// Below this many bytes the powers of r cost more than the eight-lane
    /// Poly1305 saves.
    pub const MIN_LANES_BYTES: usize = 256;

    type V3 = [__m512i; 3];

    /// Lane `l` of a 128-byte group holds block [0, 4, 1, 5, 2, 6, 3, 7][l]
    /// (see `load_group`).
    const ORDER: [usize; 8] = [0, 4, 1, 5, 2, 6, 3, 7];

    /// One quarter round on word vectors `$a`, `$b`, `$c`, `$d` of `$x`, with
    /// the vector width's add, xor and rotate-left.
    macro_rules! quarter_round {
        ($x:ident, $add:ident, $xor:ident, $rol:ident; $a:literal, $b:literal, $c:literal, $d:literal) => {
            $x[$a] = $add($x[$a], $x[$b]);
            $x[$d] = $rol::<16>($xor($x[$d], $x[$a]));
            $x[$c] = $add($x[$c], $x[$d]);
            $x[$b] = $rol::<12>($xor($x[$b], $x[$c]));
            $x[$a] = $add($x[$a], $x[$b]);
            $x[$d] = $rol::<8>($xor($x[$d], $x[$a]));
            $x[$c] = $add($x[$c], $x[$d]);
            $x[$b] = $rol::<7>($xor($x[$b], $x[$c]));
        };
    }

    /// ChaCha's twenty rounds (ten double rounds) on the word vectors `$x`;
    /// `$after` runs after each quarter round, with `$k` the double round
    /// and `$s` the quarter round within it (0 to 7; 3 is between the
    /// column and the diagonal rounds).
    macro_rules! twenty_rounds {
        ($x:ident, $add:ident, $xor:ident, $rol:ident, $k:ident, $s:ident => $after:expr) => {
            for $k in 0..10 {
                quarter_round!($x, $add, $xor, $rol; 0, 4, 8, 12);
                { let $s = 0; $after; }
                quarter_round!($x, $add, $xor, $rol; 1, 5, 9, 13);
                { let $s = 1; $after; }
                quarter_round!($x, $add, $xor, $rol; 2, 6, 10, 14);
                { let $s = 2; $after; }
                quarter_round!($x, $add, $xor, $rol; 3, 7, 11, 15);
                { let $s = 3; $after; }
                quarter_round!($x, $add, $xor, $rol; 0, 5, 10, 15);
                { let $s = 4; $after; }
                quarter_round!($x, $add, $xor, $rol; 1, 6, 11, 12);
                { let $s = 5; $after; }
                quarter_round!($x, $add, $xor, $rol; 2, 7, 8, 13);
                { let $s = 6; $after; }
                quarter_round!($x, $add, $xor, $rol; 3, 4, 9, 14);
                { let $s = 7; $after; }
            }
        };
    }

    /// Run the twenty rounds over sixteen blocks (word `i` of block `b` in
    /// lane `b` of vector `i`) and add the input, calling `after(k, s)`
    /// after quarter round `s` of double round `k` (as `twenty_rounds!`)
    /// so that other work can be interleaved with the rounds.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn rounds16(
        state: &[u32; 16],
        counter: u32,
        mut after: impl FnMut(usize, usize),
    ) -> [__m512i; 16] {
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut input = state.map(|w| _mm512_set1_epi32(w as i32));
        input[12] = _mm512_add_epi32(_mm512_set1_epi32(counter as i32), lanes);
        let mut x = input;
        twenty_rounds!(x, _mm512_add_epi32, _mm512_xor_si512, _mm512_rol_epi32, k, s => after(k, s));
        for (xi, ii) in x.iter_mut().zip(input) {
            *xi = _mm512_add_epi32(*xi, ii);
        }
        x
    }

    /// `rounds16` on eight blocks in 256-bit registers, for short
    /// messages: the same instruction count for half the blocks, but
    /// 256-bit operations issue on three ports rather than two.
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    fn rounds8(state: &[u32; 16], counter: u32) -> [__m256i; 16] {
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut input = state.map(|w| _mm256_set1_epi32(w as i32));
        input[12] = _mm256_add_epi32(_mm256_set1_epi32(counter as i32), lanes);
        let mut x = input;
        twenty_rounds!(x, _mm256_add_epi32, _mm256_xor_si256, _mm256_rol_epi32, _k, _s => {});
        for (xi, ii) in x.iter_mut().zip(input) {
            *xi = _mm256_add_epi32(*xi, ii);
        }
        x
    }

    /// Turn word-per-vector lanes into block-per-vector: element `b` of the
    /// result is the 64 bytes of block `b`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn transpose16(x: &[__m512i; 16]) -> [__m512i; 16] {
        // Within each 128-bit lane, a 4x4 transpose of each group of four
        // words: t[g][i] lane k = words 4g..4g+3 of block 4k+i.
        let mut t = [[_mm512_setzero_si512(); 4]; 4];
        for (g, tg) in t.iter_mut().enumerate() {
            let (x0, x1, x2, x3) = (x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
            let a = _mm512_unpacklo_epi32(x0, x1);
            let b = _mm512_unpackhi_epi32(x0, x1);
            let c = _mm512_unpacklo_epi32(x2, x3);
            let d = _mm512_unpackhi_epi32(x2, x3);
            tg[0] = _mm512_unpacklo_epi64(a, c);
            tg[1] = _mm512_unpackhi_epi64(a, c);
            tg[2] = _mm512_unpacklo_epi64(b, d);
            tg[3] = _mm512_unpackhi_epi64(b, d);
        }
        // Then gather lane k of t[0..4][i] into block 4k+i.
        let mut out = [_mm512_setzero_si512(); 16];
        for i in 0..4 {
            let u = _mm512_shuffle_i32x4::<0x44>(t[0][i], t[1][i]);
            let v = _mm512_shuffle_i32x4::<0xee>(t[0][i], t[1][i]);
            let w = _mm512_shuffle_i32x4::<0x44>(t[2][i], t[3][i]);
            let z = _mm512_shuffle_i32x4::<0xee>(t[2][i], t[3][i]);
            out[i] = _mm512_shuffle_i32x4::<0x88>(u, w);
            out[4 + i] = _mm512_shuffle_i32x4::<0xdd>(u, w);
            out[8 + i] = _mm512_shuffle_i32x4::<0x88>(v, z);
            out[12 + i] = _mm512_shuffle_i32x4::<0xdd>(v, z);
        }
        out
    }

    /// XOR sixteen blocks of keystream into the 1024 bytes at `p`.
    ///
    /// # Safety
    /// `p` must point to 1024 readable and writable bytes.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn xor_batch(p: *mut u8, x: &[__m512i; 16]) {
        for (b, k) in transpose16(x).iter().enumerate() {
            // SAFETY: bytes 64b..64b+64 of the caller's 1024; unaligned.
            unsafe {
                let q = p.add(64 * b).cast::<__m512i>();
                _mm512_storeu_si512(q, _mm512_xor_si512(_mm512_loadu_si512(q), *k));
            }
        }
    }

    /// ChaCha20 keystream XORed into `buf`, sixteen blocks per batch.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn xor_keystream16(state: &[u32; 16], mut counter: u32, buf: &mut [u8]) {
        let mut batches = buf.chunks_exact_mut(1024);
        for batch in &mut batches {
            // SAFETY: `batch` is 1024 bytes.
            unsafe { xor_batch(batch.as_mut_ptr(), &rounds16(state, counter, |_, _| {})) };
            counter = counter.wrapping_add(16);
        }
        let rest = batches.into_remainder();
        if rest.is_empty() {
            return;
        }
        let ks = transpose16(&rounds16(state, counter, |_, _| {}));
        let mut stream = [0u8; 1024];
        for (b, k) in ks.iter().enumerate() {
            // SAFETY: `stream` is 1024 bytes; unaligned store of 64 bytes at
            // 64b for b < 16.
            unsafe { _mm512_storeu_si512(stream.as_mut_ptr().add(64 * b).cast(), *k) };
        }
        for (x, k) in rest.iter_mut().zip(stream.iter()) {
            *x ^= k;
        }
    }

    /// The longest message one batch covers together with the key block.
    pub const SHORT_BYTES: usize = 15 * 64;

    /// Everything `encrypt_and_absorb` does, for a message of at most
    /// `SHORT_BYTES`: one batch makes the key block (counter 0) and all the
    /// keystream (counters 1 to 15), so a short message costs one batch
    /// rather than a batch and a scalar block.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and IFMA.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512ifma")]
    pub unsafe fn seal_short(
        state: &[u32; 16],
        aad: &[u8],
        buf: &mut [u8],
    ) -> (super::Poly1305, usize) {
        let mut stream = [0u8; 1024];
        if buf.len() <= 7 * 64 {
            // Key block and up to seven blocks: eight lanes. The words come
            // out word-major (word i of block b at 8i + b) and are put in
            // block order one by one; for at most 512 bytes that costs less
            // than a transpose would save.
            let mut words = [0u32; 128];
            for (i, v) in rounds8(state, 0).iter().enumerate() {
                // SAFETY: `words` has 128 entries; 32 bytes at 8i for i < 16.
                unsafe { _mm256_storeu_si256(words.as_mut_ptr().add(8 * i).cast(), *v) };
            }
            for (j, out) in stream[..512].chunks_exact_mut(4).enumerate() {
                out.copy_from_slice(&words[8 * (j % 16) + j / 16].to_le_bytes());
            }
        } else {
            let ks = transpose16(&rounds16(state, 0, |_, _| {}));
            for (b, k) in ks.iter().enumerate() {
                // SAFETY: `stream` is 1024 bytes; unaligned store of 64 bytes
                // at 64b for b < 16.
                unsafe { _mm512_storeu_si512(stream.as_mut_ptr().add(64 * b).cast(), *k) };
            }
        }
        for (x, k) in buf.iter_mut().zip(stream[64..].iter()) {
            *x ^= k;
        }
        let mut mac = super::Poly1305::new(&stream[..32]);
        mac.update_padded(aad);
        if buf.len() < MIN_LANES_BYTES {
            return (mac, buf.len());
        }
        let groups = buf.len() / 128;
        let mut pl = PolyLanes::new(&mac.h, &mac.r);
        pl.absorb(&buf[..groups * 128]);
        mac.h = pl.finish();
        (mac, buf.len() - groups * 128)
    }

    /// Batch 0 of `buf` (when it holds a whole one) with the key block's
    /// scalar rounds carried along, one double round each, on the scalar
    /// ports the vector code leaves idle; then the MAC keyed from the key
    /// block, with the AAD absorbed.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and IFMA.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    unsafe fn first_batch(state: &[u32; 16], aad: &[u8], buf: &mut [u8]) -> super::Poly1305 {
        let mut key_block = *state;
        if buf.len() >= 1024 {
            let x = rounds16(state, 1, |_, s| {
                if s == 3 {
                    super::double_round(&mut key_block);
                }
            });
            // SAFETY: batch 0 is bytes 0..1024 of `buf`.
            unsafe { xor_batch(buf.as_mut_ptr(), &x) };
        } else {
            for _ in 0..10 {
                super::double_round(&mut key_block);
            }
        }
        let mut mac = super::Poly1305::new(&super::block_bytes(&key_block, state)[..32]);
        mac.update_padded(aad);
        mac
    }

    /// Everything `encrypt_and_absorb` does, for messages longer than
    /// `SHORT_BYTES`.
    ///
    /// Batch 0 as `first_batch`. Then the Poly1305 steps for batch k run
    /// inside the rounds of batch k + 1, one 128-byte group per double
    /// round from the third on (the first two leave the powers of r,
    /// computed just before, time to finish). Tails take the unstitched
    /// paths.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and IFMA.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub unsafe fn seal_long(
        state: &[u32; 16],
        aad: &[u8],
        buf: &mut [u8],
    ) -> (super::Poly1305, usize) {
        let n = buf.len() / 1024;
        // SAFETY: the CPU has AVX-512F and IFMA.
        let mut mac = unsafe { first_batch(state, aad, buf) };
        let p = buf.as_mut_ptr();
        let mut pl = PolyLanes::new(&mac.h, &mac.r);
        for k in 1..n {
            // SAFETY: batch k - 1, bytes 1024(k-1)..1024k, is in `buf`.
            let prev = unsafe { p.add(1024 * (k - 1)) };
            let x = rounds16(state, 1u32.wrapping_add(16 * k as u32), |dr, s| {
                if s == 3 && dr >= 2 {
                    // SAFETY: group dr - 2 < 8 of batch k - 1. Groups go to
                    // the two sets of lanes in turn, as `absorb` feeds them.
                    let m = unsafe { load_group(prev.add(128 * (dr - 2))) };
                    if dr % 2 == 0 {
                        pl.step_a(&m);
                    } else {
                        pl.step_b(&m);
                    }
                }
            });
            // SAFETY: batch k is bytes 1024k..1024(k+1) of `buf`.
            unsafe { xor_batch(p.add(1024 * k), &x) };
        }
        let (head, tail) = buf.split_at_mut(1024 * n);
        if n > 0 {
            pl.absorb(&head[1024 * (n - 1)..]);
        }
        // SAFETY: the CPU has AVX-512F.
        unsafe { xor_keystream16(state, 1u32.wrapping_add(16 * n as u32), tail) };
        let groups = tail.len() / 128;
        pl.absorb(&tail[..groups * 128]);
        mac.h = pl.finish();
        (mac, tail.len() - groups * 128)
    }

    /// The scalar chain's share per double round: four 16-byte blocks,
    /// one after every other quarter round (about as long as the double
    /// round's 96 vector operations take on Zen 4). Measured there as the
    /// median ratio to the `Lanes` placement over interleaved 8 KiB seals:
    /// 3, 4 and 5 blocks gave 1.07, 1.06 and 1.02 in a noisy spell, and 4
    /// about 1.17 in quiet ones (docs/performance.md).
    const SCALAR_BLOCKS: usize = 4;

    /// `seal_long` for CPUs whose vector units the ChaCha20 rounds already
    /// fill (AVX-512 on 256-bit units, as Zen 4): there the IFMA steps
    /// only queue behind the rounds. Instead a scalar Poly1305 chain
    /// (`Radix64`, on the integer units the rounds leave idle) takes
    /// `SCALAR_BLOCKS` blocks of the ciphertext so far in every double
    /// round, and the eight-lane code absorbs whatever it has not reached
    /// at the end.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, IFMA and BMI2.
    #[target_feature(enable = "avx512f,avx512ifma,bmi2")]
    pub unsafe fn seal_long_scalar(
        state: &[u32; 16],
        aad: &[u8],
        buf: &mut [u8],
    ) -> (super::Poly1305, usize) {
        let n = buf.len() / 1024;
        let len = buf.len();
        // SAFETY: the CPU has AVX-512F and IFMA.
        let mut mac = unsafe { first_batch(state, aad, buf) };
        let p = buf.as_mut_ptr();
        let mut chain = super::Radix64::new(&mac.h, &mac.r);
        // The chain stays behind the ciphertext: by the end of batch k it
        // has taken 160 SCALAR_BLOCKS k bytes, and batches 0 to k - 1 (1024 k
        // bytes) are done. No test in the loop, so the compiler can spread
        // the scalar steps among the vector ones.
        const { assert!(SCALAR_BLOCKS * 10 * 16 <= 1024) };
        let mut done = 0;
        for k in 1..n {
            let x = rounds16(state, 1u32.wrapping_add(16 * k as u32), |_, step| {
                if step * SCALAR_BLOCKS % 8 < SCALAR_BLOCKS {
                    // SAFETY: bytes done..done + 16 lie below 1024 k (see
                    // above), inside `buf`; unaligned reads.
                    let (m0, m1) = unsafe {
                        (
                            p.add(done).cast::<u64>().read_unaligned(),
                            p.add(done + 8).cast::<u64>().read_unaligned(),
                        )
                    };
                    chain.block(u64::from_le(m0), u64::from_le(m1));
                    done += 16;
                }
            });
            // SAFETY: batch k is bytes 1024k..1024(k+1) of `buf`.
            unsafe { xor_batch(p.add(1024 * k), &x) };
        }
        mac.h = chain.limbs();
        // SAFETY: the CPU has AVX-512F.
        unsafe {
            xor_keystream16(
                state,
                1u32.wrapping_add(16 * n as u32),
                &mut buf[1024 * n..],
            )
        };
        let groups = (len - done) / 128;
        if groups > 0 {
            let mut pl = PolyLanes::new(&mac.h, &mac.r);
            pl.absorb(&buf[done..done + groups * 128]);
            mac.h = pl.finish();
        }
        (mac, len - done - groups * 128)
    }

    /// One multiplication of eight lanes of radix-2^44 numbers by `r`
    /// (`s` = 20 r, for the products that wrap past 2^130), then a partial
    /// carry. IFMA returns the low and the high 52 bits of each 104-bit
    /// product separately; a high half weighs 2^52 = 2^44 * 2^8 relative to
    /// its limb, so it joins the next limb shifted left by 8 (and the top
    /// limb's, at 2^140 = 5120 mod p, the bottom one).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn mul8(x: &V3, r: &V3, s: &V3) -> V3 {
        let z = _mm512_setzero_si512();
        let lo = |acc, a, b| _mm512_madd52lo_epu64(acc, a, b);
        let hi = |acc, a, b| _mm512_madd52hi_epu64(acc, a, b);
        let l0 = lo(lo(lo(z, x[0], r[0]), x[1], s[2]), x[2], s[1]);
        let h0 = hi(hi(hi(z, x[0], r[0]), x[1], s[2]), x[2], s[1]);
        let l1 = lo(lo(lo(z, x[0], r[1]), x[1], r[0]), x[2], s[2]);
        let h1 = hi(hi(hi(z, x[0], r[1]), x[1], r[0]), x[2], s[2]);
        let l2 = lo(lo(lo(z, x[0], r[2]), x[1], r[1]), x[2], r[0]);
        let h2 = hi(hi(hi(z, x[0], r[2]), x[1], r[1]), x[2], r[0]);
        let add = |a, b| _mm512_add_epi64(a, b);
        // Rotations stand in for left shifts here (the bits rotated out are
        // zero): LLVM merges two shifts and an add into a 64-bit multiply,
        // which AVX-512F lacks and emulates with three more instructions.
        let mut d0 = add(
            l0,
            add(_mm512_rol_epi64::<12>(h2), _mm512_rol_epi64::<10>(h2)),
        );
        let mut d1 = add(l1, _mm512_slli_epi64::<8>(h0));
        let mut d2 = add(l2, _mm512_slli_epi64::<8>(h1));
        let m44 = _mm512_set1_epi64(M44 as i64);
        let m42 = _mm512_set1_epi64(M42 as i64);
        d1 = add(d1, _mm512_srli_epi64::<44>(d0));
        d0 = _mm512_and_si512(d0, m44);
        d2 = add(d2, _mm512_srli_epi64::<44>(d1));
        d1 = _mm512_and_si512(d1, m44);
        let c = _mm512_srli_epi64::<42>(d2);
        d2 = _mm512_and_si512(d2, m42);
        // The bottom limb stays a little above 2^44 (by at most 5 * 2^15):
        // the next multiplication takes it as it is.
        d0 = add(d0, add(c, _mm512_rol_epi64::<2>(c)));
        [d0, d1, d2]
    }

    /// 20 times each limb (exact: limbs stay below 2^46, products below
    /// 2^52).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn times20(r: &V3) -> V3 {
        let k = _mm512_set1_epi64(20);
        let z = _mm512_setzero_si512();
        r.map(|v| _mm512_madd52lo_epu64(z, v, k))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add3(a: &V3, b: &V3) -> V3 {
        [
            _mm512_add_epi64(a[0], b[0]),
            _mm512_add_epi64(a[1], b[1]),
            _mm512_add_epi64(a[2], b[2]),
        ]
    }

    /// The eight blocks of the 128-byte group at `p` as limb vectors (with
    /// the 2^128 bit). The two 64-byte loads hold blocks 0-3 and 4-7;
    /// unpacking their 64-bit halves puts block `ORDER[l]` in lane l.
    ///
    /// # Safety
    /// `p` must point to 128 readable bytes.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load_group(p: *const u8) -> V3 {
        // SAFETY: the caller guarantees 128 readable bytes; unaligned loads.
        let (a, b) = unsafe {
            (
                _mm512_loadu_si512(p.cast()),
                _mm512_loadu_si512(p.add(64).cast()),
            )
        };
        let lo = _mm512_unpacklo_epi64(a, b);
        let hi = _mm512_unpackhi_epi64(a, b);
        let m44 = _mm512_set1_epi64(M44 as i64);
        // (lo >> 44 | hi << 20) & m44 as one ternary logic operation.
        let m1 = _mm512_ternarylogic_epi64::<0xa8>(
            _mm512_srli_epi64::<44>(lo),
            _mm512_slli_epi64::<20>(hi),
            m44,
        );
        [
            _mm512_and_si512(lo, m44),
            m1,
            _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40)),
        ]
    }

    /// Sixteen Poly1305 Horner chains in two sets of eight lanes, `a` and
    /// `b`, each stepping by r^16 (acc = acc * r^16 + group). Groups go to
    /// `a` and `b` in turn, and the set that took the latest group is kept
    /// in `b`, so at the end `b`'s lanes need r^(8 - block) and `a`'s
    /// r^(16 - block). The running value h from before joins the first
    /// group's block 0 (`pending`), which is where it belongs: it must end
    /// up multiplied by the same power as that block.
    #[derive(Clone)]
    pub struct PolyLanes {
        a: V3,
        b: V3,
        pending: V3,
        fed: bool,
        h: Limbs,
        r16: V3,
        s16: V3,
        f8: V3,
        f16: V3,
    }

    impl PolyLanes {
        /// Start from the running value `h`, for the key `r`. The powers
        /// come from the eight-lane multiplication itself (a prefix product
        /// over the lanes in three steps), which is shorter than scalar
        /// multiplications and keeps them in registers.
        #[target_feature(enable = "avx512f,avx512ifma")]
        pub fn new(h: &Limbs, r: &Limbs) -> PolyLanes {
            let z = _mm512_setzero_si512();
            let one: V3 = [_mm512_set1_epi64(1), z, z];
            let rv: V3 = r.map(|l| _mm512_set1_epi64(l as i64));
            let blend = |k: __mmask8, b: &V3| -> V3 {
                std::array::from_fn(|i| _mm512_mask_blend_epi64(k, one[i], b[i]))
            };
            let lane = |v: &V3, l: i64| -> V3 {
                let idx = _mm512_set1_epi64(l);
                v.map(|x| _mm512_permutexvar_epi64(idx, x))
            };
            let mul = |x: &V3, r: &V3| mul8(x, r, &times20(r));
            // Lane l of x3 is r^(l + 1).
            let x1 = mul(&rv, &blend(0xaa, &rv));
            let x2 = mul(&x1, &blend(0xcc, &lane(&x1, 1)));
            let x3 = mul(&x2, &blend(0xf0, &lane(&x2, 3)));
            let r8 = lane(&x3, 7);
            // Lane l needs r^(8 - ORDER[l]), lane 7 - ORDER[l] of x3.
            let o = ORDER.map(|b| 7 - b as i64);
            let idx = _mm512_setr_epi64(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]);
            let f8 = x3.map(|x| _mm512_permutexvar_epi64(idx, x));
            let r16 = mul(&r8, &r8);
            PolyLanes {
                a: [z; 3],
                b: [z; 3],
                pending: h.map(|l| _mm512_maskz_set1_epi64(1, l as i64)),
                fed: false,
                h: *h,
                s16: times20(&r16),
                r16,
                f16: mul(&f8, &r8),
                f8,
            }
        }

        /// Feed a group to set `a`.
        #[inline]
        #[target_feature(enable = "avx512f,avx512ifma")]
        pub fn step_a(&mut self, m: &V3) {
            let m = if self.fed {
                *m
            } else {
                self.fed = true;
                add3(m, &self.pending)
            };
            self.a = add3(&mul8(&self.a, &self.r16, &self.s16), &m);
        }

        /// Feed a group to set `b` (only right after `step_a`).
        #[inline]
        #[target_feature(enable = "avx512f,avx512ifma")]
        pub fn step_b(&mut self, m: &V3) {
            self.b = add3(&mul8(&self.b, &self.r16, &self.s16), m);
        }

        /// Feed `data`, whole 128-byte groups.
        #[target_feature(enable = "avx512f,avx512ifma")]
        pub fn absorb(&mut self, data: &[u8]) {
            let mut pairs = data.chunks_exact(256);
            for pair in &mut pairs {
                // SAFETY: `pair` is 256 bytes, two groups.
                let (m0, m1) = unsafe {
                    (
                        load_group(pair.as_ptr()),
                        load_group(pair.as_ptr().add(128)),
                    )
                };
                self.step_a(&m0);
                self.step_b(&m1);
            }
            let rest = pairs.remainder();
            if rest.len() >= 128 {
                // SAFETY: `rest` holds at least one group.
                let m = unsafe { load_group(rest.as_ptr()) };
                self.step_a(&m);
                std::mem::swap(&mut self.a, &mut self.b);
            }
        }

        /// The running value after everything fed, for the scalar code.
        #[target_feature(enable = "avx512f,avx512ifma")]
        pub fn finish(&self) -> Limbs {
            if !self.fed {
                return self.h;
            }
            let a = mul8(&self.a, &self.f16, &times20(&self.f16));
            let b = mul8(&self.b, &self.f8, &times20(&self.f8));
            let acc = add3(&a, &b);
            // Sum the lanes (each limb below 2^46, so the sums stay below
            // 2^50) and carry back to the scalar form.
            let mut t = [0u64; 3];
            for (ti, v) in t.iter_mut().zip(acc) {
                let mut lanes = [0u64; 8];
                // SAFETY: `lanes` is 64 writable bytes; unaligned store.
                unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), v) };
                *ti = lanes.iter().sum();
            }
            t[1] += t[0] >> 44;
            t[0] &= M44;
            t[2] += t[1] >> 44;
            t[1] &= M44;
            t[0] += (t[2] >> 42) * 5;
            t[2] &= M42;
            t[1] += t[0] >> 44;
            t[0] &= M44;
            t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::hex;
    use crate::test_support::unhex;
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};

    fn state(key: &[u8], counter: u32, nonce: &[u8]) -> [u32; 16] {
        let mut s = [0u32; 16];
        s[..4].copy_from_slice(&SIGMA);
        for (w, c) in s[4..12].iter_mut().zip(key.chunks_exact(4)) {
            *w = le32(c);
        }
        s[12] = counter;
        for (w, c) in s[13..].iter_mut().zip(nonce.chunks_exact(4)) {
            *w = le32(c);
        }
        s
    }

    /// A small deterministic generator for the randomized comparisons.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn fill(&mut self, b: &mut [u8]) {
            for x in b {
                *x = self.next() as u8;
            }
        }
    }

    fn aws_seal(key: &[u8], nonce: [u8; 12], aad: &[u8], buf: &mut [u8]) -> Vec<u8> {
        let k = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).unwrap());
        k.seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::from(aad), buf)
            .unwrap()
            .as_ref()
            .to_vec()
    }

    #[test]
    fn rfc8439_block_function() {
        // Section 2.3.2.
        let key: Vec<u8> = (0u8..32).collect();
        let nonce = unhex("000000090000004a00000000");
        let out = chacha20_block(&state(&key, 1, &nonce));
        assert_eq!(
            hex(&out),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e\
             d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        );
    }

    #[test]
    fn rfc8439_encryption_and_the_vector_keystream() {
        // Section 2.4.2: counter 1, the "sunscreen" plaintext.
        let key: Vec<u8> = (0u8..32).collect();
        let nonce = unhex("000000000000004a00000000");
        let plain = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let expect = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b\
                      f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8\
                      07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736\
                      5af90bbf74a35be6b40b8eedf2785e42874d";
        let s = state(&key, 0, &nonce);
        let mut buf = plain.to_vec();
        xor_keystream(&s, 1, &mut buf);
        assert_eq!(hex(&buf), expect.replace(' ', ""));
        // The sixteen-lane kernel against the one-block function on several
        // batches, a partial one and a counter that wraps inside a batch.
        for counter in [0u32, 1, 7, u32::MAX - 5] {
            let mut fast = vec![0u8; 64 * 37 + 9];
            xor_keystream(&s, counter, &mut fast);
            let mut st = s;
            for (i, block) in fast.chunks(64).enumerate() {
                st[12] = counter.wrapping_add(i as u32);
                let b = chacha20_block(&st);
                assert_eq!(block, &b[..block.len()], "block {i} from counter {counter}");
            }
        }
    }

    #[test]
    fn the_portable_path_seals_like_aws_lc() {
        // Runs on every CPU: the one-block ChaCha20 and scalar Poly1305 as a
        // whole AEAD, with the padding and length block of `seal`.
        let mut rng = Rng(7);
        for len in [0usize, 1, 15, 16, 17, 64, 100, 1000, 2100] {
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            let mut nonce = [0u8; 12];
            rng.fill(&mut nonce);
            let mut aad = vec![0u8; len % 37];
            rng.fill(&mut aad);
            let mut plain = vec![0u8; len];
            rng.fill(&mut plain);
            let mut s = state(&key, 0, &nonce);
            s[12] = 0;
            let mut ours = plain.clone();
            let (mut mac, rest) = portable_encrypt_and_absorb(&s, &aad, &mut ours);
            mac.update_padded(&ours[len - rest..]);
            let mut lens = [0u8; 16];
            lens[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
            lens[8..].copy_from_slice(&(len as u64).to_le_bytes());
            mac.update_padded(&lens);
            let mut theirs = plain.clone();
            let their_tag = aws_seal(&key, nonce, &aad, &mut theirs);
            assert!(ours == theirs, "ciphertext differs at length {len}");
            assert_eq!(hex(&mac.finish()), hex(&their_tag), "length {len}");
        }
    }

    #[test]
    fn rfc8439_poly1305() {
        // Section 2.5.2.
        let key = unhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        let mut p = Poly1305::new(&key);
        let msg = b"Cryptographic Forum Research Group";
        p.update_padded(&msg[..32]);
        p.last_partial(&msg[32..]);
        assert_eq!(hex(&p.finish()), "a8061dc1305136c6c22b8baf0c0127a9");
    }

    #[test]
    fn poly1305_reduces_values_near_the_modulus() {
        // RFC 8439 appendix A.3 test vectors 5, 6, 7 and 11: accumulators
        // that end at or just past 2^130 - 5.
        let cases = [
            (
                "0200000000000000000000000000000000000000000000000000000000000000",
                "ffffffffffffffffffffffffffffffff",
                "03000000000000000000000000000000",
            ),
            (
                "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
                "02000000000000000000000000000000",
                "03000000000000000000000000000000",
            ),
            (
                "0100000000000000000000000000000000000000000000000000000000000000",
                "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff11000000000000000000000000000000",
                "05000000000000000000000000000000",
            ),
            (
                "0100000000000000040000000000000000000000000000000000000000000000",
                "e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000",
                "14000000000000005500000000000000",
            ),
        ];
        for (key, msg, tag) in cases {
            let mut p = Poly1305::new(&unhex(key));
            p.update_padded(&unhex(msg));
            assert_eq!(hex(&p.finish()), tag, "key {key}");
        }
    }

    #[test]
    fn rfc8439_aead() {
        if !available() {
            eprintln!("note: no AVX-512 IFMA on this CPU; the AEAD is not used here");
            return;
        }
        // Section 2.8.2.
        let key = unhex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
        let nonce: [u8; 12] = unhex("070000004041424344454647")
            .try_into()
            .unwrap_or_else(|_| panic!("nonce"));
        let aad = unhex("50515253c0c1c2c3c4c5c6c7");
        let plain = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        for placement in placements() {
            let c = ChaChaPoly::new(&key, placement).unwrap_or_else(|| panic!("key"));
            let mut buf = plain.to_vec();
            let tag = c.seal(&nonce, &aad, &mut buf);
            assert_eq!(
                hex(&buf),
                "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6\
                 3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36\
                 92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc\
                 3ff4def08e4b7a9de576d26586cec64b6116",
                "{placement:?}"
            );
            assert_eq!(
                hex(&tag),
                "1ae10b594f09e26a7e902ecbd0600691",
                "{placement:?}"
            );
        }
    }

    /// The placements this CPU runs.
    fn placements() -> Vec<MacPlacement> {
        [MacPlacement::Lanes, MacPlacement::ScalarChain]
            .into_iter()
            .filter(|p| p.available())
            .collect()
    }

    #[test]
    fn seals_like_aws_lc() {
        if !available() {
            eprintln!("note: no AVX-512 IFMA on this CPU; the AEAD is not used here");
            return;
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut lengths: Vec<usize> = (0..=600).collect();
        lengths.extend([
            700, 959, 960, 961, 1023, 1024, 1025, 2047, 4096, 8191, 8192, 8193, 12345, 16384, 16400,
        ]);
        for (n, (&len, placement)) in lengths
            .iter()
            .flat_map(|len| placements().into_iter().map(move |p| (len, p)))
            .enumerate()
        {
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            let mut nonce = [0u8; 12];
            rng.fill(&mut nonce);
            // No AAD, short AADs of every tail length, and long ones that
            // take the eight-lane path.
            let aad_len = match n % 4 {
                0 => 0,
                1 => n % 17,
                2 => 13 + n % 200,
                _ => 512 + n % 300,
            };
            let mut aad = vec![0u8; aad_len];
            rng.fill(&mut aad);
            let mut plain = vec![0u8; len];
            rng.fill(&mut plain);
            let mut ours = plain.clone();
            let c = ChaChaPoly::new(&key, placement).unwrap_or_else(|| panic!("key"));
            let tag = c.seal(&nonce, &aad, &mut ours);
            let mut theirs = plain.clone();
            let their_tag = aws_seal(&key, nonce, &aad, &mut theirs);
            let case = format!("length {len}, aad {aad_len}, {placement:?}");
            assert!(ours == theirs, "ciphertext differs at {case}");
            assert_eq!(hex(&tag), hex(&their_tag), "{case}");
        }
    }

    #[test]
    fn poly1305_lanes_match_one_block_at_a_time() {
        // All-ones blocks and keys push every limb to its largest value.
        let mut rng = Rng(42);
        for round in 0..40 {
            let mut key = [0xffu8; 32];
            if round % 2 == 1 {
                rng.fill(&mut key);
            }
            let len = 16 * (1 + rng.next() as usize % 200);
            let mut data = vec![0xffu8; len];
            if round % 3 == 1 {
                rng.fill(&mut data);
            }
            let mut fast = Poly1305::new(&key);
            fast.update_padded(&data);
            let mut slow = Poly1305::new(&key);
            for b in data.chunks(16) {
                slow.update_padded(b);
            }
            assert_eq!(hex(&fast.finish()), hex(&slow.finish()), "length {len}");
        }
    }

    #[test]
    fn the_scalar_chain_matches_the_limb_code() {
        // All-ones keys and blocks, and starting values with every limb at
        // or above its width, run every carry path of `Radix64`.
        let mut rng = Rng(7);
        for round in 0..40u64 {
            let mut key = [0xffu8; 32];
            if round % 2 == 1 {
                rng.fill(&mut key);
            }
            let mut data = vec![0xffu8; 16 * (1 + 7 * round as usize)];
            if round % 3 == 1 {
                rng.fill(&mut data);
            }
            let mut slow = Poly1305::new(&key);
            slow.h = if round % 4 == 0 {
                [M44 + (5 << 15), M44, (1 << 43) - 1]
            } else {
                [rng.next() & M44, rng.next() & M44, rng.next() & M42]
            };
            let mut fast = Poly1305::new(&key);
            fast.h = slow.h;
            let mut chain = Radix64::new(&fast.h, &fast.r);
            for b in data.chunks_exact(16) {
                let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
                chain.block(word(0), word(8));
            }
            slow.update_padded(&data);
            fast.h = chain.limbs();
            assert_eq!(hex(&fast.finish()), hex(&slow.finish()), "round {round}");
            // The limbs it hands on are in range for the limb code.
            fast.update_padded(&data[..16]);
            slow.update_padded(&data[..16]);
            assert_eq!(
                hex(&fast.finish()),
                hex(&slow.finish()),
                "round {round}, after"
            );
        }
    }

    #[test]
    fn other_key_lengths_are_refused() {
        for placement in [MacPlacement::Lanes, MacPlacement::ScalarChain] {
            assert!(ChaChaPoly::new(&[0u8; 16], placement).is_none());
        }
    }
}
