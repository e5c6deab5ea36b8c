//! The `sweep` family: the system's own hash programs (`sha256sum`,
//! `b2sum`, ...) and `dd` timed over a text corpus, the way administrators
//! have long gauged a machine's CPU, process start-up and I/O path at once,
//! with the traps of the old scripts taken out.
//!
//! Layout: the input file is K concatenated copies of the corpus; an
//! effective iteration count N runs the program N/K times, so every point
//! with the same N hashes the same bytes and only the number of process
//! starts differs. K=1 is dominated by start-up; a large K by hashing.
//!
//! Each run is spawned directly (no shell) with stdout to /dev/null (or to
//! a file with `--to-file`); wall time comes from the monotonic clock, the
//! children's user and system CPU time from wait4(2)'s rusage, so a point
//! has MB/s by wall, user and system time. After the input file is made it
//! is flushed and the kernel's dirty pages are waited out (see `input`).
//! The report estimates each digest program's hash-only rate from the user
//! CPU times of its points (`report::estimate_hash_only`).
//!
//! Each program is a benchmark (`sweep.sha256sum`, `sweep.dd`, and
//! `sweep.custom` for a user's command, with the command in `params`).
//! Cases run program by program in `Known::ALL` order, `dd` (the reading
//! alone) first. The corpus and the input files (one per K) are fixtures
//! shared by the cases of one session.

pub mod chart;
pub mod corpus;
pub mod exec;
pub mod input;
pub mod program;
pub mod report;

use corpus::{Corpus, DataSpec, DICTIONARIES};
use exec::{with_launcher, Invocation, Launcher, Output};
use input::InputFile;
use program::{Known, Program};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::{
    BenchError, Benchmark, Better, CancelToken, Clock, Description, Finding, Metric, Params, Plan,
    Profile, Requirement, RunCtx, Severity, Unit,
};
use sysgauge_family::util::{by_profile, metric};

/// Finding: the input file is on a RAM-backed file system.
pub const RAM_BACKED: &str = "ram-backed-dir";
/// Finding: the kernel's dirty pages did not drain in time.
pub const WRITE_BEHIND: &str = "write-behind";

/// Which default grid applies when copies and iterations are not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// `sysgauge run`'s short slice: dd and sha256sum, 1 copy vs many, one
    /// N; on a slow machine repetitions are cut (never below 3) when a case
    /// would take more than twice its share of the slice.
    #[default]
    Slice,
    /// `sysgauge sweep`: a few N per copy count, every repetition asked for.
    Sweep,
}

/// Command-line choices for the sweep; `None` follows the profile.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Programs to time; `None`: `dd` and `sha256sum`.
    pub programs: Option<Vec<Program>>,
    pub data: DataSpec,
    pub copies: Option<Vec<u64>>,
    pub iterations: Option<Vec<u64>>,
    /// Send each run's stdout to a file in the scratch directory.
    pub to_file: bool,
    /// Put the input file in a scratch directory inside this directory
    /// instead of the run's scratch directory.
    pub dir: Option<PathBuf>,
    pub mode: Mode,
    /// Dictionaries tried for `--data words`, in order.
    pub dictionaries: Vec<PathBuf>,
    /// dd's block size in bytes (`--dd-bs`); `None`: dd's own default (no
    /// `bs=`). Given, the dd cases carry it as the `bs` param.
    pub dd_block: Option<u64>,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            programs: None,
            data: DataSpec::Words,
            copies: None,
            iterations: None,
            to_file: false,
            dir: None,
            mode: Mode::Slice,
            dictionaries: DICTIONARIES.iter().map(PathBuf::from).collect(),
            dd_block: None,
        }
    }
}

impl SweepOptions {
    /// Options for `sysgauge run`: the slice (dd and sha256sum), or the
    /// programs whose ids `--only` names (`sweep.b2sum`), so that naming
    /// one runs it.
    pub fn for_run(only: &[sysgauge_core::Selector]) -> SweepOptions {
        // A program named by its id (or short name) narrows the slice to the
        // programs named; the family's name keeps them all.
        let named: Vec<Program> = Known::ALL
            .into_iter()
            .filter(|k| {
                only.iter()
                    .any(|o| o.matches(k.id()) && o.as_str() != sysgauge_core::family_of(k.id()))
            })
            .map(Program::Known)
            .collect();
        SweepOptions {
            programs: (!named.is_empty()).then_some(named),
            ..SweepOptions::default()
        }
    }
}

/// The copy counts a profile uses by default.
pub fn default_copies(profile: Profile, mode: Mode) -> Vec<u64> {
    match (profile, mode) {
        (Profile::Tiny, _) => vec![1, 4],
        // 128 and 512: the ends of the write-up's recommended 128–512
        // copies (64 understated the many-copy rate); the quick profile
        // takes the smaller so that `run` stays within its 45 s and
        // `sweep` within a minute and a half. `sysgauge sweep` halves it when the
        // scratch space is short, `run` skips the case with the reason.
        (Profile::Quick, _) => vec![1, 128],
        (Profile::Standard, _) | (Profile::Full, Mode::Slice) => vec![1, 512],
        (Profile::Full, Mode::Sweep) => vec![1, 64, 512],
    }
}

/// Multiples of lcm(copies) a profile uses as effective iterations.
fn iteration_multiples(profile: Profile, mode: Mode) -> &'static [u64] {
    match (mode, profile) {
        (Mode::Slice, Profile::Full) => &[1, 2],
        (Mode::Slice, _) => &[1],
        (Mode::Sweep, Profile::Tiny | Profile::Quick) => &[1, 2],
        (Mode::Sweep, Profile::Standard) => &[1, 2, 4],
        (Mode::Sweep, Profile::Full) => &[1, 2, 4, 8],
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    (a / gcd(a, b)).checked_mul(b)
}

/// The copy counts and effective iterations of a sweep: what was given,
/// with the other filled in from the profile so that every N is a multiple
/// of every K. Given both, every N must be a multiple of every K.
pub fn grid(
    profile: Profile,
    mode: Mode,
    copies: Option<&[u64]>,
    iterations: Option<&[u64]>,
) -> Result<(Vec<u64>, Vec<u64>), String> {
    let check_positive = |v: &[u64], what: &str| -> Result<(), String> {
        if v.is_empty() {
            return Err(format!("--{what} needs at least one value"));
        }
        if v.contains(&0) {
            return Err(format!("--{what} must be at least 1"));
        }
        Ok(())
    };
    let dedup = |v: &[u64]| -> Vec<u64> {
        let mut v = v.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    };
    let copies = match (copies, iterations) {
        (Some(c), _) => {
            check_positive(c, "copies")?;
            dedup(c)
        }
        (None, Some(n)) => {
            check_positive(n, "iterations")?;
            // The largest default "many" that divides every N.
            let many = default_copies(profile, mode).into_iter().max().unwrap_or(1);
            let g = n.iter().fold(many, |g, &x| gcd(g, x));
            dedup(&[1, g])
        }
        (None, None) => default_copies(profile, mode),
    };
    let iterations = match iterations {
        Some(n) => {
            check_positive(n, "iterations")?;
            dedup(n)
        }
        None => {
            let base = copies
                .iter()
                .try_fold(1u64, |l, &k| lcm(l, k))
                .ok_or("the least common multiple of --copies is too large")?;
            iteration_multiples(profile, mode)
                .iter()
                .map(|m| base.checked_mul(*m))
                .collect::<Option<Vec<u64>>>()
                .ok_or("the default --iterations overflow; give --iterations")?
        }
    };
    for &n in &iterations {
        for &k in &copies {
            if n % k != 0 {
                return Err(format!(
                    "--iterations {n} is not a multiple of --copies {k}: a point runs the program N/K times over K copies, so N must be a multiple of every K"
                ));
            }
        }
    }
    Ok((copies, iterations))
}

/// The largest effective iterations N over a corpus of `corpus_len` bytes:
/// a point reads N × the corpus, a byte count that must fit in 64 bits, and
/// N is stored as a signed 64-bit parameter.
pub fn max_iterations(corpus_len: u64) -> u64 {
    (u64::MAX / corpus_len.max(1)).min(i64::MAX as u64)
}

/// The corpus's length in bytes and the sweep's grid (copies, iterations)
/// for `options` under `profile`.
pub(crate) fn corpus_and_grid(
    options: &SweepOptions,
    profile: Profile,
) -> Result<(u64, Vec<u64>, Vec<u64>), String> {
    let dicts: Vec<&Path> = options.dictionaries.iter().map(PathBuf::as_path).collect();
    let corpus_len = options.data.expected_len(&dicts)?;
    let (copies, iterations) = grid(
        profile,
        options.mode,
        options.copies.as_deref(),
        options.iterations.as_deref(),
    )?;
    Ok((corpus_len, copies, iterations))
}

/// Every effective iterations N of the sweep (given, or the profile's) is
/// at most `max_iterations` of its corpus: checked before anything runs,
/// where the run would otherwise fail each such point.
pub fn check_iterations(options: &SweepOptions, profile: Profile) -> Result<(), String> {
    let (corpus_len, _, iterations) = corpus_and_grid(options, profile)?;
    let max = max_iterations(corpus_len);
    match iterations.iter().find(|&&n| n > max) {
        Some(n) => Err(format!(
            "--iterations {n} is out of range: N × the {corpus_len}-byte corpus must be counted in 64 bits; give 1 to {max}"
        )),
        None => Ok(()),
    }
}

/// Longest wait for the kernel's dirty pages after making an input file.
fn max_settle(profile: Profile) -> Duration {
    Duration::from_secs(by_profile(profile, [1, 5, 15, 30]))
}

/// One program of the sweep as a benchmark.
pub struct SweepBenchmark {
    /// `None` for `sweep.custom` (its commands come from the options).
    known: Option<Known>,
    options: Arc<SweepOptions>,
}

impl SweepBenchmark {
    pub fn known(k: Known, options: Arc<SweepOptions>) -> Self {
        SweepBenchmark {
            known: Some(k),
            options,
        }
    }
    pub fn custom(options: Arc<SweepOptions>) -> Self {
        SweepBenchmark {
            known: None,
            options,
        }
    }

    /// The programs of the options this benchmark runs.
    fn programs(&self) -> Vec<Program> {
        match (&self.options.programs, self.known) {
            (None, Some(k)) if matches!(k, Known::Dd | Known::Sha256sum) => {
                vec![Program::Known(k)]
            }
            (None, _) => Vec::new(),
            (Some(list), Some(k)) => list
                .iter()
                .filter(|p| **p == Program::Known(k))
                .cloned()
                .collect(),
            (Some(list), None) => list
                .iter()
                .filter(|p| matches!(p, Program::Custom { .. }))
                .cloned()
                .collect(),
        }
    }
}

sysgauge_family::register_family! {
    name: "sweep", options: SweepOptions, in_default_run: true,
    cpu_bound: false, summary_first: false,
    budget_seconds: [0.3, 4.0, 40.0, 120.0], report: Some(|run, format| report::sweep_table(&report::sweep_points(run), format)),
    summary: "the system's hash programs and dd over K copies of a corpus: start-up vs throughput",
    charts: &[chart::CHART],
}

/// Every sweep benchmark, `dd` first.
pub fn benchmarks(options: &Arc<SweepOptions>) -> Vec<Box<dyn Benchmark>> {
    let mut v: Vec<Box<dyn Benchmark>> = Known::ALL
        .iter()
        .map(|&k| Box::new(SweepBenchmark::known(k, options.clone())) as Box<dyn Benchmark>)
        .collect();
    v.push(Box::new(SweepBenchmark::custom(options.clone())));
    v
}

impl Benchmark for SweepBenchmark {
    fn id(&self) -> &str {
        match self.known {
            Some(k) => k.id(),
            None => "sweep.custom",
        }
    }

    fn describe(&self) -> Description {
        let summary = match self.known {
            Some(Known::Dd) => {
                "dd over K copies of a text corpus, N/K runs (the no-crypto baseline: start-up and reading)".to_string()
            }
            Some(k) => format!(
                "{} over K copies of a text corpus, N/K runs: hashing, start-up and reading",
                k.name()
            ),
            None => "a user's command (`--program 'CMD ARGS'`) over K copies of a corpus, N/K runs"
                .to_string(),
        };
        let d = Description::new(summary, Unit::MBps, Better::Higher);
        match self.known {
            Some(Known::Dd) => d.version(program::DD_WORKLOAD_VERSION),
            _ => d,
        }
    }

    fn requirements(&self) -> Vec<Requirement> {
        match self.known {
            Some(k) => vec![Requirement::program(k.name(), k.package())],
            None => Vec::new(),
        }
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        let programs = self.programs();
        if programs.is_empty() {
            return Vec::new();
        }
        let o = &self.options;
        // The command line validates the grid first; an invalid one here
        // (a caller that did not) plans the given values and each case
        // fails with the reason.
        let (copies, iterations) = grid(
            plan.profile,
            o.mode,
            o.copies.as_deref(),
            o.iterations.as_deref(),
        )
        .unwrap_or_else(|_| {
            (
                o.copies.clone().unwrap_or_default(),
                o.iterations.clone().unwrap_or_default(),
            )
        });
        let mut cases = Vec::new();
        for p in &programs {
            for &k in &copies {
                for &n in &iterations {
                    let mut params = Params::new()
                        .with("copies", k)
                        .with("iterations", n)
                        .with("data", o.data.kind());
                    if o.to_file {
                        params.insert("output", "file");
                    }
                    if let Program::Custom { line, .. } = p {
                        params.insert("command", line.as_str());
                    }
                    if let (Program::Known(Known::Dd), Some(bs)) = (p, o.dd_block) {
                        params.insert(program::DD_BS_PARAM, bs);
                    }
                    cases.push(params);
                }
            }
        }
        cases
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let copies = params
            .get_u64("copies")
            .filter(|&k| k > 0)
            .ok_or_else(|| BenchError::failed("copies must be at least 1"))?;
        let iterations = params
            .get_u64("iterations")
            .filter(|&n| n > 0)
            .ok_or_else(|| BenchError::failed("iterations must be at least 1"))?;
        if iterations % copies != 0 {
            return Err(BenchError::failed(format!(
                "iterations {iterations} is not a multiple of copies {copies}"
            )));
        }
        let program = match self.known {
            Some(k) => Program::Known(k),
            None => {
                let line = params
                    .get_str("command")
                    .ok_or_else(|| BenchError::failed("sweep.custom needs a command"))?;
                program::custom(line).map_err(BenchError::failed)?
            }
        };
        // dd's block size comes from the case (its identity), not the
        // options, like a custom case's command.
        let dd_bs = match params.get(program::DD_BS_PARAM) {
            None => None,
            Some(_) => Some(
                params
                    .get_u64(program::DD_BS_PARAM)
                    .ok_or_else(|| BenchError::failed("bs must be a byte count"))
                    .and_then(|b| program::check_dd_block(b).map_err(BenchError::failed))?,
            ),
        };
        let point = Point {
            copies,
            iterations,
            runs: iterations / copies,
            dd_bs,
        };
        run_point(ctx, &self.options, &program, point)
    }
}

#[derive(Debug, Clone, Copy)]
struct Point {
    copies: u64,
    iterations: u64,
    /// Runs per repetition: N/K.
    runs: u64,
    /// dd's block size in bytes; `None`: dd's default.
    dd_bs: Option<u64>,
}

/// Wall, user and system seconds of one repetition (N/K runs).
#[derive(Debug, Clone, Copy, Default)]
struct Rep {
    wall: f64,
    user: f64,
    sys: f64,
}

fn run_point(
    ctx: &mut RunCtx,
    options: &Arc<SweepOptions>,
    program: &Program,
    point: Point,
) -> Result<Vec<Metric>, BenchError> {
    let cancel = ctx.cancel_token().clone();
    let corpus = shared_corpus(ctx, options)?;
    // `check_iterations` refuses such N before a sweep runs.
    let bytes = corpus
        .len()
        .checked_mul(point.iterations)
        .ok_or_else(|| BenchError::failed("corpus size × iterations overflows"))?;
    let dir = shared_dir(ctx, options)?;
    let input_path = dir.join(format!("input-{}x.dat", point.copies));
    // Find the program before making a large file it could not read.
    let inv = program.invocation(&input_path, point.dd_bs)?;

    let (input_bytes, settle, fresh) = shared_input(ctx, &corpus, &dir, point.copies)?;
    ctx.note_detail("corpus", corpus.source());
    ctx.note_detail("corpus_bytes", corpus.len());
    ctx.note_detail("corpus_sha256", corpus.sha256());
    ctx.note_detail("input_bytes", input_bytes);
    ctx.note_detail("runs", point.runs);
    ctx.note_detail("bytes", bytes);
    ctx.note_detail("program", inv.program.display().to_string());
    note_settle(ctx, &settle);
    if fresh {
        settle_findings(ctx, &dir, input_bytes, &settle);
    }

    let stdout = if options.to_file {
        Output::File(dir.join("output.txt"))
    } else {
        Output::Null
    };
    let verify_key = format!("{}|{}", program_key(program), point.copies);
    let verified = ctx
        .fixture::<BTreeSet<String>, _>("sweep.verified", |_| Ok(BTreeSet::new()))?
        .contains(&verify_key);
    let version_known = ctx
        .fixture::<BTreeMap<String, String>, _>("sweep.versions", |_| Ok(BTreeMap::new()))?
        .get(program.name())
        .cloned();
    let expected = match (program, verified) {
        (Program::Known(k), false) => k.expected_digest(&corpus, point.copies, &cancel)?,
        _ => None,
    };
    let verify_files = (dir.join("verify.out"), dir.join("verify.err"));
    let cut = options.mode == Mode::Slice;
    let min_reps = ctx.repetitions().min(3);
    let clock = ctx.clock().clone();
    let ctx_ref: &RunCtx = ctx;
    let (reps, version) = with_launcher(&cancel, |l| -> Result<_, BenchError> {
        let version = match (program, &version_known) {
            (Program::Known(_), None) => {
                Some(program_version(l, &inv, &verify_files.0).unwrap_or_default())
            }
            _ => None,
        };
        for _ in 0..ctx_ref.warmup() {
            repetition(l, &inv, &stdout, point.runs, clock.as_ref(), &cancel)?;
        }
        let started = clock.now();
        let mut reps = Vec::with_capacity(ctx_ref.repetitions() as usize);
        for i in 1..=ctx_ref.repetitions() {
            reps.push(repetition(
                l,
                &inv,
                &stdout,
                point.runs,
                clock.as_ref(),
                &cancel,
            )?);
            // In `run`'s slice, a machine too slow for the fixed points
            // stops after three repetitions once the next would take the
            // case past twice its share of the slice (the other cases
            // usually finish well inside theirs). Points stay fixed so
            // that machines compare; only the repetition count gives.
            let per_rep = clock.now().saturating_sub(started) / i;
            if cut
                && i >= min_reps
                && i < ctx_ref.repetitions()
                && ctx_ref.elapsed() + per_rep > ctx_ref.budget() * 2
            {
                break;
            }
        }
        // Verified after timing, so that the first timed run is the first
        // run after the input file settled (what the write-behind test
        // checks); a wrong answer still fails the case.
        if !verified {
            verify(
                l,
                program,
                &inv,
                input_bytes,
                expected.as_deref(),
                &verify_files,
                &cancel,
            )?;
        }
        Ok((reps, version))
    })?;
    if !verified {
        ctx.fixture::<BTreeSet<String>, _>("sweep.verified", |_| Ok(BTreeSet::new()))?
            .insert(verify_key);
    }
    let version = version.or(version_known);
    if let Some(v) = &version {
        if !v.is_empty() {
            ctx.note_detail("version", v.as_str());
        }
        ctx.fixture::<BTreeMap<String, String>, _>("sweep.versions", |_| Ok(BTreeMap::new()))?
            .insert(program.name().to_string(), v.clone());
    }
    if (reps.len() as u32) < ctx.repetitions() {
        ctx.note_detail("repetitions_cut_to", reps.len());
    }

    let b = bytes as f64;
    let walls: Vec<f64> = reps.iter().map(|r| r.wall).collect();
    let mut metrics = vec![metric(
        "throughput",
        Unit::MBps,
        Better::Higher,
        walls.iter().map(|w| b / w / 1e6).collect(),
    )?];
    for (name, times) in [
        (
            "throughput_user",
            reps.iter().map(|r| r.user).collect::<Vec<_>>(),
        ),
        (
            "throughput_sys",
            reps.iter().map(|r| r.sys).collect::<Vec<_>>(),
        ),
    ] {
        // A zero CPU time (dd spends almost none in user mode) has no rate.
        if times.iter().all(|&t| t > 0.0) {
            metrics.push(metric(
                name,
                Unit::MBps,
                Better::Higher,
                times.iter().map(|t| b / t / 1e6).collect(),
            )?);
        } else {
            ctx.note_detail(
                &format!("{name}_missing"),
                "a repetition used no measurable CPU time of this kind",
            );
        }
    }
    metrics.push(metric(
        "wall_time",
        Unit::Seconds,
        Better::Lower,
        walls.clone(),
    )?);
    metrics.push(metric(
        "user_time",
        Unit::Seconds,
        Better::Lower,
        reps.iter().map(|r| r.user).collect(),
    )?);
    metrics.push(metric(
        "sys_time",
        Unit::Seconds,
        Better::Lower,
        reps.iter().map(|r| r.sys).collect(),
    )?);

    Ok(metrics)
}

/// One repetition: `runs` runs back to back, timed as a whole.
fn repetition(
    l: &Launcher<'_>,
    inv: &Invocation,
    stdout: &Output,
    runs: u64,
    clock: &dyn Clock,
    cancel: &CancelToken,
) -> Result<Rep, BenchError> {
    let name = inv.name();
    let mut rep = Rep::default();
    let t0 = clock.now();
    for _ in 0..runs {
        let o = l.run(inv, stdout, &Output::Null)?;
        o.check(&name, cancel)?;
        rep.user += o.user.as_secs_f64();
        rep.sys += o.sys.as_secs_f64();
    }
    rep.wall = clock.now().saturating_sub(t0).as_secs_f64();
    if rep.wall <= 0.0 {
        return Err(BenchError::failed("a repetition took no measurable time"));
    }
    Ok(rep)
}

/// Run the program once more with its output captured and check it.
fn verify(
    l: &Launcher<'_>,
    program: &Program,
    inv: &Invocation,
    input_bytes: u64,
    expected: Option<&str>,
    files: &(PathBuf, PathBuf),
    cancel: &CancelToken,
) -> Result<(), BenchError> {
    let name = inv.name();
    let o = l.run(
        inv,
        &Output::File(files.0.clone()),
        &Output::File(files.1.clone()),
    )?;
    if !o.success() {
        cancel.check()?;
        let err = exec::read_captured(&files.1).unwrap_or_default();
        let first = err.lines().next().unwrap_or("").trim();
        o.check(&name, cancel).map_err(|e| {
            if first.is_empty() {
                e
            } else {
                BenchError::failed(format!("{e}: {first}"))
            }
        })?;
    }
    match (program, expected) {
        (Program::Known(Known::Dd), _) => {
            program::check_dd_output(&exec::read_captured(&files.1)?, input_bytes)
        }
        (Program::Known(_), Some(exp)) => {
            program::check_digest_output(&name, &exec::read_captured(&files.0)?, exp)
        }
        _ => Ok(()),
    }
}

/// First line of `PROGRAM --version` (empty when it prints none).
fn program_version(l: &Launcher<'_>, inv: &Invocation, out: &Path) -> Result<String, BenchError> {
    let v = Invocation {
        program: inv.program.clone(),
        args: vec!["--version".into()],
    };
    l.run(&v, &Output::File(out.to_path_buf()), &Output::Null)?;
    Ok(exec::read_captured(out)?
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string())
}

fn program_key(p: &Program) -> String {
    match p {
        Program::Known(k) => k.name().to_string(),
        Program::Custom { line, .. } => format!("custom:{line}"),
    }
}

fn shared_corpus(ctx: &mut RunCtx, options: &SweepOptions) -> Result<Arc<Corpus>, BenchError> {
    let dicts: Vec<&Path> = options.dictionaries.iter().map(PathBuf::as_path).collect();
    Ok(ctx
        .fixture("sweep.corpus", |_| {
            Corpus::load(&options.data, &dicts).map(Arc::new)
        })?
        .clone())
}

fn shared_dir(ctx: &mut RunCtx, options: &SweepOptions) -> Result<PathBuf, BenchError> {
    Ok(ctx
        .fixture("sweep.dir", |c| match &options.dir {
            Some(d) => c.scratch_in(d),
            None => c.scratch_dir(),
        })?
        .clone())
}

/// The input file of `copies` copies: made (and settled) on first use.
/// Returns its size, its settle report, and whether it was made just now.
fn shared_input(
    ctx: &mut RunCtx,
    corpus: &Corpus,
    dir: &Path,
    copies: u64,
) -> Result<(u64, input::SettleReport, bool), BenchError> {
    let path = dir.join(format!("input-{copies}x.dat"));
    let need = corpus
        .len()
        .checked_mul(copies)
        .ok_or_else(|| BenchError::failed("corpus size × copies overflows"))?;
    let max_wait = max_settle(ctx.profile());
    let cancel = ctx.cancel_token().clone();
    let mut fresh = false;
    let f: &mut InputFile = ctx.fixture(&format!("sweep.input.{copies}"), |_| {
        input::check_free_space(dir, need)?;
        fresh = true;
        InputFile::create(&path, corpus, copies, max_wait, &cancel)
    })?;
    Ok((f.bytes(), f.settle_report().clone(), fresh))
}

fn note_settle(ctx: &mut RunCtx, s: &input::SettleReport) {
    ctx.note_detail("writeback_wait_ms", s.waited().as_millis() as u64);
    ctx.note_detail("fsync_ms", s.fsync.as_millis() as u64);
    if let Some(d) = s.dirty_at_start {
        ctx.note_detail("dirty_at_start_bytes", d);
    }
    if let Some(d) = s.drain.dirty_after {
        ctx.note_detail("dirty_after_bytes", d);
    }
    ctx.note_detail("writeback_drained", s.drain.drained);
}

fn settle_findings(ctx: &mut RunCtx, dir: &Path, input_bytes: u64, s: &input::SettleReport) {
    if let Some(fs) = sysgauge_host::fs_info(dir) {
        if fs.ram_backed {
            ctx.finding(
                Finding::new(
                    RAM_BACKED,
                    Severity::Warning,
                    format!(
                        "the sweep's input file is on {} ({}), which lives in memory: the sweep measures memory, not a disk",
                        fs.fs_type.as_deref().unwrap_or("a RAM-backed file system"),
                        fs.mount_point.as_deref().unwrap_or("?"),
                    ),
                )
                .with_remedy("pass --dir (or --scratch-dir) on a disk-backed file system to include the disk's file system"),
            );
        }
    }
    if !s.drain.drained {
        ctx.finding(
            Finding::new(
                WRITE_BEHIND,
                Severity::Warning,
                format!(
                    "after writing the {:.0} MB input file, the kernel still had {:.0} MB of dirty pages after {:.1} s (waited for {:.0} MB): the first points may run at reduced speed while they are written",
                    input_bytes as f64 / 1e6,
                    s.drain.dirty_after.unwrap_or(0) as f64 / 1e6,
                    s.waited().as_secs_f64(),
                    s.threshold as f64 / 1e6,
                ),
            )
            .with_remedy("stop other programs that write heavily and run again, or use a profile with a longer wait (standard, full)"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::CtxSettings;

    fn ctx(base: &Path, reps: u32, warmup: u32) -> RunCtx {
        RunCtx::for_tests(CtxSettings {
            profile: Profile::Tiny,
            repetitions: reps,
            warmup,
            scratch_base: base.to_path_buf(),
            threads: 2,
        })
    }

    fn require(program: &str) -> bool {
        sysgauge_testkit::require(
            program,
            sysgauge_core::bench::find_program(program).is_some(),
            "apt-get install coreutils",
        )
    }

    /// N is bounded by what N × the corpus can count, before anything runs.
    #[test]
    fn iterations_bounded_by_the_corpus() {
        assert_eq!(max_iterations(1), i64::MAX as u64);
        assert_eq!(max_iterations(1000), u64::MAX / 1000);
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        std::fs::write(&corpus, [b'a'; 1000]).unwrap();
        let options = |n: u64| SweepOptions {
            data: DataSpec::File(corpus.clone()),
            copies: Some(vec![1]),
            iterations: Some(vec![1, n]),
            mode: Mode::Sweep,
            ..SweepOptions::default()
        };
        let max = u64::MAX / 1000;
        assert_eq!(check_iterations(&options(max), Profile::Tiny), Ok(()));
        let e = check_iterations(&options(max + 1), Profile::Tiny).unwrap_err();
        assert!(e.contains(&format!("give 1 to {max}")), "{e}");
        assert!(e.contains("the 1000-byte corpus"), "{e}");
    }

    #[test]
    fn slice_runs_dd_then_sha256sum() {
        if !require("sha256sum") || !require("dd") {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let options = Arc::new(SweepOptions::default());
        let all = benchmarks(&options);
        let plan = Plan {
            profile: Profile::Tiny,
            threads: 2,
        };
        let planned: Vec<(String, Params)> = all
            .iter()
            .flat_map(|b| b.cases(&plan).into_iter().map(|p| (b.id().to_string(), p)))
            .collect();
        let ids: Vec<&str> = planned.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            ids,
            ["sweep.dd", "sweep.dd", "sweep.sha256sum", "sweep.sha256sum"]
        );
        assert_eq!(
            planned[1].1,
            Params::new()
                .with("copies", 4u64)
                .with("iterations", 4u64)
                .with("data", "words")
        );
        let mut c = ctx(base.path(), 3, 1);
        let mut results = Vec::new();
        for (id, params) in &planned {
            let b = all
                .iter()
                .find(|b| b.id() == id)
                .unwrap_or_else(|| panic!("{id}"));
            c.begin_case(Duration::from_secs(5));
            let m = b
                .run(&mut c, params)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            results.push((id.clone(), m, c.take_case_output()));
        }
        let scratch = c.scratch_dir().unwrap();
        assert!(scratch.join("input-4x.dat").exists());
        for (id, m, out) in &results {
            assert_eq!(m[0].name, "throughput");
            assert_eq!(m[0].samples.len(), 3);
            assert!(m[0].value() > 0.0);
            let wall = m.iter().find(|m| m.name == "wall_time");
            assert!(wall.is_some_and(|w| w.value() > 0.0), "{id}");
            let copies =
                if out.details.get_u64("input_bytes") == out.details.get_u64("corpus_bytes") {
                    1
                } else {
                    4
                };
            assert_eq!(out.details.get_u64("runs"), Some(4 / copies), "{id}");
            assert!(out
                .details
                .get_str("corpus_sha256")
                .is_some_and(|s| s.len() == 64));
            assert!(out.details.get_bool("writeback_drained").is_some());
            assert!(
                out.details.get_str("version").is_some(),
                "{id}: {:?}",
                out.details
            );
        }
        // The hash-only estimate is the report's, from the user times.
        for (id, m, _) in &results {
            assert!(!m.iter().any(|m| m.name == "hash_only_estimate"), "{id}");
            let user = m.iter().find(|m| m.name == "user_time");
            assert!(user.is_some(), "{id}");
        }
        c.end_session();
        assert!(!scratch.exists());
    }

    #[test]
    fn slice_cuts_repetitions_on_a_slow_machine_sweep_does_not() {
        // A fake clock that advances 100 ms at every reading makes every
        // repetition "slow" against a 0.5 s case budget.
        for (mode, expect_cut) in [(Mode::Slice, true), (Mode::Sweep, false)] {
            let base = tempfile::tempdir().unwrap();
            let options = Arc::new(SweepOptions {
                programs: program::parse_programs(&["true".into()]).ok(),
                data: DataSpec::Random,
                copies: Some(vec![1]),
                iterations: Some(vec![1]),
                mode,
                ..SweepOptions::default()
            });
            let b = SweepBenchmark::custom(options);
            let mut c = RunCtx::new(
                CtxSettings {
                    repetitions: 7,
                    warmup: 0,
                    threads: 1,
                    ..CtxSettings::for_tests(Profile::Tiny, base.path().to_path_buf())
                },
                Arc::new(sysgauge_core::FakeClock::new(Duration::from_millis(100))),
                CancelToken::new(),
            );
            c.begin_case(Duration::from_millis(500));
            let params = Params::new()
                .with("copies", 1u64)
                .with("iterations", 1u64)
                .with("data", "random")
                .with("command", "true");
            let m = b.run(&mut c, &params).unwrap();
            let n = m[0].samples.len();
            let out = c.take_case_output();
            if expect_cut {
                assert!((3..7).contains(&n), "{n}");
                assert_eq!(out.details.get_u64("repetitions_cut_to"), Some(n as u64));
            } else {
                assert_eq!(n, 7);
                assert!(out.details.get("repetitions_cut_to").is_none());
            }
            c.end_session();
        }
    }

    #[test]
    fn verification_catches_a_wrong_program() {
        if !require("md5sum") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let corpus_path = dir.path().join("corpus");
        std::fs::write(&corpus_path, b"abc").unwrap();
        let corpus = Corpus::load(&DataSpec::File(corpus_path.clone()), &[]).unwrap();
        let cancel = CancelToken::new();
        let expected = Known::Sha256sum
            .expected_digest(&corpus, 1, &cancel)
            .unwrap();
        // md5sum posing as sha256sum prints another digest.
        let impostor = Program::Known(Known::Md5sum)
            .invocation(&corpus_path, None)
            .unwrap();
        let files = (dir.path().join("o"), dir.path().join("e"));
        let r = with_launcher(&cancel, |l| {
            verify(
                l,
                &Program::Known(Known::Sha256sum),
                &impostor,
                3,
                expected.as_deref(),
                &files,
                &cancel,
            )
        });
        let msg = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("does not compute what it claims"), "{msg}");
        let genuine = Program::Known(Known::Sha256sum)
            .invocation(&corpus_path, None)
            .unwrap();
        let ok = with_launcher(&cancel, |l| {
            verify(
                l,
                &Program::Known(Known::Sha256sum),
                &genuine,
                3,
                expected.as_deref(),
                &files,
                &cancel,
            )
        });
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn custom_commands_and_failures() {
        let base = tempfile::tempdir().unwrap();
        let programs = program::parse_programs(&["cat".into(), "sh -c 'exit 3'".into()]).unwrap();
        let options = Arc::new(SweepOptions {
            programs: Some(programs),
            data: DataSpec::Random,
            copies: Some(vec![2]),
            iterations: Some(vec![2]),
            to_file: true,
            mode: Mode::Sweep,
            ..SweepOptions::default()
        });
        let b = SweepBenchmark::custom(options.clone());
        let cases = b.cases(&Plan {
            profile: Profile::Tiny,
            threads: 1,
        });
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].get_str("command"), Some("cat"));
        assert_eq!(cases[0].get_str("output"), Some("file"));
        assert_eq!(cases[0].get_str("data"), Some("random"));
        let mut c = ctx(base.path(), 3, 0);
        c.begin_case(Duration::from_secs(5));
        let m = b.run(&mut c, &cases[0]).unwrap();
        assert!(m[0].value() > 0.0);
        // cat's output went to the file: the whole 2-copy input.
        let scratch = c.scratch_dir().unwrap();
        let out = std::fs::metadata(scratch.join("output.txt")).map(|m| m.len());
        assert_eq!(out.ok(), Some(2 * corpus::GENERATED_BYTES as u64));
        c.take_case_output();
        c.begin_case(Duration::from_secs(5));
        let e = b
            .run(&mut c, &cases[1])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("sh exited with status 3"), "{e}");
        // A bad point is refused, not run.
        let bad = Params::new().with("copies", 3u64).with("iterations", 4u64);
        assert!(b.run(&mut c, &bad).is_err());
        c.end_session();
    }

    /// dd's block size is part of the dd cases' identity only when given
    /// (`bs`, bytes); without it dd runs with its own default, and the
    /// workload version says the default changed.
    #[test]
    fn dd_block_size_is_a_dd_param() {
        let plan = Plan {
            profile: Profile::Tiny,
            threads: 1,
        };
        let programs = Some(vec![
            Program::Known(Known::Dd),
            Program::Known(Known::Sha256sum),
        ]);
        let with = |dd_block| {
            let o = Arc::new(SweepOptions {
                programs: programs.clone(),
                dd_block,
                ..SweepOptions::default()
            });
            let dd = SweepBenchmark::known(Known::Dd, o.clone());
            let sha = SweepBenchmark::known(Known::Sha256sum, o);
            (
                dd.cases(&plan),
                sha.cases(&plan),
                dd.describe(),
                sha.describe(),
            )
        };
        let (dd, sha, dd_desc, sha_desc) = with(None);
        assert!(!dd.is_empty() && !sha.is_empty());
        assert!(dd.iter().chain(&sha).all(|p| p.get("bs").is_none()));
        assert_eq!(dd_desc.workload_version, program::DD_WORKLOAD_VERSION);
        assert_eq!(dd_desc.workload_version, 2);
        assert_eq!(sha_desc.workload_version, 1);
        let (dd, sha, _, _) = with(Some(32768));
        assert!(dd.iter().all(|p| p.get_u64("bs") == Some(32768)));
        assert!(sha.iter().all(|p| p.get("bs").is_none()));
    }

    #[test]
    fn bad_dd_block_param_fails_the_case() {
        let base = tempfile::tempdir().unwrap();
        let mut c = RunCtx::for_tests(CtxSettings::for_tests(
            Profile::Tiny,
            base.path().to_path_buf(),
        ));
        let b = SweepBenchmark::known(Known::Dd, Arc::new(SweepOptions::default()));
        for bs in [0u64, program::DD_BLOCK_MAX + 1] {
            let p = Params::new()
                .with("copies", 1u64)
                .with("iterations", 1u64)
                .with("data", "words")
                .with("bs", bs);
            let e = b.run(&mut c, &p).err().map(|e| e.to_string());
            assert!(e.unwrap_or_default().contains("--dd-bs"), "{bs}");
        }
        c.end_session();
    }

    #[test]
    fn grids() {
        let g = |p, m, c: Option<&[u64]>, n: Option<&[u64]>| grid(p, m, c, n);
        assert_eq!(
            g(Profile::Quick, Mode::Slice, None, None),
            Ok((vec![1, 128], vec![128]))
        );
        assert_eq!(
            g(Profile::Quick, Mode::Sweep, None, None),
            Ok((vec![1, 128], vec![128, 256]))
        );
        assert_eq!(
            g(Profile::Standard, Mode::Sweep, None, None),
            Ok((vec![1, 512], vec![512, 1024, 2048]))
        );
        assert_eq!(
            g(Profile::Tiny, Mode::Slice, None, None),
            Ok((vec![1, 4], vec![4]))
        );
        // Copies given: N defaults to multiples of their lcm.
        assert_eq!(
            g(Profile::Standard, Mode::Sweep, Some(&[6, 4, 4]), None),
            Ok((vec![4, 6], vec![12, 24, 48]))
        );
        // Iterations given: "many" is the largest default K dividing them all.
        assert_eq!(
            g(Profile::Quick, Mode::Sweep, None, Some(&[100, 200])),
            Ok((vec![1, 4], vec![100, 200]))
        );
        assert_eq!(
            g(Profile::Quick, Mode::Sweep, None, Some(&[7])),
            Ok((vec![1], vec![7]))
        );
        let e = g(Profile::Quick, Mode::Sweep, Some(&[1, 64]), Some(&[100]))
            .err()
            .unwrap_or_default();
        assert!(
            e.contains("--iterations 100 is not a multiple of --copies 64"),
            "{e}"
        );
        assert!(g(Profile::Quick, Mode::Sweep, Some(&[0]), None).is_err());
        assert!(g(Profile::Quick, Mode::Sweep, None, Some(&[0])).is_err());
        assert!(g(Profile::Quick, Mode::Sweep, Some(&[]), None).is_err());
        assert!(g(
            Profile::Quick,
            Mode::Sweep,
            Some(&[u64::MAX, u64::MAX - 1]),
            None
        )
        .is_err());
    }

    #[test]
    fn run_slice_or_named_programs() {
        let plan = Plan {
            profile: Profile::Quick,
            threads: 2,
        };
        let ids_with_cases = |o: SweepOptions| -> Vec<String> {
            benchmarks(&Arc::new(o))
                .iter()
                .filter(|b| !b.cases(&plan).is_empty())
                .map(|b| b.id().to_string())
                .collect()
        };
        let sel = |v: &[&str]| -> Vec<sysgauge_core::Selector> {
            v.iter().map(|s| s.parse().unwrap()).collect()
        };
        assert_eq!(
            ids_with_cases(SweepOptions::for_run(&[])),
            ["sweep.dd", "sweep.sha256sum"]
        );
        assert_eq!(
            ids_with_cases(SweepOptions::for_run(&sel(&["hash", "sweep"]))),
            ["sweep.dd", "sweep.sha256sum"]
        );
        assert_eq!(
            ids_with_cases(SweepOptions::for_run(&sel(&["sweep.b2sum"]))),
            ["sweep.b2sum"]
        );
        assert_eq!(
            ids_with_cases(SweepOptions::for_run(&sel(&["b2sum", "md5sum"]))),
            ["sweep.b2sum", "sweep.md5sum"]
        );
    }
}
