//! Memory facts: /proc/meminfo, /proc/swaps, zram devices and the
//! transparent huge pages setting.
//!
//! /proc/meminfo mixes sizes in kB (which the kernel means as KiB) with bare
//! counts (`HugePages_Total`), so `Meminfo` keeps the unit with each value
//! and only converts sizes to bytes. zram devices that were never given a
//! size are left out: an unconfigured `zram0` holds no memory and swaps
//! nothing.

use crate::mounts::decode_octal_escapes;
use crate::sysroot::{dir_names, read_text, SysRoot};
use std::collections::BTreeMap;
use sysgauge_core::host::{MemoryInfo, SwapDevice, ZramDevice};

/// Parsed /proc/meminfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meminfo {
    /// key -> (value, true when the value was in kB)
    entries: BTreeMap<String, (u64, bool)>,
}

impl Meminfo {
    /// A size entry (`MemTotal`, `Dirty`, ...) in bytes.
    pub fn bytes(&self, key: &str) -> Option<u64> {
        match self.entries.get(key) {
            Some((v, true)) => v.checked_mul(1024),
            _ => None,
        }
    }

    /// A unitless entry (`HugePages_Total`).
    pub fn count(&self, key: &str) -> Option<u64> {
        match self.entries.get(key) {
            Some((v, false)) => Some(*v),
            _ => None,
        }
    }

    /// Number of entries parsed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing was parsed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Parses /proc/meminfo (`MemTotal:       24684084 kB`). Malformed lines
/// are skipped.
pub fn parse_meminfo(text: &str) -> Meminfo {
    let mut entries = BTreeMap::new();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let Some(Ok(value)) = parts.next().map(str::parse::<u64>) else {
            continue;
        };
        let kb = match parts.next() {
            Some(unit) if unit.eq_ignore_ascii_case("kB") => true,
            Some(_) => continue,
            None => false,
        };
        entries.entry(key.trim().to_string()).or_insert((value, kb));
    }
    Meminfo { entries }
}

/// `Dirty` and `Writeback` from /proc/meminfo text, in bytes: the data not
/// yet on disk. A disk benchmark that starts while these are large measures
/// the flushing of someone else's (or its own earlier) writes.
pub fn meminfo_dirty_writeback(text: &str) -> Option<(u64, u64)> {
    let info = parse_meminfo(text);
    Some((info.bytes("Dirty")?, info.bytes("Writeback")?))
}

/// Live `Dirty` and `Writeback` bytes.
pub fn read_dirty_writeback() -> Option<(u64, u64)> {
    meminfo_dirty_writeback(&read_text(std::path::Path::new("/proc/meminfo"))?)
}

/// Live `MemAvailable` in bytes: what can be allocated without swapping.
/// Benchmarks size their buffers against it.
pub fn available_memory_bytes() -> Option<u64> {
    parse_meminfo(&read_text(std::path::Path::new("/proc/meminfo"))?).bytes("MemAvailable")
}

/// Parses /proc/swaps. Sizes there are KiB.
pub fn parse_swaps(text: &str) -> Vec<SwapDevice> {
    let mut swaps = Vec::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [path, kind, size, used, priority] = fields.as_slice() else {
            continue;
        };
        let (Ok(size), Ok(used), Ok(priority)) = (
            size.parse::<u64>(),
            used.parse::<u64>(),
            priority.parse::<i32>(),
        ) else {
            continue;
        };
        swaps.push(SwapDevice {
            path: decode_octal_escapes(path),
            kind: kind.to_string(),
            size_bytes: size.saturating_mul(1024),
            used_bytes: used.saturating_mul(1024),
            priority,
        });
    }
    swaps
}

/// The selected entry of a sysfs choice list (`always [madvise] never`,
/// `[lzo-rle] lzo lz4`, `none [mq-deadline] kyber`). A list with a single
/// entry and no brackets selects that entry.
pub fn parse_selected(text: &str) -> Option<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for token in &tokens {
        if let Some(inner) = token.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            if !inner.is_empty() {
                return Some(inner.to_string());
            }
        }
    }
    match tokens.as_slice() {
        [only] if !only.contains('[') => Some(only.to_string()),
        _ => None,
    }
}

/// zram devices with a size, from sys/block/zram*.
fn zram_devices(root: &SysRoot) -> Vec<ZramDevice> {
    dir_names(&root.sys_path("block"))
        .into_iter()
        .filter(|n| n.starts_with("zram"))
        .filter_map(|name| {
            let disksize = root
                .sys_value(&format!("block/{name}/disksize"))
                .and_then(|v| v.parse::<u64>().ok());
            if disksize == Some(0) {
                return None;
            }
            let algorithm = root
                .sys_value(&format!("block/{name}/comp_algorithm"))
                .and_then(|v| parse_selected(&v));
            Some(ZramDevice {
                name,
                disksize_bytes: disksize,
                algorithm,
            })
        })
        .collect()
}

/// Collects memory, swap, zram and huge page facts.
pub(crate) fn collect_memory(root: &SysRoot) -> MemoryInfo {
    let meminfo = root
        .read_proc("meminfo")
        .map(|t| parse_meminfo(&t))
        .unwrap_or_default();
    MemoryInfo {
        total_bytes: meminfo.bytes("MemTotal"),
        available_bytes: meminfo.bytes("MemAvailable"),
        swap_total_bytes: meminfo.bytes("SwapTotal"),
        swap_free_bytes: meminfo.bytes("SwapFree"),
        swaps: root
            .read_proc("swaps")
            .map(|t| parse_swaps(&t))
            .unwrap_or_default(),
        zram: zram_devices(root),
        transparent_hugepages: root
            .sys_value("kernel/mm/transparent_hugepage/enabled")
            .and_then(|v| parse_selected(&v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn meminfo_units() {
        let m = parse_meminfo("MemTotal:       1000 kB\nHugePages_Total:       4\nDirty:  8 kB\nWriteback: 2 kB\nbad line\nX: y kB\n");
        assert_eq!(m.bytes("MemTotal"), Some(1_024_000));
        assert_eq!(m.bytes("HugePages_Total"), None);
        assert_eq!(m.count("HugePages_Total"), Some(4));
        assert_eq!(m.len(), 4);
        assert_eq!(
            meminfo_dirty_writeback("Dirty:  8 kB\nWriteback: 2 kB\n"),
            Some((8192, 2048))
        );
        assert_eq!(meminfo_dirty_writeback("Dirty:  8 kB\n"), None);
    }

    #[test]
    fn swaps_with_escapes() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t524284\t\t1024\t\t100\n/var/my\\040swap                          file\t\t102396\t\t0\t\t-2\n";
        let swaps = parse_swaps(text);
        assert_eq!(swaps.len(), 2);
        assert_eq!(swaps[0].path, "/dev/zram0");
        assert_eq!(swaps[0].kind, "partition");
        assert_eq!(swaps[0].size_bytes, 524_284 * 1024);
        assert_eq!(swaps[0].used_bytes, 1024 * 1024);
        assert_eq!(swaps[0].priority, 100);
        assert_eq!(swaps[1].path, "/var/my swap");
        assert_eq!(swaps[1].priority, -2);
        assert!(parse_swaps("Filename\tType\tSize\tUsed\tPriority\n").is_empty());
    }

    #[test]
    fn selected_values() {
        assert_eq!(
            parse_selected("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_selected("lzo [lz4] lzo-rle zstd").as_deref(),
            Some("lz4")
        );
        assert_eq!(parse_selected("none\n").as_deref(), Some("none"));
        assert_eq!(parse_selected("a b"), None);
        assert_eq!(parse_selected("[]"), None);
        assert_eq!(parse_selected(""), None);
    }

    proptest! {
        #[test]
        fn meminfo_never_panics(text in "\\PC{0,300}") {
            let _ = parse_meminfo(&text);
            let _ = meminfo_dirty_writeback(&text);
        }

        #[test]
        fn swaps_never_panic(text in "\\PC{0,300}") {
            let _ = parse_swaps(&text);
        }

        #[test]
        fn selected_never_panics(text in "[a-z\\[\\] -]{0,40}") {
            let _ = parse_selected(&text);
        }
    }
}
