//! sysgauge-bench: every benchmark family, and the registry that lists them
//! in display order.
//!
//! A family is a module with its benchmarks (each implementing
//! `sysgauge_core::Benchmark`), an options struct filled from the command
//! line (or left at its defaults, which follow the profile), its renderers
//! (`report.rs`) and its registration (`register_family!` from `family`, the
//! contract, in its `mod.rs`; one line in `registry::FAMILIES`). Benchmarks
//! never print, format units or write SQL: they return metrics and findings.
//!
//! Imports go one way: the family contract (`family`) and the shared pieces
//! below it, the families above, the list of families (`registry`) above
//! them, and what needs the whole list (`baseline`) at the top.

// aws-lc's C API for the public-key operations aws-lc-rs lacks: the
// crate's one FFI wrapper (the crypto family itself forbids unsafe code).
pub mod awslc;
pub mod baseline;
pub mod baseline_file;
pub mod clock;
pub mod cpu;
pub mod crypto;
pub mod disk;
pub mod family;
pub mod foreign_json;
pub mod hash;
pub mod implementation;
pub mod memory;
pub mod methodology;
pub mod net;
pub mod openssl_speed;
pub mod registry;
pub mod spawn;
pub mod speed;
pub mod ssh;
pub mod startup;
pub mod sweep;
pub mod sysbench;
pub mod util;

pub use family::{Family, FamilyInfo, Options};
pub use registry::{benchmarks, families, family, family_info, FAMILIES};
