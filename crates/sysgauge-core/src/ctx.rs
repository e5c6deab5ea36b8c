//! `RunCtx`: everything a benchmark case may use while it runs: the clock,
//! the repetition plan and time budget, cancellation, a scratch directory,
//! shared fixtures, and the place to report findings and discovered
//! parameters. Its measuring methods (`measure_rate`, `measure_rate_parallel`,
//! `repeat`) are the usual ways into the one `Sampler`, with the fixed
//! `--repetitions` rule; a family with another rule (cpu, startup) takes
//! `sampler()` directly.
//!
//! Measuring: a case's work is calibrated until one repetition lasts at least
//! `budget / (repetitions + warm-up + 2)` (and never less than a floor that
//! dwarfs the timer's resolution), then warmed up and repeated. The median of
//! the repetitions is the value; the runner adds a `noisy` finding when their
//! spread is too wide. No extra repetitions are ever added past the budget.

use crate::bench::{BenchError, IoContext};
use crate::cancel::CancelToken;
use crate::clock::Clock;
use crate::record::{Finding, ParamValue, Params, Profile};
use crate::sampler::{Calibration, Phase, Rule, Sampler};
use crate::scratch::ScratchDir;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

/// Settings shared by every case of a run.
#[derive(Debug, Clone)]
pub struct CtxSettings {
    pub profile: Profile,
    /// Timed repetitions per case (odd, so the median is a sample).
    pub repetitions: u32,
    /// Untimed repetitions before the timed ones.
    pub warmup: u32,
    /// Where scratch directories are created.
    pub scratch_base: PathBuf,
    /// Logical CPUs available.
    pub threads: usize,
}

impl CtxSettings {
    /// Settings for tests: `profile`, scratch under `scratch_base`, three
    /// timed repetitions after one warm-up, two threads. Tests change a
    /// field with struct-update syntax (`CtxSettings { threads: 1,
    /// ..CtxSettings::for_tests(..) }`). Not used by the tool itself.
    #[doc(hidden)]
    pub fn for_tests(profile: Profile, scratch_base: impl Into<PathBuf>) -> CtxSettings {
        CtxSettings {
            profile,
            repetitions: 3,
            warmup: 1,
            scratch_base: scratch_base.into(),
            threads: 2,
        }
    }

    /// The shortest a timed repetition may be: long enough that the
    /// monotonic clock's resolution (tens of ns) is below 0.01 %.
    pub fn min_repetition(&self) -> Duration {
        match self.profile {
            Profile::Tiny => Duration::from_micros(500),
            _ => Duration::from_millis(10),
        }
    }
}

/// What a case reported besides its metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaseOutput {
    pub findings: Vec<Finding>,
    pub params: Params,
    pub details: Params,
}

pub struct RunCtx {
    settings: CtxSettings,
    clock: Arc<dyn Clock>,
    cancel: CancelToken,
    budget: Duration,
    case_started: Duration,
    scratch: Option<ScratchDir>,
    extra_scratch: Vec<ScratchDir>,
    fixtures: Vec<(String, Box<dyn Any + Send>)>,
    findings: Vec<Finding>,
    extra_params: Params,
    details: Params,
}

impl RunCtx {
    /// A context for unit tests: these settings, the monotonic clock, and a
    /// cancel token nobody fires. Not used by the tool itself.
    #[doc(hidden)]
    pub fn for_tests(settings: CtxSettings) -> RunCtx {
        RunCtx::new(
            settings,
            Arc::new(crate::MonotonicClock::new()),
            CancelToken::new(),
        )
    }

    pub fn new(settings: CtxSettings, clock: Arc<dyn Clock>, cancel: CancelToken) -> RunCtx {
        let now = clock.now();
        RunCtx {
            settings,
            clock,
            cancel,
            budget: Duration::from_secs(1),
            case_started: now,
            scratch: None,
            extra_scratch: Vec::new(),
            fixtures: Vec::new(),
            findings: Vec::new(),
            extra_params: Params::new(),
            details: Params::new(),
        }
    }

    /// Start a new case with its time budget (called by the runner).
    pub fn begin_case(&mut self, budget: Duration) {
        self.budget = budget;
        self.case_started = self.clock.now();
        self.findings.clear();
        self.extra_params = Params::new();
        self.details = Params::new();
    }

    /// Findings, noted parameters and details of the case just finished.
    pub fn take_case_output(&mut self) -> CaseOutput {
        CaseOutput {
            findings: std::mem::take(&mut self.findings),
            params: std::mem::take(&mut self.extra_params),
            details: std::mem::take(&mut self.details),
        }
    }

    pub fn profile(&self) -> Profile {
        self.settings.profile
    }
    pub fn repetitions(&self) -> u32 {
        self.settings.repetitions
    }
    pub fn warmup(&self) -> u32 {
        self.settings.warmup
    }
    pub fn threads(&self) -> usize {
        self.settings.threads
    }
    pub fn settings(&self) -> &CtxSettings {
        &self.settings
    }
    /// The time this case may take.
    pub fn budget(&self) -> Duration {
        self.budget
    }
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
    pub fn now(&self) -> Duration {
        self.clock.now()
    }
    /// Time spent in this case so far.
    pub fn elapsed(&self) -> Duration {
        self.clock.now().saturating_sub(self.case_started)
    }
    /// Time left in this case's budget.
    pub fn remaining(&self) -> Duration {
        self.budget.saturating_sub(self.elapsed())
    }
    pub fn cancel_token(&self) -> &CancelToken {
        &self.cancel
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
    /// `Err(Cancelled)` once the user pressed Ctrl-C.
    pub fn check_cancel(&self) -> Result<(), BenchError> {
        self.cancel.check()
    }

    /// Report a methodology finding for this case.
    pub fn finding(&mut self, f: Finding) {
        if !self.findings.contains(&f) {
            self.findings.push(f);
        }
    }

    /// Add a parameter that identifies the case, resolved while running
    /// (e.g. the size actually used when the default depends on the machine).
    pub fn note_param(&mut self, key: &str, value: impl Into<ParamValue>) {
        self.extra_params.insert(key, value);
    }

    /// Record a detail that does not identify the case (iterations per
    /// repetition, a fallback taken, the device under test).
    pub fn note_detail(&mut self, key: &str, value: impl Into<ParamValue>) {
        self.details.insert(key, value);
    }

    /// Mark this case's result as not a measure of the machine, with the
    /// reason (also given as a finding by the caller): comparisons mark it
    /// and indexes leave it out.
    pub fn mark_untrusted(&mut self, reason: impl Into<String>) {
        self.note_detail(crate::record::UNTRUSTED, reason.into());
    }

    /// Whether this case has noted the detail `key` already.
    pub fn has_detail(&self, key: &str) -> bool {
        self.details.get(key).is_some()
    }

    /// The scratch directory of this family's session, created on first use
    /// and removed when the session ends (or on Ctrl-C).
    pub fn scratch_dir(&mut self) -> Result<PathBuf, BenchError> {
        if self.scratch.is_none() {
            let base = self.settings.scratch_base.clone();
            let dir = ScratchDir::create_in(&base).io_context(|| {
                format!("cannot create a scratch directory in {}", base.display())
            })?;
            self.scratch = Some(dir);
        }
        match &self.scratch {
            Some(d) => Ok(d.path().to_path_buf()),
            None => Err(BenchError::failed("scratch directory vanished")),
        }
    }

    /// A further scratch directory inside a user-chosen `parent` (e.g. the
    /// filesystem a disk test targets); removed like the main one.
    pub fn scratch_in(&mut self, parent: &Path) -> Result<PathBuf, BenchError> {
        let dir = ScratchDir::create_in(parent)
            .io_context(|| format!("cannot create a scratch directory in {}", parent.display()))?;
        let p = dir.path().to_path_buf();
        self.extra_scratch.push(dir);
        Ok(p)
    }

    /// A value shared by the cases of one family session (a started server,
    /// a laid-down test file), created by `init` on first use and dropped, in
    /// reverse order of creation, when the session ends.
    pub fn fixture<T, F>(&mut self, key: &str, init: F) -> Result<&mut T, BenchError>
    where
        T: Any + Send,
        F: FnOnce(&mut RunCtx) -> Result<T, BenchError>,
    {
        if !self.fixtures.iter().any(|(k, _)| k == key) {
            let v = init(self)?;
            self.fixtures.push((key.to_string(), Box::new(v)));
        }
        self.fixtures
            .iter_mut()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.downcast_mut::<T>())
            .ok_or_else(|| BenchError::failed(format!("fixture '{key}' has another type")))
    }

    /// Drop a fixture now (e.g. a file that must be re-created).
    pub fn drop_fixture(&mut self, key: &str) {
        self.fixtures.retain(|(k, _)| k != key);
    }

    /// End the family session: drop fixtures (newest first) and scratch.
    pub fn end_session(&mut self) {
        while let Some(f) = self.fixtures.pop() {
            drop(f);
        }
        self.extra_scratch.clear();
        self.scratch = None;
    }

    /// Run `f` with a share (0..=1) of this case's time budget, for a case
    /// that measures several metrics one after the other (sign, then
    /// verify) and must still fit its slice.
    pub fn with_budget_share<T>(&mut self, share: f64, f: impl FnOnce(&mut RunCtx) -> T) -> T {
        let full = self.budget;
        self.budget = full.mul_f64(share.clamp(0.0, 1.0));
        let r = f(self);
        self.budget = full;
        r
    }

    /// Target length of one timed repetition for this case.
    pub fn repetition_target(&self) -> Duration {
        let slots = self.settings.repetitions + self.settings.warmup + 2;
        (self.budget / slots).max(self.settings.min_repetition())
    }

    /// A sampler for this case: its clock and cancel token, its time rules
    /// counting from now.
    pub fn sampler(&self) -> Sampler<'_> {
        Sampler::new(self.clock.as_ref(), &self.cancel)
    }

    /// Calibrate how many iterations make one repetition last at least the
    /// repetition target; calibration stops growing once it has spent the
    /// case's whole budget. `op(n)` runs n iterations and returns the work.
    fn calibrate<F>(&self, op: &mut F) -> Result<u64, BenchError>
    where
        F: FnMut(u64) -> Result<f64, BenchError>,
    {
        let cal = Calibration {
            target: self.repetition_target(),
            give_up_after: self.budget,
        };
        self.sampler().calibrate(&cal, op)
    }

    /// The fixed-count rule of `--repetitions`.
    fn fixed_rule(&self) -> Rule {
        Rule::Fixed {
            runs: u64::from(self.settings.repetitions),
        }
    }

    /// Measure a rate: calibrate, warm up, then time `repetitions` calls of
    /// `op(n)`. Returns one sample per repetition: work / seconds.
    pub fn measure_rate<F>(&mut self, mut op: F) -> Result<Vec<f64>, BenchError>
    where
        F: FnMut(u64) -> Result<f64, BenchError>,
    {
        let n = self.calibrate(&mut op)?;
        let sampler = self.sampler();
        // Calibration's last pass already warmed the caches once.
        let warmup = u64::from(self.settings.warmup.saturating_sub(1));
        let samples = sampler
            .run(warmup, &self.fixed_rule(), |phase| {
                sampler.rate(phase, || op(n))
            })?
            .values;
        self.note_detail_if_absent("iterations_per_rep", n);
        Ok(samples)
    }

    /// Measure an aggregate rate over `threads` threads running `op(thread, n)`
    /// at the same time (each thread its own instance of the work). Returns
    /// one sample per repetition: total work / wall seconds. A repetition is
    /// timed from the release of the threads to the last one's finish.
    pub fn measure_rate_parallel<F>(
        &mut self,
        threads: usize,
        op: F,
    ) -> Result<Vec<f64>, BenchError>
    where
        F: Fn(usize, u64) -> Result<f64, BenchError> + Sync,
    {
        let threads = threads.max(1);
        let n = self.calibrate(&mut |n| op(0, n))?;
        // Calibration ran on one thread, so the team warms up at least once.
        let warmup = u64::from(self.settings.warmup.max(1));
        let rule = self.fixed_rule();
        let start = Barrier::new(threads + 1);
        let end = Barrier::new(threads + 1);
        let stop = AtomicBool::new(false);
        let work: Mutex<Vec<Result<f64, BenchError>>> = Mutex::new(Vec::new());
        let clock = self.clock.as_ref();
        let sampler = self.sampler();
        let outcome = std::thread::scope(|s| {
            for t in 0..threads {
                let (start, end, stop, work, op) = (&start, &end, &stop, &work, &op);
                s.spawn(move || loop {
                    start.wait();
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let r = op(t, n);
                    if let Ok(mut w) = work.lock() {
                        w.push(r);
                    }
                    end.wait();
                });
            }
            let repetition = |phase: Phase| -> Result<f64, BenchError> {
                start.wait();
                let t0 = clock.now();
                end.wait();
                let dt = clock.now().saturating_sub(t0).as_secs_f64();
                let results = work
                    .lock()
                    .map(|mut w| std::mem::take(&mut *w))
                    .unwrap_or_default();
                let mut sum = 0.0;
                for r in results {
                    sum += r?;
                }
                if phase == Phase::Warmup {
                    return Ok(0.0);
                }
                if dt <= 0.0 {
                    return Err(BenchError::failed(
                        "a repetition took no measurable time; the clock is too coarse",
                    ));
                }
                Ok(sum / dt)
            };
            let r = sampler.run(warmup, &rule, repetition);
            stop.store(true, Ordering::SeqCst);
            start.wait();
            r
        });
        let samples = outcome?.values;
        self.note_detail_if_absent("iterations_per_rep", n);
        Ok(samples)
    }

    /// Run `op` for warm-up and then `repetitions` times, collecting the
    /// sample each call returns. For work that cannot be scaled by an
    /// iteration count (an external program, a file of fixed size).
    pub fn repeat<F>(&mut self, mut op: F) -> Result<Vec<f64>, BenchError>
    where
        F: FnMut(&mut RunCtx) -> Result<f64, BenchError>,
    {
        let (clock, cancel) = (self.clock.clone(), self.cancel.clone());
        let sampler = Sampler::new(clock.as_ref(), &cancel);
        let warmup = u64::from(self.settings.warmup);
        let rule = self.fixed_rule();
        Ok(sampler.run(warmup, &rule, |_| op(self))?.values)
    }

    fn note_detail_if_absent(&mut self, key: &str, value: u64) {
        if self.details.get(key).is_none() {
            self.note_detail(key, value);
        }
    }
}

/// However a session ends (finished, interrupted, a sink error, a panic
/// unwinding), fixtures are dropped newest first and only then the scratch
/// directories, so a server or file living in scratch is shut down before its
/// directory goes.
impl Drop for RunCtx {
    fn drop(&mut self) {
        self.end_session();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{FakeClock, MonotonicClock};

    fn settings(reps: u32) -> CtxSettings {
        CtxSettings {
            repetitions: reps,
            ..CtxSettings::for_tests(Profile::Tiny, std::env::temp_dir())
        }
    }

    #[test]
    fn measure_rate_with_fake_clock_is_exact() {
        // Each clock read advances 1 ms; one repetition spans exactly two reads.
        let clock = Arc::new(FakeClock::new(Duration::from_millis(1)));
        let mut ctx = RunCtx::new(settings(5), clock, CancelToken::new());
        ctx.begin_case(Duration::from_millis(1));
        let mut calls = 0;
        let samples = ctx
            .measure_rate(|n| {
                calls += 1;
                Ok(n as f64 * 10.0)
            })
            .unwrap();
        assert_eq!(samples.len(), 5);
        // n stays 1 (1 ms >= 0.5 ms floor), 10 units of work in 1 ms.
        for s in samples {
            assert!((s - 10_000.0).abs() < 1e-6, "{s}");
        }
        assert_eq!(calls, 6);
    }

    #[test]
    fn calibration_grows_iterations() {
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
        let mut ctx = RunCtx::new(settings(3), clock, CancelToken::new());
        ctx.begin_case(Duration::from_millis(20));
        let samples = ctx
            .measure_rate(|n| {
                let mut x = 0u64;
                for i in 0..n * 1000 {
                    x = std::hint::black_box(x.wrapping_add(i));
                }
                std::hint::black_box(x);
                Ok(n as f64)
            })
            .unwrap();
        assert_eq!(samples.len(), 3);
        let out = ctx.take_case_output();
        if sysgauge_testkit::emulator_cannot(
            "the calibration's clock readings follow the emulator's translation, not a CPU",
        ) {
            return;
        }
        assert!(out.details.get_u64("iterations_per_rep").unwrap_or(0) > 1);
        assert!(out.params.is_empty());
    }

    #[test]
    fn parallel_counts_all_threads() {
        let clock = Arc::new(FakeClock::new(Duration::from_millis(1)));
        let mut ctx = RunCtx::new(settings(3), clock, CancelToken::new());
        ctx.begin_case(Duration::from_millis(1));
        let seen = Mutex::new(std::collections::BTreeSet::new());
        let samples = ctx
            .measure_rate_parallel(4, |t, n| {
                if let Ok(mut s) = seen.lock() {
                    s.insert(t);
                }
                Ok(n as f64)
            })
            .unwrap();
        assert_eq!(samples.len(), 3);
        assert_eq!(seen.lock().map(|s| s.len()).unwrap_or(0), 4);
        // 4 threads × 1 unit over 1 ms of fake time.
        for s in samples {
            assert!((s - 4000.0).abs() < 1e-6, "{s}");
        }
    }

    #[test]
    fn parallel_propagates_errors() {
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
        let mut ctx = RunCtx::new(settings(3), clock, CancelToken::new());
        ctx.begin_case(Duration::from_millis(5));
        let r = ctx.measure_rate_parallel(2, |t, _| {
            if t == 1 {
                Err(BenchError::failed("boom"))
            } else {
                Ok(1.0)
            }
        });
        assert!(matches!(r, Err(BenchError::Failed(m)) if m == "boom"));
    }

    #[test]
    fn cancellation_stops_measuring() {
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
        let cancel = CancelToken::new();
        let mut ctx = RunCtx::new(settings(3), clock, cancel.clone());
        ctx.begin_case(Duration::from_millis(5));
        cancel.cancel();
        assert!(matches!(
            ctx.measure_rate(|_| Ok(1.0)),
            Err(BenchError::Cancelled)
        ));
        assert!(matches!(
            ctx.measure_rate_parallel(2, |_, _| Ok(1.0)),
            Err(BenchError::Cancelled)
        ));
    }

    #[test]
    fn drop_ends_the_session_fixtures_first() {
        struct Probe(PathBuf, Arc<Mutex<Vec<bool>>>);
        impl Drop for Probe {
            fn drop(&mut self) {
                if let Ok(mut v) = self.1.lock() {
                    v.push(self.0.exists());
                }
            }
        }
        let base = tempfile::tempdir().unwrap();
        let mut s = settings(1);
        s.scratch_base = base.path().to_path_buf();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let dir;
        {
            let mut ctx = RunCtx::new(s, Arc::new(MonotonicClock::new()), CancelToken::new());
            dir = ctx.scratch_dir().unwrap();
            let (d, v) = (dir.clone(), seen.clone());
            ctx.fixture("probe", move |_| Ok(Probe(d, v)))
                .map(|_| ())
                .unwrap();
        }
        // The fixture saw its scratch directory still present when dropped.
        assert_eq!(*seen.lock().unwrap_or_else(|e| e.into_inner()), vec![true]);
        assert!(!dir.exists());
    }

    #[test]
    fn fixtures_and_scratch() {
        let base = tempfile::tempdir().unwrap();
        let mut s = settings(1);
        s.scratch_base = base.path().to_path_buf();
        let mut ctx = RunCtx::new(s, Arc::new(MonotonicClock::new()), CancelToken::new());
        let dir = ctx.scratch_dir().unwrap();
        assert!(dir.starts_with(base.path()) && dir.is_dir());
        let mut inits = 0;
        for _ in 0..3 {
            let v: &mut Vec<u8> = ctx
                .fixture("buf", |_| {
                    inits += 1;
                    Ok(vec![1u8; 16])
                })
                .unwrap();
            v[0] += 1;
        }
        assert_eq!(inits, 1);
        let v: &mut Vec<u8> = ctx.fixture("buf", |_| Ok(vec![])).unwrap();
        assert_eq!(v[0], 4);
        assert!(ctx
            .fixture::<String, _>("buf", |_| Ok(String::new()))
            .is_err());
        ctx.end_session();
        assert!(!dir.exists());
    }

    #[test]
    fn repeat_collects_samples() {
        let mut ctx = RunCtx::for_tests(settings(5));
        let mut i = 0.0;
        let samples = ctx
            .repeat(|_| {
                i += 1.0;
                Ok(i)
            })
            .unwrap();
        assert_eq!(samples, vec![2.0, 3.0, 4.0, 5.0, 6.0]);
    }
}
