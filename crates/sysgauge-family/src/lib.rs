//! sysgauge-family: the family contract and the pieces below every family.
//!
//! `family` is what a family implements and registers (the `Family` trait,
//! `FamilyDef`, `register_family!`) and the options it is built from;
//! `util` the small helpers the families share (metrics from samples, byte
//! rates, test patterns, other tools' line errors); `methodology` the
//! run-level findings; `baseline_file` the reference baseline's file (the
//! cpu family's index reads the reference machine's numbers from it).
//!
//! The family crates (sysgauge-bench, sysgauge-crypto, sysgauge-net) build
//! on this one side by side; sysgauge-registry lists them all.

pub mod baseline_file;
pub mod family;
pub mod methodology;
pub mod util;
