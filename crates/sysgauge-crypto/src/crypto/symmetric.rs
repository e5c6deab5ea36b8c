//! The symmetric algorithms of the crypto family: ciphers, AEADs and
//! HMAC-SHA256, each as a `Stream` that processes one buffer after another
//! the way `openssl speed -evp` does (one key set-up, then the chain or
//! counter continues from buffer to buffer), with the known answers each is
//! checked against before it is timed.
//!
//! Implementations per algorithm ([`Cipher::candidates`], names as
//! `--implementation` takes them). Where there is more than one, the crypto
//! family checks each this CPU runs (known answer and round trip at the
//! case's block size), times them in a short trial (`crate::implementation`)
//! and keeps the fastest, so a kernel tuned on one microarchitecture never
//! stands for the machine on another; the first candidate is what [`Cipher::start`]
//! uses without a trial. Why each exists, judged against `openssl speed
//! -evp` (the comparisons, with their machines and numbers, are in
//! docs/performance.md); the hand-written kernels are in `sysgauge_kernels`:
//! - AES-CBC: `aes` (AES-NI, hand-written: no crate reached OpenSSL on
//!   Intel), aws-lc (its ARMv8 and portable paths elsewhere), RustCrypto
//!   `aes` under the `cbc` crate.
//! - AES-128-CTR: `aes`'s VAES-AVX512, VAES-AVX2 and AES-NI kernels
//!   (hand-written for the same reason), and aws-lc.
//! - AES-GCM: aws-lc (`aws-lc-rs`), whose GCM uses VAES/AVX-512 and beats
//!   OpenSSL 3.0.
//! - ChaCha20-Poly1305: `chacha_poly` (AVX-512 with IFMA, hand-written: no
//!   crate, aws-lc included, comes near OpenSSL's AVX-512 code) in two
//!   placements of the Poly1305 work (all in IFMA lanes stitched into the
//!   rounds, or partly on a scalar `mulx` chain, which wins where the rounds
//!   fill the vector units, as on Zen 4), and aws-lc,
//!   which is faster below about `chacha_poly::MIN_LEN` bytes (the default
//!   without a trial) and the only one on other CPUs.
//! - 3DES-EDE-CBC: aws-lc (OpenSSL's own table code) and RustCrypto `des`
//!   (far slower on x86-64).
//! - Blowfish-CBC: `blowfish` (written for speed: the RustCrypto `blowfish`
//!   crate under the CBC loop below falls short of OpenSSL) and the crate;
//!   the crate decrypts in the round trip.
//! - CAST5-CBC: `cast5`, and Camellia-128/192/256-CBC: `camellia` (written
//!   for speed from RFC 2144 and RFC 3713: the RustCrypto `cast5` and
//!   `camellia` crates under a CBC loop fall short of OpenSSL) and the
//!   crates, which also decrypt in the round trip.
//! - RC4: `rc4` (the `rc4` crate falls behind OpenSSL), its x86-64
//!   assembly form `sysgauge-asm` (8 instructions a byte against the
//!   portable kernel's 13; on Zen 3 above OpenSSL where the portable one is
//!   below), and the crate, which also decrypts in the round trip.
//! - DES-CBC: `des` (table-driven, written for speed: the RustCrypto `des`
//!   crate under a CBC loop runs at half OpenSSL's speed) and the crate,
//!   which also decrypts in the round trip.
//! - DES-CBC (the crate), IDEA-CBC, RC2-CBC: the RustCrypto block
//!   ciphers (`des`, `idea`, `rc2`) under the `cbc` crate's
//!   mode. These are the rows of the published `openssl speed` tables
//!   (0.9.8 to 1.0.1) that aws-lc lacks; they are portable code, measured so
//!   such a table can be matched row by row, not written for speed. Their
//!   known answers are the standard vectors (FIPS 81's CBC example, the
//!   IDEA designers' vector, RFC 2268, RFC 3713) run through the stream;
//!   the round trip decrypts with the block cipher under sysgauge's own CBC
//!   loop.
//! - HMAC-SHA256: RustCrypto `hmac` over `sha2` (SHA-NI / ARMv8 SHA2 chosen
//!   at run time), with the keyed state computed once, so a message costs
//!   no key hashing, and aws-lc's HMAC (keyed once too). The round trip
//!   verifies tags with aws-lc's HMAC.
//!
//! - HMAC-MD5, AES-128/192/256-IGE and GHASH (rows of the old tables):
//!   RustCrypto `hmac` over `md-5` (and HMAC over sysgauge's MD5 kernel),
//!   `ige` over `aes`, and `ghash` (and `ghash`'s VPCLMULQDQ and PCLMULQDQ
//!   kernels, written because the crate, one block per reduction, falls
//!   far behind OpenSSL). Known answers: RFC 2202, OpenSSL's
//!   igetest vector, the GCM spec's test case 2; the independent checks are
//!   RFC 2104 over sysgauge's MD5 (RustCrypto's HMAC for the kernel's), IGE
//!   decryption over aws-lc's AES, and aws-lc's AES-GCM tags.
//!
//! AEAD buffers are sealed as whole messages (fresh nonce, tag computed),
//! which is stricter than `openssl speed -evp`'s running update; HMAC
//! buffers are whole messages too. The known answers were produced with an
//! independent implementation (Python `cryptography`/OpenSSL) and match the
//! SP 800-38A examples where those exist.

use super::aes::{CbcEncryptor, CtrEncryptor};
use crate::implementation::{Candidates, Worker};
use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use aws_lc_rs::cipher::{
    DecryptingKey, DecryptionContext, StreamingEncryptingKey, UnboundCipherKey,
};
use cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use sysgauge_family::util::hex;
use thiserror::Error;

/// A symmetric algorithm the crypto family measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cipher {
    Aes128Cbc,
    Aes192Cbc,
    Aes256Cbc,
    Aes128Ctr,
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
    BfCbc,
    Cast5Cbc,
    DesCbc,
    DesEde3Cbc,
    IdeaCbc,
    Rc2Cbc,
    Camellia128Cbc,
    Camellia192Cbc,
    Camellia256Cbc,
    Rc4,
    HmacMd5,
    HmacSha256,
    Aes128Ige,
    Aes192Ige,
    Aes256Ige,
    Ghash,
}

/// Why a stream could not be set up or failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CipherError {
    #[error("{cipher}: {what}")]
    Setup { cipher: &'static str, what: String },
    #[error("{cipher}: {what}")]
    Process {
        cipher: &'static str,
        what: &'static str,
    },
    #[error("{cipher}: known-answer test failed: {what}")]
    KnownAnswer { cipher: &'static str, what: String },
}

/// One algorithm keyed and ready: processes buffers in place, continuing
/// the chain or counter (ciphers) or as whole messages (AEAD, HMAC).
pub trait Stream: Send {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError>;
    /// The tag of the last message (AEAD, HMAC); empty for ciphers.
    fn tag(&self) -> &[u8] {
        &[]
    }
    /// Which implementation runs (for the record's details).
    fn implementation(&self) -> &'static str;
}

/// Implementation names, as `--implementation` takes them and the details
/// record them.
pub const AWS_LC: &str = "aws-lc";
pub const RUSTCRYPTO: &str = "rustcrypto";
/// A portable kernel written for sysgauge (`sysgauge_kernels`).
pub const SYSGAUGE: &str = "sysgauge";
pub const SYSGAUGE_AES_NI: &str = "sysgauge-aes-ni";
pub const SYSGAUGE_VAES_AVX512: &str = "sysgauge-vaes-avx512";
pub const SYSGAUGE_VAES_AVX2: &str = "sysgauge-vaes-avx2";
pub const SYSGAUGE_AVX512: &str = "sysgauge-avx512";
/// ChaCha20-Poly1305 with part of Poly1305 on a scalar `mulx` chain
/// (`chacha_poly::MacPlacement::ScalarChain`).
pub const SYSGAUGE_AVX512_MULX: &str = "sysgauge-avx512-mulx";
pub const SYSGAUGE_VPCLMUL_AVX512: &str = "sysgauge-vpclmul-avx512";
pub const SYSGAUGE_VPCLMUL_AVX2: &str = "sysgauge-vpclmul-avx2";
pub const SYSGAUGE_PCLMUL: &str = "sysgauge-pclmul";
/// RC4 in x86-64 assembly (`rc4::Rc4Asm`).
pub const SYSGAUGE_ASM: &str = "sysgauge-asm";

/// The name of a hand-written GHASH kernel (the portable one is not a
/// candidate: the crate is faster than a carry-less multiplication in
/// integer code).
fn ghash_name(k: super::ghash::Kernel) -> Option<&'static str> {
    match k {
        super::ghash::Kernel::Vpclmul => Some(SYSGAUGE_VPCLMUL_AVX512),
        super::ghash::Kernel::VpclmulAvx2 => Some(SYSGAUGE_VPCLMUL_AVX2),
        super::ghash::Kernel::Pclmul => Some(SYSGAUGE_PCLMUL),
        super::ghash::Kernel::Portable => None,
    }
}

/// The GHASH kernel called `name`, if this CPU runs it.
fn ghash_kernel(name: &str) -> Option<super::ghash::Kernel> {
    use super::ghash::Kernel;
    [Kernel::Vpclmul, Kernel::VpclmulAvx2, Kernel::Pclmul]
        .into_iter()
        .find(|&k| ghash_name(k) == Some(name) && k.available())
}

/// The name of a hand-written AES-CTR kernel.
fn ctr_name(k: super::aes::CtrKernel) -> &'static str {
    match k {
        super::aes::CtrKernel::Vaes512 => SYSGAUGE_VAES_AVX512,
        super::aes::CtrKernel::Vaes256 => SYSGAUGE_VAES_AVX2,
        super::aes::CtrKernel::AesNi => SYSGAUGE_AES_NI,
    }
}

impl Cipher {
    /// Table order. The rows added for the old `openssl speed` tables sit
    /// in that table's order among their neighbours (des-cbc, des-ede3-cbc,
    /// idea-cbc, rc2-cbc; camellia-128, -192, -256; hmac(md5) before
    /// hmac(sha256)), and the 1.0.1 table's last rows (aes-128/192/256 ige,
    /// ghash) come last, as there.
    pub const ALL: [Cipher; 23] = [
        Cipher::Aes128Cbc,
        Cipher::Aes192Cbc,
        Cipher::Aes256Cbc,
        Cipher::Aes128Ctr,
        Cipher::Aes128Gcm,
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
        Cipher::BfCbc,
        Cipher::Cast5Cbc,
        Cipher::DesCbc,
        Cipher::DesEde3Cbc,
        Cipher::IdeaCbc,
        Cipher::Rc2Cbc,
        Cipher::Camellia128Cbc,
        Cipher::Camellia192Cbc,
        Cipher::Camellia256Cbc,
        Cipher::Rc4,
        Cipher::HmacMd5,
        Cipher::HmacSha256,
        Cipher::Aes128Ige,
        Cipher::Aes192Ige,
        Cipher::Aes256Ige,
        Cipher::Ghash,
    ];

    /// Benchmark id (fixed: the `openssl speed` importer maps to these).
    pub fn id(self) -> &'static str {
        match self {
            Cipher::Aes128Cbc => "crypto.aes-128-cbc",
            Cipher::Aes192Cbc => "crypto.aes-192-cbc",
            Cipher::Aes256Cbc => "crypto.aes-256-cbc",
            Cipher::Aes128Ctr => "crypto.aes-128-ctr",
            Cipher::Aes128Gcm => "crypto.aes-128-gcm",
            Cipher::Aes256Gcm => "crypto.aes-256-gcm",
            Cipher::ChaCha20Poly1305 => "crypto.chacha20-poly1305",
            Cipher::BfCbc => "crypto.bf-cbc",
            Cipher::Cast5Cbc => "crypto.cast5-cbc",
            Cipher::DesCbc => "crypto.des-cbc",
            Cipher::DesEde3Cbc => "crypto.des-ede3-cbc",
            Cipher::IdeaCbc => "crypto.idea-cbc",
            Cipher::Rc2Cbc => "crypto.rc2-cbc",
            Cipher::Camellia128Cbc => "crypto.camellia-128-cbc",
            Cipher::Camellia192Cbc => "crypto.camellia-192-cbc",
            Cipher::Camellia256Cbc => "crypto.camellia-256-cbc",
            Cipher::Rc4 => "crypto.rc4",
            Cipher::HmacMd5 => "crypto.hmac-md5",
            Cipher::HmacSha256 => "crypto.hmac-sha256",
            Cipher::Aes128Ige => "crypto.aes-128-ige",
            Cipher::Aes192Ige => "crypto.aes-192-ige",
            Cipher::Aes256Ige => "crypto.aes-256-ige",
            Cipher::Ghash => "crypto.ghash",
        }
    }

    /// The name `openssl speed -evp` takes (and, upper-cased, prints).
    pub fn openssl_name(self) -> &'static str {
        match self {
            Cipher::HmacMd5 => "hmac(md5)",
            Cipher::HmacSha256 => "hmac(sha256)",
            c => c.id().trim_start_matches("crypto."),
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Cipher::Aes128Cbc => "AES-128-CBC",
            Cipher::Aes192Cbc => "AES-192-CBC",
            Cipher::Aes256Cbc => "AES-256-CBC",
            Cipher::Aes128Ctr => "AES-128-CTR",
            Cipher::Aes128Gcm => "AES-128-GCM",
            Cipher::Aes256Gcm => "AES-256-GCM",
            Cipher::ChaCha20Poly1305 => "ChaCha20-Poly1305",
            Cipher::BfCbc => "Blowfish-CBC",
            Cipher::Cast5Cbc => "CAST5-CBC",
            Cipher::DesCbc => "DES-CBC",
            Cipher::DesEde3Cbc => "3DES-EDE-CBC",
            Cipher::IdeaCbc => "IDEA-CBC",
            Cipher::Rc2Cbc => "RC2-CBC",
            Cipher::Camellia128Cbc => "Camellia-128-CBC",
            Cipher::Camellia192Cbc => "Camellia-192-CBC",
            Cipher::Camellia256Cbc => "Camellia-256-CBC",
            Cipher::Rc4 => "RC4",
            Cipher::HmacMd5 => "HMAC-MD5",
            Cipher::HmacSha256 => "HMAC-SHA256",
            Cipher::Aes128Ige => "AES-128-IGE",
            Cipher::Aes192Ige => "AES-192-IGE",
            Cipher::Aes256Ige => "AES-256-IGE",
            Cipher::Ghash => "GHASH",
        }
    }

    pub fn key_len(self) -> usize {
        match self {
            Cipher::Aes128Cbc
            | Cipher::Aes128Ctr
            | Cipher::Aes128Gcm
            | Cipher::BfCbc
            | Cipher::Cast5Cbc
            | Cipher::Camellia128Cbc
            | Cipher::IdeaCbc
            | Cipher::Rc2Cbc
            | Cipher::Rc4
            | Cipher::HmacMd5
            | Cipher::HmacSha256
            | Cipher::Aes128Ige
            | Cipher::Ghash => 16,
            Cipher::DesCbc => 8,
            Cipher::Aes192Cbc | Cipher::DesEde3Cbc | Cipher::Camellia192Cbc | Cipher::Aes192Ige => {
                24
            }
            Cipher::Aes256Cbc
            | Cipher::Aes256Ige
            | Cipher::Aes256Gcm
            | Cipher::ChaCha20Poly1305
            | Cipher::Camellia256Cbc => 32,
        }
    }

    /// IV or nonce length (0 for RC4, HMAC and GHASH; IGE's is two
    /// blocks, the previous ciphertext and plaintext blocks).
    pub fn iv_len(self) -> usize {
        match self {
            Cipher::Aes128Ige | Cipher::Aes192Ige | Cipher::Aes256Ige => 32,
            Cipher::Aes128Cbc
            | Cipher::Aes192Cbc
            | Cipher::Aes256Cbc
            | Cipher::Aes128Ctr
            | Cipher::Camellia128Cbc
            | Cipher::Camellia192Cbc
            | Cipher::Camellia256Cbc => 16,
            Cipher::BfCbc
            | Cipher::Cast5Cbc
            | Cipher::DesCbc
            | Cipher::DesEde3Cbc
            | Cipher::IdeaCbc
            | Cipher::Rc2Cbc => 8,
            Cipher::Aes128Gcm | Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305 => 12,
            Cipher::Rc4 | Cipher::HmacMd5 | Cipher::HmacSha256 | Cipher::Ghash => 0,
        }
    }

    /// Buffers must be a multiple of this (the cipher block for CBC).
    pub fn granule(self) -> usize {
        match self {
            Cipher::Aes128Ctr
            | Cipher::Aes128Gcm
            | Cipher::Aes256Gcm
            | Cipher::ChaCha20Poly1305
            | Cipher::Rc4
            | Cipher::HmacMd5
            | Cipher::HmacSha256
            | Cipher::Ghash => 1,
            Cipher::Aes128Ige | Cipher::Aes192Ige | Cipher::Aes256Ige => 16,
            // The CBC ciphers: their block, which is also their IV's length.
            _ => self.iv_len(),
        }
    }

    /// Key the algorithm. `max_len` is the largest buffer `process` will
    /// get (some implementations need an output buffer of their own).
    pub fn start(
        self,
        key: &[u8],
        iv: &[u8],
        max_len: usize,
    ) -> Result<Box<dyn Stream>, CipherError> {
        self.start_with_aad(key, iv, &[], max_len)
    }

    fn setup_err(self, what: impl Into<String>) -> CipherError {
        CipherError::Setup {
            cipher: self.name(),
            what: what.into(),
        }
    }

    /// Every implementation sysgauge carries of the algorithm, in order
    /// of preference (names as `--implementation` takes them).
    pub fn candidates(self) -> &'static [&'static str] {
        match self {
            Cipher::Aes128Cbc | Cipher::Aes192Cbc | Cipher::Aes256Cbc => {
                &[SYSGAUGE_AES_NI, AWS_LC, RUSTCRYPTO]
            }
            Cipher::Aes128Ctr => &[
                SYSGAUGE_VAES_AVX512,
                SYSGAUGE_VAES_AVX2,
                SYSGAUGE_AES_NI,
                AWS_LC,
            ],
            Cipher::ChaCha20Poly1305 => &[SYSGAUGE_AVX512, SYSGAUGE_AVX512_MULX, AWS_LC],
            Cipher::Aes128Gcm | Cipher::Aes256Gcm => &[AWS_LC],
            Cipher::DesEde3Cbc => &[AWS_LC, RUSTCRYPTO],
            Cipher::BfCbc
            | Cipher::Cast5Cbc
            | Cipher::Camellia128Cbc
            | Cipher::Camellia192Cbc
            | Cipher::Camellia256Cbc => &[SYSGAUGE, RUSTCRYPTO],
            Cipher::Rc4 => &[SYSGAUGE_ASM, SYSGAUGE, RUSTCRYPTO],
            Cipher::HmacSha256 => &[RUSTCRYPTO, AWS_LC],
            Cipher::HmacMd5 => &[RUSTCRYPTO, SYSGAUGE],
            Cipher::DesCbc => &[SYSGAUGE, RUSTCRYPTO],
            Cipher::IdeaCbc
            | Cipher::Rc2Cbc
            | Cipher::Aes128Ige
            | Cipher::Aes192Ige
            | Cipher::Aes256Ige => &[RUSTCRYPTO],
            Cipher::Ghash => &[
                SYSGAUGE_VPCLMUL_AVX512,
                SYSGAUGE_VPCLMUL_AVX2,
                SYSGAUGE_PCLMUL,
                RUSTCRYPTO,
            ],
        }
    }

    /// The candidates this CPU can run (the hand-written SIMD kernels need
    /// their instructions).
    pub fn available(self) -> Vec<&'static str> {
        let ctr = super::aes::ctr_kernels();
        self.candidates()
            .iter()
            .copied()
            .filter(|&name| match (self, name) {
                (Cipher::Aes128Ctr, n) if n != AWS_LC => ctr.iter().any(|k| ctr_name(*k) == n),
                (_, SYSGAUGE_AES_NI) => super::aes::cbc_available(),
                (_, SYSGAUGE_AVX512 | SYSGAUGE_AVX512_MULX) => {
                    chacha_placement(name).is_some_and(|p| p.available())
                }
                (_, SYSGAUGE_ASM) => super::rc4::asm_available(),
                (Cipher::Ghash, n) if n != RUSTCRYPTO => ghash_kernel(n).is_some(),
                _ => true,
            })
            .collect()
    }

    /// The implementation `start` uses for buffers of up to `max_len`
    /// bytes when none is named: the first available candidate, except
    /// that ChaCha20-Poly1305 leaves buffers shorter than
    /// `chacha_poly::MIN_LEN` to aws-lc (faster there).
    pub fn default_implementation(self, max_len: usize) -> &'static str {
        let available = self.available();
        if self == Cipher::ChaCha20Poly1305 && max_len < super::chacha_poly::MIN_LEN {
            return AWS_LC;
        }
        available.first().copied().unwrap_or(AWS_LC)
    }

    fn start_with_aad(
        self,
        key: &[u8],
        iv: &[u8],
        aad: &[u8],
        max_len: usize,
    ) -> Result<Box<dyn Stream>, CipherError> {
        self.start_named(self.default_implementation(max_len), key, iv, aad, max_len)
    }

    /// Key the algorithm with the implementation called `name` (one of
    /// [`Cipher::available`]).
    pub fn start_with(
        self,
        name: &str,
        key: &[u8],
        iv: &[u8],
        max_len: usize,
    ) -> Result<Box<dyn Stream>, CipherError> {
        self.start_named(name, key, iv, &[], max_len)
    }

    fn start_named(
        self,
        name: &str,
        key: &[u8],
        iv: &[u8],
        aad: &[u8],
        max_len: usize,
    ) -> Result<Box<dyn Stream>, CipherError> {
        if key.len() != self.key_len() || iv.len() != self.iv_len() {
            return Err(self.setup_err(format!(
                "wants a {}-byte key and a {}-byte IV",
                self.key_len(),
                self.iv_len()
            )));
        }
        let unavailable = || self.setup_err(format!("'{name}' does not run on this CPU"));
        let aws = |alg: &'static aws_lc_rs::cipher::Algorithm, ctr: bool| {
            let k = UnboundCipherKey::new(alg, key).map_err(|_| self.setup_err("bad key"))?;
            let ctx = match iv.len() {
                16 => {
                    let a: [u8; 16] = iv.try_into().map_err(|_| self.setup_err("bad IV"))?;
                    aws_lc_rs::cipher::EncryptionContext::Iv128(a.into())
                }
                _ => {
                    let a: [u8; 8] = iv.try_into().map_err(|_| self.setup_err("bad IV"))?;
                    aws_lc_rs::cipher::EncryptionContext::Iv64(a.into())
                }
            };
            let s = if ctr {
                StreamingEncryptingKey::less_safe_ctr(k, ctx)
            } else {
                StreamingEncryptingKey::less_safe_cbc_pkcs7(k, ctx)
            }
            .map_err(|_| self.setup_err("aws-lc refused the key"))?;
            Ok::<Box<dyn Stream>, CipherError>(Box::new(AwsStream {
                cipher: self,
                key: s,
                out: vec![0u8; max_len + 32],
            }))
        };
        let is_aes_cbc = matches!(
            self,
            Cipher::Aes128Cbc | Cipher::Aes192Cbc | Cipher::Aes256Cbc
        );
        Ok(match (self, name) {
            (_, SYSGAUGE_AES_NI) if is_aes_cbc => match CbcEncryptor::new(key, iv) {
                Some(e) => Box::new(CbcKernel {
                    cipher: self,
                    kernel: e,
                    implementation: SYSGAUGE_AES_NI,
                }),
                None => return Err(unavailable()),
            },
            (_, AWS_LC) if is_aes_cbc => aws(aws_aes(key.len()), false)?,
            (Cipher::Aes128Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<aes::Aes128>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Aes192Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<aes::Aes192>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Aes256Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<aes::Aes256>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Aes128Ctr, AWS_LC) => aws(aws_aes(key.len()), true)?,
            (
                Cipher::Aes128Ctr,
                n @ (SYSGAUGE_VAES_AVX512 | SYSGAUGE_VAES_AVX2 | SYSGAUGE_AES_NI),
            ) => {
                let kernel = super::aes::ctr_kernels()
                    .into_iter()
                    .find(|k| ctr_name(*k) == n)
                    .ok_or_else(unavailable)?;
                let e = CtrEncryptor::with_kernel(kernel, key, iv)
                    .ok_or_else(|| self.setup_err("bad key or IV"))?;
                Box::new(KeystreamStream {
                    implementation: ctr_name(e.kernel()),
                    keystream: e,
                })
            }
            (Cipher::DesEde3Cbc, AWS_LC) => {
                // Measuring a legacy cipher is the point here.
                #[allow(deprecated)]
                let alg = &aws_lc_rs::cipher::DES_EDE3_FOR_LEGACY_USE_ONLY;
                aws(alg, false)?
            }
            (Cipher::DesEde3Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<des::TdesEde3>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::ChaCha20Poly1305, SYSGAUGE_AVX512 | SYSGAUGE_AVX512_MULX) => {
                let placement = chacha_placement(name)
                    .filter(|p| p.available())
                    .ok_or_else(unavailable)?;
                Box::new(
                    ChaChaPolyStream::new(key, iv, aad, placement)
                        .ok_or_else(|| self.setup_err("bad key or nonce"))?,
                )
            }
            (Cipher::Aes128Gcm | Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305, AWS_LC) => {
                let alg = match self {
                    Cipher::Aes128Gcm => &aead::AES_128_GCM,
                    Cipher::Aes256Gcm => &aead::AES_256_GCM,
                    _ => &aead::CHACHA20_POLY1305,
                };
                let k = UnboundKey::new(alg, key).map_err(|_| self.setup_err("bad key"))?;
                let mut prefix = [0u8; 4];
                prefix.copy_from_slice(&iv[..4]);
                let mut ctr = [0u8; 8];
                ctr.copy_from_slice(&iv[4..12]);
                Box::new(AeadStream {
                    cipher: self,
                    key: LessSafeKey::new(k),
                    prefix,
                    counter: u64::from_be_bytes(ctr),
                    aad: aad.to_vec(),
                    tag: [0; 16],
                })
            }
            (Cipher::BfCbc, SYSGAUGE) => {
                self.kernel_cbc(super::blowfish::BlowfishCbc::new(key, iv), SYSGAUGE)?
            }
            (Cipher::BfCbc, RUSTCRYPTO) => {
                self.crate_cbc::<blowfish::Blowfish>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Cast5Cbc, SYSGAUGE) => {
                self.kernel_cbc(super::cast5::Cast5Cbc::new(key, iv), SYSGAUGE)?
            }
            (Cipher::Cast5Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<cast5::Cast5>(key, iv, RUSTCRYPTO)?
            }
            (
                Cipher::Camellia128Cbc | Cipher::Camellia192Cbc | Cipher::Camellia256Cbc,
                SYSGAUGE,
            ) => self.kernel_cbc(super::camellia::CamelliaCbc::new(key, iv), SYSGAUGE)?,
            (Cipher::Camellia128Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<camellia::Camellia128>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::DesCbc, SYSGAUGE) => {
                self.kernel_cbc(sysgauge_kernels::des::DesCbc::new(key, iv), SYSGAUGE)?
            }
            (Cipher::DesCbc, RUSTCRYPTO) => self.crate_cbc::<des::Des>(key, iv, RUSTCRYPTO)?,
            (Cipher::IdeaCbc, RUSTCRYPTO) => self.crate_cbc::<idea::Idea>(key, iv, RUSTCRYPTO)?,
            (Cipher::Rc2Cbc, RUSTCRYPTO) => self.crate_cbc::<rc2::Rc2>(key, iv, RUSTCRYPTO)?,
            (Cipher::Camellia192Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<camellia::Camellia192>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Camellia256Cbc, RUSTCRYPTO) => {
                self.crate_cbc::<camellia::Camellia256>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Aes128Ige, RUSTCRYPTO) => {
                self.crate_mode::<ige::Encryptor<aes::Aes128>>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Aes192Ige, RUSTCRYPTO) => {
                self.crate_mode::<ige::Encryptor<aes::Aes192>>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Aes256Ige, RUSTCRYPTO) => {
                self.crate_mode::<ige::Encryptor<aes::Aes256>>(key, iv, RUSTCRYPTO)?
            }
            (Cipher::Rc4, SYSGAUGE) => Box::new(KeystreamStream {
                keystream: super::rc4::Rc4::new(key).ok_or_else(|| self.setup_err("bad key"))?,
                implementation: SYSGAUGE,
            }),
            (Cipher::Rc4, SYSGAUGE_ASM) => Box::new(KeystreamStream {
                keystream: super::rc4::Rc4Asm::new(key).ok_or_else(|| self.setup_err("bad key"))?,
                implementation: SYSGAUGE_ASM,
            }),
            (Cipher::Rc4, RUSTCRYPTO) => {
                use cipher::KeyInit as _;
                Box::new(KeystreamStream {
                    keystream: rc4::Rc4::new_from_slice(key)
                        .map_err(|_| self.setup_err("bad key"))?,
                    implementation: RUSTCRYPTO,
                })
            }
            (Cipher::HmacMd5, RUSTCRYPTO) => self.hmac::<md5::Md5>(key, RUSTCRYPTO)?,
            (Cipher::HmacMd5, SYSGAUGE) => {
                Box::new(KernelHmacMd5::new(key).ok_or_else(|| self.setup_err("bad key"))?)
            }
            (Cipher::HmacSha256, RUSTCRYPTO) => self.hmac::<sha2::Sha256>(key, RUSTCRYPTO)?,
            (Cipher::HmacSha256, AWS_LC) => Box::new(AwsHmacStream {
                key: aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key),
                tag: [0; 32],
            }),
            (
                Cipher::Ghash,
                n @ (SYSGAUGE_VPCLMUL_AVX512 | SYSGAUGE_VPCLMUL_AVX2 | SYSGAUGE_PCLMUL),
            ) => {
                let kernel = ghash_kernel(n).ok_or_else(unavailable)?;
                Box::new(KernelGhashStream {
                    keyed: super::ghash::Ghash::with_kernel(kernel, key)
                        .ok_or_else(|| self.setup_err("bad key"))?,
                    tag: [0; 16],
                    implementation: ghash_name(kernel).unwrap_or(SYSGAUGE_PCLMUL),
                })
            }
            (Cipher::Ghash, RUSTCRYPTO) => {
                use cipher::KeyInit as _;
                Box::new(GhashStream {
                    keyed: ghash::GHash::new_from_slice(key)
                        .map_err(|_| self.setup_err("bad key"))?,
                    tag: [0; 16],
                })
            }
            (_, other) => {
                return Err(self.setup_err(format!(
                    "has no implementation '{other}' (it has {})",
                    self.candidates().join(", ")
                )))
            }
        })
    }

    /// A chained-mode encryptor (a sysgauge kernel or a RustCrypto mode)
    /// as a stream, as its constructor returned it (None for a bad key or
    /// IV).
    fn kernel_cbc<K: CbcEncrypt + 'static>(
        self,
        kernel: Option<K>,
        implementation: &'static str,
    ) -> Result<Box<dyn Stream>, CipherError> {
        let kernel = kernel.ok_or_else(|| self.setup_err("bad key or IV"))?;
        Ok(Box::new(CbcKernel {
            cipher: self,
            kernel,
            implementation,
        }))
    }

    /// HMAC over a RustCrypto digest, keyed once.
    fn hmac<D>(
        self,
        key: &[u8],
        implementation: &'static str,
    ) -> Result<Box<dyn Stream>, CipherError>
    where
        D: hmac::EagerHash + Send + 'static,
        D::Core: Send,
    {
        use hmac::KeyInit as _;
        let keyed = hmac::Hmac::<D>::new_from_slice(key).map_err(|_| self.setup_err("bad key"))?;
        Ok(Box::new(HmacStream {
            keyed,
            tag: vec![0; <D as hmac::digest::Digest>::output_size()],
            implementation,
        }))
    }

    /// Whether the algorithm is a MAC: each buffer is one message, the
    /// buffer is left as it is, and what is checked is the tag.
    pub fn is_mac(self) -> bool {
        matches!(self, Cipher::HmacMd5 | Cipher::HmacSha256 | Cipher::Ghash)
    }

    /// A RustCrypto block cipher under the `cbc` crate's encryptor. (RC2's
    /// `KeyInit` sets the effective key length to the key's, 128 bits for
    /// the 16-byte key, as OpenSSL's `rc2-cbc` does.)
    fn crate_cbc<C>(
        self,
        key: &[u8],
        iv: &[u8],
        implementation: &'static str,
    ) -> Result<Box<dyn Stream>, CipherError>
    where
        C: BlockCipherEncrypt + KeyInit + Send + 'static,
    {
        self.crate_mode::<cbc::Encryptor<C>>(key, iv, implementation)
    }

    /// A RustCrypto chained block mode (`cbc`, `ige`) as a stream.
    fn crate_mode<M>(
        self,
        key: &[u8],
        iv: &[u8],
        implementation: &'static str,
    ) -> Result<Box<dyn Stream>, CipherError>
    where
        M: cipher::BlockModeEncrypt + cipher::KeyIvInit + Send + 'static,
    {
        self.kernel_cbc(
            M::new_from_slices(key, iv).ok().map(CrateMode),
            implementation,
        )
    }

    /// Check against the known answer, then check decrypt(encrypt(x)) == x
    /// on `len` bytes (a multiple of `granule`) with an independent decryptor.
    pub fn self_test(self, len: usize) -> Result<(), CipherError> {
        self.self_test_of(self.default_implementation(len), len)
    }

    /// [`Cipher::self_test`] for the implementation called `name`.
    pub fn self_test_of(self, name: &str, len: usize) -> Result<(), CipherError> {
        self.check_vector_with(name, &known_answer(self))?;
        self.round_trip(name, len.max(1))
    }

    /// Run one known-answer vector through a fresh default stream.
    #[cfg(test)]
    fn check_vector(self, v: &Vector) -> Result<(), CipherError> {
        self.check_vector_with(self.default_implementation(v.plaintext.len()), v)
    }

    /// Run one known-answer vector through a fresh stream of `name`.
    fn check_vector_with(self, name: &str, v: &Vector) -> Result<(), CipherError> {
        let kat = |what: String| CipherError::KnownAnswer {
            cipher: self.name(),
            what,
        };
        let mut buf = v.plaintext.to_vec();
        let mut s = self.start_named(name, v.key, v.iv, v.aad, buf.len())?;
        if self.is_mac()
            || matches!(
                self,
                Cipher::Aes128Gcm | Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305
            )
        {
            s.process(&mut buf)?;
        } else {
            // Two calls, to check that the chain or counter carries over
            // (the 64-byte vectors split at 32).
            let cut = (buf.len() / 2).div_ceil(self.granule()) * self.granule();
            let cut = cut.min(buf.len());
            let (a, b) = buf.split_at_mut(cut);
            s.process(a)?;
            s.process(b)?;
        }
        let mut got = if self.is_mac() {
            String::new()
        } else {
            hex(&buf)
        };
        got.push_str(&hex(s.tag()));
        if got != v.expect {
            return Err(kat(format!("got {got}, expected {}", v.expect)));
        }
        Ok(())
    }

    fn round_trip(self, name: &str, len: usize) -> Result<(), CipherError> {
        let len = len.div_ceil(self.granule()) * self.granule();
        let key: Vec<u8> = (0..self.key_len())
            .map(|i| (i as u8).wrapping_mul(29).wrapping_add(3))
            .collect();
        let iv: Vec<u8> = (0..self.iv_len())
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(1))
            .collect();
        let mut plain = vec![0u8; len];
        sysgauge_family::util::fill_pattern(&mut plain, 0xc0ffee);
        let mut buf = plain.clone();
        let mut s = self.start_with(name, &key, &iv, len)?;
        s.process(&mut buf)?;
        let tag = s.tag().to_vec();
        let bad = |what: &str| CipherError::KnownAnswer {
            cipher: self.name(),
            what: what.to_string(),
        };
        match self {
            Cipher::HmacSha256 => {
                let t = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
                return aws_lc_rs::hmac::verify(&t, &plain, &tag)
                    .map_err(|_| bad("HMAC tag does not verify"));
            }
            // aws-lc has no HMAC-MD5: RFC 2104 over sysgauge's own MD5
            // checks RustCrypto's, and RustCrypto's checks sysgauge's.
            Cipher::HmacMd5 if name == SYSGAUGE => {
                use hmac::{KeyInit as _, Mac as _};
                let mut m = hmac::Hmac::<md5::Md5>::new_from_slice(&key)
                    .map_err(|_| bad("RustCrypto hmac refused the key"))?;
                m.update(&plain);
                if m.finalize().into_bytes()[..] != tag[..] {
                    return Err(bad("the tag differs from RustCrypto's HMAC-MD5"));
                }
                return Ok(());
            }
            Cipher::HmacMd5 if hmac_md5_by_definition(&key, &plain)[..] != tag[..] => {
                return Err(bad("the tag differs from RFC 2104 over sysgauge's MD5"));
            }
            Cipher::Ghash => return ghash_against_aws_gcm(name, &key, &plain).map_err(bad),
            Cipher::HmacMd5 => return Ok(()),
            _ => {}
        }
        if len > 0 && buf == plain {
            return Err(bad("encryption left the data unchanged"));
        }
        // The RustCrypto block ciphers under sysgauge's CBC loop.
        let undo = |r: Result<(), cipher::InvalidLength>| {
            r.map_err(|_| bad("the RustCrypto cipher refused the key"))
        };
        match self {
            Cipher::Aes128Cbc | Cipher::Aes192Cbc | Cipher::Aes256Cbc => {
                let k = UnboundCipherKey::new(aws_aes(key.len()), &key)
                    .map_err(|_| bad("aws-lc refused the key"))?;
                let d = DecryptingKey::cbc(k).map_err(|_| bad("aws-lc refused the key"))?;
                let iv16: [u8; 16] = iv.as_slice().try_into().map_err(|_| bad("IV"))?;
                d.decrypt(&mut buf, DecryptionContext::Iv128(iv16.into()))
                    .map_err(|_| bad("aws-lc could not decrypt"))?;
            }
            Cipher::Aes128Ctr => {
                // CTR is its own inverse; decrypt with aws-lc's CTR.
                let k = UnboundCipherKey::new(&aws_lc_rs::cipher::AES_128, &key)
                    .map_err(|_| bad("aws-lc refused the key"))?;
                let d = DecryptingKey::ctr(k).map_err(|_| bad("aws-lc refused the key"))?;
                let iv16: [u8; 16] = iv.as_slice().try_into().map_err(|_| bad("IV"))?;
                d.decrypt(&mut buf, DecryptionContext::Iv128(iv16.into()))
                    .map_err(|_| bad("aws-lc could not decrypt"))?;
            }
            Cipher::Aes128Gcm | Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305 => {
                let alg = match self {
                    Cipher::Aes128Gcm => &aead::AES_128_GCM,
                    Cipher::Aes256Gcm => &aead::AES_256_GCM,
                    _ => &aead::CHACHA20_POLY1305,
                };
                let k = LessSafeKey::new(UnboundKey::new(alg, &key).map_err(|_| bad("key"))?);
                let nonce: [u8; 12] = iv.as_slice().try_into().map_err(|_| bad("nonce"))?;
                buf.extend_from_slice(&tag);
                let out = k
                    .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut buf)
                    .map_err(|_| bad("the tag does not verify"))?;
                let n = out.len();
                buf.truncate(n);
            }
            Cipher::DesEde3Cbc => undo(cbc_decrypt::<des::TdesEde3>(&key, &iv, &mut buf))?,
            Cipher::BfCbc => undo(cbc_decrypt::<blowfish::Blowfish>(&key, &iv, &mut buf))?,
            Cipher::Cast5Cbc => undo(cbc_decrypt::<cast5::Cast5>(&key, &iv, &mut buf))?,
            Cipher::Camellia128Cbc => {
                undo(cbc_decrypt::<camellia::Camellia128>(&key, &iv, &mut buf))?
            }
            Cipher::Camellia192Cbc => {
                undo(cbc_decrypt::<camellia::Camellia192>(&key, &iv, &mut buf))?
            }
            Cipher::Camellia256Cbc => {
                undo(cbc_decrypt::<camellia::Camellia256>(&key, &iv, &mut buf))?
            }
            Cipher::DesCbc => undo(cbc_decrypt::<des::Des>(&key, &iv, &mut buf))?,
            Cipher::IdeaCbc => undo(cbc_decrypt::<idea::Idea>(&key, &iv, &mut buf))?,
            Cipher::Rc2Cbc => undo(cbc_decrypt::<rc2::Rc2>(&key, &iv, &mut buf))?,
            Cipher::Aes128Ige | Cipher::Aes192Ige | Cipher::Aes256Ige => {
                ige_decrypt(&key, &iv, &mut buf).map_err(|()| bad("aws-lc could not decrypt"))?
            }
            Cipher::Rc4 => {
                use cipher::StreamCipher;
                rc4::Rc4::new_from_slice(&key)
                    .map_err(|_| bad("RustCrypto rc4 refused the key"))?
                    .apply_keystream(&mut buf);
            }
            Cipher::HmacMd5 | Cipher::HmacSha256 | Cipher::Ghash => {}
        }
        if buf != plain {
            return Err(bad("decrypt(encrypt(x)) differs from x"));
        }
        Ok(())
    }
}

fn aws_aes(key_len: usize) -> &'static aws_lc_rs::cipher::Algorithm {
    match key_len {
        16 => &aws_lc_rs::cipher::AES_128,
        24 => &aws_lc_rs::cipher::AES_192,
        _ => &aws_lc_rs::cipher::AES_256,
    }
}

/// IGE decryption (OpenSSL's convention: the IV is the previous ciphertext
/// block, then the previous plaintext block) under aws-lc's AES, one block
/// at a time: m = D(c ^ m_prev) ^ c_prev.
fn ige_decrypt(key: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<(), ()> {
    let k = UnboundCipherKey::new(aws_aes(key.len()), key).map_err(|_| ())?;
    let d = DecryptingKey::ecb(k).map_err(|_| ())?;
    let mut c_prev: [u8; 16] = iv.get(..16).ok_or(())?.try_into().map_err(|_| ())?;
    let mut m_prev: [u8; 16] = iv.get(16..32).ok_or(())?.try_into().map_err(|_| ())?;
    for chunk in buf.chunks_exact_mut(16) {
        let c: [u8; 16] = (&*chunk).try_into().map_err(|_| ())?;
        chunk.iter_mut().zip(m_prev).for_each(|(b, m)| *b ^= m);
        d.decrypt(chunk, DecryptionContext::None).map_err(|_| ())?;
        chunk.iter_mut().zip(c_prev).for_each(|(b, p)| *b ^= p);
        c_prev = c;
        m_prev.copy_from_slice(chunk);
    }
    Ok(())
}

/// HMAC-MD5 as RFC 2104 defines it, over sysgauge's own MD5 (keys of at
/// most one 64-byte block, as the crypto family uses).
fn hmac_md5_by_definition(key: &[u8], msg: &[u8]) -> [u8; 16] {
    use sysgauge_kernels::md5::Md5;
    let mut k0 = [0u8; 64];
    k0[..key.len().min(64)].copy_from_slice(&key[..key.len().min(64)]);
    let pad = |b: u8| k0.map(|k| k ^ b);
    let mut inner = Md5::new();
    inner.update(&pad(0x36));
    inner.update(msg);
    let mut outer = Md5::new();
    outer.update(&pad(0x5c));
    outer.update(&inner.finalize());
    outer.finalize()
}

/// GHASH checked against aws-lc's AES-GCM: with H = AES_K(0), the GCM tag
/// of a message is GHASH(H, {}, C) ^ AES_K(J0), and AES_K(J0) is the tag
/// of the empty message under the same nonce.
fn ghash_against_aws_gcm(name: &str, key: &[u8], plain: &[u8]) -> Result<(), &'static str> {
    let k = UnboundCipherKey::new(&aws_lc_rs::cipher::AES_128, key).map_err(|_| "AES key")?;
    let ecb = aws_lc_rs::cipher::EncryptingKey::ecb(k).map_err(|_| "AES key")?;
    let mut h = [0u8; 16];
    ecb.encrypt(&mut h)
        .map_err(|_| "aws-lc could not encrypt")?;
    let gcm = LessSafeKey::new(UnboundKey::new(&aead::AES_128_GCM, key).map_err(|_| "key")?);
    let seal = |buf: &mut Vec<u8>| {
        gcm.seal_in_place_separate_tag(Nonce::assume_unique_for_key([7; 12]), Aad::empty(), buf)
            .map(|t| t.as_ref().to_vec())
            .map_err(|_| "aws-lc could not seal")
    };
    let mask = seal(&mut Vec::new())?;
    let mut ct = plain.to_vec();
    let tag = seal(&mut ct)?;
    let mut s = Cipher::Ghash
        .start_with(name, &h, &[], ct.len())
        .map_err(|_| "GHASH key")?;
    s.process(&mut ct).map_err(|_| "GHASH failed")?;
    let ours: Vec<u8> = s.tag().iter().zip(mask).map(|(a, b)| a ^ b).collect();
    if ours == tag {
        Ok(())
    } else {
        Err("GHASH differs from aws-lc's AES-GCM tag")
    }
}

/// CBC decryption with a RustCrypto block cipher (the independent
/// decryptor of the round-trip checks).
fn cbc_decrypt<C: BlockCipherDecrypt + KeyInit>(
    key: &[u8],
    iv: &[u8],
    buf: &mut [u8],
) -> Result<(), cipher::InvalidLength> {
    let c = C::new_from_slice(key)?;
    let bs = C::block_size();
    let mut prev = iv.to_vec();
    for chunk in buf.chunks_exact_mut(bs) {
        let ct = chunk.to_vec();
        let block = Array::<u8, C::BlockSize>::slice_as_chunks_mut(chunk).0;
        c.decrypt_blocks(block);
        for (b, p) in chunk.iter_mut().zip(prev.iter()) {
            *b ^= p;
        }
        prev = ct;
    }
    Ok(())
}

/// A stream cipher (or counter mode) that XORs its keystream into a
/// buffer, continuing where the last buffer ended.
trait Keystream: Send {
    fn apply(&mut self, buf: &mut [u8]);
}

impl Keystream for CtrEncryptor {
    fn apply(&mut self, buf: &mut [u8]) {
        CtrEncryptor::apply(self, buf)
    }
}

impl Keystream for super::rc4::Rc4 {
    fn apply(&mut self, buf: &mut [u8]) {
        super::rc4::Rc4::apply(self, buf)
    }
}

impl Keystream for super::rc4::Rc4Asm {
    fn apply(&mut self, buf: &mut [u8]) {
        super::rc4::Rc4Asm::apply(self, buf)
    }
}

/// The RustCrypto `rc4` crate.
impl Keystream for rc4::Rc4 {
    fn apply(&mut self, buf: &mut [u8]) {
        use cipher::StreamCipher;
        self.apply_keystream(buf);
    }
}

/// A [`Keystream`] as a [`Stream`].
struct KeystreamStream<K> {
    keystream: K,
    implementation: &'static str,
}

impl<K: Keystream> Stream for KeystreamStream<K> {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        self.keystream.apply(buf);
        Ok(())
    }
    fn implementation(&self) -> &'static str {
        self.implementation
    }
}

/// aws-lc's streaming cipher. It writes to a separate buffer, copied back
/// so the next call encrypts the ciphertext (like `openssl speed`); the
/// copy is a few percent of AES-CBC time and nothing for 3DES.
struct AwsStream {
    cipher: Cipher,
    key: StreamingEncryptingKey,
    out: Vec<u8>,
}

impl Stream for AwsStream {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        let err = |what| CipherError::Process {
            cipher: self.cipher.name(),
            what,
        };
        if self.out.len() < buf.len() + 32 {
            return Err(err("the buffer is larger than announced"));
        }
        let written = self
            .key
            .update(buf, &mut self.out)
            .map_err(|_| err("aws-lc failed to encrypt"))?
            .written()
            .len();
        if written != buf.len() {
            return Err(err("aws-lc held back part of the buffer"));
        }
        buf.copy_from_slice(&self.out[..written]);
        Ok(())
    }
    fn implementation(&self) -> &'static str {
        AWS_LC
    }
}

struct AeadStream {
    cipher: Cipher,
    key: LessSafeKey,
    prefix: [u8; 4],
    counter: u64,
    aad: Vec<u8>,
    tag: [u8; 16],
}

impl Stream for AeadStream {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.prefix);
        n[4..].copy_from_slice(&self.counter.to_be_bytes());
        self.counter = self.counter.wrapping_add(1);
        let tag = self
            .key
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(n),
                Aad::from(self.aad.as_slice()),
                buf,
            )
            .map_err(|_| CipherError::Process {
                cipher: self.cipher.name(),
                what: "aws-lc failed to seal",
            })?;
        self.tag.copy_from_slice(tag.as_ref());
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        AWS_LC
    }
}

/// A CBC encryptor written for sysgauge (AES, Blowfish, CAST5, Camellia):
/// encrypts the buffer in place, continuing the chain; `false` when the
/// buffer is not a whole number of blocks.
pub(crate) trait CbcEncrypt: Send {
    fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool;

    /// What is wrong with a buffer `encrypt_cbc` refused.
    fn not_whole_blocks(&self) -> &'static str {
        "the buffer is not a whole number of cipher blocks"
    }
}

impl CbcEncrypt for CbcEncryptor {
    fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        self.encrypt(buf)
    }

    fn not_whole_blocks(&self) -> &'static str {
        "the buffer is not a whole number of 16-byte blocks"
    }
}

impl<K: CbcEncrypt + ?Sized> CbcEncrypt for Box<K> {
    fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        (**self).encrypt_cbc(buf)
    }

    fn not_whole_blocks(&self) -> &'static str {
        (**self).not_whole_blocks()
    }
}

/// One of the CBC kernels as a [`Stream`].
struct CbcKernel<K> {
    cipher: Cipher,
    kernel: K,
    implementation: &'static str,
}

impl<K: CbcEncrypt> Stream for CbcKernel<K> {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        if self.kernel.encrypt_cbc(buf) {
            Ok(())
        } else {
            Err(CipherError::Process {
                cipher: self.cipher.name(),
                what: self.kernel.not_whole_blocks(),
            })
        }
    }
    fn implementation(&self) -> &'static str {
        self.implementation
    }
}

/// A RustCrypto chained block mode (`cbc`, `ige`) as [`CbcEncrypt`]: whole
/// blocks only, checked before anything is encrypted.
struct CrateMode<M>(M);

impl<M: cipher::BlockModeEncrypt + Send> CbcEncrypt for CrateMode<M> {
    fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
        let (blocks, rest) = Array::<u8, M::BlockSize>::slice_as_chunks_mut(buf);
        if !rest.is_empty() {
            return false;
        }
        self.0.encrypt_blocks(blocks);
        true
    }
}

/// HMAC-MD5 (RFC 2104) over sysgauge's MD5 kernel, with the inner and
/// outer states after the padded key computed once; each buffer is one
/// message.
struct KernelHmacMd5 {
    inner: sysgauge_kernels::md5::Md5,
    outer: sysgauge_kernels::md5::Md5,
    tag: [u8; 16],
}

impl KernelHmacMd5 {
    /// Keys of at most one 64-byte block (the crypto family's are 16).
    fn new(key: &[u8]) -> Option<KernelHmacMd5> {
        use sysgauge_kernels::md5::Md5;
        if key.len() > 64 {
            return None;
        }
        let mut k0 = [0u8; 64];
        k0[..key.len()].copy_from_slice(key);
        let mut inner = Md5::new();
        inner.update(&k0.map(|k| k ^ 0x36));
        let mut outer = Md5::new();
        outer.update(&k0.map(|k| k ^ 0x5c));
        Some(KernelHmacMd5 {
            inner,
            outer,
            tag: [0; 16],
        })
    }
}

impl Stream for KernelHmacMd5 {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        let mut i = self.inner.clone();
        i.update(buf);
        let mut o = self.outer.clone();
        o.update(&i.finalize());
        self.tag = o.finalize();
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        SYSGAUGE
    }
}

/// aws-lc's HMAC-SHA256, keyed once (its key holds the inner and outer
/// states); each buffer is one message.
struct AwsHmacStream {
    key: aws_lc_rs::hmac::Key,
    tag: [u8; 32],
}

impl Stream for AwsHmacStream {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        let t = aws_lc_rs::hmac::sign(&self.key, buf);
        self.tag.copy_from_slice(t.as_ref());
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        AWS_LC
    }
}

/// HMAC with the key's inner and outer states computed once; each message
/// starts from a copy of them (as `openssl speed -hmac` reuses its context).
struct HmacStream<D: hmac::EagerHash> {
    keyed: hmac::Hmac<D>,
    tag: Vec<u8>,
    implementation: &'static str,
}

impl<D> Stream for HmacStream<D>
where
    D: hmac::EagerHash + Send,
    D::Core: Send,
{
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        use hmac::Mac;
        let mut m = self.keyed.clone();
        m.update(buf);
        self.tag.copy_from_slice(&m.finalize().into_bytes());
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        self.implementation
    }
}

/// GCM's length block for a ciphertext of `len` bytes and no AAD: the
/// two bit lengths, big-endian, AAD's (0) first.
fn gcm_lengths(len: usize) -> [u8; 16] {
    let mut lengths = [0u8; 16];
    lengths[8..].copy_from_slice(&(len as u64 * 8).to_be_bytes());
    lengths
}

/// GHASH keyed with H; each buffer is hashed as a GCM ciphertext with no
/// AAD (zero-padded to whole blocks, then the length block), as the GCM
/// spec's GHASH(H, A, C) with A empty. `openssl speed ghash` hashes its
/// buffers as AAD of one running context, without the length block: one
/// block more per buffer here, which is 1/1024 at 16 KiB.
struct GhashStream {
    keyed: ghash::GHash,
    tag: [u8; 16],
}

impl Stream for GhashStream {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        use ghash::universal_hash::UniversalHash;
        let mut g = self.keyed.clone();
        g.update_padded(buf);
        g.update(&[gcm_lengths(buf.len()).into()]);
        self.tag.copy_from_slice(&g.finalize());
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        RUSTCRYPTO
    }
}

/// GHASH with a `sysgauge_kernels::ghash` kernel, as [`GhashStream`] does
/// it with the crate: each buffer is one GCM ciphertext with no AAD.
struct KernelGhashStream {
    keyed: super::ghash::Ghash,
    tag: [u8; 16],
    implementation: &'static str,
}

impl Stream for KernelGhashStream {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        let mut g = self.keyed.clone();
        g.update_padded(buf);
        g.update_padded(&gcm_lengths(buf.len()));
        self.tag = g.finalize();
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        self.implementation
    }
}

/// A known-answer vector: ciphertext (and tag) as hex. The plaintext is a
/// whole number of the cipher's blocks.
struct Vector {
    key: &'static [u8],
    iv: &'static [u8],
    aad: &'static [u8],
    plaintext: &'static [u8],
    expect: &'static str,
}

/// The four plaintext blocks of NIST SP 800-38A, appendix F.
const P64: &[u8] = &[
    0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a,
    0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7, 0x6f, 0xac, 0x45, 0xaf, 0x8e, 0x51,
    0x30, 0xc8, 0x1c, 0x46, 0xa3, 0x5c, 0xe4, 0x11, 0xe5, 0xfb, 0xc1, 0x19, 0x1a, 0x0a, 0x52, 0xef,
    0xf6, 0x9f, 0x24, 0x45, 0xdf, 0x4f, 0x9b, 0x17, 0xad, 0x2b, 0x41, 0x7b, 0xe6, 0x6c, 0x37, 0x10,
];
const K16: &[u8] = &[
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
];
const K24: &[u8] = &[
    0x8e, 0x73, 0xb0, 0xf7, 0xda, 0x0e, 0x64, 0x52, 0xc8, 0x10, 0xf3, 0x2b, 0x80, 0x90, 0x79, 0xe5,
    0x62, 0xf8, 0xea, 0xd2, 0x52, 0x2c, 0x6b, 0x7b,
];
const K32: &[u8] = &[
    0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77, 0x81,
    0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4,
];
const IV16: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
];
const CTR16: &[u8] = &[
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
];
/// GCM / ChaCha20-Poly1305 nonce and AAD of the vectors below.
const NONCE12: &[u8] = &[
    0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88,
];
const AAD20: &[u8] = &[
    0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad, 0xbe, 0xef, 0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad, 0xbe, 0xef,
    0xab, 0xad, 0xda, 0xd2,
];

/// RFC 3713's 256-bit key; its first 16 bytes are also the plaintext, and
/// its first 24 the 192-bit key.
const CAMELLIA_KEY: &[u8] = &[
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
];

const ZERO16: &[u8] = &[0; 16];

/// 00 01 … 1f: the 192- and 256-bit IGE keys and the IGE IV.
const IGE_KEY: [u8; 32] = {
    let mut k = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        k[i] = i as u8;
        i += 1;
    }
    k
};

fn known_answer(c: Cipher) -> Vector {
    let v = |key, iv, aad, expect| Vector {
        key,
        iv,
        aad,
        plaintext: P64,
        expect,
    };
    // A cipher's own standard vector, with its own plaintext.
    let w = |key, iv, plaintext, expect| Vector {
        key,
        iv,
        aad: &[],
        plaintext,
        expect,
    };
    match c {
        // SP 800-38A F.2.1, F.2.3, F.2.5, F.5.1.
        Cipher::Aes128Cbc => v(K16, IV16, &[], "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"),
        Cipher::Aes192Cbc => v(K24, IV16, &[], "4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd"),
        Cipher::Aes256Cbc => v(K32, IV16, &[], "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"),
        Cipher::Aes128Ctr => v(K16, CTR16, &[], "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"),
        Cipher::Aes128Gcm => v(K16, NONCE12, AAD20, "6ac7d9f77a1c8a43af5be6373b9f656281ade2f91ae5ae428656a3e0bf5dde1e69dbb5a61f1c5d69decf7c80c946193435d0f34ac5c4bffa35a2587ed3861cf22dd466d9d487af03af3d4d420e890a39"),
        Cipher::Aes256Gcm => v(K32, NONCE12, AAD20, "cce65692c1064eed7fa3046aa46bd8eaa9c7aa990b4f968bae83cae728c04f8c05a18f4f2dd6e117a6c0b8482ace7c73fcd0f1ae228fa6ab40ddf786d5c9131a432b54def27e68fb4fd65017c794bc6d"),
        Cipher::ChaCha20Poly1305 => v(K32, NONCE12, AAD20, "c377be7c291e80852dce20aaba4eb12114fff239cb675d9295a2230704fb353c079583d296bf7fd996983c7e1ed5ebf942386cdb7f104b8370c19b5999c2ca585cc2ab97c429dbc9ca26d01e4d4219b2"),
        Cipher::BfCbc => v(K16, &IV16[..8], &[], "ee94800dec0bf8935970bafeb43ac6fba6830f8069b3866b7447f50139196bcb05e29e1847e48a0772175d99acead90b4ade765e679a1ad48f19b3c3572ddc38"),
        Cipher::Cast5Cbc => v(K16, &IV16[..8], &[], "f3de5ede9fddaec12f223634022d61cbac076c92d46e7eed0ac7f976674a09a05b8bb33ce7a7f8c95172f54e5993ede95898cbcb4785ab259ab501156d0ef528"),
        Cipher::DesEde3Cbc => v(K24, &IV16[..8], &[], "6c30bb5ebc73b12d40249365d89a274fdd09fc9528a3d946f91543527a0dd63e00fed8aeea00013439c6cddbdd055e5fbed6bb4f3b509b0fad057a3f3dab0d83"),
        Cipher::Camellia128Cbc => v(K16, IV16, &[], "1607cf494b36bbf00daeb0b503c831aba2f2cf671629ef7840c5a5dfb50748870f06165008cf8b8b5a63586362543e54e7208a2ca89cc21aacd56aaa6fb98259"),
        // FIPS 81, appendix C: the CBC example ("Now is the time for all ").
        Cipher::DesCbc => w(
            &[0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef],
            &[0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef],
            b"Now is the time for all ",
            "e5c7cdde872bf27c43e934008c389c0f683788499a7c05f6",
        ),
        // A single block under a zero IV is the block cipher's own vector.
        // IDEA: the designers' vector (key 0001 0002 … 0008, plaintext
        // 0000 0001 0002 0003).
        Cipher::IdeaCbc => w(
            &[
                0x00, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x04, 0x00, 0x05, 0x00, 0x06, 0x00, 0x07,
                0x00, 0x08,
            ],
            &ZERO16[..8],
            &[0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03],
            "11fbed2b01986de5",
        ),
        // RFC 2268 section 5, the 128-bit key with 128 effective bits.
        Cipher::Rc2Cbc => w(
            &[
                0x88, 0xbc, 0xa9, 0x0e, 0x90, 0x87, 0x5a, 0x7f, 0x0f, 0x79, 0xc3, 0x84, 0x62, 0x7b,
                0xaf, 0xb2,
            ],
            &ZERO16[..8],
            &ZERO16[..8],
            "2269552ab0f85ca6",
        ),
        // RFC 3713, appendix A.
        Cipher::Camellia192Cbc => w(&CAMELLIA_KEY[..24], ZERO16, &CAMELLIA_KEY[..16], "b4993401b3e996f84ee5cee7d79b09b9"),
        Cipher::Camellia256Cbc => w(CAMELLIA_KEY, ZERO16, &CAMELLIA_KEY[..16], "9acc237dff16d76c20ef7c919e3a7509"),
        Cipher::Rc4 => v(K16, &[], &[], "eb0946de45304911a216947f73ae71cdd12377ca29c23e9c19502f4fad100bea1961f94998d366efa8f1b48cbb87846327cf836c2ba0f8cac5fc8bface5fec86"),
        Cipher::HmacSha256 => v(K16, &[], &[], "f1c5596d39b26fffd388bc2c85f742088c464ba3982b0662a099c439c488957f"),
        // RFC 2202 section 2, test case 1.
        Cipher::HmacMd5 => w(&[0x0b; 16], &[], b"Hi There", "9294727a3638bb1c13f48ef8158bfc9d"),
        // OpenSSL's test/igetest.c, the second AES-128 vector (key
        // "This is an imple", IV "mentation of IGE mode for OpenSS",
        // ciphertext "L. Let's hope Ben got it right!\n").
        Cipher::Aes128Ige => w(
            b"This is an imple",
            b"mentation of IGE mode for OpenSS",
            &[
                0x99, 0x70, 0x64, 0x87, 0xa1, 0xcd, 0xe6, 0x13, 0xbc, 0x6d, 0xe0, 0xb6, 0xf2, 0x4b,
                0x1c, 0x7a, 0xa4, 0x48, 0xc8, 0xb9, 0xc3, 0x40, 0x3e, 0x34, 0x67, 0xa8, 0xca, 0xd8,
                0x93, 0x40, 0xf5, 0x3b,
            ],
            "4c2e204c6574277320686f70652042656e20676f74206974207269676874210a",
        ),
        // No published IGE vectors for 192- and 256-bit keys: made with
        // Python `cryptography`'s AES under an IGE loop that reproduces
        // igetest.c's AES-128 vectors (key 00 01 … , IV 00 01 … 1f).
        Cipher::Aes192Ige => w(&IGE_KEY[..24], &IGE_KEY, P64, "1a6cde07da91368aeea5473d100c61b0cae9cf0e5626459720c8594bc34f955e7ca3c79337a86edc625b0f21d4098d1be351219dfeb12fc48a2fcd908d6dbb72"),
        Cipher::Aes256Ige => w(&IGE_KEY, &IGE_KEY, P64, "f069243468933b7943fa618217cfc85ef3fe29d517a4c27d645a4bcb73c7e578c5a752571da9e291689fbea0366333a9e0f48ab8b6df6a6c23e3366c01aa1de3"),
        // The GCM specification (McGrew and Viega), test case 2:
        // GHASH(H, {}, C) with H = 66e94bd4…, C = 0388dace….
        Cipher::Ghash => w(
            &[
                0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34,
                0x2b, 0x2e,
            ],
            &[],
            &[
                0x03, 0x88, 0xda, 0xce, 0x60, 0xb6, 0xa3, 0x92, 0xf3, 0x28, 0xc2, 0xb9, 0x71, 0xb2,
                0xfe, 0x78,
            ],
            "f38cbb1ad69223dcc3457ae5b6b0f885",
        ),
    }
}

// The hand-written kernels (sysgauge-kernels) as this family's streams.

/// The kernels' own `encrypt_cbc` as [`CbcEncrypt`].
macro_rules! cbc_encrypt_of_kernel {
    ($($kernel:ty),*) => {$(
        impl CbcEncrypt for $kernel {
            fn encrypt_cbc(&mut self, buf: &mut [u8]) -> bool {
                <$kernel>::encrypt_cbc(self, buf)
            }
        }
    )*};
}

cbc_encrypt_of_kernel!(
    super::blowfish::BlowfishCbc,
    super::cast5::Cast5Cbc,
    super::camellia::CamelliaCbc,
    sysgauge_kernels::des::DesCbc
);

/// Each `chacha_poly` placement and the implementation name it runs under.
const CHACHA_PLACEMENTS: [(&str, super::chacha_poly::MacPlacement); 2] = [
    (SYSGAUGE_AVX512, super::chacha_poly::MacPlacement::Lanes),
    (
        SYSGAUGE_AVX512_MULX,
        super::chacha_poly::MacPlacement::ScalarChain,
    ),
];

/// The `chacha_poly` placement an implementation name stands for.
fn chacha_placement(name: &str) -> Option<super::chacha_poly::MacPlacement> {
    CHACHA_PLACEMENTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, p)| p)
}

/// The crypto family's stream: every buffer is sealed as one message, with
/// a 4-byte fixed nonce prefix and a 64-bit big-endian message counter (as
/// the aws-lc stream in `symmetric.rs` does).
pub struct ChaChaPolyStream {
    key: super::chacha_poly::ChaChaPoly,
    prefix: [u8; 4],
    counter: u64,
    aad: Vec<u8>,
    tag: [u8; 16],
}

impl ChaChaPolyStream {
    /// `None` unless the key is 32 bytes, the nonce 12 and the CPU runs
    /// the placement's kernels.
    pub fn new(
        key: &[u8],
        nonce: &[u8],
        aad: &[u8],
        placement: super::chacha_poly::MacPlacement,
    ) -> Option<ChaChaPolyStream> {
        if nonce.len() != 12 {
            return None;
        }
        let mut prefix = [0u8; 4];
        prefix.copy_from_slice(&nonce[..4]);
        let mut ctr = [0u8; 8];
        ctr.copy_from_slice(&nonce[4..]);
        Some(ChaChaPolyStream {
            key: super::chacha_poly::ChaChaPoly::new(key, placement)?,
            prefix,
            counter: u64::from_be_bytes(ctr),
            aad: aad.to_vec(),
            tag: [0; 16],
        })
    }
}

impl Stream for ChaChaPolyStream {
    fn process(&mut self, buf: &mut [u8]) -> Result<(), CipherError> {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.prefix);
        n[4..].copy_from_slice(&self.counter.to_be_bytes());
        self.counter = self.counter.wrapping_add(1);
        self.tag = self.key.seal(&n, &self.aad, buf);
        Ok(())
    }
    fn tag(&self) -> &[u8] {
        &self.tag
    }
    fn implementation(&self) -> &'static str {
        let placement = self.key.placement();
        CHACHA_PLACEMENTS
            .iter()
            .find(|(_, p)| *p == placement)
            .map_or(SYSGAUGE_AVX512, |&(n, _)| n)
    }
}

/// An algorithm's implementations as the trial in `crate::implementation`
/// sees them: each is checked with the known answer and a round trip at
/// the case's block size, then timed processing buffers of that size.
pub struct CipherCandidates(pub Cipher);

impl Candidates for CipherCandidates {
    fn algorithm_id(&self) -> &'static str {
        self.0.id()
    }

    fn names(&self) -> Vec<&'static str> {
        self.0.available()
    }

    fn all_names(&self) -> Vec<&'static str> {
        self.0.candidates().to_vec()
    }

    fn check(&self, name: &'static str, block: usize) -> Result<(), String> {
        self.0.self_test_of(name, block).map_err(|e| e.to_string())
    }

    fn worker(&self, name: &'static str, block: usize) -> Result<Worker, String> {
        let c = self.0;
        let (key, iv) = bench_key_iv(c);
        let mut stream = c
            .start_with(name, &key, &iv, block)
            .map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; block];
        sysgauge_family::util::fill_pattern(&mut buf, 0x5eed);
        Ok(Box::new(move || {
            stream
                .process(std::hint::black_box(buf.as_mut_slice()))
                .map_err(|e| e.to_string())?;
            std::hint::black_box(stream.tag());
            Ok(())
        }))
    }
}

/// The key and IV the crypto family times with (fixed patterns).
pub fn bench_key_iv(c: Cipher) -> (Vec<u8>, Vec<u8>) {
    let mut key = vec![0u8; c.key_len()];
    sysgauge_family::util::fill_pattern(&mut key, 0x6b65);
    let mut iv = vec![0u8; c.iv_len()];
    sysgauge_family::util::fill_pattern(&mut iv, 0x6976);
    (key, iv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_candidates_pass;

    #[test]
    fn every_algorithm_passes_its_self_test() {
        for c in Cipher::ALL {
            for len in [16usize, 64, 256, 1040, 8192] {
                c.self_test(len)
                    .unwrap_or_else(|e| panic!("{} at {len}: {e}", c.name()));
            }
        }
    }

    /// Every implementation of every algorithm this CPU runs passes the
    /// known answer and the round trip, at short and long buffers.
    #[test]
    fn every_candidate_passes_its_checks() {
        for c in Cipher::ALL {
            let cands = CipherCandidates(c);
            for name in assert_candidates_pass(&cands, &[16, 1040, 8192]) {
                let mut w = cands.worker(name, 64).unwrap();
                w().unwrap();
            }
            // Unknown names are setup errors naming the valid ones.
            let e = c.start_with("nope", &vec![0; c.key_len()], &vec![0; c.iv_len()], 16);
            let e = e.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("has no implementation 'nope'"), "{e}");
        }
    }

    #[test]
    fn ids_and_names() {
        for c in Cipher::ALL {
            assert!(c.id().starts_with("crypto."));
            assert!(!c.openssl_name().starts_with("crypto."));
            assert!(c.granule() >= 1);
        }
        assert_eq!(Cipher::HmacSha256.openssl_name(), "hmac(sha256)");
        assert_eq!(Cipher::HmacMd5.openssl_name(), "hmac(md5)");
        assert_eq!(Cipher::Aes192Ige.id(), "crypto.aes-192-ige");
        assert_eq!(Cipher::DesEde3Cbc.openssl_name(), "des-ede3-cbc");
    }

    #[test]
    fn a_wrong_known_answer_is_caught() {
        // Corrupting the stream must be noticed: encrypt with a different IV.
        let v = known_answer(Cipher::Aes128Cbc);
        let mut s = Cipher::Aes128Cbc.start(v.key, &[0u8; 16], 64).unwrap();
        let mut buf = v.plaintext.to_vec();
        s.process(&mut buf).unwrap();
        assert_ne!(hex(&buf), v.expect);
    }

    /// The rows added for the old tables: each passes its vector, and the
    /// same vector with one bit of its input or of its answer changed fails.
    #[test]
    fn the_old_tables_rows_catch_a_wrong_vector() {
        for c in [
            Cipher::HmacMd5,
            Cipher::Aes128Ige,
            Cipher::Aes192Ige,
            Cipher::Aes256Ige,
            Cipher::Ghash,
        ] {
            c.check_vector(&known_answer(c)).unwrap();
            let mut v = known_answer(c);
            let mut input = v.plaintext.to_vec();
            input[0] ^= 1;
            v.plaintext = Box::leak(input.into_boxed_slice());
            let e = c.check_vector(&v).unwrap_err();
            assert!(matches!(e, CipherError::KnownAnswer { .. }), "{e}");
            let mut v = known_answer(c);
            let mut expect = v.expect.to_string();
            let last = if expect.ends_with('0') { "1" } else { "0" };
            expect.replace_range(expect.len() - 1.., last);
            v.expect = Box::leak(expect.into_boxed_str());
            assert!(c.check_vector(&v).is_err(), "{}", c.name());
            assert!(c.start(&[0; 15], &[0; 32], 16).is_err());
        }
        // The independent checks disagree with a wrong implementation too.
        for name in Cipher::Ghash.available() {
            assert!(ghash_against_aws_gcm(name, &[1; 16], b"sixteen bytes!!!").is_ok());
        }
        assert_ne!(
            hmac_md5_by_definition(&[0x0b; 16], b"Hi There"),
            hmac_md5_by_definition(&[0x0b; 16], b"Hi there")
        );
        let mut buf = [0u8; 32];
        let mut s = Cipher::Aes128Ige.start(&[3; 16], &[4; 32], 32).unwrap();
        s.process(&mut buf).unwrap();
        ige_decrypt(&[3; 16], &[5; 32], &mut buf).unwrap();
        assert_ne!(buf, [0u8; 32], "a wrong IV must not decrypt");
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(Cipher::Aes128Cbc.start(&[0; 15], &[0; 16], 16).is_err());
        assert!(Cipher::BfCbc.start(&[0; 16], &[0; 16], 16).is_err());
        let mut s = Cipher::Aes128Cbc.start(&[0; 16], &[0; 16], 64).unwrap();
        assert!(s.process(&mut [0u8; 17]).is_err());
        let mut s = Cipher::BfCbc.start(&[0; 16], &[0; 8], 64).unwrap();
        assert!(s.process(&mut [0u8; 12]).is_err());
    }

    #[test]
    fn the_crypto_family_picks_the_kernel_from_min_len_on() {
        use super::super::chacha_poly::{available, MIN_LEN};
        let c = Cipher::ChaCha20Poly1305;
        let start = |max_len| {
            c.start(&[7u8; 32], &[9u8; 12], max_len)
                .unwrap()
                .implementation()
        };
        assert_eq!(start(MIN_LEN - 1), "aws-lc");
        let expect = if available() {
            "sysgauge-avx512"
        } else {
            "aws-lc"
        };
        assert_eq!(start(MIN_LEN), expect);
        assert_eq!(start(8192), expect);
        // The family's own check: known answer and a round trip that aws-lc
        // decrypts and verifies, at the sizes the kernels serve, for each
        // placement this CPU runs (the trial's candidates).
        for name in c.available() {
            for len in [MIN_LEN, 1000, 8192, 16384] {
                c.self_test_of(name, len)
                    .unwrap_or_else(|e| panic!("{name}, {len}: {e}"));
            }
            let stream = c.start_with(name, &[7u8; 32], &[9u8; 12], 8192).unwrap();
            assert_eq!(stream.implementation(), name);
        }
        let scalar = super::super::chacha_poly::MacPlacement::ScalarChain.available();
        assert_eq!(c.available().contains(&SYSGAUGE_AVX512_MULX), scalar);
    }
}
