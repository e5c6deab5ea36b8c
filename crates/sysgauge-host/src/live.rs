//! The few facts only the running system can give: uname(2), statvfs(3)
//! and the CPUID hypervisor leaf.
//!
//! These are the only `unsafe` calls in the crate. Each is a plain libc or
//! CPU instruction call on memory owned by the caller; results are copied
//! out as bytes up to the first NUL instead of trusting C strings, so a
//! malformed buffer can at worst give a wrong string, never a bad read.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The fields of `uname(2)` sysgauge uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Uname {
    pub nodename: Option<String>,
    pub release: Option<String>,
    pub version: Option<String>,
    pub machine: Option<String>,
}

fn c_chars_to_string(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    let s = String::from_utf8_lossy(&bytes).trim().to_string();
    (!s.is_empty()).then_some(s)
}

pub(crate) fn uname() -> Option<Uname> {
    // SAFETY: utsname is plain old data (arrays of c_char), so all-zero is
    // a valid value; uname writes only within the struct we pass.
    let mut buf: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable utsname for the duration of the call.
    let rc = unsafe { libc::uname(&mut buf) };
    if rc != 0 {
        return None;
    }
    Some(Uname {
        nodename: c_chars_to_string(&buf.nodename),
        release: c_chars_to_string(&buf.release),
        version: c_chars_to_string(&buf.version),
        machine: c_chars_to_string(&buf.machine),
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
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call and
    // `st` is a valid, writable statvfs.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), &mut st) };
    if rc != 0 {
        return None;
    }
    // f_frsize is the unit of the block counts; some old systems leave it 0.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let unit = if st.f_frsize > 0 {
        st.f_frsize as u64
    } else {
        st.f_bsize as u64
    };
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let (bavail, blocks) = (st.f_bavail as u64, st.f_blocks as u64);
    Some(Space {
        free: bavail.saturating_mul(unit),
        total: blocks.saturating_mul(unit),
    })
}

/// The hypervisor's CPUID vendor signature (leaf 0x40000000), checked only
/// when CPUID.1:ECX bit 31 says a hypervisor is present: without it the
/// leaf returns unrelated data.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
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
    fn c_chars() {
        let chars: Vec<libc::c_char> = b"abc\0def".iter().map(|b| *b as libc::c_char).collect();
        assert_eq!(c_chars_to_string(&chars).as_deref(), Some("abc"));
        assert_eq!(c_chars_to_string(&[]), None);
    }
}
