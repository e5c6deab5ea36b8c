//! Bonnie++'s output (1.03 to 2.00): its text table or CSV lines, with or
//! without its progress lines (`Writing a byte at a time...done`).

use super::sections::numberish;
use super::{line_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::{bail, Result};
use sysgauge_bench::disk::bonnie;
use sysgauge_compare::import::ImportContext;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = bonnie::parse_bonnie(text, ctx.at).map_err(|e| line_error(name, e))?;
    let machines: Vec<ToolMachine> = report
        .machines
        .into_iter()
        .filter(|m| !m.results.is_empty())
        .map(|m| {
            ToolMachine {
                host: Some(m.host),
                ..ToolMachine::new(m.results)
            }
            .tag("bonnie_version", report.version.as_ref())
        })
        .collect();
    if machines.is_empty() {
        bail!("{name}: no Bonnie++ test with a timed result (all too fast or skipped)");
    }
    Ok(Parsed::tool(name, machines, &report.warnings))
}

fn starts(line: &str) -> bool {
    line.starts_with("Using uid:")
        || line.starts_with("Writing a byte at a time")
        || line.starts_with("Writing with putc()")
        || line.starts_with("File size should be double RAM")
        || (line.starts_with("Version ") && line.contains("Sequential"))
        || line.contains("-Per Chr-")
        || is_csv_line(line)
}

fn claims(line: &str) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let row = tokens.len() >= 3 && tokens[1..].iter().all(|t| numberish(t) || is_size(t));
    line.contains("...done")
        || line.starts_with("start 'em")
        || line.starts_with("Version")
        || line.contains("%CP")
        || line.contains("Sequential")
        || line.contains("-Create--")
        || line.starts_with("Latency")
        || line.matches(',').count() >= 20
        || row
}

/// `1G`, `63744M`, `16:100000:16/64` (a size or a file-test spec).
fn is_size(t: &str) -> bool {
    t.chars()
        .all(|c| c.is_ascii_digit() || ":/kKmMgGT".contains(c))
        && t.starts_with(|c: char| c.is_ascii_digit())
}

/// Bonnie++'s CSV line: 27 fields (1.03), 38 or 50 (1.9x, 2.00), some of
/// them numbers. A wider line, or one of names only, is some other CSV
/// (a header), and the CSV importer says what is wrong with it.
fn is_csv_line(line: &str) -> bool {
    let fields = line.split(',').count();
    (27..=80).contains(&fields) && line.split(',').any(|f| f.trim().parse::<f64>().is_ok())
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "bonnie",
    about: "Bonnie++'s output: its text table (1.03 to 2.00) or CSV lines",
    told: Told::pasted(starts, claims),
    parse,
};
