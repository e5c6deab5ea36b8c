//! HMAC authentication of 2ping packets (opcode 0x0080).
//!
//! The rule, checked against the protocol document and the reference program:
//! the MAC covers the entire payload, magic number through padding, with the
//! checksum field and the digest bytes zeroed (the 2-byte digest index stays
//! as sent). The MAC is computed before the checksum, so the checksum covers
//! the digest. Verification feeds the packet to the HMAC in pieces, with
//! zeros in place of the two fields, so no copy of the packet is made.
//!
//! Supported digests are the ones the reference offers and that have a real
//! cryptographic hash behind them: HMAC-MD5 (1), HMAC-SHA1 (2), HMAC-SHA256 (3)
//! and HMAC-SHA512 (5). Index 4, "HMAC-CRC32", is documented by the protocol
//! as a joke and is not implemented; such packets still decode (the MAC is kept
//! as opaque bytes) but cannot be authenticated.

use crate::checksum;
use hmac::{Hmac, KeyInit, Mac};
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use thiserror::Error;

/// An HMAC digest type, identified on the wire by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Digest {
    /// Index 1, 16-byte digest; the reference program's default.
    HmacMd5,
    /// Index 2, 20-byte digest.
    HmacSha1,
    /// Index 3, 32-byte digest.
    HmacSha256,
    /// Index 5, 64-byte digest.
    HmacSha512,
}

impl Digest {
    /// All supported digests, in index order.
    pub const ALL: [Digest; 4] = [
        Digest::HmacMd5,
        Digest::HmacSha1,
        Digest::HmacSha256,
        Digest::HmacSha512,
    ];

    /// The digest type index carried in the MAC segment.
    pub fn index(self) -> u16 {
        match self {
            Digest::HmacMd5 => 1,
            Digest::HmacSha1 => 2,
            Digest::HmacSha256 => 3,
            Digest::HmacSha512 => 5,
        }
    }

    /// The digest for a wire index, if it is one we implement.
    pub fn from_index(index: u16) -> Option<Digest> {
        Digest::ALL.into_iter().find(|d| d.index() == index)
    }

    /// Length of the computed digest in bytes.
    pub fn len(self) -> usize {
        match self {
            Digest::HmacMd5 => 16,
            Digest::HmacSha1 => 20,
            Digest::HmacSha256 => 32,
            Digest::HmacSha512 => 64,
        }
    }

    /// Always false; present because clippy pairs `len` with `is_empty`.
    pub fn is_empty(self) -> bool {
        false
    }

    /// The name the reference program's `--auth-digest` option uses.
    pub fn name(self) -> &'static str {
        match self {
            Digest::HmacMd5 => "hmac-md5",
            Digest::HmacSha1 => "hmac-sha1",
            Digest::HmacSha256 => "hmac-sha256",
            Digest::HmacSha512 => "hmac-sha512",
        }
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A digest name that is not one of [`Digest::ALL`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("unknown auth digest {name:?}: use hmac-md5, hmac-sha1, hmac-sha256 or hmac-sha512")]
pub struct UnknownDigest {
    /// The name that was given.
    pub name: String,
}

impl FromStr for Digest {
    type Err = UnknownDigest;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        Digest::ALL
            .into_iter()
            .find(|d| d.name() == lower)
            .ok_or(UnknownDigest {
                name: s.to_string(),
            })
    }
}

/// A shared secret and the digest to authenticate packets with.
///
/// Both peers must agree on both; a peer configured with auth must reject
/// packets without a MAC or with another digest type.
///
/// The HMAC's keyed state (the key hashed into its inner and outer pads) is
/// made once, here, and cloned per packet: keying costs two compression
/// blocks, as much again as hashing a 128-byte packet, and a flood signs or
/// checks three packets per ping on each side.
#[derive(Clone)]
pub struct Auth {
    digest: Digest,
    key: Vec<u8>,
    /// `None` only if the HMAC refused the key, which it never does for
    /// these digests (any length is accepted); then nothing is signed or
    /// verified, as before keying was cached.
    keyed: Option<Keyed>,
}

/// An HMAC keyed with [`Auth`]'s key, ready to be cloned per packet.
#[derive(Clone)]
enum Keyed {
    Md5(Hmac<md5::Md5>),
    Sha1(Hmac<sha1::Sha1>),
    Sha256(Hmac<sha2::Sha256>),
    Sha512(Hmac<sha2::Sha512>),
}

impl Keyed {
    fn new(digest: Digest, key: &[u8]) -> Option<Keyed> {
        Some(match digest {
            Digest::HmacMd5 => Keyed::Md5(KeyInit::new_from_slice(key).ok()?),
            Digest::HmacSha1 => Keyed::Sha1(KeyInit::new_from_slice(key).ok()?),
            Digest::HmacSha256 => Keyed::Sha256(KeyInit::new_from_slice(key).ok()?),
            Digest::HmacSha512 => Keyed::Sha512(KeyInit::new_from_slice(key).ok()?),
        })
    }
}

impl PartialEq for Auth {
    fn eq(&self, other: &Auth) -> bool {
        self.digest == other.digest && self.key == other.key
    }
}

impl Eq for Auth {}

impl fmt::Debug for Auth {
    // The key is a secret: never print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("digest", &self.digest)
            .field("key", &"<redacted>")
            .finish()
    }
}

impl Auth {
    /// The reference program takes the key as text and uses its UTF-8 bytes;
    /// passing the same text here interoperates with `2ping --auth KEY`.
    pub fn new(digest: Digest, key: impl Into<Vec<u8>>) -> Auth {
        let key = key.into();
        Auth {
            digest,
            keyed: Keyed::new(digest, &key),
            key,
        }
    }

    /// The digest type.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// Computes the MAC of `packet` with the checksum field and the digest
    /// bytes at `digest_range` treated as zero, writing it into
    /// `packet[digest_range]`. Returns false (and leaves the packet alone) if
    /// the range does not fit the digest.
    pub(crate) fn sign(&self, packet: &mut [u8], digest_range: Range<usize>) -> bool {
        if digest_range.len() != self.digest.len() || digest_range.end > packet.len() {
            return false;
        }
        let mut out = [0u8; 64];
        let out = &mut out[..self.digest.len()];
        if !self.compute(packet, &digest_range, out) {
            return false;
        }
        packet[digest_range].copy_from_slice(out);
        true
    }

    /// Verifies the MAC found at `digest_range` (constant-time comparison by
    /// the `hmac` crate).
    pub(crate) fn verify(&self, packet: &[u8], digest_range: Range<usize>) -> bool {
        if digest_range.len() != self.digest.len() || digest_range.end > packet.len() {
            return false;
        }
        let expected = &packet[digest_range.clone()];
        match &self.keyed {
            Some(Keyed::Md5(k)) => verify_with(k, packet, &digest_range, expected),
            Some(Keyed::Sha1(k)) => verify_with(k, packet, &digest_range, expected),
            Some(Keyed::Sha256(k)) => verify_with(k, packet, &digest_range, expected),
            Some(Keyed::Sha512(k)) => verify_with(k, packet, &digest_range, expected),
            None => false,
        }
    }

    fn compute(&self, packet: &[u8], digest_range: &Range<usize>, out: &mut [u8]) -> bool {
        match &self.keyed {
            Some(Keyed::Md5(k)) => compute_with(k, packet, digest_range, out),
            Some(Keyed::Sha1(k)) => compute_with(k, packet, digest_range, out),
            Some(Keyed::Sha256(k)) => compute_with(k, packet, digest_range, out),
            Some(Keyed::Sha512(k)) => compute_with(k, packet, digest_range, out),
            None => false,
        }
    }
}

/// Feeds `packet` to `mac` with the checksum field and the digest zeroed.
fn feed<M: Mac>(mac: &mut M, packet: &[u8], digest_range: &Range<usize>) {
    const ZEROS: [u8; 64] = [0; 64];
    // The checksum field (2..4) always precedes the MAC segment, whose digest
    // starts at offset 12 or later, so the pieces are in order.
    mac.update(&packet[..checksum::FIELD.start]);
    mac.update(&ZEROS[..checksum::FIELD.len()]);
    mac.update(&packet[checksum::FIELD.end..digest_range.start]);
    mac.update(&ZEROS[..digest_range.len()]);
    mac.update(&packet[digest_range.end..]);
}

/// The keyed HMAC fed with `packet` (checksum and digest fields zeroed), or
/// `None` when the digest field overlaps the header.
fn keyed_mac<M: Mac + Clone>(keyed: &M, packet: &[u8], digest_range: &Range<usize>) -> Option<M> {
    if digest_range.start < checksum::FIELD.end {
        return None;
    }
    let mut mac = keyed.clone();
    feed(&mut mac, packet, digest_range);
    Some(mac)
}

fn compute_with<M: Mac + Clone>(
    keyed: &M,
    packet: &[u8],
    digest_range: &Range<usize>,
    out: &mut [u8],
) -> bool {
    let Some(mac) = keyed_mac(keyed, packet, digest_range) else {
        return false;
    };
    let tag = mac.finalize().into_bytes();
    if tag.len() != out.len() {
        return false;
    }
    out.copy_from_slice(&tag);
    true
}

fn verify_with<M: Mac + Clone>(
    keyed: &M,
    packet: &[u8],
    digest_range: &Range<usize>,
    expected: &[u8],
) -> bool {
    keyed_mac(keyed, packet, digest_range).is_some_and(|mac| mac.verify_slice(expected).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Digest::ALL {
            assert_eq!(d.name().parse::<Digest>(), Ok(d));
            assert_eq!(Digest::from_index(d.index()), Some(d));
        }
        assert!("hmac-crc32".parse::<Digest>().is_err());
        assert_eq!(Digest::from_index(4), None);
    }

    #[test]
    fn debug_hides_key() {
        let auth = Auth::new(Digest::HmacSha256, "secret");
        assert!(!format!("{auth:?}").contains("secret"));
    }
}
