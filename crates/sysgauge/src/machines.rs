//! Naming machines on the command line: a machine (fleet alias, host name,
//! machine-id; all of its runs), a run (number, run-id prefix, label,
//! `NAME@RUN`), or a file to read (`crate::importing`). Used by `compare`,
//! `report`, `chart`, `results` and `baseline make`.

pub use crate::importing::{load_file, parse_record_text, FileOptions};
use crate::values::GroupBy;
use anyhow::{bail, Result};
use std::path::Path;
use sysgauge_compare::{user_label, Machine};
use sysgauge_core::host::IdentityInfo;
use sysgauge_core::record::{RunRecord, ALIAS_TAG, GROUPS_TAG};
use sysgauge_store::{MachineRow, Store, StoreError};

/// The one stored run `key` names: a host name first (its latest complete
/// run), then a fleet alias (the same), then a run number or run-id
/// prefix, then a run's label or `NAME@RUN`. `Ok(None)` when nothing
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
        Ok(row) => return Ok(Some(row)),
        Err(StoreError::NotFound(_)) => {}
        Err(e) => return Err(e.into()),
    }
    // A run's label, or NAME@RUN: one run, when that is what it names.
    match resolve_machines(store, key)?.as_deref() {
        Some([m]) if m.pinned => match &m.runs[..] {
            [(_, Origin::Stored(row))] => Ok(Some(*row)),
            _ => bail!(
                "'{key}' names {} runs; name one of them ({})",
                m.runs.len(),
                m.runs
                    .iter()
                    .map(|(_, o)| o.reference())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        _ => Ok(None),
    }
}

/// Where a run came from: a row of the results database or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Stored(i64),
    File(String),
}

impl Origin {
    /// How a user names the run again (`RunSource::reference`).
    pub fn reference(&self) -> String {
        match self {
            Origin::Stored(row) => row.to_string(),
            Origin::File(f) => f.clone(),
        }
    }
}

/// What makes a machine: its identity (machine-id, DMI UUID, serial) and
/// its fleet alias; its host name only when the identity is unknown. Two
/// machines that share a host name (cloned images, a lab of namespaces with
/// inventory names) stay two; a renamed machine stays one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineKey {
    pub identity: IdentityInfo,
    pub host_if_anonymous: Option<String>,
    pub alias: Option<String>,
}

impl MachineKey {
    pub fn new(host: &str, identity: &IdentityInfo, alias: Option<&str>) -> MachineKey {
        MachineKey {
            identity: identity.clone(),
            host_if_anonymous: identity.is_empty().then(|| host.to_string()),
            alias: alias.map(str::to_string),
        }
    }

    pub fn of_row(r: &MachineRow) -> MachineKey {
        MachineKey::new(&r.host, &r.identity, r.alias.as_deref())
    }

    pub fn of_run(r: &RunRecord) -> MachineKey {
        MachineKey::new(
            r.host_name(),
            &r.host.identity,
            r.tags.get(ALIAS_TAG).map(String::as_str),
        )
    }

    /// Neither identity nor alias: only the host name says which machine
    /// (an imported table, a run from a system without a machine-id).
    fn anonymous(&self) -> bool {
        self.identity.is_empty() && self.alias.is_none()
    }

    pub fn describe(&self, host: &str) -> String {
        let mut s = host.to_string();
        if let Some(a) = &self.alias {
            s.push_str(&format!(" (alias {a})"));
        }
        if let Some(id) = self.identity.short() {
            s.push_str(&format!(" (machine {id})"));
        }
        s
    }
}

/// Every machine of the stored complete (and imported) runs, each with its
/// rows newest first and the host name of its newest run. Runs that say
/// nothing of their machine but its host name (imported tables) belong to
/// the one machine of that host name when there is exactly one; else they
/// are a machine of their own.
pub fn stored_machines(rows: &[MachineRow]) -> Vec<(MachineKey, String, Vec<MachineRow>)> {
    let mut machines: Vec<(MachineKey, String, Vec<MachineRow>)> = Vec::new();
    for r in rows {
        let k = MachineKey::of_row(r);
        match machines.iter_mut().find(|(x, _, _)| *x == k) {
            Some((_, _, list)) => list.push(r.clone()),
            None => machines.push((k, r.host.clone(), vec![r.clone()])),
        }
    }
    let mut i = 0;
    while i < machines.len() {
        let (key, host) = (&machines[i].0, &machines[i].1);
        if key.anonymous() {
            let hosts_of =
                |m: &(MachineKey, String, Vec<MachineRow>)| m.2.iter().any(|r| r.host == *host);
            let others: Vec<usize> = (0..machines.len())
                .filter(|&j| j != i && hosts_of(&machines[j]))
                .collect();
            if let [j] = others[..] {
                let moved = machines.remove(i).2;
                let j = if j > i { j - 1 } else { j };
                machines[j].2.extend(moved);
                machines[j]
                    .2
                    .sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.id.cmp(&a.id)));
                continue;
            }
        }
        i += 1;
    }
    machines
}

/// The runs of one machine as named on the command line.
#[derive(Debug, Clone)]
pub struct NamedMachine {
    /// Its runs (at least one), each with where it came from.
    pub runs: Vec<(RunRecord, Origin)>,
    /// One run of the machine was asked for (`NAME@RUN`, a run number or
    /// a label), not the machine as a whole.
    pub pinned: bool,
}

impl NamedMachine {
    fn one(run: RunRecord, origin: Origin) -> NamedMachine {
        NamedMachine {
            runs: vec![(run, origin)],
            pinned: true,
        }
    }

    fn key(&self) -> Option<MachineKey> {
        self.runs.first().map(|(r, _)| MachineKey::of_run(r))
    }

    fn run_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.runs.iter().map(|(r, _)| r.run_id.as_str()).collect();
        ids.sort_unstable();
        ids
    }
}

/// The stored machines `key` names, each as all of its complete runs: a
/// fleet alias, a host name, or the start of a machine-id (8 characters
/// at least). `Ok(None)` when it names none.
fn named_machines(store: &Store, key: &str) -> Result<Option<Vec<NamedMachine>>> {
    let rows = store.machine_rows(ALIAS_TAG)?;
    let machines = stored_machines(&rows);
    let by = |f: &dyn Fn(&MachineKey, &[MachineRow]) -> bool| -> Vec<usize> {
        (0..machines.len())
            .filter(|&i| f(&machines[i].0, &machines[i].2))
            .collect()
    };
    let mut found = by(&|k, _| k.alias.as_deref() == Some(key));
    if found.is_empty() {
        found = by(&|_, rows| rows.iter().any(|r| r.host == key));
    }
    if found.is_empty() && key.len() >= 8 {
        found = by(&|k, _| {
            k.identity
                .machine_id
                .as_deref()
                .is_some_and(|m| m.starts_with(key))
        });
    }
    if found.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for i in found {
        let ids: Vec<i64> = machines[i].2.iter().map(|r| r.id).collect();
        let runs = store.load_runs(&ids)?;
        out.push(NamedMachine {
            runs: runs
                .into_iter()
                .zip(ids)
                .map(|(r, id)| (r, Origin::Stored(id)))
                .collect(),
            pinned: false,
        });
    }
    Ok(Some(out))
}

/// The stored runs whose label the user gave is `label`, one machine
/// per machine they ran on (each pinned to its runs with that label).
fn labelled_machines(store: &Store, label: &str) -> Result<Vec<NamedMachine>> {
    let ids: Vec<i64> = store
        .list_runs()?
        .into_iter()
        .filter(|s| s.label.as_deref().map(str::trim) == Some(label))
        .map(|s| s.id)
        .collect();
    let mut out: Vec<NamedMachine> = Vec::new();
    for (run, id) in store.load_runs(&ids)?.into_iter().zip(ids) {
        if user_label(&run) != Some(label) {
            continue;
        }
        let key = MachineKey::of_run(&run);
        match out.iter_mut().find(|m| m.key().as_ref() == Some(&key)) {
            Some(m) => m.runs.push((run, Origin::Stored(id))),
            None => out.push(NamedMachine {
                runs: vec![(run, Origin::Stored(id))],
                pinned: true,
            }),
        }
    }
    Ok(out)
}

/// What `key` names in the results database: a fleet alias, a host name
/// or a machine-id's start (all of that machine's complete runs), a run's
/// label (those runs), or a run number or run-id prefix (that run);
/// `NAME@RUN` is one run (number, run-id prefix or label) of the machine
/// NAME. `Ok(None)` when nothing matches. A machine whose runs are all
/// partial (running, interrupted, failed) is an error that names its
/// newest run: a partial run compared as "the machine" would mislead, but
/// it can be named explicitly.
pub fn resolve_machines(store: &Store, key: &str) -> Result<Option<Vec<NamedMachine>>> {
    let key = key.trim();
    if let Some((name, run)) = key.rsplit_once('@') {
        let (name, run) = (name.trim(), run.trim());
        if name.is_empty() || run.is_empty() {
            bail!("'{key}': NAME@RUN needs both a machine and one of its runs");
        }
        let Some(machines) = resolve_machines(store, name)? else {
            return Ok(None);
        };
        let candidates: Vec<&(RunRecord, Origin)> =
            machines.iter().flat_map(|m| m.runs.iter()).collect();
        let by_ref = match store.resolve_run(run) {
            Ok(row) => Some(row),
            Err(StoreError::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        let pick = candidates
            .iter()
            .find(|(_, o)| by_ref.is_some_and(|row| *o == Origin::Stored(row)))
            .or_else(|| candidates.iter().find(|(r, _)| user_label(r) == Some(run)));
        let row_only = by_ref.filter(|_| pick.is_none());
        return match (pick, row_only) {
            (Some((r, o)), _) => Ok(Some(vec![NamedMachine::one(r.clone(), o.clone())])),
            // A run of the machine that is not complete (named on purpose).
            (None, Some(row)) => {
                let r = store.load_run(row)?;
                let wanted: Vec<MachineKey> = machines.iter().filter_map(|m| m.key()).collect();
                if !wanted.contains(&MachineKey::of_run(&r)) {
                    bail!(
                        "run {run} is not a run of '{name}' (it ran on {})",
                        r.host_name()
                    );
                }
                Ok(Some(vec![NamedMachine::one(r, Origin::Stored(row))]))
            }
            (None, None) => bail!(
                "'{name}' has no run '{run}' (its runs: {})",
                candidates
                    .iter()
                    .map(|(_, o)| o.reference())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
    }
    if let Some(found) = named_machines(store, key)? {
        return Ok(Some(found));
    }
    if let Some((row, status)) = store.latest_any_run_for_host(key)? {
        bail!(
            "host '{key}' has no complete run (its newest, run {row}, is {}); name the run \
             (`{row}`) to use it anyway",
            status.as_str()
        );
    }
    let labelled = labelled_machines(store, key)?;
    if !labelled.is_empty() {
        return Ok(Some(labelled));
    }
    match store.resolve_run(key) {
        Ok(row) => Ok(Some(vec![NamedMachine::one(
            store.load_run(row)?,
            Origin::Stored(row),
        )])),
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Machines named by `keys` (files, machines, runs), or every stored
/// machine when `keys` is empty. `store` is `None` when there is no
/// results database; then only files can be named. The runs of one file
/// that name the same machine (a pasted block of several tools' outputs)
/// are one machine.
pub fn load_machines(
    store: Option<&Store>,
    keys: &[String],
    files: &FileOptions,
) -> Result<Vec<NamedMachine>> {
    let mut out: Vec<NamedMachine> = Vec::new();
    if keys.is_empty() {
        let Some(store) = store else {
            bail!("no results database yet; name runs, hosts or files to compare");
        };
        let rows = store.machine_rows(ALIAS_TAG)?;
        for (_, _, list) in stored_machines(&rows) {
            let ids: Vec<i64> = list.iter().map(|r| r.id).collect();
            let runs = store.load_runs(&ids)?;
            out.push(NamedMachine {
                runs: runs
                    .into_iter()
                    .zip(ids)
                    .map(|(r, id)| (r, Origin::Stored(id)))
                    .collect(),
                pinned: false,
            });
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
    for key in keys {
        let path = Path::new(key);
        // Anything there but a directory is meant as a file (a FIFO or a
        // device is then refused as what it is); a directory's name may be
        // a host's.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_dir()) {
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| key.clone());
            let mut from_file: Vec<NamedMachine> = Vec::new();
            for run in load_file(path, files)? {
                let key = MachineKey::of_run(&run);
                match from_file
                    .iter_mut()
                    .find(|m| m.key().as_ref() == Some(&key))
                {
                    Some(m) => m.runs.push((run, Origin::File(file.clone()))),
                    None => from_file.push(NamedMachine {
                        runs: vec![(run, Origin::File(file.clone()))],
                        pinned: false,
                    }),
                }
            }
            out.extend(from_file);
            continue;
        }
        let found = match store {
            Some(s) => resolve_machines(s, key)?,
            None => None,
        };
        match found {
            Some(found) => out.extend(found),
            None => bail!("{}", not_found(store, key, "")),
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

/// The name a machine goes by before it is told apart from others: the
/// label the user gave its runs (when they all have the same), then its
/// fleet alias, then its host name.
fn given_name(m: &NamedMachine) -> String {
    let labels: Vec<Option<&str>> = m.runs.iter().map(|(r, _)| user_label(r)).collect();
    if let Some(Some(l)) = labels.first() {
        if labels.iter().all(|x| x == &labels[0]) {
            return l.to_string();
        }
    }
    let newest = newest_run(m);
    newest
        .tags
        .get(ALIAS_TAG)
        .map(|a| a.trim())
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| newest.host_name())
        .to_string()
}

fn newest_run(m: &NamedMachine) -> &RunRecord {
    m.runs
        .iter()
        .map(|(r, _)| r)
        .max_by_key(|r| r.started_at)
        .unwrap_or(&m.runs[0].0)
}

/// Give each machine a unique name: the name the user gave (a run label,
/// then the fleet alias, then the host name). Machines that would show the
/// same name get both names (given name and host name) and what tells
/// them apart: a short machine id, else the run (number or file) for the
/// same machine named twice. The same machine (the same runs) named twice
/// is compared once.
pub fn label_machines(named: Vec<NamedMachine>) -> Vec<Machine> {
    let mut unique: Vec<NamedMachine> = Vec::new();
    for m in named {
        if m.runs.is_empty() {
            continue;
        }
        if !unique.iter().any(|u| u.run_ids() == m.run_ids()) {
            unique.push(m);
        }
    }
    let names: Vec<String> = unique.iter().map(given_name).collect();
    let mut labels: Vec<String> = Vec::new();
    for (i, m) in unique.iter().enumerate() {
        let clash: Vec<usize> = (0..unique.len())
            .filter(|&j| names[j] == names[i])
            .collect();
        let mut label = names[i].clone();
        if clash.len() > 1 {
            let newest = newest_run(m);
            let mut extra: Vec<String> = Vec::new();
            let host = newest.host_name();
            if host != names[i] {
                extra.push(host.to_string());
            }
            let key = MachineKey::of_run(newest);
            let other_machines = clash.iter().any(|&j| {
                unique[j].key().as_ref() != Some(&key)
                    && unique[j].key().is_some_and(|k| k.identity != key.identity)
            });
            let mut told_apart = false;
            if other_machines {
                if let Some(id) = key.identity.short() {
                    extra.push(id);
                    told_apart = true;
                }
            }
            if !told_apart {
                if let Some(a) = key.alias.as_ref().filter(|a| **a != names[i]) {
                    extra.push(a.clone());
                    told_apart = clash
                        .iter()
                        .filter(|&&j| j != i)
                        .all(|&j| unique[j].key().and_then(|k| k.alias) != key.alias);
                }
            }
            if !told_apart {
                if let [(_, origin)] = &m.runs[..] {
                    extra.push(match origin {
                        Origin::Stored(row) => format!("run {row}"),
                        Origin::File(f) => f.clone(),
                    });
                }
            }
            if !extra.is_empty() {
                label = format!("{} ({})", names[i], extra.join(", "));
            }
        }
        let base = label.clone();
        let mut n = 2;
        while labels.contains(&label) {
            label = format!("{base} #{n}");
            n += 1;
        }
        labels.push(label);
    }
    unique
        .into_iter()
        .zip(labels)
        .map(|(m, label)| {
            let runs = m
                .runs
                .into_iter()
                .map(|(r, o)| (r, o.reference()))
                .collect();
            Machine::from_runs(label, runs)
        })
        .collect()
}

/// A stored run's machine row for tests: row `id` started `id` minutes
/// ago (so lower ids are newer, as the store lists them).
#[cfg(test)]
pub(crate) fn test_row(
    id: i64,
    host: &str,
    machine_id: Option<&str>,
    alias: Option<&str>,
) -> MachineRow {
    MachineRow {
        id,
        host: host.into(),
        identity: IdentityInfo {
            machine_id: machine_id.map(str::to_string),
            ..Default::default()
        },
        alias: alias.map(str::to_string),
        started_at: chrono::Utc::now() - chrono::Duration::minutes(id),
    }
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
        let named = runs
            .into_iter()
            .enumerate()
            .map(|(i, r)| NamedMachine::one(r, Origin::Stored(i as i64 + 1)))
            .collect();
        label_machines(named).into_iter().map(|m| m.label).collect()
    }

    fn labelled(mut r: RunRecord, label: &str) -> RunRecord {
        r.label = Some(label.to_string());
        r
    }

    #[test]
    fn names_users_gave_win() {
        // A fleet's inventory names on machines sharing a host name.
        assert_eq!(
            labels(vec![
                run("a", "vm", Some("1111aaaa2222"), Some("h1")),
                run("b", "vm", Some("1111aaaa2222"), Some("h2")),
            ]),
            ["h1", "h2"]
        );
        // Run labels before aliases and host names.
        assert_eq!(
            labels(vec![
                labelled(run("a", "vm", Some("1111aaaa"), None), "A"),
                labelled(run("b", "vm", Some("1111aaaa"), None), "B"),
            ]),
            ["A", "B"]
        );
    }

    #[test]
    fn same_name_different_machines_get_both_names_and_a_short_id() {
        assert_eq!(
            labels(vec![
                run("a", "pi", Some("1111aaaa2222"), None),
                run("b", "pi", Some("3333bbbb4444"), None),
                run("c", "nas", Some("5555"), None),
            ]),
            ["pi (1111aaaa)", "pi (3333bbbb)", "nas"]
        );
        assert_eq!(
            labels(vec![
                labelled(run("a", "pi", Some("1111aaaa2222"), None), "A"),
                labelled(run("b", "nas", Some("3333bbbb4444"), None), "A"),
            ]),
            ["A (pi, 1111aaaa)", "A (nas, 3333bbbb)"]
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

    #[test]
    fn the_same_runs_named_twice_are_one_machine() {
        let m = NamedMachine {
            runs: vec![
                (run("a", "pi", None, None), Origin::Stored(1)),
                (run("b", "pi", None, None), Origin::Stored(2)),
            ],
            pinned: false,
        };
        let machines = label_machines(vec![m.clone(), m]);
        assert_eq!(machines.len(), 1);
        assert_eq!(machines[0].sources.len(), 2);
    }

    use crate::machines::test_row as row;

    #[test]
    fn imported_runs_join_the_one_machine_of_their_host_name() {
        let rows = vec![
            row(1, "vm", Some("aaaa"), None),
            row(2, "vm", None, None),
            row(3, "rpi", None, None),
            row(4, "twin", Some("bbbb"), None),
            row(5, "twin", Some("cccc"), None),
            row(6, "twin", None, None),
        ];
        let m = stored_machines(&rows);
        let ids: Vec<Vec<i64>> = m
            .iter()
            .map(|(_, _, l)| l.iter().map(|r| r.id).collect())
            .collect();
        // twin's import cannot tell which of two machines it was: its own.
        assert_eq!(ids, vec![vec![1, 2], vec![3], vec![4], vec![5], vec![6]]);
    }
}
