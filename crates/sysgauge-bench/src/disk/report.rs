//! The `sysgauge disk` rendering: what was tested (file system, device,
//! model, block sizes, I/O mode) and one line per case with throughput and
//! the latency of its operations (median, 99th percentile, maximum).
//!
//! Works from the records only; the facts come from each result's
//! `details`, which the disk benchmarks fill in while they run.

use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_report::format::{format_value, unit_label};
use sysgauge_report::summary::{spread_cell, status_note, warning_codes};
use sysgauge_report::table::{Table, TableFormat};

fn detail(r: &ResultRecord, key: &str) -> Option<String> {
    r.details.get(key).map(|v| v.to_string())
}

/// What `sysgauge disk` shows after a run: the target, then the table,
/// then the queue-depth cases as YABS prints them.
pub fn disk_report(run: &RunRecord, format: TableFormat) -> String {
    let mut out = format!("{}\n{}", disk_target_text(run), disk_table(run, format));
    if let Some(y) = yabs_table(run, format) {
        out.push('\n');
        out.push_str(&y);
    }
    out
}

/// A block size as YABS names it (`4k`, `64k`, `512k`, `1m`).
fn yabs_size(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}m", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{}k", b >> 10)
    } else {
        format!("{b}")
    }
}

/// IOPS as YABS prints them: `812`, `1.7k`, `275.9k`.
fn yabs_iops(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

/// The `disk.randrw` cases (sysgauge's or imported from fio or YABS) as
/// YABS's summary: a row per block size, read, write and total MB/s with
/// IOPS. The total is read + write of the values shown, as YABS adds them:
/// each stored metric is the median of its own repetitions, and the median
/// of the totals is not the sum of the sides' medians. `None` when the run
/// has none.
pub fn yabs_table(run: &RunRecord, format: TableFormat) -> Option<String> {
    let rows: Vec<&ResultRecord> = run
        .results
        .iter()
        .filter(|r| r.bench_id == "disk.randrw" && matches!(r.status, Status::Ok))
        .collect();
    let first = rows.first()?;
    let mut t = Table::columns(
        "block size, >read MB/s, >read IOPS, >write MB/s, >write IOPS, >total MB/s, >total IOPS",
    );
    for r in &rows {
        let v = |name: &str| r.metrics.iter().find(|m| m.name == name).map(|m| m.value());
        // Read + write when both sides are there; a one-sided mix's total
        // is its one side, which the stored total is.
        let total = |read: &str, write: &str, both: &str| match (v(read), v(write)) {
            (Some(r), Some(w)) => Some(r + w),
            _ => v(both),
        };
        let mbps = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2}"));
        let iops = |x: Option<f64>| x.map_or("-".into(), yabs_iops);
        t.push(vec![
            r.params.get_u64("block_size").map_or("?".into(), yabs_size),
            mbps(v("read_throughput")),
            iops(v("read_iops")),
            mbps(v("write_throughput")),
            iops(v("write_iops")),
            mbps(total("read_throughput", "write_throughput", "throughput")),
            iops(total("read_iops", "write_iops", "iops")),
        ]);
    }
    let p = &first.params;
    let n = |k: &str| p.get_u64(k).map_or("?".into(), |v| v.to_string());
    Some(format!(
        "Mixed R/W {}/{} (random, queue depth {}, {} jobs, O_DIRECT; YABS's fio disk test):\n{}",
        n("rwmixread"),
        p.get_u64("rwmixread")
            .map_or("?".into(), |r| (100u64.saturating_sub(r)).to_string()),
        n("iodepth"),
        n("numjobs"),
        t.render(format)
    ))
}

/// One paragraph per distinct target (file system or raw device).
pub fn disk_target_text(run: &RunRecord) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    for r in run.results.iter().filter(|r| r.family == "disk") {
        let key = detail(r, "target")
            .or_else(|| detail(r, "device"))
            .unwrap_or_default();
        if key.is_empty() || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let device = match detail(r, "device") {
            Some(d) => {
                let mut facts = Vec::new();
                if let Some(m) = detail(r, "model") {
                    facts.push(m);
                }
                match r.details.get_bool("rotational") {
                    Some(true) => facts.push("rotational".into()),
                    Some(false) => facts.push("non-rotational".into()),
                    None => {}
                }
                if let (Some(l), Some(p)) = (
                    detail(r, "logical_block_size"),
                    detail(r, "physical_block_size"),
                ) {
                    facts.push(format!("logical/physical block {l}/{p} B"));
                }
                if facts.is_empty() {
                    format!("device {d}")
                } else {
                    format!("device {d} ({})", facts.join(", "))
                }
            }
            None => "no backing block device".to_string(),
        };
        match detail(r, "target") {
            Some(t) => {
                let fs = detail(r, "fs_type").unwrap_or_else(|| "?".into());
                let mnt = detail(r, "mount_point").unwrap_or_else(|| "?".into());
                let src = detail(r, "fs_source").unwrap_or_else(|| "?".into());
                let ram = if r.details.get_bool("ram_backed") == Some(true) {
                    ", RAM-backed"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "Target: {t}\n  file system {fs}{ram} from {src} mounted on {mnt}; {device}\n"
                ));
            }
            None => out.push_str(&format!("Raw {device}\n")),
        }
    }
    out
}

/// Parameters that describe a disk case, compactly.
fn case_label(r: &ResultRecord) -> String {
    let p = &r.params;
    let mut parts = Vec::new();
    if let Some(b) = p.get_u64("block_size") {
        parts.push(sysgauge_core::size::size_label(b));
    }
    if let Some(o) = p.get_str("order") {
        parts.push(o.to_string());
    }
    if let Some(w) = p.get_u64("workers") {
        parts.push(format!("{w} workers"));
    }
    if let Some(w) = p.get_u64("write_percent") {
        parts.push(format!("{w}% writes"));
    }
    match p.get_bool("direct") {
        // Direct at a size the device refuses is done as whole-block
        // read-modify-write, which the label says.
        Some(true) if r.details.get_str("io_mode") == Some("direct+read-modify-write") => {
            parts.push("direct (rmw)".into())
        }
        Some(true) => parts.push("direct".into()),
        Some(false) => parts.push("buffered".into()),
        None => {}
    }
    parts.join(" ")
}

/// One line per disk case: throughput, latency, and the CPU sysgauge used
/// meanwhile in percent of one CPU (Bonnie++'s %CP; from the telemetry).
pub fn disk_table(run: &RunRecord, format: TableFormat) -> String {
    let mut t = Table::columns(
        "test, case, >rate, unit, >spread, >lat median, >lat p99, >lat max, >%CP, note",
    );
    for r in run.results.iter().filter(|r| r.family == "disk") {
        let test = r.bench_id.trim_start_matches("disk.").to_string();
        let case = case_label(r);
        let value = |name: &str| {
            r.metrics
                .iter()
                .find(|m| m.name == name)
                .map(|m| format_value(m.value()))
        };
        // A mixed case (randrw) has a latency per side, no overall one.
        let lat = |name: &str| match value(name) {
            Some(v) => format!("{v} µs"),
            None => match (
                value(&format!("read_{name}")),
                value(&format!("write_{name}")),
            ) {
                (None, None) => "-".into(),
                (r, w) => format!(
                    "r {} / w {} µs",
                    r.unwrap_or_else(|| "-".into()),
                    w.unwrap_or_else(|| "-".into())
                ),
            },
        };
        match (&r.status, r.primary()) {
            (Status::Ok, Some(m)) => {
                t.push(vec![
                    test,
                    case,
                    format_value(m.value()),
                    unit_label(m.unit.symbol()).to_string(),
                    spread_cell(r, m),
                    lat("latency_median"),
                    lat("latency_p99"),
                    lat("latency_max"),
                    r.details
                        .get_int("cpu_percent")
                        .map_or("-".into(), |v| v.to_string()),
                    warning_codes(r),
                ]);
            }
            (status, _) => t.push_note(vec![test, case], status_note(status)),
        }
    }
    t.render(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::record::{Metric, Params, RunStatus};
    use sysgauge_core::unit::{Better, Unit};

    fn result(id: &str, params: Params, details: Params, status: Status) -> ResultRecord {
        let m = |name: &str, unit: Unit, v: f64| {
            Metric::new(name, unit, Better::Higher, vec![v, v, v])
                .unwrap_or_else(|| panic!("metric"))
        };
        let metrics = if matches!(status, Status::Ok) {
            vec![
                m("throughput", Unit::MBps, 812.5),
                m("latency_median", Unit::Microseconds, 1200.0),
                m("latency_p99", Unit::Microseconds, 2500.0),
                m("latency_max", Unit::Microseconds, 9100.0),
            ]
        } else {
            vec![]
        };
        ResultRecord {
            family: "disk".into(),
            details,
            duration_seconds: 1.0,
            ..ResultRecord::new(id, params, status, metrics)
        }
    }

    #[test]
    fn table_and_target() {
        let details = Params::new()
            .with("target", "/srv/sysgauge-1-0")
            .with("fs_type", "ext4")
            .with("mount_point", "/srv")
            .with("fs_source", "/dev/sda1")
            .with("device", "sda")
            .with("model", "Disk X")
            .with("rotational", false)
            .with("logical_block_size", 512u64)
            .with("physical_block_size", 4096u64);
        let mut with_cpu = details.clone();
        with_cpu.insert("cpu_percent", 37i64);
        let run = RunRecord {
            status: RunStatus::Complete,
            results: vec![
                result(
                    "disk.seq-write",
                    Params::new()
                        .with("block_size", 1u64 << 20)
                        .with("direct", true),
                    with_cpu,
                    Status::Ok,
                ),
                result(
                    "disk.create",
                    Params::new().with("order", "random"),
                    details,
                    Status::Skipped {
                        reason: "no space".into(),
                        hint: None,
                    },
                ),
            ],
            ..RunRecord::new("r", "disk", "0")
        };
        let table = disk_table(&run, TableFormat::Text);
        assert!(table.contains("seq-write"), "{table}");
        assert!(table.contains("1MiB direct"), "{table}");
        assert!(table.contains("812.5"), "{table}");
        assert!(table.contains("2500.0 µs"), "{table}");
        let seq = table
            .lines()
            .find(|l| l.starts_with("seq-write"))
            .unwrap_or("");
        assert!(
            table.contains("%CP") && seq.trim_end().ends_with(" 37"),
            "{table}"
        );
        assert!(table.contains("skipped: no space"), "{table}");
        let target = disk_target_text(&run);
        assert_eq!(target.matches("Target:").count(), 1, "{target}");
        assert!(
            target.contains("ext4 from /dev/sda1 mounted on /srv"),
            "{target}"
        );
        assert!(
            target.contains("logical/physical block 512/4096 B"),
            "{target}"
        );
        assert!(target.contains("non-rotational"), "{target}");
    }

    /// The acceptance test's 1m row: each side the median of its own
    /// repetitions (1319.92 and 1321.45 MB/s), the stored total the median
    /// of the totals (2916.30); the table's total is what it shows added.
    #[test]
    fn yabs_total_is_read_plus_write_and_randrw_shows_its_latencies() {
        let m = |name: &str, unit: &Unit, samples: &[f64]| {
            Metric::new(name, unit.clone(), Better::Higher, samples.to_vec())
                .unwrap_or_else(|| panic!("metric"))
        };
        let (mb, ops, us) = (&Unit::MBps, &Unit::OpsPerSec, &Unit::Microseconds);
        let r = ResultRecord {
            family: "disk".into(),
            ..ResultRecord::new(
                "disk.randrw",
                Params::new()
                    .with("block_size", 1u64 << 20)
                    .with("rwmixread", 50u64)
                    .with("iodepth", 64u64)
                    .with("numjobs", 2u64),
                Status::Ok,
                vec![
                    m("throughput", mb, &[2916.30, 2600.0, 3000.0]),
                    m("iops", ops, &[2781.0, 2500.0, 2900.0]),
                    m("read_throughput", mb, &[1319.92, 1700.0, 1100.0]),
                    m("read_iops", ops, &[1258.8, 1600.0, 1000.0]),
                    m("write_throughput", mb, &[1321.45, 1200.0, 1500.0]),
                    m("write_iops", ops, &[1260.2, 1100.0, 1400.0]),
                    m("read_latency_median", us, &[812.0]),
                    m("write_latency_median", us, &[950.0]),
                ],
            )
        };
        let run = RunRecord {
            status: RunStatus::Complete,
            results: vec![r],
            ..RunRecord::new("r", "disk", "0")
        };
        let y = yabs_table(&run, TableFormat::Text).unwrap_or_default();
        let row = y.lines().find(|l| l.starts_with("1m")).unwrap_or("");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            ["1m", "1319.92", "1.3k", "1321.45", "1.3k", "2641.37", "2.5k"],
            "{y}"
        );
        let table = disk_table(&run, TableFormat::Text);
        assert!(table.contains("r 812.0 / w 950.0 µs"), "{table}");
    }
}
