//! sysgauge-host: the facts about a machine that travel with every run,
//! read from /proc and /sys, and the kernel readers benchmarks use to catch
//! their own traps.
//!
//! - `collect` / `collect_live` fill a `sysgauge_core::HostInfo`: CPU model,
//!   topology, caches, clocks, BogoMIPS, virtualization, features; memory,
//!   swap, zram, huge pages; kernel, distribution, LSMs, container; the file
//!   systems of the scratch directory and /tmp; block devices; load, uptime,
//!   boot time; the machine's identity (machine-id, DMI UUID and serial).
//! - Trap detectors for benchmarks: `meminfo_dirty_writeback` and
//!   `wait_for_writeback` (write-behind still flushing), `read_diskstats` and
//!   `DiskStats::delta` (read-modify-write shows as reads during writes),
//!   `available_memory_bytes`, `free_space_bytes`, `fs_info`, `block_device`.
//! - `procs`: per-process CPU time and state from /proc/PID/stat, for
//!   `sysgauge procs`.
//! - `quiet`: the wait for a quiet machine before measuring, judged by the
//!   CPU time other processes use now (not by the load average).
//! - `facts_table` shapes the facts as label/value rows; this crate never
//!   prints.
//!
//! Every parser is a pure function over the file's text, so captured files
//! under `tests/fixtures/` test it; every reader goes through a `SysRoot`,
//! so a captured tree is collected by the same code as the live machine.
//! Missing facts are `None` ("unknown"), never an error or a panic: any
//! file may be absent on some kernel, board or container.

// Only CPUID (live.rs) is allowed `unsafe`: there is no safe wrapper for it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod block;
pub mod capacity;
mod cpu;
mod identity;
mod live;
mod load;
mod memory;
mod mounts;
mod os;
pub mod procs;
pub mod quiet;
mod sysroot;
mod table;
pub mod telemetry;
mod virt;
mod writeback;

pub use block::{
    block_device, block_device_at, diskstats_at, diskstats_delta, list_block_devices,
    parse_diskstats, read_diskstats, DiskStats, DiskStatsDelta, DiskStatsError,
};
pub use cpu::{
    arm_core_name, arm_implementer_name, kernel_bits, nominal_mhz_from_model, parse_cache_size,
    parse_cpu_list, parse_cpuinfo, select_features, ProcCpuinfo,
};
pub use identity::{collect_identity, meaningful};
pub use load::{parse_loadavg, parse_stat_btime, parse_uptime};
pub use memory::{
    available_memory_bytes, meminfo_dirty_writeback, parse_meminfo, parse_selected, parse_swaps,
    read_dirty_writeback, Meminfo,
};
pub use mounts::{
    decode_octal_escapes, find_mount, fs_info_at, lexical_normalize, parse_mountinfo, MountEntry,
};
pub use os::{container_from_environ, parse_os_release};
pub use sysroot::SysRoot;
pub use table::{facts_table, format_bytes_binary};
pub use virt::{
    hypervisor_from_cpuid_signature, hypervisor_from_dmi, user_mode_emulated, USER_MODE_EMULATION,
};
pub use writeback::{wait_for_writeback, DrainReport};

use std::path::Path;
use sysgauge_core::host::{FsInfo, HostInfo, StorageInfo};

/// Collects every host fact readable under `root`. `scratch` is the
/// directory benchmarks will write in; its file system is described too.
/// Never fails: what cannot be read is `None`.
///
/// For a live root only, uname(2) supplies the architecture (and the
/// kernel and host name when /proc/sys/kernel cannot be read), statvfs the
/// free and total bytes, CPUID the hypervisor's name, and this build's
/// pointer width the userland bits.
pub fn collect(root: &SysRoot, scratch: Option<&Path>) -> HostInfo {
    let cpuinfo = root
        .read_proc("cpuinfo")
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    let uname = if root.live { live::uname() } else { None }.unwrap_or_default();

    let mut cpu = cpu::collect_cpu(root, &cpuinfo);
    // uname's machine is the kernel's own answer; kernel.arch (newer
    // kernels) says the same for a captured tree; cpuinfo's shape is the
    // last resort.
    cpu.architecture = uname
        .machine
        .clone()
        .or_else(|| root.sys_kernel_value("arch"))
        .or_else(|| cpu::infer_architecture(&cpuinfo));
    cpu.kernel_bits = cpu.architecture.as_deref().and_then(kernel_bits);
    cpu.userland_bits = root.live.then_some(usize::BITS);
    cpu.virtualization = virt::detect_virtualization(root, &cpuinfo);
    if root.live && cpu.virtualization.as_deref() == Some("vm") {
        if let Some(name) = live::cpuid_hypervisor() {
            cpu.virtualization = Some(name.to_string());
        }
    }
    if root.live && virt::live_user_mode_emulated(&cpuinfo) {
        cpu.virtualization = Some(virt::USER_MODE_EMULATION.to_string());
    }

    let mut os = os::collect_os(root);
    os.kernel_release = os.kernel_release.or(uname.release);
    os.kernel_version = os.kernel_version.or(uname.version);

    HostInfo {
        hostname: root.sys_kernel_value("hostname").or(uname.nodename),
        identity: identity::collect_identity(root),
        cpu,
        memory: memory::collect_memory(root),
        os,
        security: os::collect_security(root),
        storage: StorageInfo {
            scratch: scratch.and_then(|p| fs_info_at(root, p)),
            tmp: fs_info_at(root, Path::new("/tmp")),
            block_devices: list_block_devices(root),
        },
        load: load::collect_load(root),
    }
}

/// Collects the running machine's facts.
pub fn collect_live(scratch: Option<&Path>) -> HostInfo {
    collect(&SysRoot::live(), scratch)
}

/// Live facts about the file system holding `path`.
pub fn fs_info(path: &Path) -> Option<FsInfo> {
    fs_info_at(&SysRoot::live(), path)
}

/// Live bytes available to an unprivileged user on the file system holding
/// `path` (statvfs `f_bavail`).
pub fn free_space_bytes(path: &Path) -> Option<u64> {
    live::statvfs_bytes(path).map(|s| s.free)
}
