//! Charts of a comparison, drawn with plotters onto an SVG string (inline in
//! the HTML report, or `chart --svg`) or a PNG image (`chart --png`).
//!
//! - `Summary`: geometric mean of the ratios per family and over all cases,
//!   one bar per machine, with the 95 % interval where there is one;
//! - `Ratios`: the ratio of every case (optionally one family's);
//! - `BlockSize`: each machine's value by block size, one panel per
//!   benchmark, for cases with a `block_size` parameter.
//!
//! Ratios are drawn on a log scale with bars starting at 1 (the reference),
//! so 0.5 and 2 are equally far from it. Text is laid out and rasterised with
//! the DejaVu Sans font compiled into the binary (plotters' `ab_glyph`
//! backend), so drawing needs no fontconfig or system fonts; the SVG names
//! the `sans-serif` family and lets the viewer draw its text.

use crate::compare::format_ratio;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::sync::OnceLock;
use sysgauge_compare::{CaseRow, Comparison, Interval, OVERALL};
use sysgauge_core::record::ParamValue;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ChartError {
    #[error("nothing to draw: {0}")]
    NoData(String),
    #[error("drawing the chart failed: {0}")]
    Draw(String),
    #[error("encoding the PNG image failed: {0}")]
    Encode(String),
}

/// Which chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartKind {
    Summary,
    /// Every case, or one family's.
    Ratios {
        family: Option<String>,
    },
    /// Values by block size, every family or one.
    BlockSize {
        family: Option<String>,
    },
}

/// The family name the embedded font is registered under.
pub const FONT: &str = "sans-serif";
// Font sizes are even: plotters' ab_glyph backend places each glyph at
// size/2 from the top, truncated to a pixel, so an odd size moves small
// glyphs (the decimal point) half a pixel against the others.

/// Register the embedded font once. plotters' ab_glyph backend draws text
/// only with registered fonts.
pub fn ensure_font() -> Result<(), ChartError> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| "the embedded regular font is invalid".to_string())?;
        register_font(FONT, FontStyle::Bold, dejavu::sans::bold())
            .map_err(|_| "the embedded bold font is invalid".to_string())
    })
    .clone()
    .map_err(ChartError::Draw)
}

/// Distinct colours for machines (colour-blind friendly order).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(120, 120, 120),
    RGBColor(240, 228, 66),
];

pub fn machine_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Encode a `w` × `h` RGB8 buffer (as drawn by plotters' `BitMapBackend`)
/// as PNG.
pub fn encode_png(buf: &[u8], w: u32, h: u32) -> Result<Vec<u8>, ChartError> {
    let mut png = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new(&mut png);
    image::ImageEncoder::write_image(encoder, buf, w, h, image::ColorType::Rgb8)
        .map_err(|e| ChartError::Encode(e.to_string()))?;
    Ok(png)
}

pub fn draw_err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Draw(e.to_string())
}

fn text_width(text: &str, size: f64) -> u32 {
    (FONT, size)
        .into_font()
        .box_size(text)
        .map(|(w, _)| w)
        .unwrap_or((text.chars().count() as f64 * size * 0.6) as u32)
}

/// One bar: a machine's ratio.
struct Bar {
    machine: usize,
    ratio: f64,
    ci: Option<Interval>,
    significant: Option<bool>,
}

/// One bar per machine but the reference, for the machines `ratio` gives a
/// ratio (with its interval and significance) for.
fn bars_of<T>(
    cells: &[T],
    reference: usize,
    ratio: impl Fn(&T) -> Option<(f64, Option<Interval>, Option<bool>)>,
) -> Vec<Bar> {
    cells
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != reference)
        .filter_map(|(machine, cell)| {
            let (ratio, ci, significant) = ratio(cell)?;
            Some(Bar {
                machine,
                ratio,
                ci,
                significant,
            })
        })
        .collect()
}

struct Group {
    label: String,
    bars: Vec<Bar>,
}

/// What a chart needs to know before a backend exists: its size.
enum Plan {
    Bars {
        title: String,
        groups: Vec<Group>,
        legend: Vec<(usize, String)>,
    },
    Panels {
        title: String,
        panels: Vec<Panel>,
        legend: Vec<(usize, String)>,
    },
}

struct Panel {
    title: String,
    unit: String,
    log_y: bool,
    /// Per machine: (block size, value) points in order.
    series: Vec<(usize, Vec<(f64, f64)>)>,
}

const BAR_H: u32 = 14;
const BAR_GAP: u32 = 3;
const GROUP_GAP: u32 = 10;
const TOP: u32 = 62;
const BOTTOM: u32 = 46;
const PANEL_H: u32 = 280;

fn legend_of(c: &Comparison, with_reference: bool) -> Vec<(usize, String)> {
    let r = c.reference_index();
    c.machines
        .iter()
        .enumerate()
        .filter(|(i, _)| with_reference || *i != r)
        .map(|(i, m)| (i, m.label.clone()))
        .collect()
}

fn plan(c: &Comparison, kind: &ChartKind) -> Result<Plan, ChartError> {
    let reference = c.reference_index();
    match kind {
        ChartKind::Summary => {
            let groups: Vec<Group> = c
                .families
                .iter()
                .chain(std::iter::once(&c.overall))
                .map(|g| Group {
                    label: if g.family == OVERALL {
                        "all cases".to_string()
                    } else {
                        g.family.clone()
                    },
                    bars: bars_of(&g.cells, reference, |m| {
                        Some((m.geomean?, m.geomean_ci, m.significant))
                    }),
                })
                .filter(|g| !g.bars.is_empty())
                .collect();
            if groups.is_empty() {
                return Err(ChartError::NoData(
                    "no case has a ratio to the reference".into(),
                ));
            }
            Ok(Plan::Bars {
                title: format!(
                    "Geometric mean of ratios to {} (log scale; right of 1 = faster)",
                    c.reference
                ),
                groups,
                legend: legend_of(c, false),
            })
        }
        ChartKind::Ratios { family } => {
            let groups: Vec<Group> = c
                .rows
                .iter()
                .filter(|r| family.as_ref().is_none_or(|f| r.family == *f))
                .map(|r| Group {
                    label: case_label(r),
                    bars: bars_of(&r.cells, reference, |cell| {
                        let cell = cell.as_ref()?;
                        Some((cell.ratio?, cell.ci, cell.significant))
                    }),
                })
                .filter(|g| !g.bars.is_empty())
                .collect();
            if groups.is_empty() {
                return Err(ChartError::NoData(match family {
                    Some(f) => format!("no case of family '{f}' has a ratio to the reference"),
                    None => "no case has a ratio to the reference".into(),
                }));
            }
            Ok(Plan::Bars {
                title: format!(
                    "Ratio to {}{} (log scale; right of 1 = faster)",
                    c.reference,
                    family
                        .as_ref()
                        .map(|f| format!(", {f}"))
                        .unwrap_or_default()
                ),
                groups,
                legend: legend_of(c, false),
            })
        }
        ChartKind::BlockSize { family } => {
            let panels = block_size_panels(c, family.as_deref());
            if panels.is_empty() {
                return Err(ChartError::NoData(
                    "no compared case has a block_size parameter".into(),
                ));
            }
            Ok(Plan::Panels {
                title: format!(
                    "Value by block size{}",
                    family
                        .as_ref()
                        .map(|f| format!(", {f}"))
                        .unwrap_or_default()
                ),
                panels,
                legend: legend_of(c, true),
            })
        }
    }
}

fn case_label(r: &CaseRow) -> String {
    let mut s = r.bench_id.clone();
    if !r.params.is_empty() {
        s.push(' ');
        s.push_str(&r.params.to_string());
    }
    if r.metric != "throughput" || r.cells.is_empty() {
        s.push(' ');
        s.push_str(&r.metric);
    }
    s
}

/// Panels of values by block size: one per benchmark, metric and the other
/// parameters.
fn block_size_panels(c: &Comparison, family: Option<&str>) -> Vec<Panel> {
    let mut panels: Vec<(String, Panel)> = Vec::new();
    for r in &c.rows {
        if family.is_some_and(|f| r.family != f) {
            continue;
        }
        let Some(ParamValue::Int(bs)) = r.params.get("block_size") else {
            continue;
        };
        let mut rest = r.params.clone();
        rest.0.remove("block_size");
        let title = format!(
            "{}{} {}",
            r.bench_id,
            if rest.is_empty() {
                String::new()
            } else {
                format!(" {rest}")
            },
            r.metric
        );
        let idx = match panels.iter().position(|(k, _)| *k == title) {
            Some(i) => i,
            None => {
                panels.push((
                    title.clone(),
                    Panel {
                        title: title.clone(),
                        unit: r.unit.clone(),
                        log_y: false,
                        series: Vec::new(),
                    },
                ));
                panels.len() - 1
            }
        };
        let panel = &mut panels[idx].1;
        for (m, cell) in r.cells.iter().enumerate() {
            let Some(cell) = cell else { continue };
            if !(cell.value.is_finite() && cell.value > 0.0) {
                continue;
            }
            let point = (*bs as f64, cell.value);
            match panel.series.iter_mut().find(|(i, _)| *i == m) {
                Some((_, pts)) => pts.push(point),
                None => panel.series.push((m, vec![point])),
            }
        }
    }
    panels
        .into_iter()
        .map(|(_, mut p)| {
            for (_, pts) in &mut p.series {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            p.series.sort_by_key(|(m, _)| *m);
            let (lo, hi) = value_range(&p);
            p.log_y = hi / lo > 20.0;
            p
        })
        // A line needs two block sizes; a single size is already in the
        // ratio chart.
        .filter(|p| p.series.iter().any(|(_, pts)| pts.len() >= 2))
        .collect()
}

fn value_range(p: &Panel) -> (f64, f64) {
    let vals = p.series.iter().flat_map(|(_, pts)| pts.iter().map(|q| q.1));
    let (lo, hi) = vals.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo.is_finite() && hi > 0.0 {
        (lo, hi)
    } else {
        (1.0, 10.0)
    }
}

fn size_of(plan: &Plan, width: u32) -> (u32, u32) {
    match plan {
        Plan::Bars { groups, .. } => {
            let body: u32 = groups
                .iter()
                .map(|g| g.bars.len() as u32 * (BAR_H + BAR_GAP) + GROUP_GAP)
                .sum();
            (width, TOP + body + BOTTOM)
        }
        Plan::Panels { panels, .. } => {
            let cols = panel_columns(width);
            let rows = (panels.len() as u32).div_ceil(cols);
            (width, TOP + rows * PANEL_H + 10)
        }
    }
}

fn panel_columns(width: u32) -> u32 {
    if width >= 1300 {
        3
    } else if width >= 700 {
        2
    } else {
        1
    }
}

/// The chart as an SVG document (`<svg …>…</svg>`).
pub fn chart_svg(c: &Comparison, kind: &ChartKind, width: u32) -> Result<String, ChartError> {
    ensure_font()?;
    let plan = plan(c, kind)?;
    let size = size_of(&plan, width.clamp(400, 4000));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(&root, &plan)?;
        root.present().map_err(draw_err)?;
    }
    Ok(xml_safe(out))
}

/// plotters escapes markup in text but passes control characters through,
/// and XML 1.0 allows none but tab, newline and carriage return: one in a
/// host name made the whole SVG unreadable. The only source of such
/// characters is label text, so filtering the finished document covers
/// every label at once; they are written as visible `\u{..}` escapes, as
/// on the terminal.
fn xml_safe(svg: String) -> String {
    let bad = |c: char| c.is_control() && !matches!(c, '\t' | '\n' | '\r');
    if !svg.contains(bad) {
        return svg;
    }
    let mut out = String::with_capacity(svg.len() + 16);
    for c in svg.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The chart as PNG bytes.
pub fn chart_png(c: &Comparison, kind: &ChartKind, width: u32) -> Result<Vec<u8>, ChartError> {
    ensure_font()?;
    let plan = plan(c, kind)?;
    let (w, h) = size_of(&plan, width.clamp(400, 4000));
    let mut buf = vec![0u8; (w as usize) * (h as usize) * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw(&root, &plan)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, plan: &Plan) -> Result<(), ChartError> {
    root.fill(&WHITE).map_err(draw_err)?;
    match plan {
        Plan::Bars {
            title,
            groups,
            legend,
        } => draw_bars(root, title, groups, legend),
        Plan::Panels {
            title,
            panels,
            legend,
        } => draw_panels(root, title, panels, legend),
    }
}

fn draw_title_and_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    legend: &[(usize, String)],
) -> Result<(), ChartError> {
    let title_style = TextStyle::from((FONT, 16).into_font().style(FontStyle::Bold)).color(&BLACK);
    root.draw(&Text::new(title.to_string(), (10, 8), title_style))
        .map_err(draw_err)?;
    let style = TextStyle::from((FONT, 14).into_font()).color(&BLACK);
    let mut x = 10i32;
    for (m, label) in legend {
        let color = machine_color(*m);
        root.draw(&Rectangle::new([(x, 36), (x + 12, 48)], color.filled()))
            .map_err(draw_err)?;
        root.draw(&Text::new(label.clone(), (x + 16, 35), style.clone()))
            .map_err(draw_err)?;
        x += 16 + text_width(label, 14.0) as i32 + 20;
    }
    Ok(())
}

/// Tick values for a log ratio axis between `lo` and `hi`.
fn ratio_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi / lo).log2();
    let step = if span > 14.0 { 10f64 } else { 2f64 };
    let mut t = Vec::new();
    let mut v = 1.0;
    while v >= lo {
        t.push(v);
        v /= step;
    }
    let mut v = step;
    while v <= hi {
        t.push(v);
        v *= step;
    }
    t.sort_by(f64::total_cmp);
    t
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[Group],
    legend: &[(usize, String)],
) -> Result<(), ChartError> {
    draw_title_and_legend(root, title, legend)?;
    let (w, h) = root.dim_in_pixel();
    let label_w = groups
        .iter()
        .map(|g| text_width(&g.label, 14.0))
        .max()
        .unwrap_or(0)
        .min(w * 45 / 100)
        + 16;
    let x0 = label_w as f64;
    let x1 = (w - 70) as f64;
    // The domain: every ratio and interval end, and 1, with some room.
    let mut lo: f64 = 1.0;
    let mut hi: f64 = 1.0;
    for b in groups.iter().flat_map(|g| &g.bars) {
        lo = lo.min(b.ratio);
        hi = hi.max(b.ratio);
        if let Some(ci) = b.ci {
            lo = lo.min(ci.low);
            hi = hi.max(ci.high);
        }
    }
    lo /= 1.3;
    hi *= 1.3;
    if (hi / lo) < 4.0 {
        let pad = (4.0 / (hi / lo)).sqrt();
        lo /= pad;
        hi *= pad;
    }
    let x_of = |v: f64| -> i32 {
        let t = (v.ln() - lo.ln()) / (hi.ln() - lo.ln());
        (x0 + t * (x1 - x0)).round() as i32
    };
    let top = TOP as i32;
    let bottom = h as i32 - BOTTOM as i32;
    let grid = RGBColor(225, 225, 225);
    let small = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(80, 80, 80));
    for t in ratio_ticks(lo, hi) {
        let x = x_of(t);
        root.draw(&PathElement::new(vec![(x, top - 4), (x, bottom)], grid))
            .map_err(draw_err)?;
        root.draw(&Text::new(
            format_ratio(t),
            (x, bottom + 6),
            small.clone().pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            )),
        ))
        .map_err(draw_err)?;
    }
    root.draw(&Text::new(
        "ratio to the reference (log scale)".to_string(),
        (((x0 + x1) / 2.0) as i32, bottom + 24),
        small.clone().pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        )),
    ))
    .map_err(draw_err)?;
    let label_style = TextStyle::from((FONT, 14).into_font()).color(&BLACK);
    let value_style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
    let one = x_of(1.0);
    let mut y = top;
    for g in groups {
        let group_h = g.bars.len() as i32 * (BAR_H + BAR_GAP) as i32;
        root.draw(&Text::new(
            g.label.clone(),
            (label_w as i32 - 8, y + group_h / 2),
            label_style
                .clone()
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Right,
                    plotters::style::text_anchor::VPos::Center,
                )),
        ))
        .map_err(draw_err)?;
        for b in &g.bars {
            let color = machine_color(b.machine);
            let x = x_of(b.ratio);
            let (a, z) = if x < one {
                (x, one)
            } else {
                (one, x.max(one + 1))
            };
            let fill = if b.significant == Some(false) {
                color.mix(0.35).filled()
            } else {
                color.filled()
            };
            root.draw(&Rectangle::new([(a, y), (z, y + BAR_H as i32)], fill))
                .map_err(draw_err)?;
            let mid = y + BAR_H as i32 / 2;
            let mut end = x;
            if let Some(ci) = b.ci {
                let (l, r) = (x_of(ci.low), x_of(ci.high));
                let ink = RGBColor(40, 40, 40);
                root.draw(&PathElement::new(vec![(l, mid), (r, mid)], ink))
                    .map_err(draw_err)?;
                for e in [l, r] {
                    root.draw(&PathElement::new(vec![(e, mid - 4), (e, mid + 4)], ink))
                        .map_err(draw_err)?;
                }
                end = end.max(r);
            }
            let mut label = format_ratio(b.ratio);
            if b.significant == Some(false) {
                label.push_str(" ~");
            }
            root.draw(&Text::new(
                label,
                (end.max(one) + 4, mid),
                value_style
                    .clone()
                    .pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Center,
                    )),
            ))
            .map_err(draw_err)?;
            y += (BAR_H + BAR_GAP) as i32;
        }
        y += GROUP_GAP as i32;
    }
    root.draw(&PathElement::new(
        vec![(one, top - 6), (one, bottom)],
        ShapeStyle::from(&BLACK).stroke_width(2),
    ))
    .map_err(draw_err)?;
    Ok(())
}

fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    panels: &[Panel],
    legend: &[(usize, String)],
) -> Result<(), ChartError> {
    draw_title_and_legend(root, title, legend)?;
    let (w, _) = root.dim_in_pixel();
    let cols = panel_columns(w) as usize;
    let rows = panels.len().div_ceil(cols);
    let body = root.margin(TOP as i32, 10, 0, 0);
    let areas = body.split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        let (xs_lo, xs_hi) = panel
            .series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|q| q.0))
            .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(v), b.max(v)));
        let (x_lo, x_hi) = if xs_lo.is_finite() && xs_hi > xs_lo {
            (xs_lo / 1.5, xs_hi * 1.5)
        } else {
            (xs_hi / 4.0, xs_hi * 4.0)
        };
        let (y_lo, y_hi) = value_range(panel);
        let caption = TextStyle::from((FONT, 14).into_font().style(FontStyle::Bold)).color(&BLACK);
        let mut builder = ChartBuilder::on(area);
        builder
            .caption(&panel.title, caption)
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(64);
        let x_fmt = |v: &f64| block_label(*v);
        let log_y = panel.log_y;
        let y_fmt = move |v: &f64| axis_value(*v, log_y);
        let label_style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc("block size")
                    .y_desc(panel.unit.as_str())
                    .x_label_formatter(&x_fmt)
                    .y_label_formatter(&y_fmt)
                    .label_style(label_style.clone())
                    .axis_desc_style(label_style.clone())
                    .light_line_style(RGBColor(238, 238, 238))
                    .draw()
                    .map_err(draw_err)?;
                for (m, pts) in &panel.series {
                    let color = machine_color(*m);
                    chart
                        .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                        .map_err(draw_err)?;
                    chart
                        .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                        .map_err(draw_err)?;
                }
            }};
        }
        if panel.log_y {
            finish!(builder
                .build_cartesian_2d(
                    (x_lo..x_hi).log_scale(),
                    (y_lo / 1.5..y_hi * 1.5).log_scale()
                )
                .map_err(draw_err)?);
        } else {
            finish!(builder
                .build_cartesian_2d((x_lo..x_hi).log_scale(), 0f64..y_hi * 1.1)
                .map_err(draw_err)?);
        }
    }
    Ok(())
}

/// A value axis label; on a log axis only 1, 2 and 5 times a power of ten
/// are labelled (plotters puts a key point at every integer multiple, and
/// labelling all of them makes an unreadable stack).
fn axis_value(v: f64, log: bool) -> String {
    if log && v > 0.0 {
        let mantissa = v / 10f64.powf(v.log10().floor());
        if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
            return String::new();
        }
    }
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format_ratio(v)
    }
}

/// Axis labels of the log block-size axis, whose ticks are powers of ten:
/// `100`, `1k`, `10k`, `1M` (decimal, like the ticks).
fn block_label(v: f64) -> String {
    let v = v.round();
    if v >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{}k", v / 1e3)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests;
