//! What the rest of the machine did while a case ran. The runner asks a
//! [`CaseMonitor`] to watch every case (sysgauge-host's telemetry, which
//! reads /proc and /sys) and stores what it observed with the result: a
//! summary in the details, findings, and the `disturbed` mark that
//! comparisons and indexes can leave out. The measuring code never sees it.

use crate::record::{Finding, Params, ResultRecord};

/// The detail that marks a result as disturbed (other processes, steal,
/// throttling …), with the reasons.
pub const DISTURBED: &str = "disturbed";

/// The finding of a case measured while the machine gave less than its
/// best of the run (another guest sharing the core: sysgauge-host's
/// capacity probe). Such a case is disturbed, and a reference case with
/// it is above the quiet limits.
pub const CAPACITY_DIP: &str = "capacity-dip";

/// Watches cases; one per run.
pub trait CaseMonitor: Send + Sync {
    /// Start watching a case of `family` that begins now.
    fn watch(&self, family: &str) -> Box<dyn CaseWatch>;
}

/// One case being watched.
pub trait CaseWatch: Send {
    /// Stop watching the case called `case` (`hash.sha256 (block_size=…)`).
    fn finish(self: Box<Self>, case: &str) -> Observed;
}

/// What a watch saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// Stored in the result's details (never in its params: matching is
    /// unchanged).
    pub details: Params,
    pub findings: Vec<Finding>,
    /// Why the result is disturbed, if it is; empty when it is not.
    pub disturbed: Vec<String>,
}

impl ResultRecord {
    /// Why this result was disturbed while it ran, if it was.
    pub fn disturbed(&self) -> Option<&str> {
        self.details.get_str(DISTURBED)
    }
}
