//! mbw's result lines (`AVG  Method: MEMCPY …`), with or without its
//! preamble, also wrapped as blog posts publish them.

use super::{line_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::memory::mbw;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let results = mbw::parse_mbw(text, ctx.at).map_err(|e| line_error(name, e))?;
    Ok(Parsed::tool(name, vec![ToolMachine::new(results)], &[]))
}

fn starts(line: &str) -> bool {
    line.starts_with("Long uses ") || line.split_whitespace().nth(1) == Some("Method:")
}

fn claims(line: &str) -> bool {
    line.starts_with("Getting down to business")
        || (line.starts_with("Using ") && line.ends_with("block copy test."))
        || ["Elapsed:", "MiB:", "Copy:", "Method:"]
            .iter()
            .any(|w| line.starts_with(w))
        || line.ends_with("MiB/s")
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "mbw",
    about: "mbw's output: its result lines (`AVG  Method: MEMCPY …`), with or without the others",
    told: Told::pasted(starts, claims),
    parse,
};
