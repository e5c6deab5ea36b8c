//! `sysgauge chart [RUN|HOST|FILE]… --png FILE | --svg FILE`: one chart of
//! a comparison (the geometric means per family, the ratio of every case,
//! or values by block size), drawn with the font compiled into the binary.

use crate::cli::{ChartArgs, ChartKindArg};
use crate::config::check_output_path;
use crate::exit::Exit;
use anyhow::{bail, Context, Result};
use sysgauge_report::{chart_png, chart_svg, ChartKind};

pub fn run(args: ChartArgs) -> Result<Exit> {
    let (path, png) = match (&args.png, &args.svg) {
        (Some(p), None) => (p.clone(), true),
        (None, Some(p)) => (p.clone(), false),
        _ => bail!("give one of --png FILE or --svg FILE"),
    };
    if path.as_os_str() == "-" {
        bail!("--png/--svg need a file name");
    }
    check_output_path(&path, if png { "--png" } else { "--svg" })?;
    if !(400..=4000).contains(&args.width) {
        bail!("--width {} is outside 400..4000 pixels", args.width);
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
    };
    let bytes = if png {
        chart_png(&c, &kind, args.width)?
    } else {
        chart_svg(&c, &kind, args.width)?.into_bytes()
    };
    crate::output::bytes_to_file(&path, &bytes)
        .with_context(|| format!("writing the chart to {}", path.display()))?;
    eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
    Ok(Exit::Ok)
}
