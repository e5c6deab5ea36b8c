//! One wave of many hosts and what the fan-out costs.

use super::{available, runs, sysgauge, Lab, NAMES};
use crate::common::{children_cpu, machine_busy, stderr_of, stdout_of, Sandbox};
use std::time::Instant;

/// One wave: `--forks N` over N healthy hosts. Every host's run comes
/// home, and the fan-out's own cost is printed: the fleet's wall time
/// beyond the slowest host's own run (as its record times it), which
/// covers the connections, the binary's copy and checksum, the clean-up
/// and the ingest. CI runs 12 hosts of one quick case;
/// `SYSGAUGE_FLEET_HOSTS=50 SYSGAUGE_FLEET_ARGS='--profile tiny'` is the
/// measurement in docs/performance.md.
#[test]
fn a_wave_of_hosts_and_the_fan_out_cost() {
    if !available() {
        return;
    }
    let n: usize = std::env::var("SYSGAUGE_FLEET_HOSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| (1..=200).contains(n))
        .unwrap_or(12);
    let args = std::env::var("SYSGAUGE_FLEET_ARGS")
        .unwrap_or_else(|_| "--profile tiny --only hash.md5".to_string());
    let mut lab = Lab::with_hosts(NAMES.len() + n);
    for h in lab.hosts.iter_mut().skip(NAMES.len()) {
        h.start();
    }
    let sb = Sandbox::alone();
    let inventory = lab.inventory();
    let forks = n.to_string();
    let mut fleet_args = vec![
        "--inventory",
        inventory.as_str(),
        "--limit",
        "scale",
        "--forks",
        forks.as_str(),
        "--",
    ];
    fleet_args.extend(args.split_whitespace());
    let (cpu0, busy0) = (children_cpu(), machine_busy());
    let t0 = Instant::now();
    let out = lab.fleet(&sb, &fleet_args);
    let wall = t0.elapsed().as_secs_f64();
    let (controller, busy) = (children_cpu() - cpu0, machine_busy() - busy0);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stderr_of(&out),
        stdout_of(&out)
    );
    let stored = runs(&sb);
    assert_eq!(stored.len(), n, "{stored:?}");
    let own: Vec<f64> = stored
        .iter()
        .map(|r| {
            let id = r["id"].to_string();
            let e = sysgauge(&sb, &["results", "export", &id, "--format", "json"]);
            let run: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
            let t =
                |k: &str| chrono::DateTime::parse_from_rfc3339(run[k].as_str().unwrap()).unwrap();
            (t("finished_at") - t("started_at")).num_milliseconds() as f64 / 1000.0
        })
        .collect();
    let slowest = own.iter().copied().fold(0.0, f64::max);
    eprintln!("{}", stdout_of(&out));
    eprintln!(
        "fleet of {n} hosts (--forks {n}, {args}): wall {wall:.2} s, slowest host's own run {slowest:.2} s, fan-out {:.2} s",
        wall - slowest
    );
    // The part of the cost a real fleet pays on one machine: the fleet
    // process and its ssh clients (children of this test binary: alone
    // because the test has the machine alone).
    eprintln!(
        "controller CPU (sysgauge fleet and its ssh processes): {controller:.2} s, {:.0} ms per host",
        controller * 1000.0 / n as f64
    );
    // Everything the wave cost the one machine that plays every host and
    // drives them (other work on it included: alone only on a quiet one).
    eprintln!(
        "machine CPU during the wave: {busy:.2} s, {:.0} ms per host",
        busy * 1000.0 / n as f64
    );
    assert!(wall >= slowest);
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
}
