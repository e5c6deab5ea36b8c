//! `sysgauge report FILE.html [RUN|HOST|FILE]…`: the comparison as one
//! self-contained HTML file with inline SVG charts (see
//! `sysgauge_report::html`), and a section for each family figure (the
//! registry's `FamilyChart`s) that some machine has the data for.

use crate::cli::{GroupArgs, MachineArgs};
use crate::config::check_output_path;
use crate::exit::Exit;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use sysgauge_core::record::RunRecord;
use sysgauge_report::{ChartError, ReportFigure};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The HTML file to write.
    #[arg(value_name = "FILE.html")]
    pub output: PathBuf,

    #[command(flatten)]
    pub machines: MachineArgs,

    #[command(flatten)]
    pub groups: GroupArgs,

    /// Open the per-family lists of the cases some machines lack (they
    /// are collapsed by default).
    #[arg(long, short)]
    pub verbose: bool,
}

pub fn run(args: ReportArgs) -> Result<Exit> {
    let out = &args.output;
    if out.as_os_str() == "-" {
        bail!("the report needs a file name (FILE.html)");
    }
    check_output_path(out, "the report file")?;
    let (c, runs) = super::compare::build_with_runs(&args.machines, false)?;
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let generated = format!(
        "Generated {} by sysgauge {}.",
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        env!("CARGO_PKG_VERSION")
    );
    let figures = family_figures(&c, &refs, &args.machines.family)?;
    let groups = super::compare::grouped(&c, &runs, &args.groups);
    let html = sysgauge_report::render_html_with(
        &c,
        &refs,
        &figures,
        groups.as_ref(),
        &generated,
        1000,
        sysgauge_report::RenderOptions {
            verbose: args.verbose,
        },
    )?;
    crate::output::bytes_to_file(out, html.as_bytes())
        .with_context(|| format!("writing the report to {}", out.display()))?;
    eprintln!(
        "wrote {} ({} machines, {} compared cases); open it in a browser (file://{})",
        out.display(),
        c.machines.len(),
        c.compared_cases(),
        std::fs::canonicalize(out)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| out.display().to_string())
    );
    Ok(Exit::Ok)
}

/// Every family figure some machine has the data for (of the `families`
/// named, when some are), with the machines labelled as the comparison
/// labels them.
fn family_figures(
    c: &sysgauge_compare::Comparison,
    runs: &[&RunRecord],
    families: &[String],
) -> Result<Vec<ReportFigure>> {
    let labelled: Vec<(&str, &RunRecord)> = c
        .machines
        .iter()
        .map(|m| m.label.as_str())
        .zip(runs.iter().copied())
        .collect();
    let mut out = Vec::new();
    let named = |name: &str| families.is_empty() || families.iter().any(|n| n == name);
    for chart in sysgauge_registry::registered()
        .filter(|f| named(f.info().name))
        .flat_map(|f| f.charts())
    {
        match (chart.figure)(&labelled) {
            Ok(figure) => out.push(ReportFigure {
                name: chart.name.to_string(),
                heading: chart.heading.to_string(),
                caption: chart.caption.to_string(),
                figure,
            }),
            Err(ChartError::NoData(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}
