//! Append-only schema migrations. Migration i (counting from 1) brings the
//! schema version (SQLite's `user_version`, PostgreSQL's
//! `sysgauge_meta.version`) from i-1 to i. Never edit a migration that has
//! shipped; add a new one, to both lists: `POSTGRES[i]` is `MIGRATIONS[i]`
//! in PostgreSQL's dialect (BIGSERIAL for INTEGER PRIMARY KEY, BIGINT,
//! DOUBLE PRECISION, and the "C" collation on text that is ordered or
//! matched by prefix, so it behaves as SQLite's byte-wise text).

pub const MIGRATIONS: &[&str] = &[
    // 1: runs, results, metrics.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        run_uuid TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        command TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        tool_version TEXT NOT NULL,
        build_json TEXT NOT NULL,
        host_name TEXT NOT NULL,
        host_json TEXT NOT NULL,
        profile TEXT NOT NULL,
        label TEXT,
        tags_json TEXT NOT NULL,
        findings_json TEXT NOT NULL,
        source TEXT NOT NULL
    );
    CREATE INDEX runs_host ON runs(host_name, started_at);
    CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        bench_id TEXT NOT NULL,
        family TEXT NOT NULL,
        workload_version INTEGER NOT NULL,
        params_json TEXT NOT NULL,
        params_key TEXT NOT NULL,
        details_json TEXT NOT NULL,
        status TEXT NOT NULL,
        status_json TEXT NOT NULL,
        started_at TEXT NOT NULL,
        duration_seconds REAL NOT NULL,
        findings_json TEXT NOT NULL,
        UNIQUE (run_id, seq)
    );
    CREATE INDEX results_case ON results(bench_id, params_key);
    CREATE TABLE metrics (
        id INTEGER PRIMARY KEY,
        result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        unit TEXT NOT NULL,
        better TEXT NOT NULL,
        samples_json TEXT NOT NULL,
        n INTEGER NOT NULL CHECK (n > 0),
        median REAL NOT NULL,
        min REAL NOT NULL,
        max REAL NOT NULL,
        mean REAL NOT NULL,
        stddev REAL NOT NULL,
        cov REAL NOT NULL,
        mad REAL NOT NULL,
        UNIQUE (result_id, seq)
    );",
    // 2: who is running a run, so that a later sysgauge can tell a run whose
    // process died (SIGKILL, power loss) from one still going: the pid and
    // the kernel's boot id (a pid means nothing after a reboot).
    "ALTER TABLE runs ADD COLUMN pid INTEGER;
    ALTER TABLE runs ADD COLUMN boot_id TEXT;",
    // 3: the upload tokens of `sysgauge serve`: a name, the SHA-256 of the
    // token (never the token), when it was made and when it was revoked.
    "CREATE TABLE upload_tokens (
        name TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );",
];

/// `MIGRATIONS` for PostgreSQL, one for one.
pub const POSTGRES: &[&str] = &[
    // 1: runs, results, metrics.
    "CREATE TABLE runs (
        id BIGSERIAL PRIMARY KEY,
        run_uuid TEXT COLLATE \"C\" NOT NULL UNIQUE,
        schema_version BIGINT NOT NULL,
        command TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT COLLATE \"C\" NOT NULL,
        finished_at TEXT COLLATE \"C\",
        tool_version TEXT NOT NULL,
        build_json TEXT NOT NULL,
        host_name TEXT COLLATE \"C\" NOT NULL,
        host_json TEXT NOT NULL,
        profile TEXT NOT NULL,
        label TEXT,
        tags_json TEXT NOT NULL,
        findings_json TEXT NOT NULL,
        source TEXT NOT NULL
    );
    CREATE INDEX runs_host ON runs(host_name, started_at);
    CREATE TABLE results (
        id BIGSERIAL PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        bench_id TEXT NOT NULL,
        family TEXT NOT NULL,
        workload_version BIGINT NOT NULL,
        params_json TEXT NOT NULL,
        params_key TEXT NOT NULL,
        details_json TEXT NOT NULL,
        status TEXT NOT NULL,
        status_json TEXT NOT NULL,
        started_at TEXT COLLATE \"C\" NOT NULL,
        duration_seconds DOUBLE PRECISION NOT NULL,
        findings_json TEXT NOT NULL,
        UNIQUE (run_id, seq)
    );
    CREATE INDEX results_case ON results(bench_id, params_key);
    CREATE TABLE metrics (
        id BIGSERIAL PRIMARY KEY,
        result_id BIGINT NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        name TEXT NOT NULL,
        unit TEXT NOT NULL,
        better TEXT NOT NULL,
        samples_json TEXT NOT NULL,
        n BIGINT NOT NULL CHECK (n > 0),
        median DOUBLE PRECISION NOT NULL,
        min DOUBLE PRECISION NOT NULL,
        max DOUBLE PRECISION NOT NULL,
        mean DOUBLE PRECISION NOT NULL,
        stddev DOUBLE PRECISION NOT NULL,
        cov DOUBLE PRECISION NOT NULL,
        mad DOUBLE PRECISION NOT NULL,
        UNIQUE (result_id, seq)
    );",
    // 2: who is running a run (see MIGRATIONS[1]).
    "ALTER TABLE runs ADD COLUMN pid BIGINT;
    ALTER TABLE runs ADD COLUMN boot_id TEXT;",
    // 3: upload tokens (see MIGRATIONS[2]).
    "CREATE TABLE upload_tokens (
        name TEXT COLLATE \"C\" PRIMARY KEY,
        token_hash TEXT COLLATE \"C\" NOT NULL UNIQUE,
        created_at TEXT COLLATE \"C\" NOT NULL,
        revoked_at TEXT
    );",
];

/// A database at schema `version` is refused, untouched, when it is newer
/// than `migrations` (one backend's list) brings a schema to.
pub(crate) fn refuse_newer(
    path: &std::path::Path,
    version: i64,
    migrations: &[&str],
) -> crate::Result<()> {
    let supported = migrations.len() as i64;
    if version > supported {
        return Err(crate::StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            supported,
        });
    }
    Ok(())
}
