//! Montgomery arithmetic modulo a 1024-bit odd number, built from
//! `mont512`'s 512-bit products: RSA-1024's steps around the CRT halves
//! (blinding the input, the check of the result with e, unblinding) work
//! modulo n. Written here because with crypto-bigint's portable 1024-bit
//! Montgomery arithmetic, which those steps used at first, they took about
//! a tenth of an RSA-1024 signature, enough to decide the comparison with
//! OpenSSL; built on the MULX/ADX 512-bit products they are about a third
//! faster (docs/performance.md, "Design measurements quoted by the code").
//!
//! How it is shaped: R = 2^1024 and B = 2^512. A product is four (a square
//! three) 512-bit products added at their offsets; the reduction takes two
//! digits of 512 bits: m = (t mod B)·n' mod B with n' = -n^-1 mod B, then
//! t = (t + m·n) / B, twice. With a, b < n the result is below 2n (t below
//! n·R, m·n below B·n per digit), so one constant-time conditional
//! subtraction reduces it fully. Every step runs the same instructions
//! whatever the values.

use crate::mont512::{check_modulus, r_squared, Backend, Limbs, ModulusError, Mont512, LIMBS};

/// Limbs of a 1024-bit number.
pub const WIDE: usize = 2 * LIMBS;

/// A 1024-bit number, least significant limb first.
pub type Wide = [u64; WIDE];

/// Arithmetic modulo an odd n < 2^1024, in Montgomery form (x stands for
/// x·R mod n).
#[derive(Clone)]
pub struct Mont1024 {
    n: Wide,
    n_lo: Limbs,
    n_hi: Limbs,
    /// -n^-1 mod 2^512.
    n_inv: Limbs,
    /// R^2 mod n.
    rr: Wide,
    backend: Backend,
}

impl std::fmt::Debug for Mont1024 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mont1024")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Mont1024 {
    /// Arithmetic modulo `n` with the fastest backend this CPU runs.
    pub fn new(n: &Wide) -> Result<Mont1024, ModulusError> {
        Mont1024::with_backend(n, Backend::best())
    }

    /// Arithmetic modulo `n` with `backend`.
    pub fn with_backend(n: &Wide, backend: Backend) -> Result<Mont1024, ModulusError> {
        check_modulus(n, backend)?;
        let (n_lo, n_hi) = halves(n);
        // -n^-1 mod 2^512 by Newton's iteration, x·(2 - n·x), from the
        // inverse mod 2^3 (n itself); eight steps reach 3·2^8 ≥ 512 bits.
        let mut x = [0u64; LIMBS];
        x[0] = n[0];
        for _ in 0..8 {
            let nx = low(&Mont512::product(backend, &n_lo, &x));
            let mut two_minus = [0u64; LIMBS];
            two_minus[0] = 2;
            let (d, _) = sub_n(&two_minus, &nx);
            x = low(&Mont512::product(backend, &x, &d));
        }
        let n_inv = {
            let zero = [0u64; LIMBS];
            sub_n(&zero, &x).0
        };
        Ok(Mont1024 {
            n: *n,
            n_lo,
            n_hi,
            n_inv,
            // Branch-free: n is an RSA modulus, public, but the same code
            // serves secret moduli.
            rr: r_squared(n, sub_if_at_least),
            backend,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn modulus(&self) -> &Wide {
        &self.n
    }

    /// a·b·R^-1 mod n, for a, b < n.
    pub fn mul(&self, a: &Wide, b: &Wide) -> Wide {
        let (a0, a1) = halves(a);
        let (b0, b1) = halves(b);
        let mut t = [0u64; 2 * WIDE + 1];
        t[..WIDE].copy_from_slice(&Mont512::product(self.backend, &a0, &b0));
        t[WIDE..2 * WIDE].copy_from_slice(&Mont512::product(self.backend, &a1, &b1));
        add_at::<LIMBS>(&mut t, &Mont512::product(self.backend, &a0, &b1));
        add_at::<LIMBS>(&mut t, &Mont512::product(self.backend, &a1, &b0));
        self.redc(t)
    }

    /// a^2·R^-1 mod n, for a < n.
    pub fn sqr(&self, a: &Wide) -> Wide {
        let (a0, a1) = halves(a);
        let mut t = [0u64; 2 * WIDE + 1];
        t[..WIDE].copy_from_slice(&Mont512::square(self.backend, &a0));
        t[WIDE..2 * WIDE].copy_from_slice(&Mont512::square(self.backend, &a1));
        let cross = Mont512::product(self.backend, &a0, &a1);
        add_at::<LIMBS>(&mut t, &cross);
        add_at::<LIMBS>(&mut t, &cross);
        self.redc(t)
    }

    /// a·R mod n (Montgomery form), for a < n.
    pub fn to_mont(&self, a: &Wide) -> Wide {
        self.mul(a, &self.rr)
    }

    /// a·R^-1 mod n: out of Montgomery form.
    pub fn from_mont(&self, a: &Wide) -> Wide {
        let mut t = [0u64; 2 * WIDE + 1];
        t[..WIDE].copy_from_slice(a);
        self.redc(t)
    }

    /// base^e in Montgomery form (base in Montgomery form), square and
    /// multiply from e's top bit: the time depends on e, so for public
    /// exponents only (RSA's e).
    pub fn pow_public(&self, base: &Wide, e: u64) -> Wide {
        if e == 0 {
            let mut one = [0u64; WIDE];
            one[0] = 1;
            return self.to_mont(&one);
        }
        let mut acc = *base;
        for bit in (0..63 - e.leading_zeros()).rev() {
            acc = self.sqr(&acc);
            if (e >> bit) & 1 == 1 {
                acc = self.mul(&acc, base);
            }
        }
        acc
    }

    /// t·R^-1 mod n for t < n·R (33 limbs, the top one a carry slot).
    fn redc(&self, mut t: [u64; 2 * WIDE + 1]) -> Wide {
        // Two digits, written out so every offset is a constant and the
        // additions compile to straight carry chains.
        let m = self.digit_factor(&t, 0);
        add_at::<0>(&mut t, &Mont512::product(self.backend, &m, &self.n_lo));
        add_at::<LIMBS>(&mut t, &Mont512::product(self.backend, &m, &self.n_hi));
        let m = self.digit_factor(&t, LIMBS);
        add_at::<LIMBS>(&mut t, &Mont512::product(self.backend, &m, &self.n_lo));
        add_at::<WIDE>(&mut t, &Mont512::product(self.backend, &m, &self.n_hi));
        // t / R: limbs 16..32, and the carry limb (at most 1).
        let mut r = [0u64; WIDE];
        r.copy_from_slice(&t[WIDE..2 * WIDE]);
        sub_if_at_least(&r, t[2 * WIDE], &self.n)
    }
}

impl Mont1024 {
    /// m = (t's 512-bit digit at limb `at`)·n' mod 2^512: adding m·n
    /// clears that digit.
    #[inline(always)]
    fn digit_factor(&self, t: &[u64; 2 * WIDE + 1], at: usize) -> Limbs {
        let mut d = [0u64; LIMBS];
        d.copy_from_slice(&t[at..at + LIMBS]);
        low(&Mont512::product(self.backend, &d, &self.n_inv))
    }
}

/// The low and high 512 bits.
fn halves(x: &Wide) -> (Limbs, Limbs) {
    let mut lo = [0u64; LIMBS];
    let mut hi = [0u64; LIMBS];
    lo.copy_from_slice(&x[..LIMBS]);
    hi.copy_from_slice(&x[LIMBS..]);
    (lo, hi)
}

/// The low 512 bits of a 1024-bit product.
fn low(x: &[u64; WIDE]) -> Limbs {
    let mut lo = [0u64; LIMBS];
    lo.copy_from_slice(&x[..LIMBS]);
    lo
}

/// t += x·2^(64·AT), the carry running to t's end (the callers' sums
/// fit). AT is a constant so that the loops unroll into one carry chain.
#[inline(always)]
fn add_at<const AT: usize>(t: &mut [u64; 2 * WIDE + 1], x: &[u64; WIDE]) {
    let mut carry = 0u8;
    for i in 0..WIDE {
        (t[AT + i], carry) = adc(t[AT + i], x[i], carry);
    }
    for limb in t[AT + WIDE..].iter_mut() {
        (*limb, carry) = adc(*limb, 0, carry);
    }
}

/// a + b + carry and the carry out: `_addcarry_u64` on x86-64, which LLVM
/// turns into one ADC chain (it does not for `overflowing_add` pairs).
#[inline(always)]
fn adc(a: u64, b: u64, carry: u8) -> (u64, u8) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut out = 0u64;
        let c = core::arch::x86_64::_addcarry_u64(carry, a, b, &mut out);
        (out, c)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (s, c1) = a.overflowing_add(b);
        let (s, c2) = s.overflowing_add(u64::from(carry));
        (s, u8::from(c1 | c2))
    }
}

/// a - b (mod 2^(64·N)) and the borrow out.
fn sub_n<const N: usize>(a: &[u64; N], b: &[u64; N]) -> ([u64; N], u64) {
    let mut r = [0u64; N];
    let mut borrow = 0u64;
    for i in 0..N {
        let d = u128::from(a[i])
            .wrapping_sub(u128::from(b[i]))
            .wrapping_sub(u128::from(borrow));
        r[i] = d as u64;
        borrow = ((d >> 64) as u64) & 1;
    }
    (r, borrow)
}

/// (carry·2^1024 + a) - n if not negative, else a; branch-free.
fn sub_if_at_least(a: &Wide, carry: u64, n: &Wide) -> Wide {
    let (d, borrow) = sub_n(a, n);
    let keep = crate::opaque::opaque_u64(borrow & !carry & 1).wrapping_neg();
    let mut r = [0u64; WIDE];
    for i in 0..WIDE {
        r[i] = (a[i] & keep) | (d[i] & !keep);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mont512::tests::{from_cb, to_cb};
    use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
    use crypto_bigint::{NonZero, Odd, U1024};
    use proptest::prelude::*;

    fn u(x: &Wide) -> U1024 {
        to_cb(x)
    }

    fn w(x: &U1024) -> Wide {
        from_cb(x)
    }

    fn reference(n: &Wide) -> FixedMontyParams<{ U1024::LIMBS }> {
        FixedMontyParams::new_vartime(Odd::new(u(n)).unwrap())
    }

    fn reduce(x: &Wide, n: &Wide) -> Wide {
        let nz = NonZero::new(u(n)).unwrap();
        w(&u(x).rem_vartime(&nz))
    }

    fn check(n: &Wide, a: &Wide, b: &Wide, e: u64) {
        let p = reference(n);
        let x = FixedMontyForm::from_montgomery(u(a), &p);
        let y = FixedMontyForm::from_montgomery(u(b), &p);
        let want_pow = w(&FixedMontyForm::new(&u(a), &p)
            .pow(&U1024::from_u64(e))
            .retrieve());
        for backend in Backend::all_available() {
            let m = Mont1024::with_backend(n, backend).unwrap();
            assert_eq!(m.mul(a, b), w(x.mul(&y).as_montgomery()), "{backend:?} mul");
            assert_eq!(m.sqr(a), w(x.square().as_montgomery()), "{backend:?} sqr");
            assert_eq!(m.from_mont(&m.to_mont(a)), *a, "{backend:?} round trip");
            let got = m.from_mont(&m.pow_public(&m.to_mont(a), e));
            assert_eq!(got, want_pow, "{backend:?} pow e={e}");
        }
    }

    fn edge_moduli() -> Vec<Wide> {
        let mut top = [u64::MAX; WIDE]; // 2^1024 - 1
        top[0] = u64::MAX;
        let mut half = [0u64; WIDE];
        half[0] = 1;
        half[WIDE - 1] = 1 << 63;
        let mut small = [0u64; WIDE];
        small[0] = 3;
        let rsa = {
            // The RSA-1024 test key's modulus has its top bit set; any odd
            // 1024-bit number stands in for it here.
            let mut m = [0x9e37_79b9_7f4a_7c15u64; WIDE];
            m[0] |= 1;
            m
        };
        vec![top, half, small, rsa]
    }

    #[test]
    fn edge_values_match_crypto_bigint() {
        for n in edge_moduli() {
            let mut n1 = n;
            n1[0] -= 1;
            let mut one = [0u64; WIDE];
            one[0] = 1;
            let ops = [[0u64; WIDE], one, n1, reduce(&[u64::MAX; WIDE], &n)];
            for a in &ops {
                for b in &ops {
                    check(&n, a, b, 65537);
                }
            }
            check(&n, &ops[3], &ops[2], 0);
            check(&n, &ops[3], &ops[2], 1);
            check(&n, &ops[3], &ops[2], u64::MAX);
        }
    }

    #[test]
    fn unusable_moduli_are_errors() {
        assert_eq!(Mont1024::new(&[0; WIDE]).unwrap_err(), ModulusError::Even);
        let mut one = [0u64; WIDE];
        one[0] = 1;
        assert_eq!(Mont1024::new(&one).unwrap_err(), ModulusError::One);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn random_operands_match_crypto_bigint(
            n in proptest::array::uniform16(any::<u64>()),
            a in proptest::array::uniform16(any::<u64>()),
            b in proptest::array::uniform16(any::<u64>()),
            e in any::<u64>(),
        ) {
            let mut n = n;
            n[0] |= 1;
            n[0] |= 2; // not 1
            check(&n, &reduce(&a, &n), &reduce(&b, &n), e & 0x1_ffff);
        }
    }
}
