//! The `clock` family: is this CPU running at its rated clock?
//!
//! `clock.effective` pins itself to each CPU in turn (sched_setaffinity),
//! measures the core's effective frequency with a chain of dependent
//! single-cycle additions (`chain.rs`; method and assumptions in
//! docs/clock.md), and compares it with the nominal clock (cpufreq
//! `base_frequency`, else the `@ x.xxGHz` of the model name, else cpufreq
//! `cpuinfo_max_freq`) and with what the kernel reports (`cpu MHz`,
//! `scaling_cur_freq`).
//!
//! A rated clock the user gives (`--rated 4.5GHz`, the fleet inventory's
//! `rated_mhz`) takes the nominal clock's place, as if it were published:
//! VMs and many ARM boards publish none. It is a judgement input and a
//! host fact, never a param, so runs with and without it compare.
//!
//! Findings: `clock-below-nominal` when a core runs below 90 % of its
//! nominal clock, with the likely causes and what was seen (governor,
//! temperatures, throttle counters); `clock-unjudged` when no nominal clock
//! exists (many VMs): the measured clock is reported and nothing is guessed;
//! `clock-dropped` when the check at the end of `sysgauge run` finds a core
//! below 95 % of its clock at the start of the run.
//!
//! Inside `sysgauge run` the check runs first (phase `start`, before
//! anything has warmed the CPU) and again last (phase `end`); both are
//! stored as results of the run with params `cpu` and `phase`. The end
//! check reads the start values from the options both share.

pub mod chain;
pub mod facts;
pub mod report;

use facts::{CpuClockFacts, FactsRoot};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use sysgauge_core::record::{Finding, Severity};
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, HostInfo, Metric, Params, Plan, RunCtx, Unit,
};
use sysgauge_family::util::metric;

pub const BELOW_NOMINAL: &str = "clock-below-nominal";
pub const UNJUDGED: &str = "clock-unjudged";
pub const DROPPED: &str = "clock-dropped";
pub const APPROXIMATE: &str = "clock-approximate";

/// Below this fraction of the nominal clock a core is "running slow".
pub const BELOW_NOMINAL_FRACTION: f64 = 0.90;
/// Below this fraction of its start-of-run clock, a core "dropped".
pub const DROP_FRACTION: f64 = 0.95;

/// When in a run the check is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// `sysgauge clock` on its own.
    Single,
    /// The start of `sysgauge run`.
    #[default]
    Start,
    /// The end of `sysgauge run`.
    End,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Single => "single",
            Phase::Start => "start",
            Phase::End => "end",
        }
    }
}

/// Options of the clock family, shared by the start and end checks.
#[derive(Debug, Default)]
pub struct ClockOptions {
    pub phase: Phase,
    /// Only these CPUs (default: every CPU this process may run on).
    pub cpus: Option<Vec<u32>>,
    /// Start-of-run clock per CPU, filled by the start check.
    pub start_mhz: Mutex<BTreeMap<u32, f64>>,
    /// The rated clock the user gave (MHz), judged against as if published.
    pub rated_mhz: Option<f64>,
}

/// Where a rated clock given by the user is said to come from.
pub const GIVEN_SOURCE: &str = "given by the user (--rated)";

pub use sysgauge_core::host::{RATED_MAX_MHZ, RATED_MIN_MHZ};

/// A rated clock as the user writes it: a number with `GHz` or `MHz`
/// (either case, a space allowed), or a bare number of MHz; in MHz.
pub fn parse_rated(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (number, scale, unit) = if let Some(n) = lower.strip_suffix("ghz") {
        (n, 1000.0, "GHz")
    } else if let Some(n) = lower.strip_suffix("mhz") {
        (n, 1.0, "MHz")
    } else {
        (lower.as_str(), 1.0, "")
    };
    let value: f64 = number.trim().parse().map_err(|_| {
        format!("'{text}' is not a clock: give a number with GHz or MHz, e.g. 4.5GHz or 2400MHz")
    })?;
    let mhz = value * scale;
    if !mhz.is_finite() || !(RATED_MIN_MHZ..=RATED_MAX_MHZ).contains(&mhz) {
        let hint = if unit.is_empty() && value > 0.0 && value < RATED_MIN_MHZ {
            format!(" (a bare number is MHz: did you mean {value}GHz?)")
        } else {
            String::new()
        };
        return Err(format!(
            "'{text}' is not a plausible rated clock: it must be between {RATED_MIN_MHZ:.0} MHz and {:.0} GHz{hint}",
            RATED_MAX_MHZ / 1000.0
        ));
    }
    Ok(mhz)
}

/// The nominal clock of a CPU and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Nominal {
    pub mhz: f64,
    pub source: &'static str,
}

/// The nominal clock: base frequency, else the model name's rating, else
/// cpufreq's maximum (the rated clock on ARM boards; on x86 with turbo it
/// is the turbo maximum, hence last).
pub fn nominal(host: &HostInfo, f: &CpuClockFacts) -> Option<Nominal> {
    let pick = |v: Option<f64>, source| v.filter(|m| *m > 0.0).map(|mhz| Nominal { mhz, source });
    pick(f.base_mhz, "cpufreq base_frequency")
        .or_else(|| pick(host.cpu.base_mhz, "cpufreq base_frequency"))
        .or_else(|| pick(host.cpu.nominal_mhz, "the model name"))
        .or_else(|| pick(f.max_mhz, "cpufreq cpuinfo_max_freq"))
        .or_else(|| pick(host.cpu.cpufreq_max_mhz, "cpufreq cpuinfo_max_freq"))
}

fn ghz(mhz: f64) -> String {
    format!("{:.2} GHz", mhz / 1000.0)
}

/// The clock a core is judged against: the user's rated clock when given,
/// else the published nominal clock.
pub fn judged_against(
    rated_mhz: Option<f64>,
    host: &HostInfo,
    f: &CpuClockFacts,
) -> Option<Nominal> {
    rated_mhz
        .filter(|m| *m > 0.0)
        .map(|mhz| Nominal {
            mhz,
            source: GIVEN_SOURCE,
        })
        .or_else(|| nominal(host, f))
}

/// What was seen that can explain a slow core, as one sentence.
pub fn observations(f: &CpuClockFacts, host: &HostInfo, zones: &[(String, f64)]) -> String {
    let mut seen = Vec::new();
    match f.governor.as_deref().or(host.cpu.governor.as_deref()) {
        Some(g) => seen.push(format!("governor '{g}'")),
        None => seen.push("no cpufreq governor exposed".to_string()),
    }
    if let Some(cur) = f.scaling_cur_mhz {
        seen.push(format!("cpufreq current {}", ghz(cur)));
    }
    if let Some(r) = f.reported_mhz {
        seen.push(format!("cpu MHz {r:.0}"));
    }
    if zones.is_empty() {
        seen.push("no thermal zones".to_string());
    } else {
        let hottest = zones
            .iter()
            .map(|(k, t)| format!("{k} {t:.0} °C"))
            .collect::<Vec<_>>()
            .join(", ");
        seen.push(format!("temperatures {hottest}"));
    }
    if f.throttle_counts.is_empty() {
        seen.push("no thermal throttle counters".to_string());
    } else {
        let t = f
            .throttle_counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        seen.push(format!("throttle counters {t}"));
    }
    if let Some(v) = host.cpu.virtualization.as_deref().filter(|v| *v != "none") {
        seen.push(format!("virtualized ({v})"));
    }
    seen.join("; ")
}

/// Findings for one CPU's measurement in `phase` (a run measures each CPU
/// at its start and at its end: the findings say which, or two of them
/// would read alike).
pub fn judge(
    cpu: u32,
    phase: Phase,
    measured_mhz: f64,
    nominal: Option<&Nominal>,
    seen: &str,
    exact: bool,
) -> Vec<Finding> {
    let mut v = Vec::new();
    let cpu = match phase {
        Phase::Single => format!("{cpu}"),
        Phase::Start => format!("{cpu} (at the run's start)"),
        Phase::End => format!("{cpu} (at the run's end)"),
    };
    match nominal {
        Some(n) if measured_mhz < BELOW_NOMINAL_FRACTION * n.mhz => v.push(
            Finding::new(
                BELOW_NOMINAL,
                Severity::Warning,
                format!(
                    "CPU {cpu} is running below its rated clock: {} measured, {:.0} % of the nominal {} (from {}); seen: {seen}",
                    ghz(measured_mhz),
                    100.0 * measured_mhz / n.mhz,
                    ghz(n.mhz),
                    n.source
                ),
            )
            .with_remedy(
                "likely causes: a power-saving governor (cpupower frequency-set -g performance), \
                 thermal throttling (check cooling, dust, fans; see the temperatures and throttle \
                 counters), power or current capping (BIOS/firmware power limits, a weak power \
                 supply on boards), or a hypervisor limiting the virtual CPU",
            ),
        ),
        Some(_) => {}
        None => v.push(
            Finding::new(
                UNJUDGED,
                Severity::Info,
                format!(
                    "CPU {cpu} runs at {} measured, but this machine publishes no rated clock (no '@ GHz' in the model name, no cpufreq base or maximum frequency; common in VMs), so sysgauge cannot judge whether it runs below it",
                    ghz(measured_mhz)
                ),
            )
            .with_remedy(
                "give the CPU vendor's rated clock for this model with --rated (e.g. --rated 3.5GHz; `rated_mhz` in a fleet inventory), or compare with the same machine type measured elsewhere",
            ),
        ),
    }
    if !exact {
        v.push(
            Finding::new(
                APPROXIMATE,
                Severity::Info,
                format!("the clock of CPU {cpu} was measured with a portable loop on this architecture and is approximate"),
            )
            .with_remedy("treat the clock as a rough figure; x86-64 and aarch64 builds measure it exactly"),
        );
    }
    v
}

/// Finding for a core whose end-of-run clock fell below its start clock.
pub fn drop_finding(cpu: u32, start_mhz: f64, end_mhz: f64) -> Option<Finding> {
    (end_mhz < DROP_FRACTION * start_mhz).then(|| {
        Finding::new(
            DROPPED,
            Severity::Warning,
            format!(
                "the clock of CPU {cpu} dropped during the run: {} at the end, {:.0} % of the {} measured at the start",
                ghz(end_mhz),
                100.0 * end_mhz / start_mhz,
                ghz(start_mhz)
            ),
        )
        .with_remedy(
            "the CPU slowed down under sustained load (thermal or power limits): later results of this run are lower than the machine can do in short bursts; improve cooling or compare runs with the same length",
        )
    })
}

/// CPUs this process may run on (its affinity mask), in order.
pub fn allowed_cpus() -> Vec<u32> {
    let Ok(set) = rustix::thread::sched_getaffinity(None) else {
        return vec![0];
    };
    (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .filter_map(|c| u32::try_from(c).ok())
        .collect()
}

/// The calling thread pinned to one CPU; the previous mask is restored on drop.
struct Pinned {
    old: rustix::thread::CpuSet,
}

impl Pinned {
    fn to(cpu: u32) -> std::io::Result<Pinned> {
        let old = rustix::thread::sched_getaffinity(None)?;
        let cpu = cpu as usize;
        if cpu >= rustix::thread::CpuSet::MAX_CPU {
            return Err(rustix::io::Errno::INVAL.into());
        }
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        // `None` is this thread.
        rustix::thread::sched_setaffinity(None, &set)?;
        Ok(Pinned { old })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Failure leaves the thread pinned, which is harmless for
        // correctness.
        let _ = rustix::thread::sched_setaffinity(None, &self.old);
    }
}

/// CPU time this thread has run, in seconds.
///
/// The chain is timed with the thread's CPU clock, not the wall clock: on a
/// busy machine the scheduler preempts the chain, and wall time would count
/// the time other processes ran as if this core had been slow. The kernel
/// accounts thread run time with the scheduler clock (nanoseconds), and
/// with paravirtual steal-time accounting a VM's stolen time is left out
/// too, so cycles / CPU-seconds is the clock the core ran at.
pub fn thread_cpu_seconds() -> Option<f64> {
    // rustix's clock_gettime cannot fail for the static clocks.
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Run the chain for `iters` iterations; MHz by thread CPU time.
fn timed_chain(iters: u64) -> Result<(f64, f64), BenchError> {
    let clock_err = || BenchError::failed("cannot read this thread's CPU clock");
    let t0 = thread_cpu_seconds().ok_or_else(clock_err)?;
    let x = chain::add_chain(std::hint::black_box(iters));
    let t1 = thread_cpu_seconds().ok_or_else(clock_err)?;
    if x != iters.wrapping_mul(chain::ADDS_PER_ITER) {
        return Err(BenchError::failed("the add chain computed a wrong sum"));
    }
    let dt = t1 - t0;
    let adds = iters as f64 * chain::ADDS_PER_ITER as f64;
    Ok((dt, if dt > 0.0 { adds / dt / 1e6 } else { 0.0 }))
}

/// Measure the effective clock of the CPU this thread runs on: calibrate
/// the chain to the repetition target, warm up (clocks ramp up under load),
/// then one MHz sample per repetition.
pub fn measure_here(ctx: &mut RunCtx) -> Result<Vec<f64>, BenchError> {
    let target = ctx.repetition_target().as_secs_f64();
    let mut iters: u64 = 1000;
    let started = ctx.now();
    loop {
        ctx.check_cancel()?;
        let (dt, _) = timed_chain(iters)?;
        if dt >= target || ctx.now().saturating_sub(started) > ctx.budget() {
            break;
        }
        let factor = if dt <= 0.0 {
            100.0
        } else {
            (target / dt * 1.2).clamp(1.5, 100.0)
        };
        iters = ((iters as f64) * factor).ceil().min(1e15) as u64;
    }
    ctx.note_detail("iterations_per_rep", iters);
    ctx.note_detail("timing", "thread CPU time (preemption and steal excluded)");
    ctx.repeat(|_| match timed_chain(iters)? {
        (dt, mhz) if dt > 0.0 => Ok(mhz),
        _ => Err(BenchError::failed(
            "a repetition took no measurable CPU time",
        )),
    })
}

pub struct ClockBenchmark {
    options: Arc<ClockOptions>,
    phase: Phase,
}

impl ClockBenchmark {
    pub fn new(options: Arc<ClockOptions>, phase: Phase) -> Self {
        ClockBenchmark { options, phase }
    }
}

impl Benchmark for ClockBenchmark {
    fn id(&self) -> &str {
        "clock.effective"
    }

    fn describe(&self) -> Description {
        Description::new("effective clock of each CPU (chain of dependent adds), against its nominal and reported clock", Unit::MHz, Better::Higher)
    }

    /// One case per CPU the user named; by default one case that measures
    /// every CPU in turn (`cpus=all`), so the case is the same on machines
    /// with any number of CPUs.
    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        let phase = Params::new().with("phase", self.phase.as_str());
        match &self.options.cpus {
            Some(cpus) => cpus.iter().map(|&c| phase.clone().with("cpu", c)).collect(),
            None => vec![phase.with("cpus", sysgauge_core::ALL_CPUS)],
        }
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let one = match params.get("cpu") {
            None => None,
            Some(_) => Some(
                params
                    .get_u64("cpu")
                    .and_then(|c| u32::try_from(c).ok())
                    .ok_or_else(|| BenchError::failed("the cpu parameter is not a CPU number"))?,
            ),
        };
        let cpus = one.map_or_else(allowed_cpus, |c| vec![c]);
        let share = 1.0 / cpus.len().max(1) as f64;
        let mut pooled = Vec::new();
        let mut per_cpu = Vec::new();
        let mut unusable = Vec::new();
        for &cpu in &cpus {
            match ctx.with_budget_share(share, |ctx| self.measure_cpu(ctx, cpu, one.is_some())) {
                Ok((median, samples)) => {
                    per_cpu.push(format!("{cpu}: {median:.0}"));
                    pooled.extend(samples);
                }
                Err(BenchError::Skip { reason, .. }) if one.is_none() => unusable.push(reason),
                Err(e) => return Err(e),
            }
        }
        if pooled.is_empty() {
            return Err(BenchError::skip(
                format!("no CPU could be measured: {}", unusable.join("; ")),
                "the CPUs may be offline or outside this process's CPU set (taskset, cgroups)",
            ));
        }
        if one.is_none() {
            ctx.note_detail("per_cpu_mhz", per_cpu.join(", "));
            if self.phase == Phase::End {
                let start = self.options.start_mhz.lock().ok().map(|m| {
                    m.iter()
                        .map(|(cpu, mhz)| format!("{cpu}: {mhz:.0}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                if let Some(start) = start.filter(|s| !s.is_empty()) {
                    ctx.note_detail("start_per_cpu_mhz", start);
                }
            }
            if !unusable.is_empty() {
                ctx.note_detail("unmeasured", unusable.join("; "));
            }
        }
        ctx.note_detail("method", chain::method());
        Ok(vec![metric(
            "effective",
            Unit::MHz,
            Better::Higher,
            pooled,
        )?])
    }
}

impl ClockBenchmark {
    /// Measure one CPU: its samples and their median, with its findings
    /// and (for one CPU, or the first of all) what the machine reports
    /// about its clock as details.
    fn measure_cpu(
        &self,
        ctx: &mut RunCtx,
        cpu: u32,
        only: bool,
    ) -> Result<(f64, Vec<f64>), BenchError> {
        let host = ctx
            .fixture("clock-host", |_| Ok(sysgauge_host::collect_live(None)))?
            .clone();
        let samples = {
            let _pin = Pinned::to(cpu).map_err(|e| {
                BenchError::skip(
                    format!("cannot run on CPU {cpu}: {e}"),
                    "the CPU may be offline or outside this process's CPU set (taskset, cgroups)",
                )
            })?;
            measure_here(ctx)?
        };
        let root = FactsRoot::live();
        let f = root.cpu(cpu);
        let zones = root.thermal_zones();
        let median = sysgauge_stats::Summary::from_samples(&samples)
            .map(|s| s.median)
            .ok_or_else(|| BenchError::failed("no clock samples"))?;
        let published = nominal(&host, &f);
        let nominal = judged_against(self.options.rated_mhz, &host, &f);
        let seen = observations(&f, &host, &zones);
        for finding in judge(
            cpu,
            self.phase,
            median,
            nominal.as_ref(),
            &seen,
            chain::exact(),
        ) {
            ctx.finding(finding);
        }
        match self.phase {
            Phase::Start => {
                if let Ok(mut m) = self.options.start_mhz.lock() {
                    m.insert(cpu, median);
                }
            }
            Phase::End => {
                let start = self
                    .options
                    .start_mhz
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&cpu).copied());
                if let Some(start) = start {
                    if only {
                        ctx.note_detail("start_mhz", start.round() as i64);
                    }
                    if let Some(d) = drop_finding(cpu, start, median) {
                        ctx.finding(d);
                    }
                }
            }
            Phase::Single => {}
        }
        // What the machine says about its clock, once per case: the CPUs of
        // one machine share their nominal clock and governor.
        let first = !ctx.has_detail("nominal_source");
        if only || first {
            let mhz = |v: Option<f64>| v.map(|m| m.round() as i64);
            if let Some(v) = mhz(f.reported_mhz) {
                ctx.note_detail("reported_mhz", v);
            }
            if let Some(v) = mhz(f.scaling_cur_mhz) {
                ctx.note_detail("scaling_cur_mhz", v);
            }
            match &nominal {
                Some(n) => {
                    ctx.note_detail("nominal_mhz", n.mhz.round() as i64);
                    ctx.note_detail("nominal_source", n.source);
                }
                None => ctx.note_detail("nominal_source", "none"),
            }
            // Beside a given rated clock, what the machine publishes (if
            // anything), so a wrong --rated shows.
            if let (Some(_), Some(p)) = (self.options.rated_mhz, &published) {
                ctx.note_detail("published_nominal_mhz", p.mhz.round() as i64);
                ctx.note_detail("published_nominal_source", p.source);
            }
            if let Some(g) = f.governor.as_deref().or(host.cpu.governor.as_deref()) {
                ctx.note_detail("governor", g);
            }
        }
        Ok((median, samples))
    }
}

sysgauge_family::register_family! {
    name: "clock", options: ClockOptions, in_default_run: true,
    cpu_bound: true, summary_first: false,
    budget_seconds: [0.1, 0.6, 4.0, 8.0], report: Some(|run, format| report::clock_table(&run.results, format)),
    summary: "effective clock of each CPU against its nominal clock (at the start and end of a run)",
}

/// The clock benchmark of the registry (the start-of-run check, or the
/// standalone check for `sysgauge clock`).
pub fn benchmarks(options: &Arc<ClockOptions>) -> Vec<Box<dyn Benchmark>> {
    vec![Box::new(ClockBenchmark::new(
        options.clone(),
        options.phase,
    ))]
}

/// The end-of-run check `sysgauge run` appends after every other family.
pub fn end_of_run(options: &Arc<ClockOptions>) -> Box<dyn Benchmark> {
    Box::new(ClockBenchmark::new(options.clone(), Phase::End))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::Profile;

    #[test]
    fn nominal_sources_in_order() {
        let mut host = HostInfo::default();
        let mut f = CpuClockFacts::default();
        assert_eq!(nominal(&host, &f), None);
        f.max_mhz = Some(4700.0);
        assert_eq!(
            nominal(&host, &f).map(|n| n.source),
            Some("cpufreq cpuinfo_max_freq")
        );
        host.cpu.nominal_mhz = Some(2600.0);
        assert_eq!(nominal(&host, &f).map(|n| n.mhz), Some(2600.0));
        f.base_mhz = Some(2100.0);
        assert_eq!(
            nominal(&host, &f),
            Some(Nominal {
                mhz: 2100.0,
                source: "cpufreq base_frequency"
            })
        );
    }

    #[test]
    fn rated_clocks_parse_with_units() {
        assert_eq!(parse_rated("4.5GHz"), Ok(4500.0));
        assert_eq!(parse_rated("4.5 ghz"), Ok(4500.0));
        assert_eq!(parse_rated("2400MHz"), Ok(2400.0));
        assert_eq!(parse_rated(" 1800 "), Ok(1800.0));
        for bad in [
            "", "fast", "GHz", "4.5THz", "-1GHz", "0MHz", "NaNGHz", "infMHz", "11GHz",
        ] {
            let e = parse_rated(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
        let slip = parse_rated("4.5").unwrap_err();
        assert!(slip.contains("did you mean 4.5GHz?"), "{slip}");
    }

    #[test]
    fn a_given_rated_clock_is_judged_against_first() {
        let mut host = HostInfo::default();
        let f = CpuClockFacts::default();
        assert_eq!(judged_against(None, &host, &f), None);
        let given = judged_against(Some(4500.0), &host, &f);
        assert_eq!(
            given,
            Some(Nominal {
                mhz: 4500.0,
                source: GIVEN_SOURCE
            })
        );
        host.cpu.nominal_mhz = Some(2600.0);
        assert_eq!(judged_against(Some(4500.0), &host, &f), given);
        assert_eq!(judged_against(None, &host, &f).map(|n| n.mhz), Some(2600.0));
        let slow = judge(0, Phase::Single, 3400.0, given.as_ref(), "", true);
        assert_eq!(slow.len(), 1);
        assert!(
            slow[0].message.contains(GIVEN_SOURCE),
            "{}",
            slow[0].message
        );
    }

    #[test]
    fn judgement() {
        let n = Nominal {
            mhz: 2600.0,
            source: "the model name",
        };
        assert!(judge(0, Phase::Single, 2500.0, Some(&n), "", true).is_empty());
        let slow = judge(
            3,
            Phase::Single,
            1200.0,
            Some(&n),
            "governor 'powersave'",
            true,
        );
        assert_eq!(slow.len(), 1);
        assert_eq!(slow[0].code, BELOW_NOMINAL);
        assert!(slow[0].message.contains("CPU 3") && slow[0].message.contains("46 %"));
        assert!(slow[0].message.contains("powersave"));
        assert!(slow[0]
            .remedy
            .as_deref()
            .unwrap_or("")
            .contains("hypervisor"));
        let unknown = judge(0, Phase::Single, 3400.0, None, "", false);
        let codes: Vec<&str> = unknown.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, vec![UNJUDGED, APPROXIMATE]);
        assert_eq!(unknown[0].severity, Severity::Info);
        assert!(unknown[0].message.contains("3.40 GHz"));
        // In a run, one CPU's start and end findings differ by their phase,
        // so the findings list keeps both.
        let start = judge(1, Phase::Start, 3400.0, None, "", true);
        let end = judge(1, Phase::End, 3400.0, None, "", true);
        assert!(start[0]
            .message
            .starts_with("CPU 1 (at the run's start) runs at 3.40 GHz"));
        assert_ne!(start[0].message, end[0].message);
        assert!(drop_finding(0, 3000.0, 2900.0).is_none());
        let d = drop_finding(1, 3000.0, 2000.0).unwrap_or_else(|| panic!("drop"));
        assert!(d.message.contains("67 %"));
    }

    #[test]
    fn observations_name_what_was_seen() {
        let mut host = HostInfo::default();
        host.cpu.virtualization = Some("kvm".into());
        let f = CpuClockFacts {
            governor: Some("powersave".into()),
            throttle_counts: vec![("core_throttle_count".into(), 4)],
            ..Default::default()
        };
        let s = observations(&f, &host, &[("x86_pkg_temp".into(), 95.0)]);
        assert!(
            s.contains("powersave")
                && s.contains("95 °C")
                && s.contains("core_throttle_count 4")
                && s.contains("kvm"),
            "{s}"
        );
        let none = observations(&CpuClockFacts::default(), &HostInfo::default(), &[]);
        assert!(none.contains("no thermal zones") && none.contains("no thermal throttle counters"));
    }

    #[test]
    fn start_and_end_share_the_start_clock() {
        let opts = Arc::new(ClockOptions::default());
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let start = ClockBenchmark::new(opts.clone(), Phase::Start);
        let cases = start.cases(&Plan {
            profile: Profile::Tiny,
            threads: 1,
        });
        assert_eq!(cases.len(), 1, "one case measures every CPU");
        assert_eq!(cases[0].get_str("phase"), Some("start"));
        assert_eq!(cases[0].get_str("cpus"), Some(sysgauge_core::ALL_CPUS));
        let mut c = sysgauge_family::util::tiny_ctx(1);
        c.begin_case(std::time::Duration::from_millis(20));
        let m = start.run(&mut c, &cases[0]).unwrap();
        assert_eq!(m[0].name, "effective");
        assert!(m[0].value() > 100.0, "{} MHz", m[0].value());
        let out = c.take_case_output();
        assert!(out.details.get_str("method").is_some());
        assert_eq!(
            out.details
                .get_str("per_cpu_mhz")
                .map(|s| s.split(", ").count()),
            Some(cpus.len())
        );
        assert!(opts.start_mhz.lock().map(|m| m.len()).unwrap_or(0) == cpus.len());
        // Pretend the start was much faster: the end check flags a drop.
        if let Ok(mut m) = opts.start_mhz.lock() {
            let v = m.values_mut().next();
            if let Some(v) = v {
                *v *= 10.0;
            }
        }
        let end = end_of_run(&opts);
        let mut endcase = cases[0].clone();
        endcase.insert("phase", "end");
        let mut c = sysgauge_family::util::tiny_ctx(1);
        c.begin_case(std::time::Duration::from_millis(20));
        end.run(&mut c, &endcase).unwrap();
        let out = c.take_case_output();
        assert!(
            out.findings.iter().any(|f| f.code == DROPPED),
            "{:?}",
            out.findings
        );
    }

    #[test]
    fn a_cpu_outside_the_mask_is_a_skip() {
        let b = ClockBenchmark::new(Arc::new(ClockOptions::default()), Phase::Single);
        let mut c = sysgauge_family::util::tiny_ctx(1);
        c.begin_case(std::time::Duration::from_millis(5));
        let r = b.run(
            &mut c,
            &Params::new()
                .with("cpu", 100_000u64)
                .with("phase", "single"),
        );
        assert!(matches!(r, Err(BenchError::Skip { .. })), "{r:?}");
    }
}
