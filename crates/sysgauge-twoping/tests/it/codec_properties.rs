//! Property tests of the codec: round trips, totality on arbitrary input,
//! checksums, truncation and MAC tamper detection.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use proptest::prelude::*;
use sysgauge_twoping::auth::{Auth, Digest};
use sysgauge_twoping::checksum::checksum_of_packet;
use sysgauge_twoping::codec::{
    self, ext_id, Encrypted, ExtendedSegment, Mac, MessageId, Opcodes, Packet, UnknownOpcode,
    HEADER_LEN, MAX_DATAGRAM,
};

fn id() -> impl Strategy<Value = MessageId> {
    any::<MessageId>()
}

fn ids() -> impl Strategy<Value = Option<Vec<MessageId>>> {
    proptest::option::of(proptest::collection::vec(id(), 0..12))
}

fn known_ext_ids() -> [u32; 5] {
    [
        ext_id::PROGRAM_VERSION,
        ext_id::WALL_CLOCK,
        ext_id::MONOTONIC_CLOCK,
        ext_id::RANDOM,
        ext_id::NOTICE,
    ]
}

fn extended() -> impl Strategy<Value = ExtendedSegment> {
    prop_oneof![
        ".{0,24}".prop_map(ExtendedSegment::ProgramVersion),
        any::<u64>().prop_map(ExtendedSegment::WallClock),
        (any::<u16>(), any::<u64>()).prop_map(|(generation, micros)| {
            ExtendedSegment::MonotonicClock { generation, micros }
        }),
        (any::<u16>(), proptest::collection::vec(any::<u8>(), 0..16))
            .prop_map(|(flags, data)| ExtendedSegment::Random { flags, data }),
        ".{0,24}".prop_map(ExtendedSegment::Notice),
        (
            any::<u32>().prop_filter("not a typed id", |i| !known_ext_ids().contains(i)),
            proptest::collection::vec(any::<u8>(), 0..16)
        )
            .prop_map(|(id, data)| ExtendedSegment::Unknown { id, data }),
    ]
}

fn unknown_opcodes() -> impl Strategy<Value = Vec<UnknownOpcode>> {
    proptest::collection::vec(
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..10)),
        5,
    )
    .prop_map(|slots| {
        slots
            .into_iter()
            .enumerate()
            .filter_map(|(i, data)| {
                data.map(|data| UnknownOpcode {
                    flag: 0x0400 << i,
                    data,
                })
            })
            .collect()
    })
}

prop_compose! {
    fn packet()(
        message_id in id(),
        reply_requested in any::<bool>(),
        in_reply_to in proptest::option::of(id()),
        rtt in proptest::option::of(any::<u32>()),
        seen in ids(),
        never in ids(),
        investigate in ids(),
        courtesy in ids(),
        mac in proptest::option::of((any::<u16>(), proptest::collection::vec(any::<u8>(), 0..64))),
        latency in proptest::option::of(any::<u32>()),
        encrypted in proptest::option::of((any::<u16>(), proptest::collection::vec(any::<u8>(), 0..48))),
        unknown in unknown_opcodes(),
        ext in proptest::option::of(proptest::collection::vec(extended(), 0..5)),
    ) -> Packet {
        Packet {
            message_id,
            opcodes: Opcodes {
                reply_requested,
                in_reply_to,
                rtt_enclosed_us: rtt,
                investigation_seen: seen,
                investigation_never_received: never,
                please_investigate: investigate,
                courtesy_expiration: courtesy,
                mac: mac.map(|(digest_index, digest)| Mac { digest_index, digest }),
                host_latency_us: latency,
                encrypted: encrypted.map(|(method, data)| Encrypted { method, data }),
                unknown,
                extended: ext,
            },
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn decode_inverts_encode(p in packet(), min in 0usize..600) {
        let bytes = codec::encode(&p, min, MAX_DATAGRAM, None);
        prop_assert_eq!(bytes.len(), p.encoded_len(None).max(min));
        prop_assert_eq!(codec::decode(&bytes), Ok(p));
    }

    #[test]
    fn checksum_of_encoded_packet_verifies(p in packet(), min in 0usize..300) {
        let bytes = codec::encode(&p, min, MAX_DATAGRAM, None);
        let field = u16::from_be_bytes([bytes[2], bytes[3]]);
        prop_assert_ne!(field, 0);
        prop_assert_eq!(checksum_of_packet(&bytes), field);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        // Whatever decodes must re-encode to something that decodes the same.
        if let Ok(p) = codec::decode(&bytes) {
            let again = codec::encode(&p, 0, MAX_DATAGRAM, None);
            prop_assert_eq!(codec::decode(&again), Ok(p));
        }
    }

    #[test]
    fn arbitrary_bodies_with_valid_header_never_panic(
        flags in any::<u16>(),
        body in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        // Random bytes rarely pass magic and checksum; fix both so the
        // segment parser itself sees hostile input.
        let mut bytes = vec![0x32, 0x50, 0, 0, 1, 2, 3, 4, 5, 6];
        bytes.extend_from_slice(&flags.to_be_bytes());
        bytes.extend_from_slice(&body);
        let sum = checksum_of_packet(&bytes);
        bytes[2..4].copy_from_slice(&sum.to_be_bytes());
        if let Ok(p) = codec::decode(&bytes) {
            let again = codec::encode(&p, 0, MAX_DATAGRAM, None);
            prop_assert_eq!(codec::decode(&again), Ok(p));
        }
    }

    #[test]
    fn truncation_is_an_error_or_only_cuts_padding(p in packet(), min in 0usize..200) {
        let bytes = codec::encode(&p, min, MAX_DATAGRAM, None);
        let content = p.encoded_len(None);
        for cut in 0..bytes.len() {
            match codec::decode(&bytes[..cut]) {
                Err(_) => {}
                // Cutting an even number of zero padding bytes leaves the
                // one's complement sum unchanged: the packet is still whole.
                Ok(q) => {
                    prop_assert!(cut >= content, "cut {} inside content {}", cut, content);
                    prop_assert_eq!(&q, &p);
                }
            }
        }
    }

    #[test]
    fn encode_respects_max_size(p in packet(), max in 0usize..400, pad in proptest::option::of(0usize..600)) {
        let bytes = codec::encode(&p, 128, max, pad);
        prop_assert!(bytes.len() <= max.max(HEADER_LEN));
        prop_assert!(codec::decode(&bytes).is_ok());
    }

    #[test]
    fn mac_detects_any_flipped_byte(p in packet(), digest in 0usize..4, at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let auth = Auth::new(Digest::ALL[digest], "k3y");
        let bytes = codec::encode_authenticated(&p, 128, MAX_DATAGRAM, None, &auth);
        let decoded = codec::decode_authenticated(&bytes, &auth);
        prop_assert!(decoded.is_ok(), "{:?}", decoded);
        let mut tampered = bytes.clone();
        let i = at.index(tampered.len());
        tampered[i] ^= 1 << bit;
        // Recompute the checksum so only the MAC can catch the change.
        tampered[2] = 0;
        tampered[3] = 0;
        let sum = checksum_of_packet(&tampered);
        tampered[2..4].copy_from_slice(&sum.to_be_bytes());
        // Flips inside the checksum field were just overwritten.
        if !(2..4).contains(&i) {
            prop_assert!(codec::decode_authenticated(&tampered, &auth).is_err());
        }
    }
}
