use crate::cli::ProcsArgs;
use crate::exit::Exit;
use anyhow::Result;
pub fn run(_a: ProcsArgs) -> Result<Exit> {
    anyhow::bail!("not yet")
}
