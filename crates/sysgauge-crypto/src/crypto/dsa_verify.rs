//! DSA verification with one simultaneous exponentiation: g^u1 · y^u2
//! mod p in a single run of squarings, each base with its own sliding
//! window over its exponent (interleaved windows, "Shamir's trick"), on
//! aws-lc's Montgomery multiplication (`crate::awslc::MontCtx`).
//!
//! Written here because nothing offers it over fast arithmetic: aws-lc's
//! DSA verification (`BN_mod_exp2_mont`) does two separate
//! exponentiations and multiplies them, about twice the squarings of one
//! pass (OpenSSL's `BN_mod_exp2_mont` interleaves them), and RustCrypto's
//! `dsa` (the other candidate) is portable code about ten times slower.
//!
//! It is a complete verification (FIPS 186-4 section 4.7): the signature is
//! strict DER, 0 < r, s < q, the digest is cut to q's bit length, w =
//! s^-1 mod q (crypto-bigint's safegcd), u1 = z·w and u2 = r·w mod q, and
//! it holds iff (g^u1 · y^u2 mod p) mod q = r. Everything here is public (key, signature, digest),
//! so variable-time code is fine, as in OpenSSL's and aws-lc's own.

use crate::awslc::{self, AwsLcError, BigNum, BnCtx, MontCtx};
use crypto_bigint::{Odd, U256};
use std::cell::RefCell;

/// The largest window: 2^(w-1) precomputed odd powers per base.
const MAX_WINDOW: usize = 6;

/// The window for an exponent of `bits` bits: the fewest multiplications,
/// 2^(w-1) for the table (one more squaring) plus about bits/(w+1) for
/// the windows (the squarings are shared and do not depend on it).
fn window_for(bits: usize) -> usize {
    let cost = |w: usize| (1usize << (w - 1)) as f64 + bits as f64 / (w + 1) as f64;
    (1..=MAX_WINDOW)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(1)
}

/// Reusable memory for [`MultiExp::run`]: the two bases' tables, the
/// window digits and aws-lc's scratch context.
pub struct MultiExp {
    ctx: BnCtx,
    /// Per base, its odd powers b, b^3, b^5, ... in Montgomery form.
    tables: [Vec<BigNum>; 2],
    /// b^2 in Montgomery form, to step the table.
    square: BigNum,
    acc: BigNum,
    /// Per exponent, at each bit position the odd window value whose
    /// table entry is multiplied in there (0: none).
    digits: [Vec<u8>; 2],
    bytes: Vec<u8>,
}

impl MultiExp {
    pub fn new() -> Result<MultiExp, AwsLcError> {
        let table = || -> Result<Vec<BigNum>, AwsLcError> {
            (0..1usize << (MAX_WINDOW - 1))
                .map(|_| BigNum::new())
                .collect()
        };
        Ok(MultiExp {
            ctx: BnCtx::new()?,
            tables: [table()?, table()?],
            square: BigNum::new()?,
            acc: BigNum::new()?,
            digits: [Vec::new(), Vec::new()],
            bytes: Vec::new(),
        })
    }

    /// b0^e0 · b1^e1 mod m (m is `mont`'s modulus, both bases below it),
    /// into `out`.
    pub fn run(
        &mut self,
        mont: &MontCtx,
        bases: [&BigNum; 2],
        exps: [&BigNum; 2],
        out: &mut BigNum,
    ) -> Result<(), AwsLcError> {
        let ctx = &self.ctx;
        for k in 0..2 {
            let w = window_for(exps[k].num_bits());
            sliding_windows(exps[k], w, &mut self.bytes, &mut self.digits[k]);
            // The odd powers that the digits use: b^1, b^3, ..., b^(2^w - 1).
            let table = &mut self.tables[k];
            let (first, rest) = table.split_at_mut(1);
            mont.to_mont(&mut first[0], bases[k], ctx)?;
            if w > 1 {
                mont.mul(&mut self.square, &first[0], &first[0], ctx)?;
                let mut prev = &first[0];
                for entry in rest.iter_mut().take((1 << (w - 1)) - 1) {
                    mont.mul(entry, prev, &self.square, ctx)?;
                    prev = entry;
                }
            }
        }
        let top = self.digits[0].len().max(self.digits[1].len());
        let mut started = false;
        for i in (0..top).rev() {
            if started {
                mont.square_assign(&mut self.acc, ctx)?;
            }
            for k in 0..2 {
                let d = self.digits[k].get(i).copied().unwrap_or(0);
                if d == 0 {
                    continue;
                }
                let entry = &self.tables[k][usize::from(d >> 1)];
                if started {
                    mont.mul_assign(&mut self.acc, entry, ctx)?;
                } else {
                    self.acc.copy_from(entry)?;
                    started = true;
                }
            }
        }
        if started {
            mont.from_mont(out, &self.acc, ctx)
        } else {
            // Both exponents are zero: the product is 1 (m > 1).
            out.set_be_bytes(&[1])
        }
    }
}

/// Left-to-right sliding windows of width up to `w` over `e`: `digits[j]`
/// is the odd value of the window whose lowest bit is j, 0 elsewhere.
/// `bytes` is scratch for e's big-endian bytes.
fn sliding_windows(e: &BigNum, w: usize, bytes: &mut Vec<u8>, digits: &mut Vec<u8>) {
    let n = e.num_bits();
    e.write_be_bytes(bytes);
    let bit = |i: usize| -> bool {
        let from_end = i / 8;
        bytes.len() > from_end && (bytes[bytes.len() - 1 - from_end] >> (i % 8)) & 1 == 1
    };
    digits.clear();
    digits.resize(n, 0);
    let mut i = n;
    while i > 0 {
        let hi = i - 1;
        if !bit(hi) {
            i -= 1;
            continue;
        }
        // The window [lo, hi], at most w bits, ending on a set bit.
        let mut lo = (hi + 1).saturating_sub(w);
        while !bit(lo) {
            lo += 1;
        }
        let mut v = 0u8;
        for b in (lo..=hi).rev() {
            v = (v << 1) | u8::from(bit(b));
        }
        digits[lo] = v;
        i = lo;
    }
}

/// The leftmost `bits` bits of `digest` as a big-endian number (FIPS
/// 186-4 section 4.6: z is the leftmost min(N, outlen) bits of the hash),
/// into `out`.
fn leftmost_bits(digest: &[u8], bits: usize, out: &mut Vec<u8>) {
    out.clear();
    if digest.len() * 8 <= bits {
        out.extend_from_slice(digest);
        return;
    }
    let whole = bits.div_ceil(8);
    out.extend_from_slice(&digest[..whole]);
    let shift = whole * 8 - bits;
    if shift > 0 {
        // Shift the kept bytes right by `shift` bits.
        let mut carry = 0u8;
        for b in out.iter_mut() {
            let next = *b << (8 - shift);
            *b = (*b >> shift) | carry;
            carry = next;
        }
    }
}

/// s^-1 mod q into `out`: with crypto-bigint's safegcd where q fits in
/// 256 bits (every DSA q does; aws-lc's binary inversion took about a
/// seventh of a DSA-1024 verification), else with aws-lc. An error if
/// there is no inverse. `bytes` is scratch.
fn invert_mod(
    s: &BigNum,
    q: &BigNum,
    q_odd: Option<&Odd<U256>>,
    out: &mut BigNum,
    bytes: &mut Vec<u8>,
    ctx: &BnCtx,
) -> Result<(), AwsLcError> {
    let Some(q_odd) = q_odd else {
        return s.mod_inverse_into(out, q, ctx);
    };
    s.write_be_bytes(bytes);
    let mut padded = [0u8; 32];
    let start = padded.len().checked_sub(bytes.len());
    match start.and_then(|i| padded.get_mut(i..)) {
        Some(tail) => tail.copy_from_slice(bytes),
        None => return s.mod_inverse_into(out, q, ctx),
    }
    let inverse = U256::from_be_slice(&padded)
        .invert_odd_mod_vartime(q_odd)
        .into_option()
        .ok_or_else(|| AwsLcError::Call {
            op: "s^-1 mod q",
            reason: "s has no inverse modulo q".into(),
        })?;
    out.set_be_bytes(inverse.to_be_bytes().as_ref())
}

/// q as an odd 256-bit number, if it is one.
fn odd_u256(q: &BigNum) -> Option<Odd<U256>> {
    let bytes = q.to_be_bytes();
    let mut padded = [0u8; 32];
    let start = padded.len().checked_sub(bytes.len())?;
    padded.get_mut(start..)?.copy_from_slice(&bytes);
    Odd::new(U256::from_be_slice(&padded)).into_option()
}

/// The per-call values of a verification, reused across calls.
struct Scratch {
    multi: MultiExp,
    w: BigNum,
    z: BigNum,
    u1: BigNum,
    u2: BigNum,
    v: BigNum,
    v_mod_q: BigNum,
    z_bytes: Vec<u8>,
}

/// A DSA public key, verifying with [`MultiExp`].
pub struct DsaVerifier {
    q: BigNum,
    g: BigNum,
    y: BigNum,
    q_bits: usize,
    /// q for `invert_mod`'s safegcd, where it fits.
    q_odd: Option<Odd<U256>>,
    mont_p: MontCtx,
    scratch: RefCell<Scratch>,
}

impl std::fmt::Debug for DsaVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DsaVerifier")
            .field("p_bits", &self.mont_p.modulus().num_bits())
            .field("q_bits", &self.q_bits)
            .finish()
    }
}

impl DsaVerifier {
    /// The public half of an aws-lc DSA key. The Montgomery context for p
    /// is made once, as aws-lc and OpenSSL cache theirs in the key.
    pub fn new(key: &awslc::Key) -> Result<DsaVerifier, AwsLcError> {
        let awslc::DsaPublic { p, q, g, y } = key.dsa_public()?;
        let ctx = BnCtx::new()?;
        let mont_p = MontCtx::new(&p, &ctx)?;
        let one = BigNum::from_be_bytes(&[1])?;
        for (name, v) in [("g", &g), ("y", &y)] {
            if v.ucmp(&one).is_le() || v.ucmp(&p).is_ge() {
                return Err(AwsLcError::Call {
                    op: "DSA key",
                    reason: format!("{name} is not in 2..p-1"),
                });
            }
        }
        if q.ucmp(&one).is_le() {
            return Err(AwsLcError::Call {
                op: "DSA key",
                reason: "q is not above 1".into(),
            });
        }
        Ok(DsaVerifier {
            q_bits: q.num_bits(),
            q_odd: odd_u256(&q),
            q,
            g,
            y,
            mont_p,
            scratch: RefCell::new(Scratch {
                multi: MultiExp::new()?,
                w: BigNum::new()?,
                z: BigNum::new()?,
                u1: BigNum::new()?,
                u2: BigNum::new()?,
                v: BigNum::new()?,
                v_mod_q: BigNum::new()?,
                z_bytes: Vec::with_capacity(64),
            }),
        })
    }

    /// Whether `sig` (DER) is a valid signature of `digest`. Errors are
    /// aws-lc failures (memory), not bad signatures.
    pub fn verify(&self, digest: &[u8], sig: &[u8]) -> Result<bool, AwsLcError> {
        let Some((r, s)) = awslc::dsa_signature(sig) else {
            return Ok(false);
        };
        let q = &self.q;
        if r.is_zero() || s.is_zero() || r.ucmp(q).is_ge() || s.ucmp(q).is_ge() {
            return Ok(false);
        }
        let mut guard = self
            .scratch
            .try_borrow_mut()
            .map_err(|_| AwsLcError::Call {
                op: "DSA verify",
                reason: "the verifier is already in use".into(),
            })?;
        let sc = &mut *guard;
        let ctx = &sc.multi.ctx;
        invert_mod(&s, q, self.q_odd.as_ref(), &mut sc.w, &mut sc.z_bytes, ctx)?;
        leftmost_bits(digest, self.q_bits, &mut sc.z_bytes);
        sc.z.set_be_bytes(&sc.z_bytes)?;
        BigNum::mod_mul_into(&mut sc.u1, &sc.z, &sc.w, q, ctx)?;
        BigNum::mod_mul_into(&mut sc.u2, &r, &sc.w, q, ctx)?;
        sc.multi.run(
            &self.mont_p,
            [&self.g, &self.y],
            [&sc.u1, &sc.u2],
            &mut sc.v,
        )?;
        BigNum::nnmod_into(&mut sc.v_mod_q, &sc.v, q, &sc.multi.ctx)?;
        Ok(sc.v_mod_q.ucmp(&r).is_eq())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bn(bytes: &[u8]) -> BigNum {
        BigNum::from_be_bytes(bytes).unwrap()
    }

    #[test]
    fn windows_cover_the_exponent() {
        let mut bytes = Vec::new();
        let mut digits = Vec::new();
        for (e, w) in [
            (&[0b1011_0110u8, 0x01][..], 3),
            (&[0xff, 0xff, 0xff], 5),
            (&[0x80, 0, 0, 1], 4),
            (&[1], 1),
        ] {
            let n = bn(e);
            sliding_windows(&n, w, &mut bytes, &mut digits);
            // Sum of digit · 2^position is the exponent; digits are odd
            // and below 2^w.
            let mut sum = 0u128;
            for (i, &d) in digits.iter().enumerate() {
                assert!(d == 0 || (d & 1 == 1 && usize::from(d) < 1 << w), "{d}");
                sum += u128::from(d) << i;
            }
            let want = e.iter().fold(0u128, |a, &b| (a << 8) | u128::from(b));
            assert_eq!(sum, want);
        }
        let zero = BigNum::new().unwrap();
        sliding_windows(&zero, 4, &mut bytes, &mut digits);
        assert!(digits.is_empty());
    }

    #[test]
    fn the_window_grows_with_the_exponent() {
        assert_eq!(window_for(0), 1);
        assert_eq!(window_for(160), 4);
        assert_eq!(window_for(256), 5);
        assert!(window_for(4096) <= MAX_WINDOW);
    }

    #[test]
    fn digests_are_cut_to_q_bits() {
        let mut out = Vec::new();
        leftmost_bits(&[0xab, 0xcd, 0xef], 16, &mut out);
        assert_eq!(out, [0xab, 0xcd]);
        leftmost_bits(&[0xab, 0xcd, 0xef], 12, &mut out);
        assert_eq!(out, [0x0a, 0xbc]);
        leftmost_bits(&[0xab, 0xcd], 160, &mut out);
        assert_eq!(out, [0xab, 0xcd]);
    }

    /// Random big-endian bytes made an odd number of their full length
    /// (the lowest bit and the top bit set): a modulus to test with.
    fn odd_top_set(mut v: Vec<u8>) -> Vec<u8> {
        let last = v.len() - 1;
        v[last] |= 1;
        v[0] |= 0x80;
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The safegcd inversion agrees with aws-lc's, including when
        /// there is no inverse (random odd moduli are rarely prime).
        #[test]
        fn inversion_matches_aws_lc(
            q in prop::collection::vec(any::<u8>(), 1..=32),
            s in prop::collection::vec(any::<u8>(), 1..=32),
        ) {
            let q = odd_top_set(q);
            let ctx = BnCtx::new().unwrap();
            let q = bn(&q);
            let mut s_red = BigNum::new().unwrap();
            BigNum::nnmod_into(&mut s_red, &bn(&s), &q, &ctx).unwrap();
            let q_odd = odd_u256(&q);
            prop_assert!(q_odd.is_some());
            let mut ours = BigNum::new().unwrap();
            let mut theirs = BigNum::new().unwrap();
            let mut scratch = Vec::new();
            let a = invert_mod(&s_red, &q, q_odd.as_ref(), &mut ours, &mut scratch, &ctx);
            let b = s_red.mod_inverse_into(&mut theirs, &q, &ctx);
            prop_assert_eq!(a.is_ok(), b.is_ok());
            if a.is_ok() {
                prop_assert_eq!(ours.to_be_bytes(), theirs.to_be_bytes());
            }
        }

        /// One pass equals two separate exponentiations (aws-lc's own
        /// `BN_mod_exp_mont`) multiplied, on random odd moduli, bases and
        /// exponents, including zero exponents.
        #[test]
        fn multi_exp_matches_two_exponentiations(
            m in prop::collection::vec(any::<u8>(), 1..=256),
            b0 in prop::collection::vec(any::<u8>(), 0..=256),
            b1 in prop::collection::vec(any::<u8>(), 0..=256),
            e0 in prop::collection::vec(any::<u8>(), 0..=40),
            e1 in prop::collection::vec(any::<u8>(), 0..=40),
        ) {
            let mut m = odd_top_set(m);
            if m.len() == 1 {
                m[0] |= 2; // above 1
            }
            let ctx = BnCtx::new().unwrap();
            let modulus = bn(&m);
            let mont = MontCtx::new(&modulus, &ctx).unwrap();
            let mut x0 = BigNum::new().unwrap();
            let mut x1 = BigNum::new().unwrap();
            BigNum::nnmod_into(&mut x0, &bn(&b0), &modulus, &ctx).unwrap();
            BigNum::nnmod_into(&mut x1, &bn(&b1), &modulus, &ctx).unwrap();
            let (y0, y1) = (bn(&e0), bn(&e1));
            let mut multi = MultiExp::new().unwrap();
            let mut ours = BigNum::new().unwrap();
            multi.run(&mont, [&x0, &x1], [&y0, &y1], &mut ours).unwrap();
            let mut p0 = BigNum::new().unwrap();
            let mut p1 = BigNum::new().unwrap();
            let mut want = BigNum::new().unwrap();
            BigNum::mod_exp_into(&mut p0, &x0, &y0, &mont, &ctx).unwrap();
            BigNum::mod_exp_into(&mut p1, &x1, &y1, &mont, &ctx).unwrap();
            BigNum::mod_mul_into(&mut want, &p0, &p1, &modulus, &ctx).unwrap();
            prop_assert_eq!(ours.to_be_bytes(), want.to_be_bytes());
        }
    }
}
