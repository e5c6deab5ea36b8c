//! What the hash and crypto families' tests share: a run context at the
//! tiny profile and a short case of a block-size benchmark, so both
//! families' cases are run the same way.

use sysgauge_core::{Benchmark, CtxSettings, Metric, Params, Profile, RunCtx};

/// A run context for tests: the tiny profile, scratch files in the temp dir.
pub(crate) fn ctx() -> RunCtx {
    RunCtx::for_tests(CtxSettings::for_tests(Profile::Tiny, std::env::temp_dir()))
}

/// One 20 ms case of `b` at 1 KiB blocks on `threads` threads, which must
/// succeed with three positive samples; its metrics and the context (which
/// holds the case's details).
pub(crate) fn run_1k_case(b: &dyn Benchmark, threads: u64) -> (Vec<Metric>, RunCtx) {
    let mut cx = ctx();
    cx.begin_case(std::time::Duration::from_millis(20));
    let p = Params::new()
        .with("block_size", 1024u64)
        .with("threads", threads);
    let m = b
        .run(&mut cx, &p)
        .unwrap_or_else(|e| panic!("{} on {threads} threads: {e}", b.id()));
    assert_eq!(m[0].samples.len(), 3, "{}", b.id());
    assert!(m[0].value() > 0.0, "{}", b.id());
    (m, cx)
}

/// Every candidate of `alg` this CPU runs passes its check at each of
/// `blocks` bytes, and there is at least one; their names.
pub(crate) fn assert_candidates_pass(
    alg: &dyn crate::implementation::Candidates,
    blocks: &[usize],
) -> Vec<&'static str> {
    let names = alg.names();
    assert!(!names.is_empty(), "{}", alg.algorithm_id());
    for &name in &names {
        for &block in blocks {
            alg.check(name, block)
                .unwrap_or_else(|e| panic!("{} {name} at {block}: {e}", alg.algorithm_id()));
        }
    }
    names
}
