//! `sysgauge disk`: every disk test on one file system (default: the
//! current directory's), or raw writes to a block device with
//! `--device /dev/X --destroy-data`.
//!
//! The command validates everything before measuring: sizes, the target
//! directory, and in raw mode the device (named exactly, not mounted, not
//! swap, not held, no signature unless --force). Without --destroy-data raw
//! mode only explains what it would do and exits 2. Results are stored as
//! a run like any other; the table shows throughput with latency.

use crate::cli::{MeasureArgs, SelectArgs};
use crate::config::{check_writable_dir, MeasureConfig};
use crate::exit::Exit;
use crate::exit::ERROR_PREFIX;
use crate::measure;
use crate::values::NiceSize;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use sysgauge_bench::disk::{self, raw, DiskOptions, IoMode, MAX_BLOCK_SIZE};
use sysgauge_core::size::Bytes;

#[derive(Debug, Args)]
pub struct DiskArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Directory on the file system to test (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "device")]
    pub path: Option<PathBuf>,

    /// Test file size, e.g. 256MiB or 4G (default: from the profile; in raw
    /// mode the bytes written per block size).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<NiceSize>,

    /// Block sizes of the block tests, e.g. 4KiB,64KiB,1MiB (raw mode
    /// default: 256,512,4KiB,1MiB).
    #[arg(long, value_name = "SIZE[,...]", value_delimiter = ',')]
    pub block_size: Vec<NiceSize>,

    /// Raw device mode: write straight to this block device (a full path
    /// under /dev). Destroys its data; needs --destroy-data.
    #[arg(long, value_name = "/dev/X")]
    pub device: Option<PathBuf>,

    /// Really write to --device, destroying what is on it.
    #[arg(long, requires = "device")]
    pub destroy_data: bool,

    /// Write to --device even though it carries a file-system, RAID, LVM,
    /// LUKS or partition-table signature.
    #[arg(long, requires = "device")]
    pub force: bool,

    /// I/O mode of the block-size sweeps (seq-write, seq-read, rewrite;
    /// raw-write): every size buffered, every size direct (O_DIRECT), or
    /// each size in each (default: both where the file system takes
    /// O_DIRECT, else buffered).
    #[arg(long, value_name = "MODE", value_parser = ["buffered", "direct", "both"])]
    pub io: Option<String>,

    /// Tests by name or id (seq-write, disk.seq-read, ...).
    #[command(flatten)]
    pub select: SelectArgs,
}

/// Parsed and checked disk options (before any work).
pub fn options_from_args(args: &DiskArgs, cfg: &mut MeasureConfig) -> Result<DiskOptions> {
    let size = match args.size {
        Some(NiceSize(0)) => bail!("--size must be more than 0"),
        Some(NiceSize(v)) => Some(v),
        None => None,
    };
    let block_sizes = if args.block_size.is_empty() {
        None
    } else {
        let mut v: Vec<u64> = Vec::new();
        for &NiceSize(b) in &args.block_size {
            if b == 0 || b > MAX_BLOCK_SIZE {
                bail!(
                    "--block-size {}: each block size must be between 1 B and {}",
                    Bytes(b),
                    Bytes(MAX_BLOCK_SIZE)
                );
            }
            if !v.contains(&b) {
                v.push(b);
            }
        }
        Some(v)
    };
    if let (Some(s), Some(bs)) = (size, &block_sizes) {
        let max = bs.iter().copied().max().unwrap_or(0);
        if s < max {
            bail!(
                "--size {} is smaller than the largest --block-size {}",
                Bytes(s),
                Bytes(max)
            );
        }
    }
    let io_modes = match args.io.as_deref() {
        Some("buffered") => vec![IoMode::Buffered],
        Some("direct") => vec![IoMode::Direct],
        _ => IoMode::BOTH.to_vec(),
    };
    let mut o = DiskOptions {
        size,
        block_sizes,
        io_modes: Some(io_modes),
        full_suite: true,
        repetition_time: Some(disk::suite_repetition_time(cfg.profile)),
        ..DiskOptions::default()
    };
    match &args.device {
        Some(dev) => {
            o.device = Some(raw::RawTarget {
                path: dev.clone(),
                force: args.force,
                destroy_data: args.destroy_data,
            });
        }
        None => {
            let dir = match &args.path {
                Some(p) => p.clone(),
                None => std::env::current_dir()
                    .context("cannot find the current directory; pass --path DIR")?,
            };
            check_writable_dir(&dir, "--path")?;
            // A test file that cannot fit would skip every case: a usage
            // error before anything runs, as mem's impossible --size is.
            disk::target::check_space(&o, &dir, cfg.profile).map_err(|e| {
                anyhow::anyhow!("the test file does not fit on the file system of {e}")
            })?;
            if args.io.is_none() && !disk::io::direct_supported(&dir) {
                o.io_modes = Some(vec![IoMode::Buffered]);
            }
            // The run's host facts then describe the file system under test.
            cfg.scratch_base = dir.clone();
            o.path = Some(dir);
        }
    }
    Ok(o)
}

/// Raw mode's checks. `Ok(None)`: go ahead; `Ok(Some(text))`: the plan to
/// show instead (no --destroy-data); `Err`: refused.
fn check_device(o: &DiskOptions, cfg: &MeasureConfig) -> Result<Option<String>> {
    let Some(rt) = &o.device else {
        return Ok(None);
    };
    let facts = raw::inspect(&rt.path)?;
    raw::check_size(&facts, o.size)?;
    let refusals = raw::refusals(&facts, rt.force);
    if !refusals.is_empty() {
        let why: Vec<String> = refusals.iter().map(|r| r.to_string()).collect();
        bail!(
            "refusing to write to {}: {}",
            rt.path.display(),
            why.join("; ")
        );
    }
    if rt.destroy_data {
        // Up front, before anything is written (again as findings later).
        for w in facts.block_warnings(&o.block_sizes()) {
            eprintln!("{w}");
        }
    } else {
        return Ok(Some(raw::plan_text(
            &facts,
            &o.block_sizes(),
            o.io_modes.as_deref(),
            o.size,
            cfg.profile,
        )));
    }
    Ok(None)
}

pub fn run(args: DiskArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    let options = options_from_args(&args, &mut cfg)?;
    if let Some(plan) = check_device(&options, &cfg)? {
        eprint!("{plan}");
        return Ok(Exit::Fatal);
    }
    let all = disk::benchmarks(&Arc::new(options));
    let selected = measure::select(all, &args.select)?;
    let cancel = crate::signals::install()?;
    let outcome = measure::execute_family(&disk::FAMILY, &cfg, &selected, &cancel, Vec::new())?;
    let exit = measure::finish(
        &cfg,
        &outcome,
        measure::family_text(&disk::FAMILY, &outcome.record),
    )?;
    // The space checked before the run went while it ran: nothing was
    // measured, which is no success (README: 2, fatal error).
    if exit == Exit::Ok && disk::target::nothing_fit(&outcome.record.results) {
        eprintln!(
            "{ERROR_PREFIX}every case was skipped: the test file no longer fits (free space went while the run started); free some space or pass --path to another file system"
        );
        return Ok(Exit::Fatal);
    }
    Ok(exit)
}
