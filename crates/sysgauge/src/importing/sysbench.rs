//! sysbench 1.0's cpu or memory test output.

use super::{line_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::sysbench;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = sysbench::parse_sysbench(text, ctx.at).map_err(|e| line_error(name, e))?;
    let m = ToolMachine::new(report.results).tag("sysbench_version", report.version.as_ref());
    Ok(Parsed::tool(name, vec![m], &report.warnings))
}

fn starts(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().take(2).collect();
    words.first() == Some(&"sysbench")
        || words.get(..2) == Some(&["$", "sysbench"])
        || line.starts_with("Running the test with following options")
}

/// sysbench's lines: `Label: value` (a label of words, a value that is
/// empty, a number or one word: `Number of threads: 1`, `events
/// (avg/stddev): 7613.0000/0.00`, `operation: write`), its notes
/// (`Initializing random number generator from current time`, `Threads
/// started!`, `WARNING: …`) and the memory test's `… MiB transferred (…)`.
/// Not prose that has a colon in it, nor a pasted JSON file's `"key":
/// value` lines: those are named as not read.
fn claims(line: &str) -> bool {
    let labelled = line.split_once(':').is_some_and(|(label, value)| {
        let label = label.trim();
        let value = value.trim();
        label.starts_with(|c: char| c.is_ascii_alphanumeric())
            && label.split_whitespace().count() <= 8
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " ()/-.".contains(c))
            && (value.is_empty()
                || value.starts_with(|c: char| c.is_ascii_digit() || c == '(')
                || !value.contains(char::is_whitespace))
    });
    labelled
        || line.starts_with("Initializing ")
        || line.starts_with("WARNING: ")
        || line == "Threads started!"
        || line.contains(" transferred (")
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "sysbench",
    about: "sysbench's cpu or memory test output (sysbench 1.0)",
    told: Told::pasted(starts, claims),
    parse,
};
