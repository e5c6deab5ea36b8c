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
    /// Per family: what the run's results say about the machine while it
    /// ran, for the repeatability verdict (not in the JSON).
    #[serde(skip)]
    evidence: Vec<(String, Evidence)>,
}

/// A family index that moves more than this (max/min) between a machine's
/// runs of one profile does not repeat there.
pub const UNSTABLE_SPREAD: f64 = 1.04;
/// The verdict looks at this many of the latest runs of a profile.
const REPEAT_RUNS: usize = 10;
/// ... and needs at least this many.
const REPEAT_MIN_RUNS: usize = 3;

/// What one run's results of a family say about the machine as it ran.
#[derive(Debug, Clone, Default, PartialEq)]
struct Evidence {
    /// Results marked disturbed (other processes, steal, throttling …).
    disturbed: usize,
    results: usize,
    /// Median of the results' capacity probe readings (share of the run's
    /// best), when they have one.
    capacity: Option<f64>,
}

fn evidence_of(run: &sysgauge_core::record::RunRecord) -> Vec<(String, Evidence)> {
    let mut by_family: Vec<(String, Evidence, Vec<f64>)> = Vec::new();
    for r in run
        .results
        .iter()
        .filter(|r| matches!(r.status, sysgauge_core::record::Status::Ok))
    {
        let i = match by_family.iter().position(|(f, _, _)| *f == r.family) {
            Some(i) => i,
            None => {
                by_family.push((r.family.clone(), Evidence::default(), Vec::new()));
                by_family.len() - 1
            }
        };
        let (_, e, caps) = &mut by_family[i];
        e.results += 1;
        if r.disturbed().is_some() {
            e.disturbed += 1;
        }
        if let Some(c) = r.details.get_str("capacity").and_then(|v| v.parse().ok()) {
            caps.push(c);
        }
    }
    by_family
        .into_iter()
        .map(|(f, mut e, mut caps)| {
            caps.sort_by(f64::total_cmp);
            e.capacity = (!caps.is_empty()).then(|| caps[caps.len() / 2]);
            (f, e)
        })
        .collect()
}

/// One family's verdict over a machine's runs of one profile.
#[derive(Debug, Clone, PartialEq)]
struct Repeat {
    profile: String,
    family: String,
    runs: usize,
    min: f64,
    max: f64,
    /// The likely cause when it does not repeat.
    cause: Option<String>,
}

/// Does each family's index repeat over the machine's latest runs of each
/// profile (at least [`REPEAT_MIN_RUNS`])? A family that moved more than
/// [`UNSTABLE_SPREAD`] is unstable there, with the likely cause from what
/// its results recorded: disturbed results (other processes, steal), the
/// capacity probe's family median moving with it (another guest on the
/// core), or none seen.
fn repeatability(entries: &[HistoryEntry]) -> Vec<Repeat> {
    let mut profiles: Vec<&str> = Vec::new();
    for e in entries {
        if !profiles.contains(&e.profile.as_str()) {
            profiles.push(&e.profile);
        }
    }
    let mut out = Vec::new();
    for p in profiles {
        let runs: Vec<&HistoryEntry> = entries
            .iter()
            .filter(|e| e.profile == p && e.index.is_some())
            .collect();
        let runs = &runs[runs.len().saturating_sub(REPEAT_RUNS)..];
        if runs.len() < REPEAT_MIN_RUNS {
            continue;
        }
        let mut families: Vec<&str> = Vec::new();
        for e in runs {
            for l in e.index.iter().flat_map(|ix| &ix.families) {
                if !families.contains(&l.family.as_str()) {
                    families.push(&l.family);
                }
            }
        }
        for f in families {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|e| {
                    e.index
                        .as_ref()?
                        .families
                        .iter()
                        .find(|l| l.family == f)?
                        .index
                })
                .collect();
            if values.len() < REPEAT_MIN_RUNS {
                continue;
            }
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(0.0, f64::max);
            let stable = min > 0.0 && max / min <= UNSTABLE_SPREAD;
            let evidence: Vec<&Evidence> = runs
                .iter()
                .filter_map(|e| e.evidence.iter().find(|(g, _)| g == f).map(|(_, ev)| ev))
                .collect();
            let cause = (!stable).then(|| unstable_cause(&evidence));
            out.push(Repeat {
                profile: p.to_string(),
                family: f.to_string(),
                runs: values.len(),
                min,
                max,
                cause,
            });
        }
    }
    out
}

/// The likely cause of a family's moving index, from its runs' evidence.
fn unstable_cause(evidence: &[&Evidence]) -> String {
    let disturbed_runs = evidence.iter().filter(|e| e.disturbed > 0).count();
    let caps: Vec<f64> = evidence.iter().filter_map(|e| e.capacity).collect();
    let cap_low = caps.iter().copied().fold(f64::INFINITY, f64::min);
    let cap_high = caps.iter().copied().fold(0.0, f64::max);
    let mut causes = Vec::new();
    if disturbed_runs > 0 {
        causes.push(format!(
            "results disturbed in {disturbed_runs} of {} runs (other processes, steal or throttling: see `results show`)",
            evidence.len()
        ));
    }
    if caps.len() >= 2 && cap_high - cap_low > 0.05 {
        causes.push(format!(
            "the capacity probe's median moved {:.2}-{:.2} of each run's best (another guest sharing the cores: docs/repeatability.md)",
            cap_low, cap_high
        ));
    }
    if causes.is_empty() {
        "none seen (no disturbed result, a steady capacity probe): the host's other guests or the method".into()
    } else {
        causes.join("; ")
    }
}

fn repeatability_text(repeats: &[Repeat]) -> String {
    if repeats.is_empty() {
        return String::new();
    }
    let mut t = Table::columns("profile, family, >runs, >min, >max, >max/min, verdict");
    for r in repeats {
        t.push(vec![
            r.profile.clone(),
            r.family.clone(),
            r.runs.to_string(),
            format!("{:.0}", r.min),
            format!("{:.0}", r.max),
            if r.min > 0.0 {
                format!("{:.3}", r.max / r.min)
            } else {
                "-".into()
            },
            match &r.cause {
                None => "repeats".into(),
                Some(c) => format!("unstable here: {c}"),
            },
        ]);
    }
    format!(
        "\nDoes each family repeat on this machine? (its latest {REPEAT_RUNS} runs of a profile, at least {REPEAT_MIN_RUNS}; unstable above {:.0} % between runs)\n{}",
        (UNSTABLE_SPREAD - 1.0) * 100.0,
        t.render(TableFormat::Text)
    )
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
        let k = crate::machines::key_of_row(r);
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
            "'{name}' names {} machines: {}; {}",
            keys.len(),
            keys.iter()
                .map(|(k, h)| k.describe(h))
                .collect::<Vec<_>>()
                .join(", "),
            // The alias itself is what is ambiguous (a machine reinstalled
            // under the same alias): only the machine-id tells them apart.
            if rows.iter().any(|r| r.alias.as_deref() == Some(name)) {
                "give the machine-id's start (at least 8 characters)"
            } else {
                "give the fleet alias or the machine-id's start (at least 8 characters)"
            }
        ),
    }
    let key = &keys[0].0;
    let mut runs: Vec<MachineRow> = rows
        .iter()
        .filter(|r| crate::machines::key_of_row(r) == *key)
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
            evidence: evidence_of(&run),
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
    text.push_str(&repeatability_text(&repeatability(entries)));
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

    fn entry(
        profile: &str,
        families: &[(&str, f64)],
        evidence: &[(&str, Evidence)],
    ) -> HistoryEntry {
        let line = |f: &str, v: f64| sysgauge_compare::IndexLine {
            family: f.to_string(),
            index: Some(v),
            interval: None,
            cases: 1,
            unmatched: 0,
            left_out: Vec::new(),
            disturbed: 0,
            reference_disturbed: 0,
        };
        HistoryEntry {
            id: 1,
            run_id: "r".into(),
            started_at: "2026-11-28T00:00:00Z".into(),
            host: "h".into(),
            profile: profile.into(),
            label: None,
            index: Some(IndexReport {
                families: families.iter().map(|(f, v)| line(f, *v)).collect(),
                overall: line("overall", 1000.0),
            }),
            change: None,
            significant: false,
            evidence: evidence
                .iter()
                .map(|(f, e)| (f.to_string(), e.clone()))
                .collect(),
        }
    }

    fn ev(disturbed: usize, capacity: f64) -> Evidence {
        Evidence {
            disturbed,
            results: 4,
            capacity: Some(capacity),
        }
    }

    #[test]
    fn a_family_that_moves_between_runs_is_unstable_with_its_cause() {
        let entries = vec![
            entry(
                "quick",
                &[("hash", 1000.0), ("cpu", 1000.0), ("mem", 1000.0)],
                &[("cpu", ev(0, 0.97)), ("mem", ev(1, 0.95))],
            ),
            entry(
                "quick",
                &[("hash", 1010.0), ("cpu", 1200.0), ("mem", 1100.0)],
                &[("cpu", ev(0, 0.88)), ("mem", ev(0, 0.95))],
            ),
            entry(
                "quick",
                &[("hash", 1020.0), ("cpu", 1100.0), ("mem", 1000.0)],
                &[("cpu", ev(0, 0.90)), ("mem", ev(0, 0.96))],
            ),
            // Two standard runs: too few for a verdict.
            entry("standard", &[("cpu", 900.0)], &[]),
            entry("standard", &[("cpu", 1300.0)], &[]),
        ];
        let r = repeatability(&entries);
        assert_eq!(r.len(), 3, "{r:?}");
        let of = |f: &str| r.iter().find(|x| x.family == f).unwrap();
        assert_eq!(of("hash").cause, None);
        assert_eq!(
            (of("hash").runs, of("hash").min, of("hash").max),
            (3, 1000.0, 1020.0)
        );
        let cpu = of("cpu").cause.clone().unwrap_or_default();
        assert!(
            cpu.contains("capacity probe's median moved 0.88-0.97"),
            "{cpu}"
        );
        assert!(!cpu.contains("disturbed"), "{cpu}");
        let mem = of("mem").cause.clone().unwrap_or_default();
        assert!(mem.contains("disturbed in 1 of 3 runs"), "{mem}");
        assert!(!mem.contains("capacity"), "{mem}");
        let text = repeatability_text(&r);
        assert!(text.contains("repeats"), "{text}");
        assert!(text.contains("unstable here"), "{text}");
        // Nothing recorded that explains it.
        let quiet = [ev(0, 0.95), ev(0, 0.96)];
        let none = unstable_cause(&quiet.iter().collect::<Vec<_>>());
        assert!(none.starts_with("none seen"), "{none}");
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

    /// An alias on two machines (one reinstalled): the hint once asked for
    /// the fleet alias, which is what was given.
    #[test]
    fn an_ambiguous_alias_asks_for_the_machine_id() {
        let rows = vec![
            row(1, "labbox", Some("1111aaaa1111"), Some("alpha")),
            row(2, "labbox", Some("5555eeee5555"), Some("alpha")),
        ];
        let err = machine_history(&rows, "alpha").unwrap_err().to_string();
        assert!(
            err.ends_with("; give the machine-id's start (at least 8 characters)"),
            "{err}"
        );
        let err = machine_history(&rows, "labbox").unwrap_err().to_string();
        assert!(
            err.contains("give the fleet alias or the machine-id's start"),
            "{err}"
        );
    }
}
