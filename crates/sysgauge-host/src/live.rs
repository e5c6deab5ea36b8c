//! The few facts only the running system can give: uname(2), statvfs(3)
//! and the CPUID hypervisor leaf.
//!
//! uname and statvfs go through rustix's safe wrappers; strings are read up
//! to the first NUL and lossily, so a malformed field can at worst give a
//! wrong string. CPUID is the one `unsafe` call left in the crate.

use std::ffi::CStr;
use std::path::Path;

/// The fields of `uname(2)` sysgauge uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Uname {
    pub nodename: Option<String>,
    pub release: Option<String>,
    pub version: Option<String>,
    pub machine: Option<String>,
}

fn c_str_to_string(c: &CStr) -> Option<String> {
    let s = String::from_utf8_lossy(c.to_bytes()).trim().to_string();
    (!s.is_empty()).then_some(s)
}

pub(crate) fn uname() -> Option<Uname> {
    let u = rustix::system::uname();
    Some(Uname {
        nodename: c_str_to_string(u.nodename()),
        release: c_str_to_string(u.release()),
        version: c_str_to_string(u.version()),
        machine: c_str_to_string(u.machine()),
    })
}

/// Free and total bytes of a file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Space {
    /// Bytes available to an unprivileged user (`f_bavail`): what a
    /// benchmark can count on, even when run as root.
    pub free: u64,
    pub total: u64,
}

pub(crate) fn statvfs_bytes(path: &Path) -> Option<Space> {
    let st = rustix::fs::statvfs(path).ok()?;
    // f_frsize is the unit of the block counts; some old systems leave it 0.
    let unit = if st.f_frsize > 0 {
        st.f_frsize
    } else {
        st.f_bsize
    };
    Some(Space {
        free: st.f_bavail.saturating_mul(unit),
        total: st.f_blocks.saturating_mul(unit),
    })
}

/// The hypervisor's CPUID vendor signature (leaf 0x40000000), checked only
/// when CPUID.1:ECX bit 31 says a hypervisor is present: without it the
/// leaf returns unrelated data.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
#[allow(unsafe_code)] // CPUID: no safe wrapper in std or rustix.
pub(crate) fn cpuid_hypervisor() -> Option<&'static str> {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID is available on every x86-64 CPU and every x86 CPU
    // that runs a Rust std target (i586+); it only reads CPU registers.
    #[allow(unused_unsafe)]
    let leaf1 = unsafe { __cpuid(1) };
    if leaf1.ecx & (1 << 31) == 0 {
        return None;
    }
    // SAFETY: as above.
    #[allow(unused_unsafe)]
    let hv = unsafe { __cpuid(0x4000_0000) };
    let mut signature = [0u8; 12];
    signature[..4].copy_from_slice(&hv.ebx.to_le_bytes());
    signature[4..8].copy_from_slice(&hv.ecx.to_le_bytes());
    signature[8..].copy_from_slice(&hv.edx.to_le_bytes());
    crate::virt::hypervisor_from_cpuid_signature(&signature)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
pub(crate) fn cpuid_hypervisor() -> Option<&'static str> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_has_a_machine() {
        let u = uname();
        assert!(u.is_some_and(|u| u.machine.is_some() && u.release.is_some()));
    }

    #[test]
    fn statvfs_of_root_and_missing() {
        let s = statvfs_bytes(Path::new("/"));
        assert!(s.is_some_and(|s| s.total > 0 && s.free <= s.total));
        assert_eq!(statvfs_bytes(Path::new("/definitely/not/here")), None);
        assert_eq!(statvfs_bytes(Path::new("/bad\0path")), None);
    }

    #[test]
    fn c_strings() {
        assert_eq!(c_str_to_string(c"abc").as_deref(), Some("abc"));
        assert_eq!(c_str_to_string(c" ").as_deref(), None);
        assert_eq!(c_str_to_string(c"").as_deref(), None);
    }
}
