//! `sysgauge net --icmp` against a host that runs no sysgauge at all: a
//! network namespace at the far end of a veth pair, answering echoes with
//! nothing but its kernel. Once as it is (the flood rate must be far above
//! the limit of the second run, and the round trip measured), once with an
//! nftables rule in the far namespace that drops echo requests above a
//! fixed rate: the flood's measured reply rate must come close under that
//! rate (in one of three runs) and never more than 10 % over it, over IPv4
//! and IPv6 (link-local, with its zone).
//!
//! Bounded: quick profile, fixed repetitions and sender counts, at most
//! three limited runs per address, each run killed after a deadline; the namespaces (and the rule with them) are
//! deleted by the VethPair guard on every exit path. Needs root, `ip` and
//! `nft`; skips without them and fails under SYSGAUGE_REQUIRE_ALL=1.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{strict_record, Sandbox};
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use sysgauge_core::{RunRecord, Status};
use sysgauge_testkit::netns::{in_netns, VethPair, LINK_LOCAL_B};
use sysgauge_testkit::{is_root, on_path};

/// The far end's echo-request limit, per second.
const LIMIT: f64 = 2000.0;
/// Longest run of the binary.
const RUN_DEADLINE: Duration = Duration::from_secs(240);

fn requirements(test: &str) -> bool {
    sysgauge_testkit::require(
        &format!("{test}: needs root, `ip` and `nft`"),
        is_root() && on_path("ip") && on_path("nft"),
        "run as root with iproute2 and nftables installed (apt-get install -y iproute2 nftables)",
    )
}

/// Runs `sysgauge ARGS` inside namespace `ns`, its record on stdout; killed
/// after the deadline.
fn sysgauge_in(sb: &Sandbox, ns: &str, args: &[&str]) -> Output {
    let mut cmd = sb.std_cmd();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = in_netns(ns, move || cmd.spawn())
        .join()
        .unwrap()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let id = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output());
    let end = Instant::now() + RUN_DEADLINE;
    while !waiter.is_finished() {
        if Instant::now() > end {
            // SAFETY: kill with a pid we spawned and have not reaped.
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
            panic!("sysgauge {args:?} ran over {} s", RUN_DEADLINE.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    waiter.join().unwrap().unwrap()
}

/// A flood and a round trip to `target` from namespace `a`, with one and
/// two senders, as a strict run record.
fn icmp_run(sb: &Sandbox, ns: &str, target: &str) -> RunRecord {
    let out = sysgauge_in(
        sb,
        ns,
        &[
            "net",
            "--icmp",
            target,
            "--senders",
            "1,2",
            "--profile",
            "quick",
            "--repetitions",
            "3",
            "--no-store",
            "--json",
            "-",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "sysgauge net failed:\n{stderr}");
    let run = strict_record(&out.stdout);
    eprintln!("{stderr}");
    run
}

/// The value of `id`'s primary metric with `senders` (if given), which
/// must have succeeded.
fn value(run: &RunRecord, id: &str, senders: Option<u64>) -> f64 {
    let r = run
        .results
        .iter()
        .find(|r| {
            r.bench_id == id && senders.is_none_or(|s| r.params.get_u64("senders") == Some(s))
        })
        .unwrap_or_else(|| panic!("no {id} result"));
    assert!(matches!(r.status, Status::Ok), "{id}: {:?}", r.status);
    r.primary().unwrap().value()
}

fn limit_echo_requests(ns: &str) {
    let rules = format!(
        "table inet sgicmp {{\n\
           chain input {{\n\
             type filter hook input priority 0; policy accept;\n\
             icmp type echo-request limit rate over {l}/second burst 20 packets drop\n\
             icmpv6 type echo-request limit rate over {l}/second burst 20 packets drop\n\
           }}\n\
         }}\n",
        l = LIMIT as u64
    );
    let mut nft = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    nft.stdin
        .take()
        .unwrap()
        .write_all(rules.as_bytes())
        .unwrap();
    assert!(nft.wait().unwrap().success(), "nft refused the rules");
}

#[test]
fn icmp_rate_and_rtt_to_a_namespace_with_and_without_an_nftables_limit() {
    if !requirements("icmp netns test") {
        return;
    }
    let pair = VethPair::new("ic", 216);
    // Alone: a sender that shares the CPUs with other tests falls short of
    // the far end's limit.
    let sb = Sandbox::alone();
    let v6 = format!("{LINK_LOCAL_B}%{}", pair.if_a);
    let targets = [pair.v4_b.clone(), v6];

    let mut free = Vec::new();
    for t in &targets {
        let run = icmp_run(&sb, &pair.a, t);
        let rtt = value(&run, "net.icmp-rtt", None);
        assert!(rtt > 0.0 && rtt < 100_000.0, "{t}: rtt {rtt} us");
        free.push(value(&run, "net.icmp-pps", Some(1)));
    }

    limit_echo_requests(&pair.b);
    // How far a run fell short of the limit: a rate is a measurement, and a
    // sender that neighbouring tests starve of its CPU leaves some of the
    // far end's tokens unused. The sender's own pauses count against the
    // rate, so close under the limit is right; one of three runs must show it.
    let short = |run: &RunRecord| -> Vec<String> {
        let mut found = Vec::new();
        let one = value(run, "net.icmp-pps", Some(1));
        if one < 0.8 * LIMIT {
            found.push(format!("1 sender: {one:.0} replies/s"));
        }
        let two = value(run, "net.icmp-pps", Some(2));
        if two < 0.9 * LIMIT {
            found.push(format!("2 senders: {two:.0} replies/s"));
        }
        found
    };
    for (t, unlimited) in targets.iter().zip(free) {
        assert!(
            unlimited > 2.0 * LIMIT,
            "{t}: without the limit only {unlimited:.0} replies/s, too close to the limit for the test to mean anything"
        );
        let mut run = icmp_run(&sb, &pair.a, t);
        for _ in 0..2 {
            if short(&run).is_empty() {
                break;
            }
            run = icmp_run(&sb, &pair.a, t);
        }
        let found = short(&run);
        assert!(
            found.is_empty(),
            "{t}: {found:?} under a limit of {LIMIT}/s, in three runs"
        );
        let rate = value(&run, "net.icmp-pps", Some(1));
        eprintln!("{t}: {unlimited:.0} echo replies/s without the limit, {rate:.0} with a limit of {LIMIT}/s");
        // The limit is a ceiling: at most 10 % over it (its burst), with
        // one sender or two (two add nothing when the far end sets the rate).
        for senders in [1, 2] {
            let r = value(&run, "net.icmp-pps", Some(senders));
            assert!(
                r <= 1.1 * LIMIT,
                "{t}: {senders} sender(s) measured {r:.0} replies/s, the far end's limit is {LIMIT}/s"
            );
        }
        // The round trip is still measured: it is paced below the limit.
        assert!(value(&run, "net.icmp-rtt", None) > 0.0);
        // Whatever the limit dropped was counted lost, not as replies.
        let flood = run
            .results
            .iter()
            .find(|r| r.bench_id == "net.icmp-pps")
            .unwrap();
        assert!(
            flood.details.get_u64("lost").unwrap_or(0) > 0,
            "{t}: nothing lost under the limit"
        );
        // Both directions' rates: requests go out faster than the limit
        // lets replies back.
        let per_s = |k: &str| flood.details.get_int(k).unwrap_or(0) as f64;
        assert_eq!(
            flood.details.get_str("counts"),
            Some("echo replies received per second")
        );
        let (req, rep) = (per_s("requests_per_s"), per_s("replies_per_s"));
        assert!(
            rep > 0.0 && rep <= 1.2 * LIMIT && req > rep,
            "{t}: {req:.0} requests/s, {rep:.0} replies/s under a limit of {LIMIT}/s"
        );
    }
}
