//! The command line (clap derive): the top-level command and the option
//! groups several commands share. Each command's own options are declared
//! beside it, in `commands/NAME.rs`. Only the binary knows clap; options
//! are turned into validated configuration before any work starts.

use crate::commands::{
    baseline::BaselineArgs,
    chart::ChartArgs,
    clock::ClockArgs,
    compare::CompareArgs,
    completions::{CompletionsArgs, ManArgs},
    cpu::CpuArgs,
    crypto::CryptoArgs,
    disk::DiskArgs,
    fleet::FleetArgs,
    host::HostArgs,
    import::ImportArgs,
    list::ListArgs,
    listen::ListenArgs,
    mem::MemArgs,
    net::NetArgs,
    ping::PingArgs,
    procs::ProcsArgs,
    report::ReportArgs,
    results::ResultsArgs,
    run::RunArgs,
    spawn::SpawnArgs,
    ssh::SshArgs,
    startup::StartupArgs,
    sweep::SweepArgs,
};
use crate::values::{GroupBy, KeyValue, NiceSize, Seconds};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use sysgauge_core::Selector;
use sysgauge_twoping::auth::Digest;

#[derive(Debug, Parser)]
#[command(
    name = "sysgauge",
    version,
    about = "Measure how fast a machine really is, and compare machines honestly",
    long_about = "Measure how fast a machine really is, and compare machines honestly.\n\n\
                  `sysgauge run` runs a bounded-time suite and stores the results; the other \
                  subcommands answer specific questions. Exit codes: 0 ok, 1 a benchmark \
                  failed, 2 usage or fatal error, 130 interrupted by Ctrl-C (143 by SIGTERM, 129 by SIGHUP)."
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
    /// Time the system's hash programs (sha256sum, b2sum, ...) and dd over K copies
    /// of a text corpus: process start-up against throughput, the mcspeed method.
    Sweep(SweepArgs),
    /// Show the facts about this machine that are stored with every run.
    Host(HostArgs),
    /// List every benchmark id with its description and unit.
    List(ListArgs),
    /// Work with stored results: list, show, export, history, delete, sync.
    Results(ResultsArgs),
    /// Classic CPU kernels in iterations/s, thread scaling, and integer/float/memory indexes.
    Cpu(CpuArgs),
    /// Memory: copy bandwidth (mbw style), STREAM kernels, latency by working set, tmpfs writes.
    Mem(MemArgs),
    /// Measure a disk: sequential, rewrite, per-character, random seeks and
    /// file operations on a file system, or raw writes to a block device.
    Disk(DiskArgs),
    /// Network throughput, connection rate, packet rate and latency, over
    /// loopback or to a peer running `sysgauge listen --serve`.
    Net(NetArgs),
    /// Ping hosts with the 2ping protocol: RTT, and lost pings split into
    /// outbound and inbound.
    Ping(PingArgs),
    /// Answer 2ping pings (and with --serve, be the peer of `sysgauge net`).
    Listen(ListenArgs),
    /// An `openssl speed`-style table (ciphers, digests, signatures, key agreement) from sysgauge's kernels.
    Crypto(CryptoArgs),
    /// Measure each CPU's effective clock and compare it with its nominal and reported clock.
    Clock(ClockArgs),
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
    /// The reference baseline compiled in: show it, or make a new one from a stored run.
    Baseline(BaselineArgs),
    /// Import results: sysgauge JSON, CSV, or other tools' output (openssl speed, fio, hyperfine, sysbench, mbw, nbench, Bonnie++, YABS).
    Import(ImportArgs),
    /// Send stored runs or result files to a results server (`sysgauge serve`).
    Upload(crate::commands::upload::UploadArgs),
    /// Compare machines: ratios to a reference, means per family, confidence intervals.
    Compare(CompareArgs),
    /// Write a self-contained HTML report comparing machines, with charts.
    Report(ReportArgs),
    /// Draw one comparison chart as PNG or SVG.
    Chart(ChartArgs),
    /// Measure many machines over SSH (a host list or an Ansible inventory)
    /// and bring every result home.
    Fleet(FleetArgs),
    /// Serve a results site over the results database: browse, compare,
    /// and take uploads from other machines with a token.
    Serve(crate::commands::serve::ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the man page (sysgauge(1)), or write one page per command into a directory.
    Man(ManArgs),
}

/// The results database, the one option every command that reads or
/// writes results shares.
#[derive(Debug, Clone, Args)]
pub struct DbArg {
    /// Results database: a SQLite file, or a PostgreSQL URL
    /// (postgres://USER@HOST/DB) (default: $XDG_DATA_HOME/sysgauge/sysgauge.db).
    // The value is not shown in --help: a URL in SYSGAUGE_DB may carry a
    // password.
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "SYSGAUGE_DB",
        hide_env_values = true,
        global = true
    )]
    pub db: Option<PathBuf>,
}

/// Which benchmarks a measuring command runs: one grammar for every
/// command (docs/families/README.md, "Choosing cases").
#[derive(Debug, Clone, Default, Args)]
pub struct SelectArgs {
    /// Run only these: family names, benchmark ids, or ids without their
    /// family (`hash`, `hash.md5`, `md5`), comma-separated.
    #[arg(long, value_name = "NAME[,...]", value_delimiter = ',')]
    pub only: Vec<Selector>,

    /// Leave these out (same names as --only).
    #[arg(long, value_name = "NAME[,...]", value_delimiter = ',')]
    pub skip: Vec<Selector>,
}

/// Where machines come from and how files are read (compare, report, chart).
#[derive(Debug, Clone, Args)]
pub struct MachineArgs {
    /// Machines to compare: fleet aliases, host names or machine-id
    /// prefixes (each machine with all of its results: per case its newest),
    /// run labels, run numbers or run-id prefixes, NAME@RUN (one run of a
    /// machine), or files (JSON, CSV, other tools' outputs).
    /// Default: every machine in the database.
    #[arg(value_name = "RUN|HOST|FILE")]
    pub machines: Vec<String>,

    /// The machine the others are divided by (default: the first one named).
    #[arg(long, value_name = "RUN|HOST")]
    pub reference: Option<String>,

    /// Only these families (comma-separated): sysgauge's, or an imported
    /// tool's (`openssl`, `mbw`, `bonnie`, `nbench`, `hyperfine`, `fio`,
    /// `sysbench`, a CSV's own).
    #[arg(long, value_name = "FAMILY[,...]", value_delimiter = ',')]
    pub family: Vec<String>,

    #[command(flatten)]
    pub db: DbArg,

    /// Host name for files of `openssl speed` output (default: the file's name).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,

    /// Leave out numbers measured while the machine was disturbed (other
    /// processes, steal, throttling, waits); by default they are marked `!`.
    #[arg(long)]
    pub exclude_disturbed: bool,
}

#[derive(Debug, Args)]
pub struct GroupArgs {
    /// Put the hosts in groups and show each case's median per group and
    /// the hosts that stand out from their group: `group` (the inventory
    /// groups of `fleet run`), `cpu` (CPU model), `arch`, or `tag:NAME` (a
    /// run tag or inventory variable).
    #[arg(long, value_name = "group|cpu|arch|tag:NAME")]
    pub group_by: Option<GroupBy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// A few milliseconds per case: a smoke test, not a measurement.
    Tiny,
    /// The default: `run` takes about 45 seconds on a 2-core machine, one
    /// family a few seconds, `sweep` about a minute and a half.
    Quick,
    /// Every block size, more time per case: `run` takes about 6 minutes on
    /// a 2-core machine, `sweep` several.
    Standard,
    /// Everything, longest time per case.
    Full,
}

/// Options shared by every measuring subcommand.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    #[command(flatten)]
    pub db: DbArg,

    /// Also write the run record as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// A label stored with the run (e.g. "after BIOS update").
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,

    /// A KEY=VALUE tag stored with the run; repeat for more.
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<KeyValue>,

    /// Timed repetitions per case; the median is reported (default 5; in
    /// `sysgauge ssh`, transfers per combination, default 3).
    #[arg(long, value_name = "N")]
    pub repetitions: Option<u64>,

    /// Untimed warm-up repetitions per case.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warmup: u32,

    /// Run every selected case N times, interleaved (round 1 of every case,
    /// then round 2 …); each case's value is the median of its rounds, and
    /// the between-round spread is shown beside the within-round spread
    /// (docs/repeatability.md).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub rounds: u32,

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

    /// Do not record what the machine did during each case (other processes'
    /// CPU, steal, iowait, pressure, clock, temperature) nor flag disturbed cases.
    #[arg(long)]
    pub no_telemetry: bool,

    /// Before measuring, wait at most SECONDS for a quiet machine: other
    /// processes below --quiet-below of the CPUs for 3 s (docs/telemetry.md); 0
    /// does not wait.
    #[arg(long, value_name = "SECONDS", default_value = "30")]
    pub wait_quiet: Seconds,

    /// Other processes' share of all CPUs, in %, below which the machine is
    /// quiet.
    #[arg(long, value_name = "PERCENT", default_value_t = sysgauge_host::quiet::DEFAULT_LIMIT_PERCENT)]
    pub quiet_below: f64,

    /// After the run, send its record to a results server (`sysgauge serve`)
    /// at URL, e.g. https://results.example.org (plain http:// only on this
    /// machine), with the token of --token-file or SYSGAUGE_TOKEN
    /// (docs/serve.md).
    #[arg(long, value_name = "URL")]
    pub upload: Option<String>,

    #[command(flatten)]
    pub upload_auth: crate::upload::TokenArgs,

    /// Measure at once, without waiting for a quiet machine (tests, scripts,
    /// fleets); also set by SYSGAUGE_NO_WAIT=1.
    #[arg(long, env = "SYSGAUGE_NO_WAIT", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_wait: bool,
}

/// `--implementation`, shared by the commands that run hash and crypto
/// cases.
#[derive(Debug, Clone, Default, Args)]
pub struct ImplementationArgs {
    /// Use this implementation instead of the fastest verified one on this
    /// CPU: NAME for every hash and cipher that has it (`aws-lc`,
    /// `rustcrypto`, `sysgauge`, …), or ALG=NAME for one (`sha512=aws-lc`),
    /// comma-separated. `sysgauge list --implementations` shows the names.
    #[arg(long, value_name = "[ALG=]NAME[,...]", value_delimiter = ',')]
    pub implementation: Vec<String>,
}

/// 2ping options shared by `ping` and `listen`, named as the reference
/// `2ping` program names them.
#[derive(Debug, Clone, Args)]
pub struct TwopingArgs {
    /// Use IPv4 only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,

    /// Use IPv6 only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,

    /// UDP port of the 2ping listener.
    #[arg(long, value_name = "PORT", default_value_t = 15998)]
    pub port: u16,

    /// Pad packets to at least this size.
    #[arg(long, value_name = "BYTES", default_value = "128")]
    pub min_packet_size: NiceSize,

    /// Never send packets larger than this.
    #[arg(long, value_name = "BYTES", default_value = "512")]
    pub max_packet_size: NiceSize,

    /// Seconds to wait before asking the peer about an unanswered ping.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub inquire_wait: f64,

    /// HMAC key shared with the peer (the reference's --auth; also read
    /// from SYSGAUGE_2PING_KEY, which keeps it out of `ps`).
    #[arg(
        long,
        value_name = "KEY",
        env = "SYSGAUGE_2PING_KEY",
        hide_env_values = true
    )]
    pub auth: Option<String>,

    /// HMAC digest: hmac-md5 (the reference's default), hmac-sha1,
    /// hmac-sha256 or hmac-sha512.
    #[arg(long, value_name = "DIGEST", default_value = "hmac-md5")]
    pub auth_digest: Digest,

    /// Print only the start and the statistics, no line per packet.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Send this notice text in every packet (the peer shows it; at most
    /// 256 bytes).
    #[arg(long, value_name = "TEXT")]
    pub notice: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `--help` shows environment values unless told not to; SYSGAUGE_DB
    /// may hold a URL with its password.
    #[test]
    fn help_never_shows_the_database_url() {
        fn visit(cmd: &clap::Command, seen: &mut usize) {
            for a in cmd.get_arguments().filter(|a| a.get_id() == "db") {
                *seen += 1;
                assert!(a.is_hide_env_values_set(), "{}", cmd.get_name());
            }
            for sub in cmd.get_subcommands() {
                visit(sub, seen);
            }
        }
        let mut seen = 0;
        visit(&Cli::command(), &mut seen);
        assert!(seen > 10, "--db found {seen} times");
    }
}
