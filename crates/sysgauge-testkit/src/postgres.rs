//! A real PostgreSQL server for a test: `initdb` into a temporary
//! directory, `pg_ctl start` on a free loopback port (its unix socket in
//! the same directory), stopped and removed on drop. Debian's `postgresql`
//! package puts the programs in `/usr/lib/postgresql/<version>/bin`, off
//! PATH. initdb refuses to run as root, so as root the server runs as the
//! `postgres` user (`runuser`), its directory handed to that user.

use crate::system::{is_root, output_of_success};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest Debian PostgreSQL's programs (or `initdb` on PATH).
pub fn postgres_bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    dirs.sort();
    if let Some((_, d)) = dirs.pop() {
        return Some(d);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    })
}

/// A PostgreSQL server if one can be started here; None (test skipped)
/// when PostgreSQL is not installed, a failure under
/// `SYSGAUGE_REQUIRE_ALL=1` (see [`crate::require`]).
#[track_caller]
pub fn require_postgres(test: &str) -> Option<PgServer> {
    let bin = crate::require_some(
        &format!("{test}: needs PostgreSQL (initdb, pg_ctl)"),
        postgres_bin_dir(),
        "install Debian's postgresql package",
    )?;
    let root_ok = !is_root() || crate::on_path("runuser");
    if !crate::require(
        &format!("{test}: needs runuser to run PostgreSQL as the postgres user"),
        root_ok,
        "install util-linux",
    ) {
        return None;
    }
    Some(PgServer::start(&bin))
}

/// A running server; see the module doc.
pub struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    dir: PathBuf,
    _tmp: TempDir,
}

/// The server's directory, removed on drop (after the server stopped).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl PgServer {
    /// initdb and start a server using the programs in `bin`.
    pub fn start(bin: &Path) -> PgServer {
        let base = std::env::temp_dir().join(format!(
            "sysgauge-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir(&base).unwrap_or_else(|e| panic!("mkdir {}: {e}", base.display()));
        let tmp = TempDir(base.clone());
        if is_root() {
            output_of_success(Command::new("chown").args(["postgres:postgres"]).arg(&base));
        }
        let data = base.join("data");
        let server = PgServer {
            bin: bin.to_path_buf(),
            data,
            port: free_tcp_port(),
            dir: base,
            _tmp: tmp,
        };
        output_of_success(
            server
                .command("initdb")
                .args([
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "-D",
                ])
                .arg(&server.data),
        );
        server.pg_ctl(&["start"]);
        server
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c.current_dir(&self.dir);
            c
        } else {
            let mut c = Command::new(path);
            c.current_dir(&self.dir);
            c
        }
    }

    /// `pg_ctl ACTION` (`start`, `stop -m fast`, `restart -m immediate`),
    /// waiting for it to finish.
    pub fn pg_ctl(&self, args: &[&str]) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.display()
        );
        output_of_success(
            self.command("pg_ctl")
                .args(["-w", "-t", "60", "-D"])
                .arg(&self.data)
                .arg("-l")
                .arg(self.dir.join("server.log"))
                .args(["-o", &opts])
                .args(args),
        );
    }

    /// `pg_ctl restart -m MODE` (fast: sessions ended; immediate: a crash,
    /// recovered from the write-ahead log).
    pub fn restart(&self, mode: &str) {
        self.pg_ctl(&["restart", "-m", mode]);
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `db` (see [`PgServer::create_database`]).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// The URL of database `db` through the server's unix socket: reachable
    /// from another network namespace, where 127.0.0.1 is not this one's.
    pub fn socket_url(&self, db: &str) -> String {
        format!(
            "postgres://postgres@/{db}?host={}&port={}",
            self.dir.display(),
            self.port
        )
    }

    /// Create database `name` (empty) and return its URL.
    pub fn create_database(&self, name: &str) -> String {
        output_of_success(
            self.command("createdb")
                .args(["-h", "127.0.0.1", "-U", "postgres", "-p"])
                .arg(self.port.to_string())
                .arg(name),
        );
        self.url(name)
    }

    /// Run SQL in database `db` with psql (test set-up and checks); its
    /// output, unaligned and without headers.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = output_of_success(
            self.command("psql")
                .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
                .args(["-U", "postgres", "-p"])
                .arg(self.port.to_string())
                .args(["-d", db, "-c", sql]),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-w", "-D"])
            .arg(&self.data)
            .args(["stop", "-m", "immediate"])
            .output();
    }
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A TCP port on 127.0.0.1 that was free a moment ago.
fn free_tcp_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|s| s.local_addr())
        .unwrap_or_else(|e| panic!("no free TCP port: {e}"))
        .port()
}
