//! `sysgauge fleet run`: measure many machines over the system's OpenSSH
//! client and bring every run home into the results database.
//!
//! This file checks the command line into a [`sysgauge_fleet::remote::Plan`]
//! and the host list, then drives `sysgauge_fleet::fanout` while it draws
//! one progress line per host (stderr), ingests each host's run record as
//! it arrives (tagged with the inventory alias and variables; idempotent by
//! run id), writes the closing table (stdout) and the state that
//! `--retry-failed` reads (`<db>.fleet.json`). What happens on each host is
//! `sysgauge_fleet::remote`'s; docs/fleet.md tells the whole story.

use super::fleet_net::FleetNetArgs;
use crate::cli::DbArg;
use crate::exit::Exit;
use crate::machines::parse_record_text;
use crate::upload::Uploader;
use crate::values::{within, KeyValue, Seconds};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use sysgauge_core::record::{RunRecord, ALIAS_TAG, GROUPS_TAG};
use sysgauge_core::text::for_terminal;
use sysgauge_fleet::fanout::{self, Event};
use sysgauge_fleet::inventory::{self, parse_address, Host, Inventory};
use sysgauge_fleet::remote::{Binaries, Binary, Outcome, Plan, Stage};
use sysgauge_fleet::ssh::SshSettings;
use sysgauge_fleet::state::{self, FleetState};
use sysgauge_report::{Table, TableFormat};
use sysgauge_store::{Inserted, Store};

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
    after_help = "Everything after `--` is the sysgauge command line each host runs \
(default: `run --profile quick`); it may start with any measuring subcommand \
(`-- crypto --profile tiny`), else `run` is implied (`-- --profile tiny --only hash`). \
Exit status: 0 every host ran (and, with --upload, every run was uploaded), 1 some host failed or a run was not uploaded, 2 usage error, 130 interrupted."
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

    /// Also send each host's run, once stored here, to a results server
    /// (`sysgauge serve`) at URL, with the token of --token-file or
    /// SYSGAUGE_TOKEN (docs/serve.md).
    #[arg(long, value_name = "URL")]
    pub upload: Option<String>,

    #[command(flatten)]
    pub upload_auth: crate::upload::TokenArgs,

    /// The sysgauge command line each host runs (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// Subcommands whose runs a fleet host may make: those with the shared
/// measuring options (`--json`, `--no-store`), read from the command line
/// itself so that a new measuring command needs no list here.
fn measuring() -> Vec<String> {
    use clap::CommandFactory;
    crate::cli::Cli::command()
        .get_subcommands()
        .filter(|c| {
            let has = |id: &str| c.get_arguments().any(|a| a.get_id() == id);
            has("json") && has("no_store")
        })
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Options the fleet sets itself on the host's command line.
const OURS: &[&str] = &["--json", "--no-store", "--db"];

pub fn run(args: FleetArgs) -> Result<Exit> {
    match args.action {
        FleetAction::Run(a) => fleet_run(a),
        FleetAction::Net(a) => super::fleet_net::run(a),
    }
}

/// The sysgauge command line a host runs: `args` as given when they start
/// with a measuring subcommand, else `run` followed by them; `run
/// --profile quick` when empty. `--no-wait` follows the subcommand unless
/// the user asks for the wait (`--wait-quiet`): hosts of one lab often
/// share CPUs, and each would wait for the others.
fn remote_args(args: &[String]) -> Result<Vec<String>> {
    let mut v = host_command(args)?;
    let asks = |a: &String| {
        let name = a.split('=').next().unwrap_or_default();
        name == "--wait-quiet" || name == "--no-wait"
    };
    if !v.iter().any(asks) {
        v.insert(1, "--no-wait".into());
    }
    Ok(v)
}

/// `remote_args` before `--no-wait` is added.
fn host_command(args: &[String]) -> Result<Vec<String>> {
    if args.is_empty() {
        return Ok(vec!["run".into(), "--profile".into(), "quick".into()]);
    }
    for a in args {
        let name = a.split('=').next().unwrap_or_default();
        if OURS.contains(&name) {
            bail!("the host's command line must not set {name}: the fleet passes `--json - --no-store` itself and stores the runs here (use --db before `--`)");
        }
    }
    let first = args[0].as_str();
    let measuring = measuring();
    let v = if measuring.iter().any(|m| m == first) {
        args.to_vec()
    } else if !first.starts_with('-') {
        bail!(
            "'{first}' after `--` is not a measuring subcommand (one of {}); or start with options for `run`",
            measuring.join(", ")
        );
    } else {
        let mut v = vec!["run".to_string()];
        v.extend(args.iter().cloned());
        v
    };
    check_host_command(&v)?;
    Ok(v)
}

/// Parses the host's command line with this binary's own parser, so that a
/// misspelt option or value is found here, before the binary is copied to
/// every host and each fails alike.
fn check_host_command(v: &[String]) -> Result<()> {
    use clap::Parser;
    let line = std::iter::once("sysgauge")
        .chain(v.iter().map(String::as_str))
        .chain(["--json", "-", "--no-store"]);
    let said =
        |what: &str| anyhow::anyhow!("the host's command line `sysgauge {}`: {what}", v.join(" "));
    let cli = match crate::cli::Cli::try_parse_from(line) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("not a valid command line");
            // clap lists the values an option takes on a line of its own.
            let values = lines
                .find(|l| l.starts_with("[possible values:"))
                .map(|l| format!(" {l}"))
                .unwrap_or_default();
            let first = first.strip_prefix("error: ").unwrap_or(first);
            return Err(said(&format!("{first}{values}")));
        }
    };
    // `--only`/`--skip` name benchmarks every build has (ids depend neither
    // on the architecture nor on a command's options), so a misspelt one is
    // found here too.
    use crate::cli::Command as C;
    use sysgauge_family::family::{Family, Options};
    let options = Options::default();
    let none: &[sysgauge_core::Selector] = &[];
    let (families, select, methods): (&[&dyn Family], _, _) = match &cli.command {
        C::Run(args) => {
            let all = sysgauge_registry::benchmarks(&options);
            return match super::run::select(all, &args.select) {
                Ok(_) => Ok(()),
                Err(e) => Err(said(&e.to_string())),
            };
        }
        C::Cpu(a) => (&[&sysgauge_bench::cpu::FAMILY], &a.select, none),
        C::Mem(a) => (&[&sysgauge_bench::memory::FAMILY], &a.select, none),
        C::Disk(a) => (&[&sysgauge_bench::disk::FAMILY], &a.select, none),
        C::Net(a) => (&[&sysgauge_net::net::FAMILY], &a.select, none),
        C::Sweep(a) => (&[&sysgauge_bench::sweep::FAMILY], &a.select, none),
        C::Spawn(a) => (&[&sysgauge_bench::spawn::FAMILY], &a.select, &a.methods[..]),
        C::Crypto(a) => (
            &[
                &sysgauge_crypto::hash::FAMILY,
                &sysgauge_crypto::crypto::FAMILY,
            ],
            &a.select,
            none,
        ),
        _ => return Ok(()),
    };
    // `spawn --method` is the former spelling of `--only`.
    let only = if methods.is_empty() {
        &select.only
    } else {
        methods
    };
    let skip = &select.skip;
    let all = families
        .iter()
        .flat_map(|f| f.benchmarks(&options))
        .collect();
    match sysgauge_core::select::select(all, only, skip, |_| true) {
        Err(e @ sysgauge_core::select::SelectError::Unknown { .. }) => Err(said(&e.to_string())),
        _ => Ok(()),
    }
}

/// Hosts named on the command line, as one inventory.
fn inventory_of_hosts(hosts: &[String]) -> Result<Inventory> {
    let mut inv = Inventory::default();
    for h in hosts {
        let (user, address, port) =
            parse_address(h.trim()).map_err(|e| anyhow::anyhow!("host '{h}': {e}"))?;
        let mut host = Host::new(&address);
        host.name = h.trim().to_string();
        host.user = user;
        host.port = port;
        if inv.hosts.iter().any(|x| x.name == host.name) {
            bail!("host '{h}' is named twice");
        }
        inv.hosts.push(host);
    }
    Ok(inv)
}

struct Checked {
    hosts: Vec<Host>,
    /// With --retry-failed: the previous run's failed hosts, of which those
    /// not run again this time stay failed.
    previous_failed: Vec<Host>,
    args: Vec<String>,
    settings: SshSettings,
    binaries: Binaries,
}

/// The fleet options every action shares, checked; the hosts named
/// (`None` when neither an inventory nor hosts were given).
pub(super) struct Reach {
    pub given: Option<Vec<Host>>,
    pub settings: SshSettings,
    pub binaries: Binaries,
}

/// The largest `--ssh-config` accepted (here and by `sysgauge ssh`): a
/// config is a few KiB; this is far above any real one and far below what
/// would hurt ssh.
pub(crate) const MAX_SSH_CONFIG_BYTES: u64 = 16 << 20;

pub(super) fn check_reach(t: &FleetHostsArgs) -> Result<Reach> {
    if t.timeout.0 < Duration::from_secs(1) {
        bail!("--timeout must be at least 1 second");
    }
    within("--connect-timeout", t.connect_timeout, 1, 300, " seconds")?;
    if let Some(p) = &t.ssh_config {
        // ssh reads it by its path: a FIFO would block ssh, /dev/zero fill
        // its memory.
        sysgauge_core::file::check_regular_file(p, "--ssh-config", MAX_SSH_CONFIG_BYTES)?;
    }
    for o in &t.ssh_options {
        if !o.key.chars().all(|c| c.is_ascii_alphanumeric()) {
            bail!("--ssh-option '{o}': '{}' is not an ssh_config option name (e.g. IdentityFile=~/.ssh/bench_key)", o.key);
        }
    }
    if t.inventory.is_some() && !t.hosts.is_empty() {
        bail!("give either --inventory or hosts on the command line, not both");
    }
    let given = match (&t.inventory, t.hosts.is_empty()) {
        (Some(p), _) => Some(inventory::load(p)?),
        (None, false) => Some(inventory_of_hosts(&t.hosts)?),
        (None, true) => None,
    };
    let given = match (&given, &t.limit) {
        (Some(inv), Some(pattern)) => Some(inv.limit(pattern)?),
        (Some(inv), None) => Some(inv.hosts.clone()),
        (None, Some(_)) => bail!("--limit needs --inventory or hosts"),
        (None, None) => None,
    };
    let mut extra = Vec::new();
    for b in &t.binaries {
        if b.key.is_empty() || !b.key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bail!(
                "--binary '{b}': '{}' is not an architecture name as `uname -m` prints it",
                b.key
            );
        }
        let bin = Binary::load(Path::new(&b.value), &format!("--binary {}=", b.key))?;
        extra.push((b.key.clone(), bin));
    }
    let running = match std::env::current_exe()
        .map_err(|e| e.to_string())
        .and_then(|p| Binary::load(&p, "").map_err(|e| e.to_string()))
    {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("sysgauge: warning: cannot read the running binary ({e}); only --binary architectures can be served");
            None
        }
    };
    Ok(Reach {
        given,
        settings: SshSettings {
            program: "ssh".into(),
            config: t.ssh_config.clone(),
            options: t
                .ssh_options
                .iter()
                .map(|o| (o.key.clone(), o.value.clone()))
                .collect(),
            connect_timeout: Duration::from_secs(t.connect_timeout),
        },
        binaries: Binaries::new(running, extra).map_err(anyhow::Error::msg)?,
    })
}

fn check(a: &FleetRunArgs, state_file: &Path) -> Result<Option<Checked>> {
    within("--forks", a.forks, 1, 256, "")?;
    let Reach {
        given,
        settings,
        binaries,
    } = check_reach(&a.target)?;
    let mut args = a.args.clone();
    let mut previous_failed = Vec::new();
    let hosts = if a.retry_failed {
        let Some(previous) = state::load(state_file).map_err(anyhow::Error::msg)? else {
            bail!(
                "--retry-failed: no fleet run has been recorded with this database ({} does not exist)",
                state_file.display()
            );
        };
        if previous.failed.is_empty() {
            eprintln!(
                "sysgauge: no host failed in the previous fleet run ({}); nothing to retry",
                previous.finished_at
            );
            return Ok(None);
        }
        if args.is_empty() {
            args = previous.args.clone();
        }
        previous_failed = previous.failed.clone();
        match given {
            // Fresh definitions from the inventory, for the failed names.
            Some(list) => list
                .into_iter()
                .filter(|h| previous.failed.iter().any(|f| f.name == h.name))
                .collect(),
            None => previous.failed,
        }
    } else {
        match given {
            Some(list) => list,
            None => bail!("name the hosts: --inventory FILE, HOST…, or --retry-failed"),
        }
    };
    if hosts.is_empty() {
        bail!("no host to run: the selection is empty");
    }
    let args = if a.retry_failed && a.args.is_empty() {
        args
    } else {
        remote_args(&args)?
    };
    Ok(Some(Checked {
        hosts,
        previous_failed,
        args,
        settings,
        binaries,
    }))
}

/// One progress line per host: live spinners on a terminal, a plain line
/// per change otherwise.
pub(super) struct Progress {
    bars: Option<(MultiProgress, Vec<ProgressBar>)>,
    names: Vec<String>,
}

impl Progress {
    pub(super) fn new(hosts: &[Host]) -> Progress {
        let names: Vec<String> = hosts
            .iter()
            .map(|h| for_terminal(&h.name).into_owned())
            .collect();
        let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let bars = std::io::stderr().is_terminal().then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} {prefix} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let bars = names
                .iter()
                .map(|n| {
                    let b = multi.add(ProgressBar::new_spinner());
                    b.set_style(style.clone());
                    b.set_prefix(format!("{n:width$}"));
                    b.set_message("waiting");
                    b.enable_steady_tick(Duration::from_millis(120));
                    b
                })
                .collect();
            (multi, bars)
        });
        Progress { bars, names }
    }

    /// Takes the live lines off the terminal.
    pub(super) fn clear(&self) {
        if let Some((multi, _)) = &self.bars {
            let _ = multi.clear();
        }
    }

    pub(super) fn set(&self, i: usize, text: &str, done: bool) {
        if i >= self.names.len() {
            return;
        }
        match &self.bars {
            Some((_, bars)) => {
                if let Some(b) = bars.get(i) {
                    if done {
                        b.finish_with_message(text.to_string());
                    } else {
                        b.set_message(text.to_string());
                    }
                }
            }
            None => eprintln!("fleet: {}: {text}", self.names.get(i).map_or("", |s| s)),
        }
    }
}

fn stage_text(st: &Stage) -> String {
    match st {
        Stage::Connecting => "started: connecting".into(),
        Stage::Running { arch, bytes, sent } => format!(
            "running (sysgauge for {arch}, {:.1} MB{}, copied and checked first)",
            *bytes as f64 / 1e6,
            if sent < bytes {
                format!(" sent as {:.1} MB of zstd", *sent as f64 / 1e6)
            } else {
                String::new()
            }
        ),
        Stage::CleaningUp => "cleaning up".into(),
    }
}

/// How one host ended, for the table and the state file.
struct Row {
    status: &'static str,
    detail: String,
    arch: String,
    duration: Option<Duration>,
    /// Stored here, but `--upload` failed (said in `detail`).
    upload_failed: bool,
}

/// A host's record, read and tagged as [`tag_run`] says.
fn record_of(host: &Host, json: &str) -> Result<RunRecord> {
    let runs = parse_record_text(&format!("host {}", host.name), json)?;
    let [mut run] = <[_; 1]>::try_from(runs)
        .map_err(|v| anyhow::anyhow!("the host sent {} run records, not one", v.len()))?;
    tag_run(&mut run, host);
    Ok(run)
}

/// A host's alias, inventory groups and variables become tags of its run
/// (the run's own tags win), the alias its label when it has none.
pub(super) fn tag_run(run: &mut RunRecord, host: &Host) {
    run.tags
        .entry(ALIAS_TAG.to_string())
        .or_insert_with(|| host.name.clone());
    if !host.groups.is_empty() {
        run.tags
            .entry(GROUPS_TAG.to_string())
            .or_insert_with(|| host.groups.join(","));
    }
    for (k, v) in &host.vars {
        run.tags.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if run.label.is_none() {
        run.label = Some(host.name.clone());
    }
}

/// What `--retry-failed` is to run after this run: the hosts of `failed`
/// (failed or interrupted now), and those of the previous run's failed
/// hosts this run did not run again (a retry with another `--limit`); an
/// ordinary run has no previous ones, and starts the list afresh.
fn retry_state(
    previous: &[Host],
    hosts: &[Host],
    failed: Vec<Host>,
    args: &[String],
) -> FleetState {
    let mut still_failed: Vec<Host> = previous
        .iter()
        .filter(|p| !hosts.iter().any(|h| h.name == p.name))
        .cloned()
        .collect();
    still_failed.extend(failed);
    FleetState {
        finished_at: chrono::Utc::now().to_rfc3339(),
        args: args.to_vec(),
        failed: still_failed,
    }
}

/// The closing line's pointer to `--retry-failed`, naming what it runs
/// again; none when every host finished.
fn retry_hint(n_failed: usize, n_interrupted: usize) -> Option<String> {
    let which = match (n_failed, n_interrupted) {
        (0, 0) => return None,
        (_, 0) => "failed",
        (0, _) => "interrupted",
        _ => "failed and interrupted",
    };
    Some(format!(
        "`sysgauge fleet run --retry-failed` runs the {which} ones again"
    ))
}

/// Stops the ssh masters of fleet runs that were killed (SIGKILL, a crash)
/// and removes their control directories, then makes this run's own. A
/// second signal, which quits at once, stops this run's ssh processes and
/// removes its directory first (they are in process groups of their own,
/// so nothing else would end them).
pub(super) fn control_dir() -> Result<tempfile::TempDir> {
    for r in sysgauge_fleet::leftover::reap_abandoned(&std::env::temp_dir()) {
        eprintln!("sysgauge: {r}");
    }
    let control = sysgauge_fleet::ssh::control_dir()
        .context("cannot create a private directory for the ssh control sockets")?;
    let dir = control.path().to_path_buf();
    crate::signals::at_quit(move || {
        sysgauge_fleet::leftover::stop_and_remove(&dir);
    });
    Ok(control)
}

fn fleet_run(a: FleetRunArgs) -> Result<Exit> {
    let db = crate::config::resolve_db(a.db.db.as_deref())?;
    let state_file = if sysgauge_store::is_url(&db) {
        // No file beside a server's database: keep it in the data directory,
        // named after the URL (without its password).
        let name: String = sysgauge_store::display_name(&db)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = crate::config::resolve_db(None)?;
        state::state_path(&dir.with_file_name(name))
    } else {
        state::state_path(&db)
    };
    let server = match &a.upload {
        Some(url) => Some(Uploader::new(url, &a.upload_auth, "--upload")?),
        None if a.upload_auth.token_file.is_some() || a.upload_auth.ca_cert.is_some() => {
            bail!("--token-file and --ca-cert are for uploading; give --upload URL too")
        }
        None => None,
    };
    let Some(c) = check(&a, &state_file)? else {
        return Ok(Exit::Ok);
    };
    let mut store = crate::db::open_for_writing(&db, None)?;
    let cancel = crate::signals::install()?;
    let control = control_dir()?;
    let kept_dir = state::kept_dir(&state_file);
    let plan = Plan {
        binaries: c.binaries,
        args: c.args.clone(),
        timeout: a.target.timeout.0,
        ssh: c.settings,
        control_dir: control.path().to_path_buf(),
    };
    let hosts = c.hosts;
    warn_shared_addresses(&hosts);
    eprintln!(
        "fleet: {} host(s), {} at a time, each running `sysgauge {}`",
        hosts.len(),
        a.forks.min(hosts.len()),
        c.args.join(" ")
    );
    let progress = Progress::new(&hosts);
    let mut rows: Vec<Option<Row>> = (0..hosts.len()).map(|_| None).collect();
    // Which hosts have finished without needing a retry, for the state a
    // second signal saves before it quits: the others are to run again.
    let settled = std::sync::Arc::new(std::sync::Mutex::new(vec![false; hosts.len()]));
    {
        let (settled, hosts, previous) =
            (settled.clone(), hosts.clone(), c.previous_failed.clone());
        let (args, state_file) = (c.args.clone(), state_file.clone());
        crate::signals::at_quit(move || {
            let Ok(settled) = settled.lock() else { return };
            let failed = hosts.iter().zip(settled.iter()).filter(|(_, s)| !**s);
            let failed: Vec<Host> = failed.map(|(h, _)| h.clone()).collect();
            // Quitting at once: a state that cannot be written is only lost.
            let _ = state::save(&state_file, &retry_state(&previous, &hosts, failed, &args));
        });
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let (hosts, plan, cancel) = (&hosts, &plan, &cancel);
        s.spawn(move || fanout::run(hosts, a.forks, plan, cancel, tx));
        for ev in rx {
            match ev {
                Event::Stage(i, st) => progress.set(i, &stage_text(&st), false),
                Event::NotStarted(i) => {
                    progress.set(i, "not started (interrupted)", true);
                    rows[i] = Some(Row {
                        status: INTERRUPTED,
                        detail: "not started".into(),
                        arch: String::new(),
                        duration: None,
                        upload_failed: false,
                    });
                }
                Event::Done(i, outcome) => {
                    let row =
                        finish_host(&mut store, server.as_ref(), &kept_dir, &hosts[i], outcome);
                    let text = match row.status {
                        OK | ALREADY => format!("done: run {}", row.detail),
                        other => format!("{other}: {}", row.detail),
                    };
                    progress.set(i, &for_terminal(&text), true);
                    if !matches!(row.status, FAILED | INTERRUPTED) {
                        if let Ok(mut settled) = settled.lock() {
                            settled[i] = true;
                        }
                    }
                    rows[i] = Some(row);
                }
            }
        }
    });
    progress.clear();
    drop(control);

    let mut table = Table::columns("host, alias, arch, status, run or reason, duration");
    // Hosts to run again: those that failed or were interrupted; a host
    // measured whose record the database refused is not among them (its
    // record is kept for `import`).
    let mut failed = Vec::new();
    let mut not_uploaded = Vec::new();
    let count = |status: &str| rows.iter().flatten().filter(|r| r.status == status).count();
    let (n_failed, n_interrupted, n_kept) = (count(FAILED), count(INTERRUPTED), count(NOT_STORED));
    let n_stored = count(OK) + count(ALREADY);
    for (host, row) in hosts.iter().zip(&rows) {
        let Some(row) = row else { continue };
        if row.upload_failed {
            not_uploaded.push(for_terminal(&host.name).into_owned());
        }
        if matches!(row.status, FAILED | INTERRUPTED) {
            failed.push(host.clone());
        }
        table.push(vec![
            for_terminal(&host.target()).into_owned(),
            for_terminal(&host.name).into_owned(),
            if row.arch.is_empty() {
                "-".into()
            } else {
                row.arch.clone()
            },
            row.status.to_string(),
            for_terminal(&row.detail).into_owned(),
            row.duration
                .map(|d| format!("{:.1} s", d.as_secs_f64()))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    crate::output::stdout(&table.render(TableFormat::Text))?;
    let saved = state::save(
        &state_file,
        &retry_state(&c.previous_failed, &hosts, failed.clone(), &c.args),
    );
    if let Err(e) = saved {
        eprintln!("sysgauge: warning: {e}; --retry-failed will not know this run");
    }
    let mut summary = format!("fleet: {n_stored} of {} host(s) ran", hosts.len());
    for (n, what) in [
        (n_failed, "failed"),
        (n_interrupted, "interrupted"),
        (n_kept, "measured but not stored"),
    ] {
        if n > 0 {
            summary.push_str(&format!(", {n} {what}"));
        }
    }
    summary.push_str(&match n_stored {
        0 => format!("; nothing stored in {}", store.path().display()),
        _ => format!("; stored in {}", store.path().display()),
    });
    if let Some(hint) = retry_hint(n_failed, n_interrupted) {
        summary.push_str(&format!("; {hint}"));
    }
    eprintln!("{summary}");
    if n_kept > 0 {
        eprintln!(
            "fleet: the database refused {n_kept} host run(s); their records are kept in {} and `sysgauge import {}/*.json` stores them",
            kept_dir.display(),
            kept_dir.display()
        );
    }
    if let (Some(server), false) = (&server, not_uploaded.is_empty()) {
        eprintln!(
            "fleet: {} run(s) stored here but not uploaded ({}); {} sends them again",
            not_uploaded.len(),
            not_uploaded.join(", "),
            server.send_again("HOST…", Some(store.path()))
        );
    }
    Ok(if n_interrupted > 0 || cancel.is_cancelled() {
        Exit::Interrupted
    } else if failed.is_empty() && not_uploaded.is_empty() && n_kept == 0 {
        Exit::Ok
    } else {
        Exit::BenchFailed
    })
}

fn finish_host(
    store: &mut Store,
    server: Option<&Uploader>,
    kept_dir: &Path,
    host: &Host,
    outcome: Outcome,
) -> Row {
    // The host's time includes storing its run (a database that waits for
    // its server to come back).
    let storing = std::time::Instant::now();
    let Outcome {
        arch,
        record,
        duration,
        cleanup_problem,
    } = outcome;
    if let Some(p) = cleanup_problem {
        eprintln!("sysgauge: warning: {}: {p}", for_terminal(&host.name));
    }
    let mut upload_failed = false;
    let (status, detail) = match record {
        Ok(json) => match record_of(host, &json) {
            Err(e) => (FAILED, format!("its run record was refused: {e:#}")),
            Ok(run) => match store.insert_run(&run, "fleet") {
                Err(e) => keep(kept_dir, &run, &anyhow::Error::from(e)),
                Ok(inserted) => {
                    // A host's record is stored here only by this ingest: a
                    // completion would be of a run an earlier fleet run stored.
                    let status = match inserted {
                        Inserted::New(_) | Inserted::Completed { .. } => OK,
                        Inserted::AlreadyPresent(_) => ALREADY,
                    };
                    let mut detail = run.run_id.clone();
                    if let Some(server) = server {
                        match server.upload(&run) {
                            Ok(_) => detail.push_str(" (uploaded)"),
                            Err(e) => {
                                upload_failed = true;
                                detail.push_str(&format!(" (not uploaded: {e:#})"));
                            }
                        }
                    }
                    (status, detail)
                }
            },
        },
        // The status says it; the reason says what became of the host.
        Err(f) if f.interrupted => (INTERRUPTED, "stopped and cleaned up".into()),
        Err(f) => (FAILED, f.reason),
    };
    Row {
        status,
        detail,
        arch: arch.unwrap_or_default(),
        duration: Some(duration + storing.elapsed()),
        upload_failed,
    }
}

/// A measured run the database refused, kept as a file in `dir` for
/// `sysgauge import`: the host's measurement is not thrown away.
fn keep(dir: &Path, run: &RunRecord, why: &anyhow::Error) -> (&'static str, String) {
    let name: String = format!("{}-{}", run.label.as_deref().unwrap_or("host"), run.run_id)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{name}.json"));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| {
            let text = serde_json::to_string_pretty(run).map_err(std::io::Error::other)?;
            std::fs::write(&path, text)
        })
        .map_err(|e| format!("{}: {e}", path.display()));
    match written {
        Ok(()) => (
            NOT_STORED,
            format!(
                "the database refused its run record ({why:#}); kept in {p}: `sysgauge import {p}` stores it",
                p = path.display()
            ),
        ),
        Err(e) => (
            FAILED,
            format!("the database refused its run record ({why:#}), and it could not be kept ({e})"),
        ),
    }
}

/// Statuses of the closing table.
const OK: &str = "ok";
const ALREADY: &str = "already stored";
const FAILED: &str = "failed";
const INTERRUPTED: &str = "interrupted";
const NOT_STORED: &str = "not stored";

/// Warns of hosts reached at the same address and port: they run at once
/// on one machine, and each measures the other's load.
fn warn_shared_addresses(hosts: &[Host]) {
    for w in shared_addresses(hosts) {
        eprintln!("sysgauge: warning: {w}");
    }
}

fn shared_addresses(hosts: &[Host]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        if let Some(other) = hosts[..i]
            .iter()
            .find(|o| o.address == h.address && o.port == h.port)
        {
            warnings.push(format!(
                "hosts {} and {} are both {}: they run at once on one machine and measure each other's load (list it once, or use --forks 1)",
                for_terminal(&other.name),
                for_terminal(&h.name),
                for_terminal(&h.address)
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_hint_names_what_it_runs_again() {
        assert_eq!(retry_hint(0, 0), None);
        let hint = |f, i| retry_hint(f, i).unwrap_or_default();
        assert!(hint(2, 0).ends_with("runs the failed ones again"));
        assert!(hint(0, 3).ends_with("runs the interrupted ones again"));
        assert!(hint(1, 1).ends_with("runs the failed and interrupted ones again"));
    }

    #[test]
    fn a_retry_keeps_the_failed_hosts_it_did_not_run() {
        let host = |n: &str| Host::new(n);
        let previous = [host("a"), host("b")];
        let st = retry_state(&previous, &[host("a")], vec![host("c")], &s(&["run"]));
        let names: Vec<&str> = st.failed.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(st.args, ["run"]);
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// The errors of `check_reach` for `args` (after `fleet run`'s host
    /// options).
    fn reach_error(args: &[&str]) -> String {
        #[derive(clap::Parser)]
        struct Hosts {
            #[command(flatten)]
            target: FleetHostsArgs,
        }
        let hosts = <Hosts as clap::Parser>::try_parse_from(
            std::iter::once("fleet").chain(args.iter().copied()),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        match check_reach(&hosts.target) {
            Ok(_) => panic!("accepted: {args:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    /// Every file argument of a fleet run once read (or had ssh read)
    /// /dev/zero until the kernel killed it, or blocked for ever on a FIFO.
    #[test]
    fn file_arguments_that_are_not_regular_files_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fifo = dir.path().join("pipe");
        sysgauge_testkit::mkfifo(&fifo);
        let fifo = fifo.to_string_lossy().to_string();
        assert_eq!(
            reach_error(&["--inventory", "/dev/zero"]),
            "--inventory /dev/zero: not a regular file (a character device)"
        );
        assert_eq!(
            reach_error(&["--inventory", &fifo]),
            format!("--inventory {fifo}: not a regular file (a FIFO (named pipe))")
        );
        assert_eq!(
            reach_error(&["--ssh-config", "/dev/zero", "h1"]),
            "--ssh-config /dev/zero: not a regular file (a character device)"
        );
        assert_eq!(
            reach_error(&["--ssh-config", &fifo, "h1"]),
            format!("--ssh-config {fifo}: not a regular file (a FIFO (named pipe))")
        );
        assert_eq!(
            reach_error(&["--binary", "aarch64=/dev/zero", "h1"]),
            "--binary aarch64=/dev/zero: not a regular file (a character device)"
        );
        let big = dir.path().join("big_config");
        std::fs::File::create(&big)
            .and_then(|f| f.set_len(1 << 30))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            reach_error(&["--ssh-config", &big.to_string_lossy(), "h1"]),
            format!(
                "--ssh-config {}: 1 GiB, more than the 16 MiB such a file may be",
                big.display()
            )
        );
    }

    /// Two entries for one machine once ran at once without a word.
    #[test]
    fn hosts_at_one_address_are_warned_of() {
        let inv = inventory::parse(
            "inv",
            "10.0.0.11 name=a\n10.0.0.11 name=b\n10.0.0.11:2222 name=c\n10.0.0.12 name=d\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            shared_addresses(&inv.hosts),
            ["hosts a and b are both 10.0.0.11: they run at once on one machine and measure each other's load (list it once, or use --forks 1)"]
        );
    }

    #[test]
    fn measuring_commands_are_those_with_the_measuring_options() {
        let mut m = measuring();
        m.sort();
        assert_eq!(
            m,
            [
                "clock", "cpu", "crypto", "disk", "mem", "net", "ping", "run", "spawn", "ssh",
                "startup", "sweep"
            ]
        );
    }

    #[test]
    fn host_command_lines() {
        assert_eq!(
            remote_args(&[]).unwrap_or_default(),
            s(&["run", "--no-wait", "--profile", "quick"])
        );
        assert_eq!(
            remote_args(&s(&["--profile", "tiny", "--only", "hash"])).unwrap_or_default(),
            s(&["run", "--no-wait", "--profile", "tiny", "--only", "hash"])
        );
        assert_eq!(
            remote_args(&s(&["crypto", "--profile", "tiny"])).unwrap_or_default(),
            s(&["crypto", "--no-wait", "--profile", "tiny"])
        );
        // Asked for: the hosts wait.
        assert_eq!(
            remote_args(&s(&["--wait-quiet=60", "--only", "hash"])).unwrap_or_default(),
            s(&["run", "--wait-quiet=60", "--only", "hash"])
        );
        assert_eq!(
            remote_args(&s(&["spawn", "--no-wait"])).unwrap_or_default(),
            s(&["spawn", "--no-wait"])
        );
        // Each family subcommand's own selection grammar: a family, a
        // benchmark of it, or its short name.
        for good in [
            &["cpu", "--only", "cpu"][..],
            &["crypto", "--only", "hash"],
            &["mem", "--skip", "mem"],
            &["spawn", "--method", "spawn"],
            &["disk", "--only", "disk"],
            &["net", "--only", "net"],
            &["sweep", "--only", "sweep"],
        ] {
            assert!(remote_args(&s(good)).is_ok(), "{good:?}");
        }
        for bad in [
            &["--json", "x"][..],
            &["run", "--db=x"],
            &["compare"],
            &["--no-store"],
            &["cpu", "--only", "hash"],
            &["mem", "--skip", "nosuch"],
            &["spawn", "--method", "nosuch"],
            &["crypto", "--only", "cpu"],
        ] {
            assert!(remote_args(&s(bad)).is_err(), "{bad:?}");
        }
    }
}
