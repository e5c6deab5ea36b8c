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
    let bare = bare(host);
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
    let addrs = lookup(host, bare, port)?;
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
    let bare = bare(host);
    if bare.contains('%') || bare.parse::<IpAddr>().is_ok() {
        return resolve(host, port, family).map(|a| vec![a]);
    }
    let addrs = lookup(host, bare, port)?;
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

/// `host` without surrounding white space and IPv6 brackets.
fn bare(host: &str) -> &str {
    let trimmed = host.trim();
    trimmed
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(trimmed)
}

/// What the system's resolver says `bare` (a name) stands for on `port`;
/// `host`, as given, names it in the error.
fn lookup(
    host: &str,
    bare: &str,
    port: u16,
) -> Result<std::vec::IntoIter<SocketAddr>, ResolveError> {
    (bare, port)
        .to_socket_addrs()
        .map_err(|source| ResolveError::Lookup {
            host: host.to_string(),
            source,
        })
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

/// Datagrams read by one `recvmmsg(2)`: one system call drains what a
/// flood has queued, instead of a `recv` per datagram and a last one that
/// finds the socket empty.
#[derive(Default)]
pub(crate) struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
    addrs: Vec<libc::sockaddr_storage>,
    count: usize,
}

impl RecvBatch {
    /// Room for `slots` datagrams of up to `size` bytes each. Every buffer
    /// is allocated (and zeroed) here, never while receiving.
    pub(crate) fn new(slots: usize, size: usize) -> RecvBatch {
        let slots = slots.max(1);
        RecvBatch {
            bufs: (0..slots).map(|_| vec![0; size]).collect(),
            lens: vec![0; slots],
            // SAFETY: sockaddr_storage is plain data; all zeroes is valid.
            addrs: vec![unsafe { std::mem::zeroed() }; slots],
            count: 0,
        }
    }

    /// Most datagrams one call reads.
    pub(crate) fn capacity(&self) -> usize {
        self.bufs.len()
    }

    /// Datagram `i` of the last read: its bytes and its source address
    /// (`None` if the kernel gave none of IPv4 or IPv6).
    pub(crate) fn get(&self, i: usize) -> Option<(&[u8], Option<SocketAddr>)> {
        if i >= self.count {
            return None;
        }
        let buf = self.bufs.get(i)?;
        let len = (*self.lens.get(i)?).min(buf.len());
        Some((&buf[..len], self.addrs.get(i).and_then(to_socket_addr)))
    }

    /// Reads up to `max` datagrams (at most [`RecvBatch::capacity`])
    /// without waiting. Returns how many; `WouldBlock` when none is queued.
    /// Like `recv`, a datagram longer than its buffer is cut to it.
    pub(crate) fn recv(&mut self, socket: &UdpSocket, max: usize) -> io::Result<usize> {
        self.count = 0;
        let n = self.bufs.len().min(max.max(1));
        let mut iovs: Vec<libc::iovec> = Vec::new();
        let mut hdrs: Vec<libc::mmsghdr> = Vec::new();
        // Built per call, so that no raw pointer into `self` outlives the
        // call (and the batch stays `Send`): two small allocations per
        // batch, not per datagram.
        iovs.reserve_exact(n);
        hdrs.reserve_exact(n);
        for buf in self.bufs.iter_mut().take(n) {
            iovs.push(libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            });
        }
        for (iov, addr) in iovs.iter_mut().zip(self.addrs.iter_mut()) {
            // SAFETY: msghdr is plain data; all zeroes is valid.
            let mut hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
            hdr.msg_hdr.msg_name = (addr as *mut libc::sockaddr_storage).cast();
            hdr.msg_hdr.msg_namelen = SOCKADDR_STORAGE_LEN;
            hdr.msg_hdr.msg_iov = iov;
            hdr.msg_hdr.msg_iovlen = 1;
            hdrs.push(hdr);
        }
        let vlen = libc::c_uint::try_from(hdrs.len()).unwrap_or(libc::c_uint::MAX);
        // SAFETY: every header points at a live, exclusively borrowed buffer
        // and address of `self` and at an iovec in `iovs`, all valid for the
        // whole call; the kernel writes at most iov_len / msg_namelen bytes.
        let r = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                hdrs.as_mut_ptr(),
                vlen,
                libc::MSG_DONTWAIT as _,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = usize::try_from(r).unwrap_or(0).min(n);
        for (len, hdr) in self.lens.iter_mut().zip(&hdrs).take(got) {
            *len = hdr.msg_len as usize;
        }
        self.count = got;
        Ok(got)
    }
}

/// Datagrams waiting for one `sendmmsg(2)`: encoded into slots that are
/// reused from batch to batch, each with its destination (or none on a
/// connected socket).
#[derive(Default)]
pub(crate) struct SendBatch {
    bufs: Vec<Vec<u8>>,
    addrs: Vec<Option<SocketAddr>>,
    count: usize,
}

impl SendBatch {
    /// Room for `slots` datagrams of up to `size` bytes before a flush.
    pub(crate) fn new(slots: usize, size: usize) -> SendBatch {
        let slots = slots.max(1);
        SendBatch {
            bufs: (0..slots).map(|_| Vec::with_capacity(size)).collect(),
            addrs: vec![None; slots],
            count: 0,
        }
    }

    /// Datagrams queued.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// True when another datagram would not fit: flush first.
    pub(crate) fn is_full(&self) -> bool {
        self.count >= self.bufs.len()
    }

    /// The next slot's buffer, to encode a datagram for `to` into; the
    /// datagram is queued by [`SendBatch::commit`]. `None` when full.
    pub(crate) fn slot(&mut self) -> Option<&mut Vec<u8>> {
        self.bufs.get_mut(self.count)
    }

    /// Queues the datagram just encoded into [`SendBatch::slot`].
    pub(crate) fn commit(&mut self, to: Option<SocketAddr>) {
        if let Some(a) = self.addrs.get_mut(self.count) {
            *a = to;
            self.count += 1;
        }
    }

    /// Sends every queued datagram, in order, with as few system calls as
    /// the kernel allows; a datagram the kernel refuses is skipped and
    /// reported to `on_error` with its index, as a `send` of each would.
    /// The batch is empty afterwards.
    pub(crate) fn flush(&mut self, socket: &UdpSocket, on_error: &mut dyn FnMut(usize, io::Error)) {
        let n = self.count;
        self.count = 0;
        if n == 0 {
            return;
        }
        let mut names: Vec<libc::sockaddr_storage> = Vec::with_capacity(n);
        let mut name_lens: Vec<libc::socklen_t> = Vec::with_capacity(n);
        for a in self.addrs.iter().take(n) {
            let (storage, len) = a.map_or_else(
                // SAFETY: sockaddr_storage is plain data; zeroes are valid.
                || (unsafe { std::mem::zeroed() }, 0),
                |a| from_socket_addr(&a),
            );
            names.push(storage);
            name_lens.push(len);
        }
        let mut iovs: Vec<libc::iovec> = self
            .bufs
            .iter_mut()
            .take(n)
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(n);
        for ((iov, name), len) in iovs.iter_mut().zip(names.iter_mut()).zip(&name_lens) {
            // SAFETY: msghdr is plain data; all zeroes is valid.
            let mut hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
            if *len > 0 {
                hdr.msg_hdr.msg_name = (name as *mut libc::sockaddr_storage).cast();
                hdr.msg_hdr.msg_namelen = *len;
            }
            hdr.msg_hdr.msg_iov = iov;
            hdr.msg_hdr.msg_iovlen = 1;
            hdrs.push(hdr);
        }
        let mut done = 0;
        while done < n {
            let rest = &mut hdrs[done..];
            let vlen = libc::c_uint::try_from(rest.len()).unwrap_or(libc::c_uint::MAX);
            // SAFETY: each header points at a buffer, an iovec and an
            // address that live until the end of this function and are not
            // otherwise borrowed; the kernel only reads them (and writes
            // msg_len).
            let r = unsafe { libc::sendmmsg(socket.as_raw_fd(), rest.as_mut_ptr(), vlen, 0) };
            if r < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // The first remaining datagram failed: report it, go on
                // with the next, as separate sends would.
                on_error(done, err);
                done += 1;
            } else if r == 0 {
                // Not seen in practice; never loop on it.
                on_error(done, io::Error::other("sendmmsg sent nothing"));
                done += 1;
            } else {
                done += usize::try_from(r).unwrap_or(0);
            }
        }
    }
}

const SOCKADDR_STORAGE_LEN: libc::socklen_t =
    std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;

fn to_socket_addr(s: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(s.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in, which
            // it is large and aligned enough for.
            let a = unsafe { &*(s as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be(a.sin_port)))
        }
        libc::AF_INET6 => {
            // SAFETY: as above, for sockaddr_in6.
            let a = unsafe { &*(s as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

fn from_socket_addr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    let sa = socket2::SockAddr::from(*addr);
    // SAFETY: both are plain data; SockAddr's storage is a full
    // sockaddr_storage and `len` says how much of it is the address.
    let storage: libc::sockaddr_storage =
        unsafe { std::ptr::read(sa.as_ptr().cast::<libc::sockaddr_storage>()) };
    (storage, sa.len())
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
    fn poll_times_out_when_idle_and_returns_when_ready() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut fds = [pollfd(&a)];
        let t = std::time::Instant::now();
        let n = poll(&mut fds, Duration::from_millis(20)).unwrap();
        assert_eq!(n, 0);
        assert!(t.elapsed() >= Duration::from_millis(20));
        let to = a.local_addr().unwrap();
        b.send_to(b"x", to).unwrap();
        fds[0].revents = 0;
        let n = poll(&mut fds, Duration::from_secs(5)).unwrap();
        assert_eq!(n, 1);
        assert!(ready(&fds[0]));
    }

    #[test]
    fn batches_carry_datagrams_and_sources_both_ways() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.set_nonblocking(true).unwrap();
        let (to_a, from_b) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut out = SendBatch::new(4, 64);
        for text in [&b"one"[..], b"two", b"three"] {
            let slot = out.slot().unwrap();
            slot.clear();
            slot.extend_from_slice(text);
            out.commit(Some(to_a));
        }
        assert_eq!(out.len(), 3);
        out.flush(&b, &mut |i, e| panic!("datagram {i}: {e}"));
        assert_eq!(out.len(), 0);
        let mut batch = RecvBatch::new(2, 4);
        let mut got = Vec::new();
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while got.len() < 3 && std::time::Instant::now() < end {
            match batch.recv(&a, 8) {
                Ok(n) => {
                    assert!(n <= 2);
                    for i in 0..n {
                        let (bytes, src) = batch.get(i).unwrap();
                        assert_eq!(src, Some(from_b));
                        got.push(bytes.to_vec());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(e) => panic!("{e}"),
            }
        }
        // A datagram longer than its buffer is cut, as `recv` cuts it.
        assert_eq!(
            got,
            vec![b"one".to_vec(), b"two".to_vec(), b"thre".to_vec()]
        );
        assert!(batch
            .recv(&a, 8)
            .is_err_and(|e| e.kind() == io::ErrorKind::WouldBlock));
    }

    #[test]
    fn addresses_convert_both_ways() {
        let link_local = SocketAddrV6::new("fe80::1".parse().unwrap(), 7, 0, 2);
        for addr in [
            "10.1.2.3:15998".parse().unwrap(),
            SocketAddr::V6(link_local),
            "[2001:db8::5]:65535".parse().unwrap(),
        ] {
            let (storage, _) = from_socket_addr(&addr);
            assert_eq!(to_socket_addr(&storage), Some(addr));
        }
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
