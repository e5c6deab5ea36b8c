//! Fuzz target: decoding arbitrary datagrams never panics, and whatever
//! decodes re-encodes to bytes that decode to the same packet (decoding is
//! canonical). The authenticated decoder and the reply-sizing encoder are
//! driven too, since they see the same hostile input in the listener.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_twoping::auth::{Auth, Digest};
use sysgauge_twoping::codec::{self, MAX_DATAGRAM};

fuzz_target!(|data: &[u8]| {
    let auth = Auth::new(Digest::HmacSha256, "fuzz");
    let _ = codec::decode_authenticated(data, &auth);
    let Ok(packet) = codec::decode(data) else {
        return;
    };
    let again = codec::encode(&packet, 0, MAX_DATAGRAM, None);
    assert_eq!(codec::decode(&again).as_ref(), Ok(&packet));
    // Cut to a reply's size limits: must still decode.
    let limit = data.len().min(512);
    let cut = codec::encode(&packet, 128, limit, Some(limit));
    assert!(cut.len() <= limit.max(codec::HEADER_LEN));
    assert!(codec::decode(&cut).is_ok());
    let signed = codec::encode_authenticated(&packet, 128, MAX_DATAGRAM, None, &auth);
    assert!(codec::decode_authenticated(&signed, &auth).is_ok());
});
