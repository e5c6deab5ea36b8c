//! RSA-1024 PKCS#1 v1.5 signing on sysgauge's 512-bit Montgomery kernel
//! (`sysgauge_kernels::mont512`): a candidate of the `crypto.rsa-1024`
//! row beside aws-lc and RustCrypto's `rsa`.
//!
//! It does the work OpenSSL 3.0's RSA signing does, step for step, so the
//! figure compares like with like:
//! - the PKCS#1 v1.5 encoding (EMSA-PKCS1-v1_5, RFC 8017 9.2) of the
//!   SHA-256 digest in its DigestInfo;
//! - blinding: the input times A = r^e mod n before, the result times
//!   r^-1 after; A and r^-1 are squared for every signature and drawn anew
//!   (random r, its inverse, r^e) every 32, as OpenSSL's `BN_BLINDING`;
//! - CRT: the blinded input reduced mod p and mod q, both halves raised to
//!   the key's full dP and dQ by the kernel's constant-time fixed-window
//!   exponentiation (the two side by side), then Garner's recombination
//!   with qInv;
//! - the fault check: the result raised to e must give the blinded input
//!   back; if not, the signature is refused (an error, never a wrong
//!   signature);
//! - the unblinding and the big-endian output.
//!
//! The kernels do the arithmetic: `mont512` the CRT halves, `mont1024` the
//! steps modulo n (blinding, the check with e), both allocation-free, so a
//! signature allocates nothing. crypto-bigint inverts the blinding value
//! (once per 32 signatures, constant-time).
//! Verification is not here: the candidate verifies with aws-lc's C API
//! (`crate::awslc`), as the aws-lc candidate does (`pubkey.rs`).

use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
use crypto_bigint::{Odd, U1024};
use sysgauge_kernels::mont1024::{Mont1024, Wide};
use sysgauge_kernels::mont512::{Backend, Limbs, ModulusError, Mont512, LIMBS};
use thiserror::Error;

/// The candidate's name when the kernel runs its MULX/ADX backend.
pub const SYSGAUGE_MULX_ADX: &str = "sysgauge-mulx-adx";
/// The candidate's name with the kernel's portable backend.
pub const SYSGAUGE_PORTABLE: &str = "sysgauge";

/// 1024 bits in 64-bit limbs.
const WIDE: usize = 2 * LIMBS;
/// The signature's length in bytes.
pub const SIGNATURE_LEN: usize = 128;

/// Signatures per blinding pair before a new one is drawn (OpenSSL's
/// `BN_BLINDING_COUNTER`).
const BLINDING_USES: u32 = 32;

/// DigestInfo's DER prefix for SHA-256 (RFC 8017 9.2, note 1).
const SHA256_DIGEST_INFO: [u8; 19] = [
    0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05,
    0x00, 0x04, 0x20,
];

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Rsa1024Error {
    #[error("RSA-1024 key: {0}")]
    Key(String),
    /// p, q or n cannot be a modulus of the Montgomery kernels.
    #[error("RSA-1024 key: {which}: {source}")]
    Modulus {
        which: &'static str,
        source: ModulusError,
    },
    #[error("RSA-1024: the digest is {got} bytes, SHA-256's is 32")]
    Digest { got: usize },
    #[error("RSA-1024: the output buffer has {have} bytes, a signature needs {SIGNATURE_LEN}")]
    Buffer { have: usize },
    #[error("RSA-1024: drawing the blinding value failed: {0}")]
    Random(String),
    /// The result raised to e did not give the input back (a fault in the
    /// computation): refused, as OpenSSL would recompute it.
    #[error("RSA-1024: the signature failed its check with the public exponent; refused")]
    Check,
}

/// The kernel backend a candidate name stands for, if this CPU runs it.
pub fn backend_for(name: &str) -> Option<Backend> {
    let b = match name {
        SYSGAUGE_MULX_ADX => Backend::MulxAdx,
        SYSGAUGE_PORTABLE => Backend::Portable,
        _ => return None,
    };
    b.available().then_some(b)
}

/// A private key ready to sign, with its blinding state.
pub struct Rsa1024Signer {
    p: Mont512,
    q: Mont512,
    dp: Limbs,
    dq: Limbs,
    /// q in plain form, for the recombination.
    q_plain: Limbs,
    /// qInv·R mod p: Montgomery-multiplying by it multiplies by qInv.
    qinv_mont: Limbs,
    /// R^3 mod p and mod q: a Montgomery product of x·R^-1 with it is x·R.
    rrr_p: Limbs,
    rrr_q: Limbs,
    n: Mont1024,
    /// crypto-bigint's view of n, for the blinding value's inverse.
    n_params: FixedMontyParams<{ U1024::LIMBS }>,
    e: u64,
    blinding: Blinding,
    rng: SystemRandom,
}

/// A = r^e and Ai = r^-1 mod n, in Montgomery form, and how often used.
struct Blinding {
    a: Wide,
    ai: Wide,
    uses: u32,
}

impl Rsa1024Signer {
    /// The key from PKCS#8 DER (a two-prime RSA key with a 1024-bit
    /// modulus and 512-bit primes), on `backend`.
    pub fn from_pkcs8(der: &[u8], backend: Backend) -> Result<Rsa1024Signer, Rsa1024Error> {
        use rsa::pkcs8::der::asn1::OctetStringRef;
        let key_err = |what: String| Rsa1024Error::Key(what);
        let info = rsa::pkcs8::PrivateKeyInfoRef::try_from(der)
            .map_err(|e| key_err(format!("not PKCS#8: {e}")))?;
        if info.algorithm.oid != rsa::pkcs1::ALGORITHM_OID {
            return Err(key_err(format!(
                "algorithm {} is not rsaEncryption",
                info.algorithm.oid
            )));
        }
        let inner: &OctetStringRef = info.private_key;
        let k = rsa::pkcs1::RsaPrivateKeyRef::try_from(inner.as_bytes())
            .map_err(|e| key_err(format!("not a PKCS#1 RSA key: {e}")))?;
        if k.other_prime_infos.is_some() {
            return Err(key_err(
                "a multi-prime key; this signer takes two primes".into(),
            ));
        }
        let wide = |name: &str, v: &[u8]| {
            be_limbs::<WIDE>(v).ok_or_else(|| key_err(format!("{name} is longer than 1024 bits")))
        };
        let half = |name: &str, v: &[u8]| {
            be_limbs::<LIMBS>(v).ok_or_else(|| key_err(format!("{name} is longer than 512 bits")))
        };
        let n = wide("n", k.modulus.as_bytes())?;
        let e = wide("e", k.public_exponent.as_bytes())?;
        let p = half("p", k.prime1.as_bytes())?;
        let q = half("q", k.prime2.as_bytes())?;
        let dp = half("dP", k.exponent1.as_bytes())?;
        let dq = half("dQ", k.exponent2.as_bytes())?;
        let qinv = half("qInv", k.coefficient.as_bytes())?;
        if n[WIDE - 1] >> 63 == 0 {
            return Err(key_err("the modulus is shorter than 1024 bits".into()));
        }
        // Equal-length primes make q < 2p and p < 2q, which the
        // recombination's single reductions rely on.
        if p[LIMBS - 1] >> 63 == 0 || q[LIMBS - 1] >> 63 == 0 {
            return Err(key_err("a prime is shorter than 512 bits".into()));
        }
        if mul_wide(&p, &q) != n {
            return Err(key_err("p·q is not n".into()));
        }
        if !less(&dp, &p) || !less(&dq, &q) || !less(&qinv, &p) {
            return Err(key_err("dP, dQ or qInv is not reduced".into()));
        }
        let mp = Mont512::with_backend(&p, backend)
            .map_err(|source| Rsa1024Error::Modulus { which: "p", source })?;
        let mq = Mont512::with_backend(&q, backend)
            .map_err(|source| Rsa1024Error::Modulus { which: "q", source })?;
        if e[1..].iter().any(|&l| l != 0) || e[0] < 3 {
            return Err(key_err(
                "the public exponent is not between 3 and 2^64".into(),
            ));
        }
        let e = e[0];
        let n_odd = Option::<Odd<U1024>>::from(Odd::new(to_u1024(&n)))
            .ok_or_else(|| key_err("the modulus is even".into()))?;
        let n_params = FixedMontyParams::new(n_odd);
        let n_mont = Mont1024::with_backend(&n, backend)
            .map_err(|source| Rsa1024Error::Modulus { which: "n", source })?;
        // to_mont(x) = x·R: from 1 to R, R^2, R^3.
        let rrr = |m: &Mont512| m.to_mont(&m.to_mont(&m.to_mont(&one_limbs())));
        let mut signer = Rsa1024Signer {
            qinv_mont: mp.to_mont(&qinv),
            rrr_p: rrr(&mp),
            rrr_q: rrr(&mq),
            p: mp,
            q: mq,
            dp,
            dq,
            q_plain: q,
            n: n_mont,
            n_params,
            e,
            blinding: Blinding {
                a: [0; WIDE],
                ai: [0; WIDE],
                uses: BLINDING_USES,
            },
            rng: SystemRandom::new(),
        };
        signer.renew_blinding()?;
        Ok(signer)
    }

    /// The kernel backend in use.
    pub fn backend(&self) -> Backend {
        self.p.backend()
    }

    /// Sign a SHA-256 `digest` (PKCS#1 v1.5) into `out[..128]`.
    pub fn sign_sha256(&mut self, digest: &[u8], out: &mut [u8]) -> Result<usize, Rsa1024Error> {
        if digest.len() != 32 {
            return Err(Rsa1024Error::Digest { got: digest.len() });
        }
        let have = out.len();
        let out = out
            .get_mut(..SIGNATURE_LEN)
            .ok_or(Rsa1024Error::Buffer { have })?;
        // EM = 00 01 FF..FF 00 || DigestInfo || digest.
        let mut em = [0xffu8; SIGNATURE_LEN];
        em[0] = 0;
        em[1] = 1;
        let t = SIGNATURE_LEN - SHA256_DIGEST_INFO.len() - 32;
        em[t - 1] = 0;
        em[t..t + SHA256_DIGEST_INFO.len()].copy_from_slice(&SHA256_DIGEST_INFO);
        em[SIGNATURE_LEN - 32..].copy_from_slice(digest);
        // Below n: EM starts 00 01 and n has its top bit set.
        let m = from_u1024(&U1024::from_be_slice(&em));

        self.update_blinding()?;
        // The blinded input m·A: A is in Montgomery form and m is not, so
        // their Montgomery product is plain m·A mod n.
        let c = self.n.mul(&m, &self.blinding.a);

        let s = self.crt(&c);

        // The fault check: s^e must be the blinded input. e is public, so
        // square-and-multiply may follow its bits (OpenSSL's check does).
        let check = self
            .n
            .from_mont(&self.n.pow_public(&self.n.to_mont(&s), self.e));
        if check != c {
            return Err(Rsa1024Error::Check);
        }
        // Unblind: s·r^-1.
        let sig = to_u1024(&self.n.mul(&s, &self.blinding.ai));
        out.copy_from_slice(&sig.to_be_bytes());
        Ok(SIGNATURE_LEN)
    }

    /// c^d mod n by the CRT, for c < n.
    fn crt(&self, c: &[u64; WIDE]) -> [u64; WIDE] {
        // c mod p and c mod q in Montgomery form: redc gives c·R^-1, a
        // Montgomery product with R^3 turns that into c·R.
        let cp = self.p.mul(&self.p.redc(c), &self.rrr_p);
        let cq = self.q.mul(&self.q.redc(c), &self.rrr_q);
        let (xp, xq) = self.p.pow2(&cp, &self.dp, &self.q, &cq, &self.dq);
        let m1 = self.p.from_mont(&xp);
        let m2 = self.q.from_mont(&xq);
        // h = (m1 - m2)·qInv mod p; m2 < q < 2p, so one reduction brings
        // it below p.
        let h = self.p.sub_mod(&m1, &self.p.reduce_once(&m2));
        let h = self.p.mul(&h, &self.qinv_mont);
        // s = m2 + h·q, below p·q.
        let mut s = mul_wide(&h, &self.q_plain);
        let mut carry = 0u64;
        for (i, limb) in s.iter_mut().enumerate() {
            let add = if i < LIMBS { m2[i] } else { 0 };
            let v = u128::from(*limb) + u128::from(add) + u128::from(carry);
            *limb = v as u64;
            carry = (v >> 64) as u64;
        }
        s
    }

    /// Square A and Ai, or draw a new pair after `BLINDING_USES` signatures.
    fn update_blinding(&mut self) -> Result<(), Rsa1024Error> {
        self.blinding.uses += 1;
        if self.blinding.uses >= BLINDING_USES {
            return self.renew_blinding();
        }
        self.blinding.a = self.n.sqr(&self.blinding.a);
        self.blinding.ai = self.n.sqr(&self.blinding.ai);
        Ok(())
    }

    /// A new blinding pair: a random r in [1, n) that has an inverse,
    /// A = r^e, Ai = r^-1.
    fn renew_blinding(&mut self) -> Result<(), Rsa1024Error> {
        let n = to_u1024(self.n.modulus());
        for _ in 0..64 {
            let mut bytes = [0u8; SIGNATURE_LEN];
            self.rng
                .fill(&mut bytes)
                .map_err(|e| Rsa1024Error::Random(e.to_string()))?;
            let r = U1024::from_be_slice(&bytes);
            // Uniform in [1, n): redraw the values outside (about half of
            // them); which ones were redrawn says nothing about the r used.
            if r == U1024::ZERO || r >= n {
                continue;
            }
            // crypto-bigint's Montgomery form for 1024 bits has the same
            // R = 2^1024 as `mont1024`, so the inverse carries over as is.
            let r_cb = FixedMontyForm::new(&r, &self.n_params);
            let Some(ai) = Option::<FixedMontyForm<{ U1024::LIMBS }>>::from(r_cb.invert()) else {
                continue;
            };
            let r_mont = self.n.to_mont(&from_u1024(&r));
            self.blinding = Blinding {
                // Variable time in the public e only, as OpenSSL's.
                a: self.n.pow_public(&r_mont, self.e),
                ai: from_u1024(ai.as_montgomery()),
                uses: 0,
            };
            return Ok(());
        }
        Err(Rsa1024Error::Random(
            "64 draws gave no usable blinding value".into(),
        ))
    }
}

/// crypto-bigint's 1024-bit number from 64-bit limbs (its own limbs are
/// 32 bits wide on 32-bit targets, so the bytes are the common ground).
fn to_u1024(x: &Wide) -> U1024 {
    let mut bytes = [0u8; SIGNATURE_LEN];
    for (chunk, limb) in bytes.chunks_exact_mut(8).zip(x) {
        chunk.copy_from_slice(&limb.to_le_bytes());
    }
    U1024::from_le_slice(&bytes)
}

/// The 64-bit limbs of crypto-bigint's 1024-bit number.
fn from_u1024(x: &U1024) -> Wide {
    let bytes = x.to_le_bytes();
    let mut out = [0u64; WIDE];
    for (limb, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        *limb = u64::from_le_bytes(word);
    }
    out
}

fn one_limbs() -> Limbs {
    let mut x = [0u64; LIMBS];
    x[0] = 1;
    x
}

/// A big-endian integer (leading zeros allowed) as N little-endian limbs;
/// `None` if it does not fit.
fn be_limbs<const N: usize>(bytes: &[u8]) -> Option<[u64; N]> {
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let bytes = &bytes[first..];
    if bytes.len() > 8 * N {
        return None;
    }
    let mut out = [0u64; N];
    for (i, chunk) in bytes.rchunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[8 - chunk.len()..].copy_from_slice(chunk);
        out[i] = u64::from_be_bytes(word);
    }
    Some(out)
}

/// a < b.
fn less(a: &Limbs, b: &Limbs) -> bool {
    a.iter().rev().cmp(b.iter().rev()) == std::cmp::Ordering::Less
}

/// The 1024-bit product of two 512-bit numbers.
fn mul_wide(a: &Limbs, b: &Limbs) -> [u64; WIDE] {
    let mut t = [0u64; WIDE];
    for i in 0..LIMBS {
        let mut carry = 0u64;
        for j in 0..LIMBS {
            let v = u128::from(a[i]) * u128::from(b[j]) + u128::from(t[i + j]) + u128::from(carry);
            t[i + j] = v as u64;
            carry = (v >> 64) as u64;
        }
        t[i + LIMBS] = carry;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest as _;

    const KEY: &[u8] = include_bytes!("keys/rsa-1024.pk8.der");
    const OPENSSL_SIG: &[u8] = include_bytes!("keys/rsa-1024.sig");
    const MESSAGE: &[u8] = b"sysgauge known answer";

    #[test]
    fn every_backend_signs_as_openssl_did() {
        let digest = sha2::Sha256::digest(MESSAGE);
        for backend in Backend::all_available() {
            let mut s = Rsa1024Signer::from_pkcs8(KEY, backend).unwrap();
            assert_eq!(s.backend(), backend);
            let mut out = [0u8; SIGNATURE_LEN];
            // Past a blinding renewal: the same bytes every time.
            for _ in 0..(BLINDING_USES + 3) {
                out.fill(0);
                assert_eq!(s.sign_sha256(&digest, &mut out).unwrap(), SIGNATURE_LEN);
                assert_eq!(&out[..], OPENSSL_SIG, "{backend:?}");
            }
            let other = sha2::Sha256::digest(b"another message");
            s.sign_sha256(&other, &mut out).unwrap();
            assert_ne!(&out[..], OPENSSL_SIG);
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut s = Rsa1024Signer::from_pkcs8(KEY, Backend::Portable).unwrap();
        let mut out = [0u8; SIGNATURE_LEN];
        assert_eq!(
            s.sign_sha256(&[0u8; 20], &mut out),
            Err(Rsa1024Error::Digest { got: 20 })
        );
        assert_eq!(
            s.sign_sha256(&[0u8; 32], &mut out[..100]),
            Err(Rsa1024Error::Buffer { have: 100 })
        );
        assert!(Rsa1024Signer::from_pkcs8(&KEY[..200], Backend::Portable).is_err());
        let other = include_bytes!("keys/rsa-2048.pk8.der");
        let e = Rsa1024Signer::from_pkcs8(other, Backend::Portable)
            .err()
            .unwrap();
        assert!(e.to_string().contains("longer than"), "{e}");
        let ec = include_bytes!("keys/ec-p256.pk8.der");
        let e = Rsa1024Signer::from_pkcs8(ec, Backend::Portable)
            .err()
            .unwrap();
        assert!(e.to_string().contains("rsaEncryption"), "{e}");
        assert_eq!(backend_for("nope"), None);
        assert_eq!(backend_for(SYSGAUGE_PORTABLE), Some(Backend::Portable));
    }

    #[test]
    fn a_fault_in_the_exponentiation_is_caught() {
        let mut s = Rsa1024Signer::from_pkcs8(KEY, Backend::best()).unwrap();
        // A wrong dP: the recombined result is no longer c^d, and the
        // check with e refuses it.
        s.dp[0] ^= 2;
        let digest = sha2::Sha256::digest(MESSAGE);
        let mut out = [0u8; SIGNATURE_LEN];
        assert_eq!(s.sign_sha256(&digest, &mut out), Err(Rsa1024Error::Check));
    }

    #[test]
    fn limbs_from_big_endian() {
        assert_eq!(be_limbs::<2>(&[1, 2]), Some([0x0102, 0]));
        assert_eq!(
            be_limbs::<1>(&[0, 0, 1, 2, 3, 4, 5, 6, 7, 8]),
            Some([0x0102030405060708])
        );
        assert_eq!(be_limbs::<1>(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), None);
        assert_eq!(be_limbs::<2>(&[]), Some([0, 0]));
        assert!(less(&[1, 0, 0, 0, 0, 0, 0, 0], &[0, 1, 0, 0, 0, 0, 0, 0]));
        assert!(!less(&[0, 1, 0, 0, 0, 0, 0, 0], &[0, 1, 0, 0, 0, 0, 0, 0]));
    }
}
