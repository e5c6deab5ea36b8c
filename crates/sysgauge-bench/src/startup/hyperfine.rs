//! Reading hyperfine's `--export-json` file for `sysgauge import`.
//!
//! hyperfine writes `{"results": [...]}`, one entry per command: its
//! `command` (the text run, or its `--command-name`), `mean`, `stddev`,
//! `median`, `min`, `max` and the raw `times` in seconds, `user` and
//! `system` (mean CPU seconds per run), `exit_codes`, and with
//! `--parameter-scan`/`--parameter-list` the `parameters` of that run
//! (`{"n": "3"}`, values as text).
//!
//! Each command becomes a case `hyperfine.<slug>` with metric `wall`
//! (seconds, lower is better, the raw `times` as samples, so spreads and
//! intervals work) and, when given, `user` and `system` (one sample each:
//! hyperfine exports only their means). The parameters are the case's
//! params (whole numbers typed as such). The slug is the command with its
//! parameter values put back as `{name}` where that is unambiguous (each
//! value found exactly once), so the runs of one scan are one id whose
//! params vary: `sleep 0.0{n}` → `hyperfine.sleep-0-0-n`. Otherwise it is
//! the command as written, lower case, every run of other characters one
//! `-`, at most 60 characters; two commands of one file whose slugs meet get
//! `-2`, `-3` in file order. The command itself is kept in the details.
//!
//! This family's `startup.command` times commands too, but hyperfine runs
//! them through a shell by default and subtracts its measured shell
//! start-up from every run, and its file does not say whether `-N` (no
//! shell) was used: a different method, so hyperfine's cases keep their
//! own ids and compare with other hyperfine imports. A run shorter than
//! that correction is exported as 0 s; a command whose median is 0 is
//! imported with a warning (a ratio of it cannot be taken).

use crate::foreign_json::{parse_document, short, At, JsonDocError};
use chrono::{DateTime, Utc};
use sysgauge_core::record::{Metric, ParamValue, Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{add_run, metric};

/// What a hyperfine export holds.
#[derive(Debug, Clone, PartialEq)]
pub struct HyperfineReport {
    pub results: Vec<ResultRecord>,
    /// Commands imported with something to know (a zero median, failed
    /// runs), one line each.
    pub warnings: Vec<String>,
}

/// The longest slug.
const MAX_SLUG: usize = 60;

/// One command's entry, read.
struct Entry {
    name: String,
    command: String,
    params: Params,
    times: Vec<f64>,
    user: Option<f64>,
    system: Option<f64>,
    failed_runs: usize,
}

/// Parse a hyperfine `--export-json` file; results are stamped `at`.
pub fn parse_hyperfine(text: &str, at: DateTime<Utc>) -> Result<HyperfineReport, JsonDocError> {
    let doc = parse_document(text)?;
    let root = At::root(&doc);
    let items = root.require("results")?.items()?;
    if items.is_empty() {
        return Err(root
            .require("results")?
            .error("is empty: hyperfine benchmarked no command"));
    }
    let mut entries: Vec<Entry> = Vec::new();
    for item in items {
        entries.push(entry(&item)?);
    }
    let mut slugs: Vec<(String, String)> = Vec::new();
    let mut results: Vec<ResultRecord> = Vec::new();
    let mut warnings = Vec::new();
    for e in entries {
        let id = format!("hyperfine.{}", unique_slug(&e.name, &mut slugs));
        let mut metrics: Vec<Metric> = Vec::new();
        // The times were checked to be numbers of zero or more, so a metric
        // can always be built from them.
        metrics.extend(metric("wall", Unit::Seconds, Better::Lower, e.times.clone()).ok());
        for (name, v) in [("user", e.user), ("system", e.system)] {
            if let Some(v) = v {
                metrics.extend(metric(name, Unit::Seconds, Better::Lower, vec![v]).ok());
            }
        }
        if metrics.first().is_some_and(|m| m.value() == 0.0) {
            warnings.push(format!(
                "{id}: hyperfine timed '{}' at 0 s (faster than its shell start-up correction); no ratio can be taken of it",
                e.command
            ));
        }
        if e.failed_runs > 0 {
            warnings.push(format!(
                "{id}: {} of {} runs of '{}' exited non-zero (hyperfine -i); their times are included",
                e.failed_runs,
                e.times.len(),
                e.command
            ));
        }
        // The same command (and parameters) twice in one file: more runs
        // of one case.
        if let Some(r) = results
            .iter_mut()
            .find(|r| r.bench_id == id && r.params == e.params)
        {
            add_run(r, metrics);
            continue;
        }
        let mut details = Params::new()
            .with("source", "hyperfine")
            .with("command", e.command.as_str());
        if e.failed_runs > 0 {
            details.insert("failed_runs", e.failed_runs);
        }
        results.push(ResultRecord {
            started_at: at,
            details,
            ..ResultRecord::new(&id, e.params, Status::Ok, metrics)
        });
    }
    Ok(HyperfineReport { results, warnings })
}

fn entry(item: &At<'_>) -> Result<Entry, JsonDocError> {
    let command = item.require("command")?.text()?.to_string();
    if command.trim().is_empty() {
        return Err(item.require("command")?.error("is empty"));
    }
    let item = item.clone().labelled(&command);
    let times = match item.get("times") {
        Some(t) => t
            .items()?
            .iter()
            .map(At::number)
            .collect::<Result<Vec<f64>, _>>()?,
        None => Vec::new(),
    };
    let times = if times.is_empty() {
        // An export without its runs: the mean is the one sample.
        vec![item.require("mean")?.number()?]
    } else {
        times
    };
    let optional = |key: &str| item.get(key).map(|v| v.number()).transpose();
    let user = optional("user")?;
    let system = optional("system")?;
    let mut failed_runs = 0;
    if let Some(codes) = item.get("exit_codes") {
        for c in codes.items()? {
            // A run killed by a signal has no exit code: null.
            if c.value.as_i64() != Some(0) {
                failed_runs += 1;
            }
        }
    }
    let mut params = Params::new();
    let mut values: Vec<(String, String)> = Vec::new();
    if let Some(p) = item.get("parameters") {
        for (name, v) in p.entries()? {
            let value = match v.value {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                other => return Err(v.error(format!("{} is not a parameter value", short(other)))),
            };
            if name.trim().is_empty() {
                return Err(p.error("a parameter has an empty name"));
            }
            let typed = match value.parse::<i64>() {
                Ok(i) => ParamValue::Int(i),
                Err(_) => ParamValue::Text(value.clone()),
            };
            params.0.insert(name.to_string(), typed);
            values.push((name.to_string(), value));
        }
    }
    Ok(Entry {
        name: template(&command, &values),
        command,
        params,
        times,
        user,
        system,
        failed_runs,
    })
}

/// The command with each parameter value put back as `{name}`, when every
/// value is found exactly once (and the values do not overlap); else the
/// command as it is.
fn template(command: &str, values: &[(String, String)]) -> String {
    if values.is_empty() {
        return command.to_string();
    }
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    for (name, value) in values {
        if value.is_empty() {
            return command.to_string();
        }
        let mut found = command.match_indices(value.as_str());
        let (Some((start, _)), None) = (found.next(), found.next()) else {
            return command.to_string();
        };
        spans.push((start, start + value.len(), name));
    }
    spans.sort();
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return command.to_string();
    }
    let mut out = String::new();
    let mut pos = 0;
    for (start, end, name) in spans {
        out.push_str(&command[pos..start]);
        out.push('{');
        out.push_str(name);
        out.push('}');
        pos = end;
    }
    out.push_str(&command[pos..]);
    out
}

/// `name` as an id part: ASCII letters and digits in lower case, every run
/// of anything else one `-`, at most `MAX_SLUG` characters.
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.trim_matches('-').chars().take(MAX_SLUG).collect();
    let s = s.trim_end_matches('-');
    if s.is_empty() {
        "command".to_string()
    } else {
        s.to_string()
    }
}

/// The slug of `name`, made unique among the names seen so far (`taken`
/// holds name and slug pairs).
fn unique_slug(name: &str, taken: &mut Vec<(String, String)>) -> String {
    if let Some((_, s)) = taken.iter().find(|(n, _)| n == name) {
        return s.clone();
    }
    let base = slug(name);
    let mut candidate = base.clone();
    let mut k = 2;
    while taken.iter().any(|(_, s)| *s == candidate) {
        candidate = format!("{base}-{k}");
        k += 1;
    }
    taken.push((name.to_string(), candidate.clone()));
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::is_valid_bench_id;

    fn case<'a>(r: &'a HyperfineReport, id: &str, params: &str) -> &'a ResultRecord {
        r.results
            .iter()
            .find(|x| x.bench_id == id && x.params.canonical() == params)
            .unwrap_or_else(|| panic!("no {id} {params} in {r:?}"))
    }

    #[test]
    fn two_commands_with_their_runs_as_samples() {
        let r =
            parse_hyperfine(fixture!("hyperfine", "1.15-two-commands.json"), Utc::now()).unwrap();
        let ids: Vec<&str> = r.results.iter().map(|x| x.bench_id.as_str()).collect();
        assert_eq!(ids, ["hyperfine.sleep-0-01", "hyperfine.true"]);
        let sleep = case(&r, "hyperfine.sleep-0-01", "");
        let wall = &sleep.metrics[0];
        assert_eq!(wall.name, "wall");
        assert_eq!(wall.unit, Unit::Seconds);
        assert_eq!(wall.better, Better::Lower);
        assert_eq!(
            wall.samples,
            [
                0.04338747566,
                0.013643767660000002,
                0.013621876660000002,
                0.01802354666,
                0.013405843660000001
            ]
        );
        // hyperfine's own median and mean are those of the samples.
        assert_eq!(wall.value(), 0.013643767660000002);
        assert!((wall.summary.mean - 0.02041650206).abs() < 1e-12);
        assert_eq!(sleep.metrics[1].name, "user");
        assert_eq!(sleep.metrics[1].samples, [0.0016472800000000003]);
        assert_eq!(sleep.metrics[2].samples, [0.00041944799999999995]);
        assert_eq!(sleep.details.get_str("command"), Some("sleep 0.01"));
        // `true` ran faster than hyperfine's shell correction: a warning.
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("hyperfine.true"), "{:?}", r.warnings);
    }

    #[test]
    fn a_parameter_scan_is_one_id_with_params() {
        let r = parse_hyperfine(fixture!("hyperfine", "1.15-scan.json"), Utc::now()).unwrap();
        assert_eq!(r.results.len(), 3);
        for (n, mean) in [
            (1, 0.014957061100000002),
            (2, 0.0223898681),
            (3, 0.03170465943333334),
        ] {
            let c = case(&r, "hyperfine.sleep-0-0-n", &format!("n={n}"));
            assert_eq!(c.params.get_int("n"), Some(n));
            assert!((c.metrics[0].summary.mean - mean).abs() < 1e-12);
            assert_eq!(c.metrics[0].samples.len(), 3);
            assert_eq!(
                c.details.get_str("command"),
                Some(format!("sleep 0.0{n}").as_str())
            );
        }
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn a_named_list_scan_uses_the_name() {
        let r = parse_hyperfine(fixture!("hyperfine", "1.15-list-named.json"), Utc::now()).unwrap();
        let small = case(&r, "hyperfine.head-kib-kib", "kib=64");
        assert_eq!(
            small.metrics[0].samples,
            [
                0.001714968,
                0.0017275220000000002,
                0.004262350000000001,
                0.003664595
            ]
        );
        let big = case(&r, "hyperfine.head-kib-kib", "kib=1024");
        assert_eq!(big.details.get_str("command"), Some("head 1024 KiB"));
    }

    #[test]
    fn templates_and_slugs() {
        let v = |n: &str, x: &str| (n.to_string(), x.to_string());
        assert_eq!(template("sleep 0.01", &[v("n", "1")]), "sleep 0.0{n}");
        // Found twice, or not at all: the command as it is.
        assert_eq!(template("echo 1 1", &[v("n", "1")]), "echo 1 1");
        assert_eq!(template("true", &[v("n", "7")]), "true");
        assert_eq!(
            template("cp a b", &[v("src", "a"), v("dst", "b")]),
            "cp {src} {dst}"
        );
        assert_eq!(slug("sleep 0.0{n}"), "sleep-0-0-n");
        assert_eq!(slug("  --- "), "command");
        assert_eq!(slug("Größe ÄB"), "gr-e-b");
        assert_eq!(slug(&"x".repeat(100)).len(), MAX_SLUG);
        let mut taken = Vec::new();
        assert_eq!(unique_slug("a b", &mut taken), "a-b");
        assert_eq!(unique_slug("a_b", &mut taken), "a-b-2");
        assert_eq!(unique_slug("a b", &mut taken), "a-b");
        for id in [
            "hyperfine.a-b-2",
            "hyperfine.command",
            "hyperfine.sleep-0-0-n",
        ] {
            assert!(is_valid_bench_id(id), "{id}");
        }
    }

    #[test]
    fn the_same_command_twice_is_more_runs() {
        let text = r#"{"results":[
            {"command":"true","mean":0.002,"times":[0.001,0.003]},
            {"command":"true","mean":0.004,"times":[0.004]}]}"#;
        let r = parse_hyperfine(text, Utc::now()).unwrap();
        assert_eq!(r.results.len(), 1);
        assert_eq!(r.results[0].metrics[0].samples, [0.001, 0.003, 0.004]);
        // Without its times, the mean is the one sample.
        let old =
            parse_hyperfine(r#"{"results":[{"command":"x","mean":0.5}]}"#, Utc::now()).unwrap();
        assert_eq!(old.results[0].metrics[0].samples, [0.5]);
    }

    #[test]
    fn bad_input_names_the_field_or_line() {
        let fixture = fixture!("hyperfine", "1.15-two-commands.json");
        let truncated = &fixture[..fixture.len() / 2];
        let e = parse_hyperfine(truncated, Utc::now()).unwrap_err();
        assert!(e.to_string().contains("cut short"), "{e}");
        let e = parse_hyperfine(
            &fixture.replacen("0.013621876660000002", "\"fast\"", 1),
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "results[0] (sleep 0.01).times[2]: \"fast\" is not a number"
        );
        let e =
            parse_hyperfine(&fixture.replacen("0.01802354666", "-0.5", 1), Utc::now()).unwrap_err();
        assert!(e.to_string().contains("times[3]: -0.5"), "{e}");
        let e = parse_hyperfine(r#"{"runs":[]}"#, Utc::now()).unwrap_err();
        assert_eq!(e.to_string(), "results: missing");
        let e = parse_hyperfine(r#"{"results":[]}"#, Utc::now()).unwrap_err();
        assert!(e.to_string().contains("no command"), "{e}");
        let e = parse_hyperfine(r#"{"results":[{"mean":1}]}"#, Utc::now()).unwrap_err();
        assert_eq!(e.to_string(), "results[0].command: missing");
        let e = parse_hyperfine(
            r#"{"results":[{"command":"x","times":[1],"parameters":{"n":[1]}}]}"#,
            Utc::now(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("parameters.n"), "{e}");
    }
}
