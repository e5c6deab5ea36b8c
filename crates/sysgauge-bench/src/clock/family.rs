//! The clock family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, ClockOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<ClockOptions> = FamilyDef {
    info: FamilyInfo {
        name: "clock",
        summary:
            "effective clock of each CPU against its nominal clock (at the start and end of a run)",
        budget_seconds: [0.1, 1.0, 4.0, 8.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(|run, format| report::clock_table(&run.results, format)),
    summary_first: false,
};
