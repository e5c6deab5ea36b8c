//! The 2ping listener: answers pings on one or more UDP sockets.
//!
//! Per datagram: rate limit by source (before any parsing), decode (and
//! verify the MAC if configured), update the peer's session, and answer a
//! reply request with "in reply to", a 3-way reply request, host latency,
//! answers to the peer's investigations, our own investigation requests and
//! courtesy expirations, padded to the request's size.
//!
//! Safety limits, all in [`ListenerLimits`]:
//! - **No amplification**: a reply is never larger than the datagram that
//!   caused it (nor than `max_packet_size`). Optional parts are dropped to
//!   make it fit; if even "in reply to" does not fit, no reply is sent
//!   (counted as `reply_too_large`).
//! - **Bounded state**: at most `max_peers` sessions of at most
//!   `max_ids_per_peer` IDs per table, expired after `state_ttl`;
//!   [`Listener::max_state_bytes`] gives the resulting memory bound.
//! - **Rate limit**: a token bucket per source address (IPv6: per /64).
//!   With a shared key (`auth`), a trusted peer (one that completed a
//!   3-way exchange, every packet MAC-checked) is exempt: its datagrams
//!   over the limit are still decoded and answered if their MAC is right
//!   (counted as `rate_exempt`), so a flood between two sysgauge hosts that
//!   share a key loses nothing to the limiter; anything else over the
//!   limit is dropped before parsing.
//! - **No stall**: sockets are non-blocking, each wake-up reads at most
//!   `max_batch` datagrams per socket, and `poll` has a bounded timeout, so
//!   cancellation is seen within `poll_timeout` whatever arrives.
//!
//! The listener never spins: it sleeps in `poll` until a datagram comes
//! (a spinning listener takes the CPU its clients need when they share a
//! machine or the host is loaded). Each wake-up reads with `recvmmsg` (up
//! to 32 datagrams a call) and answers the batch with one `sendmmsg`; a
//! 2nd leg is recorded when queued and its send time set just before the
//! call, so our RTTs cover the wire, not the batching.
//! - Every dropped datagram is counted by reason ([`ListenerCounters`]).
//!
//! Replies to a wildcard-bound socket leave with the source address the
//! kernel's routing picks; on a multi-homed host bind each address
//! explicitly if replies must come from the address that was pinged.

mod peers;
mod ratelimit;

pub use ratelimit::{RateLimit, RateLimiter};

use crate::codec::{
    self, DecodeErrorClass, ExtendedSegment, MessageId, Packet, HEADER_LEN, MAX_DATAGRAM,
};
use crate::net::{self, Cancel};
use crate::session::{
    self, LossDirection, PeerOptions, PeerTextKind, SentKind, Session, SessionEvent, SessionLimits,
};
use peers::PeerTable;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use std::time::{Duration, Instant};
use thiserror::Error;

/// The 2ping port.
pub const DEFAULT_PORT: u16 = 15998;
/// Receive buffer asked for each listening socket.
const RECV_BUFFER: usize = 4 << 20;
/// Most datagrams one `recvmmsg` reads (buffers of 64 KiB each, so that
/// any datagram is read whole; only the bytes received are touched).
const RECV_SLOTS: usize = 32;
/// Most replies sent by one `sendmmsg`.
const SEND_SLOTS: usize = 32;

/// Bounds on the listener's work and memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenerLimits {
    /// Most peers (address, port) with state. Default 1024.
    pub max_peers: usize,
    /// Most IDs per peer in each table (requests seen, replies awaited).
    /// Default 256.
    pub max_ids_per_peer: usize,
    /// Most IDs answered or requested in one investigation list. Default 64.
    pub max_list_ids: usize,
    /// Age after which IDs are forgotten, and idle peers dropped. Default
    /// 600 s, as the reference.
    pub state_ttl: Duration,
    /// Per-source rate limit; `None` disables it. Default 5000/s, burst
    /// 5000, loopback exempt.
    pub rate_limit: Option<RateLimit>,
    /// Most sources with their own token bucket. Default 4096.
    pub max_rate_sources: usize,
    /// Most datagrams read from one socket per wake-up. Default 256.
    pub max_batch: usize,
}

impl Default for ListenerLimits {
    fn default() -> Self {
        ListenerLimits {
            max_peers: 1024,
            max_ids_per_peer: 256,
            max_list_ids: 64,
            state_ttl: Duration::from_secs(600),
            rate_limit: Some(RateLimit::default()),
            max_rate_sources: 4096,
            max_batch: 256,
        }
    }
}

/// Listener settings.
#[derive(Debug, Clone)]
pub struct ListenerConfig {
    /// Addresses to bind, each with its port (port 0 lets the system pick
    /// one; see [`Listener::local_addrs`]). Empty means `0.0.0.0` and `::`
    /// (IPv6-only) on `port`.
    pub addresses: Vec<SocketAddr>,
    /// Port of the wildcard addresses used when `addresses` is empty.
    /// Default 15998.
    pub port: u16,
    /// Packet sizes, signing, the 3rd leg, version and notice, inquiry
    /// wait (here: for our unanswered 2nd legs): as a client's.
    pub peer: PeerOptions,
    /// Safety limits.
    pub limits: ListenerLimits,
    /// Longest wait in `poll`, hence the latency of noticing cancellation.
    /// Default 100 ms.
    pub poll_timeout: Duration,
}

impl Default for ListenerConfig {
    fn default() -> Self {
        ListenerConfig {
            addresses: Vec::new(),
            port: DEFAULT_PORT,
            peer: PeerOptions::default(),
            limits: ListenerLimits::default(),
            poll_timeout: Duration::from_millis(100),
        }
    }
}

/// Listener failures.
#[derive(Debug, Error)]
pub enum ListenerError {
    /// A socket could not be bound.
    #[error("cannot bind 2ping listener to {addr}: {source}{}", bind_hint(.source))]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Inconsistent settings.
    #[error("invalid listener settings: {0}")]
    Config(String),
    /// `poll` failed.
    #[error("waiting for 2ping packets failed: {0}")]
    Poll(#[source] io::Error),
}

/// What a bind error suggests, by its cause: only the causes it names.
fn bind_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::AddrInUse => " (is another listener on that port?)",
        io::ErrorKind::PermissionDenied => " (ports below 1024 need root)",
        _ => "",
    }
}

/// Why a datagram was dropped without a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Shorter than the header, or a segment runs past the end.
    Truncated,
    /// Wrong magic or malformed segments, or source port 0.
    Malformed,
    /// Checksum mismatch.
    BadChecksum,
    /// MAC missing, of another digest type, or wrong.
    BadMac,
    /// Over the source's rate limit.
    RateLimited,
    /// Encrypted packets are not supported.
    Unsupported,
    /// A reply would have been larger than the request.
    ReplyTooLarge,
}

/// What the listener saw; passed to the `serve` callback.
#[derive(Debug, Clone, PartialEq)]
pub enum ListenerEvent {
    /// A client's 3rd leg answered our 2nd leg: our RTT to the client, and
    /// the client's own RTT if it enclosed one.
    Reply {
        /// Our socket's address.
        local: SocketAddr,
        /// The client.
        peer: SocketAddr,
        /// Our 2nd-leg sequence number for this peer.
        seq: u64,
        /// Our RTT (2nd leg sent → 3rd leg received).
        rtt: Duration,
        /// The client's RTT (1st leg → 2nd leg), from "RTT enclosed".
        peer_rtt: Option<Duration>,
        /// Size of the 3rd-leg datagram.
        size: usize,
    },
    /// An investigation resolved one of our 2nd legs as lost.
    Loss {
        /// Our socket's address.
        local: SocketAddr,
        /// The client.
        peer: SocketAddr,
        /// Our 2nd-leg sequence number.
        seq: u64,
        /// Direction from our point of view.
        direction: LossDirection,
    },
    /// A client sent its program version or notice text for the first
    /// time, or a different one.
    PeerText {
        /// Our socket's address.
        local: SocketAddr,
        /// The client.
        peer: SocketAddr,
        /// Version or notice.
        kind: PeerTextKind,
        /// The text (at most [`crate::MAX_PEER_TEXT`] bytes).
        text: String,
    },
    /// A datagram was dropped.
    Dropped {
        /// The sender.
        peer: SocketAddr,
        /// Why.
        reason: DropReason,
    },
}

/// Live counters, readable from another thread while the listener serves.
#[derive(Debug, Default)]
pub struct ListenerCounters {
    received: AtomicU64,
    replies: AtomicU64,
    truncated: AtomicU64,
    malformed: AtomicU64,
    bad_checksum: AtomicU64,
    bad_mac: AtomicU64,
    rate_limited: AtomicU64,
    unsupported: AtomicU64,
    reply_too_large: AtomicU64,
    rate_exempt: AtomicU64,
    send_errors: AtomicU64,
    recv_errors: AtomicU64,
    peer_evictions: AtomicU64,
    peers: AtomicU64,
    peers_high_water: AtomicU64,
    state_entries: AtomicU64,
    state_entries_high_water: AtomicU64,
}

/// A copy of [`ListenerCounters`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Datagrams received.
    pub received: u64,
    /// Replies sent.
    pub replies: u64,
    /// Dropped: too short or truncated segments.
    pub truncated: u64,
    /// Dropped: bad magic, malformed segments, source port 0.
    pub malformed: u64,
    /// Dropped: checksum mismatch.
    pub bad_checksum: u64,
    /// Dropped: MAC missing or wrong.
    pub bad_mac: u64,
    /// Dropped: over the rate limit.
    pub rate_limited: u64,
    /// Dropped: encrypted (not supported).
    pub unsupported: u64,
    /// Not answered: the reply would have been larger than the request.
    pub reply_too_large: u64,
    /// Over the rate limit, but answered: MAC-authenticated datagrams of a
    /// trusted peer (not dropped, so not in [`CounterSnapshot::dropped`]).
    pub rate_exempt: u64,
    /// Replies the OS refused to send.
    pub send_errors: u64,
    /// Receive errors.
    pub recv_errors: u64,
    /// Peers evicted because the peer table was full.
    pub peer_evictions: u64,
    /// Peers with state now.
    pub peers: u64,
    /// Most peers ever held at once.
    pub peers_high_water: u64,
    /// ID entries held now.
    pub state_entries: u64,
    /// Most ID entries ever held at once.
    pub state_entries_high_water: u64,
}

impl CounterSnapshot {
    /// All datagrams dropped without a reply for being invalid or limited.
    pub fn dropped(&self) -> u64 {
        self.truncated
            + self.malformed
            + self.bad_checksum
            + self.bad_mac
            + self.rate_limited
            + self.unsupported
            + self.reply_too_large
    }
}

impl ListenerCounters {
    /// Reads every counter.
    pub fn snapshot(&self) -> CounterSnapshot {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CounterSnapshot {
            received: r(&self.received),
            replies: r(&self.replies),
            truncated: r(&self.truncated),
            malformed: r(&self.malformed),
            bad_checksum: r(&self.bad_checksum),
            bad_mac: r(&self.bad_mac),
            rate_limited: r(&self.rate_limited),
            unsupported: r(&self.unsupported),
            reply_too_large: r(&self.reply_too_large),
            rate_exempt: r(&self.rate_exempt),
            send_errors: r(&self.send_errors),
            recv_errors: r(&self.recv_errors),
            peer_evictions: r(&self.peer_evictions),
            peers: r(&self.peers),
            peers_high_water: r(&self.peers_high_water),
            state_entries: r(&self.state_entries),
            state_entries_high_water: r(&self.state_entries_high_water),
        }
    }

    fn add(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn count_drop(&self, reason: DropReason) {
        Self::add(match reason {
            DropReason::Truncated => &self.truncated,
            DropReason::Malformed => &self.malformed,
            DropReason::BadChecksum => &self.bad_checksum,
            DropReason::BadMac => &self.bad_mac,
            DropReason::RateLimited => &self.rate_limited,
            DropReason::Unsupported => &self.unsupported,
            DropReason::ReplyTooLarge => &self.reply_too_large,
        });
    }

    fn set_gauges(&self, peers: usize, entries: usize) {
        let peers = u64::try_from(peers).unwrap_or(u64::MAX);
        let entries = u64::try_from(entries).unwrap_or(u64::MAX);
        self.peers.store(peers, Ordering::Relaxed);
        self.peers_high_water.fetch_max(peers, Ordering::Relaxed);
        self.state_entries.store(entries, Ordering::Relaxed);
        self.state_entries_high_water
            .fetch_max(entries, Ordering::Relaxed);
    }
}

/// Statistics the listener keeps about one peer.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSummary {
    /// The peer.
    pub peer: SocketAddr,
    /// Our 2nd legs to it: transmitted, answered, lost by direction.
    pub counts: crate::stats::LossCounts,
    /// Our RTTs (2nd → 3rd leg).
    pub rtt: Option<crate::stats::RttSummary>,
    /// The RTTs the peer enclosed.
    pub peer_rtt: Option<crate::stats::RttSummary>,
    /// The peer's program version and notice, as last sent.
    pub peer_texts: crate::session::PeerTexts,
}

/// A bound 2ping listener; call [`Listener::serve`] to answer pings.
pub struct Listener {
    config: ListenerConfig,
    sockets: Vec<(UdpSocket, SocketAddr)>,
    peers: PeerTable,
    limiter: Option<RateLimiter>,
    counters: Arc<ListenerCounters>,
    /// Our version and notice segments, put in every reply.
    extended: Option<Vec<ExtendedSegment>>,
    /// Datagrams read by one `recvmmsg`.
    inbox: net::RecvBatch,
    /// Replies encoded and waiting for one `sendmmsg`, and for each the
    /// peer and the ID of a reply that requested a reply (to restamp once
    /// sent).
    outbox: net::SendBatch,
    outgoing: Vec<(SocketAddr, Option<MessageId>)>,
    reply: Packet,
    events: Vec<SessionEvent>,
}

fn validate(config: &ListenerConfig) -> Result<(), ListenerError> {
    let err = |m: String| Err(ListenerError::Config(m));
    config
        .peer
        .check_sizes(HEADER_LEN)
        .map_err(ListenerError::Config)?;
    let l = &config.limits;
    if l.max_peers == 0 || l.max_ids_per_peer == 0 || l.max_batch == 0 {
        return err("limits must be at least 1".into());
    }
    if let Some(rl) = &l.rate_limit {
        if !(rl.packets_per_second > 0.0 && rl.burst >= 1.0) {
            return err("rate limit needs a positive rate and a burst of at least 1".into());
        }
    }
    if config.poll_timeout.is_zero() {
        return err("poll timeout must be positive".into());
    }
    Ok(())
}

impl Listener {
    /// Validates `config` and binds its sockets.
    pub fn bind(config: ListenerConfig) -> Result<Listener, ListenerError> {
        validate(&config)?;
        let addrs: Vec<SocketAddr> = if config.addresses.is_empty() {
            vec![
                SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), config.port),
                SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), config.port),
            ]
        } else {
            config.addresses.clone()
        };
        let mut sockets = Vec::new();
        for addr in &addrs {
            match net::bind_udp(*addr) {
                Ok(s) => {
                    // Room for a burst while we are not scheduled: the
                    // default (~200 KiB, a few hundred small datagrams) is
                    // a few milliseconds of a flood, and the kernel drops
                    // from a full buffer at random, real clients included.
                    // It caps the size at net.core.rmem_max.
                    let _ = socket2::SockRef::from(&s).set_recv_buffer_size(RECV_BUFFER);
                    let local = s.local_addr().unwrap_or(*addr);
                    sockets.push((s, local));
                }
                // Without explicit addresses, a host without IPv6 still
                // listens on IPv4 (and the reverse).
                Err(e)
                    if config.addresses.is_empty()
                        && matches!(
                            e.raw_os_error(),
                            Some(libc::EAFNOSUPPORT) | Some(libc::EADDRNOTAVAIL)
                        ) => {}
                Err(source) => {
                    return Err(ListenerError::Bind {
                        addr: *addr,
                        source,
                    })
                }
            }
        }
        if sockets.is_empty() {
            return Err(ListenerError::Config(
                "no address could be bound (neither IPv4 nor IPv6 available)".into(),
            ));
        }
        let now = Instant::now();
        let l = &config.limits;
        let limits = SessionLimits {
            max_sent: l.max_ids_per_peer,
            max_seen: l.max_ids_per_peer,
            // Courtesy IDs are small and flushed with every reply.
            max_courtesy: l.max_ids_per_peer.min(64),
            max_list_ids: l.max_list_ids.max(1),
            inquire_wait: config.peer.inquire_wait,
            state_ttl: l.state_ttl,
        };
        let limiter = l
            .rate_limit
            .map(|rl| RateLimiter::new(rl, l.max_rate_sources, now));
        Ok(Listener {
            peers: PeerTable::new(l.max_peers, limits, l.state_ttl),
            limiter,
            counters: Arc::new(ListenerCounters::default()),
            extended: config.peer.own_segments(),
            sockets,
            // A datagram of any size is read whole, as by `recv_from`.
            inbox: net::RecvBatch::new(
                l.max_batch.min(RECV_SLOTS),
                MAX_DATAGRAM.next_power_of_two(),
            ),
            outbox: net::SendBatch::new(SEND_SLOTS, config.peer.max_packet_size),
            outgoing: Vec::with_capacity(SEND_SLOTS),
            reply: Packet::default(),
            events: Vec::new(),
            config,
        })
    }

    /// The addresses actually bound (with the ports the system chose).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.sockets.iter().map(|(_, a)| *a).collect()
    }

    /// A handle on the live counters.
    pub fn counters(&self) -> Arc<ListenerCounters> {
        Arc::clone(&self.counters)
    }

    /// Upper bound of the memory the per-peer state can take with these
    /// limits (sessions and their ID tables, not the rate limiter).
    pub fn max_state_bytes(&self) -> usize {
        let l = &self.config.limits;
        let limits = SessionLimits {
            max_sent: l.max_ids_per_peer,
            max_seen: l.max_ids_per_peer,
            max_courtesy: l.max_ids_per_peer.min(64),
            max_list_ids: l.max_list_ids,
            inquire_wait: self.config.peer.inquire_wait,
            state_ttl: l.state_ttl,
        };
        l.max_peers * 2 * (Session::max_bytes(&limits) + 64)
    }

    /// Most ID entries the state can hold (peers × 3 tables).
    pub fn max_state_entries(&self) -> usize {
        let l = &self.config.limits;
        l.max_peers * (2 * l.max_ids_per_peer + l.max_ids_per_peer.min(64))
    }

    /// Per-peer statistics of our 2nd legs.
    pub fn peer_summaries(&self) -> Vec<PeerSummary> {
        let mut out = Vec::new();
        self.peers.for_each(|peer, s| {
            out.push(PeerSummary {
                peer: *peer,
                counts: s.counts,
                rtt: s.rtt.summary(),
                peer_rtt: s.peer_rtt.summary(),
                peer_texts: s.peer_texts.clone(),
            })
        });
        out
    }

    /// Answers pings until `cancel` says stop, calling `on_event` for each
    /// event. Returns only on cancellation or a `poll` failure; receive and
    /// send errors are counted and survived.
    pub fn serve(
        &mut self,
        cancel: &dyn Cancel,
        on_event: &mut dyn FnMut(&ListenerEvent),
    ) -> Result<(), ListenerError> {
        let mut fds: Vec<libc::pollfd> = self.sockets.iter().map(|(s, _)| net::pollfd(s)).collect();
        let maintenance_every = Duration::from_secs(1);
        let mut next_maintenance = Instant::now() + maintenance_every;
        loop {
            if cancel.is_cancelled() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= next_maintenance {
                self.maintain(now);
                next_maintenance = now + maintenance_every;
            }
            let wait = self
                .config
                .poll_timeout
                .min(next_maintenance.saturating_duration_since(now));
            for fd in fds.iter_mut() {
                fd.revents = 0;
            }
            // Sleep in the kernel until a datagram comes; never spin (see
            // net.rs).
            net::poll(&mut fds, wait).map_err(ListenerError::Poll)?;
            for (i, fd) in fds.iter().enumerate() {
                if net::ready(fd) {
                    self.drain(i, on_event);
                }
            }
        }
    }

    fn maintain(&mut self, now: Instant) {
        self.peers.sweep(now);
        if let Some(l) = &mut self.limiter {
            l.maintain(now);
        }
        self.counters
            .set_gauges(self.peers.len(), self.peers.entries());
    }

    /// Reads up to `max_batch` datagrams from socket `i`, a `recvmmsg`
    /// at a time, and answers them with as few `sendmmsg` as the replies
    /// fill. One clock reading per batch stamps its datagrams' arrival.
    fn drain(&mut self, i: usize, on_event: &mut dyn FnMut(&ListenerEvent)) {
        let mut left = self.config.limits.max_batch;
        let mut inbox = std::mem::take(&mut self.inbox);
        while left > 0 {
            let Some((socket, _)) = self.sockets.get(i) else {
                break;
            };
            let n = match inbox.recv(socket, left) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    ListenerCounters::add(&self.counters.recv_errors);
                    break;
                }
            };
            let received_at = Instant::now();
            for k in 0..n {
                match inbox.get(k) {
                    Some((bytes, Some(peer))) => self.handle(i, bytes, peer, received_at, on_event),
                    // Neither IPv4 nor IPv6: not from a socket of ours.
                    _ => ListenerCounters::add(&self.counters.recv_errors),
                }
            }
            // A short batch emptied the queue: back to poll.
            if n < inbox.capacity().min(left) {
                break;
            }
            left = left.saturating_sub(n);
        }
        self.inbox = inbox;
        self.flush(i);
    }

    /// Sends the queued replies on socket `i`, then stamps each 2nd leg
    /// with the time just before the send, so that our RTT covers the whole
    /// round trip and not the rest of the batch's processing.
    fn flush(&mut self, i: usize) {
        if self.outbox.len() == 0 {
            return;
        }
        let Some((socket, _)) = self.sockets.get(i) else {
            return;
        };
        let sent_at = Instant::now();
        let counters = &self.counters;
        self.outbox.flush(socket, &mut |_, _| {
            ListenerCounters::add(&counters.send_errors);
            counters.replies.fetch_sub(1, Ordering::Relaxed);
        });
        for (peer, id) in self.outgoing.drain(..) {
            if let Some(id) = id {
                self.peers.restamp(&peer, &id, sent_at);
            }
        }
    }

    fn drop_packet(
        &self,
        peer: SocketAddr,
        reason: DropReason,
        on_event: &mut dyn FnMut(&ListenerEvent),
    ) {
        self.counters.count_drop(reason);
        on_event(&ListenerEvent::Dropped { peer, reason });
    }

    fn handle(
        &mut self,
        i: usize,
        bytes: &[u8],
        peer: SocketAddr,
        received_at: Instant,
        on_event: &mut dyn FnMut(&ListenerEvent),
    ) {
        ListenerCounters::add(&self.counters.received);
        if peer.port() == 0 {
            // Nothing can be sent back to port 0; such a source is forged.
            return self.drop_packet(peer, DropReason::Malformed, on_event);
        }
        let mut over_limit = false;
        if let Some(l) = &mut self.limiter {
            let trusted = self.peers.is_trusted(&peer);
            if !l.allow(peer.ip(), trusted, received_at) {
                // An authenticated peer is exempt: with a key configured,
                // a trusted peer earned its place with MAC-checked packets,
                // and whatever claims to come from it is answered only if
                // its own MAC checks out, so the exemption costs at most
                // one HMAC per datagram and never answers a forgery.
                if !(trusted && self.config.peer.auth.is_some()) {
                    return self.drop_packet(peer, DropReason::RateLimited, on_event);
                }
                over_limit = true;
            }
        }
        let n = bytes.len();
        let decoded = match &self.config.peer.auth {
            Some(auth) => codec::decode_authenticated(bytes, auth),
            None => codec::decode(bytes),
        };
        if over_limit {
            if decoded.is_err() {
                return self.drop_packet(peer, DropReason::RateLimited, on_event);
            }
            ListenerCounters::add(&self.counters.rate_exempt);
        }
        let packet = match decoded {
            Ok(p) => p,
            Err(e) => {
                let reason = match e.class() {
                    DecodeErrorClass::Truncated => DropReason::Truncated,
                    DecodeErrorClass::BadChecksum => DropReason::BadChecksum,
                    DecodeErrorClass::BadMac => DropReason::BadMac,
                    DecodeErrorClass::Malformed => DropReason::Malformed,
                };
                return self.drop_packet(peer, reason, on_event);
            }
        };
        if packet.opcodes.encrypted.is_some() {
            return self.drop_packet(peer, DropReason::Unsupported, on_event);
        }

        let three_way = self.config.peer.three_way;
        let mut events = std::mem::take(&mut self.events);
        let mut reply = std::mem::take(&mut self.reply);
        events.clear();
        let local = self.sockets.get(i).map(|(_, a)| *a).unwrap_or(peer);
        let wants_reply = self.peers.with_session(peer, received_at, |s| {
            s.peer_texts.update(&packet, |kind, text| {
                on_event(&ListenerEvent::PeerText {
                    local,
                    peer,
                    kind,
                    text: text.to_string(),
                })
            });
            s.handle(&packet, received_at, three_way, &mut events, &mut reply)
        });
        for e in &events {
            on_event(&match *e {
                SessionEvent::Reply {
                    seq, rtt, peer_rtt, ..
                } => ListenerEvent::Reply {
                    local,
                    peer,
                    seq,
                    rtt,
                    peer_rtt,
                    size: n,
                },
                SessionEvent::Loss { seq, direction } => ListenerEvent::Loss {
                    local,
                    peer,
                    seq,
                    direction,
                },
            });
        }
        self.events = events;
        if wants_reply {
            self.send_reply(i, n, peer, received_at, &mut reply, on_event);
        }
        self.reply = reply;
        self.counters
            .set_gauges(self.peers.len(), self.peers.entries());
        self.counters
            .peer_evictions
            .store(self.peers.evictions, Ordering::Relaxed);
    }

    fn send_reply(
        &mut self,
        i: usize,
        request_len: usize,
        peer: SocketAddr,
        received_at: Instant,
        reply: &mut Packet,
        on_event: &mut dyn FnMut(&ListenerEvent),
    ) {
        if self.outbox.is_full() {
            self.flush(i);
        }
        let Some(options) = session::ready_reply(
            reply,
            self.extended.as_deref(),
            request_len,
            self.config.peer.min_packet_size,
            self.config.peer.max_packet_size,
            self.config.peer.auth.as_ref(),
            received_at,
        ) else {
            return self.drop_packet(peer, DropReason::ReplyTooLarge, on_event);
        };
        let Some(out) = self.outbox.slot() else {
            return;
        };
        let encoded = codec::encode_into(reply, &options, out);
        if !encoded.complete || encoded.len > request_len {
            return self.drop_packet(peer, DropReason::ReplyTooLarge, on_event);
        }
        // Recorded as sent now and restamped by `flush` just before the
        // send, so that the replies of one batch go in one system call. A
        // reply the kernel then refuses is counted in `send_errors` and
        // still counts as a 2nd leg sent (as a client's refused ping counts
        // as transmitted): it is never answered.
        self.outbox.commit(Some(peer));
        ListenerCounters::add(&self.counters.replies);
        self.peers.with_session(peer, received_at, |s| {
            s.commit_sent(reply, received_at, SentKind::Ping);
        });
        let id = reply.opcodes.reply_requested.then_some(reply.message_id);
        self.outgoing.push((peer, id));
    }
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("addrs", &self.local_addrs())
            .field("peers", &self.peers.len())
            .finish()
    }
}
