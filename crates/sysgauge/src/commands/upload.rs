//! `sysgauge upload WHAT… --to URL`: send runs to a results server
//! (`sysgauge serve`): stored runs (a run number, run-id prefix, label or
//! host name, as `results show` takes them) or files (`--json` records and
//! every other tool output `import` reads). Everything named is read and
//! checked before the first upload; a run the server already has is not an
//! error, so the command can be repeated after a failure.

use crate::exit::Exit;
use crate::exit::ERROR_PREFIX;
use crate::importing::{importer, load_files, FileOptions};
use crate::machines::{not_found, resolve_stored};
use crate::upload::{TokenArgs, Uploader};
use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
use sysgauge_core::record::RunRecord;
use sysgauge_core::text::for_terminal;

#[derive(Debug, Args)]
pub struct UploadArgs {
    /// Runs to send: a stored run (number, run-id prefix, label, or a host
    /// name for its latest complete run) or a file (a `--json` record or
    /// another tool's output, as `sysgauge import` reads them).
    #[arg(value_name = "RUN|FILE", required = true)]
    pub what: Vec<String>,

    /// The results server, e.g. https://results.example.org (plain http://
    /// only on this machine).
    #[arg(long, value_name = "URL")]
    pub to: String,

    #[command(flatten)]
    pub auth: TokenArgs,

    #[command(flatten)]
    pub db: crate::cli::DbArg,

    /// The files' format (the values come from the importer table).
    #[arg(long, value_parser = crate::importing::format_values(), default_value = "auto")]
    pub format: String,

    /// Host name for tool outputs that do not name their machine (as in
    /// `sysgauge import`).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
}

pub fn run(args: UploadArgs) -> Result<Exit> {
    let server = Uploader::new(&args.to, &args.auth, "--to")?;
    let runs = gather(&args)?;
    let mut failed = 0;
    for (run, origin) in &runs {
        let who = format!(
            "{origin} (host {}, {} results)",
            for_terminal(run.host_name()),
            run.results.len()
        );
        match server.upload(run) {
            Ok(done) => eprintln!("{who}: {}", done.describe()),
            Err(e) => {
                failed += 1;
                eprintln!("{ERROR_PREFIX}{who}: {e:#}");
            }
        }
    }
    eprintln!(
        "{} of {} run(s) on {}",
        runs.len() - failed,
        runs.len(),
        server.server()
    );
    Ok(if failed == 0 { Exit::Ok } else { Exit::Fatal })
}

/// Every run named, in order, with how the user named it: an existing
/// file is read as `import` reads it, anything else is looked up in the
/// results database.
fn gather(args: &UploadArgs) -> Result<Vec<(RunRecord, String)>> {
    let format = match args.format.as_str() {
        "auto" => None,
        name => match importer(name) {
            Some(i) => Some(i),
            None => bail!("--format {name}: no such importer"),
        },
    };
    let opts = FileOptions {
        format,
        host: args.host.clone(),
    };
    let mut opened = false;
    let mut store = None;
    let mut runs = Vec::new();
    for what in &args.what {
        let path = Path::new(what);
        if path.exists() {
            sysgauge_core::file::check_regular_file(path, "", crate::importing::MAX_IMPORT_BYTES)?;
            runs.extend(load_files(&[path], &opts)?);
            continue;
        }
        if !opened {
            store = crate::db::open_for_reading(args.db.db.as_deref())?;
            opened = true;
        }
        let row = match store.as_ref() {
            Some(s) => resolve_stored(s, what)?,
            None => None,
        };
        match (row, store.as_ref()) {
            (Some(row), Some(s)) => runs.push((s.load_run(row)?, format!("run {row}"))),
            _ => bail!(
                "{}",
                not_found(store.as_ref(), args.db.db.as_deref(), what, "")
            ),
        }
    }
    Ok(runs)
}
