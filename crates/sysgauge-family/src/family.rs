//! The family contract: what a family implements and registers (the
//! `Family` trait, `FamilyDef` and `register_family!`; `one_per_kind` for
//! its `benchmarks` list), what it is described by (`FamilyInfo`), the
//! figures it draws (`FamilyChart`) and the options it is built from
//! (`Options`). Families import this crate, never the registry that lists
//! them (sysgauge-registry), so the list sits above the families and
//! nothing below it imports it.

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
    /// Whether its cases only compute: a case that waited for I/O or
    /// stalled on memory while it ran was disturbed (telemetry flags it).
    /// Not for families whose work is I/O or memory traffic by design.
    pub cpu_bound: bool,
}

impl FamilyInfo {
    pub fn budget(&self, profile: Profile) -> Duration {
        Duration::from_secs_f64(by_profile(profile, self.budget_seconds))
    }
}

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

/// One benchmark per kind, in the kinds' order, boxed as `benchmarks`
/// returns them: for a family whose benchmarks are one type told apart by
/// a kind (`Kind::ALL`, `Method::ALL`).
pub fn one_per_kind<K: Copy, B: Benchmark + 'static>(
    kinds: &[K],
    make: impl Fn(K) -> B,
) -> Vec<Box<dyn Benchmark>> {
    kinds
        .iter()
        .map(|&k| Box::new(make(k)) as Box<dyn Benchmark>)
        .collect()
}

/// Registers a family from its own folder: defines the folder's `FAMILY`
/// (the one line it takes in `FAMILIES`) from its name, options type, time
/// slices, summary, renderer and (optionally) its figures across machines,
/// around the folder's `benchmarks` function.
#[macro_export]
macro_rules! register_family {
    (@charts) => { &[] };
    (@charts $charts:expr) => { $charts };
    (
        name: $name:literal, options: $options:ty, in_default_run: $run:expr,
        cpu_bound: $cpu_bound:expr, summary_first: $summary_first:expr, budget_seconds: $budget:expr,
        report: $report:expr, summary: $summary:literal
        $(, charts: $charts:expr)? $(,)?
    ) => {
        /// The family's registration (see `sysgauge_registry::FAMILIES`).
        pub static FAMILY: $crate::family::FamilyDef<$options> = $crate::family::FamilyDef {
            info: $crate::family::FamilyInfo {
                name: $name,
                summary: $summary,
                budget_seconds: $budget,
                in_default_run: $run,
                cpu_bound: $cpu_bound,
            },
            benchmarks,
            report: $report,
            summary_first: $summary_first,
            charts: $crate::register_family!(@charts $($charts)?),
        };
    };
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
