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
//! yet (`None`), given or not: the server answered, so it is not a typo.

use crate::config::{default_db_path, resolve_db};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use sysgauge_store::{display_name, is_url, Store, StoreError};

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

/// How the database a read-only command reads is shown (a URL without its
/// password).
pub fn reading_name(arg: Option<&Path>) -> Result<String> {
    Ok(display_name(&reading_path(arg)?))
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
