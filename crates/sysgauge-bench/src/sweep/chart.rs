//! The sweep figure, the hash-program write-up's main figure: MB/s (by wall
//! time) against effective iterations N, one panel per program, every
//! panel on one y scale so that programs compare by eye, one line per
//! machine and copy count K. Colours follow the machine (`machine_color`,
//! as in every other chart); K=1 lines have hollow markers and the
//! many-copy lines filled ones, so the start-up gap reads at a glance, and
//! where a figure holds several K each line's end says which.
//!
//! `sysgauge sweep --chart` is this figure of one machine; `sysgauge chart
//! --kind sweep` and `sysgauge report` draw it for several. The points are
//! each machine's own (`sweep_points`), not the comparison's rows, so
//! machines that swept different N still get their lines.

use super::report::{sweep_points, SweepPoint};
use sysgauge_family::family::FamilyChart;
use sysgauge_report::chart::lines::{
    LabelledRun, LineFigure, LinePanel, Marker, Series, TickFormat, XAxis, XScale,
};
use sysgauge_report::{ChartError, Figure};

/// The sweep figure's registration (`sysgauge chart --kind sweep`, the
/// report's `chart-sweep` section).
pub const CHART: FamilyChart = FamilyChart {
    name: "sweep",
    heading: "Hash programs across machines",
    caption: "MB/s by wall time against effective iterations N (the program ran N/K times over K copies of the corpus), one chart per program on one scale, one line per machine and copy count; hollow markers: 1 copy, where process start-up dominates.",
    panels: Some("program"),
    figure: |runs| sweep_figure(runs).map(Figure::Lines),
};

/// The figure of these machines' sweep points; `NoData` when none has one.
pub fn sweep_figure(machines: &[LabelledRun]) -> Result<LineFigure, ChartError> {
    let points: Vec<(usize, SweepPoint)> = machines
        .iter()
        .enumerate()
        .flat_map(|(m, (_, run))| sweep_points(run).into_iter().map(move |p| (m, p)))
        .filter(|(_, p)| p.mbps_wall.is_finite() && p.mbps_wall > 0.0 && p.iterations > 0)
        .collect();
    if points.is_empty() {
        return Err(ChartError::NoData(
            "no sweep results in these runs: run `sysgauge sweep` (or `sysgauge run`, which includes a short sweep) on each machine and name those runs".into(),
        ));
    }
    let varies = |f: &dyn Fn(&SweepPoint) -> String| {
        let first = f(&points[0].1);
        points.iter().any(|(_, p)| f(p) != first)
    };
    // Hollow and filled markers tell 1 copy from many; the line's end says
    // which K only when there are several many-copy counts.
    let mut many: Vec<u64> = points
        .iter()
        .map(|(_, p)| p.copies)
        .filter(|&k| k > 1)
        .collect();
    many.sort_unstable();
    many.dedup();
    let (copies_vary, data_vary, output_vary) = (
        many.len() > 1,
        varies(&|p| p.data.clone()),
        varies(&|p| p.output.clone()),
    );
    let mut panels: Vec<LinePanel> = Vec::new();
    // Each panel's lines, keyed by machine, copies, data and output.
    let mut keys: Vec<Vec<(usize, u64, String, String)>> = Vec::new();
    for (m, p) in &points {
        let panel = match panels.iter().position(|q| q.title == p.program) {
            Some(i) => i,
            None => {
                panels.push(LinePanel {
                    title: p.program.clone(),
                    y_label: "MB/s (wall)".into(),
                    log_y: false,
                    series: Vec::new(),
                    marks: Vec::new(),
                });
                keys.push(Vec::new());
                panels.len() - 1
            }
        };
        let key = (*m, p.copies, p.data.clone(), p.output.clone());
        let point = (p.iterations as f64, p.mbps_wall);
        match keys[panel].iter().position(|k| *k == key) {
            Some(i) => panels[panel].series[i].points.push(point),
            None => {
                let mut tag: Vec<String> = Vec::new();
                if copies_vary {
                    tag.push(format!("×{}", p.copies));
                }
                if data_vary && !p.data.is_empty() {
                    tag.push(p.data.clone());
                }
                if output_vary {
                    tag.push(format!("to {}", p.output));
                }
                panels[panel].series.push(Series {
                    machine: *m,
                    marker: if p.copies == 1 {
                        Marker::Hollow
                    } else {
                        Marker::Filled
                    },
                    tag: (!tag.is_empty()).then(|| tag.join(" ")),
                    points: vec![point],
                });
                keys[panel].push(key);
            }
        }
    }
    for s in panels.iter_mut().flat_map(|p| p.series.iter_mut()) {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let mut shown: Vec<usize> = points.iter().map(|(m, _)| *m).collect();
    shown.dedup();
    let legend: Vec<(usize, String)> = machines
        .iter()
        .enumerate()
        .filter(|(m, _)| shown.contains(m))
        .map(|(m, (label, _))| (m, label.to_string()))
        .collect();
    let mut key = Vec::new();
    if points.iter().any(|(_, p)| p.copies == 1) {
        key.push((Marker::Hollow, "1 copy (start-up bound)".to_string()));
        match many.as_slice() {
            [] => {}
            [k] => key.push((Marker::Filled, format!("{k} copies"))),
            _ => key.push((Marker::Filled, "×K copies".to_string())),
        }
    }
    let (lo, hi) = points
        .iter()
        .map(|(_, p)| p.iterations as f64)
        .fold((f64::INFINITY, 0f64), |(lo, hi), n| (lo.min(n), hi.max(n)));
    let title = match legend.as_slice() {
        [(_, one)] => format!("sweep on {one}: MB/s by wall time against effective iterations N"),
        _ => "sweep: MB/s by wall time against effective iterations N, one line per machine"
            .to_string(),
    };
    Ok(LineFigure {
        title,
        legend,
        key,
        x: XAxis {
            label: "effective iterations N (bytes = N × corpus)".into(),
            // A log axis when N spans more than a factor of 8, so that
            // doublings are evenly spaced.
            scale: if hi / lo > 8.0 {
                XScale::Log2
            } else {
                XScale::Linear
            },
            ticks: TickFormat::Count,
        },
        shared: true,
        panels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::record::{Metric, Params, ResultRecord, RunRecord, Status};
    use sysgauge_core::{Better, Unit};
    use sysgauge_report::chart::lines::{svg_lines_of, svg_texts};
    use sysgauge_report::{figure_png, figure_svg};

    /// `program`'s result at K = `copies`, N = `n`: `mbps` MB/s by wall time
    /// (powers of two here, so that N MB / (N / mbps) s is `mbps` exactly).
    fn result(program: &str, copies: u64, n: u64, mbps: f64) -> ResultRecord {
        let id = format!("sweep.{program}");
        super::super::report::tests::result(&id, copies, n, &[n as f64 / mbps], &[])
    }

    fn run(host: &str, results: Vec<ResultRecord>) -> RunRecord {
        let mut r = RunRecord::new(&format!("id-{host}"), "sweep", "0");
        r.host.hostname = Some(host.into());
        r.results = results;
        r
    }

    /// A: dd and sha256sum at 1 and 64 copies, N = 64, 128, 1024; B:
    /// sha256sum at 512 copies, N = 64 and 128 only; C: no sweep at all.
    fn machines() -> Vec<RunRecord> {
        let mut a = Vec::new();
        for (n, one, many) in [
            (64, 128.0, 256.0),
            (128, 256.0, 512.0),
            (1024, 256.0, 512.0),
        ] {
            a.push(result("dd", 1, n, one * 4.0));
            a.push(result("dd", 64, n, many * 4.0));
            a.push(result("sha256sum", 1, n, one));
            a.push(result("sha256sum", 64, n, many));
        }
        let b = vec![
            result("sha256sum", 512, 128, 128.0),
            result("sha256sum", 512, 64, 64.0),
        ];
        let mut c = run("C", Vec::new());
        c.results.push(ResultRecord::new(
            "hash.sha256",
            Params::new().with("block_size", 8192u64),
            Status::Ok,
            vec![
                Metric::new("throughput", Unit::MBps, Better::Higher, vec![500.0])
                    .unwrap_or_else(|| panic!("metric")),
            ],
        ));
        vec![run("A", a), run("B", b), c]
    }

    fn labelled(runs: &[RunRecord]) -> Vec<(&str, &RunRecord)> {
        runs.iter().map(|r| (r.host_name(), r)).collect()
    }

    #[test]
    fn one_panel_per_program_one_line_per_machine_and_copies() {
        let runs = machines();
        let f = sweep_figure(&labelled(&runs)).unwrap();
        let titles: Vec<&str> = f.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(titles, ["dd", "sha256sum"]);
        // C has no point: not in the legend, no line; colours stay by
        // position (B is machine 1 whatever C is).
        assert_eq!(f.legend, vec![(0, "A".to_string()), (1, "B".to_string())]);
        let lines = |p: usize| -> Vec<(usize, Option<&str>, Marker)> {
            f.panels[p]
                .series
                .iter()
                .map(|s| (s.machine, s.tag.as_deref(), s.marker))
                .collect()
        };
        assert_eq!(
            lines(0),
            [
                (0, Some("×1"), Marker::Hollow),
                (0, Some("×64"), Marker::Filled)
            ]
        );
        assert_eq!(
            lines(1),
            [
                (0, Some("×1"), Marker::Hollow),
                (0, Some("×64"), Marker::Filled),
                (1, Some("×512"), Marker::Filled)
            ]
        );
        // x is N, y the wall-time MB/s, in N order.
        assert_eq!(
            f.panels[1].series[0].points,
            [(64.0, 128.0), (128.0, 256.0), (1024.0, 256.0)]
        );
        assert_eq!(f.panels[1].series[2].points, [(64.0, 64.0), (128.0, 128.0)]);
        assert_eq!(f.panels[0].series[1].points[2], (1024.0, 2048.0));
        // N from 64 to 1024: a base-2 axis, ticks at 64 … 1024, and an
        // eighth more on the right for the tags.
        assert_eq!(f.x.scale, XScale::Log2);
        assert_eq!(f.x_range(1), (5.5, 10.5 + 5.0 / 8.0));
        // One y scale for both programs: dd's largest value sets it.
        assert!(f.shared);
        assert_eq!(f.y_range(0), (0.0, 2048.0 * 1.1));
        assert_eq!(f.y_range(1), f.y_range(0));
        assert_eq!(
            f.key,
            [
                (Marker::Hollow, "1 copy (start-up bound)".to_string()),
                (Marker::Filled, "×K copies".to_string())
            ]
        );
        assert!(f.title.contains("one line per machine"), "{}", f.title);
    }

    #[test]
    fn svg_has_a_line_per_machine_and_copies() {
        let runs = machines();
        let f = sweep_figure(&labelled(&runs)).unwrap();
        let svg = figure_svg(&f, 1000).unwrap();
        assert_eq!(svg_lines_of(&svg, 0), 4, "A: 2 programs × 2 copy counts");
        assert_eq!(svg_lines_of(&svg, 1), 1, "B: sha256sum ×512");
        assert_eq!(svg_lines_of(&svg, 2), 0, "C has no sweep");
        let texts = svg_texts(&svg);
        for t in [
            "A",
            "B",
            "dd",
            "sha256sum",
            "×64",
            "×512",
            "1024",
            "×K copies",
        ] {
            assert!(texts.contains(&t), "no {t} in {texts:?}");
        }
        assert!(!texts.contains(&"C"), "{texts:?}");
        let png = figure_png(&f, 800).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn one_machine_is_the_sweep_command_chart() {
        let runs = machines();
        let f = sweep_figure(&[("box", &runs[1])]).unwrap();
        assert_eq!(
            f.title,
            "sweep on box: MB/s by wall time against effective iterations N"
        );
        // One copy count: no tags, no key; N from 64 to 128: linear.
        assert_eq!(f.panels[0].series[0].tag, None);
        assert!(f.key.is_empty());
        // A: 1 and 64 copies, told apart by the markers alone.
        let f = sweep_figure(&[("A", &runs[0])]).unwrap();
        assert!(f.panels[0].series.iter().all(|s| s.tag.is_none()));
        assert_eq!(f.key[1], (Marker::Filled, "64 copies".to_string()));
        assert_eq!(f.x_range(0), (5.5, 10.5));
        let f = sweep_figure(&[("B", &runs[1])]).unwrap();
        assert_eq!(f.x.scale, XScale::Linear);
        assert_eq!(f.x_range(0), (64.0, 128.0));
        // A single N still draws, with room on each side.
        let one = run("one", vec![result("dd", 4, 4, 100.0)]);
        let f = sweep_figure(&[("one", &one)]).unwrap();
        assert_eq!(f.x_range(0), (2.0, 6.0));
        assert!(figure_svg(&f, 500).is_ok());
    }

    #[test]
    fn no_sweep_says_what_to_run() {
        let runs = machines();
        let err = sweep_figure(&[("C", &runs[2])]).unwrap_err();
        assert!(
            err.to_string()
                .contains("no sweep results in these runs: run `sysgauge sweep`"),
            "{err}"
        );
        assert!(matches!(sweep_figure(&[]), Err(ChartError::NoData(_))));
    }
}
