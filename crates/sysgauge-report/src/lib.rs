//! sysgauge-report: everything that turns records into text or pictures for
//! people or programs: aligned console tables, Markdown, CSV and JSON; the
//! comparison renderings; the self-contained HTML report; SVG and PNG
//! charts. Renderers never measure; they take records (or a comparison made
//! from them) and return strings or bytes.
//!
//! This crate is generic: it names no benchmark id. Each family's own
//! renderers live with the family in its crate (`<family>/report.rs`)
//! and build on the tables, formatting and chart helpers here.

#![forbid(unsafe_code)]

pub mod chart;
pub mod compare;
pub mod fleet;
pub mod format;
pub mod html;
pub mod index;
pub mod matrix;
pub mod prometheus;
pub mod summary;
pub mod table;

#[cfg(test)]
mod testutil;

pub use chart::lines::{figure_png, figure_svg, LineFigure};
pub use chart::{chart_png, chart_svg, ChartError, ChartKind, Figure};
pub use compare::{
    format_ratio, render_comparison, render_comparison_with, CompareFormat, RenderOptions,
};
pub use fleet::render_groups;
pub use format::{format_value, format_with_unit, unit_label};
pub use html::{render_html, render_html_with, ReportFigure};
pub use index::index_text;
pub use matrix::{heatmap_png, heatmap_svg, render_matrices, Matrix, MatrixFormat};
pub use prometheus::{prometheus_text, PromRun};
pub use summary::{
    export_run, findings_text, spread_cell, status_note, summary_table, telemetry_table,
    warning_codes, ExportFormat,
};
pub use table::{Align, Table, TableFormat};
