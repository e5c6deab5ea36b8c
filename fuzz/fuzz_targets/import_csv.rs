//! Fuzz target: `sysgauge import` of a CSV file. Any text either imports
//! or is an error; the sniffer never panics either.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_compare::{parse_csv, sniff, ImportContext};

fn known(id: &str) -> Option<u32> {
    (id == "hash.sha256").then_some(3)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = sniff(text);
    let ctx = ImportContext {
        source_name: "fuzz.csv",
        at: chrono::Utc::now(),
        tool_version: "0.1.0",
        workload_version: &known,
    };
    let _ = parse_csv(text, &ctx);
});
