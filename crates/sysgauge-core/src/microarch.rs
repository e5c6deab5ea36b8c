//! An x86 CPU's microarchitecture from its vendor, family and model
//! numbers (CPUID leaf 1, as /proc/cpuinfo prints them).
//!
//! Cloud guests of different generations often share one model string
//! ("AMD EPYC"), yet which code is fastest differs between them (a Zen 4
//! runs AVX-512 as two 256-bit halves, a Zen 5 at full width). The name
//! tells them apart in `sysgauge host` and in comparisons, and keys what
//! is known of sysgauge's code against the reference tools on each CPU
//! (docs/performance.md). Only generations named with confidence are
//! listed; anything else is `None`, never a guess. A hypervisor may tell
//! its guests another model than the host's (Firecracker's CPU templates
//! do): the name is then that of the CPU the guest is told it has.

/// AMD's name for a family and model, from its processor programming
/// references (PPRs) per family.
fn amd(family: u32, model: u32) -> Option<&'static str> {
    Some(match (family, model) {
        (0x17, 0x00..=0x2f) => "AMD Zen",
        (0x17, 0x30..=0x3f | 0x47 | 0x60..=0x7f | 0x84 | 0x90..=0xaf) => "AMD Zen 2",
        (0x19, 0x00..=0x0f | 0x20..=0x5f) => "AMD Zen 3",
        (0x19, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf) => "AMD Zen 4",
        (0x1a, 0x00..=0x4f | 0x60..=0x7f) => "AMD Zen 5",
        _ => return None,
    })
}

/// Intel's family 6 models (Intel's SDM, volume 4, and its model lists).
fn intel(family: u32, model: u32) -> Option<&'static str> {
    if family != 6 {
        return None;
    }
    Some(match model {
        0x3c | 0x3f | 0x45 | 0x46 => "Intel Haswell",
        0x3d | 0x47 | 0x4f | 0x56 => "Intel Broadwell",
        0x4e | 0x5e => "Intel Skylake",
        0x55 => "Intel Skylake-SP / Cascade Lake",
        0x8e | 0x9e => "Intel Kaby Lake / Coffee Lake",
        0x6a | 0x6c => "Intel Ice Lake-SP",
        0x7d | 0x7e => "Intel Ice Lake",
        0x8c | 0x8d => "Intel Tiger Lake",
        0x97 | 0x9a => "Intel Alder Lake",
        0xb7 | 0xba | 0xbf => "Intel Raptor Lake",
        0x8f => "Intel Sapphire Rapids",
        0xcf => "Intel Emerald Rapids",
        0xad | 0xae => "Intel Granite Rapids",
        _ => return None,
    })
}

/// The microarchitecture of an x86 CPU, from `vendor_id` (`AuthenticAMD`,
/// `GenuineIntel`) and the `cpu family` and `model` numbers; `None` when
/// not one this table knows.
pub fn x86_microarchitecture(vendor: &str, family: u32, model: u32) -> Option<&'static str> {
    match vendor {
        "AuthenticAMD" => amd(family, model),
        "GenuineIntel" => intel(family, model),
        _ => None,
    }
}

/// The microarchitecture of the CPU this process runs on, from CPUID
/// directly (what /proc/cpuinfo shows too, without reading a file); asked
/// once per process (CPUID leaves a virtual machine to its hypervisor).
pub fn this_cpu() -> Option<&'static str> {
    static NAME: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
    *NAME.get_or_init(read_cpuid)
}

fn read_cpuid() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        // Leaves 0 and 1 exist on every x86_64 CPU.
        let (l0, l1) = (std::arch::x86_64::__cpuid(0), std::arch::x86_64::__cpuid(1));
        let mut vendor = Vec::with_capacity(12);
        for r in [l0.ebx, l0.edx, l0.ecx] {
            vendor.extend_from_slice(&r.to_le_bytes());
        }
        let (family, model) = family_model(l1.eax);
        x86_microarchitecture(std::str::from_utf8(&vendor).ok()?, family, model)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// The displayed family and model of CPUID leaf 1's EAX, as the kernel
/// computes them: the extended family is added when the base family is
/// 15, the extended model is prepended when it is 6 or 15.
pub fn family_model(eax: u32) -> (u32, u32) {
    let base_family = (eax >> 8) & 0xf;
    let family = if base_family == 0xf {
        base_family + ((eax >> 20) & 0xff)
    } else {
        base_family
    };
    let mut model = (eax >> 4) & 0xf;
    if base_family == 0x6 || base_family == 0xf {
        model |= ((eax >> 16) & 0xf) << 4;
    }
    (family, model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_called_amd_epyc_are_told_apart() {
        let name = |f, m| x86_microarchitecture("AuthenticAMD", f, m);
        assert_eq!(name(25, 1), Some("AMD Zen 3"));
        assert_eq!(name(25, 17), Some("AMD Zen 4"));
        assert_eq!(name(25, 0x61), Some("AMD Zen 4"));
        assert_eq!(name(26, 2), Some("AMD Zen 5"));
        assert_eq!(name(23, 0x31), Some("AMD Zen 2"));
        assert_eq!(name(26, 0x50), None);
        assert_eq!(name(16, 4), None);
        assert_eq!(
            x86_microarchitecture("GenuineIntel", 6, 143),
            Some("Intel Sapphire Rapids")
        );
        assert_eq!(x86_microarchitecture("GenuineIntel", 6, 1), None);
        assert_eq!(x86_microarchitecture("HygonGenuine", 24, 0), None);
    }

    #[test]
    fn cpuid_signatures_decode_as_the_kernel_shows_them() {
        // Zen 3 Milan (A0F01), Zen 4 Genoa (A10F11), Sapphire Rapids (806F8).
        assert_eq!(family_model(0x00a0_0f11), (25, 1));
        assert_eq!(family_model(0x00a1_0f11), (25, 17));
        assert_eq!(family_model(0x0008_06f8), (6, 143));
        // Base family 5 takes no extension.
        assert_eq!(family_model(0x0000_0543), (5, 4));
    }

    #[test]
    fn this_cpu_agrees_with_proc_cpuinfo() {
        let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let field = |k: &str| {
            text.lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(key, _)| key.trim() == k)
                .map(|(_, v)| v.trim().to_string())
        };
        let (Some(vendor), Some(family), Some(model)) =
            (field("vendor_id"), field("cpu family"), field("model"))
        else {
            return;
        };
        let (Ok(f), Ok(m)) = (family.parse(), model.parse()) else {
            return;
        };
        assert_eq!(this_cpu(), x86_microarchitecture(&vendor, f, m));
    }
}
