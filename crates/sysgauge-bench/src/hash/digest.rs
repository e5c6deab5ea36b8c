//! The digest implementations the `hash` family times, with the known
//! answers each is checked against before it is timed.
//!
//! Implementation choice per algorithm (the fastest on x86-64 that still
//! runs on aarch64; the comparison is in docs/performance.md):
//! - SHA-1, SHA-256: RustCrypto `sha1`/`sha2`, which detect SHA-NI (x86) and
//!   the ARMv8 SHA extensions at run time and fall back to portable code, so
//!   one binary uses the hash instructions where they exist;
//! - SHA-512: `sysgauge_kernels::sha512` (AVX2/AVX-512VL schedule with
//!   BMI2 rounds on x86-64, chosen at run time; `sha2`'s compression
//!   elsewhere), written because no crate comes near `openssl speed`;
//! - MD5: `sysgauge_kernels::md5`, written for the same reason;
//! - BLAKE2b-512: `blake2b_simd` (AVX2/SSE4.1 dispatch at run time);
//! - BLAKE3: the reference `blake3` crate (SIMD dispatch at run time);
//! - MD4, RIPEMD-160, Whirlpool: RustCrypto `md4`, `ripemd`, `whirlpool`
//!   (portable code; these are rows of the published `openssl speed` tables
//!   that aws-lc does not have, measured so such a table can be matched).

use crate::util::hex;

/// A digest algorithm the hash family measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Md4,
    Md5,
    Sha1,
    Rmd160,
    Sha256,
    Sha512,
    Whirlpool,
    Blake2b512,
    Blake3,
}

impl Algorithm {
    /// In `openssl speed`'s order (md4, md5, sha1, rmd160, sha256, sha512,
    /// whirlpool), then the digests the published tables did not have.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::Md4,
        Algorithm::Md5,
        Algorithm::Sha1,
        Algorithm::Rmd160,
        Algorithm::Sha256,
        Algorithm::Sha512,
        Algorithm::Whirlpool,
        Algorithm::Blake2b512,
        Algorithm::Blake3,
    ];

    /// Benchmark id.
    pub fn id(self) -> &'static str {
        match self {
            Algorithm::Md4 => "hash.md4",
            Algorithm::Md5 => "hash.md5",
            Algorithm::Sha1 => "hash.sha1",
            Algorithm::Rmd160 => "hash.rmd160",
            Algorithm::Sha256 => "hash.sha256",
            Algorithm::Sha512 => "hash.sha512",
            Algorithm::Whirlpool => "hash.whirlpool",
            Algorithm::Blake2b512 => "hash.blake2b-512",
            Algorithm::Blake3 => "hash.blake3",
        }
    }

    /// Display name (as `openssl speed` calls it, where it has it).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Md4 => "md4",
            Algorithm::Md5 => "md5",
            Algorithm::Sha1 => "sha1",
            Algorithm::Rmd160 => "rmd160",
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha512 => "sha512",
            Algorithm::Whirlpool => "whirlpool",
            Algorithm::Blake2b512 => "blake2b512",
            Algorithm::Blake3 => "blake3",
        }
    }

    /// Digest length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            Algorithm::Md4 | Algorithm::Md5 => 16,
            Algorithm::Sha1 | Algorithm::Rmd160 => 20,
            Algorithm::Sha256 | Algorithm::Blake3 => 32,
            Algorithm::Sha512 | Algorithm::Whirlpool | Algorithm::Blake2b512 => 64,
        }
    }

    /// Whether the quick and tiny profiles of `sysgauge run` time it: not
    /// the legacy digests kept for matching old `openssl speed` tables.
    pub fn in_short_run(self) -> bool {
        !matches!(
            self,
            Algorithm::Md4 | Algorithm::Rmd160 | Algorithm::Whirlpool
        )
    }

    /// Which implementation runs on this CPU (for the record's details).
    pub fn implementation(self) -> &'static str {
        match self {
            Algorithm::Md4 => "rustcrypto md4",
            Algorithm::Md5 => "sysgauge md5",
            Algorithm::Sha1 => "rustcrypto sha1",
            Algorithm::Rmd160 => "rustcrypto ripemd",
            Algorithm::Sha256 => "rustcrypto sha2",
            Algorithm::Sha512 => super::sha512::implementation(),
            Algorithm::Whirlpool => "rustcrypto whirlpool",
            Algorithm::Blake2b512 => "blake2b_simd",
            Algorithm::Blake3 => "blake3",
        }
    }

    /// Hash `data` in one call, writing the digest into `out` (which must be
    /// at least `output_len` long). One call per block, like `openssl speed`.
    #[inline]
    pub fn digest_into(self, data: &[u8], out: &mut [u8; 64]) {
        use sha2::Digest;
        match self {
            Algorithm::Md4 => out[..16].copy_from_slice(&md4::Md4::digest(data)),
            Algorithm::Md5 => out[..16].copy_from_slice(&super::md5::md5(data)),
            Algorithm::Sha1 => out[..20].copy_from_slice(&sha1::Sha1::digest(data)),
            Algorithm::Rmd160 => out[..20].copy_from_slice(&ripemd::Ripemd160::digest(data)),
            Algorithm::Sha256 => out[..32].copy_from_slice(&sha2::Sha256::digest(data)),
            Algorithm::Sha512 => out[..64].copy_from_slice(&super::sha512::sha512(data)),
            Algorithm::Whirlpool => out[..64].copy_from_slice(&whirlpool::Whirlpool::digest(data)),
            Algorithm::Blake2b512 => {
                out[..64].copy_from_slice(blake2b_simd::blake2b(data).as_bytes())
            }
            Algorithm::Blake3 => out[..32].copy_from_slice(blake3::hash(data).as_bytes()),
        }
    }

    /// Digest of `data` as lowercase hex.
    pub fn hex_digest(self, data: &[u8]) -> String {
        let mut out = [0u8; 64];
        self.digest_into(data, &mut out);
        hex(&out[..self.output_len()])
    }

    /// Published digests of "" and "abc" (MD4: RFC 1320; RIPEMD-160: the
    /// designers' test vectors; Whirlpool: the NESSIE vectors of version 3,
    /// the one OpenSSL implements).
    fn known_answers(self) -> [(&'static [u8], &'static str); 2] {
        match self {
            Algorithm::Md4 => [
                (b"", "31d6cfe0d16ae931b73c59d7e0c089c0"),
                (b"abc", "a448017aaf21d8525fc10ae87aa6729d"),
            ],
            Algorithm::Rmd160 => [
                (b"", "9c1185a5c5e9fc54612808977ee8f548b2258d31"),
                (b"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
            ],
            Algorithm::Whirlpool => [
                (b"", "19fa61d75522a4669b44e39c1d2e1726c530232130d407f89afee0964997f7a73e83be698b288febcf88e3e03c4f0757ea8964e59b63d93708b138cc42a66eb3"),
                (b"abc", "4e2448a4c6f486bb16b6562c73b4020bf3043e3a731bce721ae1b303d97e6d4c7181eebdb6c57e277d0e34957114cbd6c797fc9d95d8b582d225292076d4eef5"),
            ],
            Algorithm::Md5 => [
                (b"", "d41d8cd98f00b204e9800998ecf8427e"),
                (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            ],
            Algorithm::Sha1 => [
                (b"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
                (b"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            ],
            Algorithm::Sha256 => [
                (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
                (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ],
            Algorithm::Sha512 => [
                (b"", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
                (b"abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
            ],
            Algorithm::Blake2b512 => [
                (b"", "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"),
                (b"abc", "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"),
            ],
            Algorithm::Blake3 => [
                (b"", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
                (b"abc", "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"),
            ],
        }
    }

    /// Check the implementation against its known answers.
    pub fn self_test(self) -> Result<(), String> {
        for (input, expect) in self.known_answers() {
            let got = self.hex_digest(input);
            if got != expect {
                return Err(format!(
                    "{} gave a wrong digest for {:?}: {got} instead of {expect}",
                    self.name(),
                    String::from_utf8_lossy(input)
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_pass_self_test() {
        for a in Algorithm::ALL {
            assert_eq!(a.self_test(), Ok(()), "{}", a.name());
        }
    }

    #[test]
    fn million_a_vectors() {
        // FIPS 180 / RFC 1321 style long-message vectors exercise many blocks.
        let data = vec![b'a'; 1_000_000];
        assert_eq!(
            Algorithm::Sha256.hex_digest(&data),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        assert_eq!(
            Algorithm::Sha1.hex_digest(&data),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
        assert_eq!(
            Algorithm::Sha512.hex_digest(&data),
            "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"
        );
        assert_eq!(
            Algorithm::Md5.hex_digest(&data),
            "7707d6ae4e027c70eea2a935c2296f21"
        );
        assert_eq!(
            Algorithm::Rmd160.hex_digest(&data),
            "52783243c1697bdbe16d37f97f68f08325dc1528"
        );
        // RFC 1320's longest vector: eight repetitions of "1234567890".
        assert_eq!(
            Algorithm::Md4.hex_digest("1234567890".repeat(8).as_bytes()),
            "e33b4ddc9c38f2199c3e7b164fcc0536"
        );
        assert_eq!(
            Algorithm::Whirlpool.hex_digest(&data),
            "0c99005beb57eff50a7cf005560ddf5d29057fd86b20bfd62deca0f1ccea4af51fc15490eddc47af32bb2b66c34ff9ad8c6008ad677f77126953b226e4ed8b01"
        );
    }

    #[test]
    fn ids_and_lengths() {
        for a in Algorithm::ALL {
            assert!(a.id().starts_with("hash."));
            assert_eq!(a.hex_digest(b"x").len(), a.output_len() * 2);
        }
    }
}
