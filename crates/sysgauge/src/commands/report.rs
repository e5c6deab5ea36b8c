//! `sysgauge report FILE.html [RUN|HOST|FILE]…`: the comparison as one
//! self-contained HTML file with inline SVG charts (see
//! `sysgauge_report::html`).

use crate::cli::ReportArgs;
use crate::config::check_output_path;
use crate::exit::Exit;
use anyhow::{bail, Context, Result};
use sysgauge_core::record::RunRecord;

pub fn run(args: ReportArgs) -> Result<Exit> {
    let out = &args.output;
    if out.as_os_str() == "-" {
        bail!("the report needs a file name (FILE.html)");
    }
    check_output_path(out, "the report file")?;
    let (c, runs) = super::compare::build_with_runs(&args.machines)?;
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let generated = format!(
        "Generated {} by sysgauge {}.",
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        env!("CARGO_PKG_VERSION")
    );
    let html = sysgauge_report::render_html(&c, &refs, &generated, 1000)?;
    crate::output::bytes_to_file(out, html.as_bytes())
        .with_context(|| format!("writing the report to {}", out.display()))?;
    eprintln!(
        "wrote {} ({} machines, {} compared cases); open it in a browser (file://{})",
        out.display(),
        c.machines.len(),
        c.rows.len(),
        std::fs::canonicalize(out)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| out.display().to_string())
    );
    Ok(Exit::Ok)
}
