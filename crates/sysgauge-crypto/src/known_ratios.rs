//! What is known of sysgauge's code against the best reference tool on
//! each CPU microarchitecture: the ratios measured with `crypto
//! --vs-openssl` (median of interleaved rounds, docs/performance.md),
//! embedded so every run can record, per case, whether its figure is the
//! machine's or partly sysgauge's code ("code-bound").
//!
//! The table (`known_ratios.csv`) has one row per microarchitecture, case
//! and metric: the ratio sysgauge / reference (above 1 is faster) and the
//! implementation the trial chose when it was measured (empty: any the
//! trial chooses). A row measured at 8 KiB stands for every block of
//! 8 KiB or more (the per-call overhead is below 1 % of a block's time
//! there), and for any thread count (the code is the same on each thread).
//! Forced implementations are never matched: the table describes the
//! fastest code sysgauge has on the CPU, not any candidate.

use std::sync::OnceLock;
use sysgauge_core::record::{Finding, Severity, CODE_BOUND, VS_REFERENCE};
use sysgauge_core::RunCtx;

/// The measured ratios, as docs/performance.md reports them per CPU.
const TABLE: &str = include_str!("known_ratios.csv");

/// The finding of a case whose code is known to trail the reference here.
pub const CODE_BOUND_FINDING: &str = "code-bound";

/// Rows whose block size is at least this stand for every larger block.
const LARGE_BLOCK: u64 = 8192;

/// A ratio as a table shows it (two decimals) below 1.00 makes a row
/// code-bound, as the `below-openssl` finding judges it.
const BELOW: f64 = 0.995;

#[derive(Debug, Clone, PartialEq)]
pub struct KnownRatio {
    pub microarchitecture: String,
    pub bench_id: String,
    /// The block size measured; `None` for public-key cases.
    pub block_size: Option<u64>,
    pub metric: String,
    /// The implementation measured; `None` when any the trial chooses.
    pub implementation: Option<String>,
    /// sysgauge / reference, above 1 is faster.
    pub ratio: f64,
    /// The reference tool and version (`OpenSSL 3.0.22`).
    pub reference: String,
}

/// Parses the table; a line it cannot read is an error naming the line
/// (the unit test reads the embedded one, so a bad edit fails the build's
/// tests, never a run).
pub fn parse(text: &str) -> Result<Vec<KnownRatio>, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = |why: &str| format!("line {}: {why}: {line}", n + 1);
        let [uarch, id, block, metric, implementation, ratio, reference] = f[..] else {
            return Err(bad("expected 7 fields"));
        };
        if uarch == "microarchitecture" {
            continue;
        }
        let block_size = match block {
            "" => None,
            b => Some(b.parse::<u64>().map_err(|_| bad("bad block size"))?),
        };
        let ratio: f64 = ratio.parse().map_err(|_| bad("bad ratio"))?;
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(bad("ratio must be positive"));
        }
        if uarch.is_empty() || id.is_empty() || metric.is_empty() || reference.is_empty() {
            return Err(bad("empty field"));
        }
        rows.push(KnownRatio {
            microarchitecture: uarch.to_string(),
            bench_id: id.to_string(),
            block_size,
            metric: metric.to_string(),
            implementation: (!implementation.is_empty()).then(|| implementation.to_string()),
            ratio,
            reference: reference.to_string(),
        });
    }
    Ok(rows)
}

/// The environment variable that names a table to read instead of the
/// embedded one: rows for a CPU it lacks, measured with
/// `scripts/crypto-vs-openssl.sh` (`UARCH=...`).
pub const TABLE_ENV: &str = "SYSGAUGE_KNOWN_RATIOS";

/// The table in use: the file [`TABLE_ENV`] names, else the embedded one.
/// An error names the file and the problem.
pub fn load() -> Result<Vec<KnownRatio>, String> {
    match std::env::var_os(TABLE_ENV) {
        Some(path) if !path.is_empty() => {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "{TABLE_ENV}={}: cannot read it: {e}",
                    path.to_string_lossy()
                )
            })?;
            parse(&text).map_err(|e| format!("{TABLE_ENV}={}: {e}", path.to_string_lossy()))
        }
        _ => parse(TABLE),
    }
}

/// The table in use (see [`load`]), read once per process.
fn loaded() -> &'static Result<Vec<KnownRatio>, String> {
    static ROWS: OnceLock<Result<Vec<KnownRatio>, String>> = OnceLock::new();
    ROWS.get_or_init(load)
}

/// Whether the table in use can be read: the measuring commands ask
/// before the first case, so a bad file stops them with its error.
pub fn check() -> Result<(), String> {
    loaded().as_ref().map(|_| ()).map_err(String::clone)
}

/// The table in use; empty when it cannot be read ([`check`] has said so
/// before any case runs).
pub fn table() -> &'static [KnownRatio] {
    loaded().as_deref().unwrap_or(&[])
}

/// The rows that describe a case on `uarch` run with `implementation`.
pub fn lookup<'a>(
    rows: &'a [KnownRatio],
    uarch: &str,
    bench_id: &str,
    block: Option<u64>,
    implementation: &str,
) -> Vec<&'a KnownRatio> {
    rows.iter()
        .filter(|r| r.microarchitecture == uarch && r.bench_id == bench_id)
        .filter(|r| match (r.block_size, block) {
            (None, None) => true,
            (Some(k), Some(b)) => k == b || (k >= LARGE_BLOCK && b >= LARGE_BLOCK),
            _ => false,
        })
        .filter(|r| {
            r.implementation
                .as_deref()
                .is_none_or(|i| i == implementation)
        })
        .collect()
}

/// The details a case gets from the rows that describe it: `vs_reference`
/// always, `code_bound` when a metric is below the reference.
pub fn details(
    rows: &[&KnownRatio],
    uarch: &str,
    implementation: &str,
) -> Option<(String, Option<String>)> {
    let first = rows.first()?;
    let parts: Vec<String> = rows
        .iter()
        .map(|r| {
            if rows.len() > 1 {
                format!("{} {:.2}x", r.metric, r.ratio)
            } else {
                format!("{:.2}x", r.ratio)
            }
        })
        .collect();
    let vs = format!(
        "{} {} on {uarch} with {implementation} (docs/performance.md)",
        parts.join(", "),
        first.reference
    );
    let below: Vec<&&KnownRatio> = rows.iter().filter(|r| r.ratio < BELOW).collect();
    let bound = (!below.is_empty()).then(|| {
        let which: Vec<String> = below
            .iter()
            .map(|r| {
                let metric = if rows.len() > 1 {
                    format!("{} ", r.metric)
                } else {
                    String::new()
                };
                format!(
                    "{metric}{:.2}x, about {:.0} % below",
                    r.ratio,
                    (1.0 - r.ratio) * 100.0
                )
            })
            .collect();
        format!(
            "sysgauge's code ({implementation}) is known to run slower than {} on {uarch}: {}; \
             this figure understates the machine",
            first.reference,
            which.join("; ")
        )
    });
    Some((vs, bound))
}

/// Records in the case's details how its implementation compares with the
/// best reference known for this CPU (nothing when nothing is known).
pub fn note(ctx: &mut RunCtx, bench_id: &str, block: Option<u64>, implementation: &str) {
    let Some(uarch) = sysgauge_core::microarch::this_cpu() else {
        return;
    };
    let rows = lookup(table(), uarch, bench_id, block, implementation);
    if let Some((vs, bound)) = details(&rows, uarch, implementation) {
        ctx.note_detail(VS_REFERENCE, vs);
        if let Some(b) = bound {
            ctx.note_detail(CODE_BOUND, b.clone());
            ctx.finding(
                Finding::new(
                    CODE_BOUND_FINDING,
                    Severity::Info,
                    format!("{bench_id}: {b}"),
                )
                .with_remedy(
                    "`compare` marks such numbers # and lists them, so a comparison between \
                     machines says where it measures code; `crypto --vs-openssl` shows every \
                     candidate's trial rate on this CPU (report it with `sysgauge host`)",
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_reads_and_names_known_cpus() {
        let rows = parse(TABLE).unwrap();
        assert!(!rows.is_empty());
        let ids: Vec<String> = crate::speed::speed_benchmarks(
            None,
            sysgauge_family::util::Count::N(1),
            Default::default(),
        )
        .iter()
        .map(|b| b.id().to_string())
        .collect();
        let known = [
            "AMD Zen 3",
            "AMD Zen 4",
            "AMD Zen 5",
            "Intel Sapphire Rapids",
        ];
        for r in &rows {
            assert!(
                known.contains(&r.microarchitecture.as_str()),
                "{}",
                r.microarchitecture
            );
            assert!(ids.contains(&r.bench_id), "no case {}", r.bench_id);
        }
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse("AMD Zen 4,hash.sha512,8192,throughput,,zero,OpenSSL 3.0\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("bad ratio"), "{e}");
        assert!(parse("AMD Zen 4,hash.sha512\n")
            .unwrap_err()
            .contains("7 fields"));
        assert!(parse("x,y,8192,t,,-1,z\n")
            .unwrap_err()
            .contains("positive"));
    }

    #[test]
    fn a_large_block_row_stands_for_larger_blocks_and_any_implementation_only_when_empty() {
        let rows = parse(
            "AMD Zen 4,hash.sha512,8192,throughput,sysgauge-avx512vl,0.91,OpenSSL 3.0.13\n\
             AMD Zen 4,hash.md4,8192,throughput,,0.91,OpenSSL 3.0.13\n\
             AMD Zen 4,crypto.rsa-2048,,sign,,1.00,OpenSSL 3.0.13\n\
             AMD Zen 4,crypto.rsa-2048,,verify,,0.98,OpenSSL 3.0.13\n",
        )
        .unwrap();
        let z4 = "AMD Zen 4";
        let sha = |b, i| lookup(&rows, z4, "hash.sha512", Some(b), i).len();
        assert_eq!(sha(8192, "sysgauge-avx512vl"), 1);
        assert_eq!(sha(1 << 20, "sysgauge-avx512vl"), 1);
        assert_eq!(sha(1024, "sysgauge-avx512vl"), 0);
        assert_eq!(sha(8192, "aws-lc"), 0);
        assert_eq!(
            lookup(
                &rows,
                "AMD Zen 3",
                "hash.sha512",
                Some(8192),
                "sysgauge-avx512vl"
            )
            .len(),
            0
        );
        assert_eq!(
            lookup(&rows, z4, "hash.md4", Some(8192), "rustcrypto").len(),
            1
        );

        let found = lookup(&rows, z4, "hash.sha512", Some(8192), "sysgauge-avx512vl");
        let (vs, bound) = details(&found, z4, "sysgauge-avx512vl").unwrap();
        assert_eq!(
            vs,
            "0.91x OpenSSL 3.0.13 on AMD Zen 4 with sysgauge-avx512vl (docs/performance.md)"
        );
        assert_eq!(
            bound.unwrap(),
            "sysgauge's code (sysgauge-avx512vl) is known to run slower than OpenSSL 3.0.13 on \
             AMD Zen 4: 0.91x, about 9 % below; this figure understates the machine"
        );

        let rsa = lookup(&rows, z4, "crypto.rsa-2048", None, "aws-lc");
        let (vs, bound) = details(&rsa, z4, "aws-lc").unwrap();
        assert!(vs.starts_with("sign 1.00x, verify 0.98x OpenSSL"), "{vs}");
        assert!(bound.unwrap().contains(": verify 0.98x, about 2 % below;"));
        // At or above the reference: recorded, not code-bound.
        let even = lookup(&rows, z4, "crypto.rsa-2048", None, "aws-lc")[..1].to_vec();
        assert_eq!(details(&even, z4, "aws-lc").unwrap().1, None);
        assert!(details(&[], z4, "aws-lc").is_none());
    }
}
