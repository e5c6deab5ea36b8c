//! sysgauge-report: everything that turns records into text or pictures for
//! people or programs: aligned console tables, Markdown, CSV and JSON; the
//! comparison renderings; the self-contained HTML report; SVG and PNG
//! charts. Renderers never measure; they take records (or a comparison made
//! from them) and return strings or bytes.

pub mod chart;
pub mod clock;
pub mod compare;
pub mod cpu;
pub mod crypto;
pub mod disk;
pub mod format;
pub mod html;
pub mod index;
pub mod memory;
pub mod net;
pub mod spawn;
pub mod ssh;
pub mod startup;
pub mod summary;
pub mod sweep;
pub mod sweep_chart;
pub mod table;

pub use cpu::cpu_table;
pub use disk::{disk_table, disk_target_text};
#[cfg(test)]
mod testutil;

pub use chart::{chart_png, chart_svg, ChartError, ChartKind};
pub use compare::{format_ratio, render_comparison, CompareFormat};
pub use format::{format_value, format_with_unit};
pub use html::render_html;
pub use index::index_text;
pub use memory::{latency_chart_png, latency_chart_svg, memory_report};
pub use summary::{export_run, findings_text, summary_table, ExportFormat};
pub use sweep::{sweep_contrast, sweep_csv, sweep_points, sweep_table, SweepPoint};
pub use sweep_chart::{sweep_chart_png, sweep_chart_svg};
pub use table::{Align, Table, TableFormat};
