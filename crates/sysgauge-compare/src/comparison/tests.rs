//! Comparison tests: hand-checkable arithmetic, missing and excluded cases,
//! intervals, and properties.

use super::*;
use crate::testutil::{result, run_with, throughput, throughput_at};
use proptest::prelude::*;
use sysgauge_core::{Better, Unit};

fn m(label: &str, run: RunRecord) -> Machine {
    Machine::new(label, run)
}

/// `beta.sha256` throughput in MB/s at 8 KiB on one thread with these
/// samples: the case most of these tests vary.
/// Each machine's ratio in `row` (None where it has no cell or no ratio).
fn ratios(row: &CaseRow) -> Vec<Option<f64>> {
    row.cells
        .iter()
        .map(|x| x.as_ref().and_then(|c| c.ratio))
        .collect()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// Reference 80 MB/s and 10 ms; B 50 MB/s and 20 ms; C 200 MB/s and 5 ms.
fn three_hosts() -> Vec<Machine> {
    let host = |name: &str, tput: f64, lat: f64, bogo: Option<f64>| {
        run_with(
            name,
            bogo,
            vec![
                throughput("beta.sha256", &[tput]),
                result(
                    "gamma.latency",
                    0,
                    1,
                    "latency",
                    Unit::Milliseconds,
                    Better::Lower,
                    &[lat],
                ),
            ],
        )
    };
    vec![
        m("ref", host("ref", 80.0, 10.0, Some(1000.0))),
        m("b", host("b", 50.0, 20.0, Some(59_000.0))),
        m("c", host("c", 200.0, 5.0, None)),
    ]
}

#[test]
fn hand_checkable_ratios_and_means() {
    let c = compare(&three_hosts(), 0, &[]).unwrap();
    assert_eq!(c.schema_version, COMPARE_SCHEMA_VERSION);
    assert_eq!(c.reference, "ref");
    assert_eq!(c.rows.len(), 2);
    let sha = &c.rows[0];
    assert_eq!(sha.bench_id, "beta.sha256");
    assert_eq!(ratios(sha), vec![Some(1.0), Some(0.625), Some(2.5)]);
    let lat = &c.rows[1];
    assert_eq!(lat.better, Better::Lower);
    assert_eq!(ratios(lat), vec![Some(1.0), Some(0.5), Some(2.0)]);
    // Per family: one case each.
    assert_eq!(c.families.len(), 2);
    assert!(close(c.families[0].cells[1].geomean, 0.625));
    assert!(close(c.families[1].cells[2].arith_mean, 2.0));
    // Overall over both cases.
    let b = &c.overall.cells[1];
    assert_eq!(b.cases, 2);
    assert!(close(b.arith_mean, (0.625 + 0.5) / 2.0));
    assert!(close(b.geomean, (0.625f64 * 0.5).sqrt()));
    let cc = &c.overall.cells[2];
    assert!(close(cc.arith_mean, 2.25));
    assert!(close(cc.geomean, 5f64.sqrt()));
    let r = &c.overall.cells[0];
    assert!(close(r.geomean, 1.0) && close(r.arith_mean, 1.0));
    // Single samples: no intervals, and no claim of significance.
    assert!(sha.cells[1]
        .as_ref()
        .is_some_and(|c| c.ci.is_none() && c.significant.is_none()));
    assert!(b.geomean_ci.is_none());
    // BogoMIPS claims 59x; the measured geomean says about 0.56x.
    assert_eq!(c.bogomips_ratio, vec![Some(1.0), Some(59.0), None]);
    assert!(c.missing.is_empty() && c.excluded.is_empty());
    // The CPU model differs (testutil names it after the host).
    assert!(c.differing_facts.iter().any(|f| f.fact == "CPU"));
}

#[test]
fn other_reference_and_family_filter() {
    let c = compare(&three_hosts(), 2, &["beta".to_string()]).unwrap();
    assert_eq!(c.reference, "c");
    assert_eq!(c.rows.len(), 1);
    assert!(close(
        c.rows[0].cells[0].as_ref().and_then(|x| x.ratio),
        0.4
    ));
    assert_eq!(c.families.len(), 1);
    match compare(&three_hosts(), 0, &["disk".to_string()]) {
        Err(CompareError::UnknownFamily { family, present }) => {
            assert_eq!(family, "disk");
            assert!(present.contains("beta") && present.contains("gamma"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn errors() {
    let one = vec![three_hosts().remove(0)];
    assert_eq!(compare(&one, 0, &[]).err(), Some(CompareError::TooFew(1)));
    assert_eq!(
        compare(&three_hosts(), 3, &[]).err(),
        Some(CompareError::BadReference(3))
    );
}

#[test]
fn missing_cases_are_listed() {
    let mut ms = three_hosts();
    ms[0]
        .run
        .results
        .push(throughput_at("beta.md5", 16, &[1.0]));
    ms[1]
        .run
        .results
        .push(throughput_at("beta.md5", 16, &[2.0]));
    ms[2].run.results.push(result(
        "alpha.sort",
        0,
        1,
        "rate",
        Unit::ItersPerSec,
        Better::Higher,
        &[9.0],
    ));
    let c = compare(&ms, 0, &[]).unwrap();
    // md5 is on two machines: a row, and listed as missing on c.
    assert_eq!(c.rows.len(), 3);
    assert_eq!(c.missing.len(), 2);
    let md5 = &c.missing[0];
    assert_eq!(md5.bench_id, "beta.md5");
    assert_eq!(md5.present_on, vec!["ref", "b"]);
    assert_eq!(md5.missing_on(&c.machines), vec!["c"]);
    assert_eq!(md5.missing_count(&c.machines), 1);
    assert!(c.rows[2].cells[2].is_none());
    let sort = &c.missing[1];
    assert_eq!(sort.bench_id, "alpha.sort");
    assert_eq!(sort.present_on, vec!["c"]);
    // The hash family mean for c rests on one case, for b on two.
    assert_eq!(c.families[0].cells[1].cases, 2);
    assert_eq!(c.families[0].cells[2].cases, 1);
}

/// `id` at 8 KiB: a throughput and, with `latency`, a p99 latency beside
/// it (as fio reports both and sysgauge's own disk case the throughput).
fn read_case(id: &str, mbps: f64, latency: Option<f64>) -> sysgauge_core::record::ResultRecord {
    let mut r = throughput(id, &[mbps]);
    if let Some(us) = latency {
        r.metrics.push(
            sysgauge_core::record::Metric::new(
                "lat_p99",
                Unit::Microseconds,
                Better::Lower,
                vec![us],
            )
            .unwrap(),
        );
    }
    r
}

#[test]
fn a_case_is_missing_once_and_only_where_none_of_its_metrics_is() {
    let ms = vec![
        m(
            "fio",
            run_with(
                "fio",
                None,
                vec![
                    read_case("delta.seq-read", 100.0, Some(90.0)),
                    read_case("delta.rand-read", 30.0, Some(400.0)),
                ],
            ),
        ),
        m(
            "own",
            run_with("own", None, vec![read_case("delta.seq-read", 200.0, None)]),
        ),
    ];
    let c = compare(&ms, 0, &[]).unwrap();
    // The latency only fio reports makes no case missing on `own`; the
    // case `own` lacks is missing once, by its first metric.
    assert_eq!(c.missing.len(), 1, "{:?}", c.missing);
    assert_eq!(c.missing[0].bench_id, "delta.rand-read");
    assert_eq!(c.missing[0].metric, "throughput");
    assert_eq!(c.missing[0].missing_on(&c.machines), vec!["own"]);
    assert_eq!(c.compared_cases(), 1);
    // The latency is a row with an empty cell for `own` (with two machines
    // as with three), and a number alone has no ratio.
    assert_eq!(c.rows.len(), 2);
    let latency = &c.rows[1];
    assert_eq!(latency.metric, "lat_p99");
    assert_eq!(latency.cells[0].as_ref().map(|x| x.value), Some(90.0));
    assert_eq!(latency.cells[0].as_ref().and_then(|x| x.ratio), None);
    assert!(latency.cells[1].is_none());
    assert_eq!(c.overall.cells[0].cases, 1);
}

#[test]
fn an_index_made_inside_a_run_is_shown_but_not_averaged() {
    let host = |name: &str, k: f64| {
        run_with(
            name,
            None,
            vec![
                throughput("epsilon.sort", &[10.0 * k]),
                throughput("epsilon.hash", &[20.0 * k]),
                result(
                    "epsilon.index-integer",
                    0,
                    1,
                    "index",
                    Unit::Index,
                    Better::Higher,
                    &[1000.0 * k * k],
                ),
            ],
        )
    };
    let c = compare(&[m("a", host("a", 1.0)), m("b", host("b", 2.0))], 0, &[]).unwrap();
    let index = c
        .rows
        .iter()
        .find(|r| r.bench_id == "epsilon.index-integer")
        .unwrap();
    assert!(!index.headline);
    assert_eq!(ratios(index), vec![Some(1.0), Some(4.0)]);
    // Two kernels, each 2x: the index (4x) would pull the mean up.
    let b = &c.families[0].cells[1];
    assert_eq!(b.cases, 2);
    assert!(close(b.geomean, 2.0));
    assert_eq!(c.compared_cases(), 3);
}

/// `n` machines of `cases` cases each, no case on two of them.
fn sharing_nothing(n: usize, cases: usize) -> Vec<Machine> {
    (0..n)
        .map(|h| {
            let results = (0..cases)
                .map(|k| throughput_at(&format!("tool.h{h}c{k}"), 8192, &[100.0 + k as f64]))
                .collect();
            m(
                &format!("host{h}"),
                run_with(&format!("host{h}"), None, results),
            )
        })
        .collect()
}

/// Machines that share no case: what the comparison holds (and its JSON
/// document) grows with machines × cases, the size of its input, not with
/// machines² × cases. Each missing case names the one machine that has it;
/// a machine's name stored per case it lacks made 500 machines need GBs.
#[test]
fn machines_sharing_nothing_give_a_comparison_linear_in_the_input() {
    let cases = 7;
    let mut sizes = Vec::new();
    for n in [20, 40, 80] {
        let c = compare(&sharing_nothing(n, cases), 0, &[]).unwrap();
        assert!(c.rows.is_empty());
        assert_eq!(c.missing.len(), n * cases);
        let names: usize = c.missing.iter().map(|x| x.present_on.len()).sum();
        assert_eq!(names, n * cases, "one machine named per missing case");
        assert!(c
            .missing
            .iter()
            .all(|x| x.missing_count(&c.machines) == n - 1));
        assert_eq!(c.overall.cells.len(), n);
        sizes.push(serde_json::to_string(&c).unwrap().len());
    }
    // Doubling the machines doubles the document (a per-case list of the
    // machines lacking it would quadruple it).
    for w in sizes.windows(2) {
        let growth = w[1] as f64 / w[0] as f64;
        assert!((1.8..2.3).contains(&growth), "sizes {sizes:?}");
    }
}

#[test]
fn changed_workload_is_not_like_with_like() {
    let mut ms = three_hosts();
    ms[1].run.results[0].workload_version = 2;
    let c = compare(&ms, 0, &[]).unwrap();
    let row = &c.rows[0];
    assert_eq!(row.workload_version, 1);
    assert!(row.cells[1].is_none());
    let miss = c
        .missing
        .iter()
        .find(|x| x.workload_version == 1 && x.bench_id == "beta.sha256")
        .unwrap_or_else(|| panic!("{:?}", c.missing));
    assert_eq!(miss.missing_on(&c.machines), vec!["b"]);
    assert!(miss
        .note
        .as_deref()
        .unwrap_or("")
        .contains("b has workload version 2"));
}

#[test]
fn units_are_converted_or_excluded() {
    let mut ms = three_hosts();
    // b reports its throughput in kB/s: 50 000 kB/s = 50 MB/s.
    ms[1].run.results[0] = result(
        "beta.sha256",
        8192,
        1,
        "throughput",
        Unit::KBps,
        Better::Higher,
        &[50_000.0],
    );
    // c reports op/s for the same metric: not comparable.
    ms[2].run.results[0] = result(
        "beta.sha256",
        8192,
        1,
        "throughput",
        Unit::OpsPerSec,
        Better::Higher,
        &[5.0],
    );
    let c = compare(&ms, 0, &[]).unwrap();
    let row = &c.rows[0];
    assert_eq!(row.unit, "MB/s");
    assert!(close(row.cells[1].as_ref().map(|x| x.value), 50.0));
    assert!(close(row.cells[1].as_ref().and_then(|x| x.ratio), 0.625));
    assert!(row.cells[2].is_none());
    assert_eq!(c.excluded.len(), 1);
    assert_eq!(c.excluded[0].machine, "c");
    assert!(c.excluded[0].reason.contains("op/s"), "{:?}", c.excluded);
}

#[test]
fn non_positive_values_have_no_ratio() {
    let mut ms = three_hosts();
    ms[1].run.results[0] = throughput("beta.sha256", &[0.0]);
    let c = compare(&ms, 0, &[]).unwrap();
    let cell = c.rows[0].cells[1]
        .as_ref()
        .unwrap_or_else(|| panic!("cell"));
    assert_eq!(cell.value, 0.0);
    assert_eq!(cell.ratio, None);
    assert!(c
        .excluded
        .iter()
        .any(|x| x.machine == "b" && x.reason.contains("not positive")));
    // The means of b rest on the latency case only.
    assert_eq!(c.overall.cells[1].cases, 1);
    assert!(close(c.overall.cells[1].geomean, 0.5));
}

#[test]
fn intervals_from_raw_samples() {
    let fast = [200.0, 201.0, 199.0, 200.5, 199.5];
    let slow = [100.0, 100.5, 99.5, 100.2, 99.8];
    let same = [100.1, 100.4, 99.6, 100.0, 99.9];
    let ms = vec![
        m(
            "ref",
            run_with("ref", None, vec![throughput("beta.sha256", &slow)]),
        ),
        m(
            "fast",
            run_with("fast", None, vec![throughput("beta.sha256", &fast)]),
        ),
        m(
            "same",
            run_with("same", None, vec![throughput("beta.sha256", &same)]),
        ),
    ];
    let c = compare(&ms, 0, &[]).unwrap();
    let f = c.rows[0].cells[1]
        .as_ref()
        .unwrap_or_else(|| panic!("cell"));
    let ci = f.ci.unwrap_or_else(|| panic!("no ci"));
    assert!(ci.low > 1.9 && ci.high < 2.1, "{ci:?}");
    assert_eq!(f.significant, Some(true));
    let s = c.rows[0].cells[2]
        .as_ref()
        .unwrap_or_else(|| panic!("cell"));
    assert_eq!(s.significant, Some(false));
    let g = &c.overall.cells[1];
    assert!(g.geomean_ci.is_some_and(|iv| iv.contains(2.0)));
    assert_eq!(g.significant, Some(true));
    assert_eq!(c.overall.cells[2].significant, Some(false));
    // The same data gives the same intervals.
    let again = compare(&ms, 0, &[]).unwrap();
    assert_eq!(again, c);
}

#[test]
fn json_round_trip_is_strict() {
    let c = compare(&three_hosts(), 0, &[]).unwrap();
    let text = serde_json::to_string_pretty(&c).unwrap();
    let back: Comparison = serde_json::from_str(&text).unwrap();
    assert_eq!(back, c);
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["surprise"] = serde_json::json!(1);
    assert!(serde_json::from_value::<Comparison>(v).is_err());
}

fn samples() -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(0.5f64..1e4, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_machine_against_itself_is_one(cases in proptest::collection::vec((samples(), any::<bool>()), 1..6)) {
        let results: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(i, (s, lower))| {
                let better = if *lower { Better::Lower } else { Better::Higher };
                result(&format!("fam.case{i}"), 0, 1, "m", Unit::Count, better, s)
            })
            .collect();
        let run = run_with("x", Some(10.0), results);
        let c = compare(&[m("a", run.clone()), m("b", run)], 0, &[]).unwrap();
        for row in &c.rows {
            let cell = row.cells[1].as_ref().unwrap_or_else(|| panic!("cell"));
            prop_assert!((cell.ratio.unwrap_or(0.0) - 1.0).abs() < 1e-12);
            if let Some(ci) = cell.ci {
                prop_assert!(ci.contains(1.0));
                prop_assert_eq!(cell.significant, Some(false));
            }
        }
        let o = &c.overall.cells[1];
        prop_assert!((o.geomean.unwrap_or(0.0) - 1.0).abs() < 1e-12);
        prop_assert!((o.arith_mean.unwrap_or(0.0) - 1.0).abs() < 1e-12);
        prop_assert_eq!(c.bogomips_ratio[1], Some(1.0));
    }

    #[test]
    fn uniformly_faster_means_that_factor(k in 0.01f64..100.0, cases in proptest::collection::vec(samples(), 1..6)) {
        let make = |scale: f64| {
            cases
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let scaled: Vec<f64> = s.iter().map(|v| v * scale).collect();
                    result(&format!("fam.case{i}"), 0, 1, "m", Unit::MBps, Better::Higher, &scaled)
                })
                .collect::<Vec<_>>()
        };
        let c = compare(&[m("ref", run_with("ref", None, make(1.0))), m("k", run_with("k", None, make(k)))], 0, &[])
            .unwrap();
        // The geometric mean of identical ratios is that ratio.
        let o = &c.overall.cells[1];
        prop_assert!((o.geomean.unwrap_or(0.0) - k).abs() <= k * 1e-9);
        prop_assert!((o.arith_mean.unwrap_or(0.0) - k).abs() <= k * 1e-9);
        if let Some(ci) = o.geomean_ci {
            let g = o.geomean.unwrap_or(0.0);
            prop_assert!(ci.low <= g * (1.0 + 1e-12) && g <= ci.high * (1.0 + 1e-12));
        }
    }

    #[test]
    fn intervals_contain_the_estimate(a in proptest::collection::vec(0.5f64..1e4, 2..8), b in proptest::collection::vec(0.5f64..1e4, 2..8), lower in any::<bool>()) {
        let better = if lower { Better::Lower } else { Better::Higher };
        let c = compare(
            &[
                m("ref", run_with("ref", None, vec![result("fam.x", 0, 1, "m", Unit::Count, better, &a)])),
                m("o", run_with("o", None, vec![result("fam.x", 0, 1, "m", Unit::Count, better, &b)])),
            ],
            0,
            &[],
        )
        .unwrap();
        let cell = c.rows[0].cells[1].as_ref().unwrap_or_else(|| panic!("cell"));
        let r = cell.ratio.unwrap_or(f64::NAN);
        let ci = cell.ci.unwrap_or_else(|| panic!("no ci"));
        prop_assert!(ci.low <= r && r <= ci.high, "{:?} {}", ci, r);
        let g = &c.overall.cells[1];
        let gci = g.geomean_ci.unwrap_or_else(|| panic!("no geomean ci"));
        let gv = g.geomean.unwrap_or(f64::NAN);
        prop_assert!(gci.low <= gv * (1.0 + 1e-12) && gv <= gci.high * (1.0 + 1e-12));
    }
}

#[test]
fn intervals_up_to_the_machine_limit() {
    let fleet = |n: usize| -> Vec<Machine> {
        (0..n)
            .map(|i| {
                Machine::new(
                    format!("m{i}"),
                    run_with(
                        &format!("m{i}"),
                        None,
                        vec![throughput(
                            "t.case",
                            &[100.0 + i as f64, 101.0 + i as f64, 99.0 + i as f64],
                        )],
                    ),
                )
            })
            .collect()
    };
    let with = compare(&fleet(MAX_MACHINES_WITH_INTERVALS), 0, &[]).unwrap();
    assert!(with.rows[0].cells[1].as_ref().unwrap().ci.is_some());
    assert!(with.overall.cells[1].geomean_ci.is_some());
    let without = compare(&fleet(MAX_MACHINES_WITH_INTERVALS + 1), 0, &[]).unwrap();
    let cell = without.rows[0].cells[1].as_ref().unwrap();
    assert!(cell.ci.is_none() && cell.significant.is_none());
    assert!(cell.ratio.is_some(), "ratios stay");
    assert!(without.overall.cells[1].geomean_ci.is_none());
    // Asked for explicitly, a small comparison has none either.
    let none = compare_with_intervals(&fleet(2), 0, &[], false).unwrap();
    assert!(none.rows[0].cells[1].as_ref().unwrap().ci.is_none());
}
