//! Two network namespaces joined by a veth pair: a real (virtual) link for
//! tests that must not run over loopback (packet loss in one direction, a
//! spoofed-source flood). Needs root and `ip` (iproute2).
//!
//! Each link gets fixed MAC addresses and permanent neighbour entries, so
//! ARP and neighbour discovery are out of the picture: a first solicitation
//! lost while the link comes up is only retried after a second, which would
//! hold back every early packet of a one-second test. The IPv6 link-local
//! addresses are added with `nodad` for the same reason. Names are unique
//! per process and pair, and the namespaces (with the veth) are deleted on
//! drop, on every exit path.

use crate::system::run_checked;
use std::fs::File;
use std::os::fd::AsFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";
/// The link-local addresses of the two ends (without their zone).
pub const LINK_LOCAL_A: &str = "fe80::a";
pub const LINK_LOCAL_B: &str = "fe80::b";

/// Namespaces `a` and `b` joined by a veth pair (`if_a` in `a`, `if_b` in
/// `b`), both ends up with carrier, IPv4 `v4_a`/`v4_b` in a /24 and the
/// link-local addresses [`LINK_LOCAL_A`]/[`LINK_LOCAL_B`]; deleted on drop.
#[derive(Debug)]
pub struct VethPair {
    pub a: String,
    pub b: String,
    pub if_a: String,
    pub if_b: String,
    pub v4_a: String,
    pub v4_b: String,
}

impl VethPair {
    /// A new pair whose names carry `tag` (two letters naming the test
    /// suite, so leftovers can be traced) and whose IPv4 addresses are in
    /// `10.<net>.<n>.0/24`, `n` counting the pairs of this process.
    pub fn new(tag: &str, net: u8) -> VethPair {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let pair = VethPair {
            a: format!("sg{tag}-{pid}-{n}-a"),
            b: format!("sg{tag}-{pid}-{n}-b"),
            // Interface names are limited to 15 bytes.
            if_a: format!("sg{tag}{}{n}a", pid % 100_000),
            if_b: format!("sg{tag}{}{n}b", pid % 100_000),
            v4_a: format!("10.{net}.{}.1", n % 250),
            v4_b: format!("10.{net}.{}.2", n % 250),
        };
        // From here on, Drop cleans up whatever was created.
        run_checked(&["ip", "netns", "add", &pair.a]);
        run_checked(&["ip", "netns", "add", &pair.b]);
        run_checked(&[
            "ip", "link", "add", &pair.if_a, "address", MAC_A, "netns", &pair.a, "type", "veth",
            "peer", "name", &pair.if_b, "address", MAC_B, "netns", &pair.b,
        ]);
        let ends = [
            (
                &pair.a,
                &pair.if_a,
                &pair.v4_a,
                LINK_LOCAL_A,
                &pair.v4_b,
                LINK_LOCAL_B,
                MAC_B,
            ),
            (
                &pair.b,
                &pair.if_b,
                &pair.v4_b,
                LINK_LOCAL_B,
                &pair.v4_a,
                LINK_LOCAL_A,
                MAC_A,
            ),
        ];
        for (ns, ifname, v4, ll, peer_v4, peer_ll, peer_mac) in ends {
            let v4 = format!("{v4}/24");
            run_checked(&["ip", "-n", ns, "addr", "add", &v4, "dev", ifname]);
            let ll = format!("{ll}/64");
            run_checked(&[
                "ip", "-n", ns, "-6", "addr", "add", &ll, "dev", ifname, "nodad",
            ]);
            run_checked(&["ip", "-n", ns, "link", "set", ifname, "up"]);
            run_checked(&["ip", "-n", ns, "link", "set", "lo", "up"]);
            for peer in [peer_v4.as_str(), peer_ll] {
                run_checked(&[
                    "ip",
                    "-n",
                    ns,
                    "neigh",
                    "replace",
                    peer,
                    "lladdr",
                    peer_mac,
                    "dev",
                    ifname,
                    "nud",
                    "permanent",
                ]);
            }
        }
        wait_lower_up(&pair.a, &pair.if_a);
        wait_lower_up(&pair.b, &pair.if_b);
        pair
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth, and the pair.
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Waits (at most 5 s) until the link reports carrier.
fn wait_lower_up(ns: &str, ifname: &str) {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let out = Command::new("ip")
            .args(["-n", ns, "-o", "link", "show", "dev", ifname])
            .output()
            .unwrap_or_else(|e| panic!("ip link show: {e}"));
        if String::from_utf8_lossy(&out.stdout).contains("LOWER_UP") {
            return;
        }
        assert!(Instant::now() < end, "{ifname} in {ns} did not come up");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `f` in a new thread that has entered network namespace `ns`;
/// sockets it opens and processes it spawns live in that namespace.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = File::open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
        // Only this thread's network namespace changes, which a
        // multi-threaded process may do.
        rustix::thread::move_into_link_name_space(
            file.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .unwrap_or_else(|e| panic!("setns {path}: {e}"));
        f()
    })
}

/// A hub namespace holding a bridge, and `n` host namespaces each joined to
/// it by a veth pair: a small LAN of separate machines (as far as the
/// network goes) for fleet tests. The hub's bridge has `10.<net>.0.1/24`,
/// host `i` (from 0) has `10.<net>.0.<10 + i>` on its `eth0`.
///
/// On drop, every process still inside any of these namespaces (servers
/// the test started, their per-connection children, clients run in the
/// hub) is killed, and the namespaces are deleted: nothing outlives the
/// test, whichever way it ends.
#[derive(Debug)]
pub struct Hub {
    /// The hub namespace (run the client side here).
    pub hub: String,
    /// The host namespaces.
    pub hosts: Vec<String>,
    net: u8,
}

impl Hub {
    /// A new hub with `n` hosts; `tag` (two letters) names the test suite.
    pub fn new(tag: &str, net: u8, n: usize) -> Hub {
        let k = NEXT.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let hub = Hub {
            hub: format!("sg{tag}-{pid}-{k}-hub"),
            hosts: (0..n).map(|i| format!("sg{tag}-{pid}-{k}-h{i}")).collect(),
            net,
        };
        run_checked(&["ip", "netns", "add", &hub.hub]);
        let br = "br0";
        run_checked(&["ip", "-n", &hub.hub, "link", "add", br, "type", "bridge"]);
        let addr = format!("10.{net}.0.1/24");
        run_checked(&["ip", "-n", &hub.hub, "addr", "add", &addr, "dev", br]);
        run_checked(&["ip", "-n", &hub.hub, "link", "set", br, "up"]);
        run_checked(&["ip", "-n", &hub.hub, "link", "set", "lo", "up"]);
        for (i, ns) in hub.hosts.iter().enumerate() {
            run_checked(&["ip", "netns", "add", ns]);
            let port = format!("p{i}");
            run_checked(&[
                "ip", "-n", &hub.hub, "link", "add", &port, "type", "veth", "peer", "name", "eth0",
                "netns", ns,
            ]);
            run_checked(&["ip", "-n", &hub.hub, "link", "set", &port, "master", br]);
            run_checked(&["ip", "-n", &hub.hub, "link", "set", &port, "up"]);
            let a = format!("{}/24", hub.address(i));
            run_checked(&["ip", "-n", ns, "addr", "add", &a, "dev", "eth0"]);
            run_checked(&["ip", "-n", ns, "link", "set", "eth0", "up"]);
            run_checked(&["ip", "-n", ns, "link", "set", "lo", "up"]);
            wait_lower_up(ns, "eth0");
        }
        hub
    }

    /// The hub's own IPv4 address on the bridge (a server the hosts reach).
    pub fn bridge_address(&self) -> String {
        format!("10.{}.0.1", self.net)
    }

    /// Host `i`'s IPv4 address.
    pub fn address(&self, i: usize) -> String {
        format!("10.{}.0.{}", self.net, 10 + i)
    }

    /// Kills every process inside namespace `ns` (SIGKILL), as a machine
    /// that goes away: all of them are stopped first, so none sees another
    /// die and acts on it (a shell whose child failed removing its files,
    /// a process woken by a closed pipe) before it is killed too.
    pub fn kill_all_in(ns: &str) {
        let pids_in = || -> Vec<rustix::process::Pid> {
            Command::new("ip")
                .args(["netns", "pids", ns])
                .output()
                .map(|out| {
                    String::from_utf8_lossy(&out.stdout)
                        .split_whitespace()
                        .filter_map(|p| p.parse().ok())
                        .filter_map(rustix::process::Pid::from_raw)
                        .collect()
                })
                .unwrap_or_default()
        };
        let signal_all = |pids: &[rustix::process::Pid], signal| {
            for &pid in pids {
                let _ = rustix::process::kill_process(pid, signal);
            }
        };
        // Stop until a listing finds nothing new (one forked meanwhile).
        let mut stopped = Vec::new();
        for _ in 0..5 {
            let new: Vec<_> = pids_in()
                .into_iter()
                .filter(|p| !stopped.contains(p))
                .collect();
            if new.is_empty() {
                break;
            }
            signal_all(&new, rustix::process::Signal::STOP);
            stopped.extend(new);
        }
        for _ in 0..5 {
            let pids = pids_in();
            if pids.is_empty() {
                return;
            }
            signal_all(&pids, rustix::process::Signal::KILL);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        for ns in std::iter::once(&self.hub).chain(&self.hosts) {
            Hub::kill_all_in(ns);
        }
        for ns in std::iter::once(&self.hub).chain(&self.hosts) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}
