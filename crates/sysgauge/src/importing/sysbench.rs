//! sysbench 1.0's cpu or memory test output.

use super::{Importer, Parsed, ToolMachine};
use anyhow::Result;
use sysgauge_bench::sysbench;
use sysgauge_compare::import::ImportContext;

pub struct Sysbench;

impl Importer for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn about(&self) -> &'static str {
        "sysbench's cpu or memory test output (sysbench 1.0)"
    }
    fn pasted(&self) -> bool {
        true
    }
    fn starts(&self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().take(2).collect();
        words.first() == Some(&"sysbench")
            || words.get(..2) == Some(&["$", "sysbench"])
            || line.starts_with("Running the test with following options")
    }
    fn claims(&self, line: &str) -> bool {
        self.starts(line)
            || line.contains(':')
            || line.ends_with('!')
            || line.ends_with("...")
            || line.contains(" transferred (")
    }
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        let name = ctx.source_name;
        let report =
            sysbench::parse_sysbench(text, ctx.at).map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
        Ok(Parsed {
            machines: vec![
                ToolMachine::new(report.results).tag("sysbench_version", report.version.as_ref())
            ],
            ..Parsed::default()
        })
    }
}
