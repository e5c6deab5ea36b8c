//! sysgauge-registry: every benchmark family and every benchmark, in
//! display order, built from the command line's options. One explicit list
//! of families (`FAMILIES`), each registered in its own folder with
//! `register_family!`, so what `sysgauge list` shows, what `sysgauge run`
//! runs and what the docs describe cannot drift apart (a test checks the
//! docs). It sits above the family crates (sysgauge-bench, sysgauge-crypto,
//! sysgauge-net), with what needs the whole list: the reference baseline's
//! comparison with today's benchmarks (`baseline`).

pub mod baseline;

use sysgauge_bench::{clock, cpu, disk, fake, memory, spawn, startup, sweep};
use sysgauge_core::Benchmark;
use sysgauge_crypto::{crypto, hash};
use sysgauge_family::family::{Family, FamilyChart, FamilyInfo, Options};
use sysgauge_net::{net, ssh};

/// Every family, in display order: the registry. Adding a family is one
/// line here (see docs/architecture.md). The clock check comes first, before
/// anything has warmed the CPU. The quick budgets of the default run add up
/// to 38 s; with each case's set-up (the sweep's fixed workload above all)
/// and the wait for a quiet machine, the run takes about 45 s on a 2-core
/// machine (docs/performance.md).
static FAMILIES: &[&dyn Family] = &[
    &clock::FAMILY,
    &hash::FAMILY,
    &crypto::FAMILY,
    &cpu::FAMILY,
    &memory::FAMILY,
    &disk::FAMILY,
    &sweep::FAMILY,
    &spawn::FAMILY,
    &startup::FAMILY,
    &net::FAMILY,
    &ssh::FAMILY,
];

/// The families of this process, in display order: `FAMILIES`, and last
/// the fake family of the command-line tests when its variable is set
/// (`sysgauge_bench::fake`). Everything that lists families goes through
/// here.
pub fn registered() -> impl Iterator<Item = &'static dyn Family> {
    let fake: Option<&'static dyn Family> = fake::enabled().then_some(&fake::FAMILY);
    FAMILIES.iter().copied().chain(fake)
}

/// Every family's info, in display order.
pub fn families() -> Vec<&'static FamilyInfo> {
    registered().map(|f| f.info()).collect()
}

/// The family called `name`.
pub fn family(name: &str) -> Option<&'static dyn Family> {
    registered().find(|f| f.info().name == name)
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

/// Every family's figures across machines, in family order.
pub fn charts() -> impl Iterator<Item = &'static FamilyChart> {
    registered().flat_map(|f| f.charts().iter())
}

/// The figure called `name` (`sysgauge chart --kind NAME`).
pub fn chart(name: &str) -> Option<&'static FamilyChart> {
    charts().find(|c| c.name == name)
}

pub fn family_info(name: &str) -> Option<&'static FamilyInfo> {
    family(name).map(|f| f.info())
}

/// Every benchmark, in display order.
pub fn benchmarks(options: &Options) -> Vec<Box<dyn Benchmark>> {
    registered().flat_map(|f| f.benchmarks(options)).collect()
}

/// The workload version sysgauge's own benchmark `id` has today, so an
/// imported number (openssl, mbw) compares with current sysgauge numbers;
/// 1 for ids sysgauge does not measure.
pub fn workload_version_of(id: &str) -> u32 {
    benchmarks(&Options::default())
        .iter()
        .find(|b| b.id() == id)
        .map(|b| b.describe().workload_version)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use sysgauge_core::{family_of, is_valid_bench_id, Profile};

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

    /// The families other tools' imports keep their own ids in are never
    /// sysgauge's: an imported number cannot pass for a sysgauge case.
    #[test]
    fn imported_tools_families_are_not_sysgauges() {
        for tool in [
            "openssl",
            "mbw",
            "bonnie",
            "nbench",
            "hyperfine",
            "fio",
            "sysbench",
        ] {
            assert!(family_info(tool).is_none(), "{tool} is a sysgauge family");
        }
    }

    #[test]
    fn charts_unique_and_documented() {
        const COMPARING_DOC: &str = include_str!("../../../docs/comparing.md");
        let names: Vec<&str> = charts().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["latency", "sweep", "net-loss", "net-rtt", "net-tcp", "net-udp"]
        );
        for name in names {
            assert!(chart(name).is_some_and(|c| c.name == name));
            assert!(
                COMPARING_DOC.contains(&format!("--kind {name}")),
                "`sysgauge chart --kind {name}` is not documented in docs/comparing.md"
            );
        }
        assert!(chart("nosuch").is_none());
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
        assert!(quick <= 38.0, "quick profile budgets add up to {quick} s");
    }
}
