//! Fuzz target: `sysgauge import` of a CSV file. Any text either imports
//! or is an error.

#![no_main]

#[path = "import_common.rs"]
mod import_common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    import_common::feed(data, "fuzz.csv", sysgauge_compare::parse_csv);
});
