//! LU decomposition: solve a dense 101×101 linear system A·x = b by Gaussian
//! elimination with partial pivoting (Doolittle LU factorisation in place,
//! rows exchanged physically), then forward and back substitution.
//!
//! A has entries uniform in [−1, 1); b is built from a known solution
//! x* (x*_i = 1 + i/n), so the answer can be checked two ways: the scaled
//! residual ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞) must be a small multiple of the machine
//! epsilon, and x must match x* closely. Each iteration copies the pristine
//! matrix and right-hand side (80 KiB) and solves; the elimination's inner
//! loop is a double-precision multiply-subtract over a row, which compilers
//! vectorise with the baseline SIMD of either architecture. Floating-point
//! index.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str =
    "solve a 101x101 dense linear system by LU decomposition with partial pivoting";

pub const N: usize = 101;
const SEED: u64 = 0x6c75_6465_636f_6d70;
/// Scaled residual bound: n·ε would be tight; allow a generous margin.
const MAX_SCALED_RESIDUAL: f64 = 1e-12;
const MAX_SOLUTION_ERROR: f64 = 1e-8;

pub struct LuDecomposition {
    n: usize,
    a0: Vec<f64>,
    b0: Vec<f64>,
    x_true: Vec<f64>,
    a: Vec<f64>,
    x: Vec<f64>,
    iterations: u64,
}

impl LuDecomposition {
    pub fn new() -> Self {
        Self::with_size(N)
    }

    pub fn with_size(n: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let a0: Vec<f64> = (0..n * n).map(|_| 2.0 * rng.next_f64() - 1.0).collect();
        let x_true: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / n as f64).collect();
        let b0 = mat_vec(n, &a0, &x_true);
        LuDecomposition {
            n,
            a: a0.clone(),
            x: b0.clone(),
            a0,
            b0,
            x_true,
            iterations: 0,
        }
    }

    pub fn solution(&self) -> &[f64] {
        &self.x
    }

    fn solve(&mut self) -> bool {
        let n = self.n;
        self.a.copy_from_slice(black_box(&self.a0));
        self.x.copy_from_slice(black_box(&self.b0));
        let (a, x) = (&mut self.a, &mut self.x);
        for k in 0..n {
            // Partial pivoting: the largest magnitude in column k.
            let mut p = k;
            for i in k + 1..n {
                if a[i * n + k].abs() > a[p * n + k].abs() {
                    p = i;
                }
            }
            if a[p * n + k] == 0.0 {
                return false;
            }
            if p != k {
                let (top, bottom) = a.split_at_mut(p * n);
                top[k * n..k * n + n].swap_with_slice(&mut bottom[..n]);
                x.swap(k, p);
            }
            let (upper, lower) = a.split_at_mut((k + 1) * n);
            let pivot_row = &upper[k * n..k * n + n];
            let pivot = pivot_row[k];
            for row in lower.chunks_exact_mut(n) {
                let l = row[k] / pivot;
                row[k] = l;
                for (r, &u) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                    *r -= l * u;
                }
            }
        }
        // Forward substitution with the unit lower factor (b already permuted).
        for i in 1..n {
            let row = &a[i * n..i * n + i];
            let s: f64 = row.iter().zip(&x[..i]).map(|(l, y)| l * y).sum();
            x[i] -= s;
        }
        // Back substitution with the upper factor.
        for i in (0..n).rev() {
            let row = &a[i * n..(i + 1) * n];
            let s: f64 = row[i + 1..]
                .iter()
                .zip(&x[i + 1..])
                .map(|(u, y)| u * y)
                .sum();
            x[i] = (x[i] - s) / row[i];
        }
        true
    }
}

fn mat_vec(n: usize, a: &[f64], x: &[f64]) -> Vec<f64> {
    a.chunks_exact(n)
        .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

impl super::Kernel for LuDecomposition {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            let ok = self.solve();
            black_box((ok, &self.x));
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("lu decomposition has not run".into());
        }
        let n = self.n;
        let ax = mat_vec(n, &self.a0, &self.x);
        let residual = ax
            .iter()
            .zip(&self.b0)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        let norm_a = self
            .a0
            .chunks_exact(n)
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        let norm_x = self.x.iter().map(|v| v.abs()).fold(0.0, f64::max);
        let scaled = residual / (norm_a * norm_x).max(f64::MIN_POSITIVE);
        if scaled.is_nan() || scaled >= MAX_SCALED_RESIDUAL {
            return Err(format!(
                "lu decomposition: scaled residual {scaled:.3e} is above {MAX_SCALED_RESIDUAL:e}"
            ));
        }
        let err = self
            .x
            .iter()
            .zip(&self.x_true)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        if err.is_nan() || err >= MAX_SOLUTION_ERROR {
            return Err(format!(
                "lu decomposition: solution differs from the known answer by {err:.3e}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Kernel;
    use super::*;

    #[test]
    fn solves_small_known_system() {
        // 2x + y = 5, x + 3y = 10 → x = 1, y = 3: no row exchange needed,
        let mut k = LuDecomposition::with_size(2);
        k.a0 = vec![2.0, 1.0, 1.0, 3.0];
        k.x_true = vec![1.0, 3.0];
        k.b0 = vec![5.0, 10.0];
        k.run(1);
        k.verify().unwrap();
        // … and one that does: 0·x + y = 2, x + y = 3 → x = 1, y = 2.
        k.a0 = vec![0.0, 1.0, 1.0, 1.0];
        k.x_true = vec![1.0, 2.0];
        k.b0 = vec![2.0, 3.0];
        k.run(1);
        k.verify().unwrap();
        assert_eq!(k.solution(), &[1.0, 2.0]);
    }

    #[test]
    fn full_size_residual_is_tiny() {
        for n in [1usize, 5, 30, N] {
            let mut k = LuDecomposition::with_size(n);
            k.run(2);
            k.verify().unwrap_or_else(|e| panic!("n={n}: {e}"));
        }
        let mut k = LuDecomposition::new();
        k.run(1);
        k.x[50] += 1e-6;
        assert!(k.verify().is_err());
    }

    #[test]
    fn singular_matrix_is_reported() {
        let mut k = LuDecomposition::with_size(2);
        k.a0 = vec![1.0, 2.0, 2.0, 4.0];
        k.b0 = vec![1.0, 2.0];
        k.run(1);
        assert!(k.verify().is_err());
    }
}
