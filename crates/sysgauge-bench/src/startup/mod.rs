//! The `startup` family: how long a command takes to start and finish,
//! timed over many runs, so that `perl -e ''` can be compared with
//! `perl -MPOSIX -e ''` (the first command given is the baseline; the
//! comparison itself is rendered by sysgauge-report from the records).
//!
//! One benchmark, `startup.command`; one case per command, identified by the
//! params `command` (the text as given) and `shell` (whether it ran through
//! `sh -c`). The command line is split like a shell would (`shlex`) and the
//! program executed directly, so no shell start-up is mixed in unless
//! `--shell` asks for it.
//!
//! Each run is one posix_spawn (stdin, stdout and stderr on /dev/null,
//! SIGPIPE and the signal mask reset as a shell would leave them) and one
//! wait4, timed with the monotonic clock; wait4 gives the child's own user
//! and system time. After the warm-up runs, runs continue until both the
//! minimum number of runs and the minimum total time are reached (bounded by
//! `max_runs`): the core sampler's `MinRunsAndTime` rule. A run that exits non-zero fails the case unless failures are
//! ignored. The libraries the command loads are counted once, before the
//! timed runs (see `libraries`).
//!
//! Every run of a command (the check before measuring, the library count,
//! `--prepare`, warm-up and timed runs) is started in a process group of
//! its own and watched by a [`ChildWatch`]: once the run is cancelled (a
//! signal), the whole group is killed, so a `sleep 60` or a `sh -c` and
//! what it started never outlive sysgauge, and the case ends at once
//! instead of after the command.
//!
//! Metrics, headline first: `wall` (ms per run, one sample per run), `user`
//! and `system` (mean ms of CPU per run, one sample each), and `libraries`
//! (count, one sample).

pub mod hyperfine;
pub mod libraries;
pub mod report;

use crate::spawn::method::ChildEnd;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::record::{Finding, Severity};
use sysgauge_core::{
    BenchError, Benchmark, Better, CancelToken, Description, Metric, Params, Phase, Plan, Rule,
    RunCtx, Sampler, Unit,
};
use sysgauge_family::util::metric;

pub const ID: &str = "startup.command";

/// The finding code for runs far from the others.
pub const OUTLIERS: &str = "startup-outliers";

/// Scaled-MAD distance beyond which a run counts as an outlier (the usual
/// modified z-score threshold).
pub const OUTLIER_K: f64 = 3.5;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct StartupOptions {
    /// The commands, baseline first.
    pub commands: Vec<String>,
    /// Run each through `sh -c`.
    pub shell: bool,
    /// Minimum timed runs per command (0: the default, 10).
    pub min_runs: u64,
    /// Minimum total time of the timed runs; `None`: the profile's
    /// (the family's time slice).
    pub min_time: Option<Duration>,
    /// Stop after this many timed runs even before `min_time`.
    pub max_runs: Option<u64>,
    pub ignore_failure: bool,
    /// Do not count libraries.
    pub skip_libraries: bool,
    /// A shell command run before every run of a command (warm-up and
    /// timed) and not timed (`--prepare`): by command text.
    pub prepare: std::collections::BTreeMap<String, String>,
    /// The parameter values a command was made with (`--parameter-scan`,
    /// `--parameter-list`): by command text.
    pub parameters: std::collections::BTreeMap<String, Vec<(String, String)>>,
}

/// The param naming a case's `--prepare` command.
pub const PREPARE_PARAM: &str = "prepare";

/// The prefix of the params naming a case's parameter values
/// (`parameter.threads`).
pub const PARAMETER_PREFIX: &str = "parameter.";

pub const DEFAULT_MIN_RUNS: u64 = 10;

/// A command made ready to execute: the program's path and the argv/envp
/// arrays, built once.
pub struct Prepared {
    pub text: String,
    pub program: PathBuf,
    pub words: Vec<String>,
    path: CString,
    _args: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    env: Vec<CString>,
    envp: Vec<*const libc::c_char>,
}

/// Split and resolve a command line: direct exec of its first word (looked
/// up on PATH unless it contains a slash), or `/bin/sh -c TEXT` with
/// `shell`.
pub fn prepare(text: &str, shell: bool) -> Result<Prepared, String> {
    if text.trim().is_empty() {
        return Err("the command is empty".into());
    }
    let words: Vec<String> = if shell {
        vec!["sh".into(), "-c".into(), text.to_string()]
    } else {
        shlex::split(text).ok_or_else(|| {
            format!(
                "cannot split the command line {text:?}: unbalanced quotes or a trailing backslash"
            )
        })?
    };
    let first = words
        .first()
        .ok_or_else(|| format!("the command line {text:?} has no words"))?;
    let program = if shell {
        PathBuf::from("/bin/sh")
    } else {
        sysgauge_core::bench::find_program(first).ok_or_else(|| {
            if first.contains('/') {
                format!("{first} does not exist or is not executable")
            } else {
                format!("'{first}' is not found on PATH")
            }
        })?
    };
    let path = CString::new(program.as_os_str().as_bytes())
        .map_err(|_| "the program path contains a NUL byte".to_string())?;
    let args: Vec<CString> = words
        .iter()
        .map(|w| CString::new(w.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|_| format!("the command line {text:?} contains a NUL byte"))?;
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|c| c.as_ptr()).collect();
    argv.push(std::ptr::null());
    let env: Vec<CString> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            CString::new(kv).ok()
        })
        .collect();
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|c| c.as_ptr()).collect();
    envp.push(std::ptr::null());
    Ok(Prepared {
        text: text.to_string(),
        program,
        words,
        path,
        _args: args,
        argv,
        env,
        envp,
    })
}

/// posix_spawn file actions (dup2 pairs), destroyed on drop.
pub(crate) struct FileActions {
    fa: libc::posix_spawn_file_actions_t,
    live: bool,
}

impl FileActions {
    pub(crate) fn new(dups: &[(libc::c_int, libc::c_int)]) -> Result<Box<FileActions>, String> {
        // Boxed: glibc may keep pointers into the object, so it must not move
        // after init.
        // SAFETY: an all-zero value is a valid argument for init to overwrite.
        let mut b = Box::new(FileActions {
            fa: unsafe { std::mem::zeroed() },
            live: false,
        });
        // SAFETY: `b.fa` is valid storage for a file-actions object.
        if unsafe { libc::posix_spawn_file_actions_init(&mut b.fa) } != 0 {
            return Err("posix_spawn_file_actions_init failed".into());
        }
        b.live = true;
        for &(from, to) in dups {
            // SAFETY: `b.fa` was initialised above.
            let rc = unsafe { libc::posix_spawn_file_actions_adddup2(&mut b.fa, from, to) };
            if rc != 0 {
                return Err(format!(
                    "posix_spawn_file_actions_adddup2: {}",
                    std::io::Error::from_raw_os_error(rc)
                ));
            }
        }
        Ok(b)
    }

    pub(crate) fn as_ptr(&mut self) -> *const libc::posix_spawn_file_actions_t {
        &self.fa
    }

    pub(crate) fn clear(&mut self) {
        if self.live {
            // SAFETY: initialised and not yet destroyed.
            unsafe { libc::posix_spawn_file_actions_destroy(&mut self.fa) };
            self.live = false;
        }
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        self.clear();
    }
}

/// How often the watch looks at the cancellation token: a signal ends the
/// running command within this, and a thread waking this rarely costs the
/// timed runs nothing measurable.
const WATCH_POLL: Duration = Duration::from_millis(20);

/// Kills the process group of the command running now once `cancel` is
/// cancelled. The runs wait for their command in a blocking wait4 (its
/// return ends the timing, so no polling may delay it), and a signal
/// handler restarts that wait; so a thread of its own looks at the token.
/// The command leads its own process group, and SIGKILL to the group takes
/// a `sh -c` with whatever it started.
pub struct ChildWatch {
    cancel: CancelToken,
    /// The running command's pid (= its process group), 0 when none.
    current: Arc<AtomicI32>,
    stop: Arc<AtomicBool>,
}

impl ChildWatch {
    pub fn start(cancel: &CancelToken) -> Result<ChildWatch, String> {
        let (current, stop) = (
            Arc::new(AtomicI32::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (c, st, token) = (current.clone(), stop.clone(), cancel.clone());
        std::thread::Builder::new()
            .name("startup-watch".into())
            .spawn(move || {
                while !st.load(Ordering::SeqCst) {
                    if token.is_cancelled() {
                        let pg = c.load(Ordering::SeqCst);
                        if pg > 0 {
                            // SAFETY: kill has no memory preconditions. The
                            // pid is cleared only after the child is reaped,
                            // so it names our child's group, not a reused pid
                            // (reuse needs the whole pid space to wrap first).
                            unsafe { libc::kill(-pg, libc::SIGKILL) };
                        }
                    }
                    std::thread::sleep(WATCH_POLL);
                }
            })
            .map_err(|e| format!("cannot start the thread that watches for Ctrl-C: {e}"))?;
        Ok(ChildWatch {
            cancel: cancel.clone(),
            current,
            stop,
        })
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The child `pid` (leading its own group) is running.
    fn running(&self, pid: libc::pid_t) {
        self.current.store(pid, Ordering::SeqCst);
    }

    /// The child was reaped.
    fn reaped(&self) {
        self.current.store(0, Ordering::SeqCst);
    }
}

impl Drop for ChildWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// posix_spawn attributes: SIGPIPE back to its default (Rust ignores it,
/// and an ignored disposition survives exec), an empty signal mask, and a
/// process group of its own (for [`ChildWatch`]).
struct SpawnAttr {
    attr: libc::posix_spawnattr_t,
}

impl SpawnAttr {
    fn new() -> Result<Box<SpawnAttr>, String> {
        // SAFETY: zeroed storage is valid for init to overwrite.
        let mut b = Box::new(SpawnAttr {
            attr: unsafe { std::mem::zeroed() },
        });
        // SAFETY: the sigset values are valid storage for sigemptyset /
        // sigaddset; `b.attr` is initialised before the setters are called.
        unsafe {
            if libc::posix_spawnattr_init(&mut b.attr) != 0 {
                return Err("posix_spawnattr_init failed".into());
            }
            let mut def: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut def);
            libc::sigaddset(&mut def, libc::SIGPIPE);
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            libc::posix_spawnattr_setsigdefault(&mut b.attr, &def);
            libc::posix_spawnattr_setsigmask(&mut b.attr, &mask);
            // Group 0: the child's own pid.
            libc::posix_spawnattr_setpgroup(&mut b.attr, 0);
            let flags = (libc::POSIX_SPAWN_SETSIGDEF
                | libc::POSIX_SPAWN_SETSIGMASK
                | libc::POSIX_SPAWN_SETPGROUP) as libc::c_short;
            libc::posix_spawnattr_setflags(&mut b.attr, flags);
        }
        Ok(b)
    }
}

impl Drop for SpawnAttr {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed once.
        unsafe { libc::posix_spawnattr_destroy(&mut self.attr) };
    }
}

/// One finished run.
#[derive(Debug, Clone, Copy)]
pub struct RunResult {
    pub wall: Duration,
    /// Child CPU seconds.
    pub user: f64,
    pub system: f64,
    pub end: ChildEnd,
}

/// Runs a prepared command with stdio on /dev/null.
pub struct CommandRunner {
    cmd: Prepared,
    _null_in: std::fs::File,
    _null_out: std::fs::File,
    fa: Box<FileActions>,
    attr: Box<SpawnAttr>,
}

impl CommandRunner {
    pub fn new(cmd: Prepared) -> Result<CommandRunner, String> {
        let null_in =
            std::fs::File::open("/dev/null").map_err(|e| format!("cannot open /dev/null: {e}"))?;
        let null_out = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|e| format!("cannot open /dev/null: {e}"))?;
        let fa = FileActions::new(&[
            (null_in.as_raw_fd(), 0),
            (null_out.as_raw_fd(), 1),
            (null_out.as_raw_fd(), 2),
        ])?;
        Ok(CommandRunner {
            cmd,
            _null_in: null_in,
            _null_out: null_out,
            fa,
            attr: SpawnAttr::new()?,
        })
    }

    pub fn command(&self) -> &Prepared {
        &self.cmd
    }

    /// Start the command, wait for it, and time it with `now`; `watch`
    /// kills it once the run is cancelled (nothing starts after that).
    /// After a cancellation the result is not the command's own end: check
    /// the token first.
    pub fn run_once(
        &mut self,
        now: &dyn Fn() -> Duration,
        watch: &ChildWatch,
    ) -> Result<RunResult, String> {
        if watch.is_cancelled() {
            return Err("cancelled".into());
        }
        let mut pid: libc::pid_t = 0;
        let t0 = now();
        // SAFETY: path, argv and envp are NUL-/NULL-terminated and owned by
        // `self.cmd`; the file actions and attributes are initialised and
        // pinned in their boxes.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.cmd.path.as_ptr(),
                self.fa.as_ptr(),
                &self.attr.attr,
                self.cmd.argv.as_ptr().cast(),
                self.cmd.envp.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(format!(
                "cannot start {}: {}",
                self.cmd.program.display(),
                std::io::Error::from_raw_os_error(rc)
            ));
        }
        watch.running(pid);
        let mut status: libc::c_int = 0;
        // SAFETY: an all-zero rusage is valid storage for wait4 to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: valid out-pointers; `pid` is our child.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            if r == pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(format!("wait4: {e}"));
            }
        }
        let wall = now().saturating_sub(t0);
        watch.reaped();
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Ok(RunResult {
            wall,
            user: s(ru.ru_utime),
            system: s(ru.ru_stime),
            end: ChildEnd::from_wait_status(status),
        })
    }
}

/// The message for a run that did not exit with status 0.
pub fn failure_message(text: &str, end: ChildEnd) -> String {
    format!("command {text:?} {end}; pass --ignore-failure to time it anyway")
}

/// Why a check before measuring did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreflightError {
    /// The command failed, or could not start: the message says which.
    Failed(String),
    /// `cancel` was cancelled (a signal); the command was killed.
    Cancelled,
}

/// Run `text` once and check it exits with status 0: the check
/// `sysgauge startup` makes before measuring anything. Cancelling `cancel`
/// kills the command.
pub fn preflight(text: &str, shell: bool, cancel: &CancelToken) -> Result<(), PreflightError> {
    run_once_checked(text, shell, failure_message, cancel)
}

/// Run a `--prepare` command once (through the shell, as every run does):
/// one that fails stops everything, --ignore-failure or not.
pub fn preflight_prepare(text: &str, cancel: &CancelToken) -> Result<(), PreflightError> {
    run_once_checked(text, true, prepare_failure, cancel)
}

/// Run `text` once; a non-zero end is the error `failed` words.
fn run_once_checked(
    text: &str,
    shell: bool,
    failed: fn(&str, ChildEnd) -> String,
    cancel: &CancelToken,
) -> Result<(), PreflightError> {
    let mut r = CommandRunner::new(prepare(text, shell).map_err(PreflightError::Failed)?)
        .map_err(PreflightError::Failed)?;
    let watch = ChildWatch::start(cancel).map_err(PreflightError::Failed)?;
    let start = std::time::Instant::now();
    let res = r.run_once(&|| start.elapsed(), &watch);
    if cancel.is_cancelled() {
        return Err(PreflightError::Cancelled);
    }
    let res = res.map_err(PreflightError::Failed)?;
    if res.end.success() {
        Ok(())
    } else {
        Err(PreflightError::Failed(failed(text, res.end)))
    }
}

fn prepare_failure(text: &str, end: ChildEnd) -> String {
    format!("the --prepare command {text:?} {end}")
}

pub struct StartupBenchmark {
    options: Arc<StartupOptions>,
}

impl StartupBenchmark {
    pub fn new(options: Arc<StartupOptions>) -> Self {
        StartupBenchmark { options }
    }
}

impl Benchmark for StartupBenchmark {
    fn id(&self) -> &str {
        ID
    }

    fn describe(&self) -> Description {
        Description::new("wall time of a command from start to exit (ms per run), user and system time, shared libraries loaded", Unit::Milliseconds, Better::Lower)
    }

    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        self.options
            .commands
            .iter()
            .map(|c| {
                // Only present when given, so a case without them compares
                // with what was stored before they existed.
                let mut p = Params::new()
                    .with("command", c.as_str())
                    .with("shell", self.options.shell);
                if let Some(prep) = self.options.prepare.get(c) {
                    p.insert(PREPARE_PARAM, prep.as_str());
                }
                for (name, value) in self.options.parameters.get(c).into_iter().flatten() {
                    p.insert(&format!("{PARAMETER_PREFIX}{name}"), value.as_str());
                }
                p
            })
            .collect()
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let o = &self.options;
        let text = params
            .get_str("command")
            .ok_or_else(|| BenchError::failed("missing param 'command'"))?
            .to_string();
        let shell = params.get_bool("shell").unwrap_or(false);
        let prepared = prepare(&text, shell).map_err(BenchError::failed)?;
        ctx.note_detail("program", prepared.program.display().to_string());
        let cancel = ctx.cancel_token().clone();
        let watch = ChildWatch::start(&cancel).map_err(BenchError::failed)?;
        let libs = if o.skip_libraries {
            None
        } else {
            let counted = libraries::count(&prepared, &watch);
            cancel.check()?;
            match counted {
                Ok(l) => {
                    ctx.note_detail("libraries_method", l.method.as_str());
                    ctx.note_detail("library_paths", l.paths.join("\n"));
                    Some(l.paths.len())
                }
                Err(e) => {
                    ctx.note_detail("libraries_error", e);
                    None
                }
            }
        };
        let mut runner = CommandRunner::new(prepared).map_err(BenchError::failed)?;
        // hyperfine runs its --prepare through the shell (`sync; echo 3 >
        // /proc/sys/vm/drop_caches`), and so does this.
        let mut preparer = match params.get_str(PREPARE_PARAM) {
            Some(p) => Some((
                p.to_string(),
                CommandRunner::new(prepare(p, true).map_err(BenchError::failed)?)
                    .map_err(BenchError::failed)?,
            )),
            None => None,
        };
        let clock = ctx.clock().clone();
        let now = move || clock.now();
        let mut failed_runs: u64 = 0;
        let check = |res: &RunResult, failed: &mut u64| -> Result<(), BenchError> {
            if !res.end.success() {
                if !o.ignore_failure {
                    return Err(BenchError::failed(failure_message(&text, res.end)));
                }
                *failed += 1;
            }
            Ok(())
        };
        let min_runs = if o.min_runs == 0 {
            DEFAULT_MIN_RUNS
        } else {
            o.min_runs
        };
        let min_time = o
            .min_time
            .unwrap_or_else(|| FAMILY.info.budget(ctx.profile()));
        // hyperfine's rule. No time limit beyond the minimum: the runs stop
        // once both minimums are met, and `--max-runs` bounds the count.
        let rule = Rule::MinRunsAndTime {
            min_runs,
            min_time,
            max_runs: o.max_runs.unwrap_or(u64::MAX).max(1),
            max_time: Duration::MAX,
        };
        let (mut wall, mut user, mut system) = (Vec::new(), Vec::new(), Vec::new());
        let clock = ctx.clock().clone();
        let warmup = u64::from(ctx.warmup());
        Sampler::new(clock.as_ref(), &cancel).run(warmup, &rule, |phase| {
            // A cancelled run was killed by the watch: its end is not the
            // command's, so the token is looked at first.
            if let Some((text, p)) = preparer.as_mut() {
                let res = p.run_once(&now, &watch);
                cancel.check()?;
                let res = res.map_err(BenchError::failed)?;
                if !res.end.success() {
                    return Err(BenchError::failed(prepare_failure(text, res.end)));
                }
            }
            let res = runner.run_once(&now, &watch);
            cancel.check()?;
            let res = res.map_err(BenchError::failed)?;
            check(&res, &mut failed_runs)?;
            if phase == Phase::Warmup {
                // Failures count over the timed runs only.
                failed_runs = 0;
                return Ok(0.0);
            }
            let ms = res.wall.as_secs_f64() * 1e3;
            wall.push(ms);
            user.push(res.user * 1e3);
            system.push(res.system * 1e3);
            Ok(ms)
        })?;
        ctx.note_detail("runs", wall.len());
        ctx.note_detail("failed_runs", failed_runs);
        let outliers = sysgauge_stats::mad_outliers(&wall, OUTLIER_K);
        if !outliers.is_empty() {
            ctx.finding(
                Finding::new(
                    OUTLIERS,
                    Severity::Warning,
                    format!(
                        "{text}: {} of {} runs are statistical outliers (more than {OUTLIER_K} scaled MADs from the median)",
                        outliers.len(),
                        wall.len()
                    ),
                )
                .with_remedy("other programs were likely competing for the CPU; stop them (see `sysgauge procs`), use more --warmup runs against cold caches, and run again"),
            );
        }
        // user and system are kept as their means over the runs (one
        // sample each): the kernel measures a process's total CPU time
        // exactly but splits it into user and system by sampling at the
        // timer tick, so a run shorter than a tick is counted all-user or
        // all-system, and only the average over many runs means something.
        let mean = |v: &[f64]| vec![v.iter().sum::<f64>() / v.len().max(1) as f64];
        let mut metrics = vec![
            metric("user", Unit::Milliseconds, Better::Lower, mean(&user))?,
            metric("system", Unit::Milliseconds, Better::Lower, mean(&system))?,
        ];
        metrics.insert(0, metric("wall", Unit::Milliseconds, Better::Lower, wall)?);
        if let Some(n) = libs {
            metrics.push(metric(
                "libraries",
                Unit::Count,
                Better::Lower,
                vec![n as f64],
            )?);
        }
        Ok(metrics)
    }
}

// The startup family runs only the commands given to `sysgauge
// startup` (none in `sysgauge run`); its slice is the default
// minimum time of the timed runs of each command.
sysgauge_family::register_family! {
    name: "startup", options: StartupOptions, in_default_run: true,
    cpu_bound: false, summary_first: false,
    budget_seconds: [0.3, 3.0, 10.0, 30.0], report: Some(report::startup_report),
    summary: "start-up time of given commands against a baseline, and the shared libraries they load",
}

/// The startup benchmark (it has cases only when commands are given).
pub fn benchmarks(options: &Arc<StartupOptions>) -> Vec<Box<dyn Benchmark>> {
    vec![Box::new(StartupBenchmark::new(options.clone()))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::Profile;

    fn opts(commands: &[&str]) -> StartupOptions {
        StartupOptions {
            commands: commands.iter().map(|s| s.to_string()).collect(),
            min_runs: 5,
            min_time: Some(Duration::from_millis(20)),
            ..Default::default()
        }
    }

    /// The cases of `b` at the tiny profile.
    fn tiny_cases(b: &StartupBenchmark) -> Vec<Params> {
        b.cases(&Plan {
            profile: Profile::Tiny,
            threads: 1,
        })
    }

    /// A context with a case begun, as `run` finds it.
    fn case_ctx() -> RunCtx {
        let mut c = sysgauge_family::util::tiny_ctx(1);
        c.begin_case(Duration::from_millis(10));
        c
    }

    #[test]
    fn splitting_and_resolution() {
        let p = prepare("true --flag 'a b' \"c d\"", false).unwrap();
        assert_eq!(p.words, ["true", "--flag", "a b", "c d"]);
        assert!(p.program.is_absolute());
        let s = prepare("echo $HOME | wc -c", true).unwrap();
        assert_eq!(s.words, ["sh", "-c", "echo $HOME | wc -c"]);
        assert!(prepare("perl -e 'unterminated", false)
            .err()
            .unwrap_or_default()
            .contains("unbalanced"));
        assert!(prepare("   ", false).is_err());
        assert!(prepare("sysgauge-no-such-program-x", false)
            .err()
            .unwrap_or_default()
            .contains("not found on PATH"));
        assert!(prepare("/nonexistent/prog", false)
            .err()
            .unwrap_or_default()
            .contains("does not exist"));
    }

    #[test]
    fn preflight_reports_failure() {
        let none = CancelToken::new();
        assert_eq!(preflight("true", false, &none), Ok(()));
        let e = match preflight("false", false, &none) {
            Err(PreflightError::Failed(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(
            e.contains("exited with status 1") && e.contains("--ignore-failure"),
            "{e}"
        );
        let e = format!("{:?}", preflight("exit 3", true, &none));
        assert!(e.contains("status 3"), "{e}");
    }

    #[test]
    fn prepare_runs_before_every_run_and_its_failure_stops() {
        // The prepare appends "p", the command "c": every run of the
        // command (1 warm-up + 5 timed) follows its own prepare.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("log");
        let mut o = opts(&[&format!("printf c >> {}", f.display())]);
        o.shell = true;
        o.skip_libraries = true;
        o.min_time = Some(Duration::ZERO);
        o.prepare.insert(
            o.commands[0].clone(),
            format!("printf p >> {}", f.display()),
        );
        o.parameters
            .insert(o.commands[0].clone(), vec![("n".into(), "3".into())]);
        let b = StartupBenchmark::new(Arc::new(o.clone()));
        let cases = tiny_cases(&b);
        assert_eq!(
            cases[0].get_str(PREPARE_PARAM),
            o.prepare.values().next().map(String::as_str)
        );
        assert_eq!(cases[0].get_str("parameter.n"), Some("3"));
        let mut c = case_ctx();
        let m = b.run(&mut c, &cases[0]).unwrap();
        assert_eq!(m[0].samples.len(), 5);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "pc".repeat(6));
        // A prepare that fails fails the case, naming it.
        let mut o = opts(&["true"]);
        o.min_time = Some(Duration::ZERO);
        o.skip_libraries = true;
        o.prepare.insert("true".into(), "exit 3".into());
        let b = StartupBenchmark::new(Arc::new(o));
        let cases = tiny_cases(&b);
        let mut c = case_ctx();
        let e = b.run(&mut c, &cases[0]).unwrap_err().to_string();
        assert!(e.contains("--prepare command \"exit 3\""), "{e}");
        let none = CancelToken::new();
        assert!(format!("{:?}", preflight_prepare("exit 3", &none)).contains("exit 3"));
        assert!(preflight_prepare("true", &none).is_ok());
    }

    #[test]
    fn stdio_is_dev_null_and_runs_really_run() {
        // The command appends to a file each run: count the runs by that.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("count");
        let cmd = format!("printf x >> {}", f.display());
        let mut o = opts(&[&cmd]);
        o.shell = true;
        o.min_runs = 7;
        o.min_time = Some(Duration::ZERO);
        let b = StartupBenchmark::new(Arc::new(o));
        let cases = tiny_cases(&b);
        let mut c = case_ctx();
        let m = b.run(&mut c, &cases[0]).unwrap();
        assert_eq!(m[0].samples.len(), 7);
        let written = std::fs::read(&f).unwrap_or_default();
        // 1 warm-up + 7 timed, and the library count's run where it runs
        // the command under ptrace (the loader's trace, used where ptrace
        // is refused, as under qemu-user, lists libraries without running).
        let out = c.take_case_output();
        let counted = match out.details.get_str("libraries_method") {
            Some("maps-at-exit") => 1,
            _ => 0,
        };
        assert_eq!(written.len(), 8 + counted, "{written:?}");
    }

    #[test]
    fn measures_true_with_libraries() {
        let b = StartupBenchmark::new(Arc::new(opts(&["true"])));
        let cases = tiny_cases(&b);
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].get_str("command"), Some("true"));
        assert_eq!(cases[0].get_bool("shell"), Some(false));
        let mut c = case_ctx();
        let m = b.run(&mut c, &cases[0]).unwrap();
        let names: Vec<&str> = m.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["wall", "user", "system", "libraries"]);
        assert!(m[0].samples.len() >= 5);
        assert!(m[0].value() > 0.0 && m[0].value() < 1000.0);
        // /bin/true is dynamically linked: at least libc and the loader.
        assert!(m[3].value() >= 2.0, "{}", m[3].value());
        let out = c.take_case_output();
        assert!(out.details.get_str("libraries_method").is_some());
    }

    #[test]
    fn failing_command_fails_unless_ignored() {
        let b = StartupBenchmark::new(Arc::new(opts(&["false"])));
        let p = Params::new().with("command", "false").with("shell", false);
        let mut c = case_ctx();
        match b.run(&mut c, &p) {
            Err(BenchError::Failed(m)) => assert!(m.contains("--ignore-failure")),
            other => panic!("{other:?}"),
        }
        let mut o = opts(&["false"]);
        o.ignore_failure = true;
        o.max_runs = Some(3);
        o.skip_libraries = true;
        let b = StartupBenchmark::new(Arc::new(o));
        let m = b.run(&mut c, &p).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].samples.len(), 3);
        assert_eq!(c.take_case_output().details.get_u64("failed_runs"), Some(3));
    }
}
