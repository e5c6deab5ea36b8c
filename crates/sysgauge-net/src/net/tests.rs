//! The net family end to end on loopback: every case against the
//! in-process service and against a "peer" (the same service reached
//! through `--peer`), the service's refusals (wrong service, wrong version,
//! junk datagrams), and the ping cases against an in-process 2ping
//! listener. Everything binds 127.0.0.1 and ends within seconds.

use super::endpoint;
use super::proto::{self, Hello, Mode, Reply, ReplyStatus, MSG_LEN};
use super::service::HELLO_TIMEOUT;
use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;
use sysgauge_core::{BenchError, CancelToken, CtxSettings, Params, Plan, Profile, RunCtx, Unit};
use sysgauge_twoping::client::{Client, ClientConfig, Target};
use sysgauge_twoping::listener::{Listener, ListenerConfig};

fn ctx(profile: Profile) -> RunCtx {
    RunCtx::for_tests(CtxSettings::for_tests(profile, std::env::temp_dir()))
}

fn run_all(
    options: NetOptions,
) -> Vec<(
    String,
    Params,
    Result<Vec<sysgauge_core::Metric>, BenchError>,
)> {
    let options = Arc::new(options);
    let mut c = ctx(Profile::Quick);
    let plan = Plan {
        profile: Profile::Quick,
        threads: 2,
    };
    let mut out = Vec::new();
    for b in benchmarks(&options) {
        for p in b.cases(&plan) {
            c.begin_case(Duration::from_millis(60));
            let r = b.run(&mut c, &p);
            let _ = c.take_case_output();
            out.push((b.id().to_string(), p, r));
        }
    }
    c.end_session();
    out
}

#[test]
fn every_case_runs_on_loopback() {
    let results = run_all(NetOptions::default());
    let ids: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert!(ids.contains(&"net.tcp-throughput"));
    assert!(ids.contains(&"net.udp-rtt"));
    // Without hosts the ping cases plan nothing.
    assert!(!ids.contains(&"net.ping-rtt"));
    for (id, p, r) in results {
        assert_eq!(p.get_str("target"), Some("loopback"));
        match r {
            Ok(m) => {
                assert!(!m.is_empty(), "{id}");
                for metric in &m {
                    assert_eq!(metric.samples.len(), 3, "{id} {}", metric.name);
                    assert!(metric.value() > 0.0, "{id} {}", metric.name);
                }
                if id == "net.tcp-throughput" {
                    assert_eq!(m[0].unit, Unit::MBps);
                    assert_eq!(m[1].unit, Unit::Mbitps);
                    // The same measurement in two units.
                    let ratio = m[1].value() / m[0].value();
                    assert!((ratio - 8.0).abs() < 1e-6, "{ratio}");
                }
            }
            // The packet-rate ladder may stop early; that is a skip.
            Err(BenchError::Skip { reason, .. }) if id == "net.udp-pps" => {
                assert!(reason.contains("stopped rising"), "{reason}");
            }
            Err(e) => panic!("{id} {p}: {e}"),
        }
    }
}

#[test]
fn a_peer_is_measured_through_the_info_handshake() {
    let (service, addr) = start(ServiceConfig::loopback());
    let options = NetOptions {
        peer: Some(Peer {
            name: format!("{addr}"),
            addr,
        }),
        udp_size: Some(200),
        ..NetOptions::default()
    };
    for (id, p, r) in run_all(options) {
        assert_eq!(p.get_str("target"), Some(addr.to_string().as_str()));
        if id == "net.udp-pps" || id == "net.udp-rtt" {
            assert_eq!(p.get_u64("size"), Some(200));
        }
        match r {
            Ok(_) => {}
            Err(BenchError::Skip { .. }) if id == "net.udp-pps" => {}
            Err(e) => panic!("{id} {p}: {e}"),
        }
    }
    let c = service.counters();
    assert!(c.sink_bytes.load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert!(c.udp_reflected.load(std::sync::atomic::Ordering::Relaxed) > 0);
}

#[test]
fn a_closed_port_fails_once_with_a_hint() {
    // A port that was free a moment ago, now closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let options = NetOptions {
        peer: Some(Peer {
            name: "nobody".into(),
            addr,
        }),
        ..NetOptions::default()
    };
    let started = std::time::Instant::now();
    for (_, _, r) in run_all(options) {
        match r {
            Err(BenchError::Failed(m)) => {
                assert!(m.contains("cannot connect"), "{m}");
                assert!(m.contains("sysgauge listen --serve"), "{m}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }
    // Remembered: one attempt, not one per case.
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// A TCP server that answers like a web server.
fn foreign_server() -> (SocketAddr, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut b = [0u8; 16];
            let _ = s.read(&mut b);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    (addr, h)
}

#[test]
fn a_wrong_service_is_named() {
    let (addr, h) = foreign_server();
    let err = endpoint::info(addr, "web", None).err().unwrap_or_default();
    assert!(err.contains("not as a sysgauge net service"), "{err}");
    assert!(err.contains("HTTP/1.1"), "{err}");
    let _ = h.join();
}

#[test]
fn service_refuses_other_versions_and_junk() {
    let (service, addr) = start(ServiceConfig::loopback());
    // A hello of another version gets a clear status back.
    let mut s = connect(addr);
    let mut hello = Hello::new(Mode::Info, 0).encode(None);
    hello[5] = 99;
    s.write_all(&hello).unwrap();
    let err = endpoint::read_reply(&mut s, addr).err().unwrap_or_default();
    assert!(err.contains("protocol version"), "{err}");
    // A hello sent in pieces is still understood (served by a worker).
    let mut s = connect(addr);
    let hello = Hello::new(Mode::Info, 0).encode(None);
    s.write_all(&hello[..5]).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    s.write_all(&hello[5..]).unwrap();
    let r = endpoint::read_reply(&mut s, addr).unwrap();
    assert_eq!(r.value, u64::from(addr.port()));
    // Foreign bytes get no answer at all.
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut b = [0u8; MSG_LEN];
    // Closed (or reset: the request was not read to its end), never answered.
    assert!(!matches!(s.read(&mut b), Ok(n) if n > 0));
    // A sink confirms each block; one with fewer bytes than announced is
    // never confirmed.
    let mut s = connect(addr);
    s.write_all(&Hello::new(Mode::Sink, 3).encode(None))
        .unwrap();
    s.write_all(&[1, 2, 3]).unwrap();
    assert_eq!(endpoint::read_reply(&mut s, addr).map(|r| r.value), Ok(3));
    s.write_all(&1000u64.to_be_bytes()).unwrap();
    s.write_all(&[0u8; 10]).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert!(!matches!(s.read(&mut b), Ok(n) if n > 0));
    // Junk datagrams are dropped, ours reflected unchanged.
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(addr).unwrap();
    u.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    u.send(b"junk junk junk junk").unwrap();
    let mut inb = [0u8; 256];
    assert!(u.recv(&mut inb).is_err(), "junk was answered");
    let mut ours = [7u8; 100];
    proto::put_udp_header(&mut ours, 42, None);
    u.send(&ours).unwrap();
    u.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let n = u.recv(&mut inb).unwrap();
    assert_eq!(&inb[..n], &ours[..]);
    let dropped = service
        .counters()
        .udp_dropped
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(dropped, 1);
    // Stopping joins every thread and frees the port. A child that another
    // test forks holds a copy of every descriptor until it execs (a window
    // of microseconds, but milliseconds under qemu-user), so the port may
    // take that long to come free; two seconds bound the wait.
    drop(service);
    let freed = std::time::Instant::now();
    while TcpListener::bind(addr).is_err() {
        assert!(
            freed.elapsed() < Duration::from_secs(2),
            "the port is still taken after the service stopped"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn key(k: &str) -> proto::ServiceKey {
    proto::ServiceKey::new(k.as_bytes()).unwrap()
}

fn counter(c: &std::sync::atomic::AtomicU64) -> u64 {
    c.load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn keyed_service_answers_only_its_key() {
    let k = key("correct horse");
    let (service, addr) = start(ServiceConfig {
        key: Some(k.clone()),
        ..ServiceConfig::loopback()
    });
    // Hellos: no key or a wrong key are refused with a status; the key works.
    for wrong in [None, Some(key("wrong"))] {
        let err = endpoint::info(addr, "peer", wrong.as_ref())
            .err()
            .unwrap_or_default();
        assert!(err.contains("refused our key"), "{err}");
    }
    assert_eq!(endpoint::info(addr, "peer", Some(&k)), Ok(addr.port()));
    assert_eq!(counter(&service.counters().unauthenticated), 2);
    // Datagrams: unauthenticated or wrongly keyed ones are dropped, never
    // reflected; a keyed one comes back unchanged.
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(addr).unwrap();
    u.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut inb = [0u8; 256];
    for wrong in [None, Some(key("wrong"))] {
        let mut d = [7u8; 100];
        proto::put_udp_header(&mut d, 1, wrong.as_ref());
        u.send(&d).unwrap();
        assert!(u.recv(&mut inb).is_err(), "a forged datagram was reflected");
    }
    let mut d = [7u8; 100];
    proto::put_udp_header(&mut d, 2, Some(&k));
    u.send(&d).unwrap();
    u.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let n = u.recv(&mut inb).unwrap();
    assert_eq!(&inb[..n], &d[..]);
    assert_eq!(counter(&service.counters().udp_unauthenticated), 2);
    // The counter is bumped just after the send: wait for it (bounded).
    let end = std::time::Instant::now() + Duration::from_secs(2);
    while counter(&service.counters().udp_reflected) == 0 && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(counter(&service.counters().udp_reflected), 1);
}

#[test]
fn non_loopback_bind_needs_a_key() {
    let open = ServiceConfig {
        addresses: vec![SocketAddr::from(([0, 0, 0, 0], 0))],
        ..ServiceConfig::loopback()
    };
    let err = NetService::start(open.clone()).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("needs a shared key")),
        "{err:?}"
    );
    let keyed = ServiceConfig {
        key: Some(key("k")),
        ..open
    };
    assert!(NetService::start(keyed).is_ok());
}

/// The status the service at `addr` answers a new connection's request
/// for a 10-byte sink with.
fn sink_request_status(addr: SocketAddr) -> Result<ReplyStatus, proto::ReplyError> {
    let mut s = connect(addr);
    s.write_all(&Hello::new(Mode::Sink, 10).encode(None))
        .unwrap();
    let mut b = [0u8; MSG_LEN];
    s.read_exact(&mut b).unwrap();
    Reply::decode(&b).map(|r| r.status)
}

/// A sink of `n` bytes on a new connection: its reply's status and value.
fn sink_exchange(addr: SocketAddr, n: u64) -> (TcpStream, ReplyStatus, u64) {
    let mut s = connect(addr);
    let mut out = Hello::new(Mode::Sink, n).encode(None).to_vec();
    out.extend(std::iter::repeat_n(7u8, usize::try_from(n).unwrap()));
    s.write_all(&out).unwrap();
    let mut b = [0u8; MSG_LEN];
    s.read_exact(&mut b).unwrap();
    let r = Reply::decode(&b).unwrap();
    (s, r.status, r.value)
}

#[test]
fn connections_are_limited_per_source() {
    let (service, addr) = start(ServiceConfig {
        max_per_source: 2,
        max_pending_per_source: 2,
        ..ServiceConfig::loopback()
    });
    // Two connections that never finish their hello hold this source's
    // pending share: a third is told "busy" ...
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"SGNT").unwrap();
        held.push(s);
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut third = connect(addr);
    third.write_all(b"SG").unwrap();
    let mut b = [0u8; MSG_LEN];
    third.read_exact(&mut b).unwrap();
    assert_eq!(Reply::decode(&b).map(|r| r.status), Ok(ReplyStatus::Busy));
    assert_eq!(counter(&service.counters().refused_per_source), 1);
    // ... but they take nothing from authenticated sinks, which have their
    // own share: two are served, the next is busy.
    let (a, status, value) = sink_exchange(addr, 10);
    assert_eq!((status, value), (ReplyStatus::Ok, 10));
    let (b2, status, _) = sink_exchange(addr, 10);
    assert_eq!(status, ReplyStatus::Ok);
    assert_eq!(sink_request_status(addr), Ok(ReplyStatus::Busy));
    assert_eq!(counter(&service.counters().refused_per_source), 2);
    // Quick requests are answered inline and not limited by the shares.
    assert_eq!(endpoint::info(addr, "loopback", None), Ok(addr.port()));
    drop((held, a, b2));
}

#[test]
fn an_unfinished_hello_is_closed_after_the_deadline() {
    let (service, addr) = start(ServiceConfig {
        max_pending: 1,
        ..ServiceConfig::loopback()
    });
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"S").unwrap();
    slow.set_read_timeout(Some(HELLO_TIMEOUT + Duration::from_secs(5)))
        .unwrap();
    let started = std::time::Instant::now();
    let mut b = [0u8; 1];
    // Closed without a word: it never said what it is.
    assert_eq!(slow.read(&mut b).unwrap(), 0);
    let waited = started.elapsed();
    assert!(
        waited >= HELLO_TIMEOUT - Duration::from_millis(500)
            && waited < HELLO_TIMEOUT + Duration::from_secs(2),
        "{waited:?}"
    );
    assert_eq!(counter(&service.counters().hello_timeouts), 1);
    // The pending slot is free again.
    let (_s, status, _) = sink_exchange(addr, 10);
    assert_eq!(status, ReplyStatus::Ok);
}

#[test]
fn udp_is_rate_limited_per_source() {
    let (service, addr) = start(ServiceConfig {
        reflector_threads: 1,
        udp_rate: Some(sysgauge_twoping::listener::RateLimit {
            packets_per_second: 1.0,
            burst: 5.0,
            exempt_loopback: false,
        }),
        ..ServiceConfig::loopback()
    });
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(addr).unwrap();
    for seq in 0..50 {
        let mut d = [0u8; 64];
        proto::put_udp_header(&mut d, seq, None);
        u.send(&d).unwrap();
    }
    u.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut inb = [0u8; 128];
    let mut back = 0;
    while back < 50 && u.recv(&mut inb).is_ok() {
        back += 1;
    }
    // The burst (5), plus at most a token or two refilled meanwhile.
    assert!((5..=7).contains(&back), "{back} of 50 reflected");
    assert!(counter(&service.counters().udp_rate_limited) >= 43);
}

/// A service and its address.
fn start(config: ServiceConfig) -> (NetService, SocketAddr) {
    let service = NetService::start(config).unwrap();
    let addr = service.local_addrs()[0];
    (service, addr)
}

/// A connection to `addr` that waits at most 5 s for an answer.
fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// A service with one connection slot, and the connection that holds it
/// (a sink of 1 GiB, of which it sends nothing).
fn busy_service() -> (NetService, SocketAddr, TcpStream) {
    let (service, addr) = start(ServiceConfig {
        max_connections: 1,
        ..ServiceConfig::loopback()
    });
    let mut hold = TcpStream::connect(addr).unwrap();
    hold.write_all(&Hello::new(Mode::Sink, 1 << 30).encode(None))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    (service, addr, hold)
}

#[test]
fn busy_service_says_so() {
    let (_service, addr, hold) = busy_service();
    assert_eq!(sink_request_status(addr), Ok(ReplyStatus::Busy));
    drop(hold);
}

/// A client refused while it writes its first block hears "peer busy",
/// not the broken pipe its writes run into.
#[test]
fn a_refused_throughput_case_says_peer_busy() {
    let (_service, addr, hold) = busy_service();
    let options = NetOptions {
        peer: Some(Peer {
            name: format!("{addr}"),
            addr,
        }),
        ..NetOptions::default()
    };
    let mut refused = 0;
    for (id, _, r) in run_all(options) {
        if id == "net.tcp-throughput" {
            let e = r.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("refused the connection: peer busy"), "{e}");
            assert!(!e.contains("pipe") && !e.contains("reset"), "{e}");
            refused += 1;
        }
    }
    assert!(refused > 0);
    drop(hold);
}

#[test]
fn ping_cases_record_a_2ping_run() {
    let mut listener = Listener::bind(ListenerConfig {
        addresses: vec![SocketAddr::from(([127, 0, 0, 1], 0))],
        ..ListenerConfig::default()
    })
    .unwrap();
    let addr = listener.local_addrs()[0];
    let stop_listener = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop_listener);
    let serving = std::thread::spawn(move || {
        let _ = listener.serve(&*s2, &mut |_| {});
    });
    let config = ClientConfig {
        count: Some(5),
        interval: Duration::from_millis(20),
        ..ClientConfig::default()
    };
    let dead = SocketAddr::from(([127, 0, 0, 1], 9));
    let targets = vec![Target::new("local", addr), Target::new("nobody", dead)];
    let client = Client::new(config.clone(), targets.clone()).unwrap();
    let seen = Arc::new(Mutex::new(0u32));
    let s = Arc::clone(&seen);
    let options = NetOptions {
        ping: Some(PingSetup {
            client: Arc::new(Mutex::new(Some(client))),
            config,
            targets,
            hosts: vec!["local".into(), "nobody".into()],
            stop: CancelToken::new(),
            interrupts: None,
            observer: Some(Arc::new(move |_| {
                if let Ok(mut n) = s.lock() {
                    *n += 1;
                }
            })),
        }),
        ..NetOptions::default()
    };
    let results = run_all(options);
    stop_listener.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = serving.join();
    // Only the ping cases, one per host and id.
    let ids: Vec<(&str, Option<&str>)> = results
        .iter()
        .map(|(id, p, _)| (id.as_str(), p.get_str("host")))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("net.ping-rtt", Some("local")),
            ("net.ping-rtt", Some("nobody")),
            ("net.ping-loss", Some("local")),
            ("net.ping-loss", Some("nobody")),
        ]
    );
    for (id, p, r) in &results {
        assert_eq!(p.get_str("mode"), Some("interval"));
        match (id.as_str(), p.get_str("host"), r) {
            ("net.ping-rtt", Some("local"), Ok(m)) => {
                assert_eq!(m[0].samples.len(), 5);
                assert_eq!(m[0].unit, Unit::Milliseconds);
            }
            ("net.ping-rtt", Some("nobody"), Err(BenchError::Failed(e))) => {
                assert!(e.contains("no reply from nobody"), "{e}");
            }
            ("net.ping-loss", Some("local"), Ok(m)) => {
                let names: Vec<&str> = m.iter().map(|x| x.name.as_str()).collect();
                assert_eq!(names, ["loss", "outbound", "inbound", "undetermined"]);
                assert!(m.iter().all(|x| x.value() == 0.0));
            }
            ("net.ping-loss", Some("nobody"), Ok(m)) => {
                assert_eq!(m[0].value(), 100.0);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(*seen.lock().unwrap_or_else(|e| e.into_inner()) >= 5);
}
