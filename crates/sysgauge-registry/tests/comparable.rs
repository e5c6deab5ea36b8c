//! Comparable by construction: the default runs of two unlike machines (a
//! 4-core board with a 1 MiB cache and 4 GiB of memory, a 64-CPU server with
//! 256 MiB of last-level cache and 256 GiB) plan the same cases, so they
//! compare on every case, at every profile; two profiles compare on the
//! cases they share. The plans are built exactly as `sysgauge run` builds
//! them (the registry's default families, the end-of-run clock check), with
//! the machine's CPU count in the plan and its memory applied as the memory
//! family applies it when a case runs.

use std::collections::BTreeSet;
use sysgauge_bench::memory::{check_memory, fit_array_size, last_level_cache};
use sysgauge_compare::index_against;
use sysgauge_core::host::CacheInfo;
use sysgauge_core::record::{Metric, Params, ResultRecord, RunRecord, Status};
use sysgauge_core::{Plan, Profile};
use sysgauge_family::family::Options;
use sysgauge_registry::{benchmarks, family_info};

/// The host facts planning can see.
struct Machine {
    name: &'static str,
    logical_cpus: usize,
    caches: Vec<CacheInfo>,
    available_memory: u64,
}

fn cache(level: u8, size_bytes: u64, instances: u32) -> CacheInfo {
    CacheInfo {
        level,
        kind: "unified".into(),
        size_bytes,
        shared_by: None,
        instances: Some(instances),
    }
}

fn board() -> Machine {
    Machine {
        name: "board",
        logical_cpus: 4,
        caches: vec![cache(2, 1 << 20, 1)],
        available_memory: 3584 << 20,
    }
}

fn server() -> Machine {
    Machine {
        name: "server",
        logical_cpus: 64,
        caches: vec![cache(2, 1 << 20, 32), cache(3, 32 << 20, 8)],
        available_memory: 256 << 30,
    }
}

/// The cases `sysgauge run` plans on `m`, with the sizes they run at.
fn planned(m: &Machine, profile: Profile) -> BTreeSet<(String, Params)> {
    let plan = Plan {
        profile,
        threads: m.logical_cpus,
    };
    let options = Options::default();
    let mut benches = benchmarks(&options);
    benches.retain(|b| {
        family_info(sysgauge_core::family_of(b.id())).is_some_and(|f| f.in_default_run)
    });
    benches.push(sysgauge_bench::clock::end_of_run(&options.get()));
    benches
        .iter()
        .flat_map(|b| {
            b.cases(&plan).into_iter().filter_map(|mut p| {
                // What the memory family does when the case runs: arrays
                // shrink to fit, a latency working set that does not fit
                // is skipped.
                let avail = Some(m.available_memory);
                if let Some(size) = p.get_u64("size").filter(|_| b.id().starts_with("mem.")) {
                    p.insert("size", fit_array_size(size, avail));
                }
                if let Some(ws) = p.get_u64("working_set") {
                    check_memory("", ws + ws / 16, avail).ok()?;
                }
                Some((b.id().to_string(), p))
            })
        })
        .collect()
}

/// A run of `m` in which every planned case measured 1.
fn run_of(m: &Machine, profile: Profile) -> RunRecord {
    let mut run = RunRecord::new(m.name, "run", "test");
    run.profile = profile;
    run.results = planned(m, profile)
        .into_iter()
        .map(|(id, params)| {
            let desc = benchmarks(&Options::default())
                .into_iter()
                .find(|b| b.id() == id)
                .map(|b| b.describe())
                .expect("a planned benchmark is registered");
            let metric = Metric::new("m", desc.unit, desc.better, vec![1.0, 1.0, 1.0]);
            ResultRecord {
                workload_version: desc.workload_version,
                ..ResultRecord::new(&id, params, Status::Ok, metric.into_iter().collect())
            }
        })
        .collect();
    run
}

#[test]
fn the_fixtures_differ_in_what_planning_used_to_read() {
    let (b, s) = (board(), server());
    assert_ne!(b.logical_cpus, s.logical_cpus);
    assert_ne!(b.available_memory, s.available_memory);
    assert_ne!(
        last_level_cache(&b.caches).map(|l| l.total_bytes),
        last_level_cache(&s.caches).map(|l| l.total_bytes)
    );
}

#[test]
fn unlike_machines_plan_the_same_cases_at_every_profile() {
    // The full profile's 4 GiB arrays need 12 GiB: on the board they run
    // smaller, as a machine short of memory does (below).
    for profile in [Profile::Tiny, Profile::Quick, Profile::Standard] {
        let (b, s) = (planned(&board(), profile), planned(&server(), profile));
        assert!(!b.is_empty());
        let only: Vec<_> = b.symmetric_difference(&s).collect();
        assert!(
            only.is_empty(),
            "{profile}: cases only one machine plans: {only:?}"
        );
    }
}

#[test]
fn unlike_machines_compare_on_every_case() {
    for profile in [Profile::Quick, Profile::Standard] {
        let (b, s) = (run_of(&board(), profile), run_of(&server(), profile));
        for (x, y) in [(&b, &s), (&s, &b)] {
            let ix = index_against(x, y);
            assert_eq!(ix.overall.unmatched, 0, "{profile}: {ix:?}");
            assert!(ix.overall.cases > 50, "{profile}: {}", ix.overall.cases);
            for f in &ix.families {
                assert!(f.index.is_some(), "{profile}: {} has no index", f.family);
                assert_eq!(f.unmatched, 0, "{profile}: {}", f.family);
            }
        }
    }
}

#[test]
fn two_profiles_compare_on_what_they_share() {
    let quick = run_of(&board(), Profile::Quick);
    let standard = run_of(&server(), Profile::Standard);
    let ix = index_against(&quick, &standard);
    assert!(ix.overall.cases > 10, "{ix:?}");
    for family in ["hash", "cpu", "clock", "spawn", "net"] {
        let line = ix.families.iter().find(|f| f.family == family);
        assert!(
            line.is_some_and(|f| f.cases > 0),
            "{family} shares no case between quick and standard: {ix:?}"
        );
    }
}

#[test]
fn a_machine_short_of_memory_runs_smaller_arrays_as_other_cases() {
    // A 1 GiB board cannot hold the standard profile's three 1 GiB arrays:
    // those cases run smaller (with a finding) and compare only at that
    // size; every other case still compares.
    let small = Machine {
        available_memory: 800 << 20,
        ..board()
    };
    let standard = |m: &Machine| run_of(m, Profile::Standard);
    let ix = index_against(&standard(&small), &standard(&server()));
    let mem = ix.families.iter().find(|f| f.family == "mem").unwrap();
    assert_eq!((mem.index, mem.unmatched), (None, 2), "{ix:?}");
    assert_eq!(ix.overall.unmatched, mem.unmatched, "{ix:?}");
    // At the quick profile it fits and compares.
    let ix = index_against(
        &run_of(&small, Profile::Quick),
        &run_of(&server(), Profile::Quick),
    );
    assert_eq!(ix.overall.unmatched, 0, "{ix:?}");
}
