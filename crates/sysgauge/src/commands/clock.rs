//! `sysgauge clock`: the effective clock of each CPU against its nominal
//! and reported clock, stored as a run, shown as a table rendered from the
//! run's records, with the findings (running below the rated clock, or no
//! rated clock to judge against).

use crate::cli::MeasureArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::values::CpuList;
use anyhow::{bail, Result};
use clap::Args;
use std::sync::Arc;
use sysgauge_bench::clock::{self, ClockOptions, Phase};

#[derive(Debug, Args)]
pub struct ClockArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Only these CPUs (a kernel CPU list such as 0-3,8; default: every CPU
    /// this process may run on).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<CpuList>,
}

/// `--cpus LIST` into CPU numbers, each one this process may run on.
pub fn check_cpus(list: Option<&CpuList>) -> Result<Option<Vec<u32>>> {
    let Some(CpuList(cpus)) = list else {
        return Ok(None);
    };
    let allowed = clock::allowed_cpus();
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        bail!(
            "--cpus: CPU {c} is offline or outside this process's CPU set (allowed: {})",
            allowed
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    Ok(Some(cpus.clone()))
}

pub fn run(args: ClockArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let options = Arc::new(ClockOptions {
        phase: Phase::Single,
        cpus: check_cpus(args.cpus.as_ref())?,
        ..Default::default()
    });
    measure::family_command(&clock::FAMILY, &cfg, &clock::benchmarks(&options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(check_cpus(None).unwrap(), None);
        assert_eq!(check_cpus(Some(&CpuList(vec![0]))).unwrap(), Some(vec![0]));
        assert!(check_cpus(Some(&CpuList(vec![100_000]))).is_err());
    }
}
