//! Reading nbench (BYTEmark 2, Linux/Unix port) output for `sysgauge
//! import`: the table the Raspberry Pi write-ups paste.
//!
//! nbench prints one row per test — `NUMERIC SORT        :  1393.6  :
//! 35.74  :  11.74` (iterations per second, the index against a Pentium 90
//! and against an AMD K6/233) — then the original BYTEmark integer and
//! floating-point indexes and, below `LINUX DATA BELOW`, the machine (`CPU`,
//! `L2 Cache`, `OS`, `C compiler`, `libc`) and the Linux memory, integer and
//! floating-point indexes. A test whose spread was too large is preceded by
//! `** WARNING:` lines.
//!
//! This family's kernels follow the same ten tests, but nbench sizes its
//! arrays at run time until a test lasts long enough, so an nbench number is
//! not the same workload as a `cpu.*` case: the rows keep nbench's names
//! (`nbench.numeric-sort`, metric `iterations` per second) and compare with
//! other nbench imports. The indexes are `nbench.index-memory`,
//! `nbench.index-integer`, `nbench.index-float` (Linux, K6 = 1) and
//! `nbench.bytemark-index-integer`, `nbench.bytemark-index-float`
//! (Pentium 90 = 1); like `cpu.index-*` they are not counted again in an
//! index over cases.

use chrono::{DateTime, Utc};
use sysgauge_core::host::{CacheInfo, HostInfo};
use sysgauge_core::record::{Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{line_error as err, metric, LineError};

pub type NbenchError = LineError;

/// nbench's test names, in its order.
pub const TESTS: [&str; 10] = [
    "NUMERIC SORT",
    "STRING SORT",
    "BITFIELD",
    "FP EMULATION",
    "FOURIER",
    "ASSIGNMENT",
    "IDEA",
    "HUFFMAN",
    "NEURAL NET",
    "LU DECOMPOSITION",
];

/// What an nbench output says.
#[derive(Debug, Clone, PartialEq)]
pub struct NbenchReport {
    pub results: Vec<ResultRecord>,
    /// The `CPU` line of the Linux data, when present.
    pub cpu: Option<String>,
    /// The `OS` line (`Linux 6.1.0-…`).
    pub os: Option<String>,
    /// The `L2 Cache` line (`512 KB`).
    pub l2_cache: Option<String>,
    /// The `libc` line (`libc-2.13.so`; empty on some systems).
    pub libc: Option<String>,
    /// The `C compiler` line.
    pub compiler: Option<String>,
}

impl NbenchReport {
    /// The machine the Linux data names, as host facts: the CPU, its L2
    /// cache, the kernel; the rest unknown.
    pub fn host(&self) -> HostInfo {
        let mut host = HostInfo::default();
        host.cpu.model = self.cpu.clone();
        host.os.kernel_release = self
            .os
            .as_deref()
            .and_then(|o| o.strip_prefix("Linux "))
            .map(|k| k.trim().to_string());
        if let Some(bytes) = self.l2_cache.as_deref().and_then(cache_bytes) {
            host.cpu.caches.push(CacheInfo {
                level: 2,
                kind: "Unified".to_string(),
                size_bytes: bytes,
                shared_by: None,
                instances: None,
            });
        }
        host
    }
}

/// `512 KB`, `2048 KB`, `6 MB` → bytes.
fn cache_bytes(s: &str) -> Option<u64> {
    let mut it = s.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    let unit = match it.next().map(str::to_ascii_uppercase).as_deref() {
        Some("KB" | "K" | "KIB") => 1 << 10,
        Some("MB" | "M" | "MIB") => 1 << 20,
        None | Some("B") => 1,
        _ => return None,
    };
    n.checked_mul(unit).filter(|&b| b > 0)
}

/// `nbench.numeric-sort` for `NUMERIC SORT`.
fn test_id(name: &str) -> String {
    format!("nbench.{}", name.to_ascii_lowercase().replace(' ', "-"))
}

/// Parse nbench output; results are stamped `at`.
pub fn parse_nbench(text: &str, at: DateTime<Utc>) -> Result<NbenchReport, NbenchError> {
    let mut results = Vec::new();
    let mut cpu = None;
    let mut os = None;
    let mut compiler = None;
    let mut l2_cache = None;
    let mut libc = None;
    let mut linux_section = false;
    let mut last = 0;
    let record = |id: String, m: sysgauge_core::Metric| ResultRecord {
        started_at: at,
        details: Params::new().with("source", "nbench"),
        ..ResultRecord::new(&id, Params::new(), Status::Ok, vec![m])
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last = n;
        let line = raw.trim();
        if line.contains("LINUX DATA BELOW") {
            linux_section = true;
            continue;
        }
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim();
        let cells: Vec<&str> = rest.split(':').map(str::trim).collect();
        if let Some(test) = TESTS.iter().find(|t| **t == label) {
            let Some(rate) = cells.first() else {
                return Err(err(n, format!("{test} has no iterations per second")));
            };
            let v = positive(rate, n)?;
            let m = metric("iterations", Unit::ItersPerSec, Better::Higher, vec![v])
                .map_err(|e| err(n, e.to_string()))?;
            results.push(record(test_id(test), m));
            continue;
        }
        let index = match (label, linux_section) {
            ("MEMORY INDEX", true) => Some("nbench.index-memory"),
            ("INTEGER INDEX", true) => Some("nbench.index-integer"),
            ("FLOATING-POINT INDEX", true) => Some("nbench.index-float"),
            ("INTEGER INDEX", false) => Some("nbench.bytemark-index-integer"),
            ("FLOATING-POINT INDEX", false) => Some("nbench.bytemark-index-float"),
            _ => None,
        };
        if let Some(id) = index {
            let v = positive(rest.trim(), n)?;
            let m = metric("index", Unit::Index, Better::Higher, vec![v])
                .map_err(|e| err(n, e.to_string()))?;
            results.push(record(id.to_string(), m));
            continue;
        }
        if linux_section {
            let value = rest.trim();
            let keep = || (!value.is_empty()).then(|| value.to_string());
            match label {
                "CPU" => cpu = keep(),
                "OS" => os = keep(),
                "C compiler" => compiler = keep(),
                "L2 Cache" => l2_cache = keep(),
                "libc" => libc = keep(),
                _ => {}
            }
        }
    }
    if results.is_empty() {
        return Err(err(
            last.max(1),
            "no nbench result ('NUMERIC SORT        :  1393.6  :  35.74  :  11.74' rows or the indexes)",
        ));
    }
    if let Some(c) = &compiler {
        for r in &mut results {
            r.details.insert("compiler", c.as_str());
        }
    }
    Ok(NbenchReport {
        results,
        cpu,
        os,
        l2_cache,
        libc,
        compiler,
    })
}

fn positive(s: &str, n: usize) -> Result<f64, NbenchError> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| err(n, format!("'{s}' is not a positive number")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(r: &NbenchReport, id: &str) -> f64 {
        r.results
            .iter()
            .find(|x| x.bench_id == id)
            .and_then(|x| x.primary())
            .map(|m| m.value())
            .unwrap_or_else(|| panic!("no {id} in {r:?}"))
    }

    #[test]
    fn a_real_run() {
        let r = parse_nbench(fixture!("nbench", "linux-port-x86_64.txt"), Utc::now()).unwrap();
        let ids: Vec<&str> = r.results.iter().map(|x| x.bench_id.as_str()).collect();
        assert_eq!(
            &ids[..3],
            [
                "nbench.numeric-sort",
                "nbench.string-sort",
                "nbench.bitfield"
            ]
        );
        assert_eq!(ids.len(), 15, "{ids:?}");
        for id in [
            "nbench.lu-decomposition",
            "nbench.bytemark-index-integer",
            "nbench.index-memory",
            "nbench.index-float",
        ] {
            assert!(value(&r, id) > 0.0, "{id}");
        }
        assert!(r.cpu.is_some() && r.os.as_deref().is_some_and(|o| o.starts_with("Linux")));
        let idx = r
            .results
            .iter()
            .find(|x| x.bench_id == "nbench.index-integer")
            .unwrap();
        assert_eq!(idx.metrics[0].unit, Unit::Index);
        assert_eq!(idx.details.get_str("source"), Some("nbench"));
    }

    /// The row layout of nbench's printf (`%-20s:` then ` %15.5g  :  %9.2f
    /// :  %9.2f`), with a warning line, and the original indexes before the
    /// Linux section.
    #[test]
    fn layout_and_sections() {
        let text = "\
TEST                : Iterations/sec.  : Old Index   : New Index
                    :                  : Pentium 90* : AMD K6/233*
--------------------:------------------:-------------:------------
NUMERIC SORT        :          1000.5  :      25.66  :       8.43
** WARNING: The current test result is NOT 95 % statistically certain.
STRING SORT         :          50.125  :      22.40  :       3.47
FOURIER             :      1.2345e+05  :     140.40  :      78.86
==========================ORIGINAL BYTEMARK RESULTS==========================
INTEGER INDEX       : 20.000
FLOATING-POINT INDEX: 30.000
==============================LINUX DATA BELOW===============================
CPU                 : 4 CPU ARMv7 Processor rev 4 (v7l)
OS                  : Linux 4.19.66-v7+
INTEGER INDEX       : 5.000
";
        let r = parse_nbench(text, Utc::now()).unwrap();
        assert_eq!(value(&r, "nbench.numeric-sort"), 1000.5);
        assert_eq!(value(&r, "nbench.fourier"), 123_450.0);
        assert_eq!(value(&r, "nbench.bytemark-index-integer"), 20.0);
        assert_eq!(value(&r, "nbench.index-integer"), 5.0);
        assert_eq!(r.cpu.as_deref(), Some("4 CPU ARMv7 Processor rev 4 (v7l)"));
        assert_eq!(r.os.as_deref(), Some("Linux 4.19.66-v7+"));
        let host = r.host();
        assert_eq!(host.os.kernel_release.as_deref(), Some("4.19.66-v7+"));
        assert!(host.cpu.caches.is_empty());
    }

    #[test]
    fn the_linux_data_are_host_facts() {
        let r = parse_nbench(fixture!("nbench", "linux-port-x86_64.txt"), Utc::now()).unwrap();
        assert_eq!(r.l2_cache.as_deref(), Some("512 KB"));
        assert_eq!(r.libc, None);
        let host = r.host();
        assert_eq!(
            host.cpu.model.as_deref(),
            Some("Dual AuthenticAMD AMD EPYC 2445MHz")
        );
        assert_eq!(host.cpu.caches[0].size_bytes, 512 * 1024);
        assert_eq!(host.cpu.caches[0].level, 2);
        assert_eq!(host.os.kernel_release.as_deref(), Some("6.18.44-fc-v657"));
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = parse_nbench("NUMERIC SORT        :   fast  :  1  :  1\n", Utc::now()).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("'fast'"), "{e}");
        let none = parse_nbench("hello\n", Utc::now()).unwrap_err();
        assert!(none.message.contains("no nbench result"), "{none}");
        let zero = parse_nbench("x\nINTEGER INDEX       : 0\n", Utc::now()).unwrap_err();
        assert_eq!(zero.line, 2);
    }
}
