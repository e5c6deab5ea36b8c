//! The wait for a quiet machine before measuring (as sbc-bench does): the
//! CPU time other processes use NOW, read as deltas of /proc/stat over
//! short windows, minus this process and its descendants (from
//! /proc/PID/stat), until it stays below a limit for a few seconds, or
//! until a bound runs out.
//!
//! The load average is no guide here: it is an exponentially damped
//! average over a minute, so it still says "busy" a minute after a build
//! ended and says little about a burst that started a second ago. The
//! kernel's tick counters say what the CPUs did in the last half second.
//!
//! Everything is judged from two snapshots (`procs::Snapshot`, the same
//! reader `sysgauge procs` uses), so a captured /proc tree tests it:
//! [`interval`] turns two snapshots into the others' share of the machine
//! and each process's ticks, [`Waiter`] decides from a series of intervals,
//! and [`wait_for_quiet`] is the live loop around them. Kernel threads are
//! counted (a busy kworker disturbs a case as much as a build does); steal
//! is counted as busy (another guest on the host took those CPUs).

use crate::procs::{self, ProcStat, Snapshot};
use crate::sysroot::SysRoot;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use sysgauge_core::{Finding, Severity};

/// Others' share of all CPUs' time under which the machine counts as
/// quiet, in percent.
pub const DEFAULT_LIMIT_PERCENT: f64 = 2.5;
/// How long the share must stay below the limit.
pub const QUIET_FOR: Duration = Duration::from_secs(3);
/// The longest wait by default.
pub const DEFAULT_BOUND: Duration = Duration::from_secs(30);
/// One judgement window: long enough for a few dozen ticks on a small
/// machine (USER_HZ is 100), short enough to start soon after a hog ends.
pub const WINDOW: Duration = Duration::from_millis(500);
/// Processes below this share of one CPU over the wait are not named.
const NAMED_MIN_PERCENT: f64 = 1.0;
/// At most this many busy processes are named.
const NAMED_MAX: usize = 5;

/// Finding: the wait ran out before the machine became quiet.
pub const NOT_QUIET: &str = "not-quiet";
/// Run tag: the wait's outcome (`quiet`, `gave-up`, `interrupted`,
/// `unknown`); absent when the wait was skipped.
pub const TAG_OUTCOME: &str = "quiet_wait";
/// Run tag: seconds waited.
pub const TAG_SECONDS: &str = "quiet_wait_seconds";
/// Run tag: others' share of the CPUs over the last judged span, percent.
pub const TAG_OTHERS: &str = "quiet_others_percent";
/// Run tag: the busiest other processes during the wait.
pub const TAG_BUSY: &str = "quiet_busy";

/// What counts as quiet, and how long to wait for it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuietRule {
    /// Others' share of all CPUs' time, percent, below which the machine
    /// is quiet.
    pub limit_percent: f64,
    /// How long the share must stay below the limit.
    pub quiet_for: Duration,
    /// The longest wait.
    pub bound: Duration,
    /// One judgement window.
    pub window: Duration,
}

impl QuietRule {
    /// Quiet below `limit_percent`, waiting at most `bound`: the quiet span
    /// is [`QUIET_FOR`], or the whole bound when that is shorter (else a
    /// short bound could never end quiet).
    pub fn bounded(bound: Duration, limit_percent: f64) -> QuietRule {
        QuietRule {
            limit_percent,
            quiet_for: QUIET_FOR.min(bound),
            bound,
            window: WINDOW.min(bound),
        }
    }
}

impl Default for QuietRule {
    fn default() -> Self {
        QuietRule {
            limit_percent: DEFAULT_LIMIT_PERCENT,
            quiet_for: QUIET_FOR,
            bound: DEFAULT_BOUND,
            window: WINDOW,
        }
    }
}

/// What happened between two snapshots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    /// Others' share of all CPUs' time, percent; `None` when /proc/stat
    /// could not be read or no tick passed.
    pub others_percent: Option<f64>,
    /// Ticks (USER_HZ) each other process used, by (pid, start time), with
    /// its command name.
    pub per_process: BTreeMap<(i32, u64), (String, u64)>,
}

/// Ticks of a process in user and kernel mode.
fn ticks(p: &ProcStat) -> u64 {
    p.utime + p.stime
}

/// Others' CPU between `before` and `after`: the machine's busy ticks
/// (everything but idle and iowait) minus those of `me` and its
/// descendants, as a share of all ticks; and each other process's ticks.
pub fn interval(before: &Snapshot, after: &Snapshot, me: i32) -> Interval {
    let mine = procs::descendants(&after.procs, me);
    let then: BTreeMap<(i32, u64), u64> = before
        .procs
        .iter()
        .map(|p| ((p.pid, p.starttime), ticks(p)))
        .collect();
    let mut own = 0u64;
    let mut per_process = BTreeMap::new();
    for p in &after.procs {
        let key = (p.pid, p.starttime);
        // A process born during the interval used all its ticks in it.
        let used = ticks(p).saturating_sub(then.get(&key).copied().unwrap_or(0));
        if mine.contains(&p.pid) {
            own += used;
        } else if used > 0 {
            per_process.insert(key, (p.comm.clone(), used));
        }
    }
    let machine = match (before.cpu.first(), after.cpu.first()) {
        (Some((a, t0)), Some((b, t1))) if a == "cpu" && b == "cpu" => Some(t1.since(t0)),
        _ => None,
    };
    let others_percent = machine.and_then(|d| {
        let total = d.total();
        (total > 0).then(|| {
            let busy = total - d.idle - d.iowait;
            100.0 * busy.saturating_sub(own) as f64 / total as f64
        })
    });
    Interval {
        others_percent,
        per_process,
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Still busy, and time is left.
    Waiting,
    /// Quiet for long enough.
    Quiet,
    /// The bound ran out first.
    GaveUp,
    /// /proc/stat cannot be read: nothing to judge by.
    Unknown,
    /// Stopped (Ctrl-C) during the wait.
    Interrupted,
}

impl Verdict {
    /// The word in the run's `quiet_wait` tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Waiting => "waiting",
            Verdict::Quiet => "quiet",
            Verdict::GaveUp => "gave-up",
            Verdict::Unknown => "unknown",
            Verdict::Interrupted => "interrupted",
        }
    }
}

/// A process that was busy during the wait.
#[derive(Debug, Clone, PartialEq)]
pub struct BusyProcess {
    /// Process id.
    pub pid: i32,
    /// `comm`, verbatim.
    pub command: String,
    /// Share of one CPU over the whole wait, percent.
    pub cpu_percent: f64,
}

impl std::fmt::Display for BusyProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (pid {}) {:.0} %",
            procs::printable(&self.command),
            self.pid,
            self.cpu_percent
        )
    }
}

/// The judge: fed one interval per window, it says whether the machine
/// has been quiet for long enough, and keeps who was busy.
#[derive(Debug, Clone)]
pub struct Waiter {
    rule: QuietRule,
    ticks_per_second: f64,
    /// (seconds, others' percent) of each window, newest last.
    windows: Vec<(f64, f64)>,
    elapsed: f64,
    busy: BTreeMap<(i32, u64), (String, u64)>,
}

/// What the wait saw, at its end or so far.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitReport {
    /// How it ended (`Waiting` while under way).
    pub verdict: Verdict,
    /// The rule it waited by.
    pub rule: QuietRule,
    /// Seconds waited.
    pub seconds: f64,
    /// Others' share of the CPUs over the trailing span judged (at most
    /// `quiet_for`), percent.
    pub others_percent: Option<f64>,
    /// The busiest other processes over the whole wait, busiest first.
    pub busy: Vec<BusyProcess>,
}

impl Waiter {
    /// A judge by `rule`, for tick counters at `ticks_per_second`.
    pub fn new(rule: QuietRule, ticks_per_second: f64) -> Waiter {
        Waiter {
            rule,
            ticks_per_second: if ticks_per_second > 0.0 {
                ticks_per_second
            } else {
                100.0
            },
            windows: Vec::new(),
            elapsed: 0.0,
            busy: BTreeMap::new(),
        }
    }

    /// Others' mean share over the newest windows that cover `quiet_for`,
    /// and whether they do cover it.
    fn trailing(&self) -> Option<(f64, bool)> {
        let need = self.rule.quiet_for.as_secs_f64();
        let (mut secs, mut weighted) = (0.0, 0.0);
        for &(s, p) in self.windows.iter().rev() {
            secs += s;
            weighted += s * p;
            // A hair below: windows slept by the OS are never exact.
            if secs >= need * 0.98 {
                break;
            }
        }
        (secs > 0.0).then(|| (weighted / secs, secs >= need * 0.98))
    }

    /// Take one window of `seconds` and say where the wait stands.
    pub fn push(&mut self, seconds: f64, iv: &Interval) -> Verdict {
        self.elapsed += seconds;
        for (key, (comm, t)) in &iv.per_process {
            let e = self.busy.entry(*key).or_insert_with(|| (comm.clone(), 0));
            e.1 += t;
        }
        let Some(p) = iv.others_percent else {
            return Verdict::Unknown;
        };
        self.windows.push((seconds, p));
        if let Some((mean, covered)) = self.trailing() {
            if covered && mean < self.rule.limit_percent {
                return Verdict::Quiet;
            }
        }
        if self.elapsed >= self.rule.bound.as_secs_f64() {
            Verdict::GaveUp
        } else {
            Verdict::Waiting
        }
    }

    /// The report as things stand, with `verdict`.
    pub fn report(&self, verdict: Verdict) -> WaitReport {
        let secs = self.elapsed.max(f64::EPSILON);
        let mut busy: Vec<BusyProcess> = self
            .busy
            .iter()
            .map(|(&(pid, _), (comm, t))| BusyProcess {
                pid,
                command: comm.clone(),
                cpu_percent: 100.0 * *t as f64 / self.ticks_per_second / secs,
            })
            .filter(|b| b.cpu_percent >= NAMED_MIN_PERCENT)
            .collect();
        busy.sort_by(|a, b| {
            b.cpu_percent
                .total_cmp(&a.cpu_percent)
                .then(a.pid.cmp(&b.pid))
        });
        busy.truncate(NAMED_MAX);
        WaitReport {
            verdict,
            rule: self.rule.clone(),
            seconds: self.elapsed,
            others_percent: self.trailing().map(|(m, _)| m),
            busy,
        }
    }
}

impl WaitReport {
    /// The busiest processes as one line (`a (pid 1) 99 %, b (pid 2) 40 %`).
    pub fn busy_text(&self) -> String {
        self.busy
            .iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The run tags that record the wait.
    pub fn tags(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            (TAG_OUTCOME, self.verdict.as_str().to_string()),
            (TAG_SECONDS, format!("{:.1}", self.seconds)),
        ];
        if let Some(p) = self.others_percent {
            v.push((TAG_OTHERS, format!("{p:.1}")));
        }
        if !self.busy.is_empty() {
            v.push((TAG_BUSY, self.busy_text()));
        }
        v
    }

    /// One line for people: how the wait ended.
    pub fn summary(&self) -> String {
        let busy = if self.busy.is_empty() {
            String::new()
        } else {
            format!("; busy during the wait: {}", self.busy_text())
        };
        let others = self
            .others_percent
            .map_or(String::new(), |p| format!(" (other processes {p:.1} %)"));
        match self.verdict {
            Verdict::Quiet => format!(
                "the machine was quiet after {:.1} s{others}{busy}; measuring",
                self.seconds
            ),
            Verdict::GaveUp => format!(
                "the machine was still busy after {:.1} s{others}, above the {} % limit{busy}; measuring anyway",
                self.seconds, self.rule.limit_percent
            ),
            Verdict::Unknown => {
                "cannot read the CPU counters (/proc/stat): not waiting".to_string()
            }
            Verdict::Interrupted => format!("interrupted after {:.1} s of waiting", self.seconds),
            Verdict::Waiting => format!(
                "still waiting after {:.1} s{others}{busy}",
                self.seconds
            ),
        }
    }

    /// The run finding when the wait gave up.
    pub fn finding(&self) -> Option<Finding> {
        (self.verdict == Verdict::GaveUp).then(|| {
            let others = self
                .others_percent
                .map_or(String::new(), |p| format!(": other processes used {p:.1} % of the CPUs"));
            let busy = if self.busy.is_empty() {
                String::new()
            } else {
                format!("; busiest: {}", self.busy_text())
            };
            Finding::new(
                NOT_QUIET,
                Severity::Warning,
                format!(
                    "the machine did not become quiet within {:.0} s{others} (the limit is {} % for {:.0} s){busy}",
                    self.rule.bound.as_secs_f64(),
                    self.rule.limit_percent,
                    self.rule.quiet_for.as_secs_f64()
                ),
            )
            .with_remedy(
                "stop other work (`sysgauge procs` shows what runs) and measure again, or wait longer with --wait-quiet SECONDS",
            )
        })
    }
}

/// Others' share of the machine's CPUs over `window`, percent, from two
/// snapshots under `root` (this process and its descendants left out);
/// `None` when /proc cannot be read.
pub fn others_now(root: &SysRoot, window: Duration) -> Option<f64> {
    let me = std::process::id() as i32;
    let before = procs::snapshot(&root.proc).ok()?;
    std::thread::sleep(window);
    let after = procs::snapshot(&root.proc).ok()?;
    interval(&before, &after, me).others_percent
}

/// Wait under `root` until the machine is quiet by `rule`, or the bound
/// runs out, or `stop` says so (checked every tenth of a second).
/// `progress` sees the report after every window.
pub fn wait_for_quiet(
    root: &SysRoot,
    rule: &QuietRule,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&WaitReport),
) -> WaitReport {
    let me = std::process::id() as i32;
    let mut waiter = Waiter::new(rule.clone(), procs::clock_ticks());
    let Ok(mut before) = procs::snapshot(&root.proc) else {
        return waiter.report(Verdict::Unknown);
    };
    let mut at = Instant::now();
    loop {
        let deadline = at + rule.window;
        while Instant::now() < deadline {
            if stop() {
                return waiter.report(Verdict::Interrupted);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
        let Ok(after) = procs::snapshot(&root.proc) else {
            return waiter.report(Verdict::Unknown);
        };
        let now = Instant::now();
        let verdict = waiter.push(
            now.duration_since(at).as_secs_f64(),
            &interval(&before, &after, me),
        );
        if verdict != Verdict::Waiting {
            return waiter.report(verdict);
        }
        progress(&waiter.report(verdict));
        (before, at) = (after, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(which: &str) -> Snapshot {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/quiet")
            .join(which)
            .join("proc");
        procs::snapshot(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
    }

    /// The fixture: 2 CPUs at USER_HZ 100 over one second (200 ticks).
    /// sysgauge (pid 700) used 10 ticks and its child (701) 20; the hog
    /// (900) 100; a kworker (60) 4; init nothing. Busy: 140 ticks of 200.
    #[test]
    fn a_captured_interval_leaves_out_our_own_tree() {
        let iv = interval(&fixture("before"), &fixture("after"), 700);
        let p = iv.others_percent.unwrap_or(-1.0);
        // (140 - 30) / 200.
        assert!((p - 55.0).abs() < 1e-9, "{p}");
        let names: Vec<(&str, u64)> = iv
            .per_process
            .values()
            .map(|(c, t)| (c.as_str(), *t))
            .collect();
        assert_eq!(
            names,
            [("kworker/0:1-events", 4), ("sg hog) x", 100), ("born", 6)]
        );
        // Seen from another process, ours are others.
        let all = interval(&fixture("before"), &fixture("after"), 9999);
        assert!((all.others_percent.unwrap_or(-1.0) - 70.0).abs() < 1e-9);
    }

    fn iv(percent: f64, hog_ticks: u64) -> Interval {
        let mut per_process = BTreeMap::new();
        if hog_ticks > 0 {
            per_process.insert((900, 5), ("hog".to_string(), hog_ticks));
        }
        per_process.insert((10, 1), ("sshd".to_string(), 0));
        Interval {
            others_percent: Some(percent),
            per_process,
        }
    }

    fn rule(bound: u64) -> QuietRule {
        QuietRule {
            bound: Duration::from_secs(bound),
            ..QuietRule::default()
        }
    }

    #[test]
    fn quiet_only_after_quiet_for_and_names_the_hog() {
        let mut w = Waiter::new(rule(30), 100.0);
        // Four busy seconds of a hog, then quiet.
        for _ in 0..8 {
            assert_eq!(w.push(0.5, &iv(50.0, 50)), Verdict::Waiting);
        }
        // Quiet windows: the trailing 3 s still hold busy ones until the
        // sixth quiet window.
        for _ in 0..5 {
            assert_eq!(w.push(0.5, &iv(0.5, 0)), Verdict::Waiting);
        }
        assert_eq!(w.push(0.5, &iv(0.5, 0)), Verdict::Quiet);
        let r = w.report(Verdict::Quiet);
        assert!((r.seconds - 7.0).abs() < 1e-9);
        assert_eq!(r.busy.len(), 1, "{:?}", r.busy);
        // 400 ticks at 100 Hz over 7 s.
        assert_eq!(r.busy[0].pid, 900);
        assert!((r.busy[0].cpu_percent - 400.0 / 7.0).abs() < 1e-9);
        assert!(
            r.summary().contains("hog (pid 900) 57 %"),
            "{}",
            r.summary()
        );
        assert!(r.finding().is_none());
        let tags = r.tags();
        assert_eq!(tags[0], (TAG_OUTCOME, "quiet".to_string()));
        assert_eq!(tags[1], (TAG_SECONDS, "7.0".to_string()));
        assert!(tags
            .iter()
            .any(|(k, v)| *k == TAG_BUSY && v.contains("hog")));
    }

    #[test]
    fn a_quiet_machine_waits_quiet_for_and_no_longer() {
        let mut w = Waiter::new(rule(30), 100.0);
        let mut n = 0;
        while w.push(0.5, &iv(1.0, 0)) == Verdict::Waiting {
            n += 1;
            assert!(n < 100);
        }
        assert_eq!(n, 5, "six windows of 0.5 s make the 3 s");
        let r = w.report(Verdict::Quiet);
        assert!(r.busy.is_empty() && r.tags().len() == 3, "{:?}", r.tags());
    }

    #[test]
    fn a_burst_in_a_quiet_span_is_averaged_and_the_bound_gives_up() {
        let mut w = Waiter::new(rule(2), 100.0);
        assert_eq!(w.push(0.5, &iv(1.0, 0)), Verdict::Waiting);
        assert_eq!(w.push(0.5, &iv(30.0, 15)), Verdict::Waiting);
        assert_eq!(w.push(0.5, &iv(1.0, 0)), Verdict::Waiting);
        assert_eq!(w.push(0.5, &iv(1.0, 0)), Verdict::GaveUp);
        let r = w.report(Verdict::GaveUp);
        let f = r.finding().unwrap_or_else(|| panic!("no finding"));
        assert_eq!(f.code, NOT_QUIET);
        assert!(f.message.contains("within 2 s"), "{}", f.message);
        assert!(f.message.contains("hog (pid 900)"), "{}", f.message);
        assert!(r.summary().contains("measuring anyway"));
        // (1 + 30 + 1 + 1) / 4.
        assert!((r.others_percent.unwrap_or(0.0) - 8.25).abs() < 1e-9);
    }

    #[test]
    fn unreadable_counters_end_the_wait() {
        let mut w = Waiter::new(rule(30), 100.0);
        let none = Interval::default();
        assert_eq!(w.push(0.5, &none), Verdict::Unknown);
        let empty = Snapshot::default();
        assert_eq!(interval(&empty, &empty, 1).others_percent, None);
    }

    #[test]
    fn a_live_wait_is_bounded_and_stoppable() {
        if sysgauge_testkit::emulator_cannot(crate::procs::tests::QEMU_STAT) {
            return;
        }
        // A limit nothing can reach: the bound decides.
        let r = QuietRule {
            limit_percent: 0.0,
            bound: Duration::from_millis(600),
            window: Duration::from_millis(200),
            ..QuietRule::default()
        };
        let mut seen = 0;
        let started = Instant::now();
        let out = wait_for_quiet(&SysRoot::live(), &r, &|| false, &mut |_| seen += 1);
        assert_eq!(out.verdict, Verdict::GaveUp);
        assert!(started.elapsed() >= Duration::from_millis(600));
        assert!(seen >= 1);
        let out = wait_for_quiet(&SysRoot::live(), &r, &|| true, &mut |_| {});
        assert_eq!(out.verdict, Verdict::Interrupted);
        assert!(others_now(&SysRoot::live(), Duration::from_millis(50)).is_some());
    }
}
