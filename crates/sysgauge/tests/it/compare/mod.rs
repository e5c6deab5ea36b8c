//! `import`, `compare`, `report`, `chart` and `baseline`, driven through the
//! real binary on temporary databases, with the CSV and openssl fixtures.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod charts;
mod imports;
mod machines;
mod reimport;
mod report;
mod selection;

use crate::common::{Outcome, Sandbox};
use std::path::{Path, PathBuf};
use sysgauge_compare::Comparison;

/// What stands in a page's `<section id="ID"…>…</section>`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    html.split(&format!("<section id=\"{id}\""))
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .unwrap_or_else(|| panic!("no {id} section in {html}"))
}

fn csv_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-compare/tests/fixtures/csv")
        .join(name)
}

fn openssl_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-crypto/tests/fixtures/openssl")
        .join(name)
}

/// `compare ARGS --format json` on the sandbox's database, which must
/// succeed, read strictly: every struct in Comparison denies unknown
/// fields.
pub(crate) fn comparison(sb: &Sandbox, args: &[&str]) -> Comparison {
    let out = sb
        .on_db("compare")
        .args(args)
        .args(["--format", "json"])
        .succeeds();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn import(sb: &Sandbox, files: &[PathBuf]) -> std::process::Output {
    sb.on_db("import").args(files).output().unwrap()
}

/// `sysgauge chart CSV OPTIONS FILE`: the chart `options` ask for, of the
/// results in `csv`, written to `file`.
fn chart(sb: &Sandbox, csv: &Path, options: &[&str], file: &Path) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.arg("chart").arg(csv).args(options).arg(file);
    c
}

/// Two machines' runs built here and written as one sysgauge JSON file,
/// as `results export --format json` writes them: `fastbox` (sweep at
/// N = 64, 128, 256; latency at five working sets; L2 2 MiB) and `slowbox`
/// (N = 64, 128 only; latency at three; L2 1 MiB), both with dd and
/// sha256sum at 1 and 64 copies and crypto.aes-128-cbc at openssl's block
/// sizes.
fn built_machines(dir: &Path, hosts: &[&str]) -> PathBuf {
    use sysgauge_core::host::CacheInfo;
    use sysgauge_core::record::{Metric, Params, ResultRecord, RunRecord, RunStatus, Status};
    use sysgauge_core::{Better, Unit};
    let metric = |name: &str, unit: Unit, better: Better, v: f64| {
        Metric::new(name, unit, better, vec![v, v * 1.01, v * 0.99]).unwrap()
    };
    let machine = |host: &str| -> RunRecord {
        let (speed, ns, l2) = match host {
            "fastbox" => (2.0, vec![1.0, 1.5, 4.0, 20.0, 80.0], 2u64 << 20),
            _ => (1.0, vec![2.0, 9.0, 150.0], 1 << 20),
        };
        let mut results = Vec::new();
        for n in [64u64, 128, 256]
            .into_iter()
            .take(if speed > 1.0 { 3 } else { 2 })
        {
            for (program, base) in [("dd", 900.0), ("sha256sum", 300.0)] {
                for copies in [1u64, 64] {
                    let mbps = base
                        * speed
                        * if copies == 1 { 0.5 } else { 1.0 }
                        * (1.0 + n as f64 / 1000.0);
                    results.push(ResultRecord::new(
                        &format!("sweep.{program}"),
                        Params::new()
                            .with("copies", copies)
                            .with("iterations", n)
                            .with("data", "words"),
                        Status::Ok,
                        vec![
                            metric("throughput", Unit::MBps, Better::Higher, mbps),
                            metric("wall_time", Unit::Seconds, Better::Lower, n as f64 / mbps),
                        ],
                    ));
                }
            }
        }
        for (ws, ns) in [4096u64, 64 << 10, 1 << 20, 16 << 20, 64 << 20]
            .iter()
            .zip(&ns)
        {
            results.push(ResultRecord::new(
                "mem.latency",
                Params::new()
                    .with("working_set", *ws)
                    .with("huge_pages", true),
                Status::Ok,
                vec![metric("latency", Unit::Nanoseconds, Better::Lower, *ns)],
            ));
        }
        let version = sysgauge_registry::workload_version_of("crypto.aes-128-cbc");
        for (i, bs) in [16u64, 64, 256, 1024, 8192, 16384].iter().enumerate() {
            results.push(ResultRecord {
                workload_version: version,
                ..ResultRecord::new(
                    "crypto.aes-128-cbc",
                    Params::new().with("block_size", *bs).with("threads", 1u64),
                    Status::Ok,
                    vec![metric(
                        "throughput",
                        Unit::MBps,
                        Better::Higher,
                        (400.0 + 100.0 * i as f64) * speed,
                    )],
                )
            });
        }
        // A run id of its own per host (import takes UUIDs only).
        let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, host.as_bytes()).to_string();
        let mut run = RunRecord::new(&id, "run", "0");
        run.status = RunStatus::Complete;
        run.finished_at = Some(run.started_at);
        run.host.hostname = Some(host.to_string());
        run.host.cpu.caches = [(1, "data", 48u64 << 10), (2, "unified", l2)]
            .into_iter()
            .map(|(level, kind, size_bytes)| CacheInfo {
                level,
                kind: kind.to_string(),
                size_bytes,
                shared_by: None,
                instances: None,
            })
            .collect();
        run.results = results;
        run
    };
    let runs: Vec<RunRecord> = hosts.iter().map(|h| machine(h)).collect();
    let file = dir.join(format!("{}.json", hosts.join("-")));
    std::fs::write(&file, serde_json::to_string_pretty(&runs).unwrap()).unwrap();
    file
}
