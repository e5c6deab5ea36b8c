//! Public-key operations of the crypto family: RSA, DSA, ECDSA and Ed25519
//! sign and verify, ECDH (P-192, P-224, P-256, P-384, P-521) and X25519 key agreement,
//! with fixed keys and the known answers each is checked against before it
//! is timed.
//!
//! Implementation: aws-lc (`aws-lc-rs`) for most rows. It carries
//! OpenSSL's RSA code with the AVX-512 IFMA and MULX/ADX Montgomery
//! multiplications, OpenSSL's P-256 assembly, and formally verified
//! s2n-bignum code for P-384, P-521 and Curve25519, so it matches or beats
//! `openssl speed` (docs/performance.md); `ring` has no P-521 and no IFMA
//! RSA, and RustCrypto's RSA is several times slower.
//!
//! Some rows of the old `openssl speed` tables have two implementations,
//! and the implementation trial (`crate::implementation`, in operations
//! per second) picks the faster on this CPU; the choice is in the result's
//! details, the workload is the same either way:
//! - `crypto.rsa-1024`: aws-lc-rs refuses RSA signing keys below 2048
//!   bits, so aws-lc's C API (`crate::awslc`) signs, and RustCrypto's `rsa`
//!   (portable code, boxed big integers allocated in every operation) is
//!   the other candidate. RSA-512 is not a row: the `rsa` crate refuses
//!   moduli below 1024 bits as well. sysgauge's own signer (`rsa1024.rs`,
//!   on the `mont512` kernel: `sysgauge-mulx-adx`, or `sysgauge` where the
//!   CPU lacks MULX/ADX) is the third; it verifies with aws-lc's C API.
//! - `crypto.dsa-1024`, `crypto.dsa-2048`: aws-lc's DSA (C API; aws-lc-rs
//!   has no DSA) or RustCrypto's `dsa`, whose signing sits behind the
//!   crate's `hazmat` feature (FIPS 186-5 retired DSA signing). Both sign
//!   SHA-256 of the message; `dsa` takes its nonces from RFC 6979, aws-lc
//!   draws them at random. The keys are RFC 6979's (appendix A.2), so
//!   `dsa`'s deterministic signature of "sample" is checked against the
//!   RFC, and the RFC's signature must verify under aws-lc; OpenSSL's
//!   (randomised) signature of `MESSAGE` must verify under either. The
//!   crate refuses 512-bit parameters, so `dsa 512 bits` is not a row.
//!   A third candidate, `aws-lc multiexp`, signs with aws-lc and verifies
//!   with `crate::crypto::dsa_verify` (g^u1 · y^u2 in one simultaneous
//!   exponentiation on aws-lc's Montgomery arithmetic, where aws-lc does
//!   two); it passes the same known answers.
//! - `crypto.ecdsa-p224`, `crypto.ecdh-p224`: aws-lc's P-224 (C API, its
//!   64-bit fiat-crypto code; aws-lc-rs does not expose the curve) or
//!   RustCrypto's `p224` 0.13. ECDSA signs SHA-224 of the message (the hash
//!   `p224` signs with).
//!
//! - `crypto.ecdsa-p192`, `crypto.ecdh-p192`: aws-lc's generic prime-curve
//!   code on a P-192 group built from the FIPS 186-4 parameters (C API;
//!   aws-lc has no built-in P-192), or RustCrypto's `p192` 0.13. `p192`
//!   deliberately implements ECDSA verification only (NIST SP 800-131A
//!   forbids signing below 112 bits of security), so with it the row has a
//!   verify/s and no sign/s. The trial leaves it out while aws-lc passes
//!   its known answers (`SignCandidates::partial`): its operation would be
//!   a verification where aws-lc's is a signature and a verification.
//!
//! RustCrypto's ECDH on P-192 and P-224 is `elliptic-curve`'s generic
//! Diffie-Hellman over the crate's arithmetic. The curve keys are RFC 6979's (appendix
//! A.2.3 and A.2.4): P-224's deterministic `p224` signature of "sample"
//! must be the RFC's (with SHA-224, the hash its RFC 6979 nonces use), and
//! the RFC's SHA-256 signatures of "sample" must verify on both curves
//! (under aws-lc too). P-192 signs and verifies SHA-256 of `MESSAGE`;
//! aws-lc's P-192 public key must be the one `p192` computes from the
//! same scalar. Each ECDH secret is checked against the one `openssl
//! pkeyutl -derive` made from the same keys (`keys/ecdh-p*.secret`).
//!
//! The keys are fixed (generated once with OpenSSL, in `keys/`): generating
//! RSA-4096 keys at run time takes seconds and would eat the time budget.
//! Like `openssl speed`, each operation signs or verifies one short message
//! (RSA PKCS#1 v1.5 with SHA-256, ECDSA with the curve's SHA-2, Ed25519
//! pure), and an ECDH operation derives one shared secret from a fixed
//! private key and the peer's public key.

use super::rsa1024::{self, Rsa1024Signer};
use crate::awslc;
use crate::crypto::dsa_verify::DsaVerifier;
use crate::implementation::{Candidates, TrialUnit, Worker};
use aws_lc_rs::agreement;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use sysgauge_family::util::hex;
use thiserror::Error;

/// RustCrypto's PKCS#1 v1.5 keys with SHA-256 (the `rsa-1024` row).
type RustRsaSigning = rsa::pkcs1v15::SigningKey<sha2::Sha256>;
type RustRsaVerifying = rsa::pkcs1v15::VerifyingKey<sha2::Sha256>;

/// The message every signature covers.
pub const MESSAGE: &[u8] = b"sysgauge known answer";

/// The aws-lc implementation (through aws-lc-rs, or its C API where
/// aws-lc-rs does not go: `crate::awslc`).
pub const AWS_LC: &str = "aws-lc";

/// DSA: aws-lc signs, `crate::crypto::dsa_verify` verifies.
pub const AWS_LC_MULTIEXP: &str = "aws-lc multiexp";

/// A signature algorithm with a fixed key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignAlg {
    Rsa1024,
    Rsa2048,
    Rsa3072,
    Rsa4096,
    Dsa1024,
    Dsa2048,
    EcdsaP192,
    EcdsaP224,
    EcdsaP256,
    EcdsaP384,
    EcdsaP521,
    Ed25519,
}

/// A key agreement with fixed keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KexAlg {
    EcdhP192,
    EcdhP224,
    EcdhP256,
    EcdhP384,
    EcdhP521,
    X25519,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PubkeyError {
    /// The library cannot do this algorithm (a skip, not a failure).
    #[error("{alg}: {reason}")]
    Unsupported { alg: &'static str, reason: String },
    #[error("{alg}: {what}")]
    Failed { alg: &'static str, what: String },
}

impl SignAlg {
    /// `openssl speed`'s order: RSA, DSA, ECDSA, EdDSA.
    pub const ALL: [SignAlg; 12] = [
        SignAlg::Rsa1024,
        SignAlg::Rsa2048,
        SignAlg::Rsa3072,
        SignAlg::Rsa4096,
        SignAlg::Dsa1024,
        SignAlg::Dsa2048,
        SignAlg::EcdsaP192,
        SignAlg::EcdsaP224,
        SignAlg::EcdsaP256,
        SignAlg::EcdsaP384,
        SignAlg::EcdsaP521,
        SignAlg::Ed25519,
    ];

    pub fn id(self) -> &'static str {
        match self {
            SignAlg::Rsa1024 => "crypto.rsa-1024",
            SignAlg::Rsa2048 => "crypto.rsa-2048",
            SignAlg::Rsa3072 => "crypto.rsa-3072",
            SignAlg::Rsa4096 => "crypto.rsa-4096",
            SignAlg::Dsa1024 => "crypto.dsa-1024",
            SignAlg::Dsa2048 => "crypto.dsa-2048",
            SignAlg::EcdsaP192 => "crypto.ecdsa-p192",
            SignAlg::EcdsaP224 => "crypto.ecdsa-p224",
            SignAlg::EcdsaP256 => "crypto.ecdsa-p256",
            SignAlg::EcdsaP384 => "crypto.ecdsa-p384",
            SignAlg::EcdsaP521 => "crypto.ecdsa-p521",
            SignAlg::Ed25519 => "crypto.ed25519",
        }
    }

    /// Display name in the `openssl speed` table style.
    pub fn name(self) -> &'static str {
        match self {
            SignAlg::Rsa1024 => "rsa 1024 bits",
            SignAlg::Rsa2048 => "rsa 2048 bits",
            SignAlg::Rsa3072 => "rsa 3072 bits",
            SignAlg::Rsa4096 => "rsa 4096 bits",
            SignAlg::Dsa1024 => "dsa 1024 bits",
            SignAlg::Dsa2048 => "dsa 2048 bits",
            SignAlg::EcdsaP192 => "ecdsa 192 bits (nistp192)",
            SignAlg::EcdsaP224 => "ecdsa 224 bits (nistp224)",
            SignAlg::EcdsaP256 => "ecdsa 256 bits (nistp256)",
            SignAlg::EcdsaP384 => "ecdsa 384 bits (nistp384)",
            SignAlg::EcdsaP521 => "ecdsa 521 bits (nistp521)",
            SignAlg::Ed25519 => "EdDSA 253 bits (Ed25519)",
        }
    }

    /// The argument `openssl speed` takes for it.
    pub fn openssl_name(self) -> &'static str {
        match self {
            SignAlg::Rsa1024 => "rsa1024",
            SignAlg::Rsa2048 => "rsa2048",
            SignAlg::Rsa3072 => "rsa3072",
            SignAlg::Rsa4096 => "rsa4096",
            SignAlg::Dsa1024 => "dsa1024",
            SignAlg::Dsa2048 => "dsa2048",
            SignAlg::EcdsaP192 => "ecdsap192",
            SignAlg::EcdsaP224 => "ecdsap224",
            SignAlg::EcdsaP256 => "ecdsap256",
            SignAlg::EcdsaP384 => "ecdsap384",
            SignAlg::EcdsaP521 => "ecdsap521",
            SignAlg::Ed25519 => "ed25519",
        }
    }

    /// The implementations that can run it, in order of preference (the
    /// first is used when the trial is a tie).
    pub fn implementations(self) -> &'static [&'static str] {
        match self {
            SignAlg::Rsa1024 => &[
                AWS_LC,
                "rustcrypto rsa",
                rsa1024::SYSGAUGE_MULX_ADX,
                rsa1024::SYSGAUGE_PORTABLE,
            ],
            SignAlg::Dsa1024 | SignAlg::Dsa2048 => &[AWS_LC_MULTIEXP, AWS_LC, "rustcrypto dsa"],
            SignAlg::EcdsaP224 => &[AWS_LC, "rustcrypto p224"],
            SignAlg::EcdsaP192 => &[AWS_LC, "rustcrypto p192"],
            _ => &[AWS_LC],
        }
    }

    /// Whether this CPU runs `implementation` (sysgauge's MULX/ADX signer
    /// needs those instructions; the others run everywhere).
    pub fn runs_here(self, implementation: &str) -> bool {
        rsa1024::backend_for(implementation).is_some()
            || ![rsa1024::SYSGAUGE_MULX_ADX, rsa1024::SYSGAUGE_PORTABLE].contains(&implementation)
    }

    /// The preferred implementation's signer (see [`SignAlg::signer_with`]).
    pub fn signer(self) -> Result<Signer, PubkeyError> {
        let first = self.implementations().first().copied().unwrap_or(AWS_LC);
        self.signer_with(first)
    }

    /// Load the fixed key into `implementation` (one of
    /// [`SignAlg::implementations`]); `self_test` checks the known answers.
    pub fn signer_with(self, implementation: &str) -> Result<Signer, PubkeyError> {
        let fail = |what: &str| PubkeyError::Failed {
            alg: self.name(),
            what: what.to_string(),
        };
        known_implementation(self.name(), implementation, self.implementations())?;
        if implementation == AWS_LC && self == SignAlg::EcdsaP192 {
            let (key, public) = aws_lc_p192_keys().map_err(|e| fail(&e))?;
            let len = key.max_signature_len();
            return Ok(Signer::new(
                self,
                SignKey::AwsLcC(key, awslc::Hash::Sha256),
                Public::AwsLcC(public, awslc::Hash::Sha256),
                len,
            ));
        }
        if let (SignAlg::Rsa1024, Some(backend)) = (self, rsa1024::backend_for(implementation)) {
            let der = include_bytes!("keys/rsa-1024.pk8.der");
            let signer =
                Rsa1024Signer::from_pkcs8(der, backend).map_err(|e| fail(&e.to_string()))?;
            let public = awslc::Key::from_pkcs8(der, awslc::KeyKind::Rsa)
                .map_err(|e| fail(&format!("key: {e}")))?;
            return Ok(Signer::new(
                self,
                SignKey::Sysgauge(Box::new(signer), backend_name(implementation)),
                Public::AwsLcC(public, awslc::Hash::Sha256),
                rsa1024::SIGNATURE_LEN,
            ));
        }
        if !self.runs_here(implementation) {
            return Err(PubkeyError::Unsupported {
                alg: self.name(),
                reason: format!("implementation '{implementation}' does not run on this CPU"),
            });
        }
        if implementation == AWS_LC || implementation == AWS_LC_MULTIEXP {
            if let Some((der, kind, hash)) = self.aws_lc_c_key() {
                let key =
                    awslc::Key::from_pkcs8(der, kind).map_err(|e| fail(&format!("key: {e}")))?;
                let public =
                    awslc::Key::from_pkcs8(der, kind).map_err(|e| fail(&format!("key: {e}")))?;
                let public = if implementation == AWS_LC_MULTIEXP {
                    let v = DsaVerifier::new(&public).map_err(|e| fail(&format!("key: {e}")))?;
                    Public::DsaMultiExp(Box::new(v), hash)
                } else {
                    Public::AwsLcC(public, hash)
                };
                let len = key.max_signature_len();
                return Ok(Signer::new(self, SignKey::AwsLcC(key, hash), public, len));
            }
        }
        let s = match self {
            SignAlg::Rsa1024 => {
                use rsa::pkcs8::DecodePrivateKey;
                use rsa::signature::Keypair;
                let key = RustRsaSigning::from_pkcs8_der(include_bytes!("keys/rsa-1024.pk8.der"))
                    .map_err(|e| fail(&format!("key: {e}")))?;
                let public = Public::RustRsa(key.verifying_key());
                Signer::new(self, SignKey::RustRsa(Box::new(key)), public, 128)
            }
            SignAlg::Dsa1024 | SignAlg::Dsa2048 => {
                use dsa::pkcs8::DecodePrivateKey;
                let der = match self {
                    SignAlg::Dsa1024 => &include_bytes!("keys/dsa-1024.pk8.der")[..],
                    _ => &include_bytes!("keys/dsa-2048.pk8.der")[..],
                };
                let key =
                    dsa::SigningKey::from_pkcs8_der(der).map_err(|e| fail(&format!("key: {e}")))?;
                let public = Public::Dsa(key.verifying_key().clone());
                Signer::new(self, SignKey::Dsa(Box::new(key)), public, 80)
            }
            SignAlg::EcdsaP224 => {
                use p224::pkcs8::DecodePrivateKey;
                let key =
                    p224::ecdsa::SigningKey::from_pkcs8_der(include_bytes!("keys/ec-p224.pk8.der"))
                        .map_err(|e| fail(&format!("key: {e}")))?;
                let public = Public::P224(*key.verifying_key());
                Signer::new(self, SignKey::P224(Box::new(key)), public, 80)
            }
            SignAlg::EcdsaP192 => {
                use p192::pkcs8::DecodePrivateKey;
                let key = elliptic_curve::SecretKey::<p192::NistP192>::from_pkcs8_der(
                    include_bytes!("keys/ec-p192.pk8.der"),
                )
                .map_err(|e| fail(&format!("key: {e}")))?;
                let public = Public::P192(p192::ecdsa::VerifyingKey::from(key.public_key()));
                // Nothing signs: the signature verified is OpenSSL's.
                let theirs: &[u8] = include_bytes!("keys/ec-p192.sig");
                Signer {
                    alg: self,
                    key: SignKey::VerifyOnly,
                    public,
                    rng: SystemRandom::new(),
                    sig: theirs.to_vec(),
                    sig_len: theirs.len(),
                }
            }
            SignAlg::Rsa2048 | SignAlg::Rsa3072 | SignAlg::Rsa4096 => {
                let der = match self {
                    SignAlg::Rsa2048 => &include_bytes!("keys/rsa-2048.pk8.der")[..],
                    SignAlg::Rsa3072 => &include_bytes!("keys/rsa-3072.pk8.der")[..],
                    _ => &include_bytes!("keys/rsa-4096.pk8.der")[..],
                };
                let kp = RsaKeyPair::from_pkcs8(der).map_err(|e| fail(&format!("key: {e}")))?;
                let public = signature::ParsedPublicKey::new(
                    &signature::RSA_PKCS1_2048_8192_SHA256,
                    kp.public_key().as_ref(),
                )
                .map_err(|e| fail(&format!("public key: {e}")))?;
                let len = kp.public_modulus_len();
                Signer {
                    sig_len: len,
                    ..Signer::new(self, SignKey::Rsa(kp), Public::AwsLc(public), len)
                }
            }
            SignAlg::EcdsaP256 | SignAlg::EcdsaP384 | SignAlg::EcdsaP521 => {
                let (der, sign_alg, verify_alg): (&[u8], _, _) = match self {
                    SignAlg::EcdsaP256 => (
                        &include_bytes!("keys/ec-p256.pk8.der")[..],
                        &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                        &signature::ECDSA_P256_SHA256_ASN1,
                    ),
                    SignAlg::EcdsaP384 => (
                        &include_bytes!("keys/ec-p384.pk8.der")[..],
                        &signature::ECDSA_P384_SHA384_ASN1_SIGNING,
                        &signature::ECDSA_P384_SHA384_ASN1,
                    ),
                    _ => (
                        &include_bytes!("keys/ec-p521.pk8.der")[..],
                        &signature::ECDSA_P521_SHA512_ASN1_SIGNING,
                        &signature::ECDSA_P521_SHA512_ASN1,
                    ),
                };
                let kp = EcdsaKeyPair::from_pkcs8(sign_alg, der)
                    .map_err(|e| fail(&format!("key: {e}")))?;
                let public = signature::ParsedPublicKey::new(verify_alg, kp.public_key().as_ref())
                    .map_err(|e| fail(&format!("public key: {e}")))?;
                Signer::new(self, SignKey::Ecdsa(kp), Public::AwsLc(public), 160)
            }
            SignAlg::Ed25519 => {
                let kp = Ed25519KeyPair::from_seed_unchecked(&ED25519_SEED)
                    .map_err(|e| fail(&format!("key: {e}")))?;
                let public =
                    signature::ParsedPublicKey::new(&signature::ED25519, kp.public_key().as_ref())
                        .map_err(|e| fail(&format!("public key: {e}")))?;
                Signer::new(self, SignKey::Ed25519(kp), Public::AwsLc(public), 64)
            }
        };
        Ok(s)
    }
}

impl SignAlg {
    /// The fixed key, its kind and the hash signed with, for the algorithms
    /// whose aws-lc implementation is its C API (`crate::awslc`): RSA-1024
    /// (aws-lc-rs does not sign with it), DSA and P-224 (not in
    /// aws-lc-rs). The hash is the one the RustCrypto candidate uses, so
    /// both do the same work.
    fn aws_lc_c_key(self) -> Option<(&'static [u8], awslc::KeyKind, awslc::Hash)> {
        use awslc::{Hash, KeyKind};
        Some(match self {
            SignAlg::Rsa1024 => (
                include_bytes!("keys/rsa-1024.pk8.der"),
                KeyKind::Rsa,
                Hash::Sha256,
            ),
            SignAlg::Dsa1024 => (
                include_bytes!("keys/dsa-1024.pk8.der"),
                KeyKind::Dsa,
                Hash::Sha256,
            ),
            SignAlg::Dsa2048 => (
                include_bytes!("keys/dsa-2048.pk8.der"),
                KeyKind::Dsa,
                Hash::Sha256,
            ),
            SignAlg::EcdsaP224 => (
                include_bytes!("keys/ec-p224.pk8.der"),
                KeyKind::EcP224,
                Hash::Sha224,
            ),
            _ => return None,
        })
    }
}

/// aws-lc's P-192 signing key and public key from `keys/ec-p192.pk8.der`
/// (aws-lc cannot parse a key on a curve it does not name, so `p192`
/// reads the file). The public point aws-lc computes from the scalar must
/// be the one `p192` computes: a check of the hand-built group.
fn aws_lc_p192_keys() -> Result<(awslc::Key, awslc::Key), String> {
    use p192::elliptic_curve::sec1::ToEncodedPoint as _;
    use p192::pkcs8::DecodePrivateKey;
    let secret = elliptic_curve::SecretKey::<p192::NistP192>::from_pkcs8_der(include_bytes!(
        "keys/ec-p192.pk8.der"
    ))
    .map_err(|e| format!("key: {e}"))?;
    let key = awslc::Key::p192_private(&secret.to_bytes()).map_err(|e| format!("key: {e}"))?;
    let theirs = secret.public_key().to_encoded_point(false);
    let ours = key.ec_public_point().map_err(|e| format!("key: {e}"))?;
    if ours != theirs.as_bytes() {
        return Err("aws-lc's P-192 public key differs from p192's for the same scalar".into());
    }
    let public = awslc::Key::p192_public(&ours).map_err(|e| format!("public key: {e}"))?;
    Ok((key, public))
}

/// The static name of sysgauge's RSA-1024 signer `name` stands for.
fn backend_name(name: &str) -> &'static str {
    if name == rsa1024::SYSGAUGE_MULX_ADX {
        rsa1024::SYSGAUGE_MULX_ADX
    } else {
        rsa1024::SYSGAUGE_PORTABLE
    }
}

/// `msg`'s digest with `hash`, into a buffer that fits either.
fn digest_of(hash: awslc::Hash, msg: &[u8]) -> ([u8; 32], usize) {
    use sha2::Digest as _;
    let mut out = [0u8; 32];
    let n = match hash {
        awslc::Hash::Sha224 => {
            out[..28].copy_from_slice(&sha2::Sha224::digest(msg));
            28
        }
        awslc::Hash::Sha256 => {
            out.copy_from_slice(&sha2::Sha256::digest(msg));
            32
        }
    };
    (out, n)
}

/// The DER encoding (SEQUENCE of two INTEGERs) of an (EC)DSA signature
/// given as big-endian r and s, as OpenSSL and aws-lc read it; `None` if
/// either is longer than a signature can be.
fn der_signature(r: &[u8], s: &[u8]) -> Option<Vec<u8>> {
    fn integer(out: &mut Vec<u8>, v: &[u8]) -> Option<()> {
        let first = v
            .iter()
            .position(|&b| b != 0)
            .unwrap_or(v.len().saturating_sub(1));
        let v = v.get(first..)?;
        let pad = v.first().is_some_and(|&b| b & 0x80 != 0);
        out.push(0x02);
        out.push(u8::try_from(v.len() + usize::from(pad)).ok()?);
        if pad {
            out.push(0);
        }
        out.extend_from_slice(v);
        Some(())
    }
    let mut body = Vec::with_capacity(72);
    integer(&mut body, r)?;
    integer(&mut body, s)?;
    // Short-form lengths only: DSA-2048's and P-224's fit.
    let len = u8::try_from(body.len()).ok().filter(|&l| l < 0x80)?;
    let mut der = vec![0x30, len];
    der.extend_from_slice(&body);
    Some(der)
}

/// RFC 8032 section 7.1, test 1: the secret key (seed).
const ED25519_SEED: [u8; 32] = [
    0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
    0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60,
];
/// Its public key (RFC 8032).
const ED25519_PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
/// Its signature of `MESSAGE`, made with OpenSSL.
const ED25519_SIG: &str = "ecf7aeaefeb41b3009f5118554e37b39b5149e79c2a10023346c222fe483af22948d63a16673738600a5718f6c0b431ed3113f83f2974456652d8935fa1e1b07";

enum SignKey {
    Rsa(RsaKeyPair),
    /// aws-lc's C API: RSA-1024, DSA, P-224, P-192, with the hash signed with.
    AwsLcC(awslc::Key, awslc::Hash),
    RustRsa(Box<RustRsaSigning>),
    /// sysgauge's RSA-1024 signer (`rsa1024.rs`) and its candidate name.
    Sysgauge(Box<Rsa1024Signer>, &'static str),
    Dsa(Box<dsa::SigningKey>),
    Ecdsa(EcdsaKeyPair),
    P224(Box<p224::ecdsa::SigningKey>),
    Ed25519(Ed25519KeyPair),
    /// The library only verifies (`p192`).
    VerifyOnly,
}

/// The public half a signer verifies with.
enum Public {
    AwsLc(signature::ParsedPublicKey),
    AwsLcC(awslc::Key, awslc::Hash),
    /// DSA verified by `crate::crypto::dsa_verify`.
    DsaMultiExp(Box<DsaVerifier>, awslc::Hash),
    RustRsa(RustRsaVerifying),
    Dsa(dsa::VerifyingKey),
    P224(p224::ecdsa::VerifyingKey),
    P192(p192::ecdsa::VerifyingKey),
}

/// A keyed signer/verifier. `sign` writes into its own buffer, so the timed
/// loop allocates nothing for RSA (ECDSA and Ed25519 return fixed-size
/// signatures on the stack).
pub struct Signer {
    alg: SignAlg,
    key: SignKey,
    public: Public,
    rng: SystemRandom,
    sig: Vec<u8>,
    sig_len: usize,
}

impl Signer {
    /// A signer of `alg` with `key` and its public half, with room for a
    /// signature of `max_sig` bytes and none made yet.
    fn new(alg: SignAlg, key: SignKey, public: Public, max_sig: usize) -> Signer {
        Signer {
            alg,
            key,
            public,
            rng: SystemRandom::new(),
            sig: vec![0u8; max_sig],
            sig_len: 0,
        }
    }

    pub fn alg(&self) -> SignAlg {
        self.alg
    }

    /// Which library signs and verifies (for the record's details).
    pub fn implementation(&self) -> &'static str {
        if matches!(self.public, Public::DsaMultiExp(..)) {
            return AWS_LC_MULTIEXP;
        }
        match self.key {
            SignKey::RustRsa(_) => "rustcrypto rsa",
            SignKey::Sysgauge(_, name) => name,
            SignKey::Dsa(_) => "rustcrypto dsa",
            SignKey::P224(_) => "rustcrypto p224",
            SignKey::VerifyOnly => "rustcrypto p192",
            SignKey::Rsa(_) | SignKey::AwsLcC(..) | SignKey::Ecdsa(_) | SignKey::Ed25519(_) => {
                AWS_LC
            }
        }
    }

    /// Whether the library signs (`p192` only verifies).
    pub fn can_sign(&self) -> bool {
        !matches!(self.key, SignKey::VerifyOnly)
    }

    fn fail(&self, what: &str) -> PubkeyError {
        PubkeyError::Failed {
            alg: self.alg.name(),
            what: what.to_string(),
        }
    }

    /// Sign `msg`; the signature is kept for `verify_last`.
    pub fn sign(&mut self, msg: &[u8]) -> Result<(), PubkeyError> {
        if let SignKey::Sysgauge(signer, _) = &mut self.key {
            let (digest, n) = digest_of(awslc::Hash::Sha256, msg);
            self.sig_len = signer
                .sign_sha256(&digest[..n], &mut self.sig)
                .map_err(|e| PubkeyError::Failed {
                    alg: self.alg.name(),
                    what: e.to_string(),
                })?;
            return Ok(());
        }
        match &self.key {
            SignKey::Rsa(kp) => {
                kp.sign(&signature::RSA_PKCS1_SHA256, &self.rng, msg, &mut self.sig)
                    .map_err(|_| self.fail("signing failed"))?;
                self.sig_len = kp.public_modulus_len();
            }
            SignKey::AwsLcC(key, hash) => {
                let (digest, n) = digest_of(*hash, msg);
                self.sig_len = key
                    .sign(*hash, &digest[..n], &mut self.sig)
                    .map_err(|e| self.fail(&e.to_string()))?;
            }
            SignKey::RustRsa(key) => {
                self.sig_len = sign_encoded::<_, rsa::pkcs1v15::Signature>(
                    self.alg,
                    &**key,
                    msg,
                    &mut self.sig,
                )?;
            }
            SignKey::Dsa(key) => {
                self.sig_len =
                    sign_encoded::<_, dsa::Signature>(self.alg, &**key, msg, &mut self.sig)?;
            }
            SignKey::Ecdsa(kp) => {
                let s = kp
                    .sign(&self.rng, msg)
                    .map_err(|_| self.fail("signing failed"))?;
                self.sig_len = keep_signature(self.alg, &mut self.sig, s.as_ref())?;
            }
            SignKey::P224(key) => {
                use p224::ecdsa::signature::Signer as _;
                let s: p224::ecdsa::Signature =
                    key.try_sign(msg).map_err(|_| self.fail("signing failed"))?;
                // DER, as OpenSSL's: `verify` takes either.
                self.sig_len = keep_signature(self.alg, &mut self.sig, s.to_der().as_bytes())?;
            }
            // Signed above.
            SignKey::Sysgauge(..) => {}
            SignKey::Ed25519(kp) => {
                let s = kp.sign(msg);
                self.sig[..64].copy_from_slice(s.as_ref());
                self.sig_len = 64;
            }
            SignKey::VerifyOnly => {
                return Err(PubkeyError::Unsupported {
                    alg: self.alg.name(),
                    reason: "p192 0.13 implements verification only".into(),
                })
            }
        }
        Ok(())
    }

    /// The last signature made.
    pub fn signature(&self) -> &[u8] {
        &self.sig[..self.sig_len]
    }

    /// Verify `sig` over `msg` with the key's public half.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<(), PubkeyError> {
        let ok = match &self.public {
            Public::AwsLc(p) => p.verify_sig(msg, sig).is_ok(),
            Public::AwsLcC(key, hash) => {
                let (digest, n) = digest_of(*hash, msg);
                key.verify(*hash, &digest[..n], sig)
            }
            Public::DsaMultiExp(v, hash) => {
                let (digest, n) = digest_of(*hash, msg);
                v.verify(&digest[..n], sig)
                    .map_err(|e| self.fail(&e.to_string()))?
            }
            Public::RustRsa(p) => {
                use rsa::signature::Verifier as _;
                rsa::pkcs1v15::Signature::try_from(sig).is_ok_and(|s| p.verify(msg, &s).is_ok())
            }
            Public::Dsa(p) => {
                use dsa::signature::Verifier as _;
                dsa::Signature::try_from(sig).is_ok_and(|s| p.verify(msg, &s).is_ok())
            }
            Public::P224(p) => {
                use p224::ecdsa::signature::Verifier as _;
                p224::ecdsa::Signature::from_der(sig).is_ok_and(|s| p.verify(msg, &s).is_ok())
            }
            Public::P192(p) => {
                use p192::ecdsa::signature::hazmat::PrehashVerifier as _;
                use sha2::Digest as _;
                let digest = sha2::Sha256::digest(msg);
                p192::ecdsa::Signature::from_der(sig)
                    .is_ok_and(|s| p.verify_prehash(&digest, &s).is_ok())
            }
        };
        if ok {
            Ok(())
        } else {
            Err(self.fail("the signature does not verify"))
        }
    }

    /// Known answers: RSA PKCS#1 v1.5 and Ed25519 are deterministic, so the
    /// signature must equal the one OpenSSL made with the same key; an
    /// ECDSA signature made by OpenSSL must verify; a tampered message must
    /// not; and our own signature must verify.
    pub fn self_test(&mut self) -> Result<(), PubkeyError> {
        // A verify-only signer holds OpenSSL's signature of `MESSAGE`.
        if self.can_sign() {
            self.sign(MESSAGE)?;
        }
        if let Some(sig) = openssl_signature(self.alg) {
            let randomised = matches!(
                self.alg,
                SignAlg::Dsa1024
                    | SignAlg::Dsa2048
                    | SignAlg::EcdsaP192
                    | SignAlg::EcdsaP224
                    | SignAlg::EcdsaP256
                    | SignAlg::EcdsaP384
                    | SignAlg::EcdsaP521
            );
            if randomised {
                // OpenSSL's (EC)DSA is randomised: its signature must verify.
                self.verify(MESSAGE, sig)?;
            } else if self.signature() != sig {
                return Err(self.fail("the signature differs from OpenSSL's for the same key"));
            }
        }
        if let SignKey::Dsa(key) = &self.key {
            dsa_rfc6979_answer(self.alg, key).map_err(|what| self.fail(what))?;
        }
        if let (SignKey::AwsLcC(..), Some((r, s))) = (&self.key, dsa_rfc6979_expected(self.alg)) {
            // aws-lc's DSA nonces are random, so the RFC's deterministic
            // signature cannot be reproduced: it must verify.
            let der = from_hex(r)
                .zip(from_hex(s))
                .and_then(|(r, s)| der_signature(&r, &s))
                .ok_or_else(|| self.fail("the RFC 6979 vector is not hex"))?;
            let (digest, n) = digest_of(awslc::Hash::Sha256, b"sample");
            let verified = match &self.public {
                Public::AwsLcC(key, _) => key.verify(awslc::Hash::Sha256, &digest[..n], &der),
                Public::DsaMultiExp(v, _) => v
                    .verify(&digest[..n], &der)
                    .map_err(|e| self.fail(&e.to_string()))?,
                _ => false,
            };
            if !verified {
                return Err(self.fail("the RFC 6979 signature of \"sample\" does not verify"));
            }
        }
        for sample in ecdsa_rfc6979_samples(self.alg) {
            self.ecdsa_rfc6979_answer(sample)
                .map_err(|what| self.fail(what))?;
        }
        if self.alg == SignAlg::Ed25519 {
            let public = match &self.public {
                Public::AwsLc(p) => hex(p.as_ref()),
                _ => String::new(),
            };
            if public != ED25519_PUBLIC {
                return Err(self.fail("the RFC 8032 public key does not match"));
            }
            if hex(self.signature()) != ED25519_SIG {
                return Err(self.fail("the signature differs from the known answer"));
            }
        }
        let own = self.signature().to_vec();
        self.verify(MESSAGE, &own)?;
        if self.verify(b"sysgauge known answeR", &own).is_ok() {
            return Err(self.fail("a signature over another message verified"));
        }
        Ok(())
    }
}

/// An error naming the implementations of the algorithm `alg` unless
/// `implementation` is one of them.
fn known_implementation(
    alg: &'static str,
    implementation: &str,
    implementations: &[&str],
) -> Result<(), PubkeyError> {
    if implementations.contains(&implementation) {
        return Ok(());
    }
    Err(PubkeyError::Unsupported {
        alg,
        reason: format!(
            "no implementation '{implementation}'; it has {}",
            implementations.join(", ")
        ),
    })
}

/// `msg` signed by a RustCrypto signer (`rsa`, `dsa`) into `sig`, encoded
/// as the crate encodes it (PKCS#1 v1.5, DER); its length.
fn sign_encoded<K, S>(
    alg: SignAlg,
    key: &K,
    msg: &[u8],
    sig: &mut [u8],
) -> Result<usize, PubkeyError>
where
    K: rsa::signature::Signer<S>,
    S: rsa::signature::SignatureEncoding,
{
    let s = key.try_sign(msg).map_err(|_| PubkeyError::Failed {
        alg: alg.name(),
        what: "signing failed".to_string(),
    })?;
    keep_signature(alg, sig, s.to_bytes().as_ref())
}

/// `s` copied into the signature buffer `sig`; its length.
fn keep_signature(alg: SignAlg, sig: &mut [u8], s: &[u8]) -> Result<usize, PubkeyError> {
    let kept = sig.get_mut(..s.len()).ok_or_else(|| PubkeyError::Failed {
        alg: alg.name(),
        what: "signature longer than expected".to_string(),
    })?;
    kept.copy_from_slice(s);
    Ok(s.len())
}

/// The signature OpenSSL made over `MESSAGE` with the same key (`keys/`),
/// where there is one: RSA and ECDSA.
fn openssl_signature(alg: SignAlg) -> Option<&'static [u8]> {
    Some(match alg {
        SignAlg::Rsa1024 => include_bytes!("keys/rsa-1024.sig"),
        SignAlg::Rsa2048 => include_bytes!("keys/rsa-2048.sig"),
        SignAlg::Rsa3072 => include_bytes!("keys/rsa-3072.sig"),
        SignAlg::Rsa4096 => include_bytes!("keys/rsa-4096.sig"),
        SignAlg::Dsa1024 => include_bytes!("keys/dsa-1024.sig"),
        SignAlg::Dsa2048 => include_bytes!("keys/dsa-2048.sig"),
        SignAlg::EcdsaP192 => include_bytes!("keys/ec-p192.sig"),
        SignAlg::EcdsaP224 => include_bytes!("keys/ec-p224.sig"),
        SignAlg::EcdsaP256 => include_bytes!("keys/ec-p256.sig"),
        SignAlg::EcdsaP384 => include_bytes!("keys/ec-p384.sig"),
        SignAlg::EcdsaP521 => include_bytes!("keys/ec-p521.sig"),
        SignAlg::Ed25519 => return None,
    })
}

/// RFC 6979 appendix A.2.1 and A.2.2: the (r, s) of "sample" signed with
/// SHA-256 under the RFC's DSA keys, which are `keys/dsa-*.pk8.der`.
fn dsa_rfc6979_expected(alg: SignAlg) -> Option<(&'static str, &'static str)> {
    match alg {
        SignAlg::Dsa1024 => Some((
            "81f2f5850be5bc123c43f71a3033e9384611c545",
            "4cdd914b65eb6c66a8aaad27299bee6b035f5e89",
        )),
        SignAlg::Dsa2048 => Some((
            "eace8bdbbe353c432a795d9ec556c6d021f7a03f42c36e9bc87e4ac7932cc809",
            "7081e175455f9247b812b74583e9e94f9ea79bd640dc962533b0680793a38d53",
        )),
        _ => None,
    }
}

/// The deterministic (RFC 6979) DSA signature of "sample" must be the RFC's.
fn dsa_rfc6979_answer(alg: SignAlg, key: &dsa::SigningKey) -> Result<(), &'static str> {
    use dsa::signature::Signer as _;
    let (r, s) = dsa_rfc6979_expected(alg).ok_or("no RFC 6979 vector for this key")?;
    let sig = key.try_sign(b"sample").map_err(|_| "signing failed")?;
    let trimmed = |n: &dsa::BoxedUint| {
        let h = hex(&n.to_be_bytes());
        let want = if h.len() > r.len() {
            h.len() - r.len()
        } else {
            0
        };
        h[want..].to_string()
    };
    if trimmed(sig.r()) == r && trimmed(sig.s()) == s {
        Ok(())
    } else {
        Err("the RFC 6979 signature of \"sample\" differs from the RFC's")
    }
}

/// The hash an RFC 6979 vector signs "sample" with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SampleHash {
    Sha224,
    Sha256,
}

/// One RFC 6979 signature of "sample": the hash, r and s in hex.
#[derive(Debug, Clone, Copy)]
struct Rfc6979Sample {
    hash: SampleHash,
    r: &'static str,
    s: &'static str,
}

/// RFC 6979 appendix A.2.3 (P-192) and A.2.4 (P-224): "sample" signed
/// under the RFC's keys, which are `keys/ec-p192.pk8.der` and
/// `keys/ec-p224.pk8.der`.
fn ecdsa_rfc6979_samples(alg: SignAlg) -> &'static [Rfc6979Sample] {
    match alg {
        SignAlg::EcdsaP192 => &[Rfc6979Sample {
            hash: SampleHash::Sha256,
            r: "4b0b8ce98a92866a2820e20aa6b75b56382e0f9bfd5ecb55",
            s: "ccdb006926ea9565cbadc840829d8c384e06de1f1e381b85",
        }],
        SignAlg::EcdsaP224 => &[
            Rfc6979Sample {
                hash: SampleHash::Sha224,
                r: "1cdfe6662dde1e4a1ec4cdedf6a1f5a2fb7fbd9145c12113e6abfd3e",
                s: "a6694fd7718a21053f225d3f46197ca699d45006c06f871808f43ebc",
            },
            Rfc6979Sample {
                hash: SampleHash::Sha256,
                r: "61aa3da010e8e8406c656bc477a7a7189895e7e840cdfe8ff42307ba",
                s: "bc814050dab5d23770879494f9e0a680dc1af7161991bde692b10101",
            },
        ],
        _ => &[],
    }
}

/// Bytes of a hex string (the known answers above); `None` if it is not hex.
fn from_hex(h: &str) -> Option<Vec<u8>> {
    (0..h.len())
        .step_by(2)
        .map(|i| h.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect()
}

impl Signer {
    /// An RFC 6979 vector: its signature must verify under the key, and
    /// where the library signs with the vector's hash (`p224` signs with
    /// SHA-224 and takes its RFC 6979 nonces from HMAC-SHA-224), our
    /// deterministic signature of "sample" must be the RFC's.
    fn ecdsa_rfc6979_answer(&self, sample: &Rfc6979Sample) -> Result<(), &'static str> {
        use p224::ecdsa::signature::hazmat::PrehashVerifier as _;
        use sha2::Digest as _;
        const DIFFERS: &str = "the RFC 6979 signature of \"sample\" differs from the RFC's";
        let rs = from_hex(&format!("{}{}", sample.r, sample.s)).ok_or(DIFFERS)?;
        let prehash = match sample.hash {
            SampleHash::Sha224 => sha2::Sha224::digest(b"sample").to_vec(),
            SampleHash::Sha256 => sha2::Sha256::digest(b"sample").to_vec(),
        };
        let verified = match &self.public {
            Public::P224(p) => p224::ecdsa::Signature::from_slice(&rs)
                .is_ok_and(|sig| p.verify_prehash(&prehash, &sig).is_ok()),
            Public::P192(p) => p192::ecdsa::Signature::from_slice(&rs)
                .is_ok_and(|sig| p.verify_prehash(&prehash, &sig).is_ok()),
            Public::AwsLcC(key, _)
                if matches!(key.kind(), awslc::KeyKind::EcP224 | awslc::KeyKind::EcP192) =>
            {
                let half = rs.len() / 2;
                let der = der_signature(&rs[..half], &rs[half..]).ok_or(DIFFERS)?;
                let hash = match sample.hash {
                    SampleHash::Sha224 => awslc::Hash::Sha224,
                    SampleHash::Sha256 => awslc::Hash::Sha256,
                };
                key.verify(hash, &prehash, &der)
            }
            _ => return Err("no RFC 6979 vector for this key"),
        };
        if !verified {
            return Err("the RFC 6979 signature of \"sample\" does not verify");
        }
        if let (SignKey::P224(key), SampleHash::Sha224) = (&self.key, sample.hash) {
            use p224::ecdsa::signature::Signer as _;
            let ours: p224::ecdsa::Signature =
                key.try_sign(b"sample").map_err(|_| "signing failed")?;
            if ours.to_bytes()[..] != rs[..] {
                return Err(DIFFERS);
            }
        }
        Ok(())
    }
}

impl KexAlg {
    pub const ALL: [KexAlg; 6] = [
        KexAlg::EcdhP192,
        KexAlg::EcdhP224,
        KexAlg::EcdhP256,
        KexAlg::EcdhP384,
        KexAlg::EcdhP521,
        KexAlg::X25519,
    ];

    pub fn id(self) -> &'static str {
        match self {
            KexAlg::EcdhP192 => "crypto.ecdh-p192",
            KexAlg::EcdhP224 => "crypto.ecdh-p224",
            KexAlg::EcdhP256 => "crypto.ecdh-p256",
            KexAlg::EcdhP384 => "crypto.ecdh-p384",
            KexAlg::EcdhP521 => "crypto.ecdh-p521",
            KexAlg::X25519 => "crypto.x25519",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KexAlg::EcdhP192 => "ecdh 192 bits (nistp192)",
            KexAlg::EcdhP224 => "ecdh 224 bits (nistp224)",
            KexAlg::EcdhP256 => "ecdh 256 bits (nistp256)",
            KexAlg::EcdhP384 => "ecdh 384 bits (nistp384)",
            KexAlg::EcdhP521 => "ecdh 521 bits (nistp521)",
            KexAlg::X25519 => "ecdh 253 bits (X25519)",
        }
    }

    pub fn openssl_name(self) -> &'static str {
        match self {
            KexAlg::EcdhP192 => "ecdhp192",
            KexAlg::EcdhP224 => "ecdhp224",
            KexAlg::EcdhP256 => "ecdhp256",
            KexAlg::EcdhP384 => "ecdhp384",
            KexAlg::EcdhP521 => "ecdhp521",
            KexAlg::X25519 => "ecdhx25519",
        }
    }

    /// aws-lc's algorithm (the curves it has; the others use RustCrypto).
    fn aws_lc(self) -> &'static agreement::Algorithm {
        match self {
            KexAlg::X25519 => &agreement::X25519,
            KexAlg::EcdhP384 => &agreement::ECDH_P384,
            KexAlg::EcdhP521 => &agreement::ECDH_P521,
            _ => &agreement::ECDH_P256,
        }
    }

    /// The implementations that can run it, in order of preference.
    pub fn implementations(self) -> &'static [&'static str] {
        match self {
            KexAlg::EcdhP224 => &[AWS_LC, "rustcrypto p224"],
            KexAlg::EcdhP192 => &[AWS_LC, "rustcrypto p192"],
            _ => &[AWS_LC],
        }
    }

    /// The preferred implementation's exchange (see [`KexAlg::exchange_with`]).
    pub fn exchange(self) -> Result<Exchange, PubkeyError> {
        let first = self.implementations().first().copied().unwrap_or(AWS_LC);
        self.exchange_with(first)
    }

    /// Fixed keys in `implementation` (one of [`KexAlg::implementations`]),
    /// checked against the known shared secret.
    pub fn exchange_with(self, implementation: &str) -> Result<Exchange, PubkeyError> {
        let fail = |what: String| PubkeyError::Failed {
            alg: self.name(),
            what,
        };
        known_implementation(self.name(), implementation, self.implementations())?;
        let c_api = implementation == AWS_LC && matches!(self, KexAlg::EcdhP224 | KexAlg::EcdhP192);
        let (key, expect): (KexKey, &[u8]) = match self {
            KexAlg::EcdhP192 if c_api => {
                // aws-lc has no P-192: its generic code on a hand-built
                // group (`crate::awslc`), the keys read by `p192`.
                use p192::elliptic_curve::sec1::ToEncodedPoint as _;
                use p192::pkcs8::DecodePublicKey;
                let (private, _) = aws_lc_p192_keys().map_err(fail)?;
                let peer = elliptic_curve::PublicKey::<p192::NistP192>::from_public_key_der(
                    include_bytes!("keys/ecdh-p192-peer.pub.der"),
                )
                .map_err(|e| fail(format!("peer key: {e}")))?;
                let peer = awslc::Key::p192_public(peer.to_encoded_point(false).as_bytes())
                    .map_err(|e| fail(format!("peer key: {e}")))?;
                (
                    KexKey::AwsLcC { private, peer },
                    include_bytes!("keys/ecdh-p192.secret"),
                )
            }
            KexAlg::EcdhP224 if c_api => {
                // aws-lc-rs has no P-224: aws-lc's C API (`crate::awslc`).
                use awslc::{Key, KeyKind};
                let private =
                    Key::from_pkcs8(include_bytes!("keys/ec-p224.pk8.der"), KeyKind::EcP224)
                        .map_err(|e| fail(format!("key: {e}")))?;
                let peer = Key::from_spki(
                    include_bytes!("keys/ecdh-p224-peer.pub.der"),
                    KeyKind::EcP224,
                )
                .map_err(|e| fail(format!("peer key: {e}")))?;
                (
                    KexKey::AwsLcC { private, peer },
                    include_bytes!("keys/ecdh-p224.secret"),
                )
            }
            KexAlg::EcdhP192 => {
                use p192::pkcs8::{DecodePrivateKey, DecodePublicKey};
                let private = elliptic_curve::SecretKey::<p192::NistP192>::from_pkcs8_der(
                    include_bytes!("keys/ec-p192.pk8.der"),
                )
                .map_err(|e| fail(format!("key: {e}")))?;
                let peer = elliptic_curve::PublicKey::<p192::NistP192>::from_public_key_der(
                    include_bytes!("keys/ecdh-p192-peer.pub.der"),
                )
                .map_err(|e| fail(format!("peer key: {e}")))?;
                (
                    KexKey::P192(private.to_nonzero_scalar(), *peer.as_affine()),
                    include_bytes!("keys/ecdh-p192.secret"),
                )
            }
            KexAlg::EcdhP224 => {
                use p224::pkcs8::{DecodePrivateKey, DecodePublicKey};
                let private =
                    p224::SecretKey::from_pkcs8_der(include_bytes!("keys/ec-p224.pk8.der"))
                        .map_err(|e| fail(format!("key: {e}")))?;
                let peer = p224::PublicKey::from_public_key_der(include_bytes!(
                    "keys/ecdh-p224-peer.pub.der"
                ))
                .map_err(|e| fail(format!("peer key: {e}")))?;
                (
                    KexKey::P224(private.to_nonzero_scalar(), *peer.as_affine()),
                    include_bytes!("keys/ecdh-p224.secret"),
                )
            }
            KexAlg::EcdhP256 | KexAlg::EcdhP384 | KexAlg::EcdhP521 => {
                // The peer's X.509 SubjectPublicKeyInfo ends with the
                // uncompressed point (1 + 2 coordinates); the secrets of
                // P-384 and P-521 are what `openssl pkeyutl -derive` made
                // of the same keys.
                let (der, spki, point, secret): (&[u8], &[u8], usize, &[u8]) = match self {
                    KexAlg::EcdhP256 => (
                        include_bytes!("keys/ec-p256.pk8.der"),
                        include_bytes!("keys/ecdh-p256-peer.pub.der"),
                        65,
                        &ECDH_P256_SECRET,
                    ),
                    KexAlg::EcdhP384 => (
                        include_bytes!("keys/ec-p384.pk8.der"),
                        include_bytes!("keys/ecdh-p384-peer.pub.der"),
                        97,
                        include_bytes!("keys/ecdh-p384.secret"),
                    ),
                    _ => (
                        include_bytes!("keys/ec-p521.pk8.der"),
                        include_bytes!("keys/ecdh-p521-peer.pub.der"),
                        133,
                        include_bytes!("keys/ecdh-p521.secret"),
                    ),
                };
                let private = agreement::PrivateKey::from_private_key_der(self.aws_lc(), der)
                    .map_err(|e| fail(format!("key: {e}")))?;
                let peer = spki[spki.len().saturating_sub(point)..].to_vec();
                (KexKey::AwsLc { private, peer }, secret)
            }
            KexAlg::X25519 => {
                let private =
                    agreement::PrivateKey::from_private_key(&agreement::X25519, &X25519_SCALAR)
                        .map_err(|e| fail(format!("key: {e}")))?;
                let peer = X25519_PEER.to_vec();
                (KexKey::AwsLc { private, peer }, &X25519_SECRET)
            }
        };
        let mut x = Exchange {
            alg: self,
            key,
            secret: [0u8; MAX_SECRET],
            secret_len: 0,
        };
        x.agree()?;
        x.check_secret(expect)?;
        Ok(x)
    }
}

/// The longest shared secret (P-521: 66 bytes).
const MAX_SECRET: usize = 66;

/// Shared secret of `keys/ec-p256.pk8.der` with the peer key, made by OpenSSL.
const ECDH_P256_SECRET: [u8; 32] = [
    0xe3, 0x84, 0x4f, 0x00, 0x69, 0x84, 0x8a, 0xd1, 0x3b, 0xfb, 0xd4, 0x2e, 0xe7, 0xcb, 0xe2, 0xe7,
    0x24, 0x77, 0x7a, 0xad, 0xcf, 0x0f, 0x30, 0xa3, 0x77, 0x48, 0xdc, 0xb7, 0xd5, 0x33, 0xc6, 0xe4,
];
/// RFC 7748 section 6.1: Alice's private key, Bob's public key, the secret.
const X25519_SCALAR: [u8; 32] = [
    0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45,
    0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
];
const X25519_PEER: [u8; 32] = [
    0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61, 0xc2, 0xec, 0xe4, 0x35, 0x37,
    0x3f, 0x83, 0x43, 0xc8, 0x5b, 0x78, 0x67, 0x4d, 0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
];
const X25519_SECRET: [u8; 32] = [
    0x4a, 0x5d, 0x9d, 0x5b, 0xa4, 0xce, 0x2d, 0xe1, 0x72, 0x8e, 0x3b, 0xf4, 0x80, 0x35, 0x0f, 0x25,
    0xe0, 0x7e, 0x21, 0xc9, 0x47, 0xd1, 0x9e, 0x33, 0x76, 0xf0, 0x9b, 0x3c, 0x1e, 0x16, 0x17, 0x42,
];

/// A fixed private key and the peer's public key, in the library that
/// does the curve.
enum KexKey {
    AwsLc {
        private: agreement::PrivateKey,
        peer: Vec<u8>,
    },
    /// aws-lc's C API (P-224, P-192): the peer key parsed once, as RustCrypto's.
    AwsLcC {
        private: awslc::Key,
        peer: awslc::Key,
    },
    P224(
        elliptic_curve::NonZeroScalar<p224::NistP224>,
        p224::AffinePoint,
    ),
    P192(
        elliptic_curve::NonZeroScalar<p192::NistP192>,
        p192::AffinePoint,
    ),
}

/// One RustCrypto ECDH: the x-coordinate of private × peer, into `out`;
/// its length.
fn rustcrypto_agree<C: elliptic_curve::CurveArithmetic>(
    private: &elliptic_curve::NonZeroScalar<C>,
    peer: &elliptic_curve::AffinePoint<C>,
    out: &mut [u8],
) -> Option<usize> {
    let shared = elliptic_curve::ecdh::diffie_hellman(private, peer);
    let s = shared.raw_secret_bytes();
    out.get_mut(..s.len())?.copy_from_slice(s);
    Some(s.len())
}

/// A fixed private key and a peer public key; `agree` derives the secret.
pub struct Exchange {
    alg: KexAlg,
    key: KexKey,
    secret: [u8; MAX_SECRET],
    secret_len: usize,
}

impl Exchange {
    pub fn alg(&self) -> KexAlg {
        self.alg
    }

    /// Which library derives the secret (for the record's details).
    pub fn implementation(&self) -> &'static str {
        match self.key {
            KexKey::AwsLc { .. } | KexKey::AwsLcC { .. } => AWS_LC,
            KexKey::P224(..) => "rustcrypto p224",
            KexKey::P192(..) => "rustcrypto p192",
        }
    }

    /// One ECDH operation. aws-lc's peer key is parsed each time (its
    /// agreement consumes the parsed key); that is a point check, small
    /// next to the scalar multiplication.
    pub fn agree(&mut self) -> Result<(), PubkeyError> {
        let failed = || PubkeyError::Failed {
            alg: self.alg.name(),
            what: "key agreement failed".into(),
        };
        let len = match &self.key {
            KexKey::AwsLc { private, peer } => {
                let alg = self.alg.aws_lc();
                let secret = &mut self.secret;
                agreement::agree(
                    private,
                    agreement::UnparsedPublicKey::new(alg, peer),
                    (),
                    |s| {
                        secret.get_mut(..s.len()).ok_or(())?.copy_from_slice(s);
                        Ok(s.len())
                    },
                )
                .ok()
            }
            KexKey::AwsLcC { private, peer } => private.ecdh(peer, &mut self.secret).ok(),
            KexKey::P224(private, peer) => rustcrypto_agree(private, peer, &mut self.secret),
            KexKey::P192(private, peer) => rustcrypto_agree(private, peer, &mut self.secret),
        };
        self.secret_len = len.ok_or_else(failed)?;
        Ok(())
    }

    pub fn secret(&self) -> &[u8] {
        &self.secret[..self.secret_len]
    }

    /// The last secret must be the known one.
    fn check_secret(&self, expect: &[u8]) -> Result<(), PubkeyError> {
        if self.secret() == expect {
            Ok(())
        } else {
            Err(PubkeyError::Failed {
                alg: self.alg.name(),
                what: format!(
                    "shared secret {} differs from the known answer {}",
                    hex(self.secret()),
                    hex(expect)
                ),
            })
        }
    }
}

/// A signature algorithm's implementations, for the trial
/// (`crate::implementation`): each call signs `MESSAGE` and verifies the
/// signature (verifies OpenSSL's where the library only verifies), so the
/// winner is the faster at the pair; rates in operations per second.
pub struct SignCandidates(pub SignAlg);

impl Candidates for SignCandidates {
    fn algorithm_id(&self) -> &'static str {
        self.0.id()
    }

    fn names(&self) -> Vec<&'static str> {
        let alg = self.0;
        alg.implementations()
            .iter()
            .copied()
            .filter(|i| alg.runs_here(i))
            .collect()
    }

    fn all_names(&self) -> Vec<&'static str> {
        self.0.implementations().to_vec()
    }

    fn check(&self, name: &'static str, _block: usize) -> Result<(), String> {
        let mut s = self.0.signer_with(name).map_err(|e| e.to_string())?;
        s.self_test().map_err(|e| e.to_string())
    }

    fn worker(&self, name: &'static str, _block: usize) -> Result<Worker, String> {
        let mut s = self.0.signer_with(name).map_err(|e| e.to_string())?;
        s.self_test().map_err(|e| e.to_string())?;
        let mut sig = s.signature().to_vec();
        Ok(Box::new(move || {
            if s.can_sign() {
                s.sign(std::hint::black_box(MESSAGE))
                    .map_err(|e| e.to_string())?;
                sig.clear();
                sig.extend_from_slice(s.signature());
            }
            s.verify(std::hint::black_box(MESSAGE), &sig)
                .map_err(|e| e.to_string())
        }))
    }

    fn trial_unit(&self) -> TrialUnit {
        TrialUnit::OpsPerSec
    }

    fn partial(&self, name: &'static str) -> Option<String> {
        // Only `p192` cannot sign; asking its signer is cheap (no signing).
        let s = self.0.signer_with(name).ok()?;
        (!s.can_sign()).then(|| "verifies only, and a candidate that signs passed".to_string())
    }
}

/// A key agreement's implementations, for the trial: each call derives
/// the shared secret once.
pub struct KexCandidates(pub KexAlg);

impl Candidates for KexCandidates {
    fn algorithm_id(&self) -> &'static str {
        self.0.id()
    }

    fn names(&self) -> Vec<&'static str> {
        self.0.implementations().to_vec()
    }

    fn check(&self, name: &'static str, _block: usize) -> Result<(), String> {
        // `exchange_with` derives the secret and checks the known answer.
        self.0
            .exchange_with(name)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn worker(&self, name: &'static str, _block: usize) -> Result<Worker, String> {
        let mut x = self.0.exchange_with(name).map_err(|e| e.to_string())?;
        Ok(Box::new(move || {
            x.agree().map_err(|e| e.to_string())?;
            std::hint::black_box(x.secret());
            Ok(())
        }))
    }

    fn trial_unit(&self) -> TrialUnit {
        TrialUnit::OpsPerSec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signers_pass_known_answers() {
        for a in SignAlg::ALL {
            for i in SignCandidates(a).names() {
                let mut s = a.signer_with(i).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(s.implementation(), i);
                s.self_test()
                    .unwrap_or_else(|e| panic!("{} {i}: {e}", a.name()));
                SignCandidates(a).check(i, 0).unwrap();
            }
            assert!(matches!(
                a.signer_with("nope"),
                Err(PubkeyError::Unsupported { .. })
            ));
        }
    }

    #[test]
    fn exchanges_pass_known_answers() {
        for k in KexAlg::ALL {
            for &i in k.implementations() {
                let x = k.exchange_with(i).unwrap();
                assert_eq!(x.implementation(), i);
                KexCandidates(k).check(i, 0).unwrap();
            }
            let mut x = k.exchange().unwrap();
            x.agree().unwrap();
            let len = match k {
                KexAlg::EcdhP192 => 24,
                KexAlg::EcdhP224 => 28,
                KexAlg::EcdhP384 => 48,
                KexAlg::EcdhP521 => 66,
                _ => 32,
            };
            assert_eq!(x.secret().len(), len, "{}", k.name());
        }
    }

    #[test]
    fn ecdh_p192_p224_match_openssl_and_a_wrong_secret_is_caught() {
        for (k, theirs, implementation) in [
            (
                KexAlg::EcdhP192,
                &include_bytes!("keys/ecdh-p192.secret")[..],
                "rustcrypto p192",
            ),
            (
                KexAlg::EcdhP224,
                &include_bytes!("keys/ecdh-p224.secret")[..],
                "rustcrypto p224",
            ),
            (
                KexAlg::EcdhP192,
                &include_bytes!("keys/ecdh-p192.secret")[..],
                AWS_LC,
            ),
        ] {
            let mut x = k.exchange_with(implementation).unwrap();
            assert_eq!(x.implementation(), implementation);
            x.agree().unwrap();
            assert_eq!(x.secret(), theirs);
            x.check_secret(theirs).unwrap();
            let mut wrong = theirs.to_vec();
            wrong[3] ^= 0x10;
            assert!(x.check_secret(&wrong).is_err());
            assert!(x.check_secret(&theirs[1..]).is_err());
        }
        assert_eq!(
            KexAlg::EcdhP256.exchange().unwrap().implementation(),
            "aws-lc"
        );
    }

    #[test]
    fn ecdsa_p224_p192_match_rfc_6979_and_a_wrong_answer_is_caught() {
        for (alg, implementation) in [
            (SignAlg::EcdsaP192, "rustcrypto p192"),
            (SignAlg::EcdsaP192, AWS_LC),
            (SignAlg::EcdsaP224, "rustcrypto p224"),
            (SignAlg::EcdsaP224, AWS_LC),
        ] {
            let mut s = alg.signer_with(implementation).unwrap();
            s.self_test().unwrap();
            let samples = ecdsa_rfc6979_samples(alg);
            assert!(!samples.is_empty());
            for sample in samples {
                s.ecdsa_rfc6979_answer(sample)
                    .unwrap_or_else(|e| panic!("{implementation}: {e}"));
                // One digit of r or of s changed: caught.
                let mut r = sample.r.to_string();
                r.replace_range(..1, if r.starts_with('0') { "1" } else { "0" });
                let bad_r = Rfc6979Sample {
                    r: Box::leak(r.into_boxed_str()),
                    ..*sample
                };
                assert!(s.ecdsa_rfc6979_answer(&bad_r).is_err());
                let mut sv = sample.s.to_string();
                let last = sv.len() - 1;
                let flipped = if sv.ends_with('0') { "1" } else { "0" };
                sv.replace_range(last.., flipped);
                let bad_s = Rfc6979Sample {
                    s: Box::leak(sv.into_boxed_str()),
                    ..*sample
                };
                assert!(s.ecdsa_rfc6979_answer(&bad_s).is_err());
                // The right (r, s) under the wrong hash: caught.
                let other = Rfc6979Sample {
                    hash: match sample.hash {
                        SampleHash::Sha224 => SampleHash::Sha256,
                        SampleHash::Sha256 => SampleHash::Sha224,
                    },
                    ..*sample
                };
                assert!(s.ecdsa_rfc6979_answer(&other).is_err());
            }
            // OpenSSL's signature verifies; a changed one does not.
            let theirs = openssl_signature(alg).unwrap();
            s.verify(MESSAGE, theirs).unwrap();
            let mut bad = theirs.to_vec();
            let n = bad.len();
            bad[n - 2] ^= 1;
            assert!(s.verify(MESSAGE, &bad).is_err());
        }
        // The other curve's vector does not fit the key.
        let p192_sample = &ecdsa_rfc6979_samples(SignAlg::EcdsaP192)[0];
        for implementation in ["rustcrypto p224", AWS_LC] {
            let p224 = SignAlg::EcdsaP224.signer_with(implementation).unwrap();
            assert!(p224.ecdsa_rfc6979_answer(p192_sample).is_err());
            assert_eq!(p224.implementation(), implementation);
            assert!(p224.can_sign());
        }
        // p192 only verifies: asking it to sign is a skip, not a number.
        let mut p192 = SignAlg::EcdsaP192.signer_with("rustcrypto p192").unwrap();
        assert_eq!(p192.implementation(), "rustcrypto p192");
        assert!(!p192.can_sign());
        assert!(matches!(
            p192.sign(MESSAGE),
            Err(PubkeyError::Unsupported { .. })
        ));
        assert_eq!(
            p192.signature(),
            openssl_signature(SignAlg::EcdsaP192).unwrap()
        );
    }

    #[test]
    fn rsa_1024_is_rustcrypto_and_matches_openssl() {
        let mut s = SignAlg::Rsa1024.signer_with("rustcrypto rsa").unwrap();
        assert_eq!(s.implementation(), "rustcrypto rsa");
        s.sign(MESSAGE).unwrap();
        assert_eq!(s.signature(), include_bytes!("keys/rsa-1024.sig"));
        // aws-lc, an independent implementation, verifies it too (it
        // verifies 1024-bit keys; it only refuses to sign with them).
        #[allow(deprecated)]
        let legacy = &signature::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY;
        let der = {
            use rsa::pkcs1::EncodeRsaPublicKey;
            use rsa::pkcs8::DecodePrivateKey;
            use rsa::signature::Keypair;
            let key =
                RustRsaSigning::from_pkcs8_der(include_bytes!("keys/rsa-1024.pk8.der")).unwrap();
            let public: rsa::PublicKey = key.verifying_key().as_ref().clone();
            public.to_pkcs1_der().unwrap().as_bytes().to_vec()
        };
        signature::UnparsedPublicKey::new(legacy, &der)
            .verify(MESSAGE, s.signature())
            .unwrap();
        let mut bad = s.signature().to_vec();
        bad[5] ^= 1;
        assert!(s.verify(MESSAGE, &bad).is_err());
        assert!(s.verify(MESSAGE, &bad[..64]).is_err());
        assert_eq!(
            SignAlg::Rsa2048.signer().unwrap().implementation(),
            "aws-lc"
        );
    }

    #[test]
    fn dsa_is_rustcrypto_and_matches_rfc_6979() {
        for alg in [SignAlg::Dsa1024, SignAlg::Dsa2048] {
            let mut s = alg.signer_with("rustcrypto dsa").unwrap();
            assert_eq!(s.implementation(), "rustcrypto dsa");
            s.self_test().unwrap();
            let SignKey::Dsa(key) = &s.key else {
                panic!("{alg:?} is not a DSA key")
            };
            // A wrong vector is caught: the other key's answer does not match.
            let other = if alg == SignAlg::Dsa1024 {
                SignAlg::Dsa2048
            } else {
                SignAlg::Dsa1024
            };
            assert!(dsa_rfc6979_answer(alg, key).is_ok());
            assert!(dsa_rfc6979_answer(other, key).is_err());
            assert!(dsa_rfc6979_answer(SignAlg::Ed25519, key).is_err());
            // OpenSSL's signature verifies; a changed one does not.
            let theirs = openssl_signature(alg).unwrap();
            s.verify(MESSAGE, theirs).unwrap();
            let mut bad = theirs.to_vec();
            let n = bad.len();
            bad[n - 3] ^= 1;
            assert!(s.verify(MESSAGE, &bad).is_err());
        }
    }

    /// Every implementation of RSA-1024, DSA, P-224 and P-192 against the
    /// others: each one's signature verifies with every other (`p192`
    /// only verifies), RSA's is OpenSSL's byte for byte, and changed
    /// signatures are refused by all.
    #[test]
    fn implementations_verify_each_others_signatures() {
        for alg in [
            SignAlg::Rsa1024,
            SignAlg::Dsa1024,
            SignAlg::Dsa2048,
            SignAlg::EcdsaP224,
            SignAlg::EcdsaP192,
        ] {
            assert!(alg.implementations().len() >= 2, "{alg:?}");
            let mut all: Vec<Signer> = alg
                .implementations()
                .iter()
                .filter(|i| alg.runs_here(i))
                .map(|&i| {
                    let mut s = alg.signer_with(i).unwrap();
                    s.self_test().unwrap_or_else(|e| panic!("{i}: {e}"));
                    s
                })
                .collect();
            for _ in 0..3 {
                for s in all.iter_mut().filter(|s| s.can_sign()) {
                    s.sign(MESSAGE).unwrap();
                }
                for s in all.iter().filter(|s| s.can_sign()) {
                    let mut bad = s.signature().to_vec();
                    let n = bad.len();
                    bad[n - 2] ^= 1;
                    for other in &all {
                        let (a, b) = (s.implementation(), other.implementation());
                        other
                            .verify(MESSAGE, s.signature())
                            .unwrap_or_else(|e| panic!("{b} on {a}'s: {e}"));
                        assert!(other.verify(MESSAGE, &bad).is_err(), "{b} on {a}'s");
                        assert!(other.verify(b"another message", s.signature()).is_err());
                    }
                }
            }
            if alg == SignAlg::Rsa1024 {
                // PKCS#1 v1.5 is deterministic: the same bytes as OpenSSL's.
                for s in &all {
                    assert_eq!(s.signature(), include_bytes!("keys/rsa-1024.sig"));
                }
            }
        }
        for (alg, first) in [
            (SignAlg::Rsa1024, AWS_LC),
            (SignAlg::Dsa1024, AWS_LC_MULTIEXP),
            (SignAlg::EcdsaP224, AWS_LC),
            (SignAlg::EcdsaP192, AWS_LC),
        ] {
            assert_eq!(alg.signer().unwrap().implementation(), first);
        }
        // The RFC 6979 DSA vectors verify under aws-lc; the other key's do not.
        let a = SignAlg::Dsa1024.signer_with(AWS_LC).unwrap();
        let (r, s) = dsa_rfc6979_expected(SignAlg::Dsa2048).unwrap();
        let der = der_signature(&from_hex(r).unwrap(), &from_hex(s).unwrap()).unwrap();
        let (digest, n) = digest_of(awslc::Hash::Sha256, b"sample");
        let Public::AwsLcC(key, _) = &a.public else {
            panic!("not aws-lc's C API")
        };
        assert!(!key.verify(awslc::Hash::Sha256, &digest[..n], &der));
    }

    /// The simultaneous-exponentiation DSA verification: the RFC 6979
    /// vectors and OpenSSL's signatures verify, and it refuses every
    /// malformed or wrong signature that aws-lc's DSA_verify refuses.
    #[test]
    fn dsa_multiexp_passes_known_answers_and_refuses_bad_signatures() {
        for alg in [SignAlg::Dsa1024, SignAlg::Dsa2048] {
            let m = alg.signer_with(AWS_LC_MULTIEXP).unwrap();
            let a = alg.signer_with(AWS_LC).unwrap();
            assert_eq!(m.implementation(), AWS_LC_MULTIEXP);
            let (Public::DsaMultiExp(v, _), Public::AwsLcC(key, _)) = (&m.public, &a.public) else {
                panic!("{alg:?}: not the multi-exponentiation and aws-lc")
            };
            let (r, s) = dsa_rfc6979_expected(alg).unwrap();
            let (r, s) = (from_hex(r).unwrap(), from_hex(s).unwrap());
            let (digest, n) = digest_of(awslc::Hash::Sha256, b"sample");
            let digest = &digest[..n];
            assert!(v.verify(digest, &der_signature(&r, &s).unwrap()).unwrap());
            m.verify(MESSAGE, openssl_signature(alg).unwrap()).unwrap();
            let q = awslc::Key::from_pkcs8(alg.aws_lc_c_key().unwrap().0, awslc::KeyKind::Dsa)
                .unwrap()
                .dsa_public()
                .unwrap()
                .q
                .to_be_bytes();
            let mut q_plus_r = q.clone();
            // q + 1 as bytes (q is odd, so only the last byte changes).
            *q_plus_r.last_mut().unwrap() += 1;
            let good = der_signature(&r, &s).unwrap();
            let mut trailing = good.clone();
            trailing.push(0);
            let mut long_form = vec![0x30, 0x81, good[1]];
            long_form.extend_from_slice(&good[2..]);
            let mut flipped_r = r.clone();
            flipped_r[5] ^= 1;
            let cases: Vec<(&str, Vec<u8>)> = vec![
                ("r = 0", der_signature(&[0], &s).unwrap()),
                ("s = 0", der_signature(&r, &[0]).unwrap()),
                ("r = q", der_signature(&q, &s).unwrap()),
                ("s = q", der_signature(&r, &q).unwrap()),
                ("s = q + 1", der_signature(&r, &q_plus_r).unwrap()),
                ("a changed r", der_signature(&flipped_r, &s).unwrap()),
                ("r and s swapped", der_signature(&s, &r).unwrap()),
                ("a byte after the DER", trailing),
                ("a long-form length", long_form),
                ("cut short", good[..good.len() - 1].to_vec()),
                ("empty", Vec::new()),
            ];
            for (what, sig) in &cases {
                assert!(!v.verify(digest, sig).unwrap(), "{alg:?}: {what} verified");
                assert!(
                    !key.verify(awslc::Hash::Sha256, digest, sig),
                    "{alg:?}: aws-lc verified {what}"
                );
            }
            // The right signature of another digest.
            let (other, n) = digest_of(awslc::Hash::Sha256, b"sampl3");
            assert!(!v.verify(&other[..n], &good).unwrap());
        }
    }

    #[test]
    fn ecdh_p224_aws_lc_and_rustcrypto_agree() {
        let mut a = KexAlg::EcdhP224.exchange_with(AWS_LC).unwrap();
        let mut r = KexAlg::EcdhP224.exchange_with("rustcrypto p224").unwrap();
        assert_eq!(
            KexAlg::EcdhP224.exchange().unwrap().implementation(),
            AWS_LC
        );
        a.agree().unwrap();
        r.agree().unwrap();
        assert_eq!(a.secret(), r.secret());
        assert_eq!(a.secret(), include_bytes!("keys/ecdh-p224.secret"));
        assert!(matches!(
            KexAlg::EcdhP224.exchange_with("nope"),
            Err(PubkeyError::Unsupported { .. })
        ));
    }

    #[test]
    fn der_signatures_are_minimal_integers() {
        // A high bit gets a zero byte; leading zeros are dropped.
        assert_eq!(
            der_signature(&[0x80, 1], &[0, 0, 0x7f]).unwrap(),
            [0x30, 0x08, 0x02, 0x03, 0x00, 0x80, 0x01, 0x02, 0x01, 0x7f]
        );
        assert_eq!(
            der_signature(&[0], &[0, 0]).unwrap(),
            [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00]
        );
        assert!(der_signature(&[1; 80], &[1; 80]).is_none());
    }

    #[test]
    fn pubkey_trials_count_operations() {
        assert_eq!(
            SignCandidates(SignAlg::Rsa1024).trial_unit(),
            TrialUnit::OpsPerSec
        );
        let mut w = SignCandidates(SignAlg::EcdsaP192)
            .worker("rustcrypto p192", 0)
            .unwrap();
        w().unwrap();
        let mut w = KexCandidates(KexAlg::EcdhP224).worker(AWS_LC, 0).unwrap();
        w().unwrap();
        assert!(SignCandidates(SignAlg::Rsa2048)
            .check("rustcrypto rsa", 0)
            .is_err());
    }

    #[test]
    fn a_bad_signature_is_refused() {
        let mut s = SignAlg::Ed25519.signer().unwrap();
        s.sign(MESSAGE).unwrap();
        let mut sig = s.signature().to_vec();
        sig[10] ^= 1;
        assert!(s.verify(MESSAGE, &sig).is_err());
    }

    #[test]
    fn ids() {
        for a in SignAlg::ALL {
            assert!(a.id().starts_with("crypto."));
        }
        for k in KexAlg::ALL {
            assert!(k.id().starts_with("crypto."));
        }
    }
}
