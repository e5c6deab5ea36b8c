//! `sysgauge results history NAME`: one machine's runs over time, each with
//! its index against the embedded baseline (overall and per family) and the
//! change from the run before, so a machine that got slower (a firmware
//! update, a failing disk, a new kernel) shows where and when.
//!
//! NAME is a host name, a fleet alias or the start of a machine-id. The
//! machine is found by its identity, not its name: runs under another host
//! name with the same machine-id (a renamed machine) belong to its history,
//! and two machines that share a host name are told apart (the command then
//! asks which one).

use crate::exit::Exit;
use crate::machines::MachineKey;
use crate::output;
use anyhow::{bail, Result};
use serde::Serialize;
use sysgauge_compare::IndexReport;
use sysgauge_core::record::ALIAS_TAG;
use sysgauge_report::{Table, TableFormat};
use sysgauge_store::{MachineRow, Store};

/// One run of the history.
#[derive(Debug, Serialize)]
struct HistoryEntry {
    id: i64,
    run_id: String,
    started_at: String,
    host: String,
    profile: String,
    label: Option<String>,
    /// Against the embedded baseline's run of the same profile; null when
    /// there is none (imported runs of other tools).
    index: Option<IndexReport>,
    /// Overall index divided by the previous run's of the same profile,
    /// minus 1.
    change: Option<f64>,
    /// The two runs' overall 95 % intervals do not overlap.
    significant: bool,
}

/// The rows of the machine `name` names (oldest first), or why not.
fn machine_history(rows: &[MachineRow], name: &str) -> Result<Vec<MachineRow>> {
    let name = name.trim();
    let named = |r: &MachineRow| {
        r.host == name
            || r.alias.as_deref() == Some(name)
            || (name.len() >= 8
                && r.identity
                    .machine_id
                    .as_deref()
                    .is_some_and(|m| m.starts_with(name)))
    };
    let mut keys: Vec<(MachineKey, String)> = Vec::new();
    for r in rows.iter().filter(|r| named(r)) {
        let k = MachineKey::of_row(r);
        if !keys.iter().any(|(x, _)| *x == k) {
            keys.push((k, r.host.clone()));
        }
    }
    match keys.len() {
        0 => {
            let mut hosts: Vec<&str> = rows.iter().map(|r| r.host.as_str()).collect();
            hosts.sort();
            hosts.dedup();
            bail!(
                "no complete run of a machine named '{name}' (host name, fleet alias or machine-id prefix){}",
                if hosts.is_empty() {
                    String::new()
                } else {
                    format!("; hosts: {}", hosts.join(", "))
                }
            )
        }
        1 => {}
        _ => bail!(
            "'{name}' names {} machines: {}; give the fleet alias or the machine-id's start",
            keys.len(),
            keys.iter()
                .map(|(k, h)| k.describe(h))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
    let key = &keys[0].0;
    let mut runs: Vec<MachineRow> = rows
        .iter()
        .filter(|r| MachineKey::of_row(r) == *key)
        .cloned()
        .collect();
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
    Ok(runs)
}

pub fn run(store: &Store, name: &str, json: bool) -> Result<Exit> {
    let rows = store.machine_rows(ALIAS_TAG)?;
    let history = machine_history(&rows, name)?;
    let mut entries: Vec<HistoryEntry> = Vec::new();
    for r in &history {
        let run = store.load_run(r.id)?;
        let index = sysgauge_registry::baseline::index(&run)
            .ok()
            .filter(|ix| ix.overall.index.is_some());
        let previous = entries
            .iter()
            .rev()
            .find(|e| e.profile == run.profile.to_string() && e.index.is_some());
        let (change, significant) = match (previous.and_then(|p| p.index.as_ref()), &index) {
            (Some(p), Some(ix)) => {
                let change = match (p.overall.index, ix.overall.index) {
                    (Some(a), Some(b)) if a > 0.0 => Some(b / a - 1.0),
                    _ => None,
                };
                let apart = match (p.overall.interval, ix.overall.interval) {
                    (Some(a), Some(b)) => a.high < b.low || b.high < a.low,
                    _ => false,
                };
                (change, apart)
            }
            _ => (None, false),
        };
        entries.push(HistoryEntry {
            id: r.id,
            run_id: run.run_id.clone(),
            started_at: run.started_at.to_rfc3339(),
            host: r.host.clone(),
            profile: run.profile.to_string(),
            label: run.label.clone(),
            index,
            change,
            significant,
        });
    }
    if json {
        output::stdout(&(serde_json::to_string_pretty(&entries)? + "\n"))?;
    } else {
        output::stdout(&history_table(&entries))?;
    }
    Ok(Exit::Ok)
}

fn history_table(entries: &[HistoryEntry]) -> String {
    let mut families: Vec<String> = Vec::new();
    for e in entries {
        for l in e.index.iter().flat_map(|ix| &ix.families) {
            if !families.contains(&l.family) {
                families.push(l.family.clone());
            }
        }
    }
    let mut spec = String::from(
        ">run, started (UTC), host, profile, label, >overall, >95 % interval, >change",
    );
    for f in &families {
        spec.push_str(&format!(", >{f}"));
    }
    let mut t = Table::columns(&spec);
    let shown = |s: &str| sysgauge_core::text::for_terminal(s).into_owned();
    for e in entries {
        let overall = e.index.as_ref().and_then(|ix| ix.overall.index);
        let mut row = vec![
            e.id.to_string(),
            e.started_at
                .get(..16)
                .unwrap_or(&e.started_at)
                .replace('T', " "),
            shown(&e.host),
            e.profile.clone(),
            shown(e.label.as_deref().unwrap_or("")),
            overall
                .map(|v| format!("{v:.0}"))
                .unwrap_or_else(|| "-".into()),
            e.index
                .as_ref()
                .and_then(|ix| ix.overall.interval)
                .map(|i| format!("{:.0}-{:.0}", i.low, i.high))
                .unwrap_or_else(|| "-".into()),
            e.change
                .map(|c| {
                    format!(
                        "{:+.1} %{}",
                        c * 100.0,
                        if e.significant { " *" } else { "" }
                    )
                })
                .unwrap_or_else(|| "-".into()),
        ];
        for f in &families {
            row.push(
                e.index
                    .as_ref()
                    .and_then(|ix| ix.families.iter().find(|l| &l.family == f))
                    .and_then(|l| l.index)
                    .map(|v| format!("{v:.0}"))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        t.push(row);
    }
    let mut text = t.render(TableFormat::Text);
    text.push_str(
        "Index: 1000 = the embedded baseline's machine (same profile). change: the overall index against the previous run of the same profile; * when their 95 % intervals do not overlap.\n",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::machines::test_row as row;

    fn ids(r: Result<Vec<MachineRow>>) -> Vec<i64> {
        r.unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| r.id)
            .collect()
    }

    #[test]
    fn a_renamed_machine_keeps_its_history() {
        let rows = vec![
            row(1, "new-name", Some("aaaa1111bbbb"), None),
            row(2, "other", Some("cccc"), None),
            row(3, "old-name", Some("aaaa1111bbbb"), None),
        ];
        // Oldest first, under either name or the machine-id's start.
        assert_eq!(ids(machine_history(&rows, "new-name")), [3, 1]);
        assert_eq!(ids(machine_history(&rows, "old-name")), [3, 1]);
        assert_eq!(ids(machine_history(&rows, "aaaa1111")), [3, 1]);
        assert_eq!(ids(machine_history(&rows, "other")), [2]);
        let err = machine_history(&rows, "nobody").unwrap_err().to_string();
        assert!(err.contains("hosts: new-name, old-name, other"), "{err}");
    }

    #[test]
    fn two_machines_with_one_name_are_not_merged() {
        let rows = vec![
            row(1, "twin", Some("aaaa"), Some("left")),
            row(2, "twin", Some("bbbb"), Some("right")),
            row(3, "twin", Some("aaaa"), Some("left")),
            row(4, "plain", None, None),
            row(5, "plain", None, None),
        ];
        let err = machine_history(&rows, "twin").unwrap_err().to_string();
        assert!(
            err.contains("'twin' names 2 machines: twin (alias left) (machine aaaa), twin (alias right) (machine bbbb)"),
            "{err}"
        );
        assert_eq!(ids(machine_history(&rows, "left")), [3, 1]);
        assert_eq!(ids(machine_history(&rows, "right")), [2]);
        // Without an identity the host name stands for the machine.
        assert_eq!(ids(machine_history(&rows, "plain")), [5, 4]);
    }
}
