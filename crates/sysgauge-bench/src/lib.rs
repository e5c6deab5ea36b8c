//! sysgauge-bench: every benchmark family, and the registry that lists them
//! in display order.
//!
//! A family is a module with its benchmarks (each implementing
//! `sysgauge_core::Benchmark`), an options struct filled from the command
//! line (or left at its defaults, which follow the profile), its renderers
//! (`report.rs`) and its registration (`register_family!` in its `mod.rs`,
//! one line in `registry::FAMILIES`). Benchmarks
//! never print, format units or write SQL: they return metrics and findings.

// aws-lc's C API for the public-key operations aws-lc-rs lacks: the
// crate's one FFI wrapper (the crypto family itself forbids unsafe code).
pub mod awslc;
pub mod baseline;
pub mod clock;
pub mod cpu;
pub mod crypto;
pub mod disk;
pub mod foreign_json;
pub mod hash;
pub mod implementation;
pub mod memory;
pub mod methodology;
pub mod net;
pub mod openssl_speed;
pub mod registry;
pub mod spawn;
pub mod ssh;
pub mod startup;
pub mod sweep;
pub mod sysbench;
pub mod util;

pub use registry::{
    benchmarks, families, family, family_info, Family, FamilyInfo, Options, FAMILIES,
};
