//! `disk.randrw`: random reads and writes mixed 50/50 with many requests
//! in flight, the disk test VPS buyers compare (YABS runs it with fio:
//! `--rw=randrw --rwmixread=50 --iodepth=64 --numjobs=2 --direct=1
//! --ioengine=libaio` at 4k, 64k, 512k and 1m blocks on one test file).
//!
//! The same job here: `numjobs` threads on the test file, each keeping
//! `iodepth` O_DIRECT requests in flight through its own io_uring (one
//! submission per refill, as libaio does), each request a read or a write
//! by the mix, at a random block-aligned offset. Where the kernel has no
//! io_uring (older than 5.1, or `kernel.io_uring_disabled`), each job runs
//! `iodepth` threads instead, one synchronous `pread`/`pwrite` each: the
//! same number of requests in flight, at more CPU cost; the engine used is
//! a detail of the result. In either engine a job whose requests complete
//! none for a minute fails (a device that stopped answering); the threads
//! engine then leaves its threads in the kernel (`threaded_job`).
//!
//! Every request uses its own buffer of ordinary 4 KiB pages, as fio's
//! (YABS does not ask for huge pages), filled once with test data; before
//! each write the offset and a count go into every 512-byte block of it, as
//! fio's `scramble_buffers` does, so the file no longer holds the pattern
//! afterwards.
//! The buffer's pages matter: a direct request from a huge page is one
//! segment, from 4 KiB pages one per page, and on a virtio disk that alone
//! halved fio's rate at 64 KiB (885 against 1860 MB/s with
//! `--iomem=shmhuge`), so buffers like fio's are what makes this YABS's
//! job.
//!
//! Each repetition is one pass of every job (the first, calibrating pass
//! runs for the repetition time; later ones issue as many requests as it
//! completed), timed from the first submission to the last completion of
//! the slowest job, as fio times a group. Per direction: MB/s, IOPS and
//! completion latency (median, 99th percentile, maximum: from queueing the
//! request to reaping it, as fio's clat).

use super::io::{self, AlignedBuf, Pattern};
use super::passes::{run_passes, Limit, PassResult};
use super::seq::{begin, open_direct, Probe};
use super::target::lock;
use super::{traps, DiskOptions, Kind};
use std::fs::File;
use std::os::unix::fs::FileExt;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysgauge_core::size::Bytes;
use sysgauge_core::{BenchError, Better, CancelToken, Metric, RunCtx, Unit};
use sysgauge_family::util::metric;
use sysgauge_stats::{median, percentile};

/// YABS's block sizes.
pub const QD_BLOCK_SIZES: [u64; 4] = [4 << 10, 64 << 10, 512 << 10, 1 << 20];
/// YABS's queue depth per job.
pub const QD_DEPTH: u64 = 64;
/// YABS's job count.
pub const QD_JOBS: u64 = 2;
/// YABS's share of reads, percent.
pub const QD_READ_PERCENT: u64 = 50;

/// Latencies kept per direction and pass, at most (enough for exact
/// percentiles of a one-second pass at 4 million IOPS).
const MAX_LATENCIES: usize = 4_000_000;

/// Longest single wait for a completion: how soon a job notices Ctrl-C
/// while its requests are in flight.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// A job whose requests in flight complete none for this long fails: a
/// device or kernel that stopped answering, not a slow one (a 1 MiB
/// request at 1 MB/s completes in one second). Either engine.
#[cfg(not(test))]
const STALL_LIMIT: Duration = Duration::from_secs(60);
/// The tests stop a device on purpose and need not wait a minute for it.
#[cfg(test)]
const STALL_LIMIT: Duration = Duration::from_secs(5);

/// How long a failed or cancelled job waits for its requests still in
/// flight before it gives up on them (and leaks their buffers): long
/// enough for a slow device to finish them after an error, short enough
/// that a cancelled step ends within about a second.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const REAP_LIMIT: Duration = Duration::from_secs(10);
const REAP_LIMIT_CANCELLED: Duration = Duration::from_secs(1);

/// One job's work.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    pub block: u64,
    /// Bytes of the file the offsets fall in.
    pub size: u64,
    pub depth: u32,
    pub read_percent: u32,
}

/// When a job stops issuing requests.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    Time(Duration),
    Ops(u64),
}

/// How requests are kept in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    IoUring,
    Threads,
}

impl Engine {
    /// io_uring where a ring of `depth` entries can be set up, else threads.
    pub fn detect(depth: u32) -> Engine {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        if io_uring::IoUring::new(depth.next_power_of_two()).is_ok() {
            return Engine::IoUring;
        }
        let _ = depth;
        Engine::Threads
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::Threads => "threads",
        }
    }
}

/// What one pass of the jobs did.
#[derive(Debug, Clone, Default)]
pub struct PassStats {
    pub reads: u64,
    pub writes: u64,
    pub read_lat_ns: Vec<f64>,
    pub write_lat_ns: Vec<f64>,
    /// First submission to last completion over all jobs.
    pub elapsed: Duration,
}

impl PassStats {
    fn merge(&mut self, o: PassStats) {
        self.reads += o.reads;
        self.writes += o.writes;
        let room = MAX_LATENCIES.saturating_sub(self.read_lat_ns.len());
        self.read_lat_ns
            .extend(o.read_lat_ns.into_iter().take(room));
        let room = MAX_LATENCIES.saturating_sub(self.write_lat_ns.len());
        self.write_lat_ns
            .extend(o.write_lat_ns.into_iter().take(room));
        self.elapsed = self.elapsed.max(o.elapsed);
    }

    fn record(&mut self, read: bool, lat: Duration) {
        let ns = lat.as_nanos() as f64;
        if read {
            self.reads += 1;
            if self.read_lat_ns.len() < MAX_LATENCIES {
                self.read_lat_ns.push(ns);
            }
        } else {
            self.writes += 1;
            if self.write_lat_ns.len() < MAX_LATENCIES {
                self.write_lat_ns.push(ns);
            }
        }
    }
}

/// xorshift64*: offsets and the read/write draw, cheap and seedable.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((u128::from(x) * u128::from(n.max(1))) >> 64) as u64
    }
}

/// The next request: its offset and whether it reads.
fn draw(rng: &mut Rng, job: &Job) -> (u64, bool) {
    let blocks = (job.size / job.block).max(1);
    let off = rng.below(blocks) * job.block;
    let read = rng.below(100) < u64::from(job.read_percent);
    (off, read)
}

/// Make a write's buffer unlike any before, as fio does by default
/// (`scramble_buffers`): the file offset and a running count into every
/// 512-byte block, so storage that deduplicates or compresses cannot
/// store a write of the same buffer again for free.
fn scramble(buf: &mut [u8], off: u64, count: u64) {
    for (i, block) in buf.chunks_exact_mut(512).enumerate() {
        block[..8].copy_from_slice(&(off + i as u64 * 512).to_le_bytes());
        block[8..16].copy_from_slice(&count.to_le_bytes());
    }
}

fn other(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::other(msg.into())
}

/// Every job's statistics in one (the first error, if any job failed);
/// a job that panicked is an error saying `panicked`.
fn join_merged(
    handles: Vec<std::thread::ScopedJoinHandle<'_, std::io::Result<PassStats>>>,
    panicked: &str,
) -> std::io::Result<PassStats> {
    // Every thread joined before the first error returns: the scope would
    // re-raise the panic of one left unjoined.
    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| Err(other(panicked))))
        .collect();
    let mut all = PassStats::default();
    for r in results {
        all.merge(r?);
    }
    Ok(all)
}

/// Run `jobs` jobs on `file` (opened O_DIRECT) until `stop` (`Ops`: in
/// all, split between the jobs).
pub fn run_jobs(
    file: &File,
    job: Job,
    jobs: u32,
    stop: Stop,
    pattern: &Pattern,
    engine: Engine,
    cancel: &CancelToken,
) -> std::io::Result<PassStats> {
    let jobs = jobs.max(1);
    let per_job = match stop {
        Stop::Ops(n) => Stop::Ops(n.div_ceil(u64::from(jobs)).max(1)),
        s => s,
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                let seed = 0x5eed_0000 + u64::from(j) * 7919 + rand_seed();
                s.spawn(move || match engine {
                    Engine::IoUring => uring_job(file, &job, per_job, pattern, seed, cancel),
                    Engine::Threads => threaded_job(file, &job, per_job, pattern, seed, cancel),
                })
            })
            .collect();
        join_merged(handles, "an I/O job panicked")
    })
}

/// A seed that differs from pass to pass (so passes do not replay the
/// same offsets into a cache) without a clock in the results.
fn rand_seed() -> u64 {
    static N: AtomicU64 = AtomicU64::new(1);
    N.fetch_add(0x1000_0001, Ordering::Relaxed)
}

/// Where io_uring is not built (32-bit targets), `Engine::detect` never
/// picks it.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn uring_job(
    _file: &File,
    _job: &Job,
    _stop: Stop,
    _pattern: &Pattern,
    _seed: u64,
    _cancel: &CancelToken,
) -> std::io::Result<PassStats> {
    Err(other("io_uring is not built for this architecture"))
}

/// One job through io_uring: `depth` requests in flight.
///
/// Every wait for completions is bounded (`WAIT_SLICE`), so the job
/// notices cancellation while the kernel holds its requests, and one that
/// sees no completion for `STALL_LIMIT` fails; every completion is
/// counted, and the first failed one ends the job with its errno.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn uring_job(
    file: &File,
    job: &Job,
    stop: Stop,
    pattern: &Pattern,
    seed: u64,
    cancel: &CancelToken,
) -> std::io::Result<PassStats> {
    use io_uring::{opcode, types, IoUring};
    let depth = job.depth.max(1) as usize;
    let len = usize::try_from(job.block).map_err(|_| other("block too large"))?;
    let len32 = u32::try_from(len).map_err(|_| other("block too large"))?;
    let mut ring = IoUring::new(job.depth.max(1).next_power_of_two())?;
    // One allocation for all slots, in ordinary pages (see the module
    // doc), each slot on a 4 KiB boundary and filled with test data.
    let stride = len.next_multiple_of(io::ALIGN);
    let mut bufs = AlignedBuf::ordinary_pages(stride * depth)
        .ok_or_else(|| other("cannot allocate the I/O buffers"))?;
    for slot in 0..depth {
        let at = (slot * stride) as u64;
        bufs[slot * stride..slot * stride + len].copy_from_slice(pattern.at(at, len));
    }
    let base = bufs.as_mut_ptr();
    let fd = types::Fd(file.as_raw_fd());
    let mut rng = Rng::new(seed);
    let mut out = PassStats::default();
    let t0 = Instant::now();
    let mut sent = vec![t0; depth];
    let mut reading = vec![false; depth];
    let mut offsets = vec![0u64; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut issued = 0u64;
    let mut in_flight = 0usize;
    let mut last_completion = t0;
    let mut done: Vec<(u64, i32)> = Vec::with_capacity(depth);
    loop {
        let more = |issued: u64| match stop {
            Stop::Time(d) => t0.elapsed() < d,
            Stop::Ops(n) => issued < n,
        };
        while !free.is_empty() && more(issued) {
            let Some(slot) = free.pop() else { break };
            let (off, read) = draw(&mut rng, job);
            // SAFETY: slot < depth, so the slot lies inside `bufs`.
            let buf = unsafe { base.add(slot * stride) };
            if !read {
                // SAFETY: the slot is free (no request in flight uses it),
                // and lies inside `bufs`, `len` bytes from `buf`.
                scramble(
                    unsafe { std::slice::from_raw_parts_mut(buf, len) },
                    off,
                    issued,
                );
            }
            let entry = if read {
                opcode::Read::new(fd, buf, len32).offset(off).build()
            } else {
                opcode::Write::new(fd, buf, len32).offset(off).build()
            }
            .user_data(slot as u64);
            // SAFETY: a request's buffer is its slot of `bufs`, which is not
            // handed out again until its completion is reaped below. Every
            // request is reaped before this function returns, or else
            // `bufs` is leaked (see `fail`).
            unsafe { ring.submission().push(&entry) }
                .map_err(|_| other("io_uring submission queue full"))?;
            sent[slot] = Instant::now();
            reading[slot] = read;
            offsets[slot] = off;
            issued += 1;
            in_flight += 1;
        }
        if in_flight == 0 {
            break;
        }
        if let Err(e) = submit_and_wait_a_while(&ring) {
            return Err(fail(&mut ring, in_flight, bufs, e, cancel));
        }
        done.clear();
        done.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        // All reaped, whatever they say: `fail` must not wait for them.
        in_flight -= done.len();
        if !done.is_empty() {
            last_completion = Instant::now();
        }
        for &(slot, res) in &done {
            let slot = slot as usize;
            let request = || {
                let what = if reading[slot] { "read" } else { "write" };
                format!("an io_uring {what} of {len} B at offset {}", offsets[slot])
            };
            if res < 0 {
                let errno = std::io::Error::from_raw_os_error(-res);
                let e = std::io::Error::new(errno.kind(), format!("{} failed: {errno}", request()));
                return Err(fail(&mut ring, in_flight, bufs, e, cancel));
            }
            if res as usize != len {
                let e = other(format!("{} did {res} bytes", request()));
                return Err(fail(&mut ring, in_flight, bufs, e, cancel));
            }
            out.record(reading[slot], sent[slot].elapsed());
            free.push(slot);
        }
        if cancel.is_cancelled() {
            let e = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
            return Err(fail(&mut ring, in_flight, bufs, e, cancel));
        }
        if in_flight > 0 && last_completion.elapsed() > STALL_LIMIT {
            let e = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "none of {in_flight} io_uring requests in flight completed in {} s",
                    STALL_LIMIT.as_secs()
                ),
            );
            return Err(fail(&mut ring, in_flight, bufs, e, cancel));
        }
    }
    out.elapsed = t0.elapsed();
    Ok(out)
}

/// Submit what is queued and wait for a completion, at most `WAIT_SLICE`:
/// `Ok` also when the time ran out or a signal came (the caller reaps what
/// is there and looks at the clock and the cancel token).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn submit_and_wait_a_while(ring: &io_uring::IoUring) -> std::io::Result<()> {
    wait_a_while(ring, ring.params().is_feature_ext_arg())
}

/// `submit_and_wait_a_while`, `ext_arg` where the kernel takes a timeout
/// in io_uring_enter (5.11, `IORING_FEAT_EXT_ARG`): then it is the same one
/// call as an unbounded wait, with a timeout. Older kernels submit, then
/// poll the ring's file: one call more per wait.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn wait_a_while(ring: &io_uring::IoUring, ext_arg: bool) -> std::io::Result<()> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let r = if ext_arg {
        let ts = io_uring::types::Timespec::from(WAIT_SLICE);
        let args = io_uring::types::SubmitArgs::new().timespec(&ts);
        ring.submitter().submit_with_args(1, &args).map(drop)
    } else {
        ring.submit().map(drop).and_then(|()| {
            let mut fds = [PollFd::new(ring, PollFlags::IN)];
            let ts = Timespec::try_from(WAIT_SLICE).unwrap_or(Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            });
            poll(&mut fds, Some(&ts))
                .map(drop)
                .map_err(std::io::Error::from)
        })
    };
    match r {
        Err(e) if !matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => Err(e),
        _ => Ok(()),
    }
}

/// After an error: reap what is still in flight, so no request outlives
/// its buffer, for at most `REAP_LIMIT` (`REAP_LIMIT_CANCELLED` once the
/// run is cancelled); if the ring will not give them all back by then,
/// leak the buffers rather than free them under the kernel's feet.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn fail(
    ring: &mut io_uring::IoUring,
    mut in_flight: usize,
    bufs: AlignedBuf,
    e: std::io::Error,
    cancel: &CancelToken,
) -> std::io::Error {
    let start = Instant::now();
    while in_flight > 0 {
        let limit = if cancel.is_cancelled() {
            REAP_LIMIT_CANCELLED
        } else {
            REAP_LIMIT
        };
        if start.elapsed() >= limit {
            break;
        }
        if submit_and_wait_a_while(ring).is_err() {
            std::thread::sleep(Duration::from_millis(10));
        }
        in_flight = in_flight.saturating_sub(ring.completion().count());
    }
    if in_flight > 0 {
        std::mem::forget(bufs);
    }
    e
}

/// What a job's I/O threads share.
#[derive(Default)]
struct Threads {
    /// Requests issued so far (`Stop::Ops`).
    issued: AtomicU64,
    /// When the newest request completed, in nanoseconds since the pass
    /// began: a job that sees none complete for `STALL_LIMIT` fails.
    last_done_ns: AtomicU64,
    /// Set when the job ends: a thread stops after its request.
    quit: AtomicBool,
}

/// Sets `quit` when dropped: whichever way the job ends, its threads
/// issue nothing more.
struct QuitOnDrop(Arc<Threads>);

impl Drop for QuitOnDrop {
    fn drop(&mut self) {
        self.0.quit.store(true, Ordering::Relaxed);
    }
}

/// One job as `depth` threads, each with one synchronous request in flight.
///
/// A synchronous `pread`/`pwrite` takes no deadline, and one the device
/// never completes (a hung disk, a suspended device-mapper target) holds
/// its thread in the kernel, where no signal reaches it. So the threads
/// are not scoped to the job: each owns what it uses (a duplicate of the
/// file's descriptor, its buffer), and the job waits for their answers a
/// slice at a time. When no request has completed for `STALL_LIMIT` (as
/// the io_uring job), or `REAP_LIMIT_CANCELLED` after a cancel, the job
/// fails and leaves the waiting threads to the kernel: each stops once its
/// request returns, if it ever does, and frees what it owns. The run goes
/// on (the case fails); only the process's own exit still waits for them,
/// in the kernel.
fn threaded_job(
    file: &File,
    job: &Job,
    stop: Stop,
    pattern: &Pattern,
    seed: u64,
    cancel: &CancelToken,
) -> std::io::Result<PassStats> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let len = usize::try_from(job.block).map_err(|_| other("block too large"))?;
    let depth = job.depth.max(1);
    let shared = Arc::new(Threads::default());
    let _quit = QuitOnDrop(Arc::clone(&shared));
    let (tx, rx) = channel();
    let t0 = Instant::now();
    for i in 0..depth {
        let mut buf =
            AlignedBuf::ordinary_pages(len).ok_or_else(|| other("cannot allocate a buffer"))?;
        buf.copy_from_slice(pattern.at(u64::from(i) * len as u64, len));
        let file = file.try_clone()?;
        let rng = Rng::new(seed ^ (u64::from(i) << 32));
        let (tx, shared, cancel, job) = (tx.clone(), Arc::clone(&shared), cancel.clone(), *job);
        std::thread::Builder::new()
            .name("sysgauge-io".into())
            .spawn(move || {
                let r = io_thread(&file, &job, stop, buf, rng, t0, &shared, &cancel);
                let _ = tx.send(r);
            })?;
    }
    drop(tx);
    let mut all = PassStats::default();
    let mut first_error = None;
    let mut running = depth;
    let mut cancelled_at: Option<Instant> = None;
    while running > 0 {
        match rx.recv_timeout(WAIT_SLICE) {
            Ok(r) => {
                running -= 1;
                match r {
                    Ok(stats) => all.merge(stats),
                    Err(e) => {
                        shared.quit.store(true, Ordering::Relaxed);
                        first_error.get_or_insert(e);
                    }
                }
            }
            // Every thread gone, some without an answer: they panicked.
            Err(RecvTimeoutError::Disconnected) => return Err(other("an I/O thread panicked")),
            Err(RecvTimeoutError::Timeout) => {
                if cancel.is_cancelled()
                    && cancelled_at.get_or_insert_with(Instant::now).elapsed()
                        >= REAP_LIMIT_CANCELLED
                {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "interrupted",
                    ));
                }
                let last = Duration::from_nanos(shared.last_done_ns.load(Ordering::Relaxed));
                if t0.elapsed().saturating_sub(last) > STALL_LIMIT {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "none of {running} synchronous requests in flight completed in {} s \
                             (the device stopped answering; the threads waiting for it are left \
                             to the kernel)",
                            STALL_LIMIT.as_secs()
                        ),
                    ));
                }
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    all.elapsed = t0.elapsed();
    Ok(all)
}

/// One thread of `threaded_job`: synchronous requests, one at a time,
/// until the job's stop, a cancel or the job's end.
#[allow(clippy::too_many_arguments)]
fn io_thread(
    file: &File,
    job: &Job,
    stop: Stop,
    mut buf: AlignedBuf,
    mut rng: Rng,
    t0: Instant,
    shared: &Threads,
    cancel: &CancelToken,
) -> std::io::Result<PassStats> {
    let mut out = PassStats::default();
    loop {
        let go = match stop {
            Stop::Time(d) => t0.elapsed() < d,
            Stop::Ops(n) => shared.issued.fetch_add(1, Ordering::Relaxed) < n,
        };
        if !go || cancel.is_cancelled() || shared.quit.load(Ordering::Relaxed) {
            break;
        }
        let (off, read) = draw(&mut rng, job);
        let t = Instant::now();
        if read {
            file.read_exact_at(&mut buf, off)?;
        } else {
            scramble(&mut buf, off, out.writes);
            file.write_all_at(&buf, off)?;
        }
        out.record(read, t.elapsed());
        let done = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        shared.last_done_ns.fetch_max(done, Ordering::Relaxed);
    }
    Ok(out)
}

/// `disk.randrw` at `block`, with the case's queue depth, jobs and mix.
pub fn randrw(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    block: u64,
    depth: u64,
    jobs: u64,
    read_percent: u64,
) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::RandRw.id();
    // Always direct, as YABS's job: said of a skipped case too, so it has
    // the params of the case it stands for.
    ctx.note_param("direct", true);
    // Every request in flight has its own buffer: 128 MiB at 1 MiB x 64 x
    // 2 jobs. Refuse rather than push a small machine into swap.
    let in_flight = block
        .saturating_mul(depth.max(1))
        .saturating_mul(jobs.max(1));
    if let Some(avail) = sysgauge_host::available_memory_bytes() {
        if in_flight.saturating_mul(2) > avail {
            return Err(BenchError::skip(
                format!(
                    "the {} requests in flight need {} of buffers and only {} of memory is available",
                    depth.max(1) * jobs.max(1),
                    Bytes(in_flight),
                    Bytes(avail)
                ),
                "free memory, or run the smaller block sizes (--block-size)",
            ));
        }
    }
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    let size = g.size;
    if block > size {
        return Err(BenchError::skip(
            format!("the test file ({size} B) is smaller than one block"),
            "pass a larger --size",
        ));
    }
    let path = g.written_data_file(ctx)?.path.clone();
    // Direct only, as YABS's job: skipped, as the other direct cases are,
    // where the kernel refuses direct I/O at this size or on this file
    // system (a misaligned request would fail, or never be measured).
    let file = open_direct(
        &path,
        block,
        &g,
        Probe::Read,
        "this job is direct only (fio's direct=1 fails here too): pass a --block-size that is a \
         multiple of the device's logical block size and --path on a file system that takes \
         O_DIRECT",
    )?;
    if let Some(d) = g.data.as_mut() {
        // Writes send their buffers as they are, not the pattern.
        d.intact = false;
    }
    let depth32 = u32::try_from(depth.clamp(1, 4096)).unwrap_or(64);
    let jobs32 = u32::try_from(jobs.clamp(1, 64)).unwrap_or(2);
    let engine = Engine::detect(depth32);
    ctx.note_detail("engine", engine.name());
    traps::settle_writeback(ctx, id);
    let job = Job {
        block,
        size,
        depth: depth32,
        read_percent: u32::try_from(read_percent.min(100)).unwrap_or(50),
    };
    let target = o.repetition_target(ctx);
    let cancel = ctx.cancel_token().clone();
    let pattern: &Pattern = &g.pattern;
    let mut passes: Vec<PassStats> = Vec::new();
    let samples = run_passes(ctx, target, u64::MAX / 4, |_ctx, limit| {
        let stop = match limit {
            Limit::Calibrate { target, .. } => Stop::Time(target),
            Limit::Ops(n) => Stop::Ops(n),
        };
        let r = run_jobs(&file, job, jobs32, stop, pattern, engine, &cancel).map_err(|e| {
            if cancel.is_cancelled() {
                BenchError::Cancelled
            } else {
                BenchError::failed(io::describe_io_error("cannot do I/O on", &path, &e))
            }
        })?;
        let ops = r.reads + r.writes;
        let pass = PassResult {
            ops,
            work: ops as f64 * block as f64,
            elapsed: r.elapsed,
            latencies_ns: Vec::new(),
        };
        passes.push(r);
        Ok(pass)
    })?;
    // run_passes times the last `repetitions` passes.
    let timed = &passes[passes.len().saturating_sub(ctx.repetitions() as usize)..];
    let mut metrics = samples.metrics("throughput", Unit::MBps, 1e-6)?;
    metrics.extend(direction_metrics(timed, block)?);
    Ok(metrics)
}

/// One direction's count and latencies in a pass.
fn side(p: &PassStats, read: bool) -> (u64, &[f64]) {
    if read {
        (p.reads, &p.read_lat_ns)
    } else {
        (p.writes, &p.write_lat_ns)
    }
}

/// Per-direction metrics over the timed passes, one sample per pass.
fn direction_metrics(timed: &[PassStats], block: u64) -> Result<Vec<Metric>, BenchError> {
    let secs = |p: &PassStats| p.elapsed.as_secs_f64().max(1e-9);
    let mut out = vec![metric(
        "iops",
        Unit::OpsPerSec,
        Better::Higher,
        timed
            .iter()
            .map(|p| (p.reads + p.writes) as f64 / secs(p))
            .collect(),
    )?];
    for (dir, read) in [("read", true), ("write", false)] {
        if timed.iter().all(|p| side(p, read).0 == 0) {
            continue;
        }
        let rate = |scale: f64| -> Vec<f64> {
            timed
                .iter()
                .map(|p| side(p, read).0 as f64 * scale / secs(p))
                .collect()
        };
        out.push(metric(
            &format!("{dir}_throughput"),
            Unit::MBps,
            Better::Higher,
            rate(block as f64 / 1e6),
        )?);
        out.push(metric(
            &format!("{dir}_iops"),
            Unit::OpsPerSec,
            Better::Higher,
            rate(1.0),
        )?);
        if timed.iter().any(|p| side(p, read).1.is_empty()) {
            continue;
        }
        let lat = |f: fn(&[f64]) -> f64| -> Vec<f64> {
            timed.iter().map(|p| f(side(p, read).1) / 1e3).collect()
        };
        let p99: fn(&[f64]) -> f64 = |l| percentile(l, 99.0);
        let max: fn(&[f64]) -> f64 = |l| l.iter().copied().fold(0.0, f64::max);
        for (name, f) in [
            ("latency_median", median as fn(&[f64]) -> f64),
            ("latency_p99", p99),
            ("latency_max", max),
        ] {
            out.push(metric(
                &format!("{dir}_{name}"),
                Unit::Microseconds,
                Better::Lower,
                lat(f),
            )?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    /// A token cancelled 0.3 s from now, and the thread that does it (its
    /// result: the moment it did).
    fn cancel_soon() -> (CancelToken, std::thread::JoinHandle<Instant>) {
        let cancel = CancelToken::new();
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                cancel.cancel();
                Instant::now()
            })
        };
        (cancel, canceller)
    }

    fn direct_file(dir: &std::path::Path, size: u64, pattern: &Pattern) -> Option<File> {
        let path = dir.join("qd");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .ok()?;
        let mut off = 0;
        while off < size {
            f.write_all_at(pattern.at(off, 1 << 20), off).ok()?;
            off += 1 << 20;
        }
        Some(f)
    }

    /// Both engines keep the mix and count every request.
    #[test]
    fn both_engines_mix_and_count() {
        let dir = tempfile::tempdir().unwrap();
        let pattern = Pattern::new(1 << 20).unwrap_or_else(|| panic!("alloc"));
        let Some(file) = direct_file(dir.path(), 8 << 20, &pattern) else {
            eprintln!("no O_DIRECT in the temp dir; skipped");
            return;
        };
        let job = Job {
            block: 4096,
            size: 8 << 20,
            depth: 8,
            read_percent: 50,
        };
        let cancel = CancelToken::new();
        for engine in [Engine::detect(8), Engine::Threads] {
            let r = run_jobs(&file, job, 2, Stop::Ops(4000), &pattern, engine, &cancel)
                .unwrap_or_else(|e| panic!("{engine:?}: {e}"));
            let n = r.reads + r.writes;
            assert!((4000..4000 + 2 * 8 + 2).contains(&n), "{engine:?}: {n}");
            let share = r.reads as f64 / n as f64;
            assert!((0.4..0.6).contains(&share), "{engine:?}: {share}");
            assert_eq!(r.read_lat_ns.len() as u64, r.reads);
            assert!(r.elapsed > Duration::ZERO);
        }
    }

    /// Whether io_uring can run here (after the skip-or-fail rule).
    fn io_uring_here() -> bool {
        sysgauge_testkit::require(
            "io_uring",
            Engine::detect(8) == Engine::IoUring,
            "a kernel with io_uring enabled (kernel.io_uring_disabled=0)",
        )
    }

    /// `run_jobs` through io_uring on another thread, its answer awaited
    /// at most `limit` (a job that hangs fails the test instead of hanging
    /// it).
    fn jobs_within(
        file: File,
        job: Job,
        stop: Stop,
        cancel: &CancelToken,
        limit: Duration,
    ) -> std::io::Result<PassStats> {
        engine_within(Engine::IoUring, file, job, stop, cancel, limit)
    }

    /// `jobs_within` with `engine`.
    fn engine_within(
        engine: Engine,
        file: File,
        job: Job,
        stop: Stop,
        cancel: &CancelToken,
        limit: Duration,
    ) -> std::io::Result<PassStats> {
        let (tx, rx) = std::sync::mpsc::channel();
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            let pattern = Pattern::new(1 << 20).unwrap_or_else(|| panic!("alloc"));
            let r = run_jobs(&file, job, 2, stop, &pattern, engine, &cancel);
            let _ = tx.send(r);
        });
        rx.recv_timeout(limit)
            .unwrap_or_else(|_| panic!("the {engine:?} jobs did not return within {limit:?}"))
    }

    /// Every request fails (writes to a file opened read-only: EBADF): the
    /// job ends with an error naming the errno and the request, after
    /// reaping a whole batch of failed completions.
    #[test]
    fn failed_completions_end_the_job_with_the_errno() {
        if !io_uring_here() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro");
        std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        let job = Job {
            block: 4096,
            size: 1 << 20,
            depth: 8,
            read_percent: 0,
        };
        let e = jobs_within(
            file,
            job,
            Stop::Ops(1000),
            &CancelToken::new(),
            Duration::from_secs(20),
        )
        .map(|r| r.writes)
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("io_uring write of 4096 B at offset"), "{msg}");
        assert!(msg.contains("os error 9"), "{msg}");
    }

    /// A request the kernel never completes (a read of an empty pipe):
    /// cancelling ends the job within about a second of the cancel.
    #[test]
    fn waiting_for_completions_notices_cancellation() {
        if !io_uring_here() {
            return;
        }
        let (read_end, write_end) = std::io::pipe().unwrap();
        // One block: every read at offset 0, as a pipe takes.
        let job = Job {
            block: 4096,
            size: 4096,
            depth: 4,
            read_percent: 100,
        };
        let (cancel, canceller) = cancel_soon();
        let r = jobs_within(
            File::from(std::os::fd::OwnedFd::from(read_end)),
            job,
            Stop::Ops(8),
            &cancel,
            Duration::from_secs(20),
        );
        let returned = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        let e = r.map(|p| p.reads).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "{e}");
        assert!(returned > cancelled_at, "returned before the cancel: {e}");
        let after = returned.saturating_duration_since(cancelled_at);
        assert!(after < Duration::from_secs(3), "{after:?} after the cancel");
        drop(write_end);
    }

    /// Both ways of waiting (a timeout in io_uring_enter, polling the ring
    /// on kernels before 5.11) return after about `WAIT_SLICE` while the
    /// kernel holds a request, and with its completion once it is done.
    #[test]
    fn waits_are_bounded_and_see_completions() {
        use io_uring::{opcode, types, IoUring};
        if !io_uring_here() {
            return;
        }
        let mut ring = IoUring::new(4).unwrap();
        let mut ways = vec![false];
        if ring.params().is_feature_ext_arg() {
            ways.push(true);
        }
        for ext_arg in ways {
            let (read_end, mut write_end) = std::io::pipe().unwrap();
            let mut byte = [0u8; 1];
            let entry = opcode::Read::new(types::Fd(read_end.as_raw_fd()), byte.as_mut_ptr(), 1)
                .offset(u64::MAX)
                .build()
                .user_data(7);
            // SAFETY: `byte` outlives the request, which is reaped below
            // before the loop's turn ends.
            unsafe { ring.submission().push(&entry) }.unwrap();
            let t = Instant::now();
            wait_a_while(&ring, ext_arg).unwrap();
            let waited = t.elapsed();
            assert!(ring.completion().next().is_none(), "ext_arg {ext_arg}");
            assert!(
                waited >= WAIT_SLICE / 2 && waited < Duration::from_secs(2),
                "ext_arg {ext_arg}: {waited:?}"
            );
            std::io::Write::write_all(&mut write_end, b"x").unwrap();
            let mut seen = None;
            for _ in 0..50 {
                wait_a_while(&ring, ext_arg).unwrap();
                seen = ring
                    .completion()
                    .next()
                    .map(|c| (c.user_data(), c.result()));
                if seen.is_some() {
                    break;
                }
            }
            assert_eq!(seen, Some((7, 1)), "ext_arg {ext_arg}");
            assert_eq!(byte, *b"x");
        }
    }

    /// An ext4 file system on a loop device over an image in a temp
    /// directory, mounted there; on drop thawed (so that requests it holds
    /// complete and the threads waiting for them end and close their
    /// descriptors), unmounted and detached.
    struct Ext4Loop {
        dir: tempfile::TempDir,
        dev: String,
    }

    impl Ext4Loop {
        fn make() -> Ext4Loop {
            use sysgauge_testkit::{output_of_success, run_checked};
            let dir = tempfile::tempdir().unwrap();
            let img = dir.path().join("ext4.img");
            File::create(&img).unwrap().set_len(32 << 20).unwrap();
            let img = img.to_string_lossy().into_owned();
            run_checked(&["mkfs.ext4", "-q", "-F", &img]);
            let out = output_of_success(
                std::process::Command::new("losetup").args(["--find", "--show", &img]),
            );
            let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let fs = Ext4Loop { dir, dev };
            std::fs::create_dir(fs.mount_point()).unwrap();
            let mnt = fs.mount_point().to_string_lossy().into_owned();
            run_checked(&["mount", &fs.dev, &mnt]);
            fs
        }

        fn mount_point(&self) -> std::path::PathBuf {
            self.dir.path().join("mnt")
        }
    }

    impl Drop for Ext4Loop {
        fn drop(&mut self) {
            let run = |args: &[&str]| {
                std::process::Command::new(args[0])
                    .args(&args[1..])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            let mnt = self.mount_point().to_string_lossy().into_owned();
            run(&["fsfreeze", "-u", &mnt]);
            // The threads left behind end once their writes do.
            for _ in 0..50 {
                if run(&["umount", &mnt]) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            run(&["losetup", "-d", &self.dev]);
        }
    }

    /// A device that stops answering (a frozen file system: every write
    /// waits in the kernel, where no signal reaches it, until it thaws):
    /// the threads engine's synchronous requests cannot be given a
    /// deadline, yet the job fails once none has completed for
    /// `STALL_LIMIT`, naming the stall, instead of waiting with them; a
    /// cancel ends it within about a second.
    #[test]
    fn threads_on_a_stuck_device_fail_after_the_stall_limit() {
        use sysgauge_testkit::{is_root, on_path};
        let tools = ["losetup", "mkfs.ext4", "mount", "fsfreeze"];
        if !sysgauge_testkit::require(
            "root, a loop device and util-linux (an ext4 file system to freeze)",
            is_root()
                && tools.iter().all(|t| on_path(t))
                && std::path::Path::new("/dev/loop-control").exists(),
            "run the tests as root with util-linux and e2fsprogs",
        ) {
            return;
        }
        let fs = Ext4Loop::make();
        let pattern = Pattern::new(1 << 20).unwrap_or_else(|| panic!("alloc"));
        let Some(file) = direct_file(&fs.mount_point(), 8 << 20, &pattern) else {
            panic!("no O_DIRECT on ext4");
        };
        let again = file.try_clone().unwrap();
        let mnt = fs.mount_point().to_string_lossy().into_owned();
        sysgauge_testkit::run_checked(&["fsfreeze", "-f", &mnt]);
        let job = Job {
            block: 4096,
            size: 8 << 20,
            depth: 4,
            read_percent: 0,
        };
        let t = Instant::now();
        let r = engine_within(
            Engine::Threads,
            file,
            job,
            Stop::Ops(1000),
            &CancelToken::new(),
            STALL_LIMIT + Duration::from_secs(20),
        );
        let took = t.elapsed();
        let e = r.map(|p| p.writes).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("completed in"), "{e}");
        assert!(took >= STALL_LIMIT, "{took:?}: {e}");
        let (cancel, canceller) = cancel_soon();
        let r = engine_within(
            Engine::Threads,
            again,
            job,
            Stop::Ops(1000),
            &cancel,
            Duration::from_secs(20),
        );
        let after = canceller.join().unwrap().elapsed();
        let e = r.map(|p| p.writes).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "{e}");
        assert!(after < Duration::from_secs(3), "{after:?} after the cancel");
        drop(fs);
    }

    #[test]
    fn offsets_are_aligned_and_within_the_file() {
        let mut rng = Rng::new(7);
        let job = Job {
            block: 65536,
            size: 10 << 20,
            depth: 1,
            read_percent: 0,
        };
        for _ in 0..10_000 {
            let (off, read) = draw(&mut rng, &job);
            assert!(!read);
            assert_eq!(off % 65536, 0);
            assert!(off + 65536 <= 10 << 20);
        }
    }
}
