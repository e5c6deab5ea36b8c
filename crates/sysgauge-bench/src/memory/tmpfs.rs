//! `mem.tmpfs-write`: sequential write throughput into /dev/shm, the
//! "dd to /dev/shm" test: `size` bytes written in 1 MiB `write(2)` calls
//! into a new file, in decimal MB/s.
//!
//! A tmpfs file lives in the page cache only, so this measures the kernel's
//! write path (system calls, page allocation and accounting, one copy from
//! the user buffer) rather than a disk. Each repetition writes a fresh file
//! and closes it inside the timed part, as `dd of=/dev/shm/x` would; the
//! file is removed (untimed) before the next, so every repetition allocates
//! its pages anew. The source is one pre-filled 1 MiB buffer (`dd` from
//! /dev/zero would add a copy out of the zero page on every block).
//!
//! The file is written in a scratch directory created inside /dev/shm and
//! removed at the end of the session or on Ctrl-C. Free space in /dev/shm
//! and available memory are checked first: tmpfs pages are memory.

use super::{canonical_array_size, check_memory, with_pool, MemOptions, Scope};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sysgauge_core::size::Bytes;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, IoContext, Metric, Params, Plan, Profile, RunCtx,
    Unit,
};
use sysgauge_family::util::{fill_pattern, metric};

/// Bytes per `write(2)` (dd's `bs=1M` as binary).
pub const WRITE_BLOCK: u64 = 1 << 20;

/// Where the test writes.
pub const SHM_DIR: &str = "/dev/shm";

/// Default file size: the profile's array size (4 MiB for tiny),
/// at most half the free space of /dev/shm and a quarter of available
/// memory, rounded down to a whole number of write blocks.
pub fn default_file_size(profile: Profile, free: Option<u64>, available: Option<u64>) -> u64 {
    let mut size = match profile {
        Profile::Tiny => 4 << 20,
        p => canonical_array_size(p),
    };
    if let Some(f) = free {
        size = size.min(f / 2);
    }
    if let Some(a) = available {
        size = size.min(a / 4);
    }
    (size / WRITE_BLOCK * WRITE_BLOCK).max(WRITE_BLOCK)
}

/// Why /dev/shm cannot be used, if it cannot.
fn shm_unusable(dir: &Path) -> Option<BenchError> {
    if !dir.is_dir() {
        return Some(BenchError::skip(
            format!("{} does not exist", dir.display()),
            "mount a tmpfs there (mount -t tmpfs tmpfs /dev/shm) to run this test",
        ));
    }
    match sysgauge_host::fs_info(dir) {
        Some(fs) if !fs.ram_backed => Some(BenchError::skip(
            format!(
                "{} is not a RAM-backed file system ({})",
                dir.display(),
                fs.fs_type.as_deref().unwrap_or("unknown type")
            ),
            "this test measures tmpfs; mount a tmpfs on /dev/shm to run it",
        )),
        _ => None,
    }
}

pub struct TmpfsWriteBenchmark {
    options: Arc<MemOptions>,
    dir: PathBuf,
}

impl TmpfsWriteBenchmark {
    pub fn new(options: Arc<MemOptions>) -> Self {
        TmpfsWriteBenchmark {
            options,
            dir: PathBuf::from(SHM_DIR),
        }
    }

    /// The same test in another RAM-backed directory (tests use it to
    /// exercise the refusals).
    pub fn in_dir(options: Arc<MemOptions>, dir: &Path) -> Self {
        TmpfsWriteBenchmark {
            options,
            dir: dir.to_path_buf(),
        }
    }

    /// Write `size` bytes into `path` in `block`-sized writes and close it.
    fn write_file(ctx: &RunCtx, path: &Path, block: &[u8], size: u64) -> Result<(), BenchError> {
        let mut f = std::fs::File::create(path)
            .io_context(|| format!("cannot create {}", path.display()))?;
        let mut left = size;
        let mut written_blocks: u64 = 0;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            f.write_all(&block[..n])
                .io_context(|| format!("writing {}", path.display()))?;
            left -= n as u64;
            written_blocks += 1;
            if written_blocks.is_multiple_of(256) {
                ctx.check_cancel()?;
            }
        }
        // Closing is part of the test (dd closes too); on tmpfs it is cheap.
        drop(f);
        Ok(())
    }
}

impl Benchmark for TmpfsWriteBenchmark {
    fn id(&self) -> &str {
        "mem.tmpfs-write"
    }

    fn describe(&self) -> Description {
        Description::new(
            "sequential 1 MiB writes of a new file into /dev/shm (dd to /dev/shm)",
            Unit::MBps,
            Better::Higher,
        )
    }

    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        if self.options.scope == Scope::Slice {
            return Vec::new();
        }
        let mut p = Params::new().with("block_size", WRITE_BLOCK);
        if let Some(size) = self.options.size {
            p.insert("size", size);
        }
        vec![p]
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        if let Some(e) = shm_unusable(&self.dir) {
            return Err(e);
        }
        let block = params
            .get_u64("block_size")
            .filter(|&b| b > 0 && b <= 64 << 20)
            .ok_or_else(|| BenchError::failed("missing or unusable block_size"))?;
        let free = sysgauge_host::free_space_bytes(&self.dir);
        let available = sysgauge_host::available_memory_bytes();
        let size = match params.get_u64("size") {
            Some(s) => s,
            None => {
                let s = default_file_size(ctx.profile(), free, available);
                ctx.note_param("size", s);
                s
            }
        };
        if size == 0 {
            return Err(BenchError::failed("size must not be 0"));
        }
        // Buffers of the other tests are no longer needed; tmpfs pages
        // compete with them for memory.
        with_pool(ctx, |_, pool| {
            pool.clear();
            Ok(())
        })?;
        if let Some(f) = free {
            // Leave some room: other programs use /dev/shm too.
            if size > f / 10 * 9 {
                return Err(BenchError::skip(
                    format!(
                        "{} has {} free, too little for a {} file",
                        self.dir.display(),
                        Bytes(f),
                        Bytes(size)
                    ),
                    "pass a smaller --size, or free space in /dev/shm",
                ));
            }
        }
        check_memory("the /dev/shm file", size, available).map_err(|r| {
            BenchError::skip(r.to_string(), "pass a smaller --size, or free memory")
        })?;
        let dir = ctx.scratch_in(&self.dir)?;
        let path = dir.join("tmpfs-write.bin");
        let mut buf = vec![0u8; block as usize];
        fill_pattern(&mut buf, 0x0074_6d70_6673);
        let samples = ctx.repeat(|ctx| {
            let t0 = ctx.now();
            Self::write_file(ctx, &path, &buf, size)?;
            let dt = ctx.now().saturating_sub(t0).as_secs_f64();
            let len = std::fs::metadata(&path)
                .io_context(|| format!("cannot stat {}", path.display()))?
                .len();
            std::fs::remove_file(&path)
                .io_context(|| format!("cannot remove {}", path.display()))?;
            if len != size {
                return Err(BenchError::failed(format!(
                    "{} holds {len} bytes after writing {size}",
                    path.display()
                )));
            }
            if dt <= 0.0 {
                return Err(BenchError::failed("a write took no measurable time"));
            }
            Ok(size as f64 / dt / 1e6)
        })?;
        ctx.note_detail("directory", self.dir.display().to_string());
        Ok(vec![metric("write", Unit::MBps, Better::Higher, samples)?])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{ctx, full};
    use super::*;

    #[test]
    fn default_sizes() {
        assert_eq!(default_file_size(Profile::Tiny, None, None), 4 << 20);
        assert_eq!(default_file_size(Profile::Quick, None, None), 128 << 20);
        // Docker's 64 MiB /dev/shm: half of it.
        assert_eq!(
            default_file_size(Profile::Quick, Some(64 << 20), None),
            32 << 20
        );
        assert_eq!(
            default_file_size(Profile::Full, None, Some(8 << 30)),
            2 << 30
        );
        assert_eq!(default_file_size(Profile::Quick, Some(1000), None), 1 << 20);
    }

    #[test]
    fn cases_only_in_full_scope() {
        let plan = Plan {
            profile: Profile::Quick,
            threads: 1,
        };
        assert!(TmpfsWriteBenchmark::new(Arc::new(MemOptions::default()))
            .cases(&plan)
            .is_empty());
        let full = Arc::new(MemOptions {
            scope: Scope::Full,
            size: Some(8 << 20),
            ..MemOptions::default()
        });
        let c = TmpfsWriteBenchmark::new(full).cases(&plan);
        assert_eq!(c[0].get_u64("size"), Some(8 << 20));
        assert_eq!(c[0].get_u64("block_size"), Some(WRITE_BLOCK));
    }

    fn require_shm() -> bool {
        let ok = Path::new(SHM_DIR).is_dir()
            && sysgauge_host::fs_info(Path::new(SHM_DIR)).is_some_and(|f| f.ram_backed);
        sysgauge_testkit::require("/dev/shm as a tmpfs", ok, "mount a tmpfs on /dev/shm")
    }

    #[test]
    fn writes_into_dev_shm_and_cleans_up() {
        if !require_shm() {
            return;
        }
        let full = full();
        let b = TmpfsWriteBenchmark::new(full);
        let mut c = ctx(1);
        let before: Vec<_> = std::fs::read_dir(SHM_DIR)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        let params = b.cases(&Plan {
            profile: Profile::Tiny,
            threads: 1,
        });
        let m = b.run(&mut c, &params[0]).unwrap();
        assert_eq!(m[0].unit, Unit::MBps);
        assert_eq!(m[0].samples.len(), 3);
        assert!(m[0].value() > 0.0);
        let out = c.take_case_output();
        assert_eq!(out.params.get_u64("size"), Some(4 << 20));
        c.end_session();
        let after: Vec<_> = std::fs::read_dir(SHM_DIR)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        let new: Vec<_> = after.iter().filter(|p| !before.contains(p)).collect();
        assert!(new.is_empty(), "left behind in /dev/shm: {new:?}");
    }

    #[test]
    fn refuses_what_does_not_fit() {
        if !require_shm() {
            return;
        }
        let b = TmpfsWriteBenchmark::new(Arc::new(MemOptions::default()));
        let mut c = ctx(1);
        let huge = Params::new()
            .with("block_size", WRITE_BLOCK)
            .with("size", 1u64 << 60);
        match b.run(&mut c, &huge) {
            Err(BenchError::Skip { reason, hint }) => {
                assert!(
                    reason.contains("too little") || reason.contains("memory"),
                    "{reason}"
                );
                assert!(hint.unwrap_or_default().contains("--size"));
            }
            other => panic!("expected a skip, got {other:?}"),
        }
        let not_tmpfs = TmpfsWriteBenchmark::in_dir(
            Arc::new(MemOptions::default()),
            Path::new("/nonexistent-sysgauge-dir"),
        );
        assert!(matches!(
            not_tmpfs.run(&mut c, &Params::new().with("block_size", WRITE_BLOCK)),
            Err(BenchError::Skip { .. })
        ));
        assert!(b.run(&mut c, &Params::new()).is_err());
    }
}
