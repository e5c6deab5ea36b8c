//! Every PostgreSQL call with a deadline.
//!
//! The `postgres` client blocks without a timeout while it waits for the
//! server, and a frozen server (stopped with SIGSTOP, a hung host, a
//! silent network) never answers: its kernel, or nobody, keeps the TCP
//! connection up, so neither TCP timeouts nor keepalives notice, and a
//! server-side `statement_timeout` needs a server that runs. So the
//! connection lives in a thread of its own ([`PgStore`] there), each call
//! is sent to it, and the caller waits in short slices:
//! - after [`STALL`] without the answer, a new connection is tried (the
//!   probe). A server that answers it, even with an error (shutting down,
//!   refusing), is alive: the call is only slow (a big import, a lock held
//!   by another writer) and the wait goes on. A probe without any answer
//!   within [`PROBE`] means the server is frozen or unreachable: the call
//!   fails, naming the database (without its password), at most
//!   [`FROZEN_AFTER`] after it began;
//! - once the token given to [`watch_cancel`] is cancelled (SIGINT,
//!   SIGTERM, SIGHUP), a call still waiting gives up after [`CANCEL_GRACE`],
//!   so a signal is answered even while the server is frozen; a healthy
//!   server's answer (marking the run interrupted) takes milliseconds.
//!
//! After a call failed so, the connection is never used again (its thread
//! may stay blocked until the process exits): later calls fail at once
//! with the same reason, so a run goes on without its database and keeps
//! its measurements in its JSON record.

use crate::pg::{self, PgStore};
use crate::tokens::TokenRow;
use crate::{Inserted, MachineRow, Result, RunSummary, StoreError};
use postgres::NoTls;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use sysgauge_core::record::{ResultRecord, RunRecord, RunStatus};
use sysgauge_core::CancelToken;

/// Silence after which the server is probed with a new connection.
pub const STALL: Duration = Duration::from_secs(8);
/// How long the probe may take to get any answer.
pub const PROBE: Duration = Duration::from_secs(5);
/// Longest a call waits on a server that answers nothing.
pub const FROZEN_AFTER: Duration = Duration::from_secs(STALL.as_secs() + PROBE.as_secs());
/// How long a call still waits once the run was asked to stop.
pub const CANCEL_GRACE: Duration = Duration::from_secs(1);
/// How often a waiting call looks at the clock and the token.
const SLICE: Duration = Duration::from_millis(50);

static CANCEL: Mutex<Option<CancelToken>> = Mutex::new(None);

/// Lets waits on PostgreSQL end shortly after `token` is cancelled (the
/// token of the process's signal handler); replaces the token given
/// before.
pub fn watch_cancel(token: &CancelToken) {
    if let Ok(mut t) = CANCEL.lock() {
        *t = Some(token.clone());
    }
}

fn cancelled() -> bool {
    CANCEL
        .lock()
        .is_ok_and(|t| t.as_ref().is_some_and(CancelToken::is_cancelled))
}

type Job = Box<dyn FnOnce(&mut PgStore) + Send>;

/// A PostgreSQL store behind its connection thread; see the module doc.
pub(crate) struct PgRemote {
    /// None once dropped (the thread then closes the connection).
    jobs: Option<Sender<Job>>,
    worker: Option<JoinHandle<()>>,
    /// The URL, password included: only for the probe's connection.
    url: String,
    /// The URL without its password: what errors and `path()` show.
    path: PathBuf,
    stale: Vec<i64>,
    /// Why the connection is no longer used, once a call got no answer.
    broken: RefCell<Option<String>>,
}

/// What a wait ended with, when not with the call's own result.
enum Abandoned {
    Frozen,
    Interrupted,
    ThreadGone,
}

impl Abandoned {
    fn reason(&self) -> String {
        match self {
            Abandoned::Frozen => format!(
                "no answer from the server for {} s, and a new connection got none within {} s either: the server is frozen (stopped with SIGSTOP?), hung or unreachable; check it and run the command again",
                STALL.as_secs(),
                PROBE.as_secs()
            ),
            Abandoned::Interrupted => {
                "interrupted while waiting for the server's answer".to_string()
            }
            Abandoned::ThreadGone => "the connection's thread ended unexpectedly".to_string(),
        }
    }
}

impl PgRemote {
    pub fn open(url: &str) -> Result<PgRemote> {
        PgRemote::start(url, false)
    }

    pub fn open_read_only(url: &str) -> Result<PgRemote> {
        PgRemote::start(url, true)
    }

    fn start(url: &str, read_only: bool) -> Result<PgRemote> {
        // A malformed URL is refused here, at once.
        pg::check_url(url)?;
        let path = PathBuf::from(crate::display_name(Path::new(url)));
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, opened) = mpsc::channel::<Result<Vec<i64>>>();
        let owned = url.to_string();
        let worker = std::thread::Builder::new()
            .name("postgres".into())
            .spawn(move || {
                let store = if read_only {
                    PgStore::open_read_only(&owned)
                } else {
                    PgStore::open(&owned)
                };
                let mut store = match store {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                if ready.send(Ok(store.stale_runs().to_vec())).is_err() {
                    return;
                }
                while let Ok(job) = queue.recv() {
                    job(&mut store);
                }
            })
            .map_err(|e| StoreError::Open {
                path: path.clone(),
                reason: format!("cannot start the connection's thread: {e}"),
            })?;
        let stale = match wait(url, &opened) {
            Ok(r) => r?,
            Err(a) => {
                return Err(StoreError::Open {
                    path,
                    reason: a.reason(),
                })
            }
        };
        Ok(PgRemote {
            jobs: Some(jobs),
            worker: Some(worker),
            url: url.to_string(),
            path,
            stale,
            broken: RefCell::new(None),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn stale_runs(&self) -> &[i64] {
        &self.stale
    }

    /// Runs `f` on the connection's thread and waits for it (see the
    /// module doc).
    fn call<T: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce(&mut PgStore) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let failed = |reason: String| StoreError::Postgres {
            path: self.path.clone(),
            context: what.to_string(),
            reason,
        };
        if let Some(reason) = self.broken.borrow().as_ref() {
            return Err(failed(format!("not tried: {reason}")));
        }
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move |s| {
            let _ = tx.send(f(s));
        });
        if self.jobs.as_ref().is_none_or(|j| j.send(job).is_err()) {
            return Err(failed(Abandoned::ThreadGone.reason()));
        }
        match wait(&self.url, &rx) {
            Ok(r) => r,
            Err(a) => {
                let reason = a.reason();
                *self.broken.borrow_mut() = Some(reason.clone());
                Err(failed(reason))
            }
        }
    }

    pub fn begin_run(&mut self, run: &RunRecord, source: &str) -> Result<i64> {
        let (run, source) = (run.clone(), source.to_string());
        self.call("starting a run", move |s| s.begin_run(&run, &source))
    }

    pub fn add_result(&mut self, run_row: i64, seq: usize, result: &ResultRecord) -> Result<()> {
        let result = result.clone();
        self.call("storing a result", move |s| {
            s.add_result(run_row, seq, &result)
        })
    }

    pub fn finish_run(&mut self, run_row: i64, run: &RunRecord) -> Result<()> {
        let run = run.clone();
        self.call("finishing a run", move |s| s.finish_run(run_row, &run))
    }

    pub fn insert_run(&mut self, run: &RunRecord, source: &str) -> Result<Inserted> {
        let (run, source) = (run.clone(), source.to_string());
        self.call("storing a run", move |s| s.insert_run(&run, &source))
    }

    pub fn insert_runs(&mut self, runs: &[RunRecord], source: &str) -> Result<Vec<Inserted>> {
        let (runs, source) = (runs.to_vec(), source.to_string());
        self.call("storing runs", move |s| s.insert_runs(&runs, &source))
    }

    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        self.call("listing runs", |s| s.list_runs())
    }

    pub fn run_with_id(&self, id: i64) -> Result<Vec<i64>> {
        self.call("looking up a run", move |s| s.run_with_id(id))
    }

    pub fn runs_with_prefix(&self, prefix: &str) -> Result<Vec<i64>> {
        let prefix = prefix.to_string();
        self.call("looking up a run", move |s| s.runs_with_prefix(&prefix))
    }

    pub fn latest_run_for_host(&self, host: &str) -> Result<Option<i64>> {
        let host = host.to_string();
        self.call("looking up a host's latest run", move |s| {
            s.latest_run_for_host(&host)
        })
    }

    pub fn latest_any_run_for_host(&self, host: &str) -> Result<Option<(i64, RunStatus)>> {
        let host = host.to_string();
        self.call("looking up a host's latest run", move |s| {
            s.latest_any_run_for_host(&host)
        })
    }

    pub fn hosts(&self) -> Result<Vec<String>> {
        self.call("listing hosts", |s| s.hosts())
    }

    pub fn machine_rows(&self, alias_tag: &str) -> Result<Vec<MachineRow>> {
        let alias_tag = alias_tag.to_string();
        self.call("listing machines", move |s| s.machine_rows(&alias_tag))
    }

    pub fn load_run(&self, id: i64) -> Result<RunRecord> {
        self.call("loading a run", move |s| s.load_run(id))
    }

    pub fn load_runs(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        let ids = ids.to_vec();
        self.call("loading runs", move |s| s.load_runs(&ids))
    }

    pub fn load_run_heads(&self, ids: &[i64]) -> Result<Vec<RunRecord>> {
        let ids = ids.to_vec();
        self.call("loading runs", move |s| s.load_run_heads(&ids))
    }

    pub fn token_exec(
        &mut self,
        sql: &'static str,
        args: &[String],
        context: &str,
    ) -> Result<usize> {
        let (args, what) = (args.to_vec(), context.to_string());
        self.call(context, move |s| s.token_exec(sql, &args, &what))
    }

    pub fn token_rows(
        &self,
        sql: &'static str,
        args: &[String],
        context: &str,
    ) -> Result<Vec<TokenRow>> {
        let (args, what) = (args.to_vec(), context.to_string());
        self.call(context, move |s| s.token_rows(sql, &args, &what))
    }

    pub fn ping(&self) -> Result<()> {
        self.call("checking the database", |s| s.ping())
    }

    pub fn delete_run(&mut self, id: i64) -> Result<bool> {
        self.call("deleting a run", move |s| s.delete_run(id))
    }
}

impl Drop for PgRemote {
    /// Lets the thread close the connection properly (a healthy server
    /// answers in milliseconds); a connection that got no answer is left
    /// to the end of the process.
    fn drop(&mut self) {
        self.jobs = None;
        if self.broken.borrow().is_some() {
            return;
        }
        if let Some(worker) = self.worker.take() {
            let end = Instant::now() + CANCEL_GRACE;
            while !worker.is_finished() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(2));
            }
            if worker.is_finished() {
                let _ = worker.join();
            }
        }
    }
}

/// Waits for `rx`'s answer: until it comes, until a probe of `url` gets no
/// answer after a stall, or until shortly after a cancellation.
fn wait<T>(url: &str, rx: &Receiver<T>) -> std::result::Result<T, Abandoned> {
    let mut quiet_since = Instant::now();
    let mut probe: Option<(Receiver<()>, Instant)> = None;
    let mut cancel_seen: Option<Instant> = None;
    loop {
        match rx.recv_timeout(SLICE) {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Disconnected) => return Err(Abandoned::ThreadGone),
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        if cancelled() {
            let seen = *cancel_seen.get_or_insert(now);
            if now.duration_since(seen) >= CANCEL_GRACE {
                return Err(Abandoned::Interrupted);
            }
        }
        match &probe {
            None if now.duration_since(quiet_since) >= STALL => {
                probe = Some((start_probe(url), now));
            }
            Some((answered, started)) => match answered.try_recv() {
                // Alive: the call is slow, not stuck. Wait another stall.
                Ok(()) => {
                    probe = None;
                    quiet_since = now;
                }
                // The probe's connect timed out.
                Err(mpsc::TryRecvError::Disconnected) => return Err(Abandoned::Frozen),
                Err(mpsc::TryRecvError::Empty) if now.duration_since(*started) >= PROBE => {
                    return Err(Abandoned::Frozen);
                }
                Err(mpsc::TryRecvError::Empty) => {}
            },
            None => {}
        }
    }
}

/// A new connection to `url` in a thread of its own; the receiver hears
/// when the server answered anything (a session, or an error). Against a
/// frozen server the thread stays blocked until the process exits.
fn start_probe(url: &str) -> Receiver<()> {
    let (tx, rx) = mpsc::channel();
    let url = url.to_string();
    let spawned = std::thread::Builder::new()
        .name("postgres-probe".into())
        .spawn(move || {
            let answered = match pg::config_of(&url) {
                Ok(config) => match config.connect(NoTls) {
                    Ok(mut c) => {
                        let _ = c.simple_query("SELECT 1");
                        true
                    }
                    // An answer, even "refused" or "shutting down", is a
                    // live server; a timeout is not.
                    Err(e) => !is_timeout(&e),
                },
                Err(_) => true,
            };
            if answered {
                let _ = tx.send(());
            }
        });
    if spawned.is_err() {
        // No thread, no probe: take the server as alive rather than fail
        // a call that may only be slow.
        let (tx, rx) = mpsc::channel();
        let _ = tx.send(());
        return rx;
    }
    rx
}

/// Whether the connection attempt gave up for lack of an answer.
fn is_timeout(e: &postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::TimedOut;
        }
        source = s.source();
    }
    e.to_string().contains("timed out")
}
