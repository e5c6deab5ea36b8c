//! Small helpers shared by the families: building metrics from samples,
//! turning byte rates into decimal MB/s, test patterns. (The optimisation
//! barriers the hand-tuned loops use live in `sysgauge_kernels::opaque`.)

use std::sync::{Mutex, MutexGuard};
use sysgauge_core::record::ResultRecord;
use sysgauge_core::{BenchError, Better, Metric, Params, Profile, RunCtx, Unit};

/// Why a text is not usable output of another tool (openssl, mbw,
/// Bonnie++, nbench, sysbench): the 1-based line (the last one for what is missing
/// at the end), and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LineError {
    pub line: usize,
    pub message: String,
}

pub fn line_error(line: usize, message: impl Into<String>) -> LineError {
    LineError {
        line,
        message: message.into(),
    }
}

/// Add another run of a case (the same id and params, from the same
/// file) to `case`: each metric's samples are appended to the one of the
/// same name; a metric the case lacks is added.
pub fn add_run(case: &mut ResultRecord, metrics: Vec<Metric>) {
    for m in metrics {
        match case.metrics.iter_mut().find(|o| o.name == m.name) {
            Some(old) => {
                let mut samples = std::mem::take(&mut old.samples);
                samples.extend(m.samples);
                // Both sample lists were usable, so their union is.
                if let Some(merged) = Metric::new(&m.name, m.unit, m.better, samples) {
                    *old = merged;
                }
            }
            None => case.metrics.push(m),
        }
    }
}

/// A metric from samples, or a failed case if the samples are unusable
/// (empty or not finite: the measurement itself went wrong).
pub fn metric(
    name: &str,
    unit: Unit,
    better: Better,
    samples: Vec<f64>,
) -> Result<Metric, BenchError> {
    Metric::new(name, unit, better, samples)
        .ok_or_else(|| BenchError::failed(format!("no usable samples for {name}")))
}

/// The one metric of a bandwidth case: `throughput` in MB/s, higher is
/// better.
pub fn throughput_mbps(samples: Vec<f64>) -> Result<Vec<Metric>, BenchError> {
    Ok(vec![metric(
        "throughput",
        Unit::MBps,
        Better::Higher,
        samples,
    )?])
}

/// A profile's entry in a table of four, in the order tiny, quick,
/// standard, full (the order of `register_family!`'s budgets).
pub fn by_profile<T: Copy>(profile: Profile, table: [T; 4]) -> T {
    match profile {
        Profile::Tiny => table[0],
        Profile::Quick => table[1],
        Profile::Standard => table[2],
        Profile::Full => table[3],
    }
}

/// Bytes per second → decimal megabytes per second.
pub fn mb_per_s(bytes_per_second: f64) -> f64 {
    bytes_per_second / 1e6
}

pub use sysgauge_kernels::bytes::{fill_pattern, hex};

/// The case's `threads` parameter, `all` being the run's `cpus`; a case
/// without one runs on one thread.
pub fn threads_param(params: &Params, cpus: usize) -> usize {
    params.get_count("threads", cpus).unwrap_or(1).max(1)
}

/// A planned count (`threads`, `spawners`): a number the user chose, or
/// every CPU of the machine, which the case's identity names as `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Count {
    N(usize),
    AllCpus,
}

/// The most threads any option accepts: far beyond any machine, low enough
/// that a typo cannot start a million threads.
pub const MAX_THREADS: usize = 4096;

/// The thread-list grammar of `--threads 1,2,all`: a count, or `all` for
/// one per CPU, kept as `all` so the case compares across machines.
impl std::str::FromStr for Count {
    type Err = String;

    fn from_str(s: &str) -> Result<Count, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case(sysgauge_core::ALL_CPUS) {
            return Ok(Count::AllCpus);
        }
        let n: usize = s
            .parse()
            .map_err(|_| format!("'{s}' is not a whole number of threads or 'all'"))?;
        if n == 0 || n > MAX_THREADS {
            return Err(format!("{n} threads is out of range (1 to {MAX_THREADS})"));
        }
        Ok(Count::N(n))
    }
}

impl Count {
    /// The number of threads, `all` being `cpus`.
    pub fn resolve(self, cpus: usize) -> usize {
        match self {
            Count::N(n) => n.max(1),
            Count::AllCpus => cpus.max(1),
        }
    }
}

impl From<Count> for sysgauge_core::ParamValue {
    fn from(c: Count) -> Self {
        match c {
            Count::N(n) => n.into(),
            Count::AllCpus => sysgauge_core::ALL_CPUS.into(),
        }
    }
}

/// The case's `block_size` parameter as a buffer length (hash and crypto
/// cases, one digest or cipher call per block).
pub fn block_size_param(params: &Params) -> Result<usize, BenchError> {
    let block = params
        .get_u64("block_size")
        .filter(|&b| b > 0)
        .ok_or_else(|| BenchError::failed("missing block_size"))?;
    usize::try_from(block).map_err(|_| BenchError::failed("block too large"))
}

/// Measure the rate of `op(thread, n)` on `threads` threads, each with its
/// own instance of the work. One thread is measured in place, without the
/// team's barriers, so the single-thread number carries no thread start-up.
pub fn measure_rate_on_threads<F>(
    ctx: &mut RunCtx,
    threads: usize,
    op: F,
) -> Result<Vec<f64>, BenchError>
where
    F: Fn(usize, u64) -> Result<f64, BenchError> + Sync,
{
    if threads == 1 {
        ctx.measure_rate(|n| op(0, n))
    } else {
        ctx.measure_rate_parallel(threads, op)
    }
}

/// A worker's own state, locked for one timed call; the lock can only be
/// poisoned by a worker that panicked.
pub fn lock_lane<T>(lane: &Mutex<T>) -> Result<MutexGuard<'_, T>, BenchError> {
    lane.lock()
        .map_err(|_| BenchError::failed("a worker thread panicked"))
}

/// The headline value of metric `name` of a case, for the unit tests of
/// the parsers of other tools' outputs (in their own crates, hence
/// public). Not used by the tool itself.
#[doc(hidden)]
pub fn metric_value(r: &ResultRecord, name: &str) -> f64 {
    r.metrics
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.value())
        .unwrap_or_else(|| panic!("no {name} in {r:?}"))
}

/// A tiny-profile context with `threads` threads and the system temporary
/// directory as scratch, for the families' unit tests (in their own
/// crates, hence public). Not used by the tool itself.
#[doc(hidden)]
pub fn tiny_ctx(threads: usize) -> sysgauge_core::RunCtx {
    sysgauge_core::RunCtx::for_tests(sysgauge_core::CtxSettings {
        threads,
        ..sysgauge_core::CtxSettings::for_tests(sysgauge_core::Profile::Tiny, std::env::temp_dir())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_pattern() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        let mut a = vec![0u8; 37];
        let mut b = vec![0u8; 37];
        fill_pattern(&mut a, 7);
        fill_pattern(&mut b, 7);
        assert_eq!(a, b);
        assert!(a.iter().any(|&x| x != 0));
        fill_pattern(&mut b, 8);
        assert_ne!(a, b);
    }

    #[test]
    fn metric_errors() {
        assert!(metric("x", Unit::MBps, Better::Higher, vec![]).is_err());
        assert_eq!(mb_per_s(2_500_000.0), 2.5);
    }
}
