//! Is this a virtual machine, and which hypervisor?
//!
//! The names follow `systemd-detect-virt` (`kvm`, `qemu`, `vmware`,
//! `microsoft`, `oracle`, `xen`, `amazon`, `google`, ...), a vocabulary
//! administrators already know. Evidence, strongest first:
//!
//! 1. `/sys/hypervisor/type` (Xen, including PV guests with no CPU flag);
//! 2. DMI vendor and product names naming a hypervisor;
//! 3. the x86 `hypervisor` CPU flag, which every mainstream hypervisor sets:
//!    it proves a VM but not which one (`vm`); for a live root, CPUID leaf
//!    0x40000000 then names the hypervisor (Firecracker says `KVMKVMKVM`).
//!
//! `none` is claimed only with positive evidence of bare metal: an x86 flag
//! list without `hypervisor` and no VM DMI, or an ARM board `Model`/
//! `Hardware` line that is not a virtual board. ARM has no hypervisor flag,
//! so an ARM machine with neither is "unknown", not "none".

use crate::cpu::ProcCpuinfo;
use crate::sysroot::SysRoot;

/// `virtualization` of a process run by a user-mode emulator (qemu-user
/// through binfmt_misc): an ARM binary on an x86 machine. Its figures
/// measure the emulator on another CPU, so it outranks any VM below.
pub const USER_MODE_EMULATION: &str = "qemu-user";

/// Whether a live process built for `build_arch` (Rust's name) runs on a
/// CPU whose /proc/cpuinfo describes `cpuinfo_arch` of another family.
/// qemu-user emulates `uname` (it answers the guest's architecture) but
/// passes the host's /proc/cpuinfo through, so the two disagree only under
/// such an emulator; an arm 32-bit build on an aarch64 kernel (which
/// runs it natively) is not emulation.
pub fn user_mode_emulated(build_arch: &str, cpuinfo_arch: Option<&str>) -> bool {
    let Some(seen) = cpuinfo_arch else {
        return false;
    };
    let family = |a: &str| -> &'static str {
        if a == "x86_64" || a == "x86" || (a.starts_with('i') && a.ends_with("86")) {
            "x86"
        } else if a == "aarch64" || a == "arm" || a.starts_with("armv") {
            "arm"
        } else {
            "other"
        }
    };
    let (built, seen) = (family(build_arch), family(seen));
    built != "other" && seen != "other" && built != seen
}

/// Whether this process runs under a user-mode emulator: its build's
/// architecture against the CPU family `cpuinfo` (of the live machine)
/// describes.
pub fn live_user_mode_emulated(cpuinfo: &ProcCpuinfo) -> bool {
    user_mode_emulated(
        std::env::consts::ARCH,
        crate::cpu::infer_architecture(cpuinfo).as_deref(),
    )
}

/// DMI strings (sys_vendor, product_name, bios_vendor) naming a hypervisor.
/// Matched as prefixes, case-sensitively, like systemd does.
const DMI_VENDORS: &[(&str, &str)] = &[
    ("KVM", "kvm"),
    ("OpenStack", "kvm"),
    ("KubeVirt", "kvm"),
    ("QEMU", "qemu"),
    ("VMware", "vmware"),
    ("VMW", "vmware"),
    ("innotek GmbH", "oracle"),
    ("VirtualBox", "oracle"),
    ("Xen", "xen"),
    ("Bochs", "bochs"),
    ("Parallels", "parallels"),
    ("BHYVE", "bhyve"),
    ("Hyper-V", "microsoft"),
    ("Apple Virtualization", "apple"),
    ("Google Compute Engine", "google"),
];

/// Hypervisor named by DMI strings, if any. `Microsoft Corporation` and
/// `Amazon EC2` also make real hardware (Surface laptops, `*.metal`
/// instances), so they count only with a VM product name or, for EC2,
/// without a `.metal` one.
pub fn hypervisor_from_dmi(
    sys_vendor: Option<&str>,
    product_name: Option<&str>,
    bios_vendor: Option<&str>,
) -> Option<&'static str> {
    for value in [sys_vendor, product_name, bios_vendor]
        .into_iter()
        .flatten()
    {
        if let Some((_, name)) = DMI_VENDORS
            .iter()
            .find(|(prefix, _)| value.starts_with(prefix))
        {
            return Some(name);
        }
    }
    let product = product_name.unwrap_or("");
    match sys_vendor {
        Some("Microsoft Corporation") if product.contains("Virtual Machine") => Some("microsoft"),
        Some("Amazon EC2") if !product.ends_with(".metal") => Some("amazon"),
        Some("Google") if product.starts_with("Google Compute Engine") => Some("google"),
        _ => None,
    }
}

/// Hypervisor named by a CPUID 0x40000000 vendor signature.
pub fn hypervisor_from_cpuid_signature(signature: &[u8; 12]) -> Option<&'static str> {
    Some(match signature {
        b"KVMKVMKVM\0\0\0" => "kvm",
        b"Linux KVM Hv" => "kvm",
        b"TCGTCGTCGTCG" => "qemu",
        b"VMwareVMware" => "vmware",
        b"Microsoft Hv" => "microsoft",
        b"XenVMMXenVMM" => "xen",
        b"VBoxVBoxVBox" => "oracle",
        b"bhyve bhyve " => "bhyve",
        b"ACRNACRNACRN" => "acrn",
        b" lrpepyh  vr" => "parallels",
        _ => return None,
    })
}

/// Board names that are virtual machines rather than hardware.
fn virtual_board(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["dummy-virt", "qemu", "kvm", "virt", "vmware", "xen"]
        .iter()
        .any(|v| lower.contains(v))
}

/// Detects virtualization from a root's files. Returns `vm` when a VM is
/// certain but the hypervisor is not named.
pub(crate) fn detect_virtualization(root: &SysRoot, info: &ProcCpuinfo) -> Option<String> {
    if let Some(kind) = root.sys_value("hypervisor/type") {
        return Some(kind.to_ascii_lowercase());
    }
    let dmi = |f: &str| root.sys_value(&format!("class/dmi/id/{f}"));
    let (sys_vendor, product, bios) = (dmi("sys_vendor"), dmi("product_name"), dmi("bios_vendor"));
    if let Some(name) =
        hypervisor_from_dmi(sys_vendor.as_deref(), product.as_deref(), bios.as_deref())
    {
        return Some(name.to_string());
    }
    let x86_flags = !info.flags.is_empty() && !info.arm_features;
    if x86_flags {
        if info.flags.iter().any(|f| f == "hypervisor") {
            return Some("vm".to_string());
        }
        return Some("none".to_string());
    }
    let board = info.board_model.as_deref().or(info.hardware.as_deref());
    match board {
        Some(b) if !virtual_board(b) => Some("none".to_string()),
        Some(_) => Some("vm".to_string()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_mode_emulation_is_a_build_on_another_cpu_family() {
        assert!(user_mode_emulated("aarch64", Some("x86_64")));
        assert!(user_mode_emulated("arm", Some("x86_64")));
        assert!(user_mode_emulated("x86_64", Some("aarch64")));
        assert!(!user_mode_emulated("x86_64", Some("x86_64")));
        assert!(!user_mode_emulated("x86", Some("x86_64")));
        // 32-bit ARM code runs natively on most 64-bit ARM kernels.
        assert!(!user_mode_emulated("arm", Some("aarch64")));
        assert!(!user_mode_emulated("arm", Some("armv7l")));
        assert!(!user_mode_emulated("riscv64", Some("x86_64")));
        assert!(!user_mode_emulated("aarch64", None));
    }

    #[test]
    fn dmi_names() {
        assert_eq!(
            hypervisor_from_dmi(Some("QEMU"), Some("Standard PC (Q35 + ICH9, 2009)"), None),
            Some("qemu")
        );
        assert_eq!(
            hypervisor_from_dmi(Some("Amazon EC2"), Some("m5.large"), None),
            Some("amazon")
        );
        assert_eq!(
            hypervisor_from_dmi(Some("Amazon EC2"), Some("m5.metal"), None),
            None
        );
        assert_eq!(
            hypervisor_from_dmi(Some("Microsoft Corporation"), Some("Virtual Machine"), None),
            Some("microsoft")
        );
        assert_eq!(
            hypervisor_from_dmi(
                Some("Microsoft Corporation"),
                Some("Surface Laptop 4"),
                None
            ),
            None
        );
        assert_eq!(
            hypervisor_from_dmi(Some("Google"), Some("Google Compute Engine"), None),
            Some("google")
        );
        assert_eq!(
            hypervisor_from_dmi(Some("VMware, Inc."), None, None),
            Some("vmware")
        );
        assert_eq!(
            hypervisor_from_dmi(Some("Dell Inc."), Some("PowerEdge R640"), Some("Dell Inc.")),
            None
        );
        assert_eq!(hypervisor_from_dmi(None, None, None), None);
    }

    #[test]
    fn cpuid_names() {
        assert_eq!(
            hypervisor_from_cpuid_signature(b"KVMKVMKVM\0\0\0"),
            Some("kvm")
        );
        assert_eq!(
            hypervisor_from_cpuid_signature(b"Microsoft Hv"),
            Some("microsoft")
        );
        assert_eq!(hypervisor_from_cpuid_signature(b"GenuineIntel"), None);
    }

    #[test]
    fn boards() {
        assert!(virtual_board("linux,dummy-virt"));
        assert!(!virtual_board("Raspberry Pi 3 Model B Rev 1.2"));
        assert!(!virtual_board("BCM2835"));
    }
}
