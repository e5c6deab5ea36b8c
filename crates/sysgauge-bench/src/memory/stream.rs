//! STREAM-style kernels over three arrays of `f64` (a, b, c), on one thread
//! and on every CPU, in GB/s (10^9 bytes per second). Bytes are counted as
//! STREAM counts them: copy and scale move two arrays per pass
//! (one read, one write), add and triad three.
//!
//! | kernel | operation    |
//! |--------|--------------|
//! | copy   | c = a        |
//! | scale  | b = q·c      |
//! | add    | c = a + b    |
//! | triad  | a = b + q·c  |
//!
//! The loops are plain Rust the compiler vectorises for the build's target
//! (SSE2 on x86-64, NEON on arm64), with ordinary stores: no non-temporal
//! stores in any kernel, so the four are comparable with each other. The
//! copy loop goes through `opaque` per 64 bytes so it stays a loop instead
//! of becoming a `memcpy` call (which would bring the C library's
//! non-temporal stores to one kernel only).
//!
//! With several threads each thread owns one contiguous part of every
//! array, as STREAM's OpenMP build splits them; each part is first written
//! by its own thread so that on a NUMA machine its pages sit on that
//! thread's node. Before timing, the kernel's output is poisoned with NaN,
//! one pass runs, and every element is checked against the exact expected
//! value (all values are small integers, exact in `f64`).

use super::buffer::MappedBuf;
use super::{
    cache_findings, ensure_memory, huge_page_findings, huge_param, opaque, resolve_size, with_pool,
    MemOptions, Pool, Scope,
};
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, IoContext, Metric, Params, Plan, RunCtx, Unit,
};
use sysgauge_family::util::{metric, Count};

/// STREAM's scalar.
pub const Q: f64 = 3.0;
/// Initial values of a, b, c (STREAM's).
const INITIAL: [f64; 3] = [1.0, 2.0, 0.0];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Copy,
    Scale,
    Add,
    Triad,
}

impl Kernel {
    pub const ALL: [Kernel; 4] = [Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad];

    pub fn id(self) -> &'static str {
        match self {
            Kernel::Copy => "mem.stream-copy",
            Kernel::Scale => "mem.stream-scale",
            Kernel::Add => "mem.stream-add",
            Kernel::Triad => "mem.stream-triad",
        }
    }

    /// Arrays read or written per pass (STREAM's byte count).
    pub fn arrays(self) -> u64 {
        match self {
            Kernel::Copy | Kernel::Scale => 2,
            Kernel::Add | Kernel::Triad => 3,
        }
    }

    /// Index (0 = a, 1 = b, 2 = c) of the array the kernel writes.
    pub fn output(self) -> usize {
        match self {
            Kernel::Copy => 2,
            Kernel::Scale => 1,
            Kernel::Add => 2,
            Kernel::Triad => 0,
        }
    }

    /// The value every output element must hold, from the input values.
    pub fn expected(self, v: [f64; 3]) -> f64 {
        let [a, b, c] = v;
        match self {
            Kernel::Copy => a,
            Kernel::Scale => Q * c,
            Kernel::Add => a + b,
            Kernel::Triad => b + Q * c,
        }
    }

    /// One pass over (parts of) the three arrays.
    pub fn apply(self, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
        match self {
            Kernel::Copy => copy(c, a),
            Kernel::Scale => {
                for (y, x) in b.iter_mut().zip(c.iter()) {
                    *y = Q * *x;
                }
            }
            Kernel::Add => {
                for ((y, x), z) in c.iter_mut().zip(a.iter()).zip(b.iter()) {
                    *y = *x + *z;
                }
            }
            Kernel::Triad => {
                for ((y, x), z) in a.iter_mut().zip(b.iter()).zip(c.iter()) {
                    *y = *x + Q * *z;
                }
            }
        }
    }
}

/// `dst = src` as a loop of 64-byte chunk copies the compiler cannot fuse
/// into one `memcpy` call.
fn copy(dst: &mut [f64], src: &[f64]) {
    let n = dst.len().min(src.len());
    let whole = n - n % 8;
    let mut i = 0;
    while i < whole {
        let o = opaque(i);
        dst[o..o + 8].copy_from_slice(&src[o..o + 8]);
        i += 8;
    }
    dst[whole..n].copy_from_slice(&src[whole..n]);
}

/// Contiguous element ranges of `n` split into `parts`, boundaries on
/// 8-element (64-byte) multiples so no cache line is shared by two threads.
pub fn split(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1);
    let lines = n.div_ceil(8);
    let mut v = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 0..parts {
        let end_line = lines * (p + 1) / parts;
        let end = (end_line * 8).min(n);
        v.push(start..end);
        start = end;
    }
    v
}

/// One array set: a, b, c of `size` bytes each, for `threads` threads.
pub(crate) struct StreamArrays {
    arrays: [MappedBuf; 3],
    threads: usize,
    /// What every element of each array holds; `None` after an
    /// interrupted pass.
    values: [Option<f64>; 3],
}

impl StreamArrays {
    pub(crate) fn bytes(&self) -> u64 {
        self.arrays.iter().map(|a| a.len() as u64).sum()
    }

    fn matches(&self, size: usize, threads: usize, huge: bool) -> bool {
        self.arrays[0].len() == size
            && self.threads == threads
            && self.arrays[0].huge_requested() == huge
    }

    fn new(size: usize, threads: usize, huge: bool) -> Result<StreamArrays, BenchError> {
        let map = |name: &str| {
            MappedBuf::new(size, huge)
                .io_context(|| format!("cannot map {size} bytes for STREAM array {name}"))
        };
        let mut s = StreamArrays {
            arrays: [map("a")?, map("b")?, map("c")?],
            threads,
            values: [None; 3],
        };
        for (i, v) in INITIAL.into_iter().enumerate() {
            s.fill(i, v)?;
        }
        Ok(s)
    }

    /// Fill array `i` with `v`, each thread its own part (first touch).
    fn fill(&mut self, i: usize, v: f64) -> Result<(), BenchError> {
        let threads = self.threads;
        let arr = self.arrays[i]
            .f64s_mut()
            .ok_or_else(|| BenchError::failed("STREAM array is not whole f64 elements"))?;
        let ranges = split(arr.len(), threads);
        std::thread::scope(|s| {
            let mut rest: &mut [f64] = arr;
            let mut consumed = 0;
            for r in ranges {
                let (part, tail) = std::mem::take(&mut rest).split_at_mut(r.end - consumed);
                consumed = r.end;
                rest = tail;
                s.spawn(move || part.fill(v));
            }
        });
        self.values[i] = Some(v);
        Ok(())
    }

    /// The three arrays as slices.
    fn slices(&mut self) -> Result<[&mut [f64]; 3], BenchError> {
        let [a, b, c] = &mut self.arrays;
        let bad = || BenchError::failed("STREAM array is not whole f64 elements");
        Ok([
            a.f64s_mut().ok_or_else(bad)?,
            b.f64s_mut().ok_or_else(bad)?,
            c.f64s_mut().ok_or_else(bad)?,
        ])
    }

    /// Make the kernel's inputs known, poison its output, run one pass and
    /// check every output element.
    fn verify(&mut self, kernel: Kernel) -> Result<(), BenchError> {
        for (i, v) in INITIAL.into_iter().enumerate() {
            if i != kernel.output() && self.values[i].is_none() {
                self.fill(i, v)?;
            }
        }
        self.fill(kernel.output(), f64::NAN)?;
        let inputs = [
            self.values[0].unwrap_or(f64::NAN),
            self.values[1].unwrap_or(f64::NAN),
            self.values[2].unwrap_or(f64::NAN),
        ];
        let want = kernel.expected(inputs);
        self.values[kernel.output()] = None;
        let [a, b, c] = self.slices()?;
        kernel.apply(a, b, c);
        let out: &[f64] = match kernel.output() {
            0 => a,
            1 => b,
            _ => c,
        };
        if let Some(i) = out.iter().position(|&x| x != want) {
            return Err(BenchError::failed(format!(
                "{}: element {i} is {} after one pass, expected {want}: the kernel is broken",
                kernel.id(),
                out[i]
            )));
        }
        self.values[kernel.output()] = Some(want);
        Ok(())
    }
}

impl Pool {
    /// The array set for `size` and `threads`, allocated on first use. Sets
    /// for other thread counts are kept while memory allows, so the one- and
    /// all-thread cases of each kernel do not reallocate.
    fn stream_arrays(
        &mut self,
        size: usize,
        threads: usize,
        huge: bool,
    ) -> Result<&mut StreamArrays, BenchError> {
        let pos = self
            .stream
            .iter()
            .position(|s| s.matches(size, threads, huge));
        let pos = match pos {
            Some(p) => p,
            None => {
                self.copy = None;
                self.stream.retain(|s| s.arrays[0].len() == size);
                let need = 3 * size as u64;
                self.make_room(need);
                ensure_memory("the three STREAM arrays", need)?;
                self.stream.push(StreamArrays::new(size, threads, huge)?);
                self.stream.len() - 1
            }
        };
        Ok(&mut self.stream[pos])
    }
}

/// `mem.stream-copy`, `-scale`, `-add`, `-triad`.
pub struct StreamBenchmark {
    kernel: Kernel,
    options: Arc<MemOptions>,
}

impl StreamBenchmark {
    pub fn new(kernel: Kernel, options: Arc<MemOptions>) -> Self {
        StreamBenchmark { kernel, options }
    }

    fn measure(
        &self,
        ctx: &mut RunCtx,
        pool: &mut Pool,
        size: usize,
        threads: usize,
        huge: bool,
    ) -> Result<Vec<f64>, BenchError> {
        let kernel = self.kernel;
        let set = pool.stream_arrays(size, threads, huge)?;
        set.verify(kernel)?;
        huge_page_findings(ctx, &set.arrays[0]);
        let out = kernel.output();
        // An interrupted timed pass leaves the output unknown; marked again
        // as known once measuring finishes.
        let want = set.values[out];
        set.values[out] = None;
        let [a, b, c] = set.slices()?;
        let per_elem = 8.0 * kernel.arrays() as f64;
        let samples = if threads == 1 {
            ctx.measure_rate(|n| {
                for _ in 0..n {
                    kernel.apply(black_box(&mut *a), black_box(&mut *b), black_box(&mut *c));
                }
                Ok(n as f64 * per_elem * a.len() as f64)
            })
        } else {
            let parts = split(a.len(), threads);
            let mut views = Vec::with_capacity(threads);
            let (mut ra, mut rb, mut rc) = (a, b, c);
            let mut consumed = 0;
            for r in parts {
                let k = r.end - consumed;
                consumed = r.end;
                let (pa, ta) = std::mem::take(&mut ra).split_at_mut(k);
                let (pb, tb) = std::mem::take(&mut rb).split_at_mut(k);
                let (pc, tc) = std::mem::take(&mut rc).split_at_mut(k);
                ra = ta;
                rb = tb;
                rc = tc;
                views.push(Mutex::new((pa, pb, pc)));
            }
            ctx.measure_rate_parallel(threads, |t, n| {
                let mut guard = views
                    .get(t)
                    .ok_or_else(|| BenchError::failed("no array part for this thread"))?
                    .lock()
                    .map_err(|_| BenchError::failed("a STREAM thread panicked"))?;
                let (pa, pb, pc) = &mut *guard;
                for _ in 0..n {
                    kernel.apply(
                        black_box(&mut **pa),
                        black_box(&mut **pb),
                        black_box(&mut **pc),
                    );
                }
                Ok(n as f64 * per_elem * pa.len() as f64)
            })
        }?;
        set.values[out] = want;
        Ok(samples)
    }
}

impl Benchmark for StreamBenchmark {
    fn id(&self) -> &str {
        self.kernel.id()
    }

    fn describe(&self) -> Description {
        let op = match self.kernel {
            Kernel::Copy => "c = a",
            Kernel::Scale => "b = q*c",
            Kernel::Add => "c = a + b",
            Kernel::Triad => "a = b + q*c",
        };
        Description::new(
            format!(
                "STREAM {} ({op}) over f64 arrays, bytes counted as STREAM does",
                &self.kernel.id()["mem.stream-".len()..]
            ),
            Unit::GBps,
            Better::Higher,
        )
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        let threads: Vec<Count> = match (self.options.scope, &self.options.threads) {
            (Scope::Slice, _) if self.kernel != Kernel::Triad => return Vec::new(),
            (Scope::Slice, _) => vec![Count::AllCpus],
            (Scope::Full, Some(t)) => t.clone(),
            (Scope::Full, None) => vec![Count::N(1), Count::AllCpus],
        };
        threads
            .into_iter()
            .map(|t| {
                Params::new()
                    .with("threads", t)
                    .with("huge_pages", self.options.huge_pages)
                    .with("size", self.options.array_size(plan.profile))
            })
            .collect()
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let size = resolve_size(ctx, params, &self.options)?;
        let size_us = usize::try_from(size).map_err(|_| BenchError::failed("size too large"))?;
        let threads = params
            .get_count("threads", ctx.threads())
            .filter(|&t| t > 0)
            .ok_or_else(|| BenchError::failed("missing threads"))?;
        if threads > size_us / 64 {
            return Err(BenchError::failed(format!(
                "{threads} threads cannot share arrays of {size} bytes; use a larger --size"
            )));
        }
        let huge = huge_param(params);
        let samples = with_pool(ctx, |ctx, pool| {
            self.measure(ctx, pool, size_us, threads, huge)
        })?;
        cache_findings(ctx, self.kernel.id(), size, self.kernel.arrays());
        let gbps: Vec<f64> = samples.into_iter().map(|b| b / 1e9).collect();
        Ok(vec![metric("bandwidth", Unit::GBps, Better::Higher, gbps)?])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{ctx, full};
    use super::*;

    #[test]
    fn kernels_compute_streams_sums() {
        let n = 1003;
        for k in Kernel::ALL {
            let mut a = vec![1.0; n];
            let mut b = vec![2.0; n];
            let mut c = vec![5.0; n];
            let inputs = [1.0, 2.0, 5.0];
            k.apply(&mut a, &mut b, &mut c);
            let out = match k.output() {
                0 => &a,
                1 => &b,
                _ => &c,
            };
            let want = k.expected(inputs);
            assert!(out.iter().all(|&x| x == want), "{k:?}");
        }
        assert_eq!(Kernel::Triad.expected([0.0, 2.0, 5.0]), 17.0);
        assert_eq!(Kernel::Copy.arrays(), 2);
        assert_eq!(Kernel::Add.arrays(), 3);
    }

    #[test]
    fn split_covers_everything_on_line_boundaries() {
        for n in [0usize, 7, 8, 9, 1000, 1 << 20] {
            for parts in [1usize, 2, 3, 7, 64] {
                let r = split(n, parts);
                assert_eq!(r.len(), parts);
                assert_eq!(r.first().map(|r| r.start), Some(0));
                assert_eq!(r.last().map(|r| r.end), Some(n));
                for w in r.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                    assert!(w[0].end % 8 == 0 || w[0].end == n);
                }
            }
        }
    }

    #[test]
    fn verification_detects_a_wrong_kernel() {
        let mut s = StreamArrays::new(64 << 10, 2, false).unwrap();
        for k in Kernel::ALL {
            s.verify(k).unwrap_or_else(|e| panic!("{k:?}: {e}"));
        }
        // Known values after copy, scale, add, triad from (1, 2, 0).
        assert_eq!(s.values, [Some(15.0), Some(3.0), Some(4.0)]);
        // Corrupt the inputs behind the set's back: the check must notice.
        if let Some(c) = s.arrays[2].f64s_mut() {
            c[100] = 99.0;
        }
        let err = s.verify(Kernel::Scale);
        assert!(matches!(err, Err(BenchError::Failed(m)) if m.contains("element 100")));
    }

    #[test]
    fn cases_by_scope_and_threads() {
        let plan = Plan {
            profile: sysgauge_core::Profile::Quick,
            threads: 4,
        };
        let slice = Arc::new(MemOptions::default());
        assert!(StreamBenchmark::new(Kernel::Copy, slice.clone())
            .cases(&plan)
            .is_empty());
        let t = StreamBenchmark::new(Kernel::Triad, slice).cases(&plan);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].get_str("threads"), Some(sysgauge_core::ALL_CPUS));
        assert_eq!(t[0].get_u64("size"), Some(128 << 20));
        let full = full();
        let c = StreamBenchmark::new(Kernel::Add, full.clone()).cases(&plan);
        assert_eq!(
            c.iter()
                .map(|p| p.get("threads").cloned())
                .collect::<Vec<_>>(),
            vec![Some(1u64.into()), Some(sysgauge_core::ALL_CPUS.into())]
        );
        let one = StreamBenchmark::new(Kernel::Add, full).cases(&Plan { threads: 1, ..plan });
        assert_eq!(one, c, "the same cases with any CPU count");
        let chosen = Arc::new(MemOptions {
            scope: Scope::Full,
            threads: Some(vec![Count::N(2), Count::N(3)]),
            size: Some(1 << 20),
            ..MemOptions::default()
        });
        let c = StreamBenchmark::new(Kernel::Scale, chosen).cases(&plan);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].get_u64("size"), Some(1 << 20));
    }

    #[test]
    fn runs_single_and_parallel_sharing_arrays() {
        let opts = full();
        let mut c = ctx(2);
        for k in Kernel::ALL {
            for threads in [1u64, 2] {
                let b = StreamBenchmark::new(k, opts.clone());
                c.begin_case(std::time::Duration::from_millis(10));
                let p = Params::new()
                    .with("threads", threads)
                    .with("huge_pages", true);
                let m = b
                    .run(&mut c, &p)
                    .unwrap_or_else(|e| panic!("{k:?} {threads}: {e}"));
                assert_eq!(m[0].unit, Unit::GBps);
                assert!(m[0].value() > 0.0);
                c.take_case_output();
            }
        }
        c.end_session();
        let b = StreamBenchmark::new(Kernel::Triad, opts);
        let p = Params::new().with("threads", 1000u64).with("size", 4096u64);
        assert!(b.run(&mut c, &p).is_err());
        assert!(b.run(&mut c, &Params::new()).is_err());
    }
}
