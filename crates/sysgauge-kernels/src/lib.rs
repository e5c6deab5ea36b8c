//! sysgauge-kernels: the hand-written hash and cipher kernels, apart from the
//! benchmark logic that times them (`sysgauge-crypto`'s hash and crypto
//! families). Each module opens with why it is written by hand: what the
//! crate alternative lacks. The numbers behind those reasons are in
//! docs/performance.md.
//!
//! Every SIMD path is chosen at run time (`is_x86_feature_detected!`) and
//! has a portable fallback or a `None` that sends the caller to a crate, so
//! one binary runs on any x86-64 or aarch64 CPU. The `unsafe` in this crate
//! is the intrinsics (`core::arch`), called only after detection, the
//! `asm!` blocks of `mont512` (also after detection) and `rc4` (baseline
//! x86-64 instructions), and the empty `asm!` of the `opaque` barriers; the
//! families that use the kernels need none.
//!
//! - `sha512`: SHA-512 with an AVX2 schedule and BMI2 rounds;
//! - `md5`, `md4`: MD5 and MD4 with work taken off their dependency chains;
//! - `aes`: AES-CBC (AES-NI) and AES-CTR (VAES / AES-NI) encryption;
//! - `chacha_poly`: ChaCha20-Poly1305 with AVX-512 and IFMA;
//! - `ghash`: GHASH with PCLMULQDQ or VPCLMULQDQ, eight blocks per reduction;
//! - `rc4`, `blowfish`, `cast5`, `camellia`, `des`: scalar kernels shaped for
//!   their dependency chains (RC4 also in x86-64 assembly);
//! - `whirlpool`: Whirlpool with AVX-512 VBMI and GFNI, or in the
//!   eight-table form;
//! - `mont512`: 512-bit Montgomery multiplication (MULX/ADX) and the
//!   constant-time exponentiation of RSA-1024's CRT halves; `mont1024`: the
//!   1024-bit Montgomery arithmetic around them, from the same products;
//! - `opaque`: the optimisation barriers that keep an order of operations.

pub mod aes;
pub mod blake2b;
mod block64;
pub mod blowfish;
pub mod camellia;
pub mod cast5;
pub mod chacha_poly;
pub mod des;
pub mod ghash;
pub mod md4;
pub mod md5;
pub mod mont1024;
pub mod mont512;
pub mod opaque;
pub mod rc4;
pub mod sha512;
#[cfg(test)]
mod test_support;
pub mod whirlpool;

/// A big-endian `u32` from exactly four bytes (the block ciphers' word order).
#[inline(always)]
pub(crate) fn be32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(b);
    u32::from_be_bytes(a)
}

/// A big-endian `u64` from exactly eight bytes.
#[inline(always)]
pub(crate) fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_be_bytes(a)
}

/// Byte helpers the kernels' tests and the benchmark families share: the
/// deterministic fill every buffer starts from, and hex for digests.
pub mod bytes {
    /// Lowercase hex of a byte string.
    pub fn hex(bytes: &[u8]) -> String {
        use std::fmt::Write;
        bytes
            .iter()
            .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
    }

    /// A deterministic, incompressible-looking fill for benchmark buffers
    /// (xorshift64*): the same bytes on every machine, and no all-zero pages
    /// that the kernel or a compressor could treat specially.
    pub fn fill_pattern(buf: &mut [u8], seed: u64) {
        let mut x = seed | 1;
        for chunk in buf.chunks_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}
