//! Fuzz target: `openssl speed -mr` output as imported (and as read back
//! from a real openssl run).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = sysgauge_crypto::openssl_speed::parse_mr(text);
    }
});
