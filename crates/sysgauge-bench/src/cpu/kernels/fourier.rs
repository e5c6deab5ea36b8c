//! Fourier coefficients: the first 32 cosine and sine coefficients of
//! f(x) = (x + 1)^x on [0, 2], each integrated by the trapezoidal rule over
//! 200 intervals.
//!
//! With period 2, a_k = ∫₀² f(x) cos(kπx) dx and b_k = ∫₀² f(x) sin(kπx) dx.
//! The function is evaluated afresh for every coefficient, as in the classic
//! suite, so the kernel is a stream of `pow`, `sin` and `cos` calls from the
//! platform's maths library plus double-precision multiply-adds: it measures
//! transcendental-function throughput and counts towards the floating-point
//! index. Results are checked against pinned values to 1e-9; the pinned
//! values themselves are checked, in the tests, against a much finer
//! Simpson's-rule integration.

use std::f64::consts::PI;
use std::hint::black_box;

pub const SUMMARY: &str =
    "32 Fourier coefficient pairs of (x+1)^x on [0,2], trapezoidal rule with 200 steps (pow, sin, cos)";

/// Coefficient pairs per iteration: a_0..a_31 and b_1..b_31.
pub const COEFFICIENTS: usize = 32;
/// Trapezoid intervals per integral.
pub const STEPS: usize = 200;

/// a_0, a_1, b_1, a_2, b_2 as this workload computes them (trapezoid, 200
/// steps); platform maths libraries agree to far better than the tolerance.
const PINNED: [f64; 5] = [
    5.763_968_670_010_94,
    1.134_167_997_128_475_7,
    -1.881_880_825_998_759_8,
    0.362_352_890_923_474_56,
    -1.164_387_510_562_524_5,
];
const TOLERANCE: f64 = 1e-9;

fn f(x: f64) -> f64 {
    (x + 1.0).powf(x)
}

/// ∫₀² f(x)·w(kπx) dx by the trapezoidal rule with `steps` intervals, where
/// w is cos (`sine == false`) or sin.
fn trapezoid(k: usize, sine: bool, steps: usize) -> f64 {
    let h = 2.0 / steps as f64;
    let omega = k as f64 * PI;
    let g = |x: f64| {
        let w = if sine {
            (omega * x).sin()
        } else {
            (omega * x).cos()
        };
        f(x) * w
    };
    let mut sum = 0.5 * (g(0.0) + g(2.0));
    for i in 1..steps {
        // black_box keeps the compiler from sharing f(x) between the
        // coefficients: each one is a separate integration, by design.
        sum += g(black_box(i as f64 * h));
    }
    sum * h
}

pub struct Fourier {
    a: Vec<f64>,
    b: Vec<f64>,
    iterations: u64,
}

impl Fourier {
    pub fn new() -> Self {
        Fourier {
            a: vec![0.0; COEFFICIENTS],
            b: vec![0.0; COEFFICIENTS],
            iterations: 0,
        }
    }

    /// a_0, a_1, b_1, a_2, b_2 of the last iteration.
    pub fn leading(&self) -> [f64; 5] {
        [self.a[0], self.a[1], self.b[1], self.a[2], self.b[2]]
    }
}

impl super::Kernel for Fourier {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            self.a[0] = trapezoid(0, false, black_box(STEPS));
            self.b[0] = 0.0;
            for k in 1..COEFFICIENTS {
                self.a[k] = trapezoid(k, false, black_box(STEPS));
                self.b[k] = trapezoid(k, true, black_box(STEPS));
            }
            black_box((&self.a, &self.b));
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("fourier has not run".into());
        }
        for (i, (got, want)) in self.leading().iter().zip(PINNED).enumerate() {
            if !got.is_finite() || (got - want).abs() > TOLERANCE * want.abs().max(1.0) {
                return Err(format!(
                    "fourier: coefficient {i} is {got}, expected {want} (±{TOLERANCE})"
                ));
            }
        }
        if self.a.iter().chain(&self.b).any(|v| !v.is_finite()) {
            return Err("fourier: a coefficient is not finite".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Kernel;
    use super::*;

    /// Composite Simpson's rule, independent of the trapezoid code.
    fn simpson(k: usize, sine: bool, n: usize) -> f64 {
        let h = 2.0 / n as f64;
        let g = |x: f64| {
            let t = k as f64 * PI * x;
            (x + 1.0).powf(x) * if sine { t.sin() } else { t.cos() }
        };
        let mut s = g(0.0) + g(2.0);
        for i in 1..n {
            s += g(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0
    }

    #[test]
    fn pinned_values_are_close_to_the_integrals() {
        let fine = [
            simpson(0, false, 20_000),
            simpson(1, false, 20_000),
            simpson(1, true, 20_000),
            simpson(2, false, 20_000),
            simpson(2, true, 20_000),
        ];
        // The trapezoid rule with 200 steps is accurate to about h² = 1e-4.
        for (p, s) in PINNED.iter().zip(fine) {
            assert!((p - s).abs() < 1e-3, "pinned {p} vs integral {s}");
        }
        // ∫₀² (x+1)^x dx lies between 2 (the function's minimum 1 over a
        // width of 2) and 18 (its maximum 9); it is about 5.7638.
        assert!((fine[0] - 5.7638).abs() < 1e-3, "{}", fine[0]);
    }

    #[test]
    fn runs_and_verifies() {
        let mut k = Fourier::new();
        k.run(1);
        k.verify().unwrap();
        let first = k.leading();
        k.run(2);
        assert_eq!(first, k.leading(), "iterations must repeat exactly");
        k.a[1] += 1e-6;
        assert!(k.verify().is_err());
    }
}
