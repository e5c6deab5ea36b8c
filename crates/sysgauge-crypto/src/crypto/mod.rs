//! The `crypto` family: an `openssl speed`-style table from sysgauge's own
//! kernels and aws-lc (and, for the old tables' rows aws-lc lacks,
//! RustCrypto's crates). Symmetric ciphers, AEADs, GHASH and the MACs
//! (HMAC-SHA256, HMAC-MD5) in MB/s at the block sizes `openssl speed` uses;
//! RSA, DSA, ECDSA and Ed25519 signatures and verifications per second
//! (ECDSA P-192 verifications only if RustCrypto's `p192` is forced); ECDH
//! and X25519 operations per second. On one thread or on several (one independent instance per
//! thread, aggregate rate).
//!
//! Two shapes, chosen by `CryptoOptions::full_table`:
//! - inside `sysgauge run`, a short slice: AES-128-GCM and ChaCha20-Poly1305
//!   at 8 KiB, RSA-2048 and Ed25519 signing, and Blowfish-CBC at 8 KiB (the
//!   classic rough CPU metric); longer profiles add the other algorithms;
//! - `sysgauge crypto`, the whole table (every algorithm at every size).
//!
//! Every algorithm is checked against a known answer (and ciphers for
//! decrypt(encrypt(x)) = x) before it is timed, in every case, so a wrong
//! implementation can never produce a number. Where a symmetric algorithm
//! has several implementations, the fastest verified one on this CPU runs
//! (`crate::implementation`; the choice is in the result's details, and
//! `CryptoOptions::implementation` can force one).

// The kernels' unsafe (intrinsics) lives in sysgauge-kernels; the family
// logic needs none.
#![forbid(unsafe_code)]

pub mod alongside;
pub mod dsa_verify;
pub mod pubkey;
pub mod reference;
pub mod report;
pub mod rsa1024;
pub mod symmetric;
// The hand-written kernels live in sysgauge-kernels; the family times them.
pub use sysgauge_kernels::{aes, blowfish, camellia, cast5, chacha_poly, ghash, rc4};

use crate::implementation::{choose_for_case, Candidates, Forced};
use pubkey::{KexAlg, PubkeyError, SignAlg};
use std::sync::{Arc, Mutex};
use symmetric::{Cipher, CipherCandidates};
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Metric, Params, Plan, Profile, RunCtx, Unit,
};
use sysgauge_family::util::{
    block_size_param, fill_pattern, lock_lane, mb_per_s, measure_rate_on_threads, metric,
    threads_param, Count,
};

/// The block sizes of `openssl speed` (16 B … 16 KiB).
pub const BLOCK_SIZES: [u64; 6] = [16, 64, 256, 1024, 8192, 16384];

/// The block size of the headline numbers and of the `run` slice.
pub const HEADLINE_BLOCK: u64 = 8192;

/// Command-line choices for the crypto family; `None` follows the profile.
#[derive(Debug, Clone, Default)]
pub struct CryptoOptions {
    /// The whole `openssl speed` table (`sysgauge crypto`) instead of the
    /// short slice `sysgauge run` measures.
    pub full_table: bool,
    pub block_sizes: Option<Vec<u64>>,
    /// Thread counts (1 = single thread).
    pub threads: Option<Vec<Count>>,
    /// `--implementation`: candidates forced instead of the trial's choice.
    pub implementation: Forced,
}

/// Algorithms in the `run` slice at the quick and tiny profiles.
fn in_quick_slice(id: &str) -> bool {
    matches!(
        id,
        "crypto.aes-128-gcm" | "crypto.chacha20-poly1305" | "crypto.bf-cbc"
    ) || matches!(id, "crypto.rsa-2048" | "crypto.ed25519")
}

/// Threads and (for symmetric cases) block sizes of a benchmark's cases.
fn plan_cases(id: &str, options: &CryptoOptions, plan: &Plan, symmetric: bool) -> Vec<Params> {
    let threads = options.threads.clone().unwrap_or_else(|| vec![Count::N(1)]);
    let sizes: Vec<u64> = if options.full_table {
        options
            .block_sizes
            .clone()
            .unwrap_or_else(|| BLOCK_SIZES.to_vec())
    } else {
        let slice = match plan.profile {
            Profile::Tiny | Profile::Quick => in_quick_slice(id),
            Profile::Standard | Profile::Full => true,
        };
        if !slice {
            return Vec::new();
        }
        match (&options.block_sizes, plan.profile) {
            (Some(s), _) => s.clone(),
            (None, Profile::Full) => BLOCK_SIZES.to_vec(),
            (None, _) => vec![HEADLINE_BLOCK],
        }
    };
    let mut v = Vec::new();
    for &t in &threads {
        if symmetric {
            for &b in &sizes {
                v.push(Params::new().with("block_size", b).with("threads", t));
            }
        } else {
            v.push(Params::new().with("threads", t));
        }
    }
    // Longer profiles inside `run` also show the multi-threaded rate.
    if !options.full_table && options.threads.is_none() && plan.profile == Profile::Full {
        let extra = if symmetric {
            Params::new()
                .with("block_size", HEADLINE_BLOCK)
                .with("threads", Count::AllCpus)
        } else {
            Params::new().with("threads", Count::AllCpus)
        };
        v.push(extra);
    }
    v
}

/// What the crypto family times: a symmetric algorithm (cipher, AEAD or
/// HMAC) at one block size, a signature algorithm or a key agreement. One
/// benchmark type, `AlgorithmBenchmark`, serves the three.
pub trait CryptoAlgorithm: Copy + Send + Sync + 'static {
    /// Whether the cases also run over block sizes.
    const BLOCKS: bool;
    /// The unit of the headline (higher is better for every one).
    const UNIT: Unit;
    fn bench_id(self) -> &'static str;
    /// What is timed, for the benchmark's description.
    fn summary(self) -> String;
    /// One case on `threads` threads, each with its own instance.
    fn measure(
        self,
        ctx: &mut RunCtx,
        params: &Params,
        threads: usize,
        options: &CryptoOptions,
    ) -> Result<Vec<Metric>, BenchError>;
}

/// One instance of the work per thread, each behind its own lock, made
/// (and touched) before anything is timed.
fn per_thread<T>(
    threads: usize,
    mut make: impl FnMut(usize) -> Result<T, BenchError>,
) -> Result<Vec<Mutex<T>>, BenchError> {
    (0..threads).map(|t| make(t).map(Mutex::new)).collect()
}

/// One crypto algorithm as a benchmark.
pub struct AlgorithmBenchmark<A> {
    alg: A,
    options: Arc<CryptoOptions>,
}

/// A symmetric algorithm (cipher, AEAD or HMAC): MB/s per block size.
pub type SymmetricBenchmark = AlgorithmBenchmark<Cipher>;
/// A signature algorithm: signatures and verifications per second.
pub type SignBenchmark = AlgorithmBenchmark<SignAlg>;
/// A key agreement: shared secrets derived per second.
pub type KexBenchmark = AlgorithmBenchmark<KexAlg>;

impl<A: CryptoAlgorithm> AlgorithmBenchmark<A> {
    pub fn new(alg: A, options: Arc<CryptoOptions>) -> Self {
        AlgorithmBenchmark { alg, options }
    }
}

impl<A: CryptoAlgorithm> Benchmark for AlgorithmBenchmark<A> {
    fn id(&self) -> &str {
        self.alg.bench_id()
    }

    fn describe(&self) -> Description {
        Description::new(self.alg.summary(), A::UNIT, Better::Higher)
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        plan_cases(self.alg.bench_id(), &self.options, plan, A::BLOCKS)
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        self.alg.measure(
            ctx,
            params,
            threads_param(params, ctx.threads()),
            &self.options,
        )
    }
}

impl CryptoAlgorithm for Cipher {
    const BLOCKS: bool = true;
    const UNIT: Unit = Unit::MBps;

    fn bench_id(self) -> &'static str {
        self.id()
    }

    fn summary(self) -> String {
        let what = match self {
            c if c.is_mac() => "authentication",
            Cipher::Aes128Gcm | Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305 => {
                "sealing (a fresh nonce and tag per block)"
            }
            _ => "encryption",
        };
        format!(
            "{} {what} throughput per block size (openssl speed -evp style)",
            self.name()
        )
    }

    fn measure(
        self,
        ctx: &mut RunCtx,
        params: &Params,
        threads: usize,
        options: &CryptoOptions,
    ) -> Result<Vec<Metric>, BenchError> {
        let cipher = self;
        let block = block_size_param(params)?;
        if block % cipher.granule() != 0 {
            return Err(BenchError::skip(
                format!(
                    "{} needs block sizes that are a multiple of {} bytes",
                    cipher.name(),
                    cipher.granule()
                ),
                "use the openssl block sizes (16, 64, 256, 1024, 8192, 16384)",
            ));
        }
        // The fastest implementation on this CPU that passes its known
        // answer and round trip (the trial is cached per process), checked
        // again at this case's block size before it is timed.
        let choice = choose_for_case(&CipherCandidates(cipher), block, &options.implementation)?;
        cipher
            .self_test_of(choice.name, block)
            .map_err(|e| BenchError::failed(e.to_string()))?;
        choice.note(ctx, cipher.id(), Some(block as u64));
        let (key, iv) = symmetric::bench_key_iv(cipher);
        // One keyed stream and one buffer per thread, set up and touched
        // before timing.
        let lanes = per_thread(threads, |t| {
            let stream = cipher
                .start_with(choice.name, &key, &iv, block)
                .map_err(|e| BenchError::failed(e.to_string()))?;
            let mut buf = vec![0u8; block];
            fill_pattern(&mut buf, 0x5eed + t as u64);
            Ok((stream, buf))
        })?;
        let run_blocks = |t: usize, n: u64| -> Result<f64, BenchError> {
            let mut lane = lock_lane(&lanes[t])?;
            let (stream, buf) = &mut *lane;
            for _ in 0..n {
                stream
                    .process(std::hint::black_box(buf.as_mut_slice()))
                    .map_err(|e| BenchError::failed(e.to_string()))?;
                std::hint::black_box(stream.tag());
            }
            Ok(n as f64 * block as f64)
        };
        let samples = measure_rate_on_threads(ctx, threads, run_blocks)?;
        Ok(vec![metric(
            "throughput",
            Unit::MBps,
            Better::Higher,
            samples.into_iter().map(mb_per_s).collect(),
        )?])
    }
}

/// A public-key case's lanes: the implementation chosen for `alg` (the
/// fastest that passes its known answers, the trial cached per process, or
/// the forced one), one instance per thread made by `make` with its name,
/// and the choice noted in the case's details.
fn chosen_lanes<T>(
    ctx: &mut RunCtx,
    alg: &dyn Candidates,
    options: &CryptoOptions,
    threads: usize,
    mut make: impl FnMut(&'static str) -> Result<T, BenchError>,
) -> Result<Vec<Mutex<T>>, BenchError> {
    let choice = choose_for_case(alg, 0, &options.implementation)?;
    let lanes = per_thread(threads, |_| make(choice.name))?;
    choice.note(ctx, alg.algorithm_id(), None);
    Ok(lanes)
}

/// A public-key metric: operations per second, higher is better.
fn ops_metric(name: &str, samples: Vec<f64>) -> Result<Metric, BenchError> {
    metric(name, Unit::OpsPerSec, Better::Higher, samples)
}

fn pk_error(e: PubkeyError) -> BenchError {
    match e {
        PubkeyError::Unsupported { alg, reason } => BenchError::skip(
            format!("{alg}: {reason}"),
            "compare the other key sizes; `openssl speed` still shows it",
        ),
        e => BenchError::failed(e.to_string()),
    }
}

impl CryptoAlgorithm for SignAlg {
    const BLOCKS: bool = false;
    const UNIT: Unit = Unit::OpsPerSec;

    fn bench_id(self) -> &'static str {
        self.id()
    }

    fn summary(self) -> String {
        format!("{} signatures and verifications per second", self.name())
    }

    fn measure(
        self,
        ctx: &mut RunCtx,
        _params: &Params,
        threads: usize,
        options: &CryptoOptions,
    ) -> Result<Vec<Metric>, BenchError> {
        // The fastest implementation on this CPU that passes the known
        // answers (the trial is cached per process); each thread's signer
        // passes them again before it is timed.
        let signers = chosen_lanes(
            ctx,
            &pubkey::SignCandidates(self),
            options,
            threads,
            |name| {
                let mut s = self.signer_with(name).map_err(pk_error)?;
                s.self_test().map_err(pk_error)?;
                Ok(s)
            },
        )?;
        let mut can_sign = true;
        if let Some(first) = signers.first() {
            can_sign = lock_lane(first)?.can_sign();
        }
        let sign = |t: usize, n: u64| -> Result<f64, BenchError> {
            let mut s = lock_lane(&signers[t])?;
            for _ in 0..n {
                s.sign(std::hint::black_box(pubkey::MESSAGE))
                    .map_err(|e| BenchError::failed(e.to_string()))?;
                std::hint::black_box(s.signature());
            }
            Ok(n as f64)
        };
        let verify = |t: usize, n: u64| -> Result<f64, BenchError> {
            let s = lock_lane(&signers[t])?;
            let sig = s.signature().to_vec();
            for _ in 0..n {
                s.verify(std::hint::black_box(pubkey::MESSAGE), &sig)
                    .map_err(|e| BenchError::failed(e.to_string()))?;
            }
            Ok(n as f64)
        };
        // Inside `run` only signing is timed (its slice is short); the full
        // table times both, each in half of the case's time. A library
        // that only verifies (p192, when forced) has verification timed
        // alone.
        let both = options.full_table || matches!(ctx.profile(), Profile::Standard | Profile::Full);
        let share = if both && can_sign { 0.5 } else { 1.0 };
        let mut metrics = Vec::new();
        if can_sign {
            let sign_samples =
                ctx.with_budget_share(share, |ctx| measure_rate_on_threads(ctx, threads, sign))?;
            metrics.push(ops_metric("sign", sign_samples)?);
        }
        if both || !can_sign {
            let verify_samples =
                ctx.with_budget_share(share, |ctx| measure_rate_on_threads(ctx, threads, verify))?;
            metrics.push(ops_metric("verify", verify_samples)?);
        }
        Ok(metrics)
    }
}

impl CryptoAlgorithm for KexAlg {
    const BLOCKS: bool = false;
    const UNIT: Unit = Unit::OpsPerSec;

    fn bench_id(self) -> &'static str {
        self.id()
    }

    fn summary(self) -> String {
        format!("{} key agreements per second", self.name())
    }

    fn measure(
        self,
        ctx: &mut RunCtx,
        _params: &Params,
        threads: usize,
        options: &CryptoOptions,
    ) -> Result<Vec<Metric>, BenchError> {
        let lanes = chosen_lanes(
            ctx,
            &pubkey::KexCandidates(self),
            options,
            threads,
            |name| self.exchange_with(name).map_err(pk_error),
        )?;
        let op = |t: usize, n: u64| -> Result<f64, BenchError> {
            let mut x = lock_lane(&lanes[t])?;
            for _ in 0..n {
                x.agree().map_err(|e| BenchError::failed(e.to_string()))?;
                std::hint::black_box(x.secret());
            }
            Ok(n as f64)
        };
        let samples = measure_rate_on_threads(ctx, threads, op)?;
        Ok(vec![ops_metric("ops", samples)?])
    }
}

sysgauge_family::register_family! {
    name: "crypto", options: CryptoOptions, in_default_run: true,
    cpu_bound: true, summary_first: false,
    budget_seconds: [0.4, 3.5, 40.0, 160.0], report: Some(|run, format| report::speed_table(&run.results, format)),
    summary: "openssl-speed-style ciphers, AEADs, HMAC, signatures and key agreement",
}

/// Every crypto benchmark, in table order: ciphers, HMAC, signatures,
/// key agreements.
pub fn benchmarks(options: &Arc<CryptoOptions>) -> Vec<Box<dyn Benchmark>> {
    let mut v: Vec<Box<dyn Benchmark>> = Vec::new();
    for c in Cipher::ALL {
        v.push(Box::new(SymmetricBenchmark::new(c, options.clone())));
    }
    for a in SignAlg::ALL {
        v.push(Box::new(SignBenchmark::new(a, options.clone())));
    }
    for k in KexAlg::ALL {
        v.push(Box::new(KexBenchmark::new(k, options.clone())));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::{ctx, run_1k_case};

    fn plan(profile: Profile) -> Plan {
        Plan {
            profile,
            threads: 4,
        }
    }

    #[test]
    fn run_slice_and_full_table() {
        let slice = benchmarks(&Arc::new(CryptoOptions::default()));
        let quick: Vec<(String, usize)> = slice
            .iter()
            .map(|b| (b.id().to_string(), b.cases(&plan(Profile::Quick)).len()))
            .filter(|(_, n)| *n > 0)
            .collect();
        let ids: Vec<&str> = quick.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "crypto.aes-128-gcm",
                "crypto.chacha20-poly1305",
                "crypto.bf-cbc",
                "crypto.rsa-2048",
                "crypto.ed25519"
            ]
        );
        assert!(quick.iter().all(|(_, n)| *n == 1));
        let standard: usize = slice
            .iter()
            .map(|b| b.cases(&plan(Profile::Standard)).len())
            .sum();
        assert_eq!(standard, 23 + 12 + 6);

        let table = benchmarks(&Arc::new(CryptoOptions {
            full_table: true,
            block_sizes: None,
            threads: Some(vec![Count::N(1), Count::N(2)]),
            ..Default::default()
        }));
        let gcm = table[4].cases(&plan(Profile::Quick));
        assert_eq!(gcm.len(), 12);
        assert_eq!(gcm[11].get_u64("block_size"), Some(16384));
        assert_eq!(gcm[11].get_u64("threads"), Some(2));
        assert_eq!(table[24].id(), "crypto.rsa-2048");
        let rsa = table[24].cases(&plan(Profile::Quick));
        assert_eq!(
            rsa,
            vec![
                Params::new().with("threads", 1u64),
                Params::new().with("threads", 2u64)
            ]
        );
    }

    #[test]
    fn symmetric_cases_run() {
        let opts = Arc::new(CryptoOptions::default());
        for c in [
            Cipher::Aes128Cbc,
            Cipher::Aes128Ctr,
            Cipher::ChaCha20Poly1305,
            Cipher::BfCbc,
        ] {
            let b = SymmetricBenchmark::new(c, opts.clone());
            for threads in [1u64, 2] {
                let (_, mut cx) = run_1k_case(&b, threads);
                let out = cx.take_case_output();
                assert!(out.details.get_str("implementation").is_some());
            }
        }
        let b = SymmetricBenchmark::new(Cipher::BfCbc, opts);
        let mut cx = ctx();
        cx.begin_case(std::time::Duration::from_millis(5));
        let r = b.run(&mut cx, &Params::new().with("block_size", 12u64));
        assert!(matches!(r, Err(BenchError::Skip { .. })), "{r:?}");
    }

    #[test]
    fn pubkey_cases_run() {
        let full = Arc::new(CryptoOptions {
            full_table: true,
            ..Default::default()
        });
        // One 20 ms case on `threads` threads; the context keeps the details.
        let run = |b: &dyn Benchmark, threads: u64| {
            let mut cx = ctx();
            cx.begin_case(std::time::Duration::from_millis(20));
            let m = b
                .run(&mut cx, &Params::new().with("threads", threads))
                .unwrap();
            (m, cx)
        };
        let (m, _) = run(&SignBenchmark::new(SignAlg::Ed25519, full.clone()), 1);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, vec!["sign", "verify"]);
        let slice = SignBenchmark::new(SignAlg::Rsa2048, Arc::new(CryptoOptions::default()));
        let (m, _) = run(&slice, 2);
        assert_eq!(m.len(), 1);
        assert!(m[0].value() > 0.0);
        let (m, mut cx) = run(&SignBenchmark::new(SignAlg::Rsa1024, full.clone()), 1);
        assert_eq!(m.len(), 2);
        assert!(m.iter().all(|m| m.value() > 0.0));
        let out = cx.take_case_output();
        // Several candidates: the trial chose one and says so, in op/s
        // (which wins depends on the CPU, and a trial under load is no test).
        use crate::implementation::Candidates as _;
        let candidates = pubkey::SignCandidates(SignAlg::Rsa1024).names();
        let chosen = out.details.get_str("implementation").unwrap_or("");
        assert!(candidates.contains(&chosen), "{chosen:?}");
        let trial = out.details.get_str("implementation_trial").unwrap_or("");
        assert!(
            candidates.iter().all(|c| trial.contains(c)) && trial.ends_with("op/s"),
            "{trial}"
        );
        assert!(out.params.get_str("implementation").is_none());
        // Forced: the named candidate runs.
        let forced = Arc::new(CryptoOptions {
            full_table: true,
            implementation: Forced::parse(&["rsa-1024=rustcrypto rsa".to_string()])
                .map_err(|e| e.to_string())
                .unwrap(),
            ..Default::default()
        });
        let (_, mut cx) = run(&SignBenchmark::new(SignAlg::Rsa1024, forced), 1);
        let out = cx.take_case_output();
        assert_eq!(
            out.details.get_str("implementation"),
            Some("rustcrypto rsa")
        );
        // P-192: aws-lc signs; `p192`, which only verifies, is left out
        // of the trial while aws-lc passes its known answers.
        let (m, mut cx) = run(&SignBenchmark::new(SignAlg::EcdsaP192, full.clone()), 1);
        let out = cx.take_case_output();
        assert_eq!(out.details.get_str("implementation"), Some("aws-lc"));
        assert!(out
            .details
            .get_str("implementation_excluded")
            .is_some_and(|e| e.starts_with("rustcrypto p192: verifies only")));
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["sign", "verify"]);
        let k = KexBenchmark::new(KexAlg::X25519, full);
        let mut cx = ctx();
        cx.begin_case(std::time::Duration::from_millis(10));
        let m = k
            .run(&mut cx, &Params::new().with("threads", 1u64))
            .unwrap();
        assert_eq!(m[0].name, "ops");
    }
}
