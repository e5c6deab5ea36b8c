//! Low-level file I/O for the disk family: page-aligned buffers for
//! O_DIRECT, the test data pattern, opening with or without O_DIRECT, and
//! the cache and allocation calls (`posix_fadvise`, `fallocate`,
//! `syncfs`) that std does not wrap, through rustix.
//!
//! O_DIRECT needs the buffer address, the file offset and the length to be
//! multiples of the device's logical block size (512 B or 4 KiB on common
//! hardware). Every buffer here is aligned to 4 KiB, which satisfies any
//! logical block size up to the page size; offsets and lengths are the
//! caller's block size, so a block size below the logical block size makes
//! the kernel refuse with EINVAL, and the caller falls back to buffered I/O.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::ptr::NonNull;

/// Alignment of every I/O buffer: the page size of common machines and the
/// largest logical block size in wide use.
pub const ALIGN: usize = 4096;

/// Buffers of at least this size are placed on 2 MiB boundaries and asked
/// to be transparent huge pages (see `AlignedBuf::new`).
pub const HUGE_FROM: usize = 256 << 10;
const HUGE: usize = 2 << 20;

/// Period of the data pattern. Successive blocks differ over this span, so
/// a compressing file system (btrfs, ZFS) cannot shrink 4 KiB blocks that
/// would otherwise repeat.
pub const PATTERN_PERIOD: usize = 4 << 20;

/// A zeroed heap buffer aligned to `ALIGN`, for O_DIRECT.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>; shared
// references only give out `&[u8]`.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; no interior mutability.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least one), or `None` when the
    /// allocation fails or the size is absurd.
    ///
    /// Large buffers are 2 MiB-aligned and advised as huge pages before
    /// they are first touched: a 1 MiB direct I/O from 4 KiB pages that
    /// happen not to be physically contiguous needs 256 segments, more than
    /// many devices take in one request (virtio-blk: 254), so the kernel
    /// splits it in two, and how often that happens would depend on the
    /// allocator's luck. With huge pages (where THP is not disabled) every
    /// block up to 2 MiB is one segment, on every run.
    pub fn new(len: usize) -> Option<AlignedBuf> {
        if len < HUGE_FROM {
            let layout = Layout::from_size_align(len.max(1), ALIGN).ok()?;
            // SAFETY: the layout has a non-zero size.
            let raw = unsafe { alloc_zeroed(layout) };
            let ptr = NonNull::new(raw)?;
            return Some(AlignedBuf { ptr, len, layout });
        }
        let size = len.checked_next_multiple_of(HUGE)?;
        let layout = Layout::from_size_align(size, HUGE).ok()?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw)?;
        // SAFETY: [ptr, ptr+size) is our fresh, page-aligned allocation;
        // madvise only changes how the kernel backs it. Failure (THP off)
        // leaves ordinary pages, which is fine.
        let _ = unsafe {
            rustix::mm::madvise(ptr.as_ptr().cast(), size, rustix::mm::Advice::LinuxHugepage)
        };
        // SAFETY: ptr is valid for size bytes; zeroing initialises them
        // (and faults the pages in, after the advice).
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, size) };
        Some(AlignedBuf { ptr, len, layout })
    }

    /// A zeroed buffer of `len` bytes in ordinary pages whatever its size,
    /// as fio's `malloc`ed buffers are where transparent huge pages are
    /// `madvise`-only (see `qd.rs` for why that matters).
    pub fn ordinary_pages(len: usize) -> Option<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw)?;
        Some(AlignedBuf { ptr, len, layout })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, initialised (zeroed) at
        // allocation, and lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// The data written to every test file: byte `o` of a file is
/// `pattern[o % PATTERN_PERIOD]`, whatever block size wrote it, so reads
/// can be verified and block sizes can be mixed. The buffer is one period
/// plus the largest block, so any block-sized window is one slice.
pub struct Pattern {
    buf: AlignedBuf,
    max_block: usize,
}

impl Pattern {
    pub fn new(max_block: usize) -> Option<Pattern> {
        let mut buf = AlignedBuf::new(PATTERN_PERIOD.checked_add(max_block)?)?;
        sysgauge_family::util::fill_pattern(&mut buf[..PATTERN_PERIOD], 0xd15c_5eed);
        let (head, tail) = buf.split_at_mut(PATTERN_PERIOD);
        for (i, b) in tail.iter_mut().enumerate() {
            *b = head[i % PATTERN_PERIOD];
        }
        Some(Pattern { buf, max_block })
    }

    /// The `len` bytes that belong at file offset `offset` (`len` at most
    /// the block size given to `new`). Aligned when `offset` is.
    pub fn at(&self, offset: u64, len: usize) -> &[u8] {
        let start = (offset % PATTERN_PERIOD as u64) as usize;
        let len = len.min(self.max_block);
        &self.buf[start..start + len]
    }

    /// The byte that belongs at file offset `offset`.
    pub fn byte(&self, offset: u64) -> u8 {
        self.buf[(offset % PATTERN_PERIOD as u64) as usize]
    }
}

/// Open `path` for reading and writing, creating it, with O_DIRECT when
/// `direct`.
pub fn open_rw(path: &Path, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

/// Whether the file system holding `dir` takes O_DIRECT: a probe file is
/// opened direct, written one 4 KiB block, and removed.
pub fn direct_supported(dir: &Path) -> bool {
    let path = dir.join(format!(".sysgauge-direct-probe-{}", std::process::id()));
    let ok = match open_rw(&path, true) {
        Ok(f) => AlignedBuf::new(ALIGN)
            .is_some_and(|b| std::os::unix::fs::FileExt::write_all_at(&f, &b, 0).is_ok()),
        Err(_) => false,
    };
    let _ = std::fs::remove_file(&path);
    ok
}

/// True when the error is the kernel refusing O_DIRECT (unsupported by the
/// file system, or misaligned buffer, offset or length).
pub fn is_direct_refusal(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

/// Drop the file's clean pages from the page cache (after `fdatasync`, all
/// of them), so the next read comes from the device.
pub fn drop_cache(file: &File) -> std::io::Result<()> {
    rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// Reserve `len` bytes for the file (so writes do not allocate), or extend
/// it with `set_len` where the file system cannot preallocate.
pub fn preallocate(file: &File, len: u64) -> std::io::Result<()> {
    if i64::try_from(len).is_err() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "file too large",
        ));
    }
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS => {
            file.set_len(len)
        }
        Err(e) => Err(e.into()),
    }
}

/// `syncfs(2)` on the file system holding `file`.
pub fn syncfs(file: &File) -> std::io::Result<()> {
    rustix::fs::syncfs(file)?;
    Ok(())
}

/// Map an I/O error from writing test data: a full file system gets a
/// message that says what to do.
pub fn describe_io_error(what: &str, path: &Path, e: &std::io::Error) -> String {
    // The kind as well: an error that carries its errno in a message (an
    // io_uring request's) keeps its kind only.
    if e.raw_os_error() == Some(libc::ENOSPC) || e.kind() == std::io::ErrorKind::StorageFull {
        format!(
            "{what} {}: the file system is full; pass a smaller --size or free space",
            path.display()
        )
    } else {
        format!("{what} {}: {e}", path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn aligned_buffers() {
        for len in [1usize, 512, 4096, 1 << 20] {
            let b = AlignedBuf::new(len).unwrap_or_else(|| panic!("alloc {len}"));
            assert_eq!(b.as_ptr() as usize % ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn pattern_is_periodic_and_block_independent() {
        let p = Pattern::new(1 << 20).unwrap_or_else(|| panic!("alloc"));
        let o = (PATTERN_PERIOD as u64) * 3 + 12345;
        assert_eq!(p.at(o, 16), p.at(12345, 16));
        assert_eq!(p.byte(o + 5), p.at(12345, 16)[5]);
        // A 1 MiB window starting near the period's end wraps correctly.
        let w = p.at(PATTERN_PERIOD as u64 - 10, 1 << 20);
        assert_eq!(w[10], p.byte(0));
        assert_ne!(p.at(0, 4096), p.at(4096, 4096));
    }

    #[test]
    fn direct_io_round_trip_or_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let p = Pattern::new(65536).unwrap_or_else(|| panic!("alloc"));
        match open_rw(&path, true) {
            Ok(f) => {
                preallocate(&f, 1 << 20).unwrap();
                f.write_all_at(p.at(65536, 65536), 65536).unwrap();
                let mut back = AlignedBuf::new(65536).unwrap_or_else(|| panic!("alloc"));
                f.read_exact_at(&mut back, 65536).unwrap();
                assert_eq!(&back[..], p.at(65536, 65536));
                // A misaligned length is refused with EINVAL on every
                // file system that honours O_DIRECT.
                if let Err(e) = f.write_all_at(&p.at(0, 100)[..100], 0) {
                    assert!(is_direct_refusal(&e), "{e}");
                }
                f.sync_data().unwrap();
                drop_cache(&f).unwrap();
                syncfs(&f).unwrap();
            }
            Err(e) => assert!(is_direct_refusal(&e), "{e}"),
        }
    }
}
