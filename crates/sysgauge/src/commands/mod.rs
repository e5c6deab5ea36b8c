//! One module per subcommand; `dispatch` maps the parsed command line to it.

mod baseline;
mod chart;
mod clock;
mod compare;
mod completions;
mod cpu;
mod crypto;
mod disk;
mod fleet;
mod fleet_net;
mod history;
mod host;
mod import;
mod list;
mod listen;
mod mem;
mod net;
mod ping;
mod procs;
mod report;
mod results;
mod run;
mod spawn;
mod ssh;
mod startup;
mod sweep;

use crate::cli::{Cli, Command};
use crate::exit::Exit;
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<Exit> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Host(a) => host::run(a),
        Command::List(a) => list::run(a),
        Command::Results(a) => results::run(a),
        Command::Cpu(a) => cpu::run(a),
        Command::Mem(a) => mem::run(a),
        Command::Disk(a) => disk::run(a),
        Command::Net(a) => net::run(a),
        Command::Ping(a) => ping::run(a),
        Command::Listen(a) => listen::run(a),
        Command::Crypto(a) => crypto::run(a),
        Command::Clock(a) => clock::run(a),
        Command::Spawn(a) => spawn::run(a),
        Command::Startup(a) => startup::run(a),
        Command::Procs(a) => procs::run(a),
        Command::Ssh(a) => ssh::run(a),
        Command::Baseline(a) => baseline::run(a),
        Command::Import(a) => import::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Report(a) => report::run(a),
        Command::Chart(a) => chart::run(a),
        Command::Fleet(a) => fleet::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
    }
}
