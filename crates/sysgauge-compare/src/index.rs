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
//!
//! The 95 % interval is a bootstrap over both sides' samples, and it carries
//! the between-run variance: a side measured in rounds has one sample per
//! round, and a side measured once borrows the other side's rounds (see
//! `with_between_runs`), so a one-round run against the baseline, which is
//! recorded in rounds, is as uncertain as a second run of the same machine
//! would show.

use crate::case::{adjusted_ratio, conversion_factor, CaseData, CaseSet};
use crate::comparison::{oriented, seed_of, Interval};
use serde::{Deserialize, Serialize};
use sysgauge_core::record::RunRecord;
use sysgauge_stats::{geomean, geomean_ci};

/// The index of one family (or of all cases).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexLine {
    pub family: String,
    /// 1000 × geometric mean of the ratios; null when no case matched.
    pub index: Option<f64>,
    /// 95 % interval of the index (× 1000), from the raw samples of both
    /// runs (percentile bootstrap, every case resampled jointly).
    #[serde(default)]
    pub interval: Option<Interval>,
    /// Cases both runs have, with a ratio.
    pub cases: usize,
    /// The run's cases the reference does not have (or cannot be compared).
    pub unmatched: usize,
    /// Cases both runs have but the index leaves out, because one side's
    /// result is not a measure of its machine: `case: reason`.
    #[serde(default)]
    pub left_out: Vec<String>,
    /// Of the cases counted, those this run measured while its machine was
    /// disturbed (other processes, steal, throttling, waits): what
    /// `run --exclude-disturbed` leaves out.
    #[serde(default)]
    pub disturbed: usize,
    /// Of the other cases counted, those whose reference result was
    /// disturbed (the baseline keeps such cases; see docs/baseline.md).
    /// Counted apart so that a user does not take them for this run's.
    #[serde(default)]
    pub reference_disturbed: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexReport {
    /// In the run's family order.
    pub families: Vec<IndexLine>,
    pub overall: IndexLine,
}

/// What one family (or all of them) collects on the way to its line.
#[derive(Default)]
struct Tally {
    ratios: Vec<f64>,
    /// Oriented samples of each ratio, for the interval.
    pairs: Vec<(Vec<f64>, Vec<f64>)>,
    unmatched: usize,
    left_out: Vec<String>,
    disturbed: usize,
    reference_disturbed: usize,
}

impl Tally {
    fn line(&self, family: String) -> IndexLine {
        let pairs: Vec<(&[f64], &[f64])> = self
            .pairs
            .iter()
            .map(|(a, b)| (a.as_slice(), b.as_slice()))
            .collect();
        let interval = geomean_ci(&pairs, seed_of(&family)).map(|ci| Interval {
            low: 1000.0 * ci.low,
            high: 1000.0 * ci.high,
        });
        IndexLine {
            index: geomean(&self.ratios).map(|g| 1000.0 * g),
            interval,
            cases: self.ratios.len(),
            unmatched: self.unmatched,
            left_out: self.left_out.clone(),
            disturbed: self.disturbed,
            reference_disturbed: self.reference_disturbed,
            family,
        }
    }

    fn extend(&mut self, other: &Tally) {
        self.ratios.extend_from_slice(&other.ratios);
        self.pairs.extend_from_slice(&other.pairs);
        self.unmatched += other.unmatched;
        self.left_out.extend_from_slice(&other.left_out);
        self.disturbed += other.disturbed;
        self.reference_disturbed += other.reference_disturbed;
    }
}

/// Positive, finite samples scaled by `f`; the value alone when none are.
fn usable(d: &CaseData, f: f64) -> Vec<f64> {
    let s: Vec<f64> = d
        .samples
        .iter()
        .map(|v| v * f)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if s.is_empty() {
        vec![d.value * f]
    } else {
        s
    }
}

/// The samples of one side, widened by what is known of the case's
/// between-run spread when that side was measured once: a side measured in
/// rounds already has one sample per round; a side measured once gets every
/// sample times every round factor of the other side (the between-run spread
/// of the same case there, usually the baseline's own rounds), so the
/// bootstrap sees both the within-run and the between-run variance.
fn with_between_runs(samples: Vec<f64>, side: &CaseData, other: &CaseData) -> Vec<f64> {
    if !side.round_factors.is_empty() || other.round_factors.is_empty() {
        return samples;
    }
    samples
        .iter()
        .flat_map(|s| other.round_factors.iter().map(move |f| s * f))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// Why a case is left out, saying whose result it is: this run's
/// (`ours`), the reference machine's (`theirs`), or both. A case that does
/// not repeat reads "the reference machine's rounds varied 28.9 % (…)", so
/// a user whose own rounds agreed does not take it for their machine's
/// fault.
pub fn left_out_reason(ours: Option<&str>, theirs: Option<&str>) -> String {
    let whose = |side: &str, why: &str| -> String {
        // The reason `rounds` writes: "does not repeat: P % between rounds (cause)".
        match why
            .strip_prefix("does not repeat: ")
            .and_then(|rest| rest.split_once(" between rounds"))
        {
            Some((spread, cause)) => format!("{side}'s rounds varied {spread}{cause}"),
            None => format!("{side}'s result: {why}"),
        }
    };
    let mut v = Vec::new();
    if let Some(why) = ours {
        v.push(whose("this run", why));
    }
    if let Some(why) = theirs {
        v.push(whose("the reference machine", why));
    }
    v.join("; ")
}

/// Index `run` against `reference`.
pub fn index_against(run: &RunRecord, reference: &RunRecord) -> IndexReport {
    let ours = CaseSet::from_run(run);
    let theirs = CaseSet::from_run(reference);
    let mut all = Tally::default();
    let families = ours
        .families()
        .into_iter()
        .map(|family| {
            let mut t = Tally::default();
            for key in ours.keys() {
                // Headline metrics only: a %CP or a latency beside a
                // throughput is not a speed ratio.
                let Some(a) = ours.get(key).filter(|d| d.family == family && d.headline) else {
                    continue;
                };
                let b = theirs.get(key);
                // A metric that is zero on both sides (the user time of a
                // program that only copies) has no ratio but is not missing.
                if b.is_some_and(|b| a.value == 0.0 && b.value == 0.0) {
                    continue;
                }
                let matched = b.and_then(|b| {
                    if a.better != b.better {
                        return None;
                    }
                    let f = conversion_factor(&a.unit, &b.unit)?;
                    Some((b, f, adjusted_ratio(a.value * f, b.value, a.better)?))
                });
                let Some((b, f, ratio)) = matched else {
                    t.unmatched += 1;
                    continue;
                };
                if a.untrusted.is_some() || b.untrusted.is_some() {
                    t.left_out.push(format!(
                        "{}: {}",
                        key.label(),
                        left_out_reason(a.untrusted.as_deref(), b.untrusted.as_deref())
                    ));
                    continue;
                }
                if a.disturbed.is_some() {
                    t.disturbed += 1;
                } else if b.disturbed.is_some() {
                    t.reference_disturbed += 1;
                }
                let (ua, ub) = (
                    with_between_runs(usable(a, f), a, b),
                    with_between_runs(usable(b, 1.0), b, a),
                );
                let (x, y) = oriented(&ua, &ub, a.better);
                t.pairs.push((x.to_vec(), y.to_vec()));
                t.ratios.push(ratio);
            }
            all.extend(&t);
            t.line(family)
        })
        .collect();
    IndexReport {
        families,
        overall: all.line(crate::comparison::OVERALL.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{result, run_with, throughput, throughput_at};
    use sysgauge_core::{Better, Unit};

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

    #[test]
    fn the_interval_comes_from_the_samples_of_both_runs() {
        let reference = run_with(
            "ref",
            None,
            vec![
                throughput("beta.sha256", &[100.0, 101.0, 99.0, 100.5, 99.5]),
                throughput("beta.md5", &[50.0, 50.5, 49.5, 50.2, 49.8]),
            ],
        );
        let steady = run_with(
            "new",
            None,
            vec![
                throughput("beta.sha256", &[200.0, 201.0, 199.0, 200.5, 199.5]),
                throughput("beta.md5", &[100.0, 101.0, 99.0, 100.4, 99.6]),
            ],
        );
        let ix = index_against(&steady, &reference);
        let (v, iv) = (ix.overall.index.unwrap(), ix.overall.interval.unwrap());
        assert!((v - 2000.0).abs() < 1.0, "{v}");
        assert!(
            iv.low <= v && v <= iv.high && iv.low > 1950.0 && iv.high < 2050.0,
            "{iv:?}"
        );
        // The same medians with a wide spread: a wider interval.
        let noisy = run_with(
            "new",
            None,
            vec![
                throughput("beta.sha256", &[200.0, 260.0, 140.0, 230.0, 170.0]),
                throughput("beta.md5", &[100.0, 130.0, 70.0, 115.0, 85.0]),
            ],
        );
        let wide = index_against(&noisy, &reference).overall.interval.unwrap();
        assert!(
            wide.high - wide.low > 3.0 * (iv.high - iv.low),
            "{wide:?} vs {iv:?}"
        );
    }

    #[test]
    fn an_untrusted_case_is_left_out_with_its_reason() {
        let reference = run_with(
            "ref",
            None,
            vec![
                throughput("omega.write", &[100.0]),
                throughput("omega.read", &[100.0]),
            ],
        );
        let mut cached = throughput("omega.write", &[900.0]);
        cached.details.insert(
            sysgauge_core::UNTRUSTED,
            "O_DIRECT writes ran 9× faster than reads: a write cache",
        );
        let run = run_with(
            "new",
            None,
            vec![cached, throughput("omega.read", &[200.0])],
        );
        let ix = index_against(&run, &reference);
        let disk = &ix.families[0];
        assert_eq!(
            (disk.index, disk.cases, disk.unmatched),
            (Some(2000.0), 1, 0)
        );
        assert_eq!(disk.left_out.len(), 1);
        assert!(
            disk.left_out[0].contains("omega.write")
                && disk.left_out[0].contains("this run's result: O_DIRECT writes")
                && disk.left_out[0].contains("write cache"),
            "{}",
            disk.left_out[0]
        );
        assert_eq!(ix.overall.left_out, disk.left_out);
        // Marked on the reference side, it is left out too, as the
        // reference machine's.
        let ix = index_against(&reference, &run);
        assert_eq!(ix.overall.left_out.len(), 1);
        assert!(
            ix.overall.left_out[0].contains("the reference machine's result: O_DIRECT"),
            "{}",
            ix.overall.left_out[0]
        );
    }

    #[test]
    fn disturbed_counts_the_indexed_cases_and_says_whose() {
        let case = |id: &str, disturbed: bool| {
            let mut r = throughput(id, &[100.0]);
            if disturbed {
                r.details
                    .insert(sysgauge_core::DISTURBED, "other processes used 0.9 CPUs");
            }
            r
        };
        let mut index_row = result(
            "beta.index-integer",
            0,
            1,
            "index",
            Unit::Index,
            Better::Higher,
            &[900.0],
        );
        index_row
            .details
            .insert(sysgauge_core::DISTURBED, "other processes used 0.9 CPUs");
        let mut untrusted = case("beta.sha1", true);
        untrusted
            .details
            .insert(sysgauge_core::UNTRUSTED, "does not repeat");
        let run = run_with(
            "new",
            None,
            vec![
                case("beta.md5", true),
                case("beta.sha256", false),
                case("beta.sha512", false),
                untrusted,
                index_row.clone(),
            ],
        );
        let reference = run_with(
            "ref",
            None,
            vec![
                case("beta.md5", true),
                case("beta.sha256", true),
                case("beta.sha512", false),
                case("beta.sha1", false),
                index_row,
            ],
        );
        let ix = index_against(&run, &reference);
        // md5 is this run's; sha256 the reference's alone; the index row
        // and the untrusted sha1 are not in the index.
        assert_eq!(ix.overall.cases, 3);
        assert_eq!(
            (ix.overall.disturbed, ix.overall.reference_disturbed),
            (1, 1)
        );
    }

    #[test]
    fn left_out_lines_say_whose_rounds_did_not_repeat() {
        let spread = |p: &str| format!("does not repeat: {p} % between rounds (another process)");
        let case = |why: Option<String>| {
            let mut r = throughput("beta.sha512", &[100.0]);
            if let Some(w) = why {
                r.details.insert(sysgauge_core::UNTRUSTED, w);
            }
            r
        };
        let reference = run_with("ref", None, vec![case(Some(spread("28.9")))]);
        let steady = run_with("new", None, vec![case(None)]);
        let ix = index_against(&steady, &reference);
        assert_eq!(ix.overall.left_out.len(), 1);
        let line = &ix.overall.left_out[0];
        assert!(
            line.starts_with("beta.sha512")
                && line
                    .ends_with(": the reference machine's rounds varied 28.9 % (another process)"),
            "{line}"
        );
        assert!(!line.contains("this run"), "{line}");
        // This run's own rounds.
        let shaky = run_with("new", None, vec![case(Some(spread("7.5")))]);
        let clean = run_with("ref", None, vec![case(None)]);
        let line = &index_against(&shaky, &clean).overall.left_out[0];
        assert!(
            line.ends_with(": this run's rounds varied 7.5 % (another process)"),
            "{line}"
        );
        assert!(!line.contains("reference"), "{line}");
        // Both.
        let line = &index_against(&shaky, &reference).overall.left_out[0];
        assert!(
            line.ends_with(
                ": this run's rounds varied 7.5 % (another process); the reference machine's rounds varied 28.9 % (another process)"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_interval_carries_the_reference_rounds() {
        let samples = [100.0, 100.2, 99.8, 100.1, 99.9];
        let reference = run_with("ref", None, vec![throughput("beta.sha256", &samples)]);
        let once = run_with("new", None, vec![throughput("beta.sha256", &samples)]);
        let tight = index_against(&once, &reference).overall.interval.unwrap();
        // The same reference recorded in three rounds that moved by ±5 %.
        let mut rounds = throughput("beta.sha256", &[95.0, 100.0, 105.0]);
        rounds.details.insert(sysgauge_core::rounds::ROUNDS, 3u64);
        let reference = run_with("ref", None, vec![rounds]);
        let ix = index_against(&once, &reference);
        assert_eq!(ix.overall.index, Some(1000.0));
        let wide = ix.overall.interval.unwrap();
        assert!(wide.low < 960.0 && wide.high > 1040.0, "{wide:?}");
        assert!(tight.low > 990.0 && tight.high < 1010.0, "{tight:?}");
    }
}
