//! Fuzz target: a 2ping session fed hostile datagrams through the
//! listener's path (decode, handle, size and encode the reply, commit),
//! with requests of its own in between so replies and investigations can
//! match. Never panics; replies it builds decode; tables stay bounded.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sysgauge_twoping::fuzzing::session_datagrams(data);
});
