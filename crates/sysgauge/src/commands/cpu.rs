//! `sysgauge cpu`: the classic CPU kernels alone. The same benchmarks as the
//! `cpu` family of `sysgauge run` (same ids, same records, stored as a run),
//! with the thread counts and kernels chosen on the command line, and a
//! kernel-by-threads table with scaling efficiency and the indexes after the
//! summary.

use crate::cli::CpuArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::values::thread_list;
use anyhow::Result;
use std::sync::Arc;
use sysgauge_bench::cpu::report::cpu_table;
use sysgauge_bench::cpu::{self, CpuOptions};
use sysgauge_core::RunRecord;
use sysgauge_report::{summary_table, TableFormat};

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
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("cpu", &cfg, &selected, &cancel, Vec::new())?;
    measure::finish(&cfg, &outcome, render(&outcome.record))
}

/// The summary and the kernel table with scaling and indexes; the findings
/// (an active Linux Security Module among them) follow from `measure::finish`.
fn render(record: &RunRecord) -> String {
    let mut text = summary_table(record, TableFormat::Text);
    let table = cpu_table(record, TableFormat::Text);
    if !table.is_empty() {
        text.push('\n');
        text.push_str(&table);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

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
            schema_version: sysgauge_core::SCHEMA_VERSION,
            run_id: "t".into(),
            started_at: chrono::Utc::now(),
            finished_at: None,
            status: sysgauge_core::RunStatus::Complete,
            command: "cpu".into(),
            tool_version: "0".into(),
            findings: sysgauge_bench::methodology::run_findings(&host, &build),
            build,
            host,
            profile: sysgauge_core::Profile::Quick,
            label: None,
            tags: Default::default(),
            results: vec![],
        };
        let text = render(&record) + &measure::findings_section(&record);
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
