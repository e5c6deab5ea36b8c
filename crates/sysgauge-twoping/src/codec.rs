//! The 2ping wire format: typed packets, `encode` and `decode`.
//!
//! A packet is a 12-byte header (magic "2P", checksum, 48-bit message ID,
//! 16-bit opcode flags), then one length-prefixed segment per set flag, lowest
//! flag first, then padding whose content is ignored.
//!
//! Shape and choices:
//! - [`Opcodes`] has one typed field per known opcode, so a reader can never
//!   confuse two segments; set-but-unknown flags are kept as raw
//!   [`UnknownOpcode`]s so that nothing a peer sent is silently lost, and
//!   unknown extended segments likewise as [`ExtendedSegment::Unknown`].
//! - Decoding is total: every length is checked against the bytes actually
//!   present before anything is read or allocated, so a hostile length field
//!   can make a decode fail but never panic or allocate more than the
//!   datagram's own size. Segments longer than their known content are
//!   accepted and the excess ignored (forward compatibility, as the reference
//!   does); shorter ones are errors. A known extended segment whose content
//!   does not parse (wrong length, text that is not UTF-8) is kept as
//!   `Unknown`, so decode-then-encode reproduces the bytes.
//! - Encoding follows the reference's priorities when a packet does not fit
//!   in `max_size`: encrypted, MAC, reply requested, in reply to, RTT, the
//!   investigation lists (truncated to whole IDs), host latency, courtesy
//!   list, extended segments (whole segments dropped), then unknown opcodes.
//!   [`Encoded::complete`] says whether anything was cut, so callers that must
//!   not lose a part (a reply's "in reply to") can check.
//! - [`encode_into`] writes into a caller's buffer so that flood pinging
//!   reuses one allocation.

use crate::auth::Auth;
use crate::checksum;
use std::ops::Range;
use thiserror::Error;

/// A 48-bit message ID. IDs are pseudo-random, never counters (the protocol
/// requires it; see [`random_message_id`]).
pub type MessageId = [u8; 6];

/// The magic number "2P".
pub const MAGIC: [u8; 2] = [0x32, 0x50];
/// Length of the fixed header; also the smallest valid packet.
pub const HEADER_LEN: usize = 12;
/// Largest UDP payload over IPv4; a sensible ceiling for any size option.
pub const MAX_DATAGRAM: usize = 65_507;
/// The reference program's default minimum (padded) packet size.
pub const DEFAULT_MIN_PACKET_SIZE: usize = 128;
/// The reference program's default maximum packet size.
pub const DEFAULT_MAX_PACKET_SIZE: usize = 512;

/// Opcode flag values.
pub mod flag {
    /// 0x0001: the sender wants a reply.
    pub const REPLY_REQUESTED: u16 = 0x0001;
    /// 0x0002: this packet answers the enclosed message ID.
    pub const IN_REPLY_TO: u16 = 0x0002;
    /// 0x0004: the sender's measured RTT in microseconds (3rd leg).
    pub const RTT_ENCLOSED: u16 = 0x0004;
    /// 0x0008: investigation result, IDs the sender saw and answered.
    pub const INVESTIGATION_SEEN: u16 = 0x0008;
    /// 0x0010: investigation result, IDs the sender never received.
    pub const INVESTIGATION_NEVER_RECEIVED: u16 = 0x0010;
    /// 0x0020: please investigate these unanswered IDs.
    pub const PLEASE_INVESTIGATE: u16 = 0x0020;
    /// 0x0040: the peer may forget these IDs.
    pub const COURTESY_EXPIRATION: u16 = 0x0040;
    /// 0x0080: message authentication code.
    pub const MAC: u16 = 0x0080;
    /// 0x0100: time between receipt and reply, microseconds.
    pub const HOST_LATENCY: u16 = 0x0100;
    /// 0x0200: an encrypted packet inside a stub packet.
    pub const ENCRYPTED: u16 = 0x0200;
    /// 0x8000: a chain of extended segments.
    pub const EXTENDED: u16 = 0x8000;
    /// Flags this codec gives a typed field.
    pub const KNOWN: u16 = REPLY_REQUESTED
        | IN_REPLY_TO
        | RTT_ENCLOSED
        | INVESTIGATION_SEEN
        | INVESTIGATION_NEVER_RECEIVED
        | PLEASE_INVESTIGATE
        | COURTESY_EXPIRATION
        | MAC
        | HOST_LATENCY
        | ENCRYPTED
        | EXTENDED;
}

/// Extended segment IDs.
pub mod ext_id {
    /// Program version text, UTF-8 ("2PVN").
    pub const PROGRAM_VERSION: u32 = 0x3250_564e;
    /// Wall clock, u64 microseconds since the Unix epoch.
    pub const WALL_CLOCK: u32 = 0x64f6_9319;
    /// Monotonic clock: u16 generation, u64 microseconds.
    pub const MONOTONIC_CLOCK: u32 = 0x771d_8dfb;
    /// Random data: u16 flags, then the data.
    pub const RANDOM: u32 = 0x2ff6_ad68;
    /// Battery levels (kept as an unknown, raw segment).
    pub const BATTERY_LEVELS: u32 = 0x88a1_f7c7;
    /// Notice text, UTF-8.
    pub const NOTICE: u32 = 0xa837_b44e;
}

/// One 2ping packet, without its padding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packet {
    /// The packet's own ID.
    pub message_id: MessageId,
    /// The segments it carries.
    pub opcodes: Opcodes,
}

/// The typed segments of a packet; `None`/`false` means the flag is not set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Opcodes {
    /// 0x0001.
    pub reply_requested: bool,
    /// 0x0002: the message ID this packet answers.
    pub in_reply_to: Option<MessageId>,
    /// 0x0004: RTT in microseconds measured by the sender.
    pub rtt_enclosed_us: Option<u32>,
    /// 0x0008: investigated IDs the sender had received and answered.
    pub investigation_seen: Option<Vec<MessageId>>,
    /// 0x0010: investigated IDs the sender never received.
    pub investigation_never_received: Option<Vec<MessageId>>,
    /// 0x0020: IDs whose replies never came.
    pub please_investigate: Option<Vec<MessageId>>,
    /// 0x0040: IDs the receiver may forget.
    pub courtesy_expiration: Option<Vec<MessageId>>,
    /// 0x0080: MAC as found on the wire.
    pub mac: Option<Mac>,
    /// 0x0100: host processing latency in microseconds.
    pub host_latency_us: Option<u32>,
    /// 0x0200: opaque encrypted content.
    pub encrypted: Option<Encrypted>,
    /// Set flags this codec does not know (0x0400..=0x4000), ascending, at
    /// most one per flag; kept raw.
    pub unknown: Vec<UnknownOpcode>,
    /// 0x8000: extended segments in wire order.
    pub extended: Option<Vec<ExtendedSegment>>,
}

/// A MAC segment: digest type index and the digest bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mac {
    /// 1 HMAC-MD5, 2 HMAC-SHA1, 3 HMAC-SHA256, 4 HMAC-CRC32, 5 HMAC-SHA512.
    pub digest_index: u16,
    /// The digest as sent.
    pub digest: Vec<u8>,
}

/// An encrypted segment, kept opaque (we parse and skip it; method 1,
/// HKDF-AES256-CBC, is not implemented).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encrypted {
    /// Method index (1 = HKDF-AES256-CBC).
    pub method: u16,
    /// Session, IV and ciphertext as sent.
    pub data: Vec<u8>,
}

/// A set opcode flag this codec does not interpret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOpcode {
    /// The flag bit (one of 0x0400..=0x4000).
    pub flag: u16,
    /// Its segment data.
    pub data: Vec<u8>,
}

/// One extended segment (inside opcode 0x8000).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtendedSegment {
    /// 0x3250564e: program version text.
    ProgramVersion(String),
    /// 0x64f69319: microseconds since the Unix epoch.
    WallClock(u64),
    /// 0x771d8dfb: generation ID and microseconds since an arbitrary epoch.
    MonotonicClock {
        /// Changes when the epoch changes.
        generation: u16,
        /// Microseconds since the epoch.
        micros: u64,
    },
    /// 0x2ff6ad68: flags (0x0001 hardware RNG, 0x0002 OS RNG) and data.
    Random {
        /// Source flags.
        flags: u16,
        /// The random bytes.
        data: Vec<u8>,
    },
    /// 0xa837b44e: notice text.
    Notice(String),
    /// Any other segment, or a known one whose content did not parse.
    Unknown {
        /// Extended segment ID.
        id: u32,
        /// Raw data.
        data: Vec<u8>,
    },
}

impl ExtendedSegment {
    /// The segment's extended ID.
    pub fn id(&self) -> u32 {
        match self {
            ExtendedSegment::ProgramVersion(_) => ext_id::PROGRAM_VERSION,
            ExtendedSegment::WallClock(_) => ext_id::WALL_CLOCK,
            ExtendedSegment::MonotonicClock { .. } => ext_id::MONOTONIC_CLOCK,
            ExtendedSegment::Random { .. } => ext_id::RANDOM,
            ExtendedSegment::Notice(_) => ext_id::NOTICE,
            ExtendedSegment::Unknown { id, .. } => *id,
        }
    }

    /// Length of the segment's data (without its 6-byte header).
    pub fn data_len(&self) -> usize {
        match self {
            ExtendedSegment::ProgramVersion(t) | ExtendedSegment::Notice(t) => t.len(),
            ExtendedSegment::WallClock(_) => 8,
            ExtendedSegment::MonotonicClock { .. } => 10,
            ExtendedSegment::Random { data, .. } => 2 + data.len(),
            ExtendedSegment::Unknown { data, .. } => data.len(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            ExtendedSegment::ProgramVersion(t) | ExtendedSegment::Notice(t) => {
                out.extend_from_slice(t.as_bytes())
            }
            ExtendedSegment::WallClock(us) => out.extend_from_slice(&us.to_be_bytes()),
            ExtendedSegment::MonotonicClock { generation, micros } => {
                out.extend_from_slice(&generation.to_be_bytes());
                out.extend_from_slice(&micros.to_be_bytes());
            }
            ExtendedSegment::Random { flags, data } => {
                out.extend_from_slice(&flags.to_be_bytes());
                out.extend_from_slice(data);
            }
            ExtendedSegment::Unknown { data, .. } => out.extend_from_slice(data),
        }
    }

    fn parse(id: u32, data: &[u8]) -> ExtendedSegment {
        let unknown = || ExtendedSegment::Unknown {
            id,
            data: data.to_vec(),
        };
        match id {
            ext_id::PROGRAM_VERSION => std::str::from_utf8(data)
                .map(|t| ExtendedSegment::ProgramVersion(t.to_string()))
                .unwrap_or_else(|_| unknown()),
            ext_id::NOTICE => std::str::from_utf8(data)
                .map(|t| ExtendedSegment::Notice(t.to_string()))
                .unwrap_or_else(|_| unknown()),
            ext_id::WALL_CLOCK => match <[u8; 8]>::try_from(data) {
                Ok(b) => ExtendedSegment::WallClock(u64::from_be_bytes(b)),
                Err(_) => unknown(),
            },
            ext_id::MONOTONIC_CLOCK => match data {
                [g0, g1, rest @ ..] => match <[u8; 8]>::try_from(rest) {
                    Ok(b) => ExtendedSegment::MonotonicClock {
                        generation: u16::from_be_bytes([*g0, *g1]),
                        micros: u64::from_be_bytes(b),
                    },
                    Err(_) => unknown(),
                },
                _ => unknown(),
            },
            ext_id::RANDOM => match data {
                [f0, f1, rest @ ..] => ExtendedSegment::Random {
                    flags: u16::from_be_bytes([*f0, *f1]),
                    data: rest.to_vec(),
                },
                _ => unknown(),
            },
            _ => unknown(),
        }
    }
}

/// Why a datagram is not a usable 2ping packet.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer than the 12 header bytes.
    #[error("packet too short: {len} bytes, a 2ping header alone is 12")]
    TooShort {
        /// Bytes received.
        len: usize,
    },
    /// Not "2P".
    #[error("bad magic number {found:02x?}, expected [32, 50] (\"2P\")")]
    BadMagic {
        /// The first two bytes.
        found: [u8; 2],
    },
    /// The checksum field is non-zero and does not match the content.
    #[error("checksum mismatch: packet says {found:#06x}, content gives {computed:#06x}")]
    BadChecksum {
        /// Checksum in the packet.
        found: u16,
        /// Checksum computed over the packet.
        computed: u16,
    },
    /// A segment (or its length header) runs past the end of the datagram.
    #[error(
        "opcode {flag:#06x}: segment needs {needed} bytes at offset {offset}, packet has {len}"
    )]
    Truncated {
        /// The opcode flag being read.
        flag: u16,
        /// Where its header or data starts.
        offset: usize,
        /// Bytes needed from `offset`.
        needed: usize,
        /// Datagram length.
        len: usize,
    },
    /// A known segment is shorter than its content requires.
    #[error("opcode {flag:#06x}: malformed segment ({reason})")]
    BadSegment {
        /// The opcode flag.
        flag: u16,
        /// What is wrong.
        reason: &'static str,
    },
    /// The extended segment chain does not add up.
    #[error("extended segment at offset {offset}: {reason}")]
    BadExtended {
        /// Offset of the bad extended segment header.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// Authentication is required but the packet has no MAC.
    #[error("authentication required but the packet carries no MAC")]
    MacMissing,
    /// The packet's MAC uses another digest type.
    #[error("MAC digest type {found} does not match the configured type {expected}")]
    MacDigestMismatch {
        /// Our digest index.
        expected: u16,
        /// The packet's digest index.
        found: u16,
    },
    /// The MAC does not verify.
    #[error("MAC does not verify: wrong key, or the packet was altered")]
    MacInvalid,
}

/// Coarse classes of decode failures, for drop counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecodeErrorClass {
    /// Too short or a segment running past the end.
    Truncated,
    /// Checksum mismatch.
    BadChecksum,
    /// Missing, mismatched or invalid MAC.
    BadMac,
    /// Anything else: wrong magic, malformed segments.
    Malformed,
}

impl DecodeError {
    /// The counter class of this error.
    pub fn class(&self) -> DecodeErrorClass {
        match self {
            DecodeError::TooShort { .. } | DecodeError::Truncated { .. } => {
                DecodeErrorClass::Truncated
            }
            DecodeError::BadChecksum { .. } => DecodeErrorClass::BadChecksum,
            DecodeError::MacMissing
            | DecodeError::MacDigestMismatch { .. }
            | DecodeError::MacInvalid => DecodeErrorClass::BadMac,
            DecodeError::BadMagic { .. }
            | DecodeError::BadSegment { .. }
            | DecodeError::BadExtended { .. } => DecodeErrorClass::Malformed,
        }
    }
}

/// Decodes one datagram, verifying magic, checksum (0 = not computed, which
/// is accepted) and every length. Does not check a MAC; see
/// [`decode_authenticated`].
pub fn decode(bytes: &[u8]) -> Result<Packet, DecodeError> {
    decode_with_mac_range(bytes).map(|(packet, _)| packet)
}

/// Decodes one datagram and requires a valid MAC made with `auth`.
pub fn decode_authenticated(bytes: &[u8], auth: &Auth) -> Result<Packet, DecodeError> {
    let (packet, range) = decode_with_mac_range(bytes)?;
    let Some(mac) = &packet.opcodes.mac else {
        return Err(DecodeError::MacMissing);
    };
    let expected = auth.digest().index();
    if mac.digest_index != expected {
        return Err(DecodeError::MacDigestMismatch {
            expected,
            found: mac.digest_index,
        });
    }
    match range {
        Some(range) if auth.verify(bytes, range.clone()) => Ok(packet),
        _ => Err(DecodeError::MacInvalid),
    }
}

/// Reads a big-endian u16 at `at`; callers have checked the bounds.
fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn id_at(bytes: &[u8], at: usize) -> Option<MessageId> {
    bytes.get(at..at + 6)?.try_into().ok()
}

fn parse_id_list(flag: u16, data: &[u8]) -> Result<Vec<MessageId>, DecodeError> {
    let count = be16(data, 0).ok_or(DecodeError::BadSegment {
        flag,
        reason: "ID list shorter than its 2-byte count",
    })?;
    let count = usize::from(count);
    // The count is checked against the bytes present before allocating, so a
    // lying count cannot make us reserve more than the datagram holds.
    if data.len() - 2 < count * 6 {
        return Err(DecodeError::BadSegment {
            flag,
            reason: "ID list count exceeds the segment length",
        });
    }
    let mut ids = Vec::with_capacity(count);
    for i in 0..count {
        let id = id_at(data, 2 + i * 6).ok_or(DecodeError::BadSegment {
            flag,
            reason: "ID list count exceeds the segment length",
        })?;
        ids.push(id);
    }
    Ok(ids)
}

fn parse_extended(data: &[u8], base: usize) -> Result<Vec<ExtendedSegment>, DecodeError> {
    let mut segments = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let (Some(id), Some(len)) = (be32(data, pos), be16(data, pos + 4)) else {
            return Err(DecodeError::BadExtended {
                offset: base + pos,
                reason: "fewer than 6 bytes left for a segment header",
            });
        };
        let start = pos + 6;
        let end = start + usize::from(len);
        let Some(seg) = data.get(start..end) else {
            return Err(DecodeError::BadExtended {
                offset: base + pos,
                reason: "segment length runs past the extended opcode",
            });
        };
        segments.push(ExtendedSegment::parse(id, seg));
        pos = end;
    }
    Ok(segments)
}

/// Decodes and also returns where the MAC digest bytes are, for verification.
pub(crate) fn decode_with_mac_range(
    bytes: &[u8],
) -> Result<(Packet, Option<Range<usize>>), DecodeError> {
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::TooShort { len: bytes.len() });
    }
    if bytes[0..2] != MAGIC {
        return Err(DecodeError::BadMagic {
            found: [bytes[0], bytes[1]],
        });
    }
    let found = u16::from_be_bytes([bytes[2], bytes[3]]);
    if found != 0 {
        let computed = checksum::checksum_of_packet(bytes);
        if computed != found {
            return Err(DecodeError::BadChecksum { found, computed });
        }
    }
    let mut packet = Packet::default();
    packet.message_id.copy_from_slice(&bytes[4..10]);
    let flags = u16::from_be_bytes([bytes[10], bytes[11]]);
    let mut mac_range = None;
    let mut pos = HEADER_LEN;
    for bit in 0..16 {
        let flag = 1u16 << bit;
        if flags & flag == 0 {
            continue;
        }
        let Some(len) = be16(bytes, pos) else {
            return Err(DecodeError::Truncated {
                flag,
                offset: pos,
                needed: 2,
                len: bytes.len(),
            });
        };
        let start = pos + 2;
        let len = usize::from(len);
        let Some(data) = bytes.get(start..start + len) else {
            return Err(DecodeError::Truncated {
                flag,
                offset: start,
                needed: len,
                len: bytes.len(),
            });
        };
        let o = &mut packet.opcodes;
        let short = |reason| DecodeError::BadSegment { flag, reason };
        match flag {
            flag::REPLY_REQUESTED => o.reply_requested = true,
            flag::IN_REPLY_TO => {
                o.in_reply_to = Some(id_at(data, 0).ok_or(short("needs a 6-byte message ID"))?)
            }
            flag::RTT_ENCLOSED => {
                o.rtt_enclosed_us = Some(be32(data, 0).ok_or(short("needs a 4-byte RTT"))?)
            }
            flag::INVESTIGATION_SEEN => o.investigation_seen = Some(parse_id_list(flag, data)?),
            flag::INVESTIGATION_NEVER_RECEIVED => {
                o.investigation_never_received = Some(parse_id_list(flag, data)?)
            }
            flag::PLEASE_INVESTIGATE => o.please_investigate = Some(parse_id_list(flag, data)?),
            flag::COURTESY_EXPIRATION => o.courtesy_expiration = Some(parse_id_list(flag, data)?),
            flag::MAC => {
                let index = be16(data, 0).ok_or(short("needs a 2-byte digest index"))?;
                o.mac = Some(Mac {
                    digest_index: index,
                    digest: data[2..].to_vec(),
                });
                mac_range = Some(start + 2..start + len);
            }
            flag::HOST_LATENCY => {
                o.host_latency_us = Some(be32(data, 0).ok_or(short("needs a 4-byte latency"))?)
            }
            flag::ENCRYPTED => {
                let method = be16(data, 0).ok_or(short("needs a 2-byte method index"))?;
                o.encrypted = Some(Encrypted {
                    method,
                    data: data[2..].to_vec(),
                });
            }
            flag::EXTENDED => o.extended = Some(parse_extended(data, start)?),
            _ => o.unknown.push(UnknownOpcode {
                flag,
                data: data.to_vec(),
            }),
        }
        pos = start + len;
    }
    Ok((packet, mac_range))
}

/// Sizes and authentication for [`encode_into`].
#[derive(Debug, Clone, Copy)]
pub struct EncodeOptions<'a> {
    /// Pad to at least this many bytes when `pad_to` is `None`.
    pub min_size: usize,
    /// Never produce more than this many bytes (at least the 12-byte header
    /// is always produced); segments that do not fit are cut or left out.
    pub max_size: usize,
    /// Pad to this size instead of `min_size` (a reply matching its request's
    /// size). Padding never goes beyond `max_size`.
    pub pad_to: Option<usize>,
    /// Sign with this key: a MAC segment with this digest type is written
    /// (replacing any in the packet) and computed over the final bytes.
    pub auth: Option<&'a Auth>,
}

impl EncodeOptions<'_> {
    /// Unpadded, unsigned, up to the largest datagram.
    pub const UNPADDED: EncodeOptions<'static> = EncodeOptions {
        min_size: 0,
        max_size: MAX_DATAGRAM,
        pad_to: None,
        auth: None,
    };
}

/// What [`encode_into`] produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    /// Bytes written, padding included.
    pub len: usize,
    /// False if any segment was cut or left out to respect `max_size` (or the
    /// 65,535-byte segment limit), or a MAC could not be computed.
    pub complete: bool,
}

/// Encodes `packet` with zero padding and a computed checksum.
///
/// The result is padded to `pad_to` if given, else to `min_size`, but never
/// past `max_size`; content that does not fit in `max_size` is cut in the
/// reference's priority order (see the module doc).
pub fn encode(packet: &Packet, min_size: usize, max_size: usize, pad_to: Option<usize>) -> Vec<u8> {
    encode_to_vec(packet, min_size, max_size, pad_to, None)
}

/// Encodes and signs `packet` with `auth` (see [`encode`]).
pub fn encode_authenticated(
    packet: &Packet,
    min_size: usize,
    max_size: usize,
    pad_to: Option<usize>,
    auth: &Auth,
) -> Vec<u8> {
    encode_to_vec(packet, min_size, max_size, pad_to, Some(auth))
}

/// [`encode`] and [`encode_authenticated`]: [`encode_into`] a new buffer.
fn encode_to_vec(
    packet: &Packet,
    min_size: usize,
    max_size: usize,
    pad_to: Option<usize>,
    auth: Option<&Auth>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let options = EncodeOptions {
        min_size,
        max_size,
        pad_to,
        auth,
    };
    encode_into(packet, &options, &mut out);
    out
}

/// Largest data a segment can carry (its length field is 16 bits).
const MAX_SEGMENT: usize = u16::MAX as usize;
/// Most IDs a list segment can hold: 2 + 6n <= 65,535.
const MAX_LIST_IDS: usize = (MAX_SEGMENT - 2) / 6;

/// How much of each segment goes on the wire, decided before writing.
#[derive(Default)]
struct Plan {
    flags: u16,
    seen: usize,
    never_received: usize,
    investigate: usize,
    courtesy: usize,
    /// Byte budget for extended segments (whole segments, greedily).
    extended_budget: usize,
    unknown_mask: u16,
    complete: bool,
}

fn list_len(ids: usize) -> usize {
    2 + 6 * ids
}

/// Greedy selection of the extended segments that fit `budget` bytes:
/// returns the data length they take. Used identically when planning and
/// writing, so both agree on the selection.
fn extended_selection<'a>(
    segments: &'a [ExtendedSegment],
    budget: usize,
) -> impl Iterator<Item = &'a ExtendedSegment> + 'a {
    let mut used = 0usize;
    segments.iter().filter(move |seg| {
        let need = 6 + seg.data_len();
        if seg.data_len() <= MAX_SEGMENT && used + need <= budget {
            used += need;
            true
        } else {
            false
        }
    })
}

fn plan(packet: &Packet, max_size: usize, auth: Option<&Auth>) -> Plan {
    let o = &packet.opcodes;
    let mut p = Plan {
        complete: true,
        ..Plan::default()
    };
    let mut used = HEADER_LEN;
    // Room left for one more segment's data after its 2-byte length header;
    // None when not even the header fits.
    let room = |used: usize| (used + 2 <= max_size).then(|| (max_size - used - 2).min(MAX_SEGMENT));

    let fixed = |p: &mut Plan, used: &mut usize, present: bool, flag: u16, len: usize| {
        if !present {
            return;
        }
        if room(*used).is_some_and(|r| len <= r) {
            p.flags |= flag;
            *used += 2 + len;
        } else {
            p.complete = false;
        }
    };
    if let Some(enc) = &o.encrypted {
        fixed(&mut p, &mut used, true, flag::ENCRYPTED, 2 + enc.data.len());
    }
    match (auth, &o.mac) {
        (Some(a), _) => fixed(&mut p, &mut used, true, flag::MAC, 2 + a.digest().len()),
        (None, Some(m)) => fixed(&mut p, &mut used, true, flag::MAC, 2 + m.digest.len()),
        (None, None) => {}
    }
    for (present, flag, len) in [
        (o.reply_requested, flag::REPLY_REQUESTED, 0),
        (o.in_reply_to.is_some(), flag::IN_REPLY_TO, 6),
        (o.rtt_enclosed_us.is_some(), flag::RTT_ENCLOSED, 4),
    ] {
        fixed(&mut p, &mut used, present, flag, len);
    }

    let list = |p: &mut Plan, used: &mut usize, ids: Option<&Vec<MessageId>>, flag: u16| {
        let Some(ids) = ids else { return 0 };
        let Some(r) = room(*used).filter(|&r| r >= 2) else {
            p.complete = false;
            return 0;
        };
        let n = ids.len().min((r - 2) / 6).min(MAX_LIST_IDS);
        if n < ids.len() {
            p.complete = false;
        }
        p.flags |= flag;
        *used += 2 + list_len(n);
        n
    };
    let [seen, never_received, investigate] = [
        (o.investigation_seen.as_ref(), flag::INVESTIGATION_SEEN),
        (
            o.investigation_never_received.as_ref(),
            flag::INVESTIGATION_NEVER_RECEIVED,
        ),
        (o.please_investigate.as_ref(), flag::PLEASE_INVESTIGATE),
    ]
    .map(|(ids, flag)| list(&mut p, &mut used, ids, flag));
    (p.seen, p.never_received, p.investigate) = (seen, never_received, investigate);
    fixed(
        &mut p,
        &mut used,
        o.host_latency_us.is_some(),
        flag::HOST_LATENCY,
        4,
    );
    p.courtesy = list(
        &mut p,
        &mut used,
        o.courtesy_expiration.as_ref(),
        flag::COURTESY_EXPIRATION,
    );

    if let Some(segments) = &o.extended {
        match room(used) {
            Some(r) => {
                let taken: usize = extended_selection(segments, r)
                    .map(|s| 6 + s.data_len())
                    .sum();
                let count = extended_selection(segments, r).count();
                if count < segments.len() {
                    p.complete = false;
                }
                // An extended opcode whose segments all had to go is left
                // out, as the reference does; an originally empty one is kept
                // so that decode-then-encode reproduces it.
                if count > 0 || segments.is_empty() {
                    p.flags |= flag::EXTENDED;
                    p.extended_budget = r;
                    used += 2 + taken;
                }
            }
            None => p.complete = false,
        }
    }
    for u in &o.unknown {
        let valid =
            u.flag.count_ones() == 1 && u.flag & flag::KNOWN == 0 && p.unknown_mask & u.flag == 0;
        if valid && room(used).is_some_and(|r| u.data.len() <= r) {
            p.unknown_mask |= u.flag;
            used += 2 + u.data.len();
        } else {
            p.complete = false;
        }
    }
    p.flags |= p.unknown_mask;
    p
}

fn push_len(out: &mut Vec<u8>, len: usize) {
    // Every caller has bounded `len` by MAX_SEGMENT in `plan`.
    let len = u16::try_from(len).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_be_bytes());
}

fn push_list(out: &mut Vec<u8>, ids: Option<&Vec<MessageId>>, n: usize) {
    let ids = ids.map(|v| &v[..n.min(v.len())]).unwrap_or(&[]);
    push_len(out, list_len(ids.len()));
    let count = u16::try_from(ids.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&count.to_be_bytes());
    for id in ids {
        out.extend_from_slice(id);
    }
}

/// Encodes `packet` into `out` (cleared first), see [`encode`].
pub fn encode_into(packet: &Packet, options: &EncodeOptions<'_>, out: &mut Vec<u8>) -> Encoded {
    let max_size = options.max_size.max(HEADER_LEN);
    let p = plan(packet, max_size, options.auth);
    let o = &packet.opcodes;
    out.clear();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&packet.message_id);
    out.extend_from_slice(&p.flags.to_be_bytes());
    let mut mac_range = None;
    for bit in 0..16 {
        let f = 1u16 << bit;
        if p.flags & f == 0 {
            continue;
        }
        match f {
            flag::REPLY_REQUESTED => push_len(out, 0),
            flag::IN_REPLY_TO => {
                push_len(out, 6);
                out.extend_from_slice(&o.in_reply_to.unwrap_or_default());
            }
            flag::RTT_ENCLOSED => {
                push_len(out, 4);
                out.extend_from_slice(&o.rtt_enclosed_us.unwrap_or(0).to_be_bytes());
            }
            flag::INVESTIGATION_SEEN => push_list(out, o.investigation_seen.as_ref(), p.seen),
            flag::INVESTIGATION_NEVER_RECEIVED => push_list(
                out,
                o.investigation_never_received.as_ref(),
                p.never_received,
            ),
            flag::PLEASE_INVESTIGATE => {
                push_list(out, o.please_investigate.as_ref(), p.investigate)
            }
            flag::COURTESY_EXPIRATION => push_list(out, o.courtesy_expiration.as_ref(), p.courtesy),
            flag::MAC => match (options.auth, &o.mac) {
                (Some(a), _) => {
                    push_len(out, 2 + a.digest().len());
                    out.extend_from_slice(&a.digest().index().to_be_bytes());
                    let start = out.len();
                    out.resize(start + a.digest().len(), 0);
                    mac_range = Some(start..out.len());
                }
                (None, Some(m)) => {
                    push_len(out, 2 + m.digest.len());
                    out.extend_from_slice(&m.digest_index.to_be_bytes());
                    out.extend_from_slice(&m.digest);
                }
                (None, None) => push_len(out, 0),
            },
            flag::HOST_LATENCY => {
                push_len(out, 4);
                out.extend_from_slice(&o.host_latency_us.unwrap_or(0).to_be_bytes());
            }
            flag::ENCRYPTED => {
                let (method, data) = o
                    .encrypted
                    .as_ref()
                    .map(|e| (e.method, e.data.as_slice()))
                    .unwrap_or((0, &[]));
                push_len(out, 2 + data.len());
                out.extend_from_slice(&method.to_be_bytes());
                out.extend_from_slice(data);
            }
            flag::EXTENDED => {
                let segments = o.extended.as_deref().unwrap_or(&[]);
                let len_at = out.len();
                push_len(out, 0);
                for seg in extended_selection(segments, p.extended_budget) {
                    out.extend_from_slice(&seg.id().to_be_bytes());
                    push_len(out, seg.data_len());
                    seg.write(out);
                }
                let len = out.len() - len_at - 2;
                let len = u16::try_from(len).unwrap_or(u16::MAX).to_be_bytes();
                out[len_at..len_at + 2].copy_from_slice(&len);
            }
            _ => {
                let data = o
                    .unknown
                    .iter()
                    .find(|u| u.flag == f)
                    .map(|u| u.data.as_slice())
                    .unwrap_or(&[]);
                push_len(out, data.len());
                out.extend_from_slice(data);
            }
        }
    }
    let target = options.pad_to.unwrap_or(options.min_size).min(max_size);
    if out.len() < target {
        out.resize(target, 0);
    }
    let mut complete = p.complete;
    if let (Some(auth), Some(range)) = (options.auth, mac_range) {
        complete &= auth.sign(out, range);
    }
    let sum = checksum::checksum_of_packet(out);
    out[checksum::FIELD].copy_from_slice(&sum.to_be_bytes());
    Encoded {
        len: out.len(),
        complete,
    }
}

impl Packet {
    /// A packet with this ID and no segments.
    pub fn new(message_id: MessageId) -> Packet {
        Packet {
            message_id,
            opcodes: Opcodes::default(),
        }
    }

    /// Bytes the packet takes unpadded and uncut, signed with `auth` if given
    /// (which replaces any MAC in the packet).
    pub fn encoded_len(&self, auth: Option<&Auth>) -> usize {
        let o = &self.opcodes;
        let seg = |present: bool, len: usize| if present { 2 + len } else { 0 };
        let list = |ids: &Option<Vec<MessageId>>| ids.as_ref().map_or(0, |v| 2 + list_len(v.len()));
        let mac = match (auth, &o.mac) {
            (Some(a), _) => 2 + 2 + a.digest().len(),
            (None, Some(m)) => 2 + 2 + m.digest.len(),
            (None, None) => 0,
        };
        HEADER_LEN
            + seg(o.reply_requested, 0)
            + seg(o.in_reply_to.is_some(), 6)
            + seg(o.rtt_enclosed_us.is_some(), 4)
            + list(&o.investigation_seen)
            + list(&o.investigation_never_received)
            + list(&o.please_investigate)
            + list(&o.courtesy_expiration)
            + mac
            + seg(o.host_latency_us.is_some(), 4)
            + o.encrypted.as_ref().map_or(0, |e| 2 + 2 + e.data.len())
            + o.unknown.iter().map(|u| 2 + u.data.len()).sum::<usize>()
            + o.extended.as_ref().map_or(0, |segs| {
                2 + segs.iter().map(|s| 6 + s.data_len()).sum::<usize>()
            })
    }
}

/// A fresh pseudo-random message ID from the thread's CSPRNG. IDs must not be
/// counters or follow a pattern (the protocol forbids it), and an
/// unpredictable ID also keeps an off-path sender from forging replies.
pub fn random_message_id() -> MessageId {
    let mut id = [0u8; 6];
    rand::fill(&mut id);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap_or_default())
            .collect()
    }

    const A001: MessageId = [0, 0, 0, 0, 0xa0, 0x01];
    const A002: MessageId = [0, 0, 0, 0, 0xa0, 0x02];
    const B001: MessageId = [0, 0, 0, 0, 0xb0, 0x01];

    #[test]
    fn decodes_reference_example_1() {
        let p = decode(&hex("32 50 2d ae 00 00 00 00 a0 01 00 00")).expect("valid");
        assert_eq!(p, Packet::new(A001));
    }

    #[test]
    fn reference_example_3_round_trips_byte_for_byte() {
        let client1 = hex("32 50 2d ad 00 00 00 00 a0 01 00 01 00 00");
        let server = hex("32 50 7d a3 00 00 00 00 b0 01 00 03 00 00 00 06 00 00 00 00 a0 01");
        let client2 =
            hex("32 50 4d 62 00 00 00 00 a0 02 00 06 00 06 00 00 00 00 b0 01 00 04 00 00 30 39");
        let p = decode(&client1).expect("valid");
        assert!(p.opcodes.reply_requested);
        let s = decode(&server).expect("valid");
        assert!(s.opcodes.reply_requested);
        assert_eq!(s.opcodes.in_reply_to, Some(A001));
        let c = decode(&client2).expect("valid");
        assert_eq!(c.message_id, A002);
        assert_eq!(c.opcodes.in_reply_to, Some(B001));
        assert_eq!(c.opcodes.rtt_enclosed_us, Some(12345));
        for (bytes, packet) in [(&client1, &p), (&server, &s), (&client2, &c)] {
            assert_eq!(&encode(packet, 0, 512, None), bytes);
        }
    }

    #[test]
    fn reference_example_6_investigations() {
        let server = hex(
            "32 50 8d 3b 00 00 00 00 b0 06 00 3b 00 00 00 06 00 00 00 00 a0 0a 00 08 00 01 00 00 00 00 a0 01 00 08 00 01 00 00 00 00 a0 02 00 08 00 01 00 00 00 00 b0 02",
        );
        let p = decode(&server).expect("valid");
        assert_eq!(p.opcodes.investigation_seen, Some(vec![A001]));
        assert_eq!(p.opcodes.investigation_never_received, Some(vec![A002]));
        assert_eq!(
            p.opcodes.please_investigate,
            Some(vec![[0, 0, 0, 0, 0xb0, 0x02]])
        );
        assert_eq!(encode(&p, 0, 512, None), server);
    }

    #[test]
    fn zero_checksum_is_accepted_and_bad_checksum_rejected() {
        let mut bytes = hex("32 50 2d ad 00 00 00 00 a0 01 00 01 00 00");
        bytes[2] = 0;
        bytes[3] = 0;
        assert!(decode(&bytes).is_ok());
        bytes[2] = 0x12;
        assert!(matches!(
            decode(&bytes),
            Err(DecodeError::BadChecksum { .. })
        ));
    }

    #[test]
    fn pads_to_min_or_pad_to_but_not_past_max() {
        let p = Packet::new(A001);
        assert_eq!(encode(&p, 128, 512, None).len(), 128);
        assert_eq!(encode(&p, 128, 512, Some(300)).len(), 300);
        assert_eq!(encode(&p, 128, 100, Some(300)).len(), 100);
        assert_eq!(encode(&p, 128, 512, Some(20)).len(), 20);
        let padded = encode(&p, 128, 512, None);
        assert!(padded[HEADER_LEN..].iter().all(|&b| b == 0));
        assert_eq!(decode(&padded), Ok(p));
    }

    #[test]
    fn lists_are_cut_to_fit_max_size() {
        let mut p = Packet::new(A001);
        p.opcodes.reply_requested = true;
        p.opcodes.please_investigate = Some(vec![A002; 100]);
        let mut out = Vec::new();
        let e = encode_into(
            &p,
            &EncodeOptions {
                min_size: 0,
                max_size: 128,
                pad_to: None,
                auth: None,
            },
            &mut out,
        );
        assert!(!e.complete);
        assert!(out.len() <= 128);
        let d = decode(&out).expect("valid");
        assert!(d.opcodes.reply_requested);
        let n = d.opcodes.please_investigate.map(|v| v.len()).unwrap_or(0);
        assert_eq!(n, (128 - 12 - 2 - 2 - 2) / 6);
    }

    #[test]
    fn lying_count_is_an_error_not_an_allocation() {
        // please-investigate segment of 2 bytes claiming 65535 IDs.
        let mut bytes = vec![
            0x32, 0x50, 0, 0, 1, 2, 3, 4, 5, 6, 0x00, 0x20, 0x00, 0x02, 0xff, 0xff,
        ];
        let sum = checksum::checksum_of_packet(&bytes);
        bytes[2..4].copy_from_slice(&sum.to_be_bytes());
        assert!(matches!(
            decode(&bytes),
            Err(DecodeError::BadSegment { .. })
        ));
    }

    #[test]
    fn unknown_flags_are_skipped_by_length() {
        // Flags 0x0400 (unknown, 3 bytes) and 0x0001.
        let mut bytes = vec![
            0x32, 0x50, 0, 0, 1, 2, 3, 4, 5, 6, 0x04, 0x01, 0x00, 0x00, 0x00, 0x03, 9, 9, 9,
        ];
        let sum = checksum::checksum_of_packet(&bytes);
        bytes[2..4].copy_from_slice(&sum.to_be_bytes());
        let p = decode(&bytes).expect("valid");
        assert!(p.opcodes.reply_requested);
        assert_eq!(
            p.opcodes.unknown,
            vec![UnknownOpcode {
                flag: 0x0400,
                data: vec![9, 9, 9]
            }]
        );
        assert_eq!(encode(&p, 0, 512, None), bytes);
    }

    #[test]
    fn extended_segments_round_trip() {
        let mut p = Packet::new(A001);
        p.opcodes.extended = Some(vec![
            ExtendedSegment::ProgramVersion("sysgauge".into()),
            ExtendedSegment::WallClock(1),
            ExtendedSegment::MonotonicClock {
                generation: 7,
                micros: 99,
            },
            ExtendedSegment::Random {
                flags: 2,
                data: vec![1, 2, 3],
            },
            ExtendedSegment::Notice("hi".into()),
            ExtendedSegment::Unknown {
                id: ext_id::BATTERY_LEVELS,
                data: vec![0, 0],
            },
        ]);
        let bytes = encode(&p, 128, 512, None);
        assert_eq!(decode(&bytes), Ok(p.clone()));
        assert_eq!(p.encoded_len(None), encode(&p, 0, 512, None).len());
    }

    #[test]
    fn bad_wall_clock_is_kept_raw() {
        let seg = ExtendedSegment::parse(ext_id::WALL_CLOCK, &[1, 2, 3]);
        assert_eq!(
            seg,
            ExtendedSegment::Unknown {
                id: ext_id::WALL_CLOCK,
                data: vec![1, 2, 3]
            }
        );
    }

    #[test]
    fn random_ids_differ() {
        assert_ne!(random_message_id(), random_message_id());
    }
}
