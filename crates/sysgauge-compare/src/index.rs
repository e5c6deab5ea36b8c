//! Indexes against a reference run: per family and overall, 1000 × the
//! geometric mean of the direction-adjusted ratios over the cases both runs
//! have (1000 = as fast as the reference machine). This is what ends every
//! `sysgauge run` summary, against the baseline compiled into the binary.
//!
//! Cases match exactly as in comparisons (id, params, workload version,
//! metric), so a benchmark whose workload changed after the reference was
//! recorded drops out of the index instead of being compared with old
//! numbers; every index line says how many cases it rests on and how many of
//! the run's cases the reference lacks.

use crate::case::{adjusted_ratio, conversion_factor, CaseSet};
use serde::{Deserialize, Serialize};
use sysgauge_core::record::RunRecord;
use sysgauge_core::Unit;
use sysgauge_stats::geomean;

/// The index of one family (or of all cases).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexLine {
    pub family: String,
    /// 1000 × geometric mean of the ratios; null when no case matched.
    pub index: Option<f64>,
    /// Cases both runs have, with a ratio.
    pub cases: usize,
    /// The run's cases the reference does not have (or cannot be compared).
    pub unmatched: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexReport {
    /// In the run's family order.
    pub families: Vec<IndexLine>,
    pub overall: IndexLine,
}

/// Index `run` against `reference`.
pub fn index_against(run: &RunRecord, reference: &RunRecord) -> IndexReport {
    let ours = CaseSet::from_run(run);
    let theirs = CaseSet::from_run(reference);
    let mut all_ratios = Vec::new();
    let mut all_unmatched = 0;
    let families = ours
        .families()
        .into_iter()
        .map(|family| {
            let mut ratios = Vec::new();
            let mut unmatched = 0;
            for key in ours.keys() {
                let Some(a) = ours.get(key).filter(|d| d.family == family) else {
                    continue;
                };
                // Indexes computed inside a run (cpu.index-*) are already
                // geometric means of cases counted here: leave them out
                // rather than count their kernels twice.
                if a.unit == Unit::Index {
                    continue;
                }
                // A metric that is zero on both sides (the user time of a
                // program that only copies) has no ratio but is not missing.
                if theirs
                    .get(key)
                    .is_some_and(|b| a.value == 0.0 && b.value == 0.0)
                {
                    continue;
                }
                let ratio = theirs.get(key).and_then(|b| {
                    if a.better != b.better {
                        return None;
                    }
                    let f = conversion_factor(&a.unit, &b.unit)?;
                    adjusted_ratio(a.value * f, b.value, a.better)
                });
                match ratio {
                    Some(r) => ratios.push(r),
                    None => unmatched += 1,
                }
            }
            all_ratios.extend_from_slice(&ratios);
            all_unmatched += unmatched;
            IndexLine {
                family,
                index: geomean(&ratios).map(|g| 1000.0 * g),
                cases: ratios.len(),
                unmatched,
            }
        })
        .collect();
    IndexReport {
        families,
        overall: IndexLine {
            family: crate::comparison::OVERALL.to_string(),
            index: geomean(&all_ratios).map(|g| 1000.0 * g),
            cases: all_ratios.len(),
            unmatched: all_unmatched,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{result, run_with, throughput, throughput_at};
    use sysgauge_core::Better;

    #[test]
    fn index_of_reference_is_1000() {
        let r = run_with(
            "ref",
            None,
            vec![
                throughput("beta.sha256", &[100.0, 101.0]),
                throughput("beta.md5", &[50.0]),
            ],
        );
        let ix = index_against(&r, &r);
        assert_eq!(ix.overall.index, Some(1000.0));
        assert_eq!(ix.overall.cases, 2);
        assert_eq!(ix.families[0].family, "beta");
    }

    #[test]
    fn derived_indexes_are_not_counted_again() {
        let r = run_with(
            "ref",
            None,
            vec![
                result(
                    "alpha.index-float",
                    1,
                    1,
                    "index",
                    Unit::Index,
                    Better::Higher,
                    &[900.0],
                ),
                throughput("beta.md5", &[50.0]),
            ],
        );
        let ix = index_against(&r, &r);
        assert_eq!(ix.overall.cases, 1);
        assert_eq!(ix.overall.unmatched, 0);
    }

    #[test]
    fn zero_on_both_sides_is_neither_a_ratio_nor_missing() {
        let r = run_with(
            "ref",
            None,
            vec![
                result(
                    "omega.dd",
                    1,
                    1,
                    "user_time",
                    Unit::Seconds,
                    Better::Lower,
                    &[0.0, 0.0],
                ),
                throughput("beta.md5", &[50.0]),
            ],
        );
        let ix = index_against(&r, &r);
        assert_eq!(ix.overall.index, Some(1000.0));
        assert_eq!(ix.overall.cases, 1);
        assert_eq!(ix.overall.unmatched, 0);
    }

    #[test]
    fn index_is_geomean_times_1000_and_counts_unmatched() {
        let reference = run_with(
            "ref",
            None,
            vec![
                throughput("beta.sha256", &[100.0]),
                throughput("beta.md5", &[100.0]),
                result(
                    "gamma.latency",
                    0,
                    1,
                    "latency",
                    Unit::Nanoseconds,
                    Better::Lower,
                    &[100.0],
                ),
            ],
        );
        let run = run_with(
            "new",
            None,
            vec![
                // 2x and 0.5x → geomean 1 → 1000; latency 50 ns vs 100 → 2x.
                throughput("beta.sha256", &[200.0]),
                result(
                    "beta.md5",
                    8192,
                    1,
                    "throughput",
                    Unit::KBps,
                    Better::Higher,
                    &[50_000.0],
                ),
                throughput_at("beta.md5", 16, &[1.0]),
                result(
                    "gamma.latency",
                    0,
                    1,
                    "latency",
                    Unit::Nanoseconds,
                    Better::Lower,
                    &[50.0],
                ),
            ],
        );
        let ix = index_against(&run, &reference);
        let hash = &ix.families[0];
        assert_eq!(hash.family, "beta");
        assert!(
            (hash.index.unwrap_or(0.0) - 1000.0).abs() < 1e-9,
            "{hash:?}"
        );
        assert_eq!((hash.cases, hash.unmatched), (2, 1));
        let mem = &ix.families[1];
        assert!((mem.index.unwrap_or(0.0) - 2000.0).abs() < 1e-9);
        // Overall: geomean(2, 0.5, 2) = 2^(1/3).
        let expected = 1000.0 * 2f64.powf(1.0 / 3.0);
        assert!((ix.overall.index.unwrap_or(0.0) - expected).abs() < 1e-9);
        assert_eq!((ix.overall.cases, ix.overall.unmatched), (3, 1));
    }

    #[test]
    fn changed_workload_is_not_indexed() {
        let reference = run_with("ref", None, vec![throughput("beta.sha256", &[100.0])]);
        let mut run = reference.clone();
        run.results[0].workload_version = 2;
        let ix = index_against(&run, &reference);
        assert_eq!(ix.overall.index, None);
        assert_eq!((ix.overall.cases, ix.overall.unmatched), (0, 1));
    }
}
