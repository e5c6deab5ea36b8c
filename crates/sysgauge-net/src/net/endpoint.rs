//! The far end of the TCP and UDP cases: an in-process service on
//! 127.0.0.1 (the default), or a peer's `sysgauge listen --serve`.
//!
//! It is a fixture of the family session: started (or checked with an info
//! exchange) by the first case and shared by the rest. A failure is
//! remembered too, so an unreachable peer costs one connect timeout, not one
//! per case. Every socket the cases open gets bounded timeouts from here.

use super::proto::{self, Hello, Mode, Reply, ReplyError, ReplyStatus, ServiceKey, MSG_LEN};
use super::service::{NetService, ServiceConfig};
use super::sys::would_block;
use super::NetOptions;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;
use sysgauge_core::{BenchError, RunCtx};

/// Longest wait for a TCP connection to be set up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest wait for any single read or write.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the UDP check waits for its datagram to come back.
const UDP_CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// Where the cases send their traffic.
#[derive(Debug)]
pub struct Endpoint {
    /// For messages: "loopback" or the peer as given.
    pub name: String,
    /// The service's TCP address.
    pub tcp: SocketAddr,
    /// The service's UDP reflector.
    pub udp: SocketAddr,
    /// True for a peer (traffic crosses a real link).
    pub remote: bool,
    /// The key that tags our hellos and datagrams (none for loopback).
    pub key: Option<ServiceKey>,
    /// Result of the one-time UDP reachability check.
    udp_checked: Option<Result<(), String>>,
    /// The in-process service, stopped when the fixture is dropped.
    _service: Option<NetService>,
}

/// The fixture: the endpoint, or why there is none.
type Slot = Result<Endpoint, String>;

impl Endpoint {
    /// The session's endpoint, started or checked on first use.
    pub fn get<'a>(
        ctx: &'a mut RunCtx,
        options: &NetOptions,
    ) -> Result<&'a mut Endpoint, BenchError> {
        let slot: &mut Slot = ctx.fixture("net.endpoint", |_| Ok(open(options)))?;
        slot.as_mut().map_err(|e| BenchError::failed(e.clone()))
    }

    /// Checks once that the reflector answers UDP; later calls repeat the
    /// verdict.
    pub fn check_udp(&mut self) -> Result<(), BenchError> {
        if self.udp_checked.is_none() {
            self.udp_checked = Some(udp_probe(self.udp, self.key.as_ref()).map_err(|e| {
                format!(
                    "no UDP answer from the net service at {} ({}): {e}; {}",
                    self.name,
                    self.udp,
                    if self.remote {
                        "a firewall may drop UDP on that port"
                    } else {
                        "the loopback reflector did not answer"
                    }
                )
            }));
        }
        match &self.udp_checked {
            Some(Err(e)) => Err(BenchError::failed(e.clone())),
            _ => Ok(()),
        }
    }
}

fn open(options: &NetOptions) -> Slot {
    match &options.peer {
        None => {
            let service = NetService::start(ServiceConfig::loopback())
                .map_err(|e| format!("cannot start the loopback net service: {e}"))?;
            let tcp = service
                .local_addrs()
                .first()
                .copied()
                .ok_or("the loopback net service has no address")?;
            Ok(Endpoint {
                name: "loopback".into(),
                tcp,
                udp: tcp,
                remote: false,
                key: None,
                udp_checked: None,
                _service: Some(service),
            })
        }
        Some(peer) => {
            let port = info(peer.addr, &peer.name, options.key.as_ref())?;
            Ok(Endpoint {
                name: peer.name.clone(),
                tcp: peer.addr,
                udp: SocketAddr::new(peer.addr.ip(), port),
                remote: true,
                key: options.key.clone(),
                udp_checked: None,
                _service: None,
            })
        }
    }
}

/// A connected TCP stream with bounded timeouts.
pub fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(s)
}

/// Reads the service's 16-byte reply and checks it is ours and OK.
pub fn read_reply(stream: &mut TcpStream, addr: SocketAddr) -> Result<Reply, String> {
    let mut b = [0u8; MSG_LEN];
    let mut have = 0;
    while have < MSG_LEN {
        match stream.read(&mut b[have..]) {
            Ok(0) if have == 0 => {
                return Err(format!(
                    "{addr} closed the connection without answering: not a sysgauge net service, or it refused us"
                ))
            }
            Ok(0) => {
                return Err(format!(
                    "{addr} answered, but not as a sysgauge net service (it sent {})",
                    proto::describe_foreign(&b[..have])
                ))
            }
            Ok(n) => have += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if would_block(&e) => {
                return Err(format!(
                    "{addr} did not answer within {} s: not a sysgauge net service?",
                    IO_TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(format!("reading the reply of {addr}: {e}")),
        }
    }
    match Reply::decode(&b) {
        Err(ReplyError::NotOurs(bytes)) => Err(format!(
            "{addr} answered, but not as a sysgauge net service (it sent {})",
            proto::describe_foreign(&bytes)
        )),
        Err(ReplyError::UnknownStatus(s)) => Err(format!(
            "the net service at {addr} answered with status {s}, which this sysgauge does not know: run the same sysgauge version on both ends"
        )),
        Ok(r) => match r.status {
            ReplyStatus::Ok => Ok(r),
            ReplyStatus::UnsupportedVersion => Err(format!(
                "the net service at {addr} speaks protocol version {}, this sysgauge speaks {}: run the same sysgauge version on both ends",
                r.version,
                proto::VERSION
            )),
            ReplyStatus::UnknownMode => Err(format!(
                "the net service at {addr} does not know this request: run the same sysgauge version on both ends"
            )),
            ReplyStatus::Busy => Err(format!(
                "the net service at {addr} refused the connection: peer busy (too many connections, in all or from this address); try again later or with fewer --streams"
            )),
            ReplyStatus::Unauthenticated => Err(format!(
                "the net service at {addr} refused our key: give the key it was started with (--peer-key or SYSGAUGE_NET_KEY), or none for a keyless loopback service"
            )),
        },
    }
}

/// Why a write to the service failed: when the service refused the
/// connection it said so before closing, and its reply ("peer busy") is a
/// better message than the broken pipe the write ran into.
pub fn write_failed(stream: &mut TcpStream, addr: SocketAddr, e: io::Error) -> String {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    match read_reply(stream, addr) {
        Err(refusal) if refusal.contains("refused") => refusal,
        _ => format!("sending to {addr}: {e}"),
    }
}

/// The info exchange: proves the peer is our service and returns its UDP
/// port.
pub fn info(addr: SocketAddr, name: &str, key: Option<&ServiceKey>) -> Result<u16, String> {
    let hint = format!(
        "start `sysgauge listen --serve --serve-bind ADDR` on {name} and let TCP and UDP port {} through its firewall",
        addr.port()
    );
    let mut s = connect(addr).map_err(|e| {
        format!("cannot connect to the sysgauge net service at {name} ({addr}): {e}; {hint}")
    })?;
    s.write_all(&Hello::new(Mode::Info, 0).encode(key))
        .map_err(|e| format!("cannot talk to {name} ({addr}): {e}; {hint}"))?;
    let r = read_reply(&mut s, addr)?;
    u16::try_from(r.value)
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| {
            format!(
                "the net service at {addr} announced UDP port {}, which is not a port",
                r.value
            )
        })
}

/// Sends one datagram to the reflector and waits for it to come back.
fn udp_probe(addr: SocketAddr, key: Option<&ServiceKey>) -> io::Result<()> {
    let s = connected_udp(addr)?;
    s.set_read_timeout(Some(Duration::from_millis(200)))?;
    let mut out = [0u8; 64];
    let mut inb = [0u8; 128];
    let deadline = std::time::Instant::now() + UDP_CHECK_TIMEOUT;
    let mut seq = 0xC0FFEE;
    while std::time::Instant::now() < deadline {
        seq += 1;
        proto::put_udp_header(&mut out, seq, key);
        s.send(&out)?;
        match s.recv(&mut inb) {
            Ok(n) if proto::udp_seq(&inb[..n]) == Some(seq) => return Ok(()),
            Ok(_) => {}
            Err(e) if would_block(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("nothing came back within {} s", UDP_CHECK_TIMEOUT.as_secs()),
    ))
}

/// A UDP socket on an ephemeral port of `addr`'s family, connected to it.
fn connected_udp(addr: SocketAddr) -> io::Result<UdpSocket> {
    let local: SocketAddr = if addr.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let s = UdpSocket::bind(local)?;
    s.connect(addr)?;
    Ok(s)
}

/// A UDP socket connected to `addr`, with a read timeout.
pub fn udp_socket(addr: SocketAddr, timeout: Duration) -> io::Result<UdpSocket> {
    let s = connected_udp(addr)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(s)
}
