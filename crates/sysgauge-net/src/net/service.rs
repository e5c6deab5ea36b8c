//! The net service: the far end of `sysgauge net`. A TCP sink (and
//! connection-rate partner) and a UDP reflector on one port number, started
//! in-process on loopback for the default measurement, or by `sysgauge
//! listen --serve` on a peer.
//!
//! Shape and why:
//! - One accepting thread per address. The listening socket uses
//!   `TCP_DEFER_ACCEPT`, so a connection reaches `accept` with its hello
//!   already queued: info and connect requests are answered inline, without
//!   a thread per connection (a connection-rate test makes tens of
//!   thousands). Sink connections get their own thread, up to
//!   `max_connections` at once; beyond that the reply is "busy".
//! - After answering a connect request the service closes first, so the
//!   TIME_WAIT state is on its side and clients do not run out of ports.
//! - A sink connection carries any number of blocks, each confirmed, so a
//!   client keeps one warmed-up connection (congestion window and buffer
//!   autotuning grown) for all the repetitions of a case.
//! - Sink threads read into 256 KiB buffers taken from a pool, so no buffer
//!   is allocated (and faulted in) while a client is being timed.
//! - UDP: `reflector_threads` sockets share the port with `SO_REUSEPORT`
//!   (the kernel spreads senders over them); each moves datagrams in
//!   batches (`recvmmsg`/`sendmmsg`) and reflects only datagrams with our
//!   header, unchanged, so junk is never answered and no reply is larger
//!   than its request.
//! - Nobody else's reflector: every hello and datagram carries an HMAC tag
//!   of the shared key (see [`super::proto`]); a non-loopback address is
//!   refused at start without a key. Unauthenticated datagrams are dropped,
//!   never reflected; an unauthenticated hello gets "not authenticated".
//! - Limits, so that strangers cannot lock a keyed client out: a
//!   connection whose hello is not complete yet is *pending*; at most
//!   `max_pending` of them at once and `max_pending_per_source` per source
//!   address, each given [`HELLO_TIMEOUT`] to finish its hello or be
//!   closed. Only a sink whose hello carries the key's tag takes one of the
//!   `max_connections` slots (and of its source's `max_per_source`), so
//!   idle or half-sent connections, however many and from however many
//!   addresses, never count against an authenticated client. A refused
//!   connection is told "busy" before it is closed. Each reflector thread rate-limits per source (IPv6: per /64)
//!   with the 2ping listener's token buckets (new sources share one bucket,
//!   so a spoofed flood is held to one source's rate). Loopback sources are
//!   exempt from the UDP rate only: the in-process service measures the
//!   stack, not the limiter, and only this host can reach a loopback bind.
//! - Every blocking call has a timeout (poll 100 ms, socket reads 250 ms),
//!   every loop checks the stop flag, and idle sink connections are closed
//!   after `idle_timeout`; dropping the service stops and joins every
//!   thread.

use super::proto::{self, Hello, HelloError, Mode, Reply, ReplyStatus, ServiceKey, HELLO_LEN};
use super::sys::{self, Batch};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use sysgauge_twoping::listener::{RateLimit, RateLimiter};
use thiserror::Error;

/// Size of the sink's read buffers: as large as the client's writes, and
/// small enough to stay in a core's L2 cache (docs/performance.md compares
/// the sizes).
const SINK_BUFFER: usize = 256 << 10;
/// How long a blocking read waits before the stop flag is checked again.
const READ_SLICE: Duration = Duration::from_millis(250);
/// How long `accept` polling waits before the stop flag is checked again.
const POLL_SLICE: Duration = Duration::from_millis(100);
/// Longest time a client may take to finish sending its hello. A real
/// client sends its 48 bytes in one write, so they arrive together.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(3);

/// Service settings.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Addresses to serve on; port 0 picks a free port (the same number
    /// for TCP and UDP).
    pub addresses: Vec<SocketAddr>,
    /// UDP reflector threads per address (sockets sharing the port).
    pub reflector_threads: usize,
    /// Most authenticated sink connections served at once.
    pub max_connections: usize,
    /// A sink connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// Most authenticated sink connections at once from one source address.
    pub max_per_source: usize,
    /// Most connections at once whose hello is not complete yet.
    pub max_pending: usize,
    /// Most such pending connections at once from one source address.
    pub max_pending_per_source: usize,
    /// The shared key; required unless every address is loopback.
    pub key: Option<ServiceKey>,
    /// Per-source UDP rate limit of each reflector thread; `None`: none.
    pub udp_rate: Option<RateLimit>,
}

/// Default per-source UDP rate (datagrams per second, per reflector
/// thread): above what one client's packet-rate case sends over a
/// gigabit link, far below what would make the service a useful weapon.
pub const DEFAULT_UDP_RATE: u32 = 200_000;
/// Sources with their own UDP token bucket, per reflector thread.
const UDP_RATE_SOURCES: usize = 4096;

impl ServiceConfig {
    /// An in-process service on 127.0.0.1 at a free port.
    pub fn loopback() -> ServiceConfig {
        ServiceConfig {
            addresses: vec![SocketAddr::from(([127, 0, 0, 1], 0))],
            ..ServiceConfig::default()
        }
    }
}

impl Default for ServiceConfig {
    fn default() -> Self {
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        ServiceConfig {
            addresses: vec![SocketAddr::from((
                [127, 0, 0, 1],
                proto::DEFAULT_SERVICE_PORT,
            ))],
            reflector_threads: cpus.clamp(1, 8),
            max_connections: 256,
            idle_timeout: Duration::from_secs(10),
            max_per_source: 64,
            max_pending: 64,
            max_pending_per_source: 4,
            key: None,
            udp_rate: Some(RateLimit {
                packets_per_second: f64::from(DEFAULT_UDP_RATE),
                burst: f64::from(DEFAULT_UDP_RATE),
                exempt_loopback: true,
            }),
        }
    }
}

/// The service could not start.
#[derive(Debug, Error)]
pub enum ServiceError {
    #[error("cannot serve on {addr}: {source} (is another service on that port?)")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error("cannot start a service thread: {0}")]
    Thread(#[source] io::Error),
    #[error("invalid service settings: {0}")]
    Config(String),
}

/// What the service did, readable while it runs.
#[derive(Debug, Default)]
pub struct ServiceCounters {
    pub connections: AtomicU64,
    pub sink_bytes: AtomicU64,
    pub refused_busy: AtomicU64,
    pub foreign: AtomicU64,
    pub udp_reflected: AtomicU64,
    pub udp_dropped: AtomicU64,
    /// Hellos whose tag was not the key's.
    pub unauthenticated: AtomicU64,
    /// Datagrams of our protocol whose tag was not the key's.
    pub udp_unauthenticated: AtomicU64,
    /// Datagrams over their source's rate.
    pub udp_rate_limited: AtomicU64,
    /// Connections refused for their source's limit (sinks or pending).
    pub refused_per_source: AtomicU64,
    /// Pending connections refused because `max_pending` were waiting.
    pub refused_pending: AtomicU64,
    /// Pending connections closed for not finishing their hello in time.
    pub hello_timeouts: AtomicU64,
}

struct Shared {
    stop: AtomicBool,
    counters: ServiceCounters,
    /// Authenticated sink connections, in all and per source.
    active: AtomicUsize,
    per_source: Mutex<HashMap<IpAddr, usize>>,
    /// Connections whose hello is not complete, in all and per source.
    pending: AtomicUsize,
    pending_source: Mutex<HashMap<IpAddr, usize>>,
    buffers: Mutex<Vec<Vec<u8>>>,
    config: ServiceConfig,
}

/// A running service; dropping it stops and joins every thread.
pub struct NetService {
    addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    workers: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl std::fmt::Debug for NetService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetService")
            .field("addrs", &self.addrs)
            .finish()
    }
}

fn domain_of(addr: &SocketAddr) -> Domain {
    if addr.is_ipv4() {
        Domain::IPV4
    } else {
        Domain::IPV6
    }
}

fn bind_tcp(addr: SocketAddr) -> io::Result<TcpListener> {
    let s = Socket::new(domain_of(&addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    s.bind(&addr.into())?;
    s.listen(1024)?;
    sys::set_defer_accept(s.as_raw_fd(), 1)?;
    s.set_nonblocking(true)?;
    Ok(s.into())
}

fn bind_udp(addr: SocketAddr) -> io::Result<UdpSocket> {
    let s = Socket::new(domain_of(&addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_port(true)?;
    // Room for bursts from several senders; the kernel caps it at rmem_max.
    let _ = s.set_recv_buffer_size(4 << 20);
    s.bind(&addr.into())?;
    s.set_read_timeout(Some(POLL_SLICE))?;
    Ok(s.into())
}

/// Binds a TCP listener and `n` UDP sockets on the same port of `addr`. With
/// port 0, retries a few ports in case the UDP number is taken.
fn bind_pair(addr: SocketAddr, n: usize) -> Result<(TcpListener, Vec<UdpSocket>), ServiceError> {
    let attempts = if addr.port() == 0 { 16 } else { 1 };
    let mut last = None;
    for _ in 0..attempts {
        let tcp = bind_tcp(addr).map_err(|source| ServiceError::Bind { addr, source })?;
        let local = tcp
            .local_addr()
            .map_err(|source| ServiceError::Bind { addr, source })?;
        let mut udp = Vec::with_capacity(n);
        let mut failed = None;
        for _ in 0..n {
            match bind_udp(local) {
                Ok(s) => udp.push(s),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        match failed {
            None => return Ok((tcp, udp)),
            Some(e) => last = Some(e),
        }
    }
    Err(ServiceError::Bind {
        addr,
        source: last.unwrap_or_else(|| io::Error::other("no port found")),
    })
}

impl NetService {
    /// Binds every address and starts serving.
    pub fn start(config: ServiceConfig) -> Result<NetService, ServiceError> {
        if config.addresses.is_empty() {
            return Err(ServiceError::Config("no address to serve on".into()));
        }
        if config.reflector_threads == 0
            || config.max_connections == 0
            || config.max_per_source == 0
            || config.max_pending == 0
            || config.max_pending_per_source == 0
        {
            return Err(ServiceError::Config(
                "reflector threads and connection limits must be at least 1".into(),
            ));
        }
        if config.key.is_none() {
            if let Some(a) = config.addresses.iter().find(|a| !a.ip().is_loopback()) {
                return Err(ServiceError::Config(format!(
                    "serving on {a} needs a shared key (--serve-key or SYSGAUGE_NET_KEY): without one anybody could use the service as a reflector"
                )));
            }
        }
        let mut bound = Vec::new();
        for &addr in &config.addresses {
            bound.push(bind_pair(addr, config.reflector_threads)?);
        }
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            counters: ServiceCounters::default(),
            active: AtomicUsize::new(0),
            per_source: Mutex::new(HashMap::new()),
            pending: AtomicUsize::new(0),
            pending_source: Mutex::new(HashMap::new()),
            buffers: Mutex::new(Vec::new()),
            config,
        });
        let workers = Arc::new(Mutex::new(Vec::new()));
        let mut service = NetService {
            addrs: Vec::new(),
            shared: Arc::clone(&shared),
            threads: Vec::new(),
            workers: Arc::clone(&workers),
        };
        for (tcp, udps) in bound {
            let local = tcp.local_addr().map_err(|source| ServiceError::Bind {
                addr: SocketAddr::from(([0, 0, 0, 0], 0)),
                source,
            })?;
            service.addrs.push(local);
            for (i, udp) in udps.into_iter().enumerate() {
                let sh = Arc::clone(&shared);
                let h = std::thread::Builder::new()
                    .name(format!("net-reflect-{i}"))
                    .spawn(move || reflect(&udp, &sh))
                    .map_err(ServiceError::Thread)?;
                service.threads.push(h);
            }
            let sh = Arc::clone(&shared);
            let w = Arc::clone(&workers);
            let port = local.port();
            let h = std::thread::Builder::new()
                .name("net-accept".into())
                .spawn(move || accept_loop(&tcp, port, &sh, &w))
                .map_err(ServiceError::Thread)?;
            service.threads.push(h);
        }
        Ok(service)
    }

    /// The addresses served (with the ports chosen).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Live counters.
    pub fn counters(&self) -> &ServiceCounters {
        &self.shared.counters
    }
}

impl Drop for NetService {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        let workers = match self.workers.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        };
        for h in workers {
            let _ = h.join();
        }
    }
}

fn stopped(sh: &Shared) -> bool {
    sh.stop.load(Ordering::Relaxed)
}

fn accept_loop(
    listener: &TcpListener,
    udp_port: u16,
    sh: &Arc<Shared>,
    workers: &Arc<Mutex<Vec<JoinHandle<()>>>>,
) {
    let fd = listener.as_raw_fd();
    while !stopped(sh) {
        match sys::wait_readable(fd, POLL_SLICE) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => {
                std::thread::sleep(POLL_SLICE);
                continue;
            }
        }
        // Drain what is queued; the listener is non-blocking.
        for _ in 0..256 {
            match listener.accept() {
                Ok((stream, _)) => {
                    sh.counters.connections.fetch_add(1, Ordering::Relaxed);
                    handle_new(stream, udp_port, sh, workers);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // ECONNABORTED, EMFILE ...: survive and go on.
                Err(_) => break,
            }
        }
        if let Ok(mut w) = workers.lock() {
            // Reap finished sink threads so the list stays short.
            let mut i = 0;
            while i < w.len() {
                if w[i].is_finished() {
                    let h = w.swap_remove(i);
                    let _ = h.join();
                } else {
                    i += 1;
                }
            }
        }
    }
}

/// Answers a fresh connection: inline when its hello is complete and asks
/// for something quick; a complete sink hello with the key takes a sink
/// slot and a worker; an incomplete hello takes a pending slot and a worker
/// that waits at most [`HELLO_TIMEOUT`] for the rest.
fn handle_new(
    mut stream: TcpStream,
    udp_port: u16,
    sh: &Arc<Shared>,
    workers: &Arc<Mutex<Vec<JoinHandle<()>>>>,
) {
    let _ = stream.set_nodelay(true);
    let mut hello = [0u8; HELLO_LEN];
    let mut have = 0;
    if stream.set_nonblocking(true).is_ok() {
        while have < HELLO_LEN {
            match stream.read(&mut hello[have..]) {
                Ok(0) => return,
                Ok(n) => have += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
    let Some(source) = stream.peer_addr().ok().map(|a| a.ip()) else {
        return;
    };
    if have == HELLO_LEN {
        match Hello::decode(&hello, sh.config.key.as_ref()) {
            Ok(h) if h.mode == Mode::Sink => {
                let Some(slot) = Slot::take(sh, Budget::Sink, source) else {
                    refuse(stream);
                    return;
                };
                spawn_worker(workers, sh, move |sh| {
                    if prepare(&stream, sh) {
                        sink(&mut stream, h.argument, sh);
                    }
                    drop(slot);
                });
            }
            other => answer_quick(&mut stream, other, udp_port, sh),
        }
        return;
    }
    let Some(slot) = Slot::take(sh, Budget::Pending, source) else {
        refuse(stream);
        return;
    };
    spawn_worker(workers, sh, move |sh| {
        finish_hello(stream, hello, have, udp_port, slot, sh)
    });
}

/// Runs `work` on a new worker thread (kept in `workers` to be joined).
/// When no thread can be started, `work` is dropped with what it owns (its
/// connection and slot).
fn spawn_worker(
    workers: &Arc<Mutex<Vec<JoinHandle<()>>>>,
    sh: &Arc<Shared>,
    work: impl FnOnce(&Shared) + Send + 'static,
) {
    let sh2 = Arc::clone(sh);
    let spawned = std::thread::Builder::new()
        .name("net-sink".into())
        .stack_size(256 << 10)
        .spawn(move || work(&sh2));
    if let Ok(h) = spawned {
        if let Ok(mut w) = workers.lock() {
            w.push(h);
        }
    }
}

/// Says "busy" and closes. The write side is shut first and what the
/// client already sent is read away, so the close is a FIN after the
/// reply rather than a reset that could overtake it.
fn refuse(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(true);
    let _ = stream.write_all(&Reply::new(ReplyStatus::Busy, 0).encode());
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut junk = [0u8; 4096];
    for _ in 0..16 {
        match stream.read(&mut junk) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}

/// The two budgets: connections still sending their hello, and
/// authenticated sinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    Pending,
    Sink,
}

/// One connection's place in a budget (in all and for its source), given
/// back when dropped.
struct Slot {
    sh: Arc<Shared>,
    budget: Budget,
    source: IpAddr,
}

impl Slot {
    /// Takes a place for `source`, or counts the refusal and returns None.
    fn take(sh: &Arc<Shared>, budget: Budget, source: IpAddr) -> Option<Slot> {
        let (count, map, max, max_source) = Slot::parts(sh, budget);
        if !enter_source(map, source, max_source) {
            sh.counters
                .refused_per_source
                .fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if count.fetch_add(1, Ordering::SeqCst) >= max {
            count.fetch_sub(1, Ordering::SeqCst);
            leave_source(map, source);
            let refused = match budget {
                Budget::Pending => &sh.counters.refused_pending,
                Budget::Sink => &sh.counters.refused_busy,
            };
            refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(Slot {
            sh: Arc::clone(sh),
            budget,
            source,
        })
    }

    fn parts(
        sh: &Shared,
        budget: Budget,
    ) -> (&AtomicUsize, &Mutex<HashMap<IpAddr, usize>>, usize, usize) {
        let c = &sh.config;
        match budget {
            Budget::Pending => (
                &sh.pending,
                &sh.pending_source,
                c.max_pending,
                c.max_pending_per_source,
            ),
            Budget::Sink => (
                &sh.active,
                &sh.per_source,
                c.max_connections,
                c.max_per_source,
            ),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (count, map, _, _) = Slot::parts(&self.sh, self.budget);
        count.fetch_sub(1, Ordering::SeqCst);
        leave_source(map, self.source);
    }
}

/// Counts a connection of `source`; false if it already has `max`. The map
/// holds only sources with live connections, so it is bounded by its
/// budget.
fn enter_source(map: &Mutex<HashMap<IpAddr, usize>>, source: IpAddr, max: usize) -> bool {
    let Ok(mut m) = map.lock() else {
        return false;
    };
    let n = m.entry(source).or_insert(0);
    if *n >= max {
        if *n == 0 {
            m.remove(&source);
        }
        return false;
    }
    *n += 1;
    true
}

fn leave_source(map: &Mutex<HashMap<IpAddr, usize>>, source: IpAddr) {
    if let Ok(mut m) = map.lock() {
        if let Some(n) = m.get_mut(&source) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&source);
            }
        }
    }
}

/// Replies to anything but a sink hello, then closes (first).
fn answer_quick(
    stream: &mut TcpStream,
    hello: Result<Hello, HelloError>,
    udp_port: u16,
    sh: &Shared,
) {
    let reply = match hello {
        Ok(h) => match h.mode {
            Mode::Info => Reply::new(ReplyStatus::Ok, u64::from(udp_port)),
            Mode::Connect => Reply::new(ReplyStatus::Ok, 0),
            // Not reached: sink hellos are served by a worker.
            Mode::Sink => Reply::new(ReplyStatus::UnknownMode, 0),
        },
        Err(HelloError::Version(_)) => Reply::new(ReplyStatus::UnsupportedVersion, 0),
        Err(HelloError::UnknownMode(_)) => Reply::new(ReplyStatus::UnknownMode, 0),
        Err(HelloError::Unauthenticated) => {
            sh.counters.unauthenticated.fetch_add(1, Ordering::Relaxed);
            Reply::new(ReplyStatus::Unauthenticated, 0)
        }
        Err(HelloError::BadMagic) => {
            // Not a sysgauge client: say nothing.
            sh.counters.foreign.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    let _ = stream.write_all(&reply.encode());
}

/// Reads from `stream` into `buf` with the read slice as timeout, checking
/// the stop flag; `Ok(0)` is end of stream. Gives up after `limit`
/// without data.
fn read_some(
    stream: &mut TcpStream,
    buf: &mut [u8],
    limit: Duration,
    sh: &Shared,
) -> io::Result<usize> {
    let start = Instant::now();
    loop {
        if stopped(sh) {
            return Err(io::Error::other("service stopping"));
        }
        match stream.read(buf) {
            Ok(n) => return Ok(n),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                if start.elapsed() >= limit {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "client idle"));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// A worker's socket: blocking, with the read slice and a write timeout.
fn prepare(stream: &TcpStream, sh: &Shared) -> bool {
    if stream.set_nonblocking(false).is_err() || stream.set_read_timeout(Some(READ_SLICE)).is_err()
    {
        return false;
    }
    let _ = stream.set_write_timeout(Some(sh.config.idle_timeout));
    true
}

/// A pending connection's worker: waits at most [`HELLO_TIMEOUT`] for the
/// rest of the hello, gives its pending slot back, then serves the hello
/// (a sink only with a sink slot).
fn finish_hello(
    mut stream: TcpStream,
    mut hello: [u8; HELLO_LEN],
    mut have: usize,
    udp_port: u16,
    pending: Slot,
    sh: &Shared,
) {
    if !prepare(&stream, sh) {
        return;
    }
    let started = Instant::now();
    while have < HELLO_LEN {
        let left = HELLO_TIMEOUT.saturating_sub(started.elapsed());
        match read_some(&mut stream, &mut hello[have..], left, sh) {
            Ok(0) => return,
            Err(e) => {
                if e.kind() == io::ErrorKind::TimedOut {
                    sh.counters.hello_timeouts.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
            Ok(n) => have += n,
        }
    }
    let source = pending.source;
    let shared = Arc::clone(&pending.sh);
    drop(pending);
    match Hello::decode(&hello, sh.config.key.as_ref()) {
        Ok(h) if h.mode == Mode::Sink => {
            let Some(slot) = Slot::take(&shared, Budget::Sink, source) else {
                refuse(stream);
                return;
            };
            sink(&mut stream, h.argument, sh);
            drop(slot);
        }
        other => answer_quick(&mut stream, other, udp_port, sh),
    }
}

fn take_buffer(sh: &Shared) -> Vec<u8> {
    let pooled = sh.buffers.lock().ok().and_then(|mut b| b.pop());
    pooled.unwrap_or_else(|| vec![0u8; SINK_BUFFER])
}

fn give_buffer(sh: &Shared, buf: Vec<u8>) {
    if let Ok(mut b) = sh.buffers.lock() {
        if b.len() < 64 {
            b.push(buf);
        }
    }
}

/// Serves a sink connection: reads each block (the first announced by the
/// hello, the next ones by an 8-byte length) and confirms it once all its
/// bytes arrived. A zero length or the end of the stream ends it.
fn sink(stream: &mut TcpStream, first: u64, sh: &Shared) {
    let mut buf = take_buffer(sh);
    let mut len = first;
    while len > 0 {
        let mut got: u64 = 0;
        while got < len {
            let want = usize::try_from(len - got)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            match read_some(stream, &mut buf[..want], sh.config.idle_timeout, sh) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n as u64,
            }
        }
        sh.counters.sink_bytes.fetch_add(got, Ordering::Relaxed);
        if got != len
            || stream
                .write_all(&Reply::new(ReplyStatus::Ok, got).encode())
                .is_err()
        {
            break;
        }
        let mut header = [0u8; 8];
        let mut have = 0;
        while have < header.len() {
            match read_some(stream, &mut header[have..], sh.config.idle_timeout, sh) {
                Ok(0) | Err(_) => break,
                Ok(n) => have += n,
            }
        }
        len = if have == header.len() {
            u64::from_be_bytes(header)
        } else {
            0
        };
    }
    give_buffer(sh, buf);
}

/// One reflector thread: echoes authentic datagrams to their senders,
/// within each sender's rate.
fn reflect(socket: &UdpSocket, sh: &Shared) {
    let mut batch = Batch::new(proto::MAX_UDP_SIZE);
    let key = sh.config.key.as_ref();
    let mut limiter = sh
        .config
        .udp_rate
        .map(|rl| RateLimiter::new(rl, UDP_RATE_SOURCES, Instant::now()));
    let mut last_maintenance = Instant::now();
    while !stopped(sh) {
        let n = match batch.recv(socket, true) {
            Ok(n) => n,
            Err(_) => continue,
        };
        let now = Instant::now();
        // Keep valid datagrams at the front, in order.
        let mut keep = 0;
        let (mut forged, mut limited) = (0u64, 0u64);
        for i in 0..n {
            let data = batch.received(i);
            if proto::udp_seq(data).is_none() {
                continue;
            }
            // The cheap check first: the rate limit is a hash lookup, the
            // tag an HMAC.
            if let (Some(l), Some(src)) = (limiter.as_mut(), batch.source_ip(i)) {
                if !l.allow(src, false, now) {
                    limited += 1;
                    continue;
                }
            }
            if !proto::udp_authentic(data, key) {
                forged += 1;
                continue;
            }
            if keep != i {
                batch.move_slot(i, keep);
            }
            keep += 1;
        }
        if let Some(l) = limiter.as_mut() {
            if now.saturating_duration_since(last_maintenance) >= Duration::from_secs(1) {
                l.maintain(now);
                last_maintenance = now;
            }
        }
        let c = &sh.counters;
        let dropped = (n - keep) as u64;
        if dropped > 0 {
            c.udp_dropped.fetch_add(dropped, Ordering::Relaxed);
            c.udp_unauthenticated.fetch_add(forged, Ordering::Relaxed);
            c.udp_rate_limited.fetch_add(limited, Ordering::Relaxed);
        }
        if keep > 0 {
            if let Ok(sent) = batch.send(socket, keep, true) {
                c.udp_reflected.fetch_add(sent as u64, Ordering::Relaxed);
            }
        }
    }
}
