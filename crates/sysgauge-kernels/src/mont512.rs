//! Montgomery arithmetic modulo one 512-bit odd number, and the
//! constant-time exponentiation RSA-1024 runs on each of its two CRT
//! halves. Written by hand because `openssl speed rsa1024` signs with a
//! dedicated 512-bit exponentiation (eight-limb MULX/ADCX/ADOX
//! multiplication, squaring and reduction, fixed 4-bit windows), while
//! aws-lc, sysgauge's other RSA-1024 signer, runs its generic 5-bit-window
//! code there and falls about 10 % behind (docs/performance.md); the
//! bignum crates (crypto-bigint, `rsa`) are portable Rust several times
//! slower still.
//!
//! How it is shaped (from the Montgomery-multiplication literature and
//! Intel's description of MULX/ADCX/ADOX with two carry chains; nothing
//! copied):
//! - numbers are eight little-endian 64-bit limbs; R = 2^512;
//! - a product is the full 1024-bit product (schoolbook rows for a
//!   multiplication; for a squaring the off-diagonal triangle once, doubled,
//!   plus the squares) followed by a separate Montgomery reduction of its
//!   low half, its high half added at the end and one constant-time
//!   conditional subtraction, so every result is fully reduced (< n);
//! - the reduction keeps a sliding window of eight limbs in registers: that
//!   window never overflows for n < 2^512 - 2^448, which [`Mont512::new`]
//!   checks (an RSA prime's top limb is never all ones in practice, but a
//!   modulus that is gets an error, not a wrong answer);
//! - exponentiation takes the exponent four bits at a time from the top,
//!   whatever its value: 4 squarings and one multiplication by a table
//!   entry per window, and the entry is read by scanning all 16 with masks
//!   (AVX2 compares where the CPU has them), so neither the time nor the
//!   memory addresses depend on the exponent;
//! - [`Mont512::pow2`] runs two exponentiations (RSA's CRT halves) step by
//!   step side by side: one alone is a chain of dependent carries that
//!   leaves execution units idle, which the other chain fills.
//!
//! Two backends compute the same thing: [`Backend::MulxAdx`] (x86-64 with
//! BMI2 and ADX, inline assembly, chosen at run time) and
//! [`Backend::Portable`] (`u128` arithmetic, every CPU). The tests compare
//! both with crypto-bigint on random and edge operands.

use core::fmt;

/// Limbs of a 512-bit number, least significant first.
pub const LIMBS: usize = 8;

/// A 512-bit number, least significant limb first.
pub type Limbs = [u64; LIMBS];

/// The implementations of the limb arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// MULX with two carry chains (ADCX for one, ADOX for the other), in
    /// inline assembly: x86-64 with BMI2 and ADX.
    MulxAdx,
    /// `u128` multiplications in plain Rust.
    Portable,
}

impl Backend {
    /// Whether this CPU runs the backend.
    pub fn available(self) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Backend::MulxAdx => {
                std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("adx")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Backend::MulxAdx => false,
        }
    }

    /// The fastest backend this CPU runs.
    pub fn best() -> Backend {
        if Backend::MulxAdx.available() {
            Backend::MulxAdx
        } else {
            Backend::Portable
        }
    }

    /// Every backend this CPU runs, fastest first.
    pub fn all_available() -> Vec<Backend> {
        [Backend::MulxAdx, Backend::Portable]
            .into_iter()
            .filter(|b| b.available())
            .collect()
    }
}

/// Why a number cannot be a [`Mont512`] modulus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModulusError {
    /// Montgomery reduction needs an odd modulus.
    Even,
    /// 1 (and 0, which is even) leaves nothing to compute.
    One,
    /// At or above 2^512 - 2^448: the reduction's window would overflow.
    TooLarge,
    /// The backend does not run on this CPU.
    Unavailable(Backend),
}

impl fmt::Display for ModulusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModulusError::Even => write!(f, "the modulus is even"),
            ModulusError::One => write!(f, "the modulus is 1"),
            ModulusError::TooLarge => {
                write!(
                    f,
                    "the modulus is at or above 2^512 - 2^448 (its top 64 bits are all ones)"
                )
            }
            ModulusError::Unavailable(b) => write!(f, "this CPU does not run the {b:?} backend"),
        }
    }
}

impl std::error::Error for ModulusError {}

/// Arithmetic modulo an odd n < 2^512 - 2^448, in Montgomery form
/// (x stands for x·R mod n).
#[derive(Clone)]
pub struct Mont512 {
    n: Limbs,
    /// n, then -n^-1 mod 2^64 (one array, so the assembly reaches both
    /// through one register).
    n_n0: [u64; LIMBS + 1],
    /// R^2 mod n, for conversions into Montgomery form.
    rr: Limbs,
    backend: Backend,
    /// Whether the table is read with AVX2 (x86-64 only).
    avx2: bool,
}

impl fmt::Debug for Mont512 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The modulus is a secret prime in RSA: not printed.
        f.debug_struct("Mont512")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Mont512 {
    /// Arithmetic modulo `n` with the fastest backend this CPU runs.
    pub fn new(n: &Limbs) -> Result<Mont512, ModulusError> {
        Mont512::with_backend(n, Backend::best())
    }

    /// Arithmetic modulo `n` with `backend`.
    pub fn with_backend(n: &Limbs, backend: Backend) -> Result<Mont512, ModulusError> {
        check_modulus(n, backend)?;
        if n[LIMBS - 1] == u64::MAX {
            return Err(ModulusError::TooLarge);
        }
        // -n^-1 mod 2^64 by Newton's iteration: each step doubles the
        // number of correct low bits (n is its own inverse mod 2^3).
        let mut inv = n[0];
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        let mut n_n0 = [0u64; LIMBS + 1];
        n_n0[..LIMBS].copy_from_slice(n);
        n_n0[LIMBS] = inv.wrapping_neg();
        Ok(Mont512 {
            n: *n,
            n_n0,
            // Branch-free: the modulus is a secret prime.
            rr: r_squared(n, sub_if_at_least),
            backend,
            avx2: avx2_available(),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// n.
    pub fn modulus(&self) -> &Limbs {
        &self.n
    }

    /// a·b·R^-1 mod n, for a, b < n (or a·b < n·R).
    #[inline]
    pub fn mul(&self, a: &Limbs, b: &Limbs) -> Limbs {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            Backend::MulxAdx => {
                let mut t = [0u64; 2 * LIMBS];
                // SAFETY: MulxAdx is only set when `available()` saw BMI2
                // and ADX (`with_backend`).
                unsafe {
                    x86::mul_wide(&mut t, a, b);
                    x86::redc(&mut t, &self.n_n0);
                }
                first_half(&t)
            }
            _ => portable::redc(&portable::mul_wide(a, b), &self.n_n0),
        }
    }

    /// a^2·R^-1 mod n, for a < n.
    #[inline]
    pub fn sqr(&self, a: &Limbs) -> Limbs {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            Backend::MulxAdx => {
                let mut t = [0u64; 2 * LIMBS];
                // SAFETY: as in `mul`.
                unsafe {
                    x86::sqr_wide(&mut t, a);
                    x86::redc(&mut t, &self.n_n0);
                }
                first_half(&t)
            }
            _ => portable::redc(&portable::sqr_wide(a), &self.n_n0),
        }
    }

    /// The 1024-bit product a·b, no reduction.
    #[inline]
    pub(crate) fn product(backend: Backend, a: &Limbs, b: &Limbs) -> [u64; 2 * LIMBS] {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::MulxAdx => {
                let mut t = [0u64; 2 * LIMBS];
                // SAFETY: MulxAdx is only used once `available()` saw BMI2
                // and ADX (callers hold a checked backend).
                unsafe { x86::mul_wide(&mut t, a, b) };
                t
            }
            _ => portable::mul_wide(a, b),
        }
    }

    /// The 1024-bit square a^2, no reduction.
    #[inline]
    pub(crate) fn square(backend: Backend, a: &Limbs) -> [u64; 2 * LIMBS] {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::MulxAdx => {
                let mut t = [0u64; 2 * LIMBS];
                // SAFETY: as in `product`.
                unsafe { x86::sqr_wide(&mut t, a) };
                t
            }
            _ => portable::sqr_wide(a),
        }
    }

    /// t·R^-1 mod n for a 1024-bit t < n·R (a number twice n's width
    /// reduced into Montgomery form's inverse: with t = x, the result is
    /// x·R^-1; multiply by R^2 again to get x mod n in Montgomery form).
    pub fn redc(&self, t: &[u64; 2 * LIMBS]) -> Limbs {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            Backend::MulxAdx => {
                let mut t = *t;
                // SAFETY: as in `mul`.
                unsafe { x86::redc(&mut t, &self.n_n0) };
                first_half(&t)
            }
            _ => portable::redc(t, &self.n_n0),
        }
    }

    /// a·R mod n (Montgomery form), for any 512-bit a.
    pub fn to_mont(&self, a: &Limbs) -> Limbs {
        self.mul(a, &self.rr)
    }

    /// a·R^-1 mod n: out of Montgomery form.
    pub fn from_mont(&self, a: &Limbs) -> Limbs {
        let mut t = [0u64; 2 * LIMBS];
        t[..LIMBS].copy_from_slice(a);
        self.redc(&t)
    }

    /// base^exp in Montgomery form (base in Montgomery form, < n), in
    /// constant time: all 512 exponent bits are used, four at a time, and
    /// the table is read whole for every window.
    pub fn pow(&self, base: &Limbs, exp: &Limbs) -> Limbs {
        let table = self.table(base);
        let mut acc = self.gather(&table, window(exp, 127));
        for i in (0..127).rev() {
            for _ in 0..4 {
                acc = self.sqr(&acc);
            }
            acc = self.mul(&acc, &self.gather(&table, window(exp, i)));
        }
        acc
    }

    /// `(self.pow(a, ea), other.pow(b, eb))`, the two exponentiations
    /// interleaved step by step. Each squaring waits for the one before
    /// it (a chain of dependent carries), so one exponentiation leaves most
    /// of the CPU's execution units idle; two independent chains side by
    /// side fill them (RSA's two CRT halves are such a pair).
    pub fn pow2(
        &self,
        a: &Limbs,
        ea: &Limbs,
        other: &Mont512,
        b: &Limbs,
        eb: &Limbs,
    ) -> (Limbs, Limbs) {
        let (ta, tb) = (self.table(a), other.table(b));
        let mut x = self.gather(&ta, window(ea, 127));
        let mut y = other.gather(&tb, window(eb, 127));
        // The products' scratch, reused: the assembly writes all of it
        // before reading it, so it is not cleared for every step.
        let mut scratch = [[0u64; 2 * LIMBS]; 2];
        for i in (0..127).rev() {
            for _ in 0..4 {
                (x, y) = self.sqr2(&x, other, &y, &mut scratch);
            }
            let (gx, gy) = (
                self.gather(&ta, window(ea, i)),
                other.gather(&tb, window(eb, i)),
            );
            (x, y) = self.mul2(&x, &gx, other, &y, &gy, &mut scratch);
        }
        (x, y)
    }

    /// `(self.sqr(x), other.sqr(y))`, the four halves ordered so that each
    /// waits for a result two steps back (the products of both, then the
    /// reductions of both): the CPU overlaps more of the two chains.
    #[inline]
    fn sqr2(
        &self,
        x: &Limbs,
        other: &Mont512,
        y: &Limbs,
        scratch: &mut [[u64; 2 * LIMBS]; 2],
    ) -> (Limbs, Limbs) {
        #[cfg(target_arch = "x86_64")]
        if self.backend == Backend::MulxAdx && other.backend == Backend::MulxAdx {
            let [tx, ty] = scratch;
            // SAFETY: both use MulxAdx, set only when BMI2 and ADX exist.
            unsafe {
                x86::sqr_wide(tx, x);
                x86::sqr_wide(ty, y);
                x86::redc(tx, &self.n_n0);
                x86::redc(ty, &other.n_n0);
            }
            return (first_half(tx), first_half(ty));
        }
        let _ = scratch;
        (self.sqr(x), other.sqr(y))
    }

    /// `(self.mul(x, a), other.mul(y, b))`, ordered as in `sqr2`.
    #[inline]
    fn mul2(
        &self,
        x: &Limbs,
        a: &Limbs,
        other: &Mont512,
        y: &Limbs,
        b: &Limbs,
        scratch: &mut [[u64; 2 * LIMBS]; 2],
    ) -> (Limbs, Limbs) {
        #[cfg(target_arch = "x86_64")]
        if self.backend == Backend::MulxAdx && other.backend == Backend::MulxAdx {
            let [tx, ty] = scratch;
            // SAFETY: as in `sqr2`.
            unsafe {
                x86::mul_wide(tx, x, a);
                x86::mul_wide(ty, y, b);
                x86::redc(tx, &self.n_n0);
                x86::redc(ty, &other.n_n0);
            }
            return (first_half(tx), first_half(ty));
        }
        let _ = scratch;
        (self.mul(x, a), other.mul(y, b))
    }

    /// table[index] in constant time: AVX2 where the CPU has it (a fifth
    /// of the instructions), else the portable masks.
    #[inline]
    fn gather(&self, table: &[Limbs; 16], index: usize) -> Limbs {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2.
            return unsafe { x86::gather_avx2(table, index) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = self.avx2; // always false there
        gather(table, index)
    }

    /// base^0 .. base^15 in Montgomery form.
    fn table(&self, base: &Limbs) -> [Limbs; 16] {
        let mut table = [[0u64; LIMBS]; 16];
        table[0] = self.to_mont(&one());
        table[1] = *base;
        for i in 2..16 {
            table[i] = if i % 2 == 0 {
                self.sqr(&table[i / 2])
            } else {
                self.mul(&table[i - 1], base)
            };
        }
        table
    }

    /// (a - b) mod n for a, b < n, branch-free.
    pub fn sub_mod(&self, a: &Limbs, b: &Limbs) -> Limbs {
        let (d, borrow) = sub(a, b);
        let (fixed, _) = add(&d, &self.n);
        select(borrow, &fixed, &d)
    }

    /// a mod n for a < 2n, branch-free.
    pub fn reduce_once(&self, a: &Limbs) -> Limbs {
        sub_if_at_least(a, 0, &self.n)
    }
}

/// What every modulus must be, at any width: odd and not 1, and the
/// backend must run on this CPU.
pub(crate) fn check_modulus(n: &[u64], backend: Backend) -> Result<(), ModulusError> {
    if !backend.available() {
        return Err(ModulusError::Unavailable(backend));
    }
    if n[0] & 1 == 0 {
        return Err(ModulusError::Even);
    }
    if n[0] == 1 && n[1..].iter().all(|&l| l == 0) {
        return Err(ModulusError::One);
    }
    Ok(())
}

/// R^2 mod n for R = 2^(64·N): 1 doubled 128·N times, each doubling's
/// carry and value reduced by `reduce` ((carry·2^(64·N) + x) - n where
/// that is not negative, else x), so the steps are as branch-free as
/// `reduce` is.
pub(crate) fn r_squared<const N: usize>(
    n: &[u64; N],
    reduce: fn(&[u64; N], u64, &[u64; N]) -> [u64; N],
) -> [u64; N] {
    let mut x = [0u64; N];
    x[0] = 1;
    for _ in 0..128 * N {
        let mut carry = 0u64;
        for l in x.iter_mut() {
            let top = *l >> 63;
            *l = (*l << 1) | carry;
            carry = top;
        }
        x = reduce(&x, carry, n);
    }
    x
}

/// Window i (0 = least significant) of `exp`: bits 4i..4i+3.
#[inline(always)]
fn window(exp: &Limbs, i: usize) -> usize {
    ((exp[i / 16] >> ((i % 16) * 4)) & 0xf) as usize
}

fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// 1 as limbs.
fn one() -> Limbs {
    let mut x = [0u64; LIMBS];
    x[0] = 1;
    x
}

#[cfg(target_arch = "x86_64")]
fn first_half(t: &[u64; 2 * LIMBS]) -> Limbs {
    let mut r = [0u64; LIMBS];
    r.copy_from_slice(&t[..LIMBS]);
    r
}

/// table[index], reading every entry and keeping the one wanted by masks,
/// so the memory accessed does not depend on `index`.
#[inline]
fn gather(table: &[Limbs; 16], index: usize) -> Limbs {
    let mut r = [0u64; LIMBS];
    for (i, entry) in table.iter().enumerate() {
        // All ones where i == index, else zero, without a comparison the
        // compiler could turn into a branch.
        let diff = (i ^ index) as u64;
        let mask = crate::opaque::opaque_u64((diff | diff.wrapping_neg()) >> 63).wrapping_sub(1);
        for (r, &e) in r.iter_mut().zip(entry) {
            *r |= e & mask;
        }
    }
    r
}

/// a + b and the carry out.
fn add(a: &Limbs, b: &Limbs) -> (Limbs, u64) {
    let mut r = [0u64; LIMBS];
    let mut carry = 0u64;
    for i in 0..LIMBS {
        let s = u128::from(a[i]) + u128::from(b[i]) + u128::from(carry);
        r[i] = s as u64;
        carry = (s >> 64) as u64;
    }
    (r, carry)
}

/// a - b and the borrow out (1 if b > a).
fn sub(a: &Limbs, b: &Limbs) -> (Limbs, u64) {
    let mut r = [0u64; LIMBS];
    let mut borrow = 0u64;
    for i in 0..LIMBS {
        let d = u128::from(a[i])
            .wrapping_sub(u128::from(b[i]))
            .wrapping_sub(u128::from(borrow));
        r[i] = d as u64;
        borrow = ((d >> 64) as u64) & 1;
    }
    (r, borrow)
}

/// `if_one` where `flag` is 1, else `if_zero`; branch-free.
fn select(flag: u64, if_one: &Limbs, if_zero: &Limbs) -> Limbs {
    let mask = crate::opaque::opaque_u64(flag & 1).wrapping_neg();
    let mut r = [0u64; LIMBS];
    for i in 0..LIMBS {
        r[i] = (if_one[i] & mask) | (if_zero[i] & !mask);
    }
    r
}

/// (carry·2^512 + a) - n if that is not negative, else a; for a value
/// below 2n.
fn sub_if_at_least(a: &Limbs, carry: u64, n: &Limbs) -> Limbs {
    let (d, borrow) = sub(a, n);
    // Keep `a` only when the subtraction went below zero, counting the
    // carry as the 513th bit.
    let keep = borrow & !carry & 1;
    select(keep, a, &d)
}

/// The reference implementation, and the backend for every CPU without
/// MULX and ADX.
mod portable {
    use super::{sub_if_at_least, Limbs, LIMBS};

    #[inline]
    fn mac(acc: u64, a: u64, b: u64, carry: u64) -> (u64, u64) {
        let t = u128::from(a) * u128::from(b) + u128::from(acc) + u128::from(carry);
        (t as u64, (t >> 64) as u64)
    }

    pub(super) fn mul_wide(a: &Limbs, b: &Limbs) -> [u64; 2 * LIMBS] {
        let mut t = [0u64; 2 * LIMBS];
        for i in 0..LIMBS {
            let mut carry = 0;
            for j in 0..LIMBS {
                (t[i + j], carry) = mac(t[i + j], a[i], b[j], carry);
            }
            t[i + LIMBS] = carry;
        }
        t
    }

    pub(super) fn sqr_wide(a: &Limbs) -> [u64; 2 * LIMBS] {
        // The off-diagonal products once, doubled, plus the squares.
        let mut t = [0u64; 2 * LIMBS];
        for i in 0..LIMBS {
            let mut carry = 0;
            for j in i + 1..LIMBS {
                (t[i + j], carry) = mac(t[i + j], a[i], a[j], carry);
            }
            t[i + LIMBS] = carry;
        }
        let mut carry = 0u64;
        for l in t.iter_mut() {
            let top = *l >> 63;
            *l = (*l << 1) | carry;
            carry = top;
        }
        let mut carry = 0u64;
        for i in 0..LIMBS {
            let sq = u128::from(a[i]) * u128::from(a[i]);
            let lo = u128::from(t[2 * i]) + (sq as u64 as u128) + u128::from(carry);
            t[2 * i] = lo as u64;
            let hi = u128::from(t[2 * i + 1]) + (sq >> 64) + (lo >> 64);
            t[2 * i + 1] = hi as u64;
            carry = (hi >> 64) as u64;
        }
        t
    }

    /// t·R^-1 mod n for t < n·R; `n_n0` is n then -n^-1 mod 2^64.
    pub(super) fn redc(t: &[u64; 2 * LIMBS], n_n0: &[u64; LIMBS + 1]) -> Limbs {
        let n0 = n_n0[LIMBS];
        // The window: low half of t, shifted down one limb per step as
        // m·n clears its lowest limb.
        let mut v = [0u64; LIMBS];
        v.copy_from_slice(&t[..LIMBS]);
        for _ in 0..LIMBS {
            let m = v[0].wrapping_mul(n0);
            let (_, mut carry) = mac(v[0], m, n_n0[0], 0);
            for j in 1..LIMBS {
                (v[j - 1], carry) = mac(v[j], m, n_n0[j], carry);
            }
            v[LIMBS - 1] = carry;
        }
        // Add the high half; the sum is below 2n.
        let mut carry = 0u64;
        for j in 0..LIMBS {
            let s = u128::from(v[j]) + u128::from(t[LIMBS + j]) + u128::from(carry);
            v[j] = s as u64;
            carry = (s >> 64) as u64;
        }
        let mut n = [0u64; LIMBS];
        n.copy_from_slice(&n_n0[..LIMBS]);
        sub_if_at_least(&v, carry, &n)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The MULX/ADCX/ADOX backend. Each function is one `asm!` block: the
    //! two carry chains (CF for ADCX, OF for ADOX) cannot be kept by the
    //! compiler across Rust statements, and LLVM does not emit ADCX/ADOX
    //! from `u128` code, which is why this is assembly and not intrinsics.
    //! Registers: rbx and rbp are not available to `asm!`, so the thirteen
    //! others hold eight accumulator limbs, MULX's implicit rdx, its two
    //! outputs and two pointers; the eight accumulators rotate by one limb
    //! per row (the rows are written out by macros for that reason).
    use super::{Limbs, LIMBS};

    /// table[index]: every entry is loaded and masked by a vector
    /// comparison, so neither branches nor addresses depend on `index`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn gather_avx2(table: &[Limbs; 16], index: usize) -> Limbs {
        use core::arch::x86_64::*;
        let want = _mm256_set1_epi64x(index as i64);
        let mut lo = _mm256_setzero_si256();
        let mut hi = _mm256_setzero_si256();
        for (i, entry) in table.iter().enumerate() {
            let mask = _mm256_cmpeq_epi64(_mm256_set1_epi64x(i as i64), want);
            // SAFETY: each entry is 8 limbs, two unaligned 32-byte loads.
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(entry.as_ptr().cast()),
                    _mm256_loadu_si256(entry.as_ptr().add(4).cast()),
                )
            };
            lo = _mm256_or_si256(lo, _mm256_and_si256(a, mask));
            hi = _mm256_or_si256(hi, _mm256_and_si256(b, mask));
        }
        let mut r = [0u64; LIMBS];
        // SAFETY: `r` is 8 limbs, two unaligned 32-byte stores.
        unsafe {
            _mm256_storeu_si256(r.as_mut_ptr().cast(), lo);
            _mm256_storeu_si256(r.as_mut_ptr().add(4).cast(), hi);
        }
        r
    }

    /// One schoolbook row: acc (8 limbs, $r0 lowest) += a·b[i] (b[i] read
    /// from the product's still unused high half, where `mul_wide` put b,
    /// as no register is left for a third pointer); then $r0
    /// (final: product limb i) is stored and becomes the row's new top
    /// limb, zeroed (mov keeps the flags).
    macro_rules! mul_row {
        ($boff:literal, $toff:literal, $r0:literal, $r1:literal, $r2:literal, $r3:literal, $r4:literal, $r5:literal, $r6:literal, $r7:literal) => {
            concat!(
                "mov rdx, qword ptr [{t} + ",
                $boff,
                "]\n",
                "xor eax, eax\n",
                "mulx rcx, rax, qword ptr [{a}]\n",
                "adcx ",
                $r0,
                ", rax\n",
                "adox ",
                $r1,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{a} + 8]\n",
                "adcx ",
                $r1,
                ", rax\n",
                "adox ",
                $r2,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{a} + 16]\n",
                "adcx ",
                $r2,
                ", rax\n",
                "adox ",
                $r3,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{a} + 24]\n",
                "adcx ",
                $r3,
                ", rax\n",
                "adox ",
                $r4,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{a} + 32]\n",
                "adcx ",
                $r4,
                ", rax\n",
                "adox ",
                $r5,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{a} + 40]\n",
                "adcx ",
                $r5,
                ", rax\n",
                "adox ",
                $r6,
                ", rcx\n",
                "mov qword ptr [{t} + ",
                $toff,
                "], ",
                $r0,
                "\n",
                "mov ",
                $r0,
                ", 0\n",
                "mulx rcx, rax, qword ptr [{a} + 48]\n",
                "adcx ",
                $r6,
                ", rax\n",
                "adox ",
                $r7,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{a} + 56]\n",
                "adcx ",
                $r7,
                ", rax\n",
                "adox ",
                $r0,
                ", rcx\n",
                "adc ",
                $r0,
                ", 0\n",
            )
        };
    }

    /// t = a·b (1024 bits).
    ///
    /// # Safety
    /// The CPU must have BMI2 and ADX (the assembler takes the instructions
    /// whatever the compile-time target features, so these functions can be
    /// inlined into callers that checked at run time).
    #[inline(always)]
    pub(super) unsafe fn mul_wide(t: &mut [u64; 2 * LIMBS], a: &Limbs, b: &Limbs) {
        // Row i reads b[i] from t[8 + i] before the last stores overwrite it.
        t[LIMBS..].copy_from_slice(b);
        // SAFETY: reads 8 limbs at `a` and 16 at `t`, writes 16 at `t`,
        // all in bounds; only the named registers and the flags change.
        unsafe {
            core::arch::asm!(
                "xor r8d, r8d", "xor r9d, r9d", "xor r10d, r10d", "xor r11d, r11d",
                "xor r12d, r12d", "xor r13d, r13d", "xor r14d, r14d", "xor r15d, r15d",
                mul_row!("64", "0", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"),
                mul_row!("72", "8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "r8"),
                mul_row!("80", "16", "r10", "r11", "r12", "r13", "r14", "r15", "r8", "r9"),
                mul_row!("88", "24", "r11", "r12", "r13", "r14", "r15", "r8", "r9", "r10"),
                mul_row!("96", "32", "r12", "r13", "r14", "r15", "r8", "r9", "r10", "r11"),
                mul_row!("104", "40", "r13", "r14", "r15", "r8", "r9", "r10", "r11", "r12"),
                mul_row!("112", "48", "r14", "r15", "r8", "r9", "r10", "r11", "r12", "r13"),
                mul_row!("120", "56", "r15", "r8", "r9", "r10", "r11", "r12", "r13", "r14"),
                // After eight rows the window is limbs 8..15, r8 lowest again.
                "mov qword ptr [{t} + 64], r8",
                "mov qword ptr [{t} + 72], r9",
                "mov qword ptr [{t} + 80], r10",
                "mov qword ptr [{t} + 88], r11",
                "mov qword ptr [{t} + 96], r12",
                "mov qword ptr [{t} + 104], r13",
                "mov qword ptr [{t} + 112], r14",
                "mov qword ptr [{t} + 120], r15",
                a = in(reg) a.as_ptr(),
                t = in(reg) t.as_mut_ptr(),
                out("rax") _, out("rcx") _, out("rdx") _,
                out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                options(nostack),
            );
        }
    }

    /// One row of the squaring's off-diagonal triangle: the window holds
    /// limbs i+1..i+8 ($r0 lowest); add a_i·a_j for j = i+1..7 (its low
    /// half at window position j-1, its high half at j). The caller emits
    /// the products; this macro is one product.
    macro_rules! tri {
        ($aoff:literal, $lo:literal, $hi:literal) => {
            concat!(
                "mulx rcx, rax, qword ptr [{a} + ",
                $aoff,
                "]\n",
                "adcx ",
                $lo,
                ", rax\n",
                "adox ",
                $hi,
                ", rcx\n",
            )
        };
    }

    /// The end of a triangle row: the window's position-7 register (zero
    /// before the row, see `sqr_wide`) takes the last carry; then position
    /// 0, final, is stored and zeroed for the next row's top.
    macro_rules! tri_end {
        ($top:literal, $toff:literal, $r0:literal) => {
            concat!(
                "adc ",
                $top,
                ", 0\n",
                "mov qword ptr [{t} + ",
                $toff,
                "], ",
                $r0,
                "\n",
                "mov ",
                $r0,
                ", 0\n",
            )
        };
    }

    /// Doubling and square for limbs 2k, 2k+1 held in t: a_k^2's halves
    /// go in on the OF chain after each limb is doubled on the CF chain.
    macro_rules! dbl_mem {
        ($aoff:literal, $lo:literal, $hi:literal) => {
            concat!(
                "mov rdx, qword ptr [{a} + ",
                $aoff,
                "]\n",
                "mulx rcx, rax, rdx\n",
                "mov rdx, qword ptr [{t} + ",
                $lo,
                "]\n",
                "adcx rdx, rdx\n",
                "adox rdx, rax\n",
                "mov qword ptr [{t} + ",
                $lo,
                "], rdx\n",
                "mov rdx, qword ptr [{t} + ",
                $hi,
                "]\n",
                "adcx rdx, rdx\n",
                "adox rdx, rcx\n",
                "mov qword ptr [{t} + ",
                $hi,
                "], rdx\n",
            )
        };
    }

    /// The same for limbs held in registers.
    macro_rules! dbl_reg {
        ($aoff:literal, $lo:literal, $hi:literal) => {
            concat!(
                "mov rdx, qword ptr [{a} + ",
                $aoff,
                "]\n",
                "mulx rcx, rax, rdx\n",
                "adcx ",
                $lo,
                ", ",
                $lo,
                "\n",
                "adox ",
                $lo,
                ", rax\n",
                "adcx ",
                $hi,
                ", ",
                $hi,
                "\n",
                "adox ",
                $hi,
                ", rcx\n",
            )
        };
    }

    /// t = a^2 (1024 bits).
    ///
    /// # Safety
    /// The CPU must have BMI2 and ADX (the assembler takes the instructions
    /// whatever the compile-time target features, so these functions can be
    /// inlined into callers that checked at run time).
    #[inline(always)]
    pub(super) unsafe fn sqr_wide(t: &mut [u64; 2 * LIMBS], a: &Limbs) {
        // SAFETY: reads 8 limbs at `a`, writes 16 at `t`; only the named
        // registers and the flags are changed.
        unsafe {
            core::arch::asm!(
                // The triangle U = sum over i < j of a_i·a_j·2^(64(i+j)).
                // Row i's window is limbs i+1..i+8; limb i+8 is zero before
                // row i, so each row's register at position 7 is the one
                // freed (stored, zeroed) after the previous row.
                "xor r8d, r8d", "xor r9d, r9d", "xor r10d, r10d", "xor r11d, r11d",
                "xor r12d, r12d", "xor r13d, r13d", "xor r14d, r14d", "xor r15d, r15d",
                "mov qword ptr [{t}], 0",
                // Row 0: window r8..r15 = limbs 1..8.
                "mov rdx, qword ptr [{a}]",
                "xor eax, eax",
                tri!("8", "r8", "r9"), tri!("16", "r9", "r10"), tri!("24", "r10", "r11"),
                tri!("32", "r11", "r12"), tri!("40", "r12", "r13"), tri!("48", "r13", "r14"),
                tri!("56", "r14", "r15"),
                tri_end!("r15", "8", "r8"),
                // Row 1: window r9..r15,r8 = limbs 2..9; products at 1..7.
                "mov rdx, qword ptr [{a} + 8]",
                "xor eax, eax",
                tri!("16", "r10", "r11"), tri!("24", "r11", "r12"), tri!("32", "r12", "r13"),
                tri!("40", "r13", "r14"), tri!("48", "r14", "r15"), tri!("56", "r15", "r8"),
                tri_end!("r8", "16", "r9"),
                // Row 2: window r10..r15,r8,r9 = limbs 3..10.
                "mov rdx, qword ptr [{a} + 16]",
                "xor eax, eax",
                tri!("24", "r12", "r13"), tri!("32", "r13", "r14"), tri!("40", "r14", "r15"),
                tri!("48", "r15", "r8"), tri!("56", "r8", "r9"),
                tri_end!("r9", "24", "r10"),
                // Row 3: window r11..r15,r8,r9,r10 = limbs 4..11.
                "mov rdx, qword ptr [{a} + 24]",
                "xor eax, eax",
                tri!("32", "r14", "r15"), tri!("40", "r15", "r8"), tri!("48", "r8", "r9"),
                tri!("56", "r9", "r10"),
                tri_end!("r10", "32", "r11"),
                // Row 4: window r12..r15,r8..r11 = limbs 5..12.
                "mov rdx, qword ptr [{a} + 32]",
                "xor eax, eax",
                tri!("40", "r8", "r9"), tri!("48", "r9", "r10"), tri!("56", "r10", "r11"),
                tri_end!("r11", "40", "r12"),
                // Row 5: window r13,r14,r15,r8..r12 = limbs 6..13.
                "mov rdx, qword ptr [{a} + 40]",
                "xor eax, eax",
                tri!("48", "r10", "r11"), tri!("56", "r11", "r12"),
                tri_end!("r12", "48", "r13"),
                // Row 6: window r14,r15,r8..r13 = limbs 7..14.
                "mov rdx, qword ptr [{a} + 48]",
                "xor eax, eax",
                tri!("56", "r12", "r13"),
                "adc r13, 0",
                // Limbs 0..6 are in t, 7..14 in r14, r15, r8..r13; limb 15
                // is zero. t = 2U + sum of a_i^2·2^(128 i): the doubling on
                // the CF chain (ADCX x, x), the squares on the OF chain;
                // rdx, free once MULX has read it, carries the limbs that
                // are in memory.
                "xor eax, eax",
                dbl_mem!("0", "0", "8"),
                dbl_mem!("8", "16", "24"),
                dbl_mem!("16", "32", "40"),
                "mov rdx, qword ptr [{a} + 24]", "mulx rcx, rax, rdx",
                "mov rdx, qword ptr [{t} + 48]", "adcx rdx, rdx", "adox rdx, rax",
                "mov qword ptr [{t} + 48], rdx",
                "adcx r14, r14", "adox r14, rcx",
                "mov qword ptr [{t} + 56], r14",
                dbl_reg!("32", "r15", "r8"),
                dbl_reg!("40", "r9", "r10"),
                dbl_reg!("48", "r11", "r12"),
                "mov rdx, qword ptr [{a} + 56]", "mulx rcx, rax, rdx",
                "adcx r13, r13", "adox r13, rax",
                "mov edx, 0", "adcx rdx, rdx", "adox rdx, rcx",
                "mov qword ptr [{t} + 64], r15",
                "mov qword ptr [{t} + 72], r8",
                "mov qword ptr [{t} + 80], r9",
                "mov qword ptr [{t} + 88], r10",
                "mov qword ptr [{t} + 96], r11",
                "mov qword ptr [{t} + 104], r12",
                "mov qword ptr [{t} + 112], r13",
                "mov qword ptr [{t} + 120], rdx",
                a = in(reg) a.as_ptr(),
                t = in(reg) t.as_mut_ptr(),
                out("rax") _, out("rcx") _, out("rdx") _,
                out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                options(nostack),
            );
        }
    }

    /// One reduction step: m = window[0]·n0; window += m·n, which clears
    /// $r0; $r0 becomes the new top limb (it is zero after the first
    /// ADCX, so the high half and both carries land in it).
    macro_rules! redc_step {
        ($r0:literal, $r1:literal, $r2:literal, $r3:literal, $r4:literal, $r5:literal, $r6:literal, $r7:literal) => {
            concat!(
                "mov rdx, ",
                $r0,
                "\n",
                "imul rdx, qword ptr [{n} + 64]\n",
                "xor eax, eax\n",
                "mulx rcx, rax, qword ptr [{n}]\n",
                "adcx ",
                $r0,
                ", rax\n",
                "adox ",
                $r1,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 8]\n",
                "adcx ",
                $r1,
                ", rax\n",
                "adox ",
                $r2,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 16]\n",
                "adcx ",
                $r2,
                ", rax\n",
                "adox ",
                $r3,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 24]\n",
                "adcx ",
                $r3,
                ", rax\n",
                "adox ",
                $r4,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 32]\n",
                "adcx ",
                $r4,
                ", rax\n",
                "adox ",
                $r5,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 40]\n",
                "adcx ",
                $r5,
                ", rax\n",
                "adox ",
                $r6,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 48]\n",
                "adcx ",
                $r6,
                ", rax\n",
                "adox ",
                $r7,
                ", rcx\n",
                "mulx rcx, rax, qword ptr [{n} + 56]\n",
                "adcx ",
                $r7,
                ", rax\n",
                "adox ",
                $r0,
                ", rcx\n",
                "adc ",
                $r0,
                ", 0\n",
            )
        };
    }

    /// t[..8] = t·R^-1 mod n for t < n·R; `n_n0` is n then -n^-1 mod 2^64.
    ///
    /// # Safety
    /// The CPU must have BMI2 and ADX (the assembler takes the instructions
    /// whatever the compile-time target features, so these functions can be
    /// inlined into callers that checked at run time).
    #[inline(always)]
    pub(super) unsafe fn redc(t: &mut [u64; 2 * LIMBS], n_n0: &[u64; LIMBS + 1]) {
        // SAFETY: reads 16 limbs at `t` and 9 at `n_n0`, writes 8 at `t`,
        // all in bounds; only the named registers and the flags change.
        unsafe {
            core::arch::asm!(
                "mov r8, qword ptr [{t}]",
                "mov r9, qword ptr [{t} + 8]",
                "mov r10, qword ptr [{t} + 16]",
                "mov r11, qword ptr [{t} + 24]",
                "mov r12, qword ptr [{t} + 32]",
                "mov r13, qword ptr [{t} + 40]",
                "mov r14, qword ptr [{t} + 48]",
                "mov r15, qword ptr [{t} + 56]",
                redc_step!("r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"),
                redc_step!("r9", "r10", "r11", "r12", "r13", "r14", "r15", "r8"),
                redc_step!("r10", "r11", "r12", "r13", "r14", "r15", "r8", "r9"),
                redc_step!("r11", "r12", "r13", "r14", "r15", "r8", "r9", "r10"),
                redc_step!("r12", "r13", "r14", "r15", "r8", "r9", "r10", "r11"),
                redc_step!("r13", "r14", "r15", "r8", "r9", "r10", "r11", "r12"),
                redc_step!("r14", "r15", "r8", "r9", "r10", "r11", "r12", "r13"),
                redc_step!("r15", "r8", "r9", "r10", "r11", "r12", "r13", "r14"),
                // The window is r8..r15 again: add the high half of t.
                "add r8, qword ptr [{t} + 64]",
                "adc r9, qword ptr [{t} + 72]",
                "adc r10, qword ptr [{t} + 80]",
                "adc r11, qword ptr [{t} + 88]",
                "adc r12, qword ptr [{t} + 96]",
                "adc r13, qword ptr [{t} + 104]",
                "adc r14, qword ptr [{t} + 112]",
                "adc r15, qword ptr [{t} + 120]",
                "mov ecx, 0",
                "adc rcx, 0",
                // Keep the sum in t, subtract n in the registers; the
                // 513-bit borrow (carry - borrow) is all ones exactly when
                // the sum was below n, and CMOV (no branch, its load always
                // happens) then takes the sum back.
                "mov qword ptr [{t}], r8",
                "mov qword ptr [{t} + 8], r9",
                "mov qword ptr [{t} + 16], r10",
                "mov qword ptr [{t} + 24], r11",
                "mov qword ptr [{t} + 32], r12",
                "mov qword ptr [{t} + 40], r13",
                "mov qword ptr [{t} + 48], r14",
                "mov qword ptr [{t} + 56], r15",
                "sub r8, qword ptr [{n}]",
                "sbb r9, qword ptr [{n} + 8]",
                "sbb r10, qword ptr [{n} + 16]",
                "sbb r11, qword ptr [{n} + 24]",
                "sbb r12, qword ptr [{n} + 32]",
                "sbb r13, qword ptr [{n} + 40]",
                "sbb r14, qword ptr [{n} + 48]",
                "sbb r15, qword ptr [{n} + 56]",
                "sbb rcx, 0",
                "cmovc r8, qword ptr [{t}]",
                "cmovc r9, qword ptr [{t} + 8]",
                "cmovc r10, qword ptr [{t} + 16]",
                "cmovc r11, qword ptr [{t} + 24]",
                "cmovc r12, qword ptr [{t} + 32]",
                "cmovc r13, qword ptr [{t} + 40]",
                "cmovc r14, qword ptr [{t} + 48]",
                "cmovc r15, qword ptr [{t} + 56]",
                "mov qword ptr [{t}], r8",
                "mov qword ptr [{t} + 8], r9",
                "mov qword ptr [{t} + 16], r10",
                "mov qword ptr [{t} + 24], r11",
                "mov qword ptr [{t} + 32], r12",
                "mov qword ptr [{t} + 40], r13",
                "mov qword ptr [{t} + 48], r14",
                "mov qword ptr [{t} + 56], r15",
                t = in(reg) t.as_mut_ptr(),
                n = in(reg) n_n0.as_ptr(),
                out("rax") _, out("rcx") _, out("rdx") _,
                out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                options(nostack),
            );
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
    use crypto_bigint::{Odd, U512};
    use proptest::prelude::*;

    /// crypto-bigint's number from 64-bit limbs, and back, through bytes
    /// (its limbs are 32 bits wide on 32-bit targets); mont1024's tests
    /// use them too.
    pub(crate) fn to_cb<const N: usize, const L: usize>(x: &[u64; N]) -> crypto_bigint::Uint<L> {
        let bytes: Vec<u8> = x.iter().flat_map(|l| l.to_le_bytes()).collect();
        crypto_bigint::Uint::<L>::from_le_slice(&bytes)
    }

    pub(crate) fn from_cb<const N: usize, const L: usize>(x: &crypto_bigint::Uint<L>) -> [u64; N] {
        let bytes: Vec<u8> = x.as_words().iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut out = [0u64; N];
        for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
            *o = u64::from_le_bytes(c.try_into().unwrap());
        }
        out
    }

    fn to_u(x: &Limbs) -> U512 {
        to_cb(x)
    }

    fn from_u(x: &U512) -> Limbs {
        from_cb(x)
    }

    fn params(n: &Limbs) -> FixedMontyParams<{ U512::LIMBS }> {
        FixedMontyParams::new_vartime(Odd::new(to_u(n)).unwrap())
    }

    /// Reference a·b·R^-1 mod n (crypto-bigint's Montgomery product of two
    /// numbers read as Montgomery representations).
    fn ref_mont_mul(n: &Limbs, a: &Limbs, b: &Limbs) -> Limbs {
        let p = params(n);
        let x = FixedMontyForm::from_montgomery(to_u(a), &p);
        let y = FixedMontyForm::from_montgomery(to_u(b), &p);
        from_u(x.mul(&y).as_montgomery())
    }

    fn reduce(x: &Limbs, n: &Limbs) -> Limbs {
        let nz = crypto_bigint::NonZero::new(to_u(n)).unwrap();
        from_u(&to_u(x).rem_vartime(&nz))
    }

    /// Moduli at the edges the code treats specially, and a typical prime
    /// size (top bit set).
    fn edge_moduli() -> Vec<Limbs> {
        let mut top = [u64::MAX; LIMBS];
        top[LIMBS - 1] = u64::MAX - 1; // the largest accepted
        let mut half = [0u64; LIMBS];
        half[0] = 1;
        half[LIMBS - 1] = 1 << 63; // 2^511 + 1
        let mut small = [0u64; LIMBS];
        small[0] = 3;
        let mut one_limb = [0u64; LIMBS];
        one_limb[0] = u64::MAX;
        let mut sparse = [0u64; LIMBS];
        sparse[0] = 0xffff_ffff_0000_0001;
        sparse[4] = 0x8000_0000;
        vec![top, half, small, one_limb, sparse]
    }

    fn edge_operands(n: &Limbs) -> Vec<Limbs> {
        let mut n_minus_1 = *n;
        n_minus_1[0] -= 1; // n is odd: no borrow
        let mut one = [0u64; LIMBS];
        one[0] = 1;
        let all = reduce(&[u64::MAX; LIMBS], n);
        vec![
            [0; LIMBS],
            one,
            n_minus_1,
            all,
            reduce(&[0x5555_5555_5555_5555; LIMBS], n),
        ]
    }

    fn check_all(n: &Limbs, a: &Limbs, b: &Limbs, e: &Limbs) {
        let p = params(n);
        let want_mul = ref_mont_mul(n, a, b);
        let want_sqr = ref_mont_mul(n, a, a);
        let want_pow = from_u(&FixedMontyForm::new(&to_u(a), &p).pow(&to_u(e)).retrieve());
        for backend in Backend::all_available() {
            let m = Mont512::with_backend(n, backend).unwrap();
            assert_eq!(m.mul(a, b), want_mul, "{backend:?} mul");
            assert_eq!(m.sqr(a), want_sqr, "{backend:?} sqr");
            assert_eq!(m.from_mont(&m.to_mont(a)), *a, "{backend:?} round trip");
            let got = m.from_mont(&m.pow(&m.to_mont(a), e));
            assert_eq!(got, want_pow, "{backend:?} pow");
            // Side by side with another modulus: the same results.
            let mut n2 = [0x0123_4567_89ab_cdefu64; LIMBS];
            n2[0] |= 1;
            let m2 = Mont512::with_backend(&n2, backend).unwrap();
            let b2 = reduce(b, &n2);
            let (x, y) = m.pow2(&m.to_mont(a), e, &m2, &m2.to_mont(&b2), a);
            assert_eq!(m.from_mont(&x), want_pow, "{backend:?} pow2");
            let want2 = FixedMontyForm::new(&to_u(&b2), &params(&n2))
                .pow(&to_u(a))
                .retrieve();
            assert_eq!(m2.from_mont(&y), from_u(&want2), "{backend:?} pow2, second");
            // redc of a 1024-bit number below n·R: x·R^-1 mod n.
            let mut t = [0u64; 2 * LIMBS];
            t[..LIMBS].copy_from_slice(a);
            t[LIMBS..].copy_from_slice(b);
            let x: crypto_bigint::U1024 = to_cb(&t);
            let nr: crypto_bigint::U1024 = to_cb(&{
                let mut w = [0u64; 2 * LIMBS];
                w[LIMBS..].copy_from_slice(n);
                w
            });
            if x < nr {
                assert_eq!(
                    m.redc(&t),
                    ref_mont_mul(n, &reduce_wide(&t, n), &[1, 0, 0, 0, 0, 0, 0, 0])
                );
            }
            assert_eq!(m.sub_mod(a, b), {
                let nz = Odd::new(to_u(n)).unwrap();
                from_u(&to_u(a).sub_mod(&to_u(b), nz.as_nz_ref()))
            });
        }
    }

    fn reduce_wide(t: &[u64; 2 * LIMBS], n: &Limbs) -> Limbs {
        let x: crypto_bigint::U1024 = to_cb(t);
        let mut w = [0u64; 2 * LIMBS];
        w[..LIMBS].copy_from_slice(n);
        let nz = crypto_bigint::NonZero::new(
            to_cb::<{ 2 * LIMBS }, { crypto_bigint::U1024::LIMBS }>(&w),
        )
        .unwrap();
        let r: [u64; 2 * LIMBS] = from_cb(&x.rem_vartime(&nz));
        let mut out = [0u64; LIMBS];
        out.copy_from_slice(&r[..LIMBS]);
        out
    }

    #[test]
    fn edge_moduli_and_operands_match_crypto_bigint() {
        for n in edge_moduli() {
            let ops = edge_operands(&n);
            let exps = [
                [0u64; LIMBS],
                [1, 0, 0, 0, 0, 0, 0, 0],
                [u64::MAX; LIMBS],
                {
                    let mut e = [0u64; LIMBS];
                    e[LIMBS - 1] = 1 << 63;
                    e
                },
            ];
            for a in &ops {
                for b in &ops {
                    check_all(&n, a, b, &exps[(a[0] ^ b[0]) as usize % exps.len()]);
                }
                for e in &exps {
                    check_all(&n, a, a, e);
                }
            }
        }
    }

    #[test]
    fn the_table_reads_agree() {
        let mut table = [[0u64; LIMBS]; 16];
        for (i, e) in table.iter_mut().enumerate() {
            for (j, l) in e.iter_mut().enumerate() {
                *l = (i as u64) << 32 | j as u64 | 0xa5a5_0000_0000_0000;
            }
        }
        let mut n = [0u64; LIMBS];
        n[0] = 3;
        let m = Mont512::new(&n).unwrap();
        for i in 0..16 {
            assert_eq!(gather(&table, i), table[i]);
            assert_eq!(m.gather(&table, i), table[i]);
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                assert!(m.avx2);
                // SAFETY: AVX2 was just detected.
                assert_eq!(unsafe { x86::gather_avx2(&table, i) }, table[i]);
            }
        }
    }

    #[test]
    fn every_backend_this_cpu_runs_is_tested() {
        let all = Backend::all_available();
        assert!(all.contains(&Backend::Portable));
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            all.contains(&Backend::MulxAdx),
            std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("adx")
        );
        assert_eq!(Backend::best(), all[0]);
    }

    #[test]
    fn unusable_moduli_are_errors() {
        let mut n = [0u64; LIMBS];
        n[0] = 4;
        assert_eq!(Mont512::new(&n).unwrap_err(), ModulusError::Even);
        assert_eq!(Mont512::new(&[0; LIMBS]).unwrap_err(), ModulusError::Even);
        n[0] = 1;
        assert_eq!(Mont512::new(&n).unwrap_err(), ModulusError::One);
        let mut big = [1u64; LIMBS];
        big[LIMBS - 1] = u64::MAX;
        assert_eq!(Mont512::new(&big).unwrap_err(), ModulusError::TooLarge);
        assert!(ModulusError::TooLarge.to_string().contains("2^512"));
        if !Backend::MulxAdx.available() {
            n[0] = 3;
            assert_eq!(
                Mont512::with_backend(&n, Backend::MulxAdx).unwrap_err(),
                ModulusError::Unavailable(Backend::MulxAdx)
            );
        }
    }

    fn limbs() -> impl Strategy<Value = Limbs> {
        proptest::array::uniform8(any::<u64>())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn random_operands_match_crypto_bigint(n in limbs(), a in limbs(), b in limbs(), e in limbs()) {
            let mut n = n;
            n[0] |= 1;
            n[LIMBS - 1] = n[LIMBS - 1].min(u64::MAX - 1) | (1 << 63);
            let (a, b) = (reduce(&a, &n), reduce(&b, &n));
            check_all(&n, &a, &b, &e);
        }
    }
}
