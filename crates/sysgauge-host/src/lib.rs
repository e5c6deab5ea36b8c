#![allow(clippy::field_reassign_with_default)]
//! sysgauge-host: placeholder until the /proc and /sys readers land; returns
//! only what needs no parsing.
pub mod procs;

use sysgauge_core::HostInfo;

/// Facts about this machine (placeholder: hostname and thread count only).
pub fn collect_live(_scratch: Option<&std::path::Path>) -> HostInfo {
    let mut h = HostInfo::default();
    h.hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string());
    h.cpu.threads = std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok());
    h
}

/// Label/value rows for `sysgauge host`.
pub fn facts_table(h: &HostInfo) -> Vec<(String, String)> {
    vec![
        (
            "hostname".into(),
            h.hostname.clone().unwrap_or_else(|| "unknown".into()),
        ),
        (
            "threads".into(),
            h.cpu
                .threads
                .map(|t| t.to_string())
                .unwrap_or_else(|| "unknown".into()),
        ),
    ]
}
