//! `remove_all_live` removes every live scratch directory; it is process-wide,
//! so it gets a test binary of its own.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use sysgauge_core::scratch::{live_dirs, remove_all_live, ScratchDir};

#[test]
fn remove_all_live_removes_everything() {
    let base = tempfile::tempdir().unwrap();
    let a = ScratchDir::create_in(base.path()).unwrap();
    let b = ScratchDir::create_in(base.path()).unwrap();
    std::fs::write(a.path().join("data"), vec![0u8; 4096]).unwrap();
    let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
    remove_all_live();
    assert!(!pa.exists() && !pb.exists());
    assert!(live_dirs().is_empty());
    drop((a, b));
}
