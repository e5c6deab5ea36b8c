//! Naming machines on the command line: a stored run (row number or run-id
//! prefix), a host name (its latest run stands for it), or a file to read
//! (`crate::importing`). Used by `compare`, `report`, `chart` and
//! `baseline make`.

pub use crate::importing::{load_file, parse_record_text, FileOptions};
use crate::values::GroupBy;
use anyhow::{bail, Result};
use std::path::Path;
use sysgauge_compare::Machine;
use sysgauge_core::record::{RunRecord, ALIAS_TAG, GROUPS_TAG};
use sysgauge_store::{Store, StoreError};

/// The stored run `key` names: a host name first (its latest complete
/// run), then a fleet alias (the same), then a run number or run-id prefix. `Ok(None)` when nothing
/// matches. A host whose runs are all partial (running, interrupted,
/// failed) is an error that names its newest run: a partial run compared
/// as "the host" would mislead, but it can be named explicitly.
pub fn resolve_stored(store: &Store, key: &str) -> Result<Option<i64>> {
    let key = key.trim();
    if let Some(row) = store.latest_run_for_host(key)? {
        return Ok(Some(row));
    }
    if let Some((row, status)) = store.latest_any_run_for_host(key)? {
        bail!(
            "host '{key}' has no complete run (its newest, run {row}, is {}); name the run \
             (`{row}`) to use it anyway",
            status.as_str()
        );
    }
    // A fleet alias names the machine it was given to (its latest run).
    if let Some(row) = store
        .machine_rows(ALIAS_TAG)?
        .into_iter()
        .find(|r| r.alias.as_deref() == Some(key))
    {
        return Ok(Some(row.id));
    }
    match store.resolve_run(key) {
        Ok(row) => Ok(Some(row)),
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Where a machine came from, for telling apart two machines with the same
/// host name.
pub enum Origin {
    Stored(i64),
    File(String),
}

/// Machines named by `keys` (files, hosts, runs), or every stored host's
/// latest run when `keys` is empty. `store` is `None` when there is no
/// results database; then only files can be named.
pub fn load_machines(
    store: Option<&Store>,
    keys: &[String],
    files: &FileOptions,
) -> Result<Vec<(RunRecord, Origin)>> {
    let mut out: Vec<(RunRecord, Origin)> = Vec::new();
    if keys.is_empty() {
        let Some(store) = store else {
            bail!("no results database yet; name runs, hosts or files to compare");
        };
        // Every machine, not every host name: two machines that share a
        // name are both compared (label_machines tells them apart).
        let rows = store.latest_run_per_machine(ALIAS_TAG)?;
        for (row, run) in rows.iter().zip(store.load_runs(&rows)?) {
            out.push((run, Origin::Stored(*row)));
        }
        for host in store.hosts()? {
            if !out.iter().any(|(r, _)| r.host_name() == host) {
                eprintln!(
                    "sysgauge: host {host} has no complete run; left out (name one of its runs to include it)"
                );
            }
        }
        return Ok(out);
    }
    for key in keys {
        let path = Path::new(key);
        if path.is_file() {
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| key.clone());
            for run in load_file(path, files)? {
                out.push((run, Origin::File(file.clone())));
            }
            continue;
        }
        let row = match store {
            Some(s) => resolve_stored(s, key)?,
            None => None,
        };
        match (row, store) {
            (Some(row), Some(s)) => out.push((s.load_run(row)?, Origin::Stored(row))),
            _ => bail!("{}", not_found(store, key, "")),
        }
    }
    Ok(out)
}

/// "'X' is not a file, a host or a run …" with the known hosts.
pub fn not_found(store: Option<&Store>, key: &str, what: &str) -> String {
    let hosts = store
        .and_then(|s| s.hosts().ok())
        .filter(|h| !h.is_empty())
        .map(|h| format!(" (hosts: {})", h.join(", ")))
        .unwrap_or_else(|| " (the results database has no runs)".to_string());
    format!("unknown {what}'{key}': not a file, a host or a run in the results database{hosts}")
}

/// What tells `run`'s machine apart from others with its host name among
/// `all`: its fleet alias, else the start of its machine-id (or DMI UUID or
/// serial). `None` when every run of that host name has the same identity
/// (the same machine measured twice) or this run's identity is unknown.
fn machine_key(run: &RunRecord, all: &[(RunRecord, Origin)]) -> Option<String> {
    let host = run.host_name();
    let mut identities = all
        .iter()
        .filter(|(r, _)| r.host_name() == host)
        .map(|(r, _)| &r.host.identity);
    let first = identities.next()?;
    if identities.all(|i| i == first) || run.host.identity.is_empty() {
        return None;
    }
    run.tags
        .get(ALIAS_TAG)
        .cloned()
        .or_else(|| run.host.identity.short())
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
        GroupBy::Group => run
            .tags
            .get(GROUPS_TAG)
            .map(|g| {
                g.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        GroupBy::Cpu => one(run.host.cpu.model.as_ref()),
        GroupBy::Arch => one(run.host.cpu.architecture.as_ref()),
        GroupBy::Tag(k) => one(run.tags.get(k)),
    }
}

/// Give each machine a unique label: its host name; when two share a host
/// name, the host name and what tells the machines apart (fleet alias or
/// machine-id), or the run's origin for the same machine twice; drop the
/// same run named twice.
pub fn label_machines(loaded: Vec<(RunRecord, Origin)>) -> Vec<Machine> {
    let mut unique: Vec<(RunRecord, Origin)> = Vec::new();
    for (run, origin) in loaded {
        if !unique.iter().any(|(r, _)| r.run_id == run.run_id) {
            unique.push((run, origin));
        }
    }
    let count = |h: &str, list: &[(RunRecord, Origin)]| {
        list.iter().filter(|(r, _)| r.host_name() == h).count()
    };
    let mut machines: Vec<Machine> = Vec::new();
    for (run, origin) in &unique {
        let host = run.host_name();
        let mut label = if count(host, &unique) > 1 {
            match machine_key(run, &unique) {
                Some(key) => format!("{host} ({key})"),
                None => match origin {
                    Origin::Stored(row) => format!("{host} (run {row})"),
                    Origin::File(f) => format!("{host} ({f})"),
                },
            }
        } else {
            host.to_string()
        };
        let base = label.clone();
        let mut n = 2;
        while machines.iter().any(|m| m.label == label) {
            label = format!("{base} #{n}");
            n += 1;
        }
        machines.push(Machine {
            label,
            run: run.clone(),
        });
    }
    machines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, host: &str, machine_id: Option<&str>, alias: Option<&str>) -> RunRecord {
        let mut r = RunRecord::new(id, "run", "0");
        r.host.hostname = Some(host.to_string());
        r.host.identity.machine_id = machine_id.map(str::to_string);
        if let Some(a) = alias {
            r.tags.insert(ALIAS_TAG.to_string(), a.to_string());
        }
        r
    }

    fn labels(runs: Vec<RunRecord>) -> Vec<String> {
        let loaded = runs
            .into_iter()
            .enumerate()
            .map(|(i, r)| (r, Origin::Stored(i as i64 + 1)))
            .collect();
        label_machines(loaded)
            .into_iter()
            .map(|m| m.label)
            .collect()
    }

    #[test]
    fn same_host_name_different_machines_are_told_apart() {
        // By alias when the fleet gave one, else by machine-id.
        assert_eq!(
            labels(vec![
                run("a", "pi", Some("1111aaaa2222"), Some("kitchen")),
                run("b", "pi", Some("3333bbbb4444"), Some("garage")),
            ]),
            ["pi (kitchen)", "pi (garage)"]
        );
        assert_eq!(
            labels(vec![
                run("a", "pi", Some("1111aaaa2222"), None),
                run("b", "pi", Some("3333bbbb4444"), None),
                run("c", "nas", Some("5555"), None),
            ]),
            ["pi (1111aaaa)", "pi (3333bbbb)", "nas"]
        );
    }

    #[test]
    fn same_machine_twice_or_unknown_identity_keeps_the_run_number() {
        assert_eq!(
            labels(vec![
                run("a", "pi", Some("1111aaaa"), None),
                run("b", "pi", Some("1111aaaa"), None),
            ]),
            ["pi (run 1)", "pi (run 2)"]
        );
        assert_eq!(
            labels(vec![run("a", "pi", None, None), run("b", "pi", None, None)]),
            ["pi (run 1)", "pi (run 2)"]
        );
    }
}
