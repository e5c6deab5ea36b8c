//! Fuzz target: nice-number sizes and counts ("4KiB", "1.5G", "1k,4k").
//! A value that parses prints back (as a size label) without panicking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_core::size::{self, Fraction};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = size::parse_size(text) {
        let _ = size::size_label(v);
    }
    let _ = size::parse_count(text);
    let _ = size::parse_size_list(text);
    let _ = size::parse_u128(text, Fraction::Allowed);
    let _ = size::parse_u64(text, Fraction::Forbidden);
});
