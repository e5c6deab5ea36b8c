//! YABS's JSON (`yabs.sh -j`, or the file of `-w`), maybe after the
//! report it prints first: the fio disk test as `disk.randrw` cases, the
//! machine's facts as host facts.

use super::{json_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_bench::disk::yabs;
use sysgauge_compare::import::ImportContext;
use sysgauge_core::host::HostInfo;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let r = yabs::parse_yabs(text, ctx.at).map_err(|e| json_error(name, e))?;
    let mut facts = HostInfo::default();
    facts.cpu.model = r.cpu_model.clone();
    facts.cpu.cores = r.cores;
    facts.cpu.architecture = r.arch.as_deref().map(|a| {
        match a {
            "x64" => "x86_64",
            "x86" => "i686",
            other => other,
        }
        .to_string()
    });
    facts.memory.total_bytes = r.ram_bytes;
    facts.os.kernel_release = r.kernel.clone();
    facts.os.distribution = r.distro.clone();
    let machine = ToolMachine {
        facts,
        ..ToolMachine::new(r.results)
    }
    .tag("yabs_version", r.version.as_ref());
    Ok(Parsed::tool(name, vec![machine], &r.warnings))
}

/// The banner's middle line, how a pasted YABS output begins.
const BANNER: &str = "Yet-Another-Bench-Script";

/// The line that holds YABS's JSON.
fn json_line(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{') && yabs::looks_like_yabs(t)
}

/// A pasted run starts with the banner (its `#` lines are skipped as
/// comments, so the first line may be the date) and ends with the JSON
/// line.
fn sniff(first: &str, text: &str) -> bool {
    (json_line(first) || text.contains(BANNER)) && text.lines().any(json_line)
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "yabs",
    about: "YABS's JSON (yabs.sh -j or -w FILE), alone or after its report",
    told: Told::Document { sniff },
    parse,
};
