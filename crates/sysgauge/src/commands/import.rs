//! `sysgauge import FILE…`: bring results from other machines into the
//! results database: sysgauge JSON run records, CSV tables, other tools'
//! outputs (`crate::importing`). Every file is read and checked first;
//! then all runs are stored in one transaction, so a bad file anywhere
//! leaves the database exactly as it was. A run already present (same run
//! id; imported runs get ids derived from their content, whatever the
//! order of the files) is skipped, and so is a tool's output that its
//! machine already has stored (every one of its results, the same numbers,
//! in one imported run of that host).
//!
//! With `--host`, the tool outputs of all the files are that machine's and
//! are stored as one run (a case given twice starts another run), so the
//! machine's nbench, Bonnie++ and openssl numbers stay together.

use crate::cli::DbArg;
use crate::exit::Exit;
use crate::importing::{
    importer, load_files_to_import, result_fingerprint, FileOptions, Held, STDIN,
};
use anyhow::{bail, Result};
use clap::Args;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::path::PathBuf;
use sysgauge_core::record::{ResultRecord, RunStatus};
use sysgauge_store::{Inserted, RunSummary, Store};

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
    // Every file is checked before any is parsed: a directory or /dev/zero
    // named last is said at once, as what it is. A pipe (`<(ssh host cat
    // out.txt)`) is read to its end as standard input is, within the same
    // bound.
    let piped = |p: &PathBuf| p.as_os_str() == STDIN || crate::importing::is_handed_pipe(p);
    for path in args.files.iter().filter(|p| !piped(p)) {
        sysgauge_core::file::check_regular_file(path, "", crate::importing::MAX_IMPORT_BYTES)?;
    }
    let paths: Vec<&Path> = args.files.iter().map(|p| p.as_path()).collect();
    // What is stored is read only when the database exists: an import into
    // a new one has nothing stored yet (and a bad file must not create it).
    // A database that cannot be read now (another import creating it this
    // moment, or one that is no results database) holds nothing known
    // here; opening it for writing below waits for a creator, or says
    // what is wrong.
    let existing = Store::open_read_only(&crate::config::resolve_db(args.db.db.as_deref())?).ok();
    let mut known = StoredOutputs::new(existing.as_ref());
    let (loaded, present) = load_files_to_import(&paths, &opts, &mut |host, results| {
        known.holding(host, results)
    })?;
    drop(known);
    drop(existing);
    let (runs, origins): (Vec<_>, Vec<_>) = loaded.into_iter().unzip();
    let mut store = crate::db::open_arg_for_writing(args.db.db.as_deref())?;
    for p in &present {
        let host = sysgauge_core::text::for_terminal(&p.host);
        match &p.held {
            Held::Run(run) => eprintln!(
                "already imported: the output of {} for host {host} is in run {run}; skipped",
                p.file
            ),
            Held::Earlier(file) => eprintln!(
                "the output of {} for host {host} is the one in {file}, named before it; skipped",
                p.file
            ),
        }
    }
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
    // The stored runs that hold outputs found count with the runs found
    // so: either is data this import did not add (the lines above say
    // which outputs).
    let holding: HashSet<&str> = present
        .iter()
        .filter_map(|p| match &p.held {
            Held::Run(run) => Some(run.as_str()),
            Held::Earlier(_) => None,
        })
        .collect();
    eprintln!(
        "{new} new run(s), {completed_text}{} already present, in {}",
        runs.len() - new - completed + holding.len(),
        store.path().display()
    );
    Ok(Exit::Ok)
}

/// The results each host's imported runs hold, read from the database once
/// per host as the import asks: an output is already present when one
/// imported run of its host holds every one of its results, the same case
/// with the same numbers (what identifies an output whatever files it was
/// imported with, and in what order, so runs imported before run ids were
/// independent of the order of the files are recognised too).
struct StoredOutputs<'a> {
    store: Option<&'a Store>,
    runs: Option<Vec<RunSummary>>,
    by_host: HashMap<String, Vec<(i64, HashSet<u128>)>>,
}

impl<'a> StoredOutputs<'a> {
    fn new(store: Option<&'a Store>) -> Self {
        StoredOutputs {
            store,
            runs: None,
            by_host: HashMap::new(),
        }
    }

    /// The stored run of `host` that holds every one of `results`, if any.
    fn holding(&mut self, host: &str, results: &[ResultRecord]) -> Result<Option<String>> {
        let Some(store) = self.store else {
            return Ok(None);
        };
        if results.is_empty() {
            return Ok(None);
        }
        if !self.by_host.contains_key(host) {
            if self.runs.is_none() {
                self.runs = Some(store.list_runs()?);
            }
            let ids: Vec<i64> = self
                .runs
                .iter()
                .flatten()
                .filter(|r| r.host == host && r.status == RunStatus::Imported)
                .map(|r| r.id)
                .collect();
            let runs = store.load_runs(&ids)?;
            let held = ids
                .into_iter()
                .zip(runs)
                .map(|(id, run)| (id, run.results.iter().map(result_fingerprint).collect()))
                .collect();
            self.by_host.insert(host.to_string(), held);
        }
        let wanted: Vec<u128> = results.iter().map(result_fingerprint).collect();
        Ok(self.by_host[host]
            .iter()
            .find(|(_, held)| wanted.iter().all(|f| held.contains(f)))
            .map(|(id, _)| id.to_string()))
    }
}
