use crate::cli::StartupArgs;
use crate::exit::Exit;
use anyhow::Result;
pub fn run(_a: StartupArgs) -> Result<Exit> {
    anyhow::bail!("not yet")
}
