//! sysgauge: measure how fast a machine really is, and compare machines
//! honestly. `main` only parses the command line, dispatches, and maps the
//! outcome to an exit code; each subcommand lives in `commands/`.

#![forbid(unsafe_code)]

mod cli;
mod commands;
mod config;
mod db;
mod exit;
mod machines;
mod measure;
mod netconfig;
mod output;
mod progress;
mod signals;
mod style;
mod values;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return exit::report_usage_error(e).into(),
    };
    style::init(cli.color);
    match commands::dispatch(cli) {
        Ok(code) => code.into(),
        Err(err) => exit::report_error(&err).into(),
    }
}
