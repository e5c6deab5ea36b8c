//! The clock benchmarks time with. Always monotonic (`Instant` is
//! CLOCK_MONOTONIC on Linux): wall-clock steps from NTP must never show up as
//! speed. A trait so tests can inject a deterministic clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub trait Clock: Send + Sync {
    /// Time since an arbitrary fixed origin; never goes backwards.
    fn now(&self) -> Duration;
}

/// The real monotonic clock.
#[derive(Debug)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    pub fn new() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that advances by a fixed step every time it is read: measurements
/// taken with it are exact and repeatable.
#[derive(Debug)]
pub struct FakeClock {
    nanos: AtomicU64,
    step_nanos: u64,
}

impl FakeClock {
    pub fn new(step: Duration) -> Self {
        FakeClock {
            nanos: AtomicU64::new(0),
            step_nanos: u64::try_from(step.as_nanos()).unwrap_or(u64::MAX),
        }
    }
    /// Move the clock forward without a read.
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Ordering::SeqCst,
        );
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.fetch_add(self.step_nanos, Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_steps() {
        let c = FakeClock::new(Duration::from_millis(10));
        assert_eq!(c.now(), Duration::ZERO);
        assert_eq!(c.now(), Duration::from_millis(10));
        c.advance(Duration::from_millis(5));
        assert_eq!(c.now(), Duration::from_millis(25));
    }

    #[test]
    fn monotonic_never_goes_back() {
        let c = MonotonicClock::new();
        let mut last = c.now();
        for _ in 0..1000 {
            let t = c.now();
            assert!(t >= last);
            last = t;
        }
    }
}
