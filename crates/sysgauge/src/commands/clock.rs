//! `sysgauge clock`: the effective clock of each CPU against its nominal
//! and reported clock, stored as a run, shown as a table rendered from the
//! run's records, with the findings (running below the rated clock, or no
//! rated clock to judge against). `--rated` gives the rated clock a
//! machine does not publish; it is recorded in the host facts as given.

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

    #[command(flatten)]
    pub rated: RatedArg,
}

/// `--rated`, shared by `clock` and `run`.
#[derive(Debug, Args)]
pub struct RatedArg {
    /// The CPU's rated clock (e.g. 4.5GHz, 2400MHz), for machines that
    /// publish none (VMs, many ARM boards): each core is judged against it
    /// as if published, and the run's host facts record it as given.
    #[arg(long, value_name = "CLOCK")]
    pub rated: Option<RatedClock>,
}

impl RatedArg {
    pub fn mhz(&self) -> Option<f64> {
        self.rated.map(|r| r.0)
    }
}

/// A rated clock as given on the command line, in MHz.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatedClock(pub f64);

impl std::str::FromStr for RatedClock {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        clock::parse_rated(s).map(RatedClock)
    }
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
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    cfg.rated_mhz = args.rated.mhz();
    let options = Arc::new(ClockOptions {
        phase: Phase::Single,
        cpus: check_cpus(args.cpus.as_ref())?,
        rated_mhz: args.rated.mhz(),
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
