//! What a fleet run killed outright (SIGKILL, a crash, the OOM killer)
//! leaves behind, and its removal by the next fleet run.
//!
//! A killed run cannot close its `ssh -M -N` masters: they are its
//! children, outlive it, and keep their connections (and the private
//! control directory with its sockets) for as long as the hosts answer
//! their keep-alives, that is for ever. So:
//! - each control directory holds an owner file, written at its creation:
//!   the fleet process's pid and its start time (field 22 of
//!   /proc/PID/stat), so a reused pid is not taken for the owner;
//! - [`reap_abandoned`], called by every `fleet run` and `fleet net` before
//!   it makes its own directory, finds the directories whose owner is gone,
//!   stops the ssh processes still using them and removes them.
//!
//! The ssh processes of a directory are found in /proc, by the
//! `ControlPath=DIR/…` argument every ssh of ours is started with (ours,
//! same uid, program named ssh…), not from pid files written beside the
//! sockets: a pid recorded after the spawn misses a master started just
//! before the kill, while the command line is there from the first
//! instant, names the directory exactly (its name is random), and also
//! finds the multiplexed clients a killed run left. Nothing else is ever
//! signalled, and each process's start time is checked again before each
//! signal.
//!
//! A directory of a live fleet run is never touched. One without a
//! readable owner file (made by an older sysgauge, or by a run killed in
//! the instant between creating it and writing the file) is removed only
//! when nothing uses it and it has not changed for a day.
//!
//! A live fleet run told to quit at once (a second Ctrl-C) has no time to
//! close its connections one by one: [`stop_and_remove`] stops the ssh
//! processes of its own directory the same way and removes it.
//!
//! Linux only (it needs /proc); elsewhere nothing is done. Every loop is
//! bounded in count and time.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use sysgauge_core::scratch::own_directory;

/// The name of a control directory's owner file.
pub const OWNER_FILE: &str = "owner";
/// The prefix of a control directory's name in the temporary directory.
pub const DIR_PREFIX: &str = "sysgauge-fleet-";

/// Entries of the temporary directory looked at, at most.
const MAX_ENTRIES: usize = 100_000;
/// Processes in /proc looked at, at most (pid_max is at most 2^22).
const MAX_PROCS: usize = 1 << 22;
/// The whole clean-up's time, at most (then the rest waits for the next run).
const BUDGET: Duration = Duration::from_secs(15);
/// How long stopped processes get to exit after SIGTERM, then after SIGKILL.
const GRACE: Duration = Duration::from_secs(2);
/// How old a directory without an owner file must be to be removed.
const UNOWNED_AGE: Duration = Duration::from_secs(24 * 3600);

/// What was removed for one abandoned control directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaped {
    pub dir: PathBuf,
    /// `ssh -M` masters stopped.
    pub masters: usize,
    /// Other ssh processes on its sockets stopped (multiplexed commands).
    pub clients: usize,
}

impl std::fmt::Display for Reaped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
        write!(f, "removed what a killed fleet run left: ")?;
        write!(f, "{}", n(self.masters, "ssh master"))?;
        if self.clients > 0 {
            write!(f, ", {}", n(self.clients, "ssh client"))?;
        }
        write!(f, ", {}", self.dir.display())
    }
}

/// State (field 3) and start time (field 22) of a process, from
/// /proc/PID/stat; `None` when there is no such process.
fn stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let start = fields.nth(22 - 4)?.parse().ok()?;
    Some((state, start))
}

/// `pid`'s start time, when it is a live process (not a zombie).
pub fn start_time(pid: u32) -> Option<u64> {
    stat(pid).and_then(|(state, start)| (state != 'Z' && state != 'X').then_some(start))
}

/// Is `pid` still the process that started at `start`?
fn is_alive(pid: u32, start: u64) -> bool {
    start_time(pid) == Some(start)
}

/// Writes `dir`'s owner file naming `pid` (which must be alive: its start
/// time is read now).
pub fn write_owner(dir: &Path, pid: u32) -> std::io::Result<()> {
    let start = start_time(pid).ok_or_else(|| {
        std::io::Error::other(format!("cannot read the start time of process {pid}"))
    })?;
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join(OWNER_FILE))?;
    f.write_all(format!("{pid} {start}\n").as_bytes())
}

/// The owner file's pid and start time; `None` when absent or unreadable.
fn read_owner(dir: &Path) -> Option<(u32, u64)> {
    let text = std::fs::read_to_string(dir.join(OWNER_FILE)).ok()?;
    let mut w = text.split_ascii_whitespace();
    let pid = w.next()?.parse().ok()?;
    let start = w.next()?.parse().ok()?;
    w.next().is_none().then_some((pid, start))
}

/// `dir` with symbolic links resolved, so that a directory named through
/// another path (a `TMPDIR` that differs by a link) is still the same.
fn same_path(dir: PathBuf) -> PathBuf {
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// An ssh process of ours using a control socket.
#[derive(Debug, Clone)]
struct SshProc {
    pid: u32,
    start: u64,
    /// The directory of its `ControlPath`.
    dir: PathBuf,
    master: bool,
}

/// The ssh processes of this user with a `ControlPath=` in a
/// `sysgauge-fleet-*` directory.
fn ssh_processes(uid: u32, deadline: Instant) -> Vec<SshProc> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in entries.flatten().take(MAX_PROCS) {
        if Instant::now() >= deadline {
            break;
        }
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if std::fs::metadata(e.path()).ok().map(|m| m.uid()) != Some(uid) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let Some(program) = args.first() else {
            continue;
        };
        let name = program.rsplit(|b| *b == b'/').next().unwrap_or_default();
        if !name.starts_with(b"ssh") {
            continue;
        }
        let Some(dir) = args.iter().find_map(|a| {
            let path = Path::new(OsStr::from_bytes(a.strip_prefix(b"ControlPath=")?));
            let dir = path.parent()?;
            dir.file_name()?
                .to_str()?
                .starts_with(DIR_PREFIX)
                .then(|| dir.to_path_buf())
        }) else {
            continue;
        };
        let Some(start) = start_time(pid) else {
            continue;
        };
        found.push(SshProc {
            pid,
            start,
            dir: same_path(dir),
            master: args.iter().any(|a| *a == b"-M"),
        });
    }
    found
}

/// Sends `signal` to each process still the one found, then waits until
/// none is left or `grace` passed; returns those left.
fn signal_and_wait(
    procs: Vec<SshProc>,
    signal: rustix::process::Signal,
    grace: Duration,
) -> Vec<SshProc> {
    for p in &procs {
        // Checked just before: a pid reused since the scan is not signalled.
        if is_alive(p.pid, p.start) {
            if let Some(pid) = i32::try_from(p.pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }
    let end = Instant::now() + grace;
    let mut left = procs;
    loop {
        // A stopped master is no longer our child: it is not waited for
        // here, and a zombie counts as gone.
        left.retain(|p| is_alive(p.pid, p.start));
        if left.is_empty() || Instant::now() >= end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops every ssh process using the control directory `dir` (this
/// process's own, when it must quit at once) and removes the directory;
/// returns what was stopped.
pub fn stop_and_remove(dir: &Path) -> Reaped {
    let mut reaped = Reaped {
        dir: dir.to_path_buf(),
        masters: 0,
        clients: 0,
    };
    if Path::new("/proc/self/stat").exists() {
        let uid = rustix::process::geteuid().as_raw();
        let key = same_path(dir.to_path_buf());
        let users: Vec<SshProc> = ssh_processes(uid, Instant::now() + BUDGET)
            .into_iter()
            .filter(|p| p.dir == key)
            .collect();
        reaped.masters = users.iter().filter(|p| p.master).count();
        reaped.clients = users.len() - reaped.masters;
        let left = signal_and_wait(users, rustix::process::Signal::TERM, GRACE);
        signal_and_wait(left, rustix::process::Signal::KILL, GRACE);
    }
    let _ = std::fs::remove_dir_all(dir);
    reaped
}

/// Removes the control directories in `tmp` (the temporary directory the
/// fleet makes them in) that fleet runs no longer alive left behind, with
/// the ssh processes still using them; returns what was removed. See the
/// module's notes for what counts as abandoned.
pub fn reap_abandoned(tmp: &Path) -> Vec<Reaped> {
    let mut reaped = Vec::new();
    if !Path::new("/proc/self/stat").exists() {
        return reaped;
    }
    let deadline = Instant::now() + BUDGET;
    let uid = rustix::process::geteuid().as_raw();
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return reaped;
    };
    // Candidates first: the /proc scan is made only when one is found.
    let mut candidates: Vec<(PathBuf, bool)> = Vec::new();
    for e in entries.flatten().take(MAX_ENTRIES) {
        if !e.file_name().to_string_lossy().starts_with(DIR_PREFIX) {
            continue;
        }
        let dir = e.path();
        let Some(meta) = own_directory(&dir) else {
            continue;
        };
        match read_owner(&dir) {
            Some((pid, start)) if is_alive(pid, start) => {}
            Some(_) => candidates.push((dir, true)),
            None => {
                let old = meta
                    .modified()
                    .ok()
                    .and_then(|m| SystemTime::now().duration_since(m).ok())
                    .is_some_and(|age| age >= UNOWNED_AGE);
                if old {
                    candidates.push((dir, false));
                }
            }
        }
    }
    if candidates.is_empty() {
        return reaped;
    }
    let procs = ssh_processes(uid, deadline);
    for (dir, owned) in candidates {
        if Instant::now() >= deadline {
            break;
        }
        let key = same_path(dir.clone());
        let users: Vec<SshProc> = procs.iter().filter(|p| p.dir == key).cloned().collect();
        if !owned && !users.is_empty() {
            // No owner to tell whether a run still uses them: left alone.
            continue;
        }
        let masters = users.iter().filter(|p| p.master).count();
        let clients = users.len() - masters;
        let left = signal_and_wait(users, rustix::process::Signal::TERM, GRACE);
        let left = signal_and_wait(left, rustix::process::Signal::KILL, GRACE);
        if !left.is_empty() {
            // Not ours to remove while something still uses it.
            continue;
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            reaped.push(Reaped {
                dir,
                masters,
                clients,
            });
        }
    }
    reaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};

    fn sleeper() -> Child {
        Command::new("sleep")
            .arg("60")
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("sleep: {e}"))
    }

    fn control_dir_in(tmp: &Path, name: &str) -> PathBuf {
        let d = tmp.join(format!("{DIR_PREFIX}{name}"));
        std::fs::create_dir(&d).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("0.log"), "").unwrap_or_else(|e| panic!("{e}"));
        d
    }

    /// A stand-in for an ssh master of `dir`: a shell whose command line
    /// is an ssh master's (argv[0] `ssh`, `-M`, `ControlPath=DIR/0.sock`).
    fn fake_master(dir: &Path) -> Child {
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .arg0("ssh")
            .args(["-c", "trap 'kill $!; exit' TERM; sleep 60 & wait", "x"])
            .args(["-M", "-N", "-o"])
            .arg(format!("ControlPath={}", dir.join("0.sock").display()))
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("sh: {e}"))
    }

    /// Waits (bounded) until `child` has put `needle` in its command line.
    fn wait_cmdline(child: &Child, needle: &str) {
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            let c = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap_or_default();
            if String::from_utf8_lossy(&c).contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("{needle} never in the command line of {}", child.id());
    }

    /// Waits (bounded) until a fake master is fully up: its command line
    /// shows the control path and its background `sleep` has replaced the
    /// forked copy of the shell, which until then carries the same command
    /// line and would count as a second master.
    fn wait_master(master: &Child) {
        wait_cmdline(master, "ControlPath=");
        let parent = master.id().to_string();
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            let slept = std::fs::read_dir("/proc")
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| {
                    let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                    // Fields after the ")" of the command name: state, ppid, ...
                    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                    after.split_whitespace().nth(1) == Some(parent.as_str())
                        && stat.contains("(sleep)")
                });
            if slept {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the fake master {parent} never started its sleep");
    }

    #[test]
    fn dead_or_replaced_owners_dirs_are_reaped_live_ones_are_not() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut live = sleeper();
        let mut dead = sleeper();

        // A live owner: never touched, nor its master.
        let kept = control_dir_in(tmp.path(), "live");
        write_owner(&kept, live.id()).unwrap_or_else(|e| panic!("{e}"));
        let mut kept_master = fake_master(&kept);
        wait_master(&kept_master);

        // An owner that died, with a master and an unrelated process.
        let orphaned = control_dir_in(tmp.path(), "dead");
        write_owner(&orphaned, dead.id()).unwrap_or_else(|e| panic!("{e}"));
        dead.kill().unwrap_or_else(|e| panic!("{e}"));
        dead.wait().unwrap_or_else(|e| panic!("{e}"));
        let mut master = fake_master(&orphaned);
        wait_master(&master);
        let mut bystander = sleeper();

        // The owner's pid is alive but started at another time: a reused pid.
        let reused = control_dir_in(tmp.path(), "reused");
        let start = start_time(live.id()).unwrap_or_else(|| panic!("no start time"));
        std::fs::write(
            reused.join(OWNER_FILE),
            format!("{} {}\n", live.id(), start + 1),
        )
        .unwrap_or_else(|e| panic!("{e}"));

        // No owner file, recent: left alone.
        let unowned = control_dir_in(tmp.path(), "unowned");

        let mut got = reap_abandoned(tmp.path());
        got.sort_by(|a, b| a.dir.cmp(&b.dir));
        assert_eq!(
            got,
            vec![
                Reaped {
                    dir: orphaned.clone(),
                    masters: 1,
                    clients: 0
                },
                Reaped {
                    dir: reused.clone(),
                    masters: 0,
                    clients: 0
                },
            ]
        );
        assert_eq!(
            got[0].to_string(),
            format!(
                "removed what a killed fleet run left: 1 ssh master, {}",
                orphaned.display()
            )
        );
        assert!(!orphaned.exists() && !reused.exists());
        assert!(kept.join("0.log").exists() && unowned.join("0.log").exists());
        // The abandoned master was stopped (it has ended by now, waiting
        // only to be reaped), the live run's master and the bystander not.
        assert!(master.try_wait().ok().flatten().is_some());
        assert!(kept_master.try_wait().ok().flatten().is_none());
        assert!(bystander.try_wait().ok().flatten().is_none());
        assert!(live.try_wait().ok().flatten().is_none());

        // Once the live owner dies, its directory goes too; a second pass
        // over nothing abandoned does nothing.
        live.kill().unwrap_or_else(|e| panic!("{e}"));
        live.wait().unwrap_or_else(|e| panic!("{e}"));
        let got = reap_abandoned(tmp.path());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].dir, kept);
        assert!(kept_master.try_wait().ok().flatten().is_some());
        assert!(reap_abandoned(tmp.path()).is_empty());
        assert!(unowned.exists());
        let _ = bystander.kill();
        let _ = bystander.wait();
    }

    #[test]
    fn an_owner_file_names_this_process() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        write_owner(tmp.path(), std::process::id()).unwrap_or_else(|e| panic!("{e}"));
        let (pid, start) = read_owner(tmp.path()).unwrap_or_else(|| panic!("unreadable"));
        assert_eq!(pid, std::process::id());
        assert!(is_alive(pid, start));
        assert!(!is_alive(pid, start + 1));
        // Written once: a second owner is refused.
        assert!(write_owner(tmp.path(), std::process::id()).is_err());
    }
}
