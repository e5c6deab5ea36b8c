//! The `disk` family: Bonnie++-style tests of a file system (sequential
//! block write and read, rewrite, per-character write and read, random
//! seeks, file creation, stat and deletion) and, on request, `dd`-style
//! writes to a raw block device to show the effect of the block size.
//!
//! Every test reports throughput and the latency of its operations (median,
//! 99th percentile, maximum), and catches the usual traps of disk
//! measurement (see `traps`). Block tests use O_DIRECT where the file
//! system takes it, so they measure the device rather than the page cache;
//! where it does not, they fall back to buffered I/O with fdatasync and
//! cache dropping, and say so.
//!
//! Work per repetition is calibrated by time (the first pass runs to the
//! repetition target and doubles as warm-up), never more than one pass over
//! the test file, so a slow SD card and a fast NVMe drive both finish in
//! bounded time. Inside `sysgauge run` the family runs a short slice
//! (sequential 1 MiB write and read, 4 KiB random reads, file creation);
//! `sysgauge disk` runs every test.

pub mod bonnie;
pub mod files;
pub mod fio;
pub mod io;
pub mod passes;
pub mod qd;
pub mod raw;
pub mod report;
pub mod seek;
pub mod seq;
pub mod signature;
pub mod target;
pub mod traps;
pub mod yabs;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Metric, Params, Plan, Profile, RunCtx, Unit,
};
use sysgauge_family::family::one_per_kind;
use sysgauge_family::util::by_profile;

/// Default block sizes of the block tests.
pub const DEFAULT_BLOCK_SIZES: [u64; 3] = [4 << 10, 64 << 10, 1 << 20];
/// Default block sizes of raw-device writes: below, at and above common
/// logical block sizes.
pub const RAW_BLOCK_SIZES: [u64; 4] = [256, 512, 4 << 10, 1 << 20];
/// Largest block size accepted.
pub const MAX_BLOCK_SIZE: u64 = 64 << 20;
/// Block size of the random-seek test.
pub const SEEK_BLOCK: u64 = 4 << 10;
/// Concurrent seekers (fixed, not per CPU, so machines compare).
pub const SEEK_WORKERS: u64 = 4;
/// Share of random-seek operations that write the block back, in the full
/// suite (Bonnie++ writes back 10 %).
pub const SEEK_WRITE_PERCENT: u64 = 10;

/// What the command line chose for the disk family.
#[derive(Debug, Clone, Default)]
pub struct DiskOptions {
    /// Directory on the file system to test; `None` is the run's scratch
    /// directory.
    pub path: Option<PathBuf>,
    /// Test file size (raw mode: bytes written per block size); `None`
    /// follows the profile.
    pub size: Option<u64>,
    pub block_sizes: Option<Vec<u64>>,
    /// Every test (`sysgauge disk`) rather than the short slice of
    /// `sysgauge run`.
    pub full_suite: bool,
    /// Length of one repetition; `None` takes the runner's share of the
    /// family's time slice.
    pub repetition_time: Option<Duration>,
    /// Raw device mode: only `disk.raw-write`, on this device.
    pub device: Option<raw::RawTarget>,
    /// The I/O modes of the block-size sweeps (`--io`), each size run in
    /// each: cases then carry the `direct` param from the start (true or
    /// false, as results always recorded it, so a direct row is the case
    /// stored before and fio's imports of the same job). `None` keeps the
    /// old way (direct where the kernel takes the size, else buffered),
    /// which `sysgauge run`'s slice uses.
    pub io_modes: Option<Vec<IoMode>>,
}

/// How a block case does its I/O, chosen for every size alike so sizes
/// compare like for like (as dd writes every size the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    /// Through the page cache: each write pass ends with fdatasync, the
    /// file's (or device's) cached pages are dropped before every pass.
    Buffered,
    /// O_DIRECT. A size the kernel refuses direct: on a raw device the
    /// enclosing logical blocks are read and written whole (the
    /// read-modify-write the device forces, done in user space); on a file
    /// system the case is skipped.
    Direct,
}

impl IoMode {
    pub const BOTH: [IoMode; 2] = [IoMode::Buffered, IoMode::Direct];

    pub fn as_str(self) -> &'static str {
        match self {
            IoMode::Buffered => "buffered",
            IoMode::Direct => "direct",
        }
    }

    pub fn parse(s: &str) -> Option<IoMode> {
        match s {
            "buffered" => Some(IoMode::Buffered),
            "direct" => Some(IoMode::Direct),
            _ => None,
        }
    }
}

impl DiskOptions {
    /// Block sizes of the block tests.
    pub fn block_sizes(&self) -> Vec<u64> {
        match &self.block_sizes {
            Some(v) if !v.is_empty() => v.clone(),
            _ if self.device.is_some() => RAW_BLOCK_SIZES.to_vec(),
            _ => DEFAULT_BLOCK_SIZES.to_vec(),
        }
    }

    pub fn max_block_size(&self) -> u64 {
        self.block_sizes()
            .into_iter()
            .chain([SEEK_BLOCK])
            .max()
            .unwrap_or(1 << 20)
    }

    /// How long one repetition should last for this case.
    pub fn repetition_target(&self, ctx: &RunCtx) -> Duration {
        self.repetition_time
            .unwrap_or_else(|| ctx.repetition_target())
            .max(ctx.settings().min_repetition())
    }
}

/// Repetition length of the full suite per profile: the suite runs about
/// twenty cases, each warm-up plus five repetitions.
pub fn suite_repetition_time(profile: Profile) -> Duration {
    Duration::from_millis(by_profile(profile, [4, 200, 1000, 3000]))
}

/// The tests of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    SeqWrite,
    SeqRead,
    Rewrite,
    Putc,
    Getc,
    RandomSeek,
    RandRw,
    Create,
    Stat,
    Delete,
    RawWrite,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::SeqWrite,
        Kind::SeqRead,
        Kind::Rewrite,
        Kind::Putc,
        Kind::Getc,
        Kind::RandomSeek,
        Kind::RandRw,
        Kind::Create,
        Kind::Stat,
        Kind::Delete,
        Kind::RawWrite,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Kind::SeqWrite => "disk.seq-write",
            Kind::SeqRead => "disk.seq-read",
            Kind::Rewrite => "disk.rewrite",
            Kind::Putc => "disk.putc",
            Kind::Getc => "disk.getc",
            Kind::RandomSeek => "disk.random-seek",
            Kind::RandRw => "disk.randrw",
            Kind::Create => "disk.create",
            Kind::Stat => "disk.stat",
            Kind::Delete => "disk.delete",
            Kind::RawWrite => "disk.raw-write",
        }
    }

    fn summary(self) -> &'static str {
        match self {
            Kind::SeqWrite => "sequential block writes to a file (O_DIRECT where possible)",
            Kind::SeqRead => "sequential block reads from a file (O_DIRECT where possible)",
            Kind::Rewrite => "read each block, change it, write it back, sequentially",
            Kind::Putc => "per-character writes through a buffered stream (putc)",
            Kind::Getc => "per-character reads through a buffered stream (getc)",
            Kind::RandomSeek => {
                "random block reads (with a share written back) by several workers, seeks/s"
            }
            Kind::RandRw => {
                "random reads and writes mixed at a queue depth (YABS's fio job: 50/50, depth 64, 2 jobs, O_DIRECT), MB/s"
            }
            Kind::Create => "empty files created in a directory tree, files/s",
            Kind::Stat => "stat of files in a directory tree, files/s",
            Kind::Delete => "files deleted from a directory tree, files/s",
            Kind::RawWrite => {
                "sequential writes to a raw block device (--device, destroys its data)"
            }
        }
    }

    fn unit(self) -> Unit {
        match self {
            Kind::RandomSeek | Kind::Create | Kind::Stat | Kind::Delete => Unit::OpsPerSec,
            _ => Unit::MBps,
        }
    }
}

/// One disk test.
pub struct DiskBenchmark {
    kind: Kind,
    options: Arc<DiskOptions>,
}

impl DiskBenchmark {
    pub fn new(kind: Kind, options: Arc<DiskOptions>) -> DiskBenchmark {
        DiskBenchmark { kind, options }
    }
}

fn block_case(bs: u64) -> Params {
    Params::new().with("block_size", bs)
}

/// A sweep's cases: every size in each chosen mode (mode by mode, so a
/// mode's sizes sit together), or every size once without `--io`.
fn sweep_cases(o: &DiskOptions) -> Vec<Params> {
    match &o.io_modes {
        Some(modes) => modes
            .iter()
            .flat_map(|m| {
                o.block_sizes()
                    .into_iter()
                    .map(move |bs| block_case(bs).with("direct", *m == IoMode::Direct))
            })
            .collect(),
        None => o.block_sizes().into_iter().map(block_case).collect(),
    }
}

/// A queue-depth case: YABS's job at block size `bs`.
fn qd_case(bs: u64) -> Params {
    Params::new()
        .with("block_size", bs)
        .with("iodepth", qd::QD_DEPTH)
        .with("numjobs", qd::QD_JOBS)
        .with("rwmixread", qd::QD_READ_PERCENT)
}

fn seek_case(write_percent: u64) -> Params {
    Params::new()
        .with("block_size", SEEK_BLOCK)
        .with("workers", SEEK_WORKERS)
        .with("write_percent", write_percent)
}

impl Benchmark for DiskBenchmark {
    fn id(&self) -> &str {
        self.kind.id()
    }

    fn describe(&self) -> Description {
        let d = Description::new(self.kind.summary(), self.kind.unit(), Better::Higher)
            .depends_on(
                "the page cache, dirty pages and the file system's state (its journal, inodes freed just before)",
            );
        match self.kind {
            // Create passes no longer delete between passes (files.rs).
            Kind::Create => d.version(2),
            _ => d,
        }
    }

    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        let o = &self.options;
        if o.device.is_some() {
            return match self.kind {
                Kind::RawWrite => sweep_cases(o),
                _ => Vec::new(),
            };
        }
        let orders = || {
            ["sequential", "random"]
                .into_iter()
                .map(|order| Params::new().with("order", order))
                .collect::<Vec<_>>()
        };
        if !o.full_suite {
            // The slice inside `sysgauge run`.
            return match self.kind {
                Kind::SeqWrite | Kind::SeqRead => vec![block_case(1 << 20)],
                Kind::RandomSeek => vec![seek_case(0)],
                Kind::Create => vec![Params::new().with("order", "sequential")],
                _ => Vec::new(),
            };
        }
        match self.kind {
            Kind::SeqWrite | Kind::SeqRead | Kind::Rewrite => sweep_cases(o),
            Kind::Putc | Kind::Getc => vec![Params::new()],
            Kind::RandomSeek => vec![seek_case(0), seek_case(SEEK_WRITE_PERCENT)],
            Kind::RandRw => {
                let sizes = match &o.block_sizes {
                    Some(v) if !v.is_empty() => v.clone(),
                    _ => qd::QD_BLOCK_SIZES.to_vec(),
                };
                sizes.into_iter().map(qd_case).collect()
            }
            Kind::Create | Kind::Stat | Kind::Delete => orders(),
            Kind::RawWrite => Vec::new(),
        }
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let o = &self.options;
        let block = || {
            params
                .get_u64("block_size")
                .filter(|&b| b > 0 && b <= MAX_BLOCK_SIZE)
                .ok_or_else(|| BenchError::failed("missing or invalid block_size"))
        };
        let order = || match params.get_str("order") {
            Some("sequential") => Ok(files::Order::Sequential),
            Some("random") => Ok(files::Order::Random),
            _ => Err(BenchError::failed("missing or invalid order")),
        };
        // A sweep's cases name their mode; the run slice's do not (then
        // direct where the kernel takes the size, else buffered).
        let mode = params
            .get_bool("direct")
            .map(|d| if d { IoMode::Direct } else { IoMode::Buffered });
        match self.kind {
            Kind::SeqWrite => seq::seq_write(ctx, o, block()?, mode),
            Kind::SeqRead => seq::seq_read(ctx, o, block()?, mode),
            Kind::Rewrite => seq::rewrite(ctx, o, block()?, mode),
            Kind::Putc => seq::putc(ctx, o),
            Kind::Getc => seq::getc(ctx, o),
            Kind::RandomSeek => seek::random_seek(
                ctx,
                o,
                block()?,
                params
                    .get_u64("workers")
                    .unwrap_or(SEEK_WORKERS)
                    .clamp(1, 64),
                params.get_u64("write_percent").unwrap_or(0).min(100),
            ),
            Kind::RandRw => qd::randrw(
                ctx,
                o,
                block()?,
                params
                    .get_u64("iodepth")
                    .unwrap_or(qd::QD_DEPTH)
                    .clamp(1, 4096),
                params
                    .get_u64("numjobs")
                    .unwrap_or(qd::QD_JOBS)
                    .clamp(1, 64),
                params
                    .get_u64("rwmixread")
                    .unwrap_or(qd::QD_READ_PERCENT)
                    .min(100),
            ),
            Kind::Create => files::run(ctx, o, files::Op::Create, order()?),
            Kind::Stat => files::run(ctx, o, files::Op::Stat, order()?),
            Kind::Delete => files::run(ctx, o, files::Op::Delete, order()?),
            Kind::RawWrite => raw::raw_write(ctx, o, block()?, mode),
        }
    }
}

sysgauge_family::register_family! {
    name: "disk", options: DiskOptions, in_default_run: true,
    cpu_bound: false, summary_first: false,
    budget_seconds: [0.4, 6.0, 40.0, 120.0], report: Some(report::disk_report),
    summary: "file-system and raw-device I/O: sequential, rewrite, per-character, random seeks, file operations",
}

/// Every disk benchmark, in display order.
pub fn benchmarks(options: &Arc<DiskOptions>) -> Vec<Box<dyn Benchmark>> {
    one_per_kind(&Kind::ALL, |k| DiskBenchmark::new(k, options.clone()))
}

#[cfg(test)]
mod tests;
