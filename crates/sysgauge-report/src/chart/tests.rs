//! Chart tests: every kind renders to SVG and PNG with the embedded font.

use super::*;
use crate::testutil::comparison;
use lines::Mark;

/// The message of the `NoData` error a chart of `kind` must give.
fn no_data_message(c: &Comparison, kind: &ChartKind) -> String {
    match chart_svg(c, kind, 900) {
        Err(ChartError::NoData(m)) => m,
        other => panic!("{other:?}"),
    }
}

#[test]
fn summary_svg_has_bars_labels_and_legend() {
    let c = comparison();
    let svg = chart_svg(&c, &ChartKind::Summary, 900).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for text in [
        "beta",
        "gamma",
        "all cases",
        "hosta",
        "hostb",
        "0.625",
        "2.50",
        "Geometric mean of ratios to hostx",
    ] {
        assert!(svg.contains(text), "missing {text}");
    }
    assert!(svg.matches("<rect").count() >= 6, "bars and legend squares");
    // Self-contained: no external references.
    assert!(!svg.contains("href") && !svg.contains("url("));
}

#[test]
fn ratios_and_block_size_charts() {
    let c = comparison();
    let svg = chart_svg(
        &c,
        &ChartKind::Ratios {
            family: Some("beta".into()),
        },
        900,
    )
    .unwrap();
    assert!(svg.contains("beta.sha256 block_size=8192 threads=1"));
    assert!(!svg.contains("gamma.latency"));
    let bs = chart_svg(&c, &ChartKind::BlockSize { family: None }, 1000).unwrap();
    assert!(bs.contains("beta.sha256 threads=1 throughput"), "{bs}");
    assert!(bs.contains("block size") && bs.contains("10k") && bs.contains("<polyline"));
    let gamma = ChartKind::BlockSize {
        family: Some("gamma".into()),
    };
    assert!(no_data_message(&c, &gamma).contains("block_size"));
    let disk = ChartKind::Ratios {
        family: Some("disk".into()),
    };
    assert!(no_data_message(&c, &disk).contains("disk"));
}

#[test]
fn png_is_a_real_image() {
    let c = comparison();
    let png = chart_png(&c, &ChartKind::Summary, 800).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // Width and height from the IHDR chunk.
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    assert_eq!(w, 800);
    assert!(h > 100 && h < 1000, "{h}");
    let png = chart_png(&c, &ChartKind::BlockSize { family: None }, 800).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}

#[test]
fn ticks_and_labels() {
    assert_eq!(ratio_ticks(0.3, 3.0, MAX_RATIO_TICKS), vec![0.5, 1.0, 2.0]);
    assert_eq!(
        ratio_ticks(0.001, 1000.0, MAX_RATIO_TICKS),
        vec![0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
    );
    assert_eq!(block_label(100.0), "100");
    assert_eq!(axis_value(200.0, true), "200");
    assert_eq!(axis_value(300.0, true), "");
    assert_eq!(axis_value(0.5, true), "0.5");
    assert_eq!(axis_value(0.05, true), "0.05");
    assert_eq!(axis_value(50.0, true), "50");
    assert_eq!(axis_value(300.0, false), "300");
    assert_eq!(axis_value(12.5, false), "12.5");
    assert_eq!(block_label(10_000.0), "10k");
    assert_eq!(block_label(1_000_000.0), "1M");
}

/// Ratios of accepted values reach 1e±200, and infinity where they
/// overflow: the ticks stay few (a tick loop over the data's range once
/// allocated until the process died) and every chart draws.
#[test]
fn extreme_ratios_draw_on_a_bounded_axis() {
    for (lo, hi) in [
        (1e-300, 1e300),
        (1.0, f64::INFINITY),
        (0.0, 1.0),
        (0.0, f64::INFINITY),
        (f64::NAN, 2.0),
        (f64::MIN_POSITIVE, f64::MAX),
        (1.0, 1.0),
    ] {
        let t = ratio_ticks(lo, hi, MAX_RATIO_TICKS);
        assert!((1..=15).contains(&t.len()), "{lo}..{hi}: {t:?}");
        assert!(t.contains(&1.0), "{lo}..{hi}: {t:?}");
        assert!(t.iter().all(|v| v.is_finite() && *v > 0.0), "{t:?}");
    }
    assert_eq!(
        ratio_ticks(1e-24, 1e24, MAX_RATIO_TICKS),
        ratio_ticks(1e-12, 1e12, MAX_RATIO_TICKS)
    );
    assert_eq!(
        ratio_ticks(1e-12, 1e12, MAX_RATIO_TICKS),
        [1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12]
    );
    let c = crate::testutil::extreme_comparison();
    for kind in [
        ChartKind::Summary,
        ChartKind::Ratios { family: None },
        ChartKind::BlockSize { family: None },
    ] {
        let svg = chart_svg(&c, &kind, 900).unwrap();
        assert!(svg.len() < 200_000, "{kind:?}: {} bytes", svg.len());
        assert!(svg.trim_end().ends_with("</svg>"));
        let png = chart_png(&c, &kind, 900).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}

/// Two machines, B at half of A, with two benchmarks by block size whose
/// values on A are `md5` and `sha256`.
fn by_block_size(md5: [f64; 3], sha256: [f64; 3]) -> Comparison {
    use sysgauge_compare::{compare, Machine};
    use sysgauge_core::record::{Metric, Params, ResultRecord, Status};
    use sysgauge_core::{Better, Unit};
    let run = |host: &str, scale: f64| {
        let mut results = Vec::new();
        // Any two ids by block size; the chart knows no family.
        for (id, values) in [("alpha.digest", md5), ("beta.digest", sha256)] {
            for (bs, v) in [16u64, 1024, 16384].into_iter().zip(values) {
                let metric = Metric::new("throughput", Unit::MBps, Better::Higher, vec![v * scale]);
                results.push(ResultRecord::new(
                    id,
                    Params::new().with("block_size", bs),
                    Status::Ok,
                    vec![metric.unwrap_or_else(|| panic!("metric"))],
                ));
            }
        }
        let mut run = sysgauge_compare::testutil::run_with(host, None, results);
        run.run_id = format!("id-{host}");
        Machine::new(host, run)
    };
    compare(&[run("boxA", 1.0), run("boxB", 0.5)], 0, &[]).unwrap()
}

/// The panels of one block-size chart are all on a linear y axis or all on
/// a log one, whichever panel decides; a log one says so. md5 spans 16×
/// (linear on its own) and sha256 30× (log on its own): they were drawn
/// side by side on different scales.
#[test]
fn block_size_panels_share_one_kind_of_y_axis() {
    let c = by_block_size([90.0, 640.0, 710.0], [100.0, 1100.0, 1500.0]);
    let panels = block_size_panels(&c, None);
    assert_eq!(panels.len(), 2);
    for p in &panels {
        assert!(p.log_y, "{} on a linear axis", p.title);
        assert_eq!(p.y_label, "MB/s (log scale)");
    }
    let svg = chart_svg(&c, &ChartKind::BlockSize { family: None }, 1000).unwrap();
    assert_eq!(
        lines::svg_texts(&svg)
            .iter()
            .filter(|t| **t == "MB/s (log scale)")
            .count(),
        2
    );
    // Both narrow: both linear, and nothing said.
    let c = by_block_size([90.0, 640.0, 710.0], [300.0, 1100.0, 1500.0]);
    for p in block_size_panels(&c, None) {
        assert!(!p.log_y, "{} on a log axis", p.title);
        assert_eq!(p.y_label, "MB/s");
    }
}

/// A ratio axis labels no more powers than fit: on a narrow chart, all
/// the powers of two from 0.001 to 1 ran their labels (`0.00781`,
/// `0.0156`, …) into each other.
#[test]
fn ratio_labels_fit_their_axis() {
    ensure_font().unwrap();
    let (lo, hi): (f64, f64) = (0.001 / 1.3, 1.3);
    let x_of = |v: f64| ((v.ln() - lo.ln()) / (hi.ln() - lo.ln()) * 150.0).round() as i32;
    assert_eq!(ratio_ticks(lo, hi, MAX_RATIO_TICKS).len(), 11);
    let ticks = fitting_ratio_ticks(lo, hi, x_of);
    assert!(ticks.len() >= 2 && ticks.contains(&1.0), "{ticks:?}");
    for w in ticks.windows(2) {
        let widest =
            text_width(&format_ratio(w[0]), 12.0).max(text_width(&format_ratio(w[1]), 12.0));
        assert!(x_of(w[1]) - x_of(w[0]) > widest as i32, "{ticks:?}");
    }
    // A wide axis keeps every power of two.
    let x_of = |v: f64| ((v.ln() - lo.ln()) / (hi.ln() - lo.ln()) * 900.0).round() as i32;
    assert_eq!(fitting_ratio_ticks(lo, hi, x_of).len(), 11);
}

#[test]
fn dump_for_eyes() {
    if let Some(dir) = std::env::var_os("SYSGAUGE_DUMP_CHARTS") {
        let dir = std::path::PathBuf::from(dir);
        // Each comparison chart kind of `c`, as PNG (and SVG at the usual width).
        let kinds = |c: &Comparison, width: u32, suffix: &str| {
            for (name, kind) in [
                ("summary", ChartKind::Summary),
                ("ratios", ChartKind::Ratios { family: None }),
                ("blocksize", ChartKind::BlockSize { family: None }),
            ] {
                let png = chart_png(c, &kind, width).unwrap();
                std::fs::write(dir.join(format!("{name}{suffix}.png")), png).unwrap();
                if suffix.is_empty() {
                    let svg = chart_svg(c, &kind, width).unwrap();
                    std::fs::write(dir.join(format!("{name}.svg")), svg).unwrap();
                }
            }
        };
        kinds(&comparison(), 1000, "");
        // Log axes: block sizes over three decades, latencies over two.
        let c = by_block_size([90.0, 640.0, 710.0], [100.0, 1100.0, 1500.0]);
        let png = chart_png(&c, &ChartKind::BlockSize { family: None }, 1000).unwrap();
        std::fs::write(dir.join("blocksize-log.png"), png).unwrap();
        let latency = LineFigure {
            title: "latency".into(),
            legend: vec![(0, "a".into())],
            key: Vec::new(),
            x: XAxis {
                label: "working set".into(),
                scale: XScale::Log2,
                ticks: TickFormat::Bytes,
            },
            shared: true,
            panels: vec![LinePanel {
                title: String::new(),
                y_label: "ns (log scale)".into(),
                log_y: true,
                series: vec![Series {
                    machine: 0,
                    marker: Marker::Filled,
                    tag: None,
                    points: vec![(4096.0, 1.25), (1048576.0, 9.0), (67108864.0, 150.0)],
                }],
                marks: Vec::new(),
            }],
        };
        let png = lines::figure_png(&latency, 640).unwrap();
        std::fs::write(dir.join("latency-log.png"), png).unwrap();
        // Long labels at the narrowest width.
        kinds(&long_labelled(), 400, "-long-400");
        let png = lines::figure_png(&long_labelled_figure(2), 400).unwrap();
        std::fs::write(dir.join("figure-long-400.png"), png).unwrap();
        let png = lines::figure_png(&long_labelled_figure(4), 1300).unwrap();
        std::fs::write(dir.join("figure-long-1300.png"), png).unwrap();
    }
}

/// Machine labels come from other machines' host names: markup characters
/// are escaped and XML-invalid control characters never reach the SVG.
#[test]
fn foreign_labels_are_escaped_in_svg() {
    let mut c = comparison();
    let evil = "b<x>&\"'\u{1}\u{1b}[2J";
    for m in c.machines.iter_mut().skip(1).take(1) {
        m.label = evil.into();
    }
    for kind in [ChartKind::Summary, ChartKind::Ratios { family: None }] {
        let svg = chart_svg(&c, &kind, 900).unwrap();
        assert!(!svg.contains("b<x>"), "unescaped markup");
        assert!(svg.contains("b&lt;x&gt;&amp;"), "label missing");
        let bad = svg
            .chars()
            .find(|&ch| ch.is_control() && !matches!(ch, '\t' | '\n' | '\r'));
        assert_eq!(bad, None, "XML-invalid character in the SVG");
    }
}

/// A text and its ink's box: left, top, right, bottom (inclusive).
type InkBox = (String, [i32; 4]);

/// A drawing backend that draws nothing but notes where the ink of each
/// text would be: the pixels plotters' rasteriser sets for it (as the PNG
/// backend does, before clipping to the canvas), so that a text that runs
/// past the canvas or into another is seen.
struct InkBoxes {
    size: (u32, u32),
    boxes: std::rc::Rc<std::cell::RefCell<Vec<InkBox>>>,
}

impl DrawingBackend for InkBoxes {
    type ErrorType = std::convert::Infallible;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(
        &mut self,
    ) -> Result<(), plotters_backend::DrawingErrorKind<Self::ErrorType>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), plotters_backend::DrawingErrorKind<Self::ErrorType>> {
        Ok(())
    }

    fn draw_pixel(
        &mut self,
        _: (i32, i32),
        _: plotters_backend::BackendColor,
    ) -> Result<(), plotters_backend::DrawingErrorKind<Self::ErrorType>> {
        Ok(())
    }

    // The placement of plotters' default `draw_text`.
    fn draw_text<S: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: (i32, i32),
    ) -> Result<(), plotters_backend::DrawingErrorKind<Self::ErrorType>> {
        if text.trim().is_empty() {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style.layout_box(text).unwrap();
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let mut ink = [i32::MAX, i32::MAX, i32::MIN, i32::MIN];
        let _ = style
            .draw(text, (0, 0), |x, y, color| {
                if color.alpha > 0.1 {
                    let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
                    let (x, y) = (pos.0 + x, pos.1 + y);
                    ink = [ink[0].min(x), ink[1].min(y), ink[2].max(x), ink[3].max(y)];
                }
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap();
        if ink[0] <= ink[2] {
            self.boxes.borrow_mut().push((text.to_string(), ink));
        }
        Ok(())
    }
}

/// Every text `d` draws at `width`, with its ink box, and the canvas's
/// size.
fn ink_boxes(d: &impl Drawing, width: u32) -> (Vec<InkBox>, (u32, u32)) {
    ensure_font().unwrap();
    let size = d.size(width);
    let boxes = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let root = InkBoxes {
        size,
        boxes: boxes.clone(),
    }
    .into_drawing_area();
    d.draw_on(&root).unwrap();
    drop(root);
    let found = boxes.borrow().clone();
    (found, size)
}

/// The ways the texts of `d` at `width` are not whole: past an edge of the
/// canvas, or into another text.
fn unreadable_texts(d: &impl Drawing, width: u32) -> Vec<String> {
    let (boxes, (w, h)) = ink_boxes(d, width);
    assert!(!boxes.is_empty(), "no text drawn");
    let mut faults = Vec::new();
    for (text, [l, t, r, b]) in &boxes {
        if *l < 0 || *t < 0 || *r >= w as i32 || *b >= h as i32 {
            faults.push(format!(
                "{text:?} at {l},{t}..{r},{b} is not inside {w}×{h}"
            ));
        }
    }
    for (i, (a, p)) in boxes.iter().enumerate() {
        for (b, q) in &boxes[i + 1..] {
            if p[0] <= q[2] && q[0] <= p[2] && p[1] <= q[3] && q[1] <= p[3] {
                faults.push(format!("{a:?} at {p:?} runs into {b:?} at {q:?}"));
            }
        }
    }
    faults
}

/// Sixty characters a user gave each machine; the two last differ only
/// near their end.
const LONG_LABELS: [&str; 3] = [
    "reference build server in the basement rack, bios 2.1 profile",
    "candidate-build-server-in-the-second-basement-rack-profile-07",
    "candidate-build-server-in-the-second-basement-rack-profile-08",
];

/// The test comparison with long machine labels and long case names.
fn long_labelled() -> Comparison {
    let mut c = comparison();
    for (m, label) in c.machines.iter_mut().zip(LONG_LABELS) {
        m.label = label.to_string();
    }
    c.reference = LONG_LABELS[0].to_string();
    for r in &mut c.rows {
        r.bench_id = format!("{}-with-a-rather-long-name-for-a-case", r.bench_id);
    }
    c
}

/// A figure such as a family draws: markers, marks and tags, long labels.
fn long_labelled_figure(panels: usize) -> LineFigure {
    let series = |machine: usize, tag: &str, scale: f64| Series {
        machine,
        marker: if tag == "×1" {
            Marker::Hollow
        } else {
            Marker::Filled
        },
        tag: Some(tag.to_string()),
        points: [4096.0, 65536.0, 1048576.0, 16777216.0, 67108864.0]
            .iter()
            .zip([1.2, 1.5, 4.0, 20.0, 80.0])
            .map(|(x, y)| (*x, y * scale))
            .collect(),
    };
    let mark = |x: f64, label: &str, machine: Option<usize>| Mark {
        x,
        label: label.to_string(),
        machine,
    };
    LineFigure {
        title: format!(
            "Memory latency by working set on {} and {}",
            LONG_LABELS[1], LONG_LABELS[2]
        ),
        legend: vec![(0, LONG_LABELS[1].into()), (1, LONG_LABELS[2].into())],
        key: vec![
            (Marker::Filled, "64 copies at once".into()),
            (Marker::Hollow, "one copy".into()),
        ],
        x: XAxis {
            label: "working set (bytes read at random, log scale)".into(),
            scale: XScale::Log2,
            ticks: TickFormat::Bytes,
        },
        shared: true,
        panels: (0..panels)
            .map(|i| LinePanel {
                title: format!("a-program-{i} with a long command line --and --options {i}"),
                y_label: "ns (log scale)".into(),
                log_y: true,
                series: vec![series(0, "×64", 1.0), series(1, "×1", 1.7)],
                marks: vec![
                    mark(49152.0, "L1d 48 KiB", None),
                    mark(1048576.0, "L2 1 MiB", Some(1)),
                    mark(2097152.0, "L2 2 MiB", Some(0)),
                    mark(33554432.0, "L3 32 MiB", Some(0)),
                    mark(67108864.0, "L3 64 MiB", Some(1)),
                ],
            })
            .collect(),
    }
}

/// Every text of every kind of chart lies wholly on the canvas and clear
/// of the others, at the narrowest width as at the widest, with labels of
/// sixty characters: at 400 pixels the title ran past the right edge and
/// long case labels past the left one.
#[test]
fn every_text_is_whole_at_every_width() {
    let c = long_labelled();
    let mut faults = Vec::new();
    for width in [400, 550, 700, 1000, 1300, 4000] {
        for kind in [
            ChartKind::Summary,
            ChartKind::Ratios { family: None },
            ChartKind::BlockSize { family: None },
        ] {
            let p = plan(&c, &kind).unwrap();
            for f in unreadable_texts(&p, width) {
                faults.push(format!("{kind:?} at {width}: {f}"));
            }
        }
        for panels in [1, 2, 4] {
            for f in unreadable_texts(&long_labelled_figure(panels), width) {
                faults.push(format!("figure of {panels} at {width}: {f}"));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// Long labels are kept whole, on more lines, so that two that differ
/// only at their end stay apart.
#[test]
fn long_labels_are_wrapped_whole() {
    ensure_font().unwrap();
    let p = plan(&long_labelled(), &ChartKind::Summary).unwrap();
    let (boxes, _) = ink_boxes(&p, 400);
    let texts: Vec<&str> = boxes.iter().map(|(t, _)| t.as_str()).collect();
    let joined: String = texts.concat().split(' ').collect();
    for label in LONG_LABELS {
        let label: String = label.split(' ').collect();
        assert!(joined.contains(&label), "{label} not in {texts:?}");
    }
    let lines = wrap_text(LONG_LABELS[1], 14.0, false, 150);
    assert!(lines.len() > 1, "{lines:?}");
    assert_eq!(lines.concat(), LONG_LABELS[1]);
    assert!(
        lines.iter().all(|l| text_width(l, 14.0) <= 150),
        "{lines:?}"
    );
    // A line holds a character at least, however narrow.
    assert_eq!(wrap_text("ab", 14.0, false, 1), ["a", "b"]);
    assert_eq!(wrap_text("", 14.0, false, 100), [""]);
    assert_eq!(wrap_text("one two", 14.0, false, 1000), ["one two"]);
}
