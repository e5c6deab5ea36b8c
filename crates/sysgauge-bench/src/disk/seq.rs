//! Sequential tests on the data file: block write, block read and rewrite
//! at a given block size, and per-character write and read through a
//! buffered stream (the putc/getc tests of Bonnie).
//!
//! Block tests open the file with O_DIRECT and probe one block first; if
//! the kernel refuses (the file system has no direct I/O, or the block size
//! is below its alignment) the case falls back to buffered I/O: every write
//! pass then ends with fdatasync inside the timed region, and every read
//! pass starts with the file's cache dropped (posix_fadvise DONTNEED)
//! outside it. Direct write passes end with fdatasync too, so a pass is
//! timed until its data is on stable storage (as `fio --end_fsync=1`).
//!
//! Writes overwrite the test file in place, after it has been written once
//! (untimed), rather than creating a new one for each pass: allocation,
//! unwritten-extent conversion and, on SSDs, discard of deleted files would
//! otherwise mix into the numbers from pass to pass.

use super::io::{self, AlignedBuf};
use super::passes::{run_passes, Limit, OpTimer, Samples};
use super::target::{self, lock, SharedTarget, Target};
use super::traps::{self, StatsWatch};
use super::{DiskOptions, IoMode, Kind};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use sysgauge_core::{BenchError, Metric, RunCtx, Unit};

/// Per-character tests time runs of this many characters: the stream's
/// buffer size, so every timed run includes exactly one write(2) or read(2)
/// the stream makes when its buffer fills or empties.
pub const CHAR_RUN: usize = 8192;

/// Start a file-system case: the shared target, its details, the
/// RAM-backed trap. Tests that use the test file note its size as a
/// parameter (`uses_file`); the file-operation tests do not.
pub fn begin(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    uses_file: bool,
) -> Result<SharedTarget, BenchError> {
    let t = target::shared(ctx, o)?;
    {
        let g = lock(&t)?;
        g.note_details(ctx);
        if uses_file {
            ctx.note_param("size", g.size);
        }
        if let Some(what) = g.ram_backed() {
            ctx.finding(traps::ram_backed_finding(&what));
        }
    }
    Ok(t)
}

/// What a probe does with the first block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Write,
    Read,
}

/// The data file opened for a block case: direct when the kernel accepts
/// a block of this size, else buffered with the reason.
pub fn open_block_file(
    path: &Path,
    block: u64,
    t: &Target,
    probe: Probe,
) -> Result<(File, Option<String>), BenchError> {
    let plain = || {
        io::open_rw(path, false)
            .map_err(|e| BenchError::failed(io::describe_io_error("cannot open", path, &e)))
    };
    if !block.is_multiple_of(512) {
        return Ok((
            plain()?,
            Some(format!(
                "block size {} is not a multiple of 512 B",
                target::label(block)
            )),
        ));
    }
    let f = match io::open_rw(path, true) {
        Ok(f) => f,
        Err(e) if io::is_direct_refusal(&e) => {
            return Ok((
                plain()?,
                Some("the file system does not support O_DIRECT".to_string()),
            ))
        }
        Err(e) => {
            return Err(BenchError::failed(io::describe_io_error(
                "cannot open",
                path,
                &e,
            )))
        }
    };
    let len = usize::try_from(block).map_err(|_| BenchError::failed("block too large"))?;
    let r = match probe {
        Probe::Write => f.write_all_at(t.pattern.at(0, len), 0),
        Probe::Read => {
            let mut b = AlignedBuf::new(len)
                .ok_or_else(|| BenchError::failed("cannot allocate an I/O buffer"))?;
            f.read_exact_at(&mut b, 0)
        }
    };
    match r {
        Ok(()) => Ok((f, None)),
        Err(e) if io::is_direct_refusal(&e) => Ok((
            plain()?,
            Some(format!(
                "block size {} is below the alignment direct I/O needs here",
                target::label(block)
            )),
        )),
        Err(e) => Err(BenchError::failed(io::describe_io_error(
            "cannot access",
            path,
            &e,
        ))),
    }
}

/// The data file opened direct for a case that runs direct only, or its
/// skip: "direct I/O is impossible here" with the reason
/// (`open_block_file`'s: the block size, the file system) and `hint`, what
/// measures the size instead.
pub fn open_direct(
    path: &Path,
    block: u64,
    t: &Target,
    probe: Probe,
    hint: &str,
) -> Result<File, BenchError> {
    match open_block_file(path, block, t, probe)? {
        (f, None) => Ok(f),
        (_, Some(why)) => Err(BenchError::skip(
            format!("direct I/O is impossible here: {why}"),
            hint,
        )),
    }
}

/// Report the I/O mode and the buffered-fallback traps.
fn note_mode(ctx: &mut RunCtx, t: &Target, fallback: &Option<String>) {
    ctx.note_param("direct", fallback.is_none());
    if let Some(why) = fallback {
        ctx.note_detail("io_mode", "buffered+fdatasync+fadvise");
        ctx.finding(traps::buffered_finding(why));
        if let Some(f) = traps::small_file_finding(t.size, t.mem_total) {
            ctx.finding(f);
        }
    } else {
        ctx.note_detail("io_mode", "direct");
    }
}

/// The block-size trap for a test that writes.
pub fn check_block_size(ctx: &mut RunCtx, t: &Target, block: u64) {
    if let Some(d) = &t.device {
        if let Some(f) =
            traps::block_size_finding(block, &d.name, d.logical_block_size, d.physical_block_size)
        {
            ctx.finding(f);
        }
    }
}

pub fn io_err<'a>(what: &str, path: &'a Path) -> impl Fn(std::io::Error) -> BenchError + 'a {
    let what = what.to_string();
    move |e| BenchError::failed(io::describe_io_error(&what, path, &e))
}

/// The data file opened for a block case (`open_block_file`) with its I/O
/// mode and fallback traps noted, and for a case that writes, the
/// block-size trap. Returns the file and whether it is opened direct.
///
/// With a chosen `mode` there is no fallback: buffered is buffered at every
/// size, and a size the kernel refuses direct is skipped in direct mode
/// rather than run another way, so a mode's rows compare like for like.
pub fn open_noted(
    ctx: &mut RunCtx,
    t: &Target,
    path: &Path,
    block: u64,
    probe: Probe,
    writes: bool,
    mode: Option<IoMode>,
) -> Result<(File, bool), BenchError> {
    let (file, direct) = match mode {
        Some(IoMode::Buffered) => {
            let f = io::open_rw(path, false)
                .map_err(|e| BenchError::failed(io::describe_io_error("cannot open", path, &e)))?;
            ctx.note_param("direct", false);
            ctx.note_detail("io_mode", "buffered+fdatasync+fadvise");
            (f, false)
        }
        Some(IoMode::Direct) => {
            let f = open_direct(
                path,
                block,
                t,
                probe,
                "the io=buffered case measures this size; a raw device (--device) shows \
                 direct writes below the block size as read-modify-write",
            )?;
            note_mode(ctx, t, &None);
            (f, true)
        }
        None => {
            let (f, fallback) = open_block_file(path, block, t, probe)?;
            note_mode(ctx, t, &fallback);
            let d = fallback.is_none();
            (f, d)
        }
    };
    if writes {
        check_block_size(ctx, t, block);
    }
    Ok((file, direct))
}

/// A block as a buffer length.
pub fn block_len(block: u64) -> Result<usize, BenchError> {
    usize::try_from(block).map_err(|_| BenchError::failed("block too large"))
}

/// Start a timed pass over a block file: a buffered file's cache is
/// dropped first, outside the timing, so the pass reaches the device.
fn start_pass(
    ctx: &RunCtx,
    limit: Limit,
    file: &File,
    direct: bool,
    path: &Path,
) -> Result<OpTimer, BenchError> {
    if !direct {
        io::drop_cache(file).map_err(io_err("cannot drop the cache of", path))?;
    }
    let mut timer = OpTimer::new(ctx, limit);
    timer.start();
    Ok(timer)
}

/// The block after `pos`, back to the start where a whole one would not
/// fit before `size`.
fn next_block(pos: u64, block: u64, size: u64) -> u64 {
    if pos + 2 * block > size {
        0
    } else {
        pos + block
    }
}

fn block_metrics(s: &Samples) -> Result<Vec<Metric>, BenchError> {
    s.metrics("throughput", Unit::MBps, 1e-6)
}

/// A block case's data file, opened and noted.
struct BlockFile {
    path: PathBuf,
    /// Whether the file held the pattern when the case started.
    intact: bool,
    size: u64,
    file: File,
    direct: bool,
    /// The block as a buffer length.
    len: usize,
}

/// The data file of a block case on the locked target: written in full
/// (untimed), marked as no longer holding the pattern if the case
/// `changes` it, opened for `probe` with its I/O mode and traps noted (the
/// block-size trap for a case that writes), and write-back settled.
fn block_case(
    ctx: &mut RunCtx,
    t: &mut Target,
    id: &str,
    block: u64,
    probe: Probe,
    changes: bool,
    mode: Option<IoMode>,
) -> Result<BlockFile, BenchError> {
    let (path, intact) = {
        let d = t.written_data_file(ctx)?;
        let intact = d.intact;
        if changes {
            d.intact = false;
        }
        (d.path.clone(), intact)
    };
    let writes = probe == Probe::Write || changes;
    let (file, direct) = open_noted(ctx, t, &path, block, probe, writes, mode)?;
    traps::settle_writeback(ctx, id);
    Ok(BlockFile {
        path,
        intact,
        size: t.size,
        file,
        direct,
        len: block_len(block)?,
    })
}

/// `disk.seq-write`.
pub fn seq_write(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    block: u64,
    mode: Option<IoMode>,
) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::SeqWrite.id();
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    // Written once before (untimed), so every pass overwrites allocated
    // blocks: the first writes into a fresh or preallocated file also
    // allocate or convert extents, which would skew the calibration pass.
    let f = block_case(ctx, &mut g, id, block, Probe::Write, false, mode)?;
    let target = o.repetition_target(ctx);
    let watch = StatsWatch::start(g.stats_name.as_deref());
    let t: &Target = &g;
    let mut pos = 0u64;
    let mut written = 0u64;
    let samples = run_passes(ctx, target, f.size / block, |ctx, limit| {
        let mut timer = start_pass(ctx, limit, &f.file, f.direct, &f.path)?;
        while timer.more()? {
            let buf = t.pattern.at(pos, f.len);
            timer
                .time(|| f.file.write_all_at(buf, pos))
                .map_err(io_err("cannot write", &f.path))?;
            written += block;
            pos = next_block(pos, block, f.size);
        }
        f.file.sync_data().map_err(io_err("cannot sync", &f.path))?;
        Ok(timer.finish(block as f64))
    })?;
    let delta = watch.finish();
    if !f.direct {
        let _ = io::drop_cache(&f.file);
    }
    let metrics = block_metrics(&samples)?;
    if f.direct {
        check_write_cache(ctx, id, &f, block, metrics[0].value())?;
    }
    drop(g);
    let mut g = lock(&shared)?;
    if let Some(d) = g.data.as_mut() {
        d.valid = d.valid.max(written.min(f.size) / block * block);
    }
    if let Some(delta) = delta {
        ctx.note_detail("device_reads", delta.reads_completed);
        ctx.note_detail("device_bytes_written", delta.bytes_written());
        if let Some(f) = traps::rmw_finding(id, &delta, written, false) {
            ctx.finding(f);
        }
        if f.direct {
            if let Some(f) = traps::shared_finding(id, &delta.name, delta.bytes_written(), written)
            {
                ctx.finding(f);
            }
        }
    }
    Ok(metrics)
}

/// How much of the file the write-cache check reads back, at most, and for
/// how long: enough blocks for a rate, little next to the timed passes.
const READ_BACK_BYTES: u64 = 256 << 20;
const READ_BACK_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// Read part of the just-written file back with O_DIRECT (untimed for the
/// case) and compare: writes far faster than these reads were absorbed by
/// a cache, so the case gets a finding and is marked as not a measure of
/// the device.
fn check_write_cache(
    ctx: &mut RunCtx,
    id: &str,
    f: &BlockFile,
    block: u64,
    write_mbps: f64,
) -> Result<(), BenchError> {
    let mut buf = AlignedBuf::new(f.len)
        .ok_or_else(|| BenchError::failed("cannot allocate an I/O buffer"))?;
    let blocks = (READ_BACK_BYTES.min(f.size) / block).max(1);
    let started = std::time::Instant::now();
    let mut read = 0u64;
    for i in 0..blocks {
        f.file
            .read_exact_at(&mut buf, i * block)
            .map_err(io_err("cannot read back", &f.path))?;
        read += block;
        if started.elapsed() >= READ_BACK_TIME {
            break;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    if secs <= 0.0 {
        return Ok(());
    }
    let read_mbps = read as f64 / secs / 1e6;
    ctx.note_detail("read_back_mbps", read_mbps.round() as i64);
    let virt = sysgauge_host::collect_live(None).cpu.virtualization;
    if let Some((finding, reason)) =
        traps::write_cache_finding(id, write_mbps, read_mbps, virt.as_deref())
    {
        ctx.finding(finding);
        ctx.mark_untrusted(reason);
    }
    Ok(())
}

/// `disk.seq-read`.
pub fn seq_read(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    block: u64,
    mode: Option<IoMode>,
) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::SeqRead.id();
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    let f = block_case(ctx, &mut g, id, block, Probe::Read, false, mode)?;
    let mut buf = AlignedBuf::new(f.len)
        .ok_or_else(|| BenchError::failed("cannot allocate an I/O buffer"))?;
    let target = o.repetition_target(ctx);
    let watch = StatsWatch::start(g.stats_name.as_deref());
    let t: &Target = &g;
    let mut pos = 0u64;
    let mut read = 0u64;
    let mut verify = f.intact;
    let samples = run_passes(ctx, target, f.size / block, |ctx, limit| {
        let mut timer = start_pass(ctx, limit, &f.file, f.direct, &f.path)?;
        while timer.more()? {
            timer
                .time(|| f.file.read_exact_at(&mut buf, pos))
                .map_err(io_err("cannot read", &f.path))?;
            if verify {
                // Once, between timed operations: the data read back is
                // what was written.
                if buf[..] != *t.pattern.at(pos, f.len) {
                    return Err(BenchError::failed(format!(
                        "data read back from {} at offset {pos} differs from what was written",
                        f.path.display()
                    )));
                }
                verify = false;
            }
            read += block;
            pos = next_block(pos, block, f.size);
        }
        Ok(timer.finish(block as f64))
    })?;
    if let Some(delta) = watch.finish() {
        ctx.note_detail("device_bytes_read", delta.bytes_read());
        if f.direct {
            if let Some(f) = traps::shared_finding(id, &delta.name, delta.bytes_read(), read) {
                ctx.finding(f);
            }
        }
    }
    ctx.note_detail("verified", f.intact);
    block_metrics(&samples)
}

/// `disk.rewrite`: read a block, change it, write it back in place.
pub fn rewrite(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    block: u64,
    mode: Option<IoMode>,
) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::Rewrite.id();
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    // The changed blocks no longer hold the pattern.
    let f = block_case(ctx, &mut g, id, block, Probe::Read, true, mode)?;
    let mut buf = AlignedBuf::new(f.len)
        .ok_or_else(|| BenchError::failed("cannot allocate an I/O buffer"))?;
    let target = o.repetition_target(ctx);
    let mut pos = 0u64;
    let samples = run_passes(ctx, target, f.size / block, |ctx, limit| {
        let mut timer = start_pass(ctx, limit, &f.file, f.direct, &f.path)?;
        while timer.more()? {
            timer
                .time(|| {
                    f.file.read_exact_at(&mut buf, pos)?;
                    // Change one byte in every 4 KiB page, so every page
                    // written back really differs.
                    for i in (0..f.len).step_by(4096) {
                        buf[i] ^= 0x5a;
                    }
                    f.file.write_all_at(&buf, pos)
                })
                .map_err(io_err("cannot rewrite", &f.path))?;
            pos = next_block(pos, block, f.size);
        }
        f.file.sync_data().map_err(io_err("cannot sync", &f.path))?;
        Ok(timer.finish(block as f64))
    })?;
    if !f.direct {
        let _ = io::drop_cache(&f.file);
    }
    block_metrics(&samples)
}

/// `disk.putc`: one character at a time into a buffered stream.
pub fn putc(ctx: &mut RunCtx, o: &DiskOptions) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::Putc.id();
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    let size = g.size;
    let path = g.dir.join("chars");
    let file = io::open_rw(&path, false).map_err(io_err("cannot create", &path))?;
    ctx.note_param("direct", false);
    ctx.note_detail("stream_buffer", CHAR_RUN as u64);
    traps::settle_writeback(ctx, id);
    let target = o.repetition_target(ctx);
    let t: &Target = &g;
    let mut longest = 0u64;
    let samples = run_passes(ctx, target, size / CHAR_RUN as u64, |ctx, limit| {
        (&file)
            .seek(SeekFrom::Start(0))
            .map_err(io_err("cannot seek in", &path))?;
        let mut w = BufWriter::with_capacity(CHAR_RUN, &file);
        let mut off = 0u64;
        let mut timer = OpTimer::new(ctx, limit);
        timer.start();
        while timer.more()? {
            let run = t.pattern.at(off, CHAR_RUN);
            timer
                .time(|| {
                    for &c in run {
                        w.write_all(std::slice::from_ref(&std::hint::black_box(c)))?;
                    }
                    Ok::<(), std::io::Error>(())
                })
                .map_err(io_err("cannot write", &path))?;
            off += CHAR_RUN as u64;
        }
        w.flush().map_err(io_err("cannot write", &path))?;
        drop(w);
        file.sync_data().map_err(io_err("cannot sync", &path))?;
        longest = longest.max(off);
        Ok(timer.finish(CHAR_RUN as f64))
    })?;
    let _ = io::drop_cache(&file);
    g.chars = Some(target::CharsFile {
        path: path.clone(),
        valid: longest,
    });
    samples.metrics("throughput", Unit::MBps, 1e-6)
}

/// `disk.getc`: one character at a time from a buffered stream.
pub fn getc(ctx: &mut RunCtx, o: &DiskOptions) -> Result<Vec<Metric>, BenchError> {
    let id = Kind::Getc.id();
    let shared = begin(ctx, o, true)?;
    let mut g = lock(&shared)?;
    let size = g.size;
    let path = g.dir.join("chars");
    // Without a putc before, lay the whole file out first (untimed).
    let valid = match &g.chars {
        Some(c) if c.valid >= CHAR_RUN as u64 => c.valid,
        _ => {
            target::write_pattern(ctx, &path, &g.pattern, 0, size)?;
            g.chars = Some(target::CharsFile {
                path: path.clone(),
                valid: size,
            });
            size
        }
    };
    let file = File::open(&path).map_err(io_err("cannot open", &path))?;
    ctx.note_param("direct", false);
    ctx.note_detail("stream_buffer", CHAR_RUN as u64);
    traps::settle_writeback(ctx, id);
    let target = o.repetition_target(ctx);
    let t: &Target = &g;
    let mut verify = true;
    let samples = run_passes(ctx, target, valid / CHAR_RUN as u64, |ctx, limit| {
        io::drop_cache(&file).map_err(io_err("cannot drop the cache of", &path))?;
        (&file)
            .seek(SeekFrom::Start(0))
            .map_err(io_err("cannot seek in", &path))?;
        let mut r = BufReader::with_capacity(CHAR_RUN, &file);
        let mut sum = 0u64;
        let mut first = [0u8; 64];
        let mut timer = OpTimer::new(ctx, limit);
        timer.start();
        while timer.more()? {
            let got = timer
                .time(|| {
                    let mut n = 0;
                    while n < CHAR_RUN {
                        let Some(c) = getc_one(&mut r)? else { break };
                        if n < first.len() && verify {
                            first[n] = c;
                        }
                        sum = sum.wrapping_add(u64::from(std::hint::black_box(c)));
                        n += 1;
                    }
                    Ok::<usize, std::io::Error>(n)
                })
                .map_err(io_err("cannot read", &path))?;
            if got < CHAR_RUN {
                return Err(BenchError::failed(format!(
                    "{} ended early at a per-character read",
                    path.display()
                )));
            }
            if verify {
                if first[..] != *t.pattern.at(0, first.len()) {
                    return Err(BenchError::failed(format!(
                        "characters read back from {} differ from those written",
                        path.display()
                    )));
                }
                verify = false;
            }
        }
        std::hint::black_box(sum);
        Ok(timer.finish(CHAR_RUN as f64))
    })?;
    let _ = io::drop_cache(&file);
    samples.metrics("throughput", Unit::MBps, 1e-6)
}

/// The stdio `getc`: one byte from the stream's buffer, refilling it with
/// one read(2) when empty; `None` at end of file.
fn getc_one<R: BufRead>(r: &mut R) -> std::io::Result<Option<u8>> {
    let c = match r.fill_buf()?.first() {
        Some(&c) => c,
        None => return Ok(None),
    };
    r.consume(1);
    Ok(Some(c))
}
