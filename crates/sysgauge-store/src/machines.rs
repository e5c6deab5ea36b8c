//! Which stored runs a name selects, for every command and page that
//! compares machines: a machine (fleet alias, host name, machine-id; all of
//! its complete runs), a run (number, run-id prefix, label, `NAME@RUN`).
//! The rule of what a machine is (`MachineKey`) and the labels are
//! `sysgauge_compare::naming`'s; files named on a command line are the
//! binary's.

use crate::{MachineRow, Store, StoreError};
use sysgauge_compare::naming::{goes_by, label_machines, MachineKey, NamedMachine, Origin};
use sysgauge_compare::user_label;
use sysgauge_compare::Machine;
use sysgauge_core::record::{RunRecord, ALIAS_TAG};

/// Why a name selects nothing usable.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What the name selects cannot be used as asked (the message says why).
    #[error("{0}")]
    Named(String),
    /// The reference is neither a compared machine nor stored.
    #[error("unknown reference '{key}'; the compared machines are: {}", compared.join(", "))]
    UnknownReference { key: String, compared: Vec<String> },
}

/// The machines of a comparison, labelled, in comparison order, and the
/// reference's position among them (what `compare --reference` and the
/// site's `ref=` do): `reference` is a compared machine by the name it
/// goes by (its label, fleet alias or host name), else a stored machine or
/// run, which then joins the comparison first. Without a reference the
/// first machine is it, and `named`'s runs move into the machines without
/// a copy.
pub fn with_reference(
    store: Option<&Store>,
    mut named: Vec<NamedMachine>,
    reference: Option<&str>,
) -> Result<(Vec<Machine>, usize), SelectError> {
    let Some(key) = reference.map(str::trim) else {
        return Ok((label_machines(named), 0));
    };
    let machines = label_machines(named.clone());
    // A name several compared machines go by (a host name they share, a
    // label given on two hosts) is no choice: the label as shown is one.
    let going_by: Vec<usize> = (0..machines.len())
        .filter(|&i| goes_by(&machines[i], key))
        .collect();
    match going_by[..] {
        [p] => return Ok((machines, p)),
        [_, _, ..] => {
            if let Some(p) = machines.iter().position(|m| m.label == key) {
                return Ok((machines, p));
            }
            return Err(SelectError::Named(format!(
                "the reference '{key}' names {} of the compared machines: {}; give one of \
                 these labels as --reference",
                going_by.len(),
                going_by
                    .iter()
                    .map(|&i| machines[i].label.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        [] => {}
    }
    let found = match store {
        Some(s) => resolve_machines(s, key)?,
        None => None,
    };
    let found = found.unwrap_or_default();
    if found.len() > 1 {
        return Err(SelectError::Named(format!(
            "the reference '{key}' names {} machines: {}; name one of them (a machine-id's \
             start, NAME@RUN or a run number)",
            found.len(),
            label_machines(found)
                .iter()
                .map(|m| m.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let Some(first) = found.into_iter().next() else {
        return Err(SelectError::UnknownReference {
            key: key.to_string(),
            compared: machines.iter().map(|m| m.label.clone()).collect(),
        });
    };
    let within = machines.iter().position(|m| {
        first
            .runs
            .iter()
            .all(|(r, _)| m.sources.iter().any(|s| s.run_id == r.run_id))
    });
    match within {
        Some(p) => Ok((machines, p)),
        None => {
            named.insert(0, first);
            Ok((label_machines(named), 0))
        }
    }
}

/// "'KEY' names N WHAT: A, B; name one run" for a name that selects
/// several machines where one run is needed.
fn ambiguous(key: &str, what: &str, candidates: &[String]) -> SelectError {
    SelectError::Named(format!(
        "'{key}' names {} {what}: {}; name one run (its number, or NAME@RUN)",
        candidates.len(),
        candidates.join(", ")
    ))
}

/// The machine a stored run's row belongs to.
pub fn key_of_row(r: &MachineRow) -> MachineKey {
    MachineKey::new(&r.host, &r.identity, r.alias.as_deref())
}

/// The one stored run `key` names: a host name first (its latest complete
/// run), then a fleet alias (the same), then a run number or run-id
/// prefix, then a run's label or `NAME@RUN`. `Ok(None)` when nothing
/// matches. A host whose runs are all partial (running, interrupted,
/// failed) is an error that names its newest run: a partial run compared
/// as "the host" would mislead, but it can be named explicitly.
pub fn resolve_stored(store: &Store, key: &str) -> Result<Option<i64>, SelectError> {
    let key = key.trim();
    if let Some(row) = store.latest_run_for_host(key)? {
        // A host name several machines share names none of them alone: its
        // newest run would be any one of them.
        let rows = store.machine_rows(ALIAS_TAG)?;
        let sharing: Vec<String> = stored_machines(&rows)
            .iter()
            .filter(|(_, _, list)| list.iter().any(|r| r.host == key))
            .map(|(k, host, list)| {
                let mut told: Vec<String> = Vec::new();
                if let Some(a) = &k.alias {
                    told.push(format!("alias {a}"));
                }
                if let Some(id) = k.identity.short() {
                    told.push(format!("machine {id}"));
                }
                told.push(format!("newest run {}", list.first().map_or(row, |r| r.id)));
                format!("{host} ({})", told.join(", "))
            })
            .collect();
        if sharing.len() > 1 {
            return Err(ambiguous(key, "machines", &sharing));
        }
        return Ok(Some(row));
    }
    no_complete_run(store, key)?;
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
        Some(several @ [_, _, ..]) => Err(ambiguous(
            key,
            "machines",
            &label_machines(several.to_vec())
                .iter()
                .map(|m| {
                    let runs: Vec<&str> = m.sources.iter().map(|s| s.reference.as_str()).collect();
                    format!("{} (run {})", m.label, runs.join(", "))
                })
                .collect::<Vec<_>>(),
        )),
        Some([m]) if m.pinned => match &m.runs[..] {
            [(_, Origin::Stored(row))] => Ok(Some(*row)),
            _ => Err(SelectError::Named(format!(
                "'{key}' names {} runs; name one of them ({})",
                m.runs.len(),
                m.runs
                    .iter()
                    .map(|(_, o)| o.reference())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        },
        _ => Ok(None),
    }
}

/// A stored machine: its key, the host name of its newest run, its rows
/// newest first.
pub type StoredMachine = (MachineKey, String, Vec<MachineRow>);

/// Every machine of the stored complete (and imported) runs, each with its
/// rows newest first and the host name of its newest run. Runs that say
/// nothing of their machine but its host name (imported tables) belong to
/// the one machine of that host name when there is exactly one; else they
/// are a machine of their own.
pub fn stored_machines(rows: &[MachineRow]) -> Vec<StoredMachine> {
    let mut machines: Vec<StoredMachine> = Vec::new();
    let mut position: std::collections::HashMap<MachineKey, usize> = Default::default();
    for r in rows {
        let k = key_of_row(r);
        match position.get(&k) {
            Some(&i) => machines[i].2.push(r.clone()),
            None => {
                position.insert(k.clone(), machines.len());
                machines.push((k, r.host.clone(), vec![r.clone()]));
            }
        }
    }
    let mut i = 0;
    while i < machines.len() {
        let (key, host) = (&machines[i].0, &machines[i].1);
        if key.anonymous() {
            let hosts_of = |m: &StoredMachine| m.2.iter().any(|r| r.host == *host);
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

/// The positions among `machines` of those `key` names as a machine: a
/// fleet alias, else a host name (of any of their runs), else the start of
/// their id (8 characters at least: the machine-id, else the DMI UUID or
/// serial, whose start tells same-named machines apart in labels).
pub fn machines_named(machines: &[StoredMachine], key: &str) -> Vec<usize> {
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
        found = by(&|k, _| k.identity.stable().is_some_and(|m| m.starts_with(key)));
    }
    found
}

/// A name that selects `machines[i]` and no other machine, for a link or a
/// form to send (a page's labels, such as `vm (3d1219c7)`, are for reading,
/// and name nothing): its fleet alias, else its host name, else the
/// shortest start of its id that only it has. `None` when none of them
/// does (a machine known only by a host name other machines share).
pub fn machine_selector(machines: &[StoredMachine], i: usize) -> Option<String> {
    let (key, host, _) = machines.get(i)?;
    let id = key.identity.stable().unwrap_or_default();
    let starts = (8..=id.len()).filter_map(|n| id.get(..n));
    key.alias
        .as_deref()
        .into_iter()
        .chain(std::iter::once(host.as_str()))
        .chain(starts)
        // As `resolve_machines` reads a name: trimmed, `@` for NAME@RUN.
        .filter(|c| !c.is_empty() && c.trim() == *c && !c.contains('@'))
        .find(|c| machines_named(machines, c) == [i])
        .map(str::to_string)
}

/// An error naming the newest run of host `key` when it has runs but none
/// complete: a partial run compared as "the host" would mislead, but it can
/// be named explicitly.
fn no_complete_run(store: &Store, key: &str) -> Result<(), SelectError> {
    match store.latest_any_run_for_host(key)? {
        Some((row, status)) => Err(SelectError::Named(format!(
            "host '{key}' has no complete run (its newest, run {row}, is {}); name the run \
             (`{row}`) to use it anyway",
            status.as_str()
        ))),
        None => Ok(()),
    }
}

/// The stored runs whose label the user gave is `label`, one machine
/// per machine they ran on (each pinned to its runs with that label).
pub fn labelled_machines(store: &Store, label: &str) -> Result<Vec<NamedMachine>, SelectError> {
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

/// The stored machines, listed once for every name resolved against them
/// (a comparison names many machines; listing them per name was most of
/// the cost of resolving ten names over 500 machines).
pub struct Resolver<'a> {
    store: &'a Store,
    listing: std::cell::OnceCell<Vec<StoredMachine>>,
}

impl<'a> Resolver<'a> {
    pub fn new(store: &'a Store) -> Self {
        Resolver {
            store,
            listing: std::cell::OnceCell::new(),
        }
    }

    fn listing(&self) -> Result<&[StoredMachine], SelectError> {
        if let Some(l) = self.listing.get() {
            return Ok(l);
        }
        let machines = stored_machines(&self.store.machine_rows(ALIAS_TAG)?);
        Ok(self.listing.get_or_init(|| machines))
    }

    /// The stored machines `key` names, each as all of its complete runs
    /// (`machines_named`). `Ok(None)` when it names none.
    pub fn named_machines(&self, key: &str) -> Result<Option<Vec<NamedMachine>>, SelectError> {
        let machines = self.listing()?;
        let store = self.store;
        let found = machines_named(machines, key);
        if found.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::new();
        for i in found {
            let ids: Vec<i64> = machines[i].2.iter().map(|r| r.id).collect();
            let runs = store.load_runs(&ids)?;
            out.push(NamedMachine::stored(runs, ids));
        }
        Ok(Some(out))
    }

    /// The stored runs of `machines` (whose keys are `wanted`) that are not
    /// among their complete runs (running, interrupted, failed), newest
    /// first, without their results: a machine named as a whole leaves
    /// them out, but `NAME@RUN` may name one.
    fn partial_runs(
        &self,
        machines: &[NamedMachine],
        wanted: &[MachineKey],
    ) -> Result<Vec<(i64, RunRecord)>, SelectError> {
        let hosts: std::collections::HashSet<&str> = machines
            .iter()
            .flat_map(|m| m.runs.iter().map(|(r, _)| r.host_name()))
            .collect();
        let taken: std::collections::HashSet<i64> = machines
            .iter()
            .flat_map(|m| m.runs.iter())
            .filter_map(|(_, o)| match o {
                Origin::Stored(row) => Some(*row),
                Origin::File(_) => None,
            })
            .collect();
        let ids: Vec<i64> = self
            .store
            .list_runs()?
            .into_iter()
            .filter(|s| hosts.contains(s.host.as_str()) && !taken.contains(&s.id))
            .map(|s| s.id)
            .collect();
        let heads = self.store.load_run_heads(&ids)?;
        Ok(ids
            .into_iter()
            .zip(heads)
            .filter(|(_, r)| wanted.contains(&MachineKey::of_run(r)))
            .collect())
    }

    /// What `key` names in the results database: a fleet alias, a host name
    /// or a machine-id's start (all of that machine's complete runs), a run's
    /// label (those runs), or a run number or run-id prefix (that run);
    /// `NAME@RUN` is one run (number, run-id prefix or label) of the machine
    /// NAME. `Ok(None)` when nothing matches. A machine whose runs are all
    /// partial (running, interrupted, failed) is an error that names its
    /// newest run: a partial run compared as "the machine" would mislead, but
    /// it can be named explicitly.
    pub fn resolve_machines(&self, key: &str) -> Result<Option<Vec<NamedMachine>>, SelectError> {
        let store = self.store;
        let key = key.trim();
        if let Some((name, run)) = key.rsplit_once('@') {
            let (name, run) = (name.trim(), run.trim());
            if name.is_empty() || run.is_empty() {
                return Err(SelectError::Named(format!(
                    "'{key}': NAME@RUN needs both a machine and one of its runs"
                )));
            }
            let Some(machines) = self.resolve_machines(name)? else {
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
            if let Some((r, o)) = pick {
                return Ok(Some(vec![NamedMachine::one(r.clone(), o.clone())]));
            }
            let wanted: Vec<MachineKey> = machines.iter().filter_map(|m| m.key()).collect();
            // A run of the machine that is not complete, named on purpose
            // by its number, run-id prefix or label alike.
            if let Some(row) = by_ref {
                let r = store.load_run(row)?;
                if !wanted.contains(&MachineKey::of_run(&r)) {
                    return Err(SelectError::Named(format!(
                        "run {run} is not a run of '{name}' (it ran on {})",
                        r.host_name()
                    )));
                }
                return Ok(Some(vec![NamedMachine::one(r, Origin::Stored(row))]));
            }
            let partial = self.partial_runs(&machines, &wanted)?;
            if let Some((row, _)) = partial.iter().find(|(_, r)| user_label(r) == Some(run)) {
                return Ok(Some(vec![NamedMachine::one(
                    store.load_run(*row)?,
                    Origin::Stored(*row),
                )]));
            }
            let mut known: Vec<String> = candidates.iter().map(|(_, o)| o.reference()).collect();
            known.extend(
                partial
                    .iter()
                    .map(|(row, r)| format!("{row} ({})", r.status.as_str())),
            );
            return Err(SelectError::Named(format!(
                "'{name}' has no run '{run}' (its runs: {})",
                known.join(", ")
            )));
        }
        if let Some(found) = self.named_machines(key)? {
            return Ok(Some(found));
        }
        no_complete_run(store, key)?;
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
}

/// `Resolver::named_machines` for one name.
pub fn named_machines(store: &Store, key: &str) -> Result<Option<Vec<NamedMachine>>, SelectError> {
    Resolver::new(store).named_machines(key)
}

/// `Resolver::resolve_machines` for one name.
pub fn resolve_machines(
    store: &Store,
    key: &str,
) -> Result<Option<Vec<NamedMachine>>, SelectError> {
    Resolver::new(store).resolve_machines(key)
}

/// A stored run's machine row for tests: row `id` started `id` minutes
/// ago (so lower ids are newer, as the store lists them).
pub fn test_row(id: i64, host: &str, machine_id: Option<&str>, alias: Option<&str>) -> MachineRow {
    MachineRow {
        id,
        host: host.into(),
        identity: sysgauge_core::host::IdentityInfo {
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
    use test_row as row;

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

    /// Each machine's selector names it alone: the alias, a host name of
    /// its own, else the shortest start of its id another id does not
    /// share; nothing for an import that shares its host name.
    #[test]
    fn selectors_name_one_machine_each() {
        let rows = vec![
            row(1, "vm", Some("3d1219c7aaaa"), None),
            row(2, "vm", Some("3d1219c7bbbb"), None),
            row(3, "vm", Some("1111aaaa0000"), None),
            row(4, "rpi", None, None),
            row(5, "lab", Some("cccc"), Some("kitchen")),
            row(6, "twin", Some("dddd"), None),
            row(7, "twin", Some("eeee"), None),
            row(8, "twin", None, None),
        ];
        let m = stored_machines(&rows);
        let selectors: Vec<Option<String>> =
            (0..m.len()).map(|i| machine_selector(&m, i)).collect();
        let want = [
            Some("3d1219c7a"),
            Some("3d1219c7b"),
            Some("1111aaaa"),
            Some("rpi"),
            Some("kitchen"),
            None,
            None,
            None,
        ];
        assert_eq!(selectors, want.map(|s| s.map(str::to_string)));
        for (i, s) in selectors.iter().enumerate() {
            if let Some(s) = s {
                assert_eq!(machines_named(&m, s), [i], "{s}");
            }
        }
    }
}
