//! What `sysgauge crypto` runs and chooses among, as `openssl speed` does:
//! the hash family and the crypto family together. Assembled here, above
//! both families, so neither imports the other.

use crate::crypto::pubkey::{KexAlg, KexCandidates, SignAlg, SignCandidates};
use crate::crypto::symmetric::{Cipher, CipherCandidates};
use crate::crypto::{benchmarks, CryptoOptions, BLOCK_SIZES};
use crate::hash;
use crate::implementation::{Candidates, Forced};
use std::sync::Arc;
use sysgauge_core::Benchmark;
use sysgauge_family::util::Count;

/// What `sysgauge crypto` runs: the hash family then the crypto family's
/// whole table, at the given block sizes (default: openssl's) and thread
/// count, so its table reads like `openssl speed`.
pub fn speed_benchmarks(
    sizes: Option<Vec<u64>>,
    threads: Count,
    implementation: Forced,
) -> Vec<Box<dyn Benchmark>> {
    let hash_opts = Arc::new(hash::HashOptions {
        block_sizes: Some(sizes.clone().unwrap_or_else(|| BLOCK_SIZES.to_vec())),
        threads: Some(vec![threads]),
        implementation: implementation.clone(),
    });
    let crypto_opts = Arc::new(CryptoOptions {
        full_table: true,
        block_sizes: sizes,
        threads: Some(vec![threads]),
        implementation,
    });
    let mut v = hash::benchmarks(&hash_opts);
    v.extend(benchmarks(&crypto_opts));
    v
}

/// Every digest, symmetric and public-key algorithm with the
/// implementations it can choose from (for `--implementation` checks and
/// `list --implementations`).
pub fn implementation_catalog() -> Vec<Box<dyn Candidates>> {
    let mut v: Vec<Box<dyn Candidates>> = Vec::new();
    for a in hash::Algorithm::ALL {
        v.push(Box::new(hash::DigestCandidates(a)));
    }
    for c in Cipher::ALL {
        v.push(Box::new(CipherCandidates(c)));
    }
    for a in SignAlg::ALL {
        v.push(Box::new(SignCandidates(a)));
    }
    for k in KexAlg::ALL {
        v.push(Box::new(KexCandidates(k)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_hash_and_crypto_with_unique_ids() {
        let b = speed_benchmarks(None, Count::N(1), Forced::default());
        let ids: Vec<&str> = b.iter().map(|b| b.id()).collect();
        assert!(ids.contains(&"hash.sha256") && ids.contains(&"crypto.x25519"));
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
    }
}
