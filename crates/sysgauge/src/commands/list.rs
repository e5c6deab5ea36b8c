//! `sysgauge list`: every benchmark id with its family, unit and description.

use crate::cli::ListArgs;
use crate::exit::Exit;
use crate::output;
use anyhow::{bail, Result};
use serde::Serialize;
use sysgauge_bench::{benchmarks, families, Options};
use sysgauge_core::family_of;
use sysgauge_report::{Align, Table, TableFormat};

#[derive(Serialize)]
struct Entry {
    id: String,
    family: String,
    unit: String,
    better: String,
    description: String,
}

pub fn run(args: ListArgs) -> Result<Exit> {
    if let Some(f) = &args.family {
        if !families().iter().any(|x| x.name == f) {
            let names: Vec<&str> = families().iter().map(|f| f.name).collect();
            bail!("unknown family '{f}' (families: {})", names.join(", "));
        }
    }
    let entries: Vec<Entry> = benchmarks(&Options::default())
        .iter()
        .filter(|b| {
            args.family
                .as_deref()
                .is_none_or(|f| family_of(b.id()) == f)
        })
        .map(|b| {
            let d = b.describe();
            Entry {
                id: b.id().to_string(),
                family: family_of(b.id()).to_string(),
                unit: d.unit.symbol().to_string(),
                better: d.better.as_str().to_string(),
                description: d.summary,
            }
        })
        .collect();
    if args.json {
        output::stdout(&(serde_json::to_string_pretty(&entries)? + "\n"))?;
        return Ok(Exit::Ok);
    }
    let mut t = Table::new(&[
        ("id", Align::Left),
        ("unit", Align::Left),
        ("better", Align::Left),
        ("description", Align::Left),
    ]);
    for e in entries {
        t.push(vec![e.id, e.unit, e.better, e.description]);
    }
    output::stdout(&t.render(TableFormat::Text))?;
    Ok(Exit::Ok)
}
