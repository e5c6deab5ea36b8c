//! Which file system holds a path: /proc/self/mountinfo, the backing disk,
//! and free space.
//!
//! A disk benchmark that writes into a tmpfs measures memory, and one whose
//! scratch directory sits on a zram device measures compression; so the
//! scratch directory's and /tmp's file systems travel with every run.
//!
//! mountinfo is read rather than /proc/mounts because it carries the
//! device's major:minor, which leads to sysfs without guessing from the
//! mount source's name (`/dev/root`, `/dev/mapper/...`). Among mounts the
//! longest mount point that is a path-component prefix of the canonical path
//! wins, and of several mounts on the same point the last one (the one on
//! top) wins.

use crate::block::{disk_for_devnum, disk_for_name};
use crate::sysroot::SysRoot;
use std::path::{Component, Path, PathBuf};
use sysgauge_core::host::FsInfo;

/// File systems whose contents live in memory.
const RAM_FS: &[&str] = &["tmpfs", "ramfs", "devtmpfs", "rootfs", "hugetlbfs"];

/// Decodes the octal escapes the kernel writes into paths in /proc/swaps
/// and /proc/self/mountinfo (`\040` for a space). Anything that is not a
/// valid three-digit escape is kept as written.
pub fn decode_octal_escapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(byte) = u8::try_from(value) {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Unique id of the mount.
    pub mount_id: u32,
    /// Id of the parent mount.
    pub parent_id: u32,
    /// Device major number (0 for virtual and some multi-device file systems).
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Root of the mount within its file system (bind mounts), decoded.
    pub root: String,
    /// Mount point, decoded (`\040` → space).
    pub mount_point: String,
    /// Per-mount options (`rw,relatime`).
    pub options: String,
    /// File system type (`ext4`, `tmpfs`).
    pub fs_type: String,
    /// Mount source (`/dev/vda`, `tmpfs`), decoded.
    pub source: String,
    /// Per-superblock options.
    pub super_options: String,
}

/// Parses /proc/self/mountinfo. Malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    // 6 fixed fields, zero or more optional ones, "-", then type and source.
    let sep = fields.iter().skip(6).position(|f| *f == "-")? + 6;
    let (major, minor) = fields.get(2)?.split_once(':')?;
    Some(MountEntry {
        mount_id: fields.first()?.parse().ok()?,
        parent_id: fields.get(1)?.parse().ok()?,
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        root: decode_octal_escapes(fields.get(3)?),
        mount_point: decode_octal_escapes(fields.get(4)?),
        options: fields.get(5)?.to_string(),
        fs_type: fields.get(sep + 1)?.to_string(),
        source: decode_octal_escapes(fields.get(sep + 2).copied().unwrap_or("none")),
        super_options: fields.get(sep + 3).copied().unwrap_or("").to_string(),
    })
}

/// The mount holding `path` (an absolute, normalised path): the longest
/// mount point that is a component-wise prefix, the topmost on ties.
pub fn find_mount<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        let point = Path::new(&m.mount_point);
        if !path.starts_with(point) {
            continue;
        }
        let depth = point.components().count();
        // `>=` so that a later mount over the same point replaces an earlier one.
        if best.is_none_or(|b| depth >= Path::new(&b.mount_point).components().count()) {
            best = Some(m);
        }
    }
    best
}

/// Removes `.` and resolves `..` without touching the file system, for paths
/// inside a captured tree that do not exist here.
pub fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Canonical form of a live path. A path that does not exist yet (a scratch
/// directory about to be made) is resolved through its nearest existing
/// ancestor, so that symlinks above it are still followed.
fn canonical_live(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(cwd) => cwd.join(path),
            Err(_) => path.to_path_buf(),
        }
    };
    let mut existing = absolute.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return lexical_normalize(&out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return lexical_normalize(&absolute),
        }
    }
}

/// Facts about the file system holding `path`, read through `root`.
/// Space figures need statvfs and so are only filled in for a live root.
pub fn fs_info_at(root: &SysRoot, path: &Path) -> Option<FsInfo> {
    let resolved = if root.live {
        canonical_live(path)
    } else {
        lexical_normalize(path)
    };
    let mounts = root
        .read_proc("self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default();
    let mount = find_mount(&mounts, &resolved);
    // A scratch directory may not exist yet: its file system is the one of
    // its nearest existing ancestor.
    let space = if root.live {
        resolved.ancestors().find_map(crate::live::statvfs_bytes)
    } else {
        None
    };
    if mount.is_none() && space.is_none() {
        return None;
    }
    let mut info = FsInfo {
        path: path.to_string_lossy().into_owned(),
        free_bytes: space.map(|s| s.free),
        total_bytes: space.map(|s| s.total),
        ..FsInfo::default()
    };
    if let Some(m) = mount {
        info.mount_point = Some(m.mount_point.clone());
        info.fs_type = Some(m.fs_type.clone());
        info.source = Some(m.source.clone());
        info.mount_options = Some(m.options.clone());
        info.fs_options = Some(m.super_options.clone());
        info.block_device = if m.major != 0 {
            disk_for_devnum(root, m.major, m.minor)
        } else {
            None
        }
        .or_else(|| disk_from_source(root, &m.source));
        let ram_fs = RAM_FS.contains(&m.fs_type.as_str());
        let ram_disk = info
            .block_device
            .as_deref()
            .is_some_and(|d| d.starts_with("zram") || is_brd_ram(d));
        info.ram_backed = ram_fs || ram_disk;
    }
    Some(info)
}

/// `ram0`, `ram1`...: the brd RAM disk driver.
fn is_brd_ram(name: &str) -> bool {
    name.strip_prefix("ram")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The disk behind a mount source such as `/dev/nvme0n1p2`, for file
/// systems (btrfs) whose mountinfo device number is anonymous.
fn disk_from_source(root: &SysRoot, source: &str) -> Option<String> {
    let dev_path = Path::new(source);
    if !source.starts_with("/dev/") {
        return None;
    }
    // /dev/mapper/x and /dev/disk/by-*/ are symlinks to the kernel name.
    let resolved = if root.live {
        dev_path
            .canonicalize()
            .unwrap_or_else(|_| dev_path.to_path_buf())
    } else {
        dev_path.to_path_buf()
    };
    let name = resolved.file_name()?.to_str()?;
    disk_for_name(root, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k\n\
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=1k\n\
50 27 8:1 / /mnt/my\\040disk rw,noatime shared:12 master:3 - xfs /dev/sda1 rw,attr2\n\
51 27 0:40 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw\n\
garbage line\n";

    #[test]
    fn parses_optional_fields_and_escapes() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(m.len(), 6);
        let disk = &m[4];
        assert_eq!(disk.mount_point, "/mnt/my disk");
        assert_eq!((disk.major, disk.minor), (8, 1));
        assert_eq!(disk.fs_type, "xfs");
        assert_eq!(disk.source, "/dev/sda1");
        assert_eq!(disk.super_options, "rw,attr2");
    }

    #[test]
    fn longest_prefix_then_topmost() {
        let m = parse_mountinfo(SAMPLE);
        let find = |p: &str| find_mount(&m, Path::new(p)).map(|e| e.mount_id);
        assert_eq!(find("/mnt/my disk/x"), Some(50));
        assert_eq!(find("/tmpfoo/x"), Some(27));
        assert_eq!(find("/tmp/x"), Some(51));
        assert_eq!(find("/tmp"), Some(51));
        assert_eq!(find("/dev/shm/a"), Some(30));
        assert_eq!(find("/"), Some(27));
    }

    #[test]
    fn normalises_lexically() {
        assert_eq!(
            lexical_normalize(Path::new("/a/./b/../c")),
            PathBuf::from("/a/c")
        );
        assert_eq!(lexical_normalize(Path::new("/../..")), PathBuf::from("/"));
        assert_eq!(
            lexical_normalize(Path::new("rel/x")),
            PathBuf::from("/rel/x")
        );
    }

    #[test]
    fn brd_names() {
        assert!(is_brd_ram("ram0"));
        assert!(is_brd_ram("ram15"));
        assert!(!is_brd_ram("ram"));
        assert!(!is_brd_ram("ramdisk"));
    }

    #[test]
    fn octal_escapes() {
        assert_eq!(decode_octal_escapes("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(decode_octal_escapes("tab\\011x\\134y"), "tab\tx\\y");
        assert_eq!(decode_octal_escapes("trail\\04"), "trail\\04");
        assert_eq!(decode_octal_escapes("\\"), "\\");
        assert_eq!(decode_octal_escapes("\\777"), "\\777");
    }

    fn encode(s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            match c {
                ' ' | '\t' | '\n' | '\\' => out.push_str(&format!("\\{:03o}", c as u32)),
                c => out.push(c),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn octal_escapes_round_trip(s in "[ -~\t\n]{0,40}") {
            prop_assert_eq!(decode_octal_escapes(&encode(&s)), s);
        }

        #[test]
        fn octal_never_panics(s in "\\PC{0,60}") {
            let _ = decode_octal_escapes(&s);
        }
        #[test]
        fn mountinfo_never_panics(text in "\\PC{0,400}") {
            let m = parse_mountinfo(&text);
            let _ = find_mount(&m, Path::new("/tmp/x"));
        }

        #[test]
        fn mountinfo_fields_never_panic(lines in proptest::collection::vec("([0-9:]{1,5} ){0,8}- ?[a-z/\\\\0-9 ]{0,20}", 0..10)) {
            let _ = parse_mountinfo(&lines.join("\n"));
        }

        #[test]
        fn mount_points_decode(name in "[a-z \t\\\\]{1,12}") {
            let encoded: String = name.chars().map(|c| match c {
                ' ' => "\\040".to_string(),
                '\t' => "\\011".to_string(),
                '\\' => "\\134".to_string(),
                c => c.to_string(),
            }).collect();
            let line = format!("1 0 8:1 / /mnt/{encoded} rw - ext4 /dev/sda1 rw");
            let m = parse_mountinfo(&line);
            prop_assert_eq!(m.len(), 1);
            prop_assert_eq!(&m[0].mount_point, &format!("/mnt/{name}"));
        }
    }
}
