//! The `net` family: TCP throughput (one and several streams), TCP
//! connection rate, UDP small-packet rate with a growing number of senders,
//! UDP round-trip latency, and the 2ping results of `sysgauge ping`; and,
//! to hosts that run no sysgauge at all, ICMP echo round trip and flood
//! rate ([`icmp`]), TCP connection set-up time and HTTP download
//! throughput ([`http`]).
//!
//! The TCP and UDP cases talk to a net service: by default one started in
//! this process on 127.0.0.1 at a free port (so `sysgauge run` measures the
//! loopback path, the kernel's network stack and memory, with nothing to
//! set up), or a peer's `sysgauge listen --serve` given as `--peer`. The
//! service and its wire format are in [`service`] and [`proto`]; the
//! `target` param ("loopback" or the peer as given) keeps loopback numbers
//! from being compared with numbers over a real link.
//!
//! The ping cases exist only when `sysgauge ping` supplies hosts
//! ([`ping::PingSetup`]); otherwise they plan no case, and the TCP/UDP
//! cases plan none when hosts are supplied, so one family serves both
//! commands with the same ids. The ICMP, connect and HTTP cases plan one
//! case per host or URL named (`--icmp`, `--connect`, `--http`), and
//! none otherwise.

/// Declares a benchmark whose only state is the family's options, from what
/// names and describes it: the struct, its stable `ID`, `new`, and its
/// `Benchmark` impl, whose `cases` and `run` are the struct's own methods of
/// those names, written beside its probe. Defined before the modules so that
/// they can use it.
macro_rules! options_benchmark {
    ($(#[$doc:meta])* $name:ident = $id:literal, $summary:literal, $unit:expr, $better:expr) => {
        $(#[$doc])*
        pub struct $name {
            options: std::sync::Arc<$crate::net::NetOptions>,
        }

        impl $name {
            pub const ID: &'static str = $id;

            pub fn new(options: std::sync::Arc<$crate::net::NetOptions>) -> Self {
                $name { options }
            }
        }

        impl sysgauge_core::Benchmark for $name {
            fn id(&self) -> &str {
                Self::ID
            }

            fn describe(&self) -> sysgauge_core::Description {
                sysgauge_core::Description::new($summary, $unit, $better)
            }

            fn cases(&self, plan: &sysgauge_core::Plan) -> Vec<sysgauge_core::Params> {
                $name::cases(self, plan)
            }

            fn run(
                &self,
                ctx: &mut sysgauge_core::RunCtx,
                params: &sysgauge_core::Params,
            ) -> Result<Vec<sysgauge_core::Metric>, sysgauge_core::BenchError> {
                $name::run(self, ctx, params)
            }
        }
    };
}

pub mod endpoint;
pub mod http;
pub mod icmp;
pub mod local;
pub mod matrix;
pub mod ping;
pub mod proto;
pub mod report;
pub mod service;
mod sys;
pub mod tcp;
#[cfg(test)]
mod tests;
pub mod udp;

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use sysgauge_core::{
    BenchError, Benchmark, Better, Finding, Metric, Params, RunCtx, Severity, Unit,
};
use sysgauge_family::util::metric;

pub use ping::{PingObserver, PingSetup};
pub use proto::ServiceKey;
pub use proto::DEFAULT_SERVICE_PORT;
pub use service::{NetService, ServiceConfig, DEFAULT_UDP_RATE};

/// A peer running `sysgauge listen --serve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// As given on the command line (the `target` param).
    pub name: String,
    /// Its service's TCP address (the UDP port comes from the handshake).
    pub addr: SocketAddr,
}

/// Command-line choices for the family; `Default` is the loopback run of
/// `sysgauge run`.
#[derive(Debug, Clone, Default)]
pub struct NetOptions {
    /// Measure against this peer instead of the in-process loopback service.
    pub peer: Option<Peer>,
    /// Streams of the multi-stream TCP case (default: one per CPU, at least 2).
    pub streams: Option<usize>,
    /// UDP datagram size for packet rate and latency (default 64 bytes).
    pub udp_size: Option<usize>,
    /// Set by `sysgauge ping`: the hosts and the client.
    pub ping: Option<PingSetup>,
    /// The peer's shared key (`--peer-key` or SYSGAUGE_NET_KEY).
    pub key: Option<proto::ServiceKey>,
    /// Hosts to send ICMP echoes to (`--icmp`; no sysgauge there).
    pub icmp: Vec<icmp::IcmpTarget>,
    /// ICMP echo payload size (`--icmp-size`, default 56 bytes).
    pub icmp_size: Option<usize>,
    /// Sender counts of the ICMP flood (`--senders`; default 1, 2, 4 … by
    /// profile).
    pub senders: Option<Vec<usize>>,
    /// The ICMP flood in a fixed window of wall-clock time instead of timed
    /// repetitions (`--flood-at`, `--flood-for`; a fleet flood).
    pub flood_window: Option<icmp::FloodWindow>,
    /// Ports to time TCP connections to (`--connect`).
    pub connect: Vec<http::ConnectTarget>,
    /// URLs to download from (`--http`).
    pub http: Vec<http::HttpTarget>,
}

impl NetOptions {
    /// The cases of a TCP or UDP benchmark: none in a `sysgauge ping` run,
    /// which measures only its pings, and none when only hosts that run no
    /// sysgauge were named (`--icmp`, `--connect`, `--http` without
    /// `--peer`).
    pub fn service_cases(&self, cases: impl FnOnce() -> Vec<Params>) -> Vec<Params> {
        if self.ping.is_some() || (self.peer.is_none() && self.has_foreign_targets()) {
            Vec::new()
        } else {
            cases()
        }
    }
}

impl NetOptions {
    /// The cases of an ICMP, connect or HTTP benchmark (hosts that run no
    /// sysgauge): none in a `sysgauge ping` run, which measures only its
    /// pings.
    pub fn foreign_cases(&self, cases: impl FnOnce() -> Vec<Params>) -> Vec<Params> {
        if self.ping.is_some() {
            Vec::new()
        } else {
            cases()
        }
    }

    /// Whether hosts that run no sysgauge were named.
    pub fn has_foreign_targets(&self) -> bool {
        !(self.icmp.is_empty() && self.connect.is_empty() && self.http.is_empty())
    }
}

/// The `target` param of the TCP and UDP cases.
pub fn target_param(options: &NetOptions) -> String {
    match &options.peer {
        Some(p) => p.name.clone(),
        None => "loopback".into(),
    }
}

/// The entry of `targets` that a case's `key` param names; `what` names
/// the list in the error.
pub(crate) fn named<'a, T>(
    params: &Params,
    key: &str,
    targets: &'a [T],
    name_of: impl Fn(&T) -> &str,
    what: &str,
) -> Result<&'a T, BenchError> {
    let name = params
        .get_str(key)
        .ok_or_else(|| BenchError::failed(format!("missing {key}")))?;
    targets
        .iter()
        .find(|t| name_of(t) == name)
        .ok_or_else(|| BenchError::failed(format!("{name} is not among the {what}")))
}

/// A case's count of parallel workers (`streams`, `senders`), within
/// 1..=`most`.
pub(crate) fn count_param(params: &Params, key: &str, most: usize) -> Result<usize, BenchError> {
    params
        .get_u64(key)
        .and_then(|s| usize::try_from(s).ok())
        .filter(|&s| (1..=most).contains(&s))
        .ok_or_else(|| BenchError::failed(format!("{key} must be within 1..={most}")))
}

/// A packet size within `bounds`, or an error naming it as `what` ("UDP
/// datagram size") with the bounds.
pub(crate) fn check_within(
    what: &str,
    size: usize,
    bounds: RangeInclusive<usize>,
) -> Result<usize, String> {
    if bounds.contains(&size) {
        Ok(size)
    } else {
        Err(format!(
            "{what} {size} must be within {}..={} bytes",
            bounds.start(),
            bounds.end()
        ))
    }
}

/// A case's `size` param (else `default`, the size the command line chose),
/// validated by `check`.
pub(crate) fn size_param(
    params: &Params,
    default: usize,
    check: fn(usize) -> Result<usize, String>,
) -> Result<usize, BenchError> {
    let size = params
        .get_u64("size")
        .and_then(|s| usize::try_from(s).ok())
        .unwrap_or(default);
    check(size).map_err(BenchError::failed)
}

/// Worker `i`'s own state (a sender's socket, a stream's buffer), locked
/// for one timed call: "no {what} for this {worker}" if there is none, "a
/// {worker} panicked" if its lock was poisoned.
pub(crate) fn lock_worker<'a, T>(
    workers: &'a [Mutex<T>],
    i: usize,
    what: &str,
    worker: &str,
) -> Result<MutexGuard<'a, T>, BenchError> {
    workers
        .get(i)
        .ok_or_else(|| BenchError::failed(format!("no {what} for this {worker}")))?
        .lock()
        .map_err(|_| BenchError::failed(format!("a {worker} panicked")))
}

/// Round trips timed one at a time (UDP, ICMP echo, TCP connection
/// set-up): the repetitions' medians and 99th percentiles, in µs.
pub(crate) struct RoundTrips {
    medians: Vec<f64>,
    p99s: Vec<f64>,
}

impl RoundTrips {
    /// Each repetition takes round trips until its time is up (at least 3,
    /// at most `most`) into `rtts`, an empty buffer with room for them.
    /// `round_trip` is given how many the repetition has and returns one
    /// (µs), or `None` for one that never came back; `what` names the
    /// round trip in the error when none came back.
    pub(crate) fn measure(
        ctx: &mut RunCtx,
        mut rtts: Vec<f64>,
        most: usize,
        what: &str,
        mut round_trip: impl FnMut(usize) -> Result<Option<f64>, BenchError>,
    ) -> Result<RoundTrips, BenchError> {
        let mut p99s = Vec::new();
        let medians = ctx.repeat(|ctx| {
            let span = ctx.repetition_target();
            rtts.clear();
            let start = Instant::now();
            while rtts.len() < most && (rtts.len() < 3 || start.elapsed() < span) {
                if let Some(rtt) = round_trip(rtts.len())? {
                    rtts.push(rtt);
                }
            }
            if rtts.is_empty() {
                return Err(BenchError::failed(format!("no {what} completed")));
            }
            p99s.push(sysgauge_stats::percentile(&rtts, 99.0));
            Ok(sysgauge_stats::median(&rtts))
        })?;
        // p99s also holds the warm-up's; keep the timed repetitions'.
        let p99s = p99s.split_off(p99s.len().saturating_sub(medians.len()));
        Ok(RoundTrips { medians, p99s })
    }

    /// `rtt` (the medians) and `rtt_p99`.
    pub(crate) fn metrics(self) -> Result<Vec<Metric>, BenchError> {
        Ok(vec![
            metric("rtt", Unit::Microseconds, Better::Lower, self.medians)?,
            metric("rtt_p99", Unit::Microseconds, Better::Lower, self.p99s)?,
        ])
    }
}

/// Said once per loopback run: what loopback numbers mean.
pub fn loopback_finding() -> Finding {
    Finding::new(
        "net-loopback",
        Severity::Info,
        "the net cases ran over loopback: they measure the kernel's TCP/IP stack, memory copies and scheduling on this machine, not a network card or a link",
    )
    .with_remedy("run `sysgauge listen --serve --serve-bind ADDR` on another machine and `sysgauge net --peer HOST` here to measure a link")
}

sysgauge_family::register_family! {
    name: "net", options: NetOptions, in_default_run: true,
    cpu_bound: false, summary_first: true,
    budget_seconds: [0.4, 3.5, 30.0, 90.0], report: Some(|run, _| report::net_summary(run)),
    summary: "TCP throughput and connection rate, UDP packet rate and latency (loopback or --peer); 2ping results of `sysgauge ping`",
    charts: &matrix::CHARTS,
}

/// Every net benchmark, in display order.
pub fn benchmarks(options: &Arc<NetOptions>) -> Vec<Box<dyn Benchmark>> {
    vec![
        Box::new(tcp::TcpThroughputBenchmark::new(options.clone())),
        Box::new(tcp::TcpConnectBenchmark::new(options.clone())),
        Box::new(udp::UdpPpsBenchmark::new(options.clone())),
        Box::new(udp::UdpRttBenchmark::new(options.clone())),
        // The flood first: with `--flood-at` (a fleet flood) no other case
        // can make a host late for the agreed window.
        Box::new(icmp::IcmpPpsBenchmark::new(options.clone())),
        Box::new(icmp::IcmpRttBenchmark::new(options.clone())),
        Box::new(http::TcpConnectRttBenchmark::new(options.clone())),
        Box::new(http::HttpDownloadBenchmark::new(options.clone())),
        Box::new(ping::PingBenchmark::new(
            ping::PingMeasure::Rtt,
            options.clone(),
        )),
        Box::new(ping::PingBenchmark::new(
            ping::PingMeasure::Loss,
            options.clone(),
        )),
    ]
}
