//! Renderings of the `spawn` family from its records: the cost of each
//! method (µs per spawn, spawns per second, parent and children CPU), the
//! parent-size sweep as a methods × parent size table (where fork's cost
//! grows with the parent and vfork/posix_spawn's does not), and the
//! one-spawner-per-CPU scaling.

use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_report::format::format_value;
use sysgauge_report::summary::spread_cell;
use sysgauge_report::table::{Align, Table, TableFormat};

/// One measured spawn case, pulled out of its record.
#[derive(Debug, Clone)]
struct Row<'a> {
    method: &'a str,
    target: &'a str,
    parent_mib: u64,
    spawners: u64,
    record: &'a ResultRecord,
}

impl Row<'_> {
    fn value(&self, metric: &str) -> Option<f64> {
        self.record
            .metrics
            .iter()
            .find(|m| m.name == metric)
            .map(|m| m.value())
    }
    fn spread(&self, metric: &str) -> String {
        self.record
            .metrics
            .iter()
            .find(|m| m.name == metric)
            .map(|m| spread_cell(self.record, m))
            .unwrap_or_default()
    }
}

fn cell(v: Option<f64>) -> String {
    v.map(format_value).unwrap_or_else(|| "-".into())
}

fn rows(run: &RunRecord) -> Vec<Row<'_>> {
    run.results
        .iter()
        .filter(|r| r.family == "spawn" && r.is_ok())
        .map(|r| Row {
            method: r.bench_id.strip_prefix("spawn.").unwrap_or(&r.bench_id),
            target: r.params.get_str("target").unwrap_or("-"),
            parent_mib: r.params.get_u64("parent_mib").unwrap_or(0),
            spawners: r.count_param("spawners").unwrap_or(1),
            record: r,
        })
        .collect()
}

/// Methods in the order the run measured them.
fn method_order<'a>(rows: &[Row<'a>]) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for r in rows {
        if !v.contains(&r.method) {
            v.push(r.method);
        }
    }
    v
}

/// The cost table: one row per method and target, smallest parent, one
/// spawner.
pub fn methods_table(run: &RunRecord) -> Table {
    let all = rows(run);
    let base = all
        .iter()
        .filter(|r| r.spawners == 1)
        .map(|r| r.parent_mib)
        .min()
        .unwrap_or(0);
    let mut t = Table::columns(
        "method, target, >µs/spawn, >spread, >spawns/s, >parent CPU µs, >children CPU µs",
    );
    for r in all
        .iter()
        .filter(|r| r.spawners == 1 && r.parent_mib == base)
    {
        t.push(vec![
            r.method.to_string(),
            r.target.to_string(),
            cell(r.value("spawn_time")),
            r.spread("spawn_time"),
            cell(r.value("spawn_rate")),
            cell(r.value("parent_cpu")),
            cell(r.value("children_cpu")),
        ]);
    }
    t
}

/// The sweep: methods × parent size, µs of wall time per spawn, for one
/// target (the static target when present), one spawner. Includes the ratio
/// of the largest to the smallest parent.
pub fn sweep_table(run: &RunRecord) -> Option<Table> {
    sweep_of(run, &["spawn_time"])
}

/// The same sweep in CPU time (parent + children, µs per spawn): what the
/// spawn costs the machine, which other load on it does not inflate the way
/// it inflates wall time.
pub fn sweep_cpu_table(run: &RunRecord) -> Option<Table> {
    sweep_of(run, &["parent_cpu", "children_cpu"])
}

fn sweep_of(run: &RunRecord, metrics: &[&str]) -> Option<Table> {
    let all = rows(run);
    let single: Vec<&Row> = all.iter().filter(|r| r.spawners == 1).collect();
    // The target with the most sizes; fork-exit ("-") joins every target.
    let mut best: Option<(&str, usize)> = None;
    for tg in ["static", "true"] {
        let mut sizes: Vec<u64> = single
            .iter()
            .filter(|r| r.target == tg)
            .map(|r| r.parent_mib)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() > best.map_or(1, |b| b.1) {
            best = Some((tg, sizes.len()));
        }
    }
    let (target, _) = best?;
    let in_sweep = |r: &&&Row| r.target == target || r.target == "-";
    let mut sizes: Vec<u64> = single
        .iter()
        .filter(in_sweep)
        .map(|r| r.parent_mib)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let headers: Vec<String> = std::iter::once(format!("method (target {target})"))
        .chain(sizes.iter().map(|&s| parent_label(s)))
        .chain(std::iter::once(format!(
            "{} / {} MiB",
            sizes.last().copied().unwrap_or(0),
            sizes.first().copied().unwrap_or(0)
        )))
        .collect();
    let spec: Vec<(&str, Align)> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), if i == 0 { Align::Left } else { Align::Right }))
        .collect();
    let mut t = Table::new(&spec);
    for m in method_order(&all) {
        let by_size: Vec<Option<f64>> = sizes
            .iter()
            .map(|&s| {
                single
                    .iter()
                    .filter(in_sweep)
                    .find(|r| r.method == m && r.parent_mib == s)
                    .and_then(|r| {
                        metrics
                            .iter()
                            .map(|name| r.value(name))
                            .sum::<Option<f64>>()
                    })
            })
            .collect();
        if by_size.iter().filter(|v| v.is_some()).count() < 2 {
            continue;
        }
        let ratio = match (
            by_size.first().copied().flatten(),
            by_size.last().copied().flatten(),
        ) {
            (Some(a), Some(b)) if a > 0.0 => format!("×{:.2}", b / a),
            _ => "-".into(),
        };
        let mut row = vec![m.to_string()];
        row.extend(by_size.into_iter().map(cell));
        row.push(ratio);
        t.push(row);
    }
    (!t.is_empty()).then_some(t)
}

/// A parent size as the sweep's headers spell it.
fn parent_label(mib: u64) -> String {
    format!("{mib} MiB")
}

/// One spawner against several: spawns per second and the scaling, with
/// the parent size of each pair (the same size on both sides).
pub fn multi_table(run: &RunRecord) -> Option<Table> {
    let all = rows(run);
    let mut t = Table::new(&[
        ("method", Align::Left),
        ("target", Align::Left),
        ("parent", Align::Right),
        ("spawners", Align::Right),
        ("spawns/s, 1 spawner", Align::Right),
        ("spawns/s, all", Align::Right),
        ("scaling", Align::Right),
    ]);
    for r in all.iter().filter(|r| r.spawners > 1) {
        let one = all
            .iter()
            .find(|o| {
                o.method == r.method
                    && o.target == r.target
                    && o.parent_mib == r.parent_mib
                    && o.spawners == 1
            })
            .and_then(|o| o.value("spawn_rate"));
        let many = r.value("spawn_rate");
        let scaling = match (one, many) {
            (Some(a), Some(b)) if a > 0.0 => format!("×{:.2}", b / a),
            _ => "-".into(),
        };
        t.push(vec![
            r.method.to_string(),
            r.target.to_string(),
            parent_label(r.parent_mib),
            r.spawners.to_string(),
            cell(one),
            cell(many),
            scaling,
        ]);
    }
    (!t.is_empty()).then_some(t)
}

/// Cases that were skipped or failed, one line each.
fn not_measured(run: &RunRecord) -> String {
    let mut out = String::new();
    for r in run.results.iter().filter(|r| r.family == "spawn") {
        let why = match &r.status {
            Status::Ok => continue,
            Status::Skipped { reason, .. } => format!("skipped: {reason}"),
            Status::Failed { error } => format!("FAILED: {error}"),
        };
        out.push_str(&format!("  {} ({}): {why}\n", r.bench_id, r.params));
    }
    out
}

/// The whole spawn report: cost table, sweep, multi-spawner scaling, and
/// the cases that did not run.
pub fn spawn_report(run: &RunRecord, format: TableFormat) -> String {
    let heading = |s: &str| match format {
        TableFormat::Markdown => format!("\n### {s}\n\n"),
        _ => format!("\n{s}\n"),
    };
    let mut out = String::new();
    let costs = methods_table(run);
    if !costs.is_empty() {
        out.push_str(&heading("Cost of one spawn (one spawner, smallest parent)"));
        out.push_str(&costs.render(format));
    }
    if let Some(t) = sweep_table(run) {
        out.push_str(&heading(
            "Parent-size sweep: µs per spawn (wall) with the parent holding touched memory",
        ));
        out.push_str(&t.render(format));
    }
    if let Some(t) = sweep_cpu_table(run) {
        out.push_str(&heading(
            "Parent-size sweep: CPU µs per spawn (parent + children)",
        ));
        out.push_str(&t.render(format));
    }
    if let Some(t) = multi_table(run) {
        out.push_str(&heading("One spawner per CPU"));
        out.push_str(&t.render(format));
    }
    let missing = not_measured(run);
    if !missing.is_empty() {
        out.push_str(&heading("Not measured"));
        out.push_str(&missing);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::record::{Params, Profile, RunStatus};
    use sysgauge_core::{Better, Metric, Unit};

    fn result(
        method: &str,
        target: Option<&str>,
        mib: u64,
        spawners: u64,
        us: f64,
    ) -> ResultRecord {
        let mut params = Params::new()
            .with("parent_mib", mib)
            .with("spawners", spawners);
        if let Some(t) = target {
            params.insert("target", t);
        }
        let m = |name: &str, unit: Unit, v: f64| {
            Metric::new(name, unit, Better::Lower, vec![v, v * 1.01, v * 0.99])
                .unwrap_or_else(|| panic!("metric"))
        };
        ResultRecord {
            family: "spawn".into(),
            duration_seconds: 1.0,
            ..ResultRecord::new(
                &format!("spawn.{method}"),
                params,
                Status::Ok,
                vec![
                    m("spawn_time", Unit::Microseconds, us),
                    m("spawn_rate", Unit::OpsPerSec, spawners as f64 * 1e6 / us),
                    m("parent_cpu", Unit::Microseconds, us / 2.0),
                    m("children_cpu", Unit::Microseconds, us / 4.0),
                ],
            )
        }
    }

    fn run(results: Vec<ResultRecord>) -> RunRecord {
        RunRecord {
            status: RunStatus::Complete,
            profile: Profile::Standard,
            results,
            ..RunRecord::new("r", "spawn", "0")
        }
    }

    #[test]
    fn sweep_is_methods_by_parent_size() {
        let mut v = Vec::new();
        for (mib, fork, vfork) in [(0, 100.0, 50.0), (256, 400.0, 51.0), (1024, 1300.0, 50.0)] {
            v.push(result("fork-exit", None, mib, 1, fork * 0.8));
            v.push(result("fork-exec", Some("static"), mib, 1, fork));
            v.push(result("vfork-exec", Some("static"), mib, 1, vfork));
        }
        v.push(result("fork-exec", Some("true"), 0, 1, 700.0));
        v.push(result("fork-exec", Some("static"), 0, 2, 120.0));
        let mut skipped = result("system", Some("static"), 0, 2, 1.0);
        skipped.status = Status::Skipped {
            reason: "one spawner only".into(),
            hint: None,
        };
        skipped.metrics.clear();
        v.push(skipped);
        let r = run(v);
        let sweep = sweep_table(&r).unwrap_or_else(|| panic!("no sweep"));
        let text = sweep.render(TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains("0 MiB") && lines[0].contains("1024 MiB"),
            "{text}"
        );
        assert!(lines[2].starts_with("fork-exit"), "{text}");
        assert!(
            lines[3].starts_with("fork-exec") && lines[3].contains("×13.00"),
            "{text}"
        );
        assert!(
            lines[4].starts_with("vfork-exec") && lines[4].contains("×1.00"),
            "{text}"
        );

        let costs = methods_table(&r).render(TableFormat::Text);
        assert_eq!(costs.lines().count(), 2 + 4, "{costs}");
        assert!(costs.contains("700.0"));

        let cpu = sweep_cpu_table(&r)
            .unwrap_or_else(|| panic!("no cpu sweep"))
            .render(TableFormat::Text);
        // parent_cpu + children_cpu = us/2 + us/4 = 0.75 us.
        assert!(cpu.contains("975.0") && cpu.contains("×13.00"), "{cpu}");

        let multi = multi_table(&r)
            .unwrap_or_else(|| panic!("no multi"))
            .render(TableFormat::Text);
        // 1 spawner: 10000/s; 2 spawners at 120 µs each: 16667/s.
        assert!(multi.contains("×1.67"), "{multi}");

        let all = spawn_report(&r, TableFormat::Markdown);
        assert!(all.contains("### Parent-size sweep"));
        assert!(all.contains("spawn.system (parent_mib=0 spawners=2 target=static): skipped"));
    }

    /// `--parent-size 0,1GiB --spawners 1,all`: each multi-spawner row names
    /// its parent, and is scaled against the one spawner of that parent.
    #[test]
    fn multi_rows_name_their_parent_size() {
        let mut v = Vec::new();
        for (mib, one, all) in [(0, 500.0, 500.0), (1024, 50_000.0, 100_000.0)] {
            for m in ["fork-exec", "posix-spawn"] {
                v.push(result(m, Some("static"), mib, 1, one));
                v.push(result(m, Some("static"), mib, 2, all));
            }
        }
        let text = multi_table(&run(v))
            .unwrap_or_else(|| panic!("no multi"))
            .render(TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("parent"), "{text}");
        assert_eq!(lines.len(), 2 + 4, "{text}");
        let row = |method: &str, parent: &str| {
            lines[2..]
                .iter()
                .copied()
                .find(|l| l.starts_with(method) && l.split_whitespace().nth(2) == Some(parent))
                .unwrap_or_else(|| panic!("no {method} row for {parent} MiB:\n{text}"))
        };
        // 1 spawner at 500 µs: 2000/s; 2 at 500 µs each: 4000/s.
        assert!(row("fork-exec", "0").contains("×2.00"), "{text}");
        // 1 spawner at 50 ms: 20/s; 2 at 100 ms each: 20/s.
        assert!(row("fork-exec", "1024").contains("×1.00"), "{text}");
        assert!(row("posix-spawn", "1024").contains("×1.00"), "{text}");
    }

    #[test]
    fn no_sweep_without_sizes() {
        let r = run(vec![result("posix-spawn", Some("static"), 0, 1, 90.0)]);
        assert!(sweep_table(&r).is_none());
        assert!(multi_table(&r).is_none());
        assert!(!spawn_report(&r, TableFormat::Text).contains("sweep"));
    }
}
