//! The machine's stable identity: /etc/machine-id, and the DMI product UUID
//! and serial where the firmware provides them and we may read them (both
//! files are root-only on most kernels). A renamed machine keeps these; two
//! machines that share a host name differ in them.
//!
//! Firmware often fills the DMI fields with placeholders ("To be filled by
//! O.E.M.", "Not Specified", all zeros or all F's); those identify nothing
//! and are dropped, so two boards with the same placeholder do not merge.

use crate::sysroot::{read_value, SysRoot};
use sysgauge_core::host::IdentityInfo;

/// Collects the identity under `root`; what cannot be read is `None`.
pub fn collect_identity(root: &SysRoot) -> IdentityInfo {
    let machine_id = read_value(&root.etc_path("machine-id"))
        .or_else(|| read_value(&root.root_path("var/lib/dbus/machine-id")))
        .and_then(|s| meaningful(&s));
    IdentityInfo {
        machine_id,
        product_uuid: root
            .sys_value("class/dmi/id/product_uuid")
            .and_then(|s| meaningful(&s))
            .map(|s| s.to_ascii_lowercase()),
        product_serial: root
            .sys_value("class/dmi/id/product_serial")
            .and_then(|s| meaningful(&s)),
    }
}

/// `value` trimmed, unless it is a placeholder that identifies nothing.
pub fn meaningful(value: &str) -> Option<String> {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    let placeholder = [
        "",
        "none",
        "default string",
        "not specified",
        "not applicable",
        "to be filled by o.e.m.",
        "system serial number",
        "uninitialized",
        "0123456789",
    ];
    let filler = v
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .all(|c| c == '0')
        || v.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .all(|c| c.eq_ignore_ascii_case(&'f'));
    if placeholder.contains(&lower.as_str()) || filler || v.chars().any(char::is_control) {
        None
    } else {
        Some(v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_identify_nothing() {
        for p in [
            "",
            "  ",
            "To be filled by O.E.M.",
            "Not Specified",
            "00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "0",
            "Default string",
        ] {
            assert_eq!(meaningful(p), None, "{p:?}");
        }
        assert_eq!(meaningful(" PF2ABCDE \n").as_deref(), Some("PF2ABCDE"));
    }

    #[test]
    fn read_from_a_tree() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = SysRoot::under(dir.path());
        assert!(collect_identity(&root).is_empty());
        std::fs::create_dir_all(dir.path().join("etc")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("sys/class/dmi/id"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join("etc/machine-id"),
            "3d1219c7c4c5404aaa1f6d2a48adfda4\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join("sys/class/dmi/id/product_uuid"),
            "4C4C4544-0031-3910-8033-B4C04F4A4E32\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join("sys/class/dmi/id/product_serial"),
            "To be filled by O.E.M.\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let id = collect_identity(&root);
        assert_eq!(
            id.machine_id.as_deref(),
            Some("3d1219c7c4c5404aaa1f6d2a48adfda4")
        );
        assert_eq!(
            id.product_uuid.as_deref(),
            Some("4c4c4544-0031-3910-8033-b4c04f4a4e32")
        );
        assert_eq!(id.product_serial, None);
        assert_eq!(id.short().as_deref(), Some("3d1219c7"));
    }
}
