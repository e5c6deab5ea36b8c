//! sysgauge-report: everything that turns records into text for people or
//! programs: aligned console tables, Markdown, CSV and JSON. Renderers never
//! measure; they take records and return strings.

pub mod format;
pub mod spawn;
pub mod ssh;
pub mod startup;
pub mod summary;
pub mod table;

pub use format::{format_value, format_with_unit};
pub use summary::{export_run, findings_text, summary_table, ExportFormat};
pub use table::{Align, Table, TableFormat};
