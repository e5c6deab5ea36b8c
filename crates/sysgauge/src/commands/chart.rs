//! `sysgauge chart [RUN|HOST|FILE]… --png FILE | --svg FILE`: one chart of
//! a comparison (the geometric means per family, the ratio of every case,
//! or values by block size), or one of the figures families draw from the
//! machines' own results (`--kind sweep`, `--kind latency`: the registry's
//! `FamilyChart`s, whose names are the kinds'), drawn with the font
//! compiled into the binary.

use crate::cli::MachineArgs;
use crate::config::check_output_path;
use crate::exit::Exit;
use crate::values::{ChartFile, ChartFormat};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use sysgauge_core::RunRecord;
use sysgauge_family::family::FamilyChart;
use sysgauge_report::{chart_png, chart_svg, ChartKind, Figure};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartKindArg {
    /// Geometric mean of ratios per family, one bar per machine.
    Summary,
    /// Ratio of every case to the reference.
    Ratios,
    /// Values by block size, one panel per benchmark (cases with a block_size), one line per machine.
    BlockSize,
    /// The sweep: MB/s against effective iterations N, one chart per program on one scale, one line per machine (`sysgauge sweep` results).
    Sweep,
    /// Memory latency by working set, one line per machine, each machine's caches marked (`mem.latency` results).
    Latency,
    /// The network matrix's 2ping loss from host to host, a heatmap (`fleet net` runs).
    NetLoss,
    /// The network matrix's round trip from host to host, a heatmap (`fleet net` runs).
    NetRtt,
    /// The network matrix's TCP throughput from host to host, a heatmap (`fleet net` runs).
    NetTcp,
    /// The network matrix's UDP packet rate from host to host, a heatmap (`fleet net` runs).
    NetUdp,
}

#[derive(Debug, Args)]
pub struct ChartArgs {
    #[command(flatten)]
    pub machines: MachineArgs,

    /// What to draw.
    #[arg(long, value_enum, default_value_t = ChartKindArg::Summary)]
    pub kind: ChartKindArg,

    /// Write a PNG image.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "svg",
        required_unless_present = "svg"
    )]
    pub png: Option<PathBuf>,

    /// Write an SVG image.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Width in pixels (400 to 4000).
    #[arg(long, value_name = "PX", default_value_t = 1000)]
    pub width: u32,

    /// With --kind sweep: only these programs' charts (`dd`, `sha256sum`, a custom command as the sweep names it), comma-separated.
    #[arg(long, value_name = "NAME[,...]", value_delimiter = ',')]
    pub program: Vec<String>,
}

pub fn run(args: ChartArgs) -> Result<Exit> {
    let (path, format) = match (&args.png, &args.svg) {
        (Some(p), None) => (p.clone(), ChartFormat::Png),
        (None, Some(p)) => (p.clone(), ChartFormat::Svg),
        _ => bail!("give one of --png FILE or --svg FILE"),
    };
    if path.as_os_str() == "-" {
        bail!("--png/--svg need a file name");
    }
    let option = match format {
        ChartFormat::Png => "--png",
        ChartFormat::Svg => "--svg",
    };
    check_output_path(&path, option)?;
    // A name that says the other format would be read as that format.
    if let Ok(named) = path.to_string_lossy().parse::<ChartFile>() {
        if named.format != format {
            let (ours, theirs, other) = match format {
                ChartFormat::Png => ("PNG", "svg", "--svg"),
                ChartFormat::Svg => ("SVG", "png", "--png"),
            };
            bail!(
                "{option} writes {ours} data, but {} ends in .{theirs}; give {other} {0}, or a name ending in .{1}",
                path.display(),
                ours.to_ascii_lowercase()
            );
        }
    }
    if !(400..=4000).contains(&args.width) {
        bail!("--width {} is outside 400..4000 pixels", args.width);
    }
    let bytes = match family_chart(args.kind) {
        Some(chart) => {
            let figure = family_figure(chart, &args.machines, &args.program)?;
            figure_bytes(&figure, format, args.width)?
        }
        None => comparison_chart(&args, format)?,
    };
    crate::output::bytes_to_file(&path, &bytes)
        .with_context(|| format!("writing the chart to {}", path.display()))?;
    eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
    Ok(Exit::Ok)
}

/// A chart of the comparison's rows.
fn comparison_chart(args: &ChartArgs, format: ChartFormat) -> Result<Vec<u8>> {
    if !args.program.is_empty() {
        bail!(
            "--program selects the charts of {}; --kind {} has none to select",
            kinds_with_panels(),
            kind_name(args.kind)
        );
    }
    let family = match args.machines.family.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        _ => bail!("a chart shows one family or all; give at most one --family"),
    };
    let c = super::compare::build(&args.machines)?;
    let kind = match args.kind {
        ChartKindArg::Summary => ChartKind::Summary,
        ChartKindArg::Ratios => ChartKind::Ratios { family },
        ChartKindArg::BlockSize => ChartKind::BlockSize { family },
        other => bail!("--kind {} is not a comparison chart", kind_name(other)),
    };
    Ok(match format {
        ChartFormat::Png => chart_png(&c, &kind, args.width)?,
        ChartFormat::Svg => chart_svg(&c, &kind, args.width)?.into_bytes(),
    })
}

/// The family figure `chart` of the machines `machines` names (one is
/// enough), with only the panels `panels` names when given.
fn family_figure(chart: &FamilyChart, machines: &MachineArgs, panels: &[String]) -> Result<Figure> {
    if !machines.family.is_empty() {
        bail!(
            "--kind {} draws its own family's results; --family does not apply",
            chart.name
        );
    }
    if !panels.is_empty() && chart.panels.is_none() {
        bail!(
            "--program selects the charts of {}; --kind {} has one chart",
            kinds_with_panels(),
            chart.name
        );
    }
    let (loaded, _) = super::compare::load(machines)?;
    if loaded.is_empty() {
        bail!("no machines to draw: name runs, hosts or files (or store runs first)");
    }
    let labelled: Vec<(&str, &RunRecord)> =
        loaded.iter().map(|m| (m.label.as_str(), &m.run)).collect();
    let mut figure = (chart.figure)(&labelled)?;
    if let Some(what) = chart.panels {
        for p in panels {
            if p.trim().is_empty() {
                bail!("--program has an empty entry");
            }
        }
        if let Figure::Lines(lines) = &mut figure {
            lines.select(panels, what)?;
        }
    }
    Ok(figure)
}

/// A figure as the bytes of `format`: `chart --kind`, `sweep --chart` and
/// `mem --chart` all write it this way.
pub fn figure_bytes(figure: &Figure, format: ChartFormat, width: u32) -> Result<Vec<u8>> {
    Ok(match format {
        ChartFormat::Png => figure.png(width)?,
        ChartFormat::Svg => figure.svg(width)?.into_bytes(),
    })
}

/// The name `kind` has on the command line.
fn kind_name(kind: ChartKindArg) -> String {
    kind.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// The family figure a kind draws: the registered chart of the kind's
/// name; `None` for the comparison's own charts.
fn family_chart(kind: ChartKindArg) -> Option<&'static FamilyChart> {
    sysgauge_registry::chart(&kind_name(kind))
}

/// `--kind sweep` (the kinds whose panels `--program` selects).
fn kinds_with_panels() -> String {
    let kinds: Vec<String> = sysgauge_registry::charts()
        .filter(|c| c.panels == Some("program"))
        .map(|c| format!("--kind {}", c.name))
        .collect();
    kinds.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family figure has a `--kind`, and every `--kind` that is not
    /// a comparison chart is a family figure.
    #[test]
    fn kinds_and_family_charts_match() {
        let comparison = [
            ChartKindArg::Summary,
            ChartKindArg::Ratios,
            ChartKindArg::BlockSize,
        ];
        for kind in ChartKindArg::value_variants() {
            let name = kind_name(*kind);
            assert_eq!(
                family_chart(*kind).is_some(),
                !comparison.contains(kind),
                "--kind {name}"
            );
        }
        for chart in sysgauge_registry::charts() {
            assert!(
                ChartKindArg::value_variants()
                    .iter()
                    .any(|k| kind_name(*k) == chart.name),
                "no --kind {}",
                chart.name
            );
        }
        assert_eq!(kind_name(ChartKindArg::BlockSize), "block-size");
        assert_eq!(kinds_with_panels(), "--kind sweep");
    }
}
