//! `sysgauge cpu`: the classic CPU kernels alone. The same benchmarks as the
//! `cpu` family of `sysgauge run` (same ids, same records, stored as a run),
//! with the thread counts and kernels chosen on the command line, and a
//! kernel-by-threads table with scaling efficiency and the indexes after the
//! summary.

use crate::cli::{MeasureArgs, SelectArgs};
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::values::thread_list;
use anyhow::Result;
use clap::Args;
use std::sync::Arc;
use sysgauge_bench::cpu::{self, CpuOptions};
use sysgauge_core::Selector;
use sysgauge_family::util::Count;

#[derive(Debug, Args)]
pub struct CpuArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Thread counts to run, e.g. `1,2,8` (default: 1 and all CPUs, as
    /// `threads=all`, so machines with any CPU count compare).
    #[arg(long, value_name = "N[,...]|all", value_delimiter = ',')]
    pub threads: Vec<Count>,

    /// Run the thread ladder 1, 2, 4 … below the CPU count, then all CPUs.
    #[arg(long, conflicts_with = "threads")]
    pub ladder: bool,

    /// Kernels by name or id (`idea`, `cpu.idea`); an index runs when all
    /// its kernels do.
    #[command(flatten)]
    pub select: SelectArgs,

    /// The former spelling of --only.
    #[arg(long, hide = true, value_delimiter = ',', conflicts_with = "only")]
    pub kernels: Vec<Selector>,
}

pub fn run(args: CpuArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let options = Arc::new(CpuOptions {
        threads: thread_list(&args.threads),
        ladder: args.ladder,
    });
    // `--kernels` is the former spelling of `--only`.
    let only = if args.kernels.is_empty() {
        &args.select.only
    } else {
        &args.kernels
    };
    let selected =
        measure::select_from(cpu::benchmarks(&options), only, &args.select.skip, |_| true)?;
    measure::family_command(&cpu::FAMILY, &cfg, &selected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::RunRecord;

    /// On a host with AppArmor enabled (a captured server), the output of
    /// `sysgauge cpu` carries the lsm-active finding, and it names the CPU
    /// kernels.
    #[test]
    fn lsm_finding_is_shown() {
        // The closing output `measure::finish` adds after the cpu tables.
        let root = sysgauge_host::SysRoot::under(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../sysgauge-host/tests/fixtures/server-2s-xeon"),
        );
        let host = sysgauge_host::collect(&root, None);
        assert!(host.security.mac_lsm_active());
        let build = measure::build_info();
        let record = RunRecord {
            status: sysgauge_core::RunStatus::Complete,
            findings: sysgauge_family::methodology::run_findings(&host, &build, None),
            build,
            host,
            ..RunRecord::new("t", "cpu", "0")
        };
        let text =
            measure::family_text(&cpu::FAMILY, &record) + &measure::findings_section(&record);
        let line = text
            .lines()
            .find(|l| l.contains("lsm-active"))
            .unwrap_or_else(|| panic!("no lsm-active finding in:\n{text}"));
        assert!(
            line.contains("apparmor") && line.contains("CPU kernels"),
            "{line}"
        );
    }
}
