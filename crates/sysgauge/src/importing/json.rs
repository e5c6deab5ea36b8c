//! sysgauge's own JSON run records (what `run --json` writes), one or an
//! array.

use super::{is_json, json_kind, Importer, Parsed};
use anyhow::Result;
use sysgauge_compare::import::{parse_json, ImportContext};

pub struct Json;

impl Importer for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn about(&self) -> &'static str {
        "A sysgauge run record (or an array of them), as `run --json` writes"
    }
    fn sniff(&self, first: &str, text: &str) -> bool {
        is_json(first) && json_kind(text) == "json"
    }
    fn names_its_hosts(&self) -> bool {
        true
    }
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        Ok(Parsed {
            runs: parse_json(text, ctx)?,
            ..Parsed::default()
        })
    }
}
