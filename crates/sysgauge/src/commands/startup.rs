//! `sysgauge startup CMD [--vs CMD …]`: time commands from start to exit
//! over many runs, the first being the baseline, and count the shared
//! libraries each loads. Every command is run once first: one that fails
//! stops everything with a clear message (unless --ignore-failure), before
//! anything is measured or stored. The signal handler is installed before
//! that first run: a signal during it kills the command's process group and
//! stores the run `interrupted` with nothing measured, as a signal during
//! the timed runs does.

use crate::cli::MeasureArgs;
use crate::config::{check_output_path, MeasureConfig};
use crate::exit::Exit;
use crate::exit::ERROR_PREFIX;
use crate::values::Seconds;
use crate::{measure, output};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use sysgauge_bench::startup::{
    preflight, preflight_prepare, prepare, PreflightError, StartupOptions,
};
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

    /// A shell command run before every run, warm-up and timed, and not
    /// timed (e.g. 'sync; echo 3 > /proc/sys/vm/drop_caches'): once for
    /// every command, or once per command in the order given.
    #[arg(long, value_name = "CMD")]
    pub prepare: Vec<String>,

    /// Time the commands once per whole number from MIN to MAX: `{NAME}` in a
    /// command (and in --prepare) becomes the value.
    #[arg(long, num_args = 3, value_names = ["NAME", "MIN", "MAX"], allow_negative_numbers = true)]
    pub parameter_scan: Vec<String>,

    /// The step of --parameter-scan.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub parameter_step_size: i64,

    /// Time the commands once per value of the comma-separated list:
    /// `{NAME}` in a command (and in --prepare) becomes the value; repeat for
    /// more parameters (every combination).
    #[arg(long, num_args = 2, value_names = ["NAME", "VALUES"])]
    pub parameter_list: Vec<String>,
}

/// The most commands a parameter scan may make.
const MAX_EXPANDED: usize = 1000;

/// The parameters and their values, in the order given.
fn parameters(args: &StartupArgs) -> Result<Vec<(String, Vec<String>)>> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let check_name = |name: &str, option: &str| -> Result<()> {
        let ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            bail!("{option} {name:?}: a parameter name is letters, digits and _ (e.g. threads)");
        }
        Ok(())
    };
    if args.parameter_scan.len() > 3 {
        bail!("--parameter-scan can be given once; use --parameter-list for more parameters");
    }
    if let [name, min, max] = &args.parameter_scan[..] {
        check_name(name, "--parameter-scan")?;
        let int = |v: &str, what: &str| -> Result<i64> {
            v.trim().parse().map_err(|_| {
                anyhow::anyhow!("--parameter-scan {name}: {what} {v:?} is not a whole number")
            })
        };
        let (lo, hi, step) = (int(min, "MIN")?, int(max, "MAX")?, args.parameter_step_size);
        if step <= 0 {
            bail!("--parameter-step-size must be at least 1, not {step}");
        }
        if lo > hi {
            bail!("--parameter-scan {name} {lo} {hi}: MIN is above MAX");
        }
        let count = (hi - lo) / step + 1;
        if count > MAX_EXPANDED as i64 {
            bail!("--parameter-scan {name} {lo} {hi} makes {count} values, more than {MAX_EXPANDED}; use a larger --parameter-step-size");
        }
        let values = (0..count).map(|i| (lo + i * step).to_string()).collect();
        out.push((name.clone(), values));
    } else if args.parameter_step_size != 1 {
        bail!("--parameter-step-size is the step of --parameter-scan, which is not given");
    }
    for pair in args.parameter_list.chunks(2) {
        let [name, list] = pair else {
            bail!("--parameter-list takes a NAME and a comma-separated list of values");
        };
        check_name(name, "--parameter-list")?;
        if out.iter().any(|(n, _)| n == name) {
            bail!("parameter {name} is given twice");
        }
        let values: Vec<String> = list.split(',').map(str::to_string).collect();
        if values.iter().any(|v| v.is_empty()) {
            bail!(
                "--parameter-list {name} {list:?}: an empty value (two commas, or one at an end)"
            );
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                bail!("--parameter-list {name}: {v:?} is listed twice");
            }
        }
        out.push((name.clone(), values));
    }
    Ok(out)
}

/// `{NAME}` replaced by each value, every combination, each command in
/// turn; the parameters a command uses recorded beside it. A command that
/// uses no parameter is timed once.
#[allow(clippy::type_complexity)]
fn expand(
    commands: &[String],
    prepares: &[Option<String>],
    params: &[(String, Vec<String>)],
) -> Result<Vec<(String, Option<String>, Vec<(String, String)>)>> {
    for (name, _) in params {
        let token = format!("{{{name}}}");
        let used = commands.iter().any(|c| c.contains(&token))
            || prepares.iter().flatten().any(|p| p.contains(&token));
        if !used {
            bail!("parameter {name}: no command contains {token}");
        }
    }
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, values) in params {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((name.clone(), v.clone()));
                    c
                })
            })
            .collect();
        if combos.len() > MAX_EXPANDED {
            bail!("the parameters make more than {MAX_EXPANDED} combinations");
        }
    }
    let mut out: Vec<(String, Option<String>, Vec<(String, String)>)> = Vec::new();
    for (cmd, prep) in commands.iter().zip(prepares) {
        for combo in &combos {
            let fill = |text: &str| {
                combo.iter().fold(text.to_string(), |t, (n, v)| {
                    t.replace(&format!("{{{n}}}"), v)
                })
            };
            let used: Vec<(String, String)> = combo
                .iter()
                .filter(|(n, _)| {
                    let token = format!("{{{n}}}");
                    cmd.contains(&token) || prep.as_deref().is_some_and(|p| p.contains(&token))
                })
                .cloned()
                .collect();
            let text = fill(cmd);
            if out.iter().any(|(c, _, _)| *c == text) {
                continue;
            }
            out.push((text, prep.as_deref().map(fill), used));
        }
    }
    if out.len() > MAX_EXPANDED {
        bail!(
            "the parameters make {} commands, more than {MAX_EXPANDED}",
            out.len()
        );
    }
    Ok(out)
}

pub fn options_from(args: &StartupArgs) -> Result<StartupOptions> {
    let mut commands = vec![args.command.clone()];
    for v in &args.vs {
        if commands.contains(v) {
            bail!("--vs {v:?} repeats a command already given");
        }
        commands.push(v.clone());
    }
    crate::values::within("--runs", args.runs, 1, 10_000_000, "")?;
    if let Some(m) = args.max_runs {
        if m < args.runs {
            bail!("--max-runs {m} is below --runs {}", args.runs);
        }
    }
    let min_time = args.min_time.map(|Seconds(d)| d);
    let prepares: Vec<Option<String>> = match args.prepare.len() {
        0 => vec![None; commands.len()],
        1 => vec![Some(args.prepare[0].clone()); commands.len()],
        n if n == commands.len() => args.prepare.iter().cloned().map(Some).collect(),
        n => bail!(
            "--prepare is given {n} times for {} commands: give it once (for every command) or once per command",
            commands.len()
        ),
    };
    if prepares.iter().flatten().any(|p| p.trim().is_empty()) {
        bail!("--prepare is empty");
    }
    let expanded = expand(&commands, &prepares, &parameters(args)?)?;
    let mut prepare_of = std::collections::BTreeMap::new();
    let mut parameters_of = std::collections::BTreeMap::new();
    let mut commands = Vec::new();
    for (c, p, used) in expanded {
        prepare(&c, args.shell).map_err(|e| anyhow::anyhow!("{e}"))?;
        if let Some(p) = p {
            prepare(&p, true).map_err(|e| anyhow::anyhow!("--prepare: {e}"))?;
            prepare_of.insert(c.clone(), p);
        }
        if !used.is_empty() {
            parameters_of.insert(c.clone(), used);
        }
        commands.push(c);
    }
    Ok(StartupOptions {
        prepare: prepare_of,
        parameters: parameters_of,
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
    if let Some(n) = args.measure.repetitions {
        bail!("--repetitions {n} does not apply to startup: one run of a command is one sample; give --runs N or --min-time SECONDS for more");
    }
    let cfg = MeasureConfig::from_args(&args.measure)?;
    if let Some(p) = &args.export_json {
        check_output_path(p, "--export-json")?;
        let stdout = |p: &std::path::Path| p.as_os_str() == "-";
        if stdout(p) && cfg.json.as_deref().is_some_and(stdout) {
            bail!("--json - and --export-json - cannot both write to standard output; give one of them a file");
        }
    }
    let startup = options_from(&args)?;
    // Before the first run of a command: it may take long, and a signal
    // must find a handler (which kills the command and stores the run).
    let cancel = crate::signals::install()?;
    for c in &startup.commands {
        // The command may need what its --prepare makes.
        let prepared = match startup.prepare.get(c) {
            Some(p) => preflight_prepare(p, &cancel),
            None => Ok(()),
        };
        let checked = prepared.and_then(|()| match startup.ignore_failure {
            true => Ok(()),
            false => preflight(c, startup.shell, &cancel),
        });
        match checked {
            Ok(()) => {}
            // The runner sees the cancelled token and stores the run
            // `interrupted`, with nothing measured.
            Err(PreflightError::Cancelled) => break,
            Err(PreflightError::Failed(e)) => {
                eprintln!("{ERROR_PREFIX}{e}");
                return Ok(Exit::BenchFailed);
            }
        }
    }
    let selected = sysgauge_bench::startup::benchmarks(&Arc::new(startup));
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: StartupArgs,
    }

    fn options(args: &[&str]) -> Result<StartupOptions> {
        let t = T::try_parse_from(std::iter::once("startup").chain(args.iter().copied()))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        options_from(&t.a)
    }

    #[test]
    fn a_scan_and_lists_make_one_command_per_combination() {
        let o = options(&[
            "sh -c 'exit {n}'",
            "--parameter-scan",
            "n",
            "0",
            "4",
            "--parameter-step-size",
            "2",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.commands,
            ["sh -c 'exit 0'", "sh -c 'exit 2'", "sh -c 'exit 4'"]
        );
        assert_eq!(
            o.parameters["sh -c 'exit 2'"],
            [("n".to_string(), "2".to_string())]
        );
        // Two lists: every combination, each command in turn; a command
        // without the parameter once; --prepare filled in too.
        let o = options(&[
            "echo {a}{b}",
            "--vs",
            "true",
            "--parameter-list",
            "a",
            "x,y",
            "--parameter-list",
            "b",
            "1,2",
            "--prepare",
            "echo prep-{a}",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.commands,
            ["echo x1", "echo x2", "echo y1", "echo y2", "true"]
        );
        assert_eq!(o.prepare["echo y2"], "echo prep-y");
        assert_eq!(o.prepare["true"], "echo prep-{a}".replace("{a}", "x"));
        // A command is timed once per distinct text: `true` with the
        // first value its --prepare uses.
        assert_eq!(o.parameters["true"], [("a".to_string(), "x".to_string())]);
        let o = options(&["echo {n}", "--vs", "true", "--parameter-list", "n", "1,2"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!o.parameters.contains_key("true"));
        // One --prepare per command.
        let o = options(&[
            "true",
            "--vs",
            "false",
            "--prepare",
            "echo 1",
            "--prepare",
            "echo 2",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.prepare["false"], "echo 2");
    }

    #[test]
    fn bad_parameters_are_refused_with_the_reason() {
        for (args, says) in [
            (
                &["true", "--parameter-scan", "n", "1", "3"][..],
                "no command contains {n}",
            ),
            (
                &["echo {n}", "--parameter-scan", "n", "3", "1"],
                "MIN is above MAX",
            ),
            (
                &["echo {n}", "--parameter-scan", "n", "1", "x"],
                "not a whole number",
            ),
            (
                &[
                    "echo {n}",
                    "--parameter-scan",
                    "n",
                    "1",
                    "9",
                    "--parameter-step-size",
                    "0",
                ],
                "at least 1",
            ),
            (
                &["echo {n}", "--parameter-scan", "n", "0", "100000"],
                "more than 1000",
            ),
            (
                &["echo {n}", "--parameter-list", "n", "a,,b"],
                "an empty value",
            ),
            (
                &["echo {n}", "--parameter-list", "n", "a,a"],
                "listed twice",
            ),
            (
                &[
                    "echo {n}",
                    "--parameter-list",
                    "n",
                    "a",
                    "--parameter-list",
                    "n",
                    "b",
                ],
                "given twice",
            ),
            (
                &["echo {n-x}", "--parameter-list", "n-x", "a"],
                "letters, digits",
            ),
            (&["true", "--parameter-step-size", "2"], "not given"),
            (
                &[
                    "true",
                    "--vs",
                    "false",
                    "--vs",
                    "echo",
                    "--prepare",
                    "a",
                    "--prepare",
                    "b",
                ],
                "given 2 times for 3",
            ),
            (&["true", "--prepare", " "], "--prepare is empty"),
        ] {
            let e = options(args)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says), "{args:?}: {e}");
        }
    }
}
