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
    /// Measure what it costs to start a process, by every method, with a
    /// parent-size sweep and one spawner per CPU.
    Spawn(SpawnArgs),
    /// Time how long commands take to start and finish, against a baseline.
    Startup(StartupArgs),
    /// Show which processes burn user and kernel time (from /proc/PID/stat).
    Procs(ProcsArgs),
    /// Find the fastest SSH cipher, MAC and key exchange: probe what the
    /// server accepts, time transfers and handshakes, recommend an ssh_config.
    Ssh(SshArgs),
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
pub struct SpawnArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Only these methods (fork-exit, fork-exec, vfork-exec, clone-vfork-exec,
    /// posix-spawn, std-command, popen-sh, system); comma-separated.
    #[arg(long = "method", value_name = "NAME[,...]", value_delimiter = ',')]
    pub methods: Vec<String>,

    /// Targets to start: `static` (the embedded static no-op program) and/or
    /// `true` (/bin/true); comma-separated.
    #[arg(long = "target", value_name = "static|true", value_delimiter = ',')]
    pub targets: Vec<String>,

    /// Memory the parent holds (touched) while spawning, e.g. `0,256MiB,1GiB`;
    /// whole MiB.
    #[arg(long = "parent-size", value_name = "SIZE[,...]", value_delimiter = ',')]
    pub parent_sizes: Vec<String>,

    /// Spawning threads, e.g. `1,4` (`all` = one per CPU).
    #[arg(long = "spawners", value_name = "N[,...]", value_delimiter = ',')]
    pub spawners: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StartupArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// The baseline command, e.g. "perl -e ''" (split like a shell would,
    /// then executed directly unless --shell).
    #[arg(value_name = "CMD")]
    pub command: String,

    /// A command to compare with the baseline; repeat for more.
    #[arg(long = "vs", value_name = "CMD")]
    pub vs: Vec<String>,

    /// Run each command through `sh -c` instead of executing it directly.
    #[arg(long)]
    pub shell: bool,

    /// Minimum number of timed runs per command.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub runs: u64,

    /// Minimum total time of the timed runs per command, in seconds
    /// (`3`, `0.5`, `500ms`); default: the profile's (3 s for quick).
    #[arg(long, value_name = "SECONDS")]
    pub min_time: Option<String>,

    /// Maximum number of timed runs per command (stops even if --min-time is not reached).
    #[arg(long, value_name = "N")]
    pub max_runs: Option<u64>,

    /// Keep timing commands that exit with a non-zero status.
    #[arg(long)]
    pub ignore_failure: bool,

    /// Do not count the shared libraries each command loads.
    #[arg(long)]
    pub no_libraries: bool,

    /// Also write the timings in the startup export format (docs/output-schema.md).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatrixArg {
    /// Ciphers with a fixed MAC and kex, MACs with a fixed cipher and kex,
    /// key exchanges by handshake time: minutes.
    Factorial,
    /// Every working cipher × MAC × kex combination: hours.
    Full,
}

#[derive(Debug, Args)]
pub struct SshArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Measure against a private sshd started on 127.0.0.1 (the default).
    #[arg(long, conflicts_with = "host")]
    pub local: bool,

    /// Measure against this server instead, with your own keys or agent
    /// (batch mode: no prompts; your known_hosts decides the host key).
    #[arg(long, value_name = "[USER@]HOST[:PORT]")]
    pub host: Option<String>,

    /// Bytes of zeros per transfer (100M, 1GiB, ...); default by profile:
    /// 1M tiny, 500M quick, 1G standard, 4G full.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// Timed transfers (and handshakes) per combination; the median is the
    /// value. Takes the place of --repetitions here.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub runs: u32,

    /// Which combinations to measure.
    #[arg(long, value_enum, default_value_t = MatrixArg::Factorial)]
    pub matrix: MatrixArg,

    /// Recommend only algorithms not considered weak (no CBC, 3DES, RC4,
    /// SHA-1 or MD5 MACs, SHA-1 key exchanges) and show what that costs.
    #[arg(long)]
    pub only_secure: bool,

    /// Measure only these ciphers (comma-separated OpenSSH names).
    #[arg(long = "cipher", value_name = "NAME[,...]", value_delimiter = ',')]
    pub ciphers: Vec<String>,

    /// Measure only these MACs (comma-separated).
    #[arg(long = "mac", value_name = "NAME[,...]", value_delimiter = ',')]
    pub macs: Vec<String>,

    /// Measure only these key exchanges (comma-separated).
    #[arg(long = "kex", value_name = "NAME[,...]", value_delimiter = ',')]
    pub kex: Vec<String>,

    /// The factorial matrix's fixed cipher, used to compare MACs and key
    /// exchanges (one that uses a MAC; default aes128-ctr).
    #[arg(long, value_name = "NAME")]
    pub fixed_cipher: Option<String>,

    /// The fixed MAC, used to compare ciphers (default umac-128-etm@openssh.com).
    #[arg(long, value_name = "NAME")]
    pub fixed_mac: Option<String>,

    /// The fixed key exchange, used to compare ciphers and MACs (default curve25519-sha256).
    #[arg(long, value_name = "NAME")]
    pub fixed_kex: Option<String>,

    /// ssh's ConnectTimeout in seconds, for every connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub connect_timeout: u64,

    /// With --host: read this ssh config file instead of ~/.ssh/config (ssh -F).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,

    /// An extra ssh option KEY=VALUE (ssh -o), repeatable; it takes
    /// precedence over sysgauge's own.
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    pub ssh_options: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProcSortArg {
    User,
    System,
    Total,
    Pid,
}

#[derive(Debug, Args)]
pub struct ProcsArgs {
    /// Sort by this column (largest first; pid ascending).
    #[arg(long, value_enum, default_value_t = ProcSortArg::System)]
    pub sort: ProcSortArg,

    /// Show this many processes (0 = all).
    #[arg(long, short = 'n', value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Take two snapshots this many seconds apart and show CPU % over the interval.
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<f64>,

    /// Print as JSON (docs/output-schema.md).
    #[arg(long)]
    pub json: bool,

    /// Read this /proc instead of /proc (for tests and saved copies).
    #[arg(long, value_name = "DIR", default_value = "/proc", hide = true)]
    pub proc_root: PathBuf,
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
