//! `disk.random-seek`: several workers read random blocks of the data file
//! at the same time, and write a share of them back changed (Bonnie++'s
//! seek test: 10 % written back). The headline is seeks (operations) per
//! second over all workers; the latency is per operation.
//!
//! Workers are threads sharing one file descriptor: pread/pwrite carry
//! their own offsets, so no lock is needed. The worker count is fixed (not
//! one per CPU) so machines with different core counts run the same test.
//! The file is written in full before the first seek, so no read lands on
//! an unwritten extent the file system would answer with zeros.

use super::io::{self, AlignedBuf};
use super::passes::{run_passes, Limit, OpTimer, PassResult};
use super::seq::{begin, block_len, io_err, open_noted, Probe};
use super::target::lock;
use super::traps;
use super::{DiskOptions, Kind};
use std::os::unix::fs::FileExt;
use std::sync::{Barrier, Mutex};
use std::time::Duration;
use sysgauge_core::{BenchError, Metric, RunCtx, Unit};
use sysgauge_stats::SplitMix64;

pub fn random_seek(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    block: u64,
    workers: u64,
    write_percent: u64,
) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::RandomSeek.id();
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    let path = {
        let d = g.written_data_file(ctx)?;
        if write_percent > 0 {
            d.intact = false;
        }
        d.path.clone()
    };
    let size = g.size;
    let (file, direct) = open_noted(ctx, &g, &path, block, Probe::Read, write_percent > 0, None)?;
    drop(g);
    traps::settle_writeback(ctx, id);
    let len = block_len(block)?;
    let workers_n = usize::try_from(workers).unwrap_or(1).max(1);
    let mut buffers = (0..workers_n)
        .map(|_| AlignedBuf::new(len))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| BenchError::failed("cannot allocate I/O buffers"))?;
    let blocks = (size / block).max(1);
    let target = o.repetition_target(ctx);
    let mut pass_no = 0u64;
    let samples = run_passes(ctx, target, blocks.saturating_mul(4), |ctx, limit| {
        if !direct {
            io::drop_cache(&file).map_err(io_err("cannot drop the cache of", &path))?;
        }
        pass_no += 1;
        let per_worker = match limit {
            Limit::Ops(n) => Limit::Ops(n.div_ceil(workers).max(1)),
            Limit::Calibrate { target, max_ops } => Limit::Calibrate {
                target,
                max_ops: max_ops.div_ceil(workers).max(1),
            },
        };
        let barrier = Barrier::new(workers_n);
        let results: Mutex<Vec<Result<(Duration, PassResult), BenchError>>> =
            Mutex::new(Vec::with_capacity(workers_n));
        let clock = ctx.clock().clone();
        let cancel = ctx.cancel_token().clone();
        std::thread::scope(|s| {
            for (w, buf) in buffers.iter_mut().enumerate() {
                let (barrier, results, file, path) = (&barrier, &results, &file, &path);
                let (clock, cancel) = (clock.clone(), cancel.clone());
                s.spawn(move || {
                    let mut rng = SplitMix64::new((pass_no << 16) ^ (w as u64) ^ 0x5eec);
                    let mut timer =
                        OpTimer::with_clock(clock, cancel, per_worker, per_worker.max_ops());
                    barrier.wait();
                    timer.start();
                    let started = timer.started_at();
                    let r = (|| {
                        while timer.more()? {
                            let off = (rng.next_u64() % blocks) * block;
                            let write = write_percent > 0 && rng.next_u64() % 100 < write_percent;
                            timer
                                .time(|| {
                                    file.read_exact_at(buf, off)?;
                                    if write {
                                        buf[0] ^= 0x5a;
                                        file.write_all_at(buf, off)?;
                                    }
                                    Ok::<(), std::io::Error>(())
                                })
                                .map_err(io_err("cannot seek in", path))?;
                        }
                        Ok::<(), BenchError>(())
                    })();
                    let out = r.map(|()| (started, timer.finish(1.0)));
                    if let Ok(mut v) = results.lock() {
                        v.push(out);
                    }
                });
            }
        });
        if write_percent > 0 {
            file.sync_data().map_err(io_err("cannot sync", &path))?;
        }
        let end = ctx.clock().now();
        let results = results
            .into_inner()
            .map_err(|_| BenchError::failed("a seek worker panicked"))?;
        let mut total = PassResult::default();
        let mut first_start: Option<Duration> = None;
        for r in results {
            let (started, p) = r?;
            first_start = Some(first_start.map_or(started, |f| f.min(started)));
            total.ops += p.ops;
            total.work += p.work;
            total.latencies_ns.extend(p.latencies_ns);
        }
        total.elapsed = end.saturating_sub(first_start.unwrap_or(end));
        Ok(total)
    })?;
    if !direct {
        let _ = io::drop_cache(&file);
    }
    ctx.note_detail("workers", workers);
    samples.metrics("seeks", Unit::OpsPerSec, 1.0)
}
