//! Plain CSV tables: `host,benchmark,metric,value,unit` with optional
//! `better`, `params` and host-fact columns.

use super::{Importer, Parsed};
use anyhow::Result;
use sysgauge_compare::import::{parse_csv, ImportContext};

pub struct Csv;

impl Importer for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn about(&self) -> &'static str {
        "host,benchmark,metric,value,unit[,better][,params]"
    }
    fn sniff(&self, first: &str, _text: &str) -> bool {
        // A comma-separated header; the CSV parser says what is wrong with
        // it, if anything.
        first.split(',').count() >= 3
    }
    fn names_its_hosts(&self) -> bool {
        true
    }
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        Ok(Parsed {
            runs: parse_csv(text, ctx)?,
            ..Parsed::default()
        })
    }
}
