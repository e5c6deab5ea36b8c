//! Exit codes and how fatal errors are reported: one line per error in the
//! chain, on stderr. A closed stdout (`sysgauge results list | head`) is not
//! an error.

use std::process::ExitCode;

/// The documented exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything ran.
    Ok = 0,
    /// At least one benchmark failed (or a comparison regressed).
    BenchFailed = 1,
    /// Usage error or fatal error.
    Fatal = 2,
    /// Interrupted: by Ctrl-C (130), SIGTERM (143) or SIGHUP (129); the
    /// code is 128 + the signal's number, see `signals`.
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        match e {
            Exit::Interrupted => ExitCode::from(crate::signals::interrupted_exit_code()),
            other => ExitCode::from(other as u8),
        }
    }
}

/// Print an error chain and choose the exit code.
pub fn report_error(err: &anyhow::Error) -> Exit {
    if crate::output::is_broken_pipe(err) {
        return Exit::Ok;
    }
    let mut chain = err.chain();
    if let Some(first) = chain.next() {
        eprintln!("sysgauge: error: {first}");
    }
    for cause in chain {
        eprintln!("  caused by: {cause}");
    }
    Exit::Fatal
}

/// A command line clap could not accept. A value that is not of its kind
/// (a size, a thread list, a selector) is one line in the same form as every
/// other error; help, version and structural mistakes (a missing argument,
/// an unknown flag) keep clap's own text with its usage hint. A value
/// outside a fixed list (`--kind pie`) names the values there are.
pub fn report_usage_error(e: clap::Error) -> Exit {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match e.kind() {
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) if !v.is_empty() => {
                    format!(" (possible values: {})", v.join(", "))
                }
                _ => String::new(),
            };
            eprintln!(
                "sysgauge: error: {}{valid}",
                first.strip_prefix("error: ").unwrap_or(first)
            );
            Exit::Fatal
        }
        _ => e.exit(),
    }
}
