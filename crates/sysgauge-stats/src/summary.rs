//! `Summary` of repeated measurements: median (the headline value), min, max,
//! mean, sample standard deviation, coefficient of variation and median
//! absolute deviation.
//!
//! The median is the value we report because a benchmark's error is one-sided
//! (interference only ever slows a run down); the CoV decides whether a case is
//! noisy, the MAD finds single outliers without being dragged by them.

use serde::{Deserialize, Serialize};

/// Statistics of one metric's samples. Constructed only from at least one
/// finite sample, so every field is a finite number.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for one sample.
    pub stddev: f64,
    /// Coefficient of variation, stddev / |mean|; 0 when the mean is 0.
    pub cov: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
}

impl Summary {
    /// Summarise `samples`. Returns `None` when there is no sample or a sample
    /// is not finite (NaN or infinite values mean the measurement was broken).
    pub fn from_samples(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = mean(samples);
        let sd = stddev(samples);
        Some(Summary {
            n: samples.len(),
            median: median(samples),
            min: samples.iter().cloned().fold(f64::INFINITY, f64::min),
            max: samples.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            mean,
            stddev: sd,
            cov: if mean != 0.0 { sd / mean.abs() } else { 0.0 },
            mad: mad(samples),
        })
    }

    /// Spread as a percentage of the mean (the CoV × 100).
    pub fn spread_percent(&self) -> f64 {
        self.cov * 100.0
    }
}

pub fn mean(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// Sample standard deviation; 0 for fewer than two samples.
pub fn stddev(samples: &[f64]) -> f64 {
    let n = samples.len();
    if n < 2 {
        return 0.0;
    }
    let m = mean(samples);
    let var = samples.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1) as f64;
    var.sqrt()
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median; the mean of the two middle values for an even count. NaN if empty.
pub fn median(samples: &[f64]) -> f64 {
    let v = sorted(samples);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Percentile `p` in [0, 100] by linear interpolation between closest ranks.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    percentile_of_sorted(&sorted(samples), p)
}

/// `percentile` of samples already in ascending order.
pub(crate) fn percentile_of_sorted(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let p = p.clamp(0.0, 100.0) / 100.0;
    let pos = p * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    v[lo] + (v[hi] - v[lo]) * frac
}

/// Median absolute deviation from the median (unscaled).
pub fn mad(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let m = median(samples);
    let dev: Vec<f64> = samples.iter().map(|v| (v - m).abs()).collect();
    median(&dev)
}

/// Indexes of samples further than `k` scaled MADs from the median (the
/// usual robust outlier rule, with MAD × 1.4826 estimating σ). With a MAD of
/// zero nothing is an outlier.
pub fn mad_outliers(samples: &[f64], k: f64) -> Vec<usize> {
    if samples.len() < 3 {
        return Vec::new();
    }
    let m = median(samples);
    let s = mad(samples) * 1.4826;
    if s == 0.0 {
        return Vec::new();
    }
    samples
        .iter()
        .enumerate()
        .filter(|(_, v)| ((*v - m) / s).abs() > k)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_summary() {
        let s = Summary::from_samples(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        let s = s.unwrap_or_else(|| panic!("summary"));
        assert_eq!(s.n, 8);
        assert_eq!(s.median, 4.5);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - 2.138089935299395).abs() < 1e-12);
        assert!((s.cov - 0.427617987059879).abs() < 1e-12);
        assert_eq!(s.mad, 0.5);
    }

    #[test]
    fn single_and_empty() {
        let s = Summary::from_samples(&[3.0]).unwrap_or_else(|| panic!("summary"));
        assert_eq!((s.median, s.stddev, s.cov, s.mad), (3.0, 0.0, 0.0, 0.0));
        assert!(Summary::from_samples(&[]).is_none());
        assert!(Summary::from_samples(&[1.0, f64::NAN]).is_none());
        assert!(Summary::from_samples(&[1.0, f64::INFINITY]).is_none());
    }

    #[test]
    fn percentiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 50.0), 3.0);
        assert_eq!(percentile(&v, 100.0), 5.0);
        assert_eq!(percentile(&v, 25.0), 2.0);
        assert!((percentile(&[1.0, 2.0], 99.0) - 1.99).abs() < 1e-12);
    }

    #[test]
    fn outliers_found() {
        let v = [10.0, 10.1, 9.9, 10.0, 10.2, 30.0];
        assert_eq!(mad_outliers(&v, 3.0), vec![5]);
        assert!(mad_outliers(&[1.0, 1.0, 1.0, 5.0], 3.0).is_empty());
    }

    proptest! {
        #[test]
        fn summary_invariants(vs in proptest::collection::vec(-1e9f64..1e9, 1..50)) {
            let s = Summary::from_samples(&vs).unwrap_or_else(|| panic!("summary"));
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
            prop_assert!(s.stddev >= 0.0 && s.mad >= 0.0 && s.cov >= 0.0);
            prop_assert_eq!(s.n, vs.len());
        }

        #[test]
        fn summary_scale_invariant_cov(vs in proptest::collection::vec(1.0f64..1e6, 2..30), k in 0.01f64..100.0) {
            let a = Summary::from_samples(&vs).unwrap_or_else(|| panic!("summary"));
            let scaled: Vec<f64> = vs.iter().map(|v| v * k).collect();
            let b = Summary::from_samples(&scaled).unwrap_or_else(|| panic!("summary"));
            prop_assert!((a.cov - b.cov).abs() < 1e-9);
            prop_assert!((a.median * k - b.median).abs() <= b.median.abs() * 1e-9);
        }

        #[test]
        fn percentile_monotone(vs in proptest::collection::vec(-1e6f64..1e6, 1..40), p in 0.0f64..100.0, q in 0.0f64..100.0) {
            let (lo, hi) = if p <= q { (p, q) } else { (q, p) };
            prop_assert!(percentile(&vs, lo) <= percentile(&vs, hi));
        }
    }
}
