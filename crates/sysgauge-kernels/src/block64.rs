//! The streaming part every 64-byte-block hash shares (MD4, MD5,
//! Whirlpool): the bytes of an unfinished block, the message length, and
//! feeding whole blocks to the algorithm's compression function straight
//! from the caller's slice (no copy for full blocks). MD4 and MD5 also share
//! their ending and, through `md_hasher!`, their streaming type.

/// Buffered input of a hash with 64-byte blocks.
#[derive(Clone)]
pub(crate) struct Blocks64 {
    buf: [u8; 64],
    buffered: usize,
    total: u64,
}

impl Blocks64 {
    pub(crate) const fn new() -> Self {
        Blocks64 {
            buf: [0; 64],
            buffered: 0,
            total: 0,
        }
    }

    /// Takes `data`, calling `compress` with whole blocks only (a multiple
    /// of 64 bytes, possibly none); the rest waits for the next call.
    pub(crate) fn update(&mut self, mut data: &[u8], mut compress: impl FnMut(&[u8])) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.buffered > 0 {
            let take = (64 - self.buffered).min(data.len());
            self.buf[self.buffered..self.buffered + take].copy_from_slice(&data[..take]);
            self.buffered += take;
            data = &data[take..];
            if self.buffered < 64 {
                return;
            }
            compress(&self.buf);
            self.buffered = 0;
        }
        let full = data.len() / 64 * 64;
        compress(&data[..full]);
        let rem = &data[full..];
        self.buf[..rem.len()].copy_from_slice(rem);
        self.buffered = rem.len();
    }

    /// The bytes of the unfinished block.
    pub(crate) fn rest(&self) -> &[u8] {
        &self.buf[..self.buffered]
    }

    /// The message length so far, in bytes.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

/// MD4's and MD5's ending (RFC 1320 3.1-3.2, RFC 1321 3.1-3.2): a 1 bit,
/// zeros, the bit length little-endian, and the state's words as the
/// digest's bytes.
pub(crate) fn md_finish(
    mut state: [u32; 4],
    rem: &[u8],
    len: u64,
    compress: impl Fn(&mut [u32; 4], &[u8]),
) -> [u8; 16] {
    let mut tail = [0u8; 128];
    tail[..rem.len()].copy_from_slice(rem);
    tail[rem.len()] = 0x80;
    let end = if rem.len() < 56 { 64 } else { 128 };
    let bits = len.wrapping_mul(8);
    tail[end - 8..end].copy_from_slice(&bits.to_le_bytes());
    compress(&mut state, &tail[..end]);
    let mut out = [0u8; 16];
    for (o, s) in out.chunks_exact_mut(4).zip(state.iter()) {
        o.copy_from_slice(&s.to_le_bytes());
    }
    out
}

/// The test suite RFC 1320 (MD4) and RFC 1321 (MD5) share, A.5 of each:
/// seven messages, and each one's MD4 and MD5 digests.
#[cfg(test)]
pub(crate) const MD_SUITE: [(&[u8], &str, &str); 7] = [
    (
        b"",
        "31d6cfe0d16ae931b73c59d7e0c089c0",
        "d41d8cd98f00b204e9800998ecf8427e",
    ),
    (
        b"a",
        "bde52cb31de33e46245e05fbdbd6fb24",
        "0cc175b9c0f1b6a831c399e269772661",
    ),
    (
        b"abc",
        "a448017aaf21d8525fc10ae87aa6729d",
        "900150983cd24fb0d6963f7d28e17f72",
    ),
    (
        b"message digest",
        "d9130a8164549fe818874806e1c7014b",
        "f96b697d7cb7938d525a2f31aaf161d0",
    ),
    (
        b"abcdefghijklmnopqrstuvwxyz",
        "d79e1c308aa5bbcdeea8ed63df412da9",
        "c3fcd3d76192e4007dfb496cca67e13b",
    ),
    (
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "043f8582f241db351ce627e153e7f0e4",
        "d174ab98d277d9f5a5611c2c9f419d9f",
    ),
    (
        b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "e33b4ddc9c38f2199c3e7b164fcc0536",
        "57edf4a22be3c955ac49da2e2107b67a",
    ),
];

/// An MD4-family hash's streaming type `$name` and one-call function `$one`,
/// around the calling module's `INIT` state and its compression function
/// `compress(&mut [u32; 4], whole_blocks)`.
macro_rules! md_hasher {
    ($(#[$doc:meta])* $name:ident, $(#[$one_doc:meta])* fn $one:ident) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            state: [u32; 4],
            input: $crate::block64::Blocks64,
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $name {
            pub fn new() -> Self {
                $name {
                    state: INIT,
                    input: $crate::block64::Blocks64::new(),
                }
            }

            pub fn update(&mut self, data: &[u8]) {
                let state = &mut self.state;
                self.input.update(data, |blocks| compress(state, blocks));
            }

            pub fn finalize(self) -> [u8; 16] {
                let (rest, total) = (self.input.rest(), self.input.total());
                $crate::block64::md_finish(self.state, rest, total, compress)
            }
        }

        #[cfg(test)]
        $crate::test_support::streaming_hash!($name, [u8; 16]);

        $(#[$one_doc])*
        pub fn $one(data: &[u8]) -> [u8; 16] {
            let mut state = INIT;
            let full = data.len() / 64 * 64;
            compress(&mut state, &data[..full]);
            $crate::block64::md_finish(state, &data[full..], data.len() as u64, compress)
        }
    };
}
pub(crate) use md_hasher;
