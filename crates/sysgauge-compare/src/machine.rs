//! A machine in a comparison: every result stored for it, whatever run or
//! file it came from, with the run each result came from named.
//!
//! A machine measured by `run` one day, by `net --icmp` the next, and given
//! three imported files is one machine with one set of cases: per case (id,
//! params, workload version) its newest finished result across all of its
//! runs. Comparing only its newest run would drop the rest without a word.
//! A failed or skipped case never hides an older measured one, and every
//! case keeps the run it came from, so a table can say which numbers are
//! from which day.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use sysgauge_core::record::{RunRecord, RunStatus};

/// One run a machine's results came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSource {
    /// How a user names the run again: its row number in the results
    /// database, or the file it was read from.
    pub reference: String,
    pub run_id: String,
    /// RFC 3339 start time of the run.
    pub started_at: String,
    /// What made it: `run`, `crypto`, …, or `imported (nbench)`.
    pub kind: String,
    /// The label the user gave the run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Results of this run that the machine uses.
    pub cases: usize,
    /// The run's status when it did not finish (`running`, `interrupted`,
    /// `failed`: such a run is used only when named itself), so that its
    /// numbers are not read as a whole run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// One machine: its results (one record standing for all of its runs) and
/// the name it goes by in the comparison.
#[derive(Debug, Clone)]
pub struct Machine {
    pub label: String,
    /// The machine's results, one per case. For a machine of one run this
    /// is that run; for several, the newest run's header with the newest
    /// finished result of every case of every run.
    pub run: RunRecord,
    /// The runs the results came from, newest first.
    pub sources: Vec<RunSource>,
    /// For each of `run.results`, its run in `sources`.
    pub result_source: Vec<usize>,
}

/// The label a user gave `run`, if any: the labels `import` writes itself
/// ("imported from FILE (FORMAT)") name a file, not a machine.
pub fn user_label(run: &RunRecord) -> Option<&str> {
    let label = run.label.as_deref()?.trim();
    if label.is_empty()
        || (run.status == RunStatus::Imported && label.starts_with("imported from "))
    {
        return None;
    }
    Some(label)
}

/// What made `run`, as a person reads it: the command and its profile,
/// or for runs `import` made of other tools' outputs `imported (TOOLS)`,
/// never a sysgauge profile they did not have.
pub fn run_kind(run: &RunRecord) -> String {
    if run.status == RunStatus::Imported && run.command == "import" {
        run.profile_shown()
    } else {
        format!("{} ({})", run.command, run.profile)
    }
}

impl RunSource {
    /// The source entry of `run`, named `reference`.
    pub fn of(run: &RunRecord, reference: &str) -> RunSource {
        RunSource {
            reference: reference.to_string(),
            run_id: run.run_id.clone(),
            started_at: run.started_at.to_rfc3339(),
            kind: run_kind(run),
            label: user_label(run).map(str::to_string),
            cases: run.results.len(),
            status: (!matches!(run.status, RunStatus::Complete | RunStatus::Imported))
                .then(|| run.status.as_str().to_string()),
        }
    }
}

/// What makes two results the same case of one machine.
fn case_of(r: &sysgauge_core::record::ResultRecord) -> (String, String, u32) {
    (r.bench_id.clone(), r.params.canonical(), r.workload_version)
}

impl Machine {
    /// A machine of exactly one run (named by its run id's first 8
    /// characters until the caller knows better).
    pub fn new(label: impl Into<String>, run: RunRecord) -> Machine {
        let short: String = run.run_id.chars().take(8).collect();
        Machine::from_runs(label, vec![(run, short)])
    }

    /// A machine of all of `runs` (each with how a user names it): per
    /// case its newest finished result; a case that never finished keeps
    /// its newest attempt, so the failure still shows. Results keep the
    /// order they first appear in, oldest run first, so the cases of a
    /// machine's big run stay in their family order.
    pub fn from_runs(label: impl Into<String>, mut runs: Vec<(RunRecord, String)>) -> Machine {
        // Newest first; the order given breaks ties.
        let mut order: Vec<usize> = (0..runs.len()).collect();
        order.sort_by(|&a, &b| runs[b].0.started_at.cmp(&runs[a].0.started_at));
        let mut sorted: Vec<(RunRecord, String)> = Vec::with_capacity(runs.len());
        let mut taken: Vec<Option<(RunRecord, String)>> = runs.drain(..).map(Some).collect();
        for i in order {
            if let Some(r) = taken[i].take() {
                sorted.push(r);
            }
        }
        let mut sources: Vec<RunSource> = sorted
            .iter()
            .map(|(run, reference)| RunSource::of(run, reference))
            .collect();
        for s in &mut sources {
            s.cases = 0;
        }
        let mut results = Vec::new();
        let mut result_source: Vec<usize> = Vec::new();
        let mut index: HashMap<(String, String, u32), usize> = HashMap::new();
        // The results are moved, not copied: a machine of one run holds
        // its results once.
        for (si, (run, _)) in sorted.iter_mut().enumerate().rev() {
            for r in std::mem::take(&mut run.results) {
                let key = case_of(&r);
                match index.get(&key) {
                    // A newer run's finished result replaces an older one; a
                    // newer failure does not hide an older measurement.
                    Some(&at) => {
                        if r.is_ok() || !results_ok(&results, at) {
                            results[at] = r;
                            result_source[at] = si;
                        }
                    }
                    None => {
                        index.insert(key, results.len());
                        results.push(r);
                        result_source.push(si);
                    }
                }
            }
        }
        for &s in &result_source {
            sources[s].cases += 1;
        }
        let mut merged = sorted
            .first()
            .map(|(r, _)| r.clone())
            .unwrap_or_else(|| RunRecord::new("", "", ""));
        if sorted.len() > 1 {
            // Host facts: the newest run that knows the CPU (an imported
            // table may know nothing of its machine).
            if let Some((r, _)) = sorted.iter().find(|(r, _)| r.host.cpu.model.is_some()) {
                merged.host = r.host.clone();
            }
            let labels: Vec<Option<&str>> = sorted.iter().map(|(r, _)| user_label(r)).collect();
            merged.label = if labels.iter().all(|l| *l == labels[0]) {
                labels[0].map(str::to_string)
            } else {
                None
            };
            for (r, _) in sorted.iter().skip(1) {
                for f in &r.findings {
                    if !merged.findings.contains(f) {
                        merged.findings.push(f.clone());
                    }
                }
            }
        }
        merged.results = results;
        Machine {
            label: label.into(),
            run: merged,
            sources,
            result_source,
        }
    }

    /// The run result `i` of `run.results` came from.
    pub fn source_of(&self, i: usize) -> Option<&RunSource> {
        self.sources.get(*self.result_source.get(i)?)
    }
}

fn results_ok(results: &[sysgauge_core::record::ResultRecord], at: usize) -> bool {
    results.get(at).is_some_and(|r| r.is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{run_with, throughput};
    use sysgauge_core::record::Status;

    fn at(mut r: RunRecord, secs: i64) -> RunRecord {
        r.started_at = chrono::DateTime::from_timestamp(1_700_000_000 + secs, 0)
            .unwrap_or_else(chrono::Utc::now);
        r
    }

    #[test]
    fn every_case_of_every_run_newest_wins() {
        let old = at(
            run_with(
                "old",
                None,
                vec![
                    throughput("beta.sha256", &[100.0]),
                    throughput("beta.md5", &[50.0]),
                ],
            ),
            0,
        );
        let new = at(
            run_with("new", None, vec![throughput("beta.sha256", &[120.0])]),
            60,
        );
        let m = Machine::from_runs("pi", vec![(new, "2".into()), (old, "1".into())]);
        let ids: Vec<&str> = m.run.results.iter().map(|r| r.bench_id.as_str()).collect();
        assert_eq!(ids, ["beta.sha256", "beta.md5"]);
        assert_eq!(m.run.results[0].metrics[0].value(), 120.0);
        assert_eq!(m.source_of(0).map(|s| s.reference.as_str()), Some("2"));
        assert_eq!(m.source_of(1).map(|s| s.reference.as_str()), Some("1"));
        assert_eq!(m.sources[0].reference, "2", "newest first");
        assert_eq!((m.sources[0].cases, m.sources[1].cases), (1, 1));
        assert_eq!(m.run.run_id, "run-new");
    }

    #[test]
    fn a_newer_failure_does_not_hide_an_older_measurement() {
        let old = at(
            run_with("old", None, vec![throughput("beta.sha256", &[100.0])]),
            0,
        );
        let mut failed = throughput("beta.sha256", &[1.0]);
        failed.status = Status::Failed {
            error: "boom".into(),
        };
        failed.metrics.clear();
        let new = at(run_with("new", None, vec![failed]), 60);
        let m = Machine::from_runs("pi", vec![(old, "1".into()), (new, "2".into())]);
        assert_eq!(m.run.results.len(), 1);
        assert!(m.run.results[0].is_ok());
        assert_eq!(m.source_of(0).map(|s| s.reference.as_str()), Some("1"));
    }

    #[test]
    fn imported_labels_are_not_names_and_kinds_say_imported() {
        let mut r = run_with("x", None, vec![]);
        r.status = RunStatus::Imported;
        r.command = "import".into();
        r.label = Some("imported from a.txt (nbench)".into());
        r.tags.insert("format".into(), "nbench".into());
        assert_eq!(user_label(&r), None);
        assert_eq!(run_kind(&r), "imported (nbench)");
        r.label = Some("A".into());
        assert_eq!(user_label(&r), Some("A"));
    }
}
