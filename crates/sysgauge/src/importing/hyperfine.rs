//! hyperfine's `--export-json` file: every run a sample.

use super::{file_warnings, is_json, json_error, json_kind, Importer, Parsed, ToolMachine};
use anyhow::Result;
use sysgauge_bench::startup::hyperfine;
use sysgauge_compare::import::ImportContext;

pub struct Hyperfine;

impl Importer for Hyperfine {
    fn name(&self) -> &'static str {
        "hyperfine"
    }
    fn about(&self) -> &'static str {
        "hyperfine's --export-json file"
    }
    fn sniff(&self, first: &str, text: &str) -> bool {
        is_json(first) && json_kind(text) == "hyperfine"
    }
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        let name = ctx.source_name;
        let report = hyperfine::parse_hyperfine(text, ctx.at).map_err(|e| json_error(name, e))?;
        Ok(Parsed {
            warnings: file_warnings(name, &report.warnings),
            machines: vec![ToolMachine::new(report.results)],
            ..Parsed::default()
        })
    }
}
