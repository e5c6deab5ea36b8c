//! The memory family's own tables, rendered from a run record:
//!
//! - copy methods in mbw's layout: one row per repetition (time of one
//!   copy, MiB copied, MiB/s and MB/s), then `AVG` (mbw's average: size
//!   over mean time) and `MEDIAN` (sysgauge's headline value);
//! - STREAM's layout: best rate, median rate, and average, minimum and
//!   maximum time of one pass;
//! - latency by working set with the cache level each set fits in (as
//!   recorded by the benchmark from the host facts) and the step from the
//!   previous size, followed by the host's cache sizes.
//!
//! The chart of latency against working set is the family's figure across
//! machines with one machine (`chart.rs`). Everything is derived from the stored samples and params; nothing is
//! measured here.

use super::{LATENCY, MEMCPY};
use sysgauge_core::record::{ParamValue, ResultRecord, RunRecord, Status};
use sysgauge_core::size::{size_label, Bytes};
use sysgauge_report::format::format_value;
use sysgauge_report::table::{Table, TableFormat};

const MIB: f64 = 1_048_576.0;

fn ok_results<'a>(run: &'a RunRecord, ids: &[&str]) -> Vec<&'a ResultRecord> {
    run.results
        .iter()
        .filter(|r| matches!(r.status, Status::Ok) && ids.contains(&r.bench_id.as_str()))
        .collect()
}

fn heading(format: TableFormat, title: &str) -> String {
    match format {
        TableFormat::Markdown => format!("### {title}\n\n"),
        TableFormat::Csv => String::new(),
        TableFormat::Html => format!("<h3>{}</h3>\n", sysgauge_report::html::esc(title)),
        TableFormat::Text => format!("{title}\n"),
    }
}

/// `t` rendered under its title.
fn titled(format: TableFormat, title: &str, t: &Table) -> String {
    let mut out = heading(format, title);
    out.push_str(&t.render(format));
    out
}

/// The copy methods in mbw's layout; empty when the run has none.
pub fn copy_table(run: &RunRecord, format: TableFormat) -> String {
    let results = ok_results(run, &[MEMCPY, "mem.loop-copy", "mem.block-copy"]);
    if results.is_empty() {
        return String::new();
    }
    let mut t = Table::columns("#, method, >elapsed s, >MiB, >copy MiB/s, >copy MB/s");
    for r in results {
        let (Some(m), Some(size)) = (r.primary(), r.params.get_u64("size")) else {
            continue;
        };
        // The method, then the labels mbw prints for it (MBW_LABELS).
        let method = match r.bench_id.as_str() {
            MEMCPY => "memcpy (MEMCPY; 1.2.2: DUMB)".to_string(),
            "mem.loop-copy" => "loop (DUMB; 1.2.2: MEMCPY)".to_string(),
            _ => format!(
                "block {} (MCBLOCK)",
                r.params
                    .get_u64("block_size")
                    .map(size_label)
                    .unwrap_or_default()
            ),
        };
        let bytes = size as f64;
        let row = |label: String, mbps: f64| -> Vec<String> {
            let secs = bytes / (mbps * 1e6);
            vec![
                label,
                method.clone(),
                format!("{secs:.5}"),
                format!("{:.3}", bytes / MIB),
                format!("{:.1}", mbps * 1e6 / MIB),
                format!("{mbps:.1}"),
            ]
        };
        let mut times = Vec::new();
        for (i, &mbps) in m.samples.iter().enumerate() {
            if mbps > 0.0 {
                times.push(bytes / (mbps * 1e6));
                t.push(row(i.to_string(), mbps));
            }
        }
        if !times.is_empty() {
            let mean_time = times.iter().sum::<f64>() / times.len() as f64;
            t.push(row("AVG".into(), bytes / mean_time / 1e6));
        }
        t.push(row("MEDIAN".into(), m.value()));
    }
    let mut out = titled(format, "Copy bandwidth, mbw style (each byte copied counted once; one row per repetition, elapsed = one copy)", &t);
    out.push_str(MBW_LABELS);
    out
}

/// Which mbw label goes with which method: the labels differ between mbw
/// versions, so a published mbw figure is matched by method, not by name.
pub const MBW_LABELS: &str = "mbw labels: the memcpy method is what mbw 2.0 prints as MEMCPY and \
Debian's mbw 1.2.2 as DUMB; the element loop is mbw 2.0's DUMB and mbw 1.2.2's MEMCPY \
(that build swaps the two); the block copy is MCBLOCK, which mbw 1.2.2 runs re-reading \
one source block (docs/comparing.md)\n";

/// A case's `threads` as the summary names it (`all`), with the count it
/// ran with: `2`, `all (2)`.
fn threads_cell(r: &ResultRecord) -> String {
    match (r.params.get("threads"), r.count_param("threads")) {
        (Some(ParamValue::Text(t)), Some(n)) => format!("{t} ({n})"),
        (Some(v), _) => v.to_string(),
        (None, _) => String::new(),
    }
}

/// The STREAM kernels in STREAM's layout; empty when the run has none.
pub fn stream_table(run: &RunRecord, format: TableFormat) -> String {
    let ids = [
        "mem.stream-copy",
        "mem.stream-scale",
        "mem.stream-add",
        "mem.stream-triad",
    ];
    let results = ok_results(run, &ids);
    if results.is_empty() {
        return String::new();
    }
    let mut t = Table::columns("function, >threads, >array, >best GB/s, >median GB/s, >avg time s, >min time s, >max time s");
    for r in results {
        let (Some(m), Some(size)) = (r.primary(), r.params.get_u64("size")) else {
            continue;
        };
        let arrays = if matches!(r.bench_id.as_str(), "mem.stream-copy" | "mem.stream-scale") {
            2.0
        } else {
            3.0
        };
        let bytes = arrays * size as f64;
        let times: Vec<f64> = m
            .samples
            .iter()
            .filter(|&&g| g > 0.0)
            .map(|g| bytes / (g * 1e9))
            .collect();
        if times.is_empty() {
            continue;
        }
        let avg = times.iter().sum::<f64>() / times.len() as f64;
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        let max = times.iter().copied().fold(0.0, f64::max);
        let name = &r.bench_id["mem.stream-".len()..];
        let mut name = name.to_string();
        if let Some(first) = name.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        t.push(vec![
            format!("{name}:"),
            threads_cell(r),
            Bytes(size).to_string(),
            format!("{:.2}", bytes / min / 1e9),
            format!("{:.2}", m.value()),
            format!("{avg:.6}"),
            format!("{min:.6}"),
            format!("{max:.6}"),
        ]);
    }
    titled(
        format,
        "STREAM (copy and scale count 2 arrays per pass, add and triad 3; time = one pass)",
        &t,
    )
}

/// Latency by working set; empty when the run has none.
pub fn latency_table(run: &RunRecord, format: TableFormat) -> String {
    let mut results: Vec<&ResultRecord> = ok_results(run, &[LATENCY]);
    if results.is_empty() {
        return String::new();
    }
    results.sort_by_key(|r| r.params.get_u64("working_set").unwrap_or(0));
    let mut t = Table::columns(">working set, fits in, >ns/access, >vs previous");
    let mut prev: Option<f64> = None;
    let mut prev_level: Option<String> = None;
    for r in results {
        let (Some(m), Some(ws)) = (r.primary(), r.params.get_u64("working_set")) else {
            continue;
        };
        let level = r.details.get_str("cache_level").unwrap_or("?").to_string();
        let marker = match &prev_level {
            Some(p) if *p != level => format!("{level} <"),
            _ => level.clone(),
        };
        let ns = m.value();
        t.push(vec![
            Bytes(ws).to_string(),
            marker,
            format_value(ns),
            prev.filter(|p| *p > 0.0)
                .map(|p| format!("×{:.2}", ns / p))
                .unwrap_or_default(),
        ]);
        prev = Some(ns);
        prev_level = Some(level);
    }
    let mut out = titled(
        format,
        "Latency by working set (dependent loads, random single cycle; `<` marks a new level)",
        &t,
    );
    let caches: Vec<String> = run
        .host
        .cpu
        .caches
        .iter()
        .filter(|c| c.kind != "instruction")
        .map(|c| {
            let kind = if c.kind == "data" { "d" } else { "" };
            format!("L{}{kind} {}", c.level, Bytes(c.size_bytes))
        })
        .collect();
    if !caches.is_empty() && format != TableFormat::Csv {
        out.push_str(&format!(
            "{}Caches (host facts, one instance each): {}\n",
            if format == TableFormat::Markdown {
                "\n"
            } else {
                ""
            },
            caches.join(", ")
        ));
    }
    out
}

/// All of the family's tables that the run has data for, separated by
/// blank lines; empty when the run has no memory results.
pub fn memory_report(run: &RunRecord, format: TableFormat) -> String {
    [
        copy_table(run, format),
        stream_table(run, format),
        latency_table(run, format),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::host::CacheInfo;
    use sysgauge_core::record::{Metric, Params, RunStatus};
    use sysgauge_core::unit::{Better, Unit};

    fn result(
        id: &str,
        params: Params,
        details: Params,
        unit: Unit,
        samples: Vec<f64>,
    ) -> ResultRecord {
        ResultRecord {
            family: "mem".into(),
            details,
            duration_seconds: 1.0,
            ..ResultRecord::new(
                id,
                params,
                Status::Ok,
                vec![Metric::new("m", unit, Better::Higher, samples)
                    .unwrap_or_else(|| panic!("metric"))],
            )
        }
    }

    fn run(results: Vec<ResultRecord>) -> RunRecord {
        let mut host = sysgauge_core::HostInfo::default();
        host.cpu.caches = vec![
            CacheInfo {
                level: 1,
                kind: "data".into(),
                size_bytes: 48 << 10,
                shared_by: None,
                instances: None,
            },
            CacheInfo {
                level: 2,
                kind: "unified".into(),
                size_bytes: 2 << 20,
                shared_by: None,
                instances: None,
            },
        ];
        RunRecord {
            status: RunStatus::Complete,
            host,
            results,
            ..RunRecord::new("r", "mem", "0")
        }
    }

    #[test]
    fn mbw_layout() {
        let size = 256u64 << 20;
        let r = run(vec![
            result(
                MEMCPY,
                Params::new().with("size", size),
                Params::new(),
                Unit::MBps,
                // 256 MiB in 0.025 s and 0.05 s.
                vec![size as f64 / 0.025 / 1e6, size as f64 / 0.05 / 1e6],
            ),
            result(
                "mem.block-copy",
                Params::new()
                    .with("size", size)
                    .with("block_size", 262_144u64),
                Params::new(),
                Unit::MBps,
                vec![5000.0],
            ),
        ]);
        let text = copy_table(&r, TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("Copy bandwidth, mbw style"));
        assert!(lines[1].contains("elapsed s") && lines[1].contains("copy MiB/s"));
        // Row 0: 0.025 s, 256 MiB, 10240 MiB/s.
        // The method column pairs the method with mbw's labels for it.
        let memcpy = "memcpy (MEMCPY; 1.2.2: DUMB)";
        let row0: Vec<&str> = lines[3].split(memcpy).collect();
        assert_eq!(row0[0].trim(), "0", "{text}");
        let figures: Vec<&str> = row0[1].split_whitespace().collect();
        assert_eq!(figures, vec!["0.02500", "256.000", "10240.0", "10737.4"]);
        // mbw's AVG: 256 MiB over the mean time 0.0375 s.
        let avg: Vec<&str> = lines[5].split(memcpy).collect();
        assert_eq!(avg[0].trim(), "AVG");
        let avg: Vec<&str> = avg[1].split_whitespace().collect();
        assert_eq!(&avg[..3], &["0.03750", "256.000", "6826.7"]);
        assert!(lines[6].starts_with("MEDIAN"));
        assert!(text.contains("block 256KiB (MCBLOCK)"));
        assert!(text.ends_with(MBW_LABELS), "{text}");
        let md = copy_table(&r, TableFormat::Markdown);
        assert!(md.starts_with("### Copy bandwidth"));
        assert!(md.contains(&format!("| 0 | {memcpy} |")));
    }

    #[test]
    fn stream_layout() {
        let size = 1u64 << 30;
        let r = run(vec![result(
            "mem.stream-triad",
            Params::new().with("size", size).with("threads", 2u64),
            Params::new(),
            Unit::GBps,
            // 3 GiB per pass: 0.5 s and 0.25 s per pass.
            vec![
                3.0 * size as f64 / 0.5 / 1e9,
                3.0 * size as f64 / 0.25 / 1e9,
            ],
        )]);
        // The words of the table's first data row.
        let first_row = |text: &str| -> Vec<String> {
            let line = text.lines().nth(3).unwrap_or("");
            line.split_whitespace().map(str::to_string).collect()
        };
        let text = stream_table(&r, TableFormat::Text);
        let row = first_row(&text);
        assert_eq!(row[0], "Triad:");
        assert_eq!(row[1], "2");
        assert_eq!(row[4], "12.88");
        assert_eq!(&row[row.len() - 3..], &["0.375000", "0.250000", "0.500000"]);
        // The all-CPUs case names itself as the summary does, with its count.
        let all = result(
            "mem.stream-copy",
            Params::new().with("size", size).with("threads", "all"),
            Params::new().with("threads", 2u64),
            Unit::GBps,
            vec![10.0],
        );
        let text = stream_table(&run(vec![all]), TableFormat::Text);
        assert_eq!(first_row(&text)[..3], ["Copy:", "all", "(2)"], "{text}");
    }

    #[test]
    fn latency_marks_levels_and_steps() {
        let r = run(vec![
            result(
                LATENCY,
                Params::new().with("working_set", 1u64 << 20),
                Params::new().with("cache_level", "L2"),
                Unit::Nanoseconds,
                vec![5.0],
            ),
            result(
                LATENCY,
                Params::new().with("working_set", 4096u64),
                Params::new().with("cache_level", "L1"),
                Unit::Nanoseconds,
                vec![1.25],
            ),
            result(
                LATENCY,
                Params::new().with("working_set", 64u64 << 20),
                Params::new().with("cache_level", "memory"),
                Unit::Nanoseconds,
                vec![100.0],
            ),
        ]);
        let text = latency_table(&r, TableFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[3].contains("4 KiB") && lines[3].contains("L1") && lines[3].contains("1.25"));
        assert!(lines[4].contains("L2 <") && lines[4].contains("×4.00"));
        assert!(lines[5].contains("memory <") && lines[5].contains("×20.00"));
        assert!(text.contains("Caches (host facts, one instance each): L1d 48 KiB, L2 2 MiB"));
        let all = memory_report(&r, TableFormat::Text);
        assert_eq!(all, text);
        assert_eq!(memory_report(&run(vec![]), TableFormat::Text), "");
    }
}
