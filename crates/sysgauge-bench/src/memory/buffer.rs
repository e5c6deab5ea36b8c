//! The memory family's buffers: anonymous mappings that ask for transparent
//! huge pages (or refuse them), aligned to the huge-page size, and a check
//! of how much of a buffer the kernel really backed with huge pages.
//!
//! Why mappings and not `Vec`: a `Vec` of this size comes from `malloc`,
//! which gives no say over huge pages and no alignment beyond 16 bytes.
//! Why huge pages: with 4 KiB pages a random walk over 1 GiB misses the TLB
//! on nearly every access and each miss is a page-table walk (two nested
//! walks in a virtual machine), so "memory latency" would mostly measure
//! the page tables; sequential copies lose a little too. Every buffer of
//! the family asks for the same thing (`huge_pages` in the params), so the
//! numbers of one run are consistent with each other, and the share of
//! huge pages actually obtained is recorded, because the kernel may refuse
//! (THP `never`, fragmented memory).
//!
//! The mapping is made with `memmap2` (anonymous, private); the advice is
//! `madvise(MADV_HUGEPAGE)` or `MADV_NOHUGEPAGE`, so `huge_pages=false`
//! means 4 KiB pages even where THP is `always`.

use memmap2::{MmapMut, MmapOptions};

/// The huge-page size buffers are aligned to (2 MiB on x86-64 and on
/// arm64 with 4 KiB base pages; a larger size elsewhere only costs
/// alignment).
pub const HUGE_ALIGN: usize = 2 << 20;

/// An anonymous, page-aligned (huge-page-aligned when huge pages are
/// asked for) buffer of `len` bytes. Untouched until written: the caller
/// fills it before timing, which also faults the pages in.
pub struct MappedBuf {
    map: MmapMut,
    offset: usize,
    len: usize,
    huge: bool,
}

impl std::fmt::Debug for MappedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedBuf")
            .field("len", &self.len)
            .field("huge", &self.huge)
            .finish()
    }
}

impl MappedBuf {
    /// Map `len` bytes; `huge` asks for transparent huge pages, `false`
    /// forbids them.
    pub fn new(len: usize, huge: bool) -> std::io::Result<MappedBuf> {
        // With huge pages, map whole huge pages plus one for alignment, so
        // even a buffer smaller than a huge page lies inside one the kernel
        // can place (it only uses a huge page that fits in the mapping).
        let total = if huge {
            len.checked_next_multiple_of(HUGE_ALIGN)
                .and_then(|l| l.checked_add(HUGE_ALIGN))
        } else {
            Some(len)
        }
        .ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "buffer size overflows")
        })?;
        let map = MmapOptions::new().len(total.max(1)).map_anon()?;
        #[cfg(target_os = "linux")]
        {
            // A kernel built without THP rejects the advice; the buffer is
            // still usable and `huge_page_share` reports what we got.
            let advice = if huge {
                memmap2::Advice::HugePage
            } else {
                memmap2::Advice::NoHugePage
            };
            let _ = map.advise(advice);
        }
        let addr = map.as_ptr() as usize;
        let offset = if huge {
            addr.next_multiple_of(HUGE_ALIGN) - addr
        } else {
            0
        };
        Ok(MappedBuf {
            map,
            offset,
            len,
            huge,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether huge pages were asked for.
    pub fn huge_requested(&self) -> bool {
        self.huge
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map[self.offset..self.offset + self.len]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map[self.offset..self.offset + self.len]
    }

    /// The buffer as 8-byte words (its length must be a multiple of 8;
    /// the start is page aligned).
    pub fn words_mut(&mut self) -> Option<&mut [u64]> {
        bytemuck::try_cast_slice_mut(self.bytes_mut()).ok()
    }

    /// The buffer as `f64`s (length a multiple of 8).
    pub fn f64s_mut(&mut self) -> Option<&mut [f64]> {
        bytemuck::try_cast_slice_mut(self.bytes_mut()).ok()
    }

    /// Address of the first usable byte.
    pub fn addr(&self) -> usize {
        self.bytes().as_ptr() as usize
    }

    /// Share (0..=1) of this buffer's resident memory the kernel backs with
    /// huge pages, from /proc/self/smaps; `None` where that cannot be read.
    pub fn huge_page_share(&self) -> Option<f64> {
        let text = std::fs::read_to_string("/proc/self/smaps").ok()?;
        smaps_huge_share(&text, self.addr() as u64)
    }
}

/// In /proc/self/smaps text, the mapping that contains `addr`: the share of
/// its resident memory (`Rss`) that is in transparent huge pages
/// (`AnonHugePages`). The ratio, not the absolute figure, because the
/// kernel may merge neighbouring mappings with the same flags into one.
pub fn smaps_huge_share(text: &str, addr: u64) -> Option<f64> {
    let mut inside = false;
    let mut rss: Option<u64> = None;
    let mut huge: Option<u64> = None;
    for line in text.lines() {
        if let Some((start, end)) = mapping_range(line) {
            if inside {
                break;
            }
            inside = start <= addr && addr < end;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(v) = line.strip_prefix("Rss:") {
            rss = parse_kb(v);
        } else if let Some(v) = line.strip_prefix("AnonHugePages:") {
            huge = parse_kb(v);
        }
    }
    let (rss, huge) = (rss?, huge?);
    if rss == 0 {
        return Some(0.0);
    }
    Some((huge as f64 / rss as f64).min(1.0))
}

/// `7f12a000-7f12b000 rw-p ...` → the range; `None` for field lines.
fn mapping_range(line: &str) -> Option<(u64, u64)> {
    let first = line.split_whitespace().next()?;
    let (a, b) = first.split_once('-')?;
    if a.is_empty() || !a.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

fn parse_kb(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    Some(n * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0a00000-55d0c0a21000 r--p 00000000 fe:01 1234 /usr/bin/sysgauge
Size:                132 kB
Rss:                 132 kB
AnonHugePages:         0 kB
7f0000000000-7f0040200000 rw-p 00000000 00:00 0 
Size:            1050624 kB
KernelPageSize:        4 kB
Rss:             1048576 kB
Pss:             1048576 kB
AnonHugePages:    786432 kB
THPeligible:    1
7f0040200000-7f0040201000 rw-p 00000000 00:00 0 
Size:                  4 kB
Rss:                   0 kB
AnonHugePages:         0 kB
";

    #[test]
    fn smaps_share_of_the_right_mapping() {
        let share = smaps_huge_share(SMAPS, 0x7f00_0010_0000);
        assert_eq!(share, Some(0.75));
        assert_eq!(smaps_huge_share(SMAPS, 0x55d0_c0a0_0000), Some(0.0));
        assert_eq!(smaps_huge_share(SMAPS, 0x7f00_4020_0000), Some(0.0));
        assert_eq!(smaps_huge_share(SMAPS, 0x1000), None);
        assert_eq!(smaps_huge_share("", 0x1000), None);
        assert_eq!(smaps_huge_share("garbage\nRss: x kB\n", 0x1000), None);
    }

    #[test]
    fn buffers_are_aligned_writable_and_typed() {
        for huge in [true, false] {
            let mut b = MappedBuf::new(3 * 4096, huge).unwrap();
            assert_eq!(b.len(), 3 * 4096);
            assert!(!b.is_empty());
            assert_eq!(b.huge_requested(), huge);
            if huge {
                assert_eq!(b.addr() % HUGE_ALIGN, 0);
            } else {
                assert_eq!(b.addr() % 4096, 0);
            }
            b.bytes_mut().fill(7);
            assert!(b.bytes().iter().all(|&x| x == 7));
            let w = b.words_mut().unwrap_or_else(|| panic!("words"));
            assert_eq!(w.len(), 3 * 512);
            w[0] = u64::MAX;
            assert_eq!(b.bytes()[0], 0xff);
            assert_eq!(b.f64s_mut().map(|f| f.len()), Some(3 * 512));
        }
        let mut odd = MappedBuf::new(12, false).unwrap();
        assert!(odd.words_mut().is_none());
    }

    #[test]
    fn live_share_is_readable() {
        let mut b = MappedBuf::new(4 << 20, true).unwrap();
        b.bytes_mut().fill(1);
        if std::path::Path::new("/proc/self/smaps").exists() {
            let s = b
                .huge_page_share()
                .unwrap_or_else(|| panic!("no smaps entry for a live mapping"));
            assert!((0.0..=1.0).contains(&s));
        }
    }
}
