//! The fleet's control directory (ssh control sockets, master logs) is
//! private whatever the umask. A file of its own with one test: the umask
//! is per process, and no other test may create files while it is 000.

use rustix::fs::Mode;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};
use sysgauge_core::CancelToken;
use sysgauge_fleet::inventory::Host;
use sysgauge_fleet::ssh::{control_dir, Connection, SshSettings};

/// The permission bits in octal, as `ls` and `chmod` speak of them.
fn mode(p: &Path) -> String {
    let m = std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode();
    format!("{:o}", m & 0o7777)
}

#[test]
fn control_dir_and_master_log_are_private_under_umask_000() {
    let old = rustix::process::umask(Mode::empty());
    let dir = control_dir();
    // A master that exits at once (`false` stands for ssh): its log is
    // still created in the directory before it starts.
    let log = dir.as_ref().ok().map(|d| {
        let settings = SshSettings {
            program: "false".into(),
            ..SshSettings::default()
        };
        let r = Connection::open(
            &Host::new("nowhere.invalid"),
            0,
            d.path(),
            &settings,
            Instant::now() + Duration::from_secs(30),
            &CancelToken::new(),
        );
        assert!(r.is_err(), "a master that exits cannot connect");
        d.path().join("0.log")
    });
    rustix::process::umask(old);
    let dir = dir.unwrap_or_else(|e| panic!("control_dir: {e}"));
    assert_eq!(mode(dir.path()), "700");
    let log = log.unwrap_or_else(|| panic!("no log"));
    assert_eq!(mode(&log), "600");
}
