//! `fleet run` killed outright (SIGKILL) mid-run: its `ssh -M -N` masters
//! and its control directory outlive it, and the next fleet run stops and
//! removes them.

use super::{available, measuring_tiny_md5, Lab};
use crate::common::{await_line, ctrl_c_exits_130, stderr_of, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_testkit::{processes_mentioning, ChildGuard};

/// The fleet's control directories in `tmp`.
fn control_dirs(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("sysgauge-fleet-")
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// The live ssh masters (`-M`) with their socket in `dir` (a zombie's
/// command line is empty, so it is not one).
fn masters_of(dir: &Path) -> Vec<i32> {
    processes_mentioning(&format!("ControlPath={}/", dir.display()))
        .into_iter()
        .filter(|p| p.cmdline.split(' ').any(|a| a == "-M"))
        .map(|p| p.pid)
        .collect()
}

/// A fleet of `hosts` lab hosts mid-run: every host running a long case,
/// the run's one control directory and its masters there.
struct MidRun {
    lab: Lab,
    sb: Sandbox,
    /// The fleet's own temporary directory: only this test's control
    /// directories are in it.
    tmp: tempfile::TempDir,
    addresses: Vec<String>,
    run: ChildGuard,
    dir: PathBuf,
}

fn fleet_mid_run(hosts: usize) -> MidRun {
    let mut lab = Lab::with_hosts(hosts);
    lab.start_first(hosts);
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let addresses: Vec<String> = lab.hosts.iter().map(|h| h.address.clone()).collect();
    let mut args: Vec<&str> = addresses.iter().map(String::as_str).collect();
    // Long enough to be stopped mid-run.
    args.extend(["--", "--profile", "standard", "--only", "hash.md5"]);
    let mut cmd = lab.fleet_cmd(&sb, &args);
    cmd.env("TMPDIR", tmp.path());
    let mut run = ChildGuard::spawn(&mut cmd);
    let end = Instant::now() + Duration::from_secs(180);
    // The hosts start in either order; a line once waited past is in `seen`.
    let all_running = |seen: &[String]| {
        addresses.iter().all(|a| {
            seen.iter()
                .any(|l| l.contains(&format!("fleet: {a}: running")))
        })
    };
    while !all_running(&run.seen) {
        let left = end.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero() && run.wait_for_line(": running", left),
            "not all hosts running:\n{}",
            run.output()
        );
    }
    // `ip netns exec` execs the command (no fork): the pid is sysgauge's.
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", run.pid())).unwrap();
    assert_eq!(comm.trim(), "sysgauge");
    let dirs = control_dirs(tmp.path());
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let dir = dirs[0].clone();
    assert_eq!(masters_of(&dir).len(), hosts, "{}", run.output());
    MidRun {
        lab,
        sb,
        tmp,
        addresses,
        run,
        dir,
    }
}

/// What runs on the hosts is their business (their reboot ends it); here
/// it would only take CPU from the rest of the test.
fn kill_remote_runs(lab: &Lab) {
    let remote: Vec<String> = processes_mentioning(&lab.tmp().display().to_string())
        .iter()
        .map(|p| p.pid.to_string())
        .collect();
    if !remote.is_empty() {
        let _ = std::process::Command::new("kill")
            .arg("-KILL")
            .args(&remote)
            .status();
    }
}

#[test]
fn masters_of_a_killed_run_are_stopped_by_the_next() {
    if !available() {
        return;
    }
    let m = fleet_mid_run(3);
    let (lab, sb, tmp, run, dir) = (m.lab, m.sb, m.tmp, m.run, m.dir);
    let addresses = m.addresses;
    let masters = masters_of(&dir);

    // SIGKILL (and reaped): nothing of sysgauge's runs after this.
    drop(run);
    kill_remote_runs(&lab);
    // The defect: the masters stay connected and the directory stays.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(masters_of(&dir), masters, "the masters outlive the run");
    assert!(dir.join("owner").is_file(), "{}", dir.display());

    // The next fleet run (one host, a short run) removes both first.
    let out = lab
        .fleet_cmd(&sb, &measuring_tiny_md5(&[addresses[0].as_str()]))
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let log = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let want = "sysgauge: removed what a killed fleet run left: 3 ssh masters, ";
    let line = log
        .lines()
        .find(|l| l.starts_with(want))
        .unwrap_or_else(|| panic!("no line saying what was removed:\n{log}"));
    assert!(line.ends_with(&dir.display().to_string()), "{line}");
    assert!(masters_of(&dir).is_empty(), "{:?}", masters_of(&dir));
    for pid in &masters {
        let alive = std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty());
        assert!(!alive, "master {pid} still runs");
    }
    assert!(!dir.exists(), "{} is still there", dir.display());
    // The second run's own directory went with it.
    assert!(
        control_dirs(tmp.path()).is_empty(),
        "{:?}",
        control_dirs(tmp.path())
    );
}

/// A second signal quits at once, and first stops the run's ssh masters
/// and removes its control directory (they live in process groups of their
/// own, so nothing else would end them).
#[test]
fn a_second_signal_stops_the_masters_and_removes_the_directory() {
    if !available() {
        return;
    }
    // The database and the temporary directory stay until the end.
    let MidRun {
        lab,
        mut run,
        dir,
        sb,
        tmp: _tmp,
        addresses,
    } = fleet_mid_run(2);
    run.interrupt();
    // Two signals close together can arrive as one (a pending signal is
    // not queued twice): the second is sent once the first is seen.
    await_line(
        &mut run,
        "finishing the current step",
        Duration::from_secs(30),
    );
    ctrl_c_exits_130(&mut run, Duration::from_secs(60));
    kill_remote_runs(&lab);
    assert!(masters_of(&dir).is_empty(), "{:?}", masters_of(&dir));
    assert!(!dir.exists(), "{} is still there", dir.display());
    // `--retry-failed` runs both again: the state says so, not a previous
    // run's.
    let state = format!("{}.fleet.json", sb.db().display());
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let failed: Vec<&str> = state["failed"]
        .as_array()
        .unwrap_or_else(|| panic!("{state}"))
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert_eq!(failed.len(), 2, "{state}");
    assert!(
        addresses.iter().all(|a| failed.contains(&a.as_str())),
        "{state}"
    );
}
