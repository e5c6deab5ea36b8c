//! 2ping fidelity between real hosts (network namespaces joined by a veth
//! pair) and on a name with both address families:
//!
//! - a flood between two sysgauge hosts that share a key (`sysgauge ping
//!   -f -l 32 --auth` against `sysgauge listen --auth` with its default
//!   per-source limit of 5000 datagrams/s, far below the flood) loses no
//!   ping, nor does the flood with one ping in flight (`-f` alone, the
//!   reference's flood): the authenticated client is exempt from the limit, and the
//!   listener says how many datagrams over the limit it answered. The same
//!   flood without a key is cut by the limit (the listener counts drops),
//!   which shows the limit was really in play. The reference `2ping -f`
//!   floods the same pair for the same time; both rates are printed (speed
//!   is recorded in docs/performance.md, not asserted here);
//! - `listen -I NAME` binds every address the name resolves to, IPv4 and
//!   IPv6 (the name is defined in a private /etc/hosts, bind-mounted in a
//!   mount namespace of the listener alone), and both answer;
//! - the peers' program versions and notices are shown on both sides.
//!
//! Bounded: counts and deadlines on every client, every wait has a
//! timeout, the processes are killed on drop and the namespaces deleted.
//! Needs root, `ip`, `unshare` and `2ping`; skips without them, fails under
//! SYSGAUGE_REQUIRE_ALL=1.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{in_ns, run_bounded, strict_record, sysgauge_bin, Sandbox};
use std::process::Command;
use std::time::{Duration, Instant};
use sysgauge_core::ResultRecord;
use sysgauge_testkit::netns::VethPair;
use sysgauge_testkit::{free_udp_port, is_root, on_path, ChildGuard};

const READY: Duration = Duration::from_secs(20);
/// Pings of the authenticated flood.
const FLOOD_COUNT: u64 = 20_000;
/// Pings in flight during the flood.
const PRELOAD: &str = "32";
/// Pings of the authenticated flood with one ping in flight.
const FLOOD_ONE_COUNT: u64 = 5_000;
const KEY: &str = "netns-flood-key";

fn requirements(test: &str) -> bool {
    sysgauge_testkit::require(
        &format!("{test}: needs root, `ip`, `unshare` and `2ping`"),
        is_root() && on_path("ip") && on_path("unshare") && on_path("2ping"),
        "run as root with iproute2, util-linux and 2ping installed (apt-get install -y iproute2 util-linux 2ping)",
    )
}

/// The listener in namespace `ns` on `addr`, with `extra` options.
fn listener(ns: &str, addr: &str, port: u16, extra: &[&str]) -> ChildGuard {
    let port = port.to_string();
    let mut args = vec!["listen", "-q", "-I", addr, "--port", &port, "-w", "300"];
    args.extend_from_slice(extra);
    ChildGuard::spawn_ready(
        &mut in_ns(ns, &sysgauge_bin(), &args),
        "2PING listener",
        READY,
    )
}

/// A keyed flood of `count` pings from namespace a to b's listener on
/// `port` (`extra` options added): its loss result, what it printed on
/// stderr, and its pings a second.
fn keyed_flood(
    pair: &VethPair,
    port: &str,
    count: u64,
    extra: &[&str],
) -> (ResultRecord, String, f64) {
    let started = Instant::now();
    let count_s = count.to_string();
    let mut args = vec!["ping", "-f", "-c", &count_s, "--auth", KEY, "--port", port];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--no-store", "--json", "-", &pair.v4_b]);
    let out = run_bounded(
        in_ns(&pair.a, &sysgauge_bin(), &args),
        Duration::from_secs(240),
    );
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let loss = strict_record(&out.stdout)
        .results
        .into_iter()
        .find(|r| r.bench_id == "net.ping-loss")
        .unwrap();
    (loss, stderr, count as f64 / seconds)
}

/// SIGINT, then everything it printed.
fn stop(mut l: ChildGuard) -> String {
    l.interrupt();
    let status = l.wait_exit(Duration::from_secs(20));
    let out = l.output();
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{out}");
    out
}

/// The number before `label` in `text` ("12 datagrams over").
fn number_before(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

/// The number after `label` in `text` ("rate limited 12").
fn number_after(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)? + label.len();
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())?
        .parse()
        .ok()
}

#[test]
fn authenticated_flood_between_sysgauge_hosts_loses_nothing_to_the_rate_limit() {
    if !requirements("2ping netns flood") {
        return;
    }
    // Its floods fill the CPUs: a share of the machine, so that no test
    // that has it alone (and measures it) runs beside them.
    let _machine = Sandbox::new();
    let pair = VethPair::new("tp", 217);
    // A fresh namespace: the default port is free.
    let port = 15998;
    let port_s = port.to_string();

    // With the key: no loss, the exemption at work.
    let l = listener(
        &pair.b,
        &pair.v4_b,
        port,
        &["--auth", KEY, "--notice", "listener in b"],
    );
    let (loss, stderr, ours) = keyed_flood(
        &pair,
        &port_s,
        FLOOD_COUNT,
        &["-l", PRELOAD, "--notice", "client in a"],
    );
    let d = &loss.details;
    assert_eq!(d.get_u64("transmitted"), Some(FLOOD_COUNT), "{stderr}");
    assert_eq!(
        d.get_u64("received"),
        Some(FLOOD_COUNT),
        "lost pings:\n{stderr}"
    );
    assert_eq!(d.get_str("peer_notice"), Some("listener in b"));
    assert!(
        d.get_str("peer_version")
            .is_some_and(|v| v.starts_with("sysgauge-twoping")),
        "{d:?}"
    );
    assert_eq!(loss.params.get_u64("preload"), Some(32));
    assert!(stderr.contains("Peer notice (10.217."), "{stderr}");

    // One ping in flight, same listener and key: no loss either.
    let (loss, stderr, ours_one) = keyed_flood(&pair, &port_s, FLOOD_ONE_COUNT, &[]);
    let d = &loss.details;
    assert_eq!(d.get_u64("transmitted"), Some(FLOOD_ONE_COUNT), "{stderr}");
    assert_eq!(
        d.get_u64("received"),
        Some(FLOOD_ONE_COUNT),
        "lost pings with one in flight:\n{stderr}"
    );
    assert_eq!(loss.params.get_u64("preload"), None);
    let summary = stop(l);
    assert_eq!(
        number_after(&summary, "rate limited "),
        Some(0),
        "{summary}"
    );
    let exempt = number_before(&summary, "datagrams over the rate limit answered").unwrap_or(0);
    assert!(
        exempt > 0,
        "the flood never went over the limit:\n{summary}"
    );
    assert!(summary.contains("peer notice: client in a"), "{summary}");

    // Without the key the same limit drops the flood's excess.
    let l = listener(&pair.b, &pair.v4_b, port, &[]);
    let out = run_bounded(
        in_ns(
            &pair.a,
            &sysgauge_bin(),
            &[
                "ping",
                "-f",
                "-l",
                PRELOAD,
                "-w",
                "2",
                "--linger",
                "0",
                "--port",
                &port_s,
                "--no-store",
                &pair.v4_b,
            ],
        ),
        Duration::from_secs(60),
    );
    let unkeyed = String::from_utf8_lossy(&out.stdout).to_string();
    let summary = stop(l);
    let limited = number_after(&summary, "rate limited ").unwrap_or(0);
    assert!(
        limited > 0,
        "an unauthenticated flood was not limited:\n{unkeyed}\n{summary}"
    );

    // The reference program's own flood on the same pair, for the record.
    let reference = ChildGuard::spawn_ready(
        &mut in_ns(
            &pair.b,
            "2ping",
            &[
                "--listen", "-4", "-I", &pair.v4_b, "--port", &port_s, "--auth", KEY,
            ],
        ),
        "2PING listener",
        READY,
    );
    let out = run_bounded(
        in_ns(
            &pair.a,
            "2ping",
            &[
                "-f", "-q", "-w", "5", "--port", &port_s, "--auth", KEY, &pair.v4_b,
            ],
        ),
        Duration::from_secs(60),
    );
    drop(reference);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let theirs = number_before(&text, "pings transmitted").unwrap_or(0) as f64 / 5.0;
    eprintln!(
        "flood between namespaces: sysgauge {ours:.0} pings/s (preload {PRELOAD}, {FLOOD_COUNT} pings, no loss), {ours_one:.0} pings/s (one in flight, {FLOOD_ONE_COUNT} pings, no loss), reference 2ping -f {theirs:.0} pings/s (this build's profile: {})",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
}

#[test]
fn listen_on_a_name_binds_both_families_and_both_answer() {
    if !requirements("listen -I NAME") {
        return;
    }
    let sb = Sandbox::new();
    let hosts = sb.path().join("hosts");
    std::fs::write(
        &hosts,
        "127.0.0.1 localhost\n127.0.0.1 sgdual.test\n::1 sgdual.test\n",
    )
    .unwrap();
    let port = free_udp_port("127.0.0.1").to_string();
    // A private mount namespace: only the listener sees this /etc/hosts.
    let script = format!(
        "mount --bind {} /etc/hosts && exec {} listen -I sgdual.test --port {port} -w 120 --notice dual",
        hosts.display(),
        sysgauge_bin()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("HOME", sb.path());
    let mut l = ChildGuard::spawn_ready(&mut cmd, "2PING listener", READY);
    // The second address's line follows the first at once.
    assert!(
        l.wait_for_line("2PING listener", Duration::from_secs(5)),
        "only one address bound: {}",
        l.output()
    );
    let text = l.output();
    assert!(text.contains(&format!("(127.0.0.1:{port})")), "{text}");
    assert!(text.contains(&format!("([::1]:{port})")), "{text}");
    for addr in ["127.0.0.1", "::1"] {
        let out = run_bounded(
            {
                let mut c = sb.std_cmd();
                c.args([
                    "ping",
                    "-c",
                    "2",
                    "-i",
                    "0.1",
                    "--port",
                    &port,
                    "--no-store",
                    addr,
                ]);
                c
            },
            Duration::from_secs(60),
        );
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{addr}: {stdout}");
        assert!(stdout.contains("2 received"), "{addr}: {stdout}");
        assert!(
            stdout.contains(&format!("Peer notice ({addr}): dual")),
            "{stdout}"
        );
    }
    let summary = stop(l);
    assert_eq!(
        summary.matches("(client) 2ping statistics").count(),
        2,
        "{summary}"
    );
}
