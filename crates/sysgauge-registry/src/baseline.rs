//! The embedded reference baseline: runs of the quick and standard profiles
//! on one named machine, compiled into the binary, against which every
//! `sysgauge run` ends with an index per family and overall (1000 = the
//! reference machine; 1000 × the geometric mean of direction-adjusted
//! ratios). A run is indexed against the reference run of its own profile,
//! completed with the other profile's cases it lacks, so both profiles get
//! an index for every family they measure.
//!
//! The file (`baseline/reference.json`) wraps ordinary run records with the
//! baseline's own version, a description of the machine and how it was
//! recorded; `sysgauge baseline make` writes it from stored runs (see
//! docs/baseline.md for the procedure). It is parsed once, on first use.
//!
//! Versions. The baseline's `version` is bumped at every re-recording and is
//! printed with every index, so two indexes are comparable only when they
//! name the same baseline version. Within one baseline, cases match only
//! when their workload version equals the one recorded: when a benchmark's
//! work changes (its `workload_version` is bumped), its old reference number
//! is no longer used (`reference_value` returns `None`, the index leaves the
//! case out and says so) until the baseline is re-recorded; a unit test
//! fails in the meantime, so the baseline does not stay stale by accident.

use crate::benchmarks;
use serde::Serialize;
use std::collections::BTreeMap;
#[cfg(test)]
use std::collections::BTreeSet;
use sysgauge_compare::{index_against, IndexReport};
use sysgauge_core::record::{ParamValue, Params, ResultRecord, RunRecord, Status};
#[cfg(test)]
use sysgauge_core::record::{Profile, SCHEMA_VERSION};
pub use sysgauge_family::baseline_file::{
    embedded, parse, Baseline, BaselineError, BASELINE_FORMAT, BASELINE_PROFILES, EMBEDDED_JSON,
};
use sysgauge_family::family::Options;

/// Workload versions of today's benchmarks, by id.
fn current_workload_versions() -> BTreeMap<String, u32> {
    benchmarks(&Options::default())
        .iter()
        .map(|b| (b.id().to_string(), b.describe().workload_version))
        .collect()
}

/// The reference machine's median for a case, if the baseline has it with
/// the workload version today's benchmark of that id runs (any version for
/// ids sysgauge does not measure itself).
pub fn reference_value(bench_id: &str, params: &Params, metric: &str) -> Option<f64> {
    let b = embedded().ok()?;
    let current = current_workload_versions().get(bench_id).copied();
    b.results()
        .filter(|r| matches!(r.status, Status::Ok))
        .filter(|r| r.bench_id == bench_id && r.params == *params)
        .filter(|r| current.is_none_or(|v| v == r.workload_version))
        .flat_map(|r| r.metrics.iter())
        .find(|m| m.name == metric)
        .map(|m| m.value())
}

/// Index of `run` against the embedded baseline: per family and overall,
/// 1000 × the geometric mean of direction-adjusted ratios over the cases
/// both have (with equal workload versions), with the count of cases used.
pub fn index(run: &RunRecord) -> Result<IndexReport, BaselineError> {
    Ok(index_against(run, &embedded()?.reference(run.profile)))
}

/// Cases of `baseline` recorded with a workload version other than the one
/// today's benchmark runs: `id params: recorded vN, now vM`.
pub fn stale_cases(baseline: &Baseline) -> Vec<String> {
    let current = current_workload_versions();
    let mut out: Vec<String> = baseline
        .results()
        .filter_map(|r| {
            let now = *current.get(&r.bench_id)?;
            (now != r.workload_version).then(|| {
                format!(
                    "{} {}: recorded with workload version {}, now {now}",
                    r.bench_id, r.params, r.workload_version
                )
            })
        })
        .collect();
    out.dedup();
    out
}

/// Other processes may use at most this many CPUs on average during a
/// reference case.
pub const QUIET_OTHER_CPUS: f64 = 0.05;
/// A reference case's rounds may differ by at most this (coefficient of
/// variation, percent).
pub const QUIET_SPREAD_PERCENT: f64 = 2.0;

/// How quiet the machine was while one reference case ran, from the
/// telemetry and rounds in its record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseQuiet {
    /// `id params (profile)`.
    pub case: String,
    /// Other processes, CPUs on average (`other_cpus`); `None` without
    /// telemetry.
    pub other_cpus: Option<f64>,
    /// Stolen time, percent of all CPUs' time (`steal_percent`).
    pub steal_percent: Option<f64>,
    /// Between-round spread, percent (`between_round_spread`); `None` when
    /// measured in one round.
    pub spread_percent: Option<f64>,
    /// Why the case is too noisy for a reference; empty when it is not.
    pub noisy: Vec<String>,
}

/// A numeric detail, written as text (`"0.57"`) or as an integer.
fn detail_f64(r: &ResultRecord, key: &str) -> Option<f64> {
    let v = match r.details.get(key)? {
        ParamValue::Int(i) => *i as f64,
        ParamValue::Text(t) => t.trim().parse().ok()?,
        ParamValue::Bool(_) => return None,
    };
    v.is_finite().then_some(v)
}

/// Why a reference case is above the limits a reference must meet (other
/// processes above [`QUIET_OTHER_CPUS`], any steal, rounds that differ by
/// more than [`QUIET_SPREAD_PERCENT`], a capacity dip); empty when it meets
/// them.
fn noisy_reasons(r: &ResultRecord) -> Vec<String> {
    let mut noisy = Vec::new();
    if let Some(o) = detail_f64(r, "other_cpus").filter(|o| *o > QUIET_OTHER_CPUS) {
        noisy.push(format!(
            "other processes used {o:.2} CPUs (limit {QUIET_OTHER_CPUS})"
        ));
    }
    if let Some(s) = detail_f64(r, "steal_percent").filter(|s| *s > 0.0) {
        noisy.push(format!("the hypervisor stole {s:.1} % of the CPU time"));
    }
    if let Some(s) = detail_f64(r, sysgauge_core::rounds::BETWEEN_ROUND_SPREAD)
        .filter(|s| *s > QUIET_SPREAD_PERCENT)
    {
        noisy.push(format!(
            "its rounds varied {s:.1} % (limit {QUIET_SPREAD_PERCENT} %)"
        ));
    }
    if r.findings
        .iter()
        .any(|f| f.code == sysgauge_core::monitor::CAPACITY_DIP)
    {
        noisy.push(format!(
            "the capacity probe fell to {} of the run's best (something shared the core)",
            r.details.get_str("capacity").unwrap_or("?")
        ));
    }
    noisy
}

/// Every successful case of `runs`, judged by the limits a reference must
/// meet ([`noisy_reasons`]).
pub fn quietness(runs: &[RunRecord]) -> Vec<CaseQuiet> {
    runs.iter()
        .flat_map(|run| {
            run.results
                .iter()
                .filter(|r| matches!(r.status, Status::Ok))
                .map(move |r| CaseQuiet {
                    case: format!("{} {} ({})", r.bench_id, r.params, run.profile),
                    other_cpus: detail_f64(r, "other_cpus"),
                    steal_percent: detail_f64(r, "steal_percent"),
                    spread_percent: detail_f64(r, sysgauge_core::rounds::BETWEEN_ROUND_SPREAD),
                    noisy: noisy_reasons(r),
                })
        })
        .collect()
}

/// The detail of a reference case taken from a re-measurement: the run id
/// it was measured in.
pub const REMEASURED_IN: &str = "remeasured_in";

/// Re-measure the noisy cases of a reference run: each case of `main` above
/// the limits is replaced by the first measurement of the same case (id and
/// params) in `again` that meets them, marked with [`REMEASURED_IN`]. The
/// choice is made by the limits alone, never by the value, so the
/// reference is what a quiet machine measured, not the best of several
/// tries. Returns the cases replaced.
pub fn take_remeasured(main: &mut RunRecord, again: &[RunRecord]) -> Vec<String> {
    let mut replaced = Vec::new();
    for r in main
        .results
        .iter_mut()
        .filter(|r| matches!(r.status, Status::Ok) && !noisy_reasons(r).is_empty())
    {
        let quiet = again.iter().find_map(|run| {
            run.results
                .iter()
                .find(|o| {
                    o.bench_id == r.bench_id
                        && o.params == r.params
                        && matches!(o.status, Status::Ok)
                        && noisy_reasons(o).is_empty()
                })
                .map(|o| (run, o))
        });
        if let Some((run, o)) = quiet {
            *r = o.clone();
            r.details.insert(REMEASURED_IN, run.run_id.clone());
            replaced.push(format!("{} {}", r.bench_id, r.params));
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline() -> &'static Baseline {
        embedded().unwrap()
    }

    #[test]
    fn noisy_cases_are_taken_from_a_quiet_remeasurement_only() {
        let quiet = |r: &mut ResultRecord, spread: &str| {
            r.details.insert("other_cpus", "0.01");
            r.details.insert("steal_percent", "0.0");
            r.details.insert(
                sysgauge_core::rounds::BETWEEN_ROUND_SPREAD,
                spread.to_string(),
            );
        };
        let mut main = baseline().runs[0].clone();
        main.results.truncate(3);
        for r in &mut main.results {
            r.status = Status::Ok;
            quiet(r, "1.0");
        }
        quiet(&mut main.results[0], "9.0");
        quiet(&mut main.results[1], "7.0");
        let mut again = main.clone();
        again.run_id = "again".into();
        // Re-measured within the limits: taken; still noisy: kept as it was.
        quiet(&mut again.results[0], "0.5");
        again.results[0].details.insert("marker", "re-measured");
        quiet(&mut again.results[1], "8.0");
        // A quiet case is never replaced, even by a quieter one.
        quiet(&mut again.results[2], "0.1");
        again.results[2].details.insert("marker", "re-measured");
        let replaced = take_remeasured(&mut main, std::slice::from_ref(&again));
        assert_eq!(replaced.len(), 1, "{replaced:?}");
        assert_eq!(
            main.results[0].details.get_str("marker"),
            Some("re-measured")
        );
        assert_eq!(
            main.results[0].details.get_str(REMEASURED_IN),
            Some("again")
        );
        assert!(noisy_reasons(&main.results[0]).is_empty());
        assert_eq!(main.results[1].details.get_str(REMEASURED_IN), None);
        assert!(!noisy_reasons(&main.results[1]).is_empty());
        assert_eq!(main.results[2].details.get_str("marker"), None);
    }

    #[test]
    fn embedded_baseline_is_valid_and_named() {
        let b = baseline();
        assert_eq!(b.format, BASELINE_FORMAT);
        assert!(b.version >= 1);
        assert!(b.machine.len() > 10, "{}", b.machine);
        assert!(b.recorded_with.contains("sysgauge"));
        let profiles: Vec<Profile> = b.runs.iter().map(|r| r.profile).collect();
        assert_eq!(profiles, BASELINE_PROFILES, "one reference run per profile");
        for r in &b.runs {
            assert_eq!(
                r.build.profile, "release",
                "the reference must come from a release build"
            );
        }
    }

    #[test]
    fn baseline_is_not_stale() {
        // A benchmark's workload changed without re-recording the baseline:
        // re-record it (docs/baseline.md) and bump its version.
        let stale = stale_cases(baseline());
        assert!(
            stale.is_empty(),
            "stale baseline cases:\n{}",
            stale.join("\n")
        );
    }

    #[test]
    fn every_family_of_a_default_run_has_a_reference() {
        // What `sysgauge run` plans at each baseline profile, on a machine
        // with any CPU count (the plan does not depend on it): each family
        // must have at least one case the reference has, so the index after
        // every run has a number for every family it measured.
        let options = Options::default();
        for profile in BASELINE_PROFILES {
            let reference = baseline().reference(profile);
            let plan = sysgauge_core::Plan {
                profile,
                threads: 8,
            };
            for family in crate::families().iter().filter(|f| f.in_default_run) {
                let planned: Vec<(String, Params)> = benchmarks(&options)
                    .iter()
                    .filter(|b| sysgauge_core::family_of(b.id()) == family.name)
                    .flat_map(|b| b.cases(&plan).into_iter().map(|p| (b.id().to_string(), p)))
                    .collect();
                if planned.is_empty() {
                    continue;
                }
                assert!(
                    planned.iter().any(|(id, p)| reference
                        .results
                        .iter()
                        .any(|r| r.is_ok() && &r.bench_id == id && &r.params == p)),
                    "{profile}: no case of {} has a reference: {planned:?}",
                    family.name
                );
            }
        }
    }

    #[test]
    fn reference_values_and_self_index() {
        let b = baseline();
        for run in &b.runs {
            let r = run
                .results
                .iter()
                .find(|r| matches!(r.status, Status::Ok))
                .unwrap_or_else(|| panic!("no ok result"));
            let m = &r.metrics[0];
            assert!(reference_value(&r.bench_id, &r.params, &m.name).is_some());
            assert_eq!(
                reference_value(&r.bench_id, &r.params, "no-such-metric"),
                None
            );
            assert_eq!(reference_value("hash.nothing", &r.params, &m.name), None);
            let ix = index(run).unwrap();
            assert!((ix.overall.index.unwrap_or(0.0) - 1000.0).abs() < 1e-9);
            assert_eq!(ix.overall.unmatched, 0);
            for f in &ix.families {
                assert!((f.index.unwrap_or(0.0) - 1000.0).abs() < 1e-9, "{f:?}");
            }
        }
    }

    #[test]
    fn a_profile_borrows_the_cases_it_lacks() {
        let b = baseline();
        let quick = b.reference(Profile::Quick);
        let own = b.run_for(Profile::Quick).map_or(0, |r| r.results.len());
        assert!(quick.results.len() >= own);
        let keys: BTreeSet<(String, Params)> = quick
            .results
            .iter()
            .map(|r| (r.bench_id.clone(), r.params.clone()))
            .collect();
        assert_eq!(keys.len(), quick.results.len(), "no case twice");
    }

    #[test]
    fn an_old_workload_is_never_indexed() {
        let mut stale = baseline().clone();
        for run in &mut stale.runs {
            for r in &mut run.results {
                r.workload_version += 1;
            }
        }
        let run = stale.runs[0].clone();
        let ix = index(&run).unwrap();
        assert_eq!(ix.overall.index, None);
        assert_eq!(ix.overall.cases, 0);
        assert!(!stale_cases(&stale).is_empty());
    }

    #[test]
    fn noisy_cases_are_named_with_why() {
        let case = |id: &str, details: &[(&str, &str)]| {
            let mut r = ResultRecord::new(id, Params::new(), Status::Ok, Vec::new());
            for (k, v) in details {
                r.details.insert(k, *v);
            }
            r
        };
        let mut run = RunRecord::new("q", "run", "0");
        run.profile = Profile::Quick;
        run.results = vec![
            case(
                "hash.sha512",
                &[
                    ("other_cpus", "0.57"),
                    ("steal_percent", "0.0"),
                    ("between_round_spread", "28.90"),
                ],
            ),
            case(
                "hash.md5",
                &[
                    ("other_cpus", "0.01"),
                    ("steal_percent", "0.0"),
                    ("between_round_spread", "0.70"),
                ],
            ),
            case(
                "cpu.bitfield",
                &[("other_cpus", "0.05"), ("steal_percent", "0.3")],
            ),
            // No telemetry, one round: nothing to judge by.
            case("clock.tsc", &[]),
            ResultRecord::new(
                "disk.raw",
                Params::new(),
                Status::Skipped {
                    reason: "x".into(),
                    hint: None,
                },
                Vec::new(),
            ),
        ];
        let q = quietness(&[run]);
        assert_eq!(q.len(), 4, "skipped cases are not judged");
        assert!(q[0].case.starts_with("hash.sha512") && q[0].case.ends_with("(quick)"));
        assert_eq!(q[0].noisy.len(), 2, "{:?}", q[0].noisy);
        assert!(q[0].noisy[0].contains("0.57 CPUs"));
        assert!(q[0].noisy[1].contains("varied 28.9 %"));
        assert!(q[1].noisy.is_empty(), "{:?}", q[1]);
        assert_eq!(q[1].spread_percent, Some(0.7));
        // At the limit is quiet; any steal is not.
        assert_eq!(q[2].noisy.len(), 1, "{:?}", q[2].noisy);
        assert!(q[2].noisy[0].contains("stole 0.3 %"));
        assert!(q[3].noisy.is_empty() && q[3].other_cpus.is_none());
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(matches!(parse("{"), Err(BaselineError::Invalid(_))));
        let mut v: serde_json::Value = serde_json::from_str(EMBEDDED_JSON).unwrap();
        v["format"] = serde_json::json!(99);
        assert!(matches!(
            parse(&v.to_string()),
            Err(BaselineError::Format { found: 99, .. })
        ));
        v["format"] = serde_json::json!(BASELINE_FORMAT);
        v["runs"][0]["schema_version"] = serde_json::json!(SCHEMA_VERSION + 1);
        assert!(matches!(
            parse(&v.to_string()),
            Err(BaselineError::Schema { .. })
        ));
        v["runs"][0]["schema_version"] = serde_json::json!(SCHEMA_VERSION);
        let mut twice = v.clone();
        let first = twice["runs"][0].clone();
        twice["runs"] = serde_json::json!([first.clone(), first]);
        assert!(matches!(
            parse(&twice.to_string()),
            Err(BaselineError::Invalid(_))
        ));
        v["machine"] = serde_json::json!(" ");
        assert!(matches!(
            parse(&v.to_string()),
            Err(BaselineError::Invalid(_))
        ));
    }
}
