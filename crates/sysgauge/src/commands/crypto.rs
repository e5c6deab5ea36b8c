//! `sysgauge crypto`: the whole crypto family plus the hash family at the
//! `openssl speed` block sizes, stored as a run like any other, then shown
//! as an `openssl speed`-style table rendered from the run's records.

use crate::cli::CryptoArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use anyhow::{bail, Context, Result};
use std::sync::Arc;
use sysgauge_bench::crypto::{self, CryptoOptions, BLOCK_SIZES};
use sysgauge_bench::hash::{self, HashOptions};
use sysgauge_core::size::parse_size;
use sysgauge_core::Benchmark;
use sysgauge_report::crypto::speed_table;
use sysgauge_report::{findings_text, TableFormat};

/// Largest block size accepted (one buffer per thread is allocated).
const MAX_BLOCK: u64 = 64 << 20;

/// `--threads N|all` into a thread count.
pub fn parse_threads(s: &str) -> Result<usize> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("all") {
        return Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1));
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => bail!("--threads '{s}' is not a number from 1 to 4096 or 'all'"),
    }
}

/// `--block-sizes` into sizes: nice numbers, multiples of 16, at most 64 MiB.
pub fn parse_block_sizes(raw: &[String]) -> Result<Option<Vec<u64>>> {
    if raw.is_empty() {
        return Ok(None);
    }
    let mut v = Vec::new();
    for r in raw {
        let n = parse_size(r).with_context(|| format!("--block-sizes '{}'", r.trim()))?;
        if n == 0 || n % 16 != 0 || n > MAX_BLOCK {
            bail!(
                "--block-sizes '{}' must be a multiple of 16 bytes between 16 and 64MiB (CBC ciphers work on whole blocks)",
                r.trim()
            );
        }
        if !v.contains(&n) {
            v.push(n);
        }
    }
    Ok(Some(v))
}

/// The benchmarks `sysgauge crypto` runs: the hash family then the crypto
/// family, at the chosen sizes and thread count.
pub fn crypto_benchmarks(sizes: Option<Vec<u64>>, threads: usize) -> Vec<Box<dyn Benchmark>> {
    let hash_opts = Arc::new(HashOptions {
        block_sizes: Some(sizes.clone().unwrap_or_else(|| BLOCK_SIZES.to_vec())),
        threads: Some(vec![threads]),
    });
    let crypto_opts = Arc::new(CryptoOptions {
        full_table: true,
        block_sizes: sizes,
        threads: Some(vec![threads]),
    });
    let mut v = hash::benchmarks(&hash_opts);
    v.extend(crypto::benchmarks(&crypto_opts));
    v
}

pub fn run(args: CryptoArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let threads = parse_threads(&args.threads)?;
    let sizes = parse_block_sizes(&args.block_sizes)?;
    let benches = crypto_benchmarks(sizes, threads);
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("crypto", &cfg, &benches, &cancel, Vec::new())?;
    let mut text = speed_table(&outcome.record.results, TableFormat::Text);
    let findings = findings_text(&outcome.record);
    if !findings.is_empty() {
        text.push_str("Findings:\n");
        text.push_str(&findings);
    }
    if let Some(row) = outcome.stored_as {
        text.push_str(&format!(
            "\nStored as run {row} ({}); `sysgauge results show {row}` shows it again.\n",
            outcome.record.run_id
        ));
    }
    if outcome.exit == Exit::Interrupted {
        text.push_str("The run was interrupted; the results above were kept.\n");
    }
    measure::print_human(&cfg, &text)?;
    Ok(outcome.exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_and_sizes() {
        assert_eq!(parse_threads("3").unwrap_or(0), 3);
        assert!(parse_threads("all").unwrap_or(0) >= 1);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("many").is_err());
        assert_eq!(parse_block_sizes(&[]).unwrap_or_default(), None);
        assert_eq!(
            parse_block_sizes(&["8KiB".into(), "16".into(), "16".into()]).unwrap_or_default(),
            Some(vec![8192, 16])
        );
        assert!(parse_block_sizes(&["100".into()]).is_err());
        assert!(parse_block_sizes(&["1G".into()]).is_err());
        assert!(parse_block_sizes(&["lots".into()]).is_err());
    }

    #[test]
    fn runs_hash_and_crypto_with_unique_ids() {
        let b = crypto_benchmarks(None, 1);
        let ids: Vec<&str> = b.iter().map(|b| b.id()).collect();
        assert!(ids.contains(&"hash.sha256") && ids.contains(&"crypto.x25519"));
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
    }
}
