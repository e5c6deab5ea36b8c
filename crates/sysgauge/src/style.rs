//! Colour for people, never for programs: `--color auto` colours a stream
//! only when it is a terminal and `NO_COLOR` is unset; `always` and `never`
//! force it. Only severity markers are coloured, so text stays greppable.

use crate::cli::ColorChoice;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Remember the user's choice for the whole process.
pub fn init(choice: ColorChoice) {
    let v = match choice {
        ColorChoice::Auto => 0,
        ColorChoice::Always => 1,
        ColorChoice::Never => 2,
    };
    CHOICE.store(v, Ordering::Relaxed);
}

/// Which stream a text is meant for.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

fn enabled(stream: Stream) -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && match stream {
                    Stream::Stdout => std::io::stdout().is_terminal(),
                    Stream::Stderr => std::io::stderr().is_terminal(),
                }
        }
    }
}

const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Colour the severity markers (`[critical]`, `[warning]`, `[info]`,
/// `[skipped]`, `FAILED`) of text going to `stream`.
pub fn paint(text: &str, stream: Stream) -> String {
    if !enabled(stream) {
        return text.to_string();
    }
    let mut s = text.to_string();
    for (marker, colour) in [
        ("[critical]", RED),
        ("FAILED", RED),
        ("[warning]", YELLOW),
        ("[skipped]", YELLOW),
        ("[info]", CYAN),
    ] {
        s = s.replace(marker, &format!("{colour}{marker}{RESET}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_on_and_off() {
        init(ColorChoice::Always);
        assert_eq!(
            paint("[warning] x", Stream::Stdout),
            "\x1b[33m[warning]\x1b[0m x"
        );
        init(ColorChoice::Never);
        assert_eq!(paint("[warning] x", Stream::Stdout), "[warning] x");
        init(ColorChoice::Auto);
    }
}
