//! Turning other machines' results into run records: sysgauge's own JSON
//! run records, and plain CSV tables (`host,benchmark,metric,value,unit`
//! with optional `better` and `params` columns). `openssl speed -mr` output
//! is parsed in `sysgauge-crypto` and wrapped here by `synthetic_run`.
//!
//! Everything takes text and returns records or an error naming the source
//! and line; nothing is stored here, so an import is all-or-nothing: the
//! caller writes only when every file parsed.
//!
//! Records made from CSV or openssl output get a run id derived from their
//! content (UUID v5 over the format, the host and that host's rows), so
//! importing the same data again is recognised and skipped, and adding a
//! host to a CSV does not duplicate the hosts already imported.

use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap, HashSet};
use sysgauge_core::host::{CpuInfo, HostInfo, OsInfo};
use sysgauge_core::record::{
    family_of, BuildInfo, Metric, ParamValue, Params, Profile, ResultRecord, RunRecord, RunStatus,
    Status, SCHEMA_VERSION,
};
use sysgauge_core::{Better, Summary, Unit};
use thiserror::Error;
use uuid::Uuid;

/// Namespace of the content-derived run ids of imported data.
const IMPORT_NAMESPACE: Uuid = Uuid::from_u128(0x6eef45ed_fb9c_4397_ac22_44dbc92deea1);

/// The benchmark name of CSV rows that carry host facts instead of results.
pub const HOST_FACTS_BENCHMARK: &str = "host";

/// Optional columns of host facts, given on any row of a host (write-ups
/// tabulate each machine's CPU, clock and OS beside its numbers): the
/// BogoMIPS contrast and the differing-facts table of a comparison read
/// them.
pub const HOST_FACT_COLUMNS: [&str; 8] = [
    "bogomips",
    "cpu_model",
    "cores",
    "threads",
    "mhz",
    "arch",
    "os",
    "kernel",
];

/// Host facts a CSV may give in `host` rows.
pub const HOST_FACT_METRICS: [&str; 4] = ["bogomips", "cores", "threads", "nominal_mhz"];

/// The largest magnitude an imported number may have. The database stores
/// f64, but the summaries square and sum samples: 1e308 overflows to
/// infinity there and failed late, inside SQLite. No measurement of any
/// family comes near 1e100, so anything beyond is a broken file.
pub const MAX_IMPORT_VALUE: f64 = 1e100;

/// The smallest magnitude an imported number other than 0 may have, as
/// far below 1 as [`MAX_IMPORT_VALUE`] is above: no measurement of any
/// unit comes near it, and a ratio of two accepted values (up to 1e200)
/// stays a finite number (1e-210 against 1e99 overflowed to infinity).
pub const MIN_IMPORT_VALUE: f64 = 1e-100;

/// How far in the future an imported `started_at` may lie (clocks of
/// different machines disagree a little); further, it would shadow the
/// host's real latest run for ever.
pub const CLOCK_SKEW_ALLOWANCE_SECONDS: i64 = 600;

/// The earliest year an imported run may claim (before sysgauge existed,
/// a time stamp is a broken clock or a forged file).
pub const EARLIEST_IMPORT_YEAR: i32 = 2000;

/// Why a sample or value cannot be imported, if it cannot. Zero is allowed
/// only where lower is better (0 % loss is a measurement; 0 MB/s is a
/// failure that would break every ratio).
fn check_number(v: f64, better: Better) -> Result<(), String> {
    if !v.is_finite() {
        Err(format!("{v} is not a finite number"))
    } else if v < 0.0 {
        Err(format!("{v} is negative"))
    } else if v == 0.0 && better == Better::Higher {
        Err("0 where higher is better is a failed measurement (ratios are taken of it)".into())
    } else if v > MAX_IMPORT_VALUE {
        Err(format!(
            "{v:e} is beyond what sysgauge accepts ({MAX_IMPORT_VALUE:e}; its summaries would overflow)"
        ))
    } else if v > 0.0 && v < MIN_IMPORT_VALUE {
        Err(format!(
            "{v:e} is below what sysgauge accepts ({MIN_IMPORT_VALUE:e}; its ratios would overflow)"
        ))
    } else {
        Ok(())
    }
}

/// A time stamp's problem, if any: in the future beyond the clock-skew
/// allowance, or before [`EARLIEST_IMPORT_YEAR`].
fn check_time(t: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), String> {
    use chrono::Datelike;
    if t > now + chrono::Duration::seconds(CLOCK_SKEW_ALLOWANCE_SECONDS) {
        Err(format!("{t} is in the future (now is {now})"))
    } else if t.year() < EARLIEST_IMPORT_YEAR {
        Err(format!("{t} is before {EARLIEST_IMPORT_YEAR}"))
    } else {
        Ok(())
    }
}

/// A benchmark id an import accepts: sysgauge's own (`family.name`) and
/// other tools' names from CSV (`sha256sum-512x`), but nothing a terminal,
/// a chart or a selector would choke on: 1 to 128 ASCII letters, digits and
/// `. _ - + : /`, without empty dotted parts.
pub fn is_importable_bench_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+:/".contains(c))
        && id.split('.').all(|p| !p.is_empty())
}

const BENCH_ID_RULE: &str = "1 to 128 letters, digits and . _ - + : / without empty dotted parts";

/// A file that cannot be imported: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{source_name}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ImportError {
    /// The file (as the user named it).
    pub source_name: String,
    /// 1-based line, when the problem is on one line.
    pub line: Option<usize>,
    pub message: String,
}

/// What an import needs to know besides the text.
pub struct ImportContext<'a> {
    /// The file as the user named it (for errors, labels and tags).
    pub source_name: &'a str,
    /// Time stamped on records made from CSV or openssl output.
    pub at: DateTime<Utc>,
    /// sysgauge's version.
    pub tool_version: &'a str,
    /// The workload version today's benchmark of an id runs, if sysgauge
    /// has it; imported numbers are taken to be of that workload.
    pub workload_version: &'a dyn Fn(&str) -> Option<u32>,
}

impl ImportContext<'_> {
    fn err(&self, line: Option<usize>, message: impl Into<String>) -> ImportError {
        ImportError {
            source_name: self.source_name.to_string(),
            line,
            message: message.into(),
        }
    }

    fn file_name(&self) -> String {
        std::path::Path::new(self.source_name)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| self.source_name.to_string())
    }
}

/// The family of an imported benchmark name: the part before the first dot,
/// or `other` for a name without one.
pub fn family_for(benchmark: &str) -> String {
    if benchmark.contains('.') {
        family_of(benchmark).to_string()
    } else {
        "other".to_string()
    }
}

/// The label of a run made of other tools' outputs: the files it came
/// from, the start of its run id and the tools (last, in parentheses, as
/// `results list` reads them). The run id, derived from the data, makes it
/// differ from any other imported run's (two `result.txt` of two folders)
/// and stay the same for the same data imported again; the file names
/// alone would clash.
pub fn import_label(files: &str, run_id: &str, format: &str) -> String {
    let short: String = run_id.chars().take(8).collect();
    format!("imported from {files}, run {short} ({format})")
}

/// A run record for results that came from elsewhere (CSV, openssl): status
/// `imported`, command `import`, a content-derived run id. `identity` is the
/// text that identifies the data (the same data gives the same run id).
pub fn synthetic_run(
    ctx: &ImportContext<'_>,
    format: &str,
    host: HostInfo,
    results: Vec<ResultRecord>,
    identity: &str,
) -> RunRecord {
    let host_name = host.hostname.clone().unwrap_or_default();
    let name = format!("{format}\n{host_name}\n{identity}");
    let run_id = Uuid::new_v5(&IMPORT_NAMESPACE, name.as_bytes()).to_string();
    let label = import_label(&ctx.file_name(), &run_id, format);
    let mut tags = BTreeMap::new();
    tags.insert("format".to_string(), format.to_string());
    tags.insert("imported_from".to_string(), ctx.file_name());
    RunRecord {
        schema_version: SCHEMA_VERSION,
        run_id,
        started_at: ctx.at,
        finished_at: Some(ctx.at),
        status: RunStatus::Imported,
        command: "import".to_string(),
        tool_version: ctx.tool_version.to_string(),
        build: BuildInfo {
            profile: "unknown".to_string(),
            target: "unknown".to_string(),
            target_features: Vec::new(),
        },
        host,
        // Imported data has no sysgauge profile; the field is required, so
        // it holds the default and the tags say where the numbers came from.
        profile: Profile::default(),
        label: Some(label),
        tags,
        findings: Vec::new(),
        results,
    }
}

/// Parse a `k=v` list: pairs separated by spaces, commas or semicolons;
/// integers and `true`/`false` become typed values.
pub fn parse_params(text: &str) -> Result<Params, String> {
    let mut p = Params::new();
    for pair in text
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|s| !s.is_empty())
    {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("parameter '{pair}' is not KEY=VALUE"))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() {
            return Err(format!("parameter '{pair}' has an empty key or value"));
        }
        if p.get(k).is_some() {
            return Err(format!("parameter '{k}' is given twice"));
        }
        let value = if let Ok(i) = v.parse::<i64>() {
            ParamValue::Int(i)
        } else if v == "true" || v == "false" {
            ParamValue::Bool(v == "true")
        } else {
            ParamValue::Text(v.to_string())
        };
        p.0.insert(k.to_string(), value);
    }
    Ok(p)
}

#[derive(Default)]
struct CsvHost {
    facts: CpuInfo,
    os: OsInfo,
    /// Fact columns already given for this host, with the line: a later
    /// row may repeat a fact but not contradict it.
    fact_columns: BTreeMap<String, (String, usize)>,
    /// (benchmark, params) in order, each with its metrics in order.
    cases: Vec<(String, Params, Vec<CsvMetric>)>,
    /// Index into `cases` by (benchmark, canonical params), and into each
    /// case's metrics by name: grouping stays linear in the rows (a scan
    /// per row was quadratic: 20k distinct cases took 0.3 s).
    case_index: HashMap<(String, String), usize>,
    metric_index: HashMap<(usize, String), usize>,
    /// The host's rows, normalised: its identity for the run id.
    identity: String,
}

struct CsvMetric {
    name: String,
    unit: Unit,
    better: Better,
    samples: Vec<f64>,
    line: usize,
}

/// Parse a CSV table into one run per host (in order of first appearance).
///
/// The header names the columns (any order, case-insensitive): `host`,
/// `benchmark`, `metric`, `value`, `unit`, and optionally `better`
/// (`higher`/`lower`; default: lower for time units, higher otherwise) and
/// `params` (`k=v` pairs). Rows with the same host, benchmark and params are
/// one case; the same metric repeated gives several samples. Host facts
/// come in the optional `HOST_FACT_COLUMNS`, or as rows whose benchmark is
/// `host` (`bogomips`, `cores`, `threads`, `nominal_mhz`). Lines starting
/// with `#` are comments.
pub fn parse_csv(text: &str, ctx: &ImportContext<'_>) -> Result<Vec<RunRecord>, ImportError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .comment(Some(b'#'))
        .flexible(false)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| csv_error(ctx, &e))?.clone();
    const KNOWN: [&str; 7] = [
        "host",
        "benchmark",
        "metric",
        "value",
        "unit",
        "better",
        "params",
    ];
    // Each column may appear once: more columns than there are names is
    // said as such, before naming the first unknown or repeated one.
    let most = KNOWN.len() + HOST_FACT_COLUMNS.len();
    if headers.len() > most {
        return Err(ctx.err(
            Some(1),
            format!(
                "the header has {} columns; a sysgauge CSV has at most {most} (host,benchmark,metric,value,unit[,better][,params], and host facts {})",
                headers.len(),
                HOST_FACT_COLUMNS.join(",")
            ),
        ));
    }
    let mut col: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        let h = h.trim().to_ascii_lowercase();
        let Some(k) = KNOWN.iter().chain(&HOST_FACT_COLUMNS).find(|k| **k == h) else {
            return Err(ctx.err(
                Some(1),
                format!(
                    "unknown column '{h}' (the columns are host,benchmark,metric,value,unit[,better][,params], and host facts {})",
                    HOST_FACT_COLUMNS.join(",")
                ),
            ));
        };
        if col.insert(k, i).is_some() {
            return Err(ctx.err(Some(1), format!("column '{h}' appears twice")));
        }
    }
    for required in &KNOWN[..5] {
        if !col.contains_key(required) {
            return Err(ctx.err(
                Some(1),
                format!(
                    "the header has no '{required}' column (expected host,benchmark,metric,value,unit[,better][,params])"
                ),
            ));
        }
    }
    // The host-fact columns the header has: the others cost nothing per row.
    let fact_columns: Vec<&str> = HOST_FACT_COLUMNS
        .iter()
        .copied()
        .filter(|c| col.contains_key(c))
        .collect();
    let mut hosts: Vec<(String, CsvHost)> = Vec::new();
    let mut host_index: HashMap<String, usize> = HashMap::new();
    let mut rows = 0usize;
    for rec in reader.records() {
        let rec = rec.map_err(|e| csv_error(ctx, &e))?;
        let line = rec.position().map(|p| p.line() as usize);
        // Foreign text: control characters escaped before anything keeps it.
        let get = |name: &str| {
            sysgauge_core::text::for_terminal(
                col.get(name).and_then(|&i| rec.get(i)).unwrap_or("").trim(),
            )
            .into_owned()
        };
        let (host, benchmark, metric) = (get("host"), get("benchmark"), get("metric"));
        let (value_text, unit_text) = (get("value"), get("unit"));
        let (host, benchmark, metric) = (host.as_str(), benchmark.as_str(), metric.as_str());
        let (value_text, unit_text) = (value_text.as_str(), unit_text.as_str());
        for (name, v) in [
            ("host", host),
            ("benchmark", benchmark),
            ("metric", metric),
            ("value", value_text),
        ] {
            if v.is_empty() {
                return Err(ctx.err(line, format!("the {name} is empty")));
            }
        }
        let value: f64 = value_text
            .parse()
            .map_err(|_| ctx.err(line, format!("value '{value_text}' is not a number")))?;
        if !value.is_finite() || value <= 0.0 {
            return Err(ctx.err(
                line,
                format!("value {value_text} must be a positive number (ratios are taken of it)"),
            ));
        }
        if value > MAX_IMPORT_VALUE {
            return Err(ctx.err(
                line,
                format!("value {value_text} is beyond what sysgauge accepts ({MAX_IMPORT_VALUE:e}; its summaries would overflow)"),
            ));
        }
        rows += 1;
        let idx = *host_index.entry(host.to_string()).or_insert_with(|| {
            hosts.push((host.to_string(), CsvHost::default()));
            hosts.len() - 1
        });
        let entry = &mut hosts[idx].1;
        for column in &fact_columns {
            let v = get(column);
            if !v.is_empty() {
                set_fact_column(entry, column, &v, line.unwrap_or(0))
                    .map_err(|m| ctx.err(line, format!("host {host}: {m}")))?;
            }
        }
        if benchmark.eq_ignore_ascii_case(HOST_FACTS_BENCHMARK) {
            set_host_fact(&mut entry.facts, metric, value).map_err(|m| ctx.err(line, m))?;
            entry.identity.push_str(&format!("host|{metric}|{value}\n"));
            continue;
        }
        if !is_importable_bench_id(benchmark) {
            return Err(ctx.err(
                line,
                format!("benchmark '{benchmark}' is malformed ({BENCH_ID_RULE})"),
            ));
        }
        if unit_text.is_empty() {
            return Err(ctx.err(line, "the unit is empty (e.g. MB/s, op/s, ms)"));
        }
        let unit = Unit::from(unit_text);
        let better = match get("better").as_str() {
            "" => unit.natural_better(),
            b => Better::parse(b).ok_or_else(|| {
                ctx.err(line, format!("better '{b}' is neither higher nor lower"))
            })?,
        };
        let params = parse_params(&get("params")).map_err(|m| ctx.err(line, m))?;
        entry.identity.push_str(&format!(
            "{benchmark}|{}|{metric}|{value}|{}|{}\n",
            params.canonical(),
            unit.symbol(),
            better.as_str()
        ));
        let key = (benchmark.to_string(), params.canonical());
        let case = match entry.case_index.get(&key) {
            Some(&i) => i,
            None => {
                entry
                    .cases
                    .push((benchmark.to_string(), params, Vec::new()));
                entry.case_index.insert(key, entry.cases.len() - 1);
                entry.cases.len() - 1
            }
        };
        let metrics = &mut entry.cases[case].2;
        let known = entry.metric_index.get(&(case, metric.to_string())).copied();
        match known.and_then(|i| metrics.get_mut(i)) {
            Some(m) => {
                if m.unit != unit || m.better != better {
                    return Err(ctx.err(
                        line,
                        format!(
                            "{benchmark} {metric} on {host} was given as {} ({} is better) on line {}; one metric has one unit and direction",
                            m.unit, m.better, m.line
                        ),
                    ));
                }
                m.samples.push(value);
            }
            None => {
                entry
                    .metric_index
                    .insert((case, metric.to_string()), metrics.len());
                metrics.push(CsvMetric {
                    name: metric.to_string(),
                    unit,
                    better,
                    samples: vec![value],
                    line: line.unwrap_or(0),
                });
            }
        }
    }
    if rows == 0 {
        return Err(ctx.err(None, "no data rows after the header"));
    }
    let mut runs = Vec::new();
    for (name, h) in hosts {
        if h.cases.is_empty() {
            return Err(ctx.err(
                None,
                format!("host '{name}' has only host facts and no results"),
            ));
        }
        let results = h
            .cases
            .into_iter()
            .map(|(benchmark, params, metrics)| {
                let metrics = metrics
                    .into_iter()
                    .filter_map(|m| Metric::new(&m.name, m.unit, m.better, m.samples))
                    .collect();
                ResultRecord {
                    family: family_for(&benchmark),
                    workload_version: (ctx.workload_version)(&benchmark).unwrap_or(1),
                    details: Params::new().with("source", "csv"),
                    started_at: ctx.at,
                    ..ResultRecord::new(&benchmark, params, Status::Ok, metrics)
                }
            })
            .collect();
        let mut identity = h.identity;
        for (column, (v, _)) in &h.fact_columns {
            identity.push_str(&format!("fact|{column}|{v}\n"));
        }
        let host = HostInfo {
            hostname: Some(name),
            cpu: h.facts,
            os: h.os,
            ..HostInfo::default()
        };
        runs.push(synthetic_run(ctx, "csv", host, results, &identity));
    }
    Ok(runs)
}

/// One host-fact column's value for a host: parsed into its place, and
/// checked against what an earlier row said.
fn set_fact_column(
    host: &mut CsvHost,
    column: &str,
    value: &str,
    line: usize,
) -> Result<(), String> {
    if let Some((earlier, at)) = host.fact_columns.get(column) {
        if earlier != value {
            return Err(format!(
                "{column} is '{value}' here but '{earlier}' on line {at}; a host has one value per fact"
            ));
        }
        return Ok(());
    }
    let positive = |v: &str| -> Result<f64, String> {
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| format!("{column} '{v}' is not a positive number"))
    };
    let count = |v: &str| -> Result<u32, String> {
        v.parse::<u32>()
            .ok()
            .filter(|&x| x > 0)
            .ok_or_else(|| format!("{column} '{v}' is not a whole number above 0"))
    };
    match column {
        "bogomips" => host.facts.bogomips = Some(positive(value)?),
        "cpu_model" => host.facts.model = Some(value.to_string()),
        "cores" => host.facts.cores = Some(count(value)?),
        "threads" => host.facts.threads = Some(count(value)?),
        "mhz" => host.facts.nominal_mhz = Some(positive(value)?),
        "arch" => host.facts.architecture = Some(value.to_string()),
        "os" => host.os.distribution = Some(value.to_string()),
        "kernel" => host.os.kernel_release = Some(value.to_string()),
        _ => return Err(format!("'{column}' is not a host-fact column")),
    }
    host.fact_columns
        .insert(column.to_string(), (value.to_string(), line));
    Ok(())
}

fn set_host_fact(cpu: &mut CpuInfo, metric: &str, value: f64) -> Result<(), String> {
    let count = |v: f64| -> Result<u32, String> {
        if v.fract() == 0.0 && v <= f64::from(u32::MAX) {
            Ok(v as u32)
        } else {
            Err(format!("host {metric} must be a whole number, not {v}"))
        }
    };
    match metric.to_ascii_lowercase().as_str() {
        "bogomips" => cpu.bogomips = Some(value),
        "cores" => cpu.cores = Some(count(value)?),
        "threads" => cpu.threads = Some(count(value)?),
        "nominal_mhz" => cpu.nominal_mhz = Some(value),
        _ => {
            return Err(format!(
                "'{metric}' is not a host fact a CSV can give ({})",
                HOST_FACT_METRICS.join(", ")
            ))
        }
    }
    Ok(())
}

fn csv_error(ctx: &ImportContext<'_>, e: &csv::Error) -> ImportError {
    let line = e.position().map(|p| p.line() as usize);
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("this row has {len} fields but the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "the file is not UTF-8 text".to_string(),
        _ => e.to_string(),
    };
    ctx.err(line, message)
}

/// Parse sysgauge JSON: one run record, or an array of them (as written by
/// `sysgauge run --json` and `results export --format json`). Every field is
/// checked; metric summaries are recomputed from the raw samples.
pub fn parse_json(text: &str, ctx: &ImportContext<'_>) -> Result<Vec<RunRecord>, ImportError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let what = if e.is_eof() {
            format!("the JSON ends too early (truncated?): {e}")
        } else {
            format!("not valid JSON: {e}")
        };
        ctx.err(Some(e.line()), what)
    })?;
    let mut value = value;
    sanitise_strings(&mut value);
    let items = match value {
        serde_json::Value::Array(a) => a,
        v @ serde_json::Value::Object(_) => vec![v],
        _ => {
            return Err(ctx.err(
                Some(1),
                "expected a sysgauge run record (a JSON object) or an array of them",
            ))
        }
    };
    if items.is_empty() {
        return Err(ctx.err(Some(1), "the array holds no run record"));
    }
    let mut runs = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let which = if i == 0 {
            "the run record".to_string()
        } else {
            format!("run record {}", i + 1)
        };
        match item.get("schema_version").and_then(|v| v.as_u64()) {
            None => {
                return Err(ctx.err(None, format!("{which} has no schema_version: not a sysgauge run record")))
            }
            Some(v) if v > u64::from(SCHEMA_VERSION) => {
                return Err(ctx.err(
                    None,
                    format!("{which} has schema_version {v}; this sysgauge reads up to {SCHEMA_VERSION} (upgrade sysgauge)"),
                ))
            }
            _ => {}
        }
        let mut run: RunRecord = serde_json::from_value(item).map_err(|e| {
            ctx.err(
                None,
                format!("{which} is not a valid sysgauge run record: {e}"),
            )
        })?;
        if run.run_id.trim().is_empty() {
            return Err(ctx.err(None, format!("{which} has an empty run_id")));
        }
        run.run_id =
            canonical_run_id(&run.run_id).map_err(|m| ctx.err(None, format!("{which}: {m}")))?;
        check_run(&run, &which).map_err(|m| ctx.err(None, m))?;
        for r in &mut run.results {
            for m in &mut r.metrics {
                m.summary = Summary::from_samples(&m.samples).ok_or_else(|| {
                    ctx.err(
                        None,
                        format!(
                            "{which}: {} metric '{}' has no samples or a sample that is not a finite number",
                            r.bench_id, m.name
                        ),
                    )
                })?;
            }
            if matches!(r.status, Status::Ok) && r.metrics.is_empty() {
                return Err(ctx.err(
                    None,
                    format!("{which}: {} is ok but has no metric", r.bench_id),
                ));
            }
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Escapes control characters in every string of an imported document,
/// keys included (host names, labels, tags, params, finding messages): they
/// come from another machine and go to terminals, SVG and HTML, where a
/// raw escape sequence or an XML-invalid character does harm.
fn sanitise_strings(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(clean) = sysgauge_core::text::for_terminal(s) {
                *s = clean;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(sanitise_strings),
        Value::Object(o) => {
            let old = std::mem::take(o);
            for (k, mut val) in old {
                sanitise_strings(&mut val);
                o.insert(sysgauge_core::text::for_terminal(&k).into_owned(), val);
            }
        }
        _ => {}
    }
}

/// A run id as sysgauge writes and looks runs up by: a UUID in lower case
/// with hyphens. Other spellings of a UUID (upper case, braces, `urn:uuid:`,
/// spaces around it) are the same run and are written so, so that a copy
/// of a run stored already is recognised as one; anything else is refused,
/// as the run's permanent link (`/runs/RUN_ID`) and `results show` could
/// never find it.
pub fn canonical_run_id(id: &str) -> Result<String, String> {
    Uuid::parse_str(id.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| {
            format!(
                "run_id '{id}' is not a UUID (sysgauge writes one such as \
                 3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f)"
            )
        })
}

/// What CSV import checks row by row, for a JSON run record: a finished
/// run, sane ids and time stamps, each case once, every number one the
/// comparisons and the database can hold. `which` names the record in
/// messages; the caller adds the file.
fn check_run(run: &RunRecord, which: &str) -> Result<(), String> {
    if run.status == RunStatus::Running {
        return Err(format!(
            "{which} has status running: it was still being written (or its process died); \
             import a finished run"
        ));
    }
    let now = Utc::now();
    check_time(run.started_at, now).map_err(|m| format!("{which}: started_at {m}"))?;
    if let Some(f) = run.finished_at {
        check_time(f, now).map_err(|m| format!("{which}: finished_at {m}"))?;
        // The wall clock may be stepped back while a run goes on (NTP), as
        // far as the skew allowed for machines' clocks; more, and the time
        // stamps are not of one run.
        if f < run.started_at - chrono::Duration::seconds(CLOCK_SKEW_ALLOWANCE_SECONDS) {
            return Err(format!(
                "{which}: finished_at {f} is before started_at {} (a run ends after it starts)",
                run.started_at
            ));
        }
    }
    let mut cases = HashSet::new();
    for r in &run.results {
        let id = &r.bench_id;
        check_result(r, id).map_err(|m| format!("{which}: {m}"))?;
        if !cases.insert((id.as_str(), r.params.canonical())) {
            return Err(format!(
                "{which}: {id} with params '{}' appears twice (one case, one result)",
                r.params.canonical()
            ));
        }
        check_time(r.started_at, now).map_err(|m| format!("{which}: {id} started_at {m}"))?;
    }
    Ok(())
}

/// What every imported result must be, whatever read it (sysgauge JSON,
/// CSV, any tool's importer): a well-formed benchmark id, a duration, named
/// metrics each once, and every sample a number the comparisons, the
/// summaries and the database can hold ([`check_number`]). One rule set,
/// so that what one importer stores another can read back. `case` names
/// the result in messages (its id, with its params where they tell cases
/// apart).
pub fn check_result(r: &ResultRecord, case: &str) -> Result<(), String> {
    let id = &r.bench_id;
    if !is_importable_bench_id(id) {
        return Err(format!(
            "benchmark id '{id}' is malformed ({BENCH_ID_RULE})"
        ));
    }
    if !r.duration_seconds.is_finite()
        || r.duration_seconds < 0.0
        || r.duration_seconds > MAX_IMPORT_VALUE
    {
        return Err(format!(
            "{case} duration_seconds {} is not a duration",
            r.duration_seconds
        ));
    }
    let mut names = HashSet::new();
    for m in &r.metrics {
        if m.name.trim().is_empty() || m.name.chars().any(char::is_control) {
            return Err(format!(
                "{case} has a metric with an empty or unprintable name"
            ));
        }
        if !names.insert(m.name.as_str()) {
            return Err(format!("{case} metric '{}' appears twice", m.name));
        }
        for (k, v) in m.samples.iter().enumerate() {
            check_number(*v, m.better)
                .map_err(|e| format!("{case} metric '{}' sample {}: {e}", m.name, k + 1))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
