//! `sysgauge startup CMD [--vs CMD …]`: time commands from start to exit
//! over many runs, the first being the baseline, and count the shared
//! libraries each loads. Every command is run once first: one that fails
//! stops everything with a clear message (unless --ignore-failure), before
//! anything is measured or stored.

use crate::cli::MeasureArgs;
use crate::config::{check_output_path, MeasureConfig};
use crate::exit::Exit;
use crate::values::Seconds;
use crate::{measure, output};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use sysgauge_bench::startup::{preflight, prepare, StartupOptions};
use sysgauge_report::TableFormat;

#[derive(Debug, Args)]
pub struct StartupArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// The baseline command, e.g. "perl -e ''" (split like a shell would,
    /// then executed directly unless --shell).
    #[arg(value_name = "CMD")]
    pub command: String,

    /// A command to compare with the baseline; repeat for more.
    #[arg(long = "vs", value_name = "CMD")]
    pub vs: Vec<String>,

    /// Run each command through `sh -c` instead of executing it directly.
    #[arg(long)]
    pub shell: bool,

    /// Minimum number of timed runs per command.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub runs: u64,

    /// Minimum total time of the timed runs per command, in seconds
    /// (`3`, `0.5`, `500ms`); default: the profile's (3 s for quick).
    #[arg(long, value_name = "SECONDS")]
    pub min_time: Option<Seconds>,

    /// Maximum number of timed runs per command (stops even if --min-time is not reached).
    #[arg(long, value_name = "N")]
    pub max_runs: Option<u64>,

    /// Keep timing commands that exit with a non-zero status.
    #[arg(long)]
    pub ignore_failure: bool,

    /// Do not count the shared libraries each command loads.
    #[arg(long)]
    pub no_libraries: bool,

    /// Also write the timings in the startup export format (docs/output-schema.md).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

pub fn options_from(args: &StartupArgs) -> Result<StartupOptions> {
    let mut commands = vec![args.command.clone()];
    for v in &args.vs {
        if commands.contains(v) {
            bail!("--vs {v:?} repeats a command already given");
        }
        commands.push(v.clone());
    }
    if args.runs == 0 || args.runs > 10_000_000 {
        bail!("--runs must be between 1 and 10000000, not {}", args.runs);
    }
    if let Some(m) = args.max_runs {
        if m < args.runs {
            bail!("--max-runs {m} is below --runs {}", args.runs);
        }
    }
    let min_time = args.min_time.map(|Seconds(d)| d);
    for c in &commands {
        prepare(c, args.shell).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(StartupOptions {
        commands,
        shell: args.shell,
        min_runs: args.runs,
        min_time,
        max_runs: args.max_runs,
        ignore_failure: args.ignore_failure,
        skip_libraries: args.no_libraries,
    })
}

pub fn run(args: StartupArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    if let Some(p) = &args.export_json {
        check_output_path(p, "--export-json")?;
        let stdout = |p: &std::path::Path| p.as_os_str() == "-";
        if stdout(p) && cfg.json.as_deref().is_some_and(stdout) {
            bail!("--json - and --export-json - cannot both write to standard output; give one of them a file");
        }
    }
    let startup = options_from(&args)?;
    if !startup.ignore_failure {
        for c in &startup.commands {
            if let Err(e) = preflight(c, startup.shell) {
                eprintln!("sysgauge: error: {e}");
                return Ok(Exit::BenchFailed);
            }
        }
    }
    let selected = sysgauge_bench::startup::benchmarks(&Arc::new(startup));
    let cancel = crate::signals::install()?;
    let outcome = measure::execute_family(
        &sysgauge_bench::startup::FAMILY,
        &cfg,
        &selected,
        &cancel,
        Vec::new(),
    )?;
    if let Some(p) = &args.export_json {
        let text = sysgauge_bench::startup::report::startup_export_json(&outcome.record);
        output::to_file_or_stdout(p, &text)
            .with_context(|| format!("writing the startup export to {}", p.display()))?;
    }
    let text = sysgauge_bench::startup::report::startup_report(&outcome.record, TableFormat::Text);
    let to_stderr = args
        .export_json
        .as_deref()
        .is_some_and(|p| p.as_os_str() == "-");
    measure::finish_to(&cfg, &outcome, text, to_stderr)
}
