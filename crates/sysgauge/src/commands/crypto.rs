//! `sysgauge crypto`: the whole crypto family plus the hash family at the
//! `openssl speed` block sizes, stored as a run like any other, then shown
//! as an `openssl speed`-style table rendered from the run's records.
//! With `--vs-openssl` the system OpenSSL runs beside each case
//! (`sysgauge_crypto::crypto::alongside`) and both are printed side by side.

use crate::cli::{ImplementationArgs, MeasureArgs, SelectArgs};
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::values::NiceSize;
use anyhow::{bail, Result};
use clap::Args;
use sysgauge_crypto::crypto::alongside::{openssl_seconds, OpensslAlongside};
use sysgauge_crypto::crypto::report::{implementations_section, speed_table};
use sysgauge_crypto::speed::speed_benchmarks;
use sysgauge_family::util::Count;
use sysgauge_report::TableFormat;

#[derive(Debug, Args)]
pub struct CryptoArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Threads: a number, or `all` for one per CPU (each runs its own instance).
    #[arg(long, value_name = "N|all", default_value = "1")]
    pub threads: Count,

    /// Block sizes for ciphers and digests (comma-separated, nice numbers such
    /// as 8KiB; multiples of 16). Default: openssl's 16,64,256,1024,8192,16384.
    #[arg(long, value_name = "SIZE[,...]", value_delimiter = ',')]
    pub block_sizes: Vec<NiceSize>,

    /// Algorithms by name or id (`aes-128-gcm`, `hash.md5`, `rsa-2048`).
    #[command(flatten)]
    pub select: SelectArgs,

    /// Also run the system `openssl speed -mr` for the same algorithms,
    /// sizes and threads, and print both side by side with the ratio.
    #[arg(long)]
    pub vs_openssl: bool,

    #[command(flatten)]
    pub implementation: ImplementationArgs,

    /// After the table, each algorithm's implementation and how it was
    /// chosen: every candidate's trial rate, or forced, from the stored
    /// details (`--vs-openssl` prints these lines too).
    #[arg(long)]
    pub implementations: bool,
}

/// Largest block size accepted (one buffer per thread is allocated).
const MAX_BLOCK: u64 = 64 << 20;

/// `--block-sizes`: multiples of 16, at most 64 MiB, without repeats.
pub fn block_sizes(raw: &[NiceSize]) -> Result<Option<Vec<u64>>> {
    if raw.is_empty() {
        return Ok(None);
    }
    let mut v = Vec::new();
    for &NiceSize(n) in raw {
        if n == 0 || n % 16 != 0 || n > MAX_BLOCK {
            bail!(
                "--block-sizes {n} must be a multiple of 16 bytes between 16 and 64MiB (CBC ciphers work on whole blocks)"
            );
        }
        if !v.contains(&n) {
            v.push(n);
        }
    }
    Ok(Some(v))
}

pub fn run(args: CryptoArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let sizes = block_sizes(&args.block_sizes)?;
    let forced = crate::commands::run::forced_implementations(&args.implementation)?;
    let benches = measure::select(
        speed_benchmarks(sizes, args.threads, forced.clone()),
        &args.select,
    )?;
    crate::commands::run::check_implementations(&forced, &benches)?;
    let cancel = crate::signals::install()?;
    let announce = |line: &str| eprintln!("{line}");
    let mut alongside = OpensslAlongside::new(openssl_seconds(cfg.profile), &cancel, &announce);
    let outcome = if args.vs_openssl {
        measure::execute_with(
            "crypto",
            &cfg,
            &benches,
            &cancel,
            Vec::new(),
            Some(&mut alongside),
        )?
    } else {
        measure::execute("crypto", &cfg, &benches, &cancel, Vec::new())?
    };
    let mut text = speed_table(&outcome.record.results, TableFormat::Text);
    let mut exit = outcome.exit;
    if args.vs_openssl {
        text.push_str(&alongside.table(&outcome.record));
        if alongside.interrupted {
            exit = Exit::Interrupted;
        }
    } else if args.implementations {
        text.push_str(&implementations_section(&outcome.record.results));
    }
    text.push_str(&measure::findings_section(&outcome.record));
    text.push_str(&measure::closing_lines(&outcome, exit));
    measure::print_human(&cfg, &text)?;
    Ok(exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_are_whole_cipher_blocks() {
        let n = |v: u64| NiceSize(v);
        assert_eq!(block_sizes(&[]).unwrap(), None);
        assert_eq!(
            block_sizes(&[n(8192), n(16), n(16)]).unwrap(),
            Some(vec![8192, 16])
        );
        assert!(block_sizes(&[n(100)]).is_err());
        assert!(block_sizes(&[n(1 << 30)]).is_err());
        assert!(block_sizes(&[n(0)]).is_err());
    }
}
