//! `sysgauge sweep`: time the system's hash programs and dd over K copies
//! of a corpus for a few effective iteration counts (the mcspeed method),
//! store the points as a run, print one row per point, the 1-copy vs
//! many-copy contrast and the findings, and optionally write the points as
//! CSV and draw them as a chart (SVG or PNG).
//!
//! Everything the user gave is validated here before anything runs: the
//! program list, nice numbers, N being a multiple of every K and within what
//! the corpus allows, and that the input files fit in the allowed share of
//! free space. When copies were not
//! given, the large default K is halved until it fits (and the run says so).

use crate::cli::{MeasureArgs, SelectArgs};
use crate::config::{check_output_path, check_writable_dir, MeasureConfig};
use crate::exit::Exit;
use crate::values::{ChartFile, NiceCount, NiceSize};
use crate::{measure, output};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sysgauge_bench::sweep::chart::sweep_figure;
use sysgauge_bench::sweep::corpus::DataSpec;
use sysgauge_bench::sweep::input::fit_free_space;
use sysgauge_bench::sweep::program::{check_dd_block, parse_programs, Known, Program};
use sysgauge_bench::sweep::report::{sweep_contrast, sweep_csv, sweep_points, sweep_table};
use sysgauge_bench::sweep::{self, Mode, SweepOptions};
use sysgauge_core::record::{Finding, Status};
use sysgauge_report::TableFormat;

#[derive(Debug, Args)]
#[command(
    after_help = "Counts take nice numbers: 1K = 1000, 1M = 10^6, 1Ki = 1KiB = 1024, 1Mi = 2^20.\n\
                        Example: sysgauge sweep --program sha256sum,dd --copies 1,512 --iterations 512,1Ki,2Ki"
)]
pub struct SweepArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Programs by id or name (`dd`, `sweep.dd`, `custom` for the command
    /// lines), among those --program gives.
    #[command(flatten)]
    pub select: SelectArgs,

    /// Programs to time: b2sum, sha1sum, sha256sum, sha512sum, md5sum, dd (comma-separated),
    /// or one command line 'CMD ARGS' (run without a shell; `{input}` in it stands for the
    /// input file, else the file is appended). Repeat for more. Default: all six.
    #[arg(long = "program", value_name = "NAME[,...]|'CMD ARGS'")]
    pub programs: Vec<String>,

    /// The corpus: a file to use instead of the system dictionary.
    #[arg(long, value_name = "PATH", conflicts_with = "data")]
    pub corpus: Option<PathBuf>,

    /// The corpus: the system dictionary (else a generated 1 MB word list), or seeded
    /// random bytes.
    #[arg(long, value_enum, value_name = "KIND")]
    pub data: Option<DataArg>,

    /// Copies of the corpus in the input file (comma-separated). Default: 1 and a
    /// large count for the profile (512 quick and standard), bounded by free space.
    #[arg(long, value_name = "K[,K...]", value_delimiter = ',')]
    pub copies: Vec<NiceCount>,

    /// Effective iterations N (comma-separated): each point runs the program N/K times
    /// over K copies, so N must be a multiple of every K.
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', conflicts_with_all = ["max", "step"])]
    pub iterations: Vec<NiceCount>,

    /// Largest effective iteration count; with --step: N = STEP, 2×STEP, … ≤ MAX.
    #[arg(long, value_name = "N", requires = "step")]
    pub max: Option<NiceCount>,

    /// Step between effective iteration counts (with --max).
    #[arg(long, value_name = "N", requires = "max")]
    pub step: Option<NiceCount>,

    /// dd's block size (`bs=`, a nice size such as 32KiB; at most 1GiB). Default: none
    /// given, dd's own (512 bytes for GNU dd), as the write-up ran it.
    #[arg(long = "dd-bs", value_name = "SIZE")]
    pub dd_bs: Option<NiceSize>,

    /// Send each run's output to a file in the scratch directory instead of /dev/null.
    #[arg(long)]
    pub to_file: bool,

    /// Directory in which the input file is made (a scratch directory inside it,
    /// removed afterwards). Default: --scratch-dir.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Also write one CSV row per point to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Also draw MB/s against effective iterations, one line per program and copy
    /// count, to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub chart: Option<ChartFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataArg {
    /// /usr/share/dict/words (Debian: wamerican), else a generated word list.
    Words,
    /// Seeded pseudo-random bytes: the same on every machine.
    Random,
}

/// Most points `--max/--step` may make.
const MAX_STEPS: u64 = 1000;

/// The sweep's validated choices.
struct SweepConfig {
    options: SweepOptions,
    csv: Option<PathBuf>,
    chart: Option<ChartFile>,
    findings: Vec<Finding>,
}

/// Width of the sweep chart in pixels.
const CHART_WIDTH: u32 = 1000;

pub fn run(args: SweepArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let sweep = sweep_config(&args, &cfg)?;
    let benches = measure::select(sweep::benchmarks(&Arc::new(sweep.options)), &args.select)?;
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("sweep", &cfg, &benches, &cancel, sweep.findings)?;

    let points = sweep_points(&outcome.record);
    let csv_to_stdout = sweep.csv.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if let Some(path) = &sweep.csv {
        // Written even after Ctrl-C: the finished points are worth keeping.
        output::to_file_or_stdout(path, &sweep_csv(&points))
            .with_context(|| format!("writing the CSV to {}", path.display()))?;
    }
    if let Some(ChartFile { path, format }) = &sweep.chart {
        if points.is_empty() {
            eprintln!(
                "sysgauge: no finished point to chart; {} not written",
                path.display()
            );
        } else {
            let record = &outcome.record;
            let figure = sweep_figure(&[(record.host_name(), record)])?.into();
            let bytes = super::chart::figure_bytes(&figure, *format, CHART_WIDTH)?;
            crate::output::bytes_to_file(path, &bytes)
                .with_context(|| format!("writing the chart to {}", path.display()))?;
        }
    }
    let mut text = String::new();
    if !points.is_empty() {
        text.push_str(&sweep_table(&points, TableFormat::Text));
        let contrast = sweep_contrast(&points);
        if !contrast.is_empty() {
            text.push('\n');
            text.push_str(&contrast);
        }
    }
    for r in &outcome.record.results {
        let what = match &r.status {
            Status::Ok => continue,
            Status::Skipped { reason, .. } => format!("skipped: {reason}"),
            Status::Failed { error } => format!("FAILED: {error}"),
        };
        text.push_str(&format!("{} {}: {what}\n", r.bench_id, r.params));
    }
    measure::finish_to(&cfg, &outcome, text, csv_to_stdout)
}

/// The largest count of --copies and --iterations (i64::MAX; a corpus
/// bounds --iterations further: `sweep::check_iterations`).
const MAX_COUNT: u64 = i64::MAX as u64;

/// Counts given on the command line, each at least 1.
fn counts(raw: &[NiceCount], option: &str) -> Result<Vec<u64>> {
    raw.iter()
        .map(|&NiceCount(n)| {
            if n == 0 {
                bail!("{option}: every count must be at least 1");
            }
            // A count is stored as a signed 64-bit parameter.
            if n > MAX_COUNT {
                bail!("{option} {n} is out of range: give 1 to {MAX_COUNT}");
            }
            Ok(n)
        })
        .collect()
}

/// `--dd-bs`: a block size dd accepts, and dd among the programs.
fn dd_block(raw: Option<NiceSize>, programs: &[Program]) -> Result<Option<u64>> {
    let Some(NiceSize(bytes)) = raw else {
        return Ok(None);
    };
    let bytes = check_dd_block(bytes).map_err(anyhow::Error::msg)?;
    if !programs.contains(&Program::Known(Known::Dd)) {
        bail!(
            "--dd-bs sets dd's block size, but dd is not among the programs; add it (--program dd,...) or drop --dd-bs"
        );
    }
    Ok(Some(bytes))
}

/// `--max M --step S`: S, 2S, … up to M.
fn stepped(NiceCount(max): NiceCount, NiceCount(step): NiceCount) -> Result<Vec<u64>> {
    if step == 0 {
        bail!("--step must be at least 1");
    }
    if step > max {
        bail!("--step {step} is larger than --max {max}");
    }
    if max > MAX_COUNT {
        bail!("--max {max} is out of range: give 1 to {MAX_COUNT}");
    }
    if max / step > MAX_STEPS {
        bail!(
            "--max {max} --step {step} makes {} points; at most {MAX_STEPS} are allowed (use a larger --step)",
            max / step
        );
    }
    Ok((1..=max / step).map(|i| i * step).collect())
}

fn sweep_config(args: &SweepArgs, cfg: &MeasureConfig) -> Result<SweepConfig> {
    let programs: Vec<Program> = if args.programs.is_empty() {
        Known::ALL.into_iter().map(Program::Known).collect()
    } else {
        parse_programs(&args.programs).map_err(anyhow::Error::msg)?
    };
    // A program the user named is meant to run: missing, it is an error
    // before anything runs, not a sweep whose every case is skipped.
    if !args.programs.is_empty() {
        for p in &programs {
            if let Err(sysgauge_core::bench::BenchError::Skip { reason, hint }) =
                p.invocation(Path::new("/dev/null"), None)
            {
                let hint = hint.map(|h| format!("; {h}")).unwrap_or_default();
                bail!("--program {}: {reason}{hint}", p.name());
            }
        }
    }
    let dd_block = dd_block(args.dd_bs, &programs)?;
    let data = match (&args.corpus, args.data) {
        (Some(p), _) => DataSpec::File(p.clone()),
        (None, Some(DataArg::Random)) => DataSpec::Random,
        (None, _) => DataSpec::Words,
    };
    let copies = if args.copies.is_empty() {
        None
    } else {
        Some(counts(&args.copies, "--copies")?)
    };
    let iterations = match (args.iterations.is_empty(), args.max, args.step) {
        (false, _, _) => Some(counts(&args.iterations, "--iterations")?),
        (true, Some(max), Some(step)) => Some(stepped(max, step)?),
        _ => None,
    };
    if let Some(d) = &args.dir {
        check_writable_dir(d, "--dir")?;
    }
    if let Some(c) = &args.csv {
        check_output_path(c, "--csv")?;
    }
    if let Some(c) = &args.chart {
        check_output_path(&c.path, "--chart")?;
    }
    let chart = args.chart.clone();
    let options = SweepOptions {
        programs: Some(programs),
        data,
        copies,
        iterations,
        to_file: args.to_file,
        dir: args.dir.clone(),
        mode: Mode::Sweep,
        dd_block,
        ..SweepOptions::default()
    };
    let dir = args.dir.clone().unwrap_or_else(|| cfg.scratch_base.clone());
    let (options, findings) =
        fit_free_space(options, cfg.profile, &dir).map_err(anyhow::Error::msg)?;
    sweep::check_iterations(&options, cfg.profile).map_err(anyhow::Error::msg)?;
    for f in &findings {
        eprintln!("sysgauge: note: {}", f.message);
    }
    Ok(SweepConfig {
        options,
        csv: args.csv.clone(),
        chart,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_steps() {
        let n = NiceCount;
        assert_eq!(counts(&[n(1), n(512)], "--copies").ok(), Some(vec![1, 512]));
        let e = counts(&[n(1), n(0)], "--copies")
            .err()
            .map(|e| e.to_string());
        assert!(e.unwrap_or_default().contains("at least 1"));
        assert_eq!(
            stepped(n(2048), n(512)).ok(),
            Some(vec![512, 1024, 1536, 2048])
        );
        assert!(stepped(n(10), n(20)).is_err());
        assert!(stepped(n(1_000_000), n(1)).is_err());
        assert!(stepped(n(10), n(0)).is_err());
    }

    #[test]
    fn dd_block_option() {
        let dd = [Program::Known(Known::Dd), Program::Known(Known::Sha256sum)];
        assert_eq!(dd_block(None, &dd).ok(), Some(None));
        assert_eq!(dd_block(Some(NiceSize(32768)), &dd).ok(), Some(Some(32768)));
        let err = |raw: u64, programs: &[Program]| {
            dd_block(Some(NiceSize(raw)), programs)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err(0, &dd).contains("at least 1 byte"));
        assert!(err(2 << 30, &dd).contains("larger than"));
        let no_dd = [Program::Known(Known::B2sum)];
        assert!(err(512, &no_dd).contains("dd is not among the programs"));
    }
}
