//! The results database: every run, its results and their raw samples, in
//! one SQLite file.
//!
//! All SQL of sysgauge lives in this crate. Choices:
//! - append-only migrations keyed by `PRAGMA user_version`; a database from a
//!   newer sysgauge is refused, never "upgraded down";
//! - `PRAGMA application_id` marks the file as ours, so pointing `--db` at some
//!   other SQLite file is refused before anything is written to it;
//! - WAL journal with `synchronous=FULL`: readers never block the running
//!   benchmark, and a committed result survives a crash or power loss;
//! - every write transaction is `BEGIN IMMEDIATE`: it takes the write lock
//!   before reading, so concurrent writers wait for each other through the
//!   busy timeout instead of failing with "database is locked" when a read
//!   lock cannot be upgraded; migrations re-read the schema version inside
//!   that transaction, so two processes creating one database both succeed;
//! - `--db` must be a regular file or a new path (see `dbpath`), and the
//!   read-only commands open with `open_read_only`, which never creates;
//! - a run row records its writer's pid and boot id; opening for writing
//!   marks `running` runs of dead writers `interrupted` (see `liveness`);
//! - one transaction per finished result, so an interrupted run keeps what
//!   it finished;
//! - raw samples stored as JSON arrays next to their summary, so statistics
//!   can be recomputed and comparisons can bootstrap.

#![forbid(unsafe_code)]

mod dbpath;
mod liveness;
mod migrations;
mod sink;

pub use sink::StoreSink;

use chrono::{DateTime, Utc};
use rusqlite::{
    params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};
use std::path::{Path, PathBuf};
use sysgauge_core::record::{
    BuildInfo, Finding, Metric, Params, Profile, ResultRecord, RunRecord, RunStatus, Status,
};
use sysgauge_core::{Better, HostInfo, Summary, Unit};
use thiserror::Error;

/// Marks a SQLite file as a sysgauge database ("SGDB").
pub const APPLICATION_ID: i32 = 0x5347_4442;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot open the results database {path}: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error(
        "refusing to use {path} as the results database: {reason}; pass --db with a file path"
    )]
    Refused { path: PathBuf, reason: String },
    #[error("no results database at {path}")]
    Missing { path: PathBuf },
    #[error("the results database {path} was written by a newer sysgauge (schema {found}, this version knows up to {supported}); upgrade sysgauge or pass --db with another file")]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("{path} is not a sysgauge results database; pass --db with another file")]
    Foreign { path: PathBuf },
    #[error("results database {path}: {context}: {source}")]
    Sqlite {
        path: PathBuf,
        context: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("results database {path}: stored data is damaged ({what})")]
    Corrupt { path: PathBuf, what: String },
    #[error("no run '{0}' in the results database (see `sysgauge results list`)")]
    NotFound(String),
    #[error("'{key}' matches several runs ({matches}); give more of the id")]
    Ambiguous { key: String, matches: usize },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// One line of `results list`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub run_uuid: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub status: RunStatus,
    pub command: String,
    pub host: String,
    pub profile: String,
    pub label: Option<String>,
    pub source: String,
    pub results: i64,
    pub failed: i64,
}

/// A stored run and what identifies its machine (`Store::machine_rows`).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineRow {
    pub id: i64,
    pub host: String,
    pub identity: sysgauge_core::host::IdentityInfo,
    pub alias: Option<String>,
    pub started_at: DateTime<Utc>,
}

/// What `insert_run` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    New(i64),
    /// The run (same run id) was already there; nothing was written.
    AlreadyPresent(i64),
}

/// How long a writer waits for another one to finish (the busy timeout).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Runs found `running` with a dead writer and marked interrupted when
    /// this store was opened.
    stale: Vec<i64>,
}

impl Store {
    /// Open for writing (creating if needed) the database at `path`: a
    /// regular file, or a new path in an existing directory; anything else is
    /// refused before SQLite touches it. Runs left `running` by writers that
    /// died are marked interrupted (see `stale_runs`).
    pub fn open(path: &Path) -> Result<Store> {
        dbpath::check(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let mut store = Self::init(conn, path.to_path_buf())?;
        store.stale = store.mark_stale_runs()?;
        Ok(store)
    }

    /// Open an existing database for reading only (`results list`,
    /// `compare`, `report`…): never creates a file, never migrates, never
    /// marks stale runs. A missing file is `StoreError::Missing`.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        // Nothing there (not even a dangling link), whether or not its
        // directory exists: simply no database yet.
        let absent = matches!(std::fs::symlink_metadata(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        if absent || dbpath::check(path)? == dbpath::DbPath::New {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        // Read-write without CREATE, made read-only by `query_only` below:
        // a SQLITE_OPEN_READ_ONLY connection cannot remove the -wal and -shm
        // files it needs on a WAL database, so every `results list` would
        // leave them beside the database. A file we may not write is still
        // opened truly read-only.
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .or_else(|_| {
            Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
        })
        .map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
            stale: Vec::new(),
        };
        store.configure_read_only()?;
        Ok(store)
    }

    /// Check, without opening anything, that `path` may become or is a
    /// results database (what `open` checks first), so that a command can
    /// refuse a bad `--db` before it does any work.
    pub fn check_path(path: &Path) -> Result<()> {
        dbpath::check(path).map(|_| ())
    }

    /// Row ids of the runs this open marked interrupted because their
    /// writer had died.
    pub fn stale_runs(&self) -> &[i64] {
        &self.stale
    }

    /// A private in-memory database (tests, `--no-store`).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(|e| StoreError::Open {
            path: PathBuf::from(":memory:"),
            reason: e.to_string(),
        })?;
        Self::init(conn, PathBuf::from(":memory:"))
    }

    fn init(conn: Connection, path: PathBuf) -> Result<Store> {
        let mut store = Store {
            conn,
            path,
            stale: Vec::new(),
        };
        store.configure()?;
        store.migrate()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql_err(&self, context: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        let context = context.to_string();
        move |source| match &source {
            rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::NotADatabase => {
                StoreError::Foreign {
                    path: self.path.clone(),
                }
            }
            rusqlite::Error::SqliteFailure(e, _)
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::ReadOnly
                        | rusqlite::ErrorCode::CannotOpen
                        | rusqlite::ErrorCode::PermissionDenied
                ) =>
            {
                StoreError::Open {
                    path: self.path.clone(),
                    reason: format!(
                        "{source}; check that the file and its directory are writable or pass --db"
                    ),
                }
            }
            _ => StoreError::Sqlite {
                path: self.path.clone(),
                context: context.clone(),
                source,
            },
        }
    }

    /// What the file says it is: the number of schema objects, its
    /// application id and its schema version. Read before any pragma that
    /// writes, so "not a database" or "not ours" is a clear error first.
    fn header(&self) -> Result<(i64, i32, i64)> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(self.sql_err("setting the busy timeout"))?;
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(self.sql_err("reading the schema"))?;
        let app_id: i32 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(self.sql_err("reading the application id"))?;
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.sql_err("reading the schema version"))?;
        Ok((tables, app_id, version))
    }

    /// A schema newer than this sysgauge knows is refused, untouched.
    fn refuse_newer(&self, version: i64) -> Result<()> {
        let supported = migrations::MIGRATIONS.len() as i64;
        if version > supported {
            return Err(StoreError::NewerSchema {
                path: self.path.clone(),
                found: version,
                supported,
            });
        }
        Ok(())
    }

    /// The checks `configure` makes, without writing anything.
    fn configure_read_only(&self) -> Result<()> {
        let (tables, app_id, version) = self.header()?;
        // An empty file (or another program's database) has no runs table
        // to read; "not ours" says more than "no such table".
        if tables == 0 || app_id != APPLICATION_ID || version == 0 {
            return Err(StoreError::Foreign {
                path: self.path.clone(),
            });
        }
        self.refuse_newer(version)?;
        // No statement on this connection may write.
        self.conn
            .execute_batch("PRAGMA foreign_keys=ON; PRAGMA query_only=ON;")
            .map_err(self.sql_err("setting pragmas"))?;
        Ok(())
    }

    /// A write transaction holding the write lock from its first statement
    /// (`BEGIN IMMEDIATE`), waiting up to the busy timeout for it.
    fn write_tx(&mut self, context: &str) -> Result<Transaction<'_>> {
        let path = self.path.clone();
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(tx_err(&path, context))
    }

    fn configure(&mut self) -> Result<()> {
        let (tables, app_id, version) = self.header()?;
        if tables > 0 && app_id != APPLICATION_ID {
            return Err(StoreError::Foreign {
                path: self.path.clone(),
            });
        }
        // Refuse a newer schema before any pragma below rewrites the header.
        self.refuse_newer(version)?;
        self.enable_wal()?;
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(self.sql_err("setting pragmas"))?;
        Ok(())
    }

    /// Switch to the WAL journal and check that it took: the pragma answers
    /// with the mode in force, and a file system without shared memory (or a
    /// concurrent opener holding a lock) can leave the old one. Changing the
    /// mode needs a moment with no other connection, so a busy answer is
    /// retried within the busy timeout.
    fn enable_wal(&mut self) -> Result<()> {
        if self.path.as_os_str() == ":memory:" {
            return Ok(());
        }
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            let answer = self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0));
            match answer {
                Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
                Ok(mode) if std::time::Instant::now() >= deadline => {
                    return Err(StoreError::Open {
                        path: self.path.clone(),
                        reason: format!(
                            "the WAL journal could not be enabled (journal mode is {mode}); \
                             put the database on a local file system"
                        ),
                    })
                }
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if matches!(
                        e.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) && std::time::Instant::now() < deadline => {}
                Err(e) => return Err(self.sql_err("enabling the WAL journal")(e)),
                Ok(_) => {}
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Apply the missing migrations, one `BEGIN IMMEDIATE` transaction
    /// each. The version is read inside the transaction, under the write
    /// lock: another process may have migrated the file since we looked.
    fn migrate(&mut self) -> Result<()> {
        let supported = migrations::MIGRATIONS.len() as i64;
        loop {
            let path = self.path.clone();
            let err = |context: String| tx_err(&path, &context);
            let tx = self.write_tx("starting a migration")?;
            let version: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(err("reading the schema version".into()))?;
            if version > supported {
                return Err(StoreError::NewerSchema {
                    path: path.clone(),
                    found: version,
                    supported,
                });
            }
            if version == supported {
                return Ok(());
            }
            let next = usize::try_from(version).unwrap_or(0);
            let sql = migrations::MIGRATIONS[next];
            tx.execute_batch(sql)
                .and_then(|_| {
                    tx.execute_batch(&format!(
                        "PRAGMA user_version = {}; PRAGMA application_id = {};",
                        next + 1,
                        APPLICATION_ID
                    ))
                })
                .map_err(err(format!("applying migration {}", next + 1)))?;
            tx.commit()
                .map_err(err(format!("committing migration {}", next + 1)))?;
        }
    }

    /// Mark `running` runs whose writer is gone as interrupted: recorded on
    /// another boot, or by a pid that no longer exists. Returns their ids.
    fn mark_stale_runs(&mut self) -> Result<Vec<i64>> {
        if !liveness::can_judge() {
            return Ok(Vec::new());
        }
        let boot = liveness::boot_id();
        let own = liveness::own_pid();
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        let candidates: Vec<(i64, i64, Option<String>)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT id, pid, boot_id FROM runs WHERE status = 'running' AND pid IS NOT NULL",
                )
                .map_err(err("looking for stale runs"))?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(err("looking for stale runs"))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(err("looking for stale runs"))?
        };
        let mut stale = Vec::new();
        for (id, pid, run_boot) in candidates {
            let other_boot = matches!((&boot, &run_boot), (Some(a), Some(b)) if a != b);
            let dead = pid != own && !liveness::pid_alive(pid);
            if other_boot || dead {
                tx.execute(
                    "UPDATE runs SET status = 'interrupted' WHERE id = ?1",
                    params![id],
                )
                .map_err(err("marking a stale run interrupted"))?;
                stale.push(id);
            }
        }
        tx.commit().map_err(err("marking stale runs"))?;
        Ok(stale)
    }

    /// `PRAGMA integrity_check` result: "ok" when the file is sound.
    pub fn integrity_check(&self) -> Result<String> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(self.sql_err("checking integrity"))
    }

    /// Insert a run header (no results yet); returns its row id.
    pub fn begin_run(&mut self, run: &RunRecord, source: &str) -> Result<i64> {
        let path = self.path.clone();
        let tx = self.write_tx("starting a transaction")?;
        let id = insert_run_row(&tx, run, source)
            .and_then(|id| {
                // Who is writing it, so that a later open can tell whether
                // this run can still finish.
                tx.execute(
                    "UPDATE runs SET pid = ?1, boot_id = ?2 WHERE id = ?3",
                    params![liveness::own_pid(), liveness::boot_id(), id],
                )?;
                Ok(id)
            })
            .map_err(tx_err(&path, "recording the run"))?;
        tx.commit().map_err(tx_err(&path, "committing the run"))?;
        Ok(id)
    }

    /// Append one finished result to run `run_row` in its own transaction.
    pub fn add_result(&mut self, run_row: i64, seq: usize, result: &ResultRecord) -> Result<()> {
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        insert_result(&tx, run_row, seq, result).map_err(err("storing a result"))?;
        tx.commit().map_err(err("committing a result"))?;
        Ok(())
    }

    /// Record how a run ended (status, end time, run-level findings, host
    /// facts as finally known).
    pub fn finish_run(&mut self, run_row: i64, run: &RunRecord) -> Result<()> {
        let findings = to_json(&run.findings);
        let host = to_json(&run.host);
        let path = self.path.clone();
        let tx = self.write_tx("starting a transaction")?;
        tx.execute(
                "UPDATE runs SET status = ?1, finished_at = ?2, findings_json = ?3, host_json = ?4 WHERE id = ?5",
                params![
                    run.status.as_str(),
                    run.finished_at.map(|t| t.to_rfc3339()),
                    findings,
                    host,
                    run_row
                ],
            )
            .map_err(tx_err(&path, "finishing the run"))?;
        tx.commit()
            .map_err(tx_err(&path, "committing the run's end"))?;
        Ok(())
    }

    /// Insert a complete run with all its results in one transaction
    /// (import). A run whose id is already present is left alone.
    pub fn insert_run(&mut self, run: &RunRecord, source: &str) -> Result<Inserted> {
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        let inserted = import_run(&tx, run, source, &path)?;
        tx.commit().map_err(err("committing the import"))?;
        Ok(inserted)
    }

    /// Insert several runs atomically: either all new ones are stored or none.
    pub fn insert_runs(&mut self, runs: &[RunRecord], source: &str) -> Result<Vec<Inserted>> {
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        let mut out = Vec::with_capacity(runs.len());
        for run in runs {
            out.push(import_run(&tx, run, source, &path)?);
        }
        tx.commit().map_err(err("committing the import"))?;
        Ok(out)
    }

    /// All runs, newest first.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.run_uuid, r.started_at, r.finished_at, r.status, r.command,
                        r.host_name, r.profile, r.label, r.source,
                        (SELECT count(*) FROM results x WHERE x.run_id = r.id),
                        (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'failed')
                 FROM runs r ORDER BY r.started_at DESC, r.id DESC",
            )
            .map_err(self.sql_err("listing runs"))?;
        let rows = stmt
            .query_map([], |r| {
                <(
                    i64,
                    String,
                    String,
                    Option<String>,
                    String,
                    String,
                    String,
                    String,
                    Option<String>,
                    String,
                    i64,
                    i64,
                )>::try_from(r)
            })
            .map_err(self.sql_err("listing runs"))?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                uuid,
                started,
                finished,
                status,
                command,
                host,
                profile,
                label,
                source,
                n,
                failed,
            ) = row.map_err(self.sql_err("listing runs"))?;
            out.push(RunSummary {
                id,
                run_uuid: uuid,
                started_at: self.parse_time(&started)?,
                finished_at: finished.map(|f| self.parse_time(&f)).transpose()?,
                status: RunStatus::parse(&status).ok_or_else(|| self.corrupt("run status"))?,
                command,
                host,
                profile,
                label,
                source,
                results: n,
                failed,
            });
        }
        Ok(out)
    }

    /// Resolve a user's run reference: a row id (`12`), or a prefix of the
    /// run's UUID (at least 4 characters).
    pub fn resolve_run(&self, key: &str) -> Result<i64> {
        let key = key.trim();
        if let Ok(id) = key.parse::<i64>() {
            let found: Option<i64> = self
                .conn
                .query_row("SELECT id FROM runs WHERE id = ?1", params![id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(self.sql_err("looking up a run"))?;
            return found.ok_or_else(|| StoreError::NotFound(key.to_string()));
        }
        if key.len() < 4 || !key.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(StoreError::NotFound(key.to_string()));
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE run_uuid LIKE ?1 || '%'")
            .map_err(self.sql_err("looking up a run"))?;
        let ids: Vec<i64> = stmt
            .query_map(params![key.to_ascii_lowercase()], |r| r.get(0))
            .map_err(self.sql_err("looking up a run"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(self.sql_err("looking up a run"))?;
        match ids.len() {
            0 => Err(StoreError::NotFound(key.to_string())),
            1 => Ok(ids[0]),
            n => Err(StoreError::Ambiguous {
                key: key.to_string(),
                matches: n,
            }),
        }
    }

    /// The newest *complete* run of `host` (by host name), if any: a run
    /// still going, interrupted or failed measured only part of what it
    /// planned and would make a comparison against "the host" misleading.
    /// Imported runs count as complete.
    pub fn latest_run_for_host(&self, host: &str) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT id FROM runs WHERE host_name = ?1 AND status IN ('complete', 'imported')
                 ORDER BY started_at DESC, id DESC LIMIT 1",
                params![host],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sql_err("looking up a host"))
    }

    /// The newest run of `host` whatever its status (to say why
    /// `latest_run_for_host` found none).
    pub fn latest_any_run_for_host(&self, host: &str) -> Result<Option<(i64, RunStatus)>> {
        let row: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT id, status FROM runs WHERE host_name = ?1 ORDER BY started_at DESC, id DESC LIMIT 1",
                params![host],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.sql_err("looking up a host"))?;
        row.map(|(id, s)| {
            RunStatus::parse(&s)
                .map(|st| (id, st))
                .ok_or_else(|| self.corrupt("run status"))
        })
        .transpose()
    }

    /// Distinct host names, in order of their newest run.
    pub fn hosts(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT host_name FROM runs GROUP BY host_name ORDER BY max(started_at) DESC")
            .map_err(self.sql_err("listing hosts"))?;
        let v = stmt
            .query_map([], |r| r.get(0))
            .map_err(self.sql_err("listing hosts"))?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(self.sql_err("listing hosts"))?;
        Ok(v)
    }

    /// Every complete (or imported) run with what identifies its machine,
    /// newest first: the host name, the identity (machine-id, DMI UUID and
    /// serial) and the fleet alias (the tag `alias_tag`). What makes a
    /// machine out of these is the caller's rule.
    pub fn machine_rows(&self, alias_tag: &str) -> Result<Vec<MachineRow>> {
        let ctx = "listing machines";
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, host_name, host_json, tags_json, started_at FROM runs
                 WHERE status IN ('complete', 'imported')
                 ORDER BY started_at DESC, id DESC",
            )
            .map_err(self.sql_err(ctx))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(self.sql_err(ctx))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, host, host_json, tags_json, started) = row.map_err(self.sql_err(ctx))?;
            let host_info: HostInfo =
                self.decode(&host_json, &format!("host facts of run {id}"))?;
            let mut tags: std::collections::BTreeMap<String, String> =
                self.decode(&tags_json, &format!("tags of run {id}"))?;
            out.push(MachineRow {
                id,
                host,
                identity: host_info.identity,
                alias: tags.remove(alias_tag),
                started_at: self.parse_time(&started)?,
            });
        }
        Ok(out)
    }

    /// The newest complete (or imported) run of every machine, newest
    /// first. A machine is a host name together with its identity and its
    /// fleet alias, so two machines sharing a host name (cloned images,
    /// reused names) stay two, and the same machine measured again is one.
    pub fn latest_run_per_machine(&self, alias_tag: &str) -> Result<Vec<i64>> {
        let mut seen = std::collections::HashSet::new();
        Ok(self
            .machine_rows(alias_tag)?
            .into_iter()
            .filter(|r| seen.insert((r.host.clone(), r.identity.clone(), r.alias.clone())))
            .map(|r| r.id)
            .collect())
    }

    /// Load a whole run with its results and metrics.
    pub fn load_run(&self, id: i64) -> Result<RunRecord> {
        type RunRow = (
            String,
            i64,
            String,
            String,
            String,
            Option<String>,
            String,
            String,
            String,
            String,
            Option<String>,
            String,
            String,
        );
        let row: Option<RunRow> = self
            .conn
            .query_row(
                "SELECT run_uuid, schema_version, command, status, started_at, finished_at,
                        tool_version, build_json, host_json, profile, label, tags_json, findings_json
                 FROM runs WHERE id = ?1",
                params![id],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                        r.get(9)?,
                        r.get(10)?,
                        r.get(11)?,
                        r.get(12)?,
                    ))
                },
            )
            .optional()
            .map_err(self.sql_err("loading a run"))?;
        let (
            uuid,
            schema,
            command,
            status,
            started,
            finished,
            tool,
            build,
            host,
            profile,
            label,
            tags,
            findings,
        ) = row.ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        let build: BuildInfo = self.decode(&build, "build info")?;
        let host: HostInfo = self.decode(&host, "host facts")?;
        let profile: Profile = self.decode(&format!("\"{profile}\""), "profile")?;
        Ok(RunRecord {
            schema_version: u32::try_from(schema).map_err(|_| self.corrupt("schema version"))?,
            run_id: uuid,
            started_at: self.parse_time(&started)?,
            finished_at: finished.map(|f| self.parse_time(&f)).transpose()?,
            status: RunStatus::parse(&status).ok_or_else(|| self.corrupt("run status"))?,
            command,
            tool_version: tool,
            build,
            host,
            profile,
            label,
            tags: self.decode(&tags, "tags")?,
            findings: self.decode(&findings, "findings")?,
            results: self.load_results(id)?,
        })
    }

    fn load_results(&self, run_row: i64) -> Result<Vec<ResultRecord>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, bench_id, family, workload_version, params_json, status_json,
                        started_at, duration_seconds, findings_json, details_json
                 FROM results WHERE run_id = ?1 ORDER BY seq",
            )
            .map_err(self.sql_err("loading results"))?;
        let rows = stmt
            .query_map(params![run_row], |r| {
                <(
                    i64,
                    String,
                    String,
                    i64,
                    String,
                    String,
                    String,
                    f64,
                    String,
                    String,
                )>::try_from(r)
            })
            .map_err(self.sql_err("loading results"))?;
        let mut out = Vec::new();
        for row in rows {
            let (rid, bench_id, family, wv, params, status, started, duration, findings, details) =
                row.map_err(self.sql_err("loading results"))?;
            let details: Params = self.decode(&details, "details")?;
            let params: Params = self.decode(&params, "parameters")?;
            let status: Status = self.decode(&status, "status")?;
            let findings: Vec<Finding> = self.decode(&findings, "findings")?;
            out.push(ResultRecord {
                bench_id,
                family,
                workload_version: u32::try_from(wv)
                    .map_err(|_| self.corrupt("workload version"))?,
                params,
                details,
                status,
                started_at: self.parse_time(&started)?,
                duration_seconds: duration,
                metrics: self.load_metrics(rid)?,
                findings,
            });
        }
        Ok(out)
    }

    fn load_metrics(&self, result_row: i64) -> Result<Vec<Metric>> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, unit, better, samples_json FROM metrics WHERE result_id = ?1 ORDER BY seq")
            .map_err(self.sql_err("loading metrics"))?;
        let rows = stmt
            .query_map(params![result_row], |r| {
                <(String, String, String, String)>::try_from(r)
            })
            .map_err(self.sql_err("loading metrics"))?;
        let mut out = Vec::new();
        for row in rows {
            let (name, unit, better, samples) = row.map_err(self.sql_err("loading metrics"))?;
            let samples: Vec<f64> = self.decode(&samples, "samples")?;
            let summary =
                Summary::from_samples(&samples).ok_or_else(|| self.corrupt("metric samples"))?;
            out.push(Metric {
                name,
                unit: Unit::from(unit),
                better: Better::parse(&better).ok_or_else(|| self.corrupt("metric direction"))?,
                samples,
                summary,
            });
        }
        Ok(out)
    }

    /// Delete a run and everything it holds. Returns false if it did not exist.
    pub fn delete_run(&mut self, id: i64) -> Result<bool> {
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        let n = tx
            .execute("DELETE FROM runs WHERE id = ?1", params![id])
            .map_err(err("deleting a run"))?;
        tx.commit().map_err(err("committing the deletion"))?;
        Ok(n > 0)
    }

    fn parse_time(&self, s: &str) -> Result<DateTime<Utc>> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| self.corrupt("timestamp"))
    }

    fn decode<T: serde::de::DeserializeOwned>(&self, s: &str, what: &str) -> Result<T> {
        serde_json::from_str(s).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            what: format!("{what}: {e}"),
        })
    }

    fn corrupt(&self, what: &str) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what: what.to_string(),
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    // Serialising our own plain data structs cannot fail (no maps with
    // non-string keys, no NaN: metrics refuse non-finite samples).
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

/// A `map_err` adapter naming the database and the step; for code that
/// holds a transaction, which borrows the store and so rules out `sql_err`.
fn tx_err(path: &Path, context: &str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    let context = context.to_string();
    move |source| StoreError::Sqlite {
        path,
        context,
        source,
    }
}

/// Store one imported run with its results inside `tx`, unless a run with
/// its id is already there. Looked up under the write lock: a concurrent
/// import of the same file cannot slip in between.
fn import_run(
    tx: &Transaction<'_>,
    run: &RunRecord,
    source: &str,
    path: &Path,
) -> Result<Inserted> {
    let existing: Option<i64> = tx
        .query_row(
            "SELECT id FROM runs WHERE run_uuid = ?1",
            params![run.run_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(tx_err(path, "looking up a run"))?;
    if let Some(id) = existing {
        return Ok(Inserted::AlreadyPresent(id));
    }
    let id = insert_run_row(tx, run, source).map_err(tx_err(path, "importing a run"))?;
    for (i, r) in run.results.iter().enumerate() {
        insert_result(tx, id, i, r).map_err(tx_err(path, "importing a result"))?;
    }
    Ok(Inserted::New(id))
}

fn insert_run_row(tx: &Transaction<'_>, run: &RunRecord, source: &str) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO runs (run_uuid, schema_version, command, status, started_at, finished_at,
                           tool_version, build_json, host_name, host_json, profile, label,
                           tags_json, findings_json, source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            run.run_id,
            run.schema_version,
            run.command,
            run.status.as_str(),
            run.started_at.to_rfc3339(),
            run.finished_at.map(|t| t.to_rfc3339()),
            run.tool_version,
            to_json(&run.build),
            run.host_name(),
            to_json(&run.host),
            run.profile.as_str(),
            run.label,
            to_json(&run.tags),
            to_json(&run.findings),
            source,
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

fn insert_result(
    tx: &Transaction<'_>,
    run_row: i64,
    seq: usize,
    r: &ResultRecord,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO results (run_id, seq, bench_id, family, workload_version, params_json,
                              params_key, details_json, status, status_json, started_at,
                              duration_seconds, findings_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            run_row,
            i64::try_from(seq).unwrap_or(i64::MAX),
            r.bench_id,
            r.family,
            r.workload_version,
            to_json(&r.params),
            r.params.canonical(),
            to_json(&r.details),
            r.status.label(),
            to_json(&r.status),
            r.started_at.to_rfc3339(),
            r.duration_seconds,
            to_json(&r.findings),
        ],
    )?;
    let result_row = tx.last_insert_rowid();
    for (i, m) in r.metrics.iter().enumerate() {
        tx.execute(
            "INSERT INTO metrics (result_id, seq, name, unit, better, samples_json, n, median,
                                  min, max, mean, stddev, cov, mad)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                result_row,
                i64::try_from(i).unwrap_or(i64::MAX),
                m.name,
                m.unit.symbol(),
                m.better.as_str(),
                to_json(&m.samples),
                i64::try_from(m.summary.n).unwrap_or(i64::MAX),
                m.summary.median,
                m.summary.min,
                m.summary.max,
                m.summary.mean,
                m.summary.stddev,
                m.summary.cov,
                m.summary.mad,
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
