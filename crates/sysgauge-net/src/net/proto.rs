//! The wire format of the net service (`sysgauge listen --serve`, or the
//! in-process loopback service): a fixed 16-byte hello and reply on TCP,
//! and a 16-byte header on every UDP datagram.
//!
//! The format is deliberately tiny and fixed-size so that both ends parse it
//! without allocation, a wrong service (an HTTP server, iperf3, an old
//! sysgauge) is recognised from its first bytes, and a version mismatch is
//! reported as such instead of as a garbled measurement. All integers are
//! big-endian.
//!
//! Version 2 authenticates the client: every hello and every UDP datagram
//! carries an HMAC-SHA256 tag computed with a key shared by both ends
//! (`sysgauge listen --serve-key`, `sysgauge net --peer-key`, or the
//! `SYSGAUGE_NET_KEY` environment variable). Without a key the tag is all
//! zeros, and a keyless service (allowed on loopback binds only) accepts
//! only that; a keyed service accepts only its key's tag. So a service on a
//! real network is not an open reflector: a datagram without the tag is
//! dropped, never reflected. The 2ping HMAC code (sysgauge-twoping's
//! `auth`) is not reused: it signs 2ping's segment layout; this is a plain
//! HMAC over a fixed header, done here with the same `hmac`/`sha2` crates.
//!
//! TCP hello (client → service), 48 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `SGNT` |
//! | 4 | 2 | protocol version ([`VERSION`]) |
//! | 6 | 1 | mode: 1 info, 2 sink, 3 connect |
//! | 7 | 1 | zero |
//! | 8 | 8 | argument: for sink, the length of the first block |
//! | 16 | 32 | HMAC-SHA256(key, "sysgauge-net-hello" ‖ bytes 0..16), or zeros without a key |
//!
//! TCP reply (service → client), 16 bytes: magic `SGNT`, the service's
//! version, a status (0 ok, 1 unsupported version, 2 unknown mode, 3 busy,
//! 4 not authenticated), a zero byte, and a value: the UDP reflector's port
//! for info, the bytes received for sink (sent after the last byte of a
//! block arrived), 0 for connect. A sink connection may carry more blocks
//! after the first, each an 8-byte length followed by that many bytes and
//! confirmed in the same way; a zero length or the end of the stream ends
//! it. After a connect reply the service closes the connection first, so
//! the TIME_WAIT state lands on its side and a client making thousands of
//! connections does not run out of local ports.
//!
//! UDP datagram (both directions), header of 32 bytes: magic `SGNU`,
//! version, two zero bytes, a 64-bit sequence number, then a 16-byte tag:
//! HMAC-SHA256(key, "sysgauge-net-udp" ‖ bytes 0..16 ‖ the datagram's
//! length as u32), truncated to 16 bytes, or zeros without a key; then
//! padding to the datagram's size. The reflector sends a valid datagram
//! back unchanged to its source, and drops anything else, so it never
//! answers junk or forged datagrams and never sends more bytes than it
//! received. A captured datagram can be replayed (the tag does not cover
//! the source address, which NAT rewrites); the reflector's per-source
//! rate limit bounds what a replay can do.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Protocol version spoken by this sysgauge (2: authenticated hello and
/// datagrams).
pub const VERSION: u16 = 2;
/// Magic of TCP hellos and replies.
pub const TCP_MAGIC: [u8; 4] = *b"SGNT";
/// Magic of UDP datagrams.
pub const UDP_MAGIC: [u8; 4] = *b"SGNU";
/// Size of a reply, and of a hello without its tag.
pub const MSG_LEN: usize = 16;
/// Size of the hello's tag (a full HMAC-SHA256).
pub const HELLO_TAG_LEN: usize = 32;
/// Size of a hello.
pub const HELLO_LEN: usize = MSG_LEN + HELLO_TAG_LEN;
/// Size of the UDP datagram's tag (HMAC-SHA256 truncated).
pub const UDP_TAG_LEN: usize = 16;
/// Size of the UDP header; the smallest datagram the reflector answers.
pub const UDP_HEADER_LEN: usize = 16 + UDP_TAG_LEN;
/// Domain separation of the two tags, so one is never valid as the other.
const HELLO_CONTEXT: &[u8] = b"sysgauge-net-hello";
const UDP_CONTEXT: &[u8] = b"sysgauge-net-udp";

/// The key shared by a service and its clients. Never printed.
#[derive(Clone)]
pub struct ServiceKey {
    /// The keyed HMAC state, cloned per message so the key schedule is
    /// computed once, not per datagram.
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for ServiceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceKey(<redacted>)")
    }
}

impl ServiceKey {
    /// A key from its bytes (the text given on the command line). `None`
    /// for an empty key: "no key" must be said explicitly, never by an
    /// empty variable.
    pub fn new(key: &[u8]) -> Option<ServiceKey> {
        if key.is_empty() {
            return None;
        }
        // HMAC takes keys of any length; this cannot fail.
        let mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).ok()?;
        Some(ServiceKey { mac })
    }

    fn tag(&self, context: &[u8], parts: &[&[u8]]) -> [u8; 32] {
        let mut m = self.mac.clone();
        m.update(context);
        for p in parts {
            m.update(p);
        }
        let mut out = [0u8; 32];
        out.copy_from_slice(&m.finalize().into_bytes());
        out
    }
}

/// Compares in time independent of where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
/// Largest UDP payload over IPv4.
pub const MAX_UDP_SIZE: usize = 65_507;
/// Default port of the service (next to 2ping's 15998).
pub const DEFAULT_SERVICE_PORT: u16 = 15_999;

/// What a TCP connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ask for the version and the UDP reflector's port.
    Info,
    /// Send blocks of bytes (the first of `argument` bytes); the service
    /// counts and confirms each.
    Sink,
    /// Connect, exchange hello and reply, close (connection-rate test).
    Connect,
}

impl Mode {
    fn code(self) -> u8 {
        match self {
            Mode::Info => 1,
            Mode::Sink => 2,
            Mode::Connect => 3,
        }
    }

    fn from_code(c: u8) -> Option<Mode> {
        match c {
            1 => Some(Mode::Info),
            2 => Some(Mode::Sink),
            3 => Some(Mode::Connect),
            _ => None,
        }
    }
}

/// Outcome the service reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyStatus {
    /// Accepted.
    Ok,
    /// The hello's version is not the service's.
    UnsupportedVersion,
    /// The hello's mode is unknown.
    UnknownMode,
    /// Too many connections at once (in all, or from this source).
    Busy,
    /// The hello's tag is not the service key's (or the service has a key
    /// and the client none, or the reverse).
    Unauthenticated,
}

impl ReplyStatus {
    fn code(self) -> u8 {
        match self {
            ReplyStatus::Ok => 0,
            ReplyStatus::UnsupportedVersion => 1,
            ReplyStatus::UnknownMode => 2,
            ReplyStatus::Busy => 3,
            ReplyStatus::Unauthenticated => 4,
        }
    }

    fn from_code(c: u8) -> Option<ReplyStatus> {
        match c {
            0 => Some(ReplyStatus::Ok),
            1 => Some(ReplyStatus::UnsupportedVersion),
            2 => Some(ReplyStatus::UnknownMode),
            3 => Some(ReplyStatus::Busy),
            4 => Some(ReplyStatus::Unauthenticated),
            _ => None,
        }
    }
}

/// A client's hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub version: u16,
    pub mode: Mode,
    pub argument: u64,
}

/// Why a hello could not be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelloError {
    /// Not our magic: not a sysgauge client at all.
    BadMagic,
    /// Our magic, another version (whatever the mode says).
    Version(u16),
    /// Our magic and version, but the tag is not the service key's.
    Unauthenticated,
    /// Our magic and version, unknown mode.
    UnknownMode(u8),
}

/// A service's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub version: u16,
    pub status: ReplyStatus,
    pub value: u64,
}

/// Why a reply is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyError {
    /// Not our magic: the peer is some other service.
    NotOurs([u8; MSG_LEN]),
    /// Our magic, a status this version does not know.
    UnknownStatus(u8),
}

/// Writes the 16 bytes a hello and a reply begin with: magic, version,
/// the mode or status code, a zero byte, the argument or value.
fn put_head(b: &mut [u8], version: u16, code: u8, value: u64) {
    b[0..4].copy_from_slice(&TCP_MAGIC);
    b[4..6].copy_from_slice(&version.to_be_bytes());
    b[6] = code;
    b[8..16].copy_from_slice(&value.to_be_bytes());
}

/// The version in a hello's or reply's first 16 bytes.
fn head_version(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[4], b[5]])
}

/// The argument or value in a hello's or reply's first 16 bytes.
fn head_value(b: &[u8]) -> u64 {
    u64::from_be_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]])
}

impl Hello {
    pub fn new(mode: Mode, argument: u64) -> Hello {
        Hello {
            version: VERSION,
            mode,
            argument,
        }
    }

    /// The 48-byte hello, tagged with `key` (zeros without one).
    pub fn encode(&self, key: Option<&ServiceKey>) -> [u8; HELLO_LEN] {
        let mut b = [0u8; HELLO_LEN];
        put_head(&mut b, self.version, self.mode.code(), self.argument);
        if let Some(k) = key {
            let tag = k.tag(HELLO_CONTEXT, &[&b[..MSG_LEN]]);
            b[MSG_LEN..].copy_from_slice(&tag);
        }
        b
    }

    /// Parses a hello and checks its tag against `key` (a keyless service
    /// accepts only the all-zero tag). A version other than ours is
    /// reported before the tag and the mode are looked at: other versions
    /// lay the hello out differently.
    pub fn decode(b: &[u8; HELLO_LEN], key: Option<&ServiceKey>) -> Result<Hello, HelloError> {
        if b[0..4] != TCP_MAGIC {
            return Err(HelloError::BadMagic);
        }
        let version = head_version(b);
        if version != VERSION {
            return Err(HelloError::Version(version));
        }
        let expected = match key {
            Some(k) => k.tag(HELLO_CONTEXT, &[&b[..MSG_LEN]]),
            None => [0u8; HELLO_TAG_LEN],
        };
        if !same(&b[MSG_LEN..], &expected) {
            return Err(HelloError::Unauthenticated);
        }
        let mode = Mode::from_code(b[6]).ok_or(HelloError::UnknownMode(b[6]))?;
        let argument = head_value(b);
        Ok(Hello {
            version,
            mode,
            argument,
        })
    }
}

impl Reply {
    pub fn new(status: ReplyStatus, value: u64) -> Reply {
        Reply {
            version: VERSION,
            status,
            value,
        }
    }

    pub fn encode(&self) -> [u8; MSG_LEN] {
        let mut b = [0u8; MSG_LEN];
        put_head(&mut b, self.version, self.status.code(), self.value);
        b
    }

    pub fn decode(b: &[u8; MSG_LEN]) -> Result<Reply, ReplyError> {
        if b[0..4] != TCP_MAGIC {
            return Err(ReplyError::NotOurs(*b));
        }
        let version = head_version(b);
        let status = ReplyStatus::from_code(b[6]).ok_or(ReplyError::UnknownStatus(b[6]))?;
        let value = head_value(b);
        Ok(Reply {
            version,
            status,
            value,
        })
    }
}

fn udp_tag(key: &ServiceKey, header: &[u8], len: usize) -> [u8; 32] {
    let len = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    key.tag(UDP_CONTEXT, &[header, &len])
}

/// Writes the UDP header with sequence number `seq`, tagged with `key` for
/// a datagram of `buf.len()` bytes, into `buf` (which must hold at least
/// [`UDP_HEADER_LEN`] bytes; shorter buffers are left alone).
pub fn put_udp_header(buf: &mut [u8], seq: u64, key: Option<&ServiceKey>) {
    let len = buf.len();
    if let Some(h) = buf.get_mut(..UDP_HEADER_LEN) {
        h[0..4].copy_from_slice(&UDP_MAGIC);
        h[4..6].copy_from_slice(&VERSION.to_be_bytes());
        h[6..8].copy_from_slice(&[0, 0]);
        h[8..16].copy_from_slice(&seq.to_be_bytes());
        let tag = match key {
            Some(k) => udp_tag(k, &h[..16], len),
            None => [0u8; 32],
        };
        h[16..UDP_HEADER_LEN].copy_from_slice(&tag[..UDP_TAG_LEN]);
    }
}

/// The sequence number of a datagram of our version, else `None`. The tag
/// is not checked: a client reading its own datagrams back uses this; the
/// reflector uses [`udp_authentic`].
pub fn udp_seq(buf: &[u8]) -> Option<u64> {
    let h = buf.get(..UDP_HEADER_LEN)?;
    if h[0..4] != UDP_MAGIC || h[4..6] != VERSION.to_be_bytes() {
        return None;
    }
    Some(u64::from_be_bytes([
        h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15],
    ]))
}

/// Whether `buf` is a datagram of our version whose tag is `key`'s (all
/// zeros for a keyless service).
pub fn udp_authentic(buf: &[u8], key: Option<&ServiceKey>) -> bool {
    if udp_seq(buf).is_none() {
        return false;
    }
    let got = &buf[16..UDP_HEADER_LEN];
    match key {
        Some(k) => same(got, &udp_tag(k, &buf[..16], buf.len())[..UDP_TAG_LEN]),
        None => got.iter().all(|&b| b == 0),
    }
}

/// Text for the first bytes of something that is not our protocol, for
/// error messages: printable ASCII as text, else hex.
pub fn describe_foreign(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(MSG_LEN)];
    if !shown.is_empty()
        && shown
            .iter()
            .all(|b| b.is_ascii_graphic() || *b == b' ' || *b == b'\r' || *b == b'\n')
    {
        format!("{:?}", String::from_utf8_lossy(shown))
    } else {
        sysgauge_family::util::hex(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(k: &str) -> ServiceKey {
        ServiceKey::new(k.as_bytes()).expect("a non-empty key")
    }

    #[test]
    fn hello_round_trip_and_errors() {
        for mode in [Mode::Info, Mode::Sink, Mode::Connect] {
            let h = Hello::new(mode, 123_456_789_000);
            assert_eq!(Hello::decode(&h.encode(None), None), Ok(h));
            let k = key("s3cret");
            assert_eq!(Hello::decode(&h.encode(Some(&k)), Some(&k)), Ok(h));
        }
        let mut b = Hello::new(Mode::Sink, 1).encode(None);
        b[0] = b'X';
        assert_eq!(Hello::decode(&b, None), Err(HelloError::BadMagic));
        let mut b = Hello::new(Mode::Sink, 1).encode(None);
        b[5] = 9;
        b[6] = 77;
        assert_eq!(Hello::decode(&b, None), Err(HelloError::Version(9)));
        let mut b = Hello::new(Mode::Sink, 1).encode(None);
        b[6] = 77;
        assert_eq!(Hello::decode(&b, None), Err(HelloError::UnknownMode(77)));
    }

    #[test]
    fn hello_auth_accepts_the_key_and_rejects_the_rest() {
        let (k, other) = (key("s3cret"), key("s3creT"));
        let h = Hello::new(Mode::Info, 0);
        let bad = Err(HelloError::Unauthenticated);
        // No key, a wrong key, a key against a keyless service.
        assert_eq!(Hello::decode(&h.encode(None), Some(&k)), bad);
        assert_eq!(Hello::decode(&h.encode(Some(&other)), Some(&k)), bad);
        assert_eq!(Hello::decode(&h.encode(Some(&k)), None), bad);
        // The tag covers every header byte: a changed argument is refused.
        let mut b = Hello::new(Mode::Sink, 10).encode(Some(&k));
        b[15] = 11;
        assert_eq!(Hello::decode(&b, Some(&k)), bad);
        assert!(ServiceKey::new(b"").is_none());
        assert!(!format!("{k:?}").contains("s3cret"));
    }

    #[test]
    fn reply_round_trip_and_foreign() {
        for status in [
            ReplyStatus::Ok,
            ReplyStatus::UnsupportedVersion,
            ReplyStatus::UnknownMode,
            ReplyStatus::Busy,
            ReplyStatus::Unauthenticated,
        ] {
            let r = Reply::new(status, 42);
            assert_eq!(Reply::decode(&r.encode()), Ok(r));
        }
        let http = *b"HTTP/1.1 400 Bad";
        assert_eq!(Reply::decode(&http), Err(ReplyError::NotOurs(http)));
        assert_eq!(describe_foreign(&http), "\"HTTP/1.1 400 Bad\"");
        assert_eq!(describe_foreign(&[0, 1, 0xff]), "0001ff");
        let mut b = Reply::new(ReplyStatus::Ok, 0).encode();
        b[6] = 200;
        assert_eq!(Reply::decode(&b), Err(ReplyError::UnknownStatus(200)));
    }

    #[test]
    fn udp_header_and_tag() {
        let k = key("s3cret");
        let mut buf = [0u8; 64];
        put_udp_header(&mut buf, 7, Some(&k));
        assert_eq!(udp_seq(&buf), Some(7));
        assert!(udp_authentic(&buf, Some(&k)));
        assert!(!udp_authentic(&buf, None));
        assert!(!udp_authentic(&buf, Some(&key("other"))));
        // The tag covers the length: the same header on a longer datagram
        // is not authentic.
        let mut longer = [0u8; 65];
        longer[..64].copy_from_slice(&buf);
        assert!(!udp_authentic(&longer, Some(&k)));
        let mut plain = [0u8; 64];
        put_udp_header(&mut plain, 7, None);
        assert!(udp_authentic(&plain, None));
        assert!(!udp_authentic(&plain, Some(&k)));
        assert_eq!(udp_seq(&buf[..31]), None);
        buf[4] = 1;
        assert_eq!(udp_seq(&buf), None);
        let mut short = [0u8; 4];
        put_udp_header(&mut short, 1, None);
        assert_eq!(short, [0u8; 4]);
    }

    proptest! {
        #[test]
        fn hello_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), HELLO_LEN)) {
            let mut b = [0u8; HELLO_LEN];
            b.copy_from_slice(&bytes);
            if let Ok(h) = Hello::decode(&b, None) {
                prop_assert_eq!(h.encode(None), bytes_with_zero_pad(b));
            }
            let mut r = [0u8; MSG_LEN];
            r.copy_from_slice(&bytes[..MSG_LEN]);
            let _ = Reply::decode(&r);
        }

        #[test]
        fn udp_seq_round_trips(seq in any::<u64>(), len in 32usize..200) {
            let k = key("k");
            let mut buf = vec![0u8; len];
            put_udp_header(&mut buf, seq, Some(&k));
            prop_assert_eq!(udp_seq(&buf), Some(seq));
            prop_assert!(udp_authentic(&buf, Some(&k)));
        }
    }

    /// A decoded hello re-encodes with byte 7 zeroed (it is ignored).
    fn bytes_with_zero_pad(mut b: [u8; HELLO_LEN]) -> [u8; HELLO_LEN] {
        b[7] = 0;
        b
    }
}
