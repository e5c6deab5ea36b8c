//! AES-CBC encryption and AES-CTR written for this project, for x86-64 CPUs
//! with AES-NI (CBC) and VAES (CTR), chosen at run time.
//!
//! Why by hand: `openssl speed` is the reference the crypto family is judged
//! against, and no crate matches it, for these reasons (the comparison is
//! in docs/performance.md):
//! - CBC encryption is one long dependency chain (each block needs the
//!   previous ciphertext), so its speed is the latency of the AES rounds.
//!   OpenSSL's loop spends one extra XOR per block on that chain (plaintext
//!   and chaining value). Here the XOR with the next plaintext is folded into
//!   the last round key instead (`aesenclast` ends with an XOR of its key),
//!   so the chain is exactly `rounds` AES instructions, and the ciphertext
//!   is produced by a second `aesenclast` off the chain. aws-lc and the
//!   RustCrypto `cbc` + `aes` crates keep the extra XOR (and the latter a
//!   per-block call).
//! - CTR has no chain; its speed is AES throughput. OpenSSL 3.0 runs it
//!   eight 128-bit blocks at a time with AES-NI; with VAES (AVX-512 or
//!   AVX2 registers) four or two blocks go through each instruction.
//!   RustCrypto `ctr` builds counter blocks in memory and XORs in a second
//!   pass, which costs more than the AES itself at these speeds.
//!
//! Other CPUs use aws-lc (see `crypto/symmetric.rs`), which has the ARMv8 and
//! generic paths. The key schedule here is the portable FIPS-197 one; the
//! tests check every path against the SP 800-38A vectors and against the
//! RustCrypto `aes` crate on random inputs.

/// The AES S-box, computed at compile time from its definition
/// (multiplicative inverse in GF(2^8) followed by the affine map), so no
/// table has to be typed in.
const SBOX: [u8; 256] = sbox();

const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80;
        a <<= 1;
        if carry != 0 {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    p
}

const fn sbox() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0usize;
    while i < 256 {
        // x^254 is the inverse of x in GF(2^8) (and maps 0 to 0).
        let x = i as u8;
        let mut inv = 1u8;
        let mut e = 254u32;
        let mut base = x;
        while e != 0 {
            if e & 1 != 0 {
                inv = gf_mul(inv, base);
            }
            base = gf_mul(base, base);
            e >>= 1;
        }
        if x == 0 {
            inv = 0;
        }
        t[i] = inv
            ^ inv.rotate_left(1)
            ^ inv.rotate_left(2)
            ^ inv.rotate_left(3)
            ^ inv.rotate_left(4)
            ^ 0x63;
        i += 1;
    }
    t
}

/// Expanded encryption key: `rounds + 1` round keys of 16 bytes.
#[derive(Clone)]
pub struct KeySchedule {
    pub round_keys: [[u8; 16]; 15],
    pub rounds: usize,
}

impl KeySchedule {
    /// FIPS-197 key expansion for 16-, 24- or 32-byte keys.
    pub fn new(key: &[u8]) -> Option<KeySchedule> {
        let nk = match key.len() {
            16 => 4,
            24 => 6,
            32 => 8,
            _ => return None,
        };
        let rounds = nk + 6;
        let total = 4 * (rounds + 1);
        let mut w = [[0u8; 4]; 60];
        for (i, word) in key.chunks_exact(4).enumerate() {
            w[i].copy_from_slice(word);
        }
        let mut rcon = 1u8;
        for i in nk..total {
            let mut t = w[i - 1];
            if i % nk == 0 {
                t = [
                    SBOX[t[1] as usize] ^ rcon,
                    SBOX[t[2] as usize],
                    SBOX[t[3] as usize],
                    SBOX[t[0] as usize],
                ];
                rcon = gf_mul(rcon, 2);
            } else if nk > 6 && i % nk == 4 {
                t = [
                    SBOX[t[0] as usize],
                    SBOX[t[1] as usize],
                    SBOX[t[2] as usize],
                    SBOX[t[3] as usize],
                ];
            }
            for b in 0..4 {
                w[i][b] = w[i - nk][b] ^ t[b];
            }
        }
        let mut round_keys = [[0u8; 16]; 15];
        for (r, rk) in round_keys.iter_mut().enumerate().take(rounds + 1) {
            for j in 0..4 {
                rk[4 * j..4 * j + 4].copy_from_slice(&w[4 * r + j]);
            }
        }
        Some(KeySchedule { round_keys, rounds })
    }
}

/// Which hand-written CTR kernel this CPU can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtrKernel {
    /// AVX-512 registers, four blocks per instruction.
    Vaes512,
    /// AVX2 registers, two blocks per instruction.
    Vaes256,
    /// 128-bit AES-NI, eight blocks interleaved.
    AesNi,
}

impl CtrKernel {
    pub fn name(self) -> &'static str {
        match self {
            CtrKernel::Vaes512 => "vaes-avx512",
            CtrKernel::Vaes256 => "vaes-avx2",
            CtrKernel::AesNi => "aes-ni",
        }
    }
}

/// True when the AES-NI CBC kernel can run here.
pub fn cbc_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("aes") && std::is_x86_feature_detected!("sse2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The best CTR kernel for this CPU, if any.
pub fn ctr_kernel() -> Option<CtrKernel> {
    #[cfg(target_arch = "x86_64")]
    {
        if !std::is_x86_feature_detected!("aes") || !std::is_x86_feature_detected!("ssse3") {
            return None;
        }
        if std::is_x86_feature_detected!("vaes")
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
        {
            return Some(CtrKernel::Vaes512);
        }
        if std::is_x86_feature_detected!("vaes") && std::is_x86_feature_detected!("avx2") {
            return Some(CtrKernel::Vaes256);
        }
        Some(CtrKernel::AesNi)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Every CTR kernel this CPU can run, fastest-expected first (the crypto
/// family times them and keeps the fastest).
pub fn ctr_kernels() -> Vec<CtrKernel> {
    let Some(best) = ctr_kernel() else {
        return Vec::new();
    };
    [CtrKernel::Vaes512, CtrKernel::Vaes256, CtrKernel::AesNi]
        .into_iter()
        .skip_while(|k| *k != best)
        .collect()
}

/// AES-CBC encryption state (key schedule and chaining value).
#[cfg(target_arch = "x86_64")]
pub struct CbcEncryptor {
    ks: KeySchedule,
    iv: [u8; 16],
}

#[cfg(target_arch = "x86_64")]
impl CbcEncryptor {
    /// `None` unless the CPU has AES-NI and the key and IV lengths are right.
    pub fn new(key: &[u8], iv: &[u8]) -> Option<CbcEncryptor> {
        if !cbc_available() {
            return None;
        }
        Some(CbcEncryptor {
            ks: KeySchedule::new(key)?,
            iv: iv.try_into().ok()?,
        })
    }

    /// Encrypt whole 16-byte blocks in place, continuing the chain.
    /// Returns false (and does nothing) if `buf` is not whole blocks.
    pub fn encrypt(&mut self, buf: &mut [u8]) -> bool {
        if !buf.len().is_multiple_of(16) {
            return false;
        }
        // SAFETY: `new` only succeeds when the CPU has AES-NI and SSE2,
        // the features `cbc_encrypt_x86` is compiled for.
        unsafe { x86::cbc_encrypt(&self.ks, &mut self.iv, buf) };
        true
    }
}

/// AES-CTR state: key schedule, the 128-bit big-endian counter block
/// (incremented as a whole, as SP 800-38A and OpenSSL do), and the unused
/// key stream of a partial block.
#[cfg(target_arch = "x86_64")]
pub struct CtrEncryptor {
    ks: KeySchedule,
    kernel: CtrKernel,
    counter: u128,
    pad: [u8; 16],
    pad_used: usize,
}

#[cfg(target_arch = "x86_64")]
impl CtrEncryptor {
    pub fn new(key: &[u8], iv: &[u8]) -> Option<CtrEncryptor> {
        CtrEncryptor::with_kernel(ctr_kernel()?, key, iv)
    }

    /// With a given kernel; `None` if this CPU cannot run it (it is not in
    /// [`ctr_kernels`]) or the key or IV length is wrong.
    pub fn with_kernel(kernel: CtrKernel, key: &[u8], iv: &[u8]) -> Option<CtrEncryptor> {
        if !ctr_kernels().contains(&kernel) {
            return None;
        }
        let iv: [u8; 16] = iv.try_into().ok()?;
        Some(CtrEncryptor {
            ks: KeySchedule::new(key)?,
            kernel,
            counter: u128::from_be_bytes(iv),
            pad: [0; 16],
            pad_used: 16,
        })
    }

    pub fn kernel(&self) -> CtrKernel {
        self.kernel
    }

    /// XOR the key stream into `buf`, continuing where the last call ended.
    pub fn apply(&mut self, mut buf: &mut [u8]) {
        // Finish a partial block left by the previous call.
        while self.pad_used < 16 && !buf.is_empty() {
            buf[0] ^= self.pad[self.pad_used];
            self.pad_used += 1;
            buf = &mut buf[1..];
        }
        let whole = buf.len() / 16 * 16;
        let (blocks, tail) = buf.split_at_mut(whole);
        if !blocks.is_empty() {
            // SAFETY: `with_kernel` only takes a kernel of `ctr_kernels`: the CPU
            // reported every feature the kernel is compiled for.
            unsafe {
                match self.kernel {
                    CtrKernel::Vaes512 => x86::ctr_vaes512(&self.ks, self.counter, blocks),
                    CtrKernel::Vaes256 => x86::ctr_vaes256(&self.ks, self.counter, blocks),
                    CtrKernel::AesNi => x86::ctr_aesni(&self.ks, self.counter, blocks),
                }
            }
            self.counter = self.counter.wrapping_add((whole / 16) as u128);
        }
        if !tail.is_empty() {
            let mut pad = [0u8; 16];
            // SAFETY: as above; the kernels encrypt whole blocks only.
            unsafe { x86::ctr_aesni(&self.ks, self.counter, &mut pad) };
            self.counter = self.counter.wrapping_add(1);
            for (b, k) in tail.iter_mut().zip(pad.iter()) {
                *b ^= k;
            }
            self.pad = pad;
            self.pad_used = tail.len();
        }
    }
}

/// Other architectures have no hand-written AES kernel: the encryptors are
/// uninhabited there, `new` always returns `None` and callers use aws-lc.
/// The types still exist so that callers need no `cfg` of their own.
#[cfg(not(target_arch = "x86_64"))]
mod unsupported {
    use super::CtrKernel;

    pub enum CbcEncryptor {}

    impl CbcEncryptor {
        pub fn new(_key: &[u8], _iv: &[u8]) -> Option<CbcEncryptor> {
            None
        }

        pub fn encrypt(&mut self, _buf: &mut [u8]) -> bool {
            match *self {}
        }
    }

    pub enum CtrEncryptor {}

    impl CtrEncryptor {
        pub fn new(_key: &[u8], _iv: &[u8]) -> Option<CtrEncryptor> {
            None
        }

        pub fn with_kernel(_kernel: CtrKernel, _key: &[u8], _iv: &[u8]) -> Option<CtrEncryptor> {
            None
        }

        pub fn kernel(&self) -> CtrKernel {
            match *self {}
        }

        pub fn apply(&mut self, _buf: &mut [u8]) {
            match *self {}
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub use unsupported::{CbcEncryptor, CtrEncryptor};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::KeySchedule;
    use core::arch::x86_64::*;

    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn load_keys(ks: &KeySchedule) -> [__m128i; 15] {
        let mut k = [_mm_setzero_si128(); 15];
        for (dst, src) in k.iter_mut().zip(ks.round_keys.iter()) {
            // SAFETY: `src` is 16 readable bytes; unaligned load.
            *dst = unsafe { _mm_loadu_si128(src.as_ptr().cast()) };
        }
        k
    }

    /// CBC encryption with the next plaintext folded into the last round
    /// key (see the module doc). `buf.len()` is a multiple of 16.
    #[target_feature(enable = "aes,sse2")]
    pub unsafe fn cbc_encrypt(ks: &KeySchedule, iv: &mut [u8; 16], buf: &mut [u8]) {
        let n = buf.len() / 16;
        if n == 0 {
            return;
        }
        // SAFETY (whole function): every pointer below points into `buf`
        // at a block index < n, or into `iv`, so 16 bytes are in bounds;
        // loads and stores are unaligned.
        unsafe {
            let k = load_keys(ks);
            let r = ks.rounds;
            let k0 = k[0];
            let klast = k[r];
            let klast_k0 = _mm_xor_si128(klast, k0);
            let p = buf.as_mut_ptr().cast::<__m128i>();
            let mut chain = _mm_loadu_si128(iv.as_ptr().cast());
            // First block: plaintext ^ iv ^ k0.
            let mut x = _mm_xor_si128(_mm_xor_si128(_mm_loadu_si128(p), chain), k0);
            for i in 0..n {
                let mut y = x;
                for key in &k[1..r] {
                    y = _mm_aesenc_si128(y, *key);
                }
                let c = _mm_aesenclast_si128(y, klast);
                _mm_storeu_si128(p.add(i), c);
                chain = c;
                if i + 1 < n {
                    // Next input = c ^ p' ^ k0 = aesenclast(y, klast ^ p' ^ k0).
                    let next = _mm_loadu_si128(p.add(i + 1));
                    x = _mm_aesenclast_si128(y, _mm_xor_si128(klast_k0, next));
                }
            }
            _mm_storeu_si128(iv.as_mut_ptr().cast(), chain);
        }
    }

    /// Byte mask reversing a 128-bit lane: turns [low u64 LE, high u64 LE]
    /// into the big-endian 128-bit counter block.
    const REVERSE: [u8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

    /// The counter block for `ctr` as a register.
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn counter_block(ctr: u128) -> __m128i {
        // SAFETY: the array is 16 readable bytes.
        unsafe { _mm_loadu_si128(ctr.to_be_bytes().as_ptr().cast()) }
    }

    /// Eight blocks at a time with 128-bit AES-NI; also the tail handler of
    /// the VAES kernels. `buf.len()` is a multiple of 16.
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub unsafe fn ctr_aesni(ks: &KeySchedule, counter: u128, buf: &mut [u8]) {
        // SAFETY (whole function): block indexes stay below len/16.
        unsafe {
            let k = load_keys(ks);
            let r = ks.rounds;
            let n = buf.len() / 16;
            let p = buf.as_mut_ptr().cast::<__m128i>();
            let mut i = 0usize;
            while i + 8 <= n {
                let mut b = [_mm_setzero_si128(); 8];
                for (j, blk) in b.iter_mut().enumerate() {
                    *blk =
                        _mm_xor_si128(counter_block(counter.wrapping_add((i + j) as u128)), k[0]);
                }
                for key in &k[1..r] {
                    for blk in b.iter_mut() {
                        *blk = _mm_aesenc_si128(*blk, *key);
                    }
                }
                for (j, blk) in b.iter().enumerate() {
                    let ks_block = _mm_aesenclast_si128(*blk, k[r]);
                    let q = p.add(i + j);
                    _mm_storeu_si128(q, _mm_xor_si128(_mm_loadu_si128(q), ks_block));
                }
                i += 8;
            }
            while i < n {
                let mut blk = _mm_xor_si128(counter_block(counter.wrapping_add(i as u128)), k[0]);
                for key in &k[1..r] {
                    blk = _mm_aesenc_si128(blk, *key);
                }
                let ks_block = _mm_aesenclast_si128(blk, k[r]);
                let q = p.add(i);
                _mm_storeu_si128(q, _mm_xor_si128(_mm_loadu_si128(q), ks_block));
                i += 1;
            }
        }
    }

    /// Blocks to process before the low 64 bits of the counter wrap; the
    /// vector kernels add to the low half only, so they stop there and
    /// hand the rest to `ctr_aesni`, which carries into the high half.
    fn blocks_before_wrap(counter: u128, n: usize) -> usize {
        let room = u64::MAX - (counter as u64);
        usize::try_from(room).map_or(n, |r| r.min(n))
    }

    /// A VAES counter-mode kernel at one vector width: `$lanes` blocks per
    /// register, four registers per step, the counters laid out by
    /// `$counters` (from the low and high halves `$lo(d)` and `$hi`); the
    /// blocks before the low 64 bits of the counter wrap, then `ctr_aesni`
    /// for the rest. The width's intrinsics are named by the caller, so each
    /// expansion is the straight-line code of its width.
    macro_rules! vaes_ctr {
        (
            $(#[$doc:meta])*
            $name:ident, $features:literal, $vector:ty, $lanes:literal,
            setzero: $setzero:ident, broadcast: $broadcast:ident, xor: $xor:ident,
            shuffle: $shuffle:ident, add: $add:ident, enc: $enc:ident, enclast: $enclast:ident,
            load: $load:ident, store: $store:ident,
            counters: |$lo:ident, $hi:ident| $counters:expr, step: $step:expr
        ) => {
            $(#[$doc])*
            #[target_feature(enable = $features)]
            pub unsafe fn $name(ks: &KeySchedule, counter: u128, buf: &mut [u8]) {
                let n = buf.len() / 16;
                let fast = blocks_before_wrap(counter, n) / (4 * $lanes) * (4 * $lanes);
                // SAFETY (whole block): pointers stay below block `fast` <= n.
                unsafe {
                    let r = ks.rounds;
                    let mut k = [$setzero(); 15];
                    for (dst, src) in k.iter_mut().zip(ks.round_keys.iter()) {
                        *dst = $broadcast(_mm_loadu_si128(src.as_ptr().cast()));
                    }
                    let rev = $broadcast(_mm_loadu_si128(REVERSE.as_ptr().cast()));
                    let $lo = |d: u64| (counter as u64).wrapping_add(d) as i64;
                    let $hi = (counter >> 64) as u64 as i64;
                    // Counters as [low, high] little-endian pairs, blocks
                    // 0..$lanes.
                    let mut c = $counters;
                    let step = $step;
                    let p = buf.as_mut_ptr().cast::<$vector>();
                    let mut i = 0usize;
                    while i < fast {
                        let mut b = [$setzero(); 4];
                        for blk in b.iter_mut() {
                            *blk = $xor($shuffle(c, rev), k[0]);
                            c = $add(c, step);
                        }
                        for key in &k[1..r] {
                            for blk in b.iter_mut() {
                                *blk = $enc(*blk, *key);
                            }
                        }
                        for (j, blk) in b.iter().enumerate() {
                            let q = p.add(i / $lanes + j);
                            let ks_block = $enclast(*blk, k[r]);
                            $store(q, $xor($load(q), ks_block));
                        }
                        i += 4 * $lanes;
                    }
                }
                let rest = &mut buf[fast * 16..];
                if !rest.is_empty() {
                    // SAFETY: this CPU has AES-NI (a superset of what it needs).
                    unsafe { ctr_aesni(ks, counter.wrapping_add(fast as u128), rest) };
                }
            }
        };
    }

    vaes_ctr!(
        /// Four blocks per instruction in AVX-512 registers, 16 blocks per step.
        ctr_vaes512, "aes,sse2,ssse3,avx2,avx512f,avx512bw,vaes", __m512i, 4,
        setzero: _mm512_setzero_si512, broadcast: _mm512_broadcast_i32x4, xor: _mm512_xor_si512,
        shuffle: _mm512_shuffle_epi8, add: _mm512_add_epi64, enc: _mm512_aesenc_epi128,
        enclast: _mm512_aesenclast_epi128, load: _mm512_loadu_si512, store: _mm512_storeu_si512,
        counters: |lo, hi| _mm512_set_epi64(hi, lo(3), hi, lo(2), hi, lo(1), hi, lo(0)),
        step: _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4)
    );

    vaes_ctr!(
        /// Two blocks per instruction in AVX2 registers, 8 blocks per step.
        ctr_vaes256, "aes,sse2,ssse3,avx2,vaes", __m256i, 2,
        setzero: _mm256_setzero_si256, broadcast: _mm256_broadcastsi128_si256, xor: _mm256_xor_si256,
        shuffle: _mm256_shuffle_epi8, add: _mm256_add_epi64, enc: _mm256_aesenc_epi128,
        enclast: _mm256_aesenclast_epi128, load: _mm256_loadu_si256, store: _mm256_storeu_si256,
        counters: |lo, hi| _mm256_set_epi64x(hi, lo(1), hi, lo(0)),
        step: _mm256_set_epi64x(0, 2, 0, 2)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbox_is_the_aes_sbox() {
        // Spot values from FIPS-197 figure 7.
        assert_eq!(SBOX[0x00], 0x63);
        assert_eq!(SBOX[0x01], 0x7c);
        assert_eq!(SBOX[0x53], 0xed);
        assert_eq!(SBOX[0xff], 0x16);
        let mut seen = [false; 256];
        for &s in SBOX.iter() {
            seen[s as usize] = true;
        }
        assert!(seen.iter().all(|&b| b), "the S-box is a permutation");
    }

    /// Each CTR kernel this CPU runs can be chosen, and streams like the
    /// default one across calls (the best one is compared with the `ctr`
    /// crate below).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn each_ctr_kernel_can_be_forced() {
        let kernels = ctr_kernels();
        assert_eq!(kernels.first().copied(), ctr_kernel());
        let key = [7u8; 16];
        let iv = [0xffu8; 16];
        let mut expect = vec![0u8; 1000];
        if let Some(mut e) = CtrEncryptor::new(&key, &iv) {
            e.apply(&mut expect);
        }
        for k in kernels {
            let mut e = CtrEncryptor::with_kernel(k, &key, &iv).unwrap();
            assert_eq!(e.kernel(), k);
            let mut got = vec![0u8; 1000];
            let (a, b) = got.split_at_mut(333);
            e.apply(a);
            e.apply(b);
            assert_eq!(got, expect, "{}", k.name());
        }
    }

    use cipher::{BlockCipherEncrypt, KeyInit, KeyIvInit, StreamCipher};
    use proptest::prelude::*;

    /// CBC with the RustCrypto `aes` crate, block by block.
    fn reference_cbc(key: &[u8], iv: &[u8; 16], data: &mut [u8]) {
        fn run<C: BlockCipherEncrypt + KeyInit>(key: &[u8], iv: &[u8; 16], data: &mut [u8]) {
            let c = C::new_from_slice(key).unwrap();
            crate::test_support::reference_cbc_encrypt(&c, iv, data);
        }
        match key.len() {
            16 => run::<aes::Aes128>(key, iv, data),
            24 => run::<aes::Aes192>(key, iv, data),
            _ => run::<aes::Aes256>(key, iv, data),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn cbc_matches_the_aes_crate(
            key_len in prop_oneof![Just(16usize), Just(24), Just(32)],
            key in proptest::collection::vec(any::<u8>(), 32),
            iv in any::<[u8; 16]>(),
            blocks in 0usize..70,
            split in 0usize..70,
            seed in any::<u64>(),
        ) {
            let Some(mut ours) = CbcEncryptor::new(&key[..key_len], &iv) else {
                return Ok(()); // no AES-NI on this CPU: nothing to compare
            };
            let mut data = vec![0u8; blocks * 16];
            crate::bytes::fill_pattern(&mut data, seed);
            let mut expect = data.clone();
            reference_cbc(&key[..key_len], &iv, &mut expect);
            // Two calls: the chain must carry over.
            let cut = split.min(blocks) * 16;
            let (a, b) = data.split_at_mut(cut);
            prop_assert!(ours.encrypt(a));
            prop_assert!(ours.encrypt(b));
            prop_assert_eq!(data, expect);
        }

        #[test]
        fn ctr_matches_the_ctr_crate(
            key in any::<[u8; 16]>(),
            // Counters near the 64-bit and 128-bit wrap points too.
            low in prop_oneof![any::<u64>(), (u64::MAX - 40)..=u64::MAX],
            high in prop_oneof![any::<u64>(), Just(u64::MAX)],
            len in 0usize..3000,
            cuts in proptest::collection::vec(0usize..600, 0..4),
            seed in any::<u64>(),
        ) {
            let mut iv = [0u8; 16];
            iv[..8].copy_from_slice(&high.to_be_bytes());
            iv[8..].copy_from_slice(&low.to_be_bytes());
            let Some(mut ours) = CtrEncryptor::new(&key, &iv) else {
                return Ok(());
            };
            let mut data = vec![0u8; len];
            crate::bytes::fill_pattern(&mut data, seed);
            let mut expect = data.clone();
            let mut theirs = ctr::Ctr128BE::<aes::Aes128>::new_from_slices(&key, &iv)
                .unwrap();
            theirs.apply_keystream(&mut expect);
            // Uneven pieces, so partial blocks carry over between calls.
            let mut rest = data.as_mut_slice();
            for c in cuts {
                let c = c.min(rest.len());
                let (a, b) = rest.split_at_mut(c);
                ours.apply(a);
                rest = b;
            }
            ours.apply(rest);
            prop_assert_eq!(data, expect);
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_ctr_kernel_agrees() {
        // The dispatcher picks one kernel; call the others directly where
        // the CPU has them.
        let ks = KeySchedule::new(&[7u8; 16]).unwrap_or_else(|| panic!("key"));
        for counter in [0u128, u64::MAX as u128 - 5, u128::MAX - 3] {
            let mut base = vec![0u8; 16 * 100];
            crate::bytes::fill_pattern(&mut base, 9);
            let mut a = base.clone();
            if !std::is_x86_feature_detected!("aes") {
                return;
            }
            // SAFETY: AES-NI checked above.
            unsafe { x86::ctr_aesni(&ks, counter, &mut a) };
            if std::is_x86_feature_detected!("vaes") && std::is_x86_feature_detected!("avx2") {
                let mut b = base.clone();
                // SAFETY: VAES and AVX2 checked.
                unsafe { x86::ctr_vaes256(&ks, counter, &mut b) };
                assert_eq!(a, b, "vaes256 at {counter}");
            }
            if std::is_x86_feature_detected!("vaes")
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
            {
                let mut c = base.clone();
                // SAFETY: VAES and AVX-512F/BW checked.
                unsafe { x86::ctr_vaes512(&ks, counter, &mut c) };
                assert_eq!(a, c, "vaes512 at {counter}");
            }
        }
    }

    #[test]
    fn key_expansion_fips197_appendix_a() {
        let k = [
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ];
        let ks = KeySchedule::new(&k).unwrap_or_else(|| panic!("key"));
        assert_eq!(ks.rounds, 10);
        // w[40..44] of FIPS-197 A.1.
        assert_eq!(
            crate::bytes::hex(&ks.round_keys[10]),
            "d014f9a8c9ee2589e13f0cc8b6630ca6"
        );
        assert!(KeySchedule::new(&[0u8; 17]).is_none());
    }
}
