//! `sysgauge net`: the net family alone, over loopback (an in-process
//! service) or to `--peer` (a machine running `sysgauge listen --serve`).
//! Same ids and records as the net slice of `sysgauge run`; prints the
//! summary table, the net digest (Gbit/s, p99, saturation) and findings.
//! A `--peer` on this machine is recognised: its listener's CPU time is
//! kept apart (`peer_cpus`), not counted as a disturbance.

use crate::cli::{MeasureArgs, SelectArgs};
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::netconfig::net_options;
use crate::values::{NiceCount, NiceSize};
use anyhow::Result;
use clap::Args;
use std::sync::Arc;
use sysgauge_net::net;

#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Cases by name or id (`udp-rtt`, `net.udp-rtt`).
    #[command(flatten)]
    pub select: SelectArgs,

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

    /// Streams of the multi-stream TCP case (default 2, the same on every
    /// machine; measured in every profile, tiny included), and of the
    /// multi-stream --http download.
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

pub fn run(args: NetArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    let options = Arc::new(net_options(&args)?);
    let benches = measure::select(net::benchmarks(&options), &args.select)?;
    // A peer on this machine (`listen --serve` here): its process works
    // for the measurement; counted as another process it would mark every
    // case disturbed by the run's own far side.
    let mut findings = Vec::new();
    if let Some(peer) = &options.peer {
        if let Some((pids, finding)) = net::local::local_peer(&peer.name, peer.addr) {
            cfg.peer_processes = pids;
            findings.push(finding);
        }
    }
    let cancel = crate::signals::install()?;
    let outcome = measure::execute_family(&net::FAMILY, &cfg, &benches, &cancel, findings)?;
    measure::finish(
        &cfg,
        &outcome,
        measure::family_text(&net::FAMILY, &outcome.record),
    )
}
