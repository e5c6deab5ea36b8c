//! Floating-point emulation: a software floating-point format worked with
//! integer instructions only: add, subtract, multiply and divide over 1024
//! pairs of numbers per iteration.
//!
//! The format is sign, a 32-bit integer exponent and a normalised 32-bit
//! significand (value = significand × 2^(exponent − 31)), rounded to nearest,
//! ties to even, as a hardware unit would. Addition aligns with a sticky
//! bit, multiplication uses one 32×32→64-bit integer multiply, and division
//! is a bit-serial restoring long division (shift, compare, subtract), the
//! way software floating point on processors without a divider works. The
//! exponent is a full 32-bit integer, so the workload never overflows and
//! needs no infinities or NaNs. This is integer work: shifts, leading-zero
//! counts, carries and branches; it counts towards the integer index.
//!
//! Verification: every result is within half a unit in the last place of
//! the hardware double-precision answer, and (in the tests) the bit patterns
//! of all results are pinned, which is portable because only integer
//! arithmetic is involved.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str =
    "software floating point (32-bit significand): 1024 x add, sub, mul, div with integer arithmetic";

/// Operand pairs per iteration.
pub const PAIRS: usize = 1024;
const SEED: u64 = 0x6670_656d_756c_6174;

/// A software floating-point number. `mant == 0` is zero; otherwise bit 31
/// of `mant` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SoftFloat {
    pub negative: bool,
    pub exp: i32,
    pub mant: u32,
}

impl SoftFloat {
    pub const ZERO: SoftFloat = SoftFloat {
        negative: false,
        exp: 0,
        mant: 0,
    };

    pub fn is_zero(self) -> bool {
        self.mant == 0
    }

    /// Pack `sig × 2^e` (sig > 0; its lowest bit may be a sticky bit
    /// standing for anything non-zero below it) into the format, rounding to
    /// nearest, ties to even.
    fn round_pack(negative: bool, e: i64, sig: u64) -> SoftFloat {
        if sig == 0 {
            return SoftFloat::ZERO;
        }
        let top = 63 - i64::from(sig.leading_zeros());
        let (mut mant, mut e) = if top > 31 {
            let shift = (top - 31) as u32;
            let mant = sig >> shift;
            let rest = sig & ((1u64 << shift) - 1);
            let half = 1u64 << (shift - 1);
            // `|` and `&`, not `||` and `&&`: whether to round up is random
            // in the workload and must not become a branch.
            let up = u64::from(rest > half) | (u64::from(rest == half) & mant);
            (mant + (up & 1), e + i64::from(shift))
        } else {
            let shift = (31 - top) as u32;
            (sig << shift, e - i64::from(shift))
        };
        if mant == 1u64 << 32 {
            mant >>= 1;
            e += 1;
        }
        SoftFloat {
            negative,
            exp: (e + 31) as i32,
            mant: mant as u32,
        }
    }

    fn plus(self, other: SoftFloat) -> SoftFloat {
        if self.is_zero() {
            return other;
        }
        if other.is_zero() {
            return self;
        }
        // Larger magnitude first.
        let self_first = (self.exp, self.mant) >= (other.exp, other.mant);
        let (big, small) = (
            select(self_first, self, other),
            select(self_first, other, self),
        );
        // 30 guard bits: both significands shifted left by 30 stay below
        // 2^62, so a sum cannot overflow 64 bits.
        const GUARD: u32 = 30;
        let b = u64::from(big.mant) << GUARD;
        // The alignment shift, capped at 63: s_full < 2^62, so a shift of 63
        // leaves nothing but the sticky bit, as any larger one would. One
        // formula for every distance, with no branch on it.
        let d = (i64::from(big.exp) - i64::from(small.exp)).min(63) as u32;
        let s_full = u64::from(small.mant) << GUARD;
        let lost = s_full & ((1u64 << d) - 1);
        let s = (s_full >> d) | u64::from(lost != 0);
        let e = i64::from(big.exp) - 31 - i64::from(GUARD);
        // b + s or b - s without a branch on the signs (random in the
        // workload, so a branch would be mispredicted half the time and the
        // rate would measure the branch predictor): with m all ones,
        // (s ^ m) - m is -s.
        let m = u64::from(big.negative != small.negative).wrapping_neg();
        SoftFloat::round_pack(big.negative, e, b.wrapping_add((s ^ m).wrapping_sub(m)))
    }

    fn minus(self, other: SoftFloat) -> SoftFloat {
        self.plus(SoftFloat {
            negative: !other.negative,
            ..other
        })
    }

    fn times(self, other: SoftFloat) -> SoftFloat {
        if self.is_zero() || other.is_zero() {
            return SoftFloat::ZERO;
        }
        let p = u64::from(self.mant) * u64::from(other.mant);
        let e = i64::from(self.exp) - 31 + i64::from(other.exp) - 31;
        SoftFloat::round_pack(self.negative != other.negative, e, p)
    }

    /// Division by zero gives zero (the workload never divides by zero).
    fn quotient(self, other: SoftFloat) -> SoftFloat {
        if self.is_zero() || other.is_zero() {
            return SoftFloat::ZERO;
        }
        // Restoring division: 36 quotient bits of mant_a / mant_b (a value
        // in (1/2, 2)), i.e. floor(mant_a × 2^35 / mant_b).
        const BITS: u32 = 36;
        let divisor = u64::from(other.mant);
        let mut rem = u64::from(self.mant);
        let mut q: u64 = 0;
        // Branch-free steps: the quotient bits of random operands are
        // unpredictable. As branches they were mispredicted about half the
        // time, except that the predictor learns the sequence when the
        // same few hundred divisions repeat, so the rate depended on the
        // workload's size and on the predictor's state (docs/performance.md
        // has the spread this caused). The
        // mask comes from the sign of the trial difference: written as a
        // comparison (`rem >= divisor`), the compiler turned it back into a
        // branch.
        for _ in 0..BITS {
            let trial = rem.wrapping_sub(divisor);
            // All ones when the divisor did not fit (rem, divisor < 2^34).
            let keep = ((trial as i64) >> 63) as u64;
            q = (q << 1) | (keep.wrapping_add(1));
            rem = trial.wrapping_add(divisor & keep) << 1;
        }
        let sig = (q << 1) | u64::from(rem != 0);
        let e = i64::from(self.exp) - i64::from(other.exp) - i64::from(BITS);
        SoftFloat::round_pack(self.negative != other.negative, e, sig)
    }

    /// The exact value as an f64 (32 significant bits always fit in 53).
    pub fn to_f64(self) -> f64 {
        if self.is_zero() {
            return 0.0;
        }
        let m = f64::from(self.mant) * 2f64.powi(self.exp - 31);
        if self.negative {
            -m
        } else {
            m
        }
    }

    fn bits(self) -> u64 {
        (u64::from(self.negative) << 63) ^ ((self.exp as u32 as u64) << 32) ^ u64::from(self.mant)
    }
}

/// The arithmetic operators as the named operations.
macro_rules! soft_float_op {
    ($($(#[$doc:meta])* $op:ident :: $f:ident => $named:ident),*) => {$(
        impl std::ops::$op for SoftFloat {
            type Output = SoftFloat;
            $(#[$doc])*
            fn $f(self, other: SoftFloat) -> SoftFloat {
                self.$named(other)
            }
        }
    )*};
}

soft_float_op!(
    Add::add => plus,
    Sub::sub => minus,
    Mul::mul => times,
    /// Division by zero gives zero (the workload never divides by zero).
    Div::div => quotient
);

/// `a` if `first`, else `b`, by masks rather than a branch (the order of
/// two random operands is unpredictable).
#[inline(always)]
fn select(first: bool, a: SoftFloat, b: SoftFloat) -> SoftFloat {
    let m = u32::from(first).wrapping_neg();
    let mi = m as i32;
    SoftFloat {
        negative: (u32::from(a.negative) & m | u32::from(b.negative) & !m) != 0,
        exp: a.exp & mi | b.exp & !mi,
        mant: a.mant & m | b.mant & !m,
    }
}

pub struct FpEmulation {
    a: Vec<SoftFloat>,
    b: Vec<SoftFloat>,
    /// Sum, difference, product and quotient of each pair.
    out: Vec<[SoftFloat; 4]>,
    iterations: u64,
}

impl FpEmulation {
    pub fn new() -> Self {
        Self::with_pairs(PAIRS)
    }

    pub fn with_pairs(pairs: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let mut gen = || {
            let r = rng.next_u64();
            SoftFloat {
                negative: r & 1 == 1,
                // Exponents within ±40 give additions with every kind of
                // alignment, from none to a sticky bit only.
                exp: ((r >> 1) % 81) as i32 - 40,
                mant: ((r >> 32) as u32) | 0x8000_0000,
            }
        };
        let a: Vec<SoftFloat> = (0..pairs).map(|_| gen()).collect();
        let b: Vec<SoftFloat> = (0..pairs).map(|_| gen()).collect();
        FpEmulation {
            out: vec![[SoftFloat::ZERO; 4]; a.len()],
            a,
            b,
            iterations: 0,
        }
    }

    /// Checksum over the bit patterns of every result.
    pub fn checksum(&self) -> u64 {
        super::fnv1a64(self.out.iter().flat_map(|r| r.iter().map(|x| x.bits())))
    }
}

impl super::Kernel for FpEmulation {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            let (a, b) = (black_box(&self.a), black_box(&self.b));
            for ((x, y), o) in a.iter().zip(b.iter()).zip(self.out.iter_mut()) {
                *o = [*x + *y, *x - *y, *x * *y, *x / *y];
            }
            black_box(&self.out);
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("fp emulation has not run".into());
        }
        for (i, ((x, y), o)) in self.a.iter().zip(&self.b).zip(&self.out).enumerate() {
            let (fx, fy) = (x.to_f64(), y.to_f64());
            let exact = [fx + fy, fx - fy, fx * fy, fx / fy];
            for (k, (&got, want)) in o.iter().zip(exact).enumerate() {
                let err = (got.to_f64() - want).abs();
                // Half an ulp of a 32-bit significand, plus the double's own
                // rounding of the reference.
                let tol = want.abs() * (2f64.powi(-32) + 2f64.powi(-51));
                if err > tol || got.is_zero() != (want == 0.0) {
                    return Err(format!(
                        "fp emulation: pair {i} operation {k}: got {}, expected {want}",
                        got.to_f64()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pinned::{assert_pinned, run_verified};
    use super::super::Kernel;
    use super::*;
    use proptest::prelude::*;

    /// The binary exponent of a normal double, from its bits (exact, unlike log2).
    fn floor_log2(x: f64) -> i32 {
        ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
    }

    fn sf(x: f64) -> SoftFloat {
        // Exact conversion for values with at most 32 significant bits.
        if x == 0.0 {
            return SoftFloat::ZERO;
        }
        let e = floor_log2(x);
        let m = x.abs() / 2f64.powi(e - 31);
        assert_eq!(m.fract(), 0.0, "{x} has more than 32 significant bits");
        SoftFloat {
            negative: x < 0.0,
            exp: e,
            mant: m as u32,
        }
    }

    #[test]
    fn small_exact_cases() {
        assert_eq!((sf(1.5) + sf(2.25)).to_f64(), 3.75);
        assert_eq!((sf(1.5) - sf(2.25)).to_f64(), -0.75);
        assert_eq!((sf(1.5) - sf(1.5)), SoftFloat::ZERO);
        assert_eq!((sf(-3.0) * sf(0.5)).to_f64(), -1.5);
        assert_eq!((sf(10.0) / sf(4.0)).to_f64(), 2.5);
        // 1/3 rounds to nearest: 0xAAAAAAAB × 2^-33.
        assert_eq!((sf(1.0) / sf(3.0)).mant, 0xAAAA_AAAB);
        // Round half to even: 2^32 + 1 is a tie between 2^32 and 2^32 + 2.
        let big = sf(4_294_967_296.0);
        assert_eq!((big + sf(1.0)).to_f64(), 4_294_967_296.0);
        assert_eq!((sf(4_294_967_298.0) + sf(1.0)).to_f64(), 4_294_967_300.0);
        // Carry out of the significand renormalises.
        assert_eq!((sf(4_294_967_295.0) + sf(1.0)).to_f64(), 4_294_967_296.0);
    }

    #[test]
    fn kernel_verifies_and_is_pinned() {
        let mut k = run_verified(FpEmulation::new());
        assert_pinned(k.checksum(), PINNED);
        k.out[7][3].mant ^= 0x100;
        assert!(k.verify().is_err());
    }

    const PINNED: u64 = 3_402_456_936_542_123_526;

    fn arb() -> impl Strategy<Value = SoftFloat> {
        (any::<bool>(), -60i32..60, any::<u32>()).prop_map(|(negative, exp, m)| SoftFloat {
            negative,
            exp,
            mant: m | 0x8000_0000,
        })
    }

    proptest! {
        /// Correct rounding: each result is the double-precision answer
        /// rounded to 32 significant bits (checked where the double answer
        /// is exact, which it is for mul always and for add/sub when the
        /// exponents are close).
        #[test]
        fn correctly_rounded(a in arb(), b in arb()) {
            let (x, y) = (a.to_f64(), b.to_f64());
            let round32 = |v: f64| -> f64 {
                if v == 0.0 { return 0.0; }
                let e = floor_log2(v);
                let scale = 2f64.powi(e - 31);
                let m = v.abs() / scale;
                let (fl, fr) = (m.floor(), m.fract());
                let r = if fr > 0.5 || (fr == 0.5 && fl % 2.0 == 1.0) { fl + 1.0 } else { fl };
                (r * scale).copysign(v)
            };
            prop_assert_eq!((a * b).to_f64(), round32(x * y));
            if (a.exp - b.exp).abs() <= 20 {
                prop_assert_eq!((a + b).to_f64(), round32(x + y));
                prop_assert_eq!((a - b).to_f64(), round32(x - y));
            }
            let q = (a / b).to_f64();
            prop_assert!((q - x / y).abs() <= (x / y).abs() * (2f64.powi(-32) + 2f64.powi(-51)));
        }
    }
}
