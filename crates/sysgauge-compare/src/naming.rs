//! Naming compared machines: what makes a machine (`MachineKey`), the
//! runs of one machine as a command or a page names them
//! (`NamedMachine`), and the labels they go by in a comparison
//! (`label_machines`). Pure: which stored runs are named is the store's
//! side (`sysgauge_store::machines`), files are the binary's.

use crate::{user_label, Machine};
use sysgauge_core::host::IdentityInfo;
use sysgauge_core::record::{RunRecord, ALIAS_TAG};

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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

    pub fn of_run(r: &RunRecord) -> MachineKey {
        MachineKey::new(
            r.host_name(),
            &r.host.identity,
            r.tags.get(ALIAS_TAG).map(String::as_str),
        )
    }

    /// Neither identity nor alias: only the host name says which machine
    /// (an imported table, a run from a system without a machine-id).
    pub fn anonymous(&self) -> bool {
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

/// The runs of one machine as named on the command line.
#[derive(Debug, Clone)]
pub struct NamedMachine {
    /// Its runs (at least one), each with where it came from.
    pub runs: Vec<(RunRecord, Origin)>,
    /// One run of the machine was asked for (`NAME@RUN`, a run number or
    /// a label) or a file's runs, not the machine as a whole.
    pub pinned: bool,
}

impl NamedMachine {
    pub fn one(run: RunRecord, origin: Origin) -> NamedMachine {
        NamedMachine {
            runs: vec![(run, origin)],
            pinned: true,
        }
    }

    /// A whole machine of stored runs (`runs` loaded from the rows `ids`,
    /// in that order).
    pub fn stored(runs: Vec<RunRecord>, ids: Vec<i64>) -> NamedMachine {
        NamedMachine {
            runs: runs
                .into_iter()
                .zip(ids)
                .map(|(r, id)| (r, Origin::Stored(id)))
                .collect(),
            pinned: false,
        }
    }

    /// The machine the runs are of: the key of the first run that knows
    /// more than its host name (an imported table that joined the machine
    /// knows only that), else the first run's.
    pub fn key(&self) -> Option<MachineKey> {
        let mut keys = self.runs.iter().map(|(r, _)| MachineKey::of_run(r));
        let first = keys.next()?;
        if !first.anonymous() {
            return Some(first);
        }
        Some(keys.find(|k| !k.anonymous()).unwrap_or(first))
    }

    pub fn run_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.runs.iter().map(|(r, _)| r.run_id.as_str()).collect();
        ids.sort_unstable();
        ids
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

/// The start of `key`'s machine id (8 characters at least, as
/// `IdentityInfo::short`) that none of `others` shares: machines cloned
/// from one image with ids alike still read apart.
fn telling_id(key: &MachineKey, others: &[MachineKey]) -> Option<String> {
    let id = key.identity.stable()?;
    let chars: Vec<char> = id.chars().collect();
    let mut len = 8.min(chars.len());
    let start = |len: usize| chars[..len].iter().collect::<String>();
    while len < chars.len()
        && others
            .iter()
            .filter(|o| o.identity != key.identity)
            .any(|o| {
                o.identity
                    .stable()
                    .is_some_and(|x| x.starts_with(&start(len)))
            })
    {
        len += 1;
    }
    Some(start(len))
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
/// is compared once. A run named on its own (`pi4@12`, or a file holding
/// it) is set apart from its machine named as a whole (`pi4`): that
/// machine is then the rest of its runs, so the run is never compared with
/// itself.
pub fn label_machines(mut named: Vec<NamedMachine>) -> Vec<Machine> {
    let set_apart: std::collections::HashSet<String> = named
        .iter()
        .filter(|m| m.pinned)
        .flat_map(|m| m.runs.iter().map(|(r, _)| r.run_id.clone()))
        .collect();
    for m in named.iter_mut().filter(|m| !m.pinned) {
        m.runs.retain(|(r, _)| !set_apart.contains(&r.run_id));
    }
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
            let key = m.key().unwrap_or_else(|| MachineKey::of_run(newest));
            let other_machines = clash.iter().any(|&j| {
                unique[j].key().as_ref() != Some(&key)
                    && unique[j].key().is_some_and(|k| k.identity != key.identity)
            });
            let mut told_apart = false;
            if other_machines {
                let others: Vec<MachineKey> = clash
                    .iter()
                    .filter(|&&j| j != i)
                    .filter_map(|&j| unique[j].key())
                    .collect();
                if let Some(id) = telling_id(&key, &others) {
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

/// Whether `m` goes by `key`: its label in the comparison, the label a
/// user gave its runs, its fleet alias, its host name, or the file its
/// runs were read from (how `--reference` and `ref=` pick the reference
/// among the compared machines).
pub fn goes_by(m: &Machine, key: &str) -> bool {
    m.label == key
        || m.run.host_name() == key
        || m.run.tags.get(ALIAS_TAG).is_some_and(|a| a == key)
        || m.sources
            .iter()
            .any(|s| s.label.as_deref() == Some(key) || s.reference == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::record::ALIAS_TAG;

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
        // Ids alike at the start (machines cloned from one image, a lab's
        // numbered ids): as much of each id as tells them apart.
        assert_eq!(
            labels(vec![
                run("a", "twin", Some("0000000000000001"), None),
                run("b", "twin", Some("0000000000000002"), None),
                run("c", "twin", Some("00000000000000020"), None),
            ]),
            [
                "twin (0000000000000001)",
                "twin (0000000000000002)",
                "twin (00000000000000020)"
            ]
        );
    }

    #[test]
    fn a_run_named_beside_its_machine_is_not_compared_with_itself() {
        let id = Some("1111aaaa");
        let whole = NamedMachine::stored(
            vec![run("a", "pi", id, None), run("b", "pi", id, None)],
            vec![1, 2],
        );
        let one = NamedMachine::one(run("a", "pi", id, None), Origin::Stored(1));
        let machines = label_machines(vec![one, whole]);
        let ids: Vec<Vec<&str>> = machines
            .iter()
            .map(|m| m.sources.iter().map(|s| s.run_id.as_str()).collect())
            .collect();
        assert_eq!(ids, [vec!["a"], vec!["b"]]);
        // A machine that is only the run named is left out: nothing is
        // left of it to compare with.
        let whole = NamedMachine::stored(vec![run("a", "pi", id, None)], vec![1]);
        let one = NamedMachine::one(run("a", "pi", id, None), Origin::Stored(1));
        assert_eq!(label_machines(vec![one, whole]).len(), 1);
    }

    #[test]
    fn a_run_set_apart_is_named_by_its_run_not_as_another_machine() {
        // The machine's newest run is an import that knows only the host
        // name (it joined the one machine of that name): the pinned run is
        // still the same machine, told apart by its run.
        let id = Some("1111aaaa");
        let mut import = run("i", "pi", None, None);
        import.started_at += chrono::Duration::minutes(5);
        let whole = NamedMachine::stored(
            vec![import, run("a", "pi", id, None), run("b", "pi", id, None)],
            vec![3, 1, 2],
        );
        let one = NamedMachine::one(run("a", "pi", id, None), Origin::Stored(1));
        let labels: Vec<String> = label_machines(vec![one, whole])
            .into_iter()
            .map(|m| m.label)
            .collect();
        assert_eq!(labels, ["pi (run 1)", "pi"]);
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
}
