//! Rounds: `--rounds N` runs every selected case N times, interleaved (round
//! 1 of every case, then round 2 …), so that drift over the run hits every
//! case alike. This module folds the N results of one case into the one
//! record that is stored, and judges whether the case repeats.
//!
//! The stored record's metrics hold one sample per round, the round's median,
//! so the value (their median) is the median of the rounds, the metric's
//! spread is the between-round spread, and every interval computed from the
//! samples (comparisons, the index) carries the between-run variance. Nothing
//! is lost: each round's value, within-round spread and raw samples stay in
//! the details (`round_values`, `round_spreads`, `round_samples`). The params
//! are those of every round, so a run with rounds matches one without.
//!
//! A case repeats when its between-round spread is not well above its
//! within-round spread: above [`UNREPEATABLE_FACTOR`] × the within-round
//! spread and above [`UNREPEATABLE_FLOOR`] it gets the `unrepeatable`
//! finding, naming the likely cause from what the record knows (telemetry:
//! another guest or process, the clock; the benchmark's own declaration of
//! the state it depends on: caches, journal). The median of the rounds
//! shrugs off one disturbed round, so the case is marked untrusted only when
//! the rounds do not even agree among themselves: their median absolute
//! deviation above [`UNSTABLE_LIMIT`] of their median (with two rounds, their
//! difference above twice that). Its value then depends on which run one
//! looks at, so indexes leave it out, with the reason.

use crate::monitor::DISTURBED;
use crate::record::{Finding, Metric, ResultRecord, Severity, Status, UNTRUSTED};
use sysgauge_stats::{mad, mean, median, stddev};

/// Finding code: the case's rounds disagree far more than its repetitions.
pub const UNREPEATABLE: &str = "unrepeatable";
/// The between-round spread must exceed this multiple of the within-round
/// spread to count as "well above" it.
pub const UNREPEATABLE_FACTOR: f64 = 3.0;
/// … and this absolute spread (coefficient of variation, 2 %), so that a
/// case whose repetitions agree to 0.1 % is not flagged for 0.4 %.
pub const UNREPEATABLE_FLOOR: f64 = 0.02;
/// Rounds whose median absolute deviation exceeds this share (5 %) of their
/// median do not agree on a value: the case is untrusted, left out of
/// indexes with the reason.
pub const UNSTABLE_LIMIT: f64 = 0.05;

/// Details written on a merged record.
pub const ROUNDS: &str = "rounds";
pub const ROUND_VALUES: &str = "round_values";
pub const ROUND_SPREADS: &str = "round_spreads";
pub const ROUND_SAMPLES: &str = "round_samples";
pub const ROUND_REPETITIONS: &str = "round_repetitions";
/// Coefficient of variation of the rounds' values, in percent.
pub const BETWEEN_ROUND_SPREAD: &str = "between_round_spread";
/// Median of the rounds' own coefficients of variation, in percent.
pub const WITHIN_ROUND_SPREAD: &str = "within_round_spread";

/// Coefficient of variation (sample stddev / mean); 0 for fewer than two
/// values or a zero mean.
fn cov(values: &[f64]) -> f64 {
    let m = mean(values);
    if values.len() < 2 || m == 0.0 || !m.is_finite() {
        return 0.0;
    }
    stddev(values) / m.abs()
}

/// Numbers as the details keep them: space-separated, six significant digits.
fn number_list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{}", sig6(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn sig6(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 6 - 1 - v.abs().log10().floor() as i32;
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

/// The between- and within-round spreads of a merged record, as fractions,
/// when it was measured in rounds.
pub fn spreads(r: &ResultRecord) -> Option<(f64, f64)> {
    let pct = |k: &str| {
        r.details
            .get_str(k)
            .and_then(|t| t.parse::<f64>().ok())
            .map(|v| v / 100.0)
    };
    Some((pct(BETWEEN_ROUND_SPREAD)?, pct(WITHIN_ROUND_SPREAD)?))
}

/// The spread a table shows beside `m`, a metric of `r`, as a fraction:
/// for the primary metric of a case measured in rounds, the within-round
/// spread (the median of the rounds' own, as the summary's spread column;
/// the between-round spread has its own column there); otherwise the
/// metric's own.
pub fn shown_spread(r: &ResultRecord, m: &Metric) -> f64 {
    match spreads(r) {
        Some((_, within)) if r.primary().is_some_and(|p| p.name == m.name) => within,
        _ => m.summary.cov,
    }
}

/// Fold the results of one case's rounds (in round order) into one record.
/// `state`: what the benchmark says its result depends on between runs
/// (its `Description::state`), for naming the cause.
pub fn merge(rounds: Vec<ResultRecord>, state: Option<&str>) -> Option<ResultRecord> {
    let n = rounds.len();
    if n <= 1 {
        return rounds.into_iter().next();
    }
    // A round that did not finish ok decides: the case did not measure.
    if let Some(bad) = rounds.iter().position(|r| !matches!(r.status, Status::Ok)) {
        let mut r = rounds.into_iter().nth(bad)?;
        r.details.insert(ROUNDS, n);
        return Some(r);
    }
    let values: Vec<f64> = rounds
        .iter()
        .map(|r| r.primary().map_or(f64::NAN, Metric::value))
        .collect();
    // The record of the median round carries the details (telemetry,
    // iterations) that go with the median value.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mid = order[(n - 1) / 2];
    let base = &rounds[mid];
    let mut merged = base.clone();
    merged.started_at = rounds[0].started_at;
    merged.duration_seconds = rounds.iter().map(|r| r.duration_seconds).sum();
    merged.metrics = base
        .metrics
        .iter()
        .filter_map(|m| {
            let per_round: Option<Vec<f64>> = rounds
                .iter()
                .map(|r| {
                    r.metrics
                        .iter()
                        .find(|x| x.name == m.name)
                        .map(Metric::value)
                })
                .collect();
            Metric::new(&m.name, m.unit.clone(), m.better, per_round?)
        })
        .collect();
    if merged.metrics.is_empty() {
        return Some(base.clone());
    }
    let spreads: Vec<f64> = rounds
        .iter()
        .map(|r| r.primary().map_or(0.0, |m| m.summary.cov))
        .collect();
    let between = cov(&values);
    let within = median(&spreads);
    let d = &mut merged.details;
    d.insert(ROUNDS, n);
    d.insert(ROUND_VALUES, number_list(&values));
    d.insert(
        ROUND_SPREADS,
        spreads
            .iter()
            .map(|s| format!("{:.2}", s * 100.0))
            .collect::<Vec<_>>()
            .join(" "),
    );
    d.insert(
        ROUND_SAMPLES,
        rounds
            .iter()
            .map(|r| {
                r.primary()
                    .map_or(String::new(), |m| number_list(&m.samples))
            })
            .collect::<Vec<_>>()
            .join(" | "),
    );
    if let Some(m) = base.primary() {
        d.insert(ROUND_REPETITIONS, m.summary.n);
    }
    d.insert(BETWEEN_ROUND_SPREAD, format!("{:.2}", between * 100.0));
    d.insert(WITHIN_ROUND_SPREAD, format!("{:.2}", within * 100.0));
    // Disturbed in any round: the reasons of every round, each once.
    let mut disturbed: Vec<String> = Vec::new();
    for (i, r) in rounds.iter().enumerate() {
        if let Some(why) = r.disturbed() {
            disturbed.push(format!("round {}: {why}", i + 1));
        }
    }
    if !disturbed.is_empty() {
        d.insert(DISTURBED, disturbed.join("; "));
    }
    if base.untrusted().is_none() {
        if let Some(why) = rounds.iter().find_map(|r| r.untrusted()) {
            d.insert(UNTRUSTED, why.to_string());
        }
    }
    merged.findings = round_findings(&rounds, mid);
    if between > UNREPEATABLE_FLOOR && between > UNREPEATABLE_FACTOR * within {
        let cause = likely_cause(&rounds, state);
        let case = case_label(&merged);
        let unstable = disagreement(&values) > UNSTABLE_LIMIT;
        let severity = if unstable {
            Severity::Critical
        } else {
            Severity::Warning
        };
        merged.findings.push(
            Finding::new(
                UNREPEATABLE,
                severity,
                format!(
                    "{case}: varies by {:.1} % between {n} rounds ({}), against {:.1} % within a round; likely cause: {cause}",
                    between * 100.0,
                    number_list(&values),
                    within * 100.0,
                ),
            )
            .with_remedy(
                "quiet the machine (another guest, other processes, a cooling CPU) and rerun with more --rounds; \
                 a case whose state carries over between runs (caches, a journal) needs its method fixed",
            ),
        );
        if unstable && merged.untrusted().is_none() {
            merged.details.insert(
                UNTRUSTED,
                format!(
                    "does not repeat: {:.1} % between rounds ({cause})",
                    between * 100.0
                ),
            );
        }
    }
    Some(merged)
}

/// Findings of every round, each code once: the median round's own first,
/// then the others' in round order. Its figures are one round's, so the
/// message says which, and which other rounds had the same finding
/// ("… (round 2 of 3; also rounds 1 and 3)"), rather than passing one
/// round's figure off as the case's.
fn round_findings(rounds: &[ResultRecord], mid: usize) -> Vec<Finding> {
    let n = rounds.len();
    let order = std::iter::once(mid).chain((0..n).filter(|&i| i != mid));
    let mut findings: Vec<Finding> = Vec::new();
    for i in order {
        for f in &rounds[i].findings {
            if findings.iter().any(|g| g.code == f.code) {
                continue;
            }
            let others: Vec<String> = (0..n)
                .filter(|&j| j != i && rounds[j].findings.iter().any(|g| g.code == f.code))
                .map(|j| (j + 1).to_string())
                .collect();
            let also = match others.as_slice() {
                [] => String::new(),
                [one] => format!("; also round {one}"),
                [rest @ .., last] => format!("; also rounds {} and {last}", rest.join(", ")),
            };
            let mut f = f.clone();
            f.message = format!("{} (round {} of {n}{also})", f.message, i + 1);
            findings.push(f);
        }
    }
    findings
}

/// How far the rounds are from agreeing on a value: the median absolute
/// deviation of their values over their median (for two rounds, where the
/// MAD is half their difference, the same); 0 when the median is 0.
fn disagreement(values: &[f64]) -> f64 {
    let m = median(values);
    if m == 0.0 || !m.is_finite() {
        return 0.0;
    }
    mad(values) / m.abs()
}

/// What most likely made the rounds differ, from what the record knows: the
/// telemetry's reasons for a disturbed round (another guest stealing time,
/// other processes, throttling), the clock's lowest reading moving between
/// rounds (turbo or thermal), the state the benchmark depends on, or none.
fn likely_cause(rounds: &[ResultRecord], state: Option<&str>) -> String {
    let disturbed: Vec<String> = rounds
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.disturbed().map(|w| format!("round {}: {w}", i + 1)))
        .collect();
    if !disturbed.is_empty() {
        return format!(
            "another guest, other processes or throttling ({})",
            disturbed.join("; ")
        );
    }
    let mhz: Vec<i64> = rounds
        .iter()
        .filter_map(|r| r.details.get_int("mhz_min"))
        .collect();
    if let (Some(lo), Some(hi)) = (mhz.iter().min(), mhz.iter().max()) {
        if *lo > 0 && (*hi as f64) > 1.05 * (*lo as f64) {
            return format!(
                "turbo or thermal limits: the lowest clock reading ranged {lo}-{hi} MHz across rounds"
            );
        }
    }
    match state {
        Some(s) => format!("state that carries over between runs: {s}"),
        None => "none seen by the telemetry (no steal, other processes or clock change); \
                 the host's other guests, or the method itself"
            .to_string(),
    }
}

fn case_label(r: &ResultRecord) -> String {
    if r.params.is_empty() {
        r.bench_id.clone()
    } else {
        format!("{} ({})", r.bench_id, r.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Params;
    use crate::unit::{Better, Unit};

    fn round(samples: &[f64]) -> ResultRecord {
        let m = Metric::new("rate", Unit::OpsPerSec, Better::Higher, samples.to_vec());
        ResultRecord::new("t.case", Params::new(), Status::Ok, m.into_iter().collect())
    }

    /// Rounds of these samples, merged.
    fn merged(rounds: &[&[f64]], state: Option<&str>) -> ResultRecord {
        merge(rounds.iter().map(|s| round(s)).collect(), state).unwrap()
    }

    /// The merged case's finding `code`.
    fn finding<'a>(r: &'a ResultRecord, code: &str) -> &'a Finding {
        r.findings.iter().find(|f| f.code == code).unwrap()
    }

    #[test]
    fn the_value_is_the_median_round_and_nothing_is_lost() {
        let r = merged(
            &[
                &[100.0, 101.0, 99.0],
                &[110.0, 111.0, 109.0],
                &[90.0, 91.0, 89.0],
            ],
            None,
        );
        let m = r.primary().unwrap();
        assert_eq!(m.samples, vec![100.0, 110.0, 90.0]);
        assert_eq!(m.value(), 100.0);
        assert_eq!(r.details.get_u64(ROUNDS), Some(3));
        assert_eq!(r.details.get_str(ROUND_VALUES), Some("100 110 90"));
        assert_eq!(
            r.details.get_str(ROUND_SAMPLES),
            Some("100 101 99 | 110 111 109 | 90 91 89")
        );
        assert_eq!(r.details.get_str(BETWEEN_ROUND_SPREAD), Some("10.00"));
        let (between, within) = spreads(&r).unwrap();
        assert!((between - 0.10).abs() < 1e-9 && within < 0.011);
        // A table's spread column shows the within-round spread, as the
        // summary's does; the merged metric's own is the between-round one.
        assert_eq!(shown_spread(&r, m), within);
        assert!((m.summary.cov - between).abs() < 1e-9);
        let one = round(&[100.0, 101.0, 99.0]);
        let own = one.primary().unwrap();
        assert_eq!(shown_spread(&one, own), own.summary.cov);
        assert!(r.findings.iter().any(|f| f.code == UNREPEATABLE));
        // Rounds 10 % apart from each other agree on no value: untrusted.
        assert!(r
            .untrusted()
            .is_some_and(|w| w.contains("10.0 % between rounds")));
    }

    #[test]
    fn one_disturbed_round_is_flagged_but_the_median_stands() {
        let r = merged(
            &[
                &[641.0, 640.0, 642.0],
                &[441.0, 440.0, 442.0],
                &[638.0, 637.0, 639.0],
            ],
            None,
        );
        assert_eq!(r.primary().unwrap().value(), 638.0);
        let f = finding(&r, UNREPEATABLE);
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.contains("none seen"), "{}", f.message);
        assert!(r.untrusted().is_none());
        // Rounds that keep moving agree on nothing: untrusted.
        let moving = merged(&[&[600.0], &[450.0], &[520.0]], None);
        assert!(moving
            .untrusted()
            .is_some_and(|w| w.contains("does not repeat")));
    }

    #[test]
    fn a_round_finding_says_whose_figure_it_quotes() {
        let busy = |samples: &[f64], cpus: &str| {
            let mut r = round(samples);
            r.findings.push(Finding::new(
                "other-processes",
                Severity::Warning,
                format!("t.case: other processes used {cpus} CPUs on average while it ran"),
            ));
            r
        };
        let r = merge(
            vec![
                busy(&[90.0, 90.2], "0.61"),
                round(&[100.1, 100.3]),
                busy(&[110.2, 110.1], "1.20"),
            ],
            None,
        )
        .unwrap();
        let f: Vec<&Finding> = r
            .findings
            .iter()
            .filter(|f| f.code == "other-processes")
            .collect();
        assert_eq!(f.len(), 1, "{:?}", r.findings);
        assert!(
            f[0].message
                .ends_with("0.61 CPUs on average while it ran (round 1 of 3; also round 3)"),
            "{}",
            f[0].message
        );
        // The median round's own finding comes first, with its figure.
        let r = merge(
            vec![
                busy(&[90.0], "0.30"),
                busy(&[100.0], "0.40"),
                busy(&[110.0], "0.50"),
            ],
            None,
        )
        .unwrap();
        let f = finding(&r, "other-processes");
        assert!(
            f.message
                .ends_with("0.40 CPUs on average while it ran (round 2 of 3; also rounds 1 and 3)"),
            "{}",
            f.message
        );
        // One round: the finding is the round's own, unchanged.
        let one = merge(vec![busy(&[100.0], "0.30")], None).unwrap();
        assert!(one.findings[0].message.ends_with("while it ran"));
    }

    #[test]
    fn a_steady_case_has_no_finding() {
        let r = merged(
            &[
                &[100.0, 101.0, 99.0],
                &[100.5, 101.0, 99.0],
                &[99.5, 100.0, 99.0],
            ],
            Some("the page cache"),
        );
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        assert!(r.untrusted().is_none());
    }

    #[test]
    fn the_cause_comes_from_the_record() {
        let state = merged(&[&[100.0, 100.1], &[300.0, 300.2]], Some("the journal"));
        let f = finding(&state, UNREPEATABLE);
        assert!(f.message.contains("the journal"), "{}", f.message);
        assert_eq!(f.severity, Severity::Critical);
        assert!(state.untrusted().unwrap().contains("does not repeat"));

        let mut slow = round(&[100.0, 100.1]);
        slow.details.insert("mhz_min", 2000i64);
        let mut fast = round(&[150.0, 150.1]);
        fast.details.insert("mhz_min", 3000i64);
        let clock = merge(vec![fast, slow], Some("the journal")).unwrap();
        let f = finding(&clock, UNREPEATABLE);
        assert!(f.message.contains("turbo or thermal"), "{}", f.message);

        let mut busy = round(&[100.0, 100.1]);
        busy.details
            .insert(DISTURBED, "the hypervisor stole 9.0 % of the CPU time");
        let guest = merge(vec![round(&[150.0, 150.1]), busy], None).unwrap();
        let f = finding(&guest, UNREPEATABLE);
        assert!(f.message.contains("another guest"), "{}", f.message);
        assert!(guest.disturbed().unwrap().contains("round 2"));
    }

    #[test]
    fn a_failed_round_makes_the_case_fail() {
        let mut bad = round(&[1.0]);
        bad.status = Status::Failed {
            error: "broken".into(),
        };
        bad.metrics.clear();
        let r = merge(vec![round(&[1.0]), bad], None).unwrap();
        assert!(matches!(r.status, Status::Failed { .. }));
        assert_eq!(r.details.get_u64(ROUNDS), Some(2));
    }
}
