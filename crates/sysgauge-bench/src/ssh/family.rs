//! The ssh family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, SshOptions};
use crate::registry::{FamilyDef, FamilyInfo};

// Real ssh connections through a private sshd: minutes for the
// factorial matrix, so not in the default run. The slice only
// describes `sysgauge run --only ssh`; the cases run a fixed number
// of transfers of a fixed size whatever the budget.
pub static FAMILY: FamilyDef<SshOptions> = FamilyDef {
    info: FamilyInfo {
        name: "ssh",
        summary: "OpenSSH cipher, MAC and key exchange speed: transfer throughput and handshake time (private sshd on loopback, or --host)",
        budget_seconds: [2.0, 30.0, 120.0, 600.0],
        in_default_run: false,
    },
    benchmarks,
    report: Some(|run, format| report::ssh_report(run, format, false)),
    summary_first: false,
};
