//! What the kernels' tests share: each hash is checked against its
//! published vectors and an independent crate the same way, and each CBC
//! cipher against its reference crate's block cipher run in a CBC loop, so
//! one set of checks (every length around the padding, streaming in
//! pieces, a chain carried across calls, bad inputs refused) serves every
//! kernel.

use cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt};
use proptest::prelude::*;
use std::fmt::Debug;

/// Bytes from hex; white space between the digits is ignored, so long
/// vectors can be wrapped.
pub(crate) fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// `digest` of each input is its published digest (lowercase hex).
pub(crate) fn assert_digests<D: AsRef<[u8]>>(digest: impl Fn(&[u8]) -> D, cases: &[(&[u8], &str)]) {
    for &(input, expect) in cases {
        assert_eq!(
            crate::bytes::hex(digest(input).as_ref()),
            expect,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// `ours` and `reference` agree on every length of a fixed fill (from
/// `seed`) below `max`: every padding case and block boundary up to there.
/// `what` names the kernel in a failure.
pub(crate) fn assert_every_length<D: PartialEq + Debug>(
    what: &str,
    ours: impl Fn(&[u8]) -> D,
    reference: impl Fn(&[u8]) -> D,
    max: usize,
    seed: u64,
) {
    let mut data = vec![0u8; max];
    crate::bytes::fill_pattern(&mut data, seed);
    for len in 0..max {
        assert_eq!(
            ours(&data[..len]),
            reference(&data[..len]),
            "{what}, length {len}"
        );
    }
}

/// A hash's streaming type, for the checks below; `streaming_hash!`
/// implements it.
pub(crate) trait Streaming: Default {
    type Digest: PartialEq + Debug;
    fn feed(&mut self, data: &[u8]);
    fn digest(self) -> Self::Digest;
}

/// `Streaming` for a type with `update` and `finalize` returning `$digest`.
macro_rules! streaming_hash {
    ($name:ty, $digest:ty) => {
        impl $crate::test_support::Streaming for $name {
            type Digest = $digest;
            fn feed(&mut self, data: &[u8]) {
                self.update(data);
            }
            fn digest(self) -> $digest {
                self.finalize()
            }
        }
    };
}
pub(crate) use streaming_hash;

/// The digest of `pieces` fed one after the other.
pub(crate) fn digest_in_pieces<H: Streaming>(pieces: &[&[u8]]) -> H::Digest {
    let mut h = H::default();
    for p in pieces {
        h.feed(p);
    }
    h.digest()
}

/// Streaming a message in pieces (a first part at each split around the
/// block boundaries, then pieces of several sizes) gives what `one` gives
/// for the whole message.
pub(crate) fn assert_streaming_any_split<H: Streaming>(one: impl Fn(&[u8]) -> H::Digest) {
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
    for split in [0, 1, 55, 56, 63, 64, 65, 127, 128, 500, 999, 1000] {
        for piece in [1, 7, 64, 100] {
            let mut h = H::default();
            h.feed(&data[..split]);
            for chunk in data[split..].chunks(piece) {
                h.feed(chunk);
            }
            assert_eq!(h.digest(), one(&data), "split {split} piece {piece}");
        }
    }
}

/// A CBC kernel that encrypts, continuing its chain from the last call;
/// false (and nothing changed) for a buffer that is not whole blocks.
pub(crate) trait CbcEncrypt {
    fn encrypt(&mut self, buf: &mut [u8]) -> bool;
}

/// A CBC kernel that also decrypts, likewise.
pub(crate) trait CbcDecrypt: CbcEncrypt {
    fn decrypt(&mut self, buf: &mut [u8]) -> bool;
}

/// The kernels' `encrypt_cbc` and `decrypt_cbc` as the traits above.
macro_rules! cbc_kernel {
    ($t:ty) => {
        impl CbcEncrypt for $t {
            fn encrypt(&mut self, buf: &mut [u8]) -> bool {
                self.encrypt_cbc(buf)
            }
        }
    };
    ($t:ty, decrypts) => {
        cbc_kernel!($t);
        impl CbcDecrypt for $t {
            fn decrypt(&mut self, buf: &mut [u8]) -> bool {
                self.decrypt_cbc(buf)
            }
        }
    };
}
cbc_kernel!(Box<crate::blowfish::BlowfishCbc>);
cbc_kernel!(crate::camellia::CamelliaCbc, decrypts);
cbc_kernel!(crate::cast5::Cast5Cbc, decrypts);
cbc_kernel!(crate::des::DesCbc, decrypts);

/// CBC encryption of whole blocks with a reference crate's block cipher.
pub(crate) fn reference_cbc_encrypt<C: BlockCipherEncrypt>(c: &C, iv: &[u8], data: &mut [u8]) {
    let mut prev = iv.to_vec();
    for block in Array::<u8, C::BlockSize>::slice_as_chunks_mut(data).0 {
        for (x, p) in block.iter_mut().zip(&prev) {
            *x ^= p;
        }
        c.encrypt_block(block);
        prev.copy_from_slice(block);
    }
}

/// CBC decryption of whole blocks with a reference crate's block cipher.
pub(crate) fn reference_cbc_decrypt<C: BlockCipherDecrypt>(c: &C, iv: &[u8], data: &mut [u8]) {
    let mut prev = iv.to_vec();
    for block in Array::<u8, C::BlockSize>::slice_as_chunks_mut(data).0 {
        let ciphertext = block.clone();
        c.decrypt_block(block);
        for (x, p) in block.iter_mut().zip(&prev) {
            *x ^= p;
        }
        prev.copy_from_slice(&ciphertext);
    }
}

/// One random case of the CBC checks: a key, an IV, a message of whole
/// `B`-byte blocks, and the block at which the kernel's input is cut into
/// two calls (clamped to the message), so the chain must carry over.
#[derive(Debug, Clone)]
pub(crate) struct CbcCase<const B: usize> {
    pub(crate) key: Vec<u8>,
    pub(crate) iv: [u8; B],
    blocks: Vec<[u8; B]>,
    cut: usize,
}

impl<const B: usize> CbcCase<B> {
    fn message(&self) -> Vec<u8> {
        self.blocks.concat()
    }

    /// The byte at which the kernel's input is cut.
    fn cut_at(&self) -> usize {
        B * self.cut.min(self.blocks.len())
    }
}

/// Cases with keys of a length `key_len` draws, and messages of fewer than
/// `max_blocks` blocks.
pub(crate) fn cbc_cases<const B: usize>(
    key_len: impl Strategy<Value = usize>,
    max_blocks: usize,
) -> impl Strategy<Value = CbcCase<B>> {
    (
        key_len.prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n)),
        proptest::array::uniform::<_, B>(any::<u8>()),
        proptest::collection::vec(proptest::array::uniform::<_, B>(any::<u8>()), 0..max_blocks),
        0..max_blocks,
    )
        .prop_map(|(key, iv, blocks, cut)| CbcCase {
            key,
            iv,
            blocks,
            cut,
        })
}

/// The kernel made by `new(key, iv)` encrypts the case's message as the
/// reference block cipher `c` (keyed with the case's key) does in a CBC
/// loop, in two calls; the ciphertext.
pub(crate) fn encrypts_like_the_crate<K: CbcEncrypt, C: BlockCipherEncrypt, const B: usize>(
    c: &C,
    new: impl Fn(&[u8], &[u8]) -> Option<K>,
    case: &CbcCase<B>,
) -> Result<Vec<u8>, TestCaseError> {
    let mut ours = case.message();
    let mut e = new(&case.key, &case.iv).unwrap_or_else(|| panic!("key"));
    let (x, y) = ours.split_at_mut(case.cut_at());
    prop_assert!(e.encrypt(x));
    prop_assert!(e.encrypt(y));
    let mut theirs = case.message();
    reference_cbc_encrypt(c, &case.iv, &mut theirs);
    prop_assert_eq!(&ours, &theirs);
    Ok(ours)
}

/// As `encrypts_like_the_crate`, and then decryption: the kernel undoes
/// its encryption (in two calls cut at the same block), and agrees with
/// the crate on the random message read as ciphertext.
pub(crate) fn same_as_the_crate<K, C, const B: usize>(
    c: &C,
    new: impl Fn(&[u8], &[u8]) -> Option<K>,
    case: &CbcCase<B>,
) -> Result<(), TestCaseError>
where
    K: CbcDecrypt,
    C: BlockCipherEncrypt + BlockCipherDecrypt,
{
    let mut ours = encrypts_like_the_crate(c, &new, case)?;
    let mut d = new(&case.key, &case.iv).unwrap_or_else(|| panic!("key"));
    let (x, y) = ours.split_at_mut(case.cut_at());
    prop_assert!(d.decrypt(x));
    prop_assert!(d.decrypt(y));
    prop_assert_eq!(&ours, &case.message());
    let mut ours = case.message();
    let mut d = new(&case.key, &case.iv).unwrap_or_else(|| panic!("key"));
    prop_assert!(d.decrypt(&mut ours));
    let mut theirs = case.message();
    reference_cbc_decrypt(c, &case.iv, &mut theirs);
    prop_assert_eq!(ours, theirs);
    Ok(())
}

/// `new` refuses a key of each of `bad_key_lens` bytes (with a good IV)
/// and an IV of two blocks (with the good `key`); the kernel refuses to
/// encrypt a buffer of one and a half blocks and leaves it as it was. The
/// kernel.
pub(crate) fn refuses_bad_inputs<K: CbcEncrypt>(
    new: impl Fn(&[u8], &[u8]) -> Option<K>,
    key: &[u8],
    block: usize,
    bad_key_lens: &[usize],
) -> K {
    let iv = vec![0u8; block];
    for &len in bad_key_lens {
        assert!(new(&vec![0; len], &iv).is_none(), "{len}-byte key");
    }
    assert!(new(key, &[0; 32][..2 * block]).is_none(), "two-block IV");
    let mut k = new(key, &iv).unwrap_or_else(|| panic!("key"));
    let mut odd = vec![7u8; block * 3 / 2];
    assert!(!k.encrypt(&mut odd));
    assert_eq!(odd, vec![7u8; block * 3 / 2]);
    k
}

/// As `refuses_bad_inputs`, and the kernel refuses to decrypt the buffer of
/// one and a half blocks too, leaving it as it was.
pub(crate) fn refuses_bad_inputs_both_ways<K: CbcDecrypt>(
    new: impl Fn(&[u8], &[u8]) -> Option<K>,
    key: &[u8],
    block: usize,
    bad_key_lens: &[usize],
) {
    let mut k = refuses_bad_inputs(new, key, block, bad_key_lens);
    let mut odd = vec![7u8; block * 3 / 2];
    assert!(!k.decrypt(&mut odd));
    assert_eq!(odd, vec![7u8; block * 3 / 2]);
}
