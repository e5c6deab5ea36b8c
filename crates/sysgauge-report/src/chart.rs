//! Charts of a comparison, drawn with plotters onto an SVG string (inline in
//! the HTML report, or `chart --svg`) or a PNG image (`chart --png`).
//!
//! - `Summary`: geometric mean of the ratios per family and over all cases,
//!   one bar per machine, with the 95 % interval where there is one;
//! - `Ratios`: the ratio of every case (optionally one family's);
//! - `BlockSize`: each machine's value by block size, one panel per
//!   benchmark, for cases with a `block_size` parameter (a line figure,
//!   see `lines`, like the figures families draw across machines).
//!
//! Ratios are drawn on a log scale with bars starting at 1 (the reference),
//! so 0.5 and 2 are equally far from it. Text is laid out and rasterised with
//! the DejaVu Sans font compiled into the binary (plotters' `ab_glyph`
//! backend), so drawing needs no fontconfig or system fonts; the SVG names
//! the `sans-serif` family and lets the viewer draw its text.
//!
//! Every text is measured in that font and placed to lie whole on the
//! chart, at 400 pixels as at 4000: a title, legend entry, case label or
//! panel caption wider than its room goes on more lines (whole rather than
//! cut short, so that two long labels never read alike), the chart growing
//! taller for them; ticks are labelled no closer than their labels' width.

use crate::compare::format_ratio;
use crate::format::unit_label;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};
use std::sync::OnceLock;
use sysgauge_compare::{CaseRow, Comparison, Interval, OVERALL};
use sysgauge_core::record::ParamValue;
use thiserror::Error;

pub mod lines;

/// A figure a family draws from the machines' own results: lines (the
/// sweep, memory latency) or a host-by-host heatmap (the network matrix).
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    Lines(LineFigure),
    Heatmap(crate::matrix::Matrix),
}

impl From<LineFigure> for Figure {
    fn from(f: LineFigure) -> Figure {
        Figure::Lines(f)
    }
}

impl Figure {
    /// The figure as an SVG document.
    pub fn svg(&self, width: u32) -> Result<String, ChartError> {
        match self {
            Figure::Lines(f) => lines::figure_svg(f, width),
            Figure::Heatmap(m) => crate::matrix::heatmap_svg(m, width),
        }
    }

    /// The figure as PNG bytes.
    pub fn png(&self, width: u32) -> Result<Vec<u8>, ChartError> {
        match self {
            Figure::Lines(f) => lines::figure_png(f, width),
            Figure::Heatmap(m) => crate::matrix::heatmap_png(m, width),
        }
    }
}

#[cfg(test)]
use lines::{axis_value, block_label};
use lines::{LineFigure, LinePanel, Marker, Series, TickFormat, XAxis, XScale};

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

/// The width of `text` at `size` pixels in the embedded font. It is the
/// width the PNG draws; the SVG's text is about 6 % narrower (plotters
/// writes its font size as `size / 1.24`, while the rasteriser scales the
/// font's whole height to `size`), so what fits here fits in both.
pub(crate) fn text_width(text: &str, size: f64) -> u32 {
    styled_width(text, size, false)
}

fn styled_width(text: &str, size: f64, bold: bool) -> u32 {
    let style = if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    };
    (FONT, size, style)
        .into_font()
        .box_size(text)
        .map(|(w, _)| w)
        .unwrap_or((text.chars().count() as f64 * size * 0.7) as u32)
}

/// The bold font at `size`. plotters' `FontDesc::style` only names the
/// style (the SVG's `font-weight`) and keeps the regular font's glyphs,
/// which the PNG then drew, narrower than the SVG's bold text measured.
pub(crate) fn bold(size: f64) -> FontDesc<'static> {
    (FONT, size, FontStyle::Bold).into_font()
}

/// `text` in lines no wider than `max_w` pixels: broken between words, and
/// a word wider than a line after its last `.`, `-`, `_`, `=`, `,` or `/`
/// that fits, else after the last character that fits. Nothing is left
/// out, so two labels stay as distinct as they are, whatever the width
/// (cutting them short with an ellipsis could make two the same).
pub(crate) fn wrap_text(text: &str, size: f64, bold: bool, max_w: u32) -> Vec<String> {
    let fits = |s: &str| styled_width(s, size, bold) <= max_w;
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        line = word.to_string();
        while !fits(&line) {
            let ends: Vec<usize> = line
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .take_while(|&end| end < line.len() && fits(&line[..end]))
                .collect();
            // At least one character per line, however narrow the room.
            let Some(&last) = ends.last() else {
                let first = line.chars().next().map_or(line.len(), char::len_utf8);
                if first == line.len() {
                    break;
                }
                lines.push(line[..first].to_string());
                line = line[first..].to_string();
                continue;
            };
            let cut = ends
                .iter()
                .rev()
                .find(|&&end| line[..end].ends_with(['.', '-', '_', '=', ',', '/']))
                .copied()
                .unwrap_or(last);
            lines.push(line[..cut].to_string());
            line = line[cut..].to_string();
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The lines of text above a chart: the title, then the legend (a square
/// in each machine's colour and its label, then what the markers mean),
/// laid out for one width. A title or legend wider than the chart goes on
/// more lines, and the chart's body starts below them (`height`).
pub(crate) struct Header {
    title: Vec<String>,
    items: Vec<LegendItem>,
    pub(crate) height: u32,
}

struct LegendItem {
    swatch: Swatch,
    lines: Vec<String>,
    at: (i32, i32),
}

enum Swatch {
    Machine(usize),
    Marker(Marker),
}

const TITLE_SIZE: f64 = 16.0;
const TITLE_LINE: u32 = 20;
const LEGEND_SIZE: f64 = 14.0;
const KEY_SIZE: f64 = 12.0;
const LEGEND_LINE: u32 = 17;
const MARGIN: u32 = 10;

impl Header {
    pub(crate) fn new(
        title: &str,
        legend: &[(usize, String)],
        key: &[(Marker, String)],
        width: u32,
    ) -> Header {
        let title = wrap_text(title, TITLE_SIZE, true, width - 2 * MARGIN);
        let top = 8 + TITLE_LINE * title.len() as u32 + 8;
        // (swatch, its width with the gap to the text, the text's size, the
        // gap after the item)
        let entries = legend
            .iter()
            .map(|(m, label)| (Swatch::Machine(*m), 16, LEGEND_SIZE, 20, label))
            .chain(
                key.iter()
                    .map(|(marker, label)| (Swatch::Marker(*marker), 14, KEY_SIZE, 16, label)),
            );
        let right = (width - MARGIN) as i32;
        let (mut x, mut y) = (MARGIN as i32, top as i32);
        let mut row_h = LEGEND_LINE + 1;
        let mut items = Vec::new();
        for (swatch, lead, size, gap, label) in entries {
            let lines = wrap_text(label, size, false, width - 2 * MARGIN - lead);
            let text_w = lines.iter().map(|l| text_width(l, size)).max().unwrap_or(0);
            let item_w = (lead + text_w) as i32;
            if x > MARGIN as i32 && x + item_w > right {
                x = MARGIN as i32;
                y += row_h as i32;
                row_h = LEGEND_LINE + 1;
            }
            row_h = row_h.max(LEGEND_LINE * lines.len() as u32 + 1);
            items.push(LegendItem {
                swatch,
                lines,
                at: (x, y),
            });
            x += item_w + gap;
        }
        Header {
            title,
            items,
            height: y as u32 + row_h + 8,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        let title_style = TextStyle::from(bold(TITLE_SIZE)).color(&BLACK);
        for (i, line) in self.title.iter().enumerate() {
            let y = 8 + (TITLE_LINE * i as u32) as i32;
            root.draw(&Text::new(
                line.clone(),
                (MARGIN as i32, y),
                title_style.clone(),
            ))
            .map_err(draw_err)?;
        }
        let style = TextStyle::from((FONT, LEGEND_SIZE).into_font()).color(&BLACK);
        let ink = RGBColor(80, 80, 80);
        let small = TextStyle::from((FONT, KEY_SIZE).into_font()).color(&ink);
        for item in &self.items {
            let (x, y) = item.at;
            let (text_x, text_y, style) = match item.swatch {
                Swatch::Machine(m) => {
                    let color = machine_color(m);
                    root.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], color.filled()))
                        .map_err(draw_err)?;
                    (x + 16, y - 1, &style)
                }
                Swatch::Marker(marker) => {
                    let shape = match marker {
                        Marker::Filled => ink.filled(),
                        Marker::Hollow => ink.stroke_width(2),
                    };
                    root.draw(&Circle::new((x + 6, y + 6), 4, shape))
                        .map_err(draw_err)?;
                    (x + 14, y, &small)
                }
            };
            for (i, line) in item.lines.iter().enumerate() {
                let at = (text_x, text_y + (LEGEND_LINE * i as u32) as i32);
                root.draw(&Text::new(line.clone(), at, style.clone()))
                    .map_err(draw_err)?;
            }
        }
        Ok(())
    }
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
    Lines(LineFigure),
}

const BAR_H: u32 = 14;
const BAR_GAP: u32 = 3;
const GROUP_GAP: u32 = 10;
const BOTTOM: u32 = 46;

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
            Ok(Plan::Lines(LineFigure {
                title: format!(
                    "Value by block size{}",
                    family
                        .as_ref()
                        .map(|f| format!(", {f}"))
                        .unwrap_or_default()
                ),
                legend: legend_of(c, true),
                key: Vec::new(),
                x: XAxis {
                    label: "block size".into(),
                    scale: XScale::Log10,
                    ticks: TickFormat::Decimal,
                },
                shared: false,
                panels,
            }))
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
/// parameters, one line per machine.
fn block_size_panels(c: &Comparison, family: Option<&str>) -> Vec<LinePanel> {
    let mut panels: Vec<LinePanel> = Vec::new();
    for r in &c.rows {
        if family.is_some_and(|f| r.family != f) {
            continue;
        }
        // A metric one machine alone reports (a row with empty cells) is
        // not drawn: the figure sets machines beside each other.
        if r.cells.iter().flatten().count() < 2 {
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
        let idx = match panels.iter().position(|p| p.title == title) {
            Some(i) => i,
            None => {
                panels.push(LinePanel {
                    title,
                    y_label: unit_label(&r.unit).to_string(),
                    log_y: false,
                    series: Vec::new(),
                    marks: Vec::new(),
                });
                panels.len() - 1
            }
        };
        let panel = &mut panels[idx];
        for (m, cell) in r.cells.iter().enumerate() {
            let Some(cell) = cell else { continue };
            if !(cell.value.is_finite() && cell.value > 0.0) {
                continue;
            }
            let point = (*bs as f64, cell.value);
            match panel.series.iter_mut().find(|s| s.machine == m) {
                Some(s) => s.points.push(point),
                None => panel.series.push(Series {
                    machine: m,
                    marker: Marker::Filled,
                    tag: None,
                    points: vec![point],
                }),
            }
        }
    }
    let mut panels: Vec<LinePanel> = panels
        .into_iter()
        .map(|mut p| {
            for s in &mut p.series {
                s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            p.series.sort_by_key(|s| s.machine);
            p
        })
        // A line needs two block sizes; a single size is already in the
        // ratio chart.
        .filter(|p| p.series.iter().any(|s| s.points.len() >= 2))
        .collect();
    // One kind of y axis for every panel, so that a reader comparing them
    // side by side need not notice that the scales differ: log when some
    // panel's values span more than `LOG_SPREAD` (on a linear axis its
    // small values would lie flat on the floor), and then said on each
    // panel's axis.
    let log_y = panels.iter().any(|p| {
        let values = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.1));
        let (lo, hi) = values.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        lo.is_finite() && hi / lo > LOG_SPREAD
    });
    if log_y {
        for p in &mut panels {
            p.log_y = true;
            p.y_label.push_str(" (log scale)");
        }
    }
    panels
}

/// The spread of a block-size panel's values (largest over smallest)
/// beyond which the block-size chart is drawn on log y axes.
const LOG_SPREAD: f64 = 20.0;

/// Something drawable at a width: a comparison chart or a line figure.
pub(crate) trait Drawing {
    fn size(&self, width: u32) -> (u32, u32);
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>;
}

impl Drawing for Plan {
    fn size(&self, width: u32) -> (u32, u32) {
        match self {
            Plan::Bars {
                title,
                groups,
                legend,
            } => {
                let layout = BarLayout::new(title, groups, legend, width);
                let body: u32 = layout.heights.iter().map(|h| h + GROUP_GAP).sum();
                (width, layout.header.height + body + BOTTOM)
            }
            Plan::Lines(f) => f.size(width),
        }
    }

    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        match self {
            Plan::Bars {
                title,
                groups,
                legend,
            } => {
                root.fill(&WHITE).map_err(draw_err)?;
                draw_bars(root, title, groups, legend)
            }
            Plan::Lines(f) => f.draw_on(root),
        }
    }
}

/// Where the parts of a bar chart go at one width.
struct BarLayout {
    header: Header,
    /// The column of case labels, which end 8 pixels left of its edge.
    label_w: u32,
    /// Each group's label, in lines that fit the column.
    labels: Vec<Vec<String>>,
    /// Each group's height: its bars', or its label's when that is taller.
    heights: Vec<u32>,
    /// The room right of the axis, for the value written after a bar.
    right: u32,
}

const LABEL_SIZE: f64 = 14.0;
const LABEL_LINE: u32 = 17;
const VALUE_SIZE: f64 = 12.0;

impl BarLayout {
    fn new(title: &str, groups: &[Group], legend: &[(usize, String)], width: u32) -> BarLayout {
        // A label column of up to 45 % of the width; a longer label goes on
        // more lines (and its group is as tall as they are), so that it is
        // read whole, however narrow the chart.
        let label_w = groups
            .iter()
            .map(|g| text_width(&g.label, LABEL_SIZE))
            .max()
            .unwrap_or(0)
            .min(width * 45 / 100)
            + 16;
        let labels: Vec<Vec<String>> = groups
            .iter()
            .map(|g| wrap_text(&g.label, LABEL_SIZE, false, label_w - 16))
            .collect();
        let heights = groups
            .iter()
            .zip(&labels)
            .map(|(g, l)| {
                (g.bars.len() as u32 * (BAR_H + BAR_GAP)).max(l.len() as u32 * LABEL_LINE)
            })
            .collect();
        let widest_value = groups
            .iter()
            .flat_map(|g| &g.bars)
            .map(|b| text_width(&bar_value(b), VALUE_SIZE))
            .max()
            .unwrap_or(0);
        BarLayout {
            header: Header::new(title, legend, &[], width),
            label_w,
            labels,
            heights,
            right: (widest_value + 4 + MARGIN).max(70),
        }
    }
}

/// The value written after a bar: its ratio (`~` when the difference is
/// not significant), in powers of ten beyond eight digits, which only
/// ratios beyond the axis have.
fn bar_value(b: &Bar) -> String {
    let mut label = format_ratio(b.ratio);
    if label.len() > 8 {
        label = format!("{:.2e}", b.ratio);
    }
    if b.significant == Some(false) {
        label.push_str(" ~");
    }
    label
}

/// `d` as an SVG document, at a width within 400..4000 pixels.
pub(crate) fn render_svg(d: &impl Drawing, width: u32) -> Result<String, ChartError> {
    let size = d.size(width.clamp(400, 4000));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        d.draw_on(&root)?;
        root.present().map_err(draw_err)?;
    }
    Ok(xml_safe(out))
}

/// `d` as PNG bytes, at a width within 400..4000 pixels.
pub(crate) fn render_png(d: &impl Drawing, width: u32) -> Result<Vec<u8>, ChartError> {
    let (w, h) = d.size(width.clamp(400, 4000));
    let mut buf = vec![0u8; (w as usize) * (h as usize) * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        d.draw_on(&root)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

/// The chart as an SVG document (`<svg …>…</svg>`).
pub fn chart_svg(c: &Comparison, kind: &ChartKind, width: u32) -> Result<String, ChartError> {
    ensure_font()?;
    render_svg(&plan(c, kind)?, width)
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
    render_png(&plan(c, kind)?, width)
}

/// The widest ratio axis drawn, either way of 1. Ratios of accepted values
/// can reach about 1e200 (and overflow to infinity beyond), and an axis
/// over hundreds of decades says nothing more than one over 24; a ratio
/// beyond is drawn to the axis's end and labelled with its value.
const RATIO_AXIS_LIMIT: f64 = 1e12;

/// The most ticks on a ratio axis (about; 1 is always one): beyond, only
/// every second, third, … power is one (a tick loop driven by the data's
/// range once allocated without bound on a ratio of 1e308).
const MAX_RATIO_TICKS: i32 = 12;

/// `v` on the drawn ratio axis: within `RATIO_AXIS_LIMIT` either way of 1
/// (infinity at the end, 0 at the start); `None` for NaN.
fn on_ratio_axis(v: f64) -> Option<f64> {
    (!v.is_nan()).then(|| v.clamp(1.0 / RATIO_AXIS_LIMIT, RATIO_AXIS_LIMIT))
}

/// Tick values for a log ratio axis between `lo` and `hi` with room for
/// `room` of them (at most `MAX_RATIO_TICKS`): powers of two on a narrow
/// axis, else powers of ten; every second, third, … of them when they are
/// more than the room, so that 1 is always among them. Computed on
/// exponents, so any range (even an infinite or empty one) gives a short
/// list.
fn ratio_ticks(lo: f64, hi: f64, room: i32) -> Vec<f64> {
    let (Some(lo), Some(hi)) = (on_ratio_axis(lo), on_ratio_axis(hi)) else {
        return vec![1.0];
    };
    let (lo, hi) = (lo.min(1.0), hi.max(1.0));
    let narrow = (hi / lo).log2() <= 14.0;
    let (base, exponent): (f64, fn(f64) -> f64) = if narrow {
        (2.0, f64::log2)
    } else {
        (10.0, f64::log10)
    };
    // Both exponents lie within ±40 (the axis limit), so the casts are exact.
    let (first, last) = (exponent(lo).ceil() as i32, exponent(hi).floor() as i32);
    let room = room.clamp(1, MAX_RATIO_TICKS);
    let every = ((last - first + room - 1) / room).max(1);
    (first..=last)
        .filter(|k| k % every == 0)
        .map(|k| base.powi(k))
        .collect()
}

/// The ratio ticks from `lo` to `hi` whose labels do not overlap when
/// `x_of` places them: the most `ratio_ticks` gives whose neighbours are
/// a label's width and a gap apart (labels such as `0.00781` or
/// `1000000` are wide, so the room is measured, not guessed).
fn fitting_ratio_ticks(lo: f64, hi: f64, x_of: impl Fn(f64) -> i32) -> Vec<f64> {
    (1..=MAX_RATIO_TICKS)
        .rev()
        .map(|room| ratio_ticks(lo, hi, room))
        .find(|ticks| {
            ticks.windows(2).all(|w| {
                let need = (text_width(&format_ratio(w[0]), 12.0)
                    + text_width(&format_ratio(w[1]), 12.0))
                    / 2
                    + 12;
                x_of(w[1]) - x_of(w[0]) >= need as i32
            })
        })
        .unwrap_or_else(|| vec![1.0])
}

/// Draws `text` at `at`, the text's (`h`, `v`) point there.
fn draw_anchored<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: String,
    at: (i32, i32),
    style: &TextStyle<'_>,
    h: HPos,
    v: VPos,
) -> Result<(), ChartError> {
    root.draw(&Text::new(text, at, style.clone().pos(Pos::new(h, v))))
        .map_err(draw_err)
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[Group],
    legend: &[(usize, String)],
) -> Result<(), ChartError> {
    let (w, h) = root.dim_in_pixel();
    let layout = BarLayout::new(title, groups, legend, w);
    layout.header.draw(root)?;
    let label_w = layout.label_w;
    let x0 = label_w as f64;
    let x1 = (w - layout.right) as f64;
    // The domain: every ratio and interval end, and 1, with some room.
    // Each clamped to the axis limit, so the domain is finite whatever the
    // data (a ratio of infinity made every loop over the axis endless).
    let mut lo: f64 = 1.0;
    let mut hi: f64 = 1.0;
    let ends = groups.iter().flat_map(|g| &g.bars).flat_map(|b| {
        [Some(b.ratio), b.ci.map(|c| c.low), b.ci.map(|c| c.high)]
            .into_iter()
            .flatten()
            .filter_map(on_ratio_axis)
    });
    for v in ends {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    lo /= 1.3;
    hi *= 1.3;
    if (hi / lo) < 4.0 {
        let pad = (4.0 / (hi / lo)).sqrt();
        lo /= pad;
        hi *= pad;
    }
    let x_of = |v: f64| -> i32 {
        let v = on_ratio_axis(v).unwrap_or(1.0);
        let t = (v.ln() - lo.ln()) / (hi.ln() - lo.ln());
        (x0 + t * (x1 - x0)).round() as i32
    };
    let top = layout.header.height as i32;
    let bottom = h as i32 - BOTTOM as i32;
    let grid = RGBColor(225, 225, 225);
    let small = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(80, 80, 80));
    for t in fitting_ratio_ticks(lo, hi, x_of) {
        let x = x_of(t);
        root.draw(&PathElement::new(vec![(x, top - 4), (x, bottom)], grid))
            .map_err(draw_err)?;
        draw_anchored(
            root,
            format_ratio(t),
            (x, bottom + 6),
            &small,
            HPos::Center,
            VPos::Top,
        )?;
    }
    // Under the axis, and wholly on the chart when the axis is short.
    let axis_label = "ratio to the reference (log scale)";
    let half = text_width(axis_label, 12.0) as i32 / 2;
    let centre = (((x0 + x1) / 2.0) as i32).clamp(
        MARGIN as i32 + half,
        (w as i32 - MARGIN as i32 - half).max(MARGIN as i32 + half),
    );
    draw_anchored(
        root,
        axis_label.to_string(),
        (centre, bottom + 24),
        &small,
        HPos::Center,
        VPos::Top,
    )?;
    let label_style = TextStyle::from((FONT, LABEL_SIZE).into_font()).color(&BLACK);
    let value_style = TextStyle::from((FONT, VALUE_SIZE).into_font()).color(&BLACK);
    let one = x_of(1.0);
    let mut y = top;
    for ((g, label), group_h) in groups.iter().zip(&layout.labels).zip(&layout.heights) {
        let group_h = *group_h as i32;
        let mid = y + group_h / 2;
        let text_h = (label.len() as u32 * LABEL_LINE) as i32;
        for (i, line) in label.iter().enumerate() {
            let line_mid = mid - text_h / 2 + LABEL_LINE as i32 * i as i32 + LABEL_LINE as i32 / 2;
            draw_anchored(
                root,
                line.clone(),
                (label_w as i32 - 8, line_mid),
                &label_style,
                HPos::Right,
                VPos::Center,
            )?;
        }
        // The bars in the middle of a group that its label makes taller.
        let bars_h = g.bars.len() as i32 * (BAR_H + BAR_GAP) as i32;
        let mut bar_y = y + (group_h - bars_h) / 2;
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
            root.draw(&Rectangle::new(
                [(a, bar_y), (z, bar_y + BAR_H as i32)],
                fill,
            ))
            .map_err(draw_err)?;
            let bar_mid = bar_y + BAR_H as i32 / 2;
            let mut end = x;
            if let Some(ci) = b.ci {
                let (l, r) = (x_of(ci.low), x_of(ci.high));
                let ink = RGBColor(40, 40, 40);
                root.draw(&PathElement::new(vec![(l, bar_mid), (r, bar_mid)], ink))
                    .map_err(draw_err)?;
                for e in [l, r] {
                    root.draw(&PathElement::new(
                        vec![(e, bar_mid - 4), (e, bar_mid + 4)],
                        ink,
                    ))
                    .map_err(draw_err)?;
                }
                end = end.max(r);
            }
            draw_anchored(
                root,
                bar_value(b),
                (end.max(one) + 4, bar_mid),
                &value_style,
                HPos::Left,
                VPos::Center,
            )?;
            bar_y += (BAR_H + BAR_GAP) as i32;
        }
        y += group_h + GROUP_GAP as i32;
    }
    root.draw(&PathElement::new(
        vec![(one, top - 6), (one, bottom)],
        ShapeStyle::from(&BLACK).stroke_width(2),
    ))
    .map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
mod tests;
