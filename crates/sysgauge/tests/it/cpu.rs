//! `sysgauge cpu` driven end to end: the kernels' records, thread scaling,
//! indexes, the same ids inside `sysgauge run`, and bad input.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{completed_record, read_record, stdout_of, Outcome, Sandbox};
use sysgauge_core::{Status, Unit};

const KERNELS: [&str; 10] = [
    "cpu.numeric-sort",
    "cpu.string-sort",
    "cpu.bitfield",
    "cpu.fp-emulation",
    "cpu.fourier",
    "cpu.assignment",
    "cpu.idea",
    "cpu.huffman",
    "cpu.neural-net",
    "cpu.lu-decomposition",
];

#[test]
fn every_kernel_and_the_indexes() {
    let sb = Sandbox::new();
    let json = sb.path().join("cpu.json");
    let out = sb.tiny("cpu").arg("--json").arg(&json).succeeds();
    let run = completed_record(&json, "cpu");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    let mut expected: Vec<&str> = KERNELS.to_vec();
    expected.extend(["cpu.index-integer", "cpu.index-float", "cpu.index-memory"]);
    assert_eq!(ids, expected);
    for r in &run.results[..10] {
        assert_eq!(r.status, Status::Ok, "{}", r.bench_id);
        assert_eq!(r.params.get_u64("threads"), Some(1));
        let m = r.primary().unwrap_or_else(|| panic!("metric"));
        assert_eq!((m.name.as_str(), &m.unit), ("rate", &Unit::ItersPerSec));
        assert!(m.samples.len() >= 3 && m.value() > 0.0, "{}", r.bench_id);
        assert!(r.details.get_bool("confidence_reached").is_some());
        assert!(r.details.get_str("group").is_some());
    }
    for r in &run.results[10..] {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.bench_id, r.status);
        assert_eq!(r.primary().map(|m| m.unit.clone()), Some(Unit::Index));
        assert!(r.params.get_str("reference").is_some());
    }
    let text = stdout_of(&out);
    assert!(
        text.contains("1 thr iter/s") && text.contains("integer index"),
        "{text}"
    );
}

#[test]
fn thread_counts_give_scaling_efficiency() {
    let sb = Sandbox::new();
    let json = sb.path().join("cpu.json");
    let out = sb
        .tiny("cpu")
        .args([
            "--threads",
            "2,1",
            "--kernels",
            "idea,cpu.lu-decomposition",
            "--no-store",
        ])
        .arg("--json")
        .arg(&json)
        .succeeds();
    let run = read_record(&json);
    let cases: Vec<(String, Option<u64>)> = run
        .results
        .iter()
        .map(|r| (r.bench_id.clone(), r.params.get_u64("threads")))
        .collect();
    assert_eq!(
        cases,
        vec![
            ("cpu.idea".to_string(), Some(1)),
            ("cpu.idea".to_string(), Some(2)),
            ("cpu.lu-decomposition".to_string(), Some(1)),
            ("cpu.lu-decomposition".to_string(), Some(2)),
        ]
    );
    for r in run
        .results
        .iter()
        .filter(|r| r.params.get_u64("threads") == Some(2))
    {
        let eff = r
            .metrics
            .iter()
            .find(|m| m.name == "scaling_efficiency")
            .unwrap_or_else(|| panic!("no efficiency for {}", r.bench_id));
        assert_eq!(eff.unit, Unit::Percent);
        assert!(eff.value() > 0.0);
    }
    assert!(!sb.db().exists(), "--no-store must not create the database");
    assert!(stdout_of(&out).contains("2 thr scaling"));
}

#[test]
fn run_and_cpu_use_the_same_ids() {
    let sb = Sandbox::new();
    let run = sb.tiny_run_record("cpu.idea,cpu.fourier");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, vec!["cpu.fourier", "cpu.idea"]);
    assert!(run
        .results
        .iter()
        .all(|r| r.status == Status::Ok && r.params.get_u64("threads") == Some(1)));
}

/// `--threads all` (and `spawn --spawners all`) is stored as `all`, the
/// case the default runs and every machine has, not as this machine's CPU
/// count.
#[test]
fn an_explicit_all_is_the_case_every_machine_has() {
    let sb = Sandbox::new();
    // Each result's `key` parameter, from `command args` at the tiny profile.
    let stored = |command: &str, args: &[&str], key: &str| -> Vec<String> {
        let json = sb.path().join(format!("{command}.json"));
        sb.tiny(command)
            .args(args)
            .args(["--no-store", "--json"])
            .arg(&json)
            .succeeds();
        read_record(&json)
            .results
            .iter()
            .map(|r| r.params.get(key).map(|v| v.to_string()).unwrap_or_default())
            .collect()
    };
    assert_eq!(
        stored(
            "cpu",
            &["--threads", "1,all", "--kernels", "idea"],
            "threads"
        ),
        ["1", "all"]
    );
    let spawners = stored(
        "spawn",
        &["--only", "posix-spawn", "--spawners", "all"],
        "spawners",
    );
    assert!(
        !spawners.is_empty() && spawners.iter().all(|s| s == "all"),
        "{spawners:?}"
    );
}

#[test]
fn bad_cpu_arguments_exit_2() {
    let sb = Sandbox::new();
    for (args, needle) in [
        (vec!["--threads", "0"], "out of range"),
        (vec!["--threads", "two"], "not a whole number"),
        (
            vec!["--kernels", "quicksort"],
            "unknown family or benchmark 'quicksort'",
        ),
        (vec!["--threads", "2", "--ladder"], "cannot be used with"),
    ] {
        sb.tiny("cpu").args(&args).usage_error(needle);
    }
    assert!(!sb.db().exists(), "nothing may be written on bad input");
}

/// With `--rounds`, the stored efficiency is that of the stored rates (the
/// medians of the rounds), and a `cpu-confidence` finding goes with the
/// details the table's `*` reads (the median round's), naming the case as
/// stored (`threads=all`).
#[test]
fn with_rounds_efficiency_and_confidence_describe_the_stored_values() {
    let sb = Sandbox::new();
    let json = sb.path().join("cpu.json");
    sb.tiny("cpu")
        .args([
            "--rounds",
            "3",
            "--threads",
            "1,all",
            "--kernels",
            "idea,huffman",
        ])
        .args(["--no-store", "--json"])
        .arg(&json)
        .succeeds();
    let run = completed_record(&json, "cpu");
    let rate = |id: &str, threads: &str| {
        let r = run
            .results
            .iter()
            .find(|r| {
                r.bench_id == id
                    && r.params.get("threads").map(|v| v.to_string()).as_deref() == Some(threads)
            })
            .unwrap_or_else(|| panic!("no {id} threads={threads}"));
        (r.primary().unwrap().value(), r)
    };
    for id in ["cpu.idea", "cpu.huffman"] {
        let (single, _) = rate(id, "1");
        let (all, r) = rate(id, "all");
        let n = r.count_param("threads").unwrap() as f64;
        let eff = r
            .metrics
            .iter()
            .find(|m| m.name == "scaling_efficiency")
            .unwrap();
        let want = 100.0 * all / (n * single);
        assert!(
            (eff.value() - want).abs() < 1e-9 * want,
            "{id}: stored {} against {want} from the stored rates",
            eff.value()
        );
        let scaling = r.findings.iter().any(|f| f.code == "cpu-scaling");
        assert_eq!(scaling, want.round() < 75.0, "{id}: {:?}", r.findings);
    }
    for r in run.results.iter().filter(|r| !r.bench_id.contains("index")) {
        let missed = r.details.get_bool("confidence_reached") == Some(false);
        let found: Vec<&str> = r
            .findings
            .iter()
            .filter(|f| f.code == "cpu-confidence")
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(
            found.len(),
            usize::from(missed),
            "{} {}: {found:?}",
            r.bench_id,
            r.params
        );
        for f in found {
            assert!(
                f.starts_with(&format!("{} ({})", r.bench_id, r.params)),
                "{f}"
            );
        }
    }
}

/// An index is computed from the kernels in milliseconds: no telemetry of
/// its own, never disturbed.
#[test]
fn an_index_has_no_telemetry() {
    let sb = Sandbox::new();
    let (run, _) = sb.tiny_unstored_run("cpu");
    let indexes: Vec<_> = run
        .results
        .iter()
        .filter(|r| r.bench_id.starts_with("cpu.index-"))
        .collect();
    assert_eq!(indexes.len(), 3);
    assert!(run
        .results
        .iter()
        .any(|r| r.details.get_str("other_cpus").is_some()));
    for r in indexes {
        assert_eq!(r.status, Status::Ok, "{r:?}");
        assert!(r.disturbed().is_none(), "{r:?}");
        assert!(r.details.get_str("other_cpus").is_none(), "{r:?}");
        assert!(r.details.get_int("cpu_percent").is_none(), "{r:?}");
    }
}

#[test]
fn an_index_alone_is_explained() {
    let sb = Sandbox::new();
    sb.tiny("cpu")
        .args(["--only", "index-integer"])
        .usage_error(
        "cpu.index-integer, which measures nothing itself: it is computed from cpu.numeric-sort",
    );
    assert!(!sb.db().exists());
}
