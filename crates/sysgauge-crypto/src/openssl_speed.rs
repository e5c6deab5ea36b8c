//! Reading `openssl speed -mr` output (its machine-readable mode), and
//! through `table` the human-readable table, and turning either into
//! sysgauge result records.
//!
//! Used by `sysgauge import` (an existing OpenSSL table compared with sysgauge
//! runs) and by `sysgauge crypto --vs-openssl` (openssl run side by side with
//! sysgauge's own kernels). The parser takes the text, never a file or a
//! process, so it is tested against captured output of the real program
//! (`tests/fixtures/openssl/`).
//!
//! The format, as OpenSSL 1.1.1 … 3.x write it on stdout:
//! - `+H:16:64:…` the block sizes of the symmetric records that follow;
//! - `+F:IDX:NAME:V1:V2:…` a digest or cipher, bytes per second per block size
//!   (the human table prints the same numbers divided by 1000, "1000s of
//!   bytes per second");
//! - `+F2` RSA and `+F3` DSA `IDX:BITS:SIGN/s:VERIFY/s`; `+F4` ECDSA
//!   `IDX:BITS:SIGN/s:VERIFY/s` (the curve is told by its index in openssl's
//!   curve table); `+F5` ECDH `IDX:BITS:OP/s:S/OP`; `+F6` EdDSA and `+F7` SM2
//!   `IDX:BITS:NAME:SIGN/s:VERIFY/s`; `+F8` FFDH `IDX:BITS:OP/s:S/OP`;
//! - with `-multi N`: `Forked child K` lines, every child's records echoed as
//!   `Got: RECORD from K`, then the summed records (without a `+H`). Without
//!   `-mr` the parent prints the same `Forked child` and `Got:` lines (its
//!   children always speak `-mr`), then the summed numbers as its table.
//!
//! Progress records that openssl writes to stderr (`+DT`, `+DTP`, `+R…`) are
//! accepted and ignored, so `2>&1` captures read too. Records this parser does
//! not know (a newer openssl's) are listed in `SpeedReport::unsupported`
//! rather than failing the whole file or vanishing silently. A rate of 0 is
//! what openssl prints for a case it did not run (`+F:2:md4:0.00` when the
//! legacy provider that has MD4 is not loaded, exit status 0): it is listed in
//! `SpeedReport::not_run`, and gives no result.
//!
//! OpenSSL 1.1.0 and older wrote seconds per operation in `+F2`…`+F4` and in
//! the first field of `+F5`; such a file is recognised by its `+F5` records
//! (first field smaller than the second) and converted.

/// A captured `openssl speed` output (tests/fixtures/openssl/), for the
/// tests of both parsers.
#[cfg(test)]
macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/openssl/",
            $name
        ))
    };
}

mod table;
pub use table::parse_table;

use chrono::{DateTime, Utc};
use sysgauge_core::record::{Metric, Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{line_error as err, mb_per_s, LineError};

/// What one `openssl speed -mr` output holds.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedReport {
    /// OpenSSL version, when the text carries it (a `version:` line, or the
    /// output of `openssl version` placed before the records). Plain `-mr`
    /// output does not.
    pub version: Option<String>,
    /// The table's preamble: `built on:`, `options:`, `compiler:` (the
    /// build the numbers are of).
    pub built_on: Option<String>,
    pub options: Option<String>,
    pub compiler: Option<String>,
    /// Number of processes the numbers add up (`-multi N`); 1 otherwise.
    pub processes: u32,
    pub symmetric: Vec<SymmetricRow>,
    pub sign_verify: Vec<SignVerifyRow>,
    pub key_exchange: Vec<KeyExchangeRow>,
    /// Records this parser does not understand (from a newer openssl), kept
    /// so the caller can say what was left out.
    pub unsupported: Vec<UnsupportedLine>,
    /// Rows with rates of 0: cases openssl did not run, left out of the
    /// results.
    pub not_run: Vec<NotRun>,
}

impl SpeedReport {
    /// Nothing read yet: one process, no rows.
    fn empty() -> SpeedReport {
        SpeedReport {
            version: None,
            built_on: None,
            options: None,
            compiler: None,
            processes: 1,
            symmetric: Vec::new(),
            sign_verify: Vec::new(),
            key_exchange: Vec::new(),
            unsupported: Vec::new(),
            not_run: Vec::new(),
        }
    }

    /// Adds a digest's or cipher's row read at `line`.
    fn push_symmetric(&mut self, row: SymmetricRow, line: usize) {
        let zeros = row
            .block_sizes
            .iter()
            .zip(&row.bytes_per_second)
            .filter(|(_, &v)| v == 0.0)
            .map(|(size, _)| format!("{size} bytes"));
        self.note_not_run(line, &row.algorithm, zeros);
        self.symmetric.push(row);
    }

    /// Adds a signature row read at `line`.
    fn push_sign_verify(&mut self, row: SignVerifyRow, line: usize) {
        let zeros = [
            ("sign/s", row.sign_per_second),
            ("verify/s", row.verify_per_second),
        ]
        .into_iter()
        .filter(|(_, v)| *v == Some(0.0))
        .map(|(column, _)| column.to_string());
        self.note_not_run(line, &row.algorithm, zeros);
        self.sign_verify.push(row);
    }

    /// Adds a key exchange row read at `line`.
    fn push_key_exchange(&mut self, row: KeyExchangeRow, line: usize) {
        let zero = (row.ops_per_second == 0.0).then(|| "op/s".to_string());
        self.note_not_run(line, &row.algorithm, zero);
        self.key_exchange.push(row);
    }

    fn note_not_run(
        &mut self,
        line: usize,
        algorithm: &str,
        cells: impl IntoIterator<Item = String>,
    ) {
        let cells: Vec<String> = cells.into_iter().collect();
        if !cells.is_empty() {
            self.not_run.push(NotRun {
                line,
                algorithm: algorithm.to_string(),
                cells,
            });
        }
    }
}

/// A digest, MAC or cipher: bytes per second at each block size.
#[derive(Debug, Clone, PartialEq)]
pub struct SymmetricRow {
    /// openssl's own name (`md5`, `AES-128-GCM`, `hmac(sha256)`, `des-ede3`).
    pub algorithm: String,
    pub block_sizes: Vec<u64>,
    /// One value per block size; 0 where openssl did not run that size.
    pub bytes_per_second: Vec<f64>,
}

/// A signature algorithm: signatures and verifications per second.
#[derive(Debug, Clone, PartialEq)]
pub struct SignVerifyRow {
    /// openssl's command-line name (`rsa2048`, `dsa2048`, `ecdsap256`,
    /// `ecdsabrp256r1`, `ed25519`, `ed448`, `sm2`).
    pub algorithm: String,
    /// Key or curve size as openssl prints it (253 for Ed25519).
    pub bits: Option<u32>,
    pub sign_per_second: Option<f64>,
    pub verify_per_second: Option<f64>,
}

/// A key exchange: derivations per second.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyExchangeRow {
    /// openssl's command-line name (`ecdhp256`, `ecdhx25519`, `ffdh2048`).
    pub algorithm: String,
    pub bits: Option<u32>,
    pub ops_per_second: f64,
}

/// A record the parser skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedLine {
    /// 1-based line number.
    pub line: usize,
    pub text: String,
}

/// A row whose rates are 0 where openssl did not run the case: an
/// algorithm its providers lack (`md4`, `blowfish` without the legacy
/// provider in 3.x: a row of `0.00`, exit status 0), or, with `-multi`, one
/// no child ran. Not a measurement, so it gives no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRun {
    /// 1-based line number.
    pub line: usize,
    /// openssl's name, as in the rows.
    pub algorithm: String,
    /// The cells of 0: `16 bytes`, `sign/s`, `op/s`.
    pub cells: Vec<String>,
}

/// Why a text is not usable `openssl speed` output.
pub type OpensslSpeedError = LineError;

/// A curve in openssl's table: command-line suffix, the bit count
/// `speed` prints for it, and whether it is a binary curve (left out of a
/// `no-ec2m` build's table).
#[derive(Clone, Copy)]
struct Curve {
    name: &'static str,
    bits: u32,
    binary: bool,
}

const fn c(name: &'static str, bits: u32) -> Curve {
    Curve {
        name,
        bits,
        binary: false,
    }
}

/// A binary curve (sect…, the `k` and `b` curves).
const fn b(name: &'static str, bits: u32) -> Curve {
    Curve {
        name,
        bits,
        binary: true,
    }
}

/// `all` without its binary curves, in the same order; `N` must be their
/// number (checked when the constant is built).
const fn without_binary<const N: usize>(all: &[Curve]) -> [Curve; N] {
    let mut out = [c("", 0); N];
    let (mut i, mut n) = (0, 0);
    while i < all.len() {
        if !all[i].binary {
            out[n] = all[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "N is not the number of non-binary curves");
    out
}

/// openssl's ECDSA/ECDH curve table with binary curves (OpenSSL ≥ 1.1.1
/// built with EC2M, and 1.1.0 whose table ended with X25519 at index 16).
const CURVES_EC2M: &[Curve] = &[
    c("p160", 160),
    c("p192", 192),
    c("p224", 224),
    c("p256", 256),
    c("p384", 384),
    c("p521", 521),
    b("k163", 163),
    b("k233", 233),
    b("k283", 283),
    b("k409", 409),
    b("k571", 571),
    b("b163", 163),
    b("b233", 233),
    b("b283", 283),
    b("b409", 409),
    b("b571", 571),
    c("brp256r1", 256),
    c("brp256t1", 256),
    c("brp384r1", 384),
    c("brp384t1", 384),
    c("brp512r1", 512),
    c("brp512t1", 512),
    c("x25519", 253),
    c("x448", 448),
];

/// The same table in a build without binary curves (`no-ec2m`, as some
/// distributions ship), where the indexes after P-521 shift down by ten.
const CURVES_NO_EC2M: &[Curve] = &without_binary::<14>(CURVES_EC2M);

/// The curve at `index` with `bits`. The two tables never disagree on an
/// index whose bit count matches (checked by a test), so index and bits
/// together name the curve; a bit count only one curve has is enough when
/// the index is from a table not known here.
fn curve_name(index: u32, bits: u32) -> String {
    let i = index as usize;
    for table in [CURVES_EC2M, CURVES_NO_EC2M] {
        if let Some(cv) = table.get(i).filter(|cv| cv.bits == bits) {
            return cv.name.to_string();
        }
    }
    let mut by_bits = CURVES_EC2M.iter().filter(|cv| cv.bits == bits);
    match (by_bits.next(), by_bits.next()) {
        (Some(cv), None) => cv.name.to_string(),
        _ => format!("curve{index}-{bits}"),
    }
}

/// Parse `openssl speed` output of either kind: `-mr` records when the
/// text holds any of its own (a `+H` or `+F…` line), else the human table
/// (which, with `-multi`, follows the children's records echoed as `Got:
/// +…` lines).
pub fn parse(text: &str) -> Result<SpeedReport, OpensslSpeedError> {
    let machine_readable = text
        .lines()
        .map(str::trim)
        .any(|l| l.starts_with("+H:") || l.starts_with("+F"));
    if machine_readable {
        parse_mr(text)
    } else {
        parse_table(text)
    }
}

/// What `-multi N` adds to the output, with or without `-mr`: a `Forked
/// child K` line per child, and each child's records echoed as `Got: RECORD
/// from K`, of which only the block sizes (`+H`) matter (the parent prints
/// the summed results itself, and the table without `-mr` prints them
/// without its `type … bytes` header).
#[derive(Default)]
struct Children {
    forked: u32,
    /// The children named by `Got:` lines, for an output whose `Forked
    /// child` lines were cut.
    seen: std::collections::BTreeSet<String>,
    sizes: Option<Vec<u64>>,
}

impl Children {
    /// Reads `line` if it is one of `-multi`'s: true when it was.
    fn read(&mut self, line: &str, n: usize) -> Result<bool, OpensslSpeedError> {
        if let Some(rest) = line.strip_prefix("Forked child ") {
            rest.trim()
                .parse::<u32>()
                .map_err(|_| err(n, format!("'{line}' does not name a child number")))?;
            self.forked += 1;
            return Ok(true);
        }
        let Some(rest) = line.strip_prefix("Got: ") else {
            return Ok(false);
        };
        let (record, child) = rest
            .rsplit_once(" from ")
            .ok_or_else(|| err(n, format!("'{line}' is not 'Got: RECORD from CHILD'")))?;
        self.seen.insert(child.trim().to_string());
        if let Some(h) = record.strip_prefix("+H:") {
            let s = parse_sizes(h, n)?;
            match &self.sizes {
                Some(prev) if *prev != s => {
                    return Err(err(n, "children report different block sizes"))
                }
                _ => self.sizes = Some(s),
            }
        }
        Ok(true)
    }

    /// How many processes the summed numbers are of; 0 without `-multi`.
    fn count(&self) -> u32 {
        let seen = u32::try_from(self.seen.len()).unwrap_or(u32::MAX);
        self.forked.max(seen)
    }
}

/// A progress record openssl writes to stderr in `-mr` mode (and its
/// `-multi` children always do): `+DT:…`, `+DTP:…`, `+DN:…`, `+R…:…`.
fn is_progress_record(line: &str) -> bool {
    line.strip_prefix('+').is_some_and(|r| {
        let tag = r.split(':').next().unwrap_or(r);
        tag.starts_with("DT") || tag.starts_with("DN") || tag.starts_with('R')
    })
}

/// Parse `openssl speed -mr` output.
pub fn parse_mr(text: &str) -> Result<SpeedReport, OpensslSpeedError> {
    let mut report = SpeedReport::empty();
    let mut sizes: Option<Vec<u64>> = None;
    let mut children = Children::default();
    // Seconds-per-operation records of OpenSSL ≤ 1.1.0 are converted after
    // the whole file is read, once the +F5 records have told the format.
    let mut old_units = false;
    let mut saw_f5 = false;
    let mut last_line = 0;

    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last_line = n;
        let line = raw.trim_end_matches('\r').trim();
        if line.is_empty() {
            continue;
        }
        if children.read(line, n)? || is_progress_record(line) {
            continue;
        }
        if let Some(v) = line.strip_prefix("version:") {
            report.version = Some(v.trim().to_string());
            continue;
        }
        if let Some(v) = line.strip_prefix("OpenSSL ") {
            // `openssl version` output: "OpenSSL 3.0.19 27 Jan 2026 (...)".
            report.version = v.split_whitespace().next().map(str::to_string);
            continue;
        }
        if [
            "built on:",
            "options:",
            "compiler:",
            "CPUINFO:",
            "platform:",
        ]
        .iter()
        .any(|p| line.starts_with(p))
        {
            continue;
        }
        if line.starts_with("The 'numbers' are in")
            || line.starts_with("type ")
            || line.starts_with("Doing ")
        {
            return Err(err(
                n,
                "this is openssl speed's human-readable table; capture the standard output of `openssl speed -mr ...` instead",
            ));
        }
        let Some(record) = line.strip_prefix('+') else {
            return Err(err(
                n,
                format!(
                    "'{}' is not a line of `openssl speed -mr` output",
                    clip(line)
                ),
            ));
        };
        let (tag, body) = record.split_once(':').unwrap_or((record, ""));
        let fields: Vec<&str> = body.split(':').collect();
        match tag {
            "H" => sizes = Some(parse_sizes(body, n)?),
            "F" => {
                if fields.len() < 3 {
                    return Err(err(n, "a +F record needs an index, a name and values"));
                }
                parse_index(fields[0], n)?;
                let name = fields[1].trim();
                if name.is_empty() {
                    return Err(err(n, "a +F record has an empty algorithm name"));
                }
                let values = fields[2..]
                    .iter()
                    .map(|v| parse_value(v, n))
                    .collect::<Result<Vec<f64>, _>>()?;
                let block_sizes = sizes
                    .clone()
                    .or_else(|| children.sizes.clone())
                    .ok_or_else(|| err(n, "a +F result comes before the +H line that gives its block sizes (is the start of the output missing?)"))?;
                if values.len() != block_sizes.len() {
                    return Err(err(
                        n,
                        format!(
                            "'{name}' has {} values but the +H line lists {} block sizes (truncated?)",
                            values.len(),
                            block_sizes.len()
                        ),
                    ));
                }
                report.push_symmetric(
                    SymmetricRow {
                        algorithm: name.to_string(),
                        block_sizes,
                        bytes_per_second: values,
                    },
                    n,
                );
            }
            "F2" | "F3" | "F4" => {
                let [idx, bits, sign, verify] = fields_exact::<4>(&fields, tag, n)?;
                let idx = parse_index(idx, n)?;
                let bits = parse_bits(bits, n)?;
                let algorithm = match tag {
                    "F2" => format!("rsa{bits}"),
                    "F3" => format!("dsa{bits}"),
                    _ => format!("ecdsa{}", curve_name(idx, bits)),
                };
                report.push_sign_verify(sign_verify_row(algorithm, bits, sign, verify, n)?, n);
            }
            "F5" | "F8" => {
                let [idx, bits, a, b] = fields_exact::<4>(&fields, tag, n)?;
                let idx = parse_index(idx, n)?;
                let bits = parse_bits(bits, n)?;
                let (a, b) = (parse_value(a, n)?, parse_value(b, n)?);
                // One field is op/s, the other s/op. OpenSSL ≥ 1.1.1 puts the
                // rate first; older versions put the time first.
                if tag == "F5" {
                    saw_f5 = true;
                    if a < b {
                        old_units = true;
                    }
                }
                let algorithm = if tag == "F5" {
                    format!("ecdh{}", curve_name(idx, bits))
                } else {
                    format!("ffdh{bits}")
                };
                report.push_key_exchange(
                    KeyExchangeRow {
                        algorithm,
                        bits: Some(bits),
                        ops_per_second: a.max(b),
                    },
                    n,
                );
            }
            "F6" | "F7" => {
                let [idx, bits, name, sign, verify] = fields_exact::<5>(&fields, tag, n)?;
                parse_index(idx, n)?;
                let bits = parse_bits(bits, n)?;
                let name = name.trim().to_ascii_lowercase();
                if name.is_empty() {
                    return Err(err(n, format!("a +{tag} record has an empty name")));
                }
                report.push_sign_verify(sign_verify_row(name, bits, sign, verify, n)?, n);
            }
            _ => report.unsupported.push(UnsupportedLine {
                line: n,
                text: line.to_string(),
            }),
        }
    }
    if old_units && saw_f5 {
        // ≤ 1.1.0: sign/verify fields are seconds per operation.
        for r in &mut report.sign_verify {
            r.sign_per_second = r.sign_per_second.map(invert);
            r.verify_per_second = r.verify_per_second.map(invert);
        }
    }
    if children.count() > 0 {
        report.processes = children.count();
    }
    let last = last_line.max(1);
    if report.symmetric.is_empty()
        && report.sign_verify.is_empty()
        && report.key_exchange.is_empty()
    {
        let what = if text.trim().is_empty() {
            "the file is empty".to_string()
        } else if children.count() > 0 {
            "the children's results are there but the summed results are missing (truncated?)"
                .to_string()
        } else {
            "no results found (expected +F records from `openssl speed -mr`)".to_string()
        };
        return Err(err(last, what));
    }
    Ok(report)
}

/// A `-mr` signature record's row: its rates as the record gives them.
fn sign_verify_row(
    algorithm: String,
    bits: u32,
    sign: &str,
    verify: &str,
    line: usize,
) -> Result<SignVerifyRow, OpensslSpeedError> {
    Ok(SignVerifyRow {
        algorithm,
        bits: Some(bits),
        sign_per_second: Some(parse_value(sign, line)?),
        verify_per_second: Some(parse_value(verify, line)?),
    })
}

fn invert(v: f64) -> f64 {
    if v > 0.0 {
        1.0 / v
    } else {
        0.0
    }
}

fn clip(s: &str) -> String {
    sysgauge_core::text::clipped(s, 60).into_owned()
}

fn fields_exact<'a, const N: usize>(
    fields: &[&'a str],
    tag: &str,
    line: usize,
) -> Result<[&'a str; N], OpensslSpeedError> {
    <[&str; N]>::try_from(fields).map_err(|_| {
        err(
            line,
            format!(
                "a +{tag} record has {} fields, expected {N} (truncated?)",
                fields.len()
            ),
        )
    })
}

fn parse_sizes(body: &str, line: usize) -> Result<Vec<u64>, OpensslSpeedError> {
    let sizes = body
        .split(':')
        .map(|s| {
            s.trim()
                .parse::<u64>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| err(line, format!("block size '{s}' is not a positive integer")))
        })
        .collect::<Result<Vec<u64>, _>>()?;
    if sizes.is_empty() {
        return Err(err(line, "the +H line lists no block sizes"));
    }
    Ok(sizes)
}

fn parse_index(s: &str, line: usize) -> Result<u32, OpensslSpeedError> {
    s.trim()
        .parse::<u32>()
        .map_err(|_| err(line, format!("'{s}' is not an algorithm index")))
}

fn parse_bits(s: &str, line: usize) -> Result<u32, OpensslSpeedError> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| err(line, format!("'{s}' is not a key size in bits")))
}

fn parse_value(s: &str, line: usize) -> Result<f64, OpensslSpeedError> {
    rate(s.trim()).map_err(|why| err(line, format!("'{}' {why}", clip(s.trim()))))
}

/// A rate as openssl prints one: a finite number, 0 or more (0 where it
/// did not run the case); else why not.
fn rate(s: &str) -> Result<f64, &'static str> {
    let v: f64 = s.parse().map_err(|_| "is not a number")?;
    if !v.is_finite() {
        Err("is not a rate (not finite)")
    } else if v < 0.0 {
        Err("is not a rate (negative)")
    } else {
        Ok(v)
    }
}

/// Lowercase, every character outside `[a-z0-9_-]` turned into `-`, runs of
/// `-` collapsed, no leading or trailing `-`/`_`: a valid id part.
fn sanitise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for ch in name.trim().chars() {
        let ch = ch.to_ascii_lowercase();
        let ch = if ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_' {
            ch
        } else {
            '-'
        };
        if !(ch == '-' && out.ends_with('-')) {
            out.push(ch);
        }
    }
    out.trim_matches(|c| c == '-' || c == '_').to_string()
}

/// Cipher names in OpenSSL ≤ 1.1 style (`aes-128 cbc`, `des ede3`) and short
/// aliases, mapped to their EVP names.
fn canonical_cipher(name: &str) -> Option<String> {
    let n = sanitise(name);
    let mapped = match n.as_str() {
        "des-ede3" | "des-ede3-cbc" => "des-ede3-cbc".to_string(),
        "des" | "des-cbc" => "des-cbc".to_string(),
        "blowfish-cbc" | "blowfish" | "bf" | "bf-cbc" => "bf-cbc".to_string(),
        "cast" | "cast-cbc" | "cast5" | "cast5-cbc" => "cast5-cbc".to_string(),
        "idea" | "idea-cbc" => "idea-cbc".to_string(),
        "seed" | "seed-cbc" => "seed-cbc".to_string(),
        "rc2" | "rc2-cbc" => "rc2-cbc".to_string(),
        "rc5" | "rc5-cbc" | "rc5-32-12-cbc" => "rc5-cbc".to_string(),
        _ => n,
    };
    const CIPHER_PREFIXES: [&str; 14] = [
        "aes-",
        "aria-",
        "camellia-",
        "chacha20",
        "des-",
        "bf-",
        "cast5-",
        "rc2-",
        "rc4",
        "rc5-",
        "idea-",
        "seed-",
        "sm4-",
        "id-aes",
    ];
    CIPHER_PREFIXES
        .iter()
        .any(|p| mapped.starts_with(p))
        .then_some(mapped)
}

/// The sysgauge benchmark id for an openssl algorithm name (as it appears in
/// `SymmetricRow`, `SignVerifyRow` or `KeyExchangeRow`):
/// digests `hash.md4|md5|sha1|rmd160|sha256|sha512|whirlpool|blake2b-512`
/// (`ripemd160`, the EVP name, is `rmd160` as the table calls it); ciphers
/// `crypto.<evp name>` (`crypto.aes-128-gcm`, `crypto.des-ede3-cbc`);
/// `hmac(sha256)` → `crypto.hmac-sha256`; `aes-128 ige` →
/// `crypto.aes-128-ige`; `ghash` → `crypto.ghash`; DSA `crypto.dsa-<bits>`
/// (but `dsa2048`, whose key is not `crypto.dsa-2048`'s, is
/// `openssl.dsa2048`); RSA `crypto.rsa-<bits>`; ECDSA on
/// the NIST P curves `crypto.ecdsa-p192|p224|p256|p384|p521`; `crypto.ed25519`;
/// ECDH `crypto.ecdh-p192|p224|p256|p384|p521` and `crypto.x25519`; anything else
/// `openssl.<sanitised name>`, which compares only with other openssl
/// imports.
pub fn bench_id_for(openssl_algorithm: &str) -> String {
    let lower = openssl_algorithm.trim().to_ascii_lowercase();
    let digest = |n: &str| -> Option<&'static str> {
        Some(match n {
            "md4" => "md4",
            "md5" => "md5",
            "sha1" | "sha-1" => "sha1",
            "rmd160" | "ripemd160" | "ripemd-160" | "ripemd" => "rmd160",
            "whirlpool" => "whirlpool",
            "sha256" | "sha2-256" | "sha-256" => "sha256",
            "sha512" | "sha2-512" | "sha-512" => "sha512",
            "blake2b512" | "blake2b-512" => "blake2b-512",
            _ => return None,
        })
    };
    if let Some(d) = digest(&lower) {
        return format!("hash.{d}");
    }
    if let Some(inner) = lower
        .strip_prefix("hmac(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let d = digest(inner)
            .map(str::to_string)
            .unwrap_or_else(|| sanitise(inner));
        if !d.is_empty() {
            return format!("crypto.hmac-{d}");
        }
    }
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some(bits) = lower.strip_prefix("rsa").filter(|b| numeric(b)) {
        return format!("crypto.rsa-{bits}");
    }
    // OpenSSL's built-in DSA-2048 test key has a 160-bit q, where
    // `crypto.dsa-2048` is FIPS 186-4's (2048, 256): DSA's exponents are
    // as long as q, so the two are different workloads and must not share
    // an id. DSA-1024 is (1024, 160) in both.
    if lower == "dsa2048" {
        return "openssl.dsa2048".to_string();
    }
    if let Some(bits) = lower.strip_prefix("dsa").filter(|b| numeric(b)) {
        return format!("crypto.dsa-{bits}");
    }
    if let Some(curve) = lower.strip_prefix("ecdsa") {
        if matches!(curve, "p192" | "p224" | "p256" | "p384" | "p521") {
            return format!("crypto.ecdsa-{curve}");
        }
    }
    if let Some(curve) = lower.strip_prefix("ecdh") {
        match curve {
            "p192" | "p224" | "p256" | "p384" | "p521" => return format!("crypto.ecdh-{curve}"),
            "x25519" => return "crypto.x25519".to_string(),
            _ => {}
        }
    }
    if lower == "ed25519" {
        return "crypto.ed25519".to_string();
    }
    if lower == "ghash" {
        return "crypto.ghash".to_string();
    }
    if let Some(cipher) = canonical_cipher(&lower) {
        return format!("crypto.{cipher}");
    }
    let s = sanitise(&lower);
    if s.is_empty() {
        "openssl.unknown".to_string()
    } else {
        format!("openssl.{s}")
    }
}

/// Result records for a report, timestamped now, with the workload version
/// of each id given. See `to_results_with`.
pub fn to_results(
    report: &SpeedReport,
    workload_version: &dyn Fn(&str) -> Option<u32>,
) -> Vec<ResultRecord> {
    to_results_with(report, Utc::now(), workload_version)
}

/// Result records for a report: one per symmetric algorithm and block size
/// (params `block_size`, `threads`; metric `throughput` in decimal MB/s),
/// one per signature algorithm (metrics `sign` and `verify`, op/s) and one
/// per key exchange (metric `ops`, op/s). `threads` is the number of
/// processes (`-multi`), else 1. openssl gives one number per case, so each
/// metric has a single sample; `details.source` is `openssl speed`. Values
/// of 0 (a case openssl did not run, in `SpeedReport::not_run`) are left
/// out. The workload version of each id is given (an import passes the map
/// it built once, from the families' benchmarks); 1 for an id it does not
/// know.
pub fn to_results_with(
    report: &SpeedReport,
    at: DateTime<Utc>,
    workload_version: &dyn Fn(&str) -> Option<u32>,
) -> Vec<ResultRecord> {
    let threads = u64::from(report.processes.max(1));
    let workload = |id: &str| -> u32 { workload_version(id).unwrap_or(1) };
    let details = |algorithm: &str| {
        let mut d = Params::new()
            .with("source", "openssl speed")
            .with("openssl_algorithm", algorithm);
        if let Some(v) = &report.version {
            d.insert("openssl_version", v.as_str());
        }
        if report.processes > 1 {
            d.insert("processes", u64::from(report.processes));
        }
        d
    };
    let record =
        |id: String, wv: u32, params: Params, details: Params, metrics: Vec<Metric>| ResultRecord {
            workload_version: wv,
            details,
            started_at: at,
            ..ResultRecord::new(&id, params, Status::Ok, metrics)
        };
    let positive = |v: f64| (v.is_finite() && v > 0.0).then_some(v);
    let mut out = Vec::new();
    for row in &report.symmetric {
        let id = bench_id_for(&row.algorithm);
        let wv = workload(&id);
        for (&size, &bps) in row.block_sizes.iter().zip(&row.bytes_per_second) {
            let Some(bps) = positive(bps) else { continue };
            let Some(m) = Metric::new(
                "throughput",
                Unit::MBps,
                Better::Higher,
                vec![mb_per_s(bps)],
            ) else {
                continue;
            };
            out.push(record(
                id.clone(),
                wv,
                Params::new()
                    .with("block_size", size)
                    .with("threads", threads),
                details(&row.algorithm),
                vec![m],
            ));
        }
    }
    // A public-key row: op/s metrics of its positive rates, a record if
    // there is one.
    let mut public_key = |algorithm: &str, rates: &[(&str, Option<f64>)]| {
        let metrics: Vec<Metric> = rates
            .iter()
            .filter_map(|&(name, v)| {
                let v = positive(v?)?;
                Metric::new(name, Unit::OpsPerSec, Better::Higher, vec![v])
            })
            .collect();
        if metrics.is_empty() {
            return;
        }
        let id = bench_id_for(algorithm);
        let wv = workload(&id);
        out.push(record(
            id,
            wv,
            Params::new().with("threads", threads),
            details(algorithm),
            metrics,
        ));
    };
    for row in &report.sign_verify {
        public_key(
            &row.algorithm,
            &[
                ("sign", row.sign_per_second),
                ("verify", row.verify_per_second),
            ],
        );
    }
    for row in &report.key_exchange {
        public_key(&row.algorithm, &[("ops", Some(row.ops_per_second))]);
    }
    out
}

/// Each signature row's algorithm and bits, for the parsers' tests.
#[cfg(test)]
fn signers(r: &SpeedReport) -> Vec<(&str, Option<u32>)> {
    r.sign_verify
        .iter()
        .map(|s| (s.algorithm.as_str(), s.bits))
        .collect()
}

/// Why `parse` refuses `text`, for the parsers' tests.
#[cfg(test)]
#[track_caller]
fn refusal(
    parse: fn(&str) -> Result<SpeedReport, OpensslSpeedError>,
    text: &str,
) -> OpensslSpeedError {
    match parse(text) {
        Err(e) => e,
        Ok(r) => panic!("accepted {text:?}: {r:?}"),
    }
}

/// `got` (0 when missing) equals `want` to nine significant digits: the
/// parsers' tests compare rates with it.
#[cfg(test)]
#[track_caller]
fn assert_close(got: impl Into<Option<f64>>, want: f64) {
    let got = got.into().unwrap_or(0.0);
    assert!(
        (got - want).abs() <= want.abs() * 1e-9,
        "{got} is not {want}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::is_valid_bench_id;

    fn parse(text: &str) -> SpeedReport {
        parse_mr(text).unwrap()
    }

    #[test]
    fn digests_at_8k() {
        let r = parse(fixture!("3.0-sha256-md5-8k.txt"));
        assert_eq!(r.processes, 1);
        assert_eq!(r.version, None);
        assert_eq!(r.symmetric.len(), 2);
        assert_eq!(r.symmetric[0].algorithm, "md5");
        assert_eq!(r.symmetric[0].block_sizes, vec![8192]);
        assert_close(r.symmetric[0].bytes_per_second[0], 731_065_664.65);
        assert_eq!(r.symmetric[1].algorithm, "sha256");
        assert!(r.sign_verify.is_empty() && r.key_exchange.is_empty());
        let res = to_results(&r, &|id| (id == "hash.sha256").then_some(5));
        assert_eq!(res.len(), 2);
        assert_eq!(res[0].bench_id, "hash.md5");
        assert_eq!(res[0].family, "hash");
        assert_eq!(
            res[0].params,
            Params::new()
                .with("block_size", 8192u64)
                .with("threads", 1u64)
        );
        let m = &res[0].metrics[0];
        assert_eq!((m.name.as_str(), &m.unit), ("throughput", &Unit::MBps));
        // -mr gives bytes/s; sysgauge's unit is decimal MB/s.
        assert_close(m.value(), 731.06566465);
        assert_eq!(m.samples.len(), 1);
        assert_eq!(res[0].details.get_str("source"), Some("openssl speed"));
        assert_eq!(res[1].bench_id, "hash.sha256");
        // The workload version given (on import, the hash family's own),
        // so imports compare; 1 for an id without one.
        assert_eq!(res[1].workload_version, 5);
        assert_eq!(res[0].workload_version, 1);
    }

    #[test]
    fn all_block_sizes() {
        let r = parse(fixture!("3.0-digests-all-sizes.txt"));
        assert_eq!(r.symmetric.len(), 4);
        for row in &r.symmetric {
            assert_eq!(row.block_sizes, vec![16, 64, 256, 1024, 8192, 16384]);
            assert_eq!(row.bytes_per_second.len(), 6);
        }
        let ids: Vec<String> = r
            .symmetric
            .iter()
            .map(|s| bench_id_for(&s.algorithm))
            .collect();
        assert_eq!(ids, ["hash.md5", "hash.sha1", "hash.sha256", "hash.sha512"]);
        assert_eq!(to_results(&r, &|_| None).len(), 24);
    }

    #[test]
    fn public_key_records() {
        let r = parse(fixture!("3.0-rsa2048-ecdsap256-x25519-ed25519.txt"));
        assert_eq!(
            signers(&r),
            [
                ("rsa2048", Some(2048)),
                ("ecdsap256", Some(256)),
                ("ed25519", Some(253))
            ]
        );
        assert_close(r.sign_verify[0].sign_per_second, 3213.131313);
        assert_close(r.sign_verify[0].verify_per_second, 62335.0);
        assert_eq!(r.key_exchange.len(), 1);
        assert_eq!(r.key_exchange[0].algorithm, "ecdhx25519");
        assert_close(r.key_exchange[0].ops_per_second, 33027.272727);
        let res = to_results(&r, &|_| None);
        let ids: Vec<&str> = res.iter().map(|x| x.bench_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "crypto.rsa-2048",
                "crypto.ecdsa-p256",
                "crypto.ed25519",
                "crypto.x25519"
            ]
        );
        let names: Vec<&str> = res[0].metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["sign", "verify"]);
        assert_eq!(res[0].metrics[0].unit, Unit::OpsPerSec);
        assert_eq!(res[3].metrics[0].name, "ops");
        assert_eq!(res[3].params, Params::new().with("threads", 1u64));
    }

    #[test]
    fn more_public_key_records() {
        let r = parse(fixture!("3.0-pkey-more.txt"));
        let sv: Vec<&str> = r.sign_verify.iter().map(|s| s.algorithm.as_str()).collect();
        assert_eq!(
            sv,
            ["rsa4096", "dsa2048", "ecdsap384", "ecdsap521", "ed448"]
        );
        let kx: Vec<&str> = r
            .key_exchange
            .iter()
            .map(|s| s.algorithm.as_str())
            .collect();
        assert_eq!(kx, ["ecdhp256", "ecdhx448", "ffdh2048"]);
        let ids: Vec<String> = to_results(&r, &|_| None)
            .into_iter()
            .map(|x| x.bench_id)
            .collect();
        assert_eq!(
            ids,
            [
                "crypto.rsa-4096",
                "openssl.dsa2048",
                "crypto.ecdsa-p384",
                "crypto.ecdsa-p521",
                "openssl.ed448",
                "crypto.ecdh-p256",
                "openssl.ecdhx448",
                "openssl.ffdh2048"
            ]
        );
    }

    /// P-192 and P-224 (rows of the old tables), from `-mr` and from the
    /// human table: the same ids, and the table's numbers.
    #[test]
    fn p192_and_p224_records() {
        let want = [
            "crypto.ecdsa-p192",
            "crypto.ecdsa-p224",
            "crypto.ecdh-p192",
            "crypto.ecdh-p224",
        ];
        let mr = parse(fixture!("3.0-elapsed-ecdsa-ecdh-p192-p224.txt"));
        let table = super::parse(fixture!("3.0-human-table-p192-p224.txt")).unwrap();
        for r in [&mr, &table] {
            assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
            let ids: Vec<String> = to_results(r, &|_| None)
                .into_iter()
                .map(|x| x.bench_id)
                .collect();
            assert_eq!(ids, want);
        }
        assert_eq!(
            signers(&mr),
            [("ecdsap192", Some(192)), ("ecdsap224", Some(224))]
        );
        assert_close(mr.sign_verify[1].sign_per_second, 18197.0);
        assert_close(mr.sign_verify[0].verify_per_second, 4960.0);
        assert_close(mr.key_exchange[1].ops_per_second, 12054.0);
        assert_close(table.sign_verify[1].sign_per_second, 34162.9);
        assert_close(table.key_exchange[0].ops_per_second, 7421.0);
    }

    #[test]
    fn evp_hmac_and_cipher_names() {
        let gcm = parse(fixture!("3.0-evp-aes-128-gcm.txt"));
        assert_eq!(gcm.symmetric[0].algorithm, "AES-128-GCM");
        assert_eq!(bench_id_for("AES-128-GCM"), "crypto.aes-128-gcm");
        assert_eq!(to_results(&gcm, &|_| None).len(), 6);
        let b2 = parse(fixture!("3.0-evp-blake2b512-8k.txt"));
        assert_eq!(bench_id_for(&b2.symmetric[0].algorithm), "hash.blake2b-512");
        let hmac = parse(fixture!("3.0-hmac-sha256-8k.txt"));
        assert_eq!(
            bench_id_for(&hmac.symmetric[0].algorithm),
            "crypto.hmac-sha256"
        );
        let chacha = parse(fixture!("3.0-evp-chacha20-poly1305-8k.txt"));
        assert_eq!(
            bench_id_for(&chacha.symmetric[0].algorithm),
            "crypto.chacha20-poly1305"
        );
        let ciphers = parse(fixture!("3.0-aes-128-cbc-des-ede3-8k.txt"));
        let ids: Vec<String> = ciphers
            .symmetric
            .iter()
            .map(|s| bench_id_for(&s.algorithm))
            .collect();
        assert_eq!(ids, ["crypto.des-ede3-cbc", "crypto.aes-128-cbc"]);
    }

    #[test]
    fn name_mapping() {
        for (name, id) in [
            ("md5", "hash.md5"),
            ("SHA1", "hash.sha1"),
            ("SHA2-256", "hash.sha256"),
            ("sha512", "hash.sha512"),
            ("BLAKE2B-512", "hash.blake2b-512"),
            ("aes-128 cbc", "crypto.aes-128-cbc"),
            ("aes-256-gcm", "crypto.aes-256-gcm"),
            ("des ede3", "crypto.des-ede3-cbc"),
            ("blowfish cbc", "crypto.bf-cbc"),
            ("bf-cbc", "crypto.bf-cbc"),
            ("cast cbc", "crypto.cast5-cbc"),
            ("camellia-128 cbc", "crypto.camellia-128-cbc"),
            ("rc4", "crypto.rc4"),
            ("hmac(md5)", "crypto.hmac-md5"),
            ("rsa15360", "crypto.rsa-15360"),
            ("ecdsap521", "crypto.ecdsa-p521"),
            ("ecdsap224", "crypto.ecdsa-p224"),
            ("ecdsap192", "crypto.ecdsa-p192"),
            ("ecdhp224", "crypto.ecdh-p224"),
            ("ecdhp192", "crypto.ecdh-p192"),
            ("ecdsap160", "openssl.ecdsap160"),
            ("ecdsabrp256r1", "openssl.ecdsabrp256r1"),
            ("ecdhp384", "crypto.ecdh-p384"),
            ("ecdhx25519", "crypto.x25519"),
            ("Ed25519", "crypto.ed25519"),
            ("ghash", "crypto.ghash"),
            ("GHASH", "crypto.ghash"),
            ("aes-128 ige", "crypto.aes-128-ige"),
            ("aes-192 ige", "crypto.aes-192-ige"),
            ("aes-256 ige", "crypto.aes-256-ige"),
            ("hmac(MD5)", "crypto.hmac-md5"),
            ("md4", "hash.md4"),
            ("rmd160", "hash.rmd160"),
            ("RIPEMD160", "hash.rmd160"),
            ("whirlpool", "hash.whirlpool"),
            ("hmac(md4)", "crypto.hmac-md4"),
            ("des cbc", "crypto.des-cbc"),
            ("DES-CBC", "crypto.des-cbc"),
            ("idea cbc", "crypto.idea-cbc"),
            ("idea-cbc", "crypto.idea-cbc"),
            ("rc2 cbc", "crypto.rc2-cbc"),
            ("rc2-cbc", "crypto.rc2-cbc"),
            ("camellia-192 cbc", "crypto.camellia-192-cbc"),
            ("camellia-256 cbc", "crypto.camellia-256-cbc"),
            ("CAMELLIA-256-CBC", "crypto.camellia-256-cbc"),
            ("rsa1024", "crypto.rsa-1024"),
            ("dsa512", "crypto.dsa-512"),
            ("dsa1024", "crypto.dsa-1024"),
            ("dsa2048", "openssl.dsa2048"),
            ("rc5-32/12 cbc", "crypto.rc5-cbc"),
            ("cmac(aes-128-cbc)", "openssl.cmac-aes-128-cbc"),
            ("SHA3-256", "openssl.sha3-256"),
            ("???", "openssl.unknown"),
        ] {
            let got = bench_id_for(name);
            assert_eq!(got, id, "{name}");
            assert!(is_valid_bench_id(&got), "{got}");
        }
    }

    #[test]
    fn multi_uses_summed_records_and_children_sizes() {
        let r = parse(fixture!("3.0-multi2-sha256-rsa2048.txt"));
        assert_eq!(r.processes, 2);
        assert_eq!(r.symmetric.len(), 1);
        assert_eq!(r.symmetric[0].block_sizes, vec![8192]);
        assert_close(r.symmetric[0].bytes_per_second[0], 3_276_578_816.0);
        assert_close(r.sign_verify[0].sign_per_second, 6612.0);
        let res = to_results(&r, &|_| None);
        assert_eq!(res[0].params.get_u64("threads"), Some(2));
        assert_eq!(res[0].details.get_u64("processes"), Some(2));
    }

    #[test]
    fn stderr_progress_and_version_lines() {
        let r = parse(fixture!("3.0-sha1-rsa2048-with-stderr.txt"));
        assert_eq!(r.symmetric.len(), 1);
        assert_eq!(r.sign_verify.len(), 1);
        assert!(r.unsupported.is_empty());
        let v = parse(fixture!("3.0-with-version-line-sha512-16.txt"));
        assert_eq!(v.version.as_deref(), Some("3.0.19"));
        let res = to_results(&v, &|_| None);
        assert_eq!(res[0].details.get_str("openssl_version"), Some("3.0.19"));
        let v2 = parse("version: 3.2.1\n+H:16\n+F:3:md5:100.00\n");
        assert_eq!(v2.version.as_deref(), Some("3.2.1"));
    }

    #[test]
    fn unknown_records_are_listed_not_dropped() {
        let r = parse("+H:16\n+F:3:md5:1600.00\n+F9:0:ML-KEM-768:1.0:2.0:3.0\n");
        assert_eq!(r.symmetric.len(), 1);
        assert_eq!(
            r.unsupported,
            vec![UnsupportedLine {
                line: 3,
                text: "+F9:0:ML-KEM-768:1.0:2.0:3.0".into()
            }]
        );
    }

    #[test]
    fn zero_sizes_are_left_out() {
        let r = parse("+H:16:64\n+F:25:AES-128-OCB:0.00:64000000.00\n");
        let res = to_results(&r, &|_| None);
        assert_eq!(res.len(), 1);
        assert_eq!(res[0].params.get_u64("block_size"), Some(64));
        assert_close(res[0].metrics[0].value(), 64.0);
        assert_eq!(
            r.not_run,
            [NotRun {
                line: 2,
                algorithm: "AES-128-OCB".into(),
                cells: vec!["16 bytes".into()]
            }]
        );
        let r = parse("+F2:2:2048:0.000000:0.000000\n");
        assert!(to_results(&r, &|_| None).is_empty());
        assert_eq!(r.not_run[0].cells, ["sign/s", "verify/s"]);
    }

    /// What 3.0 prints for algorithms it could not run (MD4, Blowfish: the
    /// legacy provider is not loaded): records of 0, exit status 0.
    #[test]
    fn real_zero_records_are_named() {
        let r = parse(fixture!("3.0-mr-md4-bf-not-run-16.txt"));
        let named: Vec<(usize, &str)> = r
            .not_run
            .iter()
            .map(|z| (z.line, z.algorithm.as_str()))
            .collect();
        assert_eq!(named, [(2, "md4"), (4, "blowfish")]);
        let ids: Vec<String> = to_results(&r, &|_| None)
            .into_iter()
            .map(|x| x.bench_id)
            .collect();
        assert_eq!(ids, ["hash.sha256"]);
    }

    /// A real `-mr` output of 1.1.0i (built from its sources here): seconds
    /// per operation in `+F2` and first in `+F5`, converted.
    #[test]
    fn real_1_1_0_mr_output() {
        let r = parse(fixture!("1.1.0i-mr-md5-rsa2048-ecdhp256.txt"));
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        assert_eq!(r.symmetric[0].algorithm, "md5");
        assert_eq!(r.symmetric[0].bytes_per_second[0], 137_903_124.64);
        let rsa = &r.sign_verify[0];
        assert_eq!(rsa.algorithm, "rsa2048");
        assert!((rsa.sign_per_second.unwrap() - 1.0 / 0.000786).abs() < 1e-6);
        assert!((rsa.verify_per_second.unwrap() - 1.0 / 0.000024).abs() < 1e-6);
        assert_eq!(r.key_exchange[0].algorithm, "ecdhp256");
        // Its op/s field, not the rounded 1/0.000064.
        assert_eq!(r.key_exchange[0].ops_per_second, 15731.081081);
    }

    #[test]
    fn old_openssl_seconds_per_operation() {
        // OpenSSL 1.1.0 style: s/op in +F2, and s/op first in +F5.
        let r = parse("+F2:2:2048:0.001000:0.000050\n+F5:3:256:0.000100:10000.0\n");
        assert_close(r.sign_verify[0].sign_per_second, 1000.0);
        assert_close(r.sign_verify[0].verify_per_second, 20000.0);
        assert_close(r.key_exchange[0].ops_per_second, 10000.0);
        // 1.1.0's table had X25519 at index 16.
        assert_eq!(
            parse("+F5:16:253:0.0001:10000.0\n").key_exchange[0].algorithm,
            "ecdhx25519"
        );
    }

    #[test]
    fn curve_tables_agree() {
        assert_eq!(curve_name(3, 256), "p256");
        assert_eq!(curve_name(22, 253), "x25519");
        assert_eq!(curve_name(12, 253), "x25519");
        assert_eq!(curve_name(6, 256), "brp256r1");
        assert_eq!(curve_name(6, 163), "k163");
        assert_eq!(curve_name(99, 999), "curve99-999");
        // Where both tables have the index, equal bit counts mean the same curve.
        for (i, a) in CURVES_EC2M.iter().enumerate() {
            if let Some(b) = CURVES_NO_EC2M.get(i) {
                if a.bits == b.bits {
                    assert_eq!(a.name, b.name, "index {i}");
                }
            }
        }
    }

    fn error_of(text: &str) -> OpensslSpeedError {
        refusal(parse_mr, text)
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = error_of(fixture!("truncated-mid-line.txt"));
        assert_eq!(e.line, 2);
        assert!(e.message.contains("truncated"), "{e}");
        let e = error_of(fixture!("3.0-human-table-not-mr.txt"));
        assert_eq!(e.line, 6);
        assert!(e.message.contains("-mr"), "{e}");
        let e = error_of("");
        assert!(e.message.contains("empty"), "{e}");
        let e = error_of("+H:16\n");
        assert!(e.message.contains("no results"), "{e}");
        let e = error_of("+F:3:md5:100.00\n");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("+H"), "{e}");
        let e = error_of("+H:16\n+F:3:md5:fast\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("'fast' is not a number"), "{e}");
        let e = error_of("+H:16\n+F:3:md5:-5.0\n");
        assert!(e.message.contains("negative"), "{e}");
        let e = error_of("+H:16\n+F:3:md5:NaN\n");
        assert!(e.message.contains("not finite"), "{e}");
        let e = error_of("+F2:2:2048:3213.13\n");
        assert!(e.message.contains("expected 4"), "{e}");
        let e = error_of("+H:sixteen\n");
        assert!(e.message.contains("block size"), "{e}");
        let e = error_of("{\"schema_version\": 1}\n");
        assert!(e.message.contains("not a line of"), "{e}");
        let e = error_of("Forked child 0\nForked child 1\nGot: +H:16 from 0\n");
        assert!(e.message.contains("summed results are missing"), "{e}");
        assert_eq!(e.to_string(), format!("line 3: {}", e.message));
    }

    #[test]
    fn real_openssl_output_parses() {
        // The real program, briefly: the parser must keep up with the
        // openssl installed here, not only with the captured fixtures.
        let found = sysgauge_core::bench::find_program("openssl");
        if !sysgauge_testkit::require("openssl", found.is_some(), "apt-get install openssl") {
            return;
        }
        let Some(openssl) = found else { return };
        let out = std::process::Command::new(openssl)
            .args(["speed", "-mr", "-seconds", "1", "-bytes", "64", "md5"])
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running openssl: {e}"));
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let r = parse(&text);
        assert_eq!(r.symmetric.len(), 1);
        assert_eq!(r.symmetric[0].block_sizes, vec![64]);
        assert!(r.symmetric[0].bytes_per_second[0] > 0.0);
    }
}
