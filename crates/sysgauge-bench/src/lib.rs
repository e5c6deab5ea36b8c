//! sysgauge-bench: the benchmark families of the machine itself (clock,
//! cpu, memory, disk, sweep, spawn, startup) and the readers of other
//! tools' output that belong with them (`sysbench`, `foreign_json`).
//!
//! A family is a module with its benchmarks (each implementing
//! `sysgauge_core::Benchmark`), an options struct filled from the command
//! line (or left at its defaults, which follow the profile), its renderers
//! (`report.rs`) and its registration (`register_family!` from
//! sysgauge-family, the contract, in its `mod.rs`; one line in
//! `sysgauge_registry::FAMILIES`). Benchmarks never print, format units or
//! write SQL: they return metrics and findings.
//!
//! Imports go one way: the family contract (sysgauge-family) below, the
//! families here and beside (sysgauge-crypto, sysgauge-net), the list of
//! families and what needs the whole list (sysgauge-registry) above.

/// A captured output of another tool, `tests/fixtures/TOOL/NAME`, for
/// the tests of its parser.
#[cfg(test)]
macro_rules! fixture {
    ($tool:literal, $name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/",
            $tool,
            "/",
            $name
        ))
    };
}

pub mod clock;
pub mod cpu;
pub mod disk;
pub mod fake;
pub mod foreign_json;
pub mod memory;
pub mod spawn;
pub mod startup;
pub mod sweep;
pub mod sysbench;
