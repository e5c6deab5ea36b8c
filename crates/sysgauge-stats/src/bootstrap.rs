//! Bootstrap confidence intervals for medians, ratios of medians and the
//! geometric mean of several ratios.
//!
//! Percentile bootstrap: resample each side's raw samples with replacement,
//! recompute the statistic, and take the 2.5th and 97.5th percentiles. With
//! five repetitions per side this is coarse, but it is honest about what five
//! samples can say, and it needs no normality assumption.

use crate::summary::{median, percentile_of_sorted};
use serde::{Deserialize, Serialize};

/// A point estimate with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfidenceInterval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl ConfidenceInterval {
    /// True when the interval contains `value` (e.g. 1.0 for "no difference").
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// SplitMix64: a tiny, well-known PRNG with a fixed output stream, so stored
/// samples always give the same interval.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform index in `0..n` (n > 0), by multiply-shift (bias < 2^-32 for small n).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
    /// Uniform f64 in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const RESAMPLES: usize = 2000;

/// The most samples of one side a bootstrap resamples. Each resample costs
/// its side's sample count (a draw and a sort), so without a bound one case
/// with 160,000 samples took most of a minute; above it the bootstrap
/// resamples this many of the samples' order statistics, evenly spaced from
/// the smallest to the largest (the same shape, deterministically). The
/// interval of a sample this size is wider than the whole set's would be:
/// conservative, never narrower. The point estimate uses every sample.
pub const MAX_RESAMPLED: usize = 4096;

/// `samples`, or their `MAX_RESAMPLED` evenly spaced order statistics
/// when there are more.
fn bounded(samples: &[f64]) -> std::borrow::Cow<'_, [f64]> {
    let n = samples.len();
    if n <= MAX_RESAMPLED {
        return std::borrow::Cow::Borrowed(samples);
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let m = MAX_RESAMPLED;
    std::borrow::Cow::Owned((0..m).map(|i| sorted[i * (n - 1) / (m - 1)]).collect())
}

/// One side's samples ready for resampling medians. A resample draws
/// indices into the samples; its median is an order statistic, so it is
/// read from how many draws fell on each rank of the sorted samples (a
/// counting pass) instead of sorting the drawn values: the same draws give
/// the same median, without a sort and an allocation per resample, which
/// was most of the cost of comparing many machines.
struct Resampler {
    /// The samples in sorted order.
    sorted: Vec<f64>,
    /// Each sample's rank in `sorted`, by its index in the samples.
    rank: Vec<u32>,
    counts: Vec<u32>,
}

impl Resampler {
    fn new(samples: &[f64]) -> Self {
        let bounded = bounded(samples);
        let mut order: Vec<usize> = (0..bounded.len()).collect();
        order.sort_by(|&i, &j| bounded[i].total_cmp(&bounded[j]));
        let mut rank = vec![0u32; bounded.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        Resampler {
            sorted: order.iter().map(|&i| bounded[i]).collect(),
            rank,
            counts: vec![0; bounded.len()],
        }
    }

    /// The median of one resample drawn with `rng` (the mean of the two
    /// middle values for an even count, as `median`).
    fn median(&mut self, rng: &mut SplitMix64) -> f64 {
        let n = self.rank.len();
        // The drawn ranks' (n-1)/2-th and n/2-th smallest (0-based).
        let (lo_k, hi_k) = ((n - 1) / 2, n / 2);
        let (lo, hi) = if n <= WORD_COUNTS {
            self.middle_ranks_in_a_word(rng, lo_k, hi_k)
        } else {
            self.middle_ranks_counted(rng, lo_k, hi_k)
        };
        if n % 2 == 1 {
            self.sorted[hi]
        } else {
            (self.sorted[lo] + self.sorted[hi]) / 2.0
        }
    }

    /// Few samples (the usual case: a handful of repetitions): the counts
    /// are the bytes of one word, one multiplication gives their running
    /// sums (each at most `n`, so no byte overflows), and the first rank
    /// whose running sum passes `k` is found without a loop (a loop's
    /// exit at a random rank was a mispredicted branch per resample).
    fn middle_ranks_in_a_word(
        &self,
        rng: &mut SplitMix64,
        lo_k: usize,
        hi_k: usize,
    ) -> (usize, usize) {
        const ONES: u128 = u128::MAX / 0xFF;
        const HIGH: u128 = ONES << 7;
        let n = self.rank.len();
        let mut counts = 0u128;
        for _ in 0..n {
            counts += 1 << (8 * self.rank[rng.below(n)]);
        }
        let running = counts.wrapping_mul(ONES);
        // A byte's top bit is set by adding 0x80 - (k + 1) exactly when the
        // byte is above k (bytes are at most 15, so nothing carries out).
        let first_above = |k: usize| {
            let over = running.wrapping_add(ONES * (0x80 - (k as u128 + 1))) & HIGH;
            (over.trailing_zeros() / 8) as usize
        };
        let hi = first_above(hi_k);
        let lo = if lo_k == hi_k { hi } else { first_above(lo_k) };
        (lo, hi)
    }

    fn middle_ranks_counted(
        &mut self,
        rng: &mut SplitMix64,
        lo_k: usize,
        hi_k: usize,
    ) -> (usize, usize) {
        let n = self.rank.len();
        self.counts.fill(0);
        for _ in 0..n {
            self.counts[self.rank[rng.below(n)] as usize] += 1;
        }
        let (mut lo, mut seen) = (None, 0usize);
        for (r, &c) in self.counts.iter().enumerate() {
            seen += c as usize;
            if lo.is_none() && seen > lo_k {
                lo = Some(r);
            }
            if seen > hi_k {
                return (lo.unwrap_or(r), r);
            }
        }
        (n - 1, n - 1)
    }
}

/// The most samples whose draw counts, and their running sums, fit the
/// bytes of a `u128` with the top bit of each byte free.
const WORD_COUNTS: usize = 15;

fn interval(estimate: f64, mut stats: Vec<f64>) -> ConfidenceInterval {
    stats.sort_by(f64::total_cmp);
    let low = percentile_of_sorted(&stats, 2.5).min(estimate);
    let high = percentile_of_sorted(&stats, 97.5).max(estimate);
    ConfidenceInterval {
        estimate,
        low,
        high,
    }
}

/// 95 % bootstrap interval of the median of `samples`.
pub fn bootstrap_ci(samples: &[f64], seed: u64) -> Option<ConfidenceInterval> {
    if samples.is_empty() || samples.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut side = Resampler::new(samples);
    let stats: Vec<f64> = (0..RESAMPLES).map(|_| side.median(&mut rng)).collect();
    Some(interval(median(samples), stats))
}

/// 95 % bootstrap interval of median(a) / median(b). Values must be positive.
pub fn ratio_ci(a: &[f64], b: &[f64], seed: u64) -> Option<ConfidenceInterval> {
    let ok = |s: &[f64]| !s.is_empty() && s.iter().all(|v| v.is_finite() && *v > 0.0);
    if !ok(a) || !ok(b) {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let (mut ra, mut rb) = (Resampler::new(a), Resampler::new(b));
    let stats: Vec<f64> = (0..RESAMPLES)
        .map(|_| ra.median(&mut rng) / rb.median(&mut rng))
        .collect();
    Some(interval(median(a) / median(b), stats))
}

/// 95 % bootstrap interval of the geometric mean of several ratios
/// median(aᵢ)/median(bᵢ), resampling every pair jointly.
pub fn geomean_ci(pairs: &[(&[f64], &[f64])], seed: u64) -> Option<ConfidenceInterval> {
    let ok = |s: &[f64]| !s.is_empty() && s.iter().all(|v| v.is_finite() && *v > 0.0);
    if pairs.is_empty() || pairs.iter().any(|(a, b)| !ok(a) || !ok(b)) {
        return None;
    }
    let point: f64 = pairs
        .iter()
        .map(|(a, b)| (median(a) / median(b)).ln())
        .sum::<f64>()
        / pairs.len() as f64;
    let mut rng = SplitMix64::new(seed);
    let mut resampled: Vec<_> = pairs
        .iter()
        .map(|(a, b)| (Resampler::new(a), Resampler::new(b)))
        .collect();
    let stats: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let s: f64 = resampled
                .iter_mut()
                .map(|(a, b)| (a.median(&mut rng) / b.median(&mut rng)).ln())
                .sum();
            (s / pairs.len() as f64).exp()
        })
        .collect();
    Some(interval(point.exp(), stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn huge_sample_sets_are_resampled_through_a_bounded_subset() {
        // 160,000 samples: the bootstrap sees MAX_RESAMPLED of them, from
        // the smallest to the largest, and gives the interval it gives that
        // subset; the estimate is the whole set's median.
        let n = 160_000;
        let mut rng = SplitMix64::new(7);
        let a: Vec<f64> = (0..n).map(|_| 100.0 + rng.next_f64()).collect();
        let b: Vec<f64> = (0..n).map(|_| 50.0 + rng.next_f64()).collect();
        let sub = bounded(&a);
        assert_eq!(sub.len(), MAX_RESAMPLED);
        let (lo, hi) = a
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        assert_eq!((sub[0], sub[MAX_RESAMPLED - 1]), (lo, hi));
        assert!(sub.windows(2).all(|w| w[0] <= w[1]));
        assert!((median(&sub) - median(&a)).abs() < 0.01);
        let whole = ratio_ci(&a, &b, 3).unwrap_or_else(|| panic!("ratio_ci"));
        let of_subset = ratio_ci(&bounded(&a), &bounded(&b), 3).unwrap_or_else(|| panic!("ci"));
        assert_eq!(whole.estimate, median(&a) / median(&b));
        assert_eq!((whole.low, whole.high), (of_subset.low, of_subset.high));
        assert!(whole.contains(whole.estimate) && whole.high - whole.low < 0.01);
        let g = geomean_ci(&[(&a, &b)], 3).unwrap_or_else(|| panic!("geomean_ci"));
        assert!(g.contains(g.estimate) && (g.estimate - median(&a) / median(&b)).abs() < 1e-9);
        let m = bootstrap_ci(&a, 3).unwrap_or_else(|| panic!("bootstrap_ci"));
        assert_eq!(m.estimate, median(&a));
        // Small sets are resampled whole.
        assert!(matches!(bounded(&a[..5]), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn splitmix_reference_stream() {
        // First outputs for seed 0, as published with the algorithm.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn self_ratio_is_one() {
        let a = [10.0, 11.0, 9.5, 10.2, 10.1];
        let ci = ratio_ci(&a, &a, 1).unwrap_or_else(|| panic!("ci"));
        assert_eq!(ci.estimate, 1.0);
        assert!(ci.contains(1.0));
    }

    #[test]
    fn clear_difference_excludes_one() {
        let a = [20.0, 20.5, 19.8, 20.1, 20.2];
        let b = [10.0, 10.1, 9.9, 10.2, 10.0];
        let ci = ratio_ci(&a, &b, 7).unwrap_or_else(|| panic!("ci"));
        assert!(!ci.contains(1.0));
        assert!(ci.low > 1.8 && ci.high < 2.2, "{ci:?}");
    }

    #[test]
    fn rejects_bad_input() {
        assert!(ratio_ci(&[], &[1.0], 1).is_none());
        assert!(ratio_ci(&[0.0], &[1.0], 1).is_none());
        assert!(geomean_ci(&[], 1).is_none());
        assert!(bootstrap_ci(&[f64::NAN], 1).is_none());
    }

    /// A resample's median the plain way: draw the values, sort, take the
    /// middle.
    fn drawn_median(rng: &mut SplitMix64, samples: &[f64]) -> f64 {
        let drawn: Vec<f64> = (0..samples.len())
            .map(|_| samples[rng.below(samples.len())])
            .collect();
        median(&drawn)
    }

    #[test]
    fn counting_ranks_gives_the_drawn_median() {
        // Ties, odd and even counts, unsorted input, counts in a word (up
        // to 15 samples) and in an array: the same draws give the same
        // median, bit for bit.
        let sets: [&[f64]; 7] = [
            &[3.0],
            &[2.0, 1.0],
            &[5.0, 1.0, 5.0, 2.0, 9.0],
            &[4.0, 4.0, 1.5, 8.0, 2.5, 7.0],
            &[10.0, 11.0, 9.5, 10.2, 10.1, 9.9, 10.0],
            &[
                7.0, 1.0, 3.0, 3.0, 9.0, 2.0, 8.0, 6.0, 5.0, 4.0, 0.5, 2.5, 7.5, 1.5, 6.5,
            ],
            &[
                7.0, 1.0, 3.0, 3.0, 9.0, 2.0, 8.0, 6.0, 5.0, 4.0, 0.5, 2.5, 7.5, 1.5, 6.5, 3.5,
            ],
        ];
        for set in sets {
            let (mut a, mut b) = (SplitMix64::new(11), SplitMix64::new(11));
            let mut side = Resampler::new(set);
            for _ in 0..500 {
                assert_eq!(
                    side.median(&mut a).to_bits(),
                    drawn_median(&mut b, set).to_bits()
                );
            }
        }
    }

    proptest! {
        #[test]
        fn ci_contains_estimate(a in proptest::collection::vec(0.1f64..1e4, 1..12),
                                b in proptest::collection::vec(0.1f64..1e4, 1..12),
                                seed in any::<u64>()) {
            let r = ratio_ci(&a, &b, seed).unwrap_or_else(|| panic!("ci"));
            prop_assert!(r.low <= r.estimate && r.estimate <= r.high);
            let g = geomean_ci(&[(&a, &b), (&b, &a)], seed).unwrap_or_else(|| panic!("ci"));
            prop_assert!(g.low <= g.estimate && g.estimate <= g.high);
            prop_assert!((g.estimate - 1.0).abs() < 1e-9);
            let m = bootstrap_ci(&a, seed).unwrap_or_else(|| panic!("ci"));
            prop_assert!(m.low <= m.estimate && m.estimate <= m.high);
        }

        #[test]
        fn resampled_medians_match_drawing_and_sorting(
            a in proptest::collection::vec(0.1f64..1e4, 1..40),
            seed in any::<u64>(),
        ) {
            let (mut x, mut y) = (SplitMix64::new(seed), SplitMix64::new(seed));
            let mut side = Resampler::new(&a);
            for _ in 0..50 {
                prop_assert_eq!(side.median(&mut x).to_bits(), drawn_median(&mut y, &a).to_bits());
            }
        }
    }
}
