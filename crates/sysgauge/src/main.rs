//! sysgauge: measure how fast a machine really is, and compare machines
//! honestly. `main` only parses the command line, dispatches, and maps the
//! outcome to an exit code; each subcommand lives in `commands/`.

#![forbid(unsafe_code)]

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
    let cli = match cmd
        .try_get_matches()
        .and_then(|m| cli::Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => return exit::report_usage_error(e).into(),
    };
    style::init(cli.color);
    match commands::dispatch(cli) {
        Ok(code) => code.into(),
        Err(err) => exit::report_error(&err).into(),
    }
}
