//! sysbench 1.0's cpu or memory test output.

use super::{line_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::sysbench;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = sysbench::parse_sysbench(text, ctx.at).map_err(|e| line_error(name, e))?;
    let m = ToolMachine::new(report.results).tag("sysbench_version", report.version.as_ref());
    Ok(Parsed::tool(name, vec![m], &[]))
}

fn starts(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().take(2).collect();
    words.first() == Some(&"sysbench")
        || words.get(..2) == Some(&["$", "sysbench"])
        || line.starts_with("Running the test with following options")
}

fn claims(line: &str) -> bool {
    line.contains(':')
        || line.ends_with('!')
        || line.ends_with("...")
        || line.contains(" transferred (")
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "sysbench",
    about: "sysbench's cpu or memory test output (sysbench 1.0)",
    told: Told::pasted(starts, claims),
    parse,
};
