//! Run-level findings derived from the host facts and the build: things
//! that make every number of the run less trustworthy or less comparable,
//! said once at the top instead of per case.

use sysgauge_core::host::HostInfo;
use sysgauge_core::record::{BuildInfo, Finding, Severity};

pub const DEBUG_BUILD: &str = "debug-build";
pub const LSM_ACTIVE: &str = "lsm-active";
pub const GOVERNOR: &str = "cpu-governor";
pub const BUSY: &str = "busy-machine";
pub const VIRTUALIZED: &str = "virtualized";
pub const EMULATED: &str = "user-mode-emulated";

/// Other processes' share of all CPUs, in percent, at or above which the
/// machine is busy as a run starts.
pub const BUSY_LIMIT_PERCENT: f64 = 50.0;

/// Findings about the machine and the build that apply to the whole run.
/// `others_percent` is other processes' share of all CPUs as the run
/// starts, measured then (not the load average, which still counts a
/// build that ended a minute ago).
pub fn run_findings(
    host: &HostInfo,
    build: &BuildInfo,
    others_percent: Option<f64>,
) -> Vec<Finding> {
    let mut v = Vec::new();
    if build.profile == "debug" {
        v.push(
            Finding::new(
                DEBUG_BUILD,
                Severity::Critical,
                "this sysgauge is a debug build: its numbers are far below what the machine can do",
            )
            .with_remedy("build and run with --release (cargo run --release -- run)"),
        );
    }
    if host.security.mac_lsm_active() {
        let which = if host.security.lsms.is_empty() {
            [
                host.security.apparmor.as_ref().map(|_| "apparmor"),
                host.security.selinux.as_ref().map(|_| "selinux"),
            ]
            .iter()
            .flatten()
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
        } else {
            host.security.lsms.join(", ")
        };
        v.push(
            Finding::new(
                LSM_ACTIVE,
                Severity::Info,
                format!(
                    "Linux Security Modules are active ({which}); they can cost a few percent on the CPU kernels (sysgauge cpu) and more on system-call-heavy tests"
                ),
            )
            .with_remedy("compare with machines in the same LSM state, or note the difference when comparing"),
        );
    }
    if let Some(g) = host.cpu.governor.as_deref() {
        if g != "performance" {
            v.push(
                Finding::new(
                    GOVERNOR,
                    Severity::Info,
                    format!("the CPU frequency governor is '{g}': clocks ramp up only under load, which can slow short tests"),
                )
                .with_remedy("for stable numbers: cpupower frequency-set -g performance (as root), then run again"),
            );
        }
    }
    if let Some(others) = others_percent.filter(|p| *p >= BUSY_LIMIT_PERCENT) {
        let cpus = host
            .cpu
            .threads
            .map_or(String::new(), |n| format!(" of its {n} CPUs"));
        v.push(
            Finding::new(
                BUSY,
                Severity::Warning,
                format!("the machine was busy when the run started: other processes used {others:.0} %{cpus}"),
            )
            .with_remedy("stop other work (see `sysgauge procs`) and run again"),
        );
    }
    if host.cpu.virtualization.as_deref() == Some(sysgauge_host::USER_MODE_EMULATION) {
        v.push(
            Finding::new(
                EMULATED,
                Severity::Critical,
                emulated_message(std::env::consts::ARCH),
            )
            .with_remedy("run it on the machine it was built for, or run the build for this machine's own architecture"),
        );
    } else if let Some(virt) = host.cpu.virtualization.as_deref() {
        if virt != "none" {
            v.push(
                Finding::new(
                    VIRTUALIZED,
                    Severity::Info,
                    format!("running under virtualization ({virt}): other guests on the host can disturb the numbers"),
                )
                .with_remedy("repeat the run at another time and compare the spread"),
            );
        }
    }
    v
}

/// The emulator finding's text for a build of `arch`.
fn emulated_message(arch: &str) -> String {
    // "an aarch64 machine", "an x86_64 machine" (said "ex"), "a riscv64 machine".
    let article = if arch.starts_with(['a', 'e', 'i', 'o', 'u', 'x']) {
        "an"
    } else {
        "a"
    };
    format!(
        "this {arch} build runs under a user-mode emulator (qemu-user) on another CPU: its figures measure the emulator, not {article} {arch} machine"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_emulator_finding_reads_well() {
        assert!(super::emulated_message("aarch64").ends_with("not an aarch64 machine"));
        assert!(super::emulated_message("arm").ends_with("not an arm machine"));
        assert!(super::emulated_message("riscv64").ends_with("not a riscv64 machine"));
    }

    use super::*;

    #[test]
    fn findings_from_facts() {
        let mut h = HostInfo::default();
        let mut b = BuildInfo {
            profile: "release".into(),
            ..Default::default()
        };
        assert!(run_findings(&h, &b, None).is_empty());
        b.profile = "debug".into();
        h.security.lsms = vec!["capability".into(), "apparmor".into()];
        h.cpu.governor = Some("powersave".into());
        // A load average left over from a busy minute says nothing.
        h.load.load1 = Some(3.0);
        h.cpu.threads = Some(2);
        h.cpu.virtualization = Some("kvm".into());
        let codes: Vec<String> = run_findings(&h, &b, Some(1.0))
            .into_iter()
            .map(|f| f.code)
            .collect();
        assert!(!codes.iter().any(|c| c == BUSY), "{codes:?}");
        let all = run_findings(&h, &b, Some(75.0));
        let busy = all.iter().find(|f| f.code == BUSY);
        assert!(
            busy.is_some_and(|f| f.message.contains("75 % of its 2 CPUs")),
            "{all:?}"
        );
        let codes: Vec<String> = all.into_iter().map(|f| f.code).collect();
        assert_eq!(
            codes,
            vec![DEBUG_BUILD, LSM_ACTIVE, GOVERNOR, BUSY, VIRTUALIZED]
        );
        h.cpu.virtualization = Some(sysgauge_host::USER_MODE_EMULATION.into());
        let codes: Vec<String> = run_findings(&h, &b, None)
            .into_iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(codes.last().map(String::as_str), Some(EMULATED));
        assert!(!codes.iter().any(|c| c == VIRTUALIZED));
        h.cpu.virtualization = Some("none".into());
        h.cpu.governor = Some("performance".into());
        h.load.load1 = Some(0.1);
        h.security.lsms = vec!["capability".into(), "yama".into()];
        b.profile = "release".into();
        assert!(run_findings(&h, &b, Some(49.0)).is_empty());
    }
}
