//! mbw's result lines (`AVG  Method: MEMCPY …`), with or without its
//! preamble, also wrapped as blog posts publish them.

use super::{Importer, Parsed, ToolMachine};
use anyhow::Result;
use sysgauge_bench::memory::mbw;
use sysgauge_compare::import::ImportContext;

pub struct Mbw;

impl Importer for Mbw {
    fn name(&self) -> &'static str {
        "mbw"
    }
    fn about(&self) -> &'static str {
        "mbw's output: its result lines (`AVG  Method: MEMCPY …`), with or without the others"
    }
    fn pasted(&self) -> bool {
        true
    }
    fn starts(&self, line: &str) -> bool {
        line.starts_with("Long uses ") || line.split_whitespace().nth(1) == Some("Method:")
    }
    fn claims(&self, line: &str) -> bool {
        self.starts(line)
            || line.starts_with("Getting down to business")
            || (line.starts_with("Using ") && line.ends_with("block copy test."))
            || ["Elapsed:", "MiB:", "Copy:", "Method:"]
                .iter()
                .any(|w| line.starts_with(w))
            || line.ends_with("MiB/s")
    }
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        let name = ctx.source_name;
        let results = mbw::parse_mbw(text, ctx.at).map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
        Ok(Parsed {
            machines: vec![ToolMachine::new(results)],
            ..Parsed::default()
        })
    }
}
