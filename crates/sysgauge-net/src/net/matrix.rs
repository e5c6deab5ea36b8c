//! The network matrix (`sysgauge fleet net`) as the net family sees it:
//! which cases a pair test runs, the `peer` and `direction` params the
//! fleet adds to a host's results once it knows which inventory host each
//! address belongs to, and the host-by-host matrices read back from such
//! runs (for the command's tables and the report's heatmaps).
//!
//! The params: `peer` is the other host's inventory alias (the `target`
//! or `host` param keeps the address measured at); `direction` is `out`
//! where the run's host sent and the peer received (TCP throughput), and
//! `round-trip` where both directions are in one figure (2ping round trip;
//! 2ping loss, whose `outbound` and `inbound` metrics split it; the UDP
//! packet rate, which counts the reflected packets too; TCP connection
//! rate and UDP round trip). The workloads
//! are the ordinary `net.*` cases: the added params only name the pair.
//!
//! Reading a matrix: rows are the sending host, columns the receiving
//! one. Loss from a to b is a's outbound loss to b (2ping tells it apart
//! from the way back); where a's own pings are missing, b's inbound loss
//! from a stands in.

use super::icmp::IcmpPpsBenchmark;
use super::ping::PingBenchmark;
use super::tcp::TcpThroughputBenchmark;
use super::udp::UdpPpsBenchmark;
use sysgauge_core::record::{ResultRecord, RunRecord, Status, ALIAS_TAG};
use sysgauge_core::{Better, Unit};
use sysgauge_family::family::FamilyChart;
use sysgauge_report::chart::lines::LabelledRun;
use sysgauge_report::{ChartError, Figure, Matrix};

/// The param naming the other host of a pair.
pub const PEER: &str = "peer";
/// The param saying which way the figure goes (see the module's notes).
pub const DIRECTION: &str = "direction";
/// `direction`: the run's host sent, the peer received.
pub const OUT: &str = "out";
/// `direction`: both ways in one figure.
pub const ROUND_TRIP: &str = "round-trip";

/// Adds `peer` and `direction` to the results of `run` that measured one
/// of `peers` (address as given to the host's command, alias). Returns how
/// many results were named.
pub fn name_peers(run: &mut RunRecord, peers: &[(String, String)]) -> usize {
    let mut named = 0;
    for r in &mut run.results {
        if r.family != super::FAMILY.info.name {
            continue;
        }
        let direction = if r.bench_id == TcpThroughputBenchmark::ID {
            OUT
        } else {
            ROUND_TRIP
        };
        let key = match r.bench_id.as_str() {
            PingBenchmark::RTT_ID | PingBenchmark::LOSS_ID => "host",
            _ => "target",
        };
        let Some(address) = r.params.get_str(key) else {
            continue;
        };
        let Some((_, alias)) = peers.iter().find(|(a, _)| a == address) else {
            continue;
        };
        let alias = alias.clone();
        r.params.insert(PEER, alias.as_str());
        r.params.insert(DIRECTION, direction);
        named += 1;
    }
    named
}

/// The param of a fleet flood's `net.icmp-pps` results: how many hosts
/// flooded the target at once (each with the case's `senders`).
pub const FLEET_HOSTS: &str = "fleet_hosts";

/// Marks the ICMP flood results of `run` as made while `hosts` hosts
/// flooded the same target at once.
pub fn mark_fleet_flood(run: &mut RunRecord, hosts: usize) {
    for r in &mut run.results {
        if r.bench_id == IcmpPpsBenchmark::ID {
            r.params.insert(FLEET_HOSTS, hosts as u64);
        }
    }
}

/// A host's echo reply rate in a fleet flood step: the median of its
/// `net.icmp-pps` case (one sample per slice of the common window).
pub fn flood_rate(run: &RunRecord) -> Option<f64> {
    run.results
        .iter()
        .find(|r| r.bench_id == IcmpPpsBenchmark::ID)
        .and_then(|r| median(r, "rate"))
}

/// Whether a fleet flood is worth another step: the total reply rate rose
/// by at least 5 % with the last hosts added (as the sender ladders judge).
pub fn flood_still_rising(previous_total: f64, total: f64) -> bool {
    total >= previous_total * super::udp::RISING
}

/// The name a run's host goes by in a matrix: its inventory alias, else
/// its label, else its host name.
pub fn host_name(run: &RunRecord) -> String {
    run.tags
        .get(ALIAS_TAG)
        .cloned()
        .or_else(|| run.label.clone())
        .or_else(|| run.host.hostname.clone())
        .unwrap_or_default()
}

/// A measured metric's median, when the result is good and has it.
fn median(r: &ResultRecord, metric: &str) -> Option<f64> {
    if !matches!(r.status, Status::Ok) {
        return None;
    }
    r.metrics
        .iter()
        .find(|m| m.name == metric)
        .map(|m| m.summary.median)
}

/// The matrices of `runs` (one run per host, as `fleet net` stores them):
/// 2ping round trip and loss, TCP throughput (one stream) and the UDP
/// packet rate (its best sender count). Hosts are the runs' in order;
/// matrices with nothing in them are left out.
pub fn matrices(runs: &[&RunRecord]) -> Vec<Matrix> {
    let hosts: Vec<String> = runs.iter().map(|r| host_name(r)).collect();
    let new = |name: &str, title: &str, unit: Unit, better: Better| {
        Matrix::new(name, title, unit, better, &hosts)
    };
    let mut rtt = new(
        "rtt",
        "2ping round trip, median",
        Unit::Milliseconds,
        Better::Lower,
    );
    let mut loss = new(
        "loss",
        "2ping loss, from → to",
        Unit::Percent,
        Better::Lower,
    );
    let mut tcp = new(
        "tcp-throughput",
        "TCP throughput, one stream, from → to",
        Unit::MBps,
        Better::Higher,
    );
    let mut udp = new(
        "udp-rate",
        "UDP packet rate (both ways counted), best sender count",
        Unit::PacketsPerSec,
        Better::Higher,
    );
    // Stand-ins for loss from the receiving side, used where the sender's
    // own figure is missing.
    let mut inbound: Vec<(String, String, f64)> = Vec::new();
    for (run, from) in runs.iter().zip(&hosts) {
        for r in &run.results {
            let Some(to) = r.params.get_str(PEER) else {
                continue;
            };
            match r.bench_id.as_str() {
                PingBenchmark::RTT_ID => {
                    if let Some(v) = median(r, "rtt") {
                        rtt.set(from, to, v);
                    }
                }
                PingBenchmark::LOSS_ID => {
                    if let Some(v) = median(r, "outbound") {
                        loss.set(from, to, v);
                    }
                    if let Some(v) = median(r, "inbound") {
                        inbound.push((to.to_string(), from.clone(), v));
                    }
                }
                TcpThroughputBenchmark::ID if r.params.get_u64("streams") == Some(1) => {
                    if let Some(v) = median(r, "throughput") {
                        tcp.set(from, to, v);
                    }
                }
                UdpPpsBenchmark::ID => {
                    if let Some(v) = median(r, "rate") {
                        if udp.get(from, to).is_none_or(|old| v > old) {
                            udp.set(from, to, v);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for (from, to, v) in inbound {
        if loss.get(&from, &to).is_none() {
            loss.set(&from, &to, v);
        }
    }
    [rtt, loss, tcp, udp]
        .into_iter()
        .filter(|m| !m.is_empty())
        .collect()
}

/// The heatmap of matrix `name` of the runs, or what to run for one.
fn heatmap(runs: &[LabelledRun], name: &str) -> Result<Figure, ChartError> {
    let refs: Vec<&RunRecord> = runs.iter().map(|(_, r)| *r).collect();
    matrices(&refs)
        .into_iter()
        .find(|m| m.name == name)
        .map(Figure::Heatmap)
        .ok_or_else(|| {
            ChartError::NoData(format!(
                "no {name} between these machines: measure them with `sysgauge fleet net`"
            ))
        })
}

/// The matrix heatmaps, as the report's sections and `chart --kind`.
pub const CHARTS: [FamilyChart; 4] = [
    FamilyChart {
        name: "net-loss",
        heading: "Network matrix: 2ping loss",
        caption: "Per cent of 2ping probes lost on the way from the row's host to the column's (2ping tells the way out from the way back); darker is worse.",
        panels: None,
        figure: |runs| heatmap(runs, "loss"),
    },
    FamilyChart {
        name: "net-rtt",
        heading: "Network matrix: round trip",
        caption: "Median 2ping round trip from the row's host to the column's and back, ms; darker is slower.",
        panels: None,
        figure: |runs| heatmap(runs, "rtt"),
    },
    FamilyChart {
        name: "net-tcp",
        heading: "Network matrix: TCP throughput",
        caption: "One TCP stream from the row's host to the column's, MB/s, each pair measured alone (no host in two tests at once); darker is slower.",
        panels: None,
        figure: |runs| heatmap(runs, "tcp-throughput"),
    },
    FamilyChart {
        name: "net-udp",
        heading: "Network matrix: UDP packet rate",
        caption: "Small UDP datagrams from the row's host reflected by the column's, both ways counted, at the best sender count, packets/s; darker is slower.",
        panels: None,
        figure: |runs| heatmap(runs, "udp-rate"),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::record::Params;
    use sysgauge_core::Metric;

    fn result(id: &str, params: Params, metrics: &[(&str, f64)]) -> ResultRecord {
        let metrics = metrics
            .iter()
            .filter_map(|(n, v)| Metric::new(n, Unit::Percent, Better::Lower, vec![*v]))
            .collect();
        ResultRecord::new(id, params, Status::Ok, metrics)
    }

    fn run(alias: &str, results: Vec<ResultRecord>) -> RunRecord {
        let mut run = RunRecord::new("id", "fleet-net", "0");
        run.tags.insert(ALIAS_TAG.into(), alias.into());
        run.results = results;
        run
    }

    #[test]
    fn peers_are_named_by_the_address_measured() {
        let mut a = run(
            "a",
            vec![
                result(
                    PingBenchmark::LOSS_ID,
                    Params::new().with("host", "10.0.0.2"),
                    &[("outbound", 30.0)],
                ),
                result(
                    TcpThroughputBenchmark::ID,
                    Params::new()
                        .with("target", "10.0.0.2")
                        .with("streams", 1u64),
                    &[("throughput", 100.0)],
                ),
                result(
                    TcpThroughputBenchmark::ID,
                    Params::new().with("target", "10.0.0.9"),
                    &[("throughput", 1.0)],
                ),
                result("hash.md5", Params::new().with("target", "10.0.0.2"), &[]),
                result(
                    "net.tcp-connect",
                    Params::new().with("target", "10.0.0.2"),
                    &[("rate", 1.0)],
                ),
            ],
        );
        let peers = vec![("10.0.0.2".to_string(), "b".to_string())];
        assert_eq!(name_peers(&mut a, &peers), 3);
        assert_eq!(a.results[4].params.get_str(DIRECTION), Some(ROUND_TRIP));
        assert_eq!(a.results[0].params.get_str(PEER), Some("b"));
        assert_eq!(a.results[0].params.get_str(DIRECTION), Some(ROUND_TRIP));
        assert_eq!(a.results[1].params.get_str(DIRECTION), Some(OUT));
        assert_eq!(a.results[2].params.get_str(PEER), None);
        assert_eq!(a.results[3].params.get_str(PEER), None);
    }

    #[test]
    fn fleet_flood_steps() {
        assert!(flood_still_rising(1000.0, 1060.0));
        assert!(!flood_still_rising(1000.0, 1040.0));
        let mut run = run(
            "a",
            vec![result(
                IcmpPpsBenchmark::ID,
                Params::new().with("senders", 1u64),
                &[("rate", 1500.0)],
            )],
        );
        mark_fleet_flood(&mut run, 2);
        assert_eq!(run.results[0].params.get_u64(FLEET_HOSTS), Some(2));
        assert_eq!(flood_rate(&run), Some(1500.0));
    }

    #[test]
    fn matrices_by_sender_and_receiver() {
        let peer = |to: &str| Params::new().with(PEER, to);
        let a = run(
            "a",
            vec![
                result(
                    PingBenchmark::LOSS_ID,
                    peer("b"),
                    &[("outbound", 30.0), ("inbound", 0.0)],
                ),
                result(
                    TcpThroughputBenchmark::ID,
                    peer("b").with("streams", 1u64),
                    &[("throughput", 100.0)],
                ),
                result(
                    TcpThroughputBenchmark::ID,
                    peer("b").with("streams", 2u64),
                    &[("throughput", 999.0)],
                ),
                result(UdpPpsBenchmark::ID, peer("b"), &[("rate", 5.0)]),
                result(UdpPpsBenchmark::ID, peer("b"), &[("rate", 9.0)]),
            ],
        );
        // b's own pings are missing: its loss to a comes from a's inbound.
        let b = run(
            "b",
            vec![result(PingBenchmark::RTT_ID, peer("a"), &[("rtt", 0.25)])],
        );
        let m = matrices(&[&a, &b]);
        let by = |name: &str| m.iter().find(|x| x.name == name).cloned();
        let loss = by("loss").unwrap_or_else(|| panic!("no loss matrix"));
        assert_eq!(loss.hosts, ["a", "b"]);
        assert_eq!(loss.get("a", "b"), Some(30.0));
        assert_eq!(loss.get("b", "a"), Some(0.0));
        assert_eq!(by("rtt").and_then(|x| x.get("b", "a")), Some(0.25));
        assert_eq!(by("rtt").and_then(|x| x.get("a", "b")), None);
        assert_eq!(
            by("tcp-throughput").and_then(|x| x.get("a", "b")),
            Some(100.0)
        );
        assert_eq!(by("udp-rate").and_then(|x| x.get("a", "b")), Some(9.0));
    }
}
