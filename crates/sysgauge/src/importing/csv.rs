//! Plain CSV tables: `host,benchmark,metric,value,unit` with optional
//! `better`, `params` and host-fact columns.

use super::{ImporterDef, Parsed, Told};
use anyhow::Result;
use sysgauge_compare::import::{parse_csv, ImportContext};

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    Ok(Parsed {
        runs: parse_csv(text, ctx)?,
        ..Parsed::default()
    })
}

/// A comma-separated header; the CSV parser says what is wrong with it,
/// if anything.
fn sniff(first: &str, _text: &str) -> bool {
    first.split(',').count() >= 3
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "csv",
    about: "host,benchmark,metric,value,unit[,better][,params]",
    told: Told::Records { sniff },
    parse,
};
