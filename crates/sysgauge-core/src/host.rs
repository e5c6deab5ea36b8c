//! `HostInfo`: the facts about the machine that travel with every run.
//!
//! Pure data. Collection lives in `sysgauge-host`; this crate holds only the
//! shape so records can be stored, exported and compared without pulling in
//! the /proc readers. Every fact is optional: a fact a machine does not
//! expose is `None` (shown as "unknown"), never an error.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostInfo {
    pub hostname: Option<String>,
    /// What tells this machine apart from another with the same host name
    /// (machine-id, DMI UUID and serial). Absent from records written before
    /// it existed, and left out of the JSON when nothing was readable.
    #[serde(default, skip_serializing_if = "IdentityInfo::is_empty")]
    pub identity: IdentityInfo,
    pub cpu: CpuInfo,
    pub memory: MemoryInfo,
    pub os: OsInfo,
    pub security: SecurityInfo,
    pub storage: StorageInfo,
    pub load: LoadInfo,
}

/// A machine's stable identity: what survives a rename and separates two
/// machines that share a host name. Each part is optional: the DMI files
/// are readable by root only, and boards without firmware tables (many ARM
/// boards) have none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityInfo {
    /// /etc/machine-id (systemd and dbus write it at installation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// /sys/class/dmi/id/product_uuid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_uuid: Option<String>,
    /// /sys/class/dmi/id/product_serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_serial: Option<String>,
}

impl IdentityInfo {
    /// True when no part of the identity is known.
    pub fn is_empty(&self) -> bool {
        self.machine_id.is_none() && self.product_uuid.is_none() && self.product_serial.is_none()
    }

    /// A short stable key for the machine, for labels: the first 8
    /// characters of the machine-id, else of the DMI UUID, else of the serial.
    pub fn short(&self) -> Option<String> {
        self.stable().map(|s| s.chars().take(8).collect())
    }

    /// The whole of what `short` is the start of.
    pub fn stable(&self) -> Option<&str> {
        [&self.machine_id, &self.product_uuid, &self.product_serial]
            .into_iter()
            .flatten()
            .next()
            .map(String::as_str)
    }
}

/// The lowest and highest rated clock a user may give (MHz, for
/// `user_rated_mhz`): below or above, the value is a typo or a unit slip
/// (`--rated 4.5` for 4.5 GHz).
pub const RATED_MIN_MHZ: f64 = 50.0;
pub const RATED_MAX_MHZ: f64 = 10_000.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuInfo {
    /// Model string (`model name`, or `Model`/`Hardware` on ARM boards).
    pub model: Option<String>,
    pub vendor: Option<String>,
    /// Machine architecture as the kernel names it (`x86_64`, `aarch64`, `armv7l`).
    pub architecture: Option<String>,
    /// Bitness of the kernel's architecture (64 or 32).
    pub kernel_bits: Option<u32>,
    /// Bitness of this sysgauge build (its pointer width): a 32-bit userland on
    /// a 64-bit kernel is a common Raspberry Pi set-up and matters for speed.
    pub userland_bits: Option<u32>,
    pub sockets: Option<u32>,
    /// Physical cores in total (all sockets).
    pub cores: Option<u32>,
    /// Logical CPUs (hardware threads) online.
    pub threads: Option<u32>,
    pub caches: Vec<CacheInfo>,
    pub bogomips: Option<f64>,
    /// Nominal clock parsed from the model string (`@ 2.60GHz`).
    pub nominal_mhz: Option<f64>,
    /// `cpu MHz` from /proc/cpuinfo (first CPU).
    pub reported_mhz: Option<f64>,
    pub cpufreq_min_mhz: Option<f64>,
    pub cpufreq_max_mhz: Option<f64>,
    pub cpufreq_cur_mhz: Option<f64>,
    /// cpufreq `base_frequency` where the driver exposes it (intel_pstate).
    pub base_mhz: Option<f64>,
    pub governor: Option<String>,
    pub scaling_driver: Option<String>,
    /// The rated clock the user gave (`clock --rated`, `run --rated`, a
    /// fleet inventory's `rated_mhz`), for machines that publish none (VMs,
    /// many ARM boards): given, not read from the machine. Absent when none
    /// was given and from records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_rated_mhz: Option<f64>,
    /// Hypervisor or container kind (`kvm`, `vmware`, `xen`, ...); `none` on
    /// bare metal when that can be told; `None` when unknown.
    pub virtualization: Option<String>,
    /// x86 `cpu family` number (CPUID). With `model_number` it tells apart
    /// generations that share one model string ("AMD EPYC" guests). Absent
    /// on other architectures and from records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<u32>,
    /// x86 `model` number (CPUID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_number: Option<u32>,
    /// The microarchitecture named from vendor, family and model
    /// (`sysgauge_core::microarch`), e.g. "AMD Zen 4"; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microarchitecture: Option<String>,
    /// Selected CPU features that matter for sysgauge's kernels
    /// (aes, sha_ni, avx2, avx512f, neon, sha2, ...).
    pub features: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheInfo {
    pub level: u8,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    pub size_bytes: u64,
    /// How many logical CPUs share one instance of this cache.
    pub shared_by: Option<u32>,
    /// How many instances exist across the machine.
    pub instances: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryInfo {
    pub total_bytes: Option<u64>,
    pub available_bytes: Option<u64>,
    pub swap_total_bytes: Option<u64>,
    pub swap_free_bytes: Option<u64>,
    pub swaps: Vec<SwapDevice>,
    pub zram: Vec<ZramDevice>,
    /// Transparent huge pages setting (`always`, `madvise`, `never`).
    pub transparent_hugepages: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapDevice {
    pub path: String,
    /// `partition` or `file`.
    pub kind: String,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub priority: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZramDevice {
    pub name: String,
    pub disksize_bytes: Option<u64>,
    pub algorithm: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsInfo {
    /// `uname -r`.
    pub kernel_release: Option<String>,
    /// `uname -v`.
    pub kernel_version: Option<String>,
    /// os-release `PRETTY_NAME`.
    pub distribution: Option<String>,
    /// os-release `ID`.
    pub distribution_id: Option<String>,
    /// os-release `VERSION_ID`.
    pub distribution_version: Option<String>,
    /// Container manager this process runs under (`docker`, `lxc`,
    /// `podman`, `systemd-nspawn`, ...), when one can be detected. Kept apart
    /// from `CpuInfo::virtualization` because a container inside a VM is
    /// both, and each changes what a measurement means. `None` means none
    /// was detected, which does not prove there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityInfo {
    /// Active Linux Security Modules in load order (/sys/kernel/security/lsm).
    pub lsms: Vec<String>,
    /// AppArmor state: `enabled`, `disabled`, or `None` when unknown.
    pub apparmor: Option<String>,
    /// SELinux state: `enforcing`, `permissive`, `disabled`.
    pub selinux: Option<String>,
}

impl SecurityInfo {
    /// True when a major access-control LSM (AppArmor, SELinux, Smack, TOMOYO)
    /// is enforcing something: such modules cost measurable time on syscall
    /// heavy work.
    pub fn mac_lsm_active(&self) -> bool {
        let listed = self
            .lsms
            .iter()
            .any(|l| matches!(l.as_str(), "apparmor" | "selinux" | "smack" | "tomoyo"));
        let apparmor = self.apparmor.as_deref() == Some("enabled");
        let selinux = matches!(self.selinux.as_deref(), Some("enforcing" | "permissive"));
        listed || apparmor || selinux
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageInfo {
    /// The filesystem holding the scratch directory of this run.
    pub scratch: Option<FsInfo>,
    /// The filesystem holding /tmp.
    pub tmp: Option<FsInfo>,
    pub block_devices: Vec<BlockDevice>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsInfo {
    pub path: String,
    pub mount_point: Option<String>,
    pub fs_type: Option<String>,
    /// Mount source (`/dev/sda1`, `tmpfs`, ...).
    pub source: Option<String>,
    /// Kernel name of the backing whole block device (`sda`, `nvme0n1`), when
    /// there is one.
    pub block_device: Option<String>,
    /// True for tmpfs, ramfs, zram and similar: such a filesystem measures
    /// memory, not a disk.
    pub ram_backed: bool,
    /// The mount's own options (`rw,noatime`), from /proc/self/mountinfo.
    pub mount_options: Option<String>,
    /// The file system's options (`rw,errors=remount-ro,commit=60`): the
    /// journal mode, barriers and commit interval that change write speed.
    pub fs_options: Option<String>,
    pub free_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockDevice {
    pub name: String,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub size_bytes: Option<u64>,
    pub removable: Option<bool>,
    /// I/O scheduler in use (`none`, `mq-deadline`, ...).
    pub scheduler: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadInfo {
    pub load1: Option<f64>,
    pub load5: Option<f64>,
    pub load15: Option<f64>,
    pub uptime_seconds: Option<f64>,
    pub boot_time: Option<DateTime<Utc>>,
}
