//! `sysgauge completions SHELL` and `sysgauge man`: generated from the
//! command-line definition itself (clap_complete, clap_mangen), so they never
//! drift from what the binary accepts. A package build runs both; a user
//! can too.

use crate::cli::Cli;
use crate::exit::Exit;
use crate::output;
use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: `sysgauge completions bash > /usr/share/bash-completion/completions/sysgauge`.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write sysgauge.1 and one sysgauge-COMMAND.1 per subcommand into DIR
    /// (e.g. /usr/share/man/man1) instead of printing sysgauge.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> Result<Exit> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "sysgauge", &mut buf);
    output::stdout(&String::from_utf8_lossy(&buf))?;
    Ok(Exit::Ok)
}

/// The roff source of one page.
fn page(cmd: clap::Command) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .context("rendering the man page")?;
    Ok(buf)
}

pub fn man(args: ManArgs) -> Result<Exit> {
    let cmd = Cli::command();
    let Some(dir) = args.dir else {
        output::stdout(&String::from_utf8_lossy(&page(cmd)?))?;
        return Ok(Exit::Ok);
    };
    if !dir.is_dir() {
        anyhow::bail!("--dir {}: not a directory", dir.display());
    }
    let mut pages = vec![(dir.join("sysgauge.1"), cmd.clone())];
    subcommand_pages(&dir, &cmd, "sysgauge", &mut pages);
    // Every page is checked before the first is written.
    for (path, _) in &pages {
        crate::config::check_output_path(path, "--dir")?;
    }
    for (path, page_cmd) in &pages {
        output::bytes_to_file(path, &page(page_cmd.clone())?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!("wrote {} man pages into {}", pages.len(), dir.display());
    Ok(Exit::Ok)
}

/// A page for every subcommand of `cmd`, at every depth, as git names
/// them: `sysgauge-fleet.1`, `sysgauge-fleet-run.1` (whose options only
/// that page has).
fn subcommand_pages(
    dir: &Path,
    cmd: &clap::Command,
    bin: &str,
    pages: &mut Vec<(PathBuf, clap::Command)>,
) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let bin = format!("{bin} {}", sub.get_name());
        let name = bin.replace(' ', "-");
        let named = sub.clone().name(&name).bin_name(&bin);
        pages.push((dir.join(format!("{name}.1")), named));
        subcommand_pages(dir, sub, &bin, pages);
    }
}
