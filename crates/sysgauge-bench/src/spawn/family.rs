//! The spawn family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, SpawnOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<SpawnOptions> = FamilyDef {
    info: FamilyInfo {
        name: "spawn",
        summary: "process start-up cost by method (fork, vfork, clone, posix_spawn, std, popen, system), parent-size sweep",
        budget_seconds: [0.3, 4.0, 40.0, 120.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(report::spawn_report),
    summary_first: false,
};
