//! The memory latency figure: ns per access against working set, working
//! set on a log2 axis, ns on a log axis, one line per machine, and a
//! dashed line at each cache size of the machines' host facts, so the
//! steps L1 → L2 → L3 → memory can be read against the caches. A cache
//! every machine shown has is marked once in grey, one only some have in
//! each such machine's colour; a machine without cache facts (an import)
//! has none.
//!
//! `sysgauge mem --chart` is this figure of one machine; `sysgauge chart
//! --kind latency` and `sysgauge report` draw it for several, from each
//! machine's own points (machines that measured different working sets
//! still get their lines).

use super::LATENCY;
use sysgauge_core::record::{ResultRecord, RunRecord};
use sysgauge_core::size::Bytes;
use sysgauge_family::family::FamilyChart;
use sysgauge_report::chart::lines::{
    LabelledRun, LineFigure, LinePanel, Mark, Marker, Series, TickFormat, XAxis, XScale,
};
use sysgauge_report::{ChartError, Figure};

/// The latency figure's registration (`sysgauge chart --kind latency`, the
/// report's `chart-latency` section).
pub const CHART: FamilyChart = FamilyChart {
    name: "latency",
    heading: "Memory latency across machines",
    caption: "ns per access (dependent loads around one random cycle) against working set, one line per machine; dashed lines mark the caches of the host facts, grey where every machine shown has the same.",
    panels: None,
    figure: |runs| latency_figure(runs).map(Figure::Lines),
};

/// The working set of a latency result: a parameter of the case.
fn working_set(r: &ResultRecord) -> Option<u64> {
    r.params
        .get_u64("working_set")
        .or_else(|| r.details.get_u64("working_set"))
}

/// One latency result.
struct Point {
    /// Whether huge pages were asked for.
    huge: Option<bool>,
    /// Working set in bytes.
    bytes: f64,
    /// Median ns per access.
    ns: f64,
}

/// A run's latency points, in working-set order.
fn latency_points(run: &RunRecord) -> Vec<Point> {
    let mut v: Vec<Point> = run
        .results
        .iter()
        .filter(|r| r.bench_id == LATENCY && r.is_ok())
        .filter_map(|r| {
            Some(Point {
                huge: r.params.get_bool("huge_pages"),
                bytes: working_set(r)? as f64,
                ns: r.primary()?.value(),
            })
        })
        .filter(|p| p.bytes > 0.0 && p.ns > 0.0 && p.ns.is_finite())
        .collect();
    v.sort_by(|a, b| a.bytes.total_cmp(&b.bytes));
    v
}

/// A machine's data and unified caches as marks: (size, `L2 2 MiB`).
fn cache_marks(run: &RunRecord) -> Vec<(f64, String)> {
    let mut v: Vec<(f64, String)> = run
        .host
        .cpu
        .caches
        .iter()
        .filter(|c| c.kind != "instruction" && c.size_bytes > 0)
        .map(|c| {
            let kind = if c.kind == "data" { "d" } else { "" };
            (
                c.size_bytes as f64,
                format!("L{}{kind} {}", c.level, Bytes(c.size_bytes)),
            )
        })
        .collect();
    v.dedup();
    v
}

/// The figure of these machines' latency points; `NoData` when none has
/// one.
pub fn latency_figure(machines: &[LabelledRun]) -> Result<LineFigure, ChartError> {
    let per_machine: Vec<(usize, Vec<Point>)> = machines
        .iter()
        .enumerate()
        .map(|(m, (_, run))| (m, latency_points(run)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if per_machine.is_empty() {
        return Err(ChartError::NoData(format!(
            "no {LATENCY} results in these runs: run `sysgauge mem --only latency` (or `sysgauge run`, which measures one working set) on each machine and name those runs"
        )));
    }
    let huge: Vec<Option<bool>> = per_machine
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.huge))
        .collect();
    let huge_varies = huge.iter().any(|h| *h != huge[0]);
    let mut series: Vec<Series> = Vec::new();
    for (m, points) in &per_machine {
        let mut kinds: Vec<Option<bool>> = points.iter().map(|p| p.huge).collect();
        kinds.sort();
        kinds.dedup();
        for kind in kinds {
            series.push(Series {
                machine: *m,
                marker: Marker::Filled,
                tag: huge_varies.then(|| {
                    if kind == Some(true) {
                        "huge pages"
                    } else {
                        "small pages"
                    }
                    .to_string()
                }),
                points: points
                    .iter()
                    .filter(|p| p.huge == kind)
                    .map(|p| (p.bytes, p.ns))
                    .collect(),
            });
        }
    }
    // A cache every machine shown has is one grey mark; the others are
    // marked in their machine's colour.
    let caches: Vec<(usize, Vec<(f64, String)>)> = per_machine
        .iter()
        .map(|(m, _)| (*m, cache_marks(machines[*m].1)))
        .collect();
    let mut marks: Vec<Mark> = Vec::new();
    for (m, list) in &caches {
        for (x, label) in list {
            let everywhere = caches.iter().all(|(_, l)| l.contains(&(*x, label.clone())));
            let mark = Mark {
                x: *x,
                label: label.clone(),
                machine: (!everywhere).then_some(*m),
            };
            if !marks.contains(&mark) {
                marks.push(mark);
            }
        }
    }
    let legend: Vec<(usize, String)> = per_machine
        .iter()
        .map(|(m, _)| (*m, machines[*m].0.to_string()))
        .collect();
    let title = match per_machine.as_slice() {
        [(m, _)] => format!(
            "Memory latency by working set — {} ({})",
            machines[*m].0,
            machines[*m].1.started_at.format("%Y-%m-%d")
        ),
        _ => "Memory latency by working set, one line per machine".to_string(),
    };
    Ok(LineFigure {
        title,
        legend,
        key: Vec::new(),
        x: XAxis {
            label: "working set (log2 scale)".into(),
            scale: XScale::Log2,
            ticks: TickFormat::Bytes,
        },
        shared: true,
        panels: vec![LinePanel {
            title: String::new(),
            y_label: "ns per access (log scale)".into(),
            log_y: true,
            series,
            marks,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::host::CacheInfo;
    use sysgauge_core::record::{Metric, Params, Status};
    use sysgauge_core::{Better, Unit};
    use sysgauge_report::chart::lines::{svg_lines_of, svg_texts};
    use sysgauge_report::{figure_png, figure_svg};

    fn cache(level: u8, kind: &str, size_bytes: u64) -> CacheInfo {
        CacheInfo {
            level,
            kind: kind.into(),
            size_bytes,
            shared_by: None,
            instances: None,
        }
    }

    fn run(host: &str, l2: u64, points: &[(u64, f64)]) -> RunRecord {
        let mut r = RunRecord::new(&format!("id-{host}"), "mem", "0");
        r.host.hostname = Some(host.into());
        r.host.cpu.caches = vec![
            cache(1, "data", 48 << 10),
            cache(1, "instruction", 32 << 10),
            cache(2, "unified", l2),
        ];
        r.results = points
            .iter()
            .map(|&(ws, ns)| ResultRecord {
                family: "mem".into(),
                ..ResultRecord::new(
                    LATENCY,
                    Params::new()
                        .with("working_set", ws)
                        .with("huge_pages", true),
                    Status::Ok,
                    vec![
                        Metric::new("latency", Unit::Nanoseconds, Better::Lower, vec![ns])
                            .unwrap_or_else(|| panic!("metric")),
                    ],
                )
            })
            .collect();
        r
    }

    fn machines() -> Vec<RunRecord> {
        let mut imported = run("imported", 0, &[]);
        imported.host.cpu.caches.clear();
        vec![
            run(
                "laptop",
                2 << 20,
                &[(64 << 20, 90.0), (4096, 1.25), (1 << 20, 5.0)],
            ),
            imported,
            run("pi", 1 << 20, &[(4096, 2.0), (64 << 20, 150.0)]),
        ]
    }

    #[test]
    fn one_line_per_machine_with_its_caches() {
        let runs = machines();
        let labelled: Vec<(&str, &RunRecord)> = runs.iter().map(|r| (r.host_name(), r)).collect();
        let f = latency_figure(&labelled).unwrap();
        assert_eq!(
            f.legend,
            vec![(0, "laptop".to_string()), (2, "pi".to_string())]
        );
        let p = &f.panels[0];
        assert_eq!(p.series.len(), 2);
        assert_eq!(p.series[0].machine, 0);
        assert_eq!(
            p.series[0].points,
            [(4096.0, 1.25), (1048576.0, 5.0), (67108864.0, 90.0)]
        );
        assert_eq!(p.series[1].machine, 2);
        assert_eq!(p.series[1].tag, None);
        // L1d is the same on both: one grey mark; the L2s differ.
        let marks: Vec<(f64, &str, Option<usize>)> = p
            .marks
            .iter()
            .map(|m| (m.x, m.label.as_str(), m.machine))
            .collect();
        assert_eq!(
            marks,
            [
                (49152.0, "L1d 48 KiB", None),
                (2097152.0, "L2 2 MiB", Some(0)),
                (1048576.0, "L2 1 MiB", Some(2))
            ]
        );
        // Working sets from 4 KiB to 64 MiB on a base-2 axis (12 to 26).
        assert_eq!(f.x_range(0), (11.5, 26.5));
        assert_eq!(f.y_range(0), (1.25 / 1.5, 150.0 * 1.5));
        let svg = figure_svg(&f, 1000).unwrap();
        assert_eq!(svg_lines_of(&svg, 0), 1);
        assert_eq!(svg_lines_of(&svg, 1), 0);
        assert_eq!(svg_lines_of(&svg, 2), 1);
        let texts = svg_texts(&svg);
        for t in ["laptop", "pi", "L2 1 MiB", "L1d 48 KiB", "4 KiB", "64 MiB"] {
            assert!(texts.contains(&t), "no {t} in {texts:?}");
        }
        assert!(!texts.contains(&"imported"));
        let png = figure_png(&f, 640).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }

    #[test]
    fn one_machine_is_the_mem_command_chart() {
        let runs = machines();
        let f = latency_figure(&[("pi", &runs[2])]).unwrap();
        assert!(f.title.starts_with("Memory latency by working set — pi ("));
        assert!(f.panels[0].marks.iter().all(|m| m.machine.is_none()));
        let err = latency_figure(&[("imported", &runs[1])]).unwrap_err();
        assert!(
            err.to_string().contains(
                "no mem.latency results in these runs: run `sysgauge mem --only latency`"
            ),
            "{err}"
        );
    }

    /// One working set (what `sysgauge run` measures) is one point: the
    /// y axis still has at least two numbers, whatever the latency.
    #[test]
    fn one_working_set_has_y_axis_numbers() {
        for ns in [0.9, 1.25, 3.5, 7.0, 30.0, 85.0, 150.0, 700.0] {
            let r = run("pi", 1 << 20, &[(128 << 20, ns)]);
            let f = latency_figure(&[("pi", &r)]).unwrap();
            let (lo, hi) = f.y_range(0);
            assert!(lo < ns && ns < hi, "{ns} outside {lo}..{hi}");
            let svg = figure_svg(&f, 1000).unwrap();
            let texts = svg_texts(&svg);
            let numbers: Vec<f64> = texts.iter().filter_map(|t| t.parse().ok()).collect();
            assert!(
                numbers.len() >= 2,
                "{ns} ns: y axis {lo}..{hi} has the numbers {numbers:?} ({texts:?})"
            );
            assert!(texts.contains(&"128 MiB"), "{texts:?}");
        }
    }
}
