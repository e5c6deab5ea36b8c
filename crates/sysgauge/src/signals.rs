//! Ctrl-C. The first SIGINT (or SIGTERM) asks the run to stop: benchmarks see
//! the cancellation token, finish their current repetition, clean up and
//! return; the run is stored as interrupted and we exit 130. A second signal
//! means the user will not wait: remove every scratch directory and exit 130
//! at once.

use anyhow::{Context, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use sysgauge_core::scratch;
use sysgauge_core::CancelToken;

static SIGNALS: AtomicUsize = AtomicUsize::new(0);

/// Install the handler (once per process) and return the token it cancels.
pub fn install() -> Result<CancelToken> {
    install_with(Some(
        "sysgauge: interrupted; finishing the current step and cleaning up (press Ctrl-C again to quit at once)",
    ))
}

/// Like `install`, with another note on the first signal (or none: for
/// `ping` and `listen` Ctrl-C is the ordinary way to stop, as with ping(8)).
pub fn install_with(note: Option<&'static str>) -> Result<CancelToken> {
    let token = CancelToken::new();
    let t = token.clone();
    ctrlc::set_handler(move || {
        if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
            if let Some(note) = note {
                eprintln!("\n{note}");
            }
            t.cancel();
        } else {
            scratch::remove_all_live();
            std::process::exit(130);
        }
    })
    .context("cannot install the Ctrl-C handler")?;
    Ok(token)
}
