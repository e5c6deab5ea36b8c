//! The traps of disk measurement, each detected and reported as a finding
//! with a remedy:
//!
//! - dirty pages still being written back when a test starts (the test
//!   competes with write-behind): flushed and waited for first, the wait
//!   reported;
//! - a RAM-backed target (tmpfs, ramfs, zram, brd): the numbers are memory;
//! - a block size below the device's logical or physical block size;
//! - read requests on the device during a pure write test: the sign of
//!   read-modify-write, seen in /proc/diskstats;
//! - a test file smaller than RAM without direct I/O: the page cache can
//!   answer instead of the device;
//! - other processes doing I/O on the same device during the test, which is
//!   what usually makes disk numbers noisy.
//!
//! The decision functions are pure so unit tests can drive them with
//! numbers; the live probes (meminfo, diskstats) are thin wrappers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::size::Bytes;
use sysgauge_core::{Finding, Profile, RunCtx, Severity};
use sysgauge_family::util::by_profile;
use sysgauge_host::{DiskStats, DiskStatsDelta};

pub const DIRTY_PAGES: &str = "dirty-pages";
pub const RAM_BACKED: &str = "ram-backed-target";
pub const BLOCK_BELOW_DEVICE: &str = "block-size-below-device";
pub const READ_MODIFY_WRITE: &str = "read-modify-write";
pub const FILE_SMALLER_THAN_RAM: &str = "file-smaller-than-ram";
pub const BUFFERED_FALLBACK: &str = "buffered-io";
pub const DISK_SHARED: &str = "disk-shared";
pub const WRITE_CACHE: &str = "write-cache";
pub const RMW_SIZES: &str = "read-modify-write-sizes";

/// Direct writes this many times faster than direct reads of the same file
/// are not the device's speed: writes on disks and SSDs are at best about
/// as fast as reads, so a cache acknowledged them before they were stored.
pub const WRITE_CACHE_RATIO: f64 = 2.0;

/// Dirty + Writeback below this counts as settled.
const SETTLED_BYTES: u64 = 16 << 20;
/// Dirty + Writeback at or above this before a test is reported.
const REPORT_DIRTY_BYTES: u64 = 32 << 20;

/// The longest the writeback wait may take per case: bounded so a machine
/// whose other programs keep writing cannot stall a quick run; the finding
/// then says the test competed with write-behind.
pub fn max_writeback_wait(profile: Profile) -> Duration {
    Duration::from_secs(by_profile(profile, [2, 5, 20, 60]))
}

/// Flush the kernel's dirty pages and wait (bounded) until they are
/// written, before a test starts. Reports the wait as a detail always, and
/// as a finding when there was something substantial to wait for.
pub fn settle_writeback(ctx: &mut RunCtx, bench_id: &str) {
    // The wait ends when the pages are down to a trickle, or when a sync(2)
    // started here returns: then everything dirty when the test was about
    // to start is on the device, and whatever is dirty now was written by
    // other programs since (a busy machine keeps some dirty all the time).
    let synced = Arc::new(AtomicBool::new(false));
    let flag = synced.clone();
    let started = std::thread::Builder::new()
        .name("sysgauge-disk-sync".to_string())
        .spawn(move || {
            rustix::fs::sync();
            flag.store(true, Ordering::SeqCst);
        })
        .is_ok();
    let cancel = ctx.cancel_token().clone();
    let done = synced.clone();
    let report = sysgauge_host::wait_for_writeback(
        max_writeback_wait(ctx.profile()),
        SETTLED_BYTES,
        move || cancel.is_cancelled() || (started && done.load(Ordering::SeqCst)),
    );
    let flushed = report.drained || synced.load(Ordering::SeqCst);
    let waited_ms = u64::try_from(report.waited.as_millis()).unwrap_or(u64::MAX);
    ctx.note_detail("writeback_wait_ms", waited_ms);
    if let Some(f) = dirty_finding(
        bench_id,
        report.dirty_before,
        report.dirty_after,
        report.waited,
        flushed,
    ) {
        ctx.finding(f);
    }
}

/// The dirty-pages finding, if the numbers call for one.
pub fn dirty_finding(
    bench_id: &str,
    before: Option<u64>,
    after: Option<u64>,
    waited: Duration,
    drained: bool,
) -> Option<Finding> {
    let before = before?;
    if before < REPORT_DIRTY_BYTES && drained {
        return None;
    }
    let f = if drained {
        Finding::new(
            DIRTY_PAGES,
            Severity::Info,
            format!(
                "{} of dirty pages were waiting to be written when {bench_id} started; \
                 sysgauge flushed them and waited {:.1} s before measuring",
                Bytes(before),
                waited.as_secs_f64()
            ),
        )
    } else {
        Finding::new(
            DIRTY_PAGES,
            Severity::Warning,
            format!(
                "{} of dirty pages were waiting to be written when {bench_id} started and {} \
                 were still pending after {:.1} s; the test competed with write-behind and \
                 its numbers may be low",
                Bytes(before),
                Bytes(after.unwrap_or(0)),
                waited.as_secs_f64()
            ),
        )
    };
    Some(f.with_remedy(
        "let large writes finish before measuring (run `sync` and wait); stop programs that \
         keep writing (see `sysgauge procs`)",
    ))
}

/// Direct writes ran far faster than direct reads of the same file: the
/// finding, naming the likely cache (the hypervisor's on a virtual
/// machine, else a RAID controller's or the drive's own), and the reason
/// that marks the case as not a measure of the device.
pub fn write_cache_finding(
    id: &str,
    write_mbps: f64,
    read_mbps: f64,
    virtualization: Option<&str>,
) -> Option<(Finding, String)> {
    if !(read_mbps > 0.0 && write_mbps > WRITE_CACHE_RATIO * read_mbps) {
        return None;
    }
    let cache = match virtualization {
        Some(v) => format!("the hypervisor's ({v}) write cache"),
        None => "a write-back cache (a RAID controller's, or the drive's own)".to_string(),
    };
    let reason = format!(
        "O_DIRECT writes ran at {write_mbps:.0} MB/s, {:.1}× the {read_mbps:.0} MB/s read back from the same file: {cache} absorbed them",
        write_mbps / read_mbps
    );
    let f = Finding::new(WRITE_CACHE, Severity::Warning, format!("{id}: {reason}"))
        .with_remedy(
            "the write figure is the cache's, not the disk's: it is left out of the index; on a VM ask for a disk without host caching (cache=none / writethrough), on a RAID controller compare with its cache disabled",
        );
    Some((f, reason))
}

/// The target lives in memory.
pub fn ram_backed_finding(what: &str) -> Finding {
    Finding::new(
        RAM_BACKED,
        Severity::Critical,
        format!("the target {what} is RAM-backed: these numbers measure memory, not a disk"),
    )
    .with_remedy("pass --path to a directory on the disk you mean to test (see `df DIR`)")
}

/// The block size is below the device's logical or physical block size.
pub fn block_size_finding(
    block: u64,
    device: &str,
    logical: Option<u32>,
    physical: Option<u32>,
) -> Option<Finding> {
    let logical = logical.map(u64::from);
    let physical = physical.map(u64::from);
    let msg = match (logical, physical) {
        (Some(l), _) if block < l || !block.is_multiple_of(l) => format!(
            "block size {} is not a multiple of {device}'s logical block size {}: the device \
             cannot take such writes directly, so the kernel reads each block, changes it and \
             writes it back (read-modify-write), and direct I/O is impossible",
            Bytes(block),
            Bytes(l)
        ),
        (_, Some(p)) if block < p || !block.is_multiple_of(p) => format!(
            "block size {} is not a multiple of {device}'s physical block size {}: the device \
             reads, changes and writes back whole physical blocks inside (read-modify-write), \
             which often makes writes several times slower",
            Bytes(block),
            Bytes(p)
        ),
        _ => return None,
    };
    Some(
        Finding::new(BLOCK_BELOW_DEVICE, Severity::Warning, msg).with_remedy(format!(
            "use block sizes that are multiples of {}",
            Bytes(
                physical
                    .or(logical)
                    .unwrap_or(4096)
                    .max(logical.unwrap_or(0))
            )
        )),
    )
}

/// Read requests reached the device during a pure write test.
pub fn rmw_finding(
    bench_id: &str,
    delta: &DiskStatsDelta,
    bytes_written_by_test: u64,
    exclusive: bool,
) -> Option<Finding> {
    let read = delta.bytes_read();
    // A few metadata reads are normal; read-modify-write reads scale with
    // the data written (a whole block read for each one partly written):
    // compared with what the test wrote, or with what reached the device in
    // the same window (the page cache may still hold part of the test's
    // writes when the window closes; a block read for each block written
    // is the signature either way).
    let significant = delta.reads_completed >= 8
        && (read.saturating_mul(10) >= bytes_written_by_test
            || (delta.bytes_written() > 0 && read.saturating_mul(2) >= delta.bytes_written()));
    if !significant {
        return None;
    }
    let who = if exclusive {
        String::new()
    } else {
        " (on a shared device other processes' reads show up too; repeat on a quiet machine to tell)"
            .to_string()
    };
    Some(
        Finding::new(
            READ_MODIFY_WRITE,
            Severity::Warning,
            format!(
                "{bench_id} only writes, yet {} read requests ({}) reached {} while it wrote {}: \
                 the sign of read-modify-write{who}",
                delta.reads_completed,
                Bytes(read),
                delta.name,
                Bytes(bytes_written_by_test)
            ),
        )
        .with_remedy(
            "write in whole, aligned device blocks (block size a multiple of the physical block \
             size; see `lsblk -t`), or with direct I/O",
        ),
    )
}

/// A block-size sweep in one I/O mode: the sizes below (or not a multiple
/// of) the device's block size `floor` that wrote slower than the slowest
/// whole-block size of the same mode. `rows` are (block size, MB/s) of
/// that mode only; comparing across modes would compare the page cache
/// with the device.
pub fn rmw_sizes_finding(
    mode: &str,
    rows: &[(u64, f64)],
    floor: u64,
    device: &str,
) -> Option<Finding> {
    if floor == 0 {
        return None;
    }
    let whole = rows
        .iter()
        .filter(|(b, r)| b.is_multiple_of(floor) && *r > 0.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let slow: Vec<&(u64, f64)> = rows
        .iter()
        .filter(|(b, r)| !b.is_multiple_of(floor) && *r < whole.1)
        .collect();
    if slow.is_empty() {
        return None;
    }
    let names: Vec<String> = slow.iter().map(|(b, _)| Bytes(*b).to_string()).collect();
    let rates: Vec<String> = slow
        .iter()
        .map(|(b, r)| format!("{} at {:.1} MB/s ({:.2}×)", Bytes(*b), r, r / whole.1))
        .collect();
    Some(
        Finding::new(
            RMW_SIZES,
            Severity::Warning,
            format!(
                "{mode} writes: {} below {device}'s {} block wrote slower than {} did ({:.1} MB/s): {}; \
                 each such write reads the rest of its block first (read-modify-write)",
                names.join(", "),
                Bytes(floor),
                Bytes(whole.0),
                whole.1,
                rates.join(", ")
            ),
        )
        .with_remedy(format!(
            "write in multiples of {} (see `lsblk -t`); compare sizes within one --io mode",
            Bytes(floor)
        )),
    )
}

/// The file is smaller than RAM and direct I/O is unavailable.
pub fn small_file_finding(size: u64, mem_total: Option<u64>) -> Option<Finding> {
    let mem = mem_total?;
    if size >= mem {
        return None;
    }
    Some(
        Finding::new(
            FILE_SMALLER_THAN_RAM,
            Severity::Warning,
            format!(
                "direct I/O is not available here and the test file ({}) is smaller than RAM \
                 ({}): reads can come from the page cache instead of the device (sysgauge drops \
                 the file's cache before each read pass, which file systems may ignore)",
                Bytes(size),
                Bytes(mem)
            ),
        )
        .with_remedy(format!(
            "pass --size {}GiB or more (twice RAM), or test a file system that supports O_DIRECT",
            mem.saturating_mul(2).div_ceil(1 << 30)
        )),
    )
}

/// Direct I/O could not be used for this case.
pub fn buffered_finding(reason: &str) -> Finding {
    Finding::new(
        BUFFERED_FALLBACK,
        Severity::Info,
        format!(
            "direct I/O (O_DIRECT) was not possible ({reason}); this case used buffered I/O: \
             every write pass ends with fdatasync (timed) and the cached pages are dropped \
             (posix_fadvise DONTNEED) before every pass"
        ),
    )
    .with_remedy("compare only with results that also say direct=false")
}

/// The device did much more I/O than the test issued.
pub fn shared_finding(
    bench_id: &str,
    device: &str,
    device_bytes: u64,
    test_bytes: u64,
) -> Option<Finding> {
    let extra = device_bytes.saturating_sub(test_bytes);
    if extra < 16 << 20 || extra.saturating_mul(4) < test_bytes {
        return None;
    }
    Some(
        Finding::new(
            DISK_SHARED,
            Severity::Warning,
            format!(
                "{device} moved {} more than {bench_id} asked for: other processes were using \
                 the disk during the test, which makes disk numbers low and noisy",
                Bytes(extra)
            ),
        )
        .with_remedy("stop other disk users (builds, backups, indexers; see `iotop`) and rerun"),
    )
}

/// Snapshot of one device's counters, taken before a test.
pub struct StatsWatch {
    before: Option<DiskStats>,
}

impl StatsWatch {
    /// `device` is the kernel name as in /proc/diskstats (`vda`, `loop0`).
    pub fn start(device: Option<&str>) -> StatsWatch {
        StatsWatch {
            before: device.and_then(read_one),
        }
    }

    /// What changed since `start`.
    pub fn finish(&self) -> Option<DiskStatsDelta> {
        let before = self.before.as_ref()?;
        let after = read_one(&before.name)?;
        Some(after.delta(before))
    }
}

fn read_one(name: &str) -> Option<DiskStats> {
    sysgauge_host::read_diskstats()
        .ok()?
        .into_iter()
        .find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_pages_reported_only_when_substantial() {
        let d = Duration::from_millis(1500);
        assert!(dirty_finding("disk.x", Some(1 << 20), Some(0), d, true).is_none());
        assert!(dirty_finding("disk.x", None, None, d, true).is_none());
        let f = dirty_finding("disk.x", Some(512 << 20), Some(0), d, true)
            .unwrap_or_else(|| panic!("expected a finding"));
        assert_eq!(f.severity, Severity::Info);
        assert!(f.message.contains("512 MiB") && f.message.contains("1.5 s"));
        let g = dirty_finding("disk.x", Some(1 << 20), Some(900 << 20), d, false)
            .unwrap_or_else(|| panic!("expected a finding"));
        assert_eq!(g.severity, Severity::Warning);
    }

    #[test]
    fn block_sizes_against_device() {
        assert!(block_size_finding(4096, "vda", Some(512), Some(4096)).is_none());
        assert!(block_size_finding(1 << 20, "vda", Some(512), Some(4096)).is_none());
        let phys = block_size_finding(512, "vda", Some(512), Some(4096))
            .unwrap_or_else(|| panic!("expected"));
        assert!(phys.message.contains("physical"));
        let log = block_size_finding(512, "loop0", Some(4096), Some(4096))
            .unwrap_or_else(|| panic!("expected"));
        assert!(log.message.contains("logical"));
        assert!(block_size_finding(6144, "x", Some(512), Some(4096)).is_some());
        assert!(block_size_finding(256, "x", None, None).is_none());
    }

    #[test]
    fn reads_during_writes() {
        let mut d = DiskStatsDelta {
            name: "loop0".into(),
            reads_completed: 2048,
            sectors_read: 2048 * 8,
            ..Default::default()
        };
        let f =
            rmw_finding("disk.raw-write", &d, 8 << 20, true).unwrap_or_else(|| panic!("expected"));
        assert!(f.message.contains("2048 read requests"));
        assert!(!f.message.contains("shared device"));
        d.reads_completed = 3;
        d.sectors_read = 24;
        assert!(rmw_finding("disk.raw-write", &d, 8 << 20, true).is_none());
        // A little metadata reading during a big write is not the sign.
        d.reads_completed = 100;
        d.sectors_read = 100 * 8;
        d.sectors_written = (1 << 30) / 512;
        assert!(rmw_finding("disk.seq-write", &d, 1 << 30, false).is_none());
        // Part of the test's writes still cached when the window closed:
        // 162 blocks read for 162 written is the sign all the same.
        d.reads_completed = 162;
        d.sectors_read = 162 * 8;
        d.sectors_written = 162 * 8;
        assert!(rmw_finding("disk.raw-write", &d, 24 << 20, true).is_some());
    }

    #[test]
    fn sweep_names_the_slow_sub_block_sizes_within_a_mode() {
        let rows = [(512, 9.5), (1024, 18.0), (4096, 120.0), (1 << 20, 400.0)];
        let f = rmw_sizes_finding("direct", &rows, 4096, "loop0")
            .unwrap_or_else(|| panic!("expected a finding"));
        assert_eq!(f.code, RMW_SIZES);
        assert!(
            f.message
                .starts_with("direct writes: 512 B, 1 KiB below loop0's 4 KiB"),
            "{}",
            f.message
        );
        assert!(f.message.contains("0.08×"), "{}", f.message);
        // A sub-block size that is not slower is not named.
        let f = rmw_sizes_finding(
            "buffered",
            &[(512, 9.0), (1024, 300.0), (4096, 100.0)],
            4096,
            "x",
        )
        .unwrap_or_else(|| panic!("expected"));
        assert!(
            f.message.contains("512 B below") && !f.message.contains("1 KiB"),
            "{}",
            f.message
        );
        assert!(rmw_sizes_finding("direct", &[(512, 9.0)], 4096, "x").is_none());
        assert!(rmw_sizes_finding("direct", &[(4096, 9.0), (1 << 20, 90.0)], 4096, "x").is_none());
    }

    #[test]
    fn small_file_and_sharing() {
        assert!(small_file_finding(1 << 30, Some(8 << 30)).is_some());
        assert!(small_file_finding(16 << 30, Some(8 << 30)).is_none());
        assert!(small_file_finding(1, None).is_none());
        assert!(shared_finding("disk.seq-write", "vda", 300 << 20, 100 << 20).is_some());
        assert!(shared_finding("disk.seq-write", "vda", 101 << 20, 100 << 20).is_none());
    }

    #[test]
    fn writes_far_faster_than_reads_are_a_cache() {
        let (f, reason) = write_cache_finding("disk.seq-write", 7012.0, 1503.0, Some("kvm"))
            .unwrap_or_else(|| panic!("4.7× is a cache"));
        assert_eq!(f.code, WRITE_CACHE);
        assert!(
            reason.contains("7012 MB/s") && reason.contains("4.7×"),
            "{reason}"
        );
        assert!(reason.contains("hypervisor's (kvm)"), "{reason}");
        let (_, bare) = write_cache_finding("disk.seq-write", 900.0, 300.0, None).unwrap();
        assert!(bare.contains("RAID controller"), "{bare}");
        // A disk that writes a little faster than it reads is not flagged.
        assert!(write_cache_finding("disk.seq-write", 550.0, 500.0, None).is_none());
        assert!(write_cache_finding("disk.seq-write", 550.0, 0.0, None).is_none());
    }
}

/// Finding: file creation on this file system depends on what was deleted
/// on it in the last minutes.
pub const RECENT_DELETES: &str = "recently-deleted-inodes";

/// Whether the file system mounted from `source` is ext4 without a journal,
/// given the entries of /proc/fs/jbd2 (`vda-8`: one per journal in use).
/// Such a file system skips every inode freed in the last minute or so when
/// it allocates one (the kernel's `recently_deleted()`, which it checks only
/// without a journal), scanning past each on every create.
pub fn ext4_without_journal(fs_type: &str, source: &str, jbd2: &[String]) -> bool {
    if fs_type != "ext4" {
        return false;
    }
    let Some(dev) = source.strip_prefix("/dev/").map(|d| d.replace('/', "!")) else {
        return false;
    };
    !jbd2.iter().any(|e| {
        e.strip_prefix(dev.as_str())
            .is_some_and(|rest| rest.starts_with('-'))
    })
}

/// The entries of /proc/fs/jbd2, or `None` where it cannot be read (then
/// nothing is concluded).
pub fn jbd2_entries() -> Option<Vec<String>> {
    let dir = std::fs::read_dir("/proc/fs/jbd2").ok()?;
    Some(
        dir.filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
    )
}

/// Why file creation does not measure the disk on an ext4 file system
/// without a journal (the untrusted reason and the finding's message).
pub fn recent_deletes_reason(source: &str) -> String {
    format!(
        "{source} is ext4 without a journal: it skips every inode freed in the last minute or so \
         on each create, so the rate depends on how many files anything deleted there just \
         before (1,000 to 76,000 files/s on one machine), not on the disk"
    )
}

pub fn recent_deletes_finding(source: &str) -> Finding {
    Finding::new(
        RECENT_DELETES,
        Severity::Warning,
        format!("disk.create: {}", recent_deletes_reason(source)),
    )
    .with_remedy(
        "measure file creation on a file system with a journal (--path DIR on ext4 with a \
         journal, xfs, btrfs); the case is left out of the index here",
    )
}

#[cfg(test)]
mod journal_tests {
    use super::*;

    #[test]
    fn ext4_without_a_journal_is_told_by_jbd2() {
        let with = vec!["vda-8".to_string(), "sdb1-8".to_string()];
        assert!(!ext4_without_journal("ext4", "/dev/vda", &with));
        assert!(ext4_without_journal("ext4", "/dev/vda", &["sdb1-8".into()]));
        assert!(ext4_without_journal("ext4", "/dev/vda", &[]));
        // vd is a prefix of vda, not its journal.
        assert!(ext4_without_journal("ext4", "/dev/vd", &["vda-8".into()]));
        assert!(!ext4_without_journal("xfs", "/dev/vda", &[]));
        assert!(!ext4_without_journal("ext4", "tmpfs", &[]));
        assert!(!ext4_without_journal(
            "ext4",
            "/dev/mapper/vg-root",
            &["mapper!vg-root-8".into()]
        ));
    }
}
