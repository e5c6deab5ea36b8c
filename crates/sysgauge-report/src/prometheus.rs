//! Runs in the Prometheus text exposition format, for node_exporter's
//! textfile collector (`results export --format prometheus`).
//!
//! Choices, after Prometheus's naming conventions: one gauge per metric
//! name and base unit (`sysgauge_throughput_bytes_per_second`,
//! `sysgauge_latency_median_seconds`), every value converted to the base
//! unit (bytes, seconds, hertz, ratios); the benchmark id, its parameters
//! (canonical `k=v,k=v`), the workload version, the profile, the host name,
//! the machine-id and the fleet alias as labels, so one file can hold a
//! whole fleet and a query can select any case. Only measured results are
//! exported (a skipped or failed case has no value); units that have no
//! base-unit form (other tools' own units) are left out and counted in a
//! comment. Each run adds its start time and its index against the
//! baseline when there is one.

use std::collections::BTreeMap;
use sysgauge_compare::IndexReport;
use sysgauge_core::record::{RunRecord, Status, ALIAS_TAG};
use sysgauge_core::Unit;

/// A run to export, with its index against the baseline when there is one.
pub struct PromRun<'a> {
    pub run: &'a RunRecord,
    pub index: Option<&'a IndexReport>,
}

/// The base-unit suffix of a metric name and the factor to the base unit.
fn base_unit(unit: &Unit) -> Option<(&'static str, f64)> {
    Some(match unit {
        Unit::MBps => ("bytes_per_second", 1e6),
        Unit::MiBps => ("bytes_per_second", 1_048_576.0),
        Unit::GBps => ("bytes_per_second", 1e9),
        Unit::KBps => ("bytes_per_second", 1e3),
        Unit::Mbitps => ("bytes_per_second", 125_000.0),
        Unit::OpsPerSec => ("operations_per_second", 1.0),
        Unit::ItersPerSec => ("iterations_per_second", 1.0),
        Unit::PacketsPerSec => ("packets_per_second", 1.0),
        Unit::Nanoseconds => ("seconds", 1e-9),
        Unit::Microseconds => ("seconds", 1e-6),
        Unit::Milliseconds => ("seconds", 1e-3),
        Unit::Seconds => ("seconds", 1.0),
        Unit::MHz => ("hertz", 1e6),
        Unit::Percent => ("ratio", 0.01),
        Unit::Ratio => ("ratio", 1.0),
        Unit::Index => ("index", 1.0),
        Unit::Bytes => ("bytes", 1.0),
        Unit::Count => ("", 1.0),
        Unit::Other(_) => return None,
    })
}

/// `[a-zA-Z0-9_]` only, lower case, no leading digit, no doubled `_`.
fn sanitise(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The exported metric name of a sysgauge metric in `unit`.
pub fn metric_name(metric: &str, unit: &Unit) -> Option<String> {
    let (suffix, _) = base_unit(unit)?;
    let mut name = format!("sysgauge_{}", sanitise(metric));
    if !suffix.is_empty() && !name.ends_with(&format!("_{suffix}")) {
        name.push('_');
        name.push_str(suffix);
    }
    Some(name)
}

/// A label value escaped as the text format wants (`\\`, `\"`, `\n`).
fn escape(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

fn labels(pairs: &[(&str, String)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A value as the text format writes it (Go's float syntax is accepted:
/// Rust's shortest round-trip form is).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[derive(Default)]
struct Family {
    help: String,
    /// Label sets already written (a series appears once).
    seen: std::collections::HashSet<String>,
    lines: Vec<String>,
}

/// The text exposition of `runs` (one file for a whole fleet).
pub fn prometheus_text(runs: &[PromRun<'_>]) -> String {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut left_out = 0usize;
    let mut add = |name: String, help: String, label_text: String, value: f64| {
        let f = families.entry(name.clone()).or_insert_with(|| {
            order.push(name.clone());
            Family {
                help,
                ..Default::default()
            }
        });
        if f.seen.insert(label_text.clone()) {
            f.lines
                .push(format!("{name}{label_text} {}", number(value)));
        }
    };
    for PromRun { run, index } in runs {
        let mut machine: Vec<(&str, String)> = vec![("host", run.host_name().to_string())];
        if let Some(id) = &run.host.identity.machine_id {
            machine.push(("machine_id", id.clone()));
        }
        if let Some(a) = run.tags.get(ALIAS_TAG) {
            machine.push(("alias", a.clone()));
        }
        let with = |extra: &[(&str, String)]| {
            let mut all = machine.clone();
            all.extend(extra.iter().cloned());
            labels(&all)
        };
        add(
            "sysgauge_run_start_time_seconds".into(),
            "When the run started (Unix time).".into(),
            with(&[("profile", run.profile.to_string())]),
            run.started_at.timestamp_millis() as f64 / 1000.0,
        );
        if let Some(ix) = index {
            for l in ix.families.iter().chain(std::iter::once(&ix.overall)) {
                if let Some(v) = l.index {
                    add(
                        "sysgauge_index".into(),
                        "Index against the embedded baseline's machine (1000 = as fast), per family and overall (family=\"all\").".into(),
                        with(&[("family", l.family.clone()), ("profile", run.profile.to_string())]),
                        v,
                    );
                }
            }
        }
        for r in &run.results {
            if !matches!(r.status, Status::Ok) {
                continue;
            }
            for m in &r.metrics {
                let (Some(name), Some((_, factor))) =
                    (metric_name(&m.name, &m.unit), base_unit(&m.unit))
                else {
                    left_out += 1;
                    continue;
                };
                add(
                    name,
                    format!(
                        "sysgauge metric '{}' (median of the repetitions), converted from {} to the base unit.",
                        m.name,
                        m.unit.symbol()
                    ),
                    with(&[
                        ("id", r.bench_id.clone()),
                        ("params", r.params.canonical()),
                        ("workload", r.workload_version.to_string()),
                        ("profile", run.profile.to_string()),
                    ]),
                    m.value() * factor,
                );
            }
        }
    }
    let mut out = String::from(
        "# sysgauge results (https://prometheus.io/docs/instrumenting/exposition_formats/)\n",
    );
    if left_out > 0 {
        out.push_str(&format!(
            "# {left_out} metrics in units without a base-unit form were left out\n"
        ));
    }
    for name in order {
        let f = &families[&name];
        out.push_str(&format!(
            "# HELP {name} {}\n# TYPE {name} gauge\n",
            f.help.replace('\\', r"\\").replace('\n', r"\n")
        ));
        for l in &f.lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_compare::testutil::{result, run_with, throughput};
    use sysgauge_core::Better;

    #[test]
    fn names_in_base_units() {
        assert_eq!(
            metric_name("throughput", &Unit::MBps).as_deref(),
            Some("sysgauge_throughput_bytes_per_second")
        );
        assert_eq!(
            metric_name("latency p99", &Unit::Microseconds).as_deref(),
            Some("sysgauge_latency_p99_seconds")
        );
        assert_eq!(
            metric_name("wall_time_seconds", &Unit::Seconds).as_deref(),
            Some("sysgauge_wall_time_seconds")
        );
        assert_eq!(
            metric_name("files", &Unit::Count).as_deref(),
            Some("sysgauge_files")
        );
        assert_eq!(metric_name("x", &Unit::Other("k/s".into())), None);
        assert_eq!(sanitise("9 Lives--Now!"), "_9_lives_now");
    }

    #[test]
    fn a_fleet_in_one_file() {
        let mut a = run_with(
            "web\"1",
            None,
            vec![
                throughput("t.copy", &[100.0, 101.0, 99.0]),
                result(
                    "t.lat",
                    0,
                    1,
                    "latency",
                    Unit::Nanoseconds,
                    Better::Lower,
                    &[80.0],
                ),
            ],
        );
        a.host.identity.machine_id = Some("abcd".into());
        a.tags.insert("alias".into(), "w1".into());
        let b = run_with("db", None, vec![throughput("t.copy", &[200.0])]);
        let text = prometheus_text(&[
            PromRun {
                run: &a,
                index: None,
            },
            PromRun {
                run: &b,
                index: None,
            },
        ]);
        let lines: Vec<&str> = text.lines().collect();
        // One HELP and TYPE per name, then both hosts' series.
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("# TYPE sysgauge_throughput_bytes_per_second gauge"))
                .count(),
            1
        );
        let copy: Vec<&&str> = lines
            .iter()
            .filter(|l| l.starts_with("sysgauge_throughput_bytes_per_second{"))
            .collect();
        assert_eq!(copy.len(), 2, "{text}");
        assert_eq!(
            *copy[0],
            "sysgauge_throughput_bytes_per_second{host=\"web\\\"1\",machine_id=\"abcd\",alias=\"w1\",id=\"t.copy\",params=\"block_size=8192,threads=1\",workload=\"1\",profile=\"quick\"} 100000000"
        );
        assert!(copy[1].starts_with("sysgauge_throughput_bytes_per_second{host=\"db\","));
        assert!(copy[1].ends_with(" 200000000"));
        assert!(text.contains("sysgauge_latency_seconds{host=\"web\\\"1\""));
        assert!(text.contains("} 0.00000008\n"), "{text}");
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("sysgauge_run_start_time_seconds{"))
                .count(),
            2
        );
        // Every sample line parses: NAME{LABELS} VALUE.
        for l in lines.iter().filter(|l| !l.starts_with('#')) {
            let (_, v) = l.rsplit_once(' ').unwrap_or_else(|| panic!("{l}"));
            v.parse::<f64>().unwrap_or_else(|e| panic!("{l}: {e}"));
        }
    }
}
