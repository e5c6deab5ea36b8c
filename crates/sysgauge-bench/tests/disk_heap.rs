//! The disk family leaves the process as it found it: the heap its cases
//! freed is given back when its session ends, so a later `fork` (the spawn
//! family's) does not copy the page tables of memory nobody uses. A test
//! binary of its own, so that no other test's allocations move the
//! process's resident anonymous memory while this one looks at it.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::sync::Arc;
use std::time::Duration;
use sysgauge_bench::disk::{DiskBenchmark, DiskOptions, Kind};
use sysgauge_core::{Benchmark, CtxSettings, Params, Profile, RunCtx};

/// Resident anonymous memory of this process, KiB.
fn rss_anon_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[test]
fn a_disk_session_gives_back_the_heap_it_freed() {
    let dir = tempfile::tempdir().unwrap();
    let options = Arc::new(DiskOptions {
        path: Some(dir.path().to_path_buf()),
        size: Some(4 << 20),
        repetition_time: Some(Duration::from_millis(3)),
        ..DiskOptions::default()
    });
    // What `sysgauge run --profile quick` runs of the family: at quick the
    // create case names 100,000 files (about 10 MiB of small allocations)
    // however short its passes.
    let cases = [
        (Kind::SeqWrite, Params::new().with("block_size", 1u64 << 20)),
        (Kind::SeqRead, Params::new().with("block_size", 1u64 << 20)),
        (Kind::Create, Params::new().with("order", "sequential")),
    ];
    let before = rss_anon_kib();
    let mut ctx = RunCtx::for_tests(CtxSettings {
        repetitions: 1,
        threads: 1,
        ..CtxSettings::for_tests(Profile::Quick, dir.path().to_path_buf())
    });
    for (kind, params) in &cases {
        ctx.begin_case(Duration::from_millis(50));
        let bench = DiskBenchmark::new(*kind, options.clone());
        bench
            .run(&mut ctx, params)
            .unwrap_or_else(|e| panic!("{} {params}: {e}", kind.id()));
        // Kept past the session, as the run record keeps every result.
        std::hint::black_box(ctx.take_case_output());
    }
    let during = rss_anon_kib();
    ctx.end_session();
    let after = rss_anon_kib();
    // The cases really used the heap, or the test proves nothing.
    assert!(
        during >= before + 8 * 1024,
        "RssAnon {before} KiB before, {during} KiB at the end of the cases"
    );
    assert!(
        after <= before + 2 * 1024,
        "RssAnon {before} KiB before the disk session, {after} KiB after it ended"
    );
}
