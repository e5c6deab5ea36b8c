//! Naming machines on the command line: a stored run (row number or run-id
//! prefix) or a host name (its latest run stands for it).

use anyhow::Result;
use sysgauge_store::{Store, StoreError};

/// The stored run `key` names: a host name first (its latest run), then a
/// run number or run-id prefix. `Ok(None)` when nothing matches.
pub fn resolve_stored(store: &Store, key: &str) -> Result<Option<i64>> {
    let key = key.trim();
    if let Some(row) = store.latest_run_for_host(key)? {
        return Ok(Some(row));
    }
    match store.resolve_run(key) {
        Ok(row) => Ok(Some(row)),
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
