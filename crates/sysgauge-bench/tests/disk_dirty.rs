//! The dirty-pages trap, provoked for real: write a few hundred MiB without
//! syncing, start a disk test at once, and expect it to flush, wait and say
//! so. A test binary of its own, because every other disk test calls
//! sync(2), which would clean the pages before this test can look at them.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::sync::Arc;
use std::time::Duration;
use sysgauge_bench::disk::{DiskBenchmark, DiskOptions, Kind};
use sysgauge_core::{Benchmark, CtxSettings, Params, Profile, RunCtx};

#[test]
fn dirty_pages_are_flushed_and_the_wait_reported() {
    let dir = tempfile::tempdir().unwrap();
    let options = Arc::new(DiskOptions {
        path: Some(dir.path().to_path_buf()),
        size: Some(1 << 20),
        full_suite: true,
        repetition_time: Some(Duration::from_millis(3)),
        ..DiskOptions::default()
    });
    let bench = DiskBenchmark::new(Kind::SeqWrite, options);
    let params = Params::new().with("block_size", 1u64 << 20);
    // Another program's sync(2) can still clean the pages between writing
    // them and the test's look; try a few times.
    let mut last = Vec::new();
    for attempt in 0..5 {
        let mut ctx = RunCtx::for_tests(CtxSettings {
            repetitions: 1,
            threads: 1,
            ..CtxSettings::for_tests(Profile::Tiny, dir.path().to_path_buf())
        });
        ctx.begin_case(Duration::from_millis(50));
        let junk = dir.path().join(format!("dirty-{attempt}"));
        let chunk = vec![0x5au8; 8 << 20];
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&junk).unwrap();
            for _ in 0..32 {
                f.write_all(&chunk).unwrap();
            }
        }
        let metrics = bench.run(&mut ctx, &params).unwrap();
        assert!(metrics[0].value() > 0.0);
        let out = ctx.take_case_output();
        ctx.end_session();
        let _ = std::fs::remove_file(&junk);
        if let Some(f) = out.findings.iter().find(|f| f.code == "dirty-pages") {
            assert!(f.message.contains("waited"), "{}", f.message);
            assert!(f.remedy.is_some());
            assert!(out.details.get("writeback_wait_ms").is_some());
            return;
        }
        last = out.findings;
    }
    panic!("no dirty-pages finding after 256 MiB of unsynced writes: {last:?}");
}
