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
//! TCP hello (client → service), 16 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `SGNT` |
//! | 4 | 2 | protocol version ([`VERSION`]) |
//! | 6 | 1 | mode: 1 info, 2 sink, 3 connect |
//! | 7 | 1 | zero |
//! | 8 | 8 | argument: for sink, the length of the first block |
//!
//! TCP reply (service → client), 16 bytes: magic `SGNT`, the service's
//! version, a status (0 ok, 1 unsupported version, 2 unknown mode, 3 busy),
//! a zero byte, and a value: the UDP reflector's port for info, the bytes
//! received for sink (sent after the last byte of a block arrived), 0 for
//! connect. A sink connection may carry more blocks after the first, each
//! an 8-byte length followed by that many bytes and confirmed in the same
//! way; a zero length or the end of the stream ends it.
//! After a connect reply the service closes the connection first, so the
//! TIME_WAIT state lands on its side and a client making thousands of
//! connections does not run out of local ports.
//!
//! UDP datagram (both directions): magic `SGNU`, version, two zero bytes, a
//! 64-bit sequence number, then padding to the datagram's size. The
//! reflector sends a valid datagram back unchanged to its source, and drops
//! anything else, so it never answers junk and never sends more bytes than
//! it received.

/// Protocol version spoken by this sysgauge.
pub const VERSION: u16 = 1;
/// Magic of TCP hellos and replies.
pub const TCP_MAGIC: [u8; 4] = *b"SGNT";
/// Magic of UDP datagrams.
pub const UDP_MAGIC: [u8; 4] = *b"SGNU";
/// Size of a hello and of a reply.
pub const MSG_LEN: usize = 16;
/// Size of the UDP header; the smallest datagram the reflector answers.
pub const UDP_HEADER_LEN: usize = 16;
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
    /// Too many connections at once.
    Busy,
}

impl ReplyStatus {
    fn code(self) -> u8 {
        match self {
            ReplyStatus::Ok => 0,
            ReplyStatus::UnsupportedVersion => 1,
            ReplyStatus::UnknownMode => 2,
            ReplyStatus::Busy => 3,
        }
    }

    fn from_code(c: u8) -> Option<ReplyStatus> {
        match c {
            0 => Some(ReplyStatus::Ok),
            1 => Some(ReplyStatus::UnsupportedVersion),
            2 => Some(ReplyStatus::UnknownMode),
            3 => Some(ReplyStatus::Busy),
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

impl Hello {
    pub fn new(mode: Mode, argument: u64) -> Hello {
        Hello {
            version: VERSION,
            mode,
            argument,
        }
    }

    pub fn encode(&self) -> [u8; MSG_LEN] {
        let mut b = [0u8; MSG_LEN];
        b[0..4].copy_from_slice(&TCP_MAGIC);
        b[4..6].copy_from_slice(&self.version.to_be_bytes());
        b[6] = self.mode.code();
        b[8..16].copy_from_slice(&self.argument.to_be_bytes());
        b
    }

    /// Parses a hello. A version other than ours is reported before the
    /// mode is looked at: modes may mean other things in other versions.
    pub fn decode(b: &[u8; MSG_LEN]) -> Result<Hello, HelloError> {
        if b[0..4] != TCP_MAGIC {
            return Err(HelloError::BadMagic);
        }
        let version = u16::from_be_bytes([b[4], b[5]]);
        if version != VERSION {
            return Err(HelloError::Version(version));
        }
        let mode = Mode::from_code(b[6]).ok_or(HelloError::UnknownMode(b[6]))?;
        let argument = u64::from_be_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
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
        b[0..4].copy_from_slice(&TCP_MAGIC);
        b[4..6].copy_from_slice(&self.version.to_be_bytes());
        b[6] = self.status.code();
        b[8..16].copy_from_slice(&self.value.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; MSG_LEN]) -> Result<Reply, ReplyError> {
        if b[0..4] != TCP_MAGIC {
            return Err(ReplyError::NotOurs(*b));
        }
        let version = u16::from_be_bytes([b[4], b[5]]);
        let status = ReplyStatus::from_code(b[6]).ok_or(ReplyError::UnknownStatus(b[6]))?;
        let value = u64::from_be_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
        Ok(Reply {
            version,
            status,
            value,
        })
    }
}

/// Writes the UDP header with sequence number `seq` into `buf` (which must
/// hold at least [`UDP_HEADER_LEN`] bytes; shorter buffers are left alone).
pub fn put_udp_header(buf: &mut [u8], seq: u64) {
    if let Some(h) = buf.get_mut(..UDP_HEADER_LEN) {
        h[0..4].copy_from_slice(&UDP_MAGIC);
        h[4..6].copy_from_slice(&VERSION.to_be_bytes());
        h[6..8].copy_from_slice(&[0, 0]);
        h[8..16].copy_from_slice(&seq.to_be_bytes());
    }
}

/// The sequence number of a valid datagram of our version, else `None`.
pub fn udp_seq(buf: &[u8]) -> Option<u64> {
    let h = buf.get(..UDP_HEADER_LEN)?;
    if h[0..4] != UDP_MAGIC || h[4..6] != VERSION.to_be_bytes() {
        return None;
    }
    Some(u64::from_be_bytes([
        h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15],
    ]))
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
        crate::util::hex(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hello_round_trip_and_errors() {
        for mode in [Mode::Info, Mode::Sink, Mode::Connect] {
            let h = Hello::new(mode, 123_456_789_000);
            assert_eq!(Hello::decode(&h.encode()), Ok(h));
        }
        let mut b = Hello::new(Mode::Sink, 1).encode();
        b[0] = b'X';
        assert_eq!(Hello::decode(&b), Err(HelloError::BadMagic));
        let mut b = Hello::new(Mode::Sink, 1).encode();
        b[5] = 9;
        b[6] = 77;
        assert_eq!(Hello::decode(&b), Err(HelloError::Version(9)));
        let mut b = Hello::new(Mode::Sink, 1).encode();
        b[6] = 77;
        assert_eq!(Hello::decode(&b), Err(HelloError::UnknownMode(77)));
    }

    #[test]
    fn reply_round_trip_and_foreign() {
        for status in [
            ReplyStatus::Ok,
            ReplyStatus::UnsupportedVersion,
            ReplyStatus::UnknownMode,
            ReplyStatus::Busy,
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
    fn udp_header() {
        let mut buf = [0u8; 64];
        put_udp_header(&mut buf, 7);
        assert_eq!(udp_seq(&buf), Some(7));
        assert_eq!(udp_seq(&buf[..15]), None);
        buf[4] = 1;
        assert_eq!(udp_seq(&buf), None);
        let mut short = [0u8; 4];
        put_udp_header(&mut short, 1);
        assert_eq!(short, [0u8; 4]);
    }

    proptest! {
        #[test]
        fn hello_decode_never_panics(bytes in proptest::array::uniform16(any::<u8>())) {
            if let Ok(h) = Hello::decode(&bytes) {
                prop_assert_eq!(h.encode(), bytes_with_zero_pad(bytes));
            }
            let _ = Reply::decode(&bytes);
        }

        #[test]
        fn udp_seq_round_trips(seq in any::<u64>(), len in 16usize..200) {
            let mut buf = vec![0u8; len];
            put_udp_header(&mut buf, seq);
            prop_assert_eq!(udp_seq(&buf), Some(seq));
        }
    }

    /// A decoded hello re-encodes with byte 7 zeroed (it is ignored).
    fn bytes_with_zero_pad(mut b: [u8; MSG_LEN]) -> [u8; MSG_LEN] {
        b[7] = 0;
        b
    }
}
