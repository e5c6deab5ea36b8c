//! A comparison to render in tests: three hosts, two families, one case
//! with a block-size sweep, raw samples on one case.

use sysgauge_compare::{compare, Comparison, Machine};
use sysgauge_core::record::{Metric, Params, ResultRecord, RunRecord, Status};
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
        duration_seconds: 0.1,
        ..ResultRecord::new(
            id,
            params,
            Status::Ok,
            vec![Metric::new(metric, unit, better, samples.to_vec())
                .unwrap_or_else(|| panic!("metric"))],
        )
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
    let mut run = sysgauge_compare::testutil::run_with(host, Some(bogomips), results);
    run.run_id = format!("id-{host}");
    run.host.cpu.model = Some(format!("{host} <CPU> & co"));
    run.host.os.kernel_release = Some(kernel.into());
    run
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
        Machine::new("hostx", run("hostx", 1.0, 5200.0, "6.1.0")),
        Machine::new("hosta", run("hosta", 0.625, 108.0, "6.1.0")),
        Machine::new("hostb", run("hostb", 2.5, 38.4, "6.6.0")),
    ];
    compare(&machines, 0, &[]).unwrap()
}

/// A comparison of values accepted on import but at the far ends (1e-90
/// on the reference, 1e99 and 1e-99 on the others: ratios of 1e189 and
/// 1e-9), and of a ratio that overflowed to infinity.
pub fn extreme_comparison() -> Comparison {
    let machines = vec![
        Machine::new("tiny", run("tiny", 1e-90, 5200.0, "6.1.0")),
        Machine::new("huge", run("huge", 1e99, 108.0, "6.1.0")),
        Machine::new("small", run("small", 1e-99, 38.4, "6.6.0")),
    ];
    let mut c = compare(&machines, 0, &[]).unwrap();
    if let Some(cell) = c.rows[0].cells[1].as_mut() {
        cell.ratio = Some(f64::INFINITY);
    }
    c
}
