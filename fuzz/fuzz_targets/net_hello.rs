//! Fuzz target: the net service's hello (48 bytes with its HMAC tag), its
//! 16-byte reply and the UDP datagram header check, as read from anyone who
//! reaches `listen --serve`, with and without a shared key.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_net::net::proto::{
    udp_authentic, udp_seq, Hello, Reply, ServiceKey, HELLO_LEN, MSG_LEN,
};

fuzz_target!(|data: &[u8]| {
    let key = ServiceKey::new(b"fuzz-key");
    for k in [None, key.as_ref()] {
        let mut b = [0u8; HELLO_LEN];
        let n = data.len().min(HELLO_LEN);
        b[..n].copy_from_slice(&data[..n]);
        if let Ok(h) = Hello::decode(&b, k) {
            // What decodes re-encodes to a hello that decodes the same.
            assert_eq!(Hello::decode(&h.encode(k), k).ok(), Some(h));
        }
        let _ = udp_authentic(data, k);
    }
    let _ = udp_seq(data);
    let mut r = [0u8; MSG_LEN];
    let n = data.len().min(MSG_LEN);
    r[..n].copy_from_slice(&data[..n]);
    let _ = Reply::decode(&r);
});
