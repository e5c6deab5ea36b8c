//! Block devices (/sys/block) and their I/O counters (/proc/diskstats).
//!
//! Disk benchmarks need two things from here: the device's logical and
//! physical block sizes (writing below them forces read-modify-write, about
//! 3x slower) and the counters that betray it (read requests appearing on
//! the device during a pure write test). `DiskStats::delta` gives the
//! difference between two snapshots.
//!
//! A partition is mapped to its whole disk by finding the `/sys/block/<disk>`
//! directory that contains it, rather than by resolving the sysfs symlink,
//! so that captured fixture trees (plain directories) resolve the same way as
//! the live sysfs. A device-mapper or md device with exactly one underlying
//! device (LUKS on one disk) is followed to that disk.

use crate::memory::parse_selected;
use crate::sysroot::{dir_names, read_text, SysRoot};
use sysgauge_core::host::BlockDevice;

/// Bound on following single-slave chains (dm on dm on partition...).
const MAX_STACK_DEPTH: usize = 8;

/// Error reading the kernel's disk statistics.
#[derive(Debug, thiserror::Error)]
pub enum DiskStatsError {
    /// The statistics file could not be read.
    #[error("cannot read {path}: {source} (is /proc mounted?)")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// One device's line of /proc/diskstats. Sector counts are in 512-byte
/// units whatever the device's own sector size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Kernel device name (`sda`, `nvme0n1p2`).
    pub name: String,
    /// Reads completed successfully.
    pub reads_completed: u64,
    /// Adjacent reads merged.
    pub reads_merged: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    /// Milliseconds spent reading.
    pub read_ms: u64,
    /// Writes completed successfully.
    pub writes_completed: u64,
    /// Adjacent writes merged.
    pub writes_merged: u64,
    /// 512-byte sectors written.
    pub sectors_written: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// I/Os in flight at the time of reading (a gauge, not a counter).
    pub in_flight: u64,
    /// Milliseconds the device was busy.
    pub io_ms: u64,
    /// Weighted milliseconds doing I/O.
    pub weighted_io_ms: u64,
    /// Discards completed (kernel 4.18+).
    pub discards_completed: Option<u64>,
    /// 512-byte sectors discarded (kernel 4.18+).
    pub sectors_discarded: Option<u64>,
    /// Flush requests completed (kernel 5.5+).
    pub flushes_completed: Option<u64>,
}

/// Change between two `DiskStats` snapshots of one device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStatsDelta {
    /// Device name.
    pub name: String,
    /// Reads completed in between.
    pub reads_completed: u64,
    /// Sectors read in between.
    pub sectors_read: u64,
    /// Writes completed in between.
    pub writes_completed: u64,
    /// Sectors written in between.
    pub sectors_written: u64,
    /// Milliseconds the device was busy in between.
    pub io_ms: u64,
    /// Discards completed in between, when both snapshots had them.
    pub discards_completed: Option<u64>,
    /// Flushes completed in between, when both snapshots had them.
    pub flushes_completed: Option<u64>,
}

impl DiskStatsDelta {
    /// Bytes read in between.
    pub fn bytes_read(&self) -> u64 {
        self.sectors_read.saturating_mul(512)
    }

    /// Bytes written in between.
    pub fn bytes_written(&self) -> u64 {
        self.sectors_written.saturating_mul(512)
    }
}

/// Counter difference. The kernel prints `unsigned long` for most counters,
/// which wraps at 2^32 on 32-bit kernels (a Pi): a smaller later value below
/// that size is taken as one wrap; anything else (a device removed and
/// re-added) as no change rather than a huge bogus number.
fn counter_delta(later: u64, earlier: u64) -> u64 {
    if later >= earlier {
        later - earlier
    } else if earlier <= u64::from(u32::MAX) {
        (u64::from(u32::MAX) - earlier) + later + 1
    } else {
        0
    }
}

impl DiskStats {
    /// What changed from `earlier` to `self` (same device).
    pub fn delta(&self, earlier: &DiskStats) -> DiskStatsDelta {
        let opt = |a: Option<u64>, b: Option<u64>| Some(counter_delta(a?, b?));
        DiskStatsDelta {
            name: self.name.clone(),
            reads_completed: counter_delta(self.reads_completed, earlier.reads_completed),
            sectors_read: counter_delta(self.sectors_read, earlier.sectors_read),
            writes_completed: counter_delta(self.writes_completed, earlier.writes_completed),
            sectors_written: counter_delta(self.sectors_written, earlier.sectors_written),
            io_ms: counter_delta(self.io_ms, earlier.io_ms),
            discards_completed: opt(self.discards_completed, earlier.discards_completed),
            flushes_completed: opt(self.flushes_completed, earlier.flushes_completed),
        }
    }
}

/// Deltas for every device present in both snapshots, matched by name.
pub fn diskstats_delta(earlier: &[DiskStats], later: &[DiskStats]) -> Vec<DiskStatsDelta> {
    later
        .iter()
        .filter_map(|l| {
            let e = earlier.iter().find(|e| e.name == l.name)?;
            Some(l.delta(e))
        })
        .collect()
}

/// Parses /proc/diskstats. Lines with fewer than the 14 classic fields are
/// skipped; the discard (4.18+) and flush (5.5+) fields are read when there.
pub fn parse_diskstats(text: &str) -> Vec<DiskStats> {
    text.lines().filter_map(parse_diskstats_line).collect()
}

fn parse_diskstats_line(line: &str) -> Option<DiskStats> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 14 {
        return None;
    }
    let num = |i: usize| -> Option<u64> { fields.get(i)?.parse().ok() };
    Some(DiskStats {
        major: fields.first()?.parse().ok()?,
        minor: fields.get(1)?.parse().ok()?,
        name: fields.get(2)?.to_string(),
        reads_completed: num(3)?,
        reads_merged: num(4)?,
        sectors_read: num(5)?,
        read_ms: num(6)?,
        writes_completed: num(7)?,
        writes_merged: num(8)?,
        sectors_written: num(9)?,
        write_ms: num(10)?,
        in_flight: num(11)?,
        io_ms: num(12)?,
        weighted_io_ms: num(13)?,
        discards_completed: num(14),
        sectors_discarded: num(16),
        flushes_completed: num(18),
    })
}

/// Reads the live /proc/diskstats.
pub fn read_diskstats() -> Result<Vec<DiskStats>, DiskStatsError> {
    let path = "/proc/diskstats";
    let text = std::fs::read_to_string(path).map_err(|source| DiskStatsError::Read {
        path: path.to_string(),
        source,
    })?;
    Ok(parse_diskstats(&text))
}

/// True when `sys/block/<name>` exists: a whole disk.
fn is_whole_disk(root: &SysRoot, name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && root.sys_path(&format!("block/{name}")).is_dir()
}

/// The whole disk holding a device named `name` (itself, or the parent of a
/// partition), followed through single-slave device-mapper stacks.
pub(crate) fn disk_for_name(root: &SysRoot, name: &str) -> Option<String> {
    let mut disk = disk_for_name_flat(root, name)?;
    for _ in 0..MAX_STACK_DEPTH {
        let slaves = dir_names(&root.sys_path(&format!("block/{disk}/slaves")));
        let [only] = slaves.as_slice() else {
            break;
        };
        match disk_for_name_flat(root, only) {
            Some(below) if below != disk => disk = below,
            _ => break,
        }
    }
    Some(disk)
}

/// The whole disk for a device name, without following slaves: itself when
/// `sys/block/<name>` exists, else the disk whose directory holds it.
fn disk_for_name_flat(root: &SysRoot, name: &str) -> Option<String> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    if is_whole_disk(root, name) {
        return Some(name.to_string());
    }
    dir_names(&root.sys_path("block"))
        .into_iter()
        .find(|d| root.sys_path(&format!("block/{d}/{name}")).is_dir())
}

/// The whole disk for a device number, via `sys/dev/block/M:m/uevent`
/// (or, live, the symlink's name).
pub(crate) fn disk_for_devnum(root: &SysRoot, major: u32, minor: u32) -> Option<String> {
    let rel = format!("dev/block/{major}:{minor}");
    let from_uevent = root.read_sys(&format!("{rel}/uevent")).and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("DEVNAME="))
            .map(|n| n.trim().to_string())
    });
    let name = from_uevent.or_else(|| {
        let link = std::fs::read_link(root.sys_path(&rel)).ok()?;
        Some(link.file_name()?.to_str()?.to_string())
    })?;
    disk_for_name(root, &name)
}

fn parse_bool01(value: Option<String>) -> Option<bool> {
    match value?.as_str() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// Reads one whole disk's facts from `sys/block/<name>`.
pub fn block_device_at(root: &SysRoot, name: &str) -> Option<BlockDevice> {
    if !is_whole_disk(root, name) {
        return None;
    }
    let get = |rel: &str| root.sys_value(&format!("block/{name}/{rel}"));
    // SCSI pads models with spaces; MMC/SD cards have `name` instead.
    let model = get("device/model")
        .or_else(|| get("device/name"))
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty());
    Some(BlockDevice {
        name: name.to_string(),
        model,
        rotational: parse_bool01(get("queue/rotational")),
        logical_block_size: get("queue/logical_block_size").and_then(|v| v.parse().ok()),
        physical_block_size: get("queue/physical_block_size").and_then(|v| v.parse().ok()),
        // `size` is in 512-byte sectors whatever the logical block size.
        size_bytes: get("size")
            .and_then(|v| v.parse::<u64>().ok())
            .and_then(|s| s.checked_mul(512)),
        removable: parse_bool01(get("removable")),
        scheduler: get("queue/scheduler").and_then(|v| parse_selected(&v)),
    })
}

/// All whole disks with a size. Size-0 devices are left out: unused loop,
/// nbd and zram slots and empty card readers say nothing about the machine.
pub fn list_block_devices(root: &SysRoot) -> Vec<BlockDevice> {
    dir_names(&root.sys_path("block"))
        .iter()
        .filter_map(|name| block_device_at(root, name))
        .filter(|d| d.size_bytes != Some(0))
        .collect()
}

/// Live facts for the whole disk `name` (`sda`, `nvme0n1`); a partition
/// name gives its disk.
pub fn block_device(name: &str) -> Option<BlockDevice> {
    let root = SysRoot::live();
    let disk = disk_for_name_flat(&root, name)?;
    block_device_at(&root, &disk)
}

/// Reads `/proc/diskstats` under a root (for fixtures).
pub fn diskstats_at(root: &SysRoot) -> Vec<DiskStats> {
    read_text(&root.proc_path("diskstats"))
        .map(|t| parse_diskstats(&t))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const STATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n \
254       0 vda 32651 8570 5180226 17762 9355 18102 2506840 7898 0 10492 26686 7632 36 798192 987 632 37\n \
8       0 sda 100 0 800 5 200 0 1600 9 0 20 14\n \
short line\n";

    #[test]
    fn parses_all_generations() {
        let s = parse_diskstats(STATS);
        assert_eq!(s.len(), 3);
        let vda = &s[1];
        assert_eq!(vda.name, "vda");
        assert_eq!((vda.major, vda.minor), (254, 0));
        assert_eq!(vda.reads_completed, 32651);
        assert_eq!(vda.sectors_read, 5_180_226);
        assert_eq!(vda.writes_completed, 9355);
        assert_eq!(vda.sectors_written, 2_506_840);
        assert_eq!(vda.discards_completed, Some(7632));
        assert_eq!(vda.sectors_discarded, Some(798_192));
        assert_eq!(vda.flushes_completed, Some(632));
        let sda = &s[2];
        assert_eq!(sda.discards_completed, None);
        assert_eq!(sda.flushes_completed, None);
    }

    #[test]
    fn delta_reports_reads_during_writes() {
        let before = parse_diskstats("8 0 sda 100 0 800 5 200 0 1600 9 0 20 14");
        let after = parse_diskstats("8 0 sda 130 0 1040 7 900 0 9600 30 0 60 40");
        let d = diskstats_delta(&before, &after);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].reads_completed, 30);
        assert_eq!(d[0].bytes_read(), 240 * 512);
        assert_eq!(d[0].writes_completed, 700);
        assert_eq!(d[0].bytes_written(), 8000 * 512);
        assert_eq!(d[0].io_ms, 40);
    }

    #[test]
    fn counters_wrap_on_32_bit() {
        assert_eq!(counter_delta(5, u64::from(u32::MAX) - 4), 10);
        assert_eq!(counter_delta(5, u64::from(u32::MAX) + 10), 0);
        assert_eq!(counter_delta(7, 7), 0);
    }

    proptest! {
        #[test]
        fn diskstats_never_panic(text in "\\PC{0,300}") {
            let _ = parse_diskstats(&text);
        }

        #[test]
        fn diskstats_numeric_never_panic(fields in proptest::collection::vec("[0-9]{1,22}|sd[a-z]", 0..22)) {
            let _ = parse_diskstats(&fields.join(" "));
        }

        #[test]
        fn delta_of_growth_is_growth(a in 0u64..u64::MAX / 2, d in 0u64..1_000_000) {
            prop_assert_eq!(counter_delta(a + d, a), d);
        }
    }
}
