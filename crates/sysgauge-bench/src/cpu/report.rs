//! The `sysgauge cpu` table: one row per kernel with its index group, its
//! rate at each thread count and the scaling efficiency beside every
//! multi-threaded rate, followed by the integer, floating-point and memory
//! indexes. Built from the records alone (family `cpu`; metrics `rate`,
//! `scaling_efficiency`, `index`), so a stored run renders the same as a
//! fresh one.

use std::collections::BTreeSet;
use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_report::format::format_value;
use sysgauge_report::table::{Align, Table, TableFormat};

fn threads_of(r: &ResultRecord) -> Option<u64> {
    r.count_param("threads")
}

fn metric_value(r: &ResultRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value())
}

/// The efficiency of the rates this table shows (`single`: the row's
/// single-thread rate), by the one definition; the stored metric, which a
/// run before that definition was applied to merged rounds may hold as the
/// median of its rounds' efficiencies, only when there is no such rate.
fn efficiency(r: &ResultRecord, threads: u64, single: Option<f64>) -> Option<f64> {
    match (metric_value(r, "rate"), single) {
        (Some(rate), Some(single)) if single > 0.0 && rate.is_finite() => Some(
            super::scaling_efficiency(rate, usize::try_from(threads).unwrap_or(usize::MAX), single),
        ),
        _ => metric_value(r, "scaling_efficiency"),
    }
}

fn is_index(r: &ResultRecord) -> bool {
    r.bench_id.starts_with("cpu.index-")
}

/// The kernel table and the index lines; empty when the run has no cpu
/// kernel results.
pub fn cpu_table(run: &RunRecord, format: TableFormat) -> String {
    let kernels: Vec<&ResultRecord> = run
        .results
        .iter()
        .filter(|r| r.family == "cpu" && !is_index(r))
        .collect();
    if kernels.is_empty() {
        return String::new();
    }
    let threads: BTreeSet<u64> = kernels.iter().filter_map(|r| threads_of(r)).collect();
    let mut ids: Vec<&str> = Vec::new();
    for r in &kernels {
        if !ids.contains(&r.bench_id.as_str()) {
            ids.push(&r.bench_id);
        }
    }
    let mut headers: Vec<(String, Align)> = vec![
        ("kernel".into(), Align::Left),
        ("index".into(), Align::Left),
    ];
    for &t in &threads {
        headers.push((format!("{t} thr iter/s"), Align::Right));
        if t > 1 {
            headers.push((format!("{t} thr scaling"), Align::Right));
        }
    }
    let header_refs: Vec<(&str, Align)> = headers.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut t = Table::new(&header_refs);
    for id in ids {
        let rows: Vec<&&ResultRecord> = kernels.iter().filter(|r| r.bench_id == id).collect();
        let group = rows
            .iter()
            .find_map(|r| r.details.get_str("group"))
            .unwrap_or("")
            .to_string();
        let mut cells = vec![id.trim_start_matches("cpu.").to_string(), group];
        let single = rows
            .iter()
            .find(|r| threads_of(r) == Some(1) && matches!(r.status, Status::Ok))
            .and_then(|r| metric_value(r, "rate"));
        for &n in &threads {
            let r = rows.iter().find(|r| threads_of(r) == Some(n));
            let (rate, eff) = match r {
                Some(r) => match &r.status {
                    Status::Ok => {
                        let mark = if r.details.get_bool("confidence_reached") == Some(false) {
                            "*"
                        } else {
                            ""
                        };
                        (
                            metric_value(r, "rate")
                                .map(|v| format!("{}{mark}", format_value(v)))
                                .unwrap_or_else(|| "-".into()),
                            efficiency(r, n, single)
                                .map(|v| format!("{:.0} %", v))
                                .unwrap_or_else(|| "-".into()),
                        )
                    }
                    Status::Skipped { .. } => ("skipped".into(), String::new()),
                    Status::Failed { .. } => ("FAILED".into(), String::new()),
                },
                None => (String::new(), String::new()),
            };
            cells.push(rate);
            if n > 1 {
                cells.push(eff);
            }
        }
        t.push(cells);
    }
    let mut out = t.render(format);
    if kernels
        .iter()
        .any(|r| r.details.get_bool("confidence_reached") == Some(false))
    {
        out.push_str(
            "* the 95 % confidence interval of the mean did not reach ±5 % in the time budget\n",
        );
    }
    let indexes: Vec<String> = run
        .results
        .iter()
        .filter(|r| r.family == "cpu" && is_index(r))
        .map(|r| {
            let name = r.bench_id.trim_start_matches("cpu.index-");
            match (&r.status, metric_value(r, "index")) {
                (Status::Ok, Some(v)) => format!(
                    "{name} index {v:.0} (1000 = reference {})",
                    r.params.get_str("reference").unwrap_or("?")
                ),
                (Status::Skipped { reason, .. }, _) => format!("{name} index: skipped ({reason})"),
                (Status::Failed { error }, _) => format!("{name} index: failed ({error})"),
                _ => format!("{name} index: -"),
            }
        })
        .collect();
    if !indexes.is_empty() {
        out.push('\n');
        for line in indexes {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::record::{Params, RunStatus};
    use sysgauge_core::{Better, Metric, Unit};

    fn result(id: &str, threads: u64, metrics: Vec<(&str, Unit, f64)>) -> ResultRecord {
        ResultRecord {
            family: "cpu".into(),
            details: Params::new()
                .with("group", "integer")
                .with("confidence_reached", threads == 1),
            duration_seconds: 0.1,
            ..ResultRecord::new(
                id,
                Params::new().with("threads", threads),
                Status::Ok,
                metrics
                    .into_iter()
                    .map(|(n, u, v)| {
                        Metric::new(n, u, Better::Higher, vec![v])
                            .unwrap_or_else(|| panic!("metric"))
                    })
                    .collect(),
            )
        }
    }

    fn run(results: Vec<ResultRecord>) -> RunRecord {
        RunRecord {
            status: RunStatus::Complete,
            results,
            ..RunRecord::new("r", "cpu", "0")
        }
    }

    #[test]
    fn kernel_rows_threads_and_indexes() {
        let mut idx = result("cpu.index-integer", 1, vec![("index", Unit::Index, 1234.4)]);
        idx.params.insert("reference", "cpu-v1");
        let r = run(vec![
            result("cpu.idea", 1, vec![("rate", Unit::ItersPerSec, 5000.0)]),
            result(
                "cpu.idea",
                2,
                vec![
                    ("rate", Unit::ItersPerSec, 9000.0),
                    ("scaling_efficiency", Unit::Percent, 90.0),
                ],
            ),
            idx,
        ]);
        let text = cpu_table(&r, TableFormat::Text);
        assert!(
            text.contains("1 thr iter/s") && text.contains("2 thr scaling"),
            "{text}"
        );
        let row = text.lines().find(|l| l.starts_with("idea")).unwrap_or("");
        assert!(
            row.contains("5000.0") && row.contains("9000.0*") && row.contains("90 %"),
            "{text}"
        );
        assert!(text.contains("* the 95 % confidence interval"));
        assert!(
            text.contains("integer index 1234 (1000 = reference cpu-v1)"),
            "{text}"
        );
        assert_eq!(cpu_table(&run(vec![]), TableFormat::Text), "");
    }
}
