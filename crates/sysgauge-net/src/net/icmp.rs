//! `net.icmp-rtt` and `net.icmp-pps`: ICMP echo to any address, for hosts
//! that run no sysgauge (a router, a switch, a board that runs nothing but
//! its firmware): the round-trip time one echo at a time (at most 500 per
//! second, so that a host answering ICMP at a limited rate still gives a
//! latency, not a loss), and the rate of echo replies under a flood from
//! 1, 2, 4 … senders until it stops rising.
//!
//! Sockets: an unprivileged ICMP socket (`SOCK_DGRAM`, `IPPROTO_ICMP` or
//! `IPPROTO_ICMPV6`) where `net.ipv4.ping_group_range` admits the user's
//! group (the kernel fills in the identifier and checksum and hands us only
//! the echo replies to our identifier), else a raw socket (root or
//! CAP_NET_RAW), where we write the identifier (random per socket), compute
//! the IPv4 checksum (the kernel does ICMPv6's), skip the IPv4 header of
//! what arrives and keep only echo replies with our identifier. Every
//! socket is connected to the target, so the kernel drops what others
//! send. Which kind was used is a detail of the result, not a param: the
//! packets on the wire are the same.
//!
//! Each echo carries a 16-byte stamp after the ICMP header: a random token
//! of the socket and a 64-bit sequence number, so a reply is ours and
//! matched to its request whatever the 16-bit header fields say.
//!
//! The flood keeps at most [`WINDOW`] echoes in flight per sender, moved in
//! `sendmmsg`/`recvmmsg` batches; an echo unanswered for the *patience*
//! (four times the slowest of a few single round trips measured first,
//! within 2 ms … 1 s) counts as lost and frees its place. So a target that
//! drops (an ICMP rate limit, a full queue) sets the reply rate, not our
//! time-outs: the metric is echo replies per second, what the target
//! answered. A reply to an echo already given up is counted late, not
//! as a reply.

use super::sys::{set_option, would_block, Batch, BATCH};
use super::udp::{Ladder, LadderText};
use super::{check_within, count_param, lock_worker, named, size_param, NetOptions, RoundTrips};
use socket2::{Domain, Protocol, Socket, Type};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use sysgauge_core::{BenchError, Better, CancelToken, Metric, Params, Plan, Profile, RunCtx, Unit};
use sysgauge_family::util::{measure_rate_on_threads, metric};

/// Bytes of the ICMP echo header.
const HEADER: usize = 8;
/// Bytes of our stamp (token and sequence number) after the header.
const STAMP: usize = 16;
/// Smallest payload: room for the stamp.
pub const MIN_PAYLOAD: usize = STAMP;
/// Largest payload: an IPv4 datagram of 65 535 bytes, less the IPv4 and
/// ICMP headers.
pub const MAX_PAYLOAD: usize = 65_535 - 20 - HEADER;
/// Default payload, as ping(8): 56 bytes, 64 with the header.
pub const DEFAULT_PAYLOAD: usize = 56;
/// Most echoes in flight per flooding sender.
pub const WINDOW: usize = 256;
/// Bounds of the patience (see the module documentation).
const MIN_PATIENCE: Duration = Duration::from_millis(2);
const MAX_PATIENCE: Duration = Duration::from_secs(1);
/// A flood with no reply for this long has lost its target.
const SILENCE: Duration = Duration::from_secs(2);
/// Longest wait for one echo in the latency case and the patience probe.
const ECHO_TIMEOUT: Duration = Duration::from_secs(1);
/// Most round trips kept per repetition of the latency case.
const MAX_RTTS: usize = 200_000;
/// The latency case sends one echo per `RTT_INTERVAL` at most (500 per
/// second): a host that answers ICMP at a limited rate (a router's control
/// plane, a firewall rule) must not turn the latency case into a loss test.
const RTT_INTERVAL: Duration = Duration::from_millis(2);
/// The latency case gives up when more than this share of its echoes (and
/// at least `MIN_LOST` of them) went unanswered.
const MAX_LOSS_SHARE: f64 = 0.5;
const MIN_LOST: u64 = 10;

const ICMP_LADDER: LadderText = LadderText {
    prefix: "icmp-pps",
    what: "ICMP echo reply rate",
    rate: "echo reply rate",
    remedy:
        "the rate of the earlier case is the peak: the target (or the path to it) answers no faster",
};

/// A host to send echoes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcmpTarget {
    /// As given on the command line (the `target` param).
    pub name: String,
    /// The address it resolved to (port 0; an IPv6 link-local address
    /// keeps its zone as the scope ID).
    pub addr: SocketAddr,
}

/// Which kind of ICMP socket could be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketKind {
    /// Unprivileged `SOCK_DGRAM` ICMP socket.
    Dgram,
    /// Raw socket (root or CAP_NET_RAW).
    Raw,
}

impl SocketKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SocketKind::Dgram => "dgram",
            SocketKind::Raw => "raw",
        }
    }
}

/// Checks an echo payload size.
pub fn check_payload(size: usize) -> Result<usize, String> {
    check_within("ICMP payload size", size, MIN_PAYLOAD..=MAX_PAYLOAD)
}

fn random_u64() -> u64 {
    // The std hasher's keys are random per process (and per RandomState);
    // enough to tell our echoes from other programs' and senders'.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Attaches a classic BPF program that keeps only echo replies carrying
/// identifier `id`: for IPv4 the raw socket sees the IP header first (its
/// length in the low nibble of byte 0), for ICMPv6 the ICMP header.
fn attach_id_filter(socket: &Socket, v6: bool, id: u16) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    const LD_H_ABS: u16 = 0x28; // BPF_LD | BPF_H | BPF_ABS
    const LD_B_ABS: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
    const LD_H_IND: u16 = 0x48; // BPF_LD | BPF_H | BPF_IND
    const LD_B_IND: u16 = 0x50; // BPF_LD | BPF_B | BPF_IND
    const LDX_MSH: u16 = 0xb1; // BPF_LDX | BPF_B | BPF_MSH: x = 4 * ([k] & 0xf)
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let id = u32::from(id);
    let program: Vec<libc::sock_filter> = if v6 {
        vec![
            op(LD_B_ABS, 0, 0, 0),
            op(JEQ_K, 0, 3, 129),
            op(LD_H_ABS, 0, 0, 4),
            op(JEQ_K, 0, 1, id),
            op(RET_K, 0, 0, 0xffff),
            op(RET_K, 0, 0, 0),
        ]
    } else {
        vec![
            op(LDX_MSH, 0, 0, 0),
            op(LD_B_IND, 0, 0, 0),
            op(JEQ_K, 0, 3, 0),
            op(LD_H_IND, 0, 0, 4),
            op(JEQ_K, 0, 1, id),
            op(RET_K, 0, 0, 0xffff),
            op(RET_K, 0, 0, 0),
        ]
    };
    let prog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr().cast_mut(),
    };
    // `prog` points at `program`, which lives until after the call (the
    // kernel copies the program).
    set_option(
        socket.as_raw_fd(),
        libc::SOL_SOCKET,
        libc::SO_ATTACH_FILTER,
        &prog,
    )
}

/// An ICMP socket connected to one target.
pub struct EchoSocket {
    socket: Socket,
    kind: SocketKind,
    v6: bool,
    /// The identifier of our echoes (raw: ours; dgram: the kernel's).
    id: u16,
    token: [u8; 8],
}

fn ping_group_range() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range")
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

impl EchoSocket {
    /// An unprivileged ICMP socket if allowed, else a raw one.
    pub fn open(addr: SocketAddr) -> Result<EchoSocket, String> {
        let v6 = addr.is_ipv6();
        let (domain, proto) = if v6 {
            (Domain::IPV6, Protocol::ICMPV6)
        } else {
            (Domain::IPV4, Protocol::ICMPV4)
        };
        let (socket, kind) = match Socket::new(domain, Type::DGRAM, Some(proto)) {
            Ok(s) => (s, SocketKind::Dgram),
            Err(dgram) => match Socket::new(domain, Type::RAW, Some(proto)) {
                Ok(s) => (s, SocketKind::Raw),
                Err(raw) => {
                    return Err(format!(
                        "cannot open an ICMP socket: an unprivileged one was refused ({dgram}; net.ipv4.ping_group_range is \"{}\", which must include your group) and a raw one too ({raw}; it needs root or CAP_NET_RAW); run as root, or let your group use ICMP sockets (as root: sysctl -w net.ipv4.ping_group_range=\"0 2147483647\")",
                        ping_group_range()
                    ))
                }
            },
        };
        let ip = addr.ip();
        socket
            .connect(&addr.into())
            .map_err(|e| format!("cannot send ICMP to {ip}: {e}"))?;
        let _ = socket.set_recv_buffer_size(1 << 20);
        let random = random_u64();
        if kind == SocketKind::Raw {
            // Every raw socket gets a copy of every echo reply from the
            // target; without a filter each of N senders would wade
            // through all N senders' replies, and their queues overflow.
            attach_id_filter(&socket, v6, (random >> 48) as u16)
                .map_err(|e| format!("cannot filter the raw ICMP socket: {e}"))?;
        }
        let id = match kind {
            // The kernel took the "port" as our identifier.
            SocketKind::Dgram => socket
                .local_addr()
                .ok()
                .and_then(|a| a.as_socket())
                .map(|a| a.port())
                .unwrap_or(0),
            SocketKind::Raw => (random >> 48) as u16,
        };
        Ok(EchoSocket {
            socket,
            kind,
            v6,
            id,
            token: random.to_be_bytes(),
        })
    }

    pub fn kind(&self) -> SocketKind {
        self.kind
    }

    fn set_timeout(&self, t: Duration) -> Result<(), BenchError> {
        self.socket
            .set_read_timeout(Some(t))
            .map_err(|e| BenchError::failed(format!("setting an ICMP socket's timeout: {e}")))
    }

    /// Writes echo request `seq` into `buf` (header, stamp, zero padding
    /// as it was).
    fn fill(&self, buf: &mut [u8], seq: u64) {
        buf[0] = if self.v6 { 128 } else { 8 };
        buf[1] = 0;
        buf[2..4].copy_from_slice(&[0, 0]);
        buf[4..6].copy_from_slice(&self.id.to_be_bytes());
        buf[6..8].copy_from_slice(&(seq as u16).to_be_bytes());
        buf[HEADER..HEADER + 8].copy_from_slice(&self.token);
        buf[HEADER + 8..HEADER + STAMP].copy_from_slice(&seq.to_be_bytes());
        if self.kind == SocketKind::Raw && !self.v6 {
            // The kernel computes it for ICMP sockets and for ICMPv6.
            let c = checksum(buf);
            buf[2..4].copy_from_slice(&c.to_be_bytes());
        }
    }

    /// The sequence number of an echo reply of ours, else `None`.
    fn parse(&self, pkt: &[u8]) -> Option<u64> {
        let icmp = if self.kind == SocketKind::Raw && !self.v6 {
            // A raw IPv4 socket hands over the IP header too.
            let ihl = usize::from(pkt.first()? & 0x0f) * 4;
            pkt.get(ihl..)?
        } else {
            pkt
        };
        let reply_type = if self.v6 { 129 } else { 0 };
        if icmp.len() < HEADER + STAMP || icmp[0] != reply_type || icmp[1] != 0 {
            return None;
        }
        if self.kind == SocketKind::Raw && icmp[4..6] != self.id.to_be_bytes() {
            return None;
        }
        if icmp[HEADER..HEADER + 8] != self.token {
            return None;
        }
        let mut s = [0u8; 8];
        s.copy_from_slice(&icmp[HEADER + 8..HEADER + STAMP]);
        Some(u64::from_be_bytes(s))
    }

    /// One echo, waiting at most `timeout` for its reply; `None` if none
    /// came.
    fn echo(
        &self,
        out: &mut [u8],
        inb: &mut [u8],
        seq: u64,
        timeout: Duration,
    ) -> Result<Option<Duration>, BenchError> {
        self.fill(out, seq);
        let t0 = Instant::now();
        self.socket
            .send(out)
            .map_err(|e| BenchError::failed(format!("sending an ICMP echo: {e}")))?;
        loop {
            let left = timeout.saturating_sub(t0.elapsed());
            if left.is_zero() {
                return Ok(None);
            }
            self.set_timeout(left.max(Duration::from_micros(100)))?;
            match io::Read::read(&mut &self.socket, inb) {
                Ok(n) => match self.parse(&inb[..n]) {
                    Some(s) if s == seq => return Ok(Some(t0.elapsed())),
                    // Someone else's packet, or a late reply: keep waiting.
                    _ => {}
                },
                Err(e) if would_block(&e) => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(BenchError::failed(format!(
                    "receiving ICMP: {e} (the target or a router on the way answers with an error)"
                )))
                }
            }
        }
    }
}

/// The target of a case, by its `target` param.
fn target_of<'a>(options: &'a NetOptions, params: &Params) -> Result<&'a IcmpTarget, BenchError> {
    named(params, "target", &options.icmp, |t| &t.name, "ICMP targets")
}

fn payload_of(params: &Params, options: &NetOptions) -> Result<usize, BenchError> {
    size_param(
        params,
        options.icmp_size.unwrap_or(DEFAULT_PAYLOAD),
        check_payload,
    )
}

fn open(t: &IcmpTarget, ctx: &mut RunCtx) -> Result<EchoSocket, BenchError> {
    let s = EchoSocket::open(t.addr).map_err(BenchError::failed)?;
    ctx.note_detail("address", t.addr.ip().to_string());
    ctx.note_detail("socket", s.kind().as_str());
    Ok(s)
}

/// Sender counts of the flood: `--senders`, else 1, 2, 4 … up to the
/// profile's bound (the same on every machine).
pub fn sender_ladder(options: &NetOptions, profile: Profile) -> Vec<usize> {
    match &options.senders {
        Some(s) => s.clone(),
        None => super::udp::sender_ladder(profile),
    }
}

options_benchmark! {
    /// `net.icmp-rtt`: one echo at a time.
    IcmpRttBenchmark = "net.icmp-rtt",
    "ICMP echo round trip to any host (no sysgauge there), one echo at a time, at most 500 per second (median and 99th percentile)",
    Unit::Microseconds,
    Better::Lower
}

impl IcmpRttBenchmark {
    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        self.options.foreign_cases(|| {
            let size = self.options.icmp_size.unwrap_or(DEFAULT_PAYLOAD);
            self.options
                .icmp
                .iter()
                .map(|t| {
                    Params::new()
                        .with("target", t.name.as_str())
                        .with("size", size)
                })
                .collect()
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let t = target_of(&self.options, params)?;
        let size = payload_of(params, &self.options)?;
        let socket = open(t, ctx)?;
        let mut out = vec![0u8; HEADER + size];
        let mut inb = vec![0u8; HEADER + size + 128];
        let (mut seq, mut lost) = (0u64, 0u64);
        let cancel = ctx.cancel_token().clone();
        let name = t.name.clone();
        let rtts = RoundTrips::measure(
            ctx,
            Vec::with_capacity(MAX_RTTS.min(65_536)),
            MAX_RTTS,
            "ICMP round trip",
            |_| {
                if seq % 64 == 0 {
                    cancel.check()?;
                }
                seq += 1;
                let t0 = Instant::now();
                let rtt = match socket.echo(&mut out, &mut inb, seq, ECHO_TIMEOUT)? {
                    Some(rtt) => Some(rtt.as_secs_f64() * 1e6),
                    None => {
                        lost += 1;
                        if lost >= MIN_LOST && lost as f64 > seq as f64 * MAX_LOSS_SHARE {
                            return Err(BenchError::failed(format!(
                                "{lost} of {seq} ICMP echoes to {name} went unanswered for {} s: does it answer ping, or does a firewall drop ICMP echo?",
                                ECHO_TIMEOUT.as_secs()
                            )));
                        }
                        None
                    }
                };
                if let Some(pause) = RTT_INTERVAL.checked_sub(t0.elapsed()) {
                    std::thread::sleep(pause);
                }
                Ok(rtt)
            },
        )?;
        ctx.note_detail("lost", lost);
        rtts.metrics()
    }
}

/// One flooding sender: its socket, buffers and window.
struct Flooder {
    socket: EchoSocket,
    size: usize,
    out: Batch,
    inb: Batch,
    /// Send time and answered flag of each echo in flight, by seq % WINDOW.
    sent_at: Vec<Instant>,
    answered: Vec<bool>,
    /// Next sequence number to send; the oldest unresolved one.
    next: u64,
    low: u64,
    patience: Duration,
}

#[derive(Default)]
struct FloodTotals {
    sent: AtomicU64,
    lost: AtomicU64,
    late: AtomicU64,
    /// Echo replies counted (what the `rate` metric counts).
    replied: AtomicU64,
    /// Time spent flooding, summed over the senders (ns).
    busy_ns: AtomicU64,
}

impl Flooder {
    fn new(socket: EchoSocket, size: usize, patience: Duration) -> Result<Flooder, BenchError> {
        // Short waits: a sender with room in its window sends again soon.
        socket.set_timeout(Duration::from_millis(1))?;
        let now = Instant::now();
        Ok(Flooder {
            socket,
            size,
            out: Batch::new(HEADER + size),
            inb: Batch::new(HEADER + size + 128),
            sent_at: vec![now; WINDOW],
            answered: vec![true; WINDOW],
            next: 0,
            low: 0,
            patience,
        })
    }

    /// Floods until `n` echoes of this call's window were answered; returns
    /// the replies counted.
    fn flood(
        &mut self,
        n: u64,
        totals: &FloodTotals,
        cancel: &CancelToken,
    ) -> Result<f64, BenchError> {
        let mut got = 0u64;
        let mut last_reply = Instant::now();
        let began = last_reply;
        let w = WINDOW as u64;
        while got < n {
            let now = Instant::now();
            // Resolve the oldest echoes: answered, or given up.
            while self.low < self.next {
                let i = (self.low % w) as usize;
                if !self.answered[i] {
                    if now.saturating_duration_since(self.sent_at[i]) < self.patience {
                        break;
                    }
                    totals.lost.fetch_add(1, Ordering::Relaxed);
                    self.answered[i] = true;
                }
                self.low += 1;
            }
            let room = (w - (self.next - self.low)) as usize;
            let want = room.min(BATCH);
            if want > 0 {
                for k in 0..want {
                    let seq = self.next + k as u64;
                    let slot = self.out.slot_mut(k);
                    self.socket.fill(&mut slot[..HEADER + self.size], seq);
                    self.out.lens[k] = HEADER + self.size;
                }
                let sent = match self.out.send(&self.socket.socket, want, false) {
                    Ok(s) => s,
                    // A full send queue: wait for replies instead.
                    Err(e) if would_block(&e) || e.raw_os_error() == Some(libc::ENOBUFS) => 0,
                    Err(e) => return Err(BenchError::failed(format!("sending ICMP: {e}"))),
                };
                let at = Instant::now();
                for k in 0..sent {
                    let i = ((self.next + k as u64) % w) as usize;
                    self.sent_at[i] = at;
                    self.answered[i] = false;
                }
                self.next += sent as u64;
                totals.sent.fetch_add(sent as u64, Ordering::Relaxed);
            }
            match self.inb.recv(&self.socket.socket, false) {
                Ok(m) => {
                    for k in 0..m {
                        let Some(seq) = self.socket.parse(self.inb.received(k)) else {
                            continue;
                        };
                        let i = (seq % w) as usize;
                        if seq >= self.low && seq < self.next && !self.answered[i] {
                            self.answered[i] = true;
                            got += 1;
                            last_reply = Instant::now();
                        } else {
                            totals.late.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Err(e) if would_block(&e) || e.kind() == io::ErrorKind::Interrupted => {
                    cancel.check()?;
                    if last_reply.elapsed() >= SILENCE {
                        return Err(BenchError::failed(format!(
                            "no ICMP echo reply came for {} s during the flood: the target stopped answering",
                            SILENCE.as_secs()
                        )));
                    }
                }
                Err(e) => return Err(BenchError::failed(format!("receiving ICMP: {e}"))),
            }
        }
        totals.replied.fetch_add(got, Ordering::Relaxed);
        let busy = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
        totals.busy_ns.fetch_add(busy, Ordering::Relaxed);
        Ok(got as f64)
    }
}

/// Both directions' packet rates over a whole flood (calibration and
/// warm-up included): requests sent and replies received per second of
/// flooding, the senders' busy time shared out among them.
fn direction_rates(sent: u64, replied: u64, busy_ns: u64, senders: usize) -> Option<(f64, f64)> {
    let secs = busy_ns as f64 * 1e-9 / senders.max(1) as f64;
    (secs > 0.0).then(|| (sent as f64 / secs, replied as f64 / secs))
}

/// Four times the slowest of a few single echoes, within the bounds.
fn patience(t: &IcmpTarget, size: usize) -> Result<Duration, String> {
    let s = EchoSocket::open(t.addr)?;
    let mut out = vec![0u8; HEADER + size];
    let mut inb = vec![0u8; HEADER + size + 128];
    let mut slowest: Option<Duration> = None;
    for seq in 1..=5u64 {
        match s.echo(&mut out, &mut inb, seq, ECHO_TIMEOUT) {
            Ok(Some(rtt)) => slowest = Some(slowest.map_or(rtt, |m| m.max(rtt))),
            Ok(None) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let slowest = slowest.ok_or_else(|| {
        format!(
            "no ICMP echo reply from {} ({}) within {} s: does it answer ping, or does a firewall drop ICMP echo?",
            t.name,
            t.addr.ip(),
            ECHO_TIMEOUT.as_secs()
        )
    })?;
    Ok((slowest * 4).clamp(MIN_PATIENCE, MAX_PATIENCE))
}

/// The flood in a fixed window of wall-clock time: from `start`, for
/// `length`, cut into [`WINDOW_SLICES`] equal slices, one sample each.
/// Several machines flooding one host at once (a fleet flood) then count
/// their replies over the same moments, so their rates add up to what the
/// host answered; timed repetitions would each be calibrated and placed by
/// their own machine, and a host's median could come from moments when
/// the others were not flooding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloodWindow {
    pub start: std::time::SystemTime,
    pub length: Duration,
}

/// Samples of a windowed flood.
pub const WINDOW_SLICES: u32 = 5;

/// Echoes answered per call while a windowed flood watches the clock:
/// small, so a slice ends at most a few replies late.
const WINDOW_CHUNK: u64 = 4;

impl FloodWindow {
    pub fn new(start: std::time::SystemTime, length: Duration) -> FloodWindow {
        FloodWindow { start, length }
    }

    fn slice_end(&self, i: u32) -> std::time::SystemTime {
        self.start + self.length / WINDOW_SLICES * (i + 1)
    }
}

/// The echo reply rate of every slice of `w`, all senders together.
fn flood_window(
    w: &FloodWindow,
    flooders: &[Mutex<Flooder>],
    totals: &FloodTotals,
    cancel: &CancelToken,
) -> Result<Vec<f64>, BenchError> {
    let late = std::time::SystemTime::now()
        .duration_since(w.start)
        .unwrap_or(Duration::ZERO);
    if late > w.length / WINDOW_SLICES / 2 {
        return Err(BenchError::failed(format!(
            "the flood window began {:.1} s before this host was ready (--flood-at lies too close)",
            late.as_secs_f64()
        )));
    }
    // Each sender: (replies, seconds) per slice.
    let per_sender: Vec<Result<Vec<(f64, f64)>, BenchError>> = std::thread::scope(|s| {
        let handles: Vec<_> = flooders
            .iter()
            .map(|f| {
                s.spawn(move || -> Result<Vec<(f64, f64)>, BenchError> {
                    let mut f = f
                        .lock()
                        .map_err(|_| BenchError::failed("a sender panicked"))?;
                    while std::time::SystemTime::now() < w.start {
                        cancel.check()?;
                        let left = w
                            .start
                            .duration_since(std::time::SystemTime::now())
                            .unwrap_or(Duration::ZERO);
                        std::thread::sleep(left.min(Duration::from_millis(20)));
                    }
                    let mut out = Vec::with_capacity(WINDOW_SLICES as usize);
                    let mut from = std::time::SystemTime::now();
                    for i in 0..WINDOW_SLICES {
                        let end = w.slice_end(i);
                        let mut got = 0.0;
                        while std::time::SystemTime::now() < end {
                            // A flood on a fast link never waits for a
                            // reply, where `flood` looks at the token.
                            cancel.check()?;
                            got += f.flood(WINDOW_CHUNK, totals, cancel)?;
                        }
                        let now = std::time::SystemTime::now();
                        let secs = now.duration_since(from).unwrap_or(Duration::ZERO);
                        out.push((got, secs.as_secs_f64()));
                        from = now;
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BenchError::failed("a sender panicked")))
            })
            .collect()
    });
    let mut rates = vec![0.0; WINDOW_SLICES as usize];
    for slices in per_sender {
        for (rate, (got, secs)) in rates.iter_mut().zip(slices?) {
            if secs > 0.0 {
                *rate += got / secs;
            }
        }
    }
    Ok(rates)
}

options_benchmark! {
    /// `net.icmp-pps`: the flood, one case per sender count.
    IcmpPpsBenchmark = "net.icmp-pps",
    "ICMP echo flood to any host (no sysgauge there): echo replies per second, 1, 2, 4 … senders until the rate stops rising",
    Unit::PacketsPerSec,
    Better::Higher
}

impl IcmpPpsBenchmark {
    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.options.foreign_cases(|| {
            let size = self.options.icmp_size.unwrap_or(DEFAULT_PAYLOAD);
            let ladder = sender_ladder(&self.options, plan.profile);
            let mut out = Vec::new();
            for t in &self.options.icmp {
                for &s in &ladder {
                    out.push(
                        Params::new()
                            .with("target", t.name.as_str())
                            .with("senders", s)
                            .with("size", size),
                    );
                }
            }
            out
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let t = target_of(&self.options, params)?.clone();
        let size = payload_of(params, &self.options)?;
        let senders = count_param(params, "senders", 256)?;
        let ladder_key = format!("net.icmp-pps-ladder-{}-{size}", t.name);
        Ladder::skip_if_saturated(ctx, &ladder_key, &ICMP_LADDER)?;
        let patience_key = format!("net.icmp-patience-{}-{size}", t.name);
        let patience = {
            let slot: &mut Result<Duration, String> =
                ctx.fixture(&patience_key, |_| Ok(patience(&t, size)))?;
            slot.clone().map_err(BenchError::failed)?
        };
        let mut flooders = Vec::with_capacity(senders);
        let mut kind = None;
        for _ in 0..senders {
            let s = EchoSocket::open(t.addr).map_err(BenchError::failed)?;
            kind = Some(s.kind());
            flooders.push(Mutex::new(Flooder::new(s, size, patience)?));
        }
        ctx.note_detail("address", t.addr.ip().to_string());
        if let Some(k) = kind {
            ctx.note_detail("socket", k.as_str());
        }
        let totals = FloodTotals::default();
        let cancel = ctx.cancel_token().clone();
        let samples = if let Some(w) = &self.options.flood_window {
            ctx.note_detail(
                "flood_window_ms",
                u64::try_from(w.length.as_millis()).unwrap_or(u64::MAX),
            );
            flood_window(w, &flooders, &totals, &cancel)?
        } else {
            measure_rate_on_threads(ctx, senders, |i, n| {
                lock_worker(&flooders, i, "socket", "sender")?.flood(n, &totals, &cancel)
            })?
        };
        ctx.note_detail("window", WINDOW);
        ctx.note_detail(
            "patience_us",
            u64::try_from(patience.as_micros()).unwrap_or(u64::MAX),
        );
        ctx.note_detail("sent", totals.sent.load(Ordering::Relaxed));
        ctx.note_detail("lost", totals.lost.load(Ordering::Relaxed));
        ctx.note_detail("late", totals.late.load(Ordering::Relaxed));
        // The rate counts replies, not both directions of the flood.
        ctx.note_detail("counts", "echo replies received per second");
        let replied = totals.replied.load(Ordering::Relaxed);
        ctx.note_detail("replied", replied);
        if let Some((req, rep)) = direction_rates(
            totals.sent.load(Ordering::Relaxed),
            replied,
            totals.busy_ns.load(Ordering::Relaxed),
            senders,
        ) {
            ctx.note_detail("requests_per_s", req.round() as i64);
            ctx.note_detail("replies_per_s", rep.round() as i64);
        }
        let m = metric("rate", Unit::PacketsPerSec, Better::Higher, samples)?;
        let last_step =
            sender_ladder(&self.options, ctx.profile()).last().copied() == Some(senders);
        Ladder::conclude(
            ctx,
            &ladder_key,
            &ICMP_LADDER,
            senders,
            m.value(),
            last_step,
        )?;
        Ok(vec![m])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_a_known_echo_request() {
        // An echo request with id 0x1234, seq 1 and no payload: the sum of
        // 0x0800 + 0x1234 + 0x0001 = 0x1a35, complemented.
        let mut p = [8u8, 0, 0, 0, 0x12, 0x34, 0, 1];
        assert_eq!(checksum(&p), !0x1a35);
        let c = checksum(&p);
        p[2..4].copy_from_slice(&c.to_be_bytes());
        // A packet with its checksum in place sums to zero.
        assert_eq!(checksum(&p), 0);
        // Odd lengths pad with a zero byte.
        assert_eq!(checksum(&[0xff]), !0xff00);
    }

    #[test]
    fn payload_bounds() {
        assert!(check_payload(15).is_err());
        assert_eq!(check_payload(16), Ok(16));
        assert_eq!(check_payload(56), Ok(56));
        assert!(check_payload(MAX_PAYLOAD + 1).is_err());
    }
}
