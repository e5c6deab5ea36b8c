//! The net family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, NetOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<NetOptions> = FamilyDef {
    info: FamilyInfo {
        name: "net",
        summary: "TCP throughput and connection rate, UDP packet rate and latency (loopback or --peer); 2ping results of `sysgauge ping`",
        budget_seconds: [0.4, 5.0, 30.0, 90.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(|run, _| report::net_summary(run)),
    summary_first: true,
};
