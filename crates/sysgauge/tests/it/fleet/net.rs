//! `fleet net`: the network matrix over a lossy direction, and the flood that
//! adds hosts until the reply rate stops rising.

use super::{available, runs, sysgauge, Lab};
use crate::common::{await_line, ctrl_c_exits_130, stderr_of, stdout_of, Sandbox};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use sysgauge_net::net::ping::PingBenchmark;
use sysgauge_testkit::{on_path, output_of_success, processes_mentioning, require, ChildGuard};

/// 2ping's UDP port, which the loss rule below matches.
const TWOPING_PORT: u16 = 15998;

/// Drops `percent` % of the 2ping packets that leave namespace `ns` for
/// `v4` or `v6` (both ways of 2ping's exchange: its pings to the peer's
/// listener and its replies to the peer's pings), and nothing else: one
/// direction of one pair.
fn drop_2ping_towards(ns: &str, v4: &str, v6: &str, percent: u32) {
    let mut rules = String::new();
    for (family, address) in [("ip", v4), ("ip6", v6)] {
        for port in ["dport", "sport"] {
            rules.push_str(&format!(
                "    {family} daddr {address} udp {port} {TWOPING_PORT} numgen random mod 100 < {percent} drop\n"
            ));
        }
    }
    let ruleset = format!(
        "table inet sgloss {{\n  chain out {{\n    type filter hook output priority 0; policy accept;\n{rules}  }}\n}}\n"
    );
    nft_in(ns, &ruleset);
}

/// Loads an nftables `ruleset` in namespace `ns`.
fn nft_in(ns: &str, ruleset: &str) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), ruleset.as_bytes()).unwrap();
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success(), "nft refused:\n{ruleset}");
}

/// The fleet lab and nft are there (or the test is skipped, or fails under
/// `SYSGAUGE_REQUIRE_ALL=1`); `test` names the test in the note.
fn lab_with_nft(test: &str) -> bool {
    available()
        && require(
            &format!("{test} needs nft"),
            on_path("nft"),
            "apt-get install -y nftables",
        )
}

/// `fleet net` over the hosts listed in `inventory`, with `options`,
/// storing into the sandbox's database.
fn fleet_net(lab: &Lab, sb: &Sandbox, inventory: &Path, options: &[&str]) -> std::process::Output {
    let inventory = inventory.display().to_string();
    let mut args = vec!["--inventory", &inventory];
    args.extend(options);
    lab.fleet_action(sb.db().as_os_str(), "net", &args)
        .output()
        .unwrap()
}

/// The matrices `fleet net --format json` printed, as name → cells.
fn matrix_cells(out: &std::process::Output) -> (Vec<String>, serde_json::Value) {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", stdout_of(out), stderr_of(out)));
    assert_eq!(doc["schema_version"], 1);
    let hosts: Vec<String> = serde_json::from_value(doc["hosts"].clone()).unwrap();
    let mut by_name = serde_json::Map::new();
    for m in doc["matrices"].as_array().unwrap() {
        by_name.insert(m["name"].as_str().unwrap().to_string(), m["cells"].clone());
    }
    (hosts, serde_json::Value::Object(by_name))
}

#[test]
fn network_matrix_finds_the_one_lossy_direction_over_ipv4_and_ipv6() {
    if !lab_with_nft("the network matrix test") {
        return;
    }
    let mut lab = Lab::with_hosts(4);
    let v6 = |i: usize| format!("fd00:213::{:x}", 0x10 + i);
    for (i, h) in lab.hosts.iter_mut().enumerate() {
        output_of_success(Command::new("ip").args([
            "-n",
            &h.ns,
            "addr",
            "add",
            &format!("{}/64", v6(i)),
            "dev",
            "eth0",
            "nodad",
        ]));
        h.start();
    }
    // alpha → bravo loses 30 % of its 2ping packets; nothing else does.
    drop_2ping_towards(&lab.hosts[0].ns, &lab.hosts[1].address, &v6(1), 30);
    let names = ["alpha", "bravo", "charlie", "delta"];
    for family in ["ipv4", "ipv6"] {
        let mut inv = String::from("# the matrix lab\n");
        for (i, name) in names.iter().enumerate() {
            let net = if family == "ipv6" {
                format!(" net_address={}", v6(i))
            } else {
                String::new()
            };
            inv.push_str(&format!(
                "{} name={name} room=r{i}{net}\n",
                lab.hosts[i].address
            ));
        }
        let file = lab.dir.path().join(format!("{family}.txt"));
        std::fs::write(&file, inv).unwrap();
        let sb = Sandbox::new();
        let t0 = Instant::now();
        let out = fleet_net(
            &lab,
            &sb,
            &file,
            &[
                "--profile",
                "tiny",
                "--pings",
                "300",
                "--ping-interval",
                "0.02",
                "--format",
                "json",
                "--timeout",
                "300",
            ],
        );
        assert!(t0.elapsed() < Duration::from_secs(400));
        assert_eq!(out.status.code(), Some(0), "{family}: {}", stderr_of(&out));
        let (hosts, cells) = matrix_cells(&out);
        assert_eq!(hosts, names);
        for (f, from) in names.iter().enumerate() {
            for (t, to) in names.iter().enumerate() {
                let cell = |m: &str| cells[m][f][t].as_f64();
                if f == t {
                    assert!(cell("loss").is_none(), "{family}: a host to itself");
                    continue;
                }
                let loss = cell("loss").unwrap_or_else(|| panic!("{family}: {from} → {to}"));
                if (f, t) == (0, 1) {
                    // 300 probes at 30 %: 90 ± 8 expected; far outside by
                    // chance is less likely than one in a million.
                    assert!(
                        (15.0..=45.0).contains(&loss),
                        "{family}: {from} → {to} lost {loss} %"
                    );
                } else {
                    assert!(loss < 1.0, "{family}: {from} → {to} lost {loss} %");
                }
                for m in ["rtt", "tcp-throughput", "udp-rate"] {
                    let v = cell(m).unwrap_or_else(|| panic!("{family}: no {m} {from} → {to}"));
                    assert!(v > 0.0, "{family}: {m} {from} → {to} = {v}");
                }
            }
        }
        // One run per host, its results named by peer, tied by the tag,
        // each of the matrix's profile (a host whose first record was its
        // pings' once got `quick`).
        let runs = runs(&sb);
        assert_eq!(runs.len(), 4, "{runs:?}");
        for r in &runs {
            assert_eq!(r["profile"], "tiny", "{family}: {r}");
        }
        // The stored matrix prints again, in another format.
        let shown = sysgauge(&sb, &["fleet", "net", "--show", "--format", "csv"]);
        assert!(shown.status.success(), "{}", stderr_of(&shown));
        let csv = stdout_of(&shown);
        assert!(csv.starts_with("matrix,unit,from,to,value\n"), "{csv}");
        assert!(csv.contains("\nloss,%,alpha,bravo,"), "{csv}");
        let png = sb.path().join("loss.png");
        let chart = sysgauge(
            &sb,
            &[
                "chart",
                "--kind",
                "net-loss",
                "--png",
                &png.display().to_string(),
            ],
        );
        assert!(chart.status.success(), "{}", stderr_of(&chart));
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
        // SYSGAUGE_MATRIX_OUT=DIR keeps the database (docs/fleet.md's
        // matrix and heatmaps come from it).
        if let Some(dir) = std::env::var_os("SYSGAUGE_MATRIX_OUT") {
            std::fs::copy(sb.db(), Path::new(&dir).join(format!("matrix-{family}.db"))).unwrap();
        }
        let html = sb.path().join("net.html");
        let report = sysgauge(&sb, &["report", &html.display().to_string()]);
        assert!(report.status.success(), "{}", stderr_of(&report));
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("data-chart=\"net-loss\""), "no loss heatmap");
        let text = sysgauge(&sb, &["results", "export", "1", "--format", "json"]);
        let run: serde_json::Value = serde_json::from_slice(&text.stdout).unwrap();
        assert!(run["tags"]["fleet_net"].is_string(), "{}", run["tags"]);
        assert!(run["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["params"]["peer"].is_string() && r["params"]["direction"].is_string()));
        // The listeners are gone, and so is everything put on the hosts.
        assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
    }
}

#[test]
fn a_fleet_flood_adds_hosts_until_the_reply_rate_stops_rising() {
    if !lab_with_nft("the fleet flood test") {
        return;
    }
    // Four hosts with sshd; the fifth namespace runs nothing but its
    // network stack, and answers at most LIMIT echo requests a second.
    const LIMIT: f64 = 1500.0;
    let mut lab = Lab::with_hosts(5);
    lab.start_first(4);
    let target = lab.hosts[4].address.clone();
    let ruleset = format!(
        "table inet sglimit {{\n  chain in {{\n    type filter hook input priority 0; policy accept;\n    \
         icmp type echo-request limit rate over {LIMIT}/second burst 50 packets drop\n  }}\n}}\n"
    );
    nft_in(&lab.hosts[4].ns, &ruleset);
    let mut inv = String::new();
    for (i, name) in ["alpha", "bravo", "charlie", "delta"].iter().enumerate() {
        inv.push_str(&format!("{} name={name}\n", lab.hosts[i].address));
    }
    let file = lab.dir.path().join("flood.txt");
    std::fs::write(&file, inv).unwrap();
    // Alone: senders sharing the CPUs with other tests fall short of the
    // target's limit.
    let sb = Sandbox::alone();
    let out = fleet_net(
        &lab,
        &sb,
        &file,
        &["--icmp", &target, "--profile", "quick", "--timeout", "300"],
    );
    let (table, log) = (stdout_of(&out), stderr_of(&out));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{table}\n{log}");
    // Rows: hosts flooding, senders, replies/s, per host, overlap.
    let steps: Vec<(usize, f64)> = table
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            Some((cols.first()?.parse().ok()?, cols.get(2)?.parse().ok()?))
        })
        .collect();
    // The limit is reached by one host: two hosts give no more, and the
    // flood stops there instead of going on to four.
    assert_eq!(
        steps.iter().map(|s| s.0).collect::<Vec<_>>(),
        [1, 2],
        "{table}\n{log}"
    );
    for (k, rate) in &steps {
        // The limit is a ceiling: at most 10 % over it (its burst), and
        // close under it (the senders' own pauses count against the rate).
        assert!(
            (LIMIT * 0.8..=LIMIT * 1.1).contains(rate),
            "{k} host(s): {rate} replies/s against a limit of {LIMIT}\n{table}\n{log}"
        );
    }
    assert!(log.contains("the reply rate stopped rising"), "{log}");
    // Shown with --nocapture (docs/fleet.md quotes it).
    println!("{table}{log}");
    // alpha flooded in both steps, bravo in the second: their runs.
    let runs = runs(&sb);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
}

/// A matrix cut off by Ctrl-C stores its hosts' partial runs as
/// interrupted, and `--show` then prints the newest complete matrix and
/// says how to see the partial one (it once printed nothing, exit 0).
#[test]
fn an_interrupted_matrix_is_stored_interrupted_and_not_shown_by_default() {
    if !available() {
        return;
    }
    let lab = Lab::running(3);
    let mut inv = String::new();
    for (i, name) in ["alpha", "bravo", "charlie"].iter().enumerate() {
        inv.push_str(&format!("{} name={name}\n", lab.hosts[i].address));
    }
    let file = lab.dir.path().join("three.txt");
    std::fs::write(&file, inv).unwrap();
    let sb = Sandbox::new();
    let quick_pings = ["--pings", "10", "--ping-interval", "0.02"];
    let mut options = vec!["--no-throughput"];
    options.extend(quick_pings);
    let out = fleet_net(&lab, &sb, &file, &options);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let log = stderr_of(&out);
    let complete = log
        .split("; matrix ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{log}"))
        .to_string();
    assert_eq!(runs(&sb).len(), 3);
    // The second, with throughput rounds, stopped in its second round.
    let inventory = file.display().to_string();
    let mut args = vec!["--inventory", inventory.as_str(), "--profile", "quick"];
    args.extend(quick_pings);
    let mut cmd = lab.fleet_action(sb.db().as_os_str(), "net", &args);
    let mut run = ChildGuard::spawn(&mut cmd);
    await_line(&mut run, ": round 2/", Duration::from_secs(240));
    ctrl_c_exits_130(&mut run, Duration::from_secs(90));
    // Every pair the cut left unmeasured is named, not only the one that
    // was running: round 1 measured 2 of the 6 ordered pairs at most.
    let log = run.output();
    let unmeasured = log
        .lines()
        .filter(|l| l.contains(" → ") && l.contains("not measured: the matrix was interrupted"))
        .count();
    assert!(unmeasured >= 3, "{log}");
    let stored = runs(&sb);
    let partial: Vec<&serde_json::Value> = stored
        .iter()
        .filter(|r| r["id"].as_i64() > Some(3))
        .collect();
    assert_eq!(partial.len(), 3, "{stored:?}");
    for r in &partial {
        assert_eq!(r["status"], "interrupted", "{r}");
        assert_eq!(r["profile"], "quick", "{r}");
    }
    let shown = sysgauge(&sb, &["fleet", "net", "--show", "--format", "csv"]);
    let log = stderr_of(&shown);
    assert!(shown.status.success(), "{log}");
    assert!(
        log.contains(&format!("fleet net: matrix {complete}, 3 hosts")),
        "{log}"
    );
    assert!(
        log.contains("was interrupted and is stored in part"),
        "{log}"
    );
    assert!(
        stdout_of(&shown).contains("\nrtt,"),
        "{}",
        stdout_of(&shown)
    );
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
}

/// Starts `fleet net` with `args`, waits for `line` and a moment more, and
/// sends SIGTERM while something runs on the hosts: how long it took to
/// exit, how it exited, and what it printed.
fn terminate_mid_run(
    lab: &Lab,
    sb: &Sandbox,
    args: &[&str],
    line: &str,
    settle: Duration,
) -> (Duration, Option<i32>, String) {
    signal_mid_run(lab, sb, args, line, settle, libc::SIGTERM)
}

/// [`terminate_mid_run`] with another `signal`.
fn signal_mid_run(
    lab: &Lab,
    sb: &Sandbox,
    args: &[&str],
    line: &str,
    settle: Duration,
    signal: i32,
) -> (Duration, Option<i32>, String) {
    let mut cmd = lab.fleet_action(sb.db().as_os_str(), "net", args);
    let mut run = ChildGuard::spawn(&mut cmd);
    await_line(&mut run, line, Duration::from_secs(240));
    std::thread::sleep(settle);
    assert!(
        !on_hosts(lab).is_empty(),
        "nothing runs on the hosts:\n{}",
        run.output()
    );
    let pid = i32::try_from(run.pid()).unwrap();
    // SAFETY: kill(2) on our unreaped child: its pid cannot be reused.
    unsafe { libc::kill(pid, signal) };
    let t0 = Instant::now();
    let status = run.wait_exit(Duration::from_secs(90));
    let took = t0.elapsed();
    eprintln!("fleet net {args:?} ended {took:?} after signal {signal}");
    (took, status.and_then(|s| s.code()), run.output())
}

/// What runs from the fleet's directories on the lab's hosts (and the
/// fleet's own ssh clients, whose command lines name them).
fn on_hosts(lab: &Lab) -> Vec<String> {
    processes_mentioning(&lab.tmp().display().to_string())
        .into_iter()
        .map(|p| p.cmdline)
        .collect()
}

/// An inventory of the lab's first `names.len()` hosts, written to `file`.
fn inventory_of(lab: &Lab, names: &[&str], file: &str) -> String {
    let mut inv = String::new();
    for (i, name) in names.iter().enumerate() {
        inv.push_str(&format!("{} name={name}\n", lab.hosts[i].address));
    }
    let path = lab.dir.path().join(file);
    std::fs::write(&path, inv).unwrap();
    path.display().to_string()
}

/// SIGTERM in the middle of a pair test: the matrix stops within seconds
/// (it once took 11 s: the hosts' clean-up waited out both of its grace
/// periods for the listeners' ssh clients, stopped but not yet reaped),
/// exits 143, stores what came home as interrupted, and leaves nothing
/// running or lying on the hosts.
#[test]
fn a_terminated_matrix_stops_within_seconds_and_cleans_the_hosts() {
    if !available() {
        return;
    }
    let lab = Lab::running(3);
    let inventory = inventory_of(&lab, &["alpha", "bravo", "charlie"], "three.txt");
    let sb = Sandbox::new();
    // Pings for the whole run, and pair tests of several seconds each;
    // round 1 (one pair of three hosts) has come home by round 2.
    let args = [
        "--inventory",
        inventory.as_str(),
        "--profile",
        "quick",
        "--pings",
        "2000",
        "--ping-interval",
        "0.05",
    ];
    let (took, code, log) =
        terminate_mid_run(&lab, &sb, &args, ": round 2/", Duration::from_secs(1));
    assert_eq!(code, Some(143), "{log}");
    // A generous bound for a loaded machine; it takes about a second.
    assert!(
        took < Duration::from_secs(5),
        "{took:?} after SIGTERM:\n{log}"
    );
    // Every host's pings came home, stopped: a run each.
    let stored = runs(&sb);
    assert_eq!(stored.len(), 3, "{log}");
    for r in &stored {
        assert_eq!(r["status"], "interrupted", "{r}");
    }
    assert!(log.contains("stored as interrupted"), "{log}");
    hosts_are_clean(&lab);
}

/// Ctrl-C, and SIGTERM, while the hosts ping (for minutes, had they been
/// let): the matrix stops within the same few seconds, and each host's
/// pings, asked to stop, send home what they measured, stored as an
/// interrupted run with its round trips to every peer. They were killed
/// with their ssh and lost.
#[test]
fn a_stopped_matrix_keeps_what_the_hosts_pinged() {
    if !available() {
        return;
    }
    let lab = Lab::running(3);
    let names = ["alpha", "bravo", "charlie"];
    let inventory = inventory_of(&lab, &names, "three.txt");
    let args = pings_only(&inventory);
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let sb = Sandbox::new();
        let (took, status, log) = signal_mid_run(
            &lab,
            &sb,
            &args,
            ": pinging every other host",
            Duration::from_secs(3),
            signal,
        );
        assert_eq!(status, Some(code), "signal {signal}:\n{log}");
        assert!(
            took < Duration::from_secs(5),
            "{took:?} after signal {signal}:\n{log}"
        );
        pings_kept(&sb, &names, &log, "the interruption");
        hosts_are_clean(&lab);
    }
}

/// A matrix ended by `--timeout` while the hosts ping keeps their pings
/// too, stopped in the same way, and exits 1 (not everything measured).
#[test]
fn a_matrix_ended_by_its_timeout_keeps_what_the_hosts_pinged() {
    if !available() {
        return;
    }
    let lab = Lab::running(3);
    let names = ["alpha", "bravo", "charlie"];
    let inventory = inventory_of(&lab, &names, "three.txt");
    let sb = Sandbox::new();
    // Placing takes a few seconds; the pings get the rest of the 30.
    let t0 = Instant::now();
    let out = lab
        .fleet_action(
            sb.db().as_os_str(),
            "net",
            &[pings_only(&inventory).as_slice(), &["--timeout", "30"]].concat(),
        )
        .output()
        .unwrap();
    let took = t0.elapsed();
    let log = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    // The timeout, the pings' grace and the clean-up; loose for a loaded machine.
    assert!(took < Duration::from_secs(40), "{took:?}:\n{log}");
    pings_kept(&sb, &names, &log, "--timeout");
    hosts_are_clean(&lab);
}

/// A matrix of pings alone on `inventory`: 2000 probes 0.05 s apart, 100 s
/// if let run, for a test to stop after a few.
fn pings_only(inventory: &str) -> Vec<&str> {
    vec![
        "--inventory",
        inventory,
        "--no-throughput",
        "--pings",
        "2000",
        "--ping-interval",
        "0.05",
    ]
}

/// Nothing of the fleet's is left running or lying on the lab's hosts.
fn hosts_are_clean(lab: &Lab) {
    assert!(on_hosts(lab).is_empty(), "{:?}", on_hosts(lab));
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
}

/// Every one of `names` has its pings stored as an interrupted run, with
/// round trips to each other host, and the closing table of `log` says
/// they were stopped by `why`.
fn pings_kept(sb: &Sandbox, names: &[&str], log: &str, why: &str) {
    assert!(!log.contains("record was lost"), "{log}");
    let stored = runs(sb);
    assert_eq!(stored.len(), names.len(), "{log}");
    for r in &stored {
        assert_eq!(r["status"], "interrupted", "{r}");
        let id = r["id"].as_i64().unwrap().to_string();
        let out = sysgauge(sb, &["results", "export", &id, "--format", "json"]);
        assert!(out.status.success(), "{}", stderr_of(&out));
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let host = run["tags"]["alias"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        // Round trips to both other hosts, a sample a reply: 20 a second
        // each; at least a few, whatever the load.
        let mut peers: Vec<String> = run["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["bench_id"] == PingBenchmark::RTT_ID)
            .map(|x| {
                let samples = x["metrics"][0]["samples"].as_array().map_or(0, Vec::len);
                assert!(samples >= 5, "{host}: {samples} round trips: {x}");
                x["params"]["peer"].as_str().unwrap_or_default().to_string()
            })
            .collect();
        peers.sort();
        let mut others: Vec<String> = names
            .iter()
            .filter(|n| **n != host)
            .map(|n| n.to_string())
            .collect();
        others.sort();
        assert_eq!(peers, others, "{host}: {run}");
        let note = format!("its pings were stopped by {why}");
        assert!(
            log.lines().any(|l| l.contains(&host) && l.contains(&note)),
            "{host}:\n{log}"
        );
    }
    assert!(
        log.contains(&format!(
            "{} of them in part (stored as interrupted)",
            names.len()
        )),
        "{log}"
    );
}

/// The same for a fleet flood (`--icmp`), stopped in its first step (it
/// took 7 s: the flooding sysgauge on the host took more than the
/// clean-up's 5 s of grace to stop after SIGINT).
#[test]
fn a_terminated_fleet_flood_stops_within_seconds_and_cleans_the_hosts() {
    if !available() {
        return;
    }
    // Two flooding hosts; the third runs no sysgauge and is the target.
    let mut lab = Lab::with_hosts(3);
    lab.start_first(2);
    let inventory = inventory_of(&lab, &["alpha", "bravo"], "flood.txt");
    let target = lab.hosts[2].address.clone();
    let sb = Sandbox::new();
    let args = [
        "--inventory",
        inventory.as_str(),
        "--icmp",
        target.as_str(),
        "--profile",
        "tiny",
        "--flood-for",
        "60",
    ];
    // The step's common window starts 3 s after it is announced.
    let (took, code, log) = terminate_mid_run(
        &lab,
        &sb,
        &args,
        "with 1 host(s) at once",
        Duration::from_secs(5),
    );
    assert_eq!(code, Some(143), "{log}");
    assert!(
        took < Duration::from_secs(5),
        "{took:?} after SIGTERM:\n{log}"
    );
    // The step cut off is not reported as a rate of 0.
    assert!(!log.contains("answered at most"), "{log}");
    hosts_are_clean(&lab);
}
