//! Fuzz target: `sysgauge import` of a JSON run record (or an array of
//! them). Any text either imports or is an error.

#![no_main]

#[path = "import_common.rs"]
mod import_common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    import_common::feed(data, "fuzz.json", sysgauge_compare::parse_json);
});
