//! Renderings of the `net` family: the 2ping statistics block of `sysgauge
//! ping` (laid out as the reference `2ping` prints it, so people and their
//! scripts find what they know), and a readable digest of `sysgauge net`
//! with the secondary metrics (Gbit/s, p99, where the packet rate
//! saturated) that the one-line summary table leaves out.
//!
//! Both take the run record: what is printed is what was stored.

use super::icmp::IcmpPpsBenchmark;
use super::ping::PingBenchmark;
use super::tcp::{TcpConnectBenchmark, TcpThroughputBenchmark};
use super::udp::{UdpPpsBenchmark, UdpRttBenchmark};
use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_report::format::format_value;

fn detail_u64(r: &ResultRecord, key: &str) -> u64 {
    r.details.get_u64(key).unwrap_or(0)
}

pub(crate) fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Whole percent, truncated, as the reference prints it.
fn pct(n: u64, of: u64) -> u64 {
    if of == 0 {
        0
    } else {
        (n as u128 * 100 / of as u128) as u64
    }
}

/// Milliseconds as the reference's "1s 73ms" (largest units first, zero
/// parts left out).
pub fn duration_text(ms: u64) -> String {
    let parts = [(1000, "ms"), (60, "s"), (60, "m"), (24, "h"), (365, "d")];
    let mut out: Vec<String> = Vec::new();
    let mut rest = ms;
    for (div, suffix) in parts {
        let p = rest % div;
        rest /= div;
        if p > 0 {
            out.push(format!("{p}{suffix}"));
        }
        if rest == 0 {
            break;
        }
    }
    if rest > 0 {
        out.push(format!("{rest}y"));
    }
    if out.is_empty() {
        return "0ms".into();
    }
    out.reverse();
    out.join(" ")
}

/// min/avg/ewma/max/mdev of RTTs (ms) in arrival order: EWMA with
/// alpha 1/8 seeded with the first sample, mdev the population standard
/// deviation, as the reference computes them.
pub fn rtt_line_values(samples: &[f64]) -> Option<[f64; 5]> {
    let first = *samples.first()?;
    let n = samples.len() as f64;
    let (mut min, mut max, mut sum, mut ewma) = (first, first, 0.0, first);
    for (i, &x) in samples.iter().enumerate() {
        min = min.min(x);
        max = max.max(x);
        sum += x;
        if i > 0 {
            ewma += (x - ewma) / 8.0;
        }
    }
    let avg = sum / n;
    let var = samples.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n;
    Some([min, avg, ewma, max, var.max(0.0).sqrt()])
}

/// One peer's statistics, as the reference prints them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PingStats {
    /// `host (address)` or the peer's address.
    pub title: String,
    pub transmitted: u64,
    pub received: u64,
    pub lost_outbound: u64,
    pub lost_inbound: u64,
    pub undetermined: u64,
    /// min/avg/ewma/max/mdev in ms, if any reply came.
    pub rtt: Option<[f64; 5]>,
    /// Wall time, for the "time" field; `None` leaves it out.
    pub elapsed_ms: Option<u64>,
    /// Every datagram sent and received (pings, replies, 3rd legs), if known.
    pub packets: Option<(u64, u64)>,
    /// End-of-run investigation probes (not pings).
    pub probes: u64,
}

/// The statistics block of one peer.
pub fn render_stats(s: &PingStats) -> String {
    let mut out = format!("\n--- {} 2ping statistics ---\n", s.title);
    let (tx, rx) = (s.transmitted, s.received);
    let time = s
        .elapsed_ms
        .map(|ms| format!(", time {}", duration_text(ms)))
        .unwrap_or_default();
    out.push_str(&format!(
        "{tx} {} transmitted, {rx} received, {}% ping loss{time}\n",
        plural(tx, "ping", "pings"),
        pct(tx.saturating_sub(rx), tx),
    ));
    let (o, i, u) = (s.lost_outbound, s.lost_inbound, s.undetermined);
    out.push_str(&format!(
        "{o} outbound {} ({}%), {i} inbound ({}%), {u} undetermined ({}%)\n",
        plural(o, "ping loss", "ping losses"),
        pct(o, tx),
        pct(i, tx),
        pct(u, tx)
    ));
    if let Some([min, avg, ewma, max, mdev]) = s.rtt {
        out.push_str(&format!(
            "rtt min/avg/ewma/max/mdev = {min:.3}/{avg:.3}/{ewma:.3}/{max:.3}/{mdev:.3} ms\n"
        ));
    }
    if let Some((ptx, prx)) = s.packets {
        out.push_str(&format!(
            "{ptx} raw {} transmitted, {prx} received\n",
            plural(ptx, "packet", "packets"),
        ));
    }
    if s.probes > 0 {
        out.push_str(&format!(
            "{} end-of-run {} (not counted as pings)\n",
            s.probes,
            plural(s.probes, "probe", "probes")
        ));
    }
    out
}

fn host_title(r: &ResultRecord) -> String {
    let host = r.params.get_str("host").unwrap_or("?");
    let ip = r
        .details
        .get_str("address")
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.ip().to_string());
    match ip {
        Some(ip) => format!("{host} ({ip})"),
        None => host.to_string(),
    }
}

/// The statistics of every pinged host (`sysgauge ping`), from its run
/// record, in the reference's layout.
pub fn ping_statistics(run: &RunRecord) -> String {
    let mut out = String::new();
    for loss in run
        .results
        .iter()
        .filter(|r| r.bench_id == PingBenchmark::LOSS_ID)
    {
        let host = loss.params.get_str("host");
        let rtt = run
            .results
            .iter()
            .find(|r| r.bench_id == PingBenchmark::RTT_ID && r.params.get_str("host") == host);
        let samples = rtt
            .filter(|r| r.is_ok())
            .and_then(|r| r.primary())
            .map(|m| m.samples.as_slice())
            .unwrap_or(&[]);
        out.push_str(&render_stats(&PingStats {
            title: host_title(loss),
            transmitted: detail_u64(loss, "transmitted"),
            received: detail_u64(loss, "received"),
            lost_outbound: detail_u64(loss, "lost_outbound"),
            lost_inbound: detail_u64(loss, "lost_inbound"),
            undetermined: detail_u64(loss, "undetermined"),
            rtt: rtt_line_values(samples),
            elapsed_ms: Some(detail_u64(loss, "elapsed_ms")),
            packets: Some((
                detail_u64(loss, "packets_transmitted"),
                detail_u64(loss, "packets_received"),
            )),
            probes: detail_u64(loss, "probes"),
        }));
        for r in std::iter::once(loss).chain(rtt) {
            if let Status::Failed { error } = &r.status {
                out.push_str(&format!("{error}\n"));
            }
        }
    }
    out
}

fn metric_value(r: &ResultRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value())
}

/// The CPU this process used per unit moved, from the telemetry's
/// `cpu_percent` (both ends on loopback): `, CPU 0.42 s/GB`.
fn cpu_per(r: &ResultRecord, rate: f64, units_per_rate: f64, unit: &str) -> String {
    match r.details.get_int("cpu_percent") {
        Some(p) if rate > 0.0 => format!(
            ", CPU {} s {unit}",
            format_value(p as f64 / 100.0 * units_per_rate / rate)
        ),
        _ => String::new(),
    }
}

fn status_note(r: &ResultRecord) -> Option<String> {
    match &r.status {
        Status::Ok => None,
        Status::Skipped { reason, .. } => Some(format!("skipped: {reason}")),
        Status::Failed { error } => Some(format!("FAILED: {error}")),
    }
}

/// A digest of the TCP and UDP cases with their secondary metrics.
pub fn net_summary(run: &RunRecord) -> String {
    let mut out = String::new();
    let of = |id: &'static str| run.results.iter().filter(move |r| r.bench_id == id);
    let target = run
        .results
        .iter()
        .find_map(|r| r.params.get_str("target"))
        .unwrap_or("loopback");
    let tcp: Vec<_> = of(TcpThroughputBenchmark::ID).collect();
    if !tcp.is_empty() {
        out.push_str(&format!("TCP throughput to {target}:\n"));
        for r in tcp {
            let s = r.params.get_u64("streams").unwrap_or(1);
            let label = format!("{s} {}", plural(s, "stream", "streams"));
            let line = match (
                status_note(r),
                metric_value(r, "throughput"),
                metric_value(r, "bitrate"),
            ) {
                (None, Some(mb), Some(mbit)) => format!(
                    "{} MB/s = {} Gbit/s{}",
                    format_value(mb),
                    format_value(mbit / 1000.0),
                    cpu_per(r, mb, 1000.0, "per GB")
                ),
                (Some(n), _, _) => n,
                _ => "no metric".into(),
            };
            out.push_str(&format!("  {label:<12} {line}\n"));
        }
    }
    for r in of(TcpConnectBenchmark::ID) {
        let line = match (status_note(r), metric_value(r, "rate")) {
            (None, Some(v)) => format!("{} connections/s", format_value(v)),
            (Some(n), _) => n,
            _ => "no metric".into(),
        };
        out.push_str(&format!("TCP connect, request, close: {line}\n"));
    }
    let pps: Vec<_> = of(UdpPpsBenchmark::ID).collect();
    if let Some(first) = pps.first() {
        let size = first.params.get_u64("size").unwrap_or(0);
        out.push_str(&format!(
            "UDP packet rate, {size}-byte datagrams, both directions counted:\n"
        ));
        let mut saturated = None;
        for r in &pps {
            let s = r.params.get_u64("senders").unwrap_or(1);
            let label = format!("{s} {}", plural(s, "sender", "senders"));
            let line = match (status_note(r), metric_value(r, "rate")) {
                (None, Some(v)) => format!(
                    "{} pkt/s{}",
                    format_value(v),
                    cpu_per(r, v, 1e6, "per million packets")
                ),
                (Some(n), _) => n,
                _ => "no metric".into(),
            };
            out.push_str(&format!("  {label:<12} {line}\n"));
            if let Some(at) = r.details.get_u64("saturated_at") {
                saturated = Some(at);
            }
        }
        match saturated {
            Some(at) => out.push_str(&format!(
                "  saturated at {at} {}\n",
                plural(at, "sender", "senders")
            )),
            None if pps.len() > 1 => out.push_str("  still rising at the last step\n"),
            None => {}
        }
    }
    let icmp: Vec<_> = of(IcmpPpsBenchmark::ID).collect();
    if !icmp.is_empty() {
        out.push_str(
            "ICMP echo flood, echo replies received per second (requests sent/s and replies received/s over the whole flood):\n",
        );
        for r in &icmp {
            let s = r.params.get_u64("senders").unwrap_or(1);
            let label = format!("{s} {}", plural(s, "sender", "senders"));
            let both = match (
                r.details.get_int("requests_per_s"),
                r.details.get_int("replies_per_s"),
            ) {
                (Some(q), Some(p)) => {
                    format!(" (requests sent {q}/s, replies received {p}/s)")
                }
                _ => String::new(),
            };
            let line = match (status_note(r), metric_value(r, "rate")) {
                (None, Some(v)) => format!("{} replies/s{both}", format_value(v)),
                (Some(n), _) => n,
                _ => "no metric".into(),
            };
            out.push_str(&format!("  {label:<12} {line}\n"));
        }
    }
    for r in of(UdpRttBenchmark::ID) {
        let size = r.params.get_u64("size").unwrap_or(0);
        let line = match (
            status_note(r),
            metric_value(r, "rtt"),
            metric_value(r, "rtt_p99"),
        ) {
            (None, Some(m), Some(p)) => {
                format!("median {} µs, p99 {} µs", format_value(m), format_value(p))
            }
            (Some(n), _, _) => n,
            _ => "no metric".into(),
        };
        out.push_str(&format!("UDP round trip, {size}-byte datagrams: {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_the_reference() {
        assert_eq!(duration_text(1073), "1s 73ms");
        assert_eq!(duration_text(0), "0ms");
        assert_eq!(duration_text(60_000), "1m");
        assert_eq!(duration_text(3_600_000 + 1), "1h 1ms");
        assert_eq!(duration_text(999), "999ms");
    }

    #[test]
    fn stats_block_is_laid_out_as_the_reference() {
        let text = render_stats(&PingStats {
            title: "127.0.0.1 (127.0.0.1)".into(),
            transmitted: 20,
            received: 14,
            lost_outbound: 3,
            lost_inbound: 1,
            undetermined: 2,
            rtt: Some([0.510, 0.698, 0.687, 1.087, 0.190]),
            elapsed_ms: Some(1073),
            packets: Some((34, 14)),
            probes: 0,
        });
        // The reference's own output for the same numbers
        // (crates/sysgauge-twoping/tests/fixtures/2ping-4.5-client-loss.txt).
        assert_eq!(
            text,
            "\n--- 127.0.0.1 (127.0.0.1) 2ping statistics ---\n\
             20 pings transmitted, 14 received, 30% ping loss, time 1s 73ms\n\
             3 outbound ping losses (15%), 1 inbound (5%), 2 undetermined (10%)\n\
             rtt min/avg/ewma/max/mdev = 0.510/0.698/0.687/1.087/0.190 ms\n\
             34 raw packets transmitted, 14 received\n"
        );
        let one = render_stats(&PingStats {
            title: "h".into(),
            transmitted: 1,
            lost_outbound: 1,
            packets: Some((1, 0)),
            probes: 1,
            ..PingStats::default()
        });
        assert!(
            one.contains("1 ping transmitted, 0 received, 100% ping loss"),
            "{one}"
        );
        assert!(one.contains("1 outbound ping loss (100%)"), "{one}");
        assert!(one.contains("1 raw packet transmitted"), "{one}");
        assert!(
            one.contains("1 end-of-run probe (not counted as pings)"),
            "{one}"
        );
        assert!(!one.contains("rtt"), "{one}");
    }

    #[test]
    fn rtt_values_match_reference_formulas() {
        let v = rtt_line_values(&[1.0, 2.0, 3.0, 10.0]).unwrap_or([0.0; 5]);
        assert_eq!(v[0], 1.0);
        assert_eq!(v[1], 4.0);
        let mut e = 1.0;
        for x in [2.0, 3.0, 10.0] {
            e += (x - e) / 8.0;
        }
        assert!((v[2] - e).abs() < 1e-12);
        assert_eq!(v[3], 10.0);
        let pop = ((1.0 + 4.0 + 9.0 + 100.0) / 4.0 - 16.0_f64).sqrt();
        assert!((v[4] - pop).abs() < 1e-12);
        assert!(rtt_line_values(&[]).is_none());
        assert_eq!(pct(3, 20), 15);
        assert_eq!(pct(1, 3), 33);
        assert_eq!(pct(1, 0), 0);
    }

    #[test]
    fn cpu_per_gigabyte_and_per_million_packets() {
        use sysgauge_core::record::{Metric, Params, Status};
        use sysgauge_core::{Better, Unit};
        let case = |id: &str, params: Params, metrics: Vec<Metric>| {
            let mut r = ResultRecord::new(id, params, Status::Ok, metrics);
            r.details.insert("cpu_percent", 150i64);
            r
        };
        let m = |name: &str, unit: Unit, v: f64| {
            Metric::new(name, unit, Better::Higher, vec![v]).unwrap_or_else(|| panic!("metric"))
        };
        let run = RunRecord {
            results: vec![
                case(
                    "net.tcp-throughput",
                    Params::new().with("streams", 1u64),
                    vec![
                        m("throughput", Unit::MBps, 3000.0),
                        m("bitrate", Unit::Mbitps, 24000.0),
                    ],
                ),
                case(
                    "net.udp-pps",
                    Params::new().with("senders", 1u64).with("size", 64u64),
                    vec![m("rate", Unit::PacketsPerSec, 500_000.0)],
                ),
            ],
            ..RunRecord::new("r", "net", "0")
        };
        let text = net_summary(&run);
        // 1.5 CPUs at 3 GB/s: 0.5 CPU-seconds per GB; at 0.5 Mpkt/s: 3 s.
        assert!(
            text.contains("3000.0 MB/s = 24.00 Gbit/s, CPU 0.5000 s per GB"),
            "{text}"
        );
        assert!(
            text.contains("pkt/s, CPU 3.00 s per million packets"),
            "{text}"
        );
    }

    #[test]
    fn icmp_flood_names_replies_and_both_directions() {
        use sysgauge_core::record::{Metric, Params, Status};
        use sysgauge_core::{Better, Unit};
        let metric = Metric::new("rate", Unit::PacketsPerSec, Better::Higher, vec![1000.0])
            .unwrap_or_else(|| panic!("metric"));
        let mut r = ResultRecord::new(
            "net.icmp-pps",
            Params::new().with("senders", 1u64),
            Status::Ok,
            vec![metric],
        );
        r.details.insert("requests_per_s", 5000i64);
        r.details.insert("replies_per_s", 990i64);
        let run = RunRecord {
            results: vec![r],
            ..RunRecord::new("r", "net", "0")
        };
        let text = net_summary(&run);
        assert!(text.contains("echo replies received per second"), "{text}");
        assert!(text.contains("1 sender"), "{text}");
        assert!(
            text.contains("replies/s (requests sent 5000/s, replies received 990/s)"),
            "{text}"
        );
    }
}
