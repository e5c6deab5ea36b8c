//! `sysgauge import FILE…`: bring results from other machines into the
//! results database: sysgauge JSON run records, CSV tables, `openssl speed
//! -mr` output. Every file is read and checked first; then all runs are
//! stored in one transaction, so a bad file anywhere leaves the database
//! exactly as it was. A run already present (same run id; CSV and openssl
//! runs get ids derived from their content) is skipped.

use crate::cli::{ImportArgs, ImportFormatArg};
use crate::exit::Exit;
use crate::machines::{load_file, FileOptions};
use anyhow::{bail, Result};
use sysgauge_compare::import::Format;
use sysgauge_store::Inserted;

pub fn run(args: ImportArgs) -> Result<Exit> {
    if args.files.is_empty() {
        bail!("name at least one file to import");
    }
    let format = match args.format {
        ImportFormatArg::Auto => None,
        ImportFormatArg::Json => Some(Format::Json),
        ImportFormatArg::Csv => Some(Format::Csv),
        ImportFormatArg::Openssl => Some(Format::OpensslSpeed),
        ImportFormatArg::Mbw => Some(Format::Mbw),
        ImportFormatArg::Bonnie => Some(Format::Bonnie),
        ImportFormatArg::Nbench => Some(Format::Nbench),
        ImportFormatArg::Hyperfine => Some(Format::Hyperfine),
        ImportFormatArg::Fio => Some(Format::Fio),
        ImportFormatArg::Sysbench => Some(Format::Sysbench),
    };
    if let Some(h) = &args.host {
        if h.trim().is_empty() {
            bail!(
                "--host is empty; give the name of the machine the openssl or mbw output came from"
            );
        }
    }
    let opts = FileOptions {
        format,
        host: args.host.clone(),
    };
    // Parse everything before opening the database: a bad file must not
    // leave anything behind, not even a new empty database.
    let mut runs = Vec::new();
    let mut origins = Vec::new();
    for path in &args.files {
        if !path.is_file() {
            bail!("{}: no such file", path.display());
        }
        for run in load_file(path, &opts)? {
            origins.push(path.display().to_string());
            runs.push(run);
        }
    }
    let mut store = crate::db::open_arg_for_writing(args.db.db.as_deref())?;
    let inserted = store.insert_runs(&runs, "import")?;
    let mut new = 0;
    for ((run, origin), ins) in runs.iter().zip(&origins).zip(&inserted) {
        match ins {
            Inserted::New(row) => {
                new += 1;
                eprintln!(
                    "imported run {row}: host {}, {} results ({}, from {origin})",
                    sysgauge_core::text::for_terminal(run.host_name()),
                    run.results.len(),
                    run.status.as_str()
                );
            }
            Inserted::AlreadyPresent(row) => eprintln!(
                "already imported: run {row} (host {}, from {origin}); skipped",
                sysgauge_core::text::for_terminal(run.host_name())
            ),
        }
    }
    eprintln!(
        "{new} new run(s), {} already present, in {}",
        runs.len() - new,
        store.path().display()
    );
    Ok(Exit::Ok)
}
