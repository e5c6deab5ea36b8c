//! fio's `--output-format=json` (or `json+`), maybe after a `note:` line;
//! client mode gives one machine per server.

use super::{json_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::disk::fio;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = fio::parse_fio(text, ctx.at).map_err(|e| json_error(name, e))?;
    let machines = report
        .machines
        .into_iter()
        .map(|m| {
            ToolMachine {
                host: m.host,
                ..ToolMachine::new(m.results)
            }
            .tag("fio_version", report.version.as_ref())
        })
        .collect();
    Ok(Parsed::tool(name, machines, &report.warnings))
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "fio",
    about: "fio's --output-format=json (or json+)",
    told: Told::Json,
    parse,
};
