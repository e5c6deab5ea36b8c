//! This machine's own addresses, and which of its processes listens on a
//! TCP port. `sysgauge listen` explains a bind to an address no interface
//! has (the kernel says only "Cannot assign requested address"), and
//! `sysgauge net --peer` recognises a peer on this machine: that listener's
//! CPU time is the far side of the measurement, not another process
//! disturbing it.
//!
//! Both read what the kernel says at the moment: getifaddrs(3) for the
//! addresses; /proc/net/tcp and tcp6 for the listening socket's inode, and
//! /proc/PID/fd for its owner (only the processes whose descriptors this
//! user may read: its own, or all as root).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use sysgauge_core::record::{Finding, Severity};

/// An address of one of this machine's interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceAddress {
    /// The interface's name (`lo`, `eth0`).
    pub interface: String,
    pub ip: IpAddr,
}

/// Every IPv4 and IPv6 address of this machine's interfaces, in the
/// kernel's order.
pub fn interface_addresses() -> std::io::Result<Vec<InterfaceAddress>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list that we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, which
        // stays valid until freeifaddrs; its name is a C string, and its
        // address (when not null) a sockaddr of the family it names, so
        // the casts below read only what the kernel wrote.
        unsafe {
            let ifa = &*cur;
            let addr = ifa.ifa_addr;
            let ip = if addr.is_null() {
                None
            } else {
                match i32::from((*addr).sa_family) {
                    libc::AF_INET => {
                        let a = &*(addr as *const libc::sockaddr_in);
                        Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr))))
                    }
                    libc::AF_INET6 => {
                        let a = &*(addr as *const libc::sockaddr_in6);
                        Some(IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr)))
                    }
                    _ => None,
                }
            };
            if let Some(ip) = ip {
                let interface = std::ffi::CStr::from_ptr(ifa.ifa_name)
                    .to_string_lossy()
                    .into_owned();
                out.push(InterfaceAddress { interface, ip });
            }
            cur = ifa.ifa_next;
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// Whether `ip` is this machine's: loopback (all of 127/8), the wildcard,
/// or an address of one of its interfaces. `None` when the interfaces
/// cannot be read.
pub fn is_local(ip: IpAddr) -> Option<bool> {
    let ip = canonical(ip);
    if ip.is_loopback() || ip.is_unspecified() {
        return Some(true);
    }
    let all = interface_addresses().ok()?;
    Some(all.iter().any(|a| a.ip == ip))
}

/// Why a bind to `addr` failed, when the address explains it: no
/// interface of this machine has it (with the machine's addresses), or it
/// is a link-local IPv6 address without its interface. `None` when neither
/// is so (or the interfaces cannot be read, so nothing better can be said).
pub fn bind_problem(addr: SocketAddr) -> Option<String> {
    let ip = addr.ip();
    let all = interface_addresses().ok()?;
    if !is_local(ip)? {
        return Some(format!(
            "not an address of this machine (no interface has it); its addresses: {} (`ip address` lists them)",
            list_by_interface(&all)
        ));
    }
    match addr {
        SocketAddr::V6(a) if a.scope_id() == 0 && is_link_local(a.ip()) => {
            let on: Vec<String> = all
                .iter()
                .filter(|i| i.ip == ip)
                .map(|i| format!("{ip}%{}", i.interface))
                .collect();
            Some(format!(
                "a link-local address needs its interface: {}",
                on.join(" or ")
            ))
        }
        _ => None,
    }
}

/// fe80::/10.
fn is_link_local(ip: &Ipv6Addr) -> bool {
    ip.segments()[0] & 0xffc0 == 0xfe80
}

/// `lo 127.0.0.1 ::1; eth0 192.0.2.2`: the addresses grouped by interface.
fn list_by_interface(all: &[InterfaceAddress]) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for a in all {
        let ip = a.ip.to_string();
        match groups.iter_mut().find(|(name, _)| *name == a.interface) {
            Some((_, ips)) => ips.push(ip),
            None => groups.push((a.interface.clone(), vec![ip])),
        }
    }
    groups
        .iter()
        .map(|(name, ips)| format!("{name} {}", ips.join(" ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// An IPv4-mapped IPv6 address as the IPv4 address it stands for.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// TCP's LISTEN state in /proc/net/tcp.
const TCP_LISTEN: &str = "0A";

/// The socket inodes in `table` (the text of /proc/net/tcp or tcp6) that
/// listen on `addr`: on its port, bound to its address or the wildcard.
pub fn listening_inodes(table: &str, addr: SocketAddr) -> Vec<u64> {
    let want = canonical(addr.ip());
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_ascii_whitespace().collect();
            let (local, state, inode) = (f.get(1)?, f.get(3)?, f.get(9)?);
            if *state != TCP_LISTEN {
                return None;
            }
            let (ip, port) = local.split_once(':')?;
            if u16::from_str_radix(port, 16).ok()? != addr.port() {
                return None;
            }
            let ip = canonical(parse_proc_ip(ip)?);
            (ip == want || ip.is_unspecified())
                .then(|| inode.parse().ok())
                .flatten()
        })
        .collect()
}

/// An address as /proc/net/tcp prints it: the bytes in network order read
/// as native 32-bit words, each printed as 8 hex digits.
fn parse_proc_ip(hex: &str) -> Option<IpAddr> {
    let words = |n: usize| -> Option<Vec<u8>> {
        if hex.len() != n * 8 {
            return None;
        }
        let mut bytes = Vec::with_capacity(n * 4);
        for i in 0..n {
            let w = u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok()?;
            bytes.extend_from_slice(&w.to_ne_bytes());
        }
        Some(bytes)
    };
    match hex.len() {
        8 => {
            let b: [u8; 4] = words(1)?.try_into().ok()?;
            Some(IpAddr::V4(Ipv4Addr::from(b)))
        }
        32 => {
            let b: [u8; 16] = words(4)?.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(b)))
        }
        _ => None,
    }
}

/// The processes (other than this one) that hold a TCP socket listening
/// on `addr` of this machine, as far as /proc lets this user see.
pub fn tcp_listener_pids(addr: SocketAddr) -> Vec<u32> {
    tcp_listener_pids_in(Path::new("/proc"), addr)
}

fn tcp_listener_pids_in(proc: &Path, addr: SocketAddr) -> Vec<u32> {
    let mut inodes = Vec::new();
    for table in ["net/tcp", "net/tcp6"] {
        if let Ok(t) = std::fs::read_to_string(proc.join(table)) {
            inodes.extend(listening_inodes(&t, addr));
        }
    }
    if inodes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let me = std::process::id();
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir(proc) else {
        return pids;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        // Another user's descriptors are unreadable: that process is
        // simply not found.
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| wanted.iter().any(|w| l.as_os_str() == w.as_str()))
        });
        if holds {
            pids.push(pid);
        }
    }
    pids
}

/// Finding: the `--peer` is a service on this machine.
pub const LOCAL_PEER: &str = "net-peer-on-this-machine";

/// When `peer` (the address of a `listen --serve`) is on this machine:
/// the processes that serve it (empty when none can be seen, e.g. another
/// user's), and the finding that says what that means for the run. `None`
/// for a peer elsewhere.
pub fn local_peer(name: &str, peer: SocketAddr) -> Option<(Vec<u32>, Finding)> {
    if !is_local(peer.ip())? {
        return None;
    }
    let pids = tcp_listener_pids(peer);
    let finding = if pids.is_empty() {
        Finding::new(
            LOCAL_PEER,
            Severity::Info,
            format!(
                "the peer {name} is on this machine, but the process serving it could not be found (another user's?): its CPU time counts as other processes' and can mark the cases disturbed"
            ),
        )
        .with_remedy("run `sysgauge listen --serve` as the same user, or measure against another machine")
    } else {
        let list = pids
            .iter()
            .map(|p| format!("pid {p}"))
            .collect::<Vec<_>>()
            .join(", ");
        Finding::new(
            LOCAL_PEER,
            Severity::Info,
            format!(
                "the peer {name} is on this machine ({list}): its CPU time is the far side of the measurement, kept as `peer_cpus`, not counted as other processes disturbing the cases; both ends share this machine's CPUs"
            ),
        )
        .with_remedy("run `sysgauge listen --serve --serve-bind ADDR` on another machine to measure a link")
    };
    Some((pids, finding))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/net")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn listening_sockets_are_found_by_address_and_port() {
        // A `listen --serve` on 127.0.0.1:26999 and [::1]:26999 with one
        // client connected, and other listeners (one on 0.0.0.0:2024).
        let v4 = fixture("proc-net-tcp.txt");
        let v6 = fixture("proc-net-tcp6.txt");
        let at = |s: &str| s.parse::<SocketAddr>().unwrap_or_else(|e| panic!("{e}"));
        // The connected sockets on the same port are not listeners.
        assert_eq!(listening_inodes(&v4, at("127.0.0.1:26999")), [14033873]);
        assert_eq!(listening_inodes(&v6, at("[::1]:26999")), [14033876]);
        assert!(listening_inodes(&v6, at("127.0.0.1:26999")).is_empty());
        assert!(listening_inodes(&v4, at("127.0.0.2:26999")).is_empty());
        assert!(listening_inodes(&v4, at("127.0.0.1:26998")).is_empty());
        // A wildcard listener serves every address of the machine.
        assert_eq!(listening_inodes(&v4, at("192.0.2.2:2024")), [672]);
        assert_eq!(listening_inodes(&v4, at("[::ffff:127.0.0.1]:2024")), [672]);
    }

    #[test]
    fn proc_addresses_parse() {
        assert_eq!(
            parse_proc_ip("0100007F"),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert_eq!(
            parse_proc_ip("00000000000000000000000001000000"),
            Some(IpAddr::V6(Ipv6Addr::LOCALHOST))
        );
        assert_eq!(parse_proc_ip("0100007"), None);
        assert_eq!(parse_proc_ip("ZZ00007F"), None);
    }

    #[test]
    fn this_machines_addresses_are_local_and_a_foreign_one_is_not() {
        let all = interface_addresses().unwrap_or_else(|e| panic!("{e}"));
        assert!(all.iter().any(|a| a.ip == IpAddr::V4(Ipv4Addr::LOCALHOST)));
        for a in &all {
            assert_eq!(is_local(a.ip), Some(true), "{a:?}");
        }
        let at = |s: &str| s.parse::<SocketAddr>().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bind_problem(at("127.0.0.1:1")), None);
        // TEST-NET-3: documentation only, on no real interface.
        let m = bind_problem(at("203.0.113.201:1")).unwrap_or_default();
        assert!(m.starts_with("not an address of this machine"), "{m}");
        assert!(
            m.contains("lo 127.0.0.1") && m.contains("ip address"),
            "{m}"
        );
        // A link-local address of this machine, given without its zone.
        if let Some(a) = all.iter().find(|a| match a.ip {
            IpAddr::V6(v6) => is_link_local(&v6),
            _ => false,
        }) {
            let m = bind_problem(SocketAddr::new(a.ip, 1)).unwrap_or_default();
            assert!(m.contains(&format!("{}%{}", a.ip, a.interface)), "{m}");
        }
    }

    #[test]
    fn a_listener_of_this_process_is_found_but_left_out() {
        // A listener of this process is left out (the caller wants other
        // processes); what matters is that the lookup finds the inode.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let addr = l.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let t = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        assert_eq!(listening_inodes(&t, addr).len(), 1);
        assert!(tcp_listener_pids(addr).is_empty());
    }
}
