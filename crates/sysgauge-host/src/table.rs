//! Host facts as label/value rows, for `sysgauge host` and report headers.
//!
//! This crate never prints; it only shapes rows so that every front end shows
//! the same facts in the same order. Missing facts read "unknown", so a
//! reader can tell "not known" from "none". Sizes are binary (KiB, MiB,
//! GiB) because memory and caches are sized in powers of two.

use sysgauge_core::host::{BlockDevice, CacheInfo, FsInfo, HostInfo};

const UNKNOWN: &str = "unknown";

/// `1536` → `1.5 KiB`.
pub fn format_bytes_binary(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn or_unknown<T>(value: Option<T>, f: impl FnOnce(T) -> String) -> String {
    value.map(f).unwrap_or_else(|| UNKNOWN.to_string())
}

fn text(value: &Option<String>) -> String {
    or_unknown(value.as_deref(), str::to_string)
}

fn mhz(value: Option<f64>) -> String {
    or_unknown(value, |v| format!("{v:.0} MHz"))
}

fn bytes(value: Option<u64>) -> String {
    or_unknown(value, format_bytes_binary)
}

fn num<T: ToString>(value: Option<T>) -> String {
    or_unknown(value, |v| v.to_string())
}

fn cache_label(c: &CacheInfo) -> String {
    let suffix = match c.kind.as_str() {
        "data" => "d",
        "instruction" => "i",
        _ => "",
    };
    format!("L{}{}", c.level, suffix)
}

fn cache_value(c: &CacheInfo) -> String {
    let mut s = format_bytes_binary(c.size_bytes);
    if let Some(n) = c.instances {
        s.push_str(&format!(" x {n}"));
    }
    if let Some(shared) = c.shared_by {
        s.push_str(&format!(
            " (shared by {shared} CPU{})",
            if shared == 1 { "" } else { "s" }
        ));
    }
    s
}

fn fs_value(fs: &Option<FsInfo>) -> String {
    let Some(fs) = fs else {
        return UNKNOWN.to_string();
    };
    let mut parts = vec![format!(
        "{} on {}",
        fs.fs_type.as_deref().unwrap_or("unknown fs"),
        fs.mount_point.as_deref().unwrap_or("unknown mount point")
    )];
    if let Some(src) = &fs.source {
        parts.push(format!("from {src}"));
    }
    if let Some(dev) = &fs.block_device {
        parts.push(format!("disk {dev}"));
    }
    if fs.ram_backed {
        parts.push("RAM-backed".to_string());
    }
    if let (Some(free), Some(total)) = (fs.free_bytes, fs.total_bytes) {
        parts.push(format!(
            "{} free of {}",
            format_bytes_binary(free),
            format_bytes_binary(total)
        ));
    }
    parts.join(", ")
}

fn block_value(d: &BlockDevice) -> String {
    let mut parts = Vec::new();
    parts.push(
        d.model
            .clone()
            .unwrap_or_else(|| "model unknown".to_string()),
    );
    parts.push(bytes(d.size_bytes));
    parts.push(match d.rotational {
        Some(true) => "rotational".to_string(),
        Some(false) => "non-rotational".to_string(),
        None => "rotation unknown".to_string(),
    });
    parts.push(format!(
        "blocks {}/{} (logical/physical)",
        num(d.logical_block_size),
        num(d.physical_block_size)
    ));
    if d.removable == Some(true) {
        parts.push("removable".to_string());
    }
    parts.push(format!("scheduler {}", text(&d.scheduler)));
    parts.join(", ")
}

/// Label/value rows describing a host, in reading order.
pub fn facts_table(host: &HostInfo) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |label: &str, value: String| rows.push((label.to_string(), value));
    let cpu = &host.cpu;
    row("Hostname", text(&host.hostname));
    let id = &host.identity;
    row("Machine ID", text(&id.machine_id));
    row("Product UUID", text(&id.product_uuid));
    row("Product serial", text(&id.product_serial));
    row("CPU model", text(&cpu.model));
    row("CPU vendor", text(&cpu.vendor));
    if let (Some(f), Some(m)) = (cpu.family, cpu.model_number) {
        let named = cpu
            .microarchitecture
            .as_deref()
            .map_or(String::new(), |n| format!(": {n}"));
        row("CPU family/model", format!("family {f} model {m}{named}"));
    }
    row("Architecture", text(&cpu.architecture));
    row("Kernel bits", num(cpu.kernel_bits));
    row("Userland bits", num(cpu.userland_bits));
    row("Sockets", num(cpu.sockets));
    row("Cores", num(cpu.cores));
    row("Threads", num(cpu.threads));
    if cpu.caches.is_empty() {
        row("Caches", UNKNOWN.to_string());
    }
    for c in &cpu.caches {
        row(&format!("Cache {}", cache_label(c)), cache_value(c));
    }
    row("BogoMIPS", or_unknown(cpu.bogomips, |b| format!("{b:.2}")));
    row("Nominal clock", mhz(cpu.nominal_mhz));
    row("Base clock", mhz(cpu.base_mhz));
    if let Some(r) = cpu.user_rated_mhz {
        row(
            "Rated clock",
            format!(
                "{} (given by the user, not read from the machine)",
                mhz(Some(r))
            ),
        );
    }
    row("Reported clock", mhz(cpu.reported_mhz));
    row("cpufreq min", mhz(cpu.cpufreq_min_mhz));
    row("cpufreq max", mhz(cpu.cpufreq_max_mhz));
    row("cpufreq current", mhz(cpu.cpufreq_cur_mhz));
    row("Governor", text(&cpu.governor));
    row("Scaling driver", text(&cpu.scaling_driver));
    row(
        "Virtualization",
        match cpu.virtualization.as_deref() {
            Some("vm") => "virtual machine (hypervisor not identified)".to_string(),
            Some("none") => "none (bare metal)".to_string(),
            Some(v) => v.to_string(),
            None => UNKNOWN.to_string(),
        },
    );
    row(
        "Container",
        host.os
            .container
            .clone()
            .unwrap_or_else(|| "none detected".to_string()),
    );
    row(
        "CPU features",
        if cpu.features.is_empty() {
            "none of interest found".to_string()
        } else {
            cpu.features.join(" ")
        },
    );
    let mem = &host.memory;
    row("Memory total", bytes(mem.total_bytes));
    row("Memory available", bytes(mem.available_bytes));
    row("Swap total", bytes(mem.swap_total_bytes));
    row("Swap free", bytes(mem.swap_free_bytes));
    if mem.swaps.is_empty() {
        // An empty /proc/swaps with SwapTotal 0 is a real "none"; without
        // SwapTotal the list may simply have been unreadable.
        let none = mem.swap_total_bytes == Some(0);
        row(
            "Swap devices",
            if none { "none" } else { UNKNOWN }.to_string(),
        );
    }
    for s in &mem.swaps {
        row(
            &format!("Swap {}", s.path),
            format!(
                "{}, {}, {} used, priority {}",
                s.kind,
                format_bytes_binary(s.size_bytes),
                format_bytes_binary(s.used_bytes),
                s.priority
            ),
        );
    }
    if mem.zram.is_empty() {
        row("zram", "none".to_string());
    }
    for z in &mem.zram {
        row(
            &format!("zram {}", z.name),
            format!(
                "{}, algorithm {}",
                bytes(z.disksize_bytes),
                text(&z.algorithm)
            ),
        );
    }
    row("Transparent hugepages", text(&mem.transparent_hugepages));
    let os = &host.os;
    row("Kernel", text(&os.kernel_release));
    row("Kernel version", text(&os.kernel_version));
    row("Distribution", text(&os.distribution));
    let sec = &host.security;
    row(
        "LSMs",
        if sec.lsms.is_empty() {
            UNKNOWN.to_string()
        } else {
            sec.lsms.join(",")
        },
    );
    row("AppArmor", text(&sec.apparmor));
    row("SELinux", text(&sec.selinux));
    row(
        "MAC LSM active",
        if sec.mac_lsm_active() { "yes" } else { "no" }.to_string(),
    );
    row("Scratch fs", fs_value(&host.storage.scratch));
    row("/tmp fs", fs_value(&host.storage.tmp));
    if host.storage.block_devices.is_empty() {
        row("Block devices", UNKNOWN.to_string());
    }
    for d in &host.storage.block_devices {
        row(&format!("Disk {}", d.name), block_value(d));
    }
    let load = &host.load;
    row(
        "Load average",
        match (load.load1, load.load5, load.load15) {
            (Some(a), Some(b), Some(c)) => format!("{a:.2} {b:.2} {c:.2}"),
            _ => UNKNOWN.to_string(),
        },
    );
    row("Uptime", or_unknown(load.uptime_seconds, format_duration));
    row(
        "Boot time",
        or_unknown(load.boot_time, |t| {
            t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
        }),
    );
    rows
}

/// `93784.2` → `1d 2h 3m`.
fn format_duration(seconds: f64) -> String {
    let total = seconds.max(0.0) as u64;
    let (d, h, m, s) = (
        total / 86_400,
        total / 3600 % 24,
        total / 60 % 60,
        total % 60,
    );
    if d > 0 {
        format!("{d}d {h}h {m}m")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else {
        format!("{m}m {s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_format() {
        assert_eq!(format_bytes_binary(512), "512 B");
        assert_eq!(format_bytes_binary(1536), "1.5 KiB");
        assert_eq!(format_bytes_binary(48 * 1024), "48 KiB");
        assert_eq!(format_bytes_binary(u64::MAX), "16 EiB");
    }

    #[test]
    fn empty_host_is_all_unknown_where_it_should_be() {
        let rows = facts_table(&HostInfo::default());
        let get = |l: &str| rows.iter().find(|(k, _)| k == l).map(|(_, v)| v.as_str());
        assert_eq!(get("CPU model"), Some("unknown"));
        assert_eq!(get("Memory total"), Some("unknown"));
        assert_eq!(get("Virtualization"), Some("unknown"));
        assert_eq!(get("Scratch fs"), Some("unknown"));
        assert_eq!(get("Swap devices"), Some("unknown"));
        assert_eq!(get("MAC LSM active"), Some("no"));
        assert_eq!(get("Rated clock"), None, "shown only when given");
    }

    #[test]
    fn a_given_rated_clock_says_so() {
        let mut host = HostInfo::default();
        host.cpu.user_rated_mhz = Some(4500.0);
        let rows = facts_table(&host);
        let rated = rows
            .iter()
            .find(|(k, _)| k == "Rated clock")
            .map(|(_, v)| v.as_str());
        assert_eq!(
            rated,
            Some("4500 MHz (given by the user, not read from the machine)")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(93_784.2), "1d 2h 3m");
        assert_eq!(format_duration(59.0), "0m 59s");
    }
}
