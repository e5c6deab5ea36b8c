//! `sysgauge import FILE…`: bring results from other machines into the
//! results database: sysgauge JSON run records, CSV tables, other tools'
//! outputs (`crate::importing`). Every file is read and checked first;
//! then all runs are stored in one transaction, so a bad file anywhere
//! leaves the database exactly as it was. A run already present (same run
//! id; imported runs get ids derived from their content) is skipped.
//!
//! With `--host`, the tool outputs of all the files are that machine's and
//! are stored as one run (a case given twice starts another run), so the
//! machine's nbench, Bonnie++ and openssl numbers stay together.

use crate::cli::DbArg;
use crate::exit::Exit;
use crate::importing::{importer, load_files, FileOptions, STDIN};
use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use sysgauge_store::Inserted;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import; `-` reads standard input (a block pasted into the
    /// terminal, ended with Ctrl-D, or a heredoc).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub db: DbArg,

    /// The files' format (the values come from the importer table).
    #[arg(long, value_parser = crate::importing::format_values(), default_value = "auto")]
    pub format: String,

    /// Host name for `openssl speed`, mbw, nbench, hyperfine, sysbench or fio output (default: the file's name without extension), or instead of the one Bonnie++ or fio's client mode printed. Files imported together with one --host are that machine's and are stored as one run.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
}

pub fn run(args: ImportArgs) -> Result<Exit> {
    if args.files.is_empty() {
        bail!("name at least one file to import");
    }
    let format = match args.format.as_str() {
        "auto" => None,
        name => match importer(name) {
            Some(i) => Some(i),
            None => bail!("--format {name}: no such importer"),
        },
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
    // Every file is checked before any is parsed: a FIFO, a directory or
    // /dev/zero named last is said at once, as what it is.
    for path in args.files.iter().filter(|p| p.as_os_str() != STDIN) {
        sysgauge_core::file::check_regular_file(path, "", crate::importing::MAX_IMPORT_BYTES)?;
    }
    let paths: Vec<&Path> = args.files.iter().map(|p| p.as_path()).collect();
    let (runs, origins): (Vec<_>, Vec<_>) = load_files(&paths, &opts)?.into_iter().unzip();
    let mut store = crate::db::open_arg_for_writing(args.db.db.as_deref())?;
    let inserted = store.insert_runs(&runs, "import")?;
    let (mut new, mut completed) = (0, 0);
    for ((run, origin), ins) in runs.iter().zip(&origins).zip(&inserted) {
        match ins {
            Inserted::Completed { row, added } => {
                completed += 1;
                eprintln!(
                    "completed run {row} from {origin}: added the {added} result(s) its database had missed \
                     (host {}, {} results, {})",
                    sysgauge_core::text::for_terminal(run.host_name()),
                    run.results.len(),
                    run.status.as_str()
                );
            }
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
    let completed_text = if completed > 0 {
        format!("{completed} completed, ")
    } else {
        String::new()
    };
    eprintln!(
        "{new} new run(s), {completed_text}{} already present, in {}",
        runs.len() - new - completed,
        store.path().display()
    );
    Ok(Exit::Ok)
}
