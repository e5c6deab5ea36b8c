//! The sweep chart: MB/s (by wall time) against effective iterations N, one
//! line per (program, copies), drawn with the same plotters set-up as the
//! comparison charts (embedded font, SVG or PNG). Colours follow the
//! program; K=1 lines are drawn with hollow markers and the many-copy lines
//! with filled ones, so the start-up gap between the two reads at a glance.

use super::report::SweepPoint;
use plotters::coord::Shift;
use plotters::prelude::*;
use sysgauge_report::chart::{draw_err, encode_png, ensure_font, machine_color, ChartError, FONT};

/// One line: a program at one copy count.
struct Line {
    label: String,
    color: RGBColor,
    hollow: bool,
    points: Vec<(f64, f64)>,
}

fn lines(points: &[SweepPoint]) -> Vec<Line> {
    let mut programs: Vec<&str> = Vec::new();
    let mut out: Vec<Line> = Vec::new();
    for p in points {
        if !programs.contains(&p.program.as_str()) {
            programs.push(&p.program);
        }
        let color = machine_color(programs.iter().position(|q| *q == p.program).unwrap_or(0));
        let label = format!("{} ×{}", p.program, p.copies);
        match out.iter_mut().find(|l| l.label == label) {
            Some(l) => l.points.push((p.iterations as f64, p.mbps_wall)),
            None => out.push(Line {
                label,
                color,
                hollow: p.copies == 1,
                points: vec![(p.iterations as f64, p.mbps_wall)],
            }),
        }
    }
    for l in &mut out {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[SweepPoint],
) -> Result<(), ChartError> {
    let lines = lines(points);
    let (x_min, x_max) = points
        .iter()
        .map(|p| p.iterations as f64)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    let y_max = points.iter().map(|p| p.mbps_wall).fold(0.0f64, f64::max) * 1.1;
    root.fill(&WHITE).map_err(draw_err)?;
    let host = points.first().map(|p| p.host.as_str()).unwrap_or("");
    let title = format!("sweep on {host}: MB/s by wall time against effective iterations N");
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64);
    // A log axis when N spans more than a factor of 8, so doublings are
    // evenly spaced; a single N gets a little room on each side.
    let (lo, hi) = if x_max > x_min {
        (x_min, x_max)
    } else {
        (x_min * 0.5, x_max * 1.5)
    };
    macro_rules! finish {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc("effective iterations N (bytes = N × corpus)")
                .y_desc("MB/s (wall)")
                .label_style((FONT, 12))
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0}"))
                .axis_desc_style((FONT, 13))
                .draw()
                .map_err(draw_err)?;
            for l in &lines {
                let color = l.color;
                let hollow = l.hollow;
                chart
                    .draw_series(LineSeries::new(
                        l.points.iter().copied(),
                        color.stroke_width(2),
                    ))
                    .map_err(draw_err)?
                    .label(l.label.clone())
                    .legend(move |(x, y)| {
                        let marker = if hollow {
                            color.stroke_width(2)
                        } else {
                            color.filled()
                        };
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (18, 0)], color.stroke_width(2))
                            + Circle::new((9, 0), 4, marker)
                    });
                chart
                    .draw_series(l.points.iter().map(|&(x, y)| {
                        let style = if hollow {
                            color.stroke_width(2)
                        } else {
                            color.filled()
                        };
                        Circle::new((x, y), 4, style)
                    }))
                    .map_err(draw_err)?;
            }
            chart
                .configure_series_labels()
                .label_font((FONT, 12))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .position(SeriesLabelPosition::LowerRight)
                .draw()
                .map_err(draw_err)?;
        }};
    }
    if hi / lo > 8.0 {
        finish!(builder
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..y_max)
            .map_err(draw_err)?);
    } else {
        finish!(builder
            .build_cartesian_2d(lo..hi, 0.0..y_max)
            .map_err(draw_err)?);
    }
    Ok(())
}

fn check(points: &[SweepPoint]) -> Result<(), ChartError> {
    if points.is_empty() {
        return Err(ChartError::NoData("the sweep has no finished point".into()));
    }
    Ok(())
}

/// The sweep chart as an SVG document.
pub fn sweep_chart_svg(points: &[SweepPoint], width: u32) -> Result<String, ChartError> {
    check(points)?;
    ensure_font()?;
    let w = width.clamp(400, 4000);
    let h = w * 5 / 8;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        draw(&root, points)?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// The sweep chart as PNG bytes.
pub fn sweep_chart_png(points: &[SweepPoint], width: u32) -> Result<Vec<u8>, ChartError> {
    check(points)?;
    ensure_font()?;
    let w = width.clamp(400, 4000);
    let h = w * 5 / 8;
    let mut buf = vec![0u8; (w as usize) * (h as usize) * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw(&root, points)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(program: &str, copies: u64, n: u64, mbps: f64) -> SweepPoint {
        SweepPoint {
            host: "box".into(),
            program: program.into(),
            data: "words".into(),
            output: "null".into(),
            copies,
            iterations: n,
            runs: n / copies,
            bytes: n * 1_000_000,
            wall: n as f64 / mbps,
            user: 0.0,
            sys: 0.0,
            mbps_wall: mbps,
            mbps_user: None,
            mbps_sys: None,
            hash_only_estimate: None,
            cov: 0.01,
            repetitions: 5,
        }
    }

    fn sample() -> Vec<SweepPoint> {
        let mut v = Vec::new();
        for (n, a, b) in [
            (64, 200.0, 320.0),
            (128, 210.0, 330.0),
            (1024, 215.0, 335.0),
        ] {
            v.push(point("sha256sum", 1, n, a));
            v.push(point("sha256sum", 64, n, b));
            v.push(point("dd", 1, n, a * 3.0));
            v.push(point("dd", 64, n, b * 9.0));
        }
        v
    }

    #[test]
    fn one_line_per_program_and_copies() {
        let l = lines(&sample());
        let labels: Vec<&str> = l.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["sha256sum ×1", "sha256sum ×64", "dd ×1", "dd ×64"]);
        assert!(l.iter().all(|l| l.points.len() == 3));
        assert!(l[0].hollow && !l[1].hollow);
        assert_eq!(l[0].color, l[1].color);
        assert_ne!(l[0].color, l[2].color);
    }

    #[test]
    fn svg_and_png() {
        let svg = sweep_chart_svg(&sample(), 800).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("sha256sum ×64"), "legend missing");
        assert!(svg.contains("effective iterations N"));
        let png = sweep_chart_png(&sample(), 640).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        // One N only still draws.
        let one = vec![point("dd", 1, 4, 100.0), point("dd", 4, 4, 300.0)];
        assert!(sweep_chart_svg(&one, 500).is_ok());
        assert!(matches!(
            sweep_chart_svg(&[], 500),
            Err(ChartError::NoData(_))
        ));
    }
}
