//! sysgauge: measure how fast a machine really is, and compare machines
//! honestly. `main` only parses the command line, dispatches, and maps the
//! outcome to an exit code; each subcommand lives in `commands/`.

#![forbid(unsafe_code)]

// Every `eprintln!` and `eprint!` of this crate is one of these two, not
// std's (macros defined here, before the modules, shadow the prelude's in
// all of them). std's panics when stderr is closed or full (`2>&1 | head`,
// `2>/dev/full`): a progress line or a warning nobody can read then must
// not crash a run and leave it `running`. See `output::stderr`.
macro_rules! eprintln {
    () => {
        $crate::output::stderr(::std::format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::stderr(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::output::stderr(::std::format_args!($($arg)*))
    };
}

mod cli;
mod commands;
mod config;
mod db;
mod exit;
mod importing;
mod machines;
mod measure;
mod netconfig;
mod output;
mod progress;
mod signals;
mod style;
mod upload;
mod values;

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

fn main() -> ExitCode {
    // `--version` says what was built: the target and the CPU features
    // compiled in (the build record of every run says the same).
    let cmd = cli::Cli::command().long_version(measure::long_version());
    let cli = match cmd.try_get_matches().and_then(|m| {
        db::note_named(named_db(&m));
        cli::Cli::from_arg_matches(&m)
    }) {
        Ok(cli) => cli,
        Err(e) => return exit::report_usage_error(e).into(),
    };
    style::init(cli.color);
    sysgauge_store::on_notice(|text| eprintln!("sysgauge: {text}"));
    match commands::dispatch(cli) {
        Ok(code) => code.into(),
        Err(err) => exit::report_error(&err).into(),
    }
}

/// The `--db` (or SYSGAUGE_DB) the command line gives, whichever command
/// takes it: the option is global, so the innermost subcommand has it.
fn named_db(m: &clap::ArgMatches) -> Option<std::path::PathBuf> {
    let mut m = m;
    while let Some((_, sub)) = m.subcommand() {
        m = sub;
    }
    m.try_get_one::<std::path::PathBuf>("db")
        .ok()
        .flatten()
        .cloned()
}
