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

/// One side's samples ready for resampling medians.
///
/// A resample's median is an order statistic of the samples (or the mean
/// of two), so its distribution over the sorted samples is known exactly
/// from the binomial and multinomial laws. With few samples (the usual
/// case: a handful of repetitions) a resample's median is drawn from that
/// distribution with one random number, instead of drawing every sample
/// and sorting: the same law, a fifth of the draws at five samples, which
/// is what lets a comparison of many machines answer quickly. With more
/// samples the table would grow with their square, so they are drawn one
/// by one and the middle found by counting ranks.
struct Resampler {
    kind: Draw,
}

enum Draw {
    /// Running probabilities and the median each entry stands for.
    Table {
        cumulative: Vec<f64>,
        median: Vec<f64>,
    },
    /// The sorted samples, each sample's rank, and a count per rank.
    Counted {
        sorted: Vec<f64>,
        rank: Vec<u32>,
        counts: Vec<u32>,
    },
}

/// The most samples whose resampled median is drawn from its exact table.
const EXACT_UP_TO: usize = 15;

impl Resampler {
    fn new(samples: &[f64]) -> Self {
        let bounded = bounded(samples);
        let mut order: Vec<usize> = (0..bounded.len()).collect();
        order.sort_by(|&i, &j| bounded[i].total_cmp(&bounded[j]));
        let sorted: Vec<f64> = order.iter().map(|&i| bounded[i]).collect();
        if sorted.len() <= EXACT_UP_TO {
            let (cumulative, median) = median_table(&sorted);
            return Resampler {
                kind: Draw::Table { cumulative, median },
            };
        }
        let mut rank = vec![0u32; bounded.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        Resampler {
            kind: Draw::Counted {
                counts: vec![0; sorted.len()],
                sorted,
                rank,
            },
        }
    }

    /// The median of one resample drawn with `rng` (the mean of the two
    /// middle values for an even count, as `median`).
    fn median(&mut self, rng: &mut SplitMix64) -> f64 {
        match &mut self.kind {
            Draw::Table { cumulative, median } => {
                let u = rng.next_f64();
                let i = cumulative.partition_point(|&c| c <= u);
                median[i.min(median.len() - 1)]
            }
            Draw::Counted {
                sorted,
                rank,
                counts,
            } => {
                let n = rank.len();
                counts.fill(0);
                for _ in 0..n {
                    counts[rank[rng.below(n)] as usize] += 1;
                }
                // The drawn ranks' (n-1)/2-th and n/2-th smallest (0-based).
                let (lo_k, hi_k) = ((n - 1) / 2, n / 2);
                let (mut lo, mut seen) = (None, 0usize);
                for (r, &c) in counts.iter().enumerate() {
                    seen += c as usize;
                    if lo.is_none() && seen > lo_k {
                        lo = Some(r);
                    }
                    if seen > hi_k {
                        let lo = lo.unwrap_or(r);
                        return if n % 2 == 1 {
                            sorted[r]
                        } else {
                            (sorted[lo] + sorted[r]) / 2.0
                        };
                    }
                }
                f64::NAN
            }
        }
    }
}

/// The distribution of the median of `n` draws with replacement from the
/// `n` sorted samples: running probabilities and the median of each
/// outcome (outcomes of probability 0 left out). Draws are uniform over
/// the ranks 0..n, so "a draw is at most rank r" has probability
/// (r + 1) / n whatever the values, ties included.
fn median_table(sorted: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = sorted.len();
    let nf = n as f64;
    let choose = |n: usize, k: usize| -> f64 {
        (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    };
    // P(at least `need` of the n draws are at most rank r).
    let at_least = |need: usize, r: usize| -> f64 {
        let p = (r + 1) as f64 / nf;
        (need..=n)
            .map(|j| choose(n, j) * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32))
            .sum()
    };
    let mut outcomes: Vec<(f64, f64)> = Vec::new();
    if n % 2 == 1 {
        // The median is the k-th smallest draw: at most r when at least
        // k + 1 draws are.
        let k = (n - 1) / 2;
        let mut below = 0.0;
        for (r, &v) in sorted.iter().enumerate() {
            let upto = if r + 1 == n { 1.0 } else { at_least(k + 1, r) };
            outcomes.push((upto - below, v));
            below = upto;
        }
    } else {
        // The median is the mean of the (m-1)-th and m-th smallest draws.
        let m = n / 2;
        let pow = |p: f64, e: usize| p.powi(e as i32);
        for a in 0..n {
            // Both at rank a: fewer than m draws below a, more than m at
            // most a.
            let (lt, eq, gt) = (a as f64 / nf, 1.0 / nf, (n - a - 1) as f64 / nf);
            let mut both = 0.0;
            for i in 0..m {
                for k in (m + 1).saturating_sub(i)..=(n - i) {
                    both += choose(n, i)
                        * choose(n - i, k)
                        * pow(lt, i)
                        * pow(eq, k)
                        * pow(gt, n - i - k);
                }
            }
            outcomes.push((both, sorted[a]));
            // Rank a then rank b > a: exactly m draws at most a (one at a
            // at least), the other n - m at least b (one at b at least).
            let low = pow((a + 1) as f64 / nf, m) - pow(a as f64 / nf, m);
            for b in a + 1..n {
                let high = pow((n - b) as f64 / nf, n - m) - pow((n - b - 1) as f64 / nf, n - m);
                outcomes.push((choose(n, m) * low * high, (sorted[a] + sorted[b]) / 2.0));
            }
        }
    }
    let mut cumulative = Vec::with_capacity(outcomes.len());
    let mut median = Vec::with_capacity(outcomes.len());
    let mut total = 0.0;
    for (p, v) in outcomes {
        if p > 0.0 {
            total += p;
            cumulative.push(total);
            median.push(v);
        }
    }
    (cumulative, median)
}

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
    fn median_tables_are_the_exact_distributions() {
        for n in 1..=EXACT_UP_TO {
            let sorted: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let (cumulative, median) = median_table(&sorted);
            assert_eq!(cumulative.len(), median.len());
            assert!(cumulative.windows(2).all(|w| w[0] <= w[1]), "n={n}");
            let total = cumulative[cumulative.len() - 1];
            assert!((total - 1.0).abs() < 1e-12, "n={n}: {total}");
        }
        // Three samples: the median is the smallest when at least two of
        // the three draws are: 3 * (1/3)^2 * (2/3) + (1/3)^3 = 7/27.
        let (cumulative, median) = median_table(&[1.0, 2.0, 3.0]);
        assert_eq!(median, [1.0, 2.0, 3.0]);
        assert!((cumulative[0] - 7.0 / 27.0).abs() < 1e-15);
        // Two samples: both draws low (1/4), both high (1/4), one each (1/2).
        let (cumulative, median) = median_table(&[2.0, 4.0]);
        let p: Vec<f64> = std::iter::once(cumulative[0])
            .chain(cumulative.windows(2).map(|w| w[1] - w[0]))
            .collect();
        let of = |v: f64| median.iter().position(|m| *m == v).map(|i| p[i]);
        assert_eq!(
            (of(2.0), of(3.0), of(4.0)),
            (Some(0.25), Some(0.5), Some(0.25))
        );
    }

    #[test]
    fn drawn_from_the_table_as_if_drawn_and_sorted() {
        // Odd and even counts, ties, unsorted: 100,000 resample medians
        // each way give each median value the same share (a share's
        // standard error is 0.0016 at most here).
        let sets: [&[f64]; 5] = [
            &[5.0, 1.0, 5.0, 2.0, 9.0],
            &[4.0, 4.0, 1.5, 8.0, 2.5, 7.0],
            &[10.0, 11.0, 9.5, 10.2, 10.1, 9.9, 10.0],
            &[3.0, 1.0],
            &[
                7.0, 1.0, 3.0, 3.0, 9.0, 2.0, 8.0, 6.0, 5.0, 4.0, 0.5, 2.5, 7.5, 1.5,
            ],
        ];
        let draws = 100_000;
        for set in sets {
            let mut side = Resampler::new(set);
            let (mut a, mut b) = (SplitMix64::new(5), SplitMix64::new(6));
            let mut shares: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
            for _ in 0..draws {
                shares.entry(side.median(&mut a).to_bits()).or_default().0 += 1.0;
                shares
                    .entry(drawn_median(&mut b, set).to_bits())
                    .or_default()
                    .1 += 1.0;
            }
            for (v, (x, y)) in shares {
                let (x, y) = (x / draws as f64, y / draws as f64);
                assert!(
                    (x - y).abs() < 0.01,
                    "{set:?}: {} {x} {y}",
                    f64::from_bits(v)
                );
            }
        }
    }

    #[test]
    fn many_samples_are_counted_as_drawn() {
        // Above the table's size the draws are made one by one: the same
        // draws give the same median as sorting them, bit for bit.
        let set: Vec<f64> = (0..40).map(|i| ((i * 7919) % 37) as f64 + 0.5).collect();
        for n in [EXACT_UP_TO + 1, EXACT_UP_TO + 2, 40] {
            let (mut a, mut b) = (SplitMix64::new(11), SplitMix64::new(11));
            let mut side = Resampler::new(&set[..n]);
            for _ in 0..500 {
                assert_eq!(
                    side.median(&mut a).to_bits(),
                    drawn_median(&mut b, &set[..n]).to_bits()
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
    }
}
