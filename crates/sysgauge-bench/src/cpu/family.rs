//! The cpu family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, CpuOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<CpuOptions> = FamilyDef {
    info: FamilyInfo {
        name: "cpu",
        summary: "classic CPU kernels (numeric sort ... LU decomposition) in iterations/s, thread scaling, integer/float/memory indexes",
        budget_seconds: [0.3, 12.0, 60.0, 180.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(report::cpu_table),
    summary_first: true,
};
