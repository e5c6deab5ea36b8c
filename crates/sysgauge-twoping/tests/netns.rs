//! Directional loss across a real (virtual) network: two network
//! namespaces joined by a veth pair, nftables dropping 40 % of 2ping
//! packets in ONE direction only, our listener in one namespace and our
//! client in the other. The client must attribute its losses to that
//! direction and none to the other; the listener, which investigates its
//! own unanswered 2nd legs, must see the mirror image.
//!
//! Namespaces get unique names per run (pid + counter) and are deleted by a
//! Drop guard on every exit path. Client and listener run in threads that
//! `setns(2)` into their namespace, so no helper binary is needed. Every run
//! is bounded: 60 pings at 20 ms, inquire wait 0.2 s, linger at most 3 s.
//!
//! Needs root, `ip` (iproute2) and `nft` (nftables); without them these
//! tests skip with a note, and fail under SYSGAUGE_REQUIRE_ALL=1.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod common;

use common::have_requirements;
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use sysgauge_twoping::client::{Client, ClientConfig, ClientReport, Target};
use sysgauge_twoping::listener::{Listener, ListenerConfig, PeerSummary};
use sysgauge_twoping::net::{resolve, AddressFamily};
use sysgauge_twoping::LossDirection;

static NEXT: AtomicU32 = AtomicU32::new(0);

fn sh(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits (at most 5 s) until the link reports carrier.
fn wait_lower_up(ns: &str, ifname: &str) {
    let end = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let out = Command::new("ip")
            .args(["-n", ns, "-o", "link", "show", "dev", ifname])
            .output()
            .expect("ip link show");
        if String::from_utf8_lossy(&out.stdout).contains("LOWER_UP") {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "{ifname} in {ns} did not come up"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Two namespaces `a` (client) and `b` (listener) joined by a veth pair;
/// deleted on drop.
struct NetnsPair {
    a: String,
    b: String,
    if_a: String,
    if_b: String,
    v4_b: String,
}

impl NetnsPair {
    fn new() -> NetnsPair {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let pair = NetnsPair {
            a: format!("sgtp-{pid}-{n}-a"),
            b: format!("sgtp-{pid}-{n}-b"),
            // Interface names are limited to 15 bytes.
            if_a: format!("sg{}{n}a", pid % 10_000_000),
            if_b: format!("sg{}{n}b", pid % 10_000_000),
            v4_b: format!("10.213.{}.2", n % 250),
        };
        // From here on, Drop cleans up whatever was created.
        sh(&["ip", "netns", "add", &pair.a]);
        sh(&["ip", "netns", "add", &pair.b]);
        // Fixed MAC addresses and permanent neighbour entries take ARP and
        // neighbour discovery out of the picture: a first solicitation lost
        // while the link comes up is only retried after a second, which
        // would hold back every early packet of a one-second test.
        let (mac_a, mac_b) = ("02:00:00:00:00:0a", "02:00:00:00:00:0b");
        sh(&[
            "ip", "link", "add", &pair.if_a, "address", mac_a, "netns", &pair.a, "type", "veth",
            "peer", "name", &pair.if_b, "address", mac_b, "netns", &pair.b,
        ]);
        let v4_a = format!("10.213.{}.1", n % 250);
        for (ns, ifname, v4, ll, peer_v4, peer_ll, peer_mac) in [
            (
                &pair.a, &pair.if_a, &v4_a, "fe80::a", &pair.v4_b, "fe80::b", mac_b,
            ),
            (
                &pair.b, &pair.if_b, &pair.v4_b, "fe80::b", &v4_a, "fe80::a", mac_a,
            ),
        ] {
            sh(&[
                "ip",
                "-n",
                ns,
                "addr",
                "add",
                &format!("{v4}/24"),
                "dev",
                ifname,
            ]);
            // nodad: usable at once, no duplicate address detection wait.
            let ll = format!("{ll}/64");
            sh(&[
                "ip", "-n", ns, "-6", "addr", "add", &ll, "dev", ifname, "nodad",
            ]);
            sh(&["ip", "-n", ns, "link", "set", ifname, "up"]);
            sh(&["ip", "-n", ns, "link", "set", "lo", "up"]);
            for peer in [peer_v4.as_str(), peer_ll] {
                sh(&[
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
        for (ns, ifname) in [(&pair.a, &pair.if_a), (&pair.b, &pair.if_b)] {
            wait_lower_up(ns, ifname);
        }
        pair
    }

    /// Loads an nftables rule set into namespace `ns`.
    fn nft(&self, ns: &str, rules: &str) {
        let mut child = Command::new("ip")
            .args(["netns", "exec", ns, "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn nft");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(rules.as_bytes())
            .expect("write rules");
        let out = child.wait_with_output().expect("nft");
        assert!(
            out.status.success(),
            "nft failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Drops `percent` % of incoming UDP packets in namespace `ns` whose
    /// port `field` ("dport" or "sport") is 15998.
    fn drop_incoming(&self, ns: &str, field: &str, percent: u32) {
        self.nft(
            ns,
            &format!(
                "table inet sgtp {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  udp {field} 15998 numgen random mod 100 < {percent} drop\n }}\n}}\n"
            ),
        );
    }
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth, and the pair.
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Runs `f` in a new thread that has entered network namespace `ns`.
fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = File::open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
        // SAFETY: a valid namespace fd; CLONE_NEWNET only switches this
        // thread's network namespace, which a multi-threaded process may do.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    })
}

struct Outcome {
    client: ClientReport,
    listener: Vec<PeerSummary>,
}

/// Listener in `b` on `listen` (resolved inside `b`), client in `a` pinging
/// `target` (resolved inside `a`).
fn run_pair(pair: &NetnsPair, listen: String, target: String) -> Outcome {
    let cancel = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let c = Arc::clone(&cancel);
    let listener = in_netns(&pair.b, move || {
        let addr = resolve(&listen, 15998, AddressFamily::Any).expect("listen address");
        let mut l = Listener::bind(ListenerConfig {
            addresses: vec![addr],
            inquire_wait: Duration::from_millis(200),
            ..ListenerConfig::default()
        })
        .expect("bind listener in namespace");
        let _ = ready_tx.send(());
        l.serve(&*c, &mut |_| {}).expect("serve");
        l.peer_summaries()
    });
    ready_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("listener ready");
    let client = in_netns(&pair.a, move || {
        let t: SocketAddr = resolve(&target, 15998, AddressFamily::Any).expect("target");
        let mut client = Client::new(
            ClientConfig {
                count: Some(60),
                interval: Duration::from_millis(20),
                inquire_wait: Duration::from_millis(200),
                linger: Duration::from_secs(3),
                deadline: Some(Duration::from_secs(10)),
                ..ClientConfig::default()
            },
            vec![Target::new(target.clone(), t)],
        )
        .expect("client in namespace");
        client
            .run(&AtomicBool::new(false), &mut |_| {})
            .expect("client run")
    });
    let client = client.join().expect("client thread");
    // Give the listener a moment for the last 3rd legs, then stop it.
    std::thread::sleep(Duration::from_millis(300));
    cancel.store(true, Ordering::SeqCst);
    let listener = listener.join().expect("listener thread");
    Outcome { client, listener }
}

fn check(outcome: &Outcome, client_loses: LossDirection) {
    let h = &outcome.client.hosts[0];
    let c = h.counts;
    eprintln!(
        "client: {c:?} undetermined {}, probes {}; listener: {:?}",
        c.undetermined(),
        h.probes,
        outcome.listener.first().map(|p| p.counts)
    );
    let (right, wrong) = match client_loses {
        LossDirection::Outbound => (c.lost_outbound, c.lost_inbound),
        LossDirection::Inbound => (c.lost_inbound, c.lost_outbound),
    };
    assert_eq!(c.transmitted, 60, "{h:?}");
    // 40 % of 60: about 24; fewer than 8 is astronomically unlikely.
    assert!(c.lost() >= 8, "{h:?}");
    assert_eq!(wrong, 0, "losses attributed to the wrong direction: {h:?}");
    assert!(right >= 8, "{h:?}");
    assert!(
        c.undetermined() * 4 <= c.lost(),
        "most losses attributed: {h:?}"
    );

    // The listener's view of its own 2nd legs is the mirror image: when the
    // client's packets are dropped, its 3rd legs are (the listener's 2nd
    // legs arrived: inbound for the listener); when the listener's packets
    // are dropped, its 2nd legs never arrive (outbound for the listener).
    assert_eq!(outcome.listener.len(), 1, "one peer");
    let l = outcome.listener[0].counts;
    let (l_right, l_wrong) = match client_loses {
        LossDirection::Outbound => (l.lost_inbound, l.lost_outbound),
        LossDirection::Inbound => (l.lost_outbound, l.lost_inbound),
    };
    assert_eq!(l_wrong, 0, "listener attributed the wrong direction: {l:?}");
    assert!(l_right >= 1, "listener found none of its losses: {l:?}");
}

fn netns_ok(test: &str) -> bool {
    have_requirements(test, &["ip", "nft"], true)
}

#[test]
fn outbound_loss_over_veth_ipv4() {
    if !netns_ok("outbound_loss_over_veth_ipv4") {
        return;
    }
    let pair = NetnsPair::new();
    // Drop client → listener packets as they enter the listener's namespace.
    pair.drop_incoming(&pair.b, "dport", 40);
    let outcome = run_pair(&pair, pair.v4_b.clone(), pair.v4_b.clone());
    check(&outcome, LossDirection::Outbound);
}

#[test]
fn inbound_loss_over_veth_ipv4() {
    if !netns_ok("inbound_loss_over_veth_ipv4") {
        return;
    }
    let pair = NetnsPair::new();
    // Drop listener → client packets as they enter the client's namespace.
    pair.drop_incoming(&pair.a, "sport", 40);
    let outcome = run_pair(&pair, pair.v4_b.clone(), pair.v4_b.clone());
    check(&outcome, LossDirection::Inbound);
}

#[test]
fn inbound_loss_over_veth_ipv6_link_local_with_scope() {
    if !netns_ok("inbound_loss_over_veth_ipv6_link_local_with_scope") {
        return;
    }
    let pair = NetnsPair::new();
    pair.drop_incoming(&pair.a, "sport", 40);
    // Link-local addresses need the zone: the interface name, resolved to
    // its index inside each namespace.
    let listen = format!("fe80::b%{}", pair.if_b);
    let target = format!("fe80::b%{}", pair.if_a);
    let outcome = run_pair(&pair, listen, target);
    check(&outcome, LossDirection::Inbound);
}

#[test]
fn outbound_loss_over_veth_ipv6_link_local_with_scope() {
    if !netns_ok("outbound_loss_over_veth_ipv6_link_local_with_scope") {
        return;
    }
    let pair = NetnsPair::new();
    pair.drop_incoming(&pair.b, "dport", 40);
    let listen = format!("fe80::b%{}", pair.if_b);
    let target = format!("fe80::b%{}", pair.if_a);
    let outcome = run_pair(&pair, listen, target);
    check(&outcome, LossDirection::Outbound);
}
