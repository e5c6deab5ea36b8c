//! sysgauge-compare: how machines are compared.
//!
//! - `case`: what may be compared (same benchmark id, parameters, workload
//!   version and metric), unit conversion within a dimension, and the
//!   direction-adjusted ratio (above 1 always means faster);
//! - `comparison`: several runs against a reference: per-case ratios with
//!   bootstrap intervals, per-family and overall arithmetic and geometric
//!   means, the BogoMIPS ratio, missing and excluded cases, differing host
//!   facts; the `compare --format json` document;
//! - `index`: 1000 × geometric mean of ratios against a reference run (the
//!   index every `sysgauge run` ends with);
//! - `fleet`: hosts in groups (inventory group, tag, CPU model): each
//!   case's median per group and the hosts that stand out (median/MAD);
//! - `machine`: a machine is every result stored for it (per case the
//!   newest finished one, each with the run it came from);
//! - `facts`: host facts as text for the tables above the numbers;
//! - `import`: CSV tables and sysgauge JSON as run records (text in,
//!   records or an error naming file and line out).
//!
//! A crate of its own because two sides need it and neither should own it:
//! the renderers (`sysgauge-report`) and the embedded baseline
//! (`sysgauge-registry`). It only computes; it never prints or reads files.

#![forbid(unsafe_code)]

pub mod case;
pub mod comparison;
pub mod facts;
pub mod fleet;
pub mod import;
pub mod index;
pub mod machine;
pub mod naming;
mod parallel;

#[cfg(any(test, feature = "testutil"))]
pub mod testutil;

pub use case::{adjusted_ratio, conversion_factor, CaseData, CaseKey, CaseSet};
pub use comparison::{
    compare, compare_with_intervals, leave_out_disturbed, CaseRow, Cell, CompareError, Comparison,
    Excluded, FactRow, GroupSummary, Interval, MachineInfo, MeanCell, MissingCase,
    COMPARE_SCHEMA_VERSION, MAX_MACHINES_WITH_INTERVALS, OVERALL,
};
pub use facts::{differing_facts, fact_differs, host_facts, FILE_SIZE_DETAIL, FILE_SIZE_FACT};
pub use fleet::{group_hosts, FleetGroups, GroupCell, GroupRow, HostGroup, Outlier};
pub use import::{parse_csv, parse_json, synthetic_run, ImportContext, ImportError};
pub use index::{index_against, IndexLine, IndexReport};
pub use machine::{run_kind, user_label, Machine, RunSource};
