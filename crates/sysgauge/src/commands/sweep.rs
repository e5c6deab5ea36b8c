//! `sysgauge sweep`: time the system's hash programs and dd over K copies
//! of a corpus for a few effective iteration counts (the mcspeed method),
//! store the points as a run, print one row per point, the 1-copy vs
//! many-copy contrast and the findings, and optionally write the points as
//! CSV and draw them as a chart (SVG or PNG).
//!
//! Everything the user gave is validated here before anything runs: the
//! program list, nice numbers, N being a multiple of every K, and that the
//! input files fit in the allowed share of free space. When copies were not
//! given, the large default K is halved until it fits (and the run says so).

use crate::cli::{DataArg, SweepArgs};
use crate::config::{check_output_path, check_writable_dir, MeasureConfig};
use crate::exit::Exit;
use crate::{measure, output};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sysgauge_bench::sweep::chart::{sweep_chart_png, sweep_chart_svg};
use sysgauge_bench::sweep::corpus::DataSpec;
use sysgauge_bench::sweep::input::{fits, MAX_FREE_SHARE};
use sysgauge_bench::sweep::program::{parse_programs, Known, Program};
use sysgauge_bench::sweep::report::{sweep_contrast, sweep_csv, sweep_points, sweep_table};
use sysgauge_bench::sweep::{self, grid, Mode, SweepOptions};
use sysgauge_core::record::{Finding, Severity, Status};
use sysgauge_core::size::parse_count;
use sysgauge_core::Profile;
use sysgauge_report::TableFormat;

/// Most points `--max/--step` may make.
const MAX_STEPS: u64 = 1000;

/// The sweep's validated choices.
struct SweepConfig {
    options: SweepOptions,
    csv: Option<PathBuf>,
    chart: Option<(PathBuf, ChartFormat)>,
    findings: Vec<Finding>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChartFormat {
    Svg,
    Png,
}

/// Width of the sweep chart in pixels.
const CHART_WIDTH: u32 = 1000;

fn chart_format(path: &Path) -> Result<ChartFormat> {
    match path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
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

pub fn run(args: SweepArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let sweep = sweep_config(&args, &cfg)?;
    let benches = sweep::benchmarks(&Arc::new(sweep.options));
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("sweep", &cfg, &benches, &cancel, sweep.findings)?;

    let points = sweep_points(&outcome.record);
    let csv_to_stdout = sweep.csv.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if let Some(path) = &sweep.csv {
        // Written even after Ctrl-C: the finished points are worth keeping.
        output::to_file_or_stdout(path, &sweep_csv(&points))
            .with_context(|| format!("writing the CSV to {}", path.display()))?;
    }
    if let Some((path, format)) = &sweep.chart {
        if points.is_empty() {
            eprintln!(
                "sysgauge: no finished point to chart; {} not written",
                path.display()
            );
        } else {
            let bytes = match format {
                ChartFormat::Svg => sweep_chart_svg(&points, CHART_WIDTH).map(String::into_bytes),
                ChartFormat::Png => sweep_chart_png(&points, CHART_WIDTH),
            }?;
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

/// A comma-separated list of nice-number counts, each at least 1.
fn parse_counts(raw: &str, option: &str) -> Result<Vec<u64>> {
    raw.split(',')
        .map(|item| {
            let n = parse_count(item).map_err(|e| anyhow::anyhow!("{option}: {e}"))?;
            if n == 0 {
                bail!("{option}: '{}' must be at least 1", item.trim());
            }
            Ok(n)
        })
        .collect()
}

/// `--max M --step S`: S, 2S, … up to M.
fn stepped(max: &str, step: &str) -> Result<Vec<u64>> {
    let one = |raw: &str, option: &str| -> Result<u64> {
        match parse_counts(raw, option)?[..] {
            [n] => Ok(n),
            _ => bail!("{option} takes one number"),
        }
    };
    let (max, step) = (one(max, "--max")?, one(step, "--step")?);
    if step > max {
        bail!("--step {step} is larger than --max {max}");
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
    let data = match (&args.corpus, args.data) {
        (Some(p), _) => DataSpec::File(p.clone()),
        (None, Some(DataArg::Random)) => DataSpec::Random,
        (None, _) => DataSpec::Words,
    };
    let copies = args
        .copies
        .as_deref()
        .map(|c| parse_counts(c, "--copies"))
        .transpose()?;
    let iterations = match (&args.iterations, &args.max, &args.step) {
        (Some(n), _, _) => Some(parse_counts(n, "--iterations")?),
        (None, Some(max), Some(step)) => Some(stepped(max, step)?),
        _ => None,
    };
    if let Some(d) = &args.dir {
        check_writable_dir(d, "--dir")?;
    }
    if let Some(c) = &args.csv {
        check_output_path(c, "--csv")?;
    }
    let chart = match &args.chart {
        Some(p) => {
            check_output_path(p, "--chart")?;
            Some((p.clone(), chart_format(p)?))
        }
        None => None,
    };
    let options = SweepOptions {
        programs: Some(programs),
        data,
        copies,
        iterations,
        to_file: args.to_file,
        dir: args.dir.clone(),
        mode: Mode::Sweep,
        ..SweepOptions::default()
    };
    let dir = args.dir.clone().unwrap_or_else(|| cfg.scratch_base.clone());
    let (options, findings) = fit_free_space(options, cfg.profile, &dir)?;
    Ok(SweepConfig {
        options,
        csv: args.csv.clone(),
        chart,
        findings,
    })
}

/// Validate the grid, and make sure every input file fits together in the
/// allowed share of free space in `dir`: given copies must fit (else a
/// clear error); default copies are halved until they do.
fn fit_free_space(
    mut options: SweepOptions,
    profile: Profile,
    dir: &Path,
) -> Result<(SweepOptions, Vec<Finding>)> {
    let dicts: Vec<&Path> = options.dictionaries.iter().map(PathBuf::as_path).collect();
    let corpus_len = options
        .data
        .expected_len(&dicts)
        .map_err(anyhow::Error::msg)?;
    let (copies, _) = grid(
        profile,
        options.mode,
        options.copies.as_deref(),
        options.iterations.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    let need = |copies: &[u64]| -> Option<u64> {
        copies
            .iter()
            .try_fold(0u64, |s, &k| s.checked_add(k.checked_mul(corpus_len)?))
    };
    let Some(free) = sysgauge_host::free_space_bytes(dir) else {
        return Ok((options, Vec::new()));
    };
    let fits_all = |c: &[u64]| need(c).is_some_and(|n| fits(n, free));
    if fits_all(&copies) {
        return Ok((options, Vec::new()));
    }
    let explain = |c: &[u64]| {
        format!(
            "the input files ({} copies of a {corpus_len}-byte corpus) need {:.1} MB, but only {:.1} MB is free in {} and a sweep takes at most {:.0} % of it",
            c.iter().map(u64::to_string).collect::<Vec<_>>().join(" + "),
            need(c).map(|n| n as f64 / 1e6).unwrap_or(f64::INFINITY),
            free as f64 / 1e6,
            dir.display(),
            MAX_FREE_SHARE * 100.0
        )
    };
    if options.copies.is_some() {
        bail!(
            "{}; use fewer --copies or point --dir at a file system with more room",
            explain(&copies)
        );
    }
    // Default copies: halve the largest until everything fits; the default
    // iterations follow the new copies (N stays a multiple of every K).
    let mut reduced = copies.clone();
    while !fits_all(&reduced) {
        let Some(max) = reduced.iter().copied().max().filter(|&m| m > 1) else {
            bail!(
                "{}; free some space or point --dir elsewhere",
                explain(&reduced)
            );
        };
        for k in reduced.iter_mut().filter(|k| **k == max) {
            *k = max / 2;
        }
        reduced.sort_unstable();
        reduced.dedup();
    }
    let finding = Finding::new(
        "sweep-copies-reduced",
        Severity::Info,
        format!(
            "{}: the sweep uses {} copies instead",
            explain(&copies),
            reduced
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .with_remedy("point --dir at a file system with more free space for the full sweep");
    eprintln!("sysgauge: note: {}", finding.message);
    options.copies = Some(reduced);
    Ok((options, vec![finding]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_steps() {
        assert_eq!(parse_counts("1,512", "--copies").ok(), Some(vec![1, 512]));
        assert_eq!(parse_counts("1Ki,2K", "--x").ok(), Some(vec![1024, 2000]));
        let e = parse_counts("1,0", "--copies").err().map(|e| e.to_string());
        assert!(e.unwrap_or_default().contains("at least 1"));
        let e = parse_counts("3Q", "--copies").err().map(|e| e.to_string());
        assert!(e
            .unwrap_or_default()
            .contains("--copies: '3Q': unknown suffix"));
        assert!(parse_counts("1.5K", "--copies").is_err());
        assert!(parse_counts("1.5", "--copies").is_err());
        assert!(parse_counts("-4", "--copies").is_err());
        assert!(parse_counts("1Y", "--copies").is_err());
        assert_eq!(
            stepped("2Ki", "512").ok(),
            Some(vec![512, 1024, 1536, 2048])
        );
        assert!(stepped("10", "20").is_err());
        assert!(stepped("1M", "1").is_err());
        assert!(stepped("10,20", "5").is_err());
    }

    #[test]
    fn free_space_bounds_default_copies_only() {
        let dir = tempfile::tempdir().unwrap();
        let free = sysgauge_host::free_space_bytes(dir.path()).unwrap_or(0);
        assert!(free > 0);
        // A corpus so large that 64 copies cannot fit but one can.
        let corpus = (free as f64 * MAX_FREE_SHARE / 50.0) as u64;
        let file = dir.path().join("corpus");
        let f = std::fs::File::create(&file).unwrap();
        f.set_len(corpus).unwrap();
        let opts = SweepOptions {
            data: DataSpec::File(file.clone()),
            mode: Mode::Sweep,
            ..SweepOptions::default()
        };
        let (o, findings) = fit_free_space(opts.clone(), Profile::Quick, dir.path()).unwrap();
        let copies = o.copies.unwrap_or_default();
        assert_eq!(copies.first(), Some(&1));
        assert!(copies.iter().all(|&k| k < 64), "{copies:?}");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, "sweep-copies-reduced");
        // Given copies that do not fit are refused, naming the problem.
        let given = SweepOptions {
            copies: Some(vec![1, 64]),
            ..opts
        };
        let e = fit_free_space(given, Profile::Quick, dir.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("use fewer --copies"), "{e}");
        // And a grid that cannot work is refused before anything else.
        let bad = SweepOptions {
            copies: Some(vec![3]),
            iterations: Some(vec![4]),
            mode: Mode::Sweep,
            ..SweepOptions::default()
        };
        let e = fit_free_space(bad, Profile::Quick, dir.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("not a multiple"), "{e}");
    }
}
