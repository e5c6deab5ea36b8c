//! One module per subcommand; `dispatch` maps the parsed command line to it.

mod host;
mod list;
mod procs;
mod results;
mod run;
mod spawn;
mod ssh;
mod startup;

use crate::cli::{Cli, Command};
use crate::exit::Exit;
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<Exit> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Host(a) => host::run(a),
        Command::List(a) => list::run(a),
        Command::Results(a) => results::run(a),
        Command::Spawn(a) => spawn::run(a),
        Command::Startup(a) => startup::run(a),
        Command::Procs(a) => procs::run(a),
        Command::Ssh(a) => ssh::run(a),
    }
}
