//! Line figures: panels of lines, one colour per machine (`machine_color`,
//! the colours of every other chart), drawn the same way whoever supplies
//! the data. A comparison's values by block size are built here; the
//! figures a family draws from its own results (the sweep's MB/s against
//! effective iterations, memory latency by working set) are built in the
//! family's folder, which knows its ids, and drawn here, which knows none.
//! The same figure of one machine is that family's own `--chart`, so there
//! is one drawing of each, whatever the number of machines.
//!
//! A figure is data (`LineFigure`) until it is drawn: its ranges are
//! computed from its points (`x_range`, `y_range`), so what a reader
//! compares by eye — one y scale over every panel when `shared` — is
//! tested without looking at pixels.

use super::{
    draw_err, ensure_font, machine_color, render_png, render_svg, text_width, wrap_text, Drawing,
    Header, FONT,
};
use crate::compare::format_ratio;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sysgauge_core::record::RunRecord;
use sysgauge_core::size::Bytes;

use super::ChartError;

/// A machine as a family's figure takes it: its label in the comparison
/// and its run. Figures take a list of them in the comparison's order, and
/// a machine's position picks its colour.
pub type LabelledRun<'a> = (&'a str, &'a RunRecord);

/// A figure: a title, a legend of machines, one or more panels.
#[derive(Debug, Clone, PartialEq)]
pub struct LineFigure {
    pub title: String,
    /// The machines shown, as (machine index, label): the index picks the
    /// colour, so a machine keeps its colour across charts.
    pub legend: Vec<(usize, String)>,
    /// What the markers mean, after the legend (hollow: one copy).
    pub key: Vec<(Marker, String)>,
    pub x: XAxis,
    /// One x and one y range for every panel, so that panels compare by
    /// eye; otherwise each panel fits its own points.
    pub shared: bool,
    pub panels: Vec<LinePanel>,
}

/// The x axis every panel of a figure shares.
#[derive(Debug, Clone, PartialEq)]
pub struct XAxis {
    pub label: String,
    pub scale: XScale,
    pub ticks: TickFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    Linear,
    /// Logarithmic with ticks at powers of ten (block sizes).
    Log10,
    /// Logarithmic with ticks at powers of two (working sets, counts that
    /// double).
    Log2,
}

/// How an x tick is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// A whole number: `64`, `1024`.
    Count,
    /// Decimal multiples: `100`, `1k`, `10k`, `1M`.
    Decimal,
    /// Binary byte sizes: `4 KiB`, `1 MiB`.
    Bytes,
    /// A number to three decimals at most: `0`, `0.25`, `1.5`, `12` (a
    /// linear axis over a short span, which whole numbers label all alike).
    Plain,
}

impl TickFormat {
    pub fn format(self, v: f64) -> String {
        match self {
            TickFormat::Count => format!("{v:.0}"),
            TickFormat::Decimal => block_label(v),
            TickFormat::Bytes => Bytes(v.round().max(0.0) as u64).to_string(),
            // `+ 0.0` writes -0 as 0.
            TickFormat::Plain => format!("{}", (v * 1000.0).round() / 1000.0 + 0.0),
        }
    }
}

/// One panel: its lines and the vertical marks (cache sizes) behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePanel {
    /// The panel's caption (none when empty): a program, a benchmark.
    pub title: String,
    pub y_label: String,
    pub log_y: bool,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
}

/// One line: a machine's points, in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub machine: usize,
    pub marker: Marker,
    /// Written beside the last point when a machine has several lines in
    /// a panel (`×64`).
    pub tag: Option<String>,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Filled,
    Hollow,
}

/// A vertical dashed line at `x` with a label: in a machine's colour, or
/// grey when it holds for every machine shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub label: String,
    pub machine: Option<usize>,
}

/// Height of a panel when a figure has several (and its caption is one
/// line).
const PANEL_H: u32 = 280;
/// The space above the panels when the title and the legend are one line
/// each.
const TOP: u32 = 62;
/// Panel captions: their size and the distance between their lines.
const CAPTION_SIZE: f64 = 14.0;
const CAPTION_LINE: u32 = 17;

pub(crate) fn panel_columns(width: u32) -> u32 {
    if width >= 1300 {
        3
    } else if width >= 700 {
        2
    } else {
        1
    }
}

/// A log axis range with at least two numbers on it. A log axis's ticks
/// are 1, 2 and 5 times a power of ten at the finest (`log_ticks`), so a
/// narrow range (one point, values all equal: one working set of the
/// latency chart, 2.3–5.3 ns) can hold one or none. Such a range starts at
/// the power of ten below it instead (a hair under, so that rounding in
/// logarithms keeps that power on the axis), and ends at twice that power
/// or beyond.
pub(crate) fn readable_log_range(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return (lo, hi);
    }
    let mut labelled = 0;
    let mut p = 10f64.powf(lo.log10().ceil());
    while p <= hi && labelled < 2 {
        labelled += [1.0, 2.0, 5.0].iter().filter(|m| *m * p <= hi).count();
        p *= 10.0;
    }
    if labelled >= 2 {
        return (lo, hi);
    }
    let p = 10f64.powf(lo.log10().floor());
    (p * (1.0 - 1e-9), hi.max(2.0 * p))
}

/// The least room, in pixels, between two labelled ticks of a log axis: a
/// line of 12-pixel text and a gap on a y axis, a label such as `500k` and
/// a gap on an x axis.
const LOG_Y_TICK_GAP: u32 = 20;
const LOG_X_TICK_GAP: u32 = 48;

/// Tick values of a base-10 log axis from `lo` to `hi` on which `room`
/// ticks fit side by side: 1, 2 and 5 times each power of ten when they
/// fit, else the powers of ten, else every second, third, … of them, so
/// that neighbours are at least a `room`-th of the axis apart. Never the
/// other multiples: plotters' own log axis draws a line at each tenth of
/// a decade and labels 2, 3, … 9 × 10ⁿ alike, which packs the top of every
/// decade into a grey band (and wrote 1000 twice, a blurred label).
/// Computed on exponents, so any range gives a short list.
pub(crate) fn log_ticks(lo: f64, hi: f64, room: usize) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let room = room.max(2) as f64;
    let decades = hi.log10() - lo.log10();
    // 1 to 2 and 5 to 10 are the closest neighbours: log10(2) apart.
    let (mantissas, every): (&[f64], i32) = if decades <= room * 2f64.log10() {
        (&[1.0, 2.0, 5.0], 1)
    } else {
        // Within ±330 (positive finite f64), so the cast is exact.
        (&[1.0], (decades / room).ceil().max(1.0) as i32)
    };
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (first..=last)
        .filter(|k| k.rem_euclid(every) == 0)
        .flat_map(|k| {
            // Dividing by 10^-k is exact where multiplying by 10^k is not
            // (0.001 rather than 0.0010000000000000002).
            let power = if k >= 0 {
                10f64.powi(k)
            } else {
                1.0 / 10f64.powi(-k)
            };
            mantissas.iter().map(move |m| m * power)
        })
        .filter(|v| (lo..=hi).contains(v))
        .collect()
}

/// A base-10 log axis whose key points are `log_ticks`: the labelled ones
/// (plotters' bold points, as many as the chart asks for, see
/// `LOG_Y_TICK_GAP`) and light grid lines between them at the next finer
/// step of 1, 2 and 5 × 10ⁿ, when that leaves half the room.
struct LogAxis {
    coord: LogCoord<f64>,
    range: std::ops::Range<f64>,
}

impl LogAxis {
    fn new(lo: f64, hi: f64) -> LogAxis {
        LogAxis {
            coord: (lo..hi).log_scale().into(),
            range: lo..hi,
        }
    }
}

impl Ranged for LogAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.coord.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let room = match hint.weight() {
            KeyPointWeight::Bold => hint.max_num_points(),
            KeyPointWeight::Any => 2 * hint.bold_points(),
        };
        log_ticks(self.range.start, self.range.end, room)
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// The largest magnitude a linear axis reaches. Accepted values stay
/// within 1e±100, but a range derived from them (`hi * 1.5`) must never
/// reach infinity: plotters steps from one end of an axis towards the
/// other, and never arrives at infinity.
const AXIS_LIMIT: f64 = 1e300;

/// A log axis lies within 1e±150: plotters counts its decades from the
/// quotient of its ends, which must stay finite too (1e-300 to 1e300 made
/// that count infinite, and its loop endless).
const LOG_AXIS_LIMIT: f64 = 1e150;

/// `(lo, hi)` within the limits of a linear or a log axis, `hi` above `lo`.
fn bounded_range((lo, hi): (f64, f64), log: bool) -> (f64, f64) {
    let (floor, ceiling) = if log {
        (1.0 / LOG_AXIS_LIMIT, LOG_AXIS_LIMIT)
    } else {
        (-AXIS_LIMIT, AXIS_LIMIT)
    };
    let bound = |v: f64| {
        if v.is_nan() {
            floor
        } else {
            v.clamp(floor, ceiling)
        }
    };
    let (lo, hi) = (bound(lo), bound(hi));
    if hi > lo {
        (lo, hi)
    } else if log {
        let lo = lo.min(ceiling / 10.0);
        (lo, lo * 10.0)
    } else {
        // Wide enough to differ from `lo` in f64 (1e300 + 1 does not).
        (lo, lo + lo.abs().max(1.0))
    }
}

fn span(values: impl Iterator<Item = f64>, positive: bool) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (*v > 0.0 || !positive))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    (lo.is_finite() && (hi > 0.0 || !positive)).then_some((lo, hi))
}

impl LineFigure {
    /// Keep only the panels whose titles are in `titles` (all of them when
    /// `titles` is empty); an error naming the titles there are when none
    /// is left, or when one of `titles` matches no panel.
    pub fn select(&mut self, titles: &[String], what: &str) -> Result<(), ChartError> {
        if titles.is_empty() {
            return Ok(());
        }
        let there: Vec<String> = self.panels.iter().map(|p| p.title.clone()).collect();
        if let Some(missing) = titles.iter().find(|t| !there.contains(t)) {
            return Err(ChartError::NoData(format!(
                "no {what} '{missing}' in these runs (there are: {})",
                there.join(", ")
            )));
        }
        self.panels.retain(|p| titles.contains(&p.title));
        let shown: Vec<usize> = self
            .panels
            .iter()
            .flat_map(|p| p.series.iter().map(|s| s.machine))
            .collect();
        self.legend.retain(|(m, _)| shown.contains(m));
        Ok(())
    }

    fn points_of(&self, panel: usize) -> Vec<(f64, f64)> {
        let panels: Vec<&LinePanel> = if self.shared {
            self.panels.iter().collect()
        } else {
            self.panels.get(panel).into_iter().collect()
        };
        panels
            .iter()
            .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().copied()))
            .collect()
    }

    /// The x range panel `panel` is drawn on, in the axis's own units: the
    /// values for a linear or base-10 axis, their base-2 logarithms for a
    /// base-2 axis (whose ticks are then the whole numbers). When lines
    /// carry tags, an eighth more on the right leaves room for them.
    pub fn x_range(&self, panel: usize) -> (f64, f64) {
        // A linear x axis takes 0 too (the first day of a history).
        let positive = self.x.scale != XScale::Linear;
        let Some((lo, hi)) = span(self.points_of(panel).into_iter().map(|p| p.0), positive) else {
            return (0.0, 1.0);
        };
        let (a, b) = self.x_range_unbounded(lo, hi);
        bounded_range((a, b), self.x.scale == XScale::Log10)
    }

    fn x_range_unbounded(&self, lo: f64, hi: f64) -> (f64, f64) {
        let (a, b) = match self.x.scale {
            XScale::Linear if hi > lo => (lo, hi),
            XScale::Linear => (lo * 0.5, hi * 1.5),
            XScale::Log10 if hi > lo => (lo / 1.5, hi * 1.5),
            XScale::Log10 => (hi / 4.0, hi * 4.0),
            XScale::Log2 => (lo.log2().floor() - 0.5, hi.log2().ceil() + 0.5),
        };
        let tagged = self
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .any(|s| s.tag.is_some());
        match (tagged, self.x.scale) {
            (false, _) => (a, b),
            (true, XScale::Log10) => (a, b * (b / a).powf(0.125)),
            (true, _) => (a, b + (b - a) / 8.0),
        }
    }

    /// The y range panel `panel` is drawn on: from 0 to a tenth above the
    /// largest value, or on a log axis a factor 1.5 beyond the smallest
    /// and the largest (widened when that would leave the axis without
    /// two numbers: see `readable_log_range`); over every panel's points
    /// when `shared`.
    pub fn y_range(&self, panel: usize) -> (f64, f64) {
        let log = self.panels.get(panel).is_some_and(|p| p.log_y);
        let Some((lo, hi)) = span(self.points_of(panel).into_iter().map(|p| p.1), true) else {
            return (1.0, 10.0);
        };
        if log {
            bounded_range(readable_log_range(lo / 1.5, hi * 1.5), true)
        } else {
            bounded_range((0.0, hi * 1.1), false)
        }
    }

    fn to_x(&self, v: f64) -> f64 {
        match self.x.scale {
            XScale::Log2 => v.log2(),
            _ => v,
        }
    }

    fn columns(&self, width: u32) -> u32 {
        panel_columns(width).min(self.panels.len().max(1) as u32)
    }
}

impl Drawing for LineFigure {
    fn size(&self, width: u32) -> (u32, u32) {
        let cols = self.columns(width);
        let rows = (self.panels.len() as u32).div_ceil(cols).max(1);
        // A figure of one panel gets a plot about 16:9 rather than a strip.
        let panel_h = if self.panels.len() == 1 {
            (width * 9 / 16).saturating_sub(TOP).max(PANEL_H)
        } else {
            PANEL_H
        };
        let extra = CAPTION_LINE * self.caption_lines(width).saturating_sub(1);
        (
            width,
            self.header(width).height + rows * (panel_h + extra) + 10,
        )
    }

    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        if self.panels.iter().all(|p| p.series.is_empty()) {
            return Err(ChartError::NoData(format!("{}: no point", self.title)));
        }
        root.fill(&WHITE).map_err(draw_err)?;
        let (w, _) = root.dim_in_pixel();
        let header = self.header(w);
        header.draw(root)?;
        let cols = self.columns(w) as usize;
        let rows = self.panels.len().div_ceil(cols);
        let body = root.margin(header.height as i32, 10, 0, 0);
        let areas = body.split_evenly((rows, cols));
        let lines = self.caption_lines(w);
        for (i, (panel, area)) in self.panels.iter().zip(areas.iter()).enumerate() {
            let caption = self.caption(panel, w);
            self.draw_panel(area, i, panel, &caption, lines)?;
        }
        Ok(())
    }
}

impl LineFigure {
    fn header(&self, width: u32) -> Header {
        Header::new(&self.title, &self.legend, &self.key, width)
    }

    /// The widest a panel's caption may be at a figure's width.
    fn caption_width(&self, width: u32) -> u32 {
        (width / self.columns(width)).saturating_sub(16).max(1)
    }

    /// `panel`'s caption in lines that fit its panel.
    fn caption(&self, panel: &LinePanel, width: u32) -> Vec<String> {
        if panel.title.is_empty() {
            return Vec::new();
        }
        wrap_text(&panel.title, CAPTION_SIZE, true, self.caption_width(width))
    }

    /// The lines of the longest caption: every panel leaves room for as
    /// many, so that the plots of a row line up.
    fn caption_lines(&self, width: u32) -> u32 {
        self.panels
            .iter()
            .map(|p| self.caption(p, width).len() as u32)
            .max()
            .unwrap_or(0)
    }
}

/// The figure as an SVG document.
pub fn figure_svg(f: &LineFigure, width: u32) -> Result<String, ChartError> {
    ensure_font()?;
    render_svg(f, width)
}

/// The figure as PNG bytes.
pub fn figure_png(f: &LineFigure, width: u32) -> Result<Vec<u8>, ChartError> {
    ensure_font()?;
    render_png(f, width)
}

impl LineFigure {
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        index: usize,
        panel: &LinePanel,
        caption: &[String],
        caption_lines: u32,
    ) -> Result<(), ChartError> {
        let (x_lo, x_hi) = self.x_range(index);
        let (y_lo, y_hi) = self.y_range(index);
        // The caption centred above the plot, in as many lines as the
        // longest of the figure's, as plotters' own caption would be when
        // it is one line.
        let area = if caption_lines > 0 {
            let style = TextStyle::from(super::bold(CAPTION_SIZE))
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            let centre = area.dim_in_pixel().0 as i32 / 2;
            for (i, line) in caption.iter().enumerate() {
                let y = 5 + (CAPTION_LINE * i as u32) as i32;
                area.draw(&Text::new(line.clone(), (centre, y), style.clone()))
                    .map_err(draw_err)?;
            }
            area.margin(21 + CAPTION_LINE * (caption_lines - 1), 0, 0, 0)
        } else {
            area.clone()
        };
        let scale = self.x.scale;
        let ticks = self.x.ticks;
        let log_y = panel.log_y;
        let y_fmt = move |v: &f64| axis_value(*v, log_y);
        // Room left of the plot for the y labels and the axis's name
        // beside them: plotters' label area, widened for long numbers.
        let y_widest = [y_lo, y_hi, (y_lo + y_hi) / 2.0]
            .iter()
            .map(|v| text_width(&y_fmt(v), 12.0).max(text_width(&axis_value(*v, false), 12.0)))
            .max()
            .unwrap_or(0);
        let y_area = (y_widest + 36).max(64);
        // Pixels per label on the x axis: the widest label and a gap, so that
        // labels do not run together however narrow the plot.
        let x_widest = [x_lo, x_hi, (x_lo + x_hi) / 2.0]
            .iter()
            .map(|v| match scale {
                XScale::Log2 => ticks.format(2f64.powf(v.round().clamp(0.0, 62.0))),
                _ => ticks.format(*v),
            })
            .chain(match ticks {
                TickFormat::Plain => Some("0.000".to_string()),
                TickFormat::Bytes => Some("512 KiB".to_string()),
                _ => None,
            })
            .map(|t| text_width(&t, 12.0))
            .max()
            .unwrap_or(0);
        // The last label is centred on the plot's right end: the margin
        // holds its right half.
        let right = (x_widest / 2 + 4).max(8);
        let mut builder = ChartBuilder::on(&area);
        builder
            .margin(8)
            .margin_right(right)
            .x_label_area_size(34)
            .y_label_area_size(y_area);
        let plot_w = area
            .dim_in_pixel()
            .0
            .saturating_sub(y_area + 8 + right)
            .max(1);
        let x_room = ((plot_w / (x_widest + 16)) as usize).max(2);
        // On a base-2 axis every whole number is a tick; label every second,
        // third, … when they do not all fit.
        let every = ((x_hi - x_lo) / x_room as f64).ceil().max(1.0);
        let x_fmt = move |v: &f64| match scale {
            XScale::Log2 => {
                let k = v.round();
                if (v - k).abs() > 1e-6 || !(0.0..=62.0).contains(&k) || k.rem_euclid(every) != 0.0
                {
                    String::new()
                } else {
                    ticks.format(2f64.powi(k as i32))
                }
            }
            _ => ticks.format(*v),
        };
        // Only exponents 0..=62 get a label (`x_fmt`); more key points than
        // that would be blank ones.
        let x_labels = match scale {
            XScale::Log2 => ((x_hi - x_lo + 1.0) as usize).clamp(2, 64),
            _ => x_room.min(10),
        };
        let label_style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
        let grey = RGBColor(150, 150, 150);
        let tag_at = tag_places(panel, |x| self.to_x(x), y_lo, y_hi);
        // A point where its axes can show it: inside their ranges (plotters
        // turns a point far outside into pixels with integer arithmetic
        // that overflows), and none that a log axis cannot hold.
        let log_x = scale == XScale::Log10;
        let on_axes = |(x, y): (f64, f64)| -> Option<(f64, f64)> {
            let shown = x.is_finite() && y.is_finite() && !(log_x && x <= 0.0 || log_y && y <= 0.0);
            shown.then(|| (x.clamp(x_lo, x_hi), y.clamp(y_lo, y_hi)))
        };
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                // A log axis gets as many ticks as fit in its pixels (see
                // `log_ticks`); the others keep plotters' count.
                let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
                let x_labels = match scale {
                    XScale::Log10 => (plot_w / LOG_X_TICK_GAP) as usize,
                    _ => x_labels,
                };
                let y_labels = if log_y {
                    (plot_h / LOG_Y_TICK_GAP) as usize
                } else {
                    10
                };
                // A base-2 axis is linear in the exponents: light lines
                // between whole exponents would fall at 2^(k + 0.1), …, a
                // grey texture that means nothing. One per label is none.
                let x_light = match scale {
                    XScale::Log2 => 1,
                    _ => 10,
                };
                chart
                    .configure_mesh()
                    .x_labels(x_labels)
                    .y_labels(y_labels)
                    .x_max_light_lines(x_light)
                    .x_desc(self.x.label.as_str())
                    .y_desc(panel.y_label.as_str())
                    .x_label_formatter(&x_fmt)
                    .y_label_formatter(&y_fmt)
                    .label_style(label_style.clone())
                    .axis_desc_style(label_style.clone())
                    .light_line_style(RGBColor(238, 238, 238))
                    .draw()
                    .map_err(draw_err)?;
                let plot = chart.plotting_area().strip_coord_spec();
                let plot_origin = {
                    let (xs, ys) = chart.plotting_area().get_pixel_range();
                    (xs.start, ys.start)
                };
                let to_plot = |p: (f64, f64)| {
                    let (x, y) = chart.backend_coord(&p);
                    (x - plot_origin.0, y - plot_origin.1)
                };
                let shown: Vec<(&Mark, f64)> = panel
                    .marks
                    .iter()
                    .map(|m| (m, self.to_x(m.x)))
                    .filter(|(_, x)| (x_lo..=x_hi).contains(x))
                    .collect();
                let spots: Vec<(i32, u32)> = shown
                    .iter()
                    .map(|(m, x)| (to_plot((*x, y_hi)).0, text_width(&m.label, 12.0)))
                    .collect();
                // The tags' boxes (see below: 6 right of and 4 above their
                // point, a line of 12-pixel text).
                let tags: Vec<[i32; 4]> = panel
                    .series
                    .iter()
                    .zip(&tag_at)
                    .filter_map(|(s, at)| {
                        let (x, y) = to_plot(on_axes((*at)?)?);
                        let w = text_width(s.tag.as_deref()?, 12.0) as i32;
                        Some([x + 6, y - 20, x + 6 + w, y])
                    })
                    .collect();
                let first_row = (plot_h as f64 * 0.04) as i32;
                let places = mark_label_places(&spots, plot_w as i32, first_row, &tags);
                for ((mark, x), (left, row)) in shown.iter().zip(places) {
                    let color = mark.machine.map_or(grey, machine_color);
                    chart
                        .draw_series(DashedLineSeries::new(
                            vec![(*x, y_lo), (*x, y_hi)],
                            6,
                            4,
                            color.stroke_width(1),
                        ))
                        .map_err(draw_err)?;
                    let style = TextStyle::from((FONT, 12).into_font()).color(&color);
                    let y = first_row + MARK_ROW * row as i32;
                    plot.draw(&Text::new(mark.label.clone(), (left, y), style))
                        .map_err(draw_err)?;
                }
                for (i, s) in panel.series.iter().enumerate() {
                    let color = machine_color(s.machine);
                    let pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .filter_map(|&(x, y)| on_axes((self.to_x(x), y)))
                        .collect();
                    if pts.len() >= 2 {
                        chart
                            .draw_series(LineSeries::new(
                                pts.iter().copied(),
                                color.stroke_width(2),
                            ))
                            .map_err(draw_err)?;
                    }
                    let marker = match s.marker {
                        Marker::Filled => color.filled(),
                        Marker::Hollow => color.stroke_width(2),
                    };
                    chart
                        .draw_series(pts.iter().map(|p| Circle::new(*p, 4, marker)))
                        .map_err(draw_err)?;
                    if let (Some(tag), Some(at)) = (&s.tag, tag_at[i].and_then(on_axes)) {
                        let style = TextStyle::from((FONT, 12).into_font())
                            .color(&color)
                            .pos(Pos::new(HPos::Left, VPos::Bottom));
                        chart
                            .draw_series(std::iter::once(
                                EmptyElement::at(at) + Text::new(tag.clone(), (6, -4), style),
                            ))
                            .map_err(draw_err)?;
                    }
                }
            }};
        }
        let (x_log, y_log) = (LogAxis::new(x_lo, x_hi), LogAxis::new(y_lo, y_hi));
        match (scale, log_y) {
            (XScale::Log10, true) => {
                finish!(builder.build_cartesian_2d(x_log, y_log).map_err(draw_err)?)
            }
            (XScale::Log10, false) => finish!(builder
                .build_cartesian_2d(x_log, y_lo..y_hi)
                .map_err(draw_err)?),
            (_, true) => finish!(builder
                .build_cartesian_2d(x_lo..x_hi, y_log)
                .map_err(draw_err)?),
            (_, false) => finish!(builder
                .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
                .map_err(draw_err)?),
        }
        Ok(())
    }
}

/// Where each series' tag goes (in axis units; `None` without a tag):
/// beside its last point, except that tags ending at the same x closer
/// than a sixteenth of the plot's height are pushed apart upwards, so that
/// `×4` and `×8` at the end of two close lines both stay readable.
fn tag_places(
    panel: &LinePanel,
    to_x: impl Fn(f64) -> f64,
    y_lo: f64,
    y_hi: f64,
) -> Vec<Option<(f64, f64)>> {
    const GAP: f64 = 1.0 / 16.0;
    let log = panel.log_y;
    let frac = |y: f64| {
        if log {
            (y.ln() - y_lo.ln()) / (y_hi.ln() - y_lo.ln())
        } else {
            (y - y_lo) / (y_hi - y_lo)
        }
    };
    let unfrac = |f: f64| {
        if log {
            (y_lo.ln() + f * (y_hi.ln() - y_lo.ln())).exp()
        } else {
            y_lo + f * (y_hi - y_lo)
        }
    };
    let mut at: Vec<Option<(f64, f64)>> = panel
        .series
        .iter()
        .map(|s| {
            let last = s.points.last()?;
            s.tag.as_ref()?;
            Some((to_x(last.0), frac(last.1)))
        })
        .collect();
    let mut order: Vec<usize> = (0..at.len()).filter(|&i| at[i].is_some()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (at[a].unwrap_or_default(), at[b].unwrap_or_default());
        a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
    });
    for w in 1..order.len() {
        let (Some(prev), Some(cur)) = (at[order[w - 1]], at[order[w]]) else {
            continue;
        };
        if prev.0 == cur.0 && cur.1 - prev.1 < GAP {
            at[order[w]] = Some((cur.0, prev.1 + GAP));
        }
    }
    at.into_iter()
        .map(|p| p.map(|(x, f)| (x, unfrac(f))))
        .collect()
}

/// The distance between rows of mark labels.
const MARK_ROW: i32 = 16;

/// Where each mark's label goes in a plot `plot_w` pixels wide, from the
/// mark's x and the label's width in pixels: the label's left end and its
/// row (row `r` starts `first_row + r * MARK_ROW` pixels from the top). A
/// label goes right of its line, or left of it when it would run past the
/// plot's right edge, and on the first row where it clears the labels
/// already placed (two caches of similar sizes, or the same cache on two
/// machines, are close) and every box of `taken` (left, top, right,
/// bottom: the lines' tags).
fn mark_label_places(
    spots: &[(i32, u32)],
    plot_w: i32,
    first_row: i32,
    taken: &[[i32; 4]],
) -> Vec<(i32, usize)> {
    const GAP: i32 = 5;
    let mut order: Vec<usize> = (0..spots.len()).collect();
    order.sort_by_key(|&i| spots[i].0);
    let mut boxes: Vec<[i32; 4]> = taken.to_vec();
    let mut places = vec![(0, 0); spots.len()];
    for i in order {
        let (x, w) = (spots[i].0, spots[i].1 as i32);
        let left = if x + GAP + w <= plot_w {
            x + GAP
        } else {
            (x - GAP - w).max(0)
        };
        let span = |row: usize| {
            let top = first_row + MARK_ROW * row as i32;
            [left - GAP, top - 2, left + w + GAP, top + MARK_ROW - 2]
        };
        let clear = |b: [i32; 4]| {
            boxes
                .iter()
                .all(|t| b[2] <= t[0] || t[2] <= b[0] || b[3] <= t[1] || t[3] <= b[1])
        };
        // The rows are few: the boxes in the way are, and each row that
        // does not fit is in the way of one of them.
        let row = (0..).find(|&r| clear(span(r))).unwrap_or_default();
        boxes.push(span(row));
        places[i] = (left, row);
    }
    places
}

/// A value axis label. A log axis's ticks are 1, 2 and 5 times a power of
/// ten (`log_ticks`), written with no more digits than they have (`50`,
/// `0.2`, not `50.0`); any other value there gets no label.
pub(crate) fn axis_value(v: f64, log: bool) -> String {
    if log && v > 0.0 {
        let exponent = v.log10().floor();
        let mantissa = v / 10f64.powf(exponent);
        if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
            return String::new();
        }
        // Within ±330 (a positive finite f64), so the cast is exact.
        let digits = (-exponent).max(0.0) as usize;
        return format!("{v:.digits$}");
    }
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format_ratio(v)
    }
}

/// Axis labels of a log block-size axis, whose ticks are powers of ten:
/// `100`, `1k`, `10k`, `1M` (decimal, like the ticks).
pub(crate) fn block_label(v: f64) -> String {
    let v = v.round();
    if v >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{}k", v / 1e3)
    } else {
        format!("{v}")
    }
}

/// The `<polyline>` elements of an SVG drawn with stroke width 2 in
/// machine `m`'s colour: its lines (axes, grids and marks are thinner or
/// grey). For tests of figures, here and in the families.
pub fn svg_lines_of(svg: &str, m: usize) -> usize {
    let c = machine_color(m);
    let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
    svg.split("<polyline")
        .skip(1)
        .filter(|e| {
            let tag = e.split('>').next().unwrap_or("");
            tag.contains(&stroke) && tag.contains("stroke-width=\"2\"")
        })
        .count()
}

/// The texts of an SVG drawn by plotters (which writes each on a line of
/// its own inside `<text …>`), in order. For tests of figures.
pub fn svg_texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|e| Some(e.split_once('>')?.1.split("</text>").next()?.trim()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(machine: usize, points: &[(f64, f64)]) -> Series {
        Series {
            machine,
            marker: Marker::Filled,
            tag: None,
            points: points.to_vec(),
        }
    }

    fn figure(shared: bool, scale: XScale) -> LineFigure {
        LineFigure {
            title: "t".into(),
            legend: vec![(0, "a".into()), (1, "b".into())],
            key: Vec::new(),
            x: XAxis {
                label: "x".into(),
                scale,
                ticks: TickFormat::Count,
            },
            shared,
            panels: vec![
                LinePanel {
                    title: "one".into(),
                    y_label: "MB/s".into(),
                    log_y: false,
                    series: vec![
                        series(0, &[(64.0, 100.0), (128.0, 200.0)]),
                        series(1, &[(64.0, 50.0), (256.0, 300.0)]),
                    ],
                    marks: Vec::new(),
                },
                LinePanel {
                    title: "two".into(),
                    y_label: "MB/s".into(),
                    log_y: false,
                    series: vec![series(0, &[(16.0, 900.0), (64.0, 1000.0)])],
                    marks: Vec::new(),
                },
            ],
        }
    }

    #[test]
    fn shared_and_own_ranges() {
        let shared = figure(true, XScale::Log2);
        // One y scale over both panels: 0 to 1.1 × 1000.
        assert_eq!(shared.y_range(0), (0.0, 1100.0));
        assert_eq!(shared.y_range(1), (0.0, 1100.0));
        // x in powers of two, half a step beyond 16 and 256.
        assert_eq!(shared.x_range(0), (3.5, 8.5));
        assert_eq!(shared.x_range(1), (3.5, 8.5));
        let own = figure(false, XScale::Linear);
        assert_eq!(own.y_range(0), (0.0, 300.0 * 1.1));
        assert_eq!(own.x_range(0), (64.0, 256.0));
        assert_eq!(own.x_range(1), (16.0, 64.0));
        let mut log = figure(false, XScale::Log10);
        log.panels[0].log_y = true;
        assert_eq!(log.y_range(0), (50.0 / 1.5, 450.0));
        assert_eq!(log.x_range(1), (16.0 / 1.5, 96.0));
    }

    #[test]
    fn one_line_per_machine_in_the_svg() {
        let f = figure(true, XScale::Log2);
        let svg = figure_svg(&f, 900).unwrap();
        assert!(svg.starts_with("<svg"));
        let texts = svg_texts(&svg);
        assert!(
            texts.contains(&"one") && texts.contains(&"two"),
            "{texts:?}"
        );
        // Machine 0 has a line in each panel, machine 1 in one.
        assert_eq!(svg_lines_of(&svg, 0), 2);
        assert_eq!(svg_lines_of(&svg, 1), 1);
        assert_eq!(svg_lines_of(&svg, 2), 0);
        // Ticks at powers of two, written as counts.
        for tick in ["16", "64", "256"] {
            assert!(texts.contains(&tick), "no tick {tick} in {texts:?}");
        }
        assert!(!texts.contains(&"100"), "{texts:?}");
        let png = figure_png(&f, 700).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }

    #[test]
    fn selecting_panels() {
        let mut f = figure(true, XScale::Linear);
        f.select(&["two".to_string()], "program").unwrap();
        assert_eq!(f.panels.len(), 1);
        // Machine 1 has no line left, so it leaves the legend.
        assert_eq!(f.legend, vec![(0, "a".to_string())]);
        let err = figure(true, XScale::Linear)
            .select(&["three".to_string()], "program")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "nothing to draw: no program 'three' in these runs (there are: one, two)"
        );
    }

    #[test]
    fn close_tags_are_pushed_apart() {
        let tagged = |machine: usize, tag: &str, y: f64| Series {
            tag: Some(tag.into()),
            ..series(machine, &[(8.0, y / 2.0), (128.0, y)])
        };
        let panel = LinePanel {
            title: String::new(),
            y_label: String::new(),
            log_y: false,
            series: vec![
                tagged(0, "×8", 200.0),
                tagged(0, "×4", 190.0),
                series(1, &[(8.0, 5.0), (128.0, 195.0)]),
                tagged(0, "×1", 80.0),
            ],
            marks: Vec::new(),
        };
        // On 0..1600, ×4 at 190 stays; ×8 at 200 is within 100 of it and
        // goes to 290; ×1 is far from both; the untagged line has none.
        let at = tag_places(&panel, |x| x, 0.0, 1600.0);
        assert_eq!(
            at,
            [
                Some((128.0, 290.0)),
                Some((128.0, 190.0)),
                None,
                Some((128.0, 80.0))
            ]
        );
    }

    /// Axes derived from extreme values stay finite (plotters steps
    /// towards an infinite end for ever) and every figure draws.
    #[test]
    fn extreme_values_give_finite_axes() {
        for scale in [XScale::Linear, XScale::Log10, XScale::Log2] {
            for log_y in [false, true] {
                let mut f = figure(false, scale);
                f.panels[0].log_y = log_y;
                f.panels[0].series = vec![
                    series(0, &[(1e-320, 1e-320), (1e308, f64::MAX)]),
                    series(1, &[(f64::INFINITY, f64::INFINITY), (2.0, 0.0)]),
                ];
                for (a, b) in [f.x_range(0), f.y_range(0)] {
                    assert!(a.is_finite() && b.is_finite() && a < b, "{a}..{b}");
                }
                if log_y {
                    assert!(f.y_range(0).0 > 0.0);
                }
                let svg = figure_svg(&f, 800).unwrap();
                assert!(svg.len() < 200_000, "{scale:?}: {} bytes", svg.len());
            }
        }
    }

    #[test]
    fn tick_formats() {
        assert_eq!(TickFormat::Count.format(1024.0), "1024");
        assert_eq!(TickFormat::Decimal.format(10_000.0), "10k");
        assert_eq!(TickFormat::Bytes.format(4096.0), "4 KiB");
        assert_eq!(TickFormat::Bytes.format(1_048_576.0), "1 MiB");
        assert_eq!(TickFormat::Plain.format(0.25), "0.25");
        assert_eq!(TickFormat::Plain.format(-0.0001), "0");
        assert_eq!(TickFormat::Plain.format(12.0), "12");
    }

    /// A log axis has few ticks, all 1, 2 or 5 × 10ⁿ, as far apart as its
    /// room asks.
    #[test]
    fn log_ticks_are_few_and_1_2_5() {
        assert_eq!(
            log_ticks(33.0, 2250.0, 10),
            [50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]
        );
        assert_eq!(log_ticks(33.0, 2250.0, 4), [100.0, 1000.0]);
        assert_eq!(log_ticks(1.0, 1e6, 5), [1.0, 100.0, 1e4, 1e6]);
        assert_eq!(
            log_ticks(0.004, 0.3, 10),
            [0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
        );
        assert_eq!(log_ticks(7.0, 9.0, 10), Vec::<f64>::new());
        for (lo, hi) in [
            (33.0f64, 2250.0f64),
            (0.8, 225.0),
            (1e-150, 1e150),
            (466.0, 1050.0),
            (1e-5, 3e-5),
        ] {
            let decades = hi.log10() - lo.log10();
            for room in [2, 5, 11, 40] {
                let t = log_ticks(lo, hi, room);
                assert!(t.len() <= room + 1, "{lo}..{hi} in {room}: {t:?}");
                for v in &t {
                    assert!((lo..=hi).contains(v), "{lo}..{hi}: {t:?}");
                    assert!(!axis_value(*v, true).is_empty(), "{v} is not 1-2-5");
                }
                for w in t.windows(2) {
                    let gap = w[1].log10() - w[0].log10();
                    assert!(gap >= decades / room as f64 - 1e-9, "{lo}..{hi}: {t:?}");
                }
            }
        }
    }

    /// A log y axis drawn: each number once, all 1, 2 or 5 × 10ⁿ, and a
    /// grid line at those only. plotters' own log axis drew a light line at
    /// every hundredth of a decade (a grey band under each power of ten),
    /// bold ones at 600, 700, … and wrote 1000 twice (a blurred label).
    #[test]
    fn a_log_y_axis_draws_few_grid_lines_and_labels() {
        let mut f = figure(false, XScale::Log2);
        f.x.ticks = TickFormat::Bytes;
        f.panels.truncate(1);
        f.panels[0].log_y = true;
        f.panels[0].series = vec![
            series(0, &[(16.0, 105.0), (16384.0, 1500.0)]),
            series(1, &[(16.0, 44.0), (16384.0, 750.0)]),
        ];
        for width in [1000, 500] {
            let svg = figure_svg(&f, width).unwrap();
            // The x labels are sizes (`16 B`): the numbers are the y labels.
            let mut numbers: Vec<f64> = svg_texts(&svg)
                .iter()
                .filter_map(|t| t.parse().ok())
                .collect();
            numbers.sort_by(f64::total_cmp);
            assert_eq!(numbers, [50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]);
            let horizontal_grid = svg
                .split("<line")
                .skip(1)
                .filter(|e| {
                    let tag = e.split('>').next().unwrap_or("");
                    let attr = |name: &str| tag.split(name).nth(1)?.split('"').nth(1);
                    tag.contains("#EEEEEE") && attr(" y1=") == attr(" y2=")
                })
                .count();
            assert!(horizontal_grid <= 12, "{horizontal_grid} light lines");
        }
    }

    #[test]
    fn narrow_log_ranges_reach_a_power_of_ten() {
        // Ranges with two labelled values stay as they are.
        assert_eq!(readable_log_range(0.8, 225.0), (0.8, 225.0));
        assert_eq!(readable_log_range(100.0, 225.0), (100.0, 225.0));
        // One point, or equal values: no power of ten, or one label.
        for (lo, hi, start, end) in [
            (3.5 / 1.5, 3.5 * 1.5, 1.0, 5.25),
            (85.0 / 1.5, 85.0 * 1.5, 10.0, 127.5),
            (466.0, 1050.0, 100.0, 1050.0),
            (0.6, 1.35, 0.1, 1.35),
            (0.2, 0.22, 0.1, 0.22),
        ] {
            let (a, b) = readable_log_range(lo, hi);
            assert!(
                (a / start - 1.0).abs() < 1e-6 && a <= start,
                "{lo}..{hi}: {a}"
            );
            assert_eq!(b, end, "{lo}..{hi}");
        }
        // The y range of a panel of one point.
        let mut f = figure(false, XScale::Linear);
        f.panels[0].log_y = true;
        f.panels[0].series = vec![series(0, &[(1.0, 40.0)])];
        let (a, b) = f.y_range(0);
        assert!((a - 10.0).abs() < 1e-6 && b == 60.0, "{a}..{b}");
        let svg = figure_svg(&f, 800).unwrap();
        let texts = svg_texts(&svg);
        for label in ["10", "20"] {
            assert!(texts.contains(&label), "no {label} in {texts:?}");
        }
    }
}
