//! Sockets, readiness polling, host resolution and cancellation.
//!
//! - Sockets are std `UdpSocket`s created through `socket2` so that IPv6
//!   sockets can be made IPv6-only before binding: a listener binds `0.0.0.0`
//!   and `::` on the same port side by side, as the reference does.
//! - One `poll(2)` call waits on every socket of a client or listener, with a
//!   bounded timeout so that cancellation and deadlines are noticed without
//!   a thread per socket.
//! - Host names resolve through the system resolver; IPv6 literals may carry
//!   a zone (`fe80::1%eth0` or `fe80::1%2`), turned into the socket address's
//!   scope ID.

use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, SocketAddrV6, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thiserror::Error;

/// Something that says when to stop: Ctrl-C in the CLI, a test's flag.
///
/// Implemented for `AtomicBool` and for any `Fn() -> bool`, so a caller with
/// its own token passes `&|| token.is_cancelled()`.
pub trait Cancel {
    /// True once the work should stop.
    fn is_cancelled(&self) -> bool;
}

impl Cancel for AtomicBool {
    fn is_cancelled(&self) -> bool {
        self.load(Ordering::Relaxed)
    }
}

impl<F: Fn() -> bool> Cancel for F {
    fn is_cancelled(&self) -> bool {
        self()
    }
}

/// Which address family to use for a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AddressFamily {
    /// Whatever the resolver lists first.
    #[default]
    Any,
    /// IPv4 only (`-4`).
    V4,
    /// IPv6 only (`-6`).
    V6,
}

impl AddressFamily {
    fn accepts(self, addr: &SocketAddr) -> bool {
        match self {
            AddressFamily::Any => true,
            AddressFamily::V4 => addr.is_ipv4(),
            AddressFamily::V6 => addr.is_ipv6(),
        }
    }
}

/// A host name or address that could not be turned into a socket address.
#[derive(Debug, Error)]
pub enum ResolveError {
    /// The resolver failed.
    #[error("cannot resolve {host:?}: {source}")]
    Lookup {
        /// The name given.
        host: String,
        /// Resolver error.
        #[source]
        source: io::Error,
    },
    /// The resolver answered, but with no address of the wanted family.
    #[error("{host:?} has no {family:?} address")]
    NoAddress {
        /// The name given.
        host: String,
        /// The family asked for.
        family: AddressFamily,
    },
    /// `addr%zone` with a zone that is neither a number nor an interface.
    #[error(
        "unknown IPv6 zone {zone:?} in {host:?}: give an interface name (see `ip link`) or index"
    )]
    BadZone {
        /// The name given.
        host: String,
        /// The zone part.
        zone: String,
    },
}

/// Resolves `host` (name, IPv4/IPv6 literal, `[v6]`, or `v6%zone`) to a
/// socket address on `port`.
pub fn resolve(host: &str, port: u16, family: AddressFamily) -> Result<SocketAddr, ResolveError> {
    let trimmed = host.trim();
    let bare = trimmed
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(trimmed);
    if let Some((addr, zone)) = bare.split_once('%') {
        if let Ok(v6) = addr.parse::<Ipv6Addr>() {
            let scope = scope_id(zone).ok_or_else(|| ResolveError::BadZone {
                host: host.to_string(),
                zone: zone.to_string(),
            })?;
            let sa = SocketAddr::V6(SocketAddrV6::new(v6, port, 0, scope));
            return check_family(host, sa, family);
        }
    }
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return check_family(host, SocketAddr::new(ip, port), family);
    }
    let addrs = (bare, port)
        .to_socket_addrs()
        .map_err(|source| ResolveError::Lookup {
            host: host.to_string(),
            source,
        })?;
    let mut found = None;
    for a in addrs {
        if family.accepts(&a) {
            found = Some(a);
            break;
        }
    }
    found.ok_or(ResolveError::NoAddress {
        host: host.to_string(),
        family,
    })
}

/// Every address `host` stands for, of the wanted family, in the
/// resolver's order without repeats: a literal is one address; a name is
/// all of its A and AAAA records (as the reference binds every address a
/// listen name resolves to).
pub fn resolve_all(
    host: &str,
    port: u16,
    family: AddressFamily,
) -> Result<Vec<SocketAddr>, ResolveError> {
    let trimmed = host.trim();
    let bare = trimmed
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(trimmed);
    if bare.contains('%') || bare.parse::<IpAddr>().is_ok() {
        return resolve(host, port, family).map(|a| vec![a]);
    }
    let addrs = (bare, port)
        .to_socket_addrs()
        .map_err(|source| ResolveError::Lookup {
            host: host.to_string(),
            source,
        })?;
    let mut out: Vec<SocketAddr> = Vec::new();
    for a in addrs {
        if family.accepts(&a) && !out.contains(&a) {
            out.push(a);
        }
    }
    if out.is_empty() {
        return Err(ResolveError::NoAddress {
            host: host.to_string(),
            family,
        });
    }
    Ok(out)
}

fn check_family(
    host: &str,
    addr: SocketAddr,
    family: AddressFamily,
) -> Result<SocketAddr, ResolveError> {
    if family.accepts(&addr) {
        Ok(addr)
    } else {
        Err(ResolveError::NoAddress {
            host: host.to_string(),
            family,
        })
    }
}

/// A zone as a numeric index or an interface name.
fn scope_id(zone: &str) -> Option<u32> {
    if let Ok(n) = zone.parse::<u32>() {
        return Some(n);
    }
    let name = std::ffi::CString::new(zone).ok()?;
    // SAFETY: `name` is a valid NUL-terminated string that outlives the call;
    // if_nametoindex only reads it and returns 0 for unknown names.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    (index != 0).then_some(index)
}

/// Creates a non-blocking UDP socket bound to `addr`; IPv6 sockets are
/// IPv6-only so that IPv4 and IPv6 wildcards can share a port.
pub(crate) fn bind_udp(addr: SocketAddr) -> io::Result<UdpSocket> {
    let domain = if addr.is_ipv4() {
        Domain::IPV4
    } else {
        Domain::IPV6
    };
    let socket = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Waits until one of the sockets is readable or `timeout` passes. On return
/// `fds[i].revents` says which are ready; EINTR counts as a timeout.
pub(crate) fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<usize> {
    // Round up so a sub-millisecond wait does not turn into a busy loop.
    let ms = timeout.as_micros().div_ceil(1000);
    let ms = libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX);
    let nfds = libc::nfds_t::try_from(fds.len()).unwrap_or(libc::nfds_t::MAX);
    // SAFETY: `fds` is a valid, exclusively borrowed slice of `nfds` pollfd
    // structs for the duration of the call; poll writes only `revents`.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), nfds, ms) };
    if n < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(err);
    }
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Like [`poll`], but first checks the sockets without sleeping for up to
/// `spin` (bounded by `timeout`). While packets flow back and forth one at a
/// time (a flood ping on loopback), sleeping in `poll` lets the CPU halt and
/// every packet then pays the wake-up of an idle CPU (tens of microseconds
/// in a virtual machine), which would set the rate instead of the network
/// stack. The spin costs CPU only while traffic flows: callers pass a zero
/// `spin` when they have been idle.
pub(crate) fn poll_spin(
    fds: &mut [libc::pollfd],
    spin: Duration,
    timeout: Duration,
) -> io::Result<usize> {
    let start = std::time::Instant::now();
    let spin = spin.min(timeout);
    while start.elapsed() < spin {
        let n = poll(fds, Duration::ZERO)?;
        if n > 0 {
            return Ok(n);
        }
        std::hint::spin_loop();
    }
    poll(fds, timeout.saturating_sub(start.elapsed()))
}

/// A pollfd waiting for input on `socket`.
pub(crate) fn pollfd(socket: &UdpSocket) -> libc::pollfd {
    let fd: RawFd = socket.as_raw_fd();
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// True if poll reported the descriptor readable (or in error, which a read
/// then reports).
pub(crate) fn ready(fd: &libc::pollfd) -> bool {
    fd.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_spin_returns_at_once_when_ready_and_times_out_otherwise() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut fds = [pollfd(&a)];
        let t = std::time::Instant::now();
        let n = poll_spin(
            &mut fds,
            Duration::from_millis(2),
            Duration::from_millis(20),
        )
        .unwrap();
        assert_eq!(n, 0);
        assert!(t.elapsed() >= Duration::from_millis(20));
        let to = a.local_addr().unwrap();
        b.send_to(b"x", to).unwrap();
        fds[0].revents = 0;
        let n = poll_spin(&mut fds, Duration::from_secs(1), Duration::from_secs(5)).unwrap();
        assert_eq!(n, 1);
        assert!(ready(&fds[0]));
    }

    #[test]
    fn resolves_literals_and_zones() {
        let v4 = resolve("127.0.0.1", 15998, AddressFamily::Any).expect("literal");
        assert_eq!(v4, "127.0.0.1:15998".parse().expect("addr"));
        let v6 = resolve("[::1]", 1, AddressFamily::V6).expect("literal");
        assert_eq!(v6, "[::1]:1".parse().expect("addr"));
        match resolve("fe80::1%lo", 7, AddressFamily::Any).expect("zone by name") {
            SocketAddr::V6(sa) => assert_ne!(sa.scope_id(), 0),
            other => panic!("not v6: {other}"),
        }
        match resolve("fe80::1%3", 7, AddressFamily::Any).expect("zone by index") {
            SocketAddr::V6(sa) => assert_eq!(sa.scope_id(), 3),
            other => panic!("not v6: {other}"),
        }
        assert!(matches!(
            resolve("fe80::1%nosuchif0", 7, AddressFamily::Any),
            Err(ResolveError::BadZone { .. })
        ));
        assert!(matches!(
            resolve("127.0.0.1", 7, AddressFamily::V6),
            Err(ResolveError::NoAddress { .. })
        ));
        assert!(resolve("localhost", 7, AddressFamily::Any).is_ok());
    }

    #[test]
    fn resolve_all_gives_every_address_once() {
        let one = resolve_all("127.0.0.1", 9, AddressFamily::Any).expect("literal");
        assert_eq!(one, vec!["127.0.0.1:9".parse().expect("addr")]);
        let zoned = resolve_all("fe80::1%lo", 9, AddressFamily::Any).expect("zone");
        assert_eq!(zoned.len(), 1);
        let local = resolve_all("localhost", 9, AddressFamily::V4).expect("name");
        assert!(
            local.iter().all(|a| a.is_ipv4() && a.port() == 9),
            "{local:?}"
        );
        let mut unique = local.clone();
        unique.dedup();
        assert_eq!(unique, local);
        assert!(matches!(
            resolve_all("127.0.0.1", 9, AddressFamily::V6),
            Err(ResolveError::NoAddress { .. })
        ));
    }

    #[test]
    fn cancel_impls() {
        let flag = AtomicBool::new(false);
        assert!(!flag.is_cancelled());
        flag.store(true, Ordering::SeqCst);
        assert!(flag.is_cancelled());
        assert!((|| true).is_cancelled());
    }

    #[test]
    fn v4_and_v6_wildcards_share_a_port() {
        let v4 = bind_udp("0.0.0.0:0".parse().expect("addr")).expect("bind v4");
        let port = v4.local_addr().expect("addr").port();
        let v6 = bind_udp(SocketAddr::new("::".parse().expect("addr"), port));
        assert!(v6.is_ok(), "IPv6-only socket must not clash: {v6:?}");
    }
}
