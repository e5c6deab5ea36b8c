//! `sysgauge ssh`: which SSH cipher, MAC and key exchange are fastest.
//!
//! Before the run (so that bad input and a broken target fail fast, exit 2,
//! with nothing measured): validate the options and algorithm names against
//! the client's `ssh -Q` lists, open the session (start the private sshd,
//! or reach `--host` once), probe which algorithms the server accepts, plan
//! the factorial or full matrix over the working ones, and print a time
//! estimate. Then the ssh family runs through the shared runner with the
//! open session and the plan (same ids and params as `sysgauge run --only
//! ssh`), is stored, and is rendered by sysgauge-report's ssh report.
//!
//! A signal during those preparations (starting the server, probing,
//! checking the sink, the first transfer) skips the rest of them: the
//! runner then sees the cancelled token and stores the run `interrupted`
//! with nothing measured (exit 130, 143 or 129), as `sysgauge startup`
//! does during its first runs and every family does between cases.

use crate::cli::MeasureArgs;
use crate::config::{check_repetitions, MeasureConfig};
use crate::exit::Exit;
use crate::measure;
use crate::values::KeyValue;
use crate::values::NiceSize;
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysgauge_core::record::{Finding, Severity};
use sysgauge_core::Requirement;
use sysgauge_net::ssh::algorithms::{secure_names, ClientAlgorithms, Combo, Kind, Matrix};
use sysgauge_net::ssh::client::SshError;
use sysgauge_net::ssh::planning::{calibrate, check_names, plan, plural, probe_names, Choices};
use sysgauge_net::ssh::server::ServerOptions;
use sysgauge_net::ssh::session::{ssh_program, ClientSettings, OpenError, Session, Target};
use sysgauge_net::ssh::sink::Sink;
use sysgauge_net::ssh::{default_size, estimate_seconds, restrict_of, SshOptions};
use sysgauge_report::TableFormat;

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
    pub runs: Option<u64>,

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
    /// exchanges (one that uses a MAC; default aes128-ctr, or one of
    /// --cipher when given).
    #[arg(long, value_name = "NAME")]
    pub fixed_cipher: Option<String>,

    /// The fixed MAC, used to compare ciphers (default
    /// umac-128-etm@openssh.com, or one of --mac when given).
    #[arg(long, value_name = "NAME")]
    pub fixed_mac: Option<String>,

    /// The fixed key exchange, used to compare ciphers and MACs (default
    /// curve25519-sha256, or one of --kex when given).
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

/// Probes running at once: enough to hide the round trips, few enough not
/// to trip a server's MaxStartups (default 10).
const PARALLEL_PROBES: usize = 4;

/// The most bytes one transfer may send (1 TB).
/// Timed transfers per combination when `--repetitions` is not given.
const SSH_REPETITIONS: u64 = 3;

const MAX_SIZE: u64 = 1_000_000_000_000;

/// The options that do not need the client or the server.
struct Parsed {
    target: Target,
    settings: ClientSettings,
    size: u64,
    sink: Option<Sink>,
    choices: Choices,
}

fn parse(args: &SshArgs, cfg: &MeasureConfig) -> Result<Parsed> {
    let target = match &args.host {
        Some(h) => Target::parse_remote(h).map_err(anyhow::Error::msg)?,
        None => Target::Local,
    };
    let size = match args.size {
        None => default_size(cfg.profile),
        Some(NiceSize(0)) => bail!("--size must be at least 1 byte"),
        Some(NiceSize(n)) if n > MAX_SIZE => {
            bail!("--size {n} is more than 1T (10^12 bytes) per transfer")
        }
        Some(NiceSize(n)) => n,
    };
    let sink = args
        .sink
        .as_deref()
        .map(Sink::new)
        .transpose()
        .map_err(anyhow::Error::new)?;
    // The private server's far side is this machine: the sink, truncated
    // for every transfer and then removed, must not be a results database.
    if let (Some(p), Target::Local) = (&args.sink, &target) {
        crate::db::refuse_database_as_output(p, "--sink")?;
    }
    crate::values::within(
        "--connect-timeout",
        args.connect_timeout,
        1,
        300,
        " seconds",
    )?;
    let config = match (&args.ssh_config, &target) {
        (None, _) => None,
        (Some(_), Target::Local) => bail!(
            "--ssh-config applies to --host only (the private server's client uses a generated configuration)"
        ),
        (Some(p), _) => {
            // ssh reads it by its path: a FIFO would block ssh, /dev/zero
            // fill its memory.
            sysgauge_core::file::check_regular_file(
                p,
                "--ssh-config",
                super::fleet::MAX_SSH_CONFIG_BYTES,
            )?;
            Some(p.clone())
        }
    };
    for o in &args.ssh_options {
        if !o.key.chars().all(|c| c.is_ascii_alphanumeric()) {
            bail!("--ssh-option '{o}': '{}' is not an ssh_config option name (e.g. IdentityFile=~/.ssh/bench_key)", o.key);
        }
    }
    let clean = |v: &[String], option: &str| -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for n in v {
            let n = n.trim();
            if n.is_empty() {
                bail!("{option} has an empty entry");
            }
            if !out.iter().any(|x| x == n) {
                out.push(n.to_string());
            }
        }
        Ok(out)
    };
    Ok(Parsed {
        target,
        settings: ClientSettings {
            config,
            options: args.ssh_options.iter().map(|o| o.to_string()).collect(),
            connect_timeout: Duration::from_secs(args.connect_timeout),
        },
        size,
        sink,
        choices: Choices {
            matrix: match args.matrix {
                MatrixArg::Factorial => Matrix::Factorial,
                MatrixArg::Full => Matrix::Full,
            },
            filters: [
                (Kind::Cipher, clean(&args.ciphers, "--cipher")?),
                (Kind::Mac, clean(&args.macs, "--mac")?),
                (Kind::Kex, clean(&args.kex, "--kex")?),
            ],
            fixed: [
                args.fixed_cipher.as_ref().map(|s| s.trim().to_string()),
                args.fixed_mac.as_ref().map(|s| s.trim().to_string()),
                args.fixed_kex.as_ref().map(|s| s.trim().to_string()),
            ],
        },
    })
}

fn minutes(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

/// The value of a step before measuring, `None` when a signal cut it
/// short, or an error naming the step, with the server's log.
fn step<T>(
    outcome: std::result::Result<T, SshError>,
    session: &Session,
    what: impl FnOnce() -> String,
) -> Result<Option<T>> {
    match outcome {
        Ok(v) => Ok(Some(v)),
        Err(SshError::Cancelled) => Ok(None),
        Err(e) => bail!("{}: {}", what(), session.with_server_log(e)),
    }
}

fn note(text: &str) {
    eprintln!(
        "{}",
        crate::style::paint(&format!("ssh: {text}"), crate::style::Stream::Stderr)
    );
}

pub fn run(args: SshArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    let mut p = parse(&args, &cfg)?;
    // Each transfer moves hundreds of megabytes: fewer repetitions than
    // other families by default; `--runs` is the former spelling.
    cfg.repetitions = check_repetitions(
        args.runs
            .or(args.measure.repetitions)
            .unwrap_or(SSH_REPETITIONS),
        if args.runs.is_some() {
            "--runs"
        } else {
            "--repetitions"
        },
    )?;
    let cancel = crate::signals::install()?;
    let mut ssh_opts = SshOptions {
        target: p.target.clone(),
        client: p.settings.clone(),
        size: Some(p.size),
        plan: None,
        session: None,
        sink: p.sink.clone(),
    };
    let mut extra_findings = Vec::new();

    // A missing program is not an error of the machine: the run records the
    // skipped cases with the install hint (exit 0), as `sysgauge run` would.
    let mut reqs = vec![Requirement::program("ssh", "openssh-client")];
    if p.target == Target::Local {
        reqs.push(Requirement::program("ssh-keygen", "openssh-client"));
        reqs.push(Requirement::program(
            sysgauge_net::ssh::server::SSHD,
            "openssh-server",
        ));
    }
    let unmet = reqs.iter().find_map(|r| r.check().err());
    let mut opened: Option<Arc<Session>> = None;
    if let Some(e) = unmet {
        note(&format!("{e}; nothing will be measured"));
    } else {
        // `break 'prepare` on a signal: the runner stores the interrupted
        // run (the session, if open, is dropped here and its server stops).
        'prepare: {
            let ssh = ssh_program().map_err(|e| anyhow::anyhow!("{e}"))?;
            let client = ClientAlgorithms::query(&ssh).map_err(anyhow::Error::msg)?;
            if args.secure_set {
                for (kind, filter) in p.choices.filters.iter_mut() {
                    *filter = secure_names(*kind, &client);
                    if filter.is_empty() {
                        bail!(
                            "--secure-set: this ssh client ({}) has none of the set's {}",
                            client.version,
                            plural(*kind)
                        );
                    }
                }
            }
            check_names(&p.choices, &client).map_err(anyhow::Error::msg)?;
            match &p.target {
                Target::Local => {
                    note("starting a private sshd on 127.0.0.1 (generating host keys)")
                }
                Target::Remote { .. } => note(&format!(
                    "connecting to {}",
                    args.host.as_deref().unwrap_or_default()
                )),
            }
            let session = match Session::open(
                &p.target,
                &p.settings,
                &ServerOptions::default(),
                &cfg.scratch_base,
                &cancel,
            ) {
                Ok(s) => s,
                Err(OpenError::Cancelled) => break 'prepare,
                Err(e @ OpenError::Skip { .. }) => bail!("{e}"),
                Err(OpenError::Failed(m)) => bail!("{m}"),
            };
            let names = probe_names(&p.choices, &client);
            let total: usize = names.iter().map(|(_, v)| v.len()).sum();
            note(&format!(
                "probing which of {total} algorithms {} accepts ({} connections at a time)",
                session.label(),
                PARALLEL_PROBES
            ));
            let bar = if std::io::stderr().is_terminal() {
                let b = indicatif::ProgressBar::new(total as u64);
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{bar:30} {pos}/{len} probes {elapsed_precise}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                Some(b)
            } else {
                None
            };
            let started = Instant::now();
            let discovered = session.discover(&names, PARALLEL_PROBES, &cancel, &|done, _| {
                if let Some(b) = &bar {
                    b.set_position(done as u64);
                }
            });
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let Some(d) = step(discovered, &session, || {
                format!("probing {}", session.label())
            })?
            else {
                break 'prepare;
            };
            let mut summary = Vec::new();
            let mut rejected = Vec::new();
            for (kind, probed) in &names {
                let acc = d.accepted(*kind).len();
                summary.push(format!("{acc} of {} {}", probed.len(), plural(*kind)));
                let rej = d.rejected(*kind);
                if !rej.is_empty() {
                    rejected.push(format!("{} {}", plural(*kind), rej.join(", ")));
                }
            }
            note(&format!(
                "the server accepts {} (probed in {:.1} s)",
                summary.join(", "),
                started.elapsed().as_secs_f64()
            ));
            if !rejected.is_empty() {
                note(&format!("not accepted: {}", rejected.join("; ")));
                extra_findings.push(Finding::new(
                    "ssh-not-accepted",
                    Severity::Info,
                    format!(
                        "{} does not accept these algorithms, so they were not measured: {}",
                        session.label(),
                        rejected.join("; ")
                    ),
                ));
            }
            let (matrix_plan, fixed, notes) =
                plan(&p.choices, &client, &d, session.label()).map_err(anyhow::Error::msg)?;
            for n in notes {
                note(&n);
            }
            if p.choices.matrix == Matrix::Factorial {
                note(&format!(
                    "fixed choices: cipher {}, MAC {}, kex {}",
                    fixed.cipher, fixed.mac, fixed.kex
                ));
            }
            if let Some(sink) = &p.sink {
                // On the far side, before anything is measured: what the path
                // is, and room for one transfer.
                let restrict = restrict_of(&Combo::new(&fixed.cipher, &fixed.mac, &fixed.kex));
                let Some(o) = step(
                    session.run_command(&restrict, &sink.check_command(), &cancel),
                    &session,
                    || format!("checking --sink {} on {}", sink.path(), session.label()),
                )?
                else {
                    break 'prepare;
                };
                sink.judge_check(&String::from_utf8_lossy(&o.stdout), p.size)
                    .map_err(anyhow::Error::new)?;
                note(&format!(
                    "writing each transfer into {} on the far side (removed afterwards)",
                    sink.path()
                ));
            }
            let Some(rate) = step(
                calibrate(&session, &fixed, p.size, &cancel),
                &session,
                || format!("a first transfer to {} failed", session.label()),
            )?
            else {
                break 'prepare;
            };
            let est = estimate_seconds(
                &matrix_plan,
                p.size,
                cfg.warmup,
                cfg.repetitions,
                d.probe_seconds,
                rate,
            );
            note(&format!(
            "{} matrix: {} transfer and {} handshake cases, {} timed runs each of {} bytes; about {} (from a {:.1} s connection and {:.0} MB/s with {}; slow legacy ciphers take longer). Ctrl-C stops and keeps what is finished.",
            p.choices.matrix.as_str(),
            matrix_plan.transfers.len(),
            matrix_plan.handshakes.len(),
            cfg.repetitions,
            p.size,
            minutes(est),
            d.probe_seconds,
            rate / 1e6,
            fixed.cipher,
        ));
            ssh_opts.plan = Some(matrix_plan);
            opened = Some(Arc::new(session));
        }
    }
    ssh_opts.session = opened;
    let options = Arc::new(ssh_opts);
    let selected = sysgauge_net::ssh::benchmarks(&options);
    let outcome = measure::execute_family(
        &sysgauge_net::ssh::FAMILY,
        &cfg,
        &selected,
        &cancel,
        extra_findings,
    )?;
    // Stop the private server (and remove its keys) before printing.
    drop(selected);
    drop(options);
    let text = sysgauge_net::ssh::report::ssh_report(
        &outcome.record,
        TableFormat::Text,
        args.only_secure || args.secure_set,
    );
    measure::finish(&cfg, &outcome, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_read_well() {
        assert_eq!(minutes(42.0), "42 s");
        assert_eq!(minutes(600.0), "10 min");
        assert_eq!(minutes(7200.0), "2.0 h");
    }
}
