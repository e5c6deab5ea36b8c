//! The results database: every run, its results and their raw samples.
//!
//! All SQL of sysgauge lives in this crate. One `Store` with two backends,
//! chosen by what `--db` names: a file path is SQLite (the default; see
//! `sqlite`), a `postgres://` or `postgresql://` URL is PostgreSQL (see
//! `pg`). Both keep the same logical schema and the same guarantees:
//! - append-only migrations, numbered alike in both; a database from a newer
//!   sysgauge is refused, never "upgraded down"; two processes creating one
//!   database at once both succeed;
//! - a database that is not ours is refused before anything is written;
//! - the read-only door (`open_read_only`) never creates a file or a table;
//! - idempotent ingest by run id: inserting a run whose id is stored writes
//!   nothing and answers `AlreadyPresent`;
//! - one transaction per finished result while a run is measured, so an
//!   interrupted run keeps what it finished; opening for writing marks the
//!   `running` runs of writers that died `interrupted`;
//! - a whole run (import, fleet, sync) is stored in one transaction, so a
//!   crash or a server restart mid-ingest loses or duplicates nothing;
//! - raw samples stored as JSON arrays next to their summary, so statistics
//!   can be recomputed and comparisons can bootstrap.
//!
//! Every PostgreSQL call has a deadline (`pg_remote`): a server that
//! answers nothing, even to a new connection, fails the call within
//! [`FROZEN_AFTER`], and a cancelled run (see [`watch_cancel`]) stops
//! waiting within [`CANCEL_GRACE`].
//!
//! The store is addressed by a `Path` for both backends (a URL is a valid
//! path), which keeps every caller's `--db PATH` plumbing unchanged; the
//! store decides, and a URL never reaches the file system.

#![forbid(unsafe_code)]

mod dbpath;
mod liveness;
pub mod machines;
mod migrations;
mod pg;
mod pg_remote;
mod rows;
mod sink;
mod sqlite;
mod tokens;

pub use pg_remote::{watch_cancel, CANCEL_GRACE, FROZEN_AFTER};
pub use sink::StoreSink;
pub use tokens::{TokenAdded, TokenRow};

use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};
use sysgauge_core::record::{ResultRecord, RunRecord, RunStatus};

/// Marks a SQLite file (and a PostgreSQL schema) as a sysgauge database ("SGDB").
pub const APPLICATION_ID: i32 = 0x5347_4442;

/// What went wrong with the results database. Every `path` is shown
/// through [`display_name`] whoever built the error, so a PostgreSQL URL's
/// password never reaches a message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the results database {}: {reason}", display_name(.path))]
    Open { path: PathBuf, reason: String },
    #[error(
        "refusing to use {} as the results database: {reason}; pass --db with a file path",
        display_name(.path)
    )]
    Refused { path: PathBuf, reason: String },
    #[error("no results database at {}", display_name(.path))]
    Missing { path: PathBuf },
    #[error("the results database {} was written by a newer sysgauge (schema {found}, this version knows up to {supported}); upgrade sysgauge or pass --db with another file", display_name(.path))]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("{} is not a sysgauge results database; pass --db with another file or database", display_name(.path))]
    Foreign { path: PathBuf },
    /// A 0-byte file: what `mktemp` leaves. Writers take it as a new
    /// database, so readers see no runs in it rather than a foreign file.
    #[error("the results database {} is empty: no runs stored yet", display_name(.path))]
    Empty { path: PathBuf },
    #[error("the results database {} has schema version {found}, which no sysgauge writes (the version is missing or invalid); it is not a database this sysgauge can use: pass --db with another file", display_name(.path))]
    BadSchemaVersion { path: PathBuf, found: i64 },
    #[error("{path} is damaged ({what}): copy what can be read with `sqlite3 {path} .recover`, then pass --db with another file; nothing was written", path = display_name(.path))]
    Damaged { path: PathBuf, what: String },
    #[error("{path} belongs to user {owner} and is not writable by you (uid {uid}); read it with `sysgauge results list --db {path}`, or write to a database of your own with --db", path = display_name(.path))]
    NotWritable {
        path: PathBuf,
        owner: String,
        uid: u32,
    },
    /// SQLite's error is told in the message, not also given as the
    /// source: its text (and its own source's, `Error code N: …`) would
    /// print as causes repeating it.
    #[error("results database {}: {context}: {}", display_name(.path), sqlite_reason(.cause))]
    Sqlite {
        path: PathBuf,
        context: String,
        cause: rusqlite::Error,
    },
    #[error("results database {}: {context}: {reason}", display_name(.path))]
    Postgres {
        path: PathBuf,
        context: String,
        reason: String,
    },
    #[error("results database {}: stored data is damaged ({what})", display_name(.path))]
    Corrupt { path: PathBuf, what: String },
    #[error("no run '{0}' in the results database (see `sysgauge results list`)")]
    NotFound(String),
    #[error("'{key}' matches several runs ({matches}); give more of the id")]
    Ambiguous { key: String, matches: usize },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// SQLite's message with its extended result code, which says more than
/// the message (which call failed: a write, growing the shared-memory
/// file ...).
fn sqlite_reason(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            format!("{e} (SQLite error code {})", f.extended_code)
        }
        _ => e.to_string(),
    }
}

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
    /// The run was there without some of the record's results (its database
    /// failed mid-run, or as it ended): the missing results were added, its
    /// status, end, findings and tags set from the record, and the tag
    /// [`COMPLETED_FROM`] names what completed it.
    Completed {
        row: i64,
        added: usize,
    },
}

impl Inserted {
    /// The run's row, whatever was done.
    pub fn row(&self) -> i64 {
        match *self {
            Inserted::New(row) | Inserted::AlreadyPresent(row) => row,
            Inserted::Completed { row, .. } => row,
        }
    }
}

/// Tag of a run completed from its record after its database failed it
/// (value: `import`, `fleet`, `sync`: the source of the insert).
pub const COMPLETED_FROM: &str = "completed_from";

/// True when `db` names a PostgreSQL database (`postgres://…` or
/// `postgresql://…`) rather than a file.
/// Where the store says what a user waits for while it happens (a lost
/// PostgreSQL connection it reconnects to): set once by the program; unset,
/// nothing is said.
static NOTICE: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// Has the store's notices (one line each, no prefix) said by `say`.
pub fn on_notice(say: fn(&str)) {
    let _ = NOTICE.set(say);
}

fn notice(text: &str) {
    if let Some(say) = NOTICE.get() {
        say(text);
    }
}

pub fn is_url(db: &Path) -> bool {
    db.to_str().is_some_and(|s| {
        let s = s.to_ascii_lowercase();
        s.starts_with("postgres://") || s.starts_with("postgresql://")
    })
}

/// The files a SQLite database at `db` consists of: the file itself and
/// the `-wal`, `-shm` and `-journal` files SQLite keeps beside it (none for
/// a PostgreSQL URL). Whatever replaces one of them destroys the database:
/// the command line keeps output files off them.
pub fn database_files(db: &Path) -> Vec<std::path::PathBuf> {
    if is_url(db) {
        return Vec::new();
    }
    let mut files = vec![db.to_path_buf()];
    files.extend(sqlite::SIDE_FILES.iter().map(|s| sqlite::side_file(db, s)));
    files
}

/// True when `path` is a regular file that begins with SQLite's header
/// ("SQLite format 3"): some SQLite database, ours or not. Anything else,
/// or a file that cannot be read, is not.
pub fn is_sqlite_database(path: &Path) -> bool {
    sqlite::has_header(path)
}

/// `db` as it may be shown: a URL without its password (a path as it is).
/// The one redaction of database addresses: every message that names a
/// database goes through it (`StoreError` applies it to its `path` when
/// displayed), so no error path can print a password, whoever built it.
pub fn display_name(db: &Path) -> String {
    match db.to_str() {
        Some(s) if is_url(db) => redact_url(s),
        _ => db.display().to_string(),
    }
}

/// The URL without its password (in the user part or as a parameter).
fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (user, host) = authority.split_at(at);
            let user = user.split(':').next().unwrap_or_default();
            format!("{user}{host}")
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|p| !p.to_ascii_lowercase().starts_with("password="))
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}{authority}{tail}")
}

/// The results database; see the crate doc.
pub struct Store {
    backend: Backend,
}

enum Backend {
    Sqlite(sqlite::SqliteStore),
    Postgres(Box<pg_remote::PgRemote>),
}

/// The same call on whichever backend this store has.
macro_rules! on_backend {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            Backend::Sqlite($s) => $e,
            Backend::Postgres($s) => $e,
        }
    };
}

impl Store {
    /// Open for writing (creating if needed) the database `db`: a URL, or a
    /// regular file or a new path in an existing directory; anything else is
    /// refused before SQLite touches it. Runs left `running` by writers that
    /// died are marked interrupted (see `stale_runs`).
    pub fn open(db: &Path) -> Result<Store> {
        let backend = match url_of(db) {
            Some(url) => Backend::Postgres(Box::new(pg_remote::PgRemote::open(url)?)),
            None => Backend::Sqlite(sqlite::SqliteStore::open(db)?),
        };
        Ok(Store { backend })
    }

    /// Open an existing database for reading only (`results list`,
    /// `compare`, `report`…): never creates a file or a table, never
    /// migrates, never marks stale runs. A missing file, or a PostgreSQL
    /// database without our tables, is `StoreError::Missing`.
    pub fn open_read_only(db: &Path) -> Result<Store> {
        let backend = match url_of(db) {
            Some(url) => Backend::Postgres(Box::new(pg_remote::PgRemote::open_read_only(url)?)),
            None => Backend::Sqlite(sqlite::SqliteStore::open_read_only(db)?),
        };
        Ok(Store { backend })
    }

    /// Check, without opening anything, that `db` may become or is a
    /// results database (what `open` checks first), so that a command can
    /// refuse a bad `--db` before it does any work.
    pub fn check_path(db: &Path) -> Result<()> {
        match url_of(db) {
            Some(url) => pg::check_url(url),
            None => sqlite::SqliteStore::check_path(db),
        }
    }

    /// A private in-memory database (tests, `--no-store`).
    pub fn open_in_memory() -> Result<Store> {
        Ok(Store {
            backend: Backend::Sqlite(sqlite::SqliteStore::open_in_memory()?),
        })
    }

    /// Whether this store is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// The file, or the URL without its password.
    pub fn path(&self) -> &Path {
        on_backend!(&self.backend, s => s.path())
    }

    /// Row ids of the runs this open marked interrupted because their
    /// writer had died.
    pub fn stale_runs(&self) -> &[i64] {
        on_backend!(&self.backend, s => s.stale_runs())
    }

    /// "ok" when the database is sound (SQLite's `PRAGMA integrity_check`;
    /// PostgreSQL checks its own pages and constraints, so it answers "ok").
    pub fn integrity_check(&self) -> Result<String> {
        match &self.backend {
            Backend::Sqlite(s) => s.integrity_check(),
            Backend::Postgres(_) => Ok("ok".to_string()),
        }
    }

    /// Insert a run header (no results yet); returns its row id.
    pub fn begin_run(&mut self, run: &RunRecord, source: &str) -> Result<i64> {
        on_backend!(&mut self.backend, s => s.begin_run(run, source))
    }

    /// Append one finished result to run `run_row` in its own transaction.
    pub fn add_result(&mut self, run_row: i64, seq: usize, result: &ResultRecord) -> Result<()> {
        on_backend!(&mut self.backend, s => s.add_result(run_row, seq, result))
    }

    /// Record how a run ended (status, end time, run-level findings, host
    /// facts as finally known).
    pub fn finish_run(&mut self, run_row: i64, run: &RunRecord) -> Result<()> {
        on_backend!(&mut self.backend, s => s.finish_run(run_row, run))
    }

    /// Insert a complete run with all its results in one transaction
    /// (import, fleet, sync). A run whose id is already present is left
    /// alone.
    pub fn insert_run(&mut self, run: &RunRecord, source: &str) -> Result<Inserted> {
        on_backend!(&mut self.backend, s => s.insert_run(run, source))
    }

    /// Insert several runs atomically: either all new ones are stored or none.
    pub fn insert_runs(&mut self, runs: &[RunRecord], source: &str) -> Result<Vec<Inserted>> {
        on_backend!(&mut self.backend, s => s.insert_runs(runs, source))
    }

    /// All runs, newest first.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        on_backend!(&self.backend, s => s.list_runs())
    }

    /// Resolve a user's run reference: a row id (`12`), or a prefix of the
    /// run's UUID (at least 4 characters). A prefix of digits alone (one
    /// 4-character prefix in seven is) is a row id first, and the prefix
    /// when no row has that id.
    pub fn resolve_run(&self, key: &str) -> Result<i64> {
        let key = key.trim();
        let prefix = key.len() >= 4 && key.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
        let mut ids = match key.parse::<i64>() {
            Ok(id) => on_backend!(&self.backend, s => s.run_with_id(id))?,
            Err(_) => Vec::new(),
        };
        if ids.is_empty() && prefix {
            ids = on_backend!(&self.backend, s => s.runs_with_prefix(key))?;
        }
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
        on_backend!(&self.backend, s => s.latest_run_for_host(host))
    }

    /// The newest run of `host` whatever its status (to say why
    /// `latest_run_for_host` found none).
    pub fn latest_any_run_for_host(&self, host: &str) -> Result<Option<(i64, RunStatus)>> {
        on_backend!(&self.backend, s => s.latest_any_run_for_host(host))
    }

    /// Distinct host names, in order of their newest run.
    pub fn hosts(&self) -> Result<Vec<String>> {
        on_backend!(&self.backend, s => s.hosts())
    }

    /// Every complete (or imported) run with what identifies its machine,
    /// newest first: the host name, the identity (machine-id, DMI UUID and
    /// serial) and the fleet alias (the tag `alias_tag`). What makes a
    /// machine out of these is the caller's rule.
    pub fn machine_rows(&self, alias_tag: &str) -> Result<Vec<MachineRow>> {
        on_backend!(&self.backend, s => s.machine_rows(alias_tag))
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
        on_backend!(&self.backend, s => s.load_run(id))
    }

    /// Many whole runs, in the order of `ids` (one round trip per table on
    /// PostgreSQL, not per run).
    pub fn load_runs(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        on_backend!(&self.backend, s => s.load_runs(ids))
    }

    /// Runs as `load_runs` gives them but without their results (host
    /// facts, tags, times, status), for listings that need no numbers.
    pub fn load_run_heads(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        on_backend!(&self.backend, s => s.load_run_heads(ids))
    }

    /// Delete a run and everything it holds. Returns false if it did not exist.
    pub fn delete_run(&mut self, id: i64) -> Result<bool> {
        on_backend!(&mut self.backend, s => s.delete_run(id))
    }

    /// Whether the database answers (a query is made, not only a
    /// connection checked).
    pub fn ping(&self) -> Result<()> {
        on_backend!(&self.backend, s => s.ping())
    }

    /// Store a new upload token `name` by its hash (`token_hash`, made by
    /// the caller; the token itself never reaches the database).
    pub fn add_token(&mut self, name: &str, token_hash: &str) -> Result<TokenAdded> {
        let args = [
            name.to_string(),
            token_hash.to_string(),
            tokens::stamp(Utc::now()),
        ];
        let n = on_backend!(&mut self.backend, s => s.token_exec(tokens::INSERT_TOKEN, &args, "adding a token"))?;
        Ok(if n == 1 {
            TokenAdded::Added
        } else {
            TokenAdded::NameTaken
        })
    }

    /// Every upload token, by name (revoked ones too).
    pub fn list_tokens(&self) -> Result<Vec<TokenRow>> {
        on_backend!(&self.backend, s => s.token_rows(tokens::LIST_TOKENS, &[], "listing tokens"))
    }

    /// Revoke the token `name`; false when there is no such token or it
    /// was revoked already.
    pub fn revoke_token(&mut self, name: &str) -> Result<bool> {
        let args = [name.to_string(), tokens::stamp(Utc::now())];
        let n = on_backend!(&mut self.backend, s => s.token_exec(tokens::REVOKE_TOKEN, &args, "revoking a token"))?;
        Ok(n > 0)
    }

    /// The token whose hash is `token_hash`, revoked or not.
    pub fn token_by_hash(&self, token_hash: &str) -> Result<Option<TokenRow>> {
        let args = [token_hash.to_string()];
        Ok(
            on_backend!(&self.backend, s => s.token_rows(tokens::TOKEN_BY_HASH, &args, "checking a token"))?
                .into_iter()
                .next(),
        )
    }
}

fn url_of(db: &Path) -> Option<&str> {
    if is_url(db) {
        db.to_str()
    } else {
        None
    }
}

#[cfg(test)]
impl Store {
    /// The SQLite backend, for tests that look beneath the API.
    fn sqlite(&mut self) -> &mut sqlite::SqliteStore {
        match &mut self.backend {
            Backend::Sqlite(s) => s,
            Backend::Postgres(_) => panic!("not a SQLite store"),
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_pg;
