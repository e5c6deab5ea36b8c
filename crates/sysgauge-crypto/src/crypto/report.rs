//! The crypto family's renderings: a table laid out like `openssl speed`
//! (thousands of bytes per second per block size; sign/s and verify/s;
//! op/s), and sysgauge side by side with the system OpenSSL with the ratio.
//!
//! Both take result records only (sysgauge's own, and OpenSSL's turned into
//! records by the `openssl speed -mr` importer, which uses the same ids,
//! params and metric names), so what is shown is what was stored.

use crate::implementation::{DETAIL_CHOICE, DETAIL_IMPLEMENTATION, DETAIL_TRIAL};
use std::collections::BTreeSet;
use sysgauge_core::record::{Finding, Metric, ResultRecord, Severity, Status};
use sysgauge_core::rounds::shown_spread;
use sysgauge_core::Unit;
use sysgauge_report::table::{Align, Table, TableFormat};
use sysgauge_stats::{median, Summary};

/// Display name of a benchmark id, in `openssl speed`'s words where it has
/// them.
pub fn display_name(bench_id: &str) -> String {
    let tail = bench_id.split_once('.').map_or(bench_id, |(_, t)| t);
    if let Some(bits) = tail.strip_prefix("rsa-") {
        return format!("rsa {bits} bits");
    }
    if let Some(bits) = tail.strip_prefix("dsa-") {
        return format!("dsa {bits} bits");
    }
    let curve = |c: &str| match c {
        "p192" => Some((192, "nistp192")),
        "p224" => Some((224, "nistp224")),
        "p256" => Some((256, "nistp256")),
        "p384" => Some((384, "nistp384")),
        "p521" => Some((521, "nistp521")),
        _ => None,
    };
    if let Some((bits, name)) = tail.strip_prefix("ecdsa-").and_then(curve) {
        return format!("ecdsa {bits} bits ({name})");
    }
    if let Some((bits, name)) = tail.strip_prefix("ecdh-").and_then(curve) {
        return format!("ecdh {bits} bits ({name})");
    }
    match tail {
        "dsa2048" => "dsa 2048 bits, openssl's key (160-bit q)".into(),
        "ed25519" => "EdDSA 253 bits (Ed25519)".into(),
        "x25519" => "ecdh 253 bits (X25519)".into(),
        t => t.to_string(),
    }
}

fn threads_of(r: &ResultRecord) -> u64 {
    r.count_param("threads").unwrap_or(1)
}

/// Decimal MB/s of a throughput metric, whatever throughput unit it has.
fn mb_per_s(value: f64, unit: &Unit) -> Option<f64> {
    match unit {
        Unit::MBps => Some(value),
        Unit::KBps => Some(value / 1000.0),
        Unit::GBps => Some(value * 1000.0),
        Unit::MiBps => Some(value * 1.048_576),
        _ => None,
    }
}

fn metric_value(r: &ResultRecord, name: &str) -> Option<f64> {
    let m = ok_metric(r, name)?;
    in_row_unit(m, m.value())
}

/// Each sample of metric `name`, in the rows' unit: with `--rounds`, one
/// per round, in round order (`rounds::merge`).
fn metric_samples(r: &ResultRecord, name: &str) -> Option<Vec<f64>> {
    let m = ok_metric(r, name)?;
    m.samples.iter().map(|&v| in_row_unit(m, v)).collect()
}

fn ok_metric<'r>(r: &'r ResultRecord, name: &str) -> Option<&'r Metric> {
    if !matches!(r.status, Status::Ok) {
        return None;
    }
    r.metrics.iter().find(|m| m.name == name)
}

/// A value of `m` in the rows' unit: MB/s for throughput, as is otherwise.
fn in_row_unit(m: &Metric, value: f64) -> Option<f64> {
    if m.name == "throughput" {
        mb_per_s(value, &m.unit)
    } else {
        Some(value)
    }
}

fn is_symmetric(r: &ResultRecord) -> bool {
    r.params.get_u64("block_size").is_some() && r.metrics.iter().any(|m| m.name == "throughput")
}

/// First-appearance order of ids among `records` that pass `keep`.
fn ids_in_order<'a>(
    records: impl Iterator<Item = &'a ResultRecord>,
    keep: impl Fn(&ResultRecord) -> bool,
) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for r in records {
        if keep(r) && !ids.contains(&r.bench_id) {
            ids.push(r.bench_id.clone());
        }
    }
    ids
}

/// The `openssl speed` table of a run's crypto and hash results. One block
/// of tables per thread count; cells with no result are `-`; a skipped
/// algorithm says why under the table.
pub fn speed_table(results: &[ResultRecord], format: TableFormat) -> String {
    let relevant: Vec<&ResultRecord> = results
        .iter()
        .filter(|r| r.family == "crypto" || r.family == "hash")
        .collect();
    let thread_counts: BTreeSet<u64> = relevant.iter().map(|r| threads_of(r)).collect();
    let mut out = String::new();
    for &threads in &thread_counts {
        let here: Vec<&ResultRecord> = relevant
            .iter()
            .copied()
            .filter(|r| threads_of(r) == threads)
            .collect();
        if thread_counts.len() > 1 || threads > 1 {
            out.push_str(&format!("threads: {threads}\n"));
        }
        let sym_ids = ids_in_order(here.iter().copied(), |r| {
            is_symmetric(r) || (r.params.get_u64("block_size").is_some())
        });
        let sizes: BTreeSet<u64> = here
            .iter()
            .filter_map(|r| r.params.get_u64("block_size"))
            .collect();
        if !sym_ids.is_empty() {
            out.push_str("The 'numbers' are in 1000s of bytes per second processed.\n");
            let mut headers: Vec<(String, Align)> = vec![("type".to_string(), Align::Left)];
            headers.extend(sizes.iter().map(|s| (format!("{s} bytes"), Align::Right)));
            let refs: Vec<(&str, Align)> = headers.iter().map(|(h, a)| (h.as_str(), *a)).collect();
            let mut t = Table::new(&refs);
            for id in &sym_ids {
                let mut row = vec![display_name(id)];
                for &s in &sizes {
                    let cell = here
                        .iter()
                        .find(|r| &r.bench_id == id && r.params.get_u64("block_size") == Some(s))
                        .and_then(|r| metric_value(r, "throughput"))
                        .map_or("-".to_string(), |mbps| format!("{:.2}k", mbps * 1000.0));
                    row.push(cell);
                }
                t.push(row);
            }
            out.push_str(&t.render(format));
        }
        let sign_ids = ids_in_order(here.iter().copied(), |r| {
            r.params.get_u64("block_size").is_none()
                && (r
                    .metrics
                    .iter()
                    .any(|m| m.name == "sign" || m.name == "verify")
                    || r.bench_id.contains("rsa-")
                    || r.bench_id.contains("dsa-")
                    || r.bench_id.contains("ecdsa-")
                    || r.bench_id.ends_with("ed25519"))
        });
        if !sign_ids.is_empty() {
            let mut t = Table::columns(", >sign, >verify, >sign/s, >verify/s");
            for id in &sign_ids {
                let r = here.iter().find(|r| &r.bench_id == id);
                let sign = r.and_then(|r| metric_value(r, "sign"));
                let verify = r.and_then(|r| metric_value(r, "verify"));
                let secs = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.6}s", 1.0 / v));
                let rate = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
                t.push(vec![
                    display_name(id),
                    secs(sign),
                    secs(verify),
                    rate(sign),
                    rate(verify),
                ]);
            }
            out.push('\n');
            out.push_str(&t.render(format));
        }
        let kex_ids = ids_in_order(here.iter().copied(), |r| {
            r.params.get_u64("block_size").is_none()
                && (r.metrics.iter().any(|m| m.name == "ops")
                    || r.bench_id.contains("ecdh-")
                    || r.bench_id.ends_with("x25519"))
        });
        if !kex_ids.is_empty() {
            let mut t = Table::columns(", >op, >op/s");
            for id in &kex_ids {
                let v = here
                    .iter()
                    .find(|r| &r.bench_id == id)
                    .and_then(|r| metric_value(r, "ops"));
                t.push(vec![
                    display_name(id),
                    v.map_or("-".into(), |v| format!("{:.6}s", 1.0 / v)),
                    v.map_or("-".into(), |v| format!("{v:.1}")),
                ]);
            }
            out.push('\n');
            out.push_str(&t.render(format));
        }
        let skipped: Vec<String> = here
            .iter()
            .filter_map(|r| match &r.status {
                Status::Skipped { reason, .. } => {
                    Some(format!("{}: skipped ({reason})", r.bench_id))
                }
                Status::Failed { error } => Some(format!("{}: FAILED ({error})", r.bench_id)),
                Status::Ok => None,
            })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !skipped.is_empty() {
            out.push('\n');
            for s in skipped {
                out.push_str(&s);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out
}

/// One compared quantity: sysgauge's value, OpenSSL's, and their ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct VsRow {
    pub bench_id: String,
    /// `8192 bytes`, `sign`, `verify`, `ops`.
    pub what: String,
    pub threads: u64,
    pub unit: &'static str,
    pub sysgauge: Option<f64>,
    pub openssl: Option<f64>,
    /// The implementation sysgauge's case used, how it was chosen, and the
    /// trial's rate of every candidate (its details), when it has them.
    pub implementation: Option<String>,
    pub choice: Option<String>,
    pub trial: Option<String>,
    /// How much sysgauge's figure varied between its repetitions
    /// (coefficient of variation), when it was measured more than once;
    /// with rounds, how much the rounds' ratios varied.
    pub spread: Option<f64>,
    /// With `--rounds`: each round's sysgauge / OpenSSL, OpenSSL measured
    /// right after that round (see [`vs_rows_by_round`]); empty otherwise.
    pub round_ratios: Vec<f64>,
}

impl VsRow {
    /// sysgauge / OpenSSL (higher is better for sysgauge): the median of
    /// the rounds' ratios where there are two or more, else the ratio of
    /// the two figures.
    pub fn ratio(&self) -> Option<f64> {
        if self.round_ratios.len() >= 2 {
            return Some(median(&self.round_ratios));
        }
        match (self.sysgauge, self.openssl) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        }
    }
}

/// Pair sysgauge's results with OpenSSL's (same id, block size, threads and
/// metric), in sysgauge's order, then anything only OpenSSL measured.
pub fn vs_rows(ours: &[ResultRecord], openssl: &[ResultRecord]) -> Vec<VsRow> {
    let mut rows: Vec<VsRow> = Vec::new();
    let key_of = |r: &ResultRecord, metric: &str| {
        (
            r.bench_id.clone(),
            r.params.get_u64("block_size"),
            threads_of(r),
            metric.to_string(),
        )
    };
    let mut push = |r: &ResultRecord, from_ours: bool| {
        let metrics: Vec<&str> = if r.params.get_u64("block_size").is_some() {
            vec!["throughput"]
        } else {
            r.metrics.iter().map(|m| m.name.as_str()).collect()
        };
        let detail = |key: &str| r.details.get_str(key).map(str::to_string);
        for m in metrics {
            let key = key_of(r, m);
            let value = metric_value(r, m);
            let spread = r
                .metrics
                .iter()
                .find(|x| x.name == m && x.summary.n > 1)
                .map(|x| shown_spread(r, x));
            let existing = rows.iter_mut().find(|row| {
                (
                    row.bench_id.clone(),
                    parse_size(&row.what),
                    row.threads,
                    metric_of(&row.what).to_string(),
                ) == key
            });
            match existing {
                Some(row) => {
                    if from_ours {
                        row.sysgauge = row.sysgauge.or(value);
                        row.implementation = row
                            .implementation
                            .take()
                            .or_else(|| detail(DETAIL_IMPLEMENTATION));
                        row.choice = row.choice.take().or_else(|| detail(DETAIL_CHOICE));
                        row.trial = row.trial.take().or_else(|| detail(DETAIL_TRIAL));
                        row.spread = row.spread.or(spread);
                    } else {
                        row.openssl = row.openssl.or(value);
                    }
                }
                None => {
                    let (what, unit) = match key.1 {
                        Some(size) => (format!("{size} bytes"), "MB/s"),
                        None => (m.to_string(), "op/s"),
                    };
                    rows.push(VsRow {
                        bench_id: key.0,
                        what,
                        threads: key.2,
                        unit,
                        sysgauge: if from_ours { value } else { None },
                        openssl: if from_ours { None } else { value },
                        implementation: from_ours.then(|| detail(DETAIL_IMPLEMENTATION)).flatten(),
                        choice: from_ours.then(|| detail(DETAIL_CHOICE)).flatten(),
                        trial: from_ours.then(|| detail(DETAIL_TRIAL)).flatten(),
                        spread: spread.filter(|_| from_ours),
                        round_ratios: Vec::new(),
                    });
                }
            }
        }
    };
    for r in ours
        .iter()
        .filter(|r| r.family == "crypto" || r.family == "hash")
    {
        push(r, true);
    }
    for r in openssl {
        push(r, false);
    }
    rows
}

/// Pair sysgauge's results with OpenSSL's when OpenSSL ran after every
/// round of every case (`crypto --vs-openssl --rounds N`): `openssl[i]`
/// holds what ran right after round i + 1. A row's OpenSSL figure is the
/// median of its rounds, and its ratio the median of the rounds' ratios,
/// each of sysgauge's rounds against the OpenSSL run right after it: a
/// spell of load on a shared host then moves one round's ratio, not the
/// row's.
pub fn vs_rows_by_round(ours: &[ResultRecord], openssl: &[Vec<ResultRecord>]) -> Vec<VsRow> {
    let theirs: Vec<Vec<VsRow>> = openssl.iter().map(|t| vs_rows(&[], t)).collect();
    let same = |a: &VsRow, b: &VsRow| {
        a.bench_id == b.bench_id && a.what == b.what && a.threads == b.threads
    };
    let mut rows = vs_rows(ours, &[]);
    for row in &mut rows {
        let their_rounds: Vec<Option<f64>> = theirs
            .iter()
            .map(|t| t.iter().find(|x| same(x, row)).and_then(|x| x.openssl))
            .collect();
        let measured: Vec<f64> = their_rounds.iter().flatten().copied().collect();
        if !measured.is_empty() {
            row.openssl = Some(median(&measured));
        }
        let our_rounds = ours
            .iter()
            .find(|r| {
                r.bench_id == row.bench_id
                    && r.params.get_u64("block_size") == parse_size(&row.what)
                    && threads_of(r) == row.threads
            })
            .and_then(|r| metric_samples(r, metric_of(&row.what)))
            .unwrap_or_default();
        // One sample a round only when every round of the case finished.
        if our_rounds.len() == their_rounds.len() {
            row.round_ratios = our_rounds
                .iter()
                .zip(&their_rounds)
                .filter_map(|(&a, &b)| b.filter(|&b| b > 0.0).map(|b| a / b))
                .collect();
        }
        // The row's figure is now the ratio: its spread is the rounds'.
        if row.round_ratios.len() >= 2 {
            row.spread = Summary::from_samples(&row.round_ratios).map(|s| s.cov);
        }
    }
    // What only OpenSSL measured, as its first round showed it.
    for x in theirs.first().into_iter().flatten() {
        if !rows.iter().any(|r| same(r, x)) {
            rows.push(x.clone());
        }
    }
    rows
}

fn parse_size(what: &str) -> Option<u64> {
    what.strip_suffix(" bytes").and_then(|s| s.parse().ok())
}

fn metric_of(what: &str) -> &str {
    if what.ends_with(" bytes") {
        "throughput"
    } else {
        what
    }
}

/// Why an id of OpenSSL's has no sysgauge counterpart, where that is not
/// plain (the table shows it on its own row, without a ratio).
fn not_comparable(bench_id: &str) -> Option<&'static str> {
    match bench_id {
        "openssl.dsa2048" => Some(
            "dsa 2048 bits: `openssl speed` signs with its built-in key, whose q has 160 bits; \
             crypto.dsa-2048 uses FIPS 186-4's (2048, 256) (RFC 6979 A.2.2's key). DSA's \
             exponents are as long as q, so these are different workloads and get no ratio \
             (docs/performance.md compares both on the same key).",
        ),
        _ => None,
    }
}

/// The side-by-side table: algorithm, case, sysgauge, OpenSSL, ratio, and
/// a note for each OpenSSL row that is a different workload.
pub fn vs_openssl_table(rows: &[VsRow], format: TableFormat) -> String {
    let by_round = rows.iter().any(|r| !r.round_ratios.is_empty());
    let mut t = Table::columns(if by_round {
        "algorithm, case, >threads, >sysgauge, >openssl, unit, >ratio, ratio of each round"
    } else {
        "algorithm, case, >threads, >sysgauge, >openssl, unit, >ratio"
    });
    let num = |v: Option<f64>| v.map_or("-".to_string(), sysgauge_report::format::format_value);
    for r in rows {
        let mut cells = vec![
            display_name(&r.bench_id),
            r.what.clone(),
            r.threads.to_string(),
            num(r.sysgauge),
            num(r.openssl),
            r.unit.to_string(),
            r.ratio().map_or("-".to_string(), |x| format!("{x:.2}")),
        ];
        if by_round {
            let each: Vec<String> = r.round_ratios.iter().map(|x| format!("{x:.2}")).collect();
            cells.push(each.join(" "));
        }
        t.push(cells);
    }
    let mut out = t.render(format);
    out.push_str(&implementation_lines(rows));
    let mut notes: Vec<&str> = rows
        .iter()
        .filter_map(|r| not_comparable(&r.bench_id))
        .collect();
    notes.dedup();
    for n in notes {
        out.push_str("note: ");
        out.push_str(n);
        out.push('\n');
    }
    out
}

/// The heading of the implementation lines, in `--vs-openssl` tables and
/// `--implementations` sections alike.
const IMPLEMENTATION_HEADING: &str =
    "implementation of each row (for a trial: every candidate's rate, the fastest chosen):\n";

/// One line per row that names its implementation: which one ran and how
/// it was chosen (every candidate's trial rate, or forced, or the only
/// one), from the result's details, so what is shown is what was stored.
fn implementation_lines(rows: &[VsRow]) -> String {
    let used: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let name = r.implementation.as_deref()?;
            let how = match (&r.trial, &r.choice) {
                (Some(trial), _) => format!("trial on this CPU: {trial}"),
                (None, Some(choice)) if choice.starts_with("forced") => {
                    format!("{choice} (no trial)")
                }
                (None, Some(choice)) => choice.clone(),
                (None, None) => String::new(),
            };
            let sep = if how.is_empty() { "" } else { "; " };
            Some(format!(
                "  {} {}: {name}{sep}{how}\n",
                display_name(&r.bench_id),
                r.what
            ))
        })
        .collect();
    let mut out = String::new();
    if !used.is_empty() {
        out.push_str(IMPLEMENTATION_HEADING);
        let mut seen = BTreeSet::new();
        for line in used {
            if seen.insert(line.clone()) {
                out.push_str(&line);
            }
        }
    }
    out
}

/// `--implementations` of `crypto` and `run`: after the table, each hash
/// and crypto case's implementation with every candidate's trial rate, as
/// stored in its details (nothing is measured again). Empty when no case
/// names one.
pub fn implementations_section(results: &[ResultRecord]) -> String {
    let ok: Vec<ResultRecord> = results
        .iter()
        .filter(|r| matches!(r.status, Status::Ok))
        .cloned()
        .collect();
    let lines = implementation_lines(&vs_rows(&ok, &[]));
    if lines.is_empty() {
        return lines;
    }
    format!("\n{lines}")
}

/// The code of the finding that names the rows where sysgauge's code was
/// slower than the system OpenSSL.
pub const BELOW_OPENSSL: &str = "below-openssl";

/// The finding for the rows whose ratio, as the table shows it (two
/// decimals), is below 1.00: those figures are about sysgauge's code, and
/// understate the machine. A row whose gap is within its own figure's
/// spread between repetitions says so: on a shared or virtual machine one
/// round of the two tools can read either way. `None` when no row is below.
pub fn below_openssl(rows: &[VsRow]) -> Option<Finding> {
    let compared = rows.iter().filter(|r| r.ratio().is_some()).count();
    let mut within_spread = 0;
    let below: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let x = r.ratio()?;
            let threads = if r.threads > 1 {
                format!(", {} threads", r.threads)
            } else {
                String::new()
            };
            (x < 0.995).then(|| {
                let spread = match r.spread {
                    Some(c) if c >= 1.0 - x => {
                        within_spread += 1;
                        format!(", within its figure's spread of {:.1} %", c * 100.0)
                    }
                    _ => String::new(),
                };
                format!(
                    "{} {}{threads} {x:.2}x ({}{spread})",
                    display_name(&r.bench_id),
                    r.what,
                    r.implementation.as_deref().unwrap_or("its only code")
                )
            })
        })
        .collect();
    if below.is_empty() {
        return None;
    }
    let mut f = Finding::new(
        BELOW_OPENSSL,
        Severity::Warning,
        format!(
            "sysgauge's code was slower than the system OpenSSL on {} of {compared} rows: {}; \
             those figures (and the indexes built on them) understate this machine: they \
             measure sysgauge's implementation, not the CPU",
            below.len(),
            below.join("; ")
        ),
    );
    let repeat = if within_spread > 0 {
        "repeat `crypto --vs-openssl --rounds 3` at a quieter time first (each row then \
         weighs every round against the OpenSSL run right after it, and a row within its \
         spread may read 1.00 or more); if a row stays below, "
    } else {
        ""
    };
    f.remedy = Some(format!(
        "{repeat}report the `crypto --vs-openssl` output (its trial lines name every \
         candidate's rate) with `sysgauge host`, so a faster candidate can be added for this CPU"
    ));
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::record::{Metric, Params};
    use sysgauge_core::Better;

    fn rec(id: &str, params: Params, metrics: &[(&str, Unit, f64)]) -> ResultRecord {
        ResultRecord {
            family: id.split('.').next().unwrap_or("").into(),
            ..ResultRecord::new(
                id,
                params,
                Status::Ok,
                metrics
                    .iter()
                    .filter_map(|(n, u, v)| Metric::new(n, u.clone(), Better::Higher, vec![*v]))
                    .collect(),
            )
        }
    }

    fn sym(id: &str, size: u64, mbps: f64) -> ResultRecord {
        rec(
            id,
            Params::new().with("block_size", size).with("threads", 1u64),
            &[("throughput", Unit::MBps, mbps)],
        )
    }

    #[test]
    fn openssl_layout() {
        let mut skipped = rec("crypto.rsa-1024", Params::new().with("threads", 1u64), &[]);
        skipped.status = Status::Skipped {
            reason: "refused".into(),
            hint: None,
        };
        let results = vec![
            sym("hash.md5", 16, 150.5),
            sym("hash.md5", 8192, 750.25),
            sym("crypto.aes-128-cbc", 8192, 1600.0),
            skipped,
            rec(
                "crypto.rsa-2048",
                Params::new().with("threads", 1u64),
                &[
                    ("sign", Unit::OpsPerSec, 2000.0),
                    ("verify", Unit::OpsPerSec, 50000.0),
                ],
            ),
            rec(
                "crypto.x25519",
                Params::new().with("threads", 1u64),
                &[("ops", Unit::OpsPerSec, 40000.0)],
            ),
        ];
        let text = speed_table(&results, TableFormat::Text);
        assert!(text.contains("1000s of bytes per second"), "{text}");
        assert!(
            text.contains("16 bytes") && text.contains("8192 bytes"),
            "{text}"
        );
        assert!(
            text.contains("150500.00k") && text.contains("750250.00k"),
            "{text}"
        );
        let aes = text
            .lines()
            .find(|l| l.starts_with("aes-128-cbc"))
            .unwrap_or("");
        assert!(aes.contains(" -") && aes.contains("1600000.00k"), "{aes}");
        assert!(
            text.contains("rsa 2048 bits") && text.contains("0.000500s") && text.contains("2000.0"),
            "{text}"
        );
        assert!(
            text.contains("ecdh 253 bits (X25519)") && text.contains("40000.0"),
            "{text}"
        );
        assert!(
            text.contains("crypto.rsa-1024: skipped (refused)"),
            "{text}"
        );
        assert!(!text.contains("threads:"));
        assert!(
            !text.contains("rsa 1024 bits  0"),
            "a skip has no numbers: {text}"
        );
    }

    #[test]
    fn several_thread_counts_get_their_own_tables() {
        let mut two = sym("crypto.rc4", 8192, 900.0);
        two.params.insert("threads", 2u64);
        let text = speed_table(&[sym("crypto.rc4", 8192, 450.0), two], TableFormat::Text);
        assert!(
            text.contains("threads: 1") && text.contains("threads: 2"),
            "{text}"
        );
    }

    #[test]
    fn side_by_side_ratios() {
        let ours = vec![
            sym("crypto.aes-128-gcm", 8192, 13000.0),
            rec(
                "crypto.ed25519",
                Params::new().with("threads", 1u64),
                &[("sign", Unit::OpsPerSec, 30000.0)],
            ),
        ];
        let theirs = vec![
            sym("crypto.aes-128-gcm", 8192, 5000.0),
            rec(
                "crypto.ed25519",
                Params::new().with("threads", 1u64),
                &[
                    ("sign", Unit::OpsPerSec, 20000.0),
                    ("verify", Unit::OpsPerSec, 7000.0),
                ],
            ),
            sym("crypto.aes-128-gcm", 16, 700.0),
        ];
        let rows = vs_rows(&ours, &theirs);
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!(rows[0].ratio(), Some(2.6));
        assert_eq!(rows[1].what, "sign");
        assert_eq!(rows[1].ratio(), Some(1.5));
        assert_eq!(rows[2].what, "verify");
        assert_eq!(rows[2].sysgauge, None);
        assert_eq!(rows[3].what, "16 bytes");
        let text = vs_openssl_table(&rows, TableFormat::Text);
        assert!(text.contains("2.60") && text.contains("1.50"), "{text}");
        assert!(text.contains("EdDSA 253 bits (Ed25519)"), "{text}");
    }

    /// Each row names the implementation its case used and the trial's
    /// rates; rows below 1.00 as shown (not 0.996) make the finding.
    #[test]
    fn trial_lines_and_the_below_openssl_finding() {
        let with_trial = |mut r: ResultRecord, name: &str, trial: Option<&str>| {
            r.details.insert(DETAIL_IMPLEMENTATION, name);
            match trial {
                Some(t) => r.details.insert(DETAIL_TRIAL, t),
                None => r
                    .details
                    .insert(DETAIL_CHOICE, "forced with --implementation"),
            }
            r
        };
        let ours = vec![
            with_trial(
                sym("hash.sha512", 8192, 775.8),
                "sysgauge-avx512vl",
                Some("sysgauge-avx512vl 790, sysgauge-avx2 770, rustcrypto 600 MB/s"),
            ),
            with_trial(sym("hash.md5", 8192, 996.0), "sysgauge", None),
            sym("crypto.rc4", 8192, 1020.0),
        ];
        let theirs = vec![
            sym("hash.sha512", 8192, 854.8),
            sym("hash.md5", 8192, 1000.0),
            sym("crypto.rc4", 8192, 1000.0),
        ];
        let rows = vs_rows(&ours, &theirs);
        let text = vs_openssl_table(&rows, TableFormat::Text);
        assert!(
            text.contains("sha512 8192 bytes: sysgauge-avx512vl; trial on this CPU: sysgauge-avx512vl 790, sysgauge-avx2 770, rustcrypto 600 MB/s"),
            "{text}"
        );
        assert!(
            text.contains("md5 8192 bytes: sysgauge; forced with --implementation"),
            "{text}"
        );
        let f = below_openssl(&rows).unwrap_or_else(|| panic!("no finding for\n{text}"));
        assert_eq!(f.code, BELOW_OPENSSL);
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.contains("on 1 of 3 rows"), "{}", f.message);
        assert!(
            f.message
                .contains("sha512 8192 bytes 0.91x (sysgauge-avx512vl)"),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("understate this machine"),
            "{}",
            f.message
        );
        assert!(!f.message.contains("md5") && !f.message.contains("rc4"));
        // Even or faster everywhere: no finding.
        assert!(below_openssl(&rows[1..]).is_none());
    }

    /// A row whose gap to OpenSSL is within its own figure's spread
    /// between repetitions says so, and the remedy asks for a quieter
    /// repeat first; a gap beyond the spread reads as before.
    #[test]
    fn with_rounds_a_row_is_the_median_of_its_rounds_ratios() {
        // sysgauge's merged records: one sample a round, in round order.
        let rounds = |mut r: ResultRecord, per_metric: &[(&str, Unit, [f64; 3])]| {
            r.metrics = per_metric
                .iter()
                .map(|(n, u, v)| Metric::new(n, u.clone(), Better::Higher, v.to_vec()).unwrap())
                .collect();
            r
        };
        let rsa = Params::new().with("threads", 1u64);
        let ours = [
            rounds(
                sym("hash.sha512", 8192, 0.0),
                &[("throughput", Unit::MBps, [800.0, 700.0, 820.0])],
            ),
            rounds(
                rec("crypto.rsa-2048", rsa.clone(), &[]),
                &[
                    ("sign", Unit::OpsPerSec, [1000.0, 1100.0, 1050.0]),
                    ("verify", Unit::OpsPerSec, [30000.0, 31000.0, 29000.0]),
                ],
            ),
        ];
        let theirs_rsa = |sign: f64| {
            rec(
                "crypto.rsa-2048",
                rsa.clone(),
                &[
                    ("sign", Unit::OpsPerSec, sign),
                    ("verify", Unit::OpsPerSec, 30000.0),
                ],
            )
        };
        // The host slowed both programs in round 2; OpenSSL's RSA run of
        // round 3 gave nothing.
        let theirs = vec![
            vec![sym("hash.sha512", 8192, 820.0), theirs_rsa(1000.0)],
            vec![sym("hash.sha512", 8192, 690.0), theirs_rsa(1000.0)],
            vec![sym("hash.sha512", 8192, 800.0)],
        ];
        let rows = vs_rows_by_round(&ours, &theirs);
        assert_eq!(rows.len(), 3, "{rows:?}");
        let sha = &rows[0];
        assert_eq!((sha.sysgauge, sha.openssl), (Some(800.0), Some(800.0)));
        let each: Vec<String> = sha.round_ratios.iter().map(|x| format!("{x:.3}")).collect();
        assert_eq!(each, ["0.976", "1.014", "1.025"]);
        // The median of the rounds' ratios, not the ratio of the medians
        // (1.00): each round is weighed against the OpenSSL run beside it.
        assert_eq!(format!("{:.3}", sha.ratio().unwrap()), "1.014");
        // Its spread is the rounds' ratios' (2.6 %), not sysgauge's own
        // figure's between rounds (8 %).
        assert_eq!(format!("{:.3}", sha.spread.unwrap()), "0.026");
        let sign = &rows[1];
        assert_eq!(sign.what, "sign");
        assert_eq!(sign.round_ratios, [1.0, 1.1]);
        assert_eq!(sign.openssl, Some(1000.0));
        assert!((sign.ratio().unwrap() - 1.05).abs() < 1e-12);
        let table = vs_openssl_table(&rows, TableFormat::Text);
        assert!(table.contains("ratio of each round"), "{table}");
        assert!(table.contains("0.98 1.01 1.02"), "{table}");
        // Without rounds, the table has no such column.
        let plain = vs_rows(&[sym("hash.sha512", 8192, 800.0)], &theirs[0]);
        assert!(plain[0].round_ratios.is_empty());
        let table = vs_openssl_table(&plain, TableFormat::Text);
        assert!(!table.contains("each round"), "{table}");
    }

    #[test]
    fn a_gap_within_the_figures_spread_is_named() {
        let spread = |id: &str, samples: Vec<f64>| {
            let mut r = sym(id, 8192, 0.0);
            r.metrics =
                vec![Metric::new("throughput", Unit::MBps, Better::Higher, samples).unwrap()];
            r
        };
        // Median 776, coefficient of variation about 9.7 %; 0.91x of OpenSSL.
        let noisy = spread("hash.sha512", vec![700.0, 776.0, 850.0]);
        // Median 900 within 1 %; 0.90x.
        let steady = spread("hash.md5", vec![895.0, 900.0, 905.0]);
        let theirs = [
            sym("hash.sha512", 8192, 854.8),
            sym("hash.md5", 8192, 1000.0),
        ];
        let rows = vs_rows(&[noisy.clone(), steady.clone()], &theirs);
        assert!(rows[0].spread.unwrap() > 0.09 && rows[1].spread.unwrap() < 0.01);
        let f = below_openssl(&rows).unwrap();
        assert!(
            f.message.contains(
                "sha512 8192 bytes 0.91x (its only code, within its figure's spread of 9.7 %)"
            ),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("md5 8192 bytes 0.90x (its only code)"),
            "{}",
            f.message
        );
        let remedy = f.remedy.unwrap();
        assert!(
            remedy.starts_with("repeat `crypto --vs-openssl --rounds 3` at a quieter time first"),
            "{remedy}"
        );
        // Only the steady row below: the remedy goes straight to the report.
        let f = below_openssl(&vs_rows(&[steady], &theirs)).unwrap();
        assert!(f.remedy.unwrap().starts_with("report the"));
        // One sample has no spread to speak of.
        let one = vs_rows(&[sym("hash.sha512", 8192, 776.0)], &theirs);
        assert_eq!(one[0].spread, None);
    }

    /// OpenSSL's DSA-2048 (its 160-bit-q key) is not paired with
    /// `crypto.dsa-2048`: its own row, no ratio, and a note saying why.
    #[test]
    fn openssls_dsa_2048_key_is_another_workload() {
        let dsa = |id: &str, v: f64| {
            rec(
                id,
                Params::new().with("threads", 1u64),
                &[("sign", Unit::OpsPerSec, v)],
            )
        };
        let ours = vec![dsa("crypto.dsa-2048", 2900.0)];
        let theirs = vec![dsa(&crate::openssl_speed::bench_id_for("dsa2048"), 4200.0)];
        let rows = vs_rows(&ours, &theirs);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows.iter().all(|r| r.ratio().is_none()));
        let text = vs_openssl_table(&rows, TableFormat::Text);
        assert!(text.contains("openssl's key (160-bit q)"), "{text}");
        assert_eq!(text.matches("note: dsa 2048 bits").count(), 1, "{text}");
    }

    #[test]
    fn names() {
        assert_eq!(display_name("crypto.dsa-2048"), "dsa 2048 bits");
        assert_eq!(
            display_name("openssl.dsa2048"),
            "dsa 2048 bits, openssl's key (160-bit q)"
        );
        assert_eq!(
            display_name("crypto.ecdsa-p384"),
            "ecdsa 384 bits (nistp384)"
        );
        assert_eq!(display_name("crypto.ecdh-p256"), "ecdh 256 bits (nistp256)");
        for (id, name) in [
            ("crypto.ecdsa-p192", "ecdsa 192 bits (nistp192)"),
            ("crypto.ecdsa-p224", "ecdsa 224 bits (nistp224)"),
            ("crypto.ecdh-p192", "ecdh 192 bits (nistp192)"),
            ("crypto.ecdh-p224", "ecdh 224 bits (nistp224)"),
        ] {
            assert_eq!(display_name(id), name);
        }
        assert_eq!(display_name("hash.blake2b-512"), "blake2b-512");
        assert_eq!(display_name("crypto.rsa-4096"), "rsa 4096 bits");
    }
}
