//! A comparison to render in tests: three hosts, two families, one case
//! with a block-size sweep, raw samples on one case.

use sysgauge_compare::{compare, Comparison, Machine};
use sysgauge_core::host::{CpuInfo, HostInfo};
use sysgauge_core::record::{
    family_of, BuildInfo, Metric, Params, ResultRecord, RunRecord, RunStatus, Status,
};
use sysgauge_core::{Better, Unit};

fn result(
    id: &str,
    params: Params,
    metric: &str,
    unit: Unit,
    better: Better,
    samples: &[f64],
) -> ResultRecord {
    ResultRecord {
        bench_id: id.into(),
        family: family_of(id).into(),
        workload_version: 1,
        params,
        details: Params::new(),
        status: Status::Ok,
        started_at: chrono::Utc::now(),
        duration_seconds: 0.1,
        metrics: vec![
            Metric::new(metric, unit, better, samples.to_vec()).unwrap_or_else(|| panic!("metric"))
        ],
        findings: vec![],
    }
}

fn run(host: &str, scale: f64, bogomips: f64, kernel: &str) -> RunRecord {
    let mut results = Vec::new();
    for (i, bs) in [16u64, 1024, 8192, 1 << 20].iter().enumerate() {
        let base = 50.0 * (i + 1) as f64;
        let s: Vec<f64> = [1.0, 1.01, 0.99, 1.005, 0.995]
            .iter()
            .map(|f| base * scale * f)
            .collect();
        results.push(result(
            "beta.sha256",
            Params::new().with("block_size", *bs).with("threads", 1u64),
            "throughput",
            Unit::MBps,
            Better::Higher,
            &s,
        ));
    }
    results.push(result(
        "gamma.latency",
        Params::new(),
        "latency",
        Unit::Nanoseconds,
        Better::Lower,
        &[100.0 / scale],
    ));
    if host != "hostb" {
        results.push(result(
            "gamma.copy",
            Params::new(),
            "bandwidth",
            Unit::MBps,
            Better::Higher,
            &[1000.0 * scale],
        ));
    }
    RunRecord {
        status: RunStatus::Complete,
        build: BuildInfo {
            profile: "release".into(),
            target: "x86_64-linux".into(),
            target_features: vec![],
        },
        host: HostInfo {
            hostname: Some(host.into()),
            cpu: CpuInfo {
                bogomips: Some(bogomips),
                model: Some(format!("{host} <CPU> & co")),
                ..Default::default()
            },
            os: sysgauge_core::host::OsInfo {
                kernel_release: Some(kernel.into()),
                ..Default::default()
            },
            ..Default::default()
        },
        results,
        ..RunRecord::new(&format!("id-{host}"), "run", "0.1.0")
    }
}

pub fn runs() -> Vec<RunRecord> {
    vec![
        run("hostx", 1.0, 5200.0, "6.1.0"),
        run("hosta", 0.625, 108.0, "6.1.0"),
        run("hostb", 2.5, 38.4, "6.6.0"),
    ]
}

pub fn comparison() -> Comparison {
    let machines = vec![
        Machine {
            label: "hostx".into(),
            run: run("hostx", 1.0, 5200.0, "6.1.0"),
        },
        Machine {
            label: "hosta".into(),
            run: run("hosta", 0.625, 108.0, "6.1.0"),
        },
        Machine {
            label: "hostb".into(),
            run: run("hostb", 2.5, 38.4, "6.6.0"),
        },
    ];
    compare(&machines, 0, &[]).unwrap()
}
