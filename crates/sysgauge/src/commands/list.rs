//! `sysgauge list`: every benchmark id with its family, unit and description.

use crate::exit::Exit;
use crate::output;
use crate::values::FamilyName;
use anyhow::Result;
use clap::Args;
use serde::Serialize;
use sysgauge_core::family_of;
use sysgauge_crypto::speed::implementation_catalog;
use sysgauge_family::family::Options;
use sysgauge_registry::{benchmarks, family_info};
use sysgauge_report::{unit_label, Table, TableFormat};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this family.
    #[arg(long, value_name = "FAMILY")]
    pub family: Option<FamilyName>,

    /// Print as JSON.
    #[arg(long)]
    pub json: bool,

    /// List the implementations each hash, cipher and public-key algorithm
    /// can choose from (the names `--implementation` takes), and which run
    /// on this CPU.
    #[arg(long)]
    pub implementations: bool,
}

#[derive(Serialize)]
struct Entry {
    id: String,
    family: String,
    unit: String,
    better: String,
    description: String,
    /// Whether `sysgauge run` runs it without `--only`.
    in_default_run: bool,
}

/// One line of `list --implementations`.
#[derive(Serialize)]
struct Implementations {
    id: String,
    /// The implementations this CPU runs, the default first.
    here: Vec<&'static str>,
    /// Those sysgauge has that need instructions this CPU lacks.
    elsewhere: Vec<&'static str>,
}

impl ListArgs {
    /// Whether `id` is of the family asked for (of any without --family).
    fn lists(&self, id: &str) -> bool {
        self.family.is_none_or(|FamilyName(f)| family_of(id) == f)
    }
}

/// `list --implementations`: what `--implementation` can name.
fn implementations(args: &ListArgs) -> Result<Exit> {
    let rows: Vec<Implementations> = implementation_catalog()
        .iter()
        .filter(|c| args.lists(c.algorithm_id()))
        .map(|c| {
            let here = c.names();
            Implementations {
                id: c.algorithm_id().to_string(),
                elsewhere: c
                    .all_names()
                    .into_iter()
                    .filter(|n| !here.contains(n))
                    .collect(),
                here,
            }
        })
        .collect();
    if args.json {
        output::stdout(&(serde_json::to_string_pretty(&rows)? + "\n"))?;
        return Ok(Exit::Ok);
    }
    let mut t = Table::columns("id, on this CPU, not on this CPU");
    for r in rows {
        t.push(vec![r.id, r.here.join(", "), r.elsewhere.join(", ")]);
    }
    let mut text = t.render(TableFormat::Text);
    text.push_str(
        "\nWhere there is more than one, each case checks them against known answers and times them briefly; the fastest runs (its name is in the result's details). `--implementation NAME` or `ALG=NAME` forces one.\n",
    );
    output::stdout(&text)?;
    Ok(Exit::Ok)
}

pub fn run(args: ListArgs) -> Result<Exit> {
    if args.implementations {
        return implementations(&args);
    }
    let entries: Vec<Entry> = benchmarks(&Options::default())
        .iter()
        .filter(|b| args.lists(b.id()))
        .map(|b| {
            let d = b.describe();
            Entry {
                id: b.id().to_string(),
                family: family_of(b.id()).to_string(),
                unit: d.unit.symbol().to_string(),
                better: d.better.as_str().to_string(),
                description: d.summary,
                in_default_run: family_info(family_of(b.id())).is_none_or(|f| f.in_default_run),
            }
        })
        .collect();
    if args.json {
        output::stdout(&(serde_json::to_string_pretty(&entries)? + "\n"))?;
        return Ok(Exit::Ok);
    }
    let mut t = Table::columns("id, unit, better, description");
    let mut opt_in: Vec<String> = Vec::new();
    for e in entries {
        if !e.in_default_run && !opt_in.contains(&e.family) {
            opt_in.push(e.family.clone());
        }
        t.push(vec![
            e.id,
            unit_label(&e.unit).to_string(),
            e.better,
            e.description,
        ]);
    }
    let mut text = t.render(TableFormat::Text);
    if !opt_in.is_empty() {
        text.push_str(&format!(
            "\nNot in `sysgauge run` unless named with --only (each also has its own subcommand): {}\n",
            opt_in.join(", ")
        ));
    }
    output::stdout(&text)?;
    Ok(Exit::Ok)
}
