//! aws-lc's C API, through `aws-lc-sys`, for the public-key operations
//! `aws-lc-rs` does not offer: RSA PKCS#1 v1.5 signing with a 1024-bit key
//! (aws-lc-rs refuses signing keys below 2048 bits; the C library does
//! not), DSA, and ECDSA and ECDH on P-224 (the C library has the curve,
//! a 64-bit fiat-crypto implementation, aws-lc-rs does not expose it).
//!
//! It is the same aws-lc build aws-lc-rs links (one `aws-lc-sys`), so the
//! crypto family's `aws-lc` implementation is one library whichever crate
//! calls it. This is the crate's only FFI wrapper: every `unsafe` block of
//! the public-key code is here, each with its SAFETY argument, and the rest
//! of the crate (the crypto family forbids unsafe code) sees a safe [`Key`]
//! that owns its `EVP_PKEY` and frees it on drop.
//!
//! The wrapper takes digests, not messages: the caller hashes (with the
//! same SHA-2 as the RustCrypto candidate) so both candidates do the same
//! work per operation.

use aws_lc_sys as ffi;
use std::os::raw::{c_int, c_uint};
use std::ptr::NonNull;
use thiserror::Error;

/// NIDs from aws-lc's `<openssl/nid.h>` and `EVP_PKEY_*` type ids. Spelled
/// here rather than taken from the bindings, which type them `i32` on some
/// targets and `u32` on others (pre-generated against bindgen-made).
const NID_SHA224: c_int = 675;
const NID_SHA256: c_int = 672;
const NID_SECP224R1: c_int = 713;
const EVP_PKEY_RSA: c_int = 6;
const EVP_PKEY_DSA: c_int = 116;
const EVP_PKEY_EC: c_int = 408;

/// What went wrong in a call into aws-lc.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AwsLcError {
    /// A call returned failure; `reason` is aws-lc's error queue entry.
    #[error("aws-lc {op} failed: {reason}")]
    Call { op: &'static str, reason: String },
    /// The key is not of the kind asked for.
    #[error("aws-lc: the key is not {want}")]
    WrongKey { want: &'static str },
    /// The output buffer is too short.
    #[error("aws-lc {op}: the output needs {need} bytes, the buffer has {have}")]
    Buffer {
        op: &'static str,
        need: usize,
        have: usize,
    },
}

/// The kind of key a document must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Rsa,
    Dsa,
    /// An EC key on P-224 (secp224r1).
    EcP224,
}

impl KeyKind {
    fn name(self) -> &'static str {
        match self {
            KeyKind::Rsa => "an RSA key",
            KeyKind::Dsa => "a DSA key",
            KeyKind::EcP224 => "an EC key on P-224",
        }
    }
}

/// The hash a digest was made with (RSA PKCS#1 v1.5 encodes it in the
/// signature; DSA and ECDSA take the digest alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha224,
    Sha256,
}

impl Hash {
    fn nid(self) -> c_int {
        match self {
            Hash::Sha224 => NID_SHA224,
            Hash::Sha256 => NID_SHA256,
        }
    }
}

/// aws-lc's oldest queued error as text (and the queue cleared), for a
/// call that returned failure.
fn last_error(op: &'static str) -> AwsLcError {
    // SAFETY: ERR_get_error reads and pops this thread's error queue; it
    // takes no arguments and cannot fail.
    let code = unsafe { ffi::ERR_get_error() };
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for `buf.len()` bytes; ERR_error_string_n
    // writes at most that many, NUL-terminated, and keeps no pointer.
    unsafe { ffi::ERR_error_string_n(code, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: clears this thread's error queue; no arguments.
    unsafe { ffi::ERR_clear_error() };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let reason = if code == 0 {
        "no error queued".to_string()
    } else {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    };
    AwsLcError::Call { op, reason }
}

/// A parsed key: an owned `EVP_PKEY` of a known kind.
pub struct Key {
    pkey: NonNull<ffi::EVP_PKEY>,
    kind: KeyKind,
}

// SAFETY: an EVP_PKEY has no thread affinity (no thread-local state; its
// reference count and lazily built caches, such as RSA's Montgomery
// contexts, are guarded by aws-lc's own locks), and `Key` owns its pointer
// exclusively, so moving it to another thread is sound. `Key` is not Sync:
// it is used from one thread at a time (each worker has its own).
unsafe impl Send for Key {}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: `pkey` came from EVP_parse_*_key, is owned by this `Key`
        // alone and is freed exactly once, here.
        unsafe { ffi::EVP_PKEY_free(self.pkey.as_ptr()) };
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key").field("kind", &self.kind).finish()
    }
}

type Parser = unsafe extern "C" fn(*mut ffi::CBS) -> *mut ffi::EVP_PKEY;

impl Key {
    /// A private key from PKCS#8 DER (`keys/*.pk8.der`).
    pub fn from_pkcs8(der: &[u8], kind: KeyKind) -> Result<Key, AwsLcError> {
        Key::parse(
            der,
            kind,
            ffi::EVP_parse_private_key,
            "EVP_parse_private_key",
        )
    }

    /// A public key from X.509 SubjectPublicKeyInfo DER (an ECDH peer).
    pub fn from_spki(der: &[u8], kind: KeyKind) -> Result<Key, AwsLcError> {
        Key::parse(der, kind, ffi::EVP_parse_public_key, "EVP_parse_public_key")
    }

    fn parse(
        der: &[u8],
        kind: KeyKind,
        parse: Parser,
        op: &'static str,
    ) -> Result<Key, AwsLcError> {
        let mut cbs = ffi::CBS {
            data: der.as_ptr(),
            len: der.len(),
        };
        // SAFETY: `cbs` points into `der`, which outlives the call; the
        // parser reads at most `len` bytes, advances `cbs` and returns a new
        // EVP_PKEY (or NULL) that keeps no pointer into `der`.
        let raw = unsafe { parse(&mut cbs) };
        let pkey = NonNull::new(raw).ok_or_else(|| last_error(op))?;
        // Owned from here on, so an early return frees it.
        let key = Key { pkey, kind };
        if cbs.len != 0 {
            return Err(AwsLcError::Call {
                op,
                reason: format!("{} bytes after the key", cbs.len),
            });
        }
        if !key.is_kind(kind) {
            return Err(AwsLcError::WrongKey { want: kind.name() });
        }
        Ok(key)
    }

    /// Whether the parsed key is of `kind` (for EC keys, on P-224).
    fn is_kind(&self, kind: KeyKind) -> bool {
        // SAFETY: `pkey` is a valid EVP_PKEY owned by `self`.
        let id = unsafe { ffi::EVP_PKEY_id(self.pkey.as_ptr()) };
        match kind {
            KeyKind::Rsa => id == EVP_PKEY_RSA,
            KeyKind::Dsa => id == EVP_PKEY_DSA,
            KeyKind::EcP224 => {
                if id != EVP_PKEY_EC {
                    return false;
                }
                // SAFETY: `ec` is the EC_KEY inside `pkey` (non-NULL for
                // an EVP_PKEY_EC key) and valid while `pkey` is; the group
                // it returns is borrowed the same way.
                unsafe {
                    let ec = ffi::EVP_PKEY_get0_EC_KEY(self.pkey.as_ptr());
                    if ec.is_null() {
                        return false;
                    }
                    let group = ffi::EC_KEY_get0_group(ec);
                    !group.is_null() && ffi::EC_GROUP_get_curve_name(group) == NID_SECP224R1
                }
            }
        }
    }

    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The longest signature this key makes (RSA: the modulus length;
    /// DSA and ECDSA: their DER encoding at its longest).
    pub fn max_signature_len(&self) -> usize {
        let p = self.pkey.as_ptr();
        // SAFETY: `pkey` is a valid key of `self.kind` (checked when
        // parsed), so the get0 accessor returns its non-NULL inner key,
        // borrowed while `pkey` lives; the size functions only read it.
        unsafe {
            match self.kind {
                KeyKind::Rsa => ffi::RSA_size(ffi::EVP_PKEY_get0_RSA(p)) as usize,
                KeyKind::Dsa => {
                    usize::try_from(ffi::DSA_size(ffi::EVP_PKEY_get0_DSA(p))).unwrap_or(0)
                }
                KeyKind::EcP224 => ffi::ECDSA_size(ffi::EVP_PKEY_get0_EC_KEY(p)),
            }
        }
    }

    /// Sign `digest` (made with `hash`) into `out`; the signature's length.
    /// RSA: PKCS#1 v1.5 (deterministic); DSA and ECDSA: DER (r, s) with a
    /// fresh random nonce, as aws-lc and OpenSSL make them.
    pub fn sign(&self, hash: Hash, digest: &[u8], out: &mut [u8]) -> Result<usize, AwsLcError> {
        let need = self.max_signature_len();
        if out.len() < need {
            return Err(AwsLcError::Buffer {
                op: "sign",
                need,
                have: out.len(),
            });
        }
        let p = self.pkey.as_ptr();
        let mut len: c_uint = 0;
        // SAFETY: `pkey` is a valid private key of `self.kind`, so the get0
        // accessor returns its non-NULL inner key (borrowed while `pkey`
        // lives). `digest` is readable for its length; `out` is writable
        // for at least the key's maximum signature length (checked above),
        // which is all the sign functions write, and `len` receives the
        // length written. None keeps a pointer after returning.
        let (ok, op) = unsafe {
            match self.kind {
                KeyKind::Rsa => (
                    ffi::RSA_sign(
                        hash.nid(),
                        digest.as_ptr(),
                        digest.len(),
                        out.as_mut_ptr(),
                        &mut len,
                        ffi::EVP_PKEY_get0_RSA(p),
                    ),
                    "RSA_sign",
                ),
                KeyKind::Dsa => (
                    ffi::DSA_sign(
                        0,
                        digest.as_ptr(),
                        digest.len(),
                        out.as_mut_ptr(),
                        &mut len,
                        ffi::EVP_PKEY_get0_DSA(p),
                    ),
                    "DSA_sign",
                ),
                KeyKind::EcP224 => (
                    ffi::ECDSA_sign(
                        0,
                        digest.as_ptr(),
                        digest.len(),
                        out.as_mut_ptr(),
                        &mut len,
                        ffi::EVP_PKEY_get0_EC_KEY(p),
                    ),
                    "ECDSA_sign",
                ),
            }
        };
        if ok != 1 {
            return Err(last_error(op));
        }
        Ok(len as usize)
    }

    /// Whether `sig` is a valid signature of `digest` (made with `hash`).
    pub fn verify(&self, hash: Hash, digest: &[u8], sig: &[u8]) -> bool {
        let p = self.pkey.as_ptr();
        // SAFETY: as in `sign`: the inner key is valid while `pkey` is;
        // `digest` and `sig` are readable for their lengths and only read.
        // RSA_verify takes a mutable RSA but only reads the key (its lazily
        // built caches are locked inside aws-lc).
        let ok = unsafe {
            match self.kind {
                KeyKind::Rsa => ffi::RSA_verify(
                    hash.nid(),
                    digest.as_ptr(),
                    digest.len(),
                    sig.as_ptr(),
                    sig.len(),
                    ffi::EVP_PKEY_get0_RSA(p),
                ),
                KeyKind::Dsa => ffi::DSA_verify(
                    0,
                    digest.as_ptr(),
                    digest.len(),
                    sig.as_ptr(),
                    sig.len(),
                    ffi::EVP_PKEY_get0_DSA(p),
                ),
                KeyKind::EcP224 => ffi::ECDSA_verify(
                    0,
                    digest.as_ptr(),
                    digest.len(),
                    sig.as_ptr(),
                    sig.len(),
                    ffi::EVP_PKEY_get0_EC_KEY(p),
                ),
            }
        };
        if ok != 1 {
            // A refused signature queues an error; drop it.
            // SAFETY: clears this thread's error queue; no arguments.
            unsafe { ffi::ERR_clear_error() };
        }
        ok == 1
    }

    /// ECDH: the x-coordinate of this private key times `peer`'s public
    /// point, into `out`; its length (28 bytes on P-224).
    pub fn ecdh(&self, peer: &Key, out: &mut [u8]) -> Result<usize, AwsLcError> {
        if self.kind != KeyKind::EcP224 || peer.kind != KeyKind::EcP224 {
            return Err(AwsLcError::WrongKey {
                want: KeyKind::EcP224.name(),
            });
        }
        // SAFETY: both keys are valid EC keys on P-224 (checked when
        // parsed and above), so their EC_KEYs and the peer's public point
        // are non-NULL (NULL is checked anyway) and borrowed while the keys
        // live. `out` is writable for `out.len()` bytes; without a KDF,
        // ECDH_compute_key writes at most that many and returns the count.
        let n = unsafe {
            let ours = ffi::EVP_PKEY_get0_EC_KEY(self.pkey.as_ptr());
            let theirs = ffi::EVP_PKEY_get0_EC_KEY(peer.pkey.as_ptr());
            let point = if theirs.is_null() {
                std::ptr::null()
            } else {
                ffi::EC_KEY_get0_public_key(theirs)
            };
            if ours.is_null() || point.is_null() {
                return Err(AwsLcError::WrongKey {
                    want: "an EC key pair with a public point",
                });
            }
            ffi::ECDH_compute_key(out.as_mut_ptr().cast(), out.len(), point, ours, None)
        };
        usize::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| last_error("ECDH_compute_key"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest as _;

    #[test]
    fn keys_parse_only_as_their_kind() {
        let rsa = include_bytes!("crypto/keys/rsa-1024.pk8.der");
        let dsa = include_bytes!("crypto/keys/dsa-1024.pk8.der");
        let p224 = include_bytes!("crypto/keys/ec-p224.pk8.der");
        let p256 = include_bytes!("crypto/keys/ec-p256.pk8.der");
        assert_eq!(
            Key::from_pkcs8(rsa, KeyKind::Rsa)
                .unwrap()
                .max_signature_len(),
            128
        );
        assert!(Key::from_pkcs8(dsa, KeyKind::Dsa).is_ok());
        assert!(Key::from_pkcs8(p224, KeyKind::EcP224).is_ok());
        assert!(matches!(
            Key::from_pkcs8(rsa, KeyKind::Dsa),
            Err(AwsLcError::WrongKey { .. })
        ));
        assert!(matches!(
            Key::from_pkcs8(p256, KeyKind::EcP224),
            Err(AwsLcError::WrongKey { .. })
        ));
        assert!(matches!(
            Key::from_pkcs8(&rsa[..100], KeyKind::Rsa),
            Err(AwsLcError::Call { .. })
        ));
        let mut long = rsa.to_vec();
        long.push(0);
        assert!(Key::from_pkcs8(&long, KeyKind::Rsa).is_err());
    }

    #[test]
    fn sign_checks_the_buffer_and_verify_refuses_a_changed_digest() {
        let key =
            Key::from_pkcs8(include_bytes!("crypto/keys/dsa-2048.pk8.der"), KeyKind::Dsa).unwrap();
        let digest = sha2::Sha256::digest(b"x");
        let mut short = [0u8; 8];
        assert!(matches!(
            key.sign(Hash::Sha256, &digest, &mut short),
            Err(AwsLcError::Buffer { .. })
        ));
        let mut sig = vec![0u8; key.max_signature_len()];
        let n = key.sign(Hash::Sha256, &digest, &mut sig).unwrap();
        assert!(key.verify(Hash::Sha256, &digest, &sig[..n]));
        let other = sha2::Sha256::digest(b"y");
        assert!(!key.verify(Hash::Sha256, &other, &sig[..n]));
        let peer = Key::from_spki(
            include_bytes!("crypto/keys/ecdh-p224-peer.pub.der"),
            KeyKind::EcP224,
        )
        .unwrap();
        let mut out = [0u8; 66];
        assert!(key.ecdh(&peer, &mut out).is_err());
    }
}
