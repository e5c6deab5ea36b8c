//! hyperfine's `--export-json` file: every run a sample.

use super::{json_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::startup::hyperfine;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = hyperfine::parse_hyperfine(text, ctx.at).map_err(|e| json_error(name, e))?;
    let m = ToolMachine::new(report.results);
    Ok(Parsed::tool(name, vec![m], &report.warnings))
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "hyperfine",
    about: "hyperfine's --export-json file",
    told: Told::Json,
    parse,
};
