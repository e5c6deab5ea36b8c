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

/// What every error the program prints starts with: those of a command
/// (`report_error`), of a command line clap refused (`report_usage_error`)
/// and of a command that goes on after one (`sysgauge: error: the upload
/// failed …`). clap's own `error: ` prefix is rewritten to this one, so a
/// script or a reader finds every error by one prefix.
pub const ERROR_PREFIX: &str = "sysgauge: error: ";

/// Print an error chain and choose the exit code.
pub fn report_error(err: &anyhow::Error) -> Exit {
    if crate::output::is_broken_pipe(err) {
        return Exit::Ok;
    }
    for line in error_lines(err) {
        eprintln!("{line}");
    }
    Exit::Fatal
}

/// The lines an error chain is printed as: the error, then each cause on a
/// line of its own, each distinct cause once. A layer whose text an earlier
/// line already holds is left out: a context or a library error often ends
/// with its source's message and also gives the source as its cause (`…:
/// disk I/O error`, then `disk I/O error`), which would print one cause
/// over and over.
fn error_lines(err: &anyhow::Error) -> Vec<String> {
    let mut shown: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || shown.iter().any(|s| s.contains(&text)) {
            continue;
        }
        shown.push(text);
    }
    shown
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            if i == 0 {
                format!("{ERROR_PREFIX}{text}")
            } else {
                format!("  caused by: {text}")
            }
        })
        .collect()
}

/// A command line clap could not accept, reported with the prefix every
/// other error has (clap's own is `error: `). A value that is not of its
/// kind (a size, a thread list, a selector) is one line; structural
/// mistakes (a missing argument, an unknown flag) keep the rest of clap's
/// text with its usage hint. A value outside a fixed list (`--kind pie`)
/// names the values there are. Help and version are no errors: clap prints
/// them as it does.
pub fn report_usage_error(e: clap::Error) -> Exit {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) if !v.is_empty() => {
                    format!(" (possible values: {})", v.join(", "))
                }
                _ => String::new(),
            };
            eprintln!("{ERROR_PREFIX}{}{valid}", without_clap_prefix(first));
            Exit::Fatal
        }
        _ => {
            let text = e.render().to_string();
            eprint!("{ERROR_PREFIX}{}", without_clap_prefix(&text));
            Exit::Fatal
        }
    }
}

/// clap's message without its own `error: ` prefix.
fn without_clap_prefix(text: &str) -> &str {
    text.strip_prefix("error: ").unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context that ends with its source's text, over a library error
    /// that does the same: the cause is printed once.
    #[test]
    fn each_distinct_cause_once() {
        let io = std::io::Error::other("No space left on device");
        let err = anyhow::Error::new(io)
            .context("No space left on device")
            .context("writing x.db: No space left on device")
            .context("storing the run");
        assert_eq!(
            error_lines(&err),
            [
                "sysgauge: error: storing the run",
                "  caused by: writing x.db: No space left on device",
            ]
        );
        let plain = anyhow::anyhow!("one").context("two");
        assert_eq!(
            error_lines(&plain),
            ["sysgauge: error: two", "  caused by: one"]
        );
    }
}
