//! RC4, written for this project: the RustCrypto `rc4` crate falls behind
//! `openssl speed -evp rc4` (OpenSSL uses x86-64 assembly; docs/performance.md
//! has the numbers). The
//! algorithm is a few lines; what makes it fast here is keeping the state as
//! 32-bit words (no partial-register byte loads and stores) and XORing eight
//! key-stream bytes into the data as one 64-bit word. The `rc4` crate stays
//! as the independent implementation the round trip and the tests compare
//! with.

/// RC4 state: the permutation and the two indexes.
pub struct Rc4 {
    s: [u32; 256],
    x: usize,
    y: usize,
}

impl Rc4 {
    /// Key scheduling; keys of 1 to 256 bytes.
    pub fn new(key: &[u8]) -> Option<Rc4> {
        if key.is_empty() || key.len() > 256 {
            return None;
        }
        let mut s = [0u32; 256];
        for (k, v) in s.iter_mut().enumerate() {
            *v = k as u32;
        }
        let mut j = 0usize;
        for i in 0..256 {
            j = (j + s[i] as usize + key[i % key.len()] as usize) & 255;
            s.swap(i, j);
        }
        Some(Rc4 { s, x: 0, y: 0 })
    }

    #[inline(always)]
    fn next(&mut self) -> u32 {
        self.x = (self.x + 1) & 255;
        let sx = self.s[self.x];
        self.y = (self.y + sx as usize) & 255;
        let sy = self.s[self.y];
        self.s[self.x] = sy;
        self.s[self.y] = sx;
        self.s[((sx + sy) & 255) as usize]
    }

    /// XOR the key stream into `buf`, continuing from the last call.
    pub fn apply(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            let mut ks = 0u64;
            for k in 0..8 {
                ks |= u64::from(self.next()) << (8 * k);
            }
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&(u64::from_le_bytes(a) ^ ks).to_le_bytes());
        }
        for b in chunks.into_remainder() {
            *b ^= self.next() as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::{KeyInit, StreamCipher};
    use proptest::prelude::*;

    #[test]
    fn rfc6229_first_bytes() {
        // RFC 6229, key 0x0102030405 (40 bits): key stream at offset 0.
        let mut r = Rc4::new(&[1, 2, 3, 4, 5]).unwrap_or_else(|| panic!("key"));
        let mut ks = [0u8; 16];
        r.apply(&mut ks);
        assert_eq!(crate::bytes::hex(&ks), "b2396305f03dc027ccc3524a0a1118a8");
        assert!(Rc4::new(&[]).is_none());
    }

    proptest! {
        #[test]
        fn same_as_the_rc4_crate(
            key in proptest::collection::vec(any::<u8>(), 1..64),
            data in proptest::collection::vec(any::<u8>(), 0..3000),
            cut in 0usize..3000,
        ) {
            let mut ours = data.clone();
            let mut r = Rc4::new(&key).unwrap_or_else(|| panic!("key"));
            let (a, b) = ours.split_at_mut(cut.min(data.len()));
            r.apply(a);
            r.apply(b);
            let mut theirs = data.clone();
            let mut c = rc4::Rc4::new_from_slice(&key).unwrap();
            c.apply_keystream(&mut theirs);
            prop_assert_eq!(ours, theirs);
        }
    }
}
