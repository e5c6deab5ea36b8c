//! The listener under hostile input on loopback: random bytes, truncated
//! packets, wrong checksums and valid pings with random IDs from many source
//! ports. It must keep answering a real client, keep its state within the
//! configured bounds, count every drop by reason, never answer with more
//! bytes than it received, enforce the rate limit, and stop promptly.
//!
//! Junk is sent in batches, and each batch is awaited on the listener's
//! counters before the next, so no datagram is lost in the socket buffer
//! and the counts can be compared exactly. Every loop is bounded.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::RunningListener;
use rand::RngExt;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use sysgauge_twoping::checksum::checksum_of_packet;
use sysgauge_twoping::client::{Client, ClientConfig, Target};
use sysgauge_twoping::codec::{self, random_message_id, Packet};
use sysgauge_twoping::listener::{
    CounterSnapshot, ListenerConfig, ListenerCounters, ListenerLimits, RateLimit,
};

fn loopback_listener(limits: ListenerLimits) -> RunningListener {
    RunningListener::start(ListenerConfig {
        addresses: vec!["127.0.0.1:0".parse().expect("addr")],
        limits,
        ..ListenerConfig::default()
    })
}

/// Waits (at most 10 s) until the listener has received `n` datagrams.
fn await_received(counters: &ListenerCounters, n: u64) -> CounterSnapshot {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let s = counters.snapshot();
        if s.received >= n || Instant::now() >= end {
            return s;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ping_bytes(size: usize) -> Vec<u8> {
    let mut p = Packet::new(random_message_id());
    p.opcodes.reply_requested = true;
    codec::encode(&p, size, 65_000, Some(size))
}

fn fix_checksum(bytes: &mut [u8]) {
    bytes[2] = 0;
    bytes[3] = 0;
    let sum = checksum_of_packet(bytes);
    bytes[2..4].copy_from_slice(&sum.to_be_bytes());
}

#[derive(Default)]
struct Sent {
    total: u64,
    malformed: u64,
    truncated: u64,
    bad_checksum: u64,
    valid: u64,
}

#[test]
fn junk_flood_is_counted_state_stays_bounded_and_real_pings_are_answered() {
    let limits = ListenerLimits {
        max_peers: 32,
        max_ids_per_peer: 16,
        rate_limit: None,
        ..ListenerLimits::default()
    };
    let l = loopback_listener(limits);
    let target = l.addr();
    let max_entries = {
        // Same bound the listener computes: peers x (2 x ids + courtesy).
        32 * (2 * 16 + 16)
    };

    // A real client pings throughout the flood.
    let client = std::thread::spawn(move || {
        let mut c = Client::new(
            ClientConfig {
                count: Some(30),
                interval: Duration::from_millis(20),
                ..ClientConfig::default()
            },
            vec![Target::new("lo", target)],
        )
        .expect("client");
        c.run(&AtomicBool::new(false), &mut |_| {}).expect("run")
    });

    let sockets: Vec<UdpSocket> = (0..100)
        .map(|_| UdpSocket::bind("127.0.0.1:0").expect("bind junk socket"))
        .collect();
    let mut rng = rand::rng();
    let mut sent = Sent::default();
    for _batch in 0..20 {
        for s in &sockets {
            let kind = rng.random_range(0..5u32);
            let bytes = match kind {
                0 => {
                    // Random bytes that cannot start with the magic.
                    let len = rng.random_range(12..600usize);
                    let mut b: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                    b[0] = rng.random_range(0..0x32u8);
                    sent.malformed += 1;
                    b
                }
                1 => {
                    // Shorter than a header, even empty.
                    let len = rng.random_range(0..12usize);
                    sent.truncated += 1;
                    (0..len).map(|_| rng.random()).collect()
                }
                2 => {
                    // A segment running past the end (checksum made valid
                    // so the length check is what catches it).
                    let mut p = Packet::new(random_message_id());
                    p.opcodes.reply_requested = true;
                    p.opcodes.please_investigate = Some(vec![random_message_id(); 5]);
                    let full = codec::encode(&p, 0, 512, None);
                    let mut b = full[..rng.random_range(13..full.len())].to_vec();
                    fix_checksum(&mut b);
                    sent.truncated += 1;
                    b
                }
                3 => {
                    let mut b = ping_bytes(128);
                    b[rng.random_range(4..128usize)] ^= 0x5a;
                    sent.bad_checksum += 1;
                    b
                }
                _ => {
                    sent.valid += 1;
                    ping_bytes(128)
                }
            };
            s.send_to(&bytes, target).expect("send junk");
            sent.total += 1;
        }
        let snap = await_received(&l.counters, sent.total);
        assert!(
            snap.received >= sent.total,
            "listener fell behind: {snap:?}"
        );
    }

    let report = client.join().expect("client thread");
    let h = &report.hosts[0];
    assert_eq!((h.counts.transmitted, h.counts.received), (30, 30), "{h:?}");
    // The junk, plus the client's 30 pings and 30 third legs.
    await_received(&l.counters, sent.total + 60);

    let c = l.counters.snapshot();
    assert_eq!(c.malformed, sent.malformed, "{c:?}");
    assert_eq!(c.truncated, sent.truncated, "{c:?}");
    assert_eq!(c.bad_checksum, sent.bad_checksum, "{c:?}");
    assert_eq!(
        c.bad_mac + c.rate_limited + c.unsupported + c.reply_too_large,
        0
    );
    // Every valid junk ping and every real ping was answered.
    assert_eq!(c.replies, sent.valid + 30, "{c:?}");
    assert!(c.peers_high_water <= 32, "{c:?}");
    assert!(c.state_entries_high_water <= max_entries as u64, "{c:?}");
    assert!(c.peer_evictions > 0, "101 peers through a 32-peer table");

    // Stops promptly even right after a flood.
    let stopping = Instant::now();
    let listener = l.stop();
    assert!(stopping.elapsed() < Duration::from_secs(1));
    assert!(listener.max_state_bytes() > 0);
    assert_eq!(listener.max_state_entries(), max_entries);
}

#[test]
fn replies_are_never_larger_than_requests() {
    let l = loopback_listener(ListenerLimits::default());
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let mut buf = [0u8; 2048];
    let mut unanswerable = 0;
    for size in [
        14usize, 19, 20, 21, 22, 30, 40, 64, 100, 127, 128, 129, 300, 512, 513, 1400,
    ] {
        let req = ping_bytes(size);
        assert_eq!(req.len(), size);
        sock.send_to(&req, l.addr()).expect("send");
        match sock.recv_from(&mut buf) {
            Ok((n, _)) => {
                assert!(n <= size, "reply {n} bytes to a {size}-byte request");
                assert!(n <= 512, "reply {n} bytes above max");
                if (128..=512).contains(&size) {
                    assert_eq!(n, size, "reply padded to the request's size");
                }
                let reply = codec::decode(&buf[..n]).expect("valid reply");
                assert!(reply.opcodes.in_reply_to.is_some());
            }
            Err(_) => {
                // Header + "in reply to" need 20 bytes: smaller requests get
                // no reply rather than a bigger one.
                assert!(size < 20, "no reply to a {size}-byte request");
                unanswerable += 1;
            }
        }
    }
    let c = await_received(&l.counters, 16);
    assert_eq!(c.reply_too_large, unanswerable, "{c:?}");

    // A big investigation request: the answers are cut to fit, not grown.
    let mut p = Packet::new(random_message_id());
    p.opcodes.reply_requested = true;
    p.opcodes.please_investigate = Some((0..60).map(|_| random_message_id()).collect());
    let req = codec::encode(&p, 0, 512, None);
    sock.send_to(&req, l.addr()).expect("send");
    let (n, _) = sock.recv_from(&mut buf).expect("reply");
    assert!(n <= req.len());
    let reply = codec::decode(&buf[..n]).expect("valid");
    let answered = reply
        .opcodes
        .investigation_never_received
        .map_or(0, |v| v.len());
    assert!(answered > 0 && answered <= 60, "{answered}");
}

#[test]
fn rate_limit_drops_and_counts_the_excess() {
    let l = loopback_listener(ListenerLimits {
        rate_limit: Some(RateLimit {
            packets_per_second: 50.0,
            burst: 20.0,
            exempt_loopback: false,
        }),
        ..ListenerLimits::default()
    });
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let started = Instant::now();
    for _ in 0..200 {
        sock.send_to(&ping_bytes(128), l.addr()).expect("send");
    }
    let c = await_received(&l.counters, 200);
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(c.received, 200);
    let allowed_max = 20 + (50.0 * elapsed).ceil() as u64 + 1;
    assert!(c.replies <= allowed_max, "{c:?} in {elapsed:.3}s");
    assert!(c.replies >= 20, "the burst passes: {c:?}");
    assert_eq!(c.rate_limited, 200 - c.replies, "{c:?}");

    // Another source has its own bucket... but on loopback every socket is
    // 127.0.0.1, the same source; a different loopback address is not.
    let other = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 2], 0))).expect("bind 127.0.0.2");
    other
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    other.send_to(&ping_bytes(128), l.addr()).expect("send");
    let mut buf = [0u8; 1024];
    assert!(
        other.recv_from(&mut buf).is_ok(),
        "a fresh source is not limited"
    );
}

/// A burst of pings queued before the listener reads is answered in full,
/// each reply to its own request, whether a wake-up may read fewer
/// datagrams than one `recvmmsg` holds (`max_batch` 3), a number that ends
/// within a `recvmmsg` (40: 32 + 8), or several full ones (the default).
#[test]
fn a_queued_burst_is_answered_in_full_whatever_the_batch_limit() {
    for max_batch in [3usize, 40, ListenerLimits::default().max_batch] {
        let l = loopback_listener(ListenerLimits {
            max_batch,
            ..ListenerLimits::default()
        });
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
        sock.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let burst = 200usize;
        let mut asked = std::collections::HashSet::new();
        for _ in 0..burst {
            let req = ping_bytes(128);
            let id: [u8; 6] = req[4..10].try_into().expect("id");
            asked.insert(id);
            sock.send_to(&req, l.addr()).expect("send");
        }
        let mut buf = [0u8; 2048];
        let mut answered = std::collections::HashSet::new();
        while answered.len() < burst {
            let (n, _) = sock.recv_from(&mut buf).unwrap_or_else(|e| {
                panic!(
                    "max_batch {max_batch}: {} of {burst} answered: {e}",
                    answered.len()
                )
            });
            let reply = codec::decode(&buf[..n]).expect("valid reply");
            let to = reply.opcodes.in_reply_to.expect("in reply to");
            assert!(asked.contains(&to), "a reply to a request never sent");
            assert!(answered.insert(to), "two replies to one request");
        }
        let c = await_received(&l.counters, burst as u64);
        assert_eq!(c.received, burst as u64, "{c:?}");
        assert_eq!(c.replies, burst as u64, "{c:?}");
        assert_eq!(c.dropped(), 0, "{c:?}");
    }
}

/// A bind error suggests only what fits its cause: a port in use, not
/// root; an address this machine does not have, neither.
#[test]
fn a_bind_error_hints_only_at_its_own_cause() {
    use sysgauge_twoping::listener::Listener;
    let bind_error = |addr: SocketAddr| match Listener::bind(ListenerConfig {
        addresses: vec![addr],
        ..ListenerConfig::default()
    }) {
        Ok(_) => panic!("{addr} was bound"),
        Err(e) => e.to_string(),
    };
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let err = bind_error(taken.local_addr().unwrap());
    assert!(
        err.contains("(is another listener on that port?)") && !err.contains("root"),
        "{err}"
    );
    let err = bind_error("192.0.2.77:0".parse().unwrap());
    assert!(
        err.starts_with("cannot bind 2ping listener to 192.0.2.77:0: ")
            && !err.contains("another listener")
            && !err.contains("root"),
        "{err}"
    );
}
