//! The small state a fleet run leaves for `--retry-failed`: which hosts
//! failed (with how they were reached) and what they were to run. One JSON
//! file next to the results database (`<db>.fleet.json`), replaced
//! atomically (a temporary file renamed over it) after every fleet run, so
//! the retry of a retry sees only what still failed.

use crate::inventory::Host;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What the last fleet run left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetState {
    /// When the run ended (RFC 3339).
    pub finished_at: String,
    /// The sysgauge command line the hosts ran (`run --profile quick`).
    pub args: Vec<String>,
    /// The hosts that failed or were interrupted.
    pub failed: Vec<Host>,
}

/// Where the state of the fleet runs stored in `db` is kept.
pub fn state_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".fleet.json");
    db.with_file_name(name)
}

/// Where the run records of a fleet whose state is at `state_file` are
/// kept when the database refuses them (`<db>.fleet/` beside
/// `<db>.fleet.json`), for `sysgauge import`.
pub fn kept_dir(state_file: &Path) -> PathBuf {
    let name = state_file
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".json").to_string())
        .unwrap_or_else(|| "sysgauge.fleet".into());
    state_file.with_file_name(name)
}

/// The state at `path`; `Ok(None)` when no fleet run has left one.
pub fn load(path: &Path) -> Result<Option<FleetState>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: not a fleet state file: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes `state` to `path` atomically.
pub fn save(path: &Path, state: &FleetState) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let err = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    let text = serde_json::to_string_pretty(state).map_err(|e| e.to_string())?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_next_to_the_database() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = dir.path().join("results.db");
        let p = state_path(&db);
        assert_eq!(p, dir.path().join("results.db.fleet.json"));
        assert_eq!(load(&p), Ok(None));
        let mut h = Host::new("10.0.0.1");
        h.name = "pi".into();
        h.port = Some(2222);
        let s = FleetState {
            finished_at: "2026-01-01T00:00:00Z".into(),
            args: vec!["run".into(), "--profile".into(), "tiny".into()],
            failed: vec![h],
        };
        save(&p, &s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load(&p), Ok(Some(s)));
        std::fs::write(&p, "{").unwrap_or_else(|e| panic!("{e}"));
        assert!(load(&p).is_err());
    }
}
