//! The machine's capacity, probed around every case.
//!
//! On a virtual machine another guest can take a share of the core this
//! one runs on (its SMT sibling, the shared caches, the memory bus) without
//! taking the vCPU away: /proc/stat shows no steal, no other process runs,
//! and still a case runs 15–50 % slower for a minute. The only way to see
//! it from inside is to time a fixed piece of work in this thread's CPU time
//! (preemption and steal excluded) and compare it with the same work earlier
//! in the run: when the same instructions take longer on the CPU, something
//! outside shared the hardware.
//!
//! A reading is a small floating-point kernel (16 independent chains the
//! compiler vectorises, about 2 ms on a current core) that competes for the
//! core's execution units and its private caches, timed twice and the
//! faster kept (interference only slows). On the development machine (a
//! 2-vCPU KVM guest) the readings of a quiet machine spread by 13 %, so
//! only a fall below [`CAPACITY_LIMIT`] of the run's best counts; the
//! slowdowns the probe is for are 15–50 %. A read of a buffer beyond the
//! private caches was tried beside it and left out: its readings on the
//! same quiet machine spread by 37 % (the shared cache's other users), too
//! wide to judge anything by. [`Tracker`] keeps the run's best reading; a
//! case whose reading before or after it fell below the limit was measured
//! on a machine that gave less than it can, and is marked disturbed.
//!
//! A disturbance present from the run's first reading to its last is not
//! seen (nothing in the run is better); `docs/repeatability.md` says so.

use std::hint::black_box;
use std::time::Duration;

/// A case whose probe fell below this share of the run's best reading was
/// measured on a machine that gave less than it can.
pub const CAPACITY_LIMIT: f64 = 0.8;
pub use sysgauge_core::monitor::CAPACITY_DIP;
/// Readings taken when the tracker starts, before the first case, so that
/// the run's best does not rest on one reading.
const FIRST_READINGS: usize = 3;
/// Iterations of the kernel (16 chains of a multiply and an add each).
const ITERATIONS: u64 = 1_000_000;
const LANES: usize = 16;

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// One reading: floating-point operations per CPU-second, the faster of
/// two timings of the kernel on the calling thread.
pub fn read() -> f64 {
    (0..2)
        .map(|_| {
            let t0 = thread_cpu();
            let mut lanes: [f64; LANES] = black_box(std::array::from_fn(|i| 1.0 + i as f64 / 10.0));
            for _ in 0..ITERATIONS {
                for x in lanes.iter_mut() {
                    *x = *x * 0.999_999 + 1e-7;
                }
            }
            black_box(lanes);
            let secs = thread_cpu().saturating_sub(t0).as_secs_f64();
            if secs > 0.0 {
                (ITERATIONS * LANES as u64 * 2) as f64 / secs
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

/// The run's best reading so far.
pub struct Tracker {
    best: f64,
}

impl Tracker {
    /// A tracker whose best comes from a few readings taken now.
    pub fn start() -> Tracker {
        Tracker {
            best: (0..FIRST_READINGS).map(|_| read()).fold(0.0, f64::max),
        }
    }

    /// Take a reading, keep it if it is the best so far, and return its
    /// share of the best.
    pub fn read(&mut self) -> f64 {
        self.share(read())
    }

    fn share(&mut self, reading: f64) -> f64 {
        self.best = self.best.max(reading);
        if self.best > 0.0 {
            reading / self.best
        } else {
            1.0
        }
    }
}

/// The detail, finding message and disturbed reason of a case whose lower
/// reading (before or after it) was `share` of the run's best, or `None`
/// when it is within [`CAPACITY_LIMIT`].
pub fn judge(share: f64) -> Option<String> {
    (share < CAPACITY_LIMIT).then(|| {
        format!(
            "the machine gave {:.0} % less than its best of this run \
             (a fixed probe timed in CPU time before and after the case: \
             another guest sharing the core or its caches; \
             steal and the process list do not show it)",
            100.0 * (1.0 - share)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_the_best_so_far() {
        let mut t = Tracker { best: 0.0 };
        assert_eq!(t.share(0.0), 1.0);
        assert_eq!(t.share(100.0), 1.0);
        assert_eq!(t.share(75.0), 0.75);
        assert_eq!(t.share(200.0), 1.0);
        assert_eq!(t.share(100.0), 0.5);
    }

    #[test]
    fn judged_below_the_limit_only() {
        assert_eq!(judge(0.95), None);
        assert_eq!(judge(CAPACITY_LIMIT), None);
        let why = judge(0.7).unwrap_or_default();
        assert!(why.contains("30 % less"), "{why}");
    }

    #[test]
    fn a_reading_does_work() {
        let mut t = Tracker::start();
        assert!(t.best > 0.0);
        let share = t.read();
        assert!(share > 0.0 && share <= 1.0, "{share}");
    }
}
