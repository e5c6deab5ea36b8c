//! The registry: every benchmark family and every benchmark, in display
//! order, built from the command line's options. One explicit list, so what
//! `sysgauge list` shows, what `sysgauge run` runs and what the docs
//! describe cannot drift apart (a test checks the docs).

use crate::clock;
use crate::cpu;
use crate::crypto;
use crate::disk;
use crate::hash;
use crate::memory;
use crate::net;
use crate::spawn;
use crate::ssh;
use crate::startup;
use crate::sweep;
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::{Benchmark, Profile};

/// A family of benchmarks and its time slice per profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Seconds for the tiny, quick, standard and full profiles.
    pub budget_seconds: [f64; 4],
    /// Whether `sysgauge run` includes the family when neither `--only` nor
    /// `--skip` names it. Families that take minutes whatever the profile
    /// (ssh) are opt-in: `sysgauge run --only FAMILY` or their own
    /// subcommand. `sysgauge list` shows them all the same.
    pub in_default_run: bool,
}

impl FamilyInfo {
    pub fn budget(&self, profile: Profile) -> Duration {
        let s = match profile {
            Profile::Tiny => self.budget_seconds[0],
            Profile::Quick => self.budget_seconds[1],
            Profile::Standard => self.budget_seconds[2],
            Profile::Full => self.budget_seconds[3],
        };
        Duration::from_secs_f64(s)
    }
}

/// Every family, in display order. The quick budgets add up to about a
/// minute on a 2-core machine.
pub fn families() -> &'static [FamilyInfo] {
    &[
        FamilyInfo {
            name: "clock",
            summary: "effective clock of each CPU against its nominal clock (at the start and end of a run)",
            budget_seconds: [0.1, 1.0, 4.0, 8.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "hash",
            summary: "in-process digest throughput (md5, sha1, sha256, sha512, blake2b-512, blake3)",
            budget_seconds: [0.3, 6.0, 40.0, 120.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "crypto",
            summary: "openssl-speed-style ciphers, AEADs, HMAC, signatures and key agreement",
            budget_seconds: [0.4, 8.0, 40.0, 160.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "cpu",
            summary: "classic CPU kernels (numeric sort ... LU decomposition) in iterations/s, thread scaling, integer/float/memory indexes",
            budget_seconds: [0.3, 12.0, 60.0, 180.0],
            in_default_run: true,
        },
        // The slice's three cases also allocate and fault in their buffers
        // and build the latency chain (about a second in all at the quick
        // sizes), outside the measuring budget: 5 s of measuring is about
        // 6 s of wall time.
        FamilyInfo {
            name: "mem",
            summary: "memory copy bandwidth (mbw style), STREAM kernels, latency by working set, tmpfs writes",
            budget_seconds: [0.3, 5.0, 30.0, 90.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "disk",
            summary: "file-system and raw-device I/O: sequential, rewrite, per-character, random seeks, file operations",
            budget_seconds: [0.4, 8.0, 40.0, 120.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "sweep",
            summary: "the system's hash programs and dd over K copies of a corpus: start-up vs throughput",
            budget_seconds: [0.3, 6.0, 40.0, 120.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "spawn",
            summary: "process start-up cost by method (fork, vfork, clone, posix_spawn, std, popen, system), parent-size sweep",
            budget_seconds: [0.3, 4.0, 40.0, 120.0],
            in_default_run: true,
        },
        // The startup family runs only the commands given to `sysgauge
        // startup` (none in `sysgauge run`); its slice is the default
        // minimum time of the timed runs of each command.
        FamilyInfo {
            name: "startup",
            summary: "start-up time of given commands against a baseline, and the shared libraries they load",
            budget_seconds: [0.3, 3.0, 10.0, 30.0],
            in_default_run: true,
        },
        FamilyInfo {
            name: "net",
            summary: "TCP throughput and connection rate, UDP packet rate and latency (loopback or --peer); 2ping results of `sysgauge ping`",
            budget_seconds: [0.4, 5.0, 30.0, 90.0],
            in_default_run: true,
        },
        // Real ssh connections through a private sshd: minutes for the
        // factorial matrix, so not in the default run. The slice only
        // describes `sysgauge run --only ssh`; the cases run a fixed number
        // of transfers of a fixed size whatever the budget.
        FamilyInfo {
            name: "ssh",
            summary: "OpenSSH cipher, MAC and key exchange speed: transfer throughput and handshake time (private sshd on loopback, or --host)",
            budget_seconds: [2.0, 30.0, 120.0, 600.0],
            in_default_run: false,
        },
    ]
}

/// An opt-in family and its first benchmark's id, for tests of the rule
/// that `run` leaves such families out unless `--only` names them.
pub fn opt_in_example() -> (&'static str, String) {
    let family = families()
        .iter()
        .find(|f| !f.in_default_run)
        .map_or("", |f| f.name);
    let first = benchmarks(&Options::default())
        .into_iter()
        .map(|b| b.id().to_string())
        .find(|id| sysgauge_core::family_of(id) == family)
        .unwrap_or_default();
    (family, first)
}

pub fn family_info(name: &str) -> Option<&'static FamilyInfo> {
    families().iter().find(|f| f.name == name)
}

/// Options of every family, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub hash: Arc<hash::HashOptions>,
    pub cpu: Arc<cpu::CpuOptions>,
    pub mem: Arc<memory::MemOptions>,
    pub disk: Arc<disk::DiskOptions>,
    pub sweep: Arc<sweep::SweepOptions>,
    pub crypto: Arc<crypto::CryptoOptions>,
    pub clock: Arc<clock::ClockOptions>,
    pub spawn: Arc<spawn::SpawnOptions>,
    pub startup: Arc<startup::StartupOptions>,
    pub net: Arc<net::NetOptions>,
    pub ssh: Arc<ssh::SshOptions>,
}

/// Every benchmark, in display order.
pub fn benchmarks(options: &Options) -> Vec<Box<dyn Benchmark>> {
    let mut v = Vec::new();
    // The clock check comes first, before anything has warmed the CPU.
    v.extend(clock::benchmarks(&options.clock));
    v.extend(hash::benchmarks(&options.hash));
    v.extend(crypto::benchmarks(&options.crypto));
    v.extend(cpu::benchmarks(&options.cpu));
    v.extend(memory::benchmarks(&options.mem));
    v.extend(disk::benchmarks(&options.disk));
    v.extend(sweep::benchmarks(&options.sweep));
    v.extend(spawn::benchmarks(&options.spawn));
    v.extend(startup::benchmarks(&options.startup));
    v.extend(net::benchmarks(&options.net));
    v.extend(ssh::benchmarks(&options.ssh));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use sysgauge_core::{family_of, is_valid_bench_id};

    const BENCHMARKS_DOC: &str = include_str!("../../../docs/benchmarks.md");

    #[test]
    fn ids_unique_well_formed_documented() {
        let all = benchmarks(&Options::default());
        let mut seen = BTreeSet::new();
        for b in &all {
            let id = b.id().to_string();
            assert!(is_valid_bench_id(&id), "malformed id {id}");
            assert!(seen.insert(id.clone()), "duplicate id {id}");
            assert!(family_info(family_of(&id)).is_some(), "{id} has no family");
            let d = b.describe();
            assert!(!d.summary.is_empty(), "{id} has no description");
            assert!(
                BENCHMARKS_DOC.contains(&format!("`{id}`")),
                "{id} is not documented in docs/benchmarks.md"
            );
        }
    }

    #[test]
    fn every_family_has_benchmarks_and_docs() {
        let all = benchmarks(&Options::default());
        for f in families() {
            assert!(
                all.iter().any(|b| family_of(b.id()) == f.name),
                "family {} has no benchmark",
                f.name
            );
            assert!(BENCHMARKS_DOC.contains(&format!("## {}", f.name)));
            assert!(f.budget(Profile::Quick) < f.budget(Profile::Standard));
        }
        // Only what `sysgauge run` runs by default counts against its minute.
        let quick: f64 = families()
            .iter()
            .filter(|f| f.in_default_run)
            .map(|f| f.budget_seconds[1])
            .sum();
        assert!(quick <= 75.0, "quick profile budgets add up to {quick} s");
    }
}
