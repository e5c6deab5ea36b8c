//! The network commands end to end, with the real binary: `sysgauge net`
//! over loopback and against `sysgauge listen --serve`, `sysgauge ping`
//! against the reference `2ping --listen`, the reference `2ping` client
//! against `sysgauge listen` (127.0.0.1 and ::1), Ctrl-C, flood, several
//! hosts at once, and bad input.
//!
//! Only loopback is used. Every spawned process is killed and reaped in a
//! Drop guard, every run has a count and a timeout. Tests that need the
//! `2ping` program skip with a note without it, and fail when
//! SYSGAUGE_REQUIRE_ALL=1 (as CI sets).
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{
    await_line, ctrl_c_exits_130, read_record, stderr_of, stdout_of, strict_record, Outcome,
    Sandbox,
};
use std::net::{TcpListener, UdpSocket};
use std::process::Command;
use std::time::Duration;
use sysgauge_core::Status;
use sysgauge_net::net::proto::put_udp_header;
use sysgauge_net::net::ServiceKey;
use sysgauge_testkit::{free_udp_port, on_path, reference_2ping_listener, ChildGuard};

const READY: Duration = Duration::from_secs(20);

fn have_2ping(test: &str) -> bool {
    sysgauge_testkit::require(
        &format!("{test}: needs program `2ping`"),
        on_path("2ping"),
        "apt-get install -y 2ping",
    )
}

/// A port free for both TCP and UDP a moment ago.
fn free_tcp_udp_port() -> u16 {
    for _ in 0..50 {
        let t = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = t.local_addr().unwrap().port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free TCP+UDP port");
}

/// `sysgauge listen` on `ip` (ready when it said so).
fn our_listener(sb: &Sandbox, ip: &str, port: u16, extra: &[&str]) -> ChildGuard {
    let mut cmd = sb.std_cmd();
    cmd.args(["listen", "-I", ip, "--port", &port.to_string(), "-w", "120"])
        .args(extra);
    ChildGuard::spawn_ready(&mut cmd, "2PING listener", READY)
}

/// `sysgauge listen --serve` on 127.0.0.1, 2ping and the net service each
/// on a free port (ready when the service said so), and the service's
/// HOST:PORT.
fn listen_serve(sb: &Sandbox) -> (ChildGuard, String) {
    let port = free_udp_port("127.0.0.1");
    let serve_port = free_tcp_udp_port();
    let mut cmd = sb.std_cmd();
    cmd.args(["listen", "-I", "127.0.0.1", "--port", &port.to_string()])
        .args(["--serve", "--serve-port", &serve_port.to_string()])
        .args(["-w", "120"]);
    let listener = ChildGuard::spawn_ready(&mut cmd, "net service on 127.0.0.1", READY);
    (listener, format!("127.0.0.1:{serve_port}"))
}

/// `sysgauge ping -i 0.05` with `extra` options to a listener on
/// 127.0.0.1:`port`, storing into the sandbox database, once it has
/// printed its reply `ping_seq=SEQ`.
fn pinging(sb: &Sandbox, port: u16, extra: &[&str], seq: u32) -> ChildGuard {
    let mut cmd = sb.std_cmd();
    cmd.args(["ping", "-i", "0.05", "--port", &port.to_string(), "--db"])
        .arg(sb.db())
        .args(extra)
        .arg("127.0.0.1");
    let mut ping = ChildGuard::spawn(&mut cmd);
    await_line(
        &mut ping,
        &format!("ping_seq={seq} "),
        Duration::from_secs(30),
    );
    ping
}

/// The reference `2ping --listen` on `ip` (ready when it said so).
fn reference_listener(ip: &str, port: u16, extra: &[&str]) -> ChildGuard {
    reference_2ping_listener(ip, port, extra, READY)
}

/// Ctrl-C to `sysgauge listen`: it must exit 130 within 20 s.
fn stop_with_ctrl_c(listener: &mut ChildGuard) {
    ctrl_c_exits_130(listener, Duration::from_secs(20));
}

/// `sysgauge net` with the tiny profile against the net service at `peer`,
/// its record on stdout and stored nowhere.
fn tiny_net_against(sb: &Sandbox, peer: &str) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.args(["net", "--profile", "tiny", "--repetitions", "3"])
        .args(["--no-store", "--peer", peer, "--json", "-"])
        .args(["--udp-size", "100"])
        .timeout(Duration::from_secs(120));
    c
}

#[test]
fn net_tiny_loopback_end_to_end() {
    let sb = Sandbox::new();
    let json = sb.path().join("net.json");
    let out = sb
        .cmd()
        .args(["net", "--profile", "tiny", "--repetitions", "3", "--db"])
        .arg(sb.db())
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(120))
        .succeeds();
    let run = read_record(&json);
    assert_eq!(run.command, "net");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "net.tcp-throughput",
            "net.tcp-connect",
            "net.udp-pps",
            "net.udp-rtt"
        ]
    );
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{}", r.bench_id);
        assert_eq!(r.params.get_str("target"), Some("loopback"));
        assert!(r
            .metrics
            .iter()
            .all(|m| m.value() > 0.0 && m.samples.len() == 3));
    }
    let text = stdout_of(&out);
    assert!(text.contains("Gbit/s") && text.contains("p99"), "{text}");
    assert!(text.contains("net-loopback"), "{text}");
    assert!(text.contains("Stored as run 1"), "{text}");
}

#[test]
fn run_includes_the_loopback_net_slice() {
    let sb = Sandbox::new();
    let (run, _) = sb.tiny_unstored_run("net");
    assert_eq!(run.results.len(), 4);
    assert!(run.results.iter().all(|r| r.family == "net" && r.is_ok()));
}

#[test]
fn net_against_listen_serve() {
    let sb = Sandbox::new();
    let (mut l, peer) = listen_serve(&sb);
    let out = tiny_net_against(&sb, &peer).succeeds();
    let run = strict_record(&out.stdout);
    assert_eq!(run.results.len(), 4);
    for r in &run.results {
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(r.params.get_str("target"), Some(peer.as_str()));
    }
    // The loopback note is only for loopback runs.
    assert!(!stderr_of(&out).contains("net-loopback"));
    stop_with_ctrl_c(&mut l);
}

/// A peer on this machine: the listener's CPU time is the other side of
/// the measurement, kept apart as `peer_cpus` and left out of
/// `other_cpus` (which would flag a loopback run `disturbed` by its own
/// listener), and the run says which process it took for the peer.
#[test]
fn a_listener_on_this_machine_is_the_peer_not_a_disturbance() {
    let sb = Sandbox::new();
    let (mut l, peer) = listen_serve(&sb);
    let out = tiny_net_against(&sb, &peer).succeeds();
    let run = strict_record(&out.stdout);
    let err = stderr_of(&out);
    assert!(
        err.contains(&format!("(pid {})", l.pid())),
        "the listener was not recognised as the peer:\n{err}"
    );
    for r in &run.results {
        let peer_cpus = r.details.get_str("peer_cpus");
        assert!(peer_cpus.is_some(), "{}: {:?}", r.bench_id, r.details);
        // The reflector answers every datagram: its CPU time is there.
        if r.bench_id == "net.udp-pps" {
            let v: f64 = peer_cpus.unwrap().parse().unwrap();
            assert!(v > 0.0, "{:?}", r.details);
        }
    }
    stop_with_ctrl_c(&mut l);
}

/// The net service on a wildcard (non-loopback) bind: refused without a
/// key; with one, forged datagrams are never reflected, a client without
/// the key is refused, and `sysgauge net` with it measures.
#[test]
fn keyed_service_on_a_wildcard_bind() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let serve_port = free_tcp_udp_port();
    let listen_args = |serve_port: u16| {
        vec![
            "listen".to_string(),
            "-I".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "--serve".into(),
            "--serve-bind".into(),
            "0.0.0.0".into(),
            "--serve-port".into(),
            serve_port.to_string(),
            "-w".into(),
            "120".into(),
        ]
    };
    // No key: refused before anything is bound.
    let out = sb
        .cmd()
        .env_remove("SYSGAUGE_NET_KEY")
        .args(listen_args(serve_port))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("needs a shared key"), "{err}");

    let key = "a shared key for the test";
    let mut l = {
        let mut cmd = sb.std_cmd();
        cmd.env("SYSGAUGE_NET_KEY", key)
            .args(listen_args(serve_port));
        ChildGuard::spawn_ready(&mut cmd, "net service on 0.0.0.0", READY)
    };
    // Forged datagrams: our header with no tag, and with another key's tag.
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(("127.0.0.1", serve_port)).unwrap();
    let wrong = ServiceKey::new(b"not the key").unwrap();
    for seq in 0..2000u64 {
        let mut d = [0u8; 64];
        put_udp_header(&mut d, seq, (seq % 2 == 1).then_some(&wrong));
        u.send(&d).unwrap();
    }
    u.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut inb = [0u8; 128];
    assert!(u.recv(&mut inb).is_err(), "a forged datagram was reflected");
    // The key's datagram comes back: the silence above was not an outage.
    let right = ServiceKey::new(key.as_bytes()).unwrap();
    let mut d = [0u8; 64];
    put_udp_header(&mut d, 9, Some(&right));
    u.send(&d).unwrap();
    u.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let n = u.recv(&mut inb).unwrap();
    assert_eq!(&inb[..n], &d[..]);

    let peer = format!("127.0.0.1:{serve_port}");
    let net = |key: Option<&str>| {
        let mut c = tiny_net_against(&sb, &peer);
        c.env_remove("SYSGAUGE_NET_KEY");
        if let Some(k) = key {
            c.env("SYSGAUGE_NET_KEY", k);
        }
        c.output().unwrap()
    };
    let out = net(None);
    let run = strict_record(&out.stdout);
    assert!(
        run.results.iter().all(|r| !r.is_ok()),
        "measured without the key: {run:?}"
    );
    assert!(
        stderr_of(&out).contains("refused our key"),
        "{}",
        stderr_of(&out)
    );
    let out = net(Some(key));
    assert!(out.status.success(), "{}", stderr_of(&out));
    let run = strict_record(&out.stdout);
    assert_eq!(run.results.len(), 4);
    assert!(run.results.iter().all(|r| r.is_ok()), "{run:?}");
    stop_with_ctrl_c(&mut l);
}

/// `net --only` takes a case's short name as every family command does;
/// a name the family does not have is a usage error naming it.
#[test]
fn net_only_and_skip_choose_cases() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["net", "--profile", "tiny", "--repetitions", "3"])
        .args(["--only", "udp-rtt", "--no-store", "--json", "-"])
        .timeout(Duration::from_secs(120))
        .succeeds();
    let run = strict_record(&out.stdout);
    assert!(!run.results.is_empty());
    assert!(
        run.results.iter().all(|r| r.bench_id == "net.udp-rtt"),
        "{:?}",
        run.results.iter().map(|r| &r.bench_id).collect::<Vec<_>>()
    );
    sb.cmd()
        .args(["net", "--profile", "tiny", "--no-store"])
        .args(["--skip", "net.nosuch"])
        .usage_error("--skip: unknown family or benchmark 'net.nosuch'");
}

/// `--streams N` is honoured in every profile: tiny, which otherwise
/// measures one stream only, measures 1 and N (was: silently 1 only).
#[test]
fn streams_given_are_measured_in_tiny() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["net", "--profile", "tiny", "--repetitions", "3"])
        .args(["--only", "tcp-throughput", "--streams", "3"])
        .args(["--no-store", "--json", "-"])
        .timeout(Duration::from_secs(120))
        .succeeds();
    let run = strict_record(&out.stdout);
    let streams: Vec<Option<u64>> = run
        .results
        .iter()
        .map(|r| r.params.get_u64("streams"))
        .collect();
    assert_eq!(streams, [Some(1), Some(3)]);
    assert!(run.results.iter().all(|r| r.status == Status::Ok));
}

#[test]
fn net_to_a_missing_peer_fails_clearly() {
    let sb = Sandbox::new();
    let closed = free_tcp_udp_port();
    let out = sb
        .cmd()
        .args(["net", "--profile", "tiny", "--no-store"])
        .args(["--peer", &format!("127.0.0.1:{closed}")])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(text.contains("cannot connect"), "{text}");
    assert!(text.contains("sysgauge listen --serve"), "{text}");
}

/// The 2ping statistics block (ours and the reference's are the same) of
/// three pings that all came back.
fn assert_three_pings_without_loss(text: &str) {
    assert!(
        text.contains("3 pings transmitted, 3 received, 0% ping loss"),
        "{text}"
    );
    assert!(
        text.contains("0 outbound ping losses (0%), 0 inbound (0%), 0 undetermined (0%)"),
        "{text}"
    );
}

fn ping_reference(ip: &str) {
    let sb = Sandbox::new();
    let port = free_udp_port(ip);
    let _l = reference_listener(ip, port, &[]);
    let json = sb.path().join("ping.json");
    let out = sb
        .cmd()
        .args([
            "ping",
            "-c",
            "3",
            "-i",
            "0.2",
            "--port",
            &port.to_string(),
            ip,
        ])
        .arg("--db")
        .arg(sb.db())
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    assert!(
        text.contains(&format!("2PING {ip} ({ip}): 128 to 512 bytes of data.")),
        "{text}"
    );
    assert_eq!(
        text.matches(&format!("128 bytes from {ip}: ping_seq="))
            .count(),
        3,
        "{text}"
    );
    assert!(
        text.contains(&format!("--- {ip} ({ip}) 2ping statistics ---")),
        "{text}"
    );
    assert_three_pings_without_loss(&text);
    assert!(text.contains("rtt min/avg/ewma/max/mdev = "), "{text}");
    let run = read_record(&json);
    assert_eq!(run.command, "ping");
    let rtt = run
        .results
        .iter()
        .find(|r| r.bench_id == "net.ping-rtt")
        .unwrap_or_else(|| panic!("no net.ping-rtt"));
    assert_eq!(rtt.params.get_str("host"), Some(ip));
    assert_eq!(rtt.metrics[0].samples.len(), 3);
    let loss = run
        .results
        .iter()
        .find(|r| r.bench_id == "net.ping-loss")
        .unwrap_or_else(|| panic!("no net.ping-loss"));
    let names: Vec<&str> = loss.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["loss", "outbound", "inbound", "undetermined"]);
    assert_eq!(loss.details.get_u64("received"), Some(3));
    assert_eq!(loss.details.get_str("stopped_by"), Some("count"));
}

sysgauge_testkit::loopback_tests!(
    have_2ping => ping_reference:
    ping_against_reference_listener_ipv4,
    ping_against_reference_listener_ipv6
);

fn reference_against_listen(ip: &str) {
    let sb = Sandbox::new();
    let port = free_udp_port(ip);
    let mut l = our_listener(&sb, ip, port, &[]);
    let mut cmd = Command::new("2ping");
    cmd.args(["-c", "3", "-i", "0.2", "--port", &port.to_string(), ip]);
    let mut client = ChildGuard::spawn(&mut cmd);
    let status = client.wait_exit(Duration::from_secs(60));
    let text = client.output();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{text}");
    assert_three_pings_without_loss(&text);
    // Our listener printed the reference's 3rd legs with its RTT, and its
    // statistics on Ctrl-C.
    await_line(&mut l, "ping_seq=3", Duration::from_secs(5));
    stop_with_ctrl_c(&mut l);
    let out = l.output();
    assert_eq!(out.matches("peertime=").count(), 3, "{out}");
    assert!(
        out.contains("3 pings transmitted, 3 received, 0% ping loss"),
        "{out}"
    );
    assert!(out.contains("0 dropped"), "{out}");
}

sysgauge_testkit::loopback_tests!(
    have_2ping => reference_against_listen:
    reference_client_against_listen_ipv4,
    reference_client_against_listen_ipv6
);

/// `sysgauge ping` sending two pings 0.2 s apart to `port`, stored nowhere.
fn two_pings(sb: &Sandbox, port: u16) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.args(["ping", "-c", "2", "-i", "0.2", "--no-store"])
        .args(["--port", &port.to_string()])
        .timeout(Duration::from_secs(60));
    c
}

/// Ctrl-C while `ping` waits for a quiet machine ends the wait as in every
/// measuring command: exit 130, the run stored `interrupted`, and no
/// verdict on a host that was never pinged. The wait cannot end by itself
/// before the signal: it needs 3 s below a share no machine is below.
#[test]
fn ctrl_c_during_the_quiet_wait_interrupts_ping() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let run = sysgauge_testkit::Interrupt::after("sysgauge: waiting up to")
        .waiting_up_to(Duration::from_secs(60))
        .exiting_within(Duration::from_secs(20))
        .run(
            sb.std_cmd()
                .env_remove("SYSGAUGE_NO_WAIT")
                .args(["ping", "-c", "3", "--port", &port.to_string()])
                .args(["--wait-quiet", "120", "--quiet-below", "0.001"])
                // The statistics and failures go to stderr, which is kept.
                .args(["--json", "-", "--db"])
                .arg(sb.db())
                .arg("127.0.0.1"),
            |_, _| {},
        );
    run.assert_started_then_exited(130);
    let log = &run.log;
    assert!(log.contains("interrupted after"), "{log}");
    assert!(!log.contains("no reply"), "{log}");
    assert!(!log.contains("measuring anyway"), "{log}");
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    assert_eq!(
        crate::common::run_status_and_results(&conn),
        ("interrupted".to_string(), 0),
        "{log}"
    );
}

#[test]
fn hmac_both_ways_and_a_wrong_key() {
    if !have_2ping("hmac_both_ways_and_a_wrong_key") {
        return;
    }
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let auth = ["--auth", "s3cret", "--auth-digest", "hmac-sha256"];
    {
        let _l = reference_listener("127.0.0.1", port, &auth);
        let out = two_pings(&sb, port).args(auth).arg("127.0.0.1").succeeds();
        assert!(stdout_of(&out).contains("2 pings transmitted, 2 received"));
        // The key may come from the environment, out of `ps`.
        let wrong = two_pings(&sb, port)
            .args(["--linger", "0", "--auth-digest", "hmac-sha256"])
            .env("SYSGAUGE_2PING_KEY", "wrong")
            .arg("127.0.0.1")
            .output()
            .unwrap();
        assert_eq!(wrong.status.code(), Some(1), "{}", stdout_of(&wrong));
        let text = stdout_of(&wrong);
        assert!(text.contains("2 pings transmitted, 0 received"), "{text}");
        // The keyed listener dropped our pings unanswered: the hint names
        // the key and digest to check.
        assert!(
            text.contains("check --auth and --auth-digest (hmac-sha256)"),
            "{text}"
        );
    }
    let port = free_udp_port("127.0.0.1");
    let _l = our_listener(&sb, "127.0.0.1", port, &auth);
    let mut cmd = Command::new("2ping");
    cmd.args(["-c", "2", "-i", "0.2", "--port", &port.to_string()])
        .args(auth)
        .arg("127.0.0.1");
    let mut client = ChildGuard::spawn(&mut cmd);
    client.wait_exit(Duration::from_secs(60));
    assert!(
        client
            .output()
            .contains("2 pings transmitted, 2 received, 0% ping loss"),
        "{}",
        client.output()
    );
}

#[test]
fn several_hosts_flood_and_json_on_stdout() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let mut cmd = sb.std_cmd();
    cmd.args([
        "listen",
        "-I",
        "127.0.0.1",
        "-I",
        "::1",
        "--port",
        &port.to_string(),
        "-q",
        "-w",
        "120",
    ]);
    let _l = ChildGuard::spawn_ready(&mut cmd, "2PING listener ([::1]", READY);
    let out = sb
        .cmd()
        .args(["ping", "-f", "-c", "500", "--no-store", "--json", "-"])
        .args(["--port", &port.to_string(), "127.0.0.1", "::1"])
        .timeout(Duration::from_secs(60))
        .succeeds();
    // stdout carries only the record; the human text went to stderr.
    let run = strict_record(&out.stdout);
    let human = stderr_of(&out);
    assert!(
        !human.contains("bytes from"),
        "flood prints no reply lines: {human}"
    );
    for host in ["127.0.0.1", "::1"] {
        assert!(
            human.contains(&format!("--- {host} ({host}) 2ping statistics ---")),
            "{human}"
        );
        let loss = run
            .results
            .iter()
            .find(|r| r.bench_id == "net.ping-loss" && r.params.get_str("host") == Some(host))
            .unwrap_or_else(|| panic!("no loss result for {host}"));
        assert_eq!(loss.params.get_str("mode"), Some("flood"));
        assert_eq!(loss.details.get_u64("transmitted"), Some(500));
        assert_eq!(loss.details.get_u64("received"), Some(500), "{human}");
    }
    assert!(human.contains("500 pings transmitted, 500 received, 0% ping loss"));
}

#[test]
fn ctrl_c_prints_and_stores_the_statistics_so_far() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let _l = our_listener(&sb, "127.0.0.1", port, &["-q"]);
    let mut ping = pinging(&sb, port, &[], 5);
    ping.interrupt();
    let status = ping.wait_exit(Duration::from_secs(30));
    let out = ping.output();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{out}");
    assert!(out.contains("2ping statistics"), "{out}");
    assert!(out.contains("Stored as run 1"), "{out}");
    let run = sb.stored_run(1);
    let loss = run
        .results
        .iter()
        .find(|r| r.bench_id == "net.ping-loss")
        .unwrap_or_else(|| panic!("no loss result"));
    assert_eq!(loss.details.get_str("stopped_by"), Some("interrupted"));
    assert!(loss.details.get_u64("received").unwrap_or(0) >= 5);
}

/// Every signal but Ctrl-C on an open-ended ping interrupts a ping as the
/// README says: the statistics so far are printed and stored, the run is
/// `interrupted` with both cases kept, exit 143 (SIGTERM), 129 (SIGHUP), or
/// 130 (Ctrl-C on a ping with a count). Before, each exited 0 and stored the
/// run `complete`.
#[test]
fn sigterm_sighup_and_ctrl_c_on_a_counted_ping_interrupt_it() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let _l = our_listener(&sb, "127.0.0.1", port, &["-q"]);
    for (number, (signal, code, count)) in [
        (libc::SIGTERM, 143, None),
        (libc::SIGHUP, 129, None),
        (libc::SIGINT, 130, Some("100")),
    ]
    .into_iter()
    .enumerate()
    {
        let count = count.map(|c| vec!["-c", c]).unwrap_or_default();
        let mut ping = pinging(&sb, port, &count, 3);
        let pid = i32::try_from(ping.pid()).unwrap();
        // SAFETY: kill with a pid we spawned and have not reaped.
        unsafe { libc::kill(pid, signal) };
        let status = ping.wait_exit(Duration::from_secs(30));
        let out = ping.output();
        assert_eq!(status.and_then(|s| s.code()), Some(code), "{signal}: {out}");
        assert!(out.contains("2ping statistics"), "{signal}: {out}");
        let run = sb.stored_run(u32::try_from(number + 1).unwrap());
        assert_eq!(run.status, sysgauge_core::RunStatus::Interrupted, "{out}");
        let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
        assert_eq!(ids, ["net.ping-rtt", "net.ping-loss"], "{signal}: {out}");
        assert!(run.results.iter().all(|r| r.status == Status::Ok));
        let loss = &run.results[1];
        assert_eq!(loss.details.get_str("stopped_by"), Some("interrupted"));
        assert!(loss.details.get_u64("received").unwrap_or(0) >= 3);
    }
}

/// `ping --rounds N` pings N times, a fresh client each round (the second
/// round failed: "the ping client was already used"); an open-ended ping is
/// one round, so `--rounds` without -c or -w is a usage error.
#[test]
fn ping_in_rounds() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let _l = our_listener(&sb, "127.0.0.1", port, &["-q"]);
    let out = two_pings(&sb, port)
        .args(["--rounds", "2", "--json", "-", "127.0.0.1"])
        .succeeds();
    let run = strict_record(&out.stdout);
    assert_eq!(run.results.len(), 2);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.bench_id, r.status);
        assert_eq!(r.details.get_u64("rounds"), Some(2), "{}", r.bench_id);
    }
    let human = stderr_of(&out);
    assert!(human.contains("2 pings transmitted, 2 received"), "{human}");
    sb.cmd()
        .args(["ping", "--no-store", "--rounds", "2", "127.0.0.1"])
        .usage_error("--rounds 2: an open-ended ping is one round");
}

/// Arguments after `ping --no-store -c 1` that are refused before anything
/// runs, and what the error must say.
const BAD_PING_ARGUMENTS: &[(&[&str], &str)] = &[
    (
        &["no-such-host.invalid"],
        "cannot resolve \"no-such-host.invalid\"",
    ),
    (
        &["--min-packet-size", "600", "127.0.0.1"],
        "--min-packet-size 600 is above --max-packet-size 512",
    ),
    (
        &["--max-packet-size", "10", "127.0.0.1"],
        "--max-packet-size 10 must be within",
    ),
    (
        &[
            "--min-packet-size",
            "20",
            "--max-packet-size",
            "40",
            "127.0.0.1",
        ],
        "too small for pinging",
    ),
    (
        &["--min-packet-size", "lots", "127.0.0.1"],
        "invalid value 'lots' for '--min-packet-size",
    ),
    (
        &["--auth-digest", "hmac-crc32", "127.0.0.1"],
        "unknown auth digest",
    ),
    (&["--auth", "", "127.0.0.1"], "--auth KEY is empty"),
    (
        &["-i", "0", "127.0.0.1"],
        "--interval 0 is not a valid time",
    ),
    (
        &["-w", "0", "127.0.0.1"],
        "--deadline 0 is not a valid time",
    ),
    (&["-4", "-6", "127.0.0.1"], "cannot be used with"),
    (&["-6", "127.0.0.1"], "has no V6 address"),
    (&["127.0.0.1", "127.0.0.1"], "given twice"),
    (&["-I", "::1", "127.0.0.1"], "different address families"),
    (&["-I", "192.0.2.77", "127.0.0.1"], "cannot bind"),
];

/// Whole command lines that are refused before anything runs, and what the
/// error must say.
const BAD_COMMAND_LINES: &[(&[&str], &str)] = &[
    (
        &["ping", "--no-store", "-c", "1", "--port", "0", "127.0.0.1"],
        "--port 0 names no listener",
    ),
    (&["listen", "--serve-port", "16001"], "--serve"),
    (
        &["listen", "--serve", "--serve-port", "0"],
        "invalid value '0' for '--serve-port <PORT>'",
    ),
    (
        &[
            "net",
            "--no-store",
            "--icmp",
            "127.0.0.1",
            "--flood-at",
            "0",
            "--flood-for",
            "1",
        ],
        "--flood-at '0': the window ended at 1970-01-01T00:00:01Z, before now",
    ),
    (
        &["ping", "--no-store", "-c", "0", "127.0.0.1"],
        "--count must be at least 1",
    ),
    (
        &["ping", "--json", "127.0.0.1", "127.0.0.2"],
        "--json takes -",
    ),
    (&["ping"], "HOST"),
    (
        &["ping", "--no-store", "-l", "0", "127.0.0.1"],
        "--preload 0 must be within 1..=1024",
    ),
    (
        &["ping", "--no-store", "--notice", "", "127.0.0.1"],
        "--notice TEXT is empty",
    ),
    (
        &["listen", "--notice", "a\nb"],
        "must not contain control characters",
    ),
    (
        &["net", "--no-store", "--icmp", "no-such-host.invalid"],
        "--icmp no-such-host.invalid: not a host to ping",
    ),
    (
        &[
            "net",
            "--no-store",
            "--icmp",
            "127.0.0.1",
            "--icmp-size",
            "8",
        ],
        "--icmp-size: ICMP payload size 8 must be within 16..=65507 bytes",
    ),
    (
        &["net", "--no-store", "--senders", "1,2"],
        "--senders sets the ICMP flood's senders: give --icmp HOST too",
    ),
    (
        &[
            "net",
            "--no-store",
            "--icmp",
            "127.0.0.1",
            "--senders",
            "2,1",
        ],
        "--senders must rise",
    ),
    (
        &["net", "--no-store", "--icmp", "127.0.0.1", "--senders", "0"],
        "--senders 0 must be within 1..=256",
    ),
    (
        &["net", "--no-store", "--connect", "127.0.0.1"],
        "--connect 127.0.0.1: give HOST:PORT",
    ),
    (
        &["net", "--no-store", "--connect", "127.0.0.1:http"],
        "is not a port number",
    ),
    (
        &["net", "--no-store", "--http", "https://example.invalid/f"],
        "only plain http:// is supported",
    ),
    (
        &["net", "--no-store", "--http", "ftp://example.invalid/f"],
        "is not an http:// URL",
    ),
    (
        &["net", "--no-store", "--http", "http://127.0.0.1:0/f"],
        "port 0 is not a port",
    ),
    (
        &["net", "--no-store", "--peer", "no-such-host.invalid"],
        "cannot resolve",
    ),
    (
        &["net", "--no-store", "--peer", "127.0.0.1:http"],
        "is not a port number",
    ),
    (
        &["net", "--no-store", "--udp-size", "8"],
        "must be within 32..=65507",
    ),
    (&["net", "--no-store", "--streams", "0"], "--streams 0"),
    (&["listen", "--serve-bind", "127.0.0.1"], "--serve"),
    (
        &[
            "net",
            "--no-store",
            "--peer",
            "127.0.0.1:9",
            "--peer-key",
            "",
        ],
        "is empty",
    ),
    (
        &["listen", "-I", "no-such-host.invalid"],
        "not an address to listen on",
    ),
    (
        &[
            "listen",
            "-I",
            "127.0.0.1",
            "--serve",
            "--serve-port",
            "15998",
        ],
        "is the 2ping port",
    ),
    (
        &["listen", "-I", "192.0.2.77", "--port", "0"],
        "-I 192.0.2.77: not an address of this machine",
    ),
];

#[test]
fn bad_input_is_a_usage_error() {
    let sb = Sandbox::new();
    for (extra, expect) in BAD_PING_ARGUMENTS {
        sb.cmd()
            .args(["ping", "--no-store", "-c", "1"])
            .args(*extra)
            .timeout(Duration::from_secs(60))
            .usage_error(expect);
    }
    for (args, expect) in BAD_COMMAND_LINES {
        sb.cmd()
            .args(*args)
            .timeout(Duration::from_secs(60))
            .usage_error(expect);
    }
    // Nothing was stored by any of them.
    assert!(!sb.db().exists());
}

/// An address that no interface of this machine has: `listen` says so
/// (for -I and for --serve-bind), lists the machine's addresses, and does
/// not suggest a busy port or missing root.
#[test]
fn listen_on_an_address_of_no_interface_says_so() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1").to_string();
    let serve = free_tcp_udp_port().to_string();
    let lines: [(Vec<&str>, &str); 2] = [
        (
            vec!["listen", "-I", "192.0.2.77", "--port", &port],
            "-I 192.0.2.77",
        ),
        (
            vec![
                "listen",
                "-I",
                "127.0.0.1",
                "--port",
                &port,
                "--serve",
                "--serve-port",
                &serve,
                "--serve-bind",
                "192.0.2.77",
                "--serve-key",
                "k",
            ],
            "--serve-bind 192.0.2.77",
        ),
    ];
    for (args, option) in lines {
        let out = sb
            .cmd()
            .args(&args)
            .timeout(Duration::from_secs(60))
            .usage_error(&format!("{option}: not an address of this machine"));
        let err = stderr_of(&out);
        assert!(
            err.contains("127.0.0.1"),
            "the addresses are not listed:\n{err}"
        );
        assert!(err.contains("ip address"), "{err}");
        assert!(!err.contains("another listener"), "{err}");
    }
}

/// Pinging a port where nothing listens: every ping draws an ICMP "port
/// unreachable", which the socket reports as "Connection refused". It is
/// said once, then counted, and the count is given at the end; the
/// statistics still count every ping lost.
#[test]
fn ping_to_a_closed_port_says_refused_once_with_a_count() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1").to_string();
    let out = sb
        .cmd()
        .args([
            "ping",
            "--no-store",
            "-c",
            "15",
            "-i",
            "0.05",
            "--linger",
            "0.5",
        ])
        .args(["--port", &port, "127.0.0.1"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("Connection refused"))
        .collect();
    assert_eq!(said.len(), 2, "said once, then counted once:\n{err}");
    let n: u64 = said[1]
        .split(" times")
        .next()
        .and_then(|h| h.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {:?}", said[1]));
    assert!(n >= 2, "{err}");
    let text = format!("{}{err}", stdout_of(&out));
    assert!(text.contains("15 pings transmitted, 0 received"), "{text}");
}

/// `results show` of a stored ping run prints 2ping's statistics with the
/// outbound/inbound loss split, as `sysgauge ping` did.
#[test]
fn results_show_of_a_ping_run_splits_the_loss() {
    let sb = Sandbox::new();
    let port = free_udp_port("127.0.0.1");
    let _l = our_listener(&sb, "127.0.0.1", port, &[]);
    sb.cmd()
        .args(["ping", "-c", "2", "-i", "0.2", "--port", &port.to_string()])
        .arg("127.0.0.1")
        .timeout(Duration::from_secs(60))
        .succeeds();
    let out = sb.cmd().args(["results", "show", "1"]).succeeds();
    let text = stdout_of(&out);
    assert!(
        text.contains("2 pings transmitted, 2 received, 0% ping loss")
            && text.contains("0 outbound ping losses (0%), 0 inbound (0%), 0 undetermined (0%)"),
        "{text}"
    );
}

/// A windowed ICMP flood (`--flood-at`, as `fleet net --icmp` runs it on
/// each host) on loopback, where a reply is always waiting when it looks,
/// stops within seconds of SIGTERM: it once flooded on to its window's end.
#[test]
fn sigterm_stops_a_windowed_icmp_flood_within_seconds() {
    let sb = Sandbox::new();
    let epoch = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let at = epoch(std::time::SystemTime::now()).as_secs() + 4;
    // Nothing is printed before the window's case ends: the signal goes
    // by the clock.
    let run = sysgauge_testkit::Interrupt::after("[1/")
        .with_signal(libc::SIGTERM)
        .waiting_up_to(Duration::ZERO)
        .exiting_within(Duration::from_secs(5))
        .run(
            sb.std_cmd()
                .args(["net", "--icmp", "127.0.0.1", "--senders", "1"])
                .args(["--flood-at", &at.to_string(), "--flood-for", "60"])
                .arg("--db")
                .arg(sb.db()),
            |_, _| {
                // Into the window: the flood is on.
                while epoch(std::time::SystemTime::now()).as_secs_f64() < at as f64 + 2.0 {
                    std::thread::sleep(Duration::from_millis(50));
                }
            },
        );
    assert_eq!(run.status.code(), Some(143), "{}", run.log);
    assert!(run.stopped_after < Duration::from_secs(5), "{run:?}");
    assert!(
        !run.log.contains("pkt/s"),
        "a flood cut off is no result: {}",
        run.log
    );
}
