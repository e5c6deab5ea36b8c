//! Per-process CPU time from /proc/PID/stat, for `sysgauge procs`: which
//! processes burn user and kernel time, in which state they are, and (over
//! an interval) how much CPU each used.
//!
//! Parsing follows proc(5) with the one trap it warns about: the command
//! name (`comm`, field 2) is in parentheses but may itself contain spaces,
//! parentheses and even newlines, so the fields after it are found from the
//! LAST `)` of the line, never by splitting on spaces. Processes come and
//! go while /proc is read: an entry that vanishes between the directory
//! listing and the read is counted as vanished, one that cannot be read
//! (hidepid, permissions) as unreadable; neither is an error. Two snapshots
//! are matched by pid and start time, so a pid reused during the interval is
//! a new process, not a negative delta.
//!
//! Beside the processes, the machine as `top` shows it in its header: the
//! CPU line (us/sy/ni/id/wa/hi/si/st, in total and per CPU) from the `cpu`
//! lines of /proc/stat, the load average from /proc/loadavg and the running
//! and blocked counts from /proc/stat. Over an interval the CPU line covers
//! the interval; from one snapshot it covers the time since boot. Together
//! they tell "busy" from "waiting": a load average well above the running
//! count means tasks in uninterruptible sleep (usually I/O), not CPU demand.

use crate::telemetry::{parse_cpu_lines, parse_stat_counter, CpuTimes};
use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

/// Version of the `--json` document.
pub const PROCS_JSON_VERSION: u32 = 2;

/// The fields of /proc/PID/stat that `procs` uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: i32,
    /// The command name (`comm`), verbatim.
    pub comm: String,
    /// R, S, D, Z, T, t, X, I, ...
    pub state: char,
    /// Parent process id.
    pub ppid: i32,
    /// Clock ticks (USER_HZ) in user and kernel mode.
    pub utime: u64,
    /// See `utime`.
    pub stime: u64,
    /// Ticks of waited-for children, user and kernel mode (a process's own
    /// total is all four).
    pub cutime: u64,
    /// See `cutime`.
    pub cstime: u64,
    /// Number of threads.
    pub threads: i64,
    /// Start time after boot, in clock ticks (identifies the process
    /// together with the pid).
    pub starttime: u64,
    /// Resident set size in pages (field 24); `None` when the line stops
    /// before it.
    pub rss_pages: Option<u64>,
}

/// Why a /proc/PID/stat line did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StatError {
    /// The command name's `(` is missing.
    #[error("no '(' before the command name")]
    NoOpenParen,
    /// The command name's `)` is missing.
    #[error("no ')' after the command name")]
    NoCloseParen,
    /// The first field is not a pid.
    #[error("the pid '{0}' is not a number")]
    BadPid(String),
    /// The line ends too early.
    #[error("only {0} fields after the command name")]
    TooFewFields(usize),
    /// A numeric field is not a number.
    #[error("field {field} ('{value}') is not a number")]
    BadField {
        /// 1-based field number, as in proc(5).
        field: usize,
        /// What the field held.
        value: String,
    },
}

/// Parse one /proc/PID/stat line.
pub fn parse_stat(text: &str) -> Result<ProcStat, StatError> {
    let open = text.find('(').ok_or(StatError::NoOpenParen)?;
    let close = text.rfind(')').ok_or(StatError::NoCloseParen)?;
    if close < open {
        return Err(StatError::NoCloseParen);
    }
    let pid_text = text[..open].trim();
    let pid: i32 = pid_text
        .parse()
        .map_err(|_| StatError::BadPid(pid_text.to_string()))?;
    let comm = text[open + 1..close].to_string();
    // Fields 3.. (1-based, as in proc(5)).
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    if rest.len() < 20 {
        return Err(StatError::TooFewFields(rest.len()));
    }
    let field = |n: usize| rest[n - 3];
    let num = |n: usize| -> Result<u64, StatError> {
        field(n).parse().map_err(|_| StatError::BadField {
            field: n,
            value: field(n).to_string(),
        })
    };
    let int = |n: usize| -> Result<i64, StatError> {
        field(n).parse().map_err(|_| StatError::BadField {
            field: n,
            value: field(n).to_string(),
        })
    };
    let state = field(3).chars().next().unwrap_or('?');
    Ok(ProcStat {
        pid,
        comm,
        state,
        ppid: i32::try_from(int(4)?).unwrap_or(-1),
        utime: num(14)?,
        stime: num(15)?,
        // Signed in proc(5), never negative in practice.
        cutime: u64::try_from(int(16)?).unwrap_or(0),
        cstime: u64::try_from(int(17)?).unwrap_or(0),
        threads: int(20)?,
        starttime: num(22)?,
        // Signed in proc(5); a kernel thread has 0.
        rss_pages: rest
            .get(24 - 3)
            .and_then(|f| f.parse::<i64>().ok())
            .map(|v| u64::try_from(v).unwrap_or(0)),
    })
}

/// Every process at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The processes read.
    pub procs: Vec<ProcStat>,
    /// Entries that could not be read (permissions, hidepid).
    pub unreadable: usize,
    /// Entries that disappeared between listing and reading.
    pub vanished: usize,
    /// Entries whose stat line did not parse.
    pub malformed: usize,
    /// The `cpu` lines of /proc/stat (aggregate first); empty when it
    /// cannot be read.
    pub cpu: Vec<(String, CpuTimes)>,
    /// `procs_running` of /proc/stat: tasks runnable now.
    pub running: Option<u64>,
    /// `procs_blocked` of /proc/stat: tasks waiting for I/O now.
    pub blocked: Option<u64>,
    /// The 1, 5 and 15 minute load averages of /proc/loadavg.
    pub load: Option<(f64, f64, f64)>,
}

/// Read every /proc/PID/stat under `proc_root`. Only the directory itself
/// failing is an error.
pub fn snapshot(proc_root: &Path) -> std::io::Result<Snapshot> {
    let mut s = Snapshot::default();
    if let Ok(stat) = std::fs::read_to_string(proc_root.join("stat")) {
        s.cpu = parse_cpu_lines(&stat);
        s.running = parse_stat_counter(&stat, "procs_running");
        s.blocked = parse_stat_counter(&stat, "procs_blocked");
    }
    s.load = std::fs::read_to_string(proc_root.join("loadavg"))
        .ok()
        .and_then(|t| crate::parse_loadavg(&t));
    for entry in std::fs::read_dir(proc_root)? {
        let Ok(entry) = entry else {
            s.vanished += 1;
            continue;
        };
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        match std::fs::read(entry.path().join("stat")) {
            Ok(bytes) => match parse_stat(&String::from_utf8_lossy(&bytes)) {
                Ok(p) => s.procs.push(p),
                Err(_) => s.malformed += 1,
            },
            Err(e) => match e.kind() {
                std::io::ErrorKind::NotFound => s.vanished += 1,
                _ if e.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error()) => {
                    s.vanished += 1
                }
                _ => s.unreadable += 1,
            },
        }
    }
    Ok(s)
}

/// `root` and every process descended from it, by the parent pids in
/// `all` (parents are listed before their children only by chance).
pub fn descendants(all: &[ProcStat], root: i32) -> std::collections::BTreeSet<i32> {
    let mut out: std::collections::BTreeSet<i32> = [root].into_iter().collect();
    // Repeat until nothing is added (bounded by the process count).
    for _ in 0..all.len() {
        let before = out.len();
        for p in all {
            if out.contains(&p.ppid) {
                out.insert(p.pid);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// Clock ticks per second (USER_HZ) for the tick fields of /proc/PID/stat.
pub fn clock_ticks() -> f64 {
    // From the aux vector the kernel gives every process, as sysconf does.
    let t = rustix::param::clock_ticks_per_second();
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Sort orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// User time (or user % over the interval), largest first.
    User,
    /// System time, largest first.
    System,
    /// User + system, largest first.
    Total,
    /// Process id, ascending.
    Pid,
}

/// One process as shown: totals since it started, and CPU % over the
/// interval when two snapshots were taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcUsage {
    /// Process id.
    pub pid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// `comm`, verbatim.
    pub command: String,
    /// State letter.
    pub state: String,
    /// Number of threads.
    pub threads: i64,
    /// User CPU seconds since the process started.
    pub user_seconds: f64,
    /// System CPU seconds since the process started.
    pub system_seconds: f64,
    /// Share of one CPU over the interval, in percent (100 = one CPU busy);
    /// null without an interval.
    pub user_percent: Option<f64>,
    /// See `user_percent`.
    pub system_percent: Option<f64>,
    /// Resident memory in bytes (in the last snapshot).
    pub rss_bytes: Option<u64>,
}

/// One line of `top`'s CPU header: where a CPU's (or all CPUs') time went,
/// in percent of that time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLine {
    /// `all`, or the CPU's name in /proc/stat (`cpu0` …).
    pub cpu: String,
    /// us: user mode.
    pub user: f64,
    /// sy: kernel mode.
    pub system: f64,
    /// ni: user mode at low priority.
    pub nice: f64,
    /// id: idle.
    pub idle: f64,
    /// wa: idle with I/O outstanding.
    pub iowait: f64,
    /// hi: hardware interrupts.
    pub irq: f64,
    /// si: software interrupts.
    pub softirq: f64,
    /// st: taken by the hypervisor.
    pub steal: f64,
}

impl CpuLine {
    /// The shares of `t`'s ticks; `None` when no tick passed.
    pub fn of(cpu: &str, t: &CpuTimes) -> Option<CpuLine> {
        let total = t.total();
        let pct = |v: u64| 100.0 * v as f64 / total as f64;
        (total > 0).then(|| CpuLine {
            cpu: if cpu == "cpu" {
                "all".into()
            } else {
                cpu.into()
            },
            user: pct(t.user),
            system: pct(t.system),
            nice: pct(t.nice),
            idle: pct(t.idle),
            iowait: pct(t.iowait),
            irq: pct(t.irq),
            softirq: pct(t.softirq),
            steal: pct(t.steal),
        })
    }
}

/// The whole `procs` answer (also the `--json` document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcsReport {
    /// `PROCS_JSON_VERSION`.
    pub schema_version: u32,
    /// Seconds between the two snapshots; null for one snapshot.
    pub interval_seconds: Option<f64>,
    /// The sort order's name.
    pub sort: String,
    /// Processes seen (in the last snapshot).
    pub total: usize,
    /// Processes per state letter.
    pub states: std::collections::BTreeMap<String, usize>,
    /// Threads of all processes.
    pub threads: i64,
    /// Entries that could not be read.
    pub unreadable: usize,
    /// Entries that vanished while read (both snapshots).
    pub vanished: usize,
    /// Entries that did not parse.
    pub malformed: usize,
    /// The CPU lines (all CPUs first, then each): over the interval, or
    /// since boot from one snapshot.
    pub cpu: Vec<CpuLine>,
    /// Tasks runnable at the (last) snapshot.
    pub running: Option<u64>,
    /// Tasks blocked on I/O at the (last) snapshot.
    pub blocked: Option<u64>,
    /// 1, 5 and 15 minute load averages.
    pub load: Option<[f64; 3]>,
    /// The top processes, sorted.
    pub processes: Vec<ProcUsage>,
}

impl SortBy {
    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SortBy::User => "user",
            SortBy::System => "system",
            SortBy::Total => "total",
            SortBy::Pid => "pid",
        }
    }
}

/// Build the report from one snapshot (totals) or two (`before`, with the
/// seconds between them: CPU % over the interval, sorted by it).
pub fn report(
    before: Option<(&Snapshot, f64)>,
    after: &Snapshot,
    sort: SortBy,
    top: usize,
    ticks_per_second: f64,
) -> ProcsReport {
    let hz = if ticks_per_second > 0.0 {
        ticks_per_second
    } else {
        100.0
    };
    let mut rows: Vec<ProcUsage> = after
        .procs
        .iter()
        .map(|p| {
            let (up, sp) = match before {
                Some((b, secs)) if secs > 0.0 => {
                    let prev = b
                        .procs
                        .iter()
                        .find(|q| q.pid == p.pid && q.starttime == p.starttime);
                    // A process born during the interval used all its time
                    // in it.
                    let (u0, s0) = prev.map_or((0, 0), |q| (q.utime, q.stime));
                    let pct =
                        |now: u64, then: u64| now.saturating_sub(then) as f64 / hz / secs * 100.0;
                    (Some(pct(p.utime, u0)), Some(pct(p.stime, s0)))
                }
                _ => (None, None),
            };
            ProcUsage {
                pid: p.pid,
                ppid: p.ppid,
                command: p.comm.clone(),
                state: p.state.to_string(),
                threads: p.threads,
                user_seconds: p.utime as f64 / hz,
                system_seconds: p.stime as f64 / hz,
                user_percent: up,
                system_percent: sp,
                rss_bytes: p.rss_pages.map(|n| n.saturating_mul(page_size())),
            }
        })
        .collect();
    let key = |r: &ProcUsage| -> f64 {
        let (u, s) = match (r.user_percent, r.system_percent) {
            (Some(u), Some(s)) => (u, s),
            _ => (r.user_seconds, r.system_seconds),
        };
        match sort {
            SortBy::User => u,
            SortBy::System => s,
            SortBy::Total => u + s,
            SortBy::Pid => 0.0,
        }
    };
    if sort == SortBy::Pid {
        rows.sort_by_key(|r| r.pid);
    } else {
        // Largest first; ties by pid so the order is stable.
        rows.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)));
    }
    let mut states = std::collections::BTreeMap::new();
    for p in &after.procs {
        *states.entry(p.state.to_string()).or_insert(0) += 1;
    }
    let cpu = after
        .cpu
        .iter()
        .filter_map(|(name, now)| {
            let spent = match before {
                Some((b, _)) => {
                    let (_, then) = b.cpu.iter().find(|(n, _)| n == name)?;
                    now.since(then)
                }
                None => *now,
            };
            CpuLine::of(name, &spent)
        })
        .collect();
    let total = rows.len();
    if top > 0 {
        rows.truncate(top);
    }
    ProcsReport {
        schema_version: PROCS_JSON_VERSION,
        interval_seconds: before.map(|(_, s)| s),
        sort: sort.as_str().to_string(),
        total,
        states,
        threads: after.procs.iter().map(|p| p.threads.max(0)).sum(),
        unreadable: after.unreadable,
        vanished: after.vanished + before.map_or(0, |(b, _)| b.vanished),
        malformed: after.malformed,
        cpu,
        running: after.running,
        blocked: after.blocked,
        load: after.load.map(|(a, b, c)| [a, b, c]),
        processes: rows,
    }
}

/// The page size RSS is counted in.
fn page_size() -> u64 {
    rustix::param::page_size() as u64
}

/// A command name made safe for one table cell: control characters
/// (a newline in `comm`) shown escaped.
pub fn printable(comm: &str) -> String {
    comm.chars()
        .flat_map(char::escape_debug)
        .collect::<String>()
}

/// What a state letter means (proc(5)).
pub fn state_name(state: &str) -> &'static str {
    match state {
        "R" => "running",
        "S" => "sleeping",
        "D" => "uninterruptible (disk) sleep",
        "Z" => "zombie",
        "T" => "stopped",
        "t" => "tracing stop",
        "X" => "dead",
        "I" => "idle kernel thread",
        "P" => "parked",
        "W" => "paging/waking",
        "K" => "wakekill",
        _ => "unknown",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const STATS: &str = include_str!("../tests/fixtures/proc-stat-lines.txt");

    fn line(comm: &str, state: char, utime: u64, stime: u64) -> String {
        format!(
            "4242 ({comm}) {state} 1 4242 4242 0 -1 4194560 100 0 0 0 {utime} {stime} 0 0 20 0 3 0 5000 1000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
        )
    }

    #[test]
    fn real_lines_parse() {
        let mut n = 0;
        for l in STATS.lines().filter(|l| !l.trim().is_empty()) {
            let p = parse_stat(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert!(p.pid > 0);
            assert!(p.threads >= 1, "{l}");
            n += 1;
        }
        assert!(n >= 3);
        let init = parse_stat(STATS.lines().next().unwrap_or("")).unwrap();
        assert_eq!(init.pid, 1);
    }

    #[test]
    fn odd_command_names() {
        for comm in [
            "a b",
            "(sd-pam)",
            "x) S 1 2 3",
            "evil)\n(name",
            ")",
            "",
            "kworker/0:1-events",
        ] {
            let p = parse_stat(&line(comm, 'D', 7, 9)).unwrap_or_else(|e| panic!("{comm:?}: {e}"));
            assert_eq!(p.comm, comm);
            assert_eq!(p.state, 'D');
            assert_eq!((p.utime, p.stime, p.threads, p.starttime), (7, 9, 3, 5000));
            assert_eq!(p.ppid, 1);
            assert_eq!(p.rss_pages, Some(100));
        }
        assert_eq!(printable("evil)\n(name"), "evil)\\n(name");
    }

    #[test]
    fn bad_lines() {
        assert_eq!(parse_stat("4242 comm S 1"), Err(StatError::NoOpenParen));
        assert_eq!(parse_stat("4242 (comm S 1"), Err(StatError::NoCloseParen));
        assert!(matches!(parse_stat("x (c) S 1"), Err(StatError::BadPid(_))));
        assert!(matches!(
            parse_stat("1 (c) S 1 2 3"),
            Err(StatError::TooFewFields(4))
        ));
        let bad = line("c", 'S', 1, 1).replacen(" 1 1 0 0 20", " x 1 0 0 20", 1);
        assert!(
            matches!(parse_stat(&bad), Err(StatError::BadField { field: 14, .. })),
            "{bad}"
        );
    }

    fn snap(procs: Vec<ProcStat>) -> Snapshot {
        Snapshot {
            procs,
            ..Default::default()
        }
    }

    fn ps(pid: i32, comm: &str, state: char, u: u64, s: u64, start: u64) -> ProcStat {
        ProcStat {
            pid,
            comm: comm.into(),
            state,
            ppid: 1,
            utime: u,
            stime: s,
            cutime: 0,
            cstime: 0,
            threads: 1,
            starttime: start,
            rss_pages: Some(10),
        }
    }

    #[test]
    fn totals_sorted_and_states_counted() {
        let s = snap(vec![
            ps(10, "a", 'S', 500, 10, 1),
            ps(11, "b", 'D', 10, 900, 1),
            ps(12, "c", 'R', 300, 300, 1),
            ps(13, "z", 'Z', 0, 0, 1),
        ]);
        let r = report(None, &s, SortBy::System, 2, 100.0);
        assert_eq!(r.total, 4);
        assert_eq!(r.processes.len(), 2);
        assert_eq!(r.processes[0].pid, 11);
        assert_eq!(r.processes[1].pid, 12);
        assert!((r.processes[0].system_seconds - 9.0).abs() < 1e-9);
        assert_eq!(r.states.get("D"), Some(&1));
        assert_eq!(r.states.get("Z"), Some(&1));
        assert!(r.processes[0].user_percent.is_none());
        let u = report(None, &s, SortBy::User, 0, 100.0);
        assert_eq!(u.processes[0].pid, 10);
        assert_eq!(u.processes.len(), 4);
        let t = report(None, &s, SortBy::Total, 1, 100.0);
        assert_eq!(t.processes[0].pid, 11);
        let p = report(None, &s, SortBy::Pid, 0, 100.0);
        assert_eq!(
            p.processes.iter().map(|x| x.pid).collect::<Vec<_>>(),
            [10, 11, 12, 13]
        );
    }

    #[test]
    fn interval_percent_handles_new_vanished_and_reused_pids() {
        let before = snap(vec![
            ps(10, "busy", 'R', 100, 100, 1),
            ps(11, "gone", 'S', 5, 5, 1),
            ps(12, "reused", 'S', 1000, 1000, 1),
        ]);
        let after = snap(vec![
            // 2 s at 100 Hz: +100 user ticks = 50 %, +20 system = 10 %.
            ps(10, "busy", 'R', 200, 120, 1),
            // Same pid, new start time: a new process; all its ticks count.
            ps(12, "reused", 'S', 40, 0, 777),
            // Born during the interval.
            ps(13, "new", 'R', 0, 60, 900),
        ]);
        let r = report(Some((&before, 2.0)), &after, SortBy::System, 0, 100.0);
        let get = |pid| {
            r.processes
                .iter()
                .find(|p| p.pid == pid)
                .unwrap_or_else(|| panic!("{pid}"))
        };
        assert!((get(10).user_percent.unwrap_or(-1.0) - 50.0).abs() < 1e-9);
        assert!((get(10).system_percent.unwrap_or(-1.0) - 10.0).abs() < 1e-9);
        assert!((get(12).user_percent.unwrap_or(-1.0) - 20.0).abs() < 1e-9);
        assert!((get(13).system_percent.unwrap_or(-1.0) - 30.0).abs() < 1e-9);
        assert_eq!(
            r.processes[0].pid, 13,
            "sorted by system % over the interval"
        );
        assert_eq!(r.total, 3);
    }

    #[test]
    fn cpu_lines_load_and_counts() {
        let mut before = snap(vec![ps(10, "a", 'R', 0, 0, 1)]);
        before.cpu = parse_cpu_lines("cpu 100 0 100 700 100 0 0 0\ncpu0 50 0 50 350 50 0 0 0\n");
        let mut after = snap(vec![ps(10, "a", 'R', 100, 0, 1)]);
        // Over the interval: 200 ticks, 100 user, 50 iowait, 50 steal.
        after.cpu = parse_cpu_lines(
            "cpu 200 0 100 700 150 0 0 50\ncpu0 150 0 50 350 50 0 0 0\ncpu1 1 0 0 1 0 0 0 0\n",
        );
        after.running = Some(2);
        after.blocked = Some(5);
        after.load = Some((6.5, 3.0, 1.0));
        let r = report(Some((&before, 1.0)), &after, SortBy::User, 0, 100.0);
        let all = &r.cpu[0];
        assert_eq!(all.cpu, "all");
        assert!((all.user - 50.0).abs() < 1e-9);
        assert!((all.iowait - 25.0).abs() < 1e-9);
        assert!((all.steal - 25.0).abs() < 1e-9);
        assert!((all.idle).abs() < 1e-9);
        assert_eq!(r.cpu[1].cpu, "cpu0");
        assert!((r.cpu[1].user - 100.0).abs() < 1e-9);
        // cpu1 came online during the interval: no earlier line, no share.
        assert_eq!(r.cpu.len(), 2);
        assert_eq!((r.running, r.blocked), (Some(2), Some(5)));
        assert_eq!(r.load, Some([6.5, 3.0, 1.0]));
        assert_eq!(r.processes[0].rss_bytes, Some(10 * page_size()));
        // One snapshot: since boot.
        let once = report(None, &after, SortBy::User, 0, 100.0);
        assert_eq!(once.cpu.len(), 3);
        assert!((once.cpu[0].user - 100.0 * 200.0 / 1200.0).abs() < 1e-9);
    }

    /// What qemu-user's /proc/self/stat lacks.
    pub(crate) const QEMU_STAT: &str =
        "qemu-user writes its own /proc/self/stat with the thread count and CPU times as 0";

    #[test]
    fn live_snapshot_sees_this_process() {
        if sysgauge_testkit::emulator_cannot(QEMU_STAT) {
            return;
        }
        let s = snapshot(Path::new("/proc")).unwrap();
        let me = std::process::id() as i32;
        let p = s
            .procs
            .iter()
            .find(|p| p.pid == me)
            .unwrap_or_else(|| panic!("self not found"));
        assert!(p.threads >= 1);
        assert!(p.rss_pages.unwrap_or(0) > 0);
        assert!(clock_ticks() > 0.0);
        assert!(s.cpu.len() >= 2, "{:?}", s.cpu);
        assert!(s.running.unwrap_or(0) >= 1);
        assert!(s.load.is_some());
    }

    #[test]
    fn missing_proc_root_is_an_error_and_junk_is_counted() {
        assert!(snapshot(Path::new("/nonexistent-proc")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let mk = |pid: &str, text: Option<&str>| {
            let d = dir.path().join(pid);
            std::fs::create_dir_all(&d).unwrap();
            if let Some(t) = text {
                std::fs::write(d.join("stat"), t).unwrap();
            }
        };
        mk("1", Some(&line("odd) name", 'S', 1, 2)));
        mk("2", Some("garbage"));
        mk("3", None);
        mk("self", None);
        let s = snapshot(dir.path()).unwrap();
        assert_eq!(s.procs.len(), 1);
        assert_eq!(s.procs[0].comm, "odd) name");
        assert_eq!(s.malformed, 1);
        assert_eq!(s.vanished, 1);
    }
}
