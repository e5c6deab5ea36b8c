//! Directional loss across a real (virtual) network: two network
//! namespaces joined by a veth pair, nftables dropping 40 % of 2ping
//! packets in ONE direction only, our listener in one namespace and our
//! client in the other. The client must attribute its losses to that
//! direction and none to the other; the listener, which investigates its
//! own unanswered 2nd legs, must see the mirror image.
//!
//! The namespaces and their link are `sysgauge_testkit::netns::VethPair`:
//! unique names per run, deleted by a Drop guard on every exit path. Client
//! and listener run in threads that `setns(2)` into their namespace, so no
//! helper binary is needed. Every run
//! is bounded: 60 pings at 20 ms, inquire wait 0.2 s, linger at most 3 s.
//!
//! Needs root, `ip` (iproute2) and `nft` (nftables); without them these
//! tests skip with a note, and fail under SYSGAUGE_REQUIRE_ALL=1.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::have_requirements;
use std::io::Write;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use sysgauge_testkit::netns::{in_netns, VethPair, LINK_LOCAL_B};
use sysgauge_twoping::client::{Client, ClientConfig, ClientReport, Target};
use sysgauge_twoping::listener::{Listener, ListenerConfig, PeerSummary};
use sysgauge_twoping::net::{resolve, AddressFamily};
use sysgauge_twoping::LossDirection;
use sysgauge_twoping::PeerOptions;

/// Loads an nftables rule set into namespace `ns`.
fn nft(ns: &str, rules: &str) {
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
fn drop_incoming(ns: &str, field: &str, percent: u32) {
    nft(
        ns,
        &format!(
            "table inet sgtp {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  udp {field} 15998 numgen random mod 100 < {percent} drop\n }}\n}}\n"
        ),
    );
}

struct Outcome {
    client: ClientReport,
    listener: Vec<PeerSummary>,
}

/// Listener in `b` on `listen` (resolved inside `b`), client in `a` pinging
/// `target` (resolved inside `a`).
fn run_pair(pair: &VethPair, listen: String, target: String) -> Outcome {
    let cancel = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let c = Arc::clone(&cancel);
    let listener = in_netns(&pair.b, move || {
        let addr = resolve(&listen, 15998, AddressFamily::Any).expect("listen address");
        let mut l = Listener::bind(ListenerConfig {
            addresses: vec![addr],
            peer: PeerOptions {
                inquire_wait: Duration::from_millis(200),
                ..PeerOptions::default()
            },
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
                peer: PeerOptions {
                    inquire_wait: Duration::from_millis(200),
                    ..PeerOptions::default()
                },
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

/// Which addresses the client pings the listener at.
#[derive(Clone, Copy)]
enum Addressing {
    V4,
    /// Link-local addresses need the zone: the interface name, resolved to
    /// its index inside each namespace.
    LinkLocalWithScope,
}

/// 40 % loss in the direction `client_loses` over a fresh veth pair: the
/// client and the listener must both attribute it to that direction.
fn loss_over_veth(test: &str, client_loses: LossDirection, addressing: Addressing) {
    if !have_requirements(test, &["ip", "nft"], true) {
        return;
    }
    let pair = VethPair::new("tp", 213);
    match client_loses {
        // Drop client → listener packets as they enter the listener's namespace.
        LossDirection::Outbound => drop_incoming(&pair.b, "dport", 40),
        // Drop listener → client packets as they enter the client's namespace.
        LossDirection::Inbound => drop_incoming(&pair.a, "sport", 40),
    }
    let (listen, target) = match addressing {
        Addressing::V4 => (pair.v4_b.clone(), pair.v4_b.clone()),
        Addressing::LinkLocalWithScope => (
            format!("{LINK_LOCAL_B}%{}", pair.if_b),
            format!("{LINK_LOCAL_B}%{}", pair.if_a),
        ),
    };
    let outcome = run_pair(&pair, listen, target);
    check(&outcome, client_loses);
}

#[test]
fn outbound_loss_over_veth_ipv4() {
    loss_over_veth(
        "outbound_loss_over_veth_ipv4",
        LossDirection::Outbound,
        Addressing::V4,
    );
}

#[test]
fn inbound_loss_over_veth_ipv4() {
    loss_over_veth(
        "inbound_loss_over_veth_ipv4",
        LossDirection::Inbound,
        Addressing::V4,
    );
}

#[test]
fn inbound_loss_over_veth_ipv6_link_local_with_scope() {
    loss_over_veth(
        "inbound_loss_over_veth_ipv6_link_local_with_scope",
        LossDirection::Inbound,
        Addressing::LinkLocalWithScope,
    );
}

#[test]
fn outbound_loss_over_veth_ipv6_link_local_with_scope() {
    loss_over_veth(
        "outbound_loss_over_veth_ipv6_link_local_with_scope",
        LossDirection::Outbound,
        Addressing::LinkLocalWithScope,
    );
}
