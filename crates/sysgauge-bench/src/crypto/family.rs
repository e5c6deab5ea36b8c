//! The crypto family as the registry sees it: its name, summary and time
//! slices, how its benchmarks are made from its options, and the tables
//! its own subcommand prints after the summary.

use super::report;
use super::{benchmarks, CryptoOptions};
use crate::registry::{FamilyDef, FamilyInfo};

pub static FAMILY: FamilyDef<CryptoOptions> = FamilyDef {
    info: FamilyInfo {
        name: "crypto",
        summary: "openssl-speed-style ciphers, AEADs, HMAC, signatures and key agreement",
        budget_seconds: [0.4, 8.0, 40.0, 160.0],
        in_default_run: true,
    },
    benchmarks,
    report: Some(|run, format| report::speed_table(&run.results, format)),
    summary_first: false,
};
