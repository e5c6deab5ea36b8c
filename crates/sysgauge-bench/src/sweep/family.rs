//! The sweep family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, SweepOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<SweepOptions> = FamilyDef {
    info: FamilyInfo {
        name: "sweep",
        summary:
            "the system's hash programs and dd over K copies of a corpus: start-up vs throughput",
        budget_seconds: [0.3, 6.0, 40.0, 120.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(|run, format| report::sweep_table(&report::sweep_points(run), format)),
    summary_first: false,
};
