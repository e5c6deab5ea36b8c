//! Waiting for the kernel's dirty pages to drain before a measurement.
//!
//! A freshly written large input file is still being flushed to disk for a
//! while; a benchmark that starts then competes with that write-behind and
//! measures about half speed. Old scripts slept a guessed time. Here the
//! kernel is asked to write everything (`sync(2)`) and /proc/meminfo's
//! `Dirty` + `Writeback` are watched until they fall to a threshold.
//!
//! `sync(2)` has no timeout and can block for minutes on a slow SD card, so
//! it runs on its own thread and the wait stays bounded by `max_wait`: if
//! time runs out the thread is left to finish on its own (it holds nothing
//! but itself) and the report says the drain did not complete.

use crate::memory::read_dirty_writeback;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often /proc/meminfo is polled: short enough to add little to a
/// measurement's start, long enough to cost nothing.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// What `wait_for_writeback` saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainReport {
    /// Time spent waiting.
    pub waited: Duration,
    /// Dirty + Writeback bytes before `sync`, when readable.
    pub dirty_before: Option<u64>,
    /// Dirty + Writeback bytes at the end, when readable.
    pub dirty_after: Option<u64>,
    /// True when the pages fell to the threshold (or, without a readable
    /// /proc/meminfo, when `sync` returned) within the time.
    pub drained: bool,
    /// True when `sync(2)` returned within the time.
    pub sync_completed: bool,
    /// True when `cancel` asked to stop.
    pub cancelled: bool,
}

/// Flushes dirty pages and waits, at most `max_wait`, until Dirty +
/// Writeback in /proc/meminfo is at or below `threshold_bytes`. `cancel`
/// is polled between readings (pass `|| false` when there is nothing to
/// cancel).
pub fn wait_for_writeback(
    max_wait: Duration,
    threshold_bytes: u64,
    cancel: impl Fn() -> bool,
) -> DrainReport {
    let start = Instant::now();
    let pending = || read_dirty_writeback().map(|(d, w)| d.saturating_add(w));
    let dirty_before = pending();

    let (tx, rx) = mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("sysgauge-sync".to_string())
        .spawn(move || {
            rustix::fs::sync();
            // The waiter may have given up and dropped the receiver: fine.
            let _ = tx.send(());
        });
    // Without a thread there is no bounded way to call sync(2); the kernel's
    // own flusher still drains the pages, so polling alone goes on.
    let mut sync_completed = false;
    let sync_running = spawned.is_ok();

    let mut report = DrainReport {
        waited: Duration::ZERO,
        dirty_before,
        dirty_after: dirty_before,
        drained: false,
        sync_completed: false,
        cancelled: false,
    };
    loop {
        if sync_running && !sync_completed && rx.try_recv().is_ok() {
            sync_completed = true;
        }
        let now = pending();
        report.dirty_after = now;
        let below = match now {
            Some(bytes) => bytes <= threshold_bytes,
            None => sync_completed,
        };
        if below {
            report.drained = true;
            break;
        }
        if cancel() {
            report.cancelled = true;
            break;
        }
        let elapsed = start.elapsed();
        if elapsed >= max_wait {
            break;
        }
        std::thread::sleep(POLL_INTERVAL.min(max_wait - elapsed));
    }
    if sync_running && !sync_completed && rx.try_recv().is_ok() {
        sync_completed = true;
    }
    report.sync_completed = sync_completed;
    report.waited = start.elapsed();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generous_threshold_drains_at_once() {
        let r = wait_for_writeback(Duration::from_secs(5), u64::MAX, || false);
        assert!(r.drained);
        assert!(!r.cancelled);
        assert!(r.waited < Duration::from_secs(5));
        assert!(
            r.dirty_before.is_some(),
            "this test needs a readable /proc/meminfo"
        );
    }

    #[test]
    fn cancel_or_drain_ends_the_wait() {
        let r = wait_for_writeback(Duration::from_secs(30), 0, || true);
        assert!(r.cancelled || r.drained);
        assert!(r.waited < Duration::from_secs(30));
    }

    #[test]
    fn wait_is_bounded() {
        let r = wait_for_writeback(Duration::from_millis(120), 0, || false);
        // Either nothing was dirty, or the wait stopped near its bound.
        assert!(r.drained || r.waited < Duration::from_secs(2));
        assert!(r.waited < Duration::from_secs(2));
    }
}
