//! Operating system facts: distribution (os-release), kernel release and
//! version, host name, security modules and container detection.
//!
//! Kernel and host name come from `/proc/sys/kernel/{osrelease,version,
//! hostname}` so that a captured tree answers the same questions as the
//! live machine; `uname(2)` fills the gaps only for a live root.
//!
//! LSM state is reported in three levels: a named state when the kernel says
//! so, "disabled" when the kernel proves the module absent (AppArmor built
//! in always has /sys/module/apparmor; SELinux built in always registers the
//! `selinuxfs` file system), and unknown otherwise. The LSM list itself
//! needs securityfs mounted at /sys/kernel/security.
//!
//! Container detection trusts only markers a container runtime writes at
//! run time (`container=` in PID 1's environment, /run/systemd/container,
//! /run/.containerenv). `/.dockerenv` is not trusted: images built with
//! Docker carry it into VMs and bare-metal installs (this very VM has one).

use crate::sysroot::{read_text, read_value, SysRoot};
use std::collections::BTreeMap;
use sysgauge_core::host::{OsInfo, SecurityInfo};

/// Parses os-release (`KEY="value"` lines with shell-like quoting) into
/// a map. Invalid lines are skipped.
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, raw)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        map.insert(key.to_string(), unquote(raw.trim()));
    }
    map
}

fn unquote(raw: &str) -> String {
    let mut chars = raw.chars();
    match chars.next() {
        Some('"') => {
            let mut out = String::new();
            let mut escaped = false;
            for c in chars {
                if escaped {
                    // Only these are escapes inside double quotes; otherwise
                    // the backslash is literal, as in the shell.
                    if !matches!(c, '"' | '\\' | '$' | '`') {
                        out.push('\\');
                    }
                    out.push(c);
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    break;
                } else {
                    out.push(c);
                }
            }
            out
        }
        Some('\'') => chars.take_while(|c| *c != '\'').collect(),
        _ => raw.to_string(),
    }
}

/// Distribution facts from an os-release map.
fn distribution(
    map: &BTreeMap<String, String>,
) -> (Option<String>, Option<String>, Option<String>) {
    let nonempty = |k: &str| map.get(k).filter(|v| !v.is_empty()).cloned();
    let pretty =
        nonempty("PRETTY_NAME").or_else(|| match (nonempty("NAME"), nonempty("VERSION")) {
            (Some(n), Some(v)) => Some(format!("{n} {v}")),
            (n, _) => n,
        });
    (pretty, nonempty("ID"), nonempty("VERSION_ID"))
}

/// Container kind from PID 1's environment (NUL-separated `KEY=value`).
pub fn container_from_environ(environ: &[u8]) -> Option<String> {
    environ
        .split(|b| *b == 0)
        .filter_map(|kv| kv.strip_prefix(b"container="))
        .map(|v| String::from_utf8_lossy(v).trim().to_string())
        .find(|v| !v.is_empty())
}

fn detect_container(root: &SysRoot) -> Option<String> {
    if let Ok(environ) = std::fs::read(root.proc_path("1/environ")) {
        if let Some(kind) = container_from_environ(&environ) {
            return Some(kind);
        }
    }
    if let Some(kind) = read_value(&root.root_path("run/systemd/container")) {
        return Some(kind);
    }
    if root.root_path("run/.containerenv").exists() {
        return Some("podman".to_string());
    }
    None
}

/// Collects distribution, kernel and container facts (kernel from uname is
/// added by the caller for live roots).
pub(crate) fn collect_os(root: &SysRoot) -> OsInfo {
    // /etc/os-release first; /usr/lib/os-release is the documented fallback.
    let os_release = read_text(&root.etc_path("os-release"))
        .or_else(|| read_text(&root.root_path("usr/lib/os-release")))
        .map(|t| parse_os_release(&t))
        .unwrap_or_default();
    let (distribution, distribution_id, distribution_version) = distribution(&os_release);
    OsInfo {
        kernel_release: read_value(&root.proc_path("sys/kernel/osrelease")),
        kernel_version: read_value(&root.proc_path("sys/kernel/version")),
        distribution,
        distribution_id,
        distribution_version,
        container: detect_container(root),
    }
}

/// Names of the file systems the kernel supports (/proc/filesystems).
fn supported_filesystems(root: &SysRoot) -> Option<Vec<String>> {
    let text = root.read_proc("filesystems")?;
    Some(
        text.lines()
            .filter_map(|l| l.split_whitespace().last())
            .map(str::to_string)
            .collect(),
    )
}

/// Collects LSM state.
pub(crate) fn collect_security(root: &SysRoot) -> SecurityInfo {
    let lsms: Option<Vec<String>> = root.sys_value("kernel/security/lsm").map(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    });
    let listed = |name: &str| lsms.as_ref().map(|l| l.iter().any(|x| x == name));

    let apparmor = match root
        .sys_value("module/apparmor/parameters/enabled")
        .as_deref()
    {
        Some("Y" | "y" | "1") => Some("enabled".to_string()),
        Some("N" | "n" | "0") => Some("disabled".to_string()),
        _ => match listed("apparmor") {
            Some(true) => Some("enabled".to_string()),
            Some(false) => Some("disabled".to_string()),
            // Built-in AppArmor always shows its parameters under
            // /sys/module; no directory while /sys/module is readable means
            // it is not in this kernel.
            None if root.sys_path("module").is_dir()
                && !root.sys_path("module/apparmor").exists() =>
            {
                Some("disabled".to_string())
            }
            None => None,
        },
    };

    let selinux = match root.sys_value("fs/selinux/enforce").as_deref() {
        Some("1") => Some("enforcing".to_string()),
        Some("0") => Some("permissive".to_string()),
        _ => match listed("selinux") {
            Some(false) => Some("disabled".to_string()),
            // Listed but selinuxfs not mounted: cannot tell the mode.
            Some(true) => None,
            None => match supported_filesystems(root) {
                Some(fs) if !fs.iter().any(|f| f == "selinuxfs") => Some("disabled".to_string()),
                _ => None,
            },
        },
    };

    SecurityInfo {
        lsms: lsms.unwrap_or_default(),
        apparmor,
        selinux,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn os_release_quoting() {
        let text = "# comment\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID='12'\nNAME=\"A \\\"quoted\\\" \\\\ name\"\nBAD LINE\n=x\n";
        let m = parse_os_release(text);
        assert_eq!(
            m.get("PRETTY_NAME").map(String::as_str),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(m.get("ID").map(String::as_str), Some("debian"));
        assert_eq!(m.get("VERSION_ID").map(String::as_str), Some("12"));
        assert_eq!(
            m.get("NAME").map(String::as_str),
            Some("A \"quoted\" \\ name")
        );
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn pretty_name_fallback() {
        let m = parse_os_release("NAME=Foo\nVERSION=\"1 (x)\"\n");
        assert_eq!(distribution(&m).0.as_deref(), Some("Foo 1 (x)"));
    }

    #[test]
    fn container_environ() {
        assert_eq!(
            container_from_environ(b"PATH=/bin\0container=lxc\0").as_deref(),
            Some("lxc")
        );
        assert_eq!(container_from_environ(b"PATH=/bin\0"), None);
        assert_eq!(container_from_environ(b""), None);
    }

    proptest! {
        #[test]
        fn os_release_never_panics(text in "\\PC{0,300}") {
            let _ = parse_os_release(&text);
        }

        #[test]
        fn environ_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = container_from_environ(&bytes);
        }
    }
}
