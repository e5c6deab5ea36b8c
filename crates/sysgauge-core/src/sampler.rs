//! The one measuring loop: how many times a case's work runs, and when it
//! stops. Every family goes through it (`RunCtx::measure_rate`, `repeat`
//! and `measure_rate_parallel` for most; cpu, disk, startup and ssh directly),
//! so warm-up, cancellation and the stopping rules behave the same everywhere.
//!
//! What the sampler does not know is what one run is: the caller's closure
//! does the work (and any family-specific set-up, such as dropping the page
//! cache before a disk pass or checking a child's exit status) and returns
//! the run's headline value. The closure may time itself (a disk pass keeps
//! its set-up off the clock, a ssh transfer is timed from its first byte),
//! which is why the value comes from the caller and not from the sampler's
//! own clock reads; the sampler reads the clock only to apply time rules.
//!
//! Three stopping rules, each bounded in count and, where the count is
//! open-ended, in time:
//! - `Fixed`: exactly `runs` timed runs (the default `--repetitions`);
//! - `Confidence`: after `min_runs`, stop once the 95 % confidence interval
//!   of the mean is narrow enough, else at `max_runs`, else when another run
//!   would not fit `max_time` (the cpu kernels: cheap to repeat, so the
//!   budget goes where the machine is noisy);
//! - `MinRunsAndTime`: at least `min_runs` runs and `min_time` of runs, at
//!   most `max_runs` runs and `max_time` (hyperfine's rule; startup).
//!
//! Cancellation is checked before every run, warm-ups included, so Ctrl-C
//! ends a case within one run.

use crate::bench::BenchError;
use crate::cancel::CancelToken;
use crate::clock::Clock;
use std::time::Duration;
use sysgauge_stats::mean_ci95_relative;

/// Whether a run is an untimed warm-up or a timed one (a closure may skip
/// its checks, or its timing, in a warm-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Warmup,
    Timed,
}

/// When the timed runs stop.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// Exactly this many timed runs, however long they take: a fixed count
    /// is its own bound, and the runner flags a case that overran.
    Fixed { runs: u64 },
    /// At least `min_runs`; then stop as soon as `min_time` has passed and
    /// the half-width of the 95 % interval of the mean is at most `target`
    /// (a fraction of the mean); else at `max_runs`; else when the last
    /// run's duration would take the total past `max_time`. Times count from
    /// when the sampler was made, so a calibration done through it counts.
    Confidence {
        min_runs: u64,
        max_runs: u64,
        min_time: Duration,
        max_time: Duration,
        target: f64,
    },
    /// Stop at `max_runs`, or once both `min_runs` runs and `min_time` of
    /// timed runs are done, or once the timed runs have taken `max_time`
    /// (after at least one run). Times count from the first timed run, as in
    /// hyperfine, so warm-ups do not eat into the minimum.
    MinRunsAndTime {
        min_runs: u64,
        min_time: Duration,
        max_runs: u64,
        max_time: Duration,
    },
}

/// Why the timed runs stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A `Fixed` rule's count was done.
    Count,
    /// The confidence interval reached the target.
    Confident,
    /// Another run would not have fitted in the time allowed.
    Budget,
    /// The maximum number of runs was reached.
    MaxRuns,
    /// Both the minimum runs and the minimum time were reached.
    Enough,
}

impl Stop {
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Count => "count",
            Stop::Confident => "confident",
            Stop::Budget => "budget",
            // The cpu family stores this name in its records.
            Stop::MaxRuns => "max-passes",
            Stop::Enough => "enough",
        }
    }
}

/// The values of the timed runs and why they stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub values: Vec<f64>,
    pub stop: Stop,
}

/// How to grow an iteration count until one run is long enough.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// A run of `n` iterations must last at least this long.
    pub target: Duration,
    /// Stop growing once calibration has taken this long and use the last
    /// count (a case whose iterations slow down must not run away).
    pub give_up_after: Duration,
}

/// Never calibrate past this many iterations: far beyond anything a run can
/// do, but leaves room to multiply without overflow.
const MAX_ITERATIONS: f64 = (u64::MAX / 4) as f64;

/// The measuring loop for one case.
pub struct Sampler<'a> {
    clock: &'a dyn Clock,
    cancel: &'a CancelToken,
    started: Duration,
}

impl<'a> Sampler<'a> {
    /// A sampler whose time rules count from now.
    pub fn new(clock: &'a dyn Clock, cancel: &'a CancelToken) -> Sampler<'a> {
        Sampler {
            started: clock.now(),
            clock,
            cancel,
        }
    }

    /// Time since the sampler was made.
    pub fn elapsed(&self) -> Duration {
        self.clock.now().saturating_sub(self.started)
    }

    /// Grow `n` (from 1) until `op(n)` lasts at least the target; returns
    /// that `n`. Each try is at most 100 times the last, and overshoots the
    /// estimate by 20 % so that the next try usually is the last.
    pub fn calibrate<F>(&self, cal: &Calibration, op: &mut F) -> Result<u64, BenchError>
    where
        F: FnMut(u64) -> Result<f64, BenchError>,
    {
        let target = cal.target.as_secs_f64();
        let start = self.clock.now();
        let mut n: u64 = 1;
        loop {
            self.cancel.check()?;
            let t0 = self.clock.now();
            op(n)?;
            let dt = self.clock.now().saturating_sub(t0).as_secs_f64();
            if dt >= target || self.clock.now().saturating_sub(start) > cal.give_up_after {
                return Ok(n);
            }
            let factor = if dt <= 0.0 {
                100.0
            } else {
                (target / dt * 1.2).clamp(1.5, 100.0)
            };
            n = ((n as f64) * factor).ceil().min(MAX_ITERATIONS) as u64;
        }
    }

    /// Time one call of `work` (which returns the work done) and give the
    /// rate, work per second. In a warm-up the call is not timed (and 0 is
    /// returned). A timed call too short for the clock is an error.
    pub fn rate<F>(&self, phase: Phase, work: F) -> Result<f64, BenchError>
    where
        F: FnOnce() -> Result<f64, BenchError>,
    {
        if phase == Phase::Warmup {
            work()?;
            return Ok(0.0);
        }
        let t0 = self.clock.now();
        let done = work()?;
        let dt = self.clock.now().saturating_sub(t0).as_secs_f64();
        if dt <= 0.0 {
            return Err(BenchError::failed(
                "a repetition took no measurable time; the clock is too coarse",
            ));
        }
        Ok(done / dt)
    }

    /// Run `warmup` untimed runs, then timed runs until `rule` stops them.
    /// `op` does one run and returns its value (ignored in a warm-up).
    pub fn run<F>(&self, warmup: u64, rule: &Rule, mut op: F) -> Result<Sampled, BenchError>
    where
        F: FnMut(Phase) -> Result<f64, BenchError>,
    {
        for _ in 0..warmup {
            self.cancel.check()?;
            op(Phase::Warmup)?;
        }
        let mut values = Vec::new();
        if let Rule::Fixed { runs } = *rule {
            values.reserve(usize::try_from(runs).unwrap_or(0));
            for _ in 0..runs {
                self.cancel.check()?;
                values.push(op(Phase::Timed)?);
            }
            return Ok(Sampled {
                values,
                stop: Stop::Count,
            });
        }
        let timed_from = self.clock.now();
        let stop = loop {
            self.cancel.check()?;
            let t0 = self.clock.now();
            values.push(op(Phase::Timed)?);
            let t1 = self.clock.now();
            let runs = values.len() as u64;
            match *rule {
                Rule::Fixed { .. } => unreachable!("handled above"),
                Rule::Confidence {
                    min_runs,
                    max_runs,
                    min_time,
                    max_time,
                    target,
                } => {
                    if runs < min_runs {
                        continue;
                    }
                    let elapsed = t1.saturating_sub(self.started);
                    if elapsed >= min_time
                        && mean_ci95_relative(&values).is_some_and(|ci| ci <= target)
                    {
                        break Stop::Confident;
                    }
                    if runs >= max_runs {
                        break Stop::MaxRuns;
                    }
                    // The next run will likely last as long as this one.
                    if elapsed + t1.saturating_sub(t0) > max_time {
                        break Stop::Budget;
                    }
                }
                Rule::MinRunsAndTime {
                    min_runs,
                    min_time,
                    max_runs,
                    max_time,
                } => {
                    let spent = t1.saturating_sub(timed_from);
                    if runs >= max_runs.max(1) {
                        break Stop::MaxRuns;
                    }
                    if runs >= min_runs && spent >= min_time {
                        break Stop::Enough;
                    }
                    if spent >= max_time {
                        break Stop::Budget;
                    }
                }
            }
        };
        Ok(Sampled { values, stop })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use proptest::prelude::*;

    fn fixed(runs: u64) -> Rule {
        Rule::Fixed { runs }
    }

    #[test]
    fn fixed_runs_warmups_then_the_count() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        let s = Sampler::new(&clock, &cancel);
        let mut phases = Vec::new();
        let mut i = 0.0;
        let out = s
            .run(2, &fixed(3), |p| {
                phases.push(p);
                i += 1.0;
                Ok(i)
            })
            .unwrap();
        assert_eq!(
            phases,
            [
                Phase::Warmup,
                Phase::Warmup,
                Phase::Timed,
                Phase::Timed,
                Phase::Timed
            ]
        );
        assert_eq!(out.values, [3.0, 4.0, 5.0]);
        assert_eq!(out.stop, Stop::Count);
    }

    #[test]
    fn rate_is_work_per_second_and_refuses_zero_time() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        let s = Sampler::new(&clock, &cancel);
        assert_eq!(s.rate(Phase::Timed, || Ok(5.0)).unwrap(), 5000.0);
        assert_eq!(s.rate(Phase::Warmup, || Ok(5.0)).unwrap(), 0.0);
        let still = FakeClock::new(Duration::ZERO);
        let s = Sampler::new(&still, &cancel);
        assert!(s.rate(Phase::Timed, || Ok(5.0)).is_err());
    }

    #[test]
    fn calibration_grows_until_the_target_or_gives_up() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        let s = Sampler::new(&clock, &cancel);
        let cal = Calibration {
            target: Duration::from_millis(50),
            give_up_after: Duration::from_secs(100),
        };
        let mut tries = Vec::new();
        let n = s
            .calibrate(&cal, &mut |n| {
                tries.push(n);
                clock.advance(Duration::from_millis(n));
                Ok(n as f64)
            })
            .unwrap();
        assert_eq!(tries.first(), Some(&1));
        assert!(n >= 49, "{n}");
        assert!(tries.windows(2).all(|w| w[1] > w[0]));
        let cal = Calibration {
            target: Duration::from_secs(3600),
            give_up_after: Duration::from_millis(20),
        };
        let mut calls = 0;
        s.calibrate(&cal, &mut |_| {
            calls += 1;
            clock.advance(Duration::from_millis(10));
            Ok(1.0)
        })
        .unwrap();
        assert!(calls <= 3, "{calls}");
    }

    #[test]
    fn confidence_stops_when_steady() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        let s = Sampler::new(&clock, &cancel);
        let rule = Rule::Confidence {
            min_runs: 5,
            max_runs: 50,
            min_time: Duration::ZERO,
            max_time: Duration::from_secs(100),
            target: 0.05,
        };
        let out = s.run(0, &rule, |_| Ok(10.0)).unwrap();
        assert_eq!(out.stop, Stop::Confident);
        assert_eq!(out.values.len(), 5);
    }

    #[test]
    fn min_runs_and_time_counts_from_the_first_timed_run() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        let s = Sampler::new(&clock, &cancel);
        let rule = Rule::MinRunsAndTime {
            min_runs: 2,
            min_time: Duration::from_millis(100),
            max_runs: 1000,
            max_time: Duration::MAX,
        };
        let out = s
            .run(3, &rule, |p| {
                // Long warm-ups must not count towards the minimum time.
                let ms = if p == Phase::Warmup { 1000 } else { 10 };
                clock.advance(Duration::from_millis(ms));
                Ok(1.0)
            })
            .unwrap();
        assert_eq!(out.stop, Stop::Enough);
        assert!(out.values.len() >= 8, "{}", out.values.len());
    }

    #[test]
    fn cancellation_and_errors_stop_every_rule() {
        let clock = FakeClock::new(Duration::from_millis(1));
        let cancel = CancelToken::new();
        cancel.cancel();
        let s = Sampler::new(&clock, &cancel);
        let rules = [
            fixed(3),
            Rule::Confidence {
                min_runs: 3,
                max_runs: 9,
                min_time: Duration::ZERO,
                max_time: Duration::from_secs(1),
                target: 0.05,
            },
            Rule::MinRunsAndTime {
                min_runs: 3,
                min_time: Duration::ZERO,
                max_runs: 9,
                max_time: Duration::from_secs(1),
            },
        ];
        for rule in &rules {
            let mut calls = 0;
            let r = s.run(1, rule, |_| {
                calls += 1;
                Ok(1.0)
            });
            assert!(matches!(r, Err(BenchError::Cancelled)));
            assert_eq!(calls, 0);
        }
        let go = CancelToken::new();
        let s = Sampler::new(&clock, &go);
        for rule in &rules {
            let r = s.run(0, rule, |_| Err(BenchError::failed("boom")));
            assert!(matches!(r, Err(BenchError::Failed(m)) if m == "boom"));
        }
    }

    fn any_rule() -> impl Strategy<Value = Rule> {
        prop_oneof![
            (0u64..20).prop_map(|runs| Rule::Fixed { runs }),
            (1u64..10, 0u64..40, 0u64..200, 0u64..500, 0.0f64..0.3).prop_map(
                |(min_runs, extra, min_ms, max_ms, target)| Rule::Confidence {
                    min_runs,
                    max_runs: min_runs + extra,
                    min_time: Duration::from_millis(min_ms),
                    max_time: Duration::from_millis(max_ms),
                    target,
                }
            ),
            (0u64..10, 1u64..60, 0u64..200, 0u64..500).prop_map(
                |(min_runs, max_runs, min_ms, max_ms)| Rule::MinRunsAndTime {
                    min_runs,
                    min_time: Duration::from_millis(min_ms),
                    max_runs,
                    max_time: Duration::from_millis(max_ms),
                }
            ),
        ]
    }

    proptest! {
        /// Whatever the rule and however noisy or slow the runs: the count
        /// never exceeds the maximum, the minimum always runs, and an
        /// open-ended rule stops within one run of its time bound.
        #[test]
        fn bounded_in_count_and_time(
            rule in any_rule(),
            warmup in 0u64..4,
            durations in proptest::collection::vec(1u64..30, 1..16),
            values in proptest::collection::vec(1.0f64..100.0, 1..16),
        ) {
            let clock = FakeClock::new(Duration::ZERO);
            let cancel = CancelToken::new();
            let s = Sampler::new(&clock, &cancel);
            let mut i = 0usize;
            let mut warm = 0u64;
            let mut timed = Duration::ZERO;
            let out = s.run(warmup, &rule, |p| {
                let d = Duration::from_millis(durations[i % durations.len()]);
                if p == Phase::Warmup {
                    warm += 1;
                } else {
                    timed += d;
                }
                clock.advance(d);
                let v = values[i % values.len()];
                i += 1;
                Ok(v)
            }).unwrap();
            prop_assert_eq!(warm, warmup);
            let n = out.values.len() as u64;
            let longest = Duration::from_millis(durations.iter().copied().max().unwrap_or(1));
            match rule {
                Rule::Fixed { runs } => prop_assert_eq!(n, runs),
                Rule::Confidence { min_runs, max_runs, max_time, .. } => {
                    prop_assert!(n >= min_runs && n <= max_runs.max(min_runs));
                    if n > min_runs {
                        // It went past the minimum only while time was left.
                        prop_assert!(s.elapsed() <= max_time + longest);
                    }
                }
                Rule::MinRunsAndTime { max_runs, max_time, .. } => {
                    prop_assert!(n >= 1 && n <= max_runs.max(1));
                    prop_assert!(timed <= max_time + longest);
                }
            }
        }

        /// Cancelling during a run ends the sampling before the next run.
        #[test]
        fn cancel_ends_within_one_run(rule in any_rule(), at in 0u64..30) {
            let clock = FakeClock::new(Duration::from_millis(1));
            let cancel = CancelToken::new();
            let s = Sampler::new(&clock, &cancel);
            let mut calls = 0u64;
            let r = s.run(1, &rule, |_| {
                calls += 1;
                if calls > at {
                    cancel.cancel();
                }
                Ok(1.0)
            });
            match r {
                Err(BenchError::Cancelled) => prop_assert_eq!(calls, at + 1),
                Ok(_) => prop_assert!(calls <= at + 1),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
    }
}
