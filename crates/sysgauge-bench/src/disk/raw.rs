//! Raw device mode: `disk.raw-write` writes straight to a block device, to
//! show what the block size does (below the logical block size the kernel
//! must read each block before changing part of it; below the physical
//! block size the drive does the same inside).
//!
//! This destroys the device's data, so it is fenced in:
//! - the device must be named exactly: an absolute path under /dev that is
//!   a block device (no guessing from `sdb`);
//! - neither it nor any of its partitions may be mounted
//!   (/proc/self/mountinfo), used as swap (/proc/swaps) or held by LVM,
//!   md or device-mapper (`holders/` in sysfs);
//! - it must carry no file-system, swap, LUKS, LVM, md, bcache, ZFS or
//!   partition-table signature, unless `--force` is given; `--force`
//!   overrides one *known* signature only: a device with two or more
//!   signatures (blkid's "ambivalent", exit 8), or one whose probe failed
//!   (an unreadable device, any blkid answer but 0 or 2), is refused
//!   whatever the flags, since then nobody knows what is on it;
//! - without `--destroy-data` nothing is written: the command explains what
//!   it would do and exits 2;
//! - the device is opened with O_EXCL, so the kernel itself refuses if it
//!   is mounted or claimed in between, and the checks are repeated before
//!   every case.
//!
//! A device-mapper or md device (an LVM logical volume, dm-crypt, RAID) is
//! a stack: its own block sizes, and those of the devices it is built on
//! (`slaves/` in sysfs), which may be larger or smaller than its own (a
//! 4 KiB LV over 512-byte disks). The largest block size anywhere in the
//! stack is the one below which a write turns into read-modify-write; a
//! `--block-size` below it (or not a multiple) is warned about before
//! anything is written, in the plan and at the start of the run, naming
//! the layer, and again as a finding on the case.
//!
//! Block sizes that are multiples of the logical block size are written
//! with O_DIRECT. Smaller ones cannot be: the kernel refuses unaligned
//! direct I/O on a block device. They go through the page cache (buffered
//! writes, then fdatasync), which is exactly where the read-modify-write
//! happens: the cache is dropped before every pass, so each partly written
//! block is read from the device first, and /proc/diskstats shows the
//! reads.

use super::io::{self, AlignedBuf, Pattern};
use super::passes::{run_passes, OpTimer};
use super::signature;
use super::traps::{self, StatsWatch};
use super::{DiskOptions, IoMode, Kind};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use sysgauge_core::size::{size_label, Bytes};
use sysgauge_core::{BenchError, Metric, Profile, RunCtx, Unit};
use sysgauge_family::util::by_profile;
use sysgauge_host::SysRoot;
use thiserror::Error;

/// The device chosen on the command line and what the user allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawTarget {
    pub path: PathBuf,
    /// Write even over a recognised signature.
    pub force: bool,
    /// `--destroy-data` was given.
    pub destroy_data: bool,
}

/// Why a device was refused or could not be inspected.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RawError {
    #[error(
        "--device {0}: give the full path of a block device under /dev (for example /dev/sdb)"
    )]
    NotUnderDev(String),
    #[error("--device {path}: {reason}")]
    Inaccessible { path: String, reason: String },
    #[error("--device {0} is not a block device")]
    NotBlockDevice(String),
    #[error("--device {path}: cannot find {name} in /sys/class/block")]
    NoSysfs { path: String, name: String },
    #[error(
        "--device {path} holds {} ({device} B), less than --size {} ({requested} B): \
         pass a --size of at most {}, or name a larger device",
        Bytes(*.device), Bytes(*.requested), Bytes(*.device)
    )]
    SmallerThanSize {
        path: String,
        device: u64,
        requested: u64,
    },
}

/// One reason not to write to a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Mounted {
        device: String,
        mount_point: String,
    },
    Swap {
        device: String,
    },
    Held {
        device: String,
        holders: Vec<String>,
    },
    Signature {
        found: Vec<String>,
    },
    /// Two or more signatures: `--force` does not apply.
    Ambivalent {
        found: Vec<String>,
    },
    /// The probe itself failed: `--force` does not apply.
    Unprobed {
        reason: String,
    },
    Empty,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Mounted {
                device,
                mount_point,
            } => write!(f, "{device} is mounted on {mount_point}; unmount it first"),
            Refusal::Swap { device } => {
                write!(
                    f,
                    "{device} is in use as swap; run swapoff /dev/{device} first"
                )
            }
            Refusal::Held { device, holders } => write!(
                f,
                "{device} is in use by {} (LVM, md RAID or device-mapper); release it first",
                holders.join(", ")
            ),
            Refusal::Signature { found } => write!(
                f,
                "the device carries data ({}); wipe it (wipefs -a) or add --force to write over it",
                found.join(", ")
            ),
            Refusal::Ambivalent { found } => write!(
                f,
                "the device carries more than one signature ({}; blkid calls this ambivalent), \
                 so what is on it is unclear and --force does not apply; list them with wipefs \
                 and wipe them all (wipefs -a) first",
                found.join(", ")
            ),
            Refusal::Unprobed { reason } => write!(
                f,
                "cannot tell what is on the device ({reason}), so --force does not apply; \
                 fix the probe or wipe the device (wipefs -a) first"
            ),
            Refusal::Empty => write!(f, "the device has no media (size 0)"),
        }
    }
}

/// What was found about a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFacts {
    /// As named on the command line.
    pub path: PathBuf,
    /// Kernel name (`sdb`, `loop3`, `nvme0n1p2`).
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// Kernel names of its partitions.
    pub partitions: Vec<String>,
    pub size_bytes: u64,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    /// The device and what it is built on (device-mapper, md), top first.
    pub stack: Vec<Layer>,
}

/// One device of a block device stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// Kernel name (`dm-0`, `md0`, `sda`).
    pub name: String,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
}

/// The block size below which writes to the device are read-modify-write:
/// the largest logical or physical block size in its stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockFloor {
    pub bytes: u64,
    /// The layer it comes from.
    pub layer: String,
    /// `logical` or `physical`.
    pub kind: &'static str,
}

impl DeviceFacts {
    /// The largest block size in the stack (the top device's when the
    /// stack is unknown); ties go to the upper layer and to logical.
    pub fn block_floor(&self) -> Option<BlockFloor> {
        let own = Layer {
            name: self.name.clone(),
            logical_block_size: self.logical_block_size,
            physical_block_size: self.physical_block_size,
        };
        let layers = if self.stack.is_empty() {
            std::slice::from_ref(&own)
        } else {
            self.stack.as_slice()
        };
        let mut best: Option<BlockFloor> = None;
        for l in layers {
            for (kind, v) in [
                ("logical", l.logical_block_size),
                ("physical", l.physical_block_size),
            ] {
                let Some(v) = v.map(u64::from).filter(|&v| v > 0) else {
                    continue;
                };
                if best.as_ref().is_none_or(|b| v > b.bytes) {
                    best = Some(BlockFloor {
                        bytes: v,
                        layer: l.name.clone(),
                        kind,
                    });
                }
            }
        }
        best
    }

    /// What to say before writing at each of `blocks`: one line per block
    /// size below (or not a multiple of) the stack's block floor.
    pub fn block_warnings(&self, blocks: &[u64]) -> Vec<String> {
        let Some(floor) = self.block_floor() else {
            return Vec::new();
        };
        let whose = if floor.layer == self.name {
            format!("{}'s {} block size", self.name, floor.kind)
        } else {
            let path: Vec<&str> = self.stack.iter().map(|l| l.name.as_str()).collect();
            format!(
                "the {} block size of {}, which {} is built on ({})",
                floor.kind,
                floor.layer,
                self.name,
                path.join(" over ")
            )
        };
        blocks
            .iter()
            .filter(|&&b| b < floor.bytes || !b.is_multiple_of(floor.bytes))
            .map(|&b| {
                format!(
                    "warning: block size {} is not a multiple of {} ({}): each write \
                     reads the rest of a {} block first (read-modify-write), so this row \
                     measures that, not the device's write speed",
                    Bytes(b),
                    whose,
                    Bytes(floor.bytes),
                    Bytes(floor.bytes)
                )
            })
            .collect()
    }
}

/// `name` and, recursively, the devices under it (`slaves/`), top first,
/// each once; at most 16 layers (a loop in sysfs cannot make it spin).
pub fn stack_at(root: &SysRoot, name: &str) -> Vec<Layer> {
    let mut out: Vec<Layer> = Vec::new();
    let mut todo = vec![name.to_string()];
    while let Some(n) = todo.pop() {
        if out.len() >= 16 || out.iter().any(|l| l.name == n) {
            continue;
        }
        let queue = |rel: &str| -> Option<u32> {
            // A partition's queue belongs to its disk.
            sys_value_at(root, &n, &format!("queue/{rel}"))
                .or_else(|| sys_value_at(root, &n, &format!("../queue/{rel}")))
                .and_then(|v| v.parse().ok())
        };
        out.push(Layer {
            name: n.clone(),
            logical_block_size: queue("logical_block_size"),
            physical_block_size: queue("physical_block_size"),
        });
        let mut under = sys_entries_at(root, &n, "slaves");
        under.sort();
        // Popped from the end: keep sysfs order, depth first.
        todo.extend(under.into_iter().rev());
    }
    out
}

fn sys_value(name: &str, rel: &str) -> Option<String> {
    sys_value_at(&SysRoot::live(), name, rel)
}

/// The entries of the block device's sysfs directory `rel` (`slaves`,
/// `holders`), in sysfs order; empty when it cannot be read.
fn sys_entries_at(root: &SysRoot, name: &str, rel: &str) -> Vec<String> {
    std::fs::read_dir(root.sys_path(&format!("class/block/{name}/{rel}")))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn sys_value_at(root: &SysRoot, name: &str, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.sys_path(&format!("class/block/{name}/{rel}")))
        .ok()
        .map(|s| s.trim().to_string())
}

fn parse_devnum(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Check that `path` names a block device exactly, and read its facts.
pub fn inspect(path: &Path) -> Result<DeviceFacts, RawError> {
    let shown = path.display().to_string();
    if !path.is_absolute() || !path.starts_with("/dev") || path.components().count() < 3 {
        return Err(RawError::NotUnderDev(shown));
    }
    let meta = std::fs::metadata(path).map_err(|e| RawError::Inaccessible {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    if !meta.file_type().is_block_device() {
        return Err(RawError::NotBlockDevice(shown));
    }
    // /dev/disk/by-id/... are symlinks to the kernel name.
    let resolved = path.canonicalize().map_err(|e| RawError::Inaccessible {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    if !resolved.starts_with("/dev") {
        return Err(RawError::NotUnderDev(shown));
    }
    let name = resolved
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| RawError::NotUnderDev(shown.clone()))?;
    let (major, minor) = sys_value(&name, "dev")
        .and_then(|v| parse_devnum(&v))
        .ok_or_else(|| RawError::NoSysfs {
            path: shown.clone(),
            name: name.clone(),
        })?;
    let mut partitions: Vec<String> = std::fs::read_dir(format!("/sys/class/block/{name}"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&name) && n != &name)
                .filter(|n| Path::new(&format!("/sys/class/block/{name}/{n}/partition")).exists())
                .collect()
        })
        .unwrap_or_default();
    partitions.sort();
    let queue = |rel: &str| -> Option<String> {
        // A partition's queue belongs to its disk.
        sys_value(&name, &format!("queue/{rel}"))
            .or_else(|| sys_value(&name, &format!("../queue/{rel}")))
    };
    let bdev = sysgauge_host::block_device(&name);
    Ok(DeviceFacts {
        path: path.to_path_buf(),
        name: name.clone(),
        major,
        minor,
        partitions,
        size_bytes: sys_value(&name, "size")
            .and_then(|s| s.parse::<u64>().ok())
            .map(|s| s.saturating_mul(512))
            .unwrap_or(0),
        logical_block_size: queue("logical_block_size").and_then(|v| v.parse().ok()),
        physical_block_size: queue("physical_block_size").and_then(|v| v.parse().ok()),
        model: bdev.as_ref().and_then(|b| b.model.clone()),
        rotational: queue("rotational").map(|v| v == "1"),
        stack: stack_at(&SysRoot::live(), &name),
    })
}

/// Every reason not to write to the device (one known signature only
/// without `force`). Empty means it is safe to destroy.
pub fn refusals(f: &DeviceFacts, force: bool) -> Vec<Refusal> {
    refusals_at(&SysRoot::live(), f, force)
}

/// `refusals`, reading /proc and /sys under `root` (a captured tree in
/// tests); the signature probe always reads the device itself.
pub fn refusals_at(root: &SysRoot, f: &DeviceFacts, force: bool) -> Vec<Refusal> {
    let mut out = Vec::new();
    if f.size_bytes == 0 {
        out.push(Refusal::Empty);
    }
    let mut names = vec![f.name.clone()];
    names.extend(f.partitions.iter().cloned());
    let devnums: Vec<(String, (u32, u32))> = names
        .iter()
        .filter_map(|n| Some((n.clone(), parse_devnum(&sys_value_at(root, n, "dev")?)?)))
        .collect();
    let mounts = std::fs::read_to_string(root.proc_path("self/mountinfo"))
        .map(|t| sysgauge_host::parse_mountinfo(&t))
        .unwrap_or_default();
    for m in &mounts {
        let by_num = devnums
            .iter()
            .find(|(_, d)| *d == (m.major, m.minor))
            .map(|(n, _)| n.clone());
        let by_source = kernel_name(&m.source).filter(|n| names.contains(n));
        if let Some(device) = by_num.or(by_source) {
            out.push(Refusal::Mounted {
                device,
                mount_point: m.mount_point.clone(),
            });
        }
    }
    let swaps = std::fs::read_to_string(root.proc_path("swaps"))
        .map(|t| sysgauge_host::parse_swaps(&t))
        .unwrap_or_default();
    for s in &swaps {
        if let Some(n) = kernel_name(&s.path).filter(|n| names.contains(n)) {
            out.push(Refusal::Swap { device: n });
        }
    }
    for n in &names {
        let holders = sys_entries_at(root, n, "holders");
        if !holders.is_empty() {
            out.push(Refusal::Held {
                device: n.clone(),
                holders,
            });
        }
    }
    if f.size_bytes > 0 {
        // Probed even with --force: that overrides a known signature, not
        // an unknown or contradictory one.
        let probe = signatures(&f.path, f.size_bytes);
        if let Some(reason) = probe.failure {
            out.push(Refusal::Unprobed { reason });
        } else if probe.ambivalent {
            out.push(Refusal::Ambivalent { found: probe.found });
        } else if !force && !probe.found.is_empty() {
            out.push(Refusal::Signature { found: probe.found });
        }
    }
    out
}

/// The kernel name behind a /dev path (following symlinks), if it is one.
fn kernel_name(source: &str) -> Option<String> {
    if !source.starts_with("/dev/") {
        return None;
    }
    let p = Path::new(source);
    let r = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    Some(r.file_name()?.to_string_lossy().into_owned())
}

/// What the signature probes found on a device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    /// Signature names, the built-in probe's and then blkid's (marked).
    pub found: Vec<String>,
    /// More than one signature: blkid exit 8, or two distinct ones from
    /// the built-in probe.
    pub ambivalent: bool,
    /// Why the device could not be probed; set, nothing is known.
    pub failure: Option<String>,
}

/// Signatures on the device: our own magic-number probe, plus `blkid -p`
/// when installed. Only blkid's "nothing found" (exit 2) or a clean list
/// (exit 0) counts as an answer; any other exit, a signal or a read error
/// is a failure, and exit 8 is ambivalence.
pub fn signatures(path: &Path, size: u64) -> Probe {
    let mut probe = Probe::default();
    match File::open(path) {
        Ok(f) => {
            let error = std::cell::RefCell::new(None);
            let read = |off: u64, len: usize| {
                let mut buf = vec![0u8; len];
                let mut got = 0;
                while got < len {
                    match f.read_at(&mut buf[got..], off + got as u64) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) => {
                            *error.borrow_mut() = Some(format!("reading at {off}: {e}"));
                            return None;
                        }
                    }
                }
                buf.truncate(got);
                Some(buf)
            };
            let found = signature::detect(&read, size);
            probe.ambivalent = found.len() > 1;
            probe.found = found.into_iter().map(String::from).collect();
            probe.failure = error.into_inner();
        }
        Err(e) => probe.failure = Some(format!("cannot open it: {e}")),
    }
    if let Some(blkid) = sysgauge_core::bench::find_program("blkid") {
        blkid_probe(&blkid, path, &mut probe);
    }
    probe
}

/// Adds `blkid -p`'s answer to `probe`.
fn blkid_probe(blkid: &Path, path: &Path, probe: &mut Probe) {
    let out = match std::process::Command::new(blkid)
        .args(["-p", "-o", "export"])
        .arg(path)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            probe.failure = Some(format!("cannot run {}: {e}", blkid.display()));
            return;
        }
    };
    match out.status.code() {
        // 0 prints KEY=value lines.
        Some(0) => {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some(v) = line
                    .strip_prefix("TYPE=")
                    .or_else(|| line.strip_prefix("PTTYPE="))
                {
                    let v = format!("{v} (blkid)");
                    if !probe.found.contains(&v) {
                        probe.found.push(v);
                    }
                }
            }
        }
        Some(2) => {}
        Some(8) => {
            probe.ambivalent = true;
            probe.found.push("ambivalent (blkid)".to_string());
        }
        code => {
            let how = code.map_or("killed by a signal".to_string(), |c| format!("exit {c}"));
            let err = String::from_utf8_lossy(&out.stderr);
            probe.failure = Some(format!("blkid -p failed ({how}): {}", err.trim()));
        }
    }
}

/// Bytes written per block size when --size is not given.
pub fn default_size(profile: Profile) -> u64 {
    by_profile(profile, [1 << 20, 64 << 20, 256 << 20, 1 << 30])
}

/// An explicit `--size` must fit on the device: writing less than asked
/// would measure another workload than its params promise (the `size` of
/// a case is the region written), so a device smaller than `--size` is
/// refused. The profile's default size is not a request: it shrinks to
/// the device (`region`).
pub fn check_size(f: &DeviceFacts, requested: Option<u64>) -> Result<(), RawError> {
    match requested {
        Some(requested) if requested > f.size_bytes => Err(RawError::SmallerThanSize {
            path: f.path.display().to_string(),
            device: f.size_bytes,
            requested,
        }),
        _ => Ok(()),
    }
}

/// The region written: the request or the profile's default, within the
/// device, whole blocks.
pub fn region(requested: Option<u64>, profile: Profile, device: u64, block: u64) -> u64 {
    let want = requested
        .unwrap_or_else(|| default_size(profile))
        .min(device);
    let granule = block.max(4096);
    (want / granule * granule).max(block.min(device))
}

/// What raw mode would do, in words (shown without --destroy-data).
pub fn plan_text(
    f: &DeviceFacts,
    blocks: &[u64],
    modes: Option<&[IoMode]>,
    size: Option<u64>,
    profile: Profile,
) -> String {
    let sizes: Vec<String> = blocks.iter().map(|&b| size_label(b)).collect();
    let region = region(size, profile, f.size_bytes, 1 << 20);
    let mut s = format!(
        "sysgauge disk --device {} would write test data over the first {} of {} ({}{}, {} in all, \
         logical/physical block size {}/{}), once per block size: {}.\n",
        f.path.display(),
        Bytes(region),
        f.name,
        f.model.as_deref().unwrap_or("unknown model"),
        match f.rotational {
            Some(true) => ", rotational",
            Some(false) => ", non-rotational",
            None => "",
        },
        Bytes(f.size_bytes),
        f.logical_block_size.map_or("?".into(), |v| v.to_string()),
        f.physical_block_size.map_or("?".into(), |v| v.to_string()),
        sizes.join(", ")
    );
    if f.stack.len() > 1 {
        let layers: Vec<String> = f
            .stack
            .iter()
            .map(|l| {
                let v = |b: Option<u32>| b.map_or("?".into(), |v| v.to_string());
                format!(
                    "{} {}/{}",
                    l.name,
                    v(l.logical_block_size),
                    v(l.physical_block_size)
                )
            })
            .collect();
        s.push_str(&format!(
            "It is built on other devices (logical/physical block sizes): {}.\n",
            layers.join(" over ")
        ));
    }
    for w in f.block_warnings(blocks) {
        s.push_str(&w);
        s.push('\n');
    }
    s.push_str(&modes_text(modes));
    s.push_str(
        "Checked: not mounted (nor any partition), not swap, not held by LVM/md/device-mapper, \
         no recognised signature.\n",
    );
    s.push_str(
        "EVERYTHING ON THAT PART OF THE DEVICE WILL BE DESTROYED. Add --destroy-data to do it.\n",
    );
    s
}

/// How the plan says the sizes will be written: in each chosen mode, or
/// (without `--io`) direct where the kernel takes the size.
fn modes_text(modes: Option<&[IoMode]>) -> String {
    let Some(modes) = modes else {
        return "Block sizes that are a multiple of the logical block size are written with \
                O_DIRECT; smaller ones through the page cache (the kernel refuses unaligned direct \
                I/O on a block device), where each partly written block is first read from the \
                device.\n"
            .to_string();
    };
    let each: Vec<&str> = modes
        .iter()
        .map(|m| match m {
            IoMode::Buffered => {
                "buffered (through the page cache, each pass ending with fdatasync; a partly \
                 written block is first read from the device)"
            }
            IoMode::Direct => {
                "direct (O_DIRECT; a size below the logical block size is written as the \
                 read-modify-write of whole blocks the device forces)"
            }
        })
        .collect();
    format!(
        "Every block size is written {}: {}.\n",
        if modes.len() > 1 {
            "once in each mode"
        } else {
            "in one mode"
        },
        each.join(", then ")
    )
}

/// `disk.raw-write`.
///
/// `mode` (`--io`): every size buffered, or every size direct; a size
/// below (or not a multiple of) the logical block size is then written by
/// reading the logical blocks it falls in and writing them back whole, with
/// O_DIRECT, which is the read-modify-write the device forces on anyone
/// writing less than a block, done where it can be seen. Without a mode,
/// aligned sizes go direct and the others buffered (the old way).
pub fn raw_write(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    block: u64,
    mode: Option<IoMode>,
) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::RawWrite.id();
    let rt = o.device.as_ref().ok_or_else(|| {
        BenchError::skip("no --device given", "pass --device /dev/X --destroy-data")
    })?;
    if !rt.destroy_data {
        return Err(BenchError::failed(
            "refusing to write to a raw device without --destroy-data",
        ));
    }
    let facts = inspect(&rt.path).map_err(|e| BenchError::failed(e.to_string()))?;
    if let Some(r) = refusals(&facts, rt.force).first() {
        return Err(BenchError::failed(format!("refusing to write: {r}")));
    }
    check_size(&facts, o.size).map_err(|e| BenchError::failed(e.to_string()))?;
    let size = region(o.size, ctx.profile(), facts.size_bytes, block);
    ctx.note_param("size", size);
    ctx.note_detail("device", facts.name.as_str());
    if let Some(m) = &facts.model {
        ctx.note_detail("model", m.as_str());
    }
    if let Some(r) = facts.rotational {
        ctx.note_detail("rotational", r);
    }
    let logical = facts.logical_block_size.unwrap_or(512);
    ctx.note_detail("logical_block_size", logical);
    if let Some(p) = facts.physical_block_size {
        ctx.note_detail("physical_block_size", p);
    }
    if facts.stack.len() > 1 {
        let names: Vec<&str> = facts.stack.iter().map(|l| l.name.as_str()).collect();
        ctx.note_detail("device_stack", names.join(" over "));
    }
    // The stack's floor stands for the physical block size when a lower
    // layer's is larger than the device's own.
    let floor = facts.block_floor();
    let physical = match &floor {
        Some(f) if f.layer != facts.name || f.kind == "physical" => {
            u32::try_from(f.bytes).ok().or(facts.physical_block_size)
        }
        _ => facts.physical_block_size,
    };
    let label = match &floor {
        Some(f) if f.layer != facts.name => format!("{} (through {})", facts.name, f.layer),
        _ => facts.name.clone(),
    };
    if let Some(f) = traps::block_size_finding(block, &label, Some(logical), physical) {
        ctx.finding(f);
    }
    let len = usize::try_from(block).map_err(|_| BenchError::failed("block too large"))?;
    let pattern = Pattern::new(len.max(1 << 20))
        .ok_or_else(|| BenchError::failed("cannot allocate the data pattern buffer"))?;
    let want_direct = block.is_multiple_of(u64::from(logical.max(512)));
    let open = |direct: bool| -> Result<File, BenchError> {
        let mut flags = libc::O_EXCL;
        if direct {
            flags |= libc::O_DIRECT;
        }
        // Readable too: direct mode reads the blocks it rewrites.
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(&rt.path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    BenchError::failed(format!(
                        "{} is busy (mounted or claimed by another user); refusing to write",
                        rt.path.display()
                    ))
                } else {
                    BenchError::failed(format!("cannot open {}: {e}", rt.path.display()))
                }
            })
    };
    let mut direct = match mode {
        Some(IoMode::Buffered) => false,
        Some(IoMode::Direct) => true,
        None => want_direct,
    };
    // Direct mode at a size the device cannot take: whole logical blocks.
    let rmw = direct && !want_direct;
    let mut file = open(direct)?;
    if direct && !rmw {
        if let Err(e) = file.write_all_at(pattern.at(0, len), 0) {
            if io::is_direct_refusal(&e) && mode.is_none() {
                direct = false;
                drop(file);
                file = open(false)?;
            } else {
                return Err(BenchError::failed(format!(
                    "cannot write to {}: {e}",
                    rt.path.display()
                )));
            }
        }
    }
    ctx.note_param("direct", direct);
    ctx.note_detail(
        "io_mode",
        if rmw {
            "direct+read-modify-write"
        } else if direct {
            "direct"
        } else {
            "buffered+fdatasync+fadvise"
        },
    );
    if !direct && mode.is_none() {
        ctx.finding(traps::buffered_finding(&format!(
            "block size {} is not a multiple of {}'s logical block size {}",
            size_label(block),
            facts.name,
            logical
        )));
    }
    if rmw {
        // Sysgauge's own reads: not the kernel's, nor a sign of anything.
        ctx.note_detail(
            "rmw_unit",
            format!("{} B logical blocks, read and written whole", logical),
        );
    }
    let sector = u64::from(logical.max(512));
    let mut span_buf = if rmw {
        let (s0, e0) = rmw_span(sector - 1, block, sector);
        AlignedBuf::new(usize::try_from(e0 - s0).unwrap_or(usize::MAX))
            .ok_or_else(|| BenchError::failed("cannot allocate an I/O buffer"))?
    } else {
        AlignedBuf::new(1).ok_or_else(|| BenchError::failed("cannot allocate an I/O buffer"))?
    };
    traps::settle_writeback(ctx, id);
    let target = o.repetition_target(ctx);
    let path = rt.path.clone();
    let fail = |what: &str, e: std::io::Error| {
        BenchError::failed(format!("cannot {what} {}: {e}", path.display()))
    };
    let watch = StatsWatch::start(Some(&facts.name));
    let mut pos = 0u64;
    let mut written = 0u64;
    let samples = run_passes(ctx, target, (size / block).max(1), |ctx, limit| {
        if !direct {
            // Empty the device's page cache, so every partly written block
            // must be read back from the device, as on first contact.
            file.sync_data().map_err(|e| fail("sync", e))?;
            io::drop_cache(&file).map_err(|e| fail("drop the cache of", e))?;
        }
        let mut timer = OpTimer::new(ctx, limit);
        timer.start();
        while timer.more()? {
            let buf = pattern.at(pos, len);
            if rmw {
                let (start, end) = rmw_span(pos, block, sector);
                let span = &mut span_buf[..(end - start) as usize];
                timer
                    .time(|| {
                        file.read_exact_at(span, start)?;
                        let at = (pos - start) as usize;
                        span[at..at + len].copy_from_slice(buf);
                        file.write_all_at(span, start)
                    })
                    .map_err(|e| fail("read-modify-write", e))?;
            } else {
                timer
                    .time(|| file.write_all_at(buf, pos))
                    .map_err(|e| fail("write to", e))?;
            }
            pos += block;
            written += block;
            if pos + block > size {
                pos = 0;
            }
        }
        file.sync_data().map_err(|e| fail("sync", e))?;
        Ok(timer.finish(block as f64))
    })?;
    let delta = watch.finish();
    let _ = io::drop_cache(&file);
    if let Some(d) = delta {
        ctx.note_detail("device_reads", d.reads_completed);
        ctx.note_detail("device_bytes_read", d.bytes_read());
        ctx.note_detail("device_bytes_written", d.bytes_written());
        if !rmw {
            if let Some(f) = traps::rmw_finding(id, &d, written, true) {
                ctx.finding(f);
            }
        }
    }
    let metrics = samples.metrics("throughput", Unit::MBps, 1e-6)?;
    if let Some(m) = mode {
        sweep_finding(ctx, o, &facts, m, block, metrics[0].value());
    }
    Ok(metrics)
}

/// The logical blocks a write of `block` bytes at `pos` falls in:
/// `[start, end)`, both multiples of `sector`.
fn rmw_span(pos: u64, block: u64, sector: u64) -> (u64, u64) {
    let start = pos / sector * sector;
    let end = (pos + block).div_ceil(sector) * sector;
    (start, end)
}

/// Rates of one sweep so far, by mode: what `sweep_finding` compares.
type SweepRates = Vec<(IoMode, u64, f64)>;

/// After the last size of a mode: the read-modify-write finding over that
/// mode's sizes only (buffered rows against buffered, direct against
/// direct), naming the sizes below the device's block that ran slower than
/// the smallest whole-block size.
fn sweep_finding(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    facts: &DeviceFacts,
    mode: IoMode,
    block: u64,
    mbps: f64,
) {
    let Ok(rates) = ctx.fixture("disk.raw-sweep", |_| {
        Ok::<SweepRates, BenchError>(Vec::new())
    }) else {
        return;
    };
    rates.retain(|r| !(r.0 == mode && r.1 == block));
    rates.push((mode, block, mbps));
    if o.block_sizes().last() != Some(&block) {
        return;
    }
    let rows: Vec<(u64, f64)> = rates
        .iter()
        .filter(|r| r.0 == mode)
        .map(|r| (r.1, r.2))
        .collect();
    let Some(floor) = facts.block_floor() else {
        return;
    };
    if let Some(f) = traps::rmw_sizes_finding(mode.as_str(), &rows, floor.bytes, &facts.name) {
        ctx.finding(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_exact_block_devices() {
        for path in ["sda", "/tmp/x", "/dev"] {
            assert_eq!(
                inspect(Path::new(path)),
                Err(RawError::NotUnderDev(path.into()))
            );
        }
        assert_eq!(
            inspect(Path::new("/dev/null")),
            Err(RawError::NotBlockDevice("/dev/null".into()))
        );
        assert!(matches!(
            inspect(Path::new("/dev/sysgauge-no-such-device")),
            Err(RawError::Inaccessible { .. })
        ));
    }

    #[test]
    fn regions_are_whole_blocks_within_the_device() {
        assert_eq!(region(None, Profile::Quick, 1 << 30, 512), 64 << 20);
        assert_eq!(
            region(Some(10 << 20), Profile::Quick, 4 << 20, 1 << 20),
            4 << 20
        );
        assert_eq!(region(Some(5000), Profile::Quick, 1 << 30, 256), 4096);
        assert_eq!(region(Some(100), Profile::Quick, 1 << 30, 512), 512);
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, text).unwrap();
    }

    /// A captured tree: disk loop9 with partition loop9p1, which is
    /// mounted, used as swap and held by dm-0 (this machine's kernel has
    /// neither partition tables nor device-mapper, so the live tests cannot
    /// build this).
    #[test]
    fn partitions_swap_and_holders_refuse_in_a_captured_tree() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(r, "sys/class/block/loop9/dev", "7:9\n");
        std::fs::create_dir_all(r.join("sys/class/block/loop9/holders")).unwrap();
        write(r, "sys/class/block/loop9p1/dev", "259:3\n");
        write(r, "sys/class/block/loop9p1/holders/dm-0", "");
        write(
            r,
            "proc/self/mountinfo",
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n40 27 259:3 / /mnt/data rw - ext4 /dev/loop9p1 rw\n",
        );
        write(
            r,
            "proc/swaps",
            "Filename Type Size Used Priority\n/dev/loop9p1 partition 1024 0 -2\n",
        );
        let facts = DeviceFacts {
            // Not a device that exists: its probe fails, which refuses
            // even with --force.
            path: r.join("dev/loop9"),
            name: "loop9".into(),
            major: 7,
            minor: 9,
            partitions: vec!["loop9p1".into()],
            size_bytes: 64 << 20,
            logical_block_size: Some(512),
            physical_block_size: Some(512),
            model: None,
            rotational: None,
            stack: Vec::new(),
        };
        let root = SysRoot::under(r);
        let mut got = refusals_at(&root, &facts, true);
        let unprobed = got.split_off(3);
        assert_eq!(
            got,
            vec![
                Refusal::Mounted {
                    device: "loop9p1".into(),
                    mount_point: "/mnt/data".into()
                },
                Refusal::Swap {
                    device: "loop9p1".into()
                },
                Refusal::Held {
                    device: "loop9p1".into(),
                    holders: vec!["dm-0".into()]
                },
            ]
        );
        assert!(
            matches!(unprobed.as_slice(), [Refusal::Unprobed { reason }] if reason.contains("cannot open")),
            "{unprobed:?}"
        );
        let text: Vec<String> = got.iter().map(|r| r.to_string()).collect();
        assert!(text[0].contains("mounted on /mnt/data"));
        assert!(text[2].contains("dm-0"));
        // The same device with nothing on it passes.
        std::fs::write(
            r.join("proc/self/mountinfo"),
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n",
        )
        .unwrap();
        std::fs::write(r.join("proc/swaps"), "Filename Type Size Used Priority\n").unwrap();
        std::fs::remove_file(r.join("sys/class/block/loop9p1/holders/dm-0")).unwrap();
        std::fs::create_dir_all(r.join("dev")).unwrap();
        std::fs::File::create(&facts.path)
            .unwrap()
            .set_len(facts.size_bytes)
            .unwrap();
        assert_eq!(refusals_at(&root, &facts, true), vec![]);
    }

    /// A captured tree: dm-0, an LVM volume with 4 KiB blocks, over two
    /// 512-byte disks, one of them through a partition.
    #[test]
    fn a_stack_is_read_and_its_largest_block_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(r, "sys/class/block/dm-0/queue/logical_block_size", "512\n");
        write(
            r,
            "sys/class/block/dm-0/queue/physical_block_size",
            "4096\n",
        );
        write(r, "sys/class/block/dm-0/slaves/sdb1", "");
        write(r, "sys/class/block/dm-0/slaves/sda", "");
        write(r, "sys/class/block/sda/queue/logical_block_size", "512\n");
        write(r, "sys/class/block/sda/queue/physical_block_size", "512\n");
        // A partition's queue is its disk's: in sysfs the partition's
        // entry links into the disk's directory.
        write(r, "sys/devices/sdb/queue/logical_block_size", "512\n");
        write(r, "sys/devices/sdb/queue/physical_block_size", "4096\n");
        std::fs::create_dir_all(r.join("sys/devices/sdb/sdb1")).unwrap();
        std::os::unix::fs::symlink("../../devices/sdb/sdb1", r.join("sys/class/block/sdb1"))
            .unwrap();
        let stack = stack_at(&SysRoot::under(r), "dm-0");
        let names: Vec<&str> = stack.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["dm-0", "sda", "sdb1"]);
        assert_eq!(stack[2].logical_block_size, Some(512));
        assert_eq!(stack[2].physical_block_size, Some(4096));
        let facts = |stack: Vec<Layer>, logical, physical| DeviceFacts {
            path: "/dev/dm-0".into(),
            name: "dm-0".into(),
            major: 254,
            minor: 0,
            partitions: Vec::new(),
            size_bytes: 1 << 30,
            logical_block_size: Some(logical),
            physical_block_size: Some(physical),
            model: None,
            rotational: None,
            stack,
        };
        let mut top = stack.clone();
        top[2].physical_block_size = Some(512);
        let lv = facts(top, 512, 4096);
        let floor = lv.block_floor().unwrap();
        assert_eq!((floor.bytes, floor.layer.as_str()), (4096, "dm-0"));
        let w = lv.block_warnings(&[256, 512, 4096, 1 << 20, 6144]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("256 B") && w[0].contains("dm-0's physical block size (4 KiB)"));
        assert!(w[2].contains("6 KiB"), "{w:?}");
        // 512-byte volume over a 4 KiB disk: the disk sets the floor.
        let mut deep = stack.clone();
        deep[0].physical_block_size = Some(512);
        let lv = facts(deep, 512, 512);
        let w = lv.block_warnings(&[512, 4096]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains(
                "physical block size of sdb1, which dm-0 is built on (dm-0 over sda over sdb1)"
            ),
            "{w:?}"
        );
        let plan = plan_text(&lv, &[512, 4096], None, None, Profile::Quick);
        assert!(
            plan.contains("smaller ones through the page cache"),
            "{plan}"
        );
        let both = plan_text(&lv, &[512, 4096], Some(&IoMode::BOTH), None, Profile::Quick);
        assert!(
            both.contains("once in each mode: buffered (")
                && both.contains("then direct (O_DIRECT"),
            "{both}"
        );
        let direct = plan_text(&lv, &[512], Some(&[IoMode::Direct]), None, Profile::Quick);
        assert!(direct.contains("in one mode: direct"), "{direct}");
        assert!(
            plan.contains("dm-0 512/512 over sda 512/512 over sdb1 512/4096"),
            "{plan}"
        );
        assert!(plan.contains("warning: block size 512 B"), "{plan}");
        // A plain disk whose own sizes are all there is.
        let plain = facts(Vec::new(), 512, 512);
        assert!(plain.block_warnings(&[512, 4096]).is_empty());
        assert_eq!(plain.block_warnings(&[256]).len(), 1);
    }

    #[test]
    fn the_root_disk_is_refused() {
        // Whatever holds / is mounted; it must never pass the checks.
        let Some(fs) = sysgauge_host::fs_info(Path::new("/")) else {
            return;
        };
        let Some(dev) = fs.source.filter(|s| s.starts_with("/dev/")) else {
            return;
        };
        let Ok(facts) = inspect(Path::new(&dev)) else {
            return;
        };
        let r = refusals(&facts, true);
        assert!(
            r.iter().any(|x| matches!(x, Refusal::Mounted { .. })),
            "{dev}: {r:?}"
        );
    }
}
