//! sysgauge's own JSON run records (what `run --json` writes), one or an
//! array.

use super::{json_kind, ImporterDef, Parsed, Told};
use anyhow::Result;
use sysgauge_compare::import::{parse_json, ImportContext};

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    Ok(Parsed {
        runs: parse_json(text, ctx)?,
        ..Parsed::default()
    })
}

fn sniff(first: &str, text: &str) -> bool {
    json_kind(first, text) == Some("json")
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "json",
    about: "A sysgauge run record (or an array of them), as `run --json` writes",
    told: Told::Records { sniff },
    parse,
};
