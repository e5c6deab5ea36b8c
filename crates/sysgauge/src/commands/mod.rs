//! One module per subcommand; `dispatch` maps the parsed command line to it.

pub(crate) mod baseline;
pub(crate) mod chart;
pub(crate) mod clock;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod cpu;
pub(crate) mod crypto;
pub(crate) mod disk;
pub(crate) mod fleet;
pub(crate) mod fleet_net;
pub(crate) mod history;
pub(crate) mod host;
pub(crate) mod import;
pub(crate) mod list;
pub(crate) mod listen;
pub(crate) mod mem;
pub(crate) mod net;
pub(crate) mod ping;
pub(crate) mod procs;
pub(crate) mod report;
pub(crate) mod results;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod spawn;
pub(crate) mod ssh;
pub(crate) mod startup;
pub(crate) mod sweep;
pub(crate) mod upload;

use crate::cli::{Cli, Command};
use crate::exit::Exit;
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<Exit> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Serve(a) => serve::run(a),
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
        Command::Upload(a) => upload::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Report(a) => report::run(a),
        Command::Chart(a) => chart::run(a),
        Command::Fleet(a) => fleet::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
    }
}
