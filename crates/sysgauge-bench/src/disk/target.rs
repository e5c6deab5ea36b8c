//! The file system under test: a scratch directory on it, what backs it
//! (device, model, rotational, block sizes, RAM-backed or not), the test
//! file's size checked against free space, and the shared test files.
//!
//! The target is a fixture of the family session: created by the first
//! disk case, shared by the others (the data file written once is read by
//! the read tests), and removed with the scratch directory when the session
//! ends or on Ctrl-C.

use super::io::{self, Pattern};
use super::DiskOptions;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use sysgauge_core::host::{BlockDevice, FsInfo};
use sysgauge_core::size::{size_label, Bytes};
use sysgauge_core::{BenchError, Profile, RunCtx};
use sysgauge_family::util::by_profile;

/// Default test file size per profile ("quick: a few hundred MiB").
pub fn default_size(profile: Profile) -> u64 {
    by_profile(profile, [4 << 20, 256 << 20, 1 << 30, 4 << 30])
}

/// Smallest test file a default size may shrink to when space is short.
fn min_default_size(profile: Profile) -> u64 {
    match profile {
        Profile::Tiny => 1 << 20,
        _ => 32 << 20,
    }
}

/// Space to leave free on the file system: 5 % of it, at least 128 MiB
/// (a full root file system breaks logins, logs and databases).
pub fn safety_margin(total: Option<u64>) -> u64 {
    (total.unwrap_or(0) / 20).max(128 << 20)
}

/// How big the test file may be, given the request and the free space.
/// `Err` says why nothing fits.
pub fn resolve_size(
    requested: Option<u64>,
    profile: Profile,
    granule: u64,
    free: Option<u64>,
    total: Option<u64>,
) -> Result<u64, BenchError> {
    let granule = granule.max(io::ALIGN as u64);
    let round = |v: u64| v / granule * granule;
    let margin = safety_margin(total);
    let usable = free.map(|f| f.saturating_sub(margin));
    match requested {
        Some(req) => {
            let size = round(req);
            if size == 0 {
                return Err(BenchError::failed(format!(
                    "--size {} is smaller than one block ({})",
                    Bytes(req),
                    Bytes(granule)
                )));
            }
            if let Some(u) = usable {
                if size > u {
                    return Err(BenchError::skip(
                        format!(
                            "{NO_SPACE} for a {} test file: {} free, and {} must stay free",
                            Bytes(size),
                            Bytes(free.unwrap_or(0)),
                            Bytes(margin)
                        ),
                        "pass a smaller --size, free some space, or --path to another file system",
                    ));
                }
            }
            Ok(size)
        }
        None => {
            let want = round(default_size(profile)).max(granule);
            let size = match usable {
                Some(u) => want.min(round(u)),
                None => want,
            };
            if size < min_default_size(profile).min(want) {
                return Err(BenchError::skip(
                    format!(
                        "{NO_SPACE} for a test file: {} free, and {} must stay free",
                        Bytes(free.unwrap_or(0)),
                        Bytes(margin)
                    ),
                    "free some space or pass --path to another file system",
                ));
            }
            Ok(size)
        }
    }
}

/// The start of every skip reason for a test file that does not fit: how
/// `sysgauge disk` tells a run that measured nothing for lack of space.
pub const NO_SPACE: &str = "not enough free space";

/// Whether every result of `results` is a disk case skipped because its
/// test file did not fit (the space went between the check before the run
/// and the cases): the run measured nothing.
pub fn nothing_fit(results: &[sysgauge_core::record::ResultRecord]) -> bool {
    !results.is_empty()
        && results.iter().all(|r| {
            matches!(&r.status, sysgauge_core::Status::Skipped { reason, .. } if reason.starts_with(NO_SPACE))
        })
}

/// The test file's granule: whole blocks of the largest block size (at
/// least 1 MiB) and of the device's physical block.
fn granule(options: &DiskOptions, device: Option<&BlockDevice>) -> u64 {
    options.max_block_size().max(1 << 20).max(u64::from(
        device.and_then(|d| d.physical_block_size).unwrap_or(0),
    ))
}

/// Before anything runs: whether the test file fits on the file system of
/// `dir`, sized as the first case will size it (`resolve_size`). `Err` says
/// why not and what to do, for a usage error: a `--size` that cannot fit,
/// or a file system too full for even the smallest test file, would
/// otherwise skip every case and measure nothing.
pub fn check_space(options: &DiskOptions, dir: &Path, profile: Profile) -> Result<(), String> {
    let fs = sysgauge_host::fs_info(dir);
    let device = fs
        .as_ref()
        .and_then(|f| f.block_device.as_deref())
        .and_then(sysgauge_host::block_device);
    match resolve_size(
        options.size,
        profile,
        granule(options, device.as_ref()),
        sysgauge_host::free_space_bytes(dir),
        fs.as_ref().and_then(|f| f.total_bytes),
    ) {
        Ok(_) => Ok(()),
        Err(BenchError::Skip { reason, hint }) => Err(format!(
            "{} ({reason}): {}",
            dir.display(),
            hint.unwrap_or_default()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// The data file used by the block, rewrite and seek tests.
pub struct DataFile {
    pub path: PathBuf,
    pub size: u64,
    /// Bytes from offset 0 known to hold the pattern.
    pub valid: u64,
    /// False once a test changed data (rewrite, seek writes).
    pub intact: bool,
}

/// The file of the per-character tests.
pub struct CharsFile {
    pub path: PathBuf,
    /// Bytes from offset 0 known to hold the pattern.
    pub valid: u64,
}

/// Everything the disk cases share.
pub struct Target {
    pub dir: PathBuf,
    pub fs: Option<FsInfo>,
    /// The whole disk behind the file system, when there is one.
    pub device: Option<BlockDevice>,
    /// Kernel name whose /proc/diskstats line counts this file system's I/O.
    pub stats_name: Option<String>,
    pub mem_total: Option<u64>,
    pub size: u64,
    pub pattern: Pattern,
    pub max_block: u64,
    pub data: Option<DataFile>,
    pub chars: Option<CharsFile>,
}

/// Shared handle stored as the session fixture.
pub type SharedTarget = Arc<Mutex<Target>>;

const FIXTURE: &str = "disk.target";
const HEAP_RELEASE: &str = "disk.heap-release";

/// Hands the heap the family's session freed back to the kernel when the
/// session ends. Created before the target, so dropped after it and after
/// every later fixture (fixtures drop newest first).
///
/// The cases make hundreds of thousands of small allocations (a quick
/// `disk.create` names 100,000 files, and again for each pass) and large
/// aligned buffers. Freed, they stay resident in glibc's main arena: live
/// allocations made later sit above them, so the automatic trim of the
/// heap's top cannot return them, and freeing a large mmapped buffer raises
/// glibc's trim threshold besides. The process then kept megabytes of
/// freed but resident heap, whose page tables every later `fork` copied:
/// `spawn.fork-exec` with an "empty" parent measured a different workload
/// after the disk family than without it (docs/families/disk.md).
/// `malloc_trim(0)` returns every free page of every arena.
struct HeapRelease;

impl Drop for HeapRelease {
    fn drop(&mut self) {
        release_freed_heap();
    }
}

/// Return the allocator's free pages to the kernel (glibc; elsewhere the
/// allocator is left to its own policy).
pub fn release_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only gives free pages back; it touches no live
    // allocation and is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The session's target, created on first use.
pub fn shared(ctx: &mut RunCtx, options: &DiskOptions) -> Result<SharedTarget, BenchError> {
    ctx.fixture(HEAP_RELEASE, |_| Ok(HeapRelease))?;
    let t: &mut SharedTarget = ctx.fixture(FIXTURE, |ctx| {
        Target::open(ctx, options).map(|t| Arc::new(Mutex::new(t)))
    })?;
    Ok(t.clone())
}

pub fn lock(t: &SharedTarget) -> Result<MutexGuard<'_, Target>, BenchError> {
    t.lock()
        .map_err(|_| BenchError::failed("an earlier disk case failed while holding the target"))
}

impl Target {
    fn open(ctx: &mut RunCtx, options: &DiskOptions) -> Result<Target, BenchError> {
        let dir = match &options.path {
            Some(p) => ctx.scratch_in(p)?,
            None => ctx.scratch_dir()?,
        };
        let fs = sysgauge_host::fs_info(&dir);
        let device = fs
            .as_ref()
            .and_then(|f| f.block_device.as_deref())
            .and_then(sysgauge_host::block_device);
        let stats_name = fs.as_ref().and_then(stats_name_for);
        let max_block = options.max_block_size().max(1 << 20);
        let size = resolve_size(
            options.size,
            ctx.profile(),
            granule(options, device.as_ref()),
            sysgauge_host::free_space_bytes(&dir),
            fs.as_ref().and_then(|f| f.total_bytes),
        )?;
        // The pattern plus a few block buffers; refuse rather than push a
        // small machine into swap with a huge --block-size.
        let buffers = (io::PATTERN_PERIOD as u64 + max_block).saturating_add(max_block * 6);
        if let Some(avail) = sysgauge_host::available_memory_bytes() {
            if buffers.saturating_mul(2) > avail {
                return Err(BenchError::skip(
                    format!(
                        "the I/O buffers need {} and only {} of memory is available",
                        Bytes(buffers),
                        Bytes(avail)
                    ),
                    "use a smaller --block-size",
                ));
            }
        }
        let pattern = Pattern::new(usize::try_from(max_block).unwrap_or(usize::MAX))
            .ok_or_else(|| BenchError::failed("cannot allocate the data pattern buffer"))?;
        Ok(Target {
            dir,
            fs,
            device,
            stats_name,
            mem_total: sysgauge_host::parse_meminfo(
                &std::fs::read_to_string("/proc/meminfo").unwrap_or_default(),
            )
            .bytes("MemTotal"),
            size,
            pattern,
            max_block,
            data: None,
            chars: None,
        })
    }

    /// Record what the case ran on (details never affect matching).
    pub fn note_details(&self, ctx: &mut RunCtx) {
        ctx.note_detail("target", self.dir.to_string_lossy().into_owned());
        if let Some(fs) = &self.fs {
            if let Some(t) = &fs.fs_type {
                ctx.note_detail("fs_type", t.as_str());
            }
            if let Some(m) = &fs.mount_point {
                ctx.note_detail("mount_point", m.as_str());
            }
            if let Some(s) = &fs.source {
                ctx.note_detail("fs_source", s.as_str());
            }
            // How the file system is mounted changes what a write costs
            // (sync, noatime, the journal mode, barriers, commit interval).
            if let Some(o) = &fs.mount_options {
                ctx.note_detail("mount_options", o.as_str());
            }
            if let Some(o) = &fs.fs_options {
                ctx.note_detail("fs_options", o.as_str());
            }
            ctx.note_detail("ram_backed", fs.ram_backed);
        }
        if let Some(d) = &self.device {
            note_device(ctx, d);
        }
    }

    /// The RAM-backed finding, when it applies.
    pub fn ram_backed(&self) -> Option<String> {
        let fs = self.fs.as_ref()?;
        fs.ram_backed.then(|| {
            format!(
                "{} ({} on {})",
                self.dir.display(),
                fs.fs_type.as_deref().unwrap_or("?"),
                fs.source.as_deref().unwrap_or("?")
            )
        })
    }

    /// Name used in messages for the device.
    pub fn device_label(&self) -> String {
        self.device
            .as_ref()
            .map(|d| d.name.clone())
            .or_else(|| self.fs.as_ref().and_then(|f| f.source.clone()))
            .unwrap_or_else(|| "the device".to_string())
    }

    /// The data file, created (preallocated, not yet written) on first use.
    pub fn data_file(&mut self) -> Result<&mut DataFile, BenchError> {
        if self.data.is_none() {
            let path = self.dir.join("data");
            let f = io::open_rw(&path, false).map_err(|e| {
                BenchError::failed(io::describe_io_error("cannot create", &path, &e))
            })?;
            io::preallocate(&f, self.size).map_err(|e| {
                BenchError::failed(io::describe_io_error("cannot allocate", &path, &e))
            })?;
            self.data = Some(DataFile {
                path,
                size: self.size,
                valid: 0,
                intact: true,
            });
        }
        self.data
            .as_mut()
            .ok_or_else(|| BenchError::failed("data file vanished"))
    }

    /// Make sure the data file holds the pattern over its first `len`
    /// bytes (untimed: 1 MiB writes, direct where possible, then
    /// fdatasync), so reads never hit unwritten extents that the file
    /// system answers with zeros without touching the device.
    pub fn ensure_written(&mut self, ctx: &RunCtx, len: u64) -> Result<(), BenchError> {
        let len = len.min(self.size);
        let (path, from) = {
            let d = self.data_file()?;
            if d.valid >= len {
                return Ok(());
            }
            (d.path.clone(), d.valid)
        };
        write_pattern(ctx, &path, &self.pattern, from, len)?;
        if let Some(d) = self.data.as_mut() {
            d.valid = len;
        }
        Ok(())
    }

    /// The data file, written in full first (untimed): what the block and
    /// seek cases read and overwrite.
    pub fn written_data_file(&mut self, ctx: &RunCtx) -> Result<&mut DataFile, BenchError> {
        self.ensure_written(ctx, self.size)?;
        self.data_file()
    }
}

fn note_device(ctx: &mut RunCtx, d: &BlockDevice) {
    ctx.note_detail("device", d.name.as_str());
    if let Some(m) = &d.model {
        ctx.note_detail("model", m.as_str());
    }
    if let Some(r) = d.rotational {
        ctx.note_detail("rotational", r);
    }
    if let Some(l) = d.logical_block_size {
        ctx.note_detail("logical_block_size", l);
    }
    if let Some(p) = d.physical_block_size {
        ctx.note_detail("physical_block_size", p);
    }
}

/// The /proc/diskstats name that counts I/O of this file system: the mount
/// source's own name (a partition has its own line) when it is a device,
/// else the whole disk.
fn stats_name_for(fs: &FsInfo) -> Option<String> {
    let from_source = fs
        .source
        .as_deref()
        .filter(|s| s.starts_with("/dev/"))
        .and_then(|s| Path::new(s).canonicalize().ok())
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let names: Vec<String> = sysgauge_host::read_diskstats()
        .map(|v| v.into_iter().map(|d| d.name).collect())
        .unwrap_or_default();
    from_source
        .filter(|n| names.contains(n))
        .or_else(|| fs.block_device.clone().filter(|n| names.contains(n)))
}

/// Write the pattern into `path` over `[from, to)`.
pub fn write_pattern(
    ctx: &RunCtx,
    path: &Path,
    pattern: &Pattern,
    from: u64,
    to: u64,
) -> Result<(), BenchError> {
    const CHUNK: u64 = 1 << 20;
    let (file, direct) = match io::open_rw(path, true) {
        Ok(f) => (f, true),
        Err(e) if io::is_direct_refusal(&e) => (open_plain(path)?, false),
        Err(e) => {
            return Err(BenchError::failed(io::describe_io_error(
                "cannot open",
                path,
                &e,
            )))
        }
    };
    let mut file = file;
    let mut direct = direct;
    let mut off = from / CHUNK * CHUNK;
    while off < to {
        ctx.check_cancel()?;
        let len = (to - off).min(CHUNK);
        let buf = pattern.at(off, len as usize);
        match file.write_all_at(buf, off) {
            Ok(()) => {}
            Err(e) if direct && io::is_direct_refusal(&e) => {
                file = open_plain(path)?;
                direct = false;
                continue;
            }
            Err(e) => {
                return Err(BenchError::failed(io::describe_io_error(
                    "cannot write",
                    path,
                    &e,
                )))
            }
        }
        off += len;
    }
    file.sync_data()
        .map_err(|e| BenchError::failed(io::describe_io_error("cannot sync", path, &e)))?;
    if !direct {
        let _ = io::drop_cache(&file);
    }
    Ok(())
}

fn open_plain(path: &Path) -> Result<File, BenchError> {
    io::open_rw(path, false)
        .map_err(|e| BenchError::failed(io::describe_io_error("cannot open", path, &e)))
}

/// A short human label for a size (for messages).
pub fn label(n: u64) -> String {
    size_label(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_profile_and_space() {
        let g = 1 << 20;
        // Plenty of space: the profile's default.
        assert_eq!(
            resolve_size(None, Profile::Quick, g, Some(100 << 30), Some(200 << 30)).ok(),
            Some(256 << 20)
        );
        // Little space: shrink, keeping the margin (128 MiB here).
        let s = resolve_size(None, Profile::Quick, g, Some(200 << 20), Some(1 << 30)).unwrap();
        assert_eq!(s, 72 << 20);
        // Too little: skip with a reason.
        assert!(matches!(
            resolve_size(None, Profile::Quick, g, Some(130 << 20), Some(1 << 30)),
            Err(BenchError::Skip { .. })
        ));
        // An explicit size that does not fit is refused, not shrunk.
        assert!(matches!(
            resolve_size(
                Some(1 << 30),
                Profile::Quick,
                g,
                Some(200 << 20),
                Some(1 << 30)
            ),
            Err(BenchError::Skip { .. })
        ));
        // Rounded down to whole blocks; below one block is an error.
        assert_eq!(
            resolve_size(Some(3 << 20 | 5), Profile::Quick, g, None, None).ok(),
            Some(3 << 20)
        );
        assert!(resolve_size(Some(1000), Profile::Quick, g, None, None).is_err());
        assert_eq!(safety_margin(Some(100 << 30)), 5 << 30);
    }

    /// `sysgauge disk --size 99999T`: refused before the run, naming the
    /// directory and what to do; a size that fits passes.
    #[test]
    fn a_size_that_cannot_fit_is_refused_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let options = |size: u64| DiskOptions {
            size: Some(size),
            ..DiskOptions::default()
        };
        let huge = options(99_999 << 40);
        let e = check_space(&huge, dir.path(), Profile::Tiny).unwrap_err();
        assert!(
            e.contains(NO_SPACE) && e.contains("pass a smaller --size"),
            "{e}"
        );
        assert!(e.contains(&dir.path().display().to_string()), "{e}");
        assert!(check_space(&options(1 << 20), dir.path(), Profile::Tiny).is_ok());
    }

    #[test]
    fn a_run_of_skips_for_space_measured_nothing() {
        use sysgauge_core::record::{Params, ResultRecord, Status};
        let skipped = |reason: &str| {
            ResultRecord::new(
                "disk.seq-write",
                Params::new(),
                Status::Skipped {
                    reason: reason.into(),
                    hint: None,
                },
                Vec::new(),
            )
        };
        let space = skipped(&format!("{NO_SPACE} for a test file: 0 B free"));
        assert!(nothing_fit(&[space.clone(), space.clone()]));
        assert!(!nothing_fit(&[
            space,
            skipped("the I/O buffers need 1 GiB")
        ]));
        assert!(!nothing_fit(&[]));
    }
}
