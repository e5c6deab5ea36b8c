//! Opening the results database from a command. Two doors:
//! - `open_for_reading` (results list/show/export, compare, report, chart,
//!   baseline make): never creates anything. A missing database named with
//!   `--db` is an error (a typo must not look like an empty history); the
//!   default database missing is `None`, which the command reports as "no
//!   runs stored yet".
//! - `open_for_writing` (measuring commands, import, results delete): creates
//!   the database if needed and, being the first writer since whatever came
//!   before, cleans up after sysgauge processes that were killed: the store
//!   marks their `running` runs interrupted, and here their scratch
//!   directories are removed.
//!
//! `--db` (or `SYSGAUGE_DB`) may be a PostgreSQL URL; the store tells it from
//! a path. A PostgreSQL database without our tables reads as no runs stored
//! yet (`None`), given or not: the server answered, so it is not a typo;
//! `nothing_stored` says which of these it was.

use crate::config::{default_db_path, resolve_db};
use anyhow::{bail, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use sysgauge_store::{display_name, is_url, Store, StoreError};

/// The database this invocation names (`--db`, or SYSGAUGE_DB through it),
/// noted by `main` before the command runs: output files are kept off it.
static NAMED: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Note the database the command line names (`None`: the command takes no
/// `--db`, or it was not given).
pub fn note_named(db: Option<PathBuf>) {
    let _ = NAMED.set(db);
}

/// Refuse `target` as an output file (`--json`, a report, a man page…)
/// when writing it would destroy a results database: the one this
/// invocation uses, the one SYSGAUGE_DB names, or the default one, or a
/// `-wal`/`-shm`/`-journal` file of one of them — by any path to it (its
/// canonical path, or the same file through a symlink or a hard link) — or
/// any existing SQLite database. `what` names the option in the message.
pub fn refuse_database_as_output(target: &Path, what: &str) -> Result<()> {
    if target.as_os_str() == "-" {
        return Ok(());
    }
    let mut databases: Vec<PathBuf> = NAMED.get().cloned().flatten().into_iter().collect();
    databases.extend(std::env::var_os("SYSGAUGE_DB").map(PathBuf::from));
    databases.extend(default_db_path().ok());
    let shown = target.display();
    let same = identity(target);
    for db in databases.iter().filter(|d| !d.as_os_str().is_empty()) {
        // SQLite keeps its side files beside the file a symlinked database
        // resolves to; look beside both.
        for name in [Some(db.clone()), std::fs::canonicalize(db).ok()]
            .iter()
            .flatten()
        {
            // The first is the database file itself, then its side files.
            for (i, file) in sysgauge_store::database_files(name).iter().enumerate() {
                if !identity(file).same_as(&same) {
                    continue;
                }
                let db = display_name(db);
                let is = if i == 0 {
                    format!("the results database {db}")
                } else {
                    format!("{}, a file of the results database {db}", file.display())
                };
                bail!("{what} {shown} is {is}: writing it would destroy the stored runs; give another file name");
            }
        }
    }
    if sysgauge_store::is_sqlite_database(target) {
        bail!(
            "{what} {shown} is an SQLite database: writing it would destroy what it holds; give another file name"
        );
    }
    Ok(())
}

/// Where a path leads: its canonical path (for a file not there yet, its
/// directory's canonical path and its name), and the file's device and
/// inode when it exists (a hard link has another path, the same inode).
struct Identity {
    path: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Identity {
    fn same_as(&self, other: &Identity) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }
}

fn identity(p: &Path) -> Identity {
    let inode = std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let path = std::fs::canonicalize(p).unwrap_or_else(|_| {
        let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        match (absolute.parent(), absolute.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or(absolute.clone()),
            _ => absolute.clone(),
        }
    });
    Identity { path, inode }
}

/// The database a read-only command reads: `--db`, else the default.
pub fn reading_path(arg: Option<&Path>) -> Result<PathBuf> {
    match arg {
        Some(p) if p.as_os_str().is_empty() => {
            bail!("--db is empty; give a file path or a postgres:// URL")
        }
        Some(p) => Ok(p.to_path_buf()),
        None => default_db_path(),
    }
}

/// The database for a read-only command (see the module doc).
pub fn open_for_reading(arg: Option<&Path>) -> Result<Option<Store>> {
    let path = reading_path(arg)?;
    match Store::open_read_only(&path) {
        Ok(s) => Ok(Some(s)),
        Err(StoreError::Missing { .. }) if arg.is_none() || is_url(&path) => Ok(None),
        Err(StoreError::Empty { .. }) => Ok(None),
        Err(StoreError::Missing { .. }) => bail!(
            "no results database at {} (nothing was created); check the path, or let a \
             measuring command such as `sysgauge run --db {}` create it",
            path.display(),
            path.display()
        ),
        Err(e) => Err(e.into()),
    }
}

/// Why a read-only command finds no runs where `open_for_reading` gave
/// `None`: no file there, an empty file, or a PostgreSQL database that
/// exists (its server answered) but has no sysgauge tables yet, which
/// reads as no database at all unless said.
pub fn nothing_stored(arg: Option<&Path>) -> Result<String> {
    let path = reading_path(arg)?;
    Ok(absent(&path))
}

/// [`nothing_stored`] of a database path or URL.
pub fn absent(path: &Path) -> String {
    let name = display_name(path);
    if is_url(path) {
        format!(
            "the PostgreSQL database {name} has no sysgauge tables yet; a command that stores runs \
             creates them: `sysgauge run --db {name}`, `sysgauge import FILE --db {name}` or \
             `sysgauge serve --db {name}`"
        )
    } else if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        format!("the database file {name} is empty")
    } else {
        format!("no database at {name}")
    }
}

/// The database for a command that writes, after cleaning up what killed
/// sysgauge processes left. `scratch_base` is this command's scratch parent
/// (`--scratch-dir`), searched besides the temp dir and /dev/shm.
pub fn open_for_writing(path: &Path, scratch_base: Option<&Path>) -> Result<Store> {
    let store = Store::open(path)?;
    for row in store.stale_runs() {
        eprintln!(
            "sysgauge: run {row} was left running by a sysgauge process that no longer exists; marked interrupted"
        );
    }
    let mut bases = vec![std::env::temp_dir(), PathBuf::from("/dev/shm")];
    if let Some(b) = scratch_base {
        if !bases.iter().any(|x| x == b) {
            bases.push(b.to_path_buf());
        }
    }
    for base in &bases {
        for dir in sysgauge_core::scratch::remove_stale(base) {
            eprintln!(
                "sysgauge: removed {}, left by a sysgauge process that no longer exists",
                dir.display()
            );
        }
    }
    Ok(store)
}

/// `open_for_writing` for the `--db` argument (or the default database,
/// whose directory is created).
pub fn open_arg_for_writing(arg: Option<&Path>) -> Result<Store> {
    open_for_writing(&resolve_db(arg)?, None)
}
