//! Reading YABS's JSON (`yabs.sh -j`, `-w FILE`) for `sysgauge import`.
//!
//! YABS (Yet-Another-Bench-Script) prints its human report, then with `-j`
//! the JSON on one line: `version`, `time`, `os` (`arch`, `distro`,
//! `kernel`, ...), `cpu` (`model`, `cores`, ...), `mem` (`ram` in KiB, ...),
//! and the sections of the tests it ran: `fio` (a list, one entry per
//! block size), `iperf` and `geekbench`. A file pasted from a terminal
//! holds the report before the JSON; the first line that starts with `{`
//! is read, so line numbers in errors are the file's.
//!
//! Each `fio` entry is YABS's fio job (`--rw=randrw --rwmixread=50
//! --iodepth=64 --numjobs=2 --direct=1 --ioengine=libaio
//! --group_reporting`, `--size=2G`, 512M on ARM) at the entry's `bs`:
//! this family's `disk.randrw` case (`qd.rs`) with params `block_size`,
//! `direct`, `iodepth`, `numjobs`, `rwmixread` and `size`. Metrics:
//! `throughput` (`speed_rw`), `iops` (`iops_rw`), `read_throughput`,
//! `read_iops`, `write_throughput`, `write_iops`. YABS takes the speeds
//! from fio's terse output, whose bandwidth is in KiB/s (YABS calls the
//! unit `KBps`), so MB/s is the value × 1024 / 10^6. YABS runs fio with
//! `--gtod_reduce=1`: there are no latencies.
//!
//! `iperf` (public servers' bandwidth, which says as much about the route
//! as about the machine) and `geekbench` (scores of a program sysgauge
//! does not run) have no sysgauge case: they are named in a warning.

use super::fio::fio_size;
use super::qd;
use super::Kind;
use crate::foreign_json::{parse_document, At, JsonDocError};
use chrono::{DateTime, Utc};
use sysgauge_core::record::{Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::metric;

/// YABS's fio file size on x86 (`FIO_SIZE=2G`).
pub const YABS_SIZE: u64 = 2 << 30;
/// YABS's fio file size on ARM (`FIO_SIZE=512M`).
pub const YABS_SIZE_ARM: u64 = 512 << 20;

/// What a YABS document says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct YabsReport {
    /// `v2023-04-23`.
    pub version: Option<String>,
    pub results: Vec<ResultRecord>,
    pub warnings: Vec<String>,
    pub cpu_model: Option<String>,
    pub cores: Option<u32>,
    /// YABS's `x64`, `x86`, `aarch64` or `arm`.
    pub arch: Option<String>,
    pub kernel: Option<String>,
    pub distro: Option<String>,
    pub ram_bytes: Option<u64>,
}

/// Whether a JSON document is YABS's, from the names in it.
pub fn looks_like_yabs(text: &str) -> bool {
    let has = |k: &str| text.contains(&format!("\"{k}\""));
    !has("schema_version")
        && has("os")
        && has("cpu")
        && has("mem")
        && (has("fio") || has("geekbench") || has("iperf") || has("runtime"))
}

fn opt_text(at: &At<'_>, key: &str) -> Result<Option<String>, JsonDocError> {
    match at.get(key) {
        Some(v) => {
            let t = v.text()?.trim().to_string();
            Ok((!t.is_empty()).then_some(t))
        }
        None => Ok(None),
    }
}

/// Parse YABS's JSON; results are stamped `at`.
pub fn parse_yabs(text: &str, at: DateTime<Utc>) -> Result<YabsReport, JsonDocError> {
    let doc = parse_document(text)?;
    let root = At::root(&doc);
    if !doc.is_object() {
        return Err(root.error("is not an object"));
    }
    let mut r = YabsReport {
        version: opt_text(&root, "version")?,
        ..YabsReport::default()
    };
    if let Some(os) = root.get("os") {
        r.arch = opt_text(&os, "arch")?;
        r.kernel = opt_text(&os, "kernel")?;
        r.distro = opt_text(&os, "distro")?;
    }
    if let Some(cpu) = root.get("cpu") {
        r.cpu_model = opt_text(&cpu, "model")?;
        if let Some(c) = cpu.get("cores") {
            let n = c.number()?;
            if n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) {
                r.cores = Some(n as u32);
            } else {
                return Err(c.error(format!("{n} is not a number of cores")));
            }
        }
    }
    if let Some(mem) = root.get("mem") {
        if let Some(ram) = mem.get("ram") {
            let kib = ram.number()?;
            if kib > 0.0 {
                r.ram_bytes = Some((kib * 1024.0) as u64);
            }
        }
    }
    let arm = matches!(r.arch.as_deref(), Some("aarch64" | "arm"));
    let size = match r.arch.as_deref() {
        Some(_) if arm => Some(YABS_SIZE_ARM),
        Some(_) => Some(YABS_SIZE),
        None => None,
    };
    if let Some(g) = root.get("geekbench") {
        let runs = g.items()?;
        if !runs.is_empty() {
            let names: Vec<String> = runs
                .iter()
                .map(|x| {
                    let v = x.get("version").map(|v| v.value.to_string());
                    format!("Geekbench {}", v.unwrap_or_else(|| "?".into()))
                })
                .collect();
            r.warnings.push(format!(
                "{} left out: Geekbench is not a sysgauge benchmark, its scores compare with nothing here",
                names.join(", ")
            ));
        }
    }
    if let Some(i) = root.get("iperf") {
        let n = i.items()?.len();
        if n > 0 {
            r.warnings.push(format!(
                "{n} iperf3 result(s) left out: bandwidth to public servers measures the route as much as the machine (sysgauge net measures between your own hosts)"
            ));
        }
    }
    let Some(fio) = root.get("fio") else {
        let ran = if r.warnings.is_empty() {
            String::new()
        } else {
            " (only Geekbench or iperf3 ran; those have no sysgauge case)".to_string()
        };
        return Err(JsonDocError::Field {
            field: "fio".to_string(),
            message: format!(
                "missing: this YABS output has no disk results{ran}; run yabs.sh without -f/-d to get them"
            ),
        });
    };
    if size.is_none() {
        r.warnings.push(
            "os.arch is missing, so YABS's fio file size (2 GiB, 512 MiB on ARM) is unknown; the cases carry no size and match sysgauge's only by hand".to_string(),
        );
    }
    for entry in fio.items()? {
        let bs_at = entry.require("bs")?;
        let bs_text = bs_at.text()?;
        let Some(bs) = fio_size(bs_text, false).filter(|&b| b > 0) else {
            return Err(bs_at.error(format!("'{bs_text}' is not a block size")));
        };
        if let Some(u) = opt_text(&entry, "speed_units")? {
            if u != "KBps" {
                return Err(entry
                    .require("speed_units")?
                    .error(format!("'{u}' is not YABS's KBps")));
            }
        }
        let num = |k: &str| -> Result<f64, JsonDocError> {
            let v = entry.require(k)?;
            let x = v.number()?;
            if x < 0.0 {
                return Err(v.error(format!("{x} is negative")));
            }
            Ok(x)
        };
        let kib = 1024.0 / 1e6;
        let mut metrics = Vec::new();
        for (name, unit, value) in [
            ("throughput", Unit::MBps, num("speed_rw")? * kib),
            ("iops", Unit::OpsPerSec, num("iops_rw")?),
            ("read_throughput", Unit::MBps, num("speed_r")? * kib),
            ("read_iops", Unit::OpsPerSec, num("iops_r")?),
            ("write_throughput", Unit::MBps, num("speed_w")? * kib),
            ("write_iops", Unit::OpsPerSec, num("iops_w")?),
        ] {
            if value > 0.0 {
                metrics.extend(metric(name, unit, Better::Higher, vec![value]).ok());
            }
        }
        if metrics.first().map(|m| m.name.as_str()) != Some("throughput") {
            r.warnings.push(format!(
                "fio at {bs_text}: no throughput (fio failed for this size?); left out"
            ));
            continue;
        }
        let mut params = Params::new()
            .with("block_size", bs)
            .with("direct", true)
            .with("iodepth", qd::QD_DEPTH)
            .with("numjobs", qd::QD_JOBS)
            .with("rwmixread", qd::QD_READ_PERCENT);
        if let Some(s) = size {
            params.insert("size", s);
        }
        let mut details = Params::new()
            .with("source", "yabs")
            .with("engine", "libaio");
        if let Some(v) = &r.version {
            details.insert("yabs_version", v.as_str());
        }
        if r.results.iter().any(|x: &ResultRecord| x.params == params) {
            return Err(bs_at.error(format!("block size {bs_text} appears twice")));
        }
        r.results.push(ResultRecord {
            details,
            started_at: at,
            ..ResultRecord::new(Kind::RandRw.id(), params, Status::Ok, metrics)
        });
    }
    if r.results.is_empty() {
        return Err(fio.error("holds no disk result"));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_family::util::metric_value as value;

    #[test]
    fn the_fio_section_is_the_queue_depth_cases() {
        let r = parse_yabs(fixture!("yabs", "shaped-full.json"), Utc::now()).unwrap();
        assert_eq!(r.version.as_deref(), Some("v2023-04-23"));
        assert_eq!(r.cores, Some(4));
        assert_eq!(r.arch.as_deref(), Some("x64"));
        assert_eq!(r.ram_bytes, Some(8_139_876 * 1024));
        let ids: Vec<String> = r
            .results
            .iter()
            .map(|x| {
                format!(
                    "{} {}",
                    x.bench_id,
                    x.params.get_u64("block_size").unwrap_or(0)
                )
            })
            .collect();
        assert_eq!(
            ids,
            [
                "disk.randrw 4096",
                "disk.randrw 65536",
                "disk.randrw 524288",
                "disk.randrw 1048576"
            ]
        );
        let c = &r.results[0];
        assert_eq!(
            c.params.canonical(),
            "block_size=4096,direct=true,iodepth=64,numjobs=2,rwmixread=50,size=2147483648"
        );
        // KiB/s as MB/s.
        assert!((value(c, "read_throughput") - 180_523.0 * 1024.0 / 1e6).abs() < 1e-9);
        assert!((value(c, "throughput") - 361_267.0 * 1024.0 / 1e6).abs() < 1e-9);
        assert_eq!(value(c, "iops"), 90_316.0);
        // Geekbench and iperf are named, not imported.
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("Geekbench 6"), "{:?}", r.warnings);
        assert!(r.warnings[1].contains("3 iperf3"), "{:?}", r.warnings);
    }

    #[test]
    fn pasted_after_the_report_and_on_arm() {
        let r = parse_yabs(fixture!("yabs", "shaped-pasted-arm.txt"), Utc::now()).unwrap();
        assert_eq!(r.results.len(), 4);
        assert_eq!(r.results[0].params.get_u64("size"), Some(512 << 20));
        assert_eq!(r.arch.as_deref(), Some("aarch64"));
    }

    #[test]
    fn without_a_disk_section_the_error_says_why() {
        let e = parse_yabs(fixture!("yabs", "shaped-geekbench-only.json"), Utc::now()).unwrap_err();
        let t = e.to_string();
        assert!(t.starts_with("fio: missing"), "{t}");
        assert!(t.contains("only Geekbench or iperf3 ran"), "{t}");
        let e = parse_yabs(fixture!("yabs", "shaped-no-disk.json"), Utc::now()).unwrap_err();
        assert!(e.to_string().contains("without -f/-d"), "{e}");
    }

    #[test]
    fn bad_input_names_the_place() {
        // fio failed and YABS wrote nothing where a number belongs.
        let cut =
            fixture!("yabs", "shaped-full.json").replace("\"speed_r\":180523", "\"speed_r\":");
        match parse_yabs(&cut, Utc::now()) {
            Err(JsonDocError::Syntax { line, column, .. }) => {
                assert_eq!(line, 1);
                assert!(column > 100, "{column}");
            }
            other => panic!("{other:?}"),
        }
        let bad = fixture!("yabs", "shaped-full.json").replace("\"bs\":\"64k\"", "\"bs\":\"lots\"");
        let e = parse_yabs(&bad, Utc::now()).unwrap_err().to_string();
        assert!(e.contains("fio[1].bs") && e.contains("'lots'"), "{e}");
        let neg = fixture!("yabs", "shaped-full.json").replace("\"iops_w\":45186", "\"iops_w\":-1");
        assert!(parse_yabs(&neg, Utc::now()).is_err());
        assert!(parse_yabs("no json here\n", Utc::now()).is_err());
        assert!(parse_yabs("[1,2]\n", Utc::now()).is_err());
    }

    #[test]
    fn recognised_by_its_names() {
        assert!(looks_like_yabs(fixture!("yabs", "shaped-full.json")));
        assert!(looks_like_yabs(fixture!(
            "yabs",
            "shaped-geekbench-only.json"
        )));
        assert!(!looks_like_yabs(
            "{\"schema_version\":1,\"os\":{},\"cpu\":{},\"mem\":{},\"runtime\":1}"
        ));
        assert!(!looks_like_yabs(
            "{\"fio version\":\"fio-3.33\",\"jobs\":[]}"
        ));
    }
}
