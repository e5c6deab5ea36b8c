//! A generated fleet for the store benchmark (docs/performance.md): HOSTS
//! hosts (`host-000`…) with one complete run each of CASES cases
//! (`hash.gen-000`…, one throughput metric of five samples), stored in DB
//! (a SQLite file or a postgres:// URL).
//!
//! `cargo run --release -p sysgauge-store --example fleet_dataset -- DB [HOSTS] [CASES]`

use chrono::Utc;
use std::path::Path;
use sysgauge_core::record::{
    BuildInfo, Params, Profile, ResultRecord, RunRecord, RunStatus, Status,
};
use sysgauge_core::{Better, HostInfo, Metric, Unit};
use sysgauge_store::Store;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(db) = args.first() else {
        return Err("usage: fleet_dataset DB [HOSTS] [CASES]".into());
    };
    let hosts: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(500);
    let cases: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(80);
    let mut store = Store::open(Path::new(db))?;
    let runs: Vec<RunRecord> = (0..hosts).map(|h| run(h, cases)).collect();
    for chunk in runs.chunks(50) {
        store.insert_runs(chunk, "import")?;
    }
    eprintln!(
        "{hosts} hosts × {cases} cases in {}",
        store.path().display()
    );
    Ok(())
}

fn run(host: usize, cases: usize) -> RunRecord {
    let speed = 1.0 + (host % 17) as f64 / 10.0;
    let results = (0..cases)
        .map(|c| {
            let base = 100.0 * speed * (1.0 + c as f64 / 40.0);
            let samples: Vec<f64> = (0..5).map(|k| base * (1.0 + k as f64 / 500.0)).collect();
            let metric = Metric::new("throughput", Unit::MBps, Better::Higher, samples);
            ResultRecord::new(
                &format!("hash.gen-{c:03}"),
                Params::new().with("block_size", 8192u64),
                Status::Ok,
                metric.into_iter().collect(),
            )
        })
        .collect();
    RunRecord {
        schema_version: sysgauge_core::record::SCHEMA_VERSION,
        run_id: format!("5eed0000-0000-4000-8000-{host:012}"),
        started_at: Utc::now(),
        finished_at: Some(Utc::now()),
        status: RunStatus::Complete,
        command: "run".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        build: BuildInfo {
            profile: "release".into(),
            target: "x86_64-linux".into(),
            target_features: vec![],
        },
        host: HostInfo {
            hostname: Some(format!("host-{host:03}")),
            ..Default::default()
        },
        profile: Profile::Quick,
        label: None,
        tags: Default::default(),
        findings: vec![],
        results,
    }
}
