//! CPU facts: /proc/cpuinfo, CPU topology, caches and cpufreq from sysfs.
//!
//! /proc/cpuinfo differs per architecture and per kernel age, so the parser
//! keeps every fact it may need and decides nothing; `collect_cpu` then
//! prefers sysfs (exact topology, per-CPU caches and frequencies) and falls
//! back to cpuinfo fields where sysfs has nothing. Things worth knowing:
//!
//! - x86 names its keys in lower case (`model name`, `bogomips`, `flags`) and
//!   also has a numeric `model` key; Raspberry Pi kernels add a board `Model`
//!   key, so keys are matched case-sensitively except for BogoMIPS, which
//!   ARM spells `BogoMIPS`.
//! - 32-bit ARM kernels write `model name : ARMv7 Processor rev 4 (v7l)`; the
//!   part in parentheses is exactly what `uname -m` appends to `arm`, which
//!   lets a captured tree tell its architecture without uname.
//! - arm64 kernels print no model at all, only `CPU implementer`/`CPU part`
//!   numbers, mapped here to well-known core names.
//! - BogoMIPS on ARM comes from the timer frequency (38.40 on a Pi at
//!   19.2 MHz), which is why sysgauge shows it only beside real measurements.

use crate::sysroot::{dir_names, SysRoot};
use std::collections::{BTreeMap, BTreeSet};
use sysgauge_core::host::{CacheInfo, CpuInfo};

/// The largest CPU list accepted: above the kernel's NR_CPUS limit (8192),
/// low enough that a hostile "0-4294967295" cannot allocate gigabytes.
const MAX_CPU_LIST_LEN: usize = 65_536;

/// Facts parsed from /proc/cpuinfo. Per-CPU values are those of the first
/// CPU that has them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcCpuinfo {
    /// Number of `processor : N` entries.
    pub processors: u32,
    /// `model name` (x86, 32-bit ARM), or the old ARM `Processor` line.
    pub model_name: Option<String>,
    /// Raspberry Pi board `Model` line.
    pub board_model: Option<String>,
    /// ARM `Hardware` line (`BCM2835`).
    pub hardware: Option<String>,
    /// ARM `Revision` line (board revision code).
    pub revision: Option<String>,
    /// Other architectures' model keys: `cpu model` (MIPS), `cpu` (POWER),
    /// `uarch` (RISC-V).
    pub other_model: Option<String>,
    /// x86 `vendor_id`.
    pub vendor_id: Option<String>,
    /// ARM `CPU implementer`.
    pub cpu_implementer: Option<u32>,
    /// ARM `CPU part`.
    pub cpu_part: Option<u32>,
    /// ARM `CPU architecture` as written (`7`, `8`, `AArch64`).
    pub cpu_architecture: Option<String>,
    /// x86 `cpu family`.
    pub cpu_family: Option<u32>,
    /// x86 `model` (the number; `model name` is the string).
    pub cpu_model: Option<u32>,
    /// `bogomips` / `BogoMIPS`.
    pub bogomips: Option<f64>,
    /// x86 `cpu MHz`.
    pub mhz: Option<f64>,
    /// x86 `flags` or ARM `Features`, in file order.
    pub flags: Vec<String>,
    /// True when the flags came from an ARM `Features` line.
    pub arm_features: bool,
    /// Distinct x86 `physical id` values.
    pub physical_ids: BTreeSet<u32>,
    /// Distinct (`physical id`, `core id`) pairs.
    pub cores: BTreeSet<(u32, u32)>,
    /// x86 `cpu cores` (cores per package).
    pub cores_per_package: Option<u32>,
    /// True when 32-bit x86 kernel lines (`fdiv_bug`) are present.
    pub x86_32_lines: bool,
}

/// Parses /proc/cpuinfo. Never fails: unknown keys are ignored, bad values
/// leave their field empty.
pub fn parse_cpuinfo(text: &str) -> ProcCpuinfo {
    let mut info = ProcCpuinfo::default();
    let mut physical_id: Option<u32> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim();
        match key {
            "processor" if value.parse::<u32>().is_ok() => {
                info.processors = info.processors.saturating_add(1);
                physical_id = None;
            }
            // Kernels before 3.8 printed the ARM model as `Processor`.
            "Processor" if value.parse::<u32>().is_err() => {
                set_once(&mut info.model_name, value);
            }
            "model name" => set_once(&mut info.model_name, value),
            "Model" => set_once(&mut info.board_model, value),
            "Hardware" => set_once(&mut info.hardware, value),
            "Revision" => set_once(&mut info.revision, value),
            "cpu model" | "cpu" | "uarch" => set_once(&mut info.other_model, value),
            "vendor_id" => set_once(&mut info.vendor_id, value),
            "CPU implementer" => keep_first(&mut info.cpu_implementer, || parse_hex_or_dec(value)),
            "CPU part" => keep_first(&mut info.cpu_part, || parse_hex_or_dec(value)),
            "CPU architecture" => set_once(&mut info.cpu_architecture, value),
            "cpu family" => keep_first(&mut info.cpu_family, || value.parse().ok()),
            "model" => keep_first(&mut info.cpu_model, || value.parse().ok()),
            "cpu MHz" => keep_first(&mut info.mhz, || parse_finite(value)),
            "flags" | "Features" if info.flags.is_empty() => {
                info.flags = value.split_whitespace().map(str::to_string).collect();
                info.arm_features = key == "Features";
            }
            "physical id" => {
                physical_id = value.parse().ok();
                if let Some(id) = physical_id {
                    info.physical_ids.insert(id);
                }
            }
            "core id" => {
                if let (Some(p), Ok(c)) = (physical_id, value.parse::<u32>()) {
                    info.cores.insert((p, c));
                }
            }
            "cpu cores" => keep_first(&mut info.cores_per_package, || value.parse().ok()),
            "fdiv_bug" | "f00f_bug" | "coma_bug" => info.x86_32_lines = true,
            _ if key.eq_ignore_ascii_case("bogomips") => {
                keep_first(&mut info.bogomips, || parse_finite(value))
            }
            _ => {}
        }
    }
    info
}

/// Fills `slot` unless an earlier CPU already did: per-CPU values are
/// those of the first CPU.
fn keep_first<T>(slot: &mut Option<T>, value: impl FnOnce() -> Option<T>) {
    if slot.is_none() {
        *slot = value();
    }
}

fn set_once(slot: &mut Option<String>, value: &str) {
    if slot.is_none() && !value.is_empty() {
        *slot = Some(value.to_string());
    }
}

fn parse_finite(value: &str) -> Option<f64> {
    value.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn parse_hex_or_dec(value: &str) -> Option<u32> {
    match value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

/// Parses a kernel CPU list (`0-3,8-11`, `0`, empty) into sorted, distinct
/// CPU numbers. `None` when malformed or when it names more than
/// `MAX_CPU_LIST_LEN` CPUs (repeats count).
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let text = text.trim();
    let mut cpus = BTreeSet::new();
    if text.is_empty() {
        return Some(Vec::new());
    }
    // Counts every CPU named, repeats included: bounding only the distinct
    // ones let "0-30000," repeated over 4 KB cost 15 million set inserts.
    let mut named = 0usize;
    for part in text.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (
                lo.trim().parse::<u32>().ok()?,
                hi.trim().parse::<u32>().ok()?,
            ),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if hi < lo {
            return None;
        }
        let span = usize::try_from(hi - lo).ok()?;
        named = named.saturating_add(span).saturating_add(1);
        if named > MAX_CPU_LIST_LEN {
            return None;
        }
        cpus.extend(lo..=hi);
    }
    Some(cpus.into_iter().collect())
}

/// Bitness of a kernel machine name (`uname -m`): 64, 32, or `None` when
/// the name is not known.
pub fn kernel_bits(machine: &str) -> Option<u32> {
    let m = machine.trim();
    let is64 = matches!(
        m,
        "x86_64"
            | "amd64"
            | "aarch64"
            | "arm64"
            | "aarch64_be"
            | "ppc64"
            | "ppc64le"
            | "s390x"
            | "riscv64"
            | "mips64"
            | "sparc64"
            | "loongarch64"
            | "ia64"
            | "alpha"
    );
    let is32 = matches!(
        m,
        "i386"
            | "i486"
            | "i586"
            | "i686"
            | "x86"
            | "ppc"
            | "s390"
            | "riscv32"
            | "mips"
            | "mipsel"
            | "sparc"
            | "m68k"
            | "sh4"
    ) || (m.starts_with("arm") && m != "arm64")
        || m.starts_with("armv");
    if is64 {
        Some(64)
    } else if is32 {
        Some(32)
    } else {
        None
    }
}

/// Architecture a captured cpuinfo implies, for trees captured without
/// `uname -m` or `/proc/sys/kernel/arch`.
pub(crate) fn infer_architecture(info: &ProcCpuinfo) -> Option<String> {
    // 32-bit ARM: "ARMv7 Processor rev 4 (v7l)" -> "armv7l".
    if let Some(model) = &info.model_name {
        if let (Some(open), true) = (model.rfind('('), model.ends_with(')')) {
            let inner = &model[open + 1..model.len() - 1];
            if inner.starts_with('v')
                && inner.len() <= 6
                && inner.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Some(format!("arm{inner}"));
            }
        }
    }
    // arm64 kernels list `asimd`/`fp` features (32-bit ones say neon/vfp)
    // and print no model name.
    if info.arm_features
        && info.model_name.is_none()
        && info.flags.iter().any(|f| f == "asimd" || f == "fp")
    {
        return Some("aarch64".to_string());
    }
    // x86: a 32-bit kernel prints fdiv_bug/f00f_bug/coma_bug lines, a 64-bit
    // one never does. A 32-bit kernel names itself i686 for family 6 and up.
    if info.vendor_id.is_some() && !info.flags.is_empty() && !info.arm_features {
        if info.x86_32_lines {
            let family = info.cpu_family.unwrap_or(6).clamp(3, 6);
            return Some(format!("i{family}86"));
        }
        return Some("x86_64".to_string());
    }
    None
}

/// Nominal clock in MHz from a model string: `... CPU @ 2.60GHz` → 2600.
/// Older strings lack the `@` (`Pentium(R) 4 CPU 3.00GHz`), so the last
/// token ending in GHz/MHz is taken.
pub fn nominal_mhz_from_model(model: &str) -> Option<f64> {
    let tokens: Vec<&str> = model.split_whitespace().collect();
    for (i, token) in tokens.iter().enumerate().rev() {
        let lower = token.to_ascii_lowercase();
        let (number, scale) = if let Some(n) = lower.strip_suffix("ghz") {
            (n.to_string(), 1000.0)
        } else if let Some(n) = lower.strip_suffix("mhz") {
            (n.to_string(), 1.0)
        } else {
            continue;
        };
        // "2.60 GHz" puts the number in the previous token.
        let number = if number.is_empty() {
            match i.checked_sub(1).and_then(|j| tokens.get(j)) {
                Some(prev) => prev.to_string(),
                None => continue,
            }
        } else {
            number
        };
        if let Some(v) = parse_finite(number.trim_start_matches('@')) {
            if v > 0.0 {
                return Some(v * scale);
            }
        }
    }
    None
}

/// Core name for an ARM implementer/part pair, for the few parts common on
/// boards and servers. Unknown pairs give `None` rather than a guess.
pub fn arm_core_name(implementer: u32, part: u32) -> Option<&'static str> {
    if implementer != 0x41 {
        return None;
    }
    Some(match part {
        0xb76 => "ARM1176",
        0xc07 => "Cortex-A7",
        0xc08 => "Cortex-A8",
        0xc09 => "Cortex-A9",
        0xc0f => "Cortex-A15",
        0xd03 => "Cortex-A53",
        0xd04 => "Cortex-A35",
        0xd05 => "Cortex-A55",
        0xd07 => "Cortex-A57",
        0xd08 => "Cortex-A72",
        0xd09 => "Cortex-A73",
        0xd0a => "Cortex-A75",
        0xd0b => "Cortex-A76",
        0xd0c => "Neoverse-N1",
        0xd0d => "Cortex-A77",
        0xd40 => "Neoverse-V1",
        0xd41 => "Cortex-A78",
        0xd44 => "Cortex-X1",
        _ => return None,
    })
}

/// Vendor name of an ARM `CPU implementer` code.
pub fn arm_implementer_name(implementer: u32) -> Option<&'static str> {
    Some(match implementer {
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x4e => "NVIDIA",
        0x50 => "APM",
        0x51 => "Qualcomm",
        0x53 => "Samsung",
        0x56 => "Marvell",
        0x61 => "Apple",
        0x69 => "Intel",
        0xc0 => "Ampere",
        _ => return None,
    })
}

/// The features sysgauge's kernels care about, in display order. Only
/// these are kept: the full flag list is long and says little for a run.
const X86_FEATURES: &[&str] = &[
    "sse2",
    "ssse3",
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "bmi2",
    "adx",
    "aes",
    "pclmulqdq",
    "vpclmulqdq",
    "vaes",
    "sha_ni",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "rdrand",
    "rdseed",
];
const ARM_FEATURES: &[&str] = &[
    "neon", "asimd", "vfpv4", "aes", "pmull", "sha1", "sha2", "sha3", "sha512", "crc32", "atomics",
    "sve", "sve2",
];

/// Selects the benchmark-relevant features from a flag list.
pub fn select_features(flags: &[String], arm: bool) -> Vec<String> {
    let wanted = if arm { ARM_FEATURES } else { X86_FEATURES };
    let present: BTreeSet<&str> = flags.iter().map(String::as_str).collect();
    wanted
        .iter()
        .filter(|f| present.contains(**f))
        .map(|f| f.to_string())
        .collect()
}

/// Parses a sysfs cache size (`48K`, `2048K`, `32M`) into bytes. The kernel
/// writes KiB with a `K`; other suffixes are accepted for robustness.
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (number, scale) = match t.char_indices().last()? {
        (i, 'K' | 'k') => (&t[..i], 1024u64),
        (i, 'M' | 'm') => (&t[..i], 1024 * 1024),
        (i, 'G' | 'g') => (&t[..i], 1024 * 1024 * 1024),
        _ => (t, 1),
    };
    number.trim().parse::<u64>().ok()?.checked_mul(scale)
}

/// The CPUs to look at in sysfs: the online list, or the cpuN directories.
fn online_cpus(root: &SysRoot) -> Vec<u32> {
    if let Some(list) = root
        .read_sys("devices/system/cpu/online")
        .and_then(|t| parse_cpu_list(&t))
    {
        if !list.is_empty() {
            return list;
        }
    }
    dir_names(&root.sys_path("devices/system/cpu"))
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse::<u32>().ok())
        .collect()
}

/// How one core is told apart from another.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CoreKey {
    /// The set of hardware threads sharing the core: exact whatever the
    /// numbering of `core_id` (which repeats across packages and dies).
    Siblings(Vec<u32>),
    /// (package, core_id) for kernels without sibling lists.
    Id(i64, String),
}

/// Sockets and cores from sysfs topology of the given CPUs.
fn sysfs_topology(root: &SysRoot, cpus: &[u32]) -> (Option<u32>, Option<u32>) {
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for cpu in cpus {
        let base = format!("devices/system/cpu/cpu{cpu}/topology");
        let package = root
            .sys_value(&format!("{base}/physical_package_id"))
            .and_then(|v| v.parse::<i64>().ok());
        let siblings = root
            .sys_value(&format!("{base}/core_cpus_list"))
            .or_else(|| root.sys_value(&format!("{base}/thread_siblings_list")))
            .and_then(|v| parse_cpu_list(&v))
            .filter(|s| !s.is_empty());
        // -1 means the firmware did not say which package a CPU is in.
        if let Some(p) = package.filter(|p| *p >= 0) {
            packages.insert(p);
        }
        if let Some(s) = siblings {
            cores.insert(CoreKey::Siblings(s));
        } else if let Some(core_id) = root.sys_value(&format!("{base}/core_id")) {
            cores.insert(CoreKey::Id(package.unwrap_or(-1), core_id));
        }
    }
    let sockets = (!packages.is_empty()).then_some(packages.len() as u32);
    let cores = (!cores.is_empty()).then_some(cores.len() as u32);
    (sockets, cores)
}

/// Display order of cache kinds within a level: L1d before L1i.
fn kind_order(kind: &str) -> u8 {
    match kind {
        "data" => 0,
        "instruction" => 1,
        "unified" => 2,
        _ => 3,
    }
}

/// Caches from sysfs, grouped into one entry per (level, kind, size).
fn sysfs_caches(root: &SysRoot, cpus: &[u32]) -> Vec<CacheInfo> {
    // (level, kind order, kind, size) -> distinct sharing lists
    type Key = (u8, u8, String, u64);
    let mut groups: BTreeMap<Key, BTreeSet<Vec<u32>>> = BTreeMap::new();
    let mut unshared: BTreeSet<Key> = BTreeSet::new();
    for cpu in cpus {
        let dir = format!("devices/system/cpu/cpu{cpu}/cache");
        for index in dir_names(&root.sys_path(&dir)) {
            if !index.starts_with("index") {
                continue;
            }
            let base = format!("{dir}/{index}");
            let Some(level) = root
                .sys_value(&format!("{base}/level"))
                .and_then(|v| v.parse::<u8>().ok())
            else {
                continue;
            };
            let Some(kind) = root
                .sys_value(&format!("{base}/type"))
                .map(|t| t.to_ascii_lowercase())
            else {
                continue;
            };
            let Some(size) = root
                .sys_value(&format!("{base}/size"))
                .and_then(|v| parse_cache_size(&v))
            else {
                continue;
            };
            let key = (level, kind_order(&kind), kind, size);
            match root
                .sys_value(&format!("{base}/shared_cpu_list"))
                .and_then(|v| parse_cpu_list(&v))
            {
                Some(list) if !list.is_empty() => {
                    groups.entry(key).or_default().insert(list);
                }
                _ => {
                    unshared.insert(key);
                }
            }
        }
    }
    let mut caches: Vec<CacheInfo> = groups
        .iter()
        .map(|((level, _, kind, size), lists)| CacheInfo {
            level: *level,
            kind: kind.clone(),
            size_bytes: *size,
            shared_by: lists.iter().map(|l| l.len() as u32).max(),
            instances: Some(lists.len() as u32),
        })
        .collect();
    for (level, _, kind, size) in unshared {
        if !caches
            .iter()
            .any(|c| c.level == level && c.kind == kind && c.size_bytes == size)
        {
            caches.push(CacheInfo {
                level,
                kind,
                size_bytes: size,
                shared_by: None,
                instances: None,
            });
        }
    }
    caches.sort_by_key(|c| (c.level, kind_order(&c.kind), c.size_bytes));
    caches
}

/// cpufreq facts over the given CPUs.
#[derive(Debug, Default)]
struct Cpufreq {
    min_mhz: Option<f64>,
    max_mhz: Option<f64>,
    cur_mhz: Option<f64>,
    base_mhz: Option<f64>,
    governor: Option<String>,
    driver: Option<String>,
}

fn khz_to_mhz(value: Option<String>) -> Option<f64> {
    let khz = value?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)?;
    Some(khz / 1000.0)
}

fn min_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Distinct values in first-seen order, joined with `,`: a machine whose
/// CPUs disagree (a governor set on one CPU only) shows it plainly.
fn join_distinct(values: &[String]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for v in values {
        if !seen.contains(&v.as_str()) {
            seen.push(v);
        }
    }
    (!seen.is_empty()).then(|| seen.join(","))
}

fn sysfs_cpufreq(root: &SysRoot, cpus: &[u32]) -> Cpufreq {
    let mut f = Cpufreq::default();
    let mut governors = Vec::new();
    let mut drivers = Vec::new();
    for cpu in cpus {
        let base = format!("devices/system/cpu/cpu{cpu}/cpufreq");
        let get = |name: &str| root.sys_value(&format!("{base}/{name}"));
        // The hardware limits (cpuinfo_*) are what the CPU is rated for; the
        // scaling_* policy limits stand in where a driver lacks them.
        let min =
            khz_to_mhz(get("cpuinfo_min_freq")).or_else(|| khz_to_mhz(get("scaling_min_freq")));
        let max =
            khz_to_mhz(get("cpuinfo_max_freq")).or_else(|| khz_to_mhz(get("scaling_max_freq")));
        f.min_mhz = min_opt(f.min_mhz, min);
        f.max_mhz = max_opt(f.max_mhz, max);
        // Hybrid CPUs have one base per core type: the highest is the
        // performance cores' rating.
        f.base_mhz = max_opt(f.base_mhz, khz_to_mhz(get("base_frequency")));
        if f.cur_mhz.is_none() {
            f.cur_mhz =
                khz_to_mhz(get("scaling_cur_freq")).or_else(|| khz_to_mhz(get("cpuinfo_cur_freq")));
        }
        governors.extend(get("scaling_governor"));
        drivers.extend(get("scaling_driver"));
    }
    f.governor = join_distinct(&governors);
    f.driver = join_distinct(&drivers);
    f
}

/// The model to show for a CPU, best source first.
fn choose_model(info: &ProcCpuinfo) -> Option<String> {
    if let Some(board) = &info.board_model {
        return Some(board.clone());
    }
    let generic_arm =
        |m: &str| m.starts_with("ARMv") && (m.contains(" Processor") || m.contains("-compatible"));
    if let Some(m) = info.model_name.as_deref().filter(|m| !generic_arm(m)) {
        return Some(m.to_string());
    }
    if let Some(hw) = &info.hardware {
        return Some(hw.clone());
    }
    if let (Some(imp), Some(part)) = (info.cpu_implementer, info.cpu_part) {
        if let Some(name) = arm_core_name(imp, part) {
            return Some(format!("ARM {name}"));
        }
    }
    info.model_name.clone().or_else(|| info.other_model.clone())
}

/// Collects the CPU facts that come from files (everything except the
/// architecture, which the caller resolves, and virtualization).
pub(crate) fn collect_cpu(root: &SysRoot, info: &ProcCpuinfo) -> CpuInfo {
    let cpus = online_cpus(root);
    let (mut sockets, mut cores) = sysfs_topology(root, &cpus);
    if sockets.is_none() && !info.physical_ids.is_empty() {
        sockets = Some(info.physical_ids.len() as u32);
    }
    if cores.is_none() {
        if !info.cores.is_empty() {
            cores = Some(info.cores.len() as u32);
        } else if let (Some(per), Some(s)) = (info.cores_per_package, sockets) {
            cores = per.checked_mul(s);
        }
    }
    let threads = if !cpus.is_empty() {
        Some(cpus.len() as u32)
    } else {
        (info.processors > 0).then_some(info.processors)
    };
    let freq = sysfs_cpufreq(root, &cpus);
    let model = choose_model(info);
    let vendor = info.vendor_id.clone().or_else(|| {
        info.cpu_implementer
            .and_then(arm_implementer_name)
            .map(str::to_string)
    });
    CpuInfo {
        nominal_mhz: info.model_name.as_deref().and_then(nominal_mhz_from_model),
        model,
        vendor,
        architecture: None,
        kernel_bits: None,
        userland_bits: None,
        sockets,
        cores,
        threads,
        caches: sysfs_caches(root, &cpus),
        bogomips: info.bogomips,
        reported_mhz: info.mhz,
        cpufreq_min_mhz: freq.min_mhz,
        cpufreq_max_mhz: freq.max_mhz,
        cpufreq_cur_mhz: freq.cur_mhz,
        base_mhz: freq.base_mhz,
        governor: freq.governor,
        scaling_driver: freq.driver,
        // Only the user gives it (`--rated`); nothing on the machine does.
        user_rated_mhz: None,
        virtualization: None,
        features: select_features(&info.flags, info.arm_features),
        family: info.cpu_family,
        model_number: info.cpu_model,
        microarchitecture: match (&info.vendor_id, info.cpu_family, info.cpu_model) {
            (Some(v), Some(f), Some(m)) => {
                sysgauge_core::microarch::x86_microarchitecture(v, f, m).map(str::to_string)
            }
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PI3_32: &str = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 4 (v7l)\nBogoMIPS\t: 38.40\nFeatures\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm crc32 \nCPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\nHardware\t: BCM2835\nRevision\t: a02082\nSerial\t\t: 00000000c0ffee00\nModel\t\t: Raspberry Pi 3 Model B Rev 1.2\n";

    #[test]
    fn pi_cpuinfo() {
        let info = parse_cpuinfo(PI3_32);
        assert_eq!(info.processors, 1);
        assert_eq!(info.bogomips, Some(38.4));
        assert_eq!(
            info.board_model.as_deref(),
            Some("Raspberry Pi 3 Model B Rev 1.2")
        );
        assert_eq!(info.hardware.as_deref(), Some("BCM2835"));
        assert_eq!(info.cpu_part, Some(0xd03));
        assert!(info.arm_features);
        assert_eq!(infer_architecture(&info).as_deref(), Some("armv7l"));
        assert_eq!(
            choose_model(&info).as_deref(),
            Some("Raspberry Pi 3 Model B Rev 1.2")
        );
        assert_eq!(
            select_features(&info.flags, true),
            vec!["neon", "vfpv4", "crc32"]
        );
    }

    #[test]
    fn arm64_without_model_uses_part_name() {
        let text = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n";
        let info = parse_cpuinfo(text);
        assert_eq!(choose_model(&info).as_deref(), Some("ARM Cortex-A72"));
        assert_eq!(infer_architecture(&info).as_deref(), Some("aarch64"));
    }

    #[test]
    fn generic_armv7_model_yields_to_hardware() {
        let text = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 5 (v7l)\nBogoMIPS\t: 48.00\n\nHardware\t: Allwinner sun8i Family\n";
        assert_eq!(
            choose_model(&parse_cpuinfo(text)).as_deref(),
            Some("Allwinner sun8i Family")
        );
    }

    #[test]
    fn x86_model_does_not_confuse_numeric_model_key() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6126 CPU @ 2.60GHz\ncpu MHz\t\t: 2600.000\nflags\t\t: fpu sse2 aes avx2 avx512f\nbogomips\t: 5200.00\n";
        let info = parse_cpuinfo(text);
        assert_eq!(
            info.model_name.as_deref(),
            Some("Intel(R) Xeon(R) Gold 6126 CPU @ 2.60GHz")
        );
        assert_eq!(info.board_model, None);
        assert_eq!((info.cpu_family, info.cpu_model), (Some(6), Some(85)));
        assert_eq!(info.bogomips, Some(5200.0));
        assert_eq!(infer_architecture(&info).as_deref(), Some("x86_64"));
    }

    #[test]
    fn x86_32_kernel_is_recognised() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nfdiv_bug\t: no\nf00f_bug\t: no\nflags\t\t: fpu sse2\n";
        assert_eq!(
            infer_architecture(&parse_cpuinfo(text)).as_deref(),
            Some("i686")
        );
    }

    #[test]
    fn nominal_clock_forms() {
        assert_eq!(
            nominal_mhz_from_model("Intel(R) Xeon(R) Gold 6126 CPU @ 2.60GHz"),
            Some(2600.0)
        );
        assert_eq!(
            nominal_mhz_from_model("Intel(R) Pentium(R) 4 CPU 3.00GHz"),
            Some(3000.0)
        );
        assert_eq!(nominal_mhz_from_model("Some CPU @ 800 MHz"), Some(800.0));
        assert_eq!(
            nominal_mhz_from_model("AMD EPYC 7B13 64-Core Processor"),
            None
        );
        assert_eq!(nominal_mhz_from_model("Intel(R) Xeon(R) Processor"), None);
        assert_eq!(nominal_mhz_from_model("GHz"), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8-11"),
            Some(vec![0, 1, 2, 3, 8, 9, 10, 11])
        );
        assert_eq!(parse_cpu_list("0\n"), Some(vec![0]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(parse_cpu_list("0-4294967295"), None);
        assert_eq!(parse_cpu_list("0-65535").map(|v| v.len()), Some(65_536));
        assert_eq!(parse_cpu_list("0-65536"), None);
    }

    #[test]
    fn cpu_list_overlapping_ranges_count_against_the_bound() {
        // From profiling the host_proc_sys fuzz target: the old bound counted
        // distinct CPUs only, so each repeat re-inserted 30,001 of them.
        assert_eq!(
            parse_cpu_list("0-30000,0-30000").map(|v| v.len()),
            Some(30_001)
        );
        assert_eq!(parse_cpu_list(&"0-30000,".repeat(511)), None);
        assert_eq!(parse_cpu_list("0-30000,0-30000,0-30000"), None);
    }

    #[test]
    fn bits() {
        assert_eq!(kernel_bits("x86_64"), Some(64));
        assert_eq!(kernel_bits("aarch64"), Some(64));
        assert_eq!(kernel_bits("armv7l"), Some(32));
        assert_eq!(kernel_bits("armv6l"), Some(32));
        assert_eq!(kernel_bits("i686"), Some(32));
        assert_eq!(kernel_bits("weird"), None);
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("48K\n"), Some(48 * 1024));
        assert_eq!(parse_cache_size("32M"), Some(32 * 1024 * 1024));
        assert_eq!(parse_cache_size("K"), None);
        assert_eq!(parse_cache_size(""), None);
    }

    fn to_ranges(cpus: &BTreeSet<u32>) -> String {
        let mut parts = Vec::new();
        let mut iter = cpus.iter().copied().peekable();
        while let Some(start) = iter.next() {
            let mut end = start;
            while iter.peek() == Some(&(end + 1)) {
                end += 1;
                iter.next();
            }
            parts.push(if start == end {
                format!("{start}")
            } else {
                format!("{start}-{end}")
            });
        }
        parts.join(",")
    }

    proptest! {
        #[test]
        fn cpuinfo_never_panics(text in "\\PC{0,400}") {
            let info = parse_cpuinfo(&text);
            let _ = infer_architecture(&info);
            let _ = choose_model(&info);
        }

        #[test]
        fn cpuinfo_lines_never_panic(lines in proptest::collection::vec("[a-zA-Z _]{0,16}\t*: ?[ -~]{0,24}", 0..30)) {
            let text = lines.join("\n");
            let info = parse_cpuinfo(&text);
            let _ = infer_architecture(&info);
            let _ = info.model_name.as_deref().map(nominal_mhz_from_model);
        }

        #[test]
        fn cpu_list_round_trips(cpus in proptest::collection::btree_set(0u32..5000, 0..64)) {
            let text = to_ranges(&cpus);
            let parsed = parse_cpu_list(&text);
            prop_assert_eq!(parsed, Some(cpus.into_iter().collect::<Vec<_>>()));
        }

        #[test]
        fn cpu_list_never_panics(text in "[0-9,\\- ]{0,40}") {
            let _ = parse_cpu_list(&text);
        }

        #[test]
        fn model_clock_never_panics(text in "\\PC{0,80}") {
            if let Some(v) = nominal_mhz_from_model(&text) {
                prop_assert!(v.is_finite() && v > 0.0);
            }
        }
    }
}
