//! Strangers cannot lock a keyed client out of `sysgauge listen --serve`.
//!
//! Two network namespaces joined by a veth pair: the real listener with a
//! key in `b`; in `a`, ten source addresses each keep 64 connections open
//! to the net service, half of them idle, half having sent one byte, and
//! open a new one whenever the service closes one. That is more than the
//! service's 256 sink slots, which these connections used to take before
//! any key was checked, so every keyed `sysgauge net --peer` failed with
//! "busy" or a broken pipe. Now they only ever hold the small pending
//! budget, each for at most the hello deadline, and the keyed measurement
//! from `a`, run while they keep up the pressure, must succeed.
//!
//! Bounded: the strangers stop at a flag, a deadline and a connection
//! count; each connect has a timeout; the measurement runs under a
//! deadline and is killed past it; the listener is killed and the
//! namespaces deleted by Drop guards on every exit path. Needs root and
//! `ip`; skips without them, and fails under SYSGAUGE_REQUIRE_ALL=1.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{in_ns, run_bounded, strict_record, sysgauge_bin, Sandbox};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysgauge_testkit::netns::{in_netns, VethPair};
use sysgauge_testkit::{is_root, on_path, run_checked, ChildGuard};

const KEY: &str = "netns-serve-key";
/// Source addresses of the strangers, and connections kept from each.
const SOURCES: u8 = 10;
const PER_SOURCE: usize = 64;
/// Most connections the strangers open in all (they reopen what closes).
const MAX_OPENED: u64 = 200_000;
/// The MAC of the veth end in `a` (sysgauge_testkit::netns sets it).
const MAC_A: &str = "02:00:00:00:00:0a";

fn requirements() -> bool {
    sysgauge_testkit::require(
        "net service lock-out netns test: needs root and `ip`",
        is_root() && on_path("ip"),
        "run as root with iproute2 installed (apt-get install -y iproute2)",
    )
}

/// The binary in namespace `ns`, keyed, outside any results database.
fn sysgauge_in(ns: &str, args: &[&str]) -> Command {
    let mut c = in_ns(ns, &sysgauge_bin(), args);
    c.env("SYSGAUGE_NET_KEY", KEY).env_remove("SYSGAUGE_DB");
    c
}

/// A connection from `source` to `target`, idle or after one byte.
fn stranger(source: Ipv4Addr, target: SocketAddr, one_byte: bool) -> Option<TcpStream> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).ok()?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(source, 0)).into())
        .ok()?;
    s.connect_timeout(&target.into(), Duration::from_secs(1))
        .ok()?;
    let mut t: TcpStream = s.into();
    if one_byte {
        t.write_all(b"S").ok()?;
    }
    t.set_nonblocking(true).ok()?;
    Some(t)
}

/// Whether the service has closed (or answered, before closing) `s`.
fn closed(s: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    !matches!(s.peek(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

#[test]
fn strangers_cannot_lock_out_a_keyed_peer() {
    if !requirements() {
        return;
    }
    // The strangers' churn keeps a CPU busy and the runs measure: the
    // machine to itself.
    let _machine = Sandbox::alone();
    let pair = VethPair::new("sv", 218);
    let prefix = pair.v4_a.rsplit_once('.').unwrap().0.to_string();
    let sources: Vec<Ipv4Addr> = (0..SOURCES)
        .map(|i| format!("{prefix}.{}", 11 + i).parse().unwrap())
        .collect();
    for s in &sources {
        let cidr = format!("{s}/24");
        run_checked(&["ip", "-n", &pair.a, "addr", "add", &cidr, "dev", &pair.if_a]);
        let s = s.to_string();
        run_checked(&[
            "ip",
            "-n",
            &pair.b,
            "neigh",
            "replace",
            &s,
            "lladdr",
            MAC_A,
            "dev",
            &pair.if_b,
            "nud",
            "permanent",
        ]);
    }
    // A fresh namespace: fixed ports are free.
    let serve_port = 15999;
    let mut listener = {
        let port = serve_port.to_string();
        let mut cmd = sysgauge_in(
            &pair.b,
            &[
                "listen",
                "-I",
                &pair.v4_b,
                "--port",
                "15998",
                "--serve",
                "--serve-bind",
                &pair.v4_b,
                "--serve-port",
                &port,
                "-w",
                "300",
            ],
        );
        ChildGuard::spawn_ready(&mut cmd, "net service on", Duration::from_secs(20))
    };
    let target: SocketAddr = format!("{}:{serve_port}", pair.v4_b).parse().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let until = Instant::now() + Duration::from_secs(200);
    let strangers = in_netns(&pair.a, move || {
        let mut conns: Vec<Option<TcpStream>> =
            (0..sources.len() * PER_SOURCE).map(|_| None).collect();
        let mut opened = 0u64;
        let mut most_open = 0usize;
        while !stop2.load(Ordering::SeqCst) && Instant::now() < until && opened < MAX_OPENED {
            for (i, c) in conns.iter_mut().enumerate() {
                if Instant::now() >= until || stop2.load(Ordering::SeqCst) {
                    break;
                }
                if c.as_ref().is_none_or(closed) {
                    *c = stranger(sources[i / PER_SOURCE], target, i % 2 == 1);
                    opened += 1;
                }
            }
            most_open = most_open.max(conns.iter().filter(|c| c.is_some()).count());
            std::thread::sleep(Duration::from_millis(250));
        }
        (opened, most_open)
    });
    // Let the idle connections through the deferred accept (a second or
    // two) so that the service holds all it will hold.
    std::thread::sleep(Duration::from_secs(4));

    let peer = target.to_string();
    for round in 0..2 {
        let t0 = Instant::now();
        let out = run_bounded(
            sysgauge_in(
                &pair.a,
                &[
                    "net",
                    "--profile",
                    "tiny",
                    "--repetitions",
                    "3",
                    "--no-store",
                    "--peer",
                    &peer,
                    "--json",
                    "-",
                    "--udp-size",
                    "100",
                ],
            ),
            Duration::from_secs(150),
        );
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let run = strict_record(&out.stdout);
        assert!(
            out.status.success(),
            "round {round}: {stderr}\n{:?}",
            run.results
                .iter()
                .map(|r| format!("{}: {:?}", r.bench_id, r.status))
                .collect::<Vec<_>>()
        );
        assert_eq!(run.results.len(), 4, "{stderr}");
        assert!(run.results.iter().all(|r| r.is_ok()), "{run:?}");
        eprintln!("round {round}: measured in {:?}", t0.elapsed());
    }
    stop.store(true, Ordering::SeqCst);
    let (opened, most_open) = strangers.join().unwrap();
    // The pressure was real: every source kept its connections up.
    assert!(
        most_open >= usize::from(SOURCES) * PER_SOURCE * 9 / 10,
        "only {most_open} stranger connections open at once ({opened} opened)"
    );

    listener.interrupt();
    let status = listener.wait_exit(Duration::from_secs(20));
    let out = listener.output();
    eprintln!("strangers: {opened} connections opened, {most_open} open at once\n{out}");
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{out}");
    // The service turned strangers away (their pending budget was full).
    let refused = number_before(&out, "refused for their source's limit").unwrap_or(0)
        + number_before(&out, "refused while too many hellos").unwrap_or(0);
    assert!(refused > 0, "{out}");
}

/// The number before `label` in `text` ("12 refused for").
fn number_before(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)?;
    text[..at].split_whitespace().last()?.parse().ok()
}
