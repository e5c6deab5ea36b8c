//! What both backends share: the SQL that reads (written once, with `?N`
//! placeholders that the PostgreSQL backend turns into `$N`), and the
//! decoding of the rows it returns into records. Each backend only fetches
//! rows; a stored run therefore reads back the same from SQLite and from
//! PostgreSQL.
//!
//! Timestamps are RFC 3339 text in both (the same logical schema; in
//! PostgreSQL the ordered text columns use the "C" collation, so they sort
//! byte-wise as in SQLite).

use crate::{MachineRow, Result, RunSummary, StoreError};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::path::Path;
use sysgauge_core::record::{
    BuildInfo, Finding, Metric, Params, Profile, ResultRecord, RunRecord, RunStatus, Status,
};
use sysgauge_core::{Better, HostInfo, Summary, Unit};

pub(crate) const LIST_RUNS: &str =
    "SELECT r.id, r.run_uuid, r.started_at, r.finished_at, r.status, r.command,
            r.host_name, r.profile, r.label, r.source,
            (SELECT count(*) FROM results x WHERE x.run_id = r.id),
            (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'failed')
     FROM runs r ORDER BY r.started_at DESC, r.id DESC";
pub(crate) const RUN_BY_ID: &str = "SELECT id FROM runs WHERE id = ?1";
pub(crate) const RUNS_BY_UUID_PREFIX: &str =
    "SELECT id FROM runs WHERE run_uuid LIKE CAST(?1 AS TEXT) || '%'";
pub(crate) const LATEST_COMPLETE: &str =
    "SELECT id FROM runs WHERE host_name = ?1 AND status IN ('complete', 'imported')
     ORDER BY started_at DESC, id DESC LIMIT 1";
pub(crate) const LATEST_ANY: &str =
    "SELECT id, status FROM runs WHERE host_name = ?1 ORDER BY started_at DESC, id DESC LIMIT 1";
pub(crate) const HOSTS: &str =
    "SELECT host_name FROM runs GROUP BY host_name ORDER BY max(started_at) DESC";
/// What identifies the machine of every complete run, newest first.
pub(crate) const MACHINE_ROWS: &str =
    "SELECT id, host_name, host_json, tags_json, started_at FROM runs
     WHERE status IN ('complete', 'imported')
     ORDER BY started_at DESC, id DESC";
pub(crate) const LOAD_RUN: &str =
    "SELECT run_uuid, schema_version, command, status, started_at, finished_at,
            tool_version, build_json, host_json, profile, label, tags_json, findings_json
     FROM runs WHERE id = ?1";
pub(crate) const LOAD_RESULTS: &str =
    "SELECT id, bench_id, family, workload_version, params_json, status_json,
            started_at, duration_seconds, findings_json, details_json
     FROM results WHERE run_id = ?1 ORDER BY seq";
/// Every metric of a run in one query (not one per result: a comparison
/// loads whole runs, and a round trip per result is what made it slow).
pub(crate) const LOAD_METRICS: &str = "SELECT m.result_id, m.name, m.unit, m.better, m.samples_json
     FROM metrics m JOIN results x ON x.id = m.result_id
     WHERE x.run_id = ?1 ORDER BY x.seq, m.seq";
/// Many runs in three queries (PostgreSQL, where a round trip per run
/// would dominate a fleet comparison): the columns of the one-run queries,
/// then the run's row id.
pub(crate) const LOAD_RUNS_ANY: &str =
    "SELECT run_uuid, schema_version, command, status, started_at, finished_at,
            tool_version, build_json, host_json, profile, label, tags_json, findings_json, id
     FROM runs WHERE id = ANY(?1)";
pub(crate) const LOAD_RESULTS_ANY: &str =
    "SELECT id, bench_id, family, workload_version, params_json, status_json,
            started_at, duration_seconds, findings_json, details_json, run_id
     FROM results WHERE run_id = ANY(?1) ORDER BY run_id, seq";
/// The metrics of the results whose row ids are ?1.
pub(crate) const LOAD_METRICS_ANY: &str =
    "SELECT m.result_id, m.name, m.unit, m.better, m.samples_json
     FROM metrics m WHERE m.result_id = ANY(?1) ORDER BY m.result_id, m.seq";
pub(crate) const DELETE_RUN: &str = "DELETE FROM runs WHERE id = ?1";
pub(crate) const RUNNING_RUNS: &str =
    "SELECT id, pid, boot_id FROM runs WHERE status = 'running' AND pid IS NOT NULL";
pub(crate) const MARK_INTERRUPTED: &str = "UPDATE runs SET status = 'interrupted' WHERE id = ?1";
pub(crate) const SET_WRITER: &str = "UPDATE runs SET pid = ?1, boot_id = ?2 WHERE id = ?3";
pub(crate) const FINISH_RUN: &str =
    "UPDATE runs SET status = ?1, finished_at = ?2, findings_json = ?3, host_json = ?4 WHERE id = ?5";
pub(crate) const FIND_UUID: &str = "SELECT id FROM runs WHERE run_uuid = ?1";
/// What completing a stored run from its record compares: its status, and
/// its results' positions and cases in order.
pub(crate) const RUN_STATUS: &str = "SELECT status FROM runs WHERE id = ?1";
pub(crate) const STORED_CASES: &str =
    "SELECT seq, bench_id, params_key FROM results WHERE run_id = ?1 ORDER BY seq";
/// The header of a run completed from its record.
pub(crate) const COMPLETE_RUN: &str =
    "UPDATE runs SET status = ?1, finished_at = ?2, tags_json = ?3, findings_json = ?4 WHERE id = ?5";

/// Where a stored copy of `run` stands against the record itself: `None`
/// when there is nothing to complete (the copy is whole, differs from the
/// record, or is a run still being measured), else the index of the
/// record's first result the copy lacks (its length when only the header
/// lags: a run whose database failed as it ended). `stored` is the copy's
/// results as (seq, bench id, params key) in seq order.
///
/// A run that lost its database mid-run holds the record's first results,
/// in the record's order (the runner stores each as it finishes); anything
/// else is another run's data under the same id and is left alone.
fn completion(status: &str, stored: &[(i64, String, String)], run: &RunRecord) -> Option<usize> {
    if status == "running" || stored.len() > run.results.len() {
        return None;
    }
    let same_prefix = stored.iter().enumerate().all(|(k, (seq, id, key))| {
        let r = &run.results[k];
        *seq == k as i64 && *id == r.bench_id && *key == r.params.canonical()
    });
    let lacking = stored.len() < run.results.len() || status != run.status.as_str();
    (same_prefix && lacking).then_some(stored.len())
}

/// The tags of a run completed from its record: the record's, and
/// `completed_from` saying by what (`import`, `fleet`, `sync`), so the
/// run says it was not stored as it was measured.
fn completed_tags(run: &RunRecord, source: &str) -> String {
    let mut tags = run.tags.clone();
    tags.insert(crate::COMPLETED_FROM.to_string(), source.to_string());
    to_json(&tags)
}

/// A stored run's results as (seq, bench id, params key), in seq order.
pub(crate) type StoredCases = Vec<(i64, String, String)>;

/// A backend's transaction as completing a stored run uses it: the same
/// statements in both (`RUN_STATUS`, `STORED_CASES`, the result inserts,
/// `COMPLETE_RUN`); only how each backend runs them differs.
pub(crate) trait CompletingTx {
    type Error;
    /// The stored run's status and its results.
    fn stored(&mut self, id: i64) -> std::result::Result<(String, StoredCases), Self::Error>;
    fn insert_result(
        &mut self,
        id: i64,
        seq: usize,
        r: &ResultRecord,
    ) -> std::result::Result<(), Self::Error>;
    /// `COMPLETE_RUN` for `id` with the record's values and `tags`.
    fn complete_header(
        &mut self,
        id: i64,
        v: &RunValues,
        tags: &str,
    ) -> std::result::Result<(), Self::Error>;
}

/// Add to the stored run `id` what its record `run` has and it lacks
/// (`completion`), or leave it alone. Result by result: a completion adds
/// the few a failed database missed.
pub(crate) fn complete_run<T: CompletingTx>(
    mut tx: T,
    id: i64,
    run: &RunRecord,
    source: &str,
) -> std::result::Result<crate::Inserted, T::Error> {
    let (status, stored) = tx.stored(id)?;
    let Some(from) = completion(&status, &stored, run) else {
        return Ok(crate::Inserted::AlreadyPresent(id));
    };
    for (i, r) in run.results.iter().enumerate().skip(from) {
        tx.insert_result(id, i, r)?;
    }
    tx.complete_header(id, &RunValues::of(run), &completed_tags(run, source))?;
    Ok(crate::Inserted::Completed {
        row: id,
        added: run.results.len() - from,
    })
}
/// Insert a run header unless its run id is there (then no row comes back).
pub(crate) const INSERT_RUN: &str =
    "INSERT INTO runs (run_uuid, schema_version, command, status, started_at, finished_at,
                       tool_version, build_json, host_name, host_json, profile, label,
                       tags_json, findings_json, source)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
     ON CONFLICT (run_uuid) DO NOTHING RETURNING id";
pub(crate) const RESULT_COLUMNS: &str = "run_id, seq, bench_id, family, workload_version, \
     params_json, params_key, details_json, status, status_json, started_at, duration_seconds, \
     findings_json";
pub(crate) const METRIC_COLUMNS: &str =
    "result_id, seq, name, unit, better, samples_json, n, median, min, max, mean, stddev, cov, mad";

/// The `?N` placeholders as PostgreSQL spells them (`$N`); no statement
/// here has a `?` anywhere else.
pub(crate) fn dollar(sql: &str) -> String {
    sql.replace('?', "$")
}

/// One column value as a backend returns it; each backend implements this
/// for its row type so that decoding is written once.
pub(crate) trait Row {
    fn int(&self, i: usize) -> std::result::Result<i64, String>;
    fn real(&self, i: usize) -> std::result::Result<f64, String>;
    fn text(&self, i: usize) -> std::result::Result<String, String>;
    fn opt_text(&self, i: usize) -> std::result::Result<Option<String>, String>;
}

/// `Row` for a backend's row type whose typed column getter is `$get`
/// (`rusqlite::Row::get`, `postgres::Row::try_get`): the four methods
/// differ only in the type asked for.
macro_rules! impl_row {
    ($row:ty, $get:ident) => {
        impl $crate::rows::Row for $row {
            fn int(&self, i: usize) -> std::result::Result<i64, String> {
                self.$get(i).map_err(|e| e.to_string())
            }
            fn real(&self, i: usize) -> std::result::Result<f64, String> {
                self.$get(i).map_err(|e| e.to_string())
            }
            fn text(&self, i: usize) -> std::result::Result<String, String> {
                self.$get(i).map_err(|e| e.to_string())
            }
            fn opt_text(&self, i: usize) -> std::result::Result<Option<String>, String> {
                self.$get(i).map_err(|e| e.to_string())
            }
        }
    };
}
pub(crate) use impl_row;

/// Decoding rows read from the database at `path` (named in errors).
pub(crate) struct Decoder<'a> {
    pub path: &'a Path,
}

impl Decoder<'_> {
    pub fn corrupt(&self, what: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.path.to_path_buf(),
            what: what.to_string(),
        }
    }

    fn col<T>(&self, v: std::result::Result<T, String>) -> Result<T> {
        v.map_err(|e| self.corrupt(format!("unexpected column: {e}")))
    }

    pub fn int(&self, r: &impl Row, i: usize) -> Result<i64> {
        self.col(r.int(i))
    }

    pub fn text(&self, r: &impl Row, i: usize) -> Result<String> {
        self.col(r.text(i))
    }

    pub fn opt_text(&self, r: &impl Row, i: usize) -> Result<Option<String>> {
        self.col(r.opt_text(i))
    }

    pub fn time(&self, s: &str) -> Result<DateTime<Utc>> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| self.corrupt("timestamp"))
    }

    /// Column `i`, an RFC 3339 timestamp.
    pub fn time_at(&self, r: &impl Row, i: usize) -> Result<DateTime<Utc>> {
        self.time(&self.text(r, i)?)
    }

    /// Column `i`, an RFC 3339 timestamp or NULL.
    pub fn opt_time_at(&self, r: &impl Row, i: usize) -> Result<Option<DateTime<Utc>>> {
        self.opt_text(r, i)?.map(|t| self.time(&t)).transpose()
    }

    pub fn json<T: serde::de::DeserializeOwned>(&self, s: &str, what: &str) -> Result<T> {
        serde_json::from_str(s).map_err(|e| self.corrupt(format!("{what}: {e}")))
    }

    /// A row of `MACHINE_ROWS`, the fleet alias taken from tag `alias_tag`.
    pub fn machine_row(&self, r: &impl Row, alias_tag: &str) -> Result<MachineRow> {
        let id = self.int(r, 0)?;
        let host: HostInfo = self.json(&self.text(r, 2)?, &format!("host facts of run {id}"))?;
        let mut tags: std::collections::BTreeMap<String, String> =
            self.json(&self.text(r, 3)?, &format!("tags of run {id}"))?;
        Ok(MachineRow {
            id,
            host: self.text(r, 1)?,
            identity: host.identity,
            alias: tags.remove(alias_tag),
            started_at: self.time_at(r, 4)?,
        })
    }

    pub fn status(&self, s: &str) -> Result<RunStatus> {
        RunStatus::parse(s).ok_or_else(|| self.corrupt("run status"))
    }

    /// A row of `LIST_RUNS`.
    pub fn summary(&self, r: &impl Row) -> Result<RunSummary> {
        Ok(RunSummary {
            id: self.col(r.int(0))?,
            run_uuid: self.col(r.text(1))?,
            started_at: self.time_at(r, 2)?,
            finished_at: self.opt_time_at(r, 3)?,
            status: self.status(&self.col(r.text(4))?)?,
            command: self.col(r.text(5))?,
            host: self.col(r.text(6))?,
            profile: self.col(r.text(7))?,
            label: self.col(r.opt_text(8))?,
            source: self.col(r.text(9))?,
            results: self.col(r.int(10))?,
            failed: self.col(r.int(11))?,
        })
    }

    /// A row of `LOAD_RUN`: the run without its results.
    pub fn run(&self, r: &impl Row) -> Result<RunRecord> {
        let profile: Profile = self.json(&format!("\"{}\"", self.col(r.text(9))?), "profile")?;
        Ok(RunRecord {
            schema_version: u32::try_from(self.col(r.int(1))?)
                .map_err(|_| self.corrupt("schema version"))?,
            run_id: self.col(r.text(0))?,
            started_at: self.time_at(r, 4)?,
            finished_at: self.opt_time_at(r, 5)?,
            status: self.status(&self.col(r.text(3))?)?,
            command: self.col(r.text(2))?,
            tool_version: self.col(r.text(6))?,
            build: self.json::<BuildInfo>(&self.col(r.text(7))?, "build info")?,
            host: self.json::<HostInfo>(&self.col(r.text(8))?, "host facts")?,
            profile,
            label: self.col(r.opt_text(10))?,
            tags: self.json(&self.col(r.text(11))?, "tags")?,
            findings: self.json(&self.col(r.text(12))?, "findings")?,
            results: Vec::new(),
        })
    }

    /// A row of `LOAD_RESULTS`: the result's row id and the result
    /// without its metrics.
    pub fn result(&self, r: &impl Row) -> Result<(i64, ResultRecord)> {
        let findings: Vec<Finding> = self.json(&self.col(r.text(8))?, "findings")?;
        Ok((
            self.col(r.int(0))?,
            ResultRecord {
                bench_id: self.col(r.text(1))?,
                family: self.col(r.text(2))?,
                workload_version: u32::try_from(self.col(r.int(3))?)
                    .map_err(|_| self.corrupt("workload version"))?,
                params: self.json::<Params>(&self.col(r.text(4))?, "parameters")?,
                details: self.json::<Params>(&self.col(r.text(9))?, "details")?,
                status: self.json::<Status>(&self.col(r.text(5))?, "status")?,
                started_at: self.time_at(r, 6)?,
                duration_seconds: self.col(r.real(7))?,
                metrics: Vec::new(),
                findings,
            },
        ))
    }

    /// A row of `LOAD_METRICS`: the result row id it belongs to and the
    /// metric, its summary recomputed from the raw samples.
    pub fn metric(&self, r: &impl Row) -> Result<(i64, Metric)> {
        let samples: Vec<f64> = self.json(&self.col(r.text(4))?, "samples")?;
        let summary =
            Summary::from_samples(&samples).ok_or_else(|| self.corrupt("metric samples"))?;
        Ok((
            self.col(r.int(0))?,
            Metric {
                name: self.col(r.text(1))?,
                unit: Unit::from(self.col(r.text(2))?),
                better: Better::parse(&self.col(r.text(3))?)
                    .ok_or_else(|| self.corrupt("metric direction"))?,
                samples,
                summary,
            },
        ))
    }
}

/// A run put together from its header, its results (with their row ids)
/// and its metrics (with the row id of their result), in stored order.
pub(crate) fn assemble(
    mut run: RunRecord,
    results: Vec<(i64, ResultRecord)>,
    metrics: Vec<(i64, Metric)>,
) -> RunRecord {
    let mut by_result: HashMap<i64, Vec<Metric>> = HashMap::new();
    for (rid, m) in metrics {
        by_result.entry(rid).or_default().push(m);
    }
    run.results = results
        .into_iter()
        .map(|(rid, mut r)| {
            r.metrics = by_result.remove(&rid).unwrap_or_default();
            r
        })
        .collect();
    run
}

/// How a `?N` parameter list is laid out for `INSERT_RUN`: the same values
/// in the same order for both backends.
pub(crate) struct RunValues {
    pub run_uuid: String,
    pub schema_version: i64,
    pub command: String,
    pub status: &'static str,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub tool_version: String,
    pub build_json: String,
    pub host_name: String,
    pub host_json: String,
    pub profile: &'static str,
    pub label: Option<String>,
    pub tags_json: String,
    pub findings_json: String,
}

impl RunValues {
    pub fn of(run: &RunRecord) -> RunValues {
        RunValues {
            run_uuid: run.run_id.clone(),
            schema_version: i64::from(run.schema_version),
            command: run.command.clone(),
            status: run.status.as_str(),
            started_at: run.started_at.to_rfc3339(),
            finished_at: run.finished_at.map(|t| t.to_rfc3339()),
            tool_version: run.tool_version.clone(),
            build_json: to_json(&run.build),
            host_name: run.host_name().to_string(),
            host_json: to_json(&run.host),
            profile: run.profile.as_str(),
            label: run.label.clone(),
            tags_json: to_json(&run.tags),
            findings_json: to_json(&run.findings),
        }
    }
}

/// A result's columns after `run_id` and `seq` (`RESULT_COLUMNS`), as text
/// where the schema stores text.
pub(crate) struct ResultValues {
    pub bench_id: String,
    pub family: String,
    pub workload_version: i64,
    pub params_json: String,
    pub params_key: String,
    pub details_json: String,
    pub status: &'static str,
    pub status_json: String,
    pub started_at: String,
    pub duration_seconds: f64,
    pub findings_json: String,
}

impl ResultValues {
    pub fn of(r: &ResultRecord) -> ResultValues {
        ResultValues {
            bench_id: r.bench_id.clone(),
            family: r.family.clone(),
            workload_version: i64::from(r.workload_version),
            params_json: to_json(&r.params),
            params_key: r.params.canonical(),
            details_json: to_json(&r.details),
            status: r.status.label(),
            status_json: to_json(&r.status),
            started_at: r.started_at.to_rfc3339(),
            duration_seconds: r.duration_seconds,
            findings_json: to_json(&r.findings),
        }
    }
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> String {
    // Serialising our own plain data structs cannot fail (no maps with
    // non-string keys, no NaN: metrics refuse non-finite samples).
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

/// A sequence number as stored.
pub(crate) fn seq(i: usize) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}
