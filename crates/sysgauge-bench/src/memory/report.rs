//! The memory family's own tables, rendered from a run record:
//!
//! - copy methods in mbw's layout: one row per repetition (time of one
//!   copy, MiB copied, MiB/s and MB/s), then `AVG` (mbw's average: size
//!   over mean time) and `MEDIAN` (sysgauge's headline value);
//! - STREAM's layout: best rate, median rate, and average, minimum and
//!   maximum time of one pass;
//! - latency by working set with the cache level each set fits in (as
//!   recorded by the benchmark from the host facts) and the step from the
//!   previous size, followed by the host's cache sizes.
//!
//! - a chart of latency against working-set size (SVG or PNG, plotters
//!   with the embedded font like the comparison charts): working set on a
//!   log2 axis, ns per access on a log axis, and a dashed line at each cache
//!   size of the host facts, so the steps can be read against the caches.
//!
//! Everything is derived from the stored samples and params; nothing is
//! measured here.

use super::{LATENCY, MEMCPY};
use plotters::prelude::*;
use plotters::style::FontStyle;
use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_core::size::{size_label, Bytes};
use sysgauge_report::chart::{draw_err, encode_png, ensure_font, ChartError, FONT};
use sysgauge_report::format::format_value;
use sysgauge_report::table::{Table, TableFormat};

const MIB: f64 = 1_048_576.0;

fn ok_results<'a>(run: &'a RunRecord, ids: &[&str]) -> Vec<&'a ResultRecord> {
    run.results
        .iter()
        .filter(|r| matches!(r.status, Status::Ok) && ids.contains(&r.bench_id.as_str()))
        .collect()
}

fn heading(format: TableFormat, title: &str) -> String {
    match format {
        TableFormat::Markdown => format!("### {title}\n\n"),
        TableFormat::Csv => String::new(),
        TableFormat::Html => format!("<h3>{}</h3>\n", sysgauge_report::html::esc(title)),
        TableFormat::Text => format!("{title}\n"),
    }
}

/// `t` rendered under its title.
fn titled(format: TableFormat, title: &str, t: &Table) -> String {
    let mut out = heading(format, title);
    out.push_str(&t.render(format));
    out
}

/// The copy methods in mbw's layout; empty when the run has none.
pub fn copy_table(run: &RunRecord, format: TableFormat) -> String {
    let results = ok_results(run, &[MEMCPY, "mem.loop-copy", "mem.block-copy"]);
    if results.is_empty() {
        return String::new();
    }
    let mut t = Table::columns("#, method, >elapsed s, >MiB, >copy MiB/s, >copy MB/s");
    for r in results {
        let (Some(m), Some(size)) = (r.primary(), r.params.get_u64("size")) else {
            continue;
        };
        let method = match r.bench_id.as_str() {
            MEMCPY => "MEMCPY".to_string(),
            "mem.loop-copy" => "LOOP".to_string(),
            _ => format!(
                "BLOCK {}",
                r.params
                    .get_u64("block_size")
                    .map(size_label)
                    .unwrap_or_default()
            ),
        };
        let bytes = size as f64;
        let row = |label: String, mbps: f64| -> Vec<String> {
            let secs = bytes / (mbps * 1e6);
            vec![
                label,
                method.clone(),
                format!("{secs:.5}"),
                format!("{:.3}", bytes / MIB),
                format!("{:.1}", mbps * 1e6 / MIB),
                format!("{mbps:.1}"),
            ]
        };
        let mut times = Vec::new();
        for (i, &mbps) in m.samples.iter().enumerate() {
            if mbps > 0.0 {
                times.push(bytes / (mbps * 1e6));
                t.push(row(i.to_string(), mbps));
            }
        }
        if !times.is_empty() {
            let mean_time = times.iter().sum::<f64>() / times.len() as f64;
            t.push(row("AVG".into(), bytes / mean_time / 1e6));
        }
        t.push(row("MEDIAN".into(), m.value()));
    }
    titled(format, "Copy bandwidth, mbw style (each byte copied counted once; one row per repetition, elapsed = one copy)", &t)
}

/// The STREAM kernels in STREAM's layout; empty when the run has none.
pub fn stream_table(run: &RunRecord, format: TableFormat) -> String {
    let ids = [
        "mem.stream-copy",
        "mem.stream-scale",
        "mem.stream-add",
        "mem.stream-triad",
    ];
    let results = ok_results(run, &ids);
    if results.is_empty() {
        return String::new();
    }
    let mut t = Table::columns("function, >threads, >array, >best GB/s, >median GB/s, >avg time s, >min time s, >max time s");
    for r in results {
        let (Some(m), Some(size)) = (r.primary(), r.params.get_u64("size")) else {
            continue;
        };
        let arrays = if matches!(r.bench_id.as_str(), "mem.stream-copy" | "mem.stream-scale") {
            2.0
        } else {
            3.0
        };
        let bytes = arrays * size as f64;
        let times: Vec<f64> = m
            .samples
            .iter()
            .filter(|&&g| g > 0.0)
            .map(|g| bytes / (g * 1e9))
            .collect();
        if times.is_empty() {
            continue;
        }
        let avg = times.iter().sum::<f64>() / times.len() as f64;
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        let max = times.iter().copied().fold(0.0, f64::max);
        let name = &r.bench_id["mem.stream-".len()..];
        let mut name = name.to_string();
        if let Some(first) = name.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        t.push(vec![
            format!("{name}:"),
            r.params
                .get_u64("threads")
                .map(|x| x.to_string())
                .unwrap_or_default(),
            Bytes(size).to_string(),
            format!("{:.2}", bytes / min / 1e9),
            format!("{:.2}", m.value()),
            format!("{avg:.6}"),
            format!("{min:.6}"),
            format!("{max:.6}"),
        ]);
    }
    titled(
        format,
        "STREAM (copy and scale count 2 arrays per pass, add and triad 3; time = one pass)",
        &t,
    )
}

/// Latency by working set; empty when the run has none.
pub fn latency_table(run: &RunRecord, format: TableFormat) -> String {
    let mut results: Vec<&ResultRecord> = ok_results(run, &[LATENCY]);
    if results.is_empty() {
        return String::new();
    }
    results.sort_by_key(|r| r.params.get_u64("working_set").unwrap_or(0));
    let mut t = Table::columns(">working set, fits in, >ns/access, >vs previous");
    let mut prev: Option<f64> = None;
    let mut prev_level: Option<String> = None;
    for r in results {
        let (Some(m), Some(ws)) = (r.primary(), r.params.get_u64("working_set")) else {
            continue;
        };
        let level = r.details.get_str("cache_level").unwrap_or("?").to_string();
        let marker = match &prev_level {
            Some(p) if *p != level => format!("{level} <"),
            _ => level.clone(),
        };
        let ns = m.value();
        t.push(vec![
            Bytes(ws).to_string(),
            marker,
            format_value(ns),
            prev.filter(|p| *p > 0.0)
                .map(|p| format!("×{:.2}", ns / p))
                .unwrap_or_default(),
        ]);
        prev = Some(ns);
        prev_level = Some(level);
    }
    let mut out = titled(
        format,
        "Latency by working set (dependent loads, random single cycle; `<` marks a new level)",
        &t,
    );
    let caches: Vec<String> = run
        .host
        .cpu
        .caches
        .iter()
        .filter(|c| c.kind != "instruction")
        .map(|c| {
            let kind = if c.kind == "data" { "d" } else { "" };
            format!("L{}{kind} {}", c.level, Bytes(c.size_bytes))
        })
        .collect();
    if !caches.is_empty() && format != TableFormat::Csv {
        out.push_str(&format!(
            "{}Caches (host facts, one instance each): {}\n",
            if format == TableFormat::Markdown {
                "\n"
            } else {
                ""
            },
            caches.join(", ")
        ));
    }
    out
}

/// All of the family's tables that the run has data for, separated by
/// blank lines; empty when the run has no memory results.
pub fn memory_report(run: &RunRecord, format: TableFormat) -> String {
    [
        copy_table(run, format),
        stream_table(run, format),
        latency_table(run, format),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join("\n")
}

/// The latency points of a run: (working set in bytes, median ns), sorted.
fn latency_points(run: &RunRecord) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = ok_results(run, &[LATENCY])
        .into_iter()
        .filter_map(|r| Some((r.params.get_u64("working_set")?, r.primary()?.value())))
        .filter(|&(ws, ns)| ws > 0 && ns > 0.0 && ns.is_finite())
        .collect();
    v.sort_by_key(|p| p.0);
    v
}

/// Chart size for a width: a 16:9-ish plot, never too flat.
fn latency_chart_size(width: u32) -> (u32, u32) {
    let w = width.clamp(400, 4000);
    (w, (w * 9 / 16).max(300))
}

/// Latency against working set as an SVG document.
pub fn latency_chart_svg(run: &RunRecord, width: u32) -> Result<String, ChartError> {
    ensure_font()?;
    let points = latency_points(run);
    let size = latency_chart_size(width);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw_latency(&root, run, &points)?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// Latency against working set as PNG bytes.
pub fn latency_chart_png(run: &RunRecord, width: u32) -> Result<Vec<u8>, ChartError> {
    ensure_font()?;
    let points = latency_points(run);
    let (w, h) = latency_chart_size(width);
    let mut buf = vec![0u8; (w as usize) * (h as usize) * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_latency(&root, run, &points)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

fn draw_latency<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    run: &RunRecord,
    points: &[(u64, f64)],
) -> Result<(), ChartError> {
    if points.is_empty() {
        return Err(ChartError::NoData(
            "the run has no mem.latency results".to_string(),
        ));
    }
    root.fill(&WHITE).map_err(draw_err)?;
    let xs: Vec<f64> = points.iter().map(|p| (p.0 as f64).log2()).collect();
    let caches: Vec<(String, f64)> = run
        .host
        .cpu
        .caches
        .iter()
        .filter(|c| c.kind != "instruction" && c.size_bytes > 0)
        .map(|c| {
            let kind = if c.kind == "data" { "d" } else { "" };
            (
                format!("L{}{kind} {}", c.level, Bytes(c.size_bytes)),
                (c.size_bytes as f64).log2(),
            )
        })
        .collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_lo, x_hi) = (lo.floor() - 0.5, hi.ceil() + 0.5);
    let y_lo = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min) / 1.6;
    let y_hi = points.iter().map(|p| p.1).fold(0.0, f64::max) * 1.6;
    let title = format!(
        "Memory latency by working set — {} ({})",
        run.host_name(),
        run.started_at.format("%Y-%m-%d")
    );
    let caption = TextStyle::from((FONT, 18).into_font().style(FontStyle::Bold)).color(&BLACK);
    let label_style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_lo..x_hi, (y_lo..y_hi).log_scale())
        .map_err(draw_err)?;
    let span = x_hi - x_lo;
    let every = if span > 24.0 {
        3.0
    } else if span > 12.0 {
        2.0
    } else {
        1.0
    };
    let x_fmt = move |v: &f64| {
        let k = v.round();
        if (v - k).abs() > 1e-6 || !(0.0..=62.0).contains(&k) || k.rem_euclid(every) != 0.0 {
            String::new()
        } else {
            Bytes(1u64 << (k as u32)).to_string()
        }
    };
    let y_fmt = |v: &f64| {
        let mantissa = v / 10f64.powf(v.log10().floor());
        if [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
            format_value(*v)
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_labels(((span + 1.0) as usize).max(2))
        .x_desc("working set (log2 scale)")
        .y_desc("ns per access (log scale)")
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(label_style.clone())
        .axis_desc_style(label_style.clone())
        .light_line_style(RGBColor(245, 245, 245))
        .draw()
        .map_err(draw_err)?;
    let grey = RGBColor(150, 150, 150);
    for (i, (label, x)) in caches.iter().enumerate() {
        if *x < x_lo || *x > x_hi {
            continue;
        }
        chart
            .draw_series(DashedLineSeries::new(
                vec![(*x, y_lo), (*x, y_hi)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(draw_err)?;
        // Stagger the labels so neighbouring caches do not overlap.
        let y = y_hi / 1.15 / 1.4f64.powi(i as i32 % 3);
        let style = TextStyle::from((FONT, 12).into_font()).color(&grey);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((*x, y)) + Text::new(label.clone(), (5, 0), style),
            ))
            .map_err(draw_err)?;
    }
    let line: Vec<(f64, f64)> = xs.iter().copied().zip(points.iter().map(|p| p.1)).collect();
    let blue = RGBColor(0, 114, 178);
    chart
        .draw_series(LineSeries::new(line.iter().copied(), blue.stroke_width(2)))
        .map_err(draw_err)?;
    chart
        .draw_series(line.iter().map(|p| Circle::new(*p, 3, blue.filled())))
        .map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::host::CacheInfo;
    use sysgauge_core::record::{Metric, Params, RunStatus};
    use sysgauge_core::unit::{Better, Unit};

    fn result(
        id: &str,
        params: Params,
        details: Params,
        unit: Unit,
        samples: Vec<f64>,
    ) -> ResultRecord {
        ResultRecord {
            family: "mem".into(),
            details,
            duration_seconds: 1.0,
            ..ResultRecord::new(
                id,
                params,
                Status::Ok,
                vec![Metric::new("m", unit, Better::Higher, samples)
                    .unwrap_or_else(|| panic!("metric"))],
            )
        }
    }

    fn run(results: Vec<ResultRecord>) -> RunRecord {
        let mut host = sysgauge_core::HostInfo::default();
        host.cpu.caches = vec![
            CacheInfo {
                level: 1,
                kind: "data".into(),
                size_bytes: 48 << 10,
                shared_by: None,
                instances: None,
            },
            CacheInfo {
                level: 2,
                kind: "unified".into(),
                size_bytes: 2 << 20,
                shared_by: None,
                instances: None,
            },
        ];
        RunRecord {
            status: RunStatus::Complete,
            host,
            results,
            ..RunRecord::new("r", "mem", "0")
        }
    }

    #[test]
    fn mbw_layout() {
        let size = 256u64 << 20;
        let r = run(vec![
            result(
                MEMCPY,
                Params::new().with("size", size),
                Params::new(),
                Unit::MBps,
                // 256 MiB in 0.025 s and 0.05 s.
                vec![size as f64 / 0.025 / 1e6, size as f64 / 0.05 / 1e6],
            ),
            result(
                "mem.block-copy",
                Params::new()
                    .with("size", size)
                    .with("block_size", 262_144u64),
                Params::new(),
                Unit::MBps,
                vec![5000.0],
            ),
        ]);
        let text = copy_table(&r, TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("Copy bandwidth, mbw style"));
        assert!(lines[1].contains("elapsed s") && lines[1].contains("copy MiB/s"));
        // Row 0: 0.025 s, 256 MiB, 10240 MiB/s.
        let row0: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(
            row0,
            vec!["0", "MEMCPY", "0.02500", "256.000", "10240.0", "10737.4"]
        );
        // mbw's AVG: 256 MiB over the mean time 0.0375 s.
        let avg: Vec<&str> = lines[5].split_whitespace().collect();
        assert_eq!(&avg[..4], &["AVG", "MEMCPY", "0.03750", "256.000"]);
        assert_eq!(avg[4], "6826.7");
        assert!(lines[6].starts_with("MEDIAN"));
        assert!(text.contains("BLOCK 256KiB"));
        let md = copy_table(&r, TableFormat::Markdown);
        assert!(md.starts_with("### Copy bandwidth"));
        assert!(md.contains("| 0 | MEMCPY |"));
    }

    #[test]
    fn stream_layout() {
        let size = 1u64 << 30;
        let r = run(vec![result(
            "mem.stream-triad",
            Params::new().with("size", size).with("threads", 2u64),
            Params::new(),
            Unit::GBps,
            // 3 GiB per pass: 0.5 s and 0.25 s per pass.
            vec![
                3.0 * size as f64 / 0.5 / 1e9,
                3.0 * size as f64 / 0.25 / 1e9,
            ],
        )]);
        let text = stream_table(&r, TableFormat::Text);
        let row: Vec<&str> = text
            .lines()
            .nth(3)
            .unwrap_or("")
            .split_whitespace()
            .collect();
        assert_eq!(row[0], "Triad:");
        assert_eq!(row[1], "2");
        assert_eq!(row[4], "12.88");
        assert_eq!(&row[row.len() - 3..], &["0.375000", "0.250000", "0.500000"]);
    }

    #[test]
    fn latency_marks_levels_and_steps() {
        let r = run(vec![
            result(
                LATENCY,
                Params::new().with("working_set", 1u64 << 20),
                Params::new().with("cache_level", "L2"),
                Unit::Nanoseconds,
                vec![5.0],
            ),
            result(
                LATENCY,
                Params::new().with("working_set", 4096u64),
                Params::new().with("cache_level", "L1"),
                Unit::Nanoseconds,
                vec![1.25],
            ),
            result(
                LATENCY,
                Params::new().with("working_set", 64u64 << 20),
                Params::new().with("cache_level", "memory"),
                Unit::Nanoseconds,
                vec![100.0],
            ),
        ]);
        let text = latency_table(&r, TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[3].contains("4 KiB") && lines[3].contains("L1") && lines[3].contains("1.25"));
        assert!(lines[4].contains("L2 <") && lines[4].contains("×4.00"));
        assert!(lines[5].contains("memory <") && lines[5].contains("×20.00"));
        assert!(text.contains("Caches (host facts, one instance each): L1d 48 KiB, L2 2 MiB"));
        let svg = latency_chart_svg(&r, 800).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("Memory latency by working set"));
        assert!(svg.contains("L2 2 MiB") && svg.contains("64 MiB"), "{svg}");
        let png = latency_chart_png(&r, 640).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(matches!(
            latency_chart_svg(&run(vec![]), 800),
            Err(ChartError::NoData(_))
        ));
        let all = memory_report(&r, TableFormat::Text);
        assert_eq!(all, text);
        assert_eq!(memory_report(&run(vec![]), TableFormat::Text), "");
    }
}
