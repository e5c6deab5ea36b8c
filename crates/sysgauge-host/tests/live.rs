//! Collects the machine the tests run on. Its facts are unknown in advance,
//! so this checks what every Linux machine has (CPUs, memory, /proc), that
//! nothing panics, and that the live-only readers agree with each other.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::time::Duration;
use sysgauge_host::{
    available_memory_bytes, block_device, collect_live, facts_table, free_space_bytes, fs_info,
    read_dirty_writeback, read_diskstats, wait_for_writeback,
};

#[test]
fn live_machine_collects_without_panicking() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let host = collect_live(Some(scratch.path()));
    assert!(
        host.cpu.threads.is_some_and(|t| t >= 1),
        "threads: {:?}",
        host.cpu.threads
    );
    assert!(host.memory.total_bytes.is_some_and(|m| m > 0));
    assert!(
        host.cpu.architecture.is_some(),
        "uname always names the machine"
    );
    assert_eq!(host.cpu.userland_bits, Some(usize::BITS));
    assert!(host.os.kernel_release.is_some());
    assert!(host.hostname.is_some());
    assert!(host.load.boot_time.is_some());
    let fs = host.storage.scratch.as_ref().expect("scratch fs");
    assert!(fs.fs_type.is_some());
    assert!(fs.total_bytes.is_some_and(|t| t > 0));
    let rows = facts_table(&host);
    assert!(rows
        .iter()
        .all(|(label, value)| !label.is_empty() && !value.is_empty()));
}

#[test]
fn live_readers() {
    let scratch = tempfile::tempdir().expect("temp dir");
    assert!(available_memory_bytes().is_some_and(|b| b > 0));
    assert!(free_space_bytes(scratch.path()).is_some());
    assert!(free_space_bytes(&scratch.path().join("missing")).is_none());
    assert!(read_dirty_writeback().is_some());
    let stats = read_diskstats().expect("/proc/diskstats");
    assert!(!stats.is_empty());
    let not_yet = fs_info(&scratch.path().join("not/made/yet")).expect("fs info of a future path");
    assert!(
        not_yet.total_bytes.is_some(),
        "space comes from the nearest existing ancestor"
    );
    let fs = fs_info(scratch.path()).expect("fs info");
    if let Some(disk) = &fs.block_device {
        let dev = block_device(disk).expect("the scratch disk is in /sys/block");
        assert_eq!(&dev.name, disk);
    }
    assert_eq!(block_device("no-such-disk"), None);
    assert_eq!(block_device("../../etc"), None);
}

#[test]
fn writeback_wait_after_writing_a_file() {
    let scratch = tempfile::tempdir().expect("temp dir");
    std::fs::write(scratch.path().join("f"), vec![7u8; 4 << 20]).expect("write 4 MiB");
    // Other builds share this machine and keep dirtying pages, so the
    // threshold is generous: the point is that sync + polling ends, within
    // its bound, with the readings filled in.
    let report = wait_for_writeback(Duration::from_secs(30), 512 << 20, || false);
    assert!(report.waited <= Duration::from_secs(31));
    assert!(report.dirty_before.is_some() && report.dirty_after.is_some());
    assert!(report.drained, "{report:?}");
}
