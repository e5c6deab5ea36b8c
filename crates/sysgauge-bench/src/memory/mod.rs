//! The `mem` family: memory bandwidth and latency.
//!
//! - Copy methods over two arrays (mbw style): the C library's `memcpy`
//!   (`mem.memcpy`), a plain element-by-element loop (`mem.loop-copy`) and
//!   `memcpy` in fixed blocks that walk the whole array (`mem.block-copy`),
//!   in MB/s of bytes copied; the destination is verified.
//! - STREAM-style kernels copy, scale, add and triad (`mem.stream-*`), on
//!   one thread and on all CPUs, in GB/s counted as STREAM does.
//! - Latency (`mem.latency`): a dependent pointer chase through a random
//!   cyclic permutation (Sattolo), one cache line per element, for working
//!   sets from 4 KiB to beyond the last-level cache, in ns per access.
//! - tmpfs write (`mem.tmpfs-write`): sequential writes into /dev/shm, the
//!   "dd to /dev/shm" test.
//!
//! Sizes: unless `--size` says otherwise, arrays are 4 × the last-level
//! cache (STREAM's rule), rounded up to a power of two, then bounded by the
//! profile (so the case fits its time slice) and by available memory. The
//! size used is recorded in the params; when the data would still fit in
//! the last-level cache a finding says so ("this measures cache, not
//! memory").
//!
//! Buffers are anonymous mappings that ask for transparent huge pages (see
//! `buffer`); they are kept in a pool between the cases of one session so
//! the multi-gigabyte arrays are allocated and faulted in once, and are
//! dropped when the family ends. `sysgauge run` runs a short slice
//! (`Scope::Slice`: memcpy, triad on all CPUs, latency at one large working
//! set); `sysgauge mem` runs everything (`Scope::Full`).

pub mod buffer;
pub mod chart;
pub mod copy;
pub mod latency;
pub mod mbw;
pub mod report;
pub mod stream;
pub mod tmpfs;

/// The pointer-chasing latency benchmark's id.
pub const LATENCY: &str = "mem.latency";
/// The libc memcpy copy benchmark's id.
pub const MEMCPY: &str = "mem.memcpy";

use crate::memory::buffer::MappedBuf;
use sysgauge_family::util::{by_profile, Count};

// A loop of small copies indexed through `opaque` cannot be fused into one
// `memcpy` call (the loop idiom LLVM otherwise recognises) while the copies
// themselves stay ordinary vector moves.
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use sysgauge_core::host::{CacheInfo, HostInfo};
use sysgauge_core::size::Bytes;
use sysgauge_core::{BenchError, Benchmark, Finding, Params, Profile, RunCtx, Severity};
pub(crate) use sysgauge_kernels::opaque::opaque_usize as opaque;

/// Which part of the family to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The short slice `sysgauge run` includes: memcpy bandwidth, triad on
    /// all CPUs, latency at one large working set.
    #[default]
    Slice,
    /// Everything (`sysgauge mem`).
    Full,
}

/// Command-line choices for the family; `None` follows the profile and the
/// machine.
#[derive(Debug, Clone)]
pub struct MemOptions {
    pub scope: Scope,
    /// Bytes per array (copy, STREAM) and of the /dev/shm file.
    pub size: Option<u64>,
    /// Block of `mem.block-copy`.
    pub block_size: Option<u64>,
    /// STREAM thread counts.
    pub threads: Option<Vec<Count>>,
    /// Latency working sets.
    pub working_sets: Option<Vec<u64>>,
    /// Ask for transparent huge pages (the default) or forbid them.
    pub huge_pages: bool,
}

impl Default for MemOptions {
    fn default() -> Self {
        MemOptions {
            scope: Scope::Slice,
            size: None,
            block_size: None,
            threads: None,
            working_sets: None,
            huge_pages: true,
        }
    }
}

/// Default block of `mem.block-copy` (mbw's default).
pub const DEFAULT_BLOCK_SIZE: u64 = 256 << 10;
/// Smallest array `--size` accepts.
pub const MIN_SIZE: u64 = 4 << 10;
/// Smallest latency working set: two cache lines make a cycle, but below
/// one page the numbers mean little.
pub const MIN_WORKING_SET: u64 = 1 << 10;
/// Bytes per latency element: one cache line, so every access is to a
/// different line (a 128-byte-line machine sees two elements per line,
/// visited at unrelated times).
pub const LINE: u64 = 64;
/// A buffer may take at most this share of the memory available when it is
/// allocated; a bigger request is refused instead of pushing the machine
/// into swap or the OOM killer.
pub const MEMORY_SHARE_LIMIT: f64 = 0.9;

/// Time slices of `sysgauge mem` (the whole family) for the tiny, quick,
/// standard and full profiles. `sysgauge run` uses the registry's slice.
pub const FULL_BUDGET_SECONDS: [f64; 4] = [0.3, 30.0, 150.0, 600.0];

/// The time slice of `sysgauge mem` for a profile.
pub fn full_budget(profile: Profile) -> Duration {
    Duration::from_secs_f64(by_profile(profile, FULL_BUDGET_SECONDS))
}

/// The last-level cache: the highest level of data or unified cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Llc {
    pub level: u8,
    /// One instance (what one core can use).
    pub instance_bytes: u64,
    /// All instances on the machine (STREAM's "sum of the last-level caches").
    pub total_bytes: u64,
}

/// The last-level cache from the host facts; `None` when unknown.
pub fn last_level_cache(caches: &[CacheInfo]) -> Option<Llc> {
    caches
        .iter()
        .filter(|c| c.kind != "instruction" && c.size_bytes > 0)
        .max_by_key(|c| (c.level, c.size_bytes))
        .map(|c| Llc {
            level: c.level,
            instance_bytes: c.size_bytes,
            total_bytes: c.size_bytes * u64::from(c.instances.unwrap_or(1).max(1)),
        })
}

/// Which level of the cache hierarchy a working set of `bytes` fits in
/// (`L1`, `L2`, ...), or `memory`: the smallest data or unified cache whose
/// one instance holds it.
pub fn cache_level_for(bytes: u64, caches: &[CacheInfo]) -> String {
    let mut data: Vec<&CacheInfo> = caches
        .iter()
        .filter(|c| c.kind != "instruction" && c.size_bytes > 0)
        .collect();
    data.sort_by_key(|c| (c.level, c.size_bytes));
    data.iter()
        .find(|c| bytes <= c.size_bytes)
        .map(|c| format!("L{}", c.level))
        .unwrap_or_else(|| "memory".to_string())
}

/// Host facts the family plans with, read once per process.
fn host() -> &'static HostInfo {
    static HOST: OnceLock<HostInfo> = OnceLock::new();
    HOST.get_or_init(|| sysgauge_host::collect_live(None))
}

fn live_llc() -> Option<Llc> {
    last_level_cache(&host().cpu.caches)
}

fn prev_power_of_two(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        1 << (63 - n.leading_zeros())
    }
}

/// Bytes per array each profile uses unless `--size` says otherwise. The
/// size identifies the case, so it is the same on every machine (never
/// derived from the cache or memory of the one running it): any two runs of
/// one profile compare on it. STREAM's rule, each array at least 4 × the
/// last-level cache, is checked per case and reported as a finding; the
/// cache size is kept in the details.
pub fn canonical_array_size(profile: Profile) -> u64 {
    by_profile(profile, [1 << 20, 128 << 20, 1 << 30, 4 << 30])
}

/// A planned array size that also fits `available` memory: the size
/// itself, or the largest power of two (at least 64 KiB) whose arrays fit.
/// A lowered size is a different case, which compares only with runs at
/// that size; the caller reports it.
pub fn fit_array_size(size: u64, available: Option<u64>) -> u64 {
    match available {
        Some(avail) if check_memory("", memory_needed(size), Some(avail)).is_err() => {
            let share = (avail as f64 * MEMORY_SHARE_LIMIT) as u64 / 3;
            prev_power_of_two(share).clamp(64 << 10, size)
        }
        _ => size,
    }
}

/// The latency sweep's largest working set per profile.
pub fn profile_working_set_cap(profile: Profile) -> u64 {
    by_profile(profile, [256 << 10, 256 << 20, 1 << 30, 4 << 30])
}

/// The one working set of `sysgauge run`'s slice per profile: beyond the
/// last-level cache of common machines, and the same on every machine.
pub fn slice_working_set(profile: Profile) -> u64 {
    by_profile(profile, [1 << 20, 128 << 20, 1 << 30, 2 << 30])
}

/// Working sets of the latency sweep: 4 KiB doubling up to the profile's
/// cap; `standard` and `full` add the midpoints (×1.5) for a finer curve.
/// The same on every machine; a working set the machine's memory cannot
/// hold is skipped when its case runs.
pub fn latency_working_sets(profile: Profile) -> Vec<u64> {
    let max = profile_working_set_cap(profile);
    let fine = matches!(profile, Profile::Standard | Profile::Full);
    let mut v = Vec::new();
    let mut ws: u64 = 4 << 10;
    while ws <= max {
        v.push(ws);
        if fine && ws + ws / 2 <= max {
            v.push(ws + ws / 2);
        }
        ws *= 2;
    }
    v
}

/// Why a buffer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} needs {need} of memory but only {available} is available")]
pub struct MemoryRefusal {
    pub what: String,
    pub need: Bytes,
    pub available: Bytes,
}

impl MemOptions {
    /// Bytes per array of a planned case: `--size`, or the profile's.
    pub fn array_size(&self, profile: Profile) -> u64 {
        self.size.unwrap_or_else(|| canonical_array_size(profile))
    }
}

/// What `sysgauge mem` was given, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct MemChoices {
    pub size: Option<u64>,
    pub block_size: Option<u64>,
    pub threads: Option<Vec<Count>>,
    pub working_sets: Option<Vec<u64>>,
    pub huge_pages: bool,
}

impl MemOptions {
    /// The whole family (`sysgauge mem`) with these choices, checked against
    /// each other and against `available` memory, before anything runs.
    pub fn full(choices: MemChoices, available: Option<u64>) -> Result<MemOptions, String> {
        let size = match choices.size {
            None => None,
            Some(v) => {
                validate_size(v).map_err(|e| format!("--size {v}: {e}"))?;
                check_memory(
                    &format!("--size {} (three STREAM arrays of {})", Bytes(v), Bytes(v)),
                    memory_needed(v),
                    available,
                )
                .map_err(|e| format!("{e}; choose a smaller --size"))?;
                Some(v)
            }
        };
        let block_size = match choices.block_size {
            None => None,
            Some(v) => {
                if v < 64 {
                    return Err(format!(
                        "--block-size {v}: a block must be at least 64 bytes"
                    ));
                }
                if let Some(size) = size {
                    if v > size {
                        return Err(format!(
                            "--block-size {} is larger than --size ({})",
                            Bytes(v),
                            Bytes(size)
                        ));
                    }
                }
                Some(v)
            }
        };
        let working_sets = match choices.working_sets {
            None => None,
            Some(sets) => {
                let mut v = Vec::new();
                for ws in sets {
                    validate_working_set(ws).map_err(|e| format!("--working-sets: {e}"))?;
                    check_memory(
                        &format!("--working-sets: a working set of {}", Bytes(ws)),
                        ws + ws / 16,
                        available,
                    )
                    .map_err(|e| format!("{e}; choose smaller working sets"))?;
                    v.push(ws);
                }
                Some(v)
            }
        };
        Ok(MemOptions {
            scope: Scope::Full,
            size,
            block_size,
            threads: choices.threads,
            working_sets,
            huge_pages: choices.huge_pages,
        })
    }
}

/// Refuse `need` bytes when it exceeds the share of `available` memory a
/// benchmark may take. `available` unknown means no refusal.
pub fn check_memory(what: &str, need: u64, available: Option<u64>) -> Result<(), MemoryRefusal> {
    match available {
        Some(avail) if need as f64 > avail as f64 * MEMORY_SHARE_LIMIT => Err(MemoryRefusal {
            what: what.to_string(),
            need: Bytes(need),
            available: Bytes(avail),
        }),
        _ => Ok(()),
    }
}

/// Memory the whole family needs at once for arrays of `size` bytes: the
/// three STREAM arrays (the copy tests need two). The CLI refuses a
/// `--size` for which this exceeds available memory.
pub fn memory_needed(size: u64) -> u64 {
    size.saturating_mul(3)
}

/// A `check_memory` failure as a skipped case with what to do.
fn refusal_to_skip(r: MemoryRefusal) -> BenchError {
    BenchError::skip(
        r.to_string(),
        "pass a smaller --size (or --working-sets), or stop what holds the memory",
    )
}

/// Check live available memory for a buffer of `need` bytes.
fn ensure_memory(what: &str, need: u64) -> Result<(), BenchError> {
    check_memory(what, need, sysgauge_host::available_memory_bytes()).map_err(refusal_to_skip)
}

/// Finding codes of this family.
pub const FITS_IN_CACHE: &str = "fits-in-cache";
pub const NEAR_CACHE_SIZE: &str = "near-cache-size";
pub const CACHE_UNKNOWN: &str = "cache-size-unknown";
pub const NO_HUGE_PAGES: &str = "no-huge-pages";

/// Report how the data a case touches compares with the last-level cache:
/// all of it fits (a warning: cache, not memory, is measured), or one array
/// is below 4 × the cache (STREAM's rule; information).
fn cache_findings(ctx: &mut RunCtx, case: &str, per_array: u64, arrays: u64) {
    let touched = per_array.saturating_mul(arrays);
    let Some(llc) = live_llc() else {
        ctx.finding(
            Finding::new(
                CACHE_UNKNOWN,
                Severity::Info,
                format!(
                    "{case}: the cache sizes of this machine are unknown, so sysgauge cannot tell whether {} stays in a cache",
                    Bytes(touched)
                ),
            )
            .with_remedy("compare sizes with `lscpu -C` and pass --size of at least 4 × the last-level cache"),
        );
        return;
    };
    ctx.note_detail("llc_bytes", llc.total_bytes);
    let suggest = llc.total_bytes.saturating_mul(4).next_power_of_two();
    if touched <= llc.total_bytes {
        ctx.finding(
            Finding::new(
                FITS_IN_CACHE,
                Severity::Warning,
                format!(
                    "{case}: the {} it touches fit in the {} L{} cache: this measures cache, not memory",
                    Bytes(touched),
                    Bytes(llc.total_bytes),
                    llc.level
                ),
            )
            .with_remedy(format!(
                "for memory bandwidth run `sysgauge mem --size {}` (4 × the last-level cache) or a longer profile, if memory allows",
                sysgauge_core::size::size_label(suggest)
            )),
        );
    } else if per_array < llc.total_bytes.saturating_mul(4) {
        ctx.finding(
            Finding::new(
                NEAR_CACHE_SIZE,
                Severity::Info,
                format!(
                    "{case}: each array ({}) is smaller than 4 × the {} L{} cache, so part of the data may come from the cache",
                    Bytes(per_array),
                    Bytes(llc.total_bytes),
                    llc.level
                ),
            )
            .with_remedy(format!(
                "STREAM's rule is 4 × the last-level cache per array: `sysgauge mem --size {}`, if memory allows",
                sysgauge_core::size::size_label(suggest)
            )),
        );
    }
}

/// Record the share of huge pages a buffer got, and say so when huge pages
/// were asked for but mostly refused.
fn huge_page_findings(ctx: &mut RunCtx, buf: &MappedBuf) {
    let Some(share) = buf.huge_page_share() else {
        return;
    };
    let percent = (share * 100.0).round() as u64;
    ctx.note_detail("huge_page_percent", percent);
    if buf.huge_requested() && share < 0.5 {
        let thp = host()
            .memory
            .transparent_hugepages
            .clone()
            .unwrap_or_else(|| "unknown".into());
        ctx.finding(
            Finding::new(
                NO_HUGE_PAGES,
                Severity::Info,
                format!(
                    "transparent huge pages were requested but only {percent} % of the buffer got them (THP setting: {thp}); TLB misses add to the numbers, most of all to latency at large working sets"
                ),
            )
            .with_remedy(
                "as root: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (and free memory), or compare only with runs made without huge pages (--no-huge-pages)",
            ),
        );
    }
}

/// Finding code: the profile's array size did not fit in memory.
pub const MEMORY_LIMITED: &str = "memory-limited";

/// The case's array size: the planned one (the profile's canonical size
/// unless `--size` was given), lowered to fit available memory when it was
/// not the user's choice, in which case the case's params say so and a
/// finding explains why it compares only with runs at that size.
fn resolve_size(
    ctx: &mut RunCtx,
    params: &Params,
    options: &MemOptions,
) -> Result<u64, BenchError> {
    let planned = params
        .get_u64("size")
        .unwrap_or_else(|| canonical_array_size(ctx.profile()));
    validate_size(planned).map_err(BenchError::failed)?;
    if options.size.is_some() {
        return Ok(planned);
    }
    let size = fit_array_size(planned, sysgauge_host::available_memory_bytes());
    if size != planned {
        ctx.note_param("size", size);
        ctx.finding(
            Finding::new(
                MEMORY_LIMITED,
                Severity::Warning,
                format!(
                    "the {} profile's arrays of {} do not fit in the memory available, so this case ran with {}: it compares only with runs at that size",
                    ctx.profile(),
                    Bytes(planned),
                    Bytes(size)
                ),
            )
            .with_remedy("stop what holds the memory and run again, or compare with `--size` runs of the same size"),
        );
    }
    Ok(size)
}

/// An array size must be at least `MIN_SIZE` and whole 8-byte elements.
pub fn validate_size(size: u64) -> Result<(), String> {
    if size < MIN_SIZE {
        return Err(format!(
            "size {size} is below the minimum of {} bytes",
            MIN_SIZE
        ));
    }
    if !size.is_multiple_of(8) {
        return Err(format!(
            "size {size} is not a multiple of 8 bytes (whole 8-byte elements)"
        ));
    }
    if usize::try_from(size).is_err() {
        return Err(format!(
            "size {size} does not fit this machine's address space"
        ));
    }
    Ok(())
}

/// A latency working set must be at least `MIN_WORKING_SET` and whole
/// 64-byte elements.
pub fn validate_working_set(ws: u64) -> Result<(), String> {
    if ws < MIN_WORKING_SET {
        return Err(format!(
            "working set {ws} is below the minimum of {MIN_WORKING_SET} bytes"
        ));
    }
    if !ws.is_multiple_of(LINE) {
        return Err(format!(
            "working set {ws} is not a multiple of {LINE} bytes"
        ));
    }
    if ws / LINE > u64::from(u32::MAX) || usize::try_from(ws).is_err() {
        return Err(format!("working set {ws} is too large"));
    }
    Ok(())
}

/// The buffers kept between the cases of one session (a `RunCtx` fixture):
/// the copy pair and the STREAM array sets, so multi-gigabyte arrays are
/// allocated and faulted in once. Taken out of the context for a case and
/// put back after it (a failed case drops them, which only costs time).
#[derive(Default)]
pub(crate) struct Pool {
    copy: Option<copy::CopyBuffers>,
    stream: Vec<stream::StreamArrays>,
}

const POOL: &str = "mem.pool";

impl Pool {
    fn bytes(&self) -> u64 {
        self.copy.as_ref().map_or(0, |c| c.bytes())
            + self.stream.iter().map(|s| s.bytes()).sum::<u64>()
    }

    /// Drop held buffers (STREAM sets first, then the copy pair) until
    /// `need` more bytes leave at least half of what is then available
    /// free, so one big array set is never kept beside another.
    fn make_room(&mut self, need: u64) {
        loop {
            let held = self.bytes();
            if held == 0 {
                return;
            }
            let avail = sysgauge_host::available_memory_bytes().unwrap_or(u64::MAX);
            if (held + need) as f64 <= (avail.saturating_add(held)) as f64 * 0.5 {
                return;
            }
            if !self.stream.is_empty() {
                self.stream.remove(0);
            } else {
                self.copy = None;
            }
        }
    }

    fn clear(&mut self) {
        self.copy = None;
        self.stream.clear();
    }

    fn take(ctx: &mut RunCtx) -> Result<Pool, BenchError> {
        let p: &mut Pool = ctx.fixture(POOL, |_| Ok(Pool::default()))?;
        Ok(std::mem::take(p))
    }

    fn put_back(self, ctx: &mut RunCtx) -> Result<(), BenchError> {
        let p: &mut Pool = ctx.fixture(POOL, |_| Ok(Pool::default()))?;
        *p = self;
        Ok(())
    }
}

/// Run `f` with the session's pool taken out of the context, and put the
/// pool back whatever `f` returns.
fn with_pool<T>(
    ctx: &mut RunCtx,
    f: impl FnOnce(&mut RunCtx, &mut Pool) -> Result<T, BenchError>,
) -> Result<T, BenchError> {
    let mut pool = Pool::take(ctx)?;
    let r = f(ctx, &mut pool);
    pool.put_back(ctx)?;
    r
}

/// The `huge_pages` parameter of every case.
fn huge_param(params: &Params) -> bool {
    params.get_bool("huge_pages").unwrap_or(true)
}

// The slice's three cases also allocate and fault in their buffers
// and build the latency chain (about a second in all at the quick
// sizes), outside the measuring budget: 3 s of measuring is about
// 5 s of wall time.
sysgauge_family::register_family! {
    name: "mem", options: MemOptions, in_default_run: true,
    cpu_bound: false, summary_first: true,
    budget_seconds: [0.3, 3.0, 30.0, 90.0], report: Some(report::memory_report),
    summary: "memory copy bandwidth (mbw style), STREAM kernels, latency by working set, tmpfs writes",
    charts: &[chart::CHART],
}

/// Every benchmark of the family, in display order.
pub fn benchmarks(options: &Arc<MemOptions>) -> Vec<Box<dyn Benchmark>> {
    let mut v: Vec<Box<dyn Benchmark>> = Vec::new();
    for kind in copy::CopyKind::ALL {
        v.push(Box::new(copy::CopyBenchmark::new(kind, options.clone())));
    }
    for kernel in stream::Kernel::ALL {
        v.push(Box::new(stream::StreamBenchmark::new(
            kernel,
            options.clone(),
        )));
    }
    v.push(Box::new(latency::LatencyBenchmark::new(options.clone())));
    v.push(Box::new(tmpfs::TmpfsWriteBenchmark::new(options.clone())));
    v
}

#[cfg(test)]
pub(crate) mod testutil {

    use super::{MemOptions, Scope};
    use std::sync::Arc;
    use sysgauge_core::RunCtx;

    pub fn ctx(threads: usize) -> RunCtx {
        let mut c = sysgauge_family::util::tiny_ctx(threads);
        c.begin_case(std::time::Duration::from_millis(20));
        c
    }

    /// The family's options at full scope, everything else by default.
    pub fn full() -> Arc<MemOptions> {
        Arc::new(MemOptions {
            scope: Scope::Full,
            ..MemOptions::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u8, kind: &str, size: u64, instances: u32) -> CacheInfo {
        CacheInfo {
            level,
            kind: kind.into(),
            size_bytes: size,
            shared_by: None,
            instances: Some(instances),
        }
    }

    fn vm_caches() -> Vec<CacheInfo> {
        vec![
            cache(1, "data", 48 << 10, 2),
            cache(1, "instruction", 64 << 10, 2),
            cache(2, "unified", 2 << 20, 2),
            cache(3, "unified", 480 << 20, 1),
        ]
    }

    #[test]
    fn llc_and_levels() {
        let c = vm_caches();
        let llc = last_level_cache(&c).unwrap_or_else(|| panic!("llc"));
        assert_eq!(llc.level, 3);
        assert_eq!(llc.instance_bytes, 480 << 20);
        assert_eq!(llc.total_bytes, 480 << 20);
        let two_socket = vec![
            cache(2, "unified", 1 << 20, 16),
            cache(3, "unified", 32 << 20, 2),
        ];
        assert_eq!(
            last_level_cache(&two_socket).map(|l| l.total_bytes),
            Some(64 << 20)
        );
        assert_eq!(last_level_cache(&[]), None);
        assert_eq!(cache_level_for(4 << 10, &c), "L1");
        assert_eq!(cache_level_for(48 << 10, &c), "L1");
        assert_eq!(cache_level_for(64 << 10, &c), "L2");
        assert_eq!(cache_level_for(256 << 20, &c), "L3");
        assert_eq!(cache_level_for(1 << 30, &c), "memory");
        assert_eq!(cache_level_for(4 << 10, &[]), "memory");
    }

    #[test]
    fn sizes_are_the_profiles_whatever_the_machine() {
        let gib = 1u64 << 30;
        assert_eq!(canonical_array_size(Profile::Tiny), 1 << 20);
        assert_eq!(canonical_array_size(Profile::Quick), 128 << 20);
        assert_eq!(canonical_array_size(Profile::Standard), gib);
        assert_eq!(canonical_array_size(Profile::Full), 4 * gib);
        // Enough memory: the size stays; unknown memory: no refusal.
        assert_eq!(fit_array_size(gib, Some(20 * gib)), gib);
        assert_eq!(fit_array_size(gib, None), gib);
        // 3 GiB available: three 1 GiB arrays exceed 90 % of it → 512 MiB.
        assert_eq!(fit_array_size(gib, Some(3 * gib)), 512 << 20);
        // Never below 64 KiB, never above the planned size.
        assert_eq!(fit_array_size(128 << 20, Some(1000)), 64 << 10);
        assert_eq!(fit_array_size(1 << 20, Some(1 << 20)), 256 << 10);
    }

    #[test]
    fn latency_sweeps() {
        let quick = latency_working_sets(Profile::Quick);
        assert_eq!(quick.first(), Some(&(4 << 10)));
        assert_eq!(quick.last(), Some(&(256 << 20)));
        assert_eq!(quick.len(), 17);
        assert!(quick.windows(2).all(|w| w[1] == 2 * w[0]));
        let standard = latency_working_sets(Profile::Standard);
        assert_eq!(standard.last(), Some(&(1 << 30)));
        assert!(standard.contains(&(6 << 10)) && standard.contains(&(48 << 10)));
        assert!(standard.windows(2).all(|w| w[1] > w[0]));
        assert_eq!(
            latency_working_sets(Profile::Tiny).last(),
            Some(&(256 << 10))
        );
        assert_eq!(slice_working_set(Profile::Quick), 128 << 20);
        assert_eq!(slice_working_set(Profile::Tiny), 1 << 20);
    }

    #[test]
    fn memory_refusal() {
        let gib = 1u64 << 30;
        assert!(check_memory("x", gib, Some(2 * gib)).is_ok());
        assert!(check_memory("x", gib, None).is_ok());
        let err = check_memory("the STREAM arrays", 48 * gib, Some(23 * gib))
            .err()
            .unwrap_or_else(|| panic!("48 GiB must be refused with 23 GiB available"));
        assert_eq!(
            err.to_string(),
            "the STREAM arrays needs 48 GiB of memory but only 23 GiB is available"
        );
        // Just under the share limit passes, just over it is refused.
        assert!(check_memory("x", 9 * gib, Some(10 * gib)).is_ok());
        assert!(check_memory("x", 9 * gib + 1, Some(10 * gib)).is_err());
        assert_eq!(memory_needed(gib), 3 * gib);
        assert_eq!(memory_needed(u64::MAX), u64::MAX);
        // Live: a buffer far beyond this machine's memory is a skipped case
        // with the reason and what to do, never an allocation attempt.
        if sysgauge_host::available_memory_bytes().is_some() {
            match ensure_memory("a test buffer", u64::MAX / 2) {
                Err(BenchError::Skip { reason, hint }) => {
                    assert!(reason.starts_with("a test buffer needs"), "{reason}");
                    assert!(hint.unwrap_or_default().contains("--size"));
                }
                other => panic!("expected a skip, got {other:?}"),
            }
        }
    }

    #[test]
    fn size_validation() {
        assert!(validate_size(4096).is_ok());
        assert!(validate_size(1_000_000).is_ok());
        assert!(validate_size(100).is_err());
        assert!(validate_size(4097).is_err());
        assert!(validate_working_set(4096).is_ok());
        assert!(validate_working_set(512).is_err());
        assert!(validate_working_set(4100).is_err());
        assert!(validate_working_set(1 << 50).is_err());
    }

    #[test]
    fn opaque_is_identity() {
        for x in [0usize, 1, 4096, usize::MAX] {
            assert_eq!(opaque(x), x);
        }
    }

    #[test]
    fn ids_in_order() {
        let ids: Vec<String> = benchmarks(&Arc::new(MemOptions::default()))
            .iter()
            .map(|b| b.id().to_string())
            .collect();
        assert_eq!(
            ids,
            vec![
                MEMCPY,
                "mem.loop-copy",
                "mem.block-copy",
                "mem.stream-copy",
                "mem.stream-scale",
                "mem.stream-add",
                "mem.stream-triad",
                LATENCY,
                "mem.tmpfs-write"
            ]
        );
    }
}
