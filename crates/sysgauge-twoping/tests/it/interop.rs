//! Interoperability with the reference `2ping` (Debian package, 4.5), both
//! ways, on 127.0.0.1 and ::1, plain and with HMAC, and the loss-direction
//! verdicts across implementations (the reference's `--packet-loss OUT:IN`
//! drops packets inside the program, so no privileges are needed).
//!
//! Needs the `2ping` program. Without it these tests skip with a note;
//! with SYSGAUGE_REQUIRE_ALL=1 they fail. Every spawned process is killed
//! on every exit path (ChildGuard), and every run is bounded by a count and
//! a timeout.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{
    self, have_requirements, parse_reference_summary, reference_peertime_lines, RunningListener,
};
use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;
use sysgauge_testkit::{free_udp_port, reference_2ping_listener, ChildGuard};
use sysgauge_twoping::auth::{Auth, Digest};
use sysgauge_twoping::client::{ClientConfig, ClientEvent, ClientReport, Target};
use sysgauge_twoping::listener::ListenerConfig;
use sysgauge_twoping::LossDirection;
use sysgauge_twoping::PeerOptions;

const READY: Duration = Duration::from_secs(15);
const EXIT: Duration = Duration::from_secs(30);

fn have_2ping(test: &str) -> bool {
    have_requirements(test, &["2ping"], false)
}

/// Starts `2ping --listen` on `ip`, on a free port, with `extra` options.
fn reference_listener(ip: &str, extra: &[&str]) -> (ChildGuard, SocketAddr) {
    let port = free_udp_port(ip);
    let child = reference_2ping_listener(ip, port, extra, READY);
    let addr = SocketAddr::new(ip.parse().expect("ip"), port);
    (child, addr)
}

fn run_client(config: ClientConfig, addr: SocketAddr) -> (ClientReport, Vec<ClientEvent>) {
    common::run_client(config, vec![Target::new("ref", addr)])
}

fn our_client_against_reference(ip: &str) {
    let (mut child, addr) = reference_listener(ip, &[]);
    let (report, events) = run_client(
        ClientConfig {
            count: Some(5),
            interval: Duration::from_millis(200),
            ..ClientConfig::default()
        },
        addr,
    );
    let h = &report.hosts[0];
    assert_eq!((h.counts.transmitted, h.counts.received), (5, 5), "{h:?}");
    assert_eq!(h.invalid, 0);
    // The reference sends host latency and pads its reply to our size.
    assert!(events.iter().any(|e| matches!(
        e,
        ClientEvent::Reply {
            peer_host_latency: Some(_),
            size: 128,
            ..
        }
    )));
    // Our 3rd legs carried our RTT: the reference prints it as peertime.
    std::thread::sleep(Duration::from_millis(300));
    child.wait_for_line("ping_seq=5 ", Duration::from_secs(3));
    assert_eq!(
        reference_peertime_lines(&child.output()),
        5,
        "{}",
        child.output()
    );
}

sysgauge_testkit::loopback_tests!(
    have_2ping => our_client_against_reference:
    our_client_against_reference_listener_ipv4,
    our_client_against_reference_listener_ipv6
);

fn reference_client(ip: &str, port: u16, extra: &[&str], count: u32) -> String {
    let mut cmd = Command::new("2ping");
    cmd.args([
        "-c",
        &count.to_string(),
        "-i",
        "0.2",
        "--port",
        &port.to_string(),
    ])
    .args(extra)
    .arg(ip);
    let mut child = ChildGuard::spawn(&mut cmd);
    let status = child.wait_exit(EXIT);
    assert!(
        status.is_some(),
        "reference client did not finish: {}",
        child.output()
    );
    child.output()
}

fn reference_client_against_ours(ip: &str) {
    let l = RunningListener::start(common::listener_on(ip));
    let out = reference_client(ip, l.addr().port(), &[], 5);
    let s = parse_reference_summary(&out).unwrap_or_else(|| panic!("no summary in: {out}"));
    assert_eq!(
        (s.transmitted, s.received, s.loss_percent),
        (5, 5, 0),
        "{out}"
    );
    assert_eq!(s.undetermined + s.outbound + s.inbound, 0);
    // Every reference 3rd leg reached us with its RTT enclosed.
    let listener = l.stop();
    let peers = listener.peer_summaries();
    assert_eq!(peers.len(), 1, "{peers:?}");
    assert_eq!(peers[0].counts.received, 5);
    assert_eq!(peers[0].peer_rtt.map(|r| r.count), Some(5));
    assert_eq!(listener.counters().snapshot().dropped(), 0);
}

sysgauge_testkit::loopback_tests!(
    have_2ping => reference_client_against_ours:
    reference_client_against_our_listener_ipv4,
    reference_client_against_our_listener_ipv6
);

#[test]
fn hmac_interop_every_digest_both_ways() {
    if !have_2ping("hmac_interop_every_digest_both_ways") {
        return;
    }
    let key = "interop key";
    for digest in Digest::ALL {
        let auth = Auth::new(digest, key);
        let ref_args = ["--auth", key, "--auth-digest", digest.name()];

        // Our client, reference listener.
        let (_child, addr) = reference_listener("127.0.0.1", &ref_args);
        let (report, _) = run_client(
            ClientConfig {
                count: Some(2),
                interval: Duration::from_millis(100),
                peer: PeerOptions {
                    auth: Some(auth.clone()),
                    ..PeerOptions::default()
                },
                ..ClientConfig::default()
            },
            addr,
        );
        let h = &report.hosts[0];
        assert_eq!(h.counts.received, 2, "{digest}: {h:?}");
        assert_eq!(h.invalid, 0, "{digest}: reference MAC refused");

        // Reference client, our listener.
        let l = RunningListener::start(ListenerConfig {
            addresses: vec!["127.0.0.1:0".parse().expect("addr")],
            peer: PeerOptions {
                auth: Some(auth),
                ..PeerOptions::default()
            },
            ..ListenerConfig::default()
        });
        let out = reference_client("127.0.0.1", l.addr().port(), &ref_args, 2);
        let s = parse_reference_summary(&out).unwrap_or_else(|| panic!("{digest}: {out}"));
        assert_eq!(s.received, 2, "{digest}: {out}");
        assert!(
            !out.contains("Auth"),
            "{digest}: reference refused our MAC: {out}"
        );
        assert_eq!(l.counters.snapshot().bad_mac, 0, "{digest}");
    }
}

#[test]
fn wrong_key_is_refused_both_ways() {
    if !have_2ping("wrong_key_is_refused_both_ways") {
        return;
    }
    let (mut child, addr) = reference_listener(
        "127.0.0.1",
        &["--auth", "theirs", "--auth-digest", "hmac-sha256"],
    );
    let (report, _) = run_client(
        ClientConfig {
            count: Some(2),
            interval: Duration::from_millis(100),
            peer: PeerOptions {
                auth: Some(Auth::new(Digest::HmacSha256, "ours")),
                ..PeerOptions::default()
            },
            linger: Duration::ZERO,
            ..ClientConfig::default()
        },
        addr,
    );
    assert_eq!(report.hosts[0].counts.received, 0);
    assert!(
        child.wait_for_line("Auth hash failed", Duration::from_secs(3)),
        "{}",
        child.output()
    );

    let l = RunningListener::start(ListenerConfig {
        addresses: vec!["127.0.0.1:0".parse().expect("addr")],
        peer: PeerOptions {
            auth: Some(Auth::new(Digest::HmacMd5, "ours")),
            ..PeerOptions::default()
        },
        ..ListenerConfig::default()
    });
    let out = reference_client(
        "127.0.0.1",
        l.addr().port(),
        &["--auth", "theirs", "-w", "2"],
        2,
    );
    let s = parse_reference_summary(&out).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(s.received, 0, "{out}");
    assert!(l.counters.snapshot().bad_mac >= 2);
}

/// Our client against a reference listener that simulates loss with
/// `--packet-loss OUT:IN`: `40:0` drops 40 % of what it sends (our inbound
/// losses), `0:40` drops 40 % of what it receives before looking at it (our
/// outbound losses).
fn directional_against_reference(packet_loss: &str, expected: LossDirection) {
    let (_child, addr) = reference_listener("127.0.0.1", &["--packet-loss", packet_loss]);
    let (report, events) = run_client(
        ClientConfig {
            count: Some(40),
            interval: Duration::from_millis(25),
            peer: PeerOptions {
                inquire_wait: Duration::from_millis(300),
                ..PeerOptions::default()
            },
            linger: Duration::from_secs(3),
            ..ClientConfig::default()
        },
        addr,
    );
    let h = &report.hosts[0];
    let c = h.counts;
    let (right, wrong) = match expected {
        LossDirection::Outbound => (c.lost_outbound, c.lost_inbound),
        LossDirection::Inbound => (c.lost_inbound, c.lost_outbound),
    };
    assert!(c.lost() >= 3, "40 % of 40 pings should lose some: {h:?}");
    assert_eq!(wrong, 0, "no loss in the other direction: {h:?}");
    assert!(right >= 1, "{h:?}");
    assert!(c.undetermined() * 2 <= c.lost(), "mostly attributed: {h:?}");
    let losses = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Loss { direction, .. } if *direction == expected))
        .count();
    assert_eq!(losses as u64, right);
}

#[test]
fn reference_listener_outbound_losses_are_attributed() {
    if have_2ping("reference_listener_outbound_losses_are_attributed") {
        directional_against_reference("0:40", LossDirection::Outbound);
    }
}

#[test]
fn reference_listener_inbound_losses_are_attributed() {
    if have_2ping("reference_listener_inbound_losses_are_attributed") {
        directional_against_reference("40:0", LossDirection::Inbound);
    }
}

#[test]
fn reference_client_gets_our_investigation_answers() {
    if !have_2ping("reference_client_gets_our_investigation_answers") {
        return;
    }
    let l = RunningListener::start(ListenerConfig {
        addresses: vec!["127.0.0.1:0".parse().expect("addr")],
        ..ListenerConfig::default()
    });
    // The reference client drops 40 % of its own sends: outbound losses,
    // which only our "never received" answers can reveal.
    let mut cmd = Command::new("2ping");
    cmd.args([
        "-c",
        "40",
        "-i",
        "0.05",
        "--inquire-wait",
        "0.3",
        "--packet-loss",
        "40:0",
        "--port",
        &l.addr().port().to_string(),
        "127.0.0.1",
    ]);
    let mut child = ChildGuard::spawn(&mut cmd);
    assert!(child.wait_exit(EXIT).is_some(), "{}", child.output());
    let out = child.output();
    let s = parse_reference_summary(&out).unwrap_or_else(|| panic!("{out}"));
    assert!(s.outbound >= 1, "{out}");
    assert_eq!(s.inbound, 0, "{out}");
    // The losses were found by our answers to its investigations.
    assert!(l.counters.snapshot().replies >= 1);
}

#[test]
fn reference_output_parsers_on_captured_output() {
    let out = include_str!("../fixtures/2ping-4.5-client-loss.txt");
    assert_eq!(
        parse_reference_summary(out),
        Some(common::ReferenceSummary {
            transmitted: 20,
            received: 14,
            loss_percent: 30,
            outbound: 3,
            inbound: 1,
            undetermined: 2,
        })
    );
    let listener = include_str!("../fixtures/2ping-4.5-listener.txt");
    assert_eq!(reference_peertime_lines(listener), 3);
    assert_eq!(reference_peertime_lines(out), 0);
}
