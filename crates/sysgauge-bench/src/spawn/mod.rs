//! The `spawn` family: what it costs to start a process, by each method
//! (fork+exit, fork+exec, vfork+exec, clone(CLONE_VM|CLONE_VFORK)+exec,
//! posix_spawn, Rust's std Command, popen through `sh -c`, popen_noshell's
//! clone(CLONE_VM)+pipe+exec, system), for a
//! static no-op target and for `/bin/true`, with the parent holding 0, 256
//! MiB or 1 GiB of touched memory, and with one spawner per CPU.
//!
//! One benchmark per method (`spawn.<method>`); the case is given by the
//! params `target` (static | true; absent for fork+exit, which execs
//! nothing), `parent_mib` and `spawners`. Each case is checked once before
//! timing (the target really ran: its side effect is counted), then timed
//! with the shared calibrate/warm-up/repeat loop. One iteration is one
//! spawn-and-wait; the loop brackets each repetition with getrusage
//! (RUSAGE_SELF and RUSAGE_CHILDREN), so the parent's and the children's CPU
//! time per spawn come from exactly the timed spawns. With several
//! spawners, each repetition starts one thread per spawner and the
//! rusage brackets the whole group.
//!
//! Metrics, headline first: `spawn_time` (µs of wall time per spawn, per
//! spawner), `spawn_rate` (spawns per second, all spawners), `parent_cpu`
//! and `children_cpu` (µs of CPU, user + system, per spawn). Only the sums
//! are reported: Linux accounts each task's total CPU time exactly but
//! splits it into user and system by sampling at the timer tick, so over a
//! repetition of tens of milliseconds the split is mostly sampling noise.
//! The wall time over the CPU time (`wall_per_cpu` detail) tells a cost
//! from a wait: `cost` flags the cells that waited, or sit on the
//! scheduler tick, as disturbed, with a finding.

pub mod ballast;
pub mod cost;
pub mod method;
pub mod report;
pub mod target;

use ballast::Ballast;
pub use method::{ExecPlan, Method};
use std::path::PathBuf;
use std::sync::Arc;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Metric, Params, Plan, Profile, RunCtx, Unit,
};
use sysgauge_family::family::one_per_kind;
use sysgauge_family::util::{metric, Count};
pub use target::Target;

/// The parent sizes of the sweep, in MiB.
pub const PARENT_SWEEP_MIB: [u64; 3] = [0, 256, 1024];

/// Methods whose parent-size sweep the standard matrix measures, and those
/// it also measures with one spawner per CPU.
const MULTI_METHODS: [Method; 3] = [Method::ForkExec, Method::VforkExec, Method::PosixSpawn];

/// Command-line choices for the spawn family. With none set, the cases
/// follow the profile (or the whole matrix when `matrix` is set, as
/// `sysgauge spawn` does).
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// Measure every method over the standard matrix whatever the profile
    /// (the profile then only sets the time per case).
    pub matrix: bool,
    pub targets: Option<Vec<Target>>,
    pub parent_mib: Option<Vec<u64>>,
    pub spawners: Option<Vec<Count>>,
}

/// One case: target (None for fork+exit), parent size, spawners.
type Case = (Option<Target>, u64, Count);

pub struct SpawnBenchmark {
    method: Method,
    options: Arc<SpawnOptions>,
}

impl SpawnBenchmark {
    pub fn new(method: Method, options: Arc<SpawnOptions>) -> Self {
        SpawnBenchmark { method, options }
    }

    fn planned(&self, plan: &Plan) -> Vec<Case> {
        let m = self.method;
        let t = |t: Target| if m.execs() { Some(t) } else { None };
        let o = &self.options;
        let all = Count::AllCpus;
        let one = Count::N(1);
        let mut v: Vec<Case> = Vec::new();
        if o.targets.is_some() || o.parent_mib.is_some() || o.spawners.is_some() {
            let targets = o.targets.clone().unwrap_or_else(|| vec![Target::Static]);
            let sizes = o.parent_mib.clone().unwrap_or_else(|| vec![0]);
            let spawners = o.spawners.clone().unwrap_or_else(|| vec![one]);
            for &tg in &targets {
                for &s in &sizes {
                    for &n in &spawners {
                        v.push((t(tg), s, n));
                    }
                }
            }
        } else if o.matrix || plan.profile == Profile::Standard {
            v.push((t(Target::Static), 0, one));
            v.push((t(Target::True), 0, one));
            for &s in &PARENT_SWEEP_MIB[1..] {
                v.push((t(Target::Static), s, one));
            }
            if MULTI_METHODS.contains(&m) {
                v.push((t(Target::Static), 0, all));
            }
        } else if plan.profile == Profile::Full {
            for tg in [Target::Static, Target::True] {
                for &s in &PARENT_SWEEP_MIB {
                    v.push((t(tg), s, one));
                }
            }
            if m != Method::System {
                for tg in [Target::Static, Target::True] {
                    v.push((t(tg), 0, all));
                }
            }
        } else if matches!(m, Method::PosixSpawn | Method::ForkExec) {
            // quick and tiny: the short slice `sysgauge run` includes.
            let tg = if target::helper_available() {
                Target::Static
            } else {
                Target::True
            };
            v.push((Some(tg), 0, one));
        }
        let mut seen = Vec::new();
        v.retain(|c| {
            let new = !seen.contains(c);
            seen.push(*c);
            new
        });
        v
    }
}

/// The median of `v` (0 when empty).
fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return 0.0;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// CPU time (user + system, seconds) of RUSAGE_SELF or RUSAGE_CHILDREN.
fn cpu_seconds(who: nix::sys::resource::UsageWho) -> f64 {
    use nix::sys::time::TimeValLike;
    let Ok(ru) = nix::sys::resource::getrusage(who) else {
        return 0.0;
    };
    let s = |t: nix::sys::time::TimeVal| t.num_microseconds() as f64 * 1e-6;
    s(ru.user_time()) + s(ru.system_time())
}

#[derive(Debug, Clone, Copy)]
struct Usage {
    parent: f64,
    children: f64,
}

impl Usage {
    fn now() -> Usage {
        Usage {
            parent: cpu_seconds(nix::sys::resource::UsageWho::RUSAGE_SELF),
            children: cpu_seconds(nix::sys::resource::UsageWho::RUSAGE_CHILDREN),
        }
    }
}

/// CPU time of one repetition.
#[derive(Debug, Clone, Copy)]
struct RepUsage {
    spawns: f64,
    parent_cpu: f64,
    children_cpu: f64,
}

fn rep_usage(before: Usage, after: Usage, spawns: f64) -> RepUsage {
    RepUsage {
        spawns,
        parent_cpu: after.parent - before.parent,
        children_cpu: after.children - before.children,
    }
}

/// The ballast the current case needs, kept between cases of the session
/// so consecutive cases of one size touch it once.
#[derive(Default)]
struct BallastSlot(Option<Ballast>);

fn spawn_n(plan: &mut ExecPlan, method: Method, n: u64) -> Result<(), BenchError> {
    for _ in 0..n {
        plan.spawn(method).map_err(|e| {
            if e.is_interrupt() {
                BenchError::Cancelled
            } else {
                BenchError::failed(format!("{}: {e}", method.name()))
            }
        })?;
    }
    Ok(())
}

/// The static helper, written into the scratch directory once per session
/// and checked to be executable there.
fn helper(ctx: &mut RunCtx) -> Result<PathBuf, BenchError> {
    let p: &mut PathBuf = ctx.fixture("spawn.helper", |c| {
        let dir = c.scratch_dir()?;
        let p = target::install_helper(&dir)?;
        target::check_executable(&p)?;
        Ok(p)
    })?;
    Ok(p.clone())
}

impl Benchmark for SpawnBenchmark {
    fn id(&self) -> &str {
        self.method.id()
    }

    fn describe(&self) -> Description {
        Description::new(
            format!("{} (µs per spawn)", self.method.summary()),
            Unit::Microseconds,
            Better::Lower,
        )
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.planned(plan)
            .into_iter()
            .map(|(t, s, n)| {
                let mut p = Params::new().with("parent_mib", s).with("spawners", n);
                if let Some(t) = t {
                    p.insert("target", t.name());
                }
                p
            })
            .collect()
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let method = self.method;
        method.available().map_err(|r| {
            BenchError::skip(r, "run sysgauge on x86_64 or aarch64 for this method")
        })?;
        let parent_mib = params.get_u64("parent_mib").unwrap_or(0);
        let spawners = params
            .get_count("spawners", ctx.threads())
            .unwrap_or(1)
            .max(1);
        let target = match params.get_str("target") {
            None if !method.execs() => None,
            None => return Err(BenchError::failed("missing param 'target'")),
            Some(s) => Some(
                Target::parse(s)
                    .ok_or_else(|| BenchError::failed(format!("unknown target '{s}'")))?,
            ),
        };
        if method == Method::System && spawners > 1 {
            return Err(BenchError::skip(
                "system() changes process-wide signal dispositions while it waits, so it is measured with one spawner only",
                "use --spawners 1 for spawn.system",
            ));
        }
        let scratch = ctx.scratch_dir()?;
        let program: PathBuf = match target {
            Some(Target::True) => {
                let p = target::true_path()?;
                target::check_executable(&p)?;
                p
            }
            Some(Target::Static) => helper(ctx)?,
            // fork+exit execs nothing; its plan still names a program.
            None if target::helper_available() => helper(ctx)?,
            None => target::true_path()?,
        };
        target::verify(method, target, &program, &scratch)?;

        // The ballast: dropped or replaced when the size changes.
        {
            let slot: &mut BallastSlot = ctx.fixture("spawn.ballast", |_| Ok(BallastSlot(None)))?;
            if slot.0.as_ref().map_or(0, Ballast::mib) != parent_mib {
                slot.0 = None;
                if parent_mib > 0 {
                    slot.0 = Some(Ballast::new(parent_mib)?);
                }
            }
        }

        let mut plans = (0..spawners)
            .map(|_| ExecPlan::new(&program, &target::NO_ARGS))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BenchError::failed)?;
        if method.uses_shell() {
            ctx.note_detail("shell_command", plans[0].shell_command().to_string());
            if let Ok(sh) = std::fs::canonicalize("/bin/sh") {
                ctx.note_detail("shell", sh.display().to_string());
            }
        }
        ctx.note_detail("target_path", program.display().to_string());

        let mut log: Vec<RepUsage> = Vec::new();
        let samples = ctx.measure_rate(|n| {
            let before = Usage::now();
            if spawners == 1 {
                spawn_n(&mut plans[0], method, n)?;
            } else {
                // One thread per spawner per repetition: starting them costs
                // tens of µs against a repetition of at least 10 ms, and the
                // rusage bracket then covers exactly this repetition's spawns.
                let results: Vec<Result<(), BenchError>> = std::thread::scope(|s| {
                    let handles: Vec<_> = plans
                        .iter_mut()
                        .map(|p| s.spawn(move || spawn_n(p, method, n)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| {
                            h.join().unwrap_or_else(|_| {
                                Err(BenchError::failed("a spawner thread panicked"))
                            })
                        })
                        .collect()
                });
                for r in results {
                    r?;
                }
            }
            let spawns = (n * spawners as u64) as f64;
            log.push(rep_usage(before, Usage::now(), spawns));
            Ok(spawns)
        })?;
        // The timed repetitions are the last calls of the loop.
        let timed = &log[log.len().saturating_sub(samples.len())..];
        if timed.len() != samples.len() {
            return Err(BenchError::failed(
                "CPU-time log does not match the repetitions",
            ));
        }
        let per_spawn = |f: fn(&RepUsage) -> f64| -> Vec<f64> {
            timed.iter().map(|r| f(r) / r.spawns * 1e6).collect()
        };
        let spawn_time: Vec<f64> = samples.iter().map(|r| spawners as f64 * 1e6 / r).collect();
        let cpu = per_spawn(|r| r.parent_cpu + r.children_cpu);
        // With several spawners the wall time is per spawner and the CPU
        // time per spawn of all: both are one spawner's share of a CPU.
        let (wall_med, cpu_med) = (median(&spawn_time), median(&cpu));
        let judged = cost::judge(wall_med, cpu_med, cost::kernel_hz());
        if let Some(r) = judged.wall_per_cpu {
            ctx.note_detail("wall_per_cpu", format!("{r:.2}"));
        }
        let case = format!("{} {params}", method.id());
        for f in judged.findings(&case, wall_med, cpu_med) {
            ctx.finding(f);
        }
        let mut why: Vec<String> = judged.waiting.into_iter().collect();
        if let Some((hz, k)) = judged.tick {
            why.push(format!(
                "{k} scheduler tick(s) of a {hz} Hz kernel per spawn"
            ));
        }
        if !why.is_empty() {
            ctx.note_detail(sysgauge_core::DISTURBED, why.join("; "));
        }
        Ok(vec![
            metric("spawn_time", Unit::Microseconds, Better::Lower, spawn_time)?,
            metric("spawn_rate", Unit::OpsPerSec, Better::Higher, samples)?,
            metric(
                "parent_cpu",
                Unit::Microseconds,
                Better::Lower,
                per_spawn(|r| r.parent_cpu),
            )?,
            metric(
                "children_cpu",
                Unit::Microseconds,
                Better::Lower,
                per_spawn(|r| r.children_cpu),
            )?,
        ])
    }
}

sysgauge_family::register_family! {
    name: "spawn", options: SpawnOptions, in_default_run: true,
    cpu_bound: false, summary_first: false,
    budget_seconds: [0.3, 2.5, 40.0, 120.0], report: Some(report::spawn_report),
    summary: "process start-up cost by method (fork, vfork, clone, posix_spawn, std, popen, popen_noshell, system), parent-size sweep",
}

/// Every spawn benchmark, in display order.
pub fn benchmarks(options: &Arc<SpawnOptions>) -> Vec<Box<dyn Benchmark>> {
    one_per_kind(&Method::ALL, |m| SpawnBenchmark::new(m, options.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::CtxSettings;

    fn ctx(base: &std::path::Path) -> RunCtx {
        RunCtx::for_tests(CtxSettings::for_tests(Profile::Tiny, base.to_path_buf()))
    }

    fn plan(profile: Profile, threads: usize) -> Plan {
        Plan { profile, threads }
    }

    #[test]
    fn quick_is_posix_spawn_and_fork_exec_at_the_smallest_size() {
        let o = Arc::new(SpawnOptions::default());
        for m in Method::ALL {
            let cases = SpawnBenchmark::new(m, o.clone()).cases(&plan(Profile::Quick, 2));
            if matches!(m, Method::PosixSpawn | Method::ForkExec) {
                assert_eq!(cases.len(), 1, "{}", m.name());
                assert_eq!(cases[0].get_u64("parent_mib"), Some(0));
                assert_eq!(cases[0].get_u64("spawners"), Some(1));
            } else {
                assert!(cases.is_empty(), "{}", m.name());
            }
        }
    }

    #[test]
    fn matrix_has_sweep_targets_and_multi() {
        let o = Arc::new(SpawnOptions {
            matrix: true,
            ..Default::default()
        });
        let fe = SpawnBenchmark::new(Method::ForkExec, o.clone()).cases(&plan(Profile::Quick, 4));
        let sizes: Vec<u64> = fe.iter().filter_map(|c| c.get_u64("parent_mib")).collect();
        assert!(sizes.contains(&256) && sizes.contains(&1024));
        assert!(fe.iter().any(|c| c.get_str("target") == Some("true")));
        assert!(fe
            .iter()
            .any(|c| c.get_str("spawners") == Some(sysgauge_core::ALL_CPUS)));
        let fx = SpawnBenchmark::new(Method::ForkExit, o.clone()).cases(&plan(Profile::Quick, 4));
        assert!(fx.iter().all(|c| c.get("target").is_none()));
        assert_eq!(
            fx.len(),
            3,
            "fork-exit: one case per size, no duplicate per target"
        );
        let sys = SpawnBenchmark::new(Method::System, o).cases(&plan(Profile::Standard, 4));
        assert!(sys.iter().all(|c| c.get_u64("spawners") == Some(1)));
    }

    #[test]
    fn explicit_options_make_a_product() {
        let o = Arc::new(SpawnOptions {
            targets: Some(vec![Target::Static, Target::True]),
            parent_mib: Some(vec![0, 64]),
            spawners: Some(vec![Count::N(1), Count::AllCpus]),
            matrix: false,
        });
        let c = SpawnBenchmark::new(Method::PosixSpawn, o).cases(&plan(Profile::Tiny, 2));
        assert_eq!(c.len(), 8);
    }

    /// Every method, run as a benchmark case at the tiny profile, really
    /// starts the target: the case's own check counts the helper's side
    /// effect, and the metrics are consistent with each other.
    #[test]
    fn every_method_measures() {
        let base = tempfile::tempdir().unwrap();
        let mut c = ctx(base.path());
        let target = if target::helper_available() {
            "static"
        } else {
            "true"
        };
        for m in Method::ALL {
            if m.available().is_err() {
                continue;
            }
            let b = SpawnBenchmark::new(m, Arc::new(SpawnOptions::default()));
            c.begin_case(std::time::Duration::from_millis(30));
            let mut p = Params::new()
                .with("parent_mib", 0u64)
                .with("spawners", 1u64);
            if m.execs() {
                p.insert("target", target);
            }
            let metrics = b
                .run(&mut c, &p)
                .unwrap_or_else(|e| panic!("{}: {e}", m.name()));
            let names: Vec<&str> = metrics.iter().map(|x| x.name.as_str()).collect();
            assert_eq!(
                names,
                ["spawn_time", "spawn_rate", "parent_cpu", "children_cpu"]
            );
            let t = metrics[0].value();
            let r = metrics[1].value();
            assert!(t > 1.0 && t < 1e6, "{}: {t} µs per spawn", m.name());
            // Medians of reciprocal samples are reciprocal.
            assert!((t * r / 1e6 - 1.0).abs() < 1e-9, "{}", m.name());
            assert!(metrics[2].value() >= 0.0 && metrics[3].value() >= 0.0);
            c.take_case_output();
        }
        c.end_session();
    }

    #[test]
    fn multi_spawner_and_ballast_cases_run() {
        let base = tempfile::tempdir().unwrap();
        let mut c = ctx(base.path());
        let b = SpawnBenchmark::new(Method::ForkExec, Arc::new(SpawnOptions::default()));
        c.begin_case(std::time::Duration::from_millis(30));
        let p = Params::new()
            .with("parent_mib", 16u64)
            .with("spawners", 2u64)
            .with("target", "true");
        let m = b.run(&mut c, &p).unwrap();
        assert!(m[1].value() > 0.0);
        let sys = SpawnBenchmark::new(Method::System, Arc::new(SpawnOptions::default()));
        c.begin_case(std::time::Duration::from_millis(30));
        assert!(matches!(sys.run(&mut c, &p), Err(BenchError::Skip { .. })));
        c.end_session();
    }

    #[test]
    fn bad_params_fail() {
        let base = tempfile::tempdir().unwrap();
        let mut c = ctx(base.path());
        let b = SpawnBenchmark::new(Method::PosixSpawn, Arc::new(SpawnOptions::default()));
        assert!(b.run(&mut c, &Params::new()).is_err());
        assert!(b
            .run(&mut c, &Params::new().with("target", "nonsense"))
            .is_err());
    }
}
