//! File creation, stat and deletion in a directory tree (Bonnie++'s small
//! file tests), in sequential or random order, in files per second.
//!
//! Files are empty, spread over `DIRS` directories. In sequential order
//! they are made, looked at and removed in name order; in random order in a
//! shuffled order (the same on every machine: a fixed seed). A create or
//! delete pass ends with syncfs inside the timed region, so the metadata is
//! on stable storage when the clock stops; the per-file latency excludes
//! that final sync. Set-up (making files to stat or delete) and clean-up
//! are untimed, and followed by a sync so one pass's journal work does not
//! land in the next.
//!
//! Create passes never delete (workload version 2): every pass makes files
//! under new names, and the files stay until the family's session ends.
//! Deleting them between passes made the rate depend on deletions: ext4
//! without a journal will not reuse an inode freed in the last minute or so
//! (`recently_deleted()` in the kernel's inode allocator) and scans past
//! every such inode on each create, so a pass after one that deleted 40,000
//! files ran at 1,000 files/s instead of 70,000, and a run right after
//! another inherited its predecessor's deletions. What other programs
//! delete on the file system still counts, and nothing can settle it
//! short of waiting minutes: on such a file system (see
//! `recently_deleted_window`) the case is marked untrusted and left out of
//! indexes, with the reason.

use super::io;
use super::passes::{run_passes, Limit, OpTimer, PassResult, Samples};
use super::seq::begin;
use super::target::lock;
use super::traps;
use super::{DiskOptions, Kind};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysgauge_core::{BenchError, Metric, Profile, RunCtx, Unit};
use sysgauge_family::util::by_profile;
use sysgauge_stats::SplitMix64;

/// Directories of the tree.
pub const DIRS: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Stat,
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Sequential,
    Random,
}

/// Most files one pass may touch.
pub fn max_files(profile: Profile) -> u64 {
    by_profile(profile, [2_000, 100_000, 400_000, 1_000_000])
}

/// Files kept for the stat test (stat passes cycle over them).
fn stat_set(profile: Profile) -> u64 {
    match profile {
        Profile::Tiny => 1_000,
        _ => 16_384,
    }
}

struct Tree {
    root: PathBuf,
    names: Vec<PathBuf>,
}

impl Tree {
    fn new(root: PathBuf) -> Result<Tree, BenchError> {
        for d in 0..DIRS {
            let p = root.join(format!("d{d:02}"));
            if !p.is_dir() {
                std::fs::create_dir_all(&p).map_err(|e| io_fail("cannot create", &p, &e))?;
            }
        }
        Ok(Tree {
            root,
            names: Vec::new(),
        })
    }

    /// Paths of files 0..n (generated once, outside any timing).
    fn ensure(&mut self, n: usize) {
        while self.names.len() < n {
            let i = self.names.len();
            self.names
                .push(self.root.join(format!("d{:02}/f{i:08}", i % DIRS)));
        }
    }

    fn path(&self, i: usize) -> &Path {
        &self.names[i]
    }

    fn sync(&self) -> Result<(), BenchError> {
        let f = File::open(&self.root).map_err(|e| io_fail("cannot open", &self.root, &e))?;
        io::syncfs(&f).map_err(|e| io_fail("cannot sync", &self.root, &e))
    }

    fn create(&self, i: usize) -> std::io::Result<()> {
        File::create_new(self.path(i)).map(drop)
    }

    fn create_at(p: &Path) -> std::io::Result<()> {
        File::create_new(p).map(drop)
    }

    /// Make files by index, untimed (set-up for a stat or delete pass).
    fn create_all(&self, ctx: &RunCtx, idx: &[usize]) -> Result<(), BenchError> {
        for (k, &i) in idx.iter().enumerate() {
            if k % 256 == 0 {
                ctx.check_cancel()?;
            }
            self.create(i)
                .map_err(|e| io_fail("cannot create", self.path(i), &e))?;
        }
        Ok(())
    }

    /// One timed pass: `op` on the files `idx` in order while the limit
    /// allows, then the sync that puts the metadata on stable storage
    /// (timed too). Returns the outcome, the pass and how many files `op`
    /// reached, so the caller cleans up before passing an error on.
    fn timed_pass(
        &self,
        ctx: &RunCtx,
        limit: Limit,
        paths: &[PathBuf],
        what: &str,
        op: impl Fn(&Path) -> std::io::Result<()>,
    ) -> (Result<(), BenchError>, PassResult, usize) {
        let mut timer = OpTimer::new(ctx, limit);
        let mut done = 0usize;
        timer.start();
        let r = (|| {
            while timer.more()? && done < paths.len() {
                let p = &paths[done];
                timer.time(|| op(p)).map_err(|e| io_fail(what, p, &e))?;
                done += 1;
            }
            self.sync()
        })();
        (r, timer.finish(1.0), done)
    }

    /// The paths of files `idx`, made before a pass is timed.
    fn paths(&self, idx: &[usize]) -> Vec<PathBuf> {
        idx.iter().map(|&i| self.path(i).to_path_buf()).collect()
    }

    /// The path of the create case's file `i` (any number: create passes
    /// go on numbering where the last one stopped).
    fn created(&self, i: usize) -> PathBuf {
        self.root.join(format!("d{:02}/c{i:09}", i % DIRS))
    }

    /// Remove files by index, ignoring ones already gone.
    fn remove_all(&self, idx: &[usize]) -> Result<(), BenchError> {
        for &i in idx {
            match std::fs::remove_file(self.path(i)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_fail("cannot remove", self.path(i), &e)),
            }
        }
        Ok(())
    }
}

/// Indices `0..n` in the order of the test.
fn ordered(n: usize, order: Order, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    if order == Order::Random {
        let mut rng = SplitMix64::new(seed);
        for i in (1..v.len()).rev() {
            let j = rng.below(i + 1);
            v.swap(i, j);
        }
    }
    v
}

fn io_fail(what: &str, p: &Path, e: &std::io::Error) -> BenchError {
    BenchError::failed(io::describe_io_error(what, p, e))
}

pub fn run(
    ctx: &mut RunCtx,
    o: &DiskOptions,
    op: Op,
    order: Order,
) -> Result<Vec<Metric>, BenchError> {
    let id = match op {
        Op::Create => Kind::Create.id(),
        Op::Stat => Kind::Stat.id(),
        Op::Delete => Kind::Delete.id(),
    };
    let shared = begin(ctx, o, false)?;
    let (root, fs) = {
        let g = lock(&shared)?;
        let name = match (op, order) {
            (Op::Create, Order::Sequential) => "tree-create-sequential".to_string(),
            (Op::Create, Order::Random) => "tree-create-random".to_string(),
            _ => format!("tree-{}", id.trim_start_matches("disk.")),
        };
        (g.dir.join(name), g.fs.clone())
    };
    if op == Op::Create {
        let fs = fs.as_ref();
        let (fs_type, source) = (
            fs.and_then(|f| f.fs_type.as_deref()).unwrap_or(""),
            fs.and_then(|f| f.source.as_deref()).unwrap_or(""),
        );
        if traps::jbd2_entries().is_some_and(|j| traps::ext4_without_journal(fs_type, source, &j)) {
            ctx.finding(traps::recent_deletes_finding(source));
            ctx.mark_untrusted(traps::recent_deletes_reason(source));
        }
    }
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| io_fail("cannot clean", &root, &e))?;
    }
    let mut tree = Tree::new(root.clone())?;
    let max = usize::try_from(max_files(ctx.profile())).unwrap_or(usize::MAX);
    tree.ensure(max);
    ctx.note_detail("dirs", DIRS as u64);
    let case = FileCase {
        tree: &tree,
        order,
        max,
        target: o.repetition_target(ctx),
        id,
    };
    let result = match op {
        Op::Create => case.create_passes(ctx),
        Op::Stat => case.stat_passes(ctx),
        Op::Delete => case.delete_passes(ctx),
    };
    if op == Op::Create {
        // Kept until the session ends: deleting them now would leave
        // recently freed inodes in the way of the next create case.
        ctx.fixture(KEPT_TREES, |_| Ok(KeptTrees(Vec::new())))?
            .0
            .push(root);
    } else {
        // Leave nothing behind, whatever happened.
        let _ = std::fs::remove_dir_all(&root);
    }
    result?.metrics("files", Unit::OpsPerSec, 1.0)
}

const KEPT_TREES: &str = "disk.created-trees";

/// The create cases' trees, removed (and the removal synced) when the
/// family's session ends.
struct KeptTrees(Vec<PathBuf>);

impl Drop for KeptTrees {
    fn drop(&mut self) {
        for root in self.0.drain(..) {
            let _ = std::fs::remove_dir_all(&root);
            if let Some(parent) = root.parent() {
                if let Ok(f) = File::open(parent) {
                    let _ = io::syncfs(&f);
                }
            }
        }
    }
}

/// One file case: its tree, its order, the most files a pass may touch,
/// the repetition target and the benchmark id.
struct FileCase<'a> {
    tree: &'a Tree,
    order: Order,
    max: usize,
    target: Duration,
    id: &'a str,
}

impl FileCase<'_> {
    /// Untimed: the tree's metadata on stable storage and write-back
    /// settled, so set-up does not land in the first pass.
    fn settle(&self, ctx: &mut RunCtx) -> Result<(), BenchError> {
        self.tree.sync()?;
        traps::settle_writeback(ctx, self.id);
        Ok(())
    }

    /// Create passes: each makes files under names no earlier pass used,
    /// and none is deleted until the session ends (see the module doc).
    fn create_passes(&self, ctx: &mut RunCtx) -> Result<Samples, BenchError> {
        let (tree, order, max) = (self.tree, self.order, self.max);
        self.settle(ctx)?;
        let mut next = 0usize;
        run_passes(ctx, self.target, max as u64, |ctx, limit| {
            let n = match limit {
                Limit::Calibrate { .. } => max,
                Limit::Ops(n) => usize::try_from(n).unwrap_or(max).min(max),
            };
            let paths: Vec<PathBuf> = ordered(n, order, 0xc4ea7e)
                .into_iter()
                .map(|i| tree.created(next + i))
                .collect();
            let (r, pass, _made) =
                tree.timed_pass(ctx, limit, &paths, "cannot create", Tree::create_at);
            next += n;
            r.map(|()| pass)
        })
    }

    fn stat_passes(&self, ctx: &mut RunCtx) -> Result<Samples, BenchError> {
        let tree = self.tree;
        let n = usize::try_from(stat_set(ctx.profile())).unwrap_or(1024);
        let idx = ordered(n, self.order, 0x57a7);
        tree.create_all(ctx, &idx)?;
        self.settle(ctx)?;
        ctx.note_detail("files_in_tree", n as u64);
        let max_ops = max_files(ctx.profile()).saturating_mul(10);
        let r = run_passes(ctx, self.target, max_ops, |ctx, limit| {
            let mut timer = OpTimer::new(ctx, limit);
            let mut k = 0usize;
            timer.start();
            while timer.more()? {
                let i = idx[k % n];
                let m = timer
                    .time(|| std::fs::symlink_metadata(tree.path(i)))
                    .map_err(|e| io_fail("cannot stat", tree.path(i), &e))?;
                std::hint::black_box(m);
                k += 1;
            }
            Ok(timer.finish(1.0))
        });
        tree.remove_all(&idx)?;
        r
    }

    fn delete_passes(&self, ctx: &mut RunCtx) -> Result<Samples, BenchError> {
        let (tree, order, max) = (self.tree, self.order, self.max);
        self.settle(ctx)?;
        let clock = ctx.clock().clone();
        run_passes(ctx, self.target, max as u64, |ctx, limit| {
            // Untimed: make the files this pass deletes. The calibration pass
            // makes as many as it can in twice the target (creation is rarely
            // much faster than deletion), bounded by `max`.
            let n = match limit {
                Limit::Ops(n) => usize::try_from(n).unwrap_or(max).min(max),
                Limit::Calibrate { target, .. } => {
                    let t0 = clock.now();
                    let mut made = 0usize;
                    while made < max && clock.now().saturating_sub(t0) < target * 2 {
                        if made.is_multiple_of(256) {
                            ctx.check_cancel()?;
                        }
                        tree.create(made)
                            .map_err(|e| io_fail("cannot create", tree.path(made), &e))?;
                        made += 1;
                    }
                    tree.remove_all(&(0..made).collect::<Vec<_>>())?;
                    made.max(1)
                }
            };
            let idx = ordered(n, order, 0xde1e7e);
            tree.create_all(ctx, &idx)?;
            tree.sync()?;
            let paths = tree.paths(&idx);
            let (r, pass, gone) = tree.timed_pass(ctx, limit, &paths, "cannot remove", |p| {
                std::fs::remove_file(p)
            });
            tree.remove_all(&idx[gone..])?;
            tree.sync()?;
            r.map(|()| pass)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations() {
        let s = ordered(100, Order::Sequential, 1);
        assert_eq!(s, (0..100).collect::<Vec<_>>());
        let mut r = ordered(100, Order::Random, 1);
        assert_ne!(r, s);
        assert_eq!(r, ordered(100, Order::Random, 1));
        r.sort_unstable();
        assert_eq!(r, s);
    }
}
