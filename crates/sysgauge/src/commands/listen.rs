//! `sysgauge listen`: a 2ping listener (interoperable with the reference
//! `2ping` client) and, with `--serve`, the net service that `sysgauge net
//! --peer` measures against.
//!
//! Binding: without `-I` the listener binds every address (0.0.0.0 and ::)
//! because a 2ping listener exists to be reached from other machines; it
//! prints what it bound. The net service is different: a TCP sink and UDP
//! reflector are worth nothing to a stranger but bandwidth, so it binds
//! 127.0.0.1 unless `--serve-bind` names an address.
//!
//! It runs until Ctrl-C (or `-w SECONDS`), then prints per-client
//! statistics of its own second legs and what it dropped. This is a server,
//! not a measurement: nothing is stored.

use crate::cli::TwopingArgs;
use crate::exit::Exit;
use crate::netconfig::listen_config;
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::time::Instant;
use sysgauge_net::net::local::bind_problem;
use sysgauge_net::net::report::{render_stats, PingStats};
use sysgauge_net::net::service::ServiceError;
use sysgauge_net::net::NetService;
use sysgauge_twoping::listener::{Listener, ListenerError, ListenerEvent};
use sysgauge_twoping::{LossDirection, PeerTextKind};

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
    #[arg(long, value_name = "PORT", default_value_t = 15999, requires = "serve",
          value_parser = clap::value_parser!(u16).range(1..))]
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

    /// Most authenticated sink connections of the net service from one
    /// source address at once (all sources together: 256). Connections
    /// that have not sent a complete hello with the key yet never take
    /// these places: they have their own small budget (4 per source, 64 in
    /// all) and 3 s to finish the hello.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "serve")]
    pub serve_max_per_source: usize,

    /// Stop after this many seconds (default: until Ctrl-C).
    #[arg(short = 'w', long, value_name = "SECONDS")]
    pub deadline: Option<f64>,
}

fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|_| out.flush());
}

/// A ping resolved as lost as a live line, in the reference's words.
pub fn loss_line(peer: std::net::IpAddr, seq: u64, direction: LossDirection) -> String {
    match direction {
        LossDirection::Outbound => format!("Lost outbound packet to {peer}: ping_seq={seq}"),
        LossDirection::Inbound => format!("Lost inbound packet from {peer}: ping_seq={seq}"),
    }
}

/// A peer's version or notice as a live line: the notice as the reference
/// prints it ("  Peer notice: …"), the version in the same shape.
pub fn peer_text_line(peer: &str, kind: PeerTextKind, text: &str) -> String {
    match kind {
        PeerTextKind::Version => format!("  Peer version ({peer}): {text}"),
        PeerTextKind::Notice => format!("  Peer notice ({peer}): {text}"),
    }
}

/// After a failed bind: when the address explains it (no interface of
/// this machine has it; a link-local one lacks its interface), the error
/// that says so: the kernel's "Cannot assign requested address" reads
/// like a busy port. The bind is tried first because a machine may allow
/// binding foreign addresses (ip_nonlocal_bind).
fn not_here(option: &str, addr: SocketAddr) -> Option<anyhow::Error> {
    bind_problem(addr).map(|m| anyhow::anyhow!("{option} {}: {m}", addr.ip()))
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn run(args: ListenArgs) -> Result<Exit> {
    let cfg = listen_config(&args)?;
    let (min, max) = (
        cfg.listener.peer.min_packet_size,
        cfg.listener.peer.max_packet_size,
    );
    let rate_limit = cfg.listener.limits.rate_limit;
    let mut listener = Listener::bind(cfg.listener.clone()).map_err(|e| {
        let foreign = match &e {
            ListenerError::Bind { addr, .. } => not_here("-I", *addr),
            _ => None,
        };
        foreign.unwrap_or_else(|| anyhow::Error::new(e).context("cannot start the 2ping listener"))
    })?;
    let service = cfg
        .serve
        .clone()
        .map(NetService::start)
        .transpose()
        .map_err(|e| {
            let foreign = match &e {
                ServiceError::Bind { addr, .. } => not_here("--serve-bind", *addr),
                _ => None,
            };
            foreign.unwrap_or_else(|| {
                anyhow::Error::new(e).context("cannot start the net service (--serve)")
            })
        })?;
    let stop = crate::signals::install_with(None)?;
    for a in listener.local_addrs() {
        say(&format!(
            "2PING listener ({a}): {min} to {max} bytes of data."
        ));
    }
    match rate_limit {
        Some(rl) => eprintln!(
            "sysgauge: rate limit {} datagrams/s per source (IPv6: per /64), loopback{} exempt; --rate-limit 0 turns it off",
            rl.packets_per_second,
            if cfg.listener.peer.auth.is_some() {
                " and authenticated clients"
            } else {
                ""
            }
        ),
        None => eprintln!("sysgauge: no rate limit (--rate-limit 0)"),
    }
    if let Some(s) = &service {
        let keyed = if cfg.serve.as_ref().is_some_and(|c| c.key.is_some()) {
            "with the shared key"
        } else {
            "without a key (loopback only)"
        };
        for a in s.local_addrs() {
            say(&format!(
                "sysgauge net service on {a} (TCP and UDP): `sysgauge net --peer` measures against it, {keyed}"
            ));
        }
    }
    let quiet = cfg.quiet;
    let ends_at = cfg.deadline.map(|d| Instant::now() + d);
    let cancel = || stop.is_cancelled() || ends_at.is_some_and(|t| Instant::now() >= t);
    let mut on_event = |e: &ListenerEvent| {
        if quiet {
            return;
        }
        match e {
            ListenerEvent::Reply {
                peer,
                seq,
                rtt,
                peer_rtt,
                size,
                ..
            } => {
                let mut line = format!(
                    "{size} bytes from {}: ping_seq={seq} time={:.3} ms",
                    peer.ip(),
                    ms(*rtt)
                );
                if let Some(pr) = peer_rtt {
                    line.push_str(&format!(" peertime={:.3} ms", ms(*pr)));
                }
                say(&line);
            }
            ListenerEvent::Loss {
                peer,
                seq,
                direction,
                ..
            } => say(&loss_line(peer.ip(), *seq, *direction)),
            ListenerEvent::PeerText {
                peer, kind, text, ..
            } => say(&peer_text_line(&peer.ip().to_string(), *kind, text)),
            // Counted by the listener and summed up at the end.
            ListenerEvent::Dropped { .. } => {}
        }
    };
    listener
        .serve(&cancel, &mut on_event)
        .context("the 2ping listener stopped")?;
    let mut text = String::new();
    if let Some(s) = &service {
        let c = s.counters();
        let n = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        text.push_str(&format!(
            "net service: {} datagrams reflected, {} dropped (not authenticated {}, rate limited {}); {} connections, {} not authenticated, {} refused busy, {} refused for their source's limit, {} refused while too many hellos were pending, {} closed for not finishing their hello within {} s\n",
            n(&c.udp_reflected),
            n(&c.udp_dropped),
            n(&c.udp_unauthenticated),
            n(&c.udp_rate_limited),
            n(&c.connections),
            n(&c.unauthenticated),
            n(&c.refused_busy),
            n(&c.refused_per_source),
            n(&c.refused_pending),
            n(&c.hello_timeouts),
            sysgauge_net::net::service::HELLO_TIMEOUT.as_secs()
        ));
    }
    drop(service);
    for p in listener.peer_summaries() {
        let c = p.counts;
        text.push_str(&render_stats(&PingStats {
            title: format!("{} (client)", p.peer),
            transmitted: c.transmitted,
            received: c.received,
            lost_outbound: c.lost_outbound,
            lost_inbound: c.lost_inbound,
            undetermined: c.undetermined(),
            rtt: p
                .rtt
                .map(|r| [ms(r.min), ms(r.avg), ms(r.ewma), ms(r.max), ms(r.mdev)]),
            elapsed_ms: None,
            packets: None,
            probes: 0,
        }));
        let t = &p.peer_texts;
        if let Some(v) = &t.version {
            text.push_str(&format!("peer version: {v}\n"));
        }
        if let Some(n) = &t.notice {
            text.push_str(&format!("peer notice: {n}\n"));
        }
    }
    let k = listener.counters().snapshot();
    text.push_str(&format!(
        "\n{} datagrams received, {} replies sent, {} dropped (truncated {}, malformed {}, bad checksum {}, bad MAC {}, rate limited {}, encrypted {}, reply too large {})\n",
        k.received,
        k.replies,
        k.dropped(),
        k.truncated,
        k.malformed,
        k.bad_checksum,
        k.bad_mac,
        k.rate_limited,
        k.unsupported,
        k.reply_too_large
    ));
    if k.rate_exempt > 0 {
        text.push_str(&format!(
            "{} datagrams over the rate limit answered: authenticated clients are exempt\n",
            k.rate_exempt
        ));
    }
    crate::output::stdout(&text)?;
    // A signal ends a listener as it ends every command (128 + its number,
    // after the statistics); the end of -w is the ordinary end.
    if stop.is_cancelled() {
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Ok)
}
