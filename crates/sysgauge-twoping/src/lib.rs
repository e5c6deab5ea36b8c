//! sysgauge-twoping: the 2ping protocol, a bi-directional ping that tells in
//! which direction packets are lost. A reusable protocol crate: wire codec,
//! checksum, HMAC, a client and a listener; no command-line code (the
//! `sysgauge ping` and `sysgauge listen` commands wrap it).
//!
//! # What 2ping is
//! A client sends a ping; the listener answers and asks for an answer in
//! turn; the client's third leg encloses the RTT it measured, so both sides
//! know an RTT. Each side remembers which requests it received and
//! answered. When a reply never comes, the requester later asks ("please
//! investigate"); the peer says whether it had received the request
//! ("seen": the reply was lost on the way back, an *inbound* loss) or not
//! ("never received": the request was lost on the way out, an *outbound*
//! loss). Losses nobody could resolve are *undetermined*. The protocol is
//! the reference program's (`2ping` 4.5, protocol 4.1); see
//! `docs/twoping.md` for how directions are decided and the safety limits.
//!
//! # Modules
//! - [`codec`]: typed [`codec::Packet`]s, [`codec::encode`] /
//!   [`codec::encode_into`] (zero padding, checksum, optional MAC, cutting to
//!   a maximum size in the reference's priority order) and
//!   [`codec::decode`] / [`codec::decode_authenticated`] (total: errors,
//!   never panics, never allocates more than the datagram's size).
//! - [`checksum`]: the protocol's 16-bit checksum (published test vector).
//! - [`auth`]: HMAC-MD5/SHA1/SHA256/SHA512 over the whole payload with the
//!   checksum and digest zeroed, byte-identical to the reference.
//! - [`client`]: [`client::Client`] pings one or several hosts in parallel
//!   (IPv4, IPv6, scoped link-local), with count, interval, flood, adaptive,
//!   deadline, source address, packet sizes, inquire wait, auth; emits
//!   [`client::ClientEvent`]s to a callback and returns a
//!   [`client::ClientReport`] (also after cancellation).
//! - [`listener`]: [`listener::Listener`] answers pings with bounded state,
//!   a per-source rate limit, no amplification and drop counters.
//! - [`net`]: host resolution (`fe80::1%eth0`), the [`net::Cancel`] trait.
//! - [`stats`]: RTT min/avg/EWMA/max/mdev and loss counts, computed as the
//!   reference prints them.
//!
//! # Implemented
//! Every opcode of protocol 4.1 is parsed; all but encryption are acted on:
//! reply requested, in reply to, RTT enclosed, the three investigation
//! opcodes, courtesy expirations, MAC (digest indexes 1, 2, 3, 5), host
//! processing latency and extended segments (program version, wall clock,
//! monotonic clock, random data, notice text; others kept raw). Set but
//! unknown opcode flags are skipped by their length and kept raw.
//!
//! # Not implemented
//! - Encryption (opcode 0x0200, method 1 HKDF-AES256-CBC): parsed and kept
//!   opaque; the listener drops encrypted packets (counted as
//!   `unsupported`); the client ignores them.
//! - HMAC-CRC32 (digest index 4), which the protocol calls a joke.
//! - SRV lookups, padding patterns other than zeros, sending
//!   wall/monotonic clock or random segments (they are decoded), systemd
//!   socket activation, the reference's UNIX-socket loopback mode.
//! - Choosing a reply's source address on a wildcard-bound, multi-homed
//!   listener (`IP_PKTINFO`): bind each address explicitly there.
//!
//! # Example
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use std::time::Duration;
//! use sysgauge_twoping::client::{Client, ClientConfig, ClientEvent, Target};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let target = Target::resolve_default_port("localhost")?;
//! let config = ClientConfig {
//!     count: Some(5),
//!     interval: Duration::from_millis(200),
//!     ..ClientConfig::default()
//! };
//! let mut client = Client::new(config, vec![target])?;
//! let ctrl_c = AtomicBool::new(false);
//! let report = client.run(&ctrl_c, &mut |event| {
//!     if let ClientEvent::Reply { seq, rtt, .. } = event {
//!         eprintln!("ping_seq={seq} time={:.3} ms", rtt.as_secs_f64() * 1e3);
//!     }
//! })?;
//! let h = &report.hosts[0];
//! println!(
//!     "{} outbound, {} inbound, {} undetermined",
//!     h.counts.lost_outbound,
//!     h.counts.lost_inbound,
//!     h.counts.undetermined()
//! );
//! # Ok(())
//! # }
//! ```

pub mod auth;
pub mod checksum;
pub mod client;
pub mod codec;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod idtable;
pub mod listener;
pub mod net;
mod session;
pub mod stats;

pub use session::{LossDirection, PeerOptions, PeerTextKind, PeerTexts, MAX_PEER_TEXT};
