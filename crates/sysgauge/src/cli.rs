//! The command line (clap derive). Only this module and `config` know clap;
//! everything is turned into a validated `Config` before any work starts.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "sysgauge",
    version,
    about = "Measure how fast a machine really is, and compare machines honestly",
    long_about = "Measure how fast a machine really is, and compare machines honestly.\n\n\
                  `sysgauge run` runs a bounded-time suite and stores the results; the other \
                  subcommands answer specific questions. Exit codes: 0 ok, 1 a benchmark \
                  failed, 2 usage or fatal error, 130 interrupted."
)]
pub struct Cli {
    /// When to use colour on stderr.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the benchmark suite (all families, or those chosen) and store the results.
    Run(RunArgs),
    /// Show the facts about this machine that are stored with every run.
    Host(HostArgs),
    /// List every benchmark id with its description and unit.
    List(ListArgs),
    /// Work with stored results: list, show, export, delete.
    Results(ResultsArgs),
    /// Memory: copy bandwidth (mbw style), STREAM kernels, latency by working set, tmpfs writes.
    Mem(MemArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// A few milliseconds per case: a smoke test, not a measurement.
    Tiny,
    /// About a minute on a 2-core machine (the default).
    Quick,
    /// Several minutes: every block size, more time per case.
    Standard,
    /// Everything, longest time per case.
    Full,
}

/// Options shared by every measuring subcommand.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// Results database (default: $XDG_DATA_HOME/sysgauge/sysgauge.db).
    #[arg(long, value_name = "PATH", env = "SYSGAUGE_DB")]
    pub db: Option<PathBuf>,

    /// Also write the run record as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// A label stored with the run (e.g. "after BIOS update").
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,

    /// A KEY=VALUE tag stored with the run; repeat for more.
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,

    /// Timed repetitions per case (the median is reported).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repetitions: u32,

    /// Untimed warm-up repetitions per case.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warmup: u32,

    /// How long the run may take.
    #[arg(long, value_enum, default_value_t = ProfileArg::Quick)]
    pub profile: ProfileArg,

    /// Do not store the run in the results database.
    #[arg(long)]
    pub no_store: bool,

    /// Directory in which scratch files are created (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    pub scratch_dir: Option<PathBuf>,

    /// Spread (coefficient of variation, in %) above which a case is marked noisy.
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0)]
    pub noise_threshold: f64,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Run only these families or benchmark ids (comma-separated).
    #[arg(long, value_name = "FAMILY[,...]", value_delimiter = ',')]
    pub only: Vec<String>,

    /// Skip these families or benchmark ids (comma-separated).
    #[arg(long, value_name = "FAMILY[,...]", value_delimiter = ',')]
    pub skip: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MemArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Bytes per array for the copy and STREAM tests, and of the /dev/shm file
    /// (nice numbers: 256MiB, 1G). Default: 4 × the last-level cache, bounded by
    /// the profile and by available memory.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// Block size of the block-copy test (default 256KiB).
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<String>,

    /// Thread counts for the STREAM kernels (default: 1 and all CPUs).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',')]
    pub threads: Vec<String>,

    /// Working sets of the latency test (default: 4KiB doubling to beyond the
    /// last-level cache).
    #[arg(long, value_name = "SIZE[,SIZE...]")]
    pub working_sets: Option<String>,

    /// Forbid transparent huge pages for the buffers (default: ask for them).
    #[arg(long)]
    pub no_huge_pages: bool,

    /// Run only these tests (ids like mem.memcpy, or without the `mem.`:
    /// memcpy, loop-copy, block-copy, stream-triad, latency, tmpfs-write, ...).
    #[arg(long, value_name = "TEST[,...]", value_delimiter = ',')]
    pub only: Vec<String>,
}

#[derive(Debug, Args)]
pub struct HostArgs {
    /// Print the facts as JSON.
    #[arg(long)]
    pub json: bool,

    /// Describe the filesystem of this directory as the scratch directory.
    #[arg(long, value_name = "DIR")]
    pub scratch_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this family.
    #[arg(long, value_name = "FAMILY")]
    pub family: Option<String>,

    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Results database (default: $XDG_DATA_HOME/sysgauge/sysgauge.db).
    #[arg(long, value_name = "PATH", env = "SYSGAUGE_DB", global = true)]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub action: ResultsAction,
}

#[derive(Debug, Subcommand)]
pub enum ResultsAction {
    /// List stored runs, newest first.
    List {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one run: host, summary table, findings.
    Show {
        /// Run number (from `results list`) or a prefix of its run id.
        id: String,
    },
    /// Export one run.
    Export {
        /// Run number (from `results list`) or a prefix of its run id.
        id: String,
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Json)]
        format: ExportFormatArg,
        /// Write to FILE instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Delete one run and all its results.
    Delete {
        /// Run number (from `results list`) or a prefix of its run id.
        id: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    Json,
    Csv,
    Md,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
