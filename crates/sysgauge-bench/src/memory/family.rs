//! The mem family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, MemOptions};
use crate::registry::{FamilyDef, FamilyInfo};

// The slice's three cases also allocate and fault in their buffers
// and build the latency chain (about a second in all at the quick
// sizes), outside the measuring budget: 5 s of measuring is about
// 6 s of wall time.
pub static FAMILY: FamilyDef<MemOptions> = FamilyDef {
    info: FamilyInfo {
        name: "mem",
        summary: "memory copy bandwidth (mbw style), STREAM kernels, latency by working set, tmpfs writes",
        budget_seconds: [0.3, 5.0, 30.0, 90.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(report::memory_report),
    summary_first: true,
};
