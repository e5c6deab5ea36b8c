//! `sysgauge spawn`: the cost of starting a process by every method, with
//! the parent-size sweep and one spawner per CPU. The same benchmarks as the
//! spawn slice of `sysgauge run` (same ids and params), over the whole
//! matrix; the profile sets the time per case. Prints the spawn tables from
//! sysgauge-report.

use crate::cli::{MeasureArgs, SelectArgs};
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::values::{thread_list, NiceSize};
use anyhow::{bail, Result};
use clap::Args;
use std::sync::Arc;
use sysgauge_bench::spawn::SpawnOptions;
use sysgauge_core::Selector;
use sysgauge_family::util::Count;

#[derive(Debug, Args)]
pub struct SpawnArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Methods by name or id (fork-exit, fork-exec, vfork-exec,
    /// clone-vfork-exec, posix-spawn, std-command, popen-sh, clone-vm-pipe,
    /// system, and the
    /// parent-size and spawners cases).
    #[command(flatten)]
    pub select: SelectArgs,

    /// The former spelling of --only for the methods.
    #[arg(
        long = "method",
        hide = true,
        value_delimiter = ',',
        conflicts_with = "only"
    )]
    pub methods: Vec<Selector>,

    /// Targets to start: `static` (the embedded static no-op program) and/or
    /// `true` (/bin/true); comma-separated.
    #[arg(long = "target", value_name = "static|true", value_delimiter = ',')]
    pub targets: Vec<sysgauge_bench::spawn::Target>,

    /// Memory the parent holds (touched) while spawning, e.g. `0,256MiB,1GiB`;
    /// whole MiB.
    #[arg(long = "parent-size", value_name = "SIZE[,...]", value_delimiter = ',')]
    pub parent_sizes: Vec<NiceSize>,

    /// Spawning threads, e.g. `1,4` (`all` = one per CPU).
    #[arg(long = "spawners", value_name = "N[,...]|all", value_delimiter = ',')]
    pub spawners: Vec<Count>,
}

/// The spawn options from the command line (the matrix: every case).
pub fn options_from(args: &SpawnArgs) -> Result<SpawnOptions> {
    let mut sizes = Vec::new();
    for &NiceSize(bytes) in &args.parent_sizes {
        if bytes % (1 << 20) != 0 {
            bail!("--parent-size {bytes} is not a whole number of MiB (e.g. 256MiB, 1GiB)");
        }
        let mib = bytes >> 20;
        if mib > 1 << 20 {
            bail!("--parent-size {bytes} is more than 1 TiB");
        }
        sizes.push(mib);
    }
    let spawners = thread_list(&args.spawners);
    if let Some(n) = spawners.iter().flatten().find_map(|&n| match n {
        Count::N(n) if n > MAX_SPAWNERS => Some(n),
        _ => None,
    }) {
        bail!("--spawners {n} is more than {MAX_SPAWNERS}");
    }
    let mut targets = args.targets.clone();
    targets.dedup();
    Ok(SpawnOptions {
        matrix: true,
        targets: non_empty(targets),
        parent_mib: non_empty(sizes),
        spawners,
    })
}

/// The most spawning threads: each holds a process slot, so a typo must
/// not fork-bomb the machine.
const MAX_SPAWNERS: usize = 1024;

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

pub fn run(args: SpawnArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let options = Arc::new(options_from(&args)?);
    // `--method` is the former spelling of `--only`.
    let only = if args.methods.is_empty() {
        &args.select.only
    } else {
        &args.methods
    };
    let selected = measure::select_from(
        sysgauge_bench::spawn::benchmarks(&options),
        only,
        &args.select.skip,
        |_| true,
    )?;
    measure::family_command(&sysgauge_bench::spawn::FAMILY, &cfg, &selected)
}
