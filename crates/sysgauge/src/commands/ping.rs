//! `sysgauge ping HOST…`: a 2ping client, interoperable with the reference
//! `2ping` listener, that tells outbound from inbound loss, with output laid
//! out as the reference's (a line per reply, then per-host statistics).
//!
//! The ping is a measuring subcommand: it runs the `net.ping-rtt` and
//! `net.ping-loss` cases through the ordinary runner and stores them as a
//! run, so `--json -` gives scripts the whole record (every RTT, the loss
//! split, packet counts) on stdout while the human lines move to stderr.
//!
//! Ctrl-C is the ordinary way to end an open-ended ping (as with ping(8)):
//! it stops sending, the statistics so far are printed and stored, and the
//! exit code is 0 (1 if some host never answered). So the client gets the
//! signal's token, and the runner sees it only when it came before the
//! first ping, during the wait for a quiet machine: that interrupts the run
//! (exit 130, the run stored `interrupted`) as in every measuring command
//! (`measure::execute_until_signal`). Every other signal while pinging
//! (SIGTERM, SIGHUP; Ctrl-C on a ping bounded by -c or -w) interrupts the
//! run as the README says: the statistics so far are printed and stored,
//! the run is `interrupted`, exit 143, 129 or 130 (the benchmarks cancel
//! the runner once every case has read the ping: `PingSetup::interrupts`).
//! A second signal quits at once as everywhere else.
//!
//! `--rounds N` pings N times (a fresh client each round) and needs -c or
//! -w: an open-ended ping never ends a round by itself.

use crate::cli::{MeasureArgs, TwopingArgs};
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::netconfig::{check_ping_json, ping_config};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use sysgauge_core::CancelToken;
use sysgauge_net::net::report::ping_statistics;
use sysgauge_net::net::{self, NetOptions, PingSetup};
use sysgauge_twoping::client::{Client, ClientEvent};

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

/// Different error messages shown per host before the rest are only
/// counted.
const MAX_ERROR_LINES: usize = 10;

/// The errors of each host, each message shown once and then counted: a
/// port where nothing listens answers every ping with an ICMP "port
/// unreachable", which would otherwise be a line per ping. The counts are
/// given at the end (`Problems::summary`).
struct Problems {
    /// Per host: each distinct (peer, message) with how often it came.
    seen: Mutex<Vec<Vec<(SocketAddr, String, u64)>>>,
}

impl Problems {
    fn new(hosts: usize) -> Problems {
        Problems {
            seen: Mutex::new(vec![Vec::new(); hosts]),
        }
    }

    /// Count `message`; say it on stderr the first time it comes (up to
    /// `MAX_ERROR_LINES` different ones per host).
    fn report(&self, host: usize, peer: &SocketAddr, message: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mine) = seen.get_mut(host) else {
            return;
        };
        if let Some(e) = mine.iter_mut().find(|e| e.0 == *peer && e.1 == message) {
            e.2 += 1;
            return;
        }
        mine.push((*peer, message.to_string(), 1));
        match mine.len().cmp(&MAX_ERROR_LINES) {
            std::cmp::Ordering::Less => eprintln!("sysgauge: {peer}: {message}"),
            std::cmp::Ordering::Equal => {
                eprintln!("sysgauge: {peer}: {message}");
                eprintln!("sysgauge: {peer}: further different errors are counted, not shown");
            }
            std::cmp::Ordering::Greater => {}
        }
    }

    /// A line per message that came more than once, with its count; and
    /// per host, how many errors were not shown at all.
    fn summary(&self) -> String {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        for mine in seen.iter() {
            let (shown, hidden) = mine.split_at(mine.len().min(MAX_ERROR_LINES));
            for (peer, message, n) in shown.iter().filter(|e| e.2 > 1) {
                out.push_str(&format!("sysgauge: {peer}: {n} times in all: {message}\n"));
            }
            if let Some((peer, ..)) = hidden.first() {
                let n: u64 = hidden.iter().map(|e| e.2).sum();
                out.push_str(&format!(
                    "sysgauge: {peer}: {n} more errors of {} other kinds not shown\n",
                    hidden.len()
                ));
            }
        }
        out
    }
}

/// Where live lines go: stdout, or stderr when stdout carries the JSON
/// record. A closed stdout stops the ping instead of failing it.
struct Printer {
    to_stderr: bool,
    stop: CancelToken,
}

impl Printer {
    fn line(&self, text: &str) {
        if self.to_stderr {
            let _ = writeln!(std::io::stderr(), "{text}");
            return;
        }
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
            self.stop.cancel();
        }
    }
}

pub fn run(args: PingArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    check_ping_json(cfg.json.as_deref())?;
    cfg.quiet_progress = true;
    let ping = ping_config(&args)?;
    let open_ended = args.count.is_none() && args.deadline.is_none();
    if open_ended && cfg.rounds > 1 {
        bail!(
            "--rounds {}: an open-ended ping is one round, ended by Ctrl-C; give -c COUNT or -w SECONDS to ping in rounds",
            cfg.rounds
        );
    }
    let targets = ping.targets.clone();
    let client = Client::new(ping.client.clone(), ping.targets).context("cannot start pinging")?;
    let stop = crate::signals::install_with(None)?;
    let to_stderr = cfg.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    let printer = Arc::new(Printer {
        to_stderr,
        stop: stop.clone(),
    });
    for t in &targets {
        printer.line(&format!(
            "2PING {} ({}): {} to {} bytes of data.",
            t.name,
            t.addr.ip(),
            ping.client.peer.min_packet_size,
            ping.client.peer.max_packet_size
        ));
    }
    let per_reply = !ping.quiet && !ping.client.flood;
    let show_losses = !ping.quiet;
    let problems = Arc::new(Problems::new(targets.len()));
    let errors = Arc::clone(&problems);
    let p = Arc::clone(&printer);
    let observer = move |e: &ClientEvent| match e {
        ClientEvent::Reply {
            peer,
            seq,
            rtt,
            peer_rtt,
            size,
            ..
        } if per_reply => {
            let mut line = format!(
                "{size} bytes from {}: ping_seq={seq} time={:.3} ms",
                peer.ip(),
                rtt.as_secs_f64() * 1e3
            );
            if let Some(pr) = peer_rtt {
                line.push_str(&format!(" peertime={:.3} ms", pr.as_secs_f64() * 1e3));
            }
            p.line(&line);
        }
        ClientEvent::Loss {
            peer,
            seq,
            direction,
            ..
        } if show_losses => p.line(&crate::commands::listen::loss_line(
            peer.ip(),
            *seq,
            *direction,
        )),
        ClientEvent::PeerText {
            peer, kind, text, ..
        } if show_losses => p.line(&crate::commands::listen::peer_text_line(
            &peer.ip().to_string(),
            *kind,
            text,
        )),
        ClientEvent::Error {
            host,
            peer,
            message,
        } => {
            errors.report(*host, peer, message);
        }
        ClientEvent::Invalid { host, peer, error } => {
            errors.report(*host, peer, &format!("invalid packet: {error}"));
        }
        _ => {}
    };
    // Ctrl-C ends an open-ended ping as it should; any other signal (and
    // Ctrl-C on a ping with a count or deadline) interrupts the run.
    let interrupts = move || match crate::signals::first_signal() {
        None => false,
        Some(sig) => !(sig == signal_hook::consts::SIGINT && open_ended),
    };
    let setup = PingSetup {
        hosts: targets.iter().map(|t| t.name.clone()).collect(),
        client: Arc::new(Mutex::new(Some(client))),
        config: ping.client.clone(),
        targets: targets.clone(),
        stop: stop.clone(),
        interrupts: Some(Arc::new(interrupts)),
        observer: Some(Arc::new(observer)),
    };
    let options = Arc::new(NetOptions {
        ping: Some(setup),
        ..NetOptions::default()
    });
    let benches = net::benchmarks(&options);
    // Ctrl-C during the wait for a quiet machine interrupts the run; once
    // pinging, it ends the ping (through `stop`), and the benchmarks
    // cancel the runner after it when the signal interrupts.
    let outcome = measure::execute_until_signal("ping", &cfg, &benches, &stop, Vec::new())?;
    // Before the statistics, so that they stay the last lines.
    eprint!("{}", problems.summary());
    let mut text = ping_statistics(&outcome.record);
    // The record is interrupted when the signal came before the ping, or
    // was one that interrupts.
    text.push_str(&measure::closing_lines(&outcome, outcome.exit));
    measure::print_human(&cfg, &text)?;
    Ok(outcome.exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_error_is_counted_and_kinds_beyond_the_limit_summed() {
        let p = Problems::new(2);
        let peer: SocketAddr = "127.0.0.1:15998".parse().unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..5 {
            p.report(0, &peer, "Connection refused");
        }
        p.report(0, &peer, "once");
        for k in 0..MAX_ERROR_LINES + 2 {
            p.report(1, &peer, &format!("kind {k}"));
        }
        p.report(1, &peer, &format!("kind {}", MAX_ERROR_LINES + 1));
        assert_eq!(
            p.summary(),
            "sysgauge: 127.0.0.1:15998: 5 times in all: Connection refused\n\
             sysgauge: 127.0.0.1:15998: 3 more errors of 2 other kinds not shown\n"
        );
    }
}
