//! How many shared libraries a command loads, counted so that "module X
//! adds 30 libraries" is visible.
//!
//! Primary method, `maps-at-exit`: run the command once under ptrace with
//! PTRACE_O_TRACEEXIT, so the kernel stops it at exit while its address
//! space is still whole, and count the distinct files with an executable
//! mapping in /proc/PID/maps other than the program itself: the dynamic
//! loader, every DT_NEEDED library, and every library loaded at run time
//! with dlopen (perl's XS modules such as POSIX.so, Python's extension
//! modules). The static alternatives (walking DT_NEEDED, or asking the
//! loader with LD_TRACE_LOADED_OBJECTS=1) see only what is linked, never
//! what an interpreter loads while it runs, which is exactly the cost people
//! want to see.
//!
//! Fallback, `loader-trace`: where ptrace is refused (a container without
//! CAP_SYS_PTRACE-like permission, seccomp, sysgauge itself being traced),
//! ask the glibc loader with LD_TRACE_LOADED_OBJECTS=1 and count the objects
//! it lists. The method used is recorded with the result.
//!
//! Either way the command runs in a process group of its own, watched by
//! the case's [`ChildWatch`], so a signal kills it as it kills the timed
//! runs; a cancelled count is not retried with the fallback.

use super::{ChildWatch, Prepared};
use std::ffi::CString;
use std::io::Read;
use std::os::fd::AsRawFd;

/// How the libraries were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryMethod {
    MapsAtExit,
    LoaderTrace,
}

impl LibraryMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            LibraryMethod::MapsAtExit => "maps-at-exit",
            LibraryMethod::LoaderTrace => "loader-trace",
        }
    }
}

/// The libraries a command loaded, in the order first seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Libraries {
    pub method: LibraryMethod,
    pub paths: Vec<String>,
}

/// Distinct files with an executable mapping in /proc/PID/maps text, other
/// than `exe` (the program itself). Anonymous and special mappings
/// (`[vdso]`, `[heap]`) have no path and are not counted.
pub fn parse_maps(text: &str, exe: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        let mut fields = [""; 5];
        let mut ok = true;
        for f in fields.iter_mut() {
            rest = rest.trim_start_matches(' ');
            match rest.find(' ') {
                Some(i) => {
                    *f = &rest[..i];
                    rest = &rest[i..];
                }
                None => {
                    *f = rest;
                    rest = "";
                    ok = false;
                }
            }
        }
        let _ = ok;
        let perms = fields[1];
        let path = rest.trim_start_matches(' ');
        if perms.as_bytes().get(2) != Some(&b'x') || !path.starts_with('/') {
            continue;
        }
        if Some(path) == exe || out.iter().any(|p| p == path) {
            continue;
        }
        out.push(path.to_string());
    }
    out
}

/// Objects listed by the glibc loader under LD_TRACE_LOADED_OBJECTS=1:
/// `name => /path (0x…)` and `/path (0x…)` lines. The vDSO (no file) and
/// libraries reported `not found` are not counted.
pub fn parse_loader_trace(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let path = match line.split_once(" => ") {
            Some((_, rhs)) => rhs,
            None => line,
        };
        let path = match path.rfind(" (0x") {
            Some(i) => &path[..i],
            None => continue,
        };
        if path.starts_with('/') && !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
    }
    out
}

/// Count the libraries `cmd` loads: maps at exit when ptrace is allowed,
/// else the loader's own list.
pub fn count(cmd: &Prepared, watch: &ChildWatch) -> Result<Libraries, String> {
    match maps_at_exit(cmd, watch) {
        Ok(paths) => Ok(Libraries {
            method: LibraryMethod::MapsAtExit,
            paths,
        }),
        Err(e) if watch.is_cancelled() => Err(e),
        Err(trace_err) => loader_trace(cmd, watch)
            .map(|paths| Libraries {
                method: LibraryMethod::LoaderTrace,
                paths,
            })
            .map_err(|e| format!("{trace_err}; the loader trace failed too: {e}")),
    }
}

/// Kills and reaps a child if we leave early, and tells the watch when the
/// child is gone.
struct Reaper<'a> {
    pid: libc::pid_t,
    armed: bool,
    watch: &'a ChildWatch,
}

impl<'a> Reaper<'a> {
    fn new(pid: libc::pid_t, watch: &'a ChildWatch) -> Reaper<'a> {
        watch.running(pid);
        Reaper {
            pid,
            armed: true,
            watch,
        }
    }
}

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        if self.armed {
            // SAFETY: `pid` is our own child, not yet reaped; SIGKILL to its
            // group then a blocking wait reaps it (a traced child dies on
            // SIGKILL too).
            unsafe {
                libc::kill(-self.pid, libc::SIGKILL);
            }
            let _ = crate::spawn::method::wait_for(self.pid);
        }
        self.watch.reaped();
    }
}

fn devnull(write: bool) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open("/dev/null")
        .map_err(|e| format!("cannot open /dev/null: {e}"))
}

fn maps_at_exit(cmd: &Prepared, watch: &ChildWatch) -> Result<Vec<String>, String> {
    let null_in = devnull(false)?;
    let null_out = devnull(true)?;
    let (fin, fout) = (null_in.as_raw_fd(), null_out.as_raw_fd());
    let (path, argv, envp) = (cmd.path.as_ptr(), cmd.argv.as_ptr(), cmd.envp.as_ptr());
    // SAFETY: fork has no preconditions. The child makes only
    // async-signal-safe calls (setpgid, ptrace, dup2, execve, _exit) on
    // data built before the fork, as required in a multi-threaded parent.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: see above.
        unsafe {
            // A group of its own, as every run (for the watch).
            libc::setpgid(0, 0);
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                libc::_exit(126);
            }
            libc::dup2(fin, 0);
            libc::dup2(fout, 1);
            libc::dup2(fout, 2);
            libc::execve(path, argv, envp);
            libc::_exit(127)
        }
    }
    if pid < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    // The parent sets the group too, so it exists before the watch may
    // signal it (whichever of the two calls runs first wins; the other
    // fails harmlessly).
    // SAFETY: setpgid on our own child has no memory preconditions.
    unsafe { libc::setpgid(pid, pid) };
    let mut guard = Reaper::new(pid, watch);
    let status = crate::spawn::method::wait_for(pid)
        .map_err(|e| format!("waitpid: {}", std::io::Error::from_raw_os_error(e)))?;
    if !libc::WIFSTOPPED(status) {
        guard.armed = false;
        return Err(format!(
            "the command could not be traced ({})",
            crate::spawn::method::ChildEnd::from_wait_status(status)
        ));
    }
    let opts = libc::PTRACE_O_TRACEEXIT | libc::PTRACE_O_EXITKILL;
    // SAFETY: `pid` is our stopped tracee; the options are valid flags.
    if unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, opts) } != 0 {
        return Err(format!(
            "PTRACE_SETOPTIONS: {}",
            std::io::Error::last_os_error()
        ));
    }
    let cont = |sig: libc::c_int| {
        // SAFETY: `pid` is our stopped tracee; `sig` is 0 or the signal
        // that stopped it, passed on unchanged.
        unsafe { libc::ptrace(libc::PTRACE_CONT, pid, 0, sig) }
    };
    cont(0);
    let mut found: Option<Vec<String>> = None;
    // Bounded: a program that keeps being stopped by signals more than this
    // is killed by the guard.
    for _ in 0..1_000_000 {
        let status = crate::spawn::method::wait_for(pid)
            .map_err(|e| format!("waitpid: {}", std::io::Error::from_raw_os_error(e)))?;
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            guard.armed = false;
            break;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xffff;
        if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_EXIT {
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .map_err(|e| format!("cannot read /proc/{pid}/maps: {e}"))?;
            let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
                .ok()
                .map(|p| p.display().to_string());
            found = Some(parse_maps(&maps, exe.as_deref()));
            cont(0);
        } else if sig == libc::SIGTRAP {
            // The legacy SIGTRAP after a further execve: not for the program.
            cont(0);
        } else {
            cont(sig);
        }
    }
    found.ok_or_else(|| "the command exited without an exit stop".to_string())
}

fn loader_trace(cmd: &Prepared, watch: &ChildWatch) -> Result<Vec<String>, String> {
    // Both ends close-on-exec; the child gets the writing end by dup2.
    let (mut reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let null_in = devnull(false)?;
    let null_out = devnull(true)?;
    let mut env: Vec<CString> = cmd.env.clone();
    env.push(c"LD_TRACE_LOADED_OBJECTS=1".to_owned());
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|c| c.as_ptr()).collect();
    envp.push(std::ptr::null());
    let mut fa = super::FileActions::new(&[
        (null_in.as_raw_fd(), 0),
        (writer.as_raw_fd(), 1),
        (null_out.as_raw_fd(), 2),
    ])?;
    let attr = super::SpawnAttr::new()?;
    let mut pid: libc::pid_t = 0;
    // SAFETY: valid path, argv and envp arrays (NULL-terminated, alive for
    // the call), initialised file actions and attributes.
    let rc = unsafe {
        libc::posix_spawn(
            &mut pid,
            cmd.path.as_ptr(),
            fa.as_ptr(),
            &attr.attr,
            cmd.argv.as_ptr().cast(),
            envp.as_ptr().cast(),
        )
    };
    drop(writer);
    if rc != 0 {
        return Err(format!(
            "posix_spawn: {}",
            std::io::Error::from_raw_os_error(rc)
        ));
    }
    let guard = Reaper::new(pid, watch);
    let mut out = Vec::new();
    // At most 1 MiB of listing; a program that ignores the variable and
    // prints more is not a loader listing anyway.
    let _ = reader.by_ref().take(1 << 20).read_to_end(&mut out);
    drop(reader);
    drop(guard);
    fa.clear();
    let paths = parse_loader_trace(&String::from_utf8_lossy(&out));
    if paths.is_empty() {
        return Err(
            "the loader listed no libraries (a static program, or not the glibc loader)".into(),
        );
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERL_POSIX_MAPS: &str = include_str!("../../tests/fixtures/perl-posix.maps");
    const PERL_LDD: &str = include_str!("../../tests/fixtures/perl.ld-trace");

    #[test]
    fn maps_count_executable_files_but_not_the_program() {
        let libs = parse_maps(PERL_POSIX_MAPS, Some("/usr/bin/perl"));
        assert!(libs.iter().any(|l| l.ends_with("/POSIX.so")), "{libs:?}");
        assert!(libs.iter().any(|l| l.ends_with("/Fcntl.so")), "{libs:?}");
        assert!(libs.iter().any(|l| l.contains("ld-linux")), "{libs:?}");
        assert!(!libs.iter().any(|l| l == "/usr/bin/perl"));
        assert!(!libs.iter().any(|l| l.contains("locale-archive")));
        assert!(!libs.iter().any(|l| l.starts_with('[')));
        let mut dedup = libs.clone();
        dedup.dedup();
        assert_eq!(dedup, libs);
        assert_eq!(libs.len(), 6, "{libs:?}");
    }

    #[test]
    fn maps_odd_lines() {
        let text = "7f00-7f01 r-xp 00000000 08:01 12 /opt/my lib/libx.so (deleted)\n\
                    7f01-7f02 r-xp 00000000 00:00 0 \n\
                    garbage\n\
                    7f02-7f03 rw-p 00000000 08:01 13 /usr/lib/liby.so\n";
        assert_eq!(
            parse_maps(text, None),
            vec!["/opt/my lib/libx.so (deleted)"]
        );
    }

    #[test]
    fn loader_trace_lines() {
        let libs = parse_loader_trace(PERL_LDD);
        assert_eq!(libs.len(), 4, "{libs:?}");
        assert!(libs[0].ends_with("libm.so.6"));
        assert!(libs.iter().any(|l| l.contains("ld-linux")));
        assert!(
            parse_loader_trace("\tlibfoo.so.1 => not found\n\tlinux-vdso.so.1 (0x00007ffd)\n")
                .is_empty()
        );
    }
}
