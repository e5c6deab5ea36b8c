//! Ctrl-C, `kill` and a closed terminal. The first SIGINT, SIGTERM or SIGHUP
//! asks the run to stop: benchmarks see the cancellation token, finish their
//! current repetition, clean up and return; the run is stored as interrupted
//! and we exit 128 + the signal's number (130 for SIGINT, 143 for SIGTERM,
//! 129 for SIGHUP), as a shell reports a process that signal killed. A
//! second signal means the caller will not wait: run the last-resort
//! clean-ups registered with [`at_quit`] (a fleet's ssh connections, which
//! live in process groups of their own), remove every scratch directory
//! and exit at once.
//!
//! signal-hook's iterator turns the signals into ordinary messages on a
//! thread of ours, so the reaction (printing, removing directories) runs
//! outside any signal handler.

use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;
use sysgauge_core::scratch;
use sysgauge_core::CancelToken;

/// The first signal received (0: none yet).
static FIRST: AtomicI32 = AtomicI32::new(0);

/// The token of the one handler thread: a second thread would see every
/// signal as the second one and quit at once.
static TOKEN: OnceLock<CancelToken> = OnceLock::new();

/// What a second signal runs before it exits (see [`at_quit`]).
type QuitHook = Box<dyn Fn() + Send>;
static AT_QUIT: std::sync::Mutex<Vec<QuitHook>> = std::sync::Mutex::new(Vec::new());

/// Registers `f` to run when a second signal makes the process quit at
/// once: for what the process made that nothing else would remove.
pub fn at_quit(f: impl Fn() + Send + 'static) {
    if let Ok(mut hooks) = AT_QUIT.lock() {
        hooks.push(Box::new(f));
    }
}

/// Install the handler and return the token it cancels.
pub fn install() -> Result<CancelToken> {
    install_with(Some(
        "finishing the current step and cleaning up (press Ctrl-C again to quit at once)",
    ))
}

/// Like `install`, with another note on the first signal (or none: for
/// `ping` and `listen` Ctrl-C is the ordinary way to stop, as with ping(8)).
/// Installs once per process; later calls return the same token.
pub fn install_with(note: Option<&'static str>) -> Result<CancelToken> {
    if let Some(t) = TOKEN.get() {
        return Ok(t.clone());
    }
    let token = CancelToken::new();
    let t = token.clone();
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot install the handler for SIGINT, SIGTERM and SIGHUP")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if FIRST
                    .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    // Cancel before printing: after SIGHUP the terminal may
                    // be gone and the write may fail.
                    t.cancel();
                    if sig == SIGHUP {
                        detach_from_terminal();
                    }
                    if let Some(note) = note {
                        let _ =
                            writeln!(std::io::stderr(), "\nsysgauge: {}; {note}", describe(sig));
                    }
                } else {
                    if let Ok(hooks) = AT_QUIT.lock() {
                        for hook in hooks.iter() {
                            hook();
                        }
                    }
                    scratch::remove_all_live();
                    std::process::exit(128 + sig);
                }
            }
        })
        .context("cannot start the signal-handling thread")?;
    // Commands install once, from the main thread, so this cannot race.
    let _ = TOKEN.set(token.clone());
    Ok(token)
}

/// The exit code of an interrupted run: 128 + the first signal's number
/// (130 when no signal was seen, as for Ctrl-C).
pub fn interrupted_exit_code() -> u8 {
    match FIRST.load(Ordering::SeqCst) {
        0 => 130,
        sig => u8::try_from(128 + sig).unwrap_or(130),
    }
}

/// The first signal received, if any (for `ping`, where Ctrl-C may end
/// the ping as it should while SIGTERM interrupts it).
pub fn first_signal() -> Option<i32> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// After a hangup nobody reads the terminal, and writing to it fails
/// (EIO): the closing output to stdout would fail the command. So
/// stdout and stderr that are (or were) terminals are pointed at
/// /dev/null; pipes and files (`--json -`, a log) are left alone.
fn detach_from_terminal() {
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    use rustix::io::Errno;
    use rustix::stdio::{dup2_stderr, dup2_stdout, stderr, stdout};
    // A terminal already hung up answers with EIO, not "not a terminal".
    let was_tty = |fd| match rustix::termios::tcgetattr(fd) {
        Ok(_) => true,
        Err(e) => e == Errno::IO,
    };
    // dup2 replaces the descriptor atomically, so no other thread sees it
    // closed.
    if was_tty(stdout()) {
        let _ = dup2_stdout(&null);
    }
    if was_tty(stderr()) {
        let _ = dup2_stderr(&null);
    }
}

fn describe(sig: i32) -> &'static str {
    match sig {
        SIGINT => "interrupted",
        SIGTERM => "terminated (SIGTERM)",
        SIGHUP => "hung up (SIGHUP)",
        _ => "signalled",
    }
}
