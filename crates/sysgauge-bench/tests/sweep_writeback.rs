//! The write-behind trap, on a real disk-backed file system: a large input
//! file written without fsync leaves hundreds of megabytes of dirty pages;
//! the sweep's settle step flushes them and waits (bounded) until the
//! kernel's Dirty + Writeback have drained, reporting a non-zero wait; and
//! the first timed run after it is not the slow first run the old scripts
//! saw (it is not at half speed against the runs after it).
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sysgauge_bench::sweep::corpus::{Corpus, DataSpec};
use sysgauge_bench::sweep::input::{drain_threshold, settle, write_copies};
use sysgauge_bench::sweep::{self, Mode, SweepOptions};
use sysgauge_core::{CancelToken, CtxSettings, Params, Profile, RunCtx};

/// One test at a time: the settle step's sync(2) would flush the other
/// test's freshly written file before it could be seen dirty.
static SERIAL: Mutex<()> = Mutex::new(());

/// 256 copies of the 1 MB corpus: far more than any build on this machine
/// keeps dirty, far less than the kernel's background write-back limit.
const COPIES: u64 = 256;

/// A directory on a disk-backed file system (the target directory; /tmp
/// may be tmpfs, where nothing is ever dirty).
fn disk_dir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("tempdir: {e}"));
    let fs = sysgauge_host::fs_info(dir.path());
    let usable = !fs.as_ref().is_some_and(|f| f.ram_backed)
        && sysgauge_host::read_dirty_writeback().is_some();
    sysgauge_testkit::require(
        &format!(
            "this test needs a disk-backed target directory and /proc/meminfo: {:?} is {fs:?}",
            dir.path()
        ),
        usable,
        "run it with the target directory on a disk",
    )
    .then_some(dir)
}

fn require(program: &str) -> bool {
    sysgauge_testkit::require(
        &format!("{program} missing"),
        sysgauge_core::bench::find_program(program).is_some(),
        "apt-get install coreutils",
    )
}

#[test]
fn settle_reports_a_bounded_nonzero_wait_after_an_unflushed_write() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dir) = disk_dir() else { return };
    let corpus = Corpus::load(&DataSpec::Random, &[]).unwrap();
    let path = dir.path().join("big.dat");
    let cancel = CancelToken::new();
    let file = write_copies(&path, &corpus, COPIES, &cancel).unwrap();
    let bytes = corpus.len() * COPIES;
    let max_wait = Duration::from_secs(30);
    let threshold = drain_threshold(bytes);
    let report = settle(&file, max_wait, threshold, &cancel).unwrap();
    eprintln!(
        "settle: {:.1} MB dirty at start, fsync {:?}, drain {:?}, {:.1} MB dirty after",
        report.dirty_at_start.unwrap_or(0) as f64 / 1e6,
        report.fsync,
        report.drain.waited,
        report.drain.dirty_after.unwrap_or(0) as f64 / 1e6
    );

    // The write-behind was really pending when the settle began...
    let at_start = report.dirty_at_start.unwrap_or(0);
    assert!(
        at_start >= bytes / 4,
        "only {at_start} bytes were dirty after writing {bytes} without fsync: {report:?}"
    );
    // ...the settle waited for it, within its bound...
    assert!(report.waited() > Duration::from_millis(1), "{report:?}");
    assert!(
        report.drain.waited <= max_wait + Duration::from_secs(1),
        "{report:?}"
    );
    // ...and it drained.
    assert!(report.drain.drained, "{report:?}");
    assert!(
        report.drain.dirty_after.unwrap_or(u64::MAX) <= threshold,
        "{report:?}"
    );
    drop(file);
    std::fs::remove_file(&path).unwrap();
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn first_timed_run_after_the_settle_is_not_the_slow_first_run() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !require("sha256sum") {
        return;
    }
    let Some(base) = disk_dir() else { return };
    let options = Arc::new(SweepOptions {
        programs: sweep::program::parse_programs(&["sha256sum".into()]).ok(),
        data: DataSpec::Random,
        copies: Some(vec![COPIES]),
        iterations: Some(vec![COPIES]),
        mode: Mode::Sweep,
        dictionaries: Vec::<PathBuf>::new(),
        ..SweepOptions::default()
    });
    let benches = sweep::benchmarks(&options);
    let bench = benches
        .iter()
        .find(|b| b.id() == "sweep.sha256sum")
        .unwrap_or_else(|| panic!("sweep.sha256sum"));
    // No warm-up: the first timed run is the first run after the input
    // file was made (the program's output is verified after timing).
    let mut ctx = RunCtx::for_tests(CtxSettings {
        repetitions: 5,
        warmup: 0,
        ..CtxSettings::for_tests(Profile::Quick, base.path().to_path_buf())
    });
    ctx.begin_case(Duration::from_secs(60));
    let params = Params::new()
        .with("copies", COPIES)
        .with("iterations", COPIES)
        .with("data", "random");
    let metrics = bench.run(&mut ctx, &params).unwrap();
    let out = ctx.take_case_output();
    let d = &out.details;

    // The case made its input file, found it dirty, and waited it out.
    let at_start = d.get_u64("dirty_at_start_bytes").unwrap_or(0);
    assert!(at_start >= COPIES * 250_000, "{d:?}");
    assert!(d.get_u64("writeback_wait_ms").is_some(), "{d:?}");
    assert_eq!(d.get_bool("writeback_drained"), Some(true), "{d:?}");
    assert!(out.findings.iter().all(|f| f.code != sweep::WRITE_BEHIND));

    let wall = metrics
        .iter()
        .find(|m| m.name == "wall_time")
        .unwrap_or_else(|| panic!("wall_time"));
    assert_eq!(wall.samples.len(), 5);
    eprintln!("wall seconds per repetition: {:?}", wall.samples);
    let first = wall.samples[0];
    let rest = median(&wall.samples[1..]);
    // The trap's signature is the first run at about half speed. Other
    // load on the machine can make any single run a little slower, never
    // systematically the first one by 2x.
    assert!(
        first < 2.0 * rest,
        "the first run took {first:.3} s against a median of {rest:.3} s for the others: {:?}",
        wall.samples
    );
    let dir: &Path = base.path();
    ctx.end_session();
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}
