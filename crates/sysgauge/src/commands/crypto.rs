//! `sysgauge crypto`: the whole crypto family plus the hash family at the
//! `openssl speed` block sizes, stored as a run like any other, then shown
//! as an `openssl speed`-style table rendered from the run's records.
//!
//! `--vs-openssl` runs the system `openssl speed -mr -elapsed` for each case
//! right after sysgauge measured it (a sink of the run), so both see the
//! same machine state even when the load changes during the run; its output
//! becomes records through the `openssl speed` importer (same ids, params
//! and metrics) and both are printed side by side with the ratio. OpenSSL's
//! numbers are shown, not stored: the run holds what sysgauge measured.

use crate::cli::CryptoArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use anyhow::{bail, Context, Result};
use std::sync::Arc;
use sysgauge_bench::crypto::reference::{run_reference, ReferenceError, ReferencePlan};
use sysgauge_bench::crypto::report::{speed_table, vs_openssl_table, vs_rows};
use sysgauge_bench::crypto::{self, CryptoOptions, BLOCK_SIZES};
use sysgauge_bench::hash::{self, HashOptions};
use sysgauge_bench::openssl_speed::{parse_mr, to_results};
use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_core::runner::{Sink, SinkError};
use sysgauge_core::size::parse_size;
use sysgauge_core::{Benchmark, CancelToken, Profile};
use sysgauge_report::TableFormat;

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

/// Keep the benchmarks `--only` names (full ids or the part after the
/// family); an unknown name is an error that lists the known ones.
pub fn filter_only(
    benches: Vec<Box<dyn Benchmark>>,
    only: &[String],
) -> Result<Vec<Box<dyn Benchmark>>> {
    if only.is_empty() {
        return Ok(benches);
    }
    let short = |id: &str| id.split_once('.').map_or(id, |(_, t)| t).to_string();
    for o in only {
        let o = o.trim();
        if !benches.iter().any(|b| b.id() == o || short(b.id()) == o) {
            let known: Vec<String> = benches.iter().map(|b| short(b.id())).collect();
            bail!(
                "--only: unknown algorithm '{o}' (known: {})",
                known.join(", ")
            );
        }
    }
    Ok(benches
        .into_iter()
        .filter(|b| {
            only.iter()
                .any(|o| b.id() == o.trim() || short(b.id()) == o.trim())
        })
        .collect())
}

pub fn run(args: CryptoArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let threads = parse_threads(&args.threads)?;
    let sizes = parse_block_sizes(&args.block_sizes)?;
    let benches = filter_only(crypto_benchmarks(sizes.clone(), threads), &args.only)?;
    let cancel = crate::signals::install()?;
    let mut alongside = OpensslAlongside::new(openssl_seconds(cfg.profile), &cancel);
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
    }
    text.push_str(&measure::findings_section(&outcome.record));
    text.push_str(&measure::closing_lines(&outcome, exit));
    measure::print_human(&cfg, &text)?;
    Ok(exit)
}

/// Seconds per `openssl speed` measurement for a profile.
fn openssl_seconds(profile: Profile) -> u32 {
    match profile {
        Profile::Tiny | Profile::Quick => 1,
        Profile::Standard | Profile::Full => 3,
    }
}

/// OpenSSL's numbers as records, and a line per invocation that produced
/// none (the legacy provider missing, an unknown algorithm).
pub fn openssl_records(
    outputs: &[(String, Result<String, String>)],
) -> (Vec<ResultRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut notes = Vec::new();
    for (what, out) in outputs {
        match out {
            Ok(text) => match parse_mr(text) {
                Ok(report) => records.extend(to_results(&report)),
                Err(e) => notes.push(format!("openssl {what}: unreadable output ({e})")),
            },
            Err(e) => notes.push(format!("openssl {what}: {e}")),
        }
    }
    (records, notes)
}

/// A sink that runs `openssl speed` for each crypto or hash case as soon as
/// sysgauge finished it, and keeps the output.
struct OpensslAlongside<'a> {
    seconds: u32,
    cancel: &'a CancelToken,
    outputs: Vec<(String, Result<String, String>)>,
    missing: bool,
    interrupted: bool,
}

impl<'a> OpensslAlongside<'a> {
    fn new(seconds: u32, cancel: &'a CancelToken) -> Self {
        OpensslAlongside {
            seconds,
            cancel,
            outputs: Vec::new(),
            missing: false,
            interrupted: false,
        }
    }

    /// The side-by-side table (or why there is none).
    fn table(&self, run: &RunRecord) -> String {
        let mut text = String::from(
            "\nsysgauge and the system OpenSSL (`openssl speed -mr -elapsed`, run right after each case), ratio = sysgauge / openssl:\n",
        );
        if self.missing {
            text.push_str(
                "skipped: 'openssl' is not installed (Debian/Ubuntu: apt-get install openssl)\n",
            );
            return text;
        }
        let (theirs, notes) = openssl_records(&self.outputs);
        let rows = vs_rows(&run.results, &theirs);
        text.push_str(&vs_openssl_table(&rows, TableFormat::Text));
        for n in notes {
            text.push_str(&n);
            text.push('\n');
        }
        if self.interrupted {
            text.push_str("(interrupted: OpenSSL did not run for the remaining cases)\n");
        }
        text
    }
}

impl Sink for OpensslAlongside<'_> {
    fn case_finished(
        &mut self,
        _index: usize,
        _total: usize,
        result: &ResultRecord,
    ) -> Result<(), SinkError> {
        if self.missing || self.interrupted || !matches!(result.status, Status::Ok) {
            return Ok(());
        }
        let plan = ReferencePlan {
            bench_ids: vec![result.bench_id.clone()],
            block_sizes: result.params.get_u64("block_size").into_iter().collect(),
            threads: result
                .params
                .get_u64("threads")
                .and_then(|t| usize::try_from(t).ok())
                .unwrap_or(1),
            seconds: self.seconds,
        };
        match run_reference(&plan, self.cancel, |inv| {
            eprintln!("openssl {}", inv.args.join(" "));
        }) {
            Ok(outs) => self.outputs.extend(outs.into_iter().map(|o| {
                (
                    o.invocation.args.join(" "),
                    o.result.map_err(|e| e.to_string()),
                )
            })),
            Err(ReferenceError::Missing) => self.missing = true,
            Err(ReferenceError::Cancelled) => self.interrupted = true,
            Err(e) => self
                .outputs
                .push((result.bench_id.clone(), Err(e.to_string()))),
        }
        Ok(())
    }
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
    fn openssl_output_becomes_records() {
        let good = "+H:16:8192\n+F:22:aes-128-cbc:1000000.00:1500000000.00\n".to_string();
        let outputs = vec![
            ("-evp aes-128-cbc".to_string(), Ok(good)),
            (
                "-evp rc4".to_string(),
                Err("exited with 1: legacy provider".to_string()),
            ),
            ("-evp x".to_string(), Ok("not openssl output".to_string())),
        ];
        let (records, notes) = openssl_records(&outputs);
        assert_eq!(records.len(), 2, "{records:?}");
        assert_eq!(records[0].bench_id, "crypto.aes-128-cbc");
        assert_eq!(records[1].params.get_u64("block_size"), Some(8192));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("legacy provider"));
    }

    #[test]
    fn only_filters_by_id_or_short_name() {
        let b = filter_only(
            crypto_benchmarks(None, 1),
            &["md5".into(), "crypto.rsa-2048".into()],
        )
        .unwrap_or_default();
        let ids: Vec<&str> = b.iter().map(|b| b.id()).collect();
        assert_eq!(ids, vec!["hash.md5", "crypto.rsa-2048"]);
        assert!(filter_only(crypto_benchmarks(None, 1), &["rot13".into()]).is_err());
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
