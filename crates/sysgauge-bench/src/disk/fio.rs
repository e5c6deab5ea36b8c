//! Reading fio's `--output-format=json` (and `json+`) for `sysgauge
//! import`.
//!
//! fio writes `"fio version"`, `"global options"` and `"jobs"` (or, as a
//! client of `fio --server`s, `"client_stats"`, each job with the
//! `hostname` it ran on, then an `All clients` sum, which is left out).
//! Each job has its `"job options"` (as given, text) and a section per
//! direction, `read`, `write` and `trim`: `io_bytes`, `bw_bytes` (`bw`
//! in KiB/s before fio 3), `iops`, and completion latency `clat_ns` (`clat`
//! in µs before fio 3) with `mean`, `max` and `percentile`s. `json+` adds
//! the latency histogram, which is not needed here.
//!
//! One case per job and direction that did I/O: id `fio.<rw>` (`fio.read`,
//! `fio.randrw`, `fio.trimwrite`; `readwrite` is `rw`), params `direction`,
//! `block_size` (bytes; a per-direction list such as `bs=8k,32k` is read
//! per direction; a range is kept as text), `iodepth`, `numjobs`, `direct`,
//! `ioengine`, `rwmixread` for mixed patterns, and `size` when the job
//! gives one; an option a job does not give has fio's default (bs 4k,
//! iodepth 1, numjobs 1, buffered I/O, psync), so an explicit default and
//! a left-out one are the same case. Sizes follow fio's units: `4k` is 4096
//! and `4ki` 4000 unless `kb_base=1000` says otherwise. Metrics:
//! `throughput` (MB/s), `iops`, and the completion latency's
//! `latency_mean`, `latency_median`, `latency_p95`, `latency_p99`,
//! `latency_p99_9`, `latency_max` (ns). A rate or latency fio reports as 0
//! in a direction that did I/O (under its resolution: fio 2's `bw` below
//! 1 KiB/s, a percentile below 1 µs in its `clat`) is no measure of it: it
//! is left out with a warning naming the field, never stored as 0 nor
//! dropped without a word. Identical jobs of one file are samples of
//! one case. A job that failed (`error` not 0) or whose clones are
//! reported one by one (`numjobs` > 1 without `--group_reporting`) is left
//! out with a warning.
//!
//! Which fio jobs are this family's cases: `disk.seq-read` and
//! `disk.seq-write` issue one `pread`/`pwrite` of the block size at a time,
//! O_DIRECT, on one thread, sequentially through a file written in full
//! beforehand, each write pass ending with `fdatasync` inside the timing
//! (`seq.rs`). fio does the same with `rw=read` or `rw=write`, `direct=1`,
//! a synchronous engine (`psync`, `sync`, `pvsync`, `pvsync2`: one I/O at
//! a time whatever the iodepth), `numjobs=1`, one file of the job's
//! `size`, no rate limit or think time, and for writes `overwrite=1` (the
//! file written in full first; without it fio writes into freshly
//! allocated extents) and `end_fsync=1` (counted in fio's run time). One
//! more thing must agree: the I/O buffer. From 256 KiB (`io::HUGE_FROM`)
//! this family's buffer is a transparent huge page, so a block is one
//! segment of one request; fio's buffer is ordinary pages, and a 1 MiB
//! block of 256 pages is more segments than virtio-blk takes (254), so the
//! kernel splits it — here fio read 1 MiB blocks at 800 MB/s (1.2 ms a
//! read) where `disk.seq-read` read them at 1700 MB/s, while at 64 KiB
//! both took 0.16 ms a read. So blocks below 256 KiB (ordinary pages on
//! both sides), or larger ones with fio's buffer in huge pages
//! (`iomem=mmaphuge` or `shmhuge`), are the same method. Such a job
//! becomes a `disk.seq-read` or `disk.seq-write` case with this family's
//! params (`block_size`, `size`, `direct`) and compares with `sysgauge disk
//! --size SIZE --block-size BS`; fio's own knobs go to the details, and its
//! latencies are given in this family's µs. Its latency percentiles are
//! fio's histogram estimates, this family's are exact, so the latency
//! ratios are close but not exact.
//!
//! YABS's disk job (`rw=randrw`, `rwmixread=50`, `iodepth=64`,
//! `numjobs=2` summed by `group_reporting`, `direct=1`, an asynchronous
//! engine: `libaio` or `io_uring`, one block size, one file) is this
//! family's `disk.randrw` (`qd.rs`): one case for both directions, params
//! `block_size`, `direct`, `iodepth`, `numjobs`, `rwmixread` and `size`;
//! metrics `throughput` and `iops` (both directions), then per direction
//! `read_throughput`, `read_iops`, `read_latency_median`, `read_latency_p99`,
//! `read_latency_max` (µs) and the same for `write`. It compares with
//! `sysgauge disk --size SIZE` (YABS: 2 GiB, 512 MiB on ARM).
//! Every other job keeps fio's names.

use super::io::HUGE_FROM;
use super::{qd, Kind};
use crate::foreign_json::{parse_document, At, JsonDocError};
use chrono::{DateTime, Utc};
use sysgauge_core::record::{Metric, ParamValue, Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{add_run, metric};

/// The directions of a job's sections, in fio's order.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// Engines that issue one I/O at a time and wait for it.
const SYNC_ENGINES: [&str; 4] = ["psync", "sync", "pvsync", "pvsync2"];

/// fio's default block size.
const DEFAULT_BS: u64 = 4096;

/// The latency percentiles kept, and their metric names.
const PERCENTILES: [(f64, &str); 4] = [
    (50.0, "latency_median"),
    (95.0, "latency_p95"),
    (99.0, "latency_p99"),
    (99.9, "latency_p99_9"),
];

/// What one fio output says about one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct FioMachine {
    /// The host a client-mode job ran on; `None` for a local fio.
    pub host: Option<String>,
    pub results: Vec<ResultRecord>,
}

/// A parse: the version, the machines, and what was left out and why.
#[derive(Debug, Clone, PartialEq)]
pub struct FioReport {
    /// `fio-3.33`.
    pub version: Option<String>,
    pub machines: Vec<FioMachine>,
    pub warnings: Vec<String>,
}

/// A job's options: its own, then the global ones.
struct Options<'a> {
    job: Option<At<'a>>,
    global: Option<At<'a>>,
}

impl<'a> Options<'a> {
    /// The first of `names` set, as text.
    fn get(&self, names: &[&str]) -> Result<Option<(String, At<'a>)>, JsonDocError> {
        for scope in [&self.job, &self.global].into_iter().flatten() {
            for n in names {
                if let Some(v) = scope.get(n) {
                    let text = match v.value {
                        serde_json::Value::String(s) => s.trim().to_string(),
                        serde_json::Value::Number(x) => x.to_string(),
                        // A flag option fio lists without a value.
                        serde_json::Value::Bool(b) => u8::from(*b).to_string(),
                        _ => return Err(v.error("is not an option value")),
                    };
                    return Ok(Some((text, v)));
                }
            }
        }
        Ok(None)
    }

    fn whole(&self, names: &[&str], default: u64) -> Result<u64, JsonDocError> {
        match self.get(names)? {
            Some((t, at)) => t
                .parse::<u64>()
                .map_err(|_| at.error(format!("'{t}' is not a whole number"))),
            None => Ok(default),
        }
    }

    fn flag(&self, names: &[&str]) -> Result<Option<bool>, JsonDocError> {
        match self.get(names)? {
            Some((t, at)) => match t.to_ascii_lowercase().as_str() {
                "" | "1" | "true" | "yes" | "on" => Ok(Some(true)),
                "0" | "false" | "no" | "off" => Ok(Some(false)),
                _ => Err(at.error(format!("'{t}' is not 0 or 1"))),
            },
            None => Ok(None),
        }
    }

    /// Whether an option that limits or slows I/O is set to something.
    fn limits(&self, names: &[&str]) -> Result<bool, JsonDocError> {
        Ok(self
            .get(names)?
            .is_some_and(|(t, _)| !t.trim_matches(|c| c == '0' || c == ',').is_empty()))
    }
}

/// A size in fio's units: a whole number with an optional `k`, `m`, `g`,
/// `t`, `p` (1024 based unless `kb_base=1000`) or `ki` … (the other base),
/// and an optional `b`. `None` for anything else (ranges, percentages).
pub fn fio_size(text: &str, kb_base_1000: bool) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    let (number, suffix) = t.split_at(digits);
    let n: u64 = number.parse().ok()?;
    let suffix = suffix.trim();
    let suffix = suffix.strip_suffix('b').unwrap_or(suffix);
    if suffix.is_empty() {
        return Some(n);
    }
    let (prefix, swapped) = match suffix.strip_suffix('i') {
        Some(p) => (p, true),
        None => (suffix, false),
    };
    let power = match prefix {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return None,
    };
    // kb_base=1024 (the default) reads `k` as 1024 and `ki` as 1000;
    // kb_base=1000 the other way round.
    let base: u64 = if swapped == kb_base_1000 { 1024 } else { 1000 };
    n.checked_mul(base.checked_pow(power)?)
}

/// The block size for direction `d` (0 read, 1 write, 2 trim) of a `bs`
/// option: one value for all, or a comma-separated list where a value
/// not followed by a comma also holds for the directions after it.
fn block_size_for(spec: &str, d: usize, kb_base_1000: bool) -> Option<u64> {
    let parts: Vec<&str> = spec.split(',').collect();
    let part = parts.get(d).or(parts.last()).copied().unwrap_or("").trim();
    if part.is_empty() {
        Some(DEFAULT_BS)
    } else {
        fio_size(part, kb_base_1000)
    }
}

/// A size option as a param value: bytes, or the text as given when it is
/// not one size (a range, a percentage).
fn size_param(text: &str, kb_base_1000: bool) -> ParamValue {
    match fio_size(text, kb_base_1000) {
        Some(b) => ParamValue::from(b),
        None => ParamValue::Text(text.to_string()),
    }
}

/// One direction of one job, read.
struct Case {
    host: Option<String>,
    id: String,
    params: Params,
    details: Params,
    metrics: Vec<Metric>,
}

/// Parse fio's JSON output; results are stamped `at`.
pub fn parse_fio(text: &str, at: DateTime<Utc>) -> Result<FioReport, JsonDocError> {
    let doc = parse_document(text)?;
    let root = At::root(&doc);
    let version = match root.get("fio version") {
        Some(v) => Some(v.text()?.to_string()),
        None => None,
    };
    let global = root.get("global options");
    let (jobs, client_mode) = match (root.get("jobs"), root.get("client_stats")) {
        (Some(j), _) => (j, false),
        (None, Some(c)) => (c, true),
        (None, None) => {
            return Err(JsonDocError::Field {
                field: "jobs".to_string(),
                message: "missing (not the output of fio --output-format=json?)".to_string(),
            })
        }
    };
    let jobs = jobs.items()?;
    // Clones of a job reported one by one: the same name, group and host
    // more than once with numjobs > 1.
    let mut names: Vec<(String, i64, Option<String>)> = Vec::new();
    for j in &jobs {
        names.push((
            j.require("jobname")?.text()?.to_string(),
            j.get("groupid").and_then(|g| g.value.as_i64()).unwrap_or(0),
            host_of(j)?,
        ));
    }
    let mut cases: Vec<Case> = Vec::new();
    let mut warnings = Vec::new();
    let mut saw_job = false;
    let mut cloned: Vec<&(String, i64, Option<String>)> = Vec::new();
    for (j, key) in jobs.iter().zip(&names) {
        let name = key.0.as_str();
        if client_mode && name == "All clients" {
            continue;
        }
        saw_job = true;
        let job = j.clone().labelled(name);
        let error = job.get("error").and_then(|e| e.value.as_i64()).unwrap_or(0);
        if error != 0 {
            warnings.push(format!("job '{name}' failed (fio error {error}); left out"));
            continue;
        }
        let options = Options {
            job: job.get("job options"),
            global: global.clone(),
        };
        let numjobs = options.whole(&["numjobs"], 1)?;
        if numjobs > 1 && names.iter().filter(|n| *n == key).count() > 1 {
            if !cloned.contains(&key) {
                cloned.push(key);
                warnings.push(format!(
                    "job '{name}' ran {numjobs} clones reported one by one; left out (run fio with --group_reporting to import their sum)"
                ));
            }
            continue;
        }
        cases.extend(job_cases(
            &job,
            &options,
            key.2.clone(),
            version.as_deref(),
            &mut warnings,
        )?);
    }
    if !saw_job {
        return Err(JsonDocError::Field {
            field: if client_mode { "client_stats" } else { "jobs" }.to_string(),
            message: "holds no job".to_string(),
        });
    }
    let mut machines: Vec<FioMachine> = Vec::new();
    for c in cases {
        let m = match machines.iter().position(|m| m.host == c.host) {
            Some(k) => &mut machines[k],
            None => {
                machines.push(FioMachine {
                    host: c.host.clone(),
                    results: Vec::new(),
                });
                let last = machines.len() - 1;
                &mut machines[last]
            }
        };
        match m
            .results
            .iter_mut()
            .find(|r| r.bench_id == c.id && r.params == c.params)
        {
            Some(r) => add_run(r, c.metrics),
            None => m.results.push(ResultRecord {
                details: c.details,
                started_at: at,
                ..ResultRecord::new(&c.id, c.params, Status::Ok, c.metrics)
            }),
        }
    }
    machines.retain(|m| !m.results.is_empty());
    if machines.is_empty() {
        let why = if warnings.is_empty() {
            "no job did any I/O".to_string()
        } else {
            warnings.join("; ")
        };
        return Err(JsonDocError::Field {
            field: if client_mode { "client_stats" } else { "jobs" }.to_string(),
            message: format!("nothing to import: {why}"),
        });
    }
    Ok(FioReport {
        version,
        machines,
        warnings,
    })
}

/// The host of a client-mode job: its `hostname`, with its `port` when
/// that is not fio's default (two servers on one host).
fn host_of(job: &At<'_>) -> Result<Option<String>, JsonDocError> {
    let Some(h) = job.get("hostname") else {
        return Ok(None);
    };
    let host = h.text()?.trim().to_string();
    if host.is_empty() {
        return Err(h.error("is empty"));
    }
    let port = job.get("port").and_then(|p| p.value.as_u64());
    Ok(Some(match port {
        Some(p) if p != 8765 => format!("{host}:{p}"),
        _ => host,
    }))
}

/// The cases of one job: one per direction that did I/O.
fn job_cases(
    job: &At<'_>,
    o: &Options<'_>,
    host: Option<String>,
    version: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Case>, JsonDocError> {
    let name = job.require("jobname")?.text()?;
    let rw = match o.get(&["rw", "readwrite"])? {
        Some((t, at)) => {
            let pattern = t
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if pattern.is_empty() || !pattern.chars().all(|c| c.is_ascii_lowercase()) {
                return Err(at.error(format!("'{t}' is not an fio rw pattern")));
            }
            if pattern == "readwrite" {
                "rw".to_string()
            } else {
                pattern
            }
        }
        None => "read".to_string(),
    };
    let kb_base_1000 = o.whole(&["kb_base"], 1024)? == 1000;
    let bs = o.get(&["bs", "blocksize"])?;
    let bs_range = o.get(&["bsrange", "blocksize_range"])?;
    let iodepth = o.whole(&["iodepth"], 1)?;
    let numjobs = o.whole(&["numjobs"], 1)?;
    let direct = match o.flag(&["direct"])? {
        Some(d) => d,
        None => o.flag(&["buffered"])?.is_some_and(|b| !b),
    };
    let ioengine = o
        .get(&["ioengine"])?
        .map(|(t, _)| t)
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "psync".to_string());
    let size = o.get(&["size"])?;
    let mixed = rw.contains("rw");
    let rwmixread = if mixed {
        let read = o.get(&["rwmixread"])?;
        let write = o.get(&["rwmixwrite"])?;
        Some(match (read, write) {
            (Some(_), _) => o.whole(&["rwmixread"], 50)?,
            (None, Some(_)) => 100u64.saturating_sub(o.whole(&["rwmixwrite"], 50)?),
            (None, None) => 50,
        })
    } else {
        None
    };
    // What the disk family's sequential cases are: see the module doc.
    let same_method = direct
        && SYNC_ENGINES.contains(&ioengine.as_str())
        && numjobs == 1
        && bs_range.is_none()
        && o.whole(&["nrfiles"], 1)? == 1
        && o.get(&["filesize"])?.is_none()
        && !o.limits(&["rate", "rate_iops", "rate_min", "thinktime"])?;
    // YABS's queue-depth job: see the module doc.
    let yabs_job = rw == "randrw"
        && direct
        && matches!(ioengine.as_str(), "libaio" | "io_uring")
        && iodepth == qd::QD_DEPTH
        && numjobs == qd::QD_JOBS
        && rwmixread == Some(qd::QD_READ_PERCENT)
        && bs_range.is_none()
        && o.whole(&["nrfiles"], 1)? == 1
        && o.get(&["filesize"])?.is_none()
        && !o.limits(&["rate", "rate_iops", "rate_min", "thinktime"])?;
    if yabs_job {
        let one_bs = match &bs {
            Some((t, _)) => block_size_for(t, 0, kb_base_1000)
                .filter(|&b| b > 0 && Some(b) == block_size_for(t, 1, kb_base_1000)),
            None => Some(DEFAULT_BS),
        };
        if let Some(b) = one_bs {
            let size_value = size.as_ref().map(|(t, _)| size_param(t, kb_base_1000));
            if let Some(c) = randrw_case(
                job,
                name,
                b,
                size_value,
                iodepth,
                numjobs,
                host.clone(),
                version,
                &ioengine,
                warnings,
            )? {
                return Ok(vec![c]);
            }
        }
    }
    let huge_buffer = o.get(&["iomem", "mem"])?.is_some_and(|(t, _)| {
        let kind = t.split(':').next().unwrap_or("");
        kind == "mmaphuge" || kind == "shmhuge"
    });
    let mut out = Vec::new();
    for (d, direction) in DIRECTIONS.iter().enumerate() {
        let Some(section) = job.get(direction) else {
            continue;
        };
        let io_bytes = section.require("io_bytes")?.number()?;
        if io_bytes == 0.0 {
            continue;
        }
        let block_size = match (&bs, &bs_range) {
            (_, Some((t, _))) => ParamValue::Text(t.clone()),
            (Some((t, at)), None) => match block_size_for(t, d, kb_base_1000) {
                Some(b) if b > 0 => ParamValue::from(b),
                _ => return Err(at.error(format!("'{t}' is not a block size"))),
            },
            (None, None) => ParamValue::from(DEFAULT_BS),
        };
        let metrics = direction_metrics(&section, warnings)?;
        if metrics.is_empty() {
            continue;
        }
        let size_value = size.as_ref().map(|(t, _)| size_param(t, kb_base_1000));
        // The same kind of buffer as this family's for this block size.
        let same_buffer = match &block_size {
            ParamValue::Int(b) => usize::try_from(*b).is_ok_and(|b| b < HUGE_FROM) || huge_buffer,
            _ => false,
        };
        let mapped = match (rw.as_str(), &size_value) {
            ("read", Some(ParamValue::Int(_))) if same_method && same_buffer => Some(Kind::SeqRead),
            ("write", Some(ParamValue::Int(_)))
                if same_method
                    && same_buffer
                    && o.flag(&["end_fsync"])? == Some(true)
                    && o.flag(&["overwrite"])? == Some(true) =>
            {
                Some(Kind::SeqWrite)
            }
            _ => None,
        };
        let mut details = Params::new().with("source", "fio").with("fio_job", name);
        if let Some(v) = version {
            details.insert("fio_version", v);
        }
        let mut params = Params::new().with("direct", direct);
        params.0.insert("block_size".to_string(), block_size);
        if let Some(s) = size_value {
            params.0.insert("size".to_string(), s);
        }
        let mut metrics = metrics;
        let id = match mapped {
            Some(kind) => {
                // In this family's unit, so its tables read them right.
                metrics = metrics.into_iter().map(in_microseconds).collect();
                details.insert("fio_rw", rw.as_str());
                details.insert("ioengine", ioengine.as_str());
                details.insert("iodepth", iodepth);
                kind.id().to_string()
            }
            None => {
                params.insert("direction", *direction);
                params.insert("iodepth", iodepth);
                params.insert("numjobs", numjobs);
                params.insert("ioengine", ioengine.as_str());
                if let Some(r) = rwmixread {
                    params.insert("rwmixread", r);
                }
                format!("fio.{rw}")
            }
        };
        out.push(Case {
            host: host.clone(),
            id,
            params,
            details,
            metrics,
        });
    }
    Ok(out)
}

/// YABS's job as one `disk.randrw` case: both directions' sections in one
/// record (see the module doc). `None` when neither did I/O.
#[allow(clippy::too_many_arguments)]
fn randrw_case(
    job: &At<'_>,
    name: &str,
    block: u64,
    size: Option<ParamValue>,
    iodepth: u64,
    numjobs: u64,
    host: Option<String>,
    version: Option<&str>,
    ioengine: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<Case>, JsonDocError> {
    let mut total_bw = 0.0;
    let mut total_iops = 0.0;
    let mut per_direction = Vec::new();
    for direction in ["read", "write"] {
        let Some(section) = job.get(direction) else {
            continue;
        };
        if section.require("io_bytes")?.number()? == 0.0 {
            continue;
        }
        for m in direction_metrics(&section, warnings)? {
            let v = m.value();
            match m.name.as_str() {
                "throughput" => total_bw += v,
                "iops" => total_iops += v,
                "latency_median" | "latency_p99" | "latency_max" => {}
                _ => continue,
            }
            let m = in_microseconds(m);
            let renamed = format!("{direction}_{}", m.name);
            per_direction.extend(Metric::new(&renamed, m.unit, m.better, m.samples));
        }
    }
    if per_direction.is_empty() {
        return Ok(None);
    }
    let mut metrics = Vec::new();
    metrics.extend(metric("throughput", Unit::MBps, Better::Higher, vec![total_bw]).ok());
    metrics.extend(metric("iops", Unit::OpsPerSec, Better::Higher, vec![total_iops]).ok());
    metrics.extend(per_direction);
    let mut params = Params::new()
        .with("block_size", block)
        .with("direct", true)
        .with("iodepth", iodepth)
        .with("numjobs", numjobs)
        .with("rwmixread", qd::QD_READ_PERCENT);
    if let Some(s) = size {
        params.0.insert("size".to_string(), s);
    }
    let mut details = Params::new()
        .with("source", "fio")
        .with("fio_job", name)
        .with("fio_rw", "randrw")
        .with("engine", ioengine);
    if let Some(v) = version {
        details.insert("fio_version", v);
    }
    Ok(Some(Case {
        host,
        id: Kind::RandRw.id().to_string(),
        params,
        details,
        metrics,
    }))
}

/// A latency in ns as µs (the disk family's latency unit); any other
/// metric as it is.
fn in_microseconds(m: Metric) -> Metric {
    if m.unit != Unit::Nanoseconds {
        return m;
    }
    let samples = m.samples.iter().map(|v| v / 1e3).collect();
    Metric::new(&m.name, Unit::Microseconds, m.better, samples).unwrap_or(m)
}

/// A direction's metrics: throughput and IOPS, then completion latency.
/// A zero among them is left out, and named in `warnings`.
fn direction_metrics(
    section: &At<'_>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Metric>, JsonDocError> {
    let mut out = Vec::new();
    let mut zeros: Vec<String> = Vec::new();
    let mut keep = |at: &At<'_>, name: &str, unit: Unit, better: Better, v: f64| {
        if v > 0.0 {
            out.extend(metric(name, unit, better, vec![v]).ok());
        } else {
            zeros.push(at.path().to_string());
        }
    };
    match section.get("bw_bytes") {
        Some(b) => {
            let v = b.number()?;
            keep(&b, "throughput", Unit::MBps, Better::Higher, v / 1e6);
        }
        None => {
            let b = section.require("bw")?;
            let v = b.number()?;
            keep(
                &b,
                "throughput",
                Unit::MBps,
                Better::Higher,
                v * 1024.0 / 1e6,
            );
        }
    }
    let iops = section.require("iops")?;
    let v = iops.number()?;
    keep(&iops, "iops", Unit::OpsPerSec, Better::Higher, v);
    let lat = match (section.get("clat_ns"), section.get("clat")) {
        (Some(l), _) => Some((l, Unit::Nanoseconds)),
        (None, Some(l)) => Some((l, Unit::Microseconds)),
        (None, None) => None,
    };
    if let Some((lat, unit)) = lat {
        if let Some(m) = lat.get("mean") {
            let v = m.number()?;
            keep(&m, "latency_mean", unit.clone(), Better::Lower, v);
        }
        if let Some(p) = lat.get("percentile") {
            for (k, v) in p.entries()? {
                let Ok(pct) = k.trim().parse::<f64>() else {
                    return Err(v.error("is not named by a percentile"));
                };
                if let Some((_, name)) = PERCENTILES.iter().find(|(q, _)| (q - pct).abs() < 1e-6) {
                    let x = v.number()?;
                    keep(&v, name, unit.clone(), Better::Lower, x);
                }
            }
        }
        if let Some(m) = lat.get("max") {
            let v = m.number()?;
            keep(&m, "latency_max", unit, Better::Lower, v);
        }
    }
    if !zeros.is_empty() {
        warnings.push(format!(
            "{} 0 where the direction did I/O (under fio's resolution, no measure): left out",
            if zeros.len() == 1 {
                format!("{} is", zeros[0])
            } else {
                format!("{} are", zeros.join(", "))
            }
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_family::util::metric_value as value;

    fn case<'a>(m: &'a FioMachine, id: &str) -> &'a ResultRecord {
        m.results
            .iter()
            .find(|x| x.bench_id == id)
            .unwrap_or_else(|| panic!("no {id} in {m:?}"))
    }

    #[test]
    fn sequential_direct_jobs_below_256k_are_the_disk_familys_cases() {
        let r = parse_fio(fixture!("fio", "3.33-seq-64k-write-read.json"), Utc::now()).unwrap();
        assert_eq!(r.version.as_deref(), Some("fio-3.33"));
        assert_eq!(r.machines.len(), 1);
        let m = &r.machines[0];
        assert_eq!(m.host, None);
        let ids: Vec<&str> = m.results.iter().map(|x| x.bench_id.as_str()).collect();
        assert_eq!(ids, ["disk.seq-write", "disk.seq-read"]);
        let write = case(m, "disk.seq-write");
        assert_eq!(
            write.params.canonical(),
            "block_size=65536,direct=true,size=16777216"
        );
        assert_eq!(write.metrics[0].name, "throughput");
        assert_eq!(write.metrics[0].unit, Unit::MBps);
        assert_eq!(value(write, "throughput"), 381.300363);
        assert_eq!(value(write, "iops"), 5818.181818);
        // Latency in this family's unit, µs (fio's ns / 1000).
        assert!((value(write, "latency_mean") - 160.933914062).abs() < 1e-9);
        assert_eq!(value(write, "latency_median"), 129.536);
        assert_eq!(value(write, "latency_p99"), 284.672);
        assert_eq!(value(write, "latency_max"), 4623.675);
        assert!(write.metrics[2..]
            .iter()
            .all(|m| m.unit == Unit::Microseconds));
        assert_eq!(write.details.get_str("fio_job"), Some("seqwrite"));
        assert_eq!(write.details.get_str("ioengine"), Some("psync"));
        let read = case(m, "disk.seq-read");
        assert_eq!(value(read, "throughput"), 372.827022);
        assert_eq!(value(read, "latency_median"), 162.816);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    /// 1 MiB blocks from fio's ordinary-page buffer are not this family's
    /// method (see the module doc): fio's names, fio's ns.
    #[test]
    fn one_mib_blocks_keep_fios_names() {
        let r = parse_fio(
            fixture!("fio", "3.33-seq-write-read-randread.json"),
            Utc::now(),
        )
        .unwrap();
        let m = &r.machines[0];
        let ids: Vec<&str> = m.results.iter().map(|x| x.bench_id.as_str()).collect();
        assert_eq!(ids, ["fio.write", "fio.read", "fio.randread"]);
        let write = case(m, "fio.write");
        assert_eq!(
            write.params.canonical(),
            "block_size=1048576,direct=true,direction=write,iodepth=1,ioengine=psync,numjobs=1,size=16777216"
        );
        assert_eq!(value(write, "throughput"), 1290.555076);
        assert_eq!(value(write, "latency_mean"), 599694.875);
        assert_eq!(value(write, "latency_median"), 333824.0);
        assert_eq!(value(write, "latency_p99"), 4145152.0);
        assert_eq!(value(write, "latency_max"), 4133756.0);
        assert_eq!(value(case(m, "fio.read"), "throughput"), 838.8608);
        let rand = case(m, "fio.randread");
        assert_eq!(
            rand.params.canonical(),
            "block_size=4096,direct=true,direction=read,iodepth=1,ioengine=psync,numjobs=1,size=16777216"
        );
        assert_eq!(value(rand, "iops"), 11130.434783);
        assert_eq!(value(rand, "throughput"), 45.59026);
        assert_eq!(value(rand, "latency_p99_9"), 2867200.0);
        assert_eq!(rand.metrics[2].unit, Unit::Nanoseconds);
    }

    #[test]
    fn a_mixed_job_has_a_case_per_direction() {
        let r = parse_fio(
            fixture!("fio", "3.33-jsonplus-randrw-libaio.json"),
            Utc::now(),
        )
        .unwrap();
        let m = &r.machines[0];
        assert_eq!(m.results.len(), 2);
        let read = &m.results[0];
        assert_eq!(read.bench_id, "fio.randrw");
        assert_eq!(
            read.params.canonical(),
            "block_size=4096,direct=true,direction=read,iodepth=4,ioengine=libaio,numjobs=1,rwmixread=50,size=4194304"
        );
        assert_eq!(value(read, "throughput"), 39.835607);
        assert_eq!(value(read, "iops"), 9725.490196);
        let write = &m.results[1];
        assert_eq!(write.params.get_str("direction"), Some("write"));
        assert_eq!(value(write, "latency_mean"), 211344.861742);
        assert_eq!(value(write, "latency_p99"), 1712128.0);
    }

    /// YABS's job, run by fio for real: one disk.randrw case.
    #[test]
    fn yabs_job_is_the_queue_depth_case() {
        let r = parse_fio(
            fixture!("fio", "3.33-yabs-randrw-4k-qd64x2.json"),
            Utc::now(),
        )
        .unwrap();
        let m = &r.machines[0];
        assert_eq!(m.results.len(), 1);
        let c = case(m, "disk.randrw");
        assert_eq!(
            c.params.canonical(),
            "block_size=4096,direct=true,iodepth=64,numjobs=2,rwmixread=50,size=16777216"
        );
        assert!((value(c, "read_throughput") - 85.002219).abs() < 1e-9);
        assert!((value(c, "write_throughput") - 85.455968).abs() < 1e-9);
        assert!((value(c, "throughput") - (85.002219 + 85.455968)).abs() < 1e-9);
        assert!((value(c, "iops") - (20752.49501 + 20863.273453)).abs() < 1e-6);
        assert!((value(c, "read_latency_median") - 1728.512).abs() < 1e-9);
        assert!((value(c, "read_latency_p99") - 16449.536).abs() < 1e-9);
        assert!((value(c, "read_latency_max") - 24801.13).abs() < 1e-9);
        assert_eq!(c.details.get_str("engine"), Some("libaio"));
        // The same job at another depth keeps fio's names.
        let other = fixture!("fio", "3.33-yabs-randrw-4k-qd64x2.json")
            .replace("\"iodepth\" : \"64\"", "\"iodepth\" : \"32\"");
        let r = parse_fio(&other, Utc::now()).unwrap();
        let ids: Vec<&str> = r.machines[0]
            .results
            .iter()
            .map(|x| x.bench_id.as_str())
            .collect();
        assert_eq!(ids, ["fio.randrw", "fio.randrw"]);
    }

    #[test]
    fn client_mode_names_the_hosts_and_drops_the_sum() {
        let r = parse_fio(fixture!("fio", "3.33-two-clients.json"), Utc::now()).unwrap();
        let hosts: Vec<Option<&str>> = r.machines.iter().map(|m| m.host.as_deref()).collect();
        assert_eq!(hosts, [Some("127.0.0.1:8767"), Some("127.0.0.1:8768")]);
        for m in &r.machines {
            assert_eq!(m.results.len(), 1);
            let read = case(m, "fio.read");
            assert_eq!(value(read, "throughput"), 699.050666);
            assert_eq!(read.params.get_u64("size"), Some(4 << 20));
            assert_eq!(read.params.get_str("ioengine"), Some("psync"));
        }
    }

    #[test]
    fn notes_before_the_json_are_skipped() {
        let r = parse_fio(fixture!("fio", "3.33-note-before-json.txt"), Utc::now()).unwrap();
        let m = &r.machines[0];
        // iodepth 4 with psync: still one I/O at a time, but not asked
        // for as such; random reads keep fio's name either way.
        let c = case(m, "fio.randread");
        assert_eq!(c.params.get_u64("iodepth"), Some(4));
    }

    #[test]
    fn sizes_in_fios_units() {
        assert_eq!(fio_size("4k", false), Some(4096));
        assert_eq!(fio_size("4KiB", false), Some(4000));
        assert_eq!(fio_size("4KiB", true), Some(4096));
        assert_eq!(fio_size("4kb", true), Some(4000));
        assert_eq!(fio_size("1m", false), Some(1 << 20));
        assert_eq!(fio_size("16M", false), Some(16 << 20));
        assert_eq!(fio_size("4096", false), Some(4096));
        assert_eq!(fio_size("4096b", false), Some(4096));
        assert_eq!(fio_size("1g", false), Some(1 << 30));
        assert_eq!(fio_size("50%", false), None);
        assert_eq!(fio_size("4k-64k", false), None);
        assert_eq!(fio_size("99999999999p", false), None);
        assert_eq!(block_size_for("8k,32k", 0, false), Some(8192));
        assert_eq!(block_size_for("8k,32k", 2, false), Some(32768));
        assert_eq!(block_size_for("8k,32k,", 2, false), Some(DEFAULT_BS));
        assert_eq!(block_size_for(",8k", 0, false), Some(DEFAULT_BS));
        assert_eq!(block_size_for(",8k", 1, false), Some(8192));
    }

    /// The mapping's conditions: a write needs end_fsync and overwrite;
    /// buffered I/O, another engine, a rate limit or 256 KiB blocks and
    /// more from ordinary pages keep fio's names.
    #[test]
    fn only_the_same_method_maps() {
        let doc = |options: &str, dir: &str| {
            format!(
                r#"{{"fio version":"fio-3.33","jobs":[{{"jobname":"j","error":0,
                "job options":{{{options}}},
                "{dir}":{{"io_bytes":1048576,"bw_bytes":1000000,"iops":1.0,
                "clat_ns":{{"mean":10.0,"max":20,"N":1}}}}}}]}}"#
            )
        };
        let id = |options: &str, dir: &str| {
            let r = parse_fio(&doc(options, dir), Utc::now()).unwrap();
            r.machines[0].results[0].bench_id.clone()
        };
        let base = r#""rw":"write","bs":"128k","size":"64m","direct":"1""#;
        assert_eq!(id(base, "write"), "fio.write");
        let full = format!(r#"{base},"end_fsync":"1","overwrite":"1""#);
        assert_eq!(id(&full, "write"), "disk.seq-write");
        assert_eq!(
            id(&format!(r#"{full},"ioengine":"libaio""#), "write"),
            "fio.write"
        );
        assert_eq!(id(&format!(r#"{full},"rate":"10m""#), "write"), "fio.write");
        let big = full.replace("128k", "1m");
        assert_eq!(id(&big, "write"), "fio.write");
        assert_eq!(
            id(
                &format!(r#"{big},"iomem":"mmaphuge:/hugepages/f""#),
                "write"
            ),
            "disk.seq-write"
        );
        let read = r#""rw":"read","bs":"64k","size":"64m","direct":"1","ioengine":"sync""#;
        assert_eq!(id(read, "read"), "disk.seq-read");
        assert_eq!(id(&read.replace("\"1\"", "\"0\""), "read"), "fio.read");
        assert_eq!(
            id(r#""rw":"read","bs":"1m","direct":"1""#, "read"),
            "fio.read"
        );
        // Old fio: bw in KiB/s, clat in µs.
        let old = r#"{"fio version":"fio-2.2.10","jobs":[{"jobname":"j","error":0,
            "job options":{"rw":"randread"},
            "read":{"io_bytes":4096,"bw":1000,"iops":250.0,"clat":{"mean":3.5,"N":1}}}]}"#;
        let r = parse_fio(old, Utc::now()).unwrap();
        let c = &r.machines[0].results[0];
        assert_eq!(value(c, "throughput"), 1.024);
        assert_eq!(value(c, "latency_mean"), 3.5);
        assert_eq!(c.metrics[2].unit, Unit::Microseconds);
    }

    #[test]
    fn failed_jobs_and_clones_are_warnings() {
        let clones = r#"{"jobs":[
            {"jobname":"t","groupid":0,"error":0,"job options":{"numjobs":"2"},"read":{"io_bytes":1,"bw_bytes":5,"iops":1}},
            {"jobname":"t","groupid":0,"error":0,"job options":{"numjobs":"2"},"read":{"io_bytes":1,"bw_bytes":5,"iops":1}},
            {"jobname":"u","groupid":1,"error":0,"read":{"io_bytes":1,"bw_bytes":5,"iops":1}},
            {"jobname":"u","groupid":1,"error":0,"read":{"io_bytes":1,"bw_bytes":7,"iops":1}},
            {"jobname":"bad","groupid":2,"error":5,"read":{"io_bytes":1,"bw_bytes":5,"iops":1}}]}"#;
        let r = parse_fio(clones, Utc::now()).unwrap();
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(
            r.warnings[0].contains("--group_reporting"),
            "{:?}",
            r.warnings
        );
        assert!(r.warnings[1].contains("fio error 5"), "{:?}", r.warnings);
        // Two identical jobs are two samples of one case.
        let m = &r.machines[0];
        assert_eq!(m.results.len(), 1);
        assert_eq!(m.results[0].metrics[0].samples, [5e-6, 7e-6]);
    }

    #[test]
    fn bad_input_names_the_field_or_line() {
        let text = fixture!("fio", "3.33-seq-write-read-randread.json");
        let e = parse_fio(&text[..text.len() / 3], Utc::now()).unwrap_err();
        assert!(e.to_string().contains("cut short"), "{e}");
        let e = parse_fio(
            &text.replacen("\"bw_bytes\" : 1290555076", "\"bw_bytes\" : \"fast\"", 1),
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "jobs[0] (seqwrite).write.bw_bytes: \"fast\" is not a number"
        );
        let e = parse_fio(
            &text.replacen("\"bs\" : \"1m\"", "\"bs\" : \"huge\"", 1),
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "jobs[0] (seqwrite).job options.bs: 'huge' is not a block size"
        );
        let e = parse_fio(r#"{"fio version":"fio-3.33"}"#, Utc::now()).unwrap_err();
        assert!(e.to_string().starts_with("jobs: missing"), "{e}");
        let e = parse_fio(r#"{"jobs":[]}"#, Utc::now()).unwrap_err();
        assert_eq!(e.to_string(), "jobs: holds no job");
        let e = parse_fio(
            r#"{"jobs":[{"jobname":"x","read":{"io_bytes":0,"bw_bytes":0,"iops":0}}]}"#,
            Utc::now(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("no job did any I/O"), "{e}");
        let e = parse_fio(
            r#"{"jobs":[{"jobname":"x","job options":{"iodepth":"deep"},"read":{"io_bytes":1,"bw_bytes":1,"iops":1}}]}"#,
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "jobs[0] (x).job options.iodepth: 'deep' is not a whole number"
        );
    }

    /// The acceptance test's edits: a direction that did I/O with
    /// `bw_bytes` 0, or a `clat_ns` percentile of 0, imported with that
    /// metric silently left out (the headline became `iops`). Still left
    /// out, as no measure, but named.
    #[test]
    fn a_zero_rate_or_latency_is_left_out_with_a_warning() {
        let text = fixture!("fio", "3.33-seq-write-read-randread.json");
        let bw = text.replacen("\"bw_bytes\" : 1290555076", "\"bw_bytes\" : 0", 1);
        assert_ne!(bw, text);
        let r = parse_fio(&bw, Utc::now()).unwrap();
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(
            r.warnings[0]
                .starts_with("jobs[0] (seqwrite).write.bw_bytes is 0 where the direction did I/O"),
            "{:?}",
            r.warnings
        );
        let write = &r.machines[0].results[0];
        assert!(write.metrics.iter().all(|m| m.name != "throughput"));
        let untouched = parse_fio(text, Utc::now()).unwrap();
        assert!(untouched.warnings.is_empty(), "{:?}", untouched.warnings);
    }
}
