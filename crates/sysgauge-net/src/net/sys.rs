//! Thin wrappers over the Linux calls the net family needs and std does not
//! offer: `recvmmsg`/`sendmmsg` (many UDP datagrams per system call),
//! `poll` on one descriptor with a timeout, `TCP_DEFER_ACCEPT` and
//! `setsockopt` for the options socket2 does not wrap.
//!
//! Batching is what lets one thread move hundreds of thousands of small
//! datagrams per second: with one system call per datagram the packet-rate
//! test would measure the system-call entry cost more than the UDP stack.
//! The message headers are built on the stack for each call from buffers
//! the caller owns, so nothing is allocated per call and the raw pointers
//! never outlive the borrow they come from.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// Most datagrams moved per system call.
pub const BATCH: usize = 32;

/// Buffers for a batch of datagrams: `BATCH` slots of `slot` bytes, their
/// lengths, and (for unconnected sockets) their peers' addresses.
pub struct Batch {
    buf: Vec<u8>,
    slot: usize,
    pub lens: [usize; BATCH],
    addrs: [libc::sockaddr_storage; BATCH],
    addr_lens: [libc::socklen_t; BATCH],
}

fn zeroed_storage() -> libc::sockaddr_storage {
    // SAFETY: sockaddr_storage is a plain C struct for which all-zero bytes
    // are a valid (AF_UNSPEC) value.
    unsafe { std::mem::zeroed() }
}

impl Batch {
    /// Slots of `slot` bytes each, zero-filled (pages touched now, not
    /// during a measurement).
    pub fn new(slot: usize) -> Batch {
        let slot = slot.max(1);
        Batch {
            buf: vec![0u8; slot * BATCH],
            slot,
            lens: [0; BATCH],
            addrs: [zeroed_storage(); BATCH],
            addr_lens: [0; BATCH],
        }
    }

    /// Slot `i` (its full capacity).
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let s = self.slot;
        let start = (i % BATCH) * s;
        &mut self.buf[start..start + s]
    }

    /// The received bytes of slot `i`.
    pub fn received(&self, i: usize) -> &[u8] {
        let s = self.slot;
        let start = (i % BATCH) * s;
        let len = self.lens[i % BATCH].min(s);
        &self.buf[start..start + len]
    }

    /// The sender's address of datagram `i` of the last `recv(.., true)`.
    pub fn source_ip(&self, i: usize) -> Option<std::net::IpAddr> {
        let st = &self.addrs[i % BATCH];
        let len = self.addr_lens[i % BATCH] as usize;
        match i32::from(st.ss_family) {
            libc::AF_INET if len >= std::mem::size_of::<libc::sockaddr_in>() => {
                // SAFETY: the kernel wrote a sockaddr_in (family AF_INET,
                // length checked) into this sockaddr_storage, which is large
                // and aligned enough for it.
                let sin =
                    unsafe { &*(st as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
                Some(std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)).into())
            }
            libc::AF_INET6 if len >= std::mem::size_of::<libc::sockaddr_in6>() => {
                // SAFETY: as above, for a sockaddr_in6.
                let sin6 =
                    unsafe { &*(st as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
                Some(std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr).into())
            }
            _ => None,
        }
    }

    /// Moves datagram `from` (bytes, length, sender) into slot `to`.
    pub fn move_slot(&mut self, from: usize, to: usize) {
        let (from, to) = (from % BATCH, to % BATCH);
        let s = self.slot;
        let len = self.lens[from].min(s);
        self.buf.copy_within(from * s..from * s + len, to * s);
        self.lens[to] = len;
        self.addrs[to] = self.addrs[from];
        self.addr_lens[to] = self.addr_lens[from];
    }

    /// Receives up to `BATCH` datagrams: blocks (up to the socket's read
    /// timeout) for the first, then takes what is already queued. With
    /// `with_addrs` the senders' addresses are kept for [`Batch::send`].
    /// Returns how many arrived; a timeout is `WouldBlock`/`TimedOut`.
    pub fn recv(&mut self, socket: &impl AsRawFd, with_addrs: bool) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        // SAFETY: iovec and mmsghdr are plain C structs; all-zero is a valid
        // value (null pointers, zero lengths) that is filled in below.
        let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        let slot = self.slot;
        let base = self.buf.as_mut_ptr();
        for i in 0..BATCH {
            // SAFETY: i * slot + slot <= buf.len() (the buffer holds BATCH
            // slots), so the pointer stays inside the allocation.
            iov[i].iov_base = unsafe { base.add(i * slot) }.cast();
            iov[i].iov_len = slot;
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            if with_addrs {
                self.addr_lens[i] =
                    std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                msgs[i].msg_hdr.msg_name =
                    (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
                msgs[i].msg_hdr.msg_namelen = self.addr_lens[i];
            }
        }
        let n = loop {
            // SAFETY: `msgs` holds BATCH valid headers whose iovecs point
            // into `self.buf` and whose names point into `self.addrs`, all
            // exclusively borrowed for the duration of the call; the kernel
            // writes at most `iov_len`/`msg_namelen` bytes into each.
            let r = unsafe {
                libc::recvmmsg(
                    fd,
                    msgs.as_mut_ptr(),
                    BATCH as libc::c_uint,
                    // glibc types the flags `int`, musl `unsigned int`.
                    libc::MSG_WAITFORONE as _,
                    std::ptr::null_mut(),
                )
            };
            if r >= 0 {
                break r as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        for (i, m) in msgs.iter().enumerate().take(n) {
            self.lens[i] = m.msg_len as usize;
            if with_addrs {
                self.addr_lens[i] = m.msg_hdr.msg_namelen;
            }
        }
        Ok(n)
    }

    /// Sends slots `0..count` with lengths `lens`, to the addresses from the
    /// last `recv(.., true)` when `to_senders`, else on the connected
    /// socket. Returns how many were sent (fewer only on error after some).
    pub fn send(
        &mut self,
        socket: &impl AsRawFd,
        count: usize,
        to_senders: bool,
    ) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        let count = count.min(BATCH);
        // SAFETY: plain C structs; all-zero is valid and filled in below.
        let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        let slot = self.slot;
        let base = self.buf.as_mut_ptr();
        for i in 0..count {
            // SAFETY: inside the buffer of BATCH slots, as in `recv`.
            iov[i].iov_base = unsafe { base.add(i * slot) }.cast();
            iov[i].iov_len = self.lens[i].min(slot);
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            if to_senders {
                msgs[i].msg_hdr.msg_name =
                    (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
                msgs[i].msg_hdr.msg_namelen = self.addr_lens[i];
            }
        }
        let mut done = 0;
        while done < count {
            // SAFETY: headers done..count are valid and point into buffers
            // exclusively borrowed for the call; the kernel only reads them.
            let r = unsafe {
                libc::sendmmsg(
                    fd,
                    msgs.as_mut_ptr().add(done),
                    (count - done) as libc::c_uint,
                    0,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                if done > 0 {
                    return Ok(done);
                }
                return Err(e);
            }
            if r == 0 {
                break;
            }
            done += r as usize;
        }
        Ok(done)
    }
}

/// Waits until `fd` is readable or `timeout` passes; true if readable (or
/// in error, which the next read reports). EINTR counts as not ready.
pub fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, exclusively borrowed for the call.
    let r = unsafe { libc::poll(&mut pfd, 1, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(r > 0)
}

/// Whether a socket call gave up because its timeout ran out (a receive
/// timeout reports `WouldBlock` or `TimedOut`, depending on the call).
pub fn would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Makes the kernel hand a connection to `accept` only once its first data
/// has arrived (or after `seconds`), so the accepting thread can read the
/// hello without blocking.
pub fn set_defer_accept(fd: RawFd, seconds: u32) -> io::Result<()> {
    let v = libc::c_int::try_from(seconds).unwrap_or(libc::c_int::MAX);
    set_option(fd, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT, &v)
}

/// `setsockopt` with `value` as the option's bytes. Safe to offer: the
/// kernel only reads the value, and checks every pointer inside it (a
/// filter program's) as it copies from user memory.
pub fn set_option<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    // SAFETY: a pointer to a T that lives for the call, with its exact
    // size; the kernel reads it and writes nothing back.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    #[test]
    fn batch_round_trip_on_loopback() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b_addr = b.local_addr().unwrap();
        a.connect(b_addr).unwrap();
        b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut out = Batch::new(100);
        for i in 0..5 {
            out.slot_mut(i)[0] = i as u8 + 1;
            out.lens[i] = 10 + i;
        }
        assert_eq!(out.send(&a, 5, false).unwrap(), 5);
        let mut got = 0;
        let mut inb = Batch::new(100);
        let mut seen = Vec::new();
        while got < 5 {
            let n = inb.recv(&b, true).unwrap();
            for i in 0..n {
                seen.push((inb.received(i)[0], inb.received(i).len()));
            }
            // Echo them back to the sender address.
            assert_eq!(inb.send(&b, n, true).unwrap(), n);
            got += n;
        }
        seen.sort();
        assert_eq!(seen, vec![(1, 10), (2, 11), (3, 12), (4, 13), (5, 14)]);
        a.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut back = 0;
        while back < 5 {
            back += out.recv(&a, false).unwrap();
        }
        assert!(wait_readable(a.as_raw_fd(), Duration::from_millis(1)).is_ok());
    }
}
