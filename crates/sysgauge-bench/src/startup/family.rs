//! The startup family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, StartupOptions};
use crate::registry::{FamilyDef, FamilyInfo};

// The startup family runs only the commands given to `sysgauge
// startup` (none in `sysgauge run`); its slice is the default
// minimum time of the timed runs of each command.
pub static FAMILY: FamilyDef<StartupOptions> = FamilyDef {
    info: FamilyInfo {
        name: "startup",
        summary:
            "start-up time of given commands against a baseline, and the shared libraries they load",
        budget_seconds: [0.3, 3.0, 10.0, 30.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(report::startup_report),
    summary_first: false,
};
