//! Timing for the CPU kernels, in the spirit of the classic suite: grow the
//! work per timed pass until a pass is long enough for the clock, then time
//! passes until the 95 % confidence interval of the mean rate is within 5 %,
//! with a minimum number of passes and a maximum bounded by the case's time
//! budget. Whether the target was reached is part of the outcome, so a case
//! that ran out of time says so instead of pretending to be precise.
//!
//! The loop itself is the core `Sampler` with its `Confidence` rule rather
//! than `RunCtx::measure_rate`'s fixed count, on purpose: the kernels are
//! cheap to repeat, and a stopping rule on the confidence interval spends
//! the budget where the machine is noisy and saves it where it is quiet.
//! What stays here is the cpu-specific part: the plan derived from the
//! case's budget, and the thread team that runs one pass.
//!
//! Several threads run as a team: each thread builds its own kernel instance
//! (in its own memory, before any timing), waits at a barrier, runs the pass
//! and meets the others at a second barrier; the pass is timed on the
//! coordinating thread from the release of the first barrier to the last
//! arrival at the second, i.e. the wall time of the slowest thread.

use super::kernels::{Kernel, KernelId};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;
use sysgauge_core::{BenchError, Calibration, CancelToken, Clock, Rule, RunCtx, Sampler};
use sysgauge_stats::mean_ci95_relative;

/// The confidence target: half-width of the 95 % interval of the mean, as a
/// fraction of the mean.
pub const TARGET_CI: f64 = 0.05;
/// Passes never go below this many (three give the interval two degrees of
/// freedom; fewer cannot reach the target in practice).
pub const MIN_PASSES_FLOOR: u32 = 3;
/// Hard upper bound on timed passes, whatever the budget.
pub const MAX_PASSES: u32 = 100;

/// How one case is timed.
#[derive(Debug, Clone, PartialEq)]
pub struct PassPlan {
    pub min_passes: u32,
    /// Passes go on at least this long (calibration included) before the
    /// confidence target may stop them: a cheap way to a steadier median,
    /// since the budget is there anyway.
    pub min_time: Duration,
    pub max_passes: u32,
    /// Untimed passes before the timed ones (the last calibration pass is one).
    pub warmup_passes: u32,
    pub target_ci: f64,
    /// How long one timed pass should at least last.
    pub pass_target: Duration,
    /// Time for the whole case, calibration included.
    pub budget: Duration,
}

impl PassPlan {
    /// The plan for the current case of `ctx`: `--repetitions` is the minimum
    /// number of passes, `--warmup` the warm-up passes, and passes go on for
    /// at least half the budget. A pass lasts about a
    /// quarter of the budget's share per planned pass, so that the minimum
    /// passes take half the budget and the rest is there for more passes
    /// if the interval is still too wide; never shorter than the clock floor.
    pub fn for_case(ctx: &RunCtx) -> PassPlan {
        let min_passes = ctx.repetitions().max(MIN_PASSES_FLOOR);
        let warmup_passes = ctx.warmup().max(1);
        let budget = ctx.budget();
        let slots = 2 * (min_passes + warmup_passes + 2);
        let pass_target = (budget / slots).max(ctx.settings().min_repetition());
        let fit = (budget.as_secs_f64() / pass_target.as_secs_f64()).floor() as u32;
        PassPlan {
            min_passes,
            min_time: budget / 2,
            max_passes: fit.clamp(min_passes, MAX_PASSES.max(min_passes)),
            warmup_passes,
            target_ci: TARGET_CI,
            pass_target,
            budget,
        }
    }
}

/// Why the timed passes stopped (`MaxRuns` is stored as `max-passes`).
pub use sysgauge_core::Stop;

/// What the timed passes gave.
#[derive(Debug, Clone, PartialEq)]
pub struct PassOutcome {
    /// Iterations per second (all threads together), one per timed pass.
    pub rates: Vec<f64>,
    /// Iterations each thread ran per pass.
    pub iterations_per_pass: u64,
    /// Relative half-width of the 95 % confidence interval of the mean rate.
    pub ci95_relative: Option<f64>,
    pub stop: Stop,
}

impl PassOutcome {
    pub fn confident(&self) -> bool {
        self.stop == Stop::Confident
    }
}

/// Time passes of `pass(n)`, which runs n iterations (per thread) and returns
/// the iterations done in total. Calibrates n, warms up, then times passes
/// until the confidence target, the maximum number of passes or the budget
/// stops it; the minimum number of passes always runs. All of it is the core
/// sampler: its calibration (giving up after half the budget) and its
/// confidence rule, with times counted from the first calibration pass.
pub fn measure_passes<P>(
    clock: &dyn Clock,
    cancel: &CancelToken,
    plan: &PassPlan,
    mut pass: P,
) -> Result<PassOutcome, BenchError>
where
    P: FnMut(u64) -> Result<f64, BenchError>,
{
    let sampler = Sampler::new(clock, cancel);
    // If even one iteration is longer than the target, a pass is one
    // iteration; calibration may use at most half the budget.
    let cal = Calibration {
        target: plan.pass_target,
        give_up_after: plan.budget / 2,
    };
    let n = sampler.calibrate(&cal, &mut pass)?;
    let rule = Rule::Confidence {
        min_runs: u64::from(plan.min_passes),
        max_runs: u64::from(plan.max_passes),
        min_time: plan.min_time,
        max_time: plan.budget,
        target: plan.target_ci,
    };
    // The last calibration pass is the first warm-up.
    let warmup = u64::from(plan.warmup_passes.saturating_sub(1));
    let sampled = sampler.run(warmup, &rule, |phase| sampler.rate(phase, || pass(n)))?;
    Ok(PassOutcome {
        ci95_relative: mean_ci95_relative(&sampled.values),
        rates: sampled.values,
        iterations_per_pass: n,
        stop: sampled.stop,
    })
}

/// Run `timed` with a pass function over one instance of `kernel` on the
/// calling thread, then verify the instance.
pub fn single<R>(
    kernel: KernelId,
    timed: impl FnOnce(&mut dyn FnMut(u64) -> Result<f64, BenchError>) -> Result<R, BenchError>,
) -> Result<R, BenchError> {
    let mut instance = kernel.instance();
    let mut pass = |n: u64| -> Result<f64, BenchError> {
        instance.run(n);
        Ok(n as f64)
    };
    let r = timed(&mut pass)?;
    instance.verify().map_err(BenchError::failed)?;
    Ok(r)
}

/// Run `timed` with a pass function that drives `threads` threads, each
/// with its own instance of `kernel`; afterwards every instance is verified.
pub fn team<R>(
    kernel: KernelId,
    threads: usize,
    timed: impl FnOnce(&mut dyn FnMut(u64) -> Result<f64, BenchError>) -> Result<R, BenchError>,
) -> Result<R, BenchError> {
    let threads = threads.max(1);
    let start = Barrier::new(threads + 1);
    let end = Barrier::new(threads + 1);
    let iterations = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let problems: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let note = |msg: String| {
        if let Ok(mut p) = problems.lock() {
            p.push(msg);
        }
    };
    let outcome = std::thread::scope(|s| {
        for t in 0..threads {
            let (start, end, iterations, stop, note) = (&start, &end, &iterations, &stop, &note);
            s.spawn(move || {
                // Built on its own thread: the instance's memory is first
                // touched there, so it is local to that thread's CPU. Any
                // panic is caught, because this thread must keep meeting the
                // barriers or the coordinating thread would wait for ever.
                let mut instance: Option<Box<dyn Kernel>> = catch_unwind(|| kernel.instance()).ok();
                let mut ran = false;
                loop {
                    start.wait();
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let n = iterations.load(Ordering::SeqCst);
                    match instance.as_mut() {
                        None => note(format!("thread {t}: the kernel could not be set up")),
                        Some(k) => {
                            if catch_unwind(AssertUnwindSafe(|| k.run(n))).is_err() {
                                note(format!("thread {t}: the kernel panicked"));
                                instance = None;
                            } else {
                                ran = true;
                            }
                        }
                    }
                    end.wait();
                }
                if let (true, Some(k)) = (ran, instance.as_ref()) {
                    if let Err(e) = k.verify() {
                        note(format!("thread {t}: {e}"));
                    }
                }
            });
        }
        let mut pass = |n: u64| -> Result<f64, BenchError> {
            iterations.store(n, Ordering::SeqCst);
            start.wait();
            end.wait();
            match problems.lock().map(|p| p.first().cloned()) {
                Ok(Some(first)) => Err(BenchError::failed(first)),
                Ok(None) => Ok((n as f64) * threads as f64),
                Err(_) => Err(BenchError::failed("a kernel thread failed")),
            }
        };
        let r = timed(&mut pass);
        stop.store(true, Ordering::SeqCst);
        start.wait();
        r
    });
    let r = outcome?;
    let first_problem = problems.lock().ok().and_then(|p| p.first().cloned());
    match first_problem {
        Some(p) => Err(BenchError::failed(p)),
        None => Ok(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::FakeClock;

    fn plan(min: u32, max: u32, budget_ms: u64) -> PassPlan {
        PassPlan {
            min_passes: min,
            min_time: Duration::ZERO,
            max_passes: max,
            warmup_passes: 1,
            target_ci: TARGET_CI,
            pass_target: Duration::from_millis(10),
            budget: Duration::from_millis(budget_ms),
        }
    }

    #[test]
    fn steady_work_is_confident_after_min_passes() {
        // Every clock read advances 1 ms, so a pass of n iterations is
        // simulated by advancing the clock by n ms inside the pass.
        let clock = FakeClock::new(Duration::from_millis(1));
        let mut calls = Vec::new();
        let out = measure_passes(&clock, &CancelToken::new(), &plan(5, 50, 10_000), |n| {
            calls.push(n);
            clock.advance(Duration::from_millis(n));
            Ok(n as f64)
        })
        .unwrap();
        assert_eq!(out.stop, Stop::Confident);
        assert!(out.confident());
        assert_eq!(out.rates.len(), 5);
        // Calibration grew n until a pass lasted at least 10 ms.
        assert!(out.iterations_per_pass >= 9, "{}", out.iterations_per_pass);
        assert_eq!(calls.first(), Some(&1));
        assert!(out.ci95_relative.unwrap_or(1.0) < TARGET_CI);
    }

    #[test]
    fn noisy_work_runs_until_budget_and_says_so() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let mut i = 0u64;
        let out = measure_passes(&clock, &CancelToken::new(), &plan(5, 1000, 600), |n| {
            // Alternating fast and slow passes: a 2:1 spread never converges
            // to ±5 % within a few dozen passes.
            i += 1;
            let ms = if i.is_multiple_of(2) { 2 * n } else { n };
            clock.advance(Duration::from_millis(ms));
            Ok(n as f64)
        })
        .unwrap();
        assert_eq!(out.stop, Stop::Budget);
        assert!(!out.confident());
        assert!(out.rates.len() >= 5);
        assert!(out.ci95_relative.unwrap_or(0.0) > TARGET_CI);
    }

    #[test]
    fn max_passes_bound() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let mut i = 0u64;
        let out = measure_passes(&clock, &CancelToken::new(), &plan(3, 7, 1_000_000), |n| {
            i += 1;
            clock.advance(Duration::from_millis(if i.is_multiple_of(2) {
                3 * n
            } else {
                n
            }));
            Ok(n as f64)
        })
        .unwrap();
        assert_eq!(out.stop, Stop::MaxRuns);
        assert_eq!(out.rates.len(), 7);
    }

    #[test]
    fn confident_stops_only_after_min_time() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let mut p = plan(5, 1000, 10_000);
        p.min_time = Duration::from_millis(300);
        let out = measure_passes(&clock, &CancelToken::new(), &p, |n| {
            clock.advance(Duration::from_millis(n));
            Ok(n as f64)
        })
        .unwrap();
        assert_eq!(out.stop, Stop::Confident);
        // A pass lasts about 15 ms of fake time (its work and the clock
        // reads), so 300 ms hold far more than the 5 passes that would
        // already be confident.
        assert!(out.rates.len() >= 15, "{}", out.rates.len());
    }

    #[test]
    fn min_passes_run_even_past_the_budget() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let mut i = 0u64;
        let out = measure_passes(&clock, &CancelToken::new(), &plan(4, 100, 1), |n| {
            i += 1;
            clock.advance(Duration::from_millis(if i.is_multiple_of(2) {
                5
            } else {
                1
            }));
            Ok(n as f64)
        })
        .unwrap();
        assert_eq!(out.rates.len(), 4);
        assert_eq!(out.stop, Stop::Budget);
    }

    #[test]
    fn cancellation_and_errors_stop() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        cancel.cancel();
        let r = measure_passes(&clock, &cancel, &plan(3, 10, 100), |n| Ok(n as f64));
        assert!(matches!(r, Err(BenchError::Cancelled)));
        let r = measure_passes(&clock, &CancelToken::new(), &plan(3, 10, 100), |_| {
            Err(BenchError::failed("boom"))
        });
        assert!(matches!(r, Err(BenchError::Failed(m)) if m == "boom"));
    }

    #[test]
    fn plan_follows_ctx() {
        use sysgauge_core::{CtxSettings, Profile};
        let mut ctx = RunCtx::for_tests(CtxSettings {
            repetitions: 5,
            ..CtxSettings::for_tests(Profile::Quick, std::env::temp_dir())
        });
        ctx.begin_case(Duration::from_millis(800));
        let p = PassPlan::for_case(&ctx);
        assert_eq!(p.min_passes, 5);
        assert_eq!(p.min_time, Duration::from_millis(400));
        assert_eq!(p.pass_target, Duration::from_millis(50));
        assert_eq!(p.max_passes, 16);
        // A tiny budget: the clock floor (10 ms for quick) wins.
        ctx.begin_case(Duration::from_millis(30));
        let p = PassPlan::for_case(&ctx);
        assert_eq!(p.pass_target, Duration::from_millis(10));
        assert_eq!(p.max_passes, 5);
    }

    #[test]
    fn team_runs_every_thread_and_verifies() {
        let seen = std::cell::Cell::new(0u32);
        let total = team(KernelId::Idea, 3, |pass| {
            let mut sum = 0.0;
            for n in [1u64, 2] {
                sum += pass(n)?;
                seen.set(seen.get() + 1);
            }
            Ok(sum)
        })
        .unwrap();
        assert_eq!(total, 9.0);
        assert_eq!(seen.get(), 2);
        let r = single(KernelId::Idea, |pass| pass(2)).unwrap();
        assert_eq!(r, 2.0);
    }

    #[test]
    fn team_reports_errors_without_hanging() {
        let r: Result<(), _> = team(KernelId::Idea, 2, |_| Err(BenchError::failed("stop")));
        assert!(matches!(r, Err(BenchError::Failed(m)) if m == "stop"));
        // A kernel that never ran is not verified (and is no failure).
        let r = team(KernelId::Idea, 2, |_| Ok(7)).unwrap();
        assert_eq!(r, 7);
    }
}
