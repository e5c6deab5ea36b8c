//! nbench (BYTEmark 2, Linux/Unix port) output, with the machine its
//! "Linux data" names.

use super::{line_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::cpu::nbench;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = nbench::parse_nbench(text, ctx.at).map_err(|e| line_error(name, e))?;
    let facts = report.host();
    let mut m = ToolMachine::new(report.results)
        .tag("libc", report.libc.as_ref())
        .tag("compiler", report.compiler.as_ref());
    m.facts = facts;
    Ok(Parsed::tool(name, vec![m], &[]))
}

/// The labels of nbench's `LABEL : value` lines besides its tests.
const LABELS: [&str; 9] = [
    "INTEGER INDEX",
    "FLOATING-POINT INDEX",
    "MEMORY INDEX",
    "CPU",
    "L2 Cache",
    "OS",
    "C compiler",
    "libc",
    "Baseline",
];

fn starts(line: &str) -> bool {
    line.contains("BYTEmark")
        || (line.starts_with("TEST ") && line.contains("Iterations/sec"))
        || line.starts_with("NUMERIC SORT")
}

fn claims(line: &str) -> bool {
    let label = line.split_once(':').map(|(l, _)| l.trim());
    line.starts_with("Index-split by")
        || line.starts_with("Linux/Unix")
        || line.starts_with(':')
        || line.starts_with("--------------------:")
        || line.starts_with("====")
        || line.starts_with('*')
        || line.starts_with("WARNING:")
        || label
            .is_some_and(|l| nbench::TESTS.contains(&l) || LABELS.iter().any(|x| l.starts_with(x)))
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "nbench",
    about: "nbench (BYTEmark 2, Linux/Unix port) output",
    told: Told::pasted(starts, claims),
    parse,
};
