//! The hash family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::{benchmarks, HashOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<HashOptions> = FamilyDef {
    info: FamilyInfo {
        name: "hash",
        summary: "in-process digest throughput (md5, sha1, sha256, sha512, blake2b-512, blake3)",
        budget_seconds: [0.3, 6.0, 40.0, 120.0],
        in_default_run: true,
    },
    benchmarks,
    report: None,
    summary_first: true,
};
