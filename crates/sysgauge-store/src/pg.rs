//! The PostgreSQL backend: a database shared by a fleet, named by URL
//! (`postgres://user[:password]@host[:port]/dbname`, or a socket directory
//! as `?host=/run/postgresql`).
//!
//! The same logical schema as SQLite (`migrations::POSTGRES`) and the same
//! guarantees, by PostgreSQL's means:
//! - the schema version lives in `sysgauge_meta` (with our application id,
//!   so a database holding someone else's `runs` table is refused); each
//!   migration runs in a transaction that first takes a transaction-level
//!   advisory lock and only then reads the version, so two processes creating
//!   the schema at once both succeed;
//! - the read-only door sets the session read-only and never creates
//!   anything: a database without our tables is "no results database yet";
//! - a writer holds a session advisory lock on each run it measures (taken
//!   in the transaction that inserts the row, so no one sees the row
//!   unlocked); a `running` run whose lock can be taken has lost its writer
//!   (process killed, connection gone) and is marked interrupted when a
//!   writer opens the database. This is `liveness` for a database shared by
//!   many machines, where pids and boot ids cannot be judged;
//! - a whole run is ingested in one transaction: the header by
//!   `INSERT … ON CONFLICT (run_uuid) DO NOTHING` (idempotent by run id,
//!   and a concurrent ingest of the same run waits and then does nothing),
//!   results and metrics by `COPY … FROM STDIN`. When the connection is lost
//!   (a server restart), the transaction is gone as a whole; the ingest
//!   reconnects and stores the run again, and a run whose commit did reach
//!   the server is then found present. Nothing is lost or duplicated.
//!
//! `PgStore` blocks while it waits for the server; the `Store` reaches it
//! through `pg_remote`, which gives every call a deadline.

use crate::rows::{self, dollar, Decoder, ResultValues, RunValues};
use crate::tokens::TokenRow;
use crate::{migrations, Inserted, MachineRow, Result, RunSummary, StoreError, APPLICATION_ID};
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Statement, Transaction};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_core::record::{Metric, ResultRecord, RunRecord, RunStatus};

/// The advisory lock (single 64-bit key space) that serialises migrations.
const MIGRATION_LOCK: i64 = APPLICATION_ID as i64;
/// First key of the per-run writer locks (two 32-bit keys: a space apart
/// from the single-key one).
const RUN_LOCK_CLASS: i32 = APPLICATION_ID;
/// How long a bulk ingest keeps reconnecting to a server that went away.
const RECONNECT_FOR: Duration = Duration::from_secs(60);

type Params<'a> = [&'a (dyn ToSql + Sync)];

pub(crate) fn config_of(url: &str) -> Result<Config> {
    let mut config: Config = url.parse().map_err(|e| StoreError::Open {
        path: PathBuf::from(crate::display_name(Path::new(url))),
        reason: format!(
            "not a valid PostgreSQL URL ({e}); write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
        ),
    })?;
    // Well under the stall that makes a call probe the server (see
    // `pg_remote`), so an unreachable address is reported as such.
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    if config.get_application_name().is_none() {
        config.application_name("sysgauge");
    }
    Ok(config)
}

/// What `Store::check_path` checks for a URL: that it parses.
pub(crate) fn check_url(url: &str) -> Result<()> {
    config_of(url).map(|_| ())
}

/// An error with its causes, one after another.
fn chain(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Whether `e` means the connection is gone (server restarting or down),
/// so that reconnecting may help.
fn connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.as_db_error() {
        // 57P01-57P03: the server shuts down or is starting; 08: connection.
        Some(db) => {
            let code = db.code().code();
            code.starts_with("57P") || code.starts_with("08")
        }
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// A failure inside a transaction: the server's, or writing COPY data.
pub(crate) enum Fail {
    Pg(postgres::Error),
    Io(std::io::Error),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Fail {
        Fail::Pg(e)
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail::Io(e)
    }
}

impl Fail {
    fn lost(&self) -> bool {
        match self {
            Fail::Pg(e) => connection_lost(e),
            Fail::Io(_) => true,
        }
    }
}

pub(crate) struct PgStore {
    client: RefCell<Client>,
    config: Config,
    /// The URL without its password: what errors and `path()` show.
    path: PathBuf,
    stale: Vec<i64>,
    /// Prepared reading statements, by their SQL.
    statements: RefCell<HashMap<&'static str, Statement>>,
}

impl PgStore {
    fn connect(url: &str) -> Result<PgStore> {
        let config = config_of(url)?;
        let path = PathBuf::from(crate::display_name(Path::new(url)));
        let client = config.connect(NoTls).map_err(|e| StoreError::Open {
            path: path.clone(),
            reason: format!(
                "{}; check that the PostgreSQL server is running, that the URL names its host, \
                 port, user and database, and that the database exists (createdb)",
                chain(&e)
            ),
        })?;
        Ok(PgStore {
            client: RefCell::new(client),
            config,
            path,
            stale: Vec::new(),
            statements: RefCell::new(HashMap::new()),
        })
    }

    /// Connect, create or migrate the schema, and mark the runs of writers
    /// that are gone interrupted.
    pub fn open(url: &str) -> Result<PgStore> {
        let mut store = Self::connect(url)?;
        store.migrate()?;
        store.stale = store.mark_stale_runs()?;
        Ok(store)
    }

    /// Connect read-only: nothing is created, migrated or marked.
    pub fn open_read_only(url: &str) -> Result<PgStore> {
        let store = Self::connect(url)?;
        {
            let mut c = store.client.borrow_mut();
            c.batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(store.err("making the session read-only"))?;
            match header(&mut *c).map_err(store.err("reading the schema"))? {
                (None, false) => {
                    return Err(StoreError::Missing {
                        path: store.path.clone(),
                    })
                }
                (None, true) => return Err(store.foreign()),
                (Some((app, _)), _) if app != APPLICATION_ID => return Err(store.foreign()),
                (Some((_, version)), _) => store.refuse_newer(version)?,
            }
        }
        Ok(store)
    }

    pub fn stale_runs(&self) -> &[i64] {
        &self.stale
    }

    fn err(&self, context: &str) -> impl Fn(postgres::Error) -> StoreError + '_ {
        let context = context.to_string();
        move |e| self.error(&context, &e)
    }

    fn error(&self, context: &str, e: &postgres::Error) -> StoreError {
        let hint = if connection_lost(e) {
            "; the connection to the server was lost: check that it is running and run the command again"
        } else {
            ""
        };
        StoreError::Postgres {
            path: self.path.clone(),
            context: context.to_string(),
            reason: format!("{}{hint}", chain(e)),
        }
    }

    fn fail(&self, context: &str, f: Fail) -> StoreError {
        match f {
            Fail::Pg(e) => self.error(context, &e),
            Fail::Io(e) => StoreError::Postgres {
                path: self.path.clone(),
                context: context.to_string(),
                reason: format!("sending COPY data: {e}"),
            },
        }
    }

    fn foreign(&self) -> StoreError {
        StoreError::Foreign {
            path: self.path.clone(),
        }
    }

    fn refuse_newer(&self, version: i64) -> Result<()> {
        migrations::refuse_newer(&self.path, version, migrations::POSTGRES)
    }

    /// Apply the missing migrations, one transaction each, each under the
    /// migration lock and reading the version only once it holds it.
    fn migrate(&mut self) -> Result<()> {
        let supported = migrations::POSTGRES.len() as i64;
        loop {
            let mut c = self.client.borrow_mut();
            let mut tx = c.transaction().map_err(self.err("starting a migration"))?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .map_err(self.err("waiting for the migration lock"))?;
            let version = match header(&mut tx).map_err(self.err("reading the schema"))? {
                (None, true) => return Err(self.foreign()),
                (Some((app, _)), _) if app != APPLICATION_ID => return Err(self.foreign()),
                (Some((_, v)), _) => v,
                (None, false) => {
                    tx.batch_execute(&format!(
                        "CREATE TABLE sysgauge_meta (application_id INTEGER NOT NULL, version BIGINT NOT NULL);
                         INSERT INTO sysgauge_meta VALUES ({APPLICATION_ID}, 0);"
                    ))
                    .map_err(self.err("creating the schema"))?;
                    0
                }
            };
            self.refuse_newer(version)?;
            if version == supported {
                tx.commit().map_err(self.err("committing the schema"))?;
                return Ok(());
            }
            let next = usize::try_from(version).unwrap_or(0);
            let context = format!("applying migration {}", next + 1);
            tx.batch_execute(migrations::POSTGRES[next])
                .map_err(self.err(&context))?;
            tx.execute(
                "UPDATE sysgauge_meta SET version = $1",
                &[&((next + 1) as i64)],
            )
            .map_err(self.err(&context))?;
            tx.commit().map_err(self.err(&context))?;
        }
    }

    /// `running` runs whose writer's lock is free: the writer is gone.
    fn mark_stale_runs(&mut self) -> Result<Vec<i64>> {
        let mut c = self.client.borrow_mut();
        let mut tx = c
            .transaction()
            .map_err(self.err("starting a transaction"))?;
        let candidates: Vec<i64> = tx
            .query(&dollar(rows::RUNNING_RUNS), &[])
            .map_err(self.err("looking for stale runs"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut stale = Vec::new();
        for id in candidates {
            let free: bool = tx
                .query_one(
                    "SELECT pg_try_advisory_xact_lock($1, $2)",
                    &[&RUN_LOCK_CLASS, &run_lock(id)],
                )
                .map_err(self.err("looking for stale runs"))?
                .get(0);
            if free {
                tx.execute(&dollar(rows::MARK_INTERRUPTED), &[&id])
                    .map_err(self.err("marking a stale run interrupted"))?;
                stale.push(id);
            }
        }
        tx.commit().map_err(self.err("marking stale runs"))?;
        Ok(stale)
    }

    /// Insert a run header and hold its writer lock for this session.
    pub fn begin_run(&mut self, run: &RunRecord, source: &str) -> Result<i64> {
        let mut c = self.client.borrow_mut();
        let mut tx = c
            .transaction()
            .map_err(self.err("starting a transaction"))?;
        let id = insert_run_row(&mut tx, run, source)
            .map_err(self.err("recording the run"))?
            .ok_or_else(|| StoreError::Postgres {
                path: self.path.clone(),
                context: "recording the run".into(),
                reason: format!("run {} is already stored", run.run_id),
            })?;
        tx.execute(
            &dollar(rows::SET_WRITER),
            &[
                &crate::liveness::own_pid(),
                &crate::liveness::boot_id(),
                &id,
            ],
        )
        .map_err(self.err("recording the run"))?;
        tx.execute(
            "SELECT pg_advisory_lock($1, $2)",
            &[&RUN_LOCK_CLASS, &run_lock(id)],
        )
        .map_err(self.err("locking the run"))?;
        tx.commit().map_err(self.err("committing the run"))?;
        Ok(id)
    }

    pub fn add_result(&mut self, run_row: i64, seq: usize, result: &ResultRecord) -> Result<()> {
        let mut c = self.client.borrow_mut();
        let mut tx = c
            .transaction()
            .map_err(self.err("starting a transaction"))?;
        insert_result(&mut tx, run_row, seq, result)
            .map_err(|f| self.fail("storing a result", f))?;
        tx.commit().map_err(self.err("committing a result"))
    }

    pub fn finish_run(&mut self, run_row: i64, run: &RunRecord) -> Result<()> {
        let mut c = self.client.borrow_mut();
        c.execute(
            &dollar(rows::FINISH_RUN),
            &[
                &run.status.as_str(),
                &run.finished_at.map(|t| t.to_rfc3339()),
                &rows::to_json(&run.findings),
                &rows::to_json(&run.host),
                &run_row,
            ],
        )
        .map_err(self.err("finishing the run"))?;
        c.execute(
            "SELECT pg_advisory_unlock($1, $2)",
            &[&RUN_LOCK_CLASS, &run_lock(run_row)],
        )
        .map_err(self.err("unlocking the run"))?;
        Ok(())
    }

    /// One run in one transaction, through COPY; see the module doc.
    pub fn insert_run(&mut self, run: &RunRecord, source: &str) -> Result<Inserted> {
        self.ingest(|tx| copy_run(tx, run, source))
    }

    /// Several runs in one transaction (all or none).
    pub fn insert_runs(&mut self, runs: &[RunRecord], source: &str) -> Result<Vec<Inserted>> {
        self.ingest(|tx| runs.iter().map(|r| copy_run(tx, r, source)).collect())
    }

    /// Run `work` in a transaction and commit; when the connection is lost
    /// (a server restart), reconnect and do it all again, for up to
    /// `RECONNECT_FOR`. `work` must be idempotent (ingest by run id is).
    fn ingest<T>(
        &mut self,
        work: impl Fn(&mut Transaction<'_>) -> std::result::Result<T, Fail>,
    ) -> Result<T> {
        let deadline = Instant::now() + RECONNECT_FOR;
        loop {
            let attempt = {
                let mut c = self.client.borrow_mut();
                c.transaction().map_err(Fail::Pg).and_then(|mut tx| {
                    let v = work(&mut tx)?;
                    tx.commit()?;
                    Ok(v)
                })
            };
            match attempt {
                Ok(v) => return Ok(v),
                Err(f) if f.lost() && Instant::now() < deadline => self.reconnect(deadline)?,
                Err(f) => return Err(self.fail("storing a run", f)),
            }
        }
    }

    /// A new connection, retried until `deadline` while the server is away;
    /// said, since the wait may be long.
    fn reconnect(&mut self, deadline: Instant) -> Result<()> {
        let within = deadline.saturating_duration_since(Instant::now()).as_secs();
        crate::notice(&format!(
            "the connection to {} was lost; reconnecting (for up to {within} s)",
            self.path.display()
        ));
        loop {
            std::thread::sleep(Duration::from_millis(250));
            match self.config.connect(NoTls) {
                Ok(c) => {
                    *self.client.get_mut() = c;
                    self.statements.get_mut().clear();
                    crate::notice(&format!("reconnected to {}", self.path.display()));
                    return Ok(());
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(self.error("reconnecting after the connection was lost", &e))
                }
                Err(_) => {}
            }
        }
    }

    /// Rows of the reading statement `sql` (with `args`), decoded by `f`.
    fn rows<T>(
        &self,
        sql: &'static str,
        args: &Params<'_>,
        context: &str,
        f: impl Fn(&Decoder<'_>, &postgres::Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut c = self.client.borrow_mut();
        let stmt = match self.statements.borrow().get(sql) {
            Some(s) => s.clone(),
            None => c.prepare(&dollar(sql)).map_err(self.err(context))?,
        };
        self.statements.borrow_mut().insert(sql, stmt.clone());
        let d = Decoder { path: &self.path };
        c.query(&stmt, args)
            .map_err(self.err(context))?
            .iter()
            .map(|r| f(&d, r))
            .collect()
    }

    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        self.rows(rows::LIST_RUNS, &[], "listing runs", |d, r| d.summary(r))
    }

    pub fn run_with_id(&self, id: i64) -> Result<Vec<i64>> {
        self.rows(rows::RUN_BY_ID, &[&id], "looking up a run", |d, r| {
            d.int(r, 0)
        })
    }

    pub fn runs_with_prefix(&self, prefix: &str) -> Result<Vec<i64>> {
        self.rows(
            rows::RUNS_BY_UUID_PREFIX,
            &[&prefix.to_ascii_lowercase()],
            "looking up a run",
            |d, r| d.int(r, 0),
        )
    }

    pub fn latest_run_for_host(&self, host: &str) -> Result<Option<i64>> {
        let v = self.rows(
            rows::LATEST_COMPLETE,
            &[&host],
            "looking up a host",
            |d, r| d.int(r, 0),
        )?;
        Ok(v.into_iter().next())
    }

    pub fn latest_any_run_for_host(&self, host: &str) -> Result<Option<(i64, RunStatus)>> {
        let v = self.rows(rows::LATEST_ANY, &[&host], "looking up a host", |d, r| {
            Ok((d.int(r, 0)?, d.status(&d.text(r, 1)?)?))
        })?;
        Ok(v.into_iter().next())
    }

    pub fn hosts(&self) -> Result<Vec<String>> {
        self.rows(rows::HOSTS, &[], "listing hosts", |d, r| d.text(r, 0))
    }

    pub fn machine_rows(&self, alias_tag: &str) -> Result<Vec<MachineRow>> {
        self.rows(rows::MACHINE_ROWS, &[], "listing machines", |d, r| {
            d.machine_row(r, alias_tag)
        })
    }

    pub fn load_run(&self, id: i64) -> Result<RunRecord> {
        let run = self
            .rows(rows::LOAD_RUN, &[&id], "loading a run", |d, r| d.run(r))?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        let results = self.rows(rows::LOAD_RESULTS, &[&id], "loading results", |d, r| {
            d.result(r)
        })?;
        let metrics = self.rows(rows::LOAD_METRICS, &[&id], "loading metrics", |d, r| {
            d.metric(r)
        })?;
        Ok(rows::assemble(run, results, metrics))
    }

    /// Runs without their results in one query, in the order of `ids`.
    pub fn load_run_heads(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        let mut runs = self.runs_by_row(ids)?;
        ids.iter()
            .map(|id| {
                runs.remove(id)
                    .ok_or_else(|| StoreError::NotFound(id.to_string()))
            })
            .collect()
    }

    /// The runs of the rows `ids` without their results, by row.
    fn runs_by_row(&self, ids: &[i64]) -> Result<HashMap<i64, RunRecord>> {
        let list: Vec<i64> = ids.to_vec();
        Ok(self
            .rows(rows::LOAD_RUNS_ANY, &[&list], "loading runs", |d, r| {
                Ok((d.int(r, 13)?, d.run(r)?))
            })?
            .into_iter()
            .collect())
    }

    /// Many runs in three queries, in the order of `ids`.
    pub fn load_runs(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        let list: Vec<i64> = ids.to_vec();
        let mut runs = self.runs_by_row(ids)?;
        let mut results: HashMap<i64, Vec<(i64, ResultRecord)>> = HashMap::new();
        for (run, result) in self.rows(
            rows::LOAD_RESULTS_ANY,
            &[&list],
            "loading results",
            |d, r| Ok((d.int(r, 10)?, d.result(r)?)),
        )? {
            results.entry(run).or_default().push(result);
        }
        // By the results' own ids, which the metrics' unique index starts
        // with (a join on the run scanned every stored metric: 5 ms a run
        // over 40,000 of them).
        let result_ids: Vec<i64> = results.values().flatten().map(|(id, _)| *id).collect();
        let metrics = self.rows(
            rows::LOAD_METRICS_ANY,
            &[&result_ids],
            "loading metrics",
            |d, r| d.metric(r),
        )?;
        // Metrics go to their result whatever run it is in (result ids are
        // unique), so one pass serves every run.
        let mut by_result: HashMap<i64, Vec<Metric>> = HashMap::new();
        for (rid, m) in metrics {
            by_result.entry(rid).or_default().push(m);
        }
        ids.iter()
            .map(|id| {
                let run = runs
                    .remove(id)
                    .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
                let theirs = results.remove(id).unwrap_or_default();
                let metrics = theirs
                    .iter()
                    .flat_map(|(rid, _)| {
                        by_result
                            .remove(rid)
                            .unwrap_or_default()
                            .into_iter()
                            .map(move |m| (*rid, m))
                    })
                    .collect();
                Ok(rows::assemble(run, theirs, metrics))
            })
            .collect()
    }

    /// Run a writing token statement (its own transaction); rows changed.
    pub fn token_exec(&mut self, sql: &str, args: &[String], context: &str) -> Result<usize> {
        let n = self
            .client
            .get_mut()
            .execute(&dollar(sql), &token_args(args))
            .map_err(|e| self.error(context, &e))?;
        Ok(n as usize)
    }

    pub fn token_rows(
        &self,
        sql: &'static str,
        args: &[String],
        context: &str,
    ) -> Result<Vec<TokenRow>> {
        self.rows(sql, &token_args(args), context, crate::tokens::decode)
    }

    /// Whether the database answers a query.
    pub fn ping(&self) -> Result<()> {
        self.rows(crate::tokens::PING, &[], "checking the database", |_, r| {
            r.try_get::<_, i32>(0)
                .map_err(|e| self.error("checking the database", &e))
        })
        .map(|_| ())
    }

    pub fn delete_run(&mut self, id: i64) -> Result<bool> {
        let n = self
            .client
            .get_mut()
            .execute(&dollar(rows::DELETE_RUN), &[&id])
            .map_err(|e| self.error("deleting a run", &e))?;
        Ok(n > 0)
    }
}

rows::impl_row!(postgres::Row, try_get);

/// A token statement's text arguments as the driver takes them.
fn token_args(args: &[String]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|a| a as _).collect()
}

/// The second key of run `id`'s writer lock.
fn run_lock(id: i64) -> i32 {
    // Wrapping past 2^31 runs only makes two runs share a lock, which at
    // worst keeps a dead writer's run `running` a little longer.
    id as i32
}

/// `sysgauge_meta`'s (application id, version) if it exists, and whether a
/// `runs` table exists: what the database says it is, read without writing.
fn header(
    c: &mut impl postgres::GenericClient,
) -> std::result::Result<(Option<(i32, i64)>, bool), postgres::Error> {
    let row = c.query_one(
        "SELECT to_regclass('sysgauge_meta') IS NOT NULL, to_regclass('runs') IS NOT NULL",
        &[],
    )?;
    let (meta, runs): (bool, bool) = (row.get(0), row.get(1));
    if !meta {
        return Ok((None, runs));
    }
    let m = c.query_opt("SELECT application_id, version FROM sysgauge_meta", &[])?;
    Ok((m.map(|r| (r.get(0), r.get(1))), runs))
}

/// The run's header row, unless its run id is already stored (None).
fn insert_run_row(
    tx: &mut Transaction<'_>,
    run: &RunRecord,
    source: &str,
) -> std::result::Result<Option<i64>, postgres::Error> {
    let v = RunValues::of(run);
    let row = tx.query_opt(
        &dollar(rows::INSERT_RUN),
        &[
            &v.run_uuid,
            &v.schema_version,
            &v.command,
            &v.status,
            &v.started_at,
            &v.finished_at,
            &v.tool_version,
            &v.build_json,
            &v.host_name,
            &v.host_json,
            &v.profile,
            &v.label,
            &v.tags_json,
            &v.findings_json,
            &source,
        ],
    )?;
    Ok(row.map(|r| r.get(0)))
}

/// A value of a result row, bound as a parameter (INSERT) or written as
/// COPY text.
trait ResultField: ToSql + std::fmt::Display {}
impl<T: ToSql + std::fmt::Display> ResultField for T {}

/// A result's columns after `run_id` and `seq`, in `rows::RESULT_COLUMNS`'
/// order: what both ways of writing a result write.
fn result_fields(v: &ResultValues) -> [&(dyn ResultField + Sync); 11] {
    [
        &v.bench_id,
        &v.family,
        &v.workload_version,
        &v.params_json,
        &v.params_key,
        &v.details_json,
        &v.status,
        &v.status_json,
        &v.started_at,
        &v.duration_seconds,
        &v.findings_json,
    ]
}

/// One result and its metrics by INSERT (a run being measured).
fn insert_result(
    tx: &mut Transaction<'_>,
    run_row: i64,
    seq: usize,
    r: &ResultRecord,
) -> std::result::Result<(), Fail> {
    let v = ResultValues::of(r);
    let seq = rows::seq(seq);
    let args: Vec<&(dyn ToSql + Sync)> = [&run_row as &(dyn ToSql + Sync), &seq]
        .into_iter()
        .chain(result_fields(&v).map(|f| f as _))
        .collect();
    let result_row: i64 = tx
        .query_one(
            &format!(
                "INSERT INTO results ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
                rows::RESULT_COLUMNS
            ),
            &args,
        )?
        .get(0);
    let mut copy = String::new();
    metric_lines(&mut copy, result_row, r);
    if !copy.is_empty() {
        copy_in(
            tx,
            &format!("COPY metrics ({}) FROM STDIN", rows::METRIC_COLUMNS),
            &copy,
        )?;
    }
    Ok(())
}

impl rows::CompletingTx for &mut Transaction<'_> {
    type Error = Fail;
    fn stored(&mut self, id: i64) -> std::result::Result<(String, rows::StoredCases), Fail> {
        let status: String = self.query_one(&dollar(rows::RUN_STATUS), &[&id])?.get(0);
        let stored = self
            .query(&dollar(rows::STORED_CASES), &[&id])?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        Ok((status, stored))
    }
    fn insert_result(
        &mut self,
        id: i64,
        seq: usize,
        r: &ResultRecord,
    ) -> std::result::Result<(), Fail> {
        insert_result(self, id, seq, r)
    }
    fn complete_header(
        &mut self,
        id: i64,
        v: &RunValues,
        tags: &str,
    ) -> std::result::Result<(), Fail> {
        self.execute(
            &dollar(rows::COMPLETE_RUN),
            &[&v.status, &v.finished_at, &tags, &v.findings_json, &id],
        )?;
        Ok(())
    }
}

/// A whole run: the header by INSERT (idempotent), results and metrics by
/// COPY with result ids taken from their sequence beforehand.
fn copy_run(
    tx: &mut Transaction<'_>,
    run: &RunRecord,
    source: &str,
) -> std::result::Result<Inserted, Fail> {
    let Some(id) = insert_run_row(tx, run, source)? else {
        let id: i64 = tx
            .query_one(&dollar(rows::FIND_UUID), &[&run.run_id])?
            .get(0);
        return rows::complete_run(tx, id, run, source);
    };
    if run.results.is_empty() {
        return Ok(Inserted::New(id));
    }
    let ids: Vec<i64> = tx
        .query(
            "SELECT nextval(pg_get_serial_sequence('results', 'id')) FROM generate_series(1, $1::bigint)",
            &[&rows::seq(run.results.len())],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut results = String::new();
    let mut metrics = String::new();
    for ((i, r), rid) in run.results.iter().enumerate().zip(&ids) {
        let v = ResultValues::of(r);
        let seq = rows::seq(i);
        let lead: [&dyn std::fmt::Display; 3] = [rid, &id, &seq];
        copy_line(
            &mut results,
            lead.into_iter().chain(result_fields(&v).map(|f| f as _)),
        );
        metric_lines(&mut metrics, *rid, r);
    }
    copy_in(
        tx,
        &format!("COPY results (id, {}) FROM STDIN", rows::RESULT_COLUMNS),
        &results,
    )?;
    if !metrics.is_empty() {
        copy_in(
            tx,
            &format!("COPY metrics ({}) FROM STDIN", rows::METRIC_COLUMNS),
            &metrics,
        )?;
    }
    Ok(Inserted::New(id))
}

fn copy_in(tx: &mut Transaction<'_>, sql: &str, data: &str) -> std::result::Result<(), Fail> {
    let mut w = tx.copy_in(sql)?;
    w.write_all(data.as_bytes())?;
    w.finish()?;
    Ok(())
}

/// The COPY lines of result `result_row`'s metrics.
fn metric_lines(out: &mut String, result_row: i64, r: &ResultRecord) {
    for (i, m) in r.metrics.iter().enumerate() {
        let s = &m.summary;
        let fields: [&dyn std::fmt::Display; 14] = [
            &result_row,
            &rows::seq(i),
            &m.name,
            &m.unit.symbol(),
            &m.better.as_str(),
            &rows::to_json(&m.samples),
            &rows::seq(s.n),
            &s.median,
            &s.min,
            &s.max,
            &s.mean,
            &s.stddev,
            &s.cov,
            &s.mad,
        ];
        copy_line(out, fields);
    }
}

/// One line of COPY's text format: fields separated by tabs, with
/// backslash, tab, newline and carriage return escaped. (Rust prints an
/// f64 as the shortest text that reads back as the same number, so floats
/// cross exactly.)
fn copy_line<'a>(out: &mut String, fields: impl IntoIterator<Item = &'a dyn std::fmt::Display>) {
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        for ch in f.to_string().chars() {
            match ch {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c => out.push(c),
            }
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_is_escaped() {
        let mut out = String::new();
        copy_line(
            &mut out,
            [&"a\tb\\c\nd" as &dyn std::fmt::Display, &1.5f64, &-3i64],
        );
        assert_eq!(out, "a\\tb\\\\c\\nd\t1.5\t-3\n");
    }
}
