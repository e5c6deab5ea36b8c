//! The telemetry's own cost, measured directly (docs/performance.md,
//! "Telemetry"): the CPU time of the sampler thread over a watched stretch
//! of idle time, and the wall time of the start and end snapshots.
//!
//! `cargo run --release -p sysgauge-host --example telemetry_cost [SECONDS]`

use std::time::{Duration, Instant};
use sysgauge_core::CaseMonitor;
use sysgauge_host::telemetry::Telemetry;

/// Nanoseconds on a CPU of this process's thread called `name`, from its
/// schedstat (the tick counts of /proc/PID/stat are too coarse for it).
fn thread_cpu_ns(name: &str) -> Option<u64> {
    std::fs::read_dir("/proc/self/task")
        .ok()?
        .flatten()
        .find_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            if comm.trim() != name {
                return None;
            }
            let sched = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
            sched.split_whitespace().next()?.parse().ok()
        })
}

fn main() {
    let secs: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        .clamp(1, 600);
    let t = Telemetry::live();
    let mut snapshot_ms = Vec::new();
    let started = Instant::now();
    let watch = t.watch("hash");
    snapshot_ms.push(started.elapsed().as_secs_f64() * 1e3);
    std::thread::sleep(Duration::from_secs(secs));
    let ns = thread_cpu_ns("sg-telemetry").unwrap_or(0);
    let at_end = Instant::now();
    let seen = watch.finish("cost");
    snapshot_ms.push(at_end.elapsed().as_secs_f64() * 1e3);
    let cpu = ns as f64 / 1e9;
    println!(
        "sampler thread: {cpu:.4} s of CPU in {secs} s = {:.4} % of one CPU; snapshots {:.1} ms (start) and {:.1} ms (end, with the sampler's join); {} details",
        100.0 * cpu / secs as f64,
        snapshot_ms[0],
        snapshot_ms[1],
        seen.details.0.len()
    );
}
