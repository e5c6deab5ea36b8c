//! The sweep's input file (K concatenated copies of the corpus) and the
//! write-behind trap.
//!
//! A freshly written file of hundreds of megabytes is mostly dirty page
//! cache: the kernel writes it to disk over the next seconds, and a hash
//! program started meanwhile competes with that write-back (CPU, memory
//! bandwidth, the disk) and measures up to half speed. The scripts this
//! method comes from slept a guessed time. Here the file is written, then
//! `fsync`ed (its own pages are on disk when that returns), then the
//! kernel's Dirty + Writeback pages (/proc/meminfo) are watched until they
//! fall to a threshold: bounded in time, and reported either way.
//!
//! Free space is checked before the file is made: a sweep never takes more
//! than a set share of the file system's free space.

use super::corpus::Corpus;
use super::{corpus_and_grid, SweepOptions};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_core::record::{Finding, Severity};
use sysgauge_core::{BenchError, CancelToken, IoContext, Profile};
use sysgauge_host::DrainReport;

/// The largest share of a file system's free space the sweep's input files
/// may take together.
pub const MAX_FREE_SHARE: f64 = 0.5;

/// Pages still dirty below this are not worth waiting for.
const MIN_DRAIN_THRESHOLD: u64 = 16 << 20;

/// Refuse (as a skipped case, with a clear reason) when `need` bytes would
/// take more than `MAX_FREE_SHARE` of the free space in `dir`.
pub fn check_free_space(dir: &Path, need: u64) -> Result<(), BenchError> {
    let Some(free) = sysgauge_host::free_space_bytes(dir) else {
        // statvfs failed: the write itself will report a full disk.
        return Ok(());
    };
    if fits(need, free) {
        Ok(())
    } else {
        Err(BenchError::skip(
            format!(
                "the input file needs {} but only {} is free in {} (the sweep takes at most {:.0} % of the free space)",
                human(need),
                human(free),
                dir.display(),
                MAX_FREE_SHARE * 100.0
            ),
            "use fewer --copies or a smaller corpus, or point --dir/--scratch-dir at a file system with more room",
        ))
    }
}

/// True when `need` bytes stay within the allowed share of `free`.
pub fn fits(need: u64, free: u64) -> bool {
    (need as f64) <= (free as f64) * MAX_FREE_SHARE
}

fn human(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The dirty-page level a settle waits for with a file of `file_bytes`:
/// a sixteenth of the file, at least 16 MiB (other programs keep a few
/// megabytes dirty on any busy machine; that is not this file's trap).
pub fn drain_threshold(file_bytes: u64) -> u64 {
    (file_bytes / 16).max(MIN_DRAIN_THRESHOLD)
}

/// What settling the input file found and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct SettleReport {
    /// Dirty + Writeback bytes right after the file was written, before
    /// `fsync`: how much write-behind the file had left pending.
    pub dirty_at_start: Option<u64>,
    /// Time `fsync` took.
    pub fsync: Duration,
    /// The wait for the kernel's dirty pages after `fsync`.
    pub drain: DrainReport,
    /// The level the drain waited for.
    pub threshold: u64,
}

impl SettleReport {
    /// Whole time spent settling (fsync + drain).
    pub fn waited(&self) -> Duration {
        self.fsync + self.drain.waited
    }
}

/// Flush `file` to disk and wait (at most `max_wait` for the drain) until
/// the kernel's Dirty + Writeback pages are at or below `threshold`.
pub fn settle(
    file: &File,
    max_wait: Duration,
    threshold: u64,
    cancel: &CancelToken,
) -> Result<SettleReport, BenchError> {
    let dirty_at_start = sysgauge_host::read_dirty_writeback().map(|(d, w)| d.saturating_add(w));
    let t0 = Instant::now();
    file.sync_all()
        .io_context(|| "cannot flush the input file to disk (fsync)".to_string())?;
    let fsync = t0.elapsed();
    cancel.check()?;
    let drain = sysgauge_host::wait_for_writeback(max_wait, threshold, || cancel.is_cancelled());
    if drain.cancelled {
        return Err(BenchError::Cancelled);
    }
    Ok(SettleReport {
        dirty_at_start,
        fsync,
        drain,
        threshold,
    })
}

/// The input file of one copy count. Removed when dropped (the scratch
/// directory would remove it too; this frees the space as soon as the
/// sweep is done with it).
#[derive(Debug)]
pub struct InputFile {
    path: PathBuf,
    copies: u64,
    bytes: u64,
    settle: SettleReport,
}

impl InputFile {
    /// Write `copies` copies of `corpus` to `path` and settle it. A
    /// partly written file is removed on any error, Ctrl-C included.
    pub fn create(
        path: &Path,
        corpus: &Corpus,
        copies: u64,
        max_wait: Duration,
        cancel: &CancelToken,
    ) -> Result<InputFile, BenchError> {
        let file = write_copies(path, corpus, copies, cancel)?;
        let mut guard = RemoveOnDrop(Some(path.to_path_buf()));
        let bytes = corpus.len().saturating_mul(copies);
        let settle = settle(&file, max_wait, drain_threshold(bytes), cancel)?;
        guard.0 = None;
        Ok(InputFile {
            path: path.to_path_buf(),
            copies,
            bytes,
            settle,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn copies(&self) -> u64 {
        self.copies
    }
    /// Size of the file in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn settle_report(&self) -> &SettleReport {
        &self.settle
    }
}

impl Drop for InputFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Write `copies` concatenated copies of the corpus to a new file at
/// `path`, without flushing it: the returned file's pages are still dirty
/// (the write-behind the sweep then waits out). Polls `cancel` between
/// copies. An existing file is never touched; a partly written new one is
/// removed on any error.
pub fn write_copies(
    path: &Path,
    corpus: &Corpus,
    copies: u64,
    cancel: &CancelToken,
) -> Result<File, BenchError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .io_context(|| format!("cannot create the input file {}", path.display()))?;
    let mut guard = RemoveOnDrop(Some(path.to_path_buf()));
    for _ in 0..copies {
        cancel.check()?;
        corpus.for_each_chunk(cancel, &mut |b| {
            file.write_all(b)
                .io_context(|| format!("cannot write the input file {}", path.display()))
        })?;
    }
    guard.0 = None;
    Ok(file)
}

/// Validate the grid, and make sure every input file fits together in the
/// allowed share of free space in `dir`: given copies must fit (else a
/// clear error); default copies are halved until they do.
pub fn fit_free_space(
    mut options: SweepOptions,
    profile: Profile,
    dir: &Path,
) -> Result<(SweepOptions, Vec<Finding>), String> {
    let (corpus_len, copies, _) = corpus_and_grid(&options, profile)?;
    let need = |copies: &[u64]| -> Option<u64> {
        copies
            .iter()
            .try_fold(0u64, |s, &k| s.checked_add(k.checked_mul(corpus_len)?))
    };
    let Some(free) = sysgauge_host::free_space_bytes(dir) else {
        return Ok((options, Vec::new()));
    };
    let fits_all = |c: &[u64]| need(c).is_some_and(|n| fits(n, free));
    if fits_all(&copies) {
        return Ok((options, Vec::new()));
    }
    let explain = |c: &[u64]| {
        format!(
            "the input files ({} copies of a {corpus_len}-byte corpus) need {:.1} MB, but only {:.1} MB is free in {} and a sweep takes at most {:.0} % of it",
            c.iter().map(u64::to_string).collect::<Vec<_>>().join(" + "),
            need(c).map(|n| n as f64 / 1e6).unwrap_or(f64::INFINITY),
            free as f64 / 1e6,
            dir.display(),
            MAX_FREE_SHARE * 100.0
        )
    };
    if options.copies.is_some() {
        return Err(format!(
            "{}; use fewer --copies or point --dir at a file system with more room",
            explain(&copies)
        ));
    }
    // Default copies: halve the largest until everything fits; the default
    // iterations follow the new copies (N stays a multiple of every K).
    let mut reduced = copies.clone();
    while !fits_all(&reduced) {
        let Some(max) = reduced.iter().copied().max().filter(|&m| m > 1) else {
            return Err(format!(
                "{}; free some space or point --dir elsewhere",
                explain(&reduced)
            ));
        };
        for k in reduced.iter_mut().filter(|k| **k == max) {
            *k = max / 2;
        }
        reduced.sort_unstable();
        reduced.dedup();
    }
    let finding = Finding::new(
        "sweep-copies-reduced",
        Severity::Info,
        format!(
            "{}: the sweep uses {} copies instead",
            explain(&copies),
            reduced
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .with_remedy("point --dir at a file system with more free space for the full sweep");
    options.copies = Some(reduced);
    Ok((options, vec![finding]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Mode;
    use sysgauge_core::Profile;

    #[test]
    fn free_space_bounds_default_copies_only() {
        let dir = tempfile::tempdir().unwrap();
        let free = sysgauge_host::free_space_bytes(dir.path()).unwrap_or(0);
        assert!(free > 0);
        // A corpus so large that 64 copies cannot fit but one can.
        let corpus = (free as f64 * MAX_FREE_SHARE / 50.0) as u64;
        let file = dir.path().join("corpus");
        let f = std::fs::File::create(&file).unwrap();
        f.set_len(corpus).unwrap();
        let opts = SweepOptions {
            data: DataSpec::File(file.clone()),
            mode: Mode::Sweep,
            ..SweepOptions::default()
        };
        let (o, findings) = fit_free_space(opts.clone(), Profile::Quick, dir.path()).unwrap();
        let copies = o.copies.unwrap_or_default();
        assert_eq!(copies.first(), Some(&1));
        assert!(copies.iter().all(|&k| k < 64), "{copies:?}");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, "sweep-copies-reduced");
        // Given copies that do not fit are refused, naming the problem.
        let given = SweepOptions {
            copies: Some(vec![1, 64]),
            ..opts
        };
        let e = fit_free_space(given, Profile::Quick, dir.path())
            .err()
            .unwrap_or_default();
        assert!(e.contains("use fewer --copies"), "{e}");
        // And a grid that cannot work is refused before anything else.
        let bad = SweepOptions {
            copies: Some(vec![3]),
            iterations: Some(vec![4]),
            mode: Mode::Sweep,
            ..SweepOptions::default()
        };
        let e = fit_free_space(bad, Profile::Quick, dir.path())
            .err()
            .unwrap_or_default();
        assert!(e.contains("not a multiple"), "{e}");
    }

    use crate::sweep::corpus::DataSpec;

    #[test]
    fn free_space_share() {
        assert!(fits(50, 100));
        assert!(!fits(51, 100));
        assert!(fits(0, 0));
        let dir = tempfile::tempdir().unwrap();
        assert!(check_free_space(dir.path(), 1).is_ok());
        match check_free_space(dir.path(), u64::MAX) {
            Err(BenchError::Skip { reason, hint }) => {
                assert!(reason.contains("free in"), "{reason}");
                assert!(hint.unwrap_or_default().contains("--copies"));
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn thresholds() {
        assert_eq!(drain_threshold(1 << 20), 16 << 20);
        assert_eq!(drain_threshold(1 << 30), 64 << 20);
    }

    #[test]
    fn input_file_is_copies_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let corpus_path = dir.path().join("c");
        std::fs::write(&corpus_path, b"abc\n").unwrap();
        let corpus = Corpus::load(&DataSpec::File(corpus_path), &[]).unwrap();
        let path = dir.path().join("input");
        let cancel = CancelToken::new();
        {
            let f = InputFile::create(&path, &corpus, 3, Duration::from_secs(5), &cancel).unwrap();
            assert_eq!(f.bytes(), 12);
            assert_eq!(f.copies(), 3);
            assert_eq!(
                std::fs::read(f.path()).unwrap_or_default(),
                b"abc\nabc\nabc\n"
            );
            assert!(f.settle_report().drain.waited < Duration::from_secs(6));
            // An existing file is never overwritten.
            assert!(InputFile::create(&path, &corpus, 1, Duration::ZERO, &cancel).is_err());
            assert!(path.exists());
        }
        assert!(!path.exists());

        // Cancelled while writing: nothing is left behind.
        cancel.cancel();
        let r = InputFile::create(&path, &corpus, 3, Duration::from_secs(5), &cancel);
        assert!(matches!(r, Err(BenchError::Cancelled)));
        assert!(!path.exists());
    }
}
