//! Recognising data on a block device before raw-device mode writes over
//! it: the magic numbers of common file systems, swap, LUKS, LVM2 physical
//! volumes, md RAID superblocks and partition tables, at their documented
//! offsets.
//!
//! Written here rather than by linking libblkid so the refusal works on
//! machines without util-linux's library, and so its rules are visible and
//! tested; when the `blkid` program is present its low-level probe
//! (`blkid -p`) is asked as well and anything it finds also refuses.
//! The detector reads through a closure, so tests run it on in-memory
//! images.

/// Bytes read at the start and at the end of a device.
pub const PROBE_SPAN: u64 = 128 << 10;

/// Signatures found on a device whose bytes `read(offset, len)` returns
/// (fewer bytes near the end is fine). `size` is the device size.
pub fn detect(read: &dyn Fn(u64, usize) -> Option<Vec<u8>>, size: u64) -> Vec<&'static str> {
    let head = read(0, PROBE_SPAN.min(size) as usize).unwrap_or_default();
    let at = |off: usize, len: usize| head.get(off..off + len);
    let is = |off: usize, magic: &[u8]| at(off, magic.len()) == Some(magic);
    let le32 = |off: usize| at(off, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let mut found = Vec::new();

    if at(0x438, 2) == Some(&[0x53, 0xEF]) {
        found.push("ext2/3/4");
    }
    if is(0, b"XFSB") {
        found.push("xfs");
    }
    if is(0x10040, b"_BHRfS_M") {
        found.push("btrfs");
    }
    let boot_sig = is(510, &[0x55, 0xAA]);
    let fat = boot_sig && (is(0x36, b"FAT12") || is(0x36, b"FAT16") || is(0x52, b"FAT32"));
    if fat {
        found.push("vfat");
    }
    if is(3, b"EXFAT   ") {
        found.push("exfat");
    }
    if is(3, b"NTFS    ") {
        found.push("ntfs");
    }
    if le32(1024) == Some(0xF2F5_2010) {
        found.push("f2fs");
    }
    if is(0, b"hsqs") {
        found.push("squashfs");
    }
    if is(0x8001, b"CD001") {
        found.push("iso9660");
    }
    if [4096usize, 8192, 16384, 65536]
        .iter()
        .any(|&ps| is(ps - 10, b"SWAPSPACE2") || is(ps - 10, b"SWAP-SPACE"))
    {
        found.push("swap");
    }
    if is(0, b"LUKS\xba\xbe") || is(0x4000, b"SKUL\xba\xbe") {
        found.push("LUKS");
    }
    if (0..4).any(|s| is(s * 512, b"LABELONE") && is(s * 512 + 24, b"LVM2 001")) {
        found.push("LVM2 PV");
    }
    const MD_MAGIC: u32 = 0xa92b_4efc;
    let mut md = le32(0) == Some(MD_MAGIC) || le32(4096) == Some(MD_MAGIC);
    if size >= 128 << 10 {
        // v1.0: 8 KiB from the end, 4 KiB aligned; v0.90: the last 64 KiB
        // aligned block.
        let v10 = ((size / 512).saturating_sub(16) & !7) * 512;
        let v090 = (size & !(65535)).saturating_sub(65536);
        for off in [v10, v090] {
            if let Some(b) = read(off, 4) {
                if b.len() == 4 && u32::from_le_bytes([b[0], b[1], b[2], b[3]]) == MD_MAGIC {
                    md = true;
                }
            }
        }
    }
    if md {
        found.push("md RAID");
    }
    if is(512, b"EFI PART") || is(4096, b"EFI PART") {
        found.push("GPT partition table");
    } else if boot_sig && !fat {
        // An MBR: at least one of the four entries has a partition type.
        let used = (0..4).any(|k| at(446 + 16 * k + 4, 1).is_some_and(|t| t[0] != 0));
        if used {
            found.push("MBR partition table");
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(size: usize, marks: &[(usize, &[u8])]) -> Vec<u8> {
        let mut v = vec![0u8; size];
        for (off, m) in marks {
            v[*off..*off + m.len()].copy_from_slice(m);
        }
        v
    }

    fn scan(img: &[u8]) -> Vec<&'static str> {
        let read = |off: u64, len: usize| {
            let off = off as usize;
            img.get(off..(off + len).min(img.len())).map(|s| s.to_vec())
        };
        detect(&read, img.len() as u64)
    }

    #[test]
    fn blank_device_has_no_signature() {
        assert!(scan(&vec![0u8; 1 << 20]).is_empty());
        assert!(scan(&[]).is_empty());
        // Random-looking data is not mistaken for a signature.
        let mut v = vec![0u8; 1 << 20];
        crate::util::fill_pattern(&mut v, 99);
        assert!(scan(&v).is_empty());
    }

    #[test]
    fn each_magic_is_found() {
        let m = 1 << 20;
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (image(m, &[(0x438, &[0x53, 0xEF])]), "ext2/3/4"),
            (image(m, &[(0, b"XFSB")]), "xfs"),
            (image(m, &[(0x10040, b"_BHRfS_M")]), "btrfs"),
            (
                image(m, &[(0x52, b"FAT32   "), (510, &[0x55, 0xAA])]),
                "vfat",
            ),
            (image(m, &[(3, b"NTFS    ")]), "ntfs"),
            (image(m, &[(3, b"EXFAT   ")]), "exfat"),
            (image(m, &[(4086, b"SWAPSPACE2")]), "swap"),
            (image(m, &[(65526, b"SWAPSPACE2")]), "swap"),
            (image(m, &[(0, b"LUKS\xba\xbe")]), "LUKS"),
            (
                image(m, &[(512, b"LABELONE"), (536, b"LVM2 001")]),
                "LVM2 PV",
            ),
            (
                image(m, &[(4096, &0xa92b_4efcu32.to_le_bytes())]),
                "md RAID",
            ),
            (
                image(m, &[(m - 65536, &0xa92b_4efcu32.to_le_bytes())]),
                "md RAID",
            ),
            (
                image(m, &[(m - 8192, &0xa92b_4efcu32.to_le_bytes())]),
                "md RAID",
            ),
            (image(m, &[(512, b"EFI PART")]), "GPT partition table"),
            (
                image(m, &[(446 + 4, &[0x83]), (510, &[0x55, 0xAA])]),
                "MBR partition table",
            ),
            (image(m, &[(1024, &0xF2F5_2010u32.to_le_bytes())]), "f2fs"),
        ];
        for (img, want) in cases {
            let got = scan(&img);
            assert!(got.contains(&want), "{want}: got {got:?}");
        }
    }

    #[test]
    fn fat_boot_sector_is_not_also_an_mbr() {
        let img = image(
            1 << 20,
            &[(0x36, b"FAT16   "), (510, &[0x55, 0xAA]), (450, &[6])],
        );
        assert_eq!(scan(&img), vec!["vfat"]);
    }
}
