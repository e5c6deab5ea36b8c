//! Chart tests: every kind renders to SVG and PNG with the embedded font.

use super::*;
use crate::testutil::comparison;

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
        let c = comparison();
        let dir = std::path::PathBuf::from(dir);
        for (name, kind) in [
            ("summary", ChartKind::Summary),
            ("ratios", ChartKind::Ratios { family: None }),
            ("blocksize", ChartKind::BlockSize { family: None }),
        ] {
            let png = chart_png(&c, &kind, 1000).unwrap();
            std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
            let svg = chart_svg(&c, &kind, 1000).unwrap();
            std::fs::write(dir.join(format!("{name}.svg")), svg).unwrap();
        }
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
