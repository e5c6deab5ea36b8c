//! The parent-size sweep's ballast: memory the parent holds, touched page by
//! page, so that `fork` has page tables to copy.
//!
//! The ballast is an anonymous private mapping with transparent huge pages
//! refused (`MADV_NOHUGEPAGE`): with THP a gigabyte is 512 page-table
//! entries instead of 262,144 and fork's cost would depend on the machine's
//! THP setting rather than on the parent's size. Ordinary 4 KiB pages are
//! what most heaps are made of, and they make the numbers comparable between
//! machines. Every page is written (not just read: a read maps the shared
//! zero page) before any timing.

use rustix::mm;
use sysgauge_core::BenchError;

/// Memory kept free beside the ballast, so the sweep never pushes the
/// machine into reclaim or the OOM killer.
pub const HEADROOM_MIB: u64 = 256;

/// Touched anonymous memory of a given size, unmapped on drop.
#[derive(Debug)]
pub struct Ballast {
    ptr: *mut std::ffi::c_void,
    len: usize,
    mib: u64,
}

// SAFETY: the mapping is owned exclusively by this value and only touched
// while it is created; moving it to another thread moves that ownership.
unsafe impl Send for Ballast {}

impl Ballast {
    /// Map and touch `mib` MiB, after checking `MemAvailable` leaves
    /// [`HEADROOM_MIB`] beside it; a skip otherwise.
    pub fn new(mib: u64) -> Result<Ballast, BenchError> {
        let avail = sysgauge_host::available_memory_bytes().ok_or_else(|| {
            BenchError::skip(
                "cannot tell the available memory (/proc/meminfo has no MemAvailable)",
                "run on Linux 3.14 or later, or leave out --parent-size",
            )
        })?;
        let need = (mib + HEADROOM_MIB) << 20;
        if avail < need {
            return Err(BenchError::skip(
                format!(
                    "a {mib} MiB parent needs {} MiB of available memory; MemAvailable is {} MiB",
                    mib + HEADROOM_MIB,
                    avail >> 20
                ),
                "free memory, or choose smaller sizes with --parent-size",
            ));
        }
        let len = usize::try_from(mib << 20).map_err(|_| {
            BenchError::skip(
                format!("{mib} MiB does not fit the address space"),
                "choose smaller sizes with --parent-size",
            )
        })?;
        // SAFETY: an anonymous private mapping at an address the kernel
        // chooses; no existing memory is affected.
        let ptr = unsafe {
            mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                mm::ProtFlags::READ | mm::ProtFlags::WRITE,
                mm::MapFlags::PRIVATE,
            )
        }
        .map_err(|e| {
            BenchError::skip(
                format!("cannot map {mib} MiB: {e}"),
                "free memory, or choose smaller sizes with --parent-size",
            )
        })?;
        let ballast = Ballast { ptr, len, mib };
        // SAFETY: [ptr, ptr+len) is the mapping just created. MADV_NOHUGEPAGE
        // only changes how it is backed; failure (a kernel without THP) is
        // harmless and ignored.
        let _ = unsafe { mm::madvise(ptr, len, mm::Advice::LinuxNoHugepage) };
        let page = Some(rustix::param::page_size())
            .filter(|&p| p > 0)
            .unwrap_or(4096);
        let base = ptr.cast::<u8>();
        let mut off = 0;
        while off < len {
            // SAFETY: off < len, inside the writable mapping; volatile so
            // the stores that fault the pages in are not elided.
            unsafe { base.add(off).write_volatile(1) };
            off += page;
        }
        Ok(ballast)
    }

    pub fn mib(&self) -> u64 {
        self.mib
    }
}

impl Drop for Ballast {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping this value owns, once.
        let _ = unsafe { mm::munmap(self.ptr, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_ballast_maps_and_touches() {
        let b = Ballast::new(4).unwrap();
        assert_eq!(b.mib(), 4);
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let rss_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("RssAnon:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        assert!(rss_kb >= 4096, "RssAnon {rss_kb} kB after touching 4 MiB");
    }
}
