//! Host-by-host matrices (the network matrix of `fleet net`): one value per
//! ordered pair of hosts, rows = from, columns = to, as text, Markdown and
//! CSV tables, JSON, and a heatmap (SVG for the HTML report, PNG for
//! documents).
//!
//! The heatmap's shade says how good a cell is against the matrix's best
//! cell (light = best, dark = far from it), whichever direction is better,
//! and every cell also prints its value: the shade finds the odd pair, the
//! number says how odd. Percentages (loss) are shaded on a fixed
//! scale from 0 to at least 10 %, so a matrix of 0 and 0.5 % does not look
//! like a disaster; the diagonal (a host to itself) is grey.

use crate::chart::{draw_err, ensure_font, render_png, render_svg, text_width, Drawing, FONT};
use crate::format::{format_value, unit_label};
use crate::table::{Align, Table, TableFormat};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use serde::Serialize;
use sysgauge_core::{Better, Unit};

pub use crate::chart::ChartError;

/// One measure over every ordered pair of hosts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// A short name (`loss`, `tcp-throughput`): the JSON key, the CSV
    /// column and the report's figure name.
    pub name: String,
    /// What a cell is, for a heading: "2ping loss, from → to".
    pub title: String,
    pub unit: Unit,
    pub better: Better,
    /// The hosts, in row and column order.
    pub hosts: Vec<String>,
    /// `cells[from][to]`; `None` where nothing was measured (the diagonal,
    /// a failed pair).
    pub cells: Vec<Vec<Option<f64>>>,
}

/// The matrices' output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixFormat {
    Text,
    Markdown,
    /// One CSV for all matrices: `matrix,unit,from,to,value` rows.
    Csv,
    /// `{"schema_version":1,"hosts":[…],"matrices":[{…}]}`.
    Json,
}

/// Version of the JSON document [`render_matrices`] writes.
pub const MATRIX_JSON_VERSION: u32 = 1;

impl Matrix {
    /// An empty matrix over `hosts`.
    pub fn new(name: &str, title: &str, unit: Unit, better: Better, hosts: &[String]) -> Matrix {
        Matrix {
            name: name.into(),
            title: title.into(),
            unit,
            better,
            hosts: hosts.to_vec(),
            cells: vec![vec![None; hosts.len()]; hosts.len()],
        }
    }

    /// Sets the cell from `from` to `to` (host names); unknown names are
    /// ignored.
    pub fn set(&mut self, from: &str, to: &str, value: f64) {
        let (Some(f), Some(t)) = (self.index(from), self.index(to)) else {
            return;
        };
        if f != t && value.is_finite() {
            self.cells[f][t] = Some(value);
        }
    }

    /// The cell from `from` to `to`.
    pub fn get(&self, from: &str, to: &str) -> Option<f64> {
        self.cells
            .get(self.index(from)?)?
            .get(self.index(to)?)
            .copied()
            .flatten()
    }

    fn index(&self, host: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h == host)
    }

    /// Whether any cell holds a value.
    pub fn is_empty(&self) -> bool {
        self.cells.iter().flatten().all(Option::is_none)
    }

    /// The matrix as a table: a row per sending host, a column per
    /// receiving one.
    pub fn table(&self) -> Table {
        let corner = "from \\ to".to_string();
        let mut headers: Vec<(&str, Align)> = vec![(corner.as_str(), Align::Left)];
        headers.extend(self.hosts.iter().map(|h| (h.as_str(), Align::Right)));
        let mut t = Table::new(&headers);
        for (f, row) in self.cells.iter().enumerate() {
            let mut cells = vec![self.hosts[f].clone()];
            cells.extend(row.iter().enumerate().map(|(to, v)| match v {
                Some(v) => format_value(*v),
                None if to == f => "·".into(),
                None => "-".into(),
            }));
            t.push(cells);
        }
        t
    }

    fn heading(&self) -> String {
        format!("{} ({})", self.title, unit_label(self.unit.symbol()))
    }
}

/// Every matrix in `format`, in order (empty matrices left out).
pub fn render_matrices(matrices: &[Matrix], format: MatrixFormat) -> String {
    let shown: Vec<&Matrix> = matrices.iter().filter(|m| !m.is_empty()).collect();
    match format {
        MatrixFormat::Text | MatrixFormat::Markdown => {
            let (tf, lead) = if format == MatrixFormat::Text {
                (TableFormat::Text, "")
            } else {
                (TableFormat::Markdown, "### ")
            };
            let mut out = String::new();
            for (i, m) in shown.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&format!("{lead}{}\n", m.heading()));
                if format == MatrixFormat::Markdown {
                    out.push('\n');
                }
                out.push_str(&m.table().render(tf));
            }
            out
        }
        MatrixFormat::Csv => {
            let mut t = Table::columns("matrix, unit, from, to, value");
            for m in &shown {
                for (f, row) in m.cells.iter().enumerate() {
                    for (to, v) in row.iter().enumerate() {
                        if let Some(v) = v {
                            t.push(vec![
                                m.name.clone(),
                                m.unit.symbol().to_string(),
                                m.hosts[f].clone(),
                                m.hosts[to].clone(),
                                v.to_string(),
                            ]);
                        }
                    }
                }
            }
            t.render(TableFormat::Csv)
        }
        MatrixFormat::Json => {
            #[derive(Serialize)]
            struct Doc<'a> {
                schema_version: u32,
                hosts: Vec<String>,
                matrices: Vec<&'a Matrix>,
            }
            let hosts = shown.first().map(|m| m.hosts.clone()).unwrap_or_default();
            let doc = Doc {
                schema_version: MATRIX_JSON_VERSION,
                hosts,
                matrices: shown,
            };
            let mut s = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
            s.push('\n');
            s
        }
    }
}

/// The heatmap as an SVG document.
pub fn heatmap_svg(m: &Matrix, width: u32) -> Result<String, ChartError> {
    ensure_font()?;
    check_drawable(m)?;
    render_svg(m, width)
}

/// The heatmap as PNG bytes.
pub fn heatmap_png(m: &Matrix, width: u32) -> Result<Vec<u8>, ChartError> {
    ensure_font()?;
    check_drawable(m)?;
    render_png(m, width)
}

fn check_drawable(m: &Matrix) -> Result<(), ChartError> {
    if m.is_empty() {
        return Err(ChartError::NoData(format!("no {} was measured", m.title)));
    }
    Ok(())
}

const CELL_H: u32 = 36;
const TOP_H: u32 = 64;
const PAD: u32 = 10;

/// How good `v` is within the matrix, 0 (worst) to 1 (best): against the
/// best cell (a cell at half the best throughput, or twice the best round
/// trip, is half as good), so noise between similar cells stays pale;
/// percentages (loss) on the fixed scale of the module's notes.
fn goodness(m: &Matrix, v: f64) -> f64 {
    let values: Vec<f64> = m.cells.iter().flatten().flatten().copied().collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let g = if m.unit == Unit::Percent {
        let scale = if m.better == Better::Higher {
            hi
        } else {
            hi.max(10.0)
        };
        let t = if scale > 0.0 { v / scale } else { 0.0 };
        if m.better == Better::Higher {
            t
        } else {
            1.0 - t
        }
    } else if m.better == Better::Higher {
        if hi > 0.0 {
            v / hi
        } else {
            1.0
        }
    } else if v > 0.0 && lo > 0.0 {
        lo / v
    } else if v <= 0.0 {
        1.0
    } else {
        0.0
    };
    g.clamp(0.0, 1.0)
}

/// Light (good) to dark (bad): a single-hue sequential scale, readable in
/// grey and by the colour-blind.
fn shade(goodness: f64) -> RGBColor {
    let bad = (1.0 - goodness).clamp(0.0, 1.0);
    let mix = |light: f64, dark: f64| (light + (dark - light) * bad).round() as u8;
    RGBColor(mix(255.0, 127.0), mix(245.0, 39.0), mix(235.0, 4.0))
}

impl Matrix {
    fn label_width(&self) -> u32 {
        self.hosts
            .iter()
            .map(|h| text_width(h, 14.0))
            .max()
            .unwrap_or(0)
            .max(text_width("from \\ to", 12.0))
            + 2 * PAD
    }
}

impl Drawing for Matrix {
    fn size(&self, width: u32) -> (u32, u32) {
        let n = self.hosts.len() as u32;
        let cell_w = ((width.saturating_sub(self.label_width() + PAD)) / n.max(1)).clamp(60, 160);
        (
            self.label_width() + cell_w * n + PAD,
            TOP_H + CELL_H * n + PAD,
        )
    }

    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        root.fill(&WHITE).map_err(draw_err)?;
        let (w, _) = root.dim_in_pixel();
        let n = self.hosts.len().max(1) as u32;
        let left = self.label_width();
        let cell_w = (w.saturating_sub(left + PAD)) / n;
        let title = TextStyle::from((FONT, 16).into_font().style(FontStyle::Bold)).color(&BLACK);
        root.draw(&Text::new(self.heading(), (PAD as i32, 8), title))
            .map_err(draw_err)?;
        let label = TextStyle::from((FONT, 14).into_font()).color(&BLACK);
        let small = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(90, 90, 90));
        root.draw(&Text::new(
            "from \\ to",
            (PAD as i32, (TOP_H - 24) as i32),
            small.clone(),
        ))
        .map_err(draw_err)?;
        for (i, h) in self.hosts.iter().enumerate() {
            let tw = text_width(h, 14.0) as i32;
            let x = (left + cell_w * i as u32) as i32 + (cell_w as i32 - tw).max(8) / 2;
            root.draw(&Text::new(
                h.clone(),
                (x, (TOP_H - 24) as i32),
                label.clone(),
            ))
            .map_err(draw_err)?;
            let y = (TOP_H + CELL_H * i as u32 + 10) as i32;
            root.draw(&Text::new(h.clone(), (PAD as i32, y), label.clone()))
                .map_err(draw_err)?;
        }
        for (f, row) in self.cells.iter().enumerate() {
            for (t, v) in row.iter().enumerate() {
                let x0 = (left + cell_w * t as u32) as i32;
                let y0 = (TOP_H + CELL_H * f as u32) as i32;
                let (fill, text) = match v {
                    Some(v) => (shade(goodness(self, *v)), format_value(*v)),
                    None if f == t => (RGBColor(225, 225, 225), String::new()),
                    None => (WHITE, "-".into()),
                };
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + cell_w as i32, y0 + CELL_H as i32)],
                    fill.filled(),
                ))
                .map_err(draw_err)?;
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + cell_w as i32, y0 + CELL_H as i32)],
                    RGBColor(255, 255, 255).stroke_width(1),
                ))
                .map_err(draw_err)?;
                if !text.is_empty() {
                    let dark = v.is_some_and(|v| goodness(self, v) < 0.45);
                    let color = if dark { WHITE } else { BLACK };
                    let style = TextStyle::from((FONT, 14).into_font()).color(&color);
                    let tw = text_width(&text, 14.0) as i32;
                    let x = x0 + (cell_w as i32 - tw) / 2;
                    root.draw(&Text::new(text, (x, y0 + 10), style))
                        .map_err(draw_err)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss() -> Matrix {
        let hosts: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut m = Matrix::new("loss", "2ping loss", Unit::Percent, Better::Lower, &hosts);
        m.set("a", "b", 30.0);
        m.set("b", "a", 0.0);
        m.set("a", "c", 0.5);
        m.set("a", "a", 7.0); // the diagonal stays empty
        m.set("a", "zz", 1.0); // unknown hosts are ignored
        m
    }

    #[test]
    fn cells_rows_and_columns() {
        let m = loss();
        assert_eq!(m.get("a", "b"), Some(30.0));
        assert_eq!(m.get("b", "a"), Some(0.0));
        assert_eq!(m.get("a", "a"), None);
        assert_eq!(m.get("c", "b"), None);
        let text = render_matrices(std::slice::from_ref(&m), MatrixFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "2ping loss (%)");
        let row_a: Vec<&str> = lines
            .iter()
            .find(|l| l.starts_with("a "))
            .map(|l| l.split_whitespace().collect())
            .unwrap_or_default();
        assert_eq!(row_a, ["a", "·", "30.00", "0.5000"]);
        let csv = render_matrices(std::slice::from_ref(&m), MatrixFormat::Csv);
        assert!(csv.contains("loss,%,a,b,30\n"), "{csv}");
        assert_eq!(csv.lines().count(), 4, "{csv}");
        let md = render_matrices(std::slice::from_ref(&m), MatrixFormat::Markdown);
        assert!(md.starts_with("### 2ping loss (%)\n\n|"), "{md}");
    }

    #[test]
    fn json_document() {
        let doc: serde_json::Value =
            serde_json::from_str(&render_matrices(&[loss()], MatrixFormat::Json))
                .unwrap_or_default();
        assert_eq!(doc["schema_version"], 1);
        assert_eq!(doc["hosts"], serde_json::json!(["a", "b", "c"]));
        assert_eq!(doc["matrices"][0]["cells"][0][1], 30.0);
        assert!(doc["matrices"][0]["cells"][0][0].is_null());
    }

    #[test]
    fn shading_follows_what_is_better() {
        let m = loss();
        assert!(goodness(&m, 0.0) > 0.99);
        assert!(goodness(&m, 30.0) < 0.01);
        // Half a per cent of loss is nearly as light as none.
        assert!(goodness(&m, 0.5) > 0.9);
        let hosts: Vec<String> = ["a", "b"].map(String::from).to_vec();
        let mut t = Matrix::new("tcp", "TCP", Unit::MBps, Better::Higher, &hosts);
        t.set("a", "b", 100.0);
        t.set("b", "a", 50.0);
        assert!(goodness(&t, 100.0) > 0.99);
        assert!((goodness(&t, 50.0) - 0.5).abs() < 1e-9);
        let mut r = Matrix::new("rtt", "RTT", Unit::Milliseconds, Better::Lower, &hosts);
        r.set("a", "b", 1.0);
        r.set("b", "a", 4.0);
        assert!(goodness(&r, 1.0) > 0.99 && (goodness(&r, 4.0) - 0.25).abs() < 1e-9);
    }

    #[test]
    fn heatmaps_draw_and_empty_ones_say_so() {
        let m = loss();
        let svg = heatmap_svg(&m, 600).unwrap_or_default();
        assert!(svg.starts_with("<svg") && svg.contains("30.00"), "{svg}");
        let png = heatmap_png(&m, 600).unwrap_or_default();
        assert!(png.starts_with(b"\x89PNG"));
        let empty = Matrix::new("x", "nothing", Unit::MBps, Better::Higher, &m.hosts);
        assert!(matches!(
            heatmap_svg(&empty, 600),
            Err(ChartError::NoData(_))
        ));
    }
}
