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
//! `-`, at most 60 characters. Two commands of one file whose slugs meet
//! (`sleep 0.01`, `sleep  0.01`): the shorter (then the first in byte
//! order) keeps the slug, the other gets `-` and six hex digits of a digest
//! of its own text. So a command's id does not depend on the order of the
//! commands in the file, and one that meets no other has its plain slug.
//! The command itself is kept in the details.
//!
//! This family's `startup.command` times commands too, but hyperfine runs
//! them through a shell by default and subtracts its measured shell
//! start-up from every run, and its file does not say whether `-N` (no
//! shell) was used: a different method, so hyperfine's cases keep their
//! own ids and compare with other hyperfine imports. A run shorter than
//! that correction is exported as 0 s; a command whose median is 0 is
//! imported with a warning (a ratio of it cannot be taken).

use crate::foreign_json::{parse_document, parse_document_as, short, At, JsonDocError};
use chrono::{DateTime, Utc};
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use sysgauge_compare::import::MAX_IMPORT_VALUE;
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
    // The typed reading holds an export of millions of runs in little more
    // than its numbers; a document it does not take as it is (a field
    // missing or of the wrong kind, a value out of range) is read again as
    // a tree, which names the field at fault, or reads what the typed
    // structs are too strict for (a duplicated key).
    let entries = match typed_entries(text) {
        Some(entries) => entries,
        None => tree_entries(text)?,
    };
    Ok(report(entries, at))
}

/// hyperfine's export, only the fields read.
#[derive(Deserialize)]
struct Export {
    results: Vec<Item>,
}

/// One command's entry of [`Export`].
#[derive(Deserialize)]
struct Item {
    command: String,
    mean: Option<f64>,
    times: Option<Vec<f64>>,
    user: Option<f64>,
    system: Option<f64>,
    /// The number of runs that did not exit 0 (not the codes: an export
    /// of millions of runs has millions of them).
    #[serde(default, deserialize_with = "failed_runs")]
    exit_codes: usize,
    parameters: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `exit_codes` (null, or an array of integers and nulls) as the number of
/// runs that did not exit 0: a run killed by a signal has null.
fn failed_runs<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    struct Failed;
    impl<'de> Visitor<'de> for Failed {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of exit codes")
        }
        fn visit_unit<E>(self) -> Result<usize, E> {
            Ok(0)
        }
        fn visit_none<E>(self) -> Result<usize, E> {
            Ok(0)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut failed = 0;
            while let Some(code) = seq.next_element::<Option<i64>>()? {
                if code != Some(0) {
                    failed += 1;
                }
            }
            Ok(failed)
        }
    }
    d.deserialize_option(Failed)
}

/// The entries of a document the typed structs read and whose values are
/// all in range; `None` for anything else, which [`tree_entries`] reads or
/// names.
fn typed_entries(text: &str) -> Option<Vec<Entry>> {
    let export: Export = parse_document_as(text).ok()?;
    if export.results.is_empty() {
        return None;
    }
    let fits = |v: &f64| v.is_finite() && *v >= 0.0 && *v <= MAX_IMPORT_VALUE;
    let mut entries = Vec::with_capacity(export.results.len());
    for item in export.results {
        if item.command.trim().is_empty() {
            return None;
        }
        let times = match item.times.filter(|t| !t.is_empty()) {
            Some(times) => times,
            None => vec![item.mean?],
        };
        if !times.iter().all(fits) || ![item.user, item.system].iter().flatten().all(fits) {
            return None;
        }
        let mut values: Vec<(String, String)> = Vec::new();
        for (name, v) in item.parameters.iter().flatten() {
            let value = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => return None,
            };
            if name.trim().is_empty() {
                return None;
            }
            values.push((name.clone(), value));
        }
        entries.push(Entry {
            name: template(&item.command, &values),
            params: params(&values),
            command: item.command,
            times,
            user: item.user,
            system: item.system,
            failed_runs: item.exit_codes,
        });
    }
    Some(entries)
}

/// The entries of any document, read as a tree of values: slower and
/// larger than [`typed_entries`], but each error names its field.
fn tree_entries(text: &str) -> Result<Vec<Entry>, JsonDocError> {
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
    Ok(entries)
}

/// A case per command (and parameters) of the entries read.
fn report(entries: Vec<Entry>, at: DateTime<Utc>) -> HyperfineReport {
    let slugs = unique_slugs(entries.iter().map(|e| e.name.as_str()));
    let mut results: Vec<ResultRecord> = Vec::new();
    let mut warnings = Vec::new();
    for e in entries {
        let id = format!("hyperfine.{}", slugs[e.name.as_str()]);
        let mut metrics: Vec<Metric> = Vec::new();
        let runs = e.times.len();
        // The times were checked to be numbers of zero or more, so a metric
        // can always be built from them.
        metrics.extend(metric("wall", Unit::Seconds, Better::Lower, e.times).ok());
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
                runs,
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
    HyperfineReport { results, warnings }
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
            values.push((name.to_string(), value));
        }
    }
    Ok(Entry {
        name: template(&command, &values),
        params: params(&values),
        command,
        times,
        user,
        system,
        failed_runs,
    })
}

/// A command's parameters as a case's params: whole numbers typed as such.
fn params(values: &[(String, String)]) -> Params {
    let mut params = Params::new();
    for (name, value) in values {
        let typed = match value.parse::<i64>() {
            Ok(i) => ParamValue::Int(i),
            Err(_) => ParamValue::Text(value.clone()),
        };
        params.0.insert(name.clone(), typed);
    }
    params
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

/// Each name's slug, unique among `names`, whatever their order: where
/// slugs meet, the shortest name (then the first in byte order) keeps its
/// slug and each other gets `-` and the first six hex digits of the
/// [`digest`] of its text (more when those meet too). A name whose slug
/// meets no other keeps it: stored ids keep meaning the same command.
fn unique_slugs<'a>(names: impl Iterator<Item = &'a str>) -> BTreeMap<String, String> {
    let mut names: Vec<&str> = names.collect();
    names.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
    names.dedup();
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut meeting: Vec<&str> = Vec::new();
    for name in names {
        let base = slug(name);
        if taken.insert(base.clone()) {
            out.insert(name.to_string(), base);
        } else {
            meeting.push(name);
        }
    }
    for name in meeting {
        let base = slug(name);
        let hex = format!("{:016x}", digest(name));
        let suffixed = (6..=16)
            .map(|n| format!("{base}-{}", &hex[..n]))
            .chain((2..).map(|k| format!("{base}-{hex}-{k}")))
            .find(|s| !taken.contains(s))
            .unwrap_or(base);
        taken.insert(suffixed.clone());
        out.insert(name.to_string(), suffixed);
    }
    out
}

/// FNV-1a (64 bits) of `text`: fixed by its definition, so the suffix it
/// gives a command is the same on every machine and in every release.
fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
        for id in ["hyperfine.command", "hyperfine.sleep-0-0-n"] {
            assert!(is_valid_bench_id(id), "{id}");
        }
    }

    /// The id of each command of a real export, by its command text.
    fn ids_by_command(text: &str) -> BTreeMap<String, String> {
        parse_hyperfine(text, Utc::now())
            .unwrap()
            .results
            .into_iter()
            .map(|r| {
                let command = r.details.get_str("command").unwrap().to_string();
                (command, r.bench_id)
            })
            .collect()
    }

    #[test]
    fn commands_whose_slugs_meet_keep_their_ids_in_any_order() {
        let listed = ids_by_command(fixture!("hyperfine", "1.15-spacing-clash.json"));
        let turned = ids_by_command(fixture!("hyperfine", "1.15-spacing-clash-turned.json"));
        assert_eq!(listed, turned);
        // The plain command keeps the id it has alone; the other's suffix
        // comes from its own text.
        let suffix = &format!("{:016x}", digest("sleep  0.01"))[..6];
        assert_eq!(listed["sleep 0.01"], "hyperfine.sleep-0-01");
        assert_eq!(
            listed["sleep  0.01"],
            format!("hyperfine.sleep-0-01-{suffix}")
        );
        assert!(is_valid_bench_id(&listed["sleep  0.01"]));
        // FNV-1a's own test vector: the digest is fixed, not this build's.
        assert_eq!(digest("a"), 0xaf63dc4c8601ec8c);
        // A command that meets no other has its plain slug.
        let alone = ids_by_command(fixture!("hyperfine", "1.15-two-commands.json"));
        assert_eq!(alone["sleep 0.01"], "hyperfine.sleep-0-01");
        let three = ["a b", "a_b", "a-b"];
        let forward = unique_slugs(three.iter().copied());
        let backward = unique_slugs(three.iter().rev().copied());
        assert_eq!(forward, backward);
        assert_eq!(forward["a b"], "a-b");
        assert_ne!(forward["a_b"], forward["a-b"]);
    }

    /// The typed reading (an export of millions of runs) gives exactly what
    /// the reading as a tree of values gives, which every export went
    /// through before: on the captured exports, and on a mid-size one made
    /// from a capture (20,000 runs each, one failed and one killed).
    #[test]
    fn the_typed_reading_gives_what_the_tree_gives() {
        let capture = fixture!("hyperfine", "1.15-two-commands.json");
        let export: serde_json::Value = serde_json::from_str(capture).unwrap();
        let mut mid = export.clone();
        for (k, r) in mid["results"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            let times: Vec<f64> = (0..20_000)
                .map(|i| 0.01 + (i * 7919 % 1000) as f64 * 1e-6 + k as f64)
                .collect();
            let mut codes: Vec<serde_json::Value> = vec![0.into(); times.len()];
            codes[5] = 1.into();
            codes[9] = serde_json::Value::Null;
            r["times"] = times.into();
            r["exit_codes"] = codes.into();
        }
        let mid = serde_json::to_string_pretty(&mid).unwrap();
        let at = Utc::now();
        for text in [
            capture,
            fixture!("hyperfine", "1.15-scan.json"),
            fixture!("hyperfine", "1.15-list-named.json"),
            fixture!("hyperfine", "1.15-spacing-clash.json"),
            mid.as_str(),
        ] {
            let typed = typed_entries(text).expect("read typed");
            let tree = tree_entries(text).unwrap();
            assert_eq!(report(typed, at), report(tree, at));
        }
        let r = parse_hyperfine(&mid, at).unwrap();
        assert_eq!(r.results[0].metrics[0].samples.len(), 20_000);
        assert_eq!(r.results[0].details.get_u64("failed_runs"), Some(2));
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
