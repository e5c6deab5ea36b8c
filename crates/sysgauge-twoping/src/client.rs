//! The 2ping client: pings one or several hosts in parallel and tells in
//! which direction lost pings were lost.
//!
//! One thread drives every host: each host has its own UDP socket,
//! connected to the target (the kernel then drops datagrams from anyone
//! else and reports ICMP "port unreachable" as an error on that socket), and
//! a single `poll` waits on all of them until the next send, probe or
//! deadline, never longer than 100 ms so cancellation is prompt.
//!
//! Per host, the protocol engine (`Session`) does the 3-way exchange: our
//! ping, the peer's reply (which asks for a reply), and our third leg with
//! the RTT we measured. Pings unanswered for `inquire_wait` are listed in
//! "please investigate" on the next ping; the peer's verdicts "seen" and
//! "never received" make the loss inbound or outbound. The peer's own
//! investigation requests are answered from what we saw.
//!
//! Ending is bounded: sending stops at `count` or `deadline` (or on
//! cancellation); then, only if some pings are still unresolved, the client
//! lingers for at most `linger`, listening for late replies and sending a
//! few *probes*: uncounted reply-requesting packets that carry
//! investigation requests for pings unanswered for `min(inquire_wait,
//! linger / 2)`. Without them the last `inquire_wait` worth of losses could
//! never be attributed; with `linger` = 0 the client behaves like the
//! reference and leaves them undetermined.
//!
//! Flood mode sends the next ping as soon as a reply arrives (or 10 ms after
//! the last send if none does, like the reference); with a preload of N,
//! N pings go out at once and each reply sends the next, so N stay in
//! flight (ping(8)'s and the reference's `-l`).
//!
//! The loop never spins: it sleeps in `poll` until a reply or the next
//! send is due, so that a flood leaves the CPU to the peer when both share
//! a machine (namespaces, containers) or a loaded host. It makes few
//! system calls instead: one `recvmmsg` reads the replies queued, and the
//! 3rd legs they call for go out with the pings they make due in one
//! `sendmmsg` per pass. A datagram is recorded as sent when queued and its
//! send time set just before the `sendmmsg`, so RTTs cover the wire, not
//! the batching. Send and receive buffers, the packet being built and the
//! event list are reused, so the rate is bounded by the kernel and the
//! peer, not by sleeps or allocation. All times come from `Instant`
//! (monotonic).

use crate::codec::{self, DecodeError, EncodeOptions, ExtendedSegment, Packet, MAX_DATAGRAM};
use crate::listener::DEFAULT_PORT;
use crate::net::{self, AddressFamily, Cancel, ResolveError};
use crate::session::{
    self, LossDirection, PeerOptions, PeerTextKind, PeerTexts, SentKind, Session, SessionEvent,
    SessionLimits,
};
use crate::stats::{LossCounts, RttSummary};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Longest single wait, so cancellation is noticed promptly.
const MAX_WAIT: Duration = Duration::from_millis(100);
/// Most pings a preload may put in flight at once.
pub const MAX_PRELOAD: usize = 1024;
/// Most pings one host sends in one pass of the loop (a preload's burst is
/// spread over passes, so receiving is never starved).
const MAX_SENDS_PER_STEP: u64 = 64;
/// Flood mode: send again this long after a send if no reply came.
const FLOOD_RETRY: Duration = Duration::from_millis(10);
/// Extra bytes a ping carrying investigation requests is padded with, so
/// that a listener that never answers with more bytes than it received
/// (ours) still has room for the verdicts: a reply's fixed parts ("in reply
/// to", reply requested, host latency, two list headers) exceed a request's
/// by 22 bytes.
const INVESTIGATION_RESERVE: usize = 24;

/// Client settings. `Default` gives the reference program's defaults.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Pings per host; `None` = until `deadline` or cancellation.
    pub count: Option<u64>,
    /// Time between pings (default 1 s); ignored in flood mode.
    pub interval: Duration,
    /// Send the next ping as soon as the previous one is answered.
    pub flood: bool,
    /// Pings sent at once at the start (the reference's `--preload`,
    /// default 1). In flood mode every reply sends the next ping, so this
    /// many stay in flight: the rate is then set by the two hosts' CPUs and
    /// the link, not by one round trip.
    pub preload: usize,
    /// Send at the pace of the RTT's EWMA.
    pub adaptive: bool,
    /// Stop sending after this long.
    pub deadline: Option<Duration>,
    /// Source address to send from (`-I`).
    pub source: Option<IpAddr>,
    /// Packet sizes, signing, the 3rd leg, version and notice, inquiry
    /// wait: as a listener's.
    pub peer: PeerOptions,
    /// Most time spent after the last ping waiting for late replies and
    /// investigation verdicts (default 2 s; only used if some ping is
    /// unresolved).
    pub linger: Duration,
    /// Most unanswered pings remembered per host (default 16384); older
    /// ones are forgotten and count as undetermined.
    pub max_outstanding: usize,
    /// Report RTTs minus the peer's stated processing time.
    pub subtract_peer_host_latency: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            count: None,
            interval: Duration::from_secs(1),
            flood: false,
            preload: 1,
            adaptive: false,
            deadline: None,
            source: None,
            peer: PeerOptions::default(),
            linger: Duration::from_secs(2),
            max_outstanding: 16_384,
            subtract_peer_host_latency: false,
        }
    }
}

/// A host to ping: the name it was given by and the address it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As given (for display).
    pub name: String,
    /// Where pings go.
    pub addr: SocketAddr,
}

impl Target {
    /// A target from an address.
    pub fn new(name: impl Into<String>, addr: SocketAddr) -> Target {
        Target {
            name: name.into(),
            addr,
        }
    }

    /// Resolves `host` (name, literal, `v6%zone`) on `port` (15998 is
    /// [`DEFAULT_PORT`]).
    pub fn resolve(host: &str, port: u16, family: AddressFamily) -> Result<Target, ResolveError> {
        Ok(Target::new(host, net::resolve(host, port, family)?))
    }

    /// Resolves `host` on the default port.
    pub fn resolve_default_port(host: &str) -> Result<Target, ResolveError> {
        Target::resolve(host, DEFAULT_PORT, AddressFamily::Any)
    }
}

/// What happened, as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// A reply to one of our pings.
    Reply {
        /// Index of the host in the target list.
        host: usize,
        /// The peer.
        peer: SocketAddr,
        /// Ping sequence number (from 1).
        seq: u64,
        /// Round-trip time.
        rtt: Duration,
        /// The peer's stated time between receipt and reply.
        peer_host_latency: Option<Duration>,
        /// An RTT the peer enclosed (only when the peer initiated).
        peer_rtt: Option<Duration>,
        /// Size of the reply datagram.
        size: usize,
    },
    /// An investigation resolved a ping as lost.
    Loss {
        /// Host index.
        host: usize,
        /// The peer.
        peer: SocketAddr,
        /// Ping sequence number.
        seq: u64,
        /// Where it was lost.
        direction: LossDirection,
    },
    /// A send or receive failed (for example ICMP port unreachable).
    Error {
        /// Host index.
        host: usize,
        /// The peer.
        peer: SocketAddr,
        /// What the OS said.
        message: String,
    },
    /// The peer sent its program version or notice text for the first
    /// time, or a different one.
    PeerText {
        /// Host index.
        host: usize,
        /// The peer.
        peer: SocketAddr,
        /// Version or notice.
        kind: PeerTextKind,
        /// The text (at most [`crate::MAX_PEER_TEXT`] bytes).
        text: String,
    },
    /// The peer sent something we could not accept.
    Invalid {
        /// Host index.
        host: usize,
        /// The peer.
        peer: SocketAddr,
        /// Why.
        error: DecodeError,
    },
}

/// Results for one host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSummary {
    /// The host.
    pub target: Target,
    /// Pings transmitted and received, losses by direction.
    pub counts: LossCounts,
    /// RTT statistics; `None` if no reply came.
    pub rtt: Option<RttSummary>,
    /// Every datagram sent (pings, 3rd legs, probes).
    pub packets_transmitted: u64,
    /// Every valid datagram received.
    pub packets_received: u64,
    /// End-of-run investigation probes sent (not counted as pings).
    pub probes: u64,
    /// Send and receive errors.
    pub errors: u64,
    /// Datagrams from the peer that did not decode or authenticate.
    pub invalid: u64,
    /// The peer's program version and notice, as last sent.
    pub peer_texts: PeerTexts,
}

/// Results of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientReport {
    /// One summary per target, in target order.
    pub hosts: Vec<HostSummary>,
    /// Wall time of the run (monotonic).
    pub elapsed: Duration,
    /// True if the run was cancelled.
    pub cancelled: bool,
}

/// Client failures (per-packet problems are events, not errors).
#[derive(Debug, Error)]
pub enum ClientError {
    /// Inconsistent settings.
    #[error("invalid ping settings: {0}")]
    Config(String),
    /// No host to ping.
    #[error("no host to ping")]
    NoTargets,
    /// A socket could not be bound.
    #[error("cannot bind a socket to {addr} for pinging {target}: {source}")]
    Bind {
        /// Local address.
        addr: SocketAddr,
        /// The host being pinged.
        target: String,
        /// OS error.
        #[source]
        source: io::Error,
    },
    /// A socket could not be connected to its target.
    #[error("cannot reach {target} ({addr}): {source}")]
    Connect {
        /// Target address.
        addr: SocketAddr,
        /// The host's name.
        target: String,
        /// OS error.
        #[source]
        source: io::Error,
    },
    /// `poll` failed.
    #[error("waiting for 2ping replies failed: {0}")]
    Poll(#[source] io::Error),
}

struct Host {
    target: Target,
    socket: UdpSocket,
    session: Session,
    next_send: Instant,
    /// Pings to send now, whatever `next_send` says: the preload, and in
    /// flood mode one per reply.
    due: u64,
    sending: bool,
    done_sending_at: Option<Instant>,
    finished: bool,
    next_probe: Option<Instant>,
    probes: u64,
    errors: u64,
    invalid: u64,
    /// Datagrams encoded for this host and not yet sent: a pass of the
    /// loop (3rd legs for the replies just read, then the pings they make
    /// due) goes out in one `sendmmsg`.
    outbox: net::SendBatch,
    outgoing: Vec<Outgoing>,
}

/// A queued datagram, for what must happen once it is sent.
#[derive(Debug, Clone, Copy)]
struct Outgoing {
    /// Its message ID, if it requested a reply: its send time is set to
    /// just before the `sendmmsg` (it was recorded as sent when queued).
    awaits_reply: Option<crate::codec::MessageId>,
}

/// Most datagrams queued per host before a send.
const SEND_SLOTS: usize = 64;
/// Most datagrams one `recvmmsg` reads.
const RECV_SLOTS: usize = 32;
/// Most datagrams read from one host's socket per wake-up.
const MAX_RECV_PER_WAKE: usize = 64;

/// A 2ping client bound to its targets; [`Client::run`] pings them.
pub struct Client {
    config: ClientConfig,
    hosts: Vec<Host>,
    /// Our version and notice segments, put in every packet.
    extended: Option<Vec<ExtendedSegment>>,
    inbox: net::RecvBatch,
    send_failures: Vec<(usize, io::Error)>,
    packet: Packet,
    reply: Packet,
    events: Vec<SessionEvent>,
    started: Option<Instant>,
    elapsed: Duration,
    cancelled: bool,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field(
                "targets",
                &self.hosts.iter().map(|h| &h.target).collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn validate(c: &ClientConfig) -> Result<(), ClientError> {
    let err = |m: String| Err(ClientError::Config(m));
    // At least 64 bytes: room for a ping with a useful investigation list
    // and its reserve.
    c.peer.check_sizes(64).map_err(ClientError::Config)?;
    if !c.flood && !c.adaptive && c.interval.is_zero() {
        return err("interval must be positive (or use flood mode)".into());
    }
    if c.count == Some(0) {
        return err("count must be at least 1".into());
    }
    if c.preload == 0 || c.preload > MAX_PRELOAD || c.preload > c.max_outstanding {
        return err(format!(
            "preload {} must be within 1..={MAX_PRELOAD} (and at most max outstanding)",
            c.preload
        ));
    }
    if c.max_outstanding == 0 {
        return err("max outstanding must be at least 1".into());
    }
    Ok(())
}

fn bind_for(target: &Target, source: Option<IpAddr>) -> Result<UdpSocket, ClientError> {
    let local = match (source, target.addr) {
        (None, SocketAddr::V4(_)) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        (None, SocketAddr::V6(_)) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
        (Some(ip @ IpAddr::V4(_)), SocketAddr::V4(_)) => SocketAddr::new(ip, 0),
        (Some(IpAddr::V6(ip)), SocketAddr::V6(t)) => {
            // A link-local source needs the interface; take the target's.
            let scope = if ip.is_unicast_link_local() {
                t.scope_id()
            } else {
                0
            };
            SocketAddr::V6(std::net::SocketAddrV6::new(ip, 0, 0, scope))
        }
        (Some(ip), addr) => {
            return Err(ClientError::Config(format!(
                "source address {ip} and target {} ({addr}) are of different families",
                target.name
            )))
        }
    };
    let socket = net::bind_udp(local).map_err(|source| ClientError::Bind {
        addr: local,
        target: target.name.clone(),
        source,
    })?;
    socket
        .connect(target.addr)
        .map_err(|source| ClientError::Connect {
            addr: target.addr,
            target: target.name.clone(),
            source,
        })?;
    Ok(socket)
}

impl Client {
    /// Validates `config` and opens one socket per target.
    pub fn new(config: ClientConfig, targets: Vec<Target>) -> Result<Client, ClientError> {
        validate(&config)?;
        if targets.is_empty() {
            return Err(ClientError::NoTargets);
        }
        let now = Instant::now();
        let limits = SessionLimits {
            max_sent: config.max_outstanding,
            max_seen: 4096,
            max_courtesy: 256,
            max_list_ids: 64,
            inquire_wait: config.peer.inquire_wait,
            // The client's state lives as long as the run; entries older
            // than the reference's 10 minutes are forgotten all the same.
            state_ttl: Duration::from_secs(600),
        };
        let mut hosts = Vec::with_capacity(targets.len());
        for target in targets {
            let socket = bind_for(&target, config.source)?;
            let mut session = Session::new(limits, now, None);
            session.subtract_peer_latency = config.subtract_peer_host_latency;
            hosts.push(Host {
                target,
                socket,
                session,
                next_send: now,
                due: (config.preload as u64).saturating_sub(1),
                sending: true,
                done_sending_at: None,
                finished: false,
                next_probe: None,
                probes: 0,
                errors: 0,
                invalid: 0,
                outbox: net::SendBatch::new(SEND_SLOTS, config.peer.max_packet_size),
                outgoing: Vec::with_capacity(SEND_SLOTS),
            });
        }
        Ok(Client {
            extended: config.peer.own_segments(),
            // A datagram of any size is read whole, as by `recv`.
            inbox: net::RecvBatch::new(RECV_SLOTS, MAX_DATAGRAM.next_power_of_two()),
            send_failures: Vec::new(),
            packet: Packet::default(),
            reply: Packet::default(),
            events: Vec::new(),
            started: None,
            elapsed: Duration::ZERO,
            cancelled: false,
            config,
            hosts,
        })
    }

    /// Local addresses of the per-host sockets.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.hosts
            .iter()
            .filter_map(|h| h.socket.local_addr().ok())
            .collect()
    }

    /// The results so far (also valid after a cancelled run).
    pub fn report(&self) -> ClientReport {
        ClientReport {
            hosts: self
                .hosts
                .iter()
                .map(|h| HostSummary {
                    target: h.target.clone(),
                    counts: h.session.counts,
                    rtt: h.session.rtt.summary(),
                    packets_transmitted: h.session.packets_sent,
                    packets_received: h.session.packets_received,
                    probes: h.probes,
                    errors: h.errors,
                    invalid: h.invalid,
                    peer_texts: h.session.peer_texts.clone(),
                })
                .collect(),
            elapsed: self
                .started
                .map_or(self.elapsed, |s| self.elapsed.max(s.elapsed())),
            cancelled: self.cancelled,
        }
    }

    /// Pings every target until `count`, `deadline` or `cancel`, then
    /// lingers (bounded) for unresolved losses; calls `on_event` for every
    /// reply, loss and error. Returns the report (also on cancellation).
    pub fn run(
        &mut self,
        cancel: &dyn Cancel,
        on_event: &mut dyn FnMut(&ClientEvent),
    ) -> Result<ClientReport, ClientError> {
        let start = Instant::now();
        self.started = Some(start);
        let deadline_at = self.config.deadline.map(|d| start + d);
        for h in &mut self.hosts {
            h.next_send = start;
        }
        let mut fds: Vec<libc::pollfd> =
            self.hosts.iter().map(|h| net::pollfd(&h.socket)).collect();
        loop {
            if cancel.is_cancelled() {
                self.cancelled = true;
                break;
            }
            let now = Instant::now();
            let mut wake = now + MAX_WAIT;
            for i in 0..self.hosts.len() {
                if let Some(t) = self.step_host(i, now, deadline_at, on_event) {
                    wake = wake.min(t);
                }
                self.flush(i, on_event);
            }
            if self.hosts.iter().all(|h| h.finished) {
                break;
            }
            if let Some(d) = deadline_at {
                if self.hosts.iter().any(|h| h.sending) {
                    wake = wake.min(d);
                }
            }
            for fd in fds.iter_mut() {
                fd.revents = 0;
            }
            // Block until a reply or the next send is due; never spin (see
            // net.rs): during a flood the peer needs the CPU we would burn.
            net::poll(&mut fds, wake.saturating_duration_since(Instant::now()))
                .map_err(ClientError::Poll)?;
            for (i, fd) in fds.iter().enumerate() {
                if net::ready(fd) {
                    self.receive(i, on_event);
                }
            }
        }
        // 3rd legs of the last replies read, if cancelled before the pass
        // that would have sent them.
        for i in 0..self.hosts.len() {
            self.flush(i, on_event);
        }
        self.elapsed = start.elapsed();
        self.started = None;
        Ok(self.report())
    }

    /// Sends whatever host `i` has due; returns when it next needs attention.
    fn step_host(
        &mut self,
        i: usize,
        now: Instant,
        deadline_at: Option<Instant>,
        on_event: &mut dyn FnMut(&ClientEvent),
    ) -> Option<Instant> {
        let count = self.config.count;
        let h = self.hosts.get_mut(i)?;
        if h.finished {
            return None;
        }
        if h.sending {
            let over_deadline = deadline_at.is_some_and(|d| now >= d);
            if over_deadline {
                h.sending = false;
                h.done_sending_at = Some(now);
            } else {
                for _ in 0..MAX_SENDS_PER_STEP {
                    let h = self.hosts.get(i)?;
                    let by_due = h.due > 0;
                    if !h.sending || !(by_due || now >= h.next_send) {
                        break;
                    }
                    self.send_ping(i, now, SentKind::Ping, on_event);
                    let next = self.next_send_after_send(i, now);
                    let h = self.hosts.get_mut(i)?;
                    if by_due {
                        h.due -= 1;
                    }
                    if count.is_some_and(|c| h.session.counts.transmitted >= c) {
                        h.sending = false;
                        h.done_sending_at = Some(now);
                    } else {
                        h.next_send = next;
                    }
                }
            }
            let h = self.hosts.get(i)?;
            if h.sending {
                return Some(h.next_send);
            }
        }
        self.linger_step(i, now, on_event)
    }

    fn next_send_after_send(&self, i: usize, now: Instant) -> Instant {
        let ewma = self.hosts.get(i).and_then(|h| h.session.rtt.ewma());
        match ewma {
            Some(e) if self.config.adaptive => now + e,
            _ if self.config.flood => now + FLOOD_RETRY,
            _ => now + self.config.interval,
        }
    }

    /// The bounded end-of-run phase of host `i`.
    fn linger_step(
        &mut self,
        i: usize,
        now: Instant,
        on_event: &mut dyn FnMut(&ClientEvent),
    ) -> Option<Instant> {
        let linger = self.config.linger;
        let grace = self.config.peer.inquire_wait.min(linger / 2);
        let h = self.hosts.get_mut(i)?;
        let done_at = h.done_sending_at.unwrap_or(now);
        let end = done_at + linger;
        let Some(oldest) = h.session.oldest_outstanding_ping() else {
            h.finished = true;
            return None;
        };
        if now >= end {
            h.finished = true;
            return None;
        }
        let investigable_at = oldest + grace;
        let spacing = (linger / 8)
            .clamp(Duration::from_millis(10), Duration::from_millis(500))
            .max(h.session.rtt.ewma().unwrap_or_default() * 2);
        if now >= investigable_at && h.next_probe.is_none_or(|t| now >= t) {
            h.next_probe = Some(now + spacing);
            h.probes += 1;
            self.send_ping(i, now, SentKind::Probe, on_event);
        }
        let h = self.hosts.get(i)?;
        let mut wake = end;
        if now < investigable_at {
            wake = wake.min(investigable_at);
        } else if let Some(t) = h.next_probe {
            wake = wake.min(t);
        }
        Some(wake)
    }

    /// Builds, sends and records a ping (or an uncounted probe) to host `i`.
    fn send_ping(
        &mut self,
        i: usize,
        now: Instant,
        kind: SentKind,
        on_event: &mut dyn FnMut(&ClientEvent),
    ) {
        if self.hosts.get(i).is_some_and(|h| h.outbox.is_full()) {
            self.flush(i, on_event);
        }
        let investigate_after = match kind {
            SentKind::Ping => self.config.peer.inquire_wait,
            SentKind::Probe => self.config.peer.inquire_wait.min(self.config.linger / 2),
        };
        let Some(h) = self.hosts.get_mut(i) else {
            return;
        };
        let packet = &mut self.packet;
        h.session.prepare_request(now, investigate_after, packet);
        if let Some(v) = &self.extended {
            packet.opcodes.extended = Some(v.clone());
        }
        let auth = self.config.peer.auth.as_ref();
        let max = self.config.peer.max_packet_size;
        // Keep room for the reserve below; fit_within only trims optional
        // parts (version, courtesy, the investigation list).
        session::fit_within(packet, auth, max - INVESTIGATION_RESERVE);
        let mut pad = self.config.peer.min_packet_size;
        if packet.opcodes.please_investigate.is_some() {
            pad = pad.max(packet.encoded_len(auth) + INVESTIGATION_RESERVE);
        }
        let pad = pad.min(max);
        let Some(out) = h.outbox.slot() else {
            return;
        };
        codec::encode_into(
            packet,
            &EncodeOptions {
                min_size: pad,
                max_size: max,
                pad_to: Some(pad),
                auth,
            },
            out,
        );
        h.outbox.commit(None);
        // Recorded as sent now, restamped by `flush` just before the send.
        // A ping the kernel refuses still counts as transmitted: it was
        // attempted and was not answered, as ping(8) counts it.
        h.session.commit_sent(packet, now, kind);
        h.outgoing.push(Outgoing {
            awaits_reply: Some(packet.message_id),
        });
    }

    /// Sends what host `i` has queued, in one `sendmmsg` if the kernel takes
    /// it all, and sets the send time of its requests to just before it.
    fn flush(&mut self, i: usize, on_event: &mut dyn FnMut(&ClientEvent)) {
        let Some(h) = self.hosts.get_mut(i) else {
            return;
        };
        if h.outbox.len() == 0 {
            return;
        }
        let sent_at = Instant::now();
        let failures = &mut self.send_failures;
        h.outbox.flush(&h.socket, &mut |k, e| failures.push((k, e)));
        for o in h.outgoing.drain(..) {
            if let Some(id) = o.awaits_reply {
                h.session.restamp(&id, sent_at);
            }
        }
        for (_, e) in self.send_failures.drain(..) {
            h.errors += 1;
            on_event(&ClientEvent::Error {
                host: i,
                peer: h.target.addr,
                message: e.to_string(),
            });
        }
    }

    /// Reads what host `i`'s socket has (a bounded batch, a `recvmmsg` at
    /// a time; one clock reading stamps a call's datagrams).
    fn receive(&mut self, i: usize, on_event: &mut dyn FnMut(&ClientEvent)) {
        let mut inbox = std::mem::take(&mut self.inbox);
        let mut left = MAX_RECV_PER_WAKE;
        while left > 0 {
            let Some(h) = self.hosts.get_mut(i) else {
                break;
            };
            let n = match inbox.recv(&h.socket, left) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    h.errors += 1;
                    let message = if e.kind() == io::ErrorKind::ConnectionRefused {
                        format!("{e} (no 2ping listener on that port?)")
                    } else {
                        e.to_string()
                    };
                    on_event(&ClientEvent::Error {
                        host: i,
                        peer: h.target.addr,
                        message,
                    });
                    break;
                }
            };
            let received_at = Instant::now();
            for k in 0..n {
                if let Some((bytes, _)) = inbox.get(k) {
                    self.handle(i, bytes, received_at, on_event);
                }
            }
            // A short batch emptied the queue.
            if n < inbox.capacity().min(left) {
                break;
            }
            left = left.saturating_sub(n);
        }
        self.inbox = inbox;
    }

    fn handle(
        &mut self,
        i: usize,
        bytes: &[u8],
        received_at: Instant,
        on_event: &mut dyn FnMut(&ClientEvent),
    ) {
        // Room for our reply, if it needs one.
        if self.hosts.get(i).is_some_and(|h| h.outbox.is_full()) {
            self.flush(i, on_event);
        }
        let Some(h) = self.hosts.get_mut(i) else {
            return;
        };
        let peer = h.target.addr;
        let n = bytes.len();
        let decoded = match &self.config.peer.auth {
            Some(auth) => codec::decode_authenticated(bytes, auth),
            None => codec::decode(bytes),
        };
        let packet = match decoded {
            Ok(p) => p,
            Err(error) => {
                h.invalid += 1;
                on_event(&ClientEvent::Invalid {
                    host: i,
                    peer,
                    error,
                });
                return;
            }
        };
        h.session.peer_texts.update(&packet, |kind, text| {
            on_event(&ClientEvent::PeerText {
                host: i,
                peer,
                kind,
                text: text.to_string(),
            })
        });
        self.events.clear();
        let wants_reply = h.session.handle(
            &packet,
            received_at,
            self.config.peer.three_way,
            &mut self.events,
            &mut self.reply,
        );
        let flood = self.config.flood;
        let preload = self.config.preload as u64;
        let adaptive = self.config.adaptive;
        for e in &self.events {
            match *e {
                SessionEvent::Reply {
                    seq,
                    rtt,
                    peer_host_latency,
                    peer_rtt,
                } => {
                    if h.sending {
                        if adaptive {
                            if let Some(ewma) = h.session.rtt.ewma() {
                                h.next_send = received_at + ewma;
                            }
                        } else if flood {
                            // The answered ping's place goes to the next.
                            h.due = (h.due + 1).min(preload);
                        }
                    }
                    on_event(&ClientEvent::Reply {
                        host: i,
                        peer,
                        seq,
                        rtt,
                        peer_host_latency,
                        peer_rtt,
                        size: n,
                    });
                }
                SessionEvent::Loss { seq, direction } => on_event(&ClientEvent::Loss {
                    host: i,
                    peer,
                    seq,
                    direction,
                }),
            }
        }
        if !wants_reply {
            return;
        }
        let reply = &mut self.reply;
        let Some(options) = session::ready_reply(
            reply,
            self.extended.as_deref(),
            n,
            self.config.peer.min_packet_size,
            self.config.peer.max_packet_size,
            self.config.peer.auth.as_ref(),
            received_at,
        ) else {
            return;
        };
        let Some(out) = h.outbox.slot() else {
            return;
        };
        let encoded = codec::encode_into(reply, &options, out);
        if !encoded.complete {
            return;
        }
        h.outbox.commit(None);
        // Our replies are not our pings: a reply that requests one (the
        // peer started a 3-way ping) is tracked, but not counted. Recorded
        // when queued, like a ping (see `send_ping`).
        h.session.commit_sent(reply, received_at, SentKind::Probe);
        h.outgoing.push(Outgoing {
            awaits_reply: reply.opcodes.reply_requested.then_some(reply.message_id),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_settings() {
        let t = vec![Target::new("lo", "127.0.0.1:1".parse().expect("addr"))];
        let bad = [
            ClientConfig {
                peer: PeerOptions {
                    min_packet_size: 600,
                    ..PeerOptions::default()
                },
                ..ClientConfig::default()
            },
            ClientConfig {
                interval: Duration::ZERO,
                ..ClientConfig::default()
            },
            ClientConfig {
                count: Some(0),
                ..ClientConfig::default()
            },
        ];
        for c in bad {
            assert!(matches!(
                Client::new(c, t.clone()),
                Err(ClientError::Config(_))
            ));
        }
        assert!(matches!(
            Client::new(ClientConfig::default(), Vec::new()),
            Err(ClientError::NoTargets)
        ));
        let mixed = ClientConfig {
            source: Some("::1".parse().expect("ip")),
            ..ClientConfig::default()
        };
        assert!(matches!(Client::new(mixed, t), Err(ClientError::Config(_))));
    }
}
