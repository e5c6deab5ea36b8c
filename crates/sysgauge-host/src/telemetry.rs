//! Telemetry: what the machine did while each case ran, read from /proc and
//! /sys only, and judged.
//!
//! At the start and end of a case a full snapshot is taken: the machine's
//! CPU times (/proc/stat), this process's own CPU time with its waited-for
//! children (/proc/self/stat), every other process's CPU time
//! (/proc/PID/stat; kernel threads and this process's descendants left
//! out, and the peer's processes counted apart: `with_peer_processes`),
//! pressure stall totals (/proc/pressure), the thermal throttle
//! counters. In between, a sampler thread wakes every [`PERIOD`] and reads
//! only the cheap, moving values (the cpufreq clocks, the thermal zones and
//! the machine's CPU times) for the minimum clock, the maximum temperature
//! and a compact time series of cases that last [`SERIES_MIN`] or more.
//!
//! The summary goes into the result's details; the thresholds below decide
//! the findings and the `disturbed` mark (docs/comparing.md lists them).

use crate::capacity::{self, Tracker};
use crate::procs::{self, ProcStat};
use crate::sysroot::{dir_names, SysRoot};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use sysgauge_core::{CaseMonitor, CaseWatch, Finding, Observed, Params, Severity};

/// How often the sampler thread wakes.
pub const PERIOD: Duration = Duration::from_millis(250);
/// Cases at least this long keep a time series in their details.
pub const SERIES_MIN: Duration = Duration::from_secs(2);
/// At most this many samples per case (an hour at [`PERIOD`]); the sampler
/// stops sampling, not the case, when a case runs longer.
const MAX_SAMPLES: usize = 14_400;

/// Other processes using at least this many CPUs on average disturb a case.
pub const OTHER_CPUS_LIMIT: f64 = 0.2;
/// Stolen time at or above this share of all CPUs' time disturbs a case.
pub const STEAL_LIMIT_PERCENT: f64 = 2.0;
/// A clock this far below the run's first reading means throttling.
pub const CLOCK_DROP_FRACTION: f64 = 0.9;
/// iowait or memory stalls at or above this share disturb a CPU case.
pub const CPU_CASE_WAIT_LIMIT_PERCENT: f64 = 5.0;

/// Finding: other processes used the CPUs.
pub const OTHER_PROCESSES: &str = "other-processes";
/// Finding: the hypervisor stole CPU time.
pub const STEAL: &str = "steal";
/// Finding: the CPU throttled, or its clock fell below the run's start.
pub const THROTTLED: &str = "throttled";
/// Finding: a CPU case waited for I/O or memory.
pub const WAITED: &str = "waited";

/// The machine's CPU times from the `cpu` line of /proc/stat, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// User mode.
    pub user: u64,
    /// User mode at low priority.
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle with I/O outstanding.
    pub iowait: u64,
    /// Hardware interrupts.
    pub irq: u64,
    /// Software interrupts.
    pub softirq: u64,
    /// Taken by the hypervisor for other guests.
    pub steal: u64,
}

impl CpuTimes {
    /// Every tick counted, idle included.
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
    /// The ticks spent between `earlier` and now (counters never go back;
    /// one that did counts 0).
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        CpuTimes {
            user: d(self.user, earlier.user),
            nice: d(self.nice, earlier.nice),
            system: d(self.system, earlier.system),
            idle: d(self.idle, earlier.idle),
            iowait: d(self.iowait, earlier.iowait),
            irq: d(self.irq, earlier.irq),
            softirq: d(self.softirq, earlier.softirq),
            steal: d(self.steal, earlier.steal),
        }
    }
}

/// The aggregate `cpu` line of /proc/stat; fields a kernel lacks are 0.
pub fn parse_cpu_times(stat: &str) -> Option<CpuTimes> {
    stat.lines()
        .find(|l| l.starts_with("cpu "))
        .and_then(parse_cpu_line)
}

/// Every `cpu` line of /proc/stat, the aggregate (`cpu`) first, then each
/// CPU (`cpu0`, `cpu1` …) as the kernel lists them (offline CPUs are
/// missing); lines that do not parse are left out.
pub fn parse_cpu_lines(stat: &str) -> Vec<(String, CpuTimes)> {
    stat.lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|l| {
            let name = l.split_ascii_whitespace().next()?;
            let valid = name == "cpu" || name[3..].bytes().all(|b| b.is_ascii_digit());
            valid.then(|| Some((name.to_string(), parse_cpu_line(l)?)))?
        })
        .collect()
}

/// One `cpu…` line: user nice system idle iowait irq softirq steal (older
/// kernels stop after idle).
fn parse_cpu_line(line: &str) -> Option<CpuTimes> {
    let v: Vec<u64> = line
        .split_ascii_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    (v.len() >= 4).then(|| CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// A `key N` line of /proc/stat (`procs_running`, `procs_blocked`).
pub fn parse_stat_counter(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let mut it = l.split_ascii_whitespace();
        (it.next() == Some(key)).then(|| it.next()?.parse().ok())?
    })
}

/// The `some … total=N` of a /proc/pressure file: microseconds in which at
/// least one task stalled.
pub fn parse_psi_some_total(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with("some "))?
        .split_ascii_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// The moving values the sampler thread reads.
#[derive(Debug, Clone, Copy, Default)]
struct Light {
    cpu: Option<CpuTimes>,
    /// Mean cpufreq clock over the CPUs, MHz.
    mhz: Option<f64>,
    /// Lowest cpufreq clock of any CPU, MHz.
    mhz_low: Option<f64>,
    /// Hottest thermal zone, °C.
    temp_c: Option<f64>,
}

fn numbered_dirs(root: &SysRoot, rel: &str, prefix: &str) -> Vec<String> {
    let mut names = dir_names(&root.sys_path(rel));
    names.retain(|n| {
        n.strip_prefix(prefix)
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    });
    names
}

/// Where the per-CPU and thermal files are, found once per run.
#[derive(Debug, Clone, Default)]
struct Paths {
    cpufreq: Vec<String>,
    throttle: Vec<String>,
    zones: Vec<String>,
}

impl Paths {
    fn find(root: &SysRoot) -> Paths {
        let cpus = numbered_dirs(root, "devices/system/cpu", "cpu");
        let exists = |rel: &String| root.sys.join(rel).exists();
        Paths {
            cpufreq: cpus
                .iter()
                .map(|c| format!("devices/system/cpu/{c}/cpufreq/scaling_cur_freq"))
                .filter(exists)
                .collect(),
            throttle: cpus
                .iter()
                .flat_map(|c| {
                    ["core", "package"].map(|k| {
                        format!("devices/system/cpu/{c}/thermal_throttle/{k}_throttle_count")
                    })
                })
                .filter(exists)
                .collect(),
            zones: numbered_dirs(root, "class/thermal", "thermal_zone")
                .into_iter()
                .map(|z| format!("class/thermal/{z}/temp"))
                .collect(),
        }
    }
}

fn read_num(root: &SysRoot, rel: &str) -> Option<f64> {
    root.read_sys(rel)?.trim().parse::<f64>().ok()
}

fn light(root: &SysRoot, paths: &Paths) -> Light {
    let khz: Vec<f64> = paths
        .cpufreq
        .iter()
        .filter_map(|p| read_num(root, p))
        .filter(|v| *v > 0.0)
        .collect();
    let temp = paths
        .zones
        .iter()
        .filter_map(|p| read_num(root, p))
        // Millidegrees; a zone reporting nonsense (negative, > 200 °C) is skipped.
        .map(|m| m / 1000.0)
        .filter(|c| (-40.0..200.0).contains(c))
        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))));
    Light {
        cpu: root.read_proc("stat").and_then(|t| parse_cpu_times(&t)),
        mhz: (!khz.is_empty()).then(|| khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0),
        mhz_low: khz.iter().copied().reduce(f64::min).map(|k| k / 1000.0),
        temp_c: temp,
    }
}

/// Everything read at the start and end of a case.
#[derive(Debug, Clone)]
struct Full {
    at: Instant,
    light: Light,
    /// This process and its waited-for children, ticks in user and in
    /// kernel mode.
    own: Option<(u64, u64)>,
    /// Other processes: ticks per (pid, start time).
    others: BTreeMap<(i32, u64), u64>,
    /// The peer's processes (and their descendants), the same way.
    peer: BTreeMap<(i32, u64), u64>,
    psi: [Option<u64>; 3],
    throttle: Option<u64>,
}

/// Pids of kernel threads (children of kthreadd, pid 2) and of this
/// process with its descendants: what "other processes" leaves out.
fn not_others(all: &[ProcStat], me: i32) -> BTreeSet<i32> {
    let mut out = procs::descendants(all, me);
    out.extend(procs::descendants(all, 2));
    out
}

/// Pids of the peer's processes with their descendants.
fn peer_pids(all: &[ProcStat], peers: &[i32]) -> BTreeSet<i32> {
    peers
        .iter()
        .flat_map(|p| procs::descendants(all, *p))
        .collect()
}

fn full(root: &SysRoot, paths: &Paths, peers: &[i32]) -> Full {
    let at = Instant::now();
    let light = light(root, paths);
    let me = std::process::id() as i32;
    let own = root
        .read_proc("self/stat")
        .and_then(|t| procs::parse_stat(&t).ok())
        .map(|p| (p.utime + p.cutime, p.stime + p.cstime));
    let mut others = BTreeMap::new();
    let mut peer = BTreeMap::new();
    if let Ok(s) = procs::snapshot(&root.proc) {
        let skip = not_others(&s.procs, me);
        let of_peer = peer_pids(&s.procs, peers);
        for p in s.procs.iter().filter(|p| !skip.contains(&p.pid)) {
            let into = match of_peer.contains(&p.pid) {
                true => &mut peer,
                false => &mut others,
            };
            into.insert((p.pid, p.starttime), p.utime + p.stime);
        }
    }
    let psi = ["cpu", "memory", "io"].map(|k| {
        root.read_proc(&format!("pressure/{k}"))
            .and_then(|t| parse_psi_some_total(&t))
    });
    let throttle = (!paths.throttle.is_empty()).then(|| {
        paths
            .throttle
            .iter()
            .filter_map(|p| read_num(root, p))
            .map(|v| v as u64)
            .sum()
    });
    Full {
        at,
        light,
        own,
        others,
        peer,
        psi,
        throttle,
    }
}

/// Telemetry for a run: one per `sysgauge` process run.
pub struct Telemetry {
    root: SysRoot,
    paths: Paths,
    ticks: f64,
    /// The mean clock at the first case of the run, the throttle reference.
    run_start_mhz: Mutex<Option<f64>>,
    /// Families whose cases should neither wait for I/O nor stall on
    /// memory (the registry's CPU-bound ones, given by the caller).
    cpu_bound: Vec<String>,
    /// The capacity probe (`capacity`), started at the first case; only
    /// on the live machine (a fixture tree has no CPU to probe).
    capacity: Option<Arc<Mutex<Option<Tracker>>>>,
    /// The peer's processes on this machine (`with_peer_processes`).
    peers: Vec<i32>,
}

impl Telemetry {
    /// Telemetry of the running machine. No capacity probe under a
    /// user-mode emulator: it would time the emulator (the run is flagged
    /// as emulated anyway), at a cost of seconds a case.
    pub fn live() -> Telemetry {
        let root = SysRoot::live();
        let cpuinfo = root
            .read_proc("cpuinfo")
            .map(|t| crate::parse_cpuinfo(&t))
            .unwrap_or_default();
        let probe = !crate::virt::live_user_mode_emulated(&cpuinfo);
        Telemetry {
            capacity: probe.then(|| Arc::new(Mutex::new(None))),
            ..Telemetry::at(root)
        }
    }

    /// Telemetry read through `root` (a fixture tree in tests).
    pub fn at(root: SysRoot) -> Telemetry {
        let paths = Paths::find(&root);
        Telemetry {
            root,
            paths,
            ticks: procs::clock_ticks(),
            run_start_mhz: Mutex::new(None),
            cpu_bound: Vec::new(),
            capacity: None,
            peers: Vec::new(),
        }
    }

    /// The same, judging the cases of `families` as CPU-bound: one that
    /// waited for I/O or stalled on memory is disturbed. Without it no
    /// family is.
    pub fn with_cpu_bound_families<S: Into<String>>(
        mut self,
        families: impl IntoIterator<Item = S>,
    ) -> Telemetry {
        self.cpu_bound = families.into_iter().map(Into::into).collect();
        self
    }

    /// The same, with these processes (and their descendants) as the far
    /// side of the measurement: a `sysgauge listen --serve` on this
    /// machine that `net --peer` measures against. Their CPU time is the
    /// peer's work (`peer_cpus`), not another process disturbing the case.
    pub fn with_peer_processes(mut self, pids: &[u32]) -> Telemetry {
        self.peers = pids.iter().filter_map(|p| i32::try_from(*p).ok()).collect();
        self
    }
}

/// One sample of the series.
#[derive(Debug, Clone, Copy)]
struct Point {
    secs: f64,
    busy_cpus: Option<f64>,
    mhz: Option<f64>,
    temp_c: Option<f64>,
}

struct Watch {
    cpu_bound: bool,
    start: Full,
    peers: Vec<i32>,
    stop: Sender<()>,
    sampler: Option<JoinHandle<Vec<Point>>>,
    root: SysRoot,
    paths: Paths,
    ticks: f64,
    run_start_mhz: Option<f64>,
    capacity: Option<Arc<Mutex<Option<Tracker>>>>,
    /// The capacity probe's reading before the case, as a share of the
    /// run's best.
    capacity_before: Option<f64>,
}

/// A capacity reading as a share of the run's best, starting the tracker
/// at the first call.
fn read_capacity(tracker: &Mutex<Option<Tracker>>) -> f64 {
    let mut t = tracker.lock().unwrap_or_else(|e| e.into_inner());
    t.get_or_insert_with(Tracker::start).read()
}

impl CaseMonitor for Telemetry {
    fn watch(&self, family: &str) -> Box<dyn CaseWatch> {
        // Before the snapshot, so that the case's own CPU time leaves the
        // probe out.
        let capacity_before = self.capacity.as_deref().map(read_capacity);
        let start = full(&self.root, &self.paths, &self.peers);
        let run_start_mhz = {
            let mut first = self.run_start_mhz.lock().unwrap_or_else(|e| e.into_inner());
            if first.is_none() {
                *first = start.light.mhz;
            }
            *first
        };
        let (stop, stopped) = mpsc::channel::<()>();
        let (root, paths, ticks) = (self.root.clone(), self.paths.clone(), self.ticks);
        let t0 = start.at;
        let mut prev = start.light.cpu;
        let sampler = std::thread::Builder::new()
            .name("sg-telemetry".into())
            .spawn(move || {
                let mut series = Vec::new();
                while series.len() < MAX_SAMPLES {
                    match stopped.recv_timeout(PERIOD) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => break,
                    }
                    let l = light(&root, &paths);
                    let busy = match (l.cpu, prev) {
                        (Some(now), Some(before)) => {
                            let d = now.since(&before);
                            let secs = PERIOD.as_secs_f64();
                            Some((d.total() - d.idle - d.iowait) as f64 / ticks / secs)
                        }
                        _ => None,
                    };
                    prev = l.cpu;
                    series.push(Point {
                        secs: t0.elapsed().as_secs_f64(),
                        busy_cpus: busy,
                        mhz: l.mhz_low.or(l.mhz),
                        temp_c: l.temp_c,
                    });
                }
                series
            })
            .ok();
        Box::new(Watch {
            cpu_bound: self.cpu_bound.iter().any(|f| f == family),
            start,
            peers: self.peers.clone(),
            stop,
            sampler,
            root: self.root.clone(),
            paths: self.paths.clone(),
            ticks: self.ticks,
            run_start_mhz,
            capacity: self.capacity.clone(),
            capacity_before,
        })
    }
}

/// What a case saw, in the units the details and findings use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Wall time of the case.
    pub seconds: f64,
    /// This process (and waited-for children), in percent of one CPU (as
    /// Bonnie++'s %CP).
    pub own_cpu_percent: Option<f64>,
    /// Of which in user mode and in the kernel.
    pub own_user_percent: Option<f64>,
    /// See `own_user_percent`.
    pub own_system_percent: Option<f64>,
    /// Other processes, in CPUs (1.0 = one CPU busy all the time).
    pub other_cpus: Option<f64>,
    /// The peer's processes on this machine, in CPUs; `None` without one.
    pub peer_cpus: Option<f64>,
    /// Shares of all CPUs' time, percent: busy (not idle, not iowait).
    pub busy_percent: Option<f64>,
    /// User mode (nice included).
    pub user_percent: Option<f64>,
    /// Kernel mode.
    pub system_percent: Option<f64>,
    /// Idle with I/O outstanding.
    pub iowait_percent: Option<f64>,
    /// Stolen by the hypervisor.
    pub steal_percent: Option<f64>,
    /// Hardware interrupts.
    pub irq_percent: Option<f64>,
    /// Software interrupts.
    pub softirq_percent: Option<f64>,
    /// Stall time with at least one task waiting, ms: cpu, memory, io.
    pub psi_ms: [Option<u64>; 3],
    /// Share of the case's wall time the memory stall covered, percent.
    pub memory_stall_percent: Option<f64>,
    /// Mean cpufreq clock when the case started, MHz.
    pub mhz_start: Option<f64>,
    /// Lowest cpufreq clock of any CPU during the case, MHz.
    pub mhz_min: Option<f64>,
    /// Hottest thermal zone during the case, °C.
    pub temp_max_c: Option<f64>,
    /// Thermal throttle events during the case (all CPUs).
    pub throttle_events: Option<u64>,
}

fn summarize(start: &Full, end: &Full, points: &[Point], ticks: f64) -> Summary {
    let seconds = end.at.duration_since(start.at).as_secs_f64().max(1e-9);
    let cpu = match (start.light.cpu, end.light.cpu) {
        (Some(a), Some(b)) => Some(b.since(&a)),
        _ => None,
    };
    let share = |f: fn(&CpuTimes) -> u64| {
        cpu.filter(|c| c.total() > 0)
            .map(|c| 100.0 * f(&c) as f64 / c.total() as f64)
    };
    let own = |part: fn((u64, u64)) -> u64| match (start.own, end.own) {
        (Some(a), Some(b)) => {
            Some(100.0 * part(b).saturating_sub(part(a)) as f64 / ticks / seconds)
        }
        _ => None,
    };
    let ticks_since = |start: &BTreeMap<(i32, u64), u64>, end: &BTreeMap<(i32, u64), u64>| {
        end.iter()
            .map(|(k, now)| now.saturating_sub(start.get(k).copied().unwrap_or(0)))
            .sum::<u64>()
    };
    let other_ticks = ticks_since(&start.others, &end.others);
    let peer_ticks = ticks_since(&start.peer, &end.peer);
    let psi_ms = std::array::from_fn(|i| match (start.psi[i], end.psi[i]) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a) / 1000),
        _ => None,
    });
    let mhz_min = points
        .iter()
        .filter_map(|p| p.mhz)
        .chain(end.light.mhz_low)
        .chain(start.light.mhz_low)
        .reduce(f64::min);
    let temp_max_c = points
        .iter()
        .filter_map(|p| p.temp_c)
        .chain(end.light.temp_c)
        .chain(start.light.temp_c)
        .reduce(f64::max);
    Summary {
        seconds,
        own_cpu_percent: own(|(u, s)| u + s),
        own_user_percent: own(|(u, _)| u),
        own_system_percent: own(|(_, s)| s),
        other_cpus: (!end.others.is_empty()).then(|| other_ticks as f64 / ticks / seconds),
        peer_cpus: (!end.peer.is_empty()).then(|| peer_ticks as f64 / ticks / seconds),
        busy_percent: share(|c| c.total() - c.idle - c.iowait),
        user_percent: share(|c| c.user + c.nice),
        system_percent: share(|c| c.system),
        iowait_percent: share(|c| c.iowait),
        steal_percent: share(|c| c.steal),
        irq_percent: share(|c| c.irq),
        softirq_percent: share(|c| c.softirq),
        memory_stall_percent: psi_ms[1].map(|ms: u64| 100.0 * ms as f64 / 1000.0 / seconds),
        psi_ms,
        mhz_start: start.light.mhz,
        mhz_min,
        temp_max_c,
        throttle_events: match (start.throttle, end.throttle) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
    }
}

impl Summary {
    /// The details a result stores.
    pub fn details(&self) -> Params {
        let mut d = Params::new();
        let fixed = |v: f64, places: usize| format!("{v:.places$}");
        for (key, v) in [
            ("cpu_percent", self.own_cpu_percent),
            ("cpu_user_percent", self.own_user_percent),
            ("cpu_system_percent", self.own_system_percent),
        ] {
            if let Some(v) = v {
                d.insert(key, v.round() as i64);
            }
        }
        if let Some(v) = self.other_cpus {
            d.insert("other_cpus", fixed(v, 2));
        }
        if let Some(v) = self.peer_cpus {
            d.insert("peer_cpus", fixed(v, 2));
        }
        for (key, v) in [
            ("busy_percent", self.busy_percent),
            ("user_percent", self.user_percent),
            ("system_percent", self.system_percent),
            ("iowait_percent", self.iowait_percent),
            ("steal_percent", self.steal_percent),
            ("irq_percent", self.irq_percent),
            ("softirq_percent", self.softirq_percent),
        ] {
            if let Some(v) = v {
                d.insert(key, fixed(v, 1));
            }
        }
        for (key, v) in ["psi_cpu_ms", "psi_memory_ms", "psi_io_ms"]
            .iter()
            .zip(self.psi_ms)
        {
            if let Some(v) = v {
                d.insert(key, v);
            }
        }
        if let Some(v) = self.mhz_min {
            d.insert("mhz_min", v.round() as i64);
        }
        if let Some(v) = self.temp_max_c {
            d.insert("temp_max_c", v.round() as i64);
        }
        if let Some(v) = self.throttle_events {
            d.insert("throttle_events", v);
        }
        d
    }

    /// Findings and the reasons the case is disturbed, for a case called
    /// `case` (of a CPU-bound family or not); `run_start_mhz` is the clock
    /// at the run's first case.
    pub fn judge(
        &self,
        cpu_bound: bool,
        case: &str,
        run_start_mhz: Option<f64>,
    ) -> (Vec<Finding>, Vec<String>) {
        let mut findings = Vec::new();
        let mut why = Vec::new();
        let mut flag = |code: &str, reason: String, remedy: &str| {
            findings.push(
                Finding::new(code, Severity::Warning, format!("{case}: {reason}"))
                    .with_remedy(remedy),
            );
            why.push(reason);
        };
        if let Some(o) = self.other_cpus.filter(|o| *o >= OTHER_CPUS_LIMIT) {
            flag(
                OTHER_PROCESSES,
                format!("other processes used {o:.2} CPUs on average while it ran"),
                "stop other work (`sysgauge procs` shows what runs) and measure again",
            );
        }
        if let Some(s) = self.steal_percent.filter(|s| *s >= STEAL_LIMIT_PERCENT) {
            flag(
                STEAL,
                format!("the hypervisor stole {s:.1} % of the CPU time while it ran"),
                "another guest on the host competes for the CPUs: measure at another time, or on dedicated vCPUs",
            );
        }
        if let Some(n) = self.throttle_events.filter(|n| *n > 0) {
            flag(
                THROTTLED,
                format!("the CPUs throttled {n} times (thermal throttle counters) while it ran"),
                "improve cooling, or let the machine cool down between runs",
            );
        } else if let (Some(low), Some(start)) = (self.mhz_min, run_start_mhz) {
            if low < CLOCK_DROP_FRACTION * start {
                flag(
                    THROTTLED,
                    format!(
                        "the CPU clock fell to {low:.0} MHz, {:.0} % of the {start:.0} MHz at the start of the run",
                        100.0 * low / start
                    ),
                    "thermal or power limits, or a governor stepping down: improve cooling, or set the performance governor",
                );
            }
        }
        if cpu_bound {
            if let Some(w) = self
                .iowait_percent
                .filter(|w| *w >= CPU_CASE_WAIT_LIMIT_PERCENT)
            {
                flag(
                    WAITED,
                    format!("the CPUs waited for I/O {w:.1} % of the time during a CPU case"),
                    "something else is reading or writing: stop it and measure again",
                );
            }
            if let Some(m) = self
                .memory_stall_percent
                .filter(|m| *m >= CPU_CASE_WAIT_LIMIT_PERCENT)
            {
                flag(
                    WAITED,
                    format!("tasks stalled on memory {m:.1} % of the time during a CPU case"),
                    "the machine is short of memory (swapping or reclaiming): free memory and measure again",
                );
            }
        }
        (findings, why)
    }
}

/// The series as `s:busy CPUs/MHz/°C` points, `-` where unknown.
fn series_text(points: &[Point]) -> String {
    let opt =
        |v: Option<f64>, places: usize| v.map_or("-".to_string(), |v| format!("{v:.places$}"));
    points
        .iter()
        .map(|p| {
            format!(
                "{:.2}:{}/{}/{}",
                p.secs,
                opt(p.busy_cpus, 2),
                opt(p.mhz, 0),
                opt(p.temp_c, 0)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl CaseWatch for Watch {
    fn finish(mut self: Box<Self>, case: &str) -> Observed {
        let _ = self.stop.send(());
        let points = self
            .sampler
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let end = full(&self.root, &self.paths, &self.peers);
        let capacity_after = self.capacity.as_deref().map(read_capacity);
        let s = summarize(&self.start, &end, &points, self.ticks);
        let mut details = s.details();
        if s.seconds >= SERIES_MIN.as_secs_f64() && !points.is_empty() {
            details.insert("telemetry_series", series_text(&points));
        }
        let (mut findings, mut disturbed) = s.judge(self.cpu_bound, case, self.run_start_mhz);
        let lower = self
            .capacity_before
            .into_iter()
            .chain(capacity_after)
            .reduce(f64::min);
        if let Some(share) = lower {
            details.insert("capacity", format!("{share:.3}"));
            if let Some(why) = capacity::judge(share) {
                findings.push(
                    Finding::new(
                        capacity::CAPACITY_DIP,
                        Severity::Warning,
                        format!("{case}: {why}"),
                    )
                    .with_remedy(
                        "run again (`--exclude-disturbed` leaves the case out); on a \
                         cloud machine, a type with dedicated cores does not share them",
                    ),
                );
                disturbed.push(why);
            }
        }
        Observed {
            details,
            findings,
            disturbed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_proc_stat_and_psi() {
        let t = parse_cpu_times("cpu  10 1 5 100 7 2 3 4 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            (t.user, t.nice, t.system, t.idle, t.iowait, t.irq, t.softirq, t.steal),
            (10, 1, 5, 100, 7, 2, 3, 4)
        );
        assert_eq!(t.total(), 132);
        // An old kernel's four fields.
        assert_eq!(parse_cpu_times("cpu 1 2 3 4\n").map(|t| t.steal), Some(0));
        let lines = parse_cpu_lines(
            "cpu  10 1 5 100 7 2 3 4 0 0\ncpu0 1 2 3 4\ncpu1 5 6 7 8 9\ncpufoo 1 2 3 4\ncpu2 x\nintr 5\nprocs_running 3\nprocs_blocked 1\n",
        );
        let names: Vec<&str> = lines.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["cpu", "cpu0", "cpu1"]);
        assert_eq!(lines[2].1.iowait, 9);
        let stat = "cpu 1 2 3 4\nprocs_running 3\nprocs_blocked 1\n";
        assert_eq!(parse_stat_counter(stat, "procs_running"), Some(3));
        assert_eq!(parse_stat_counter(stat, "procs_blocked"), Some(1));
        assert_eq!(parse_stat_counter(stat, "procs"), None);
        assert_eq!(parse_cpu_times("cpu 1 x 3 4\n"), None);
        assert_eq!(parse_cpu_times("intr 5\n"), None);
        let psi = "some avg10=0.00 avg60=0.00 avg300=0.00 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n";
        assert_eq!(parse_psi_some_total(psi), Some(123_456));
        assert_eq!(parse_psi_some_total("full total=1\n"), None);
    }

    fn summary() -> Summary {
        Summary {
            seconds: 4.0,
            own_cpu_percent: Some(99.0),
            own_user_percent: Some(97.0),
            own_system_percent: Some(2.0),
            other_cpus: Some(0.05),
            peer_cpus: None,
            busy_percent: Some(52.0),
            user_percent: Some(50.0),
            system_percent: Some(1.5),
            iowait_percent: Some(0.0),
            steal_percent: Some(0.1),
            irq_percent: Some(0.1),
            softirq_percent: Some(0.4),
            psi_ms: [Some(3), Some(0), Some(0)],
            memory_stall_percent: Some(0.0),
            mhz_start: Some(3000.0),
            mhz_min: Some(2990.0),
            temp_max_c: Some(55.0),
            throttle_events: Some(0),
        }
    }

    #[test]
    fn a_quiet_case_is_not_disturbed() {
        let (f, why) = summary().judge(true, "hash.sha256", Some(3000.0));
        assert!(f.is_empty() && why.is_empty(), "{f:?}");
        let d = summary().details();
        assert_eq!(d.get_int("cpu_percent"), Some(99));
        assert_eq!(d.get_int("cpu_user_percent"), Some(97));
        assert_eq!(d.get_str("softirq_percent"), Some("0.4"));
        assert_eq!(d.get_str("other_cpus"), Some("0.05"));
        assert_eq!(d.get_int("psi_cpu_ms"), Some(3));
        assert_eq!(d.get_int("mhz_min"), Some(2990));
    }

    #[test]
    fn each_threshold_gives_its_finding() {
        let judge = |s: Summary, cpu_bound: bool| {
            let (f, why) = s.judge(cpu_bound, "x.y", Some(3000.0));
            assert_eq!(f.len(), why.len());
            f.into_iter().map(|f| f.code).collect::<Vec<_>>()
        };
        let busy = Summary {
            other_cpus: Some(0.97),
            ..summary()
        };
        assert_eq!(judge(busy.clone(), true), vec![OTHER_PROCESSES]);
        let (f, why) = busy.judge(true, "hash.sha256", None);
        assert!(f[0]
            .message
            .starts_with("hash.sha256: other processes used 0.97 CPUs"));
        assert!(why[0].contains("0.97 CPUs"));
        let stolen = Summary {
            steal_percent: Some(6.0),
            ..summary()
        };
        assert_eq!(judge(stolen, false), vec![STEAL]);
        let slow = Summary {
            mhz_min: Some(2000.0),
            ..summary()
        };
        assert_eq!(judge(slow, true), vec![THROTTLED]);
        let hot = Summary {
            throttle_events: Some(3),
            ..summary()
        };
        assert_eq!(judge(hot, true), vec![THROTTLED]);
        let waiting = Summary {
            iowait_percent: Some(12.0),
            memory_stall_percent: Some(9.0),
            ..summary()
        };
        assert_eq!(judge(waiting.clone(), true), vec![WAITED, WAITED]);
        // A disk case waits for I/O by design.
        assert!(judge(waiting, false).is_empty());
    }

    #[test]
    fn descendants_and_kernel_threads_are_not_others() {
        let p = |pid: i32, ppid: i32| ProcStat {
            pid,
            comm: "x".into(),
            state: 'S',
            ppid,
            utime: 0,
            stime: 0,
            cutime: 0,
            cstime: 0,
            threads: 1,
            starttime: 0,
            rss_pages: None,
        };
        // 100 is us; 300 is our grandchild listed before its parent 200;
        // 50 is a kernel thread; 400 is someone else.
        let all = [p(300, 200), p(50, 2), p(200, 100), p(100, 1), p(400, 1)];
        let skip = not_others(&all, 100);
        assert!(skip.contains(&200) && skip.contains(&300) && skip.contains(&50));
        assert!(!skip.contains(&400) && !skip.contains(&1));
        // The peer (a listener on this machine, 400) is counted apart.
        let peer = peer_pids(&all, &[400]);
        assert_eq!(peer.into_iter().collect::<Vec<_>>(), [400]);
    }

    #[test]
    fn a_live_watch_reports_this_process() {
        if sysgauge_testkit::emulator_cannot(crate::procs::tests::QEMU_STAT) {
            return;
        }
        let t = Telemetry::live();
        let w = t.watch("cpu");
        // Spin until this thread has used 20 ticks of CPU (at most 10 s of
        // wall time, however busy the machine is): our own CPU.
        let thread_ticks = || {
            std::fs::read_to_string("/proc/thread-self/stat")
                .ok()
                .and_then(|s| procs::parse_stat(&s).ok())
                .map(|p| p.utime + p.stime)
        };
        let (started, from) = (Instant::now(), thread_ticks());
        assert!(from.is_some(), "/proc/thread-self/stat");
        let mut x = 0u64;
        while started.elapsed() < Duration::from_secs(10)
            && thread_ticks()
                .zip(from)
                .is_some_and(|(now, then)| now - then < 20)
        {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        let seen = w.finish("cpu.test");
        let own = seen.details.get_int("cpu_percent").unwrap_or(0);
        assert!(own >= 2, "{:?}", seen.details);
        for key in ["other_cpus", "busy_percent", "steal_percent"] {
            assert!(
                seen.details.get_str(key).is_some(),
                "{key}: {:?}",
                seen.details
            );
        }
    }

    proptest! {
        #[test]
        fn parsers_never_panic(text in "\\PC{0,200}") {
            let _ = parse_cpu_times(&text);
            let _ = parse_psi_some_total(&text);
        }
    }
}
