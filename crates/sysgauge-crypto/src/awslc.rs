//! aws-lc's C API, through `aws-lc-sys`, for the public-key operations
//! `aws-lc-rs` does not offer: RSA PKCS#1 v1.5 signing with a 1024-bit key
//! (aws-lc-rs refuses signing keys below 2048 bits; the C library does
//! not), DSA, ECDSA and ECDH on P-224 (the C library has the curve,
//! a 64-bit fiat-crypto implementation, aws-lc-rs does not expose it), and
//! on P-192, which aws-lc does not carry: its group is built here from the
//! domain parameters and runs on aws-lc's generic Montgomery-form curve
//! code. Also the bignum primitives ([`BigNum`], [`MontCtx`]) that the
//! crypto family's DSA verification (`crypto::dsa_verify`) builds its
//! simultaneous exponentiation on.
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
    /// An EC key on P-192 (secp192r1, a group built from its parameters).
    EcP192,
}

impl KeyKind {
    fn name(self) -> &'static str {
        match self {
            KeyKind::Rsa => "an RSA key",
            KeyKind::Dsa => "a DSA key",
            KeyKind::EcP224 => "an EC key on P-224",
            KeyKind::EcP192 => "an EC key on P-192",
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

/// Ok if a call that returns 1 on success did; else aws-lc's queued error.
fn check(ok: c_int, op: &'static str) -> Result<(), AwsLcError> {
    if ok == 1 {
        Ok(())
    } else {
        Err(last_error(op))
    }
}

/// What a call that returns NULL on failure returned; else aws-lc's queued
/// error.
fn made<T>(raw: *mut T, op: &'static str) -> Result<NonNull<T>, AwsLcError> {
    NonNull::new(raw).ok_or_else(|| last_error(op))
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
        let pkey = made(raw, op)?;
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
            // aws-lc's parsers do not know the curve, so no parsed key is
            // on it: P-192 keys are built by `Key::p192_*`.
            KeyKind::EcP192 => false,
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
                KeyKind::EcP224 | KeyKind::EcP192 => ffi::ECDSA_size(ffi::EVP_PKEY_get0_EC_KEY(p)),
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
                KeyKind::EcP224 | KeyKind::EcP192 => (
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
        check(ok, op)?;
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
                KeyKind::EcP224 | KeyKind::EcP192 => ffi::ECDSA_verify(
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
    /// point, into `out`; its length (28 bytes on P-224, 24 on P-192).
    pub fn ecdh(&self, peer: &Key, out: &mut [u8]) -> Result<usize, AwsLcError> {
        let is_ec = |k: KeyKind| matches!(k, KeyKind::EcP224 | KeyKind::EcP192);
        if !is_ec(self.kind) || peer.kind != self.kind {
            return Err(AwsLcError::WrongKey {
                want: "two EC keys on the same curve",
            });
        }
        // SAFETY: both keys are valid EC keys on the same curve (checked
        // when parsed or built, and above), so their EC_KEYs and the
        // peer's public point are non-NULL (NULL is checked anyway) and
        // borrowed while the keys live. `out` is writable for `out.len()` bytes; without a KDF,
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

/// P-192's domain parameters, big-endian: FIPS 186-4 appendix D.1.2.1
/// (the same curve as SEC 2's secp192r1). a is p - 3.
const P192_P: [u8; 24] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
];
const P192_A: [u8; 24] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc,
];
const P192_B: [u8; 24] = [
    0x64, 0x21, 0x05, 0x19, 0xe5, 0x9c, 0x80, 0xe7, 0x0f, 0xa7, 0xe9, 0xab, 0x72, 0x24, 0x30, 0x49,
    0xfe, 0xb8, 0xde, 0xec, 0xc1, 0x46, 0xb9, 0xb1,
];
const P192_GX: [u8; 24] = [
    0x18, 0x8d, 0xa8, 0x0e, 0xb0, 0x30, 0x90, 0xf6, 0x7c, 0xbf, 0x20, 0xeb, 0x43, 0xa1, 0x88, 0x00,
    0xf4, 0xff, 0x0a, 0xfd, 0x82, 0xff, 0x10, 0x12,
];
const P192_GY: [u8; 24] = [
    0x07, 0x19, 0x2b, 0x95, 0xff, 0xc8, 0xda, 0x78, 0x63, 0x10, 0x11, 0xed, 0x6b, 0x24, 0xcd, 0xd5,
    0x73, 0xf9, 0x77, 0xa1, 0x1e, 0x79, 0x48, 0x11,
];
const P192_N: [u8; 24] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x99, 0xde, 0xf8, 0x36,
    0x14, 0x6b, 0xc9, 0xb1, 0xb4, 0xd2, 0x28, 0x31,
];

/// An owned `EC_GROUP` (a hand-built one: built-in groups are static).
struct Group(NonNull<ffi::EC_GROUP>);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: the group came from EC_GROUP_new_curve_GFp, is owned
        // here alone (EC_KEY_set_group copies it) and is freed once.
        unsafe { ffi::EC_GROUP_free(self.0.as_ptr()) };
    }
}

/// An owned `EC_POINT`.
struct Point(NonNull<ffi::EC_POINT>);

impl Drop for Point {
    fn drop(&mut self) {
        // SAFETY: the point came from EC_POINT_new, is owned here alone
        // (EC_KEY_set_public_key copies it) and is freed once.
        unsafe { ffi::EC_POINT_free(self.0.as_ptr()) };
    }
}

/// An owned `EC_KEY` not yet handed to an `EVP_PKEY`.
struct EcKey(NonNull<ffi::EC_KEY>);

impl Drop for EcKey {
    fn drop(&mut self) {
        // SAFETY: the key came from EC_KEY_new and is owned here alone
        // (`into_pkey` forgets it once an EVP_PKEY owns it).
        unsafe { ffi::EC_KEY_free(self.0.as_ptr()) };
    }
}

/// P-192 as an aws-lc group: aws-lc has no P-192 of its own, so the
/// group comes from the FIPS 186-4 parameters and runs on aws-lc's generic
/// Montgomery-form prime-curve code (constant-time scalar multiplication,
/// 3-word field elements).
fn p192_group(ctx: &BnCtx) -> Result<Group, AwsLcError> {
    let p = BigNum::from_be_bytes(&P192_P)?;
    let a = BigNum::from_be_bytes(&P192_A)?;
    let b = BigNum::from_be_bytes(&P192_B)?;
    let gx = BigNum::from_be_bytes(&P192_GX)?;
    let gy = BigNum::from_be_bytes(&P192_GY)?;
    let n = BigNum::from_be_bytes(&P192_N)?;
    let one = BigNum::from_be_bytes(&[1])?;
    // SAFETY: every BIGNUM and the BN_CTX are valid and owned by this
    // function or the caller; aws-lc copies what it keeps. The new group
    // and point are owned by `Group`/`Point` as soon as they exist, so an
    // early return frees them.
    unsafe {
        let group = Group(made(
            ffi::EC_GROUP_new_curve_GFp(p.as_ptr(), a.as_ptr(), b.as_ptr(), ctx.as_ptr()),
            "EC_GROUP_new_curve_GFp",
        )?);
        let g = Point(made(ffi::EC_POINT_new(group.0.as_ptr()), "EC_POINT_new")?);
        // Checks that the generator is on the curve.
        check(
            ffi::EC_POINT_set_affine_coordinates_GFp(
                group.0.as_ptr(),
                g.0.as_ptr(),
                gx.as_ptr(),
                gy.as_ptr(),
                ctx.as_ptr(),
            ),
            "EC_POINT_set_affine_coordinates_GFp",
        )?;
        check(
            ffi::EC_GROUP_set_generator(group.0.as_ptr(), g.0.as_ptr(), n.as_ptr(), one.as_ptr()),
            "EC_GROUP_set_generator",
        )?;
        Ok(group)
    }
}

impl Key {
    /// A P-192 private key from its big-endian scalar (the public point
    /// is computed), on the hand-built group (see [`p192_group`]).
    pub fn p192_private(scalar: &[u8]) -> Result<Key, AwsLcError> {
        let ctx = BnCtx::new()?;
        let group = p192_group(&ctx)?;
        let d = BigNum::from_be_bytes(scalar)?;
        let key = EcKey::on(&group)?;
        // SAFETY: `key` has `group` (copied into it), `d` and `ctx` are
        // valid; aws-lc copies the scalar and the point into the key and
        // checks the scalar's range. The point is owned by `Point`.
        unsafe {
            check(
                ffi::EC_KEY_set_private_key(key.0.as_ptr(), d.as_ptr()),
                "EC_KEY_set_private_key",
            )?;
            let grp = ffi::EC_KEY_get0_group(key.0.as_ptr());
            let public = Point(made(ffi::EC_POINT_new(grp), "EC_POINT_new")?);
            check(
                ffi::EC_POINT_mul(
                    grp,
                    public.0.as_ptr(),
                    d.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null(),
                    ctx.as_ptr(),
                ),
                "EC_POINT_mul",
            )?;
            check(
                ffi::EC_KEY_set_public_key(key.0.as_ptr(), public.0.as_ptr()),
                "EC_KEY_set_public_key",
            )?;
        }
        key.into_pkey(KeyKind::EcP192)
    }

    /// A P-192 public key from its SEC 1 encoding (an ECDH peer or a
    /// verifying key); the point must be on the curve.
    pub fn p192_public(sec1: &[u8]) -> Result<Key, AwsLcError> {
        let ctx = BnCtx::new()?;
        let group = p192_group(&ctx)?;
        let key = EcKey::on(&group)?;
        // SAFETY: `key` has the group; `sec1` is readable for its length
        // and only read; EC_POINT_oct2point checks that the point is on
        // the curve; EC_KEY_set_public_key copies it.
        unsafe {
            let grp = ffi::EC_KEY_get0_group(key.0.as_ptr());
            let point = Point(made(ffi::EC_POINT_new(grp), "EC_POINT_new")?);
            check(
                ffi::EC_POINT_oct2point(
                    grp,
                    point.0.as_ptr(),
                    sec1.as_ptr(),
                    sec1.len(),
                    ctx.as_ptr(),
                ),
                "EC_POINT_oct2point",
            )?;
            check(
                ffi::EC_KEY_set_public_key(key.0.as_ptr(), point.0.as_ptr()),
                "EC_KEY_set_public_key",
            )?;
        }
        key.into_pkey(KeyKind::EcP192)
    }

    /// An EC key's public point, SEC 1 uncompressed.
    pub fn ec_public_point(&self) -> Result<Vec<u8>, AwsLcError> {
        if !matches!(self.kind, KeyKind::EcP224 | KeyKind::EcP192) {
            return Err(AwsLcError::WrongKey { want: "an EC key" });
        }
        let ctx = BnCtx::new()?;
        let mut out = [0u8; 1 + 2 * 66];
        // SAFETY: `pkey` is a valid EC key, so its EC_KEY and group are
        // non-NULL and borrowed while `pkey` lives (the point is checked
        // for NULL); `out` is writable for its length, which
        // EC_POINT_point2oct does not exceed (it returns 0 instead).
        let n = unsafe {
            let ec = ffi::EVP_PKEY_get0_EC_KEY(self.pkey.as_ptr());
            let point = ffi::EC_KEY_get0_public_key(ec);
            if point.is_null() {
                return Err(AwsLcError::WrongKey {
                    want: "an EC key with a public point",
                });
            }
            ffi::EC_POINT_point2oct(
                ffi::EC_KEY_get0_group(ec),
                point,
                ffi::point_conversion_form_t::POINT_CONVERSION_UNCOMPRESSED,
                out.as_mut_ptr(),
                out.len(),
                ctx.as_ptr(),
            )
        };
        if n == 0 {
            return Err(last_error("EC_POINT_point2oct"));
        }
        Ok(out[..n].to_vec())
    }

    /// A DSA key's public values (p, q, g, y), copied.
    pub fn dsa_public(&self) -> Result<DsaPublic, AwsLcError> {
        if self.kind != KeyKind::Dsa {
            return Err(AwsLcError::WrongKey {
                want: KeyKind::Dsa.name(),
            });
        }
        let (mut p, mut q, mut g, mut y) = (
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
        );
        // SAFETY: `pkey` is a valid DSA key, so its DSA is non-NULL and
        // borrowed while `pkey` lives; the get0 accessors write borrowed
        // pointers (or NULL), which `BigNum::copy_of` checks and copies.
        unsafe {
            let dsa = ffi::EVP_PKEY_get0_DSA(self.pkey.as_ptr());
            ffi::DSA_get0_pqg(dsa, &mut p, &mut q, &mut g);
            ffi::DSA_get0_key(dsa, &mut y, std::ptr::null_mut());
            Ok(DsaPublic {
                p: BigNum::copy_of(p)?,
                q: BigNum::copy_of(q)?,
                g: BigNum::copy_of(g)?,
                y: BigNum::copy_of(y)?,
            })
        }
    }
}

impl EcKey {
    /// A new EC_KEY with (a copy of) `group`.
    fn on(group: &Group) -> Result<EcKey, AwsLcError> {
        // SAFETY: EC_KEY_new has no arguments; the key is owned by `EcKey`
        // at once. EC_KEY_set_group copies the valid `group`.
        unsafe {
            let key = EcKey(made(ffi::EC_KEY_new(), "EC_KEY_new")?);
            check(
                ffi::EC_KEY_set_group(key.0.as_ptr(), group.0.as_ptr()),
                "EC_KEY_set_group",
            )?;
            Ok(key)
        }
    }

    /// Hand the key to a new `EVP_PKEY` (which then owns it).
    fn into_pkey(self, kind: KeyKind) -> Result<Key, AwsLcError> {
        // SAFETY: EVP_PKEY_new has no arguments; on success
        // EVP_PKEY_assign_EC_KEY takes ownership of the EC_KEY, so `self`
        // is forgotten rather than dropped; on failure both are freed.
        unsafe {
            let pkey = made(ffi::EVP_PKEY_new(), "EVP_PKEY_new")?;
            if ffi::EVP_PKEY_assign_EC_KEY(pkey.as_ptr(), self.0.as_ptr()) != 1 {
                ffi::EVP_PKEY_free(pkey.as_ptr());
                return Err(last_error("EVP_PKEY_assign_EC_KEY"));
            }
            std::mem::forget(self);
            Ok(Key { pkey, kind })
        }
    }
}

/// A DSA key's public values.
pub struct DsaPublic {
    pub p: BigNum,
    pub q: BigNum,
    pub g: BigNum,
    pub y: BigNum,
}

/// The (r, s) of a DER-encoded DSA signature, parsed by aws-lc (strict
/// DER, minimal non-negative INTEGERs); `None` if it is not exactly that.
pub fn dsa_signature(der: &[u8]) -> Option<(BigNum, BigNum)> {
    let mut cbs = ffi::CBS {
        data: der.as_ptr(),
        len: der.len(),
    };
    // SAFETY: `cbs` points into `der`, which outlives the call; the parser
    // reads at most `len` bytes and returns a new DSA_SIG (or NULL) that
    // keeps no pointer into `der`. r and s are borrowed from it, copied
    // (checked for NULL), and the DSA_SIG is freed once.
    unsafe {
        let sig = ffi::DSA_SIG_parse(&mut cbs);
        if sig.is_null() {
            ffi::ERR_clear_error();
            return None;
        }
        let (mut r, mut s) = (std::ptr::null(), std::ptr::null());
        ffi::DSA_SIG_get0(sig, &mut r, &mut s);
        let out = BigNum::copy_of(r).ok().zip(BigNum::copy_of(s).ok());
        ffi::DSA_SIG_free(sig);
        out.filter(|_| cbs.len == 0)
    }
}

/// An owned aws-lc `BIGNUM`, cleared when freed.
pub struct BigNum(NonNull<ffi::BIGNUM>);

// SAFETY: a BIGNUM is plain owned memory with no thread affinity; `BigNum`
// owns it exclusively.
unsafe impl Send for BigNum {}

impl Drop for BigNum {
    fn drop(&mut self) {
        // SAFETY: owned by this `BigNum` alone and freed once.
        unsafe { ffi::BN_clear_free(self.0.as_ptr()) };
    }
}

impl std::fmt::Debug for BigNum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BigNum({} bits)", self.num_bits())
    }
}

impl BigNum {
    /// Zero.
    pub fn new() -> Result<BigNum, AwsLcError> {
        // SAFETY: BN_new has no arguments; the result is owned at once.
        made(unsafe { ffi::BN_new() }, "BN_new").map(BigNum)
    }

    /// The non-negative number with these big-endian bytes.
    pub fn from_be_bytes(b: &[u8]) -> Result<BigNum, AwsLcError> {
        let mut n = BigNum::new()?;
        n.set_be_bytes(b)?;
        Ok(n)
    }

    /// Set to the number with these big-endian bytes, reusing the memory.
    pub fn set_be_bytes(&mut self, b: &[u8]) -> Result<(), AwsLcError> {
        // SAFETY: `b` is readable for its length and only read; the
        // BIGNUM is valid and owned by `self`.
        let r = unsafe { ffi::BN_bin2bn(b.as_ptr(), b.len(), self.0.as_ptr()) };
        made(r, "BN_bin2bn").map(|_| ())
    }

    /// A copy of a borrowed BIGNUM; an error if it is NULL.
    ///
    /// # Safety
    /// `src` is NULL or points to a valid BIGNUM for the call.
    unsafe fn copy_of(src: *const ffi::BIGNUM) -> Result<BigNum, AwsLcError> {
        if src.is_null() {
            return Err(AwsLcError::Call {
                op: "BN_dup",
                reason: "the key lacks a value".into(),
            });
        }
        // SAFETY: `src` is a valid BIGNUM (the caller's contract); BN_dup
        // returns a new one, owned at once.
        made(unsafe { ffi::BN_dup(src) }, "BN_dup").map(BigNum)
    }

    fn as_ptr(&self) -> *mut ffi::BIGNUM {
        self.0.as_ptr()
    }

    /// Big-endian bytes, without leading zeros (empty for zero).
    pub fn to_be_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_be_bytes(&mut out);
        out
    }

    /// Big-endian bytes, without leading zeros, into `out` (reusing its
    /// memory).
    pub fn write_be_bytes(&self, out: &mut Vec<u8>) {
        // SAFETY: the BIGNUM is valid; BN_bn2bin writes exactly
        // BN_num_bytes bytes into `out`, resized to that length.
        unsafe {
            out.clear();
            out.resize(ffi::BN_num_bytes(self.as_ptr()) as usize, 0);
            let n = ffi::BN_bn2bin(self.as_ptr(), out.as_mut_ptr());
            out.truncate(n);
        }
    }

    /// Set to `other`'s value.
    pub fn copy_from(&mut self, other: &BigNum) -> Result<(), AwsLcError> {
        // SAFETY: both valid and distinct (`self` is borrowed mutably);
        // BN_copy writes only `self`.
        let r = unsafe { ffi::BN_copy(self.as_ptr(), other.as_ptr()) };
        made(r, "BN_copy").map(|_| ())
    }

    pub fn num_bits(&self) -> usize {
        // SAFETY: the BIGNUM is valid and only read.
        unsafe { ffi::BN_num_bits(self.as_ptr()) as usize }
    }

    /// Bit `i` (0 is the least significant); false beyond the top.
    pub fn bit(&self, i: usize) -> bool {
        let Ok(i) = c_int::try_from(i) else {
            return false;
        };
        // SAFETY: the BIGNUM is valid and only read; aws-lc returns 0 for
        // bits past its width.
        unsafe { ffi::BN_is_bit_set(self.as_ptr(), i) == 1 }
    }

    pub fn is_zero(&self) -> bool {
        // SAFETY: the BIGNUM is valid and only read.
        unsafe { ffi::BN_is_zero(self.as_ptr()) == 1 }
    }

    /// Compares absolute values (all of ours are non-negative).
    pub fn ucmp(&self, other: &BigNum) -> std::cmp::Ordering {
        // SAFETY: both BIGNUMs are valid and only read.
        unsafe { ffi::BN_ucmp(self.as_ptr(), other.as_ptr()) }.cmp(&0)
    }

    /// self^-1 mod `m`, into `out`; an error if there is none.
    pub fn mod_inverse_into(
        &self,
        out: &mut BigNum,
        m: &BigNum,
        ctx: &BnCtx,
    ) -> Result<(), AwsLcError> {
        // SAFETY: all BIGNUMs and the BN_CTX are valid, `out` is a
        // distinct BIGNUM (it is borrowed mutably); aws-lc writes only it.
        let r =
            unsafe { ffi::BN_mod_inverse(out.as_ptr(), self.as_ptr(), m.as_ptr(), ctx.as_ptr()) };
        made(r, "BN_mod_inverse").map(|_| ())
    }

    /// a · b mod `m`, into `out`.
    pub fn mod_mul_into(
        out: &mut BigNum,
        a: &BigNum,
        b: &BigNum,
        m: &BigNum,
        ctx: &BnCtx,
    ) -> Result<(), AwsLcError> {
        // SAFETY: all BIGNUMs and the BN_CTX are valid; aws-lc writes
        // only `out`.
        let ok = unsafe {
            ffi::BN_mod_mul(
                out.as_ptr(),
                a.as_ptr(),
                b.as_ptr(),
                m.as_ptr(),
                ctx.as_ptr(),
            )
        };
        check(ok, "BN_mod_mul")
    }

    /// a mod `m` (non-negative), into `out`.
    pub fn nnmod_into(
        out: &mut BigNum,
        a: &BigNum,
        m: &BigNum,
        ctx: &BnCtx,
    ) -> Result<(), AwsLcError> {
        // SAFETY: all valid; aws-lc writes only `out`.
        let ok = unsafe { ffi::BN_nnmod(out.as_ptr(), a.as_ptr(), m.as_ptr(), ctx.as_ptr()) };
        check(ok, "BN_nnmod")
    }

    /// base^exp mod m with aws-lc's `BN_mod_exp_mont` (one sliding-window
    /// exponentiation, variable time: for public values), into `out`.
    pub fn mod_exp_into(
        out: &mut BigNum,
        base: &BigNum,
        exp: &BigNum,
        mont: &MontCtx,
        ctx: &BnCtx,
    ) -> Result<(), AwsLcError> {
        // SAFETY: all valid; `mont` was made for its modulus, which the
        // call takes from it as well; aws-lc writes only `out`.
        let ok = unsafe {
            ffi::BN_mod_exp_mont(
                out.as_ptr(),
                base.as_ptr(),
                exp.as_ptr(),
                mont.modulus.as_ptr(),
                ctx.as_ptr(),
                mont.ctx.as_ptr(),
            )
        };
        check(ok, "BN_mod_exp_mont")
    }
}

/// An owned `BN_CTX` (aws-lc's scratch space for bignum operations).
pub struct BnCtx(NonNull<ffi::BN_CTX>);

// SAFETY: a BN_CTX is scratch memory with no thread affinity, owned here
// exclusively.
unsafe impl Send for BnCtx {}

impl Drop for BnCtx {
    fn drop(&mut self) {
        // SAFETY: owned by this `BnCtx` alone and freed once.
        unsafe { ffi::BN_CTX_free(self.0.as_ptr()) };
    }
}

impl BnCtx {
    pub fn new() -> Result<BnCtx, AwsLcError> {
        // SAFETY: BN_CTX_new has no arguments; the result is owned at once.
        made(unsafe { ffi::BN_CTX_new() }, "BN_CTX_new").map(BnCtx)
    }

    fn as_ptr(&self) -> *mut ffi::BN_CTX {
        self.0.as_ptr()
    }
}

/// Montgomery arithmetic modulo an odd number, with aws-lc's
/// `BN_mod_mul_montgomery` (its assembly `bn_mul_mont`, the same code
/// its own exponentiations use: MULX/ADX and a dedicated squaring on
/// x86-64).
pub struct MontCtx {
    ctx: NonNull<ffi::BN_MONT_CTX>,
    modulus: BigNum,
}

// SAFETY: a BN_MONT_CTX is immutable after creation and has no thread
// affinity; `MontCtx` owns it and its modulus exclusively.
unsafe impl Send for MontCtx {}

impl Drop for MontCtx {
    fn drop(&mut self) {
        // SAFETY: owned by this `MontCtx` alone and freed once.
        unsafe { ffi::BN_MONT_CTX_free(self.ctx.as_ptr()) };
    }
}

impl MontCtx {
    /// The context for `modulus`, which must be odd and above 1.
    pub fn new(modulus: &BigNum, ctx: &BnCtx) -> Result<MontCtx, AwsLcError> {
        // SAFETY: both valid; aws-lc copies the modulus (and refuses an
        // even one); the result is owned at once.
        let raw = unsafe { ffi::BN_MONT_CTX_new_for_modulus(modulus.as_ptr(), ctx.as_ptr()) };
        let mont = made(raw, "BN_MONT_CTX_new_for_modulus")?;
        // SAFETY: `modulus` is valid; the copy is owned at once.
        let copy = unsafe { BigNum::copy_of(modulus.as_ptr()) };
        match copy {
            Ok(modulus) => Ok(MontCtx { ctx: mont, modulus }),
            Err(e) => {
                // SAFETY: not yet owned by a `MontCtx`; freed once.
                unsafe { ffi::BN_MONT_CTX_free(mont.as_ptr()) };
                Err(e)
            }
        }
    }

    pub fn modulus(&self) -> &BigNum {
        &self.modulus
    }

    /// a (below the modulus) into Montgomery form, into `out`.
    pub fn to_mont(&self, out: &mut BigNum, a: &BigNum, ctx: &BnCtx) -> Result<(), AwsLcError> {
        if a.ucmp(&self.modulus).is_ge() {
            return Err(AwsLcError::Call {
                op: "BN_to_montgomery",
                reason: "the value is not below the modulus".into(),
            });
        }
        // SAFETY: all valid and `a` is reduced (checked above), as
        // BN_to_montgomery requires; aws-lc writes only `out`.
        let ok = unsafe {
            ffi::BN_to_montgomery(out.as_ptr(), a.as_ptr(), self.ctx.as_ptr(), ctx.as_ptr())
        };
        check(ok, "BN_to_montgomery")
    }

    /// a out of Montgomery form, into `out`.
    pub fn from_mont(&self, out: &mut BigNum, a: &BigNum, ctx: &BnCtx) -> Result<(), AwsLcError> {
        // SAFETY: all valid; aws-lc writes only `out`.
        let ok = unsafe {
            ffi::BN_from_montgomery(out.as_ptr(), a.as_ptr(), self.ctx.as_ptr(), ctx.as_ptr())
        };
        check(ok, "BN_from_montgomery")
    }

    /// a · b / R mod m (both in Montgomery form), into `out`.
    pub fn mul(
        &self,
        out: &mut BigNum,
        a: &BigNum,
        b: &BigNum,
        ctx: &BnCtx,
    ) -> Result<(), AwsLcError> {
        self.mul_raw(out.as_ptr(), a.as_ptr(), b.as_ptr(), ctx)
    }

    /// acc · b / R mod m, in place.
    pub fn mul_assign(&self, acc: &mut BigNum, b: &BigNum, ctx: &BnCtx) -> Result<(), AwsLcError> {
        self.mul_raw(acc.as_ptr(), acc.as_ptr(), b.as_ptr(), ctx)
    }

    /// acc² / R mod m, in place (`bn_mul_mont` sees equal operands and
    /// takes its squaring path).
    pub fn square_assign(&self, acc: &mut BigNum, ctx: &BnCtx) -> Result<(), AwsLcError> {
        self.mul_raw(acc.as_ptr(), acc.as_ptr(), acc.as_ptr(), ctx)
    }

    fn mul_raw(
        &self,
        out: *mut ffi::BIGNUM,
        a: *const ffi::BIGNUM,
        b: *const ffi::BIGNUM,
        ctx: &BnCtx,
    ) -> Result<(), AwsLcError> {
        // SAFETY: the pointers come from live `BigNum`s borrowed by the
        // callers (`out` mutably), and the values are in Montgomery form,
        // so below the modulus (they come from `to_mont` or `mul`).
        // BN_mod_mul_montgomery allows `out` to be `a` and/or `b`:
        // aws-lc's own `BN_mod_exp_mont` calls it as (r, r, r) and
        // (r, r, x).
        let ok = unsafe { ffi::BN_mod_mul_montgomery(out, a, b, self.ctx.as_ptr(), ctx.as_ptr()) };
        check(ok, "BN_mod_mul_montgomery")
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

    /// The hand-built P-192 group: FIPS 186-4's generator times 1 is the
    /// generator, a point off the curve and a scalar of 0 are refused,
    /// and ECDH needs both keys on P-192.
    #[test]
    fn p192_keys_are_on_the_hand_built_curve() {
        let one = Key::p192_private(&[1]).unwrap();
        let mut g = vec![0x04];
        g.extend_from_slice(&P192_GX);
        g.extend_from_slice(&P192_GY);
        assert_eq!(one.ec_public_point().unwrap(), g);
        assert_eq!(one.kind(), KeyKind::EcP192);
        let public = Key::p192_public(&g).unwrap();
        let mut off = g.clone();
        off[48] ^= 1;
        assert!(matches!(
            Key::p192_public(&off),
            Err(AwsLcError::Call { .. })
        ));
        assert!(Key::p192_public(&g[..40]).is_err());
        assert!(Key::p192_private(&[0]).is_err());
        assert!(Key::p192_private(&P192_N).is_err());
        let mut out = [0u8; 24];
        assert_eq!(one.ecdh(&public, &mut out).unwrap(), 24);
        assert_eq!(out[..], P192_GX[..]);
        let p224 = Key::from_spki(
            include_bytes!("crypto/keys/ecdh-p224-peer.pub.der"),
            KeyKind::EcP224,
        )
        .unwrap();
        assert!(matches!(
            one.ecdh(&p224, &mut out),
            Err(AwsLcError::WrongKey { .. })
        ));
        let dsa =
            Key::from_pkcs8(include_bytes!("crypto/keys/dsa-1024.pk8.der"), KeyKind::Dsa).unwrap();
        assert!(dsa.ec_public_point().is_err());
        assert!(one.dsa_public().is_err());
        assert!(dsa.dsa_public().is_ok());
    }
}
