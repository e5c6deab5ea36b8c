//! Tests of the disk family on real file systems: every test runs at tiny
//! sizes in a temporary directory, and the traps that a file system can
//! provoke are provoked (the dirty-pages trap in `tests/disk_dirty.rs`, a
//! process of its own; the raw-device traps on loop devices in the
//! binary's `tests/it/disk.rs`).

use super::*;
use std::path::Path;
use sysgauge_core::{CtxSettings, Finding};

fn ctx_in(base: &Path, reps: u32) -> RunCtx {
    let mut c = RunCtx::for_tests(CtxSettings {
        repetitions: reps,
        ..CtxSettings::for_tests(Profile::Tiny, base.to_path_buf())
    });
    c.begin_case(Duration::from_millis(50));
    c
}

fn options(path: &Path, size: u64) -> Arc<DiskOptions> {
    Arc::new(DiskOptions {
        path: Some(path.to_path_buf()),
        size: Some(size),
        block_sizes: None,
        full_suite: true,
        repetition_time: Some(Duration::from_millis(3)),
        device: None,
        io_modes: None,
    })
}

fn codes(f: &[Finding]) -> Vec<String> {
    f.iter().map(|f| f.code.clone()).collect()
}

/// Run one case and return its metrics and output.
fn run_case(
    c: &mut RunCtx,
    o: &Arc<DiskOptions>,
    kind: Kind,
    params: &Params,
) -> (Vec<Metric>, sysgauge_core::CaseOutput) {
    c.begin_case(Duration::from_millis(50));
    let b = DiskBenchmark::new(kind, o.clone());
    let m = b
        .run(c, params)
        .unwrap_or_else(|e| panic!("{} {params}: {e}", kind.id()));
    (m, c.take_case_output())
}

/// The parameters of a block test case: its block size in bytes.
fn block_size(bytes: u64) -> Params {
    Params::new().with("block_size", bytes)
}

#[test]
fn every_test_runs_and_reports_latency() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 4 << 20);
    let mut c = ctx_in(dir.path(), 3);
    let plan = Plan {
        profile: Profile::Tiny,
        threads: 2,
    };
    let mut ran = 0;
    for b in benchmarks(&o) {
        let kind = Kind::ALL
            .into_iter()
            .find(|k| k.id() == b.id())
            .unwrap_or_else(|| panic!("unknown {}", b.id()));
        for p in b.cases(&plan) {
            let (m, out) = run_case(&mut c, &o, kind, &p);
            if kind == Kind::RandRw {
                let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
                assert_eq!(
                    names[..4],
                    ["throughput", "iops", "read_throughput", "read_iops"]
                );
                assert!(names.contains(&"write_latency_p99"), "{names:?}");
                assert!(m[0].value() > 0.0, "{p}");
                assert_eq!(out.params.get_bool("direct"), Some(true));
                assert!(out.details.get_str("engine").is_some());
                ran += 1;
                continue;
            }
            assert_eq!(m.len(), 4, "{} {p}", b.id());
            assert!(m[0].value() > 0.0, "{} {p}", b.id());
            assert_eq!(m[0].samples.len(), 3);
            assert_eq!(m[1].name, "latency_median");
            assert!(m[2].value() >= m[1].value(), "p99 below median");
            assert!(m[3].value() >= m[2].value(), "max below p99");
            assert!(out.details.get_u64("ops_per_rep").unwrap_or(0) >= 1);
            assert!(out.details.get("writeback_wait_ms").is_some());
            assert!(out.details.get_str("target").is_some());
            ran += 1;
        }
    }
    // 3 block sizes × 3 block tests, putc, getc, 2 seek cases, 4 queue-depth
    // cases, 3 × 2 file cases.
    assert_eq!(ran, 23);
    c.end_session();
    // Nothing is left behind in the target directory.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn direct_io_is_used_where_the_file_system_has_it() {
    // /tmp here is ext4 (or whatever the machine has): if O_DIRECT works
    // for a plain file there, the block tests must use it.
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe");
    let direct_ok = io::open_rw(&probe, true).is_ok();
    let o = options(dir.path(), 4 << 20);
    let mut c = ctx_in(dir.path(), 3);
    let (_, out) = run_case(&mut c, &o, Kind::SeqRead, &block_size(1 << 20));
    assert_eq!(out.params.get_bool("direct"), Some(direct_ok));
    assert_eq!(out.details.get_bool("verified"), Some(true));
    assert_eq!(out.params.get_u64("size"), Some(4 << 20));
}

#[test]
fn a_chosen_io_mode_holds_for_every_size() {
    let dir = tempfile::tempdir().unwrap();
    let direct_ok = io::direct_supported(dir.path());
    let o = Arc::new(DiskOptions {
        io_modes: Some(IoMode::BOTH.to_vec()),
        block_sizes: Some(vec![4096, 1000]),
        ..(*options(dir.path(), 4 << 20)).clone()
    });
    let plan = Plan {
        profile: Profile::Tiny,
        threads: 2,
    };
    let cases = DiskBenchmark::new(Kind::SeqWrite, o.clone()).cases(&plan);
    let shown: Vec<String> = cases.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        shown,
        [
            "block_size=4096 direct=false",
            "block_size=1000 direct=false",
            "block_size=4096 direct=true",
            "block_size=1000 direct=true"
        ]
    );
    let mut c = ctx_in(dir.path(), 3);
    // Buffered at an aligned size: chosen, so no fallback finding.
    let (_, out) = run_case(&mut c, &o, Kind::SeqWrite, &cases[0]);
    assert_eq!(out.params.get_bool("direct"), Some(false));
    assert!(!codes(&out.findings).contains(&traps::BUFFERED_FALLBACK.to_string()));
    if direct_ok {
        let (_, out) = run_case(&mut c, &o, Kind::SeqWrite, &cases[2]);
        assert_eq!(out.params.get_bool("direct"), Some(true));
    }
    // Direct at a size the kernel refuses: skipped, not run buffered.
    c.begin_case(Duration::from_millis(50));
    match DiskBenchmark::new(Kind::SeqWrite, o.clone()).run(&mut c, &cases[3]) {
        Err(sysgauge_core::BenchError::Skip { reason, .. }) => {
            assert!(reason.contains("direct I/O is impossible"), "{reason}")
        }
        other => panic!("expected a skip, got {other:?}"),
    }
    let _ = c.take_case_output();
    c.end_session();
}

/// The queue-depth job is direct only: at a block size the kernel refuses
/// direct it is skipped with the other direct cases' reason (it used to
/// wait forever for completions it had already reaped), and leaves the
/// test file holding the pattern. On a thread, so a hang fails the test.
#[test]
fn randrw_at_a_size_direct_refuses_is_skipped_with_the_reason() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let o = options(dir.path(), 4 << 20);
        let mut c = ctx_in(dir.path(), 3);
        let mut reasons = Vec::new();
        for bs in [3u64, 1000] {
            c.begin_case(Duration::from_millis(50));
            let params = DiskBenchmark::new(Kind::RandRw, o.clone())
                .cases(&Plan {
                    profile: Profile::Tiny,
                    threads: 2,
                })
                .into_iter()
                .next()
                .map(|p| p.with("block_size", bs))
                .unwrap_or_default();
            let r = DiskBenchmark::new(Kind::RandRw, o.clone()).run(&mut c, &params);
            let _ = c.take_case_output();
            reasons.push(match r {
                Err(sysgauge_core::BenchError::Skip { reason, .. }) => reason,
                other => format!("not a skip: {other:?}"),
            });
        }
        let (_, out) = run_case(&mut c, &o, Kind::SeqRead, &block_size(1 << 20));
        c.end_session();
        let _ = tx.send((reasons, out.details.get_bool("verified")));
    });
    let (reasons, verified) = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("disk.randrw did not finish within 60 s"));
    assert_eq!(
        reasons,
        [
            "direct I/O is impossible here: block size 3B is not a multiple of 512 B",
            "direct I/O is impossible here: block size 1000B is not a multiple of 512 B",
        ]
    );
    assert_eq!(verified, Some(true));
}

#[test]
fn unaligned_block_size_falls_back_to_buffered_and_says_so() {
    // 1000 B cannot be written with O_DIRECT anywhere: the case falls back
    // to buffered I/O, and with a file smaller than RAM that is a trap.
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 2 << 20);
    let mut c = ctx_in(dir.path(), 3);
    for kind in [Kind::SeqWrite, Kind::SeqRead] {
        let (m, out) = run_case(&mut c, &o, kind, &block_size(1000));
        assert!(m[0].value() > 0.0);
        assert_eq!(out.params.get_bool("direct"), Some(false));
        let codes = codes(&out.findings);
        assert!(
            codes.contains(&traps::BUFFERED_FALLBACK.to_string()),
            "{codes:?}"
        );
        assert!(
            codes.contains(&traps::FILE_SMALLER_THAN_RAM.to_string()),
            "{codes:?}"
        );
    }
}

#[test]
fn tmpfs_target_is_reported_as_ram_backed() {
    let shm = Path::new("/dev/shm");
    let is_tmpfs = sysgauge_host::fs_info(shm).is_some_and(|f| f.ram_backed);
    if !sysgauge_testkit::require("/dev/shm as a tmpfs", is_tmpfs, "mount a tmpfs on /dev/shm") {
        return;
    }
    let o = options(shm, 2 << 20);
    let mut c = ctx_in(shm, 3);
    let (_, out) = run_case(&mut c, &o, Kind::SeqWrite, &block_size(64 << 10));
    let f = out
        .findings
        .iter()
        .find(|f| f.code == traps::RAM_BACKED)
        .unwrap_or_else(|| panic!("no ram-backed finding: {:?}", out.findings));
    assert_eq!(f.severity, sysgauge_core::Severity::Critical);
    assert!(f.remedy.as_deref().unwrap_or("").contains("--path"));
    assert_eq!(out.details.get_bool("ram_backed"), Some(true));
    c.end_session();
}

#[test]
fn block_size_below_the_physical_block_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let dev = sysgauge_host::fs_info(dir.path())
        .and_then(|f| f.block_device)
        .and_then(|d| sysgauge_host::block_device(&d));
    let Some(phys) = dev.as_ref().and_then(|d| d.physical_block_size) else {
        eprintln!("note: the temp dir has no block device with a known block size; skipped");
        return;
    };
    if phys <= 512 {
        eprintln!("note: the temp dir's device has 512 B physical blocks; skipped");
        return;
    }
    let o = options(dir.path(), 1 << 20);
    let mut c = ctx_in(dir.path(), 1);
    let (_, out) = run_case(&mut c, &o, Kind::SeqWrite, &block_size(512));
    assert!(
        codes(&out.findings).contains(&traps::BLOCK_BELOW_DEVICE.to_string()),
        "{:?}",
        out.findings
    );
}

#[test]
fn cases_follow_mode() {
    let plan = Plan {
        profile: Profile::Quick,
        threads: 2,
    };
    let count = |o: &DiskOptions| -> Vec<(String, usize)> {
        benchmarks(&Arc::new(o.clone()))
            .iter()
            .map(|b| (b.id().to_string(), b.cases(&plan).len()))
            .filter(|(_, n)| *n > 0)
            .collect()
    };
    let slice = count(&DiskOptions::default());
    assert_eq!(
        slice,
        vec![
            ("disk.seq-write".to_string(), 1),
            ("disk.seq-read".to_string(), 1),
            ("disk.random-seek".to_string(), 1),
            ("disk.create".to_string(), 1),
        ]
    );
    let raw = count(&DiskOptions {
        device: Some(raw::RawTarget {
            path: "/dev/loop7".into(),
            force: false,
            destroy_data: true,
        }),
        ..DiskOptions::default()
    });
    assert_eq!(raw, vec![("disk.raw-write".to_string(), 4)]);
    let custom = DiskOptions {
        full_suite: true,
        block_sizes: Some(vec![8192]),
        ..DiskOptions::default()
    };
    let b = DiskBenchmark::new(Kind::SeqWrite, Arc::new(custom));
    assert_eq!(b.cases(&plan), vec![block_size(8192)]);
}

#[test]
fn raw_write_refuses_without_destroy_data() {
    let o = Arc::new(DiskOptions {
        device: Some(raw::RawTarget {
            path: "/dev/loop7".into(),
            force: false,
            destroy_data: false,
        }),
        ..DiskOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx_in(dir.path(), 1);
    let b = DiskBenchmark::new(Kind::RawWrite, o);
    let r = b.run(&mut c, &block_size(4096));
    assert!(
        matches!(&r, Err(BenchError::Failed(m)) if m.contains("--destroy-data")),
        "{r:?}"
    );
}

#[test]
fn cancellation_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 2 << 20);
    let mut c = ctx_in(dir.path(), 3);
    c.cancel_token().cancel();
    let b = DiskBenchmark::new(Kind::Create, o);
    let r = b.run(&mut c, &Params::new().with("order", "random"));
    assert!(matches!(r, Err(BenchError::Cancelled)), "{r:?}");
    c.end_session();
    let left = std::fs::read_dir(dir.path())
        .map(|rd| rd.count())
        .unwrap_or(0);
    assert_eq!(left, 0);
}
