//! Builders for test records.

use sysgauge_core::host::{CpuInfo, HostInfo};
use sysgauge_core::record::{
    BuildInfo, Metric, Params, ResultRecord, RunRecord, RunStatus, Status,
};
use sysgauge_core::{Better, Unit};

/// A result with one metric; `block_size` 0 means no block_size param.
pub fn result(
    id: &str,
    block_size: u64,
    threads: u64,
    metric: &str,
    unit: Unit,
    better: Better,
    samples: &[f64],
) -> ResultRecord {
    let mut params = Params::new().with("threads", threads);
    if block_size > 0 {
        params.insert("block_size", block_size);
    }
    let metric = Metric::new(metric, unit, better, samples.to_vec())
        .unwrap_or_else(|| panic!("bad samples {samples:?}"));
    ResultRecord {
        duration_seconds: 0.1,
        ..ResultRecord::new(id, params, Status::Ok, vec![metric])
    }
}

/// A single-threaded MB/s throughput case on 8 KiB blocks.
pub fn throughput(id: &str, samples: &[f64]) -> ResultRecord {
    throughput_at(id, 8192, samples)
}

/// A single-threaded MB/s throughput case on `block_size`-byte blocks.
pub fn throughput_at(id: &str, block_size: u64, samples: &[f64]) -> ResultRecord {
    result(
        id,
        block_size,
        1,
        "throughput",
        Unit::MBps,
        Better::Higher,
        samples,
    )
}

pub fn run_with(host: &str, bogomips: Option<f64>, results: Vec<ResultRecord>) -> RunRecord {
    RunRecord {
        status: RunStatus::Complete,
        build: BuildInfo {
            profile: "release".into(),
            target: "x86_64-linux".into(),
            target_features: vec![],
        },
        host: HostInfo {
            hostname: Some(host.to_string()),
            cpu: CpuInfo {
                bogomips,
                model: Some(format!("CPU of {host}")),
                ..Default::default()
            },
            ..Default::default()
        },
        results,
        ..RunRecord::new(&format!("run-{host}"), "run", "0.1.0")
    }
}
