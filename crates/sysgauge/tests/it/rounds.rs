//! `--rounds N` through the real binary: every case is stored once, merged
//! from its rounds (one sample per round, each round kept in the details),
//! the summary shows the between-round spread beside the within-round one,
//! and a family's own subcommand takes the same option. The judging of a
//! case whose rounds disagree is tested with a synthetic case in
//! sysgauge-core (`runner::tests::rounds_are_interleaved_merged_and_judged`).

use crate::common::{stderr_of, stdout_of, Outcome, Sandbox};

#[test]
fn run_with_rounds_stores_each_case_once_with_its_rounds() {
    let sb = Sandbox::new();
    let out = sb
        .tiny_run()
        .args(["--only", "hash", "--rounds", "3"])
        .succeeds();
    let err = stderr_of(&out);
    assert!(
        err.contains("round 1/3") && err.contains("round 2/3"),
        "{err}"
    );
    assert!(err.contains("between 3 rounds"), "{err}");
    let text = stdout_of(&out);
    assert!(
        text.contains("between rounds") && text.contains("3×3"),
        "{text}"
    );
    let run = sb.stored_run(1);
    assert!(!run.results.is_empty());
    let mut keys: Vec<String> = run
        .results
        .iter()
        .map(|r| format!("{} {}", r.bench_id, r.params))
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "a case stored twice");
    for r in &run.results {
        assert_eq!(r.details.get_u64("rounds"), Some(3), "{r:?}");
        let m = r.primary().unwrap_or_else(|| panic!("no metric: {r:?}"));
        assert_eq!(m.samples.len(), 3);
        let values: Vec<f64> = r
            .details
            .get_str("round_values")
            .unwrap_or_default()
            .split(' ')
            .map(|v| v.parse().unwrap_or(f64::NAN))
            .collect();
        assert_eq!(values.len(), 3);
        for (a, b) in values.iter().zip(&m.samples) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs(),
                "{values:?} vs {:?}",
                m.samples
            );
        }
        assert_eq!(
            r.details
                .get_str("round_samples")
                .map(|s| s.split(" | ").count()),
            Some(3)
        );
        assert!(r.details.get_str("between_round_spread").is_some());
    }
}

#[test]
fn a_family_subcommand_takes_rounds_and_bad_counts_are_refused() {
    let sb = Sandbox::new();
    let out = sb.tiny("clock").args(["--rounds", "2"]).succeeds();
    assert!(stderr_of(&out).contains("round 1/2"));
    let run = sb.stored_run(1);
    assert!(run
        .results
        .iter()
        .all(|r| r.details.get_u64("rounds") == Some(2)));
    for bad in ["0", "101"] {
        sb.tiny_run()
            .args(["--rounds", bad])
            .usage_error("--rounds must be between 1 and 100");
    }
}
