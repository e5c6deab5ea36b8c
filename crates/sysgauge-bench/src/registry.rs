//! The registry: every benchmark family and every benchmark, in display
//! order, built from the command line's options. One explicit list of
//! families (`FAMILIES`), each registered in its own folder with `register_family!`,
//! so what `sysgauge list` shows, what `sysgauge run` runs and what the docs
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
use crate::util::by_profile;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::{Benchmark, Profile, RunRecord};
use sysgauge_report::chart::lines::LabelledRun;
use sysgauge_report::{ChartError, Figure, TableFormat};

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
        Duration::from_secs_f64(by_profile(profile, self.budget_seconds))
    }
}

/// Every family, in display order: the registry. Adding a family is one
/// line here (see docs/architecture.md). The clock check comes first, before
/// anything has warmed the CPU. The quick budgets of the default run add up
/// to about a minute on a 2-core machine.
pub static FAMILIES: &[&dyn Family] = &[
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

/// A family: one folder, one registration. The registry and the generic
/// commands (`run`, `list`, a family's own subcommand) see a family only
/// through this.
pub trait Family: Send + Sync {
    /// Name, summary, time slices, whether `run` includes it.
    fn info(&self) -> &FamilyInfo;
    /// Its benchmarks, built from its options in `options` (its defaults,
    /// which follow the profile, when the command line gave none).
    fn benchmarks(&self, options: &Options) -> Vec<Box<dyn Benchmark>>;
    /// Its own tables for a run (empty if none, or no results of its own).
    fn report(&self, run: &RunRecord, format: TableFormat) -> String;
    /// Whether its subcommand shows the generic summary table before its
    /// own tables (no, when they already show every case).
    fn summary_first(&self) -> bool;
    /// The figures it draws across machines from their runs.
    fn charts(&self) -> &'static [FamilyChart];
}

/// A figure a family draws from several machines' runs (one line per
/// machine): a section of `sysgauge report` when some machine has the
/// data, and `sysgauge chart --kind NAME`. The family's folder builds the
/// `Figure` (it knows its ids); sysgauge-report draws it.
pub struct FamilyChart {
    /// The `--kind` value and the report section's name: `sweep`, `latency`.
    pub name: &'static str,
    /// The report section's heading.
    pub heading: &'static str,
    /// The caption under the figure in the report.
    pub caption: &'static str,
    /// What `--program` selects among the figure's panels (their titles),
    /// if anything.
    pub panels: Option<&'static str>,
    /// The figure of these machines, as (label, run) in the comparison's
    /// order (the position picks the colour); `ChartError::NoData` saying
    /// what to run when none of them has the data.
    pub figure: fn(&[LabelledRun]) -> Result<Figure, ChartError>,
}

impl std::fmt::Debug for FamilyChart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FamilyChart({})", self.name)
    }
}

/// A family's registration as data: its info, the function that makes its
/// benchmarks from its options type `O`, and its renderer.
pub struct FamilyDef<O> {
    pub info: FamilyInfo,
    pub benchmarks: fn(&Arc<O>) -> Vec<Box<dyn Benchmark>>,
    pub report: Option<fn(&RunRecord, TableFormat) -> String>,
    pub summary_first: bool,
    pub charts: &'static [FamilyChart],
}

impl<O: Any + Send + Sync + Default> Family for FamilyDef<O> {
    fn info(&self) -> &FamilyInfo {
        &self.info
    }

    fn benchmarks(&self, options: &Options) -> Vec<Box<dyn Benchmark>> {
        (self.benchmarks)(&options.get::<O>())
    }

    fn report(&self, run: &RunRecord, format: TableFormat) -> String {
        // A run without this family's cases (an import of another tool's
        // output, a `--only` run) gets none of its tables, not empty ones.
        if !run.results.iter().any(|r| r.family == self.info.name) {
            return String::new();
        }
        self.report.map(|r| r(run, format)).unwrap_or_default()
    }

    fn summary_first(&self) -> bool {
        self.summary_first
    }

    fn charts(&self) -> &'static [FamilyChart] {
        self.charts
    }
}

/// Registers a family from its own folder: defines the folder's `FAMILY`
/// (the one line it takes in `FAMILIES`) from its name, options type, time
/// slices, summary, renderer and (optionally) its figures across machines,
/// around the folder's `benchmarks` function.
macro_rules! register_family {
    (@charts) => { &[] };
    (@charts $charts:expr) => { $charts };
    (
        name: $name:literal, options: $options:ty, in_default_run: $run:expr,
        summary_first: $summary_first:expr, budget_seconds: $budget:expr,
        report: $report:expr, summary: $summary:literal
        $(, charts: $charts:expr)? $(,)?
    ) => {
        /// The family's registration (see `crate::registry::FAMILIES`).
        pub static FAMILY: $crate::registry::FamilyDef<$options> = $crate::registry::FamilyDef {
            info: $crate::registry::FamilyInfo {
                name: $name,
                summary: $summary,
                budget_seconds: $budget,
                in_default_run: $run,
            },
            benchmarks,
            report: $report,
            summary_first: $summary_first,
            charts: $crate::registry::register_family!(@charts $($charts)?),
        };
    };
}
pub(crate) use register_family;

/// Every family's info, in display order.
pub fn families() -> Vec<&'static FamilyInfo> {
    FAMILIES.iter().map(|f| f.info()).collect()
}

/// The family called `name`.
pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.info().name == name)
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
    FAMILIES.iter().flat_map(|f| f.charts().iter())
}

/// The figure called `name` (`sysgauge chart --kind NAME`).
pub fn chart(name: &str) -> Option<&'static FamilyChart> {
    charts().find(|c| c.name == name)
}

pub fn family_info(name: &str) -> Option<&'static FamilyInfo> {
    family(name).map(|f| f.info())
}

/// The options of every family, as given on the command line; a family
/// whose options are not here runs with its defaults. Keyed by the options'
/// type, so adding a family adds nothing here.
#[derive(Clone, Default)]
pub struct Options(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl Options {
    /// These options for the family whose options type is `T`.
    pub fn with<T: Any + Send + Sync>(mut self, options: T) -> Options {
        self.0.insert(TypeId::of::<T>(), Arc::new(options));
        self
    }

    /// The options of type `T`: the ones given (shared), else new defaults
    /// on each call; options that carry state between benchmarks must be
    /// given with `with` to be shared.
    pub fn get<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|o| o.clone().downcast::<T>().ok())
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Options({} given)", self.0.len())
    }
}

/// Every benchmark, in display order.
pub fn benchmarks(options: &Options) -> Vec<Box<dyn Benchmark>> {
    FAMILIES
        .iter()
        .flat_map(|f| f.benchmarks(options))
        .collect()
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
        assert!(quick <= 75.0, "quick profile budgets add up to {quick} s");
    }
}
