//! sysgauge: measure how fast a machine really is, and compare machines
//! honestly. `main` only parses the command line, dispatches, and maps the
//! outcome to an exit code; each subcommand lives in `commands/`.

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

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    style::init(cli.color);
    match commands::dispatch(cli) {
        Ok(code) => code.into(),
        Err(err) => exit::report_error(&err).into(),
    }
}
