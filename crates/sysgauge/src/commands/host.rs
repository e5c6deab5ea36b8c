//! `sysgauge host`: the machine facts stored with every run.

use crate::config::check_writable_dir;
use crate::exit::Exit;
use crate::output;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use sysgauge_report::{Table, TableFormat};

#[derive(Debug, Args)]
pub struct HostArgs {
    /// Print the facts as JSON.
    #[arg(long)]
    pub json: bool,

    /// Describe the filesystem of this directory as the scratch directory.
    #[arg(long, value_name = "DIR")]
    pub scratch_dir: Option<PathBuf>,
}

pub fn run(args: HostArgs) -> Result<Exit> {
    let scratch = match &args.scratch_dir {
        Some(d) => {
            check_writable_dir(d, "--scratch-dir")?;
            d.clone()
        }
        None => std::env::temp_dir(),
    };
    let host = sysgauge_host::collect_live(Some(&scratch));
    if args.json {
        output::stdout(&(serde_json::to_string_pretty(&host)? + "\n"))?;
        return Ok(Exit::Ok);
    }
    let mut t = Table::columns("fact, value");
    for (k, v) in sysgauge_host::facts_table(&host) {
        t.push(vec![k, v]);
    }
    output::stdout(&t.render(TableFormat::Text))?;
    Ok(Exit::Ok)
}
