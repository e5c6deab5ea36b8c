//! `sysgauge cpu`: the classic CPU kernels alone. The same benchmarks as the
//! `cpu` family of `sysgauge run` (same ids, same records, stored as a run),
//! with the thread counts and kernels chosen on the command line, and a
//! kernel-by-threads table with scaling efficiency and the indexes after the
//! summary.

use crate::cli::CpuArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use anyhow::{bail, Result};
use std::sync::Arc;
use sysgauge_bench::cpu::kernels::KernelId;
use sysgauge_bench::cpu::report::cpu_table;
use sysgauge_bench::cpu::{self, CpuOptions};
use sysgauge_core::{Benchmark, RunRecord};
use sysgauge_report::{summary_table, TableFormat};

/// The most threads `--threads` accepts: far beyond any machine, low enough
/// that a typo cannot start a million threads.
const MAX_THREADS: usize = 4096;

pub fn run(args: CpuArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let threads = parse_threads(&args.threads)?;
    let kernels = parse_kernels(&args.kernels)?;
    let options = Arc::new(CpuOptions {
        threads,
        ladder: args.ladder,
    });
    let selected = select(cpu::benchmarks(&options), kernels.as_deref());
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

/// `--threads 1,2,8` into counts (1 ..= MAX_THREADS); empty means the default.
fn parse_threads(raw: &[String]) -> Result<Option<Vec<usize>>> {
    if raw.is_empty() {
        return Ok(None);
    }
    let mut v = Vec::new();
    for s in raw {
        let s = s.trim();
        let n: usize = match s.parse() {
            Ok(n) => n,
            Err(_) => bail!("--threads: '{s}' is not a whole number of threads"),
        };
        if n == 0 || n > MAX_THREADS {
            bail!("--threads: {n} is out of range (1 to {MAX_THREADS})");
        }
        v.push(n);
    }
    Ok(Some(v))
}

/// `--kernels idea,cpu.fourier` into kernels; unknown names are an error
/// listing the known ones.
fn parse_kernels(raw: &[String]) -> Result<Option<Vec<KernelId>>> {
    if raw.is_empty() {
        return Ok(None);
    }
    let mut v = Vec::new();
    for s in raw {
        match KernelId::parse(s) {
            Some(k) => v.push(k),
            None => {
                let known: Vec<&str> = KernelId::ALL.iter().map(|k| k.short_name()).collect();
                bail!(
                    "--kernels: unknown kernel '{}' (known: {})",
                    s.trim(),
                    known.join(", ")
                );
            }
        }
    }
    Ok(Some(v))
}

/// Keep the chosen kernels, and the indexes whose kernels are all chosen.
fn select(all: Vec<Box<dyn Benchmark>>, kernels: Option<&[KernelId]>) -> Vec<Box<dyn Benchmark>> {
    let Some(chosen) = kernels else {
        return all;
    };
    all.into_iter()
        .filter(|b| match KernelId::parse(b.id()) {
            Some(k) => chosen.contains(&k),
            None => {
                // An index: keep it only if every kernel of its group runs.
                let group = b.id().trim_start_matches("cpu.index-");
                KernelId::ALL
                    .iter()
                    .filter(|k| k.group().name() == group)
                    .all(|k| chosen.contains(k))
            }
        })
        .collect()
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

    #[test]
    fn threads_parsing() {
        assert_eq!(parse_threads(&[]).ok().flatten(), None);
        assert_eq!(
            parse_threads(&["1".into(), " 4".into()]).ok().flatten(),
            Some(vec![1, 4])
        );
        assert!(parse_threads(&["0".into()]).is_err());
        assert!(parse_threads(&["two".into()]).is_err());
        assert!(parse_threads(&["100000".into()]).is_err());
    }

    #[test]
    fn kernel_selection_keeps_complete_indexes() {
        let all = cpu::benchmarks(&Arc::new(CpuOptions::default()));
        assert_eq!(all.len(), 13);
        let ks = parse_kernels(&[
            "fourier".into(),
            "cpu.neural-net".into(),
            "lu-decomposition".into(),
            "idea".into(),
        ])
        .ok()
        .flatten();
        let ids: Vec<String> = select(all, ks.as_deref())
            .iter()
            .map(|b| b.id().to_string())
            .collect();
        assert_eq!(
            ids,
            vec![
                "cpu.fourier",
                "cpu.idea",
                "cpu.neural-net",
                "cpu.lu-decomposition",
                "cpu.index-float"
            ]
        );
        let err = parse_kernels(&["quicksort".into()])
            .err()
            .map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("numeric-sort"));
    }
}
