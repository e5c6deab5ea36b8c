//! `net.ping-rtt` and `net.ping-loss`: a 2ping run (`sysgauge ping HOST…`)
//! stored as results, one case per host and id.
//!
//! A ping run is not calibrated or repeated: it lasts as long as the user
//! asked (`-c`, `-w`, or until Ctrl-C), pings every host in parallel, and
//! its samples are the round-trip times themselves. The whole run happens
//! once, in a fixture made by the first case; every case then reads its
//! host's part of the report. The client is built (sockets bound, settings
//! checked) by the caller before the run starts, so bad options fail as
//! usage errors, not as failed cases.
//!
//! The benchmarks never print: each event is handed to the observer the
//! caller supplied (the command line prints per-reply lines from it). The
//! stop token ends sending (a signal); it is separate from the runner's
//! cancellation because stopping a ping may be its normal end (Ctrl-C on an
//! open-ended ping), and the results must be recorded either way. When the
//! caller says the stop interrupts the run (`PingSetup::interrupts`), the
//! last case to read the ping cancels the runner's token: every case keeps
//! what was measured, and the run is stored `interrupted`.
//!
//! With `--rounds N` each round is a ping run of its own (the fixture lives
//! for one round), the first with the client the caller built and each
//! later one with a fresh client to the same targets.

use super::report::plural;
use super::NetOptions;
use std::sync::{Arc, Mutex};
use sysgauge_core::{
    BenchError, Benchmark, Better, CancelToken, Description, Metric, Params, Plan, RunCtx, Unit,
};
use sysgauge_family::util::metric;
use sysgauge_twoping::client::{
    Client, ClientConfig, ClientEvent, ClientReport, HostSummary, Target,
};

/// Sees every event of the ping run as it happens.
pub type PingObserver = Arc<dyn Fn(&ClientEvent) + Send + Sync>;

/// Whether the stop, once it came, interrupts the run (SIGTERM, say)
/// rather than ending the ping as it should (Ctrl-C on an open-ended ping).
pub type StopInterrupts = Arc<dyn Fn() -> bool + Send + Sync>;

/// What `sysgauge ping` hands to the benchmarks.
#[derive(Clone)]
pub struct PingSetup {
    /// The client, bound to its targets; taken by the first round.
    pub client: Arc<Mutex<Option<Client>>>,
    /// The settings the client was built with (for params and details, and
    /// the client of each later round).
    pub config: ClientConfig,
    /// The client's targets (for the client of each later round).
    pub targets: Vec<Target>,
    /// Host names as given, in target order (the `host` param).
    pub hosts: Vec<String>,
    /// Ends sending (a signal).
    pub stop: CancelToken,
    /// Whether a stop interrupts the run; `None`: never.
    pub interrupts: Option<StopInterrupts>,
    /// Receives every event.
    pub observer: Option<PingObserver>,
}

impl PingSetup {
    /// The ping was stopped, and that interrupts the run.
    fn interrupted(&self) -> bool {
        self.stop.is_cancelled() && self.interrupts.as_ref().is_some_and(|f| f())
    }
}

impl std::fmt::Debug for PingSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PingSetup")
            .field("hosts", &self.hosts)
            .field("config", &self.config)
            .finish()
    }
}

/// How the pinging was paced (a param: flood RTTs are not interval RTTs).
pub fn mode_of(config: &ClientConfig) -> &'static str {
    if config.adaptive {
        "adaptive"
    } else if config.flood {
        "flood"
    } else {
        "interval"
    }
}

/// The finished run.
struct PingOutcome {
    report: ClientReport,
    /// Per host, every RTT in milliseconds, in arrival order.
    rtts: Vec<Vec<f64>>,
}

impl PingOutcome {
    /// Host `i`'s summary in the report.
    fn host(&self, i: usize) -> Result<HostSummary, BenchError> {
        self.report
            .hosts
            .get(i)
            .cloned()
            .ok_or_else(|| BenchError::failed("host missing from the report"))
    }
}

/// A round's ping run and how many cases have read it.
struct PingRound {
    outcome: Result<PingOutcome, String>,
    reads: usize,
}

/// The round's ping run (made by the first case to ask), counting the
/// read. A stop that interrupts the run before the round's ping began
/// cancels the case.
fn outcome<'a>(ctx: &'a mut RunCtx, setup: &PingSetup) -> Result<&'a mut PingOutcome, BenchError> {
    let round: &mut PingRound = ctx.fixture("net.ping-run", |_| {
        if setup.interrupted() {
            return Err(BenchError::Cancelled);
        }
        Ok(PingRound {
            outcome: ping_all(setup),
            reads: 0,
        })
    })?;
    round.reads += 1;
    round
        .outcome
        .as_mut()
        .map_err(|e| BenchError::failed(e.clone()))
}

/// After a case read the round's ping: once every case has (both ids for
/// every host), a stop that interrupts the run cancels the runner, so the
/// run ends `interrupted` with every case's results kept.
fn after_read(ctx: &mut RunCtx, setup: &PingSetup) {
    let cases = 2 * setup.hosts.len();
    let reads = ctx
        .fixture("net.ping-run", |_| Err(BenchError::Cancelled))
        .map(|r: &mut PingRound| r.reads)
        .unwrap_or(0);
    if reads >= cases && setup.interrupted() {
        ctx.cancel_token().cancel();
    }
}

fn ping_all(setup: &PingSetup) -> Result<PingOutcome, String> {
    let taken = setup
        .client
        .lock()
        .map_err(|_| "the ping client is unusable after a panic".to_string())?
        .take();
    // The caller's client serves the first round; a later round (--rounds)
    // pings with a new one, as a new `sysgauge ping` would.
    let mut client = match taken {
        Some(c) => c,
        None => Client::new(setup.config.clone(), setup.targets.clone())
            .map_err(|e| format!("cannot start pinging again: {e}"))?,
    };
    let mut rtts = vec![Vec::new(); setup.hosts.len()];
    let stop = setup.stop.clone();
    let observer = setup.observer.clone();
    let report = client
        .run(&|| stop.is_cancelled(), &mut |e| {
            if let ClientEvent::Reply { host, rtt, .. } = e {
                if let Some(v) = rtts.get_mut(*host) {
                    v.push(rtt.as_secs_f64() * 1e3);
                }
            }
            if let Some(o) = &observer {
                o(e);
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(PingOutcome { report, rtts })
}

/// The ping set-up and the index, in its hosts, of the case's host.
fn case_host<'a>(
    options: &'a NetOptions,
    params: &Params,
) -> Result<(&'a PingSetup, usize), BenchError> {
    let setup = options
        .ping
        .as_ref()
        .ok_or_else(|| BenchError::failed("no host to ping (use `sysgauge ping HOST`)"))?;
    let host = params
        .get_str("host")
        .ok_or_else(|| BenchError::failed("missing host"))?;
    setup
        .hosts
        .iter()
        .position(|h| h == host)
        .map(|i| (setup, i))
        .ok_or_else(|| BenchError::failed(format!("{host} is not among the pinged hosts")))
}

fn ping_cases(options: &NetOptions) -> Vec<Params> {
    let Some(setup) = &options.ping else {
        return Vec::new();
    };
    setup
        .hosts
        .iter()
        .map(|h| {
            let p = Params::new()
                .with("host", h.as_str())
                .with("mode", mode_of(&setup.config));
            // Several pings in flight is another workload (RTTs include
            // queueing); the param appears only then, so runs without a
            // preload keep the params they always had.
            if setup.config.preload > 1 {
                p.with("preload", setup.config.preload)
            } else {
                p
            }
        })
        .collect()
}

/// What a ping case reports of the one 2ping run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingMeasure {
    /// `net.ping-rtt`: every reply's round-trip time a sample.
    Rtt,
    /// `net.ping-loss`: loss, split into outbound, inbound and undetermined.
    Loss,
}

/// `net.ping-rtt` and `net.ping-loss`: a case per host, both read from
/// the same 2ping run.
pub struct PingBenchmark {
    measure: PingMeasure,
    options: Arc<NetOptions>,
}

impl PingBenchmark {
    pub const RTT_ID: &'static str = "net.ping-rtt";
    pub const LOSS_ID: &'static str = "net.ping-loss";

    pub fn new(measure: PingMeasure, options: Arc<NetOptions>) -> Self {
        PingBenchmark { measure, options }
    }
}

fn count(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Benchmark for PingBenchmark {
    fn id(&self) -> &str {
        match self.measure {
            PingMeasure::Rtt => Self::RTT_ID,
            PingMeasure::Loss => Self::LOSS_ID,
        }
    }

    fn describe(&self) -> Description {
        match self.measure {
            PingMeasure::Rtt => Description::new(
                "2ping round-trip time to a host, every reply a sample (sysgauge ping)",
                Unit::Milliseconds,
                Better::Lower,
            ),
            PingMeasure::Loss => Description::new(
                "2ping loss to a host, split into outbound, inbound and undetermined (sysgauge ping)",
                Unit::Percent,
                Better::Lower,
            ),
        }
    }

    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        ping_cases(&self.options)
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let (setup, i) = case_host(&self.options, params)?;
        let metrics = match self.measure {
            PingMeasure::Rtt => rtt_metrics(ctx, setup, i),
            PingMeasure::Loss => loss_metrics(ctx, setup, i),
        };
        if !matches!(metrics, Err(BenchError::Cancelled)) {
            after_read(ctx, setup);
        }
        metrics
    }
}

/// The round-trip times of host `i`, the reply count and its address noted.
fn rtt_metrics(ctx: &mut RunCtx, setup: &PingSetup, i: usize) -> Result<Vec<Metric>, BenchError> {
    let out = outcome(ctx, setup)?;
    let h = out.host(i)?;
    let samples = out.rtts.get(i).cloned().unwrap_or_default();
    let replies = samples.len() as u64;
    ctx.note_detail("address", h.target.addr.to_string());
    ctx.note_detail("replies", replies);
    if samples.is_empty() {
        let why = if h.counts.transmitted == 0 {
            nothing_sent(&h, setup.stop.is_cancelled())
        } else {
            no_reply(&h, &setup.config)
        };
        return Err(BenchError::failed(why));
    }
    Ok(vec![metric(
        "rtt",
        Unit::Milliseconds,
        Better::Lower,
        samples,
    )?])
}

/// Why no ping went to a host: a signal came first, or every send failed.
fn nothing_sent(h: &HostSummary, stopped: bool) -> String {
    let why = if stopped {
        "stopped (Ctrl-C or another signal) before the first ping".to_string()
    } else if h.errors > 0 {
        format!(
            "every send failed ({} {}, the first shown above)",
            h.errors,
            plural(h.errors, "error", "errors")
        )
    } else {
        "the run ended before the first ping was due".to_string()
    };
    format!(
        "no ping was sent to {} ({}): {why}",
        h.target.name, h.target.addr
    )
}

/// Why pings went out and no reply counted, with what to check. A
/// listener with a key drops, unanswered, every ping whose MAC is missing,
/// of another digest or wrong (`codec::decode_authenticated`), so the key
/// is worth checking when nothing came back at all. Datagrams that came
/// back and failed our checks mean the listener answered: that is said
/// instead.
fn no_reply(h: &HostSummary, config: &ClientConfig) -> String {
    let (name, addr) = (&h.target.name, h.target.addr);
    let port = addr.port();
    if h.invalid > 0 {
        let check = match &config.peer.auth {
            Some(auth) => format!(
                "; a reply without our MAC comes from a listener without our key: \
                 start it with the same --auth and --auth-digest ({})",
                auth.digest()
            ),
            None => String::new(),
        };
        return format!(
            "no valid reply from {name} ({addr}): {} {} from it rejected (the first shown above){check}",
            h.invalid,
            plural(h.invalid, "datagram", "datagrams")
        );
    }
    let key = match &config.peer.auth {
        Some(auth) => format!(
            ", does its firewall let UDP port {port} through, and does it have our key? \
             A listener drops pings with a wrong MAC unanswered: check --auth and --auth-digest ({})",
            auth.digest()
        ),
        None => format!(
            ", and does its firewall let UDP port {port} through? \
             A listener started with --auth drops pings without its MAC unanswered: then pass the same --auth and --auth-digest"
        ),
    };
    format!("no reply from {name} ({addr}): is a 2ping listener running there{key}")
}

/// The loss to host `i`, with the counts behind it and what stopped the
/// run noted.
fn loss_metrics(ctx: &mut RunCtx, setup: &PingSetup, i: usize) -> Result<Vec<Metric>, BenchError> {
    let stopped = setup.stop.is_cancelled();
    let count_limit = setup.config.count;
    let out = outcome(ctx, setup)?;
    let elapsed = out.report.elapsed;
    let h = out.host(i)?;
    let c = h.counts;
    ctx.note_detail("address", h.target.addr.to_string());
    ctx.note_detail("transmitted", count(c.transmitted));
    ctx.note_detail("received", count(c.received));
    ctx.note_detail("lost_outbound", count(c.lost_outbound));
    ctx.note_detail("lost_inbound", count(c.lost_inbound));
    ctx.note_detail("undetermined", count(c.undetermined()));
    ctx.note_detail("packets_transmitted", count(h.packets_transmitted));
    ctx.note_detail("packets_received", count(h.packets_received));
    ctx.note_detail("probes", count(h.probes));
    ctx.note_detail("errors", count(h.errors));
    ctx.note_detail("invalid", count(h.invalid));
    if let Some(v) = &h.peer_texts.version {
        ctx.note_detail("peer_version", v.as_str());
    }
    if let Some(n) = &h.peer_texts.notice {
        ctx.note_detail("peer_notice", n.as_str());
    }
    ctx.note_detail(
        "elapsed_ms",
        i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX),
    );
    let stopped_by = if stopped {
        "interrupted"
    } else if count_limit.is_some_and(|n| c.transmitted >= n) {
        "count"
    } else {
        "deadline"
    };
    ctx.note_detail("stopped_by", stopped_by);
    if c.transmitted == 0 {
        return Err(BenchError::failed(nothing_sent(&h, stopped)));
    }
    let pct = |n: u64| vec![c.percent(n)];
    Ok(vec![
        metric("loss", Unit::Percent, Better::Lower, pct(c.lost()))?,
        metric(
            "outbound",
            Unit::Percent,
            Better::Lower,
            pct(c.lost_outbound),
        )?,
        metric("inbound", Unit::Percent, Better::Lower, pct(c.lost_inbound))?,
        metric(
            "undetermined",
            Unit::Percent,
            Better::Lower,
            pct(c.undetermined()),
        )?,
    ])
}
