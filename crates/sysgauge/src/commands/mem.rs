//! `sysgauge mem`: the whole memory family (copy methods, STREAM kernels,
//! the latency sweep, tmpfs writes) as one stored run, with the family's
//! own tables (mbw-style copy table, STREAM table, latency by working set)
//! after the summary. The same benchmark ids as the `mem` slice of
//! `sysgauge run`, so the two compare.

use crate::cli::{MeasureArgs, SelectArgs};
use crate::config::{check_output_path, MeasureConfig};
use crate::exit::Exit;
use crate::measure;
use crate::values::{thread_list, ChartFile, NiceSize};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::sync::Arc;
use sysgauge_bench::memory::chart::latency_figure;
use sysgauge_bench::memory::{self, full_budget, MemChoices, MemOptions};
use sysgauge_family::family::Family;
use sysgauge_family::util::Count;

#[derive(Debug, Args)]
pub struct MemArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Bytes per array for the copy and STREAM tests, and of the /dev/shm file
    /// (nice numbers: 256MiB, 1G). Default: 4 × the last-level cache, bounded by
    /// the profile and by available memory.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<NiceSize>,

    /// Block size of the block-copy test (default 256KiB).
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<NiceSize>,

    /// Thread counts for the STREAM kernels (default: 1 and all CPUs).
    #[arg(long, value_name = "N[,...]|all", value_delimiter = ',')]
    pub threads: Vec<Count>,

    /// Working sets of the latency test (default: 4KiB doubling to beyond the
    /// last-level cache).
    #[arg(long, value_name = "SIZE[,SIZE...]", value_delimiter = ',')]
    pub working_sets: Vec<NiceSize>,

    /// Forbid transparent huge pages for the buffers (default: ask for them).
    #[arg(long)]
    pub no_huge_pages: bool,

    /// Tests by name or id: memcpy, loop-copy, block-copy, stream-triad,
    /// latency, tmpfs-write, ...
    #[command(flatten)]
    pub select: SelectArgs,

    /// Also draw latency against working-set size, with the cache sizes
    /// marked, into FILE (`.svg` or `.png`).
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub chart: Option<ChartFile>,
}

/// Width in pixels of the `--chart` picture.
const CHART_WIDTH: u32 = 1000;

pub fn run(args: MemArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    let options = mem_options(&args, sysgauge_host::available_memory_bytes())?;
    cfg.family_budgets.insert(
        memory::FAMILY.info().name.to_string(),
        full_budget(cfg.profile),
    );
    let benches = measure::select(memory::benchmarks(&Arc::new(options)), &args.select)?;
    if let Some(chart) = &args.chart {
        check_output_path(&chart.path, "--chart")?;
        if !benches.iter().any(|b| b.id() == memory::LATENCY) {
            bail!(
                "--chart draws {}, which --only/--skip leave out",
                memory::LATENCY
            );
        }
    }
    let cancel = crate::signals::install()?;
    let outcome = measure::execute_family(&memory::FAMILY, &cfg, &benches, &cancel, Vec::new())?;
    let text = measure::family_text(&memory::FAMILY, &outcome.record);
    if let Some(chart) = &args.chart {
        write_chart(&outcome.record, chart);
    }
    measure::finish(&cfg, &outcome, text)
}

/// Draw the latency chart. A run without latency results (skipped,
/// failed, interrupted) gets a note instead of a chart: the measurements
/// are stored either way, so this is not a reason to fail the run.
fn write_chart(run: &sysgauge_core::RunRecord, chart: &ChartFile) {
    let bytes = latency_figure(&[(run.host_name(), run)])
        .map_err(anyhow::Error::from)
        .and_then(|f| super::chart::figure_bytes(&f.into(), chart.format, CHART_WIDTH));
    let path = &chart.path;
    match bytes.and_then(|b| {
        crate::output::bytes_to_file(path, &b)
            .with_context(|| format!("writing the chart to {}", path.display()))
            .map(|_| b.len())
    }) {
        Ok(n) => eprintln!("wrote {} ({n} bytes)", path.display()),
        Err(e) => eprintln!("sysgauge: no chart written: {e:#}"),
    }
}

/// The family's options from the command line; sizes that cannot fit in
/// `available` memory are refused here, before anything runs.
fn mem_options(args: &MemArgs, available: Option<u64>) -> Result<MemOptions> {
    let choices = MemChoices {
        size: args.size.map(|NiceSize(v)| v),
        block_size: args.block_size.map(|NiceSize(v)| v),
        threads: thread_list(&args.threads),
        working_sets: (!args.working_sets.is_empty())
            .then(|| args.working_sets.iter().map(|&NiceSize(v)| v).collect()),
        huge_pages: !args.no_huge_pages,
    };
    MemOptions::full(choices, available).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use sysgauge_bench::memory::Scope;

    fn try_parse(extra: &[&str]) -> Result<MemArgs, clap::Error> {
        let mut argv = vec!["sysgauge", "mem"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv)?.command {
            Command::Mem(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    fn parse(extra: &[&str]) -> MemArgs {
        try_parse(extra).unwrap()
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
        assert_eq!(o.threads, Some(vec![Count::N(1), Count::N(2)]));
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
            let refused = match try_parse(&bad) {
                Err(_) => true,
                Ok(args) => mem_options(&args, Some(8 * GIB)).is_err(),
            };
            assert!(refused, "{bad:?}");
        }
    }
}
