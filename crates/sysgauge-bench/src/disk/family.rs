//! The disk family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, DiskOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<DiskOptions> = FamilyDef {
    info: FamilyInfo {
        name: "disk",
        summary: "file-system and raw-device I/O: sequential, rewrite, per-character, random seeks, file operations",
        budget_seconds: [0.4, 8.0, 40.0, 120.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(report::disk_report),
    summary_first: false,
};
