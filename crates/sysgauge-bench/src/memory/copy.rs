//! Copy bandwidth, mbw style: one array copied into another by the C
//! library's `memcpy`, by a plain element-by-element loop, and by `memcpy`
//! in fixed blocks, in MB/s of bytes copied (each byte counted once, as mbw
//! does; the memory traffic is at least twice that).
//!
//! - `mem.memcpy`: `copy_from_slice`, which calls the C library's `memcpy`
//!   for large sizes. That is deliberate: it is the copy every program on
//!   the machine gets, with the library's own choice of method for the size
//!   (glibc switches to non-temporal stores above a threshold derived from
//!   the cache size). docs/performance.md compares it with `rep movsb`,
//!   hand-written AVX and non-temporal loops on the reference machine.
//! - `mem.loop-copy`: one volatile 8-byte load and one volatile 8-byte
//!   store per element. Volatile accesses may not be merged, widened or
//!   removed, so the compiler can neither replace the loop by `memcpy` nor
//!   vectorise it: this is what a naive scalar loop achieves, limited by
//!   how many narrow stores the core keeps in flight. (mbw's "dumb" loop is
//!   whatever its compiler made of `b[i] = a[i]`, which may be `memcpy`.)
//! - `mem.block-copy`: `memcpy` of `block_size` bytes at a time, advancing
//!   source and destination through the whole array. Each block's offset
//!   passes through `opaque`, so the blocks are never fused into one call.
//!   (The mbw 1.2.2 package reads the same source block every time and so
//!   measures a cached read; this one reads every byte.)
//!
//! Before timing, the destination is filled with a poison byte, copied
//! once, and compared with the source in full: a copy that skips or repeats
//! a block fails the case.

use super::buffer::MappedBuf;
use super::MEMCPY;
use super::{
    cache_findings, ensure_memory, huge_page_findings, huge_param, opaque, resolve_size, with_pool,
    MemOptions, Pool, Scope, DEFAULT_BLOCK_SIZE,
};
use std::hint::black_box;
use std::sync::Arc;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, IoContext, Metric, Params, Plan, RunCtx, Unit,
};
use sysgauge_family::util::{fill_pattern, mb_per_s, metric};

/// The byte the destination is filled with before the verified copy.
const POISON: u8 = 0xA5;

/// One of the three copy methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    Memcpy,
    Loop,
    Block,
}

impl CopyKind {
    pub const ALL: [CopyKind; 3] = [CopyKind::Memcpy, CopyKind::Loop, CopyKind::Block];

    pub fn id(self) -> &'static str {
        match self {
            CopyKind::Memcpy => MEMCPY,
            CopyKind::Loop => "mem.loop-copy",
            CopyKind::Block => "mem.block-copy",
        }
    }
}

/// The C library's `memcpy` (through `copy_from_slice`).
pub fn copy_memcpy(dst: &mut [u8], src: &[u8]) {
    dst.copy_from_slice(src);
}

/// One volatile 8-byte load and store per element: never turned into
/// `memcpy`, never vectorised.
pub fn copy_loop(dst: &mut [u64], src: &[u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        // SAFETY: `s` and `d` are references, so valid, aligned and live;
        // volatile only forbids the compiler to merge or drop the accesses.
        unsafe { std::ptr::write_volatile(d, std::ptr::read_volatile(s)) }
    }
}

/// `memcpy` in blocks of `block` bytes, advancing through both arrays.
pub fn copy_blocks(dst: &mut [u8], src: &[u8], block: usize) {
    let len = dst.len().min(src.len());
    let block = block.max(1);
    let mut off = 0;
    while off < len {
        let end = (off + block).min(len);
        let o = opaque(off);
        dst[o..end].copy_from_slice(&src[o..end]);
        off = end;
    }
}

/// Where a copy went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyMismatch {
    /// First byte that differs.
    pub offset: usize,
}

/// Compare the destination with the source; the first differing byte.
pub fn verify_copy(dst: &[u8], src: &[u8]) -> Result<(), CopyMismatch> {
    if dst.len() != src.len() {
        return Err(CopyMismatch {
            offset: dst.len().min(src.len()),
        });
    }
    // Compare in chunks so a mismatch is found without a byte loop over
    // gigabytes (slice equality is `memcmp`).
    const CHUNK: usize = 1 << 20;
    for (i, (d, s)) in dst.chunks(CHUNK).zip(src.chunks(CHUNK)).enumerate() {
        if d != s {
            let within = d.iter().zip(s).position(|(a, b)| a != b).unwrap_or(0);
            return Err(CopyMismatch {
                offset: i * CHUNK + within,
            });
        }
    }
    Ok(())
}

/// The source and destination arrays of the copy tests.
pub(crate) struct CopyBuffers {
    src: MappedBuf,
    dst: MappedBuf,
}

impl CopyBuffers {
    pub(crate) fn bytes(&self) -> u64 {
        (self.src.len() + self.dst.len()) as u64
    }

    fn matches(&self, size: usize, huge: bool) -> bool {
        self.src.len() == size && self.src.huge_requested() == huge
    }

    /// Two arrays of `size` bytes: the source filled with a fixed
    /// pseudo-random pattern (no zero pages, nothing a compressor or the
    /// kernel could shortcut), the destination touched so its pages exist.
    fn new(size: usize, huge: bool) -> Result<CopyBuffers, BenchError> {
        let mut src = MappedBuf::new(size, huge)
            .io_context(|| format!("cannot map {size} bytes for the copy source"))?;
        let mut dst = MappedBuf::new(size, huge)
            .io_context(|| format!("cannot map {size} bytes for the copy destination"))?;
        fill_pattern(src.bytes_mut(), 0x006d_656d_636f_7079);
        dst.bytes_mut().fill(POISON);
        Ok(CopyBuffers { src, dst })
    }
}

impl Pool {
    /// The copy pair for `size`, allocated on first use.
    fn copy_buffers(&mut self, size: usize, huge: bool) -> Result<&mut CopyBuffers, BenchError> {
        if !self.copy.as_ref().is_some_and(|c| c.matches(size, huge)) {
            self.copy = None;
            self.stream.clear();
            let need = 2 * size as u64;
            self.make_room(need);
            ensure_memory("the two copy arrays", need)?;
            self.copy = Some(CopyBuffers::new(size, huge)?);
        }
        self.copy
            .as_mut()
            .ok_or_else(|| BenchError::failed("copy buffers vanished"))
    }
}

/// `mem.memcpy`, `mem.loop-copy`, `mem.block-copy`.
pub struct CopyBenchmark {
    kind: CopyKind,
    options: Arc<MemOptions>,
}

impl CopyBenchmark {
    pub fn new(kind: CopyKind, options: Arc<MemOptions>) -> Self {
        CopyBenchmark { kind, options }
    }

    /// Run the method once over the whole arrays.
    fn copy_once(&self, dst: &mut [u8], src: &[u8], block: usize) -> Result<(), BenchError> {
        match self.kind {
            CopyKind::Memcpy => copy_memcpy(dst, src),
            CopyKind::Block => copy_blocks(dst, src, block),
            CopyKind::Loop => {
                let d: &mut [u64] = bytemuck::try_cast_slice_mut(dst)
                    .map_err(|_| BenchError::failed("array is not whole 8-byte words"))?;
                let s: &[u64] = bytemuck::try_cast_slice(src)
                    .map_err(|_| BenchError::failed("array is not whole 8-byte words"))?;
                copy_loop(d, s);
            }
        }
        Ok(())
    }

    fn measure(
        &self,
        ctx: &mut RunCtx,
        pool: &mut Pool,
        size: usize,
        block: usize,
        huge: bool,
    ) -> Result<Vec<f64>, BenchError> {
        let bufs = pool.copy_buffers(size, huge)?;
        let CopyBuffers { src, dst } = bufs;
        dst.bytes_mut().fill(POISON);
        self.copy_once(dst.bytes_mut(), src.bytes(), block)?;
        verify_copy(dst.bytes(), src.bytes()).map_err(|m| {
            BenchError::failed(format!(
                "{}: after copying, the destination differs from the source at byte {} of {size}: the copy is broken",
                self.kind.id(),
                m.offset
            ))
        })?;
        huge_page_findings(ctx, src);
        let src = src.bytes();
        let dst = dst.bytes_mut();
        ctx.measure_rate(|n| {
            for _ in 0..n {
                self.copy_once(black_box(&mut *dst), black_box(src), block)?;
            }
            Ok(n as f64 * size as f64)
        })
    }
}

impl Benchmark for CopyBenchmark {
    fn id(&self) -> &str {
        self.kind.id()
    }

    fn describe(&self) -> Description {
        let summary = match self.kind {
            CopyKind::Memcpy => {
                "copy one array into another with the C library's memcpy (mbw 2.0's MEMCPY; Debian's mbw 1.2.2 prints it as DUMB)"
            }
            CopyKind::Loop => {
                "copy element by element, one 8-byte load and store each, never vectorised or turned into memcpy (mbw 2.0's DUMB; Debian's mbw 1.2.2 prints it as MEMCPY)"
            }
            CopyKind::Block => {
                "copy with memcpy in fixed blocks (default 256 KiB) walking both arrays (mbw's MCBLOCK, which in mbw 1.2.2 re-reads one source block)"
            }
        };
        Description::new(summary.to_string(), Unit::MBps, Better::Higher)
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        if self.options.scope == Scope::Slice && self.kind != CopyKind::Memcpy {
            return Vec::new();
        }
        let mut p = Params::new()
            .with("huge_pages", self.options.huge_pages)
            .with("size", self.options.array_size(plan.profile));
        if self.kind == CopyKind::Block {
            p.insert(
                "block_size",
                self.options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
            );
        }
        vec![p]
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let size = resolve_size(ctx, params, &self.options)?;
        let size_us = usize::try_from(size).map_err(|_| BenchError::failed("size too large"))?;
        let block = match self.kind {
            CopyKind::Block => params
                .get_u64("block_size")
                .filter(|&b| b > 0)
                .and_then(|b| usize::try_from(b).ok())
                .ok_or_else(|| BenchError::failed("missing block_size"))?,
            _ => size_us,
        };
        let huge = huge_param(params);
        let samples = with_pool(ctx, |ctx, pool| {
            self.measure(ctx, pool, size_us, block, huge)
        })?;
        cache_findings(ctx, self.kind.id(), size, 2);
        let mbps: Vec<f64> = samples.into_iter().map(mb_per_s).collect();
        Ok(vec![metric("copy", Unit::MBps, Better::Higher, mbps)?])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{ctx, full};
    use super::*;

    fn pattern(n: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0u8; n];
        fill_pattern(&mut v, seed);
        v
    }

    #[test]
    fn every_method_copies_everything() {
        // Sizes that are not a multiple of the block, and blocks larger
        // than the array.
        for n in [8usize, 4096, 100_000, (1 << 20) + 24] {
            let src = pattern(n, 1);
            for block in [64usize, 4096, 256 << 10, 4 << 20] {
                let mut dst = vec![POISON; n];
                copy_blocks(&mut dst, &src, block);
                assert_eq!(
                    verify_copy(&dst, &src),
                    Ok(()),
                    "blocks n={n} block={block}"
                );
            }
            let mut dst = vec![POISON; n];
            copy_memcpy(&mut dst, &src);
            assert_eq!(verify_copy(&dst, &src), Ok(()));
            let s: Vec<u64> = src
                .chunks(8)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    u64::from_le_bytes(w)
                })
                .collect();
            let mut d = vec![0u64; s.len()];
            copy_loop(&mut d, &s);
            assert_eq!(d, s);
        }
    }

    #[test]
    fn verification_catches_a_broken_copy() {
        let n = 1 << 20;
        let src = pattern(n, 2);
        // The mbw 1.2.2 block copy: the same source block to every
        // destination block.
        let block = 256 << 10;
        let mut dst = vec![POISON; n];
        for d in dst.chunks_mut(block) {
            d.copy_from_slice(&src[..d.len()]);
        }
        assert_eq!(verify_copy(&dst, &src), Err(CopyMismatch { offset: block }));
        // A copy that stops one byte short.
        let mut dst = vec![POISON; n];
        dst[..n - 1].copy_from_slice(&src[..n - 1]);
        assert_eq!(verify_copy(&dst, &src), Err(CopyMismatch { offset: n - 1 }));
        // A copy that never happened.
        let dst = vec![POISON; n];
        assert_eq!(
            verify_copy(&dst, &src).map_err(|m| m.offset < 16),
            Err(true)
        );
        assert!(verify_copy(&src[..10], &src).is_err());
    }

    #[test]
    fn cases_by_scope() {
        let plan = Plan {
            profile: sysgauge_core::Profile::Quick,
            threads: 2,
        };
        let slice = Arc::new(MemOptions::default());
        assert_eq!(
            CopyBenchmark::new(CopyKind::Memcpy, slice.clone())
                .cases(&plan)
                .len(),
            1
        );
        assert!(CopyBenchmark::new(CopyKind::Loop, slice.clone())
            .cases(&plan)
            .is_empty());
        let full = Arc::new(MemOptions {
            scope: Scope::Full,
            size: Some(1 << 20),
            block_size: Some(4096),
            huge_pages: false,
            ..MemOptions::default()
        });
        let c = CopyBenchmark::new(CopyKind::Block, full).cases(&plan);
        assert_eq!(
            c,
            vec![Params::new()
                .with("huge_pages", false)
                .with("size", 1u64 << 20)
                .with("block_size", 4096u64)]
        );
    }

    #[test]
    fn runs_each_method_and_records_the_size() {
        let opts = full();
        let mut c = ctx(1);
        for kind in CopyKind::ALL {
            let b = CopyBenchmark::new(kind, opts.clone());
            let params = b.cases(&Plan {
                profile: sysgauge_core::Profile::Tiny,
                threads: 1,
            });
            c.begin_case(std::time::Duration::from_millis(20));
            let m = b
                .run(&mut c, &params[0])
                .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            assert_eq!(m[0].unit, Unit::MBps);
            assert_eq!(m[0].samples.len(), 3);
            assert!(m[0].value() > 0.0);
            c.take_case_output();
            // Tiny profile: 1 MiB arrays, planned as the case's size.
            assert_eq!(params[0].get_u64("size"), Some(1 << 20));
        }
        c.end_session();
    }

    #[test]
    fn explicit_size_and_bad_params() {
        let opts = Arc::new(MemOptions {
            scope: Scope::Full,
            size: Some(64 << 10),
            ..MemOptions::default()
        });
        let b = CopyBenchmark::new(CopyKind::Block, opts);
        let mut c = ctx(1);
        let p = Params::new()
            .with("size", 64u64 << 10)
            .with("block_size", 10_000u64)
            .with("huge_pages", false);
        let m = b.run(&mut c, &p).unwrap();
        assert!(m[0].value() > 0.0);
        assert!(c.take_case_output().params.get_u64("size").is_none());
        let bad = Params::new().with("size", 100u64).with("block_size", 64u64);
        assert!(matches!(b.run(&mut c, &bad), Err(BenchError::Failed(_))));
        let no_block = Params::new().with("size", 4096u64);
        assert!(b.run(&mut c, &no_block).is_err());
        c.end_session();
    }
}
