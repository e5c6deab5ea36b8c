//! Naming machines on the command line: a machine (fleet alias, host name,
//! machine-id; all of its runs), a run (number, run-id prefix, label,
//! `NAME@RUN`), or a file to read (`crate::importing`). Used by `compare`,
//! `report`, `chart`, `results` and `baseline make`. Which stored runs a
//! name selects is `sysgauge_store::machines`' (the results site names
//! machines the same way); the labels are `sysgauge_compare::naming`'s.

pub use crate::importing::{load_file, parse_record_text, FileOptions};
use crate::values::GroupBy;
use anyhow::{bail, Result};
use std::path::Path;
pub use sysgauge_compare::naming::{MachineKey, NamedMachine, Origin};
use sysgauge_core::record::RunRecord;
use sysgauge_core::record::ALIAS_TAG;
#[cfg(test)]
pub(crate) use sysgauge_store::machines::test_row;
pub use sysgauge_store::machines::{key_of_row, resolve_stored};
use sysgauge_store::machines::{stored_machines, Resolver};
use sysgauge_store::Store;

/// Machines named by `keys` (files, machines, runs), or every stored
/// machine when `keys` is empty. `store` is `None` when there is no
/// results database; then only files can be named. The runs of one file
/// that name the same machine (a pasted block of several tools' outputs)
/// are one machine.
pub fn load_machines(
    store: Option<&Store>,
    db: Option<&Path>,
    keys: &[String],
    files: &FileOptions,
) -> Result<Vec<NamedMachine>> {
    let mut out: Vec<NamedMachine> = Vec::new();
    if keys.is_empty() {
        let Some(store) = store else {
            bail!(
                "{}; name runs, hosts or files to compare",
                crate::db::nothing_stored(db)?
            );
        };
        let rows = store.machine_rows(ALIAS_TAG)?;
        for (_, _, list) in stored_machines(&rows) {
            let ids: Vec<i64> = list.iter().map(|r| r.id).collect();
            let runs = store.load_runs(&ids)?;
            out.push(NamedMachine::stored(runs, ids));
        }
        for host in store.hosts()? {
            if !rows.iter().any(|r| r.host == host) {
                eprintln!(
                    "sysgauge: host {host} has no complete run; left out (name one of its runs to include it)"
                );
            }
        }
        return Ok(out);
    }
    let resolver = store.map(Resolver::new);
    for key in keys {
        let path = Path::new(key);
        if names_a_file(key) {
            let file = file_label(key, keys);
            let mut from_file: Vec<NamedMachine> = Vec::new();
            for run in load_file(path, files)? {
                let key = MachineKey::of_run(&run);
                match from_file
                    .iter_mut()
                    .find(|m| m.key().as_ref() == Some(&key))
                {
                    Some(m) => m.runs.push((run, Origin::File(file.clone()))),
                    // Pinned: a file's runs that are stored too (`import
                    // pi4.json`, then `compare pi4.json pi4`) are set apart
                    // from their machine named as a whole, as `pi4@12` is,
                    // so no case compares a run with itself.
                    None => from_file.push(NamedMachine {
                        runs: vec![(run, Origin::File(file.clone()))],
                        pinned: true,
                    }),
                }
            }
            out.extend(from_file);
            continue;
        }
        let found = match &resolver {
            Some(r) => r.resolve_machines(key)?,
            None => None,
        };
        match found {
            Some(found) => out.extend(found),
            None => bail!("{}", not_found(store, db, key, "")),
        }
    }
    Ok(out)
}

/// How the runs of the file `key` are labelled among the files `keys`
/// names: its name, or, where another file named has the same name
/// (`m1/speed.txt`, `m2/speed.txt`), as much of its path as tells them
/// apart. This is also the name `--reference` finds it by.
pub fn file_label(key: &str, keys: &[String]) -> String {
    let parts = |k: &str| -> Vec<String> {
        Path::new(k)
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect()
    };
    let mine = parts(key);
    let others: Vec<Vec<String>> = keys
        .iter()
        .filter(|k| !same_file(k, key) && names_a_file(k))
        .map(|k| parts(k))
        .collect();
    let tail = |p: &[String], n: usize| p[p.len().saturating_sub(n)..].join("/");
    for n in 1..=mine.len() {
        let t = tail(&mine, n);
        if others.iter().all(|o| tail(o, n) != t) {
            return t;
        }
    }
    key.to_string()
}

/// Whether two names lead to the same file (`m2/speed.txt`,
/// `./m2/speed.txt`).
pub fn same_file(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Whether `key` names a file to read rather than a stored machine or run:
/// anything there but a directory is meant as a file (a FIFO or a device
/// is then refused as what it is); a directory's name may be a host's.
pub fn names_a_file(key: &str) -> bool {
    std::fs::metadata(Path::new(key)).is_ok_and(|m| !m.is_dir())
}

/// "'X' is not a file, a host or a run …" with the known hosts, or why
/// there are none (`store` is `None` where `db`, the `--db` given, names no
/// database with sysgauge's tables).
pub fn not_found(store: Option<&Store>, db: Option<&Path>, key: &str, what: &str) -> String {
    let hosts = match store {
        Some(s) => match s.hosts() {
            Ok(h) if !h.is_empty() => format!(" (hosts: {})", h.join(", ")),
            _ => " (the results database has no runs)".to_string(),
        },
        None => match crate::db::nothing_stored(db) {
            Ok(why) => format!(" ({why})"),
            Err(e) => format!(" ({e})"),
        },
    };
    format!(
        "unknown {what}'{key}': not a file, a host, a fleet alias, a label or a run in the results database{hosts}"
    )
}

/// The groups `run`'s machine belongs to under `by` (`--group-by`); empty
/// when the run does not say.
pub fn membership(run: &RunRecord, by: &GroupBy) -> Vec<String> {
    let one = |v: Option<&String>| -> Vec<String> {
        v.map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| vec![s.to_string()])
            .unwrap_or_default()
    };
    match by {
        GroupBy::Group => run.groups(),
        GroupBy::Cpu => one(run.host.cpu.model.as_ref()),
        GroupBy::Arch => one(run.host.cpu.architecture.as_ref()),
        GroupBy::Tag(k) => one(run.tags.get(k)),
    }
}
