//! The ways of starting a process that the `spawn` family compares, each
//! reduced to "start the target once and wait for it", plus the prepared
//! exec arguments they share.
//!
//! Everything a child needs between fork/vfork/clone and `execve` (the path,
//! the argv and envp pointer arrays, the clone stack, the shell command line)
//! is built before any timing in an [`ExecPlan`]. That is not only to keep
//! allocation out of the timed loop: after `fork` in a multi-threaded parent
//! (sysgauge has a Ctrl-C thread, and the multi-spawner cases have several
//! spawning threads) the child may only make async-signal-safe calls, and
//! after `vfork`/`clone(CLONE_VM)` it shares the parent's memory, so it must
//! not allocate, lock or unwind. The children below only call `execve` and
//! `_exit` (and `write` for the fork+exit check), all async-signal-safe.
//!
//! A signal that reaches a child before its `execve` (a Ctrl-C sent to the
//! whole process group) runs the parent's handler there; sysgauge's handler
//! only writes one byte to its self-pipe, which is async-signal-safe and, in
//! a vfork child, runs on the stack below the suspended parent's frames. At
//! worst the parent sees the Ctrl-C twice and takes the "second Ctrl-C" path
//! (scratch removed, exit 130).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A way of starting a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `fork()`; the child `_exit(0)`s without exec: the price of copying
    /// the parent alone.
    ForkExit,
    /// `fork()` then `execve()` in the child.
    ForkExec,
    /// `vfork()` then `execve()` (the child borrows the parent's memory and
    /// the parent sleeps until the exec).
    VforkExec,
    /// `clone(CLONE_VM | CLONE_VFORK)` with its own small stack, then
    /// `execve()`: what glibc's posix_spawn does inside.
    CloneVforkExec,
    /// `posix_spawn()`.
    PosixSpawn,
    /// Rust's `std::process::Command::status()`.
    StdCommand,
    /// `popen(cmd, "r")` (runs `sh -c cmd`), read to EOF, `pclose()`.
    PopenSh,
    /// popen_noshell's pattern: `clone(CLONE_VM | SIGCHLD)` on a stack of
    /// its own (mmap'd, with a guard page), the child's stdout on a pipe
    /// the parent reads to EOF, `execve` of the target without a shell,
    /// then `waitpid`.
    CloneVmPipe,
    /// `system(cmd)` (runs `sh -c cmd`).
    System,
}

impl Method {
    pub const ALL: [Method; 9] = [
        Method::ForkExit,
        Method::ForkExec,
        Method::VforkExec,
        Method::CloneVforkExec,
        Method::PosixSpawn,
        Method::StdCommand,
        Method::PopenSh,
        Method::CloneVmPipe,
        Method::System,
    ];

    /// The method's name (the benchmark id is `spawn.<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Method::ForkExit => "fork-exit",
            Method::ForkExec => "fork-exec",
            Method::VforkExec => "vfork-exec",
            Method::CloneVforkExec => "clone-vfork-exec",
            Method::PosixSpawn => "posix-spawn",
            Method::StdCommand => "std-command",
            Method::PopenSh => "popen-sh",
            Method::CloneVmPipe => "clone-vm-pipe",
            Method::System => "system",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Method::ForkExit => "spawn.fork-exit",
            Method::ForkExec => "spawn.fork-exec",
            Method::VforkExec => "spawn.vfork-exec",
            Method::CloneVforkExec => "spawn.clone-vfork-exec",
            Method::PosixSpawn => "spawn.posix-spawn",
            Method::StdCommand => "spawn.std-command",
            Method::PopenSh => "spawn.popen-sh",
            Method::CloneVmPipe => "spawn.clone-vm-pipe",
            Method::System => "spawn.system",
        }
    }

    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// One line for `sysgauge list`.
    pub fn summary(self) -> &'static str {
        match self {
            Method::ForkExit => "fork() and an immediate _exit() in the child, no exec: the cost of copying the parent",
            Method::ForkExec => "fork() then execve() of the target, waited for",
            Method::VforkExec => "vfork() then execve() of the target (parent suspended, memory borrowed)",
            Method::CloneVforkExec => "clone(CLONE_VM|CLONE_VFORK) on a small stack then execve() of the target",
            Method::PosixSpawn => "posix_spawn() of the target, waited for",
            Method::StdCommand => "Rust std::process::Command::status() of the target",
            Method::PopenSh => "popen(\"target\", \"r\") through sh -c, read to EOF, pclose()",
            Method::CloneVmPipe => "popen_noshell's way: clone(CLONE_VM|SIGCHLD) on its own stack, stdout on a pipe read to EOF, execve() without a shell",
            Method::System => "system(\"target\") through sh -c",
        }
    }

    /// Whether the method execs a target at all.
    pub fn execs(self) -> bool {
        self != Method::ForkExit
    }

    /// Whether the method goes through `sh -c`.
    pub fn uses_shell(self) -> bool {
        matches!(self, Method::PopenSh | Method::System)
    }

    /// Whether this build can run the method on this architecture.
    pub fn available(self) -> Result<(), String> {
        match self {
            Method::VforkExec if !VFORK_SUPPORTED => Err(format!(
                "vfork+exec is implemented for x86_64 and aarch64; this build is for {}",
                std::env::consts::ARCH
            )),
            Method::CloneVmPipe if !CLONE_VM_PIPE_SUPPORTED => Err(format!(
                "clone-vm-pipe's child is raw system calls written for x86_64 and aarch64; this build is for {}",
                std::env::consts::ARCH
            )),
            Method::CloneVmPipe => shared_memory_child_allowed(),
            _ => Ok(()),
        }
    }
}

/// Whether clone(CLONE_VM) without CLONE_VFORK or CLONE_THREAD works here:
/// a kernel allows it, but qemu-user refuses it (EINVAL), so clone-vm-pipe
/// is then a method this machine cannot run, not a failure. Tried once per
/// process with a child that only exits.
fn shared_memory_child_allowed() -> Result<(), String> {
    static ANSWER: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    ANSWER
        .get_or_init(|| {
            extern "C" fn exit_at_once(_: *mut libc::c_void) -> libc::c_int {
                // SAFETY: _exit writes no memory and never returns.
                unsafe { libc::_exit(0) }
            }
            let mut stack = vec![0u8; 64 * 1024];
            let top = ((stack.as_mut_ptr() as usize + stack.len()) & !15) as *mut libc::c_void;
            // SAFETY: the child runs on `stack`, which outlives it (it is
            // reaped below before the vector is dropped), and only calls
            // _exit; it reads and writes nothing of the parent's.
            let pid = unsafe {
                libc::clone(
                    exit_at_once,
                    top,
                    libc::CLONE_VM | libc::SIGCHLD,
                    std::ptr::null_mut(),
                )
            };
            if pid < 0 {
                let errno = last_errno();
                return Err(format!(
                    "clone(CLONE_VM) of a process that is not a thread is refused here ({}); \
                     qemu-user does this",
                    std::io::Error::from_raw_os_error(errno)
                ));
            }
            let reaped = wait_for(pid);
            drop(stack);
            reaped
                .map(|_| ())
                .map_err(|errno| format!("cannot reap the clone probe: errno {errno}"))
        })
        .clone()
}

const VFORK_SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
const CLONE_VM_PIPE_SUPPORTED: bool = VFORK_SUPPORTED;

/// Why one spawn went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnError {
    /// The spawning call itself failed (`errno` given).
    Os { call: &'static str, errno: i32 },
    /// The child ended other than with exit status 0.
    Child(ChildEnd),
}

/// How a child ended, from its wait status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnd {
    Exited(i32),
    Signalled(i32),
    Other(i32),
}

impl ChildEnd {
    pub fn from_wait_status(status: libc::c_int) -> ChildEnd {
        if libc::WIFEXITED(status) {
            ChildEnd::Exited(libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            ChildEnd::Signalled(libc::WTERMSIG(status))
        } else {
            ChildEnd::Other(status)
        }
    }

    pub fn success(self) -> bool {
        self == ChildEnd::Exited(0)
    }
}

impl std::fmt::Display for ChildEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildEnd::Exited(127) => write!(
                f,
                "exited with status 127 (the program could not be executed)"
            ),
            ChildEnd::Exited(c) => write!(f, "exited with status {c}"),
            ChildEnd::Signalled(s) => write!(f, "was killed by signal {s}"),
            ChildEnd::Other(s) => write!(f, "ended with wait status {s:#x}"),
        }
    }
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::Os { call, errno } => write!(
                f,
                "{call} failed: {}",
                std::io::Error::from_raw_os_error(*errno)
            ),
            SpawnError::Child(end) => write!(f, "the child {end}"),
        }
    }
}

impl SpawnError {
    /// True when the child died of SIGINT: the user pressed Ctrl-C.
    pub fn is_interrupt(&self) -> bool {
        matches!(self, SpawnError::Child(ChildEnd::Signalled(libc::SIGINT)))
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Size of the stack the clone child runs on. It calls only `execve` and
/// `_exit` (a few hundred bytes); glibc's posix_spawn uses a stack of this
/// order too.
const CLONE_STACK: usize = 64 * 1024;

/// Everything one spawner needs, built before timing.
pub struct ExecPlan {
    path: CString,
    /// Owns the argument strings `argv` points into.
    _args: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    /// Owns the environment strings `envp` points into.
    _env: Vec<CString>,
    envp: Vec<*const libc::c_char>,
    /// The command line for popen/system (`sh -c` runs it).
    shell_cmd: CString,
    /// The same program for `std::process::Command`.
    std_program: PathBuf,
    std_args: Vec<OsString>,
    /// fork+exit's check: when set, the child writes one byte here first.
    marker_fd: libc::c_int,
    clone_stack: Vec<u8>,
    /// clone-vm-pipe's stack, mapped on first use of that method (in the
    /// warm-up of the shared timing loop, so never in a timed spawn).
    guarded_stack: Option<GuardedStack>,
    popen_buf: Vec<u8>,
}

// SAFETY: the raw pointers in `argv`/`envp` point into the heap buffers of
// the CStrings owned by the same `ExecPlan` (moving the struct does not move
// those buffers), and nothing mutates them after construction. Moving a plan
// to the thread that spawns with it is therefore sound.
unsafe impl Send for ExecPlan {}

fn cstring(bytes: &[u8], what: &str) -> Result<CString, String> {
    CString::new(bytes).map_err(|_| format!("{what} contains a NUL byte"))
}

impl ExecPlan {
    /// Prepare to run `program args…` with the current environment.
    pub fn new(program: &Path, args: &[&OsStr]) -> Result<ExecPlan, String> {
        let path = cstring(program.as_os_str().as_bytes(), "the program path")?;
        let mut owned = vec![path.clone()];
        for a in args {
            owned.push(cstring(a.as_bytes(), "an argument")?);
        }
        let mut argv: Vec<*const libc::c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut env = Vec::new();
        for (k, v) in std::env::vars_os() {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            // Variables with a NUL byte cannot exist in a real environment;
            // skip rather than fail.
            if let Ok(c) = CString::new(kv) {
                env.push(c);
            }
        }
        let mut envp: Vec<*const libc::c_char> = env.iter().map(|c| c.as_ptr()).collect();
        envp.push(std::ptr::null());
        let mut words: Vec<String> = Vec::new();
        for w in std::iter::once(program.as_os_str()).chain(args.iter().copied()) {
            let s = w
                .to_str()
                .ok_or_else(|| format!("{} is not valid UTF-8", w.to_string_lossy()))?;
            words.push(
                shlex::try_quote(s)
                    .map_err(|e| format!("cannot quote {s:?} for sh -c: {e}"))?
                    .into_owned(),
            );
        }
        let shell_cmd = cstring(words.join(" ").as_bytes(), "the shell command")?;
        Ok(ExecPlan {
            path,
            _args: owned,
            argv,
            _env: env,
            envp,
            shell_cmd,
            std_program: program.to_path_buf(),
            std_args: args.iter().map(|a| a.to_os_string()).collect(),
            marker_fd: -1,
            clone_stack: vec![0u8; CLONE_STACK],
            guarded_stack: None,
            popen_buf: vec![0u8; 4096],
        })
    }

    /// For fork+exit's check: make the child write one byte to `fd` (which
    /// must stay open while the plan is used) before it exits.
    pub fn with_marker_fd(mut self, fd: libc::c_int) -> ExecPlan {
        self.marker_fd = fd;
        self
    }

    /// The command line popen and system hand to `sh -c`.
    pub fn shell_command(&self) -> &str {
        self.shell_cmd.to_str().unwrap_or("")
    }

    /// Start the target once by `method` and wait for it; `Ok` only when it
    /// exited with status 0.
    pub fn spawn(&mut self, method: Method) -> Result<(), SpawnError> {
        match method {
            Method::ForkExit => self.fork_exit(),
            Method::ForkExec => self.fork_exec(),
            Method::VforkExec => self.vfork_exec(),
            Method::CloneVforkExec => self.clone_vfork_exec(),
            Method::PosixSpawn => self.posix_spawn(),
            Method::StdCommand => self.std_command(),
            Method::PopenSh => self.popen(),
            Method::CloneVmPipe => self.clone_vm_pipe(&mut |_| {}).map(|_| ()),
            Method::System => self.system(),
        }
    }

    fn fork_exit(&mut self) -> Result<(), SpawnError> {
        let fd = self.marker_fd;
        let mark = b".";
        // SAFETY: fork has no preconditions. In the child (pid 0) only
        // async-signal-safe calls follow (`write`, `_exit`), on memory that
        // existed before the fork, as POSIX requires in a multi-threaded
        // parent; `_exit` skips atexit handlers and stdio flushing, which
        // belong to the parent.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: see above; `mark` is a valid 1-byte buffer.
            unsafe {
                if fd >= 0 {
                    libc::write(fd, mark.as_ptr().cast(), 1);
                }
                libc::_exit(0)
            }
        }
        self.reap("fork", pid)
    }

    fn fork_exec(&mut self) -> Result<(), SpawnError> {
        let (path, argv, envp) = (self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr());
        // SAFETY: fork has no preconditions. The child calls only `execve`
        // and `_exit` (async-signal-safe) with pointers to NUL-terminated
        // strings and NULL-terminated arrays built before the fork, which the
        // child's copy of memory still holds.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: see above.
            unsafe {
                libc::execve(path, argv, envp);
                libc::_exit(127)
            }
        }
        self.reap("fork", pid)
    }

    fn vfork_exec(&mut self) -> Result<(), SpawnError> {
        if !VFORK_SUPPORTED {
            return Err(SpawnError::Os {
                call: "vfork",
                errno: libc::ENOSYS,
            });
        }
        // SAFETY: the pointers are valid NUL-terminated strings and
        // NULL-terminated arrays owned by `self`, alive across the call; see
        // `raw_vfork_exec` for why the vfork itself is sound.
        let ret =
            unsafe { raw_vfork_exec(self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr()) };
        if ret < 0 {
            return Err(SpawnError::Os {
                call: "vfork",
                errno: i32::try_from(-ret).unwrap_or(libc::EINVAL),
            });
        }
        let pid = libc::pid_t::try_from(ret).unwrap_or(-1);
        self.reap("vfork", pid)
    }

    fn clone_vfork_exec(&mut self) -> Result<(), SpawnError> {
        let args = CloneArgs {
            path: self.path.as_ptr(),
            argv: self.argv.as_ptr(),
            envp: self.envp.as_ptr(),
            stdout: -1,
        };
        // The stack grows down on every architecture sysgauge runs on; the
        // top is aligned to 16 bytes as the ABIs require.
        let base = self.clone_stack.as_mut_ptr() as usize;
        let top = (base + self.clone_stack.len()) & !15;
        // SAFETY: `clone_child` runs on `clone_stack` (owned by self, not
        // used by anything else while the parent is suspended) and only
        // calls `execve` and `_exit`, reading `args`, which lives on the
        // parent's stack until clone returns. CLONE_VFORK suspends this
        // thread until the child has exec'd or exited, so `args` and the
        // stack outlive the child's use of them. The child shares memory
        // (CLONE_VM) but writes nothing the parent reads, except possibly
        // errno (thread-local of this thread) if execve fails, and errno is
        // not read by the parent afterwards.
        let pid = unsafe {
            libc::clone(
                clone_child,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&args as *const CloneArgs).cast_mut().cast(),
            )
        };
        self.reap("clone", pid)
    }

    fn posix_spawn(&mut self) -> Result<(), SpawnError> {
        let mut pid: libc::pid_t = 0;
        // SAFETY: every pointer is valid for the call (NUL-terminated path,
        // NULL-terminated argv/envp owned by self); null file actions and
        // attributes mean "inherit everything", which posix_spawn allows.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.path.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                self.argv.as_ptr().cast(),
                self.envp.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(SpawnError::Os {
                call: "posix_spawn",
                errno: rc,
            });
        }
        self.reap("posix_spawn", pid)
    }

    fn std_command(&mut self) -> Result<(), SpawnError> {
        // Built per spawn on purpose: constructing the Command is part of
        // what a program using the standard library pays for every process.
        let status = std::process::Command::new(&self.std_program)
            .args(&self.std_args)
            .status()
            .map_err(|e| SpawnError::Os {
                call: "Command::status",
                errno: e.raw_os_error().unwrap_or(0),
            })?;
        use std::os::unix::process::ExitStatusExt;
        let end = ChildEnd::from_wait_status(status.into_raw());
        if end.success() {
            Ok(())
        } else {
            Err(SpawnError::Child(end))
        }
    }

    fn popen(&mut self) -> Result<(), SpawnError> {
        // SAFETY: the command and mode are valid NUL-terminated strings.
        let f = unsafe { libc::popen(self.shell_cmd.as_ptr(), c"r".as_ptr()) };
        if f.is_null() {
            return Err(SpawnError::Os {
                call: "popen",
                errno: last_errno(),
            });
        }
        // Read to EOF as a popen user does (the targets print nothing, so
        // this returns as soon as the child has gone).
        loop {
            // SAFETY: `popen_buf` is a valid writable buffer of its length
            // and `f` a FILE* from popen that is still open.
            let n = unsafe {
                libc::fread(
                    self.popen_buf.as_mut_ptr().cast(),
                    1,
                    self.popen_buf.len(),
                    f,
                )
            };
            if n == 0 {
                break;
            }
        }
        // SAFETY: `f` came from popen and is closed exactly once here.
        let status = unsafe { libc::pclose(f) };
        if status == -1 {
            return Err(SpawnError::Os {
                call: "pclose",
                errno: last_errno(),
            });
        }
        check(status)
    }

    /// popen_noshell's pattern, once: returns how many bytes the child
    /// wrote to its stdout, each chunk handed to `sink` as it is read.
    ///
    /// Unlike clone-vfork-exec the parent is not suspended: it runs on
    /// while the child, sharing its memory, is still before its `execve`.
    /// What the child reads (`args`, on this frame, and the plan's argv and
    /// envp) stays untouched until `waitpid` has reaped it, and the child
    /// writes only to its own stack. It must not write the parent's memory
    /// at all, and libc's wrappers would: a failing `dup3` or `execve`
    /// sets errno, which (no CLONE_SETTLS) is this thread's errno, read
    /// concurrently by the parent's `read` loop. Hence the child is raw
    /// system calls (`clone_pipe_child`).
    pub fn clone_vm_pipe(&mut self, sink: &mut dyn FnMut(&[u8])) -> Result<u64, SpawnError> {
        if !CLONE_VM_PIPE_SUPPORTED {
            return Err(SpawnError::Os {
                call: "clone",
                errno: libc::ENOSYS,
            });
        }
        if self.guarded_stack.is_none() {
            self.guarded_stack =
                Some(
                    GuardedStack::new(CLONE_STACK).map_err(|errno| SpawnError::Os {
                        call: "mmap",
                        errno,
                    })?,
                );
        }
        let top = match &self.guarded_stack {
            Some(s) => s.top(),
            None => {
                return Err(SpawnError::Os {
                    call: "mmap",
                    errno: libc::ENOMEM,
                })
            }
        };
        let (read_end, write_end) = stdout_pipe()?;
        let args = CloneArgs {
            path: self.path.as_ptr(),
            argv: self.argv.as_ptr(),
            envp: self.envp.as_ptr(),
            stdout: write_end.as_raw_fd(),
        };
        // SAFETY: `clone_pipe_child` runs on the guarded stack (owned by
        // self, used by no one else: the previous child was reaped) and
        // makes only raw system calls that read `args` and the argv/envp
        // arrays, all alive and unmodified until `wait_for` below has
        // reaped the child; it never returns, so the stack's guard page is
        // only there against a bug. Without CLONE_FILES the child has its
        // own copy of the descriptor table, so its dup3 does not touch ours.
        let pid = unsafe {
            libc::clone(
                clone_pipe_child,
                top,
                libc::CLONE_VM | libc::SIGCHLD,
                (&args as *const CloneArgs).cast_mut().cast(),
            )
        };
        if pid < 0 {
            return Err(SpawnError::Os {
                call: "clone",
                errno: last_errno(),
            });
        }
        // Only the child may hold the write end now, or the read below
        // would never see EOF.
        drop(write_end);
        let mut total = 0u64;
        let mut read_error = None;
        loop {
            // SAFETY: `popen_buf` is a valid writable buffer of its length
            // and `read_end` an open descriptor.
            let n = unsafe {
                libc::read(
                    read_end.as_raw_fd(),
                    self.popen_buf.as_mut_ptr().cast(),
                    self.popen_buf.len(),
                )
            };
            match n {
                0 => break,
                n if n > 0 => {
                    let n = n as usize;
                    total += n as u64;
                    sink(&self.popen_buf[..n]);
                }
                _ => {
                    let e = last_errno();
                    if e == libc::EINTR {
                        continue;
                    }
                    read_error = Some(e);
                    break;
                }
            }
        }
        drop(read_end);
        // Reaped whatever happened to the read: the child's memory is ours.
        let status = wait_for(pid).map_err(|errno| SpawnError::Os {
            call: "waitpid",
            errno,
        })?;
        if let Some(errno) = read_error {
            return Err(SpawnError::Os {
                call: "read",
                errno,
            });
        }
        check(status).map(|()| total)
    }

    fn system(&mut self) -> Result<(), SpawnError> {
        // SAFETY: the command is a valid NUL-terminated string. system()
        // changes SIGINT/SIGQUIT dispositions process-wide while it waits,
        // which is why the family never runs it from several threads.
        let status = unsafe { libc::system(self.shell_cmd.as_ptr()) };
        if status == -1 {
            return Err(SpawnError::Os {
                call: "system",
                errno: last_errno(),
            });
        }
        check(status)
    }

    fn reap(&self, call: &'static str, pid: libc::pid_t) -> Result<(), SpawnError> {
        if pid < 0 {
            return Err(SpawnError::Os {
                call,
                errno: last_errno(),
            });
        }
        check(wait_for(pid).map_err(|errno| SpawnError::Os {
            call: "waitpid",
            errno,
        })?)
    }
}

fn check(status: libc::c_int) -> Result<(), SpawnError> {
    let end = ChildEnd::from_wait_status(status);
    if end.success() {
        Ok(())
    } else {
        Err(SpawnError::Child(end))
    }
}

/// Wait for `pid` to end, retrying on EINTR; returns the wait status.
pub fn wait_for(pid: libc::pid_t) -> Result<libc::c_int, i32> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = last_errno();
        if r == -1 && e == libc::EINTR {
            continue;
        }
        return Err(e);
    }
}

#[repr(C)]
struct CloneArgs {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    /// clone-vm-pipe: the pipe's write end, to become the child's stdout.
    stdout: libc::c_int,
}

/// The clone child: exec the target or exit 127. Runs on its own stack in
/// the parent's address space; it must not allocate or unwind.
extern "C" fn clone_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points to the parent's `CloneArgs`, alive until the
    // parent resumes (after our exec or exit); execve and _exit are
    // async-signal-safe and need no allocation.
    unsafe {
        let a = &*(arg as *const CloneArgs);
        libc::execve(a.path, a.argv, a.envp);
        libc::_exit(127)
    }
}

/// A pipe for a child's stdout, both ends close-on-exec, the write end
/// numbered above 2 (a `dup3` onto 1 of descriptor 1 itself would fail, and
/// one that is 0 or 2 would be overwritten by the child's own stdio).
fn stdout_pipe() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: `fds` is a valid out-array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SpawnError::Os {
            call: "pipe2",
            errno: last_errno(),
        });
    }
    // SAFETY: pipe2 succeeded, so both are open descriptors we now own.
    let (r, mut w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    if w.as_raw_fd() <= 2 {
        // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new one.
        let moved = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
        if moved < 0 {
            return Err(SpawnError::Os {
                call: "fcntl",
                errno: last_errno(),
            });
        }
        // SAFETY: `moved` is a new open descriptor we own.
        w = unsafe { OwnedFd::from_raw_fd(moved) };
    }
    Ok((r, w))
}

/// A stack for a `clone(CLONE_VM)` child: an anonymous private mapping
/// whose lowest page is PROT_NONE, so a child that overran it would fault
/// instead of writing into whatever lies below (popen_noshell's layout).
struct GuardedStack {
    base: *mut libc::c_void,
    len: usize,
}

impl GuardedStack {
    fn new(usable: usize) -> Result<GuardedStack, i32> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = usable.div_ceil(page) * page + page;
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(last_errno());
        }
        let stack = GuardedStack { base, len };
        // SAFETY: the first page lies inside the mapping made above.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(last_errno());
        }
        Ok(stack)
    }

    /// The initial stack pointer: the end of the mapping (stacks grow
    /// down on every architecture sysgauge runs on), 16-byte aligned.
    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is page-aligned.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

impl Drop for GuardedStack {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours and no child runs on it any more
        // (every clone-vm-pipe child is reaped before its spawn returns).
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

// SAFETY: the mapping is owned by the plan, used only by the thread that
// spawns with it; the pointer is not shared.
unsafe impl Send for GuardedStack {}

/// The clone-vm-pipe child: `dup3(stdout, 1, 0)`, `execve`, and
/// `exit_group(127)` when either fails, as raw system calls that write no
/// memory (no errno: see [`ExecPlan::clone_vm_pipe`]). It never returns.
extern "C" fn clone_pipe_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points to the parent's `CloneArgs`, which the parent
    // keeps alive and unmodified until it has reaped this child. The loads
    // happen before the block; inside it only system calls run.
    let (path, argv, envp, fd) = unsafe {
        let a = &*(arg as *const CloneArgs);
        (a.path, a.argv, a.envp, a.stdout)
    };
    #[cfg(target_arch = "x86_64")]
    // SAFETY: see the function's doc; the child never leaves the block.
    unsafe {
        std::arch::asm!(
            "mov eax, 292",         // dup3(fd, 1, 0)
            "syscall",
            "test rax, rax",
            "js 3f",
            "mov rdi, r8",          // execve(path, argv, envp)
            "mov rsi, r9",
            "mov rdx, r10",
            "mov eax, 59",
            "syscall",
            "3:",
            "mov edi, 127",         // dup3 or execve failed
            "mov eax, 231",         // exit_group
            "syscall",
            "ud2",
            in("rdi") fd as isize,
            in("rsi") 1isize,
            in("rdx") 0isize,
            in("r8") path,
            in("r9") argv,
            in("r10") envp,
            options(noreturn),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as for x86_64.
    unsafe {
        std::arch::asm!(
            "mov x8, #24",          // dup3(fd, 1, 0)
            "svc #0",
            "tbnz x0, #63, 3f",
            "mov x0, x9",           // execve(path, argv, envp)
            "mov x1, x10",
            "mov x2, x11",
            "mov x8, #221",
            "svc #0",
            "3:",
            "mov x0, #127",         // dup3 or execve failed
            "mov x8, #94",          // exit_group
            "svc #0",
            "brk #0",
            in("x0") fd as isize,
            in("x1") 1isize,
            in("x2") 0isize,
            in("x9") path,
            in("x10") argv,
            in("x11") envp,
            options(noreturn),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // Never cloned: `Method::available` refuses the method here.
        let _ = (path, argv, envp, fd);
        // SAFETY: _exit is async-signal-safe and writes no memory.
        unsafe { libc::_exit(127) }
    }
}

/// vfork() + execve() in one block of assembly; returns the child's pid or a
/// negative errno (`-ENOSYS` on an architecture without the block).
///
/// Why assembly: a vfork child runs on the parent's stack until it execs, so
/// "returns twice" is more than a curiosity: if the child returned from a
/// function, spilled a register or let the compiler reuse a stack slot, it
/// would overwrite the frame the parent resumes in. Rust has no
/// `returns_twice` attribute to make calling libc's `vfork` safe, so the
/// system calls are made inside one `asm!` block: the child never leaves it
/// (it execs, or exits with 127 when the exec fails), touches no memory (the
/// arguments are in registers and the block is `nostack`), and the parent
/// leaves it once, as from any other block. `exit_group` in the child ends
/// only the child, which is its own thread group.
///
/// aarch64 has no vfork system call; like glibc, it uses clone with
/// CLONE_VM | CLONE_VFORK | SIGCHLD and the parent's stack pointer (0).
///
/// # Safety
/// `path` must be a NUL-terminated string and `argv`/`envp` NULL-terminated
/// arrays of NUL-terminated strings, valid until this returns.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(unused_variables)
)]
unsafe fn raw_vfork_exec(
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> isize {
    #[cfg(target_arch = "x86_64")]
    {
        let ret: isize;
        // SAFETY: see the function's doc; the syscall instruction clobbers
        // only rax, rcx and r11, all declared; rdi/rsi/rdx survive the vfork
        // so the child finds execve's arguments in place.
        unsafe {
            std::arch::asm!(
                "syscall",              // vfork (rax = 58)
                "test rax, rax",
                "jnz 2f",               // parent (pid > 0) or error (< 0)
                "mov eax, 59",          // child: execve(rdi, rsi, rdx)
                "syscall",
                "mov edi, 127",         // exec failed
                "mov eax, 231",         // exit_group
                "syscall",
                "ud2",
                "2:",
                inlateout("rax") libc::SYS_vfork as isize => ret,
                in("rdi") path,
                in("rsi") argv,
                in("rdx") envp,
                out("rcx") _,
                out("r11") _,
                options(nostack),
            );
        }
        ret
    }
    #[cfg(target_arch = "aarch64")]
    {
        let ret: isize;
        let flags = (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as isize;
        // SAFETY: as for x86_64; `svc #0` returns in x0 and preserves the
        // other registers, so the child finds execve's arguments in x9-x11.
        unsafe {
            std::arch::asm!(
                "svc #0",               // clone(flags, 0, 0, 0, 0) (x8 = 220)
                "cbnz x0, 2f",          // parent (pid > 0) or error (< 0)
                "mov x0, x9",           // child: execve(path, argv, envp)
                "mov x1, x10",
                "mov x2, x11",
                "mov x8, #221",
                "svc #0",
                "mov x0, #127",         // exec failed
                "mov x8, #94",          // exit_group
                "svc #0",
                "2:",
                inlateout("x0") flags => ret,
                inlateout("x1") 0usize => _,
                inlateout("x2") 0usize => _,
                inlateout("x3") 0usize => _,
                inlateout("x4") 0usize => _,
                inlateout("x8") libc::SYS_clone as usize => _,
                in("x9") path,
                in("x10") argv,
                in("x11") envp,
                options(nostack),
            );
        }
        ret
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        -(libc::ENOSYS as isize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_fds() -> usize {
        std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
    }

    /// No more descriptors open than `before`: the other tests of this
    /// process open and close files at any moment, so a count above it
    /// must stay above for a second (a leak stays; theirs close).
    #[track_caller]
    fn assert_no_fd_leak(before: usize, what: &str) {
        for _ in 0..100 {
            if open_fds() <= before {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("{what}: {} descriptors open, {before} before", open_fds());
    }

    /// popen_noshell's pattern reads what the child printed to the end:
    /// more than a pipe's buffer, so the child blocks until the parent has
    /// read, and the byte count and contents are exact.
    #[test]
    fn clone_vm_pipe_reads_the_whole_output() {
        if Method::CloneVmPipe.available().is_err() {
            return;
        }
        let head = sysgauge_core::bench::find_program("head").expect("coreutils head");
        let mut plan = ExecPlan::new(
            &head,
            &[
                OsStr::new("-c"),
                OsStr::new("300000"),
                OsStr::new("/dev/zero"),
            ],
        )
        .unwrap();
        let before = open_fds();
        for _ in 0..3 {
            let mut seen = 0u64;
            let mut nonzero = false;
            let n = plan
                .clone_vm_pipe(&mut |b| {
                    seen += b.len() as u64;
                    nonzero |= b.iter().any(|&x| x != 0);
                })
                .unwrap();
            assert_eq!(n, 300_000);
            assert_eq!(seen, 300_000);
            assert!(!nonzero);
        }
        assert_no_fd_leak(before, "the pipe's descriptors leaked");
        let echo = sysgauge_core::bench::find_program("echo").expect("coreutils echo");
        let mut plan = ExecPlan::new(&echo, &[OsStr::new("a b")]).unwrap();
        let mut out = Vec::new();
        plan.clone_vm_pipe(&mut |b| out.extend_from_slice(b))
            .unwrap();
        assert_eq!(
            out, b"a b\n",
            "arguments reach the program unsplit (no shell)"
        );
    }

    /// An exec that fails is the child's exit status 127, after which the
    /// plan still works (the stack and descriptors were cleaned up).
    #[test]
    fn clone_vm_pipe_reports_a_failed_exec() {
        if Method::CloneVmPipe.available().is_err() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut plan = ExecPlan::new(&dir.path().join("missing"), &[]).unwrap();
        let before = open_fds();
        for _ in 0..3 {
            match plan.spawn(Method::CloneVmPipe) {
                Err(SpawnError::Child(ChildEnd::Exited(127))) => {}
                other => panic!("expected exit status 127, got {other:?}"),
            }
        }
        assert_no_fd_leak(before, "a failed exec leaked descriptors");
        let t = sysgauge_core::bench::find_program("true").expect("coreutils true");
        let mut plan = ExecPlan::new(&t, &[]).unwrap();
        assert_eq!(plan.clone_vm_pipe(&mut |_| {}), Ok(0));
    }

    #[test]
    fn guarded_stack_has_a_guard_page() {
        let s = GuardedStack::new(CLONE_STACK).unwrap();
        assert_eq!(s.top() as usize % 16, 0);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let base = s.base as usize;
        let guard = maps.lines().find(|l| {
            l.split('-')
                .next()
                .and_then(|a| usize::from_str_radix(a, 16).ok())
                == Some(base)
        });
        let guard = guard.expect("the stack's mapping is listed");
        assert!(guard.contains(" ---p "), "{guard}");
    }
}
