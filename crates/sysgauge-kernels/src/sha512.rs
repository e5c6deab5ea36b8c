//! SHA-512 (FIPS 180-4) with an AVX2 message schedule and BMI2 rounds,
//! written for this project: OpenSSL 3 runs SHA-512 with AVX2 + BMI2
//! assembly on x86-64, and no crate (RustCrypto `sha2`, ring, aws-lc) has
//! that path, so on the CPUs where it pays (Intel's) all of them fall
//! behind `openssl speed -evp sha512` (docs/performance.md has the
//! comparison). On other microarchitectures a scalar implementation can
//! win, so each kernel is public ([`Kernel`], [`sha512_with`]) and the hash
//! family times them beside the crates and keeps the fastest.
//!
//! Shape (the idea of OpenSSL's AVX2 path, written anew in Rust intrinsics):
//! - two blocks are scheduled at once, block A in the low 128-bit lane of
//!   each AVX2 register and block B in the high lane, two message words per
//!   lane; `W[t] + K[t]` of both blocks goes to a stack array;
//! - block A's 80 rounds run with the schedule of the next words interleaved
//!   (the vector work hides in the gaps of the scalar round chain); block
//!   B's rounds then only read the stored sums;
//! - the rounds use BMI2 `rorx` (non-destructive rotates) and take the
//!   message word and `h` off the dependency chain; the rounds after the
//!   schedule are assembly (every state word in a register), and so, in
//!   one kernel (`Avx512VlAsm`), are the rounds the schedule is woven into,
//!   with the schedule's vector instructions spread through them.
//!
//! Which kernels can run is found at run time (`is_x86_feature_detected!`);
//! [`sha512`] uses the highest level, and other CPUs use `sha2`'s
//! compression function (which uses the SHA-512 instructions
//! of ARMv8.2 where present). Constants are computed at compile time from
//! their definition (fractional parts of square and cube roots of primes).
//! The tests check the FIPS 180-4 examples and compare with `sha2` on
//! random inputs of many lengths.

/// 256-bit unsigned integer as four little-endian limbs, for computing the
/// constants at compile time.
type U256 = [u64; 4];

const fn u256_from_u128(v: u128) -> U256 {
    [v as u64, (v >> 64) as u64, 0, 0]
}

/// `a * b`, truncated to 256 bits (the callers stay below 2^256).
const fn u256_mul(a: U256, b: U256) -> U256 {
    let mut r = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let mut carry: u128 = 0;
        let mut j = 0;
        while i + j < 4 {
            let cur = r[i + j] as u128 + (a[i] as u128) * (b[j] as u128) + carry;
            r[i + j] = cur as u64;
            carry = cur >> 64;
            j += 1;
        }
        i += 1;
    }
    r
}

const fn u256_le(a: U256, b: U256) -> bool {
    let mut i = 4;
    while i > 0 {
        i -= 1;
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    true
}

/// floor(n^(1/k)) for n < 2^256 whose root is below 2^72.
const fn int_root(n: U256, k: u32) -> u128 {
    let mut y: u128 = 0;
    let mut bit = 72;
    while bit > 0 {
        bit -= 1;
        let cand = y | (1u128 << bit);
        let mut p = u256_from_u128(cand);
        let mut e = 1;
        while e < k {
            p = u256_mul(p, u256_from_u128(cand));
            e += 1;
        }
        if u256_le(p, n) {
            y = cand;
        }
    }
    y
}

const fn primes<const N: usize>() -> [u64; N] {
    let mut out = [0u64; N];
    let mut count = 0;
    let mut n = 2u64;
    while count < N {
        let mut d = 2u64;
        let mut prime = true;
        while d * d <= n {
            if n.is_multiple_of(d) {
                prime = false;
                break;
            }
            d += 1;
        }
        if prime {
            out[count] = n;
            count += 1;
        }
        n += 1;
    }
    out
}

/// The first 64 bits of the fractional part of p^(1/k): floor(p^(1/k) *
/// 2^64) mod 2^64 = floor((p * 2^(64k))^(1/k)) mod 2^64.
const fn frac_root(p: u64, k: u32) -> u64 {
    let n: U256 = match k {
        2 => [0, 0, p, 0],
        _ => [0, 0, 0, p],
    };
    int_root(n, k) as u64
}

/// The first 64 bits of the fractional parts of the `k`-th roots of the
/// first `N` primes.
const fn frac_roots<const N: usize>(k: u32) -> [u64; N] {
    let p = primes::<N>();
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
        out[i] = frac_root(p[i], k);
        i += 1;
    }
    out
}

/// The round constants; only the x86-64 kernels read them (the portable path
/// is the sha2 crate's compression function).
#[cfg(target_arch = "x86_64")]
const K: [u64; 80] = frac_roots::<80>(3);
const INIT: [u64; 8] = frac_roots::<8>(2);

/// One of the SHA-512 compression kernels. The hash family times each one
/// this CPU can run in a short trial and keeps the fastest, so a kernel
/// tuned on one microarchitecture never stands for the machine on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `sha2`'s compression function (which uses the SHA-512 instructions
    /// of ARMv8.2 where present).
    Portable,
    /// Two blocks scheduled in the two AVX2 lanes, BMI2 `rorx` rounds.
    Avx2,
    /// `Avx2` with the rounds the schedule is woven into written as
    /// assembly (as `Avx512VlAsm`, each rotate of the schedule two shifts).
    Avx2Asm,
    /// The same, with the schedule's rotates and three-way XORs as single
    /// AVX-512VL instructions (fewer vector operations beside the rounds).
    Avx512Vl,
    /// `Avx512Vl` with the rounds the schedule is woven into written as
    /// assembly, the schedule's vector instructions spread through them.
    Avx512VlAsm,
}

impl Kernel {
    /// Every kernel, fastest-expected first.
    pub const ALL: [Kernel; 5] = [
        Kernel::Avx512Vl,
        Kernel::Avx512VlAsm,
        Kernel::Avx2,
        Kernel::Avx2Asm,
        Kernel::Portable,
    ];

    /// Whether this CPU can run it.
    pub fn available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 | Kernel::Avx2Asm => kernel_level() >= 1,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Vl | Kernel::Avx512VlAsm => kernel_level() >= 2,
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2 | Kernel::Avx2Asm | Kernel::Avx512Vl | Kernel::Avx512VlAsm => false,
        }
    }

    /// Its name, as `--implementation` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "rustcrypto",
            Kernel::Avx2 => "sysgauge-avx2",
            Kernel::Avx2Asm => "sysgauge-avx2-asm",
            Kernel::Avx512Vl => "sysgauge-avx512vl",
            Kernel::Avx512VlAsm => "sysgauge-avx512vl-asm",
        }
    }
}

/// Which kernels this CPU can run: 0 = portable, 1 = AVX2 + BMI1/2, 2 = also
/// AVX-512VL.
fn kernel_level() -> u8 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        // 0xff = not checked yet.
        static LEVEL: AtomicU8 = AtomicU8::new(0xff);
        let l = LEVEL.load(Ordering::Relaxed);
        if l != 0xff {
            return l;
        }
        // BMI1 for the rounds' `andn` (every CPU with BMI2 has it).
        let avx2 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2");
        let avx512 = avx2
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl");
        let l = if avx512 {
            2
        } else if avx2 {
            1
        } else {
            0
        };
        LEVEL.store(l, Ordering::Relaxed);
        l
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// The best kernel this CPU can run (by feature level, not measured).
pub fn best_kernel() -> Kernel {
    match kernel_level() {
        2 => Kernel::Avx512Vl,
        1 => Kernel::Avx2,
        _ => Kernel::Portable,
    }
}

/// Name of the kernel [`sha512`] uses on this CPU.
pub fn implementation() -> &'static str {
    best_kernel().name()
}

/// Process whole 128-byte blocks with `kernel`, which must be
/// [`Kernel::available`] (else the portable code runs).
fn compress(kernel: Kernel, state: &mut [u64; 8], blocks: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    match kernel {
        Kernel::Avx512Vl if kernel_level() >= 2 => {
            // SAFETY: the CPU has AVX-512F/VL, AVX2, BMI1 and BMI2, the
            // features the kernel is compiled for and its rounds' assembly
            // uses.
            unsafe { x86::compress_vl(state, blocks) };
            return;
        }
        Kernel::Avx512VlAsm if kernel_level() >= 2 => {
            // SAFETY: as for `Avx512Vl`.
            unsafe { x86::compress_vl_asm(state, blocks) };
            return;
        }
        Kernel::Avx2 if kernel_level() >= 1 => {
            // SAFETY: the CPU has AVX2, BMI1 and BMI2.
            unsafe { x86::compress(state, blocks) };
            return;
        }
        Kernel::Avx2Asm if kernel_level() >= 1 => {
            // SAFETY: as for `Avx2`.
            unsafe { x86::compress_asm(state, blocks) };
            return;
        }
        _ => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = kernel;
    compress_portable(state, blocks);
}

/// Portable compression (the fallback, and the kernel's reference in the
/// tests).
fn compress_portable(state: &mut [u64; 8], blocks: &[u8]) {
    for chunk in blocks.chunks_exact(128) {
        let mut block = [0u8; 128];
        block.copy_from_slice(chunk);
        sha2::block_api::compress512(state, core::slice::from_ref(&block));
    }
}

/// SHA-512 of `data` in one call, with the best kernel by feature level.
pub fn sha512(data: &[u8]) -> [u8; 64] {
    sha512_with(best_kernel(), data)
}

/// SHA-512 of `data` in one call with `kernel` (the portable code if this
/// CPU cannot run it).
pub fn sha512_with(kernel: Kernel, data: &[u8]) -> [u8; 64] {
    let mut state = INIT;
    let full = data.len() / 128 * 128;
    compress(kernel, &mut state, &data[..full]);
    let rem = &data[full..];
    let mut tail = [0u8; 256];
    tail[..rem.len()].copy_from_slice(rem);
    tail[rem.len()] = 0x80;
    let end = if rem.len() < 112 { 128 } else { 256 };
    let bits = (data.len() as u128).wrapping_mul(8);
    tail[end - 16..end].copy_from_slice(&bits.to_be_bytes());
    compress(kernel, &mut state, &tail[..end]);
    let mut out = [0u8; 64];
    for (o, s) in out.chunks_exact_mut(8).zip(state.iter()) {
        o.copy_from_slice(&s.to_be_bytes());
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::K;
    use core::arch::x86_64::*;

    /// 64-byte alignment, so no vector load or store of the round constants
    /// or of the W + K array straddles two cache lines.
    #[repr(C, align(64))]
    struct Aligned<T>(T);

    /// The round constants, aligned.
    static K_ALIGNED: Aligned<[u64; 80]> = Aligned(K);

    /// Byte order fix-up: reverse the bytes of each 64-bit word.
    const BSWAP64: [u8; 32] = [
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13,
        12, 11, 10, 9, 8,
    ];

    #[inline(always)]
    fn big_sigma0(a: u64) -> u64 {
        a.rotate_right(28) ^ a.rotate_right(34) ^ a.rotate_right(39)
    }
    #[inline(always)]
    fn big_sigma1(e: u64) -> u64 {
        e.rotate_right(14) ^ e.rotate_right(18) ^ e.rotate_right(41)
    }

    /// One round. `wk` is W[t] + K[t]. The names rotate from round to round
    /// instead of the values moving. Compiled, for the rounds the message
    /// schedule is woven into (the vector code between them is the
    /// compiler's); the rounds after the schedule run `asm_round!`.
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $wk:expr) => {
            // h + W + K is ready long before e, so it goes first.
            let t1 = $h
                .wrapping_add($wk)
                .wrapping_add(($f ^ $g) & $e ^ $g)
                .wrapping_add(big_sigma1($e));
            let maj = (($a ^ $b) & ($b ^ $c)) ^ $b;
            $d = $d.wrapping_add(t1);
            $h = t1.wrapping_add(big_sigma0($a)).wrapping_add(maj);
        };
    }

    /// Eight rounds, the names back where they started afterwards. Round
    /// t0 + k reads W + K at `wk + base + [0, 1, 4, 5, 8, 9, 12, 13][k]`
    /// (pairs of words per lane, two lanes: see `two_blocks`). `wk` is a
    /// raw pointer so no bounds check sits in the round. Given four
    /// blocks, each runs before its pair of rounds (block A weaves the
    /// message schedule in there).
    macro_rules! rounds8 {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $wk:ident, $base:expr) => {
            rounds8!($a, $b, $c, $d, $e, $f, $g, $h, $wk, $base, {} {} {} {});
        };
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $wk:ident, $base:expr,
         $p0:block $p1:block $p2:block $p3:block) => {
            $p0
            round!($a, $b, $c, $d, $e, $f, $g, $h, *$wk.add($base));
            round!($h, $a, $b, $c, $d, $e, $f, $g, *$wk.add($base + 1));
            $p1
            round!($g, $h, $a, $b, $c, $d, $e, $f, *$wk.add($base + 4));
            round!($f, $g, $h, $a, $b, $c, $d, $e, *$wk.add($base + 5));
            $p2
            round!($e, $f, $g, $h, $a, $b, $c, $d, *$wk.add($base + 8));
            round!($d, $e, $f, $g, $h, $a, $b, $c, *$wk.add($base + 9));
            $p3
            round!($c, $d, $e, $f, $g, $h, $a, $b, *$wk.add($base + 12));
            round!($b, $c, $d, $e, $f, $g, $h, $a, *$wk.add($base + 13));
        };
    }

    /// One round in registers, as assembly text: `wk` + `off` bytes holds
    /// W + K. Ch is (e & f) + (!e & g) (the two never share a bit, so the
    /// sum is their OR, added straight into h). `q` comes in as b ^ c and
    /// the round leaves a ^ b in `x` (the two swap names every round) for
    /// Maj = ((a ^ b) & (b ^ c)) ^ b. Sigma0(a) is left in `p` and added to
    /// the new a when the next round starts, off the chain that leads to e.
    /// After the `;`, eight more lines of text, one after every three of
    /// the round's (another computation to spread through it).
    #[rustfmt::skip]
    macro_rules! asm_round {
        ($a:literal, $b:literal, $c:literal, $d:literal, $e:literal, $f:literal, $g:literal, $h:literal, $q:literal, $x:literal, $off:literal) => {
            asm_round!($a, $b, $c, $d, $e, $f, $g, $h, $q, $x, $off; "", "", "", "", "", "", "", "")
        };
        ($a:literal, $b:literal, $c:literal, $d:literal, $e:literal, $f:literal, $g:literal, $h:literal, $q:literal, $x:literal, $off:literal;
         $s0:expr, $s1:expr, $s2:expr, $s3:expr, $s4:expr, $s5:expr, $s6:expr, $s7:expr) => {
            concat!(
                "add {", $h, "}, qword ptr [{wk} + ", $off, "]\n",
                "lea {", $a, "}, [{", $a, "} + {p}]\n",
                "mov {", $x, "}, {", $f, "}\n",
                $s0,
                "and {", $x, "}, {", $e, "}\n",
                "lea {", $h, "}, [{", $h, "} + {", $x, "}]\n",
                "andn {", $x, "}, {", $e, "}, {", $g, "}\n",
                $s1,
                "lea {", $h, "}, [{", $h, "} + {", $x, "}]\n",
                "rorx {p}, {", $e, "}, 41\n",
                "rorx {", $x, "}, {", $e, "}, 18\n",
                $s2,
                "xor {p}, {", $x, "}\n",
                "rorx {", $x, "}, {", $e, "}, 14\n",
                "xor {p}, {", $x, "}\n",
                $s3,
                "lea {", $h, "}, [{", $h, "} + {p}]\n",
                "mov {", $x, "}, {", $a, "}\n",
                "xor {", $x, "}, {", $b, "}\n",
                $s4,
                "and {", $q, "}, {", $x, "}\n",
                "xor {", $q, "}, {", $b, "}\n",
                "lea {", $d, "}, [{", $d, "} + {", $h, "}]\n",
                $s5,
                "lea {", $h, "}, [{", $h, "} + {", $q, "}]\n",
                "rorx {p}, {", $a, "}, 39\n",
                "rorx {", $q, "}, {", $a, "}, 34\n",
                $s6,
                "xor {p}, {", $q, "}\n",
                "rorx {", $q, "}, {", $a, "}, 28\n",
                "xor {p}, {", $q, "}\n",
                $s7,
            )
        };
    }

    /// `groups` times eight rounds of one block with every state word in a
    /// register: compiled, these rounds kept three state words on the
    /// stack and took about 30 instructions a round, 24 here, the sums as
    /// `lea` (in llvm-mca's Zen 3 model eight rounds take 44 cycles, 51
    /// compiled; docs/performance.md). W + K of a group's round k at
    /// `wk + [0, 1, 4, 5, 8, 9, 12, 13][k]` words, as in `rounds8!`, the
    /// next group 16 words on.
    #[inline(always)]
    unsafe fn rounds_in_registers(s: &mut [u64; 8], wk: *const u64, groups: usize) {
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *s;
        let mut p = 0u64;
        let q = b ^ c;
        // SAFETY: reads the words named above for every group, which the
        // caller guarantees are there; BMI1 and BMI2 are checked before
        // any kernel runs; groups >= 1.
        unsafe {
            core::arch::asm!(
                "2:",
                asm_round!("a", "b", "c", "d", "e", "f", "g", "h", "q", "x", 0),
                asm_round!("h", "a", "b", "c", "d", "e", "f", "g", "x", "q", 8),
                asm_round!("g", "h", "a", "b", "c", "d", "e", "f", "q", "x", 32),
                asm_round!("f", "g", "h", "a", "b", "c", "d", "e", "x", "q", 40),
                asm_round!("e", "f", "g", "h", "a", "b", "c", "d", "q", "x", 64),
                asm_round!("d", "e", "f", "g", "h", "a", "b", "c", "x", "q", 72),
                asm_round!("c", "d", "e", "f", "g", "h", "a", "b", "q", "x", 96),
                asm_round!("b", "c", "d", "e", "f", "g", "h", "a", "x", "q", 104),
                "add {wk}, 128",
                "cmp {wk}, {end}",
                "jne 2b",
                a = inout(reg) a, b = inout(reg) b, c = inout(reg) c, d = inout(reg) d,
                e = inout(reg) e, f = inout(reg) f, g = inout(reg) g, h = inout(reg) h,
                p = inout(reg) p, q = inout(reg) q => _, x = out(reg) _,
                wk = inout(reg) wk => _, end = in(reg) wk.add(16 * groups),
                options(nostack, pure, readonly),
            );
        }
        *s = [a.wrapping_add(p), b, c, d, e, f, g, h];
    }

    /// One message schedule step for both blocks, as the 16 lines
    /// `$then!` spreads through two rounds: X[j] = s1(X[j-1]) +
    /// W[t-7 pair] + s0(W[t-15 pair]) + X[j-8] into ring register `$x8`
    /// (as `schedule`), and W + K of the pair stored at `wk` + `$offw`
    /// bytes (K from `kp` + `$offk` bytes). `$isa` (`asm_step_vl` or
    /// `asm_step_avx2`) gives the lines between the two loads of the
    /// shifted words and the store, which both share.
    #[rustfmt::skip]
    macro_rules! asm_step {
        ($isa:ident, $then:ident!($($args:tt)*); $x1:literal, $x3:literal, $x4:literal, $x7:literal, $x8:literal, $offk:literal, $offw:literal) => {
            $isa!($then!($($args)*); $x1, $x8, $offk;
                concat!("vpalignr {t0}, {", $x3, "}, {", $x4, "}, 8\n"),
                concat!("vpalignr {t1}, {", $x7, "}, {", $x8, "}, 8\n"),
                concat!("vmovdqu ymmword ptr [{wk} + ", $offw, "], {t0}\n"))
        };
    }

    /// The step with AVX-512VL's rotates and three-way XORs.
    #[rustfmt::skip]
    macro_rules! asm_step_vl {
        ($then:ident!($($args:tt)*); $x1:literal, $x8:literal, $offk:literal; $w7:expr, $w15:expr, $store:expr) => {
            $then!($($args)*; $w7, $w15,
            "vprorq {t2}, {t1}, 1\n",
            "vprorq {t3}, {t1}, 8\n",
            "vpsrlq {t1}, {t1}, 7\n",
            "vpternlogq {t1}, {t2}, {t3}, 0x96\n",
            concat!("vpaddq {", $x8, "}, {", $x8, "}, {t1}\n"),
            concat!("vpaddq {", $x8, "}, {", $x8, "}, {t0}\n"),
            concat!("vprorq {t2}, {", $x1, "}, 19\n"),
            concat!("vprorq {t3}, {", $x1, "}, 61\n"),
            concat!("vpsrlq {t0}, {", $x1, "}, 6\n"),
            "vpternlogq {t0}, {t2}, {t3}, 0x96\n",
            concat!("vpaddq {", $x8, "}, {", $x8, "}, {t0}\n"),
            concat!("vbroadcasti128 {t0}, xmmword ptr [{kp} + ", $offk, "]\n"),
            concat!("vpaddq {t0}, {t0}, {", $x8, "}\n"),
            $store,)
        };
    }

    /// The step in AVX2 alone: no vector rotate or three-way XOR, so each
    /// rotate is two shifts (their bits do not overlap, so XOR joins them
    /// as OR would) and 26 instructions share the 16 lines.
    #[rustfmt::skip]
    macro_rules! asm_step_avx2 {
        ($then:ident!($($args:tt)*); $x1:literal, $x8:literal, $offk:literal; $w7:expr, $w15:expr, $store:expr) => {
            $then!($($args)*; $w7, $w15,
            "vpsrlq {t2}, {t1}, 1\nvpsllq {t3}, {t1}, 63\n",
            "vpxor {t2}, {t2}, {t3}\nvpsrlq {t3}, {t1}, 8\n",
            "vpxor {t2}, {t2}, {t3}\nvpsllq {t3}, {t1}, 56\n",
            "vpxor {t2}, {t2}, {t3}\nvpsrlq {t1}, {t1}, 7\n",
            concat!("vpxor {t1}, {t1}, {t2}\nvpaddq {", $x8, "}, {", $x8, "}, {t0}\n"),
            concat!("vpaddq {", $x8, "}, {", $x8, "}, {t1}\n"),
            concat!("vpsrlq {t2}, {", $x1, "}, 19\nvpsllq {t3}, {", $x1, "}, 45\n"),
            concat!("vpxor {t2}, {t2}, {t3}\nvpsrlq {t3}, {", $x1, "}, 61\n"),
            concat!("vpxor {t2}, {t2}, {t3}\nvpsllq {t3}, {", $x1, "}, 3\n"),
            concat!("vpxor {t2}, {t2}, {t3}\nvpsrlq {t0}, {", $x1, "}, 6\n"),
            "vpxor {t0}, {t0}, {t2}\n",
            concat!("vpaddq {", $x8, "}, {", $x8, "}, {t0}\n"),
            concat!("vbroadcasti128 {t0}, xmmword ptr [{kp} + ", $offk, "]\nvpaddq {t0}, {t0}, {", $x8, "}\n"),
            $store,)
        };
    }

    /// Two rounds (the second with the names moved on) with one schedule
    /// step's 16 lines spread through them, a vector instruction after
    /// every three scalar ones.
    #[rustfmt::skip]
    macro_rules! asm_two_rounds_step {
        ($a:literal, $b:literal, $c:literal, $d:literal, $e:literal, $f:literal, $g:literal, $h:literal, $q:literal, $x:literal, $off:literal, $off2:literal;
         $s0:expr, $s1:expr, $s2:expr, $s3:expr, $s4:expr, $s5:expr, $s6:expr, $s7:expr,
         $s8:expr, $s9:expr, $s10:expr, $s11:expr, $s12:expr, $s13:expr, $s14:expr, $s15:expr,) => {
            concat!(
                asm_round!($a, $b, $c, $d, $e, $f, $g, $h, $q, $x, $off; $s0, $s1, $s2, $s3, $s4, $s5, $s6, $s7),
                asm_round!($h, $a, $b, $c, $d, $e, $f, $g, $x, $q, $off2; $s8, $s9, $s10, $s11, $s12, $s13, $s14, $s15),
            )
        };
    }

    /// The sixteen woven rounds as one `asm!`, with `$step` (the AVX-512VL
    /// or the AVX2 schedule step), over the bindings
    /// of `woven_rounds16`.
    #[rustfmt::skip]
    macro_rules! woven_asm {
        ($step:ident, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $p:ident, $q:ident,
         $wk:ident, $kp:ident, $x0:ident, $x1:ident, $x2:ident, $x3:ident, $x4:ident, $x5:ident, $x6:ident, $x7:ident) => {
            core::arch::asm!(
                asm_step!($step, asm_two_rounds_step!("a", "b", "c", "d", "e", "f", "g", "h", "q", "x", 0, 8); "x7", "x5", "x4", "x1", "x0", 0, 256),
                asm_step!($step, asm_two_rounds_step!("g", "h", "a", "b", "c", "d", "e", "f", "q", "x", 32, 40); "x0", "x6", "x5", "x2", "x1", 16, 288),
                asm_step!($step, asm_two_rounds_step!("e", "f", "g", "h", "a", "b", "c", "d", "q", "x", 64, 72); "x1", "x7", "x6", "x3", "x2", 32, 320),
                asm_step!($step, asm_two_rounds_step!("c", "d", "e", "f", "g", "h", "a", "b", "q", "x", 96, 104); "x2", "x0", "x7", "x4", "x3", 48, 352),
                asm_step!($step, asm_two_rounds_step!("a", "b", "c", "d", "e", "f", "g", "h", "q", "x", 128, 136); "x3", "x1", "x0", "x5", "x4", 64, 384),
                asm_step!($step, asm_two_rounds_step!("g", "h", "a", "b", "c", "d", "e", "f", "q", "x", 160, 168); "x4", "x2", "x1", "x6", "x5", 80, 416),
                asm_step!($step, asm_two_rounds_step!("e", "f", "g", "h", "a", "b", "c", "d", "q", "x", 192, 200); "x5", "x3", "x2", "x7", "x6", 96, 448),
                asm_step!($step, asm_two_rounds_step!("c", "d", "e", "f", "g", "h", "a", "b", "q", "x", 224, 232); "x6", "x4", "x3", "x0", "x7", 112, 480),
                a = inout(reg) $a, b = inout(reg) $b, c = inout(reg) $c, d = inout(reg) $d,
                e = inout(reg) $e, f = inout(reg) $f, g = inout(reg) $g, h = inout(reg) $h,
                p = inout(reg) $p, q = inout(reg) $q => _, x = out(reg) _,
                wk = in(reg) $wk, kp = in(reg) $kp,
                x0 = inout(ymm_reg) $x0, x1 = inout(ymm_reg) $x1, x2 = inout(ymm_reg) $x2,
                x3 = inout(ymm_reg) $x3, x4 = inout(ymm_reg) $x4, x5 = inout(ymm_reg) $x5,
                x6 = inout(ymm_reg) $x6, x7 = inout(ymm_reg) $x7,
                t0 = out(ymm_reg) _, t1 = out(ymm_reg) _, t2 = out(ymm_reg) _, t3 = out(ymm_reg) _,
                options(nostack),
            )
        };
    }

    /// Sixteen rounds of block A with the eight schedule steps of the
    /// pairs sixteen rounds ahead woven in (one through every two rounds),
    /// all in one piece of assembly so the state, the ring and the sums
    /// stay in registers. Compiled (`rounds8!`), the compiler adds W + K
    /// after Sigma1, which puts it on the chain from e to the next e.
    /// `wk` is where these rounds' W + K start (the steps write 256 bytes
    /// on); `kp` the K of the first step. The schedule's lines are
    /// AVX-512VL's with `VL`, else AVX2's. Its target features are a subset
    /// of its callers', so it inlines.
    ///
    /// # Safety
    /// AVX2, BMI1 and BMI2, and AVX-512VL with `VL`; `wk` has 512 bytes,
    /// `kp` 128.
    #[inline]
    #[target_feature(enable = "avx2,bmi2")]
    unsafe fn woven_rounds16<const VL: bool>(
        s: &mut [u64; 8],
        wk: *mut u64,
        kp: *const u64,
        x: &mut [__m256i; 8],
    ) {
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *s;
        let mut p = 0u64;
        let q = b ^ c;
        let [mut x0, mut x1, mut x2, mut x3, mut x4, mut x5, mut x6, mut x7] = *x;
        // SAFETY: the caller guarantees the features and the memory.
        unsafe {
            if VL {
                woven_asm!(
                    asm_step_vl,
                    a,
                    b,
                    c,
                    d,
                    e,
                    f,
                    g,
                    h,
                    p,
                    q,
                    wk,
                    kp,
                    x0,
                    x1,
                    x2,
                    x3,
                    x4,
                    x5,
                    x6,
                    x7
                );
            } else {
                woven_asm!(
                    asm_step_avx2,
                    a,
                    b,
                    c,
                    d,
                    e,
                    f,
                    g,
                    h,
                    p,
                    q,
                    wk,
                    kp,
                    x0,
                    x1,
                    x2,
                    x3,
                    x4,
                    x5,
                    x6,
                    x7
                );
            }
        }
        *s = [a.wrapping_add(p), b, c, d, e, f, g, h];
        *x = [x0, x1, x2, x3, x4, x5, x6, x7];
    }

    /// 64-bit lane rotate right (AVX2 has no vector rotate).
    #[inline(always)]
    unsafe fn rotr<const R: i32, const L: i32>(x: __m256i) -> __m256i {
        // SAFETY: AVX2 is enabled in every caller.
        unsafe { _mm256_or_si256(_mm256_srli_epi64::<R>(x), _mm256_slli_epi64::<L>(x)) }
    }

    /// The next pair of message words for both blocks, into ring slot `k`
    /// (= j mod 8, a constant at every call so the ring stays in
    /// registers): X[j] = s1(X[j-1]) + W[t-7 pair] + s0(W[t-15 pair]) + X[j-8].
    #[inline(always)]
    unsafe fn schedule<const K8: usize, const VL: bool>(x: &mut [__m256i; 8]) -> __m256i {
        // SAFETY: AVX2 is enabled in every caller; indexes are mod 8.
        unsafe {
            let xm1 = x[(K8 + 7) % 8];
            let xm3 = x[(K8 + 5) % 8];
            let xm4 = x[(K8 + 4) % 8];
            let xm7 = x[(K8 + 1) % 8];
            let xm8 = x[K8];
            let w7 = _mm256_alignr_epi8::<8>(xm3, xm4);
            let w15 = _mm256_alignr_epi8::<8>(xm7, xm8);
            let (s0, s1) = if VL {
                // Callers with VL = true are compiled with AVX-512F/VL.
                (
                    _mm256_ternarylogic_epi64::<0x96>(
                        _mm256_ror_epi64::<1>(w15),
                        _mm256_ror_epi64::<8>(w15),
                        _mm256_srli_epi64::<7>(w15),
                    ),
                    _mm256_ternarylogic_epi64::<0x96>(
                        _mm256_ror_epi64::<19>(xm1),
                        _mm256_ror_epi64::<61>(xm1),
                        _mm256_srli_epi64::<6>(xm1),
                    ),
                )
            } else {
                (
                    _mm256_xor_si256(
                        _mm256_xor_si256(rotr::<1, 63>(w15), rotr::<8, 56>(w15)),
                        _mm256_srli_epi64::<7>(w15),
                    ),
                    _mm256_xor_si256(
                        _mm256_xor_si256(rotr::<19, 45>(xm1), rotr::<61, 3>(xm1)),
                        _mm256_srli_epi64::<6>(xm1),
                    ),
                )
            };
            let new = _mm256_add_epi64(_mm256_add_epi64(s1, w7), _mm256_add_epi64(s0, xm8));
            x[K8] = new;
            new
        }
    }

    /// W + K of pair `j` for both blocks, as [A_t, A_t+1, B_t, B_t+1].
    #[inline(always)]
    unsafe fn add_k(x: __m256i, j: usize) -> __m256i {
        // SAFETY: K has 80 words; j < 40 so 2j+1 < 80; AVX2 enabled.
        unsafe {
            let k = _mm_loadu_si128(K_ALIGNED.0.as_ptr().add(2 * j).cast());
            _mm256_add_epi64(x, _mm256_broadcastsi128_si256(k))
        }
    }

    /// Compress the blocks of `data` (a multiple of 128 bytes), two at a
    /// time; an odd last block is scheduled alongside itself.
    #[target_feature(enable = "avx2,bmi2")]
    pub unsafe fn compress(state: &mut [u64; 8], data: &[u8]) {
        // SAFETY: the caller guarantees AVX2 and BMI2.
        unsafe { compress_with::<false, false>(state, data) }
    }

    /// The same with block A's woven rounds and schedule as one piece of
    /// assembly (`woven_rounds16`).
    #[target_feature(enable = "avx2,bmi2")]
    pub unsafe fn compress_asm(state: &mut [u64; 8], data: &[u8]) {
        // SAFETY: the caller guarantees AVX2, BMI1 and BMI2.
        unsafe { compress_with::<false, true>(state, data) }
    }

    /// The same with AVX-512VL in the schedule.
    #[target_feature(enable = "avx2,bmi2,avx512f,avx512vl")]
    pub unsafe fn compress_vl(state: &mut [u64; 8], data: &[u8]) {
        // SAFETY: the caller guarantees AVX2, BMI2 and AVX-512F/VL.
        unsafe { compress_with::<true, false>(state, data) }
    }

    /// The same with block A's woven rounds and schedule as one piece of
    /// assembly (`woven_rounds16`).
    #[target_feature(enable = "avx2,bmi2,avx512f,avx512vl")]
    pub unsafe fn compress_vl_asm(state: &mut [u64; 8], data: &[u8]) {
        // SAFETY: the caller guarantees AVX2, BMI1, BMI2 and AVX-512F/VL.
        unsafe { compress_with::<true, true>(state, data) }
    }

    #[inline(always)]
    unsafe fn compress_with<const VL: bool, const WOVEN_ASM: bool>(
        state: &mut [u64; 8],
        data: &[u8],
    ) {
        let n = data.len() / 128;
        let mut i = 0;
        while i < n {
            let a = &data[i * 128..i * 128 + 128];
            let b = if i + 1 < n {
                &data[(i + 1) * 128..(i + 2) * 128]
            } else {
                a
            };
            // SAFETY: `a` and `b` are 128-byte slices; AVX2 and BMI2 are
            // enabled for this function.
            unsafe { two_blocks::<VL, WOVEN_ASM>(state, a, b, i + 1 < n) };
            i += 2;
        }
    }

    #[inline(always)]
    unsafe fn two_blocks<const VL: bool, const WOVEN_ASM: bool>(
        state: &mut [u64; 8],
        a: &[u8],
        b: &[u8],
        do_b: bool,
    ) {
        // SAFETY (whole function): loads read 16 bytes at offsets < 128 of
        // the 128-byte slices; the stack array is written before it is read.
        unsafe {
            let bswap = _mm256_loadu_si256(BSWAP64.as_ptr().cast());
            let mut x = [_mm256_setzero_si256(); 8];
            // W + K of both blocks: pair j holds [A_2j, A_2j+1, B_2j, B_2j+1].
            let mut wk = Aligned([0u64; 160]);
            let wkp = wk.0.as_mut_ptr().cast::<__m256i>();
            for (j, xj) in x.iter_mut().enumerate() {
                let lo = _mm_loadu_si128(a.as_ptr().add(16 * j).cast());
                let hi = _mm_loadu_si128(b.as_ptr().add(16 * j).cast());
                let v = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
                *xj = _mm256_shuffle_epi8(v, bswap);
                _mm256_storeu_si256(wkp.add(j), add_k(*xj, j));
            }
            let wkq = wkp.cast::<u64>().cast_const();
            // Block A: rounds 0..63 with the schedule of pairs 8..39 woven
            // in, one pair every two rounds; sixteen rounds per pass so the
            // ring slots are constants.
            macro_rules! sched {
                ($j:expr, $k:literal) => {
                    let next = schedule::<$k, VL>(&mut x);
                    _mm256_storeu_si256(wkp.add($j), add_k(next, $j));
                };
            }
            let mut sa = if WOVEN_ASM {
                // Written out four times: as a loop it measured about 2 %
                // slower on Zen 4.
                let mut sa = *state;
                for t0 in [0, 16, 32, 48] {
                    woven_rounds16::<VL>(
                        &mut sa,
                        wkp.cast::<u64>().add(2 * t0),
                        K_ALIGNED.0.as_ptr().add(t0 + 16),
                        &mut x,
                    );
                }
                sa
            } else {
                let [mut ra, mut rb, mut rc, mut rd, mut re, mut rf, mut rg, mut rh] = *state;
                let mut t0 = 0;
                while t0 < 64 {
                    let j = t0 / 2 + 8;
                    let base = 2 * t0;
                    rounds8!(ra, rb, rc, rd, re, rf, rg, rh, wkq, base,
                        { sched!(j, 0); } { sched!(j + 1, 1); } { sched!(j + 2, 2); } { sched!(j + 3, 3); });
                    rounds8!(ra, rb, rc, rd, re, rf, rg, rh, wkq, base + 16,
                        { sched!(j + 4, 4); } { sched!(j + 5, 5); } { sched!(j + 6, 6); } { sched!(j + 7, 7); });
                    t0 += 16;
                }
                [ra, rb, rc, rd, re, rf, rg, rh]
            };
            // Rounds 64..79 of block A, then block B's 80 (every W + K is
            // ready by then), in registers.
            rounds_in_registers(&mut sa, wkq.add(128), 2);
            for (st, v) in state.iter_mut().zip(sa.iter()) {
                *st = st.wrapping_add(*v);
            }
            if !do_b {
                return;
            }
            let mut sb = *state;
            rounds_in_registers(&mut sb, wkq.add(2), 10);
            for (st, v) in state.iter_mut().zip(sb.iter()) {
                *st = st.wrapping_add(*v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::hex;
    use crate::test_support::assert_every_length;
    use proptest::prelude::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn round_constants_from_their_definition() {
        // FIPS 180-4 section 4.2.3: first and last values.
        assert_eq!(K[0], 0x428a_2f98_d728_ae22);
        assert_eq!(K[1], 0x7137_4491_23ef_65cd);
        assert_eq!(K[79], 0x6c44_198c_4a47_5817);
    }

    #[test]
    fn initial_hash_from_its_definition() {
        // FIPS 180-4 section 5.3.5: first and last values.
        assert_eq!(INIT[0], 0x6a09_e667_f3bc_c908);
        assert_eq!(INIT[7], 0x5be0_cd19_137e_2179);
    }

    #[test]
    fn fips_examples() {
        assert_eq!(hex(&sha512(b"abc")), "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
        assert_eq!(hex(&sha512(b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")), "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
        assert_eq!(hex(&sha512(b"")), "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
    }

    fn reference(data: &[u8]) -> [u8; 64] {
        use sha2::Digest;
        sha2::Sha512::digest(data).into()
    }

    #[test]
    fn kernel_matches_portable_compression() {
        let mut data = vec![0u8; 128 * 7];
        crate::bytes::fill_pattern(&mut data, 11);
        for kernel in Kernel::ALL.into_iter().filter(|k| k.available()) {
            for blocks in 0..=7 {
                let mut a = INIT;
                let mut b = INIT;
                compress(kernel, &mut a, &data[..blocks * 128]);
                compress_portable(&mut b, &data[..blocks * 128]);
                assert_eq!(a, b, "{kernel:?}, {blocks} blocks");
            }
        }
    }

    #[test]
    fn every_length_around_the_padding_boundaries() {
        for kernel in Kernel::ALL.into_iter().filter(|k| k.available()) {
            let ours = |data: &[u8]| sha512_with(kernel, data);
            assert_every_length(&format!("{kernel:?}"), ours, reference, 600, 3);
        }
    }

    proptest! {
        #[test]
        fn same_as_the_sha2_crate(data in proptest::collection::vec(any::<u8>(), 0..20_000)) {
            prop_assert_eq!(sha512(&data), reference(&data));
        }
    }
}
