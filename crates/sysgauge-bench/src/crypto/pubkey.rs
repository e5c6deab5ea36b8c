//! Public-key operations of the crypto family: RSA, ECDSA and Ed25519 sign
//! and verify, ECDH P-256 and X25519 key agreement, with fixed keys and the
//! known answers each is checked against before it is timed.
//!
//! Implementation: aws-lc (`aws-lc-rs`) for everything. It carries
//! OpenSSL's RSA code with the AVX-512 IFMA and MULX/ADX Montgomery
//! multiplications, OpenSSL's P-256 assembly, and formally verified
//! s2n-bignum code for P-384, P-521 and Curve25519, so it matches or beats
//! `openssl speed` (docs/performance.md); `ring` has no P-521 and no IFMA
//! RSA, and RustCrypto's RSA is several times slower.
//!
//! aws-lc refuses RSA signing keys below 2048 bits, so `crypto.rsa-1024`
//! (a row of every published `openssl speed` table) signs and verifies with
//! RustCrypto's `rsa` crate instead, the maintained Rust library that takes
//! the key. It is portable code, far slower than OpenSSL's, and allocates
//! in every operation (its big integers are boxed): the row says what that
//! library does, not what the CPU can do, and its details name the
//! implementation. RSA-512 is not a row: the `rsa` crate refuses moduli
//! below 1024 bits as well.
//!
//! DSA (`crypto.dsa-1024`, `crypto.dsa-2048`, rows of the old tables) is
//! RustCrypto's `dsa`: aws-lc has no DSA signing. Its signing sits behind
//! the crate's `hazmat` feature (FIPS 186-5 retired DSA signing). The keys
//! are RFC 6979's (appendix A.2), so the deterministic signature of
//! "sample" is checked against the RFC; OpenSSL's (randomised) signature
//! of `MESSAGE` must verify. The crate refuses 512-bit parameters, so
//! `dsa 512 bits` is not a row.
//!
//! The keys are fixed (generated once with OpenSSL, in `keys/`): generating
//! RSA-4096 keys at run time takes seconds and would eat the time budget.
//! Like `openssl speed`, each operation signs or verifies one short message
//! (RSA PKCS#1 v1.5 with SHA-256, ECDSA with the curve's SHA-2, Ed25519
//! pure), and an ECDH operation derives one shared secret from a fixed
//! private key and the peer's public key.

use crate::util::hex;
use aws_lc_rs::agreement;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use thiserror::Error;

/// RustCrypto's PKCS#1 v1.5 keys with SHA-256 (the `rsa-1024` row).
type RustRsaSigning = rsa::pkcs1v15::SigningKey<sha2::Sha256>;
type RustRsaVerifying = rsa::pkcs1v15::VerifyingKey<sha2::Sha256>;

/// The message every signature covers.
pub const MESSAGE: &[u8] = b"sysgauge known answer";

/// A signature algorithm with a fixed key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignAlg {
    Rsa1024,
    Rsa2048,
    Rsa3072,
    Rsa4096,
    Dsa1024,
    Dsa2048,
    EcdsaP256,
    EcdsaP384,
    EcdsaP521,
    Ed25519,
}

/// A key agreement with fixed keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KexAlg {
    EcdhP256,
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
    pub const ALL: [SignAlg; 10] = [
        SignAlg::Rsa1024,
        SignAlg::Rsa2048,
        SignAlg::Rsa3072,
        SignAlg::Rsa4096,
        SignAlg::Dsa1024,
        SignAlg::Dsa2048,
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
            SignAlg::EcdsaP256 => "ecdsap256",
            SignAlg::EcdsaP384 => "ecdsap384",
            SignAlg::EcdsaP521 => "ecdsap521",
            SignAlg::Ed25519 => "ed25519",
        }
    }

    /// Load the fixed key and check the known answer.
    pub fn signer(self) -> Result<Signer, PubkeyError> {
        let fail = |what: &str| PubkeyError::Failed {
            alg: self.name(),
            what: what.to_string(),
        };
        let s = match self {
            SignAlg::Rsa1024 => {
                use rsa::pkcs8::DecodePrivateKey;
                use rsa::signature::Keypair;
                let key = RustRsaSigning::from_pkcs8_der(include_bytes!("keys/rsa-1024.pk8.der"))
                    .map_err(|e| fail(&format!("key: {e}")))?;
                let public = Public::RustRsa(key.verifying_key());
                Signer {
                    alg: self,
                    key: SignKey::RustRsa(Box::new(key)),
                    public,
                    rng: SystemRandom::new(),
                    sig: vec![0u8; 128],
                    sig_len: 0,
                }
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
                Signer {
                    alg: self,
                    key: SignKey::Dsa(Box::new(key)),
                    public,
                    rng: SystemRandom::new(),
                    sig: vec![0u8; 80],
                    sig_len: 0,
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
                    alg: self,
                    key: SignKey::Rsa(kp),
                    public: Public::AwsLc(public),
                    rng: SystemRandom::new(),
                    sig: vec![0u8; len],
                    sig_len: len,
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
                Signer {
                    alg: self,
                    key: SignKey::Ecdsa(kp),
                    public: Public::AwsLc(public),
                    rng: SystemRandom::new(),
                    sig: vec![0u8; 160],
                    sig_len: 0,
                }
            }
            SignAlg::Ed25519 => {
                let kp = Ed25519KeyPair::from_seed_unchecked(&ED25519_SEED)
                    .map_err(|e| fail(&format!("key: {e}")))?;
                let public =
                    signature::ParsedPublicKey::new(&signature::ED25519, kp.public_key().as_ref())
                        .map_err(|e| fail(&format!("public key: {e}")))?;
                Signer {
                    alg: self,
                    key: SignKey::Ed25519(kp),
                    public: Public::AwsLc(public),
                    rng: SystemRandom::new(),
                    sig: vec![0u8; 64],
                    sig_len: 0,
                }
            }
        };
        Ok(s)
    }
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
    RustRsa(Box<RustRsaSigning>),
    Dsa(Box<dsa::SigningKey>),
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

/// The public half a signer verifies with.
enum Public {
    AwsLc(signature::ParsedPublicKey),
    RustRsa(RustRsaVerifying),
    Dsa(dsa::VerifyingKey),
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
    pub fn alg(&self) -> SignAlg {
        self.alg
    }

    /// Which library signs and verifies (for the record's details).
    pub fn implementation(&self) -> &'static str {
        match self.key {
            SignKey::RustRsa(_) => "rustcrypto rsa",
            SignKey::Dsa(_) => "rustcrypto dsa",
            _ => "aws-lc",
        }
    }

    fn fail(&self, what: &str) -> PubkeyError {
        PubkeyError::Failed {
            alg: self.alg.name(),
            what: what.to_string(),
        }
    }

    /// Sign `msg`; the signature is kept for `verify_last`.
    pub fn sign(&mut self, msg: &[u8]) -> Result<(), PubkeyError> {
        match &self.key {
            SignKey::Rsa(kp) => {
                kp.sign(&signature::RSA_PKCS1_SHA256, &self.rng, msg, &mut self.sig)
                    .map_err(|_| self.fail("signing failed"))?;
                self.sig_len = kp.public_modulus_len();
            }
            SignKey::RustRsa(key) => {
                use rsa::signature::{SignatureEncoding, Signer as _};
                let s = key
                    .try_sign(msg)
                    .map_err(|_| self.fail("signing failed"))?
                    .to_bytes();
                if s.len() > self.sig.len() {
                    return Err(self.fail("signature longer than expected"));
                }
                self.sig[..s.len()].copy_from_slice(&s);
                self.sig_len = s.len();
            }
            SignKey::Dsa(key) => {
                use dsa::signature::{SignatureEncoding, Signer as _};
                let s = key
                    .try_sign(msg)
                    .map_err(|_| self.fail("signing failed"))?
                    .to_bytes();
                if s.len() > self.sig.len() {
                    return Err(self.fail("signature longer than expected"));
                }
                self.sig[..s.len()].copy_from_slice(&s);
                self.sig_len = s.len();
            }
            SignKey::Ecdsa(kp) => {
                let s = kp
                    .sign(&self.rng, msg)
                    .map_err(|_| self.fail("signing failed"))?;
                let s = s.as_ref();
                if s.len() > self.sig.len() {
                    return Err(self.fail("signature longer than expected"));
                }
                self.sig[..s.len()].copy_from_slice(s);
                self.sig_len = s.len();
            }
            SignKey::Ed25519(kp) => {
                let s = kp.sign(msg);
                self.sig[..64].copy_from_slice(s.as_ref());
                self.sig_len = 64;
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
            Public::RustRsa(p) => {
                use rsa::signature::Verifier as _;
                rsa::pkcs1v15::Signature::try_from(sig).is_ok_and(|s| p.verify(msg, &s).is_ok())
            }
            Public::Dsa(p) => {
                use dsa::signature::Verifier as _;
                dsa::Signature::try_from(sig).is_ok_and(|s| p.verify(msg, &s).is_ok())
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
        self.sign(MESSAGE)?;
        if let Some(sig) = openssl_signature(self.alg) {
            let randomised = matches!(
                self.alg,
                SignAlg::Dsa1024
                    | SignAlg::Dsa2048
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
        if self.alg == SignAlg::Ed25519 {
            let public = match &self.public {
                Public::AwsLc(p) => hex(p.as_ref()),
                Public::RustRsa(_) | Public::Dsa(_) => String::new(),
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

impl KexAlg {
    pub const ALL: [KexAlg; 2] = [KexAlg::EcdhP256, KexAlg::X25519];

    pub fn id(self) -> &'static str {
        match self {
            KexAlg::EcdhP256 => "crypto.ecdh-p256",
            KexAlg::X25519 => "crypto.x25519",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KexAlg::EcdhP256 => "ecdh 256 bits (nistp256)",
            KexAlg::X25519 => "ecdh 253 bits (X25519)",
        }
    }

    pub fn openssl_name(self) -> &'static str {
        match self {
            KexAlg::EcdhP256 => "ecdhp256",
            KexAlg::X25519 => "ecdhx25519",
        }
    }

    /// Fixed keys, checked against the known shared secret.
    pub fn exchange(self) -> Result<Exchange, PubkeyError> {
        let fail = |what: String| PubkeyError::Failed {
            alg: self.name(),
            what,
        };
        let (private, peer, expect) = match self {
            KexAlg::EcdhP256 => {
                let private = agreement::PrivateKey::from_private_key_der(
                    &agreement::ECDH_P256,
                    include_bytes!("keys/ec-p256.pk8.der"),
                )
                .map_err(|e| fail(format!("key: {e}")))?;
                // The peer's X.509 SubjectPublicKeyInfo; the last 65 bytes
                // are the uncompressed point.
                let spki: &[u8] = include_bytes!("keys/ecdh-p256-peer.pub.der");
                let point = spki[spki.len().saturating_sub(65)..].to_vec();
                (private, point, ECDH_P256_SECRET)
            }
            KexAlg::X25519 => {
                let private =
                    agreement::PrivateKey::from_private_key(&agreement::X25519, &X25519_SCALAR)
                        .map_err(|e| fail(format!("key: {e}")))?;
                (private, X25519_PEER.to_vec(), X25519_SECRET)
            }
        };
        let mut x = Exchange {
            alg: self,
            private,
            peer,
            secret: [0u8; 32],
        };
        x.agree()?;
        if hex(&x.secret) != expect {
            return Err(fail(format!(
                "shared secret {} differs from the known answer {expect}",
                hex(&x.secret)
            )));
        }
        Ok(x)
    }
}

/// Shared secret of `keys/ec-p256.pk8.der` with the peer key, made by OpenSSL.
const ECDH_P256_SECRET: &str = "e3844f0069848ad13bfbd42ee7cbe2e724777aadcf0f30a37748dcb7d533c6e4";
/// RFC 7748 section 6.1: Alice's private key, Bob's public key, the secret.
const X25519_SCALAR: [u8; 32] = [
    0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45,
    0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
];
const X25519_PEER: [u8; 32] = [
    0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61, 0xc2, 0xec, 0xe4, 0x35, 0x37,
    0x3f, 0x83, 0x43, 0xc8, 0x5b, 0x78, 0x67, 0x4d, 0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
];
const X25519_SECRET: &str = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

/// A fixed private key and a peer public key; `agree` derives the secret.
pub struct Exchange {
    alg: KexAlg,
    private: agreement::PrivateKey,
    peer: Vec<u8>,
    secret: [u8; 32],
}

impl Exchange {
    pub fn alg(&self) -> KexAlg {
        self.alg
    }

    /// One ECDH operation. The peer key is parsed each time (aws-lc's
    /// agreement consumes the parsed key); that is a point check, small
    /// next to the scalar multiplication.
    pub fn agree(&mut self) -> Result<(), PubkeyError> {
        let alg = match self.alg {
            KexAlg::EcdhP256 => &agreement::ECDH_P256,
            KexAlg::X25519 => &agreement::X25519,
        };
        let secret = &mut self.secret;
        agreement::agree(
            &self.private,
            agreement::UnparsedPublicKey::new(alg, &self.peer),
            (),
            |s| {
                if s.len() == 32 {
                    secret.copy_from_slice(s);
                    Ok(())
                } else {
                    Err(())
                }
            },
        )
        .map_err(|()| PubkeyError::Failed {
            alg: self.alg.name(),
            what: "key agreement failed".into(),
        })
    }

    pub fn secret(&self) -> &[u8] {
        &self.secret
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signers_pass_known_answers() {
        for a in SignAlg::ALL {
            let mut s = a.signer().unwrap_or_else(|e| panic!("{e}"));
            s.self_test()
                .unwrap_or_else(|e| panic!("{}: {e}", a.name()));
        }
    }

    #[test]
    fn exchanges_pass_known_answers() {
        for k in KexAlg::ALL {
            let mut x = k.exchange().unwrap();
            x.agree().unwrap();
            assert_eq!(x.secret().len(), 32);
        }
    }

    #[test]
    fn rsa_1024_is_rustcrypto_and_matches_openssl() {
        let mut s = SignAlg::Rsa1024.signer().unwrap();
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
            let mut s = alg.signer().unwrap();
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
