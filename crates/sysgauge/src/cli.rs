//! The command line (clap derive). Only this module and `config` know clap;
//! everything is turned into a validated `Config` before any work starts.

use crate::values::{
    ChartFile, CpuList, FamilyName, GroupBy, KeyValue, NiceCount, NiceSize, Seconds, ThreadCount,
};
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
    /// Work with stored results: list, show, export, delete.
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
    /// Import results from other machines: sysgauge JSON, CSV, `openssl speed` output (table or -mr).
    Import(ImportArgs),
    /// Compare machines: ratios to a reference, means per family, confidence intervals.
    Compare(CompareArgs),
    /// Write a self-contained HTML report comparing machines, with charts.
    Report(ReportArgs),
    /// Draw one comparison chart as PNG or SVG.
    Chart(ChartArgs),
    /// Measure many machines over SSH (a host list or an Ansible inventory)
    /// and bring every result home.
    Fleet(FleetArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the man page (sysgauge(1)), or write one page per command into a directory.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: `sysgauge completions bash > /usr/share/bash-completion/completions/sysgauge`.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write sysgauge.1 and one sysgauge-COMMAND.1 per subcommand into DIR
    /// (e.g. /usr/share/man/man1) instead of printing sysgauge.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The results database, the one option every command that reads or
/// writes results shares.
#[derive(Debug, Clone, Args)]
pub struct DbArg {
    /// Results database: a SQLite file, or a PostgreSQL URL
    /// (postgres://USER@HOST/DB) (default: $XDG_DATA_HOME/sysgauge/sysgauge.db).
    #[arg(long, value_name = "PATH|URL", env = "SYSGAUGE_DB", global = true)]
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
pub struct ImportArgs {
    /// Files to import.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub db: DbArg,

    /// The files' format (the values come from the importer table).
    #[arg(long, value_parser = crate::importing::format_values(), default_value = "auto")]
    pub format: String,

    /// Host name for `openssl speed`, mbw, nbench, hyperfine, sysbench or fio output (default: the file's name without extension), or instead of the one Bonnie++ or fio's client mode printed. Files imported together with one --host are that machine's and are stored as one run.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormatArg {
    /// Aligned text tables.
    Table,
    /// Markdown.
    Md,
    /// One row per machine and case, then the means.
    Csv,
    /// The comparison document (versioned, see docs/output-schema.md).
    Json,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub machines: MachineArgs,

    #[arg(long, value_enum, default_value_t = CompareFormatArg::Table)]
    pub format: CompareFormatArg,

    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub groups: GroupArgs,

    /// List every case some machines lack (by default one line per family
    /// sums them up; JSON always lists them).
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The HTML file to write.
    #[arg(value_name = "FILE.html")]
    pub output: PathBuf,

    #[command(flatten)]
    pub machines: MachineArgs,

    #[command(flatten)]
    pub groups: GroupArgs,

    /// Open the per-family lists of the cases some machines lack (they
    /// are collapsed by default).
    #[arg(long, short)]
    pub verbose: bool,
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
pub enum ChartKindArg {
    /// Geometric mean of ratios per family, one bar per machine.
    Summary,
    /// Ratio of every case to the reference.
    Ratios,
    /// Values by block size, one panel per benchmark (cases with a block_size), one line per machine.
    BlockSize,
    /// The sweep: MB/s against effective iterations N, one chart per program on one scale, one line per machine (`sysgauge sweep` results).
    Sweep,
    /// Memory latency by working set, one line per machine, each machine's caches marked (`mem.latency` results).
    Latency,
    /// The network matrix's 2ping loss from host to host, a heatmap (`fleet net` runs).
    NetLoss,
    /// The network matrix's round trip from host to host, a heatmap (`fleet net` runs).
    NetRtt,
    /// The network matrix's TCP throughput from host to host, a heatmap (`fleet net` runs).
    NetTcp,
    /// The network matrix's UDP packet rate from host to host, a heatmap (`fleet net` runs).
    NetUdp,
}

#[derive(Debug, Args)]
pub struct ChartArgs {
    #[command(flatten)]
    pub machines: MachineArgs,

    /// What to draw.
    #[arg(long, value_enum, default_value_t = ChartKindArg::Summary)]
    pub kind: ChartKindArg,

    /// Write a PNG image.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "svg",
        required_unless_present = "svg"
    )]
    pub png: Option<PathBuf>,

    /// Write an SVG image.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Width in pixels (400 to 4000).
    #[arg(long, value_name = "PX", default_value_t = 1000)]
    pub width: u32,

    /// With --kind sweep: only these programs' charts (`dd`, `sha256sum`, a custom command as the sweep names it), comma-separated.
    #[arg(long, value_name = "NAME[,...]", value_delimiter = ',')]
    pub program: Vec<String>,
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
    pub repetitions: Option<u32>,

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

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub select: SelectArgs,

    #[command(flatten)]
    pub implementation: ImplementationArgs,

    /// Leave cases measured while the machine was disturbed (other
    /// processes, steal, throttling, waits) out of the closing index.
    #[arg(long)]
    pub exclude_disturbed: bool,
}

#[derive(Debug, Args)]
pub struct CpuArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Thread counts to run, e.g. `1,2,8` (default: 1 and all CPUs, as
    /// `threads=all`, so machines with any CPU count compare).
    #[arg(long, value_name = "N[,...]|all", value_delimiter = ',')]
    pub threads: Vec<ThreadCount>,

    /// Run the thread ladder 1, 2, 4 … below the CPU count, then all CPUs.
    #[arg(long, conflicts_with = "threads")]
    pub ladder: bool,

    /// Kernels by name or id (`idea`, `cpu.idea`); an index runs when all
    /// its kernels do.
    #[command(flatten)]
    pub select: SelectArgs,

    /// The former spelling of --only.
    #[arg(long, hide = true, value_delimiter = ',', conflicts_with = "only")]
    pub kernels: Vec<Selector>,
}

#[derive(Debug, Args)]
pub struct MemArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Bytes per array for the copy and STREAM tests, and of the /dev/shm file
    /// (nice numbers: 256MiB, 1G). Default: 4 × the last-level cache, bounded by
    /// the profile and by available memory.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<NiceSize>,

    /// Block size of the block-copy test (default 256KiB).
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<NiceSize>,

    /// Thread counts for the STREAM kernels (default: 1 and all CPUs).
    #[arg(long, value_name = "N[,...]|all", value_delimiter = ',')]
    pub threads: Vec<ThreadCount>,

    /// Working sets of the latency test (default: 4KiB doubling to beyond the
    /// last-level cache).
    #[arg(long, value_name = "SIZE[,SIZE...]", value_delimiter = ',')]
    pub working_sets: Vec<NiceSize>,

    /// Forbid transparent huge pages for the buffers (default: ask for them).
    #[arg(long)]
    pub no_huge_pages: bool,

    /// Tests by name or id: memcpy, loop-copy, block-copy, stream-triad,
    /// latency, tmpfs-write, ...
    #[command(flatten)]
    pub select: SelectArgs,

    /// Also draw latency against working-set size, with the cache sizes
    /// marked, into FILE (`.svg` or `.png`).
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub chart: Option<ChartFile>,
}

#[derive(Debug, Args)]
pub struct DiskArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Directory on the file system to test (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "device")]
    pub path: Option<PathBuf>,

    /// Test file size, e.g. 256MiB or 4G (default: from the profile; in raw
    /// mode the bytes written per block size).
    #[arg(long, value_name = "NICE")]
    pub size: Option<NiceSize>,

    /// Block sizes of the block tests, e.g. 4KiB,64KiB,1MiB (raw mode
    /// default: 256,512,4KiB,1MiB).
    #[arg(long, value_name = "NICE[,...]", value_delimiter = ',')]
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

    /// Tests by name or id (seq-write, disk.seq-read, ...).
    #[command(flatten)]
    pub select: SelectArgs,
}

#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Measure against HOST (or HOST:PORT, [V6]:PORT; port 15999 by default)
    /// running `sysgauge listen --serve`, instead of an in-process service
    /// on loopback.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub peer: Option<String>,

    /// Shared key of the peer's net service (its `listen --serve-key`).
    /// Prefer the environment variable, which `ps` does not show.
    #[arg(
        long,
        value_name = "KEY",
        env = "SYSGAUGE_NET_KEY",
        hide_env_values = true
    )]
    pub peer_key: Option<String>,

    /// Streams of the multi-stream TCP case (default: one per CPU, at least
    /// 2), and of the multi-stream --http download.
    #[arg(long, value_name = "N")]
    pub streams: Option<usize>,

    /// UDP datagram size of the packet-rate and latency cases (default 64).
    #[arg(long, value_name = "BYTES")]
    pub udp_size: Option<NiceSize>,

    /// ICMP echo round trip and flood rate to HOST, which needs to run
    /// nothing but its network stack (repeat for more hosts). Uses an
    /// unprivileged ICMP socket where net.ipv4.ping_group_range allows,
    /// else a raw socket (root).
    #[arg(long, value_name = "HOST")]
    pub icmp: Vec<String>,

    /// ICMP echo payload size (default 56, as ping; 64 bytes with the header).
    #[arg(long, value_name = "BYTES")]
    pub icmp_size: Option<NiceSize>,

    /// Senders of the ICMP flood, comma-separated (default 1,2,4… by
    /// profile); the flood stops adding senders once the rate stops rising.
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',')]
    pub senders: Vec<NiceCount>,

    /// Flood in a fixed window instead of timed repetitions: start at TIME
    /// (RFC 3339, or seconds since the Unix epoch), so that several
    /// machines flooding one host count their replies over the same
    /// moments (`fleet net --icmp` sets it). Needs --flood-for.
    #[arg(long, value_name = "TIME", requires_all = ["icmp", "flood_for"])]
    pub flood_at: Option<String>,

    /// The fixed flood window's length in seconds (five equal slices, one
    /// sample each). Needs --flood-at.
    #[arg(long, value_name = "SECONDS", requires = "flood_at")]
    pub flood_for: Option<f64>,

    /// TCP connection set-up time to HOST:PORT, any open port ([V6]:PORT
    /// for IPv6; repeat for more).
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Vec<String>,

    /// Download throughput from an http:// URL into nothing, 1 and
    /// --streams N parallel streams (repeat for more URLs).
    #[arg(long, value_name = "URL")]
    pub http: Vec<String>,
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

#[derive(Debug, Args)]
pub struct PingArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub twoping: TwopingArgs,

    /// Hosts to ping, all in parallel: names (AAAA preferred unless -4),
    /// IPv4 or IPv6 addresses, link-local with a zone (fe80::1%eth0).
    #[arg(required = true, value_name = "HOST")]
    pub hosts: Vec<String>,

    /// Stop after this many pings per host.
    #[arg(short = 'c', long, value_name = "COUNT")]
    pub count: Option<u64>,

    /// Seconds between pings.
    #[arg(short = 'i', long, value_name = "SECONDS", default_value_t = 1.0)]
    pub interval: f64,

    /// Flood: send the next ping as soon as a reply arrives (10 ms after
    /// the last send otherwise); no line per reply.
    #[arg(short = 'f', long)]
    pub flood: bool,

    /// Send this many pings at once at the start; with --flood, each reply
    /// sends the next, so this many stay in flight (at most 1024).
    #[arg(short = 'l', long, value_name = "N", default_value_t = 1)]
    pub preload: usize,

    /// Adaptive: send at the pace of the RTT's moving average.
    #[arg(short = 'A', long)]
    pub adaptive: bool,

    /// Stop sending after this many seconds.
    #[arg(short = 'w', long, value_name = "SECONDS")]
    pub deadline: Option<f64>,

    /// Source address to send from.
    #[arg(short = 'I', long = "interface-address", value_name = "ADDR")]
    pub source: Option<String>,

    /// After the last ping, wait at most this long for late replies and
    /// loss verdicts (0 = stop at once, like the reference).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub linger: f64,
}

#[derive(Debug, Args)]
pub struct ListenArgs {
    #[command(flatten)]
    pub twoping: TwopingArgs,

    /// Address or name to listen on (repeat for more; fe80::1%eth0 works;
    /// a name binds every address it resolves to, IPv4 and IPv6, unless -4
    /// or -6). Without it the listener binds every address, 0.0.0.0 and
    /// ::, because its purpose is to be reached from other machines.
    #[arg(short = 'I', long = "interface-address", value_name = "ADDR")]
    pub addresses: Vec<String>,

    /// Per-source rate limit in datagrams per second (IPv6: per /64); 0
    /// turns it off. Loopback sources are never limited, nor, with --auth,
    /// a client that completed an exchange with the right key.
    #[arg(long, value_name = "PPS", default_value_t = 5000)]
    pub rate_limit: u32,

    /// Also serve `sysgauge net --peer`: a TCP sink and UDP reflector on
    /// --serve-port, bound to loopback unless --serve-bind says otherwise.
    #[arg(long)]
    pub serve: bool,

    /// Address of the net service (repeat for more; default 127.0.0.1).
    /// Give this machine's address (or 0.0.0.0 / ::) to be reachable; any
    /// address but loopback needs --serve-key.
    #[arg(long, value_name = "ADDR", requires = "serve")]
    pub serve_bind: Vec<String>,

    /// TCP and UDP port of the net service.
    #[arg(long, value_name = "PORT", default_value_t = 15999)]
    pub serve_port: u16,

    /// Shared key of the net service: clients must give the same one
    /// (`sysgauge net --peer-key`); unauthenticated hellos are refused and
    /// datagrams dropped. Prefer the environment variable, which `ps` does
    /// not show.
    #[arg(
        long,
        value_name = "KEY",
        env = "SYSGAUGE_NET_KEY",
        hide_env_values = true
    )]
    pub serve_key: Option<String>,

    /// Per-source UDP rate limit of the net service's reflector, in
    /// datagrams per second per reflector thread (IPv6: per /64); loopback
    /// sources are exempt; 0 turns it off.
    #[arg(long, value_name = "PPS", default_value_t = sysgauge_net::net::DEFAULT_UDP_RATE, requires = "serve")]
    pub serve_udp_rate: u32,

    /// Most slow (sink) connections of the net service from one source
    /// address at once (all sources together: 256).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "serve")]
    pub serve_max_per_source: usize,

    /// Stop after this many seconds (default: until Ctrl-C).
    #[arg(short = 'w', long, value_name = "SECONDS")]
    pub deadline: Option<f64>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Counts take nice numbers: 1K = 1000, 1M = 10^6, 1Ki = 1KiB = 1024, 1Mi = 2^20.\n\
                        Example: sysgauge sweep --program sha256sum,dd --copies 1,512 --iterations 512,1Ki,2Ki"
)]
pub struct SweepArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Programs to time: b2sum, sha1sum, sha256sum, sha512sum, md5sum, dd (comma-separated),
    /// or one command line 'CMD ARGS' (run without a shell; `{input}` in it stands for the
    /// input file, else the file is appended). Repeat for more. Default: all six.
    #[arg(long = "program", value_name = "NAME[,...]|'CMD ARGS'")]
    pub programs: Vec<String>,

    /// The corpus: a file to use instead of the system dictionary.
    #[arg(long, value_name = "PATH", conflicts_with = "data")]
    pub corpus: Option<PathBuf>,

    /// The corpus: the system dictionary (else a generated 1 MB word list), or seeded
    /// random bytes.
    #[arg(long, value_enum, value_name = "KIND")]
    pub data: Option<DataArg>,

    /// Copies of the corpus in the input file (comma-separated). Default: 1 and a
    /// large count for the profile (512 quick and standard), bounded by free space.
    #[arg(long, value_name = "K[,K...]", value_delimiter = ',')]
    pub copies: Vec<NiceCount>,

    /// Effective iterations N (comma-separated): each point runs the program N/K times
    /// over K copies, so N must be a multiple of every K.
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', conflicts_with_all = ["max", "step"])]
    pub iterations: Vec<NiceCount>,

    /// Largest effective iteration count; with --step: N = STEP, 2×STEP, … ≤ MAX.
    #[arg(long, value_name = "N", requires = "step")]
    pub max: Option<NiceCount>,

    /// Step between effective iteration counts (with --max).
    #[arg(long, value_name = "N", requires = "max")]
    pub step: Option<NiceCount>,

    /// dd's block size (`bs=`, a nice size such as 32KiB; at most 1GiB). Default: none
    /// given, dd's own (512 bytes for GNU dd), as the write-up ran it.
    #[arg(long = "dd-bs", value_name = "SIZE")]
    pub dd_bs: Option<NiceSize>,

    /// Send each run's output to a file in the scratch directory instead of /dev/null.
    #[arg(long)]
    pub to_file: bool,

    /// Directory in which the input file is made (a scratch directory inside it,
    /// removed afterwards). Default: --scratch-dir.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Also write one CSV row per point to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Also draw MB/s against effective iterations, one line per program and copy
    /// count, to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub chart: Option<ChartFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataArg {
    /// /usr/share/dict/words (Debian: wamerican), else a generated word list.
    Words,
    /// Seeded pseudo-random bytes: the same on every machine.
    Random,
}

#[derive(Debug, Args)]
pub struct CryptoArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Threads: a number, or `all` for one per CPU (each runs its own instance).
    #[arg(long, value_name = "N|all", default_value = "1")]
    pub threads: ThreadCount,

    /// Block sizes for ciphers and digests (comma-separated, nice numbers such
    /// as 8KiB; multiples of 16). Default: openssl's 16,64,256,1024,8192,16384.
    #[arg(long, value_name = "SIZE[,...]", value_delimiter = ',')]
    pub block_sizes: Vec<NiceSize>,

    /// Algorithms by name or id (`aes-128-gcm`, `hash.md5`, `rsa-2048`).
    #[command(flatten)]
    pub select: SelectArgs,

    /// Also run the system `openssl speed -mr` for the same algorithms,
    /// sizes and threads, and print both side by side with the ratio.
    #[arg(long)]
    pub vs_openssl: bool,

    #[command(flatten)]
    pub implementation: ImplementationArgs,
}

#[derive(Debug, Args)]
pub struct ClockArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Only these CPUs (a kernel CPU list such as 0-3,8; default: every CPU
    /// this process may run on).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<CpuList>,
}

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
    pub spawners: Vec<ThreadCount>,
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
    pub min_time: Option<Seconds>,

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
    pub size: Option<NiceSize>,

    /// Write each transfer into this file on the far side instead of
    /// /dev/null (absolute path; truncated for every transfer, removed
    /// afterwards), so its file system is part of what is timed.
    #[arg(long, value_name = "PATH")]
    pub sink: Option<PathBuf>,

    /// The former spelling of --repetitions here.
    #[arg(long, value_name = "N", hide = true, conflicts_with = "repetitions")]
    pub runs: Option<u32>,

    /// Which combinations to measure.
    #[arg(long, value_enum, default_value_t = MatrixArg::Factorial)]
    pub matrix: MatrixArg,

    /// Recommend only algorithms not considered weak (no CBC, 3DES, RC4,
    /// SHA-1 or MD5 MACs, SHA-1 key exchanges) and show what that costs.
    #[arg(long)]
    pub only_secure: bool,

    /// Measure only the "secure" subset as "Secure Secure Shell" (stribika,
    /// 2015) defines it: curve25519 and DH group exchange with SHA-256;
    /// ChaCha20-Poly1305, AES-GCM and AES-CTR; the EtM MACs over SHA-2,
    /// RIPEMD-160 and UMAC-128 (those this client has). Implies --only-secure.
    #[arg(long, conflicts_with_all = ["ciphers", "macs", "kex"])]
    pub secure_set: bool,

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
    pub ssh_options: Vec<KeyValue>,
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
    pub family: Option<FamilyName>,

    /// Print as JSON.
    #[arg(long)]
    pub json: bool,

    /// List the implementations each hash, cipher and public-key algorithm
    /// can choose from (the names `--implementation` takes), and which run
    /// on this CPU.
    #[arg(long)]
    pub implementations: bool,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(flatten)]
    pub db: DbArg,

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
    /// Export one run; with `--format prometheus`, every machine's latest
    /// run when none is named (a whole fleet in one textfile).
    Export {
        /// Run number (from `results list`), a prefix of its run id, or a
        /// host name (its latest run).
        id: Option<String>,
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Json)]
        format: ExportFormatArg,
        /// Write to FILE instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// One machine's runs over time: each run's index against the embedded
    /// baseline (overall and per family) and the change from the run before.
    History {
        /// Host name, fleet alias or the start of a machine-id (a renamed
        /// machine keeps its history; two machines sharing a name are told
        /// apart).
        #[arg(value_name = "HOST")]
        host: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete one run and all its results.
    Delete {
        /// Run number (from `results list`) or a prefix of its run id.
        id: String,
    },
    /// Copy every run the target lacks (by run id) from one database to
    /// another: SQLite file or PostgreSQL URL, either way.
    Sync {
        /// The database to copy from (default: --db, else the default database).
        #[arg(long, value_name = "PATH|URL")]
        from: Option<PathBuf>,
        /// The database to copy to (created if needed).
        #[arg(long, value_name = "PATH|URL")]
        to: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub action: BaselineAction,
}

#[derive(Debug, Subcommand)]
pub enum BaselineAction {
    /// Describe the embedded baseline: version, machine, cases, stale cases.
    Show {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a baseline file from stored runs of the quick and standard profiles (see docs/baseline.md).
    Make {
        #[command(flatten)]
        db: DbArg,
        /// The reference runs, one per profile (quick, standard): run number or run-id prefix.
        #[arg(value_name = "RUN", required = true, num_args = 1..)]
        runs: Vec<String>,
        /// Description of the reference machine (CPU, cores, memory, VM or bare metal).
        #[arg(long, value_name = "TEXT")]
        machine: String,
        /// Version of the new baseline (default: the embedded one's plus 1).
        #[arg(long, value_name = "N")]
        version: Option<u32>,
        /// Write to FILE (e.g. crates/sysgauge-family/baseline/reference.json) instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Accept runs that are not complete, release-build runs of the quick and standard profiles.
        #[arg(long)]
        force: bool,
        /// Write the baseline even when cases were measured on a noisy machine
        /// (other processes above 0.05 CPUs, any steal, rounds varying more
        /// than 2 %), with a warning naming them.
        #[arg(long)]
        allow_noisy: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    Json,
    Csv,
    Md,
    /// The Prometheus text format, for node_exporter's textfile collector
    /// (base units; id, params, host as labels).
    Prometheus,
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

#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub action: FleetAction,
}

#[derive(Debug, Subcommand)]
pub enum FleetAction {
    /// Run sysgauge on every host over ssh (no agent on the hosts) and store
    /// each host's run in the results database. See docs/fleet.md.
    Run(FleetRunArgs),
    /// Measure the network between every ordered pair of hosts (2ping RTT
    /// and per-direction loss, TCP throughput, UDP packet rate) and print
    /// the matrices. See docs/fleet.md.
    Net(FleetNetArgs),
}

/// Which hosts, and how to reach them: shared by every fleet action.
#[derive(Debug, Args)]
pub struct FleetHostsArgs {
    /// Hosts, as `[user@]host[:port]` (instead of --inventory).
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,

    /// A host list or an Ansible inventory (INI or YAML).
    #[arg(long, short = 'i', value_name = "FILE")]
    pub inventory: Option<PathBuf>,

    /// Only these groups or hosts (`web`, `web,db`).
    #[arg(long, value_name = "PATTERN")]
    pub limit: Option<String>,

    /// The most one host may take, from connecting to clean-up (e.g. 600, 90s).
    #[arg(long, value_name = "SECONDS", default_value = "1800")]
    pub timeout: Seconds,

    /// ssh's ConnectTimeout in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub connect_timeout: u64,

    /// The sysgauge binary for hosts of another architecture (as `uname -m`
    /// names it, e.g. aarch64=./sysgauge-aarch64), repeatable.
    #[arg(long = "binary", value_name = "ARCH=PATH")]
    pub binaries: Vec<KeyValue>,

    /// Read this ssh config file instead of ~/.ssh/config (ssh -F).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,

    /// An extra ssh option KEY=VALUE (ssh -o), repeatable.
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    pub ssh_options: Vec<KeyValue>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Every ordered pair of hosts: 2ping round trip and loss split into outbound and \
inbound, TCP throughput and UDP packet rate, the throughput tests in rounds of disjoint pairs. \
A host's `net_address` inventory variable names the address the others measure it at \
(default: the address ssh reaches). Exit status: 0 every host and pair measured, 1 some \
failed, 2 usage error, 130 interrupted. See docs/fleet.md."
)]
pub struct FleetNetArgs {
    #[command(flatten)]
    pub target: FleetHostsArgs,

    /// The pair tests' profile (tiny, quick, standard, full): how long each
    /// throughput and packet-rate test runs.
    #[arg(long, value_enum, default_value_t = ProfileArg::Quick)]
    pub profile: ProfileArg,

    /// 2ping probes per ordered pair, sent alongside the throughput rounds.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub pings: u64,

    /// Seconds between two probes to the same peer.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.05)]
    pub ping_interval: f64,

    /// RTT and loss only: no throughput or packet-rate rounds.
    #[arg(long)]
    pub no_throughput: bool,

    /// Instead of the matrix: flood HOST (which needs to run nothing but its
    /// network stack) with ICMP echoes from 1, 2, 4 … of the hosts at once,
    /// until the total reply rate stops rising.
    #[arg(long, value_name = "HOST", conflicts_with_all = ["show", "no_throughput"])]
    pub icmp: Option<String>,

    /// ICMP flood senders on each flooding host (with --icmp).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "icmp")]
    pub senders: usize,

    /// Seconds each step of the flood lasts: every flooding host counts its
    /// replies over the same window (with --icmp).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, requires = "icmp")]
    pub flood_for: f64,

    /// Measure nothing: print a stored matrix again (the latest, or the
    /// one whose id starts with MATRIX), e.g. in another --format.
    #[arg(long, value_name = "MATRIX", num_args = 0..=1, default_missing_value = "latest")]
    pub show: Option<String>,

    /// How to print the matrices.
    #[arg(long, value_enum, default_value_t = MatrixFormatArg::Text)]
    pub format: MatrixFormatArg,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatrixFormatArg {
    Text,
    Markdown,
    Csv,
    Json,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Everything after `--` is the sysgauge command line each host runs \
(default: `run --profile quick`); it may start with any measuring subcommand \
(`-- crypto --profile tiny`), else `run` is implied (`-- --profile tiny --only hash`). \
Exit status: 0 every host ran, 1 some host failed, 2 usage error, 130 interrupted."
)]
pub struct FleetRunArgs {
    #[command(flatten)]
    pub target: FleetHostsArgs,

    /// How many hosts at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub forks: usize,

    /// Run only the hosts that failed (or were interrupted) in the previous
    /// fleet run on this database.
    #[arg(long)]
    pub retry_failed: bool,

    #[command(flatten)]
    pub db: DbArg,

    /// The sysgauge command line each host runs (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}
