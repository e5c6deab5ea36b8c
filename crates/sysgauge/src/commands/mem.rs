//! `sysgauge mem`: the whole memory family (copy methods, STREAM kernels,
//! the latency sweep, tmpfs writes) as one stored run, with the family's
//! own tables (mbw-style copy table, STREAM table, latency by working set)
//! after the summary. The same benchmark ids as the `mem` slice of
//! `sysgauge run`, so the two compare.

use crate::cli::MemArgs;
use crate::config::{check_output_path, MeasureConfig};
use crate::exit::Exit;
use crate::measure;
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::sync::Arc;
use sysgauge_bench::memory::report::{latency_chart_png, latency_chart_svg, memory_report};
use sysgauge_bench::memory::{
    self, check_memory, full_budget, memory_needed, validate_size, validate_working_set,
    MemOptions, Scope,
};
use sysgauge_core::size::{parse_count, parse_size, parse_size_list, Bytes};
use sysgauge_core::Benchmark;
use sysgauge_report::{summary_table, TableFormat};

/// Width in pixels of the `--chart` picture.
const CHART_WIDTH: u32 = 1000;

/// The format of a `--chart` file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChartFormat {
    Svg,
    Png,
}

fn chart_format(path: &Path) -> Result<ChartFormat> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Ok(ChartFormat::Svg),
        Some("png") => Ok(ChartFormat::Png),
        _ => bail!(
            "--chart {}: the file name must end in .svg or .png",
            path.display()
        ),
    }
}

/// The most threads `--threads` accepts.
const MAX_THREADS: u64 = 4096;

pub fn run(args: MemArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    let options = mem_options(&args, sysgauge_host::available_memory_bytes())?;
    cfg.family_budgets
        .insert("mem".to_string(), full_budget(cfg.profile));
    let benches = select(memory::benchmarks(&Arc::new(options)), &args.only)?;
    let chart = match &args.chart {
        None => None,
        Some(path) => {
            let format = chart_format(path)?;
            check_output_path(path, "--chart")?;
            if !benches.iter().any(|b| b.id() == "mem.latency") {
                bail!("--chart draws mem.latency, which --only leaves out");
            }
            Some((path.clone(), format))
        }
    };
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("mem", &cfg, &benches, &cancel, Vec::new())?;
    let mut text = summary_table(&outcome.record, TableFormat::Text);
    let report = memory_report(&outcome.record, TableFormat::Text);
    if !report.is_empty() {
        text.push('\n');
        text.push_str(&report);
    }
    if let Some((path, format)) = &chart {
        write_chart(&outcome.record, path, *format);
    }
    measure::finish(&cfg, &outcome, text)
}

/// Draw the latency chart. A run without latency results (skipped,
/// failed, interrupted) gets a note instead of a chart: the measurements
/// are stored either way, so this is not a reason to fail the run.
fn write_chart(run: &sysgauge_core::RunRecord, path: &Path, format: ChartFormat) {
    let bytes = match format {
        ChartFormat::Svg => latency_chart_svg(run, CHART_WIDTH).map(String::into_bytes),
        ChartFormat::Png => latency_chart_png(run, CHART_WIDTH),
    };
    match bytes.map_err(anyhow::Error::from).and_then(|b| {
        crate::output::bytes_to_file(path, &b)
            .with_context(|| format!("writing the chart to {}", path.display()))
            .map(|_| b.len())
    }) {
        Ok(n) => eprintln!("wrote {} ({n} bytes)", path.display()),
        Err(e) => eprintln!("sysgauge: no chart written: {e:#}"),
    }
}

/// Keep the tests `--only` names (full ids or ids without `mem.`); all
/// when it is empty. An unknown name is an error listing the known ones.
fn select(all: Vec<Box<dyn Benchmark>>, only: &[String]) -> Result<Vec<Box<dyn Benchmark>>> {
    if only.is_empty() {
        return Ok(all);
    }
    let wanted: Vec<String> = only
        .iter()
        .map(|e| {
            let e = e.trim();
            if e.contains('.') {
                e.to_string()
            } else {
                format!("mem.{e}")
            }
        })
        .collect();
    for (w, raw) in wanted.iter().zip(only) {
        if !all.iter().any(|b| b.id() == w) {
            let known: Vec<&str> = all.iter().map(|b| b.id()).collect();
            bail!(
                "--only: unknown test '{}' (known: {})",
                raw.trim(),
                known.join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|b| wanted.iter().any(|w| w == b.id()))
        .collect())
}

/// Validate the family's options; sizes that cannot fit in `available`
/// memory are refused here, before anything runs.
fn mem_options(args: &MemArgs, available: Option<u64>) -> Result<MemOptions> {
    let size = match &args.size {
        None => None,
        Some(s) => {
            let v = parse_size(s).with_context(|| format!("--size {s}"))?;
            validate_size(v).map_err(|e| anyhow::anyhow!("--size {s}: {e}"))?;
            check_memory(
                &format!("--size {s} (three STREAM arrays of {})", Bytes(v)),
                memory_needed(v),
                available,
            )
            .map_err(|e| anyhow::anyhow!("{e}; choose a smaller --size"))?;
            Some(v)
        }
    };
    let block_size = match &args.block_size {
        None => None,
        Some(s) => {
            let v = parse_size(s).with_context(|| format!("--block-size {s}"))?;
            if v < 64 {
                bail!("--block-size {s}: a block must be at least 64 bytes");
            }
            if let Some(size) = size {
                if v > size {
                    bail!("--block-size {s} is larger than --size ({})", Bytes(size));
                }
            }
            Some(v)
        }
    };
    let threads = if args.threads.is_empty() {
        None
    } else {
        let mut v = Vec::new();
        for t in &args.threads {
            let n = parse_count(t).with_context(|| format!("--threads {t}"))?;
            if n == 0 || n > MAX_THREADS {
                bail!("--threads {t}: a thread count must be between 1 and {MAX_THREADS}");
            }
            v.push(n as usize);
        }
        Some(v)
    };
    let working_sets = match &args.working_sets {
        None => None,
        Some(s) => {
            let v = parse_size_list(s).with_context(|| format!("--working-sets {s}"))?;
            for &ws in &v {
                validate_working_set(ws).map_err(|e| anyhow::anyhow!("--working-sets: {e}"))?;
                check_memory(
                    &format!("--working-sets: a working set of {}", Bytes(ws)),
                    ws + ws / 16,
                    available,
                )
                .map_err(|e| anyhow::anyhow!("{e}; choose smaller working sets"))?;
            }
            Some(v)
        }
    };
    Ok(MemOptions {
        scope: Scope::Full,
        size,
        block_size,
        threads,
        working_sets,
        huge_pages: !args.no_huge_pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn parse(extra: &[&str]) -> MemArgs {
        let mut argv = vec!["sysgauge", "mem"];
        argv.extend_from_slice(extra);
        match Cli::parse_from(argv).command {
            Command::Mem(a) => a,
            other => panic!("{other:?}"),
        }
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn options_parse_nice_numbers() {
        let o = mem_options(
            &parse(&[
                "--size",
                "256MiB",
                "--block-size",
                "64Ki",
                "--threads",
                "1,2",
                "--working-sets",
                "4KiB,1M",
                "--no-huge-pages",
            ]),
            Some(8 * GIB),
        )
        .unwrap();
        assert_eq!(o.size, Some(256 << 20));
        assert_eq!(o.block_size, Some(64 << 10));
        assert_eq!(o.threads, Some(vec![1, 2]));
        assert_eq!(o.working_sets, Some(vec![4096, 1_000_000]));
        assert!(!o.huge_pages);
        assert_eq!(o.scope, Scope::Full);
        let d = mem_options(&parse(&[]), None).unwrap();
        assert!(d.size.is_none() && d.huge_pages);
    }

    #[test]
    fn refuses_sizes_beyond_memory() {
        let e = mem_options(&parse(&["--size", "16GiB"]), Some(23 * GIB))
            .err()
            .unwrap_or_else(|| panic!("16 GiB arrays must be refused with 23 GiB free"));
        let msg = format!("{e:#}");
        assert!(
            msg.contains("48 GiB") && msg.contains("23 GiB") && msg.contains("smaller --size"),
            "{msg}"
        );
        assert!(mem_options(&parse(&["--size", "4GiB"]), Some(23 * GIB)).is_ok());
        assert!(mem_options(&parse(&["--working-sets", "64GiB"]), Some(23 * GIB)).is_err());
    }

    #[test]
    fn only_selects_by_id_or_short_name() {
        let all = || memory::benchmarks(&Arc::new(MemOptions::default()));
        let ids =
            |v: Vec<Box<dyn Benchmark>>| v.iter().map(|b| b.id().to_string()).collect::<Vec<_>>();
        assert_eq!(ids(select(all(), &[]).unwrap_or_default()).len(), 9);
        let some = select(all(), &["latency".into(), "mem.memcpy".into()]).unwrap();
        assert_eq!(ids(some), vec!["mem.memcpy", "mem.latency"]);
        let e = select(all(), &["hash.md5".into()])
            .err()
            .map(|e| e.to_string());
        assert!(e.unwrap_or_default().contains("unknown test 'hash.md5'"));
        assert!(select(all(), &["nope".into()]).is_err());
    }

    #[test]
    fn chart_formats() {
        assert_eq!(
            chart_format(Path::new("a.svg")).ok(),
            Some(ChartFormat::Svg)
        );
        assert_eq!(
            chart_format(Path::new("x/B.PNG")).ok(),
            Some(ChartFormat::Png)
        );
        assert!(chart_format(Path::new("a.jpg")).is_err());
        assert!(chart_format(Path::new("a")).is_err());
    }

    #[test]
    fn refuses_bad_values() {
        for bad in [
            vec!["--size", "12Q"],
            vec!["--size", "100"],
            vec!["--size", "4097"],
            vec!["--block-size", "8"],
            vec!["--size", "1MiB", "--block-size", "2MiB"],
            vec!["--threads", "0"],
            vec!["--threads", "1.5"],
            vec!["--working-sets", "4K,,8K"],
            vec!["--working-sets", "100"],
        ] {
            assert!(mem_options(&parse(&bad), Some(8 * GIB)).is_err(), "{bad:?}");
        }
    }
}
