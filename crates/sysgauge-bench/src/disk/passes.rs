//! The measuring loop of the disk family: calibrated passes of timed
//! operations, with the latency of every operation.
//!
//! `RunCtx::measure_rate` times whole repetitions only; a disk test also
//! needs each operation's latency (median, p99, max) and must keep untimed
//! work (dropping the cache before a read pass) out of the clock. So a pass
//! is a function that does its own set-up, times each operation with an
//! `OpTimer`, and reports its work and elapsed time. The first pass runs
//! until the repetition target is reached (or the file ends) and fixes the
//! operation count; it also serves as the warm-up. Every timed pass then
//! does exactly that many operations, so samples are comparable. The
//! warm-ups and timed passes after calibration are the core `Sampler`'s
//! fixed rule; the calibration pass and the per-operation timing are the
//! disk-specific parts kept here.

use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::{
    BenchError, Better, CancelToken, Clock, Metric, Phase, Rule, RunCtx, Sampler, Unit,
};
use sysgauge_family::util::metric;
use sysgauge_stats::{median, percentile};

/// How many operations a pass does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Run until `target` has elapsed or `max_ops` are done.
    Calibrate { target: Duration, max_ops: u64 },
    /// Exactly this many.
    Ops(u64),
}

impl Limit {
    /// The most operations the pass may do (for preallocating latencies).
    pub fn max_ops(&self) -> u64 {
        match *self {
            Limit::Calibrate { max_ops, .. } => max_ops,
            Limit::Ops(n) => n,
        }
    }
}

/// One pass's outcome.
#[derive(Debug, Clone, Default)]
pub struct PassResult {
    pub ops: u64,
    /// Units of work (bytes or operations) done.
    pub work: f64,
    pub elapsed: Duration,
    /// Latency of each operation, nanoseconds.
    pub latencies_ns: Vec<f64>,
}

/// Cap on recorded latencies per pass: bounds memory (8 bytes each).
const MAX_RECORDED: u64 = 4_000_000;

/// Times the operations of one pass. Latencies are recorded into a vector
/// allocated before the clock starts.
pub struct OpTimer {
    clock: Arc<dyn Clock>,
    cancel: CancelToken,
    limit: Limit,
    start: Duration,
    lats: Vec<f64>,
    ops: u64,
}

impl OpTimer {
    /// Prepare a timer (allocates); the clock starts with `start`.
    pub fn new(ctx: &RunCtx, limit: Limit) -> OpTimer {
        let cap = limit.max_ops().min(MAX_RECORDED);
        OpTimer::with_clock(ctx.clock().clone(), ctx.cancel_token().clone(), limit, cap)
    }

    /// A timer for a worker thread.
    pub fn with_clock(
        clock: Arc<dyn Clock>,
        cancel: CancelToken,
        limit: Limit,
        capacity: u64,
    ) -> OpTimer {
        let cap = usize::try_from(capacity.min(MAX_RECORDED)).unwrap_or(0);
        OpTimer {
            start: clock.now(),
            clock,
            cancel,
            limit,
            lats: Vec::with_capacity(cap),
            ops: 0,
        }
    }

    /// Start the pass's clock.
    pub fn start(&mut self) {
        self.start = self.clock.now();
    }

    /// Whether another operation should run. Checks cancellation every 64
    /// operations so Ctrl-C is honoured within milliseconds.
    pub fn more(&self) -> Result<bool, BenchError> {
        if self.ops.is_multiple_of(64) {
            self.cancel.check()?;
        }
        Ok(match self.limit {
            Limit::Ops(n) => self.ops < n,
            Limit::Calibrate { target, max_ops } => {
                self.ops < max_ops
                    && (self.ops == 0 || self.clock.now().saturating_sub(self.start) < target)
            }
        })
    }

    /// Time one operation.
    pub fn time<T, E>(&mut self, op: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let t0 = self.clock.now();
        let r = op();
        let dt = self.clock.now().saturating_sub(t0);
        if (self.lats.len() as u64) < MAX_RECORDED {
            self.lats.push(dt.as_nanos() as f64);
        }
        self.ops += 1;
        r
    }

    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// Stop the clock; `work_per_op` units were done by each operation.
    pub fn finish(self, work_per_op: f64) -> PassResult {
        let elapsed = self.clock.now().saturating_sub(self.start);
        PassResult {
            ops: self.ops,
            work: self.ops as f64 * work_per_op,
            elapsed,
            latencies_ns: self.lats,
        }
    }

    /// The time the clock started (for combining workers).
    pub fn started_at(&self) -> Duration {
        self.start
    }
}

/// Samples of a measured case: one per timed pass.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Work per second.
    pub rate: Vec<f64>,
    /// Per pass: median, 99th percentile and maximum latency, microseconds.
    pub lat_median: Vec<f64>,
    pub lat_p99: Vec<f64>,
    pub lat_max: Vec<f64>,
    /// Operations per timed pass.
    pub ops_per_pass: u64,
    /// Work done in all timed passes.
    pub total_work: f64,
}

impl Samples {
    fn push(&mut self, r: &PassResult) -> Result<(), BenchError> {
        let secs = r.elapsed.as_secs_f64();
        if secs <= 0.0 || r.ops == 0 {
            return Err(BenchError::failed(
                "a pass took no measurable time or did nothing",
            ));
        }
        self.rate.push(r.work / secs);
        self.total_work += r.work;
        if !r.latencies_ns.is_empty() {
            self.lat_median.push(median(&r.latencies_ns) / 1000.0);
            self.lat_p99
                .push(percentile(&r.latencies_ns, 99.0) / 1000.0);
            let max = r.latencies_ns.iter().copied().fold(0.0, f64::max);
            self.lat_max.push(max / 1000.0);
        }
        Ok(())
    }

    /// The headline metric (`rate_unit`, converted by `scale`) followed by
    /// the three latency metrics.
    pub fn metrics(
        &self,
        headline: &str,
        rate_unit: Unit,
        scale: f64,
    ) -> Result<Vec<Metric>, BenchError> {
        let mut v = vec![metric(
            headline,
            rate_unit,
            Better::Higher,
            self.rate.iter().map(|r| r * scale).collect(),
        )?];
        if !self.lat_median.is_empty() {
            for (name, s) in [
                ("latency_median", &self.lat_median),
                ("latency_p99", &self.lat_p99),
                ("latency_max", &self.lat_max),
            ] {
                v.push(metric(name, Unit::Microseconds, Better::Lower, s.clone())?);
            }
        }
        Ok(v)
    }
}

/// Run the calibration pass (which is also the first warm-up), further
/// warm-ups, then the timed passes. The passes after calibration are the
/// core sampler's fixed `--repetitions` rule; each pass times itself.
pub fn run_passes<F>(
    ctx: &mut RunCtx,
    target: Duration,
    max_ops: u64,
    mut pass: F,
) -> Result<Samples, BenchError>
where
    F: FnMut(&mut RunCtx, Limit) -> Result<PassResult, BenchError>,
{
    ctx.check_cancel()?;
    let first = pass(
        ctx,
        Limit::Calibrate {
            target,
            max_ops: max_ops.max(1),
        },
    )?;
    let n = first.ops.max(1);
    let mut s = Samples {
        ops_per_pass: n,
        ..Samples::default()
    };
    let (clock, cancel) = (ctx.clock().clone(), ctx.cancel_token().clone());
    let warmup = u64::from(ctx.warmup().saturating_sub(1));
    let rule = Rule::Fixed {
        runs: u64::from(ctx.repetitions()),
    };
    Sampler::new(clock.as_ref(), &cancel).run(warmup, &rule, |phase| {
        let r = pass(ctx, Limit::Ops(n))?;
        if phase == Phase::Timed {
            s.push(&r)?;
        }
        Ok(r.work / r.elapsed.as_secs_f64())
    })?;
    ctx.note_detail("ops_per_rep", n);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::{CtxSettings, FakeClock, Profile};

    fn ctx(clock: Arc<dyn Clock>) -> RunCtx {
        RunCtx::new(
            CtxSettings {
                warmup: 2,
                threads: 1,
                ..CtxSettings::for_tests(Profile::Tiny, std::env::temp_dir())
            },
            clock,
            CancelToken::new(),
        )
    }

    #[test]
    fn calibrates_then_repeats_exact_counts() {
        // Each clock read advances 1 µs: an op is timed by two reads, so
        // the loop check, t0 and t1 make every op 3 µs apart.
        let clock: Arc<dyn Clock> = Arc::new(FakeClock::new(Duration::from_micros(1)));
        let mut c = ctx(clock);
        let mut counts = Vec::new();
        let s = run_passes(&mut c, Duration::from_micros(300), 1000, |ctx, limit| {
            let mut t = OpTimer::new(ctx, limit);
            t.start();
            while t.more()? {
                t.time(|| Ok::<(), BenchError>(()))?;
            }
            counts.push(t.ops());
            Ok(t.finish(4096.0))
        })
        .unwrap();
        // 1 calibration + 1 more warm-up + 3 timed.
        assert_eq!(counts.len(), 5);
        let n = counts[0];
        assert!(n > 10 && n < 1000, "{n}");
        assert!(counts.iter().all(|&c| c == n));
        assert_eq!(s.rate.len(), 3);
        // Every latency is exactly one clock step.
        assert!(s.lat_median.iter().all(|&l| (l - 1.0).abs() < 1e-9));
        assert!(s.lat_max.iter().all(|&l| (l - 1.0).abs() < 1e-9));
        let m = s.metrics("throughput", Unit::MBps, 1e-6).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[1].name, "latency_median");
        assert_eq!(m[3].better, Better::Lower);
    }

    #[test]
    fn max_ops_bounds_calibration() {
        let clock: Arc<dyn Clock> = Arc::new(FakeClock::new(Duration::from_nanos(1)));
        let mut c = ctx(clock);
        let s = run_passes(&mut c, Duration::from_secs(3600), 7, |ctx, limit| {
            let mut t = OpTimer::new(ctx, limit);
            t.start();
            while t.more()? {
                t.time(|| Ok::<(), BenchError>(()))?;
            }
            Ok(t.finish(1.0))
        })
        .unwrap();
        assert_eq!(s.ops_per_pass, 7);
    }

    #[test]
    fn cancellation_stops_a_pass() {
        let clock: Arc<dyn Clock> = Arc::new(FakeClock::new(Duration::from_nanos(1)));
        let mut c = ctx(clock);
        c.cancel_token().cancel();
        let r = run_passes(&mut c, Duration::from_secs(1), 100, |ctx, limit| {
            let t = OpTimer::new(ctx, limit);
            t.more()?;
            Ok(t.finish(1.0))
        });
        assert!(matches!(r, Err(BenchError::Cancelled)));
    }
}
