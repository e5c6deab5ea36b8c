//! Cancellation: Ctrl-C sets a shared flag; benchmarks poll it between
//! repetitions (and inside long loops) and return `BenchError::Cancelled`.
//! Cooperative cancellation lets every scratch file and child process be
//! cleaned up by ordinary `Drop`s instead of from a signal handler.

use crate::bench::BenchError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        CancelToken::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// `Err(Cancelled)` once cancelled.
    pub fn check(&self) -> Result<(), BenchError> {
        if self.is_cancelled() {
            Err(BenchError::Cancelled)
        } else {
            Ok(())
        }
    }
}
