//! fio's `--output-format=json` (or `json+`), maybe after a `note:` line;
//! client mode gives one machine per server.

use super::{file_warnings, is_json, json_error, json_kind, Importer, Parsed, ToolMachine};
use anyhow::Result;
use sysgauge_bench::disk::fio;
use sysgauge_compare::import::ImportContext;

pub struct Fio;

impl Importer for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }
    fn about(&self) -> &'static str {
        "fio's --output-format=json (or json+)"
    }
    fn sniff(&self, first: &str, text: &str) -> bool {
        (is_json(first) || first.starts_with("note:")) && json_kind(text) == "fio"
    }
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        let name = ctx.source_name;
        let report = fio::parse_fio(text, ctx.at).map_err(|e| json_error(name, e))?;
        Ok(Parsed {
            warnings: file_warnings(name, &report.warnings),
            machines: report
                .machines
                .into_iter()
                .map(|m| {
                    ToolMachine {
                        host: m.host,
                        ..ToolMachine::new(m.results)
                    }
                    .tag("fio_version", report.version.as_ref())
                })
                .collect(),
            ..Parsed::default()
        })
    }
}
