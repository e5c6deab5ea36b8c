//! Statistics for sysgauge: summaries of repeated measurements, outlier
//! detection, bootstrap confidence intervals and ratio/geometric-mean
//! comparisons.
//!
//! Everything here is pure arithmetic on `f64` slices so it can be property
//! tested and reused by every benchmark family and by `compare`. The bootstrap
//! uses its own small deterministic PRNG (SplitMix64) so that a comparison
//! computed twice from the same stored samples gives the same interval; no
//! external RNG crate guarantees a stable stream across versions.

#![forbid(unsafe_code)]

mod bootstrap;
mod summary;

pub use bootstrap::{
    bootstrap_ci, geomean_ci, ratio_ci, ConfidenceInterval, SplitMix64, MAX_RESAMPLED,
};
pub use summary::{mad, mad_outliers, mean, median, percentile, stddev, Summary};

/// Geometric mean of strictly positive values; `None` when empty or when a
/// value is not finite and positive (a ratio of zero or less has no meaning).
pub fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    let log_sum: f64 = values.iter().map(|v| v.ln()).sum();
    Some((log_sum / values.len() as f64).exp())
}

/// Arithmetic mean; `None` when empty.
pub fn arith_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(mean(values))
    }
}

/// Half-width of the 95 % confidence interval of the mean, relative to the
/// mean (Student's t). `None` for fewer than two samples or a zero mean.
pub fn mean_ci95_relative(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let m = mean(values);
    if m == 0.0 {
        return None;
    }
    let se = stddev(values) / (n as f64).sqrt();
    Some(t_critical_95(n - 1) * se / m.abs())
}

/// Two-sided 95 % critical value of Student's t for `df` degrees of freedom.
pub fn t_critical_95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn geomean_known_values() {
        let g = geomean(&[0.625, 2.5]).unwrap_or(f64::NAN);
        assert!((g - 1.25).abs() < 1e-12, "{g}");
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[1.0, 0.0]), None);
        assert_eq!(geomean(&[1.0, -2.0]), None);
    }

    #[test]
    fn t_table_monotone() {
        for df in 1..200 {
            assert!(t_critical_95(df) >= t_critical_95(df + 1));
        }
    }

    #[test]
    fn ci_relative_zero_for_constant() {
        assert_eq!(mean_ci95_relative(&[3.0, 3.0, 3.0]), Some(0.0));
        assert_eq!(mean_ci95_relative(&[3.0]), None);
    }

    proptest! {
        #[test]
        fn geomean_of_identical_is_value(v in 1e-6f64..1e6, n in 1usize..20) {
            let g = geomean(&vec![v; n]).unwrap_or(f64::NAN);
            prop_assert!((g - v).abs() <= v * 1e-9);
        }

        #[test]
        fn geomean_between_min_and_max(vs in proptest::collection::vec(1e-3f64..1e3, 1..30)) {
            let g = geomean(&vs).unwrap_or(f64::NAN);
            let lo = vs.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = vs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(g >= lo * (1.0 - 1e-9) && g <= hi * (1.0 + 1e-9));
        }
    }
}
