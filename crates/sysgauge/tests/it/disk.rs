//! `sysgauge disk` driven as a user would: the file-system tests on a temp
//! directory, the tmpfs trap on /dev/shm, and raw device mode on loop
//! devices over files in a temp directory (root and util-linux needed):
//! what it refuses (relative names, non-devices, mounted devices and
//! partitions, swap, device-mapper holders, signatures, two signatures
//! even with --force), what it explains without --destroy-data, and the
//! read-modify-write trap made real by a loop device with 4 KiB sectors
//! written in 512-byte blocks.
//!
//! Every loop device, mount, swap and device-mapper target a test creates
//! is undone by a guard's Drop, also when the test fails.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{
    loop_devices, run_bounded, run_status_and_results, stderr_of, stdout_of, Outcome, Sandbox,
    Tmpfs,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use sysgauge_core::{ResultRecord, RunRecord, Status};
use sysgauge_testkit::{output_of_success, Interrupt};

/// The turn of a raw-device test (they share the loop devices, one at a
/// time), when it can run: root, the programs exist, and loop devices do.
/// None when it cannot (after the skip-or-fail rule).
fn loop_device_turn(programs: &[&str]) -> Option<std::sync::MutexGuard<'static, ()>> {
    let turn = loop_devices();
    let root = sysgauge_testkit::is_root();
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| sysgauge_core::bench::find_program(p).is_none())
        .collect();
    let loop_ok = Path::new("/dev/loop-control").exists();
    sysgauge_testkit::require(
        &format!(
            "raw-device tests cannot run: root={root}, missing programs {missing:?}, \
             /dev/loop-control={loop_ok}"
        ),
        root && missing.is_empty() && loop_ok,
        "run as root with util-linux and loop devices",
    )
    .then_some(turn)
}

/// A loop device over a file, detached on drop.
struct LoopDev {
    dev: PathBuf,
}

impl LoopDev {
    fn attach(file: &Path, sector: Option<u32>, partscan: bool) -> LoopDev {
        let mut c = Command::new("losetup");
        c.args(["--find", "--show"]);
        if let Some(s) = sector {
            c.args(["--sector-size", &s.to_string()]);
        }
        if partscan {
            c.arg("--partscan");
        }
        let out = output_of_success(c.arg(file));
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        assert!(dev.to_string_lossy().starts_with("/dev/loop"), "{dev:?}");
        LoopDev { dev }
    }

    fn path(&self) -> &str {
        self.dev.to_str().unwrap_or_else(|| panic!("loop path"))
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        // Detaching is deferred while anyone still has the device open;
        // check that it went, and try again for a while if not.
        let name = self
            .dev
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let backing = PathBuf::from(format!("/sys/block/{name}/loop/backing_file"));
        for _ in 0..50 {
            let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
            if !backing.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("warning: {} is still attached", self.dev.display());
    }
}

/// Undo something on drop (umount, swapoff, dmsetup remove).
struct Undo(Vec<String>);

impl Drop for Undo {
    fn drop(&mut self) {
        if let Some((prog, args)) = self.0.split_first() {
            let _ = Command::new(prog).args(args).status();
        }
    }
}

fn blank_image(dir: &Path, name: &str, size: u64) -> PathBuf {
    let p = dir.join(name);
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(size).unwrap();
    p
}

fn raw_cmd(sb: &Sandbox, dev: &str) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.args([
        "disk",
        "--profile",
        "tiny",
        "--repetitions",
        "3",
        "--no-store",
        "--device",
        dev,
    ]);
    c
}

/// A loop device with 4 KiB logical blocks over a blank 32 MiB image:
/// (the image's directory when it is not the sandbox, image, device). The
/// image lives on /dev/shm where there is one, so the device's flushes end
/// in memory: rates then compare block sizes, not the host disk's stalls
/// under the other tests' I/O. Bound in this order, the device is
/// detached before its directory goes.
fn four_k_device(sb: &Sandbox) -> (Option<tempfile::TempDir>, PathBuf, LoopDev) {
    let shm = Path::new("/dev/shm");
    let backing = shm.is_dir().then(|| tempfile::tempdir_in(shm).unwrap());
    let dir = backing.as_ref().map_or(sb.path(), |d| d.path());
    let img = blank_image(dir, "4k.img", 32 << 20);
    let lo = LoopDev::attach(&img, Some(4096), false);
    (backing, img, lo)
}

/// A raw run that writes `dev` (`--destroy-data`) in `block_sizes` within
/// `size`, with `extra` options, and succeeds: the record it printed
/// (`--json -`) and its output.
fn destructive_run(
    sb: &Sandbox,
    dev: &str,
    block_sizes: &str,
    size: &str,
    extra: &[&str],
) -> (RunRecord, std::process::Output) {
    let out = raw_cmd(sb, dev)
        .args([
            "--destroy-data",
            "--block-size",
            block_sizes,
            "--size",
            size,
        ])
        .args(extra)
        .args(["--json", "-"])
        .exits_with(0);
    (parse_run(&out), out)
}

fn parse_run(out: &std::process::Output) -> RunRecord {
    serde_json::from_str(&stdout_of(out))
        .unwrap_or_else(|e| panic!("{e}\nstderr:\n{}", stderr_of(out)))
}

fn find_in<'a>(run: &'a RunRecord, id: &str, block: u64, io: &str) -> &'a ResultRecord {
    run.results
        .iter()
        .find(|r| {
            r.bench_id == id
                && r.params.get_u64("block_size") == Some(block)
                && r.params.get_bool("direct") == Some(io == "direct")
        })
        .unwrap_or_else(|| panic!("no {id} at {block} {io}"))
}

fn rate(r: &ResultRecord) -> f64 {
    r.primary().map(|m| m.value()).unwrap_or(0.0)
}

fn has(r: &ResultRecord, code: &str) -> bool {
    r.findings.iter().any(|f| f.code == code)
}

#[test]
fn filesystem_suite_runs_and_is_stored() {
    let sb = Sandbox::new();
    let target = sb.scratch();
    let out = sb
        .cmd()
        .args(["disk", "--profile", "tiny", "--repetitions", "3", "--db"])
        .arg(sb.db())
        .args(["--size", "4MiB", "--path"])
        .arg(&target)
        .args(["--json", "-"])
        .exits_with(0);
    let run = parse_run(&out);
    assert_eq!(run.command, "disk");
    // 3 sizes × 3 block tests × 2 I/O modes (/tmp takes O_DIRECT), putc,
    // getc, 2 seek cases, 4 queue-depth cases, 3 × 2 file cases.
    assert_eq!(run.results.len(), 32);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{} {}", r.bench_id, r.params);
        let names: Vec<&str> = r.metrics.iter().map(|m| m.name.as_str()).collect();
        if r.bench_id == "disk.randrw" {
            assert_eq!(r.params.get_u64("iodepth"), Some(64));
            assert_eq!(r.params.get_u64("numjobs"), Some(2));
            assert!(names.contains(&"read_iops") && names.contains(&"write_latency_p99"));
            continue;
        }
        assert_eq!(
            &names[1..],
            ["latency_median", "latency_p99", "latency_max"],
            "{}",
            r.bench_id
        );
    }
    // The host facts describe the file system under test.
    let scratch = run.host.storage.scratch.as_ref().map(|s| s.path.clone());
    assert_eq!(scratch.as_deref(), target.to_str());
    // Human output goes to stderr with --json -, and names the target.
    let err = stderr_of(&out);
    assert!(err.contains("Target: "), "{err}");
    assert!(err.contains("lat p99"), "{err}");
    // The YABS-shaped table of the queue-depth cases.
    assert!(err.contains("Mixed R/W 50/50"), "{err}");
    for bs in ["4k", "64k", "512k", "1m"] {
        assert!(
            err.lines().any(|l| l.trim_start().starts_with(bs)),
            "{bs}: {err}"
        );
    }
    // Nothing is left in the target directory.
    assert_eq!(
        std::fs::read_dir(&target).map(|r| r.count()).unwrap_or(9),
        0
    );
}

/// The queue-depth job at block sizes direct I/O cannot take (3 B and
/// 1000 B: not multiples of 512) is skipped with the other direct cases'
/// reason, and the run ends complete: it used to wait forever for
/// completions, stuck in `running`. Killed and failed past a minute.
#[test]
fn randrw_at_sizes_direct_refuses_is_skipped_not_hung() {
    let sb = Sandbox::new();
    let mut cmd = sb.std_cmd();
    cmd.args(["disk", "--profile", "tiny", "--only", "disk.randrw"])
        .args(["--block-size", "3,1000", "--db"])
        .arg(sb.db())
        .arg("--path")
        .arg(sb.scratch())
        .args(["--json", "-"]);
    let out = run_bounded(cmd, std::time::Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let run = parse_run(&out);
    assert_eq!(run.results.len(), 2, "{}", stderr_of(&out));
    for (r, bs) in run.results.iter().zip(["3B", "1000B"]) {
        assert_eq!(r.bench_id, "disk.randrw");
        // The params of the case it stands for, `direct` included.
        assert_eq!(r.params.get_bool("direct"), Some(true), "{:?}", r.params);
        match &r.status {
            Status::Skipped { reason, .. } => assert_eq!(
                reason,
                &format!(
                    "direct I/O is impossible here: block size {bs} is not a multiple of 512 B"
                )
            ),
            other => panic!("{bs}: {other:?}"),
        }
    }
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let (status, n) = run_status_and_results(&conn);
    assert_eq!((status.as_str(), n), ("complete", 2));
}

#[test]
fn tmpfs_target_is_flagged() {
    let shm = Path::new("/dev/shm");
    if !sysgauge_testkit::require(
        "/dev/shm is missing",
        shm.is_dir(),
        "mount a tmpfs at /dev/shm",
    ) {
        return;
    }
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["disk", "--profile", "tiny", "--no-store", "--size", "2MiB"])
        .args([
            "--only",
            "disk.seq-write",
            "--block-size",
            "64KiB",
            "--io",
            "buffered",
            "--path",
            "/dev/shm",
        ])
        .args(["--json", "-"])
        .exits_with(0);
    let run = parse_run(&out);
    assert_eq!(run.results.len(), 1);
    assert!(
        has(&run.results[0], "ram-backed-target"),
        "{:?}",
        run.results[0].findings
    );
    assert!(stderr_of(&out).contains("RAM-backed"));
}

#[test]
fn bad_arguments_exit_2() {
    let sb = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&["--device", "sda"], "/dev"),
        (&["--device", "/dev/null"], "not a block device"),
        (&["--device", "/dev/sysgauge-none"], "/dev/sysgauge-none"),
        (&["--destroy-data"], "--device"),
        (&["--size", "12Q"], "--size"),
        (&["--block-size", "0"], "--block-size"),
        (&["--block-size", "4K,1G"], "--block-size"),
        (&["--size", "1MiB", "--block-size", "4MiB"], "smaller than"),
        (&["--path", "/nonexistent-sysgauge"], "--path"),
        (&["--only", "hash.nope"], "--only"),
    ];
    for (args, needle) in cases {
        sb.cmd()
            .args(["disk", "--no-store", "--profile", "tiny"])
            .args(*args)
            .usage_error(needle);
    }
}

/// A test file that cannot fit (`--size 99999T`, or a file system too
/// small for even the smallest one) is refused before anything runs, as
/// mem's impossible `--size` is: it used to skip every case, exit 0 and
/// store a complete run of nothing.
#[test]
fn a_test_file_that_cannot_fit_is_refused_before_anything_runs() {
    let sb = Sandbox::new();
    sb.tiny("disk")
        .args(["--only", "seq-write", "--size", "99999T", "--path"])
        .arg(sb.scratch())
        .usage_error("the test file does not fit on the file system of");
    assert!(!sb.db().exists(), "nothing may be stored");
    // A small tmpfs: less free space than must stay free (128 MiB).
    let small = sb.path().join("small");
    let Some(_tmpfs) = Tmpfs::mount(&small, "size=8m") else {
        return;
    };
    let out = sb
        .tiny("disk")
        .args(["--only", "seq-write", "--path"])
        .arg(&small)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("not enough free space for a test file") && err.contains("--path"),
        "{err}"
    );
    assert!(!sb.db().exists(), "nothing may be stored");
}

#[test]
fn raw_mode_explains_and_writes_nothing_without_destroy_data() {
    let Some(_turn) = loop_device_turn(&["losetup"]) else {
        return;
    };
    let sb = Sandbox::new();
    let img = blank_image(sb.path(), "blank.img", 16 << 20);
    let lo = LoopDev::attach(&img, None, false);
    let out = raw_cmd(&sb, lo.path()).exits_with(2);
    let err = stderr_of(&out);
    assert!(err.contains("would write"), "{err}");
    assert!(err.contains("--destroy-data"), "{err}");
    assert!(err.contains("256B, 512B, 4KiB, 1MiB"), "{err}");
    drop(lo);
    let data = std::fs::read(&img).unwrap();
    assert!(data.iter().all(|&b| b == 0), "the device was written to");
}

/// A `--size` the device cannot hold is refused, naming both sizes, with
/// or without --destroy-data: writing less would be another workload than
/// the one asked for. Nothing is written.
#[test]
fn raw_mode_refuses_a_size_larger_than_the_device() {
    let Some(_turn) = loop_device_turn(&["losetup"]) else {
        return;
    };
    let sb = Sandbox::new();
    let img = blank_image(sb.path(), "small.img", 4 << 20);
    let lo = LoopDev::attach(&img, None, false);
    for extra in [&["--destroy-data"][..], &[]] {
        let out = raw_cmd(&sb, lo.path())
            .args(["--size", "64MiB", "--block-size", "1MiB"])
            .args(extra)
            .usage_error("less than --size 64 MiB");
        let err = stderr_of(&out);
        assert!(err.contains("holds 4 MiB"), "{err}");
        assert!(!err.contains("would write"), "{err}");
    }
    drop(lo);
    let data = std::fs::read(&img).unwrap();
    assert!(data.iter().all(|&b| b == 0), "the device was written to");
}

#[test]
fn raw_mode_shows_read_modify_write_on_4k_sectors() {
    let Some(_turn) = loop_device_turn(&["losetup"]) else {
        return;
    };
    let sb = Sandbox::new();
    let (_shm, img, lo) = four_k_device(&sb);
    // The read-modify-write finding weighs the device's reads against the
    // writes that reached it, counted for the whole device while other
    // tests run beside this one; one of three runs must show it, and a
    // failure names every run's counts.
    let mut missed = Vec::new();
    let run = loop {
        let (run, _) = destructive_run(&sb, lo.path(), "512,1MiB", "8MiB", &[]);
        let small = find_in(&run, "disk.raw-write", 512, "buffered");
        if has(small, "read-modify-write") || missed.len() == 2 {
            break run;
        }
        missed.push(format!("{:?}", small.details));
    };
    let small = find_in(&run, "disk.raw-write", 512, "buffered");
    assert_eq!(small.status, Status::Ok);
    assert_eq!(small.params.get_bool("direct"), Some(false));
    assert_eq!(small.details.get_u64("logical_block_size"), Some(4096));
    assert!(
        has(small, "block-size-below-device"),
        "{:?}",
        small.findings
    );
    assert!(
        has(small, "read-modify-write"),
        "{:?}\ndetails of this run: {:?}\nof the runs before: {missed:?}",
        small.findings,
        small.details
    );
    assert!(small.details.get_u64("device_reads").unwrap_or(0) > 0);
    let big = find_in(&run, "disk.raw-write", 1 << 20, "direct");
    assert_eq!(big.params.get_bool("direct"), Some(true));
    assert!(!has(big, "read-modify-write"), "{:?}", big.findings);
    assert!(!has(big, "block-size-below-device"));
    // What was written is the test pattern, and only within --size.
    drop(lo);
    let data = std::fs::read(&img).unwrap();
    assert!(data[..4096].iter().any(|&b| b != 0));
    assert!(data[8 << 20..].iter().all(|&b| b == 0), "wrote past --size");
}

/// The write-up's table: 512 B, 1 KiB and 4 KiB on a device with 4 KiB
/// logical blocks, every size buffered and every size direct. In each mode
/// the sizes below the block are the slow ones, and the sweep's finding
/// names them, comparing within the mode.
#[test]
fn raw_sweep_in_each_mode_shows_the_sub_sector_sizes_slow() {
    let Some(_turn) = loop_device_turn(&["losetup"]) else {
        return;
    };
    let sb = Sandbox::new();
    let (_shm, _img, lo) = four_k_device(&sb);
    let sweep = || destructive_run(&sb, lo.path(), "512,1024,4096", "4MiB", &[]);
    // Where the sub-sector sizes were not slower: a rate is a measurement,
    // and a neighbour's CPU can stall the whole-block case of one run; one
    // of three runs must then show it.
    let not_slower = |run: &RunRecord| -> Vec<String> {
        let mut found = Vec::new();
        for io in ["buffered", "direct"] {
            let whole = rate(find_in(run, "disk.raw-write", 4096, io));
            for b in [512, 1024] {
                let sub = rate(find_in(run, "disk.raw-write", b, io));
                if sub >= whole {
                    found.push(format!("{io}: {b} B at {sub} MB/s, 4 KiB at {whole}"));
                }
            }
        }
        found
    };
    let (mut run, mut out) = sweep();
    for _ in 0..2 {
        if not_slower(&run).is_empty() {
            break;
        }
        (run, out) = sweep();
    }
    let found = not_slower(&run);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(run.results.len(), 6);
    for io in ["buffered", "direct"] {
        let whole = find_in(&run, "disk.raw-write", 4096, io);
        assert_eq!(whole.params.get_bool("direct"), Some(io == "direct"));
        for b in [512, 1024] {
            let sub = find_in(&run, "disk.raw-write", b, io);
            assert_eq!(sub.status, Status::Ok, "{b} {io}");
            assert!(has(sub, "block-size-below-device"));
        }
        let f = whole
            .findings
            .iter()
            .find(|f| f.code == "read-modify-write-sizes")
            .unwrap_or_else(|| panic!("{io}: {:?}", whole.findings));
        assert!(
            f.message
                .starts_with(&format!("{io} writes: 512 B, 1 KiB below")),
            "{}",
            f.message
        );
    }
    // Direct below the block is whole-block read-modify-write, said so.
    let rmw = find_in(&run, "disk.raw-write", 512, "direct");
    assert_eq!(
        rmw.details.get_str("io_mode"),
        Some("direct+read-modify-write")
    );
    assert!(stderr_of(&out).contains("512B direct (rmw)"));
    // --io buffered: one mode only.
    let (run, _) = destructive_run(&sb, lo.path(), "512,4096", "1MiB", &["--io", "buffered"]);
    let modes: Vec<Option<bool>> = run
        .results
        .iter()
        .map(|r| r.params.get_bool("direct"))
        .collect();
    assert_eq!(modes, [Some(false), Some(false)]);
}

#[test]
fn raw_mode_refuses_signatures_unless_forced() {
    let Some(_turn) = loop_device_turn(&["losetup", "mkswap"]) else {
        return;
    };
    let sb = Sandbox::new();
    let img = blank_image(sb.path(), "swap.img", 16 << 20);
    output_of_success(Command::new("mkswap").arg("-q").arg(&img));
    let lo = LoopDev::attach(&img, None, false);
    let out = raw_cmd(&sb, lo.path()).arg("--destroy-data").exits_with(2);
    let err = stderr_of(&out);
    assert!(err.contains("carries data (swap"), "{err}");
    assert!(err.contains("--force"), "{err}");
    raw_cmd(&sb, lo.path())
        .args([
            "--destroy-data",
            "--force",
            "--block-size",
            "4KiB",
            "--size",
            "1MiB",
        ])
        .exits_with(0);
}

/// ext4 with a cramfs magic written over its (unused) first bytes: blkid
/// sees two file systems and answers "ambivalent" (exit 8). `--force`
/// overrides one known signature, never this; the message says why.
#[test]
fn raw_mode_refuses_an_ambivalent_device_even_when_forced() {
    let Some(_turn) = loop_device_turn(&["losetup", "mkfs.ext4", "blkid"]) else {
        return;
    };
    let sb = Sandbox::new();
    let img = blank_image(sb.path(), "two.img", 16 << 20);
    output_of_success(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img));
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
        f.write_at(&0x28cd_3d45u32.to_le_bytes(), 0).unwrap();
    }
    let lo = LoopDev::attach(&img, None, false);
    let blkid = Command::new("blkid")
        .args(["-p", lo.path()])
        .output()
        .unwrap();
    assert_eq!(blkid.status.code(), Some(8), "{}", stderr_of(&blkid));
    let before = std::fs::read(&img).unwrap();
    for flags in [
        &["--destroy-data", "--force"][..],
        &["--destroy-data"][..],
        &["--force"][..],
    ] {
        let out = raw_cmd(&sb, lo.path())
            .args(flags)
            .args(["--block-size", "4KiB", "--size", "1MiB"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = stderr_of(&out);
        assert!(err.contains("more than one signature"), "{flags:?}: {err}");
        assert!(err.contains("ambivalent"), "{err}");
        assert!(err.contains("--force does not apply"), "{err}");
        assert!(err.contains("ext2/3/4") && err.contains("cramfs"), "{err}");
    }
    drop(lo);
    assert!(
        std::fs::read(&img).unwrap() == before,
        "the image was written"
    );
}

#[test]
fn raw_mode_refuses_mounted_devices_and_swap() {
    let Some(_turn) = loop_device_turn(&[
        "losetup",
        "mkfs.ext4",
        "mount",
        "umount",
        "swapon",
        "swapoff",
        "mkswap",
    ]) else {
        return;
    };
    let sb = Sandbox::new();

    // A mounted ext4 (partitions, LVM and md holders are covered by a
    // captured-tree test: this machine's kernel has neither partition
    // tables nor device-mapper).
    let img = blank_image(sb.path(), "ext4.img", 32 << 20);
    let dev = LoopDev::attach(&img, None, false);
    output_of_success(Command::new("mkfs.ext4").args(["-q", "-F", dev.path()]));
    let mnt = sb.subdir("mnt");
    output_of_success(Command::new("mount").arg(dev.path()).arg(&mnt));
    let unmount = Undo(vec!["umount".into(), mnt.to_string_lossy().into_owned()]);
    let out = raw_cmd(&sb, dev.path())
        .args(["--destroy-data", "--force"])
        .exits_with(2);
    let err = stderr_of(&out);
    assert!(err.contains("is mounted on"), "{err}");
    assert!(err.contains(mnt.to_str().unwrap_or("?")), "{err}");
    drop(unmount);
    // Unmounted, the ext4 signature still refuses without --force.
    raw_cmd(&sb, dev.path())
        .arg("--destroy-data")
        .usage_error("ext2/3/4");

    // A device in use as swap.
    let simg = blank_image(sb.path(), "swapon.img", 16 << 20);
    let sdev = LoopDev::attach(&simg, None, false);
    output_of_success(Command::new("mkswap").args(["-q", sdev.path()]));
    output_of_success(Command::new("swapon").args(["-p", "0", sdev.path()]));
    let swapoff = Undo(vec!["swapoff".into(), sdev.path().to_string()]);
    raw_cmd(&sb, sdev.path())
        .args(["--destroy-data", "--force"])
        .usage_error("in use as swap");
    drop(swapoff);
}

#[test]
fn ctrl_c_stops_and_leaves_nothing_behind() {
    let sb = Sandbox::new();
    let target = sb.scratch();
    let run = sb.stopped_disk_run(Interrupt::after("[1/"), &target);
    run.assert_started_then_exited(130);
    let left: Vec<_> = std::fs::read_dir(&target)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    let out = sb.on_db("results").arg("list").output().unwrap();
    assert!(
        stdout_of(&out).contains("interrupted"),
        "{}",
        stdout_of(&out)
    );
}
