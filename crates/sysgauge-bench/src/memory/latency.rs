//! Memory latency by working-set size: a dependent pointer chase.
//!
//! The working set is cut into 64-byte elements (one cache line each).
//! Sattolo's algorithm shuffles the element indices into one random cycle
//! that visits every element exactly once, and each element stores the
//! address of the next. Following the chain is a sequence of loads each of
//! which needs the previous one's result, so nothing overlaps: the time
//! per step is the latency of wherever the working set lives (L1, L2, the
//! last-level cache, memory). The random order defeats the hardware
//! prefetchers, which would hide latency for a sequential or strided walk.
//!
//! Result: nanoseconds per access (lower is better). Each case notes the
//! cache level its working set fits in according to the host facts, so
//! the steps of the curve can be compared with the cache sizes.
//!
//! Huge pages matter most here: with 4 KiB pages a random walk over a large
//! set misses the TLB on almost every step and adds a page-table walk to
//! the latency (see `buffer`). The permutation uses a fixed seed per size,
//! so every run and every machine walks the same order.

use super::buffer::MappedBuf;
use super::LATENCY;
use super::{
    cache_level_for, ensure_memory, host, huge_page_findings, huge_param, latency_working_sets,
    live_llc, slice_working_set, validate_working_set, with_pool, MemOptions, Scope, FITS_IN_CACHE,
    LINE,
};
use std::hint::black_box;
use std::sync::Arc;
use sysgauge_core::size::Bytes;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Finding, IoContext, Metric, Params, Plan, Profile,
    RunCtx, Severity, Unit,
};
use sysgauge_family::util::metric;
use sysgauge_stats::SplitMix64;

/// Uniform integer in `0..n` (n > 0) from 64 random bits by multiply-shift;
/// the bias is below n / 2^64, nothing at these sizes.
fn below(rng: &mut SplitMix64, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// Sattolo's algorithm: a uniformly random cyclic permutation of `0..n`.
/// `p[i]` is the element after `i`; following it from any element visits
/// all `n` before returning. (Fisher–Yates with `j < i` strictly: an
/// element can never stay in place, and the result is a single cycle.)
pub fn sattolo(n: usize, seed: u64) -> Vec<u32> {
    // The check never fails, so neither does the shuffle.
    sattolo_checked(n, seed, &mut || Ok(())).unwrap_or_default()
}

/// `sattolo`, calling `check` every 2^20 swaps so that shuffling a
/// gigabyte-sized working set (seconds of random accesses) stops promptly
/// on Ctrl-C.
fn sattolo_checked(
    n: usize,
    seed: u64,
    check: &mut dyn FnMut() -> Result<(), BenchError>,
) -> Result<Vec<u32>, BenchError> {
    let mut p: Vec<u32> = (0..n).map(|i| i as u32).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..n).rev() {
        if i % (1 << 20) == 0 {
            check()?;
        }
        let j = below(&mut rng, i);
        p.swap(i, j);
    }
    Ok(p)
}

/// Length of the cycle through element 0, if `p` is a permutation whose
/// cycle through 0 is found within `p.len()` steps.
pub fn cycle_length(p: &[u32]) -> Option<usize> {
    let mut i = 0usize;
    for steps in 1..=p.len() {
        i = *p.get(i)? as usize;
        if i == 0 {
            return Some(steps);
        }
    }
    None
}

/// A working set laid out as a chain of 64-byte elements, each starting
/// with the address of the next.
pub struct Chain {
    buf: MappedBuf,
    slots: usize,
}

impl Chain {
    /// Build the chain for `bytes` (a multiple of 64) from Sattolo's cycle.
    /// `check` is called now and then (Ctrl-C).
    pub fn build(
        bytes: usize,
        huge: bool,
        seed: u64,
        check: &mut dyn FnMut() -> Result<(), BenchError>,
    ) -> Result<Chain, BenchError> {
        let slots = bytes / LINE as usize;
        if slots < 2 || u32::try_from(slots).is_err() {
            return Err(BenchError::failed(format!(
                "a working set of {bytes} bytes cannot hold a chain"
            )));
        }
        let next = sattolo_checked(slots, seed, check)?;
        let mut buf = MappedBuf::new(bytes, huge)
            .io_context(|| format!("cannot map {bytes} bytes for the latency chain"))?;
        let words = buf
            .words_mut()
            .ok_or_else(|| BenchError::failed("chain buffer is not whole words"))?;
        let base = words.as_mut_ptr() as usize;
        let stride = LINE as usize / 8;
        for (i, &n) in next.iter().enumerate() {
            words[i * stride] = (base + n as usize * LINE as usize) as u64;
        }
        Ok(Chain { buf, slots })
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    fn base(&self) -> usize {
        self.buf.addr()
    }

    /// Slot index of an address, if it is the start of one of our slots.
    fn slot_of(&self, addr: usize) -> Option<usize> {
        let off = addr.checked_sub(self.base())?;
        (off % LINE as usize == 0 && off / (LINE as usize) < self.slots)
            .then_some(off / LINE as usize)
    }

    /// Check the chain is a permutation of the slots without fixed points:
    /// every stored address starts a slot and each slot is pointed to
    /// exactly once. (That it is one single cycle is Sattolo's guarantee,
    /// tested in the unit tests; walking it here would take as long as
    /// measuring.)
    pub fn check(&self) -> Result<(), String> {
        let stride = LINE as usize / 8;
        let words: &[u64] = bytemuck::try_cast_slice(self.buf.bytes())
            .map_err(|_| "chain buffer is not whole words".to_string())?;
        let mut seen = vec![0u64; self.slots.div_ceil(64)];
        for i in 0..self.slots {
            let target = usize::try_from(words[i * stride]).unwrap_or(usize::MAX);
            let j = self
                .slot_of(target)
                .ok_or_else(|| format!("element {i} points outside the working set"))?;
            if j == i {
                return Err(format!("element {i} points to itself"));
            }
            let (w, b) = (j / 64, 1u64 << (j % 64));
            if seen[w] & b != 0 {
                return Err(format!("element {j} is the target of two elements"));
            }
            seen[w] |= b;
        }
        Ok(())
    }

    /// Address of the first element: where a chase starts.
    pub fn start(&self) -> usize {
        self.base()
    }

    /// Follow the chain `n` steps from `from` (an address returned by
    /// `start` or `chase`); returns where it stopped.
    pub fn chase(&self, from: usize, n: u64) -> Result<usize, BenchError> {
        if self.slot_of(from).is_none() {
            return Err(BenchError::failed("chase started outside the chain"));
        }
        let mut p = from as *const u64;
        let mut left = n;
        // SAFETY: `p` starts at a slot of this chain (checked above) and
        // every slot holds the address of another slot of the same buffer
        // (built that way and checked by `check` before measuring), which
        // `self` keeps mapped; slots are 64-byte aligned, so every read is
        // in bounds and aligned. Plain loads: each depends on the last, so
        // the compiler can neither drop nor reorder them.
        unsafe {
            while left >= 8 {
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                p = *p as usize as *const u64;
                left -= 8;
            }
            while left > 0 {
                p = *p as usize as *const u64;
                left -= 1;
            }
        }
        Ok(p as usize)
    }
}

/// `mem.latency`.
pub struct LatencyBenchmark {
    options: Arc<MemOptions>,
}

impl LatencyBenchmark {
    pub fn new(options: Arc<MemOptions>) -> Self {
        LatencyBenchmark { options }
    }

    fn working_sets(&self, profile: Profile) -> Vec<u64> {
        match (&self.options.working_sets, self.options.scope) {
            (Some(ws), _) => ws.clone(),
            (None, Scope::Slice) => vec![slice_working_set(profile)],
            (None, Scope::Full) => latency_working_sets(profile),
        }
    }
}

impl Benchmark for LatencyBenchmark {
    fn id(&self) -> &str {
        LATENCY
    }

    fn describe(&self) -> Description {
        Description::new("dependent pointer chase through a random single cycle (Sattolo), one 64-byte line per element: ns per access by working set", Unit::Nanoseconds, Better::Lower)
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.working_sets(plan.profile)
            .into_iter()
            .map(|ws| {
                Params::new()
                    .with("working_set", ws)
                    .with("huge_pages", self.options.huge_pages)
            })
            .collect()
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let ws = params
            .get_u64("working_set")
            .ok_or_else(|| BenchError::failed("missing working_set"))?;
        validate_working_set(ws).map_err(BenchError::failed)?;
        let ws_us = usize::try_from(ws).map_err(|_| BenchError::failed("working set too large"))?;
        let huge = huge_param(params);
        // The chain plus the 4-byte permutation it is built from.
        let need = ws + ws / LINE * 4;
        with_pool(ctx, |_, pool| {
            pool.clear();
            Ok(())
        })?;
        ensure_memory("the latency working set", need)?;
        let t0 = ctx.now();
        let cancel = ctx.cancel_token().clone();
        let chain = Chain::build(ws_us, huge, 0x5a77_010c ^ ws, &mut || cancel.check())?;
        chain
            .check()
            .map_err(|e| BenchError::failed(format!("mem.latency: broken chain: {e}")))?;
        ctx.note_detail("setup_ms", ctx.now().saturating_sub(t0).as_millis() as u64);
        huge_page_findings(ctx, &chain.buf);
        let caches = &host().cpu.caches;
        let level = cache_level_for(ws, caches);
        ctx.note_detail("cache_level", level.as_str());
        if let Some(llc) = live_llc() {
            let largest = self.working_sets(ctx.profile()).into_iter().max() == Some(ws);
            if ws <= llc.instance_bytes && (self.options.scope == Scope::Slice || largest) {
                let severity = if self.options.scope == Scope::Slice {
                    Severity::Warning
                } else {
                    Severity::Info
                };
                ctx.finding(
                    Finding::new(
                        FITS_IN_CACHE,
                        severity,
                        format!(
                            "mem.latency: the working set of {} fits in the {} L{} cache: this is cache latency, not memory latency",
                            Bytes(ws),
                            Bytes(llc.instance_bytes),
                            llc.level
                        ),
                    )
                    .with_remedy(format!(
                        "`sysgauge mem --working-sets {}` or a longer profile reaches memory, if time and memory allow",
                        sysgauge_core::size::size_label(
                            llc.instance_bytes.saturating_mul(2).next_power_of_two()
                        )
                    )),
                );
            }
        }
        let mut pos = chain.start();
        let samples = ctx.measure_rate(|n| {
            pos = chain.chase(black_box(pos), n)?;
            Ok(n as f64)
        })?;
        black_box(pos);
        let ns: Vec<f64> = samples.into_iter().map(|rate| 1e9 / rate).collect();
        Ok(vec![metric(
            "latency",
            Unit::Nanoseconds,
            Better::Lower,
            ns,
        )?])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{ctx, full};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sattolo_is_one_cycle_over_everything() {
        for n in [2usize, 3, 4, 5, 64, 1000, 65_536, 1 << 20] {
            for seed in [0u64, 1, 0x5a77_010c] {
                let p = sattolo(n, seed);
                assert_eq!(cycle_length(&p), Some(n), "n={n} seed={seed}");
                let mut seen = vec![false; n];
                for &x in &p {
                    assert!(!seen[x as usize], "{x} twice");
                    seen[x as usize] = true;
                }
                assert!(p.iter().enumerate().all(|(i, &x)| x as usize != i));
            }
        }
        assert_eq!(sattolo(1, 0), vec![0]);
        // Deterministic for a seed, different across seeds.
        assert_eq!(sattolo(1000, 7), sattolo(1000, 7));
        assert_ne!(sattolo(1000, 7), sattolo(1000, 8));
    }

    #[test]
    fn building_stops_on_cancel() {
        let mut calls = 0;
        let r = Chain::build(128 << 20, false, 1, &mut || {
            calls += 1;
            Err(BenchError::Cancelled)
        });
        assert!(matches!(r, Err(BenchError::Cancelled)));
        assert_eq!(calls, 1);
    }

    #[test]
    fn cycle_length_rejects_non_cycles() {
        // Two 2-cycles: the cycle through 0 has length 2, not 4.
        assert_eq!(cycle_length(&[1, 0, 3, 2]), Some(2));
        // Not a permutation: 0 → 1 → 1 → ... never returns.
        assert_eq!(cycle_length(&[1, 1]), None);
        assert_eq!(cycle_length(&[5]), None);
    }

    proptest! {
        #[test]
        fn sattolo_single_cycle_any_size(n in 2usize..5000, seed in any::<u64>()) {
            prop_assert_eq!(cycle_length(&sattolo(n, seed)), Some(n));
        }
    }

    #[test]
    fn chain_walks_every_element_once() {
        for huge in [false, true] {
            let chain = Chain::build(64 << 10, huge, 3, &mut || Ok(())).unwrap();
            assert_eq!(chain.slots(), 1024);
            chain.check().unwrap();
            let start = chain.start();
            let mut p = start;
            let mut visited = std::collections::BTreeSet::new();
            for _ in 0..chain.slots() {
                assert!(visited.insert(p));
                p = chain.chase(p, 1).unwrap();
            }
            assert_eq!(p, start);
            assert_eq!(visited.len(), 1024);
            // Unrolled and step-by-step chases agree.
            let a = chain.chase(start, 1000).unwrap();
            let mut b = start;
            for _ in 0..1000 {
                b = chain.chase(b, 1).unwrap();
            }
            assert_eq!(a, b);
            assert!(chain.chase(start + 8, 1).is_err());
            assert!(chain.chase(0, 1).is_err());
        }
        assert!(Chain::build(64, false, 1, &mut || Ok(())).is_err());
    }

    #[test]
    fn check_finds_broken_chains() {
        let mut chain = Chain::build(4096, false, 9, &mut || Ok(())).unwrap();
        let base = chain.start() as u64;
        let words = chain.buf.words_mut().unwrap_or_else(|| panic!("words"));
        let saved = words[0];
        words[0] = base; // element 0 points to itself
        assert!(chain.check().is_err_and(|e| e.contains("itself")));
        let words = chain.buf.words_mut().unwrap_or_else(|| panic!("words"));
        words[0] = base + 4096; // past the end
        assert!(chain.check().is_err_and(|e| e.contains("outside")));
        let words = chain.buf.words_mut().unwrap_or_else(|| panic!("words"));
        words[0] = words[8]; // two elements point to the same one
        assert!(chain.check().is_err_and(|e| e.contains("two elements")));
        let words = chain.buf.words_mut().unwrap_or_else(|| panic!("words"));
        words[0] = saved;
        assert!(chain.check().is_ok());
    }

    #[test]
    fn cases_and_run() {
        let full = full();
        let b = LatencyBenchmark::new(full);
        let cases = b.cases(&Plan {
            profile: Profile::Tiny,
            threads: 1,
        });
        assert!(cases.len() >= 2);
        assert_eq!(cases[0].get_u64("working_set"), Some(4096));
        let chosen = LatencyBenchmark::new(Arc::new(MemOptions {
            working_sets: Some(vec![8192, 1 << 20]),
            ..MemOptions::default()
        }));
        let c = chosen.cases(&Plan {
            profile: Profile::Quick,
            threads: 1,
        });
        assert_eq!(c.len(), 2);
        let mut cx = ctx(1);
        for p in &c {
            let m = chosen.run(&mut cx, p).unwrap();
            assert_eq!(m[0].unit, Unit::Nanoseconds);
            assert!(m[0].value() > 0.0 && m[0].value() < 1e6);
            let out = cx.take_case_output();
            assert!(out.details.get_str("cache_level").is_some());
        }
        assert!(chosen
            .run(&mut cx, &Params::new().with("working_set", 100u64))
            .is_err());
        assert!(chosen.run(&mut cx, &Params::new()).is_err());
        cx.end_session();
    }
}
