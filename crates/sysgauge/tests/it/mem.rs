//! `sysgauge mem` and the memory slice of `sysgauge run`, driven through the
//! real binary on temporary databases.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{completed_record, stderr_of, stdout_of, Outcome, Sandbox};
use std::sync::Arc;
use sysgauge_bench::memory::{self, MemOptions};
use sysgauge_core::Status;

#[test]
fn mem_runs_the_whole_family_and_renders_its_tables() {
    let sb = Sandbox::new();
    let json = sb.path().join("mem.json");
    let chart = sb.path().join("latency.svg");
    let out = sb
        .tiny("mem")
        .args(["--working-sets", "4KiB,64KiB,1MiB", "--threads", "1,2"])
        .arg("--json")
        .arg(&json)
        .arg("--chart")
        .arg(&chart)
        .succeeds();
    let run = completed_record(&json, "mem");
    let mut ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    ids.dedup();
    // Every benchmark of the family, in its order.
    let family = memory::benchmarks(&Arc::new(MemOptions::default()));
    let want: Vec<&str> = family.iter().map(|b| b.id()).collect();
    assert_eq!(ids, want);
    for r in &run.results {
        match &r.status {
            Status::Ok => assert!(r.primary().map(|m| m.value() > 0.0).unwrap_or(false)),
            // /dev/shm may be missing in a container; nothing else may skip.
            Status::Skipped { .. } if r.bench_id == "mem.tmpfs-write" => {}
            other => panic!("{} {}: {other:?}", r.bench_id, r.params),
        }
    }
    // The size chosen for the machine is recorded; the tiny profile caps it.
    let memcpy = &run.results[0];
    assert_eq!(memcpy.params.get_u64("size"), Some(1 << 20));
    assert_eq!(memcpy.params.get_bool("huge_pages"), Some(true));
    let latency: Vec<u64> = run
        .results
        .iter()
        .filter(|r| r.bench_id == "mem.latency")
        .filter_map(|r| r.params.get_u64("working_set"))
        .collect();
    assert_eq!(latency, vec![4096, 65536, 1 << 20]);
    assert!(run
        .results
        .iter()
        .filter(|r| r.bench_id == "mem.latency")
        .all(|r| r.details.get_str("cache_level").is_some()));
    let stdout = stdout_of(&out);
    for needle in [
        "Copy bandwidth, mbw style",
        "memcpy (MEMCPY; 1.2.2: DUMB)",
        "loop (DUMB; 1.2.2: MEMCPY)",
        "block 256KiB (MCBLOCK)",
        "mbw labels: ",
        "Triad:",
        "ns/access",
    ] {
        assert!(stdout.contains(needle), "missing {needle}:\n{stdout}");
    }

    // The latency chart, with the host's cache sizes marked.
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Memory latency by working set"));
    assert!(stderr_of(&out).contains("wrote"));

    // `results show` renders the same family tables from the database.
    let show = sb.on_db("results").args(["show", "1"]).succeeds();
    assert!(stdout_of(&show).contains("Copy bandwidth, mbw style"));
}

#[test]
fn run_includes_only_the_memory_slice() {
    let sb = Sandbox::new();
    let (run, _) = sb.tiny_unstored_run("mem");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, vec!["mem.memcpy", "mem.stream-triad", "mem.latency"]);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1);
    assert_eq!(run.results[1].params.get_str("threads"), Some("all"));
    assert_eq!(run.results[1].count_param("threads"), Some(threads));
    assert_eq!(run.results[2].params.get_u64("working_set"), Some(1 << 20));
    assert!(run.results.iter().all(|r| r.status == Status::Ok));
}

#[test]
fn sizes_beyond_memory_are_refused_with_exit_2() {
    let sb = Sandbox::new();
    let out = sb.tiny("mem").args(["--size", "1EiB"]).exits_with(2);
    let err = stderr_of(&out);
    assert!(
        err.contains("--size 1 EiB")
            && err.contains("of memory but only")
            && err.contains("smaller --size"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        !sb.db().exists(),
        "nothing may be stored for a refused size"
    );
}

#[test]
fn bad_options_exit_2_with_one_line() {
    let sb = Sandbox::new();
    for args in [
        vec!["--size", "12Q"],
        vec!["--size=-1M"],
        vec!["--size", "100"],
        vec!["--block-size", "1"],
        vec!["--threads", "0"],
        vec!["--working-sets", "4K,x"],
        vec!["--chart", "latency.jpg"],
        vec!["--chart", "no-such-dir/latency.svg"],
        vec!["--chart", "l.svg", "--only", "memcpy"],
        vec!["--only", "nosuch"],
    ] {
        let out = sb.tiny("mem").args(&args).usage_error("sysgauge: error: ");
        let err = stderr_of(&out);
        assert!(err.starts_with("sysgauge: error: "), "{args:?}: {err}");
    }
}
