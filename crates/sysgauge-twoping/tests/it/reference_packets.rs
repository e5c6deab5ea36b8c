//! Packets encoded by the reference 2ping itself (its Python encoder, see
//! `tests/fixtures/gen_reference_packets.py`): we must decode them, verify their
//! HMACs for every digest, and re-encode them byte for byte. This pins the
//! precise MAC rule (whole payload incl. padding, checksum and digest zeroed,
//! MAC before checksum) without needing the program at test time.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use sysgauge_twoping::auth::{Auth, Digest};
use sysgauge_twoping::codec::{self, DecodeError, ExtendedSegment};

struct Fixture {
    digest: Option<Digest>,
    key: String,
    bytes: Vec<u8>,
}

fn fixtures() -> Vec<Fixture> {
    let text = include_str!("../fixtures/reference-packets.txt");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 4, "fixture line {line:?}");
        let digest = match fields[1] {
            "-" => None,
            name => Some(name.parse::<Digest>().expect("known digest in fixture")),
        };
        let hex = fields[3];
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex fixture"))
            .collect();
        out.push(Fixture {
            digest,
            key: fields[2].to_string(),
            bytes,
        });
    }
    out
}

#[test]
fn reference_packets_decode_verify_and_re_encode() {
    let all = fixtures();
    assert_eq!(all.len(), 5, "one plain and four authenticated fixtures");
    for f in all {
        let packet = codec::decode(&f.bytes).expect("reference packet decodes");
        assert!(packet.opcodes.reply_requested);
        assert_eq!(packet.opcodes.in_reply_to, Some([1, 2, 3, 4, 5, 6]));
        assert_eq!(packet.opcodes.host_latency_us, Some(1234));
        assert_eq!(
            packet.opcodes.extended,
            Some(vec![ExtendedSegment::ProgramVersion(
                "2ping 4.5 - fixture".into()
            )])
        );
        assert_eq!(f.bytes.len(), 128);
        match f.digest {
            None => {
                assert_eq!(codec::encode(&packet, 128, 512, None), f.bytes);
            }
            Some(digest) => {
                let auth = Auth::new(digest, f.key.as_bytes());
                let verified = codec::decode_authenticated(&f.bytes, &auth)
                    .unwrap_or_else(|e| panic!("{digest}: reference MAC must verify: {e}"));
                assert_eq!(verified, packet);
                // Our signer must produce the very same bytes.
                let ours = codec::encode_authenticated(&packet, 128, 512, None, &auth);
                assert_eq!(
                    ours, f.bytes,
                    "{digest}: our MAC differs from the reference"
                );
                let wrong = Auth::new(digest, b"another key".to_vec());
                assert_eq!(
                    codec::decode_authenticated(&f.bytes, &wrong),
                    Err(DecodeError::MacInvalid)
                );
                let other = Digest::ALL
                    .into_iter()
                    .find(|d| *d != digest)
                    .expect("four digests");
                assert!(matches!(
                    codec::decode_authenticated(&f.bytes, &Auth::new(other, f.key.as_bytes())),
                    Err(DecodeError::MacDigestMismatch { .. })
                ));
            }
        }
    }
}

#[test]
fn unauthenticated_packet_is_refused_when_auth_is_required() {
    let plain = fixtures().remove(0);
    let auth = Auth::new(Digest::HmacMd5, "k");
    assert_eq!(
        codec::decode_authenticated(&plain.bytes, &auth),
        Err(DecodeError::MacMissing)
    );
}
