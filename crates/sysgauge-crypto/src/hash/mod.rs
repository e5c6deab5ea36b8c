//! The `hash` family: in-process digest throughput at the block sizes
//! `openssl speed` uses (16 B … 16 KiB) and 1 MiB, on one thread and on all
//! CPUs, in decimal MB/s.
//!
//! Like `openssl speed`, each block is hashed with one complete digest call,
//! so small blocks show the per-call and finalisation cost and large blocks
//! the compression function's speed. Where sysgauge carries several
//! implementations of a digest, the fastest on this CPU that passes its
//! known answers is timed (`crate::implementation`; the choice goes into
//! the result's details); each is checked against known answers before it
//! is timed. Multi-threaded cases run one
//! independent instance per thread and report the aggregate rate.

// The kernels' unsafe (intrinsics) lives in sysgauge-kernels; the family
// logic needs none.
#![forbid(unsafe_code)]

pub mod digest;
// The hand-written kernels live in sysgauge-kernels; the family times them.
pub use sysgauge_kernels::{md5, sha512};

use crate::implementation::Candidates as _;
use crate::implementation::{choose_for_case, Forced};
pub use digest::{Algorithm, DigestCandidates};
use std::sync::Arc;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Metric, Params, Plan, Profile, RunCtx, Unit,
};
use sysgauge_family::util::{
    block_size_param, fill_pattern, mb_per_s, measure_rate_on_threads, threads_param,
    throughput_mbps, Count,
};

/// Block sizes of `openssl speed` (with 16 KiB) plus 1 MiB.
pub const BLOCK_SIZES: [u64; 7] = [16, 64, 256, 1024, 8192, 16384, 1 << 20];

/// Command-line overrides for the hash family; `None` follows the profile.
#[derive(Debug, Clone, Default)]
pub struct HashOptions {
    pub block_sizes: Option<Vec<u64>>,
    /// Thread counts to run (1 = single thread); `None` follows the profile.
    pub threads: Option<Vec<Count>>,
    /// `--implementation`: candidates forced instead of the trial's choice.
    pub implementation: Forced,
}

pub struct HashBenchmark {
    algorithm: Algorithm,
    options: Arc<HashOptions>,
}

impl HashBenchmark {
    pub fn new(algorithm: Algorithm, options: Arc<HashOptions>) -> Self {
        HashBenchmark { algorithm, options }
    }
}

/// Cases for a profile: block sizes × thread counts.
fn default_cases(profile: Profile) -> Vec<(u64, Count)> {
    let one = Count::N(1);
    let all = Count::AllCpus;
    let mut v = Vec::new();
    match profile {
        Profile::Tiny => v.push((8192, one)),
        Profile::Quick => {
            v.push((8192, one));
            v.push((1 << 20, one));
            v.push((8192, all));
        }
        Profile::Standard => {
            v.extend(BLOCK_SIZES.iter().map(|&b| (b, one)));
            v.push((8192, all));
            v.push((1 << 20, all));
        }
        Profile::Full => {
            v.extend(BLOCK_SIZES.iter().map(|&b| (b, one)));
            v.extend(BLOCK_SIZES.iter().map(|&b| (b, all)));
        }
    }
    v
}

impl Benchmark for HashBenchmark {
    fn id(&self) -> &str {
        self.algorithm.id()
    }

    fn describe(&self) -> Description {
        Description::new(
            format!(
                "{} digest throughput, one digest call per block (openssl speed style)",
                self.algorithm.name()
            ),
            Unit::MBps,
            Better::Higher,
        )
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        // The digests only the old `openssl speed` tables had stay out of
        // the short profiles of `run` (they are not in the index's reference).
        let short = matches!(plan.profile, Profile::Tiny | Profile::Quick);
        let options_given = self.options.block_sizes.is_some() || self.options.threads.is_some();
        if short && !options_given && !self.algorithm.in_short_run() {
            return Vec::new();
        }
        let defaults = default_cases(plan.profile);
        let cases: Vec<(u64, Count)> = match (&self.options.block_sizes, &self.options.threads) {
            (None, None) => defaults,
            (sizes, threads) => {
                let sizes = sizes.clone().unwrap_or_else(|| {
                    let mut s: Vec<u64> = defaults.iter().map(|c| c.0).collect();
                    s.dedup();
                    s
                });
                let threads = threads.clone().unwrap_or_else(|| vec![Count::N(1)]);
                threads
                    .iter()
                    .flat_map(|&t| sizes.iter().map(move |&s| (s, t)))
                    .collect()
            }
        };
        cases
            .into_iter()
            .map(|(b, t)| Params::new().with("block_size", b).with("threads", t))
            .collect()
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let algorithm = self.algorithm;
        let block = block_size_param(params)?;
        // The fastest implementation that passes its known answers here
        // (the trial is cached per process), checked again for this case.
        let candidates = DigestCandidates(algorithm);
        let choice = choose_for_case(&candidates, block, &self.options.implementation)?;
        candidates
            .check(choice.name, block)
            .map_err(BenchError::failed)?;
        choice.note(ctx, algorithm.id(), Some(block as u64));
        let digest = algorithm
            .implementation_named(choice.name)
            .ok_or_else(|| BenchError::failed(format!("{} vanished", choice.name)))?
            .digest;
        let threads = threads_param(params, ctx.threads());
        // Buffers are allocated and touched before timing; each thread has
        // its own so no cache line is shared.
        let buffers: Vec<Vec<u8>> = (0..threads)
            .map(|t| {
                let mut b = vec![0u8; block];
                fill_pattern(&mut b, 0x5eed + t as u64);
                b
            })
            .collect();
        let run_blocks = |t: usize, n: u64| -> Result<f64, BenchError> {
            let buf = &buffers[t];
            let mut out = [0u8; 64];
            for _ in 0..n {
                digest(std::hint::black_box(buf), &mut out);
                std::hint::black_box(&out);
            }
            Ok((n as f64) * block as f64)
        };
        let samples = measure_rate_on_threads(ctx, threads, run_blocks)?;
        let mbps: Vec<f64> = samples.into_iter().map(mb_per_s).collect();
        throughput_mbps(mbps)
    }
}

sysgauge_family::register_family! {
    name: "hash", options: HashOptions, in_default_run: true,
    cpu_bound: true, summary_first: true,
    budget_seconds: [0.3, 3.5, 40.0, 120.0], report: None,
    summary: "in-process digest throughput (md4, md5, sha1, rmd160, sha256, sha512, whirlpool, blake2b-512, blake3)",
}

/// Every hash benchmark, in display order.
pub fn benchmarks(options: &Arc<HashOptions>) -> Vec<Box<dyn Benchmark>> {
    Algorithm::ALL
        .iter()
        .map(|&a| Box::new(HashBenchmark::new(a, options.clone())) as Box<dyn Benchmark>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{ctx, run_1k_case};

    #[test]
    fn cases_follow_profile_and_options() {
        let b = HashBenchmark::new(Algorithm::Sha256, Arc::new(HashOptions::default()));
        let quick = b.cases(&Plan {
            profile: Profile::Quick,
            threads: 4,
        });
        assert_eq!(quick.len(), 3);
        assert_eq!(quick[2].get_str("threads"), Some(sysgauge_core::ALL_CPUS));
        let single = b.cases(&Plan {
            profile: Profile::Full,
            threads: 1,
        });
        assert_eq!(
            single,
            b.cases(&Plan {
                profile: Profile::Full,
                threads: 64,
            }),
            "the planned cases do not depend on the CPU count"
        );
        let custom = HashBenchmark::new(
            Algorithm::Md5,
            Arc::new(HashOptions {
                block_sizes: Some(vec![16, 64]),
                threads: Some(vec![Count::N(1), Count::N(2)]),
                ..Default::default()
            }),
        );
        let c = custom.cases(&Plan {
            profile: Profile::Quick,
            threads: 8,
        });
        assert_eq!(c.len(), 4);
        assert_eq!(
            c[3],
            Params::new()
                .with("block_size", 64u64)
                .with("threads", 2u64)
        );
    }

    #[test]
    fn legacy_digests_stay_out_of_the_short_profiles() {
        let plan = |profile| Plan {
            profile,
            threads: 4,
        };
        for a in [Algorithm::Md4, Algorithm::Rmd160, Algorithm::Whirlpool] {
            let b = HashBenchmark::new(a, Arc::new(HashOptions::default()));
            assert!(b.cases(&plan(Profile::Tiny)).is_empty(), "{}", a.name());
            assert!(b.cases(&plan(Profile::Quick)).is_empty(), "{}", a.name());
            assert!(!b.cases(&plan(Profile::Standard)).is_empty());
            // `sysgauge crypto` (explicit sizes and threads) runs them.
            let table = HashBenchmark::new(
                a,
                Arc::new(HashOptions {
                    block_sizes: Some(vec![16, 8192]),
                    threads: Some(vec![Count::N(1)]),
                    ..Default::default()
                }),
            );
            assert_eq!(table.cases(&plan(Profile::Quick)).len(), 2);
        }
        let short: Vec<&str> = Algorithm::ALL
            .iter()
            .filter(|a| a.in_short_run())
            .map(|a| a.id())
            .collect();
        assert_eq!(
            short,
            [
                "hash.md5",
                "hash.sha1",
                "hash.sha256",
                "hash.sha512",
                "hash.blake2b-512",
                "hash.blake3"
            ]
        );
    }

    #[test]
    fn runs_single_and_parallel() {
        for a in [Algorithm::Sha256, Algorithm::Blake3, Algorithm::Whirlpool] {
            let b = HashBenchmark::new(a, Arc::new(HashOptions::default()));
            for threads in [1u64, 2] {
                let (m, _) = run_1k_case(&b, threads);
                assert_eq!(m.len(), 1);
                assert_eq!(m[0].unit, Unit::MBps);
            }
        }
    }

    #[test]
    fn rejects_bad_params() {
        let b = HashBenchmark::new(Algorithm::Md5, Arc::new(HashOptions::default()));
        let mut c = ctx();
        assert!(b
            .run(&mut c, &Params::new().with("block_size", 0u64))
            .is_err());
        assert!(b.run(&mut c, &Params::new()).is_err());
    }
}
