//! The SQLite backend: one file, the default.
//!
//! Choices:
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
//!   marks `running` runs of dead writers `interrupted` (see `liveness`).

use crate::rows::{self, Decoder, ResultValues, RunValues};
use crate::tokens::TokenRow;
use crate::APPLICATION_ID;
use crate::{dbpath, liveness, migrations, Inserted, MachineRow, Result, RunSummary, StoreError};
use rusqlite::{
    params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};
use std::path::{Path, PathBuf};
use sysgauge_core::record::{ResultRecord, RunRecord, RunStatus};

/// How long a writer waits for another one to finish (the busy timeout).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

pub(crate) struct SqliteStore {
    pub(crate) conn: Connection,
    path: PathBuf,
    /// Runs found `running` with a dead writer and marked interrupted when
    /// this store was opened.
    stale: Vec<i64>,
}

impl SqliteStore {
    /// Open for writing (creating if needed) the database at `path`: a
    /// regular file, or a new path in an existing directory; anything else is
    /// refused before SQLite touches it. Runs left `running` by writers that
    /// died are marked interrupted (see `stale_runs`).
    pub fn open(path: &Path) -> Result<SqliteStore> {
        let existed = dbpath::check(path)? == dbpath::DbPath::Existing;
        refuse_unwritable(path, existed)?;
        let opened = (|| {
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
        })();
        if opened.is_err() && !existed {
            // A database we began and could not finish (a full disk) is
            // no database: leave nothing that a later open would call
            // damaged.
            for f in crate::database_files(path) {
                let _ = std::fs::remove_file(f);
            }
        }
        opened
    }

    /// Open an existing database for reading only (`results list`,
    /// `compare`, `report`…): never creates a file, never migrates, never
    /// marks stale runs. A missing file is `StoreError::Missing`.
    pub fn open_read_only(path: &Path) -> Result<SqliteStore> {
        // Nothing there (not even a dangling link), whether or not its
        // directory exists: simply no database yet.
        let absent = matches!(std::fs::symlink_metadata(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        if absent || dbpath::check(path)? == dbpath::DbPath::New {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        // A 0-byte file is what `mktemp` makes for a writer to fill, and
        // writers take it as a new database; so readers see no runs in it,
        // the same as no file, rather than calling it foreign.
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            return Err(StoreError::Empty {
                path: path.to_path_buf(),
            });
        }
        let had_journal = [side_file(path, "-wal"), side_file(path, "-shm")].map(|f| f.exists());
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
        let store = SqliteStore {
            conn,
            path: path.to_path_buf(),
            stale: Vec::new(),
        };
        match store.configure_read_only() {
            Err(first @ (StoreError::Sqlite { .. } | StoreError::Open { .. }))
                if !has_wal(path) =>
            {
                // Reading a WAL database needs its -shm file, which cannot
                // be made on a full disk or in a directory of another user
                // ("disk I/O error", "attempt to write a readonly
                // database"). With no -wal file the database file holds
                // every committed transaction, so it is read as immutable
                // (no -shm, no locks): the last committed state, without
                // a write that starts meanwhile. The empty -wal and the
                // -shm (an index of the -wal, rebuilt from it) the failed
                // attempt made are removed, as SQLite would have on closing.
                drop(store);
                let [had_wal, had_shm] = had_journal;
                let wal = side_file(path, "-wal");
                if !had_wal && std::fs::metadata(&wal).is_ok_and(|m| m.len() == 0) {
                    let _ = std::fs::remove_file(wal);
                }
                if !had_shm && !has_wal(path) {
                    let _ = std::fs::remove_file(side_file(path, "-shm"));
                }
                let store = SqliteStore {
                    conn: Connection::open_with_flags(
                        immutable_uri(path),
                        OpenFlags::SQLITE_OPEN_READ_ONLY
                            | OpenFlags::SQLITE_OPEN_URI
                            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                    .map_err(|e| StoreError::Open {
                        path: path.to_path_buf(),
                        reason: format!("{first}; then read as immutable: {e}"),
                    })?,
                    path: path.to_path_buf(),
                    stale: Vec::new(),
                };
                store.configure_read_only()?;
                Ok(store)
            }
            Err(e) => Err(e),
            Ok(()) => Ok(store),
        }
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
    pub fn open_in_memory() -> Result<SqliteStore> {
        let conn = Connection::open_in_memory().map_err(|e| StoreError::Open {
            path: PathBuf::from(":memory:"),
            reason: e.to_string(),
        })?;
        Self::init(conn, PathBuf::from(":memory:"))
    }

    fn init(conn: Connection, path: PathBuf) -> Result<SqliteStore> {
        let mut store = SqliteStore {
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
                if e.code == rusqlite::ErrorCode::DatabaseCorrupt =>
            {
                StoreError::Damaged {
                    path: self.path.clone(),
                    what: format!("{context}: {source}"),
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
                cause: source,
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
        migrations::refuse_newer(&self.path, version, migrations::MIGRATIONS)
    }

    /// Our tables with no schema version (0) or a negative one: every
    /// sysgauge sets the version with the tables it creates, so the file
    /// was altered; migrating it would re-create tables that exist.
    fn refuse_bad_version(&self, tables: i64, version: i64) -> Result<()> {
        if tables > 0 && version <= 0 {
            return Err(StoreError::BadSchemaVersion {
                path: self.path.clone(),
                found: version,
            });
        }
        Ok(())
    }

    /// `PRAGMA quick_check` before the first write: a damaged file gets no
    /// new run on top of pages that may be lost. It reads every page once
    /// (without the index cross-checks of `integrity_check`): 0.2 to 0.35 s
    /// on a 116 MB database of 400,000 rows with an index, in the page
    /// cache; a cold cache adds reading the file.
    fn refuse_damaged(&self) -> Result<()> {
        let problems: Vec<String> = self
            .conn
            .prepare("PRAGMA quick_check(3)")
            .and_then(|mut stmt| {
                stmt.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<_>>()
            })
            .map_err(self.sql_err("checking the database"))?;
        if problems.iter().all(|p| p == "ok") {
            return Ok(());
        }
        Err(StoreError::Damaged {
            path: self.path.clone(),
            what: problems.join("; "),
        })
    }

    /// The checks `configure` makes, without writing anything.
    fn configure_read_only(&self) -> Result<()> {
        let (tables, app_id, version) = self.header()?;
        // An empty file (or another program's database) has no runs table
        // to read; "not ours" says more than "no such table".
        if tables == 0 || app_id != APPLICATION_ID {
            return Err(StoreError::Foreign {
                path: self.path.clone(),
            });
        }
        self.refuse_bad_version(tables, version)?;
        self.refuse_newer(version)?;
        // No statement on this connection may write.
        self.conn
            .execute_batch("PRAGMA foreign_keys=ON; PRAGMA query_only=ON;")
            .map_err(self.sql_err("setting pragmas"))?;
        Ok(())
    }

    /// A write transaction holding the write lock from its first statement
    /// (`BEGIN IMMEDIATE`), waiting up to the busy timeout for it.
    pub(crate) fn write_tx(&mut self, context: &str) -> Result<Transaction<'_>> {
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
        self.refuse_bad_version(tables, version)?;
        self.refuse_newer(version)?;
        if tables > 0 {
            self.refuse_damaged()?;
        }
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
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        let candidates: Vec<(i64, i64, Option<String>)> = {
            let mut stmt = tx
                .prepare(rows::RUNNING_RUNS)
                .map_err(err("looking for stale runs"))?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(err("looking for stale runs"))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(err("looking for stale runs"))?
        };
        let mut stale = Vec::new();
        for (id, pid, run_boot) in candidates {
            if liveness::writer_gone(pid, run_boot.as_deref()) {
                tx.execute(rows::MARK_INTERRUPTED, params![id])
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
                let id = id.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
                // Who is writing it, so that a later open can tell whether
                // this run can still finish.
                tx.execute(
                    rows::SET_WRITER,
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
        let findings = rows::to_json(&run.findings);
        let host = rows::to_json(&run.host);
        let path = self.path.clone();
        let tx = self.write_tx("starting a transaction")?;
        tx.execute(
            rows::FINISH_RUN,
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

    /// Rows of `sql` (with `args`), each decoded by `f`.
    fn rows<T>(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
        context: &str,
        f: impl Fn(&Decoder<'_>, &rusqlite::Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let d = Decoder { path: &self.path };
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .map_err(self.sql_err(context))?;
        let mut rows = stmt.query(args).map_err(self.sql_err(context))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(self.sql_err(context))? {
            out.push(f(&d, r)?);
        }
        Ok(out)
    }

    /// All runs, newest first.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        self.rows(rows::LIST_RUNS, [], "listing runs", |d, r| d.summary(r))
    }

    /// Row ids matching a run reference (see `Store::resolve_run`).
    pub fn run_with_id(&self, id: i64) -> Result<Vec<i64>> {
        self.rows(rows::RUN_BY_ID, [id], "looking up a run", |d, r| {
            d.int(r, 0)
        })
    }

    pub fn runs_with_prefix(&self, prefix: &str) -> Result<Vec<i64>> {
        self.rows(
            rows::RUNS_BY_UUID_PREFIX,
            [prefix.to_ascii_lowercase()],
            "looking up a run",
            |d, r| d.int(r, 0),
        )
    }

    pub fn latest_run_for_host(&self, host: &str) -> Result<Option<i64>> {
        let v = self.rows(
            rows::LATEST_COMPLETE,
            [host],
            "looking up a host",
            |d, r| d.int(r, 0),
        )?;
        Ok(v.into_iter().next())
    }

    pub fn latest_any_run_for_host(&self, host: &str) -> Result<Option<(i64, RunStatus)>> {
        let v = self.rows(rows::LATEST_ANY, [host], "looking up a host", |d, r| {
            Ok((d.int(r, 0)?, d.status(&d.text(r, 1)?)?))
        })?;
        Ok(v.into_iter().next())
    }

    pub fn hosts(&self) -> Result<Vec<String>> {
        self.rows(rows::HOSTS, [], "listing hosts", |d, r| d.text(r, 0))
    }

    pub fn machine_rows(&self, alias_tag: &str) -> Result<Vec<MachineRow>> {
        self.rows(rows::MACHINE_ROWS, [], "listing machines", |d, r| {
            d.machine_row(r, alias_tag)
        })
    }

    /// Load a whole run with its results and metrics: three queries.
    pub fn load_run(&self, id: i64) -> Result<RunRecord> {
        let run = self
            .rows(rows::LOAD_RUN, [id], "loading a run", |d, r| d.run(r))?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        let results = self.rows(rows::LOAD_RESULTS, [id], "loading results", |d, r| {
            d.result(r)
        })?;
        let metrics = self.rows(rows::LOAD_METRICS, [id], "loading metrics", |d, r| {
            d.metric(r)
        })?;
        Ok(rows::assemble(run, results, metrics))
    }

    /// Runs without their results, in the order of `ids`.
    pub fn load_run_heads(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        ids.iter()
            .map(|&id| {
                self.rows(rows::LOAD_RUN, [id], "loading a run", |d, r| d.run(r))?
                    .into_iter()
                    .next()
                    .ok_or_else(|| StoreError::NotFound(id.to_string()))
            })
            .collect()
    }

    /// Many runs, in the order of `ids` (a local file answers a query per
    /// run as fast as one for all).
    pub fn load_runs(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        ids.iter().map(|&id| self.load_run(id)).collect()
    }

    /// Delete a run and everything it holds. Returns false if it did not exist.
    /// Run a writing token statement in its own transaction; rows changed.
    pub fn token_exec(&mut self, sql: &str, args: &[String], context: &str) -> Result<usize> {
        let path = self.path.clone();
        let tx = self.write_tx(context)?;
        let n = tx
            .execute(sql, rusqlite::params_from_iter(args.iter()))
            .map_err(tx_err(&path, context))?;
        tx.commit().map_err(tx_err(&path, context))?;
        Ok(n)
    }

    pub fn token_rows(&self, sql: &str, args: &[String], context: &str) -> Result<Vec<TokenRow>> {
        self.rows(
            sql,
            rusqlite::params_from_iter(args.iter()),
            context,
            |d, r| crate::tokens::decode(d, r),
        )
    }

    /// Whether the database answers a query.
    pub fn ping(&self) -> Result<()> {
        self.rows(crate::tokens::PING, [], "checking the database", |d, r| {
            d.int(r, 0)
        })
        .map(|_| ())
    }

    pub fn delete_run(&mut self, id: i64) -> Result<bool> {
        let path = self.path.clone();
        let err = |context: &str| tx_err(&path, context);
        let tx = self.write_tx("starting a transaction")?;
        let n = tx
            .execute(rows::DELETE_RUN, params![id])
            .map_err(err("deleting a run"))?;
        tx.commit().map_err(err("committing the deletion"))?;
        Ok(n > 0)
    }
}

rows::impl_row!(rusqlite::Row<'_>, get);

/// A `map_err` adapter naming the database and the step; for code that
/// holds a transaction, which borrows the store and so rules out `sql_err`.
/// Whether a non-empty -wal file lies beside the database: then the file
/// alone is not the committed state.
fn has_wal(path: &Path) -> bool {
    match std::fs::metadata(side_file(path, "-wal")) {
        Ok(m) => m.len() > 0,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// The files SQLite keeps beside a database, by their suffix: the
/// write-ahead log and its index (WAL mode, ours), and the rollback journal
/// (the other modes, or a database another program made).
pub(crate) const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The first 16 bytes of every SQLite database file.
const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// True when `path` is a regular file that begins with SQLite's header
/// (opened without blocking, so a FIFO swapped in is not waited on).
pub(crate) fn has_header(path: &Path) -> bool {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(path, flags, Mode::empty()) else {
        return false;
    };
    let mut f = std::fs::File::from(fd);
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 16];
    f.read_exact(&mut head).is_ok() && &head == HEADER
}

/// The database's `-wal`, `-shm` or `-journal` file.
pub(crate) fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut f = path.as_os_str().to_owned();
    f.push(suffix);
    PathBuf::from(f)
}

/// `file:PATH?immutable=1`, the path percent-encoded where a URI needs it.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// An existing database this process may not write: say whose it is,
/// before SQLite answers "attempt to write a readonly database". The
/// directory must be writable too, for the -wal and -shm files.
fn refuse_unwritable(path: &Path, existed: bool) -> Result<()> {
    use rustix::fs::{access, Access};
    use std::os::unix::fs::MetadataExt;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if access(dir, Access::WRITE_OK) == Err(rustix::io::Errno::ROFS) {
        return Err(StoreError::Open {
            path: path.to_path_buf(),
            reason: format!(
                "{} is on a read-only file system, and SQLite writes the database and its journal there; pass --db with a file on a writable one",
                dir.display()
            ),
        });
    }
    let owner = |p: &Path| user_name(std::fs::metadata(p).map_or(0, |m| m.uid()));
    let uid = rustix::process::getuid().as_raw();
    let denied = |p: &Path| access(p, Access::WRITE_OK) == Err(rustix::io::Errno::ACCESS);
    if existed && denied(path) {
        return Err(StoreError::NotWritable {
            path: path.to_path_buf(),
            owner: owner(path),
            uid,
        });
    }
    if denied(dir) {
        return Err(StoreError::Open {
            path: path.to_path_buf(),
            reason: format!(
                "its directory {} belongs to user {} and is not writable by you (uid {uid}), \
                 and SQLite writes its journal there; pass --db with a file in a directory of yours",
                dir.display(),
                owner(dir)
            ),
        });
    }
    Ok(())
}

/// The name of user `uid` from /etc/passwd, else the number.
fn user_name(uid: u32) -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut f = line.split(':');
                let name = f.next()?;
                (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| uid.to_string())
}

fn tx_err(path: &Path, context: &str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    let context = context.to_string();
    move |cause| StoreError::Sqlite {
        path,
        context,
        cause,
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
    let Some(id) = insert_run_row(tx, run, source).map_err(tx_err(path, "importing a run"))? else {
        let id = tx
            .query_row(rows::FIND_UUID, params![run.run_id], |r| r.get(0))
            .map_err(tx_err(path, "looking up a run"))?;
        return rows::complete_run(tx, id, run, source).map_err(tx_err(path, "completing a run"));
    };
    for (i, r) in run.results.iter().enumerate() {
        insert_result(tx, id, i, r).map_err(tx_err(path, "importing a result"))?;
    }
    Ok(Inserted::New(id))
}

impl rows::CompletingTx for &Transaction<'_> {
    type Error = rusqlite::Error;
    fn stored(&mut self, id: i64) -> rusqlite::Result<(String, rows::StoredCases)> {
        let status = self.query_row(rows::RUN_STATUS, params![id], |r| r.get(0))?;
        let stored = self
            .prepare(rows::STORED_CASES)?
            .query_map(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok((status, stored))
    }
    fn insert_result(&mut self, id: i64, seq: usize, r: &ResultRecord) -> rusqlite::Result<()> {
        insert_result(self, id, seq, r)
    }
    fn complete_header(&mut self, id: i64, v: &RunValues, tags: &str) -> rusqlite::Result<()> {
        self.execute(
            rows::COMPLETE_RUN,
            params![v.status, v.finished_at, tags, v.findings_json, id],
        )?;
        Ok(())
    }
}

/// The run's header row, unless its run id is already stored (None).
fn insert_run_row(
    tx: &Transaction<'_>,
    run: &RunRecord,
    source: &str,
) -> rusqlite::Result<Option<i64>> {
    let v = RunValues::of(run);
    tx.query_row(
        rows::INSERT_RUN,
        params![
            v.run_uuid,
            v.schema_version,
            v.command,
            v.status,
            v.started_at,
            v.finished_at,
            v.tool_version,
            v.build_json,
            v.host_name,
            v.host_json,
            v.profile,
            v.label,
            v.tags_json,
            v.findings_json,
            source,
        ],
        |r| r.get(0),
    )
    .optional()
}

fn insert_result(
    tx: &Transaction<'_>,
    run_row: i64,
    seq: usize,
    r: &ResultRecord,
) -> rusqlite::Result<()> {
    let v = ResultValues::of(r);
    // Prepared once per connection (an import inserts hundreds of
    // thousands of rows; parsing the statement each time was most of it).
    // The new row's id is the connection's last rowid, not a `RETURNING`
    // clause: SQLite runs a statement with `RETURNING` as one that may
    // write several rows, so each kept a statement journal, which spilled
    // to a temporary file (a 1,000-host import wrote 1.1 million pages
    // there, more than half its time).
    tx.prepare_cached(&format!(
        "INSERT INTO results ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        rows::RESULT_COLUMNS
    ))?
    .execute(params![
        run_row,
        rows::seq(seq),
        v.bench_id,
        v.family,
        v.workload_version,
        v.params_json,
        v.params_key,
        v.details_json,
        v.status,
        v.status_json,
        v.started_at,
        v.duration_seconds,
        v.findings_json,
    ])?;
    let result_row = tx.last_insert_rowid();
    let mut insert_metric = tx.prepare_cached(&format!(
        "INSERT INTO metrics ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        rows::METRIC_COLUMNS
    ))?;
    for (i, m) in r.metrics.iter().enumerate() {
        insert_metric.execute(params![
            result_row,
            rows::seq(i),
            m.name,
            m.unit.symbol(),
            m.better.as_str(),
            rows::to_json(&m.samples),
            rows::seq(m.summary.n),
            m.summary.median,
            m.summary.min,
            m.summary.max,
            m.summary.mean,
            m.summary.stddev,
            m.summary.cov,
            m.summary.mad,
        ])?;
    }
    Ok(())
}
