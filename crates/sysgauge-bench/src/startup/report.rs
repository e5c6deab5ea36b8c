//! Renderings of the `startup` family from its records: the timing table
//! (mean ± stddev, median, min…max, user, system, runs, outliers, shared
//! libraries), the comparison of every command with the first (the
//! baseline) as "+78 %" with a 95 % bootstrap interval, and the
//! `--export-json` document (docs/output-schema.md, "startup export").

use serde::{Deserialize, Serialize};
use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_report::format::format_value;
use sysgauge_report::table::{Table, TableFormat};
use sysgauge_stats::{mad_outliers, ratio_ci};

/// Version of the `--export-json` document.
pub const STARTUP_EXPORT_VERSION: u32 = 1;

/// Seed of the bootstrap, fixed so the same samples always give the same
/// interval.
const SEED: u64 = 0x5eed_57a7;

/// Scaled-MAD distance beyond which a run is an outlier (as the benchmark
/// flags them).
const OUTLIER_K: f64 = 3.5;

/// The `--export-json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartupExport {
    pub schema_version: u32,
    pub run_id: String,
    pub host: String,
    /// One entry per command, baseline first.
    pub results: Vec<StartupExportCommand>,
}

/// One command's timings. Times are in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartupExportCommand {
    pub command: String,
    pub shell: bool,
    /// `ok`, `skipped` or `failed`.
    pub status: String,
    /// Why it was not measured (skipped or failed), else null.
    pub error: Option<String>,
    pub runs: usize,
    pub failed_runs: u64,
    pub mean: f64,
    pub stddev: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Mean user and system CPU time of the command per run.
    pub user: f64,
    pub system: f64,
    /// Wall time of every timed run, in order.
    pub times: Vec<f64>,
    /// Indexes into `times` of the runs flagged as outliers.
    pub outliers: Vec<usize>,
    pub libraries: Option<u64>,
    /// `maps-at-exit` or `loader-trace`; null when not counted.
    pub libraries_method: Option<String>,
    pub library_paths: Vec<String>,
    /// Against the baseline (null for the baseline itself).
    pub relative: Option<Relative>,
    /// The shell command run before every run (`--prepare`), else null.
    #[serde(default)]
    pub prepare: Option<String>,
    /// The parameter values this command was made with (`--parameter-scan`,
    /// `--parameter-list`), by name, as hyperfine's export has them.
    #[serde(default)]
    pub parameters: std::collections::BTreeMap<String, String>,
}

/// A command against the baseline: ratio of medians with its 95 %
/// bootstrap interval, and the differences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Relative {
    pub baseline: String,
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// Difference of the medians, seconds.
    pub median_delta: f64,
    pub libraries_delta: Option<i64>,
    /// Libraries this command loads that the baseline does not.
    pub added_libraries: Vec<String>,
}

/// What the renderers need from one startup result.
struct Cmd<'a> {
    r: &'a ResultRecord,
    command: &'a str,
    shell: bool,
}

impl Cmd<'_> {
    fn samples(&self, metric: &str) -> Option<&[f64]> {
        self.r
            .metrics
            .iter()
            .find(|m| m.name == metric)
            .map(|m| m.samples.as_slice())
    }
    fn metric(&self, metric: &str) -> Option<&sysgauge_core::Metric> {
        self.r.metrics.iter().find(|m| m.name == metric)
    }
    fn libraries(&self) -> Option<u64> {
        self.metric("libraries").map(|m| m.value() as u64)
    }
    fn library_paths(&self) -> Vec<String> {
        self.r
            .details
            .get_str("library_paths")
            .map(|s| {
                s.lines()
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn commands(run: &RunRecord) -> Vec<Cmd<'_>> {
    run.results
        .iter()
        .filter(|r| r.family == "startup")
        .map(|r| Cmd {
            r,
            command: r.params.get_str("command").unwrap_or("?"),
            shell: r.params.get_bool("shell").unwrap_or(false),
        })
        .collect()
}

fn relative(base: &Cmd, c: &Cmd) -> Option<Relative> {
    let a = c.samples("wall")?;
    let b = base.samples("wall")?;
    let ci = ratio_ci(a, b, SEED)?;
    let base_paths = base.library_paths();
    Some(Relative {
        baseline: base.command.to_string(),
        ratio: ci.estimate,
        ratio_low: ci.low,
        ratio_high: ci.high,
        median_delta: (sysgauge_stats::median(a) - sysgauge_stats::median(b)) / 1e3,
        libraries_delta: match (c.libraries(), base.libraries()) {
            (Some(x), Some(y)) => Some(x as i64 - y as i64),
            _ => None,
        },
        added_libraries: c
            .library_paths()
            .into_iter()
            .filter(|p| !base_paths.contains(p))
            .collect(),
    })
}

fn percent(ratio: f64) -> String {
    format!("{:+.1} %", (ratio - 1.0) * 100.0)
}

/// One row per command.
pub fn startup_table(run: &RunRecord) -> Table {
    let cmds = commands(run);
    let mut t = Table::columns("command, >mean ms, >± σ, >median, >min, >max, >user, >system, >runs, >outliers, >libs, vs baseline (95 % CI)");
    for (i, c) in cmds.iter().enumerate() {
        let label = if c.shell {
            format!("sh -c {}", c.command)
        } else {
            c.command.to_string()
        };
        let Some(w) = c.metric("wall").filter(|_| c.r.is_ok()) else {
            let why = match &c.r.status {
                Status::Skipped { reason, .. } => format!("skipped: {reason}"),
                Status::Failed { error } => format!("FAILED: {error}"),
                Status::Ok => "no measurement".into(),
            };
            t.push_note(vec![label], why);
            continue;
        };
        let s = &w.summary;
        let mean_of = |m: &str| c.metric(m).map(|x| format_value(x.summary.mean));
        let vs = if i == 0 {
            "baseline".to_string()
        } else {
            match cmds.first().and_then(|b| relative(b, c)) {
                Some(r) => format!(
                    "{} [{}, {}]",
                    percent(r.ratio),
                    percent(r.ratio_low),
                    percent(r.ratio_high)
                ),
                None => "-".into(),
            }
        };
        t.push(vec![
            label,
            format_value(s.mean),
            format_value(s.stddev),
            format_value(s.median),
            format_value(s.min),
            format_value(s.max),
            mean_of("user").unwrap_or_default(),
            mean_of("system").unwrap_or_default(),
            s.n.to_string(),
            mad_outliers(&w.samples, OUTLIER_K).len().to_string(),
            c.libraries()
                .map(|n| n.to_string())
                .unwrap_or_else(|| "?".into()),
            vs,
        ]);
    }
    t
}

/// "X adds N libraries and M ms" lines for every non-baseline command.
pub fn startup_summary(run: &RunRecord) -> String {
    let cmds = commands(run);
    let Some(base) = cmds.first() else {
        return String::new();
    };
    let mut out = String::new();
    for c in cmds.iter().skip(1) {
        let Some(r) = relative(base, c) else {
            continue;
        };
        let libs = match r.libraries_delta {
            Some(d) => format!("{d:+} shared libraries"),
            None => "an unknown number of shared libraries".into(),
        };
        out.push_str(&format!(
            "{:?} against {:?}: {:+.3} ms per run ({}, 95 % CI {} to {}), {libs}",
            c.command,
            base.command,
            r.median_delta * 1e3,
            percent(r.ratio),
            percent(r.ratio_low),
            percent(r.ratio_high),
        ));
        if !r.added_libraries.is_empty() {
            let names: Vec<&str> = r
                .added_libraries
                .iter()
                .map(|p| p.rsplit('/').next().unwrap_or(p))
                .collect();
            out.push_str(&format!(" (adds {})", names.join(", ")));
        }
        out.push('\n');
    }
    out
}

/// Table and summary lines, as `sysgauge startup` prints them.
pub fn startup_report(run: &RunRecord, format: TableFormat) -> String {
    let mut out = startup_table(run).render(format);
    let s = startup_summary(run);
    if !s.is_empty() {
        out.push('\n');
        out.push_str(&s);
    }
    let methods: Vec<&str> = commands(run)
        .iter()
        .filter_map(|c| c.r.details.get_str("libraries_method"))
        .collect();
    if methods.contains(&"loader-trace") {
        out.push_str("\nlibs: counted from the loader's list (ptrace was not allowed), so libraries loaded at run time are missing.\n");
    }
    out
}

/// The `--export-json` document.
pub fn startup_export(run: &RunRecord) -> StartupExport {
    let cmds = commands(run);
    let results = cmds
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let wall = c.metric("wall").filter(|_| c.r.is_ok());
            let secs: Vec<f64> = wall
                .map(|w| w.samples.iter().map(|v| v / 1e3).collect())
                .unwrap_or_default();
            let s = wall.map(|w| w.summary);
            let mean_s = |m: &str| c.metric(m).map(|x| x.summary.mean / 1e3).unwrap_or(0.0);
            let (status, error) = match &c.r.status {
                Status::Ok => ("ok", None),
                Status::Skipped { reason, .. } => ("skipped", Some(reason.clone())),
                Status::Failed { error } => ("failed", Some(error.clone())),
            };
            StartupExportCommand {
                command: c.command.to_string(),
                shell: c.shell,
                status: status.to_string(),
                error,
                runs: secs.len(),
                failed_runs: c.r.details.get_u64("failed_runs").unwrap_or(0),
                mean: s.map_or(0.0, |s| s.mean / 1e3),
                stddev: s.map_or(0.0, |s| s.stddev / 1e3),
                median: s.map_or(0.0, |s| s.median / 1e3),
                min: s.map_or(0.0, |s| s.min / 1e3),
                max: s.map_or(0.0, |s| s.max / 1e3),
                user: mean_s("user"),
                system: mean_s("system"),
                outliers: mad_outliers(&secs, OUTLIER_K),
                times: secs,
                libraries: c.libraries(),
                libraries_method: c.r.details.get_str("libraries_method").map(str::to_string),
                library_paths: c.library_paths(),
                relative: if i == 0 {
                    None
                } else {
                    cmds.first().and_then(|b| relative(b, c))
                },
                prepare: c
                    .r
                    .params
                    .get_str(crate::startup::PREPARE_PARAM)
                    .map(str::to_string),
                parameters: c
                    .r
                    .params
                    .0
                    .iter()
                    .filter_map(|(k, v)| {
                        let name = k.strip_prefix(crate::startup::PARAMETER_PREFIX)?;
                        Some((name.to_string(), v.to_string()))
                    })
                    .collect(),
            }
        })
        .collect();
    StartupExport {
        schema_version: STARTUP_EXPORT_VERSION,
        run_id: run.run_id.clone(),
        host: run.host_name().to_string(),
        results,
    }
}

/// The export as pretty JSON text.
pub fn startup_export_json(run: &RunRecord) -> String {
    let mut s = serde_json::to_string_pretty(&startup_export(run)).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::record::{Params, RunStatus};
    use sysgauge_core::{Better, Metric, Unit};

    fn cmd(command: &str, wall: Vec<f64>, libs: &[&str]) -> ResultRecord {
        let n = wall.len();
        let mut details = Params::new()
            .with("libraries_method", "maps-at-exit")
            .with("library_paths", libs.join("\n"))
            .with("failed_runs", 0u64);
        details.insert("runs", n);
        let m = |name: &str, unit: Unit, s: Vec<f64>| {
            Metric::new(name, unit, Better::Lower, s).unwrap_or_else(|| panic!("metric"))
        };
        ResultRecord {
            family: "startup".into(),
            details,
            duration_seconds: 1.0,
            ..ResultRecord::new(
                crate::startup::ID,
                Params::new().with("command", command).with("shell", false),
                Status::Ok,
                vec![
                    m("wall", Unit::Milliseconds, wall),
                    m("user", Unit::Milliseconds, vec![0.5]),
                    m("system", Unit::Milliseconds, vec![0.25]),
                    m("libraries", Unit::Count, vec![libs.len() as f64]),
                ],
            )
        }
    }

    fn run(results: Vec<ResultRecord>) -> RunRecord {
        RunRecord {
            status: RunStatus::Complete,
            results,
            ..RunRecord::new("run-1", "startup", "0")
        }
    }

    fn sample_run() -> RunRecord {
        let base: Vec<f64> = (0..20).map(|i| 1.0 + 0.01 * (i % 5) as f64).collect();
        let slow: Vec<f64> = (0..20)
            .map(|i| {
                if i == 7 {
                    9.0
                } else {
                    1.78 + 0.01 * (i % 5) as f64
                }
            })
            .collect();
        run(vec![
            cmd("perl -e ''", base, &["/lib/ld.so", "/lib/libc.so.6"]),
            cmd(
                "perl -MPOSIX -e ''",
                slow,
                &["/lib/ld.so", "/lib/libc.so.6", "/p/POSIX.so", "/p/Fcntl.so"],
            ),
        ])
    }

    #[test]
    fn table_shows_delta_libraries_and_outliers() {
        let r = sample_run();
        let text = startup_table(&r).render(TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].contains("baseline"), "{text}");
        assert!(
            lines[3].contains("+76.") || lines[3].contains("+78."),
            "{text}"
        );
        // One outlier (the 9 ms run), 4 libraries.
        assert!(
            lines[3].contains(" 1 ") && lines[3].contains(" 4 "),
            "{text}"
        );
        let s = startup_summary(&r);
        assert!(s.contains("+2 shared libraries"), "{s}");
        assert!(s.contains("adds POSIX.so, Fcntl.so"), "{s}");
    }

    #[test]
    fn export_is_strict_and_in_seconds() {
        let r = sample_run();
        let text = startup_export_json(&r);
        let back: StartupExport = serde_json::from_str(&text).unwrap();
        assert_eq!(back.schema_version, STARTUP_EXPORT_VERSION);
        assert_eq!(back.results.len(), 2);
        let b = &back.results[0];
        assert!(b.relative.is_none());
        assert!((b.median - 0.00102).abs() < 1e-6, "{}", b.median);
        assert_eq!(b.times.len(), 20);
        let v = &back.results[1];
        assert_eq!(v.outliers, vec![7]);
        let rel = v.relative.as_ref().unwrap_or_else(|| panic!("relative"));
        assert!(rel.ratio > 1.7 && rel.ratio_low <= rel.ratio && rel.ratio <= rel.ratio_high);
        assert_eq!(rel.libraries_delta, Some(2));
        assert_eq!(rel.added_libraries, vec!["/p/POSIX.so", "/p/Fcntl.so"]);
        assert!((v.user - 0.0005).abs() < 1e-12);
    }

    #[test]
    fn failed_command_is_shown_not_dropped() {
        let mut r = sample_run();
        r.results[1].status = Status::Failed {
            error: "command \"false\" exited with status 1".into(),
        };
        r.results[1].metrics.clear();
        let text = startup_report(&r, TableFormat::Text);
        assert!(text.contains("FAILED: command"), "{text}");
        let e = startup_export(&r);
        assert_eq!(e.results[1].status, "failed");
        assert_eq!(e.results[1].runs, 0);
    }
}
