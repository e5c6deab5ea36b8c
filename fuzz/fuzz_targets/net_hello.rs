//! Fuzz target: the net service's 16-byte hello and reply, as read from
//! anyone who connects to `listen --serve`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_bench::net::proto::{Hello, Reply, MSG_LEN};

fuzz_target!(|data: &[u8]| {
    let mut b = [0u8; MSG_LEN];
    let n = data.len().min(MSG_LEN);
    b[..n].copy_from_slice(&data[..n]);
    if let Ok(h) = Hello::decode(&b) {
        // What decodes re-encodes to a hello that decodes the same.
        assert_eq!(Hello::decode(&h.encode()).ok(), Some(h));
    }
    let _ = Reply::decode(&b);
});
