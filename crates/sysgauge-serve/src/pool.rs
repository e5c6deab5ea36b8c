//! A small pool of `Store` connections used from tokio. The store is
//! synchronous (rusqlite, the blocking `postgres` client, which must not
//! run on a tokio worker thread: it starts a runtime of its own), so every
//! call goes to `spawn_blocking` with a connection taken from the pool; the
//! semaphore bounds how many calls run at once to the number of
//! connections. SQLite connections to one file serialise their writes by
//! the file's lock (WAL, a busy timeout); PostgreSQL connections are
//! independent sessions.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use sysgauge_store::{Store, StoreError};
use tokio::sync::Semaphore;

pub(crate) struct Pool {
    db: PathBuf,
    idle: Mutex<Vec<Store>>,
    permits: Arc<Semaphore>,
    postgres: bool,
}

/// Why a store call did not answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PoolError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("the database call stopped unexpectedly: {0}")]
    Crashed(String),
}

impl Pool {
    /// Open the database (creating and migrating it if needed) and keep
    /// that first connection; up to `size` are used at once.
    pub fn open(db: PathBuf, size: usize) -> Result<Pool, StoreError> {
        let first = Store::open(&db)?;
        let postgres = first.is_postgres();
        Ok(Pool {
            db,
            idle: Mutex::new(vec![first]),
            permits: Arc::new(Semaphore::new(size.max(1))),
            postgres,
        })
    }

    pub fn is_postgres(&self) -> bool {
        self.postgres
    }

    /// Run `f` with a connection, off the async threads.
    pub async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, PoolError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|e| PoolError::Crashed(e.to_string()))?;
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let taken = pool.idle.lock().ok().and_then(|mut v| v.pop());
            let mut store = match taken {
                Some(s) => s,
                None => Store::open(&pool.db)?,
            };
            let out = f(&mut store);
            // A connection whose call failed may be broken (a lost
            // PostgreSQL session): dropped, a new one is opened next time.
            if out.is_ok() {
                if let Ok(mut idle) = pool.idle.lock() {
                    idle.push(store);
                }
            }
            Ok(out?)
        })
        .await
        .map_err(|e| PoolError::Crashed(e.to_string()))?
    }
}
