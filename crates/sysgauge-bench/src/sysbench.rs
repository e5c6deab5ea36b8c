//! Reading sysbench's `cpu` and `memory` test output (sysbench 1.0, as
//! Debian ships it) for `sysgauge import`. It spans two families (cpu and
//! mem), so it lives beside them, like `openssl_speed`.
//!
//! A run prints a banner (`sysbench 1.0.20 (using system LuaJIT …)`),
//! `Number of threads: N`, the test's options — cpu: `Prime numbers limit:
//! N`; memory: `block size: 1KiB`, `total size: 102400MiB`, `operation:
//! write`, `scope: global` — then its result — cpu: `events per second:
//! 3510.80`; memory: `Total operations: N (X per second)` and `2048.00 MiB
//! transferred (18233.80 MiB/sec)` — and its general statistics and
//! latency (`min`, `avg`, `max`, `95th percentile` in ms; the percentile
//! follows `--percentile`).
//!
//! Cases: `sysbench.cpu` with params `cpu_max_prime` and `threads`, metric
//! `events` (events per second); `sysbench.memory` with params
//! `block_size`, `total_size` (bytes), `operation`, `access_mode`, `scope`
//! and `threads`, metrics `throughput` (MB/s, from sysbench's MiB/sec) and
//! `operations` (per second). Both add `latency_avg`, `latency_p95` (or
//! the percentile asked for) and `latency_max` in ms; a latency printed as
//! 0.00 (under sysbench's resolution of 10 µs) is left out. sysbench does
//! not print the memory test's access mode, so it is read from a command
//! line pasted above the output (`$ sysbench memory
//! --memory-access-mode=rnd run`), else it is sysbench's default, `seq`
//! (the details say which, and a warning says what was assumed: a `rnd`
//! run stored as `seq` would otherwise pass unseen). Several runs in one text (each starts at its
//! banner or command line) are samples of their case when their params
//! are equal.
//!
//! sysbench's prime test and memory loop are not this crate's kernels, so
//! the cases keep sysbench's names and compare with other sysbench
//! imports.

use chrono::{DateTime, Utc};
use sysgauge_compare::import::MAX_IMPORT_VALUE;
use sysgauge_core::record::{Metric, Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{add_run, line_error as err, metric, LineError};

pub type SysbenchError = LineError;

pub const CPU: &str = "sysbench.cpu";
pub const MEMORY: &str = "sysbench.memory";

/// What a sysbench text says.
#[derive(Debug, Clone, PartialEq)]
pub struct SysbenchReport {
    /// `1.0.20`, from the banner.
    pub version: Option<String>,
    pub results: Vec<ResultRecord>,
    /// What was assumed, one line each: a memory run's access mode that
    /// no pasted command line gave.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Cpu,
    Memory,
}

/// One run of sysbench, as read so far.
#[derive(Debug, Default)]
struct Run {
    /// The line it starts on.
    start: usize,
    test: Option<Test>,
    threads: Option<u64>,
    max_prime: Option<u64>,
    block_size: Option<u64>,
    total_size: Option<u64>,
    operation: Option<String>,
    scope: Option<String>,
    access_mode: Option<String>,
    events_per_s: Option<f64>,
    ops_per_s: Option<f64>,
    mib_per_s: Option<f64>,
    latencies: Vec<(String, f64)>,
    total_time: Option<String>,
    /// A test this parser does not read (fileio, oltp …), named.
    other_test: Option<&'static str>,
    /// Whether the run has printed anything of its own yet.
    started: bool,
}

/// Parse sysbench output; results are stamped `at`.
pub fn parse_sysbench(text: &str, at: DateTime<Utc>) -> Result<SysbenchReport, SysbenchError> {
    let mut version = None;
    let mut runs: Vec<Run> = Vec::new();
    let mut run = Run {
        start: 1,
        ..Run::default()
    };
    let mut in_latency = false;
    let mut last = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last = n;
        let line = raw.trim();
        if line.is_empty() {
            in_latency = false;
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let command = words.iter().position(|w| *w == "sysbench").filter(|&k| {
            words[k + 1..].iter().any(|w| w.starts_with("--")) || words.last() == Some(&"run")
        });
        let banner =
            words.first() == Some(&"sysbench") && words.get(2).is_some_and(|w| w.starts_with('('));
        if command.is_some() || banner {
            // A new run, unless this one has only its command line so far.
            if run.started || (command.is_some() && run.access_mode.is_some()) {
                let next = Run {
                    start: n,
                    ..Run::default()
                };
                runs.push(std::mem::replace(&mut run, next));
            }
            if banner {
                version.get_or_insert_with(|| words[1].to_string());
                run.started = true;
            }
            if let Some(k) = command {
                for w in &words[k + 1..] {
                    if let Some(mode) = w.strip_prefix("--memory-access-mode=") {
                        run.access_mode = Some(mode.to_string());
                    }
                }
            }
            continue;
        }
        run.started = true;
        if line == "Latency (ms):" {
            in_latency = true;
            continue;
        }
        let Some((label, value)) = line.split_once(':') else {
            // `2048.00 MiB transferred (18233.80 MiB/sec)`
            if let Some(rest) = line.split_once(" MiB transferred (").map(|x| x.1) {
                let rate = rest
                    .trim_end_matches(')')
                    .trim_end_matches("MiB/sec")
                    .trim();
                run.mib_per_s = Some(positive(rate, n, "the MiB/sec")?);
                run.test = Some(Test::Memory);
            }
            continue;
        };
        let (label, value) = (label.trim(), value.trim());
        if in_latency {
            let name = match label {
                "avg" => Some("latency_avg".to_string()),
                "max" => Some("latency_max".to_string()),
                l if l.ends_with("th percentile") => {
                    let p = l.trim_end_matches("th percentile").trim();
                    p.parse::<u32>()
                        .ok()
                        .filter(|p| (1..=100).contains(p))
                        .map(|p| format!("latency_p{p}"))
                }
                _ => None,
            };
            if let Some(name) = name {
                let v = number(value, n, label)?;
                run.latencies.push((name, v));
            }
            continue;
        }
        match label {
            "Number of threads" => run.threads = Some(whole(value, n, label)?),
            "Prime numbers limit" => {
                run.max_prime = Some(whole(value, n, label)?);
                run.test = Some(Test::Cpu);
            }
            "events per second" => {
                run.events_per_s = Some(positive(value, n, label)?);
                run.test = Some(Test::Cpu);
            }
            "block size" => run.block_size = Some(size(value, n, label)?),
            "total size" => run.total_size = Some(size(value, n, label)?),
            "operation" => run.operation = Some(value.to_string()),
            "scope" => run.scope = Some(value.to_string()),
            "total time" => run.total_time = Some(value.to_string()),
            "Total operations" => {
                // `2048 (18233.80 per second)`
                let per_s = value
                    .split_once('(')
                    .map(|x| {
                        x.1.trim_end_matches(')')
                            .trim_end_matches("per second")
                            .trim()
                    })
                    .ok_or_else(|| err(n, format!("'{value}' has no '(N per second)'")))?;
                run.ops_per_s = Some(positive(per_s, n, "operations per second")?);
                run.test = Some(Test::Memory);
            }
            "File operations" | "Extra file open flags" => run.other_test = Some("fileio"),
            "SQL statistics" => run.other_test = Some("an OLTP"),
            _ => {}
        }
        if line.starts_with("Running memory speed test") {
            run.test = Some(Test::Memory);
        }
    }
    runs.push(run);
    let mut results: Vec<ResultRecord> = Vec::new();
    let mut warnings = Vec::new();
    for r in runs.into_iter().filter(|r| r.started) {
        let Some((id, params, details, metrics)) = case(&r, last)? else {
            continue;
        };
        if id == MEMORY && r.access_mode.is_none() {
            warnings.push(format!(
                "the memory run at line {}: sysbench does not print its access mode and no command line is pasted above it: stored as access_mode=seq (sysbench's default); if it ran with --memory-access-mode=rnd, paste its command line (`$ sysbench memory --memory-access-mode=rnd … run`) above the output",
                r.start
            ));
        }
        match results
            .iter_mut()
            .find(|x| x.bench_id == id && x.params == params)
        {
            Some(x) => add_run(x, metrics),
            None => results.push(ResultRecord {
                details,
                started_at: at,
                ..ResultRecord::new(id, params, Status::Ok, metrics)
            }),
        }
    }
    if results.is_empty() {
        return Err(err(
            last.max(1),
            "no sysbench cpu or memory result ('events per second:' or 'MiB transferred' lines)",
        ));
    }
    if let Some(v) = &version {
        for r in &mut results {
            r.details.insert("sysbench_version", v.as_str());
        }
    }
    Ok(SysbenchReport {
        version,
        results,
        warnings,
    })
}

type Case = (&'static str, Params, Params, Vec<Metric>);

/// One run as a case; `None` for a run that printed nothing to read
/// (a banner only). `last` is the text's last line, where what is missing
/// at the end is reported.
fn case(r: &Run, last: usize) -> Result<Option<Case>, SysbenchError> {
    if let Some(t) = r.other_test {
        return Err(err(
            r.start,
            format!("this sysbench run is {t} test; only cpu and memory are read"),
        ));
    }
    let Some(test) = r.test else {
        if r.threads.is_none() {
            // Nothing of a run: a banner, or text around the output.
            return Ok(None);
        }
        return Err(err(
            r.start,
            "this sysbench run is neither the cpu nor the memory test (only those are read)",
        ));
    };
    let threads = r.threads.unwrap_or(1);
    let mut details = Params::new().with("source", "sysbench");
    if let Some(t) = &r.total_time {
        details.insert("total_time", t.as_str());
    }
    let (id, params, mut metrics) = match test {
        Test::Cpu => {
            let eps = r
                .events_per_s
                .ok_or_else(|| cut_short(r, last, "cpu", "'events per second:'"))?;
            let params = Params::new()
                .with("cpu_max_prime", r.max_prime.unwrap_or(10_000))
                .with("threads", threads);
            let m = metric("events", Unit::OpsPerSec, Better::Higher, vec![eps])
                .map_err(|e| err(r.start, e.to_string()))?;
            (CPU, params, vec![m])
        }
        Test::Memory => {
            let mib = r
                .mib_per_s
                .ok_or_else(|| cut_short(r, last, "memory", "'MiB transferred (… MiB/sec)'"))?;
            details.insert(
                "access_mode_from",
                if r.access_mode.is_some() {
                    "command line"
                } else {
                    "sysbench's default"
                },
            );
            let params = Params::new()
                .with("block_size", r.block_size.unwrap_or(1024))
                .with("total_size", r.total_size.unwrap_or(100 << 30))
                .with("operation", r.operation.as_deref().unwrap_or("write"))
                .with("access_mode", r.access_mode.as_deref().unwrap_or("seq"))
                .with("scope", r.scope.as_deref().unwrap_or("global"))
                .with("threads", threads);
            let mut m = vec![metric(
                "throughput",
                Unit::MBps,
                Better::Higher,
                vec![mib * 1.048_576],
            )
            .map_err(|e| err(r.start, e.to_string()))?];
            if let Some(ops) = r.ops_per_s {
                m.extend(metric("operations", Unit::OpsPerSec, Better::Higher, vec![ops]).ok());
            }
            (MEMORY, params, m)
        }
    };
    for (name, v) in &r.latencies {
        if *v > 0.0 {
            metrics.extend(metric(name, Unit::Milliseconds, Better::Lower, vec![*v]).ok());
        }
    }
    Ok(Some((id, params, details, metrics)))
}

/// A run whose result line is missing, reported at the text's last line.
fn cut_short(r: &Run, last: usize, test: &str, line: &str) -> SysbenchError {
    err(
        last,
        format!(
            "the {test} run from line {} has no {line} line (cut short?)",
            r.start
        ),
    )
}

fn number(s: &str, n: usize, what: &str) -> Result<f64, SysbenchError> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0 && *v <= MAX_IMPORT_VALUE)
        .ok_or_else(|| err(n, format!("{what} '{s}' is not a number sysgauge can hold")))
}

fn positive(s: &str, n: usize, what: &str) -> Result<f64, SysbenchError> {
    match number(s, n, what)? {
        v if v > 0.0 => Ok(v),
        _ => Err(err(n, format!("{what} is 0: the run measured nothing"))),
    }
}

fn whole(s: &str, n: usize, what: &str) -> Result<u64, SysbenchError> {
    s.parse::<u64>()
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| err(n, format!("{what} '{s}' is not a whole number above 0")))
}

/// `1024KiB`, `102400MiB` (sysbench prints these two) or `1GiB` → bytes.
fn size(s: &str, n: usize, what: &str) -> Result<u64, SysbenchError> {
    let units: [(&str, u64); 5] = [
        ("KiB", 1 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
        ("TiB", 1 << 40),
        ("B", 1),
    ];
    units
        .iter()
        .find_map(|(u, f)| s.strip_suffix(u).map(|body| (body.trim(), *f)))
        .and_then(|(body, f)| body.parse::<u64>().ok().and_then(|v| v.checked_mul(f)))
        .filter(|&v| v > 0)
        .ok_or_else(|| err(n, format!("{what} '{s}' is not a size such as 1024KiB")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_family::util::metric_value as value;

    #[test]
    fn cpu_runs() {
        let r = parse_sysbench(fixture!("sysbench", "1.0.20-cpu.txt"), Utc::now()).unwrap();
        assert_eq!(r.version.as_deref(), Some("1.0.20"));
        assert_eq!(r.results.len(), 1);
        let c = &r.results[0];
        assert_eq!(c.bench_id, CPU);
        assert_eq!(c.params.canonical(), "cpu_max_prime=10000,threads=1");
        assert_eq!(c.metrics[0].name, "events");
        assert_eq!(value(c, "events"), 3510.80);
        assert_eq!(value(c, "latency_avg"), 0.28);
        assert_eq!(value(c, "latency_p95"), 0.32);
        assert_eq!(value(c, "latency_max"), 2.01);
        assert_eq!(c.details.get_str("total_time"), Some("2.0003s"));
        let t2 = parse_sysbench(
            fixture!("sysbench", "1.0.20-cpu-t2-prime20000.txt"),
            Utc::now(),
        )
        .unwrap();
        let c = &t2.results[0];
        assert_eq!(c.params.canonical(), "cpu_max_prime=20000,threads=2");
        assert_eq!(value(c, "events"), 2687.33);
    }

    #[test]
    fn memory_runs() {
        let r = parse_sysbench(
            fixture!("sysbench", "1.0.20-memory-1M-2G-write.txt"),
            Utc::now(),
        )
        .unwrap();
        let m = &r.results[0];
        assert_eq!(m.bench_id, MEMORY);
        assert_eq!(
            m.params.canonical(),
            "access_mode=seq,block_size=1048576,operation=write,scope=global,threads=1,total_size=2147483648"
        );
        assert_eq!(m.metrics[0].name, "throughput");
        assert_eq!(value(m, "throughput"), 18233.80 * 1.048_576);
        assert_eq!(value(m, "operations"), 18233.80);
        assert_eq!(value(m, "latency_avg"), 0.05);
        assert_eq!(
            m.details.get_str("access_mode_from"),
            Some("sysbench's default")
        );
        // What was assumed is said.
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(
            r.warnings[0].starts_with("the memory run at line 1: ")
                && r.warnings[0].contains("access_mode=seq")
                && r.warnings[0].contains("--memory-access-mode=rnd"),
            "{:?}",
            r.warnings
        );
        let rnd = parse_sysbench(
            fixture!("sysbench", "1.0.20-memory-rnd-read-t2-with-command.txt"),
            Utc::now(),
        )
        .unwrap();
        let m = &rnd.results[0];
        assert_eq!(
            m.params.canonical(),
            "access_mode=rnd,block_size=1024,operation=read,scope=global,threads=2,total_size=107374182400"
        );
        assert_eq!(value(m, "operations"), 1848083.37);
        assert_eq!(value(m, "throughput"), 1804.77 * 1.048_576);
        // avg and the 95th percentile printed 0.00: left out.
        let names: Vec<&str> = m.metrics.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["throughput", "operations", "latency_max"]);
        assert_eq!(m.details.get_str("access_mode_from"), Some("command line"));
        assert!(rnd.warnings.is_empty(), "{:?}", rnd.warnings);
        let cpu = parse_sysbench(fixture!("sysbench", "1.0.20-cpu.txt"), Utc::now()).unwrap();
        assert!(cpu.warnings.is_empty(), "{:?}", cpu.warnings);
    }

    #[test]
    fn several_runs_pasted_together() {
        let cpu = fixture!("sysbench", "1.0.20-cpu.txt");
        let text = format!(
            "{cpu}\n{cpu}\n{}\n{}",
            fixture!("sysbench", "1.0.20-cpu-t2-prime20000.txt"),
            fixture!("sysbench", "1.0.20-memory-1M-2G-write.txt")
        )
        .replacen("3510.80", "3400.00", 1);
        let r = parse_sysbench(&text, Utc::now()).unwrap();
        let ids: Vec<String> = r
            .results
            .iter()
            .map(|x| format!("{} {}", x.bench_id, x.params.canonical()))
            .collect();
        assert_eq!(ids.len(), 3, "{ids:?}");
        // The same case twice: two samples.
        assert_eq!(r.results[0].metrics[0].samples, [3400.00, 3510.80]);
        assert_eq!(r.results[1].params.get_u64("cpu_max_prime"), Some(20000));
        assert_eq!(r.results[2].bench_id, MEMORY);
    }

    #[test]
    fn bad_input_names_the_line() {
        let cpu = fixture!("sysbench", "1.0.20-cpu.txt");
        let e = parse_sysbench(&cpu.replace("3510.80", "fast"), Utc::now()).unwrap_err();
        assert_eq!(e.line, 15);
        assert!(e.message.contains("'fast'"), "{e}");
        let cut: String = cpu.lines().take(12).map(|l| format!("{l}\n")).collect();
        let e = parse_sysbench(&cut, Utc::now()).unwrap_err();
        assert_eq!(e.line, 12);
        assert!(e.message.contains("no 'events per second:'"), "{e}");
        let mem = fixture!("sysbench", "1.0.20-memory-1M-2G-write.txt");
        let e = parse_sysbench(&mem.replace("1024KiB", "1024 apples"), Utc::now()).unwrap_err();
        assert_eq!(e.line, 9);
        let e = parse_sysbench(&cpu.replace("3510.80", "1e300"), Utc::now()).unwrap_err();
        assert!(e.message.contains("'1e300'"), "{e}");
        let e = parse_sysbench(&cpu.replace("3510.80", "0.00"), Utc::now()).unwrap_err();
        assert!(e.message.contains("measured nothing"), "{e}");
        let none = parse_sysbench("hello\n", Utc::now()).unwrap_err();
        assert!(
            none.message.contains("no sysbench cpu or memory result"),
            "{none}"
        );
        let fileio = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nNumber of threads: 1\nExtra file open flags: (none)\nFile operations:\n    reads/s:                      1.0\n";
        let e = parse_sysbench(fileio, Utc::now()).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("fileio"), "{e}");
        let threads = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\nNumber of threads: 1\nGeneral statistics:\n    total time:                          10.0001s\n";
        let e = parse_sysbench(threads, Utc::now()).unwrap_err();
        assert!(e.message.contains("neither the cpu nor the memory"), "{e}");
    }
}
