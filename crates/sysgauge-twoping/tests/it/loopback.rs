//! Our client against our listener on 127.0.0.1 and ::1: the 3-way
//! exchange, statistics, parallel hosts, HMAC, flood, deadline and
//! cancellation. Every run is bounded by a count or a deadline.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{listener_on, run_client, RunningListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysgauge_twoping::auth::{Auth, Digest};
use sysgauge_twoping::client::{Client, ClientConfig, ClientEvent, ClientReport, Target};
use sysgauge_twoping::listener::ListenerConfig;
use sysgauge_twoping::PeerOptions;

fn quick(count: u64) -> ClientConfig {
    ClientConfig {
        count: Some(count),
        interval: Duration::from_millis(50),
        ..ClientConfig::default()
    }
}

/// A client with `config` run to the end against listener `l`; its report.
fn against(l: &RunningListener, config: ClientConfig) -> ClientReport {
    run_client(config, vec![Target::new("lo", l.addr())]).0
}

/// A client with `config` run to the end against a new listener on `ip`;
/// its report and how long the run took.
fn timed_against_new_listener(ip: &str, config: ClientConfig) -> (ClientReport, Duration) {
    let l = RunningListener::start(listener_on(ip));
    let started = Instant::now();
    let report = against(&l, config);
    (report, started.elapsed())
}

fn ping_ok(ip: &str) {
    let l = RunningListener::start(listener_on(ip));
    let (report, events) = run_client(quick(5), vec![Target::new(ip, l.addr())]);
    let h = &report.hosts[0];
    assert_eq!(h.counts.transmitted, 5, "{h:?}");
    assert_eq!(h.counts.received, 5, "{h:?}");
    assert_eq!(h.counts.lost(), 0);
    let rtt = h.rtt.expect("rtt stats");
    assert_eq!(rtt.count, 5);
    assert!(rtt.min <= rtt.avg && rtt.avg <= rtt.max);
    assert!(rtt.ewma >= rtt.min && rtt.ewma <= rtt.max);
    // Pings, and a 3rd leg for each reply.
    assert_eq!(h.packets_transmitted, 10);
    let replies: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Reply {
                seq,
                size,
                peer_host_latency,
                ..
            } => Some((*seq, *size, *peer_host_latency)),
            _ => None,
        })
        .collect();
    assert_eq!(
        replies.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    assert!(replies.iter().all(|r| r.1 == 128 && r.2.is_some()));

    // The listener learned its own RTT and ours from every 3rd leg. The
    // last 3rd leg may still be in flight: wait a little, boundedly.
    let end = Instant::now() + Duration::from_secs(2);
    while l.counters.snapshot().received < 10 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let listener = l.stop();
    let peers = listener.peer_summaries();
    assert_eq!(peers.len(), 1);
    assert_eq!(peers[0].counts.transmitted, 5);
    assert_eq!(peers[0].counts.received, 5);
    assert_eq!(peers[0].peer_rtt.map(|s| s.count), Some(5));
    let c = listener.counters().snapshot();
    assert_eq!(c.replies, 5);
    assert_eq!(c.dropped(), 0);
}

#[test]
fn client_and_listener_on_ipv4_loopback() {
    ping_ok("127.0.0.1");
}

#[test]
fn client_and_listener_on_ipv6_loopback() {
    ping_ok("::1");
}

#[test]
fn several_hosts_in_parallel() {
    let a = RunningListener::start(listener_on("127.0.0.1"));
    let b = RunningListener::start(listener_on("::1"));
    let started = Instant::now();
    let (report, _) = run_client(
        quick(8),
        vec![Target::new("a", a.addr()), Target::new("b", b.addr())],
    );
    // In parallel: about 8 intervals, not 16.
    assert!(
        started.elapsed() < Duration::from_millis(8 * 50 * 2),
        "{:?}",
        started.elapsed()
    );
    for h in &report.hosts {
        assert_eq!((h.counts.transmitted, h.counts.received), (8, 8), "{h:?}");
    }
}

#[test]
fn hmac_every_digest_and_wrong_key() {
    for digest in Digest::ALL {
        let auth = Auth::new(digest, "shared secret");
        let l = RunningListener::start(ListenerConfig {
            peer: PeerOptions {
                auth: Some(auth.clone()),
                ..PeerOptions::default()
            },
            ..listener_on("127.0.0.1")
        });
        let report = against(
            &l,
            ClientConfig {
                peer: PeerOptions {
                    auth: Some(auth),
                    ..PeerOptions::default()
                },
                ..quick(3)
            },
        );
        assert_eq!(report.hosts[0].counts.received, 3, "{digest}");
        assert_eq!(l.counters.snapshot().bad_mac, 0);
    }

    let l = RunningListener::start(ListenerConfig {
        peer: PeerOptions {
            auth: Some(Auth::new(Digest::HmacSha256, "right")),
            ..PeerOptions::default()
        },
        ..listener_on("127.0.0.1")
    });
    let report = against(
        &l,
        ClientConfig {
            peer: PeerOptions {
                auth: Some(Auth::new(Digest::HmacSha256, "wrong")),
                ..PeerOptions::default()
            },
            linger: Duration::from_millis(200),
            ..quick(3)
        },
    );
    assert_eq!(report.hosts[0].counts.received, 0);
    // Three pings and the probes of the linger phase, all refused.
    assert!(l.counters.snapshot().bad_mac >= 3);
    assert_eq!(l.counters.snapshot().replies, 0);
}

#[test]
fn flood_sends_as_fast_as_replies_come() {
    let (report, elapsed) = timed_against_new_listener(
        "127.0.0.1",
        ClientConfig {
            count: Some(2000),
            flood: true,
            deadline: Some(Duration::from_secs(20)),
            ..ClientConfig::default()
        },
    );
    let h = &report.hosts[0];
    assert_eq!(h.counts.transmitted, 2000);
    assert_eq!(h.counts.received, 2000, "{h:?}");
    eprintln!(
        "flood on loopback: {:.0} pings/s",
        2000.0 / elapsed.as_secs_f64()
    );
}

#[test]
fn deadline_bounds_the_run() {
    let (report, elapsed) = timed_against_new_listener(
        "127.0.0.1",
        ClientConfig {
            count: None,
            deadline: Some(Duration::from_millis(300)),
            ..quick(1)
        },
    );
    let h = &report.hosts[0];
    assert!((5..=8).contains(&h.counts.transmitted), "{h:?}");
    assert_eq!(h.counts.received, h.counts.transmitted);
    assert!(elapsed < Duration::from_secs(2));
}

#[test]
fn cancellation_returns_the_summary_so_far() {
    let l = RunningListener::start(listener_on("127.0.0.1"));
    let cancel = Arc::new(AtomicBool::new(false));
    let c = Arc::clone(&cancel);
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c.store(true, Ordering::SeqCst);
    });
    let mut client = Client::new(
        ClientConfig {
            count: None,
            ..quick(1)
        },
        vec![Target::new("lo", l.addr())],
    )
    .expect("client");
    let started = Instant::now();
    let report = client.run(&*cancel, &mut |_| {}).expect("run");
    stopper.join().expect("stopper");
    assert!(report.cancelled);
    assert!(report.hosts[0].counts.transmitted >= 3);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn no_listener_means_errors_and_undetermined_losses() {
    // A port nobody listens on: ICMP port unreachable comes back as errors.
    let port = sysgauge_testkit::free_udp_port("127.0.0.1");
    let (report, events) = run_client(
        ClientConfig {
            linger: Duration::from_millis(200),
            ..quick(3)
        },
        vec![Target::new(
            "lo",
            format!("127.0.0.1:{port}").parse().expect("addr"),
        )],
    );
    let h = &report.hosts[0];
    assert_eq!(h.counts.transmitted, 3);
    assert_eq!(h.counts.received, 0);
    assert_eq!(h.counts.undetermined(), 3);
    assert!(h.errors > 0);
    assert!(events
        .iter()
        .any(|e| matches!(e, ClientEvent::Error { .. })));
}

#[test]
fn listener_reports_loss_of_its_second_legs() {
    // A client that never sends 3rd legs: the listener's 2nd legs stay
    // unanswered; with a short inquire wait it asks, and our client (which
    // did receive them) answers "seen": inbound loss from the listener's side.
    let l = RunningListener::start(ListenerConfig {
        peer: PeerOptions {
            inquire_wait: Duration::from_millis(100),
            ..PeerOptions::default()
        },
        ..listener_on("127.0.0.1")
    });
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let mut buf = [0u8; 2048];
    let mut leg2_ids = Vec::new();
    for i in 0..4 {
        let mut p =
            sysgauge_twoping::codec::Packet::new(sysgauge_twoping::codec::random_message_id());
        p.opcodes.reply_requested = true;
        if i == 3 {
            std::thread::sleep(Duration::from_millis(150));
        }
        let bytes = sysgauge_twoping::codec::encode(&p, 128, 512, None);
        sock.send_to(&bytes, l.addr()).expect("send");
        let (n, _) = sock.recv_from(&mut buf).expect("reply");
        let r = sysgauge_twoping::codec::decode(&buf[..n]).expect("decode");
        assert_eq!(r.opcodes.in_reply_to, Some(p.message_id));
        assert!(r.opcodes.reply_requested, "3-way");
        if i == 3 {
            // The last reply asks about the first three 2nd legs.
            assert_eq!(r.opcodes.please_investigate, Some(leg2_ids.clone()));
        }
        leg2_ids.push(r.message_id);
    }
}

#[test]
fn source_address_is_used() {
    let l = RunningListener::start(listener_on("127.0.0.1"));
    let report = against(
        &l,
        ClientConfig {
            source: Some("127.0.0.2".parse().expect("ip")),
            ..quick(2)
        },
    );
    assert_eq!(report.hosts[0].counts.received, 2);
    let peers = l.stop().peer_summaries();
    assert_eq!(peers.len(), 1);
    assert_eq!(peers[0].peer.ip().to_string(), "127.0.0.2");
}

#[test]
fn adaptive_mode_paces_by_rtt() {
    let (report, elapsed) = timed_against_new_listener(
        "::1",
        ClientConfig {
            count: Some(50),
            adaptive: true,
            // Adaptive starts at the interval until an RTT is known.
            interval: Duration::from_secs(1),
            ..ClientConfig::default()
        },
    );
    assert_eq!(report.hosts[0].counts.received, 50);
    // 50 pings at loopback RTTs, far below 50 intervals.
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}
